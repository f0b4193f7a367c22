#pragma once
// Pre-tokenization: splitting normalized text into the words the model
// (BPE / WordPiece) encodes one at a time, with the semantics of Hugging Face
// `tokenizers`' pre-tokenizers. The splitting regexes of the byte-level BPE
// families (GPT-2, Llama-3, Qwen2) are implemented by hand over code points —
// luminal has no regex engine — reproducing Oniguruma's leftmost-first
// alternation with greedy backtracking for exactly those patterns.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace luminal::tokenizer {

/// The splitting regexes luminal knows.
enum class SplitRegex {
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  /// (GPT-2; also what a ByteLevel pre-tokenizer with use_regex applies).
  kGpt2,
  /// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  ///  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (Llama-3)
  kLlama3,
  /// Llama-3's with \p{N} (one digit per piece) in place of \p{N}{1,3} (Qwen2).
  kQwen2,
};

/// The SplitRegex a tokenizer.json regex string is, or nullopt for a regex
/// luminal does not implement.
std::optional<SplitRegex> recognize_split_regex(std::string_view pattern);
/// The regex source text of a SplitRegex (as tokenizer.json spells it).
std::string_view split_regex_source(SplitRegex regex);
/// [begin, end) of every match of `regex` in `text`, left to right.
std::vector<std::pair<std::size_t, std::size_t>> regex_matches(SplitRegex regex,
                                                               std::u32string_view text);

/// What becomes of the matched delimiters (HF SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/// Byte-level: optionally prefix a space, optionally split by the GPT-2 regex,
/// then spell every UTF-8 byte of each piece with byte_to_char().
struct ByteLevelPreTokenizer {
  bool add_prefix_space = false;
  bool use_regex = true;
};
/// Split by a known regex, or by a literal string when `regex` is empty.
struct SplitPreTokenizer {
  std::optional<SplitRegex> regex;
  std::u32string literal;
  SplitBehavior behavior = SplitBehavior::kIsolated;
};
/// Numbers (Unicode N*): each digit its own piece, or runs of digits.
struct DigitsPreTokenizer {
  bool individual_digits = false;
};
/// BERT: split on whitespace (dropped), then isolate each punctuation char.
struct BertPreTokenizer {};
/// Split on whitespace, dropping it.
struct WhitespaceSplitPreTokenizer {};

using PreTokenizerStep = std::variant<ByteLevelPreTokenizer, SplitPreTokenizer, DigitsPreTokenizer,
                                      BertPreTokenizer, WhitespaceSplitPreTokenizer>;

/// BERT's punctuation: Unicode P* or any ASCII punctuation/symbol character.
bool is_bert_punctuation(char32_t c);

/// A sequence of pre-tokenizer steps; each step splits every piece the
/// previous one produced (HF pre_tokenizers.Sequence).
class PreTokenizer {
public:
  PreTokenizer() = default;
  explicit PreTokenizer(std::vector<PreTokenizerStep> steps) : steps_(std::move(steps)) {}

  /// The words of `text`, in order, none empty. Byte-level steps turn the
  /// pieces into byte spellings (see byte_level.hpp).
  std::vector<std::u32string> split(std::u32string_view text) const;
  const std::vector<PreTokenizerStep>& steps() const { return steps_; }
  /// Whether a ByteLevel step is present (the model's vocabulary is then
  /// spelled in byte characters).
  bool byte_level() const;

private:
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace luminal::tokenizer
