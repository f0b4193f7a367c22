#include "luminal/nn/moe.hpp"

#include "luminal/error.hpp"
#include "luminal/frontend/creation.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/frontend/reduction.hpp"
#include "luminal/frontend/sorting.hpp"

namespace luminal::nn {

MoE::MoE(Graph& g, const std::string& name, const MoEConfig& config)
    : Module(g, name),
      cfg_(config),
      router_(g, join_name(name, "gate"), config.hidden_size, config.num_experts, false,
              config.dtype) {
  if (config.num_experts < 1 || config.top_k < 1 || config.top_k > config.num_experts)
    throw ShapeError("MoE " + name + ": need 1 <= top_k (" + std::to_string(config.top_k) +
                     ") <= num_experts (" + std::to_string(config.num_experts) + ")");
  adopt(router_);
  for (int64_t e = 0; e < config.num_experts; ++e) {
    experts_.emplace_back(g, join_name(name, "experts." + std::to_string(e)), config.hidden_size,
                          config.intermediate_size, false, config.dtype);
    adopt(experts_.back());
  }
}

namespace {

struct Routing {
  Tensor gate;    // [..., E] routing weights in x's dtype (0 for unselected experts)
  Tensor chosen;  // [..., E] bool: the expert is among the token's top-k
};

Routing route(const Tensor& logits, const MoEConfig& cfg, DType dtype) {
  // HF: softmax in f32, top-k, optional renormalisation, back to x's dtype.
  Tensor probs = softmax(logits, -1, DType::F32);
  ValuesIndices top = topk(probs, cfg.top_k, -1);
  Tensor w = top.values;
  if (cfg.norm_topk_prob) w = div(w, sum(w, -1, true));
  Graph& g = *logits.graph();
  return {scatter(zeros(g, probs.shape(), dtype), -1, top.indices, to(w, dtype)),
          scatter(zeros(g, probs.shape(), DType::Bool), -1, top.indices, 1.0)};
}

}  // namespace

Tensor MoE::routing_weights(const Tensor& x) const {
  return route(router_(x), cfg_, x.dtype()).gate;
}

Tensor MoE::forward(const Tensor& x) const {
  Routing r = route(router_(x), cfg_, x.dtype());
  // Each expert's output weighted by its gate, selected exactly by `chosen`
  // (never 0 * y, which would turn an unselected inf into nan).
  std::optional<Tensor> out;
  for (int64_t e = 0; e < cfg_.num_experts; ++e) {
    Tensor term =
        where(r.chosen.slice(-1, e, e + 1), experts_[e](x) * r.gate.slice(-1, e, e + 1), 0.0);
    out = out ? *out + term : term;
  }
  return *out;
}

}  // namespace luminal::nn
