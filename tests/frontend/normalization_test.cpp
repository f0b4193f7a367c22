// Normalizations: hand-computed values (the op-by-op torch comparison lives in
// python/tests/test_normalization.py).
#include "luminal/frontend/normalization.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

TensorData f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}
}  // namespace

TEST(FrontendNormalization, SoftmaxAndLogSoftmax) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  g.output("sm", softmax(x, -1));
  g.output("lsm", log_softmax(x, 1));
  Interpreter it(g);
  it.set_input("x", f32({2, 3}, {1, 2, 3, -kInf, 1000, -kInf}));
  it.run();
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  std::vector<double> sm = it.output("sm").to_doubles();
  for (int i = 0; i < 3; ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(sm[i]), static_cast<float>(std::exp(i + 1.0) / z));
  EXPECT_EQ(sm[3], 0);
  EXPECT_EQ(sm[4], 1);  // large values do not overflow
  std::vector<double> lsm = it.output("lsm").to_doubles();
  EXPECT_FLOAT_EQ(static_cast<float>(lsm[2]), static_cast<float>(3 - std::log(z)));
  EXPECT_EQ(lsm[3], -kInf);
  EXPECT_THROW(softmax(x, 2), ShapeError);
}

TEST(FrontendNormalization, LayerNormRmsNorm) {
  Graph g;
  Tensor x = g.input("x", {2, 4});
  Tensor w = g.input("w", {4});
  Tensor b = g.input("b", {4});
  g.output("ln", layer_norm(x, {4}, w, b, 1e-5));
  g.output("rms", rms_norm(x, {4}, w, 1e-6));
  EXPECT_THROW(layer_norm(x, {3}), ShapeError);
  Interpreter it(g);
  std::vector<double> xv = {1, 2, 3, 4, -2, 0, 2, 8};
  it.set_input("x", f32({2, 4}, xv));
  it.set_input("w", f32({4}, {1, 2, 0.5, -1}));
  it.set_input("b", f32({4}, {0, 1, 0, 2}));
  it.run();
  std::vector<double> wv = {1, 2, 0.5, -1}, bv = {0, 1, 0, 2};
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0, ms = 0;
    for (int i = 0; i < 4; ++i) m += xv[r * 4 + i] / 4;
    for (int i = 0; i < 4; ++i) v += (xv[r * 4 + i] - m) * (xv[r * 4 + i] - m) / 4;
    for (int i = 0; i < 4; ++i) ms += xv[r * 4 + i] * xv[r * 4 + i] / 4;
    for (int i = 0; i < 4; ++i) {
      double ln = (xv[r * 4 + i] - m) / std::sqrt(v + 1e-5) * wv[i] + bv[i];
      double rms = xv[r * 4 + i] / std::sqrt(ms + 1e-6) * wv[i];
      EXPECT_NEAR(it.output("ln").get(r * 4 + i), ln, 1e-6);
      EXPECT_NEAR(it.output("rms").get(r * 4 + i), rms, 1e-6);
    }
  }
}

TEST(FrontendNormalization, GroupAndBatchNorm) {
  Graph g;
  Tensor x = g.input("x", {1, 4, 2});
  Tensor rm = g.input("rm", {4});
  Tensor rv = g.input("rv", {4});
  g.output("gn", group_norm(x, 2));
  g.output("bn", batch_norm(x, rm, rv));
  EXPECT_THROW(group_norm(x, 3), ShapeError);
  EXPECT_THROW(batch_norm(x, std::nullopt, std::nullopt), Error);
  Interpreter it(g);
  std::vector<double> xv = {1, 2, 3, 4, 10, 10, 0, 20};
  it.set_input("x", f32({1, 4, 2}, xv));
  it.set_input("rm", f32({4}, {1, 0, -1, 2}));
  it.set_input("rv", f32({4}, {4, 1, 0.25, 9}));
  it.run();
  // group 0 = {1, 2, 3, 4}: mean 2.5, var 1.25
  EXPECT_NEAR(it.output("gn").get(0), (1 - 2.5) / std::sqrt(1.25 + 1e-5), 1e-6);
  // group 1 = {10, 10, 0, 20}: mean 10, var 50
  EXPECT_NEAR(it.output("gn").get(7), 10 / std::sqrt(50 + 1e-5), 1e-6);
  EXPECT_NEAR(it.output("bn").get(5), (10 + 1) / std::sqrt(0.25 + 1e-5), 1e-4);
}
