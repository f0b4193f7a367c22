// Pooling on small hand-computed cases (padding, ceil_mode, divisors, adaptive
// bins); the full validation against torch is python/tests/test_pooling.py.
#include "luminal/frontend/pooling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"
#include "spatial_test_util.hpp"

using namespace luminal;
using luminal::test::expect_values;
using luminal::test::run_x;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `out` (built from input "x") on the given data.

}  // namespace

TEST(FrontendPooling, MaxPool1dPaddingCeilModeAndNaN) {
  // x = [1, 5, 2, nan, 3], kernel 2, stride 2, padding 1, ceil_mode:
  // padded [-inf, 1, 5, 2, nan, 3, -inf]; windows start at 0, 2, 4 (6 starts in the
  // right padding only, so ceil_mode drops it) -> [1, 5, nan].
  Graph g;
  Tensor x = g.input("x", {1, 5});
  expect_values(run_x(g, max_pool1d(x, 2, 2, 1, 1, true), {1, 5}, {1, 5, 2, kNaN, 3}), {1, 3},
                {1, 5, kNaN});
}

TEST(FrontendPooling, MaxPool2dIntegerWithDilation) {
  Graph g;
  Tensor x = g.input("x", {1, 1, 4, 4}, DType::I32);
  // kernel 2 dilated by 2 reads rows/cols {i, i + 2}; stride 1 -> 2 x 2 output.
  std::vector<double> v = {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16};
  expect_values(run_x(g, max_pool2d(x, 2, 1, 0, 2), {1, 1, 4, 4}, v, DType::I32), {1, 1, 2, 2},
                {-1, -2, -5, -6});
}

TEST(FrontendPooling, AvgPool1dDivisors) {
  Graph g;
  Tensor x = g.input("x", {1, 1, 5});
  Tensor inc = avg_pool1d(x, 3, 2, 1, true, true);
  Tensor exc = avg_pool1d(x, 3, 2, 1, true, false);
  g.output("inc", inc);
  g.output("exc", exc);
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, 1, 5}, {1, 2, 3, 4, 5}));
  run.run();
  // Windows start at -1, 1, 3 (ceil_mode keeps 3: it starts inside the input).
  // count_include_pad: divisors 3, 3, min(3 + 3, 6) - 3 = 3 -> (0+1+2)/3, (2+3+4)/3, (4+5+0)/3.
  expect_values(run.output("inc"), {1, 1, 3}, {1.0, 3.0, 3.0});
  // Excluding padding: divisors 2, 3, 2.
  expect_values(run.output("exc"), {1, 1, 3}, {1.5, 3.0, 4.5});
}

TEST(FrontendPooling, AdaptiveBinsOverlap) {
  // In = 5, Out = 3: bins [0, 2), [1, 4), [3, 5) (torch's floor / ceil formula).
  Graph g;
  Tensor x = g.input("x", {1, 5});
  Tensor avg = adaptive_avg_pool1d(x, 3);
  Tensor mx = adaptive_max_pool1d(x, 3);
  g.output("avg", avg);
  g.output("max", mx);
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, 5}, {1, 2, 6, 4, 5}));
  run.run();
  expect_values(run.output("avg"), {1, 3}, {1.5, 4.0, 4.5});
  expect_values(run.output("max"), {1, 3}, {2, 6, 5});
}

TEST(FrontendPooling, AdaptiveSymbolicSize) {
  Graph g;
  Tensor x = g.input("x", {1, 1, "h", 2});
  g.output("out", adaptive_avg_pool2d(x, {2, 1}));
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}));
  run.run();
  // Rows bins [0, 2), [1, 3); columns one bin of both.
  expect_values(run.output("out"), {1, 1, 2, 1}, {2.5, 4.5});
}

TEST(FrontendPooling, BadArgumentsThrow) {
  Graph g;
  Tensor x = g.input("x", {1, 1, 4, 4});
  EXPECT_THROW(max_pool2d(x, 2, 2, 2), ShapeError);  // pad > kernel / 2
  EXPECT_THROW(max_pool2d(x, 5), ShapeError);        // window larger than the input
  EXPECT_THROW(avg_pool2d(g.input("i", {1, 4, 4}, DType::I32), 2), DTypeError);
  EXPECT_THROW(max_pool2d(g.input("r", {4, 4}), 2), ShapeError);  // rank 2
}
