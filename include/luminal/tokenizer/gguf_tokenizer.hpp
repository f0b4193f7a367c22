#pragma once
// The tokenizer part of a GGUF file's metadata as plain values: the
// tokenizer itself works from this struct (keys in the comments), so metadata
// from anywhere (a test, Python's `gguf` package) builds a Tokenizer with
// Tokenizer::from_gguf; gguf_tokenizer_metadata() reads it out of a GGUFFile.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace luminal {
class GGUFFile;
}

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

/// The tokenizer.* metadata of an open GGUF file. Missing optional keys stay
/// unset; a key of the wrong type throws the reader's DTypeError (naming the
/// file and key). tokenizer.ggml.model and tokenizer.ggml.tokens are required
/// (LookupError).
GgufTokenizerMetadata gguf_tokenizer_metadata(const GGUFFile& file);

}  // namespace luminal::tokenizer
