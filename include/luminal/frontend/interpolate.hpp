#pragma once
// F.interpolate with PyTorch's index formulas, reproduced bit for bit where
// torch computes them in float:
//
//   nearest        src = min(floor(dst * scale), in - 1) with scale a float32
//                  (in / out, or 1 / scale_factor when a scale factor is given),
//                  and torch's special cases out == in (copy), out == 2 * in (dst / 2)
//   nearest-exact  src = min(floor((dst + 0.5) * scale), in - 1)
//   linear / bilinear / trilinear
//                  src = align_corners ? dst * (in - 1) / (out - 1)
//                                      : max((dst + 0.5) * scale - 0.5, 0)
//                  i0 = floor(src), i1 = i0 + (i0 < in - 1), w1 = src - i0, w0 = 1 - w1
//   area           adaptive_avg_pool to the output size
//
// The source coordinates are computed in-graph in float32 from an Iota of the
// destination index (so symbolic sizes work and the float rounding is torch's),
// then each spatial axis is resampled with one Gather (nearest) or two Gathers
// and a weighted sum (linear). Axes are processed one after another, which is
// exactly torch's separable formula for nearest and equal up to rounding for
// the linear modes. f16 / bf16 inputs are resampled in float32 (torch's opmath)
// and rounded back.
//
// Output size: `size` (ints or symbolic dims), or floor(in * scale_factor)
// (for a symbolic input size the scale factor must be a dyadic rational such as
// 2, 0.5 or 1.5 so the size is exact integer math). recompute_scale_factor =
// true uses in / out instead of 1 / scale_factor for the coordinates, as torch.

#include <optional>
#include <string>
#include <vector>

#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

/// F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor).
/// input is [N, C, *spatial] with 1 to 3 spatial axes; exactly one of size and
/// scale_factor is given (one value or one per spatial axis). mode: "nearest",
/// "nearest-exact", "linear" (1 axis), "bilinear" (2), "trilinear" (3), "area".
/// align_corners is only allowed with the linear modes (default false).
/// Throws ShapeError / DTypeError (nearest accepts integer dtypes, the others need floats).
Tensor interpolate(const Tensor& input, const std::optional<std::vector<Expr>>& size = std::nullopt,
                   const std::optional<std::vector<double>>& scale_factor = std::nullopt,
                   const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt);

/// nn.Upsample / F.upsample_nearest and F.upsample_bilinear (align_corners = true, as torch).
Tensor upsample_nearest(const Tensor& input, const std::optional<std::vector<Expr>>& size,
                        const std::optional<std::vector<double>>& scale_factor = std::nullopt);
Tensor upsample_bilinear(const Tensor& input, const std::optional<std::vector<Expr>>& size,
                         const std::optional<std::vector<double>>& scale_factor = std::nullopt);

}  // namespace luminal
