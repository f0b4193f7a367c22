// Compile-time benchmark (issue 4): a Llama-style stack (hidden 64) with 2 and
// 30 layers, compiled cold and again from the on-disk cache (the median of 5
// cached compiles), for the reference backend (search cost alone) and the CPU
// backend (search + generated kernels). Prints `name value` lines and writes
// them as JSON (argv[1], default bench_compile.json).
// Usage: compile_bench [out.json] [search_iters]
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "luminal/compiler/compile.hpp"
#include "luminal/nn/transformer.hpp"

using namespace luminal;

namespace {

void build(Graph& g, int layers) {
  nn::LlamaConfig c;
  c.block.attention = {.hidden_size = 64, .num_heads = 4, .num_kv_heads = 2};
  c.block.intermediate_size = 128;
  c.vocab_size = 64;
  c.num_layers = layers;
  nn::LlamaModel m(g, c);
  g.output("logits", m.forward(g.input("tokens", {1, "s"}, DType::I32)));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = argc > 1 ? argv[1] : "bench_compile.json";
  const size_t iters = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8;
  const std::filesystem::path cache = std::filesystem::temp_directory_path() /
                                      ("luminal-compile-bench-" + std::to_string(::getpid()));
  std::vector<std::pair<std::string, double>> figures;
  for (const std::string device : {"reference", "cpu"})
    for (int layers : {2, 30}) {
      // Cold means cold: the CPU backend's kernel cache (under
      // LUMINAL_CACHE_DIR) starts empty too, so no run reuses another's kernels.
      std::filesystem::remove_all(cache);
      ::setenv("LUMINAL_CACHE_DIR", cache.c_str(), 1);
      Graph g;
      build(g, layers);
      const auto backend_ptr = compiler::backend_for_device(device);
      compiler::Backend& backend = *backend_ptr;
      compiler::CompileOptions o;
      o.search_iters = iters;
      o.seed = 1;
      o.cache_dir = cache.string();
      o.profile_dims = {{"s", 4}};
      const auto cold = compiler::compile(g, backend, o);
      std::vector<double> cached_ms;
      bool hit = true;
      for (int rep = 0; rep < 5; ++rep) {
        const auto warm = compiler::compile(g, backend, o);
        cached_ms.push_back(warm.stats().compile_ms);
        hit = hit && warm.stats().cached;
      }
      std::sort(cached_ms.begin(), cached_ms.end());
      const double cached = cached_ms[cached_ms.size() / 2];
      const std::string p = device + "_llama_h64_l" + std::to_string(layers) + "_";
      figures.emplace_back(p + "hlir_nodes", static_cast<double>(g.size()));
      figures.emplace_back(p + "egraph_nodes", static_cast<double>(cold.stats().egraph_nodes));
      figures.emplace_back(p + "candidates", static_cast<double>(cold.stats().candidates));
      figures.emplace_back(p + "compile_ms_cold", cold.stats().compile_ms);
      figures.emplace_back(p + "compile_ms_cached", cached);
      figures.emplace_back(p + "cached_over_cold", cached / cold.stats().compile_ms);
      figures.emplace_back(p + "cache_hit", hit ? 1 : 0);
    }
  std::filesystem::remove_all(cache);
  for (const std::string device : {"reference", "cpu"}) {
    double cold2 = 0, cold30 = 0;
    for (const auto& [k, v] : figures) {
      if (k == device + "_llama_h64_l2_compile_ms_cold") cold2 = v;
      if (k == device + "_llama_h64_l30_compile_ms_cold") cold30 = v;
    }
    figures.emplace_back(device + "_compile_cold_ratio_l30_over_l2", cold30 / cold2);
  }
  std::ofstream json(out_path);
  json << "{\n";
  for (size_t i = 0; i < figures.size(); ++i) {
    std::printf("%s %.6g\n", figures[i].first.c_str(), figures[i].second);
    json << "  \"" << figures[i].first << "\": " << figures[i].second
         << (i + 1 < figures.size() ? ",\n" : "\n");
  }
  json << "}\n";
  return json ? 0 : 1;
}
