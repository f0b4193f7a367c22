#include "luminal/tokenizer/wordpiece.hpp"

#include "luminal/error.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {

WordPieceModel::WordPieceModel(Vocab vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  auto unk = vocab_.find(options_.unk_token);
  if (!unk) {
    throw Error("WordPiece: unk token '" + options_.unk_token + "' is not in the vocabulary");
  }
  unk_id_ = *unk;
}

void WordPieceModel::tokenize(std::u32string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (word.size() > options_.max_input_chars_per_word) {
    ids.push_back(unk_id_);
    return;
  }
  // Byte offsets of the code point boundaries of the UTF-8 spelling.
  std::string utf8;
  std::vector<std::size_t> bounds{0};
  for (char32_t c : word) {
    unicode::append_utf8(utf8, c);
    bounds.push_back(utf8.size());
  }
  const std::size_t first_piece = ids.size();
  std::string candidate;
  std::size_t start = 0;  // index into bounds
  while (start + 1 < bounds.size()) {
    std::optional<int32_t> found;
    std::size_t end = bounds.size() - 1;
    for (; end > start; --end) {
      candidate.clear();
      if (start > 0) candidate += options_.continuing_subword_prefix;
      candidate.append(utf8, bounds[start], bounds[end] - bounds[start]);
      found = vocab_.find(candidate);
      if (found) break;
    }
    if (!found) {
      // Some part cannot be covered: the whole word is unknown.
      ids.resize(first_piece);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(*found);
    start = end;
  }
}

}  // namespace luminal::tokenizer
