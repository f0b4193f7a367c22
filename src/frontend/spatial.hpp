#pragma once
// Private helpers shared by convolution, pooling and interpolate: batch
// handling of [N, C, *spatial] inputs and sliding-window views.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal::detail {

/// An input of rank nsp + 2 ([N, C, *spatial]) or nsp + 1 (unbatched
/// [C, *spatial], given a leading batch axis of 1). `restore` undoes that.
struct Batched {
  Tensor x;
  bool unbatched = false;
  Tensor restore(const Tensor& out) const { return unbatched ? out.squeeze(0) : out; }
};
/// Throws ShapeError naming `op` when the rank is neither nsp + 1 nor nsp + 2.
Batched batch_input(const Tensor& x, size_t nsp, const std::string& op);

/// Constant value of a simplified expression, if it has one.
std::optional<int64_t> const_of(const Expr& e);

/// Windows of the last nsp axes of x [..., S_1..S_n]: a view
/// [..., O_1..O_n, K_1..K_n] with element (o, k) = x[..., o * stride + k * dilation],
/// O_i = (S_i - dilation_i * (K_i - 1) - 1) / stride_i + 1. The caller pads x so
/// that every window fits.
Tensor sliding_windows(const Tensor& x, size_t nsp, const std::vector<Expr>& kernel,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation);

/// x with axes [start, start + count) merged into one (row-major), as a view:
/// View::merge always succeeds, unlike a general reshape of symbolic sizes.
Tensor merge_axes(const Tensor& x, size_t start, size_t count);

/// The dense copy of x [..., S_1..S_n] (last nsp axes) embedded in a buffer of
/// `value` (Graph::constant: saturating for integer dtypes) of size [..., lo_i + (S_i - 1) * step_i
/// + 1 + hi_i]: element s of axis i lands at lo_i + s * step_i. One Scatter (exact for every
/// value).
Tensor embed_spatial(const Tensor& x, size_t nsp, const std::vector<Expr>& lo,
                     const std::vector<Expr>& hi, const std::vector<int64_t>& step, double value);

}  // namespace luminal::detail
