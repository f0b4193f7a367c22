// Generated reduction kernels against the reference interpreter: every axis
// and dtype, empty axes, NaN / signed-zero order, fused producers and
// consumers, a whole softmax in one kernel, and compensated summation.
//
// Float sums are compared with a tolerance derived from the kernel's error
// bound (codegen.hpp): f32 / f16 / bf16 sums accumulate in double lanes and
// are rounded once, f64 sums in 32 lanes of Kahan sums added pairwise, within
// about 6 eps * sum|x| of the exact sum, whatever the length; we allow
// 8 eps * L * max|x| (>= 8 eps * sum|x|) plus one ulp of the result for the
// final rounding to the dtype. The interpreter's double sum is within
// L * 2^-53 * sum|x| of the exact sum, far inside that. Rows long enough for
// the lane loops (>= 32) are tested in reduce_lanes_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

using testing::expect_close;
using testing::expect_matches_interpreter;
using testing::fused_outputs;
using testing::random_tensor;
using testing::Tolerance;

double eps_of(DType d) {
  return d == DType::F64 ? 0x1p-52 : 0x1p-23;  // f16 / bf16 accumulate in float
}

Tolerance sum_tolerance(DType d, int64_t length, double max_abs) {
  if (!is_float(d)) return {};
  return {1.0, 8 * eps_of(d) * static_cast<double>(length) * max_abs};
}

TEST(CpuReduce, SumAndMaxOverEveryAxisInEveryDtype) {
  Graph g;
  std::mt19937_64 rng(21);
  std::map<std::string, TensorData> inputs;
  std::map<std::string, Tolerance> tol;
  const std::vector<int64_t> shape{3, 5, 17};  // 17 = two blocks of 8 lanes + a tail
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64,
                  DType::I8, DType::U8, DType::Bool}) {
    const std::string s(dtype_name(d));
    auto x = g.input("x_" + s, {3, 5, 17}, d);
    inputs["x_" + s] = random_tensor(d, shape, rng, -4, 4);
    const Tensor views[] = {x, x.permute({2, 0, 1}).flip(1)};
    for (int v = 0; v < 2; ++v) {
      for (int axis = 0; axis < 3; ++axis) {
        const std::string tag = s + "_" + std::to_string(v) + std::to_string(axis);
        const int64_t len = *views[v].shape()[static_cast<size_t>(axis)].as_const();
        if (d != DType::Bool) {
          g.output("sum_" + tag, views[v].sum_reduce(axis));
          tol["sum_" + tag] = sum_tolerance(d, len, 4.0);
        }
        g.output("max_" + tag, views[v].max_reduce(axis));
      }
    }
  }
  expect_matches_interpreter(g, inputs, fused_outputs(g), {}, tol);
}

TEST(CpuReduce, SpecialValuesAndEmptyAxes) {
  Graph g;
  auto x = g.input("x", {4, "n"}, DType::F32);
  auto i = g.input("i", {4, "n"}, DType::I8);
  auto b = g.input("b", {4, "n"}, DType::Bool);
  g.output("sum", x.sum_reduce(1));
  g.output("max", x.max_reduce(1));
  g.output("imax", i.max_reduce(1));
  g.output("isum", i.sum_reduce(1));
  g.output("bmax", b.max_reduce(1));
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  // Rows: inf and -inf meet (NaN); NaN after a number; signed zeros (the first
  // maximum stays: -0 here, see op.hpp); a plain row.
  std::map<std::string, TensorData> in{
      {"x", TensorData::from_doubles(DType::F32, {4, 3},
                                     {inf, 1, -inf, 2, nan, 3, -0.0, 0.0, -0.0, 1, 2, 3})},
      {"i",
       TensorData::from_ints(DType::I8, {4, 3}, {100, 100, 100, -128, -128, -1, 5, 6, 7, 0, 0, 0})},
      {"b", TensorData::from_ints(DType::Bool, {4, 3}, {0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1})}};
  expect_matches_interpreter(g, in, fused_outputs(g));
  // Empty axis: sum 0, max -inf / the dtype minimum / false.
  std::map<std::string, TensorData> empty{{"x", TensorData(DType::F32, {4, 0})},
                                          {"i", TensorData(DType::I8, {4, 0})},
                                          {"b", TensorData(DType::Bool, {4, 0})}};
  expect_matches_interpreter(g, empty, fused_outputs(g));
  CpuProgram p(g);
  for (const auto& [name, data] : empty) p.set_input(name, data);
  p.run();
  EXPECT_EQ(p.output("max").get(0), -inf);
  EXPECT_EQ(p.output("imax").get_int(0), -128);
  EXPECT_EQ(p.output("sum").get(3), 0.0);
}

TEST(CpuReduce, CompensatedSumKeepsTinyAddends) {
  // 1 followed by 4096 copies of half an ulp of 1: a plain sum in the dtype
  // stays at 1 (every addition rounds back to 1); the exact sum 1 + 2^12 ulp/2
  // is representable. f32 accumulates in double lanes, f64 in Kahan lanes.
  for (DType d : {DType::F32, DType::F64}) {
    const double half_ulp = d == DType::F32 ? 0x1p-24 : 0x1p-53;
    Graph g;
    auto x = g.input("x", {"n"}, d);
    g.output("s", x.sum_reduce(0));
    std::vector<double> v(4097, half_ulp);
    v[0] = 1.0;
    CpuProgram p(g);
    p.set_input("x", TensorData::from_doubles(d, {4097}, v));
    p.run();
    EXPECT_EQ(p.output("s").get(0), 1.0 + 4096 * half_ulp) << dtype_name(d);
    v[100] = -std::numeric_limits<double>::infinity();  // a compensated lane meets -inf
    p.set_input("x", TensorData::from_doubles(d, {4097}, v));
    p.run();
    EXPECT_EQ(p.output("s").get(0), v[100]) << dtype_name(d);

    // A long random sum stays within the documented bound.
    std::mt19937_64 rng(22);
    const int64_t n = 200000;
    const TensorData big = random_tensor(d, {n}, rng, -1, 1);
    expect_matches_interpreter(g, {{"x", big}}, {}, {}, {{"s", {1, 8 * eps_of(d) * n}}});
  }
}

// Every computed node from `first` on, in one region (outputs derived).
Region tail_region(const Graph& g, NodeId first) {
  Region r;
  for (NodeId i = first; i < g.size(); ++i)
    if (g.node(i).kind != OpKind::Input) r.nodes.push_back(i);
  return r;
}

TEST(CpuReduce, ProducersAndConsumersFused) {
  for (DType d : {DType::F32, DType::BF16, DType::F64}) {
    Graph g;
    auto x = g.input("x", {"s", 19}, d);
    auto w = g.input("w", {19}, d);
    const NodeId first = static_cast<NodeId>(g.size());
    auto dot = (x * w + 1.0).sum_reduce(1);        // producers fused into the sum
    auto y = dot.recip() * 3.0 + x.max_reduce(1);  // consumers and a second reduction
    g.output("y", y);
    std::mt19937_64 rng(23);
    std::map<std::string, TensorData> in{{"x", random_tensor(d, {6, 19}, rng, 0.5, 2)},
                                         {"w", random_tensor(d, {19}, rng, 0.5, 2)}};
    CpuOptions one;
    one.regions = {tail_region(g, first)};
    // The sum is within 8 eps * 19 * 5 of exact, which moves its reciprocal (~1/50) by
    // much less than an ulp of the result; allow 2 ulps for the rounding steps after it.
    expect_matches_interpreter(g, in, one, {}, {{"y", {2, 0}}});
    EXPECT_EQ(CpuProgram(g, one).kernels().size(), 1u);
  }
}

TEST(CpuReduce, SoftmaxInOneKernel) {
  Graph g;
  auto x = g.input("x", {"rows", "n"}, DType::F32);
  const NodeId first = static_cast<NodeId>(g.size());
  const Expr rows("rows"), n("n");
  auto m = x.max_reduce(1).unsqueeze(1).expand({rows, n});
  auto e = ((x - m) * 1.4426950408889634).exp2();
  auto s = e.sum_reduce(1).unsqueeze(1).expand({rows, n});
  g.output("softmax", e / s);
  std::mt19937_64 rng(24);
  CpuOptions one;
  one.regions = {tail_region(g, first)};
  CpuProgram p(g, one);
  ASSERT_EQ(p.kernels().size(), 1u);
  // The row max and the row sum are computed once per row, outside the element loop.
  const std::string& code = p.kernels()[0].code;
  const size_t element_loop = code.find("for (int64_t _i");
  ASSERT_NE(element_loop, std::string::npos);
  EXPECT_LT(code.find("lk::lanes_max"), element_loop) << code;
  EXPECT_LT(code.find("lk::lanes_sum"), element_loop) << code;
  // exp2 in float (1 ulp), a sum of n terms, a reciprocal and a product: a few ulps.
  for (int64_t cols : {1, 7, 300}) {
    expect_matches_interpreter(g, {{"x", random_tensor(DType::F32, {5, cols}, rng, -10, 10)}}, one,
                               {}, {{"softmax", {8, 1e-9}}});
  }
}

}  // namespace
}  // namespace luminal::cpu
