// Equivalence fuzzing with the CPU backend's rules: the e-graph saturated with
// the core rules AND the CPU kernel ops (CpuMatMul, CpuSgemm, CpuQMatMul,
// CpuGatherDequant, CpuFused). (1) Every kernel op lowers to exact HLIR, so
// every random candidate matches the original graph bit for bit on the
// interpreter. (2) The same candidates compiled by the CPU backend (groups as
// fused / library kernels) agree with the interpreter within float tolerance
// (BLAS and the kernels' lane sums add in another order).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "compiler/test_models.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/nn/module.hpp"

namespace luminal::cpu {
namespace {

egraph::RuleRegistry cpu_registry() {
  egraph::RuleRegistry registry(egraph::RuleRegistry::global());
  CpuBackend().register_rules(registry);
  return registry;
}

void build_quantized_llama(Graph& g) {
  // Linear / embedding weights stored as Q4_1 (norms stay f32).
  nn::ParameterStorage storage([](const std::string& name, DType d) {
    return name.find("norm") == std::string::npos ? DType::Q4_1 : d;
  });
  nn::LlamaConfig c;
  c.block.attention = {.hidden_size = 64, .num_heads = 4, .num_kv_heads = 2};
  c.block.intermediate_size = 96;
  c.vocab_size = 64;
  c.num_layers = 2;
  c.tie_word_embeddings = true;
  nn::LlamaModel m(g, c);
  Tensor tokens = g.input("tokens", {1, "s"}, DType::I32);
  auto step = m.forward(tokens, "p", m.make_caches(1, 16));
  g.output("logits", step.logits);
}

TEST(CpuFuzz, KernelOpCandidatesAreExactOnTheInterpreter) {
  const egraph::RuleRegistry registry = cpu_registry();
  for (int model = 0; model < 2; ++model) {
    Graph g;
    if (model == 0)
      compiler::test_models::build_llama(g, 2);
    else
      build_quantized_llama(g);
    egraph::FuzzOptions o;
    o.candidates = 32;
    o.seed = 5;
    o.dims = {{"s", 3}, {"p", 2}};
    o.registry = &registry;
    if (model == 1) {
      // Token ids in range for the vocabulary (random_inputs draws small ints).
      TensorData tokens(DType::I32, {1, 3});
      for (int64_t i = 0; i < 3; ++i) tokens.set_int(i, (i * 7 + 3) % 64);
      o.inputs["tokens"] = tokens;
    }
    egraph::FuzzResult r = egraph::fuzz_equivalence(g, o);
    EXPECT_TRUE(r.failures.empty()) << "model " << model << ": " << r.failures.front();
    EXPECT_GE(r.checked, 32u);
    EXPECT_GT(r.non_hlir_uses["CpuFused"], 0u) << "model " << model;
    EXPECT_GT(r.non_hlir_uses["CpuMatMul"] + r.non_hlir_uses["CpuSgemm"], 0u);
    if (model == 1) {
      EXPECT_GT(r.non_hlir_uses["CpuQMatMul"], 0u);
      EXPECT_GT(r.non_hlir_uses["CpuGatherDequant"], 0u);
    }
  }
}

TEST(CpuFuzz, CpuBackendRunsKernelOpCandidates) {
  const egraph::RuleRegistry registry = cpu_registry();
  Graph g;
  build_quantized_llama(g);
  const DimMap dims{{"s", 3}, {"p", 2}};
  TensorData tokens(DType::I32, {1, 3});
  for (int64_t i = 0; i < 3; ++i) tokens.set_int(i, (i * 5 + 1) % 64);
  const egraph::Inputs inputs = egraph::random_inputs(g, dims, 11, {{"tokens", tokens}});
  const auto want = egraph::run_graph(g, inputs, dims);

  egraph::EGraph eg;
  const egraph::ImportedGraph imp = egraph::import_graph(eg, g);
  egraph::run_schedule(eg, registry.pipeline(), registry, {});
  egraph::CandidateSpace space(eg, imp.roots(eg));
  std::mt19937_64 rng(3);
  CpuBackend backend;
  for (int i = 0; i < 6; ++i) {
    const egraph::Candidate cand = i == 0 ? space.first() : space.random(rng);
    std::shared_ptr<const Graph> extracted(egraph::extract(eg, imp, cand).graph);
    auto program = backend.compile(extracted);
    for (const auto& [name, data] : inputs) program->set_input(name, data);
    program->run(dims);
    const TensorData& got = program->output("logits");
    const TensorData& ref = want.at("logits");
    ASSERT_EQ(got.shape(), ref.shape());
    // (4e-3: a candidate may take the int16 products of MatmulPrecision::High,
    // x rounded to 16 bits per block of 32; with three of them in this
    // 2-layer model the logits moved by 2.4e-3, as SmolLM2's by up to 3.2e-3
    // (README). Each product is checked against its rounding bound in
    // qgemm_i16_test.)
    for (int64_t k = 0; k < ref.numel(); ++k)
      ASSERT_NEAR(got.get(k), ref.get(k), 4e-3 * std::max(1.0, std::abs(ref.get(k))))
          << "candidate " << i << " element " << k;
  }
}

}  // namespace
}  // namespace luminal::cpu
