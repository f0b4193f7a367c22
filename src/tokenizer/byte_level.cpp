#include "luminal/tokenizer/byte_level.hpp"

#include <array>

namespace luminal::tokenizer {
namespace {

struct ByteTables {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 324> to_byte{};  // indexed by code point (all are < 324)
};

constexpr bool printable(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr ByteTables make_tables() {
  ByteTables t;
  for (auto& v : t.to_byte) v = -1;
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const int c = printable(b) ? b : next++;
    t.to_char[static_cast<std::size_t>(b)] = static_cast<char32_t>(c);
    t.to_byte[static_cast<std::size_t>(c)] = static_cast<int16_t>(b);
  }
  return t;
}

constexpr ByteTables kTables = make_tables();

}  // namespace

char32_t byte_to_char(uint8_t b) {
  return kTables.to_char[b];
}

std::optional<uint8_t> char_to_byte(char32_t c) {
  if (c >= kTables.to_byte.size() || kTables.to_byte[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(kTables.to_byte[c]);
}

std::u32string bytes_to_chars(std::string_view utf8) {
  std::u32string out(utf8.size(), U'\0');
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    out[i] = kTables.to_char[static_cast<unsigned char>(utf8[i])];
  }
  return out;
}

}  // namespace luminal::tokenizer
