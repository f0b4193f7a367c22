#pragma once
// ggml tensor types (the `type` field of a GGUF tensor) and reference
// dequantization.
//
// Block-quantized types store `block_elems` consecutive elements of the
// innermost (fastest-varying) axis in `block_bytes` bytes. The dequantize
// functions follow ggml's reference layouts bit for bit (float32 arithmetic,
// the same operation order), e.g. for the 32-element types:
//   Q8_0: f16 d, 32 x int8 q                    -> q * d
//   Q4_0: f16 d, 16 bytes of nibbles            -> (nibble - 8) * d
//   Q4_1: f16 d, f16 m, 16 bytes of nibbles     -> nibble * d + m
// where byte j's low nibble is element j and its high nibble element j + 16.
// They are the oracle for kernels that decode these formats and the fallback
// for loaders that need f32 weights.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "luminal/core/dtype.hpp"

namespace luminal {

/// ggml type ids as stored in GGUF files (ids 4, 5 and 31-33 were removed from ggml).
enum class GGMLType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GGMLTypeInfo {
  GGMLType type;
  std::string_view name;       // ggml's name: "Q4_K", "F16", ...
  size_t block_elems;          // 1 for plain element types
  size_t block_bytes;          // bytes per block (per element for plain types)
  std::optional<DType> dtype;  // luminal dtype holding the same bytes, if one exists
  bool dequantizable;          // dequantize() supports it
};

/// Facts about a known type; nullptr for an id ggml does not define (or removed).
const GGMLTypeInfo* find_ggml_type(uint32_t id);
/// Facts about a type (the enum only holds known ids).
const GGMLTypeInfo& ggml_type_info(GGMLType type);
inline std::string_view ggml_type_name(GGMLType type) {
  return ggml_type_info(type).name;
}
/// ggml type with the same storage as a luminal dtype (F32, F16, BF16, F64, I8,
/// I32, I64, Q8_0, Q4_0, Q4_1); nullopt for the others (U8, Bool, fp8).
std::optional<GGMLType> ggml_type_for(DType dtype);

/// Every type dequantize() supports: F32, F16, BF16, F64, Q4_0, Q4_1, Q5_0,
/// Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL.
std::vector<GGMLType> dequantizable_ggml_types();

/// Decode whole blocks: `src` must hold a multiple of block_bytes and `dst`
/// exactly block_elems floats per block. Throws DTypeError for a type
/// dequantize does not support and ShapeError for mismatched sizes.
void dequantize(GGMLType type, std::span<const std::byte> src, std::span<float> dst);
/// Decode whole blocks into a new vector.
std::vector<float> dequantize(GGMLType type, std::span<const std::byte> src);

}  // namespace luminal
