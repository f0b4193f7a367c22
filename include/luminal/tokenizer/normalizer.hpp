#pragma once
// Normalization applied to text before pre-tokenization (HF `tokenizers`'
// normalizers): BERT's (clean text, spaces around CJK ideographs, accent
// stripping via NFD, lowercasing) and its parts on their own.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace luminal::tokenizer {

/// HF BertNormalizer, in its order: clean text (drop NUL, U+FFFD and control
/// characters other than \t \n \r; every whitespace char becomes ' '), put
/// spaces around CJK ideographs, strip accents (NFD, then drop nonspacing
/// marks; defaults to `lowercase` when unset), lowercase.
struct BertNormalizer {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;
  bool lowercase = true;
};
struct NfdNormalizer {};
struct LowercaseNormalizer {};
/// Drops nonspacing marks (Mn); meant to follow NFD.
struct StripAccentsNormalizer {};

using NormalizerStep =
    std::variant<BertNormalizer, NfdNormalizer, LowercaseNormalizer, StripAccentsNormalizer>;

/// The CJK Unified Ideographs blocks BERT puts spaces around (as HF and
/// Google's BERT define them: not Hiragana, Katakana or Hangul).
bool is_cjk_ideograph(char32_t c);

/// A sequence of normalization steps (HF normalizers.Sequence).
class Normalizer {
public:
  Normalizer() = default;
  explicit Normalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {}

  std::u32string normalize(std::u32string_view text) const;
  bool empty() const { return steps_.empty(); }
  const std::vector<NormalizerStep>& steps() const { return steps_; }

private:
  std::vector<NormalizerStep> steps_;
};

}  // namespace luminal::tokenizer
