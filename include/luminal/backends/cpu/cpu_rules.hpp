#pragma once
// The CPU backend's e-graph ops and rules (its extension of the core rules,
// SPEC section 5). Every op here is a kernel op (OpInfo::kernel_group): the
// extracted graph records its HLIR nodes as a Graph::KernelGroup, which
// CpuBackend compiles as that kernel.
//
//   CpuMatMul  a matrix product as one generated kernel (dot products in
//              registers; the Mul is never materialised)
//   CpuSgemm   a matrix product as a BLAS call (f32, row/column-major operands;
//              only when a BLAS library is available, see library_kernels.hpp)
//   CpuQMatMul a product with a GGUF block-quantized weight, dequantized inside
//              the kernel (library_kernels.hpp)
//   CpuQMatMulInt16  the same product with the activations rounded to 16-bit
//              integers per block of 32 and integer dot products (only at
//              MatmulPrecision::High, on hosts with AVX-512 VNNI or AVX2)
//   CpuMatMulInt16  an f32 product (weight rows of K contiguous floats, K a
//              multiple of 32) with both operands rounded to 14-bit integers
//              per block of 32 and integer dot products (same conditions)
//   CpuMatMulAmx  an f32 product (weight rows of K contiguous floats) on
//              Intel AMX tiles, each operand split into two bf16 and three
//              bf16 products summed in f32 (same precision condition; hosts
//              with AMX-BF16 whose OS grants the tiles)
//   CpuQMatMulAmx  a product with a GGUF weight the same way, the weight
//              decoded per call (same conditions)
//   CpuGatherDequant  a gather from a quantized table (embedding lookup),
//              decoding only the gathered elements (generated loops)
//   CpuSgemmEpilogue  an f32 BLAS product (batched or not) and the
//              element-wise body reading it (bias, activation, residual add, a
//              scale and mask on attention scores: a CpuFused body), the body
//              applied to each block of rows right after BLAS computed it
//              (phase "fuse"; library_kernels.hpp)

#include "luminal/compiler/matmul_precision.hpp"
#include "luminal/egraph/op_registry.hpp"

namespace luminal::egraph {
class RuleRegistry;
}

namespace luminal::cpu {

struct CpuOps {
  egraph::OpId matmul;
  egraph::OpId sgemm;
  egraph::OpId qmatmul;
  egraph::OpId qmatmul_int16;
  egraph::OpId matmul_int16;
  egraph::OpId matmul_amx;
  egraph::OpId qmatmul_amx;
  egraph::OpId gather_dequant;
  egraph::OpId sgemm_epilogue;
};

/// The CPU ops, registered on first use.
CpuOps cpu_ops();

/// Whether this host has AVX-512 with BW, VL and VNNI: the int16 products'
/// GEMMs then go through VNNI weight panels (vpdpwssd).
bool host_has_vnni_int16();
/// Whether this host runs the int16 products (CpuQMatMulInt16 for GGUF
/// weights, CpuMatMulInt16 for f32 ones) in vector code: the above, or AVX2
/// with FMA and F16C (vpmaddwd over the weight's interleaved copy); their
/// rules are added only then.
bool host_has_int16_products();

/// Whether this host has AMX-TILE and AMX-BF16 and the OS grants this process
/// the tile registers (CpuMatMulAmx's rule is added only then; LUMINAL_AMX=off
/// turns it off).
bool host_has_amx_bf16();

/// Add the CPU rulesets to their phases ("lower": cpu-kernels), those that
/// round more than f32 only where `precision` allows.
void add_cpu_rules(egraph::RuleRegistry& registry,
                   compiler::MatmulPrecision precision = compiler::MatmulPrecision::High);

}  // namespace luminal::cpu
