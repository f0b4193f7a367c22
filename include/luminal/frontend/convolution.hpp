#pragma once
// Convolutions with PyTorch semantics (F.conv1d / conv2d / conv3d,
// F.conv_transpose1d / conv_transpose2d, F.unfold), built from views, Scatter
// and the canonical matmul form of linalg.hpp (no new primitive):
//
//   1. zero padding: F.pad (one Scatter into a broadcast zero buffer);
//   2. sliding windows: Tensor.unfold on each spatial axis plus a stepped slice
//      for the dilation - pure views over the padded buffer (implicit im2col,
//      nothing is copied);
//   3. the contraction over (C_in / groups) x kernel is one matmul
//      [N, G, out_positions, K] x [G, K, C_out / groups], so the compiler's GEMM
//      recognition sees it; the result is permuted (a view) to [N, C_out, ...].
//
// conv_transpose is the adjoint: the input is scattered into a zero buffer with
// `stride - 1` zeros between elements and `dilation * (k - 1)` zeros around,
// convolved with the flipped, channel-swapped kernel, then cropped by `padding`
// (output_padding extends the far side). Bias is supported everywhere.
//
// Shapes: input [N, C_in, *spatial] or unbatched [C_in, *spatial]; weight
// [C_out, C_in / groups, *kernel] (transposed: [C_in, C_out / groups, *kernel]);
// bias [C_out]. Spatial sizes may be symbolic; input, weight and bias must share
// one float dtype (as torch). Errors name the op, the shapes and the dtypes.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "luminal/core/tensor.hpp"

namespace luminal {

/// torch's `int | tuple[int, ...]` arguments (stride, dilation, kernel_size...):
/// one value for every spatial axis, or one value per axis.
struct SpatialArg {
  SpatialArg(int v) : values{v} {}      // NOLINT(google-explicit-constructor)
  SpatialArg(int64_t v) : values{v} {}  // NOLINT(google-explicit-constructor)
  SpatialArg(std::initializer_list<int64_t> v) : values(v) {}
  SpatialArg(std::vector<int64_t> v) : values(std::move(v)) {}  // NOLINT
  /// The per-axis values for `n` spatial axes; throws ShapeError naming `op`
  /// and `what` if the count is neither 1 nor n, or a value is below `min`.
  std::vector<int64_t> expand(size_t n, const std::string& op, const char* what, int64_t min) const;
  std::vector<int64_t> values;
};

/// The `padding` argument of F.conv*d: explicit amounts (symmetric, per axis)
/// or torch's "same" / "valid" strings. "same" pads `dilation * (k - 1)` in
/// total per axis, the extra element (when odd) on the far side, as torch; it
/// requires stride 1.
struct ConvPadding {
  enum class Mode { Explicit, Same, Valid };
  ConvPadding(int v) : amounts{v} {}      // NOLINT(google-explicit-constructor)
  ConvPadding(int64_t v) : amounts{v} {}  // NOLINT(google-explicit-constructor)
  ConvPadding(std::initializer_list<int64_t> v) : amounts(v) {}
  ConvPadding(std::vector<int64_t> v) : amounts(std::move(v)) {}  // NOLINT
  /// "same" or "valid"; anything else throws ShapeError.
  ConvPadding(const char* mode);         // NOLINT(google-explicit-constructor)
  ConvPadding(const std::string& mode);  // NOLINT(google-explicit-constructor)
  Mode mode = Mode::Explicit;
  SpatialArg amounts = 0;
};

/// F.conv1d: input [N, C_in, L] (or [C_in, L]), weight [C_out, C_in / groups, k].
Tensor conv1d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, SpatialArg stride = 1,
              ConvPadding padding = 0, SpatialArg dilation = 1, int64_t groups = 1);
/// F.conv2d: input [N, C_in, H, W] (or [C_in, H, W]), weight [C_out, C_in / groups, kh, kw].
Tensor conv2d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, SpatialArg stride = 1,
              ConvPadding padding = 0, SpatialArg dilation = 1, int64_t groups = 1);
/// F.conv3d: input [N, C_in, D, H, W] (or unbatched), weight [C_out, C_in / groups, kd, kh, kw].
Tensor conv3d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, SpatialArg stride = 1,
              ConvPadding padding = 0, SpatialArg dilation = 1, int64_t groups = 1);

/// F.conv_transpose1d (torch argument order: ..., output_padding, groups, dilation).
/// weight [C_in, C_out / groups, k]; out = (L - 1) * stride - 2 * padding +
/// dilation * (k - 1) + output_padding + 1. output_padding must be smaller than
/// stride or dilation (as torch).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, SpatialArg stride = 1,
                        SpatialArg padding = 0, SpatialArg output_padding = 0, int64_t groups = 1,
                        SpatialArg dilation = 1);
/// F.conv_transpose2d: weight [C_in, C_out / groups, kh, kw].
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, SpatialArg stride = 1,
                        SpatialArg padding = 0, SpatialArg output_padding = 0, int64_t groups = 1,
                        SpatialArg dilation = 1);

/// F.unfold (im2col) on a 4-D [N, C, H, W] (or 3-D [C, H, W]) input: the
/// sliding blocks as [N, C * kh * kw, L] with L = out_h * out_w, channel-major
/// then kernel row then kernel column, as torch. Named im2col in C++ because
/// Tensor.unfold (movement.hpp) is a different op.
Tensor im2col(const Tensor& input, SpatialArg kernel_size, SpatialArg dilation = 1,
              SpatialArg padding = 0, SpatialArg stride = 1);

}  // namespace luminal
