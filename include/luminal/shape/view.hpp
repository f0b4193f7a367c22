#pragma once
// Views: how an op reads a dense, row-major producer buffer.
//
// Every producer writes a dense row-major buffer; a consumer reads it through a
// View. A view has, per logical axis, a size and an index expression of that
// axis' own index (the variable Expr::index_var()). The physical offset of a
// logical multi-index (i0, ..., in-1) is the sum of the axis expressions, each
// evaluated at its own index:
//
//     contiguous axis   e(z) = z * stride
//     broadcast axis    e(z) = 0
//     repeated axis     e(z) = (z % n) * stride
//     merged axes       e(z) = e_a(z / n_b) + e_b(z % n_b)
//     sliced axis       e(z) = e(z * step + start)
//     flipped axis      e(z) = e(n - 1 - z)
//
// This one representation covers permute, expand/broadcast, slice, flip, repeat,
// merging axes and splitting axes whose expression separates (always the case
// for affine axes). Splitting an axis whose expression does not separate (for
// example after merging (3, 4) and splitting into (2, 6)) is not representable:
// split()/reshape() return std::nullopt and the frontend materialises a
// contiguous copy first. Padding and masks are not views; the frontend builds
// them from Iota + Gather / LessThan.

#include <optional>
#include <string>
#include <vector>

#include "luminal/shape/expr.hpp"

namespace luminal {

class View {
public:
  /// A rank-0 (scalar) view.
  View() = default;
  /// The dense row-major view of a buffer of this shape.
  static View contiguous(const std::vector<Expr>& shape);
  /// A view from explicit sizes and per-axis expressions (of Expr::index_var()).
  static View from_axes(std::vector<Expr> shape, std::vector<Expr> axis_exprs);

  size_t rank() const { return shape_.size(); }
  const std::vector<Expr>& shape() const { return shape_; }
  const std::vector<Expr>& axis_exprs() const { return exprs_; }
  /// Number of logical elements (simplified product of the sizes).
  Expr numel() const;

  /// All operations validate their arguments and throw ShapeError naming the
  /// operation, the view's shape and the offending argument. Negative axes
  /// count from the end as in PyTorch.
  View permute(const std::vector<int>& order) const;
  /// Insert a new axis of size 1 at `axis` (0..rank).
  View unsqueeze(int axis) const;
  /// Remove an axis of size 1. Its constant contribution to the offset moves
  /// to another axis; removing the only axis of a view whose element is at a
  /// non-zero offset throws ShapeError (a rank-0 view has no offset: copy first).
  View squeeze(int axis) const;
  /// Broadcast an axis of size 1 to `size` (reads the same element). Expanding
  /// an axis to the size it already has is a no-op.
  View expand(int axis, const Expr& size) const;
  /// Elements [start, end) with a positive constant step along `axis`.
  View slice(int axis, const Expr& start, const Expr& end, int64_t step = 1) const;
  /// Reverse `axis`.
  View flip(int axis) const;
  /// Tile `axis` `times` times (size n -> n * times, element i reads i % n).
  View repeat(int axis, const Expr& times) const;
  /// Merge `axis` and `axis + 1` into one axis (row-major order).
  View merge(int axis) const;
  /// Split `axis` (size n) into (n / inner, inner). nullopt if the axis
  /// expression does not separate into the two new indexes.
  std::optional<View> split(int axis, const Expr& inner) const;
  /// Row-major reshape. nullopt if the data would have to be copied.
  /// Throws ShapeError if the element counts provably differ.
  std::optional<View> reshape(const std::vector<Expr>& new_shape) const;

  /// True if this is the dense row-major view of its shape.
  bool is_contiguous() const;
  /// The physical offset of a symbolic multi-index (simplified).
  Expr offset(const std::vector<Expr>& indices) const;
  /// The physical offset of logical flat (row-major) index `flat` (simplified).
  /// This is the expression code generation prints.
  Expr flat_offset(const Expr& flat) const;
  /// Evaluate the offset of a concrete multi-index with concrete dims.
  int64_t offset_at(const std::vector<int64_t>& indices, const DimMap& dims) const;
  /// Concrete sizes for these dims (throws LookupError if a dim is missing).
  std::vector<int64_t> concrete_shape(const DimMap& dims) const;

  /// "[s, 64] {_z * 64, _z}"
  std::string to_string() const;
  bool operator==(const View& other) const = default;

private:
  static View contiguous_uncached(const std::vector<Expr>& shape);

  size_t normalize_axis(int axis, size_t limit, const char* op) const;
  std::vector<Expr> shape_;
  std::vector<Expr> exprs_;
};

/// Row-major strides (in elements) of a shape, simplified.
std::vector<Expr> row_major_strides(const std::vector<Expr>& shape);

}  // namespace luminal
