#pragma once
// Payloads: the immutable value an e-node carries besides its op and children
// (a View, a DType, an axis, a scalar constant, an input name, a matmul
// description...). A payload is a small variant of atoms plus tuples of
// payloads, so backends can describe their own ops without the core knowing
// them, and every payload is hashable, comparable and printable.
//
// Equality is structural. Doubles (and Scalar values) compare by bit pattern,
// so -0.0 != +0.0 and a NaN equals itself: a payload is a value to be
// reproduced exactly, not a number to be compared arithmetically.
//
// Hashes are structural and do not depend on addresses, so they are stable
// within a build of the library (they may serve as keys of on-disk caches
// together with a version tag).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/egraph/scalar.hpp"
#include "luminal/shape/expr.hpp"
#include "luminal/shape/view.hpp"

namespace luminal::egraph {

class Payload;
using PayloadTuple = std::vector<Payload>;
using Shape = std::vector<Expr>;

class Payload {
public:
  /// The empty payload (ops without parameters).
  Payload() = default;
  explicit Payload(int64_t v) : v_(v) {}
  explicit Payload(int v) : v_(static_cast<int64_t>(v)) {}
  explicit Payload(double v) : v_(v) {}
  explicit Payload(DType v) : v_(v) {}
  explicit Payload(Expr v) : v_(std::move(v)) {}
  explicit Payload(Shape v) : v_(std::move(v)) {}
  explicit Payload(View v) : v_(std::move(v)) {}
  explicit Payload(std::string v) : v_(std::move(v)) {}
  explicit Payload(const char* v) : v_(std::string(v)) {}
  explicit Payload(Scalar v) : v_(v) {}
  explicit Payload(PayloadTuple v) : v_(std::make_shared<const PayloadTuple>(std::move(v))) {}

  bool empty() const { return std::holds_alternative<std::monostate>(v_); }
  template <class T>
  bool is() const {
    if constexpr (std::is_same_v<T, PayloadTuple>)
      return std::holds_alternative<TuplePtr>(v_);
    else
      return std::holds_alternative<T>(v_);
  }
  /// The value as T; throws luminal::Error naming both kinds on a mismatch.
  template <class T>
  const T& as() const {
    if constexpr (std::is_same_v<T, PayloadTuple>) {
      check(is<TuplePtr>(), "tuple");
      return *std::get<TuplePtr>(v_);
    } else {
      check(is<T>(), kind_name_of<T>());
      return std::get<T>(v_);
    }
  }
  /// Element `i` of a tuple payload (throws if not a tuple or out of range).
  const Payload& at(size_t i) const;
  size_t tuple_size() const;

  size_t hash() const;
  bool operator==(const Payload& other) const;
  bool operator!=(const Payload& other) const { return !(*this == other); }
  /// Short human-readable form: `[s, 64] {_z * 64, _z}`, `f32`, `axis`, `(a, 3)`.
  std::string to_string() const;
  /// Name of the held kind ("none", "int", "view", ...).
  const char* kind_name() const;
  /// Rough heap + inline size in bytes (for the e-graph's memory estimate).
  size_t approx_bytes() const;

private:
  using TuplePtr = std::shared_ptr<const PayloadTuple>;
  template <class T>
  static const char* kind_name_of() {
    if constexpr (std::is_same_v<T, int64_t>) return "int";
    if constexpr (std::is_same_v<T, double>) return "float";
    if constexpr (std::is_same_v<T, DType>) return "dtype";
    if constexpr (std::is_same_v<T, Expr>) return "expr";
    if constexpr (std::is_same_v<T, Shape>) return "shape";
    if constexpr (std::is_same_v<T, View>) return "view";
    if constexpr (std::is_same_v<T, std::string>) return "string";
    if constexpr (std::is_same_v<T, Scalar>) return "scalar";
    return "?";
  }
  void check(bool ok, const char* wanted) const;

  std::variant<std::monostate, int64_t, double, DType, Expr, Shape, View, std::string, Scalar,
               TuplePtr>
      v_;
};

}  // namespace luminal::egraph

template <>
struct std::hash<luminal::egraph::Payload> {
  size_t operator()(const luminal::egraph::Payload& p) const noexcept { return p.hash(); }
};
