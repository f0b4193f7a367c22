// Bit-exact tests of the narrow float conversions. Every expected bit pattern below is derived by
// hand from the IEEE / OCP format definitions (the derivation is in the comment next to it); none
// is produced by the code under test.
//
// Formats: f16 = 1 sign | 5 exponent (bias 15) | 10 fraction. bf16 = 1 | 8 (bias 127) | 7.
// e4m3fn = 1 | 4 (bias 7) | 3, no inf, S.1111.111 is NaN. e5m2 = 1 | 5 (bias 15) | 2, IEEE-like.

#include "luminal/core/float_convert.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace luminal {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float from_bits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

bool is_f16_nan(uint16_t h) {
  return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
}
bool is_bf16_nan(uint16_t h) {
  return (h & 0x7f80) == 0x7f80 && (h & 0x007f) != 0;
}

// A narrow format seen through the functions under test, for property tests.
struct Format {
  const char* name;
  int bits;
  std::function<uint32_t(float)> encode;
  std::function<float(uint32_t)> decode;
};

Format f16_format() {
  return {"f16", 16, [](float x) { return uint32_t{float_to_f16_bits(x)}; },
          [](uint32_t c) { return f16_bits_to_float(static_cast<uint16_t>(c)); }};
}
Format bf16_format() {
  return {"bf16", 16, [](float x) { return uint32_t{float_to_bf16_bits(x)}; },
          [](uint32_t c) { return bf16_bits_to_float(static_cast<uint16_t>(c)); }};
}
Format e4m3_format() {
  return {"e4m3", 8, [](float x) { return uint32_t{float_to_f8e4m3_bits(x)}; },
          [](uint32_t c) { return f8e4m3_bits_to_float(static_cast<uint8_t>(c)); }};
}
Format e5m2_format() {
  return {"e5m2", 8, [](float x) { return uint32_t{float_to_f8e5m2_bits(x)}; },
          [](uint32_t c) { return f8e5m2_bits_to_float(static_cast<uint8_t>(c)); }};
}

// Round-to-nearest-even oracle. The positive finite values of a sign-magnitude format increase
// with their code, so the expected code for |x| is found by bisection over the decoded values
// (the decoders are pinned by the hand-computed tests). Past the largest finite value the next
// code (inf, or NaN for e4m3fn) is treated as the value max + ulp, which is exactly the IEEE
// overflow rule: round to inf at and beyond max + ulp/2 when max's code is odd.
class NearestOracle {
public:
  explicit NearestOracle(const Format& f) : sign_bit_(1u << (f.bits - 1)) {
    for (uint32_t code = 0; code < sign_bit_; ++code) {
      const float v = f.decode(code);
      if (!std::isfinite(v)) break;
      values_.push_back(v);
    }
    const double max = values_.back();
    values_.push_back(max + (max - values_[values_.size() - 2]));  // virtual "code max + 1"
  }

  uint32_t expected(float x) const {
    const uint32_t sign = std::signbit(x) ? sign_bit_ : 0u;
    const double a = std::fabs(static_cast<double>(x));
    const size_t last = values_.size() - 1;
    if (a >= values_[last]) return sign | static_cast<uint32_t>(last);
    size_t lo = 0;  // values_[lo] <= a < values_[hi]
    size_t hi = last;
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (values_[mid] <= a ? lo : hi) = mid;
    }
    // 2a and lo + hi are exact in double (the narrow values have few significant bits).
    const double twice = 2 * a;
    const double sum = values_[lo] + values_[hi];
    size_t pick = twice < sum ? lo : hi;
    if (twice == sum) pick = (lo % 2 == 0) ? lo : hi;
    return sign | static_cast<uint32_t>(pick);
  }

  const std::vector<double>& values() const { return values_; }

private:
  uint32_t sign_bit_;
  std::vector<double> values_;
};

// Random float whose binary exponent is uniform in [min_exp, max_exp], random fraction and sign.
float random_float(std::mt19937& rng, int min_exp, int max_exp) {
  std::uniform_int_distribution<int> exp_dist(min_exp, max_exp);
  std::uniform_int_distribution<uint32_t> frac_dist(0, 0x7fffff);
  std::bernoulli_distribution sign_dist(0.5);
  const auto biased = static_cast<uint32_t>(exp_dist(rng) + 127);
  return from_bits((sign_dist(rng) ? 0x80000000u : 0u) | (biased << 23) | frac_dist(rng));
}

void check_nearest(const Format& f, int min_exp, int max_exp, uint32_t seed) {
  const NearestOracle oracle(f);
  std::mt19937 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    const float x = random_float(rng, min_exp, max_exp);
    ASSERT_EQ(f.encode(x), oracle.expected(x))
        << f.name << " x=" << x << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(x) << ")";
  }
}

// Every exact midpoint between neighbouring finite values must go to the even code.
void check_all_midpoints(const Format& f) {
  const NearestOracle oracle(f);
  const std::vector<double>& v = oracle.values();
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const auto mid = static_cast<float>((v[i] + v[i + 1]) / 2);  // exact: needs one more bit
    ASSERT_EQ(static_cast<double>(mid), (v[i] + v[i + 1]) / 2);
    const uint32_t even = (i % 2 == 0) ? static_cast<uint32_t>(i) : static_cast<uint32_t>(i + 1);
    ASSERT_EQ(f.encode(mid), even) << f.name << " midpoint " << mid;
    ASSERT_EQ(f.encode(-mid), even | (1u << (f.bits - 1))) << f.name << " midpoint " << -mid;
  }
}

// ------------------------------------------------------------------------------------------ f16

TEST(FloatConvertF16, SignedZeros) {
  EXPECT_EQ(float_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-0.0f), 0x8000);  // only the sign bit
  EXPECT_EQ(f16_bits_to_float(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(f16_bits_to_float(0x8000)));
  EXPECT_EQ(f16_bits_to_float(0x8000), 0.0f);
}

TEST(FloatConvertF16, LargestFiniteAndOverflow) {
  // 65504 = 1.1111111111b * 2^15: exponent 15 + 15 = 30 = 11110b, fraction all ones -> 0x7bff.
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  // The next value would be 2^16; the midpoint is 65520. 65519 is below it -> 65504.
  EXPECT_EQ(float_to_f16_bits(65519.0f), 0x7bff);
  // 65520 is exactly the midpoint; 0x7bff is odd, "2^16" = 0x7c00 is even -> inf.
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_f16_bits(1.0e6f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(f16_bits_to_float(0x7bff), 65504.0f);
}

TEST(FloatConvertF16, NearSmallestNormal) {
  // Smallest normal 2^-14 = 6.103515625e-05: exponent field 1, fraction 0 -> 0x0400.
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400);
  // 6.1e-5 is below 2^-14, so it is subnormal, in units of 2^-24: 6.1e-5 * 16777216 =
  // 1023.410176. The fractional part .41 is far from .5 (float's own rounding of 6.1e-5 moves it
  // by ~1e-4 units at most), so it rounds down to 1023 = 0x3ff.
  EXPECT_EQ(float_to_f16_bits(6.1e-5f), 0x03ff);
  // Largest subnormal 1023 * 2^-24 = 2^-14 - 2^-24 -> 0x03ff exactly.
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -24)), 0x03ff);
  // 2^-14 - 2^-25 is the midpoint between 0x03ff (odd) and 0x0400 (even) -> 0x0400: rounding
  // carries out of the subnormal range into the smallest normal.
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);
  EXPECT_EQ(f16_bits_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(f16_bits_to_float(0x03ff), 1023.0f * std::ldexp(1.0f, -24));
}

TEST(FloatConvertF16, Subnormals) {
  // Subnormal unit is 2^-24 = 5.9604644775390625e-08.
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);
  // 1e-7 / 2^-24 = 1.6777216 -> nearest integer 2 -> 0x0002.
  EXPECT_EQ(float_to_f16_bits(1.0e-7f), 0x0002);
  // 2^-25 = half a unit: tie between 0 (even) and 1 (odd) -> 0.
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-std::ldexp(1.0f, -25)), 0x8000);  // sign survives underflow
  // 1.5 * 2^-25 = 0.75 units -> 1.
  EXPECT_EQ(float_to_f16_bits(1.5f * std::ldexp(1.0f, -25)), 0x0001);
  // 3 * 2^-25 = 1.5 units: tie between 1 (odd) and 2 (even) -> 2.
  EXPECT_EQ(float_to_f16_bits(3.0f * std::ldexp(1.0f, -25)), 0x0002);
  // Anything below half a unit (including float subnormals) -> signed zero.
  EXPECT_EQ(float_to_f16_bits(1.0e-30f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-1.0e-40f), 0x8000);
  EXPECT_EQ(f16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_bits_to_float(0x8002), -std::ldexp(1.0f, -23));
}

TEST(FloatConvertF16, TiesToEvenNearOne) {
  // 1.0 = 0x3c00 (exponent 15 = 01111b). One ulp at 1 is 2^-10.
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(1.0f + std::ldexp(1.0f, -10)), 0x3c01);
  // 1 + 2^-11 is half an ulp: tie between 0x3c00 (even) and 0x3c01 -> 0x3c00.
  EXPECT_EQ(float_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is the midpoint of 0x3c01 (odd) and 0x3c02 (even) -> 0x3c02.
  EXPECT_EQ(float_to_f16_bits(1.0f + 3.0f * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the first tie -> rounds up.
  EXPECT_EQ(float_to_f16_bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  // Fraction all ones plus half an ulp carries into the exponent: 2 - 2^-11 -> 2.0 = 0x4000.
  EXPECT_EQ(float_to_f16_bits(2.0f - std::ldexp(1.0f, -11)), 0x4000);
}

TEST(FloatConvertF16, KnownDecimals) {
  // 0.1 = 1.6 * 2^-4: exponent 11 = 01011b -> 0x2c00; fraction 0.6 * 1024 = 614.4 -> 614 = 0x266.
  EXPECT_EQ(float_to_f16_bits(0.1f), 0x2e66);
  // pi = 1.5707963 * 2: exponent 16 -> 0x4000; fraction 0.5707963 * 1024 = 584.496 -> 584 = 0x248.
  EXPECT_EQ(float_to_f16_bits(3.14159265f), 0x4248);
  // -2 = sign | exponent 16: 0xc000.
  EXPECT_EQ(float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(f16_bits_to_float(0xc000), -2.0f);
  // 0x3555: exponent 13 (2^-2), fraction 0x155 = 341 -> (1 + 341/1024) / 4 = 0.333251953125.
  EXPECT_EQ(f16_bits_to_float(0x3555), 0.333251953125f);
}

TEST(FloatConvertF16, Infinities) {
  EXPECT_EQ(float_to_f16_bits(kInf), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-kInf), 0xfc00);
  EXPECT_EQ(f16_bits_to_float(0x7c00), kInf);
  EXPECT_EQ(f16_bits_to_float(0xfc00), -kInf);
}

TEST(FloatConvertF16, NaNStaysNaN) {
  EXPECT_TRUE(is_f16_nan(float_to_f16_bits(kNaN)));
  const uint16_t neg = float_to_f16_bits(-kNaN);
  EXPECT_TRUE(is_f16_nan(neg));
  EXPECT_EQ(neg & 0x8000, 0x8000);  // sign kept
  // A NaN whose payload lies only in the low float fraction bits must not truncate to inf.
  EXPECT_TRUE(is_f16_nan(float_to_f16_bits(from_bits(0x7f800001))));
  EXPECT_EQ(float_to_f16_bits(kNaN) & 0x0200, 0x0200);  // quiet bit set
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7c01)));  // signalling pattern still reads as NaN
  EXPECT_TRUE(std::signbit(f16_bits_to_float(0xfe00)));
  EXPECT_TRUE(std::isnan(static_cast<float>(f16(kNaN))));
}

TEST(FloatConvertF16, AllBitPatternsRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float x = f16_bits_to_float(h);
    if (is_f16_nan(h)) {
      ASSERT_TRUE(std::isnan(x)) << std::hex << bits;
      ASSERT_TRUE(is_f16_nan(float_to_f16_bits(x))) << std::hex << bits;
      ASSERT_EQ(std::signbit(x), (bits & 0x8000) != 0);
    } else {
      ASSERT_EQ(float_to_f16_bits(x), h) << std::hex << bits;
    }
  }
}

TEST(FloatConvertF16, RandomFloatsRoundToNearest) {
  // Exponents from well below the subnormal range to beyond the overflow threshold.
  check_nearest(f16_format(), -27, 17, 12345);
}

TEST(FloatConvertF16, AllMidpointsTieToEven) {
  check_all_midpoints(f16_format());
}

TEST(FloatConvertF16, StructWrapper) {
  // 1.5 = 1.1b: exponent 15, fraction 1000000000b = 0x200 -> 0x3e00.
  EXPECT_EQ(f16(1.5f).bits, 0x3e00);
  EXPECT_EQ(static_cast<float>(f16::from_bits(0x3e00)), 1.5f);
  EXPECT_EQ(f16().bits, 0x0000);
}

// ----------------------------------------------------------------------------------------- bf16

TEST(FloatConvertBF16, TiesToEvenNearOne) {
  // 1.0 = 0x3f80. One bf16 ulp at 1 is 2^-7.
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -7)), 0x3f81);
  // 1 + 2^-8: tie between 0x3f80 (even) and 0x3f81 -> 0x3f80.
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8: tie between 0x3f81 (odd) and 0x3f82 (even) -> 0x3f82.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3.0f * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  // 0.1f = 0x3dcccccd: the dropped half 0xcccd > 0x8000 rounds up -> 0x3dcd.
  EXPECT_EQ(float_to_bf16_bits(0.1f), 0x3dcd);
  EXPECT_EQ(bf16_bits_to_float(0xc040), -3.0f);  // -1.5 * 2^1
}

TEST(FloatConvertBF16, LargeValuesAndOverflow) {
  // 3.0e38 / 2^127 = 1.76324 -> fraction 0.76324 * 128 = 97.69 -> 98 = 0x62; exponent 254 = 0xfe
  // puts 0x7f00 in the top bits -> 0x7f62.
  EXPECT_EQ(float_to_bf16_bits(3.0e38f), 0x7f62);
  // Largest finite bf16 0x7f7f = (2 - 2^-7) * 2^127 = 3.3895313892515355e38.
  EXPECT_EQ(bf16_bits_to_float(0x7f7f), 3.3895313892515355e38f);
  // FLT_MAX = (2 - 2^-23) * 2^127 lies above the midpoint (2 - 2^-8) * 2^127 -> inf.
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::max()), 0xff80);
  // The midpoint itself, 0x7f7f8000: 0x7f7f is odd -> rounds to 0x7f80 (inf).
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x7f7f8000)), 0x7f80);
  // Just below the midpoint stays finite.
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x7f7f7fff)), 0x7f7f);
}

TEST(FloatConvertBF16, ZerosAndInfinities) {
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(bf16_bits_to_float(0x8000)));
  EXPECT_EQ(float_to_bf16_bits(kInf), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-kInf), 0xff80);
  EXPECT_EQ(bf16_bits_to_float(0x7f80), kInf);
  EXPECT_EQ(bf16_bits_to_float(0xff80), -kInf);
}

TEST(FloatConvertBF16, SubnormalsAreKept) {
  // 1e-40 is a float subnormal: 1e-40 / 2^-149 = 71362.4 -> 0x000116c2. The dropped half 0x16c2
  // is below 0x8000 -> 0x0001 (= 2^-133, a bf16 subnormal, not flushed to zero).
  EXPECT_EQ(float_to_bf16_bits(1.0e-40f), 0x0001);
  EXPECT_EQ(bf16_bits_to_float(0x0001), std::ldexp(1.0f, -133));
  // 0x00008000 = 2^-134: tie between 0x0000 (even) and 0x0001 -> 0.
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x00008000)), 0x0000);
  // 0x00018000: tie between 0x0001 (odd) and 0x0002 (even) -> 0x0002.
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x00018000)), 0x0002);
  // Largest subnormal plus half an ulp carries into the smallest normal 0x0080.
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x007fc000)), 0x0080);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(FloatConvertBF16, NaNStaysNaN) {
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(kNaN)));
  // Payload only in the low 16 bits: plain truncation would produce 0x7f80 (inf).
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(from_bits(0x7f800001))));
  // 0x7fffffff would carry into the sign bit with the naive rounding add; it must stay a NaN.
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(from_bits(0x7fffffff))));
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x7fffffff)) & 0x8000, 0);
  const uint16_t neg = float_to_bf16_bits(-kNaN);
  EXPECT_TRUE(is_bf16_nan(neg));
  EXPECT_EQ(neg & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(0x7fc0)));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(0x7f81)));
}

TEST(FloatConvertBF16, AllBitPatternsRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float x = bf16_bits_to_float(h);
    if (is_bf16_nan(h)) {
      ASSERT_TRUE(std::isnan(x)) << std::hex << bits;
      ASSERT_TRUE(is_bf16_nan(float_to_bf16_bits(x))) << std::hex << bits;
    } else {
      // Every non-NaN bf16 is the top half of its float.
      ASSERT_EQ(std::bit_cast<uint32_t>(x), bits << 16) << std::hex << bits;
      ASSERT_EQ(float_to_bf16_bits(x), h) << std::hex << bits;
    }
  }
}

TEST(FloatConvertBF16, RandomFloatsRoundToNearest) {
  // The whole binary32 range, subnormal inputs included (exponent -127 -> biased 0).
  check_nearest(bf16_format(), -127, 127, 777);
}

TEST(FloatConvertBF16, AllMidpointsTieToEven) {
  check_all_midpoints(bf16_format());
}

TEST(FloatConvertBF16, StructWrapper) {
  EXPECT_EQ(bf16(-1.0f).bits, 0xbf80);
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x4049)), 3.140625f);  // 1.5703125 * 2
}

// ------------------------------------------------------------------------------------ fp8 e4m3

TEST(FloatConvertE4M3, EdgeValues) {
  // 1.0: exponent 7 = 0111b -> 0 0111 000 = 0x38. -2.0: 1 1000 000 = 0xc0.
  EXPECT_EQ(float_to_f8e4m3_bits(1.0f), 0x38);
  EXPECT_EQ(float_to_f8e4m3_bits(-2.0f), 0xc0);
  // Largest finite: exponent 15 is usable in "fn", fraction 110b -> 1.75 * 2^8 = 448 = 0x7e.
  EXPECT_EQ(float_to_f8e4m3_bits(448.0f), 0x7e);
  // 464 is the midpoint between 448 (fraction 110b, even) and the would-be 480 (0x7f, the NaN
  // pattern) -> even -> 448.
  EXPECT_EQ(float_to_f8e4m3_bits(464.0f), 0x7e);
  // Above the midpoint it rounds to the 0x7f slot: NaN, the "fn" overflow result.
  EXPECT_EQ(float_to_f8e4m3_bits(465.0f), 0x7f);
  EXPECT_EQ(float_to_f8e4m3_bits(480.0f), 0x7f);
  EXPECT_EQ(float_to_f8e4m3_bits(-480.0f), 0xff);  // sign kept
  EXPECT_EQ(float_to_f8e4m3_bits(1.0e10f), 0x7f);
  // No infinity: inf saturates to NaN, as does NaN.
  EXPECT_EQ(float_to_f8e4m3_bits(kInf), 0x7f);
  EXPECT_EQ(float_to_f8e4m3_bits(-kInf), 0xff);
  EXPECT_EQ(float_to_f8e4m3_bits(kNaN), 0x7f);
  EXPECT_EQ(float_to_f8e4m3_bits(-kNaN), 0xff);
}

TEST(FloatConvertE4M3, Subnormals) {
  // Subnormal unit 2^(1 - 7 - 3) = 2^-9.
  EXPECT_EQ(float_to_f8e4m3_bits(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_EQ(float_to_f8e4m3_bits(std::ldexp(1.0f, -10)), 0x00);  // half unit: tie -> 0
  EXPECT_EQ(float_to_f8e4m3_bits(-std::ldexp(1.0f, -10)), 0x80);
  EXPECT_EQ(float_to_f8e4m3_bits(3.0f * std::ldexp(1.0f, -10)), 0x02);  // 1.5 units: tie -> 2
  EXPECT_EQ(float_to_f8e4m3_bits(7.0f * std::ldexp(1.0f, -9)), 0x07);   // largest subnormal
  EXPECT_EQ(float_to_f8e4m3_bits(std::ldexp(1.0f, -6)), 0x08);          // smallest normal
  // 7.5 units: tie between 0x07 (odd) and 0x08 (even) -> carries into the normal range.
  EXPECT_EQ(float_to_f8e4m3_bits(7.5f * std::ldexp(1.0f, -9)), 0x08);
}

TEST(FloatConvertE4M3, Decode) {
  EXPECT_EQ(f8e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(f8e4m3_bits_to_float(0x78), 256.0f);  // exponent 15 holds finite values in "fn"
  EXPECT_EQ(f8e4m3_bits_to_float(0xfe), -448.0f);
  EXPECT_EQ(f8e4m3_bits_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(f8e4m3_bits_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(f8e4m3_bits_to_float(0x3c), 1.5f);  // 0 0111 100
  EXPECT_TRUE(std::isnan(f8e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(f8e4m3_bits_to_float(0xff)));
  EXPECT_TRUE(std::signbit(f8e4m3_bits_to_float(0x80)));
  EXPECT_EQ(f8e4m3_bits_to_float(0x80), 0.0f);
}

TEST(FloatConvertE4M3, AllBitPatternsRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xff; ++bits) {
    const auto b = static_cast<uint8_t>(bits);
    const float x = f8e4m3_bits_to_float(b);
    if ((bits & 0x7f) == 0x7f) {
      ASSERT_TRUE(std::isnan(x)) << bits;
    } else {
      ASSERT_TRUE(std::isfinite(x)) << bits;  // e4m3fn has no infinities
    }
    ASSERT_EQ(float_to_f8e4m3_bits(x), b) << bits;
  }
}

TEST(FloatConvertE4M3, RandomFloatsRoundToNearest) {
  check_nearest(e4m3_format(), -12, 10, 4242);
}

TEST(FloatConvertE4M3, AllMidpointsTieToEven) {
  check_all_midpoints(e4m3_format());
}

// ------------------------------------------------------------------------------------ fp8 e5m2

TEST(FloatConvertE5M2, EdgeValues) {
  // 1.0: exponent 15 = 01111b -> 0 01111 00 = 0x3c. 1.25 -> fraction 01b -> 0x3d.
  EXPECT_EQ(float_to_f8e5m2_bits(1.0f), 0x3c);
  EXPECT_EQ(float_to_f8e5m2_bits(1.25f), 0x3d);
  EXPECT_EQ(float_to_f8e5m2_bits(1.125f), 0x3c);  // tie between 0x3c (even) and 0x3d
  EXPECT_EQ(float_to_f8e5m2_bits(1.375f), 0x3e);  // tie between 0x3d and 0x3e (even)
  // Largest finite 1.75 * 2^15 = 57344: exponent 30 = 11110b, fraction 11b -> 0x7b.
  EXPECT_EQ(float_to_f8e5m2_bits(57344.0f), 0x7b);
  EXPECT_EQ(float_to_f8e5m2_bits(61439.0f), 0x7b);  // below the midpoint 61440
  // 61440 is the midpoint of 57344 (0x7b, odd) and 2^16 (0x7c, even = inf) -> inf.
  EXPECT_EQ(float_to_f8e5m2_bits(61440.0f), 0x7c);
  EXPECT_EQ(float_to_f8e5m2_bits(-61440.0f), 0xfc);
  EXPECT_EQ(float_to_f8e5m2_bits(1.0e9f), 0x7c);
  EXPECT_EQ(float_to_f8e5m2_bits(kInf), 0x7c);
  EXPECT_EQ(float_to_f8e5m2_bits(-kInf), 0xfc);
  // Subnormal unit 2^(1 - 15 - 2) = 2^-16.
  EXPECT_EQ(float_to_f8e5m2_bits(std::ldexp(1.0f, -16)), 0x01);
  EXPECT_EQ(float_to_f8e5m2_bits(std::ldexp(1.0f, -17)), 0x00);  // half unit: tie -> 0
  EXPECT_EQ(float_to_f8e5m2_bits(-0.0f), 0x80);
}

TEST(FloatConvertE5M2, NaNAndInfinityDecode) {
  EXPECT_EQ(f8e5m2_bits_to_float(0x7c), kInf);
  EXPECT_EQ(f8e5m2_bits_to_float(0xfc), -kInf);
  EXPECT_TRUE(std::isnan(f8e5m2_bits_to_float(0x7d)));
  EXPECT_TRUE(std::isnan(f8e5m2_bits_to_float(0x7e)));
  EXPECT_TRUE(std::isnan(f8e5m2_bits_to_float(0xff)));
  EXPECT_EQ(f8e5m2_bits_to_float(0x7b), 57344.0f);
  EXPECT_EQ(f8e5m2_bits_to_float(0x01), std::ldexp(1.0f, -16));
  const uint8_t nan = float_to_f8e5m2_bits(kNaN);
  EXPECT_EQ(nan & 0x7c, 0x7c);
  EXPECT_NE(nan & 0x03, 0);  // not the infinity pattern
  EXPECT_EQ(float_to_f8e5m2_bits(-kNaN) & 0x80, 0x80);
}

TEST(FloatConvertE5M2, AllBitPatternsRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xff; ++bits) {
    const auto b = static_cast<uint8_t>(bits);
    const float x = f8e5m2_bits_to_float(b);
    const bool nan_pattern = (bits & 0x7c) == 0x7c && (bits & 0x03) != 0;
    ASSERT_EQ(std::isnan(x), nan_pattern) << bits;
    if (nan_pattern) {
      const uint8_t back = float_to_f8e5m2_bits(x);
      ASSERT_TRUE((back & 0x7c) == 0x7c && (back & 0x03) != 0) << bits;
    } else {
      ASSERT_EQ(float_to_f8e5m2_bits(x), b) << bits;
    }
  }
}

TEST(FloatConvertE5M2, RandomFloatsRoundToNearest) {
  check_nearest(e5m2_format(), -19, 17, 99);
}

TEST(FloatConvertE5M2, AllMidpointsTieToEven) {
  check_all_midpoints(e5m2_format());
}

TEST(FloatConvertE5M2, AgreesWithF16TopByteWhenExact) {
  // e5m2 has f16's exponent layout, so any e5m2 value's f16 encoding is its code followed by
  // eight zero bits (an independent structural check on both encoders).
  for (uint32_t bits = 0; bits <= 0xff; ++bits) {
    if ((bits & 0x7c) == 0x7c && (bits & 0x03) != 0) continue;  // NaN payloads may differ
    const float x = f8e5m2_bits_to_float(static_cast<uint8_t>(bits));
    ASSERT_EQ(float_to_f16_bits(x), bits << 8) << bits;
  }
}

}  // namespace
}  // namespace luminal
