// Creation ops: hand-computed ranges and masks; random tensors checked for
// determinism, range and moments (not against torch's generator).
#include "luminal/frontend/creation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {
std::vector<double> eval(Graph& g, const Tensor& t, const DimMap& dims = {}) {
  g.output("out", t);
  Interpreter it(g);
  it.run(dims);
  return it.output("out").to_doubles();
}

void moments(const std::vector<double>& v, double& mean, double& var) {
  mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  var = 0;
  for (double x : v) var += (x - mean) * (x - mean) / static_cast<double>(v.size());
}
}  // namespace

TEST(FrontendCreation, RangesAndFills) {
  Graph g;
  Tensor a = arange(g, 0.5, 2.0, 0.5);
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(eval(g, a), (std::vector<double>{0.5, 1.0, 1.5}));
  Graph g2;
  Tensor b = arange(g2, 10, 2, -3);
  EXPECT_EQ(b.dtype(), DType::I64);
  EXPECT_EQ(eval(g2, b), (std::vector<double>{10, 7, 4}));
  Graph g3;
  EXPECT_THROW(arange(g3, 0, 5, -1), ShapeError);
  EXPECT_THROW(arange(g3, 0, 5, 0), ShapeError);
  Tensor l = linspace(g3, -1, 1, 5);
  EXPECT_EQ(eval(g3, l), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  Graph g4;
  Tensor f = full(g4, {2, "s"}, 7);
  EXPECT_EQ(f.dtype(), DType::I64);
  EXPECT_EQ(eval(g4, f, {{"s", 2}}), (std::vector<double>{7, 7, 7, 7}));
}

TEST(FrontendCreation, EyeAndTriangles) {
  Graph g;
  EXPECT_EQ(eval(g, eye(g, 2, 3)), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  Graph g2;
  Tensor x = g2.input("x", {3, 3});
  g2.output("lo", tril(x, -1));
  g2.output("up", triu(x, 1));
  Interpreter it(g2);
  double inf = std::numeric_limits<double>::infinity();
  it.set_input("x", TensorData::from_doubles(DType::F32, {3, 3}, {1, inf, 3, 4, 5, 6, 7, 8, -inf}));
  it.run();
  EXPECT_EQ(it.output("lo").to_doubles(), (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(it.output("up").to_doubles(), (std::vector<double>{0, inf, 3, 0, 0, 6, 0, 0, 0}));
  Graph g3;
  Tensor m = tril_mask(g3, "s", "s");
  EXPECT_EQ(eval(g3, to(m, DType::I32), {{"s", 2}}), (std::vector<double>{1, 0, 1, 1}));
}

TEST(FrontendCreation, RandomIsDeterministicUniformAndNormal) {
  Graph g;
  g.output("u", rand(g, {4096}, 7));
  g.output("u2", rand(g, {4096}, 7));
  g.output("v", rand(g, {4096}, 8));
  g.output("n", randn(g, {4096}, 7));
  g.output("i", randint(g, -3, 5, {4096}, 7));
  g.output("h", rand(g, {64}, 1, DType::F16));
  Interpreter it(g);
  it.run();
  std::vector<double> u = it.output("u").to_doubles();
  EXPECT_EQ(u, it.output("u2").to_doubles());
  EXPECT_NE(u, it.output("v").to_doubles());
  double mean = 0, var = 0;
  moments(u, mean, var);
  for (double x : u) ASSERT_TRUE(x >= 0 && x < 1) << x;
  EXPECT_NEAR(mean, 0.5, 0.02);
  EXPECT_NEAR(var, 1.0 / 12, 0.01);
  // Adjacent elements are uncorrelated.
  double cov = 0;
  for (size_t i = 1; i < u.size(); ++i) cov += (u[i] - mean) * (u[i - 1] - mean) / u.size();
  EXPECT_NEAR(cov / var, 0, 0.05);
  moments(it.output("n").to_doubles(), mean, var);
  EXPECT_NEAR(mean, 0, 0.05);
  EXPECT_NEAR(var, 1, 0.07);
  std::vector<int64_t> ri = it.output("i").to_ints();
  std::vector<int> counts(8, 0);
  for (int64_t v : ri) {
    ASSERT_TRUE(v >= -3 && v < 5) << v;
    counts[v + 3]++;
  }
  for (int c : counts) EXPECT_NEAR(c, 512, 100);
  for (double x : it.output("h").to_doubles()) EXPECT_TRUE(x >= 0 && x < 1);
}
