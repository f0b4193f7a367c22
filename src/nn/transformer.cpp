#include "luminal/nn/transformer.hpp"

#include "luminal/error.hpp"
#include "luminal/frontend/linalg.hpp"

namespace luminal::nn {

namespace {

MoEConfig moe_config(const TransformerConfig& c) {
  MoEConfig m = *c.moe;
  if (m.hidden_size == 0) m.hidden_size = c.attention.hidden_size;
  m.dtype = c.attention.dtype;
  return m;
}

}  // namespace

TransformerBlock::TransformerBlock(Graph& g, const std::string& name,
                                   const TransformerConfig& config)
    : Module(g, name),
      input_layernorm_(g, join_name(name, "input_layernorm"), {config.attention.hidden_size},
                       config.rms_norm_eps, true, config.attention.dtype),
      self_attn_(g, join_name(name, "self_attn"), config.attention),
      post_attention_layernorm_(g, join_name(name, "post_attention_layernorm"),
                                {config.attention.hidden_size}, config.rms_norm_eps, true,
                                config.attention.dtype) {
  adopt(input_layernorm_);
  adopt(self_attn_);
  adopt(post_attention_layernorm_);
  const std::string mlp = join_name(name, "mlp");
  if (config.moe) {
    moe_.emplace(g, mlp, moe_config(config));
    adopt(*moe_);
  } else {
    mlp_.emplace(g, mlp, config.attention.hidden_size, config.intermediate_size, config.mlp_bias,
                 config.attention.dtype);
    adopt(*mlp_);
  }
}

Tensor TransformerBlock::feed_forward(const Tensor& h) const {
  Tensor n = post_attention_layernorm_(h);
  return h + (moe_ ? (*moe_)(n) : (*mlp_)(n));
}

Tensor TransformerBlock::forward(const Tensor& x, const Expr& offset) const {
  return feed_forward(x + self_attn_.forward(input_layernorm_(x), offset));
}

AttentionStep TransformerBlock::forward(const Tensor& x, const Expr& past, const KVCache& cache,
                                        const std::optional<RopeTables>& rope,
                                        bool last_only) const {
  AttentionStep a = self_attn_.forward(input_layernorm_(x), past, cache, rope, last_only);
  const Expr s = x.dim(1);
  const Tensor residual = last_only ? x.slice(1, (s - 1).simplify(), s) : x;
  return {feed_forward(residual + a.out), a.cache};
}

LlamaModel::LlamaModel(Graph& g, const LlamaConfig& config, const std::string& prefix)
    : Module(g, prefix),
      cfg_(config),
      embed_tokens_(g, join_name(prefix, "model.embed_tokens"), config.vocab_size,
                    config.block.attention.hidden_size, config.block.attention.dtype),
      norm_(g, join_name(prefix, "model.norm"), {config.block.attention.hidden_size},
            config.block.rms_norm_eps, true, config.block.attention.dtype) {
  adopt(embed_tokens_);
  for (int64_t i = 0; i < config.num_layers; ++i) {
    layers_.emplace_back(g, join_name(prefix, "model.layers." + std::to_string(i)), config.block);
    adopt(layers_.back());
  }
  adopt(norm_);
  if (!config.tie_word_embeddings) {
    lm_head_.emplace(g, join_name(prefix, "lm_head"), config.block.attention.hidden_size,
                     config.vocab_size, false, config.block.attention.dtype);
    adopt(*lm_head_);
  }
}

Tensor LlamaModel::head(const Tensor& h) const {
  Tensor n = norm_(h);
  return lm_head_ ? (*lm_head_)(n) : linear(n, embed_tokens_.value(embed_tokens_.weight()));
}

Tensor LlamaModel::forward(const Tensor& tokens) const {
  Tensor h = embed_tokens_(tokens);
  for (const TransformerBlock& layer : layers_) h = layer.forward(h);
  return head(h);
}

std::vector<KVCache> LlamaModel::make_caches(const Expr& batch, const Expr& max_len) const {
  std::vector<KVCache> caches;
  for (const TransformerBlock& layer : layers_) caches.push_back(layer.make_cache(batch, max_len));
  return caches;
}

LlamaModel::Step LlamaModel::forward(const Tensor& tokens, const Expr& past,
                                     const std::vector<KVCache>& caches) const {
  if (caches.size() != layers_.size())
    throw ShapeError("LlamaModel: expected " + std::to_string(layers_.size()) + " caches, got " +
                     std::to_string(caches.size()));
  Step out{embed_tokens_(tokens), {}};
  Tensor h = out.logits;
  for (size_t i = 0; i < layers_.size(); ++i) {
    AttentionStep s = layers_[i].forward(h, past, caches[i]);
    h = s.out;
    out.caches.push_back(s.cache);
  }
  out.logits = head(h);
  return out;
}

}  // namespace luminal::nn
