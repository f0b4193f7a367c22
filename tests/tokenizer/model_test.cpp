// BPE and WordPiece models on small vocabularies with hand-computed results.

#include <gtest/gtest.h>

#include "luminal/error.hpp"
#include "luminal/tokenizer/bpe.hpp"
#include "luminal/tokenizer/wordpiece.hpp"

namespace luminal::tokenizer {
namespace {

Vocab make_vocab(const std::vector<std::string>& tokens) {
  Vocab v;
  for (std::size_t i = 0; i < tokens.size(); ++i) v.add(tokens[i], static_cast<int32_t>(i));
  return v;
}

std::vector<int32_t> run(const Model& m, std::u32string_view word) {
  std::vector<int32_t> ids;
  m.tokenize(word, ids);
  return ids;
}

TEST(TokenizerBpe, MergesLowestRankFirst) {
  //                      0    1    2    3     4      5
  const BpeModel m(make_vocab({"a", "b", "c", "ab", "abc", "bc"}),
                   {{"a", "b"}, {"ab", "c"}, {"b", "c"}});
  // a b c b c: (a,b) rank 0 -> ab c b c; (ab,c) rank 1 -> abc b c; (b,c) rank 2 -> abc bc.
  EXPECT_EQ(run(m, U"abcbc"), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(run(m, U"cab"), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(run(m, U"abcbc"), (std::vector<int32_t>{4, 5}));  // from the cache
  EXPECT_EQ(m.merge_count(), 3u);
}

TEST(TokenizerBpe, EqualRanksMergeLeftmostFirst) {
  const BpeModel m(make_vocab({"a", "aa"}), {{"a", "a"}});
  EXPECT_EQ(run(m, U"aaa"), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(run(m, U"aaaa"), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(run(m, U"aaaaa"), (std::vector<int32_t>{1, 1, 0}));
}

TEST(TokenizerBpe, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  const auto vocab = [] { return make_vocab({"a", "b", "c", "ab", "abc"}); };
  EXPECT_EQ(run(BpeModel(vocab(), {{"a", "b"}}), U"abc"), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(run(BpeModel(vocab(), {{"a", "b"}}, {std::nullopt, true}), U"abc"),
            (std::vector<int32_t>{4}));
}

TEST(TokenizerBpe, UnknownSymbols) {
  EXPECT_EQ(run(BpeModel(make_vocab({"a", "<unk>"}), {}), U"axa"),
            (std::vector<int32_t>{0, 0}));  // dropped without an unk token
  EXPECT_EQ(run(BpeModel(make_vocab({"a", "<unk>"}), {}, {"<unk>", false}), U"axa"),
            (std::vector<int32_t>{0, 1, 0}));
}

TEST(TokenizerBpe, RejectsBadMerges) {
  EXPECT_THROW(BpeModel(make_vocab({"a", "b"}), {{"a", "b"}}), Error);  // "ab" missing
  EXPECT_THROW(BpeModel(make_vocab({"a"}), {}, {"<unk>", false}), Error);
  EXPECT_THROW(split_merge("ab", 3), Error);
  EXPECT_THROW(split_merge("a b c", 3), Error);
  EXPECT_EQ(split_merge("\u0120 t", 0), (std::pair<std::string, std::string>{"\u0120", "t"}));
  Vocab v;
  v.add("x", 0);
  EXPECT_THROW(v.add("y", 0), Error);
  EXPECT_THROW(v.add("z", -1), Error);
}

TEST(TokenizerBpe, LongWordIsFast) {
  // 200k symbols of one merge: the priority queue keeps this O(n log n).
  const BpeModel m(make_vocab({"a", "aa"}), {{"a", "a"}});
  const std::u32string word(200000, U'a');
  EXPECT_EQ(run(m, word).size(), 100000u);
}

// google-research/bert tokenization_test.py, test_wordpiece_tokenizer.
TEST(TokenizerWordPiece, GreedyLongestMatchFirst) {
  //                                 0        1        2        3       4         5      6
  const WordPieceModel m(make_vocab(
      {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"}));
  //                                 7     8       9
  EXPECT_EQ(run(m, U"unwanted"), (std::vector<int32_t>{7, 4, 5}));
  EXPECT_EQ(run(m, U"running"), (std::vector<int32_t>{8, 9}));
  EXPECT_EQ(run(m, U"unwantedX"), (std::vector<int32_t>{0}));  // not coverable: one [UNK]
  EXPECT_EQ(run(m, U""), (std::vector<int32_t>{}));
}

TEST(TokenizerWordPiece, LongWordsAreUnknown) {
  WordPieceOptions opts;
  opts.max_input_chars_per_word = 4;
  const WordPieceModel m(make_vocab({"[UNK]", "a", "##a"}), opts);
  EXPECT_EQ(run(m, U"aaaa"), (std::vector<int32_t>{1, 2, 2, 2}));
  EXPECT_EQ(run(m, U"aaaaa"), (std::vector<int32_t>{0}));
  EXPECT_THROW(WordPieceModel(make_vocab({"a"})), Error);  // no [UNK]
}

}  // namespace
}  // namespace luminal::tokenizer
