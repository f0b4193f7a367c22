#include "luminal/io/ggml_type.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"

namespace luminal {
namespace {

using io_test::Bytes;

uint16_t f16(float v) {
  return float_to_f16_bits(v);
}

TEST(GGMLType, TableMatchesLuminalQuantizedDTypes) {
  for (DType d : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    const auto t = ggml_type_for(d);
    ASSERT_TRUE(t.has_value()) << to_string(d);
    const GGMLTypeInfo& info = ggml_type_info(*t);
    EXPECT_EQ(info.block_elems, dtype_info(d).block_elems) << to_string(d);
    EXPECT_EQ(info.block_bytes, dtype_info(d).block_bytes) << to_string(d);
    EXPECT_EQ(info.dtype, d);
  }
  // Block sizes from ggml's structs: 2-byte f16 fields plus packed codes.
  EXPECT_EQ(ggml_type_info(GGMLType::Q8_0).block_bytes, 2u + 32u);
  EXPECT_EQ(ggml_type_info(GGMLType::Q4_0).block_bytes, 2u + 16u);
  EXPECT_EQ(ggml_type_info(GGMLType::Q4_1).block_bytes, 2u + 2u + 16u);
  EXPECT_EQ(ggml_type_info(GGMLType::Q4_K).block_bytes, 2u + 2u + 12u + 128u);
  EXPECT_EQ(ggml_type_info(GGMLType::Q6_K).block_bytes, 128u + 64u + 16u + 2u);
  EXPECT_EQ(ggml_type_info(GGMLType::Q4_K).block_elems, 256u);
  EXPECT_EQ(ggml_type_name(GGMLType::BF16), "BF16");
  EXPECT_EQ(find_ggml_type(4), nullptr);  // Q4_2, removed from ggml
  EXPECT_EQ(find_ggml_type(1000), nullptr);
  ASSERT_NE(find_ggml_type(39), nullptr);
  EXPECT_EQ(find_ggml_type(39)->name, "MXFP4");
  EXPECT_FALSE(ggml_type_for(DType::U8).has_value());
  EXPECT_EQ(ggml_type_for(DType::BF16), GGMLType::BF16);
}

TEST(GGMLType, Q8_0BlockIsCodeTimesScale) {
  Bytes b;
  b.u16(f16(0.5f));
  std::vector<int> q(32);
  for (int i = 0; i < 32; ++i) q[i] = (i * 37) % 256 - 128;  // covers -128 and 127-ish
  q[0] = -128;
  q[1] = 127;
  for (int v : q) b.u8(static_cast<uint8_t>(static_cast<int8_t>(v)));
  const auto y = dequantize(GGMLType::Q8_0, b.b);
  ASSERT_EQ(y.size(), 32u);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], q[i] * 0.5f) << i;
}

TEST(GGMLType, Q4_0LowNibblesAreFirstHalf) {
  Bytes b;
  b.u16(f16(2.0f));
  for (int j = 0; j < 16; ++j) b.u8(static_cast<uint8_t>(j | ((15 - j) << 4)));
  const auto y = dequantize(GGMLType::Q4_0, b.b);
  ASSERT_EQ(y.size(), 32u);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 2.0f) << j;
    EXPECT_EQ(y[j + 16], ((15 - j) - 8) * 2.0f) << j;
  }
}

TEST(GGMLType, Q4_1IsCodeTimesScalePlusMin) {
  Bytes b;
  b.u16(f16(0.25f)).u16(f16(-1.0f));
  for (int j = 0; j < 16; ++j) b.u8(static_cast<uint8_t>(j | ((15 - j) << 4)));
  // Two blocks: the second scaled differently, to check the block stride.
  b.u16(f16(3.0f)).u16(f16(0.5f));
  for (int j = 0; j < 16; ++j) b.u8(0x5A);
  const auto y = dequantize(GGMLType::Q4_1, b.b);
  ASSERT_EQ(y.size(), 64u);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.25f - 1.0f) << j;
    EXPECT_EQ(y[j + 16], (15 - j) * 0.25f - 1.0f) << j;
    EXPECT_EQ(y[32 + j], 0xA * 3.0f + 0.5f) << j;
    EXPECT_EQ(y[48 + j], 0x5 * 3.0f + 0.5f) << j;
  }
}

TEST(GGMLType, Q5_0TakesFifthBitFromQh) {
  Bytes b;
  b.u16(f16(1.0f)).u32(0xAAAAAAAAu);  // fifth bit set for odd elements
  for (int j = 0; j < 16; ++j) b.u8(static_cast<uint8_t>(j | (j << 4)));
  const auto y = dequantize(GGMLType::Q5_0, b.b);
  for (int e = 0; e < 32; ++e) {
    const int code = (e % 16) + 16 * (e & 1);
    EXPECT_EQ(y[e], static_cast<float>(code - 16)) << e;
  }
}

// Q4_K built from the layout description: 8 sub-blocks of 32 with 6-bit
// scales and mins (sub-blocks 0-3 in the low 6 bits of bytes 0-3 / 4-7;
// sub-blocks 4-7: low 4 bits in bytes 8-11, high 2 bits in the top bits of
// bytes 0-3 / 4-7); codes: 32-byte chunks, low nibbles for the even sub-block.
TEST(GGMLType, Q4_KUsesSixBitScalesAndMins) {
  int sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = j < 4 ? j + 1 : 40 + j;
    mn[j] = j < 4 ? 60 - j : 50 + j;
  }
  uint8_t scales[12] = {};
  for (int j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    scales[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
    scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
  }
  auto code = [](int e) { return (e * 7 + 3) % 16; };
  uint8_t qs[128] = {};
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, l = e % 32;
    uint8_t& byte = qs[(sub / 2) * 32 + l];
    byte = static_cast<uint8_t>(byte | (sub % 2 == 0 ? code(e) : code(e) << 4));
  }
  Bytes b;
  b.u16(f16(0.5f)).u16(f16(0.125f));
  for (uint8_t s : scales) b.u8(s);
  for (uint8_t q : qs) b.u8(q);
  const auto y = dequantize(GGMLType::Q4_K, b.b);
  ASSERT_EQ(y.size(), 256u);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;
    // All terms are exact in f32 here (small integers times powers of two).
    EXPECT_EQ(y[e], 0.5f * sc[j] * code(e) - 0.125f * mn[j]) << e;
  }
}

TEST(GGMLType, PlainTypesConvert) {
  Bytes b;
  b.u16(f16(-1.5f)).u16(f16(65504.0f));
  auto y = dequantize(GGMLType::F16, b.b);
  EXPECT_EQ(y, (std::vector<float>{-1.5f, 65504.0f}));
  Bytes bf;
  bf.u16(0x3FC0).u16(0xFF80);  // 1.5, -inf
  y = dequantize(GGMLType::BF16, bf.b);
  EXPECT_EQ(y[0], 1.5f);
  EXPECT_TRUE(std::isinf(y[1]) && y[1] < 0);
  Bytes f64;
  f64.u64(std::bit_cast<uint64_t>(0.1));
  EXPECT_EQ(dequantize(GGMLType::F64, f64.b)[0], 0.1f);
}

TEST(GGMLType, ErrorsOnSizeMismatchAndUnsupportedTypes) {
  std::vector<std::byte> one_and_a_bit(34 + 3);
  std::vector<float> out(32);
  EXPECT_THROW(dequantize(GGMLType::Q8_0, one_and_a_bit, out), ShapeError);
  std::vector<std::byte> block(34);
  std::vector<float> too_small(31);
  EXPECT_THROW(dequantize(GGMLType::Q8_0, block, too_small), ShapeError);
  std::vector<std::byte> iq(66);
  const std::string msg = io_test::error_of([&] { dequantize(GGMLType::IQ2_XXS, iq); });
  EXPECT_NE(msg.find("IQ2_XXS"), std::string::npos) << msg;
  EXPECT_THROW(dequantize(GGMLType::I32, block), DTypeError);
}

// Every dequantizable type against the `gguf` Python package's reference
// dequantization of the same random blocks (written into one GGUF file by
// gguf.GGUFWriter): bit-exact, NaN matching NaN.
TEST(GGMLType, DequantizeMatchesGgufPythonBitExactly) {
  io_test::TempDir dir;
  const std::string path = dir.file("fixture.gguf");
  const std::string err = io_test::run_oracle({"gguf-fixture", path, dir.file("fixture.json")});
  ASSERT_EQ(err, "");
  const GGUFFile f = GGUFFile::open(path);
  size_t checked_types = 0;
  for (const StoredTensor& t : f.tensors()) {
    if (t.name.rfind("deq.", 0) == 0) continue;
    const StoredTensor* expected = f.find("deq." + t.name);
    if (expected == nullptr) continue;
    ASSERT_TRUE(t.ggml_type.has_value());
    SCOPED_TRACE(t.name);
    const auto got = dequantize(*t.ggml_type, t.data);
    ASSERT_EQ(expected->data.size(), got.size() * 4);
    size_t nan = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      float want;
      std::memcpy(&want, expected->data.data() + 4 * i, 4);
      if (std::isnan(want)) {
        ++nan;
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want))
            << "element " << i << ": " << got[i] << " vs " << want;
      }
    }
    EXPECT_LT(nan, got.size() / 2) << "random scales should be mostly finite";
    ++checked_types;
  }
  // 11 block types + F16, BF16, F64.
  EXPECT_EQ(checked_types, 14u);
  EXPECT_EQ(dequantizable_ggml_types().size(), 15u);  // those + F32
}

}  // namespace
}  // namespace luminal
