#pragma once
// Bit-exact conversions between float and the narrow float formats.
// float -> narrow rounds to nearest, ties to even; values beyond the largest
// finite value overflow to infinity (fp8 e4m3, which has no infinity,
// saturates to NaN as the OCP spec's "fn" variant does); subnormals are
// produced and read exactly; NaN stays NaN (quiet) with its sign.

#include <cmath>
#include <cstdint>
#include <limits>

namespace luminal {

/// double -> float, rounding to nearest even. A plain static_cast is only
/// defined when the value is within the float range (C++ [conv.double]), so
/// NaN (its sign kept) and overflow (to infinity) are handled explicitly.
inline float double_to_float(double value) {
  const auto with_sign = [value](float magnitude) {
    return std::signbit(value) ? -magnitude : magnitude;  // (negation flips the sign bit only)
  };
  if (std::isnan(value)) return with_sign(std::numeric_limits<float>::quiet_NaN());
  // Half-way between FLT_MAX and 2^128: at and beyond it round-to-nearest-even gives infinity.
  constexpr double kOverflow = 0x1.ffffffp127;
  if (std::fabs(value) >= kOverflow) return with_sign(std::numeric_limits<float>::infinity());
  return static_cast<float>(value);
}

uint16_t float_to_f16_bits(float value);
float f16_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);
uint8_t float_to_f8e4m3_bits(float value);
float f8e4m3_bits_to_float(uint8_t bits);
uint8_t float_to_f8e5m2_bits(float value);
float f8e5m2_bits_to_float(uint8_t bits);

/// IEEE binary16 storage.
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float v) : bits(float_to_f16_bits(v)) {}
  static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return f16_bits_to_float(bits); }
};

/// bfloat16 storage (the top half of an IEEE binary32).
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float v) : bits(float_to_bf16_bits(v)) {}
  static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return bf16_bits_to_float(bits); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2);

}  // namespace luminal
