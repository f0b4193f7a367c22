#pragma once
// Element-wise math, comparisons, logic and activations with PyTorch semantics
// (names, argument order, defaults, broadcasting, dtype promotion, and the
// values at inf / -inf / nan / -0.0 edges).
//
// Dtypes. Binary ops promote their operands with result_type() (see
// promotion.hpp) and broadcast as torch. Float functions (exp, sin, sigmoid...)
// given bool / integer tensors compute in f32, as torch. Ops torch defines on
// integers (neg, abs, sign, add, sub, mul, comparisons, maximum / minimum,
// clamp, remainder, fmod, floor_divide, pow with integer exponents, where)
// accept them and keep integer semantics (wrapping arithmetic).
//
// Precision. The primitive layer rounds every node to its dtype, so composite
// formulas whose rounding errors are amplified (exp(x) = exp2(x * log2 e),
// sigmoid, tanh, erf, pow, expm1, log1p...) are evaluated in f64 for f16 /
// bf16 / f32 inputs and rounded once to the result dtype; rounding-benign
// formulas (log, div, floor...) compute in f32 for f16 / bf16 inputs and in
// the input dtype otherwise. Backends recognise these Cast(f64) ... Cast
// chains and may substitute native kernels of equal accuracy.
//
// Exactness. `where` selects with a Scatter (never c * a + (1 - c) * b, which
// turns the unselected inf into nan); maximum / minimum propagate nan via
// MaxReduce over a two-slot stack; comparisons are false for nan (ne is true).

#include <optional>
#include <string>

#include "luminal/core/tensor.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

// ---- arithmetic -------------------------------------------------------------

/// torch.add(a, b, alpha=1): a + alpha * b. Bool + bool is logical or (torch).
Tensor add(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha = 1);
/// torch.sub(a, b, alpha=1): a - alpha * b. Throws DTypeError for bool operands.
Tensor sub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha = 1);
/// torch.rsub(a, b): b - a.
Tensor rsub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha = 1);
/// torch.mul. Bool * bool is logical and.
Tensor mul(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.div(a, b, rounding_mode): nullopt = true division (integers -> f32);
/// "trunc" rounds toward zero, "floor" toward -inf (integer results for
/// integer operands). Throws Error for another rounding_mode.
Tensor div(const TensorOrScalar& a, const TensorOrScalar& b,
           const std::optional<std::string>& rounding_mode = std::nullopt);
Tensor true_divide(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.floor_divide: floor(a / b) (torch's div_floor: exact for integers,
/// fmod-based for floats; integer division is exact for |a| < 2^52).
Tensor floor_divide(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.fmod: remainder with the sign of the dividend (C fmod / truncating %).
Tensor fmod(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.remainder: Python-style modulus with the sign of the divisor.
Tensor remainder(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.pow. Integer-valued scalar exponents (|n| <= 64) multiply exactly
/// (squaring), 0.5 -> sqrt, -0.5 -> rsqrt; general exponents use
/// exp2(y * log2|x|) in f64 with C pow's rules for signs, zeros, infinities and
/// nan (negative base with a non-integer exponent -> nan; x^0 = 1; 1^y = 1).
/// Integer tensors to integer tensor exponents: exact wrapping integer power
/// (negative exponents: 1 for base 1, +-1 for base -1, else 0, as torch).
/// Integer base to a negative integer scalar exponent throws DTypeError (torch).
/// bool ** bool stays bool (x where the exponent is true, true elsewhere).
Tensor pow(const TensorOrScalar& base, const TensorOrScalar& exponent);
/// torch.float_power: pow computed and returned in f64.
Tensor float_power(const TensorOrScalar& base, const TensorOrScalar& exponent);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
/// -1, 0 or 1 (nan -> 0 as torch.sign).
Tensor sign(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
/// torch.lerp: start + weight * (end - start), with torch's two-sided formula
/// (weight >= 0.5 computes from `end`) so that lerp(a, b, 1) == b exactly.
Tensor lerp(const Tensor& start, const Tensor& end, const TensorOrScalar& weight);
/// torch.addcmul / addcdiv: x + value * t1 * t2 and x + value * t1 / t2.
Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);

// ---- exponentials, logarithms, roots ----------------------------------------

Tensor exp(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);

// ---- trigonometric and hyperbolic --------------------------------------------

Tensor sin(const Tensor& x);
/// cos(x) = 1 - 2 sin^2(x / 2) in f64 (absolute error ~1e-16: also for huge |x|).
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
/// Error function: a Taylor series for |x| < 0.5 and 1 - erfc beyond, where
/// erfc(a) = t * exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P a degree-18 fit;
/// evaluated in f64, relative error below 1e-12 for every input (far under f32
/// / f16 rounding; f64 results are not ulp-accurate).
Tensor erf(const Tensor& x);
/// 1 - erf(x), accurate in the tail (x up to ~26 in f64 before underflow).
Tensor erfc(const Tensor& x);

// ---- rounding ------------------------------------------------------------------

Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
/// torch.round: half to even. With `decimals`, rounds x * 10^decimals and
/// divides back, as torch.
Tensor round(const Tensor& x, int64_t decimals = 0);
Tensor trunc(const Tensor& x);
/// x - trunc(x).
Tensor frac(const Tensor& x);

// ---- min / max / clamp / select ---------------------------------------------------

/// Element-wise max / min, propagating nan (torch.maximum / torch.minimum).
Tensor maximum(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor minimum(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.fmax / fmin: like maximum / minimum but a nan loses to a number.
Tensor fmax(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor fmin(const TensorOrScalar& a, const TensorOrScalar& b);
/// torch.clamp: min(max(x, lo), hi); either bound may be absent (not both);
/// nan propagates; lo > hi gives hi. The dtype is result_type(x, lo, hi).
Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& min,
             const std::optional<TensorOrScalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const TensorOrScalar& min);
Tensor clamp_max(const Tensor& x, const TensorOrScalar& max);
/// torch.where(cond, a, b): cond must be bool (DTypeError otherwise); a and b
/// promote and all three broadcast. Exact: the unselected value never leaks.
Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b);
/// Tensor.masked_fill(mask, value): where(mask, value, x) in x's dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value);
/// torch.nan_to_num: nan -> `nan`, inf -> posinf (default: dtype max),
/// -inf -> neginf (default: dtype lowest). Integers pass through.
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

// ---- comparisons and classification (results are bool) ------------------------------

Tensor lt(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor le(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor gt(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor ge(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor eq(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor ne(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
Tensor isfinite(const Tensor& x);
/// True where the sign bit is set (including -0.0 and -inf; false for nan is not
/// guaranteed: luminal has no bit access, nan gives false).
Tensor signbit(const Tensor& x);

// ---- logic (any dtype; nonzero and nan count as true) ----------------------------

Tensor logical_and(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_or(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_xor(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_not(const Tensor& x);
/// Bitwise ops on bool tensors only (integers need bit access luminal lacks:
/// DTypeError).
Tensor bitwise_and(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_or(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_xor(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_not(const Tensor& x);

// ---- activations (torch.nn.functional) ------------------------------------------------

Tensor relu(const Tensor& x);
Tensor relu6(const Tensor& x);
/// approximate: "none" (exact, erf) or "tanh"; anything else throws Error.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x);
Tensor celu(const Tensor& x, double alpha = 1.0);
/// log(1 + exp(beta * x)) / beta, and x where beta * x > threshold (torch).
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
/// Float tensors only (as relu6, which is hardtanh(x, 0, 6)).
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor tanhshrink(const Tensor& x);
Tensor hardshrink(const Tensor& x, double lambd = 0.5);
Tensor softshrink(const Tensor& x, double lambd = 0.5);
/// F.threshold: x where x > threshold, else `value`.
Tensor threshold(const Tensor& x, double threshold, double value);
/// F.prelu: max(0, x) + weight * min(0, x), weight of 1 or C elements
/// (channel axis 1 as torch).
Tensor prelu(const Tensor& x, const Tensor& weight);
/// F.glu: a * sigmoid(b) where a, b are the halves of `dim` (even size).
Tensor glu(const Tensor& x, int dim = -1);

}  // namespace luminal
