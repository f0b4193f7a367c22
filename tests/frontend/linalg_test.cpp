// Linear algebra: hand-computed values and the documented canonical matmul form
// (the op-by-op torch comparison lives in python/tests/test_linalg.py).
#include "luminal/frontend/linalg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {

// Inputs "a", "b" (and "c" when declared) hold 1, 2, 3, ... in their shapes.
std::vector<double> eval(Graph& g, const Tensor& out, const DimMap& dims = {}) {
  g.output("out", out);
  Interpreter it(g);
  for (const char* name : {"a", "b", "c"}) {
    auto id = g.find_input(name);
    if (!id) continue;
    std::vector<int64_t> shape;
    for (const Expr& e : g.node(*id).shape) shape.push_back(e.eval(dims));
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<double> v;
    for (int64_t i = 1; i <= n; ++i) v.push_back(static_cast<double>(i));
    it.set_input(name, TensorData::from_doubles(g.node(*id).dtype, shape, v));
  }
  it.run(dims);
  return it.output("out").to_doubles();
}

}  // namespace

TEST(FrontendLinalg, MatmulIsBroadcastMulThenSumOverLastAxis) {
  Graph g;
  Tensor a = g.input("a", {2, 3});  // [[1, 2, 3], [4, 5, 6]]
  Tensor b = g.input("b", {3, 2});  // [[1, 2], [3, 4], [5, 6]]
  Tensor c = matmul(a, b);
  // The documented canonical form: SumReduce over the last axis of [M, N, K].
  const Node& reduce = g.node(c.node());
  EXPECT_EQ(reduce.kind, OpKind::SumReduce);
  EXPECT_EQ(reduce.axis, 2);
  EXPECT_EQ(g.node(reduce.operands[0].node).kind, OpKind::Mul);
  EXPECT_EQ(eval(g, c), (std::vector<double>{22, 28, 49, 64}));
}

TEST(FrontendLinalg, MatmulVectorCasesAndBatchBroadcast) {
  Graph g1, g2, g3;
  Tensor d = matmul(g1.input("a", {3}), g1.input("b", {3}));
  EXPECT_EQ(d.rank(), 0u);
  EXPECT_EQ(eval(g1, d), (std::vector<double>{14}));
  // [3] @ [3, 2] -> [2]: [1, 2, 3] @ [[1, 2], [3, 4], [5, 6]]
  EXPECT_EQ(eval(g2, matmul(g2.input("a", {3}), g2.input("b", {3, 2}))),
            (std::vector<double>{22, 28}));
  // [2, 1, 1, 2] @ [3, 2, 1] -> [2, 3, 1, 1]; a = [[1, 2]], [[3, 4]]; b = [1, 2], [3, 4], [5, 6]
  Tensor e = matmul(g3.input("a", {2, 1, 1, 2}), g3.input("b", {3, 2, 1}));
  ASSERT_EQ(e.rank(), 4u);
  EXPECT_EQ(eval(g3, e), (std::vector<double>{5, 11, 17, 11, 25, 39}));
}

TEST(FrontendLinalg, ShapeAndDtypeErrorsNameTheOperands) {
  Graph g;
  Tensor a = g.input("a", {2, 3});
  try {
    matmul(a, g.input("b", {4, 2}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("f32[2, 3]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[4, 2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(matmul(a, g.input("c", {3, 2}, DType::F16)), DTypeError);
  EXPECT_THROW(mm(a, g.input("d", {2, 3, 2})), ShapeError);
  EXPECT_THROW(einsum("ij,jk", {a}), ShapeError);
}

TEST(FrontendLinalg, LinearAndAddmm) {
  Graph g;
  Tensor x = g.input("a", {2, 2});  // [[1, 2], [3, 4]]
  Tensor w = g.input("b", {3, 2});  // [[1, 2], [3, 4], [5, 6]]
  Tensor bias = g.input("c", {3});  // [1, 2, 3]
  EXPECT_EQ(eval(g, linear(x, w, bias)), (std::vector<double>{6, 13, 20, 12, 27, 42}));
  // beta = 0 ignores input entirely, even inf/nan.
  Graph h;
  Tensor nan_in = h.constant(std::numeric_limits<double>::quiet_NaN()).expand({2, 2});
  EXPECT_EQ(eval(h, addmm(nan_in, h.input("a", {2, 1}), h.input("b", {1, 2}), 0.0, 2.0)),
            (std::vector<double>{2, 4, 4, 8}));
}

TEST(FrontendLinalg, EinsumPatterns) {
  Graph g1, g2, g3, g4;
  // Batched matmul with the output transposed.
  EXPECT_EQ(eval(g1, einsum("bij,bjk->bki", {g1.input("a", {1, 2, 3}), g1.input("b", {1, 3, 2})})),
            (std::vector<double>{22, 49, 28, 64}));
  // Trace and diagonal of [[1, 2], [3, 4]].
  EXPECT_EQ(eval(g2, einsum("ii", {g2.input("a", {2, 2})})), (std::vector<double>{5}));
  EXPECT_EQ(eval(g3, einsum("ii->i", {g3.input("a", {2, 2})})), (std::vector<double>{1, 4}));
  // Ellipsis + implicit output + three operands: sum_j a[..j] b[j] c[j].
  EXPECT_EQ(
      eval(g4, einsum("...j,j,j", {g4.input("a", {2, 2}), g4.input("b", {2}), g4.input("c", {2})})),
      (std::vector<double>{1 * 1 * 1 + 2 * 2 * 2, 3 * 1 * 1 + 4 * 2 * 2}));
}

TEST(FrontendLinalg, TensordotAndSymbolicBatch) {
  Graph g;
  // a [2, 3] . b [3] over one axis == matmul.
  EXPECT_EQ(eval(g, tensordot(g.input("a", {2, 3}), g.input("b", {3}), 1)),
            (std::vector<double>{14, 32}));
  Graph h;
  Tensor y = bmm(h.input("a", {"s", 1, 2}), h.input("b", {"s", 2, 1}));
  EXPECT_EQ(eval(h, y, {{"s", 2}}), (std::vector<double>{1 * 1 + 2 * 2, 3 * 3 + 4 * 4}));
}
