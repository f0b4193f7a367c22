#include "luminal/tokenizer/unicode.hpp"

#include <algorithm>
#include <cstddef>

#include "unicode_tables.hpp"

namespace luminal::tokenizer::unicode {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Hangul syllable decomposition constants (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 11172;

const tables::Mapping* find_mapping(const tables::Mapping* table, std::size_t size, char32_t c) {
  const tables::Mapping* end = table + size;
  const tables::Mapping* it = std::lower_bound(
      table, end, c, [](const tables::Mapping& m, char32_t v) { return m.cp < v; });
  return (it != end && it->cp == c) ? it : nullptr;
}

}  // namespace

CharClass char_class(char32_t c) {
  if (c < 0x80) {
    // ASCII fast path (the common case for code and English text).
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kNumber;
  }
  const tables::ClassRange* begin = tables::kClassRanges;
  const tables::ClassRange* end = begin + tables::kClassRangesSize;
  const tables::ClassRange* it = std::upper_bound(
      begin, end, c, [](char32_t v, const tables::ClassRange& r) { return v < r.first; });
  if (it == begin) return CharClass::kUnassigned;
  --it;
  return c <= it->last ? it->cls : CharClass::kUnassigned;
}

bool is_other(char32_t c) {
  const CharClass cls = char_class(c);
  return cls == CharClass::kOther || cls == CharClass::kUnassigned;
}

bool is_whitespace(char32_t c) {
  // PropList.txt White_Space (stable since Unicode 6.3).
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

int combining_class(char32_t c) {
  if (c < 0x300) return 0;
  const tables::CccRange* begin = tables::kCccRanges;
  const tables::CccRange* end = begin + tables::kCccRangesSize;
  const tables::CccRange* it = std::upper_bound(
      begin, end, c, [](char32_t v, const tables::CccRange& r) { return v < r.first; });
  if (it == begin) return 0;
  --it;
  return c <= it->last ? it->ccc : 0;
}

const char* unicode_version() {
  return tables::kUnicodeVersion;
}

std::u32string decode_utf8(std::string_view bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    // Well-formed sequences (Unicode Table 3-7): the lead byte fixes the length
    // and the range of the second byte; later bytes are 80..BF.
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    char32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
      cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      cp = b0 & 0x0F;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      cp = b0 & 0x07;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
    } else {
      out.push_back(kReplacement);  // C0, C1, F5..FF or a stray continuation byte
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k < len && i + k < n; ++k) {
      const auto b = static_cast<unsigned char>(bytes[i + k]);
      const unsigned char klo = k == 1 ? lo : 0x80, khi = k == 1 ? hi : 0xBF;
      if (b < klo || b > khi) break;
      cp = (cp << 6) | (b & 0x3F);
    }
    // A truncated or broken sequence is one maximal subpart: one U+FFFD, and
    // decoding resumes at the byte that broke it.
    out.push_back(k == len ? cp : kReplacement);
    i += k;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = kReplacement;
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

std::string sanitize_utf8(std::string_view bytes) {
  return encode_utf8(decode_utf8(bytes));
}

std::u32string nfd(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c >= kSBase && c < kSBase + kSCount) {
      const char32_t s = c - kSBase;
      out.push_back(kLBase + s / kNCount);
      out.push_back(kVBase + (s % kNCount) / kTCount);
      if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    } else if (c < 0xC0) {
      out.push_back(c);  // nothing below U+00C0 decomposes
    } else if (const tables::Mapping* m =
                   find_mapping(tables::kDecomposition, tables::kDecompositionSize, c)) {
      out.append(tables::kDecompositionData + m->offset, m->length);
    } else {
      out.push_back(c);
    }
  }
  // Canonical ordering: each run of non-starters is stably sorted by class.
  for (std::size_t i = 0; i < out.size();) {
    if (combining_class(out[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < out.size() && combining_class(out[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(i),
                       out.begin() + static_cast<std::ptrdiff_t>(j), [](char32_t a, char32_t b) {
                         return combining_class(a) < combining_class(b);
                       });
    }
    i = j;
  }
  return out;
}

void append_lowercase(std::u32string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back((c >= 'A' && c <= 'Z') ? c + 32 : c);
    return;
  }
  if (const tables::Mapping* m = find_mapping(tables::kLowercase, tables::kLowercaseSize, c)) {
    out.append(tables::kLowercaseData + m->offset, m->length);
  } else {
    out.push_back(c);
  }
}

std::u32string lowercase(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) append_lowercase(out, c);
  return out;
}

}  // namespace luminal::tokenizer::unicode
