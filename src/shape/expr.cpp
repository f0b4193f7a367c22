// Expression nodes: hash-consing, construction, evaluation and printing.
// The simplifier, bounds and the other analyses live in simplify.cpp.

#include "luminal/shape/expr.hpp"

#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "luminal/error.hpp"

namespace luminal {

struct ExprNode {
  ExprKind kind;
  int64_t value = 0;  // Const only
  std::string name;   // Var only
  std::vector<Expr> children;
  size_t hash = 0;
};

namespace {

using K = ExprKind;
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

struct NodeHash {
  size_t operator()(const ExprNode* n) const { return n->hash; }
};
// Children are already interned, so comparing them compares pointers.
struct NodeEq {
  bool operator()(const ExprNode* a, const ExprNode* b) const {
    return a->kind == b->kind && a->value == b->value && a->name == b->name &&
           a->children == b->children;
  }
};

// The hash is structural (not address based) so that hash() and anything iterating
// unordered containers keyed by Expr is reproducible from run to run.
const ExprNode* intern(ExprNode candidate) {
  size_t h = mix(static_cast<size_t>(candidate.kind), static_cast<size_t>(candidate.value));
  h = mix(h, std::hash<std::string>{}(candidate.name));
  for (const Expr& c : candidate.children) h = mix(h, c.hash());
  candidate.hash = h;
  struct Table {
    std::mutex mutex;
    std::unordered_set<const ExprNode*, NodeHash, NodeEq> nodes;
  };
  // Leaked on purpose: nodes are never freed and Exprs may outlive static destructors.
  static Table* table = new Table;
  std::lock_guard lock(table->mutex);
  auto it = table->nodes.find(&candidate);
  if (it != table->nodes.end()) return *it;
  const ExprNode* node = new ExprNode(std::move(candidate));
  table->nodes.insert(node);
  return node;
}

const ExprNode* const_node(int64_t v) {
  return intern({K::Const, v, {}, {}, 0});
}

bool is_keyword(std::string_view s) {
  static const std::unordered_set<std::string_view> keywords = {
      "auto",     "bool",     "break",     "case",      "catch",    "char",      "class",
      "const",    "continue", "default",   "delete",    "do",       "double",    "else",
      "enum",     "extern",   "false",     "float",     "for",      "goto",      "if",
      "inline",   "int",      "long",      "new",       "nullptr",  "operator",  "private",
      "public",   "register", "restrict",  "return",    "short",    "signed",    "sizeof",
      "static",   "struct",   "switch",    "template",  "this",     "throw",     "true",
      "try",      "typedef",  "union",     "unsigned",  "using",    "virtual",   "void",
      "volatile", "while",    "constexpr", "namespace", "typename", "protected", "friend"};
  return keywords.count(s) > 0;
}

// Variable names are spliced verbatim into generated C, so they must be identifiers
// that cannot collide with keywords or with luminal's own `_`-prefixed names.
void check_var_name(std::string_view name) {
  auto bad = [&](const char* why) {
    throw Error("invalid dimension variable name '" + std::string(name) + "': " + why);
  };
  if (name.empty()) bad("empty");
  if (name[0] == '_') bad("a leading underscore is reserved for luminal");
  if (name[0] >= '0' && name[0] <= '9') bad("must not start with a digit");
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) bad("must be a C identifier ([A-Za-z][A-Za-z0-9_]*)");
  }
  if (is_keyword(name)) bad("is a C/C++ keyword");
}

void check_internal_var_name(std::string_view name) {
  if (name.size() < 2 || name[0] != '_') {
    throw Error("invalid internal variable name '" + std::string(name) +
                "': must be '_' followed by identifier characters");
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      throw Error("invalid internal variable name '" + std::string(name) +
                  "': must be a C identifier");
    }
  }
}

// int64 arithmetic that wraps instead of overflowing (unsigned arithmetic is modular;
// the conversion back to int64_t is modular since C++20).
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// INT64_MIN / -1 traps on x86; it wraps to INT64_MIN like the other overflows.
int64_t wrap_div(int64_t a, int64_t b) {
  return b == -1 ? wrap_mul(a, -1) : a / b;
}

// The value of a binary node from its operands' values; nullopt on division by zero.
std::optional<int64_t> fold(K kind, int64_t a, int64_t b) {
  switch (kind) {
    case K::Add:
      return wrap_add(a, b);
    case K::Mul:
      return wrap_mul(a, b);
    case K::Div:
      if (b == 0) return std::nullopt;
      return wrap_div(a, b);
    case K::CeilDiv:
      if (b == 0) return std::nullopt;
      return wrap_div(wrap_add(wrap_add(a, b), -1), b);
    case K::Mod:
      if (b == 0) return std::nullopt;
      return b == -1 ? 0 : a % b;
    case K::Min:
      return std::min(a, b);
    case K::Max:
      return std::max(a, b);
    case K::Lt:
      return a < b;
    case K::Le:
      return a <= b;
    case K::Eq:
      return a == b;
    case K::Ne:
      return a != b;
    case K::Const:
    case K::Var:
      break;
  }
  throw Error("fold: not a binary expression kind");
}

// Operators build nodes as written and fold only when every operand is a constant, so
// that unsimplified trees can be built on purpose (tests, rules).
Expr binary(K kind, const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) {
    if (auto v = fold(kind, a.value(), b.value())) return Expr::constant(*v);
  }
  return Expr::make(kind, {a, b});
}

// ---- printing ---------------------------------------------------------------------------
// Each printed piece carries the C precedence of its outermost operator; a piece is
// parenthesised when its context binds tighter.
constexpr int kAtom = 100, kMulPrec = 50, kUnary = 45, kAddPrec = 40, kRelPrec = 30, kEqPrec = 20,
              kNegConst = 0;

struct Printed {
  std::string text;
  int prec;
};

std::string paren(const Printed& p, int min_prec) {
  return p.prec < min_prec ? "(" + p.text + ")" : p.text;
}

Printed print(const Expr& e);

// Set by Expr::to_c(ranges) for the duration of one print: Div / Mod by a
// power of two of a provably non-negative dividend print as a shift / mask.
thread_local const Ranges* t_shift_ranges = nullptr;

// log2 of the divisor when `a / r` or `a % r` may print as a shift or mask.
std::optional<int> shift_of(const Expr& a, const Expr& r) {
  if (t_shift_ranges == nullptr || !r.is_const()) return std::nullopt;
  const int64_t d = r.value();
  if (d <= 1 || (d & (d - 1)) != 0) return std::nullopt;
  if (bounds(a, *t_shift_ranges).lo < 0) return std::nullopt;
  return __builtin_ctzll(static_cast<unsigned long long>(d));
}

// Left operand of * / %: a product chain needs no parentheses under `*`, but anything
// else is parenthesised (`(z / 64) * 4096`, `(a * b) / c`) for readability.
std::string mul_left(const Printed& p, bool parent_is_mul, const Expr& child) {
  return paren(p, parent_is_mul && child.kind() == K::Mul ? kMulPrec : kMulPrec + 1);
}

// `-e` for a term whose leftmost factor is a negative constant (how subtracted terms
// look: `c * x` with c < 0), so that `a + (-1 * b)` prints as `a - b`.
std::optional<Printed> print_negated(const Expr& e) {
  if (e.is_const()) {
    if (e.value() >= 0 || e.value() == kInt64Min) return std::nullopt;
    return Printed{std::to_string(-e.value()), kAtom};
  }
  if (e.kind() != K::Mul) return std::nullopt;
  const Expr& l = e.children()[0];
  const Expr& r = e.children()[1];
  if (l.is_const() && l.value() == -1) return print(r);
  auto pl = print_negated(l);
  if (!pl) return std::nullopt;
  return Printed{mul_left(*pl, true, l) + " * " + paren(print(r), kMulPrec + 1), kMulPrec};
}

Printed print(const Expr& e) {
  switch (e.kind()) {
    case K::Const:
      if (e.value() == kInt64Min) return {"(-9223372036854775807 - 1)", kAtom};
      // A negative constant is parenthesised wherever it is an operand: `a * (-3)`.
      return {std::to_string(e.value()), e.value() < 0 ? kNegConst : kAtom};
    case K::Var:
      return {e.name(), kAtom};
    default:
      break;
  }
  const Expr& l = e.children()[0];
  const Expr& r = e.children()[1];
  const Printed pl = print(l);
  auto op = [&](const char* sym, int prec, int left_min, int right_min) {
    return Printed{paren(pl, left_min) + sym + paren(print(r), right_min), prec};
  };
  switch (e.kind()) {
    case K::Add:
      if (auto neg = print_negated(r)) {
        return {paren(pl, kAddPrec) + " - " + paren(*neg, kAddPrec + 1), kAddPrec};
      }
      return op(" + ", kAddPrec, kAddPrec, kAddPrec + 1);
    case K::Mul:
      if (l.is_const() && l.value() == -1) return {"-" + paren(print(r), kAtom), kUnary};
      return {mul_left(pl, true, l) + " * " + paren(print(r), kMulPrec + 1), kMulPrec};
    case K::Div:
      if (auto k = shift_of(l, r))
        return {"(" + paren(pl, kMulPrec) + " >> " + std::to_string(*k) + ")", kAtom};
      return {mul_left(pl, false, l) + " / " + paren(print(r), kMulPrec + 1), kMulPrec};
    case K::Mod:
      if (auto k = shift_of(l, r))
        return {"(" + paren(pl, kMulPrec) + " & " + std::to_string(r.value() - 1) + ")", kAtom};
      return {mul_left(pl, false, l) + " % " + paren(print(r), kMulPrec + 1), kMulPrec};
    case K::CeilDiv: {
      // ceil_div(a, b) is defined as (a + b - 1) / b; printing it that way keeps the
      // generated code free of helpers.
      const Printed pr = print(r);
      return {"(" + paren(pl, kAddPrec) + " + " + paren(pr, kAddPrec + 1) + " - 1) / " +
                  paren(pr, kMulPrec + 1),
              kMulPrec};
    }
    case K::Min:
    case K::Max: {
      // A portable ternary rather than a helper function: valid C, C++ and CUDA as is.
      const std::string a = paren(pl, kRelPrec + 1), b = paren(print(r), kRelPrec + 1);
      return {"(" + a + (e.kind() == K::Min ? " < " : " > ") + b + " ? " + a + " : " + b + ")",
              kAtom};
    }
    case K::Lt:
      return op(" < ", kRelPrec, kRelPrec + 1, kRelPrec + 1);
    case K::Le:
      return op(" <= ", kRelPrec, kRelPrec + 1, kRelPrec + 1);
    case K::Eq:
      return op(" == ", kEqPrec, kRelPrec + 1, kRelPrec + 1);
    case K::Ne:
      return op(" != ", kEqPrec, kRelPrec + 1, kRelPrec + 1);
    case K::Const:
    case K::Var:
      break;
  }
  throw Error("to_c: unknown expression kind");
}

Expr substitute_impl(const Expr& e, const std::map<std::string, Expr, std::less<>>& repl,
                     std::unordered_map<const ExprNode*, Expr>& memo) {
  if (e.is_const()) return e;
  if (e.is_var()) {
    auto it = repl.find(e.name());
    return it == repl.end() ? e : it->second;
  }
  if (auto it = memo.find(e.node()); it != memo.end()) return it->second;
  std::vector<Expr> children;
  for (const Expr& c : e.children()) children.push_back(substitute_impl(c, repl, memo));
  Expr out = children == e.children() ? e : Expr::make(e.kind(), std::move(children));
  memo.emplace(e.node(), out);
  return out;
}

}  // namespace

// ---- construction -----------------------------------------------------------------------

Expr::Expr() {
  static const ExprNode* zero = const_node(0);
  node_ = zero;
}
Expr::Expr(int64_t value) : node_(const_node(value)) {}
Expr::Expr(int value) : node_(const_node(value)) {}
Expr::Expr(const char* name) {
  if (name == nullptr) throw Error("invalid dimension variable name: null");
  node_ = var(name).node_;
}
Expr::Expr(const std::string& name) : node_(var(name).node_) {}

Expr Expr::constant(int64_t value) {
  return Expr(const_node(value));
}

Expr Expr::var(std::string_view name) {
  check_var_name(name);
  return Expr(intern({K::Var, 0, std::string(name), {}, 0}));
}

Expr Expr::internal_var(std::string_view name) {
  check_internal_var_name(name);
  return Expr(intern({K::Var, 0, std::string(name), {}, 0}));
}

Expr Expr::index_var() {
  static const ExprNode* z = intern({K::Var, 0, "_z", {}, 0});
  return Expr(z);
}

Expr Expr::make(ExprKind kind, std::vector<Expr> children) {
  if (kind == K::Const || kind == K::Var) {
    throw Error("Expr::make: use Expr::constant / Expr::var for leaves");
  }
  if (children.size() != 2) {
    throw Error("Expr::make: every operator node has exactly 2 children, got " +
                std::to_string(children.size()));
  }
  return Expr(intern({kind, 0, {}, std::move(children), 0}));
}

// ---- accessors --------------------------------------------------------------------------

ExprKind Expr::kind() const {
  return node_->kind;
}

int64_t Expr::value() const {
  if (!is_const()) throw Error("Expr::value(): `" + to_c() + "` is not a constant");
  return node_->value;
}

std::optional<int64_t> Expr::as_const() const {
  if (!is_const()) return std::nullopt;
  return node_->value;
}

const std::string& Expr::name() const {
  if (!is_var()) throw Error("Expr::name(): `" + to_c() + "` is not a variable");
  return node_->name;
}

const std::vector<Expr>& Expr::children() const {
  return node_->children;
}

size_t Expr::hash() const {
  return node_->hash;
}

// ---- evaluation and traversal -----------------------------------------------------------

int64_t Expr::eval(const DimMap& vars) const {
  switch (kind()) {
    case K::Const:
      return node_->value;
    case K::Var: {
      auto it = vars.find(node_->name);
      if (it == vars.end()) throw LookupError("no value given for dimension '" + node_->name + "'");
      return it->second;
    }
    default:
      break;
  }
  const int64_t a = node_->children[0].eval(vars);
  const int64_t b = node_->children[1].eval(vars);
  if (auto v = fold(kind(), a, b)) return *v;
  throw Error("division by zero evaluating `" + to_c() + "`");
}

Expr Expr::substitute(const std::map<std::string, Expr, std::less<>>& replacements) const {
  std::unordered_map<const ExprNode*, Expr> memo;
  return substitute_impl(*this, replacements, memo);
}

Expr Expr::substitute(std::string_view var, const Expr& replacement) const {
  return substitute({{std::string(var), replacement}});
}

std::set<std::string> Expr::variables() const {
  // Memoised per thread: nodes are immutable and never freed, and views and
  // serialisation ask for the same expressions' variables over and over.
  thread_local std::unordered_map<const ExprNode*, std::set<std::string>> memo;
  if (auto it = memo.find(node_); it != memo.end()) return it->second;
  std::set<std::string> names;
  std::unordered_set<const ExprNode*> seen;
  std::vector<Expr> stack{*this};
  while (!stack.empty()) {
    Expr e = stack.back();
    stack.pop_back();
    if (!seen.insert(e.node()).second) continue;
    if (e.is_var()) names.insert(e.name());
    for (const Expr& c : e.children()) stack.push_back(c);
  }
  if (memo.size() >= (size_t{1} << 16)) memo.clear();  // bound the memory
  memo.emplace(node_, names);
  return names;
}

bool Expr::depends_on(std::string_view var) const {
  if (is_var()) return node_->name == var;
  for (const Expr& c : children()) {
    if (c.depends_on(var)) return true;
  }
  return false;
}

std::string Expr::to_c() const {
  return print(*this).text;
}

std::string Expr::to_c(const Ranges& ranges) const {
  struct Restore {
    const Ranges* saved = t_shift_ranges;
    ~Restore() { t_shift_ranges = saved; }
  } restore;
  t_shift_ranges = &ranges;
  return print(*this).text;
}

int Expr::compare(const Expr& a, const Expr& b) {
  if (a.node_ == b.node_) return 0;
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  if (a.is_const()) return a.node_->value < b.node_->value ? -1 : 1;
  if (a.is_var()) return a.node_->name.compare(b.node_->name) < 0 ? -1 : 1;
  for (size_t i = 0; i < a.children().size(); ++i) {
    if (int c = compare(a.children()[i], b.children()[i])) return c;
  }
  return 0;  // unreachable for distinct interned nodes
}

// ---- operators --------------------------------------------------------------------------

Expr operator+(const Expr& a, const Expr& b) {
  return binary(K::Add, a, b);
}
// Subtraction is `a + (-1 * b)`: the constant leads, as in canonical products.
Expr operator-(const Expr& a) {
  return binary(K::Mul, Expr::constant(-1), a);
}
Expr operator-(const Expr& a, const Expr& b) {
  return a + -b;
}
Expr operator*(const Expr& a, const Expr& b) {
  return binary(K::Mul, a, b);
}
Expr operator/(const Expr& a, const Expr& b) {
  return binary(K::Div, a, b);
}
Expr operator%(const Expr& a, const Expr& b) {
  return binary(K::Mod, a, b);
}
Expr ceil_div(const Expr& a, const Expr& b) {
  return binary(K::CeilDiv, a, b);
}
Expr min(const Expr& a, const Expr& b) {
  return binary(K::Min, a, b);
}
Expr max(const Expr& a, const Expr& b) {
  return binary(K::Max, a, b);
}
Expr lt(const Expr& a, const Expr& b) {
  return binary(K::Lt, a, b);
}
Expr le(const Expr& a, const Expr& b) {
  return binary(K::Le, a, b);
}
Expr gt(const Expr& a, const Expr& b) {
  return binary(K::Lt, b, a);
}
Expr ge(const Expr& a, const Expr& b) {
  return binary(K::Le, b, a);
}
Expr eq(const Expr& a, const Expr& b) {
  return binary(K::Eq, a, b);
}
Expr ne(const Expr& a, const Expr& b) {
  return binary(K::Ne, a, b);
}

}  // namespace luminal
