#pragma once
// The tokenizer part of a GGUF file's metadata as plain values, so the
// tokenizer does not depend on the GGUF reader: whoever reads the file fills
// this struct (keys in the comments) and calls Tokenizer::from_gguf.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace luminal::tokenizer {

/// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class GgufTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special tokens: <|im_start|>, <|endoftext|> ...
  kUserDefined = 4,  // added tokens that are not special
  kUnused = 5,
  kByte = 6,
};

struct GgufTokenizerMetadata {
  std::string model;                 // tokenizer.ggml.model: "gpt2" (byte-level BPE)
  std::string pre;                   // tokenizer.ggml.pre: "smollm", "llama-bpe", "qwen2", ...
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens (id = index)
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type (empty: all normal)
  std::vector<std::string> merges;   // tokenizer.ggml.merges, "left right" in rank order
  std::optional<int64_t> bos_id;     // tokenizer.ggml.bos_token_id
  std::optional<int64_t> eos_id;     // tokenizer.ggml.eos_token_id
  std::optional<int64_t> unk_id;     // tokenizer.ggml.unknown_token_id
  std::optional<int64_t> pad_id;     // tokenizer.ggml.padding_token_id
  std::optional<bool> add_bos;       // tokenizer.ggml.add_bos_token
  std::optional<bool> add_eos;       // tokenizer.ggml.add_eos_token
  std::string chat_template;         // tokenizer.chat_template (Jinja source)
};

}  // namespace luminal::tokenizer
