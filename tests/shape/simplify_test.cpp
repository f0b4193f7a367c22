// The simplifier, bounds() and provably_equal(): exact forms and randomized equivalence.

#include <gtest/gtest.h>

#include <random>

#include "luminal/error.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {
namespace {

using K = ExprKind;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

const Expr x = "x", y = "y", a = "a", s = "s";

TEST(Simplify, FoldsConstants) {
  EXPECT_EQ(Expr::make(K::Add, {2, 3}).simplify(), Expr(5));
  Expr nested = Expr::make(K::Mul, {Expr::make(K::Add, {2, 3}), Expr::make(K::Div, {-7, 2})});
  EXPECT_EQ(nested.simplify(), Expr(-15));
  EXPECT_EQ(Expr::make(K::Mod, {-7, 2}).simplify(), Expr(-1));
  EXPECT_EQ(Expr::make(K::CeilDiv, {7, 2}).simplify(), Expr(4));
  EXPECT_EQ(Expr::make(K::Max, {7, 2}).simplify(), Expr(7));
  EXPECT_EQ(Expr::make(K::Le, {7, 2}).simplify(), Expr(0));
  EXPECT_EQ(((x + 2) + 3).simplify(), (x + 5));
}

TEST(Simplify, NeverFoldsDivisionByZero) {
  Expr e = Expr::make(K::Div, {4, 0});
  EXPECT_EQ(e.simplify(), e);
  EXPECT_EQ((x % 0).simplify(), x % 0);
  EXPECT_THROW((x / 0).simplify().eval({{"x", 1}}), Error);
  EXPECT_EQ((x * 0 + 1).simplify(), Expr(1));
}

TEST(Simplify, RemovesIdentities) {
  EXPECT_EQ((x + 0).simplify(), x);
  EXPECT_EQ((0 + x).simplify(), x);
  EXPECT_EQ((x * 1).simplify(), x);
  EXPECT_EQ((1 * x).simplify(), x);
  EXPECT_EQ((x * 0).simplify(), Expr(0));
  EXPECT_EQ((x / 1).simplify(), x);
  EXPECT_EQ((x % 1).simplify(), Expr(0));
  EXPECT_EQ((x / -1).simplify(), -x);
  EXPECT_EQ(min(x, x).simplify(), x);
  EXPECT_EQ(max(x, x).simplify(), x);
  EXPECT_EQ((x - x).simplify(), Expr(0));
}

TEST(Simplify, ZeroDividedOnlyWhenDivisorIsProvablyNonZero) {
  EXPECT_EQ((Expr(0) / (s + 1)).simplify(), Expr(0));
  EXPECT_EQ((Expr(0) % (s + 1)).simplify(), Expr(0));
  // s may be 0 (variables are only known to be >= 0): keep the division, and its error.
  EXPECT_EQ((Expr(0) / s).simplify(), Expr(0) / s);
  EXPECT_EQ((Expr(0) / s).simplify({{"s", {1, 8}}}), Expr(0));
  EXPECT_EQ((s / s).simplify(), s / s);
  EXPECT_EQ((s / s).simplify({{"s", {1, 8}}}), Expr(1));
  EXPECT_EQ((s % s).simplify({{"s", {1, 8}}}), Expr(0));
}

TEST(Simplify, CombinesLikeTerms) {
  EXPECT_EQ((2 * x + 3 * x).simplify(), 5 * x);
  EXPECT_EQ((x + x).simplify(), 2 * x);
  EXPECT_EQ((x * 3 - x * 3).simplify(), Expr(0));
  EXPECT_EQ((2 * (x * y) + (y * x) * 3).simplify(), (5 * x) * y);
  EXPECT_EQ((x + 1 + x + 2).simplify(), 2 * x + 3);
}

TEST(Simplify, SumsAndProductsAreCanonical) {
  Expr b = "b", c = "c";
  EXPECT_EQ((a + b).simplify(), (b + a).simplify());
  EXPECT_EQ((a + (b + c)).simplify(), ((c + a) + b).simplify());
  EXPECT_EQ((a * (b * c)).simplify(), ((c * a) * b).simplify());
  EXPECT_EQ((b + a).simplify(), a + b);
  EXPECT_EQ((1 + a).simplify(), a + 1);            // the constant goes last in sums
  EXPECT_EQ((b * 4 * a).simplify(), (4 * a) * b);  // and first in products
  EXPECT_EQ((b * 4 * a).simplify().to_c(), "4 * a * b");
}

TEST(Simplify, DistributesOverSums) {
  EXPECT_EQ((2 * (x + 1)).simplify(), 2 * x + 2);
  EXPECT_EQ(((x + 1) * 2).simplify().to_c(), "2 * x + 2");
  EXPECT_EQ(((x + 1) * (x - 1)).simplify(), (x * x - 1).simplify());
  EXPECT_TRUE(provably_equal((s + 1) * 64, 64 * s + 64));
}

TEST(Simplify, PrintsSubtractionNicely) {
  EXPECT_EQ((x - y).simplify().to_c(), "x - y");
  EXPECT_EQ((x - 3 * y + 0 - 4).simplify().to_c(), "x - 3 * y - 4");
}

TEST(Simplify, RecombinesDivModByConstant) {
  for (int64_t d : {4, 7}) {
    EXPECT_EQ(((x / d) * d + x % d).simplify(), x) << d;
    EXPECT_EQ((x % d + d * (x / d)).simplify(), x) << d;
  }
  EXPECT_EQ((3 * ((x / 4) * 4) + 3 * (x % 4)).simplify(), 3 * x);
  EXPECT_EQ(((x / 4) * 4 + x % 4 + y).simplify(), x + y);
  // The identity holds for negative x too (C division), so no range is needed.
  EXPECT_EQ(((x / 4) * 4 + x % 4).simplify({{"x", {-100, 100}}}), x);
  // A different divisor does not recombine.
  EXPECT_NE(((x / 4) * 4 + x % 8).simplify(), x);
}

TEST(Simplify, RecombinesDivModBySymbolicPositiveDivisor) {
  Ranges r{{"a", {1, 1000}}};
  EXPECT_EQ(((x / a) * a + x % a).simplify(r), x);
  EXPECT_EQ((a * (x / a) + x % a).simplify(r), x);
  // Without a range, a may be 0 and the original throws: it must not become x.
  EXPECT_NE(((x / a) * a + x % a).simplify(), x);
}

TEST(Simplify, RecombinesDivModByASumDivisor) {
  Expr p = "p";
  EXPECT_EQ(((x / (p + s)) * (p + s) + x % (p + s)).simplify({{"s", {1, 4096}}}), x);
  EXPECT_EQ(((x / (s + 3)) * (s + 3) + x % (s + 3)).simplify(), x);
  EXPECT_EQ(((x / (s + 3)) * (s + 3) + x % (s + 3)).simplify().to_c(), "x");
}

TEST(Simplify, RecombinesIndexVariable) {
  Expr z = Expr::index_var();
  EXPECT_EQ(((z / 64) * 64 + z % 64).simplify(), z);
  Expr sym = ((z / s) * s + z % s);
  EXPECT_EQ(sym.simplify({{"s", {1, 4096}}}), z);
}

TEST(Simplify, RecombinesMixedRadixDigits) {
  Expr z = Expr::index_var();
  // The offset of a contiguous [2, 8, 4] tensor at flat index z.
  Expr offset = (z / 32) * 32 + ((z / 4) % 8) * 4 + z % 4;
  EXPECT_EQ(offset.simplify(), z);
  EXPECT_EQ((((z / 4) % 8) * 4 + z % 4).simplify(), z % 32);
}

TEST(Simplify, CancelsMultiplesOfTheDivisor) {
  EXPECT_EQ(((x * 8) / 8).simplify(), x);
  EXPECT_EQ(((x * 8) % 8).simplify(), Expr(0));
  EXPECT_EQ(((8 * x + 8 * y) / 8).simplify(), x + y);
  // Exact multiples cancel whatever the sign.
  EXPECT_EQ(((x * 8) / 8).simplify({{"x", {-50, 50}}}), x);
  EXPECT_EQ(((x * s) / s).simplify({{"s", {1, 10}}}), x);
  EXPECT_EQ(((x * s) % s).simplify({{"s", {1, 10}}}), Expr(0));
}

TEST(Simplify, SplitsOffMultiplesWhenBothPartsAreNonNegative) {
  EXPECT_EQ(((x * 8 + y) / 8).simplify(), x + y / 8);
  EXPECT_EQ(((x * 8 + y) % 8).simplify(), y % 8);
  EXPECT_EQ(((4 * x + 7) / 4).simplify(), x + 1);
  EXPECT_EQ(((5 * x + 6) % 4).simplify(), (x + 2) % 4);
  EXPECT_EQ(((x * 8 + y) % 8).simplify({{"y", {0, 7}}}), y);
}

TEST(Simplify, DoesNotSplitWhenTruncationWouldChangeTheResult) {
  // x - 8 may be negative: (x - 8) / 8 is not x / 8 - 1 (x = 3: 0 versus -1).
  Expr e = ((x - 8) / 8).simplify();
  EXPECT_EQ(e.eval({{"x", 3}}), 0);
  EXPECT_EQ(e.eval({{"x", 17}}), 1);
  // y may be negative: (8x + y) % 8 is not y % 8 (x = 1, y = -1: 7 versus -1).
  Expr m = ((x * 8 + y) % 8).simplify({{"y", {-5, 5}}});
  EXPECT_NE(m, y % 8);
  EXPECT_EQ(m.eval({{"x", 1}, {"y", -1}}), 7);
}

TEST(Simplify, ModOfDivisorMultipleBelowDivisor) {
  EXPECT_EQ(((x % 4) / 4).simplify(), Expr(0));
  EXPECT_EQ(((x % s) / s).simplify({{"s", {1, 100}}}), Expr(0));
  EXPECT_EQ(((x % 4) % 4).simplify(), x % 4);
}

TEST(Simplify, UsesRangesToDropModAndDiv) {
  Ranges r{{"x", {0, 15}}};
  EXPECT_EQ((x % 16).simplify(r), x);
  EXPECT_EQ((x / 16).simplify(r), Expr(0));
  EXPECT_EQ((x % 15).simplify(r), x % 15);
  EXPECT_EQ((x / 15).simplify(r), x / 15);
  EXPECT_EQ((x % 16).simplify(), x % 16);  // default range is unbounded above
  EXPECT_EQ((x % 16).simplify({{"x", {-15, 0}}}), x);
}

TEST(Simplify, UsesSymbolicUpperBoundsToDropModAndDiv) {
  // A KV-cache row index: _a2 runs over the s new positions, _i over 64 lanes, _a1 over
  // three heads. (64 _a2 + _i) < 64 s needs _a2 < s, which no numeric range says.
  const Expr a2 = Expr::internal_var("_a2"), a1 = Expr::internal_var("_a1"),
             i = Expr::internal_var("_i");
  const Ranges r{{"_a1", {0, 2}}, {"_i", {0, 63}}};
  const UpperBounds below{{"_a2", s}};
  const Expr n = 64 * a2 + i + 64 * a1 * s;
  EXPECT_EQ(((n / (64 * s)) % 3).simplify(r, below), a1);
  EXPECT_EQ((n % (64 * s)).simplify(r, below), (64 * a2 + i).simplify());
  EXPECT_EQ((n / (64 * s)).simplify(r), n / (64 * s));  // s may be 0, _a2 unbounded
  // s >= 1 alone is not enough: without _a2 < s the quotient may be anything.
  const Ranges positive_s{{"_a1", {0, 2}}, {"_i", {0, 63}}, {"s", {1, kMax}}};
  EXPECT_NE((n / (64 * s)).simplify(positive_s), a1);
  // One lane too many (_i up to 64) and the quotient is 1 at _a2 = s - 1, _i = 64.
  EXPECT_NE(((n / (64 * s)) % 3).simplify({{"_a1", {0, 2}}, {"_i", {0, 64}}}, below), a1);
  // A bound that is a sum, and a bound with a positive coefficient (no help).
  EXPECT_EQ(((2 * x + 1) / (2 * s + 2)).simplify({}, {{"x", s + 1}}), Expr(0));
  EXPECT_EQ((x / (s + 1)).simplify({{"s", {0, 100}}}, {{"x", s + 2}}), x / (s + 1));
  EXPECT_EQ((x % (s + 1)).simplify({{"s", {0, 100}}}, {{"x", s + 1}}), x);
  EXPECT_THROW((x / s).simplify({}, {{"x", x + 1}}), Error);
  // A bound that is a sum is >= 1 too: the causal mask's row and column over [p + s).
  const Expr p = "p", extent = p + s;
  const UpperBounds col{{"_i", extent}};
  EXPECT_EQ(((i + a1 * extent) % extent).simplify({}, col), i);
  EXPECT_EQ(((i + a1 * extent) / extent).simplify({}, col), a1);
  EXPECT_NE(((i + a1 * extent) % extent).simplify(), i);  // p + s may be 0
}

TEST(Simplify, NestsDivisions) {
  EXPECT_EQ(((x / 4) / 8).simplify(), x / 32);
  EXPECT_EQ(((x / 4) / 8).simplify({{"x", {-1000, 1000}}}), x / 32);
  EXPECT_EQ(((x / s) / 2).simplify({{"s", {1, 8}}}), x / (2 * s));
  EXPECT_EQ(((x / s) / 2).simplify(), (x / s) / 2);  // s may be 0
}

TEST(Simplify, ModAndDivOfModByAMultiple) {
  EXPECT_EQ(((x % 32) % 8).simplify(), x % 8);
  EXPECT_EQ(((x % 32) / 8).simplify(), (x / 8) % 4);
  EXPECT_EQ(((x % 32) % 16).simplify({{"x", {-100, 100}}}), x % 16);
  EXPECT_EQ(((x % (4 * s)) % s).simplify({{"s", {1, 50}}}), x % s);
  EXPECT_EQ(((x % 30) % 8).simplify(), (x % 30) % 8);  // 8 does not divide 30
}

TEST(Simplify, ReducesCommonFactorsOfConstantDivisions) {
  EXPECT_EQ(((6 * x) / 4).simplify(), (3 * x) / 2);
  EXPECT_EQ(((6 * x + 4) / 4).simplify(), ((3 * x) / 2 + 1));
  EXPECT_EQ(((6 * x - 2) / 4).simplify({{"x", {-20, 20}}}), (3 * x - 1) / 2);
}

TEST(Simplify, CeilDiv) {
  EXPECT_EQ(ceil_div(x, 1).simplify(), x);
  EXPECT_EQ(ceil_div(8 * s, 8).simplify(), s);
  EXPECT_EQ(ceil_div(8 * s + 3, 8).simplify(), s + 1);
  EXPECT_EQ(ceil_div(s, 32).simplify(), ceil_div(s, 32));
  EXPECT_EQ(ceil_div(s, 32).simplify({{"s", {1, 32}}}), Expr(1));
  EXPECT_EQ(ceil_div(s, 32).simplify({{"s", {0, 0}}}), Expr(0));
  // A negative numerator rounds toward zero after adding b - 1: no splitting.
  EXPECT_EQ(ceil_div(8 * x, 8).simplify({{"x", {-5, 5}}}), ceil_div(8 * x, 8));
}

TEST(Simplify, MinMaxWithRanges) {
  Ranges r{{"x", {0, 15}}};
  EXPECT_EQ(min(x, 16).simplify(r), x);
  EXPECT_EQ(max(x, 16).simplify(r), Expr(16));
  EXPECT_EQ(min(x, 15).simplify(r), x);
  EXPECT_EQ(min(x, 10).simplify(r), min(x, 10).simplify());
  EXPECT_EQ(min(x, x + 1).simplify(), x);
  EXPECT_EQ(max(x, x + 1).simplify(), x + 1);
  EXPECT_EQ(max(x, 0).simplify(), x);  // variables are >= 0 by default
  EXPECT_EQ(min(y, x).simplify(), min(x, y));
  EXPECT_EQ(min(min(x, y), x).simplify(), min(x, y));
  EXPECT_EQ(max(max(x, 3), max(y, 5)).simplify(), max(max(5, x), y));
}

// Whatever the bounds, a min is at most each of its operands and a max at
// least each of its operands; chains compare through their operands. (Slicing
// a dynamic dim: the stop of x[1:] is max(s, min(1, s)), of x[2:5]
// max(min(2, s), min(5, s)).)
TEST(Simplify, MinMaxCompareThroughTheirOperands) {
  EXPECT_EQ(max(s, min(1, s)).simplify(), s);
  EXPECT_EQ(min(s, max(1, s)).simplify(), s);
  EXPECT_EQ(max(min(2, s), min(5, s)).simplify(), min(5, s).simplify());
  EXPECT_EQ(min(max(2, s), max(5, s)).simplify(), max(2, s).simplify());
  EXPECT_EQ(max(min(x, y), x).simplify(), x);
  // Nothing it cannot prove: both operands stay.
  EXPECT_EQ(max(min(x, 3), y).simplify().kind(), K::Max);
  EXPECT_EQ(min(max(x, y), min(x, 7)).simplify(), min(x, 7).simplify());
  for (int64_t v = 0; v <= 9; ++v) {
    const DimMap d = {{"s", v}};
    EXPECT_EQ(max(min(2, s), min(5, s)).eval(d), std::min<int64_t>(5, v));
    EXPECT_EQ(max(s, min(1, s)).eval(d), v);
  }
}

TEST(Simplify, FoldsComparisonsDecidedByBounds) {
  EXPECT_EQ(lt(x, x + 1).simplify(), Expr(1));
  EXPECT_EQ(le(x + 1, x).simplify(), Expr(0));
  EXPECT_EQ(le(x % 4, 3).simplify(), Expr(1));
  EXPECT_EQ(lt(x % 4, 3).simplify(), lt(x % 4, 3));
  EXPECT_EQ(eq(x, x).simplify(), Expr(1));
  EXPECT_EQ(ne(x + 1, x).simplify(), Expr(1));
  EXPECT_EQ(eq(x + 1, x).simplify(), Expr(0));
  EXPECT_EQ(lt(x, y).simplify(), lt(x, y));
  EXPECT_EQ(eq(y, x).simplify(), eq(x, y));
  EXPECT_EQ(lt(x, 16).simplify({{"x", {0, 15}}}), Expr(1));
  EXPECT_EQ(ge(x, 0).simplify(), Expr(1));
}

TEST(Simplify, RejectsEmptyRanges) {
  EXPECT_THROW(x.simplify({{"x", {5, 4}}}), Error);
  EXPECT_THROW(bounds(x, {{"x", {1, 0}}}), Error);
}

TEST(Bounds, OfLeavesAndSums) {
  EXPECT_EQ(bounds(3), (Range{3, 3}));
  EXPECT_EQ(bounds(x), (Range{0, kMax}));
  EXPECT_EQ(bounds(x, {{"x", {2, 9}}}), (Range{2, 9}));
  EXPECT_EQ(bounds(Expr::index_var()), (Range{0, kMax}));
  EXPECT_EQ(bounds(x + y, {{"x", {2, 9}}, {"y", {-3, 1}}}), (Range{-1, 10}));
  EXPECT_EQ(bounds(x - y, {{"x", {2, 9}}, {"y", {-3, 1}}}), (Range{1, 12}));
  EXPECT_EQ(bounds(x - x), (Range{0, 0}));  // like terms cancel first
}

TEST(Bounds, OfProductsAndDivisions) {
  Ranges r{{"x", {0, 100}}, {"y", {-3, 4}}};
  EXPECT_EQ(bounds(x * y, r), (Range{-300, 400}));
  EXPECT_EQ(bounds(x / 4, r), (Range{0, 25}));
  EXPECT_EQ(bounds(x % 16, r), (Range{0, 15}));
  EXPECT_EQ(bounds(x % 16, {{"x", {3, 9}}}), (Range{3, 9}));
  EXPECT_EQ(bounds(y % 3, r), (Range{-2, 2}));
  EXPECT_EQ(bounds(ceil_div(x, 32), r), (Range{0, 4}));
  EXPECT_EQ(bounds(x / (y + 4), r), (Range{0, 100}));
}

TEST(Bounds, OfMinMaxAndComparisons) {
  Ranges r{{"x", {0, 100}}, {"y", {-3, 4}}};
  EXPECT_EQ(bounds(min(x, y), r), (Range{-3, 4}));
  EXPECT_EQ(bounds(max(x, y), r), (Range{0, 100}));
  EXPECT_EQ(bounds(lt(x, y), r), (Range{0, 1}));
  EXPECT_EQ(bounds(lt(y, x + 5), r), (Range{1, 1}));
}

TEST(Bounds, SaturateInsteadOfOverflowing) {
  EXPECT_EQ(bounds(x * y), (Range{0, kMax}));
  EXPECT_EQ(bounds(x + kMax), (Range{kMax, kMax}));
  EXPECT_EQ(bounds(-x).hi, 0);
  EXPECT_EQ(bounds(-x).lo, -kMax);
  EXPECT_EQ(bounds(x * -4).lo, std::numeric_limits<int64_t>::min());
}

TEST(ProvablyEqual, ProvesAndRefuses) {
  EXPECT_TRUE(provably_equal((x / 4) * 4 + x % 4, x));
  EXPECT_TRUE(provably_equal(x + y, y + x));
  EXPECT_TRUE(provably_equal(2 * (x + 3), 2 * x + 6));
  EXPECT_TRUE(provably_equal(x % 16, x, {{"x", {0, 15}}}));
  EXPECT_FALSE(provably_equal(x % 16, x));
  EXPECT_FALSE(provably_equal(x, x + 1));
  EXPECT_FALSE(provably_equal(x / 2 * 2, x));
}

TEST(Product, MultipliesAndSimplifies) {
  EXPECT_EQ(product({}), Expr(1));
  EXPECT_EQ(product({2, s, 3}), 6 * s);
  EXPECT_EQ(product({s, 1}), s);
  EXPECT_EQ(product({4, 0, s}), Expr(0));
}

// ---- randomized equivalence ------------------------------------------------------------

// Evaluates like Expr::eval but gives up (nullopt) on division by zero or when an
// intermediate value gets large: the simplifier assumes evaluation does not overflow.
std::optional<int64_t> checked_eval(const Expr& e, const DimMap& v) {
  if (e.is_const()) return e.value();
  if (e.is_var()) return v.at(e.name());
  const auto l = checked_eval(e.children()[0], v), r = checked_eval(e.children()[1], v);
  if (!l || !r) return std::nullopt;
  const __int128 p = *l, q = *r;
  if (q == 0 && (e.kind() == K::Div || e.kind() == K::Mod || e.kind() == K::CeilDiv)) {
    return std::nullopt;
  }
  __int128 out = 0;
  switch (e.kind()) {
    case K::Add:
      out = p + q;
      break;
    case K::Mul:
      out = p * q;
      break;
    case K::Div:
      out = p / q;
      break;
    case K::CeilDiv:
      out = (p + q - 1) / q;
      break;
    case K::Mod:
      out = p % q;
      break;
    case K::Min:
      out = std::min(p, q);
      break;
    case K::Max:
      out = std::max(p, q);
      break;
    case K::Lt:
      out = p < q;
      break;
    case K::Le:
      out = p <= q;
      break;
    case K::Eq:
      out = p == q;
      break;
    case K::Ne:
      out = p != q;
      break;
    default:
      ADD_FAILURE() << "unexpected kind";
  }
  constexpr int64_t kLimit = int64_t{1} << 40;
  if (out > kLimit || out < -kLimit) return std::nullopt;
  return static_cast<int64_t>(out);
}

class RandomExprs {
public:
  RandomExprs(uint64_t seed, Ranges ranges) : rng_(seed), ranges_(std::move(ranges)) {}

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  Expr leaf() {
    static const char* const kVars[] = {"a", "b", "c", "s"};
    if (uniform(0, 1)) return Expr::var(kVars[uniform(0, 3)]);
    return uniform(-6, 6);
  }

  // Something that is never zero (nor negative) within the ranges.
  Expr divisor() {
    if (uniform(0, 1)) return uniform(1, 9);
    Expr v = leaf();
    while (!v.is_var()) v = leaf();
    auto it = ranges_.find(v.name());
    const int64_t lo = it == ranges_.end() ? 0 : it->second.lo;
    return v + std::max<int64_t>(0, -lo) + uniform(1, 3);
  }

  Expr tree(int depth) {
    if (depth == 0 || uniform(0, 5) == 0) return leaf();
    auto sub = [&] { return tree(depth - 1); };
    switch (uniform(0, 17)) {
      case 0:
      case 1:
        return sub() + sub();
      case 2:
        return sub() - sub();
      case 3:
        return sub() * sub();
      case 4:
        return sub() * uniform(-3, 3);
      case 5:
        return sub() / divisor();
      case 6:
        return sub() % divisor();
      case 7:
        return ceil_div(sub(), divisor());
      case 8:
        return min(sub(), sub());
      case 9:
        return max(sub(), sub());
      case 10: {
        static const K kCmp[] = {K::Lt, K::Le, K::Eq, K::Ne};
        return Expr::make(kCmp[uniform(0, 3)], {sub(), sub()});
      }
      // Shapes that the simplifier has dedicated rules for.
      case 11: {
        Expr e = sub(), d = divisor();
        return (e / d) * d + e % d;
      }
      case 12: {
        Expr e = sub(), d = divisor(), d2 = divisor();
        return ((e / d) % d2) * d + e % d;
      }
      case 13: {
        Expr d = divisor();
        return (sub() * d + sub()) / d;
      }
      case 14: {
        Expr d = divisor();
        return (sub() * d + sub()) % d;
      }
      case 15: {
        Expr d = divisor();
        return (uniform(0, 1) ? (sub() % (d * 3)) / d : (sub() % (d * 3)) % d);
      }
      case 16:
        return (sub() / divisor()) / divisor();
      default:
        return min(sub(), sub() + uniform(-2, 2)) - max(sub(), uniform(-3, 3));
    }
  }

  DimMap assignment() {
    DimMap v;
    for (const char* name : {"a", "b", "c", "s"}) {
      auto it = ranges_.find(name);
      v[name] = it == ranges_.end() ? uniform(0, 12) : uniform(it->second.lo, it->second.hi);
    }
    return v;
  }

  const Ranges& ranges() const { return ranges_; }

private:
  std::mt19937_64 rng_;
  Ranges ranges_;
};

// Simplifies `count` random trees and compares evaluation of the original and the
// simplified tree on `samples` assignments each. Returns the number of comparisons.
int check_equivalence(RandomExprs& gen, int count, int samples) {
  int compared = 0;
  for (int i = 0; i < count; ++i) {
    const Expr e = gen.tree(5);
    const Expr simple = e.simplify(gen.ranges());
    for (int j = 0; j < samples; ++j) {
      const DimMap v = gen.assignment();
      const auto expected = checked_eval(e, v);
      if (!expected) continue;
      int64_t got = 0;
      EXPECT_NO_THROW(got = simple.eval(v)) << e.to_c() << "  ->  " << simple.to_c();
      if (got != *expected) {
        ADD_FAILURE() << e.to_c() << "  ->  " << simple.to_c() << " differ at a=" << v.at("a")
                      << " b=" << v.at("b") << " c=" << v.at("c") << " s=" << v.at("s") << ": "
                      << *expected << " vs " << got;
        return compared;
      }
      ++compared;
    }
  }
  return compared;
}

TEST(SimplifyProperty, EquivalentForNonNegativeVariables) {
  RandomExprs gen(0x5eed, {});
  EXPECT_GT(check_equivalence(gen, 2000, 50), 50000);
}

TEST(SimplifyProperty, EquivalentWithinDeclaredRanges) {
  RandomExprs gen(0xbeef, {{"a", {1, 10}}, {"b", {-6, 6}}, {"c", {0, 3}}, {"s", {2, 40}}});
  EXPECT_GT(check_equivalence(gen, 2000, 50), 50000);
}

TEST(SimplifyProperty, EquivalentWithNegativeRanges) {
  RandomExprs gen(0xcafe, {{"a", {-9, -1}}, {"b", {-6, 6}}, {"c", {-3, 0}}, {"s", {-40, 40}}});
  EXPECT_GT(check_equivalence(gen, 1000, 50), 20000);
}

// Index-like trees with variables under symbolic bounds (a < s, c < a + 2), compared
// on assignments that keep the bounds.
TEST(SimplifyProperty, EquivalentWithSymbolicUpperBounds) {
  RandomExprs gen(0xb0b, {{"b", {0, 20}}, {"s", {0, 40}}});
  const Expr b = "b", c = "c";
  const UpperBounds below{{"a", s}, {"c", a + 2}};
  int compared = 0, used = 0;
  for (int i = 0; i < 3000; ++i) {
    Expr e;
    if (i % 2 == 0) {
      e = gen.tree(5);
    } else {  // k a + y + k s q over k s (or k (s + 1)), y small or a sub-tree
      const int64_t k = gen.uniform(1, 8);
      const Expr d = gen.uniform(0, 1) ? k * s : k * (s + 1);
      const Expr y = gen.uniform(0, 1) ? Expr(gen.uniform(-1, k)) : b % gen.divisor() + c;
      const Expr n = k * (gen.uniform(0, 1) ? a : c) + y + d * gen.tree(2);
      e = gen.uniform(0, 1) ? n / d : n % d;
    }
    const Expr simple = e.simplify(gen.ranges(), below);
    if (simple != e.simplify(gen.ranges())) ++used;
    for (int j = 0; j < 30; ++j) {
      DimMap v = gen.assignment();
      v["s"] = gen.uniform(1, 40);  // a < s leaves no a for s = 0
      v["a"] = gen.uniform(0, v["s"] - 1);
      v["c"] = gen.uniform(0, v["a"] + 1);
      const auto expected = checked_eval(e, v);
      if (!expected) continue;
      int64_t got = 0;
      EXPECT_NO_THROW(got = simple.eval(v)) << e.to_c() << "  ->  " << simple.to_c();
      ASSERT_EQ(got, *expected) << e.to_c() << "  ->  " << simple.to_c() << " at a=" << v["a"]
                                << " b=" << v["b"] << " c=" << v["c"] << " s=" << v["s"];
      ++compared;
    }
  }
  EXPECT_GT(compared, 40000);
  EXPECT_GT(used, 300);  // the bounds changed that many results
}

TEST(SimplifyProperty, SimplifyIsIdempotent) {
  RandomExprs gen(7, {{"b", {-6, 6}}});
  for (int i = 0; i < 1000; ++i) {
    const Expr once = gen.tree(5).simplify(gen.ranges());
    ASSERT_EQ(once.simplify(gen.ranges()), once) << once.to_c();
  }
}

TEST(SimplifyProperty, BoundsContainEveryValue) {
  RandomExprs gen(99, {{"a", {1, 10}}, {"b", {-6, 6}}, {"s", {2, 40}}});
  int checked = 0;
  for (int i = 0; i < 1000; ++i) {
    const Expr e = gen.tree(4);
    const Range r = bounds(e, gen.ranges());
    for (int j = 0; j < 20; ++j) {
      const DimMap v = gen.assignment();
      const auto value = checked_eval(e, v);
      if (!value) continue;
      ASSERT_LE(r.lo, *value) << e.to_c();
      ASSERT_GE(r.hi, *value) << e.to_c();
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(SimplifyProperty, ProvablyEqualToItsSimplification) {
  RandomExprs gen(2024, {});
  for (int i = 0; i < 300; ++i) {
    const Expr e = gen.tree(4);
    ASSERT_TRUE(provably_equal(e, e.simplify())) << e.to_c();
    ASSERT_TRUE(provably_equal(e + 1, 1 + e)) << e.to_c();
  }
}

}  // namespace
}  // namespace luminal
