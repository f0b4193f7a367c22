#include "luminal/frontend/indexing.hpp"

#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

namespace {

std::optional<int64_t> const_of(const Expr& e) {
  return e.simplify().as_const();
}

int norm_dim(int dim, size_t rank, const char* op, const Tensor& x) {
  // torch accepts dim 0 / -1 for rank-0 tensors in indexing ops.
  const auto r = static_cast<int>(std::max<size_t>(rank, 1));
  if (dim < -r || dim >= r)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for " +
                     x.describe() + " (expected [" + std::to_string(-r) + ", " +
                     std::to_string(r - 1) + "])");
  return dim < 0 ? dim + r : dim;
}

// An exact i64 scalar holding `e` (a constant, or a rank-0 Iota for symbolic values).
Tensor expr_scalar(Graph& g, const Expr& e) {
  return expr_tensor(g, e.simplify(), DType::I64);
}

// Index tensors as i64 (Gather/Scatter accept i32 too, but all index math here is i64).
Tensor as_index(const Tensor& index, const char* op, const Tensor& x) {
  if (index.dtype() == DType::I64) return index;
  if (index.dtype() == DType::I32 || index.dtype() == DType::I8 || index.dtype() == DType::U8)
    return index.cast(DType::I64);
  throw DTypeError(std::string(op) + ": index must be an integer tensor (int64 or int32), got " +
                   index.describe() + " for " + x.describe());
}

// idx + n where idx < 0.
Tensor wrap_negative(const Tensor& idx, const Expr& n) {
  Graph& g = *idx.graph();
  return idx + idx.lt(g.constant_int(0, DType::I64)).cast(DType::I64) * expr_scalar(g, n);
}

void same_graph(const Tensor& a, const Tensor& b, const char* op) {
  if (a.graph() != b.graph())
    throw Error(std::string(op) + ": operands " + a.describe() + " and " + b.describe() +
                " belong to different graphs");
}

// Flat positions into a dense buffer of `shape` for elements at coordinates c of
// `index` (same rank as shape) with c[dim] replaced by index[c].
Tensor dim_positions(const std::vector<Expr>& shape, int dim, const Tensor& index) {
  const std::vector<Expr> strides = row_major_strides(shape);
  Tensor rest = coordinate_iota(*index.graph(), index.shape(), [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    for (size_t d = 0; d < c.size(); ++d)
      if (static_cast<int>(d) != dim) flat = flat + c[d] * strides[d];
    return flat;
  });
  return index * expr_scalar(*index.graph(), strides[dim]) + rest;
}

// Checks shared by gather / scatter: same rank, index no larger than `x` off `dim`.
void check_index_shape(const Tensor& x, int dim, const Tensor& index, const char* op) {
  if (index.rank() != x.rank())
    throw ShapeError(std::string(op) + ": index " + index.describe() +
                     " must have the same number of dims as " + x.describe());
  for (size_t d = 0; d < x.rank(); ++d) {
    auto ic = const_of(index.shape()[d]);
    auto xc = const_of(x.shape()[d]);
    if (static_cast<int>(d) != dim && ic && xc && *ic > *xc)
      throw ShapeError(std::string(op) + ": index " + index.describe() + " is larger than " +
                       x.describe() + " in dim " + std::to_string(d));
  }
}

// `src` cut to the shape of `index` (torch uses only that corner of src).
Tensor src_region(const Tensor& src, const Tensor& index, const char* op) {
  if (src.rank() != index.rank())
    throw ShapeError(std::string(op) + ": src " + src.describe() +
                     " must have the same number of dims as index " + index.describe());
  Tensor out = src;
  for (size_t d = 0; d < src.rank(); ++d) {
    if (provably_equal(src.shape()[d], index.shape()[d])) continue;
    auto ic = const_of(index.shape()[d]);
    auto sc = const_of(src.shape()[d]);
    if (ic && sc && *ic > *sc)
      throw ShapeError(std::string(op) + ": index " + index.describe() + " is larger than src " +
                       src.describe() + " in dim " + std::to_string(d));
    out = out.slice(static_cast<int>(d), 0, index.shape()[d]);
  }
  return out;
}

Tensor cast_to(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t : t.cast(dtype);
}

// `index` (1-D, length src.size(dim)) shaped to broadcast along `dim` of `shape`.
Tensor expand_along(const Tensor& index, int dim, const std::vector<Expr>& shape, const char* op) {
  if (index.rank() > 1)
    throw ShapeError(std::string(op) + ": index " + index.describe() + " must be 1-D");
  Tensor i = index.rank() == 0 ? index.reshape({1}) : index;
  if (!provably_equal(i.shape()[0], shape[dim]))
    throw ShapeError(std::string(op) + ": index " + index.describe() + " must have " +
                     shape[dim].to_string() + " entries (the size of dim " + std::to_string(dim) +
                     ")");
  std::vector<Expr> s(shape.size(), Expr(1));
  s[dim] = i.shape()[0];
  return i.reshape(s).expand(shape);
}

// index_copy / index_add: src has x's shape except on dim.
void check_source(const Tensor& x, int dim, const Tensor& src, const char* op) {
  if (src.rank() != x.rank())
    throw ShapeError(std::string(op) + ": src " + src.describe() + " must have the same rank as " +
                     x.describe());
  for (size_t k = 0; k < x.rank(); ++k)
    if (static_cast<int>(k) != dim && !provably_equal(src.shape()[k], x.shape()[k]))
      throw ShapeError(std::string(op) + ": src " + src.describe() + " must match " + x.describe() +
                       " in every dim but " + std::to_string(dim));
}

// Advanced indexing along one dim; `wrap` adds the dim size to negative indexes.
Tensor index_impl(const Tensor& x, int dim, const Tensor& idx_in, bool wrap, const char* op) {
  same_graph(x, idx_in, op);
  const int d = norm_dim(dim, x.rank(), op, x);
  if (x.rank() == 0) return index_impl(x.reshape({1}), 0, idx_in, wrap, op);
  Tensor idx = as_index(idx_in, op, x);
  if (wrap) idx = wrap_negative(idx, x.shape()[d]);
  std::vector<Expr> shape(x.shape().begin(), x.shape().begin() + d);
  shape.insert(shape.end(), idx.shape().begin(), idx.shape().end());
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  const std::vector<Expr> strides = row_major_strides(x.shape());
  const size_t ir = idx.rank();
  Tensor rest = coordinate_iota(*x.graph(), shape, [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    for (int k = 0; k < d; ++k) flat = flat + c[k] * strides[k];
    for (size_t k = d + 1; k < x.rank(); ++k) flat = flat + c[k + ir - 1] * strides[k];
    return flat;
  });
  // idx occupies axes [d, d + ir) of the result.
  Tensor i = idx;
  for (int k = 0; k < d; ++k) i = i.unsqueeze(0);
  while (i.rank() < shape.size()) i = i.unsqueeze(static_cast<int>(i.rank()));
  Tensor pos = i.expand(shape) * expr_scalar(*x.graph(), strides[d]) + rest;
  return pos.gather_from(x);
}

}  // namespace

Tensor coordinate_iota(Graph& g, const std::vector<Expr>& shape,
                       const std::function<Expr(const std::vector<Expr>& coords)>& f) {
  const std::vector<Expr> strides = row_major_strides(shape);
  const Expr z = Expr::index_var();
  std::vector<Expr> coords;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (const_of(shape[d]) == 1) {
      coords.push_back(Expr(0));
      continue;
    }
    Expr c = z / strides[d];
    if (d > 0) c = c % shape[d];
    coords.push_back(c.simplify());
  }
  Tensor flat = g.iota(f(coords).simplify(), product(shape), DType::I64);
  return flat.reshape(shape);
}

// ---- reads -------------------------------------------------------------------

Tensor gather(const Tensor& x, int dim, const Tensor& index) {
  same_graph(x, index, "gather");
  const int d = norm_dim(dim, x.rank(), "gather", x);
  if (x.rank() == 0) {
    if (index.rank() > 1)
      throw ShapeError("gather: index " + index.describe() + " must be rank 0 or 1 for " +
                       x.describe());
    return gather(x.reshape({1}), 0, index.reshape({index.numel()})).reshape(index.shape());
  }
  check_index_shape(x, d, index, "gather");
  Tensor pos = dim_positions(x.shape(), d, as_index(index, "gather", x));
  return pos.gather_from(x);
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int> dim) {
  if (!dim) return gather(ravel(x), 0, ravel(indices));
  const int d = norm_dim(*dim, x.rank(), "take_along_dim", x);
  if (x.rank() != indices.rank())
    throw ShapeError("take_along_dim: x " + x.describe() + " and indices " + indices.describe() +
                     " must have the same number of dims");
  if (x.rank() == 0) return gather(x, 0, indices);
  std::vector<Expr> xs = x.shape();
  xs[d] = indices.shape()[d];
  std::vector<Expr> b = broadcast_shapes(xs, indices.shape(), "take_along_dim");
  Tensor idx = indices.expand(b);
  b[d] = x.shape()[d];
  return gather(x.expand(b), d, idx);
}

Tensor index_select(const Tensor& x, int dim, const Tensor& index) {
  if (index.rank() > 1)
    throw ShapeError("index_select: index " + index.describe() + " must be 1-D (or 0-D) for " +
                     x.describe());
  Tensor out =
      index_impl(x, dim, index.rank() == 0 ? index.reshape({1}) : index, false, "index_select");
  return x.rank() == 0 ? out.reshape({}) : out;
}

Tensor index(const Tensor& x, int dim, const Tensor& idx) {
  return index_impl(x, dim, idx, true, "index");
}

Tensor take(const Tensor& x, const Tensor& index) {
  return index_impl(ravel(x), 0, index, true, "take");
}

Tensor embedding(const Tensor& input, const Tensor& weight) {
  if (weight.rank() != 2)
    throw ShapeError("embedding: weight must be 2-D [num_embeddings, dim], got " +
                     weight.describe());
  return index_impl(weight, 0, input, false, "embedding");
}

// ---- writes ------------------------------------------------------------------

Tensor scatter(const Tensor& x, int dim, const Tensor& index, const Tensor& src) {
  same_graph(x, index, "scatter");
  same_graph(x, src, "scatter");
  if (x.rank() == 0)
    return scatter(x.reshape({1}), 0, index.reshape({index.numel()}), src.reshape({src.numel()}))
        .reshape({});
  const int d = norm_dim(dim, x.rank(), "scatter", x);
  check_index_shape(x, d, index, "scatter");
  Tensor s = cast_to(src_region(src, index, "scatter"), x.dtype());
  return x.scatter(dim_positions(x.shape(), d, as_index(index, "scatter", x)), s);
}

Tensor scatter(const Tensor& x, int dim, const Tensor& index, double value) {
  Graph& g = *x.graph();
  Tensor v = is_int(x.dtype()) ? g.constant_int(static_cast<int64_t>(value), x.dtype())
                               : g.constant(value, x.dtype());
  return scatter(x, dim, index, v.expand(index.shape()));
}

Tensor scatter_add(const Tensor& x, int dim, const Tensor& index, const Tensor& src) {
  same_graph(x, index, "scatter_add");
  same_graph(x, src, "scatter_add");
  if (x.dtype() == DType::Bool)
    throw DTypeError("scatter_add: not defined for bool tensors: " + x.describe());
  if (x.rank() == 0)
    return scatter_add(x.reshape({1}), 0, index.reshape({index.numel()}),
                       src.reshape({src.numel()}))
        .reshape({});
  const int d = norm_dim(dim, x.rank(), "scatter_add", x);
  check_index_shape(x, d, index, "scatter_add");
  Graph& g = *x.graph();
  Tensor idx = as_index(index, "scatter_add", x);
  Tensor s = cast_to(src_region(src, index, "scatter_add"), x.dtype());
  // One-hot over a new axis j (inserted after dim): keep -src where index == j,
  // else 0, and subtract the sum. x - (+0.0) == x bit for bit (also for x = -0.0,
  // which x + 0.0 would turn into +0.0), and x - sum(-src) == x + sum(src) exactly
  // (negation is exact and rounding is symmetric).
  std::vector<Expr> big = idx.shape();
  big.insert(big.begin() + d + 1, x.shape()[d]);
  std::vector<Expr> jshape(big.size(), Expr(1));
  jshape[d + 1] = x.shape()[d];
  Tensor j = g.arange(x.shape()[d], DType::I64).reshape(jshape).expand(big);
  Tensor i = idx.unsqueeze(d + 1).expand(big);
  Tensor differs = ne(i, j);
  Tensor contrib = masked_fill((-s).unsqueeze(d + 1).expand(big), differs, 0.0).sum_reduce(d);
  // contrib has index's shape with dim replaced by x's size: pad the other dims.
  std::vector<Expr> pads;
  for (size_t k = x.rank(); k-- > 0;) {
    pads.push_back(0);
    pads.push_back(static_cast<int>(k) == d ? Expr(0)
                                            : (x.shape()[k] - contrib.shape()[k]).simplify());
  }
  bool needs_pad = false;
  for (const Expr& p : pads) needs_pad = needs_pad || !provably_equal(p, 0);
  if (needs_pad) contrib = pad(contrib, pads);
  return x - contrib;
}

Tensor index_copy(const Tensor& x, int dim, const Tensor& index, const Tensor& src) {
  const int d = norm_dim(dim, x.rank(), "index_copy", x);
  if (x.rank() == 0) return scatter(x, 0, index, src);
  check_source(x, d, src, "index_copy");
  return scatter(x, d, expand_along(index, d, src.shape(), "index_copy"), src);
}

Tensor index_add(const Tensor& x, int dim, const Tensor& index, const Tensor& src, double alpha) {
  const int d = norm_dim(dim, x.rank(), "index_add", x);
  Tensor s = cast_to(src, x.dtype());
  if (alpha != 1.0) s = s * alpha;
  if (x.rank() == 0) return scatter_add(x, 0, index, s);
  check_source(x, d, src, "index_add");
  return scatter_add(x, d, expand_along(index, d, src.shape(), "index_add"), s);
}

Tensor index_fill(const Tensor& x, int dim, const Tensor& index, double value) {
  const int d = norm_dim(dim, x.rank(), "index_fill", x);
  if (x.rank() == 0) return scatter(x, 0, index.reshape({index.numel()}), value);
  std::vector<Expr> shape = x.shape();
  shape[d] = index.rank() == 0 ? Expr(1) : index.shape()[0];
  return scatter(x, d, expand_along(index, d, shape, "index_fill"), value);
}

Tensor index_put(const Tensor& x, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate) {
  // Leading index tensors; trailing nullopt entries are full slices.
  size_t k = 0;
  while (k < indices.size() && indices[k]) ++k;
  for (size_t j = k; j < indices.size(); ++j)
    if (indices[j])
      throw ShapeError(
          "index_put: a full slice (None) before an index tensor is not supported "
          "for " +
          x.describe());
  if (k == 0) throw ShapeError("index_put: expects at least one index tensor for " + x.describe());
  if (indices.size() > x.rank())
    throw ShapeError("index_put: too many indices (" + std::to_string(indices.size()) + ") for " +
                     x.describe());
  std::vector<Expr> b;
  for (size_t j = 0; j < k; ++j) {
    same_graph(x, *indices[j], "index_put");
    if (indices[j]->dtype() == DType::Bool)
      throw DTypeError(
          "index_put: boolean mask indexes are not supported (data-dependent "
          "shape): " +
          indices[j]->describe());
    b = broadcast_shapes(b, indices[j]->shape(), "index_put");
  }
  // Combined linear index into the first k dims.
  Graph& g = *x.graph();
  Tensor lin = g.constant_int(0, DType::I64).expand(b);
  for (size_t j = 0; j < k; ++j) {
    Tensor idx = wrap_negative(as_index(*indices[j], "index_put", x), x.shape()[j]);
    lin = lin * expr_scalar(g, x.shape()[j]) + idx.expand(b);
  }
  std::vector<Expr> lead(x.shape().begin(), x.shape().begin() + k);
  std::vector<Expr> rest(x.shape().begin() + k, x.shape().end());
  std::vector<Expr> x2_shape{product(lead)};
  x2_shape.insert(x2_shape.end(), rest.begin(), rest.end());
  std::vector<Expr> v_shape = b;
  v_shape.insert(v_shape.end(), rest.begin(), rest.end());
  std::vector<Expr> v2_shape{product(b)};
  v2_shape.insert(v2_shape.end(), rest.begin(), rest.end());
  Tensor x2 = x.reshape(x2_shape);
  Tensor v2 = cast_to(values, x.dtype()).expand(v_shape).reshape(v2_shape);
  Tensor l2 = lin.reshape({product(b)});
  Tensor out = accumulate ? index_add(x2, 0, l2, v2) : index_copy(x2, 0, l2, v2);
  return out.reshape(x.shape());
}

}  // namespace luminal
