// Reductions computed in accumulator lanes (codegen.hpp): rows long enough to
// use the lane loop (>= 32 elements) and its tail, checked against values
// computed here by hand and against the reference interpreter.
//
// MaxReduce's rule (op.hpp): NaN anywhere gives the canonical NaN, an empty
// axis -inf, otherwise the first element equal to the maximum -- which decides
// the sign of a zero maximum. Float sums: inf / NaN propagate like a plain sum,
// the f32 / f16 / bf16 accumulation is in double, f64 sums are compensated.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/backends/cpu/jit.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

using testing::expect_close;
using testing::expect_matches_interpreter;
using testing::random_tensor;
using testing::TempDir;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The rule written out independently of the interpreter: the canonical NaN if
// any element is NaN, -inf for an empty row, else the first element equal to
// the maximum.
double first_max(const std::vector<double>& row) {
  double best = -kInf;
  for (double v : row)
    if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
  for (double v : row)
    if (v > best) best = v;
  for (double v : row)
    if (v == best) return v;
  return best;
}

// Exact comparison of a float result with the rule: same value, same sign of
// zero, and a NaN must be the canonical (positive) one.
void expect_rule(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got) && !std::signbit(got)) << what << ": got " << got;
    return;
  }
  EXPECT_EQ(got, want) << what;
  EXPECT_EQ(std::signbit(got), std::signbit(want)) << what << ": sign of " << got;
}

// Rows of `len` elements that exercise the rule: zeros whose first one is
// negative or positive (placed after the first lane block, in the tail, or
// first), NaN (of both signs) in various lanes, -inf rows, and plain values.
std::vector<std::vector<double>> rule_rows(int64_t len, std::mt19937_64& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> rows;
  auto at = [&](int64_t k) { return static_cast<size_t>(k % len); };
  for (double first_zero : {-0.0, 0.0}) {
    for (int64_t pos : {int64_t{0}, int64_t{5}, int64_t{33}, len - 1}) {
      std::vector<double> row(static_cast<size_t>(len));
      for (double& v : row) v = -1.0 - static_cast<double>(rng() % 100);
      for (int64_t k = at(pos) + 1; k < len; ++k)  // later zeros have the other sign
        if (rng() % 3 == 0) row[static_cast<size_t>(k)] = -first_zero;
      row[at(pos)] = first_zero;
      rows.push_back(row);
    }
  }
  std::vector<double> zeros(static_cast<size_t>(len));  // random signs: the first decides
  for (double& v : zeros) v = rng() % 2 ? 0.0 : -0.0;
  rows.push_back(zeros);
  for (int64_t pos : {int64_t{0}, int64_t{17}, int64_t{40}, len - 1}) {
    for (double n : {nan, -nan}) {
      std::vector<double> row(static_cast<size_t>(len));
      for (double& v : row) v = static_cast<double>(rng() % 200) - 100.0;
      row[at(pos)] = n;
      rows.push_back(row);
    }
  }
  rows.emplace_back(static_cast<size_t>(len), -kInf);
  std::vector<double> with_inf(static_cast<size_t>(len), -kInf);
  with_inf[at(len / 2)] = kInf;
  rows.push_back(with_inf);
  std::vector<double> plain(static_cast<size_t>(len));
  for (double& v : plain) v = static_cast<double>(rng() % 1000) / 8.0 - 60.0;
  rows.push_back(plain);
  return rows;
}

TEST(Interpreter, MaxReduceKeepsTheFirstZeroAndGivesTheCanonicalNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> rows = {
      {-0.0, 0.0}, {0.0, -0.0},    {-1.0, -0.0, 0.0, -0.0}, {-nan, 1.0},
      {1.0, nan},  {-kInf, -kInf}, {-kInf, kInf, 2.0},      {3.0, -0.0, 3.0}};
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    Graph g;
    auto x = g.input("x", {"n"}, d);
    g.output("m", x.max_reduce(0));
    Interpreter ref(g);
    for (const std::vector<double>& row : rows) {
      ref.set_input("x", TensorData::from_doubles(d, {static_cast<int64_t>(row.size())}, row));
      ref.run();
      expect_rule(ref.output("m").get(0), first_max(row), std::string(dtype_name(d)));
    }
    ref.set_input("x", TensorData(d, {0}));
    ref.run();
    EXPECT_EQ(ref.output("m").get(0), -kInf);
  }
}

// One region per output: every computed node the output needs, so that each
// output is one kernel with its reductions and their producers inside.
CpuOptions kernel_per_output(const Graph& g) {
  CpuOptions o;
  for (NodeId out : g.outputs()) {
    std::set<NodeId> need{out};
    for (NodeId i = out + 1; i-- > 0;)
      if (need.count(i))
        for (const Operand& op : g.node(i).operands) need.insert(op.node);
    Region r;
    for (NodeId n : need)
      if (g.node(n).kind != OpKind::Input) r.nodes.push_back(n);
    r.outputs = {out};
    o.regions.push_back(r);
  }
  return o;
}

TEST(CpuReduce, MaxLanesFollowTheFirstMaximumRule) {
  std::mt19937_64 rng(51);
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    Graph g;
    std::map<std::string, TensorData> in;
    std::map<int64_t, std::vector<std::vector<double>>> rows_of;  // the rows as stored
    const std::vector<int64_t> lengths{31, 32, 45, 64, 100};
    for (int64_t len : lengths) {
      const std::vector<std::vector<double>> rows = rule_rows(len, rng);
      const auto count = static_cast<int64_t>(rows.size());
      std::vector<double> flat;
      for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
      const std::string n = std::to_string(len);
      auto x = g.input("x" + n, {count, len}, d);
      auto xt = g.input("xt" + n, {len, count}, d);
      g.output("m" + n, x.max_reduce(1));
      g.output("m_fused" + n, (x * 1.0).max_reduce(1));  // a producer in the lane loop
      g.output("m_strided" + n, xt.max_reduce(0));       // not the innermost axis
      TensorData xv = TensorData::from_doubles(d, {count, len}, flat);
      TensorData xtv(d, {len, count});
      for (int64_t i = 0; i < count; ++i) {
        std::vector<double>& stored = rows_of[len].emplace_back();
        for (int64_t j = 0; j < len; ++j) {
          xtv.set(j * count + i, xv.get(i * len + j));
          stored.push_back(xv.get(i * len + j));
        }
      }
      in["x" + n] = xv;
      in["xt" + n] = xtv;
    }
    const CpuOptions options = kernel_per_output(g);
    CpuProgram p(g, options);
    for (const auto& [name, data] : in) p.set_input(name, data);
    p.run();
    for (int64_t len : lengths)
      for (const char* out : {"m", "m_fused", "m_strided"}) {
        const std::string name = out + std::to_string(len);
        for (size_t i = 0; i < rows_of[len].size(); ++i)
          expect_rule(p.output(name).get(static_cast<int64_t>(i)), first_max(rows_of[len][i]),
                      std::string(dtype_name(d)) + " " + name + " row " + std::to_string(i));
      }
    expect_matches_interpreter(g, in, options);
  }
}

TEST(CpuReduce, LaneLoopsOverEveryDtypeMatchTheInterpreter) {
  // Rows of 70 and 64 (lane blocks of 32 plus a tail, and none) over both a
  // contiguous and a strided axis; the integer lanes wrap like the interpreter.
  std::mt19937_64 rng(52);
  Graph g;
  std::map<std::string, TensorData> in;
  std::map<std::string, testing::Tolerance> tol;
  for (DType d : testing::kComputeTypes) {
    for (int64_t len : {64, 70}) {
      const std::string tag = std::string(dtype_name(d)) + std::to_string(len);
      auto x = g.input("x" + tag, {3, len}, d);
      in["x" + tag] = random_tensor(d, {3, len}, rng, -4, 4, true);
      for (int axis = 0; axis < 2; ++axis) {
        const Tensor v = axis == 0 ? x.permute({1, 0}) : x;  // reduce the axis of length len
        const std::string name = tag + "_" + std::to_string(axis);
        g.output("max" + name, v.max_reduce(axis));
        if (d == DType::Bool) continue;
        g.output("sum" + name, v.sum_reduce(axis));
        // The double lanes are within (70/32 + 5) 2^-53 * 280 of the exact sum (the
        // interpreter's plain double sum within 70 * 2^-53 * 280), then rounded once:
        // the results differ by at most an ulp.
        if (is_float(d)) tol["sum" + name] = {1, 0};
      }
    }
  }
  expect_matches_interpreter(g, in, testing::fused_outputs(g), {}, tol);
}

TEST(CpuReduce, SoftmaxRowCacheWithRowsSplitBetweenThreads) {
  // Softmax in one kernel keeps exp(x - max) of the row sum for the element
  // loop (in the output row when the call writes the whole row, else in a row
  // buffer: on the stack up to 1024 elements, on the heap above). Three
  // threads over 5 rows cut rows in the middle.
  for (DType d : {DType::F32, DType::F16}) {
    for (int64_t cols : {300, 1100}) {
      Graph g;
      auto x = g.input("x", {"rows", cols}, d);
      g.output("y", softmax(x, -1));
      // Three caches in one kernel (the max of x * 2, both sums of exp): only
      // one of them may use the output row.
      g.output("two", softmax(x, -1) + softmax(x * 2.0, -1));
      CpuOptions options = kernel_per_output(g);
      options.num_threads = 3;
      CpuProgram p(g, options);
      ASSERT_EQ(p.kernels().size(), 2u);
      const std::string& code = p.kernels()[0].code;
      const size_t element_loop = code.find("for (int64_t _i");
      ASSERT_NE(element_loop, std::string::npos) << code;
      EXPECT_NE(code.find("[_i];", element_loop), std::string::npos) << code;  // the cache read
      EXPECT_EQ(code.find("lk::exp2f", element_loop), std::string::npos) << code;
      std::mt19937_64 rng(53);
      EXPECT_EQ(p.kernels()[1].code.find("lk::exp2f", p.kernels()[1].code.find("for (int64_t _i")),
                std::string::npos)
          << p.kernels()[1].code;
      expect_matches_interpreter(g, {{"x", random_tensor(d, {5, cols}, rng, -10, 10)}}, options, {},
                                 {{"y", {8, 1e-9}}, {"two", {8, 1e-9}}});
    }
  }
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CpuReduce, CachedFloatSumAddsTheCachedRowInALoopOfItsOwn) {
  // Softmax's sum of exp reads its row cache back in a loop of its own; a
  // log-softmax needs no cache of exp (the element loop does not read it), so
  // its sum stays in the computing loop. Both against the interpreter: a sum
  // left out of both loops (or added twice) is far off.
  for (DType d : {DType::F32, DType::BF16}) {
    Graph g;
    auto x = g.input("x", {"rows", 100}, d);
    g.output("soft", softmax(x, -1));
    g.output("log", log_softmax(x, -1));
    const CpuOptions options = kernel_per_output(g);
    CpuProgram p(g, options);
    ASSERT_EQ(p.kernels().size(), 2u);
    const std::string& soft = p.kernels()[0].code;
    const std::string& log = p.kernels()[1].code;
    EXPECT_EQ(count(soft, "for (int64_t _rs"), 1u) << soft;
    EXPECT_EQ(count(log, "for (int64_t _rs"), 0u) << log;
    EXPECT_EQ(count(log, "+= (double)"), 2u) << log;  // the lane loop and the tail
    std::mt19937_64 rng(7);
    expect_matches_interpreter(g, {{"x", random_tensor(d, {4, 100}, rng, -10, 10)}}, options, {},
                               {{"soft", {8, 1e-9}}, {"log", {8, 1e-6}}});
  }
}

TEST(CpuReduce, RowReductionsPrefetchTheNextRowInTheLastPassOnly) {
  // Softmax: a max pass, then exp and sum. Only the second prefetches the next
  // row's block (two cache lines per 32 f32 lanes). An input read across the
  // row (a transposed view: stride > 1 along the reduced axis) gets none.
  Graph g;
  auto x = g.input("x", {"rows", 256}, DType::F32);
  auto t = g.input("t", {256, "cols"}, DType::F32);
  g.output("soft", softmax(x, -1));
  g.output("across", softmax(t.permute({1, 0}), -1));
  const CpuOptions options = kernel_per_output(g);
  CpuProgram p(g, options);
  ASSERT_EQ(p.kernels().size(), 2u);
  const std::string& soft = p.kernels()[0].code;
  EXPECT_EQ(count(soft, "lk::prefetch("), 2u) << soft;
  const size_t max_loop = soft.find("lk::max_step");
  ASSERT_NE(max_loop, std::string::npos) << soft;
  EXPECT_GT(soft.find("lk::prefetch("), max_loop) << soft;
  // The next row of x is 256 floats on.
  EXPECT_NE(soft.find("+ 256);"), std::string::npos) << soft;
  EXPECT_EQ(count(p.kernels()[1].code, "lk::prefetch("), 0u) << p.kernels()[1].code;
  std::mt19937_64 rng(9);
  expect_matches_interpreter(g,
                             {{"x", random_tensor(DType::F32, {5, 256}, rng, -10, 10)},
                              {"t", random_tensor(DType::F32, {256, 3}, rng, -10, 10)}},
                             options, {}, {{"soft", {8, 1e-9}}, {"across", {8, 1e-9}}});
}

TEST(CpuReduce, FloatSumLanesPropagateInfAndNaNAndDoNotOverflowEarly) {
  Graph g;
  auto x = g.input("x", {"rows", 80}, DType::F32);
  g.output("s", x.sum_reduce(1));
  std::vector<double> v(6 * 80, 1.0);
  auto row = [&](int r) { return v.begin() + r * 80; };
  row(0)[3] = kInf;  // +inf and -inf in different lanes: NaN
  row(0)[50] = -kInf;
  row(1)[77] = kInf;  // in the tail
  row(2)[10] = std::numeric_limits<double>::quiet_NaN();
  // 3e38 * 40 - 3e38 * 40 + 0: partial sums overflow float but not double,
  // so the sum is exact (the interpreter sums in double too).
  for (int k = 0; k < 80; ++k) row(3)[k] = k < 40 ? 3e38 : -3e38;
  for (int k = 0; k < 80; ++k) row(4)[k] = 3e38;                    // really overflows: +inf
  for (int k = 0; k < 80; ++k) row(5)[k] = k % 2 ? 1e6 : -1e6 + 1;  // cancellation: 40
  CpuProgram p(g);
  const TensorData in = TensorData::from_doubles(DType::F32, {6, 80}, v);
  p.set_input("x", in);
  p.run();
  const TensorData& s = p.output("s");
  EXPECT_TRUE(std::isnan(s.get(0)));
  EXPECT_EQ(s.get(1), kInf);
  EXPECT_TRUE(std::isnan(s.get(2)));
  EXPECT_EQ(s.get(3), 0.0);
  EXPECT_EQ(s.get(4), kInf);
  EXPECT_EQ(s.get(5), 40.0);
  expect_matches_interpreter(g, {{"x", in}});
}

// The source lines (each with the line after it) of the loops the compiler
// reported as vectorised, each once.
std::set<std::string> vectorised_lines(const JitCompiler& jit) {
  std::set<std::string> lines;
  std::set<std::string> seen;  // "<file>:<line>"
  std::istringstream out(jit.stats().compiler_output);
  std::string line;
  while (std::getline(out, line)) {
    if (line.find("loop vectorized") == std::string::npos) continue;
    const size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    if (!seen.insert(line.substr(0, c2)).second) continue;
    std::ifstream src(line.substr(0, c1));
    const int target = std::atoi(line.c_str() + c1 + 1);
    std::string text, next;
    for (int i = 0; i < target && std::getline(src, text); ++i) {
    }
    std::getline(src, next);
    lines.insert(std::to_string(target) + ": " + text + "\n" + next);
  }
  return lines;
}

TEST(CpuReduce, SoftmaxAndRmsNormLoopsAreVectorised) {
  Graph g;
  auto x = g.input("x", {"rows", "n"}, DType::F32);
  auto w = g.input("w", {"n"}, DType::F32);
  g.output("softmax", softmax(x, -1));
  g.output("rms", rms_norm(x, {Expr("n")}, w, 1e-6));
  TempDir dir;
  JitOptions o;
  o.cache_dir = dir.path();
  o.use_cache = false;
  o.extra_flags = {"-fopt-info-vec-optimized"};
  for (const char* out : {"softmax", "rms"}) {
    const Region r = kernel_per_output(g).regions.at(out == std::string("softmax") ? 0 : 1);
    const CpuKernel k = generate_kernel(g, r, std::string(out) + "_probe");
    JitCompiler jit(o);
    jit.build(kernel_prelude(), {k.jit()});
    const std::set<std::string> vec = vectorised_lines(jit);
    auto vectorised = [&](const std::string& head, const std::string& next) {
      for (const std::string& l : vec)
        if (l.find(head) != std::string::npos && l.find(next) != std::string::npos) return true;
      return false;
    };
    // The reductions' lane loops (the row max and the row sum of exp, or the
    // sum of squares) and the element loop.
    const size_t lane_loops =
        static_cast<size_t>(std::count_if(vec.begin(), vec.end(), [](auto& l) {
          return l.find("for (int _l") != std::string::npos &&
                 l.find("const int64_t _r") != std::string::npos;
        }));
    EXPECT_EQ(lane_loops, std::string(out) == "softmax" ? 2u : 1u)
        << jit.stats().compiler_output << "\n"
        << k.code;
    EXPECT_TRUE(vectorised("for (int64_t _i", "")) << jit.stats().compiler_output << k.code;
    // The row reductions come before (outside) the element loop: once per row.
    const size_t element_loop = k.code.find("for (int64_t _i");
    EXPECT_LT(k.code.rfind("lk::lanes_sum"), element_loop) << k.code;
  }
}

}  // namespace
}  // namespace luminal::cpu
