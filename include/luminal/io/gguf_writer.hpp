#pragma once
// A small GGUF writer (version 3 by default, or 2): metadata of every value
// type and tensors of any ggml type. Used to build test models and fuzzing
// seeds; GGUFFile reads what it writes (so do ggml and the `gguf` Python
// package).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/core/tensor_data.hpp"
#include "luminal/io/ggml_type.hpp"
#include "luminal/io/gguf.hpp"

namespace luminal {

class GGUFWriter {
public:
  explicit GGUFWriter(uint32_t version = 3) : version_(version) {}

  // ---- metadata (keys keep insertion order; a repeated key throws Error) -----
  void add_u8(std::string key, uint8_t v);
  void add_i8(std::string key, int8_t v);
  void add_u16(std::string key, uint16_t v);
  void add_i16(std::string key, int16_t v);
  void add_u32(std::string key, uint32_t v);
  void add_i32(std::string key, int32_t v);
  void add_u64(std::string key, uint64_t v);
  void add_i64(std::string key, int64_t v);
  void add_f32(std::string key, float v);
  void add_f64(std::string key, double v);
  void add_bool(std::string key, bool v);
  void add_string(std::string key, std::string_view v);
  /// An array of integers stored as `element_type` (U8 ... I64, or Bool).
  void add_int_array(std::string key, GGUFValueType element_type, const std::vector<int64_t>& v);
  /// An array of floats stored as F32 or F64.
  void add_float_array(std::string key, GGUFValueType element_type, const std::vector<double>& v);
  void add_string_array(std::string key, const std::vector<std::string>& v);
  /// A value already encoded (what follows the u32 value type in the file):
  /// for nested arrays and deliberately odd values in tests.
  void add_encoded(std::string key, GGUFValueType type, std::vector<std::byte> encoded);
  /// `general.alignment` (a power of two); also changes the padding written.
  void set_alignment(uint32_t alignment);

  // Encoded array values, to nest with add_encoded / encode_array_of_arrays.
  static std::vector<std::byte> encode_int_array(GGUFValueType element_type,
                                                 const std::vector<int64_t>& v);
  static std::vector<std::byte> encode_string_array(const std::vector<std::string>& v);
  static std::vector<std::byte> encode_array_of_arrays(
      const std::vector<std::vector<std::byte>>& encoded_arrays);

  // ---- tensors -----------------------------------------------------------------
  /// A tensor of `shape` (PyTorch order; written as ggml ne, reversed) whose
  /// bytes are `data` (copied). Throws ShapeError when the size does not match.
  void add_tensor(std::string name, GGMLType type, const std::vector<int64_t>& shape,
                  std::span<const std::byte> data);
  /// A host tensor (its dtype must have a ggml type).
  void add_tensor(std::string name, const TensorData& tensor);

  /// The file's bytes.
  std::vector<std::byte> to_bytes() const;
  /// Write the file; throws FormatError naming the path when it cannot be written.
  void write(const std::string& path) const;

private:
  struct Entry {
    std::string key;
    GGUFValueType type;
    std::vector<std::byte> encoded;
  };
  struct Tensor {
    std::string name;
    GGMLType type;
    std::vector<int64_t> ne;
    std::vector<std::byte> data;
  };
  void add(std::string key, GGUFValueType type, std::vector<std::byte> encoded);
  uint32_t version_;
  uint64_t alignment_ = 32;
  std::vector<Entry> entries_;
  std::vector<Tensor> tensors_;
};

}  // namespace luminal
