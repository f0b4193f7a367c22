// Graph construction, validation and dumps. Values are not computed here (see
// tests/reference/interpreter_test.cpp); these tests check structure and the
// errors raised on bad user input.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "luminal/luminal.hpp"

using namespace luminal;

namespace {

// Runs `f` and returns the message of the luminal::Error subclass E it throws.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type was thrown";
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(Graph, InputRecordsNameShapeDtypeAndPersistence) {
  Graph g;
  Tensor x = g.input("x", {"s", 64}, DType::BF16);
  Tensor w = g.weight("w", {64, 32});
  const Node& nx = g.node(x.node());
  EXPECT_EQ(nx.kind, OpKind::Input);
  EXPECT_EQ(nx.name, "x");
  EXPECT_FALSE(nx.persistent);
  EXPECT_EQ(nx.dtype, DType::BF16);
  ASSERT_EQ(x.rank(), 2u);
  EXPECT_EQ(x.shape()[0], Expr("s"));
  EXPECT_EQ(x.shape()[1], Expr(64));
  EXPECT_TRUE(g.node(w.node()).persistent);
  EXPECT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.find_input("w"), w.node());
  EXPECT_FALSE(g.find_input("nope").has_value());
}

TEST(Graph, DimNamesAreCollectedFromInputsSorted) {
  Graph g;
  g.input("k", {Expr("p") + Expr("s"), 8});
  g.input("x", {"s", "b"});
  EXPECT_EQ(g.dim_names(), (std::vector<std::string>{"b", "p", "s"}));
}

TEST(Graph, DuplicateInputNameThrows) {
  Graph g;
  g.input("x", {4});
  std::string msg = error_of<Error>([&] { g.input("x", {5}); });
  EXPECT_TRUE(contains(msg, "\"x\"")) << msg;
}

TEST(Graph, ReservedDimNameRejected) {
  Graph g;
  EXPECT_THROW(g.input("x", {Expr::index_var(), 4}), ShapeError);
}

TEST(Graph, NegativeConstantDimRejected) {
  Graph g;
  EXPECT_THROW(g.input("x", {Expr(-3)}), ShapeError);
}

TEST(Graph, BinaryShapeMismatchNamesOpAndShapes) {
  Graph g;
  Tensor a = g.input("a", {"s", 64});
  Tensor b = g.input("b", {"s", 32});
  std::string msg = error_of<ShapeError>([&] { g.binary(OpKind::Add, a, b); });
  EXPECT_TRUE(contains(msg, "Add")) << msg;
  EXPECT_TRUE(contains(msg, "f32[s, 64]")) << msg;
  EXPECT_TRUE(contains(msg, "f32[s, 32]")) << msg;
}

TEST(Graph, SymbolicDimsMustMatchExactly) {
  Graph g;
  Tensor a = g.input("a", {"s"});
  Tensor b = g.input("b", {"t"});
  EXPECT_THROW(g.binary(OpKind::Mul, a, b), ShapeError);
  // p + s and s + p are the same dim.
  Tensor c = g.input("c", {Expr("p") + Expr("s")});
  Tensor d = g.input("d", {Expr("s") + Expr("p")});
  EXPECT_NO_THROW(g.binary(OpKind::Mul, c, d));
}

TEST(Graph, BinaryDtypeMismatchNamesDtypes) {
  Graph g;
  Tensor a = g.input("a", {4}, DType::F32);
  Tensor b = g.input("b", {4}, DType::F16);
  std::string msg = error_of<DTypeError>([&] { (void)(a + b); });
  EXPECT_TRUE(contains(msg, "f32[4]")) << msg;
  EXPECT_TRUE(contains(msg, "f16[4]")) << msg;
}

TEST(Graph, LessThanProducesBool) {
  Graph g;
  Tensor a = g.input("a", {3}, DType::I32);
  Tensor b = g.input("b", {3}, DType::I32);
  EXPECT_EQ(a.lt(b).dtype(), DType::Bool);
}

TEST(Graph, UnaryRejectsIntegers) {
  Graph g;
  Tensor a = g.input("a", {3}, DType::I32);
  std::string msg = error_of<DTypeError>([&] { (void)a.exp2(); });
  EXPECT_TRUE(contains(msg, "Exp2")) << msg;
  EXPECT_TRUE(contains(msg, "i32[3]")) << msg;
  EXPECT_THROW(a.sqrt(), DTypeError);
  EXPECT_THROW(a.recip(), DTypeError);
}

TEST(Graph, ModRejectsBool) {
  Graph g;
  Tensor a = g.input("a", {3}, DType::Bool);
  EXPECT_THROW(a.mod(a), DTypeError);
}

TEST(Graph, SumOfBoolRejected) {
  Graph g;
  Tensor a = g.input("a", {3}, DType::Bool);
  EXPECT_THROW(a.sum_reduce(0), DTypeError);
  EXPECT_NO_THROW(a.max_reduce(0));
}

TEST(Graph, ReduceAxisValidationAndNegativeAxis) {
  Graph g;
  Tensor a = g.input("a", {2, 3, 4});
  std::string msg = error_of<ShapeError>([&] { a.sum_reduce(3); });
  EXPECT_TRUE(contains(msg, "SumReduce")) << msg;
  EXPECT_TRUE(contains(msg, "axis 3")) << msg;
  EXPECT_THROW(a.max_reduce(-4), ShapeError);
  Tensor r = a.sum_reduce(-1);
  EXPECT_EQ(g.node(r.node()).axis, 2);
  EXPECT_EQ(to_string(r.shape()), "[2, 3]");
}

TEST(Graph, ReduceOfScalarRejected) {
  Graph g;
  Tensor c = g.constant(1.0);
  EXPECT_THROW(c.sum_reduce(0), ShapeError);
}

TEST(Graph, GatherNeedsIntegerIndexes) {
  Graph g;
  Tensor data = g.input("d", {10});
  Tensor fidx = g.input("i", {3});
  std::string msg = error_of<DTypeError>([&] { fidx.gather_from(data); });
  EXPECT_TRUE(contains(msg, "Gather")) << msg;
  Tensor idx = g.input("j", {2, 2}, DType::I64);
  Tensor out = idx.gather_from(data);
  EXPECT_EQ(to_string(out.shape()), "[2, 2]");
  EXPECT_EQ(out.dtype(), DType::F32);
}

TEST(Graph, ScatterValidatesShapesAndDtypes) {
  Graph g;
  Tensor dest = g.input("dest", {8});
  Tensor idx = g.input("idx", {3}, DType::I32);
  Tensor src = g.input("src", {4});
  EXPECT_THROW(dest.scatter(idx, src), ShapeError);
  Tensor src_i = g.input("src_i", {3}, DType::I32);
  EXPECT_THROW(dest.scatter(idx, src_i), DTypeError);
  Tensor ok = g.input("src_ok", {3});
  EXPECT_EQ(to_string(dest.scatter(idx, ok).shape()), "[8]");
}

TEST(Graph, CastOfQuantizedStorageIsTheDequantization) {
  Graph g;
  Tensor q = g.weight("q", {32}, DType::Q4_1);
  EXPECT_EQ(q.cast(DType::F32).dtype(), DType::F32);  // dequantize (tested in quantized_test)
  EXPECT_THROW(q.cast(DType::I32), DTypeError);       // only to float types
  Tensor x = g.input("x", {32});
  EXPECT_THROW(x.cast(DType::Q8_0), DTypeError);  // storage only: nothing produces it
  Tensor f8 = g.weight("f8", {4}, DType::F8E4M3);
  EXPECT_EQ(f8.cast(DType::F32).dtype(), DType::F32);
}

TEST(Graph, StorageTypesCannotBeComputedOn) {
  Graph g;
  Tensor f8 = g.weight("f8", {4}, DType::F8E5M2);
  EXPECT_THROW((void)(f8 * f8), DTypeError);
}

TEST(Graph, TensorsFromDifferentGraphsRejected) {
  Graph g1, g2;
  Tensor a = g1.input("a", {3});
  Tensor b = g2.input("b", {3});
  EXPECT_THROW((void)(a + b), Error);
  EXPECT_THROW(g2.output("o", a), Error);
}

TEST(Graph, DuplicateOutputNameThrows) {
  Graph g;
  Tensor a = g.input("a", {3});
  g.output("o", a);
  EXPECT_THROW(g.output("o", a), Error);
  EXPECT_EQ(g.outputs().size(), 1u);
}

TEST(Graph, UnknownNodeIdThrows) {
  Graph g;
  EXPECT_THROW(g.node(7), LookupError);
}

TEST(Graph, ConstantsTruncateAndWrapForIntegerTypes) {
  Graph g;
  EXPECT_EQ(g.node(g.constant(-2.7, DType::I32).node()).int_value, -2);
  EXPECT_EQ(g.node(g.constant(1e12, DType::I32).node()).int_value, 2147483647);
  EXPECT_EQ(g.node(g.constant_int(300, DType::U8).node()).int_value, 44);
  EXPECT_EQ(g.node(g.constant_int(5, DType::Bool).node()).int_value, 1);
  // f16 constants are rounded to f16 when recorded.
  EXPECT_EQ(g.node(g.constant(1.0 + 1.0 / 4096, DType::F16).node()).value, 1.0);
}

TEST(Graph, IotaNeedsIntegerDtype) {
  Graph g;
  EXPECT_THROW(g.iota(Expr::index_var(), 4, DType::F32), DTypeError);
  Tensor t = g.arange("n", DType::I64);
  EXPECT_EQ(t.dtype(), DType::I64);
  EXPECT_EQ(t.shape()[0], Expr("n"));
}

TEST(Tensor, BroadcastFollowsPyTorchRules) {
  EXPECT_EQ(to_string(broadcast_shapes({3, 1, 5}, {4, 1}, "t")), "[3, 4, 5]");
  EXPECT_EQ(to_string(broadcast_shapes({"s", 1}, {1, 64}, "t")), "[s, 64]");
  EXPECT_EQ(to_string(broadcast_shapes({}, {2, 2}, "t")), "[2, 2]");
  std::string msg = error_of<ShapeError>([] { broadcast_shapes({3, 4}, {5, 4}, "Add"); });
  EXPECT_TRUE(contains(msg, "Add")) << msg;
  EXPECT_TRUE(contains(msg, "[3, 4]")) << msg;
}

TEST(Tensor, BinaryOperatorsBroadcastOperands) {
  Graph g;
  Tensor a = g.input("a", {"s", 1});
  Tensor b = g.input("b", {64});
  Tensor c = a * b;
  EXPECT_EQ(to_string(c.shape()), "[s, 64]");
  const Node& n = g.node(c.node());
  ASSERT_EQ(n.operands.size(), 2u);
  EXPECT_EQ(to_string(n.operands[0].view.shape()), "[s, 64]");
  EXPECT_EQ(n.operands[0].view.axis_exprs()[1], Expr(0));  // broadcast axis reads index 0
}

TEST(Tensor, MovementOpsRecordNoNodes) {
  Graph g;
  Tensor x = g.input("x", {2, 3, 4});
  size_t before = g.size();
  Tensor y = x.permute({2, 0, 1}).unsqueeze(0).slice(1, 1, 3).flip(2);
  EXPECT_EQ(g.size(), before);
  EXPECT_EQ(to_string(y.shape()), "[1, 2, 2, 3]");
  EXPECT_EQ(y.node(), x.node());
}

TEST(Tensor, TransposeAndDimAcceptNegativeAxes) {
  Graph g;
  Tensor x = g.input("x", {2, 3, 4});
  EXPECT_EQ(to_string(x.transpose(-1, 0).shape()), "[4, 3, 2]");
  EXPECT_EQ(x.dim(-1), Expr(4));
  EXPECT_THROW(x.dim(3), ShapeError);
  EXPECT_THROW(x.transpose(0, 5), ShapeError);
}

TEST(Tensor, ExpandErrors) {
  Graph g;
  Tensor x = g.input("x", {3, 4});
  EXPECT_THROW(x.expand({4}), ShapeError);
  EXPECT_THROW(x.expand({5, 4}), ShapeError);
  EXPECT_EQ(to_string(x.expand({2, 3, 4}).shape()), "[2, 3, 4]");
}

TEST(Tensor, ReshapeOfContiguousIsFreeReshapeOfPermutedMayCopy) {
  Graph g;
  Tensor x = g.input("x", {"s", 6});
  size_t before = g.size();
  Tensor r = x.reshape({"s", 2, 3});
  EXPECT_EQ(g.size(), before);
  EXPECT_EQ(to_string(r.shape()), "[s, 2, 3]");
  // Flattening a transposed [3, 2] is a merge, which a view expresses (z / 2 + 3 * (z % 2)).
  Tensor y = g.input("y", {2, 3});
  before = g.size();
  Tensor merged = y.transpose(0, 1).reshape({6});
  EXPECT_EQ(g.size(), before);
  EXPECT_EQ(merged.node(), y.node());
  // ...but re-splitting it as [2, 3] does not separate per axis: it needs a copy.
  Tensor flat = y.transpose(0, 1).reshape({2, 3});
  EXPECT_EQ(g.size(), before + 2);  // the constant one and the Mul
  EXPECT_EQ(g.node(flat.node()).kind, OpKind::Mul);
  EXPECT_TRUE(flat.view().is_contiguous());
}

TEST(Tensor, ScalarOperandsTakeTheTensorDtype) {
  Graph g;
  Tensor x = g.input("x", {3}, DType::BF16);
  Tensor y = x * 2.0 + 1.0;
  EXPECT_EQ(y.dtype(), DType::BF16);
  Tensor i = g.input("i", {3}, DType::I32);
  EXPECT_THROW(i / 2.0, DTypeError);  // true division of integers is the frontend's job
  Tensor b = g.input("b", {3}, DType::Bool);
  EXPECT_THROW(-b, DTypeError);
}

TEST(Graph, TextDumpListsEveryNode) {
  Graph g;
  Tensor x = g.input("x", {"s", 4});
  Tensor w = g.weight("w", {4});
  g.output("y", (x * w.unsqueeze(0).expand({"s", 4})).sum_reduce(1));
  std::string text = g.to_text();
  EXPECT_TRUE(contains(text, "%0 = Input(\"x\") : f32[s, 4]")) << text;
  EXPECT_TRUE(contains(text, "Input(\"w\" persistent) : f32[4]")) << text;
  EXPECT_TRUE(contains(text, "SumReduce(axis=1, %2) : f32[s]")) << text;
  EXPECT_TRUE(contains(text, "Output(\"y\", %3) : f32[s]")) << text;
  // The broadcast operand prints its view.
  EXPECT_TRUE(contains(text, "%1 [s, 4]")) << text;
  size_t lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_EQ(lines, g.size());
}

TEST(Graph, DotDumpHasNodesAndEdges) {
  Graph g;
  Tensor x = g.input("x", {4});
  g.output("y", x.sqrt());
  std::string dot = g.to_dot();
  EXPECT_EQ(dot.rfind("digraph luminal {", 0), 0u) << dot;
  EXPECT_TRUE(contains(dot, "n0 -> n1;")) << dot;
  EXPECT_TRUE(contains(dot, "n1 -> n2;")) << dot;
  EXPECT_TRUE(contains(dot, "Sqrt")) << dot;
  EXPECT_TRUE(contains(dot, "\\\"x\\\"")) << dot;  // names are escaped
}

TEST(OpKindInfo, NamesAndArity) {
  EXPECT_EQ(op_name(OpKind::LessThan), "LessThan");
  EXPECT_EQ(op_arity(OpKind::Scatter), 3);
  EXPECT_EQ(op_arity(OpKind::Gather), 2);
  EXPECT_EQ(op_arity(OpKind::Add), 2);
  EXPECT_EQ(op_arity(OpKind::Recip), 1);
  EXPECT_EQ(op_arity(OpKind::Iota), 0);
  EXPECT_TRUE(is_unary(OpKind::Sin));
  EXPECT_FALSE(is_unary(OpKind::Cast));
  EXPECT_TRUE(is_reduce(OpKind::MaxReduce));
}

TEST(Tensor, SqueezeToScalarAtAnOffsetCopies) {
  Graph g;
  Tensor x = g.input("x", {5});
  Tensor s = x.slice(0, 3, 4).squeeze(0);
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_NE(s.node(), x.node());  // materialised
  Interpreter it(g);
  g.output("out", s);
  it.set_input("x", TensorData::from_doubles(DType::F32, {5}, {0, 1, 2, 3, 4}));
  it.run();
  EXPECT_EQ(it.output("out").get(0), 3.0);
}
