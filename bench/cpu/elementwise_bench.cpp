// CPU backend micro-benchmark: a 10-op element-wise chain over n f32 values
// (default 32M), fused into one generated kernel, against
//   * a plain memcpy of the same bytes (one read + one write of n floats), and
//   * the same ops executed one kernel each (the unfused baseline the search must beat).
//
// Prints `name ratio` lines on stdout (higher is better for luminal):
//   fused_chain_vs_memcpy   memcpy time / fused time      (target >= 0.7)
//   fused_chain_vs_unfused  unfused time / fused time     (target >= 3)
// and the raw times on stderr. Options: --n N, --reps R, --json PATH.
// Threads: LUMINAL_NUM_THREADS (default: all cores); memcpy is single-threaded.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/core/tensor.hpp"

namespace {

using luminal::DType;
using luminal::Graph;
using luminal::NodeId;
using luminal::OpKind;
using luminal::Tensor;
using luminal::TensorData;
namespace cpu = luminal::cpu;

template <typename Fn>
double best_seconds(int reps, Fn&& fn) {
  fn();  // warm-up: page faults, caches, thread start
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 25;
  int reps = 7;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) {
      n = std::atoll(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--n N] [--reps R] [--json PATH]\n", argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }

  // y = recip(sqrt((x * a + b) * c + d) * e + f) * g + h: 10 element-wise ops.
  Graph graph;
  Tensor x = graph.weight("x", {"n"}, DType::F32);
  const NodeId first = static_cast<NodeId>(graph.size());
  Tensor y = ((x * 1.0001 + 0.5) * 0.999 + 0.25).sqrt();
  y = (y * 1.5 + 2.0).recip() * 3.0 + 1.0;
  graph.output("y", y);
  const NodeId output = static_cast<NodeId>(graph.size() - 1);
  const NodeId last_op = graph.node(output).operands[0].node;

  cpu::CpuOptions fused_options;
  cpu::Region all;
  for (NodeId id = first; id < graph.size(); ++id) all.nodes.push_back(id);
  fused_options.regions = {all};
  cpu::CpuOptions unfused_options;  // one kernel per op; the output copy rides on the last op
  unfused_options.regions = {{{last_op, output}, {output}, {}}};

  cpu::CpuProgram fused(graph, fused_options);
  cpu::CpuProgram unfused(graph, unfused_options);
  size_t op_kernels = 0;
  for (const cpu::CpuKernel& k : unfused.kernels())
    if (k.name.find("constant") == std::string::npos) ++op_kernels;

  TensorData input(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) input.set(i, 1.0 + static_cast<double>(i % 1000) / 1000.0);
  fused.set_input("x", input);
  unfused.set_input("x", input);

  const double t_fused = best_seconds(reps, [&] { fused.run(); });
  const double t_unfused = best_seconds(reps, [&] { unfused.run(); });
  std::vector<float> src(static_cast<size_t>(n), 1.0f), dst(static_cast<size_t>(n), 0.0f);
  const double t_memcpy = best_seconds(
      reps, [&] { std::memcpy(dst.data(), src.data(), static_cast<size_t>(n) * sizeof(float)); });
  if (fused.output("y").get(n - 1) != unfused.output("y").get(n - 1)) {
    std::fprintf(stderr, "fused and unfused results differ\n");
    return 1;
  }

  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  std::fprintf(stderr,
               "n = %lld f32, %d threads, best of %d\n"
               "  memcpy          %8.3f ms  %6.1f GB/s\n"
               "  fused chain     %8.3f ms  %6.1f GB/s  (1 kernel)\n"
               "  unfused chain   %8.3f ms              (%zu op kernels)\n",
               static_cast<long long>(n), cpu::ThreadPool::shared().size(), reps, t_memcpy * 1e3,
               bytes / t_memcpy / 1e9, t_fused * 1e3, bytes / t_fused / 1e9, t_unfused * 1e3,
               op_kernels);
  const double vs_memcpy = t_memcpy / t_fused, vs_unfused = t_unfused / t_fused;
  std::printf("fused_chain_vs_memcpy %.3f\n", vs_memcpy);
  std::printf("fused_chain_vs_unfused %.3f\n", vs_unfused);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"n\": " << n << ", \"threads\": " << cpu::ThreadPool::shared().size()
        << ", \"memcpy_s\": " << t_memcpy << ", \"fused_s\": " << t_fused
        << ", \"unfused_s\": " << t_unfused << ", \"fused_chain_vs_memcpy\": " << vs_memcpy
        << ", \"fused_chain_vs_unfused\": " << vs_unfused << "}\n";
  }
  return 0;
}
