// The prelude compiled before every generated CPU kernel (see codegen.hpp).
//
// The narrow-float conversions are src/core/float_convert.cpp's algorithms
// written again for the kernel (C++17, header-only, integer bit manipulation
// only), so that kernels round exactly like TensorData and the reference
// interpreter. tests/backends/cpu check them against the foundation's
// functions for every f16 / bf16 / fp8 bit pattern.

#include "kernel_prelude_parts.hpp"
#include "luminal/backends/cpu/codegen.hpp"

namespace luminal::cpu {

const std::string& kernel_prelude() {
  static const std::string prelude = std::string(R"LK(// luminal CPU kernel prelude
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace lk {

// The helpers of element loops (conversions, rounding, saturation, exp2 /
// log2 / sin) are always inlined: `inline` is only a hint, and in a unit with
// much other code (a model's quantized and AMX products) GCC stops inlining
// at its unit growth limit, which left lk::exp2f a call and the SiLU loop
// scalar (5x slower). A loop that calls a function is not vectorised.
#define LK_ELEMENT static inline __attribute__((always_inline))

LK_ELEMENT uint32_t bits(float v) { uint32_t b; memcpy(&b, &v, 4); return b; }
LK_ELEMENT float from_bits(uint32_t b) { float v; memcpy(&v, &b, 4); return v; }

// Shift right by `shift` >= 1 bits, rounding to nearest, ties to even.
LK_ELEMENT uint32_t shift_right_rne(uint32_t value, int shift) {
  if (shift >= 32) return 0;
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((uint32_t(1) << shift) - 1);
  const uint32_t half = uint32_t(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1u) != 0)) return kept + 1;
  return kept;
}

// A binary format with E exponent bits, M fraction bits, bias B; INF: has
// infinities (else the OCP "fn" variant: all ones is the only NaN).
template <int E, int M, int B, bool INF>
LK_ELEMENT uint32_t encode_narrow(float value) {
  const uint32_t sign_shift = E + M;
  const uint32_t exp_ones = (1u << E) - 1;
  const uint32_t inf_code = exp_ones << M;
  const uint32_t fn_nan = (1u << sign_shift) - 1;
  const uint32_t max_finite = INF ? inf_code - 1 : fn_nan - 1;
  const uint32_t b = bits(value);
  const uint32_t sign = (b & 0x80000000u) ? (1u << sign_shift) : 0u;
  const uint32_t abs = b & 0x7fffffffu;
  const uint32_t frac = abs & 0x007fffffu;
  const int shift = 23 - M;
  if (abs >= 0x7f800000u) {
    if (!INF) return sign | fn_nan;
    if (abs == 0x7f800000u) return sign | inf_code;
    return sign | inf_code | (1u << (M - 1)) | (frac >> shift);
  }
  const int exp = int(abs >> 23);
  const int target = exp - 127 + B;
  uint32_t code;
  if (target >= int(exp_ones) + (INF ? 0 : 1)) {
    code = max_finite + 1;
  } else if (exp != 0 && target >= 1) {
    const uint32_t unrounded = (uint32_t(target) << M) | (frac >> shift);
    const uint32_t rest = frac & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    code = unrounded;
    if (rest > half || (rest == half && (unrounded & 1u) != 0)) ++code;
  } else if (exp == 0) {
    code = 0;
  } else {
    const uint32_t significand = frac | (1u << 23);
    const int sub_shift = shift + 1 - target;
    code = sub_shift > 24 ? 0 : shift_right_rne(significand, sub_shift);
  }
  if (code > max_finite) return sign | (INF ? inf_code : fn_nan);
  return sign | code;
}

template <int E, int M, int B, bool INF>
LK_ELEMENT float decode_narrow(uint32_t code) {
  const uint32_t exp_ones = (1u << E) - 1;
  const uint32_t fn_nan = (1u << (E + M)) - 1;
  const uint32_t sign = ((code >> (E + M)) & 1u) ? 0x80000000u : 0u;
  const uint32_t exp = (code >> M) & exp_ones;
  uint32_t frac = code & ((1u << M) - 1);
  const int widen = 23 - M;
  if (!INF && (code & fn_nan) == fn_nan) return from_bits(sign | 0x7f800000u | 0x00400000u);
  if (INF && exp == exp_ones) {
    if (frac == 0) return from_bits(sign | 0x7f800000u);
    return from_bits(sign | 0x7f800000u | 0x00400000u | (frac << widen));
  }
  if (exp == 0) {
    if (frac == 0) return from_bits(sign);
    int e = 1 - B + 127;
    while ((frac & (1u << M)) == 0) {
      frac <<= 1;
      --e;
    }
    frac &= (1u << M) - 1;
    return from_bits(sign | (uint32_t(e) << 23) | (frac << widen));
  }
  const uint32_t e = exp - uint32_t(B) + 127;
  return from_bits(sign | (e << 23) | (frac << widen));
}

LK_ELEMENT uint16_t f32_to_f16(float v) { return uint16_t(encode_narrow<5, 10, 15, true>(v)); }
LK_ELEMENT float f16_to_f32(uint16_t h) { return decode_narrow<5, 10, 15, true>(h); }
LK_ELEMENT uint8_t f32_to_e4m3(float v) { return uint8_t(encode_narrow<4, 3, 7, false>(v)); }
LK_ELEMENT float e4m3_to_f32(uint8_t h) { return decode_narrow<4, 3, 7, false>(h); }
LK_ELEMENT uint8_t f32_to_e5m2(float v) { return uint8_t(encode_narrow<5, 2, 15, true>(v)); }
LK_ELEMENT float e5m2_to_f32(uint8_t h) { return decode_narrow<5, 2, 15, true>(h); }

LK_ELEMENT uint16_t f32_to_bf16(float v) {
  const uint32_t b = bits(v);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x0040u);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
LK_ELEMENT float bf16_to_f32(uint16_t h) {
  uint32_t w = uint32_t(h) << 16;
  if ((w & 0x7fffffffu) > 0x7f800000u) w |= 0x00400000u;
  return from_bits(w);
}

// A float value rounded to a narrower format (the value that format stores).
LK_ELEMENT float round_f16(float v) { return f16_to_f32(f32_to_f16(v)); }
// GGUF block-quantized storage (blocks of 32 elements), element i, decoded as
// ggml does (TensorData::get / dequantize_element is the reference).
LK_ELEMENT float block_f16(const uint8_t* b, int off) {
  uint16_t h;
  __builtin_memcpy(&h, b + off, 2);
  return f16_to_f32(h);
}
LK_ELEMENT float deq_q8_0(const uint8_t* p, int64_t i) {
  const uint8_t* b = p + (i >> 5) * 34;
  return (float)(int8_t)b[2 + (i & 31)] * block_f16(b, 0);
}
LK_ELEMENT float deq_q4_0(const uint8_t* p, int64_t i) {
  const uint8_t* b = p + (i >> 5) * 18;
  const int j = (int)(i & 31);
  const int q = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
  return ((float)q - 8.0f) * block_f16(b, 0);
}
// A whole block (32 elements) into out[0..32): the quantized matmul kernels'
// inner decode (plain loops the compiler vectorises).
static inline void decode_block_q8_0(const uint8_t* b, float* out) {
  const float d = block_f16(b, 0);
  for (int t = 0; t < 32; ++t) out[t] = (float)(int8_t)b[2 + t] * d;
}
static inline void decode_block_q4_0(const uint8_t* b, float* out) {
  const float d = block_f16(b, 0);
  for (int t = 0; t < 16; ++t) {
    out[t] = ((float)(b[2 + t] & 15) - 8.0f) * d;
    out[t + 16] = ((float)(b[2 + t] >> 4) - 8.0f) * d;
  }
}
static inline void decode_block_q4_1(const uint8_t* b, float* out) {
  const float d = block_f16(b, 0), m = block_f16(b, 2);
  for (int t = 0; t < 16; ++t) {
    const float lo = (float)(b[4 + t] & 15) * d;
    const float hi = (float)(b[4 + t] >> 4) * d;
    out[t] = lo + m;
    out[t + 16] = hi + m;
  }
}
// The sum of 32 lanes, pairwise (the library kernels' lane reduction).
static inline float sum32(const float* l) {
  float s[16];
  for (int u = 0; u < 16; ++u) s[u] = l[u] + l[u + 16];
  for (int u = 0; u < 8; ++u) s[u] = s[u] + s[u + 8];
  for (int u = 0; u < 4; ++u) s[u] = s[u] + s[u + 4];
  return (s[0] + s[2]) + (s[1] + s[3]);
}
LK_ELEMENT float deq_q4_1(const uint8_t* p, int64_t i) {
  const uint8_t* b = p + (i >> 5) * 20;
  const int j = (int)(i & 31);
  const int q = j < 16 ? (b[4 + j] & 15) : (b[4 + j - 16] >> 4);
  const float scaled = (float)q * block_f16(b, 0);
  return scaled + block_f16(b, 2);
}
)LK" + kernel_prelude_amx_tiles() + kernel_prelude_quantized() +
                                                 kernel_prelude_amx() +
                                                 R"LK(
LK_ELEMENT float round_bf16(float v) { return bf16_to_f32(f32_to_bf16(v)); }
LK_ELEMENT float round_e4m3(float v) { return e4m3_to_f32(f32_to_e4m3(v)); }
LK_ELEMENT float round_e5m2(float v) { return e5m2_to_f32(f32_to_e5m2(v)); }

// A hint to fetch p[i] into the caches (no fault, whatever the address: the
// next row's block may lie past the buffer).
template <class T>
static inline void prefetch(const T* p, int64_t i) {
  __builtin_prefetch((const void*)((uintptr_t)p + (uintptr_t)i * sizeof(T)), 0, 3);
}

// double -> float, round to nearest even; NaN keeps its sign, overflow is inf:
// the IEEE conversion, which is what GCC emits for the cast on x86 (cvtsd2ss /
// vcvtpd2ps; GCC follows Annex F for out-of-range values and never treats the
// conversion as undefined). The plain cast vectorises: the branch-free selects
// this used to make for NaN and overflow (double and float lanes mixed) kept
// GCC from vectorising every loop with an f32 division, which goes through f64
// (the frontend's correctly rounded true_divide). CpuPrelude tests the values.
LK_ELEMENT float d2f(double v) { return float(v); }
// double -> float rounding to odd: rounding that to a narrower format gives the
// correctly rounded double (no double-rounding error). Branch-free, so loops
// that convert stay vectorised (an f16 / bf16 division goes through f64): the
// nearest float, stepped one ulp toward zero where it rounded away (bits - 1
// lowers the magnitude; an overflow's inf becomes the largest finite float),
// its last bit set where inexact (NaN stays NaN, inf and exact values stay).
LK_ELEMENT float d2f_odd(double v) {
  const float f = float(v);
  const bool inexact = double(f) != v;
  const bool away = fabs(double(f)) > fabs(v);
  return from_bits((bits(f) - uint32_t(inexact && away)) | uint32_t(inexact));
}

// float -> integer: truncate toward zero, saturate, NaN -> 0.
LK_ELEMENT int64_t sat_i64(double v) {
  if (v != v) return 0;
  const double t = trunc(v);
  if (t >= 9223372036854775808.0) return INT64_MAX;
  if (t < -9223372036854775808.0) return INT64_MIN;
  return int64_t(t);
}
LK_ELEMENT int64_t sat_range(double v, double lo, double hi) {
  if (v != v) return 0;
  const double t = trunc(v);
  if (t <= lo) return int64_t(lo);
  if (t >= hi) return int64_t(hi);
  return int64_t(t);
}
LK_ELEMENT int32_t sat_i32(double v) { return int32_t(sat_range(v, -2147483648.0, 2147483647.0)); }
LK_ELEMENT int8_t sat_i8(double v) { return int8_t(sat_range(v, -128.0, 127.0)); }
LK_ELEMENT uint8_t sat_u8(double v) { return uint8_t(sat_range(v, 0.0, 255.0)); }
// The same conversions from a float (f32 / f16 / bf16 values): every float is
// a double exactly, so the result is the same, but these use selects only and
// the element loops that convert stay vectorised (sat_range branches).
LK_ELEMENT int32_t satf_i32(float v) {
  const float t = v != v ? 0.0f : v;
  const bool hi = t >= 2147483648.0f, lo = t < -2147483648.0f;
  const int32_t i = (int32_t)(hi || lo ? 0.0f : t);
  return hi ? INT32_MAX : (lo ? INT32_MIN : i);
}
LK_ELEMENT int8_t satf_i8(float v) {
  const float t = v != v ? 0.0f : v;
  return (int8_t)(int32_t)(t < -128.0f ? -128.0f : (t > 127.0f ? 127.0f : t));
}
// (v > 0 ? v : 0 also sends NaN to 0: two selects, not four with the NaN
// test; the f32 masks of erf / GELU cast through u8 twice per element)
LK_ELEMENT uint8_t satf_u8(float v) {
  const float t = v > 0.0f ? v : 0.0f;
  return (uint8_t)(int32_t)(t < 255.0f ? t : 255.0f);
}

// ---- reductions in lanes (codegen.cpp Emitter::reduce) ------------------------------------
// A reduction loop keeps N independent accumulators so that its lane loop is a
// straight vector body; these combine the lanes once the loops are done.

// Kahan-compensated accumulation (f64 sums); a non-finite sum drops the
// compensation so that inf and NaN propagate exactly as in a plain sum. The
// finiteness test is t - t == 0 (NaN for inf / NaN), a compare the vectoriser
// turns into a mask (__builtin_isfinite would keep the loop scalar).
template <typename T>
LK_ELEMENT void kahan_add(T& s, T& c, T v) {
  const T y = v - c;
  const T t = s + y;
  const T nc = (t - s) - y;
  c = (t - t == T(0)) ? nc : T(0);
  s = t;
}
// The sum of N lanes, pairwise (N a power of two).
template <int N, typename T>
static inline T lanes_sum(const T* s) {
  T a[N];
  for (int i = 0; i < N; ++i) a[i] = s[i];
  for (int w = N / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] = a[i] + a[i + w];
  return a[0];
}
// sum_q a[q * as] b[q * bs], q < K, in f32: 16 lanes where both are
// contiguous (it vectorises), the rest one term at a time (the library
// kernels' small products, library_kernels.cpp).
static inline float dot_f32(const float* a, int64_t as, const float* b, int64_t bs, int64_t K) {
  float acc[16] = {};
  int64_t q = 0;
  if (as == 1 && bs == 1)
    for (; q + 16 <= K; q += 16)
      for (int l = 0; l < 16; ++l) acc[l] += a[q + l] * b[q + l];
  float s = lanes_sum<16>(acc);
  for (; q < K; ++q) s += a[q * as] * b[q * bs];
  return s;
}
// The total of N compensated lanes, added pairwise.
template <int N, typename T>
static inline T lanes_total(const T* s, const T* c) {
  T a[N];
  for (int i = 0; i < N; ++i) a[i] = s[i] - c[i];
  return lanes_sum<N>(a);
}
// One element into a float max lane: the running maximum m (never NaN: a NaN v
// compares false, so m < v ? v : m is one vmaxps; on equal values, +0 / -0,
// the earlier one stays) and, apart, nan (0, or a NaN once one was seen), so
// that each lane's dependency chain is one instruction.
template <typename T>
LK_ELEMENT void max_step(T& m, T& nan, T v) {
  nan = v != v ? v : nan;
  m = m < v ? v : m;
}
// The maximum of N float lanes in lane order (equal values: the earlier lane's),
// the canonical NaN if any lane saw a NaN.
template <int N, typename T>
static inline T lanes_max(const T* m, const T* nan) {
  T r = m[0], any = nan[0];
  for (int i = 1; i < N; ++i) {
    r = r < m[i] ? m[i] : r;
    any = any + nan[i];
  }
  return any != any ? T(NAN) : r;
}
// The maximum of N integer lanes.
template <int N, typename T>
static inline T lanes_max_int(const T* s) {
  T m = s[0];
  for (int i = 1; i < N; ++i) m = m < s[i] ? s[i] : m;
  return m;
}

// A row of values kept between a reduction loop and the element loop (codegen's
// row caches): on the stack for short rows, else on the heap, freed on return.
template <typename T>
struct RowBuffer {
  T small[1024];
  T* p;
  explicit RowBuffer(int64_t n)
      : p(n <= 1024 ? small : (T*)malloc(sizeof(T) * (size_t)n)) {}
  ~RowBuffer() {
    if (p != small) free(p);
  }
  RowBuffer(const RowBuffer&) = delete;
  RowBuffer& operator=(const RowBuffer&) = delete;
};

// ---- math: exp2 / log2 / sin for f32 (and f16 / bf16, computed in f32) ---------------------
// libm's exp2f / log2f / sinf are opaque calls: kernels are built without
// -ffast-math, so the vectoriser cannot widen a loop that calls them. These are
// inline and branch-free (special cases are selects), so element loops stay
// vectorised. Maximum error over all 2^32 f32 inputs against double libm
// (measured exhaustively once; tests/backends/cpu/kernel_math_test.cpp samples
// 16M inputs): exp2 0.90 ulp (1.13 without FMA), log2 0.57 ulp, sin 0.53 ulp (log2 and sin
// evaluate in double, so they are almost always correctly rounded, like the
// reference interpreter).
LK_ELEMENT double dfrom_bits(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }

// 2^x = 2^n * p(r): n = round(x), r = x - n in [-0.5, 0.5] (exact), p a degree-6
// minimax polynomial (relative error 1.1e-8) with p(0) = 1, so integers are
// exact. The scale 2^n is applied as two normal powers of two, so subnormal
// results are rounded once and x >= 128 overflows to inf.
// x is clamped to [-151, 129] (2^-151 rounds to 0) on its bits, NaN restored
// at the end: a negative float's bits are above every positive float's as
// unsigned ints (one unsigned min bounds it below) and below them as signed ints
// (one signed min bounds a positive x above). With float selects, GCC moved the
// clamps past the whole function (their results are constants) into blends of
// every consumer, double sums included (8% of a softmax).
// The shift carries 254 = 2 * 127 in its low bits, so bits(t) ends in
// n + 254 = (n1 + 127) + (n2 + 127): each scale's exponent field is a shift of
// bits(t) or of the half, with no bias added (the bits above 9 shift out).
// With FMA (-march=native hosts that have it) Horner's steps are fused: 15% of
// a softmax on Zen 3, and no less accurate. 28 vector instructions in all (35
// before the two changes above: 0.52 -> 0.34 ns per element on Zen 3).
#if defined(__FMA__)
#define LK_MADD(a, b, c) __builtin_fmaf(a, b, c)
#else
#define LK_MADD(a, b, c) ((a) * (b) + (c))
#endif
LK_ELEMENT float exp2f(float x) {
  const float x0 = x;
  {
    uint32_t b = bits(x);
    b = b < 0xc3170000u ? b : 0xc3170000u;  // x >= -151
    int32_t s = (int32_t)b;
    s = s < 0x43010000 ? s : 0x43010000;  // x <= 129
    x = from_bits((uint32_t)s);
  }
  // Adding the shift rounds x to an integer (ties to even: the shift is even).
  const float shift = 0x1.8p23f + 254.0f;
  const float t = x + shift;
  const float r = x - (t - shift);
  float q = 1.5403495e-4f;
  q = LK_MADD(q, r, 1.3390735e-3f);
  q = LK_MADD(q, r, 9.6182376e-3f);
  q = LK_MADD(q, r, 5.5503573e-2f);
  q = LK_MADD(q, r, 2.4022649e-1f);
  q = LK_MADD(q, r, 6.9314718e-1f);
  const float p = LK_MADD(r, q, 1.0f);
  // n1 = floor(n / 2), n2 = n - n1, both in [-76, 65]: normal scales.
  const uint32_t a = bits(t), h = a >> 1;  // low 9 bits: n1 + 127 (h), n2 + 127 (a - h)
  // p * 2^n1 is normal: its exponent is added as an int (exact; a multiply
  // less on the FMA ports), only the second scale may round.
  const float y = from_bits(bits(p) + (h << 23) - 0x3f800000u) * from_bits((a - h) << 23);
  return x0 != x0 ? x0 : y;
}
#undef LK_MADD

// log2(x) = e + log2(m), m in [sqrt(1/2), sqrt(2)), log2(1 + f) = f * P(f) with a
// degree-9 minimax P (relative error 4e-9) evaluated in double: the sum is
// rounded to float once.
LK_ELEMENT float log2f(float x) {
  const bool sub = x < 0x1p-126f;  // subnormals (and the special cases) scaled up
  const float xs = sub ? x * 0x1p23f : x;
  const uint32_t ix = bits(xs) + (0x3f800000u - 0x3f3504f3u);
  const int32_t e = (int32_t)(ix >> 23) - 0x7f - (sub ? 23 : 0);
  const double f = (double)from_bits((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0;
  double p = -0.10994367428668635;
  p = p * f + 0.18617173155034134;
  p = p * f - 0.19106361884048553;
  p = p * f + 0.20460121462704273;
  p = p * f - 0.23961736795646;
  p = p * f + 0.28856737353169437;
  p = p * f - 0.3606966497691176;
  p = p * f + 0.48089824172163037;
  p = p * f - 0.7213473515005466;
  p = p * f + 1.4426950408279446;
  float y = (float)((double)e + f * p);
  y = x == 0.0f ? -__builtin_inff() : y;
  y = x < 0.0f ? __builtin_nanf("") : y;
  y = x == __builtin_inff() ? x : y;
  return x != x ? x : y;
}

// sin(x) for every f32 x: exact range reduction without branches or tables.
// |x| = M * 2^e (M a 24-bit integer) and 2/pi = sum C_i 2^(-24(i+1)) (240 bits),
// so x * 2/pi = sum M * C_i * 2^(e - 24(i+1)): each product is exact in double
// and is reduced mod 4 exactly (t - 4 rint(t / 4); a term whose last bit is
// worth >= 4 vanishes). The terms are accumulated with TwoSum, the integer
// part moved into the quadrant q, so the fraction k = hi + lo is exact to
// ~2^-100 -- enough for the f32 arguments closest to multiples of pi/2. Then
// r = k pi/2 in [-pi/4, pi/4] (a little beyond) and Taylor polynomials in double.
LK_ELEMENT float sinf(float x) {
  const uint32_t ax = bits(x) & 0x7fffffffu;
  const uint32_t be = ax >> 23;
  const double m = (double)(int32_t)((ax & 0x007fffffu) | (be ? 0x00800000u : 0u));
  const int32_t e = (be ? (int32_t)be : 1) - 150;
  static const double c[10] = {10680707.0, 7228996.0,  1387004.0, 2578385.0, 16069853.0,
                               12639074.0, 9804092.0,  4427841.0, 16666979.0, 11263675.0};
  double scale = dfrom_bits((uint64_t)(e - 24 + 1023) << 52);
  double hi = 0.0, lo = 0.0, q = 0.0;
  for (int i = 0; i < 10; ++i) {
    double t = m * c[i] * scale;
    t = t - 4.0 * __builtin_rint(t * 0.25);
    const double s = hi + t, bb = s - hi;
    lo += (hi - (s - bb)) + (t - bb);
    const double k = __builtin_rint(s);
    q += k;
    hi = s - k;
    scale *= 0x1p-24;
  }
  const double r = (hi + lo) * 1.5707963267948966;
  const double r2 = r * r;
  double sp = 2.7557319223985893e-06;  // 1 / 9!
  sp = sp * r2 - 1.9841269841269841e-04;
  sp = sp * r2 + 8.3333333333333332e-03;
  sp = sp * r2 - 1.6666666666666666e-01;
  const double sv = r + r * r2 * sp;
  double cp = -2.7557319223985888e-07;  // -1 / 10!
  cp = cp * r2 + 2.4801587301587302e-05;
  cp = cp * r2 - 1.3888888888888889e-03;
  cp = cp * r2 + 4.1666666666666664e-02;
  cp = cp * r2 - 0.5;
  const double cv = 1.0 + r2 * cp;
  const int32_t quadrant = (int32_t)q & 3;
  double v = (quadrant & 1) ? cv : sv;
  v = (quadrant & 2) ? -v : v;
  const float y = (float)v;
  const float signed_y = from_bits(bits(y) ^ (bits(x) & 0x80000000u));  // sin(-x) = -sin(x)
  return be == 0xff ? x - x : signed_y;  // inf -> NaN, NaN stays
}

}  // namespace lk
)LK");
  return prelude;
}

}  // namespace luminal::cpu
