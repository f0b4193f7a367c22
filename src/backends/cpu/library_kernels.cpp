#include "luminal/backends/cpu/library_kernels.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/egraph/matmul.hpp"

namespace luminal::cpu {

namespace {

// CBLAS enum values (cblas.h): fixed by the CBLAS standard.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

Blas load_blas() {
  Blas blas;
  std::vector<std::string> names;
  if (const char* env = std::getenv("LUMINAL_BLAS_LIBRARY"); env != nullptr && *env != '\0') {
    if (std::string(env) == "none") return blas;  // BLAS deliberately disabled
    names.push_back(env);
  }
  names.insert(names.end(), {"libopenblas.so.0", "libopenblas.so"});
  for (const std::string& name : names) {
    // Never unloaded: kernels keep its function pointers for the process lifetime.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) continue;
    auto sgemm = reinterpret_cast<Blas::Sgemm>(dlsym(handle, "cblas_sgemm"));
    if (sgemm == nullptr) continue;
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(handle, "openblas_set_num_threads")))
      set(ThreadPool::shared().size());
    blas.sgemm = sgemm;
    blas.library = name;
    return blas;
  }
  return blas;
}

}  // namespace

const Blas* Blas::get() {
  static const Blas blas = load_blas();
  return blas.sgemm != nullptr ? &blas : nullptr;
}

std::optional<CpuKernel> generate_sgemm_kernel(const Graph& graph, const Region& region,
                                               const std::string& name) {
  const Blas* blas = Blas::get();
  if (blas == nullptr) return std::nullopt;
  // The members: exactly a Mul and the SumReduce reading it.
  NodeId sum = 0, mul = 0;
  int sums = 0, muls = 0;
  for (NodeId id : region.nodes) {
    const OpKind k = graph.node(id).kind;
    if (k == OpKind::SumReduce) sum = id, ++sums;
    if (k == OpKind::Mul) mul = id, ++muls;
  }
  if (sums != 1 || muls != 1 || region.nodes.size() != 2) return std::nullopt;
  if (region.outputs.size() != 1 || region.outputs[0] != sum) return std::nullopt;
  const Node& s = graph.node(sum);
  const Node& m = graph.node(mul);
  if (s.operands[0].node != mul || !s.operands[0].view.is_contiguous() || s.dtype != DType::F32 ||
      m.dtype != DType::F32)
    return std::nullopt;
  auto mm = egraph::recognize_matmul(m.shape, static_cast<size_t>(s.axis), m.operands[0].view,
                                     m.operands[1].view);
  if (!mm) return std::nullopt;
  const egraph::MatMulSpec& sp = mm->spec;
  if (sp.a_layout() == egraph::MatLayout::Strided || sp.b_layout() == egraph::MatLayout::Strided)
    return std::nullopt;
  const bool ta = sp.a_layout() == egraph::MatLayout::ColMajor;
  const bool tb = sp.b_layout() == egraph::MatLayout::ColMajor;
  const NodeId a_node = m.operands[mm->swapped ? 1 : 0].node;
  const NodeId b_node = m.operands[mm->swapped ? 0 : 1].node;

  // Every dim the expressions use becomes a kernel argument `_d<i>`.
  std::vector<Expr> exprs{sp.m,        sp.n,          sp.k,          sp.a_m_stride, sp.a_k_stride,
                          sp.a_offset, sp.b_k_stride, sp.b_n_stride, sp.b_offset};
  for (size_t d = 0; d < sp.batch.size(); ++d)
    exprs.insert(exprs.end(), {sp.batch[d], sp.a_batch_strides[d], sp.b_batch_strides[d]});
  std::set<std::string> vars;
  for (const Expr& e : exprs)
    for (const std::string& v : e.variables()) vars.insert(v);
  CpuKernel k;
  k.name = name;
  std::map<std::string, Expr, std::less<>> rename;
  for (const std::string& v : vars) {
    rename.emplace(v, Expr::internal_var("_d" + std::to_string(k.dims.size())));
    k.dims.push_back(v);
  }
  auto c = [&](const Expr& e) { return "(int64_t)(" + e.substitute(rename).to_c() + ")"; };

  const std::string symbol = "lk_" + name;
  std::string code;
  code += "extern \"C\" int32_t " + symbol +
          "(void* const* __restrict _buf, const int64_t* __restrict _dims, int64_t _begin, "
          "int64_t _end, int64_t* __restrict _err) {\n";
  code += "  (void)_err; (void)_dims;\n";
  for (size_t i = 0; i < k.dims.size(); ++i)
    code += "  const int64_t _d" + std::to_string(i) + " = _dims[" + std::to_string(i) + "];\n";
  code +=
      "  typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float*, int, "
      "const float*, int, float, float*, int);\n"
      "  const sgemm_t sgemm = (sgemm_t)_buf[3];\n"
      "  const float* A = (const float*)_buf[0];\n"
      "  const float* B = (const float*)_buf[1];\n"
      "  float* C = (float*)_buf[2];\n";
  code += "  const int64_t M = " + c(sp.m) + ", N = " + c(sp.n) + ", K = " + c(sp.k) + ";\n";
  code += "  const int64_t am = " + c(sp.a_m_stride) + ", ak = " + c(sp.a_k_stride) +
          ", bk = " + c(sp.b_k_stride) + ", bn = " + c(sp.b_n_stride) + ";\n";
  // Leading dimensions; a size-1 matrix dimension makes its stride irrelevant,
  // and BLAS only wants it to be at least the other size.
  code +=
      ta ? "  const int64_t lda = K == 1 ? M : ak;\n" : "  const int64_t lda = M == 1 ? K : am;\n";
  code +=
      tb ? "  const int64_t ldb = N == 1 ? K : bn;\n" : "  const int64_t ldb = K == 1 ? N : bk;\n";
  code += std::string("  const int64_t lda_min = ") + (ta ? "M" : "K") +
          ", ldb_min = " + (tb ? "K" : "N") + ";\n";
  code +=
      "  const int64_t lim = 2147483647;\n"
      "  const bool blas_ok = M > 0 && N > 0 && K > 0 && M < lim && N < lim && K < lim &&\n"
      "      lda >= lda_min && lda >= 1 && lda < lim && ldb >= ldb_min && ldb >= 1 && ldb < lim;\n"
      "  for (int64_t _b = _begin; _b < _end; ++_b) {\n";
  code += "    int64_t offa = " + c(sp.a_offset) + ", offb = " + c(sp.b_offset) + ";\n";
  code += "    int64_t _r = _b;\n";
  for (size_t d = sp.batch.size(); d-- > 0;)
    code += "    { const int64_t _n = " + c(sp.batch[d]) +
            "; const int64_t _i = _r % _n; _r /= _n; offa += _i * " + c(sp.a_batch_strides[d]) +
            "; offb += _i * " + c(sp.b_batch_strides[d]) + "; }\n";
  code += "    float* Cb = C + _b * M * N;\n";
  code += std::string("    if (blas_ok) {\n      sgemm(") + std::to_string(kRowMajor) + ", " +
          std::to_string(ta ? kTrans : kNoTrans) + ", " + std::to_string(tb ? kTrans : kNoTrans) +
          ", (int)M, (int)N, (int)K, 1.0f, A + offa, (int)lda, B + offb, (int)ldb, 0.0f, Cb, "
          "(int)N);\n";
  code +=
      "    } else {\n"
      "      for (int64_t i = 0; i < M; ++i)\n"
      "        for (int64_t j = 0; j < N; ++j) {\n"
      "          float acc = 0.0f;\n"
      "          for (int64_t q = 0; q < K; ++q) acc += A[offa + i * am + q * ak] * B[offb + q * "
      "bk + "
      "j * bn];\n"
      "          Cb[i * N + j] = acc;\n"
      "        }\n"
      "    }\n"
      "  }\n"
      "  return 0;\n"
      "}\n";
  k.code = std::move(code);
  k.inputs = {a_node, b_node};
  k.outputs = {sum};
  k.host_pointers = {reinterpret_cast<void*>(blas->sgemm)};
  KernelLaunch launch;
  launch.symbol = symbol;
  launch.extent = sp.batch_count();
  launch.work_per_item = 1;
  launch.parallel = false;  // BLAS runs its own threads
  k.launches.push_back(std::move(launch));
  return k;
}

}  // namespace luminal::cpu
