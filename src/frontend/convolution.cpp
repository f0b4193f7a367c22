#include "luminal/frontend/convolution.hpp"

#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/frontend/movement.hpp"
#include "spatial.hpp"

namespace luminal {

using detail::const_of;

std::vector<int64_t> SpatialArg::expand(size_t n, const std::string& op, const char* what,
                                        int64_t min) const {
  if (values.size() != 1 && values.size() != n) {
    std::string list;
    for (size_t i = 0; i < values.size(); ++i) list += (i ? ", " : "") + std::to_string(values[i]);
    throw ShapeError(op + ": " + what + " must be one int or " + std::to_string(n) +
                     " ints, got (" + list + ")");
  }
  std::vector<int64_t> out(n, values[0]);
  if (values.size() == n) out = values;
  for (int64_t v : out)
    if (v < min)
      throw ShapeError(op + ": " + what + " must be >= " + std::to_string(min) + ", got " +
                       std::to_string(v));
  return out;
}

ConvPadding::ConvPadding(const std::string& m) {
  if (m == "same")
    mode = Mode::Same;
  else if (m == "valid")
    mode = Mode::Valid;
  else
    throw ShapeError("conv: invalid padding string '" + m + "', should be 'same' or 'valid'");
}

ConvPadding::ConvPadding(const char* m) : ConvPadding(std::string(m)) {}

namespace {

std::string describe_args(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias) {
  return "input " + input.describe() + ", weight " + weight.describe() +
         (bias ? ", bias " + bias->describe() : std::string());
}

// The checks conv and conv_transpose share; returns the batched input.
detail::Batched checked_input(const std::string& op, size_t nsp, const Tensor& input,
                              const Tensor& weight, const std::optional<Tensor>& bias,
                              int64_t groups) {
  if (!is_float(input.dtype()))
    throw DTypeError(op + ": expects a floating-point input, got " +
                     describe_args(input, weight, bias));
  if (weight.dtype() != input.dtype() || (bias && bias->dtype() != input.dtype()))
    throw DTypeError(op + ": input, weight and bias must have the same dtype, got " +
                     describe_args(input, weight, bias));
  detail::Batched in = detail::batch_input(input, nsp, op);
  if (weight.rank() != nsp + 2)
    throw ShapeError(op + ": expected a " + std::to_string(nsp + 2) + "-D weight, got " +
                     describe_args(input, weight, bias));
  if (groups < 1) throw ShapeError(op + ": groups must be positive, got " + std::to_string(groups));
  return in;
}

// Convolution of an already padded, batched input x [N, C_in, *S] with a kernel
// given in grouped form wg [G, C_out / G, C_in / G, *K] (a view is fine).
Tensor conv_core(const std::string& op, const Tensor& x, const Tensor& wg,
                 const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  const size_t nsp = x.rank() - 2;
  const Expr n = x.shape()[0];
  const Expr groups = wg.shape()[0];
  const Expr cig = wg.shape()[2];
  std::vector<Expr> kernel(wg.shape().begin() + 3, wg.shape().end());
  for (size_t i = 0; i < nsp; ++i) {
    const Expr span = Expr(dilation[i]) * (kernel[i] - 1) + 1;
    auto sc = const_of(x.shape()[2 + i]);
    auto kc = const_of(span);
    if (sc && kc && *sc < *kc)
      throw ShapeError(op + ": padded input size " + std::to_string(*sc) + " of spatial dim " +
                       std::to_string(i) + " is smaller than the dilated kernel size " +
                       std::to_string(*kc) + " (input " + x.describe() + ", kernel " +
                       to_string(kernel) + ")");
  }
  // Windows [N, C_in, O..., K...] -> [N, G, C_in/G, O..., K...] -> A [N, G, O..., K]
  // with K = C_in/G * prod(kernel) merged (views only; merging always succeeds).
  Tensor win = detail::sliding_windows(x, nsp, kernel, stride, dilation);
  std::vector<Expr> split_shape = {n, groups, cig};
  for (size_t i = 2; i < win.rank(); ++i) split_shape.push_back(win.shape()[i]);
  win = win.reshape(split_shape);
  std::vector<int> order = {0, 1};
  for (size_t i = 0; i < nsp; ++i) order.push_back(static_cast<int>(3 + i));
  order.push_back(2);
  for (size_t i = 0; i < nsp; ++i) order.push_back(static_cast<int>(3 + nsp + i));
  Tensor a = detail::merge_axes(win.permute(order), 2 + nsp, nsp + 1);
  // B [G, 1 (x nsp - 1), K, C_out/G]: the kernel with its reduced axes merged,
  // transposed; the output positions other than the last are batch dims of the
  // matmul (B broadcasts over them), so no symbolic-size merge is needed.
  Tensor b = detail::merge_axes(wg, 2, nsp + 1).transpose(1, 2);
  for (size_t i = 1; i < nsp; ++i) b = b.unsqueeze(1);
  Tensor out = matmul(a, b);  // [N, G, O..., C_out/G]
  // -> [N, G, C_out/G, O...] -> [N, C_out, O...].
  std::vector<int> back = {0, 1, static_cast<int>(2 + nsp)};
  for (size_t i = 0; i < nsp; ++i) back.push_back(static_cast<int>(2 + i));
  return detail::merge_axes(out.permute(back), 1, 2);
}

Tensor add_bias(const Tensor& out, const std::optional<Tensor>& bias, const std::string& op) {
  if (!bias) return out;
  if (bias->rank() != 1 || !provably_equal(bias->shape()[0], out.shape()[1]))
    throw ShapeError(op + ": bias " + bias->describe() + " must be 1-D with " +
                     out.shape()[1].to_string() + " elements (the output channels)");
  std::vector<Expr> shape(out.rank() - 1, Expr(1));
  shape[0] = out.shape()[1];
  return out + bias->reshape(shape);
}

Tensor conv_nd(const std::string& op, size_t nsp, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, const SpatialArg& stride_arg,
               const ConvPadding& padding, const SpatialArg& dilation_arg, int64_t groups) {
  detail::Batched in = checked_input(op, nsp, input, weight, bias, groups);
  const Tensor& x = in.x;
  const Expr cout = weight.shape()[0];
  const Expr cig = weight.shape()[1];
  auto cout_c = const_of(cout);
  if (!provably_equal(x.shape()[1], cig * Expr(groups)) || (cout_c && *cout_c % groups != 0))
    throw ShapeError(op + ": given groups=" + std::to_string(groups) + ", " +
                     describe_args(input, weight, bias) + " do not fit (expected input channels " +
                     "= weight.size(1) * groups and weight.size(0) divisible by groups)");
  auto stride = stride_arg.expand(nsp, op, "stride", 1);
  auto dilation = dilation_arg.expand(nsp, op, "dilation", 1);
  std::vector<Expr> pads;  // F.pad order: last axis first
  bool any_pad = false;
  for (size_t j = 0; j < nsp; ++j) {
    const size_t i = nsp - 1 - j;
    Expr lo = 0, hi = 0;
    if (padding.mode == ConvPadding::Mode::Explicit) {
      lo = hi = padding.amounts.expand(nsp, op, "padding", 0)[i];
    } else if (padding.mode == ConvPadding::Mode::Same) {
      if (stride[i] != 1)
        throw ShapeError(op + ": padding='same' is not supported for strided convolutions");
      const Expr total = (Expr(dilation[i]) * (weight.shape()[2 + i] - 1)).simplify();
      lo = (total / 2).simplify();
      hi = (total - lo).simplify();
    }
    any_pad = any_pad || const_of(lo) != 0 || const_of(hi) != 0;
    pads.push_back(lo);
    pads.push_back(hi);
  }
  Tensor xp = any_pad ? pad(x, pads) : x;
  // [C_out, C_in/G, K...] -> [G, C_out/G, C_in/G, K...] (a view).
  std::vector<Expr> wshape = {Expr(groups), (cout / Expr(groups)).simplify()};
  wshape.insert(wshape.end(), weight.shape().begin() + 1, weight.shape().end());
  Tensor out = conv_core(op, xp, weight.reshape(wshape), stride, dilation);
  return in.restore(add_bias(out, bias, op));
}

Tensor conv_transpose_nd(const std::string& op, size_t nsp, const Tensor& input,
                         const Tensor& weight, const std::optional<Tensor>& bias,
                         const SpatialArg& stride_arg, const SpatialArg& padding_arg,
                         const SpatialArg& output_padding_arg, int64_t groups,
                         const SpatialArg& dilation_arg) {
  detail::Batched in = checked_input(op, nsp, input, weight, bias, groups);
  const Tensor& x = in.x;
  const Expr cin = weight.shape()[0];
  auto cin_c = const_of(cin);
  if (!provably_equal(x.shape()[1], cin) || (cin_c && *cin_c % groups != 0))
    throw ShapeError(op + ": given groups=" + std::to_string(groups) + ", " +
                     describe_args(input, weight, bias) + " do not fit (expected input channels " +
                     "= weight.size(0), divisible by groups)");
  auto stride = stride_arg.expand(nsp, op, "stride", 1);
  auto padding = padding_arg.expand(nsp, op, "padding", 0);
  auto output_padding = output_padding_arg.expand(nsp, op, "output_padding", 0);
  auto dilation = dilation_arg.expand(nsp, op, "dilation", 1);
  std::vector<Expr> lo(nsp), hi(nsp);
  for (size_t i = 0; i < nsp; ++i) {
    if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
      throw ShapeError(op + ": output padding must be smaller than either stride or dilation, " +
                       "got output_padding=" + std::to_string(output_padding[i]) + ", stride=" +
                       std::to_string(stride[i]) + ", dilation=" + std::to_string(dilation[i]));
    lo[i] = (Expr(dilation[i]) * (weight.shape()[2 + i] - 1)).simplify();
    hi[i] = (lo[i] + Expr(output_padding[i])).simplify();
  }
  // Zero insertion: x[s] lands at d * (k - 1) + s * stride of a zero buffer.
  Tensor xz = detail::embed_spatial(x, nsp, lo, hi, stride, 0.0);
  // Kernel [C_in, C_out/G, K...] -> grouped [G, C_out/G, C_in/G, K...], flipped.
  std::vector<Expr> split = {Expr(groups), (cin / Expr(groups)).simplify()};
  split.insert(split.end(), weight.shape().begin() + 1, weight.shape().end());
  Tensor wg = weight.reshape(split).transpose(1, 2);
  for (size_t i = 0; i < nsp; ++i) wg = wg.flip(static_cast<int>(3 + i));
  Tensor full = conv_core(op, xz, wg, std::vector<int64_t>(nsp, 1), dilation);
  // Crop `padding` from both sides of the full output.
  for (size_t i = 0; i < nsp; ++i) {
    if (padding[i] == 0) continue;
    const Expr f = full.shape()[2 + i];
    auto fc = const_of(f);
    if (fc && *fc <= 2 * padding[i])
      throw ShapeError(op + ": padding " + std::to_string(padding[i]) + " leaves no output for " +
                       describe_args(input, weight, bias));
    full = full.slice(static_cast<int>(2 + i), padding[i], (f - Expr(padding[i])).simplify());
  }
  return in.restore(add_bias(full, bias, op));
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              SpatialArg stride, ConvPadding padding, SpatialArg dilation, int64_t groups) {
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              SpatialArg stride, ConvPadding padding, SpatialArg dilation, int64_t groups) {
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              SpatialArg stride, ConvPadding padding, SpatialArg dilation, int64_t groups) {
  return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, SpatialArg stride, SpatialArg padding,
                        SpatialArg output_padding, int64_t groups, SpatialArg dilation) {
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, SpatialArg stride, SpatialArg padding,
                        SpatialArg output_padding, int64_t groups, SpatialArg dilation) {
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation);
}

Tensor im2col(const Tensor& input, SpatialArg kernel_size, SpatialArg dilation, SpatialArg padding,
              SpatialArg stride) {
  const std::string op = "unfold";
  detail::Batched in = detail::batch_input(input, 2, op);
  auto k = kernel_size.expand(2, op, "kernel_size", 1);
  auto d = dilation.expand(2, op, "dilation", 1);
  auto p = padding.expand(2, op, "padding", 0);
  auto s = stride.expand(2, op, "stride", 1);
  Tensor x = in.x;
  if (p[0] != 0 || p[1] != 0) x = pad(x, {p[1], p[1], p[0], p[0]});
  for (size_t i = 0; i < 2; ++i) {
    auto sc = const_of(x.shape()[2 + i]);
    if (sc && *sc < d[i] * (k[i] - 1) + 1)
      throw ShapeError(op + ": the dilated kernel " + std::to_string(d[i] * (k[i] - 1) + 1) +
                       " does not fit the padded input of " + input.describe());
  }
  // [N, C, OH, OW, KH, KW] -> [N, C, KH, KW, OH, OW] -> [N, C * KH * KW, OH * OW].
  Tensor w = detail::sliding_windows(x, 2, {k[0], k[1]}, s, d).permute({0, 1, 4, 5, 2, 3});
  return in.restore(detail::merge_axes(detail::merge_axes(w, 4, 2), 1, 3));
}

}  // namespace luminal
