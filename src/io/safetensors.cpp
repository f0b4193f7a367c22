#include "luminal/io/safetensors.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "byte_reader.hpp"
#include "luminal/error.hpp"

namespace luminal {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "safetensors";
// The reference implementation refuses headers over 100 MB; so do we, before
// handing anything to the JSON parser.
constexpr uint64_t kMaxHeader = 100'000'000;
// The header is an object of objects holding short arrays: 3 levels; a little
// slack, and a hard stop for "[[[[..." bombs.
constexpr int kMaxDepth = 4;

struct SafeDType {
  std::string_view name;
  size_t bytes;
  std::optional<DType> dtype;
};
// Every dtype the format defines with a whole-byte element size.
constexpr std::array<SafeDType, 17> kDTypes{{
    {"BOOL", 1, DType::Bool},
    {"U8", 1, DType::U8},
    {"I8", 1, DType::I8},
    {"F8_E5M2", 1, DType::F8E5M2},
    {"F8_E4M3", 1, DType::F8E4M3},
    {"F8_E8M0", 1, std::nullopt},
    {"I16", 2, std::nullopt},
    {"U16", 2, std::nullopt},
    {"F16", 2, DType::F16},
    {"BF16", 2, DType::BF16},
    {"I32", 4, DType::I32},
    {"U32", 4, std::nullopt},
    {"F32", 4, DType::F32},
    {"C64", 8, std::nullopt},
    {"F64", 8, DType::F64},
    {"I64", 8, DType::I64},
    {"U64", 8, std::nullopt},
}};

const SafeDType* find_dtype(std::string_view name) {
  for (const auto& d : kDTypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// Thrown from the SAX callback to stop the parser; turned into a FormatError.
struct HeaderProblem {
  std::string message;
};

uint64_t json_uint(const json& v, const std::string& what, const std::string& file) {
  if (!v.is_number_unsigned()) {
    io_detail::fail(file, kFormat, what + " must be a non-negative integer, got " + v.dump());
  }
  return v.get<uint64_t>();
}

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  throw DTypeError("safetensors has no dtype for " + to_string(dtype));
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.mapping_ = std::make_shared<const MappedFile>(path);
  f.bytes_ = f.mapping_->bytes();
  f.parse();
  return f;
}

SafetensorsFile SafetensorsFile::from_memory(std::span<const std::byte> bytes,
                                             const std::string& name) {
  SafetensorsFile f;
  f.path_ = name;
  f.bytes_ = bytes;
  f.parse();
  return f;
}

void SafetensorsFile::parse() {
  io_detail::ByteReader in(bytes_, path_, kFormat);
  auto fail = [&](const std::string& problem) { in.fail(problem); };
  if (bytes_.size() < 8) {
    fail("not a safetensors file: " + std::to_string(bytes_.size()) +
         " bytes, too short for the header length");
  }
  const uint64_t n = in.u64("the header length");
  if (n > kMaxHeader || n > in.remaining()) {
    fail("header length " + std::to_string(n) + " is " +
         (n > kMaxHeader ? "over the 100 MB limit" : "past the end of the file") + " (file size " +
         std::to_string(bytes_.size()) + ")");
  }
  header_size_ = static_cast<size_t>(n);
  auto header = in.take(n, "the header");
  const char* begin = reinterpret_cast<const char*>(header.data());
  if (n == 0 || *begin != '{') fail("the header is not a JSON object");

  // Parse with a callback that rejects deep nesting and repeated top-level
  // names (nlohmann would silently keep the last one).
  std::set<std::string> keys;
  json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth) throw HeaderProblem{"JSON nested too deep"};
    if (event == json::parse_event_t::key && depth == 1 &&
        !keys.insert(parsed.get<std::string>()).second) {
      throw HeaderProblem{"name '" + parsed.get<std::string>() + "' appears twice"};
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(begin, begin + n, check);
  } catch (const json::exception& e) {
    fail(std::string("bad JSON header: ") + e.what());
  } catch (const HeaderProblem& e) {
    fail("bad JSON header: " + e.message);
  }
  if (!doc.is_object()) fail("the header is not a JSON object");

  const uint64_t buffer_start = 8 + n;
  const uint64_t buffer_size = bytes_.size() - buffer_start;
  for (auto& [name, entry] : doc.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ must be an object of strings");
      for (auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          fail("__metadata__ value of '" + key + "' must be a string, got " + value.dump());
        }
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!entry.is_object()) fail(what + " must be an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) {
      fail(what + " has no dtype string");
    }
    const std::string dtype_name = entry["dtype"].get<std::string>();
    const SafeDType* dt = find_dtype(dtype_name);
    if (dt == nullptr) fail(what + " has unknown dtype \"" + dtype_name + "\"");
    if (!entry.contains("shape") || !entry["shape"].is_array()) fail(what + " has no shape array");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
      fail(what + " needs data_offsets [begin, end]");
    }
    StoredTensor t;
    t.name = name;
    t.type_name = dtype_name;
    t.dtype = dt->dtype;
    for (const json& d : entry["shape"]) {
      const uint64_t dim = json_uint(d, what + " shape entry", path_);
      if (dim > static_cast<uint64_t>(INT64_MAX)) {
        fail(what + " shape " + entry["shape"].dump() + " has too many elements");
      }
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const std::optional<int64_t> count = io_detail::checked_numel(t.shape);
    if (!count) fail(what + " shape " + entry["shape"].dump() + " has too many elements");
    const int64_t numel = *count;
    const uint64_t begin_off = json_uint(entry["data_offsets"][0], what + " data begin", path_);
    const uint64_t end_off = json_uint(entry["data_offsets"][1], what + " data end", path_);
    if (end_off < begin_off || end_off > buffer_size) {
      fail(what + " data_offsets [" + std::to_string(begin_off) + ", " + std::to_string(end_off) +
           "] are outside the data buffer (" + std::to_string(buffer_size) + " bytes)");
    }
    const uint64_t nbytes = end_off - begin_off;
    if (nbytes % dt->bytes != 0 || nbytes / dt->bytes != static_cast<uint64_t>(numel)) {
      fail(what + " has " + std::to_string(nbytes) + " bytes but " + dtype_name +
           entry["shape"].dump() + " needs " +
           (static_cast<uint64_t>(numel) > std::numeric_limits<uint64_t>::max() / dt->bytes
                ? std::string("more")
                : std::to_string(static_cast<uint64_t>(numel) * dt->bytes)));
    }
    t.offset = buffer_start + begin_off;
    t.data = bytes_.subspan(static_cast<size_t>(t.offset), static_cast<size_t>(nbytes));
    tensors_.push_back(std::move(t));
  }

  // The buffer must be covered exactly: sorted by (begin, end), as the
  // reference implementation does, each tensor starts where the previous ended
  // (so an empty tensor may sit at a boundary between two others).
  std::stable_sort(
      tensors_.begin(), tensors_.end(), [](const StoredTensor& a, const StoredTensor& b) {
        return a.offset != b.offset ? a.offset < b.offset : a.data.size() < b.data.size();
      });
  uint64_t expected = buffer_start;
  const StoredTensor* prev = nullptr;
  for (const StoredTensor& t : tensors_) {
    if (t.offset < expected) {
      fail("tensors '" + prev->name + "' and '" + t.name + "' overlap");
    }
    if (t.offset > expected) {
      fail("the data buffer has a hole of " + std::to_string(t.offset - expected) +
           " bytes before tensor '" + t.name + "'");
    }
    expected = t.offset + t.data.size();
    if (!t.data.empty()) prev = &t;
  }
  if (expected != bytes_.size()) {
    fail("the data buffer has " + std::to_string(bytes_.size() - expected) +
         " bytes after the last tensor");
  }
  for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

const StoredTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const StoredTensor& SafetensorsFile::tensor(std::string_view name) const {
  const StoredTensor* t = find(name);
  if (t == nullptr) throw LookupError(path_ + ": no tensor named '" + std::string(name) + "'");
  return *t;
}

std::vector<std::pair<std::string, std::string>> SafetensorsFile::metadata_text() const {
  return {metadata_.begin(), metadata_.end()};
}

std::string SafetensorsFile::architecture() const {
  auto it = metadata_.find("architecture");
  return it == metadata_.end() ? "" : it->second;
}

std::vector<std::byte> safetensors_bytes(
    const std::vector<std::pair<std::string, const TensorData*>>& tensors,
    const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || header.contains(name)) {
      throw Error("write_safetensors: tensor name '" + name + "' is repeated or reserved");
    }
    header[name] = {{"dtype", safetensors_dtype_name(t->dtype())},
                    {"shape", t->shape()},
                    {"data_offsets", {offset, offset + t->nbytes()}}};
    offset += t->nbytes();
  }
  std::string text = header.dump();
  // Pad with spaces so the data starts 8-byte aligned (as the reference writer does).
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::byte> out;
  out.reserve(8 + text.size() + offset);
  for (size_t i = 0; i < 8; ++i) {
    out.push_back(static_cast<std::byte>((static_cast<uint64_t>(text.size()) >> (8 * i)) & 0xFF));
  }
  for (char c : text) out.push_back(static_cast<std::byte>(c));
  for (const auto& entry : tensors) {
    auto b = entry.second->bytes();
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, const TensorData*>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const auto bytes = safetensors_bytes(tensors, metadata);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw FormatError(path + ": cannot write the safetensors file");
}

}  // namespace luminal
