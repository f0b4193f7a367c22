#include "luminal/frontend/movement.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

namespace {

std::optional<int64_t> const_of(const Expr& e) {
  return e.simplify().as_const();
}

// Normalise a dim of a tensor of rank `rank` (torch: [-rank, rank - 1]).
int norm_dim(int dim, size_t rank, const char* op, const Tensor& x) {
  const auto r = static_cast<int>(rank);
  if (dim < -r || dim >= r)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for " +
                     x.describe() + " (expected [" + std::to_string(-r) + ", " +
                     std::to_string(r - 1) + "])");
  return dim < 0 ? dim + r : dim;
}

std::vector<int> norm_dims(const std::vector<int>& dims, size_t rank, const char* op,
                           const Tensor& x) {
  std::vector<int> out;
  for (int d : dims) {
    int n = norm_dim(d, rank, op, x);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ShapeError(std::string(op) + ": dim " + std::to_string(d) + " is repeated for " +
                       x.describe());
    out.push_back(n);
  }
  return out;
}

// Replace one -1 entry of `shape` by numel / (product of the others).
std::vector<Expr> infer_shape(const Expr& numel, std::vector<Expr> shape, const char* op,
                              const Tensor& x) {
  int infer = -1;
  std::vector<Expr> known;
  for (size_t i = 0; i < shape.size(); ++i) {
    auto c = const_of(shape[i]);
    if (c == -1) {
      if (infer >= 0)
        throw ShapeError(std::string(op) + ": only one dimension can be -1 in " + to_string(shape) +
                         " for " + x.describe());
      infer = static_cast<int>(i);
    } else if (c && *c < 0) {
      throw ShapeError(std::string(op) + ": invalid size " + std::to_string(*c) + " in " +
                       to_string(shape) + " for " + x.describe());
    } else {
      known.push_back(shape[i]);
    }
  }
  Expr k = product(known);
  auto kc = const_of(k);
  auto nc = const_of(numel);
  if (infer >= 0) {
    if (kc == 0 || (kc && nc && *nc % *kc != 0))
      throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " is invalid for input " +
                       x.describe() + " of " + numel.to_string() + " elements");
    shape[infer] = (numel / k).simplify();
  } else if (kc && nc && *kc != *nc) {
    throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " is invalid for input " +
                     x.describe() + " of " + numel.to_string() + " elements");
  }
  return shape;
}

// A copy of x's view with axis `a` re-indexed: its expression e(z) becomes e(src(z)).
Tensor reindex_axis(const Tensor& x, size_t a, const Expr& size, const Expr& src) {
  std::vector<Expr> shape = x.shape();
  std::vector<Expr> exprs = x.view().axis_exprs();
  shape[a] = size;
  exprs[a] = exprs[a].substitute(Expr::index_var().name(), src).simplify();
  return Tensor(x.graph(), x.node(), View::from_axes(shape, exprs), x.dtype());
}

Tensor zeros_of(Graph& g, DType dtype, const std::vector<Expr>& shape, double value = 0.0) {
  Tensor c =
      is_int(dtype) ? g.constant_int(static_cast<int64_t>(value), dtype) : g.constant(value, dtype);
  return c.expand(shape);
}

// Write `src` into `dest` (dense, shape `out_shape`) at per-axis offsets `offsets`:
// one Iota computes each src element's output flat index, one Scatter writes it.
Tensor scatter_block(const Tensor& dest, const Tensor& src, const std::vector<Expr>& offsets) {
  const std::vector<Expr> strides = row_major_strides(dest.shape());
  Tensor idx = coordinate_iota(*dest.graph(), src.shape(), [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    for (size_t d = 0; d < c.size(); ++d) flat = flat + (c[d] + offsets[d]) * strides[d];
    return flat;
  });
  return dest.scatter(idx, src);
}

std::string describe_all(const std::vector<Tensor>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i].describe();
  return s + "]";
}

}  // namespace

// ---- reshaping ---------------------------------------------------------------

Tensor reshape(const Tensor& x, const std::vector<Expr>& shape) {
  return x.reshape(infer_shape(x.numel(), shape, "reshape", x));
}

Tensor view(const Tensor& x, const std::vector<Expr>& shape) {
  return x.reshape(infer_shape(x.numel(), shape, "view", x));
}

Tensor reshape_as(const Tensor& x, const Tensor& other) {
  return reshape(x, other.shape());
}

Tensor flatten(const Tensor& x, int start_dim, int end_dim) {
  if (x.rank() == 0) {
    norm_dim(start_dim, 1, "flatten", x);
    norm_dim(end_dim, 1, "flatten", x);
    return x.reshape({1});
  }
  const int s = norm_dim(start_dim, x.rank(), "flatten", x);
  const int e = norm_dim(end_dim, x.rank(), "flatten", x);
  if (s > e)
    throw ShapeError("flatten: start_dim " + std::to_string(start_dim) + " comes after end_dim " +
                     std::to_string(end_dim) + " for " + x.describe());
  std::vector<Expr> shape(x.shape().begin(), x.shape().begin() + s);
  shape.push_back(product({x.shape().begin() + s, x.shape().begin() + e + 1}));
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return x.reshape(shape);
}

Tensor ravel(const Tensor& x) {
  return x.reshape({x.numel()});
}

Tensor unflatten(const Tensor& x, int dim, const std::vector<Expr>& sizes) {
  const int d = norm_dim(dim, x.rank(), "unflatten", x);
  if (sizes.empty()) throw ShapeError("unflatten: sizes must be non-empty for " + x.describe());
  std::vector<Expr> inner = infer_shape(x.shape()[d], sizes, "unflatten", x);
  std::vector<Expr> shape(x.shape().begin(), x.shape().begin() + d);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  return x.reshape(shape);
}

// ---- axis order ----------------------------------------------------------------

Tensor permute(const Tensor& x, const std::vector<int>& dims) {
  if (dims.size() != x.rank())
    throw ShapeError("permute: " + std::to_string(dims.size()) + " dims given for " + x.describe());
  return x.permute(norm_dims(dims, x.rank(), "permute", x));
}

Tensor transpose(const Tensor& x, int dim0, int dim1) {
  if (x.rank() == 0) {
    norm_dim(dim0, 1, "transpose", x);
    norm_dim(dim1, 1, "transpose", x);
    return x;
  }
  return x.transpose(norm_dim(dim0, x.rank(), "transpose", x),
                     norm_dim(dim1, x.rank(), "transpose", x));
}

Tensor swapaxes(const Tensor& x, int dim0, int dim1) {
  return transpose(x, dim0, dim1);
}

Tensor swapdims(const Tensor& x, int dim0, int dim1) {
  return transpose(x, dim0, dim1);
}

Tensor t(const Tensor& x) {
  if (x.rank() > 2) throw ShapeError("t: expects a tensor with <= 2 dims, got " + x.describe());
  return x.rank() == 2 ? x.transpose(0, 1) : x;
}

Tensor mT(const Tensor& x) {  // NOLINT(readability-identifier-naming)
  if (x.rank() < 2) throw ShapeError("mT: expects a tensor with >= 2 dims, got " + x.describe());
  return x.transpose(-2, -1);
}

Tensor movedim(const Tensor& x, int source, int destination) {
  return movedim(x, std::vector<int>{source}, std::vector<int>{destination});
}

Tensor movedim(const Tensor& x, const std::vector<int>& source,
               const std::vector<int>& destination) {
  if (source.size() != destination.size())
    throw ShapeError("movedim: source and destination have different lengths (" +
                     std::to_string(source.size()) + " vs " + std::to_string(destination.size()) +
                     ") for " + x.describe());
  const size_t r = std::max<size_t>(x.rank(), 1);
  std::vector<int> src = norm_dims(source, r, "movedim", x);
  std::vector<int> dst = norm_dims(destination, r, "movedim", x);
  if (x.rank() == 0) return x;
  std::vector<int> order(x.rank(), -1);
  for (size_t i = 0; i < src.size(); ++i) order[dst[i]] = src[i];
  int next = 0;
  for (int& o : order) {
    if (o >= 0) continue;
    while (std::find(src.begin(), src.end(), next) != src.end()) ++next;
    o = next++;
  }
  return x.permute(order);
}

Tensor moveaxis(const Tensor& x, const std::vector<int>& source,
                const std::vector<int>& destination) {
  return movedim(x, source, destination);
}

// ---- size-1 axes and broadcasting -----------------------------------------------

Tensor unsqueeze(const Tensor& x, int dim) {
  return x.unsqueeze(norm_dim(dim, x.rank() + 1, "unsqueeze", x));
}

Tensor squeeze(const Tensor& x) {
  Tensor out = x;
  for (int d = static_cast<int>(x.rank()) - 1; d >= 0; --d)
    if (const_of(x.shape()[d]) == 1) out = out.squeeze(d);
  return out;
}

Tensor squeeze(const Tensor& x, int dim) {
  return squeeze(x, std::vector<int>{dim});
}

Tensor squeeze(const Tensor& x, const std::vector<int>& dims) {
  std::vector<int> ds = norm_dims(dims, std::max<size_t>(x.rank(), 1), "squeeze", x);
  if (x.rank() == 0) return x;
  std::sort(ds.rbegin(), ds.rend());
  Tensor out = x;
  for (int d : ds)
    if (const_of(x.shape()[d]) == 1) out = out.squeeze(d);
  return out;
}

Tensor expand(const Tensor& x, const std::vector<Expr>& sizes) {
  if (sizes.size() < x.rank())
    throw ShapeError("expand: the number of sizes " + to_string(sizes) +
                     " must be >= the number of dims of " + x.describe());
  std::vector<Expr> target = sizes;
  const size_t lead = sizes.size() - x.rank();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (const_of(sizes[i]) != -1) continue;
    if (i < lead)
      throw ShapeError("expand: -1 is not allowed for a new leading dim in " + to_string(sizes) +
                       " for " + x.describe());
    target[i] = x.shape()[i - lead];
  }
  return x.expand(target);
}

Tensor expand_as(const Tensor& x, const Tensor& other) {
  return x.expand(other.shape());
}

Tensor broadcast_to(const Tensor& x, const std::vector<Expr>& shape) {
  return expand(x, shape);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& xs) {
  std::vector<Expr> shape;
  for (const Tensor& x : xs) shape = broadcast_shapes(shape, x.shape(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(x.expand(shape));
  return out;
}

Tensor atleast_1d(const Tensor& x) {
  return x.rank() == 0 ? x.reshape({1}) : x;
}

Tensor atleast_2d(const Tensor& x) {
  if (x.rank() == 0) return x.reshape({1, 1});
  return x.rank() == 1 ? x.unsqueeze(0) : x;
}

Tensor atleast_3d(const Tensor& x) {
  if (x.rank() == 0) return x.reshape({1, 1, 1});
  if (x.rank() == 1) return x.unsqueeze(0).unsqueeze(2);
  return x.rank() == 2 ? x.unsqueeze(2) : x;
}

// ---- repetition ---------------------------------------------------------------------

Tensor repeat(const Tensor& x, const std::vector<Expr>& repeats) {
  if (repeats.size() < x.rank())
    throw ShapeError("repeat: the number of repeats " + to_string(repeats) +
                     " must be >= the number of dims of " + x.describe());
  Tensor out = x;
  while (out.rank() < repeats.size()) out = out.unsqueeze(0);
  for (size_t i = 0; i < repeats.size(); ++i) {
    auto c = const_of(repeats[i]);
    if (c && *c < 0)
      throw ShapeError("repeat: negative repeat " + std::to_string(*c) + " for " + x.describe());
    if (c != 1) out = out.repeat_axis(static_cast<int>(i), repeats[i]);
  }
  return out;
}

Tensor tile(const Tensor& x, const std::vector<Expr>& reps) {
  std::vector<Expr> r = reps;
  while (r.size() < x.rank()) r.insert(r.begin(), Expr(1));
  return repeat(x, r);
}

Tensor repeat_interleave(const Tensor& x, const Expr& repeats, std::optional<int> dim) {
  auto c = const_of(repeats);
  if (c && *c < 0)
    throw ShapeError("repeat_interleave: negative repeats " + std::to_string(*c) + " for " +
                     x.describe());
  if (!dim) return repeat_interleave(ravel(x), repeats, 0);
  if (x.rank() == 0) return repeat_interleave(x.reshape({1}), repeats, 0);
  const int d = norm_dim(*dim, x.rank(), "repeat_interleave", x);
  std::vector<Expr> big = x.shape();
  big.insert(big.begin() + d + 1, repeats);
  std::vector<Expr> shape = x.shape();
  shape[d] = (shape[d] * repeats).simplify();
  return x.unsqueeze(d + 1).expand(big).reshape(shape);
}

// ---- slicing ---------------------------------------------------------------------------

namespace {

// A Python slice bound on an axis of size n: negative constants count from the
// end; the result is clamped to [0, n].
Expr clamp_bound(const Expr& b, const Expr& n) {
  auto bc = const_of(b);
  auto nc = const_of(n);
  if (bc && nc) return std::clamp<int64_t>(*bc < 0 ? *bc + *nc : *bc, 0, *nc);
  if (bc && *bc < 0) return max(n + Expr(*bc), Expr(0)).simplify();
  return min(b, n).simplify();
}

}  // namespace

Tensor narrow(const Tensor& x, int dim, const Expr& start, const Expr& length) {
  const int d = norm_dim(dim, x.rank(), "narrow", x);
  const Expr n = x.shape()[d];
  Expr s = start;
  auto sc = const_of(start);
  auto nc = const_of(n);
  auto lc = const_of(length);
  if (sc && *sc < 0) s = (n + Expr(*sc)).simplify();
  auto s2 = const_of(s);
  if ((lc && *lc < 0) || (s2 && *s2 < 0) || (s2 && lc && nc && *s2 + *lc > *nc))
    throw IndexError("narrow: start " + start.to_string() + " + length " + length.to_string() +
                     " exceeds dim " + std::to_string(dim) + " of " + x.describe());
  return x.slice(d, s, (s + length).simplify());
}

Tensor slice(const Tensor& x, int dim, const std::optional<Expr>& start,
             const std::optional<Expr>& stop, int64_t step) {
  const int d = norm_dim(dim, x.rank(), "slice", x);
  if (step <= 0)
    throw ShapeError("slice: step must be positive (got " + std::to_string(step) + ") for " +
                     x.describe());
  const Expr n = x.shape()[d];
  Expr s = start ? clamp_bound(*start, n) : Expr(0);
  Expr e = stop ? clamp_bound(*stop, n) : n;
  auto sc = const_of(s);
  auto ec = const_of(e);
  if (sc && ec)
    e = std::max(*sc, *ec);
  else if (!provably_equal(s, 0) && !provably_equal(e, n))
    e = max(e, s).simplify();
  return x.slice(d, s, e, step);
}

Tensor select(const Tensor& x, int dim, const Expr& index) {
  const int d = norm_dim(dim, x.rank(), "select", x);
  const Expr n = x.shape()[d];
  Expr i = index;
  auto ic = const_of(index);
  auto nc = const_of(n);
  if (ic && *ic < 0) i = (n + Expr(*ic)).simplify();
  auto i2 = const_of(i);
  if ((i2 && *i2 < 0) || (i2 && nc && *i2 >= *nc))
    throw IndexError("select: index " + index.to_string() + " is out of range for dim " +
                     std::to_string(dim) + " of " + x.describe());
  return x.slice(d, i, (i + 1).simplify()).squeeze(d);
}

Tensor unfold(const Tensor& x, int dim, const Expr& size, int64_t step) {
  if (x.rank() == 0) return unfold(x.reshape({1}), dim, size, step);
  const int d = norm_dim(dim, x.rank(), "unfold", x);
  if (step <= 0)
    throw ShapeError("unfold: step must be positive (got " + std::to_string(step) + ") for " +
                     x.describe());
  const Expr n = x.shape()[d];
  auto sc = const_of(size);
  auto nc = const_of(n);
  if ((sc && *sc < 0) || (sc && nc && *sc > *nc))
    throw ShapeError("unfold: size " + size.to_string() + " exceeds dim " + std::to_string(dim) +
                     " of " + x.describe());
  // Window w, element j reads e(w * step + j) = e(w * step) + e(j) - e(0) when the
  // axis expression is affine; prove that with two fresh variables.
  const std::string z = Expr::index_var().name();
  const Expr e = x.view().axis_exprs()[d];
  const Expr a = Expr::internal_var("_unfold_w");
  const Expr b = Expr::internal_var("_unfold_j");
  const Expr e0 = e.substitute(z, 0);
  const bool affine = provably_equal(e.substitute(z, a * Expr(step) + b),
                                     e.substitute(z, a * Expr(step)) + e.substitute(z, b) - e0);
  if (!affine) {
    if (x.view().is_contiguous())
      throw ShapeError("unfold: cannot express windows of " + x.describe());
    return unfold(x.contiguous(), dim, size, step);
  }
  std::vector<Expr> shape = x.shape();
  std::vector<Expr> exprs = x.view().axis_exprs();
  shape[d] = ((n - size) / Expr(step) + 1).simplify();
  exprs[d] = e.substitute(z, Expr::index_var() * Expr(step)).simplify();
  shape.push_back(size);
  exprs.push_back((e - e0).simplify());
  return Tensor(x.graph(), x.node(), View::from_axes(shape, exprs), x.dtype());
}

// ---- joining and splitting -------------------------------------------------------

Tensor cat(const std::vector<Tensor>& xs_in, int dim) {
  if (xs_in.empty()) throw ShapeError("cat: expects a non-empty list of tensors");
  // torch skips legacy empty 1-D tensors of shape [0].
  std::vector<Tensor> xs;
  for (const Tensor& x : xs_in)
    if (!(x.rank() == 1 && const_of(x.shape()[0]) == 0)) xs.push_back(x);
  if (xs.empty()) return xs_in[0];
  // torch.cat promotes the inputs to their common dtype.
  const DType dtype = result_type(std::vector<TensorOrScalar>(xs.begin(), xs.end()));
  for (Tensor& x : xs) x = to(x, dtype);
  const Tensor& first = xs[0];
  if (first.rank() == 0)
    throw ShapeError("cat: zero-dimensional tensor cannot be concatenated: " + describe_all(xs));
  const int d = norm_dim(dim, first.rank(), "cat", first);
  std::vector<Expr> out_shape = first.shape();
  Expr total = 0;
  for (const Tensor& x : xs) {
    if (x.graph() != first.graph())
      throw Error("cat: tensors belong to different graphs: " + describe_all(xs));
    if (x.rank() != first.rank())
      throw ShapeError("cat: tensors must have the same number of dims: " + describe_all(xs));
    for (size_t k = 0; k < x.rank(); ++k)
      if (static_cast<int>(k) != d && !provably_equal(x.shape()[k], first.shape()[k]))
        throw ShapeError("cat: sizes must match except in dim " + std::to_string(dim) + ": " +
                         describe_all(xs));
    total = total + x.shape()[d];
  }
  if (xs.size() == 1) return xs[0];
  out_shape[d] = total.simplify();
  Tensor out = zeros_of(*first.graph(), first.dtype(), out_shape);
  Expr offset = 0;
  for (const Tensor& x : xs) {
    std::vector<Expr> offsets(x.rank(), Expr(0));
    offsets[d] = offset.simplify();
    out = scatter_block(out, x, offsets);
    offset = offset + x.shape()[d];
  }
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int dim) {
  return cat(xs, dim);
}

Tensor concatenate(const std::vector<Tensor>& xs, int dim) {
  return cat(xs, dim);
}

Tensor stack(const std::vector<Tensor>& xs, int dim) {
  if (xs.empty()) throw ShapeError("stack: expects a non-empty list of tensors");
  for (const Tensor& x : xs)
    if (x.shape().size() != xs[0].rank() ||
        !std::equal(x.shape().begin(), x.shape().end(), xs[0].shape().begin(),
                    [](const Expr& a, const Expr& b) { return provably_equal(a, b); }))
      throw ShapeError("stack: expects each tensor to be equal size: " + describe_all(xs));
  const int d = norm_dim(dim, xs[0].rank() + 1, "stack", xs[0]);
  std::vector<Tensor> us;
  for (const Tensor& x : xs) us.push_back(x.unsqueeze(d));
  return cat(us, d);
}

Tensor hstack(const std::vector<Tensor>& xs) {
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) ys.push_back(atleast_1d(x));
  return cat(ys, !ys.empty() && ys[0].rank() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& xs) {
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) ys.push_back(atleast_2d(x));
  return cat(ys, 0);
}

Tensor dstack(const std::vector<Tensor>& xs) {
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) ys.push_back(atleast_3d(x));
  return cat(ys, 2);
}

Tensor column_stack(const std::vector<Tensor>& xs) {
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) ys.push_back(x.rank() <= 1 ? x.reshape({x.numel(), 1}) : x);
  return cat(ys, 1);
}

namespace {

int64_t const_dim(const Tensor& x, int d, const char* op) {
  auto n = const_of(x.shape()[d]);
  if (!n)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(d) + " of " + x.describe() +
                     " must have a constant size (the number of results depends on it)");
  return *n;
}

}  // namespace

std::vector<Tensor> split(const Tensor& x, const Expr& split_size, int dim) {
  const int d = norm_dim(dim, x.rank(), "split", x);
  const int64_t n = const_dim(x, d, "split");
  auto s = const_of(split_size);
  if (!s || *s < 0 || (*s == 0 && n != 0))
    throw ShapeError("split: split_size " + split_size.to_string() +
                     " must be a positive constant for " + x.describe());
  std::vector<Tensor> out;
  if (n == 0) return {x};
  for (int64_t start = 0; start < n; start += *s)
    out.push_back(x.slice(d, start, std::min(n, start + *s)));
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<Expr>& sizes, int dim) {
  const int d = norm_dim(dim, x.rank(), "split", x);
  Expr total = 0;
  for (const Expr& s : sizes) {
    auto c = const_of(s);
    if (c && *c < 0)
      throw ShapeError("split: negative size in " + to_string(sizes) + " for " + x.describe());
    total = total + s;
  }
  if (!provably_equal(total, x.shape()[d]))
    throw ShapeError("split: sizes " + to_string(sizes) + " do not sum to dim " +
                     std::to_string(dim) + " of " + x.describe());
  std::vector<Tensor> out;
  Expr start = 0;
  for (const Expr& s : sizes) {
    out.push_back(x.slice(d, start.simplify(), (start + s).simplify()));
    start = start + s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int dim) {
  if (chunks <= 0)
    throw ShapeError("chunk: chunks must be positive (got " + std::to_string(chunks) + ") for " +
                     x.describe());
  const int d = norm_dim(dim, x.rank(), "chunk", x);
  const int64_t n = const_dim(x, d, "chunk");
  const int64_t size = (n + chunks - 1) / chunks;
  if (size == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), x);
  return split(x, Expr(size), dim);
}

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int dim) {
  if (sections <= 0)
    throw ShapeError("tensor_split: sections must be positive (got " + std::to_string(sections) +
                     ") for " + x.describe());
  const int d = norm_dim(dim, x.rank(), "tensor_split", x);
  const int64_t n = const_dim(x, d, "tensor_split");
  std::vector<Expr> sizes;
  for (int64_t i = 0; i < sections; ++i) sizes.push_back(n / sections + (i < n % sections));
  return split(x, sizes, dim);
}

std::vector<Tensor> unbind(const Tensor& x, int dim) {
  const int d = norm_dim(dim, x.rank(), "unbind", x);
  const int64_t n = const_dim(x, d, "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(x.slice(d, i, i + 1).squeeze(d));
  return out;
}

// ---- padding, flipping, rolling ---------------------------------------------------

Tensor pad(const Tensor& x, const std::vector<Expr>& pads, PadMode mode, double value) {
  if (pads.size() % 2 != 0 || pads.size() / 2 > x.rank())
    throw ShapeError("pad: padding " + to_string(pads) +
                     " must have an even length of at most 2 * rank for " + x.describe());
  const size_t r = x.rank();
  std::vector<Expr> before(r, Expr(0)), after(r, Expr(0));
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    before[r - 1 - i] = pads[2 * i].simplify();
    after[r - 1 - i] = pads[2 * i + 1].simplify();
  }
  if (mode == PadMode::Constant) {
    // Negative pads crop first; then the input is scattered into a broadcast fill.
    Tensor src = x;
    for (size_t d = 0; d < r; ++d) {
      auto b = const_of(before[d]);
      auto a = const_of(after[d]);
      const Expr n = src.shape()[d];
      Expr lo = 0, hi = n;
      if (b && *b < 0) {
        lo = Expr(-*b);
        before[d] = 0;
      }
      if (a && *a < 0) {
        hi = (n + Expr(*a)).simplify();
        after[d] = 0;
      }
      auto lc = const_of(lo);
      auto hc = const_of(hi);
      if (lc && hc && *hc < *lc)
        throw ShapeError("pad: padding " + to_string(pads) + " crops more than dim " +
                         std::to_string(d) + " of " + x.describe());
      if (!(lc == 0 && provably_equal(hi, n))) src = src.slice(static_cast<int>(d), lo, hi);
    }
    std::vector<Expr> shape = src.shape();
    for (size_t d = 0; d < r; ++d) shape[d] = (shape[d] + before[d] + after[d]).simplify();
    return scatter_block(zeros_of(*x.graph(), x.dtype(), shape, value), src, before);
  }
  const char* name = mode == PadMode::Reflect     ? "reflect"
                     : mode == PadMode::Replicate ? "replicate"
                                                  : "circular";
  std::vector<Expr> shape = x.shape();
  for (size_t d = 0; d < r; ++d) {
    auto b = const_of(before[d]);
    auto a = const_of(after[d]);
    auto n = const_of(x.shape()[d]);
    const int64_t limit = n ? (mode == PadMode::Reflect ? *n - 1 : *n) : INT64_MAX;
    if ((b && *b < 0) || (a && *a < 0) || (b && *b > limit) || (a && *a > limit) ||
        (mode != PadMode::Replicate && n == 0 && (b != 0 || a != 0)))
      throw ShapeError(std::string("pad: ") + name + " padding " + to_string(pads) +
                       " is invalid for " + x.describe() +
                       (mode == PadMode::Reflect ? " (pads must be < the dim size)"
                                                 : " (pads must be in [0, dim size])"));
    shape[d] = (shape[d] + before[d] + after[d]).simplify();
  }
  // Each output coordinate maps to a source coordinate; one Gather reads x.
  const std::vector<Expr> strides = row_major_strides(x.shape());
  Tensor idx = coordinate_iota(*x.graph(), shape, [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    for (size_t d = 0; d < r; ++d) {
      const Expr n = x.shape()[d];
      const Expr j = c[d] - before[d];
      Expr src;
      if (provably_equal(before[d], 0) && provably_equal(after[d], 0)) {
        src = c[d];
      } else if (mode == PadMode::Reflect) {
        const Expr m = n - 1;
        const Expr aj = max(j, -j);
        src = m - max(m - aj, aj - m);
      } else if (mode == PadMode::Replicate) {
        src = min(max(j, Expr(0)), n - 1);
      } else {
        src = (j + n) % n;
      }
      flat = flat + src * strides[d];
    }
    return flat;
  });
  return idx.gather_from(x);
}

Tensor flip(const Tensor& x, const std::vector<int>& dims) {
  Tensor out = x;
  for (int d : norm_dims(dims, x.rank(), "flip", x)) out = out.flip(d);
  return out;
}

Tensor fliplr(const Tensor& x) {
  if (x.rank() < 2) throw ShapeError("fliplr: input must be >= 2-d, got " + x.describe());
  return x.flip(1);
}

Tensor flipud(const Tensor& x) {
  if (x.rank() < 1) throw ShapeError("flipud: input must be >= 1-d, got " + x.describe());
  return x.flip(0);
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int>& dims) {
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw ShapeError("roll: without dims, exactly one shift is expected for " + x.describe());
    return roll(ravel(x), shifts, {0}).reshape(x.shape());
  }
  if (shifts.size() != dims.size())
    throw ShapeError("roll: shifts and dims have different lengths (" +
                     std::to_string(shifts.size()) + " vs " + std::to_string(dims.size()) +
                     ") for " + x.describe());
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int d = norm_dim(dims[i], x.rank(), "roll", x);
    const Expr n = out.shape()[d];
    const Expr z = Expr::index_var();
    // Element i reads (i - shift) mod n, written with a non-negative dividend.
    auto nc = const_of(n);
    if (nc == 0) continue;
    Expr src;
    if (nc) {
      const int64_t s = ((shifts[i] % *nc) + *nc) % *nc;
      if (s == 0) continue;
      src = (z + Expr(*nc - s)) % n;
    } else {
      src = (z + n - (Expr(shifts[i]) % n + n) % n) % n;
    }
    out = reindex_axis(out, static_cast<size_t>(d), n, src);
  }
  return out;
}

Tensor rot90(const Tensor& x, int64_t k, const std::vector<int>& dims) {
  if (dims.size() != 2 || x.rank() < 2)
    throw ShapeError("rot90: expects 2 dims and a tensor of rank >= 2, got " +
                     std::to_string(dims.size()) + " dims for " + x.describe());
  std::vector<int> ds = norm_dims(dims, x.rank(), "rot90", x);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return x.flip(ds[1]).transpose(ds[0], ds[1]);
    case 2:
      return x.flip(ds[0]).flip(ds[1]);
    case 3:
      return x.flip(ds[0]).transpose(ds[0], ds[1]);
    default:
      return x;
  }
}

// ---- diagonals ---------------------------------------------------------------------

Tensor diagonal(const Tensor& x, int64_t offset, int dim1, int dim2) {
  std::vector<int> ds = norm_dims({dim1, dim2}, x.rank(), "diagonal", x);
  const size_t d1 = ds[0], d2 = ds[1];
  const Expr n1 = x.shape()[d1], n2 = x.shape()[d2];
  // Element i of the diagonal is x[.., i + r1, .., i + r2, ..].
  const int64_t r1 = offset < 0 ? -offset : 0, r2 = offset > 0 ? offset : 0;
  Expr len = min(n1 - Expr(r1), n2 - Expr(r2));
  auto c1 = const_of(n1), c2 = const_of(n2);
  if (c1 && c2) len = std::max<int64_t>(0, std::min(*c1 - r1, *c2 - r2));
  const std::string z = Expr::index_var().name();
  const Expr zi = Expr::index_var();
  std::vector<Expr> shape, exprs;
  for (size_t k = 0; k < x.rank(); ++k) {
    if (k == d1 || k == d2) continue;
    shape.push_back(x.shape()[k]);
    exprs.push_back(x.view().axis_exprs()[k]);
  }
  shape.push_back(len.simplify());
  exprs.push_back((x.view().axis_exprs()[d1].substitute(z, zi + Expr(r1)) +
                   x.view().axis_exprs()[d2].substitute(z, zi + Expr(r2)))
                      .simplify());
  return Tensor(x.graph(), x.node(), View::from_axes(shape, exprs), x.dtype());
}

Tensor diag_embed(const Tensor& x, int64_t offset, int dim1, int dim2) {
  if (x.rank() == 0) throw ShapeError("diag_embed: expects rank >= 1, got " + x.describe());
  const size_t r = x.rank() + 1;
  std::vector<int> ds = norm_dims({dim1, dim2}, r, "diag_embed", x);
  const Expr n = x.shape().back();
  const Expr m = (n + Expr(offset < 0 ? -offset : offset)).simplify();
  std::vector<Expr> shape;
  size_t k = 0;
  for (size_t d = 0; d < r; ++d)
    shape.push_back(static_cast<int>(d) == ds[0] || static_cast<int>(d) == ds[1] ? m
                                                                                 : x.shape()[k++]);
  const std::vector<Expr> strides = row_major_strides(shape);
  const int64_t r1 = offset < 0 ? -offset : 0, r2 = offset > 0 ? offset : 0;
  Tensor idx = coordinate_iota(*x.graph(), x.shape(), [&](const std::vector<Expr>& c) {
    Expr flat = (c.back() + Expr(r1)) * strides[ds[0]] + (c.back() + Expr(r2)) * strides[ds[1]];
    size_t j = 0;
    for (size_t d = 0; d < r; ++d)
      if (static_cast<int>(d) != ds[0] && static_cast<int>(d) != ds[1])
        flat = flat + c[j++] * strides[d];
    return flat;
  });
  return zeros_of(*x.graph(), x.dtype(), shape).scatter(idx, x);
}

Tensor diag(const Tensor& x, int64_t offset) {
  if (x.rank() == 1) return diag_embed(x, offset, 0, 1);
  if (x.rank() == 2) return diagonal(x, offset, 0, 1);
  throw ShapeError("diag: expects a 1-D or 2-D tensor, got " + x.describe());
}

Tensor trace(const Tensor& x) {
  if (x.rank() != 2) throw ShapeError("trace: expects a 2-D tensor, got " + x.describe());
  Tensor d = diagonal(x, 0, 0, 1);
  if (x.dtype() == DType::Bool || (is_int(x.dtype()) && x.dtype() != DType::I64))
    d = d.cast(DType::I64);  // torch accumulates integer traces in int64
  return d.sum_reduce(0);
}

// ---- copies --------------------------------------------------------------------------

Tensor contiguous(const Tensor& x) {
  return x.contiguous();
}

Tensor clone(const Tensor& x) {
  return x.contiguous();
}

}  // namespace luminal
