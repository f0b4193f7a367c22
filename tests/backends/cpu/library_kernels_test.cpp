// The CPU backend's kernel ops: e-graph rules add CpuMatMul / CpuSgemm,
// extraction records them as kernel groups, and CpuProgram compiles a
// CpuSgemm group as a BLAS call. Expected values come from the reference
// interpreter on the same graph (groups are ignored there: the members are
// ordinary HLIR nodes).
#include "luminal/backends/cpu/library_kernels.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <random>
#include <thread>
#include <vector>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/compiler/serialize.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

TensorData random_f32(std::vector<int64_t> shape, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(rng);
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}

void expect_close(const TensorData& got, const TensorData& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.get(i), want.get(i), 1e-4 * std::max(1.0, std::abs(want.get(i))))
        << what << " element " << i;
}

// The Mul and SumReduce of `out` (a product written as broadcast Mul + SumReduce).
std::vector<NodeId> product_nodes(const Graph& g, const Tensor& out) {
  const NodeId sum = out.node();
  return {g.node(sum).operands[0].node, sum};
}

struct Case {
  const char* name;
  // Builds inputs and the product; returns it.
  Tensor (*build)(Graph&);
  std::map<std::string, std::vector<int64_t>> shapes;  // input shapes at the run
};

// C[s, n] = x[s, k] @ w[k, n]   (B row-major)
Tensor row_row(Graph& g) {
  Tensor x = g.input("x", {"s", 24});
  Tensor w = g.weight("w", {24, 16});
  return (x.unsqueeze(2) * w.unsqueeze(0).expand({"s", 24, 16})).sum_reduce(1);
}
// A linear layer: C[s, n] = x[s, k] @ w[n, k]^T   (B column-major)
Tensor linear(Graph& g) {
  Tensor x = g.input("x", {"s", 24});
  Tensor w = g.weight("w", {16, 24});
  return (x.unsqueeze(1).expand({"s", 16, 24}) * w.unsqueeze(0).expand({"s", 16, 24}))
      .sum_reduce(2);
}
// C[m, n] = xt[k, m]^T @ w[k, n]   (A column-major)
Tensor col_row(Graph& g) {
  Tensor xt = g.input("xt", {24, "s"});
  Tensor w = g.weight("w", {24, 16});
  Tensor x = xt.permute({1, 0});
  return (x.unsqueeze(2) * w.unsqueeze(0).expand({"s", 24, 16})).sum_reduce(1);
}
// Batched with a broadcast weight: C[b, s, n] = x[b, s, k] @ w[k, n]
Tensor batched(Graph& g) {
  Tensor x = g.input("x", {3, "s", 24});
  Tensor w = g.weight("w", {24, 16});
  return (x.unsqueeze(3) * w.unsqueeze(0).unsqueeze(0).expand({3, "s", 24, 16})).sum_reduce(2);
}
// Attention scores: C[h, s, t] = q[h, s, d] @ k[h, t, d]^T
Tensor scores(Graph& g) {
  Tensor q = g.input("q", {2, "s", 8});
  Tensor k = g.input("k", {2, "t", 8});
  return (q.unsqueeze(2).expand({2, "s", "t", 8}) * k.unsqueeze(1).expand({2, "s", "t", 8}))
      .sum_reduce(3);
}

TEST(CpuSgemm, GroupRunsAsBlasAndMatchesInterpreter) {
  ASSERT_NE(Blas::get(), nullptr) << "OpenBLAS (libopenblas.so.0) must be installed for the CPU "
                                     "backend's BLAS kernels (scripts/setup.sh installs it)";
  const std::vector<Case> cases = {
      {"row_row", row_row, {{"x", {5, 24}}, {"w", {24, 16}}}},
      {"row_row_m1", row_row, {{"x", {1, 24}}, {"w", {24, 16}}}},
      {"linear", linear, {{"x", {7, 24}}, {"w", {16, 24}}}},
      {"linear_m1", linear, {{"x", {1, 24}}, {"w", {16, 24}}}},
      {"col_row", col_row, {{"xt", {24, 6}}, {"w", {24, 16}}}},
      // (fewer than 8 rows above: the kernel's own GEMV, both B layouts and a
      // column-major A; from 8 rows on BLAS sgemm)
      {"row_row_m12", row_row, {{"x", {12, 24}}, {"w", {24, 16}}}},
      {"linear_m8", linear, {{"x", {8, 24}}, {"w", {16, 24}}}},
      {"col_row_m10", col_row, {{"xt", {24, 10}}, {"w", {24, 16}}}},
      {"batched", batched, {{"x", {3, 4, 24}}, {"w", {24, 16}}}},
      {"scores", scores, {{"q", {2, 5, 8}}, {"k", {2, 9, 8}}}},
  };
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    Graph g;
    Tensor out = c.build(g);
    g.output("c", out);
    CpuOptions options;
    options.regions = {Region(product_nodes(g, out), {}, "CpuSgemm")};
    CpuProgram program(g, options);
    bool blas = false;
    for (const CpuKernel& k : program.kernels()) blas = blas || !k.host_pointers.empty();
    EXPECT_TRUE(blas) << c.name << ": the group was not compiled as a BLAS call";
    Interpreter ref(g);
    for (const auto& [name, shape] : c.shapes) {
      TensorData t = random_f32(shape, rng);
      program.set_input(name, t);
      ref.set_input(name, t);
    }
    program.run();
    ref.run();
    expect_close(program.output("c"), ref.output("c"), c.name);
  }
}

// OpenBLAS's own model table falls back to SSE3 kernels for CPUs its version
// does not know (Debian 12's 0.3.21 on Intel family 6 model 207); luminal
// replaces only such a fallback, by the widest set the host can run.
TEST(OpenBlasCore, OnlyAFallbackNarrowerThanTheHostIsReplaced) {
  const HostVectorIsa avx512{.avx2_fma = true, .avx512 = true};
  const HostVectorIsa avx2{.avx2_fma = true, .avx512 = false};
  const HostVectorIsa sse{};
  EXPECT_EQ(openblas_core_for_host("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(openblas_core_for_host("Nehalem", avx512), "SkylakeX");
  EXPECT_EQ(openblas_core_for_host("Prescott", avx2), "Haswell");
  EXPECT_EQ(openblas_core_for_host("Sandybridge", avx2), "Haswell");  // AVX without FMA kernels
  EXPECT_EQ(openblas_core_for_host("Prescott", sse), "");             // nothing wider to run
  for (const char* known : {"SkylakeX", "Cooperlake", "SapphireRapids", "Haswell", "Zen"}) {
    EXPECT_EQ(openblas_core_for_host(known, avx512), "") << known;  // OpenBLAS's own choice
    EXPECT_EQ(openblas_core_for_host(known, avx2), "") << known;
  }
  EXPECT_EQ(openblas_core_for_host("skylakex", avx512), "");  // names compare without case
}

TEST(OpenBlasCore, TheLoadedLibraryRunsKernelsAsWideAsTheHost) {
  const Blas* blas = Blas::get();
  ASSERT_NE(blas, nullptr) << "OpenBLAS (libopenblas.so.0) must be installed (scripts/setup.sh)";
  ASSERT_FALSE(blas->core.empty()) << blas->library << " has no openblas_get_corename";
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && *user != '\0') {
    EXPECT_FALSE(blas->core_chosen_by_luminal) << "OPENBLAS_CORETYPE=" << user << " is the user's";
    return;
  }
  // Whatever OpenBLAS detected, the kernels now loaded are not a fallback
  // narrower than this host (before: "Prescott" on an Emerald Rapids VM).
  EXPECT_EQ(openblas_core_for_host(blas->core, HostVectorIsa::detect()), "") << blas->core;
  if (blas->core_chosen_by_luminal) {
    EXPECT_TRUE(blas->core == "SkylakeX" || blas->core == "Haswell") << blas->core;
  }
}

// OpenBLAS's workers stop busy-waiting soon after a threaded call (luminal
// loads it with OPENBLAS_THREAD_TIMEOUT=18, ~0.1 ms, unless the user chose a
// value): with OpenBLAS's default (~0.1 s) they spun through the next
// kernel, which on two cores then ran at half speed. The process's CPU time
// over a 60 ms sleep right after a two-thread sgemm is the spinning.
TEST(OpenBlasThreads, WorkersDoNotSpinAfterAThreadedCall) {
  const Blas* blas = Blas::get();
  ASSERT_NE(blas, nullptr) << "OpenBLAS (libopenblas.so.0) must be installed (scripts/setup.sh)";
  ASSERT_NE(blas->set_threads, nullptr) << blas->library << " has no openblas_set_num_threads";
  const int n = 384;  // large enough that OpenBLAS uses its threads
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a), c(a.size());
  blas->set_threads(2);
  auto cpu_ms = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  };
  // Row-major (101), no transposes (111).
  blas->sgemm(101, 111, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  EXPECT_FLOAT_EQ(c[0], 0.25f * n);
  const double before = cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const double spun = cpu_ms() - before;
  blas->set_threads(ThreadPool::shared().size());
  EXPECT_LT(spun, 20.0) << "OpenBLAS's threads busy-waited " << spun << " ms of a 60 ms sleep";
}

TEST(CpuSgemm, NonProductGroupFallsBackToGeneratedLoops) {
  Graph g;
  Tensor x = g.input("x", {4, 8});
  Tensor y = (x * 2.0).sum_reduce(1);
  g.output("y", y);
  CpuOptions options;
  options.regions = {Region(product_nodes(g, y), {}, "CpuSgemm")};  // a Mul by a constant
  CpuProgram program(g, options);
  for (const CpuKernel& k : program.kernels()) EXPECT_TRUE(k.host_pointers.empty());
  std::mt19937 rng(2);
  TensorData t = random_f32({4, 8}, rng);
  Interpreter ref(g);
  ref.set_input("x", t);
  program.set_input("x", t);
  ref.run();
  program.run();
  expect_close(program.output("y"), ref.output("y"), "fallback");
}

// The rules put CpuMatMul and CpuSgemm into the matmul's class; a candidate
// choosing one extracts to HLIR with a kernel group of that op, which
// survives serialisation (the compile cache) and runs correctly.
TEST(CpuRules, ExtractionRecordsKernelGroups) {
  Graph g;
  Tensor out = linear(g);
  g.output("c", (out * 0.5).exp2());
  const auto sat = testing::saturate_with_cpu_rules(g);
  const egraph::EGraph& eg = sat->eg;
  const egraph::ImportedGraph& imp = sat->imp;
  CpuBackend backend;
  const CpuOps ops = cpu_ops();
  for (egraph::OpId op : {ops.matmul, ops.sgemm}) {
    std::vector<egraph::ENodeId> chosen = sat->nodes_of(op);
    ASSERT_EQ(chosen.size(), 1u) << egraph::OpRegistry::global().name(op);
    // The original nodes (and views) everywhere else: the classes above the
    // product also offer kernels that contain it (CpuSgemmEpilogue), which
    // would bypass it.
    for (NodeId id = 0; id < g.size(); ++id)
      if (eg.find(eg.class_of(imp.node_enode[id])) != eg.find(eg.class_of(chosen[0])))
        chosen.push_back(imp.node_enode[id]);
    for (egraph::ClassId c : eg.class_ids())
      for (egraph::ENodeId n : eg.nodes(c))
        if (eg.op(n) == egraph::kViewOp) chosen.push_back(n);
    egraph::CandidateSpace space(eg, imp.roots(eg));
    const egraph::Candidate cand = space.prefer(chosen);
    auto extracted = egraph::extract(eg, imp, cand).graph;
    std::vector<KernelGroup> groups;  // of this op (the exp2 may be a CpuFused group too)
    for (const KernelGroup& grp : extracted->kernel_groups())
      if (grp.op == egraph::OpRegistry::global().name(op)) groups.push_back(grp);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].nodes.size(), 2u);  // Mul + SumReduce
    // Round trip through the cache's serialisation.
    auto back = compiler::deserialize_graph(compiler::serialize_graph(*extracted));
    EXPECT_EQ(back->kernel_groups(), extracted->kernel_groups());

    std::shared_ptr<const Graph> shared(std::move(back));
    auto program = backend.compile(shared);
    Interpreter ref(g);
    std::mt19937 rng(5);
    TensorData x = random_f32({3, 24}, rng), w = random_f32({16, 24}, rng);
    program->set_input("x", x);
    program->set_input("w", w);
    ref.set_input("x", x);
    ref.set_input("w", w);
    program->run({});
    ref.run();
    expect_close(program->output("c"), ref.output("c"), "extracted");
  }
}

// A product reading a GGUF weight through its dequantizing Cast, on either
// side: the rules offer no f32 library kernel for it (CpuSgemm, or
// CpuSgemmEpilogue with the residual add and scale above it), whose run would
// dequantize the whole weight each time; with the same weight in f32 they are
// offered. (Regression: CpuSgemm was added for every f32 product, and the
// search chose it with a Cast kernel of SmolLM2's down projections.)
TEST(CpuRules, NoF32LibraryProductOverADequantizedWeight) {
  const CpuOps ops = cpu_ops();
  for (DType dtype : {DType::F32, DType::Q4_1}) {
    for (bool weight_left : {false, true}) {
      Graph g;
      Tensor w = g.weight("w", {32, 64}, dtype);
      if (dtype != DType::F32) w = g.cast(w, DType::F32);
      const Tensor y = [&] {
        if (weight_left) {  // w[32, 64] @ xt[64, s]
          Tensor xt = g.input("xt", {64, "s"});
          return (w.unsqueeze(2).expand({32, 64, "s"}) * xt.unsqueeze(0).expand({32, 64, "s"}))
              .sum_reduce(1);
        }
        Tensor x = g.input("x", {"s", 64});  // x[s, 64] @ w[32, 64]^T
        return (x.unsqueeze(1).expand({"s", 32, 64}) * w.unsqueeze(0).expand({"s", 32, 64}))
            .sum_reduce(2);
      }();
      g.output("y", (y + g.input("r", y.shape())) * 0.5);
      const auto sat = testing::saturate_with_cpu_rules(g);
      const std::string what = to_string(dtype) + (weight_left ? " weight left" : " weight right");
      ASSERT_EQ(sat->nodes_of(ops.matmul).size(), 1u) << what << ": the product was not found";
      const size_t f32_kernels = dtype == DType::F32 ? 1u : 0u;
      EXPECT_EQ(sat->nodes_of(ops.sgemm).size(), f32_kernels) << what;
      EXPECT_EQ(sat->nodes_of(ops.sgemm_epilogue).empty(), f32_kernels == 0) << what;
    }
  }
}

TEST(KernelGroups, GraphRejectsBadGroups) {
  Graph g;
  Tensor x = g.input("x", {4});
  Tensor y = x * 2.0;
  Tensor z = y + 1.0;
  g.output("z", z);
  EXPECT_THROW(g.add_kernel_group({"T", {x.node()}}), Error);            // an Input
  EXPECT_THROW(g.add_kernel_group({"T", {99}}), Error);                  // no such node
  EXPECT_THROW(g.add_kernel_group({"T", {}}), Error);                    // empty
  EXPECT_THROW(g.add_kernel_group({"T", {y.node(), y.node()}}), Error);  // twice
  g.add_kernel_group({"T", {y.node(), z.node()}});
  EXPECT_THROW(g.add_kernel_group({"U", {z.node()}}), Error);  // already grouped
  EXPECT_NE(g.to_text().find("group T:"), std::string::npos);
}

}  // namespace
}  // namespace luminal::cpu
