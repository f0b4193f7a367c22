#include "luminal/frontend/elementwise.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "luminal/error.hpp"

namespace luminal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void require_not_bool(DType d, const char* op, const std::string& what) {
  if (d == DType::Bool)
    throw DTypeError(std::string(op) + ": not defined for bool tensors: " + what);
}

// A rank-0 constant of `like`'s dtype (broadcasts in the core operators).
Tensor cst(const Tensor& like, double v) {
  return scalar_tensor(*like.graph(), Scalar(v), like.dtype());
}

// ---- bool helpers (operands already bool) ----
Tensor b_not(const Tensor& c) {
  return c.lt(scalar_tensor(*c.graph(), Scalar(true), DType::Bool));
}
Tensor b_and(const Tensor& a, const Tensor& b) {
  return a * b;
}
Tensor b_or(const Tensor& a, const Tensor& b) {
  return a + b;
}
Tensor b_xor(const Tensor& a, const Tensor& b) {
  return b_or(a.lt(b), b.lt(a));
}

// x is not nan (x < inf or -inf < x); floats only.
Tensor not_nan(const Tensor& x) {
  return b_or(x.lt(cst(x, kInf)), cst(x, -kInf).lt(x));
}
// -c < x < c (false for nan).
Tensor in_open_range(const Tensor& x, double c) {
  return b_and(x.lt(cst(x, c)), cst(x, -c).lt(x));
}

// Same-dtype comparisons (broadcasting); exact for nan / inf.
Tensor eq_raw(const Tensor& a, const Tensor& b) {
  Tensor e = b_and(b_not(a.lt(b)), b_not(b.lt(a)));
  if (!is_float(a.dtype())) return e;
  // a + b is nan iff one is nan or they are opposite infinities (then a < b or b < a).
  return b_and(e, not_nan(a + b));
}
Tensor le_raw(const Tensor& a, const Tensor& b) {
  if (!is_float(a.dtype())) return b_not(b.lt(a));
  return b_or(a.lt(b), b_and(b_not(b.lt(a)), not_nan(a + b)));
}

// The index dtype for flat indexes up to `limit` (an expression of sizes).
DType index_dtype(const Expr& limit) {
  auto c = limit.as_const();
  return c && *c < (int64_t{1} << 30) ? DType::I32 : DType::I64;
}

// -1, 0, 1 in x's dtype (nan -> 0). Not for bool.
Tensor sign_raw(const Tensor& x) {
  Tensor zero = cst(x, 0.0);
  return to(zero.lt(x), x.dtype()) - to(x.lt(zero), x.dtype());
}
// |x| up to the sign of zero (cheap: no Scatter); nan stays nan.
Tensor abs_raw(const Tensor& x) {
  return x * sign_raw(x);
}

// Horner evaluation of sum c[i] * t^i.
template <size_t N>
Tensor horner(const Tensor& t, const std::array<double, N>& c) {
  Tensor acc = cst(t, c[N - 1]).expand(t.shape());
  for (size_t i = N - 1; i-- > 0;) acc = acc * t + c[i];
  return acc;
}

// ---- formulas on tensors already in their computation dtype ----

// e^t * 2^scale (scale a small integer) for an f32 tensor, without f64:
// 2^n * 2^f with n = trunc(t log2 e) and f = (t - n ln2) log2 e. ln2 is split
// Cody-Waite style (ln2_hi has 15 bits, so n ln2_hi is exact for |n| < 512, and
// t - n ln2_hi is exact: both are multiples of ulp(t) or 2^-24 and the
// difference is below 1), so f keeps t's full precision: ~2 ulp overall, where
// 2^(t log2 e) alone is off by up to |t log2 e| 2^-24 (~90 ulp near overflow).
// The Casts through i32 truncate and saturate (NaN -> 0), so +-inf and NaN need
// no selects (which would stop kernel fusion): +inf -> inf * inf, -inf -> 0 * 0.
// n uses log2 e made a little small so that n <= 127 wherever e^t is finite
// (2^n must not overflow before the product does).
Tensor exp_f32(const Tensor& t, double scale = 0.0) {
  constexpr double kLog2eDown = std::numbers::log2e * (1.0 - 0x1p-22);
  constexpr double kLn2Hi = 0x1.62e4p-1;  // 0.693145751953125
  constexpr double kLn2Lo = std::numbers::ln2 - kLn2Hi;
  Tensor n = to(to(t * kLog2eDown, DType::I32), DType::F32);
  Tensor f = ((t + n * -kLn2Hi) + n * -kLn2Lo) * std::numbers::log2e;
  return (scale != 0.0 ? n + scale : n).exp2() * f.exp2();
}

Tensor exp_raw(const Tensor& t) {
  if (t.dtype() == DType::F32) return exp_f32(t);
  return (t * std::numbers::log2e).exp2();
}
Tensor log_raw(const Tensor& t) {
  return t.log2() * std::numbers::ln2;
}
// expm1 for an f64 tensor: Taylor near 0 (exp(t) - 1 cancels there).
Tensor expm1_raw(const Tensor& t) {
  Tensor taylor = t + t * t * (0.5 + t * (1.0 / 6.0));
  return where(in_open_range(t, 1e-5), taylor, exp_raw(t) - 1.0);
}
// log1p for an f64 tensor: Taylor near 0, else log(1 + t) (1 + t is exact in
// f64 for f32-precision t outside the Taylor range).
Tensor log1p_raw(const Tensor& t) {
  Tensor taylor = t * (1.0 + t * (-0.5 + t * (1.0 / 3.0 + t * -0.25)));
  return where(in_open_range(t, 1e-4), taylor, log_raw(t + 1.0));
}
Tensor sigmoid_raw(const Tensor& t) {
  return (exp_raw(-t) + 1.0).recip();
}
Tensor tanh_raw(const Tensor& t) {
  // tanh(|t|) = -m / (m + 2) with m = expm1(-2|t|) in (-1, 0]: no overflow, no
  // cancellation near 0; the sign is restored by multiplying with sign(t).
  Tensor s = sign_raw(t);
  Tensor m = expm1_raw(t * s * -2.0);
  return s * (-m / (m + 2.0));
}
Tensor sin_raw(const Tensor& t) {
  return t.sin();
}
// cos(t) = 1 - 2 sin^2(t / 2): halving is exact, so unlike sin(t + pi / 2) this
// stays accurate (absolute error ~1e-16 in f64) for large |t|.
Tensor cos_raw(const Tensor& t) {
  Tensor s = (t * 0.5).sin();
  return 1.0 - s * s * 2.0;
}

// erfc(a) for a >= 0 (f64): t * exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P a
// degree-18 Chebyshev fit (in u = affine map of t onto [-1, 1]) of
// log(erfc(a) / t) + a^2 over a in [0, 26] (below that erfc underflows f64).
// Maximum error of P: 5e-13 absolute, i.e. relative error of erfc ~5e-13.
Tensor erfc_pos(const Tensor& a) {
  constexpr double t0 = 1.0 / 14.0;
  constexpr std::array<double, 19> c = {
      -0.6235239226142456,    0.6301987138051518,     0.03192442597919353,
      -0.0394366721109409,    -0.004919030098540405,  0.006438735284955254,
      0.00037508008695941,    -0.0013757958630324974, 0.00014140930502199594,
      0.00028980230359948835, -9.732233650155759e-05, -4.703137690898703e-05,
      3.597226807325742e-05,  2.5463630266284644e-06, -9.276921545140329e-06,
      1.197311442583469e-06,  1.5837739985619959e-06, -2.789281841323332e-07,
      -1.362318985704861e-07};
  Tensor t = (a * 0.5 + 1.0).recip();
  Tensor u = t * (2.0 / (1.0 - t0)) - (2.0 * t0 / (1.0 - t0) + 1.0);
  return t * exp_raw(horner(u, c) - a * a);
}

// erf for an f64 tensor: Taylor series for |t| < 0.5, 1 - erfc beyond.
Tensor erf_raw(const Tensor& t) {
  std::array<double, 12> c{};
  double fact = 1.0;  // n!
  for (size_t n = 0; n < c.size(); ++n) {
    if (n > 0) fact *= static_cast<double>(n);
    c[n] = (n % 2 ? -2.0 : 2.0) / std::sqrt(std::numbers::pi) / (fact * (2.0 * n + 1.0));
  }
  Tensor small = t * horner(t * t, c);
  Tensor s = sign_raw(t);
  Tensor large = s * (1.0 - erfc_pos(t * s));
  return where(in_open_range(t, 0.5), small, large);
}

// [z > 0] as 0.0 / 1.0 in f32 (0 for NaN), for z = 0 or |z| >= 2^-118: the
// saturating Cast to u8 of z 2^126 is 0 or 255, and 255 * f32(1 / 255) rounds
// to exactly 1. Used instead of LessThan + Cast because GCC does not vectorise
// the bool -> float conversion in these kernels' loops (a u8 one it does).
Tensor positive_mask_f32(const Tensor& z) {
  return to(to(z * 0x1p126, DType::U8), DType::F32) * (1.0 / 255.0);
}

// ---- erf in f32 (f32 / f16 / bf16 / int inputs) ----
// Branch-free and select-free (a select is a Scatter here, which ends kernel
// fusion): both branches are computed for every element and blended with 0/1
// masks, so each must stay finite where it is not used. Maximum error against
// double erf ~1.9 ulp (sampled over all f32 bit patterns and densely over
// [-6, 6]; tests/frontend/erf_f32_test.cpp), erf(+-0) = +-0, erf(+-inf) = +-1.
//   |x| < 1:  x + x Q(x^2), Q a degree-6 Chebyshev fit of erf(x) / x - 1
//             (relative, ~1e-9); the leading x is not rounded (only the
//             finite copy of |x| below costs up to an ulp).
//   |x| >= 1: 1 - t 2^(P(t) - x^2 log2 e), t = 1 / (1 + |x|) in [0, 1/2], P a
//             degree-7 fit of log2(erfc(|x|) / t) + x^2 log2 e over all |x| >= 1
//             (t = 0 is |x| = inf: no extrapolation), uniform in log2, so erfc
//             itself is accurate too (relative ~1e-5 at |x| = 9, from rounding
//             x^2).
// Coefficients: Chebyshev least-squares fits in double, rounded to f32, with
// the whole f32 evaluation simulated op by op to measure the error.
// The sum of +0 and the masked-out branch is +0, so s restores -0 for x = -0.
Tensor erf_f32(const Tensor& x) {
  // Sign by the sign bit: x + 1/x is negative exactly for negative x, -0 and
  // -inf, and |x + 1/x| >= 2.
  Tensor s = positive_mask_f32(-(x + x.recip())) * -2.0 + 1.0;  // -1 / +1 (+1 for NaN)
  Tensor a = x * s;                                             // |x| exactly (NaN stays NaN)
  Tensor m = positive_mask_f32(1.0 - a);                        // [|x| < 1]; 1 - |x| >= 2^-24 there
  Tensor keep = 1.0 - m;                                        // the weight of the large branch
  // The small branch's |x| must stay finite at inf (0 * inf would be NaN):
  // 1 / (1 / (|x| 2^64) + keep) 2^-64 is |x| within an ulp where |x| < 1 and
  // below 2^-64 elsewhere (2^64 keeps the reciprocal of subnormals finite).
  // An exact round trip through a saturating i32 Cast would avoid that ulp,
  // but the kernels' i32 -> f32 conversion does not vectorise.
  Tensor as = ((a * 0x1p64).recip() + keep).recip() * 0x1p-64 * m;
  constexpr std::array<double, 7> q = {0.128379166,   -0.37612626,     0.112835824,   -0.0268536918,
                                       0.00518809911, -0.000800818903, 7.84725926e-05};
  Tensor small = as + as * horner(as * as, q);  // erf(|x|) for |x| < 1, else +0
  constexpr std::array<double, 8> c = {-0.825766265, 1.44373465, -0.0227899831, -0.708342373,
                                       -2.4732821,   6.45990086, -5.70849848,   1.83308935};
  Tensor t = (a + 1.0).recip();
  Tensor erfc = t * (horner(t, c) + a * (a * -std::numbers::log2e)).exp2();
  return s * (small + (1.0 - erfc) * keep);
}
// 1 + erf(x) = (1 + s) - s erfc(|x|) (GELU's form): erfc there for x < 0, no
// cancellation in the tail, and near 0 erfc need only be accurate relative to
// 1, so one branch serves every x (erf itself needs the small branch for its
// relative accuracy at tiny x; this is ~60% of its operations):
//   erfc(a) = t 2^(w P(w) - a^2 log2 e), t = 1 / (1 + a / 2), w = 1 - t,
// P a degree-8 fit (tools/fit_gelu_erfc.py) of (log2(erfc(a) / t) + a^2 log2 e)
// / w over a in [0, 10.5]; past that erfc < 1e-49 and the result underflows
// whatever P's extrapolation (bounded: w <= 1), a = inf gives t = 0, w = 1.
// Simulated op by op in f32, GELU's relative error is <= 3e-7 for x > 0,
// <= 4e-7 on (-1, 0), and in the tail that of rounding x / sqrt 2 (~2e-5 at
// x = -12), as with erf's two branches. s: the sign from x 2^32, which is 0
// only for +-0 (the result is 1 for either) and saturates the mask for every
// other x, subnormals included (|x 2^32| >= 2^-117; inf past 2^96).
Tensor one_plus_erf_f32(const Tensor& x) {
  Tensor s = positive_mask_f32(x * -0x1p32) * -2.0 + 1.0;
  Tensor a = x * s;
  Tensor t = (a * 0.5 + 1.0).recip();
  Tensor w = 1.0 - t;
  constexpr std::array<double, 9> c = {-1.81311941,  -0.437414914,  0.230910555,
                                       0.30242148,   -0.0568750687, 0.344610691,
                                       -0.856802285, 0.584216416,   -0.123439111};
  Tensor erfc = t * (w * horner(w, c) + a * (a * -std::numbers::log2e)).exp2();
  return (s + 1.0) - s * erfc;
}

// Apply a float formula: any input dtype; the formula runs in `cd(out)` and
// the result is rounded once to the float result dtype (f32 for ints / bool).
template <typename F>
Tensor float_unary(const Tensor& x, const char* op, bool precise, F f) {
  require_compute_dtype(x, op);
  DType out = to_float_dtype(x.dtype());
  DType cd = precise ? precise_dtype(out) : compute_dtype(out);
  return to(f(to(x, cd)), out);
}

// Same-dtype, same-shape select: dest = b, then a's elements scattered where
// c is true. Indexes of unselected elements are pushed out of range (k + N),
// which Scatter skips, so nothing of the unselected operand leaks.
Tensor select(const Tensor& c, const Tensor& a, const Tensor& b) {
  Graph& g = *a.graph();
  const std::vector<Expr>& shape = a.shape();
  Expr n = product(shape);
  DType it = index_dtype(n * 2);
  Tensor k = g.arange(n, it).reshape(shape);
  Tensor idx = k + to(b_not(c), it) * expr_tensor(g, n, it);
  return b.scatter(idx, a);
}

// Element-wise max of same-dtype, same-shape tensors: stack [a, b] along a new
// axis 0 (b scattered into a broadcast copy of a) and MaxReduce it, which
// propagates nan.
Tensor max_raw(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Bool) return b_or(a, b);
  Graph& g = *a.graph();
  std::vector<Expr> shape = a.shape();
  Expr n = product(shape);
  std::vector<Expr> stacked = shape;
  stacked.insert(stacked.begin(), Expr(2));
  Tensor dest = a.unsqueeze(0).expand(stacked);
  Tensor idx = g.iota(Expr::index_var() + n, n, index_dtype(n * 2)).reshape(shape);
  return dest.scatter(idx, b).max_reduce(0);
}

Tensor min_raw(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Bool) return b_and(a, b);
  if (is_float(a.dtype())) return -max_raw(-a, -b);
  // -1 - x reverses the order of integers without overflow.
  return -1.0 - max_raw(-1.0 - a, -1.0 - b);
}

// where() on operands of one dtype that still need broadcasting.
Tensor where_same(const Tensor& c, const Tensor& a, const Tensor& b) {
  std::vector<Expr> shape = broadcast_shapes(a.shape(), b.shape(), "where");
  shape = broadcast_shapes(shape, c.shape(), "where");
  return select(c.expand(shape), a.expand(shape), b.expand(shape));
}

// where(c, a, v) with a scalar v in a's dtype.
Tensor where_scalar(const Tensor& c, const Tensor& a, double v) {
  return where_same(c, a, cst(a, v));
}

// Clamp to scalar bounds with where (cheaper than the stack): nan stays nan,
// lo > hi gives hi, as torch.
Tensor clamp_scalar(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  Tensor r = x;
  if (lo) r = where_scalar(b_not(r.lt(cst(r, *lo))), r, *lo);
  if (hi) r = where_scalar(b_not(cst(r, *hi).lt(r)), r, *hi);
  return r;
}

}  // namespace

// ==== rounding helpers (float tensors) ====

namespace {

// +1 or -1 by the sign bit (-0.0 and -inf give -1, nan +1): rounding works on
// |x| = x * m and multiplies m back, so zeros keep the input's sign as in C.
Tensor sign_bit_factor(const Tensor& x) {
  Tensor zero = cst(x, 0.0);
  Tensor negative = b_or(x.lt(zero), x.recip().lt(zero));
  return 1.0 - to(negative, x.dtype()) * 2.0;
}

// Float tensors only, in their own dtype.
Tensor trunc_float(const Tensor& x) {
  // fmod(a, 1) is exact, so a - fmod(a, 1) is trunc(a) for finite a >= 0; +-inf stay.
  Tensor m = sign_bit_factor(x);
  Tensor a = x * m;
  return where_same(in_open_range(x, kInf), (a - a % cst(a, 1.0)) * m, x);
}
// t - [x < t] with the subtraction of +0.0 or 1.0 (x - 0.0 == x, signs kept).
Tensor floor_float(const Tensor& x) {
  Tensor t = trunc_float(x);
  return t - to(x.lt(t), x.dtype());
}
Tensor ceil_float(const Tensor& x) {
  return -floor_float(-x);
}
// Half to even: |x| + 2^p - 2^p rounds in the dtype's own arithmetic (p = the
// significand width); |x| >= 2^p is already an integer (and covers inf / nan).
Tensor round_float(const Tensor& x) {
  double big = x.dtype() == DType::F64 ? std::ldexp(1.0, 52) : std::ldexp(1.0, 23);
  Tensor m = sign_bit_factor(x);
  Tensor a = x * m;
  return where_same(in_open_range(x, big), ((a + big) - big) * m, x);
}

template <typename F>
Tensor rounding_op(const Tensor& x, const char* op, F f) {
  require_compute_dtype(x, op);
  if (!is_float(x.dtype())) return x;  // integers and bool are already integral (torch)
  return to(f(to(x, compute_dtype(x.dtype()))), x.dtype());
}

}  // namespace

// ==== arithmetic ===============================================================

Tensor add(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha) {
  auto [x, y] = promote2(a, b, "add");
  if (alpha.to_double() != 1.0) {
    if (is_int(x.dtype()) && alpha.is_float())
      throw DTypeError("add: for integer tensors alpha must not be a float, got " +
                       alpha.to_string());
    y = y * scalar_tensor(*y.graph(), alpha, y.dtype());
  }
  return x + y;
}

Tensor sub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha) {
  auto [x, y] = promote2(a, b, "sub");
  if (x.dtype() == DType::Bool)
    throw DTypeError("sub: subtraction of bool tensors is not supported (" + a.describe() + ", " +
                     b.describe() + "); use logical_xor");
  if (alpha.to_double() != 1.0) {
    if (is_int(x.dtype()) && alpha.is_float())
      throw DTypeError("sub: for integer tensors alpha must not be a float, got " +
                       alpha.to_string());
    y = y * scalar_tensor(*y.graph(), alpha, y.dtype());
  }
  return x - y;
}

Tensor rsub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha) {
  return sub(b, a, alpha);
}

Tensor mul(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "mul");
  return x * y;
}

namespace {

// Correctly rounded quotient for f16 / bf16 / f32 (computed in f64: a product
// with the f64 reciprocal is within 2^-52 of a / b, which never crosses an f32
// rounding boundary), a * recip(b) for f64.
Tensor true_div_raw(const Tensor& x, const Tensor& y) {
  DType out = x.dtype();
  DType cd = precise_dtype(out);
  return to(to(x, cd) * to(y, cd).recip(), out);
}

// Exact integer division toward zero: (a - a % b) is a multiple of b; its
// quotient is recovered in f64 (exact for |a| < 2^52) and rounded to nearest.
Tensor int_div_trunc(const Tensor& x, const Tensor& y) {
  Tensor r = x % y;
  Tensor num = to(x - r, DType::F64);
  Tensor q = num * to(y, DType::F64).recip();
  q = q + sign_raw(q) * 0.5;  // Cast truncates toward zero: this rounds to nearest
  return to(q, x.dtype());
}

// Python-style adjustment: r != 0 and sign(r) != sign(b).
Tensor needs_floor_fix(const Tensor& r, const Tensor& b) {
  Tensor zero = cst(r, 0.0);
  Tensor r_nonzero = b_or(r.lt(zero), zero.lt(r));
  return b_and(r_nonzero, b_xor(r.lt(zero), b.lt(zero)));
}

Tensor floor_divide_raw(const Tensor& x, const Tensor& y) {
  if (x.dtype() == DType::Bool)
    throw DTypeError("floor_divide: not defined for bool tensors: " + x.describe());
  if (is_int(x.dtype())) {
    Tensor q = int_div_trunc(x, y);
    return q - to(needs_floor_fix(x % y, y), x.dtype());
  }
  // torch's div_floor_floating, computed in the operands' compute dtype.
  DType out = x.dtype();
  DType cd = compute_dtype(out);
  Tensor a = to(x, cd), b = to(y, cd);
  Tensor mod = a % b;
  Tensor div = true_div_raw(a - mod, b);
  div = div - to(needs_floor_fix(mod, b), cd);
  Tensor fl = floor_float(div);
  // if div - floor(div) > 0.5: floor + 1
  Tensor rounded = where_same(cst(fl, 0.5).lt(div - fl), fl + 1.0, fl);
  Tensor zero_div = eq_raw(div, cst(div, 0.0));
  // div == 0 -> copysign(0, a / b): the quotient a / b itself is a signed zero there.
  Tensor q = where_same(zero_div, true_div_raw(a, b) * 0.0, rounded);
  Tensor b_zero = eq_raw(b, cst(b, 0.0));
  return to(where_same(b_zero, true_div_raw(a, b), q), out);
}

}  // namespace

Tensor div(const TensorOrScalar& a, const TensorOrScalar& b,
           const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) {
    DType out = to_float_dtype(result_type(a, b));
    auto [x, y] = promote2(a, b, "div", out);
    return true_div_raw(x, y);
  }
  auto [x, y] = promote2(a, b, "div");
  if (*rounding_mode == "floor") return floor_divide_raw(x, y);
  if (*rounding_mode != "trunc")
    throw Error("div: rounding_mode must be \"trunc\", \"floor\" or absent, got \"" +
                *rounding_mode + "\"");
  if (x.dtype() == DType::Bool)
    throw DTypeError("div: rounding_mode=\"trunc\" is not defined for bool tensors");
  if (is_int(x.dtype())) return int_div_trunc(x, y);
  // The quotient is rounded to the dtype before truncating, as torch.
  return rounding_op(true_div_raw(x, y), "div", trunc_float);
}

Tensor true_divide(const TensorOrScalar& a, const TensorOrScalar& b) {
  return div(a, b);
}

Tensor floor_divide(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "floor_divide");
  return floor_divide_raw(x, y);
}

Tensor fmod(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "fmod");
  require_not_bool(x.dtype(), "fmod", a.describe() + ", " + b.describe());
  return x % y;
}

Tensor remainder(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "remainder");
  require_not_bool(x.dtype(), "remainder", a.describe() + ", " + b.describe());
  Tensor r = x % y;
  Tensor fix = needs_floor_fix(r, y);
  if (is_int(x.dtype())) return r + y * to(fix, x.dtype());
  return where_same(fix, r + y, r);
}

namespace {

// x^n for an integer n >= 0 by repeated squaring (exact for integers).
Tensor pow_uint(const Tensor& x, uint64_t n) {
  std::optional<Tensor> result;
  Tensor p = x;
  while (n) {
    if (n & 1) result = result ? *result * p : p;
    n >>= 1;
    if (n) p = p * p;
  }
  return result ? *result : cst(x, 1.0).expand(x.shape());
}

// Integer tensor ^ integer tensor: square-and-multiply over every exponent bit
// (wrapping as torch). Negative exponents: 1 for base 1, +-1 for base -1, else 0.
Tensor int_pow_tensor(const Tensor& x, const Tensor& e) {
  DType d = x.dtype();
  int bits = d == DType::I64 ? 63 : d == DType::I32 ? 31 : d == DType::I8 ? 7 : 8;
  Tensor zero = cst(e, 0.0);
  Tensor e_neg = e.lt(zero);
  Tensor ep = where_same(e_neg, zero, e);
  Tensor result = to(cst(x, 1.0), d).expand(x.shape());
  Tensor p = x;
  for (int k = 0; k < bits; ++k) {
    double bitv = std::ldexp(1.0, k);
    Tensor low = k + 1 < bits ? ep % cst(ep, std::ldexp(1.0, k + 1)) : ep;
    Tensor bit = to(b_not(low.lt(cst(ep, bitv))), d);  // bit k of ep
    result = result * (bit * (p - 1.0) + 1.0);
    if (k + 1 < bits) p = p * p;
  }
  Tensor one = cst(x, 1.0), minus_one = cst(x, -1.0);
  Tensor odd = to(b_not(eq_raw(e % cst(e, 2.0), cst(e, 0.0))), d);
  Tensor neg_val = to(eq_raw(x, one), d) + to(eq_raw(x, minus_one), d) * (1.0 - odd * 2.0);
  return where_same(e_neg, neg_val, result);
}

// General float power in f64 with C pow's special cases.
Tensor float_pow_general(const Tensor& x, const Tensor& y) {
  DType out = x.dtype();
  Tensor a = to(x, precise_dtype(out)), b = to(y, precise_dtype(out));
  Tensor zero = cst(a, 0.0), one = cst(a, 1.0);
  Tensor ax = abs_raw(a);
  Tensor r = (b * ax.log2()).exp2();
  Tensor y_int = eq_raw(trunc_float(b), b);
  Tensor odd = b_and(y_int, eq_raw(abs_raw(b % cst(b, 2.0)), one));
  // A negative base (including -0.0, whose reciprocal is -inf) to an odd integer
  // power is negative.
  Tensor neg = a.lt(zero);
  Tensor neg_or_minus_zero = b_or(neg, a.recip().lt(zero));
  r = where_same(b_and(neg_or_minus_zero, odd), -r, r);
  // finite negative base (not -0.0), non-integer exponent -> nan
  Tensor bad = b_and(b_and(neg, b_not(y_int)), cst(a, -kInf).lt(a));
  r = where_same(bad, cst(a, kNaN), r);
  // x^0 = 1, 1^y = 1, (-1)^(+-inf) = 1
  Tensor y_inf = b_not(in_open_range(b, kInf));
  Tensor ones =
      b_or(b_or(eq_raw(b, zero), eq_raw(a, one)), b_and(eq_raw(ax, one), b_and(y_inf, not_nan(b))));
  r = where_same(ones, one, r);
  return to(r, out);
}

}  // namespace

Tensor pow(const TensorOrScalar& base, const TensorOrScalar& exponent) {
  DType d = result_type(base, exponent);
  if (d == DType::Bool) {
    // torch keeps bool: x ** y is x where y is true, true where y is false.
    auto [x, y] = promote2(base, exponent, "pow");
    return logical_or(x, logical_not(y));
  }
  if (exponent.is_scalar() && base.is_tensor()) {
    const Scalar& s = exponent.scalar();
    Tensor x = to(base.tensor(), d);
    require_compute_dtype(x, "pow");
    double e = s.to_double();
    if (s.is_integral_value() && std::fabs(e) <= 64) {
      auto n = static_cast<int64_t>(e);
      if (is_int(d)) {
        if (n < 0)
          throw DTypeError("pow: integers to negative integer powers are not allowed (" +
                           x.describe() + " ** " + s.to_string() + ")");
        return pow_uint(x, static_cast<uint64_t>(n));
      }
      // x^0, x^1, x^2 and x^-1 are at most one correctly rounded operation (x^2
      // of an f32 / f16 / bf16 is exact in f32 before rounding), so the compute
      // dtype gives the value f64 would round to; longer chains stay in f64.
      Tensor xp = to(x, n >= -1 && n <= 2 ? compute_dtype(d) : precise_dtype(d));
      Tensor r = pow_uint(xp, static_cast<uint64_t>(n < 0 ? -n : n));
      return to(n < 0 ? r.recip() : r, d);
    }
    if (is_float(d) && e == 0.5) return sqrt(x);
    if (is_float(d) && e == -0.5) return rsqrt(x);
  }
  auto [x, y] = promote2(base, exponent, "pow", d);
  if (is_int(d)) return int_pow_tensor(x, y);
  return float_pow_general(x, y);
}

Tensor float_power(const TensorOrScalar& base, const TensorOrScalar& exponent) {
  Graph& g = common_graph({base, exponent}, "float_power");
  auto up = [&](const TensorOrScalar& v) -> TensorOrScalar {
    if (v.is_tensor()) return to(v.tensor(), DType::F64);
    return as_tensor(v, DType::F64, g);
  };
  return pow(up(base), up(exponent));
}

Tensor neg(const Tensor& x) {
  require_compute_dtype(x, "neg");
  require_not_bool(x.dtype(), "neg", x.describe() + " (use logical_not)");
  return -x;
}

Tensor abs(const Tensor& x) {
  require_compute_dtype(x, "abs");
  if (x.dtype() == DType::Bool) return x;
  if (!is_float(x.dtype())) return abs_raw(x);
  // x * sign(x) is |x| except for -0.0 (-> -0.0); adding +0.0 turns that into +0.0
  // and leaves every other value unchanged.
  return abs_raw(x) + 0.0;
}

Tensor sign(const Tensor& x) {
  require_compute_dtype(x, "sign");
  if (x.dtype() == DType::Bool) return x;
  return sign_raw(x);
}

Tensor square(const Tensor& x) {
  require_compute_dtype(x, "square");
  Tensor y = x.dtype() == DType::Bool ? to(x, kDefaultInt) : x;
  return y * y;
}

Tensor reciprocal(const Tensor& x) {
  require_compute_dtype(x, "reciprocal");
  return to(x, to_float_dtype(x.dtype())).recip();
}

Tensor lerp(const Tensor& start, const Tensor& end, const TensorOrScalar& weight) {
  if (start.dtype() != end.dtype())
    throw DTypeError("lerp: start and end must have the same dtype, got " + start.describe() +
                     " and " + end.describe());
  require_float_dtype(start, "lerp");
  DType out = start.dtype();
  DType cd = compute_dtype(out);
  Promoted p = promote({start, end, weight}, "lerp", cd);
  const Tensor &s = p.tensors[0], &e = p.tensors[1], &w = p.tensors[2];
  Tensor diff = e - s;
  Tensor low = s + w * diff;
  Tensor high = e - diff * (1.0 - w);
  return to(where_same(w.lt(cst(w, 0.5)), low, high), out);
}

Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  return add(x, mul(t1, t2), value);
}

Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  return add(x, div(t1, t2), value);
}

// ==== exponentials, logarithms, roots ===========================================

Tensor exp(const Tensor& x) {
  return float_unary(x, "exp", false, exp_raw);
}
Tensor exp2(const Tensor& x) {
  return float_unary(x, "exp2", false, [](const Tensor& t) { return t.exp2(); });
}
Tensor expm1(const Tensor& x) {
  return float_unary(x, "expm1", true, expm1_raw);
}
Tensor log(const Tensor& x) {
  return float_unary(x, "log", false, log_raw);
}
Tensor log2(const Tensor& x) {
  return float_unary(x, "log2", false, [](const Tensor& t) { return t.log2(); });
}
Tensor log10(const Tensor& x) {
  return float_unary(x, "log10", false, [](const Tensor& t) {
    return t.log2() * (std::numbers::ln2 / std::numbers::ln10);
  });
}
Tensor log1p(const Tensor& x) {
  return float_unary(x, "log1p", true, log1p_raw);
}
Tensor sqrt(const Tensor& x) {
  return float_unary(x, "sqrt", false, [](const Tensor& t) { return t.sqrt(); });
}
Tensor rsqrt(const Tensor& x) {
  return float_unary(x, "rsqrt", false, [](const Tensor& t) { return t.sqrt().recip(); });
}

// ==== trigonometric and hyperbolic ===============================================

Tensor sin(const Tensor& x) {
  return float_unary(x, "sin", false, sin_raw);
}
Tensor cos(const Tensor& x) {
  // Stays f64: in f32, 1 - 2 sin^2(t / 2) is off by a few ulp of 1 (sin(t / 2)'s
  // rounding, times 4 sin), i.e. many ulp of cos wherever |cos| is small.
  return float_unary(x, "cos", true, cos_raw);
}
Tensor tan(const Tensor& x) {
  return float_unary(x, "tan", true,
                     [](const Tensor& t) { return sin_raw(t) * cos_raw(t).recip(); });
}
Tensor tanh(const Tensor& x) {
  return float_unary(x, "tanh", true, tanh_raw);
}
Tensor sinh(const Tensor& x) {
  return float_unary(x, "sinh", true,
                     [](const Tensor& t) { return (expm1_raw(t) - expm1_raw(-t)) * 0.5; });
}
Tensor cosh(const Tensor& x) {
  return float_unary(x, "cosh", false, [](const Tensor& t) {
    // f32: the halving goes into the exponent, so e^t / 2 stays finite up to cosh's own overflow.
    if (t.dtype() == DType::F32) return exp_f32(t, -1.0) + exp_f32(-t, -1.0);
    return (exp_raw(t) + exp_raw(-t)) * 0.5;
  });
}
Tensor sigmoid(const Tensor& x) {
  return float_unary(x, "sigmoid", false, sigmoid_raw);
}
Tensor erf(const Tensor& x) {
  // f64 keeps its own formula; every other input computes in f32 (see erf_f32).
  if (x.dtype() == DType::F64) return float_unary(x, "erf", true, erf_raw);
  return float_unary(x, "erf", false, erf_f32);
}
Tensor erfc(const Tensor& x) {
  return float_unary(x, "erfc", true, [](const Tensor& t) {
    Tensor e = erfc_pos(abs_raw(t));
    return where_same(t.lt(cst(t, 0.0)), 2.0 - e, e);
  });
}

// ==== rounding ========================================================================

Tensor floor(const Tensor& x) {
  return rounding_op(x, "floor", floor_float);
}
Tensor ceil(const Tensor& x) {
  return rounding_op(x, "ceil", ceil_float);
}
Tensor trunc(const Tensor& x) {
  return rounding_op(x, "trunc", trunc_float);
}
Tensor frac(const Tensor& x) {
  require_float_dtype(x, "frac");
  return rounding_op(x, "frac", [](const Tensor& t) { return t - trunc_float(t); });
}
Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return rounding_op(x, "round", round_float);
  require_float_dtype(x, "round");
  double p = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  // As torch: decimals > 0 scales up by 10^d, decimals < 0 divides by 10^-d.
  return rounding_op(x, "round", [&](const Tensor& t) {
    Tensor pt = cst(t, p);
    if (decimals > 0) return true_div_raw(round_float(t * pt), pt);
    return round_float(true_div_raw(t, pt)) * pt;
  });
}

// ==== min / max / clamp / select ==========================================================

Tensor maximum(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "maximum");
  return max_raw(x, y);
}

Tensor minimum(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "minimum");
  return min_raw(x, y);
}

namespace {
// fmax / fmin: the NaN-propagating result `m`, except that a nan operand yields the other one.
Tensor nan_ignoring(const Tensor& x, const Tensor& y, const Tensor& m) {
  if (!is_float(x.dtype())) return m;
  Tensor r = where_same(b_not(not_nan(x)), y, m);
  return where_same(b_not(not_nan(y)), x, r);
}
}  // namespace

Tensor fmax(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "fmax");
  return nan_ignoring(x, y, max_raw(x, y));
}

Tensor fmin(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "fmin");
  return nan_ignoring(x, y, min_raw(x, y));
}

Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& min,
             const std::optional<TensorOrScalar>& max) {
  if (!min && !max) throw Error("clamp: at least one of min and max must be given");
  std::vector<TensorOrScalar> ops{x};
  if (min) ops.push_back(*min);
  if (max) ops.push_back(*max);
  DType d = result_type(ops);
  if (d == DType::Bool) throw DTypeError("clamp: not defined for bool tensors: " + x.describe());
  Tensor r = to(x, d);
  auto scalar_ok = [](const std::optional<TensorOrScalar>& b) {
    return !b || (b->is_scalar() && !std::isnan(b->scalar().to_double()));
  };
  if (scalar_ok(min) && scalar_ok(max)) {
    // Scalar bounds: a select per bound (exact, nan in x stays nan).
    auto val = [&](const std::optional<TensorOrScalar>& b) -> std::optional<double> {
      if (!b) return std::nullopt;
      return b->scalar().to_double();
    };
    if (is_int(d)) {
      // Keep integer bounds exact (beyond 2^53).
      if (min) r = max_raw(r, as_tensor(*min, d, *x.graph()).expand(r.shape()));
      if (max) r = min_raw(r, as_tensor(*max, d, *x.graph()).expand(r.shape()));
      return r;
    }
    return clamp_scalar(r, val(min), val(max));
  }
  if (min) r = maximum(r, *min);
  if (max) r = minimum(to(r, d), *max);
  return to(r, d);
}

Tensor clamp_min(const Tensor& x, const TensorOrScalar& min) {
  return clamp(x, min, std::nullopt);
}

Tensor clamp_max(const Tensor& x, const TensorOrScalar& max) {
  return clamp(x, std::nullopt, max);
}

Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b) {
  if (cond.dtype() != DType::Bool)
    throw DTypeError("where: the condition must be a bool tensor, got " + cond.describe());
  Graph& g = common_graph({cond, a, b}, "where");
  DType d = result_type(a, b);
  Tensor x = as_tensor(a, d, g), y = as_tensor(b, d, g);
  return where_same(cond, x, y);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  if (mask.dtype() != DType::Bool)
    throw DTypeError("masked_fill: the mask must be a bool tensor, got " + mask.describe());
  if (value.is_tensor() && value.tensor().rank() != 0)
    throw ShapeError("masked_fill: the value must be a scalar or a rank-0 tensor, got " +
                     value.describe());
  std::vector<Expr> shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  if (shape.size() != x.rank())
    throw ShapeError("masked_fill: mask " + mask.describe() + " does not broadcast to " +
                     x.describe());
  Tensor v = as_tensor(value, x.dtype(), *x.graph());
  return select(mask.expand(x.shape()), v.expand(x.shape()), x.expand(x.shape()));
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  require_compute_dtype(x, "nan_to_num");
  if (!is_float(x.dtype())) return x;
  double max = 0;
  switch (x.dtype()) {
    case DType::F16:
      max = 65504.0;
      break;
    case DType::BF16:
      max = 3.3895313892515355e38;
      break;
    case DType::F64:
      max = std::numeric_limits<double>::max();
      break;
    default:
      max = std::numeric_limits<float>::max();
  }
  Tensor r = where_same(b_not(not_nan(x)), cst(x, nan), x);
  r = where_same(isposinf(x), cst(x, posinf.value_or(max)), r);
  r = where_same(isneginf(x), cst(x, neginf.value_or(-max)), r);
  return r;
}

// ==== comparisons and classification =======================================================

Tensor lt(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "lt");
  return x.lt(y);
}
Tensor gt(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "gt");
  return y.lt(x);
}
Tensor le(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "le");
  return le_raw(x, y);
}
Tensor ge(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "ge");
  return le_raw(y, x);
}
Tensor eq(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "eq");
  return eq_raw(x, y);
}
Tensor ne(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = promote2(a, b, "ne");
  return b_not(eq_raw(x, y));
}

namespace {
Tensor all_false(const Tensor& x) {
  return scalar_tensor(*x.graph(), Scalar(false), DType::Bool).expand(x.shape());
}
}  // namespace

Tensor isnan(const Tensor& x) {
  require_compute_dtype(x, "isnan");
  if (!is_float(x.dtype())) return all_false(x);
  return b_not(not_nan(x));
}
Tensor isposinf(const Tensor& x) {
  require_compute_dtype(x, "isposinf");
  if (!is_float(x.dtype())) return all_false(x);
  return b_and(b_not(x.lt(cst(x, kInf))), cst(x, -kInf).lt(x));
}
Tensor isneginf(const Tensor& x) {
  require_compute_dtype(x, "isneginf");
  if (!is_float(x.dtype())) return all_false(x);
  return b_and(b_not(cst(x, -kInf).lt(x)), x.lt(cst(x, kInf)));
}
Tensor isinf(const Tensor& x) {
  require_compute_dtype(x, "isinf");
  if (!is_float(x.dtype())) return all_false(x);
  return b_or(isposinf(x), isneginf(x));
}
Tensor isfinite(const Tensor& x) {
  require_compute_dtype(x, "isfinite");
  if (!is_float(x.dtype())) return b_not(all_false(x));
  return in_open_range(x, kInf);
}
Tensor signbit(const Tensor& x) {
  require_compute_dtype(x, "signbit");
  if (!is_float(x.dtype())) {
    if (x.dtype() == DType::Bool || x.dtype() == DType::U8) return all_false(x);
    return x.lt(cst(x, 0.0));
  }
  // x < 0, or x is a zero whose reciprocal is -inf (-0.0).
  Tensor zero = cst(x, 0.0);
  Tensor is_zero = eq_raw(x, zero);
  Tensor neg_zero = b_and(is_zero, x.recip().lt(zero));
  return b_or(x.lt(zero), neg_zero);
}

// ==== logic ===================================================================================

namespace {
std::pair<Tensor, Tensor> as_bools(const TensorOrScalar& a, const TensorOrScalar& b,
                                   const char* op) {
  Graph& g = common_graph({a, b}, op);
  auto conv = [&](const TensorOrScalar& v) {
    if (v.is_tensor()) {
      require_compute_dtype(v.tensor(), op);
      return to(v.tensor(), DType::Bool);
    }
    return scalar_tensor(g, Scalar(v.scalar().to_double() != 0.0), DType::Bool);
  };
  Tensor x = conv(a), y = conv(b);
  std::vector<Expr> shape = broadcast_shapes(x.shape(), y.shape(), op);
  return {x.expand(shape), y.expand(shape)};
}

void require_bool_operands(const TensorOrScalar& a, const TensorOrScalar& b, const char* op) {
  for (const TensorOrScalar* v : {&a, &b}) {
    bool ok = v->is_tensor() ? v->tensor().dtype() == DType::Bool : v->scalar().is_bool();
    if (!ok)
      throw DTypeError(std::string(op) +
                       ": luminal supports bitwise ops on bool tensors only, got " + v->describe());
  }
}
}  // namespace

Tensor logical_and(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = as_bools(a, b, "logical_and");
  return b_and(x, y);
}
Tensor logical_or(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = as_bools(a, b, "logical_or");
  return b_or(x, y);
}
Tensor logical_xor(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto [x, y] = as_bools(a, b, "logical_xor");
  return b_xor(x, y);
}
Tensor logical_not(const Tensor& x) {
  require_compute_dtype(x, "logical_not");
  return b_not(to(x, DType::Bool));
}
Tensor bitwise_and(const TensorOrScalar& a, const TensorOrScalar& b) {
  require_bool_operands(a, b, "bitwise_and");
  return logical_and(a, b);
}
Tensor bitwise_or(const TensorOrScalar& a, const TensorOrScalar& b) {
  require_bool_operands(a, b, "bitwise_or");
  return logical_or(a, b);
}
Tensor bitwise_xor(const TensorOrScalar& a, const TensorOrScalar& b) {
  require_bool_operands(a, b, "bitwise_xor");
  return logical_xor(a, b);
}
Tensor bitwise_not(const Tensor& x) {
  if (x.dtype() != DType::Bool)
    throw DTypeError("bitwise_not: luminal supports bool tensors only, got " + x.describe());
  return b_not(x);
}

// ==== activations ================================================================================

namespace {
// An activation on a float tensor: computed in `cd` of the input dtype, rounded once.
template <typename F>
Tensor activation(const Tensor& x, const char* op, bool precise, F f) {
  require_float_dtype(x, op);
  return float_unary(x, op, precise, f);
}
}  // namespace

Tensor relu(const Tensor& x) {
  require_compute_dtype(x, "relu");
  require_not_bool(x.dtype(), "relu", x.describe());
  return where_scalar(b_not(x.lt(cst(x, 0.0))), x, 0.0);
}
Tensor relu6(const Tensor& x) {
  return hardtanh(x, 0.0, 6.0);
}
Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "none")
    return activation(x, "gelu", x.dtype() == DType::F64, [](const Tensor& t) {
      if (t.dtype() == DType::F32)
        return t * 0.5 * one_plus_erf_f32(t * (std::numbers::sqrt2 * 0.5));
      return t * 0.5 * (erf_raw(t * std::numbers::sqrt2 * 0.5) + 1.0);
    });
  if (approximate == "tanh")
    return activation(x, "gelu", x.dtype() == DType::F64, [](const Tensor& t) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      Tensor inner = (t + t * t * t * 0.044715) * k;
      // f32: (1 + tanh(u)) / 2 = sigmoid(2u) = 1 / (1 + e^-2u), with no
      // cancellation for u << 0 and no select (tanh_raw's expm1 has one).
      // e^-2u as a plain exp2 (as silu): off by a relative |2u log2 e| 2^-24,
      // ~1e-6 at x = -10 where the result is ~1e-22; exp_f32's i32 Casts would
      // keep the kernel loop scalar.
      if (t.dtype() == DType::F32)
        return t * ((inner * (-2.0 * std::numbers::log2e)).exp2() + 1.0).recip();
      return t * 0.5 * (tanh_raw(inner) + 1.0);
    });
  throw Error("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}
Tensor silu(const Tensor& x) {
  return activation(x, "silu", false, [](const Tensor& t) {
    // f32: 2^(-t log2 e) without exp_f32's correction. Rounding -t log2 e makes
    // e^-t off by a relative |t| 9e-8, which moves t * sigmoid(t) by at most
    // t^2 e^-t / (1 + e^-t)^2 * 9e-8 < 4e-8 absolute (largest near |t| = 2.4),
    // inside torch's tolerance; the kernel is 1 Exp2 instead of 2 Exp2 + 2 Casts
    // on the models' hottest activation.
    Tensor e = t.dtype() == DType::F32 ? (t * -std::numbers::log2e).exp2() : exp_raw(-t);
    return t * (e + 1.0).recip();
  });
}
Tensor mish(const Tensor& x) {
  return activation(x, "mish", true,
                    [](const Tensor& t) { return t * tanh_raw(log1p_raw(exp_raw(t))); });
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return activation(x, "leaky_relu", false, [&](const Tensor& t) {
    return where_same(cst(t, 0.0).lt(t), t, t * negative_slope);
  });
}
Tensor elu(const Tensor& x, double alpha) {
  return activation(x, "elu", true, [&](const Tensor& t) {
    return where_same(cst(t, 0.0).lt(t), t, expm1_raw(t) * alpha);
  });
}
Tensor selu(const Tensor& x) {
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  return activation(x, "selu", true, [&](const Tensor& t) {
    return where_same(cst(t, 0.0).lt(t), t * scale, expm1_raw(t) * (alpha * scale));
  });
}
Tensor celu(const Tensor& x, double alpha) {
  return activation(x, "celu", true, [&](const Tensor& t) {
    return where_same(cst(t, 0.0).lt(t), t, expm1_raw(t * (1.0 / alpha)) * alpha);
  });
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return activation(x, "softplus", true, [&](const Tensor& t) {
    Tensor bt = t * beta;
    return where_same(cst(t, threshold).lt(bt), t, log1p_raw(exp_raw(bt)) * (1.0 / beta));
  });
}
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  require_float_dtype(x, "hardtanh");
  return clamp_scalar(x, min_val, max_val);
}
Tensor hardsigmoid(const Tensor& x) {
  return activation(x, "hardsigmoid", false, [](const Tensor& t) {
    return true_div_raw(clamp_scalar(t + 3.0, 0.0, 6.0), cst(t, 6.0));
  });
}
Tensor hardswish(const Tensor& x) {
  return activation(x, "hardswish", false, [](const Tensor& t) {
    return true_div_raw(t * clamp_scalar(t + 3.0, 0.0, 6.0), cst(t, 6.0));
  });
}
Tensor logsigmoid(const Tensor& x) {
  return activation(x, "logsigmoid", true, [](const Tensor& t) {
    Tensor min0 = where_scalar(t.lt(cst(t, 0.0)), t, 0.0);
    return min0 - log1p_raw(exp_raw(-abs_raw(t)));
  });
}
Tensor softsign(const Tensor& x) {
  return activation(x, "softsign", false,
                    [](const Tensor& t) { return true_div_raw(t, abs_raw(t) + 1.0); });
}
Tensor tanhshrink(const Tensor& x) {
  return activation(x, "tanhshrink", true, [](const Tensor& t) { return t - tanh_raw(t); });
}
Tensor hardshrink(const Tensor& x, double lambd) {
  return activation(x, "hardshrink", false, [&](const Tensor& t) {
    Tensor inside = b_and(le_raw(cst(t, -lambd), t), le_raw(t, cst(t, lambd)));
    return where_same(inside, cst(t, 0.0), t);
  });
}
Tensor softshrink(const Tensor& x, double lambd) {
  return activation(x, "softshrink", false, [&](const Tensor& t) {
    // torch returns x * 0 inside the band (nan stays nan, zeros keep their sign).
    Tensor below = where_same(t.lt(cst(t, -lambd)), t + lambd, t * 0.0);
    return where_same(cst(t, lambd).lt(t), t - lambd, below);
  });
}
Tensor threshold(const Tensor& x, double threshold, double value) {
  require_compute_dtype(x, "threshold");
  require_not_bool(x.dtype(), "threshold", x.describe());
  return where_same(le_raw(x, cst(x, threshold)), cst(x, value), x);
}
Tensor prelu(const Tensor& x, const Tensor& weight) {
  require_float_dtype(x, "prelu");
  Tensor w = to(weight, x.dtype());
  if (w.rank() == 1 && w.shape()[0].as_const() != 1) {
    if (x.rank() < 2 || !provably_equal(x.shape()[1], w.shape()[0]))
      throw ShapeError("prelu: weight " + weight.describe() +
                       " must have 1 element or one per channel (axis 1) of " + x.describe());
    std::vector<Expr> wshape(x.rank() - 1, Expr(1));
    wshape[0] = w.shape()[0];
    w = w.reshape(wshape);
  }
  std::vector<Expr> shape = broadcast_shapes(x.shape(), w.shape(), "prelu");
  if (shape.size() != x.rank())
    throw ShapeError("prelu: weight " + weight.describe() + " does not fit " + x.describe());
  return where_same(cst(x, 0.0).lt(x), x, x * w);
}
Tensor glu(const Tensor& x, int dim) {
  require_float_dtype(x, "glu");
  Expr n = x.dim(dim);
  auto c = n.as_const();
  if (!c || *c % 2 != 0)
    throw ShapeError("glu: axis " + std::to_string(dim) + " of " + x.describe() +
                     " must have an even length");
  int axis = dim < 0 ? dim + static_cast<int>(x.rank()) : dim;
  Tensor a = x.slice(axis, 0, *c / 2);
  Tensor b = x.slice(axis, *c / 2, *c);
  return mul(a, sigmoid(b));
}

}  // namespace luminal
