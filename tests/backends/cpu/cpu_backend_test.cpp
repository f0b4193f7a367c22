// The CPU backend behind the compiler: search over e-graph candidates, each
// compiled to JIT kernels and timed; the winner must agree with the reference
// interpreter on the original graph, across calls with different dims.
#include "luminal/backends/cpu/cpu_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/test_models.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

// x[s, 8] -> relu-free MLP with a softmax head, written with primitives.
void build_mlp(Graph& g) {
  Tensor x = g.input("x", {"s", 8});
  Tensor w1 = g.weight("w1", {8, 16});
  Tensor w2 = g.weight("w2", {16, 4});
  Tensor h = (x.unsqueeze(2) * w1.unsqueeze(0).expand({"s", 8, 16})).sum_reduce(1);
  Tensor y = (h.unsqueeze(2) * w2.unsqueeze(0).expand({"s", 16, 4})).sum_reduce(1);
  Tensor e = (y * 1.4426950408889634).exp2();
  g.output("probs", e / e.sum_reduce(1).unsqueeze(1).expand(e.shape()));
}

TensorData random_f32(std::vector<int64_t> shape, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(rng);
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}

TEST(CpuBackend, SearchWinnerMatchesInterpreterAcrossDims) {
  Graph g;
  build_mlp(g);
  CpuBackend backend;
  compiler::CompileOptions opts;
  opts.search_iters = 3;
  opts.cache = false;
  opts.seed = 7;
  compiler::CompiledModel model = compiler::compile(g, backend, opts);
  EXPECT_GE(model.stats().candidates, 1u);
  EXPECT_GT(model.stats().best_ms, 0.0);

  std::mt19937 rng(3);
  TensorData w1 = random_f32({8, 16}, rng), w2 = random_f32({16, 4}, rng);
  model.set_input("w1", w1);
  model.set_input("w2", w2);
  Interpreter ref(g);
  ref.set_input("w1", w1);
  ref.set_input("w2", w2);
  for (int64_t s : {3, 1, 6}) {
    TensorData x = random_f32({s, 8}, rng);
    model.set_input("x", x);
    ref.set_input("x", x);
    model.run();  // persistent weights stay bound; s is inferred
    ref.run();
    const TensorData& got = model.output("probs");
    const TensorData& want = ref.output("probs");
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      EXPECT_NEAR(got.get(i), want.get(i), 1e-5 * std::max(1.0, std::abs(want.get(i))))
          << "s=" << s << " element " << i;
  }
}

// Regression: a folded 2-layer Llama (KV cache of p + s positions) on the CPU
// backend with the original candidate only. Generated index math over the
// compound length p + s was printed without parentheses (`_t % p + s`), which
// disagreed with the interpreter (and divided by zero at p = 0).
TEST(CpuBackend, FoldedLlamaWithCacheMatchesInterpreter) {
  Graph g;
  compiler::test_models::build_llama(g, 2);
  CpuBackend backend;
  compiler::CompileOptions opts;
  opts.search_iters = 1;
  opts.cache = false;
  opts.profile_dims = {{"s", 4}, {"p", 4}};
  compiler::CompiledModel model = compiler::compile(g, backend, opts);
  EXPECT_GE(model.stats().block_instances, 2u);
  std::mt19937 rng(5);
  Interpreter ref(g);
  for (NodeId id : g.inputs()) {
    const Node& n = g.node(id);
    if (n.name == "tokens") continue;
    std::vector<int64_t> shape;
    for (const Expr& d : n.shape) shape.push_back(d.eval({}));
    TensorData t = random_f32(shape, rng);
    model.set_input(n.name, t);
    ref.set_input(n.name, t);
  }
  for (auto [p, s] : {std::pair<int64_t, int64_t>{0, 3}, {3, 1}}) {
    TensorData tokens(DType::I32, {1, s});
    for (int64_t i = 0; i < s; ++i) tokens.set_int(i, (i * 5 + 2) % 12);
    model.set_input("tokens", tokens);
    ref.set_input("tokens", tokens);
    model.run({{"p", p}});
    ref.run({{"p", p}});
    const TensorData& got = model.output("logits");
    const TensorData& want = ref.output("logits");
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_NEAR(got.get(i), want.get(i), 1e-3 * std::max(1.0, std::abs(want.get(i))))
          << "p=" << p << " element " << i;
  }
}

TEST(CpuBackend, NameAndDeviceIdentifyTheHost) {
  CpuBackend backend;
  EXPECT_EQ(backend.name(), "cpu-jit");
  EXPECT_EQ(backend.device().rfind("host cpu", 0), 0u);
}

}  // namespace
}  // namespace luminal::cpu
