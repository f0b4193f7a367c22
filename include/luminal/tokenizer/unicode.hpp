#pragma once
// The Unicode the tokenizers need, without ICU: UTF-8 coding (lossy decoding
// as Rust's String::from_utf8_lossy and Python's errors="replace" do), a
// general-category class per code point (for the pre-tokenizer regexes' \p{L}
// and \p{N}, BERT's punctuation and control characters), White_Space, NFD and
// lowercasing. The tables are generated from Python's unicodedata
// (src/tokenizer/gen_unicode_tables.py says how to regenerate them).

#include <cstdint>
#include <string>
#include <string_view>

namespace luminal::tokenizer::unicode {

/// General categories, collapsed to what the tokenizers distinguish.
enum class CharClass : uint8_t {
  kUnassigned,      // Cn (and anything above U+10FFFF)
  kLetter,          // Lu Ll Lt Lm Lo  (regex \p{L})
  kNumber,          // Nd Nl No        (regex \p{N}, Rust char::is_numeric)
  kPunctuation,     // Pc Pd Ps Pe Pi Pf Po
  kMarkNonspacing,  // Mn (what BERT's accent stripping removes after NFD)
  kMarkOther,       // Mc Me
  kSymbol,          // Sm Sc Sk So
  kSeparator,       // Zs Zl Zp
  kOther,           // Cc Cf Cs Co
};

CharClass char_class(char32_t c);
inline bool is_letter(char32_t c) {
  return char_class(c) == CharClass::kLetter;
}
inline bool is_number(char32_t c) {
  return char_class(c) == CharClass::kNumber;
}
/// Unicode punctuation (P*); BERT adds ASCII symbols on top (see normalizer).
inline bool is_punctuation(char32_t c) {
  return char_class(c) == CharClass::kPunctuation;
}
inline bool is_mark_nonspacing(char32_t c) {
  return char_class(c) == CharClass::kMarkNonspacing;
}
/// General category C* (Cc Cf Cs Co Cn), Rust unicode_categories' is_other.
bool is_other(char32_t c);
/// The White_Space property (Rust char::is_whitespace, Oniguruma's \s).
bool is_whitespace(char32_t c);
/// Canonical combining class (0 for starters).
int combining_class(char32_t c);
/// The Unicode version the tables were generated from ("14.0.0").
const char* unicode_version();

/// UTF-8 -> code points. Ill-formed input becomes U+FFFD, one per maximal
/// subpart of an ill-formed sequence (Unicode's recommended practice; what
/// Rust's from_utf8_lossy and Python's decode(errors="replace") produce).
std::u32string decode_utf8(std::string_view bytes);
/// Appends the UTF-8 encoding of `c` (surrogates and out-of-range values are
/// written as U+FFFD).
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(std::u32string_view text);
/// `bytes` decoded lossily and re-encoded: valid UTF-8 with U+FFFD replacements.
std::string sanitize_utf8(std::string_view bytes);

/// Canonical decomposition (NFD): full decomposition of every code point
/// (Hangul syllables algorithmically), then canonical ordering of marks.
std::u32string nfd(std::u32string_view text);
/// Full lowercase mapping of one code point appended to `out` (may be several
/// code points, e.g. U+0130 -> "i\u0307"; no final-sigma context).
void append_lowercase(std::u32string& out, char32_t c);
std::u32string lowercase(std::u32string_view text);

}  // namespace luminal::tokenizer::unicode
