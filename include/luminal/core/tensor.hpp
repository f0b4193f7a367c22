#pragma once
// Tensor: a value-type handle to a node of a Graph seen through a View.
// Movement methods (permute, expand, slice, reshape...) only change the view
// and record nothing; the other methods record HLIR nodes.
//
// This is the primitive layer. Binary operators broadcast as PyTorch does and
// accept scalars (converted to the tensor's dtype) but do not promote dtypes:
// mixing dtypes throws DTypeError (promotion lives in the frontend).

#include <string>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/shape/expr.hpp"
#include "luminal/shape/view.hpp"

namespace luminal {

class Tensor {
public:
  Tensor(Graph* graph, NodeId node, View view, DType dtype)
      : graph_(graph), node_(node), view_(std::move(view)), dtype_(dtype) {}

  Graph* graph() const { return graph_; }
  NodeId node() const { return node_; }
  const View& view() const { return view_; }
  DType dtype() const { return dtype_; }
  const std::vector<Expr>& shape() const { return view_.shape(); }
  size_t rank() const { return view_.rank(); }
  /// Size of `axis` (negative counts from the end).
  Expr dim(int axis) const;
  Expr numel() const { return view_.numel(); }
  /// "f32[s, 64]"
  std::string describe() const;

  // ---- movement (views only) ----------------------------------------------
  Tensor permute(const std::vector<int>& order) const;
  Tensor transpose(int a, int b) const;
  Tensor unsqueeze(int axis) const;
  Tensor squeeze(int axis) const;
  /// Broadcast size-1 axes (and prepend axes) to `shape`, as torch.expand.
  Tensor expand(const std::vector<Expr>& shape) const;
  Tensor slice(int axis, const Expr& start, const Expr& end, int64_t step = 1) const;
  Tensor flip(int axis) const;
  Tensor repeat_axis(int axis, const Expr& times) const;
  /// Row-major reshape; copies (contiguous()) only when the view cannot express it.
  Tensor reshape(const std::vector<Expr>& shape) const;
  /// A dense row-major copy (Mul by one: preserves -0.0, NaN and every dtype).
  Tensor contiguous() const;

  // ---- primitive ops -------------------------------------------------------
  Tensor cast(DType dtype) const;
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor sqrt() const;
  Tensor recip() const;
  Tensor mod(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  /// out[k] = data[this[k]] over the logical flat view of `data`.
  Tensor gather_from(const Tensor& data) const;
  /// Copy of this with out[indexes[k]] = src[k].
  Tensor scatter(const Tensor& indexes, const Tensor& src) const;
  Tensor sum_reduce(int axis) const;
  Tensor max_reduce(int axis) const;

private:
  Graph* graph_;
  NodeId node_;
  View view_;
  DType dtype_;
};

/// The broadcast shape of two shapes (PyTorch rules); throws ShapeError.
std::vector<Expr> broadcast_shapes(const std::vector<Expr>& a, const std::vector<Expr>& b,
                                   const char* op);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);  // a * recip(b), floats only
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(const Tensor& a, double b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(const Tensor& a, double b);
Tensor operator/(double a, const Tensor& b);

}  // namespace luminal
