#include "luminal/core/tensor_data.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"

namespace luminal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
T raw(const TensorData& t, size_t i) {
  T value;
  std::memcpy(&value, t.data() + i * sizeof(T), sizeof(T));
  return value;
}

template <typename Fn>
std::string error_message(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorData, DefaultIsF32Scalar) {
  const TensorData t;
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.rank(), 0u);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.nbytes(), 4u);
  EXPECT_EQ(t.get(0), 0.0);
  EXPECT_EQ(t.describe(), "f32[]");
}

TEST(TensorData, ZeroFilledConstruction) {
  const TensorData t(DType::I64, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 48u);
  EXPECT_EQ(t.rank(), 2u);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.to_ints(), std::vector<int64_t>(6, 0));
  const TensorData empty(DType::F16, {4, 0, 2});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.nbytes(), 0u);
  EXPECT_TRUE(empty.to_doubles().empty());
}

TEST(TensorData, OwnedBytesStartOnACacheLine) {
  // Kernels load rows 32 or 64 bytes at a time: a tensor starting mid-line
  // (malloc's large blocks start 16 bytes into a page) splits every other load.
  auto aligned = [](const TensorData& t) {
    return reinterpret_cast<uintptr_t>(t.data()) % 64 == 0;
  };
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1000}, int64_t{1} << 20}) {
    TensorData t(DType::F32, {n});
    EXPECT_TRUE(aligned(t)) << n;
    const TensorData copy = t;
    EXPECT_TRUE(aligned(copy)) << n;
    TensorData assigned(DType::I8, {5});
    assigned = copy;
    EXPECT_TRUE(aligned(assigned)) << n;
    const TensorData moved = std::move(t);
    EXPECT_TRUE(aligned(moved)) << n;
  }
  EXPECT_TRUE(aligned(TensorData::from_doubles(DType::F16, {3}, {1, 2, 3})));
  EXPECT_TRUE(aligned(TensorData()));
}

TEST(TensorData, NegativeOrHugeShapeThrows) {
  EXPECT_THROW(TensorData(DType::F32, {2, -1}), ShapeError);
  EXPECT_THROW(TensorData(DType::F32, {INT64_MAX, 4}), ShapeError);
}

TEST(TensorData, Describe) {
  EXPECT_EQ(TensorData(DType::F32, {2, 3}).describe(), "f32[2, 3]");
  EXPECT_EQ(TensorData(DType::BF16, {7}).describe(), "bf16[7]");
  EXPECT_EQ(TensorData(DType::Bool, {}).describe(), "bool[]");
  EXPECT_EQ(TensorData(DType::Q4_1, {2, 32}).describe(), "q4_1[2, 32]");
}

TEST(TensorData, FromDoublesEveryPlainDType) {
  // Values exactly representable in every float dtype (even e4m3: 3 fraction bits).
  const std::vector<double> values = {1.0, -2.5, 0.0, 4.0};
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::F8E4M3, DType::F8E5M2}) {
    const TensorData t = TensorData::from_doubles(d, {2, 2}, values);
    EXPECT_EQ(t.to_doubles(), values) << to_string(d);
    EXPECT_EQ(t.nbytes(), 4 * element_size(d)) << to_string(d);
  }
  for (DType d : {DType::I32, DType::I64, DType::I8}) {
    const TensorData t = TensorData::from_doubles(d, {2, 2}, values);
    EXPECT_EQ(t.to_ints(), (std::vector<int64_t>{1, -2, 0, 4})) << to_string(d);
  }
  EXPECT_EQ(TensorData::from_doubles(DType::U8, {2, 2}, values).to_ints(),
            (std::vector<int64_t>{1, 0, 0, 4}));  // -2.5 saturates at 0
  EXPECT_EQ(TensorData::from_doubles(DType::Bool, {2, 2}, values).to_ints(),
            (std::vector<int64_t>{1, 1, 0, 1}));
}

TEST(TensorData, StorageLayoutIsLittleEndianDense) {
  const TensorData f = TensorData::from_doubles(DType::F32, {3}, {1.0, 2.0, 3.0});
  EXPECT_EQ(raw<float>(f, 2), 3.0f);
  // Independently known encodings: f16 1.0 = 0x3c00, bf16 -2 = 0xc000.
  EXPECT_EQ(raw<uint16_t>(TensorData::from_doubles(DType::F16, {1}, {1.0}), 0), 0x3c00);
  EXPECT_EQ(raw<uint16_t>(TensorData::from_doubles(DType::BF16, {1}, {-2.0}), 0), 0xc000);
  // e4m3 1.0 = 0 0111 000 = 0x38; e5m2 1.0 = 0 01111 00 = 0x3c.
  EXPECT_EQ(raw<uint8_t>(TensorData::from_doubles(DType::F8E4M3, {1}, {1.0}), 0), 0x38);
  EXPECT_EQ(raw<uint8_t>(TensorData::from_doubles(DType::F8E5M2, {1}, {1.0}), 0), 0x3c);
  EXPECT_EQ(raw<int32_t>(TensorData::from_ints(DType::I32, {2}, {5, -7}), 1), -7);
}

TEST(TensorData, FloatToIntSaturates) {
  EXPECT_EQ(TensorData::from_doubles(DType::I8, {1}, {300.7}).get_int(0), 127);
  EXPECT_EQ(TensorData::from_doubles(DType::I8, {1}, {-300.7}).get_int(0), -128);
  EXPECT_EQ(TensorData::from_doubles(DType::I32, {1}, {-1e20}).get_int(0), INT32_MIN);
  EXPECT_EQ(TensorData::from_doubles(DType::I32, {1}, {1e20}).get_int(0), INT32_MAX);
  EXPECT_EQ(TensorData::from_doubles(DType::U8, {1}, {256.0}).get_int(0), 255);
  EXPECT_EQ(TensorData::from_doubles(DType::U8, {1}, {-0.5}).get_int(0), 0);
  EXPECT_EQ(TensorData::from_doubles(DType::I64, {1}, {1e19}).get_int(0), INT64_MAX);
  EXPECT_EQ(TensorData::from_doubles(DType::I64, {1}, {-kInf}).get_int(0), INT64_MIN);
  EXPECT_EQ(TensorData::from_doubles(DType::I32, {1}, {kInf}).get_int(0), INT32_MAX);
}

TEST(TensorData, FloatToIntNaNIsZero) {
  for (DType d : {DType::I32, DType::I64, DType::I8, DType::U8}) {
    EXPECT_EQ(TensorData::from_doubles(d, {1}, {kNaN}).get_int(0), 0) << to_string(d);
  }
  // Reading a float tensor as ints follows the same rule.
  EXPECT_EQ(TensorData::from_doubles(DType::F32, {1}, {kNaN}).get_int(0), 0);
}

TEST(TensorData, FloatToIntTruncatesTowardZero) {
  const TensorData t = TensorData::from_doubles(DType::I32, {4}, {-2.7, 2.7, -0.9, 1e9 + 0.5});
  EXPECT_EQ(t.to_ints(), (std::vector<int64_t>{-2, 2, 0, 1000000000}));
  const TensorData f = TensorData::from_doubles(DType::F64, {2}, {-2.7, 3.99});
  EXPECT_EQ(f.get_int(0), -2);
  EXPECT_EQ(f.get_int(1), 3);
}

TEST(TensorData, FromIntsWraps) {
  EXPECT_EQ(TensorData::from_ints(DType::U8, {1}, {257}).get_int(0), 1);
  EXPECT_EQ(TensorData::from_ints(DType::U8, {1}, {-1}).get_int(0), 255);
  EXPECT_EQ(TensorData::from_ints(DType::I8, {1}, {128}).get_int(0), -128);
  EXPECT_EQ(TensorData::from_ints(DType::I8, {1}, {-129}).get_int(0), 127);
  EXPECT_EQ(TensorData::from_ints(DType::I32, {1}, {int64_t{1} << 32 | 5}).get_int(0), 5);
  EXPECT_EQ(TensorData::from_ints(DType::I32, {1}, {2147483648LL}).get_int(0), INT32_MIN);
  EXPECT_EQ(TensorData::from_ints(DType::I64, {1}, {INT64_MIN}).get_int(0), INT64_MIN);
}

TEST(TensorData, I64IsExact) {
  // 2^53 + 1 is not a double; the int path must not go through one.
  const int64_t big = (int64_t{1} << 53) + 1;
  const TensorData t = TensorData::from_ints(DType::I64, {3}, {big, INT64_MAX, -big});
  EXPECT_EQ(t.to_ints(), (std::vector<int64_t>{big, INT64_MAX, -big}));
}

TEST(TensorData, BoolCast) {
  const TensorData t =
      TensorData::from_doubles(DType::Bool, {6}, {0.0, -0.0, kNaN, 0.5, -3.0, kInf});
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{0, 0, 1, 1, 1, 1}));
  // Stored as one byte 0/1.
  EXPECT_EQ(raw<uint8_t>(t, 3), 1);
  EXPECT_EQ(raw<uint8_t>(t, 1), 0);
  // Ints -> bool is x != 0, not the low bit (256 would wrap to 0).
  EXPECT_EQ(TensorData::from_ints(DType::Bool, {3}, {256, 0, -1}).to_ints(),
            (std::vector<int64_t>{1, 0, 1}));
}

TEST(TensorData, BoolReadsAsZeroOrOne) {
  TensorData t(DType::Bool, {2});
  t.bytes()[0] = std::byte{7};  // a non-canonical "true" byte from a foreign buffer
  EXPECT_EQ(t.get(0), 1.0);
  EXPECT_EQ(t.get_int(0), 1);
  EXPECT_EQ(t.get(1), 0.0);
}

TEST(TensorData, NarrowFloatsRoundToNearestEven) {
  // 1 + 2^-11 is the f16 tie between 1.0 (even) and 1 + 2^-10 -> 1.0.
  EXPECT_EQ(TensorData::from_doubles(DType::F16, {1}, {1.0 + std::ldexp(1.0, -11)}).get(0), 1.0);
  // 1 + 3 * 2^-8 is the bf16 tie between 1 + 2^-7 and 1 + 2^-6 (even) -> 1.015625.
  EXPECT_EQ(TensorData::from_doubles(DType::BF16, {1}, {1.0 + 3 * std::ldexp(1.0, -8)}).get(0),
            1.015625);
  // f16 overflow to inf at 65520; e4m3 overflow to NaN above 464.
  EXPECT_EQ(TensorData::from_doubles(DType::F16, {1}, {65520.0}).get(0), kInf);
  EXPECT_TRUE(std::isnan(TensorData::from_doubles(DType::F8E4M3, {1}, {500.0}).get(0)));
  // f32 rounds; f64 keeps every bit.
  EXPECT_EQ(TensorData::from_doubles(DType::F32, {1}, {0.1}).get(0), static_cast<double>(0.1f));
  EXPECT_EQ(TensorData::from_doubles(DType::F64, {1}, {0.1}).get(0), 0.1);
}

TEST(TensorData, F32OverflowAndSpecials) {
  const TensorData t = TensorData::from_doubles(DType::F32, {4}, {1e300, -1e300, -0.0, kNaN});
  EXPECT_EQ(t.get(0), kInf);
  EXPECT_EQ(t.get(1), -kInf);
  EXPECT_TRUE(std::signbit(t.get(2)));
  EXPECT_TRUE(std::isnan(t.get(3)));
  // Just above FLT_MAX but below the rounding midpoint stays FLT_MAX.
  const double just_above = static_cast<double>(std::numeric_limits<float>::max()) * (1 + 1e-9);
  EXPECT_EQ(TensorData::from_doubles(DType::F32, {1}, {just_above}).get(0),
            static_cast<double>(std::numeric_limits<float>::max()));
}

TEST(TensorData, ShapeMismatchThrows) {
  EXPECT_THROW(TensorData::from_doubles(DType::F32, {2, 3}, {1, 2, 3}), ShapeError);
  EXPECT_THROW(TensorData::from_ints(DType::I32, {2}, {1, 2, 3}), ShapeError);
  EXPECT_THROW(TensorData::from_doubles(DType::F32, {}, {}), ShapeError);  // scalar needs 1
  const std::string message = error_message([] {
    TensorData::from_doubles(DType::F32, {2, 3}, {1, 2, 3});
  });
  EXPECT_NE(message.find("6"), std::string::npos) << message;
  EXPECT_NE(message.find("3"), std::string::npos) << message;
}

TEST(TensorData, OutOfRangeAccessThrows) {
  TensorData t(DType::F32, {2, 3});
  EXPECT_THROW(t.get(6), IndexError);
  EXPECT_THROW(t.get(-1), IndexError);
  EXPECT_THROW(t.set(6, 1.0), IndexError);
  EXPECT_THROW(t.get_int(100), IndexError);
  EXPECT_THROW(t.set_int(-5, 1), IndexError);
  const std::string message = error_message([&] { t.get(7); });
  EXPECT_NE(message.find("7"), std::string::npos) << message;
  EXPECT_NE(message.find("6"), std::string::npos) << message;
}

TEST(TensorData, QuantizedStorage) {
  const TensorData q(DType::Q8_0, {2, 32});
  EXPECT_EQ(q.numel(), 64);
  EXPECT_EQ(q.nbytes(), 68u);  // two 34-byte blocks
  EXPECT_EQ(TensorData(DType::Q4_0, {32}).nbytes(), 18u);
  EXPECT_EQ(TensorData(DType::Q4_1, {4, 8}).nbytes(), 20u);
  EXPECT_THROW(TensorData(DType::Q4_0, {31}), DTypeError);
  EXPECT_THROW(TensorData(DType::Q8_0, {}), DTypeError);  // a scalar is not a whole block
}

TEST(TensorData, QuantizedElementsAreReadOnly) {
  TensorData q(DType::Q4_1, {32});
  EXPECT_EQ(q.get(0), 0.0);  // reads decode (zero blocks decode to 0); see quantized_test
  EXPECT_THROW(q.get(32), IndexError);
  EXPECT_THROW(q.get_int(0), DTypeError);
  EXPECT_THROW(q.set(0, 1.0), DTypeError);
  EXPECT_THROW(q.set_int(0, 1), DTypeError);
  EXPECT_THROW(TensorData::from_doubles(DType::Q8_0, {32}, std::vector<double>(32, 0.0)),
               DTypeError);
  EXPECT_THROW(TensorData::full(DType::Q4_0, {32}, 1.0), DTypeError);
  const std::string message = error_message([&] { q.set(0, 1.0); });
  EXPECT_NE(message.find("q4_1"), std::string::npos) << message;
  EXPECT_NE(message.find("dequantize"), std::string::npos) << message;
}

// dequantize_elements decodes a range exactly as dequantize_element decodes
// each element (random blocks: every code, random f16 scales), from any first
// element; one hand-decoded Q4_1 element; a plain dtype is an error.
TEST(TensorData, DequantizeElementsMatchesEachElement) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint8_t>(state >> 56);
  };
  for (DType d : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    TensorData q(d, {4, 32});
    for (size_t b = 0; b < q.nbytes(); ++b) q.data()[b] = std::byte{next()};
    // (scales: finite f16s of modest size, so every product is a number)
    for (int blk = 0; blk < 4; ++blk) {
      std::byte* block = q.data() + blk * dtype_info(d).block_bytes;
      block[1] = std::byte{static_cast<uint8_t>(0x30 + next() % 8)};
      if (d == DType::Q4_1) block[3] = std::byte{static_cast<uint8_t>(0xb0 + next() % 8)};
    }
    for (int64_t first : {int64_t{0}, int64_t{5}, int64_t{31}}) {
      const int64_t count = q.numel() - first - 3;
      std::vector<float> out(static_cast<size_t>(count), -1.0f);
      dequantize_elements(d, q.data(), first, count, out.data());
      for (int64_t i = 0; i < count; ++i)
        EXPECT_EQ(std::bit_cast<uint32_t>(out[static_cast<size_t>(i)]),
                  std::bit_cast<uint32_t>(dequantize_element(d, q.data(), first + i)))
            << dtype_name(d) << " element " << first + i;
    }
  }
  // Q4_1: d = 0.5 (0x3800), m = -1 (0xbc00), element 17 is the high nibble of byte 1.
  TensorData one(DType::Q4_1, {32});
  const uint8_t block[20] = {0x00, 0x38, 0x00, 0xbc, 0x00, 0x90};
  std::memcpy(one.data(), block, 20);
  float v = 0;
  dequantize_elements(DType::Q4_1, one.data(), 17, 1, &v);
  EXPECT_EQ(v, 9 * 0.5f - 1.0f);
  EXPECT_THROW(dequantize_elements(DType::F32, one.data(), 0, 1, &v), DTypeError);
}

TEST(TensorData, Full) {
  const TensorData t = TensorData::full(DType::BF16, {3, 2}, 1.5);
  EXPECT_EQ(t.to_doubles(), std::vector<double>(6, 1.5));
  EXPECT_EQ(TensorData::full(DType::I8, {4}, 1000.0).to_ints(), std::vector<int64_t>(4, 127));
  EXPECT_EQ(TensorData::full(DType::F64, {0}, 2.0).numel(), 0);
  const TensorData scalar = TensorData::full(DType::I32, {}, -3.9);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.get_int(0), -3);
}

TEST(TensorData, SetAndGetRoundTrip) {
  TensorData t(DType::F16, {2, 2});
  t.set(3, 0.5);
  t.set_int(1, 2049);  // f16 spacing is 2 in [2048, 4096): 2049 ties to even 2048
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{0.0, 2048.0, 0.0, 0.5}));
  TensorData u(DType::U8, {1});
  u.set(0, 255.9);
  EXPECT_EQ(u.get(0), 255.0);
  EXPECT_EQ(u.get_int(0), 255);
}

TEST(TensorData, BytesAreMutableAndSized) {
  TensorData t(DType::I32, {2});
  EXPECT_EQ(t.bytes().size(), 8u);
  const int32_t value = -42;
  std::memcpy(t.data() + 4, &value, sizeof value);
  EXPECT_EQ(t.get_int(1), -42);
  const TensorData& ct = t;
  EXPECT_EQ(ct.bytes().size(), 8u);
  EXPECT_EQ(ct.data(), t.data());
}

TEST(TensorDataCast, SaturatingFloatToInt) {
  EXPECT_EQ(saturating_float_to_int(-2.7, DType::I32), -2);
  EXPECT_EQ(saturating_float_to_int(300.7, DType::I8), 127);
  EXPECT_EQ(saturating_float_to_int(kNaN, DType::I64), 0);
  EXPECT_EQ(saturating_float_to_int(9223372036854775808.0, DType::I64), INT64_MAX);
  EXPECT_EQ(saturating_float_to_int(-9223372036854775808.0, DType::I64), INT64_MIN);
  EXPECT_EQ(saturating_float_to_int(-1.0, DType::U8), 0);
  EXPECT_EQ(saturating_float_to_int(kNaN, DType::Bool), 1);  // bool target: x != 0
  EXPECT_THROW(saturating_float_to_int(1.0, DType::F32), DTypeError);
}

TEST(TensorDataCast, WrapInt) {
  EXPECT_EQ(wrap_int(257, DType::U8), 1);
  EXPECT_EQ(wrap_int(128, DType::I8), -128);
  EXPECT_EQ(wrap_int(INT64_MAX, DType::I32), -1);
  EXPECT_EQ(wrap_int(INT64_MIN, DType::I64), INT64_MIN);
  EXPECT_EQ(wrap_int(2, DType::Bool), 1);
  EXPECT_THROW(wrap_int(1, DType::F16), DTypeError);
}

TEST(TensorDataCast, RoundToFloatDType) {
  EXPECT_EQ(round_to_float_dtype(0.1, DType::F64), 0.1);
  EXPECT_EQ(round_to_float_dtype(0.1, DType::F32), static_cast<double>(0.1f));
  // f16(0.1) = 0x2e66 = (1 + 614/1024) * 2^-4.
  EXPECT_EQ(round_to_float_dtype(0.1, DType::F16), (1 + 614.0 / 1024) / 16);
  // bf16 keeps 8 significant bits: 257 -> tie between 256 (even) and 258 -> 256.
  EXPECT_EQ(round_to_float_dtype(257.0, DType::BF16), 256.0);
  EXPECT_EQ(round_to_float_dtype(448.0, DType::F8E4M3), 448.0);
  EXPECT_EQ(round_to_float_dtype(1e6, DType::F8E5M2), kInf);
  EXPECT_THROW(round_to_float_dtype(1.0, DType::I32), DTypeError);
  EXPECT_THROW(round_to_float_dtype(1.0, DType::Q8_0), DTypeError);
}

TEST(TensorDataCast, NarrowingFromDoubleHasNoDoubleRounding) {
  // 1 + 2^-11 + 2^-40 lies just above the f16 tie between 1.0 and 1 + 2^-10, so it must round up.
  // (Rounding to float first would lose the 2^-40 and land exactly on the tie -> 1.0.)
  EXPECT_EQ(round_to_float_dtype(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), DType::F16),
            1.0 + std::ldexp(1.0, -10));
  // Same for bf16 (tie at 1 + 2^-8) and e4m3 (ulp 2^-3 at 1, tie at 1 + 2^-4).
  EXPECT_EQ(round_to_float_dtype(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), DType::BF16),
            1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(round_to_float_dtype(1.0 + std::ldexp(1.0, -4) + std::ldexp(1.0, -40), DType::F8E4M3),
            1.125);
  // Just below a tie rounds down, and exact ties still go to even.
  EXPECT_EQ(round_to_float_dtype(1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40), DType::F16),
            1.0);
  EXPECT_EQ(round_to_float_dtype(-(1.0 + std::ldexp(1.0, -11)), DType::F16), -1.0);
  // 1e-300 is below float's range; the round-to-odd step turns it into float's smallest
  // subnormal, which is still far below half of bf16's smallest subnormal -> signed zero.
  EXPECT_EQ(round_to_float_dtype(-1e-300, DType::BF16), 0.0);
  EXPECT_TRUE(std::signbit(round_to_float_dtype(-1e-300, DType::BF16)));
  // The same rule applies when storing.
  EXPECT_EQ(
      TensorData::from_doubles(DType::F16, {1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})
          .get(0),
      1.0 + std::ldexp(1.0, -10));
}

TEST(TensorDataCast, LargeIntsRoundOnceIntoFloats) {
  // 2^62 + 2^54 + 1: bf16 keeps 8 significant bits, so its ulp at 2^62 is 2^55 and 2^54 is the
  // tie; the +1 puts the value above it -> 2^62 + 2^55. Converting to double first would drop
  // the +1 (double's ulp there is 2^10) and the tie would go to even, 2^62.
  const int64_t bf16_case = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  EXPECT_EQ(TensorData::from_ints(DType::BF16, {1}, {bf16_case}).get(0),
            std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  EXPECT_EQ(TensorData::from_ints(DType::BF16, {1}, {-bf16_case}).get(0),
            -(std::ldexp(1.0, 62) + std::ldexp(1.0, 55)));
  // f32: ulp at 2^62 is 2^39, tie at 2^38, +1 above it -> 2^62 + 2^39.
  const int64_t f32_case = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  EXPECT_EQ(TensorData::from_ints(DType::F32, {1}, {f32_case}).get(0),
            std::ldexp(1.0, 62) + std::ldexp(1.0, 39));
  // INT64_MIN = -2^63 is exact in every float format with enough range.
  EXPECT_EQ(TensorData::from_ints(DType::BF16, {1}, {INT64_MIN}).get(0), -std::ldexp(1.0, 63));
  EXPECT_EQ(TensorData::from_ints(DType::F16, {1}, {INT64_MAX}).get(0), kInf);
  EXPECT_EQ(TensorData::from_ints(DType::F64, {1}, {3}).get(0), 3.0);
}

}  // namespace
}  // namespace luminal

namespace luminal {
namespace {

// Zero-copy: a borrowed tensor reads the caller's memory in place and keeps
// its owner alive; copies own their bytes, moves keep borrowing.
TEST(TensorData, BorrowedMemory) {
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<float>> watch = storage;
  auto* raw = reinterpret_cast<std::byte*>(storage->data());
  TensorData t = TensorData::borrow(DType::F32, {2, 3}, raw, storage);
  storage.reset();
  EXPECT_FALSE(watch.expired());  // the tensor keeps the owner alive
  EXPECT_TRUE(t.borrowed());
  EXPECT_EQ(t.data(), raw);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(t.get(4), 5.0);
  t.set(0, 9.0);  // writes through to the borrowed memory
  EXPECT_EQ(reinterpret_cast<float*>(raw)[0], 9.0f);
  TensorData copy = t;
  EXPECT_FALSE(copy.borrowed());
  EXPECT_NE(copy.data(), raw);
  EXPECT_EQ(copy.get(0), 9.0);
  TensorData moved = std::move(t);
  EXPECT_EQ(moved.data(), raw);
  moved = TensorData();
  EXPECT_TRUE(watch.expired());  // released with the last borrower
  EXPECT_THROW(TensorData::borrow(DType::F32, {2}, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace luminal
