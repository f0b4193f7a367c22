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

#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/reference/interpreter.hpp"
#include "qgemm_test_util.hpp"

namespace luminal::cpu {
namespace {

using testing::QLinears;

int qgemm_kernels(const CpuProgram& program) {
  return testing::kernels_calling(program, "lk::qgemm<");
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
