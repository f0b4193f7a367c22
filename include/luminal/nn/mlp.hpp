#pragma once
// Feed-forward blocks: MLP (fc1 -> activation -> fc2, GPT-2 / BERT / ViT) and
// SwiGLU (down(silu(gate(x)) * up(x)), Llama / Qwen / Mistral), with Hugging
// Face parameter names.

#include <string>

#include "luminal/nn/linear.hpp"

namespace luminal::nn {

/// An activation by torch name: "relu", "gelu" (exact), "gelu_tanh"
/// (gelu(approximate="tanh"), HF "gelu_new" / "gelu_pytorch_tanh"), "silu"
/// ("swish"), "tanh", "sigmoid", "identity". Throws Error for another name.
Tensor activation(const Tensor& x, const std::string& name);

/// fc1 [hidden, in] -> activation -> fc2 [out, hidden] (both with bias by default).
class MLP : public Module {
public:
  MLP(Graph& g, const std::string& name, const Expr& in_features, const Expr& hidden_features,
      const Expr& out_features, const std::string& act = "gelu", bool bias = true,
      DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

private:
  Linear fc1_, fc2_;
  std::string act_;
};

/// gate_proj / up_proj [intermediate, hidden], down_proj [hidden, intermediate]:
/// down(act(gate(x)) * up(x)) with act = silu (SwiGLU) by default.
class SwiGLU : public Module {
public:
  SwiGLU(Graph& g, const std::string& name, const Expr& hidden_size, const Expr& intermediate_size,
         bool bias = false, DType dtype = DType::F32, const std::string& act = "silu");
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

private:
  Linear gate_, up_, down_;
  std::string act_;
};

}  // namespace luminal::nn
