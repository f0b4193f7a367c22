#include "luminal/core/tensor.hpp"

#include "luminal/error.hpp"

namespace luminal {

namespace {

Tensor with_view(const Tensor& t, View view) {
  return Tensor(t.graph(), t.node(), std::move(view), t.dtype());
}

Graph& same_graph(const Tensor& a, const Tensor& b, const char* op) {
  if (a.graph() != b.graph())
    throw Error(std::string(op) + ": operands " + a.describe() + " and " + b.describe() +
                " belong to different graphs");
  return *a.graph();
}

// A scalar constant of t's dtype, broadcast to t's shape.
Tensor scalar_like(const Tensor& t, double value) {
  Graph& g = *t.graph();
  Tensor c = is_int(t.dtype()) ? g.constant_int(static_cast<int64_t>(value), t.dtype())
                               : g.constant(value, t.dtype());
  return c.expand(t.shape());
}

// Broadcast both operands to their common shape (PyTorch rules), then apply a primitive.
Tensor broadcast_binary(OpKind kind, const Tensor& a, const Tensor& b) {
  const char* op = op_name(kind).data();
  Graph& g = same_graph(a, b, op);
  std::vector<Expr> shape = broadcast_shapes(a.shape(), b.shape(), op);
  return g.binary(kind, a.expand(shape), b.expand(shape));
}

void require_arith(const char* op, const Tensor& t) {
  if (t.dtype() == DType::Bool)
    throw DTypeError(std::string(op) + ": not defined for bool tensors: " + t.describe());
}

}  // namespace

Expr Tensor::dim(int axis) const {
  auto r = static_cast<int>(rank());
  if (axis < -r || axis >= r)
    throw ShapeError("dim: axis " + std::to_string(axis) + " is out of range for " + describe());
  return shape()[axis < 0 ? axis + r : axis];
}

std::string Tensor::describe() const {
  return to_string(dtype_) + to_string(shape());
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  return with_view(*this, view_.permute(order));
}

Tensor Tensor::transpose(int a, int b) const {
  auto r = static_cast<int>(rank());
  if (a < -r || a >= r || b < -r || b >= r)
    throw ShapeError("transpose: axes (" + std::to_string(a) + ", " + std::to_string(b) +
                     ") are out of range for " + describe());
  std::vector<int> order(rank());
  for (int i = 0; i < r; ++i) order[i] = i;
  std::swap(order[a < 0 ? a + r : a], order[b < 0 ? b + r : b]);
  return permute(order);
}

Tensor Tensor::unsqueeze(int axis) const {
  return with_view(*this, view_.unsqueeze(axis));
}

Tensor Tensor::squeeze(int axis) const {
  // A rank-0 view has no room for an offset: squeezing the last axis of a view
  // whose single element is not at offset 0 (x[3] of a vector) needs a copy.
  if (rank() == 1 && view_.shape()[0].as_const() == 1 &&
      view_.axis_exprs()[0].substitute(Expr::index_var().name(), 0).simplify() != Expr(0))
    return contiguous().squeeze(axis);
  return with_view(*this, view_.squeeze(axis));
}

std::vector<Expr> broadcast_shapes(const std::vector<Expr>& a, const std::vector<Expr>& b,
                                   const char* op) {
  size_t n = std::max(a.size(), b.size());
  std::vector<Expr> out(n);
  for (size_t i = 0; i < n; ++i) {
    // Align from the right, as PyTorch does.
    const Expr* da = i + a.size() >= n ? &a[i + a.size() - n] : nullptr;
    const Expr* db = i + b.size() >= n ? &b[i + b.size() - n] : nullptr;
    if (!da)
      out[i] = *db;
    else if (!db)
      out[i] = *da;
    else if (da->as_const() == 1)
      out[i] = *db;
    else if (db->as_const() == 1 || provably_equal(*da, *db))
      out[i] = *da;
    else
      throw ShapeError(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) +
                       " cannot be broadcast (dim " + std::to_string(i) + ": " + da->to_string() +
                       " vs " + db->to_string() + ")");
  }
  return out;
}

Tensor Tensor::expand(const std::vector<Expr>& target) const {
  if (target.size() < rank())
    throw ShapeError("expand: cannot expand " + describe() + " to fewer dims " + to_string(target));
  View v = view_;
  while (v.rank() < target.size()) v = v.unsqueeze(0);
  for (size_t i = 0; i < target.size(); ++i) {
    if (provably_equal(v.shape()[i], target[i])) continue;
    if (v.shape()[i].as_const() != 1)
      throw ShapeError("expand: cannot expand " + describe() + " to " + to_string(target) +
                       " (dim " + std::to_string(i) + " is " + v.shape()[i].to_string() +
                       ", not 1)");
    v = v.expand(static_cast<int>(i), target[i]);
  }
  return with_view(*this, std::move(v));
}

Tensor Tensor::slice(int axis, const Expr& start, const Expr& end, int64_t step) const {
  return with_view(*this, view_.slice(axis, start, end, step));
}

Tensor Tensor::flip(int axis) const {
  return with_view(*this, view_.flip(axis));
}

Tensor Tensor::repeat_axis(int axis, const Expr& times) const {
  return with_view(*this, view_.repeat(axis, times));
}

Tensor Tensor::reshape(const std::vector<Expr>& shape) const {
  if (auto v = view_.reshape(shape)) return with_view(*this, std::move(*v));
  // The view cannot express this reshape without moving data: copy densely first.
  Tensor dense = contiguous();
  auto v = dense.view().reshape(shape);
  if (!v) throw ShapeError("reshape: cannot reshape " + describe() + " to " + to_string(shape));
  return with_view(dense, std::move(*v));
}

Tensor Tensor::contiguous() const {
  Tensor one = dtype_ == DType::Bool || is_int(dtype_) ? graph_->constant_int(1, dtype_)
                                                       : graph_->constant(1.0, dtype_);
  return graph_->binary(OpKind::Mul, *this, one.expand(shape()));
}

Tensor Tensor::cast(DType dtype) const {
  return graph_->cast(*this, dtype);
}
Tensor Tensor::exp2() const {
  return graph_->unary(OpKind::Exp2, *this);
}
Tensor Tensor::log2() const {
  return graph_->unary(OpKind::Log2, *this);
}
Tensor Tensor::sin() const {
  return graph_->unary(OpKind::Sin, *this);
}
Tensor Tensor::sqrt() const {
  return graph_->unary(OpKind::Sqrt, *this);
}
Tensor Tensor::recip() const {
  return graph_->unary(OpKind::Recip, *this);
}
Tensor Tensor::mod(const Tensor& other) const {
  return broadcast_binary(OpKind::Mod, *this, other);
}
Tensor Tensor::lt(const Tensor& other) const {
  return broadcast_binary(OpKind::LessThan, *this, other);
}
Tensor Tensor::gather_from(const Tensor& data) const {
  same_graph(*this, data, "Gather");
  return graph_->gather(*this, data);
}
Tensor Tensor::scatter(const Tensor& indexes, const Tensor& src) const {
  same_graph(*this, indexes, "Scatter");
  same_graph(*this, src, "Scatter");
  return graph_->scatter(*this, indexes, src);
}
Tensor Tensor::sum_reduce(int axis) const {
  return graph_->reduce(OpKind::SumReduce, *this, axis);
}
Tensor Tensor::max_reduce(int axis) const {
  return graph_->reduce(OpKind::MaxReduce, *this, axis);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return broadcast_binary(OpKind::Add, a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return broadcast_binary(OpKind::Mul, a, b);
}
Tensor operator%(const Tensor& a, const Tensor& b) {
  return broadcast_binary(OpKind::Mod, a, b);
}

Tensor operator-(const Tensor& a) {
  require_arith("neg", a);
  return a * scalar_like(a, -1.0);
}

Tensor operator-(const Tensor& a, const Tensor& b) {
  require_arith("sub", a);
  return a + (-b);
}

Tensor operator/(const Tensor& a, const Tensor& b) {
  if (!is_float(a.dtype()) || !is_float(b.dtype()))
    throw DTypeError("div: true division needs float tensors, got " + a.describe() + " and " +
                     b.describe());
  return a * b.recip();
}

Tensor operator+(const Tensor& a, double b) {
  return a + scalar_like(a, b);
}
Tensor operator+(double a, const Tensor& b) {
  return scalar_like(b, a) + b;
}
Tensor operator-(const Tensor& a, double b) {
  return a - scalar_like(a, b);
}
Tensor operator-(double a, const Tensor& b) {
  return scalar_like(b, a) - b;
}
Tensor operator*(const Tensor& a, double b) {
  return a * scalar_like(a, b);
}
Tensor operator*(double a, const Tensor& b) {
  return scalar_like(b, a) * b;
}
Tensor operator/(const Tensor& a, double b) {
  return a / scalar_like(a, b);
}
Tensor operator/(double a, const Tensor& b) {
  return scalar_like(b, a) / b;
}

}  // namespace luminal
