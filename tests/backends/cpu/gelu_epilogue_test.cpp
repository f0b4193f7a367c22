// The linear + bias + GELU path on the CPU backend: the f32 erf as one
// generated kernel (max ulp over ~16.8M inputs against double std::erf), and
// GEMM epilogues: a CpuSgemmEpilogue group (an f32 product and the
// element-wise body reading it) runs as BLAS on blocks of rows followed by the
// body's generated loops on each block. Expected values come from std::erf and
// the reference interpreter on the same graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <random>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/compiler/serialize.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

constexpr int64_t kK = 40, kN = 24;
using testing::expect_close;
using testing::random_tensor;

// A linear layer's product x[s, K] @ w[N, K]^T as Mul + SumReduce.
Tensor linear_product(Graph& g) {
  Tensor x = g.input("x", {"s", kK});
  Tensor w = g.weight("w", {kN, kK});
  return (x.unsqueeze(1).expand({"s", kN, kK}) * w.unsqueeze(0).expand({"s", kN, kK}))
      .sum_reduce(2);
}

// Every non-Input, non-Output node the outputs need: the group.
std::vector<NodeId> computed_nodes(const Graph& g) {
  std::vector<bool> needed(g.size(), false);
  for (NodeId id : g.outputs()) needed[id] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (needed[id])
      for (const Operand& o : g.node(id).operands) needed[o.node] = true;
  std::vector<NodeId> out;
  for (NodeId id = 0; id < g.size(); ++id) {
    const OpKind k = g.node(id).kind;
    if (needed[id] && k != OpKind::Input && k != OpKind::Output) out.push_back(id);
  }
  return out;
}

// erf of every 257th f32 bit pattern (16.7M values, both signs, every
// exponent) through one generated kernel: the kernels' exp2 / log2 (lk::) are
// within ~1.1 ulp, so the bound is a little above the interpreter's
// (tests/frontend/erf_f32_test.cpp).
TEST(CpuErfKernel, WithinTwoAndAHalfUlpOfDoubleErfOverAllExponents) {
  std::vector<float> xs;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 257)
    xs.push_back(std::bit_cast<float>(uint32_t(b)));
  const auto n = static_cast<int64_t>(xs.size());
  Graph g;
  g.output("y", erf(g.input("x", {"n"})));
  std::vector<NodeId> members = computed_nodes(g);
  members.push_back(g.outputs().at(0));  // the Output node too: one kernel
  CpuOptions options;
  options.regions = {Region(members)};
  CpuProgram program(g, options);
  ASSERT_EQ(program.kernels().size(), 1u);
  TensorData x(DType::F32, {n});
  std::copy(xs.begin(), xs.end(), reinterpret_cast<float*>(x.data()));
  program.set_input("x", std::move(x));
  program.run({{"n", n}});
  const auto* y = reinterpret_cast<const float*>(program.output("y").data());
  double worst = 0.0;
  float at = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::erf(static_cast<double>(xs[static_cast<size_t>(i)]));
    double e = 0.0;
    if (std::isnan(want)) {
      e = std::isnan(y[i]) ? 0.0 : INFINITY;
    } else {
      int ex = 0;
      std::frexp(std::fabs(want), &ex);
      e = std::fabs(y[i] - want) / std::ldexp(1.0, std::max(ex - 1, -126) - 23);
    }
    if (!(e <= worst)) worst = e, at = xs[static_cast<size_t>(i)];
  }
  RecordProperty("max_ulp", std::to_string(worst));
  EXPECT_LE(worst, 2.5) << "at x = " << at;
}

struct Epilogue {
  const char* name;
  std::function<Tensor(Graph&, const Tensor&)> apply;  // product -> output
};

std::vector<Epilogue> epilogues() {
  return {
      {"bias",
       [](Graph& g, const Tensor& p) {
         return p + g.weight("b", {kN}).unsqueeze(0).expand(p.shape());
       }},
      {"bias_gelu",
       [](Graph& g, const Tensor& p) {
         return gelu(p + g.weight("b", {kN}).unsqueeze(0).expand(p.shape()));
       }},
      {"gelu_tanh", [](Graph&, const Tensor& p) { return gelu(p, "tanh"); }},
      {"silu", [](Graph&, const Tensor& p) { return silu(p); }},
      {"bias_gelu_residual",
       [](Graph& g, const Tensor& p) {
         Tensor r = g.input("r", {"s", kN});
         return gelu(p + g.weight("b", {kN}).unsqueeze(0).expand(p.shape())) + r;
       }},
  };
}

// Random inputs for s rows, set on `program` and on the interpreter.
template <typename Program>
void set_all(Program& program, Interpreter& ref, const Graph& g, int64_t s, std::mt19937_64& rng) {
  for (NodeId id : g.inputs()) {
    const std::string& name = g.node(id).name;
    std::vector<int64_t> shape = {s, kK};
    if (name == "w") shape = {kN, kK};
    if (name == "b") shape = {kN};
    if (name == "r") shape = {s, kN};
    const double scale = name == "w" ? 0.5 : 2.0;
    TensorData t = random_tensor(DType::F32, shape, rng, -scale, scale);
    program.set_input(name, t);
    ref.set_input(name, t);
  }
}

// BLAS sums in another order than the interpreter's double sum: the f32
// product is within ~1e-6 relative (K = 40), which the activations keep.
void expect_near(const TensorData& got, const TensorData& want, const std::string& what) {
  expect_close(got, want, 64.0, 1e-5, what);
}

TEST(CpuSgemmEpilogue, GroupRunsAsBlasPlusBodyAndMatchesInterpreter) {
  ASSERT_NE(Blas::get(), nullptr) << "OpenBLAS must be installed (scripts/setup.sh)";
  std::mt19937_64 rng(21);
  for (const Epilogue& e : epilogues()) {
    Graph g;
    g.output("y", e.apply(g, linear_product(g)));
    CpuOptions options;
    options.regions = {Region(computed_nodes(g), {}, "CpuSgemmEpilogue")};
    CpuProgram program(g, options);
    int epilogue_kernels = 0;  // the group; the Output node has its own copy kernel
    for (const CpuKernel& k : program.kernels())
      epilogue_kernels += k.host_pointers.size() == 2 ? 1 : 0;
    EXPECT_EQ(epilogue_kernels, 1) << e.name << ": the group was not compiled as BLAS + epilogue";
    Interpreter ref(g);
    // Several calls with changing rows: one row, a partial block, several
    // blocks split over the pool's threads, and back.
    for (int64_t s : {1, 7, 150, 3}) {
      set_all(program, ref, g, s, rng);
      program.run({{"s", s}});
      ref.run({{"s", s}});
      expect_near(program.output("y"), ref.output("y"),
                  std::string(e.name) + " s=" + std::to_string(s));
    }
  }
}

// A body that reads the product through a transposing view cannot run per
// block of rows: the group falls back to generated loops (still correct).
TEST(CpuSgemmEpilogue, TransposedReadFallsBackToGeneratedLoops) {
  Graph g;
  Tensor x = g.input("x", {kN, kK});
  Tensor w = g.weight("w", {kN, kK});
  Tensor p =
      (x.unsqueeze(1).expand({kN, kN, kK}) * w.unsqueeze(0).expand({kN, kN, kK})).sum_reduce(2);
  g.output("y", (p.permute({1, 0}) * 1.0) + p);
  CpuOptions options;
  options.regions = {Region(computed_nodes(g), {}, "CpuSgemmEpilogue")};
  CpuProgram program(g, options);
  for (const CpuKernel& k : program.kernels()) EXPECT_TRUE(k.host_pointers.empty());
  std::mt19937_64 rng(3);
  Interpreter ref(g);
  for (const char* name : {"x", "w"}) {
    TensorData t = random_tensor(DType::F32, {kN, kK}, rng, -1.0, 1.0);
    program.set_input(name, t);
    ref.set_input(name, t);
  }
  program.run();
  ref.run();
  expect_near(program.output("y"), ref.output("y"), "transposed");
}

// The rule offers CpuSgemmEpilogue in the class of a linear + bias + GELU (and
// of the residual add above it); a candidate choosing it extracts to one kernel
// group (the product and the body), survives the cache's serialisation and
// runs correctly at changing dims.
TEST(CpuSgemmEpilogue, RuleOffersTheEpilogueAndItExtracts) {
  ASSERT_NE(Blas::get(), nullptr);
  Graph g;
  g.output("y", epilogues()[4].apply(g, linear_product(g)));
  const auto sat = testing::saturate_with_cpu_rules(g);
  const egraph::EGraph& eg = sat->eg;
  const egraph::ImportedGraph& imp = sat->imp;
  const std::vector<egraph::ENodeId> found = sat->nodes_of(cpu_ops().sgemm_epilogue);
  ASSERT_GE(found.size(), 2u) << "expected epilogues at the GELU and at the residual add";
  std::mt19937_64 rng(8);
  for (egraph::ENodeId n : found) {
    egraph::CandidateSpace space(eg, imp.roots(eg));
    auto extracted = egraph::extract(eg, imp, space.prefer({n})).graph;
    int groups = 0;
    for (const KernelGroup& grp : extracted->kernel_groups())
      groups += grp.op == "CpuSgemmEpilogue" ? 1 : 0;
    EXPECT_EQ(groups, 1);
    std::shared_ptr<const Graph> back(
        compiler::deserialize_graph(compiler::serialize_graph(*extracted)));
    CpuOptions options;  // the groups as CpuBackend::compile takes them
    for (const KernelGroup& grp : back->kernel_groups())
      options.regions.push_back(Region{grp.nodes, {}, grp.op});
    CpuProgram program(*back, options);
    bool epilogue_kernel = false;
    for (int64_t s : {5, 70}) {
      Interpreter ref(g);
      set_all(program, ref, g, s, rng);
      program.run({{"s", s}});
      ref.run({{"s", s}});
      expect_near(program.output("y"), ref.output("y"), "extracted s=" + std::to_string(s));
    }
    for (const CpuKernel& k : program.kernels()) epilogue_kernel |= k.host_pointers.size() == 2;
    EXPECT_TRUE(epilogue_kernel);
  }
}

// ---- batched products: heads of x[h, s, K] @ w[h, N, K]^T, and attention
// scores q[h, s, d] @ k[h, t, d]^T with a scale and a mask (both dims
// dynamic). The rows of all batches are split between threads and into
// blocks, which must end at a batch's last row.
constexpr int64_t kHeads = 3;

Tensor batched_product(Graph& g) {
  Tensor x = g.input("x", {kHeads, "s", kK});
  Tensor w = g.input("wb", {kHeads, kN, kK});
  return (x.unsqueeze(2).expand({kHeads, "s", kN, kK}) *
          w.unsqueeze(1).expand({kHeads, "s", kN, kK}))
      .sum_reduce(3);
}

// y = GELU(product + b) + r, b per column, r per element.
Tensor batched_bias_gelu_residual(Graph& g) {
  Tensor p = batched_product(g);
  Tensor b = g.weight("b", {kN}).unsqueeze(0).unsqueeze(0).expand(p.shape());
  return gelu(p + b) + g.input("r", {kHeads, "s", kN});
}

// x[s, h, K] read as [h, s, K] through a permuted view, @ one weight w[N, K]^T
// for every head, + bias, SiLU (a layout the other two do not have).
Tensor shared_weight_heads(Graph& g) {
  Tensor x = g.input("xs", {"s", kHeads, kK}).permute({1, 0, 2});
  Tensor w = g.weight("w", {kN, kK});
  Tensor p = (x.unsqueeze(2).expand({kHeads, "s", kN, kK}) *
              w.unsqueeze(0).unsqueeze(0).expand({kHeads, "s", kN, kK}))
                 .sum_reduce(3);
  return silu(p + g.weight("b", {kN}).unsqueeze(0).unsqueeze(0).expand(p.shape()));
}

Tensor attention_scores(Graph& g) {
  constexpr int64_t d = 16;
  Tensor q = g.input("q", {kHeads, "s", d});
  Tensor k = g.input("k", {kHeads, "t", d});
  Tensor p =
      (q.unsqueeze(2).expand({kHeads, "s", "t", d}) * k.unsqueeze(1).expand({kHeads, "s", "t", d}))
          .sum_reduce(3);
  return p * 0.25 + g.input("mask", {"s", "t"}).unsqueeze(0).expand(p.shape());
}

// Random values for every input of g (shapes: its declared ones at `dims`),
// set on the program and on the interpreter.
template <typename Program>
void set_inputs(Program& program, Interpreter& ref, const Graph& g, const DimMap& dims,
                std::mt19937_64& rng) {
  for (NodeId id : g.inputs()) {
    const Node& n = g.node(id);
    std::vector<int64_t> shape;
    for (const Expr& e : n.shape) shape.push_back(e.eval(dims));
    TensorData t = random_tensor(DType::F32, shape, rng, -1.5, 1.5);
    program.set_input(n.name, t);
    ref.set_input(n.name, t);
  }
}

// Fewer than 8 rows (a decode step): the pool splits the product's columns
// (one launch of N items) and each thread runs the body on its columns of
// every row, rather than one thread taking the whole product; at 8 rows and
// more that launch is empty and BLAS takes blocks of rows. Both layouts of the
// weight (w[N, K] read transposed, and w[K, N]), N = 100 (several chunks, the
// last partial).
TEST(CpuSgemmEpilogue, DecodeRowsSplitTheColumnsOverThePool) {
  ASSERT_NE(Blas::get(), nullptr);
  constexpr int64_t n = 100, k = 72;
  std::mt19937_64 rng(55);
  for (const bool transposed : {true, false}) {
    Graph g;
    Tensor x = g.input("x", {"s", k});
    Tensor w = transposed ? g.weight("w", {n, k}) : g.weight("w", {k, n}).permute({1, 0});
    Tensor p =
        (x.unsqueeze(1).expand({"s", n, k}) * w.unsqueeze(0).expand({"s", n, k})).sum_reduce(2);
    g.output("y",
             silu(p + g.weight("b", {n}).unsqueeze(0).expand(p.shape())) + g.input("r", {"s", n}));
    CpuOptions options;
    options.regions = {Region(computed_nodes(g), {}, "CpuSgemmEpilogue")};
    CpuProgram program(g, options);
    const CpuKernel* epilogue = nullptr;
    for (const CpuKernel& kk : program.kernels())
      if (kk.host_pointers.size() == 2) epilogue = &kk;
    ASSERT_NE(epilogue, nullptr) << "the group was not compiled as BLAS + epilogue";
    Interpreter ref(g);
    for (int64_t s : {1, 5, 8, 2, 40}) {
      const DimMap dims{{"s", s}};
      int64_t column_items = -1;  // the parallel launch over columns
      for (const KernelLaunch& l : epilogue->launches)
        if (l.symbol.ends_with("_gemv")) column_items = l.extent.eval(dims);
      EXPECT_EQ(column_items, s < 8 ? n : 0) << "s=" << s;
      set_inputs(program, ref, g, dims, rng);
      program.run(dims);
      ref.run(dims);
      expect_near(program.output("y"), ref.output("y"),
                  std::string(transposed ? "w[N, K]" : "w[K, N]") + " s=" + std::to_string(s));
    }
  }
}

TEST(CpuSgemmEpilogue, BatchedGroupsRunPerBatchAndMatchInterpreter) {
  ASSERT_NE(Blas::get(), nullptr);
  std::mt19937_64 rng(34);
  const std::vector<std::pair<const char*, std::function<Tensor(Graph&)>>> graphs{
      {"heads_bias_gelu_residual", batched_bias_gelu_residual},
      {"shared_weight_heads_bias_silu", shared_weight_heads},
      {"scores_scale_mask", attention_scores}};
  for (const auto& [name, build] : graphs) {
    Graph g;
    g.output("y", build(g));
    CpuOptions options;
    options.regions = {Region(computed_nodes(g), {}, "CpuSgemmEpilogue")};
    CpuProgram program(g, options);
    int epilogue_kernels = 0;
    for (const CpuKernel& k : program.kernels())
      epilogue_kernels += k.host_pointers.size() == 2 ? 1 : 0;
    ASSERT_EQ(epilogue_kernels, 1) << name << ": not compiled as BLAS + epilogue";
    Interpreter ref(g);
    // One row per batch (the loops), a block per batch, batches longer than a
    // block (600 rows x 24 columns: 2 blocks, split between threads), and back.
    for (const auto& [s, t] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 5}, {9, 3}, {150, 40}, {600, 17}, {2, 64}}) {
      const DimMap dims{{"s", s}, {"t", t}};
      set_inputs(program, ref, g, dims, rng);
      program.run(dims);
      ref.run(dims);
      expect_near(program.output("y"), ref.output("y"),
                  std::string(name) + " s=" + std::to_string(s) + " t=" + std::to_string(t));
    }
  }
}

// The rule offers the epilogue over a batched product too, and a candidate
// choosing it extracts to one CpuSgemmEpilogue group that runs correctly.
TEST(CpuSgemmEpilogue, RuleOffersTheEpilogueOnBatchedProducts) {
  ASSERT_NE(Blas::get(), nullptr);
  Graph g;
  g.output("y", batched_bias_gelu_residual(g));
  const auto sat = testing::saturate_with_cpu_rules(g);
  const std::vector<egraph::ENodeId> found = sat->nodes_of(cpu_ops().sgemm_epilogue);
  ASSERT_GE(found.size(), 1u);
  std::mt19937_64 rng(55);
  for (egraph::ENodeId n : found) {
    egraph::CandidateSpace space(sat->eg, sat->imp.roots(sat->eg));
    auto extracted = egraph::extract(sat->eg, sat->imp, space.prefer({n})).graph;
    CpuOptions options;
    int groups = 0;
    for (const KernelGroup& grp : extracted->kernel_groups()) {
      groups += grp.op == "CpuSgemmEpilogue" ? 1 : 0;
      options.regions.push_back(Region{grp.nodes, {}, grp.op});
    }
    EXPECT_EQ(groups, 1);
    CpuProgram program(*extracted, options);
    bool epilogue_kernel = false;
    for (const CpuKernel& k : program.kernels()) epilogue_kernel |= k.host_pointers.size() == 2;
    EXPECT_TRUE(epilogue_kernel);
    for (int64_t s : {4, 100}) {
      Interpreter ref(g);
      set_inputs(program, ref, g, {{"s", s}}, rng);
      program.run({{"s", s}});
      ref.run({{"s", s}});
      expect_near(program.output("y"), ref.output("y"), "extracted s=" + std::to_string(s));
    }
  }
}

}  // namespace
}  // namespace luminal::cpu
