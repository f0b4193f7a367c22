#pragma once
// Symbolic integer expressions: the dimensions of tensors (`4096`, `s`, `p + s`)
// and the index math of views (`(z / 64) * 4096 + z % 64`).
//
// An Expr is an immutable, hash-consed value: building the same expression twice
// yields the same node, so `a == b` is structural equality in O(1) and Expr can
// be used as a map key. Nodes live in a process-wide, thread-safe intern table
// and are never freed (expressions are small and heavily shared).
//
// Arithmetic follows C on int64_t: `/` truncates toward zero and `%` takes the
// sign of the dividend, so evaluation and the printed C source always agree.
// `ceil_div(a, b)` is defined as `(a + b - 1) / b` (meant for a >= 0, b > 0).
// Comparisons yield 0 or 1. Subtraction is represented as `a + (-1 * b)`.
//
// Variables stand for dimensions and indexes: unless a Ranges entry says
// otherwise a variable is assumed to be >= 0 (and unbounded above). The
// simplifier relies on that assumption; evaluation does not.

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace luminal {

enum class ExprKind : uint8_t {
  Const,
  Var,
  Add,
  Mul,
  Div,
  CeilDiv,
  Mod,
  Min,
  Max,
  Lt,
  Le,
  Eq,
  Ne,
};

struct ExprNode;  // defined in src/shape/expr.cpp

/// Values of variables, for evaluation. Ordered for deterministic iteration.
using DimMap = std::map<std::string, int64_t, std::less<>>;

/// Inclusive bounds of a variable or an expression.
struct Range {
  int64_t lo = 0;
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool operator==(const Range&) const = default;
};
/// Declared ranges of variables; variables not listed are in [0, +inf).
using Ranges = std::map<std::string, Range, std::less<>>;
/// Symbolic strict upper bounds of variables: `{"_a1", s}` says `_a1 < s` wherever the
/// expression is evaluated (a loop index over a dynamic extent). Numeric ranges bound
/// each variable alone and cannot relate two of them; these can:
/// `(64 * _a1 + _i) / (64 * s)` is 0 when `_a1 < s` and `_i < 64`.
class Expr;
using UpperBounds = std::map<std::string, Expr, std::less<>>;

class Expr {
public:
  /// The constant 0.
  Expr();
  /// A constant (implicit so that `{64, "s"}` builds a shape).
  Expr(int64_t value);  // NOLINT(google-explicit-constructor)
  Expr(int value);      // NOLINT(google-explicit-constructor)
  /// A variable by name (implicit so that `{"s", 64}` builds a shape).
  Expr(const char* name);         // NOLINT(google-explicit-constructor)
  Expr(const std::string& name);  // NOLINT(google-explicit-constructor)

  static Expr constant(int64_t value);
  /// A named variable. Names must be C identifiers; a leading underscore is
  /// reserved for luminal's own index variables. Throws luminal::Error otherwise.
  static Expr var(std::string_view name);
  /// The reserved index variable (`_z`) used by view axis expressions and Iota.
  static Expr index_var();
  /// A variable with a reserved name (must start with '_'), for luminal's own
  /// temporaries (view splits, loop indexes). Throws luminal::Error otherwise.
  static Expr internal_var(std::string_view name);
  /// Build a node of any kind without simplification (only arity is checked).
  /// Every operator kind takes exactly two children; longer sums and products are
  /// left-nested chains (`(a + b) + c`).
  static Expr make(ExprKind kind, std::vector<Expr> children);

  ExprKind kind() const;
  bool is_const() const { return kind() == ExprKind::Const; }
  bool is_var() const { return kind() == ExprKind::Var; }
  /// The value of a constant; throws luminal::Error if not constant.
  int64_t value() const;
  std::optional<int64_t> as_const() const;
  /// The name of a variable; throws luminal::Error if not a variable.
  const std::string& name() const;
  const std::vector<Expr>& children() const;

  /// Evaluate with the given variable values. Throws LookupError naming a
  /// missing variable and Error on division or modulo by zero. Arithmetic wraps.
  int64_t eval(const DimMap& vars) const;
  /// Replace variables by expressions (not simplified).
  Expr substitute(const std::map<std::string, Expr, std::less<>>& replacements) const;
  Expr substitute(std::string_view var, const Expr& replacement) const;
  /// An equivalent, simpler expression (see src/shape/simplify.cpp for the rules).
  /// Equivalent means: equal value for every assignment of the variables within
  /// `ranges` (variables not listed are >= 0).
  Expr simplify(const Ranges& ranges = {}) const;
  /// The same, also using the symbolic upper bounds `below` (variables listed there
  /// must be within them wherever the result is evaluated).
  Expr simplify(const Ranges& ranges, const UpperBounds& below) const;
  /// Names of the variables occurring in the expression, sorted.
  std::set<std::string> variables() const;
  bool depends_on(std::string_view var) const;

  /// C / C++ / CUDA source (int64 arithmetic), fully parenthesised where needed.
  std::string to_c() const;
  /// The same, with `/` and `%` by a power of two of a dividend that is >= 0
  /// for these ranges (variables not listed: >= 0) written as `>>` and `&`:
  /// equal values, and the compiler vectorises them (a signed `/ 2` it does not).
  std::string to_c(const Ranges& ranges) const;
  /// Human-readable form (same as to_c()).
  std::string to_string() const { return to_c(); }

  size_t hash() const;
  /// Structural identity (hash-consed): true iff the expressions are the same tree.
  bool operator==(const Expr& other) const { return node_ == other.node_; }
  bool operator!=(const Expr& other) const { return node_ != other.node_; }
  /// A stable total order (by structure, not by address) for canonical forms.
  static int compare(const Expr& a, const Expr& b);
  bool operator<(const Expr& other) const { return compare(*this, other) < 0; }

  const ExprNode* node() const { return node_; }

private:
  explicit Expr(const ExprNode* node) : node_(node) {}
  const ExprNode* node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr ceil_div(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr lt(const Expr& a, const Expr& b);
Expr le(const Expr& a, const Expr& b);
Expr gt(const Expr& a, const Expr& b);
Expr ge(const Expr& a, const Expr& b);
Expr eq(const Expr& a, const Expr& b);
Expr ne(const Expr& a, const Expr& b);

/// Bounds of an expression over all assignments within `ranges`
/// (interval arithmetic; may be loose, never wrong).
Range bounds(const Expr& e, const Ranges& ranges = {});
/// True if the simplifier can prove `a == b` for all assignments in `ranges`.
bool provably_equal(const Expr& a, const Expr& b, const Ranges& ranges = {});

/// Product of several expressions, simplified (1 for an empty list).
Expr product(const std::vector<Expr>& factors);
/// "[a, b, c]"
std::string to_string(const std::vector<Expr>& shape);

}  // namespace luminal

template <>
struct std::hash<luminal::Expr> {
  size_t operator()(const luminal::Expr& e) const noexcept { return e.hash(); }
};
