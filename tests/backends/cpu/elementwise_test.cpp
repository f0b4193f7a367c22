// Generated element-wise kernels against the reference interpreter: every op in
// every dtype it accepts, constants and iota, random views, fused regions.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

using testing::expect_matches_interpreter;
using testing::fused_outputs;
using testing::kComputeTypes;
using testing::random_tensor;
using testing::Tolerance;

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

std::string name_of(DType d) {
  return std::string(dtype_name(d));
}

TEST(CpuElementwise, UnaryOpsInEveryFloatDtype) {
  Graph g;
  std::mt19937_64 rng(1);
  std::map<std::string, TensorData> inputs;
  std::map<std::string, Tolerance> tol;
  for (DType d : kFloatTypes) {
    const std::string s = name_of(d);
    auto x = g.input("x_" + s, {5, 7}, d);
    auto wide = g.input("w_" + s, {5, 7}, d);
    inputs["x_" + s] = random_tensor(d, {5, 7}, rng, -4, 4, /*specials=*/true);
    inputs["w_" + s] = random_tensor(d, {5, 7}, rng, -300, 300);
    g.output("exp2_" + s, x.exp2());
    g.output("log2_" + s, x.log2());
    g.output("sin_" + s, x.sin());
    g.output("sinw_" + s, wide.sin());
    g.output("sqrt_" + s, x.sqrt());
    g.output("recip_" + s, x.recip());
    // exp2 / log2 / sin use float libm for f32, f16 and bf16 (the interpreter uses
    // double): at most one ulp of the dtype apart. f64 is computed by the same functions.
    if (d != DType::F64)
      for (const char* op : {"exp2_", "log2_", "sin_", "sinw_"}) tol[op + s] = {1.0, 0.0};
  }
  expect_matches_interpreter(g, inputs, fused_outputs(g), {}, tol);
}

TEST(CpuElementwise, BinaryOpsInEveryDtype) {
  Graph g;
  std::mt19937_64 rng(2);
  std::map<std::string, TensorData> inputs;
  for (DType d : kComputeTypes) {
    const std::string s = name_of(d);
    auto a = g.input("a_" + s, {4, 9}, d);
    auto b = g.input("b_" + s, {4, 9}, d);
    TensorData av = random_tensor(d, {4, 9}, rng, -50, 50, true);
    TensorData bv = random_tensor(d, {4, 9}, rng, -50, 50, true);
    if (is_int(d)) {
      for (int64_t i = 0; i < bv.numel(); ++i)
        if (bv.get_int(i) == 0) bv.set_int(i, 3);
      // INT_MIN % -1 and small divisors.
      av.set_int(0, d == DType::U8 ? 255 : std::numeric_limits<int64_t>::min());
      bv.set_int(0, -1);
      bv.set_int(1, 1);
      bv.set_int(2, 7);
    }
    inputs["a_" + s] = av;
    inputs["b_" + s] = bv;
    g.output("add_" + s, g.binary(OpKind::Add, a, b));
    g.output("mul_" + s, g.binary(OpKind::Mul, a, b));
    g.output("lt_" + s, g.binary(OpKind::LessThan, a, b));
    if (d != DType::Bool) g.output("mod_" + s, g.binary(OpKind::Mod, a, b));
  }
  expect_matches_interpreter(g, inputs, fused_outputs(g));
}

TEST(CpuElementwise, CastBetweenEveryPairOfDtypes) {
  Graph g;
  std::mt19937_64 rng(3);
  std::map<std::string, TensorData> inputs;
  for (DType from : kComputeTypes) {
    const std::string s = name_of(from);
    auto x = g.input("x_" + s, {3, 11}, from);
    TensorData v = random_tensor(from, {3, 11}, rng, -400, 400, true);
    if (is_float(from)) {
      // Saturation of every integer type, and an f16 near-tie that double rounding breaks.
      const double extra[] = {
          3e9, -3e9, 1e19,   -1e19,   255.7,        -128.9, 70000.0, 1.0 + 0x1p-11 + 0x1p-40,
          2.5, -2.5, 0x1p31, -0x1p31, 2147483520.0, -0.75,  127.5,   -128.5};
      for (size_t i = 0; i < std::size(extra); ++i) v.set(static_cast<int64_t>(i), extra[i]);
    }
    inputs["x_" + s] = v;
    for (DType to : kComputeTypes) g.output("cast_" + s + "_" + name_of(to), x.cast(to));
    if (is_float(from)) {
      g.output("fp8a_" + s, x.cast(DType::F8E4M3));
      g.output("fp8b_" + s, x.cast(DType::F8E5M2).cast(DType::F32));
    }
  }
  expect_matches_interpreter(g, inputs, fused_outputs(g));
}

TEST(CpuElementwise, ConstantsAndIota) {
  Graph g;
  auto n = g.input("n", {"s"}, DType::I32);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             -0.0,
                             std::numeric_limits<double>::infinity(),
                             1e30,
                             -3.7,
                             65519.0};
  int k = 0;
  for (DType d : kComputeTypes)
    for (double v : specials) g.output("c" + std::to_string(k++), g.constant(v, d).expand({3}));
  g.output("imin", g.constant_int(std::numeric_limits<int64_t>::min(), DType::I64));
  g.output("scalar", g.constant(2.5, DType::F64));
  const Expr z = Expr::index_var();
  g.output("iota_i32", g.iota(z * 3 + "s", "s", DType::I32) + n);
  g.output("iota_i8", g.iota(z * 100, 5, DType::I8));  // wraps
  g.output("iota_u8", g.iota(z * 97 + 1000, "s", DType::U8));
  g.output("iota_i64", g.iota(z / 2 - z % 3, 7, DType::I64));
  std::mt19937_64 rng(4);
  expect_matches_interpreter(g, {{"n", random_tensor(DType::I32, {6}, rng)}}, fused_outputs(g));
}

// A random chain of movement ops on `t` (each keeps the view expressible).
Tensor random_view(Tensor t, std::mt19937_64& rng) {
  for (int step = 0; step < 3; ++step) {
    const int rank = static_cast<int>(t.rank());
    const int axis = static_cast<int>(rng() % static_cast<uint64_t>(rank));
    const int64_t size = *t.shape()[static_cast<size_t>(axis)].as_const();
    switch (rng() % 6) {
      case 0: {
        std::vector<int> order(static_cast<size_t>(rank));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        t = t.permute(order);
        break;
      }
      case 1:
        if (size >= 2) {
          const int64_t start = static_cast<int64_t>(rng() % static_cast<uint64_t>(size - 1));
          t = t.slice(axis, start, size, 1 + static_cast<int64_t>(rng() % 2));
        }
        break;
      case 2:
        t = t.flip(axis);
        break;
      case 3:
        if (rank < 4) {
          std::vector<Expr> shape = t.unsqueeze(axis).shape();
          shape[static_cast<size_t>(axis)] = 3;
          t = t.unsqueeze(axis).expand(shape);
        }
        break;
      case 4:
        if (axis + 1 < rank) {
          t = Tensor(t.graph(), t.node(), t.view().merge(axis), t.dtype());
        }
        break;
      default:
        t = t.repeat_axis(axis, 2);
        break;
    }
  }
  return t;
}

TEST(CpuElementwise, RandomViewsInSeveralDtypes) {
  Graph g;
  std::mt19937_64 rng(5);
  std::map<std::string, TensorData> inputs;
  for (DType d : {DType::F32, DType::F16, DType::I32, DType::Bool}) {
    const std::string s = name_of(d);
    auto x = g.input("x_" + s, {4, 6, 5}, d);
    inputs["x_" + s] = random_tensor(d, {4, 6, 5}, rng);
    for (int trial = 0; trial < 6; ++trial) {
      const Tensor v = random_view(x, rng);
      const std::string t = s + "_" + std::to_string(trial);
      g.output("view_" + t, v);                                   // Output reads through the view
      g.output("sum_" + t, g.binary(OpKind::Add, v, v.flip(0)));  // two views of one buffer
    }
  }
  expect_matches_interpreter(g, inputs, fused_outputs(g));
}

// All computed nodes in [first, last] plus the given outputs as one region.
Region span(const Graph& g, NodeId first, NodeId last, std::vector<NodeId> outputs = {}) {
  Region r;
  for (NodeId i = first; i <= last; ++i)
    if (g.node(i).kind != OpKind::Input) r.nodes.push_back(i);
  r.outputs = std::move(outputs);
  return r;
}

TEST(CpuElementwise, FusedChainDiamondAndInternalViews) {
  for (DType d : {DType::F32, DType::BF16, DType::F64}) {
    Graph g;
    auto x = g.input("x", {"s", 8}, d);
    auto y = g.input("y", {8}, d);
    const NodeId first = static_cast<NodeId>(g.size());
    // A chain, a diamond (x feeds two branches that meet again) and a broadcast of y.
    auto a = (x * 1.5 + y).sqrt();
    auto b = (x * x + 2.0).log2();
    auto c = a * b + x;
    // An internal edge read through a permuted view: the producer is recomputed.
    auto t = (c * 0.5).permute({1, 0});
    auto out = t.recip() + 1.0;
    g.output("out", out);
    g.output("mid", c.permute({1, 0}));  // an intermediate also read by a graph output
    const NodeId last = static_cast<NodeId>(g.size() - 1);
    std::mt19937_64 rng(6);
    std::map<std::string, TensorData> in{{"x", random_tensor(d, {5, 8}, rng, 0.5, 3)},
                                         {"y", random_tensor(d, {8}, rng, 0.5, 3)}};
    CpuOptions fused;
    fused.regions = {span(g, first, last)};  // everything in one kernel, outputs derived
    std::map<std::string, Tolerance> tol;
    if (d != DType::F64) tol = {{"out", {1, 0}}, {"mid", {1, 0}}};  // log2 in float
    expect_matches_interpreter(g, in, fused, {}, tol);
    CpuProgram p(g, fused);
    EXPECT_EQ(p.kernels().size(), 1u);
    EXPECT_EQ(p.kernels()[0].outputs.size(), 2u);
  }
}

TEST(CpuElementwise, FusedRegionMatchesUnfusedBitForBit) {
  Graph g;
  auto x = g.input("x", {"s"}, DType::F32);
  const NodeId first = static_cast<NodeId>(g.size());
  auto y = x;
  for (int i = 0; i < 5; ++i) y = (y * 1.25 + 0.5).sqrt() - x.recip();
  g.output("y", y);
  std::mt19937_64 rng(8);
  const TensorData in = random_tensor(DType::F32, {1000}, rng, 0.1, 10);
  CpuOptions fused;
  fused.regions = {span(g, first, static_cast<NodeId>(g.size() - 1))};
  CpuProgram one(g, fused), many(g);
  EXPECT_EQ(one.kernels().size(), 1u);
  EXPECT_GT(many.kernels().size(), 20u);
  one.set_input("x", in);
  many.set_input("x", in);
  one.run();
  many.run();
  testing::expect_close(one.output("y"), many.output("y"));
}

// The KV-cache write's row index over a [3, s, 64] loop, `(64 a2 + i + 64 s a1) / (64 s) % 3`,
// is a1: that needs a2 < s, which no numeric range of a2 says (regression, session 19:
// the kernel did an int64 division and a modulo per element, and did not vectorise).
TEST(CpuElementwise, LoopsOverDynamicExtentsBoundTheirIndexes) {
  Graph g;
  const Expr z = Expr::index_var(), s = "s";
  const NodeId first = static_cast<NodeId>(g.size());
  auto head = g.iota(z / (64 * s) % 3, 3 * s * 64, DType::I64).reshape({3, s, 64});
  auto pos = g.iota(z, s, DType::I64).reshape({1, s, 1}).expand({3, s, 64});
  g.output("rows", head * 1000 + pos);
  CpuOptions fused;
  fused.regions = {span(g, first, static_cast<NodeId>(g.size() - 1))};
  for (int64_t n : {1, 2, 7}) expect_matches_interpreter(g, {}, fused, {{"s", n}});
  const CpuProgram p(g, fused);
  ASSERT_EQ(p.kernels().size(), 1u);
  const std::string& code = p.kernels()[0].code;
  const size_t loop = code.find("for (int64_t _i");
  ASSERT_NE(loop, std::string::npos) << code;
  const std::string body = code.substr(loop, code.find('}', loop) - loop);
  EXPECT_EQ(body.find('/'), std::string::npos) << body;
  EXPECT_EQ(body.find('%'), std::string::npos) << body;
}

// Each thread's range starts anywhere in a row (ranges are multiples of 16 elements, rows
// here 7): the outer loop variables are split from the first row's index once and stepped
// row by row after that, carrying across every dimension (dynamic ones included).
TEST(CpuElementwise, ThreadRangesStartMidRowAndCarryAcrossDimensions) {
  Graph g;
  auto x = g.input("x", {2, "s", 3, 7}, DType::F32);
  auto y = g.input("y", {3, "s", 7, 2}, DType::F32);
  const NodeId first = static_cast<NodeId>(g.size());
  g.output("out", x * 2.0 + y.permute({3, 1, 0, 2}));
  std::mt19937_64 rng(19);
  for (int64_t s : {1, 5, 9}) {
    const std::map<std::string, TensorData> in{{"x", random_tensor(DType::F32, {2, s, 3, 7}, rng)},
                                               {"y", random_tensor(DType::F32, {3, s, 7, 2}, rng)}};
    for (int threads : {1, 2, 3, 7}) {
      CpuOptions fused;
      fused.regions = {span(g, first, static_cast<NodeId>(g.size() - 1))};
      fused.num_threads = threads;
      expect_matches_interpreter(g, in, fused);
    }
  }
}

// The single fused kernel of `g`'s nodes from `first` on against the
// interpreter on 1, 3 and 8 rows (inputs from `make(rows, rng)`), on 1 and 3
// threads (rows split off block and pair boundaries too); returns its source.
std::string expect_rows_match(
    const Graph& g, NodeId first, uint64_t seed,
    const std::function<std::map<std::string, TensorData>(int64_t, std::mt19937_64&)>& make) {
  CpuOptions fused;
  fused.regions = {span(g, first, static_cast<NodeId>(g.size() - 1))};
  std::mt19937_64 rng(seed);
  for (int64_t n : {1, 3, 8}) {
    const std::map<std::string, TensorData> in = make(n, rng);
    for (int threads : {1, 3}) {
      CpuOptions o = fused;
      o.num_threads = threads;
      expect_matches_interpreter(g, in, o);
    }
  }
  const CpuProgram p(g, fused);
  EXPECT_EQ(p.kernels().size(), 1u);
  return p.kernels().empty() ? std::string() : p.kernels()[0].code;
}

// The loop body starting with `header` in `code` (up to its "} else {").
std::string loop_body(const std::string& code, const std::string& header) {
  const size_t at = code.find(header);
  if (at == std::string::npos) return std::string();
  const size_t body = code.find('{', at);
  return code.substr(body, code.find("} else {", body) - body);
}

// Interleaved RoPE: each lane reads its pair partner x[2 (i >> 1) - (i & 1) + 1] and the
// tables at i >> 1. The kernel computes lane pairs in one iteration (affine indexes, no
// gathers) where a row range starts and ends even, and lane by lane otherwise (rows of
// 64 lanes split at multiples of 16 by the threads, and rows of 5 lanes).
TEST(CpuElementwise, PairedLanesMatchTheInterpreter) {
  for (int64_t lanes : {64, 10}) {
    Graph g;
    const Expr s = "s";
    const int64_t half = lanes / 2;
    auto x = g.input("x", {s, 3, lanes}, DType::F32);
    auto cos = g.input("cos", {s, half}, DType::F32);
    auto sin = g.input("sin", {s, half}, DType::F32);
    const NodeId first = static_cast<NodeId>(g.size());
    auto table = [&](Tensor t) {  // [s, half] -> [s, 3, half, 2]
      return t.reshape({s, 1, half, 1}).expand({s, 3, half, 2});
    };
    const Expr z = Expr::index_var();
    auto sign = g.iota(z * 2 - 1, 2, DType::I64).cast(DType::F32).expand({s, 3, half, 2});
    auto pairs = x.reshape({s, 3, half, 2});
    auto out = pairs * table(cos) + pairs.flip(3) * table(sin) * sign;
    g.output("out", out.reshape({s, 3, lanes}) + 0.5);
    const std::string code = expect_rows_match(g, first, 23, [&](int64_t n, std::mt19937_64& rng) {
      return std::map<std::string, TensorData>{{"x", random_tensor(DType::F32, {n, 3, lanes}, rng)},
                                               {"cos", random_tensor(DType::F32, {n, half}, rng)},
                                               {"sin", random_tensor(DType::F32, {n, half}, rng)}};
    });
    const std::string pair_loop = loop_body(code, "for (int64_t _j = _ilo >> 1;");
    ASSERT_FALSE(pair_loop.empty()) << code;
    EXPECT_EQ(pair_loop.find(">> 1)"), std::string::npos) << pair_loop;
    EXPECT_EQ(pair_loop.find("& 1"), std::string::npos) << pair_loop;
  }
}

// A row read through merged axes: heads-major [heads, s, d] transposed back to
// [s, heads * d] (an attention output before its projection) reads
// x[d s (i / d) + i % d] (shifts and masks for d = 64). The kernel runs such rows
// in blocks of d lanes (_i = d _h + _l: indexes affine in _l) where a row range
// starts and ends on a block boundary, and lane by lane otherwise (rows split
// by 3 threads, and d = 24, a block size that is not a power of two).
TEST(CpuElementwise, BlockedLanesMatchTheInterpreter) {
  for (int64_t d : {64, 24}) {
    Graph g;
    const Expr s = "s";
    auto x = g.input("x", {4, s, d}, DType::F32);
    auto w = g.input("w", {s, 4 * d}, DType::F32);
    const NodeId first = static_cast<NodeId>(g.size());
    g.output("out", x.permute({1, 0, 2}).reshape({s, 4 * d}) * w + 0.5);
    const std::string code = expect_rows_match(g, first, 29, [&](int64_t n, std::mt19937_64& rng) {
      return std::map<std::string, TensorData>{{"x", random_tensor(DType::F32, {4, n, d}, rng)},
                                               {"w", random_tensor(DType::F32, {n, 4 * d}, rng)}};
    });
    const std::string block_loop =
        loop_body(code, "for (int64_t _h = _ilo / " + std::to_string(d) + ";");
    ASSERT_FALSE(block_loop.empty()) << code;
    EXPECT_EQ(block_loop.find("_i"), std::string::npos) << block_loop;
    EXPECT_EQ(block_loop.find(">>"), std::string::npos) << block_loop;
    EXPECT_EQ(block_loop.find(" / "), std::string::npos) << block_loop;
  }
}

TEST(CpuElementwise, IntegerModByZeroIsAnError) {
  Graph g;
  auto a = g.input("a", {4}, DType::I32);
  auto b = g.input("b", {4}, DType::I32);
  g.output("m", a % b);
  CpuProgram p(g, fused_outputs(g));
  p.set_input("a", TensorData::from_ints(DType::I32, {4}, {5, 6, 7, 8}));
  p.set_input("b", TensorData::from_ints(DType::I32, {4}, {1, 2, 0, 3}));
  try {
    p.run();
    FAIL() << "no error for modulo by zero";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Mod %"), std::string::npos) << msg;
    EXPECT_NE(msg.find("modulo by zero at element 2"), std::string::npos) << msg;
  }
}

TEST(CpuElementwise, QuantizedStorageIsRejected) {
  Graph g;
  auto w = g.input("w", {32}, DType::Q8_0);
  g.output("w2", w);
  EXPECT_THROW(CpuProgram p(g), DTypeError);
}

}  // namespace
}  // namespace luminal::cpu
