// Exact plain C++ stand-ins for the AVX-512 / VNNI builtins of the CPU kernel
// prelude, for testing its AVX-512 paths on hosts without AVX-512: a kernel
// compiled with -include of this header, -DLK_QMM_EMULATED_AVX512 and the
// __AVX512*__ macros defined takes those paths (LK_QMM_AVX512, LK_QMM_VNNI)
// with each builtin below replaced by its emu_ function. The 256-bit AVX2
// builtins stay native (the host needs AVX2, FMA and F16C). Not part of the
// library: see QGemmInt16.VnniPathsUnderEmulationMatchThePortableBuild.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

typedef float emu_f16x __attribute__((vector_size(64)));
typedef int emu_i16x __attribute__((vector_size(64)));
typedef short emu_s32x __attribute__((vector_size(64)));
typedef char emu_c16x __attribute__((vector_size(16)));
typedef short emu_s16x __attribute__((vector_size(32)));
typedef int emu_i8x __attribute__((vector_size(32)));

// IEEE half to float (exact).
static inline float emu_half(uint16_t h) {
  const uint32_t s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  if (e == 0) return (s ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(m), -24);
  const uint32_t b =
      (s << 31) | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
static inline emu_i16x emu_pmovzxbd512_mask(emu_c16x v, emu_i16x, unsigned short) {
  emu_i16x r;
  for (int i = 0; i < 16; ++i) r[i] = static_cast<unsigned char>(v[i]);
  return r;
}
static inline emu_i16x emu_pmovsxbd512_mask(emu_c16x v, emu_i16x, unsigned short) {
  emu_i16x r;
  for (int i = 0; i < 16; ++i) r[i] = static_cast<signed char>(v[i]);
  return r;
}
static inline emu_f16x emu_vcvtph2ps512_mask(emu_s16x v, emu_f16x, unsigned short, int) {
  emu_f16x r;
  for (int i = 0; i < 16; ++i) r[i] = emu_half(static_cast<uint16_t>(v[i]));
  return r;
}
// (round to nearest even, as the default MXCSR; out of range: 0x80000000)
static inline emu_i16x emu_cvtps2dq512_mask(emu_f16x v, emu_i16x, unsigned short, int) {
  emu_i16x r;
  for (int i = 0; i < 16; ++i) {
    const float x = std::nearbyint(v[i]);
    r[i] = x >= -2147483648.0f && x < 2147483648.0f ? static_cast<int>(x) : INT32_MIN;
  }
  return r;
}
// (predicate 6, "not less or equal": the only one the prelude uses)
static inline unsigned short emu_cmpd512_mask(emu_i16x a, emu_i16x b, int predicate,
                                              unsigned short) {
  if (predicate != 6) __builtin_trap();
  unsigned r = 0;
  for (int i = 0; i < 16; ++i) r |= a[i] > b[i] ? 1u << i : 0u;
  return static_cast<unsigned short>(r);
}
static inline int emu_pair_dot(int acc, uint32_t a, uint32_t b) {
  const int32_t lo = static_cast<int16_t>(a & 0xffff) * static_cast<int16_t>(b & 0xffff);
  const int32_t hi = static_cast<int16_t>(a >> 16) * static_cast<int16_t>(b >> 16);
  return static_cast<int>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(lo) +
                          static_cast<uint32_t>(hi));
}
static inline emu_i16x emu_pmaddwd512_mask(emu_s32x a, emu_s32x b, emu_i16x, unsigned short) {
  const emu_i16x ai = reinterpret_cast<emu_i16x&>(a), bi = reinterpret_cast<emu_i16x&>(b);
  emu_i16x r;
  for (int i = 0; i < 16; ++i) r[i] = emu_pair_dot(0, ai[i], bi[i]);
  return r;
}
static inline emu_i16x emu_vpdpwssd_v16si(emu_i16x acc, emu_i16x a, emu_i16x b) {
  emu_i16x r;
  for (int i = 0; i < 16; ++i) r[i] = emu_pair_dot(acc[i], a[i], b[i]);
  return r;
}
static inline emu_i8x emu_vpdpwssd_v8si(emu_i8x acc, emu_i8x a, emu_i8x b) {
  emu_i8x r;
  for (int i = 0; i < 8; ++i) r[i] = emu_pair_dot(acc[i], a[i], b[i]);
  return r;
}
// (unsigned bytes of a times signed bytes of b, four per lane, wrapping)
static inline emu_i16x emu_vpdpbusd_v16si(emu_i16x acc, emu_i16x a, emu_i16x b) {
  emu_i16x r;
  for (int i = 0; i < 16; ++i) {
    uint32_t sum = static_cast<uint32_t>(acc[i]);
    for (int e = 0; e < 4; ++e)
      sum += static_cast<uint32_t>(
          static_cast<int32_t>((static_cast<uint32_t>(a[i]) >> (8 * e)) & 0xff) *
          static_cast<int32_t>(static_cast<int8_t>(static_cast<uint32_t>(b[i]) >> (8 * e))));
    r[i] = static_cast<int>(sum);
  }
  return r;
}
static inline emu_f16x emu_vfmaddps512_mask(emu_f16x a, emu_f16x b, emu_f16x c, unsigned short,
                                            int) {
  emu_f16x r;
  for (int i = 0; i < 16; ++i) r[i] = std::fma(a[i], b[i], c[i]);
  return r;
}
#define __builtin_ia32_pmovzxbd512_mask emu_pmovzxbd512_mask
#define __builtin_ia32_pmovsxbd512_mask emu_pmovsxbd512_mask
#define __builtin_ia32_vcvtph2ps512_mask emu_vcvtph2ps512_mask
#define __builtin_ia32_cvtps2dq512_mask emu_cvtps2dq512_mask
#define __builtin_ia32_cmpd512_mask emu_cmpd512_mask
#define __builtin_ia32_pmaddwd512_mask emu_pmaddwd512_mask
#define __builtin_ia32_vpdpwssd_v16si emu_vpdpwssd_v16si
#define __builtin_ia32_vpdpwssd_v8si emu_vpdpwssd_v8si
#define __builtin_ia32_vpdpbusd_v16si emu_vpdpbusd_v16si
#define __builtin_ia32_vfmaddps512_mask emu_vfmaddps512_mask
