#include "luminal/nn/normalization.hpp"

#include "luminal/frontend/normalization.hpp"

namespace luminal::nn {

LayerNorm::LayerNorm(Graph& g, const std::string& name, const std::vector<Expr>& normalized_shape,
                     double eps, bool elementwise_affine, bool bias, DType dtype)
    : Module(g, name), shape_(normalized_shape), eps_(eps) {
  if (elementwise_affine) {
    weight_ = add_parameter("weight", shape_, dtype);
    if (bias) bias_ = add_parameter("bias", shape_, dtype);
  }
}

Tensor LayerNorm::forward(const Tensor& x) const {
  return layer_norm(x, shape_, weight_ ? std::optional<Tensor>(value(*weight_)) : std::nullopt,
                    bias_ ? std::optional<Tensor>(value(*bias_)) : std::nullopt, eps_);
}

RMSNorm::RMSNorm(Graph& g, const std::string& name, const std::vector<Expr>& normalized_shape,
                 std::optional<double> eps, bool elementwise_affine, DType dtype)
    : Module(g, name), shape_(normalized_shape), eps_(eps) {
  if (elementwise_affine) weight_ = add_parameter("weight", shape_, dtype);
}

Tensor RMSNorm::forward(const Tensor& x) const {
  return rms_norm(x, shape_, weight_ ? std::optional<Tensor>(value(*weight_)) : std::nullopt, eps_);
}

}  // namespace luminal::nn
