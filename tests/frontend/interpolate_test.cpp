// F.interpolate on small hand-computed cases; the full validation against
// torch is python/tests/test_interpolate.py.
#include "luminal/frontend/interpolate.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"
#include "spatial_test_util.hpp"

using namespace luminal;
using luminal::test::expect_values;
using luminal::test::run_x;

TEST(FrontendInterpolate, NearestLegacyIndexes) {
  // in 3 -> out 5: src = floor(o * 0.6f) = 0, 0, 1, 1, 2.
  Graph g;
  Tensor x = g.input("x", {1, 1, 3});
  expect_values(run_x(g, interpolate(x, std::vector<Expr>{5}), {1, 1, 3}, {10, 20, 30}),
                {10, 10, 20, 20, 30});
}

TEST(FrontendInterpolate, NearestExactIndexes) {
  // src = floor((o + 0.5) * 0.6) = 0, 0, 1, 2, 2.
  Graph g;
  Tensor x = g.input("x", {1, 1, 3});
  expect_values(run_x(g, interpolate(x, std::vector<Expr>{5}, std::nullopt, "nearest-exact"),
                      {1, 1, 3}, {10, 20, 30}),
                {10, 10, 20, 30, 30});
}

TEST(FrontendInterpolate, LinearAlignCorners) {
  // align_corners: src = o * (3 - 1) / (5 - 1) = 0, .5, 1, 1.5, 2.
  Graph g;
  Tensor x = g.input("x", {1, 1, 3});
  expect_values(run_x(g, interpolate(x, std::vector<Expr>{5}, std::nullopt, "linear", true),
                      {1, 1, 3}, {10, 20, 40}),
                {10, 15, 20, 30, 40});
}

TEST(FrontendInterpolate, BilinearHalfPixel) {
  // 2x2 -> 4x4 without align_corners: src = max((o + .5) / 2 - .5, 0) = 0, .25, .75, 1
  // on both axes; the corners stay, the centre rows blend.
  Graph g;
  Tensor x = g.input("x", {1, 1, 2, 2});
  auto out = run_x(g, interpolate(x, std::vector<Expr>{4, 4}, std::nullopt, "bilinear"),
                   {1, 1, 2, 2}, {0, 4, 8, 12});
  // value(r, c) = 8 * r' + 4 * c' with r', c' in {0, .25, .75, 1}.
  std::vector<double> want;
  for (double r : {0.0, 0.25, 0.75, 1.0})
    for (double c : {0.0, 0.25, 0.75, 1.0}) want.push_back(8 * r + 4 * c);
  expect_values(out, want);
}

TEST(FrontendInterpolate, BadArgumentsThrow) {
  Graph g;
  Tensor x = g.input("x", {1, 1, 4, 4});
  EXPECT_THROW(interpolate(x), ShapeError);  // neither size nor scale_factor
  EXPECT_THROW(interpolate(x, std::vector<Expr>{8, 8}, std::vector<double>{2}), ShapeError);
  EXPECT_THROW(interpolate(x, std::vector<Expr>{8, 8}, std::nullopt, "linear"), ShapeError);
  EXPECT_THROW(interpolate(g.input("s", {1, 1, "h"}), std::nullopt, std::vector<double>{1.3}),
               ShapeError);  // symbolic size needs a dyadic factor
}
