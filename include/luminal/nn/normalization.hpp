#pragma once
// nn.LayerNorm and nn.RMSNorm (see module.hpp for the conventions).

#include <optional>
#include <string>
#include <vector>

#include "luminal/nn/module.hpp"

namespace luminal::nn {

/// torch.nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias):
/// parameters `weight` and `bias` of normalized_shape (when affine).
class LayerNorm : public Module {
public:
  LayerNorm(Graph& g, const std::string& name, const std::vector<Expr>& normalized_shape,
            double eps = 1e-5, bool elementwise_affine = true, bool bias = true,
            DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

private:
  std::vector<Expr> shape_;
  double eps_;
  std::optional<Tensor> weight_, bias_;
};

/// torch.nn.RMSNorm(normalized_shape, eps, elementwise_affine): parameter
/// `weight` of normalized_shape; eps = nullopt uses torch's default (the
/// epsilon of the computation dtype). Llama's RMSNorm is this with eps 1e-5/1e-6.
class RMSNorm : public Module {
public:
  RMSNorm(Graph& g, const std::string& name, const std::vector<Expr>& normalized_shape,
          std::optional<double> eps = std::nullopt, bool elementwise_affine = true,
          DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

private:
  std::vector<Expr> shape_;
  std::optional<double> eps_;
  std::optional<Tensor> weight_;
};

}  // namespace luminal::nn
