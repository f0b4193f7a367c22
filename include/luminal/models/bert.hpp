#pragma once
// A BERT encoder used as a sentence embedder, as sentence-transformers runs
// all-MiniLM-L6-v2: BertModel (word + position + token-type embeddings and
// LayerNorm, N post-norm encoder layers with GELU feed-forwards) -> mean
// pooling of the last hidden state over the attention mask -> L2
// normalisation. Parameter names are Hugging Face's BertModel names
// ("encoder.layer.0.attention.self.query.weight"); a checkpoint saved from a
// BertFor* head model ("bert." prefix) binds too.
//
// One compiled program serves every batch size and sequence length (dims "b"
// and "s"): sentences are tokenized (WordPiece, [CLS] ... [SEP]), padded to
// the longest, and the padding is masked out of attention and pooling.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/models/load_options.hpp"
#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::models {

struct BertConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  std::string hidden_act = "gelu";  // nn::activation names (HF "gelu" is exact)
  /// One line for `luminal info`.
  std::string describe() const;
};

/// The encoder configuration in the text of a Hugging Face config.json
/// (model_type "bert"). Throws Error naming `origin` and the problem.
BertConfig bert_config_from_hf_json(std::string_view json_text,
                                    std::string_view origin = "config.json");

class SentenceEmbedder {
public:
  /// A directory with config.json, *.safetensors and tokenizer.json (or
  /// vocab.txt). Throws Error / FormatError naming the file.
  static SentenceEmbedder load(const std::string& dir, const LoadOptions& options = {});
  SentenceEmbedder(SentenceEmbedder&&) noexcept;
  SentenceEmbedder& operator=(SentenceEmbedder&&) noexcept;
  ~SentenceEmbedder();

  const BertConfig& config() const;
  const LoadStats& load_stats() const;
  const tokenizer::Tokenizer& tokenizer() const;

  /// One unit-length vector (hidden_size floats) per text. Texts longer than
  /// the position table are truncated, as sentence-transformers does.
  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts);
  /// The same from token ids (each sequence already with [CLS] / [SEP]).
  std::vector<std::vector<float>> embed_ids(const std::vector<std::vector<int32_t>>& ids);

private:
  struct Impl;
  explicit SentenceEmbedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace luminal::models
