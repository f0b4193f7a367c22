#include "luminal/frontend/reduction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "luminal/error.hpp"
#include "luminal/frontend/creation.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

namespace {

std::string dims_text(const std::vector<int>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Reduce `axes` (sorted ascending) with a primitive, highest axis first so the
// lower axis numbers stay valid; keepdim re-inserts size-1 axes.
Tensor reduce_axes(const Tensor& x, const std::vector<int>& axes, OpKind kind, bool keepdim) {
  Tensor r = x;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it)
    r = kind == OpKind::SumReduce ? r.sum_reduce(*it) : r.max_reduce(*it);
  if (keepdim)
    for (int a : axes) r = r.unsqueeze(a);
  return r;
}

// Product of the sizes of `axes`.
Expr count_of(const Tensor& x, const std::vector<int>& axes) {
  std::vector<Expr> sizes;
  for (int a : axes) sizes.push_back(x.shape()[a]);
  return product(sizes);
}

// f16 / bf16 accumulate in f32 (as torch); other dtypes in themselves.
DType accumulate_dtype(DType d) {
  return d == DType::F16 || d == DType::BF16 ? DType::F32 : d;
}

// Sum in dtype `d` (already validated), f16 / bf16 accumulated in f32.
Tensor sum_in(const Tensor& x, const std::vector<int>& axes, bool keepdim, DType d) {
  Tensor xc = to(x, accumulate_dtype(d));
  return to(reduce_axes(xc, axes, OpKind::SumReduce, keepdim), d);
}

Tensor amax_axes(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  return reduce_axes(x, axes, OpKind::MaxReduce, keepdim);
}

// Order-reversing map for min-via-max: -x for floats (exact, nan stays nan),
// -1 - x for integers (no INT_MIN overflow), !x for bool. It is an involution.
Tensor reverse_order(const Tensor& x) {
  if (x.dtype() == DType::Bool) return logical_not(x);
  if (is_float(x.dtype())) return -x;
  return -1.0 - x;
}

// Product along one constant-length axis: halves multiplied pairwise (a
// balanced tree), an odd last slice carried into the final product.
Tensor prod_axis(const Tensor& x, int axis) {
  auto len_c = x.shape()[axis].as_const();
  if (!len_c)
    throw ShapeError("prod: axis " + std::to_string(axis) + " of " + x.describe() +
                     " has a symbolic length; prod needs a constant length");
  int64_t len = *len_c;
  if (len == 0) {
    std::vector<Expr> shape = x.shape();
    shape.erase(shape.begin() + axis);
    return scalar_tensor(*x.graph(), Scalar(1), x.dtype()).expand(shape);
  }
  Tensor cur = x;
  std::optional<Tensor> carry;
  while (len > 1) {
    if (len % 2) {
      Tensor last = cur.slice(axis, len - 1, len);
      carry = carry ? *carry * last : last;
      cur = cur.slice(axis, 0, len - 1);
      --len;
    }
    int64_t half = len / 2;
    cur = cur.slice(axis, 0, half) * cur.slice(axis, half, len);
    len = half;
  }
  if (carry) cur = cur * *carry;
  return cur.squeeze(axis);
}

// sum / prod / cumsum: floats keep their dtype, bool and integers give i64 (torch).
DType int_promoting_dtype(const Tensor& x, std::optional<DType> dtype) {
  DType d = dtype.value_or(is_float(x.dtype()) ? x.dtype() : kDefaultInt);
  return d == DType::Bool ? kDefaultInt : d;
}

// argmax along one axis: the first position holding the max (nan counts as the max).
Tensor argmax_axis(const Tensor& x, int axis, bool keepdim) {
  Graph& g = *x.graph();
  Expr n = x.shape()[axis];
  Tensor m = x.max_reduce(axis).unsqueeze(axis);
  Tensor hit = eq(x, m);
  if (is_float(x.dtype())) hit = logical_or(hit, isnan(x));
  // Reversed positions n - 1 - i; the largest reversed position among the hits
  // is the first hit.
  std::vector<Expr> ishape(x.rank(), Expr(1));
  ishape[axis] = n;
  Tensor rev = g.iota(n - 1 - Expr::index_var(), n, DType::I64).reshape(ishape);
  Tensor best = (to(hit, DType::I64) * rev).max_reduce(axis);
  Tensor idx = expr_tensor(g, n - 1, DType::I64) - best;
  return keepdim ? idx.unsqueeze(axis) : idx;
}

int normalize_dim(int dim, size_t rank, const char* op) {
  return normalize_dims({dim}, rank, op).front();
}

// Hillis-Steele scan along a constant-length axis: log2(n) steps, each
// combining with a copy shifted by k (Scatter onto an identity-filled buffer;
// indexes that would leave the axis are pushed out of range and skipped).
Tensor scan_axis(const Tensor& x, int axis, bool is_sum) {
  Graph& g = *x.graph();
  int64_t n = *x.shape()[axis].as_const();
  std::vector<Expr> shape = x.shape();
  Expr numel = product(shape);
  std::vector<Expr> after(shape.begin() + axis + 1, shape.end());
  Expr stride = product(after);
  DType it = numel.as_const() && *numel.as_const() < (int64_t{1} << 30) ? DType::I32 : DType::I64;
  Tensor identity = scalar_tensor(g, Scalar(is_sum ? 0 : 1), x.dtype()).expand(shape);
  Tensor y = x;
  Expr z = Expr::index_var();
  for (int64_t k = 1; k < n; k *= 2) {
    Expr i = (z / stride) % Expr(n);
    Expr valid = lt(i + Expr(k), Expr(n));
    Expr target = z + Expr(k) * stride + (Expr(1) - valid) * numel;
    Tensor idx = g.iota(target, numel, it).reshape(shape);
    Tensor shifted = identity.scatter(idx, y);
    y = is_sum ? y + shifted : y * shifted;
  }
  return y;
}

// cumsum over an axis of symbolic length: out[i] = sum_j where(j <= i, x[j], 0).
Tensor cumsum_masked(const Tensor& x, int axis) {
  Graph& g = *x.graph();
  Expr n = x.shape()[axis];
  std::vector<Expr> big = x.shape();
  big.insert(big.begin() + axis + 1, n);  // [..., i, j, ...]
  Tensor xs = x.unsqueeze(axis).expand(big);
  std::vector<Expr> mshape(big.size(), Expr(1));
  mshape[axis] = n;
  mshape[axis + 1] = n;
  Tensor mask = tril_mask(g, n, n).reshape(mshape);
  Tensor zero = scalar_tensor(g, Scalar(0), x.dtype());
  return where(mask, xs, zero).sum_reduce(axis + 1);
}

Tensor cumulative(const Tensor& x, int dim, std::optional<DType> dtype, bool is_sum,
                  const char* op) {
  require_compute_dtype(x, op);
  int axis = normalize_dim(dim, std::max<size_t>(x.rank(), 1), op);
  Tensor xr = x.rank() == 0 ? x.reshape({1}) : x;
  DType d = int_promoting_dtype(x, dtype);
  // As torch's CPU kernel, floats accumulate in double.
  DType cd = is_float(d) ? precise_dtype(d) : d;
  Tensor xc = to(to(xr, d), cd);
  if (!xc.shape()[axis].as_const() && !is_sum)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(dim) + " of " + x.describe() +
                     " has a symbolic length; cumprod needs a constant length");
  Tensor r =
      to(xc.shape()[axis].as_const() ? scan_axis(xc, axis, is_sum) : cumsum_masked(xc, axis), d);
  return x.rank() == 0 ? r.reshape({}) : r;
}

}  // namespace

std::vector<int> normalize_dims(const std::vector<int>& dims, size_t rank, const char* op) {
  auto r = static_cast<int>(rank);
  std::vector<int> out;
  if (dims.empty()) {
    for (int i = 0; i < r; ++i) out.push_back(i);
    return out;
  }
  for (int d : dims) {
    // torch lets a rank-0 tensor use dim 0 / -1.
    int lim = std::max(r, 1);
    if (d < -lim || d >= lim)
      throw ShapeError(std::string(op) + ": dim " + std::to_string(d) +
                       " is out of range for a tensor of rank " + std::to_string(rank) + " (dims " +
                       dims_text(dims) + ")");
    int a = d < 0 ? d + lim : d;
    if (std::find(out.begin(), out.end(), a) != out.end())
      throw ShapeError(std::string(op) + ": dim " + std::to_string(d) +
                       " appears more than once in " + dims_text(dims));
    out.push_back(a);
  }
  std::sort(out.begin(), out.end());
  if (r == 0) out.clear();  // reducing the "axis" of a scalar is a no-op
  return out;
}

// ---- sum / mean / prod ----------------------------------------------------------------

Tensor sum(const Tensor& x, const std::vector<int>& dims, bool keepdim,
           std::optional<DType> dtype) {
  require_compute_dtype(x, "sum");
  std::vector<int> axes = normalize_dims(dims, x.rank(), "sum");
  DType d = int_promoting_dtype(x, dtype);
  return sum_in(to(x, d), axes, keepdim, d);
}

Tensor sum(const Tensor& x, int dim, bool keepdim, std::optional<DType> dtype) {
  return sum(x, std::vector<int>{dim}, keepdim, dtype);
}

Tensor nansum(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "nansum");
  if (!is_float(x.dtype())) return sum(x, dims, keepdim);
  Tensor zero = scalar_tensor(*x.graph(), Scalar(0), x.dtype());
  return sum(where(isnan(x), zero, x), dims, keepdim);
}

Tensor mean(const Tensor& x, const std::vector<int>& dims, bool keepdim,
            std::optional<DType> dtype) {
  require_compute_dtype(x, "mean");
  Tensor xd = dtype ? to(x, *dtype) : x;
  require_float_dtype(xd, "mean");
  std::vector<int> axes = normalize_dims(dims, x.rank(), "mean");
  DType d = xd.dtype();
  DType cd = accumulate_dtype(d);
  Tensor s = reduce_axes(to(xd, cd), axes, OpKind::SumReduce, keepdim);
  return to(div(s, expr_tensor(*x.graph(), count_of(x, axes), cd)), d);
}

Tensor mean(const Tensor& x, int dim, bool keepdim, std::optional<DType> dtype) {
  return mean(x, std::vector<int>{dim}, keepdim, dtype);
}

Tensor nanmean(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_float_dtype(x, "nanmean");
  Tensor valid = logical_not(isnan(x));
  Tensor count = sum(valid, dims, keepdim);
  return div(nansum(x, dims, keepdim), to(count, x.dtype()));
}

Tensor prod(const Tensor& x, const std::vector<int>& dims, bool keepdim,
            std::optional<DType> dtype) {
  require_compute_dtype(x, "prod");
  std::vector<int> axes = normalize_dims(dims, x.rank(), "prod");
  DType d = int_promoting_dtype(x, dtype);
  Tensor r = to(x, accumulate_dtype(d));
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) r = prod_axis(r, *it);
  if (keepdim)
    for (int a : axes) r = r.unsqueeze(a);
  return to(r, d);
}

Tensor prod(const Tensor& x, int dim, bool keepdim, std::optional<DType> dtype) {
  return prod(x, std::vector<int>{dim}, keepdim, dtype);
}

// ---- max / min / arg -------------------------------------------------------------------

Tensor amax(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "amax");
  return amax_axes(x, normalize_dims(dims, x.rank(), "amax"), keepdim);
}

Tensor amin(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "amin");
  std::vector<int> axes = normalize_dims(dims, x.rank(), "amin");
  return reverse_order(amax_axes(reverse_order(x), axes, keepdim));
}

std::pair<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int> dim, bool keepdim) {
  std::vector<int> dims;
  if (dim) dims.push_back(*dim);
  return {amin(x, dims, keepdim), amax(x, dims, keepdim)};
}

Tensor max(const Tensor& x) {
  return amax(x);
}

Tensor min(const Tensor& x) {
  return amin(x);
}

std::pair<Tensor, Tensor> max(const Tensor& x, int dim, bool keepdim) {
  return {amax(x, {dim}, keepdim), argmax(x, dim, keepdim)};
}

std::pair<Tensor, Tensor> min(const Tensor& x, int dim, bool keepdim) {
  return {amin(x, {dim}, keepdim), argmin(x, dim, keepdim)};
}

Tensor argmax(const Tensor& x, std::optional<int> dim, bool keepdim) {
  require_compute_dtype(x, "argmax");
  if (!dim) {
    Tensor flat = x.reshape({x.numel()});
    Tensor r = argmax_axis(flat, 0, false);
    if (keepdim) r = r.reshape(std::vector<Expr>(x.rank(), Expr(1)));
    return r;
  }
  if (x.rank() == 0) {
    normalize_dim(*dim, 0, "argmax");
    return scalar_tensor(*x.graph(), Scalar(0), DType::I64);
  }
  return argmax_axis(x, normalize_dim(*dim, x.rank(), "argmax"), keepdim);
}

Tensor argmin(const Tensor& x, std::optional<int> dim, bool keepdim) {
  require_compute_dtype(x, "argmin");
  return argmax(reverse_order(x), dim, keepdim);
}

// ---- statistics ---------------------------------------------------------------------------

std::pair<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int>& dims, double correction,
                                   bool keepdim) {
  require_float_dtype(x, "var");
  std::vector<int> axes = normalize_dims(dims, x.rank(), "var");
  DType d = x.dtype();
  DType cd = accumulate_dtype(d);
  Graph& g = *x.graph();
  Tensor xc = to(x, cd);
  Expr n = count_of(x, axes);
  Tensor count = expr_tensor(g, n, cd);
  Tensor m = div(reduce_axes(xc, axes, OpKind::SumReduce, true), count);
  Tensor dev = xc - m;
  Tensor ss = reduce_axes(dev * dev, axes, OpKind::SumReduce, keepdim);
  // Divide by max(0, N - correction) as torch.
  auto c = n.as_const();
  Tensor denom =
      c ? scalar_tensor(g, Scalar(std::max(0.0, static_cast<double>(*c) - correction)), cd)
        : clamp_min(count - correction, 0.0);
  Tensor v = to(div(ss, denom), d);
  Tensor mean_out = m;
  if (!keepdim)
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) mean_out = mean_out.squeeze(*it);
  return {v, to(mean_out, d)};
}

Tensor var(const Tensor& x, const std::vector<int>& dims, double correction, bool keepdim) {
  return var_mean(x, dims, correction, keepdim).first;
}

std::pair<Tensor, Tensor> std_mean(const Tensor& x, const std::vector<int>& dims, double correction,
                                   bool keepdim) {
  auto [v, m] = var_mean(x, dims, correction, keepdim);
  return {sqrt(v), m};
}

Tensor std(const Tensor& x, const std::vector<int>& dims, double correction, bool keepdim) {
  return sqrt(var(x, dims, correction, keepdim));
}

Tensor logsumexp(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "logsumexp");
  DType d = to_float_dtype(x.dtype());
  std::vector<int> axes = normalize_dims(dims, x.rank(), "logsumexp");
  Tensor xc = to(x, compute_dtype(d));  // f32 for f16 / bf16 / f32, as torch
  Tensor m = amax_axes(xc, axes, true);
  // An infinite max would make x - m nan: use 0 there (as torch).
  Tensor zero = scalar_tensor(*x.graph(), Scalar(0), xc.dtype());
  Tensor m_safe = where(isinf(m), zero, m);
  Tensor shifted = xc - m_safe;
  // f32: 2^(s log2 e) directly (absolute error < 3.3e-8 per term for s <= 0, as
  // softmax's exp_shifted); exp() would need two Exp2 and two Casts per element.
  Tensor e = xc.dtype() == DType::F32 ? (shifted * std::numbers::log2e).exp2() : exp(shifted);
  Tensor s = reduce_axes(e, axes, OpKind::SumReduce, true);
  Tensor r = log(s) + m_safe;
  if (!keepdim)
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) r = r.squeeze(*it);
  return to(r, d);
}

Tensor any(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "any");
  Tensor r = amax_axes(to(x, DType::Bool), normalize_dims(dims, x.rank(), "any"), keepdim);
  return x.dtype() == DType::U8 ? to(r, DType::U8) : r;
}

Tensor all(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  require_compute_dtype(x, "all");
  Tensor nb = logical_not(to(x, DType::Bool));
  Tensor r = logical_not(amax_axes(nb, normalize_dims(dims, x.rank(), "all"), keepdim));
  return x.dtype() == DType::U8 ? to(r, DType::U8) : r;
}

Tensor count_nonzero(const Tensor& x, const std::vector<int>& dims) {
  require_compute_dtype(x, "count_nonzero");
  return sum(to(to(x, DType::Bool), DType::I64), dims, false);
}

// ---- norms -----------------------------------------------------------------------------

Tensor vector_norm(const Tensor& x, double ord, const std::vector<int>& dims, bool keepdim,
                   std::optional<DType> dtype) {
  require_compute_dtype(x, "vector_norm");
  Tensor xd = dtype ? to(x, *dtype) : x;
  require_float_dtype(xd, "vector_norm");
  DType d = xd.dtype();
  std::vector<int> axes = normalize_dims(dims, x.rank(), "vector_norm");
  Tensor a = abs(to(xd, accumulate_dtype(d)));
  auto norm_of = [&]() -> Tensor {
    if (ord == 2.0) return sqrt(reduce_axes(a * a, axes, OpKind::SumReduce, keepdim));
    if (ord == 1.0) return reduce_axes(a, axes, OpKind::SumReduce, keepdim);
    if (std::isinf(ord) && ord > 0) return amax_axes(a, axes, keepdim);
    if (std::isinf(ord)) return reverse_order(amax_axes(reverse_order(a), axes, keepdim));
    if (ord == 0.0)
      return reduce_axes(to(to(a, DType::Bool), a.dtype()), axes, OpKind::SumReduce, keepdim);
    return pow(reduce_axes(pow(a, ord), axes, OpKind::SumReduce, keepdim), 1.0 / ord);
  };
  return to(norm_of(), d);
}

Tensor norm(const Tensor& x, double p, const std::vector<int>& dims, bool keepdim) {
  return vector_norm(x, p, dims, keepdim);
}

Tensor frobenius_norm(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  if (normalize_dims(dims, x.rank(), "frobenius_norm").size() != 2 || x.rank() < 2)
    throw ShapeError(
        "frobenius_norm: expects two distinct dims of a tensor of rank >= 2, got dims " +
        dims_text(dims) + " for " + x.describe());
  return vector_norm(x, 2.0, dims, keepdim);
}

// ---- scans -------------------------------------------------------------------------------

Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype) {
  return cumulative(x, dim, dtype, true, "cumsum");
}

Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype) {
  return cumulative(x, dim, dtype, false, "cumprod");
}

}  // namespace luminal
