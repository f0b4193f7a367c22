#pragma once
// Private helpers of the weight-file readers: a bounds-checked little-endian
// cursor over a byte span, and the error helper that prefixes messages with
// the file name and format.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "luminal/io/format_error.hpp"

namespace luminal::io_detail {

[[noreturn]] inline void fail(const std::string& file, std::string_view format,
                              const std::string& problem) {
  throw FormatError(file + ": " + std::string(format) + ": " + problem);
}

/// Little-endian unsigned integer of `n` bytes at `p` (host-endianness independent).
inline uint64_t load_le(const std::byte* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

/// Element count of `dims` (each >= 0), or nullopt when the product of the
/// non-zero dims overflows int64: then every partial product, in any order,
/// fits, so later code multiplying the dims in its own order cannot overflow.
inline std::optional<int64_t> checked_numel(std::span<const int64_t> dims) {
  int64_t nonzero = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d == 0) {
      zero = true;
    } else if (nonzero > INT64_MAX / d) {
      return std::nullopt;
    } else {
      nonzero *= d;
    }
  }
  return zero ? 0 : nonzero;
}

class ByteReader {
public:
  ByteReader(std::span<const std::byte> bytes, const std::string& file, std::string_view format)
      : bytes_(bytes), file_(file), format_(format) {}

  size_t pos() const { return pos_; }
  size_t size() const { return bytes_.size(); }
  size_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void fail(const std::string& problem) const {
    io_detail::fail(file_, format_, problem);
  }

  /// `n` bytes at the cursor, advancing it; `what` names them in the error.
  std::span<const std::byte> take(uint64_t n, std::string_view what) {
    if (n > remaining()) {
      fail("truncated: " + std::string(what) + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + " but the file has " + std::to_string(remaining()) +
           " left (file size " + std::to_string(size()) + ")");
    }
    auto out = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  uint64_t uint(size_t n, std::string_view what) { return load_le(take(n, what).data(), n); }
  uint32_t u32(std::string_view what) { return static_cast<uint32_t>(uint(4, what)); }
  uint64_t u64(std::string_view what) { return uint(8, what); }

private:
  std::span<const std::byte> bytes_;
  const std::string& file_;
  std::string_view format_;
  size_t pos_ = 0;
};

}  // namespace luminal::io_detail
