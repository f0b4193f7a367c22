#include "luminal/io/stored_tensor.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "luminal/error.hpp"
#include "luminal/io/format_error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/mapped_file.hpp"
#include "luminal/io/safetensors.hpp"

namespace luminal {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace

int64_t StoredTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // the readers checked this does not overflow
  return n;
}

std::string StoredTensor::describe() const {
  return type_name + shape_text(shape);
}

std::unique_ptr<WeightSource> open_weights(const std::string& path) {
  // Sniff the first four bytes: GGUF files start with the magic, safetensors
  // with a little-endian header length.
  bool gguf = false;
  {
    const MappedFile probe(path);
    const auto b = probe.bytes();
    gguf = b.size() >= 4 && std::memcmp(b.data(), "GGUF", 4) == 0;
  }
  if (gguf) return std::make_unique<GGUFFile>(GGUFFile::open(path));
  return std::make_unique<SafetensorsFile>(SafetensorsFile::open(path));
}

TensorData to_tensor_data(const StoredTensor& tensor) {
  if (!tensor.dtype) {
    throw DTypeError("tensor '" + tensor.name + "' (" + tensor.describe() +
                     ") has a type luminal cannot hold as storage; dequantize it to f32");
  }
  TensorData out(*tensor.dtype, tensor.shape);
  if (out.nbytes() != tensor.data.size()) {
    throw ShapeError("tensor '" + tensor.name + "' (" + tensor.describe() + ") has " +
                     std::to_string(tensor.data.size()) + " bytes, " + out.describe() + " needs " +
                     std::to_string(out.nbytes()));
  }
  if (!tensor.data.empty()) std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
  return out;
}

TensorData dequantize_to_f32(const StoredTensor& tensor) {
  if (tensor.ggml_type && ggml_type_info(*tensor.ggml_type).dequantizable) {
    TensorData out(DType::F32, tensor.shape);
    auto* dst = reinterpret_cast<float*>(out.data());
    dequantize(*tensor.ggml_type, tensor.data, std::span<float>(dst, out.nbytes() / sizeof(float)));
    return out;
  }
  if (!tensor.dtype || is_quantized(*tensor.dtype)) {
    throw DTypeError("tensor '" + tensor.name + "' (" + tensor.describe() +
                     ") cannot be converted to f32: its type is not supported");
  }
  return convert_tensor(tensor, DType::F32);
}

TensorData convert_tensor(const StoredTensor& tensor, DType dtype) {
  if (tensor.dtype == dtype) return to_tensor_data(tensor);
  if (is_quantized(dtype)) {
    throw DTypeError("tensor '" + tensor.name + "' (" + tensor.describe() +
                     ") cannot be converted to block-quantized " + to_string(dtype));
  }
  // Block types decode to f32 first (the f32 values are the format's exact
  // meaning); plain types convert straight from their own values, so f64 ->
  // f16 rounds once.
  const bool plain = tensor.dtype && !is_quantized(*tensor.dtype);
  const TensorData source = plain ? to_tensor_data(tensor) : dequantize_to_f32(tensor);
  if (source.dtype() == dtype) return source;
  TensorData out(dtype, tensor.shape);
  const bool ints = (is_int(source.dtype()) || source.dtype() == DType::Bool) &&
                    (is_int(dtype) || dtype == DType::Bool);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (ints) {
      out.set_int(i, source.get_int(i));
    } else {
      out.set(i, source.get(i));
    }
  }
  return out;
}

}  // namespace luminal
