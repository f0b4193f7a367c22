#include "luminal/core/tensor_data.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"

namespace luminal {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += "]";
  return out;
}

int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t dim = shape[i];
    if (dim < 0) {
      throw ShapeError("tensor dimension " + std::to_string(i) + " of shape " +
                       shape_string(shape) + " is negative");
    }
    if (dim != 0 && numel > std::numeric_limits<int64_t>::max() / dim) {
      throw ShapeError("tensor shape " + shape_string(shape) + " has too many elements");
    }
    numel *= dim;
  }
  return numel;
}

// double -> float rounding to odd: truncate toward zero and, when that was inexact, force the
// lowest fraction bit to 1. Rounding the result to nearest-even in any format with at least two
// fewer significant bits (f16, bf16, fp8 all qualify, subnormals included) then gives exactly the
// correctly rounded double. Plain double -> float -> narrow RNE would not: 1 + 2^-11 + 2^-40 would
// become the f16 tie 1 + 2^-11 and round down instead of up.
float double_to_float_odd(double value) {
  if (!std::isfinite(value)) return double_to_float(value);
  constexpr float kMax = std::numeric_limits<float>::max();
  // Beyond FLT_MAX truncation gives FLT_MAX, whose last bit is already odd.
  if (std::fabs(value) > static_cast<double>(kMax)) return std::signbit(value) ? -kMax : kMax;
  float f = static_cast<float>(value);
  if (static_cast<double>(f) == value) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(value)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// int64 -> double rounding to odd (see above), for narrowing integers into f16 / bf16 / fp8 without
// a double-rounding error on values beyond 2^53.
double int_to_double_odd(int64_t value) {
  const bool negative = value < 0;
  // Magnitude as unsigned: well defined for INT64_MIN too.
  uint64_t mag = static_cast<uint64_t>(value);
  if (negative) mag = uint64_t{0} - mag;
  const int excess = static_cast<int>(std::bit_width(mag)) - 53;
  if (excess > 0) {
    const uint64_t dropped = mag & ((uint64_t{1} << excess) - 1);
    mag -= dropped;
    if (dropped != 0) mag |= uint64_t{1} << excess;
  }
  const auto d = static_cast<double>(mag);  // exact: at most 53 significant bits
  return negative ? -d : d;
}

std::string quantized_message(DType dtype) {
  return std::string(dtype_name(dtype)) + " is a block-quantized storage type; dequantize it first";
}

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
void store(std::byte* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

}  // namespace

int64_t saturating_float_to_int(double value, DType int_dtype) {
  // Bool is accepted as an "integer" target for convenience; its Cast rule is x != 0, so NaN and
  // -0.0 follow C/PyTorch (true and false respectively).
  if (int_dtype == DType::Bool) return value != 0.0 ? 1 : 0;
  if (!is_int(int_dtype)) {
    throw DTypeError("saturating_float_to_int needs an integer dtype, got " + to_string(int_dtype));
  }
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  switch (int_dtype) {
    case DType::I64: {
      // 2^63 is exactly representable; INT64_MAX is not, so compare against 2^63.
      constexpr double kTwo63 = 9223372036854775808.0;
      if (truncated >= kTwo63) return std::numeric_limits<int64_t>::max();
      if (truncated < -kTwo63) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(truncated);
    }
    case DType::I32:
    case DType::I8:
    case DType::U8: {
      int64_t lo = 0;
      int64_t hi = 0;
      if (int_dtype == DType::I32) {
        lo = std::numeric_limits<int32_t>::min();
        hi = std::numeric_limits<int32_t>::max();
      } else if (int_dtype == DType::I8) {
        lo = std::numeric_limits<int8_t>::min();
        hi = std::numeric_limits<int8_t>::max();
      } else {
        lo = 0;
        hi = std::numeric_limits<uint8_t>::max();
      }
      // The bounds are exact in double, so clamping before the cast keeps the cast defined.
      if (truncated <= static_cast<double>(lo)) return lo;
      if (truncated >= static_cast<double>(hi)) return hi;
      return static_cast<int64_t>(truncated);
    }
    default:
      break;
  }
  throw DTypeError("saturating_float_to_int: unsupported dtype " + to_string(int_dtype));
}

int64_t wrap_int(int64_t value, DType int_dtype) {
  // Conversions to narrower signed types are modular since C++20, which is exactly two's
  // complement wrapping.
  switch (int_dtype) {
    case DType::I64:
      return value;
    case DType::I32:
      return static_cast<int32_t>(value);
    case DType::I8:
      return static_cast<int8_t>(value);
    case DType::U8:
      return static_cast<uint8_t>(value);
    case DType::Bool:
      return value != 0 ? 1 : 0;  // Cast to bool is x != 0, not a wrap to the low bit
    default:
      break;
  }
  throw DTypeError("wrap_int needs an integer dtype, got " + to_string(int_dtype));
}

double round_to_float_dtype(double value, DType float_dtype) {
  switch (float_dtype) {
    case DType::F64:
      return value;
    case DType::F32:
      return double_to_float(value);
    // The narrow formats go through a round-to-odd float, so the result is the correctly
    // rounded double (no double-rounding error).
    case DType::F16:
      return f16_bits_to_float(float_to_f16_bits(double_to_float_odd(value)));
    case DType::BF16:
      return bf16_bits_to_float(float_to_bf16_bits(double_to_float_odd(value)));
    case DType::F8E4M3:
      return f8e4m3_bits_to_float(float_to_f8e4m3_bits(double_to_float_odd(value)));
    case DType::F8E5M2:
      return f8e5m2_bits_to_float(float_to_f8e5m2_bits(double_to_float_odd(value)));
    default:
      break;
  }
  throw DTypeError("round_to_float_dtype needs a plain float dtype, got " + to_string(float_dtype));
}

TensorData::TensorData(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(checked_numel(shape_)) {
  // storage_bytes rejects element counts that are not whole quantization blocks.
  bytes_.assign(storage_bytes(dtype_, numel_), std::byte{0});
}

TensorData TensorData::borrow(DType dtype, std::vector<int64_t> shape, std::byte* data,
                              std::shared_ptr<const void> owner) {
  TensorData t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = checked_numel(t.shape_);
  t.external_size_ = storage_bytes(dtype, t.numel_);
  if (data == nullptr && t.external_size_ > 0) throw Error("TensorData::borrow: null data");
  t.bytes_.clear();
  t.bytes_.shrink_to_fit();
  t.external_ = data;
  t.owner_ = std::move(owner);
  return t;
}

TensorData TensorData::borrow_file_mapping(DType dtype, std::vector<int64_t> shape,
                                           const std::byte* data,
                                           std::shared_ptr<const void> owner) {
  // (programs never write their weight inputs; the mapping is read-only)
  TensorData t = borrow(dtype, std::move(shape), const_cast<std::byte*>(data), std::move(owner));
  t.reloadable_ = true;
  return t;
}

size_t TensorData::release_pages() const {
  if (!reloadable_ || external_ == nullptr) return 0;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const auto page = static_cast<uintptr_t>(page_size > 0 ? page_size : 4096);
  const auto data = reinterpret_cast<uintptr_t>(external_);
  // Whole pages only: the ones at the ends may hold a neighbour's bytes.
  const uintptr_t begin = (data + page - 1) & ~(page - 1);
  const uintptr_t end = (data + external_size_) & ~(page - 1);
  if (end <= begin) return 0;
  // MADV_DONTNEED on a private read-only file mapping discards nothing that
  // cannot be read again: the pages come back from the file when touched.
  if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) != 0) return 0;
  return end - begin;
}

TensorData::TensorData(const TensorData& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      numel_(other.numel_),
      bytes_(other.data(), other.data() + other.nbytes()) {}

TensorData& TensorData::operator=(const TensorData& other) {
  if (this != &other) *this = TensorData(other);
  return *this;
}

TensorData::TensorData(TensorData&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      numel_(other.numel_),
      bytes_(std::move(other.bytes_)),
      external_(std::exchange(other.external_, nullptr)),
      external_size_(std::exchange(other.external_size_, 0)),
      owner_(std::move(other.owner_)),
      reloadable_(std::exchange(other.reloadable_, false)) {}

TensorData& TensorData::operator=(TensorData&& other) noexcept {
  dtype_ = other.dtype_;
  shape_ = std::move(other.shape_);
  numel_ = other.numel_;
  bytes_ = std::move(other.bytes_);
  external_ = std::exchange(other.external_, nullptr);
  external_size_ = std::exchange(other.external_size_, 0);
  owner_ = std::move(other.owner_);
  reloadable_ = std::exchange(other.reloadable_, false);
  return *this;
}

TensorData TensorData::from_doubles(DType dtype, std::vector<int64_t> shape,
                                    const std::vector<double>& values) {
  TensorData t(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel_) {
    throw ShapeError("from_doubles: shape " + shape_string(t.shape_) + " has " +
                     std::to_string(t.numel_) + " elements but " + std::to_string(values.size()) +
                     " values were given");
  }
  for (int64_t i = 0; i < t.numel_; ++i) t.set(i, values[static_cast<size_t>(i)]);
  return t;
}

TensorData TensorData::from_ints(DType dtype, std::vector<int64_t> shape,
                                 const std::vector<int64_t>& values) {
  TensorData t(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel_) {
    throw ShapeError("from_ints: shape " + shape_string(t.shape_) + " has " +
                     std::to_string(t.numel_) + " elements but " + std::to_string(values.size()) +
                     " values were given");
  }
  for (int64_t i = 0; i < t.numel_; ++i) t.set_int(i, values[static_cast<size_t>(i)]);
  return t;
}

TensorData TensorData::full(DType dtype, std::vector<int64_t> shape, double value) {
  TensorData t(dtype, std::move(shape));
  if (t.numel_ == 0) return t;
  // Encode once, then replicate the element's bytes.
  t.set(0, value);
  const size_t size = element_size(dtype);
  for (size_t offset = size; offset < t.nbytes(); offset += size) {
    std::memcpy(t.data() + offset, t.data(), size);
  }
  return t;
}

namespace {

// Element j of one block (ggml's arithmetic, in float), for dequantize_element
// and dequantize_elements alike: the same expression, the same rounding.
inline float decode_in_block(DType dtype, const std::byte* block, size_t j) {
  auto f16_at = [&](size_t off) {
    uint16_t bits;
    std::memcpy(&bits, block + off, 2);
    return f16_bits_to_float(bits);
  };
  auto nibble = [&](size_t qs) {
    const auto byte = static_cast<uint8_t>(block[qs + j % 16]);
    return static_cast<float>(j < 16 ? byte & 0x0F : byte >> 4);
  };
  switch (dtype) {
    case DType::Q8_0:
      return static_cast<float>(static_cast<int8_t>(block[2 + j])) * f16_at(0);
    case DType::Q4_0:
      return (nibble(2) - 8.0f) * f16_at(0);
    case DType::Q4_1: {
      const float scaled = nibble(4) * f16_at(0);
      return scaled + f16_at(2);
    }
    default:
      throw DTypeError("dequantize_element: " + std::string(dtype_name(dtype)) +
                       " is not a block-quantized type");
  }
}

}  // namespace

float dequantize_element(DType dtype, const std::byte* data, int64_t i) {
  const DTypeInfo& info = dtype_info(dtype);
  if (!is_quantized(dtype))
    throw DTypeError("dequantize_element: " + std::string(dtype_name(dtype)) +
                     " is not a block-quantized type");
  return decode_in_block(dtype, data + static_cast<size_t>(i / 32) * info.block_bytes,
                         static_cast<size_t>(i % 32));
}

void dequantize_elements(DType dtype, const std::byte* data, int64_t first, int64_t count,
                         float* out) {
  if (!is_quantized(dtype))
    throw DTypeError("dequantize_elements: " + std::string(dtype_name(dtype)) +
                     " is not a block-quantized type");
  const size_t block_bytes = dtype_info(dtype).block_bytes;
  for (int64_t i = first; i < first + count;) {
    const std::byte* block = data + static_cast<size_t>(i / 32) * block_bytes;
    const int64_t end = std::min(first + count, (i / 32 + 1) * 32);
    for (; i < end; ++i) *out++ = decode_in_block(dtype, block, static_cast<size_t>(i % 32));
  }
}

namespace {

void check_index(const TensorData& t, int64_t flat) {
  if (flat < 0 || flat >= t.numel()) {
    throw IndexError("index " + std::to_string(flat) + " is out of range for " + t.describe() +
                     " with " + std::to_string(t.numel()) + " elements");
  }
}

void check_access(const TensorData& t, int64_t flat) {
  if (is_quantized(t.dtype())) throw DTypeError(quantized_message(t.dtype()));
  if (flat < 0 || flat >= t.numel()) {
    throw IndexError("index " + std::to_string(flat) + " is out of range for " + t.describe() +
                     " with " + std::to_string(t.numel()) + " elements");
  }
}

}  // namespace

double TensorData::get(int64_t flat) const {
  if (is_quantized(dtype_)) {
    check_index(*this, flat);
    return dequantize_element(dtype_, data(), flat);
  }
  check_access(*this, flat);
  const std::byte* p = data() + static_cast<size_t>(flat) * element_size(dtype_);
  switch (dtype_) {
    case DType::F32:
      return load<float>(p);
    case DType::F16:
      return f16_bits_to_float(load<uint16_t>(p));
    case DType::BF16:
      return bf16_bits_to_float(load<uint16_t>(p));
    case DType::F64:
      return load<double>(p);
    case DType::I32:
      return load<int32_t>(p);
    case DType::I64:
      return static_cast<double>(load<int64_t>(p));
    case DType::I8:
      return load<int8_t>(p);
    case DType::U8:
      return load<uint8_t>(p);
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::F8E4M3:
      return f8e4m3_bits_to_float(load<uint8_t>(p));
    case DType::F8E5M2:
      return f8e5m2_bits_to_float(load<uint8_t>(p));
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
      break;
  }
  throw DTypeError(quantized_message(dtype_));
}

int64_t TensorData::get_int(int64_t flat) const {
  check_access(*this, flat);
  const std::byte* p = data() + static_cast<size_t>(flat) * element_size(dtype_);
  switch (dtype_) {
    case DType::I32:
      return load<int32_t>(p);
    case DType::I64:
      return load<int64_t>(p);
    case DType::I8:
      return load<int8_t>(p);
    case DType::U8:
      return load<uint8_t>(p);
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1 : 0;
    default:
      // Floats: truncate toward zero with the Cast rules (saturating, NaN -> 0).
      return saturating_float_to_int(get(flat), DType::I64);
  }
}

void TensorData::set(int64_t flat, double value) {
  check_access(*this, flat);
  std::byte* p = data() + static_cast<size_t>(flat) * element_size(dtype_);
  switch (dtype_) {
    case DType::F32:
      return store(p, double_to_float(value));
    case DType::F16:
      return store(p, float_to_f16_bits(double_to_float_odd(value)));
    case DType::BF16:
      return store(p, float_to_bf16_bits(double_to_float_odd(value)));
    case DType::F64:
      return store(p, value);
    case DType::I32:
      return store(p, static_cast<int32_t>(saturating_float_to_int(value, dtype_)));
    case DType::I64:
      return store(p, saturating_float_to_int(value, dtype_));
    case DType::I8:
      return store(p, static_cast<int8_t>(saturating_float_to_int(value, dtype_)));
    case DType::U8:
      return store(p, static_cast<uint8_t>(saturating_float_to_int(value, dtype_)));
    case DType::Bool:
      return store(p, static_cast<uint8_t>(value != 0.0 ? 1 : 0));  // NaN != 0 -> true
    case DType::F8E4M3:
      return store(p, float_to_f8e4m3_bits(double_to_float_odd(value)));
    case DType::F8E5M2:
      return store(p, float_to_f8e5m2_bits(double_to_float_odd(value)));
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
      break;
  }
  throw DTypeError(quantized_message(dtype_));
}

void TensorData::set_int(int64_t flat, int64_t value) {
  check_access(*this, flat);
  std::byte* p = data() + static_cast<size_t>(flat) * element_size(dtype_);
  switch (dtype_) {
    case DType::I32:
      return store(p, static_cast<int32_t>(wrap_int(value, dtype_)));
    case DType::I64:
      return store(p, value);
    case DType::I8:
      return store(p, static_cast<int8_t>(wrap_int(value, dtype_)));
    case DType::U8:
      return store(p, static_cast<uint8_t>(wrap_int(value, dtype_)));
    case DType::Bool:
      return store(p, static_cast<uint8_t>(value != 0 ? 1 : 0));
    case DType::F64:
      return store(p, static_cast<double>(value));  // correctly rounded (round to nearest)
    case DType::F32:
      return store(p, static_cast<float>(value));  // direct, so no double rounding via double
    default:
      // Narrow floats: a round-to-odd double keeps the final rounding exact.
      return set(flat, int_to_double_odd(value));
  }
}

std::vector<double> TensorData::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = get(i);
  return out;
}

std::vector<int64_t> TensorData::to_ints() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = get_int(i);
  return out;
}

std::string TensorData::describe() const {
  return std::string(dtype_name(dtype_)) + shape_string(shape_);
}

}  // namespace luminal
