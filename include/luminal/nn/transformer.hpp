#pragma once
// A pre-norm decoder block (Llama / Mistral / Qwen):
//     h = x + self_attn(input_layernorm(x))
//     y = h + mlp(post_attention_layernorm(h))
// with RMSNorm, an Attention module and a SwiGLU (or MoE) feed-forward, and a
// small Llama-style stack (embed_tokens -> blocks -> norm -> lm_head) using
// Hugging Face parameter names ("model.layers.0.self_attn.q_proj.weight" ...).

#include <optional>
#include <string>
#include <vector>

#include "luminal/nn/attention.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/mlp.hpp"
#include "luminal/nn/moe.hpp"
#include "luminal/nn/normalization.hpp"

namespace luminal::nn {

struct TransformerConfig {
  AttentionConfig attention;
  int64_t intermediate_size = 0;
  double rms_norm_eps = 1e-6;
  bool mlp_bias = false;
  std::optional<MoEConfig> moe;  // set: the feed-forward is a MoE (hidden_size / dtype filled in)
};

class TransformerBlock : public Module {
public:
  TransformerBlock(Graph& g, const std::string& name, const TransformerConfig& config);
  /// Without a cache: x [B, S, hidden] at positions offset .. offset + S - 1.
  Tensor forward(const Tensor& x, const Expr& offset = 0) const;
  /// One cached step (see attention.hpp).
  /// `rope`: caller-built rotary tables, `last_only`: the output for the last
  /// position only ([B, 1, hidden]; every position still enters the cache), as
  /// Attention::forward.
  AttentionStep forward(const Tensor& x, const Expr& past, const KVCache& cache,
                        const std::optional<RopeTables>& rope = std::nullopt,
                        bool last_only = false) const;
  KVCache make_cache(const Expr& batch, const Expr& max_len) const {
    return self_attn_.make_cache(batch, max_len);
  }

private:
  Tensor feed_forward(const Tensor& h) const;
  RMSNorm input_layernorm_;
  Attention self_attn_;
  RMSNorm post_attention_layernorm_;
  std::optional<SwiGLU> mlp_;
  std::optional<MoE> moe_;
};

struct LlamaConfig {
  TransformerConfig block;
  int64_t vocab_size = 0;
  int64_t num_layers = 0;
  bool tie_word_embeddings = false;  // lm_head reuses model.embed_tokens.weight
};

/// model.embed_tokens -> model.layers.<i> -> model.norm -> lm_head.
class LlamaModel : public Module {
public:
  LlamaModel(Graph& g, const LlamaConfig& config, const std::string& prefix = "");
  /// tokens [B, S] (i32 / i64) -> logits [B, S, vocab].
  Tensor forward(const Tensor& tokens) const;
  std::vector<KVCache> make_caches(const Expr& batch, const Expr& max_len) const;
  struct Step {
    Tensor logits;
    std::vector<KVCache> caches;
  };
  /// One cached step over tokens at positions past .. past + S - 1.
  Step forward(const Tensor& tokens, const Expr& past, const std::vector<KVCache>& caches) const;

private:
  Tensor head(const Tensor& h) const;
  LlamaConfig cfg_;
  Embedding embed_tokens_;
  std::vector<TransformerBlock> layers_;
  RMSNorm norm_;
  std::optional<Linear> lm_head_;
};

}  // namespace luminal::nn
