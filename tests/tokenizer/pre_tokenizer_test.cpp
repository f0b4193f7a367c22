// Pre-tokenizer splits, hand-derived from the regexes' leftmost-first
// alternation (the pytest suite compares every split with HF `tokenizers`).

#include "luminal/tokenizer/pre_tokenizer.hpp"

#include <gtest/gtest.h>

#include "luminal/tokenizer/normalizer.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

std::vector<std::string> split(const PreTokenizer& p, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& piece : p.split(unicode::decode_utf8(text))) {
    out.push_back(unicode::encode_utf8(piece));
  }
  return out;
}

using Pieces = std::vector<std::string>;

PreTokenizer regex_split(SplitRegex r) {
  return PreTokenizer({SplitPreTokenizer{r, {}, SplitBehavior::kIsolated}});
}

TEST(TokenizerPreTokenizer, Gpt2Regex) {
  const PreTokenizer p = regex_split(SplitRegex::kGpt2);
  // A whitespace run gives its last char to the next word; at the end it stays whole.
  EXPECT_EQ(split(p, "Hello world's  test\n"),
            (Pieces{"Hello", " world", "'s", " ", " test", "\n"}));
  // Contractions are case-sensitive: "'M" is punctuation then a letter.
  EXPECT_EQ(split(p, "I'M 12345"), (Pieces{"I", "'", "M", " 12345"}));
  // A lone tab before a word is not a prefix (only ' ' is optional).
  EXPECT_EQ(split(p, "a\tb"), (Pieces{"a", "\t", "b"}));
  EXPECT_EQ(split(p, "x  !!"), (Pieces{"x", " ", " !!"}));
  EXPECT_EQ(split(p, "  "), (Pieces{"  "}));
  EXPECT_EQ(split(p, "caf\u00E9 \u65E5\u672C"), (Pieces{"caf\u00E9", " \u65E5\u672C"}));
}

TEST(TokenizerPreTokenizer, Llama3Regex) {
  const PreTokenizer p = regex_split(SplitRegex::kLlama3);
  EXPECT_EQ(split(p, "I'M 12345 ab\n\n cd"),
            (Pieces{"I", "'M", " ", "123", "45", " ab", "\n\n", " cd"}));
  // Any one non-letter, non-digit, non-newline char prefixes a word.
  EXPECT_EQ(split(p, "\tfoo \"bar"), (Pieces{"\tfoo", " \"", "bar"}));
  // Punctuation takes the newlines after it; whitespace ends at its last newline.
  EXPECT_EQ(split(p, "...\n\nx"), (Pieces{"...\n\n", "x"}));
  EXPECT_EQ(split(p, "a \n  b"), (Pieces{"a", " \n", " ", " b"}));
  EXPECT_EQ(split(p, "'\u017F"), (Pieces{"'\u017F"}));  // (?i) folds ſ to s
}

TEST(TokenizerPreTokenizer, Qwen2RegexSplitsEachDigit) {
  EXPECT_EQ(split(regex_split(SplitRegex::kQwen2), "ab 1234"),
            (Pieces{"ab", " ", "1", "2", "3", "4"}));
}

TEST(TokenizerPreTokenizer, RecognizesRegexSources) {
  for (SplitRegex r : {SplitRegex::kGpt2, SplitRegex::kLlama3, SplitRegex::kQwen2}) {
    EXPECT_EQ(recognize_split_regex(split_regex_source(r)), r);
  }
  // llama.cpp spells GPT-2's without the final "|\s+".
  EXPECT_EQ(recognize_split_regex(
                R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))"),
            SplitRegex::kGpt2);
  EXPECT_FALSE(recognize_split_regex(R"(\w+)").has_value());
}

TEST(TokenizerPreTokenizer, SplitBehaviors) {
  auto with = [](SplitBehavior b) {
    return PreTokenizer({SplitPreTokenizer{std::nullopt, U"-", b}});
  };
  EXPECT_EQ(split(with(SplitBehavior::kRemoved), "a-b--c"), (Pieces{"a", "b", "c"}));
  EXPECT_EQ(split(with(SplitBehavior::kIsolated), "a-b--c"),
            (Pieces{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(split(with(SplitBehavior::kMergedWithPrevious), "a-b--c"),
            (Pieces{"a-", "b-", "-", "c"}));
  EXPECT_EQ(split(with(SplitBehavior::kMergedWithNext), "a-b--c"), (Pieces{"a", "-b", "-", "-c"}));
  EXPECT_EQ(split(with(SplitBehavior::kContiguous), "a-b--c"), (Pieces{"a", "-", "b", "--", "c"}));
}

TEST(TokenizerPreTokenizer, DigitsAndByteLevel) {
  EXPECT_EQ(split(PreTokenizer({DigitsPreTokenizer{true}}), "ab12c"),
            (Pieces{"ab", "1", "2", "c"}));
  EXPECT_EQ(split(PreTokenizer({DigitsPreTokenizer{false}}), "ab12c"), (Pieces{"ab", "12", "c"}));
  // Byte spelling: ' ' -> 'Ġ', 'é' (C3 A9) -> 'Ã' '©'.
  EXPECT_EQ(split(PreTokenizer({ByteLevelPreTokenizer{false, true}}), "Hi th\u00E9re"),
            (Pieces{"Hi", "\u0120th\u00C3\u00A9re"}));
  EXPECT_EQ(split(PreTokenizer({ByteLevelPreTokenizer{true, true}}), "Hi"), (Pieces{"\u0120Hi"}));
  EXPECT_EQ(split(PreTokenizer({ByteLevelPreTokenizer{false, false}}), "a b"),
            (Pieces{"a\u0120b"}));
  // SmolLM: digits isolated before the GPT-2 regex (" 12" is not one piece).
  EXPECT_EQ(
      split(PreTokenizer({DigitsPreTokenizer{true}, ByteLevelPreTokenizer{false, true}}), "x 12"),
      (Pieces{"x", "\u0120", "1", "2"}));
}

// BERT's BasicTokenizer examples (google-research/bert tokenization_test.py).
TEST(TokenizerPreTokenizer, BertBasicTokenizer) {
  const Normalizer norm({BertNormalizer{}});
  const PreTokenizer pre({BertPreTokenizer{}});
  auto basic = [&](std::u32string_view text) {
    std::vector<std::string> out;
    for (const auto& w : pre.split(norm.normalize(text))) out.push_back(unicode::encode_utf8(w));
    return out;
  };
  EXPECT_EQ(basic(U" \tHeLLo!how  \n Are yoU?  "),
            (Pieces{"hello", "!", "how", "are", "you", "?"}));
  EXPECT_EQ(basic(U"H\u00E9llo"), (Pieces{"hello"}));
  EXPECT_EQ(basic(U"ah\u535A\u63A8zz"), (Pieces{"ah", "\u535A", "\u63A8", "zz"}));
  // ASCII symbols count as punctuation; control characters vanish; U+0085
  // is a control character before it is whitespace.
  EXPECT_EQ(basic(U"a$b\u0007c\u0085d"), (Pieces{"a", "$", "bcd"}));
  // Without lowercasing, accents stay.
  const Normalizer cased({BertNormalizer{true, true, std::nullopt, false}});
  EXPECT_EQ(unicode::encode_utf8(cased.normalize(U"H\u00E9llo")), "H\u00E9llo");
  EXPECT_TRUE(is_bert_punctuation(U'`'));
  EXPECT_TRUE(is_bert_punctuation(0x3001));
  EXPECT_FALSE(is_bert_punctuation(0x00A9));  // © is a symbol, not ASCII
}

}  // namespace
}  // namespace luminal::tokenizer
