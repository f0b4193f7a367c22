#pragma once
// How f32 matrix products may be computed: the compiler's counterpart of
// torch.set_float32_matmul_precision. A compile option (CompileOptions::
// matmul_precision, part of the cache key) that backends read when they add
// their rules: a rule whose kernel rounds more than f32 arithmetic does is
// only added where the precision allows it, and the search then picks among
// the alternatives by time as usual.

#include <string>
#include <string_view>

namespace luminal::compiler {

enum class MatmulPrecision {
  /// Every product in f32 arithmetic (the interpreter's values up to the
  /// order of the sums).
  Highest,
  /// Products with a block-quantized weight (GGUF Q8_0 / Q4_0 / Q4_1) may
  /// round their f32 activations to 16-bit integers per block of 32 (at most
  /// 2^-16 of the block's largest magnitude per element; the weights are exact
  /// small integers already) and use integer dot products (AVX-512 VNNI on
  /// the CPU): about twice the multiply throughput of f32. Products of f32
  /// weights (K a multiple of 32) may round both operands to 14-bit integers
  /// per block of 32 (at most 2^-14 of the block's largest magnitude per
  /// element; TF32, which torch's "high" allows, rounds to 2^-11 of each
  /// element), so that a block's 32 products sum exactly in int32.
  High,
};

/// "highest" / "high".
std::string_view to_string(MatmulPrecision precision);
/// Parses "highest" / "high"; throws luminal::Error naming the accepted values.
MatmulPrecision parse_matmul_precision(std::string_view text);
/// The default of CompileOptions::matmul_precision: $LUMINAL_MATMUL_PRECISION
/// when set ("highest" / "high"; anything else throws luminal::Error naming
/// the variable), else High. Read whenever options are made, so a process
/// (a test suite) can choose its default, as torch.set_float32_matmul_precision.
MatmulPrecision default_matmul_precision();

}  // namespace luminal::compiler
