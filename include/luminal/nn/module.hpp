#pragma once
// The nn module convention.
//
// A module is built on a Graph under a name prefix and owns its parameters as
// persistent graph inputs named `<prefix>.<local name>`, exactly as PyTorch's
// state_dict names them ("layers.0.self_attn.q_proj.weight"), so weight loaders
// (safetensors, GGUF, a torch module's state_dict) bind them by name.
// `forward(x)` records the computation; it can be called several times (each
// call records new nodes reading the same parameters). Composite modules hold
// their submodules by value and list the submodules' parameters after their
// own, in construction order; parameters() is therefore deterministic.
//
// Modules keep Tensors, which point at their Graph: a module must not outlive
// the Graph it was built on.

#include <functional>
#include <string>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal::nn {

/// A named parameter: the persistent input that holds it (shape and dtype
/// are the tensor's: the storage dtype, see ParameterStorage).
struct Parameter {
  std::string name;
  Tensor tensor;
};

/// How parameters are stored, chosen by whoever builds the model (a loader):
/// given a parameter's full name and the dtype the module computes in, the
/// dtype of the graph input that holds it. A block-quantized storage type
/// (Q8_0 / Q4_0 / Q4_1, e.g. a GGUF file's) keeps the weights quantized in the
/// graph: the module computes on Cast(input, compute dtype), the
/// dequantization, which the backends' rules fuse into the kernels that read
/// it (quantized GEMV/GEMM, embedding gathers) instead of expanding the weights.
using StorageDTypeFn = std::function<DType(const std::string& name, DType compute_dtype)>;

/// Installs a StorageDTypeFn for the modules constructed on this thread while
/// it is alive (scopes nest; the previous one is restored).
class ParameterStorage {
public:
  explicit ParameterStorage(StorageDTypeFn fn);
  ~ParameterStorage();
  ParameterStorage(const ParameterStorage&) = delete;
  ParameterStorage& operator=(const ParameterStorage&) = delete;

private:
  StorageDTypeFn previous_;
};

/// `prefix.name`, or `name` alone for an empty prefix.
std::string join_name(const std::string& prefix, const std::string& name);

class Module {
public:
  virtual ~Module() = default;
  /// Every parameter of the module and its submodules, in construction order.
  const std::vector<Parameter>& parameters() const { return params_; }
  /// The name prefix the module was built with.
  const std::string& prefix() const { return prefix_; }
  Graph& graph() const { return *graph_; }
  /// A parameter's value for one use in forward(): the input itself, or a new
  /// Cast (dequantization) to the compute dtype when a ParameterStorage scope
  /// stores it in another dtype. A Cast per use, created where it is used,
  /// keeps each layer's dequantization inside that layer (repeated-layer
  /// folding sees quantized weights as the layer's inputs, and a tied lm_head
  /// gets its own dequantizing kernel instead of a shared dequantized table).
  Tensor value(const Tensor& param) const;

protected:
  Module(Graph& g, std::string prefix) : graph_(&g), prefix_(std::move(prefix)) {}
  /// Create the persistent input `<prefix>.<name>` (stored in the dtype the
  /// ParameterStorage scope picks, `dtype` by default) and list it as a
  /// parameter; compute with value(input).
  Tensor add_parameter(const std::string& name, const std::vector<Expr>& shape, DType dtype);
  /// List a submodule's parameters as this module's (call once per submodule,
  /// after constructing it).
  void adopt(const Module& child);

private:
  Graph* graph_;
  std::string prefix_;
  std::vector<Parameter> params_;
  std::vector<std::pair<NodeId, DType>> compute_dtypes_;  // stored in another dtype
};

}  // namespace luminal::nn
