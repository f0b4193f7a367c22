#pragma once
// A Llama-family decoder block whose rotary tables are given by the caller.
//
// nn::TransformerBlock (nn::Attention) builds unscaled RoPE tables from theta
// inside the graph; a model with RoPE scaling needs tables from inverse
// frequencies computed on the host (rope_scaling.hpp), which nn::Attention has
// no way to take. This block is nn::TransformerBlock's cached step with that
// one difference: the same parameter names (self_attn.q_proj ..., mlp.*,
// *_layernorm), biases, q / k norms and KV-cache inputs, and the tables
// (cos / sin [s, head_dim / 2]) are an argument, built once for all layers.
// CausalLM uses it only for scaled models, so unscaled graphs (and their
// compile-cache entries) are exactly nn::TransformerBlock's.

#include <optional>
#include <string>

#include "luminal/frontend/attention.hpp"
#include "luminal/nn/attention.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/mlp.hpp"
#include "luminal/nn/normalization.hpp"
#include "luminal/nn/transformer.hpp"

namespace luminal::models::detail {

class RopeTableBlock : public nn::Module {
public:
  /// Throws Error for a MoE feed-forward (not built here).
  RopeTableBlock(Graph& g, const std::string& name, const nn::TransformerConfig& config);
  /// `<name>.self_attn.k_cache` / `.v_cache`, as nn::Attention::make_cache.
  nn::KVCache make_cache(const Expr& batch, const Expr& max_len) const;
  /// x [B, s, hidden] at positions past .. past + s - 1; `rope` holds the
  /// tables of those positions.
  nn::AttentionStep forward(const Tensor& x, const Expr& past, const nn::KVCache& cache,
                            const RopeTables& rope) const;

private:
  nn::AttentionConfig attn_;  // head_dim and num_kv_heads resolved
  nn::RMSNorm input_layernorm_;
  nn::Linear q_proj_, k_proj_, v_proj_, o_proj_;
  std::optional<nn::RMSNorm> q_norm_, k_norm_;
  nn::RMSNorm post_attention_layernorm_;
  nn::SwiGLU mlp_;
};

/// cos / sin [s, inv_freq.size] of positions past .. past + s - 1 from the
/// inverse frequencies (a graph input): HF's float32 angle pos * inv_freq,
/// with cos / sin evaluated in float64 from it and rounded once (as
/// luminal::rope_cache does).
RopeTables rope_tables(const Tensor& inv_freq, const Expr& past, const Expr& s);

}  // namespace luminal::models::detail
