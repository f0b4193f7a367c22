// The CPU backend behind the compiler: search over e-graph candidates, each
// compiled to JIT kernels and timed; the winner must agree with the reference
// interpreter on the original graph, across calls with different dims.
#include "luminal/backends/cpu/cpu_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

TEST(CpuBackend, NameAndDeviceIdentifyTheHost) {
  CpuBackend backend;
  EXPECT_EQ(backend.name(), "cpu-jit");
  EXPECT_EQ(backend.device().rfind("host cpu", 0), 0u);
}

}  // namespace
}  // namespace luminal::cpu
