// Sorting: stability, NaN ordering, both topk algorithms, medians; hand-computed
// expectations (the op-by-op torch comparison lives in python/tests/test_sorting.py).
#include "luminal/frontend/sorting.hpp"

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

// Runs (values, indices) for input x of the given data.
std::pair<std::vector<double>, std::vector<int64_t>> run(Graph& g, const ValuesIndices& r,
                                                         const std::vector<int64_t>& shape,
                                                         const std::vector<double>& x) {
  g.output("v", r.values);
  g.output("i", r.indices);
  Interpreter it(g);
  it.set_input("x", TensorData::from_doubles(g.node(*g.find_input("x")).dtype, shape, x));
  it.run();
  return {it.output("v").to_doubles(), it.output("i").to_ints()};
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << i;
    else
      EXPECT_EQ(got[i], want[i]) << i;
  }
}

}  // namespace

TEST(FrontendSorting, SortIsStableWithNaNLast) {
  Graph g;
  Tensor x = g.input("x", {6});
  auto [v, i] = run(g, sort(x), {6}, {3, kNaN, -kInf, 3, kInf, -1});
  expect_same(v, {-kInf, -1, 3, 3, kInf, kNaN});
  EXPECT_EQ(i, (std::vector<int64_t>{2, 5, 0, 3, 4, 1}));
  Graph h;
  Tensor y = h.input("x", {6});
  auto [dv, di] = run(h, sort(y, 0, true), {6}, {3, kNaN, -kInf, 3, kInf, -1});
  expect_same(dv, {kNaN, kInf, 3, 3, -1, -kInf});
  EXPECT_EQ(di, (std::vector<int64_t>{1, 4, 0, 3, 5, 2}));
}

TEST(FrontendSorting, SortAlongFirstDimOfIntMatrix) {
  Graph g;
  Tensor x = g.input("x", {3, 2}, DType::I32);
  auto [v, i] = run(g, sort(x, 0), {3, 2}, {5, 1, -7, 1, 0, 0});
  expect_same(v, {-7, 0, 0, 1, 5, 1});
  EXPECT_EQ(i, (std::vector<int64_t>{1, 2, 2, 0, 0, 1}));
}

TEST(FrontendSorting, TopkSelectionAndRankPathsAgree) {
  const std::vector<double> data{0.5, kNaN, 2, -1, 2, 7, -kInf, 3};
  for (int64_t k : {3, 8}) {  // 3: selection passes, 8: rank sort (k == n is not small)
    Graph g;
    auto [v, i] = run(g, topk(g.input("x", {8}), k), {8}, data);
    std::vector<double> want{kNaN, 7, 3, 2, 2, 0.5, -1, -kInf};
    std::vector<int64_t> want_i{1, 5, 7, 2, 4, 0, 3, 6};
    want.resize(static_cast<size_t>(k));
    want_i.resize(static_cast<size_t>(k));
    expect_same(v, want);
    EXPECT_EQ(i, want_i) << "k = " << k;
  }
  Graph g;
  auto [v, i] =
      run(g, topk(g.input("x", {2, 3}, DType::I64), 2, 1, false), {2, 3}, {4, -9, 4, 1, 2, 3});
  expect_same(v, {-9, 4, 1, 2});
  EXPECT_EQ(i, (std::vector<int64_t>{1, 0, 0, 1}));
  Graph h;
  EXPECT_THROW(topk(h.input("x", {3}), 4), ShapeError);
}

TEST(FrontendSorting, KthvalueAndMedians) {
  Graph g;
  auto [v, i] = run(g, kthvalue(g.input("x", {2, 3}), 2, 1), {2, 3}, {9, 7, 8, 1, 3, 2});
  expect_same(v, {8, 2});
  EXPECT_EQ(i, (std::vector<int64_t>{2, 2}));
  Graph h;
  auto [mv, mi] =
      run(h, median(h.input("x", {2, 4}), 1, true), {2, 4}, {4, 1, 3, 2, 5, kNaN, 1, kNaN});
  expect_same(mv, {2, kNaN});
  EXPECT_EQ(mi, (std::vector<int64_t>{3, 1}));
  Graph n;
  auto [nv, ni] =
      run(n, nanmedian(n.input("x", {2, 4}), 1), {2, 4}, {4, kNaN, 3, 2, kNaN, kNaN, kNaN, kNaN});
  expect_same(nv, {3, kNaN});
  EXPECT_EQ(ni[0], 2);
}
