#pragma once
// safetensors reader and writer.
//
// Layout: u64 little-endian header length N, N bytes of JSON (an object: each
// tensor name -> {"dtype", "shape", "data_offsets": [begin, end]}, plus an
// optional "__metadata__" object of string -> string), then the byte buffer;
// data_offsets are relative to the buffer's start. The buffer must be covered
// by the tensors exactly, without holes or overlaps (the format's rule, which
// keeps a file from hiding extra data).
//
// The file is memory-mapped; tensor data are spans into the mapping. Every
// malformed input throws FormatError naming the file and the problem.

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "luminal/core/tensor_data.hpp"
#include "luminal/io/mapped_file.hpp"
#include "luminal/io/stored_tensor.hpp"

namespace luminal {

/// safetensors dtype name for a luminal dtype ("F32", "BF16", "I64", "BOOL",
/// "F8_E4M3" ...); throws DTypeError for block-quantized dtypes.
std::string_view safetensors_dtype_name(DType dtype);

class SafetensorsFile : public WeightSource {
public:
  /// Map and parse `path`. Throws FormatError.
  static SafetensorsFile open(const std::string& path);
  /// Parse bytes the caller keeps alive for the SafetensorsFile's lifetime (no copy).
  static SafetensorsFile from_memory(std::span<const std::byte> bytes, const std::string& name);

  /// The "__metadata__" entries.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// Size of the JSON header in bytes.
  size_t header_size() const { return header_size_; }

  // ---- WeightSource ----------------------------------------------------------
  const std::string& path() const override { return path_; }
  std::string format() const override { return "safetensors"; }
  const std::vector<StoredTensor>& tensors() const override { return tensors_; }
  const StoredTensor* find(std::string_view name) const override;
  std::vector<std::pair<std::string, std::string>> metadata_text() const override;
  /// There is no standard key; "" unless __metadata__ has "architecture".
  std::string architecture() const override;
  size_t file_size() const override { return bytes_.size(); }
  bool file_mapped() const override { return mapping_ != nullptr; }

  /// The tensor named `name`; throws LookupError naming the file.
  const StoredTensor& tensor(std::string_view name) const;

private:
  SafetensorsFile() = default;
  void parse();

  std::string path_;
  std::shared_ptr<const MappedFile> mapping_;
  std::span<const std::byte> bytes_;
  size_t header_size_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<StoredTensor> tensors_;  // in data-offset order
  std::unordered_map<std::string, size_t> index_;
};

/// Serialise named host tensors (in the given order) and string metadata.
/// Throws DTypeError for block-quantized tensors, Error for repeated names.
std::vector<std::byte> safetensors_bytes(
    const std::vector<std::pair<std::string, const TensorData*>>& tensors,
    const std::map<std::string, std::string>& metadata = {});
/// Write a safetensors file; throws FormatError naming the path when it cannot be written.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, const TensorData*>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace luminal
