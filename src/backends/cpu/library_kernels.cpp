#include "luminal/backends/cpu/library_kernels.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/egraph/matmul.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {

namespace {

// CBLAS enum values (cblas.h): fixed by the CBLAS standard.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// The f32 panel each thread of a quantized GEMM decodes its weight columns
// into (lk::qgemm): 768 KB, most of a Zen 4 core's 1 MB L2 (on 512 rows of
// K = 1536, 0.90x OpenBLAS against 0.86x with 512 KB).
constexpr int64_t kQGemmPanelFloats = 196608;
// From this many rows of x on, a quantized product is a GEMM (lk::qgemm):
// single-threaded, K = 576, N = 1536, Q4_1, 16 rows take 0.48 ms that way and
// 0.57 ms through the GEMV tiles (lk::qmatmul, about 50 GFLOP/s at any row
// count), 64 rows 1.3 against 2.3 ms; 8 rows 0.36 against 0.28 ms.
constexpr int64_t kQGemmMinRows = 16;
// From this many rows of a on, an f32 product without batch goes to BLAS
// sgemm; fewer take the kernel's own GEMV (see generate_sgemm_kernel).
constexpr int64_t kSgemvMaxRows = 8;
// The int16 GEMM (lk::qgemm_i16): each slot's weight panel in VNNI layout
// (the prelude's qgemm_i16_scratch_bytes starts with the same constant), and
// kQGemmInt16MinRows (the header) the row count from which it replaces the
// int16 GEMV (up to four rows at a time; measured on Zen 4 with the GEMV of
// that time, which read the weight in place: single-threaded, K = 576, N =
// 768, Q4_1, 8 rows took 0.087 ms that way and 0.110 ms through the GEMV, 4
// rows 0.055 ms through the GEMV, one row 0.014 ms, against 0.036 ms for
// lk::qmatmul's f32 GEMV).
constexpr int64_t kQGemmI16PanelBytes = 786432;
// The prelude's qi16_unit: one block of 16 columns in VNNI order, their d and m.
constexpr int64_t kQGemmI16Unit = 1152;

// OpenBLAS kernel sets (openblas_get_corename, lower case) with AVX2 kernels
// or wider; any other set is a fallback on an AVX2 host.
bool openblas_core_has_avx2(std::string core) {
  std::transform(core.begin(), core.end(), core.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::set<std::string, std::less<>> wide = {
      "haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", "zen4", "zen5"};
  return wide.contains(core);
}

using CoreName = char* (*)();

std::string core_name(void* handle) {
  auto name = reinterpret_cast<CoreName>(dlsym(handle, "openblas_get_corename"));
  const char* core = name != nullptr ? name() : nullptr;
  return core != nullptr ? std::string(core) : std::string();
}

// dlopen of `name`; when it is an OpenBLAS whose own detection fell back to
// kernels narrower than the host's (openblas_core_for_host) and the user did
// not choose them (OPENBLAS_CORETYPE), it is closed and opened again with
// OPENBLAS_CORETYPE set for that load: OpenBLAS reads it once, when loaded.
void* open_blas(const std::string& name, Blas& blas) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  blas.core = core_name(handle);
  const char* user_core = std::getenv("OPENBLAS_CORETYPE");
  if (blas.core.empty() || (user_core != nullptr && *user_core != '\0')) return handle;
  const std::string better = openblas_core_for_host(blas.core, HostVectorIsa::detect());
  if (better.empty()) return handle;
  dlclose(handle);  // OpenBLAS's destructor stops its threads
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  unsetenv("OPENBLAS_CORETYPE");
  if (handle == nullptr) return nullptr;
  const std::string fallback = blas.core;
  blas.core = core_name(handle);
  blas.core_chosen_by_luminal = blas.core == better;
  if (!blas.core_chosen_by_luminal)
    // Still the fallback: another user of the library kept it loaded.
    std::fprintf(stderr,
                 "luminal: warning: %s runs its generic '%s' kernels on this CPU (not in its "
                 "model table), several times slower; set OPENBLAS_CORETYPE=%s before the "
                 "process starts\n",
                 name.c_str(), fallback.c_str(), better.c_str());
  return handle;
}

// OpenBLAS's worker threads busy-wait for 2^OPENBLAS_THREAD_TIMEOUT cycles
// after each threaded call (default 2^28, ~0.1 s), and the kernel after an
// sgemm then shares the cores with them: a block prefill's down projection
// with its residual epilogue (pool threads, each calling sgemm on its rows
// right after the threaded gate and up products) took 3.5 ms instead of 1.7
// on the 2-vCPU Zen 3 host. 2^18 cycles (~0.1 ms) is about the pool's own
// spin (kSpinMicros), enough for back-to-back products. Set while OpenBLAS
// loads (it reads the variable once then) unless the user set it.
class OpenBlasThreadTimeout {
public:
  OpenBlasThreadTimeout() {
    const char* user = std::getenv(kName);
    set_ = user == nullptr || *user == '\0';
    if (set_) setenv(kName, "18", 1);
  }
  ~OpenBlasThreadTimeout() {
    if (set_) unsetenv(kName);
  }
  OpenBlasThreadTimeout(const OpenBlasThreadTimeout&) = delete;
  OpenBlasThreadTimeout& operator=(const OpenBlasThreadTimeout&) = delete;

private:
  static constexpr const char* kName = "OPENBLAS_THREAD_TIMEOUT";
  bool set_ = false;
};

Blas load_blas() {
  const OpenBlasThreadTimeout timeout;
  std::vector<std::string> names;
  if (const char* env = std::getenv("LUMINAL_BLAS_LIBRARY"); env != nullptr && *env != '\0') {
    if (std::string(env) == "none") return Blas{};  // BLAS deliberately disabled
    names.push_back(env);
  }
  names.insert(names.end(), {"libopenblas.so.0", "libopenblas.so"});
  for (const std::string& name : names) {
    // Never unloaded: kernels keep its function pointers for the process lifetime.
    Blas blas;
    void* handle = open_blas(name, blas);
    if (handle == nullptr) continue;
    auto sgemm = reinterpret_cast<Blas::Sgemm>(dlsym(handle, "cblas_sgemm"));
    if (sgemm == nullptr) continue;
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(handle, "openblas_set_num_threads"))) {
      set(ThreadPool::shared().size());
      blas.set_threads = set;
    }
    blas.sgemm = sgemm;
    blas.library = name;
    return blas;
  }
  return Blas{};
}

// The dims a matmul spec's expressions use, as kernel arguments `_d<i>`.
class SpecDims {
public:
  SpecDims(const egraph::MatMulSpec& sp, CpuKernel& k) {
    std::vector<Expr> exprs{sp.m,        sp.n,          sp.k,          sp.a_m_stride, sp.a_k_stride,
                            sp.a_offset, sp.b_k_stride, sp.b_n_stride, sp.b_offset};
    for (size_t d = 0; d < sp.batch.size(); ++d)
      exprs.insert(exprs.end(), {sp.batch[d], sp.a_batch_strides[d], sp.b_batch_strides[d]});
    std::set<std::string> vars;
    for (const Expr& e : exprs)
      for (const std::string& v : e.variables()) vars.insert(v);
    for (const std::string& v : vars) {
      rename_.emplace(v, Expr::internal_var("_d" + std::to_string(k.dims.size())));
      k.dims.push_back(v);
    }
  }
  /// The C expression of `e` in the kernel's arguments.
  std::string operator()(const Expr& e) const {
    return "(int64_t)(" + e.substitute(rename_).to_c() + ")";
  }

private:
  std::map<std::string, Expr, std::less<>> rename_;
};

// The Mul and SumReduce of a matrix product among a region's members (plus
// `extra` other members), the product recognised again from the Mul's operand
// views; nullopt if the members are not that.
struct ProductMembers {
  NodeId mul = 0, sum = 0;
  egraph::MatMulMatch match;
};

std::optional<ProductMembers> find_product(const Graph& graph, const Region& region, size_t extra) {
  ProductMembers p;
  int sums = 0, muls = 0;
  for (NodeId id : region.nodes) {
    const OpKind k = graph.node(id).kind;
    if (k == OpKind::SumReduce) p.sum = id, ++sums;
    if (k == OpKind::Mul) p.mul = id, ++muls;
  }
  if (sums != 1 || muls != 1 || region.nodes.size() != 2 + extra) return std::nullopt;
  if (region.outputs.size() != 1 || region.outputs[0] != p.sum) return std::nullopt;
  const Node& s = graph.node(p.sum);
  const Node& m = graph.node(p.mul);
  if (s.operands[0].node != p.mul || !s.operands[0].view.is_contiguous() || s.dtype != DType::F32 ||
      m.dtype != DType::F32)
    return std::nullopt;
  auto mm = egraph::recognize_matmul(m.shape, static_cast<size_t>(s.axis), m.operands[0].view,
                                     m.operands[1].view);
  if (!mm) return std::nullopt;
  p.match = *mm;
  return p;
}

bool is_const(const Expr& e, int64_t value) {
  const auto v = e.as_const();
  return v && *v == value;
}

bool const_multiple(const Expr& e, int64_t of) {
  const auto v = e.as_const();
  return v && *v % of == 0;
}

KernelLaunch one_launch(const std::string& symbol, Expr extent, Expr work, bool parallel) {
  KernelLaunch l;
  l.symbol = symbol;
  l.extent = std::move(extent);
  l.work_per_item = std::move(work);
  l.parallel = parallel;
  return l;
}

// The launch of a product whose pool slots take column ranges (16 items per
// slot; the program splits launches at multiples of 16 items).
KernelLaunch slots_launch(const std::string& symbol, int64_t slots, const egraph::MatMulSpec& sp) {
  return one_launch(symbol, Expr(slots * 16),
                    ((sp.n / Expr(slots * 16) + Expr(1)) * sp.m * sp.k).simplify(), true);
}

// A launch of the AMX kernels' packing: one item per 16 rows (or columns) of
// an operand, each splitting 16 x K floats into tiles (any split of the items
// is balanced: align 1).
KernelLaunch tiles_launch(const std::string& symbol, Expr items, const egraph::MatMulSpec& sp) {
  KernelLaunch l = one_launch(symbol, std::move(items), (Expr(16) * sp.k).simplify(), true);
  l.align = 1;
  return l;
}

// Kernel locals of a BLAS product: sizes M N K, strides am ak bk bn, leading
// dimensions lda ldb, and blas_ok (whether BLAS can take these shapes at run
// time: not a leading dimension smaller than the matrix, sizes within int).
std::string sgemm_locals(const SpecDims& c, const egraph::MatMulSpec& sp, bool ta, bool tb) {
  std::string code =
      "  const int64_t M = " + c(sp.m) + ", N = " + c(sp.n) + ", K = " + c(sp.k) + ";\n";
  code += "  const int64_t am = " + c(sp.a_m_stride) + ", ak = " + c(sp.a_k_stride) +
          ", bk = " + c(sp.b_k_stride) + ", bn = " + c(sp.b_n_stride) + ";\n";
  // Leading dimensions: a size-1 matrix dimension makes its stride irrelevant,
  // and BLAS only wants it to be at least the other size.
  code +=
      ta ? "  const int64_t lda = K == 1 ? M : ak;\n" : "  const int64_t lda = M == 1 ? K : am;\n";
  code +=
      tb ? "  const int64_t ldb = N == 1 ? K : bn;\n" : "  const int64_t ldb = K == 1 ? N : bk;\n";
  code += std::string("  const int64_t lda_min = ") + (ta ? "M" : "K") +
          ", ldb_min = " + (tb ? "K" : "N") + ";\n";
  return code +
         "  const int64_t lim = 2147483647;\n"
         "  const bool blas_ok = M > 0 && N > 0 && K > 0 && M < lim && N < lim && K < lim &&\n"
         "      lda >= lda_min && lda >= 1 && lda < lim && ldb >= ldb_min && ldb >= 1 && ldb < "
         "lim;\n";
}

// The cblas_sgemm call of `rows` rows of the product, A's first row at `a`
// and the result at `c` (row stride N), after sgemm_locals.
std::string sgemm_call(bool ta, bool tb, const std::string& rows, const std::string& a,
                       const std::string& c) {
  return "sgemm(" + std::to_string(kRowMajor) + ", " + std::to_string(ta ? kTrans : kNoTrans) +
         ", " + std::to_string(tb ? kTrans : kNoTrans) + ", (int)" + rows +
         ", (int)N, (int)K, 1.0f, " + a + ", (int)lda, B + offb, (int)ldb, 0.0f, " + c +
         ", (int)N);\n";
}

// Adds batch `index`'s offsets to offa and offb (int64_t locals): the index
// split into the batch dims, innermost last.
std::string batch_offsets(const SpecDims& c, const egraph::MatMulSpec& sp,
                          const std::string& index) {
  if (sp.batch.empty()) return "";
  std::string code = "    int64_t _r = " + index + ";\n";
  for (size_t d = sp.batch.size(); d-- > 0;)
    code += "    { const int64_t _n = " + c(sp.batch[d]) +
            "; const int64_t _i = _r % _n; _r /= _n; offa += _i * " + c(sp.a_batch_strides[d]) +
            "; offb += _i * " + c(sp.b_batch_strides[d]) + "; }\n";
  return code;
}

// Rows [begin, end) of the product (A at offa, B at offb) by plain loops into
// `out` (row stride N): the shapes BLAS cannot take (overlapping rows, sizes
// beyond int, K = 0) and, in an epilogue kernel, products of fewer than
// kSgemvMaxRows rows (lk::dot_f32: vectorised where both are contiguous).
std::string product_rows_loop(const std::string& begin, const std::string& end,
                              const std::string& out) {
  return "      for (int64_t i = " + begin + "; i < " + end +
         "; ++i)\n"
         "        for (int64_t j = 0; j < N; ++j)\n"
         "          " +
         out + "[i * N + j] = lk::dot_f32(A + offa + i * am, ak, B + offb + j * bn, bk, K);\n";
}

// sgemm_locals and the operands' offsets (offa, offb) of a GEMV entry.
std::string gemv_locals(const SpecDims& c, const egraph::MatMulSpec& sp, bool ta, bool tb) {
  return sgemm_locals(c, sp, ta, tb) +
         "  (void)lda; (void)ldb; (void)lda_min; (void)ldb_min; (void)blas_ok; (void)lim;\n"
         "  const int64_t offa = " +
         c(sp.a_offset) + ", offb = " + c(sp.b_offset) + ";\n";
}

// Columns [_begin, _end) of every row of an unbatched product of M rows into
// `out` (row stride N), after sgemm_locals and offa / offb: the GEMV of a
// decode step (fewer than kSgemvMaxRows rows), the pool splitting the columns.
// Dot products in 16 lanes where B's columns are contiguous along K, else rows
// of B accumulated along N (both vectorise; each element sums in its own order).
std::string gemv_columns(const std::string& out) {
  return "  if (bk == 1 && ak == 1) {\n"
         "    for (int64_t j = _begin; j < _end; ++j) {  // (B's column in L1 for every row)\n"
         "      const float* b = B + offb + j * bn;\n"
         "      for (int64_t i = 0; i < M; ++i)\n"
         "        " +
         out +
         "[i * N + j] = lk::dot_f32(A + offa + i * am, 1, b, 1, K);\n"
         "    }\n"
         "  } else {\n"
         "    for (int64_t i = 0; i < M; ++i) {\n"
         "      const float* a = A + offa + i * am;\n"
         "      float* o = " +
         out +
         " + i * N;\n"
         "      for (int64_t j = _begin; j < _end; ++j) o[j] = 0.0f;\n"
         "      for (int64_t q = 0; q < K; ++q) {\n"
         "        const float aq = a[q * ak];\n"
         "        const float* b = B + offb + q * bk;\n"
         "        for (int64_t j = _begin; j < _end; ++j) o[j] += aq * b[j * bn];\n"
         "      }\n"
         "    }\n"
         "  }\n";
}

// Entry points `symbol`_serial and `symbol`_threaded, which set OpenBLAS to
// one thread and back to the pool's size (openblas_set_num_threads, the host
// pointer in _buf[slot]; nothing where the library has none) when `when` (a
// C condition over the kernel's dims, after `locals`) holds: the launches
// around one in which every pool thread calls BLAS on its own part.
std::string blas_threads_entries(const std::string& symbol, const CpuKernel& k, size_t slot,
                                 const std::string& locals, const std::string& when) {
  const std::string threads = std::to_string(ThreadPool::shared().size());
  const std::string set = "_buf[" + std::to_string(slot) + "]";
  std::string code;
  for (const auto& [suffix, n] : {std::pair<std::string, std::string>{"_serial", "1"},
                                  std::pair<std::string, std::string>{"_threaded", threads}})
    code += entry_prologue(symbol + suffix, k) + "  (void)_buf; (void)_begin; (void)_end;\n" +
            locals + "  typedef void (*set_t)(int);\n  if ((" + when + ") && " + set +
            ") ((set_t)" + set + ")(" + n + ");\n  return 0;\n}\n";
  return code;
}

// `main` between the launches of blas_threads_entries, which run where
// `active` (a 0 / 1 expression of the dims) is 1: a launch of extent 0 is
// skipped before any call.
void add_serial_blas_launches(CpuKernel& k, const std::string& symbol, KernelLaunch main,
                              const Expr& active = Expr(1)) {
  k.launches.push_back(one_launch(symbol + "_serial", active, 1, false));
  k.launches.push_back(std::move(main));
  k.launches.push_back(one_launch(symbol + "_threaded", active, 1, false));
}

}  // namespace

HostVectorIsa HostVectorIsa::detect() {
  HostVectorIsa isa;
#if defined(__x86_64__) || defined(__i386__)
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
#endif
  return isa;
}

std::string openblas_core_for_host(const std::string& detected, HostVectorIsa host) {
  if (!host.avx2_fma || openblas_core_has_avx2(detected)) return {};
  return host.avx512 ? "SkylakeX" : "Haswell";
}

const Blas* Blas::get() {
  static const Blas blas = load_blas();
  return blas.sgemm != nullptr ? &blas : nullptr;
}

std::optional<CpuKernel> generate_sgemm_kernel(const Graph& graph, const Region& region,
                                               const std::string& name) {
  const Blas* blas = Blas::get();
  if (blas == nullptr) return std::nullopt;
  const auto product = find_product(graph, region, 0);
  if (!product) return std::nullopt;
  const Node& m = graph.node(product->mul);
  const egraph::MatMulSpec& sp = product->match.spec;
  const bool swapped = product->match.swapped;
  if (sp.a_layout() == egraph::MatLayout::Strided || sp.b_layout() == egraph::MatLayout::Strided)
    return std::nullopt;
  const bool ta = sp.a_layout() == egraph::MatLayout::ColMajor;
  const bool tb = sp.b_layout() == egraph::MatLayout::ColMajor;

  CpuKernel k;
  k.name = name;
  const SpecDims c(sp, k);
  const std::string symbol = "lk_" + name;
  std::string code = entry_prologue(symbol, k);
  code +=
      "  typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float*, int, "
      "const float*, int, float, float*, int);\n"
      "  const sgemm_t sgemm = (sgemm_t)_buf[3];\n"
      "  const float* A = (const float*)_buf[0];\n"
      "  const float* B = (const float*)_buf[1];\n"
      "  float* C = (float*)_buf[2];\n";
  code += sgemm_locals(c, sp, ta, tb) + "  for (int64_t _b = _begin; _b < _end; ++_b) {\n";
  code += "    int64_t offa = " + c(sp.a_offset) + ", offb = " + c(sp.b_offset) + ";\n";
  code += batch_offsets(c, sp, "_b");
  code += "    float* Cb = C + _b * M * N;\n";
  code += "    if (blas_ok) {\n      " + sgemm_call(ta, tb, "M", "A + offa", "Cb");
  code += "    } else {\n" + product_rows_loop("0", "M", "Cb") +
          "    }\n"
          "  }\n"
          "  return 0;\n"
          "}\n";
  k.inputs = {m.operands[swapped ? 1 : 0].node, m.operands[swapped ? 0 : 1].node};
  k.outputs = {product->sum};
  k.host_pointers = {reinterpret_cast<void*>(blas->sgemm)};
  if (!sp.batch.empty()) {
    // One piece: BLAS runs its own threads.
    k.code = std::move(code);
    k.launches.push_back(one_launch(symbol, sp.batch_count(), 1, false));
    k.launches.back().own_threads = true;
    return k;
  }
  // Fewer than kSgemvMaxRows rows (a decode step): OpenBLAS 0.3's sgemm
  // takes milliseconds there (1.5 - 12 ms for 1 x 576 @ 576 x 1536, against
  // 0.4 ms for 8 rows), so the pool computes the columns itself.
  const std::string gemv = symbol + "_gemv";
  code += entry_prologue(gemv, k) +
          "  const float* A = (const float*)_buf[0];\n"
          "  const float* B = (const float*)_buf[1];\n"
          "  float* C = (float*)_buf[2];\n" +
          gemv_locals(c, sp, ta, tb) + gemv_columns("C") + "  return 0;\n}\n";
  k.code = std::move(code);
  const Expr many = Expr::make(ExprKind::Le, {Expr(kSgemvMaxRows), sp.m});
  k.launches.push_back(
      one_launch(gemv, ((Expr(1) - many) * sp.n).simplify(), (sp.m * sp.k).simplify(), true));
  k.launches.push_back(one_launch(symbol, many, 1, false));
  k.launches.back().own_threads = true;
  return k;
}

std::optional<CpuKernel> generate_amx_matmul_kernel(const Graph& graph, const Region& region,
                                                    const std::string& name) {
  if (region.nodes.size() != 2) return std::nullopt;
  const auto product = find_product(graph, region, 0);
  if (!product) return std::nullopt;
  const Node& m = graph.node(product->mul);
  const egraph::MatMulSpec& sp = product->match.spec;
  const bool swapped = product->match.swapped;
  const NodeId a_node = m.operands[swapped ? 1 : 0].node;
  const NodeId w_node = m.operands[swapped ? 0 : 1].node;
  if (graph.node(a_node).dtype != DType::F32 || graph.node(w_node).dtype != DType::F32)
    return std::nullopt;
  if (!sp.batch.empty() || !is_const(sp.b_k_stride, 1) || !is_const(sp.a_k_stride, 1))
    return std::nullopt;
  CpuKernel k;
  k.name = name;
  const SpecDims e(sp, k);
  const std::string symbol = "lk_" + name;
  const std::string locals = "  const int64_t M = " + e(sp.m) + ", N = " + e(sp.n) +
                             ", K = " + e(sp.k) + ", am = " + e(sp.a_m_stride) + ";\n" +
                             "  const int64_t aoff = " + e(sp.a_offset) +
                             ", bn = " + e(sp.b_n_stride) + ", boff = " + e(sp.b_offset) + ";\n" +
                             "  const float* X = (const float*)_buf[0] + aoff;\n" +
                             "  const float* W = (const float*)_buf[1] + boff;\n" +
                             "  (void)M; (void)N; (void)K; (void)am; (void)bn; (void)X; (void)W;\n";
  // One slot per pool thread (fewer where N would leave a slot under 64
  // columns), slot s taking columns [N s / slots, N (s + 1) / slots) rounded
  // to 16, 16 items per slot (as the int16 products' slots).
  int64_t slots = ThreadPool::shared().size();
  if (const auto n = sp.n.as_const()) slots = std::clamp<int64_t>(*n / 64, 1, slots);
  const std::string ns = std::to_string(slots);
  std::string code =
      "#if !defined(LK_AMX)\n#error CpuMatMulAmx needs the AMX tiles of the prelude "
      "(LK_AMX)\n#endif\n";
  code += entry_prologue(symbol + "_pack", k) + locals +
          "  for (int64_t g = _begin; g < _end; ++g)\n"
          "    lk::amx_pack_weight(W, bn, g, N, K, (uint8_t*)_buf[4]);\n"
          "  return 0;\n}\n";
  code += entry_prologue(symbol + "_x", k) + locals +
          "  for (int64_t p = _begin; p < _end; ++p)\n"
          "    lk::amx_pack_x(X, am, p, M, K, (uint8_t*)_buf[3]);\n"
          "  return 0;\n}\n";
  code += entry_prologue(symbol, k) + locals +
          "  for (int64_t s = (_begin + 15) / 16; s * 16 < _end; ++s) {\n"
          "    const int64_t j0 = N * s / " +
          ns +
          " / 16 * 16;\n"
          "    const int64_t j1 = s + 1 == " +
          ns + " ? N : N * (s + 1) / " + ns +
          " / 16 * 16;\n"
          "    if (!lk::amx_gemm(X, am, W, bn, (const uint8_t*)_buf[4], (const uint8_t*)_buf[3], "
          "M, N, K, (float*)_buf[2], j0, j1))\n"
          "      return 5;  // kKernelNoAmxPermission\n"
          "  }\n  return 0;\n}\n";
  k.code = std::move(code);
  const Expr kblocks = ((sp.k + Expr(31)) / Expr(32)).simplify();
  const Expr groups = ((sp.n + Expr(31)) / Expr(32) * Expr(2)).simplify();
  const Expr row_blocks = ((sp.m + Expr(31)) / Expr(32) * Expr(2)).simplify();
  k.packed_bytes = (groups * kblocks * Expr(2048)).simplify();
  k.packed_input = 1;
  k.pack_launches = 1;
  k.scratch_bytes = (row_blocks * kblocks * Expr(2048) + row_blocks * Expr(16)).simplify();
  k.launches.push_back(tiles_launch(symbol + "_pack", groups, sp));
  k.launches.push_back(tiles_launch(symbol + "_x", row_blocks, sp));
  k.launches.push_back(slots_launch(symbol, slots, sp));
  k.inputs = {a_node, w_node};
  k.outputs = {product->sum};
  return k;
}

std::optional<CpuKernel> generate_qmatmul_kernel(const Graph& graph, const Region& region,
                                                 const std::string& name,
                                                 QMatMulArithmetic arithmetic) {
  const bool int16 = arithmetic == QMatMulArithmetic::Int16;
  // An f32 weight (CpuMatMulInt16: the product alone) or a block-quantized
  // one read through a Cast member (CpuQMatMul, CpuQMatMulInt16).
  const bool f32_weight = int16 && region.nodes.size() == 2;
  const auto product = find_product(graph, region, f32_weight ? 0 : 1);
  if (!product) return std::nullopt;
  const Node& m = graph.node(product->mul);
  const egraph::MatMulSpec& sp = product->match.spec;
  const bool swapped = product->match.swapped;
  const NodeId a_node = m.operands[swapped ? 1 : 0].node;
  NodeId w_node = m.operands[swapped ? 0 : 1].node;
  DType qt = DType::F32;
  if (!f32_weight) {
    const Node& cn = graph.node(w_node);
    if (cn.kind != OpKind::Cast || cn.dtype != DType::F32 ||
        std::find(region.nodes.begin(), region.nodes.end(), w_node) == region.nodes.end())
      return std::nullopt;
    const Operand& q = cn.operands[0];
    qt = graph.node(q.node).dtype;
    if (!is_quantized(qt) || !q.view.is_contiguous()) return std::nullopt;
    w_node = q.node;
  } else if (graph.node(w_node).dtype != DType::F32) {
    return std::nullopt;
  }
  // The weight as N rows of K contiguous elements (quantized: starting on
  // block boundaries), K whole blocks of 32, x rows contiguous, no batch (a
  // Linear layer's form).
  if (!sp.batch.empty() || !is_const(sp.b_k_stride, 1) || !const_multiple(sp.k, 32) ||
      !is_const(sp.a_k_stride, 1))
    return std::nullopt;
  if (!f32_weight && (!const_multiple(sp.b_n_stride, 32) || !const_multiple(sp.b_offset, 32)))
    return std::nullopt;

  CpuKernel k;
  k.name = name;
  const SpecDims e(sp, k);
  const std::string symbol = "lk_" + name;
  const std::string type(f32_weight ? "f32" : dtype_name(qt));
  const std::string block_bytes = std::to_string(f32_weight ? 128 : dtype_info(qt).block_bytes);
  const std::string locals = "  const int64_t M = " + e(sp.m) + ", N = " + e(sp.n) +
                             ", K = " + e(sp.k) + ", am = " + e(sp.a_m_stride) + ";\n";
  // Many rows (a prefill) go to lk::qgemm: a GEMM at BLAS speed, each pool
  // thread decoding panels of its columns into its own part of the scratch and
  // calling a single-threaded sgemm (int sizes; x rows apart by at least K, as
  // BLAS wants). Fewer rows (a decode step) take the GEMV tiles of
  // lk::qmatmul, which need no BLAS. (Int16: lk::qgemm_i16 for every row
  // count, which needs no BLAS.)
  const Blas* blas = int16 ? nullptr : Blas::get();
  const int64_t first_many = int16 ? kQGemmInt16MinRows : kQGemmMinRows;
  const std::string min_rows = std::to_string(first_many);
  const Expr many = Expr::make(ExprKind::Le, {Expr(first_many), sp.m});
  const std::string use_blas = blas != nullptr
                                   ? "M >= " + min_rows +
                                         " && am >= K && M < 2147483647 && N < 2147483647 && "
                                         "K < 2147483647 && am < 2147483647"
                                   : "false";
  // Launch items: columns for the GEMV. With many rows, one slot per pool
  // thread (the number of panels in the scratch; fewer where N is known and
  // would leave a slot less than 64 columns), slot s taking columns
  // [N s / slots, N (s + 1) / slots) rounded to 16, and 16 items per slot:
  // the program splits launches at multiples of 16 items, and a slot is
  // computed by the piece holding its first item (right for any split).
  int64_t slots = ThreadPool::shared().size();
  if (const auto n = sp.n.as_const()) slots = std::clamp<int64_t>(*n / 64, 1, slots);
  const std::string panel = std::to_string(kQGemmPanelFloats), ns = std::to_string(slots);
  const std::string weight =
      f32_weight ? std::string("W + boff * 4, bn * 4")
                 : "W + (boff >> 5) * " + block_bytes + ", (bn >> 5) * " + block_bytes;
  std::string code = entry_prologue(symbol, k) + locals;
  code +=
      "  const float* X = (const float*)_buf[0];\n"
      "  const uint8_t* W = (const uint8_t*)_buf[1];\n"
      "  float* C = (float*)_buf[2];\n";
  code += "  const int64_t aoff = " + e(sp.a_offset) + ", bn = " + e(sp.b_n_stride) +
          ", boff = " + e(sp.b_offset) + ";\n";
  // K, the weight's offset and its row stride are multiples of 32: whole blocks.
  const std::string block = "lk::" + type + "_block";
  // A call of the prelude's library template `name` for this block type and
  // (`by_shape`: the products) K and N where they are known (recorded:
  // compiled once into a library, not in every unit).
  const std::optional<int64_t> known_k = sp.k.as_const(), known_n = sp.n.as_const();
  auto library = [&](const std::string& name, bool by_shape = true) {
    std::string instance = "lk::" + name + "<" + block;
    if (by_shape && known_k) {
      instance += ", " + std::to_string(*known_k);
      if (known_n) instance += ", " + std::to_string(*known_n);
    }
    instance += ">";
    if (std::find(k.library_calls.begin(), k.library_calls.end(), instance) ==
        k.library_calls.end())
      k.library_calls.push_back(instance);
    return instance;
  };
  // The many-rows branch: a loop over this launch piece's slots, slot s
  // taking columns [j0, j1), then `body`.
  auto slot_loop = [&](const std::string& body) {
    return "    for (int64_t s = (_begin + 15) / 16; s * 16 < _end; ++s) {\n"
           "      const int64_t j0 = N * s / " +
           ns + " / 16 * 16;\n      const int64_t j1 = s + 1 == " + ns + " ? N : N * (s + 1) / " +
           ns + " / 16 * 16;\n" + body + "    }\n    return 0;\n";
  };
  auto many_rows = [&](const std::string& body) {
    return "  if (M >= " + min_rows + ") {\n" + slot_loop(body) + "  }\n";
  };
  // A pool slot's scratch for the int16 product (the prelude's
  // qgemm_i16_scratch_bytes): its weight panel (from kQGemmInt16MinRows rows),
  // x's int16 words, {s, sx} and two outlier slots per block, an outlier count
  // per row.
  const Expr int16_slot_bytes =
      Expr::make(ExprKind::Le, {Expr(kQGemmInt16MinRows), sp.m}) * Expr(kQGemmI16PanelBytes) +
      sp.m * sp.k * Expr(2) + sp.m * (sp.k / Expr(32)) * Expr(24) + sp.m * Expr(8);
  // The weight's copy for the int16 products (and CpuQMatMulAmx, whose
  // decode steps take the int16 GEMV): a pack launch, the first, one item per
  // column group, into memory the program keeps between runs (skipped while
  // the weight is unchanged).
  auto add_copy_pack_launch = [&] {
    const std::string pack_symbol = symbol + "_pack";
    const std::string pack_call =
        library(f32_weight ? "qi16_pack_group" : "qx8_pack_group", false) + "(";
    code += entry_prologue(pack_symbol, k) + locals +
            "  const uint8_t* W = (const uint8_t*)_buf[1];\n"
            "  const int64_t bn = " +
            e(sp.b_n_stride) + ", boff = " + e(sp.b_offset) +
            ";\n"
            "  (void)M; (void)am;\n"
            "  for (int64_t g = _begin; g < _end; ++g)\n    " +
            pack_call + weight +
            ", g, N, K, (uint8_t*)_buf[4]);\n"
            "  return 0;\n"
            "}\n";
    const Expr groups = f32_weight ? ((sp.n + Expr(15)) / Expr(16) + Expr(1)).simplify()
                                   : ((sp.n + Expr(15)) / Expr(16) * Expr(2)).simplify();
    // (a group's block: eight GGUF blocks' bytes)
    const int64_t group_block_bytes =
        f32_weight ? kQGemmI16Unit : 8 * static_cast<int64_t>(dtype_info(qt).block_bytes);
    k.packed_bytes = (groups * (sp.k / Expr(32)) * Expr(group_block_bytes)).simplify();
    k.packed_input = 1;
    k.pack_launches = 1;
    k.packed_replaces_input = !f32_weight;
    KernelLaunch pack_launch =
        one_launch(pack_symbol, groups, (Expr(f32_weight ? 16 : 8) * sp.k).simplify(), true);
    pack_launch.align = 1;
    k.launches.push_back(std::move(pack_launch));
  };
  if (arithmetic == QMatMulArithmetic::Amx) {
    // The int16 products' copy of the weight (add_copy_pack_launch). Fewer
    // than amx_qgemm_rows rows: the int16 product over it (lk::qgemm_i16_x8;
    // no slot takes rows, as qi16_rows_split would only from 8 rows a slot).
    // From amx_qgemm_rows rows the tiles (lk::amx_qgemm: x split into tiles
    // by a launch, one item per 16-row block; each slot decoding its columns
    // from the copy into its panel).
    const std::string body =
        "      uint8_t* slot = (uint8_t*)_buf[3] + lk::amx_qx_bytes(M, K) + s * "
        "lk::amx_qslot_bytes(M, K);\n"
        "      if (M < lk::amx_qgemm_rows) {\n        " +
        library("qgemm_i16_x8") + "(X + aoff, am, " + weight +
        ", (const uint8_t*)_buf[4], M, N, K, C, j0, j1, slot);\n        continue;\n      }\n"
        "      if (!" +
        library("amx_qgemm") + "(X + aoff, am, " + weight +
        ", (const uint8_t*)_buf[4], (const uint8_t*)_buf[3], M, N, K, C, j0, j1, slot))\n"
        "        return 5;  // kKernelNoAmxPermission\n";
    code += slot_loop(body) + "}\n";
    add_copy_pack_launch();
    code += entry_prologue(symbol + "_x", k) + locals +
            "  const float* X = (const float*)_buf[0];\n  const int64_t aoff = " + e(sp.a_offset) +
            ";\n"
            "  for (int64_t p = _begin; p < _end; ++p)\n"
            "    lk::amx_pack_x(X + aoff, am, p, M, K, (uint8_t*)_buf[3]);\n"
            "  return 0;\n}\n";
    k.code =
        "#if !defined(LK_AMX)\n#error CpuQMatMulAmx needs the AMX tiles of the prelude "
        "(LK_AMX)\n#endif\n" +
        std::move(code);
    const Expr tiles_min = Expr::make(ExprKind::Le, {Expr(kAmxQGemmMinRows), sp.m});
    const Expr row_blocks = ((sp.m + Expr(31)) / Expr(32) * Expr(2)).simplify();
    const Expr kblocks = (sp.k / Expr(32)).simplify();
    // x's tiles and row flags (lk::amx_qx_bytes), then each slot's part
    // (lk::amx_qslot_bytes): its panel, or the int16 product's scratch.
    k.scratch_bytes = (tiles_min * (row_blocks * kblocks * Expr(2048) + row_blocks * Expr(16)) +
                       Expr(slots) * (tiles_min * kblocks * Expr(4096) +
                                      (Expr(1) - tiles_min) * int16_slot_bytes))
                          .simplify();
    k.launches.push_back(tiles_launch(symbol + "_x", (tiles_min * row_blocks).simplify(), sp));
    k.launches.push_back(slots_launch(symbol, slots, sp));
    k.inputs = {a_node, w_node};
    k.outputs = {product->sum};
    return k;
  }
  if (int16) {
    // Every row count takes the int16 product, one slot per pool thread, over
    // a packed copy of the weight (lk::qgemm_i16_packed / lk::qgemm_i16_x8:
    // from kQGemmInt16MinRows rows on the GEMM through weight panels, fewer
    // the GEMV). The copy is made by the first launch, one item per column
    // group, into memory the program keeps between runs, and that launch is
    // skipped while the weight is unchanged:
    // - an f32 weight: rounded to 14 bits per block, in the VNNI units of
    //   lk::qgemm_i16 (16-column groups and a zero group after the last); a
    //   decode step's GEMV then reads 2.25 bytes per weight instead of 4;
    // - a GGUF weight (Q8_0, Q4_0, Q4_1): the same bytes with eight columns
    //   interleaved per block (the prelude's qx8_pack_group; 8-column groups,
    //   an even count; Q4_1 on VNNI hosts in 16-column groups of four-byte
    //   lanes for vpdpbusd, the same space, qb16 in the prelude): the GEMV's
    //   int32 lanes are then columns (no reduction across lanes, 1.67x the
    //   in-place GEMV from cache) and the GEMM's panels are built from it. Nothing but rows holding
    //   NaN / Inf reads the GGUF blocks afterwards, so the program may drop their pages
    //   (CpuKernel::packed_replaces_input): the copy costs no memory.
    //   (AVX2 hosts: an f32 weight too takes the interleaved form, its blocks
    //   rounded first, in the f32 layout's space: see qi16_pack_group)
    // (the slots may take rows instead of columns: lk::qi16_rows_split)
    const std::string call =
        "      const bool by_rows = lk::qi16_rows_split(M, " + ns +
        ");\n"
        "      const int64_t i0 = by_rows ? M * s / " +
        ns + " : 0, i1 = by_rows ? M * (s + 1) / " + ns + " : M;\n      " +
        library(f32_weight ? "qgemm_i16_packed" : "qgemm_i16_x8") + "(X + aoff + i0 * am, am, " +
        weight +
        ", (const uint8_t*)_buf[4], i1 - i0, N, K, C + i0 * N, by_rows ? 0 : j0, "
        "by_rows ? N : j1, ";
    code += slot_loop(call + "(char*)_buf[3] + s * lk::qgemm_i16_scratch_bytes(M, K));\n") + "}\n";
    add_copy_pack_launch();
    k.code = std::move(code);
    k.scratch_bytes = (Expr(slots) * int16_slot_bytes).simplify();
    k.launches.push_back(slots_launch(symbol, slots, sp));
    k.inputs = {a_node, w_node};
    k.outputs = {product->sum};
    return k;
  }
  if (blas != nullptr) {
    code +=
        many_rows("      if (" + use_blas + ")\n        " + library("qgemm") + "(X + aoff, am, " +
                  weight + ", M, N, K, C, j0, j1, (lk::sgemm_fn)_buf[4], (float*)_buf[3] + s * " +
                  panel + ", " + panel + ");\n      else\n        " + library("qmatmul") +
                  "(X + aoff, am, " + weight + ", M, N, K, C, j0, j1);\n");
  }
  // Few rows (decode): the prelude's lk::qmatmul decodes each weight block in
  // vector registers once per tile of up to four x rows (decoding, not the
  // multiply, is the GEMV's cost).
  code += "  " + library("qmatmul") + "(X + aoff, am, " + weight +
          ", M, N, K, C, _begin, _end);\n"
          "  return 0;\n"
          "}\n";
  // Many rows: 16 items per slot; few: one per column.
  const Expr extent = (many * Expr(slots * 16) + (Expr(1) - many) * sp.n).simplify();
  const Expr work =
      ((many * (sp.n / Expr(slots * 16)) + (Expr(1) - many)) * sp.m * sp.k).simplify();
  if (blas != nullptr) {
    code += blas_threads_entries(symbol, k, 5, locals, use_blas);
    k.scratch_bytes = (many * Expr(slots * kQGemmPanelFloats * 4)).simplify();
    k.host_pointers = {reinterpret_cast<void*>(blas->sgemm),
                       reinterpret_cast<void*>(blas->set_threads)};
    // (a decode step's GEMV launches nothing else)
    add_serial_blas_launches(k, symbol, one_launch(symbol, extent, work, true), many);
  } else {
    k.launches.push_back(one_launch(symbol, sp.n, (sp.m * sp.k).simplify(), true));
  }
  k.code = std::move(code);
  k.inputs = {a_node, w_node};
  k.outputs = {product->sum};
  return k;
}

namespace {

// The product of a CpuSgemmEpilogue group: its only SumReduce, over a Mul
// member, recognised as an f32 matrix product (batched or not) with BLAS
// layouts.
std::optional<ProductMembers> find_epilogue_product(const Graph& graph, const Region& region) {
  ProductMembers p;
  int sums = 0;
  for (NodeId id : region.nodes)
    if (graph.node(id).kind == OpKind::SumReduce) p.sum = id, ++sums;
  if (sums != 1) return std::nullopt;
  const Node& s = graph.node(p.sum);
  p.mul = s.operands[0].node;
  const Node& m = graph.node(p.mul);
  if (m.kind != OpKind::Mul || !s.operands[0].view.is_contiguous() || s.dtype != DType::F32 ||
      m.dtype != DType::F32 ||
      std::find(region.nodes.begin(), region.nodes.end(), p.mul) == region.nodes.end())
    return std::nullopt;
  auto mm = egraph::recognize_matmul(m.shape, static_cast<size_t>(s.axis), m.operands[0].view,
                                     m.operands[1].view);
  if (!mm || mm->spec.a_layout() == egraph::MatLayout::Strided ||
      mm->spec.b_layout() == egraph::MatLayout::Strided)
    return std::nullopt;
  p.match = *mm;
  return p;
}

// Whether the epilogue members read the product only element-wise in its flat
// order (so rows [r0, r1) of the product determine elements [r0 N, r1 N) of
// every output): each member depending on the product is element-wise, of the
// product's element count, and reads it (or members depending on it) through
// views that keep the flat order. Mul and SumReduce are the product.
bool epilogue_reads_in_order(const Graph& graph, const std::vector<NodeId>& members,
                             const ProductMembers& p, const Expr& numel) {
  std::set<NodeId> dep{p.sum};
  std::vector<NodeId> sorted = members;
  std::sort(sorted.begin(), sorted.end());  // node ids are topological
  for (NodeId id : sorted) {
    const Node& n = graph.node(id);
    bool reads = false;
    for (const Operand& o : n.operands) {
      if (!dep.count(o.node)) continue;
      reads = true;
      if (!o.view.is_contiguous()) return false;
    }
    if (!reads) continue;
    if (n.kind == OpKind::SumReduce || n.kind == OpKind::MaxReduce || n.kind == OpKind::Gather ||
        n.kind == OpKind::Scatter || product(n.shape).simplify() != numel)
      return false;
    dep.insert(id);
  }
  return true;
}

}  // namespace

std::optional<CpuKernel> generate_sgemm_epilogue_kernel(const Graph& graph, const Region& region,
                                                        const std::string& name) {
  const Blas* blas = Blas::get();
  if (blas == nullptr) return std::nullopt;
  const auto product = find_epilogue_product(graph, region);
  if (!product) return std::nullopt;
  const egraph::MatMulSpec& sp = product->match.spec;
  // The product's rows, every batch's one after another: the body reads them
  // in that (flat) order.
  const Expr rows_total = (sp.batch_count() * sp.m).simplify();
  const Expr numel = (rows_total * sp.n).simplify();
  std::vector<NodeId> members;
  for (NodeId id : region.nodes)
    if (id != product->mul && id != product->sum) members.push_back(id);
  for (NodeId o : region.outputs)
    if (o == product->mul || o == product->sum)
      return std::nullopt;  // the product is read elsewhere
  if (members.empty() || !epilogue_reads_in_order(graph, members, *product, numel))
    return std::nullopt;
  // The body's own kernel (generated loops over flat ranges of the output),
  // reading the product from the scratch buffer.
  CpuKernel epi = generate_kernel(graph, Region(members, region.outputs), name + "_epi");
  if (epi.launches.size() != 1 || !epi.launches[0].parallel || epi.host_pointers.size() != 0 ||
      epi.scratch_bytes.simplify() != Expr(0) || epi.launches[0].extent.simplify() != numel)
    return std::nullopt;
  const Node& m = graph.node(product->mul);
  const bool swapped = product->match.swapped;
  const bool ta = sp.a_layout() == egraph::MatLayout::ColMajor;
  const bool tb = sp.b_layout() == egraph::MatLayout::ColMajor;

  CpuKernel k;
  k.name = name;
  k.dims = epi.dims;  // a prefix of this kernel's dims: _dims is passed on as it is
  const SpecDims c(sp, k);
  k.inputs = {m.operands[swapped ? 1 : 0].node, m.operands[swapped ? 0 : 1].node};
  std::string slots;  // the body kernel's buffer array
  for (NodeId in : epi.inputs) {
    if (in == product->sum) {
      slots += "S, ";
      continue;
    }
    slots += "_buf[" + std::to_string(k.inputs.size()) + "], ";
    k.inputs.push_back(in);
  }
  k.outputs = epi.outputs;
  const size_t scratch = k.inputs.size() + k.outputs.size();
  for (size_t o = 0; o < k.outputs.size(); ++o)
    slots += "_buf[" + std::to_string(k.inputs.size() + o) + "], ";
  const std::string sc = std::to_string(scratch);
  const std::string symbol = "lk_" + name;
  std::string code = epi.code;
  // OpenBLAS single-threaded while every pool thread calls it on its own rows.
  code += blas_threads_entries(symbol, k, scratch + 2, "", "true");
  code += entry_prologue(symbol, k);
  code +=
      "  typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float*, int, "
      "const float*, int, float, float*, int);\n"
      "  const float* A = (const float*)_buf[0];\n"
      "  const float* B = (const float*)_buf[1];\n"
      "  float* S = (float*)_buf[" +
      sc +
      "];\n"
      "  const sgemm_t sgemm = (sgemm_t)_buf[" +
      std::to_string(scratch + 1) +
      "];\n"
      "  void* const _eb[] = {" +
      slots + "nullptr};\n";
  code += sgemm_locals(c, sp, ta, tb);
  code += "  const int64_t offa0 = " + c(sp.a_offset) + ", offb0 = " + c(sp.b_offset) + ";\n";
  code +=
      // Blocks of ~1 MiB of the product (at least 64 rows): the body reads it
      // from cache, and BLAS (which packs all of B per call) is called a few
      // times per thread, not once per row. On linear 512x576x1536 (2 threads,
      // a loaded machine) 64-row blocks, these and one block per thread, and a
      // split by columns instead of rows, all measured within noise (0.8-1.3x)
      // of sgemm then the separate pass; the search times it against that.
      // A block ends at its batch's last row (rows r of all batches: batch
      // r / M, its row r % M).
      "  const int64_t rows = N * 4 * 64 >= 1048576 ? 64 : 1048576 / (N * 4);\n"
      "  for (int64_t r0 = _begin, r1 = 0; r0 < _end; r0 = r1) {\n"
      "    const int64_t _b = r0 / M, i0 = r0 - _b * M;\n"
      "    r1 = r0 + rows < _end ? r0 + rows : _end;\n"
      "    if (r1 > (_b + 1) * M) r1 = (_b + 1) * M;\n"
      "    int64_t offa = offa0, offb = offb0;\n" +
      batch_offsets(c, sp, "_b") +
      "    float* Sb = S + _b * M * N;\n"
      "    if (blas_ok && M >= " +
      std::to_string(kSgemvMaxRows) + ") {\n";
  code += "      " + sgemm_call(ta, tb, "(r1 - r0)", "A + offa + i0 * am", "Sb + i0 * N");
  code += "    } else {\n" + product_rows_loop("i0", "i0 + (r1 - r0)", "Sb") +
          "    }\n"
          "    const int32_t st = " +
          epi.launches[0].symbol +
          "(_eb, _dims, r0 * N, r1 * N, _err);\n"
          "    if (st != 0) return st;\n"
          "  }\n"
          "  return 0;\n"
          "}\n";
  // An unbatched product of fewer than kSgemvMaxRows rows (a decode step):
  // split by rows, one thread would compute it all (a 576 x 1536 weight at
  // 0.18 ms against the product kernel's 0.10, the body one launch less). The
  // pool splits its columns instead, as generate_sgemm_kernel's GEMV, and each
  // thread runs the body on its columns of every row.
  const std::string gemv = symbol + "_gemv";
  code += entry_prologue(gemv, k) +
          "  const float* A = (const float*)_buf[0];\n"
          "  const float* B = (const float*)_buf[1];\n"
          "  float* S = (float*)_buf[" +
          sc + "];\n  void* const _eb[] = {" + slots + "nullptr};\n" + gemv_locals(c, sp, ta, tb) +
          gemv_columns("S") +
          "  for (int64_t i = 0; i < M; ++i) {\n"
          "    const int32_t st = " +
          epi.launches[0].symbol +
          "(_eb, _dims, i * N + _begin, i * N + _end, _err);\n"
          "    if (st != 0) return st;\n"
          "  }\n"
          "  return 0;\n"
          "}\n";
  k.code = std::move(code);
  k.scratch_bytes = (numel * Expr(4)).simplify();
  k.host_pointers = {reinterpret_cast<void*>(blas->sgemm),
                     reinterpret_cast<void*>(blas->set_threads)};
  const Expr many =
      sp.batch.empty() ? Expr::make(ExprKind::Le, {Expr(kSgemvMaxRows), sp.m}) : Expr(1);
  k.launches.push_back(
      one_launch(gemv, ((Expr(1) - many) * sp.n).simplify(), (sp.m * sp.k).simplify(), true));
  add_serial_blas_launches(
      k, symbol, one_launch(symbol, (many * rows_total).simplify(), (sp.n * sp.k).simplify(), true),
      many);
  return k;
}

}  // namespace luminal::cpu
