// Views: per-axis sizes and per-axis index expressions (see view.hpp).
//
// Every axis expression is a function of Expr::index_var() alone. Operations
// transform those expressions by substitution and keep them simplified under
// the range of the axis index (0 <= z < size when the size has a known upper
// bound), which is sound because an axis is only ever read inside its range.

#include "luminal/shape/view.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include "luminal/error.hpp"

namespace luminal {

namespace {

const std::string& z_name() {
  static const std::string name = Expr::index_var().name();
  return name;
}

/// The range of an index that runs over [0, size): only recorded when the
/// size has a finite upper bound of at least 1 (otherwise the default [0, inf)).
void add_index_range(Ranges& ranges, const std::string& name, const Expr& size) {
  const Range b = bounds(size);
  if (b.hi == std::numeric_limits<int64_t>::max() || b.hi < 1) return;
  ranges[name] = Range{0, b.hi - 1};
}

Ranges index_ranges(const Expr& size) {
  Ranges ranges;
  add_index_range(ranges, z_name(), size);
  return ranges;
}

/// Simplify an axis expression of an axis of this size.
Expr simplify_axis(const Expr& e, const Expr& size) {
  return e.simplify(index_ranges(size));
}

Expr subst_z(const Expr& e, const Expr& replacement) {
  return e.substitute(z_name(), replacement);
}

bool is_const_value(const Expr& e, int64_t v) {
  const auto c = e.simplify().as_const();
  return c && *c == v;
}

/// True if `a` and `b` are equal for every assignment of the variables.
bool same(const Expr& a, const Expr& b) {
  return a == b || a.simplify() == b.simplify() || provably_equal(a, b);
}

/// True if `a != b` for every assignment (variables >= 0).
bool provably_different(const Expr& a, const Expr& b) {
  const Expr diff = (a - b).simplify();
  if (auto c = diff.as_const()) return *c != 0;
  const Range r = bounds(diff);
  return r.lo > 0 || r.hi < 0;
}

void collect_factors(const Expr& e, int64_t& coefficient, std::vector<Expr>& factors) {
  if (e.kind() == ExprKind::Mul) {
    collect_factors(e.children()[0], coefficient, factors);
    collect_factors(e.children()[1], coefficient, factors);
  } else if (auto c = e.as_const()) {
    coefficient *= *c;
  } else {
    factors.push_back(e);
  }
}

/// q with x == q * d for every assignment, when it can be shown: by cancelling
/// factors of products (`64 * s` / `s` = 64, which the simplifier cannot do
/// because s may be 0) or by the simplifier.
std::optional<Expr> exact_quotient(const Expr& x, const Expr& d) {
  const Expr xs = x.simplify();
  const Expr ds = d.simplify();
  if (is_const_value(ds, 0)) return std::nullopt;
  int64_t xc = 1;
  int64_t dc = 1;
  std::vector<Expr> xf;
  std::vector<Expr> df;
  collect_factors(xs, xc, xf);
  collect_factors(ds, dc, df);
  bool ok = dc != 0 && xc % dc == 0;
  for (const Expr& f : df) {
    if (!ok) break;
    auto it = std::find(xf.begin(), xf.end(), f);
    if (it == xf.end()) {
      ok = false;
    } else {
      xf.erase(it);
    }
  }
  if (ok) {
    Expr q = xc / dc;
    for (const Expr& f : xf) q = q * f;
    return q.simplify();
  }
  const Expr q = (xs / ds).simplify();
  if (same((q * ds).simplify(), xs)) return q;
  return std::nullopt;
}

/// True if `d` provably divides `x`.
bool provably_divides(const Expr& d, const Expr& x) {
  return exact_quotient(x, d).has_value();
}

/// Checks that `e` is not provably negative (constant or bounds).
bool provably_negative(const Expr& e) {
  const Expr s = e.simplify();
  if (auto c = s.as_const()) return *c < 0;
  return bounds(s).hi < 0;
}

void collect_terms(const Expr& e, std::vector<Expr>& out) {
  if (e.kind() == ExprKind::Add) {
    for (const Expr& c : e.children()) collect_terms(c, out);
  } else {
    out.push_back(e);
  }
}

Expr sum(const std::vector<Expr>& terms) {
  Expr total = 0;
  bool first = true;
  for (const Expr& t : terms) {
    total = first ? t : total + t;
    first = false;
  }
  return total;
}

/// Structural affine decomposition (stride, constant) of sums and products
/// with index-free factors; nullopt for anything else.
std::optional<std::pair<Expr, Expr>> linear_parts(const Expr& e) {
  if (!e.depends_on(z_name())) return std::make_pair(Expr(0), e);
  switch (e.kind()) {
    case ExprKind::Var:
      return std::make_pair(Expr(1), Expr(0));
    case ExprKind::Add: {
      auto a = linear_parts(e.children()[0]);
      auto b = linear_parts(e.children()[1]);
      if (!a || !b) return std::nullopt;
      return std::make_pair(a->first + b->first, a->second + b->second);
    }
    case ExprKind::Mul: {
      const Expr& x = e.children()[0];
      const Expr& y = e.children()[1];
      const bool xz = x.depends_on(z_name());
      const bool yz = y.depends_on(z_name());
      if (xz && yz) return std::nullopt;
      const Expr& factor = xz ? y : x;
      auto l = linear_parts(xz ? x : y);
      if (!l) return std::nullopt;
      return std::make_pair(factor * l->first, factor * l->second);
    }
    default:
      return std::nullopt;
  }
}

/// If `e` is affine in the index over an axis of this size, (stride, constant).
std::optional<std::pair<Expr, Expr>> as_affine(const Expr& e, const Expr& size) {
  if (auto l = linear_parts(e)) return std::make_pair(l->first.simplify(), l->second.simplify());
  const Ranges ranges = index_ranges(size);
  const Expr es = e.simplify(ranges);
  const Expr c = subst_z(es, Expr(0)).simplify();
  if (!es.depends_on(z_name())) return std::make_pair(Expr(0), c);
  const Expr stride = (subst_z(es, Expr(1)) - c).simplify();
  const Expr rebuilt = (Expr::index_var() * stride + c).simplify(ranges);
  if (rebuilt == es || provably_equal(rebuilt, es, ranges)) return std::make_pair(stride, c);
  return std::nullopt;
}

/// Substitute index := z1 * inner + z2 (0 <= z2 < inner), rewriting `index / d`
/// and `index % d` directly when d and inner divide one another, so that the
/// result separates even when inner is symbolic (the simplifier cannot bound z2
/// by a symbolic size).
Expr split_subst(const Expr& e, const Expr& z1, const Expr& z2, const Expr& inner) {
  switch (e.kind()) {
    case ExprKind::Const:
      return e;
    case ExprKind::Var:
      return e.name() == z_name() ? z1 * inner + z2 : e;
    case ExprKind::Div:
    case ExprKind::Mod: {
      const Expr& x = e.children()[0];
      const Expr& d = e.children()[1];
      if (x.is_var() && x.name() == z_name()) {
        const bool div = e.kind() == ExprKind::Div;
        if (same(d, inner)) return div ? z1 : z2;
        if (auto q = exact_quotient(d, inner)) {  // d = inner * q
          return div ? z1 / *q : (z1 % *q) * inner + z2;
        }
        if (auto q = exact_quotient(inner, d)) {  // inner = d * q
          return div ? z1 * *q + z2 / d : z2 % d;
        }
      }
      break;
    }
    default:
      break;
  }
  std::vector<Expr> children;
  children.reserve(e.children().size());
  for (const Expr& c : e.children()) children.push_back(split_subst(c, z1, z2, inner));
  return Expr::make(e.kind(), std::move(children));
}

/// Split the axis expression `e` of an axis of size outer * inner into the
/// expressions of the axes (outer, inner): e(z1 * inner + z2) = f(z1) + g(z2).
/// nullopt if the simplified substitution does not separate.
std::optional<std::pair<Expr, Expr>> split_expr(const Expr& e, const Expr& outer,
                                                const Expr& inner) {
  const Expr z = Expr::index_var();
  // A size-1 part always reads index 0 of its own axis.
  if (is_const_value(inner, 1)) return std::make_pair(simplify_axis(e, outer), Expr(0));
  if (is_const_value(outer, 1)) return std::make_pair(Expr(0), simplify_axis(e, inner));
  const Expr whole = (outer * inner).simplify();
  if (auto aff = as_affine(e, whole)) {
    const auto& [stride, c] = *aff;
    return std::make_pair(simplify_axis(z * (inner * stride) + c, outer),
                          simplify_axis(z * stride, inner));
  }
  // Reserved names: they cannot clash with dimension variables.
  const Expr z1 = Expr::internal_var("_split_outer");
  const Expr z2 = Expr::internal_var("_split_inner");
  const std::string& n1 = z1.name();
  const std::string& n2 = z2.name();
  Ranges ranges;
  add_index_range(ranges, n1, outer);
  add_index_range(ranges, n2, inner);
  const Expr combined = split_subst(e, z1, z2, inner).simplify(ranges);

  std::vector<Expr> terms;
  collect_terms(combined, terms);
  std::vector<Expr> outer_terms;
  std::vector<Expr> inner_terms;
  for (const Expr& t : terms) {
    const bool d1 = t.depends_on(n1);
    const bool d2 = t.depends_on(n2);
    if (d1 && d2) return std::nullopt;
    if (d2) {
      inner_terms.push_back(t);
    } else {
      outer_terms.push_back(t);  // constant terms go to the outer axis
    }
  }
  return std::make_pair(simplify_axis(sum(outer_terms).substitute(n1, z), outer),
                        simplify_axis(sum(inner_terms).substitute(n2, z), inner));
}

/// The expression of the axis obtained by merging (a, size_a) and (b, size_b).
Expr merge_expr(const Expr& a, const Expr& size_a, const Expr& b, const Expr& size_b,
                const Expr& merged_size) {
  const Expr z = Expr::index_var();
  // A size-1 axis always reads index 0.
  if (is_const_value(size_a, 1)) return simplify_axis(subst_z(a, Expr(0)) + b, merged_size);
  if (is_const_value(size_b, 1)) return simplify_axis(a + subst_z(b, Expr(0)), merged_size);
  const auto aff_a = as_affine(a, size_a);
  const auto aff_b = as_affine(b, size_b);
  if (aff_a && aff_b && same(aff_a->first, (size_b * aff_b->first).simplify())) {
    // Strides line up: the merged axis is affine with the inner stride.
    return simplify_axis(z * aff_b->first + (aff_a->second + aff_b->second), merged_size);
  }
  return simplify_axis(subst_z(a, z / size_b) + subst_z(b, z % size_b), merged_size);
}

}  // namespace

// ---------------------------------------------------------------------------

std::vector<Expr> row_major_strides(const std::vector<Expr>& shape) {
  std::vector<Expr> strides(shape.size(), Expr(1));
  Expr stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = stride;
    stride = (stride * shape[k]).simplify();
  }
  return strides;
}

View View::contiguous(const std::vector<Expr>& shape) {
  // Memoised per thread (expressions are hash-consed, so the nodes identify
  // the shape): every graph node starts from the contiguous view of its shape,
  // and a model repeats the same few shapes thousands of times.
  struct ShapeHash {
    size_t operator()(const std::vector<const ExprNode*>& k) const {
      size_t h = k.size();
      for (const ExprNode* n : k) h = h * 1000003u ^ std::hash<const ExprNode*>{}(n);
      return h;
    }
  };
  thread_local std::unordered_map<std::vector<const ExprNode*>, View, ShapeHash> memo;
  std::vector<const ExprNode*> key;
  key.reserve(shape.size());
  for (const Expr& e : shape) key.push_back(e.node());
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  View v = contiguous_uncached(shape);
  if (memo.size() >= 4096) memo.clear();  // bound the memory
  memo.emplace(std::move(key), v);
  return v;
}

View View::contiguous_uncached(const std::vector<Expr>& shape) {
  View v;
  const std::vector<Expr> strides = row_major_strides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    const Expr size = shape[k].simplify();
    if (provably_negative(size)) {
      throw ShapeError("contiguous: negative size " + size.to_string() + " in shape " +
                       luminal::to_string(shape));
    }
    v.shape_.push_back(size);
    // Size-1 axes always read index 0: their expression is 0.
    v.exprs_.push_back(
        is_const_value(size, 1) ? Expr(0) : simplify_axis(Expr::index_var() * strides[k], size));
  }
  return v;
}

View View::from_axes(std::vector<Expr> shape, std::vector<Expr> axis_exprs) {
  if (shape.size() != axis_exprs.size()) {
    throw ShapeError("from_axes: " + std::to_string(shape.size()) + " sizes " +
                     luminal::to_string(shape) + " but " + std::to_string(axis_exprs.size()) +
                     " axis expressions " + luminal::to_string(axis_exprs));
  }
  const std::string z = z_name();
  for (const Expr& e : axis_exprs) {
    for (const std::string& var : e.variables()) {
      if (!var.empty() && var[0] == '_' && var != z) {
        throw ShapeError("from_axes: axis expression " + e.to_string() +
                         " uses reserved variable " + var + " (only " + z + " is allowed)");
      }
    }
  }
  View v;
  v.shape_ = std::move(shape);
  v.exprs_ = std::move(axis_exprs);
  return v;
}

Expr View::numel() const {
  return product(shape_);
}

size_t View::normalize_axis(int axis, size_t limit, const char* op) const {
  const auto lim = static_cast<int64_t>(limit);
  int64_t a = axis;
  if (a < 0) a += lim;
  if (a < 0 || a >= lim) {
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of range for view of shape " + luminal::to_string(shape_) +
                     " (valid: " + std::to_string(-lim) + ".." + std::to_string(lim - 1) + ")");
  }
  return static_cast<size_t>(a);
}

View View::permute(const std::vector<int>& order) const {
  auto fail = [&](const std::string& why) {
    std::string o = "[";
    for (size_t i = 0; i < order.size(); ++i) o += (i ? ", " : "") + std::to_string(order[i]);
    o += "]";
    throw ShapeError("permute: order " + o + " is not a permutation of the axes of view of shape " +
                     luminal::to_string(shape_) + ": " + why);
  };
  if (order.size() != rank()) {
    fail("expected " + std::to_string(rank()) + " axes, got " + std::to_string(order.size()));
  }
  std::vector<bool> seen(rank(), false);
  View v;
  for (int a : order) {
    const int64_t lim = static_cast<int64_t>(rank());
    const int64_t n = a < 0 ? a + lim : a;
    if (n < 0 || n >= lim) fail("axis " + std::to_string(a) + " out of range");
    if (seen[static_cast<size_t>(n)]) fail("axis " + std::to_string(a) + " repeated");
    seen[static_cast<size_t>(n)] = true;
    v.shape_.push_back(shape_[static_cast<size_t>(n)]);
    v.exprs_.push_back(exprs_[static_cast<size_t>(n)]);
  }
  return v;
}

View View::unsqueeze(int axis) const {
  const size_t a = normalize_axis(axis, rank() + 1, "unsqueeze");
  View v = *this;
  v.shape_.insert(v.shape_.begin() + static_cast<std::ptrdiff_t>(a), Expr(1));
  v.exprs_.insert(v.exprs_.begin() + static_cast<std::ptrdiff_t>(a), Expr(0));
  return v;
}

View View::squeeze(int axis) const {
  const size_t a = normalize_axis(axis, rank(), "squeeze");
  if (!is_const_value(shape_[a], 1)) {
    throw ShapeError("squeeze: axis " + std::to_string(axis) + " of view of shape " +
                     luminal::to_string(shape_) + " has size " + shape_[a].to_string() + ", not 1");
  }
  // The axis always reads index 0; keep its (constant) contribution.
  const Expr offset = subst_z(exprs_[a], Expr(0)).simplify();
  View v = *this;
  v.shape_.erase(v.shape_.begin() + static_cast<std::ptrdiff_t>(a));
  v.exprs_.erase(v.exprs_.begin() + static_cast<std::ptrdiff_t>(a));
  if (!is_const_value(offset, 0)) {
    if (v.rank() == 0) {
      throw ShapeError("squeeze: cannot remove the last axis of view " + to_string() +
                       ": its element is at offset " + offset.to_string() +
                       " and a rank-0 view has no offset (make it contiguous first)");
    }
    v.exprs_[0] = simplify_axis(v.exprs_[0] + offset, v.shape_[0]);
  }
  return v;
}

View View::expand(int axis, const Expr& size) const {
  const size_t a = normalize_axis(axis, rank(), "expand");
  const Expr n = size.simplify();
  if (provably_negative(n)) {
    throw ShapeError("expand: negative size " + n.to_string() + " for axis " +
                     std::to_string(axis) + " of view of shape " + luminal::to_string(shape_));
  }
  if (same(shape_[a], n)) return *this;  // expanding to the same size is a no-op
  if (!is_const_value(shape_[a], 1)) {
    throw ShapeError("expand: axis " + std::to_string(axis) + " of view of shape " +
                     luminal::to_string(shape_) + " has size " + shape_[a].to_string() +
                     ", only size-1 axes can be expanded (to " + n.to_string() + ")");
  }
  View v = *this;
  // Every index reads what index 0 read (0 unless the axis carries an offset).
  v.exprs_[a] = subst_z(exprs_[a], Expr(0)).simplify();
  v.shape_[a] = n;
  return v;
}

View View::slice(int axis, const Expr& start, const Expr& end, int64_t step) const {
  const size_t a = normalize_axis(axis, rank(), "slice");
  const Expr n = shape_[a];
  const Expr s = start.simplify();
  const Expr e = end.simplify();
  auto fail = [&](const std::string& why) {
    throw ShapeError("slice: [" + s.to_string() + ", " + e.to_string() + ") step " +
                     std::to_string(step) + " on axis " + std::to_string(axis) +
                     " of view of shape " + luminal::to_string(shape_) + ": " + why);
  };
  if (step <= 0) fail("step must be positive");
  if (provably_negative(s)) fail("start is negative");
  if (provably_negative(e - s)) fail("end is before start");
  if (provably_negative(n - e)) fail("end is past the axis size " + n.to_string());
  const Expr z = Expr::index_var();
  View v = *this;
  v.shape_[a] = (step == 1 ? e - s : ceil_div(e - s, Expr(step))).simplify();
  v.exprs_[a] = simplify_axis(subst_z(exprs_[a], z * Expr(step) + s), v.shape_[a]);
  return v;
}

View View::flip(int axis) const {
  const size_t a = normalize_axis(axis, rank(), "flip");
  const Expr n = shape_[a];
  View v = *this;
  v.exprs_[a] = simplify_axis(subst_z(exprs_[a], n - Expr(1) - Expr::index_var()), n);
  return v;
}

View View::repeat(int axis, const Expr& times) const {
  const size_t a = normalize_axis(axis, rank(), "repeat");
  const Expr t = times.simplify();
  if (provably_negative(t)) {
    throw ShapeError("repeat: negative count " + t.to_string() + " for axis " +
                     std::to_string(axis) + " of view of shape " + luminal::to_string(shape_));
  }
  const Expr n = shape_[a];
  View v = *this;
  v.shape_[a] = (n * t).simplify();
  v.exprs_[a] = simplify_axis(subst_z(exprs_[a], Expr::index_var() % n), v.shape_[a]);
  return v;
}

View View::merge(int axis) const {
  if (rank() < 2) {
    throw ShapeError("merge: view of shape " + luminal::to_string(shape_) +
                     " has fewer than two axes (axis " + std::to_string(axis) + ")");
  }
  const size_t a = normalize_axis(axis, rank() - 1, "merge");
  View v;
  for (size_t k = 0; k < rank(); ++k) {
    if (k == a) {
      const Expr size = (shape_[a] * shape_[a + 1]).simplify();
      v.shape_.push_back(size);
      v.exprs_.push_back(merge_expr(exprs_[a], shape_[a], exprs_[a + 1], shape_[a + 1], size));
      ++k;
    } else {
      v.shape_.push_back(shape_[k]);
      v.exprs_.push_back(exprs_[k]);
    }
  }
  return v;
}

std::optional<View> View::split(int axis, const Expr& inner) const {
  const size_t a = normalize_axis(axis, rank(), "split");
  const Expr n = shape_[a];
  const Expr in = inner.simplify();
  auto fail = [&](const std::string& why) {
    throw ShapeError("split: axis " + std::to_string(axis) + " of view of shape " +
                     luminal::to_string(shape_) + " by inner size " + in.to_string() + ": " + why);
  };
  if (auto c = in.as_const(); c && *c <= 0) fail("inner size must be positive");
  const std::optional<Expr> quotient = exact_quotient(n, in);
  if (!quotient) {
    if (n.is_const() && in.is_const()) fail("size " + n.to_string() + " is not divisible");
    fail("cannot prove that " + in.to_string() + " divides " + n.to_string());
  }
  const Expr outer = *quotient;
  auto parts = split_expr(exprs_[a], outer, in);
  if (!parts) return std::nullopt;
  View v = *this;
  v.shape_[a] = outer;
  v.exprs_[a] = parts->first;
  v.shape_.insert(v.shape_.begin() + static_cast<std::ptrdiff_t>(a) + 1, in);
  v.exprs_.insert(v.exprs_.begin() + static_cast<std::ptrdiff_t>(a) + 1, parts->second);
  return v;
}

std::optional<View> View::reshape(const std::vector<Expr>& new_shape) const {
  std::vector<Expr> target;
  for (const Expr& e : new_shape) {
    const Expr s = e.simplify();
    if (provably_negative(s)) {
      throw ShapeError("reshape: negative size " + s.to_string() + " in target shape " +
                       luminal::to_string(new_shape) + " of view of shape " +
                       luminal::to_string(shape_));
    }
    target.push_back(s);
  }
  const Expr old_n = numel();
  const Expr new_n = product(target);
  if (!same(old_n, new_n)) {
    const char* why = provably_different(old_n, new_n)
                          ? "the element counts differ"
                          : "the element counts cannot be proven equal";
    throw ShapeError("reshape: cannot reshape view of shape " + luminal::to_string(shape_) + " (" +
                     old_n.to_string() + " elements) to " + luminal::to_string(new_shape) + " (" +
                     new_n.to_string() + " elements): " + why);
  }
  if (is_const_value(old_n, 0) || is_contiguous()) return contiguous(target);

  // Drop size-1 axes (their constant contribution becomes an offset).
  struct Axis {
    Expr size;
    Expr expr;
  };
  std::vector<Axis> old_axes;
  Expr offset = 0;
  for (size_t k = 0; k < rank(); ++k) {
    if (is_const_value(shape_[k], 1)) {
      offset = offset + subst_z(exprs_[k], Expr(0));
    } else {
      old_axes.push_back({shape_[k], exprs_[k]});
    }
  }
  offset = offset.simplify();
  std::vector<size_t> new_idx;  // positions of the non-1 target axes
  for (size_t j = 0; j < target.size(); ++j) {
    if (!is_const_value(target[j], 1)) new_idx.push_back(j);
  }
  if (target.empty() && !is_const_value(offset, 0)) return std::nullopt;

  std::vector<Expr> exprs(target.size(), Expr(0));
  size_t i = 0;
  size_t j = 0;
  while (i < old_axes.size() || j < new_idx.size()) {
    if (i >= old_axes.size() || j >= new_idx.size()) return std::nullopt;
    // Grow a group of old axes [i, i_end) and new axes [j, j_end) until the
    // products are equal.
    size_t i_end = i + 1;
    size_t j_end = j + 1;
    Expr po = old_axes[i].size;
    Expr pn = target[new_idx[j]];
    while (!same(po, pn)) {
      bool grow_old;
      const auto co = po.as_const();
      const auto cn = pn.as_const();
      if (co && cn) {
        grow_old = *co < *cn;
      } else if (provably_divides(po, pn)) {
        grow_old = true;
      } else if (provably_divides(pn, po)) {
        grow_old = false;
      } else {
        // Symbolic sizes whose divisibility the simplifier cannot show (e.g.
        // (H - 3) / 2 + 1): grow the side whose next axes reach the other
        // side's product exactly (a pure merge or split).
        auto reaches = [](Expr p, const std::vector<Expr>& sizes, const Expr& want) {
          for (const Expr& sz : sizes) {
            p = (p * sz).simplify();
            if (same(p, want)) return true;
          }
          return false;
        };
        std::vector<Expr> old_rest, new_rest;
        for (size_t t = i_end; t < old_axes.size(); ++t) old_rest.push_back(old_axes[t].size);
        for (size_t t = j_end; t < new_idx.size(); ++t) new_rest.push_back(target[new_idx[t]]);
        if (reaches(po, old_rest, pn))
          grow_old = true;
        else if (reaches(pn, new_rest, po))
          grow_old = false;
        else
          return std::nullopt;
      }
      if (grow_old) {
        if (i_end >= old_axes.size()) return std::nullopt;
        po = (po * old_axes[i_end++].size).simplify();
      } else {
        if (j_end >= new_idx.size()) return std::nullopt;
        pn = (pn * target[new_idx[j_end++]]).simplify();
      }
    }
    // Merge the old group into one axis.
    Expr e = old_axes[i].expr;
    Expr n = old_axes[i].size;
    for (size_t k = i + 1; k < i_end; ++k) {
      const Expr merged = (n * old_axes[k].size).simplify();
      e = merge_expr(e, n, old_axes[k].expr, old_axes[k].size, merged);
      n = merged;
    }
    // Split it into the new group's axes, outermost first.
    for (size_t k = j; k + 1 < j_end; ++k) {
      std::vector<Expr> rest;
      for (size_t r = k + 1; r < j_end; ++r) rest.push_back(target[new_idx[r]]);
      const Expr inner = product(rest);
      auto parts = split_expr(e, target[new_idx[k]], inner);
      if (!parts) return std::nullopt;
      exprs[new_idx[k]] = parts->first;
      e = parts->second;
    }
    exprs[new_idx[j_end - 1]] = simplify_axis(e, target[new_idx[j_end - 1]]);
    i = i_end;
    j = j_end;
  }
  if (!is_const_value(offset, 0)) exprs[0] = simplify_axis(exprs[0] + offset, target[0]);
  return from_axes(std::move(target), std::move(exprs));
}

bool View::is_contiguous() const {
  const std::vector<Expr> strides = row_major_strides(shape_);
  for (size_t k = 0; k < rank(); ++k) {
    if (is_const_value(shape_[k], 1)) {
      if (!is_const_value(subst_z(exprs_[k], Expr(0)), 0)) return false;
      continue;
    }
    const auto aff = as_affine(exprs_[k], shape_[k]);
    if (!aff || !is_const_value(aff->second, 0) || !same(aff->first, strides[k])) return false;
  }
  return true;
}

Expr View::offset(const std::vector<Expr>& indices) const {
  if (indices.size() != rank()) {
    throw ShapeError("offset: " + std::to_string(indices.size()) + " indexes " +
                     luminal::to_string(indices) + " for view of shape " +
                     luminal::to_string(shape_));
  }
  std::vector<Expr> terms;
  for (size_t k = 0; k < rank(); ++k) terms.push_back(subst_z(exprs_[k], indices[k]));
  return sum(terms).simplify();
}

Expr View::flat_offset(const Expr& flat) const {
  std::vector<Expr> terms;
  Expr inner = 1;  // product of the sizes after axis k
  for (size_t k = rank(); k-- > 0;) {
    Expr idx = (inner == Expr(1)) ? flat : flat / inner;
    if (k != 0) idx = idx % shape_[k];
    terms.push_back(subst_z(exprs_[k], idx));
    inner = (inner * shape_[k]).simplify();
  }
  std::reverse(terms.begin(), terms.end());
  Ranges ranges;
  if (flat.is_var()) add_index_range(ranges, flat.name(), numel());
  return sum(terms).simplify(ranges);
}

int64_t View::offset_at(const std::vector<int64_t>& indices, const DimMap& dims) const {
  if (indices.size() != rank()) {
    throw ShapeError("offset_at: " + std::to_string(indices.size()) +
                     " indexes for view of shape " + luminal::to_string(shape_));
  }
  DimMap vars = dims;
  int64_t total = 0;
  for (size_t k = 0; k < rank(); ++k) {
    const int64_t n = shape_[k].eval(dims);
    if (indices[k] < 0 || indices[k] >= n) {
      throw IndexError("offset_at: index " + std::to_string(indices[k]) +
                       " is out of range for axis " + std::to_string(k) + " of size " +
                       std::to_string(n) + " (view of shape " + luminal::to_string(shape_) + ")");
    }
    vars[z_name()] = indices[k];
    total += exprs_[k].eval(vars);
  }
  return total;
}

std::vector<int64_t> View::concrete_shape(const DimMap& dims) const {
  std::vector<int64_t> out;
  out.reserve(rank());
  for (const Expr& s : shape_) out.push_back(s.eval(dims));
  return out;
}

std::string View::to_string() const {
  std::string out = luminal::to_string(shape_) + " {";
  for (size_t k = 0; k < rank(); ++k) {
    if (k) out += ", ";
    out += exprs_[k].to_string();
  }
  return out + "}";
}

}  // namespace luminal
