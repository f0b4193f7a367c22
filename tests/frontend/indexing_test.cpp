// Indexing: hand-computed values for reads, writes and exact accumulation
// (the op-by-op torch comparison lives in python/tests/test_indexing.py).
#include "luminal/frontend/indexing.hpp"

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

struct Case {
  Graph g;
  std::map<std::string, TensorData> in;
  Tensor f32(const std::string& name, std::vector<int64_t> shape, std::vector<double> v) {
    std::vector<Expr> s(shape.begin(), shape.end());
    in[name] = TensorData::from_doubles(DType::F32, shape, v);
    return g.input(name, s);
  }
  Tensor i64(const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> v) {
    std::vector<Expr> s(shape.begin(), shape.end());
    in[name] = TensorData::from_ints(DType::I64, shape, v);
    return g.input(name, s, DType::I64);
  }
  std::vector<double> operator()(const Tensor& out) {
    g.output("out", out);
    Interpreter it(g);
    for (auto& [k, v] : in) it.set_input(k, v);
    it.run();
    return it.output("out").to_doubles();
  }
};

void expect_same(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << i;
    }
  }
}

}  // namespace

TEST(FrontendIndexing, GatherIndexSelectEmbedding) {
  Case r;
  Tensor x = r.f32("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor i = r.i64("i", {2, 2}, {2, 0, 1, 1});
  // gather dim 1: [[x00[2], x0[0]], [x1[1], x1[1]]]
  expect_same(r(gather(x, 1, i)), {3, 1, 5, 5});
  Case r2;
  Tensor w = r2.f32("w", {3, 2}, {0, 1, 10, 11, 20, 21});
  expect_same(r2(embedding(r2.i64("i", {2}, {2, 0}), w)), {20, 21, 0, 1});
  Case r3;
  Tensor x3 = r3.f32("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_same(r3(index_select(x3, -1, r3.i64("i", {3}, {2, 2, 0}))), {3, 3, 1, 6, 6, 4});
  Case r4;
  Tensor x4 = r4.f32("x", {4}, {1, 2, 3, 4});
  expect_same(r4(index(x4, 0, r4.i64("i", {2, 1}, {-1, 1}))), {4, 2});
}

TEST(FrontendIndexing, ScatterAndIndexCopy) {
  Case r;
  Tensor x = r.f32("x", {2, 3}, {0, 0, 0, 0, 0, 0});
  Tensor src = r.f32("s", {2, 3}, {1, 2, 3, 4, 5, 6});
  // scatter dim 0 with index [[1, 0, 1]]: only the first row of src is used.
  expect_same(r(scatter(x, 0, r.i64("i", {1, 3}, {1, 0, 1}), src)), {0, 2, 0, 1, 0, 3});
  Case r2;
  Tensor cache = r2.f32("c", {4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  Tensor kv = r2.f32("kv", {2, 2}, {7, 8, 9, 10});
  expect_same(r2(index_copy(cache, 0, r2.i64("pos", {2}, {3, 1}), kv)), {0, 0, 9, 10, 0, 0, 7, 8});
}

TEST(FrontendIndexing, ScatterAddAccumulatesDuplicatesExactly) {
  Case r;
  Tensor x = r.f32("x", {3}, {-0.0, 1, kInf});
  Tensor src = r.f32("s", {4}, {1, 2, 4, -kInf});
  // index 1 receives 1 + 2; index 2 receives 4; index 0 nothing (keeps -0.0).
  // inf in an unselected source must not poison other positions.
  expect_same(r(scatter_add(x.slice(0, 0, 2), 0, r.i64("i", {3}, {1, 1, 1}), src.slice(0, 0, 3))),
              {-0.0, 8});
  Case r2;
  Tensor y = r2.f32("x", {3}, {-0.0, 1, 5});
  Tensor s2 = r2.f32("s", {3}, {kInf, 2, 3});
  expect_same(r2(index_add(y, 0, r2.i64("i", {3}, {2, 1, 1}), s2)), {-0.0, 6, kInf});
}

TEST(FrontendIndexing, IndexPutWrapsNegativesAndAccumulates) {
  Case r;
  Tensor x = r.f32("x", {2, 2}, {0, 0, 0, 0});
  Tensor rows = r.i64("r", {3}, {0, -1, 0});
  Tensor cols = r.i64("c", {3}, {1, 0, 1});
  Tensor v = r.f32("v", {3}, {1, 2, 3});
  expect_same(r(index_put(x, {rows, cols}, v, true)), {0, 4, 2, 0});
}

TEST(FrontendIndexing, BadIndexesAreRejected) {
  Case r;
  Tensor x = r.f32("x", {2}, {1, 2});
  EXPECT_THROW(gather(x, 0, x), DTypeError);
  EXPECT_THROW(gather(x, 2, r.i64("i", {1}, {0})), ShapeError);
  EXPECT_THROW(index_select(x, 0, r.i64("j", {1, 1}, {0})), ShapeError);
  EXPECT_THROW(index_copy(x, 0, r.i64("k", {2}, {0, 1}), r.f32("s", {3}, {1, 2, 3})), ShapeError);
}
