// The core rules, one fact at a time: which equalities the saturated e-graph
// contains and, as importantly, which ones it must NOT contain because they
// fail for some input (x + 0.0 at x = -0.0, x * 0.0 at NaN, (x*2)*0.5 on
// overflow, float -> int -> float). Expected facts come from IEEE-754 and
// two's-complement arithmetic, stated in the comments.
#include "luminal/egraph/core_rules.hpp"

#include <gtest/gtest.h>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

struct Saturated {
  EGraph eg;
  ImportedGraph imp;
  // The class of HLIR node `t` (a tensor read densely).
  ClassId cls(const Tensor& t) { return eg.find(imp.node_class[t.node()]); }
  bool same(const Tensor& a, const Tensor& b) { return cls(a) == cls(b); }
};

std::unique_ptr<Saturated> saturate(const Graph& g) {
  auto s = std::make_unique<Saturated>();
  s->imp = import_graph(s->eg, g);
  const SaturationReport r =
      run_schedule(s->eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  EXPECT_EQ(r.reason, StopReason::Saturated) << r.to_string();
  return s;
}

bool has_node(const EGraph& eg, ClassId c, OpId op) {
  return eg.has_op(c, op);
}

}  // namespace

TEST(CoreRules, AdditiveAndMultiplicativeIdentities) {
  Graph g;
  const Tensor x = g.input("x", {4});
  const Tensor i = g.input("i", {4}, DType::I32);
  const Tensor b = g.input("b", {4}, DType::Bool);
  const Tensor plus_neg_zero = x + (-0.0), plus_zero = x + 0.0;
  const Tensor times_one = x * 1.0, times_zero = x * 0.0;
  const Tensor i_plus_zero = i + 0.0, i_times_one = i * 1.0, i_times_zero = i * 0.0;
  const Tensor b_and_true = b * b.graph()->constant_int(1, DType::Bool).expand({4});
  for (const Tensor& t : {plus_neg_zero, plus_zero, times_one, times_zero, i_plus_zero, i_times_one,
                          i_times_zero, b_and_true})
    g.output("o" + std::to_string(t.node()), t);
  auto s = saturate(g);
  EXPECT_TRUE(s->same(plus_neg_zero, x));  // x + -0.0 == x for every x
  EXPECT_FALSE(s->same(plus_zero, x));     // -0.0 + 0.0 == +0.0
  EXPECT_TRUE(s->same(times_one, x));      // x * 1 == x, NaN and -0.0 included
  EXPECT_FALSE(s->same(times_zero, x));
  EXPECT_FALSE(s->eg.uniform(s->cls(times_zero)).has_value());  // NaN * 0 is NaN, not 0
  EXPECT_TRUE(s->same(i_plus_zero, i));
  EXPECT_TRUE(s->same(i_times_one, i));
  ASSERT_TRUE(s->eg.uniform(s->cls(i_times_zero)).has_value());  // i * 0 == 0 for ints
  EXPECT_EQ(s->eg.uniform(s->cls(i_times_zero))->int_value, 0);
  EXPECT_TRUE(s->same(b_and_true, b));
}

TEST(CoreRules, NegationAndScalingCancelOnlyWhenExact) {
  Graph g;
  const Tensor x = g.input("x", {4});
  const Tensor i = g.input("i", {4}, DType::I32);
  const Tensor u = g.input("u", {4}, DType::U8);
  const Tensor neg_neg = -(-x);
  const Tensor double_half = (x * 2.0) * 0.5;  // overflows for |x| > FLT_MAX / 2
  const Tensor i_neg_neg = (i * -1.0) * -1.0;
  // u8: 255 * 255 = 65025 = 1 (mod 256), so (u * 255) * 255 == u.
  const Tensor u_cancel =
      (u * g.constant_int(255, DType::U8).expand({4})) * g.constant_int(255, DType::U8).expand({4});
  for (const Tensor& t : {neg_neg, double_half, i_neg_neg, u_cancel})
    g.output("o" + std::to_string(t.node()), t);
  auto s = saturate(g);
  EXPECT_TRUE(s->same(neg_neg, x));
  EXPECT_FALSE(s->same(double_half, x));
  EXPECT_TRUE(s->same(i_neg_neg, i));
  EXPECT_TRUE(s->same(u_cancel, u));
}

TEST(CoreRules, CastRoundTripsOnlyWhenLossless) {
  Graph g;
  const Tensor x = g.input("x", {4});
  const Tensor h = g.input("h", {4}, DType::F16);
  const Tensor i8 = g.input("i8", {4}, DType::I8);
  const Tensor via_f64 = x.cast(DType::F64).cast(DType::F32);       // f64 holds every f32
  const Tensor via_i32 = x.cast(DType::I32).cast(DType::F32);       // truncates 1.5
  const Tensor via_f16 = x.cast(DType::F16).cast(DType::F32);       // rounds
  const Tensor h_via_f32 = h.cast(DType::F32).cast(DType::F16);     // f32 holds every f16
  const Tensor i8_via_bf16 = i8.cast(DType::BF16).cast(DType::I8);  // 8 significand bits
  const Tensor same = x.cast(DType::F32);
  for (const Tensor& t : {via_f64, via_i32, via_f16, h_via_f32, i8_via_bf16, same})
    g.output("o" + std::to_string(t.node()), t);
  auto s = saturate(g);
  EXPECT_TRUE(s->same(via_f64, x));
  EXPECT_FALSE(s->same(via_i32, x));
  EXPECT_FALSE(s->same(via_f16, x));
  EXPECT_TRUE(s->same(h_via_f32, h));
  EXPECT_TRUE(s->same(i8_via_bf16, i8));
  EXPECT_TRUE(s->same(same, x));
  EXPECT_TRUE(cast_is_lossless(DType::I32, DType::F64));
  EXPECT_FALSE(cast_is_lossless(DType::I32, DType::F32));  // 2^24 + 1
  EXPECT_FALSE(cast_is_lossless(DType::I64, DType::F64));
  EXPECT_FALSE(cast_is_lossless(DType::F32, DType::BF16));
}

TEST(CoreRules, ConstantFolding) {
  Graph g;
  const Tensor two = g.constant(2.0), three = g.constant(3.0);
  const Tensor five = two + three;
  const Tensor third = three.recip();
  const Tensor wide = (two * three).expand({2, 3});  // a broadcast of 6
  const Tensor x = g.input("x", {2, 3});
  g.output("five", five);
  g.output("third", third);
  g.output("y", x + wide);
  auto s = saturate(g);
  const EGraph& eg = s->eg;
  ASSERT_TRUE(eg.uniform(s->cls(five)).has_value());
  EXPECT_EQ(eg.uniform(s->cls(five))->value, 5.0);
  EXPECT_TRUE(has_node(eg, s->cls(five), op_id(OpKind::Constant)));
  EXPECT_EQ(eg.uniform(s->cls(third))->value, static_cast<double>(1.0f / 3.0f));  // f32 rounding
  // The Mul class (6) holds a Constant(6) too.
  bool folded = false;
  for (ClassId c : eg.class_ids())
    if (eg.uniform(c) && eg.uniform(c)->value == 6.0)
      folded = folded || has_node(eg, c, op_id(OpKind::Constant));
  EXPECT_TRUE(folded);
}

TEST(CoreRules, ViewsMoveThroughElementwiseOps) {
  Graph g;
  const Tensor x = g.input("x", {3, 4});
  const Tensor v = g.input("v", {4});
  const Tensor i = g.input("i", {4}, DType::I32);
  g.output("t", x.exp2().transpose(0, 1));             // View(T)(Exp2 x)
  g.output("b", v.unsqueeze(0).expand({3, 4}).sin());  // Sin(View(bcast) v)
  const Tensor j = g.input("j", {4}, DType::I32);
  const Tensor w = g.input("w", {4});
  auto bc = [](const Tensor& t) { return t.unsqueeze(0).expand({3, 4}); };
  g.output("m", bc(i) % bc(j));  // integer Mod may trap (j = 0): not pulled out
  g.output("f", bc(v) % bc(w));  // float Mod never traps: pulled out
  auto s = saturate(g);
  EGraph& eg = s->eg;
  const PayloadId transpose = eg.intern(Payload(View::contiguous({3, 4}).permute({1, 0})));
  const PayloadId bcast = eg.intern(Payload(View::contiguous({4}).unsqueeze(0).expand(0, 3)));
  const ClassId xc = s->cls(x), vc = s->cls(v);
  // Pushed: T(exp2(x)) == exp2(T(x)).
  const auto tx = eg.lookup(kViewOp, transpose, std::vector<ClassId>{xc});
  ASSERT_TRUE(tx.has_value());
  const auto exp_tx = eg.lookup(op_id(OpKind::Exp2), EGraph::kNoPayload, std::vector<ClassId>{*tx});
  ASSERT_TRUE(exp_tx.has_value());
  EXPECT_TRUE(eg.same(*exp_tx, eg.children(eg.nodes(s->imp.roots(eg)[0])[0])[0]));
  // Pulled: sin(bcast(v)) == bcast(sin(v)): sin is computed on 4 elements, not 12.
  const auto sin_v = eg.lookup(op_id(OpKind::Sin), EGraph::kNoPayload, std::vector<ClassId>{vc});
  ASSERT_TRUE(sin_v.has_value());
  const auto b_sin = eg.lookup(kViewOp, bcast, std::vector<ClassId>{*sin_v});
  ASSERT_TRUE(b_sin.has_value());
  EXPECT_TRUE(eg.same(*b_sin, eg.children(eg.nodes(s->imp.roots(eg)[1])[0])[0]));
  // Integer Mod of broadcasts is not rewritten into a Mod of the sources
  // (it would compute j's elements the view never reads); float Mod is.
  const OpId mod = op_id(OpKind::Mod);
  EXPECT_FALSE(eg.lookup(mod, EGraph::kNoPayload, std::vector<ClassId>{s->cls(i), s->cls(j)}));
  EXPECT_TRUE(eg.lookup(mod, EGraph::kNoPayload, std::vector<ClassId>{vc, s->cls(w)}));
}

TEST(CoreRules, EveryRuleStatesWhyItIsExact) {
  for (const Ruleset& rs : {algebra_rules(), view_rules(), matmul_rules()})
    for (const Rule& r : rs.rules()) EXPECT_FALSE(r.why().empty()) << rs.name() << "/" << r.name();
}
