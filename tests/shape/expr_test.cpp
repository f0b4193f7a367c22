// Expr construction, hash-consing, evaluation, substitution and C printing.

#include "luminal/shape/expr.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <thread>
#include <unordered_set>

#include "luminal/error.hpp"

namespace luminal {
namespace {

using K = ExprKind;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Expr, ConstantsAndVariables) {
  Expr c = 42;
  EXPECT_TRUE(c.is_const());
  EXPECT_EQ(c.value(), 42);
  EXPECT_EQ(c.as_const(), std::optional<int64_t>(42));
  EXPECT_EQ(Expr::constant(int64_t{1} << 40).value(), int64_t{1} << 40);
  Expr s = "s";
  EXPECT_TRUE(s.is_var());
  EXPECT_EQ(s.kind(), K::Var);
  EXPECT_EQ(s.name(), "s");
  EXPECT_EQ(s.as_const(), std::nullopt);
  EXPECT_EQ(Expr(std::string("seq_len")), Expr::var("seq_len"));
  EXPECT_EQ(Expr(), Expr(0));
  EXPECT_TRUE(s.children().empty());
}

TEST(Expr, ShapeLiteralMixesConstantsAndNames) {
  std::vector<Expr> shape = {64, "s", Expr("p") + "s"};
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0], Expr(64));
  EXPECT_EQ(shape[1], Expr::var("s"));
  EXPECT_EQ(shape[2].kind(), K::Add);
}

TEST(Expr, HashConsingGivesTheSameNode) {
  Expr a = "a", b = "b";
  Expr e1 = (a + b * 3) / (a % 7);
  Expr e2 = (Expr("a") + Expr("b") * Expr(3)) / (Expr::var("a") % Expr::constant(7));
  EXPECT_EQ(e1.node(), e2.node());
  EXPECT_TRUE(e1 == e2);
  EXPECT_EQ(e1.hash(), e2.hash());
  EXPECT_EQ(std::hash<Expr>{}(e1), std::hash<Expr>{}(e2));
  EXPECT_EQ(Expr::make(K::Min, {a, b}).node(), min(a, b).node());
}

TEST(Expr, DifferentTreesAreDifferentNodes) {
  Expr a = "a", b = "b";
  EXPECT_NE(a + b, b + a);  // operators do not reorder
  EXPECT_NE(a / b, a % b);
  EXPECT_NE(Expr(1), Expr(-1));
  EXPECT_NE(Expr("a"), Expr("A"));
}

TEST(Expr, UsableInUnorderedContainers) {
  std::unordered_set<Expr> set;
  set.insert(Expr("a") + 1);
  set.insert(Expr("a") + 1);
  set.insert(Expr("a") + 2);
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.count(Expr("a") + 2));
}

TEST(Expr, OperatorsFoldOnlyAllConstantOperands) {
  EXPECT_EQ(Expr(3) + 4, Expr(7));
  EXPECT_EQ(Expr(3) * -4, Expr(-12));
  EXPECT_EQ(Expr(-7) / 2, Expr(-3));
  EXPECT_EQ(Expr(-7) % 2, Expr(-1));
  EXPECT_EQ(ceil_div(Expr(7), 2), Expr(4));
  EXPECT_EQ(min(Expr(3), 5), Expr(3));
  EXPECT_EQ(max(Expr(3), 5), Expr(5));
  EXPECT_EQ(lt(Expr(3), 5), Expr(1));
  EXPECT_EQ(ge(Expr(3), 5), Expr(0));
  Expr x = "x";
  Expr plus_zero = x + 0;
  EXPECT_EQ(plus_zero.kind(), K::Add);  // not simplified
  EXPECT_EQ(plus_zero.children()[1], Expr(0));
  EXPECT_EQ((x * 1).kind(), K::Mul);
  // A constant division by zero is left as a node (it throws when evaluated).
  EXPECT_EQ((Expr(4) / 0).kind(), K::Div);
}

TEST(Expr, SubtractionIsAddOfMinusOneTimes) {
  Expr a = "a", b = "b";
  Expr d = a - b;
  ASSERT_EQ(d.kind(), K::Add);
  EXPECT_EQ(d.children()[0], a);
  EXPECT_EQ(d.children()[1], Expr::make(K::Mul, {-1, b}));
  EXPECT_EQ(-a, Expr::make(K::Mul, {-1, a}));
  EXPECT_EQ(a - 3, Expr::make(K::Add, {a, -3}));
  EXPECT_EQ(gt(a, b), lt(b, a));
  EXPECT_EQ(ge(a, b), le(b, a));
}

TEST(Expr, MakeChecksArity) {
  Expr a = "a";
  EXPECT_THROW(Expr::make(K::Add, {a}), Error);
  EXPECT_THROW(Expr::make(K::Mul, {a, a, a}), Error);
  EXPECT_THROW(Expr::make(K::Const, {}), Error);
  EXPECT_THROW(Expr::make(K::Var, {}), Error);
  EXPECT_EQ(Expr::make(K::CeilDiv, {a, 4}), ceil_div(a, 4));
}

TEST(Expr, AccessorsThrowOnWrongKind) {
  Expr a = "a";
  EXPECT_THROW(a.value(), Error);
  EXPECT_THROW(Expr(3).name(), Error);
  EXPECT_THROW((a + 1).name(), Error);
}

TEST(Expr, InvalidVariableNamesThrow) {
  for (const char* bad :
       {"", "1a", "a-b", "a b", "x.y", "_x", "_z", "__s", "int", "for", "sizeof", "é"}) {
    EXPECT_THROW(Expr::var(bad), Error) << bad;
    EXPECT_THROW(Expr{bad}, Error) << bad;
    EXPECT_THROW(Expr{std::string(bad)}, Error) << bad;
  }
  EXPECT_THROW(Expr(static_cast<const char*>(nullptr)), Error);
  for (const char* ok : {"s", "S", "seq_len", "p2", "batch_size_", "x_1_y"}) {
    EXPECT_NO_THROW(Expr::var(ok)) << ok;
  }
}

TEST(Expr, IndexVariableIsReserved) {
  Expr z = Expr::index_var();
  EXPECT_TRUE(z.is_var());
  EXPECT_EQ(z.name(), "_z");
  EXPECT_EQ(z, Expr::index_var());
  EXPECT_EQ((z * 4 + 1).variables(), std::set<std::string>{"_z"});
  EXPECT_EQ((z * 4).eval({{"_z", 3}}), 12);
}

TEST(Expr, InternalVariablesRequireALeadingUnderscore) {
  Expr t = Expr::internal_var("_split0");
  EXPECT_TRUE(t.is_var());
  EXPECT_EQ(t.name(), "_split0");
  EXPECT_EQ(Expr::internal_var("_z"), Expr::index_var());
  EXPECT_EQ(t.eval({{"_split0", 5}}), 5);
  for (const char* bad : {"", "_", "split", "s_", "_a-b", "_a b"}) {
    EXPECT_THROW(Expr::internal_var(bad), Error) << bad;
  }
}

TEST(Expr, EvalArithmetic) {
  Expr a = "a", b = "b";
  DimMap v{{"a", 10}, {"b", 3}};
  EXPECT_EQ((a + b).eval(v), 13);
  EXPECT_EQ((a - b).eval(v), 7);
  EXPECT_EQ((a * b).eval(v), 30);
  EXPECT_EQ((a / b).eval(v), 3);
  EXPECT_EQ((a % b).eval(v), 1);
  EXPECT_EQ(ceil_div(a, b).eval(v), 4);
  EXPECT_EQ(ceil_div(a * 3, b).eval(v), 10);
  EXPECT_EQ((-a).eval(v), -10);
  EXPECT_EQ(Expr(5).eval({}), 5);
}

TEST(Expr, EvalTruncatesTowardZero) {
  Expr a = "a", b = "b";
  auto div = [&](int64_t x, int64_t y) { return (a / b).eval({{"a", x}, {"b", y}}); };
  auto mod = [&](int64_t x, int64_t y) { return (a % b).eval({{"a", x}, {"b", y}}); };
  EXPECT_EQ(div(-7, 2), -3);
  EXPECT_EQ(mod(-7, 2), -1);
  EXPECT_EQ(div(7, -2), -3);
  EXPECT_EQ(mod(7, -2), 1);
  EXPECT_EQ(div(-7, -2), 3);
  EXPECT_EQ(mod(-7, -2), -1);
  EXPECT_EQ(div(-1, 4), 0);
  EXPECT_EQ(mod(-1, 4), -1);
  // ceil_div is (a + b - 1) / b, also for negative a.
  EXPECT_EQ(ceil_div(a, b).eval({{"a", -5}, {"b", 4}}), (-5 + 4 - 1) / 4);
}

TEST(Expr, EvalMinMaxAndComparisons) {
  Expr a = "a", b = "b";
  DimMap v{{"a", -2}, {"b", 5}};
  EXPECT_EQ(min(a, b).eval(v), -2);
  EXPECT_EQ(max(a, b).eval(v), 5);
  EXPECT_EQ(lt(a, b).eval(v), 1);
  EXPECT_EQ(lt(b, a).eval(v), 0);
  EXPECT_EQ(le(a, a).eval(v), 1);
  EXPECT_EQ(gt(a, b).eval(v), 0);
  EXPECT_EQ(ge(b, a).eval(v), 1);
  EXPECT_EQ(eq(a, b).eval(v), 0);
  EXPECT_EQ(eq(a, -2).eval(v), 1);
  EXPECT_EQ(ne(a, b).eval(v), 1);
}

TEST(Expr, EvalWrapsOnOverflow) {
  Expr a = "a", b = "b";
  EXPECT_EQ((a + 1).eval({{"a", kMax}}), kMin);
  EXPECT_EQ((a * 2).eval({{"a", kMax}}), -2);
  EXPECT_EQ((a / b).eval({{"a", kMin}, {"b", -1}}), kMin);
  EXPECT_EQ((a % b).eval({{"a", kMin}, {"b", -1}}), 0);
  EXPECT_EQ((-a).eval({{"a", kMin}}), kMin);
}

TEST(Expr, DivisionByZeroThrowsNamingTheExpression) {
  Expr x = "x", y = "y";
  DimMap v{{"x", 5}, {"y", 0}};
  try {
    (x / y + 1).eval(v);
    FAIL() << "expected luminal::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x / y"), std::string::npos) << e.what();
  }
  EXPECT_THROW((x % y).eval(v), Error);
  EXPECT_THROW(ceil_div(x, y).eval(v), Error);
  EXPECT_THROW((Expr(4) / 0).eval({}), Error);
  EXPECT_EQ((x / (y + 1)).eval(v), 5);
}

TEST(Expr, MissingVariableThrowsLookupError) {
  Expr e = Expr("s") * 2 + "p";
  try {
    e.eval({{"s", 3}});
    FAIL() << "expected LookupError";
  } catch (const LookupError& err) {
    EXPECT_NE(std::string(err.what()).find("'p'"), std::string::npos) << err.what();
  }
  EXPECT_EQ(e.eval({{"s", 3}, {"p", 1}, {"unused", 9}}), 7);
}

TEST(Expr, SubstituteReplacesVariablesWithoutSimplifying) {
  Expr s = "s", p = "p", z = Expr::index_var();
  Expr e = (z / s) * s + z % s;
  Expr r = e.substitute("s", Expr(64));
  EXPECT_EQ(r, (z / 64) * 64 + z % 64);
  EXPECT_EQ(e.substitute("q", Expr(1)), e);  // untouched: same node
  EXPECT_EQ((s + 0).substitute("s", p), p + 0);
  Expr both = (s + p).substitute({{"s", p}, {"p", s}});  // simultaneous, not sequential
  EXPECT_EQ(both, p + s);
  EXPECT_EQ((s * 2).substitute("s", s + 1).eval({{"s", 4}}), 10);
}

TEST(Expr, VariablesAndDependsOn) {
  Expr e = Expr("s") * "b" + min(Expr("p"), Expr("s")) / 3;
  EXPECT_EQ(e.variables(), (std::set<std::string>{"b", "p", "s"}));
  EXPECT_TRUE(Expr(4).variables().empty());
  EXPECT_TRUE(e.depends_on("p"));
  EXPECT_FALSE(e.depends_on("q"));
  EXPECT_FALSE(Expr(4).depends_on("s"));
}

TEST(Expr, ToCWithRangesShiftsNonNegativePowerOfTwoDivisions) {
  const Expr i = Expr::internal_var("_i"), x = Expr::var("x");
  const Ranges r = {{"_i", {0, 63}}};
  EXPECT_EQ((i / 2).to_c(r), "(_i >> 1)");
  EXPECT_EQ((i % 8).to_c(r), "(_i & 7)");
  EXPECT_EQ(((i + x * 64) / 16).to_c(r), "((_i + x * 64) >> 4)");  // dims are >= 0
  // Not provably >= 0, or not a power of two: C's division, as to_c().
  EXPECT_EQ(((i - 3) / 2).to_c(r), "(_i - 3) / 2");
  EXPECT_EQ((i / 3).to_c(r), "_i / 3");
  EXPECT_EQ((i % x).to_c(r), "_i % x");
  EXPECT_EQ((i / 2).to_c(), "_i / 2");
  // Same values: C's / and % truncate, which for a >= 0 is >> and &.
  for (int64_t v = 0; v < 64; ++v) {
    EXPECT_EQ((i / 4).eval({{"_i", v}}), v >> 2);
    EXPECT_EQ((i % 4).eval({{"_i", v}}), v & 3);
  }
}

TEST(Expr, ToCExactForms) {
  Expr a = "a", b = "b", z = Expr::index_var();
  EXPECT_EQ(Expr(42).to_c(), "42");
  EXPECT_EQ(Expr(-3).to_c(), "-3");
  EXPECT_EQ((a + b).to_c(), "a + b");
  EXPECT_EQ((a - b).to_c(), "a - b");
  EXPECT_EQ((a - 1).to_c(), "a - 1");
  EXPECT_EQ((a + -4 * b).to_c(), "a - 4 * b");
  EXPECT_EQ((a * (b + 1)).to_c(), "a * (b + 1)");
  EXPECT_EQ(((z / 64) * 4096 + z % 64).to_c(), "(_z / 64) * 4096 + _z % 64");
  EXPECT_EQ((a - (b + 1)).to_c(), "a - (b + 1)");
  EXPECT_EQ((a + (b + 1)).to_c(), "a + (b + 1)");
  EXPECT_EQ(((a + b) + 1).to_c(), "a + b + 1");
  EXPECT_EQ((a / (b * 2)).to_c(), "a / (b * 2)");
  EXPECT_EQ((a * b * 2).to_c(), "a * b * 2");
  EXPECT_EQ(((a * b) / 2).to_c(), "(a * b) / 2");
  EXPECT_EQ(((a / 4) / 8).to_c(), "(a / 4) / 8");
  EXPECT_EQ((-a).to_c(), "-a");
  EXPECT_EQ((-(a + b)).to_c(), "-(a + b)");
  EXPECT_EQ(to_string({64, "s"}), "[64, s]");
  EXPECT_EQ((a + 1).to_string(), (a + 1).to_c());
}

TEST(Expr, ToCParenthesisesNegativeConstants) {
  Expr a = "a";
  EXPECT_EQ((a * -3).to_c(), "a * (-3)");
  EXPECT_EQ(Expr::make(K::Mul, {-3, a}).to_c(), "(-3) * a");
  EXPECT_EQ((a / -2).to_c(), "a / (-2)");
  EXPECT_EQ(Expr::make(K::Add, {-2, a}).to_c(), "(-2) + a");
  EXPECT_EQ(Expr::make(K::Mul, {-1, -5}).to_c(), "-(-5)");
  EXPECT_EQ(Expr(kMin).to_c(), "(-9223372036854775807 - 1)");
  EXPECT_EQ((a + kMin).to_c(), "a + (-9223372036854775807 - 1)");
}

TEST(Expr, ToCMinMaxCeilDivAndComparisons) {
  Expr a = "a", b = "b";
  EXPECT_EQ(min(a, b).to_c(), "(a < b ? a : b)");
  EXPECT_EQ(max(a + 1, b).to_c(), "(a + 1 > b ? a + 1 : b)");
  EXPECT_EQ(ceil_div(a, 32).to_c(), "(a + 32 - 1) / 32");
  EXPECT_EQ(ceil_div(a + b, b * 2).to_c(), "(a + b + b * 2 - 1) / (b * 2)");
  EXPECT_EQ(lt(a, b + 1).to_c(), "a < b + 1");
  EXPECT_EQ(le(a, b).to_c(), "a <= b");
  EXPECT_EQ(eq(lt(a, b), 1).to_c(), "(a < b) == 1");
  EXPECT_EQ(ne(a, b).to_c(), "a != b");
  EXPECT_EQ((lt(a, b) * 4).to_c(), "(a < b) * 4");
  EXPECT_EQ(min(a, -1).to_c(), "(a < (-1) ? a : (-1))");
}

// A tiny evaluator of the C subset to_c() emits, with int64 wrapping arithmetic, to check
// that the printed precedence and parentheses mean what the tree means.
class CExprEvaluator {
public:
  CExprEvaluator(std::string text, const DimMap& vars) : s_(std::move(text)), vars_(vars) {}
  int64_t run() {
    int64_t v = cond();
    skip();
    if (pos_ != s_.size()) throw std::runtime_error("trailing input in " + s_);
    return v;
  }

private:
  static int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.compare(pos_, tok.size(), tok) != 0) return false;
    // `<` must not match the start of `<=`.
    if (tok.size() == 1 && (tok == "<" || tok == ">" || tok == "=") && pos_ + 1 < s_.size() &&
        s_[pos_ + 1] == '=') {
      return false;
    }
    pos_ += tok.size();
    return true;
  }
  int64_t cond() {
    int64_t c = equality();
    if (!eat("?")) return c;
    int64_t t = cond();
    if (!eat(":")) throw std::runtime_error("expected ':' in " + s_);
    int64_t f = cond();
    return c ? t : f;
  }
  int64_t equality() {
    int64_t v = relational();
    for (;;) {
      if (eat("==")) {
        v = v == relational();
      } else if (eat("!=")) {
        v = v != relational();
      } else {
        return v;
      }
    }
  }
  int64_t relational() {
    int64_t v = additive();
    for (;;) {
      if (eat("<=")) {
        v = v <= additive();
      } else if (eat(">=")) {
        v = v >= additive();
      } else if (eat("<")) {
        v = v < additive();
      } else if (eat(">")) {
        v = v > additive();
      } else {
        return v;
      }
    }
  }
  int64_t additive() {
    int64_t v = multiplicative();
    for (;;) {
      if (eat("+")) {
        v = wrap(uint64_t(v) + uint64_t(multiplicative()));
      } else if (eat("-")) {
        v = wrap(uint64_t(v) - uint64_t(multiplicative()));
      } else {
        return v;
      }
    }
  }
  int64_t multiplicative() {
    int64_t v = unary();
    for (;;) {
      char op = eat("*") ? '*' : eat("/") ? '/' : eat("%") ? '%' : 0;
      if (!op) return v;
      int64_t r = unary();
      if (op == '*') {
        v = wrap(uint64_t(v) * uint64_t(r));
      } else if (r == 0) {
        throw std::runtime_error("division by zero");
      } else if (r == -1) {
        v = op == '/' ? wrap(0 - uint64_t(v)) : 0;
      } else {
        v = op == '/' ? v / r : v % r;
      }
    }
  }
  int64_t unary() {
    if (eat("-")) return wrap(0 - uint64_t(unary()));
    return primary();
  }
  int64_t primary() {
    skip();
    if (eat("(")) {
      int64_t v = cond();
      if (!eat(")")) throw std::runtime_error("expected ')' in " + s_);
      return v;
    }
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
    }
    std::string tok = s_.substr(start, pos_ - start);
    if (tok.empty()) throw std::runtime_error("unexpected input in " + s_);
    if (std::isdigit(static_cast<unsigned char>(tok[0]))) return std::stoll(tok);
    return vars_.at(tok);
  }

  std::string s_;
  const DimMap& vars_;
  size_t pos_ = 0;
};

Expr random_tree(std::mt19937_64& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (depth == 0 || pick(4) == 0) {
    switch (pick(5)) {
      case 0:
        return Expr::var("a");
      case 1:
        return Expr::var("b");
      case 2:
        return Expr::index_var();
      case 3:
        return Expr::constant(pick(2) ? kMin : kMax - pick(3));
      default:
        return Expr::constant(pick(21) - 10);
    }
  }
  static const K kinds[] = {K::Add, K::Mul, K::Div, K::CeilDiv, K::Mod, K::Min,
                            K::Max, K::Lt,  K::Le,  K::Eq,      K::Ne};
  return Expr::make(kinds[pick(11)], {random_tree(rng, depth - 1), random_tree(rng, depth - 1)});
}

TEST(Expr, ToCMeansWhatEvalComputes) {
  std::mt19937_64 rng(12345);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    Expr e = random_tree(rng, 5);
    DimMap v{{"a", static_cast<int64_t>(rng() % 21) - 10},
             {"b", static_cast<int64_t>(rng() % 21) - 10},
             {"_z", static_cast<int64_t>(rng() % 100)}};
    int64_t expected;
    try {
      expected = e.eval(v);
    } catch (const Error&) {
      continue;  // division by zero somewhere
    }
    ASSERT_EQ(CExprEvaluator(e.to_c(), v).run(), expected) << e.to_c();
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

TEST(Expr, CompareIsAStructuralTotalOrder) {
  Expr a = "a", b = "b";
  std::vector<Expr> items = {a + b, Expr(3), b, Expr(-1), a, a * b, a / 2, a % 2, Expr(7)};
  for (const Expr& x : items) {
    EXPECT_EQ(Expr::compare(x, x), 0);
    for (const Expr& y : items) {
      EXPECT_EQ(Expr::compare(x, y), -Expr::compare(y, x));
      if (x != y) {
        EXPECT_NE(Expr::compare(x, y), 0);
      }
    }
  }
  std::vector<Expr> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  // Constants (by value) first, then variables (by name), then operators by kind.
  EXPECT_EQ(sorted[0], Expr(-1));
  EXPECT_EQ(sorted[1], Expr(3));
  EXPECT_EQ(sorted[2], Expr(7));
  EXPECT_EQ(sorted[3], a);
  EXPECT_EQ(sorted[4], b);
  EXPECT_EQ(sorted[5], a + b);
  // The order does not depend on creation order (addresses): fresh names sort by name.
  Expr late_first = Expr::var("zz_cmp_2"), late_second = Expr::var("zz_cmp_1");
  EXPECT_LT(Expr::compare(late_second, late_first), 0);
  EXPECT_LT(Expr::compare(a + 1, a + 2), 0);
  EXPECT_LT(Expr::compare(a + b, b + a), 0);
}

TEST(Expr, InterningIsThreadSafe) {
  constexpr int kThreads = 4;
  std::vector<std::vector<const ExprNode*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 500; ++i) {
        Expr e = (Expr::var("thr_s") + i) * Expr::index_var() % (i + 1);
        seen[t].push_back(e.node());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

}  // namespace
}  // namespace luminal
