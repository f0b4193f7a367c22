#include "luminal/nn/module.hpp"

namespace luminal::nn {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

Tensor Module::add_parameter(const std::string& name, const std::vector<Expr>& shape, DType dtype) {
  std::string full = join_name(prefix_, name);
  Tensor t = graph_->weight(full, shape, dtype);
  params_.push_back({std::move(full), t});
  return t;
}

void Module::adopt(const Module& child) {
  params_.insert(params_.end(), child.parameters().begin(), child.parameters().end());
}

}  // namespace luminal::nn
