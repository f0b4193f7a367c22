#pragma once
// Parts of the CPU kernel prelude (codegen.hpp's kernel_prelude() joins them):
// one file per kernel family so that each can change on its own.

#include <string>

namespace luminal::cpu {

/// The quantized GEMV/GEMMs (lk::qmatmul and lk::qgemm, CpuQMatMul;
/// lk::qgemm_i16, CpuQMatMulInt16), inside namespace lk.
const std::string& kernel_prelude_quantized();
/// The AMX tile registers (configuration, LK_AMX_* macros, emulation), before
/// the quantized part.
const std::string& kernel_prelude_amx_tiles();
/// The AMX bf16x3 product (lk::amx_gemm, CpuMatMulAmx), inside namespace lk.
const std::string& kernel_prelude_amx();

}  // namespace luminal::cpu
