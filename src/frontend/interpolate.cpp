#include "luminal/frontend/interpolate.hpp"

#include <cmath>
#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/pooling.hpp"
#include "luminal/frontend/promotion.hpp"
#include "spatial.hpp"

namespace luminal {

using detail::const_of;

namespace {

enum class Mode { Nearest, NearestExact, Linear, Area };

// floor(in * sf) as an Expr: exact host arithmetic (torch's
// floor(float(in) * sf) in double) for a constant size; for a symbolic size
// sf must be dyadic (m / 2^k) so that (in * m) / 2^k is the same floor.
Expr scaled_size(const Expr& in, double sf, const std::string& op) {
  if (auto c = const_of(in)) return static_cast<int64_t>(std::floor(static_cast<double>(*c) * sf));
  for (int k = 0; k <= 20; ++k) {
    const double m = std::ldexp(sf, k);
    if (m == std::floor(m) && m < 1e12)
      return ((in * Expr(static_cast<int64_t>(m))) / Expr(int64_t{1} << k)).simplify();
  }
  throw ShapeError(op + ": scale_factor " + std::to_string(sf) +
                   " needs a constant input size (the symbolic size " + in.to_string() +
                   " only supports dyadic factors such as 2, 0.5 or 1.5)");
}

struct AxisPlan {
  Expr in, out;
  std::optional<double> scale_factor;  // used for the coordinates (torch's `scales`)
};

// A rank-0 tensor num / den of dtype f (f32 or f64): host division when both
// are constant (bit-identical to torch's `(float)num / den`), else an f64
// division in the graph rounded to f.
Tensor ratio(Graph& g, const Expr& num, const Expr& den, DType f) {
  auto n = const_of(num);
  auto d = const_of(den);
  if (n && d)
    return g.constant(f == DType::F32 ? static_cast<float>(*n) / static_cast<float>(*d)
                                      : static_cast<double>(*n) / static_cast<double>(*d),
                      f);
  return to(expr_tensor(g, num, DType::F64) / expr_tensor(g, den, DType::F64), f);
}

// torch's compute_scales_value: 1 / scale_factor when one was given, else in / out.
Tensor coordinate_scale(Graph& g, const AxisPlan& a, DType f) {
  if (!a.scale_factor) return ratio(g, a.in, a.out, f);
  const double s = 1.0 / *a.scale_factor;
  return g.constant(f == DType::F32 ? static_cast<float>(s) : s, f);
}

// Resample `axis` of x with nearest (or nearest-exact) neighbours.
Tensor nearest_axis(const Tensor& x, int axis, const AxisPlan& a, bool exact) {
  Graph& g = *x.graph();
  if (!exact && provably_equal(a.out, a.in)) return x;  // torch: copy
  if (!exact && provably_equal(a.out, a.in * 2))        // torch: dst >> 1
    return repeat_interleave(x, 2, axis);
  Tensor scale = coordinate_scale(g, a, DType::F32);  // nearest_idx: always float
  // nearest: floorf(dst * scale) in float; nearest-exact: floorf((dst + 0.5) *
  // scale) where the product is a double that floorf rounds to float.
  Tensor src = exact
                   ? to((to(g.arange(a.out, DType::I64), DType::F64) + 0.5) * to(scale, DType::F64),
                        DType::F32)
                   : to(g.arange(a.out, DType::I64), DType::F32) * scale;
  Tensor idx = minimum(to(src, DType::I64), expr_tensor(g, a.in - 1, DType::I64));
  return index_select(x, axis, idx);
}

// Resample `axis` with linear weights; x is f32 or f64, which is also the
// dtype of the coordinates (torch's opmath_t).
Tensor linear_axis(const Tensor& x, int axis, const AxisPlan& a, bool align_corners) {
  Graph& g = *x.graph();
  const DType f = x.dtype();
  Tensor o = to(g.arange(a.out, DType::I64), f);
  // align_corners: scale = (in - 1) / (out - 1) (0 for a single output), src =
  // dst * scale; otherwise src = max((dst + 0.5) * scale - 0.5, 0).
  Tensor src = align_corners ? o * ratio(g, ((a.in - 1) * gt(a.out, Expr(1))).simplify(),
                                         max(a.out - 1, Expr(1)).simplify(), f)
                             : clamp_min((o + 0.5) * coordinate_scale(g, a, f) - 0.5, 0.0);
  // guard_index_and_lambda: i0 = min(floor(src), in - 1), w1 = clamp(src - i0, 0, 1).
  Tensor last = expr_tensor(g, a.in - 1, DType::I64);
  Tensor i0 = minimum(to(src, DType::I64), last);
  Tensor i1 = i0 + to(lt(i0, last), DType::I64);
  Tensor w1 = clamp(src - to(i0, f), 0.0, 1.0);
  Tensor w0 = 1.0 - w1;
  // Weights broadcast along `axis`: shape [out, 1, ..., 1].
  std::vector<Expr> wshape(x.rank() - static_cast<size_t>(axis), Expr(1));
  wshape[0] = a.out;
  Tensor x0 = index_select(x, axis, i0);
  Tensor x1 = index_select(x, axis, i1);
  return x0 * to(w0, x.dtype()).reshape(wshape) + x1 * to(w1, x.dtype()).reshape(wshape);
}

}  // namespace

Tensor interpolate(const Tensor& input, const std::optional<std::vector<Expr>>& size,
                   const std::optional<std::vector<double>>& scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor) {
  const std::string op = "interpolate";
  if (input.rank() < 3 || input.rank() > 5)
    throw ShapeError(op + ": expects a 3-D, 4-D or 5-D input [N, C, *spatial], got " +
                     input.describe());
  const size_t nsp = input.rank() - 2;
  Mode m;
  if (mode == "nearest") {
    m = Mode::Nearest;
  } else if (mode == "nearest-exact") {
    m = Mode::NearestExact;
  } else if (mode == "area") {
    m = Mode::Area;
  } else if ((mode == "linear" && nsp == 1) || (mode == "bilinear" && nsp == 2) ||
             (mode == "trilinear" && nsp == 3)) {
    m = Mode::Linear;
  } else {
    throw ShapeError(op + ": mode '" + mode + "' is not supported for a " +
                     std::to_string(input.rank()) + "-D input " + input.describe() +
                     " (nearest, nearest-exact, area, linear (3-D), bilinear (4-D), trilinear "
                     "(5-D))");
  }
  if (align_corners && m != Mode::Linear)
    throw ShapeError(op +
                     ": align_corners option can only be set with the interpolating modes: "
                     "linear | bilinear | trilinear");
  if (size.has_value() == scale_factor.has_value())
    throw ShapeError(op + (size ? ": only one of size or scale_factor should be defined"
                                : ": either size or scale_factor should be defined"));
  if (m == Mode::Linear ? !is_float(input.dtype())
                        : (input.dtype() == DType::Bool || !is_compute_type(input.dtype())))
    throw DTypeError(op + ": mode '" + mode + "' does not support " + input.describe());
  std::vector<AxisPlan> axes(nsp);
  for (size_t i = 0; i < nsp; ++i) {
    AxisPlan& a = axes[i];
    a.in = input.shape()[2 + i];
    if (size) {
      if (size->size() != 1 && size->size() != nsp)
        throw ShapeError(op + ": size " + to_string(*size) + " must have 1 or " +
                         std::to_string(nsp) + " entries for input " + input.describe());
      a.out = (*size)[size->size() == 1 ? 0 : i];
    } else {
      if (scale_factor->size() != 1 && scale_factor->size() != nsp)
        throw ShapeError(op + ": scale_factor must have 1 or " + std::to_string(nsp) +
                         " entries for input " + input.describe());
      const double sf = (*scale_factor)[scale_factor->size() == 1 ? 0 : i];
      if (!(sf > 0)) throw ShapeError(op + ": scale_factor must be positive");
      a.out = scaled_size(a.in, sf, op);
      if (!recompute_scale_factor.value_or(false)) a.scale_factor = sf;
    }
    auto oc = const_of(a.out);
    if (oc && *oc <= 0)
      throw ShapeError(op + ": output size " + std::to_string(*oc) + " must be positive for " +
                       input.describe());
  }
  if (m == Mode::Area) {
    std::vector<Expr> out;
    for (const AxisPlan& a : axes) out.push_back(a.out);
    if (nsp == 1) return adaptive_avg_pool1d(input, out[0]);
    if (nsp == 2) return adaptive_avg_pool2d(input, out);
    return adaptive_avg_pool3d(input, out);
  }
  if (m == Mode::Linear) {
    // f16 / bf16 resample in f32 (torch's opmath) and round once.
    const DType dt = input.dtype() == DType::F64 ? DType::F64 : DType::F32;
    Tensor x = to(input, dt);
    // Innermost axis first, so the outer axis combines rows of the inner
    // result: torch's w_h0 * (w_w0 * x00 + w_w1 * x01) + w_h1 * (...).
    for (size_t i = nsp; i-- > 0;)
      x = linear_axis(x, static_cast<int>(2 + i), axes[i], align_corners.value_or(false));
    return to(x, input.dtype());
  }
  Tensor x = input;
  for (size_t i = 0; i < nsp; ++i)
    x = nearest_axis(x, static_cast<int>(2 + i), axes[i], m == Mode::NearestExact);
  return x;
}

Tensor upsample_nearest(const Tensor& input, const std::optional<std::vector<Expr>>& size,
                        const std::optional<std::vector<double>>& scale_factor) {
  return interpolate(input, size, scale_factor, "nearest");
}

Tensor upsample_bilinear(const Tensor& input, const std::optional<std::vector<Expr>>& size,
                         const std::optional<std::vector<double>>& scale_factor) {
  return interpolate(input, size, scale_factor, "bilinear", true);
}

}  // namespace luminal
