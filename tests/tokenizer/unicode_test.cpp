// UTF-8 coding, categories, NFD and lowercasing. Expected values are from the
// Unicode Standard (Table 3-8 for U+FFFD substitution, UnicodeData.txt).

#include "luminal/tokenizer/unicode.hpp"

#include <gtest/gtest.h>

#include "luminal/tokenizer/byte_level.hpp"

namespace luminal::tokenizer {
namespace {

namespace uc = unicode;

TEST(TokenizerUnicode, DecodesWellFormedUtf8) {
  EXPECT_EQ(uc::decode_utf8("a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80"),
            (std::u32string{U'a', 0xE9, 0x65E5, 0x1F600}));
  EXPECT_EQ(uc::encode_utf8(std::u32string{U'a', 0xE9, 0x65E5, 0x1F600}),
            "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80");
}

TEST(TokenizerUnicode, ReplacesMaximalSubpartsOfIllFormedUtf8) {
  // Unicode Standard, Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  EXPECT_EQ(
      uc::decode_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
      (std::u32string{0x61, 0xFFFD, 0xFFFD, 0xFFFD, 0x62, 0xFFFD, 0x63, 0xFFFD, 0xFFFD, 0x64}));
  EXPECT_EQ(uc::decode_utf8("\xC0\xAF"), (std::u32string{0xFFFD, 0xFFFD}));     // overlong
  EXPECT_EQ(uc::decode_utf8("\xED\xA0\x80"), (std::u32string(3, 0xFFFD)));      // surrogate
  EXPECT_EQ(uc::decode_utf8("\xF4\x90\x80\x80"), (std::u32string(4, 0xFFFD)));  // > U+10FFFF
  EXPECT_EQ(uc::decode_utf8("\xF0\x9F\x98"), (std::u32string{0xFFFD}));         // truncated
  EXPECT_EQ(uc::decode_utf8("\xF0\x9F\x98x"), (std::u32string{0xFFFD, U'x'}));
  EXPECT_EQ(uc::sanitize_utf8("ok\xFF"), "ok\xEF\xBF\xBD");
  std::string s;
  uc::append_utf8(s, 0xD800);  // a surrogate cannot be encoded
  EXPECT_EQ(s, "\xEF\xBF\xBD");
}

TEST(TokenizerUnicode, ClassifiesCodePoints) {
  using C = uc::CharClass;
  EXPECT_EQ(uc::char_class(U'A'), C::kLetter);
  EXPECT_EQ(uc::char_class(0x4E2D), C::kLetter);  // 中
  EXPECT_EQ(uc::char_class(0x02B0), C::kLetter);  // modifier letter (Lm)
  EXPECT_EQ(uc::char_class(U'5'), C::kNumber);
  EXPECT_EQ(uc::char_class(0x0663), C::kNumber);  // Arabic-Indic three
  EXPECT_EQ(uc::char_class(0x00BD), C::kNumber);  // ½ (No)
  EXPECT_EQ(uc::char_class(0x216B), C::kNumber);  // Ⅻ (Nl)
  EXPECT_EQ(uc::char_class(U'!'), C::kPunctuation);
  EXPECT_EQ(uc::char_class(0x3002), C::kPunctuation);  // 。
  EXPECT_EQ(uc::char_class(U'$'), C::kSymbol);
  EXPECT_EQ(uc::char_class(0x1F600), C::kSymbol);  // 😀
  EXPECT_EQ(uc::char_class(0x0301), C::kMarkNonspacing);
  EXPECT_EQ(uc::char_class(0x0903), C::kMarkOther);  // Devanagari visarga (Mc)
  EXPECT_EQ(uc::char_class(0x00A0), C::kSeparator);
  EXPECT_EQ(uc::char_class(0x200B), C::kOther);  // zero width space (Cf)
  EXPECT_EQ(uc::char_class(0x0378), C::kUnassigned);
  EXPECT_EQ(uc::char_class(0x110000), C::kUnassigned);
  EXPECT_TRUE(uc::is_other(0x0378));
  EXPECT_TRUE(uc::is_other(0x0007));
  EXPECT_FALSE(uc::is_other(U'a'));
}

TEST(TokenizerUnicode, WhiteSpaceProperty) {
  for (char32_t c : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028,
                     0x2029, 0x202F, 0x205F, 0x3000}) {
    EXPECT_TRUE(uc::is_whitespace(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : {0x08, 0x1C, 0x200B, 0xFEFF, 0x61}) {
    EXPECT_FALSE(uc::is_whitespace(c)) << std::hex << static_cast<uint32_t>(c);
  }
}

TEST(TokenizerUnicode, CanonicalDecomposition) {
  EXPECT_EQ(uc::nfd(U"\u00E9"), (std::u32string{U'e', 0x301}));
  EXPECT_EQ(uc::nfd(U"\u212B"), (std::u32string{U'A', 0x30A}));  // Angstrom sign (singleton)
  // U+1E69: s + dot below (ccc 220) + dot above (ccc 230), recursively.
  EXPECT_EQ(uc::nfd(U"\u1E69"), (std::u32string{U's', 0x323, 0x307}));
  // Canonical ordering sorts marks by combining class.
  EXPECT_EQ(uc::nfd(std::u32string{U'a', 0x307, 0x323}), (std::u32string{U'a', 0x323, 0x307}));
  EXPECT_EQ(uc::nfd(U"\uD55C"), (std::u32string{0x1112, 0x1161, 0x11AB}));  // 한
  EXPECT_EQ(uc::nfd(U"\uAC00"), (std::u32string{0x1100, 0x1161}));          // 가 (no final)
  EXPECT_EQ(uc::nfd(U"abc"), U"abc");
  EXPECT_EQ(uc::combining_class(0x301), 230);
  EXPECT_EQ(uc::combining_class(U'a'), 0);
}

TEST(TokenizerUnicode, Lowercase) {
  EXPECT_EQ(uc::lowercase(U"\u00C0BC"), U"\u00E0bc");
  EXPECT_EQ(uc::lowercase(U"\u0130"), (std::u32string{U'i', 0x307}));  // İ: two code points
  EXPECT_EQ(uc::lowercase(U"\u03A3\u0399"), U"\u03C3\u03B9");          // no final-sigma context
  EXPECT_EQ(uc::lowercase(U"\u1E9E"), U"\u00DF");                      // ẞ -> ß
  EXPECT_EQ(uc::lowercase(U"\u65E5"), U"\u65E5");
}

TEST(TokenizerByteLevel, MapsBytesLikeGpt2) {
  EXPECT_EQ(byte_to_char(' '), 0x120u);   // 'Ġ'
  EXPECT_EQ(byte_to_char('\n'), 0x10Au);  // 'Ċ'
  EXPECT_EQ(byte_to_char(0), 0x100u);
  EXPECT_EQ(byte_to_char('A'), static_cast<char32_t>('A'));
  EXPECT_EQ(byte_to_char(0x7F), 0x121u);  // after the 33 bytes 0x00..0x20
  EXPECT_EQ(byte_to_char(0xAD), 0x143u);  // the last unprintable Latin-1 byte
  EXPECT_EQ(byte_to_char(0xE9), 0xE9u);
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(char_to_byte(byte_to_char(static_cast<uint8_t>(b))), b);
  }
  EXPECT_FALSE(char_to_byte(0x144).has_value());
  EXPECT_FALSE(char_to_byte(0x20).has_value());  // ' ' itself is no byte spelling
  EXPECT_EQ(bytes_to_chars("a b"), (std::u32string{U'a', 0x120, U'b'}));
}

}  // namespace
}  // namespace luminal::tokenizer
