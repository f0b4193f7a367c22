#pragma once
// The tokenization model: turns one pre-tokenized word into token ids. Two
// implementations: byte-level BPE (bpe.hpp) and WordPiece (wordpiece.hpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace luminal::tokenizer {

/// Token string <-> id. Ids need not be contiguous (a tokenizer.json vocab is
/// a map); size() is the largest id + 1.
class Vocab {
public:
  /// Adds `token` with `id`; throws luminal::Error on a negative id or an id
  /// given twice. A token string given twice (some GGUF vocabularies repeat
  /// one) keeps its first id for lookups.
  void add(std::string token, int32_t id);
  std::optional<int32_t> find(std::string_view token) const;
  /// The token of `id`, nullptr when no token has that id.
  const std::string* token(int32_t id) const;
  int32_t size() const { return static_cast<int32_t>(id_to_token_.size()); }
  std::size_t count() const { return token_to_id_.size(); }

private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> token_to_id_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> present_;
};

class Model {
public:
  virtual ~Model() = default;
  /// Appends the ids of one word (code points as the pre-tokenizer left them).
  virtual void tokenize(std::u32string_view word, std::vector<int32_t>& ids) const = 0;
  virtual const Vocab& vocab() const = 0;
  /// "BPE" / "WordPiece", for messages.
  virtual const char* name() const = 0;
};

}  // namespace luminal::tokenizer
