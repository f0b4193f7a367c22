// The kernel prelude's inline f32 math (lk::exp2f / log2f / sinf), compiled
// through the JIT with the kernels' own flags, against double-precision libm
// (the reference interpreter's semantics: the exact value rounded once).

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/backends/cpu/jit.hpp"

namespace luminal::cpu {
namespace {

using testing::TempDir;
using VecFn = void (*)(const float*, float*, int64_t);

// One plain loop per function: the shape of a generated element loop, so the
// vectorisation check below sees what kernels get.
const char* const kProbe = R"(
extern "C" void m_exp2(const float* x, float* y, int64_t n) {
  for (int64_t _i = 0; _i < n; ++_i) y[_i] = lk::exp2f(x[_i]);  // one line: the report names it
}
extern "C" void m_log2(const float* x, float* y, int64_t n) {
  for (int64_t _i = 0; _i < n; ++_i) y[_i] = lk::log2f(x[_i]);  // one line: the report names it
}
extern "C" void m_sin(const float* x, float* y, int64_t n) {
  for (int64_t _i = 0; _i < n; ++_i) y[_i] = lk::sinf(x[_i]);  // one line: the report names it
}
)";

class KernelMath : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    JitOptions o;
    o.cache_dir = dir_->path();
    o.use_cache = false;
    o.extra_flags = {"-fopt-info-vec-optimized"};
    JitCompiler jit(o);
    lib_ =
        jit.build(kernel_prelude(), {{"math_probe", kProbe, {"m_exp2", "m_log2", "m_sin"}, {}}})[0];
    report_ = jit.stats().compiler_output;
  }
  static void TearDownTestSuite() {
    lib_.reset();  // (unloaded before its directory goes)
    dir_.reset();
  }
  static VecFn fn(const char* name) { return reinterpret_cast<VecFn>(lib_->symbol(name)); }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::shared_ptr<SharedLibrary> lib_;
  static inline std::string report_;  // the compiler's vectorisation report
};

// |got - want| in units of the f32 ulp at `want` (subnormal spacing below
// 2^-126). Non-finite or out-of-range results must match exactly: +-inf where
// the exact value rounds to an infinity, NaN for NaN.
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  const auto rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isnan(got) || std::isinf(got))
    return got == rounded ? 0.0 : INFINITY;
  int ex = 0;
  std::frexp(std::fabs(want), &ex);  // |want| in [2^(ex-1), 2^ex)
  const double ulp = std::ldexp(1.0, std::max(ex - 1, -126) - 23);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Worst {
  double ulp = 0.0;
  float at = 0.0f;
};

// Every 257th bit pattern (both signs, every exponent, 16.7M values) plus the
// edge cases, through the vectorised loop.
std::vector<float> sample_floats(const std::vector<float>& edges) {
  std::vector<float> v;
  v.reserve((uint64_t{1} << 32) / 257 + edges.size() + 1);
  for (uint64_t b = 0; b <= 0xffffffffull; b += 257) v.push_back(std::bit_cast<float>(uint32_t(b)));
  v.insert(v.end(), edges.begin(), edges.end());
  return v;
}

// Every f32 edge: the neighbours of each value in `centres` (4 on each side).
std::vector<float> around(std::initializer_list<float> centres) {
  std::vector<float> v;
  for (float c : centres) {
    float lo = c, hi = c;
    v.push_back(c);
    for (int i = 0; i < 4; ++i) {
      lo = std::nextafter(lo, -INFINITY);
      hi = std::nextafter(hi, INFINITY);
      v.push_back(lo);
      v.push_back(hi);
    }
  }
  return v;
}

template <typename Ref>
Worst measure(VecFn f, const std::vector<float>& x, Ref ref) {
  std::vector<float> y(x.size());
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  Worst w;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = ulp_error(y[i], ref(static_cast<double>(x[i])));
    if (!(e <= w.ulp)) w = {e, x[i]};
  }
  return w;
}

const float kMinSub = std::bit_cast<float>(uint32_t{1});
const float kMinNormal = std::bit_cast<float>(uint32_t{0x00800000});
const float kMax = std::bit_cast<float>(uint32_t{0x7f7fffff});

TEST_F(KernelMath, Exp2WithinOneAndAHalfUlp) {
  const std::vector<float> x = sample_floats(around(
      {0.0f,    -0.0f,   1.0f,   -1.0f,   0.5f,    -0.5f, 127.0f, 128.0f,   -126.0f,   -149.0f,
       -150.0f, -151.0f, 1e-30f, -1e-30f, kMinSub, kMax,  -kMax,  INFINITY, -INFINITY, NAN}));
  const Worst w = measure(fn("m_exp2"), x, [](double v) { return std::exp2(v); });
  EXPECT_LE(w.ulp, 1.5) << "at " << w.at;
  // Exact where the result is a power of two (integers: p(0) = 1), and the range ends.
  float y[6];
  const float xs[6] = {3.0f, -149.0f, -150.0f, 128.0f, -INFINITY, INFINITY};
  fn("m_exp2")(xs, y, 6);
  EXPECT_EQ(y[0], 8.0f);
  EXPECT_EQ(y[1], kMinSub);
  EXPECT_EQ(y[2], 0.0f);  // 2^-150 is the tie between 0 and 2^-149: to even
  EXPECT_EQ(y[3], INFINITY);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[5], INFINITY);
}

TEST_F(KernelMath, Log2WithinOneUlp) {
  const std::vector<float> x =
      sample_floats(around({0.0f, -0.0f, 1.0f, 2.0f, 0.5f, 0.70710677f, 1.4142135f, kMinSub,
                            kMinNormal, 1e-40f, kMax, -1.0f, -kMinSub, INFINITY, -INFINITY, NAN}));
  const Worst w = measure(fn("m_log2"), x, [](double v) { return std::log2(v); });
  EXPECT_LE(w.ulp, 1.0) << "at " << w.at;
  float y[6];
  const float xs[6] = {0.0f, -0.0f, -2.0f, 1024.0f, kMinSub, INFINITY};
  fn("m_log2")(xs, y, 6);
  EXPECT_EQ(y[0], -INFINITY);
  EXPECT_EQ(y[1], -INFINITY);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 10.0f);
  EXPECT_EQ(y[4], -149.0f);
  EXPECT_EQ(y[5], INFINITY);
}

TEST_F(KernelMath, SinWithinOneUlpIncludingHugeArguments) {
  // Multiples of pi/2 (the hardest reductions), large integers, and the f32
  // values closest to multiples of pi among a seeded sample of huge arguments.
  std::vector<float> edges =
      around({0.0f, -0.0f, kMinSub, 1.5707964f, 3.1415927f, 4.712389f, 6.2831855f, 1e4f, 131072.0f,
              1e6f, 16777216.0f, 1e10f, 1e20f, 1e30f, kMax, -kMax, INFINITY, -INFINITY, NAN});
  for (int k = 1; k < 4096; ++k) {
    for (double scale : {1.0, 1e3, 1e6, 1e9}) {
      const auto c = static_cast<float>(k * scale * 1.5707963267948966);
      edges.push_back(c);
      edges.push_back(std::nextafter(c, INFINITY));
      edges.push_back(std::nextafter(c, -INFINITY));
    }
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> small(-200.0f, 200.0f);
  for (int i = 0; i < 200000; ++i) edges.push_back(small(rng));
  const std::vector<float> x = sample_floats(edges);
  const Worst w = measure(fn("m_sin"), x, [](double v) { return std::sin(v); });
  EXPECT_LE(w.ulp, 1.0) << "at " << w.at;
  // 22 is within 0.009 of 7 pi: the reduction must be exact there.
  float y[3];
  const float xs[3] = {-0.0f, 22.0f, 3.4028235e38f};
  fn("m_sin")(xs, y, 3);
  EXPECT_TRUE(std::signbit(y[0]) && y[0] == 0.0f);
  EXPECT_EQ(y[1], static_cast<float>(std::sin(22.0)));
  EXPECT_EQ(y[2], static_cast<float>(std::sin(3.4028234663852886e38)));
}

// Each probe loop (the shape of a generated element loop) is vectorised with
// the kernels' flags: the point of inline math over libm calls. In the JIT's
// unit (the file the report names) kProbe follows the "// ---- kernel
// math_probe" line, so the report's line numbers locate the probe's lines.
TEST_F(KernelMath, ElementLoopsAreVectorised) {
  std::string unit;  // (the first .cpp the report names; others are headers)
  std::istringstream lines(report_);
  for (std::string r; unit.empty() && std::getline(lines, r);) {
    const std::string file = r.substr(0, r.find(':'));
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".cpp") == 0) unit = file;
  }
  std::ifstream in(unit);
  int64_t first = 0;  // kProbe's line 1
  std::string line_text;
  for (int64_t line = 1; std::getline(in, line_text); ++line)
    if (line_text == "// ---- kernel math_probe") first = line + 1;
  ASSERT_GT(first, 0) << "no kernel line in " << unit << "\n" << report_;
  std::istringstream probe(kProbe);
  std::string text;
  for (int64_t line = first; std::getline(probe, text); ++line) {
    if (text.find("lk::") == std::string::npos) continue;
    const std::string at = ":" + std::to_string(line) + ":";
    bool vectorised = false;
    std::istringstream report(report_);
    for (std::string r; std::getline(report, r);)
      vectorised = vectorised || (r.find(at) != std::string::npos &&
                                  r.find("loop vectorized") != std::string::npos);
    EXPECT_TRUE(vectorised) << text << "\n" << report_;
  }
}

}  // namespace
}  // namespace luminal::cpu
