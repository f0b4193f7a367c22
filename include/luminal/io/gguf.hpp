#pragma once
// GGUF reader (versions 2 and 3, little-endian).
//
// Layout: "GGUF" magic, u32 version, u64 tensor count, u64 metadata count,
// the metadata (key string, u32 value type, value), the tensor directory (name,
// u32 n_dims, n_dims x u64 ne, u32 ggml type, u64 offset), padding up to
// `general.alignment` (default 32), then the data section; tensor offsets are
// relative to the data section and multiples of the alignment. Strings are a
// u64 length plus bytes; arrays a u32 element type, a u64 count and the elements.
//
// Dims: ggml lists ne[0] (the innermost, fastest-varying axis) first. Tensors
// here expose the PyTorch-order shape (ne reversed) in StoredTensor::shape and
// ggml's order in StoredTensor::ggml_ne().
//
// The file is memory-mapped; metadata strings and arrays and tensor data are
// views into the mapping, valid while the GGUFFile lives (moving it is fine).
// Every malformed input (truncation, bad magic, unknown types, absurd counts
// or lengths, misaligned / out-of-bounds / overlapping tensor data, duplicate
// keys or names) throws FormatError naming the file and the problem; counts
// and lengths are checked against the bytes left in the file before anything
// is allocated.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "luminal/io/ggml_type.hpp"
#include "luminal/io/mapped_file.hpp"
#include "luminal/io/stored_tensor.hpp"

namespace luminal {

enum class GGUFValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

/// "u32", "string", "array" ...
std::string_view gguf_value_type_name(GGUFValueType type);
/// Bytes of one scalar of this value type; 0 for String and Array.
size_t gguf_scalar_size(GGUFValueType type);

/// One metadata value: a scalar, a string or an array (of scalars, strings or
/// arrays). Typed accessors throw DTypeError when the value is of another kind.
class GGUFValue {
public:
  GGUFValueType type() const { return type_; }
  bool is_array() const { return type_ == GGUFValueType::Array; }

  // ---- scalars -------------------------------------------------------------
  /// Any integer (or bool) value that is >= 0.
  uint64_t as_uint() const;
  /// Any integer (or bool) value that fits in int64.
  int64_t as_int() const;
  /// Any numeric value (integers converted).
  double as_float() const;
  bool as_bool() const;
  std::string_view as_string() const;

  // ---- arrays --------------------------------------------------------------
  GGUFValueType element_type() const;
  /// Element count of an array.
  size_t size() const;
  /// Element `i` of an array (throws IndexError when out of range).
  GGUFValue at(size_t i) const;
  /// Elements of an integer or bool array.
  std::vector<int64_t> ints() const;
  /// Elements of a numeric array.
  std::vector<double> floats() const;
  /// Elements of a string array.
  const std::vector<std::string_view>& strings() const;
  /// Elements of an array of arrays.
  const std::vector<GGUFValue>& arrays() const;

  /// Printable form: `576`, `"llama"`, `[1, 2, 3, ... (49152 items)]`.
  std::string to_string(size_t max_items = 8) const;

private:
  friend class GGUFParser;
  GGUFValueType type_ = GGUFValueType::U8;
  GGUFValueType element_type_ = GGUFValueType::U8;  // arrays
  uint64_t bits_ = 0;                               // scalar numbers: raw little-endian bits
  std::string_view string_;                         // String
  size_t count_ = 0;                                // arrays
  std::span<const std::byte> raw_;         // arrays of numbers / bools: the packed elements
  std::vector<std::string_view> strings_;  // arrays of strings
  std::vector<GGUFValue> arrays_;          // arrays of arrays
};

class GGUFFile : public WeightSource {
public:
  /// Map and parse `path`. Throws FormatError.
  static GGUFFile open(const std::string& path);
  /// Parse bytes the caller keeps alive for the GGUFFile's lifetime (no copy);
  /// `name` stands for the path in messages.
  static GGUFFile from_memory(std::span<const std::byte> bytes, const std::string& name);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  /// Offset of the data section (tensor offsets are relative to it).
  uint64_t data_offset() const { return data_offset_; }

  // ---- metadata ------------------------------------------------------------
  /// (key, value) pairs in file order.
  const std::vector<std::pair<std::string_view, GGUFValue>>& metadata() const { return metadata_; }
  const GGUFValue* find_value(std::string_view key) const;
  bool has(std::string_view key) const { return find_value(key) != nullptr; }
  /// The value of `key`; throws LookupError naming the file and key.
  const GGUFValue& value(std::string_view key) const;
  // Typed look-ups: throw LookupError when missing, DTypeError (naming the
  // file, key and actual type) when of another type.
  uint64_t get_uint(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  std::vector<std::string> get_strings(std::string_view key) const;
  std::vector<int64_t> get_ints(std::string_view key) const;
  std::vector<double> get_floats(std::string_view key) const;

  // ---- WeightSource ----------------------------------------------------------
  const std::string& path() const override { return path_; }
  std::string format() const override;
  const std::vector<StoredTensor>& tensors() const override { return tensors_; }
  const StoredTensor* find(std::string_view name) const override;
  std::vector<std::pair<std::string, std::string>> metadata_text() const override;
  /// general.architecture, or "" when absent.
  std::string architecture() const override;
  size_t file_size() const override { return bytes_.size(); }
  bool file_mapped() const override { return mapping_ != nullptr; }

  /// The tensor named `name`; throws LookupError naming the file.
  const StoredTensor& tensor(std::string_view name) const;

private:
  friend class GGUFParser;
  GGUFFile() = default;
  template <typename T, typename Fn>
  T typed(std::string_view key, const char* wanted, Fn get) const;

  std::string path_;
  std::shared_ptr<const MappedFile> mapping_;  // null for from_memory
  std::span<const std::byte> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string_view, GGUFValue>> metadata_;
  std::unordered_map<std::string_view, size_t> metadata_index_;
  std::vector<StoredTensor> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace luminal
