#include "luminal/tokenizer/decode_stream.hpp"

#include "luminal/error.hpp"

namespace luminal::tokenizer {
namespace {

bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

}  // namespace

std::string DecodeStream::step(int32_t id) {
  if (prefix_.empty() && !ids_.empty()) {
    std::string new_prefix = tokenizer_->decode(ids_, skip_special_tokens_);
    if (!ends_with_replacement(new_prefix)) {
      prefix_ = std::move(new_prefix);
      prefix_index_ = ids_.size();
    }
  }
  ids_.push_back(id);
  const std::string text = tokenizer_->decode(ids_, skip_special_tokens_);
  if (text.size() <= prefix_.size() || ends_with_replacement(text)) return {};
  if (text.compare(0, prefix_.size(), prefix_) != 0) {
    throw Error("DecodeStream: the decoded text no longer starts with the text already emitted");
  }
  std::string fresh = text.substr(prefix_.size());
  // Keep the ids from the previous window's end on: enough context for the
  // next token, and the cost of a step stays constant.
  const std::size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_index_));
  prefix_ = tokenizer_->decode(ids_, skip_special_tokens_);
  prefix_index_ = new_prefix_index;
  return fresh;
}

}  // namespace luminal::tokenizer
