// Matmul recognition: the matrix products a user can write (transposed
// operands, batched, broadcast batch, GQA heads, symbolic dims, output laid out
// transposed) all become one canonical MatMul node whose strides and layouts
// are stated here by hand; the candidate that uses it must compute exactly
// what the original graph computes on the reference interpreter.
#include "luminal/egraph/matmul.hpp"

#include <gtest/gtest.h>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/attention.hpp"
#include "luminal/frontend/linalg.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

Tensor matmul_kmid(const Tensor& a, const Tensor& b) {
  return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum_reduce(-2);
}

struct Recognised {
  std::vector<MatMulSpec> specs;
  std::vector<std::vector<std::string>> children;  // input names of each MatMul's children
};

// Saturate, collect the MatMul nodes of output "out", and check that the
// candidate using each one is bit-identical to the original graph.
Recognised recognise(const Graph& g, const DimMap& dims = {}) {
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  const ClassId out = eg.find(eg.children(eg.nodes(imp.roots(eg)[0])[0])[0]);
  Recognised r;
  CandidateSpace space(eg, imp.roots(eg));
  const Inputs inputs = random_inputs(g, dims, 5);
  for (ENodeId n : eg.nodes(out)) {
    if (eg.op(n) != kMatMulOp) continue;
    r.specs.push_back(MatMulSpec::from_payload(eg.node_payload(n)));
    std::vector<std::string> names;
    for (ClassId c : eg.children(n)) {
      std::string name = "?";
      for (ENodeId k : eg.nodes(c))
        if (eg.op(k) == op_id(OpKind::Input)) name = eg.node_payload(k).at(0).as<std::string>();
      names.push_back(name);
    }
    r.children.push_back(names);
    // The candidate that computes `out` with this MatMul node.
    std::vector<uint64_t> w(eg.num_node_slots(), 1);
    for (ENodeId other : eg.nodes(out)) w[other] = other == n ? 1 : 0;
    const Candidate cand = space.with_weights(w);
    EXPECT_EQ(cand.at(out), n);
    EXPECT_EQ(check_candidate(eg, imp, cand, g, inputs, dims), "") << r.specs.back().to_string();
  }
  return r;
}

}  // namespace

TEST(MatMul, PlainRowMajor) {
  Graph g;
  g.output("out", matmul_kmid(g.input("a", {3, 5}), g.input("b", {5, 4})));
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_TRUE(s.batch.empty());
  EXPECT_EQ(s.m, Expr(3));
  EXPECT_EQ(s.n, Expr(4));
  EXPECT_EQ(s.k, Expr(5));
  EXPECT_EQ(s.a_layout(), MatLayout::RowMajor);
  EXPECT_EQ(s.b_layout(), MatLayout::RowMajor);
  EXPECT_EQ(s.lda(), Expr(5));
  EXPECT_EQ(s.ldb(), Expr(4));
  EXPECT_EQ(r.children[0], (std::vector<std::string>{"a", "b"}));
}

TEST(MatMul, TransposedOperandsAreColumnMajor) {
  Graph g;
  const Tensor xt = g.input("xt", {5, 3});  // a = xt^T
  const Tensor w = g.input("w", {4, 5});    // nn.Linear weight: b = w^T
  g.output("out", matmul_kmid(xt.transpose(0, 1), w.transpose(0, 1)));
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_EQ(s.a_layout(), MatLayout::ColMajor);
  EXPECT_EQ(s.a_m_stride, Expr(1));
  EXPECT_EQ(s.a_k_stride, Expr(3));
  EXPECT_EQ(s.lda(), Expr(3));
  EXPECT_EQ(s.b_layout(), MatLayout::ColMajor);
  EXPECT_EQ(s.b_k_stride, Expr(1));
  EXPECT_EQ(s.b_n_stride, Expr(5));
  EXPECT_EQ(s.ldb(), Expr(5));
}

TEST(MatMul, BatchedOperands) {
  Graph g;
  g.output("out", matmul_kmid(g.input("a", {2, 3, 5}), g.input("b", {2, 5, 4})));
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_EQ(s.batch, (Shape{2}));
  EXPECT_EQ(s.a_batch_strides, (Shape{15}));
  EXPECT_EQ(s.b_batch_strides, (Shape{20}));
  EXPECT_EQ(s.m, Expr(3));
  EXPECT_EQ(s.out_shape, (Shape{2, 3, 4}));
}

TEST(MatMul, BroadcastBatchMergesIntoM) {
  // [batch, seq, hidden] x [hidden, out]: one GEMM with M = batch * seq.
  Graph g;
  g.output("out", matmul_kmid(g.input("x", {2, "s", 5}), g.input("w", {5, 4})));
  const Recognised r = recognise(g, {{"s", 3}});
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_TRUE(s.batch.empty());
  EXPECT_EQ(s.m, (Expr(2) * Expr("s")).simplify());
  EXPECT_EQ(s.a_m_stride, Expr(5));
  EXPECT_EQ(s.out_shape, (Shape{2, "s", 4}));
}

TEST(MatMul, UnmergeableBroadcastBatchStaysABatchAxis) {
  // x [3, 2, 5] read as [2, 3, 5]: the two M axes do not merge, the outer one
  // becomes a batch axis along which b is broadcast (stride 0).
  Graph g;
  g.output("out", matmul_kmid(g.input("x", {3, 2, 5}).transpose(0, 1), g.input("w", {5, 4})));
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_EQ(s.batch, (Shape{2}));
  EXPECT_EQ(s.a_batch_strides, (Shape{5}));
  EXPECT_EQ(s.b_batch_strides, (Shape{0}));
  EXPECT_EQ(s.m, Expr(3));
  EXPECT_EQ(s.a_m_stride, Expr(10));
}

TEST(MatMul, TransposedOutputSwapsTheOperands) {
  // out[n][m] = sum_k a[m][k] b[k][n], written as a [N, M, K] product.
  Graph g;
  const Tensor a = g.input("a", {3, 5}), b = g.input("b", {5, 4});
  const Tensor prod =
      a.unsqueeze(0).expand({4, 3, 5}) * b.transpose(0, 1).unsqueeze(1).expand({4, 3, 5});
  g.output("out", prod.sum_reduce(2));
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 1u);
  const MatMulSpec& s = r.specs[0];
  EXPECT_EQ(r.children[0], (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(s.m, Expr(4));
  EXPECT_EQ(s.n, Expr(3));
  EXPECT_EQ(s.a_layout(), MatLayout::ColMajor);  // b read as [n][k]
  EXPECT_EQ(s.b_layout(), MatLayout::ColMajor);  // a read as [k][m]
}

TEST(MatMul, GroupedQueryHeadsSplitTheHeadAxis) {
  // 4 query heads share 2 KV heads: the head axis reads the cache at h / 2.
  Graph g;
  const Expr s = "s";
  const Tensor q = g.input("q", {4, s, 8});
  const Tensor kv = g.input("kv", {s, 2, 8});
  const Tensor k =
      kv.reshape({s, 2, 1, 8}).expand({s, 2, 2, 8}).reshape({s, 4, 8}).permute({1, 2, 0});
  g.output("out", matmul_kmid(q, k));  // [4, s, s]
  const Recognised r = recognise(g, {{"s", 3}});
  // The head axis splits into (KV head, head in group); the heads of a group
  // read the same keys, so they merge with the query rows into M = 2 * s: a
  // batch of 2 GEMMs. (The compact keys tensor gives a second, batch-4 form.)
  bool grouped = false;
  for (const MatMulSpec& sp : r.specs) {
    if (sp.batch != Shape{2}) continue;
    grouped = true;
    EXPECT_EQ(sp.m, (Expr(2) * Expr("s")).simplify());
    EXPECT_EQ(sp.a_m_stride, Expr(8));
    EXPECT_EQ(sp.b_batch_strides, (Shape{8}));
    EXPECT_EQ(sp.b_layout(), MatLayout::ColMajor);
    EXPECT_EQ(sp.ldb(), Expr(16));
  }
  EXPECT_TRUE(grouped);
}

TEST(MatMul, VectorTimesMatrixAndNonMatmuls) {
  Graph g;
  const Tensor v = g.input("v", {5});
  g.output("out", matmul_kmid(v.unsqueeze(0), g.input("w", {5, 4})));
  // Two GEMV forms: v as a 1 x 5 matrix times w, and w^T times v as a column.
  const Recognised r = recognise(g);
  ASSERT_EQ(r.specs.size(), 2u);
  EXPECT_EQ(r.specs[0].m, Expr(1));
  EXPECT_EQ(r.specs[0].n, Expr(4));
  EXPECT_EQ(r.children[0], (std::vector<std::string>{"v", "w"}));
  EXPECT_EQ(r.specs[1].m, Expr(4));
  EXPECT_EQ(r.specs[1].n, Expr(1));
  EXPECT_EQ(r.specs[1].a_layout(), MatLayout::ColMajor);
  // An element-wise product summed (a norm, a dot with equal shapes) has no
  // broadcast operand: not a matrix product.
  Graph h;
  const Tensor x = h.input("x", {3, 5});
  h.output("out", (x * h.input("y", {3, 5})).sum_reduce(1));
  EXPECT_TRUE(recognise(h).specs.empty());
}

TEST(MatMul, PayloadRoundTripAndLowering) {
  MatMulSpec s;
  s.batch = {2};
  s.m = "s";
  s.n = 4;
  s.k = 5;
  s.a_batch_strides = {Expr("s") * 5};
  s.a_m_stride = 5;
  s.a_k_stride = 1;
  s.b_batch_strides = {0};
  s.b_k_stride = 4;
  s.b_n_stride = 1;
  s.out_shape = {2, "s", 4};
  const MatMulSpec back = MatMulSpec::from_payload(s.to_payload());
  EXPECT_EQ(back.to_payload(), s.to_payload());
  EXPECT_EQ(back.batch_count(), Expr(2));
  EXPECT_THROW(MatMulSpec::from_payload(Payload(int64_t{1})), Error);
  // Lowering is the broadcast Mul + SumReduce it stands for.
  Graph g;
  const Tensor out = lower_matmul(g, s, g.input("a", {2, "s", 5}), g.input("b", {5, 4}));
  g.output("out", out);
  Graph ref;
  ref.output("out", matmul_kmid(ref.input("a", {2, "s", 5}), ref.input("b", {5, 4})));
  const Inputs in = random_inputs(ref, {{"s", 3}}, 9);
  EXPECT_EQ(compare_exact(run_graph(ref, in).at("out"), run_graph(g, in).at("out")), "");
}

TEST(MatMul, FrontendFormsAreRecognised) {
  // The frontend's canonical form reduces the LAST axis; linear, bmm and both
  // products of a causal grouped-query attention must all be recognised, and
  // every candidate must still agree with the original bit for bit.
  Graph g;
  const Tensor x = g.input("x", {2, "s", 8});
  g.output("lin", linear(x, g.weight("w", {4, 8}), g.weight("bias", {4})));
  g.output("bmm", bmm(g.input("a", {3, 5, 6}), g.input("b", {3, 6, 2})));
  const Tensor q = g.input("q", {4, "s", 8}), k = g.input("k", {2, "s", 8});
  const Tensor v = g.input("v", {2, "s", 8});
  g.output("att", scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true,
                                               std::nullopt, /*enable_gqa=*/true));
  EGraph eg;
  import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  size_t matmuls = 0;
  for (ClassId c : eg.class_ids()) matmuls += eg.has_op(c, kMatMulOp);
  EXPECT_EQ(matmuls, 4u);  // linear, bmm, q k^T, p v
  FuzzOptions o;
  o.dims = {{"s", 3}};
  o.seed = 31;
  const FuzzResult r = fuzz_equivalence(g, o);
  EXPECT_GE(r.checked, 32u);
  EXPECT_TRUE(r.non_hlir_uses.count("MatMul"));
  for (const std::string& f : r.failures) ADD_FAILURE() << f;
}
