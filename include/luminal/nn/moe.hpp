#pragma once
// Mixture of experts with a softmax router and top-k selection (Mixtral /
// Qwen-MoE / OLMoE style), Hugging Face parameter names:
//   <name>.gate.weight                     router [num_experts, hidden]
//   <name>.experts.<e>.{gate,up,down}_proj SwiGLU experts
//
//   p = softmax(router(x)) (in f32, as HF), (w, idx) = topk(p, k),
//   w /= sum(w) when norm_topk_prob, out = sum_e gate[e] * expert_e(x)
// where gate [tokens, E] is w scattered to idx (zeros elsewhere). Every
// expert is evaluated densely on every token and weighted by its gate (0 for
// unselected experts), which is exact: the routing decision is made by topk,
// never by thresholds on arithmetic.

#include <string>
#include <vector>

#include "luminal/nn/linear.hpp"
#include "luminal/nn/mlp.hpp"

namespace luminal::nn {

struct MoEConfig {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // per expert
  int64_t num_experts = 0;
  int64_t top_k = 2;
  bool norm_topk_prob = true;  // Mixtral: true; Qwen2-MoE: false; Qwen3-MoE: configurable
  DType dtype = DType::F32;
};

class MoE : public Module {
public:
  MoE(Graph& g, const std::string& name, const MoEConfig& config);
  /// x [..., hidden] -> [..., hidden].
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  /// The dense routing weights [..., num_experts] (for tests and diagnostics).
  Tensor routing_weights(const Tensor& x) const;

private:
  MoEConfig cfg_;
  Linear router_;
  std::vector<SwiGLU> experts_;
};

}  // namespace luminal::nn
