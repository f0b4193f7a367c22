// Reductions: hand-computed values and the traps of SPEC sections 2 and 12
// (prod of negatives and integers, min over INT_MIN, argmax with nan, stable
// logsumexp). The op-by-op torch comparison lives in python/tests/test_reduction.py.
#include "luminal/frontend/reduction.hpp"

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

TensorData run(Graph& g, const Tensor& out, const TensorData& x, const DimMap& dims = {}) {
  g.output("out", out);
  Interpreter it(g);
  it.set_input("x", x);
  it.run(dims);
  return it.output("out");
}

TensorData f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}

}  // namespace

TEST(FrontendReduction, SumMeanKeepdimAndDtypes) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  Tensor s = sum(x, {-1}, true);
  EXPECT_EQ(to_string(s.shape()), "[2, 1]");
  EXPECT_EQ(run(g, s, f32({2, 3}, {1, 2, 3, 4, 5, 6})).to_doubles(), (std::vector<double>{6, 15}));
  Graph g2;
  Tensor xi = g2.input("x", {2, 3}, DType::I32);
  Tensor si = sum(xi);
  EXPECT_EQ(si.dtype(), DType::I64);
  EXPECT_EQ(si.rank(), 0u);
  EXPECT_THROW(mean(xi), DTypeError);
  EXPECT_THROW(sum(xi, {0, -2}), ShapeError);
  EXPECT_THROW(sum(xi, {2}), ShapeError);
  Graph g3;
  Tensor x3 = g3.input("x", {"s", 2});
  TensorData m = run(g3, mean(x3, {0, 1}), f32({3, 2}, {1, 2, 3, 4, 5, 7}));
  EXPECT_FLOAT_EQ(static_cast<float>(m.get(0)), 22.0f / 6.0f);
}

TEST(FrontendReduction, ProdIsExactForNegativesAndIntegers) {
  Graph g;
  Tensor x = g.input("x", {7}, DType::I64);
  g.output("out", prod(x));
  Interpreter it(g);
  it.set_input("x", TensorData::from_ints(DType::I64, {7}, {-3, 5, 7, -11, 13, 1000003, -2}));
  it.run();
  EXPECT_EQ(it.output("out").get_int(0), int64_t{-3} * 5 * 7 * -11 * 13 * 1000003 * -2);
  Graph g2;
  Tensor xf = g2.input("x", {2, 3});
  TensorData p = run(g2, prod(xf, 1), f32({2, 3}, {-1, 2, -3, 0, kInf, 1}));
  EXPECT_EQ(p.get(0), 6);
  EXPECT_TRUE(std::isnan(p.get(1)));  // 0 * inf
  Graph g3;
  Tensor xs = g3.input("x", {"s"});
  EXPECT_THROW(prod(xs), ShapeError);
}

TEST(FrontendReduction, MinMaxArgmaxArgmin) {
  Graph g;
  Tensor x = g.input("x", {2, 4}, DType::I32);
  auto [vals, idx] = min(x, 1);
  EXPECT_EQ(idx.dtype(), DType::I64);
  g.output("vals", vals);
  g.output("idx", idx);
  g.output("amax", argmax(x, 1, true));
  Interpreter it(g);
  it.set_input("x", TensorData::from_ints(DType::I32, {2, 4},
                                          {3, INT32_MIN, 9, INT32_MIN,  //
                                           7, 7, -1, 7}));
  it.run();
  EXPECT_EQ(it.output("vals").to_ints(), (std::vector<int64_t>{INT32_MIN, -1}));
  EXPECT_EQ(it.output("idx").to_ints(), (std::vector<int64_t>{1, 2}));   // first occurrence
  EXPECT_EQ(it.output("amax").to_ints(), (std::vector<int64_t>{2, 0}));  // first occurrence
  EXPECT_EQ(it.output("amax").shape(), (std::vector<int64_t>{2, 1}));

  Graph gf;
  Tensor xf = gf.input("x", {5});
  gf.output("am", argmax(xf));
  gf.output("an", argmin(xf));
  gf.output("mx", max(xf));
  Interpreter itf(gf);
  itf.set_input("x", f32({5}, {1, kNaN, 9, kNaN, -kInf}));
  itf.run();
  EXPECT_EQ(itf.output("am").get_int(0), 1);  // nan counts as the max (first one)
  EXPECT_EQ(itf.output("an").get_int(0), 1);  // and as the min
  EXPECT_TRUE(std::isnan(itf.output("mx").get(0)));
}

TEST(FrontendReduction, VarStdLogsumexp) {
  Graph g;
  Tensor x = g.input("x", {2, 4});
  g.output("var", var(x, {1}));
  g.output("std0", luminal::std(x, {1}, 0.0));
  g.output("lse", logsumexp(x, {1}));
  Interpreter it(g);
  it.set_input("x", f32({2, 4}, {1, 2, 3, 4, -kInf, -kInf, -kInf, -kInf}));
  it.run();
  EXPECT_FLOAT_EQ(static_cast<float>(it.output("var").get(0)), 5.0f / 3.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(it.output("std0").get(0)), std::sqrt(1.25f));
  double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0));
  EXPECT_FLOAT_EQ(static_cast<float>(it.output("lse").get(0)), static_cast<float>(lse));
  EXPECT_EQ(it.output("lse").get(1), -kInf);  // all -inf row
}

TEST(FrontendReduction, AnyAllCountNonzero) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  g.output("any", any(x, {1}));
  g.output("all", all(x, {1}));
  g.output("cnt", count_nonzero(x));
  Interpreter it(g);
  it.set_input("x", f32({2, 3}, {0, kNaN, 0, 1, 2, 3}));
  it.run();
  EXPECT_EQ(it.output("any").to_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(it.output("all").to_ints(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(it.output("cnt").get_int(0), 4);
}

TEST(FrontendReduction, CumsumCumprod) {
  Graph g;
  Tensor x = g.input("x", {2, 5});
  g.output("cs", cumsum(x, 1));
  g.output("cp", cumprod(x, -1));
  g.output("cs0", cumsum(x, 0));
  Interpreter it(g);
  it.set_input("x", f32({2, 5}, {1, 2, 3, 4, 5, -1, kInf, 2, 0, 3}));
  it.run();
  std::vector<double> cs = it.output("cs").to_doubles();
  EXPECT_EQ(std::vector<double>(cs.begin(), cs.begin() + 5),
            (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(cs[5], -1);
  EXPECT_EQ(cs[9], kInf);
  std::vector<double> cp = it.output("cp").to_doubles();
  EXPECT_EQ(std::vector<double>(cp.begin(), cp.begin() + 5),
            (std::vector<double>{1, 2, 6, 24, 120}));
  EXPECT_EQ(cp[6], -kInf);
  EXPECT_TRUE(std::isnan(cp[8]));  // -inf * 0
  EXPECT_EQ(it.output("cs0").to_doubles()[9], 8);
  EXPECT_EQ(it.output("cs0").to_doubles()[5], 0);

  // Symbolic axis: the triangular-mask form.
  Graph gs;
  Tensor xs = gs.input("x", {"s"}, DType::I32);
  Tensor c = cumsum(xs, 0);
  EXPECT_EQ(c.dtype(), DType::I64);
  gs.output("out", c);
  Interpreter its(gs);
  its.set_input("x", TensorData::from_ints(DType::I32, {4}, {5, -2, 7, 1}));
  its.run();
  EXPECT_EQ(its.output("out").to_ints(), (std::vector<int64_t>{5, 3, 10, 11}));
}

TEST(FrontendReduction, Norms) {
  Graph g;
  Tensor x = g.input("x", {2, 2});
  g.output("l2", norm(x));
  g.output("l1", vector_norm(x, 1.0, {1}));
  g.output("linf", vector_norm(x, kInf));
  g.output("l3", vector_norm(x, 3.0));
  Interpreter it(g);
  it.set_input("x", f32({2, 2}, {3, -4, 0, 12}));
  it.run();
  EXPECT_FLOAT_EQ(static_cast<float>(it.output("l2").get(0)), 13.0f);
  EXPECT_EQ(it.output("l1").to_doubles(), (std::vector<double>{7, 12}));
  EXPECT_EQ(it.output("linf").get(0), 12);
  EXPECT_FLOAT_EQ(static_cast<float>(it.output("l3").get(0)),
                  static_cast<float>(std::cbrt(27.0 + 64 + 1728)));
}
