// The quantized matrix products of the CPU kernel prelude (lk::qmatmul and
// its block decoders in vector registers, lk::qgemm for many rows, and
// lk::qgemm_i16, many rows with int16 activations): a part of
// kernel_prelude(), in its own file because it is a kernel family of its own
// (CpuQMatMul, CpuQMatMulInt16).

#include "kernel_prelude_parts.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"

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
//
// The entry points the kernels call (qmatmul, qgemm, qgemm_i16_x8,
// qgemm_i16_packed, qx8_pack_group, qi16_pack_group; amx_qgemm) are library
// templates: external linkage, not inline, so that a unit may declare an
// instance `extern template` and link against the one library that defines
// it (JitKernel::library_calls) instead of compiling it again. The products
// take the kernel's K and N as template arguments KC and NC too (0: at run
// time): with them known the compiler shapes the loops for them, as it did
// when every unit compiled the products inline (a run-time K cost up to 10 %
// of an int16 GEMM at 128 rows). M stays an argument: one instance serves a
// product's every row count, in every candidate and unit.
struct q8_0_block { enum { bytes = 34 }; };
struct q4_0_block { enum { bytes = 18 }; };
struct q4_1_block { enum { bytes = 20 }; };
static inline void decode_block(q8_0_block, const uint8_t* b, float* o) { decode_block_q8_0(b, o); }
static inline void decode_block(q4_0_block, const uint8_t* b, float* o) { decode_block_q4_0(b, o); }
static inline void decode_block(q4_1_block, const uint8_t* b, float* o) { decode_block_q4_1(b, o); }
// Plain f32 weights in the same block-of-32 form (CpuMatMulInt16: an f32
// product's weight, rounded per block by lk::qgemm_i16 itself).
struct f32_block { enum { bytes = 128 }; };
static inline void decode_block(f32_block, const uint8_t* b, float* o) { memcpy(o, b, 128); }
#if defined(__AVX2__) && defined(__FMA__) && defined(__has_builtin) && !defined(LK_QMM_PORTABLE)
#if __has_builtin(__builtin_shufflevector)
#define LK_QMM_VECTOR 1
#endif
#endif
#if defined(__AVX512F__) && defined(__F16C__) && defined(__FMA__) && defined(__has_builtin) && \
    !defined(LK_QMM_PORTABLE)
// (LK_QMM_EMULATED_AVX512, tests only: the AVX-512 / VNNI builtins are
// macros naming exact plain C++ functions of an -include'd header, so that
// these paths run, slowly, on hosts without AVX-512; see
// tests/backends/cpu/qgemm_i16_test.cpp.)
#if defined(LK_QMM_EMULATED_AVX512) || \
    (__has_builtin(__builtin_convertvector) && __has_builtin(__builtin_ia32_vfmaddps512_mask))
#define LK_QMM_AVX512 1
#undef LK_QMM_VECTOR
#endif
#endif
#if defined(LK_QMM_AVX512)
// AVX-512 (16 float lanes): a block is two vectors of 16 weights. Q4_1's min
// is applied once per block,
//   sum_t x_t (q_t d + m) = sum_t x_t (q_t d) + m * sum_t x_t,
// with sum_t x_t per block computed once per x row for all columns, so a
// weight costs a table lookup and one FMA (f32 rounding in another order than
// the reference's, within the kernels' tolerance).
typedef float qzf __attribute__((vector_size(64)));
typedef int32_t qzi __attribute__((vector_size(64)));
typedef uint8_t qzb __attribute__((vector_size(16)));
typedef int8_t qzsb __attribute__((vector_size(16)));
typedef float qz4f __attribute__((vector_size(16)));
typedef short qz8h __attribute__((vector_size(16)));
static inline qzf qzfma(qzf a, qzf b, qzf c) {
  return __builtin_ia32_vfmaddps512_mask(a, b, c, (unsigned short)-1, 4);
}
static inline qz4f qz4fma(qz4f a, qz4f b, qz4f c) { return __builtin_ia32_vfmaddps(a, b, c); }
static inline qzf qzload(const float* p) { qzf v; memcpy(&v, p, sizeof v); return v; }
static inline qz4f qz4load(const float* p) { qz4f v; memcpy(&v, p, sizeof v); return v; }
// The block's f16 scale (and min) as {d, m, 0, 0} (exact, F16C).
static inline qz4f qzscales(const uint8_t* b, bool two) {
  uint32_t h = 0;
  memcpy(&h, b, two ? 4 : 2);
  typedef uint32_t u4 __attribute__((vector_size(16)));
  return __builtin_ia32_vcvtph2ps((qz8h)(u4{h, 0, 0, 0}));
}
static inline qzf qzsplat(float s) { return qzf{s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s}; }
// The 16 bytes at p widened to 16 int32 lanes, unsigned (vpmovzxbd) or
// signed (vpmovsxbd).
static inline qzi qzwiden(const uint8_t* p, bool is_signed) {
  typedef char c16 __attribute__((vector_size(16)));
  c16 v;
  memcpy(&v, p, 16);
#if __has_builtin(__builtin_ia32_pmovzxbd512_mask) && __has_builtin(__builtin_ia32_pmovsxbd512_mask)
  return is_signed ? __builtin_ia32_pmovsxbd512_mask(v, qzi{}, (unsigned short)-1)
                   : __builtin_ia32_pmovzxbd512_mask(v, qzi{}, (unsigned short)-1);
#else
  return is_signed ? __builtin_convertvector((qzsb)v, qzi) : __builtin_convertvector((qzb)v, qzi);
#endif
}
static inline float qzsum(qzf v) {
  typedef float f8 __attribute__((vector_size(32)));
  const f8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]));
}
// Q4 nibbles straight to (q - bias) * d by a table lookup: vpermps reads the
// low 4 bits of each index lane, so one permute replaces a mask, an
// int-to-float conversion and the scaling (the table holds the 16 products,
// rounded as the conversion's product would be).
static inline void qznibbles(const uint8_t* p, float bias, qzf d, qzf* lo, qzf* hi) {
  const qzi w = qzwiden(p, false);
  const qzf iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#if __has_builtin(__builtin_ia32_permvarsf512_mask)  // GCC
  const qzf table = (iota - bias) * d;
  *lo = __builtin_ia32_permvarsf512_mask(table, w, table, (unsigned short)-1);
  *hi = __builtin_ia32_permvarsf512_mask(table, w >> 4, table, (unsigned short)-1);
#elif __has_builtin(__builtin_ia32_permvarsf512)  // Clang
  const qzf table = (iota - bias) * d;
  *lo = __builtin_ia32_permvarsf512(table, w);
  *hi = __builtin_ia32_permvarsf512(table, w >> 4);
#else
  *lo = (__builtin_convertvector(w & 15, qzf) - bias) * d;
  *hi = (__builtin_convertvector(w >> 4, qzf) - bias) * d;
#endif
}
// A block's 32 values: lo = elements 0..15, hi = 16..31 (Q4: low nibbles,
// then high nibbles). Q4 blocks come out scaled by d (the table does it for
// free); Q8_0's are the integers, scaled after the dot product (one FMA
// instead of two multiplies).
template <class Q> struct qztraits { enum { has_min = 0, scaled = 1 }; };
template <> struct qztraits<q4_1_block> { enum { has_min = 1, scaled = 1 }; };
template <> struct qztraits<q8_0_block> { enum { has_min = 0, scaled = 0 }; };
static inline void qzvalues(q8_0_block, const uint8_t* b, qzf, qzf* lo, qzf* hi) {
  *lo = __builtin_convertvector(qzwiden(b + 2, true), qzf);
  *hi = __builtin_convertvector(qzwiden(b + 18, true), qzf);
}
static inline void qzvalues(q4_0_block, const uint8_t* b, qzf d, qzf* lo, qzf* hi) {
  qznibbles(b + 2, 8, d, lo, hi);
}
static inline void qzvalues(q4_1_block, const uint8_t* b, qzf d, qzf* lo, qzf* hi) {
  qznibbles(b + 4, 0, d, lo, hi);
}
// R rows of x (stride am) against C weight columns (col_bytes apart), all K.
// xs: per row, per block {0, sum of the block's x, 0, 0} (Q4_1 only), so that
// {d, m, 0, 0} * xs accumulates m * sum(x) in lane 1 (lane 0's d * 0 is dropped).
template <class Q, int R, int C>
static inline void qmm_tile(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                            int64_t blocks, const float* xs, float* c, int64_t n, bool add) {
  qzf acc[R][C] = {};
  qz4f macc[R][C] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    qzf xl[R], xh[R];
    for (int r = 0; r < R; ++r) {
      xl[r] = qzload(x + r * am + b * 32);
      xh[r] = qzload(x + r * am + b * 32 + 16);
    }
    for (int j = 0; j < C; ++j) {
      const uint8_t* blk = w + j * col_bytes + b * Q::bytes;
      // The same block of the next tile's column into L1, and of the fourth
      // tile ahead into L2: the weights stream from memory once, and the
      // hardware prefetcher alone leaves the GEMV waiting (Q8_0 from DRAM:
      // 7.9 -> 15 GB/s on one Zen 4 core).
      __builtin_prefetch(blk + C * col_bytes);
      __builtin_prefetch(blk + 4 * C * col_bytes, 0, 2);
      const qz4f s = qzscales(blk, qztraits<Q>::has_min);
      const qzf d = qzsplat(s[0]);
      qzf lo, hi;
      qzvalues(Q(), blk, d, &lo, &hi);
      for (int r = 0; r < R; ++r) {
        if (qztraits<Q>::scaled)
          acc[r][j] = qzfma(xh[r], hi, qzfma(xl[r], lo, acc[r][j]));
        else
          acc[r][j] = qzfma(d, qzfma(xh[r], hi, xl[r] * lo), acc[r][j]);
        if (qztraits<Q>::has_min)
          macc[r][j] = qz4fma(s, qz4load(xs + (r * blocks + b) * 4), macc[r][j]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j)
      c[r * n + j] = (add ? c[r * n + j] : 0.0f) + (qzsum(acc[r][j]) + macc[r][j][1]);
}
#elif defined(LK_QMM_VECTOR)
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
                            int64_t blocks, const float*, float* c, int64_t n, bool) {
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
                            int64_t blocks, const float*, float* c, int64_t n, bool) {
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
// Columns [j, je) for R rows of x: tiles of C columns, then single columns
// (xs and add: the AVX-512 tile's per-block x sums and "add to c", for K in
// pieces; the other tiles take whole rows).
template <class Q, int R, int C>
static inline void qmm_columns(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                               int64_t blocks, const float* xs, float* c, int64_t n, int64_t j,
                               int64_t je, bool add) {
  for (; j + C <= je; j += C)
    qmm_tile<Q, R, C>(x, am, w + j * col_bytes, col_bytes, blocks, xs, c + j, n, add);
  for (; j < je; ++j)  // (row by row: one tile shape fewer to compile per R)
    for (int r = 0; r < R; ++r)
      qmm_tile<Q, 1, 1>(x + r * am, am, w + j * col_bytes, col_bytes, blocks,
                        xs ? xs + r * blocks * 4 : xs, c + r * n + j, n, add);
}
#if defined(LK_QMM_AVX512)
// Columns [j0, j1) of C[M, N] = X[M, K] (rows am apart) @ W^T, W's column j
// at w + j * col_bytes (K / 32 blocks). K in pieces of at most 1024 blocks and
// rows in groups, so that Q4_1's per-block x sums of a group and piece fit a
// fixed 64 KB on the stack (a piece after the first adds to c); columns in
// panels of 8 whose weights stay in L1 while each tile of up to 4 rows passes
// over them; a tile keeps R * C = 8 accumulators (plus the x blocks and a
// decoded block in the 32 registers).
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qmatmul(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
             int64_t M, int64_t N_arg, int64_t K_arg, float* c, int64_t j0, int64_t j1) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  constexpr int64_t kPiece = 1024;
  constexpr int kSums = qztraits<Q>::has_min ? 4 * 4096 : 1;
  float xs[kSums];  // {0, sum, 0, 0} per row and block, rows piece blocks apart
  const int64_t blocks = K / 32;
  const int64_t piece = blocks < kPiece ? (blocks > 0 ? blocks : 1) : kPiece;
  const int64_t group = qztraits<Q>::has_min ? 4096 / piece : M;
  for (int64_t i0 = 0; i0 < M; i0 += group) {
    const int64_t i1 = M - i0 < group ? M : i0 + group;
    for (int64_t k0 = 0; k0 < blocks; k0 += piece) {
      const int64_t nb = blocks - k0 < piece ? blocks - k0 : piece;
      const float* xk = x + k0 * 32;
      const uint8_t* wk = w + k0 * Q::bytes;
      if (qztraits<Q>::has_min)
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t b = 0; b < nb; ++b) {
            float* o = xs + ((i - i0) * nb + b) * 4;
            const float* xb = xk + i * am + b * 32;
            o[0] = o[2] = o[3] = 0;
            o[1] = qzsum(qzload(xb) + qzload(xb + 16));
          }
      for (int64_t jb = j0; jb < j1; jb += 8) {
        const int64_t je = j1 - jb < 8 ? j1 : jb + 8;
        // Tiles of 4, 2 and 1 rows (R * C = 8; each tile shape is compiled
        // code: three keep a kernel unit's compile short).
        for (int64_t i = i0, rows = 0; i < i1; i += rows) {
          rows = i1 - i >= 4 ? 4 : i1 - i >= 2 ? 2 : 1;
          const float* xi = xk + i * am;
          const float* xsi = qztraits<Q>::has_min ? xs + (i - i0) * nb * 4 : nullptr;
          float* ci = c + i * N;
          const bool add = k0 > 0;
          if (rows == 4)
            qmm_columns<Q, 4, 2>(xi, am, wk, col_bytes, nb, xsi, ci, N, jb, je, add);
          else if (rows == 2)
            qmm_columns<Q, 2, 4>(xi, am, wk, col_bytes, nb, xsi, ci, N, jb, je, add);
          else
            qmm_columns<Q, 1, 8>(xi, am, wk, col_bytes, nb, xsi, ci, N, jb, je, add);
        }
      }
    }
  }
}
#else
// Columns [j0, j1) of C[M, N] = X[M, K] (rows am apart) @ W^T, W's column j
// at w + j * col_bytes (K / 32 blocks). Four columns at a time: their weights
// stay in L1 while every tile of up to four x rows passes over them. Tiles
// keep R * C <= 4 (two accumulators each, plus the decoded block, in the 16
// vector registers); one row takes four columns for independent FMA chains.
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qmatmul(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
             int64_t M, int64_t N_arg, int64_t K_arg, float* c, int64_t j0, int64_t j1) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  const int64_t blocks = K / 32;
  for (int64_t jb = j0; jb < j1; jb += 4) {
    const int64_t je = j1 - jb < 4 ? j1 : jb + 4;
    for (int64_t i = 0; i < M; i += 4) {
      const float* xi = x + i * am;
      float* ci = c + i * N;
      switch (M - i) {
        case 1:
          qmm_columns<Q, 1, 4>(xi, am, w, col_bytes, blocks, nullptr, ci, N, jb, je, false);
          break;
        case 2:
          qmm_columns<Q, 2, 2>(xi, am, w, col_bytes, blocks, nullptr, ci, N, jb, je, false);
          break;
        case 3:
          qmm_columns<Q, 3, 1>(xi, am, w, col_bytes, blocks, nullptr, ci, N, jb, je, false);
          break;
        default:
          qmm_columns<Q, 4, 1>(xi, am, w, col_bytes, blocks, nullptr, ci, N, jb, je, false);
      }
    }
  }
}
#endif
// ---- many rows (a prefill): the same product as a GEMM at BLAS speed. The
// product is compute-bound there, and decoding in registers per tile (above)
// cannot keep up with a BLAS micro-kernel; so each thread decodes a panel of
// its weight columns to f32 and lets a single-threaded BLAS sgemm multiply
// every row of x with it. The panel (the thread's own, sized to stay in L2)
// is still in cache from the decode to the multiply: the weights are read
// from memory once and never exist dequantised as a whole. Decoding rounds as
// decode_block does, so only the summation order differs from the interpreter.
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
#if defined(LK_QMM_AVX512)
template <class Q> static inline void qdecode32(const uint8_t* b, float* out) {
  const qz4f s = qzscales(b, qztraits<Q>::has_min);
  const qzf d = qzsplat(s[0]);
  qzf lo, hi;
  qzvalues(Q(), b, d, &lo, &hi);
  if (!qztraits<Q>::scaled) lo *= d, hi *= d;
  if (qztraits<Q>::has_min) lo += qzsplat(s[1]), hi += qzsplat(s[1]);
  memcpy(out, &lo, sizeof lo);
  memcpy(out + 16, &hi, sizeof hi);
}
#else
template <class Q> static inline void qdecode32(const uint8_t* b, float* out) {
  decode_block(Q(), b, out);
}
#endif
// Columns [j0, j1) of C[M, N] = X[M, K] (rows am apart) @ W^T, W's column j
// at w + j * col_bytes (K / 32 blocks), through sgemm (row-major cblas_sgemm;
// M, N, K and am within int), decoding into `panel` (`floats` of them, at
// least 2048). Panels of up to nb columns (a multiple of 16, the BLAS kernels'
// tile; at least 64, below which a call's fixed costs show; at most 512,
// enough to hide them), the columns split into equal panels, and K in pieces
// that fill the panel (a piece after the first adds to c). Every call packs
// all of x's rows again, so wide panels matter most when x is large (512 rows
// of 1536: 0.86x OpenBLAS with 512 KB panels, 0.90x with 768 KB, one thread).
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qgemm(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
           int64_t M, int64_t N_arg, int64_t K_arg, float* c, int64_t j0, int64_t j1,
           sgemm_fn sgemm, float* panel, int64_t floats) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  constexpr int64_t kMinCols = 64, kMaxCols = 512;
  int64_t nb = floats / (K > 0 ? K : 1) / 16 * 16;
  nb = nb < kMinCols ? kMinCols : nb > kMaxCols ? kMaxCols : nb;
  const int64_t kc = K < floats / nb / 32 * 32 ? K : floats / nb / 32 * 32;
  // The columns in equal panels (768 as 3 x 256, not 336 + 336 + 96).
  const int64_t panels = (j1 - j0 + nb - 1) / nb;
  if (panels > 1) nb = ((j1 - j0 + panels - 1) / panels + 15) / 16 * 16;
  for (int64_t j = j0; j < j1; j += nb) {
    const int64_t jn = j1 - j < nb ? j1 - j : nb;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
      const int64_t kn = K - k0 < kc ? K - k0 : kc;
      const uint8_t* wk = w + j * col_bytes + k0 / 32 * Q::bytes;
      for (int64_t r = 0; r < jn; ++r)
        for (int64_t b = 0; b < kn / 32; ++b)
          qdecode32<Q>(wk + r * col_bytes + b * Q::bytes, panel + r * kn + b * 32);
      // (101, 111, 112: CBLAS's row-major, no-transpose and transpose)
      sgemm(101, 111, 112, (int)M, (int)jn, (int)kn, 1.0f, x + k0, (int)am, panel, (int)kn,
            k0 > 0 ? 1.0f : 0.0f, c + j, (int)N);
    }
  }
}
// ---- many rows with 16-bit integer activations (CpuQMatMulInt16): the
// same product at twice f32's multiply rate. AVX-512 VNNI's vpdpwssd
// multiplies 32 int16 pairs and sums each pair into 16 int32 lanes (32
// multiply-adds per instruction, one FMA's throughput), and a GGUF weight is
// an exact small integer times its block's scale. So each 32-element block
// of an x row is rounded to int16 with its own scale, s = amax / 32767 (amax
// = max |x| of the block): a_t = rint(x_t / s), |x_t - s a_t| <= amax / 65534
// (64x finer than bf16). Per block b,
//   C[i, j] += (d_w[j, b] s[i, b]) * (sum_t q_t a_t)  [exact int32 sum]
//            + m_w[j, b] * sx[i, b]                    (Q4_1's min; sx = sum of x)
// with f32 accumulation across blocks (one conversion per block). A row
// holding a non-finite x is computed by lk::qmatmul in f32 instead, so that
// NaN / Inf come out where the reference has them (rounding would hide them).
// Blocks with amax < 1e-30 (1 / s would overflow) count as zero: an error of
// at most 32e-30 |w| per block.
//
// Outliers: LLM activations have blocks where one or two elements dwarf the
// rest (SmolLM2's down_proj inputs: up to 4500x the block's next magnitude),
// and amax / 65534 per element then swamps the small ones (8.6e-3 logit error
// instead of 5e-5). With the block's magnitudes sorted, m1 >= m2 >= m3, the
// top two are outliers if m2 > 4 m3, else the top one if m1 > 4 m2: they are
// kept exact (position and f32 value, in a per-row list) and rounded as 0, the
// rest of the block is rounded with s = (next magnitude) / 32767, and after a
// panel's integer blocks each outlier adds v * (d_w q_t) to its row, a
// rank-1 update over the panel's columns (Q4_1's m * sx already holds it).
//
// Elements t and t + 16 of a block share a 32-bit word (t in the low int16):
// a Q4 byte's two nibbles, so that a weight block decodes without moving
// nibbles across bytes; x is stored in the same order (any order gives the
// same exact integer sum).
// Slot scratch: the weight panel (768 KB, most of a Zen 4 core's L2), x's
// int16 words (M K 2 bytes), {s, sx} per block (8), 2 outlier slots per block
// (16) and each row's outlier count. A panel unit: one block of 16 columns,
// 16 words x 16 columns (p major), then their d and m as floats.
// Fewer than qi16_gemm_rows rows (kQGemmInt16MinRows, library_kernels.hpp)
// take the GEMV (qx8_gemv for GGUF weights, over their interleaved copy): no
// panel.
enum { qi16_panel_bytes = 786432, qi16_unit = 1152, qi16_gemm_rows = )LK" +
                                  std::to_string(kQGemmInt16MinRows) + R"LK( };
static inline int64_t qi16_panel_space(int64_t M) {
  return M >= qi16_gemm_rows ? qi16_panel_bytes : 0;
}
static inline int64_t qgemm_i16_scratch_bytes(int64_t M, int64_t K) {
  return qi16_panel_space(M) + M * K * 2 + M * (K / 32) * 24 + M * 8;
}
// An outlier: element `at` of its row (block at / 32), exact value v.
struct qi16_outlier {
  int32_t at;
  float v;
};
// (m_k > 4 m_(k+1); 4 is a power of two: the product is exact. Tests show
// the error without outliers with -DLK_QI16_OUTLIER_RATIO=INFINITY.)
#ifndef LK_QI16_OUTLIER_RATIO
#define LK_QI16_OUTLIER_RATIO 4.0f
#endif
static constexpr float qi16_outlier_ratio = LK_QI16_OUTLIER_RATIO;
// The number of outliers of a block from its three largest magnitudes.
static inline int qi16_outliers(float m1, float m2, float m3) {
  return m2 > qi16_outlier_ratio * m3 ? 2 : m1 > qi16_outlier_ratio * m2 ? 1 : 0;
}
// The scratch's parts after the panel.
struct qi16_x {
  uint32_t* q;           // M x blocks x 16 words
  float* s;              // M x blocks x {s, sx}
  qi16_outlier* out;     // M x (2 blocks)
  int64_t* count;        // M
};
static inline qi16_x qi16_scratch(void* scratch, int64_t M, int64_t blocks) {
  qi16_x r;
  r.q = (uint32_t*)((uint8_t*)scratch + qi16_panel_space(M));
  r.s = (float*)(r.q + M * blocks * 16);
  r.out = (qi16_outlier*)(r.s + M * blocks * 2);
  r.count = (int64_t*)(r.out + M * blocks * 2);
  return r;
}
// K in pieces of at most 341 blocks: two 16-column groups fit the panel.
static inline int64_t qi16_piece(int64_t blocks) {
  constexpr int64_t kMax = qi16_panel_bytes / qi16_unit / 2;
  return blocks < kMax ? (blocks > 0 ? blocks : 1) : kMax;
}
// Integer weights of a block (q_t, natural order) and its d and m (0 if none).
static inline void qi16_ints(q8_0_block, const uint8_t* b, int32_t* q, float* d, float* m) {
  for (int t = 0; t < 32; ++t) q[t] = (int8_t)b[2 + t];
  *d = block_f16(b, 0), *m = 0.0f;
}
static inline void qi16_ints(q4_0_block, const uint8_t* b, int32_t* q, float* d, float* m) {
  for (int t = 0; t < 16; ++t) q[t] = (b[2 + t] & 15) - 8, q[t + 16] = (b[2 + t] >> 4) - 8;
  *d = block_f16(b, 0), *m = 0.0f;
}
static inline void qi16_ints(q4_1_block, const uint8_t* b, int32_t* q, float* d, float* m) {
  for (int t = 0; t < 16; ++t) q[t] = b[4 + t] & 15, q[t + 16] = b[4 + t] >> 4;
  *d = block_f16(b, 0), *m = block_f16(b, 2);
}
// An f32 block rounded to 14-bit integers with its own scale, d = amax / 8191
// (|w - d q| <= amax / 16382); d = NaN for a block holding NaN / Inf (its
// column's products come out NaN), d = 0 (all q 0) for amax < 1e-30.
static inline void qi16_ints(f32_block, const uint8_t* b, int32_t* q, float* d, float* m) {
  float v[32], amax = 0.0f;
  memcpy(v, b, 128);
  bool finite = true;
  for (int t = 0; t < 32; ++t) {
    finite = finite && (bits(v[t]) & 0x7f800000u) != 0x7f800000u;
    amax = fabsf(v[t]) > amax ? fabsf(v[t]) : amax;
  }
  float inv = 0.0f;
  *d = 0.0f, *m = 0.0f;
  if (!finite) *d = NAN;
  else if (amax >= 1e-30f) *d = amax / 8191.0f, inv = 8191.0f / amax;
  for (int t = 0; t < 32; ++t) q[t] = finite ? (int32_t)rintf(v[t] * inv) : 0;
}
// x_max: the largest integer x is rounded to. A GGUF weight's integers fit 8
// bits, so x takes 16; an f32 weight is rounded to 14 bits (|q| <= 8191, see
// qi16_ints below) and so is x: a block's 32 products then sum to at most
// 32 * 8191^2 < 2^31, exact in the int32 lanes.
template <class Q> struct qi16_traits { enum { has_min = 0, x_max = 32767 }; };
// (Q4_1: 32639, so that the VNNI GEMV's two signed bytes per x fit, qb16_split_x)
template <> struct qi16_traits<q4_1_block> { enum { has_min = 1, x_max = 32639 }; };
template <> struct qi16_traits<f32_block> { enum { has_min = 0, x_max = 8191 }; };
static inline bool qi16_finite(float v) { return (bits(v) & 0x7f800000u) != 0x7f800000u; }
static inline uint32_t qi16_pair(int32_t lo, int32_t hi) {
  return ((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16);
}
// Row x of the product in f32 with the weights decoded as the reference does
// (d q + m, then x w): the path of rows holding NaN / Inf, which then come out
// where the interpreter has them (lk::qmatmul's split of Q4_1's min, m * sum
// x, would turn an Inf times a zero q d into NaN).
template <class Q>
static inline void qi16_f32_row(const float* x, const uint8_t* w, int64_t col_bytes, int64_t K,
                                float* c, int64_t j0, int64_t j1) {
  float v[32];
  for (int64_t j = j0; j < j1; ++j) {
    float acc = 0.0f;
    for (int64_t b = 0; b < K / 32; ++b) {
      decode_block(Q(), w + j * col_bytes + b * Q::bytes, v);
      for (int t = 0; t < 32; ++t) acc += x[b * 32 + t] * v[t];
    }
    c[j] = acc;
  }
}
// Row x (32 x blocks elements) rounded into xq / xs, its outliers into out /
// nout; false if it holds a non-finite value (VNNI and portable builds below).
// A block's 16 words hold elements t and t + 16 in word t (the GEMM's pair
// order) or, `natural`, its 32 int16 in element order (the GEMV's).
static inline bool qi16_quantize_row(const float* x, int64_t blocks, float qmax, uint32_t* xq,
                                     float* xs, qi16_outlier* out, int64_t* nout, bool natural);
// Every row of x rounded into the scratch after the panel; a row holding NaN
// / Inf gets s = NaN in its first block (qi16_f32_rows computes it).
static inline qi16_x qi16_quantize_rows(const float* x, int64_t am, int64_t M, int64_t blocks,
                                        float qmax, void* scratch, bool natural = false) {
  const qi16_x xr = qi16_scratch(scratch, M, blocks);
  for (int64_t i = 0; i < M; ++i)
    if (!qi16_quantize_row(x + i * am, blocks, qmax, xr.q + i * blocks * 16, xr.s + i * blocks * 2,
                           xr.out + i * blocks * 2, xr.count + i, natural))
      xr.s[i * blocks * 2] = NAN;
  return xr;
}
// The rows qi16_quantize_rows flagged, computed again in f32.
template <class Q>
static inline void qi16_f32_rows(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                                 int64_t M, int64_t N, int64_t K, float* c, int64_t j0, int64_t j1,
                                 const qi16_x& xr) {
  const int64_t blocks = K / 32;
  for (int64_t i = 0; i < M; ++i)
    if (blocks > 0 && xr.s[i * blocks * 2] != xr.s[i * blocks * 2])
      qi16_f32_row<Q>(x + i * am, w, col_bytes, K, c + i * N, j0, j1);
}
// ---- GGUF weights repacked for the int16 product (CpuQMatMulInt16): eight
// columns interleaved per block, so that each int32 lane of a 256-bit
// vpdpwssd / vpmaddwd is one column (no reduction across lanes) and the eight
// columns' scales are one f16 vector each. Group g (columns 8g .. 8g + 7) of
// block b at packed + (g * blocks + b) * bytes (8 GGUF blocks' worth): chunk t
// (t < quant / 2, 16 bytes) whose bytes 2c and 2c + 1 are column c's quant
// bytes 2t and 2t + 1 (Q4: byte i holds q_i | q_(i+16) << 4, GGUF's order;
// Q8_0: q_i), then the eight columns' d (f16), then Q4_1's m. The same bytes as
// the GGUF blocks, rearranged: columns past N are zero (d = m = 0), and the
// group count is even (qx8_groups), so that a 16-column panel unit always has
// two groups.
//
// An f32 weight (CpuMatMulInt16 on AVX2 hosts) takes the same form with its
// blocks rounded as qi16_ints(f32_block) does: 32 int16 per column and block
// (chunk t, 32 bytes: column c's q_2t and q_2t+1 at bytes 4c .. 4c + 3) and
// the eight columns' d as f32: 2.125 bytes per weight instead of 4.
// (word: a column's bytes per chunk; scale: the bytes of a d, f16 or f32)
template <class Q> struct qx8_traits;
template <> struct qx8_traits<q4_1_block> {
  enum { data = 4, quant = 16, bytes = 160, has_min = 1, nibbles = 1, word = 2, scale = 2 };
};
template <> struct qx8_traits<q4_0_block> {
  enum { data = 2, quant = 16, bytes = 144, has_min = 0, nibbles = 1, word = 2, scale = 2 };
};
template <> struct qx8_traits<q8_0_block> {
  enum { data = 2, quant = 32, bytes = 272, has_min = 0, nibbles = 0, word = 2, scale = 2 };
};
template <> struct qx8_traits<f32_block> {
  enum { data = 4, quant = 64, bytes = 544, has_min = 0, nibbles = 0, word = 4, scale = 4 };
};
static inline int64_t qx8_groups(int64_t N) { return (N + 15) / 16 * 2; }
// Column c's block as the copy takes it: the GGUF block itself, or an f32
// block rounded (its d, f32, then its 32 int16: the layout of a GGUF block
// with data = 4 and two-byte quants).
template <class Q> struct qx8_source {
  const uint8_t* operator()(const uint8_t* blk) const { return blk; }
};
template <> struct qx8_source<f32_block> {
  uint8_t rounded[68];
  const uint8_t* operator()(const uint8_t* blk) {
    int32_t q[32];
    float d, m;
    qi16_ints(f32_block(), blk, q, &d, &m);
    memcpy(rounded, &d, 4);
    for (int t = 0; t < 32; ++t) {
      const int16_t v = (int16_t)q[t];
      memcpy(rounded + 4 + 2 * t, &v, 2);
    }
    return rounded;
  }
};
template <class Q>
void qx8_pack_group(const uint8_t* w, int64_t col_bytes, int64_t g, int64_t N,
                    int64_t K, uint8_t* packed) {
  typedef qx8_traits<Q> T;
  const int64_t blocks = K / 32;
  qx8_source<Q> source;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* u = packed + (g * blocks + b) * T::bytes;
    memset(u, 0, T::bytes);
    for (int64_t c = 0; c < 8 && g * 8 + c < N; ++c) {
      const uint8_t* blk = source(w + (g * 8 + c) * col_bytes + b * Q::bytes);
      for (int t = 0; t < T::quant / T::word; ++t)
        memcpy(u + t * 8 * T::word + T::word * c, blk + T::data + T::word * t, T::word);
      memcpy(u + T::quant * 8 + T::scale * c, blk, T::scale);
      if (T::has_min) memcpy(u + T::quant * 8 + 16 + 2 * c, blk + 2, 2);
    }
  }
}
// Column j's block b put back together in GGUF's order (Q::bytes at out).
template <class Q>
static inline void qx8_block(const uint8_t* packed, int64_t blocks, int64_t j, int64_t b,
                             uint8_t* out) {
  typedef qx8_traits<Q> T;
  const uint8_t* u = packed + (j / 8 * blocks + b) * T::bytes;
  const int64_t col = j % 8;
  for (int t = 0; t < T::quant / 2; ++t) memcpy(out + T::data + 2 * t, u + t * 16 + 2 * col, 2);
  memcpy(out, u + T::quant * 8 + 2 * col, 2);
  if (T::has_min) memcpy(out + 2, u + T::quant * 8 + 16 + 2 * col, 2);
}
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && \
    defined(__AVX512VL__) && defined(LK_QMM_AVX512) && defined(__has_builtin) && \
    !defined(LK_QMM_PORTABLE)
#if defined(LK_QMM_EMULATED_AVX512) || \
    __has_builtin(__builtin_ia32_vpdpwssd_v16si) && __has_builtin(__builtin_ia32_pmaddwd512_mask) && \
    __has_builtin(__builtin_ia32_vpdpwssd_v8si) && __has_builtin(__builtin_ia32_pmaddwd256) && \
    __has_builtin(__builtin_ia32_pmovzxbw256) && __has_builtin(__builtin_ia32_pmovsxbw256) && \
    __has_builtin(__builtin_ia32_phaddd256) && __has_builtin(__builtin_ia32_gathersiv8si) && \
    __has_builtin(__builtin_ia32_vcvtph2ps256) && __has_builtin(__builtin_ia32_vfmaddps256) && \
    __has_builtin(__builtin_ia32_cvtps2dq512_mask) && __has_builtin(__builtin_ia32_pmovzxbd512_mask) && \
    __has_builtin(__builtin_ia32_cmpd512_mask) && __has_builtin(__builtin_ia32_vpdpbusd_v16si) && \
    __has_builtin(__builtin_ia32_pmovsxbd512_mask) && \
    __has_builtin(__builtin_ia32_vcvtph2ps512_mask) && __has_builtin(__builtin_shufflevector)
#define LK_QMM_VNNI 1
#endif
#endif
#if !defined(LK_QMM_VNNI) && defined(LK_QMM_VECTOR) && defined(__F16C__)
#if __has_builtin(__builtin_ia32_pmaddwd256) && __has_builtin(__builtin_ia32_pmovzxbw256) && \
    __has_builtin(__builtin_ia32_vcvtph2ps256) && __has_builtin(__builtin_ia32_pmovsxbw256) && \
    __has_builtin(__builtin_ia32_cvtps2dq256) && __has_builtin(__builtin_ia32_movmskps256) && \
    __has_builtin(__builtin_ia32_loadups256)
#define LK_QI16_AVX2 1
#endif
#endif
// Whether the product's slots (one per pool thread) take ranges of x's rows,
// all columns each, rather than ranges of columns, all rows each: with AVX2
// (every row count through the GEMV's tiles) once each slot gets 8 rows, so
// that each thread rounds only its own rows to int16 (by columns every
// thread rounds every row: a quarter of a 128-row product's time). A row's
// result does not depend on the rows around it, so either split gives the
// same bits. (VNNI: by columns, each thread packing only its columns' panels.)
static inline bool qi16_rows_split(int64_t M, int64_t slots) {
#if defined(LK_QI16_AVX2) && !defined(LK_QMM_VNNI)
  return slots > 1 && M >= 8 * slots;
#else
  (void)M, (void)slots;
  return false;
#endif
}
#if defined(LK_QMM_VNNI) || defined(LK_QI16_AVX2)
// ---- the int16 product over the interleaved Q4_1 layout (qx8_pack_group),
// with AVX-512 VNNI (vpdpwssd, 256-bit) or AVX2 (vpmaddwd + vpaddd: the same
// exact int32 sums).
// GEMV: per block and group, chunk t's 16 bytes zero-extended to 16 int16
// (lane 2c + e: column c's byte 2t + e); the low nibbles go against x's word
// t (elements 2t, 2t + 1, broadcast), the high ones against word t + 8
// (elements 2t + 16, 2t + 17): int32 lane c gathers column c's block sum, no
// reduction across lanes, and d and m are one vcvtph2ps each. Then per row
// and column f = fma(sum, d s, f) and Q4_1's f = fma(m, sx, f), as qi16_tile
// does, in its order: bit-identical to the GEMM and the portable build. (1 x
// 576 @ 576 x 1536 on one thread, from L2, on Zen 4: 0.58 ns per 32 weights,
// against 0.97 for the GEMV this replaced, which read the GGUF blocks in
// place and summed each column's lanes with vphaddd.)
typedef short qx16h __attribute__((vector_size(32)));
typedef int32_t qx8i __attribute__((vector_size(32)));
typedef float qx8f __attribute__((vector_size(32)));
typedef char qx16c __attribute__((vector_size(16)));
typedef short qx8h __attribute__((vector_size(16)));
static inline qx8i qx8_dot(qx8i acc, qx16h a, qx8i b) {
#if defined(LK_QMM_VNNI)
  return __builtin_ia32_vpdpwssd_v8si(acc, (qx8i)a, b);
#else
  // (the empty asm keeps the sum in its register, in order: GCC otherwise
  // reassociates a tile's integer sums, computing every product first and
  // spilling them all to the stack, at half the speed)
  acc += __builtin_ia32_pmaddwd256(a, (qx16h)b);
  __asm__("" : "+x"(acc));
  return acc;
#endif
}
static inline qx8f qx8_fma(qx8f a, qx8f b, qx8f c) { return __builtin_ia32_vfmaddps256(a, b, c); }
static inline qx8f qx8_splat(float s) { return qx8f{s, s, s, s, s, s, s, s}; }
// The most rows a tile takes with two groups (R x G int32 sums, G chunks, a
// broadcast x word). AVX2's 16 registers hold four rows' sums only with the
// f32 results in memory between blocks and each chunk loaded once:
// qx8_pin_chunk and qx8_results_in_memory (GCC otherwise keeps all R x G
// results in registers and spills sums, and folds the chunk's load into each
// row's vpmaddwd, R loads per chunk: 1.9x slower for f32 and Q8_0 weights at
// 4 to 64 rows on Zen 3).
enum { qx8_pair_rows = 4 };
template <int R> static inline void qx8_pin_chunk(qx16h& v) {
#if !defined(LK_QMM_VNNI)
  if (R > 1) __asm__("" : "+x"(v));
#else
  (void)v;
#endif
}
template <int R, int G, class F> static inline void qx8_results_in_memory(F& f) {
#if !defined(LK_QMM_VNNI)
  if (R * G > 4) __asm__("" : "+m"(f));
#else
  (void)f;
#endif
}
static inline qx16h qx8_chunk(const uint8_t* p) {
  qx16c v;
  memcpy(&v, p, 16);
  return (qx16h)__builtin_ia32_pmovzxbw256(v);
}
static inline qx8f qx8_halves(const uint8_t* p) {
  qx8h h;
  memcpy(&h, p, 16);
  return __builtin_ia32_vcvtph2ps256(h);
}
// The sign-extending form of qx8_chunk (Q8_0's quants).
static inline qx16h qx8_chunk_signed(const uint8_t* p) {
  qx16c v;
  memcpy(&v, p, 16);
  return (qx16h)__builtin_ia32_pmovsxbw256(v);
}
// Chunk t of a group without nibbles as 16 int16 (lane 2c + e: column c's
// element 2t + e): Q8_0's bytes sign-extended, an f32 weight's int16 as stored.
template <class Q> static inline qx16h qx8_pairs(const uint8_t* u, int t) {
  if constexpr (qx8_traits<Q>::word == 4) {
    qx16h v;
    memcpy(&v, u + t * 32, 32);
    return v;
  } else {
    return qx8_chunk_signed(u + t * 16);
  }
}
// The group's eight d (f16, or f32 for an f32 weight).
template <class Q> static inline qx8f qx8_scales(const uint8_t* u) {
  if constexpr (qx8_traits<Q>::scale == 4) {
    qx8f v;
    memcpy(&v, u + qx8_traits<Q>::quant * 8, 32);
    return v;
  } else {
    return qx8_halves(u + qx8_traits<Q>::quant * 8);
  }
}
// R rows of x (xq / xs at row 0's block k0; rows `blocks` blocks apart)
// against G (1 or 2) groups from column j (a multiple of 8), `cols` of their
// columns stored, blocks [k0, k0 + kn) (k0 > 0: adding to c); then each
// row's outliers in these blocks, in order.
template <class Q, int R, int G>
static inline void qx8_tile(const uint32_t* xq, const float* xs, int64_t blocks,
                            const uint8_t* packed, int64_t k0, int64_t kn, float* c, int64_t N,
                            int64_t j, int64_t cols, const qi16_outlier* out,
                            const int64_t* count) {
  typedef qx8_traits<Q> T;
  constexpr int A = R == 1 ? 2 : 1;  // int32 chains per row and group (one row: two)
  const uint8_t* u0 = packed + (j / 8 * blocks + k0) * T::bytes;
  qx8f f[G][R];
  for (int g = 0; g < G; ++g) {
    const int64_t nv = cols - g * 8 < 8 ? cols - g * 8 : 8;
    for (int r = 0; r < R; ++r) {
      float acc[8] = {};
      if (k0 > 0) memcpy(acc, c + r * N + j + g * 8, nv * sizeof(float));
      memcpy(&f[g][r], acc, 32);
    }
  }
  for (int64_t b = 0; b < kn; ++b) {
    const uint8_t* ub[G];
    for (int g = 0; g < G; ++g) ub[g] = u0 + (g * blocks + b) * T::bytes;
    qx8i s[G][R][A];
    if constexpr (T::nibbles) {
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) {
        qx16h lo[G], hi[G];
        for (int g = 0; g < G; ++g) {
          const qx16h v = qx8_chunk(ub[g] + t * 16);
          lo[g] = v & 15, hi[g] = v >> 4;
          if (!T::has_min) lo[g] -= 8, hi[g] -= 8;  // (Q4_0: q - 8)
        }
        for (int r = 0; r < R; ++r) {
          const qx8i xl = qx8i{} + (int32_t)xq[(r * blocks + b) * 16 + t];
          const qx8i xh = qx8i{} + (int32_t)xq[(r * blocks + b) * 16 + t + 8];
          for (int g = 0; g < G; ++g) {
            if (t == 0) {  // (the first products by vpmaddwd: no zeroing)
              s[g][r][0] = __builtin_ia32_pmaddwd256(lo[g], (qx16h)xl);
              if (A == 2) s[g][r][A - 1] = __builtin_ia32_pmaddwd256(hi[g], (qx16h)xh);
              else s[g][r][0] = qx8_dot(s[g][r][0], hi[g], xh);
            } else {
              s[g][r][0] = qx8_dot(s[g][r][0], lo[g], xl);
              s[g][r][A - 1] = qx8_dot(s[g][r][A - 1], hi[g], xh);
            }
          }
        }
      }
    } else {  // (Q8_0, f32: chunk t holds elements 2t and 2t + 1, x's word t)
#pragma GCC unroll 16
      for (int t = 0; t < 16; ++t) {
        qx16h v[G];
        for (int g = 0; g < G; ++g) v[g] = qx8_pairs<Q>(ub[g], t), qx8_pin_chunk<R>(v[g]);
        for (int r = 0; r < R; ++r) {
          const qx8i xw = qx8i{} + (int32_t)xq[(r * blocks + b) * 16 + t];
          for (int g = 0; g < G; ++g)
            s[g][r][t % A] = t < A ? __builtin_ia32_pmaddwd256(v[g], (qx16h)xw)
                                   : qx8_dot(s[g][r][t % A], v[g], xw);
        }
      }
    }
    qx8_results_in_memory<R, G>(f);
    for (int g = 0; g < G; ++g) {
      const qx8f d = qx8_scales<Q>(ub[g]);
      for (int r = 0; r < R; ++r) {
        const float* sr = xs + (r * blocks + b) * 2;
        const qx8i sum = A == 2 ? s[g][r][0] + s[g][r][A - 1] : s[g][r][0];
        f[g][r] = qx8_fma(__builtin_convertvector(sum, qx8f), d * qx8_splat(sr[0]), f[g][r]);
      }
      if (T::has_min) {
        const qx8f m = qx8_halves(ub[g] + T::quant * 8 + 16);
        for (int r = 0; r < R; ++r)
          f[g][r] = qx8_fma(m, qx8_splat(xs[(r * blocks + b) * 2 + 1]), f[g][r]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const qi16_outlier* o = out + r * blocks * 2;
    for (int64_t e = 0; e < count[r]; ++e) {
      const int64_t b = o[e].at >> 5, t = o[e].at & 31;
      if (b < k0 || b >= k0 + kn) continue;
      for (int g = 0; g < G; ++g) {
        const uint8_t* u = packed + ((j / 8 + g) * blocks + b) * T::bytes;
        qx8i q;
        if constexpr (T::nibbles) {
          const qx8i pair = (qx8i)qx8_chunk(u + (t & 15) / 2 * 16);
          const qx8i byte = (t & 1) ? pair >> 16 : pair & 0xffff;
          q = t < 16 ? byte & 15 : byte >> 4;
          if (!T::has_min) q -= 8;
        } else {
          const qx8i pair = (qx8i)qx8_pairs<Q>(u, t / 2);
          q = (t & 1) ? pair >> 16 : (pair << 16) >> 16;
        }
        const qx8f dq = __builtin_convertvector(q, qx8f) * qx8_scales<Q>(u);
        f[g][r] = qx8_fma(qx8_splat(o[e].v), dq, f[g][r]);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    const int64_t nv = cols - g * 8 < 8 ? cols - g * 8 : 8;
    for (int r = 0; r < R; ++r) {
      if (nv == 8) {  // (a whole group: one store, not a call to memcpy)
        memcpy(c + r * N + j + g * 8, &f[g][r], 32);
        continue;
      }
      float acc[8];
      memcpy(acc, &f[g][r], 32);
      memcpy(c + r * N + j + g * 8, acc, nv * sizeof(float));
    }
  }
}
template <class Q, int R>
static inline void qx8_rows(const uint32_t* xq, const float* xs, int64_t blocks,
                            const uint8_t* packed, int64_t k0, int64_t kn, float* c, int64_t N,
                            int64_t j0, int64_t j1, const qi16_outlier* out,
                            const int64_t* count) {
  for (int64_t j = j0; j < j1; j += 16) {  // (two groups at a time)
    const int64_t cols = j1 - j < 16 ? j1 - j : 16;
    if (cols > 8 && R <= qx8_pair_rows)
      qx8_tile<Q, R, 2>(xq, xs, blocks, packed, k0, kn, c, N, j, cols, out, count);
    else
      for (int64_t h = 0; h < cols; h += 8)
        qx8_tile<Q, R, 1>(xq, xs, blocks, packed, k0, kn, c, N, j + h,
                          cols - h < 8 ? cols - h : 8, out, count);
  }
}
// Columns [j0, j1) of c zeroed where K = 0 (no block adds to them).
static inline void qi16_zero_if_empty(int64_t blocks, int64_t M, int64_t N, int64_t j0,
                                      int64_t j1, float* c) {
  if (blocks == 0)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = j0; j < j1; ++j) c[i * N + j] = 0.0f;
}
// The GEMVs' loops: K in qi16_piece's pieces (each piece's outliers after
// its blocks, as the GEMM does), columns in panels of about 128 KB of the
// copy (bytes16: 16 columns' bytes per block), every row against one panel
// before the next: the panel stays in L2 while the rows pass (row-major,
// each four rows would stream all N columns from L3 or DRAM again; each
// result's blocks are summed in the same order either way). rows(qi16_n<R>,
// xq, xs, out, count, c, k0, kn, jb, je) computes R rows (at most 4) of
// columns [jb, je) and blocks [k0, k0 + kn), its arguments at the first row.
template <int R> struct qi16_n { enum { value = R }; };
template <class F>
static inline void qi16_gemv_loop(const qi16_x& xr, int64_t M, int64_t N, int64_t blocks,
                                  float* c, int64_t j0, int64_t j1, int64_t bytes16, F rows) {
  const int64_t kc = qi16_piece(blocks);
  qi16_zero_if_empty(blocks, M, N, j0, j1, c);
  for (int64_t k0 = 0; k0 < blocks; k0 += kc) {
    const int64_t kn = blocks - k0 < kc ? blocks - k0 : kc;
    const int64_t per16 = kn * bytes16;
    const int64_t nb = M <= 4 ? j1 - j0 : (131072 / per16 > 1 ? 131072 / per16 : 1) * 16;
    for (int64_t jb = j0; jb < j1; jb += nb) {
      const int64_t je = j1 - jb < nb ? j1 : jb + nb;
      for (int64_t i = 0; i < M; i += 4) {
        const int64_t n = M - i < 4 ? M - i : 4;
        const uint32_t* xq = xr.q + (i * blocks + k0) * 16;
        const float* xs = xr.s + (i * blocks + k0) * 2;
        const qi16_outlier* out = xr.out + i * blocks * 2;
        const int64_t* count = xr.count + i;
        float* ci = c + i * N;
        if (n == 4) rows(qi16_n<4>(), xq, xs, out, count, ci, k0, kn, jb, je);
        if (n == 3) rows(qi16_n<3>(), xq, xs, out, count, ci, k0, kn, jb, je);
        if (n == 2) rows(qi16_n<2>(), xq, xs, out, count, ci, k0, kn, jb, je);
        if (n == 1) rows(qi16_n<1>(), xq, xs, out, count, ci, k0, kn, jb, je);
      }
    }
  }
}
// Rows of x four at a time against columns [j0, j1) (j0 a multiple of 16);
// rows holding NaN / Inf again in f32 from the GGUF blocks w.
template <class Q>
static inline void qx8_gemv(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                            const uint8_t* packed, int64_t M, int64_t N, int64_t K, float* c,
                            int64_t j0, int64_t j1, void* scratch) {
  const int64_t blocks = K / 32;
  const qi16_x xr = qi16_quantize_rows(x, am, M, blocks, qi16_traits<Q>::x_max, scratch, true);
  qi16_gemv_loop(xr, M, N, blocks, c, j0, j1, 2 * qx8_traits<Q>::bytes,
                 [&](auto r, const uint32_t* xq, const float* xs, const qi16_outlier* out,
                     const int64_t* count, float* ci, int64_t k0, int64_t kn, int64_t jb,
                     int64_t je) {
                   qx8_rows<Q, decltype(r)::value>(xq, xs, blocks, packed, k0, kn, ci, N, jb, je,
                                                   out, count);
                 });
  qi16_f32_rows<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, xr);
}
#endif
#if defined(LK_QMM_VNNI)
// (LK_QMM_AVX512's vectors: 16 floats, 16 int32; and 32 int16)
typedef qzf qi16f;
typedef qzi qi16i;
typedef short qi16h __attribute__((vector_size(64)));
typedef char qi16c64 __attribute__((vector_size(64)));
typedef char qi16c32 __attribute__((vector_size(32)));
typedef char qi16c16 __attribute__((vector_size(16)));
typedef short qi16h16 __attribute__((vector_size(32)));
static inline qi16f qi16load(const void* p) { qi16f v; memcpy(&v, p, 64); return v; }
static inline qi16i qi16loadi(const void* p) { qi16i v; memcpy(&v, p, 64); return v; }
static inline int32_t qi16imax(qi16i v) {
  typedef int32_t i8 __attribute__((vector_size(32)));
  typedef int32_t i4 __attribute__((vector_size(16)));
  const i8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
           b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const i8 h = a > b ? a : b;
  const i4 c = __builtin_shufflevector(h, h, 0, 1, 2, 3),
           d = __builtin_shufflevector(h, h, 4, 5, 6, 7);
  const i4 q = c > d ? c : d;
  const int32_t e = q[0] > q[1] ? q[0] : q[1], f = q[2] > q[3] ? q[2] : q[3];
  return e > f ? e : f;
}
static inline float qi16float(int32_t b) { float f; memcpy(&f, &b, 4); return f; }
// The lanes of v (16) greater than t as a bit mask (vpcmpd, predicate 6).
static inline unsigned qi16gt(qi16i v, int32_t t) {
  return __builtin_ia32_cmpd512_mask(v, qi16i{} + t, 6, (unsigned short)-1);
}
// Row i of x (K elements) rounded as above into xq (K / 2 words), xs ({s,
// sx} per block) and its outlier list (returns the count in *nout); false if
// it holds a non-finite value. Magnitudes compare as ints (non-negative
// floats order as their bits).
static inline bool qi16_quantize_row(const float* x, int64_t blocks, float qmax, uint32_t* xq,
                                     float* xs, qi16_outlier* out, int64_t* nout, bool natural) {
  const qi16i mag = qi16i{} + 0x7fffffff, expo = qi16i{} + 0x7f800000;
  qi16i bad = {};
  int64_t n = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const qi16f lo = qi16load(x + b * 32), hi = qi16load(x + b * 32 + 16);
    const qi16i li = (qi16i)lo & mag, hh = (qi16i)hi & mag;
    bad |= ((li & expo) == expo) | ((hh & expo) == expo);
    // m[j + 1]: m[j] again if more than j + 1 lanes reach it, else the largest
    // below it. (First the common case: three lanes with 4 |x| >= m1 mean m3 >=
    // m1 / 4 >= m2 / 4, no outliers, which is what qi16_outliers would say.)
    int32_t m[3];
    m[0] = m[1] = m[2] = qi16imax(li > hh ? li : hh);
    const qi16i tl = (qi16i)((qi16f)li * qi16_outlier_ratio),
                th = (qi16i)((qi16f)hh * qi16_outlier_ratio);
    const bool few = __builtin_popcount(qi16gt(tl, m[0] - 1) | qi16gt(th, m[0] - 1) << 16) < 3;
    for (int j = 0; few && j < 2; ++j) {
      if (__builtin_popcount(qi16gt(li, m[j] - 1) | qi16gt(hh, m[j] - 1) << 16) > j + 1) {
        m[j + 1] = m[j];
      } else {
        const qi16i a = li < m[j] ? li : qi16i{}, c = hh < m[j] ? hh : qi16i{};
        m[j + 1] = qi16imax(a > c ? a : c);
      }
    }
    const int k = qi16_outliers(qi16float(m[0]), qi16float(m[1]), qi16float(m[2]));
    const float amax = qi16float(m[k]);
    float s = 0.0f;
    qi16i w = {};
    if (k > 0) {  // (lanes above m[k]: exactly the top k)
      for (unsigned o = qi16gt(li, m[k]) | qi16gt(hh, m[k]) << 16; o != 0; o &= o - 1) {
        const int t = __builtin_ctz(o);
        out[n].at = (int32_t)(b * 32 + t);
        out[n++].v = x[b * 32 + t];
      }
    }
    if (amax >= 1e-30f) {
      const qi16f inv = qzsplat(qmax / amax);
      s = amax / qmax;
      qi16i al = __builtin_ia32_cvtps2dq512_mask(lo * inv, qi16i{}, (unsigned short)-1, 4);
      qi16i ah = __builtin_ia32_cvtps2dq512_mask(hi * inv, qi16i{}, (unsigned short)-1, 4);
      if (k > 0) al = li > m[k] ? qi16i{} : al, ah = hh > m[k] ? qi16i{} : ah;
      if (natural) {
        typedef short h16 __attribute__((vector_size(32)));
        const h16 a = __builtin_convertvector(al, h16), c = __builtin_convertvector(ah, h16);
        w = (qi16i)__builtin_shufflevector(a, c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                           14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
                                           27, 28, 29, 30, 31);
      } else {
        w = (al & 0xffff) | (ah << 16);
      }
    }
    memcpy(xq + b * 16, &w, 64);
    xs[b * 2] = s;
    xs[b * 2 + 1] = qzsum(lo + hi);
  }
  *nout = n;
  for (int l = 0; l < 16; ++l)
    if (bad[l] != 0) return false;
  return true;
}
// 16 chunks of 16 bytes (one per column) transposed: t[p] holds byte p of
// every column (column c in byte c). Two rounds of two-source permutes.
static inline void qi16_transpose(const qi16c16* r, qi16c16* t) {
  qi16c64 v[4];
  for (int q = 0; q < 4; ++q) {
    const qi16c32 a = __builtin_shufflevector(r[4 * q], r[4 * q + 1], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                              10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                              23, 24, 25, 26, 27, 28, 29, 30, 31);
    const qi16c32 b = __builtin_shufflevector(r[4 * q + 2], r[4 * q + 3], 0, 1, 2, 3, 4, 5, 6, 7,
                                              8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                              21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    v[q] = __builtin_shufflevector(
        a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
        24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
        47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63);
  }
  // h[2 g + k]: bytes 8k..8k+7 of columns 8g..8g+7 (byte p - 8k of column c at (p - 8k) * 8 + c).
  qi16c64 h[4];
  for (int g = 0; g < 2; ++g) {
    h[2 * g] = __builtin_shufflevector(
        v[2 * g], v[2 * g + 1], 0, 16, 32, 48, 64, 80, 96, 112, 1, 17, 33, 49, 65, 81, 97, 113, 2,
        18, 34, 50, 66, 82, 98, 114, 3, 19, 35, 51, 67, 83, 99, 115, 4, 20, 36, 52, 68, 84, 100,
        116, 5, 21, 37, 53, 69, 85, 101, 117, 6, 22, 38, 54, 70, 86, 102, 118, 7, 23, 39, 55, 71,
        87, 103, 119);
    h[2 * g + 1] = __builtin_shufflevector(
        v[2 * g], v[2 * g + 1], 8, 24, 40, 56, 72, 88, 104, 120, 9, 25, 41, 57, 73, 89, 105, 121,
        10, 26, 42, 58, 74, 90, 106, 122, 11, 27, 43, 59, 75, 91, 107, 123, 12, 28, 44, 60, 76, 92,
        108, 124, 13, 29, 45, 61, 77, 93, 109, 125, 14, 30, 46, 62, 78, 94, 110, 126, 15, 31, 47,
        63, 79, 95, 111, 127);
  }
  for (int k = 0; k < 2; ++k) {
    // o: bytes 8k + 4e .. 8k + 4e + 3 of all 16 columns, 16 bytes each.
    const qi16c64 o0 = __builtin_shufflevector(
        h[k], h[2 + k], 0, 1, 2, 3, 4, 5, 6, 7, 64, 65, 66, 67, 68, 69, 70, 71, 8, 9, 10, 11, 12,
        13, 14, 15, 72, 73, 74, 75, 76, 77, 78, 79, 16, 17, 18, 19, 20, 21, 22, 23, 80, 81, 82, 83,
        84, 85, 86, 87, 24, 25, 26, 27, 28, 29, 30, 31, 88, 89, 90, 91, 92, 93, 94, 95);
    const qi16c64 o1 = __builtin_shufflevector(
        h[k], h[2 + k], 32, 33, 34, 35, 36, 37, 38, 39, 96, 97, 98, 99, 100, 101, 102, 103, 40, 41,
        42, 43, 44, 45, 46, 47, 104, 105, 106, 107, 108, 109, 110, 111, 48, 49, 50, 51, 52, 53, 54,
        55, 112, 113, 114, 115, 116, 117, 118, 119, 56, 57, 58, 59, 60, 61, 62, 63, 120, 121, 122,
        123, 124, 125, 126, 127);
    memcpy(t + 8 * k, &o0, 64);
    memcpy(t + 8 * k + 4, &o1, 64);
  }
}
// (vpmovsxbd / vpmovzxbd: GCC turns __builtin_convertvector into byte extracts)
static inline qi16i qi16widen(qi16c16 v, bool is_signed) {
  return is_signed ? __builtin_ia32_pmovsxbd512_mask(v, qi16i{}, (unsigned short)-1)
                   : __builtin_ia32_pmovzxbd512_mask(v, qi16i{}, (unsigned short)-1);
}
// The pair words of 16 columns' blocks (byte chunk `off` of each, 16 bytes:
// Q4 nibbles, or Q8 elements t and t + 16 from off and off + 16) for p = 0..15.
template <class Q> static inline void qi16_words(const qi16c16* lo, const qi16c16* hi, qi16i* w);
template <> inline void qi16_words<q4_1_block>(const qi16c16* lo, const qi16c16*, qi16i* w) {
  qi16c16 t[16];
  qi16_transpose(lo, t);
  for (int p = 0; p < 16; ++p) {
    const qi16i v = qi16widen(t[p], false);
    w[p] = (v & 15) | ((v >> 4) << 16);
  }
}
template <> inline void qi16_words<q4_0_block>(const qi16c16* lo, const qi16c16*, qi16i* w) {
  qi16c16 t[16];
  qi16_transpose(lo, t);
  for (int p = 0; p < 16; ++p) {
    const qi16i v = qi16widen(t[p], false);
    w[p] = (qi16i)((qi16h)((v & 15) | ((v >> 4) << 16)) - 8);
  }
}
template <> inline void qi16_words<q8_0_block>(const qi16c16* lo, const qi16c16* hi, qi16i* w) {
  qi16c16 a[16], b[16];
  qi16_transpose(lo, a);
  qi16_transpose(hi, b);
  for (int p = 0; p < 16; ++p)
    w[p] = (qi16widen(a[p], true) & 0xffff) | (qi16widen(b[p], true) << 16);
}
// Columns [j, j + nv) (nv <= 16; the rest zero) of blocks [k0, k0 + kc) into
// `out` (one group's kc units).
template <class Q>
static inline void qi16_pack(const uint8_t* w, int64_t col_bytes, int64_t j, int64_t nv,
                             int64_t k0, int64_t kc, uint8_t* out) {
  const int data = Q::bytes == 20 ? 4 : 2;
  for (int64_t b = 0; b < kc; ++b) {
    qi16c16 lo[16], hi[16];
    short dh[16], mh[16];
    for (int c = 0; c < 16; ++c) {
      if (c < nv) {
        const uint8_t* blk = w + (j + c) * col_bytes + (k0 + b) * Q::bytes;
        memcpy(&lo[c], blk + data, 16);
        if (Q::bytes == 34) memcpy(&hi[c], blk + data + 16, 16);
        memcpy(&dh[c], blk, 2);
        if (Q::bytes == 20) memcpy(&mh[c], blk + 2, 2); else mh[c] = 0;
      } else {
        lo[c] = hi[c] = qi16c16{};
        dh[c] = mh[c] = 0;
      }
    }
    qi16i words[16];
    qi16_words<Q>(lo, hi, words);
    uint8_t* u = out + b * qi16_unit;
    memcpy(u, words, 1024);
    qi16h16 dv, mv;
    memcpy(&dv, dh, 32);
    memcpy(&mv, mh, 32);
    const qi16f d = __builtin_ia32_vcvtph2ps512_mask(dv, qi16f{}, (unsigned short)-1, 4);
    const qi16f m = __builtin_ia32_vcvtph2ps512_mask(mv, qi16f{}, (unsigned short)-1, 4);
    memcpy(u + 1024, &d, 64);
    memcpy(u + 1088, &m, 64);
  }
}
// f32 weights: each column's block rounded as qi16_ints(f32_block) does (the
// same operations on 16 lanes: bit-identical to the portable build), the
// columns' pair words then transposed into the unit's p-major order.
template <>
inline void qi16_pack<f32_block>(const uint8_t* w, int64_t col_bytes, int64_t j, int64_t nv,
                                 int64_t k0, int64_t kc, uint8_t* out) {
  const qi16i mag = qi16i{} + 0x7fffffff;
  for (int64_t b = 0; b < kc; ++b) {
    uint32_t words[16][16];  // [column][p]
    float d[16], m[16] = {};
    for (int c = 0; c < 16; ++c) {
      qi16i v = {};
      d[c] = 0.0f;
      if (c < nv) {
        const float* blk = (const float*)(w + (j + c) * col_bytes) + (k0 + b) * 32;
        const qi16f lo = qi16load(blk), hi = qi16load(blk + 16);
        const qi16i li = (qi16i)lo & mag, hh = (qi16i)hi & mag;
        const int32_t top = qi16imax(li > hh ? li : hh);
        const float amax = qi16float(top);
        if (top >= 0x7f800000) {
          d[c] = NAN;
        } else if (amax >= 1e-30f) {
          const qi16f inv = qzsplat(8191.0f / amax);
          d[c] = amax / 8191.0f;
          const qi16i al = __builtin_ia32_cvtps2dq512_mask(lo * inv, qi16i{}, (unsigned short)-1, 4);
          const qi16i ah = __builtin_ia32_cvtps2dq512_mask(hi * inv, qi16i{}, (unsigned short)-1, 4);
          v = (al & 0xffff) | (ah << 16);
        }
      }
      memcpy(words[c], &v, 64);
    }
    uint32_t t[256];
    for (int p = 0; p < 16; ++p)
      for (int c = 0; c < 16; ++c) t[p * 16 + c] = words[c][p];
    uint8_t* u = out + b * qi16_unit;
    memcpy(u, t, 1024);
    memcpy(u + 1024, d, 64);
    memcpy(u + 1088, m, 64);
  }
}
// R rows (xq / xs at their first block, rows xrow words / 2 * xrow / 16
// floats apart... see below) against two groups of 16 columns (g0, g1: kc
// units each), all kc blocks; acc[R][32] holds the starting values and gets
// the results. Per block: int32 sums in R x 2 registers (16 vpdpwssd each),
// then one conversion and two FMAs (three with Q4_1's min) into f32.
// Then the R rows' outliers in these blocks (x's K offset k0; row r's list at
// out + r * orow, count[r] of them) added to the tile, in each row's list
// order, with the same operations qi16_outlier_updates would apply to c
// afterwards (bit-identical results): v * (d_w q_t), the weight's integer from
// the unit's pair words (element t in the low int16 for t < 16, else the
// high), read from L1 where the tile just read its units (applied to c after
// the whole panel, each update a scattered read of a panel in L2: the
// products ran 25 - 35 % slower with six outliers per row).
template <int R, bool MIN>
static inline void qi16_tile(const uint32_t* xq, int64_t xrow, const float* xs, int64_t srow,
                             const uint8_t* g0, const uint8_t* g1, int64_t kc, float* acc,
                             int64_t ld, bool add, const qi16_outlier* out, int64_t orow,
                             const int64_t* count, int64_t k0) {
  qi16f f[R][2] = {};
  if (add)
    for (int r = 0; r < R; ++r) f[r][0] = qi16load(acc + r * ld), f[r][1] = qi16load(acc + r * ld + 16);
  for (int64_t b = 0; b < kc; ++b) {
    const uint8_t* u0 = g0 + b * qi16_unit;
    const uint8_t* u1 = g1 + b * qi16_unit;
    // (the first pair by vpmaddwd: no zeroing of the sums)
    qi16i s[R][2];
    {
      const qi16i w0 = qi16loadi(u0), w1 = qi16loadi(u1);
      for (int r = 0; r < R; ++r) {
        const qi16h a = (qi16h)(qi16i{} + (int32_t)xq[r * xrow + b * 16]);
        s[r][0] = __builtin_ia32_pmaddwd512_mask(a, (qi16h)w0, qi16i{}, (unsigned short)-1);
        s[r][1] = __builtin_ia32_pmaddwd512_mask(a, (qi16h)w1, qi16i{}, (unsigned short)-1);
      }
    }
#pragma GCC unroll 15
    for (int p = 1; p < 16; ++p) {
      const qi16i w0 = qi16loadi(u0 + p * 64), w1 = qi16loadi(u1 + p * 64);
      for (int r = 0; r < R; ++r) {
        const qi16i a = qi16i{} + (int32_t)xq[r * xrow + b * 16 + p];
        s[r][0] = __builtin_ia32_vpdpwssd_v16si(s[r][0], a, w0);
        s[r][1] = __builtin_ia32_vpdpwssd_v16si(s[r][1], a, w1);
      }
    }
    const qi16f d0 = qi16load(u0 + 1024), d1 = qi16load(u1 + 1024);
    for (int r = 0; r < R; ++r) {
      const qi16f sc = qzsplat(xs[r * srow + b * 2]);
      f[r][0] = qzfma(__builtin_convertvector(s[r][0], qi16f), d0 * sc, f[r][0]);
      f[r][1] = qzfma(__builtin_convertvector(s[r][1], qi16f), d1 * sc, f[r][1]);
    }
    if (MIN) {
      const qi16f m0 = qi16load(u0 + 1088), m1 = qi16load(u1 + 1088);
      for (int r = 0; r < R; ++r) {
        const qi16f sx = qzsplat(xs[r * srow + b * 2 + 1]);
        f[r][0] = qzfma(m0, sx, f[r][0]);
        f[r][1] = qzfma(m1, sx, f[r][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const qi16_outlier* o = out + r * orow;
    for (int64_t e = 0; e < count[r]; ++e) {
      const int64_t b = (o[e].at >> 5) - k0, t = o[e].at & 31;
      if (b < 0 || b >= kc) continue;
      const qi16f v = qzsplat(o[e].v);
      const uint8_t* u0 = g0 + b * qi16_unit;
      const uint8_t* u1 = g1 + b * qi16_unit;
      const qi16i w0 = qi16loadi(u0 + (t & 15) * 64), w1 = qi16loadi(u1 + (t & 15) * 64);
      const qi16i q0 = t < 16 ? (w0 << 16) >> 16 : w0 >> 16;
      const qi16i q1 = t < 16 ? (w1 << 16) >> 16 : w1 >> 16;
      f[r][0] = qzfma(v, __builtin_convertvector(q0, qi16f) * qi16load(u0 + 1024), f[r][0]);
      f[r][1] = qzfma(v, __builtin_convertvector(q1, qi16f) * qi16load(u1 + 1024), f[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    memcpy(acc + r * ld, &f[r][0], 64);
    memcpy(acc + r * ld + 16, &f[r][1], 64);
  }
}
// Rows [i, i + R) of the panel's columns: tiles of 32 columns read from (when
// adding a K piece) and written to c directly; the last, partial one through
// acc (scalar copies and a variable-length memcpy per tile cost ~10% of a
// prefill's products when every tile took that way).
template <class Q, int R>
static inline void qi16_rows(const qi16_x& xr, int64_t blocks, int64_t i, int64_t k0, int64_t kc,
                             const uint8_t* panel, int64_t gstride, int64_t j, int64_t nc,
                             float* c, int64_t N, bool add) {
  float acc[R * 32];
  const uint32_t* xqi = xr.q + (i * blocks + k0) * 16;
  const float* xsi = xr.s + (i * blocks + k0) * 2;
  const qi16_outlier* out = xr.out + i * blocks * 2;
  const int64_t* count = xr.count + i;
  for (int64_t g = 0; g * 16 < nc; g += 2) {
    const int64_t cols = nc - g * 16 < 32 ? nc - g * 16 : 32;
    float* cg = c + i * N + j + g * 16;
    const uint8_t* g0 = panel + g * gstride * qi16_unit;
    if (cols == 32) {
      qi16_tile<R, qi16_traits<Q>::has_min != 0>(xqi, blocks * 16, xsi, blocks * 2, g0,
                                                 g0 + gstride * qi16_unit, kc, cg, N, add, out,
                                                 blocks * 2, count, k0);
      continue;
    }
    for (int r = 0; r < R; ++r)
      for (int64_t q = 0; q < 32; ++q) acc[r * 32 + q] = add && q < cols ? cg[r * N + q] : 0.0f;
    qi16_tile<R, qi16_traits<Q>::has_min != 0>(xqi, blocks * 16, xsi, blocks * 2, g0,
                                               g0 + gstride * qi16_unit, kc, acc, 32, true, out,
                                               blocks * 2, count, k0);
    for (int r = 0; r < R; ++r) memcpy(cg + r * N, acc + r * 32, cols * sizeof(float));
  }
}
// The columns of a panel (K in pieces of kc blocks, columns in pairs of
// 16-column groups, as many as fit; the slot's columns in equal panels).
static inline int64_t qi16_panel_width(int64_t kc, int64_t j0, int64_t j1) {
  constexpr int64_t kUnits = qi16_panel_bytes / qi16_unit;
  int64_t nb = kUnits / kc / 2 * 32;
  const int64_t panels = (j1 - j0 + nb - 1) / nb;
  if (panels > 1) nb = ((j1 - j0 + panels - 1) / panels + 31) / 32 * 32;
  return nb;
}
// Every row of x against a panel's nc columns (from column j of c), K blocks
// [k0, k0 + kn): tiles of 6, 2 and 1 rows (each with its rows' outliers).
template <class Q>
static inline void qi16_panel_rows(const qi16_x& xr, int64_t M, int64_t blocks, int64_t k0,
                                   int64_t kn, const uint8_t* panel, int64_t gstride, int64_t j,
                                   int64_t nc, float* c, int64_t N) {
  int64_t i = 0;
  for (; i + 6 <= M; i += 6)
    qi16_rows<Q, 6>(xr, blocks, i, k0, kn, panel, gstride, j, nc, c, N, k0 > 0);
  for (; i + 2 <= M; i += 2)
    qi16_rows<Q, 2>(xr, blocks, i, k0, kn, panel, gstride, j, nc, c, N, k0 > 0);
  for (; i < M; ++i)
    qi16_rows<Q, 1>(xr, blocks, i, k0, kn, panel, gstride, j, nc, c, N, k0 > 0);
}
// The GEMM through per-call weight panels (M >= qi16_gemm_rows): x rounded
// into the scratch after the panel, then per panel of columns and K piece,
// pack(j, nv, k0, kn, out) writes columns [j, j + nv) (nv <= 16, the rest of
// the unit zero) of blocks [k0, k0 + kn) as kn units at out. Returns x's
// rounding (the caller computes its non-finite rows again in f32).
template <class Q, class Pack>
static inline qi16_x qi16_gemm_panels(const float* x, int64_t am, int64_t M, int64_t N,
                                      int64_t K, float* c, int64_t j0, int64_t j1, void* scratch,
                                      Pack pack) {
  const int64_t blocks = K / 32;
  uint8_t* panel = (uint8_t*)scratch;
  const qi16_x xr = qi16_quantize_rows(x, am, M, blocks, qi16_traits<Q>::x_max, scratch);
  const int64_t kc = qi16_piece(blocks), nb = qi16_panel_width(kc, j0, j1);
  qi16_zero_if_empty(blocks, M, N, j0, j1, c);
  for (int64_t j = j0; j < j1; j += nb) {
    const int64_t nc = j1 - j < nb ? j1 - j : nb;
    for (int64_t k0 = 0; k0 < blocks; k0 += kc) {
      const int64_t kn = blocks - k0 < kc ? blocks - k0 : kc;
      for (int64_t g = 0; g * 16 < nc; ++g) {
        const int64_t nv = nc - g * 16 < 16 ? nc - g * 16 : 16;
        pack(j + g * 16, nv, k0, kn, panel + g * kn * qi16_unit);
      }
      if ((nc + 15) / 16 % 2 == 1)  // (the second group of the last tile: zeros)
        memset(panel + (nc + 15) / 16 * kn * qi16_unit, 0, kn * qi16_unit);
      qi16_panel_rows<Q>(xr, M, blocks, k0, kn, panel, kn, j, nc, c, N);
    }
  }
  return xr;
}
// ---- prepacked weights (CpuMatMulInt16): the weight's every 16-column group
// packed once, all K blocks in a row (group g's block b at unit g * blocks +
// b, one zero group after the last: a tile's second group may read it), kept
// by the program between runs; the product then reads the units in place of
// a per-call panel, with the same blocking and arithmetic as qgemm_i16.
template <class Q>
void qi16_pack_group(const uint8_t* w, int64_t col_bytes, int64_t g, int64_t N,
                     int64_t K, uint8_t* packed) {
  const int64_t blocks = K / 32, left = N - g * 16;
  const int64_t nv = left < 0 ? 0 : left < 16 ? left : 16;
  qi16_pack<Q>(w, col_bytes, g * 16, nv, 0, blocks, packed + g * blocks * qi16_unit);
}
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qgemm_i16_packed(const float* x, int64_t am, const uint8_t* w,
                      int64_t col_bytes, const uint8_t* packed, int64_t M,
                      int64_t N_arg, int64_t K_arg, float* c, int64_t j0, int64_t j1,
                      void* scratch) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  const int64_t blocks = K / 32;
  const qi16_x xr = qi16_quantize_rows(x, am, M, blocks, qi16_traits<Q>::x_max, scratch);
  const int64_t kc = qi16_piece(blocks), nb = qi16_panel_width(kc, j0, j1);
  qi16_zero_if_empty(blocks, M, N, j0, j1, c);
  for (int64_t j = j0; j < j1; j += nb) {  // (j0 and nb multiples of 16)
    const int64_t nc = j1 - j < nb ? j1 - j : nb;
    for (int64_t k0 = 0; k0 < blocks; k0 += kc) {
      const int64_t kn = blocks - k0 < kc ? blocks - k0 : kc;
      const uint8_t* panel = packed + (j / 16 * blocks + k0) * qi16_unit;
      qi16_panel_rows<Q>(xr, M, blocks, k0, kn, panel, blocks, j, nc, c, N);
    }
  }
  qi16_f32_rows<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, xr);
}
// ---- Q4_1 on VNNI hosts: the copy in 16-column groups for vpdpbusd (the
// u8 x s8 dot product of four bytes into an int32 lane), so that the GEMV
// reads the nibbles as bytes, with no widening to int16. Group k (columns
// 16k .. 16k + 15) of block b at packed + (k * blocks + b) * 320: chunk t (t
// < 4, 64 bytes) whose dword c is column c's quant bytes 4t .. 4t + 3, then
// the 16 columns' d (f16), then their m. The same bytes as the GGUF blocks
// and the same space as the eight-column groups (an even count of them): the
// pack launch's item g still writes columns 8g .. 8g + 7, the half g % 2 of
// each dword row, d and m (columns past N zero).
enum { qb16_bytes = 320 };
// Whether Q's copy takes this layout (Q4_1 only: the GEMV's byte-wise x and
// unsigned nibbles need no offset terms).
template <class Q> struct qb16_copy { enum { value = 0 }; };
template <> struct qb16_copy<q4_1_block> { enum { value = 1 }; };
template <>
inline void qx8_pack_group<q4_1_block>(const uint8_t* w, int64_t col_bytes, int64_t g, int64_t N,
                                       int64_t K, uint8_t* packed) {
  const int64_t blocks = K / 32, h = g % 2;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* u = packed + (g / 2 * blocks + b) * qb16_bytes;
    for (int64_t c = 0; c < 8; ++c) {
      const int64_t lane = 8 * h + c;
      uint8_t blk[20] = {};
      if (g * 8 + c < N) memcpy(blk, w + (g * 8 + c) * col_bytes + b * 20, 20);
      for (int t = 0; t < 4; ++t) memcpy(u + t * 64 + 4 * lane, blk + 4 + 4 * t, 4);
      memcpy(u + 256 + 2 * lane, blk, 2);
      memcpy(u + 288 + 2 * lane, blk + 2, 2);
    }
  }
}
// x for vpdpbusd: each int16 of a block (|x| <= 32639, Q4_1's x_max) as two
// signed bytes, x = 256 hi + lo, lo = x's low byte sign-extended (hi =
// (x + 128) >> 8 fits in [-128, 127]). A block's 64 bytes, in place of its
// 16 words (natural order): the 32 lo bytes, then the 32 hi.
static inline void qb16_split_x(uint32_t* xq, int64_t words) {
  typedef short h32 __attribute__((vector_size(64)));
  typedef char c32 __attribute__((vector_size(32)));
  for (int64_t e = 0; e < words; e += 16) {
    h32 v;
    memcpy(&v, xq + e, 64);
    const h32 lo = (h32)(v << 8) >> 8, hi = (h32)(v - lo) >> 8;
    const c32 l = __builtin_convertvector(lo, c32), h = __builtin_convertvector(hi, c32);
    memcpy(xq + e, &l, 32);
    memcpy(xq + e + 8, &h, 32);
  }
}
// 16 f16 at p as floats (d or m of a 16-column group).
static inline qi16f qb16_halves(const uint8_t* p) {
  qi16h16 v;
  memcpy(&v, p, 32);
  return __builtin_ia32_vcvtph2ps512_mask(v, qi16f{}, (unsigned short)-1, 4);
}
static inline qi16i qb16_dot(qi16i acc, qi16i w, uint32_t x) {
  return __builtin_ia32_vpdpbusd_v16si(acc, w, qi16i{} + (int32_t)x);
}
// R rows (xb at row 0's block k0, rows `blocks` blocks apart) against one
// 16-column group (u0: its block k0), blocks [k0, k0 + kn) (k0 > 0: adding
// to c), `cols` of its columns stored from column j. Per block and chunk t:
// lo = v & 0x0f (elements 4t .. 4t + 3, u8), hi = v & 0xf0 (16 q of elements
// 16 + 4t ..), each against x's lo and hi bytes: four exact int32 sums a0 ..
// a3, and 16 sum = 16 a0 + a1 + 256 (16 a2 + a3) (below 2^31: 16 * 32 * 15 *
// 32639). Then per block f = fma(sum, d s, f) and f = fma(m, sx, f), and the
// piece's outliers, as qi16_tile and qi16_outlier_updates do: bit-identical
// to the GEMM and the portable build.
template <int R>
static inline void qb16_tile(const uint32_t* xb, const float* xs, int64_t blocks,
                             const uint8_t* u0, int64_t k0, int64_t kn, float* c, int64_t N,
                             int64_t j, int64_t cols, const qi16_outlier* out,
                             const int64_t* count) {
  qi16f f[R];
  for (int r = 0; r < R; ++r) {
    float acc[16] = {};
    if (k0 > 0) memcpy(acc, c + r * N + j, cols * sizeof(float));
    memcpy(&f[r], acc, 64);
  }
  const qi16i low = qi16i{} + 0x0f0f0f0f, high = qi16i{} + (int32_t)0xf0f0f0f0u;
  for (int64_t b = 0; b < kn; ++b) {
    const uint8_t* u = u0 + b * qb16_bytes;
    qi16i a[R][4] = {};
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) {
      const qi16i v = qi16loadi(u + t * 64), lo = v & low, hi = v & high;
      for (int r = 0; r < R; ++r) {
        const uint32_t* x = xb + (r * blocks + b) * 16;
        a[r][0] = qb16_dot(a[r][0], lo, x[t]);
        a[r][1] = qb16_dot(a[r][1], hi, x[t + 4]);
        a[r][2] = qb16_dot(a[r][2], lo, x[t + 8]);
        a[r][3] = qb16_dot(a[r][3], hi, x[t + 12]);
      }
    }
    const qi16f d = qb16_halves(u + 256), m = qb16_halves(u + 288);
    for (int r = 0; r < R; ++r) {
      const qi16i s16 = (a[r][0] << 4) + a[r][1] + (((a[r][2] << 4) + a[r][3]) << 8);
      const float* sr = xs + (r * blocks + b) * 2;
      f[r] = qzfma(__builtin_convertvector(s16 >> 4, qi16f), d * qzsplat(sr[0]), f[r]);
      f[r] = qzfma(m, qzsplat(sr[1]), f[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const qi16_outlier* o = out + r * blocks * 2;
    for (int64_t e = 0; e < count[r]; ++e) {
      const int64_t b = o[e].at >> 5, t = o[e].at & 31;
      if (b < k0 || b >= k0 + kn) continue;
      const uint8_t* u = u0 + (b - k0) * qb16_bytes;
      const int p = t & 15;
      const qi16i q = (qi16loadi(u + p / 4 * 64) >> (8 * (p % 4) + 4 * (t >> 4))) & 15;
      f[r] = qzfma(qzsplat(o[e].v), __builtin_convertvector(q, qi16f) * qb16_halves(u + 256), f[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    if (cols == 16) {
      memcpy(c + r * N + j, &f[r], 64);
      continue;
    }
    float acc[16];
    memcpy(acc, &f[r], 64);
    memcpy(c + r * N + j, acc, cols * sizeof(float));
  }
}
// The GEMV over the 16-column copy: rows four at a time against columns [j0,
// j1) (j0 a multiple of 16), in qi16_gemv_loop's pieces and panels; rows
// holding NaN / Inf again in f32 from the GGUF blocks w.
static inline void qb16_gemv(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                             const uint8_t* packed, int64_t M, int64_t N, int64_t K, float* c,
                             int64_t j0, int64_t j1, void* scratch) {
  const int64_t blocks = K / 32;
  const qi16_x xr =
      qi16_quantize_rows(x, am, M, blocks, qi16_traits<q4_1_block>::x_max, scratch, true);
  qb16_split_x(xr.q, M * blocks * 16);
  qi16_gemv_loop(xr, M, N, blocks, c, j0, j1, qb16_bytes,
                 [&](auto r, const uint32_t* xb, const float* xs, const qi16_outlier* out,
                     const int64_t* count, float* ci, int64_t k0, int64_t kn, int64_t jb,
                     int64_t je) {
                   for (int64_t j = jb; j < je; j += 16)
                     qb16_tile<decltype(r)::value>(
                         xb, xs, blocks, packed + (j / 16 * blocks + k0) * qb16_bytes, k0, kn, ci,
                         N, j, je - j < 16 ? je - j : 16, out, count);
                 });
  qi16_f32_rows<q4_1_block>(x, am, w, col_bytes, M, N, K, c, j0, j1, xr);
}
// The GEMM's panel units from the 16-column copy: unit word p of column c is
// byte p % 4 of dword c of chunk p / 4, widened as qi16_words<q4_1_block>
// does (q_p | q_(p+16) << 16).
static inline void qb16_pack_panel(const uint8_t* packed, int64_t blocks, int64_t j, int64_t k0,
                                   int64_t kc, uint8_t* out) {
  for (int64_t b = 0; b < kc; ++b) {
    const uint8_t* u = packed + (j / 16 * blocks + k0 + b) * qb16_bytes;
    qi16i words[16];
    for (int t = 0; t < 4; ++t) {
      const qi16i v = qi16loadi(u + t * 64);
      for (int e = 0; e < 4; ++e) {
        const qi16i byte = (v >> (8 * e)) & 0xff;
        words[4 * t + e] = (byte & 15) | ((byte >> 4) << 16);
      }
    }
    uint8_t* o = out + b * qi16_unit;
    memcpy(o, words, 1024);
    const qi16f d = qb16_halves(u + 256), m = qb16_halves(u + 288);
    memcpy(o + 1024, &d, 64);
    memcpy(o + 1088, &m, 64);
  }
}
// The int16 product with a GGUF weight read from its interleaved copy
// `packed` (w: the GGUF blocks, read only for rows holding NaN / Inf). The
// GEMM's panel units come from the 16-column copy (Q4_1, qb16_pack_panel) or
// from the blocks put back together, 16 columns at a time, for qi16_pack.
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qgemm_i16_x8(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                  const uint8_t* packed, int64_t M, int64_t N_arg, int64_t K_arg, float* c,
                  int64_t j0, int64_t j1, void* scratch) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  const int64_t blocks = K / 32;
  if (M >= qi16_gemm_rows) {
    const qi16_x xr = qi16_gemm_panels<Q>(
        x, am, M, N, K, c, j0, j1, scratch,
        [&](int64_t j, int64_t nv, int64_t k0, int64_t kn, uint8_t* out) {
          if constexpr (qb16_copy<Q>::value) {
            qb16_pack_panel(packed, blocks, j, k0, kn, out);
          } else {
            uint8_t cols[16 * Q::bytes];
            for (int64_t b = 0; b < kn; ++b) {
              for (int64_t q = 0; q < 16; ++q)
                qx8_block<Q>(packed, blocks, j + q, k0 + b, cols + q * Q::bytes);
              qi16_pack<Q>(cols, Q::bytes, 0, nv, 0, 1, out + b * qi16_unit);
            }
          }
        });
    return qi16_f32_rows<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, xr);
  }
  if constexpr (qb16_copy<Q>::value)
    qb16_gemv(x, am, w, col_bytes, packed, M, N, K, c, j0, j1, scratch);
  else
    qx8_gemv<Q>(x, am, w, col_bytes, packed, M, N, K, c, j0, j1, scratch);
}
#else
// The same arithmetic in plain C++ (hosts without VNNI, and -DLK_QMM_PORTABLE
// for tests): the same rounding of x, exact int32 block sums, the same f32
// operations per block in the same order.
#if defined(LK_QI16_AVX2)
// x's rounding with AVX2 (eight lanes), the plain version's results bit for
// bit on every finite row (a row holding NaN / Inf is computed in f32 anyway):
// magnitudes compared as ints, the top three found as the VNNI build does,
// the same products and rint (vcvtps2dq: round to nearest even), sx summed in
// the same order. (The plain loop cost 3.7 ns per element: with two threads
// each rounding every row, a quarter of a 128-row product's time; this takes
// 0.5 ns on Zen 3.)
static inline int32_t qx8_max(qx8i v) {
  qx8i t = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
  v = v > t ? v : t;
  t = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
  v = v > t ? v : t;
  t = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
  v = v > t ? v : t;
  return v[0];
}
// The lanes of a comparison's result (-1 / 0) as bits.
static inline unsigned qx8_bits(qx8i m) { return __builtin_ia32_movmskps256((qx8f)m); }
static inline float qx8_float(int32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline bool qi16_quantize_row(const float* x, int64_t blocks, float qmax, uint32_t* xq,
                                     float* xs, qi16_outlier* out, int64_t* nout, bool natural) {
  const qx8i mag = qx8i{} + 0x7fffffff, expo = qx8i{} + 0x7f800000;
  bool finite = true;
  int64_t n = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    qx8f v[4];
    qx8i mi[4];
    unsigned bad = 0;
    for (int q = 0; q < 4; ++q) {
      // (vmovups: GCC turned a 32-byte memcpy here into two 16-byte loads
      // stored to the stack and read back as 32 bytes, a store-forwarding
      // stall per vector: 4x this function's time)
      v[q] = __builtin_ia32_loadups256(x + b * 32 + 8 * q);
      mi[q] = (qx8i)v[q] & mag;
      bad |= qx8_bits((mi[q] & expo) == expo);
    }
    finite = finite && bad == 0;
    const qx8i t01 = mi[0] > mi[1] ? mi[0] : mi[1], t23 = mi[2] > mi[3] ? mi[2] : mi[3];
    int32_t m[3];
    m[0] = m[1] = m[2] = qx8_max(t01 > t23 ? t01 : t23);
    // (three lanes with 4 |x| >= m1: no outliers, as qi16_outliers would say)
    int many = 0;
    for (int q = 0; q < 4; ++q)
      many += __builtin_popcount(qx8_bits((qx8i)((qx8f)mi[q] * 4.0f) > m[0] - 1));
    for (int j = 0; many < 3 && j < 2; ++j) {
      int reach = 0;
      for (int q = 0; q < 4; ++q) reach += __builtin_popcount(qx8_bits(mi[q] > m[j] - 1));
      if (reach > j + 1) {
        m[j + 1] = m[j];
      } else {
        qx8i below = {};
        for (int q = 0; q < 4; ++q) {
          const qx8i a = mi[q] < m[j] ? mi[q] : qx8i{};
          below = below > a ? below : a;
        }
        m[j + 1] = qx8_max(below);
      }
    }
    const int k = qi16_outliers(qx8_float(m[0]), qx8_float(m[1]), qx8_float(m[2]));
    const float amax = qx8_float(m[k]);
    for (int q = 0; k > 0 && q < 4; ++q)
      for (unsigned o = qx8_bits(mi[q] > m[k]); o != 0; o &= o - 1) {
        const int t = 8 * q + __builtin_ctz(o);
        out[n].at = (int32_t)(b * 32 + t);
        out[n++].v = x[b * 32 + t];
      }
    const qx8f h = (v[0] + v[2]) + (v[1] + v[3]);
    const float e0 = h[0] + h[4], e1 = h[1] + h[5], e2 = h[2] + h[6], e3 = h[3] + h[7];
    const float sx = (e0 + e2) + (e1 + e3);
    float s = 0.0f, inv = 0.0f;
    if (finite && amax >= 1e-30f) s = amax / qmax, inv = qmax / amax;
    qx8i a[4];
    for (int q = 0; q < 4; ++q) {
      a[q] = __builtin_ia32_cvtps2dq256(v[q] * qx8_splat(inv));
      if (k > 0) a[q] = mi[q] > m[k] ? qx8i{} : a[q];
    }
    if (natural) {
      for (int q = 0; q < 4; ++q) {
        const qx8h w = __builtin_convertvector(a[q], qx8h);
        memcpy(xq + b * 16 + 4 * q, &w, 16);
      }
    } else {
      const qx8i lo = (a[0] & 0xffff) | (a[2] << 16), hi = (a[1] & 0xffff) | (a[3] << 16);
      memcpy(xq + b * 16, &lo, 32);
      memcpy(xq + b * 16 + 8, &hi, 32);
    }
    xs[b * 2] = s;
    xs[b * 2 + 1] = sx;
  }
  *nout = n;
  return finite;
}
#else
static inline bool qi16_quantize_row(const float* x, int64_t blocks, float qmax, uint32_t* xq,
                                     float* xs, qi16_outlier* out, int64_t* nout, bool natural) {
  bool finite = true;
  int64_t n = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * 32;
    float m[3] = {0.0f, 0.0f, 0.0f}, h[8];  // the three largest magnitudes
    for (int t = 0; t < 32; ++t) {
      finite = finite && qi16_finite(xb[t]);
      const float a = fabsf(xb[t]);
      if (a > m[0]) m[2] = m[1], m[1] = m[0], m[0] = a;
      else if (a > m[1]) m[2] = m[1], m[1] = a;
      else if (a > m[2]) m[2] = a;
    }
    const int k = qi16_outliers(m[0], m[1], m[2]);
    const float amax = m[k];
    for (int t = 0; k > 0 && t < 32; ++t)
      if (fabsf(xb[t]) > amax) out[n].at = (int32_t)(b * 32 + t), out[n++].v = xb[t];
    // (the sum in the VNNI build's order, qzsum(lo + hi): bit-identical results)
    for (int l = 0; l < 8; ++l) h[l] = (xb[l] + xb[l + 16]) + (xb[l + 8] + xb[l + 24]);
    const float sx = ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]));
    float s = 0.0f, inv = 0.0f;
    if (finite && amax >= 1e-30f) s = amax / qmax, inv = qmax / amax;
    int32_t a[32];
    for (int t = 0; t < 32; ++t) a[t] = fabsf(xb[t]) > amax ? 0 : (int32_t)rintf(xb[t] * inv);
    for (int p = 0; p < 16; ++p)
      xq[b * 16 + p] = natural ? qi16_pair(a[2 * p], a[2 * p + 1]) : qi16_pair(a[p], a[p + 16]);
    xs[b * 2] = s;
    xs[b * 2 + 1] = sx;
  }
  *nout = n;
  return finite;
}
#endif
// block(j, b): column j's block b (Q's GGUF bytes).
template <class Q, class Block>
static inline void qi16_product(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                                int64_t M, int64_t N, int64_t K, float* c, int64_t j0, int64_t j1,
                                void* scratch, Block block) {
  const int64_t blocks = K / 32;
  const qi16_x xr = qi16_quantize_rows(x, am, M, blocks, qi16_traits<Q>::x_max, scratch);
  const uint32_t* xq = xr.q;
  const float* xs = xr.s;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = j0; j < j1; ++j) c[i * N + j] = 0.0f;
  int32_t q[32];
  float d, m;
  // (K in the VNNI build's pieces, each piece's outliers after its blocks)
  const int64_t kc = qi16_piece(blocks);
  for (int64_t k0 = 0; k0 < blocks; k0 += kc) {
    const int64_t k1 = blocks - k0 < kc ? blocks : k0 + kc;
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t b = k0; b < k1; ++b) {
        qi16_ints(Q(), block(j, b), q, &d, &m);
        for (int64_t i = 0; i < M; ++i) {
          const uint32_t* a = xq + (i * blocks + b) * 16;
          int32_t sum = 0;
          for (int p = 0; p < 16; ++p)
            sum += q[p] * (int32_t)(int16_t)(a[p] & 0xffff) +
                   q[p + 16] * (int32_t)(int16_t)(a[p] >> 16);
          const float s = xs[(i * blocks + b) * 2], sx = xs[(i * blocks + b) * 2 + 1];
          float& o = c[i * N + j];
          o = fmaf((float)sum, d * s, o);
          if (qi16_traits<Q>::has_min) o = fmaf(m, sx, o);
        }
      }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t e = 0; e < xr.count[i]; ++e) {
        const qi16_outlier& o = xr.out[i * blocks * 2 + e];
        const int64_t b = o.at >> 5;
        if (b < k0 || b >= k1) continue;
        for (int64_t j = j0; j < j1; ++j) {
          qi16_ints(Q(), block(j, b), q, &d, &m);
          c[i * N + j] = fmaf(o.v, (float)q[o.at & 31] * d, c[i * N + j]);
        }
      }
  }
  qi16_f32_rows<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, xr);
}
template <class Q>
static inline void qgemm_i16(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                             int64_t M, int64_t N, int64_t K, float* c, int64_t j0, int64_t j1,
                             void* scratch) {
  qi16_product<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, scratch,
                  [&](int64_t j, int64_t b) { return w + j * col_bytes + b * Q::bytes; });
}
// The interleaved copy (qx8_pack_group). AVX2: every row count through the
// GEMV's tiles (rows four at a time). Plain C++: each block put back together
// in GGUF's order from its group, so that this build reads the same packed
// bytes.
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qgemm_i16_x8(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
                  const uint8_t* packed, int64_t M, int64_t N_arg, int64_t K_arg, float* c,
                  int64_t j0, int64_t j1, void* scratch) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
#if defined(LK_QI16_AVX2)
  qx8_gemv<Q>(x, am, w, col_bytes, packed, M, N, K, c, j0, j1, scratch);
#else
  const int64_t blocks = K / 32;
  uint8_t blk[Q::bytes];
  qi16_product<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, scratch,
                  [&](int64_t j, int64_t b) -> const uint8_t* {
                    qx8_block<Q>(packed, blocks, j, b, blk);
                    return blk;
                  });
#endif
}
// Prepacked f32 weights. AVX2: 16-column group g as the interleaved groups
// 2g and 2g + 1 (qx8_pack_group<f32_block>: 1088 bytes per block, within the
// VNNI unit's 1152; nothing for the zero group after the last), every row
// count through the GEMV's tiles. Plain C++: the product reads the weight
// itself (the same arithmetic), so there is nothing to pack.
template <class Q>
void qi16_pack_group(const uint8_t* w, int64_t col_bytes, int64_t g, int64_t N,
                     int64_t K, uint8_t* packed) {
#if defined(LK_QI16_AVX2)
  if (g * 16 < N)
    for (int64_t h = 2 * g; h < 2 * g + 2; ++h) qx8_pack_group<Q>(w, col_bytes, h, N, K, packed);
#else
  (void)w, (void)col_bytes, (void)g, (void)N, (void)K, (void)packed;
#endif
}
template <class Q, int64_t KC = 0, int64_t NC = 0>
void qgemm_i16_packed(const float* x, int64_t am, const uint8_t* w,
                      int64_t col_bytes, const uint8_t* packed, int64_t M, int64_t N_arg,
                      int64_t K_arg, float* c, int64_t j0, int64_t j1, void* scratch) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
#if defined(LK_QI16_AVX2)
  qx8_gemv<Q>(x, am, w, col_bytes, packed, M, N, K, c, j0, j1, scratch);
#else
  (void)packed;
  qgemm_i16<Q>(x, am, w, col_bytes, M, N, K, c, j0, j1, scratch);
#endif
}
#endif
)LK";
  return part;
}

}  // namespace luminal::cpu
