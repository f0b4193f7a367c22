#pragma once
// Reductions with PyTorch semantics. `dims` lists the axes to reduce
// (negative axes count from the end; duplicates throw ShapeError); an empty
// list reduces every axis (torch's dim=None). keepdim keeps reduced axes as
// size 1. Each reduced axis becomes one SumReduce / MaxReduce.
//
// Dtypes as torch: sum / prod / cumsum / cumprod of bool or integer tensors
// give i64 unless `dtype` says otherwise; mean / var / std / logsumexp / norm
// need floats (DTypeError for integers, except where `dtype` converts first);
// argmax / argmin / count_nonzero give i64; any / all give bool (u8 for u8, as
// torch). f16 / bf16 inputs accumulate in f32 and round once.
//
// Numerics: min over integers is -1 - max(-1 - x) (no INT_MIN overflow); prod
// multiplies slices in a balanced tree (exact for integers, never via logs);
// var is two-pass (mean, then squared deviations); logsumexp subtracts the max
// (an all -inf slice gives -inf); argmax / argmin return the first occurrence
// and treat nan as the extreme value (as torch).
//
// Axes of symbolic length: sum / mean / max / min / var / any / all / argmax /
// cumsum work; prod and cumprod need a constant length (ShapeError otherwise).

#include <optional>
#include <utility>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/tensor.hpp"

namespace luminal {

Tensor sum(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& x, int dim, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
/// torch.nansum: sum treating nan as 0.
Tensor nansum(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, int dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
/// torch.nanmean: mean over the non-nan elements.
Tensor nanmean(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

/// torch.amax / amin: nan propagates; any dtype.
Tensor amax(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
/// torch.aminmax: (amin, amax).
std::pair<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int> dim = std::nullopt,
                                  bool keepdim = false);
/// torch.max(x) / torch.min(x): the max / min of all elements (rank 0).
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
/// torch.max(x, dim, keepdim) / torch.min: (values, indices); indices are i64
/// first occurrences (argmax / argmin).
std::pair<Tensor, Tensor> max(const Tensor& x, int dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int dim, bool keepdim = false);
/// torch.argmax / argmin: nullopt flattens (rank-0 result unless keepdim, in
/// which case every axis is kept as size 1, as torch).
Tensor argmax(const Tensor& x, std::optional<int> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int> dim = std::nullopt, bool keepdim = false);

/// Variance with `correction` (1 = unbiased, torch's default); divides by
/// max(0, N - correction) as torch (0 -> inf / nan).
Tensor var(const Tensor& x, const std::vector<int>& dims = {}, double correction = 1.0,
           bool keepdim = false);
Tensor std(const Tensor& x, const std::vector<int>& dims = {}, double correction = 1.0,
           bool keepdim = false);
/// torch.var_mean / std_mean: (var, mean) and (std, mean).
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int>& dims = {},
                                   double correction = 1.0, bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& x, const std::vector<int>& dims = {},
                                   double correction = 1.0, bool keepdim = false);

/// log(sum(exp(x))) over dims, stable (max subtracted; +-inf maxima handled).
Tensor logsumexp(const Tensor& x, const std::vector<int>& dims, bool keepdim = false);

/// torch.any / all (nonzero and nan count as true).
Tensor any(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
/// torch.count_nonzero: i64 counts (nan counts as nonzero).
Tensor count_nonzero(const Tensor& x, const std::vector<int>& dims = {});

/// torch.linalg.vector_norm: ord 2 (default), 1, inf (max |x|), -inf (min |x|),
/// 0 (count of nonzeros) or any other p: (sum |x|^p)^(1/p). Floats only.
Tensor vector_norm(const Tensor& x, double ord = 2.0, const std::vector<int>& dims = {},
                   bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// torch.norm(x, p, dim, keepdim) for numeric p: vector_norm over dims
/// (all elements when dims is empty; p = 2 over two axes is the Frobenius norm).
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int>& dims = {},
            bool keepdim = false);
/// Frobenius norm over two axes (default: the last two), torch.linalg.matrix_norm('fro').
Tensor frobenius_norm(const Tensor& x, const std::vector<int>& dims = {-2, -1},
                      bool keepdim = false);

/// torch.cumsum / cumprod along `dim`: a log-step (Hillis-Steele) scan for
/// constant-length axes; cumsum over a symbolic axis uses a triangular mask
/// and a sum. Integers and bool accumulate in i64 unless `dtype` is given.
Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);

/// Normalised, sorted, duplicate-free axes of `dims` for a tensor of rank
/// `rank` (empty -> every axis). Throws ShapeError naming `op` and the axes.
std::vector<int> normalize_dims(const std::vector<int>& dims, size_t rank, const char* op);

}  // namespace luminal
