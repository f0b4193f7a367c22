#pragma once
// nn.Linear and nn.Embedding (see module.hpp for the conventions).

#include <optional>
#include <string>

#include "luminal/nn/module.hpp"

namespace luminal::nn {

/// torch.nn.Linear: parameters `weight` [out_features, in_features] and
/// (optional) `bias` [out_features]; forward = F.linear (x @ weight^T + bias).
class Linear : public Module {
public:
  Linear(Graph& g, const std::string& name, const Expr& in_features, const Expr& out_features,
         bool bias = true, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  const Tensor& weight() const { return weight_; }
  const std::optional<Tensor>& bias() const { return bias_; }

private:
  Tensor weight_;
  std::optional<Tensor> bias_;
};

/// torch.nn.Embedding: parameter `weight` [num_embeddings, embedding_dim];
/// forward(ids) = F.embedding (ids of any shape, i32 / i64 -> ids.shape + [dim]).
class Embedding : public Module {
public:
  Embedding(Graph& g, const std::string& name, const Expr& num_embeddings,
            const Expr& embedding_dim, DType dtype = DType::F32);
  Tensor forward(const Tensor& ids) const;
  Tensor operator()(const Tensor& ids) const { return forward(ids); }
  const Tensor& weight() const { return weight_; }

private:
  Tensor weight_;
};

}  // namespace luminal::nn
