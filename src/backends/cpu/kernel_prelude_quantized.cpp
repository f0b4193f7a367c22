// The quantized matrix products of the CPU kernel prelude (lk::qmatmul and
// its block decoders in vector registers): a part of kernel_prelude(), in its
// own file because it is a kernel family of its own (CpuQMatMul).

#include "kernel_prelude_parts.hpp"

namespace luminal::cpu {

const std::string& kernel_prelude_quantized() {
  static const std::string part = R"LK(
// ---- quantized matrix products (CpuQMatMul): C[i, j] = sum_t X[i, t] * W[j, t]
// with W stored as GGUF blocks, decoded in registers. With AVX2 + FMA the
// blocks become 4 x 8 float lanes (GCC/Clang vector extensions, no intrinsics
// header: it would add half a second to every kernel unit's compile); a
// portable version decodes whole blocks into a small buffer (-DLK_QMM_PORTABLE
// forces it, for tests). x stays f32: each product is an f32 FMA of x with the
// decoded weight (the reference's value, or q * d + m rounded once), so the
// result differs from the interpreter's only by f32 summation order.
struct q8_0_block { enum { bytes = 34 }; };
struct q4_0_block { enum { bytes = 18 }; };
struct q4_1_block { enum { bytes = 20 }; };
static inline void decode_block(q8_0_block, const uint8_t* b, float* o) { decode_block_q8_0(b, o); }
static inline void decode_block(q4_0_block, const uint8_t* b, float* o) { decode_block_q4_0(b, o); }
static inline void decode_block(q4_1_block, const uint8_t* b, float* o) { decode_block_q4_1(b, o); }
#if defined(__AVX2__) && defined(__FMA__) && defined(__has_builtin) && !defined(LK_QMM_PORTABLE)
#if __has_builtin(__builtin_shufflevector)
#define LK_QMM_VECTOR 1
#endif
#endif
#if defined(LK_QMM_VECTOR)
typedef float qv8f __attribute__((vector_size(32)));
typedef int32_t qv8i __attribute__((vector_size(32)));
typedef uint32_t qv8u __attribute__((vector_size(32)));
typedef uint32_t qv4u __attribute__((vector_size(16)));
typedef short qv8h __attribute__((vector_size(16)));
typedef float qv4f __attribute__((vector_size(16)));
// The f16 pair at p (F16C when the host has it: exact, as f16_to_f32).
static inline void qhalves(const uint8_t* p, float* a, float* b) {
#if defined(__F16C__)
  uint16_t h[2];
  memcpy(h, p, 4);
  const qv4f f = __builtin_ia32_vcvtph2ps(qv8h{(short)h[0], (short)h[1], 0, 0, 0, 0, 0, 0});
  *a = f[0];
  *b = f[1];
#else
  *a = block_f16(p, 0);
  *b = block_f16(p, 2);
#endif
}
static inline float qhalf(const uint8_t* p) {
#if defined(__F16C__)
  uint16_t h;
  memcpy(&h, p, 2);
  return __builtin_ia32_vcvtph2ps(qv8h{(short)h, 0, 0, 0, 0, 0, 0, 0})[0];
#else
  return block_f16(p, 0);
#endif
}
static inline qv8f qfma(qv8f a, qv8f b, qv8f c) { return __builtin_ia32_vfmaddps256(a, b, c); }
static inline qv8f qload(const float* p) { qv8f v; memcpy(&v, p, sizeof v); return v; }
static inline qv8f qsplat(float s) { return qv8f{s, s, s, s, s, s, s, s}; }
template <class V> static inline qv8f qfloat(V v) { return __builtin_convertvector(v, qv8f); }
// 16 bytes as four 32-bit words; qspread(v, h) gives word 2h in lanes 0..3 and
// word 2h + 1 in lanes 4..7 (vpermd), so a per-lane shift (vpsrlvd) picks one
// byte / nibble per lane (byte 4 * word + lane % 4).
static inline qv4u qwords(const uint8_t* p) { qv4u v; memcpy(&v, p, 16); return v; }
static inline qv8u qspread(qv4u v, int a) {
  return a == 0 ? __builtin_shufflevector(v, v, 0, 0, 0, 0, 1, 1, 1, 1)
                : __builtin_shufflevector(v, v, 2, 2, 2, 2, 3, 3, 3, 3);
}
// Nibbles of 16 bytes: elements 0..15 are the low nibbles, 16..31 the high ones.
static inline void qnibbles(const uint8_t* p, qv8f d, qv8f m, qv8f* w) {
  const qv4u words = qwords(p);
  const qv8u lo = {0, 8, 16, 24, 0, 8, 16, 24}, hi = lo + 4;
  for (int h = 0; h < 2; ++h) {
    const qv8u v = qspread(words, h);
    w[h] = qfma(qfloat((qv8i)((v >> lo) & 15)), d, m);
    w[h + 2] = qfma(qfloat((qv8i)((v >> hi) & 15)), d, m);
  }
}
static inline void qdecode(q8_0_block, const uint8_t* b, qv8f* w) {
  const qv8f d = qsplat(qhalf(b));
  const qv8u up = {24, 16, 8, 0, 24, 16, 8, 0};
  for (int h = 0; h < 2; ++h) {
    const qv4u words = qwords(b + 2 + 16 * h);
    for (int a = 0; a < 2; ++a)  // sign-extend byte l: shift it to the top, then back
      w[2 * h + a] = qfloat((qv8i)(qspread(words, a) << up) >> 24) * d;
  }
}
// (q - 8) * d as one fma: -8d is exact, so this rounds once, like the reference.
static inline void qdecode(q4_0_block, const uint8_t* b, qv8f* w) {
  const float d = qhalf(b);
  qnibbles(b + 2, qsplat(d), qsplat(-8.0f * d), w);
}
static inline void qdecode(q4_1_block, const uint8_t* b, qv8f* w) {
  float d, m;
  qhalves(b, &d, &m);
  qnibbles(b + 4, qsplat(d), qsplat(m), w);
}
static inline float qsum(qv8f v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}
// R rows of x (stride am) against C weight columns (col_bytes apart), all K.
template <class Q, int R, int C>
static inline void qmm_tile(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                            int64_t blocks, float* c, int64_t n) {
  qv8f acc[R][C][2] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    for (int j = 0; j < C; ++j) {
      qv8f v[4];
      qdecode(Q(), w + j * col_bytes + b * Q::bytes, v);
      for (int r = 0; r < R; ++r) {
        const float* xr = x + r * am + b * 32;
        acc[r][j][0] = qfma(qload(xr), v[0], acc[r][j][0]);
        acc[r][j][1] = qfma(qload(xr + 8), v[1], acc[r][j][1]);
        acc[r][j][0] = qfma(qload(xr + 16), v[2], acc[r][j][0]);
        acc[r][j][1] = qfma(qload(xr + 24), v[3], acc[r][j][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) c[r * n + j] = qsum(acc[r][j][0] + acc[r][j][1]);
}
#else
template <class Q, int R, int C>
static inline void qmm_tile(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                            int64_t blocks, float* c, int64_t n) {
  float acc[R][C][32] = {};
  float v[32];
  for (int64_t b = 0; b < blocks; ++b)
    for (int j = 0; j < C; ++j) {
      decode_block(Q(), w + j * col_bytes + b * Q::bytes, v);
      for (int r = 0; r < R; ++r) {
        const float* xr = x + r * am + b * 32;
        for (int u = 0; u < 32; ++u) acc[r][j][u] += xr[u] * v[u];
      }
    }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) c[r * n + j] = sum32(acc[r][j]);
}
#endif
// Columns [j, je) for R rows of x: tiles of C columns, then single columns.
template <class Q, int R, int C>
static inline void qmm_columns(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                               int64_t blocks, float* c, int64_t n, int64_t j, int64_t je) {
  for (; j + C <= je; j += C)
    qmm_tile<Q, R, C>(x, am, w + j * col_bytes, col_bytes, blocks, c + j, n);
  for (; j < je; ++j) qmm_tile<Q, R, 1>(x, am, w + j * col_bytes, col_bytes, blocks, c + j, n);
}
// Columns [j0, j1) of C[M, N] = X[M, K] (rows am apart) @ W^T, W's column j
// at w + j * col_bytes (K / 32 blocks). Four columns at a time: their weights
// stay in L1 while every tile of up to four x rows passes over them. Tiles
// keep R * C <= 4 (two accumulators each, plus the decoded block, in the 16
// vector registers); one row takes four columns for independent FMA chains.
template <class Q>
static inline void qmatmul(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                           int64_t M, int64_t N, int64_t K, float* c, int64_t j0, int64_t j1) {
  const int64_t blocks = K / 32;
  for (int64_t jb = j0; jb < j1; jb += 4) {
    const int64_t je = j1 - jb < 4 ? j1 : jb + 4;
    for (int64_t i = 0; i < M; i += 4) {
      const float* xi = x + i * am;
      float* ci = c + i * N;
      switch (M - i) {
        case 1:
          qmm_columns<Q, 1, 4>(xi, am, w, col_bytes, blocks, ci, N, jb, je);
          break;
        case 2:
          qmm_columns<Q, 2, 2>(xi, am, w, col_bytes, blocks, ci, N, jb, je);
          break;
        case 3:
          qmm_columns<Q, 3, 1>(xi, am, w, col_bytes, blocks, ci, N, jb, je);
          break;
        default:
          qmm_columns<Q, 4, 1>(xi, am, w, col_bytes, blocks, ci, N, jb, je);
      }
    }
  }
}
)LK";
  return part;
}

}  // namespace luminal::cpu
