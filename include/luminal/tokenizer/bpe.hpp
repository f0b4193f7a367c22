#pragma once
// Byte-pair encoding over a ranked merge list (GPT-2, Llama-3, Qwen, SmolLM).
// A word starts as one symbol per code point; the adjacent pair with the
// lowest merge rank (leftmost on ties) is merged until no pair has a rank —
// with a priority queue over a linked list of symbols, as HF `tokenizers`
// does, so a long word costs O(n log n). Results are cached per word.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "luminal/tokenizer/model.hpp"

namespace luminal::tokenizer {

struct BpeOptions {
  /// Token for a symbol missing from the vocabulary; without one such
  /// symbols are dropped (HF's behaviour; byte-level vocabularies have all 256).
  std::optional<std::string> unk_token;
  /// A word that is itself in the vocabulary is one token, merges or not
  /// (Llama-3's tokenizer.json sets this).
  bool ignore_merges = false;
};

class BpeModel final : public Model {
public:
  /// `merges` in rank order (rank = index). Throws luminal::Error when a merge
  /// names a token (or makes one) that is not in the vocabulary, or when the
  /// unk token is not in it.
  BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options = {});

  void tokenize(std::u32string_view word, std::vector<int32_t>& ids) const override;
  const Vocab& vocab() const override { return vocab_; }
  const char* name() const override { return "BPE"; }
  std::size_t merge_count() const { return merges_.size(); }

private:
  struct Merge {
    int32_t rank;
    int32_t new_id;
  };
  void merge_word(std::u32string_view word, std::vector<int32_t>& ids) const;

  Vocab vocab_;
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  std::unordered_map<char32_t, int32_t> char_ids_;  // single-code-point tokens
  std::unordered_map<uint64_t, Merge> merges_;      // (left id, right id) -> merge
  // Word -> ids. Bounded; guarded by a mutex so that encode stays const and
  // thread-safe.
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::u32string, std::vector<int32_t>> cache_;
};

/// "a b" (one space) -> {"a", "b"}; throws luminal::Error naming the merge's
/// index otherwise.
std::pair<std::string, std::string> split_merge(std::string_view merge, std::size_t index);

}  // namespace luminal::tokenizer
