// Type promotion: torch.promote_types / torch.result_type tables (expected
// values are what torch 2.x returns, checked by hand against torch).
#include "luminal/frontend/promotion.hpp"

#include <gtest/gtest.h>

#include "luminal/core/graph.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

TEST(FrontendPromotion, PromoteTypesTable) {
  EXPECT_EQ(promote_types(DType::F16, DType::BF16), DType::F32);
  EXPECT_EQ(promote_types(DType::F16, DType::F32), DType::F32);
  EXPECT_EQ(promote_types(DType::F64, DType::BF16), DType::F64);
  EXPECT_EQ(promote_types(DType::I32, DType::F16), DType::F16);
  EXPECT_EQ(promote_types(DType::I64, DType::I32), DType::I64);
  EXPECT_EQ(promote_types(DType::U8, DType::I8), DType::I32);  // torch: i16, which luminal lacks
  EXPECT_EQ(promote_types(DType::U8, DType::I32), DType::I32);
  EXPECT_EQ(promote_types(DType::Bool, DType::U8), DType::U8);
  EXPECT_EQ(promote_types(DType::Bool, DType::Bool), DType::Bool);
  EXPECT_THROW(promote_types(DType::Q8_0, DType::F32), DTypeError);
}

TEST(FrontendPromotion, ScalarsAreWeak) {
  Graph g;
  Tensor i32 = g.input("a", {2}, DType::I32);
  Tensor f16 = g.input("b", {2}, DType::F16);
  Tensor bl = g.input("c", {2}, DType::Bool);
  EXPECT_EQ(result_type(i32, 2.5), DType::F32);
  EXPECT_EQ(result_type(f16, 2.5), DType::F16);
  EXPECT_EQ(result_type(bl, 1), DType::I64);
  EXPECT_EQ(result_type(bl, true), DType::Bool);
  EXPECT_EQ(result_type(i32, int64_t{1} << 40), DType::I32);
  EXPECT_EQ(result_type(2, 2.5), DType::F32);
  // A rank-0 tensor is weaker than a dimensioned one of the same category...
  Tensor i64_0 = g.input("d", {}, DType::I64);
  EXPECT_EQ(result_type(i32, i64_0), DType::I32);
  // ...but raises the category, and beats scalars.
  Tensor f64_0 = g.input("e", {}, DType::F64);
  EXPECT_EQ(result_type(i32, f64_0), DType::F64);
  EXPECT_EQ(result_type({f64_0, 2.5}), DType::F64);
  EXPECT_EQ(result_type({i32, f16, 1.0}), DType::F16);
}

TEST(FrontendPromotion, BinaryOpsPromoteAndBroadcast) {
  Graph g;
  Tensor a = g.input("a", {2, 1}, DType::I32);
  Tensor b = g.input("b", {3}, DType::F16);
  Tensor c = add(a, b);
  EXPECT_EQ(c.dtype(), DType::F16);
  EXPECT_EQ(to_string(c.shape()), "[2, 3]");
  EXPECT_EQ(div(a, a).dtype(), DType::F32);  // true division of ints
  EXPECT_EQ(lt(a, 2.5).dtype(), DType::Bool);
  EXPECT_THROW(add(2, 3), Error);
  Graph other;
  Tensor z = other.input("z", {2});
  EXPECT_THROW(add(a, z), Error);
  Tensor q = g.input("q", {2}, DType::Q4_0);
  EXPECT_THROW(add(q, 1.0), DTypeError);
}

TEST(FrontendPromotion, ScalarConstantsAreExact) {
  Graph g;
  Tensor big = scalar_tensor(g, Scalar(int64_t{9007199254740993}), DType::I64);
  g.output("out", big);
  Interpreter it(g);
  it.run();
  EXPECT_EQ(it.output("out").get_int(0), int64_t{9007199254740993});
  EXPECT_EQ(Scalar(2.0).is_integral_value(), true);
  EXPECT_EQ(Scalar(2.5).is_integral_value(), false);
  EXPECT_EQ(Scalar(true).default_dtype(), DType::Bool);
  EXPECT_EQ(Scalar(3).default_dtype(), DType::I64);
}
