// The many-rows path of the CpuQMatMul kernel (lk::qgemm: panels of weight
// columns decoded per thread, multiplied by single-threaded BLAS sgemm), as a
// prefill runs it, against the reference interpreter: row counts on both
// sides of the 16-row switch with one compiled kernel (a dynamic row dim),
// column counts that leave a partial panel, K in one piece and in two, x read
// through a slice (rows further apart than K, an offset), one and two
// threads, and the portable and AVX2 builds of the decoder.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

// Random bytes with a sane f16 scale (and Q4_1 min) in every block.
TensorData random_blocks(DType d, int64_t rows, int64_t cols, std::mt19937_64& rng) {
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
// CpuQMatMul group (its Cast, Mul and SumReduce).
struct QLinears {
  Graph g;
  std::vector<std::pair<std::string, TensorData>> weights;

  void add(DType d, const std::string& name, const Tensor& x, int64_t k, int64_t n,
           std::mt19937_64& rng) {
    std::optional<nn::Linear> lin;
    {
      nn::ParameterStorage storage([&](const std::string&, DType) { return d; });
      lin.emplace(g, name, k, n, /*bias=*/false);
    }
    g.output("y_" + name, lin->forward(x));
    weights.emplace_back(name + ".weight", random_blocks(d, n, k, rng));
  }

  std::vector<Region> regions() const {
    std::vector<Region> out;
    for (NodeId id = 0; id < g.size(); ++id) {
      if (g.node(id).kind != OpKind::SumReduce) continue;
      const NodeId mul = g.node(id).operands[0].node;
      for (const Operand& o : g.node(mul).operands)
        if (g.node(o.node).kind == OpKind::Cast)
          out.emplace_back(std::vector<NodeId>{o.node, mul, id}, std::vector<NodeId>{},
                           "CpuQMatMul");
    }
    return out;
  }

  // Runs the programs and the interpreter on the same random inputs (`rows`
  // rows for every "s" input) and compares every output.
  void check(const std::vector<CpuProgram*>& programs, int64_t rows, std::mt19937_64& rng,
             const std::string& what) {
    Interpreter ref(g);
    std::vector<std::pair<std::string, TensorData>> inputs = weights;
    for (NodeId id : g.inputs()) {
      const Node& n = g.node(id);
      if (n.name.find(".weight") == std::string::npos)
        inputs.emplace_back(
            n.name, testing::random_tensor(DType::F32, {rows, n.shape[1].as_const().value()}, rng,
                                           -1.0, 1.0));
    }
    for (const auto& [name, t] : inputs) ref.set_input(name, t);
    ref.run();
    for (size_t p = 0; p < programs.size(); ++p) {
      for (const auto& [name, t] : inputs) programs[p]->set_input(name, t);
      programs[p]->run();
      // (2048 ulp: f32 sums in another order than the interpreter's)
      for (NodeId id : g.outputs()) {
        const std::string& name = g.node(id).name;
        testing::expect_close(programs[p]->output(name), ref.output(name), 2048, 1e-4,
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

int qgemm_kernels(const CpuProgram& program) {
  int n = 0;
  for (const CpuKernel& k : program.kernels())
    n += k.code.find("lk::qgemm<") != std::string::npos ? 1 : 0;
  return n;
}

// K = 576 (one K piece; 150 columns, a partial panel per thread) and K = 64
// read through a slice (300 columns); 16, 64, 65 and 130 rows take the GEMM, 5
// and 15 the GEMV, all through one program per thread count.
TEST(QGemm, ManyRowsMatchInterpreter) {
  ASSERT_NE(Blas::get(), nullptr) << "OpenBLAS (libopenblas.so.0) must be installed";
  std::mt19937_64 rng(21);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0}) {
    QLinears q;
    q.add(d, "a", q.g.input("x", {"s", 576}), 576, 150, rng);
    q.add(d, "b", q.g.input("wide", {"s", 100}).slice(1, 8, 72), 64, 300, rng);
    CpuProgram one = q.program(1), two = q.program(2);
    ASSERT_EQ(qgemm_kernels(one), 2);
    for (int64_t s : {16, 64, 65, 130, 5, 15})
      q.check({&one, &two}, s, rng, to_string(d) + " s=" + std::to_string(s));
  }
  // The kernel sets OpenBLAS to one thread while its threads call it, and back
  // to the pool's size after (the BLAS kernels count on it).
  using GetThreads = int (*)();
  void* lib = dlopen(Blas::get()->library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  const auto get = reinterpret_cast<GetThreads>(dlsym(lib, "openblas_get_num_threads"));
  if (get != nullptr) {
    EXPECT_EQ(get(), ThreadPool::shared().size());
  }
  dlclose(lib);
}

// K = 3104 does not fit a panel of 64 columns (the narrowest): K in two
// pieces, the second adding to the first's result; each thread's 75 columns
// in two panels (48 and 27).
TEST(QGemm, LongRowsTakeKInPieces) {
  std::mt19937_64 rng(22);
  QLinears q;
  q.add(DType::Q4_1, "a", q.g.input("x", {"s", 3104}), 3104, 150, rng);
  CpuProgram program = q.program();
  q.check({&program}, 64, rng, "K = 3104");
}

// The builds a host without AVX-512 (-mno-avx512f: the AVX2 decoder) or
// without AVX2 (the portable one) compiles.
TEST(QGemm, OtherDecoderBuildsMatchInterpreter) {
  std::mt19937_64 rng(23);
  QLinears q;
  q.add(DType::Q4_1, "a", q.g.input("x", {"s", 96}), 96, 40, rng);
  q.add(DType::Q8_0, "b", q.g.input("wide", {"s", 130}).slice(1, 1, 129), 128, 33, rng);
  CpuProgram portable = q.program(0, "-DLK_QMM_PORTABLE"), avx2 = q.program(0, "-mno-avx512f");
  ASSERT_EQ(qgemm_kernels(portable), 2);
  q.check({&portable, &avx2}, 70, rng, "portable, avx2");
}

}  // namespace
}  // namespace luminal::cpu
