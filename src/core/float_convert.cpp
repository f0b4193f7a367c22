#include "luminal/core/float_convert.hpp"

#include <bit>
#include <cstdint>

// All conversions work on the IEEE bit patterns with integer arithmetic so the results do not
// depend on the host's half-precision support, compiler intrinsics or the FPU rounding mode.
//
// A binary32 value is sign | 8-bit biased exponent (bias 127) | 23-bit fraction. A narrow format
// with E exponent bits, M fraction bits and bias B is encoded by re-biasing the exponent and
// rounding the fraction to M bits (normal results) or by shifting the full 24-bit significand into
// the subnormal range. Rounding is to nearest, ties to even: a carry out of the fraction
// correctly bumps the exponent (and subnormal -> smallest normal, largest finite -> infinity).

namespace luminal {
namespace {

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32AbsMask = 0x7fffffffu;
constexpr uint32_t kF32ExpMask = 0x7f800000u;
constexpr uint32_t kF32FracMask = 0x007fffffu;
constexpr uint32_t kF32QuietBit = 0x00400000u;
constexpr int kF32FracBits = 23;
constexpr int kF32Bias = 127;

uint32_t bits_of(float value) {
  return std::bit_cast<uint32_t>(value);
}
float float_of(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

// Shift `value` right by `shift` (>= 1) bits, rounding to nearest, ties to even.
uint32_t shift_right_rne(uint32_t value, int shift) {
  if (shift >= 32) return 0;  // callers only get here when value < 2^31, i.e. below the half-way
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((uint32_t{1} << shift) - 1);
  const uint32_t half = uint32_t{1} << (shift - 1);
  if (rest > half || (rest == half && (kept & 1u) != 0)) return kept + 1;
  return kept;
}

// Description of a narrow binary floating-point format (at most 16 bits).
struct NarrowFormat {
  int exp_bits;
  int frac_bits;
  int bias;
  bool has_inf;  // false: OCP "fn" style, the all-ones pattern is the only NaN and there is no inf
};

constexpr NarrowFormat kF16{5, 10, 15, true};
constexpr NarrowFormat kF8E4M3{4, 3, 7, false};
constexpr NarrowFormat kF8E5M2{5, 2, 15, true};

constexpr uint32_t exp_all_ones(const NarrowFormat& f) {
  return (1u << f.exp_bits) - 1;
}
constexpr uint32_t sign_shift(const NarrowFormat& f) {
  return f.exp_bits + f.frac_bits;
}
// Encoding of +inf (has_inf) or, without infinities, the one positive NaN (all bits set).
constexpr uint32_t inf_code(const NarrowFormat& f) {
  return exp_all_ones(f) << f.frac_bits;
}
constexpr uint32_t fn_nan_code(const NarrowFormat& f) {
  return (1u << sign_shift(f)) - 1;
}
// Largest finite magnitude's code: just below inf, or one below the single NaN pattern.
constexpr uint32_t max_finite_code(const NarrowFormat& f) {
  return f.has_inf ? inf_code(f) - 1 : fn_nan_code(f) - 1;
}

uint32_t encode_narrow(float value, const NarrowFormat& f) {
  const uint32_t bits = bits_of(value);
  const uint32_t sign = (bits & kF32SignMask) ? (1u << sign_shift(f)) : 0u;
  const uint32_t abs = bits & kF32AbsMask;
  const uint32_t frac = abs & kF32FracMask;
  const int shift = kF32FracBits - f.frac_bits;  // fraction bits dropped for a normal result

  if (abs >= kF32ExpMask) {                        // inf or NaN
    if (!f.has_inf) return sign | fn_nan_code(f);  // e4m3fn: both become NaN
    if (abs == kF32ExpMask) return sign | inf_code(f);
    // Quiet NaN: keep the top payload bits and force the quiet (top fraction) bit so the result
    // can never collapse to the infinity pattern.
    const uint32_t quiet = 1u << (f.frac_bits - 1);
    return sign | inf_code(f) | quiet | (frac >> shift);
  }

  const int exp = static_cast<int>(abs >> kF32FracBits);  // biased binary32 exponent
  const int unbiased = exp - kF32Bias;
  const int target_exp = unbiased + f.bias;  // biased exponent in the narrow format
  uint32_t code;
  if (target_exp >= static_cast<int>(exp_all_ones(f)) + (f.has_inf ? 0 : 1)) {
    // Even the smallest float with this exponent is beyond every finite narrow value
    // (for "fn" formats the all-ones exponent still holds finite values, so allow one more).
    code = max_finite_code(f) + 1;
  } else if (exp != 0 && target_exp >= 1) {
    // Normal result: re-bias the exponent, round the fraction. A carry propagates naturally.
    const uint32_t unrounded = (static_cast<uint32_t>(target_exp) << f.frac_bits) | (frac >> shift);
    const uint32_t rest = frac & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    code = unrounded;
    if (rest > half || (rest == half && (unrounded & 1u) != 0)) ++code;
  } else if (exp == 0) {
    // Binary32 zero or subnormal (< 2^-126): far below half the smallest narrow subnormal of every
    // supported format, so it rounds to a signed zero.
    code = 0;
  } else {
    // Subnormal result: value = significand * 2^(unbiased - 23) and a narrow subnormal is
    // k * 2^(1 - bias - frac_bits), so k = significand >> (shift + 1 - target_exp), rounded.
    const uint32_t significand = frac | (1u << kF32FracBits);
    const int sub_shift = shift + 1 - target_exp;
    code = sub_shift > 24 ? 0 : shift_right_rne(significand, sub_shift);
  }

  if (code > max_finite_code(f)) return sign | (f.has_inf ? inf_code(f) : fn_nan_code(f));
  return sign | code;
}

float decode_narrow(uint32_t code, const NarrowFormat& f) {
  const uint32_t sign = (code >> sign_shift(f)) & 1u ? kF32SignMask : 0u;
  const uint32_t exp = (code >> f.frac_bits) & exp_all_ones(f);
  uint32_t frac = code & ((1u << f.frac_bits) - 1);
  const int widen = kF32FracBits - f.frac_bits;

  if (!f.has_inf && (code & fn_nan_code(f)) == fn_nan_code(f)) {
    return float_of(sign | kF32ExpMask | kF32QuietBit);
  }
  if (f.has_inf && exp == exp_all_ones(f)) {
    if (frac == 0) return float_of(sign | kF32ExpMask);
    return float_of(sign | kF32ExpMask | kF32QuietBit | (frac << widen));
  }
  if (exp == 0) {
    if (frac == 0) return float_of(sign);
    // Subnormal: normalise so the leading one becomes the implicit bit. The value
    // frac * 2^(1 - bias - frac_bits) is always a normal binary32 for these formats.
    int e = 1 - f.bias + kF32Bias;
    while ((frac & (1u << f.frac_bits)) == 0) {
      frac <<= 1;
      --e;
    }
    frac &= (1u << f.frac_bits) - 1;
    return float_of(sign | (static_cast<uint32_t>(e) << kF32FracBits) | (frac << widen));
  }
  const uint32_t e = exp - static_cast<uint32_t>(f.bias) + kF32Bias;
  return float_of(sign | (e << kF32FracBits) | (frac << widen));
}

}  // namespace

uint16_t float_to_f16_bits(float value) {
  return static_cast<uint16_t>(encode_narrow(value, kF16));
}

float f16_bits_to_float(uint16_t bits) {
  return decode_narrow(bits, kF16);
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t bits = bits_of(value);
  if ((bits & kF32AbsMask) > kF32ExpMask) {
    // NaN: truncating could leave an all-zero fraction (= inf), so force the quiet bit.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // bf16 is the top half of a binary32 with the same exponent range, so rounding is adding just
  // under half an ulp plus the kept lsb (ties to even). Carries reach the exponent and overflow
  // lands exactly on the infinity pattern; the sum cannot exceed 32 bits.
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_bits_to_float(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  if ((wide & kF32AbsMask) > kF32ExpMask) wide |= kF32QuietBit;  // NaN stays NaN, quiet
  return float_of(wide);
}

uint8_t float_to_f8e4m3_bits(float value) {
  return static_cast<uint8_t>(encode_narrow(value, kF8E4M3));
}

float f8e4m3_bits_to_float(uint8_t bits) {
  return decode_narrow(bits, kF8E4M3);
}

uint8_t float_to_f8e5m2_bits(float value) {
  return static_cast<uint8_t>(encode_narrow(value, kF8E5M2));
}

float f8e5m2_bits_to_float(uint8_t bits) {
  return decode_narrow(bits, kF8E5M2);
}

}  // namespace luminal
