// The CpuQMatMulInt16 kernel (lk::qgemm_i16_x8: x rounded to int16 per block
// of 32, integer dot products with the weights' integers read from an
// interleaved copy; with VNNI from 8 rows on a GEMM through weight panels,
// fewer rows, and every row count on AVX2 hosts, a GEMV),
// against the reference interpreter with a tolerance from the rounding's
// error bound: row counts on both sides of the 8-row switch with one compiled
// kernel (a dynamic row dim), column counts that are not a multiple of the
// 32-column tile, K = 576, K = 64 through a slice (rows further apart than K,
// an offset) and a K in two panel pieces, one and two threads, the VNNI and
// the portable builds, and blocks of x that are all zero, hold one or two
// huge outliers (kept exact), NaN or Inf; the GEMV's rows against the GEMM's
// bit for bit. The same for f32 weights (CpuMatMulInt16: the weight rounded
// to 14 bits per block as well, x to 14 bits), and NaN / Inf in those
// weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "io/io_test_util.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/io/mapped_file.hpp"
#include "qgemm_test_util.hpp"

namespace luminal::cpu {
namespace {

using testing::QLinears;

// One quantized Linear product per output: its x input (columns [offset,
// offset + k) of input `input`) and weight, to bound the int16 path's error.
struct Product {
  std::string output, input, weight;
  int64_t offset, k;
};

// Inputs with special rows in input "x" (K = 576, 18 blocks): row 0 an
// all-zero block, row 1 a block of one huge outlier among tiny values, row 2
// a NaN, row 3 a +Inf, row 4 a -Inf and a +Inf, rows 5 and 6 a block with two
// outliers (the second a tie in magnitude), where the rows exist.
void add_special_rows(std::vector<std::pair<std::string, TensorData>>& inputs) {
  for (auto& [name, t] : inputs) {
    if (name != "x") continue;
    const int64_t k = t.shape()[1], rows = t.shape()[0];
    if (rows > 0)
      for (int64_t e = 32; e < 64; ++e) t.set(e, 0.0);
    if (rows > 1) {
      for (int64_t e = 0; e < 32; ++e) t.set(k + 64 + e, 1e-3 * (e % 7 - 3));
      t.set(k + 64 + 5, 3e4);
    }
    if (rows > 2) t.set(2 * k + 100, NAN);
    if (rows > 3) t.set(3 * k + 7, INFINITY);
    if (rows > 4) t.set(4 * k + 300, -INFINITY), t.set(4 * k + 301, INFINITY);
    if (rows > 5) t.set(5 * k + 64 + 3, 2e4), t.set(5 * k + 64 + 20, -7e3);
    if (rows > 6) t.set(6 * k, 5e3), t.set(6 * k + 31, -5e3);  // (a tie: both outliers)
  }
}

const TensorData& named(const std::vector<std::pair<std::string, TensorData>>& inputs,
                        const std::string& name) {
  for (const auto& [n, t] : inputs)
    if (n == name) return t;
  throw Error("no input " + name);
}

// The magnitude that sets a block's rounding step under the documented
// outlier rule: with |x| sorted, m1 >= m2 >= m3, m3 if m2 > 4 m3 (two outliers
// kept exact), else m2 if m1 > 4 m2 (one), else m1.
double rounded_max(const TensorData& x, int64_t at) {
  std::vector<double> m;
  for (int64_t t = 0; t < 32; ++t) m.push_back(std::fabs(x.get(at + t)));
  std::sort(m.begin(), m.end(), std::greater<>());
  return m[1] > 4 * m[2] ? m[2] : m[0] > 4 * m[1] ? m[1] : m[0];
}

// The kernel op of products with `d` weights, and the half-steps of its
// rounding: x to rounded_max / x_max steps (error at most rounded_max / (2
// x_max)); an f32 weight to max|w block| / 8191 steps, a GGUF weight exact.
struct Rounding {
  const char* op;
  double x_max, w_max;  // (w_max 0: exact weights)
};
Rounding rounding(DType d) {
  if (d == DType::F32) return {"CpuMatMulInt16", 8191, 8191};
  // (Q4_1's x to 32639: two signed bytes per element for the VNNI GEMV)
  return {"CpuQMatMulInt16", d == DType::Q4_1 ? 32639.0 : 32767.0, 0};
}

// Element (i, j) of `got` against the interpreter's `want`: non-finite where
// it is (NaN for NaN, the same infinity), else within the rounding's bound,
// summed over blocks,
//   ex sum |w| + ew sum |x| + 32 ex ew,  ex = rounded_max(x block) / (2 x_max),
//                                        ew = max |w block| / (2 w_max) (or 0)
// (x rounded to rounded_max / x_max steps, outliers exact; the weights to
// their blocks' max / w_max steps) plus f32 rounding (f32_rel of sum |x w|).
// Returns the largest |got - want| / bound seen.
double expect_within_bound(const TensorData& got, const TensorData& want, const TensorData& x,
                           const TensorData& w, int64_t offset, int64_t k, const std::string& what,
                           const Rounding& rd, double f32_rel = 1e-5, bool expect = true) {
  const int64_t rows = want.shape()[0], n = want.shape()[1], xcols = x.shape()[1];
  double worst = 0;
  int reported = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double g = got.get(i * n + j), r = want.get(i * n + j);
      bool ok;
      if (!std::isfinite(r)) {
        ok = std::isnan(r) ? std::isnan(g) : g == r;
      } else {
        double bound = 1e-6, dot = 0;
        for (int64_t b = 0; b < k / 32; ++b) {
          double wsum = 0, xsum = 0, wmax = 0;
          for (int64_t t = b * 32; t < b * 32 + 32; ++t) {
            const double xv = x.get(i * xcols + offset + t), wv = w.get(j * k + t);
            wsum += std::fabs(wv);
            xsum += std::fabs(xv);
            wmax = std::max(wmax, std::fabs(wv));
            dot += std::fabs(xv * wv);
          }
          const double ex = rounded_max(x, i * xcols + offset + b * 32) / (2 * rd.x_max);
          const double ew = rd.w_max > 0 ? wmax / (2 * rd.w_max) : 0.0;
          bound += (ex * wsum + ew * xsum + 32 * ex * ew) * 1.0001;
        }
        bound += f32_rel * dot;
        ok = std::fabs(g - r) <= bound;
        worst = std::max(worst, std::fabs(g - r) / bound);
      }
      if (!ok && expect && reported++ < 5)
        ADD_FAILURE() << what << " element (" << i << ", " << j << "): got " << g << ", want " << r;
    }
  return worst;
}

// Runs the programs and the interpreter on the same inputs (`rows` rows, the
// special ones in "x" where they exist: every row count takes the int16
// product) and checks every product against its error bound.
void check(QLinears& q, const std::vector<Product>& products,
           const std::vector<CpuProgram*>& programs, int64_t rows, std::mt19937_64& rng,
           const std::string& what, const Rounding& rd) {
  std::vector<std::pair<std::string, TensorData>> inputs = q.inputs(rows, rng);
  add_special_rows(inputs);
  Interpreter ref(q.g);
  for (const auto& [name, t] : inputs) ref.set_input(name, t);
  ref.run();
  for (size_t p = 0; p < programs.size(); ++p) {
    for (const auto& [name, t] : inputs) programs[p]->set_input(name, t);
    programs[p]->run();
    for (const Product& pr : products) {
      const double worst =
          expect_within_bound(programs[p]->output(pr.output), ref.output(pr.output),
                              named(inputs, pr.input), named(inputs, pr.weight), pr.offset, pr.k,
                              what + " program " + std::to_string(p) + " " + pr.output, rd);
      // (the bound is not loose: the rounding uses a good part of it)
      EXPECT_GT(worst, 0.005) << what << " " << pr.output;
    }
  }
}

int i16_kernels(const CpuProgram& program) {
  return testing::kernels_calling(program, "lk::qgemm_i16_packed<") +
         testing::kernels_calling(program, "lk::qgemm_i16_x8<");
}

// K = 576 (150 columns: per thread a partial 32-column tile) and K = 64 read
// through a slice (300 columns); 16, 17, 45, 130 and 8 rows take the int16
// GEMM, 5, 7 and 1 the int16 GEMV, all through one program per thread count
// and build.
TEST(QGemmInt16, ManyRowsWithinRoundingBound) {
  std::mt19937_64 rng(61);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::F32}) {
    QLinears q;
    q.op = rounding(d).op;
    q.add(d, "a", q.g.input("x", {"s", 576}), 576, 150, rng);
    q.add(d, "b", q.g.input("wide", {"s", 100}).slice(1, 8, 72), 64, 300, rng);
    const std::vector<Product> products = {{"y_a", "x", "a.weight", 0, 576},
                                           {"y_b", "wide", "b.weight", 8, 64}};
    CpuProgram one = q.program(1), two = q.program(2);
    CpuProgram portable = q.program(2, "-DLK_QMM_PORTABLE");
    ASSERT_EQ(i16_kernels(one), 2);
    static_assert(kQGemmInt16MinRows == 8, "the row counts below straddle the switch");
    for (int64_t s : {16, 17, 45, 130, 8, 5, 7, 1})
      check(q, products, {&one, &two, &portable}, s, rng, to_string(d) + " s=" + std::to_string(s),
            rounding(d));
  }
}

// Blocks with one or two outliers (one huge, two huge, a tie, one
// 4.5x and one 3x the next) among small values, the rest of x zero: the
// outliers exact and the rest rounded to steps of its own max, so the error
// is within that finer bound plus f32 rounding of 1e-6 of sum |x w| (1e-5
// for Q4_1, whose min's split, m sum x + sum d q x, rounds terms much larger
// than x w). Rounded without outliers (-DLK_QI16_OUTLIER_RATIO=INFINITY) the
// error is more than 10x that bound (3x for f32 weights, rounded too).
TEST(QGemmInt16, OutliersAreKeptExact) {
  std::mt19937_64 rng(64);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::F32}) {
    QLinears q;
    q.op = rounding(d).op;
    q.add(d, "a", q.g.input("x", {"s", 576}), 576, 70, rng);
    CpuProgram two = q.program(2), portable = q.program(2, "-DLK_QMM_PORTABLE");
    CpuProgram plain = q.program(2, "-DLK_QI16_OUTLIER_RATIO=INFINITY");
    std::vector<std::pair<std::string, TensorData>> inputs = q.inputs(16, rng);
    for (auto& [name, t] : inputs) {
      if (name != "x") continue;
      for (int64_t e = 0; e < 16 * 576; ++e) t.set(e, 0.0);
      for (int64_t r = 0; r < 16; ++r) {
        const int64_t at = r * 576 + (r % 18) * 32, second = r * 576 + (r + 7) % 18 * 32;
        for (int64_t e = 0; e < 32; ++e) t.set(at + e, 1e-3 * ((e * 7 + r) % 11 - 5));
        switch (r % 5) {
          case 0:
            t.set(at + 5, 3e4);
            break;
          case 1:
            t.set(at + 3, 2e4), t.set(at + 20, -7e3);
            break;
          case 2:
            t.set(at, 5e3), t.set(at + 31, -5e3);
            break;
          case 3:
            t.set(at + 17, 4.5e-3 * 5);
            break;  // (4.5x the next: one outlier)
          default:
            t.set(at + 9, 1.5e-2), t.set(at + 10, -5e3);
            break;  // (3x: no outlier at 2)
        }
        for (int64_t e = 0; e < 32; ++e) t.set(second + e, 0.25 * ((e * 5 + r) % 9 - 4));
        t.set(second + 30, -4e2);
      }
    }
    Interpreter ref(q.g);
    for (const auto& [name, t] : inputs) ref.set_input(name, t);
    ref.run();
    const double f32_rel = d == DType::Q4_1 ? 1e-5 : 1e-6;
    for (CpuProgram* p : {&two, &portable, &plain}) {
      for (const auto& [name, t] : inputs) p->set_input(name, t);
      p->run();
      const double worst = expect_within_bound(
          p->output("y_a"), ref.output("y_a"), named(inputs, "x"), named(inputs, "a.weight"), 0,
          576, to_string(d) + " outliers", rounding(d), f32_rel, p != &plain);
      // (without outliers, x rounded to steps of amax: far outside the bound;
      // less far for f32 weights, whose own rounding widens it)
      if (p == &plain) {
        EXPECT_GT(worst, d == DType::F32 ? 3 : 10) << to_string(d);
      }
    }
  }
}

// K = 10944 (342 blocks) does not fit the panel with two 16-column groups:
// K in two pieces, the second adding to the first's result (the GEMV takes
// the same pieces).
TEST(QGemmInt16, LongRowsTakeKInPieces) {
  std::mt19937_64 rng(62);
  QLinears q;
  q.op = "CpuQMatMulInt16";
  q.add(DType::Q4_1, "a", q.g.input("big", {"s", 10944}), 10944, 40, rng);
  CpuProgram program = q.program(), portable = q.program(0, "-DLK_QMM_PORTABLE");
  for (int64_t rows : {20, 3, 1})  // (the GEMM, then the GEMV)
    check(q, {{"y_a", "big", "a.weight", 0, 10944}}, {&program, &portable}, rows, rng,
          "K = 10944, " + std::to_string(rows) + " rows", rounding(DType::Q4_1));
}

// The vector (VNNI, or AVX2 over the weights' interleaved copies) and
// portable builds do the same arithmetic: the same rounding of x, exact
// integer block sums, the same f32 operations per block in the same order
// (Q4_1's per-block x sums too, the outliers' updates): bit-identical
// results, also through column counts that leave a partial group of eight
// (13: one group; 200, on two threads: slots of 96 and 104; f32 weights: two
// column panels of 96 and a tail), every row count of the GEMV's tiles, and
// rows holding NaN / Inf, zero blocks and outliers. A kernel hook makes the
// vector build fail to compile if it fell back to the portable code.
TEST(QGemmInt16, VectorAndPortableBuildsAgree) {
  if (!host_has_int16_products()) GTEST_SKIP() << "no AVX2 (or AVX-512 VNNI) on this host";
  std::mt19937_64 rng(63);
  // (F32 too: AVX2 hosts round its blocks into the interleaved form)
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::F32})
    for (int64_t n : {200, 13}) {
      QLinears q;
      q.op = rounding(d).op;
      q.add(d, "a", q.g.input("x", {"s", 576}), 576, n, rng);
      CpuOptions options;  // (two threads; a kernel that took no vector path fails to compile)
      options.regions = q.regions();
      options.num_threads = 2;
      options.kernel_hook = [](CpuKernel& k) {
        k.code +=
            "\n#if !defined(LK_QMM_VNNI) && !defined(LK_QI16_AVX2)\n#error the vector build took "
            "the portable path\n#endif\n";
      };
      CpuProgram vector(q.g, options), portable = q.program(0, "-DLK_QMM_PORTABLE");
      ASSERT_EQ(i16_kernels(vector), 1);
      for (int64_t rows : {45, 7, 4, 3, 2, 1}) {
        auto inputs = q.inputs(rows, rng);
        add_special_rows(inputs);
        // (outliers too: one, two and a tie, in every third row)
        for (auto& [name, t] : inputs)
          for (int64_t r = 0; name == "x" && r < rows; r += 3) {
            const int64_t at = r * 576 + r % 18 * 32;
            t.set(at + r % 32, 50.0 + r);
            if (r % 2 == 1) t.set(at + (r + 9) % 32, -(50.0 + r) * (r % 4 == 1 ? 1 : 0.25));
          }
        for (const auto& [name, t] : inputs) vector.set_input(name, t), portable.set_input(name, t);
        vector.run();
        portable.run();
        testing::expect_close(
            vector.output("y_a"), portable.output("y_a"), 0, 0,
            to_string(d) + " N = " + std::to_string(n) + ", " + std::to_string(rows) + " rows");
      }
    }
}

// Hosts without AVX-512 (this project's CI may be one) still test the VNNI
// paths: compiled with avx512_emulation.hpp, whose exact plain C++ functions
// stand in for the AVX-512 builtins, every product (Q4_1 through its
// 16-column copy: the GEMV's vpdpbusd tiles and the GEMM's panels; Q8_0, Q4_0 and
// f32 weights through theirs) gives the portable build's results bit for bit.
// A kernel hook makes each kernel fail to compile unless it took the VNNI
// path. (On hosts with VNNI, VectorAndPortableBuildsAgree runs them for real.)
TEST(QGemmInt16, VnniPathsUnderEmulationMatchThePortableBuild) {
  if (host_has_vnni_int16()) GTEST_SKIP() << "the host runs the VNNI paths itself";
  if (!host_has_int16_products()) GTEST_SKIP() << "the emulation needs AVX2, FMA and F16C";
  const std::string header =
      (std::filesystem::path(__FILE__).parent_path() / "avx512_emulation.hpp").string();
  std::mt19937_64 rng(68);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::F32})
    for (int64_t n : {200, 13}) {
      if (d == DType::F32 && n == 13) continue;  // (the group tail: the interleaved copies')
      QLinears q;
      q.op = rounding(d).op;
      q.add(d, "a", q.g.input("x", {"s", 576}), 576, n, rng);
      CpuOptions options;
      options.regions = q.regions();
      options.num_threads = 2;
      options.jit.extra_flags = {"-D__AVX512F__",
                                 "-D__AVX512BW__",
                                 "-D__AVX512VNNI__",
                                 "-D__AVX512VL__",
                                 "-DLK_QMM_EMULATED_AVX512",
                                 "-Wno-psabi",
                                 "-O1",  // (compiles in half the time; exact all the same)
                                 "-include",
                                 header};
      options.kernel_hook = [](CpuKernel& k) {
        k.code +=
            "\n#if !defined(LK_QMM_VNNI)\n#error the emulated build took no VNNI path\n#endif\n";
      };
      CpuProgram emulated(q.g, options), portable = q.program(0, "-DLK_QMM_PORTABLE");
      for (int64_t rows : {45, 9, 7, 4, 3, 1}) {
        auto inputs = q.inputs(rows, rng);
        add_special_rows(inputs);
        for (auto& [name, t] : inputs)  // (outliers in every third row)
          for (int64_t r = 0; name == "x" && r < rows; r += 3) {
            const int64_t at = r * 576 + r % 18 * 32;
            t.set(at + r % 32, 50.0 + r);
            if (r % 2 == 1) t.set(at + (r + 9) % 32, -(50.0 + r) * (r % 4 == 1 ? 1 : 0.25));
          }
        for (const auto& [name, t] : inputs)
          emulated.set_input(name, t), portable.set_input(name, t);
        emulated.run();
        portable.run();
        testing::expect_close(
            emulated.output("y_a"), portable.output("y_a"), 0, 0,
            to_string(d) + " N = " + std::to_string(n) + ", " + std::to_string(rows) + " rows");
      }
    }
}

// Rows [r0, r1) of a 2-D tensor.
TensorData rows_of(const TensorData& t, int64_t r0, int64_t r1) {
  const int64_t cols = t.shape()[1];
  TensorData out(t.dtype(), {r1 - r0, cols});
  for (int64_t e = 0; e < (r1 - r0) * cols; ++e) out.set(e, t.get(r0 * cols + e));
  return out;
}

// The GEMV (fewer than kQGemmInt16MinRows rows: over a GGUF weight's
// interleaved copy, lk::qx8_gemv eight columns at a time, or for Q4_1 with
// VNNI lk::qb16_gemv, 16 columns by vpdpbusd with x as two signed bytes per
// element) does the GEMM's
// arithmetic in another way: every row alone, and three rows together, give
// those rows of a many-row product (through weight panels) bit for bit, in the
// VNNI and the portable builds, special rows included (an all-zero block,
// one and two outliers, NaN, Inf), through a column tail (150 columns: slots
// of 64 and 86) and a slice (K = 64); and within the rounding's bound of the
// interpreter.
TEST(QGemmInt16, GemvRowsMatchTheGemmBitForBit) {
  std::mt19937_64 rng(66);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0}) {
    QLinears q;
    q.op = "CpuQMatMulInt16";
    q.add(d, "a", q.g.input("x", {"s", 576}), 576, 150, rng);
    q.add(d, "b", q.g.input("wide", {"s", 100}).slice(1, 8, 72), 64, 300, rng);
    CpuProgram two = q.program(2), portable = q.program(2, "-DLK_QMM_PORTABLE");
    std::vector<std::pair<std::string, TensorData>> inputs = q.inputs(9, rng);
    add_special_rows(inputs);
    static_assert(kQGemmInt16MinRows == 8, "9 rows take the GEMM, 1 and 3 the GEMV");
    for (const auto& [name, t] : inputs) two.set_input(name, t);
    two.run();
    const TensorData gemm_a = two.output("y_a"), gemm_b = two.output("y_b");
    Interpreter ref(q.g);
    for (const auto& [name, t] : inputs) ref.set_input(name, t);
    ref.run();
    std::vector<std::pair<int64_t, int64_t>> pieces = {{2, 5}};
    for (int64_t r = 0; r < 9; ++r) pieces.emplace_back(r, r + 1);
    for (const auto& [r0, r1] : pieces) {
      const std::string what =
          to_string(d) + " rows " + std::to_string(r0) + ".." + std::to_string(r1);
      std::vector<std::pair<std::string, TensorData>> part;
      for (const auto& [name, t] : inputs)
        part.emplace_back(name, name == "x" || name == "wide" ? rows_of(t, r0, r1) : t);
      for (CpuProgram* p : {&two, &portable}) {
        for (const auto& [name, t] : part) p->set_input(name, t);
        p->run();
        const std::string who = what + (p == &two ? " vnni" : " portable");
        testing::expect_close(p->output("y_a"), rows_of(gemm_a, r0, r1), 0, 0, who + " y_a");
        testing::expect_close(p->output("y_b"), rows_of(gemm_b, r0, r1), 0, 0, who + " y_b");
      }
      expect_within_bound(two.output("y_a"), rows_of(ref.output("y_a"), r0, r1), named(part, "x"),
                          named(part, "a.weight"), 0, 576, what + " y_a", rounding(d));
      expect_within_bound(two.output("y_b"), rows_of(ref.output("y_b"), r0, r1),
                          named(part, "wide"), named(part, "b.weight"), 8, 64, what + " y_b",
                          rounding(d));
    }
  }
}

// The quantized products read the weight in place: the int16 GEMV (its
// outliers' integers too: an outlier at a block's last elements, Q8_0's bytes
// 32-33 and Q4_0's 16-17, whose aligned 32-bit word would reach past the
// block), the int16 GEMM's panel packing and the f32 GEMV / GEMM must not read
// past the weight's last block. Each weight here ends right before an
// inaccessible page; the results stay within the rounding's bound.
TEST(QGemmInt16, ProductsNeverReadPastTheWeight) {
  std::mt19937_64 rng(68);
  for (const char* op : {"CpuQMatMulInt16", "CpuQMatMul"}) {
    const bool int16 = std::string(op) == "CpuQMatMulInt16";
    for (DType d : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
      QLinears q;
      q.op = op;
      q.add(d, "a", q.g.input("x", {"s", 64}), 64, 9, rng);
      CpuProgram program = q.program(1);
      for (int64_t rows : {1, 9, 20}) {
        const std::string what =
            std::string(op) + " " + to_string(d) + " " + std::to_string(rows) + " rows";
        std::vector<std::pair<std::string, TensorData>> inputs = q.inputs(rows, rng);
        for (auto& [name, t] : inputs) {
          if (name == "x") {
            for (int64_t e = 0; e < rows * 64; ++e) t.set(e, 0.01 * (e % 7 - 3));
            for (int64_t r = 0; r < rows; ++r)  // (outliers at both blocks' last element)
              t.set(r * 64 + 31, -2e3), t.set(r * 64 + 63, 1e3);
          }
          if (name == "a.weight") testing::bind_guarded(program, name, t);
        }
        Interpreter ref(q.g);
        for (const auto& [name, t] : inputs) {
          ref.set_input(name, t);
          if (name != "a.weight") program.set_input(name, t);
        }
        ref.run();
        program.run();
        // (the f32 kernels: f32 summation only)
        const Rounding rd = int16 ? rounding(d) : Rounding{op, 1e12, 0};
        expect_within_bound(program.output("y_a"), ref.output("y_a"), named(inputs, "x"),
                            named(inputs, "a.weight"), 0, 64, what, rd);
      }
    }
  }
}

// f32 weights holding NaN or Inf: rounding cannot carry them, so the whole
// column of such a block comes out NaN (documented in library_kernels.hpp),
// at any row count (f32 weights take the int16 product from one row on), VNNI
// and portable builds alike; the other columns stay close.
TEST(QGemmInt16, NonFiniteF32WeightsGiveNaNColumns) {
  std::mt19937_64 rng(65);
  QLinears q;
  q.op = "CpuMatMulInt16";
  q.add(DType::F32, "a", q.g.input("x", {"s", 96}), 96, 40, rng);
  CpuProgram two = q.program(2), portable = q.program(2, "-DLK_QMM_PORTABLE");
  for (int64_t rows : {12, 3}) {
    auto inputs = q.inputs(rows, rng);
    for (auto& [name, t] : inputs)
      if (name == "a.weight") t.set(5 * 96 + 40, NAN), t.set(17 * 96 + 70, INFINITY);
    Interpreter ref(q.g);
    for (const auto& [name, t] : inputs) ref.set_input(name, t);
    ref.run();
    const TensorData& want = ref.output("y_a");
    for (CpuProgram* p : {&two, &portable}) {
      for (const auto& [name, t] : inputs) p->set_input(name, t);
      p->run();
      const TensorData& got = p->output("y_a");
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < 40; ++j) {
          const double g = got.get(i * 40 + j), r = want.get(i * 40 + j);
          if (j == 5 || j == 17) {
            EXPECT_TRUE(std::isnan(g)) << "row " << i << " column " << j << ": " << g;
          } else {
            EXPECT_TRUE(std::isfinite(g)) << "row " << i << " column " << j << ": " << g;
            EXPECT_NEAR(g, r, 1e-3 * (1 + std::fabs(r))) << "row " << i << " column " << j;
          }
        }
    }
  }
}

// Packed weights (f32: VNNI units; Q4_1: the interleaved copy) are packed
// once and kept by the program: a weight bound again (other values, same
// shape) is packed again, one not bound again keeps its pack, and a weight
// that is not a persistent input (a plain input, bound anew every run) is
// packed on every run. Each run is checked against the interpreter on the
// values the program holds, so a stale pack would show as errors far beyond
// the bound.
TEST(QGemmInt16, PackedWeightsFollowTheirInputs) {
  for (DType d : {DType::F32, DType::Q4_1}) {
    std::mt19937_64 rng(66);
    QLinears q;
    q.op = rounding(d).op;
    q.add(d, "a", q.g.input("x", {"s", 128}), 128, 40, rng);
    auto random_weight = [&] {
      return d == DType::F32 ? testing::random_tensor(DType::F32, {40, 128}, rng, -0.05, 0.05)
                             : testing::random_blocks(d, 40, 128, rng);
    };
    Tensor w = q.g.input("plain.weight", {40, 128}, d);  // (not persistent)
    Tensor wf = d == DType::F32 ? w : w.cast(DType::F32);
    q.g.output("y_w", luminal::matmul(q.g.input("z", {"s", 128}), wf.transpose(0, 1)));
    CpuProgram program = q.program(2);
    ASSERT_EQ(i16_kernels(program), 2);
    std::optional<TensorData> bound;  // a.weight as last bound
    for (int round = 0; round < 3; ++round) {
      for (int64_t rows : {1, 9}) {
        std::vector<std::pair<std::string, TensorData>> inputs = q.inputs(rows, rng);
        inputs.emplace_back("plain.weight", random_weight());
        const bool rebind = !(round == 1 && rows == 9);
        for (auto& [name, t] : inputs)
          if (name == "a.weight") {
            if (rebind) {
              t = random_weight();  // (new values: every random tensor differs)
              bound = t;
            } else {
              t = *bound;
            }
          }
        Interpreter ref(q.g);
        for (const auto& [name, t] : inputs) ref.set_input(name, t);
        ref.run();
        for (const auto& [name, t] : inputs)
          if (name != "a.weight" || rebind) program.set_input(name, t);
        program.run();
        const std::string what =
            to_string(d) + " round " + std::to_string(round) + " rows " + std::to_string(rows);
        expect_within_bound(program.output("y_a"), ref.output("y_a"), named(inputs, "x"),
                            named(inputs, "a.weight"), 0, 128, what + " y_a", rounding(d));
        expect_within_bound(program.output("y_w"), ref.output("y_w"), named(inputs, "z"),
                            named(inputs, "plain.weight"), 0, 128, what + " y_w", rounding(d));
      }
    }
  }
}

// A Q4_1 weight bound from a read-only file mapping (as bind_weights does for
// GGUF files): once the interleaved copy is made, the program releases the
// mapping's pages (Stats::released_bytes: the weight's whole pages, once),
// and every later run is still right, including rows holding NaN / Inf,
// which read the GGUF blocks again (faulted back in from the file). A weight
// in ordinary memory is never released.
TEST(QGemmInt16, Q4_1WeightsFromAFileMappingReleaseTheirPagesOnceCopied) {
  std::mt19937_64 rng(67);
  QLinears q;
  q.op = "CpuQMatMulInt16";
  q.add(DType::Q4_1, "a", q.g.input("x", {"s", 576}), 576, 512, rng);
  const TensorData weight = named(q.weights, "a.weight");
  io_test::TempDir dir;
  {
    std::ofstream f(dir.file("w.bin"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(weight.data()),
            static_cast<std::streamsize>(weight.nbytes()));
  }
  auto mapping = std::make_shared<MappedFile>(dir.file("w.bin"));
  for (bool from_file : {true, false}) {
    CpuProgram program = q.program(2);
    ASSERT_EQ(i16_kernels(program), 1);
    program.set_input("a.weight",
                      from_file ? TensorData::borrow_file_mapping(DType::Q4_1, weight.shape(),
                                                                  mapping->bytes().data(), mapping)
                                : weight);
    for (int64_t rows : {5, 1, 9}) {
      auto inputs = q.inputs(rows, rng);
      add_special_rows(inputs);  // (rows 2, 3, 4: NaN and infinities)
      Interpreter ref(q.g);
      for (const auto& [name, t] : inputs) ref.set_input(name, t);
      ref.run();
      program.set_input("x", named(inputs, "x"));
      program.run();
      const std::string what =
          std::string(from_file ? "file" : "memory") + ", " + std::to_string(rows) + " rows";
      expect_within_bound(program.output("y_a"), ref.output("y_a"), named(inputs, "x"), weight, 0,
                          576, what, rounding(DType::Q4_1));
      if (from_file) {
        EXPECT_GE(program.stats().released_bytes, weight.nbytes() - 8192) << what;
        EXPECT_LE(program.stats().released_bytes, weight.nbytes()) << what;
      } else {
        EXPECT_EQ(program.stats().released_bytes, 0u) << what;
      }
    }
  }
}

}  // namespace
}  // namespace luminal::cpu
