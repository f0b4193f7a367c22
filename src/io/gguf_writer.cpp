#include "luminal/io/gguf_writer.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "luminal/error.hpp"
#include "luminal/io/format_error.hpp"

namespace luminal {
namespace {

void put_le(std::vector<std::byte>& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}
void put_string(std::vector<std::byte>& out, std::string_view s) {
  put_le(out, s.size(), 8);
  for (char c : s) out.push_back(static_cast<std::byte>(c));
}

// Bytes of one integer element; floats, strings and arrays are not integers.
size_t int_size(GGUFValueType t) {
  if (t == GGUFValueType::F32 || t == GGUFValueType::F64 || gguf_scalar_size(t) == 0)
    throw DTypeError("GGUFWriter: " + std::string(gguf_value_type_name(t)) +
                     " is not an integer value type");
  return gguf_scalar_size(t);
}

std::vector<std::byte> scalar(uint64_t bits, size_t n) {
  std::vector<std::byte> out;
  put_le(out, bits, n);
  return out;
}

}  // namespace

void GGUFWriter::add(std::string key, GGUFValueType type, std::vector<std::byte> encoded) {
  for (const Entry& e : entries_) {
    if (e.key == key) throw Error("GGUFWriter: metadata key '" + key + "' added twice");
  }
  entries_.push_back({std::move(key), type, std::move(encoded)});
}

void GGUFWriter::add_u8(std::string key, uint8_t v) {
  add(std::move(key), GGUFValueType::U8, scalar(v, 1));
}
void GGUFWriter::add_i8(std::string key, int8_t v) {
  add(std::move(key), GGUFValueType::I8, scalar(static_cast<uint8_t>(v), 1));
}
void GGUFWriter::add_u16(std::string key, uint16_t v) {
  add(std::move(key), GGUFValueType::U16, scalar(v, 2));
}
void GGUFWriter::add_i16(std::string key, int16_t v) {
  add(std::move(key), GGUFValueType::I16, scalar(static_cast<uint16_t>(v), 2));
}
void GGUFWriter::add_u32(std::string key, uint32_t v) {
  add(std::move(key), GGUFValueType::U32, scalar(v, 4));
}
void GGUFWriter::add_i32(std::string key, int32_t v) {
  add(std::move(key), GGUFValueType::I32, scalar(static_cast<uint32_t>(v), 4));
}
void GGUFWriter::add_u64(std::string key, uint64_t v) {
  add(std::move(key), GGUFValueType::U64, scalar(v, 8));
}
void GGUFWriter::add_i64(std::string key, int64_t v) {
  add(std::move(key), GGUFValueType::I64, scalar(static_cast<uint64_t>(v), 8));
}
void GGUFWriter::add_f32(std::string key, float v) {
  add(std::move(key), GGUFValueType::F32, scalar(std::bit_cast<uint32_t>(v), 4));
}
void GGUFWriter::add_f64(std::string key, double v) {
  add(std::move(key), GGUFValueType::F64, scalar(std::bit_cast<uint64_t>(v), 8));
}
void GGUFWriter::add_bool(std::string key, bool v) {
  add(std::move(key), GGUFValueType::Bool, scalar(v ? 1 : 0, 1));
}
void GGUFWriter::add_string(std::string key, std::string_view v) {
  std::vector<std::byte> out;
  put_string(out, v);
  add(std::move(key), GGUFValueType::String, std::move(out));
}

std::vector<std::byte> GGUFWriter::encode_int_array(GGUFValueType element_type,
                                                    const std::vector<int64_t>& v) {
  const size_t n = int_size(element_type);
  std::vector<std::byte> out;
  put_le(out, static_cast<uint32_t>(element_type), 4);
  put_le(out, v.size(), 8);
  for (int64_t x : v) put_le(out, static_cast<uint64_t>(x), n);
  return out;
}

std::vector<std::byte> GGUFWriter::encode_string_array(const std::vector<std::string>& v) {
  std::vector<std::byte> out;
  put_le(out, static_cast<uint32_t>(GGUFValueType::String), 4);
  put_le(out, v.size(), 8);
  for (const auto& s : v) put_string(out, s);
  return out;
}

std::vector<std::byte> GGUFWriter::encode_array_of_arrays(
    const std::vector<std::vector<std::byte>>& encoded_arrays) {
  std::vector<std::byte> out;
  put_le(out, static_cast<uint32_t>(GGUFValueType::Array), 4);
  put_le(out, encoded_arrays.size(), 8);
  for (const auto& a : encoded_arrays) out.insert(out.end(), a.begin(), a.end());
  return out;
}

void GGUFWriter::add_int_array(std::string key, GGUFValueType element_type,
                               const std::vector<int64_t>& v) {
  add(std::move(key), GGUFValueType::Array, encode_int_array(element_type, v));
}

void GGUFWriter::add_float_array(std::string key, GGUFValueType element_type,
                                 const std::vector<double>& v) {
  if (element_type != GGUFValueType::F32 && element_type != GGUFValueType::F64) {
    throw DTypeError("GGUFWriter: float arrays are f32 or f64, not " +
                     std::string(gguf_value_type_name(element_type)));
  }
  std::vector<std::byte> out;
  put_le(out, static_cast<uint32_t>(element_type), 4);
  put_le(out, v.size(), 8);
  for (double x : v) {
    if (element_type == GGUFValueType::F32) {
      put_le(out, std::bit_cast<uint32_t>(static_cast<float>(x)), 4);
    } else {
      put_le(out, std::bit_cast<uint64_t>(x), 8);
    }
  }
  add(std::move(key), GGUFValueType::Array, std::move(out));
}

void GGUFWriter::add_string_array(std::string key, const std::vector<std::string>& v) {
  add(std::move(key), GGUFValueType::Array, encode_string_array(v));
}

void GGUFWriter::add_encoded(std::string key, GGUFValueType type, std::vector<std::byte> encoded) {
  add(std::move(key), type, std::move(encoded));
}

void GGUFWriter::set_alignment(uint32_t alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment)) {
    throw Error("GGUFWriter: alignment " + std::to_string(alignment) + " is not a power of two");
  }
  add_u32("general.alignment", alignment);
  alignment_ = alignment;
}

void GGUFWriter::add_tensor(std::string name, GGMLType type, const std::vector<int64_t>& shape,
                            std::span<const std::byte> data) {
  const GGMLTypeInfo& info = ggml_type_info(type);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const auto row = shape.empty() ? 1 : shape.back();
  if (row % static_cast<int64_t>(info.block_elems) != 0 ||
      static_cast<uint64_t>(numel) / info.block_elems * info.block_bytes != data.size()) {
    throw ShapeError("GGUFWriter: tensor '" + name + "' of " + std::string(info.name) + " with " +
                     std::to_string(numel) + " elements cannot have " +
                     std::to_string(data.size()) + " bytes");
  }
  for (const Tensor& t : tensors_) {
    if (t.name == name) throw Error("GGUFWriter: tensor '" + name + "' added twice");
  }
  tensors_.push_back({std::move(name), type, std::vector<int64_t>(shape.rbegin(), shape.rend()),
                      std::vector<std::byte>(data.begin(), data.end())});
}

void GGUFWriter::add_tensor(std::string name, const TensorData& tensor) {
  const auto type = ggml_type_for(tensor.dtype());
  if (!type) {
    throw DTypeError("GGUFWriter: tensor '" + name + "' of " + to_string(tensor.dtype()) +
                     " has no ggml type");
  }
  add_tensor(std::move(name), *type, tensor.shape(), tensor.bytes());
}

std::vector<std::byte> GGUFWriter::to_bytes() const {
  std::vector<std::byte> out;
  put_le(out, 0x46554747, 4);  // "GGUF"
  put_le(out, version_, 4);
  put_le(out, tensors_.size(), 8);
  put_le(out, entries_.size(), 8);
  for (const Entry& e : entries_) {
    put_string(out, e.key);
    put_le(out, static_cast<uint32_t>(e.type), 4);
    out.insert(out.end(), e.encoded.begin(), e.encoded.end());
  }
  auto padded = [&](uint64_t n) { return (n + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put_le(out, t.ne.size(), 4);
    for (int64_t d : t.ne) put_le(out, static_cast<uint64_t>(d), 8);
    put_le(out, static_cast<uint32_t>(t.type), 4);
    put_le(out, offset, 8);
    offset = padded(offset + t.data.size());
  }
  out.resize(padded(out.size()), std::byte{0});
  for (const Tensor& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.resize(padded(out.size()), std::byte{0});
  }
  return out;
}

void GGUFWriter::write(const std::string& path) const {
  const auto bytes = to_bytes();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw FormatError(path + ": cannot write the GGUF file");
}

}  // namespace luminal
