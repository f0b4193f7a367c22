#pragma once
// Host tensors: a dtype, a concrete shape and dense row-major bytes. This is
// how callers hand data to a compiled graph (or the reference interpreter) and
// read results back.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "luminal/core/aligned_allocator.hpp"
#include "luminal/core/dtype.hpp"

namespace luminal {

class TensorData {
public:
  TensorData() = default;
  /// Zero-filled tensor. Throws ShapeError on a negative size.
  TensorData(DType dtype, std::vector<int64_t> shape);
  /// Tensor from values given as doubles, converted to `dtype` with the Cast
  /// semantics of the HLIR (float -> int truncates and saturates, -> bool is
  /// x != 0). Throws ShapeError if the count does not match the shape.
  static TensorData from_doubles(DType dtype, std::vector<int64_t> shape,
                                 const std::vector<double>& values);
  /// Integer tensor from int64 values (exact for i64), wrapping to the dtype.
  static TensorData from_ints(DType dtype, std::vector<int64_t> shape,
                              const std::vector<int64_t>& values);
  /// Tensor filled with one value.
  static TensorData full(DType dtype, std::vector<int64_t> shape, double value);
  /// A tensor over memory owned elsewhere (zero-copy: a numpy array, a
  /// mapped file): `data` holds storage_bytes(dtype, numel) bytes and must stay
  /// valid while `owner` lives, which this tensor keeps alive. Backends read it
  /// in place. Copying a borrowed tensor copies the bytes into owned storage
  /// (copies never alias); moving keeps the borrowed memory.
  static TensorData borrow(DType dtype, std::vector<int64_t> shape, std::byte* data,
                           std::shared_ptr<const void> owner);
  bool borrowed() const { return external_ != nullptr; }
  /// borrow() of bytes in a read-only mapping of a file that does not change
  /// while it is mapped (a weight file): the same tensor, and reloadable().
  static TensorData borrow_file_mapping(DType dtype, std::vector<int64_t> shape,
                                        const std::byte* data, std::shared_ptr<const void> owner);
  /// The bytes are a read-only file mapping (borrow_file_mapping): the system
  /// can drop their pages from this process and read them again from the file
  /// when they are next touched, so a backend that keeps its own copy of the
  /// tensor may release them (release_pages) to save memory.
  bool reloadable() const { return reloadable_; }
  /// Drops the pages wholly inside a reloadable tensor's bytes from this
  /// process' memory (madvise MADV_DONTNEED); the values do not change (a
  /// later read faults them back in from the file). Returns the bytes
  /// released: 0 for other tensors.
  size_t release_pages() const;

  TensorData(const TensorData& other);
  TensorData& operator=(const TensorData& other);
  TensorData(TensorData&& other) noexcept;
  TensorData& operator=(TensorData&& other) noexcept;
  ~TensorData() = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return external_ ? external_size_ : bytes_.size(); }
  std::byte* data() { return external_ ? external_ : bytes_.data(); }
  const std::byte* data() const { return external_ ? external_ : bytes_.data(); }
  std::span<std::byte> bytes() { return {data(), nbytes()}; }
  std::span<const std::byte> bytes() const { return {data(), nbytes()}; }

  /// Element `flat` (row-major) as a double (bool -> 0/1, f16/bf16 widened).
  /// Throws IndexError when out of range, DTypeError for quantized storage.
  double get(int64_t flat) const;
  /// Element `flat` as an int64 (exact for integer dtypes; floats truncate).
  int64_t get_int(int64_t flat) const;
  /// Store a double into element `flat` with Cast semantics.
  void set(int64_t flat, double value);
  /// Store an int64 into element `flat` (wraps for narrower integer dtypes).
  void set_int(int64_t flat, int64_t value);
  std::vector<double> to_doubles() const;
  std::vector<int64_t> to_ints() const;

  /// "f32[2, 3]"
  std::string describe() const;

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 1;
  using Bytes = std::vector<std::byte, AlignedAllocator<std::byte>>;  // cache-line aligned
  Bytes bytes_ = Bytes(4);
  std::byte* external_ = nullptr;  // borrowed storage (bytes_ unused), see borrow()
  size_t external_size_ = 0;
  std::shared_ptr<const void> owner_;
  bool reloadable_ = false;  // see borrow_file_mapping()
};

/// Cast semantics shared by TensorData and the interpreter:
/// float -> integer: truncate toward zero, saturate to the type's range, NaN -> 0.
int64_t saturating_float_to_int(double value, DType int_dtype);
/// Wrap an int64 to the range of an integer dtype (two's complement).
int64_t wrap_int(int64_t value, DType int_dtype);
/// Round a double to the precision of a float dtype (f32, f16, bf16, fp8, f64).
double round_to_float_dtype(double value, DType float_dtype);

/// Element `i` (flat) of GGUF block-quantized storage `data` (Q8_0, Q4_0,
/// Q4_1: blocks of 32 elements) as ggml decodes it: q * d (Q8_0), (q - 8) * d
/// (Q4_0), q * d + m (Q4_1), in float arithmetic. Throws DTypeError for other types.
float dequantize_element(DType dtype, const std::byte* data, int64_t i);
/// Elements [first, first + count) of such storage into `out`, each exactly as
/// dequantize_element decodes it (the reference interpreter's Cast of a whole
/// weight: per element, the lookups cost more than the arithmetic).
void dequantize_elements(DType dtype, const std::byte* data, int64_t first, int64_t count,
                         float* out);

}  // namespace luminal
