// Element-wise ops: values checked against the C library (std::exp, std::erf,
// std::remainder...) and hand-computed edge cases (inf, nan, -0.0, INT_MIN).
// The op-by-op torch comparison lives in python/tests/test_elementwise.py.
#include "luminal/frontend/elementwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `out` with input "x" (and "y") bound to the given values.
TensorData run1(Graph& g, const Tensor& out, const TensorData& x,
                const std::optional<TensorData>& y = std::nullopt) {
  g.output("out", out);
  Interpreter it(g);
  it.set_input("x", x);
  if (y) it.set_input("y", *y);
  it.run();
  return it.output("out");
}

TensorData f32(const std::vector<double>& v) {
  return TensorData::from_doubles(DType::F32, {static_cast<int64_t>(v.size())}, v);
}

// Same value, nan == nan, and the same sign of zero.
void expect_same(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
  } else {
    EXPECT_EQ(got, want) << what;
    if (want == 0) {
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << what << " sign of zero";
    }
  }
}

template <typename Op, typename F>
void check_unary(Op op, const std::vector<double>& xs, F ref, double rel_tol, const char* name) {
  Graph g;
  Tensor x = g.input("x", {static_cast<int64_t>(xs.size())});
  TensorData out = run1(g, op(x), f32(xs));
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = static_cast<float>(ref(static_cast<double>(static_cast<float>(xs[i]))));
    double got = out.get(static_cast<int64_t>(i));
    if (std::isnan(want) || std::isinf(want)) {
      expect_same(got, want, std::string(name) + "(" + std::to_string(xs[i]) + ")");
    } else {
      EXPECT_NEAR(got, want, rel_tol * std::fabs(want) + 1e-38) << name << "(" << xs[i] << ")";
    }
  }
}

// The luminal op `f` as a callable (the names are overloaded with <cmath>'s).
#define LUMINAL_OP(f) [](const Tensor& t) { return luminal::f(t); }

const std::vector<double> kSamples = {-30,  -9.5, -3,   -1.25, -0.7, -0.3, -1e-3, -1e-8, 0,  1e-8,
                                      1e-3, 0.3,  0.49, 0.51,  1,    2.5,  4.1,   10,    30, 80};

}  // namespace

TEST(FrontendElementwise, TranscendentalsMatchTheCLibrary) {
  const double ulp = 1.2e-7;  // within ~1 f32 ulp of the correctly rounded value
  check_unary(
      LUMINAL_OP(exp), kSamples, [](double v) { return std::exp(v); }, ulp, "exp");
  check_unary(
      LUMINAL_OP(expm1), kSamples, [](double v) { return std::expm1(v); }, ulp, "expm1");
  check_unary(
      LUMINAL_OP(tanh), kSamples, [](double v) { return std::tanh(v); }, ulp, "tanh");
  check_unary(
      LUMINAL_OP(sigmoid), kSamples, [](double v) { return 1 / (1 + std::exp(-v)); }, ulp,
      "sigmoid");
  check_unary(
      LUMINAL_OP(erf), kSamples, [](double v) { return std::erf(v); }, ulp, "erf");
  check_unary(
      LUMINAL_OP(erfc), kSamples, [](double v) { return std::erfc(v); }, ulp, "erfc");
  check_unary(
      LUMINAL_OP(cos), kSamples, [](double v) { return std::cos(v); }, ulp, "cos");
  check_unary(
      LUMINAL_OP(sinh), kSamples, [](double v) { return std::sinh(v); }, ulp, "sinh");
  std::vector<double> pos = {1e-30, 1e-8, 1e-3, 0.5, 1, 2, 1000, 3e38};
  check_unary(
      LUMINAL_OP(log), pos, [](double v) { return std::log(v); }, 2 * ulp, "log");
  check_unary(
      LUMINAL_OP(log10), pos, [](double v) { return std::log10(v); }, 2 * ulp, "log10");
  check_unary(
      LUMINAL_OP(log1p), kSamples, [](double v) { return std::log1p(v); }, ulp, "log1p");
}

TEST(FrontendElementwise, ErfIsAccurateOnADenseGrid) {
  std::vector<double> xs;
  for (double v = -6; v <= 6; v += 0.0137) xs.push_back(v);
  // f32 erf is computed in f32 (within 2 ulp, tests/frontend/erf_f32_test.cpp);
  // erfc in f64, rounded once.
  check_unary(
      LUMINAL_OP(erf), xs, [](double v) { return std::erf(v); }, 2.5e-7, "erf");
  check_unary(
      LUMINAL_OP(erfc), xs, [](double v) { return std::erfc(v); }, 1.2e-7, "erfc");
}

TEST(FrontendElementwise, EdgeValues) {
  const std::vector<double> xs = {kNaN, kInf, -kInf, 0.0, -0.0, 2.5, -2.5, 0.5, 1.5};
  check_unary(
      LUMINAL_OP(exp), xs, [](double v) { return std::exp(v); }, 0, "exp");
  check_unary(
      LUMINAL_OP(tanh), {kNaN, kInf, -kInf}, [](double v) { return std::tanh(v); }, 0, "tanh");
  check_unary(
      LUMINAL_OP(sigmoid), {kNaN, kInf, -kInf}, [](double v) { return 1 / (1 + std::exp(-v)); }, 0,
      "sigmoid");
  check_unary(
      LUMINAL_OP(erf), {kNaN, kInf, -kInf}, [](double v) { return std::erf(v); }, 0, "erf");
  // round: half to even (nearbyint), trunc / floor / ceil as C.
  check_unary([](const Tensor& t) { return round(t); }, xs,
              [](double v) { return std::nearbyint(v); }, 0, "round");
  check_unary(
      LUMINAL_OP(trunc), {kNaN, kInf, -kInf, 2.5, -2.5, 1e30},
      [](double v) { return std::trunc(v); }, 0, "trunc");
  check_unary(
      LUMINAL_OP(floor), {kNaN, kInf, -kInf, 2.5, -2.5, -3.0, 1e30},
      [](double v) { return std::floor(v); }, 0, "floor");
  check_unary(
      LUMINAL_OP(ceil), {kNaN, kInf, -kInf, 2.5, -2.5, 3.0}, [](double v) { return std::ceil(v); },
      0, "ceil");
  // abs(-0.0) is +0.0; sign(nan) is 0 as torch.
  check_unary(
      LUMINAL_OP(abs), xs, [](double v) { return std::fabs(v); }, 0, "abs");
  check_unary(
      LUMINAL_OP(sign), {kNaN, -2.0, 3.0, kInf},
      [](double v) { return std::isnan(v) ? 0.0 : (v > 0) - (v < 0); }, 0, "sign");
  // relu keeps nan and maps -inf to 0.
  check_unary(
      LUMINAL_OP(relu), {kNaN, -kInf, kInf, -1.0, 2.0}, [](double v) { return v < 0 ? 0.0 : v; }, 0,
      "relu");
}

TEST(FrontendElementwise, WhereNeverLeaksTheUnselectedBranch) {
  Graph g;
  Tensor x = g.input("x", {4});
  Tensor c = lt(x, 0.0);
  // causal-mask style: -inf where x < 0, x elsewhere; and inf in the unselected branch.
  Tensor r = where(c, -kInf, x);
  TensorData out = run1(g, r, f32({-1, 2, kInf, -kInf}));
  expect_same(out.get(0), -kInf, "where0");
  expect_same(out.get(1), 2, "where1");
  expect_same(out.get(2), kInf, "where2");
  expect_same(out.get(3), -kInf, "where3");
  EXPECT_THROW(where(x, x, x), DTypeError);
}

TEST(FrontendElementwise, MaximumMinimumPropagateNan) {
  Graph g;
  Tensor x = g.input("x", {4});
  Tensor y = g.input("y", {4});
  Tensor r = add(maximum(x, y), mul(minimum(x, y), 1000.0));
  TensorData out = run1(g, r, f32({1, kNaN, 3, -kInf}), f32({2, 5, kNaN, 4}));
  expect_same(out.get(0), 2 + 1000, "max/min");
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_TRUE(std::isnan(out.get(2)));
  expect_same(out.get(3), 4 - kInf, "max/min -inf");
}

TEST(FrontendElementwise, IntegerMinimumDoesNotOverflow) {
  Graph g;
  Tensor x = g.input("x", {3}, DType::I32);
  Tensor r = minimum(x, 0);
  g.output("out", r);
  Interpreter it(g);
  it.set_input("x", TensorData::from_ints(DType::I32, {3}, {INT32_MIN, 5, -7}));
  it.run();
  EXPECT_EQ(it.output("out").to_ints(), (std::vector<int64_t>{INT32_MIN, 0, -7}));
  EXPECT_EQ(r.dtype(), DType::I32);
}

TEST(FrontendElementwise, PowSignsAndSpecialCases) {
  Graph g;
  Tensor x = g.input("x", {6});
  Tensor y = g.input("y", {6});
  TensorData out =
      run1(g, pow(x, y), f32({-2, -2, -8, 0, kNaN, 1}), f32({3, 2, 1.0 / 3, -1, 0, kNaN}));
  std::vector<double> want = {-8, 4, kNaN, kInf, 1, 1};
  for (int i = 0; i < 6; ++i) expect_same(out.get(i), want[i], "pow " + std::to_string(i));
  Graph g2;
  Tensor x2 = g2.input("x", {3});
  TensorData out2 = run1(g2, pow(x2, 3), f32({-1.5, 2, -0.0}));
  expect_same(out2.get(0), -3.375, "pow3");
  expect_same(out2.get(1), 8, "pow3");
  expect_same(out2.get(2), -0.0, "pow3 -0");
  Graph g3;
  Tensor i = g3.input("x", {3}, DType::I64);
  EXPECT_THROW(pow(i, -1), DTypeError);
  Tensor p = pow(i, i);
  g3.output("out", p);
  Interpreter it(g3);
  it.set_input("x", TensorData::from_ints(DType::I64, {3}, {-3, 0, 5}));
  it.run();
  // (-3)^-3 -> 0 as torch's integer pow; 0^0 = 1; 5^5 = 3125.
  EXPECT_EQ(it.output("out").to_ints(), (std::vector<int64_t>{0, 1, 3125}));
}

TEST(FrontendElementwise, RemainderFloorDivideFollowTheDivisorSign) {
  Graph g;
  Tensor x = g.input("x", {4});
  Tensor y = g.input("y", {4});
  Tensor r = add(mul(remainder(x, y), 100.0), floor_divide(x, y));
  std::vector<double> a = {-7, 7, 7.5, -7.5}, b = {2, -2, 2, -2};
  TensorData out = run1(g, r, f32(a), f32(b));
  for (int i = 0; i < 4; ++i) {
    double rem = a[i] - std::floor(a[i] / b[i]) * b[i];
    EXPECT_EQ(out.get(i), rem * 100 + std::floor(a[i] / b[i])) << i;
  }
  Graph gi;
  Tensor xi = gi.input("x", {4}, DType::I32);
  Tensor yi = gi.input("y", {4}, DType::I32);
  Tensor ri = add(mul(remainder(xi, yi), 100), floor_divide(xi, yi));
  gi.output("out", ri);
  Interpreter it(gi);
  it.set_input("x", TensorData::from_ints(DType::I32, {4}, {-7, 7, 9, -9}));
  it.set_input("y", TensorData::from_ints(DType::I32, {4}, {2, -2, 3, -4}));
  it.run();
  EXPECT_EQ(it.output("out").to_ints(), (std::vector<int64_t>{100 - 4, -100 - 4, 3, -100 + 2}));
}

TEST(FrontendElementwise, ComparisonsWithNanAndInfinities) {
  Graph g;
  Tensor x = g.input("x", {4});
  Tensor y = g.input("y", {4});
  auto as_int = [](const Tensor& b) { return to(b, DType::I32); };
  // Bit-pack eq, ne, le, ge, isnan(x), isinf(x) per element.
  Tensor packed = add(add(add(as_int(eq(x, y)), mul(as_int(ne(x, y)), 2)),
                          add(mul(as_int(le(x, y)), 4), mul(as_int(ge(x, y)), 8))),
                      add(mul(as_int(isnan(x)), 16), mul(as_int(isinf(x)), 32)));
  TensorData out = run1(g, packed, f32({kNaN, kInf, -kInf, 1}), f32({kNaN, kInf, kInf, 1}));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{2 + 16, 1 + 4 + 8 + 32, 2 + 4 + 32, 1 + 4 + 8}));
}

TEST(FrontendElementwise, ClampAndActivations) {
  Graph g;
  Tensor x = g.input("x", {5});
  TensorData out = run1(g, clamp(x, -1.0, 2.0), f32({kNaN, -5, 0.5, 7, -kInf}));
  expect_same(out.get(1), -1, "clamp lo");
  expect_same(out.get(3), 2, "clamp hi");
  expect_same(out.get(4), -1, "clamp -inf");
  EXPECT_TRUE(std::isnan(out.get(0)));
  Graph g2;
  Tensor x2 = g2.input("x", {3});
  TensorData o2 = run1(g2, gelu(x2), f32({-1, 0.5, 3}));
  for (int i = 0; i < 3; ++i) {
    double v = std::vector<double>{-1, 0.5, 3}[i];
    EXPECT_NEAR(o2.get(i), 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-7);
  }
  Graph g3;
  Tensor x3 = g3.input("x", {2});
  TensorData o3 = run1(g3, softplus(x3), f32({-3, 25}));
  EXPECT_NEAR(o3.get(0), std::log1p(std::exp(-3.0)), 1e-8);
  EXPECT_EQ(o3.get(1), 25);  // above the threshold: x itself
}
