#include "luminal/tokenizer/bpe.hpp"

#include <queue>

#include "luminal/error.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

// Entries beyond this clear the cache (HF caps its cache the same way); text
// with that many distinct words gains little from caching.
constexpr std::size_t kCacheCapacity = 1 << 16;

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  bool alive;
};

struct Candidate {
  int32_t rank;
  int32_t pos;
  int32_t new_id;
};
// std::priority_queue pops the largest: invert so the lowest rank, then the
// leftmost position, comes first.
struct CandidateOrder {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

}  // namespace

std::pair<std::string, std::string> split_merge(std::string_view merge, std::size_t index) {
  const std::size_t space = merge.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 >= merge.size() ||
      merge.find(' ', space + 1) != std::string_view::npos) {
    throw Error("BPE merges: merge " + std::to_string(index) + " '" + std::string(merge) +
                "' is not two tokens separated by one space");
  }
  return {std::string(merge.substr(0, space)), std::string(merge.substr(space + 1))};
}

BpeModel::BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  if (options_.unk_token) {
    unk_id_ = vocab_.find(*options_.unk_token);
    if (!unk_id_) {
      throw Error("BPE: unk token '" + *options_.unk_token + "' is not in the vocabulary");
    }
  }
  for (int32_t id = 0; id < vocab_.size(); ++id) {
    const std::string* token = vocab_.token(id);
    if (token == nullptr) continue;
    const std::u32string cps = unicode::decode_utf8(*token);
    if (cps.size() == 1) char_ids_.emplace(cps[0], id);
  }
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto left_id = vocab_.find(left);
    const auto right_id = vocab_.find(right);
    const auto new_id = vocab_.find(left + right);
    if (!left_id || !right_id || !new_id) {
      throw Error("BPE merges: merge " + std::to_string(rank) + " '" + left + " " + right +
                  "' refers to '" +
                  (!left_id    ? left
                   : !right_id ? right
                               : left + right) +
                  "', which is not in the vocabulary");
    }
    // A repeated pair keeps its first (best) rank.
    merges_.emplace(pair_key(*left_id, *right_id), Merge{static_cast<int32_t>(rank), *new_id});
  }
}

void BpeModel::tokenize(std::u32string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (auto id = vocab_.find(unicode::encode_utf8(word))) {
      ids.push_back(*id);
      return;
    }
  }
  std::u32string key(word);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> word_ids;
  merge_word(word, word_ids);
  ids.insert(ids.end(), word_ids.begin(), word_ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheCapacity) cache_.clear();
  cache_.emplace(std::move(key), std::move(word_ids));
}

void BpeModel::merge_word(std::u32string_view word, std::vector<int32_t>& ids) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (char32_t c : word) {
    auto it = char_ids_.find(c);
    int32_t id = -1;
    if (it != char_ids_.end()) {
      id = it->second;
    } else if (unk_id_) {
      id = *unk_id_;
    } else {
      continue;  // HF drops a symbol it can neither find nor replace
    }
    const auto pos = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, pos - 1, pos + 1, true});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
  auto push_pair = [&](int32_t pos) {
    const int32_t next = symbols[static_cast<std::size_t>(pos)].next;
    if (next < 0) return;
    auto it = merges_.find(pair_key(symbols[static_cast<std::size_t>(pos)].id,
                                    symbols[static_cast<std::size_t>(next)].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.new_id});
  };
  for (int32_t pos = 0; pos + 1 < static_cast<int32_t>(symbols.size()); ++pos) push_pair(pos);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<std::size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[static_cast<std::size_t>(left.next)];
    // Stale entry: the pair at this position has changed since it was queued
    // (checked by the merged id, as HF does).
    auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }
  for (const Symbol& s : symbols) {
    if (s.alive) ids.push_back(s.id);
  }
}

}  // namespace luminal::tokenizer
