#include "luminal/backends/cpu/jit.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"

namespace luminal::cpu {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

using IntFn = int (*)(int);

JitKernel add_kernel(const std::string& name, int k) {
  return {name,
          "extern \"C\" int " + name + "(int x) { return x + " + std::to_string(k) + "; }\n",
          {name},
          {}};
}

int call(const std::shared_ptr<SharedLibrary>& lib, const std::string& symbol, int x) {
  return reinterpret_cast<IntFn>(lib->symbol(symbol))(x);
}

TEST(CpuJit, ContentHashIsStableAndSensitive) {
  EXPECT_EQ(content_hash("abc"), content_hash("abc"));
  EXPECT_EQ(content_hash("abc").size(), 32u);
  EXPECT_NE(content_hash("abc"), content_hash("abd"));
  EXPECT_NE(content_hash(std::string("a\0", 2)), content_hash("a"));
  EXPECT_NE(content_hash(""), content_hash(std::string(1, '\0')));
}

TEST(CpuJit, CompilesLoadsAndCachesPerKernel) {
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.max_jobs = 2;
  const std::string prelude = "// test prelude\n";
  const std::vector<JitKernel> kernels{add_kernel("f1", 1), add_kernel("f2", 2),
                                       add_kernel("f3", 3)};
  {
    JitCompiler jit(o);
    auto libs = jit.build(prelude, kernels);
    ASSERT_EQ(libs.size(), 3u);
    EXPECT_EQ(call(libs[0], "f1", 10), 11);
    EXPECT_EQ(call(libs[1], "f2", 10), 12);
    EXPECT_EQ(call(libs[2], "f3", 10), 13);
    EXPECT_EQ(jit.stats().kernels_compiled, 3u);
    EXPECT_EQ(jit.stats().units_compiled, 2u);  // two compilers at once
    EXPECT_EQ(jit.stats().kernels_from_cache, 0u);
  }
  JitCompiler jit(o);
  auto libs = jit.build(prelude, kernels);
  EXPECT_EQ(jit.stats().kernels_from_cache, 3u);
  EXPECT_EQ(jit.stats().kernels_compiled, 0u);
  EXPECT_EQ(call(libs[2], "f3", 1), 4);
  // Known kernels come from the cache whatever unit they were built in; only the new one compiles.
  auto mixed = jit.build(prelude, {kernels[1], add_kernel("f4", 4)});
  EXPECT_EQ(jit.stats().kernels_from_cache, 4u);
  EXPECT_EQ(jit.stats().kernels_compiled, 1u);
  EXPECT_EQ(call(mixed[1], "f4", 1), 5);
  // The prelude and the flags are part of the key.
  jit.build("// another prelude\n", {kernels[0]});
  EXPECT_EQ(jit.stats().kernels_compiled, 2u);
  JitOptions o2 = o;
  o2.extra_flags = {"-DLUMINAL_TEST_FLAG=1"};
  JitCompiler jit2(o2);
  jit2.build(prelude, {kernels[0]});
  EXPECT_EQ(jit2.stats().kernels_compiled, 1u);
}

TEST(CpuJit, UnitsAreCappedAndAllKernelsLoad) {
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.max_jobs = 1;
  o.max_kernels_per_unit = 3;
  std::vector<JitKernel> kernels;
  for (int i = 0; i < 7; ++i) kernels.push_back(add_kernel("g" + std::to_string(i), i));
  JitCompiler jit(o);
  auto libs = jit.build("", kernels);
  EXPECT_EQ(jit.stats().units_compiled, 3u);  // 7 kernels, at most 3 per unit
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(call(libs[static_cast<size_t>(i)], kernels[i].name, 100), 100 + i);
}

void damage_and_rebuild(const std::function<void(const std::string&)>& damage) {
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.max_jobs = 1;
  const std::vector<JitKernel> kernels{add_kernel("h1", 1), add_kernel("h2", 2)};
  std::string unit;
  {
    JitCompiler jit(o);
    auto libs = jit.build("", kernels);
    unit = jit.cached_unit_path("", kernels[0]);
    ASSERT_FALSE(unit.empty());
    ASSERT_TRUE(fs::exists(unit));
    EXPECT_TRUE(SharedLibrary::looks_complete(unit));
  }  // every handle released: the library is unloaded before it is damaged
  damage(unit);
  JitCompiler jit(o);
  auto libs = jit.build("", kernels);
  EXPECT_EQ(jit.stats().damaged_cache_entries, 1u);
  EXPECT_EQ(jit.stats().kernels_compiled, 2u);
  EXPECT_EQ(call(libs[0], "h1", 1), 2);
  EXPECT_EQ(call(libs[1], "h2", 1), 3);
  EXPECT_TRUE(SharedLibrary::looks_complete(jit.cached_unit_path("", kernels[0])));
}

TEST(CpuJit, TruncatedCachedLibraryIsRebuilt) {
  damage_and_rebuild([](const std::string& path) {
    const auto size = fs::file_size(path);
    fs::resize_file(path, size / 2);
    EXPECT_FALSE(SharedLibrary::looks_complete(path));
  });
}

TEST(CpuJit, SlightlyTruncatedCachedLibraryIsRebuilt) {
  damage_and_rebuild(
      [](const std::string& path) { fs::resize_file(path, fs::file_size(path) - 1); });
}

TEST(CpuJit, GarbageCachedLibraryIsRebuilt) {
  damage_and_rebuild([](const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "this is not an ELF file";
  });
}

TEST(CpuJit, CompileErrorNamesTheKernelAndPosition) {
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.max_jobs = 1;
  JitKernel bad{"k_bad", "extern \"C\" int k_bad(int x) {\n  return x +;\n}\n", {"k_bad"}, {}};
  JitCompiler jit(o);
  try {
    jit.build("// prelude line 1\n// prelude line 2\n", {add_kernel("k_good", 1), bad});
    FAIL() << "the syntax error was not reported";
  } catch (const KernelCompileError& e) {
    EXPECT_EQ(e.kernel(), "k_bad");
    EXPECT_EQ(e.line(), 2);
    EXPECT_GT(e.column(), 0);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("\"k_bad\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
    ASSERT_TRUE(fs::exists(e.source_path())) << e.source_path();
    std::ifstream in(e.source_path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("return x +;"), std::string::npos);
  }
}

TEST(CpuJit, MissingCompilerIsAnError) {
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.compiler = "luminal-no-such-compiler";
  try {
    JitCompiler jit(o);
    FAIL() << "no error for a missing compiler";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("luminal-no-such-compiler"), std::string::npos);
  }
}

// ---- library templates ----------------------------------------------------------------------

// LUMINAL_CACHE_DIR for one test: the header prelude and its libraries go
// to the default cache, which this makes a temporary one.
class DefaultCacheIn {
public:
  explicit DefaultCacheIn(const std::string& dir) {
    if (const char* old = std::getenv("LUMINAL_CACHE_DIR")) old_ = old;
    ::setenv("LUMINAL_CACHE_DIR", dir.c_str(), 1);
  }
  ~DefaultCacheIn() {
    if (old_) {
      ::setenv("LUMINAL_CACHE_DIR", old_->c_str(), 1);
    } else {
      ::unsetenv("LUMINAL_CACHE_DIR");
    }
  }
  DefaultCacheIn(const DefaultCacheIn&) = delete;
  DefaultCacheIn& operator=(const DefaultCacheIn&) = delete;

private:
  std::optional<std::string> old_;
};

// A prelude large enough to be a header, with two library templates (one
// whose instance cannot compile).
std::string library_prelude() {
  return "// " + std::string(20000, '-') +
         "\nnamespace lk {\nstruct tag_a { enum { k = 7 }; };\n"
         "template <class T> int scaled(int x) { return x * 3 + T::k; }\n"
         "template <class T> int broken(int x) { return T::no_such_member(x); }\n}\n";
}

JitKernel library_user(const std::string& name, const std::string& callee) {
  return {name,
          "extern \"C\" int " + name + "(int x) { return " + callee + "(x) + 1; }\n",
          {name},
          {callee}};
}

std::vector<fs::path> files_named(const std::string& dir, const std::string& prefix,
                                  const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) == 0 && e.path().extension() == ext) out.push_back(e.path());
  }
  return out;
}

TEST(CpuJit, LibraryTemplatesAreCompiledOnceAndLinked) {
  TempDir home, cache1, cache2;
  DefaultCacheIn in(home.path());
  JitOptions o;
  o.cache_dir = cache1.path();
  o.max_jobs = 2;
  {
    JitCompiler jit(o);
    auto libs = jit.build(library_prelude(),
                          {library_user("u1", "lk::scaled<lk::tag_a>"), add_kernel("plain", 5)});
    EXPECT_EQ(call(libs[0], "u1", 10), 10 * 3 + 7 + 1);
    EXPECT_EQ(call(libs[1], "plain", 10), 15);
    EXPECT_EQ(jit.stats().libraries_compiled, 1u);
  }
  // One library, in the header's directory, defining the instance; the
  // unit only declares it.
  const auto libraries = files_named(home.path(), "l-", ".so");
  ASSERT_EQ(libraries.size(), 1u);
  bool declared = false;
  for (const fs::path& unit : files_named(cache1.path(), "u-", ".cpp")) {
    std::ifstream in(unit);
    std::stringstream text;
    text << in.rdbuf();
    declared = declared || text.str().find("extern template decltype(lk::scaled<lk::tag_a>)") !=
                               std::string::npos;
  }
  EXPECT_TRUE(declared);
  // Another cache (a test's, another program's kernels): its units link
  // against the same library; none is compiled again.
  o.cache_dir = cache2.path();
  JitCompiler jit(o);
  auto libs = jit.build(library_prelude(), {library_user("u2", "lk::scaled<lk::tag_a>")});
  EXPECT_EQ(call(libs[0], "u2", 1), 3 + 7 + 1);
  EXPECT_EQ(jit.stats().libraries_compiled, 0u);
  EXPECT_EQ(jit.stats().kernels_compiled, 1u);
  // A small (inline) prelude has no header: the unit instantiates the template itself.
  TempDir cache3;
  o.cache_dir = cache3.path();
  JitCompiler small(o);
  auto inline_libs = small.build(
      "namespace lk { struct tag_a { enum { k = 1 }; };\n"
      "template <class T> int scaled(int x) { return x + T::k; } }\n",
      {library_user("u3", "lk::scaled<lk::tag_a>")});
  EXPECT_EQ(call(inline_libs[0], "u3", 1), 3);
  EXPECT_EQ(small.stats().libraries_compiled, 0u);
}

TEST(CpuJit, AMissingOrDamagedLibraryIsRebuilt) {
  TempDir home, cache;
  DefaultCacheIn in(home.path());
  JitOptions o;
  o.cache_dir = cache.path();
  o.max_jobs = 1;
  const JitKernel k = library_user("v1", "lk::scaled<lk::tag_a>");
  fs::path library;
  {
    JitCompiler jit(o);
    EXPECT_EQ(call(jit.build(library_prelude(), {k})[0], "v1", 2), 14);
    const auto found = files_named(home.path(), "l-", ".so");
    ASSERT_EQ(found.size(), 1u);
    library = found[0];
  }  // (unloaded before the library goes)
  // Deleted: the cached unit that needs it no longer loads, and both are built again.
  fs::remove(library);
  {
    JitCompiler jit(o);
    EXPECT_EQ(call(jit.build(library_prelude(), {k})[0], "v1", 2), 14);
    EXPECT_EQ(jit.stats().damaged_cache_entries, 1u);
    EXPECT_EQ(jit.stats().libraries_compiled, 1u);
    EXPECT_EQ(jit.stats().kernels_compiled, 1u);
  }
  // Truncated: a unit to compile does not link against it; it is built again.
  fs::resize_file(library, fs::file_size(library) / 2);
  TempDir other;
  o.cache_dir = other.path();
  JitCompiler jit(o);
  EXPECT_EQ(call(jit.build(library_prelude(), {k})[0], "v1", 3), 17);
  EXPECT_EQ(jit.stats().libraries_compiled, 1u);
  EXPECT_TRUE(SharedLibrary::looks_complete(library.string()));
}

TEST(CpuJit, ALibraryThatFailsToCompileIsNamed) {
  TempDir home, cache;
  DefaultCacheIn in(home.path());
  JitOptions o;
  o.cache_dir = cache.path();
  o.max_jobs = 2;
  JitCompiler jit(o);
  try {
    jit.build(library_prelude(),
              {add_kernel("fine", 1), library_user("w1", "lk::broken<lk::tag_a>")});
    FAIL() << "the library's error was not reported";
  } catch (const KernelCompileError& e) {
    EXPECT_EQ(e.kernel(), "prelude");
    const std::string msg = e.what();
    EXPECT_NE(msg.find("lk::broken<lk::tag_a>"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_member"), std::string::npos) << msg;
  }
}

// ---- the kernel prelude against the foundation's conversions --------------------------------

class CpuPrelude : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    JitOptions o;
    o.cache_dir = dir_->path();
    JitKernel k{"prelude_probe",
                R"(extern "C" uint16_t p_f32_to_f16(float v) { return lk::f32_to_f16(v); }
extern "C" float p_f16_to_f32(uint16_t h) { return lk::f16_to_f32(h); }
extern "C" uint16_t p_f32_to_bf16(float v) { return lk::f32_to_bf16(v); }
extern "C" float p_bf16_to_f32(uint16_t h) { return lk::bf16_to_f32(h); }
extern "C" uint8_t p_f32_to_e4m3(float v) { return lk::f32_to_e4m3(v); }
extern "C" float p_e4m3_to_f32(uint8_t h) { return lk::e4m3_to_f32(h); }
extern "C" uint8_t p_f32_to_e5m2(float v) { return lk::f32_to_e5m2(v); }
extern "C" float p_e5m2_to_f32(uint8_t h) { return lk::e5m2_to_f32(h); }
extern "C" float p_d2f(double v) { return lk::d2f(v); }
extern "C" float p_f16_of_double(double v) { return lk::round_f16(lk::d2f_odd(v)); }
extern "C" float p_bf16_of_double(double v) { return lk::round_bf16(lk::d2f_odd(v)); }
extern "C" int64_t p_sat_i64(double v) { return lk::sat_i64(v); }
extern "C" int64_t p_sat_i32(double v) { return lk::sat_i32(v); }
extern "C" int64_t p_sat_i8(double v) { return lk::sat_i8(v); }
extern "C" int64_t p_sat_u8(double v) { return lk::sat_u8(v); }
extern "C" int64_t p_satf_i32(float v) { return lk::satf_i32(v); }
extern "C" int64_t p_satf_i8(float v) { return lk::satf_i8(v); }
extern "C" int64_t p_satf_u8(float v) { return lk::satf_u8(v); }
)",
                {},
                {}};
    lib_ = JitCompiler(o).build(kernel_prelude(), {k})[0];
  }
  static void TearDownTestSuite() {
    lib_.reset();  // (unloaded before its directory goes)
    dir_.reset();
  }
  template <typename Fn>
  static Fn fn(const char* name) {
    return reinterpret_cast<Fn>(lib_->symbol(name));
  }
  static inline std::unique_ptr<TempDir> dir_;
  static inline std::shared_ptr<SharedLibrary> lib_;
};

// Floats that exercise rounding: a sweep over all exponents plus special values.
std::vector<float> probe_floats() {
  std::vector<float> v;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 65521)
    v.push_back(std::bit_cast<float>(uint32_t(b)));
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65520.0f, 65519.996f,
                  6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f, 448.0f, 464.0f, 57344.0f})
    v.push_back(f);
  // Half-way points between consecutive f16 values and their float neighbours (ties to even).
  for (uint32_t h = 0; h < 0x7bff; h += 7) {
    const float mid =
        static_cast<float>((static_cast<double>(f16_bits_to_float(static_cast<uint16_t>(h))) +
                            static_cast<double>(f16_bits_to_float(static_cast<uint16_t>(h + 1)))) /
                           2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      v.push_back(f);
      v.push_back(-f);
    }
  }
  return v;
}

TEST_F(CpuPrelude, NarrowDecodesMatchFoundationForEveryCode) {
  auto f16 = fn<float (*)(uint16_t)>("p_f16_to_f32");
  auto bf16 = fn<float (*)(uint16_t)>("p_bf16_to_f32");
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto c = static_cast<uint16_t>(h);
    ASSERT_EQ(std::bit_cast<uint32_t>(f16(c)), std::bit_cast<uint32_t>(f16_bits_to_float(c))) << h;
    ASSERT_EQ(std::bit_cast<uint32_t>(bf16(c)), std::bit_cast<uint32_t>(bf16_bits_to_float(c)))
        << h;
  }
  auto e4m3 = fn<float (*)(uint8_t)>("p_e4m3_to_f32");
  auto e5m2 = fn<float (*)(uint8_t)>("p_e5m2_to_f32");
  for (uint32_t h = 0; h <= 0xff; ++h) {
    const auto c = static_cast<uint8_t>(h);
    ASSERT_EQ(std::bit_cast<uint32_t>(e4m3(c)), std::bit_cast<uint32_t>(f8e4m3_bits_to_float(c)));
    ASSERT_EQ(std::bit_cast<uint32_t>(e5m2(c)), std::bit_cast<uint32_t>(f8e5m2_bits_to_float(c)));
  }
}

TEST_F(CpuPrelude, NarrowEncodesMatchFoundation) {
  auto f16 = fn<uint16_t (*)(float)>("p_f32_to_f16");
  auto bf16 = fn<uint16_t (*)(float)>("p_f32_to_bf16");
  auto e4m3 = fn<uint8_t (*)(float)>("p_f32_to_e4m3");
  auto e5m2 = fn<uint8_t (*)(float)>("p_f32_to_e5m2");
  for (float v : probe_floats()) {
    ASSERT_EQ(f16(v), float_to_f16_bits(v)) << v;
    ASSERT_EQ(bf16(v), float_to_bf16_bits(v)) << v;
    ASSERT_EQ(e4m3(v), float_to_f8e4m3_bits(v)) << v;
    ASSERT_EQ(e5m2(v), float_to_f8e5m2_bits(v)) << v;
  }
}

TEST_F(CpuPrelude, DoubleRoundingAndSaturationMatchTensorData) {
  auto d2f = fn<float (*)(double)>("p_d2f");
  auto f16 = fn<float (*)(double)>("p_f16_of_double");
  auto bf16 = fn<float (*)(double)>("p_bf16_of_double");
  auto i64 = fn<int64_t (*)(double)>("p_sat_i64");
  auto i32 = fn<int64_t (*)(double)>("p_sat_i32");
  auto i8 = fn<int64_t (*)(double)>("p_sat_i8");
  auto u8 = fn<int64_t (*)(double)>("p_sat_u8");
  // The float forms (the kernels' f32 / f16 / bf16 -> int casts), on the floats
  // among the values and their neighbours.
  auto fi32 = fn<int64_t (*)(float)>("p_satf_i32");
  auto fi8 = fn<int64_t (*)(float)>("p_satf_i8");
  auto fu8 = fn<int64_t (*)(float)>("p_satf_u8");
  std::mt19937_64 rng(11);
  std::vector<double> values{
      0.0,
      -0.0,
      1e300,
      -1e300,
      INFINITY,
      -INFINITY,
      NAN,
      0x1.ffffffp127,
      0x1.fffffep127,
      9.3e18,
      -9.3e18,
      2147483647.5,
      -2147483648.9,
      255.9,
      -0.9,
      127.5,
      -128.5,
      1.0 + 0x1p-11 + 0x1p-40};  // an f16 near-tie that double rounding breaks
  for (int i = 0; i < 20000; ++i) {
    values.push_back(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                                static_cast<int>(rng() % 80) - 40));
  }
  for (double v : values) {
    const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    ASSERT_TRUE(same(d2f(v), round_to_float_dtype(v, DType::F32))) << v;
    ASSERT_TRUE(same(f16(v), round_to_float_dtype(v, DType::F16))) << v;
    ASSERT_TRUE(same(bf16(v), round_to_float_dtype(v, DType::BF16))) << v;
    ASSERT_EQ(i64(v), saturating_float_to_int(v, DType::I64)) << v;
    ASSERT_EQ(i32(v), saturating_float_to_int(v, DType::I32)) << v;
    ASSERT_EQ(i8(v), saturating_float_to_int(v, DType::I8)) << v;
    ASSERT_EQ(u8(v), saturating_float_to_int(v, DType::U8)) << v;
    const float f = static_cast<float>(v);
    for (float x : {f, std::nextafter(f, INFINITY), std::nextafter(f, -INFINITY)}) {
      ASSERT_EQ(fi32(x), saturating_float_to_int(x, DType::I32)) << x;
      ASSERT_EQ(fi8(x), saturating_float_to_int(x, DType::I8)) << x;
      ASSERT_EQ(fu8(x), saturating_float_to_int(x, DType::U8)) << x;
    }
  }
}

// ---- the generated inner loop is vectorised -------------------------------------------------

// The lines of generated element loops ("for (int64_t _i") that the
// compiler's -fopt-info-vec-optimized output reports vectorised.
std::set<std::string> vectorised_element_loops(const std::string& compiler_output) {
  // "<file>:<line>:<col>: optimized: loop vectorized ..." for the line of the element loop.
  std::istringstream out(compiler_output);
  std::string line;
  std::set<std::string> loops;
  while (std::getline(out, line)) {
    if (line.find("loop vectorized") == std::string::npos) continue;
    const size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::ifstream src(line.substr(0, c1));
    const int target = std::atoi(line.c_str() + c1 + 1);
    std::string text;
    for (int i = 0; i < target && std::getline(src, text); ++i) {
    }
    if (text.find("for (int64_t _i") != std::string::npos) loops.insert(line.substr(0, c2));
  }
  return loops;
}

JitOptions vectorisation_report(const std::string& dir) {
  JitOptions o;
  o.cache_dir = dir;
  o.use_cache = false;
  o.max_jobs = 1;  // (one unit)
  o.extra_flags = {"-fopt-info-vec-optimized"};
  return o;
}

TEST(CpuJit, ContiguousF32InnerLoopIsVectorised) {
  Graph g;
  auto x = g.input("x", {"s", 64});
  auto y = g.input("y", {"s", 64});
  g.output("z", (x * y + x).sqrt());
  std::vector<NodeId> nodes;
  for (NodeId i = 0; i < g.size(); ++i)
    if (g.node(i).kind != OpKind::Input) nodes.push_back(i);
  const CpuKernel k = generate_kernel(g, {nodes, g.outputs()}, "vec_probe");
  TempDir dir;
  JitCompiler jit(vectorisation_report(dir.path()));
  jit.build(kernel_prelude(), {k.jit()});
  EXPECT_EQ(vectorised_element_loops(jit.stats().compiler_output).size(), 1u)
      << jit.stats().compiler_output << "\n"
      << k.code;
}

// A true division of f32 / bf16 / f16 is computed in f64 (correctly rounded)
// and cast back: those casts (lk::d2f; lk::d2f_odd before the narrow
// rounding) went through selects and branches for NaN and overflow that GCC
// could not vectorise, so every loop dividing tensors (torch's x / y, a
// Python `1.0 / t`) ran scalar (SiLU written with a division: 2.7 ms on
// 128 x 1536, ~8x the vectorised loop). CpuPrelude checks their values.
// (f16 stays scalar: its rounding's subnormal loop, lk::encode_narrow.)
TEST(CpuJit, DivisionThroughDoubleIsVectorised) {
  for (DType dt : {DType::F32, DType::BF16}) {
    Graph g;
    auto x = g.input("x", {"s", 64}, dt);
    auto y = g.input("y", {"s", 64}, dt);
    g.output("z", true_divide(x, y + 1.0) * x);
    std::vector<NodeId> nodes;
    for (NodeId i = 0; i < g.size(); ++i)
      if (g.node(i).kind != OpKind::Input) nodes.push_back(i);
    const CpuKernel k = generate_kernel(g, {nodes, g.outputs()}, "div_probe");
    // (the casts under test)
    ASSERT_NE(k.code.find(dt == DType::F32 ? "lk::d2f(" : "lk::d2f_odd("), std::string::npos)
        << k.code;
    TempDir dir;
    JitCompiler jit(vectorisation_report(dir.path()));
    jit.build(kernel_prelude(), {k.jit()});
    EXPECT_EQ(vectorised_element_loops(jit.stats().compiler_output).size(), 1u)
        << dtype_name(dt) << "\n"
        << jit.stats().compiler_output << "\n"
        << k.code;
  }
}

// The prelude's element math is inlined into element loops whatever else
// the unit holds: a unit with much other code (a model's quantized and AMX
// products next to its SiLU) once went past GCC's unit growth limit, which
// left lk::exp2f a call and the SiLU loop scalar (5x slower, SmolLM2's
// prefill on the AMX host). Here GCC is allowed no growth at all, and each
// function has two callers (one would be inlined without growth).
TEST(CpuJit, ElementMathStaysInlineWhereTheUnitMayNotGrow) {
  using Body = Tensor (*)(Tensor x, Tensor y);
  const std::vector<std::pair<std::string, Body>> probes = {
      {"silu",
       [](Tensor x, Tensor y) { return x * (1.0 / ((x * -1.4426950408889634).exp2() + 1.0)) * y; }},
      {"exp2", [](Tensor x, Tensor y) { return (x * y).exp2(); }},
      {"log2", [](Tensor x, Tensor) { return (x * x + 1.0).log2(); }},
      {"log2_b", [](Tensor x, Tensor y) { return (x * x + y * y + 1.0).log2(); }},
      {"sin", [](Tensor x, Tensor) { return x.sin(); }},
      {"sin_b", [](Tensor x, Tensor y) { return (x * y).sin(); }},
      {"bf16", [](Tensor x, Tensor y) { return (x * y).cast(DType::BF16); }},
      {"bf16_b", [](Tensor x, Tensor) { return (x + 1.0).cast(DType::BF16); }}};
  std::vector<JitKernel> kernels;
  std::string code;
  for (const auto& [name, body] : probes) {
    Graph g;
    g.output("z", body(g.input("x", {"s", 64}), g.input("y", {"s", 64})));
    std::vector<NodeId> nodes;
    for (NodeId i = 0; i < g.size(); ++i)
      if (g.node(i).kind != OpKind::Input) nodes.push_back(i);
    kernels.push_back(generate_kernel(g, {nodes, g.outputs()}, name + "_probe").jit());
    code += kernels.back().code;
  }
  TempDir dir;
  JitOptions o = vectorisation_report(dir.path());
  o.max_kernels_per_unit = static_cast<int>(kernels.size());
  o.extra_flags.push_back("--param=inline-unit-growth=0");
  o.extra_flags.push_back("--param=large-unit-insns=0");
  JitCompiler jit(o);
  jit.build(kernel_prelude(), kernels);
  ASSERT_EQ(jit.stats().units_compiled, 1u);
  EXPECT_EQ(vectorised_element_loops(jit.stats().compiler_output).size(), kernels.size())
      << jit.stats().compiler_output << "\n"
      << code;
}

}  // namespace
}  // namespace luminal::cpu
