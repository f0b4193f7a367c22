#include "luminal/tokenizer/normalizer.hpp"

#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

namespace uc = unicode;

std::u32string strip_marks(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (!uc::is_mark_nonspacing(c)) out.push_back(c);
  }
  return out;
}

std::u32string bert_normalize(const BertNormalizer& n, std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 4);
  for (char32_t c : text) {
    if (n.clean_text) {
      // HF's order: control characters (C*, but \t \n \r count as whitespace)
      // are dropped first, so U+000B, U+000C and U+0085 go although they are
      // White_Space; the remaining whitespace becomes ' '.
      const bool tab_or_newline = c == U'\t' || c == U'\n' || c == U'\r';
      if (c == 0 || c == 0xFFFD || (!tab_or_newline && uc::is_other(c))) continue;
      if (tab_or_newline || uc::is_whitespace(c)) c = U' ';
    }
    if (n.handle_chinese_chars && is_cjk_ideograph(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  if (n.strip_accents.value_or(n.lowercase)) out = strip_marks(uc::nfd(out));
  if (n.lowercase) out = uc::lowercase(out);
  return out;
}

struct StepVisitor {
  std::u32string_view text;
  std::u32string operator()(const BertNormalizer& n) const { return bert_normalize(n, text); }
  std::u32string operator()(const NfdNormalizer&) const { return uc::nfd(text); }
  std::u32string operator()(const LowercaseNormalizer&) const { return uc::lowercase(text); }
  std::u32string operator()(const StripAccentsNormalizer&) const { return strip_marks(text); }
};

}  // namespace

bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string Normalizer::normalize(std::u32string_view text) const {
  std::u32string out(text);
  for (const NormalizerStep& step : steps_) out = std::visit(StepVisitor{out}, step);
  return out;
}

}  // namespace luminal::tokenizer
