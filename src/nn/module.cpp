#include "luminal/nn/module.hpp"

namespace luminal::nn {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

namespace {
thread_local StorageDTypeFn storage_fn;
}

ParameterStorage::ParameterStorage(StorageDTypeFn fn) : previous_(std::move(storage_fn)) {
  storage_fn = std::move(fn);
}

ParameterStorage::~ParameterStorage() {
  storage_fn = std::move(previous_);
}

Tensor Module::add_parameter(const std::string& name, const std::vector<Expr>& shape, DType dtype) {
  std::string full = join_name(prefix_, name);
  const DType storage = storage_fn ? storage_fn(full, dtype) : dtype;
  Tensor t = graph_->weight(full, shape, storage);
  params_.push_back({std::move(full), t});
  if (storage != dtype) compute_dtypes_.emplace_back(t.node(), dtype);
  return t;
}

Tensor Module::value(const Tensor& param) const {
  for (const auto& [node, dtype] : compute_dtypes_)
    if (node == param.node()) return graph_->cast(param, dtype);
  return param;
}

void Module::adopt(const Module& child) {
  params_.insert(params_.end(), child.parameters().begin(), child.parameters().end());
}

}  // namespace luminal::nn
