#include "luminal/frontend/normalization.hpp"

#include <limits>
#include <numbers>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/frontend/reduction.hpp"

namespace luminal {

namespace {

int axis_of(const Tensor& x, int dim, const char* op) {
  std::vector<int> axes = normalize_dims({dim}, x.rank(), op);
  return axes.empty() ? 0 : axes[0];  // a rank-0 input softmaxes over itself
}

struct SoftmaxParts {
  Tensor shifted;  // x - max (computation dtype)
  Tensor sum;      // sum(exp(shifted)), kept dim
};

// e^s for the shifted scores s <= 0. In f32, 2^(s log2 e): rounding s log2 e
// (and log2 e) makes e^s off by a relative |s| 9e-8, i.e. an absolute error
// below e^s |s| 9e-8 <= 3.3e-8 (at s = -1) -- inside torch's tolerance, with
// one Exp2 per score where exp() needs two and two Casts for full relative accuracy.
// -inf (masked) scores give exactly 0.
Tensor exp_shifted(const Tensor& s) {
  if (s.dtype() == DType::F32) return (s * std::numbers::log2e).exp2();
  return exp(s);
}

// x - max and the sum of exponentials along `axis`, in f32 for f16 / bf16 /
// f32 (as torch, whose CPU kernels accumulate in f32 too) and in f64 for f64.
SoftmaxParts softmax_parts(const Tensor& x, int axis) {
  Tensor t = to(x, compute_dtype(x.dtype()));
  if (t.rank() == 0) t = t.reshape({1});
  Tensor m = t.max_reduce(axis).unsqueeze(axis);
  Tensor shifted = t - m;
  return {shifted, exp_shifted(shifted).sum_reduce(axis).unsqueeze(axis)};
}

Tensor softmax_input(const Tensor& x, std::optional<DType> dtype, const char* op) {
  Tensor xd = dtype ? to(x, *dtype) : x;
  require_float_dtype(xd, op);
  return xd;
}

Tensor restore_rank(const Tensor& r, const Tensor& x) {
  return x.rank() == 0 ? r.reshape({}) : r;
}

// The last k axes of x, checked against normalized_shape.
std::vector<int> trailing_axes(const Tensor& x, const std::vector<Expr>& normalized_shape,
                               const char* op) {
  size_t k = normalized_shape.size();
  bool ok = k >= 1 && k <= x.rank();
  for (size_t i = 0; ok && i < k; ++i)
    ok = provably_equal(x.shape()[x.rank() - k + i], normalized_shape[i]);
  if (!ok)
    throw ShapeError(std::string(op) + ": normalized_shape " + to_string(normalized_shape) +
                     " must match the trailing dims of the input " + x.describe());
  std::vector<int> axes;
  for (size_t i = x.rank() - k; i < x.rank(); ++i) axes.push_back(static_cast<int>(i));
  return axes;
}

void check_param(const std::optional<Tensor>& p, const std::vector<Expr>& shape, const char* op,
                 const char* what) {
  if (!p) return;
  bool ok = p->rank() == shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = provably_equal(p->shape()[i], shape[i]);
  if (!ok)
    throw ShapeError(std::string(op) + ": " + what + " " + p->describe() + " must have shape " +
                     to_string(shape));
}

// A [C] parameter viewed as [C, 1, ..., 1] to broadcast over axis 1 of a rank-`rank` tensor.
Tensor channel_view(const Tensor& p, size_t rank) {
  std::vector<Expr> shape(rank - 1, Expr(1));
  shape[0] = p.shape()[0];
  return p.reshape(shape);
}

// (x - mean) * rsqrt(var + eps) over `axes` (biased variance), in x's dtype.
Tensor standardize(const Tensor& x, const std::vector<int>& axes, double eps) {
  auto [v, m] = var_mean(x, axes, 0.0, true);
  return (x - m) * (v + eps).sqrt().recip();
}

// y * weight + bias (optional) in the computation dtype.
Tensor affine(Tensor y, const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  if (w) y = y * to(*w, y.dtype());
  if (b) y = y + to(*b, y.dtype());
  return y;
}

DType result_dtype(const Tensor& x, const std::optional<Tensor>& w,
                   const std::optional<Tensor>& b) {
  std::vector<TensorOrScalar> ops{x};
  if (w) ops.push_back(*w);
  if (b) ops.push_back(*b);
  return result_type(ops);
}

void require_channels(const Tensor& x, const char* op) {
  if (x.rank() < 2)
    throw ShapeError(std::string(op) + ": expects an input of shape [N, C, *], got " +
                     x.describe());
}

}  // namespace

Tensor softmax(const Tensor& x, int dim, std::optional<DType> dtype) {
  Tensor xd = softmax_input(x, dtype, "softmax");
  int axis = axis_of(xd, dim, "softmax");
  SoftmaxParts p = softmax_parts(xd, axis);
  return restore_rank(to(exp_shifted(p.shifted) / p.sum, xd.dtype()), xd);
}

Tensor log_softmax(const Tensor& x, int dim, std::optional<DType> dtype) {
  Tensor xd = softmax_input(x, dtype, "log_softmax");
  int axis = axis_of(xd, dim, "log_softmax");
  SoftmaxParts p = softmax_parts(xd, axis);
  return restore_rank(to(p.shifted - log(p.sum), xd.dtype()), xd);
}

Tensor softmin(const Tensor& x, int dim, std::optional<DType> dtype) {
  Tensor xd = softmax_input(x, dtype, "softmin");
  return softmax(-xd, dim);
}

Tensor layer_norm(const Tensor& x, const std::vector<Expr>& normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  require_float_dtype(x, "layer_norm");
  std::vector<int> axes = trailing_axes(x, normalized_shape, "layer_norm");
  check_param(weight, normalized_shape, "layer_norm", "weight");
  check_param(bias, normalized_shape, "layer_norm", "bias");
  DType out = result_dtype(x, weight, bias);
  Tensor xc = to(x, compute_dtype(out));
  return to(affine(standardize(xc, axes, eps), weight, bias), out);
}

Tensor rms_norm(const Tensor& x, const std::vector<Expr>& normalized_shape,
                const std::optional<Tensor>& weight, std::optional<double> eps) {
  require_float_dtype(x, "rms_norm");
  std::vector<int> axes = trailing_axes(x, normalized_shape, "rms_norm");
  check_param(weight, normalized_shape, "rms_norm", "weight");
  DType cd = compute_dtype(x.dtype());
  // torch: the epsilon of the computation (opmath) dtype.
  double e = eps.value_or(cd == DType::F64 ? std::numeric_limits<double>::epsilon()
                                           : double{std::numeric_limits<float>::epsilon()});
  Tensor xc = to(x, cd);
  Tensor ms = mean(xc * xc, axes, true);
  Tensor y = to(xc * (ms + e).sqrt().recip(), x.dtype());
  // As torch: normalise, cast back to the input dtype, then multiply by the weight.
  return weight ? mul(y, *weight) : y;
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  require_float_dtype(x, "group_norm");
  require_channels(x, "group_norm");
  Expr c = x.shape()[1];
  auto cc = c.as_const();
  if (num_groups <= 0 || !cc || *cc % num_groups != 0)
    throw ShapeError("group_norm: the number of channels of " + x.describe() +
                     " must be a constant divisible by num_groups = " + std::to_string(num_groups));
  check_param(weight, {c}, "group_norm", "weight");
  check_param(bias, {c}, "group_norm", "bias");
  DType out = result_dtype(x, weight, bias);
  Tensor xc = to(x, compute_dtype(out));
  std::vector<Expr> rest(x.shape().begin() + 2, x.shape().end());
  Expr per_group = Expr(*cc / num_groups) * product(rest);
  Tensor grouped = xc.reshape({x.shape()[0], Expr(num_groups), per_group});
  Tensor y = standardize(grouped, {2}, eps).reshape(x.shape());
  std::optional<Tensor> w, b;
  if (weight) w = channel_view(*weight, x.rank());
  if (bias) b = channel_view(*bias, x.rank());
  return to(affine(y, w, b), out);
}

Tensor batch_norm(const Tensor& x, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, bool training, double /*momentum*/,
                  double eps) {
  require_float_dtype(x, "batch_norm");
  require_channels(x, "batch_norm");
  Expr c = x.shape()[1];
  check_param(running_mean, {c}, "batch_norm", "running_mean");
  check_param(running_var, {c}, "batch_norm", "running_var");
  check_param(weight, {c}, "batch_norm", "weight");
  check_param(bias, {c}, "batch_norm", "bias");
  DType out = result_dtype(x, weight, bias);
  DType cd = compute_dtype(out);
  Tensor xc = to(x, cd);
  std::optional<Tensor> w, b;
  if (weight) w = channel_view(*weight, x.rank());
  if (bias) b = channel_view(*bias, x.rank());
  if (training) {
    std::vector<int> axes{0};
    for (size_t i = 2; i < x.rank(); ++i) axes.push_back(static_cast<int>(i));
    return to(affine(standardize(xc, axes, eps), w, b), out);
  }
  if (!running_mean || !running_var)
    throw Error("batch_norm: inference (training=false) needs running_mean and running_var, for " +
                x.describe());
  // torch's inference kernel: alpha = w / sqrt(var + eps), beta = b - mean * alpha,
  // y = x * alpha + beta.
  Tensor mean_c = to(channel_view(*running_mean, x.rank()), cd);
  Tensor var_c = to(channel_view(*running_var, x.rank()), cd);
  Tensor alpha = (var_c + eps).sqrt().recip();
  if (w) alpha = alpha * to(*w, cd);
  Tensor beta = -(mean_c * alpha);
  if (b) beta = to(*b, cd) + beta;
  return to(xc * alpha + beta, out);
}

Tensor instance_norm(const Tensor& x, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, double eps) {
  require_float_dtype(x, "instance_norm");
  require_channels(x, "instance_norm");
  Expr c = x.shape()[1];
  check_param(weight, {c}, "instance_norm", "weight");
  check_param(bias, {c}, "instance_norm", "bias");
  DType out = result_dtype(x, weight, bias);
  Tensor xc = to(x, compute_dtype(out));
  std::vector<int> axes;
  for (size_t i = 2; i < x.rank(); ++i) axes.push_back(static_cast<int>(i));
  if (axes.empty())
    throw ShapeError("instance_norm: expects spatial dims after [N, C], got " + x.describe());
  std::optional<Tensor> w, b;
  if (weight) w = channel_view(*weight, x.rank());
  if (bias) b = channel_view(*bias, x.rank());
  return to(affine(standardize(xc, axes, eps), w, b), out);
}

Tensor normalize(const Tensor& x, double p, int dim, double eps) {
  require_float_dtype(x, "normalize");
  Tensor n = vector_norm(x, p, {dim}, true);
  return div(x, clamp_min(n, eps));
}

}  // namespace luminal
