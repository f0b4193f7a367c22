#include "luminal/frontend/sorting.hpp"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int norm_dim(int dim, const Tensor& x, const char* op) {
  const auto r = static_cast<int>(std::max<size_t>(x.rank(), 1));
  if (dim < -r || dim >= r)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for " +
                     x.describe() + " (expected [" + std::to_string(-r) + ", " +
                     std::to_string(r - 1) + "])");
  return dim < 0 ? dim + r : dim;
}

void require_sortable(const Tensor& x, const char* op) {
  if (!is_compute_type(x.dtype()))
    throw DTypeError(std::string(op) + ": not defined for " + x.describe());
}

Tensor bool_const(Graph& g, bool v) {
  return g.constant(v ? 1.0 : 0.0, DType::Bool);
}

// Strict order of sort keys with NaN above everything (torch's NaN ordering).
Tensor key_less(const Tensor& a, const Tensor& b) {
  Tensor less = a.lt(b);
  if (!is_float(a.dtype())) return less;
  return logical_or(less, logical_and(isnan(b), logical_not(isnan(a))));
}

// Exact equality of sort keys (NaN equals NaN; -0.0 equals 0.0).
Tensor key_equal(const Tensor& a, const Tensor& b) {
  return logical_and(logical_not(key_less(a, b)), logical_not(key_less(b, a)));
}

int64_t lowest_int(DType dt) {
  switch (dt) {
    case DType::U8:
      return 0;
    case DType::I8:
      return std::numeric_limits<int8_t>::min();
    case DType::I32:
      return std::numeric_limits<int32_t>::min();
    default:
      return std::numeric_limits<int64_t>::min();
  }
}

Tensor i64(Graph& g, int64_t v) {
  return g.constant_int(v, DType::I64);
}

// The position of every element of `xt` (sorted axis last) in the stable sort.
Tensor sort_ranks(const Tensor& xt, bool descending) {
  Graph& g = *xt.graph();
  const Expr n = xt.shape().back();
  Tensor xi = xt.unsqueeze(-1);  // element i on axis -2
  Tensor xj = xt.unsqueeze(-2);  // element j on axis -1
  Tensor iota = g.arange(n, DType::I64);
  Tensor j_before_i = iota.reshape({1, n}).lt(iota.reshape({n, 1}));  // [i, j]: j < i
  // j precedes i if key_j < key_i, or key_j == key_i and j < i:
  //   j < i ? !(key_i < key_j) : key_j < key_i
  Tensor lj = descending ? key_less(xi, xj) : key_less(xj, xi);
  Tensor li = descending ? key_less(xj, xi) : key_less(xi, xj);
  Tensor precedes = logical_or(logical_and(j_before_i, logical_not(li)),
                               logical_and(logical_not(j_before_i), lj));
  return precedes.cast(DType::I64).sum_reduce(-1);
}

// Dense positions into [..., n] for ranks along the last axis.
Tensor row_positions(const Tensor& ranks) {
  Tensor base = coordinate_iota(*ranks.graph(), ranks.shape(), [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    const std::vector<Expr> strides = row_major_strides(ranks.shape());
    for (size_t d = 0; d + 1 < c.size(); ++d) flat = flat + c[d] * strides[d];
    return flat;
  });
  return base + ranks;
}

// Sort along the last axis.
ValuesIndices sort_last(const Tensor& xt, bool descending) {
  Graph& g = *xt.graph();
  Tensor pos = row_positions(sort_ranks(xt, descending));
  Tensor zero = xt.dtype() == DType::Bool || is_int(xt.dtype()) ? g.constant_int(0, xt.dtype())
                                                                : g.constant(0.0, xt.dtype());
  Tensor values = zero.expand(xt.shape()).scatter(pos, xt);
  Tensor idx = g.arange(xt.shape().back(), DType::I64).expand(xt.shape());
  Tensor indices = i64(g, 0).expand(xt.shape()).scatter(pos, idx);
  return {values, indices};
}

// Iterative top-k along the last axis for small k: pick the max of the remaining
// elements (NaN is the max), take its first remaining position, remove it.
ValuesIndices topk_select(const Tensor& xt, int64_t k, int64_t n) {
  Graph& g = *xt.graph();
  const DType dt = xt.dtype();
  Tensor lowest = dt == DType::Bool ? bool_const(g, false)
                  : is_int(dt)      ? g.constant_int(lowest_int(dt), dt)
                                    : g.constant(-kInf, dt);
  Tensor j = g.arange(n, DType::I64);  // [n]
  Tensor score_base = i64(g, n) - j;   // n - j in [1, n]: larger for earlier positions
  Tensor removed = bool_const(g, false).expand(xt.shape());
  std::vector<Tensor> picks;
  for (int64_t t = 0; t < k; ++t) {
    Tensor m = masked_fill(xt, removed, lowest).max_reduce(-1).unsqueeze(-1);
    Tensor hit = logical_and(logical_not(removed), key_equal(xt, m));
    Tensor first = i64(g, n) - (hit.cast(DType::I64) * score_base).max_reduce(-1).unsqueeze(-1);
    picks.push_back(first);
    removed = logical_or(removed, eq(j, first));
  }
  Tensor indices = cat(picks, -1);
  return {gather(xt, -1, indices), indices};
}

ValuesIndices move_back(const ValuesIndices& r, int d, const Tensor& x) {
  if (x.rank() == 0) return {r.values.reshape({}), r.indices.reshape({})};
  return {movedim(r.values, -1, d), movedim(r.indices, -1, d)};
}

Tensor last_axis(const Tensor& x, int d) {
  return x.rank() == 0 ? x.reshape({1}) : movedim(x, d, -1);
}

ValuesIndices keep_or_squeeze(ValuesIndices r, int d, bool keepdim, const Tensor& x) {
  if (keepdim || x.rank() == 0) return r;
  return {r.values.squeeze(d), r.indices.squeeze(d)};
}

// The element at sorted position `pos` (i64 [..., 1]) of the ascending sort.
ValuesIndices pick_sorted(const Tensor& x, int d, const Tensor& pos) {
  ValuesIndices s = sort_last(last_axis(x, d), false);
  ValuesIndices r{gather(s.values, -1, pos), gather(s.indices, -1, pos)};
  return move_back(r, d, x);
}

// Validates x and k in [lo, n] for the sorted axis (last of xt); returns n if constant.
std::optional<int64_t> check_k(const Tensor& x, const Tensor& xt, int64_t k, int64_t lo, int dim,
                               const char* op) {
  require_sortable(x, op);
  auto n = xt.shape().back().simplify().as_const();
  if (k < lo || (n && k > *n))
    throw ShapeError(std::string(op) + ": k = " + std::to_string(k) + " is out of range for dim " +
                     std::to_string(dim) + " of " + x.describe());
  return n;
}

// Median position among the first `count` sorted elements: (count - 1) / 2.
Tensor half_of(const Tensor& count_minus_1) {
  // Exact for counts far beyond any sortable axis (f64 holds 2^53).
  return (count_minus_1.cast(DType::F64) * 0.5).cast(DType::I64);
}

}  // namespace

ValuesIndices sort(const Tensor& x, int dim, bool descending, bool /*stable*/) {
  require_sortable(x, "sort");
  const int d = norm_dim(dim, x, "sort");
  return move_back(sort_last(last_axis(x, d), descending), d, x);
}

Tensor argsort(const Tensor& x, int dim, bool descending, bool stable) {
  return sort(x, dim, descending, stable).indices;
}

Tensor msort(const Tensor& x) {
  return sort(x, 0).values;
}

ValuesIndices topk(const Tensor& x, int64_t k, int dim, bool largest, bool /*sorted*/) {
  const int d = norm_dim(dim, x, "topk");
  Tensor xt = last_axis(x, d);
  auto n = check_k(x, xt, k, 0, dim, "topk");
  // Small k: k selection passes (largest first; smallest only for non-floats, whose
  // order reverses exactly as -1 - x (ints) or !x (bool)).
  const bool small_k = n && k < *n && (k <= 16 || (k <= 256 && 8 * k <= *n));
  if (small_k && (largest || !is_float(x.dtype()))) {
    Tensor key = xt;
    if (!largest) key = x.dtype() == DType::Bool ? logical_not(xt) : -1.0 - xt;
    ValuesIndices r = topk_select(key, k, *n);
    return move_back({gather(xt, -1, r.indices), r.indices}, d, x);
  }
  ValuesIndices s = sort_last(xt, largest);
  return move_back({s.values.slice(-1, 0, k), s.indices.slice(-1, 0, k)}, d, x);
}

ValuesIndices kthvalue(const Tensor& x, int64_t k, int dim, bool keepdim) {
  const int d = norm_dim(dim, x, "kthvalue");
  Tensor xt = last_axis(x, d);
  check_k(x, xt, k, 1, dim, "kthvalue");
  ValuesIndices s = sort_last(xt, false);
  ValuesIndices r{s.values.slice(-1, k - 1, k), s.indices.slice(-1, k - 1, k)};
  return keep_or_squeeze(move_back(r, d, x), d, keepdim, x);
}

ValuesIndices median(const Tensor& x, int dim, bool keepdim) {
  require_sortable(x, "median");
  const int d = norm_dim(dim, x, "median");
  Tensor xt = last_axis(x, d);
  Graph& g = *x.graph();
  const Expr n = xt.shape().back();
  Tensor n_t = expr_tensor(g, n.simplify(), DType::I64);
  // Lower median; with NaNs (sorted last, in original order) the first NaN.
  Tensor pos = half_of(n_t - 1.0).expand(xt.shape()).slice(-1, 0, 1);
  if (is_float(x.dtype())) {
    Tensor nans = isnan(xt).cast(DType::I64).sum_reduce(-1).unsqueeze(-1);
    Tensor has = i64(g, 0).lt(nans).cast(DType::I64);
    pos = pos + has * (n_t - nans - pos);
  }
  return keep_or_squeeze(pick_sorted(x, d, pos), d, keepdim, x);
}

Tensor median(const Tensor& x) {
  return median(ravel(x), 0).values.reshape({});
}

ValuesIndices nanmedian(const Tensor& x, int dim, bool keepdim) {
  require_sortable(x, "nanmedian");
  if (!is_float(x.dtype())) return median(x, dim, keepdim);
  const int d = norm_dim(dim, x, "nanmedian");
  Tensor xt = last_axis(x, d);
  Graph& g = *x.graph();
  Tensor n_t = expr_tensor(g, xt.shape().back().simplify(), DType::I64);
  Tensor nans = isnan(xt).cast(DType::I64).sum_reduce(-1).unsqueeze(-1);
  Tensor count = n_t - nans;  // non-NaN elements, sorted first
  // (count - 1) / 2, or 0 (a NaN) when the row is all NaN.
  Tensor empty = count.lt(i64(g, 1)).cast(DType::I64);
  Tensor pos = half_of(count - 1.0 + empty);
  return keep_or_squeeze(pick_sorted(x, d, pos), d, keepdim, x);
}

}  // namespace luminal
