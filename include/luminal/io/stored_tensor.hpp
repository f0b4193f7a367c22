#pragma once
// A tensor as a weight file stores it, and the interface every weight-file
// reader (GGUF, safetensors) offers. Tensors are described, not loaded: `data`
// points into the reader's read-only mapping of the file and stays valid as
// long as the reader lives. Copies into host tensors happen only when asked
// for (to_tensor_data, dequantize_to_f32, bind_weights).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/io/ggml_type.hpp"

namespace luminal {

struct StoredTensor {
  std::string name;
  /// Outermost axis first (PyTorch / numpy order). For GGUF this is ggml's
  /// `ne` reversed: a ggml [ne0=576, ne1=49152] embedding is shape [49152, 576].
  std::vector<int64_t> shape;
  /// The type as the file names it: "Q4_1", "F32" (GGUF), "BF16", "I64" (safetensors).
  std::string type_name;
  /// The luminal dtype whose storage is exactly these bytes; nullopt when
  /// luminal has none (GGUF K-quants, safetensors U16 ...).
  std::optional<DType> dtype;
  /// GGUF tensors: the ggml type (safetensors tensors: nullopt).
  std::optional<GGMLType> ggml_type;
  /// Byte offset of the data in the file.
  uint64_t offset = 0;
  /// The tensor's bytes, inside the reader's mapping.
  std::span<const std::byte> data;

  int64_t numel() const;
  /// ggml's `ne` (innermost axis first): the shape reversed.
  std::vector<int64_t> ggml_ne() const { return {shape.rbegin(), shape.rend()}; }
  /// "Q4_1[49152, 576]"
  std::string describe() const;
};

/// A weight file opened for reading.
class WeightSource {
public:
  virtual ~WeightSource() = default;
  /// The file path (or the name given to an in-memory buffer).
  virtual const std::string& path() const = 0;
  /// "GGUF v3", "safetensors".
  virtual std::string format() const = 0;
  /// Tensors in file order.
  virtual const std::vector<StoredTensor>& tensors() const = 0;
  /// The tensor named `name`, or nullptr.
  virtual const StoredTensor* find(std::string_view name) const = 0;
  /// Metadata as (key, printable value) pairs in file order; long arrays are abbreviated.
  virtual std::vector<std::pair<std::string, std::string>> metadata_text() const = 0;
  /// The model architecture the file declares ("llama"), or "".
  virtual std::string architecture() const = 0;
  /// Size of the whole file in bytes.
  virtual size_t file_size() const = 0;
  /// The tensors' bytes are a read-only mapping of the file (not a buffer in
  /// memory): bind_weights then borrows them as TensorData::borrow_file_mapping.
  virtual bool file_mapped() const = 0;
};

/// Open a weight file, choosing the reader by content (GGUF magic, else
/// safetensors). Throws FormatError.
std::unique_ptr<WeightSource> open_weights(const std::string& path);

/// The stored bytes as a host tensor of the tensor's luminal dtype (quantized
/// Q8_0 / Q4_0 / Q4_1 stay quantized: raw blocks, not expanded). Throws
/// DTypeError naming the tensor when luminal has no dtype for its type.
TensorData to_tensor_data(const StoredTensor& tensor);
/// The tensor's values as f32 (dequantizing block types; other dtypes convert
/// with Cast semantics). Throws DTypeError for types that cannot be decoded.
TensorData dequantize_to_f32(const StoredTensor& tensor);
/// The tensor converted to `dtype`: raw bytes when the dtype matches, else
/// values converted with Cast semantics (block types are dequantized first,
/// and a block-quantized target is refused). Throws DTypeError.
TensorData convert_tensor(const StoredTensor& tensor, DType dtype);

}  // namespace luminal
