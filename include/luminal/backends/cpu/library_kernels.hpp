#pragma once
// Library kernels of the CPU backend: kernel groups (graph.hpp) that the
// e-graph chose to run as a call into a library instead of generated loops.
//
// BLAS. OpenBLAS is loaded at run time (dlopen of libopenblas.so.0 / libopenblas.so,
// or $LUMINAL_BLAS_LIBRARY): luminal neither links nor requires it, and without
// it the CPU backend simply does not offer the BLAS alternatives (the rules are
// not registered), so every program still compiles and runs. Its threads are
// set to the shared ThreadPool's size and a BLAS kernel is launched as one
// piece, so BLAS threads and luminal's never run at the same time.
//
// A BLAS kernel is still a generated C++ kernel (same ABI, same JIT and cache):
// its code computes the per-batch operand offsets from the dims and calls
// cblas_sgemm through a function pointer passed in the buffer array
// (CpuKernel::host_pointers). Shapes BLAS cannot express at run time (a
// leading dimension smaller than the matrix, sizes beyond int) take a plain
// loop in the same kernel.

#include <cstdint>
#include <optional>
#include <string>

#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/backends/cpu/region.hpp"
#include "luminal/core/graph.hpp"

namespace luminal::cpu {

/// The run-time loaded BLAS, or nullptr when none could be loaded.
struct Blas {
  using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const float* a, int lda, const float* b, int ldb, float beta, float* c,
                         int ldc);
  Sgemm sgemm = nullptr;
  /// openblas_set_num_threads (nullptr if the library has none).
  void (*set_threads)(int) = nullptr;
  std::string library;  // the file that was loaded
  /// OpenBLAS's kernel set (openblas_get_corename: "SkylakeX", "Haswell", ...),
  /// empty for another BLAS.
  std::string core;
  /// True when luminal chose `core` (see openblas_core_for_host), false when
  /// OpenBLAS's own detection or the user's OPENBLAS_CORETYPE did.
  bool core_chosen_by_luminal = false;
  /// Loaded once per process (thread-safe).
  static const Blas* get();
};

/// What the host's vector units can run, for choosing OpenBLAS's kernels.
struct HostVectorIsa {
  bool avx2_fma = false;  // AVX2 and FMA
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL (OpenBLAS's SkylakeX kernels)
  static HostVectorIsa detect();
};

/// The kernel set luminal makes OpenBLAS load (through OPENBLAS_CORETYPE)
/// instead of `detected`, or "" to keep it. OpenBLAS picks its kernels from a
/// table of CPU models, and a model its version does not know gets a generic
/// fallback: Debian 12's OpenBLAS 0.3.21 runs Intel's family 6 model 207
/// (Emerald Rapids, AVX-512) on its SSE3 "Prescott" kernels, sgemm at 63
/// GFLOP/s on two threads where its SkylakeX kernels reach 300. Only a
/// detected set without AVX2 kernels on a host with AVX2 + FMA is replaced
/// ("SkylakeX" with AVX-512, else "Haswell"); a known core is OpenBLAS's own
/// choice and stays.
std::string openblas_core_for_host(const std::string& detected, HostVectorIsa host);

/// The kernel of a "CpuSgemm" group (a Mul and the SumReduce of a matrix
/// product, as egraph::lower_matmul builds them): the matrix product is
/// recognised again from the members' operand views (so the group stays right
/// whatever happened to node ids and views since extraction). nullopt when the
/// members are not an f32 matrix product with row- or column-major operands or
/// BLAS is not available; the caller then generates the region's loops. A
/// product without batch and with fewer than 8 rows (a decode step) is the
/// kernel's own GEMV on the pool instead: OpenBLAS 0.3's sgemm takes
/// milliseconds for a single row.
std::optional<CpuKernel> generate_sgemm_kernel(const Graph& graph, const Region& region,
                                               const std::string& name);

/// The kernel of a "CpuQMatMul" group: x @ dequantize(W)^T with W GGUF
/// block-quantized (Q8_0 / Q4_0 / Q4_1) rows of K contiguous elements (a
/// Linear layer's weight [N, K]); the members are the Cast (dequantization),
/// the Mul and the SumReduce. Each weight block is decoded once per call and
/// used for every row of x: the dequantised weights never exist in memory.
/// Fewer than 16 rows (decode): GEMV tiles in registers, parallel over N. From
/// 16 rows on (prefill): each pool thread decodes panels of its weight columns
/// into an L2-sized scratch slot (768 KB per thread) and multiplies them with
/// single-threaded OpenBLAS sgemm (lk::qgemm); OpenBLAS is set to one thread
/// around that launch. nullopt when the members do not have that form (the
/// caller then generates the region's loops, still one fused kernel).
///
/// QMatMulArithmetic::Int16 ("CpuQMatMulInt16"): the first launch copies W
/// once into an interleaved layout (eight columns per block, the same bytes
/// rearranged; Q4_1 with VNNI: 16 columns of four-byte lanes for vpdpbusd;
/// CpuKernel::packed_bytes, re-packed only when W changes), and
/// the program may then release W's pages when they are a read-only file
/// mapping (CpuKernel::packed_replaces_input). Each pool thread rounds every
/// row of x to int16 per block of 32 (scale amax / 32767; Q4_1 amax / 32639,
/// so that each x is two signed bytes for the VNNI GEMV) and, from 8 rows on
/// with AVX-512 VNNI, multiplies it with panels of its weight columns in VNNI
/// layout built from the copy; fewer rows (decode), and every row count on
/// AVX2 hosts (vpmaddwd), take a GEMV over the copy, eight columns per int32
/// vector (lk::qgemm_i16_x8; Q4_1 with VNNI 16 per vpdpbusd, lk::qb16_gemv). Both sum each block
/// exactly in int32 and scale it into f32 with the same operations in the same order (a portable
/// version of the same arithmetic elsewhere): a row's result does not depend on the row count.
/// Error per element at most amax_block / (2 x_max) on x; a row holding NaN / Inf is computed in
/// f32 from the GGUF blocks. No BLAS needed.
///
/// With Int16 the weight may also be plain f32 ("CpuMatMulInt16": members the
/// Mul and the SumReduce only, W rows of K contiguous floats, K a multiple of
/// 32): its first launch packs W once, each 32-element block rounded to
/// 14-bit integers with its own scale (error at most amax_block / 16382 per
/// weight; a block holding NaN / Inf makes its column NaN), into memory the
/// program keeps between runs and re-packs only when W changes
/// (CpuKernel::packed_bytes): with VNNI into the GEMM's units (2.25 bytes per
/// weight), on AVX2 hosts into the interleaved layout above with int16 pairs
/// and f32 scales (2.125 bytes per weight), read by the same GEMV tiles. x is
/// rounded to 14 bits likewise, so that a block's 32 products sum exactly in
/// int32. Every row count takes lk::qgemm_i16_packed (a decode step's GEMV
/// reads ~55% of the f32 bytes).
///
/// QMatMulArithmetic::Amx ("CpuQMatMulAmx", hosts with AMX-BF16): the weight
/// kept as the Int16 kernel's copy (its GGUF pages released), fewer than
/// kAmxQGemmMinRows rows (a decode step) through the Int16 kernel's product
/// itself, from kAmxQGemmMinRows rows the product of CpuMatMulAmx (bf16x3 on
/// AMX tiles), each pool slot decoding its columns from the copy on every
/// call into its L2-sized panel as the tiles' column operand (d q + m, split
/// into two bf16), x the row operand (split into tiles by a launch).
enum class QMatMulArithmetic { F32, Int16, Amx };
/// The row count from which the Int16 kernel takes the GEMM through weight
/// panels (the prelude's qi16_gemm_rows; fewer take the GEMV).
inline constexpr int64_t kQGemmInt16MinRows = 8;
// CpuQMatMulAmx's row count from which it takes the AMX tiles (fewer: the
// int16 product over the same copy of the weight; the prelude's amx_qgemm_rows).
inline constexpr int64_t kAmxQGemmMinRows = 16;
std::optional<CpuKernel> generate_qmatmul_kernel(
    const Graph& graph, const Region& region, const std::string& name,
    QMatMulArithmetic arithmetic = QMatMulArithmetic::F32);

/// The kernel of a "CpuMatMulAmx" group (cpu_rules.hpp): an f32 product
/// (members the Mul and the SumReduce; W rows of K contiguous floats, x rows
/// contiguous, no batch) on Intel AMX tiles, each operand split into two bf16
/// (hi + lo) and three bf16 products summed in f32 (lk::amx_gemm; error about
/// 2^-16 of each term, MatmulPrecision::High). The first launch packs W once
/// into tiles (4 bytes per weight, CpuKernel::packed_bytes, re-packed only
/// when W changes), the second splits x into tiles in the scratch (row
/// blocks across the pool), the third multiplies (column ranges across the
/// pool). Rows of x holding NaN / Inf are computed in f32. Only generated
/// where the prelude has the tiles (host_has_amx_bf16); nullopt when the
/// members do not have that form.
std::optional<CpuKernel> generate_amx_matmul_kernel(const Graph& graph, const Region& region,
                                                    const std::string& name);

/// The kernel of a "CpuSgemmEpilogue" group (cpu_rules.hpp): the Mul and
/// SumReduce of an f32 matrix product (batched or not, row- or column-major
/// operands) and element-wise members reading it in its flat order (bias,
/// activation, residual add). Each pool thread takes a range of the product's
/// rows (all batches' rows in turn) and, block by block (~1 MiB of the
/// product, never across a batch), calls a
/// single-threaded BLAS sgemm into a scratch buffer and runs the members'
/// generated loops (generate_kernel of the members alone) over that block while
/// it is still in cache. OpenBLAS is set to one thread for the call and back
/// after. nullopt when the members do not have that form (the caller then
/// generates the region's loops).
std::optional<CpuKernel> generate_sgemm_epilogue_kernel(const Graph& graph, const Region& region,
                                                        const std::string& name);

}  // namespace luminal::cpu
