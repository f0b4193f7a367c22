// The reference interpreter: every primitive op, views, dims, persistence and
// the corner cases of SPEC section 2. Expected values are hand-computed or come
// from the C library on the same inputs, never from the interpreter itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "luminal/luminal.hpp"

using namespace luminal;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorData f32(std::vector<int64_t> shape, std::vector<double> v) {
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}
TensorData ints(DType d, std::vector<int64_t> shape, std::vector<int64_t> v) {
  return TensorData::from_ints(d, std::move(shape), v);
}

// Builds nothing; runs `g` with the given inputs and returns output "out".
TensorData run(const Graph& g, std::map<std::string, TensorData> inputs, const DimMap& dims = {}) {
  Interpreter it(g);
  for (auto& [name, data] : inputs) it.set_input(name, data);
  it.run(dims);
  return it.output("out");
}

void expect_values(const TensorData& t, const std::vector<double>& want) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size())) << t.describe();
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(t.get(static_cast<int64_t>(i)))) << i;
    else
      EXPECT_EQ(t.get(static_cast<int64_t>(i)), want[i]) << "element " << i;
  }
}

void expect_ints(const TensorData& t, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size())) << t.describe();
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(t.get_int(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

}  // namespace

TEST(Interpreter, AddMulWithBroadcast) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  Tensor b = g.input("b", {3});
  g.output("out", x * 2.0 + b);
  expect_values(run(g, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3}, {10, 20, 30})}}),
                {12, 24, 36, 18, 30, 42});
}

TEST(Interpreter, MatmulAsBroadcastMulSum) {
  Graph g;
  Tensor a = g.input("a", {2, 3});
  Tensor b = g.input("b", {3, 2});
  g.output("out", (a.unsqueeze(2) * b.unsqueeze(0)).sum_reduce(1));
  // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  expect_values(
      run(g, {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3, 2}, {7, 8, 9, 10, 11, 12})}}),
      {58, 64, 139, 154});
}

// A product whose Mul only its SumReduce reads is summed without storing the
// Mul (Interpreter::run fuses them), but each product is still rounded to f32
// first: (1 + 2^-22)(1 - 2^-23) = 1 + 2^-23 - 2^-45 rounds to 1 + 2^-23, three
// of those sum to the tie 3 + 1.5 * 2^-22, which rounds to even: 3 + 2^-21
// (the unrounded products would sum to just below the tie: 3 + 2^-22). The
// same with the Mul also an output (not fused), and its values.
TEST(Interpreter, ProductsAreRoundedToTheMulsDtypeBeforeTheSum) {
  for (bool mul_is_output : {false, true}) {
    Graph g;
    Tensor a = g.input("a", {1, 3});
    Tensor b = g.input("b", {3, 1});
    Tensor m = a.unsqueeze(2) * b.unsqueeze(0);
    g.output("out", m.sum_reduce(1));
    if (mul_is_output) g.output("mul", m);
    Interpreter it(g);
    it.set_input("a", f32({1, 3}, std::vector<double>(3, 1 + std::ldexp(1.0, -22))));
    it.set_input("b", f32({3, 1}, std::vector<double>(3, 1 - std::ldexp(1.0, -23))));
    it.run();
    expect_values(it.output("out"), {3 + std::ldexp(1.0, -21)});
    if (mul_is_output)
      expect_values(it.output("mul"), std::vector<double>(3, 1 + std::ldexp(1.0, -23)));
  }
}

TEST(Interpreter, OutputOfPermutedViewIsDense) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  g.output("out", x.transpose(0, 1));
  TensorData out = run(g, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2}));
  expect_values(out, {1, 4, 2, 5, 3, 6});
}

TEST(Interpreter, SliceFlipRepeatViews) {
  Graph g;
  Tensor x = g.input("x", {6});
  g.output("out", x.slice(0, 1, 6, 2).flip(0).unsqueeze(0).repeat_axis(0, 2));
  // x[1:6:2] = [1, 3, 5] -> flip [5, 3, 1] -> repeated twice
  expect_values(run(g, {{"x", f32({6}, {0, 1, 2, 3, 4, 5})}}), {5, 3, 1, 5, 3, 1});
}

TEST(Interpreter, ReshapeOfTransposedCopies) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  g.output("out", x.transpose(0, 1).reshape({6}));
  expect_values(run(g, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}}), {1, 4, 2, 5, 3, 6});
}

TEST(Interpreter, ContiguousPreservesNegativeZeroAndNaN) {
  Graph g;
  Tensor x = g.input("x", {3});
  g.output("out", x.contiguous());
  TensorData out = run(g, {{"x", f32({3}, {-0.0, kNaN, kInf})}});
  EXPECT_TRUE(std::signbit(out.get(0)));
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_EQ(out.get(2), kInf);
}

TEST(Interpreter, UnaryOpsMatchTheCLibrary) {
  const std::vector<double> xs = {0.5, 1.0, 2.0, 3.7, 10.0};
  struct Case {
    OpKind kind;
    double (*ref)(double);
  };
  const Case cases[] = {
      {OpKind::Exp2, [](double v) { return static_cast<double>(std::exp2(v)); }},
      {OpKind::Log2, [](double v) { return static_cast<double>(std::log2(v)); }},
      {OpKind::Sin, [](double v) { return static_cast<double>(std::sin(v)); }},
      {OpKind::Sqrt, [](double v) { return static_cast<double>(std::sqrt(v)); }},
      {OpKind::Recip, [](double v) { return 1.0 / v; }},
  };
  for (const Case& c : cases) {
    Graph g;
    Tensor x = g.input("x", {5});
    g.output("out", g.unary(c.kind, x));
    TensorData out = run(g, {{"x", f32({5}, xs)}});
    for (size_t i = 0; i < xs.size(); ++i) {
      // f32 result: the double result rounded once to float.
      EXPECT_EQ(out.get(static_cast<int64_t>(i)),
                static_cast<double>(static_cast<float>(c.ref(static_cast<float>(xs[i])))))
          << op_name(c.kind) << " at " << xs[i];
    }
  }
}

TEST(Interpreter, UnaryEdgeValues) {
  Graph g;
  Tensor x = g.input("x", {4});
  g.output("out", x.log2());
  expect_values(run(g, {{"x", f32({4}, {0.0, -1.0, kInf, 1.0})}}), {-kInf, kNaN, kInf, 0.0});
  Graph h;
  Tensor y = h.input("x", {3});
  h.output("out", y.recip());
  TensorData r = run(h, {{"x", f32({3}, {0.0, -0.0, kInf})}});
  EXPECT_EQ(r.get(0), kInf);
  EXPECT_EQ(r.get(1), -kInf);
  EXPECT_EQ(r.get(2), 0.0);
}

TEST(Interpreter, F16ArithmeticRoundsToF16) {
  Graph g;
  Tensor x = g.input("x", {2}, DType::F16);
  g.output("out", x.recip());
  // 1/3 in f16 is 0x3555 = 1365/4096 = 0.333251953125; 1/10 is 0x2e66 = 0.0999755859375.
  expect_values(run(g, {{"x", TensorData::from_doubles(DType::F16, {2}, {3.0, 10.0})}}),
                {0.333251953125, 0.0999755859375});
}

TEST(Interpreter, BF16AddRoundsToNearestEven) {
  Graph g;
  Tensor a = g.input("a", {2}, DType::BF16);
  Tensor b = g.input("b", {2}, DType::BF16);
  g.output("out", a + b);
  // bf16 has 8 significant bits: 256 + 1 = 257 ties between 256 and 258 -> 256 (even);
  // 256 + 3 = 259 ties between 258 and 260 -> 260 (even mantissa).
  TensorData out = run(g, {{"a", TensorData::from_doubles(DType::BF16, {2}, {256, 256})},
                           {"b", TensorData::from_doubles(DType::BF16, {2}, {1, 3})}});
  expect_values(out, {256, 260});
}

TEST(Interpreter, IntegerAddWrapsAround) {
  Graph g;
  Tensor a = g.input("a", {2}, DType::I32);
  Tensor b = g.input("b", {2}, DType::I32);
  g.output("out", a + b);
  expect_ints(run(g, {{"a", ints(DType::I32, {2}, {2147483647, -2147483648LL})},
                      {"b", ints(DType::I32, {2}, {1, -1})}}),
              {-2147483648LL, 2147483647});
}

TEST(Interpreter, NarrowIntegerMulWraps) {
  Graph g;
  Tensor a = g.input("a", {2}, DType::U8);
  Tensor b = g.input("b", {2}, DType::U8);
  g.output("out", a * b);
  // 100 * 3 = 300 = 44 mod 256; 16 * 16 = 256 = 0 mod 256
  expect_ints(
      run(g, {{"a", ints(DType::U8, {2}, {100, 16})}, {"b", ints(DType::U8, {2}, {3, 16})}}),
      {44, 0});
  Graph h;
  Tensor c = h.input("c", {1}, DType::I8);
  h.output("out", c * c);
  expect_ints(run(h, {{"c", ints(DType::I8, {1}, {-128})}}), {0});  // 16384 mod 256
}

TEST(Interpreter, Int64WrapsWithoutUndefinedBehaviour) {
  Graph g;
  Tensor a = g.input("a", {1}, DType::I64);
  g.output("out", a * a + a);
  const int64_t big = std::numeric_limits<int64_t>::max();
  // big*big = (2^63-1)^2 = 2^126 - 2^64 + 1 = 1 mod 2^64; 1 + big = big + 1 = INT64_MIN
  expect_ints(run(g, {{"a", ints(DType::I64, {1}, {big})}}), {std::numeric_limits<int64_t>::min()});
}

TEST(Interpreter, IntegerModTakesTheSignOfTheDividend) {
  Graph g;
  Tensor a = g.input("a", {4}, DType::I32);
  Tensor b = g.input("b", {4}, DType::I32);
  g.output("out", a % b);
  expect_ints(run(g, {{"a", ints(DType::I32, {4}, {7, -7, 7, -7})},
                      {"b", ints(DType::I32, {4}, {3, 3, -3, -3})}}),
              {1, -1, 1, -1});
}

TEST(Interpreter, FloatModIsFmod) {
  Graph g;
  Tensor a = g.input("a", {3});
  Tensor b = g.input("b", {3});
  g.output("out", a % b);
  expect_values(run(g, {{"a", f32({3}, {-7.5, 7.5, 5.0})}, {"b", f32({3}, {2, -2, kInf})}}),
                {-1.5, 1.5, 5.0});
}

TEST(Interpreter, IntegerModByZeroThrows) {
  Graph g;
  Tensor a = g.input("a", {2}, DType::I32);
  Tensor b = g.input("b", {2}, DType::I32);
  g.output("out", a % b);
  EXPECT_THROW(run(g, {{"a", ints(DType::I32, {2}, {1, 2})}, {"b", ints(DType::I32, {2}, {1, 0})}}),
               Error);
}

TEST(Interpreter, Int64MinModMinusOneIsZero) {
  Graph g;
  Tensor a = g.input("a", {1}, DType::I64);
  Tensor b = g.input("b", {1}, DType::I64);
  g.output("out", a % b);
  expect_ints(run(g, {{"a", ints(DType::I64, {1}, {std::numeric_limits<int64_t>::min()})},
                      {"b", ints(DType::I64, {1}, {-1})}}),
              {0});
}

TEST(Interpreter, FloatToIntCastTruncatesTowardZero) {
  Graph g;
  Tensor x = g.input("x", {6});
  g.output("out", x.cast(DType::I32));
  expect_ints(run(g, {{"x", f32({6}, {2.7, -2.7, 0.5, -0.5, 7.0, -0.0})}}), {2, -2, 0, 0, 7, 0});
}

TEST(Interpreter, FloatToIntCastSaturatesAndMapsNaNToZero) {
  Graph g;
  Tensor x = g.input("x", {5});
  g.output("out", x.cast(DType::I32));
  expect_ints(run(g, {{"x", f32({5}, {1e10, -1e10, kInf, -kInf, kNaN})}}),
              {2147483647, -2147483648LL, 2147483647, -2147483648LL, 0});
  Graph h;
  Tensor y = h.input("x", {3});
  h.output("out", y.cast(DType::U8));
  expect_ints(run(h, {{"x", f32({3}, {300.0, -5.0, 255.9})}}), {255, 0, 255});
}

TEST(Interpreter, IntToIntCastWraps) {
  Graph g;
  Tensor x = g.input("x", {3}, DType::I32);
  g.output("out", x.cast(DType::I8));
  expect_ints(run(g, {{"x", ints(DType::I32, {3}, {127, 128, -129})}}), {127, -128, 127});
}

TEST(Interpreter, CastToBoolIsNonZero) {
  Graph g;
  Tensor x = g.input("x", {5});
  g.output("out", x.cast(DType::Bool));
  expect_ints(run(g, {{"x", f32({5}, {0.0, -0.0, 0.25, kNaN, -3})}}), {0, 0, 1, 1, 1});
  Graph h;
  Tensor y = h.input("x", {3}, DType::I32);
  h.output("out", y.cast(DType::Bool));
  expect_ints(run(h, {{"x", ints(DType::I32, {3}, {0, 2, -256})}}), {0, 1, 1});
}

TEST(Interpreter, CastBoolAndIntToFloat) {
  Graph g;
  Tensor x = g.input("x", {2}, DType::Bool);
  g.output("out", x.cast(DType::F16));
  expect_values(run(g, {{"x", ints(DType::Bool, {2}, {1, 0})}}), {1.0, 0.0});
  Graph h;
  Tensor y = h.input("x", {2}, DType::I32);
  h.output("out", y.cast(DType::F16));
  // 2049 is not representable in f16 (11 significant bits): ties to even -> 2048.
  expect_values(run(h, {{"x", ints(DType::I32, {2}, {2049, -7})}}), {2048, -7});
}

TEST(Interpreter, LessThanOnBoolIntAndNaN) {
  Graph g;
  Tensor a = g.input("a", {4}, DType::Bool);
  Tensor b = g.input("b", {4}, DType::Bool);
  g.output("out", a.lt(b));
  expect_ints(run(g, {{"a", ints(DType::Bool, {4}, {0, 0, 1, 1})},
                      {"b", ints(DType::Bool, {4}, {0, 1, 0, 1})}}),
              {0, 1, 0, 0});
  Graph h;
  Tensor x = h.input("x", {3});
  Tensor y = h.input("y", {3});
  h.output("out", x.lt(y));
  expect_ints(run(h, {{"x", f32({3}, {kNaN, 1, -kInf})}, {"y", f32({3}, {1, kNaN, 0})}}),
              {0, 0, 1});
}

TEST(Interpreter, BoolAddIsOrMulIsAnd) {
  Graph g;
  Tensor a = g.input("a", {4}, DType::Bool);
  Tensor b = g.input("b", {4}, DType::Bool);
  g.output("out", a + b);
  g.output("and", a * b);
  Interpreter it(g);
  it.set_input("a", ints(DType::Bool, {4}, {0, 0, 1, 1}));
  it.set_input("b", ints(DType::Bool, {4}, {0, 1, 0, 1}));
  it.run();
  expect_ints(it.output("out"), {0, 1, 1, 1});
  expect_ints(it.output("and"), {0, 0, 0, 1});
}

TEST(Interpreter, IotaEvaluatesItsExpressionWithDims) {
  Graph g;
  Expr z = Expr::index_var();
  g.output("out", g.iota(z * 2 + Expr("p"), "n"));
  Interpreter it(g);
  it.run({{"p", 5}, {"n", 4}});
  expect_ints(it.output("out"), {5, 7, 9, 11});
  EXPECT_EQ(it.output("out").dtype(), DType::I32);
}

TEST(Interpreter, ConstantBroadcast) {
  Graph g;
  g.output("out", g.constant(2.5).expand({2, 2}));
  expect_values(run(g, {}), {2.5, 2.5, 2.5, 2.5});
}

TEST(Interpreter, GatherReadsTheLogicalFlatView) {
  Graph g;
  Tensor data = g.input("d", {2, 3});
  Tensor idx = g.input("i", {2, 2}, DType::I32);
  g.output("out", idx.gather_from(data.transpose(0, 1)));
  // data^T = [[0,3],[1,4],[2,5]] flat = [0,3,1,4,2,5]
  TensorData out = run(
      g, {{"d", f32({2, 3}, {0, 1, 2, 3, 4, 5})}, {"i", ints(DType::I32, {2, 2}, {0, 1, 5, 2})}});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  expect_values(out, {0, 3, 5, 1});
}

TEST(Interpreter, GatherOutOfRangeThrowsIndexError) {
  Graph g;
  Tensor data = g.input("d", {4});
  Tensor idx = g.input("i", {2}, DType::I64);
  g.output("out", idx.gather_from(data));
  try {
    run(g, {{"d", f32({4}, {1, 2, 3, 4})}, {"i", ints(DType::I64, {2}, {1, 4})}});
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("Gather"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 4"), std::string::npos) << msg;
  }
  EXPECT_THROW(run(g, {{"d", f32({4}, {1, 2, 3, 4})}, {"i", ints(DType::I64, {2}, {-1, 0})}}),
               IndexError);
}

TEST(Interpreter, ScatterSkipsOutOfRangeAndLastWriteWins) {
  Graph g;
  Tensor dest = g.input("dest", {4});
  Tensor idx = g.input("i", {5}, DType::I32);
  Tensor src = g.input("src", {5});
  g.output("out", dest.scatter(idx, src));
  TensorData out = run(g, {{"dest", f32({4}, {0, 0, 0, 0})},
                           {"i", ints(DType::I32, {5}, {1, 1, 7, -1, 3})},
                           {"src", f32({5}, {10, 20, 30, 40, 50})}});
  expect_values(out, {0, 20, 0, 50});
}

TEST(Interpreter, ScatterIntoAKvCacheRow) {
  // cache [4, 2]; write one new row at position p through flat indexes p*2 + {0, 1}.
  Graph g;
  Tensor cache = g.weight("cache", {4, 2});
  Tensor row = g.input("row", {2});
  Expr z = Expr::index_var();
  Tensor idx = g.iota(Expr("p") * 2 + z, 2);
  g.output("out", cache.scatter(idx, row));
  Interpreter it(g);
  it.set_input("cache", f32({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4}));
  it.set_input("row", f32({2}, {9, 8}));
  it.run({{"p", 2}});
  expect_values(it.output("out"), {1, 1, 2, 2, 9, 8, 4, 4});
}

TEST(Interpreter, SumReduceEachAxis) {
  for (int axis = 0; axis < 3; ++axis) {
    Graph g;
    Tensor x = g.input("x", {2, 3, 4});
    g.output("out", x.sum_reduce(axis));
    std::vector<double> v(24);
    for (int i = 0; i < 24; ++i) v[i] = i;
    TensorData out = run(g, {{"x", f32({2, 3, 4}, v)}});
    // Expected by direct summation over the row-major layout.
    std::vector<int64_t> shape = {2, 3, 4};
    std::vector<double> want;
    int64_t sz[3] = {2, 3, 4};
    for (int64_t a = 0; a < (axis == 0 ? 1 : 2); ++a)
      for (int64_t b = 0; b < (axis == 1 ? 1 : 3); ++b)
        for (int64_t c = 0; c < (axis == 2 ? 1 : 4); ++c) {
          double s = 0;
          for (int64_t r = 0; r < sz[axis]; ++r) {
            int64_t i0 = axis == 0 ? r : a, i1 = axis == 1 ? r : b, i2 = axis == 2 ? r : c;
            s += v[i0 * 12 + i1 * 4 + i2];
          }
          want.push_back(s);
        }
    expect_values(out, want);
  }
}

// SumReduce adds each output's elements in axis order, in double: along the
// middle axis of a permuted view, (1e20 + 1) - 1e20 = 0 (the 1 is lost) where
// (1e20 - 1e20) + 1 = 1, and both sums come out where their order says.
TEST(Interpreter, SumReduceAddsInAxisOrderThroughAView) {
  Graph g;
  Tensor x = g.input("x", {2, 3, 2});  // read as [3, 2, 2] (axes 1, 0, 2)
  g.output("out", x.permute({1, 0, 2}).sum_reduce(0));
  // x[i, r, j]: column (i, j) = (0, 0) holds 1e20, 1, -1e20 along r; (1, 1)
  // holds 1e20, -1e20, 1; the others 1, 2, 3.
  std::vector<double> v(12, 0.0);
  auto at = [&](int i, int r, int j) -> double& { return v[i * 6 + r * 2 + j]; };
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int r = 0; r < 3; ++r) at(i, r, j) = r + 1;
  at(0, 0, 0) = 1e20, at(0, 1, 0) = 1, at(0, 2, 0) = -1e20;
  at(1, 0, 1) = 1e20, at(1, 1, 1) = -1e20, at(1, 2, 1) = 1;
  expect_values(run(g, {{"x", f32({2, 3, 2}, v)}}), {0, 6, 6, 1});
}

TEST(Interpreter, IntegerSumWraps) {
  Graph g;
  Tensor x = g.input("x", {3}, DType::I8);
  g.output("out", x.sum_reduce(0));
  expect_ints(run(g, {{"x", ints(DType::I8, {3}, {100, 100, 100})}}), {44});  // 300 - 256
}

TEST(Interpreter, MaxReduceOfEmptyAxis) {
  Graph g;
  Tensor x = g.input("x", {2, 0});
  g.output("out", x.max_reduce(1));
  expect_values(run(g, {{"x", f32({2, 0}, {})}}), {-kInf, -kInf});
  Graph h;
  Tensor y = h.input("x", {0}, DType::I32);
  h.output("out", y.max_reduce(0));
  expect_ints(run(h, {{"x", ints(DType::I32, {0}, {})}}), {-2147483648LL});
  Graph k;
  Tensor s = k.input("x", {2, 0});
  k.output("out", s.sum_reduce(1));
  expect_values(run(k, {{"x", f32({2, 0}, {})}}), {0, 0});
}

TEST(Interpreter, MaxReducePropagatesNaN) {
  Graph g;
  Tensor x = g.input("x", {3, 3});
  g.output("out", x.max_reduce(1));
  expect_values(run(g, {{"x", f32({3, 3}, {1, kNaN, 3, 4, 5, kNaN, kNaN, -kInf, 2})}}),
                {kNaN, kNaN, kNaN});
  Graph h;
  Tensor y = h.input("x", {4});
  h.output("out", y.max_reduce(0));
  expect_values(run(h, {{"x", f32({4}, {-kInf, -3, kInf, 2})}}), {kInf});
}

TEST(Interpreter, PersistentInputsSurviveRunsWithDifferentDims) {
  Graph g;
  Tensor x = g.input("x", {"s", 2});
  Tensor w = g.weight("w", {2});
  g.output("out", (x * w).sum_reduce(1));
  Interpreter it(g);
  it.set_input("w", f32({2}, {1, 10}));
  for (int64_t s : {1, 4, 2}) {
    std::vector<double> xs;
    std::vector<double> want;
    for (int64_t r = 0; r < s; ++r) {
      xs.push_back(static_cast<double>(r));
      xs.push_back(static_cast<double>(r + 1));
      want.push_back(static_cast<double>(r + 10 * (r + 1)));
    }
    it.set_input("x", f32({s, 2}, xs));
    it.run();
    EXPECT_EQ(it.dims().at("s"), s);
    expect_values(it.output("out"), want);
    EXPECT_TRUE(it.has_input("w"));
    EXPECT_FALSE(it.has_input("x"));  // non-persistent inputs are released
  }
}

TEST(Interpreter, MissingInputThrowsLookupError) {
  Graph g;
  Tensor x = g.input("x", {2});
  g.output("out", x.sqrt());
  Interpreter it(g);
  try {
    it.run();
    FAIL() << "expected LookupError";
  } catch (const LookupError& e) {
    EXPECT_NE(std::string(e.what()).find("\"x\""), std::string::npos) << e.what();
  }
}

TEST(Interpreter, UnknownInputNameListsTheInputs) {
  Graph g;
  g.input("tokens", {4}, DType::I32);
  Interpreter it(g);
  try {
    it.set_input("tokenz", ints(DType::I32, {4}, {0, 1, 2, 3}));
    FAIL() << "expected LookupError";
  } catch (const LookupError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("tokenz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tokens"), std::string::npos) << msg;
  }
}

TEST(Interpreter, WrongDtypeOrRankRejectedAtSetInput) {
  Graph g;
  g.input("x", {"s", 4});
  Interpreter it(g);
  EXPECT_THROW(
      it.set_input("x", TensorData::from_doubles(DType::F16, {2, 4}, std::vector<double>(8))),
      DTypeError);
  EXPECT_THROW(it.set_input("x", f32({8}, std::vector<double>(8))), ShapeError);
}

// A fixed shape (no dims) is checked when the input is set: runs then skip it.
TEST(Interpreter, WrongSizeForAFixedShapeThrowsAtSetInput) {
  Graph g;
  Tensor w = g.weight("w", {3, 4});
  g.output("out", w.sqrt());
  Interpreter it(g);
  try {
    it.set_input("w", f32({4, 3}, std::vector<double>(12, 1.0)));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("\"w\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3, 4]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 3]"), std::string::npos) << msg;
  }
  EXPECT_FALSE(it.has_input("w"));
}

TEST(Interpreter, WrongSizeForDeclaredDimThrows) {
  Graph g;
  Tensor x = g.input("x", {"s", 4});
  g.output("out", x.sqrt());
  Interpreter it(g);
  it.set_input("x", f32({2, 3}, std::vector<double>(6, 1.0)));
  try {
    it.run();
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("[s, 4]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  }
}

TEST(Interpreter, ConflictingDimValuesThrow) {
  Graph g;
  Tensor a = g.input("a", {"s"});
  Tensor b = g.input("b", {"s"});
  g.output("out", a + b);
  Interpreter it(g);
  it.set_input("a", f32({3}, {1, 2, 3}));
  it.set_input("b", f32({4}, {1, 2, 3, 4}));
  EXPECT_THROW(it.run(), ShapeError);
}

TEST(Interpreter, DerivedDimsAreCheckedAgainstInferredOnes) {
  // k_cache: [p + s, 2] with s from x and p given explicitly.
  Graph g;
  Tensor x = g.input("x", {"s", 2});
  Tensor k = g.input("k", {Expr("p") + Expr("s"), 2});
  g.output("out", k.sum_reduce(0) + x.sum_reduce(0));
  Interpreter it(g);
  it.set_input("x", f32({1, 2}, {1, 1}));
  it.set_input("k", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  it.run({{"p", 2}});
  expect_values(it.output("out"), {10, 13});
  it.set_input("x", f32({1, 2}, {1, 1}));
  it.set_input("k", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(it.run({{"p", 5}}), ShapeError);
  it.set_input("x", f32({1, 2}, {1, 1}));
  it.set_input("k", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(it.run(), LookupError);  // p is unknown
}

TEST(Interpreter, UnknownOutputAndOutputBeforeRun) {
  Graph g;
  Tensor x = g.input("x", {1});
  g.output("out", x);
  Interpreter it(g);
  EXPECT_THROW(it.output("out"), LookupError);
  EXPECT_THROW(it.output("nope"), LookupError);
}

TEST(Interpreter, OnlyNodesOutputsNeedAreEvaluated) {
  // An unused branch with an out-of-range gather must not run.
  Graph g;
  Tensor x = g.input("x", {2});
  Tensor bad = g.constant_int(99, DType::I32).unsqueeze(0);
  (void)bad.gather_from(x);
  g.output("out", x * 3.0);
  expect_values(run(g, {{"x", f32({2}, {1, 2})}}), {3, 6});
}

TEST(Interpreter, SoftmaxFromPrimitivesMatchesDirectFormula) {
  Graph g;
  Tensor x = g.input("x", {2, 3});
  Tensor m = x.max_reduce(1).unsqueeze(1).expand(x.shape());
  Tensor e = ((x - m) * (1.0 / std::log(2.0))).exp2();
  g.output("out", e / e.sum_reduce(1).unsqueeze(1).expand(x.shape()));
  std::vector<double> xs = {1, 2, 3, -1, 0, 1000};
  TensorData out = run(g, {{"x", f32({2, 3}, xs)}});
  for (int r = 0; r < 2; ++r) {
    double mx = std::max({xs[r * 3], xs[r * 3 + 1], xs[r * 3 + 2]});
    double den = 0;
    for (int c = 0; c < 3; ++c) den += std::exp(xs[r * 3 + c] - mx);
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(out.get(r * 3 + c), std::exp(xs[r * 3 + c] - mx) / den, 1e-6);
  }
}

TEST(Interpreter, Fp8StorageCastsToF32) {
  Graph g;
  Tensor w = g.weight("w", {3}, DType::F8E4M3);
  g.output("out", w.cast(DType::F32));
  // 0.3 rounds to e4m3 0.3125 (1.25 * 2^-2); 448 is the largest finite; -2 is exact.
  expect_values(run(g, {{"w", TensorData::from_doubles(DType::F8E4M3, {3}, {0.3, 448, -2})}}),
                {0.3125, 448, -2});
}
