#pragma once
// PyTorch type promotion (torch.result_type / torch.promote_types) and the
// Tensor-or-scalar operands every binary frontend op accepts.
//
// Rules (as torch):
//   * Categories are ordered bool < integer < floating.
//   * Operands come in three priority tiers: tensors with at least one dim,
//     rank-0 tensors, and scalars (C++ / Python numbers). The result dtype is
//     decided by the highest tier that holds an operand of the highest
//     category present: within that tier dtypes are combined with
//     promote_types(); if the highest category appears only in a lower tier,
//     that tier decides (a float scalar with an int tensor gives the default
//     float dtype f32; with an f16 tensor it stays f16).
//       i32 tensor + 2.5      -> f32      f16 tensor + 2.5        -> f16
//       bool tensor + 1       -> i64      i32 tensor + 1          -> i32
//       i32 tensor + i64 rank-0 tensor -> i32 (rank-0 is weaker)
//   * promote_types within a category picks the wider type; f16 with bf16 is
//     f32; u8 with i8 would be i16 in torch, which luminal does not have: it
//     gives i32 (the only deviation from torch). Anything with f64 is f64.
//   * Default dtypes: float scalars -> f32 (torch.get_default_dtype()), int
//     scalars -> i64, bool scalars -> bool.
// fp8 and block-quantized dtypes are storage types and never promote: ops
// throw DTypeError for them (convert with to() first).

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

/// bool < integer < floating.
enum class DTypeCategory : uint8_t { Bool = 0, Integer = 1, Floating = 2 };

/// The category of a compute dtype; throws DTypeError for storage types.
DTypeCategory dtype_category(DType dtype);

/// torch.promote_types for two tensor dtypes (see the rules above).
/// Throws DTypeError for storage types.
DType promote_types(DType a, DType b);

/// torch.get_default_dtype() and the default integer dtype.
inline constexpr DType kDefaultFloat = DType::F32;
inline constexpr DType kDefaultInt = DType::I64;

/// The floating dtype an op that needs floats (exp, div, mean...) computes an
/// operand of dtype `d` in, as torch: floats stay, bool/int become f32.
DType to_float_dtype(DType d);

/// The dtype rounding-benign float formulas (log, floor, norms, div...) run in:
/// f16 / bf16 / bool / integers -> f32, f32 and f64 unchanged.
DType compute_dtype(DType d);
/// The dtype formulas whose rounding errors are amplified (tanh, erf, pow,
/// expm1, correctly rounded division...) run in: f64 for every input (rounded
/// once to the result dtype). exp, sigmoid, silu, cosh and the softmax
/// family have f32 formulations accurate to a few ulp and use compute_dtype.
DType precise_dtype(DType d);

/// A number that is not a tensor (C++ / Python bool, int or float). "Weak"
/// for promotion: it only raises the category. Integers are kept exactly.
class Scalar {
public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar(bool v)  // NOLINT(google-explicit-constructor)
      : kind_(Kind::Bool), d_(v ? 1.0 : 0.0), i_(v ? 1 : 0) {}
  template <typename T>
  requires(std::integral<T> && !std::same_as<T, bool>)
      Scalar(T v)  // NOLINT(google-explicit-constructor)
      : kind_(Kind::Int), d_(static_cast<double>(v)), i_(static_cast<int64_t>(v)) {}
  template <typename T>
  requires std::floating_point<T> Scalar(T v)  // NOLINT(google-explicit-constructor)
      : kind_(Kind::Float), d_(static_cast<double>(v)), i_(0) {}

  Kind kind() const { return kind_; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  /// The value as a double (exact for bools, ints up to 2^53 and floats).
  double to_double() const { return d_; }
  /// The value as an int64 (exact for bool/int; floats truncate toward zero).
  int64_t to_int() const;
  /// The dtype torch gives the number alone: bool, i64 or f32.
  DType default_dtype() const;
  DTypeCategory category() const;
  /// True if a float scalar holds an integral value (2.0) or the scalar is an int/bool.
  bool is_integral_value() const;
  /// "2.5", "3", "True"
  std::string to_string() const;

private:
  Kind kind_;
  double d_;
  int64_t i_;
};

/// An operand of a binary op: a Tensor or a Scalar. Implicit from Tensor,
/// Scalar, bool, integers and floating-point numbers, so `add(x, 2.5)`,
/// `where(c, x, 0)` and `pow(2, x)` all work.
class TensorOrScalar {
public:
  TensorOrScalar(const Tensor& t) : v_(t) {}  // NOLINT(google-explicit-constructor)
  TensorOrScalar(Scalar s) : v_(s) {}         // NOLINT(google-explicit-constructor)
  template <typename T>
  requires(std::integral<T> || std::floating_point<T>) TensorOrScalar(T v)
      : v_(Scalar(v)) {}  // NOLINT(google-explicit-constructor)

  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_scalar() const { return !is_tensor(); }
  /// Throws luminal::Error if this is a scalar.
  const Tensor& tensor() const;
  /// Throws luminal::Error if this is a tensor.
  const Scalar& scalar() const;
  /// The tensor's graph, or nullptr for a scalar.
  Graph* graph() const;
  /// The tensor's shape, or [] for a scalar.
  std::vector<Expr> shape() const;
  /// "f32[2, 3]" or "scalar 2.5"
  std::string describe() const;

private:
  std::variant<Tensor, Scalar> v_;
};

/// Throw DTypeError naming `op` and x unless x has a compute dtype (fp8 and
/// block-quantized storage must be converted with to() first).
void require_compute_dtype(const Tensor& x, const char* op);
/// Throw DTypeError naming `op` and x unless x has a float compute dtype.
void require_float_dtype(const Tensor& x, const char* op);

/// torch.result_type over any number of operands (at least one).
DType result_type(const std::vector<TensorOrScalar>& operands);
DType result_type(const TensorOrScalar& a, const TensorOrScalar& b);

/// Tensor.to(dtype): a Cast node, or `x` itself when the dtype already matches.
/// float -> int truncates toward zero, -> bool is x != 0 (NaN -> true).
Tensor to(const Tensor& x, DType dtype);

/// A rank-0 constant holding `s` as `dtype` (exact for integers).
Tensor scalar_tensor(Graph& graph, const Scalar& s, DType dtype);

/// A rank-0 tensor of `dtype` holding the (possibly symbolic) integer `value`:
/// a Constant when `value` is constant, else a one-element Iota (then cast).
/// Used for element counts of symbolic axes (mean, var).
Tensor expr_tensor(Graph& graph, const Expr& value, DType dtype);

/// `v` as a tensor of `dtype` (a scalar becomes a rank-0 constant in `graph`).
Tensor as_tensor(const TensorOrScalar& v, DType dtype, Graph& graph);

/// The graph of the first tensor among the operands; throws luminal::Error
/// naming `op` if every operand is a scalar, or if tensors come from different graphs.
Graph& common_graph(const std::vector<TensorOrScalar>& operands, const char* op);

/// Operands converted to one dtype and broadcast to their common shape.
struct Promoted {
  std::vector<Tensor> tensors;  // in operand order, all of `dtype` and `shape`
  DType dtype;
  std::vector<Expr> shape;
};

/// Promote operands as torch does for element-wise ops: dtype =
/// result_type(operands) (or `compute` when given), shapes broadcast
/// (ShapeError naming `op` and the shapes otherwise).
Promoted promote(const std::vector<TensorOrScalar>& operands, const char* op,
                 std::optional<DType> compute = std::nullopt);

/// Two-operand shorthand of promote().
std::pair<Tensor, Tensor> promote2(const TensorOrScalar& a, const TensorOrScalar& b, const char* op,
                                   std::optional<DType> compute = std::nullopt);

}  // namespace luminal
