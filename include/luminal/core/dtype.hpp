#pragma once
// Element types. Plain types (f32 ... bool) are what ops compute on. fp8 and
// the GGUF block-quantized formats are storage types: a graph holds them as
// inputs and converts them with a dequantize expression (Cast for fp8; a
// block decode for Q8_0 / Q4_0 / Q4_1) that rules may fuse into kernels.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace luminal {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I32,
  I64,
  I8,
  U8,
  Bool,
  F8E4M3,  // fp8, 4 exponent bits, 3 mantissa bits, no infinities (OCP "e4m3fn")
  F8E5M2,  // fp8, 5 exponent bits, 2 mantissa bits (IEEE-like)
  Q8_0,    // GGUF: blocks of 32: f16 scale + 32 x int8
  Q4_0,    // GGUF: blocks of 32: f16 scale + 16 bytes of 4-bit values (offset 8)
  Q4_1,    // GGUF: blocks of 32: f16 scale + f16 min + 16 bytes of 4-bit values
};

/// Static facts about a dtype.
struct DTypeInfo {
  DType dtype;
  std::string_view name;  // canonical short name: "f32", "bf16", "q4_1", ...
  size_t block_elems;     // elements per storage block (1 for plain types)
  size_t block_bytes;     // bytes per storage block
  bool is_float;          // computes as a floating-point number
  bool is_int;            // integer (not bool)
  bool is_signed;
  bool is_quantized;  // block-quantized storage type
};

const DTypeInfo& dtype_info(DType dtype);
inline std::string_view dtype_name(DType dtype) {
  return dtype_info(dtype).name;
}
/// Parse a dtype name: luminal's short names ("f32") and numpy / torch names
/// ("float32", "float", "half", "bfloat16", "int64", "long", "bool", ...).
/// Throws DTypeError naming the unknown string.
DType parse_dtype(std::string_view name);

inline bool is_float(DType d) {
  return dtype_info(d).is_float;
}
inline bool is_int(DType d) {
  return dtype_info(d).is_int;
}
inline bool is_quantized(DType d) {
  return dtype_info(d).is_quantized;
}
/// A type ops can compute on (every type except fp8 and block-quantized ones).
bool is_compute_type(DType d);
/// Bytes of one element; throws DTypeError for block-quantized types.
size_t element_size(DType d);
/// Bytes needed to store `n` elements (n must be a multiple of the block size
/// for quantized types; throws DTypeError otherwise).
size_t storage_bytes(DType d, int64_t n);

/// All dtypes, in enum order (for tests and tables).
const DType* all_dtypes_begin();
const DType* all_dtypes_end();

std::string to_string(DType d);

}  // namespace luminal
