#pragma once
// Scalar: a constant of one dtype (the payload of Constant nodes and the value
// of "uniform" e-classes, whose elements all equal one scalar), and constant
// folding with exactly the reference interpreter's semantics.
//
// Folding follows the interpreter bit for bit: floats are computed in double
// and rounded once to the dtype, integers wrap, bool Add/Mul are or/and, Cast
// truncates and saturates. Anything the interpreter would report as an error
// (integer Mod by zero) is not folded, so the error is kept.

#include <cstdint>
#include <optional>
#include <string>

#include "luminal/core/dtype.hpp"
#include "luminal/core/op.hpp"

namespace luminal::egraph {

struct Scalar {
  DType dtype = DType::F32;
  double value = 0.0;     // float dtypes; also 0/1 for bool and the integer value as a double
  int64_t int_value = 0;  // integer and bool dtypes (exact)

  /// As Graph::constant: round floats to the dtype, saturate to integer ranges.
  static Scalar from_double(DType dtype, double value);
  /// As Graph::constant_int: exact for integers (wrapped to the dtype).
  static Scalar from_int(DType dtype, int64_t value);

  bool is_float() const;
  /// True if every bit of the value equals `v` converted to this dtype.
  bool equals(double v) const;
  /// x * this == x for every x of the dtype (1, or true).
  bool is_mul_identity() const;
  /// x + this == x for every x of the dtype: -0.0 for floats (+0.0 is NOT:
  /// -0.0 + +0.0 = +0.0), 0 for integers, false for bool.
  bool is_add_identity() const;
  /// 0 (or false) for integer and bool dtypes; never true for floats.
  bool is_int_zero() const;

  /// Bitwise equality (NaN equals itself, -0.0 differs from +0.0).
  bool operator==(const Scalar& other) const;
  size_t hash() const;
  /// "1.5:f32", "-3:i32", "true:bool"
  std::string to_string() const;
};

/// Fold a unary op (Exp2, Log2, Sin, Sqrt, Recip) on a float scalar.
std::optional<Scalar> fold_unary(OpKind kind, const Scalar& x);
/// Fold a binary op (Add, Mul, Mod, LessThan); nullopt when the interpreter would
/// raise an error (integer Mod by zero) or the dtypes differ.
std::optional<Scalar> fold_binary(OpKind kind, const Scalar& a, const Scalar& b);
/// Cast a scalar to `dtype` with the HLIR Cast semantics.
Scalar fold_cast(const Scalar& x, DType dtype);

/// True if converting every value of `from` to `to` and back gives the value
/// back bit for bit (f16 -> f32, i8 -> i32, bool -> anything, ...).
bool cast_is_lossless(DType from, DType to);

}  // namespace luminal::egraph
