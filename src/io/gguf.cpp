#include "luminal/io/gguf.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "byte_reader.hpp"
#include "luminal/error.hpp"

namespace luminal {
namespace {

constexpr std::string_view kFormat = "GGUF";
constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMaxDims = 4;         // GGML_MAX_DIMS
constexpr int kMaxNesting = 16;          // arrays of arrays; real files use none
// Smallest encodings, for bounding counts by the bytes left before allocating.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;        // key length, type, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset
constexpr uint64_t kMinArrayBytes = 4 + 8;               // element type, count

bool is_signed_int(GGUFValueType t) {
  return t == GGUFValueType::I8 || t == GGUFValueType::I16 || t == GGUFValueType::I32 ||
         t == GGUFValueType::I64;
}
bool is_unsigned_int(GGUFValueType t) {
  return t == GGUFValueType::U8 || t == GGUFValueType::U16 || t == GGUFValueType::U32 ||
         t == GGUFValueType::U64 || t == GGUFValueType::Bool;
}

bool known_value_type(uint32_t t) {
  return t <= static_cast<uint32_t>(GGUFValueType::F64);
}

// Numeric views of raw little-endian scalar bits.
int64_t bits_as_int(GGUFValueType t, uint64_t bits) {
  const size_t n = gguf_scalar_size(t);
  if (is_signed_int(t) && n < 8) {
    const unsigned shift = static_cast<unsigned>(64 - 8 * n);
    return static_cast<int64_t>(bits << shift) >> shift;  // sign-extend
  }
  return static_cast<int64_t>(bits);
}
double bits_as_double(GGUFValueType t, uint64_t bits) {
  if (t == GGUFValueType::F32) return std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (t == GGUFValueType::F64) return std::bit_cast<double>(bits);
  if (is_signed_int(t)) return static_cast<double>(bits_as_int(t, bits));
  return static_cast<double>(bits);
}

[[noreturn]] void wrong_type(GGUFValueType actual, const char* wanted) {
  throw DTypeError("GGUF value: expected " + std::string(wanted) + ", got " +
                   std::string(gguf_value_type_name(actual)));
}

uint64_t align_up(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

}  // namespace

std::string_view gguf_value_type_name(GGUFValueType type) {
  switch (type) {
    case GGUFValueType::U8:
      return "u8";
    case GGUFValueType::I8:
      return "i8";
    case GGUFValueType::U16:
      return "u16";
    case GGUFValueType::I16:
      return "i16";
    case GGUFValueType::U32:
      return "u32";
    case GGUFValueType::I32:
      return "i32";
    case GGUFValueType::F32:
      return "f32";
    case GGUFValueType::Bool:
      return "bool";
    case GGUFValueType::String:
      return "string";
    case GGUFValueType::Array:
      return "array";
    case GGUFValueType::U64:
      return "u64";
    case GGUFValueType::I64:
      return "i64";
    case GGUFValueType::F64:
      return "f64";
  }
  return "unknown";
}

// ---- GGUFValue ------------------------------------------------------------------

uint64_t GGUFValue::as_uint() const {
  if (is_unsigned_int(type_)) return bits_;
  if (is_signed_int(type_) && bits_as_int(type_, bits_) >= 0) {
    return static_cast<uint64_t>(bits_as_int(type_, bits_));
  }
  wrong_type(type_, "a non-negative integer");
}

int64_t GGUFValue::as_int() const {
  if (is_signed_int(type_)) return bits_as_int(type_, bits_);
  if (is_unsigned_int(type_) && bits_ <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(bits_);
  }
  wrong_type(type_, "an integer that fits in int64");
}

double GGUFValue::as_float() const {
  if (gguf_scalar_size(type_) == 0) wrong_type(type_, "a number");
  return bits_as_double(type_, bits_);
}

bool GGUFValue::as_bool() const {
  if (type_ != GGUFValueType::Bool) wrong_type(type_, "bool");
  return bits_ != 0;
}

std::string_view GGUFValue::as_string() const {
  if (type_ != GGUFValueType::String) wrong_type(type_, "string");
  return string_;
}

GGUFValueType GGUFValue::element_type() const {
  if (!is_array()) wrong_type(type_, "array");
  return element_type_;
}

size_t GGUFValue::size() const {
  if (!is_array()) wrong_type(type_, "array");
  return count_;
}

GGUFValue GGUFValue::at(size_t i) const {
  if (i >= size()) {
    throw IndexError("GGUF array index " + std::to_string(i) + " out of range for " +
                     std::to_string(count_) + " elements");
  }
  if (element_type_ == GGUFValueType::Array) return arrays_[i];
  GGUFValue v;
  v.type_ = element_type_;
  if (element_type_ == GGUFValueType::String) {
    v.string_ = strings_[i];
  } else {
    const size_t n = gguf_scalar_size(element_type_);
    v.bits_ = io_detail::load_le(raw_.data() + i * n, n);
  }
  return v;
}

std::vector<int64_t> GGUFValue::ints() const {
  if (!is_array() || !(is_signed_int(element_type_) || is_unsigned_int(element_type_))) {
    wrong_type(type_, "an array of integers");
  }
  std::vector<int64_t> out(count_);
  for (size_t i = 0; i < count_; ++i) out[i] = at(i).as_int();
  return out;
}

std::vector<double> GGUFValue::floats() const {
  if (!is_array() || gguf_scalar_size(element_type_) == 0) wrong_type(type_, "an array of numbers");
  std::vector<double> out(count_);
  for (size_t i = 0; i < count_; ++i) out[i] = at(i).as_float();
  return out;
}

const std::vector<std::string_view>& GGUFValue::strings() const {
  if (!is_array() || element_type_ != GGUFValueType::String) {
    wrong_type(type_, "an array of strings");
  }
  return strings_;
}

const std::vector<GGUFValue>& GGUFValue::arrays() const {
  if (!is_array() || element_type_ != GGUFValueType::Array) wrong_type(type_, "an array of arrays");
  return arrays_;
}

std::string GGUFValue::to_string(size_t max_items) const {
  switch (type_) {
    case GGUFValueType::String:
      return "\"" + std::string(string_) + "\"";
    case GGUFValueType::Bool:
      return bits_ != 0 ? "true" : "false";
    case GGUFValueType::F32:
    case GGUFValueType::F64: {
      // Shortest text that reads back as the same value.
      char buf[32];
      const double v = as_float();
      for (int precision = 6; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        const double back = std::strtod(buf, nullptr);
        if (type_ == GGUFValueType::F32 ? static_cast<float>(back) == static_cast<float>(v)
                                        : back == v) {
          break;
        }
      }
      return buf;
    }
    case GGUFValueType::Array: {
      std::string out = "[";
      const size_t shown = std::min(count_, max_items);
      for (size_t i = 0; i < shown; ++i) {
        if (i != 0) out += ", ";
        out += at(i).to_string(max_items);
      }
      if (shown < count_) {
        out += (shown != 0 ? ", ... (" : "... (") + std::to_string(count_) + " items)";
      }
      return out + "]";
    }
    default:
      return is_signed_int(type_) ? std::to_string(bits_as_int(type_, bits_))
                                  : std::to_string(bits_);
  }
}

// ---- the parser -----------------------------------------------------------------

class GGUFParser {
public:
  explicit GGUFParser(GGUFFile& f) : f_(f), in_(f.bytes_, f.path_, kFormat) {}

  void parse() {
    header();
    metadata();
    alignment();
    tensor_directory();
    place_data();
  }

private:
  [[noreturn]] void fail(const std::string& problem) const { in_.fail(problem); }

  void header() {
    if (in_.size() < 4) {
      fail("not a GGUF file: " + std::to_string(in_.size()) + " bytes, too short for the magic");
    }
    const uint32_t magic = in_.u32("the magic");
    if (magic != kMagic) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", magic);
      fail("not a GGUF file: bad magic " + std::string(hex) + " (expected \"GGUF\")");
    }
    const uint32_t version = in_.u32("the version");
    if (version == 1) {
      fail("GGUF version 1 (32-bit counts) is not supported; convert the model again");
    }
    if (version != 2 && version != 3) {
      // A big-endian writer stores 3 as 0x03000000.
      if (version == 0x02000000u || version == 0x03000000u) {
        fail("big-endian GGUF files are not supported");
      }
      fail("unsupported GGUF version " + std::to_string(version) + " (supported: 2, 3)");
    }
    f_.version_ = version;
    tensor_count_ = in_.u64("the tensor count");
    kv_count_ = in_.u64("the metadata count");
    if (tensor_count_ > in_.remaining() / kMinTensorInfoBytes) {
      fail("absurd tensor count " + std::to_string(tensor_count_) + ": the file has only " +
           std::to_string(in_.remaining()) + " bytes after the header");
    }
    if (kv_count_ > in_.remaining() / kMinKeyValueBytes) {
      fail("absurd metadata count " + std::to_string(kv_count_) + ": the file has only " +
           std::to_string(in_.remaining()) + " bytes after the header");
    }
  }

  std::string_view string(const std::string& what) {
    const uint64_t n = in_.u64(what + " length");
    if (n > in_.remaining()) {
      fail("absurd length " + std::to_string(n) + " of " + what + " at offset " +
           std::to_string(in_.pos() - 8) + ": only " + std::to_string(in_.remaining()) +
           " bytes left");
    }
    auto bytes = in_.take(n, what);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

  GGUFValueType value_type(const std::string& what) {
    const uint32_t t = in_.u32(what);
    if (!known_value_type(t)) {
      fail(what + " is " + std::to_string(t) + ", not a GGUF value type (0-12)");
    }
    return static_cast<GGUFValueType>(t);
  }

  GGUFValue value(GGUFValueType type, const std::string& what, int depth) {
    GGUFValue v;
    v.type_ = type;
    if (type == GGUFValueType::String) {
      v.string_ = string(what);
    } else if (type == GGUFValueType::Array) {
      array(v, what, depth);
    } else {
      v.bits_ = in_.uint(gguf_scalar_size(type), what);
    }
    return v;
  }

  void array(GGUFValue& v, const std::string& what, int depth) {
    if (depth >= kMaxNesting) {
      fail(what + ": arrays nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    v.element_type_ = value_type(what + " element type");
    const uint64_t count = in_.u64(what + " element count");
    const size_t elem = gguf_scalar_size(v.element_type_);
    const uint64_t min_bytes = elem != 0                                  ? elem
                               : v.element_type_ == GGUFValueType::String ? 8
                                                                          : kMinArrayBytes;
    if (count > in_.remaining() / min_bytes) {
      fail("absurd element count " + std::to_string(count) + " of " + what + " (" +
           std::string(gguf_value_type_name(v.element_type_)) + " elements): only " +
           std::to_string(in_.remaining()) + " bytes left");
    }
    v.count_ = static_cast<size_t>(count);
    if (elem != 0) {
      v.raw_ = in_.take(count * elem, what);
    } else if (v.element_type_ == GGUFValueType::String) {
      v.strings_.reserve(v.count_);
      for (size_t i = 0; i < v.count_; ++i) v.strings_.push_back(string(what + " element"));
    } else {
      v.arrays_.reserve(v.count_);
      for (size_t i = 0; i < v.count_; ++i) {
        v.arrays_.push_back(value(GGUFValueType::Array, what + " element", depth + 1));
      }
    }
  }

  void metadata() {
    f_.metadata_.reserve(static_cast<size_t>(kv_count_));
    for (uint64_t i = 0; i < kv_count_; ++i) {
      const std::string_view key = string("metadata key #" + std::to_string(i));
      const std::string what = "metadata '" + std::string(key) + "'";
      const GGUFValueType type = value_type(what + " value type");
      GGUFValue v = value(type, what, 0);
      if (!f_.metadata_index_.emplace(key, f_.metadata_.size()).second) {
        fail("duplicate metadata key '" + std::string(key) + "'");
      }
      f_.metadata_.emplace_back(key, std::move(v));
    }
  }

  void alignment() {
    const GGUFValue* a = f_.find_value("general.alignment");
    if (a == nullptr) return;
    if (a->type() != GGUFValueType::U32) {
      fail("general.alignment must be a u32, got " + std::string(gguf_value_type_name(a->type())));
    }
    const uint64_t alignment = a->as_uint();
    if (alignment == 0 || !std::has_single_bit(alignment)) {
      fail("general.alignment " + std::to_string(alignment) + " is not a power of two");
    }
    f_.alignment_ = alignment;
  }

  void tensor_directory() {
    f_.tensors_.reserve(static_cast<size_t>(tensor_count_));
    relative_offsets_.reserve(static_cast<size_t>(tensor_count_));
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      StoredTensor t;
      t.name = std::string(string("tensor name #" + std::to_string(i)));
      const std::string what = "tensor '" + t.name + "'";
      const uint32_t n_dims = in_.u32(what + " dimension count");
      if (n_dims > kMaxDims) {
        fail(what + " has " + std::to_string(n_dims) + " dimensions (at most " +
             std::to_string(kMaxDims) + ")");
      }
      std::vector<int64_t> ne(n_dims);
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t n = in_.u64(what + " dimension");
        if (n > static_cast<uint64_t>(INT64_MAX)) {
          fail(what + " has too many elements (dimension " + std::to_string(d) + " is " +
               std::to_string(n) + ")");
        }
        ne[d] = static_cast<int64_t>(n);
      }
      const std::optional<int64_t> count = io_detail::checked_numel(ne);
      if (!count) fail(what + " has too many elements");
      const int64_t numel = *count;
      const uint32_t type_id = in_.u32(what + " type");
      const GGMLTypeInfo* info = find_ggml_type(type_id);
      if (info == nullptr) fail(what + " has unknown ggml type " + std::to_string(type_id));
      const uint64_t offset = in_.u64(what + " offset");
      if (n_dims > 0 && ne[0] % static_cast<int64_t>(info->block_elems) != 0) {
        fail(what + " of type " + std::string(info->name) + " has a row of " +
             std::to_string(ne[0]) + " elements, not a multiple of its block size " +
             std::to_string(info->block_elems));
      }
      if (n_dims == 0 && info->block_elems != 1) {
        fail(what + " is a scalar of block type " + std::string(info->name));
      }
      t.shape.assign(ne.rbegin(), ne.rend());
      t.type_name = std::string(info->name);
      t.dtype = info->dtype;
      t.ggml_type = info->type;
      // numel / block_elems blocks of block_bytes: at most numel * 4.5 bytes for
      // the types in the table, so it can only overflow for absurd numel.
      const uint64_t blocks = static_cast<uint64_t>(numel) / info->block_elems;
      if (blocks > std::numeric_limits<uint64_t>::max() / info->block_bytes) {
        fail(what + " is too large");
      }
      sizes_.push_back(blocks * info->block_bytes);
      relative_offsets_.push_back(offset);
      if (!f_.tensor_index_.emplace(t.name, f_.tensors_.size()).second) {
        fail("duplicate tensor name '" + t.name + "'");
      }
      f_.tensors_.push_back(std::move(t));
    }
  }

  void place_data() {
    const uint64_t alignment = f_.alignment_;
    f_.data_offset_ = align_up(in_.pos(), alignment);
    const uint64_t file_size = in_.size();
    std::vector<size_t> order(f_.tensors_.size());
    for (size_t i = 0; i < f_.tensors_.size(); ++i) {
      StoredTensor& t = f_.tensors_[i];
      const uint64_t rel = relative_offsets_[i];
      const uint64_t nbytes = sizes_[i];
      if (rel % alignment != 0) {
        fail("tensor '" + t.name + "' offset " + std::to_string(rel) +
             " is not a multiple of the alignment " + std::to_string(alignment));
      }
      // Compare without overflowing: begin = data_offset + rel, end = begin + nbytes.
      if (f_.data_offset_ > file_size || rel > file_size - f_.data_offset_ ||
          nbytes > file_size - f_.data_offset_ - rel) {
        fail("tensor '" + t.name + "' data (" + std::to_string(nbytes) + " bytes at data offset " +
             std::to_string(rel) + ", file offset " +
             std::to_string(static_cast<unsigned long long>(f_.data_offset_) + rel) +
             ") is outside the file (" + std::to_string(file_size) + " bytes)");
      }
      t.offset = f_.data_offset_ + rel;
      t.data = f_.bytes_.subspan(static_cast<size_t>(t.offset), static_cast<size_t>(nbytes));
      order[i] = i;
    }
    // By (begin, end): an empty tensor at another's start (as ggml writes
    // them) is not an overlap.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const StoredTensor& x = f_.tensors_[a];
      const StoredTensor& y = f_.tensors_[b];
      return x.offset != y.offset ? x.offset < y.offset : x.data.size() < y.data.size();
    });
    for (size_t k = 1; k < order.size(); ++k) {
      const StoredTensor& prev = f_.tensors_[order[k - 1]];
      const StoredTensor& cur = f_.tensors_[order[k]];
      if (cur.offset < prev.offset + prev.data.size()) {
        fail("tensors '" + prev.name + "' and '" + cur.name + "' overlap (bytes [" +
             std::to_string(prev.offset) + ", " + std::to_string(prev.offset + prev.data.size()) +
             ") and [" + std::to_string(cur.offset) + ", " +
             std::to_string(cur.offset + cur.data.size()) + "))");
      }
    }
  }

  GGUFFile& f_;
  io_detail::ByteReader in_;
  uint64_t tensor_count_ = 0;
  uint64_t kv_count_ = 0;
  std::vector<uint64_t> relative_offsets_;
  std::vector<uint64_t> sizes_;
};

// ---- GGUFFile -------------------------------------------------------------------

GGUFFile GGUFFile::open(const std::string& path) {
  GGUFFile f;
  f.path_ = path;
  f.mapping_ = std::make_shared<const MappedFile>(path);
  f.bytes_ = f.mapping_->bytes();
  GGUFParser(f).parse();
  return f;
}

GGUFFile GGUFFile::from_memory(std::span<const std::byte> bytes, const std::string& name) {
  GGUFFile f;
  f.path_ = name;
  f.bytes_ = bytes;
  GGUFParser(f).parse();
  return f;
}

std::string GGUFFile::format() const {
  return "GGUF v" + std::to_string(version_);
}

const GGUFValue* GGUFFile::find_value(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GGUFValue& GGUFFile::value(std::string_view key) const {
  const GGUFValue* v = find_value(key);
  if (v == nullptr) {
    throw LookupError(path_ + ": GGUF metadata key '" + std::string(key) + "' not found");
  }
  return *v;
}

template <typename T, typename Fn>
T GGUFFile::typed(std::string_view key, const char* wanted, Fn get) const {
  const GGUFValue& v = value(key);
  try {
    return get(v);
  } catch (const DTypeError&) {
    std::string actual(gguf_value_type_name(v.type()));
    if (v.is_array()) actual += " of " + std::string(gguf_value_type_name(v.element_type()));
    throw DTypeError(path_ + ": GGUF metadata '" + std::string(key) + "' is " + actual + " " +
                     v.to_string(4) + ", expected " + wanted);
  }
}

uint64_t GGUFFile::get_uint(std::string_view key) const {
  return typed<uint64_t>(key, "a non-negative integer",
                         [](const GGUFValue& v) { return v.as_uint(); });
}
int64_t GGUFFile::get_int(std::string_view key) const {
  return typed<int64_t>(key, "an integer", [](const GGUFValue& v) { return v.as_int(); });
}
double GGUFFile::get_float(std::string_view key) const {
  return typed<double>(key, "a number", [](const GGUFValue& v) { return v.as_float(); });
}
bool GGUFFile::get_bool(std::string_view key) const {
  return typed<bool>(key, "a bool", [](const GGUFValue& v) { return v.as_bool(); });
}
std::string GGUFFile::get_string(std::string_view key) const {
  return typed<std::string>(key, "a string",
                            [](const GGUFValue& v) { return std::string(v.as_string()); });
}
std::vector<std::string> GGUFFile::get_strings(std::string_view key) const {
  return typed<std::vector<std::string>>(key, "an array of strings", [](const GGUFValue& v) {
    const auto& s = v.strings();
    return std::vector<std::string>(s.begin(), s.end());
  });
}
std::vector<int64_t> GGUFFile::get_ints(std::string_view key) const {
  return typed<std::vector<int64_t>>(key, "an array of integers",
                                     [](const GGUFValue& v) { return v.ints(); });
}
std::vector<double> GGUFFile::get_floats(std::string_view key) const {
  return typed<std::vector<double>>(key, "an array of numbers",
                                    [](const GGUFValue& v) { return v.floats(); });
}

const StoredTensor* GGUFFile::find(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const StoredTensor& GGUFFile::tensor(std::string_view name) const {
  const StoredTensor* t = find(name);
  if (t == nullptr) throw LookupError(path_ + ": no tensor named '" + std::string(name) + "'");
  return *t;
}

std::vector<std::pair<std::string, std::string>> GGUFFile::metadata_text() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(metadata_.size());
  for (const auto& [key, v] : metadata_) out.emplace_back(std::string(key), v.to_string());
  return out;
}

std::string GGUFFile::architecture() const {
  const GGUFValue* v = find_value("general.architecture");
  return v != nullptr && v->type() == GGUFValueType::String ? std::string(v->as_string()) : "";
}

size_t gguf_scalar_size(GGUFValueType t) {
  switch (t) {
    case GGUFValueType::U8:
    case GGUFValueType::I8:
    case GGUFValueType::Bool:
      return 1;
    case GGUFValueType::U16:
    case GGUFValueType::I16:
      return 2;
    case GGUFValueType::U32:
    case GGUFValueType::I32:
    case GGUFValueType::F32:
      return 4;
    case GGUFValueType::U64:
    case GGUFValueType::I64:
    case GGUFValueType::F64:
      return 8;
    case GGUFValueType::String:
    case GGUFValueType::Array:
      return 0;
  }
  return 0;
}

}  // namespace luminal
