#pragma once
// Incremental decoding for streaming generated text: feed ids one at a time,
// get back the text they complete. A token may end in the middle of a UTF-8
// character (byte-level BPE) or change how the previous token reads
// (WordPiece's "##"), so text is released only once it decodes without a
// trailing U+FFFD, relative to a window of recent ids (HF's DecodeStream).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::tokenizer {

class DecodeStream {
public:
  /// `tokenizer` must outlive the stream.
  explicit DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens = false)
      : tokenizer_(&tokenizer), skip_special_tokens_(skip_special_tokens) {}

  /// The text `id` completes (possibly empty while a character is incomplete).
  std::string step(int32_t id);

private:
  const Tokenizer* tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> ids_;
  std::string prefix_;
  std::size_t prefix_index_ = 0;
};

}  // namespace luminal::tokenizer
