#include "luminal/core/dtype.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "luminal/error.hpp"

namespace luminal {
namespace {

// Indexed by the enum value; the static_asserts below keep the order honest.
constexpr std::array<DTypeInfo, 14> kInfos = {{
    // dtype, name, block_elems, block_bytes, is_float, is_int, is_signed, is_quantized
    {DType::F32, "f32", 1, 4, true, false, true, false},
    {DType::F16, "f16", 1, 2, true, false, true, false},
    {DType::BF16, "bf16", 1, 2, true, false, true, false},
    {DType::F64, "f64", 1, 8, true, false, true, false},
    {DType::I32, "i32", 1, 4, false, true, true, false},
    {DType::I64, "i64", 1, 8, false, true, true, false},
    {DType::I8, "i8", 1, 1, false, true, true, false},
    {DType::U8, "u8", 1, 1, false, true, false, false},
    {DType::Bool, "bool", 1, 1, false, false, false, false},
    {DType::F8E4M3, "f8e4m3", 1, 1, true, false, true, false},
    {DType::F8E5M2, "f8e5m2", 1, 1, true, false, true, false},
    // GGUF block layouts: Q8_0 = f16 scale + 32 int8; Q4_0 = f16 scale + 16 bytes of nibbles;
    // Q4_1 = f16 scale + f16 min + 16 bytes of nibbles. They decode to floats, hence is_float.
    {DType::Q8_0, "q8_0", 32, 34, true, false, true, true},
    {DType::Q4_0, "q4_0", 32, 18, true, false, true, true},
    {DType::Q4_1, "q4_1", 32, 20, true, false, true, true},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kInfos.size(); ++i) {
    if (static_cast<size_t>(kInfos[i].dtype) != i) return false;
  }
  return true;
}
static_assert(table_in_enum_order(), "kInfos must list dtypes in enum order");
static_assert(static_cast<size_t>(DType::Q4_1) + 1 == kInfos.size(), "a dtype is missing");

constexpr std::array<DType, kInfos.size()> kAllDTypes = [] {
  std::array<DType, kInfos.size()> all{};
  for (size_t i = 0; i < kInfos.size(); ++i) all[i] = kInfos[i].dtype;
  return all;
}();

// numpy / torch spellings accepted in addition to the canonical short names.
constexpr std::array<std::pair<std::string_view, DType>, 19> kAliases = {{
    {"float32", DType::F32},
    {"float", DType::F32},
    {"float16", DType::F16},
    {"half", DType::F16},
    {"bfloat16", DType::BF16},
    {"float64", DType::F64},
    {"double", DType::F64},
    {"int32", DType::I32},
    {"int", DType::I32},
    {"int64", DType::I64},
    {"long", DType::I64},
    {"int8", DType::I8},
    {"uint8", DType::U8},
    {"float8_e4m3fn", DType::F8E4M3},
    {"float8_e5m2", DType::F8E5M2},
    // numpy spells its bool scalar type "bool_"; GGUF tools sometimes write upper-case names.
    {"bool_", DType::Bool},
    {"Q8_0", DType::Q8_0},
    {"Q4_0", DType::Q4_0},
    {"Q4_1", DType::Q4_1},
}};

std::string valid_names() {
  std::string out;
  for (const DTypeInfo& info : kInfos) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  for (const auto& alias : kAliases) {
    out += ", ";
    out += alias.first;
  }
  out += " (numpy/torch names may carry a \"torch.\" prefix)";
  return out;
}

}  // namespace

const DTypeInfo& dtype_info(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  if (index >= kInfos.size()) {
    // Only reachable through a cast of a bad integer to DType; still a user error, not a crash.
    throw DTypeError("invalid dtype value " + std::to_string(index));
  }
  return kInfos[index];
}

DType parse_dtype(std::string_view name) {
  std::string_view key = name;
  constexpr std::string_view kTorchPrefix = "torch.";
  if (key.starts_with(kTorchPrefix)) key.remove_prefix(kTorchPrefix.size());
  for (const DTypeInfo& info : kInfos) {
    if (key == info.name) return info.dtype;
  }
  for (const auto& alias : kAliases) {
    if (key == alias.first) return alias.second;
  }
  throw DTypeError("unknown dtype '" + std::string(name) + "'; valid names: " + valid_names());
}

bool is_compute_type(DType d) {
  return !is_quantized(d) && d != DType::F8E4M3 && d != DType::F8E5M2;
}

size_t element_size(DType d) {
  const DTypeInfo& info = dtype_info(d);
  if (info.is_quantized) {
    throw DTypeError(std::string(info.name) +
                     " is a block-quantized storage type with no per-element size; use "
                     "storage_bytes");
  }
  return info.block_bytes;
}

size_t storage_bytes(DType d, int64_t n) {
  const DTypeInfo& info = dtype_info(d);
  if (n < 0) {
    throw ShapeError("cannot store a negative number of elements (" + std::to_string(n) + ") of " +
                     std::string(info.name));
  }
  const auto count = static_cast<size_t>(n);
  if (count % info.block_elems != 0) {
    throw DTypeError(std::string(info.name) + " stores elements in blocks of " +
                     std::to_string(info.block_elems) + "; " + std::to_string(n) +
                     " elements is not a multiple of the block size");
  }
  const size_t blocks = count / info.block_elems;
  if (blocks > SIZE_MAX / info.block_bytes) {
    throw ShapeError(std::to_string(n) + " elements of " + std::string(info.name) +
                     " do not fit in memory");
  }
  return blocks * info.block_bytes;
}

const DType* all_dtypes_begin() {
  return kAllDTypes.data();
}
const DType* all_dtypes_end() {
  return kAllDTypes.data() + kAllDTypes.size();
}

std::string to_string(DType d) {
  return std::string(dtype_name(d));
}

}  // namespace luminal
