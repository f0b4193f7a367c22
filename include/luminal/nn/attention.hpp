#pragma once
// Attention modules:
//  - MultiheadAttention: torch.nn.MultiheadAttention(batch_first=True) with its
//    parameter names (in_proj_weight / in_proj_bias / out_proj.*), for encoders.
//  - Attention: the decoder attention of Llama / Mistral / Qwen (HF names
//    q_proj / k_proj / v_proj / o_proj), grouped-query heads, rotary embeddings,
//    optional Qwen3 q_norm / k_norm, and a KV-cache interface.
//
// KV cache. The cache of a layer is two persistent inputs `<name>.k_cache` and
// `<name>.v_cache` of shape [batch, kv_heads, max_len, head_dim] (max_len a
// constant or a dim name). A step processes s new tokens at positions
// p .. p + s - 1, where p (the number of cached tokens) is a dim variable that
// the caller sets per run (e.g. dims={"p": 7}); nothing is recompiled when p or
// s change. The step writes the new keys / values into the cache with
// index_copy at rows p .. p + s - 1, attends over the first p + s rows with
// the bottom-right causal mask (query i sees keys j <= p + i), and returns the
// updated caches as tensors: mark them as outputs (mark_cache_outputs names
// them `<cache input name>.next`) and feed them back as the inputs of the next
// step. p + s must not exceed max_len (rows beyond are dropped by Scatter).

#include <optional>
#include <string>
#include <vector>

#include "luminal/frontend/attention.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/normalization.hpp"

namespace luminal::nn {

/// torch.nn.MultiheadAttention(embed_dim, num_heads, bias, batch_first=True)
/// with kdim = vdim = embed_dim: parameters in_proj_weight [3E, E],
/// in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E].
class MultiheadAttention : public Module {
public:
  MultiheadAttention(Graph& g, const std::string& name, int64_t embed_dim, int64_t num_heads,
                     bool bias = true, DType dtype = DType::F32);
  /// query [B, L, E], key / value [B, S, E] -> [B, L, E] (need_weights=False).
  /// As torch: a bool attn_mask ([L, S] or [B * heads, L, S]) is true where
  /// attention is NOT allowed, a float one is added; key_padding_mask [B, S]
  /// (bool: true = ignore that key; float: added). is_causal adds the causal mask.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value,
                 const std::optional<Tensor>& key_padding_mask = std::nullopt,
                 const std::optional<Tensor>& attn_mask = std::nullopt,
                 bool is_causal = false) const;

private:
  int64_t embed_dim_, num_heads_;
  Tensor in_proj_weight_;
  std::optional<Tensor> in_proj_bias_;
  Linear out_proj_;
};

struct AttentionConfig {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // 0: num_heads (multi-head); fewer: grouped-query
  int64_t head_dim = 0;      // 0: hidden_size / num_heads
  bool qkv_bias = false;     // Qwen2: true
  bool o_bias = false;
  bool qk_norm = false;    // Qwen3: RMSNorm(head_dim) on q and k (q_norm / k_norm)
  double norm_eps = 1e-6;  // of q_norm / k_norm
  bool rope = true;
  double rope_theta = 10000.0;
  RopeLayout rope_layout = RopeLayout::HalfRotate;
  bool causal = true;
  DType dtype = DType::F32;
};

/// The cache inputs of one attention layer.
struct KVCache {
  Tensor k;  // [batch, kv_heads, max_len, head_dim]
  Tensor v;
};

struct AttentionStep {
  Tensor out;     // [batch, s, hidden]
  KVCache cache;  // the updated caches (mark as outputs, feed back next step)
};

class Attention : public Module {
public:
  Attention(Graph& g, const std::string& name, const AttentionConfig& config);
  /// Without a cache: x [B, S, hidden] at positions offset .. offset + S - 1.
  Tensor forward(const Tensor& x, const Expr& offset = 0) const;
  /// Creates the persistent inputs `<name>.k_cache` / `<name>.v_cache`.
  KVCache make_cache(const Expr& batch, const Expr& max_len) const;
  /// One cached step: x [B, s, hidden] at positions past .. past + s - 1.
  /// `rope`: the cos / sin tables [s, head_dim / 2] of those positions, when
  /// the caller computes them (RoPE scaling: inverse frequencies from the host,
  /// one table shared by every layer); by default they are built from
  /// rope_theta (rope_cache). Ignored when the config has rope = false.
  /// `last_only`: the output only for the last position ([B, 1, hidden]): the
  /// cache still receives every position's keys and values, but queries,
  /// scores and the output projection are computed for one row (a decoder's
  /// last layer when only the next token's logits are wanted, as llama.cpp's
  /// output-row selection).
  AttentionStep forward(const Tensor& x, const Expr& past, const KVCache& cache,
                        const std::optional<RopeTables>& rope = std::nullopt,
                        bool last_only = false) const;
  const AttentionConfig& config() const { return cfg_; }

private:
  struct Heads {
    Tensor q, k, v;  // [B, H, s, D], [B, Hkv, s, D] (rotated)
  };
  Heads project(const Tensor& x, const Expr& offset, bool last_query_only,
                const std::optional<RopeTables>& rope = std::nullopt) const;
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v,
                const std::optional<Tensor>& mask) const;
  AttentionConfig cfg_;
  Linear q_proj_, k_proj_, v_proj_, o_proj_;
  std::optional<RMSNorm> q_norm_, k_norm_;
};

/// Marks the updated caches as outputs named `<k input name>.next` and
/// `<v input name>.next`; `inputs` are the caches make_cache returned.
void mark_cache_outputs(Graph& g, const KVCache& inputs, const KVCache& updated);

}  // namespace luminal::nn
