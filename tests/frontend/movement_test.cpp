// Shape and movement ops: quick sanity checks against hand-computed values (the
// op-by-op torch comparison lives in python/tests/test_movement.py).
#include "luminal/frontend/movement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// x = 0, 1, ..., n-1 in `shape` (f32); runs `out` and returns its values.
std::vector<double> eval(Graph& g, const Tensor& out, const std::vector<int64_t>& xshape = {},
                         const DimMap& dims = {}) {
  g.output("out", out);
  Interpreter it(g);
  if (g.find_input("x")) {
    int64_t n = 1;
    for (int64_t s : xshape) n *= s;
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
    it.set_input("x", TensorData::from_doubles(DType::F32, xshape, v));
  }
  it.run(dims);
  return it.output("out").to_doubles();
}

std::vector<int64_t> shape_of(const Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t.shape()) s.push_back(e.simplify().value());
  return s;
}

}  // namespace

TEST(FrontendMovement, ReshapeInfersMinusOneAndFlattens) {
  Graph g;
  Tensor x = g.input("x", {2, 3, 4});
  EXPECT_EQ(shape_of(reshape(x, {-1, 6})), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(shape_of(flatten(x, 1)), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(shape_of(unflatten(x, 2, {2, -1})), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_EQ(shape_of(movedim(x, 0, -1)), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(shape_of(squeeze(x.unsqueeze(0).unsqueeze(3))), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_THROW(reshape(x, {-1, 5}), ShapeError);
  EXPECT_THROW(reshape(x, {-1, -1}), ShapeError);
  Graph h;
  Tensor s = h.input("x", {"s", 8});
  EXPECT_EQ(reshape(s, {-1, 4}).shape()[0], (Expr("s") * 2).simplify());
}

TEST(FrontendMovement, CatAndStackScatterInPlace) {
  Graph g;
  Tensor x = g.input("x", {2, 2});  // [[0, 1], [2, 3]]
  EXPECT_EQ(eval(g, cat({x, x * 10.0, x.slice(1, 0, 1)}, 1), {2, 2}),
            (std::vector<double>{0, 1, 0, 10, 0, 2, 3, 20, 30, 2}));
  Graph h;
  Tensor y = h.input("x", {3});
  EXPECT_EQ(eval(h, stack({y, y + 1.0}, 1), {3}), (std::vector<double>{0, 1, 1, 2, 2, 3}));
}

TEST(FrontendMovement, SplitChunkUnbind) {
  Graph g;
  Tensor x = g.input("x", {5, 2});
  auto parts = split(x, 2, 0);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(shape_of(parts[2]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(chunk(x, 2, 0).size(), 2u);
  EXPECT_EQ(tensor_split(x, 3, 0).size(), 3u);
  EXPECT_EQ(shape_of(tensor_split(x, 3, 0)[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(eval(g, split(x, std::vector<Expr>{1, 4}, 0)[1].sum_reduce(0), {5, 2}),
            (std::vector<double>{2 + 4 + 6 + 8, 3 + 5 + 7 + 9}));
  EXPECT_THROW(split(x, std::vector<Expr>{1, 3}, 0), ShapeError);
}

TEST(FrontendMovement, ConstantPadKeepsInfAndCrops) {
  Graph g;
  Tensor x = g.input("x", {2, 3});  // [[0, 1, 2], [3, 4, 5]]
  // Last dim: 1 before, crop 1 after; first dim: 1 after. Fill -inf.
  std::vector<double> got = eval(g, pad(x, {1, -1, 0, 1}, PadMode::Constant, -kInf), {2, 3});
  EXPECT_EQ(got, (std::vector<double>{-kInf, 0, 1, -kInf, 3, 4, -kInf, -kInf, -kInf}));
}

TEST(FrontendMovement, ReflectReplicateCircularPad) {
  Graph g1, g2, g3;
  // x = [0, 1, 2, 3]
  EXPECT_EQ(eval(g1, pad(g1.input("x", {1, 4}), {2, 3}, PadMode::Reflect), {1, 4}),
            (std::vector<double>{2, 1, 0, 1, 2, 3, 2, 1, 0}));
  EXPECT_EQ(eval(g2, pad(g2.input("x", {1, 4}), {2, 1}, PadMode::Replicate), {1, 4}),
            (std::vector<double>{0, 0, 0, 1, 2, 3, 3}));
  EXPECT_EQ(eval(g3, pad(g3.input("x", {1, 4}), {1, 2}, PadMode::Circular), {1, 4}),
            (std::vector<double>{3, 0, 1, 2, 3, 0, 1}));
  Graph g4;
  EXPECT_THROW(pad(g4.input("x", {1, 4}), {4, 0}, PadMode::Reflect), ShapeError);
}

TEST(FrontendMovement, RollFlipRepeatInterleave) {
  Graph g1, g2, g3, g4;
  EXPECT_EQ(eval(g1, roll(g1.input("x", {2, 3}), {1, -1}, {0, 1}), {2, 3}),
            (std::vector<double>{4, 5, 3, 1, 2, 0}));
  EXPECT_EQ(eval(g2, roll(g2.input("x", {2, 3}), {2}), {2, 3}),
            (std::vector<double>{4, 5, 0, 1, 2, 3}));
  EXPECT_EQ(eval(g3, repeat_interleave(g3.input("x", {3}), 2), {3}),
            (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(eval(g4, repeat(flip(g4.input("x", {2}), {0}), {2, 2}), {2}),
            (std::vector<double>{1, 0, 1, 0, 1, 0, 1, 0}));
}

TEST(FrontendMovement, PythonSliceClampsAndCountsFromEnd) {
  Graph g;
  Tensor x = g.input("x", {6});
  EXPECT_EQ(shape_of(slice(x, 0, Expr(-2), std::nullopt)), (std::vector<int64_t>{2}));
  EXPECT_EQ(shape_of(slice(x, 0, Expr(4), Expr(2))), (std::vector<int64_t>{0}));
  EXPECT_EQ(shape_of(slice(x, 0, Expr(-100), Expr(100), 4)), (std::vector<int64_t>{2}));
  EXPECT_EQ(eval(g, slice(x, 0, Expr(1), Expr(-1), 2), {6}), (std::vector<double>{1, 3}));
  EXPECT_THROW(select(x, 0, 6), IndexError);
}

TEST(FrontendMovement, DiagonalDiagEmbedUnfold) {
  Graph g1, g2, g3;
  // x = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
  EXPECT_EQ(eval(g1, diagonal(g1.input("x", {3, 3}), 1), {3, 3}), (std::vector<double>{1, 5}));
  EXPECT_EQ(eval(g2, diag_embed(g2.input("x", {2}), -1), {2}),
            (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(eval(g3, unfold(g3.input("x", {5}), 0, 2, 2), {5}), (std::vector<double>{0, 1, 2, 3}));
}

TEST(FrontendMovement, SymbolicCatAndPad) {
  Graph g;
  Tensor x = g.input("x", {"s", 2});
  Tensor y = pad(cat({x, x}, 0), {0, 0, 1, 0});
  EXPECT_EQ(y.shape()[0], (Expr("s") * 2 + 1).simplify());
  EXPECT_EQ(eval(g, y, {2, 2}), (std::vector<double>{0, 0, 0, 1, 2, 3, 0, 1, 2, 3}));
}
