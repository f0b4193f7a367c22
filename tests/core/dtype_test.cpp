#include "luminal/core/dtype.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "luminal/error.hpp"

namespace luminal {
namespace {

std::string parse_error_message(const std::string& name) {
  try {
    parse_dtype(name);
  } catch (const DTypeError& e) {
    return e.what();
  }
  return "";
}

TEST(DType, CanonicalNamesInEnumOrder) {
  const std::vector<std::string> expected = {"f32",    "f16",  "bf16", "f64",  "i32",
                                             "i64",    "i8",   "u8",   "bool", "f8e4m3",
                                             "f8e5m2", "q8_0", "q4_0", "q4_1"};
  std::vector<std::string> names;
  for (const DType* d = all_dtypes_begin(); d != all_dtypes_end(); ++d) {
    EXPECT_EQ(dtype_info(*d).dtype, *d);
    names.push_back(to_string(*d));
  }
  EXPECT_EQ(names, expected);
  EXPECT_EQ(dtype_name(DType::BF16), "bf16");
}

TEST(DType, CanonicalNamesRoundTripThroughParse) {
  for (const DType* d = all_dtypes_begin(); d != all_dtypes_end(); ++d) {
    EXPECT_EQ(parse_dtype(dtype_name(*d)), *d) << to_string(*d);
  }
}

TEST(DType, ParsesNumpyAndTorchNames) {
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_EQ(parse_dtype("float"), DType::F32);
  EXPECT_EQ(parse_dtype("float16"), DType::F16);
  EXPECT_EQ(parse_dtype("half"), DType::F16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("float64"), DType::F64);
  EXPECT_EQ(parse_dtype("double"), DType::F64);
  EXPECT_EQ(parse_dtype("int32"), DType::I32);
  EXPECT_EQ(parse_dtype("int"), DType::I32);
  EXPECT_EQ(parse_dtype("int64"), DType::I64);
  EXPECT_EQ(parse_dtype("long"), DType::I64);
  EXPECT_EQ(parse_dtype("int8"), DType::I8);
  EXPECT_EQ(parse_dtype("uint8"), DType::U8);
  EXPECT_EQ(parse_dtype("bool"), DType::Bool);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::F8E4M3);
  EXPECT_EQ(parse_dtype("float8_e5m2"), DType::F8E5M2);
}

TEST(DType, AcceptsTorchPrefix) {
  EXPECT_EQ(parse_dtype("torch.float32"), DType::F32);
  EXPECT_EQ(parse_dtype("torch.bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("torch.long"), DType::I64);
  EXPECT_EQ(parse_dtype("torch.bool"), DType::Bool);
  EXPECT_EQ(parse_dtype("torch.float8_e4m3fn"), DType::F8E4M3);
  EXPECT_THROW(parse_dtype("torch."), DTypeError);
  EXPECT_THROW(parse_dtype("numpy.float32"), DTypeError);
}

TEST(DType, UnknownNameThrowsNamingTheString) {
  EXPECT_THROW(parse_dtype("float128"), DTypeError);
  const std::string message = parse_error_message("float128");
  EXPECT_NE(message.find("float128"), std::string::npos) << message;
  // The message lists valid names so the user can fix the typo.
  EXPECT_NE(message.find("f32"), std::string::npos) << message;
  EXPECT_NE(message.find("bfloat16"), std::string::npos) << message;
  EXPECT_NE(message.find("q4_1"), std::string::npos) << message;
}

TEST(DType, ParseRejectsNearMisses) {
  for (const char* bad : {"", "F32 ", " f32", "fp32", "float32x", "i16", "uint16", "complex64"}) {
    EXPECT_THROW(parse_dtype(bad), DTypeError) << "'" << bad << "'";
  }
  // The error is also a luminal::Error (the common base the Python layer maps).
  EXPECT_THROW(parse_dtype("nope"), Error);
}

TEST(DType, PlainTypeSizes) {
  EXPECT_EQ(element_size(DType::F32), 4u);
  EXPECT_EQ(element_size(DType::F16), 2u);
  EXPECT_EQ(element_size(DType::BF16), 2u);
  EXPECT_EQ(element_size(DType::F64), 8u);
  EXPECT_EQ(element_size(DType::I32), 4u);
  EXPECT_EQ(element_size(DType::I64), 8u);
  EXPECT_EQ(element_size(DType::I8), 1u);
  EXPECT_EQ(element_size(DType::U8), 1u);
  EXPECT_EQ(element_size(DType::Bool), 1u);
  EXPECT_EQ(element_size(DType::F8E4M3), 1u);
  EXPECT_EQ(element_size(DType::F8E5M2), 1u);
  EXPECT_EQ(storage_bytes(DType::F32, 6), 24u);
  EXPECT_EQ(storage_bytes(DType::Bool, 0), 0u);
  EXPECT_EQ(storage_bytes(DType::F8E5M2, 7), 7u);
}

TEST(DType, QuantizedBlockLayouts) {
  // GGUF: Q8_0 = 2-byte f16 scale + 32 int8 = 34; Q4_0 = 2 + 16 = 18; Q4_1 = 2 + 2 + 16 = 20.
  EXPECT_EQ(dtype_info(DType::Q8_0).block_elems, 32u);
  EXPECT_EQ(dtype_info(DType::Q8_0).block_bytes, 34u);
  EXPECT_EQ(dtype_info(DType::Q4_0).block_elems, 32u);
  EXPECT_EQ(dtype_info(DType::Q4_0).block_bytes, 18u);
  EXPECT_EQ(dtype_info(DType::Q4_1).block_elems, 32u);
  EXPECT_EQ(dtype_info(DType::Q4_1).block_bytes, 20u);
  EXPECT_EQ(storage_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(storage_bytes(DType::Q4_0, 96), 54u);
  EXPECT_EQ(storage_bytes(DType::Q4_1, 32), 20u);
  EXPECT_EQ(storage_bytes(DType::Q4_1, 0), 0u);
}

TEST(DType, QuantizedSizeErrors) {
  EXPECT_THROW(element_size(DType::Q8_0), DTypeError);
  EXPECT_THROW(element_size(DType::Q4_1), DTypeError);
  EXPECT_THROW(storage_bytes(DType::Q4_0, 33), DTypeError);
  EXPECT_THROW(storage_bytes(DType::Q8_0, 1), DTypeError);
  EXPECT_THROW(storage_bytes(DType::F32, -1), ShapeError);
  EXPECT_THROW(storage_bytes(DType::F64, INT64_MAX), ShapeError);  // bytes overflow size_t
}

TEST(DType, Classification) {
  const std::set<DType> floats = {DType::F32,  DType::F16,    DType::BF16,
                                  DType::F64,  DType::F8E4M3, DType::F8E5M2,
                                  DType::Q8_0, DType::Q4_0,   DType::Q4_1};
  const std::set<DType> ints = {DType::I32, DType::I64, DType::I8, DType::U8};
  const std::set<DType> quantized = {DType::Q8_0, DType::Q4_0, DType::Q4_1};
  const std::set<DType> storage_only = {DType::F8E4M3, DType::F8E5M2, DType::Q8_0, DType::Q4_0,
                                        DType::Q4_1};
  for (const DType* d = all_dtypes_begin(); d != all_dtypes_end(); ++d) {
    EXPECT_EQ(is_float(*d), floats.count(*d) == 1) << to_string(*d);
    EXPECT_EQ(is_int(*d), ints.count(*d) == 1) << to_string(*d);
    EXPECT_EQ(is_quantized(*d), quantized.count(*d) == 1) << to_string(*d);
    EXPECT_EQ(is_compute_type(*d), storage_only.count(*d) == 0) << to_string(*d);
    EXPECT_EQ(dtype_info(*d).block_elems == 1, !is_quantized(*d)) << to_string(*d);
  }
  EXPECT_FALSE(is_float(DType::Bool));
  EXPECT_FALSE(is_int(DType::Bool));
}

TEST(DType, Signedness) {
  EXPECT_TRUE(dtype_info(DType::I8).is_signed);
  EXPECT_TRUE(dtype_info(DType::I64).is_signed);
  EXPECT_TRUE(dtype_info(DType::F16).is_signed);
  EXPECT_FALSE(dtype_info(DType::U8).is_signed);
  EXPECT_FALSE(dtype_info(DType::Bool).is_signed);
}

TEST(DType, AllDTypesRangeIsComplete) {
  EXPECT_EQ(all_dtypes_end() - all_dtypes_begin(), 14);
  std::set<DType> seen(all_dtypes_begin(), all_dtypes_end());
  EXPECT_EQ(seen.size(), 14u);
  EXPECT_EQ(*all_dtypes_begin(), DType::F32);
  EXPECT_EQ(*(all_dtypes_end() - 1), DType::Q4_1);
}

TEST(DType, InvalidEnumValueThrows) {
  EXPECT_THROW(dtype_info(static_cast<DType>(200)), DTypeError);
}

}  // namespace
}  // namespace luminal
