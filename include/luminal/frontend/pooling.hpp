#pragma once
// Pooling with PyTorch semantics (F.max_pool1d/2d, F.avg_pool1d/2d,
// F.adaptive_avg_pool1d/2d, F.adaptive_max_pool1d/2d, F.lp_pool1d/2d).
//
// Fixed windows are views: the input is padded with F.pad (-inf for max, 0 for
// avg; the far side also gets whatever ceil_mode's last window needs), then
// Tensor.unfold per spatial axis (+ a stepped slice for dilation) exposes the
// windows as trailing axes that one MaxReduce / SumReduce per axis removes.
// Output sizes follow torch's pooling_output_shape, including ceil_mode's rule
// that the last window must start inside the input or the left padding.
//
// avg_pool divisors depend on the position (padding, ceil_mode,
// count_include_pad, divisor_override), so they are one Iota over the output
// positions whose expression is torch's formula
//     hstart = oh * s - p, hend = min(hstart + k, H + p), size = hend - hstart,
//     (count_include_pad = false: clip hstart/hend to [0, H] first)
// - exact integer math, symbolic sizes allowed.
//
// Adaptive pools use torch's bins start = floor(i * In / Out), end =
// ceil((i + 1) * In / Out): one Gather per spatial axis reads
// max_bin = ceil(In / Out) + 1 candidates per bin from the input extended by one
// neutral element (0 / -inf), candidates past a bin's end read that element.
// Multi-axis pools are applied axis by axis (exact for max; for avg the mean of
// row means equals torch's rectangle mean up to rounding).
//
// Inputs: [N, C, *spatial] or unbatched [C, *spatial]. max pools accept float
// and integer dtypes (integer padding uses the dtype's minimum); avg pools need
// floats. NaN propagates through max pools, as in torch.

#include <cstdint>
#include <optional>

#include "luminal/core/tensor.hpp"
#include "luminal/frontend/convolution.hpp"

namespace luminal {

/// F.max_pool1d. stride = nullopt means stride = kernel_size (torch's default).
/// padding <= kernel_size / 2 (as torch).
Tensor max_pool1d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  SpatialArg dilation = 1, bool ceil_mode = false);
/// F.max_pool2d.
Tensor max_pool2d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  SpatialArg dilation = 1, bool ceil_mode = false);
/// F.max_pool3d.
Tensor max_pool3d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  SpatialArg dilation = 1, bool ceil_mode = false);

/// F.avg_pool1d.
Tensor avg_pool1d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
/// F.avg_pool2d. divisor_override (> 0) replaces every divisor.
Tensor avg_pool2d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// F.avg_pool3d.
Tensor avg_pool3d(const Tensor& input, SpatialArg kernel_size,
                  std::optional<SpatialArg> stride = std::nullopt, SpatialArg padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

/// F.lp_pool1d / lp_pool2d: (sum over the window of x^p)^(1/p) (no padding);
/// p = 1 is the window sum, as torch computes it.
Tensor lp_pool1d(const Tensor& input, double norm_type, SpatialArg kernel_size,
                 std::optional<SpatialArg> stride = std::nullopt, bool ceil_mode = false);
Tensor lp_pool2d(const Tensor& input, double norm_type, SpatialArg kernel_size,
                 std::optional<SpatialArg> stride = std::nullopt, bool ceil_mode = false);

/// F.adaptive_avg_pool1d / 2d / 3d: output sizes are Exprs (symbolic allowed);
/// one value means the same size on every spatial axis. (torch's None entries,
/// "keep the input size", are resolved by the caller: pass the input's dim.)
Tensor adaptive_avg_pool1d(const Tensor& input, const Expr& output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, const std::vector<Expr>& output_size);
Tensor adaptive_avg_pool3d(const Tensor& input, const std::vector<Expr>& output_size);
/// F.adaptive_max_pool1d / 2d (values only; return_indices is not supported).
Tensor adaptive_max_pool1d(const Tensor& input, const Expr& output_size);
Tensor adaptive_max_pool2d(const Tensor& input, const std::vector<Expr>& output_size);

}  // namespace luminal
