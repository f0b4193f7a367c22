// CpuFused: the fusion rules put, in every class computed by an element-wise op
// or a reduction, the largest body reachable from it; a candidate choosing
// those bodies runs as a few fused kernels and agrees with the reference
// interpreter (softmax, RMS norm with a weight, a SiLU-gated product).
#include "luminal/backends/cpu/fusion.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/reduction.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

TensorData random_f32(std::vector<int64_t> shape, std::mt19937& rng, DType dtype = DType::F32) {
  std::uniform_real_distribution<double> d(-2.0, 2.0);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(rng);
  return TensorData::from_doubles(dtype, std::move(shape), v);
}

// Extract the candidate preferring every CpuFused node and run it.
void check_fused(Graph& g, const std::map<std::string, std::vector<int64_t>>& shapes,
                 size_t max_kernels, DType dtype = DType::F32) {
  const auto sat = testing::saturate_with_cpu_rules(g);
  const egraph::EGraph& eg = sat->eg;
  const egraph::ImportedGraph& imp = sat->imp;
  const std::vector<egraph::ENodeId> fused = sat->nodes_of(fused_op());
  ASSERT_FALSE(fused.empty());
  CpuBackend backend;
  egraph::CandidateSpace space(eg, imp.roots(eg));
  std::shared_ptr<const Graph> extracted(egraph::extract(eg, imp, space.prefer(fused)).graph);
  size_t fused_groups = 0;
  for (const KernelGroup& grp : extracted->kernel_groups()) fused_groups += grp.op == "CpuFused";
  EXPECT_GE(fused_groups, 1u);
  auto program = backend.compile(extracted);
  Interpreter ref(g);
  std::mt19937 rng(9);
  for (const auto& [name, shape] : shapes) {
    TensorData t = random_f32(shape, rng, dtype);
    program->set_input(name, t);
    ref.set_input(name, t);
  }
  program->run({});
  ref.run();
  for (const auto& [name, want] : ref.outputs()) {
    const TensorData& got = program->output(name);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      // f32: float vs the interpreter's double; f16 / bf16: an ulp of the dtype
      // (exp2 / log2 in float libm, see codegen.hpp).
      ASSERT_NEAR(got.get(i), want.get(i),
                  (dtype == DType::F32   ? 1e-5
                   : dtype == DType::F16 ? 2e-3
                                         : 1.6e-2) *
                      std::max(1.0, std::abs(want.get(i))))
          << name << " element " << i;
  }
  // Fewer kernels than nodes: the body's intermediates are not materialised.
  size_t computing = 0;
  for (const Node& n : extracted->nodes())
    computing += n.kind != OpKind::Input && n.kind != OpKind::Output;
  EXPECT_LE(extracted->kernel_groups().size(), max_kernels);
  EXPECT_GT(computing, max_kernels);
}

TEST(CpuFusion, Softmax) {
  Graph g;
  Tensor x = g.input("x", {"s", 37});
  g.output("y", softmax(x, -1));
  check_fused(g, {{"x", {5, 37}}}, 4);
}

TEST(CpuFusion, RmsNormWithWeight) {
  Graph g;
  Tensor x = g.input("x", {"s", 64});
  Tensor w = g.weight("w", {64});
  g.output("y", rms_norm(x, {64}, w, 1e-6));
  check_fused(g, {{"x", {3, 64}}, {"w", {64}}}, 4);
}

TEST(CpuFusion, NarrowFloatStorage) {
  for (DType dt : {DType::F16, DType::BF16}) {
    Graph g;
    Tensor x = g.input("x", {"s", 40}, dt);
    Tensor w = g.weight("w", {40}, dt);
    g.output("norm", rms_norm(x, {40}, w, 1e-5));
    g.output("soft", softmax(x, -1));
    check_fused(g, {{"x", {3, 40}}, {"w", {40}}}, 8, dt);
  }
}

TEST(CpuFusion, SiluGate) {
  Graph g;
  Tensor a = g.input("a", {"s", 48});
  Tensor b = g.input("b", {"s", 48});
  g.output("y", silu(a) * b + 1.0);
  check_fused(g, {{"a", {4, 48}}, {"b", {4, 48}}}, 2);
}

TEST(CpuFusion, BroadcastTranscendentalsGetTheirOwnKernel) {
  // y = x * sin(table) with the table [s, 8] broadcast over 3 heads: the
  // largest body evaluates sin 3 times per table element; a second body of
  // y's class reads the table from its own kernel. Both are kept (timing
  // decides); the second computes the same values.
  Graph g;
  Tensor x = g.input("x", {3, "s", 8});
  Tensor angle = to(g.iota(Expr::index_var(), Expr("s") * 8, DType::I64), DType::F32) * 0.1;
  g.output("y", x * sin(angle.reshape({"s", 8})));
  const auto sat = testing::saturate_with_cpu_rules(g);
  const egraph::EGraph& eg = sat->eg;
  const egraph::ImportedGraph& imp = sat->imp;
  CpuBackend backend;
  const egraph::ClassId out = eg.find(imp.roots(eg).front());  // the Output's class
  const egraph::ClassId y = eg.find(eg.children(eg.nodes(out).front()).front());
  const auto sin_op = static_cast<int64_t>(egraph::op_id(OpKind::Sin));
  std::vector<egraph::ENodeId> with_sin, without_sin;
  for (egraph::ENodeId n : eg.nodes(y)) {
    if (eg.op(n) != fused_op()) continue;
    bool has_sin = false;
    for (const egraph::Payload& e : eg.node_payload(n).at(2).as<egraph::PayloadTuple>())
      has_sin = has_sin || e.at(0).as<int64_t>() == sin_op;
    (has_sin ? with_sin : without_sin).push_back(n);
  }
  ASSERT_EQ(with_sin.size(), 1u);
  ASSERT_EQ(without_sin.size(), 1u);
  // The table is an input of the second body, and is itself a fused kernel.
  std::vector<egraph::ENodeId> chosen = without_sin;
  for (egraph::ClassId in : eg.children(without_sin[0])) {
    if (eg.info(in).shape != egraph::Shape{Expr("s"), Expr(8)}) continue;
    for (egraph::ENodeId n : eg.nodes(in))
      if (eg.op(n) == fused_op()) chosen.push_back(n);
  }
  ASSERT_EQ(chosen.size(), 2u);
  egraph::CandidateSpace space(eg, imp.roots(eg));
  std::shared_ptr<const Graph> extracted(egraph::extract(eg, imp, space.prefer(chosen)).graph);
  auto program = backend.compile(extracted);
  Interpreter ref(g);
  std::mt19937 rng(3);
  const TensorData xv = random_f32({3, 5, 8}, rng);
  program->set_input("x", xv);
  ref.set_input("x", xv);
  const DimMap dims{{"s", 5}};
  program->run(dims);
  ref.run(dims);
  const TensorData& want = ref.output("y");
  const TensorData& got = program->output("y");
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got.get(i), want.get(i), 1e-6) << i;
}

}  // namespace
}  // namespace luminal::cpu
