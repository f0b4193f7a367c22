#include "luminal/tokenizer/pre_tokenizer.hpp"

#include <algorithm>

#include "luminal/tokenizer/byte_level.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

using Span = std::pair<std::size_t, std::size_t>;
namespace uc = unicode;

constexpr std::string_view kGpt2Source =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Source =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Source =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// The same patterns as llama.cpp writes them (without the final "|\s+"
// alternative) split identically: a lone whitespace char that "\s+(?!\S)"
// rejects becomes an unmatched gap, and Isolated keeps gaps as pieces.
constexpr std::string_view kTrailingWs = R"(|\s+)";

bool is_crlf(char32_t c) {
  return c == U'\r' || c == U'\n';
}
// [^\s\p{L}\p{N}]
bool is_other_char(char32_t c) {
  return !uc::is_whitespace(c) && !uc::is_letter(c) && !uc::is_number(c);
}

template <typename Pred>
std::size_t run_end(std::u32string_view t, std::size_t i, Pred pred) {
  while (i < t.size() && pred(t[i])) ++i;
  return i;
}

// \s+(?!\S)|\s+ at i (t[i] is whitespace): the whole run at the end of the
// text; otherwise all but the last whitespace char (which then prefixes the
// next word), or the single char when the run has length one.
std::size_t whitespace_match(std::u32string_view t, std::size_t i) {
  const std::size_t k = run_end(t, i, uc::is_whitespace);
  if (k == t.size()) return k - i;
  return k - i >= 2 ? k - i - 1 : 1;
}

// 's 't 're 've 'm 'll 'd at i (t[i] == '\''); `fold` maps a char to the
// lowercase ASCII letter it matches (identity for the case-sensitive form).
template <typename Fold>
std::size_t contraction_match(std::u32string_view t, std::size_t i, Fold fold) {
  if (i + 1 >= t.size()) return 0;
  const char32_t a = fold(t[i + 1]);
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 >= t.size()) return 0;
  const char32_t b = fold(t[i + 2]);
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

std::size_t gpt2_match(std::u32string_view t, std::size_t i) {
  const char32_t c = t[i];
  if (c == U'\'') {
    if (std::size_t len = contraction_match(t, i, [](char32_t x) { return x; })) return len;
  }
  // " ?X+" for X in \p{L}, \p{N}, [^\s\p{L}\p{N}]: the optional space only
  // helps when it is there; without it a space never starts X+.
  const std::size_t j = i + (c == U' ' ? 1 : 0);
  if (j < t.size()) {
    if (uc::is_letter(t[j])) return run_end(t, j, uc::is_letter) - i;
    if (uc::is_number(t[j])) return run_end(t, j, uc::is_number) - i;
    if (is_other_char(t[j])) return run_end(t, j, is_other_char) - i;
  }
  if (uc::is_whitespace(c)) return whitespace_match(t, i);
  return 0;
}

// Oniguruma's (?i) folds 'ſ' (U+017F) to 's' too.
char32_t ascii_fold(char32_t x) {
  if (x >= U'A' && x <= U'Z') return x + 32;
  if (x == 0x17F) return U's';
  return x;
}

std::size_t llama3_match(std::u32string_view t, std::size_t i, std::size_t max_digits) {
  const char32_t c = t[i];
  if (c == U'\'') {
    if (std::size_t len = contraction_match(t, i, ascii_fold)) return len;
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!is_crlf(c) && !uc::is_letter(c) && !uc::is_number(c) && i + 1 < t.size() &&
      uc::is_letter(t[i + 1])) {
    return run_end(t, i + 1, uc::is_letter) - i;
  }
  if (uc::is_letter(c)) return run_end(t, i, uc::is_letter) - i;
  // \p{N}{1,max}
  if (uc::is_number(c)) return std::min(run_end(t, i, uc::is_number) - i, max_digits);
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const std::size_t j = i + (c == U' ' ? 1 : 0);
  if (j < t.size() && is_other_char(t[j])) {
    return run_end(t, run_end(t, j, is_other_char), is_crlf) - i;
  }
  if (uc::is_whitespace(c)) {
    // \s*[\r\n]+ : greedy \s* backs off to the last \r or \n of the run.
    const std::size_t k = run_end(t, i, uc::is_whitespace);
    for (std::size_t p = k; p > i; --p) {
      if (is_crlf(t[p - 1])) return p - i;
    }
    return whitespace_match(t, i);
  }
  return 0;
}

// Splits [0, n) into match / gap parts and applies the HF delimiter behavior;
// appends the non-empty pieces to `out`.
void split_by_matches(std::u32string_view text, const std::vector<Span>& matches,
                      SplitBehavior behavior, std::vector<std::u32string>& out) {
  std::vector<std::pair<Span, bool>> parts;
  std::size_t pos = 0;
  for (const Span& m : matches) {
    if (m.first > pos) parts.push_back({{pos, m.first}, false});
    parts.push_back({m, true});
    pos = m.second;
  }
  if (pos < text.size()) parts.push_back({{pos, text.size()}, false});

  std::vector<Span> pieces;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const auto& [span, is_match] : parts) {
        if (!is_match) pieces.push_back(span);
      }
      break;
    case SplitBehavior::kIsolated:
      for (const auto& part : parts) pieces.push_back(part.first);
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& [span, is_match] : parts) {
        if (is_match && !previous_match && !pieces.empty()) {
          pieces.back().second = span.second;
        } else {
          pieces.push_back(span);
        }
        previous_match = is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->second && !previous_match && !pieces.empty()) {
          pieces.back().first = it->first.first;
        } else {
          pieces.push_back(it->first);
        }
        previous_match = it->second;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    case SplitBehavior::kContiguous:
      for (const auto& [span, is_match] : parts) {
        if (is_match == previous_match && !pieces.empty()) {
          pieces.back().second = span.second;
        } else {
          pieces.push_back(span);
        }
        previous_match = is_match;
      }
      break;
  }
  for (const Span& s : pieces) {
    if (s.second > s.first) out.emplace_back(text.substr(s.first, s.second - s.first));
  }
}

// Every char satisfying `pred` as a one-char match.
template <typename Pred>
std::vector<Span> char_matches(std::u32string_view text, Pred pred) {
  std::vector<Span> matches;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (pred(text[i])) matches.push_back({i, i + 1});
  }
  return matches;
}

std::vector<Span> literal_matches(std::u32string_view text, std::u32string_view literal) {
  std::vector<Span> matches;
  if (literal.empty()) return matches;
  for (std::size_t pos = text.find(literal); pos != std::u32string_view::npos;
       pos = text.find(literal, pos + literal.size())) {
    matches.push_back({pos, pos + literal.size()});
  }
  return matches;
}

std::u32string byte_spelling(std::u32string_view piece) {
  return bytes_to_chars(uc::encode_utf8(piece));
}

// One step applied to one piece.
struct StepVisitor {
  std::u32string_view piece;
  std::vector<std::u32string>& out;

  void operator()(const ByteLevelPreTokenizer& s) const {
    std::u32string text(piece);
    if (s.add_prefix_space && (text.empty() || text[0] != U' ')) text.insert(text.begin(), U' ');
    std::vector<std::u32string> parts;
    if (s.use_regex) {
      split_by_matches(text, regex_matches(SplitRegex::kGpt2, text), SplitBehavior::kIsolated,
                       parts);
    } else if (!text.empty()) {
      parts.push_back(std::move(text));
    }
    for (const auto& p : parts) out.push_back(byte_spelling(p));
  }
  void operator()(const SplitPreTokenizer& s) const {
    split_by_matches(piece,
                     s.regex ? regex_matches(*s.regex, piece) : literal_matches(piece, s.literal),
                     s.behavior, out);
  }
  void operator()(const DigitsPreTokenizer& s) const {
    split_by_matches(piece, char_matches(piece, uc::is_number),
                     s.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
                     out);
  }
  void operator()(const BertPreTokenizer&) const {
    std::vector<std::u32string> words;
    split_by_matches(piece, char_matches(piece, uc::is_whitespace), SplitBehavior::kRemoved, words);
    for (const auto& w : words) {
      split_by_matches(w, char_matches(w, is_bert_punctuation), SplitBehavior::kIsolated, out);
    }
  }
  void operator()(const WhitespaceSplitPreTokenizer&) const {
    split_by_matches(piece, char_matches(piece, uc::is_whitespace), SplitBehavior::kRemoved, out);
  }
};

}  // namespace

std::optional<SplitRegex> recognize_split_regex(std::string_view pattern) {
  for (SplitRegex r : {SplitRegex::kGpt2, SplitRegex::kLlama3, SplitRegex::kQwen2}) {
    const std::string_view source = split_regex_source(r);
    if (pattern == source) return r;
    if (pattern == source.substr(0, source.size() - kTrailingWs.size())) return r;
  }
  return std::nullopt;
}

std::string_view split_regex_source(SplitRegex regex) {
  switch (regex) {
    case SplitRegex::kGpt2:
      return kGpt2Source;
    case SplitRegex::kLlama3:
      return kLlama3Source;
    case SplitRegex::kQwen2:
      return kQwen2Source;
  }
  return kGpt2Source;
}

std::vector<Span> regex_matches(SplitRegex regex, std::u32string_view text) {
  std::vector<Span> matches;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 0;
    switch (regex) {
      case SplitRegex::kGpt2:
        len = gpt2_match(text, i);
        break;
      case SplitRegex::kLlama3:
        len = llama3_match(text, i, 3);
        break;
      case SplitRegex::kQwen2:
        len = llama3_match(text, i, 1);
        break;
    }
    if (len == 0) {
      ++i;  // no match starts here: the char belongs to a gap
      continue;
    }
    matches.push_back({i, i + len});
    i += len;
  }
  return matches;
}

bool is_bert_punctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  }
  return uc::is_punctuation(c);
}

std::vector<std::u32string> PreTokenizer::split(std::u32string_view text) const {
  std::vector<std::u32string> pieces;
  if (!text.empty()) pieces.emplace_back(text);
  for (const PreTokenizerStep& step : steps_) {
    std::vector<std::u32string> next;
    next.reserve(pieces.size());
    for (const auto& piece : pieces) std::visit(StepVisitor{piece, next}, step);
    pieces = std::move(next);
  }
  return pieces;
}

bool PreTokenizer::byte_level() const {
  return std::any_of(steps_.begin(), steps_.end(), [](const PreTokenizerStep& s) {
    return std::holds_alternative<ByteLevelPreTokenizer>(s);
  });
}

}  // namespace luminal::tokenizer
