#pragma once
// The reference interpreter: executes HLIR directly, simply and obviously
// correctly. It is the semantic oracle every backend is tested against.
//
// Arithmetic: floats are computed in double and rounded to the node's dtype
// on store (correctly rounded for + * recip sqrt in f32/f16/bf16); reductions
// accumulate in double (floats) or int64 with wrap-around (ints). Integers
// wrap to their dtype; Mod by integer zero throws. MaxReduce propagates NaN
// and yields -inf (floats) or the dtype minimum (ints) over an empty axis.

#include <map>
#include <string>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

class Interpreter {
public:
  /// The graph must outlive the interpreter.
  explicit Interpreter(const Graph& graph);

  /// Bind an input. Checks the name, dtype and rank now and the dims at run().
  void set_input(const std::string& name, TensorData data);
  bool has_input(const std::string& name) const;
  /// The data bound to input `name`, or nullptr.
  const TensorData* bound_input(const std::string& name) const {
    auto it = inputs_.find(name);
    return it == inputs_.end() ? nullptr : &it->second;
  }
  /// Run the graph. Dims not given are inferred from the input shapes (a
  /// declared dim that is a bare variable takes the input's size); every
  /// input's shape must then equal its declared dims. Non-persistent inputs
  /// are released afterwards; persistent ones stay bound for the next run.
  void run(const DimMap& dims = {});
  /// The dims used by the last run().
  const DimMap& dims() const { return dims_; }
  /// A named output of the last run(); throws LookupError if unknown.
  const TensorData& output(const std::string& name) const;
  const std::map<std::string, TensorData>& outputs() const { return outputs_; }

private:
  const Graph& graph_;
  std::map<std::string, TensorData> inputs_;
  std::map<std::string, TensorData> outputs_;
  DimMap dims_;
};

/// Validate data bound to input `name` (exists, dtype, rank, and a fixed
/// shape's sizes); throws LookupError, DTypeError or ShapeError naming the
/// input. Shared by every executor.
void check_input(const Graph& graph, const std::string& name, const TensorData& data);
/// The inputs whose declared shapes use dims (the others' shapes are fixed,
/// checked by check_input): what infer_dims and resolve_dims look at.
std::vector<NodeId> inputs_with_dims(const Graph& graph);
/// Dims for a run: infer_dims, then check every bound input's shape against its
/// declared dims (ShapeError / LookupError naming the input). Shared by every
/// executor; one that runs often passes inputs_with_dims(graph), computed once.
DimMap resolve_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                    const DimMap& given);
DimMap resolve_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                    const DimMap& given, const std::vector<NodeId>& with_dims);

/// Infer dim values from bound input shapes; throws ShapeError on conflicts.
DimMap infer_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                  const DimMap& given);
DimMap infer_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                  const DimMap& given, const std::vector<NodeId>& with_dims);

}  // namespace luminal
