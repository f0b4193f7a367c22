// HLIR <-> e-graph conversion and candidates: import, the original-choice
// round trip (checked on the reference interpreter), acyclic random and
// mutated candidates, structural hashing, and the errors of bad candidates.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/error.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

size_t count_op(const EGraph& eg, OpId op) {
  size_t n = 0;
  for (ClassId c : eg.class_ids())
    for (ENodeId e : eg.nodes(c)) n += eg.op(e) == op;
  return n;
}

Tensor matmul_kmid(const Tensor& a, const Tensor& b) {
  return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum_reduce(-2);
}

void build_block(Graph& g) {
  const Tensor x = g.input("x", {"s", 4});
  g.input("unused", {3}, DType::I32);
  const Tensor w = g.weight("w", {4, 4});
  const Tensor h = matmul_kmid(x, w) * 1.0 + (-0.0);
  g.output("y", (h.transpose(0, 1) * 0.5).exp2());
  g.output("z", h.sum_reduce(1));
}

}  // namespace

TEST(Import, ElidesIdentityViewsAndSharesEqualNodes) {
  Graph g;
  const Tensor x = g.input("x", {2, 3});
  g.output("a", x * 2.0);
  g.output("b", x * 2.0);  // a second Constant(2) and Mul: the same e-nodes
  g.output("t", x.transpose(0, 1).exp2());
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  ASSERT_EQ(imp.node_class.size(), g.size());
  EXPECT_EQ(imp.outputs.size(), 3u);
  EXPECT_EQ(imp.inputs.size(), 1u);
  // Nodes: Input, Constant, View(broadcast), Mul, Output a, Output b, View(T), Exp2, Output t.
  EXPECT_EQ(eg.num_nodes(), 9u);
  EXPECT_EQ(count_op(eg, kViewOp), 2u);  // x is read densely by Mul: no View
  const auto outs = g.outputs();
  EXPECT_EQ(eg.find(eg.children(imp.node_enode[outs[0]])[0]),
            eg.find(eg.children(imp.node_enode[outs[1]])[0]));
  EXPECT_EQ(eg.info(imp.outputs[2]).to_string(), "f32[3, 2]");
}

TEST(Import, OriginalChoiceRoundTripsBeforeAndAfterSaturation) {
  Graph g;
  build_block(g);
  const DimMap dims{{"s", 3}};
  const Inputs inputs = random_inputs(g, dims, 21);
  const auto expected = run_graph(g, inputs, dims);
  for (bool saturate : {false, true}) {
    EGraph eg;
    const ImportedGraph imp = import_graph(eg, g);
    if (saturate) run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
    CandidateSpace space(eg, imp.roots(eg));
    const Candidate original = space.prefer(imp.node_enode);
    const Extracted ex = extract(eg, imp, original);
    const Graph& out = *ex.graph;
    // Same inputs (names, dtypes, dims, persistence, order) even when unread.
    ASSERT_EQ(out.inputs().size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      const Node& a = g.node(g.inputs()[i]);
      const Node& b = out.node(out.inputs()[i]);
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.dtype, b.dtype);
      EXPECT_EQ(a.shape, b.shape);
      EXPECT_EQ(a.persistent, b.persistent);
    }
    EXPECT_TRUE(out.find_output("y") && out.find_output("z"));
    const auto got = run_graph(out, inputs, dims);
    for (const auto& [name, want] : expected)
      EXPECT_EQ(compare_exact(want, got.at(name)), "") << name << " saturate=" << saturate;
    if (!saturate) {
      // Without rules the original choice rebuilds the graph node for node.
      EXPECT_EQ(out.size(), g.size());
    }
  }
}

TEST(Candidates, RandomAndMutatedCandidatesAreAcyclicAndSeeded) {
  Graph g;
  build_block(g);
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  CandidateSpace space(eg, imp.roots(eg));
  const Candidate first = space.first();
  EXPECT_TRUE(space.is_valid(first));
  EXPECT_EQ(space.hash(first), space.hash(space.first()));
  std::mt19937_64 a(42), b(42);
  std::set<uint64_t> hashes;
  for (int i = 0; i < 20; ++i) {
    const Candidate ca = space.random(a);
    EXPECT_EQ(ca, space.random(b));  // same seed, same candidates
    EXPECT_TRUE(space.is_valid(ca));
    hashes.insert(space.hash(ca));
  }
  EXPECT_GT(hashes.size(), 3u);
  EXPECT_GT(space.num_choices(first), 3u);
  // Mutations stay acyclic and change something (this graph has alternatives everywhere).
  std::mt19937_64 rng(7);
  size_t changed = 0;
  for (int i = 0; i < 10; ++i) {
    const Candidate m = space.mutate(first, rng, 2);
    EXPECT_TRUE(space.is_valid(m));
    changed += space.hash(m) != space.hash(first);
  }
  EXPECT_GT(changed, 5u);
}

TEST(Candidates, HashIgnoresUnreachableClassesAndIds) {
  Graph g;
  build_block(g);
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  // A class no output reads.
  const ClassId stray = eg.add(OpKind::Sin, Payload(), {imp.inputs[0]});
  CandidateSpace space(eg, imp.roots(eg));
  Candidate c = space.first();
  ASSERT_NE(c.at(stray), kNoId);
  const uint64_t h = space.hash(c);
  c.choice[stray] = kNoId;
  EXPECT_EQ(space.hash(c), h);
  EXPECT_TRUE(space.is_valid(c));
  // The same program imported into another e-graph (other ids) hashes equal.
  EGraph other;
  other.add(OpKind::Constant, Payload(Scalar::from_double(DType::F32, 7.0)), {});  // shift ids
  const ImportedGraph imp2 = import_graph(other, g);
  CandidateSpace space2(other, imp2.roots(other));
  EXPECT_EQ(space2.hash(space2.prefer(imp2.node_enode)), space.hash(space.prefer(imp.node_enode)));
}

TEST(Candidates, CyclicAndIncompleteChoicesAreRejected) {
  Graph g;
  const Tensor x = g.input("x", {4});
  g.output("y", (x * 1.0).exp2());
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  // x * 1 = x: x's class now holds Input x and Mul(x, 1) (a cycle).
  const ClassId xc = eg.find(imp.inputs[0]);
  ENodeId mul = kNoId;
  for (ENodeId n : eg.nodes(xc))
    if (eg.op(n) == op_id(OpKind::Mul)) mul = n;
  ASSERT_NE(mul, kNoId);
  CandidateSpace space(eg, imp.roots(eg));
  Candidate c = space.first();
  EXPECT_NE(c.at(xc), mul);  // the first candidate avoids the cycle
  c.choice[xc] = mul;
  EXPECT_FALSE(space.is_valid(c));
  try {
    extract(eg, imp, c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cyclic"), std::string::npos) << e.what();
  }
  Candidate missing = space.first();
  missing.choice[xc] = kNoId;
  EXPECT_THROW(extract(eg, imp, missing), Error);
  EXPECT_THROW(space.reachable(missing), Error);
}

TEST(Extract, MatMulIsLoweredToHlirAndDebugOutputsListClasses) {
  Graph g;
  g.output("y", matmul_kmid(g.input("a", {2, 3}), g.input("b", {3, 2})));
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  std::vector<uint64_t> w(eg.num_node_slots(), 1);
  for (ClassId c : eg.class_ids())
    for (ENodeId n : eg.nodes(c))
      if (eg.op(n) == op_id(OpKind::SumReduce)) w[n] = 0;  // force the MatMul
  CandidateSpace space(eg, imp.roots(eg));
  const Candidate c = space.with_weights(w);
  const Extracted ex = extract(eg, imp, c, {true});
  EXPECT_FALSE(ex.class_outputs.empty());
  EXPECT_TRUE(ex.graph->find_output(ex.class_outputs.front().second).has_value());
  // a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]]: a @ b by hand.
  Inputs in;
  in["a"] = TensorData::from_doubles(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  in["b"] = TensorData::from_doubles(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1});
  const auto out = run_graph(*ex.graph, in);
  EXPECT_EQ(out.at("y").to_doubles(), (std::vector<double>{4, 5, 10, 11}));
}

TEST(Extract, ReadThroughComposesOrCopies) {
  Graph g;
  const Tensor x = g.input("x", {2, 3});
  const Tensor t = x.transpose(0, 1);  // [3, 2]
  const size_t before = g.size();
  // Slicing the transpose composes into one view: no node is recorded.
  const Tensor s = read_through(t, View::contiguous({3, 2}).slice(0, 1, 3));
  EXPECT_EQ(g.size(), before);
  EXPECT_EQ(s.node(), x.node());
  // Flattening the transpose is a (non-affine) view of x too.
  const Tensor flat = read_through(t, View::contiguous({3, 2}).reshape({6}).value());
  EXPECT_EQ(g.size(), before);
  // Repeating its rows is not composable (the outer view is not affine): a
  // dense copy of the transpose is read instead.
  const Tensor f = read_through(t, View::contiguous({3, 2}).repeat(0, 2));
  EXPECT_GT(g.size(), before);
  g.output("s", s);
  g.output("flat", flat);
  g.output("f", f);
  Inputs in;
  in["x"] = TensorData::from_doubles(DType::F32, {2, 3}, {0, 1, 2, 3, 4, 5});
  const auto out = run_graph(g, in);
  EXPECT_EQ(out.at("s").to_doubles(), (std::vector<double>{1, 4, 2, 5}));
  EXPECT_EQ(out.at("flat").to_doubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out.at("f").to_doubles(), (std::vector<double>{0, 3, 1, 4, 2, 5, 0, 3, 1, 4, 2, 5}));
}
