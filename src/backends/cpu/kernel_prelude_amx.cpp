// The AMX matrix product of the CPU kernel prelude (lk::amx_gemm, CpuMatMulAmx):
// a part of kernel_prelude(), in its own file because it is a kernel family of
// its own, with its own instructions (Intel AMX tiles).

#include "kernel_prelude_parts.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"

namespace luminal::cpu {

const std::string& kernel_prelude_amx_tiles() {
  static const std::string part = R"LK(
// ---- Intel AMX tiles (the kernels of CpuMatMulAmx): eight tile registers of up to 16 rows of 64
// bytes, configured per thread (amx_begin), used through the LK_AMX_*
// macros. The kernels call no intrinsics header (GCC 12's AMX intrinsics are
// inline assembly too).
// (LK_AMX_EMULATED, tests only: the tile instructions as plain C++, so that
// these paths run, slowly, on hosts without AMX.)
#if (defined(__AMX_TILE__) && defined(__x86_64__)) || defined(LK_AMX_EMULATED)
#define LK_AMX_TILES 1
// A tile configuration (palette 1): per tile its rows and bytes per row.
struct amx_config {
  uint8_t rows[8];
  uint8_t colsb[8];
};
// bf16 products: every tile 16 rows of 64 bytes.
static const amx_config amx_config_bf16 = {{16, 16, 16, 16, 16, 16, 16, 16},
                                           {64, 64, 64, 64, 64, 64, 64, 64}};
#if defined(LK_AMX_EMULATED)
struct amx_emu_tiles {
  amx_config cfg;
  uint8_t tile[8][1024];
};
static inline amx_emu_tiles& amx_emu() {
  static thread_local amx_emu_tiles tiles;
  return tiles;
}
static inline void amx_emu_load(int t, const void* p, int64_t stride) {
  const amx_config& c = amx_emu().cfg;
  memset(amx_emu().tile[t], 0, 1024);
  for (int r = 0; r < c.rows[t]; ++r)
    memcpy(amx_emu().tile[t] + r * 64, (const uint8_t*)p + r * stride, c.colsb[t]);
}
static inline void amx_emu_store(int t, void* p, int64_t stride) {
  const amx_config& c = amx_emu().cfg;
  for (int r = 0; r < c.rows[t]; ++r)
    memcpy((uint8_t*)p + r * stride, amx_emu().tile[t] + r * 64, c.colsb[t]);
}
// tdpbf16ps: each pair of products added to the f32 sum in turn, as the
// instruction's definition reads.
static inline void amx_emu_dp(int c, int a, int b) {
  float* C = (float*)amx_emu().tile[c];
  const uint16_t* A = (const uint16_t*)amx_emu().tile[a];
  const uint16_t* B = (const uint16_t*)amx_emu().tile[b];
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float s = C[m * 16 + n];
      for (int k = 0; k < 16; ++k)
        for (int e = 0; e < 2; ++e)
          s += from_bits((uint32_t)A[m * 32 + 2 * k + e] << 16) *
               from_bits((uint32_t)B[k * 32 + 2 * n + e] << 16);
      C[m * 16 + n] = s;
    }
}
#define LK_AMX_LOAD(t, p, stride) amx_emu_load(t, p, stride)
#define LK_AMX_STORE(t, p, stride) amx_emu_store(t, p, stride)
#define LK_AMX_DP(c, a, b) amx_emu_dp(c, a, b)
#define LK_AMX_ZERO(t) memset(amx_emu().tile[t], 0, 1024)
static inline bool amx_begin(const amx_config& c) {
  amx_emu().cfg = c;
  return true;
}
static inline void amx_end() {}
#else
#define LK_AMX_LOAD(t, p, stride) \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(p), "r"((int64_t)(stride)) : "memory")
#define LK_AMX_STORE(t, p, stride) \
  __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(p), "r"((int64_t)(stride)) : "memory")
#define LK_AMX_DP(c, a, b) __asm__ volatile("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::)
#define LK_AMX_ZERO(t) __asm__ volatile("tilezero %%tmm" #t ::)
// The process's permission to use the tile registers (Linux
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); granted to the whole
// process, asked again harmlessly), then this thread's tile configuration.
static inline bool amx_begin(const amx_config& c) {
  static volatile int permitted = 0;
  if (!permitted) {
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(158L), "D"(0x1023L), "S"(18L)
                     : "rcx", "r11", "memory");
    if (r != 0) return false;
    permitted = 1;
  }
  alignas(64) uint8_t cfg[64];
  memset(cfg, 0, 64);
  cfg[0] = 1;
  for (int t = 0; t < 8; ++t) {
    cfg[16 + 2 * t] = c.colsb[t];
    cfg[48 + t] = c.rows[t];
  }
  __asm__ volatile("ldtilecfg %0" ::"m"(*(const uint8_t(*)[64])cfg));
  return true;
}
static inline void amx_end() { __asm__ volatile("tilerelease" ::); }
#endif
#endif
)LK";
  return part;
}

const std::string& kernel_prelude_amx() {
  static const std::string part = R"LK(
// ---- f32 products on AMX tiles as three bf16 products (CpuMatMulAmx). A
// host with AMX-BF16 multiplies a 16 x 32 bf16 tile by a 32 x 16 one into 16 x
// 16 f32 sums in one instruction (tdpbf16ps: ~8x the f32 FMA rate of AVX-512
// on the same core). Each f32 operand is split into two bf16, v = hi + lo
// (hi = v rounded to bf16, lo = the rest rounded to bf16: 16 significant bits
// in all), and
//   a w ~= a_hi w_hi + a_hi w_lo + a_lo w_hi      (a_lo w_lo, <= 2^-16 |a w|, dropped)
// each product exact in f32 and summed in f32 by the tile unit: the "bf16x3"
// that torch's float32 matmul precision "high" allows, a relative error of
// about 2^-16 per term (the int16 products' bound is 2^-16 of a block's
// largest x, so this is as good or better for every element).
// The weight (N rows of K contiguous floats) is packed once into tiles
// (lk::amx_pack_weight, 4 bytes per weight: hi and lo), x on every call
// (lk::amx_pack_x, split across the pool), and each pool slot takes a range
// of columns: 32 x 32 output blocks, four C tiles and four operand tiles.
// A row of x holding NaN / Inf is computed in f32 from the weight itself (hi
// = Inf would make lo NaN); a weight holding NaN / Inf makes its column NaN
// (as the int16 products' weights do). The tile unit treats bf16 subnormals
// as zero: a term below 2^-126 in magnitude is dropped.
#if defined(LK_AMX_TILES) && (defined(__AMX_BF16__) || defined(LK_AMX_EMULATED)) && \
    !defined(LK_NO_AMX)
#define LK_AMX 1
enum { amx_tile = 1024, amx_pair = 2048 };  // (a tile's bytes; a hi and lo tile pair's)
// Column groups of 16, an even count (the product takes two at a time).
static inline int64_t amx_groups(int64_t N) { return (N + 31) / 32 * 2; }
static inline int64_t amx_kblocks(int64_t K) { return (K + 31) / 32; }
// Row blocks of 16, an even count: the x tiles' scratch and the pack launch's items.
static inline int64_t amx_row_blocks(int64_t M) { return (M + 31) / 32 * 2; }
static inline int64_t amx_x_bytes(int64_t M, int64_t K) {
  return amx_row_blocks(M) * amx_kblocks(K) * amx_pair + amx_row_blocks(M) * 16;
}
// v rounded to bf16 (nearest, ties to even; NaN stays a quiet NaN), with
// no branch, so that the loops below vectorise.
static inline uint16_t amx_bf16(float v) {
  const uint32_t u = bits(v);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40 : rounded);
}
// 32 floats (n of them read, the rest zero) as hi and lo; whether all are finite.
static inline bool amx_split32(const float* v, int64_t n, uint16_t* hi, uint16_t* lo) {
  float f[32];
  for (int t = 0; t < 32; ++t) f[t] = 0.0f;
  memcpy(f, v, (size_t)n * sizeof(float));
  uint32_t finite = 1;
  for (int t = 0; t < 32; ++t) {
    finite &= (bits(f[t]) & 0x7f800000u) != 0x7f800000u;
    hi[t] = amx_bf16(f[t]);
    lo[t] = amx_bf16(f[t] - from_bits((uint32_t)hi[t] << 16));  // (f - hi is exact in f32)
  }
  return finite != 0;
}
// Tile t of a pair: row r holds 32 consecutive K of one row (A, the row
// operand), or K pair r of 16 columns (B, the column operand: element 2c + e
// is column c's K 2r + e).
// Rows 16g .. 16g + 15 of src (rows of K contiguous floats, `stride` apart;
// rows past `rows` and K past K zero) as the column operand's tile pairs,
// every K block, at out + (g * KB + kb) * amx_pair: each row split (as the
// row operand's rows are), then the 16 x 16 bf16 pairs transposed. `bad`,
// where given, gets one byte per row: 1 where the row holds NaN / Inf.
static inline void amx_pack_columns(const float* src, int64_t stride, int64_t g, int64_t rows,
                                    int64_t K, uint8_t* out, uint8_t* bad) {
  const int64_t KB = amx_kblocks(K);
  uint32_t hi[16][16], lo[16][16];  // (row r's K pairs as 32-bit words)
  uint32_t finite[16];
  for (int r = 0; r < 16; ++r) finite[r] = 1;
  for (int64_t kb = 0; kb < KB; ++kb) {
    for (int r = 0; r < 16; ++r) {
      const int64_t i = g * 16 + r;
      const int64_t kn = i >= rows ? 0 : K - kb * 32 < 32 ? K - kb * 32 : 32;
      uint16_t h[32], l[32];
      finite[r] &= amx_split32(src + i * stride + kb * 32, kn, h, l) ? 1u : 0u;
      memcpy(hi[r], h, 64);
      memcpy(lo[r], l, 64);
    }
    uint32_t* th = (uint32_t*)(out + (g * KB + kb) * amx_pair);
    uint32_t* tl = th + amx_tile / 4;
    for (int p = 0; p < 16; ++p)
      for (int r = 0; r < 16; ++r) th[p * 16 + r] = hi[r][p], tl[p * 16 + r] = lo[r][p];
  }
  if (bad != nullptr)
    for (int r = 0; r < 16; ++r)
      if (g * 16 + r < rows) bad[g * 16 + r] = !finite[r];
}
// Group g of the weight (columns 16g .. 16g + 15), every K block: tile pairs
// at packed + (g * KB + kb) * amx_pair; columns past N are zero.
static inline void amx_pack_weight(const float* w, int64_t bn, int64_t g, int64_t N, int64_t K,
                                   uint8_t* packed) {
  amx_pack_columns(w, bn, g, N, K, packed, nullptr);
}
// Row block p of x (rows 16p .. 16p + 15), every K block, into xa: tile pairs
// at xa + (p * KB + kb) * amx_pair (rows past M zero); then, after all row
// blocks' tiles, one byte per row: 1 where the row holds NaN / Inf.
static inline void amx_pack_x(const float* x, int64_t am, int64_t p, int64_t M, int64_t K,
                              uint8_t* xa) {
  const int64_t KB = amx_kblocks(K);
  uint8_t* bad = xa + amx_row_blocks(M) * KB * amx_pair;
  for (int r = 0; r < 16; ++r) {
    const int64_t i = p * 16 + r;
    const float* xi = x + i * am;
    uint32_t finite = 1;
    for (int64_t kb = 0; kb < KB; ++kb) {
      uint16_t* hi = (uint16_t*)(xa + (p * KB + kb) * amx_pair) + r * 32;
      uint16_t* lo = hi + amx_tile / 2;
      if (i >= M) {
        memset(hi, 0, 64);
        memset(lo, 0, 64);
        continue;
      }
      const int64_t kn = K - kb * 32 < 32 ? K - kb * 32 : 32;
      finite &= amx_split32(xi + kb * 32, kn, hi, lo) ? 1u : 0u;
    }
    bad[i] = i < M && !finite;
  }
}
// C tiles 0..3 = bf16x3 products of two row-operand pairs (a, a + KB pairs:
// tiles 4, 5) by two column-operand pairs (b, b + KB pairs: tiles 6, 7)
// over KB blocks: C tile 2h + v += row h times column v, for hi hi, hi lo
// (the column's lo) and lo hi.
static inline void amx_tiles_bf16x3(const uint8_t* a, const uint8_t* b, int64_t KB) {
  const uint8_t* a1 = a + KB * amx_pair;
  const uint8_t* b1 = b + KB * amx_pair;
  LK_AMX_ZERO(0);
  LK_AMX_ZERO(1);
  LK_AMX_ZERO(2);
  LK_AMX_ZERO(3);
#define LK_AMX_DP4()    \
  do {                  \
    LK_AMX_DP(0, 4, 6); \
    LK_AMX_DP(1, 4, 7); \
    LK_AMX_DP(2, 5, 6); \
    LK_AMX_DP(3, 5, 7); \
  } while (0)
  // (per block eight tile loads for the twelve products: rows lo by columns
  // hi, rows hi by the same columns, then those rows by columns lo)
  for (int64_t kb = 0; kb < KB; ++kb) {
    const int64_t o = kb * amx_pair;
    LK_AMX_LOAD(4, a + o + amx_tile, 64);  // rows lo
    LK_AMX_LOAD(5, a1 + o + amx_tile, 64);
    LK_AMX_LOAD(6, b + o, 64);  // columns hi
    LK_AMX_LOAD(7, b1 + o, 64);
    LK_AMX_DP4();
    LK_AMX_LOAD(4, a + o, 64);  // rows hi
    LK_AMX_LOAD(5, a1 + o, 64);
    LK_AMX_DP4();
    LK_AMX_LOAD(6, b + o + amx_tile, 64);  // columns lo
    LK_AMX_LOAD(7, b1 + o + amx_tile, 64);
    LK_AMX_DP4();
  }
#undef LK_AMX_DP4
}
// C tile q (0..3) to dst, rows `stride` bytes apart (tile numbers are
// immediates of the instruction).
static inline void amx_store_tile(int q, float* dst, int64_t stride) {
  if (q == 0) LK_AMX_STORE(0, dst, stride);
  if (q == 1) LK_AMX_STORE(1, dst, stride);
  if (q == 2) LK_AMX_STORE(2, dst, stride);
  if (q == 3) LK_AMX_STORE(3, dst, stride);
}
// C tiles 0..3 of row blocks p, p + 1 and columns j .. j + 31 into c (rows
// of N; tile 2h + v: rows 16(p + h), columns j + 16v), nothing at or past row
// M or column j1: whole tiles straight to c, edge tiles through a buffer.
static inline void amx_store_block(float* c, int64_t M, int64_t N, int64_t p, int64_t j,
                                   int64_t j1) {
  alignas(64) float tmp[16 * 16];
  for (int q = 0; q < 4; ++q) {
    const int64_t i0 = (p + q / 2) * 16, jj = j + (q % 2) * 16;
    if (i0 >= M || jj >= j1) continue;
    const bool whole = i0 + 16 <= M && jj + 16 <= j1;
    float* dst = whole ? c + i0 * N + jj : tmp;
    const int64_t stride = whole ? N * 4 : 64;
    amx_store_tile(q, dst, stride);
    if (whole) continue;
    const int64_t rows = M - i0 < 16 ? M - i0 : 16, cols = j1 - jj < 16 ? j1 - jj : 16;
    for (int64_t r = 0; r < rows; ++r)
      memcpy(c + (i0 + r) * N + jj, tmp + r * 16, cols * sizeof(float));
  }
}
// Columns [j0, j1) (j0 a multiple of 16) of C[M, N] = X[M, K] @ W^T from the
// packed weight and x tiles, two column groups by two row blocks at a time
// (a group past j1 is computed and not stored), then the rows holding NaN /
// Inf again in f32 from W itself. Returns false where the process may not use
// the tiles (nothing is written then).
static inline bool amx_gemm(const float* x, int64_t am, const float* w, int64_t bn,
                            const uint8_t* packed, const uint8_t* xa, int64_t M, int64_t N,
                            int64_t K, float* c, int64_t j0, int64_t j1) {
  if (j1 <= j0) return true;
  if (!amx_begin(amx_config_bf16)) return false;
  const int64_t KB = amx_kblocks(K), MB = amx_row_blocks(M);
  for (int64_t j = j0; j < j1; j += 32) {
    for (int64_t p = 0; p < MB; p += 2) {
      amx_tiles_bf16x3(xa + p * KB * amx_pair, packed + (j / 16) * KB * amx_pair, KB);
      amx_store_block(c, M, N, p, j, j1);
    }
  }
  amx_end();
  const uint8_t* bad = xa + MB * KB * amx_pair;
  for (int64_t i = 0; i < M; ++i) {
    if (!bad[i]) continue;
    for (int64_t n = j0; n < j1; ++n) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += x[i * am + k] * w[n * bn + k];
      c[i * N + n] = s;
    }
  }
  return true;
}
// ---- a GGUF weight's product on the same tiles (CpuQMatMulAmx), bf16x3 as
// above. The weight is kept as the int16 products' copy (lk::qx8_pack_group,
// its GGUF pages released once copied), so that fewer than amx_qgemm_rows
// rows (a decode step, where tiles would be 1 / 16 full) take the int16
// product itself (lk::qgemm_i16_x8: its GEMV). From amx_qgemm_rows rows each
// pool slot decodes its columns from the copy on every call, 32 at a time for
// all of K, into its panel as the column operand's tile pairs (the layout of
// amx_pack_weight: hi and lo bf16 of d q + m), and multiplies x's tiles
// (lk::amx_pack_x, split by a launch) by them as CpuMatMulAmx does. Rows of x
// holding NaN / Inf are computed in f32 from the GGUF blocks (qi16_f32_row).
enum { amx_qgemm_rows = )LK" + std::to_string(kAmxQGemmMinRows) +
                                  R"LK( };
// A slot's weight panel: 32 columns by every K block.
static inline int64_t amx_qpanel_bytes(int64_t K) { return amx_kblocks(K) * 2 * amx_pair; }
// x's tiles (from amx_qgemm_rows rows), then each slot's part: its panel, or
// for fewer rows the int16 product's scratch.
static inline int64_t amx_qx_bytes(int64_t M, int64_t K) {
  return M >= amx_qgemm_rows ? amx_x_bytes(M, K) : 0;
}
static inline int64_t amx_qslot_bytes(int64_t M, int64_t K) {
  return M >= amx_qgemm_rows ? amx_qpanel_bytes(K) : qgemm_i16_scratch_bytes(M, K);
}
// Block kb of columns j .. j + 15 (j a multiple of 16, inside the copy) as a
// column-operand tile pair at out: each column's block put back together
// (qx8_block), decoded as decode_block does, then split and transposed.
template <class Q>
static inline void amx_qdecode_columns(const uint8_t* packed, int64_t blocks, int64_t j,
                                       int64_t kb, uint8_t* out) {
  float f[16 * 32];
  uint8_t blk[Q::bytes];
  for (int c = 0; c < 16; ++c) {
    qx8_block<Q>(packed, blocks, j + c, kb, blk);
    decode_block(Q(), blk, f + c * 32);
  }
  amx_pack_columns(f, 32, 0, 16, 32, out, nullptr);
}
#if defined(LK_QMM_VNNI)
typedef uint32_t amx_u16x __attribute__((vector_size(64)));
typedef short amx_h32x __attribute__((vector_size(64)));
// Two vectors of 16 floats (one K each, lane c: column c) as one tile row of
// bf16 pairs (lane c: a's bf16 in the low half, b's in the high), each
// rounded as amx_bf16 does (nearest even, NaN quiet): with AVX512-BF16 one
// vcvtne2ps2bf16 and one vpermw (its words are a's 16 then b's 16; that
// instruction also counts f32 subnormals as zero, as the tile unit counts
// bf16 ones), else in integer steps.
static inline amx_u16x amx_bf16_pairs(qi16f a, qi16f b) {
#if defined(__AVX512BF16__) && !defined(LK_AMX_EMULATED) && \
    __has_builtin(__builtin_ia32_cvtne2ps2bf16_v32hi)
  const amx_h32x h = (amx_h32x)__builtin_ia32_cvtne2ps2bf16_v32hi(b, a);
  return (amx_u16x)__builtin_shufflevector(h, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22,
                                           7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29,
                                           14, 30, 15, 31);
#else
  const amx_u16x u[2] = {(amx_u16x)a, (amx_u16x)b};
  amx_u16x r[2];
  for (int e = 0; e < 2; ++e) {
    const amx_u16x rounded = (u[e] + 0x7fffu + ((u[e] >> 16) & 1u)) >> 16;
    r[e] = (u[e] & 0x7fffffffu) > 0x7f800000u ? (u[e] >> 16) | 0x40u : rounded;
  }
  return r[0] | r[1] << 16;
#endif
}
// Q4_1's 16-column copy (qb16): lane c of every vector is column c, so each
// K pair of the tiles comes from one chunk with shifts and masks, 16 columns
// at once: pair kp < 8 (elements 2kp, 2kp + 1) is the low nibbles of bytes
// 2kp % 4 and 2kp % 4 + 1 of chunk kp / 2, pair kp >= 8 the high nibbles of
// pair kp - 8's bytes. Values as decode_block's (q d + m), split into hi and
// lo (the rest, w - hi, exact in f32).
template <>
inline void amx_qdecode_columns<q4_1_block>(const uint8_t* packed, int64_t blocks, int64_t j,
                                            int64_t kb, uint8_t* out) {
  const uint8_t* u = packed + (j / 16 * blocks + kb) * qb16_bytes;
  const qi16f d = qb16_halves(u + 256), m = qb16_halves(u + 288);
  for (int t = 0; t < 4; ++t) {
    const amx_u16x v = (amx_u16x)qi16loadi(u + t * 64);
    for (int k = 0; k < 4; ++k) {  // (k: byte pair k % 2, nibble k / 2)
      const int shift = 16 * (k % 2) + 4 * (k / 2), kp = 8 * (k / 2) + 2 * t + k % 2;
      const qi16f wa = __builtin_convertvector((qi16i)((v >> shift) & 15u), qi16f) * d + m;
      const qi16f wb = __builtin_convertvector((qi16i)((v >> (shift + 8)) & 15u), qi16f) * d + m;
      const amx_u16x hi = amx_bf16_pairs(wa, wb);
      const amx_u16x lo = amx_bf16_pairs(wa - (qi16f)(hi << 16), wb - (qi16f)(hi & 0xffff0000u));
      memcpy(out + kp * 64, &hi, 64);
      memcpy(out + amx_tile + kp * 64, &lo, 64);
    }
  }
}
#endif
// Columns [j0, j1) (j0 a multiple of 16) of C[M, N] = X[M, K] @ W^T (M >=
// amx_qgemm_rows), W as its copy `packed` and its GGUF blocks w (column j at
// w + j * col_bytes, read only for rows holding NaN / Inf), x's tiles in xa.
// False where the process may not use the tiles.
template <class Q, int64_t KC = 0, int64_t NC = 0>
bool amx_qgemm(const float* x, int64_t am, const uint8_t* w, int64_t col_bytes,
               const uint8_t* packed, const uint8_t* xa, int64_t M, int64_t N_arg,
               int64_t K_arg, float* c, int64_t j0, int64_t j1, uint8_t* panel) {
  const int64_t K = KC > 0 ? KC : K_arg;
  const int64_t N = NC > 0 ? NC : N_arg;
  if (j1 <= j0) return true;
  if (!amx_begin(amx_config_bf16)) return false;
  const int64_t KB = K / 32, MB = amx_row_blocks(M), copied = (N + 15) / 16 * 16;
  for (int64_t j = j0; j < j1; j += 32) {
    for (int h = 0; h < 2; ++h)
      for (int64_t kb = 0; kb < KB; ++kb) {
        uint8_t* out = panel + (h * KB + kb) * amx_pair;
        if (j + 16 * h < copied)
          amx_qdecode_columns<Q>(packed, KB, j + 16 * h, kb, out);
        else  // (the last pair's second group, past the copy)
          memset(out, 0, amx_pair);
      }
    for (int64_t p = 0; p < MB; p += 2) {
      amx_tiles_bf16x3(xa + p * KB * amx_pair, panel, KB);
      amx_store_block(c, M, N, p, j, j1);
    }
  }
  amx_end();
  const uint8_t* bad = xa + MB * KB * amx_pair;
  for (int64_t i = 0; i < M; ++i)
    if (bad[i]) qi16_f32_row<Q>(x + i * am, w, col_bytes, K, c + i * N, j0, j1);
  return true;
}
#endif
)LK";
  return part;
}

}  // namespace luminal::cpu
