#pragma once
// Binding a weight file's tensors to a graph's inputs by name: every Input
// node whose name (optionally renamed) matches a stored tensor gets a host
// tensor, after checking the shape and the dtype.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/io/stored_tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

struct BindOptions {
  /// Maps a graph input name to the tensor name in the file (identity when empty).
  std::function<std::string(std::string_view input_name)> tensor_name;
  /// When the dtypes differ, convert (Cast semantics; block types are
  /// dequantized) instead of throwing. Off by default: a mismatch is usually a bug.
  bool convert_dtypes = false;
  /// Tensors whose stored dtype is the input's are bound without a copy: the
  /// TensorData borrows the file's mapping, so the WeightSource must outlive
  /// every use of them (a loaded model keeps its files open). Off by default.
  bool borrow_mapping = false;
};

struct BoundWeights {
  /// (input name, data) in graph input order, for Interpreter::set_input and friends.
  std::vector<std::pair<std::string, TensorData>> tensors;
  /// Inputs that no tensor matched.
  std::vector<std::string> missing;
  /// Tensors that no input asked for (file order).
  std::vector<std::string> unused;
  /// Values of symbolic input dims fixed by the tensors' shapes.
  DimMap dims;
};

/// Bind `weights` to the inputs of `graph`. Throws ShapeError (the shape does
/// not match) or DTypeError (the dtype does not match and convert_dtypes is
/// off, or cannot be converted) naming the file, the tensor, what the input
/// expects and what the file has.
BoundWeights bind_weights(const Graph& graph, const WeightSource& weights,
                          const BindOptions& options = {});

}  // namespace luminal
