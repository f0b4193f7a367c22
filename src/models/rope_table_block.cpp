#include "rope_table_block.hpp"

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal::models::detail {

namespace {

using nn::join_name;

nn::AttentionConfig resolved(nn::AttentionConfig a, const std::string& name) {
  if (a.num_kv_heads == 0) a.num_kv_heads = a.num_heads;
  if (a.head_dim == 0 && a.num_heads > 0) a.head_dim = a.hidden_size / a.num_heads;
  if (a.num_heads <= 0 || a.head_dim <= 0 || a.num_heads % a.num_kv_heads != 0)
    throw ShapeError(name + ": num_heads (" + std::to_string(a.num_heads) +
                     ") must be a positive multiple of num_kv_heads (" +
                     std::to_string(a.num_kv_heads) + ")");
  return a;
}

}  // namespace

RopeTableBlock::RopeTableBlock(Graph& g, const std::string& name, const nn::TransformerConfig& c)
    : nn::Module(g, name),
      attn_(resolved(c.attention, name)),
      input_layernorm_(g, join_name(name, "input_layernorm"), {attn_.hidden_size}, c.rms_norm_eps,
                       true, attn_.dtype),
      q_proj_(g, join_name(name, "self_attn.q_proj"), attn_.hidden_size,
              attn_.num_heads * attn_.head_dim, attn_.qkv_bias, attn_.dtype),
      k_proj_(g, join_name(name, "self_attn.k_proj"), attn_.hidden_size,
              attn_.num_kv_heads * attn_.head_dim, attn_.qkv_bias, attn_.dtype),
      v_proj_(g, join_name(name, "self_attn.v_proj"), attn_.hidden_size,
              attn_.num_kv_heads * attn_.head_dim, attn_.qkv_bias, attn_.dtype),
      o_proj_(g, join_name(name, "self_attn.o_proj"), attn_.num_heads * attn_.head_dim,
              attn_.hidden_size, attn_.o_bias, attn_.dtype),
      post_attention_layernorm_(g, join_name(name, "post_attention_layernorm"), {attn_.hidden_size},
                                c.rms_norm_eps, true, attn_.dtype),
      mlp_(g, join_name(name, "mlp"), attn_.hidden_size, c.intermediate_size, c.mlp_bias,
           attn_.dtype) {
  if (c.moe)
    throw Error(name + ": a mixture-of-experts feed-forward is not built with RoPE scaling");
  if (attn_.qk_norm) {
    const std::vector<Expr> dim = {attn_.head_dim};
    q_norm_.emplace(g, join_name(name, "self_attn.q_norm"), dim, attn_.norm_eps, true, attn_.dtype);
    k_norm_.emplace(g, join_name(name, "self_attn.k_norm"), dim, attn_.norm_eps, true, attn_.dtype);
  }
}

nn::KVCache RopeTableBlock::make_cache(const Expr& batch, const Expr& max_len) const {
  const std::vector<Expr> shape = {batch, attn_.num_kv_heads, max_len, attn_.head_dim};
  const std::string prefix = join_name(this->prefix(), "self_attn");
  return {graph().input(join_name(prefix, "k_cache"), shape, attn_.dtype, true),
          graph().input(join_name(prefix, "v_cache"), shape, attn_.dtype, true)};
}

nn::AttentionStep RopeTableBlock::forward(const Tensor& x, const Expr& past,
                                          const nn::KVCache& cache, const RopeTables& rope) const {
  const Tensor n = input_layernorm_(x);
  // [B, s, heads * D] -> [B, heads, s, D], q / k normed per head first (Qwen3).
  auto heads = [&](const nn::Linear& proj, int64_t count, const std::optional<nn::RMSNorm>& norm) {
    Tensor h = proj(n).reshape({x.dim(0), x.dim(1), count, attn_.head_dim});
    if (norm) h = (*norm)(h);
    return h.transpose(1, 2);
  };
  const Tensor q = apply_rotary_emb(heads(q_proj_, attn_.num_heads, q_norm_), rope.cos, rope.sin,
                                    attn_.rope_layout);
  const Tensor k = apply_rotary_emb(heads(k_proj_, attn_.num_kv_heads, k_norm_), rope.cos, rope.sin,
                                    attn_.rope_layout);
  const Tensor v = heads(v_proj_, attn_.num_kv_heads, std::nullopt);
  // The cache update and the bottom-right causal attention of nn::Attention.
  const Expr s = x.dim(1);
  const Expr total = (past + s).simplify();
  const Tensor rows = graph().iota(past + Expr::index_var(), s, DType::I64);
  const Tensor k_all = index_copy(cache.k, 2, rows, k);
  const Tensor v_all = index_copy(cache.v, 2, rows, v);
  const Tensor o = scaled_dot_product_attention(
      q, k_all.slice(2, 0, total), v_all.slice(2, 0, total), causal_mask(graph(), s, total, past),
      0.0, false, std::nullopt, true);
  const Tensor merged = o.transpose(1, 2).reshape({x.dim(0), s, attn_.num_heads * attn_.head_dim});
  const Tensor h = x + o_proj_(merged);
  return {h + mlp_(post_attention_layernorm_(h)), {k_all, v_all}};
}

RopeTables rope_tables(const Tensor& inv_freq, const Expr& past, const Expr& s) {
  Graph& g = *inv_freq.graph();
  const Tensor positions = to(g.iota(past + Expr::index_var(), s, DType::I64), DType::F32);
  const Tensor angle = to(positions.unsqueeze(-1) * inv_freq, DType::F64);
  return {to(cos(angle), DType::F32), to(sin(angle), DType::F32)};
}

}  // namespace luminal::models::detail
