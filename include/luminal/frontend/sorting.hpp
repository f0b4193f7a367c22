#pragma once
// Sorting and selection with PyTorch semantics for constant- or symbolic-length
// axes, built from comparisons, SumReduce and Scatter (no sort primitive).
//
// sort / argsort (rank sort): for each element i of a row,
//     rank(i) = #{ j : key(j) < key(i) } + #{ j < i : key(j) == key(i) }
// computed with one broadcast [.., n, n] comparison and a SumReduce; rank is a
// permutation, so one Scatter of the values (and one of the iota positions)
// into rank order yields the sorted values and the indices. Equal keys keep
// their original order, so every sort is stable (torch's stable=True order,
// for ascending and descending). NaN sorts as the largest value (after +inf),
// as torch; -0.0 and 0.0 compare equal. Cost: O(n^2) per row.
//
// topk with a small k (constant n, k < n, and k <= 16 or k <= min(256, n / 8))
// instead selects k times: take the max of the remaining elements, the first
// remaining position holding it, mark it removed. Cost O(k * n) per row (MoE
// routing, top-k sampling over a vocabulary). largest=false uses it for
// integer and bool keys (reversed exactly as -1 - x / !x); for floats it falls
// back to the rank sort. Both algorithms give the same order: largest first,
// ties by lower index (NaN counts as largest).
//
// Limitation: sort / argsort / large-k topk over very long axes (a 50k
// vocabulary) build an n^2 comparison and are impractical there.
//
// Returned indices are i64 (torch's dtype). Bool inputs are accepted (false < true).

#include <cstdint>

#include "luminal/core/tensor.hpp"

namespace luminal {

/// torch's (values, indices) named tuple.
struct ValuesIndices {
  Tensor values;
  Tensor indices;  // i64
};

/// torch.sort(x, dim, descending, stable). Always stable (see above), so the
/// `stable` flag only exists for signature compatibility.
ValuesIndices sort(const Tensor& x, int dim = -1, bool descending = false, bool stable = false);
/// torch.argsort(x, dim, descending, stable).
Tensor argsort(const Tensor& x, int dim = -1, bool descending = false, bool stable = false);
/// torch.msort: sort along dim 0, values only.
Tensor msort(const Tensor& x);
/// torch.topk(x, k, dim, largest, sorted): the k largest (smallest) along dim.
/// Results are always sorted (allowed by torch for sorted=false too).
/// Throws ShapeError if k > the dim size (constant dims).
ValuesIndices topk(const Tensor& x, int64_t k, int dim = -1, bool largest = true,
                   bool sorted = true);
/// torch.kthvalue(x, k, dim, keepdim): the k-th smallest (1-based).
ValuesIndices kthvalue(const Tensor& x, int64_t k, int dim = -1, bool keepdim = false);
/// torch.median(x, dim, keepdim): the lower median ((n - 1) / 2-th smallest);
/// a row containing NaN yields NaN and the index of its first NaN (as torch).
ValuesIndices median(const Tensor& x, int dim, bool keepdim = false);
/// torch.median(x): lower median of all elements (rank 0); NaN if any is NaN.
Tensor median(const Tensor& x);
/// torch.nanmedian(x, dim, keepdim): median ignoring NaN (NaN only if a row is all NaN).
ValuesIndices nanmedian(const Tensor& x, int dim, bool keepdim = false);

}  // namespace luminal
