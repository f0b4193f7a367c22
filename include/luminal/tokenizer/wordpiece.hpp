#pragma once
// WordPiece (BERT): greedy longest-match-first over the vocabulary; pieces
// after the first carry the continuation prefix ("##"). A word longer than
// max_input_chars_per_word, or one that cannot be covered, becomes the unk
// token.

#include <cstddef>
#include <string>

#include "luminal/tokenizer/model.hpp"

namespace luminal::tokenizer {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
};

class WordPieceModel final : public Model {
public:
  /// Throws luminal::Error when the unk token is not in the vocabulary.
  WordPieceModel(Vocab vocab, WordPieceOptions options = {});

  void tokenize(std::u32string_view word, std::vector<int32_t>& ids) const override;
  const Vocab& vocab() const override { return vocab_; }
  const char* name() const override { return "WordPiece"; }
  const WordPieceOptions& options() const { return options_; }

private:
  Vocab vocab_;
  WordPieceOptions options_;
  int32_t unk_id_ = 0;
};

}  // namespace luminal::tokenizer
