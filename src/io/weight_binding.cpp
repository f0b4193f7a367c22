#include "luminal/io/weight_binding.hpp"

#include <set>
#include <string>

#include "luminal/error.hpp"

namespace luminal {
namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// Match the input's dims against the stored shape, binding plain variables.
// Returns "" on success, else why not.
std::string match_shape(const std::vector<Expr>& expected, const std::vector<int64_t>& actual,
                        DimMap& dims) {
  if (expected.size() != actual.size()) {
    return "rank " + std::to_string(expected.size()) + " vs " + std::to_string(actual.size());
  }
  DimMap bound = dims;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Expr& e = expected[i];
    if (e.is_var() && !bound.count(e.name())) {
      bound[e.name()] = actual[i];
      continue;
    }
    int64_t want = 0;
    try {
      want = e.eval(bound);
    } catch (const LookupError&) {
      return "dim " + std::to_string(i) + " (" + e.to_string() +
             ") is an expression of dims no tensor has fixed yet";
    }
    if (want != actual[i]) {
      return "dim " + std::to_string(i) + " is " + std::to_string(actual[i]) + ", expected " +
             e.to_string() + (e.is_const() ? "" : " = " + std::to_string(want));
    }
  }
  dims = std::move(bound);
  return "";
}

}  // namespace

BoundWeights bind_weights(const Graph& graph, const WeightSource& weights,
                          const BindOptions& options) {
  BoundWeights out;
  std::set<std::string> used;
  for (NodeId id : graph.inputs()) {
    const Node& node = graph.node(id);
    const std::string tensor_name =
        options.tensor_name ? options.tensor_name(node.name) : node.name;
    const StoredTensor* t = weights.find(tensor_name);
    if (t == nullptr) {
      out.missing.push_back(node.name);
      continue;
    }
    const std::string label =
        weights.path() + ": tensor '" + tensor_name + "'" +
        (tensor_name == node.name ? "" : " (graph input '" + node.name + "')");
    const std::string expected = to_string(node.dtype) + to_string(node.shape);
    const std::string why = match_shape(node.shape, t->shape, out.dims);
    if (!why.empty()) {
      throw ShapeError(label + ": the graph input expects " + expected + " but the file has " +
                       t->type_name + dims_text(t->shape) + " (" + why + ")");
    }
    if (t->dtype != node.dtype && !options.convert_dtypes) {
      throw DTypeError(label + ": the graph input expects " + expected + " but the file has " +
                       t->type_name + dims_text(t->shape) +
                       " (set BindOptions::convert_dtypes to convert)");
    }
    try {
      if (options.borrow_mapping && t->dtype == node.dtype) {
        int64_t numel = 1;
        for (int64_t d : t->shape) numel *= d;
        const size_t need = storage_bytes(node.dtype, numel);
        if (need != t->data.size())
          throw ShapeError(label + ": " + std::to_string(t->data.size()) +
                           " bytes, its shape needs " + std::to_string(need));
        // Read-only use: programs never write their weight inputs.
        out.tensors.emplace_back(
            node.name,
            weights.file_mapped()
                ? TensorData::borrow_file_mapping(node.dtype, t->shape, t->data.data(), nullptr)
                : TensorData::borrow(node.dtype, t->shape, const_cast<std::byte*>(t->data.data()),
                                     nullptr));
      } else {
        out.tensors.emplace_back(node.name, convert_tensor(*t, node.dtype));
      }
    } catch (const DTypeError& e) {
      throw DTypeError(label + ": cannot bind to the graph input " + expected + ": " + e.what());
    }
    used.insert(tensor_name);
  }
  for (const StoredTensor& t : weights.tensors()) {
    if (!used.count(t.name)) out.unused.push_back(t.name);
  }
  return out;
}

}  // namespace luminal
