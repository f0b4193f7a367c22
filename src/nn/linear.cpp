#include "luminal/nn/linear.hpp"

#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/linalg.hpp"

namespace luminal::nn {

Linear::Linear(Graph& g, const std::string& name, const Expr& in_features, const Expr& out_features,
               bool bias, DType dtype)
    : Module(g, name), weight_(add_parameter("weight", {out_features, in_features}, dtype)) {
  if (bias) bias_ = add_parameter("bias", {out_features}, dtype);
}

Tensor Linear::forward(const Tensor& x) const {
  return linear(x, value(weight_), bias_ ? std::optional<Tensor>(value(*bias_)) : std::nullopt);
}

Embedding::Embedding(Graph& g, const std::string& name, const Expr& num_embeddings,
                     const Expr& embedding_dim, DType dtype)
    : Module(g, name), weight_(add_parameter("weight", {num_embeddings, embedding_dim}, dtype)) {}

Tensor Embedding::forward(const Tensor& ids) const {
  return embedding(ids, value(weight_));
}

}  // namespace luminal::nn
