#include "luminal/nn/conv.hpp"

#include "luminal/error.hpp"

namespace luminal::nn {

namespace {

std::vector<Expr> weight_shape(const std::string& name, size_t nsp, int64_t in_channels,
                               int64_t out_channels, const SpatialArg& kernel, int64_t groups) {
  if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0)
    throw ShapeError(name + ": in_channels " + std::to_string(in_channels) + " and out_channels " +
                     std::to_string(out_channels) + " must be divisible by groups " +
                     std::to_string(groups));
  std::vector<Expr> shape = {out_channels, in_channels / groups};
  for (int64_t k : kernel.expand(nsp, name, "kernel_size", 1)) shape.push_back(k);
  return shape;
}

}  // namespace

ConvNd::ConvNd(Graph& g, const std::string& name, size_t nsp, int64_t in_channels,
               int64_t out_channels, const SpatialArg& kernel_size, const ConvOptions& options)
    : Module(g, name),
      nsp_(nsp),
      opt_(options),
      weight_(add_parameter(
          "weight", weight_shape(name, nsp, in_channels, out_channels, kernel_size, options.groups),
          options.dtype)) {
  if (options.bias) bias_ = add_parameter("bias", {out_channels}, options.dtype);
}

Tensor ConvNd::forward(const Tensor& x) const {
  auto conv = nsp_ == 1 ? &conv1d : &conv2d;
  return conv(x, value(weight_), bias_ ? std::optional<Tensor>(value(*bias_)) : std::nullopt,
              opt_.stride, opt_.padding, opt_.dilation, opt_.groups);
}

}  // namespace luminal::nn
