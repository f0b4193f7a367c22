#pragma once
// nn.Conv1d and nn.Conv2d (see module.hpp for the conventions).

#include <string>

#include "luminal/frontend/convolution.hpp"
#include "luminal/nn/module.hpp"

namespace luminal::nn {

/// Options of nn.Conv1d / nn.Conv2d besides the channel counts and kernel size.
struct ConvOptions {
  SpatialArg stride = 1;
  ConvPadding padding = 0;
  SpatialArg dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  DType dtype = DType::F32;
};

/// torch.nn.ConvNd (padding_mode="zeros") over `nsp` spatial axes: parameters
/// `weight` [out, in / groups, *kernel] and `bias` [out].
class ConvNd : public Module {
public:
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

protected:
  ConvNd(Graph& g, const std::string& name, size_t nsp, int64_t in_channels, int64_t out_channels,
         const SpatialArg& kernel_size, const ConvOptions& options);

private:
  size_t nsp_;
  ConvOptions opt_;
  Tensor weight_;
  std::optional<Tensor> bias_;
};

/// torch.nn.Conv1d: weight [out, in / groups, k].
class Conv1d : public ConvNd {
public:
  Conv1d(Graph& g, const std::string& name, int64_t in_channels, int64_t out_channels,
         const SpatialArg& kernel_size, const ConvOptions& options = {})
      : ConvNd(g, name, 1, in_channels, out_channels, kernel_size, options) {}
};

/// torch.nn.Conv2d: weight [out, in / groups, kh, kw].
class Conv2d : public ConvNd {
public:
  Conv2d(Graph& g, const std::string& name, int64_t in_channels, int64_t out_channels,
         const SpatialArg& kernel_size, const ConvOptions& options = {})
      : ConvNd(g, name, 2, in_channels, out_channels, kernel_size, options) {}
};

}  // namespace luminal::nn
