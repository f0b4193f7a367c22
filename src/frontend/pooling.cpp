#include "luminal/frontend/pooling.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "luminal/core/tensor_data.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/promotion.hpp"
#include "spatial.hpp"

namespace luminal {

using detail::const_of;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The identity of max for x's dtype: -inf, or the integer dtype's minimum.
double max_identity(DType d) {
  return is_int(d) ? static_cast<double>(saturating_float_to_int(-kInf, d)) : -kInf;
}

// f16 / bf16 pools compute in f32 (torch's opmath) and round once at the end.
DType opmath(DType d) {
  return d == DType::F16 || d == DType::BF16 ? DType::F32 : d;
}

// Window geometry of one spatial axis, as torch's pooling_output_shape.
struct Axis {
  Expr size;       // input size
  int64_t kernel;  // window length (before dilation)
  int64_t stride;
  int64_t pad;  // symmetric padding
  int64_t dilation;
  Expr out;     // number of windows
  Expr pad_hi;  // far-side padding so that every window is inside the buffer
};

struct Pool {
  detail::Batched in;
  std::vector<Axis> axes;
};

Pool plan_pool(const std::string& op, size_t nsp, const Tensor& input, const SpatialArg& kernel,
               const std::optional<SpatialArg>& stride, const SpatialArg& padding,
               const SpatialArg& dilation, bool ceil_mode) {
  Pool p{detail::batch_input(input, nsp, op), {}};
  auto k = kernel.expand(nsp, op, "kernel_size", 1);
  // torch: stride=None (or an empty list) means stride = kernel_size.
  auto s = stride && !stride->values.empty() ? stride->expand(nsp, op, "stride", 1) : k;
  auto pd = padding.expand(nsp, op, "padding", 0);
  auto d = dilation.expand(nsp, op, "dilation", 1);
  for (size_t i = 0; i < nsp; ++i) {
    if (pd[i] > k[i] / 2)
      throw ShapeError(op + ": pad should be at most half of effective kernel size, but got pad=" +
                       std::to_string(pd[i]) + ", kernel_size=" + std::to_string(k[i]) +
                       " for input " + input.describe());
    const Expr size = p.in.x.shape()[2 + i];
    const int64_t span = d[i] * (k[i] - 1) + 1;
    Expr out = (size + Expr(2 * pd[i] - span + (ceil_mode ? s[i] - 1 : 0))) / Expr(s[i]) + 1;
    // ceil_mode: the last window must start inside the input or the left padding.
    if (ceil_mode) out = out - ge((out - 1) * Expr(s[i]), size + Expr(pd[i]));
    out = out.simplify();
    auto oc = const_of(out);
    auto sc = const_of(size);
    if ((oc && *oc < 1) || (sc && *sc + 2 * pd[i] < span))
      throw ShapeError(op + ": output size is too small for input " + input.describe() +
                       " (kernel_size=" + std::to_string(k[i]) +
                       ", stride=" + std::to_string(s[i]) + ", padding=" + std::to_string(pd[i]) +
                       ", dilation=" + std::to_string(d[i]) + ")");
    // The windows span (out - 1) * stride + span elements of the padded buffer;
    // ceil_mode may need more than `pad` on the far side.
    const Expr needed = (out - 1) * Expr(s[i]) + Expr(span);
    const Expr hi = (Expr(pd[i]) + max(needed - size - Expr(2 * pd[i]), Expr(0))).simplify();
    p.axes.push_back({size, k[i], s[i], pd[i], d[i], out, hi});
  }
  return p;
}

// [N, C, *spatial] padded with `fill` -> windows [N, C, O..., K...] (exactly O windows).
Tensor pool_windows(const Pool& p, const Tensor& x, double fill) {
  const size_t nsp = p.axes.size();
  std::vector<Expr> pads;
  bool any = false;
  for (size_t j = 0; j < nsp; ++j) {
    const Axis& a = p.axes[nsp - 1 - j];
    pads.push_back(a.pad);
    pads.push_back(a.pad_hi);
    any = any || a.pad != 0 || const_of(a.pad_hi) != 0;
  }
  Tensor xp = any ? pad(x, pads, PadMode::Constant, fill) : x;
  std::vector<Expr> kernel;
  std::vector<int64_t> stride, dilation;
  for (const Axis& a : p.axes) {
    kernel.push_back(a.kernel);
    stride.push_back(a.stride);
    dilation.push_back(a.dilation);
  }
  Tensor w = detail::sliding_windows(xp, nsp, kernel, stride, dilation);
  for (size_t i = 0; i < nsp; ++i)
    if (!provably_equal(w.shape()[2 + i], p.axes[i].out))
      w = w.slice(static_cast<int>(2 + i), 0, p.axes[i].out);
  return w;
}

Tensor reduce_last(Tensor w, size_t n, bool is_max) {
  for (size_t i = 0; i < n; ++i) w = is_max ? w.max_reduce(-1) : w.sum_reduce(-1);
  return w;
}

Tensor max_pool_nd(const std::string& op, size_t nsp, const Tensor& input, const SpatialArg& kernel,
                   const std::optional<SpatialArg>& stride, const SpatialArg& padding,
                   const SpatialArg& dilation, bool ceil_mode) {
  if (input.dtype() == DType::Bool || !is_compute_type(input.dtype()))
    throw DTypeError(op + ": expects a float or integer input, got " + input.describe());
  Pool p = plan_pool(op, nsp, input, kernel, stride, padding, dilation, ceil_mode);
  Tensor w = pool_windows(p, p.in.x, max_identity(input.dtype()));
  return p.in.restore(reduce_last(w, nsp, true));
}

Tensor avg_pool_nd(const std::string& op, size_t nsp, const Tensor& input, const SpatialArg& kernel,
                   const std::optional<SpatialArg>& stride, const SpatialArg& padding,
                   bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  if (!is_float(input.dtype()))
    throw DTypeError(op + ": expects a floating-point input, got " + input.describe());
  if (divisor_override && *divisor_override == 0)
    throw ShapeError(op + ": divisor must be not zero");
  Pool p = plan_pool(op, nsp, input, kernel, stride, padding, 1, ceil_mode);
  const DType dt = opmath(input.dtype());
  Tensor sums = reduce_last(pool_windows(p, to(p.in.x, dt), 0.0), nsp, false);
  Graph& g = *input.graph();
  Tensor divisor = g.constant(divisor_override ? static_cast<double>(*divisor_override) : 1.0, dt);
  if (!divisor_override) {
    // torch's per-window divisor, as one Iota over the output positions.
    std::vector<Expr> out_shape;
    for (const Axis& a : p.axes) out_shape.push_back(a.out);
    divisor = coordinate_iota(g, out_shape, [&](const std::vector<Expr>& c) {
                Expr count = 1;
                for (size_t i = 0; i < c.size(); ++i) {
                  const Axis& a = p.axes[i];
                  Expr start = c[i] * Expr(a.stride) - Expr(a.pad);
                  Expr end = min(start + Expr(a.kernel), a.size + Expr(a.pad));
                  if (!count_include_pad) {
                    start = max(start, Expr(0));
                    end = min(end, a.size);
                  }
                  count = count * (end - start);
                }
                return count;
              }).cast(dt);
  }
  Tensor out = sums / divisor;
  return p.in.restore(to(out, input.dtype()));
}

// Adaptive pooling of one axis of x (moved last): torch's bins
// [floor(o * In / Out), ceil((o + 1) * In / Out)).
Tensor adaptive_axis(const std::string& op, const Tensor& x, int axis, const Expr& out,
                     bool is_max) {
  const Expr in = x.shape()[axis];
  auto ic = const_of(in);
  auto oc = const_of(out);
  if (oc && *oc < 0) throw ShapeError(op + ": output size must be >= 0, got " + out.to_string());
  if (ic && *ic == 0 && oc != 0)
    throw ShapeError(op + ": input " + x.describe() + " has an empty spatial axis");
  Tensor xt = x.transpose(axis, -1);
  if (ic && oc && *oc > 0 && *ic % *oc == 0) {
    // Equal bins: plain windows (views), no Gather.
    const int64_t k = *ic / *oc;
    Tensor r = reduce_last(unfold(xt, -1, k, k), 1, is_max);
    if (!is_max) r = r / static_cast<double>(k);
    return r.transpose(axis, -1);
  }
  // Bin lengths are at most ceil(In / Out) + 1 (exact maximum when constant).
  Expr kmax = ceil_div(in, out) + 1;
  if (ic && oc) {
    int64_t m = 0;
    for (int64_t o = 0; o < *oc; ++o)
      m = std::max(m, ((o + 1) * *ic + *oc - 1) / *oc - (o * *ic) / *oc);
    kmax = m;
  }
  const double neutral = is_max ? max_identity(x.dtype()) : 0.0;
  const int last = static_cast<int>(xt.rank()) - 1;
  std::vector<Expr> pads = {0, 1};
  Tensor ext = pad(xt, pads, PadMode::Constant, neutral);  // [..., In + 1]
  std::vector<Expr> shape(xt.shape().begin(), xt.shape().end() - 1);
  shape.push_back(out);
  shape.push_back(kmax);
  const Expr row_len = (in + 1).simplify();
  auto bin_start = [&](const Expr& o) { return (o * in) / out; };
  auto bin_len = [&](const Expr& o) { return ceil_div((o + 1) * in, out) - bin_start(o); };
  Tensor idx = coordinate_iota(*x.graph(), shape, [&](const std::vector<Expr>& c) {
    Expr row = 0;
    for (int d = 0; d < last; ++d) row = row * xt.shape()[d] + c[d];
    const Expr o = c[last];
    const Expr j = c[last + 1];
    const Expr inside = lt(j, bin_len(o));
    return row * row_len + inside * (bin_start(o) + j) + (1 - inside) * in;
  });
  Tensor r = reduce_last(idx.gather_from(ext), 1, is_max);
  if (!is_max) r = r / x.graph()->iota(bin_len(Expr::index_var()), out).cast(x.dtype());
  return r.transpose(axis, -1);
}

Tensor adaptive_nd(const std::string& op, size_t nsp, const Tensor& input,
                   const std::vector<Expr>& output_size, bool is_max) {
  if (is_max ? (input.dtype() == DType::Bool || !is_compute_type(input.dtype()))
             : !is_float(input.dtype()))
    throw DTypeError(op + ": unsupported dtype for input " + input.describe());
  detail::Batched in = detail::batch_input(input, nsp, op);
  if (output_size.size() != 1 && output_size.size() != nsp)
    throw ShapeError(op + ": output_size must have 1 or " + std::to_string(nsp) + " entries, got " +
                     to_string(output_size));
  const DType dt = is_max ? input.dtype() : opmath(input.dtype());
  Tensor x = to(in.x, dt);
  for (size_t i = 0; i < nsp; ++i)
    x = adaptive_axis(op, x, static_cast<int>(2 + i), output_size[output_size.size() == 1 ? 0 : i],
                      is_max);
  return in.restore(to(x, input.dtype()));
}

}  // namespace

Tensor max_pool1d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, SpatialArg dilation, bool ceil_mode) {
  return max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool2d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, SpatialArg dilation, bool ceil_mode) {
  return max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool3d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, SpatialArg dilation, bool ceil_mode) {
  return max_pool_nd("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool1d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, bool ceil_mode, bool count_include_pad) {
  return avg_pool_nd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, std::nullopt);
}
Tensor avg_pool2d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override);
}
Tensor avg_pool3d(const Tensor& input, SpatialArg kernel_size, std::optional<SpatialArg> stride,
                  SpatialArg padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override);
}

namespace {

// torch's lp_pool: avg_pool(x^p) * prod(kernel) with negative sums zeroed
// (sign(out) * relu(|out|)), then ^(1 / p).
Tensor lp_pool_nd(size_t nsp, const Tensor& input, double norm_type, const SpatialArg& kernel,
                  const std::optional<SpatialArg>& stride, bool ceil_mode) {
  const std::string op = nsp == 1 ? "lp_pool1d" : "lp_pool2d";
  auto k = kernel.expand(nsp, op, "kernel_size", 1);
  Tensor out =
      avg_pool_nd(op, nsp, pow(input, norm_type), kernel, stride, 0, ceil_mode, true, std::nullopt);
  double count = 1;
  for (int64_t v : k) count *= static_cast<double>(v);
  return pow(mul(sign(out) * relu(abs(out)), count), 1.0 / norm_type);
}

}  // namespace

Tensor lp_pool1d(const Tensor& input, double norm_type, SpatialArg kernel_size,
                 std::optional<SpatialArg> stride, bool ceil_mode) {
  return lp_pool_nd(1, input, norm_type, kernel_size, stride, ceil_mode);
}
Tensor lp_pool2d(const Tensor& input, double norm_type, SpatialArg kernel_size,
                 std::optional<SpatialArg> stride, bool ceil_mode) {
  return lp_pool_nd(2, input, norm_type, kernel_size, stride, ceil_mode);
}

Tensor adaptive_avg_pool1d(const Tensor& input, const Expr& output_size) {
  return adaptive_nd("adaptive_avg_pool1d", 1, input, {output_size}, false);
}
Tensor adaptive_avg_pool2d(const Tensor& input, const std::vector<Expr>& output_size) {
  return adaptive_nd("adaptive_avg_pool2d", 2, input, output_size, false);
}
Tensor adaptive_avg_pool3d(const Tensor& input, const std::vector<Expr>& output_size) {
  return adaptive_nd("adaptive_avg_pool3d", 3, input, output_size, false);
}
Tensor adaptive_max_pool1d(const Tensor& input, const Expr& output_size) {
  return adaptive_nd("adaptive_max_pool1d", 1, input, {output_size}, true);
}
Tensor adaptive_max_pool2d(const Tensor& input, const std::vector<Expr>& output_size) {
  return adaptive_nd("adaptive_max_pool2d", 2, input, output_size, true);
}

}  // namespace luminal
