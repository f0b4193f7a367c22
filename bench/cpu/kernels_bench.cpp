// CPU backend kernel benchmarks (issue 5, "Benchmarks"): each luminal figure is
// whatever compiler::compile(graph, CpuBackend) picks (search by timing, compile
// cache off, fixed seed), measured against a peer in the same run:
//
//   softmax_vs_memcpy, rms_norm_vs_memcpy       (target >= 0.6)
//       softmax / RMS norm (last axis) over n x n f32 (default 4096): memcpy time
//       of the same bytes (the input's size) / luminal time.
//   sgemm_<n>_vs_openblas                       (target >= 0.95)
//       [n, n] @ [n, n] f32, n = 1024 and 2048: cblas_sgemm of libopenblas.so.0,
//       as luminal loaded it (see OpenBlas below), same thread count / luminal time.
//   linear_bias_gelu_vs_blas_then_elementwise   (target >= 1.1)
//       gelu(x @ W^T + b), x [512, 576], W [1536, 576] (a SmolLM2-sized MLP layer):
//       (cblas_sgemm, then bias + GELU as one separate pass) / luminal time. The
//       separate pass is gelu(y + b) compiled by luminal on its own (the search's
//       best element-wise kernels); both compiled for (timed at) 512 rows. At
//       the default matmul precision (high) luminal's product may be the int16
//       one (CpuMatMulInt16); linear_bias_gelu_highest_vs_... keeps it f32, so
//       that figure isolates what fusing into the GEMM buys.
//   q4_1_gemv_<k>x<n>_vs_memcpy                 (target >= 0.6)
//       x [1, k] @ dequantize(W)^T with W a Q4_1 [n, k] weight (SmolLM2 shapes
//       576x1536, 1536x576, 576x49152): effective bytes/s (the Q4_1 weight
//       bytes / time) over memcpy bandwidth (bytes copied / time, the same
//       number of bytes), i.e. memcpy time / luminal time.
//   q4_1_gemv_<k>x<n>_cold_vs_memcpy            (target >= 0.6)
//       The same GEMV with its weight from DRAM, as in a decode step: 128 MB
//       written before each run (4x this machine's L3), against memcpy of the
//       weight bytes after the same eviction.
//   qgemm_<type>_<m>x<k>x<n>                    (target >= 0.9)
//       x [m, k] @ dequantize(W)^T with W a Q4_1 / Q8_0 [n, k] weight, many rows
//       (a prefill; SmolLM2's (k, n) = (576, 576), (576, 192), (576, 1536),
//       (1536, 576); m = 128 and 512): cblas_sgemm on an f32 copy of the
//       dequantised weight, same threads / luminal time (which never makes that
//       copy). One compiled program (dynamic m) per type and shape.
//   qgemm_i16_<type>_<m>x<k>x<n>                (target >= 0.9)
//   qgemm_i16_vs_f32_<type>_<m>x<k>x<n>         (target >= 1.5)
//   amx_vs_int16_<f32|q4_1>_<m>x<k>x<n>        (AMX hosts: CpuMatMulAmx / CpuQMatMulAmx
//       against the int16 kernels, regions by hand; no target, > 1 is faster)
//       The same products by the CpuQMatMulInt16 kernel (x rounded to int16
//       per block of 32, AVX-512 VNNI dot products; lk::qgemm_i16), its
//       regions set by hand (not searched): cblas_sgemm as above / its time,
//       and the CpuQMatMul kernel's time (lk::qgemm, regions by hand) / its
//       time; also at m = 1 and 4 (a decode step: the int16 GEMV
//       lk::qx8_gemv against the f32 GEMV lk::qmatmul; OpenBLAS is slow
//       there, the first figure says little).
//   qgemm_i16_layers_q4_1_128x<k>x<n>           (only with --only qgemm_i16_layers; no
//       target) the int16 product over 24 distinct weights in turn, as a
//       model's layers run it (each weight's copy from memory), against the
//       same product repeated on one weight; > 1 is faster.
//
// memcpy is timed both on one thread and split over the luminal pool; the faster
// is the peer (the bandwidth this machine achieves). Every time is the best of
// --reps rounds in which luminal and its peer take turns (best_of_rounds).
// Dims are symbolic (the rows "r" of softmax / RMS norm, "m", "k", "n" of the
// products). Softmax and RMS norm are searched at the rows they run at (which
// candidate is fastest changes with size: at 256 rows, in L3, a three-kernel
// softmax can win that takes 1.7x the one-pass kernel's time at 4096 rows);
// the products at --profile (default 256; m = 64 for the linear layer, s = 1
// for GEMV), because the unfused original candidate materialises the [m, n, k]
// product (and the interpreter checks the winner in f64); the compiled program
// then runs at the benchmark sizes without recompiling. --profile P sets both.
//
// Prints `name ratio` lines on stdout (higher is better for luminal), raw times
// and the kernels the search picked on stderr, and writes --json PATH.
// Options: --n N (softmax/RMS size), --quick (small sizes, < 1 minute with a
// warm kernel cache; the resized ones say their target is not for that size), --reps R,
// --search-iters I, --profile P, --only a,b (name prefixes), --json PATH. Threads:
// LUMINAL_NUM_THREADS (default: all cores).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/compiler/matmul_precision.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/nn/linear.hpp"

namespace {

using luminal::DimMap;
using luminal::DType;
using luminal::Graph;
using luminal::NodeId;
using luminal::Tensor;
using luminal::TensorData;
namespace cpu = luminal::cpu;
namespace compiler = luminal::compiler;
namespace nn = luminal::nn;

struct Options {
  int64_t n = 4096;
  std::vector<int64_t> sgemm_sizes = {1024, 2048};
  int64_t linear_m = 512, linear_k = 576, linear_n = 1536;
  int reps = 5;
  size_t search_iters = 16;
  int64_t profile = 0;  // 0: the rows they run at (softmax / RMS norm), 256 (sgemm)
  std::vector<std::string> only;
  std::string json;
  bool quick = false;
};

// --quick shrinks these benchmarks below the sizes their targets are set at
// (softmax / RMS norm at 1024^2 fit in L3, where memcpy runs at cache speed):
// their ratios are then no measurement of the target.
bool resized_by_quick(const std::string& name) {
  for (const char* p : {"softmax", "rms_norm", "sgemm_", "linear_"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

struct Result {
  std::string name;
  double ratio = 0, target = 0;
  double luminal_s = 0, peer_s = 0;
  std::string peer;            // what the peer is
  std::string picked;          // the kernels the search chose
  std::string note;            // sizes, bandwidths
  bool at_target_size = true;  // false where --quick shrank it (resized_by_quick)
};

Result result(std::string name, double target, std::string peer) {
  Result r;
  r.name = std::move(name);
  r.target = target;
  r.peer = std::move(peer);
  return r;
}

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Best time of each function over `reps` rounds. In a round each function gets
// one untimed call, then a timed one: they take turns, so a burst of load from
// other processes on this shared machine hits luminal and its peer alike, and
// the untimed call absorbs what the previous one leaves behind (OpenBLAS'
// threads keep spinning for a while after a call).
std::vector<double> best_of_rounds(int reps, const std::vector<std::function<void()>>& fns) {
  std::vector<double> best(fns.size(), 1e30);
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < fns.size(); ++i) {
      fns[i]();
      const auto t0 = std::chrono::steady_clock::now();
      fns[i]();
      best[i] = std::min(best[i], seconds(t0, std::chrono::steady_clock::now()));
    }
  return best;
}

// The peer's two copies of src to dst: on one thread, and split over the
// luminal pool (each thread a contiguous piece); the faster is the peer, the
// bandwidth this machine achieves.
std::vector<std::function<void()>> memcpy_peers(std::vector<std::byte>& src,
                                                std::vector<std::byte>& dst) {
  return {[&] { std::memcpy(dst.data(), src.data(), src.size()); },
          [&] {
            cpu::ThreadPool& pool = cpu::ThreadPool::shared();
            pool.run_chunks(
                static_cast<int64_t>(src.size()), pool.size(),
                [&](int, int64_t b, int64_t e) {
                  std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b));
                },
                4096);
          }};
}

// luminal's run against memcpy of `bytes`: {luminal seconds, memcpy seconds}.
std::pair<double, double> vs_memcpy(int reps, size_t bytes, const std::function<void()>& run) {
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes, std::byte{0});
  std::vector<std::function<void()>> fns = memcpy_peers(src, dst);
  fns.insert(fns.begin(), run);
  const std::vector<double> t = best_of_rounds(reps, fns);
  return {t[0], std::min(t[1], t[2])};
}

TensorData random_f32(std::vector<int64_t> shape, std::mt19937& rng, float lo, float hi) {
  TensorData t(DType::F32, std::move(shape));
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = reinterpret_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

// Q4_1 blocks (f16 scale, f16 min, 16 bytes of nibbles) with sane scales.
TensorData random_q4_1(int64_t rows, int64_t cols, std::mt19937& rng) {
  TensorData t(DType::Q4_1, {rows, cols});
  const size_t block_bytes = luminal::storage_bytes(DType::Q4_1, 32);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  for (size_t b = 0; b < t.nbytes() / block_bytes; ++b) {
    std::byte* block = t.data() + b * block_bytes;
    for (size_t i = 4; i < block_bytes; ++i) block[i] = static_cast<std::byte>(byte(rng));
    const uint16_t d = luminal::float_to_f16_bits(scale(rng));
    const uint16_t m = luminal::float_to_f16_bits(scale(rng) * 4);
    std::memcpy(block, &d, 2);
    std::memcpy(block + 2, &m, 2);
  }
  return t;
}

const float* f32(const TensorData& t) {
  return reinterpret_cast<const float*>(t.data());
}

// Largest |a - b| / max(1, |b|) over two f32 tensors of the same size.
double max_rel_diff(const TensorData& a, const TensorData& b) {
  if (a.numel() != b.numel()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = f32(a)[i], y = f32(b)[i];
    worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
  }
  return worst;
}

// OpenBLAS as the peer: the library luminal's loader opened (one copy per
// process, so both run the kernel set it chose: Blas::core, see
// openblas_core_for_host), its threads at the pool's size.
struct OpenBlas {
  luminal::cpu::Blas::Sgemm sgemm = nullptr;
  std::string error;
  std::string core;  // its kernel set, "" if unknown
  explicit OpenBlas(int threads) {
    const luminal::cpu::Blas* own = luminal::cpu::Blas::get();
    if (own == nullptr) {
      error = "no libopenblas.so.0 / libopenblas.so could be loaded";
      return;
    }
    sgemm = own->sgemm;
    core = own->core;
    if (own->set_threads != nullptr) own->set_threads(threads);
  }
  // Row-major C[m, n] = A[m, k] @ (trans_b ? B[n, k]^T : B[k, n]).
  void gemm(int m, int n, int k, const float* a, const float* b, bool trans_b, float* c) const {
    constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
    sgemm(kRowMajor, kNoTrans, trans_b ? kTrans : kNoTrans, m, n, k, 1.0f, a, k, b, trans_b ? k : n,
          0.0f, c, n);
  }
};

compiler::CompiledModel compile(
    const Graph& g, const Options& o, DimMap profile_dims,
    compiler::MatmulPrecision precision = compiler::MatmulPrecision::High) {
  cpu::CpuBackend backend;
  compiler::CompileOptions opts;
  opts.matmul_precision = precision;
  opts.cache = false;
  opts.seed = 1;
  opts.search_iters = o.search_iters;
  opts.profile_dims = std::move(profile_dims);
  return compiler::compile(g, backend, opts);
}

// The winner's kernels in words: its kernel groups by op, plus how many other
// compute nodes it has (each its own generated kernel, unless grouped).
std::string picked(const compiler::CompiledModel& m) {
  const Graph& g = m.graph();
  std::map<std::string, int> groups;
  std::vector<bool> grouped(g.size(), false);
  for (const luminal::KernelGroup& k : g.kernel_groups()) {
    ++groups[k.op];
    for (NodeId id : k.nodes) grouped[id] = true;
  }
  int loose = 0;
  for (NodeId id = 0; id < g.size(); ++id) {
    const luminal::OpKind kind = g.node(id).kind;
    if (!grouped[id] && kind != luminal::OpKind::Input && kind != luminal::OpKind::Output &&
        kind != luminal::OpKind::Constant)
      ++loose;
  }
  std::ostringstream s;
  for (const auto& [op, count] : groups) s << op << " x" << count << ", ";
  s << loose << " ungrouped nodes";
  return s.str();
}

// ---- benchmarks ---------------------------------------------------------------

// A hand-computed row of the result (in double), to check luminal's output.
using RowRef = std::function<void(const float* x, const float* w, int64_t n, double* out)>;

Result row_op(const Options& o, const std::string& name,
              const std::function<Tensor(const Tensor&, Graph&)>& op, const RowRef& row_ref) {
  const int64_t n = o.n;
  Graph g;
  Tensor x = g.weight("x", {"r", n});
  g.output("y", op(x, g));
  compiler::CompiledModel model =
      compile(g, o, {{"r", o.profile > 0 ? std::min(o.profile, n) : n}});
  std::mt19937 rng(11);
  const TensorData xv = random_f32({n, n}, rng, -4.0f, 4.0f);
  const TensorData wv = random_f32({n}, rng, 0.5f, 1.5f);
  model.set_input("x", xv);
  if (g.find_input("w")) model.set_input("w", wv);
  Result r = result(name + "_vs_memcpy", 0.6, "memcpy of n*n*4 bytes");
  std::tie(r.luminal_s, r.peer_s) =
      vs_memcpy(o.reps, static_cast<size_t>(n * n) * sizeof(float), [&] { model.run(); });
  r.ratio = r.peer_s / r.luminal_s;
  r.picked = picked(model);
  double diff = 0;
  std::vector<double> want(static_cast<size_t>(n));
  for (int64_t row : {int64_t{0}, n - 1}) {
    row_ref(f32(xv) + row * n, f32(wv), n, want.data());
    for (int64_t j = 0; j < n; ++j) {
      const double got = f32(model.output("y"))[row * n + j];
      const double e = std::abs(got - want[static_cast<size_t>(j)]);
      diff = std::isnan(got) ? INFINITY : std::max(diff, e / std::max(1e-3, std::abs(want[j])));
    }
  }
  const double gbs = 2.0 * static_cast<double>(n * n) * sizeof(float) / 1e9;
  std::ostringstream note;
  note << n << "x" << n << " f32; read+write GB/s: luminal " << gbs / r.luminal_s << ", memcpy "
       << gbs / r.peer_s << "; max rel diff (2 rows) " << diff;
  r.note = note.str();
  if (!(diff < 1e-3)) throw luminal::Error(r.name + ": luminal's output is wrong");
  return r;
}

Result softmax_bench(const Options& o) {
  return row_op(
      o, "softmax", [](const Tensor& x, Graph&) { return luminal::softmax(x, -1); },
      [](const float* x, const float*, int64_t n, double* out) {
        const double mx = *std::max_element(x, x + n);
        double sum = 0;
        for (int64_t j = 0; j < n; ++j) sum += out[j] = std::exp(x[j] - mx);
        for (int64_t j = 0; j < n; ++j) out[j] /= sum;
      });
}

Result rms_norm_bench(const Options& o) {
  return row_op(
      o, "rms_norm",
      [&](const Tensor& x, Graph& g) {
        Tensor w = g.weight("w", {o.n});
        return luminal::rms_norm(x, {o.n}, w, 1e-6);
      },
      [](const float* x, const float* w, int64_t n, double* out) {
        double ss = 0;
        for (int64_t j = 0; j < n; ++j) ss += static_cast<double>(x[j]) * x[j];
        const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + 1e-6);
        for (int64_t j = 0; j < n; ++j) out[j] = x[j] * inv * w[j];
      });
}

// r's figures from {luminal, OpenBLAS} times t, a product of `flop`
// operations; throws if luminal's result `got` is not OpenBLAS's `want`.
void vs_openblas(Result& r, const std::vector<double>& t, const compiler::CompiledModel& model,
                 const TensorData& got, const TensorData& want, double flop) {
  r.luminal_s = t[0];
  r.peer_s = t[1];
  r.ratio = r.peer_s / r.luminal_s;
  r.picked = picked(model);
  const double diff = max_rel_diff(got, want);
  std::ostringstream note;
  note << "GFLOP/s: luminal " << flop / r.luminal_s / 1e9 << ", openblas " << flop / r.peer_s / 1e9
       << "; max rel diff " << diff;
  r.note = note.str();
  if (!(diff < 1e-3)) throw luminal::Error(r.name + ": luminal and OpenBLAS results differ");
}

Result sgemm_bench(const Options& o, const OpenBlas& blas, int64_t n) {
  Graph g;
  Tensor a = g.weight("a", {"m", "k"});
  Tensor b = g.weight("b", {"k", "n"});
  g.output("c", luminal::matmul(a, b));
  const int64_t p = std::min(o.profile > 0 ? o.profile : 256, n);
  compiler::CompiledModel model = compile(g, o, {{"m", p}, {"k", p}, {"n", p}});
  std::mt19937 rng(12);
  const TensorData av = random_f32({n, n}, rng, -1.0f, 1.0f);
  const TensorData bv = random_f32({n, n}, rng, -1.0f, 1.0f);
  model.set_input("a", av);
  model.set_input("b", bv);
  TensorData want(DType::F32, {n, n});
  const int ni = static_cast<int>(n);
  Result r = result("sgemm_" + std::to_string(n) + "_vs_openblas", 0.95,
                    "cblas_sgemm (OpenBLAS, same threads)");
  // Timed first: the output exists only after a run (argument order is unspecified).
  const std::vector<double> t =
      best_of_rounds(o.reps, {[&] { model.run(); },
                              [&] {
                                blas.gemm(ni, ni, ni, f32(av), f32(bv), false,
                                          reinterpret_cast<float*>(want.data()));
                              }});
  vs_openblas(r, t, model, model.output("c"), want, 2.0 * static_cast<double>(n) * n * n);
  return r;
}

// At the default matmul precision (high) the product may round both operands
// to 14 bits per block (CpuMatMulInt16); at highest it stays f32, and only the
// fusion (CpuSgemmEpilogue) can win.
Result linear_gelu_bench(const Options& o, const OpenBlas& blas,
                         compiler::MatmulPrecision precision) {
  const int64_t m = o.linear_m, k = o.linear_k, n = o.linear_n;
  Graph g;
  Tensor x = g.weight("x", {"m", k});
  nn::Linear fc(g, "fc", k, n, /*bias=*/true);
  g.output("y", luminal::gelu(fc(x)));
  compiler::CompiledModel model = compile(g, o, {{"m", m}}, precision);
  std::mt19937 rng(13);
  const TensorData xv = random_f32({m, k}, rng, -1.0f, 1.0f);
  const TensorData wv = random_f32({n, k}, rng, -0.05f, 0.05f);
  const TensorData bv = random_f32({n}, rng, -0.5f, 0.5f);
  model.set_input("x", xv);
  model.set_input("fc.weight", wv);
  model.set_input("fc.bias", bv);

  // The peer's element-wise pass: gelu(y + bias) compiled by the same search
  // (its best fusion of the element-wise ops alone). Its input y is persistent
  // and used in place, so sgemm writes straight into it (the output check
  // below catches it if the buffer were ever copied).
  Graph eg;
  Tensor y = eg.weight("y", {"m", n});
  Tensor bias = eg.weight("bias", {n});
  eg.output("out", luminal::gelu(y + bias));
  compiler::CompiledModel pass = compile(eg, o, {{"m", m}});
  TensorData ybuf(DType::F32, {m, n});
  float* yp = reinterpret_cast<float*>(ybuf.data());
  pass.set_input("y", std::move(ybuf));
  pass.set_input("bias", bv);

  const bool high = precision == compiler::MatmulPrecision::High;
  Result r = result(high ? "linear_bias_gelu_vs_blas_then_elementwise"
                         : "linear_bias_gelu_highest_vs_blas_then_elementwise",
                    1.1, "cblas_sgemm, then bias+GELU compiled separately by luminal");
  double t_gemm = 1e30, t_pass = 1e30;
  const std::vector<double> t =
      best_of_rounds(o.reps, {[&] { model.run(); },
                              [&] {
                                const auto t0 = std::chrono::steady_clock::now();
                                blas.gemm(static_cast<int>(m), static_cast<int>(n),
                                          static_cast<int>(k), f32(xv), f32(wv), true, yp);
                                const auto t1 = std::chrono::steady_clock::now();
                                pass.run();
                                const auto t2 = std::chrono::steady_clock::now();
                                t_gemm = std::min(t_gemm, seconds(t0, t1));
                                t_pass = std::min(t_pass, seconds(t1, t2));
                              }});
  r.luminal_s = t[0];
  r.peer_s = t[1];
  r.ratio = r.peer_s / r.luminal_s;
  r.picked = picked(model) + "; peer's pass: " + picked(pass);
  const double diff = max_rel_diff(model.output("y"), pass.output("out"));
  std::ostringstream note;
  note << "matmul precision " << compiler::to_string(precision) << "; x [" << m << ", " << k
       << "], W [" << n << ", " << k << "]; peer: sgemm " << t_gemm * 1e3 << " ms + element-wise "
       << t_pass * 1e3 << " ms; max rel diff " << diff;
  r.note = note.str();
  if (!(diff < 1e-3)) throw luminal::Error(r.name + ": luminal and the peer's results differ");
  return r;
}

// The GEMV twice: with its weight in cache (the same weight every run), and
// cold, as in a decode step, where a model's weights far exceed the caches:
// kColdBytes written before each run (cold_vs_memcpy). The weight stays bound:
// a kernel that keeps a packed copy of it (the int16 Q4_1 product) reads that
// copy from DRAM, as it does in a model (binding a new weight every run would
// time its packing instead).
constexpr size_t kColdBytes = size_t{128} << 20;

// Returns once every pool thread runs: a job whose chunks wait for each
// other. After the eviction write (milliseconds) the workers sleep, and a
// futex wake-up of an idle vCPU takes longer here than a small GEMV (session
// 13: the worker had not joined 57 us after the wake, and the caller's notify
// cost it 3 - 13 us); in a decode step the kernels run back to back and the
// workers spin between them. Awake, they spin for the next job (100 us).
void wake_pool() {
  cpu::ThreadPool& pool = cpu::ThreadPool::shared();
  std::atomic<int> started{0};
  const int n = pool.size();
  pool.run_chunks(n, n, [&](int, int64_t, int64_t) {
    started.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (started.load() < n && std::chrono::steady_clock::now() < give_up) {
    }
  });
}

// `run` and memcpy of `bytes` (one thread, or split over the pool: the
// faster), each timed alone right after kColdBytes of other memory were
// written and the pool woken (wake_pool): {luminal seconds, memcpy seconds},
// the means of kColdRuns runs, the best of `reps` rounds.
constexpr int kColdRuns = 16;
std::pair<double, double> cold_vs_memcpy(int reps, size_t bytes, const std::function<void()>& run) {
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes, std::byte{0}), evict(kColdBytes);
  std::vector<std::function<void()>> fns = memcpy_peers(src, dst);
  fns.insert(fns.begin(), run);
  std::vector<double> best(fns.size(), 1e30);
  run();  // (a first run: packing, plans)
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < fns.size(); ++i) {
      double total = 0;
      for (int c = 0; c < kColdRuns; ++c) {
        std::memset(evict.data(), c + 1, evict.size());
        wake_pool();
        const auto t0 = std::chrono::steady_clock::now();
        fns[i]();
        total += seconds(t0, std::chrono::steady_clock::now());
      }
      best[i] = std::min(best[i], total / kColdRuns);
    }
  return {best[0], std::min(best[1], best[2])};
}

std::vector<Result> gemv_bench(const Options& o, int64_t k, int64_t n) {
  Graph g;
  Tensor x = g.weight("x", {"s", k});
  std::optional<nn::Linear> lin;
  {
    nn::ParameterStorage storage([](const std::string&, DType) { return DType::Q4_1; });
    lin.emplace(g, "lin", k, n, /*bias=*/false);
  }
  g.output("y", lin->forward(x));
  compiler::CompiledModel model = compile(g, o, {{"s", 1}});
  std::mt19937 rng(14);
  const TensorData w = random_q4_1(n, k, rng);
  const size_t wbytes = w.nbytes();
  const TensorData xs = random_f32({1, k}, rng, -1.0f, 1.0f);
  model.set_input("x", xs);
  model.set_input("lin.weight", w);
  const std::string shape = std::to_string(k) + "x" + std::to_string(n);
  // A figure only counts if the kernel computes the product: every output
  // against a double dot product of x with the decoded weight row. (At the
  // default matmul precision, high, the int16 kernel rounds x to 16 bits per
  // block: ~1e-4 of a product's terms; f32 kernels are within 1e-6.)
  auto checked = [&](Result& r) {
    double diff = 0;
    const TensorData& y = model.output("y");
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t t = 0; t < k; ++t) want += xs.get(t) * w.get(j * k + t);
      diff = std::max(diff, std::abs(y.get(j) - want) / std::max(1.0, std::abs(want)));
    }
    r.ratio = r.peer_s / r.luminal_s;
    r.picked = picked(model);
    r.note += "; max rel diff " + std::to_string(diff);
    if (!(diff < 1e-3)) throw luminal::Error(r.name + ": the GEMV result is wrong");
  };

  Result hot = result("q4_1_gemv_" + shape + "_vs_memcpy", 0.6, "memcpy of the Q4_1 weight bytes");
  std::tie(hot.luminal_s, hot.peer_s) = vs_memcpy(o.reps * 4, wbytes, [&] { model.run(); });
  std::ostringstream note;
  note << "Q4_1 weight " << wbytes / 1e6 << " MB; GB/s: luminal (weight bytes) "
       << wbytes / hot.luminal_s / 1e9 << ", memcpy (bytes copied) " << wbytes / hot.peer_s / 1e9;
  hot.note = note.str();
  checked(hot);

  Result cold = result("q4_1_gemv_" + shape + "_cold_vs_memcpy", 0.6,
                       "memcpy of the weight bytes, after the same eviction");
  std::tie(cold.luminal_s, cold.peer_s) = cold_vs_memcpy(o.reps, wbytes, [&] { model.run(); });
  std::ostringstream cnote;
  cnote << "before each run " << kColdBytes / (1 << 20)
        << " MB written (the caches evicted); per GEMV: luminal " << cold.luminal_s * 1e6
        << " us, memcpy " << cold.peer_s * 1e6 << " us; GB/s: luminal "
        << wbytes / cold.luminal_s / 1e9 << ", memcpy " << wbytes / cold.peer_s / 1e9;
  cold.note = cnote.str();
  checked(cold);
  return {hot, cold};
}

// Random Q8_0 blocks (f16 scale, 32 signed bytes) with sane scales.
TensorData random_q8_0(int64_t rows, int64_t cols, std::mt19937& rng) {
  TensorData t(DType::Q8_0, {rows, cols});
  const size_t block_bytes = luminal::storage_bytes(DType::Q8_0, 32);
  std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
  for (size_t i = 0; i < t.nbytes(); ++i) t.data()[i] = static_cast<std::byte>(rng() & 255);
  for (size_t b = 0; b < t.nbytes() / block_bytes; ++b) {
    const uint16_t d = luminal::float_to_f16_bits(scale(rng));
    std::memcpy(t.data() + b * block_bytes, &d, 2);
  }
  return t;
}

// y = x [m, k] @ dequantize(W)^T into g, W "lin.weight" a `type` [n, k]
// weight: the quantized products' benchmark graph.
void quantized_linear(Graph& g, DType type, int64_t k, int64_t n) {
  Tensor x = g.weight("x", {"m", k});
  std::optional<nn::Linear> lin;
  {
    nn::ParameterStorage storage([&](const std::string&, DType) { return type; });
    lin.emplace(g, "lin", k, n, /*bias=*/false);
  }
  g.output("y", lin->forward(x));
}

// Many-row quantized products at several row counts, each against sgemm on
// the dequantised weight.
std::vector<Result> qgemm_bench(const Options& o, const OpenBlas& blas, DType type, int64_t k,
                                int64_t n, const std::vector<int64_t>& rows) {
  Graph g;
  quantized_linear(g, type, k, n);
  // Profiled at 64 rows: the unfused candidate materialises [m, n, k].
  compiler::CompiledModel model = compile(g, o, {{"m", 64}});
  std::mt19937 rng(15);
  const TensorData w = type == DType::Q8_0 ? random_q8_0(n, k, rng) : random_q4_1(n, k, rng);
  TensorData wf(DType::F32, {n, k});
  for (int64_t i = 0; i < n * k; ++i) reinterpret_cast<float*>(wf.data())[i] = w.get(i);
  model.set_input("lin.weight", w);
  std::vector<Result> out;
  for (int64_t m : rows) {
    const TensorData xs = random_f32({m, k}, rng, -1.0f, 1.0f);
    model.set_input("x", xs);
    TensorData want(DType::F32, {m, n});
    const std::string tname = type == DType::Q8_0 ? "q8_0" : "q4_1";
    Result r = result("qgemm_" + tname + "_" + std::to_string(m) + "x" + std::to_string(k) + "x" +
                          std::to_string(n),
                      0.9, "cblas_sgemm on the dequantised f32 weight (same threads)");
    // (twice the rounds: a product takes a millisecond or so, and the
    // machine's noise comes in longer bursts)
    const std::vector<double> t = best_of_rounds(
        o.reps * 2, {[&] { model.run(); },
                     [&] {
                       blas.gemm(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                                 f32(xs), f32(wf), true, reinterpret_cast<float*>(want.data()));
                     }});
    vs_openblas(r, t, model, model.output("y"), want, 2.0 * static_cast<double>(m) * n * k);
    out.push_back(std::move(r));
  }
  return out;
}

// Every quantized product of g (its Cast, Mul and SumReduce) as a region of
// kernel op `op`.
std::vector<cpu::Region> qproduct_regions(const Graph& g, const std::string& op) {
  std::vector<cpu::Region> out;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (g.node(id).kind != luminal::OpKind::SumReduce) continue;
    const NodeId mul = g.node(id).operands[0].node;
    bool cast = false;
    for (const luminal::Operand& operand : g.node(mul).operands)
      if (g.node(operand.node).kind == luminal::OpKind::Cast) {
        out.emplace_back(std::vector<NodeId>{operand.node, mul, id}, std::vector<NodeId>{}, op);
        cast = true;
      }
    if (!cast)  // (an f32 weight: the Mul and the SumReduce)
      out.emplace_back(std::vector<NodeId>{mul, id}, std::vector<NodeId>{}, op);
  }
  return out;
}

// The AMX kernels (hosts with AMX-BF16) against the int16 ones, regions by
// hand, same rows: CpuMatMulAmx vs CpuMatMulInt16 for an f32 weight,
// CpuQMatMulAmx vs CpuQMatMulInt16 for Q4_1; both checked against sgemm-free
// double dot products of a few outputs.
std::vector<Result> amx_bench(const Options& o, DType type, int64_t k, int64_t n,
                              const std::vector<int64_t>& rows) {
  Graph g;
  quantized_linear(g, type, k, n);
  const bool f32_weight = type == DType::F32;
  const std::string amx_op = f32_weight ? "CpuMatMulAmx" : "CpuQMatMulAmx",
                    i16_op = f32_weight ? "CpuMatMulInt16" : "CpuQMatMulInt16";
  auto program = [&](const std::string& op) {
    cpu::CpuOptions options;
    options.regions = qproduct_regions(g, op);
    return cpu::CpuProgram(g, std::move(options));
  };
  cpu::CpuProgram amx = program(amx_op), i16 = program(i16_op);
  std::mt19937 rng(17);
  const TensorData w = f32_weight ? random_f32({n, k}, rng, -0.05f, 0.05f) : random_q4_1(n, k, rng);
  amx.set_input("lin.weight", w);
  i16.set_input("lin.weight", w);
  const std::string tname = f32_weight ? "f32" : "q4_1";
  std::vector<Result> out;
  for (int64_t m : rows) {
    const TensorData xs = random_f32({m, k}, rng, -1.0f, 1.0f);
    const std::vector<double> t = best_of_rounds(o.reps * 2, {[&] {
                                                                amx.set_input("x", xs);
                                                                amx.run();
                                                              },
                                                              [&] {
                                                                i16.set_input("x", xs);
                                                                i16.run();
                                                              }});
    const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    double diff = 0;
    const TensorData& y = amx.output("y");
    for (int64_t i = 0; i < m; i += 37)
      for (int64_t j = 0; j < n; j += 13) {
        double want = 0;
        for (int64_t t2 = 0; t2 < k; ++t2) want += xs.get(i * k + t2) * w.get(j * k + t2);
        diff = std::max(diff, std::abs(y.get(i * n + j) - want) / std::max(1.0, std::abs(want)));
      }
    if (!(diff < 1e-3))
      throw luminal::Error("amx_" + tname + "_" + shape + ": the result is wrong");
    const double flop = 2.0 * static_cast<double>(m) * n * k;
    Result r = result("amx_vs_int16_" + tname + "_" + shape, 1.0,
                      "the " + i16_op + " kernel, regions by hand");
    r.luminal_s = t[0];
    r.peer_s = t[1];
    r.ratio = r.peer_s / r.luminal_s;
    r.picked = amx_op + " (regions by hand)";
    std::ostringstream note;
    note << "GFLOP/s: amx " << flop / t[0] / 1e9 << ", int16 " << flop / t[1] / 1e9
         << "; max rel diff (sampled outputs) " << diff;
    r.note = note.str();
    out.push_back(std::move(r));
  }
  return out;
}

// The int16 kernel (CpuQMatMulInt16) against sgemm on the dequantised weight
// and against the f32 kernel (CpuQMatMul), regions by hand, same rows as
// qgemm_bench: two results per row count.
std::vector<Result> qgemm_i16_bench(const Options& o, const OpenBlas& blas, DType type, int64_t k,
                                    int64_t n, const std::vector<int64_t>& rows) {
  Graph g;
  quantized_linear(g, type, k, n);
  auto program = [&](const std::string& op) {
    cpu::CpuOptions options;
    options.regions = qproduct_regions(g, op);
    return cpu::CpuProgram(g, std::move(options));
  };
  cpu::CpuProgram i16 = program("CpuQMatMulInt16"), f32q = program("CpuQMatMul");
  std::mt19937 rng(16);
  const TensorData w = type == DType::Q8_0 ? random_q8_0(n, k, rng) : random_q4_1(n, k, rng);
  TensorData wf(DType::F32, {n, k});
  for (int64_t i = 0; i < n * k; ++i) reinterpret_cast<float*>(wf.data())[i] = w.get(i);
  i16.set_input("lin.weight", w);
  f32q.set_input("lin.weight", w);
  const std::string tname = type == DType::Q8_0 ? "q8_0" : "q4_1";
  std::vector<Result> out;
  for (int64_t m : rows) {
    const TensorData xs = random_f32({m, k}, rng, -1.0f, 1.0f);
    i16.set_input("x", xs);
    f32q.set_input("x", xs);
    TensorData want(DType::F32, {m, n});
    const std::vector<double> t = best_of_rounds(
        o.reps * 2, {[&] { i16.run(); }, [&] { f32q.run(); },
                     [&] {
                       blas.gemm(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                                 f32(xs), f32(wf), true, reinterpret_cast<float*>(want.data()));
                     }});
    const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    const double diff = max_rel_diff(i16.output("y"), want);
    const double flop = 2.0 * static_cast<double>(m) * n * k;
    std::ostringstream note;
    note << "GFLOP/s: int16 " << flop / t[0] / 1e9 << ", f32 qgemm " << flop / t[1] / 1e9
         << ", openblas " << flop / t[2] / 1e9 << "; max rel diff vs openblas " << diff;
    if (!(diff < 1e-3)) throw luminal::Error("qgemm_i16_" + shape + ": the int16 result is wrong");
    Result vs_blas = result("qgemm_i16_" + tname + "_" + shape, 0.9,
                            "cblas_sgemm on the dequantised f32 weight (same threads)");
    vs_blas.luminal_s = t[0];
    vs_blas.peer_s = t[2];
    Result vs_f32 = result("qgemm_i16_vs_f32_" + tname + "_" + shape, 1.5,
                           "the f32 CpuQMatMul kernel (lk::qgemm), regions by hand");
    vs_f32.luminal_s = t[0];
    vs_f32.peer_s = t[1];
    for (Result* r : {&vs_blas, &vs_f32}) {
      r->ratio = r->peer_s / r->luminal_s;
      r->picked = "CpuQMatMulInt16 (regions by hand)";
      r->note = note.str();
      out.push_back(std::move(*r));
    }
  }
  return out;
}

// The int16 product over `layers` distinct weights in turn (as a model's
// layers run: each weight's copy read from memory, not from L2) against the
// same product repeated on one weight (hot), same rows, regions by hand.
std::vector<Result> qgemm_i16_layers_bench(const Options& o, DType type, int64_t k, int64_t n,
                                           int64_t m, int64_t layers) {
  Graph one, many;
  quantized_linear(one, type, k, n);
  {
    Tensor x = many.weight("x", {"m", k});
    nn::ParameterStorage storage([&](const std::string&, DType) { return type; });
    for (int64_t l = 0; l < layers; ++l) {
      nn::Linear lin(many, "lin" + std::to_string(l), k, n, /*bias=*/false);
      many.output("y" + std::to_string(l), lin.forward(x));
    }
  }
  auto program = [&](const Graph& g) {
    cpu::CpuOptions options;
    options.regions = qproduct_regions(g, "CpuQMatMulInt16");
    return cpu::CpuProgram(g, std::move(options));
  };
  cpu::CpuProgram hot = program(one), cold = program(many);
  std::mt19937 rng(17);
  const TensorData xs = random_f32({m, k}, rng, -1.0f, 1.0f);
  hot.set_input("x", xs);
  cold.set_input("x", xs);
  for (int64_t l = 0; l < layers; ++l) {
    const TensorData w = type == DType::Q8_0 ? random_q8_0(n, k, rng) : random_q4_1(n, k, rng);
    if (l == 0) hot.set_input("lin.weight", w);
    cold.set_input("lin" + std::to_string(l) + ".weight", w);
  }
  const std::vector<double> t = best_of_rounds(o.reps * 2, {[&] {
                                                              for (int64_t l = 0; l < layers; ++l)
                                                                hot.run();
                                                            },
                                                            [&] { cold.run(); }});
  const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  Result r =
      result("qgemm_i16_layers_" + std::string(type == DType::Q8_0 ? "q8_0" : "q4_1") + "_" + shape,
             0.0, "the same product on one weight, repeated (hot)");
  r.luminal_s = t[1] / layers;
  r.peer_s = t[0] / layers;
  r.ratio = r.peer_s / r.luminal_s;
  r.picked = "CpuQMatMulInt16 (regions by hand)";
  const double flop = 2.0 * static_cast<double>(m) * n * k;
  std::ostringstream note;
  note << layers << " distinct weights in turn; GFLOP/s: distinct " << flop / r.luminal_s / 1e9
       << ", hot " << flop / r.peer_s / 1e9;
  r.note = note.str();
  return {r};
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

bool selected(const Options& o, const std::string& name) {
  if (o.only.empty()) return true;
  for (const std::string& p : o.only)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--n" && has_value) {
      o.n = std::max<int64_t>(1, std::atoll(argv[++i]));
    } else if (a == "--quick") {
      o.quick = true;
      o.n = 1024;
      o.sgemm_sizes = {256, 512};
      o.linear_m = 128;
      o.reps = 3;
      o.search_iters = 8;
      o.profile = 128;
    } else if (a == "--reps" && has_value) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--search-iters" && has_value) {
      o.search_iters = static_cast<size_t>(std::max(1, std::atoi(argv[++i])));
    } else if (a == "--profile" && has_value) {
      o.profile = std::max<int64_t>(1, std::atoll(argv[++i]));
    } else if (a == "--only" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');)
        if (!item.empty()) o.only.push_back(item);
    } else if (a == "--json" && has_value) {
      o.json = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--quick] [--reps R] [--search-iters I] [--profile P] "
                   "[--only name,prefixes] [--json PATH]\n",
                   argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }

  const int threads = cpu::ThreadPool::shared().size();
  const std::string machine = cpu::CpuBackend().device();
  std::fprintf(stderr, "%s; %d threads, best of %d\n", machine.c_str(), threads, o.reps);
  std::vector<Result> results;
  auto record = [&](Result r) {
    r.at_target_size = !(o.quick && resized_by_quick(r.name));
    std::fprintf(stderr,
                 "  %-42s luminal %9.3f ms  peer %9.3f ms  (target >= %.2f%s)\n"
                 "      peer: %s\n      picked: %s\n      %s\n",
                 r.name.c_str(), r.luminal_s * 1e3, r.peer_s * 1e3, r.target,
                 r.at_target_size ? "" : " at full size, not this --quick one", r.peer.c_str(),
                 r.picked.c_str(), r.note.c_str());
    std::printf("%s %.3f\n", r.name.c_str(), r.ratio);
    std::fflush(stdout);
    results.push_back(std::move(r));
  };
  try {
    if (selected(o, "softmax")) record(softmax_bench(o));
    if (selected(o, "rms_norm")) record(rms_norm_bench(o));
    bool want_blas = o.only.empty();  // (also for --only sgemm_1024 and the like)
    for (const std::string& p : o.only)
      for (const char* family : {"sgemm", "linear", "qgemm"})
        want_blas = want_blas || p.rfind(family, 0) == 0 || std::string(family).rfind(p, 0) == 0;
    std::optional<OpenBlas> blas;
    if (want_blas) {
      blas.emplace(threads);
      if (blas->sgemm == nullptr)
        std::fprintf(stderr, "OpenBLAS not available (%s): sgemm/linear skipped\n",
                     blas->error.c_str());
      else
        std::fprintf(stderr, "OpenBLAS kernels: %s\n",
                     blas->core.empty() ? "(unknown)" : blas->core.c_str());
    }
    if (blas && blas->sgemm != nullptr) {
      for (int64_t n : o.sgemm_sizes)
        if (selected(o, "sgemm_" + std::to_string(n))) record(sgemm_bench(o, *blas, n));
      if (selected(o, "linear")) {
        record(linear_gelu_bench(o, *blas, compiler::MatmulPrecision::High));
        record(linear_gelu_bench(o, *blas, compiler::MatmulPrecision::Highest));
      }
      for (DType type : {DType::Q4_1, DType::Q8_0}) {
        const std::string tname = type == DType::Q8_0 ? "q8_0" : "q4_1";
        for (auto [k, n] :
             {std::pair<int64_t, int64_t>{576, 576}, {576, 192}, {576, 1536}, {1536, 576}}) {
          std::vector<int64_t> rows;
          for (int64_t m : {int64_t{128}, int64_t{512}})
            if (selected(o, "qgemm_" + tname + "_" + std::to_string(m) + "x" + std::to_string(k) +
                                "x" + std::to_string(n)))
              rows.push_back(m);
          if (!rows.empty())
            for (Result& r : qgemm_bench(o, *blas, type, k, n, rows)) record(std::move(r));
          std::vector<int64_t> i16_rows;
          for (int64_t m : {int64_t{1}, int64_t{4}, int64_t{128}, int64_t{512}}) {
            const std::string shape =
                tname + "_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
            if (selected(o, "qgemm_i16_" + shape) || selected(o, "qgemm_i16_vs_f32_" + shape))
              i16_rows.push_back(m);
          }
          if (!i16_rows.empty())
            for (Result& r : qgemm_i16_bench(o, *blas, type, k, n, i16_rows)) record(std::move(r));
          const std::string layers_name =
              "qgemm_i16_layers_" + tname + "_128x" + std::to_string(k) + "x" + std::to_string(n);
          if (type == DType::Q4_1 && !o.only.empty() && selected(o, layers_name))
            for (Result& r : qgemm_i16_layers_bench(o, type, k, n, 128, 24)) record(std::move(r));
        }
      }
    }
    if (cpu::host_has_amx_bf16())
      for (DType type : {DType::F32, DType::Q4_1})
        for (auto [k, n] :
             {std::pair<int64_t, int64_t>{576, 1536}, {1536, 576}, {576, 576}, {576, 192}}) {
          std::vector<int64_t> rows;
          for (int64_t m : {int64_t{32}, int64_t{128}, int64_t{512}})
            if (selected(o, std::string("amx_vs_int16_") + (type == DType::F32 ? "f32" : "q4_1") +
                                "_" + std::to_string(m) + "x" + std::to_string(k) + "x" +
                                std::to_string(n)))
              rows.push_back(m);
          if (!rows.empty())
            for (Result& r : amx_bench(o, type, k, n, rows)) record(std::move(r));
        }
    for (auto [k, n] : {std::pair<int64_t, int64_t>{576, 1536}, {1536, 576}, {576, 49152}})
      if (selected(o, "q4_1_gemv_" + std::to_string(k) + "x" + std::to_string(n)))
        for (Result& r : gemv_bench(o, k, n)) record(std::move(r));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }

  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\"machine\": \"" << json_escape(machine) << "\", \"threads\": " << threads
        << ", \"reps\": " << o.reps << ", \"search_iters\": " << o.search_iters
        << ", \"results\": [";
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      out << (i ? ", " : "") << "\n  {\"name\": \"" << r.name << "\", \"ratio\": " << r.ratio
          << ", \"target\": " << r.target
          << ", \"met\": " << (r.ratio >= r.target ? "true" : "false")
          << ", \"at_target_size\": " << (r.at_target_size ? "true" : "false")
          << ", \"luminal_s\": " << r.luminal_s << ", \"peer_s\": " << r.peer_s << ", \"peer\": \""
          << json_escape(r.peer) << "\", \"picked\": \"" << json_escape(r.picked)
          << "\", \"note\": \"" << json_escape(r.note) << "\"}";
    }
    out << "\n]}\n";
  }
  return 0;
}
