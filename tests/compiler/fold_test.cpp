// Folding of repeated blocks (issue 4, "Repeated structure"): detection of
// identical layers, the representative block graph, expansion, and compile()
// with folding against the interpreter on the unfolded graph.
#include "luminal/compiler/fold.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "luminal/compiler/compile.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/nn/transformer.hpp"
#include "test_models.hpp"

namespace luminal::compiler {
namespace {

using test_models::build_llama;

// Residual layers x = x + act(x @ w_i + b_i); layer `odd` (if >= 0) uses
// sigmoid instead of relu.
void build_residual(Graph& g, int layers, int odd) {
  Tensor x = g.input("x", {"s", 8});
  for (int i = 0; i < layers; ++i) {
    Tensor w = g.weight("w" + std::to_string(i), {8, 8});
    Tensor b = g.weight("b" + std::to_string(i), {8});
    Tensor h = matmul(x, w) + b;
    x = x + (i == odd ? sigmoid(h) : relu(h));
  }
  g.output("y", x);
}

CompileOptions options(bool fold) {
  CompileOptions o;
  o.search_iters = 6;
  o.seed = 3;
  o.cache = false;
  o.trials = 1;
  o.fold = fold;
  return o;
}

/// Runs `m` and the interpreter on `g` with the same random inputs; exact.
void expect_exact(CompiledModel& m, const Graph& g, const DimMap& dims) {
  const auto inputs = egraph::random_inputs(g, dims, 11);
  for (const auto& [name, data] : inputs) m.set_input(name, data);
  m.run(dims);
  for (const auto& [name, want] : egraph::run_graph(g, inputs, dims))
    EXPECT_EQ(egraph::compare_exact(want, m.output(name)), "") << name;
}

TEST(Fold, FindsThirtyLayersOfOneKind) {
  Graph g;
  build_llama(g, 30);
  const FoldPlan plan = find_blocks(g);
  ASSERT_EQ(plan.kinds.size(), 1u);
  EXPECT_EQ(plan.kinds[0].starts.size(), 30u);
  EXPECT_GT(plan.coverage, 0.8);
  // Each instance reads its own weights and caches (persistent inputs).
  std::set<NodeId> weights;
  size_t per_instance = 0;
  for (const auto& ports : plan.kinds[0].ports) {
    per_instance = 0;
    for (NodeId p : ports)
      if (g.node(p).kind == OpKind::Input && g.node(p).name != "tokens") {
        weights.insert(p);
        ++per_instance;
      }
  }
  EXPECT_GE(per_instance, 11u);  // 7 projections, 2 norms, 2 caches
  EXPECT_EQ(weights.size(), 30 * per_instance);
}

TEST(Fold, TwoAndThirtyLayersFoldToTheSameBlock) {
  Graph g2, g30;
  build_llama(g2, 2);
  build_llama(g30, 30);
  const FoldPlan p2 = find_blocks(g2), p30 = find_blocks(g30);
  ASSERT_EQ(p2.kinds.size(), 1u);
  ASSERT_EQ(p30.kinds.size(), 1u);
  EXPECT_EQ(p2.kinds[0].starts.size(), 2u);
  EXPECT_EQ(block_graph(p2.kinds[0])->to_text(), block_graph(p30.kinds[0])->to_text());
}

TEST(Fold, ExpandingTheRepresentativeReproducesTheGraph) {
  Graph g;
  build_llama(g, 4);
  const FoldPlan plan = find_blocks(g);
  ASSERT_EQ(plan.kinds.size(), 1u);
  const auto rep = block_graph(plan.kinds[0]);
  const auto expanded = expand(g, plan, {rep.get()});
  const DimMap dims{{"s", 3}, {"p", 2}};
  const auto inputs = egraph::random_inputs(g, dims, 5);
  const auto want = egraph::run_graph(g, inputs, dims);
  const auto got = egraph::run_graph(*expanded, inputs, dims);
  for (const auto& [name, data] : want) EXPECT_EQ(egraph::compare_exact(data, got.at(name)), "");
}

TEST(Fold, FoldedCompileEqualsTheUnfoldedGraphExactly) {
  Graph g;
  build_llama(g, 4);
  ReferenceBackend be;
  CompileOptions o = options(true);
  o.profile_dims = {{"s", 3}, {"p", 2}};
  o.tolerance = 0;
  auto m = compile(g, be, o);
  EXPECT_EQ(m.stats().block_kinds, 1u);
  EXPECT_EQ(m.stats().block_instances, 4u);
  expect_exact(m, g, {{"s", 3}, {"p", 2}});
  expect_exact(m, g, {{"s", 1}, {"p", 7}});  // dims change without recompiling
}

// on_progress: a call per candidate of each part searched (the block kinds
// and the rest), in order, naming the part and the candidate; one part
// where nothing folds.
TEST(Fold, ProgressNamesThePartAndTheCandidate) {
  for (const int layers : {3, 1}) {
    Graph g;
    if (layers > 1) {
      build_llama(g, layers);  // (its layers, and the parts before and after them)
    } else {
      build_residual(g, 1, -1);
    }
    ReferenceBackend be;
    CompileOptions o = options(true);
    o.profile_dims = {{"s", 3}, {"p", 2}};
    std::vector<SearchProgress> seen;
    o.on_progress = [&](const SearchProgress& p) { seen.push_back(p); };
    const auto m = compile(g, be, o);
    ASSERT_FALSE(seen.empty());
    const size_t parts = seen.front().blocks;
    EXPECT_EQ(parts > 1, layers > 1) << parts;
    std::set<size_t> blocks;
    size_t searched = 0;
    for (size_t i = 0; i < seen.size(); ++i) {
      const SearchProgress& p = seen[i];
      EXPECT_EQ(p.blocks, parts);
      EXPECT_EQ(p.budget, o.search_iters);
      EXPECT_LE(p.candidates, p.budget);
      blocks.insert(p.block);
      if (i > 0) {
        EXPECT_GE(p.block, seen[i - 1].block);
        if (p.block == seen[i - 1].block) {
          EXPECT_GE(p.candidates, seen[i - 1].candidates);
        }
      }
      if (i + 1 == seen.size() || seen[i + 1].block != p.block)
        searched += p.candidates;  // (a part's last report)
    }
    EXPECT_EQ(blocks.size(), parts);
    EXPECT_EQ(searched, m.stats().candidates);
  }
}

TEST(Fold, GraphsWithoutRepetitionAreUnaffected) {
  Graph g;
  build_residual(g, 1, -1);
  EXPECT_TRUE(find_blocks(g).kinds.empty());
  ReferenceBackend be;
  auto folded = compile(g, be, options(true));
  auto whole = compile(g, be, options(false));
  EXPECT_EQ(folded.stats().block_kinds, 0u);
  EXPECT_EQ(folded.stats().winner_hash, whole.stats().winner_hash);
  EXPECT_EQ(folded.graph().to_text(), whole.graph().to_text());
}

TEST(Fold, ALayerWithADifferentOpIsADifferentKind) {
  Graph g;
  build_residual(g, 6, 3);
  const FoldPlan plan = find_blocks(g);
  // The five relu layers (before and after the odd one) are one kind; the
  // sigmoid layer (the only Exp2 nodes) is not an instance of it.
  ASSERT_EQ(plan.kinds.size(), 1u);
  EXPECT_EQ(plan.kinds[0].starts.size(), 5u);
  size_t graph_exps = 0;
  for (const Node& n : g.nodes()) graph_exps += n.kind == OpKind::Exp2;
  EXPECT_GT(graph_exps, 0u);
  for (const BlockKind& kind : plan.kinds) {
    const auto rep = block_graph(kind);
    size_t exps = 0;
    for (const Node& n : rep->nodes()) exps += n.kind == OpKind::Exp2;
    EXPECT_EQ(exps, 0u);
    for (NodeId id = 0; id < g.size(); ++id)
      if (g.node(id).kind == OpKind::Exp2) {
        EXPECT_FALSE(kind.is_member(id));
      }
  }
  ReferenceBackend be;
  CompileOptions o = options(true);
  o.tolerance = 0;
  auto m = compile(g, be, o);
  expect_exact(m, g, {{"s", 3}});
}

}  // namespace
}  // namespace luminal::compiler
