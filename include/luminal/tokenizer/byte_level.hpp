#pragma once
// GPT-2's byte-to-unicode mapping: byte-level BPE vocabularies spell every
// byte as one printable code point, so that a token is a plain string. Bytes
// that are printable Latin-1 ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to
// themselves; the other 68 map, in byte order, to U+0100, U+0101, ... (so ' '
// is 'Ġ' U+0120 and '\n' is 'Ċ' U+010A).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace luminal::tokenizer {

/// The code point that spells byte `b`.
char32_t byte_to_char(uint8_t b);
/// The byte a code point spells, or nullopt if it is not one of the 256.
std::optional<uint8_t> char_to_byte(char32_t c);
/// Every byte of the UTF-8 encoding of `text` spelled as its code point.
std::u32string bytes_to_chars(std::string_view utf8);

}  // namespace luminal::tokenizer
