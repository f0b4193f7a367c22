// The e-graph engine: hash-consing, union-find, congruence closure with
// incremental rebuild, the shape/dtype/constant analysis and the dumps.
// Expected facts are stated by hand from the definitions (egg semantics).
#include "luminal/egraph/egraph.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "luminal/error.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

// Test ops: leaves "t.a".."t.d" (payload: name), unary "t.f", binary "t.g".
OpId test_op(const char* name, int arity) {
  OpInfo info;
  info.name = name;
  info.arity = arity;
  info.infer = [](const Payload&, std::span<const TensorInfo* const>) {
    return TensorInfo{DType::F32, {4}};
  };
  return OpRegistry::global().get_or_add(std::move(info));
}

struct Ops {
  OpId leaf = test_op("t.leaf", 0);
  OpId f = test_op("t.f", 1);
  OpId g = test_op("t.g", 2);
};

ClassId leaf(EGraph& eg, const Ops& ops, const char* name) {
  return eg.add(ops.leaf, Payload(name), {});
}

Scalar f32(double v) {
  return Scalar::from_double(DType::F32, v);
}

}  // namespace

TEST(EGraph, HashConsingReturnsTheSameClass) {
  Ops ops;
  EGraph eg;
  const ClassId a = leaf(eg, ops, "a");
  const ClassId b = leaf(eg, ops, "b");
  EXPECT_NE(a, b);
  EXPECT_EQ(leaf(eg, ops, "a"), a);
  const ClassId fa = eg.add(ops.f, Payload(), {a});
  EXPECT_EQ(eg.add(ops.f, Payload(), {a}), fa);
  EXPECT_NE(eg.add(ops.f, Payload(), {b}), fa);
  // Payloads are part of the identity.
  EXPECT_NE(eg.add(ops.f, Payload(int64_t{1}), {a}), fa);
  EXPECT_EQ(eg.num_nodes(), 5u);
  EXPECT_EQ(eg.num_classes(), 5u);
  EXPECT_EQ(eg.lookup(ops.f, EGraph::kNoPayload, std::vector<ClassId>{a}), fa);
  EXPECT_FALSE(eg.lookup(ops.g, EGraph::kNoPayload, std::vector<ClassId>{a, b}).has_value());
  // Unknown ids are reported, not undefined behaviour.
  EXPECT_THROW(eg.find(1000), Error);
  EXPECT_THROW(eg.add(ops.f, Payload(), {1000}), Error);
}

TEST(EGraph, PayloadsAreInternedByValue) {
  EGraph eg;
  const PayloadId v1 = eg.intern(Payload(View::contiguous({2, 3})));
  const PayloadId v2 = eg.intern(Payload(View::contiguous({2, 3})));
  const PayloadId v3 = eg.intern(Payload(View::contiguous({3, 2})));
  EXPECT_EQ(v1, v2);
  EXPECT_NE(v1, v3);
  // Doubles and scalars compare by bits: -0.0 is not +0.0, NaN equals itself.
  EXPECT_NE(eg.intern(Payload(0.0)), eg.intern(Payload(-0.0)));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(eg.intern(Payload(nan)), eg.intern(Payload(nan)));
  EXPECT_NE(eg.intern(Payload(f32(0.0))), eg.intern(Payload(f32(-0.0))));
  // Tuples compare structurally.
  EXPECT_EQ(eg.intern(Payload(PayloadTuple{Payload("x"), Payload(DType::I32)})),
            eg.intern(Payload(PayloadTuple{Payload("x"), Payload(DType::I32)})));
  EXPECT_THROW(Payload(int64_t{3}).as<View>(), Error);
}

TEST(EGraph, UnionImpliesCongruenceAfterRebuild) {
  Ops ops;
  EGraph eg;
  const ClassId a = leaf(eg, ops, "a"), b = leaf(eg, ops, "b"), c = leaf(eg, ops, "c");
  const ClassId fa = eg.add(ops.f, Payload(), {a});
  const ClassId fb = eg.add(ops.f, Payload(), {b});
  const ClassId gfa = eg.add(ops.g, Payload(), {fa, c});
  const ClassId gfb = eg.add(ops.g, Payload(), {fb, c});
  ASSERT_FALSE(eg.same(fa, fb));
  EXPECT_TRUE(eg.merge(a, b));
  EXPECT_FALSE(eg.clean());
  eg.rebuild();
  EXPECT_TRUE(eg.clean());
  // a = b  =>  f(a) = f(b)  =>  g(f(a), c) = g(f(b), c), transitively.
  EXPECT_TRUE(eg.same(fa, fb));
  EXPECT_TRUE(eg.same(gfa, gfb));
  EXPECT_FALSE(eg.same(fa, c));
  // Congruent duplicates were removed: one f node and one g node remain.
  EXPECT_EQ(eg.nodes(fa).size(), 1u);
  EXPECT_EQ(eg.nodes(gfa).size(), 1u);
  EXPECT_EQ(eg.num_classes(), 4u);
  EXPECT_EQ(eg.num_nodes(), 5u);  // a, b (one class), f, g, c
  // Merging again changes nothing.
  EXPECT_FALSE(eg.merge(fa, fb));
  // Adding f(b) now finds the merged node.
  EXPECT_EQ(eg.add(ops.f, Payload(), {b}), eg.find(fa));
}

TEST(EGraph, CongruenceThroughAChainOfMerges) {
  // f^n(a) and f^n(b) for n = 1..20: merging a and b closes all 20 levels.
  Ops ops;
  EGraph eg;
  ClassId x = leaf(eg, ops, "a"), y = leaf(eg, ops, "b");
  const ClassId a = x, b = y;
  std::vector<std::pair<ClassId, ClassId>> levels;
  for (int i = 0; i < 20; ++i) {
    x = eg.add(ops.f, Payload(), {x});
    y = eg.add(ops.f, Payload(), {y});
    levels.emplace_back(x, y);
  }
  eg.merge(a, b);
  eg.rebuild();
  for (auto [p, q] : levels) EXPECT_TRUE(eg.same(p, q));
  EXPECT_EQ(eg.num_classes(), 21u);
}

TEST(EGraph, CyclesAreRepresented) {
  // x = f(x): the class of x contains f(x) itself.
  Ops ops;
  EGraph eg;
  const ClassId x = leaf(eg, ops, "x");
  const ClassId fx = eg.add(ops.f, Payload(), {x});
  eg.merge(x, fx);
  eg.rebuild();
  ASSERT_EQ(eg.nodes(x).size(), 2u);
  // f(f(x)) is also in the class (hash-consed to the f node whose child is x).
  EXPECT_EQ(eg.add(ops.f, Payload(), {fx}), eg.find(x));
  EXPECT_EQ(eg.num_classes(), 1u);
}

TEST(EGraph, DeterministicIds) {
  auto build = [] {
    Ops ops;
    EGraph eg;
    std::vector<ClassId> ids;
    ClassId a = leaf(eg, ops, "a"), b = leaf(eg, ops, "b");
    for (int i = 0; i < 10; ++i) {
      a = eg.add(ops.g, Payload(int64_t{i}), {a, b});
      b = eg.add(ops.f, Payload(), {a});
      if (i % 3 == 0) eg.merge(a, b);
      eg.rebuild();
    }
    return eg.to_text();
  };
  EXPECT_EQ(build(), build());
}

TEST(EGraph, AnalysisShapesAndMismatchedMergeThrows) {
  EGraph eg;
  const ClassId x = eg.add(OpKind::Input, input_payload("x", DType::F32, {2, 3}, false), {});
  const ClassId y = eg.add(OpKind::Input, input_payload("y", DType::F32, {3, 2}, false), {});
  EXPECT_EQ(eg.info(x).to_string(), "f32[2, 3]");
  const ClassId t = eg.add(kViewOp, Payload(View::contiguous({2, 3}).permute({1, 0})), {x});
  EXPECT_EQ(eg.info(t).to_string(), "f32[3, 2]");
  const ClassId r = eg.add(OpKind::SumReduce, Payload(int64_t{0}), {t});
  EXPECT_EQ(eg.info(r).to_string(), "f32[2]");
  const ClassId lt = eg.add(OpKind::LessThan, Payload(), {t, y});
  EXPECT_EQ(eg.info(lt).dtype, DType::Bool);
  // Binary ops reject operands of different shapes (an unsound rule would be caught here).
  EXPECT_THROW(eg.add(OpKind::Add, Payload(), {x, y}), Error);
  // Merging tensors of different shapes is a rule bug and throws.
  EXPECT_THROW(eg.merge(x, y), Error);
  EXPECT_TRUE(eg.merge(t, y));  // same shape and dtype: fine
}

TEST(EGraph, UniformAnalysisFoldsWithInterpreterSemantics) {
  EGraph eg;
  const ClassId two = eg.add(OpKind::Constant, Payload(f32(2.0)), {});
  const ClassId three = eg.add(OpKind::Constant, Payload(f32(3.0)), {});
  const ClassId sum = eg.add(OpKind::Add, Payload(), {two, three});
  ASSERT_TRUE(eg.uniform(sum).has_value());
  EXPECT_EQ(eg.uniform(sum)->value, 5.0);
  // A broadcast view of a constant is uniform.
  const ClassId b = eg.add(kViewOp, Payload(View::from_axes({4, 5}, {0, 0})), {sum});
  EXPECT_EQ(eg.uniform(b)->value, 5.0);
  // f32 rounding: 1/3 is rounded to float.
  const ClassId r = eg.add(OpKind::Recip, Payload(), {three});
  EXPECT_EQ(eg.uniform(r)->value, static_cast<double>(1.0f / 3.0f));
  // Integer Mod by zero is an error at run time: never folded.
  const ClassId i7 = eg.add(OpKind::Constant, Payload(Scalar::from_int(DType::I32, 7)), {});
  const ClassId i0 = eg.add(OpKind::Constant, Payload(Scalar::from_int(DType::I32, 0)), {});
  EXPECT_FALSE(eg.uniform(eg.add(OpKind::Mod, Payload(), {i7, i0})).has_value());
  // Integers wrap.
  const ClassId big =
      eg.add(OpKind::Constant, Payload(Scalar::from_int(DType::I32, INT32_MAX)), {});
  const ClassId i1 = eg.add(OpKind::Constant, Payload(Scalar::from_int(DType::I32, 1)), {});
  EXPECT_EQ(eg.uniform(eg.add(OpKind::Add, Payload(), {big, i1}))->int_value, INT32_MIN);
}

TEST(EGraph, UniformPropagatesThroughMerges) {
  EGraph eg;
  const ClassId x = eg.add(OpKind::Input, input_payload("x", DType::F32, {}, false), {});
  const ClassId one = eg.add(OpKind::Constant, Payload(f32(1.0)), {});
  const ClassId sum = eg.add(OpKind::Add, Payload(), {x, one});
  EXPECT_FALSE(eg.uniform(sum).has_value());
  // Pretend a rule proved x == 4: the sum then folds to 5 on rebuild.
  const ClassId four = eg.add(OpKind::Constant, Payload(f32(4.0)), {});
  eg.merge(x, four);
  eg.rebuild();
  ASSERT_TRUE(eg.uniform(sum).has_value());
  EXPECT_EQ(eg.uniform(sum)->value, 5.0);
  // Equating different constants is reported.
  EXPECT_THROW(eg.merge(one, four), Error);
}

TEST(EGraph, TextAndDotDumps) {
  Ops ops;
  EGraph eg;
  const ClassId a = leaf(eg, ops, "a");
  const ClassId fa = eg.add(ops.f, Payload(), {a});
  eg.add(ops.g, Payload(), {fa, a});
  const std::string dot = eg.to_dot();
  EXPECT_NE(dot.find("digraph egraph"), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_" + std::to_string(fa)), std::string::npos);
  EXPECT_NE(dot.find("lhead=cluster_" + std::to_string(a)), std::string::npos);
  EXPECT_NE(dot.find("t.leaf \\\"a\\\""), std::string::npos);
  const std::string text = eg.to_text();
  EXPECT_NE(text.find("(t.f c" + std::to_string(a) + ")"), std::string::npos);
  EXPECT_GT(eg.memory_bytes(), 0u);
}

TEST(EGraph, OpRegistryIsOpen) {
  OpRegistry& reg = OpRegistry::global();
  EXPECT_EQ(reg.id("Mul"), op_id(OpKind::Mul));
  EXPECT_EQ(reg.id("View"), kViewOp);
  EXPECT_EQ(reg.id("MatMul"), kMatMulOp);
  EXPECT_THROW(reg.id("no.such.op"), LookupError);
  const OpId a = test_op("t.backend_kernel", 3);
  EXPECT_EQ(test_op("t.backend_kernel", 3), a);  // idempotent registration
  EXPECT_EQ(reg.name(a), "t.backend_kernel");
  OpInfo dup;
  dup.name = "Mul";
  dup.infer = [](const Payload&, std::span<const TensorInfo* const>) { return TensorInfo{}; };
  EXPECT_THROW(reg.add(dup), Error);
  EGraph eg;
  const ClassId x = eg.add(OpKind::Input, input_payload("x", DType::F32, {4}, false), {});
  EXPECT_THROW(eg.add(a, Payload(), {x}), Error);  // wrong arity
}
