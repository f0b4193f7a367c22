#include "luminal/nn/attention.hpp"

#include <cmath>
#include <limits>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal::nn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// [B, S, H * D] -> [B, H, S, D] (views).
Tensor split_heads(const Tensor& x, int64_t heads, int64_t head_dim) {
  return x.reshape({x.dim(0), x.dim(1), heads, head_dim}).transpose(1, 2);
}

// [B, H, S, D] -> [B, S, H * D].
Tensor merge_heads(const Tensor& x) {
  const auto& s = x.shape();
  return x.transpose(1, 2).reshape({s[0], s[2], (s[1] * s[3]).simplify()});
}

// A torch-style mask as an additive float mask of `dtype`: bool true -> -inf.
Tensor additive(const Tensor& mask, DType dtype) {
  if (mask.dtype() == DType::Bool) return where(mask, -kInf, 0.0).cast(dtype);
  return to(mask, dtype);
}

AttentionConfig resolved(AttentionConfig c, const std::string& name) {
  if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
  if (c.num_heads <= 0 || c.hidden_size <= 0 || c.num_heads % c.num_kv_heads != 0)
    throw ShapeError("Attention " + name + ": num_heads (" + std::to_string(c.num_heads) +
                     ") must be a positive multiple of num_kv_heads (" +
                     std::to_string(c.num_kv_heads) + ")");
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_heads != 0)
      throw ShapeError("Attention " + name + ": hidden_size " + std::to_string(c.hidden_size) +
                       " is not divisible by num_heads " + std::to_string(c.num_heads));
    c.head_dim = c.hidden_size / c.num_heads;
  }
  return c;
}

}  // namespace

// ---- MultiheadAttention ----------------------------------------------------------

MultiheadAttention::MultiheadAttention(Graph& g, const std::string& name, int64_t embed_dim,
                                       int64_t num_heads, bool bias, DType dtype)
    : Module(g, name),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      in_proj_weight_(add_parameter("in_proj_weight", {3 * embed_dim, embed_dim}, dtype)),
      out_proj_(g, join_name(name, "out_proj"), embed_dim, embed_dim, bias, dtype) {
  if (num_heads <= 0 || embed_dim % num_heads != 0)
    throw ShapeError("MultiheadAttention " + name + ": embed_dim " + std::to_string(embed_dim) +
                     " must be divisible by num_heads " + std::to_string(num_heads));
  if (bias) in_proj_bias_ = add_parameter("in_proj_bias", {3 * embed_dim}, dtype);
  adopt(out_proj_);
}

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const std::optional<Tensor>& key_padding_mask,
                                   const std::optional<Tensor>& attn_mask, bool is_causal) const {
  const int64_t e = embed_dim_;
  const int64_t d = e / num_heads_;
  auto proj = [&](const Tensor& x, int64_t i) {
    std::optional<Tensor> b;
    if (in_proj_bias_) b = Module::value(*in_proj_bias_).slice(0, i * e, (i + 1) * e);
    return split_heads(linear(x, Module::value(in_proj_weight_).slice(0, i * e, (i + 1) * e), b),
                       num_heads_, d);
  };
  Tensor q = proj(query, 0);  // [B, H, L, D]
  Tensor k = proj(key, 1);
  Tensor v = proj(value, 2);
  const Expr batch = query.dim(0), l = query.dim(1), s = key.dim(1);
  // torch merges the masks into one additive float mask.
  std::optional<Tensor> mask;
  if (attn_mask) {
    Tensor m = additive(*attn_mask, query.dtype());
    if (m.rank() == 3) m = m.reshape({batch, num_heads_, l, s});
    mask = m;
  }
  if (key_padding_mask) {
    Tensor m = additive(*key_padding_mask, query.dtype()).reshape({batch, 1, 1, s});
    mask = mask ? *mask + m : m;
  }
  if (is_causal) {
    Tensor c = additive(logical_not(causal_mask(graph(), l, s)), query.dtype());
    mask = mask ? *mask + c : c;
  }
  Tensor o = scaled_dot_product_attention(q, k, v, mask);
  return out_proj_(merge_heads(o));
}

// ---- Attention ---------------------------------------------------------------------

Attention::Attention(Graph& g, const std::string& name, const AttentionConfig& config)
    : Module(g, name),
      cfg_(resolved(config, name)),
      q_proj_(g, join_name(name, "q_proj"), cfg_.hidden_size, cfg_.num_heads * cfg_.head_dim,
              cfg_.qkv_bias, cfg_.dtype),
      k_proj_(g, join_name(name, "k_proj"), cfg_.hidden_size, cfg_.num_kv_heads * cfg_.head_dim,
              cfg_.qkv_bias, cfg_.dtype),
      v_proj_(g, join_name(name, "v_proj"), cfg_.hidden_size, cfg_.num_kv_heads * cfg_.head_dim,
              cfg_.qkv_bias, cfg_.dtype),
      o_proj_(g, join_name(name, "o_proj"), cfg_.num_heads * cfg_.head_dim, cfg_.hidden_size,
              cfg_.o_bias, cfg_.dtype) {
  adopt(q_proj_);
  adopt(k_proj_);
  adopt(v_proj_);
  adopt(o_proj_);
  if (cfg_.qk_norm) {
    q_norm_.emplace(g, join_name(name, "q_norm"), std::vector<Expr>{cfg_.head_dim}, cfg_.norm_eps,
                    true, cfg_.dtype);
    k_norm_.emplace(g, join_name(name, "k_norm"), std::vector<Expr>{cfg_.head_dim}, cfg_.norm_eps,
                    true, cfg_.dtype);
    adopt(*q_norm_);
    adopt(*k_norm_);
  }
}

Attention::Heads Attention::project(const Tensor& x, const Expr& offset, bool last_query_only,
                                    const std::optional<RopeTables>& rope) const {
  if (x.rank() != 3)
    throw ShapeError("Attention " + prefix() + ": expected x [batch, seq, hidden], got " +
                     x.describe());
  const Expr s = x.dim(1);
  const Expr last = (s - 1).simplify();
  auto heads = [&](const Tensor& in, const Linear& proj, int64_t n,
                   const std::optional<RMSNorm>& norm) {
    Tensor h = proj(in);
    h = h.reshape({in.dim(0), in.dim(1), n, cfg_.head_dim});
    if (norm) h = (*norm)(h);  // Qwen3: per-head RMSNorm before the transpose
    return h.transpose(1, 2);
  };
  Tensor q = heads(last_query_only ? x.slice(1, last, s) : x, q_proj_, cfg_.num_heads, q_norm_);
  Tensor k = heads(x, k_proj_, cfg_.num_kv_heads, k_norm_);
  Tensor v = heads(x, v_proj_, cfg_.num_kv_heads, std::nullopt);
  if (cfg_.rope) {
    const RopeTables t =
        rope ? *rope : rope_cache(graph(), s, cfg_.head_dim, cfg_.rope_theta, offset);
    // The tables' rows are positions: the second-to-last axis ([s, d / 2], or
    // with leading broadcast axes).
    auto last_row = [&](const Tensor& table) {
      return table.slice(static_cast<int>(table.rank()) - 2, last, s);
    };
    const RopeTables tq = last_query_only ? RopeTables{last_row(t.cos), last_row(t.sin)} : t;
    q = apply_rotary_emb(q, tq.cos, tq.sin, cfg_.rope_layout);
    k = apply_rotary_emb(k, t.cos, t.sin, cfg_.rope_layout);
  }
  return {q, k, v};
}

Tensor Attention::attend(const Tensor& q, const Tensor& k, const Tensor& v,
                         const std::optional<Tensor>& mask) const {
  Tensor o = scaled_dot_product_attention(q, k, v, mask, 0.0, false, std::nullopt, true);
  return o_proj_(merge_heads(o));
}

Tensor Attention::forward(const Tensor& x, const Expr& offset) const {
  Heads h = project(x, offset, false);
  std::optional<Tensor> mask;
  if (cfg_.causal) mask = causal_mask(graph(), x.dim(1), x.dim(1));
  return attend(h.q, h.k, h.v, mask);
}

KVCache Attention::make_cache(const Expr& batch, const Expr& max_len) const {
  const std::vector<Expr> shape = {batch, cfg_.num_kv_heads, max_len, cfg_.head_dim};
  return {graph().input(join_name(prefix(), "k_cache"), shape, cfg_.dtype, true),
          graph().input(join_name(prefix(), "v_cache"), shape, cfg_.dtype, true)};
}

AttentionStep Attention::forward(const Tensor& x, const Expr& past, const KVCache& cache,
                                 const std::optional<RopeTables>& rope, bool last_only) const {
  Heads h = project(x, past, last_only, rope);
  const Expr s = x.dim(1);
  const Expr total = (past + s).simplify();
  // Write rows past .. past + s - 1, then read rows 0 .. past + s - 1.
  Tensor rows = graph().iota(past + Expr::index_var(), s, DType::I64);
  Tensor k_all = index_copy(cache.k, 2, rows, h.k);
  Tensor v_all = index_copy(cache.v, 2, rows, h.v);
  Tensor k = k_all.slice(2, 0, total);
  Tensor v = v_all.slice(2, 0, total);
  std::optional<Tensor> mask;
  // Bottom-right aligned; the last position alone sees every key.
  if (cfg_.causal && !last_only) mask = causal_mask(graph(), s, total, past);
  return {attend(h.q, k, v, mask), {k_all, v_all}};
}

void mark_cache_outputs(Graph& g, const KVCache& inputs, const KVCache& updated) {
  g.output(g.node(inputs.k.node()).name + ".next", updated.k);
  g.output(g.node(inputs.v.node()).name + ".next", updated.v);
}

}  // namespace luminal::nn
