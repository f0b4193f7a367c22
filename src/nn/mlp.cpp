#include "luminal/nn/mlp.hpp"

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"

namespace luminal::nn {

Tensor activation(const Tensor& x, const std::string& name) {
  if (name == "relu") return relu(x);
  if (name == "gelu") return gelu(x);
  if (name == "gelu_tanh" || name == "gelu_new" || name == "gelu_pytorch_tanh")
    return gelu(x, "tanh");
  if (name == "silu" || name == "swish") return silu(x);
  if (name == "tanh") return tanh(x);
  if (name == "sigmoid") return sigmoid(x);
  if (name == "identity") return x;
  throw Error("activation: unknown activation '" + name +
              "' (relu, gelu, gelu_tanh, silu, tanh, sigmoid, identity)");
}

MLP::MLP(Graph& g, const std::string& name, const Expr& in_features, const Expr& hidden_features,
         const Expr& out_features, const std::string& act, bool bias, DType dtype)
    : Module(g, name),
      fc1_(g, join_name(name, "fc1"), in_features, hidden_features, bias, dtype),
      fc2_(g, join_name(name, "fc2"), hidden_features, out_features, bias, dtype),
      act_(act) {
  adopt(fc1_);
  adopt(fc2_);
}

Tensor MLP::forward(const Tensor& x) const {
  return fc2_(activation(fc1_(x), act_));
}

SwiGLU::SwiGLU(Graph& g, const std::string& name, const Expr& hidden_size,
               const Expr& intermediate_size, bool bias, DType dtype, const std::string& act)
    : Module(g, name),
      gate_(g, join_name(name, "gate_proj"), hidden_size, intermediate_size, bias, dtype),
      up_(g, join_name(name, "up_proj"), hidden_size, intermediate_size, bias, dtype),
      down_(g, join_name(name, "down_proj"), intermediate_size, hidden_size, bias, dtype),
      act_(act) {
  adopt(gate_);
  adopt(up_);
  adopt(down_);
}

Tensor SwiGLU::forward(const Tensor& x) const {
  return down_(activation(gate_(x), act_) * up_(x));
}

}  // namespace luminal::nn
