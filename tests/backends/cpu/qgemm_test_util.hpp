#pragma once
// Helpers of the quantized-GEMM tests (qgemm_test.cpp, qgemm_i16_test.cpp):
// random GGUF weights, graphs of quantized Linear layers with their products
// as CpuQMatMul-style regions, and their comparison with the interpreter.

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu::testing {

// Random bytes with a sane f16 scale (and Q4_1 min) in every block.
inline TensorData random_blocks(DType d, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  TensorData t(d, {rows, cols});
  const size_t block = dtype_info(d).block_bytes;
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  for (size_t i = 0; i < t.nbytes(); ++i) t.data()[i] = static_cast<std::byte>(rng() & 255);
  for (size_t b = 0; b < t.nbytes() / block; ++b) {
    const uint16_t s[2] = {float_to_f16_bits(scale(rng)), float_to_f16_bits(4 * scale(rng))};
    std::memcpy(t.data() + b * block, s, d == DType::Q4_1 ? 4 : 2);
  }
  return t;
}

// Linear layers with `d` weights over inputs of "s" rows; every product a
// group of kernel op `op` (its Cast, Mul and SumReduce; an F32 weight's: the
// Mul and SumReduce, uniform in [-0.05, 0.05]).
struct QLinears {
  Graph g;
  std::vector<std::pair<std::string, TensorData>> weights;
  std::string op = "CpuQMatMul";

  void add(DType d, const std::string& name, const Tensor& x, int64_t k, int64_t n,
           std::mt19937_64& rng) {
    std::optional<nn::Linear> lin;
    {
      nn::ParameterStorage storage([&](const std::string&, DType) { return d; });
      lin.emplace(g, name, k, n, /*bias=*/false);
    }
    g.output("y_" + name, lin->forward(x));
    weights.emplace_back(name + ".weight", d == DType::F32
                                               ? random_tensor(DType::F32, {n, k}, rng, -0.05, 0.05)
                                               : random_blocks(d, n, k, rng));
  }

  std::vector<Region> regions() const {
    std::vector<Region> out;
    for (NodeId id = 0; id < g.size(); ++id) {
      if (g.node(id).kind != OpKind::SumReduce) continue;
      const NodeId mul = g.node(id).operands[0].node;
      bool cast = false;
      for (const Operand& o : g.node(mul).operands)
        if (g.node(o.node).kind == OpKind::Cast) {
          out.emplace_back(std::vector<NodeId>{o.node, mul, id}, std::vector<NodeId>{}, op);
          cast = true;
        }
      if (!cast) out.emplace_back(std::vector<NodeId>{mul, id}, std::vector<NodeId>{}, op);
    }
    return out;
  }

  // The weights and random x inputs of `rows` rows (uniform in [-1, 1]).
  std::vector<std::pair<std::string, TensorData>> inputs(int64_t rows, std::mt19937_64& rng) const {
    std::vector<std::pair<std::string, TensorData>> out = weights;
    for (NodeId id : g.inputs()) {
      const Node& n = g.node(id);
      if (n.name.find(".weight") == std::string::npos)
        out.emplace_back(n.name, random_tensor(DType::F32, {rows, n.shape[1].as_const().value()},
                                               rng, -1.0, 1.0));
    }
    return out;
  }

  // Runs the programs and the interpreter on the same random inputs (`rows`
  // rows for every "s" input) and compares every output.
  void check(const std::vector<CpuProgram*>& programs, int64_t rows, std::mt19937_64& rng,
             const std::string& what) {
    Interpreter ref(g);
    const std::vector<std::pair<std::string, TensorData>> inputs = this->inputs(rows, rng);
    for (const auto& [name, t] : inputs) ref.set_input(name, t);
    ref.run();
    for (size_t p = 0; p < programs.size(); ++p) {
      for (const auto& [name, t] : inputs) programs[p]->set_input(name, t);
      programs[p]->run();
      // (2048 ulp: f32 sums in another order than the interpreter's)
      for (NodeId id : g.outputs()) {
        const std::string& name = g.node(id).name;
        expect_close(programs[p]->output(name), ref.output(name), 2048, 1e-4,
                     what + " program " + std::to_string(p) + " " + name);
      }
    }
  }

  CpuProgram program(int threads = 0, const char* flag = nullptr) const {
    CpuOptions options;
    options.regions = regions();
    if (threads > 0) options.num_threads = threads;
    if (flag != nullptr) options.jit.extra_flags = {flag};
    return CpuProgram(g, options);
  }
};

// How many of the program's kernels call `fn` (e.g. "lk::qgemm<").
inline int kernels_calling(const CpuProgram& program, const std::string& fn) {
  int n = 0;
  for (const CpuKernel& k : program.kernels()) n += k.code.find(fn) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace luminal::cpu::testing
