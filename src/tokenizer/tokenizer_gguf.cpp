// Loading a Tokenizer from GGUF metadata (llama.cpp's tokenizer.ggml.* keys).

#include <algorithm>
#include <array>
#include <string_view>

#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/tokenizer/bpe.hpp"
#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::tokenizer {
namespace {

struct PreTokenizerFamily {
  std::vector<PreTokenizerStep> steps;
  bool ignore_merges = false;
  bool add_bos_default = false;
};

// tokenizer.ggml.pre names (llama.cpp's) -> the HF pre-tokenizer of that
// family, so that encoding matches the model's tokenizer.json.
PreTokenizerFamily family_of(const std::string& pre) {
  static constexpr std::array<std::string_view, 6> kGpt2 = {"",      "default", "gpt2",
                                                            "gpt-2", "olmo",    "mpt"};
  // Digits isolated first, then GPT-2 (StarCoder's tokenizer.json).
  static constexpr std::array<std::string_view, 6> kDigitsGpt2 = {
      "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone"};
  static constexpr std::array<std::string_view, 5> kLlama3 = {"llama3", "llama-v3", "llama-bpe",
                                                              "smaug-bpe", "falcon3"};
  static constexpr std::array<std::string_view, 3> kQwen2 = {"qwen2", "deepseek-r1-qwen",
                                                             "stablelm2"};
  auto in = [&pre](const auto& names) {
    return std::find(names.begin(), names.end(), pre) != names.end();
  };
  const ByteLevelPreTokenizer bytes_only{false, false};
  if (in(kGpt2)) return {{ByteLevelPreTokenizer{false, true}}, false, false};
  if (in(kDigitsGpt2)) {
    return {{DigitsPreTokenizer{true}, ByteLevelPreTokenizer{false, true}}, false, false};
  }
  if (in(kLlama3)) {
    return {{SplitPreTokenizer{SplitRegex::kLlama3, {}, SplitBehavior::kIsolated}, bytes_only},
            true,
            true};
  }
  if (in(kQwen2)) {
    return {{SplitPreTokenizer{SplitRegex::kQwen2, {}, SplitBehavior::kIsolated}, bytes_only},
            false,
            false};
  }
  throw Error("GGUF tokenizer: tokenizer.ggml.pre '" + pre +
              "' is not supported (gpt2, smollm, starcoder, llama-bpe, qwen2 and their aliases)");
}

int32_t checked_id(const std::optional<int64_t>& id, std::size_t vocab, const char* key) {
  if (*id < 0 || static_cast<uint64_t>(*id) >= vocab) {
    throw Error(std::string("GGUF tokenizer: ") + key + " = " + std::to_string(*id) +
                " is outside the vocabulary of " + std::to_string(vocab) + " tokens");
  }
  return static_cast<int32_t>(*id);
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufTokenizerMetadata& m) {
  if (m.model != "gpt2") {
    throw Error("GGUF tokenizer: tokenizer.ggml.model '" + m.model +
                "' is not supported (only 'gpt2': byte-level BPE)");
  }
  if (m.tokens.empty()) throw Error("GGUF tokenizer: tokenizer.ggml.tokens is empty");
  if (!m.token_types.empty() && m.token_types.size() != m.tokens.size()) {
    throw Error("GGUF tokenizer: tokenizer.ggml.token_type has " +
                std::to_string(m.token_types.size()) + " entries for " +
                std::to_string(m.tokens.size()) + " tokens");
  }
  PreTokenizerFamily family = family_of(m.pre);

  Vocab vocab;
  std::vector<AddedToken> added;
  for (std::size_t i = 0; i < m.tokens.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    vocab.add(m.tokens[i], id);
    const auto type = m.token_types.empty() ? GgufTokenType::kNormal
                                            : static_cast<GgufTokenType>(m.token_types[i]);
    if (type == GgufTokenType::kControl || type == GgufTokenType::kUserDefined) {
      AddedToken t;
      t.id = id;
      t.content = m.tokens[i];
      t.special = type == GgufTokenType::kControl;
      added.push_back(std::move(t));
    }
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(m.merges.size());
  for (std::size_t i = 0; i < m.merges.size(); ++i) {
    merges.push_back(split_merge(m.merges[i], i));
  }
  BpeOptions options;
  options.ignore_merges = family.ignore_merges;
  auto model = std::make_shared<BpeModel>(std::move(vocab), merges, options);

  SpecialTokenIds ids;
  const std::size_t n = m.tokens.size();
  if (m.bos_id) ids.bos = checked_id(m.bos_id, n, "tokenizer.ggml.bos_token_id");
  if (m.eos_id) ids.eos = checked_id(m.eos_id, n, "tokenizer.ggml.eos_token_id");
  if (m.unk_id) ids.unk = checked_id(m.unk_id, n, "tokenizer.ggml.unknown_token_id");
  if (m.pad_id) ids.pad = checked_id(m.pad_id, n, "tokenizer.ggml.padding_token_id");

  // <bos> $A <eos> with each end present when the metadata asks for it.
  PostProcessor post;
  const bool add_bos = m.add_bos.value_or(family.add_bos_default);
  const bool add_eos = m.add_eos.value_or(false);
  if (add_bos && !ids.bos) throw Error("GGUF tokenizer: add_bos_token without bos_token_id");
  if (add_eos && !ids.eos) throw Error("GGUF tokenizer: add_eos_token without eos_token_id");
  if (add_bos || add_eos) {
    for (int seq = 0; seq < 2; ++seq) {
      std::vector<TemplatePiece> one;
      if (add_bos) one.push_back({TemplatePiece::Kind::kSpecial, {*ids.bos}, seq});
      one.push_back(
          {seq == 0 ? TemplatePiece::Kind::kSequenceA : TemplatePiece::Kind::kSequenceB, {}, seq});
      if (add_eos) one.push_back({TemplatePiece::Kind::kSpecial, {*ids.eos}, seq});
      if (seq == 0) post.single = one;
      post.pair.insert(post.pair.end(), one.begin(), one.end());
    }
  }
  Decoder decoder;
  decoder.kind = Decoder::Kind::kByteLevel;
  Tokenizer tok(Normalizer(), PreTokenizer(std::move(family.steps)), model, std::move(added),
                std::move(post), decoder);
  tok.set_special_ids(ids);
  tok.set_chat_template(m.chat_template);
  return tok;
}

GgufTokenizerMetadata gguf_tokenizer_metadata(const GGUFFile& file) {
  GgufTokenizerMetadata m;
  m.model = file.get_string("tokenizer.ggml.model");
  m.tokens = file.get_strings("tokenizer.ggml.tokens");
  if (file.has("tokenizer.ggml.pre")) m.pre = file.get_string("tokenizer.ggml.pre");
  if (file.has("tokenizer.ggml.merges")) m.merges = file.get_strings("tokenizer.ggml.merges");
  if (file.has("tokenizer.chat_template")) {
    m.chat_template = file.get_string("tokenizer.chat_template");
  }
  if (file.has("tokenizer.ggml.token_type")) {
    for (int64_t t : file.get_ints("tokenizer.ggml.token_type")) {
      m.token_types.push_back(static_cast<int32_t>(t));
    }
  }
  auto id = [&file](const char* key, std::optional<int64_t>& out) {
    if (file.has(key)) out = file.get_int(key);
  };
  id("tokenizer.ggml.bos_token_id", m.bos_id);
  id("tokenizer.ggml.eos_token_id", m.eos_id);
  id("tokenizer.ggml.unknown_token_id", m.unk_id);
  id("tokenizer.ggml.padding_token_id", m.pad_id);
  auto flag = [&file](const char* key, std::optional<bool>& out) {
    if (file.has(key)) out = file.get_bool(key);
  };
  flag("tokenizer.ggml.add_bos_token", m.add_bos);
  flag("tokenizer.ggml.add_eos_token", m.add_eos);
  return m;
}

Tokenizer Tokenizer::from_gguf(const GGUFFile& file) {
  return from_gguf(gguf_tokenizer_metadata(file));
}

}  // namespace luminal::tokenizer
