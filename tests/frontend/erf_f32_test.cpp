// erf and exact GELU computed in f32 (f32 / f16 / bf16 inputs): the maximum
// error against double std::erf over a sample of every f32 bit pattern and a
// dense grid, through the reference interpreter (this file) and the CPU
// backend's generated kernel (tests/backends/cpu/erf_kernel_test.cpp), plus
// the edges (+-0 with their signs, +-inf, NaN, subnormals, |x| > 4).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal {
namespace {

// |got - want| in units of the f32 ulp at `want` (subnormal spacing below
// 2^-126); non-finite results must match exactly.
double ulp_error(double got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got) || std::isinf(got)) return got == want ? 0.0 : INFINITY;
  int ex = 0;
  std::frexp(std::fabs(want), &ex);
  const double ulp = std::ldexp(1.0, std::max(ex - 1, -126) - 23);
  return std::fabs(got - want) / ulp;
}

// Every 16411th f32 bit pattern (~260K values, every sign and exponent) and a
// dense grid over [-6, 6] where erf is not yet +-1.
std::vector<double> samples() {
  std::vector<double> v;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 16411)
    v.push_back(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(b))));
  for (int i = -100000; i <= 100000; ++i) v.push_back(static_cast<float>(i * 6e-5));
  return v;
}

TensorData run_unary(DType d, const std::vector<double>& xs,
                     const std::function<Tensor(const Tensor&)>& f) {
  Graph g;
  Tensor x = g.input("x", {static_cast<int64_t>(xs.size())}, d);
  g.output("y", f(x));
  Interpreter it(g);
  it.set_input("x", TensorData::from_doubles(d, {static_cast<int64_t>(xs.size())}, xs));
  it.run();
  return it.output("y");
}

TEST(ErfF32, WithinTwoUlpOfDoubleErf) {
  const std::vector<double> xs = samples();
  const TensorData y = run_unary(DType::F32, xs, [](const Tensor& t) { return erf(t); });
  ASSERT_EQ(y.dtype(), DType::F32);
  double worst = 0.0, at = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(y.get(static_cast<int64_t>(i)), std::erf(xs[i]));
    if (!(e <= worst)) worst = e, at = xs[i];
  }
  RecordProperty("max_ulp", std::to_string(worst));
  EXPECT_LE(worst, 2.0) << "at x = " << at;
}

TEST(ErfF32, Edges) {
  const double inf = std::numeric_limits<double>::infinity();
  const double sub = std::ldexp(1.0, -149);
  const std::vector<double> xs = {0.0,  -0.0,  inf,   -inf,   std::nan(""), sub,
                                  -sub, 1e-40, 1e-30, -3e-20, 4.0,          -4.5,
                                  10.0, -1e30, 3e38,  1.0,    -1.0,         0.999999940395355225};
  const TensorData y = run_unary(DType::F32, xs, [](const Tensor& t) { return erf(t); });
  for (size_t i = 0; i < xs.size(); ++i) {
    const double got = y.get(static_cast<int64_t>(i));
    const double want = static_cast<float>(std::erf(xs[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << xs[i];
      continue;
    }
    EXPECT_LE(ulp_error(got, std::erf(xs[i])), 2.0) << "erf(" << xs[i] << ") = " << got;
    if (want == 0.0 || std::fabs(want) == 1.0) {
      EXPECT_EQ(got, want) << "erf(" << xs[i] << ")";
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << "sign of erf(" << xs[i] << ")";
    }
  }
}

// f16 / bf16 inputs compute in f32 and round once: within one ulp of their dtype.
TEST(ErfF32, HalfPrecisionInputs) {
  std::vector<double> xs;
  for (int i = -600; i <= 600; ++i) xs.push_back(i * 0.01);
  for (DType d : {DType::F16, DType::BF16}) {
    const TensorData y = run_unary(d, xs, [](const Tensor& t) { return erf(t); });
    ASSERT_EQ(y.dtype(), d);
    const TensorData xin = TensorData::from_doubles(d, {static_cast<int64_t>(xs.size())}, xs);
    const double eps = d == DType::F16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = std::erf(xin.get(static_cast<int64_t>(i)));
      EXPECT_NEAR(y.get(static_cast<int64_t>(i)), want, eps * std::fabs(want) + 1e-7)
          << to_string(d) << " erf(" << xin.get(static_cast<int64_t>(i)) << ")";
    }
  }
}

// Exact GELU x / 2 (1 + erf(x / sqrt 2)) in f32: 1 + erf is formed without
// cancellation for x << 0 (it is erfc there), so the relative error stays
// small far into the negative tail, where the f64 formula is the reference.
TEST(ErfF32, GeluMatchesDoubleFormula) {
  std::vector<double> xs;
  for (int i = -12000; i <= 8000; ++i) xs.push_back(static_cast<float>(i * 1e-3));
  // Where the sign mask must still saturate: down to the smallest subnormal,
  // and magnitudes whose scaled copy overflows to inf.
  for (int k = 1; k <= 149; ++k)
    for (double sign : {1.0, -1.0}) xs.push_back(sign * std::ldexp(1.0, -k));
  for (double big : {1e20, 1e30, 3e38}) xs.insert(xs.end(), {big, -big});
  const TensorData y = run_unary(DType::F32, xs, [](const Tensor& t) { return gelu(t); });
  // Worst relative error for |x| < 1, for 1 <= |x| < 5, and for all x.
  double worst[3] = {0.0, 0.0, 0.0}, at[3] = {0.0, 0.0, 0.0};
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double want = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    const double got = y.get(static_cast<int64_t>(i));
    const double rel = std::fabs(got - want) / std::max(std::fabs(want), 1e-38);
    const int region = std::fabs(x) < 1.0 ? 0 : (std::fabs(x) < 5.0 ? 1 : 2);
    for (int r : {region, 2})
      if (!(rel <= worst[r])) worst[r] = rel, at[r] = x;
  }
  // A few roundings of 2^-24 near 0 (one branch for every x: erfc relative
  // to 1 there); x / sqrt 2 rounded moves erfc by 2 x^2 of that in the tail
  // (x = -5: ~3e-6 relative, x = -12: ~2e-5).
  EXPECT_LE(worst[0], 6e-7) << "at x = " << at[0];
  EXPECT_LE(worst[1], 4e-6) << "at x = " << at[1];
  EXPECT_LE(worst[2], 5e-5) << "at x = " << at[2];
  const double inf = std::numeric_limits<double>::infinity();
  const TensorData e =
      run_unary(DType::F32, {0.0, -0.0, inf, 50.0, -50.0}, [](const Tensor& t) { return gelu(t); });
  EXPECT_EQ(e.get(0), 0.0);
  EXPECT_EQ(e.get(2), inf);
  EXPECT_EQ(e.get(3), 50.0);
  EXPECT_EQ(e.get(4), 0.0);
}

}  // namespace
}  // namespace luminal
