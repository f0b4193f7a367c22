// View facts and view composition (see view_algebra.hpp).
//
// Composition works on the "digits" of A's row-major flat index: A's shape S
// has strides st, and a flat offset f < numel(S) has the unique mixed-radix
// form f = sum_m st[m] * d_m with 0 <= d_m < S[m]; A's element at f is the
// one at multi-index (d_m). When every axis k of `outer` is affine with a
// stride q_k * st[m_k] on its own axis m_k of A, and its constant offset
// decomposes into digits t_m, the digits of outer's offset are
// d_m = t_m + q_k * j_k, provided each stays in [0, S[m]) — which is checked
// symbolically at the two ends of the axis. Then A's element is x's dense
// element sum_m e_m(d_m), with e_m inner's axis expressions, which separates
// into one expression per axis of outer.

#include "luminal/egraph/view_algebra.hpp"

#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>

namespace luminal::egraph {

namespace {

const std::string& z_name() {
  static const std::string name = Expr::index_var().name();
  return name;
}

Ranges index_ranges(const Expr& size) {
  Ranges r;
  const Range b = bounds(size);
  if (b.hi != std::numeric_limits<int64_t>::max() && b.hi >= 1) r[z_name()] = Range{0, b.hi - 1};
  return r;
}

Expr at(const Expr& e, const Expr& z) {
  return e.substitute(z_name(), z);
}

bool is_const(const Expr& e, int64_t v) {
  const auto c = e.simplify().as_const();
  return c && *c == v;
}

bool nonneg(const Expr& e) {
  const Expr s = e.simplify();
  if (auto c = s.as_const()) return *c >= 0;
  return bounds(s).lo >= 0;
}

bool equal(const Expr& a, const Expr& b) {
  return a == b || a.simplify() == b.simplify() || provably_equal(a, b);
}

// u with x == u * d, if provable.
std::optional<Expr> exact_div(const Expr& x, const Expr& d) {
  const Expr xs = x.simplify(), ds = d.simplify();
  if (is_const(ds, 0)) return std::nullopt;
  if (is_const(xs, 0)) return Expr(0);  // not 0 / d: the simplifier keeps that (d may be 0)
  if (equal(xs, ds)) return Expr(1);
  if (auto cx = xs.as_const(), cd = ds.as_const(); cx && cd) {
    if (*cx % *cd != 0) return std::nullopt;
    return Expr(*cx / *cd);
  }
  const Expr q = (xs / ds).simplify();
  if (equal((q * ds).simplify(), xs)) return q;
  return std::nullopt;
}

// A non-zero constant q with s == q * st, if provable.
std::optional<int64_t> const_ratio(const Expr& s, const Expr& st) {
  if (equal(s, st)) return 1;
  if (equal(s, (Expr(-1) * st).simplify())) return -1;
  auto q = exact_div(s, st);
  if (!q) return std::nullopt;
  auto c = q->simplify().as_const();
  if (!c || *c == 0) return std::nullopt;
  return *c;
}

void collect_terms(const Expr& e, std::vector<Expr>& out) {
  if (e.kind() == ExprKind::Add) {
    for (const Expr& c : e.children()) collect_terms(c, out);
  } else {
    out.push_back(e);
  }
}

}  // namespace

std::optional<AffineAxis> affine_axis(const View& v, size_t axis) {
  const Expr& size = v.shape()[axis];
  const Expr& e = v.axis_exprs()[axis];
  const Expr c = at(e, Expr(0)).simplify();
  if (is_const(size, 1) || !e.depends_on(z_name())) return AffineAxis{Expr(0), c};
  const Ranges ranges = index_ranges(size);
  const Expr s = (at(e, Expr(1)) - c).simplify();
  const Expr rebuilt = Expr::index_var() * s + c;
  const Expr es = e.simplify(ranges);
  if (rebuilt.simplify(ranges) == es || provably_equal(rebuilt, es, ranges))
    return AffineAxis{s, c};
  return std::nullopt;
}

std::optional<Expr> axis_stride(const View& v, size_t axis) {
  auto a = affine_axis(v, axis);
  if (!a) return std::nullopt;
  return a->stride;
}

bool is_broadcast_axis(const View& v, size_t axis) {
  auto s = axis_stride(v, axis);
  return s && is_const(*s, 0);
}

bool inner_axis_contiguous(const View& v) {
  if (v.rank() == 0) return true;
  auto s = axis_stride(v, v.rank() - 1);
  return s && is_const(*s, 1);
}

bool is_identity_view(const View& v, const std::vector<Expr>& shape) {
  if (v.rank() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!equal(v.shape()[i], shape[i])) return false;
  return v == View::contiguous(shape) || v.is_contiguous();
}

bool is_pure_broadcast(const View& v) {
  for (const Expr& e : v.axis_exprs())
    if (!is_const(e, 0)) return false;
  return true;
}

namespace {

size_t view_hash(const View& v, size_t h) {
  for (const Expr& e : v.shape()) h = h * 1000003u ^ e.hash();
  for (const Expr& e : v.axis_exprs()) h = h * 1000003u ^ e.hash();
  return h * 1000003u ^ v.rank();
}

struct ViewPair {
  View outer, inner;
  bool operator==(const ViewPair&) const = default;
};
struct ViewPairHash {
  size_t operator()(const ViewPair& p) const { return view_hash(p.inner, view_hash(p.outer, 17)); }
};

std::optional<View> compose_digits(const View& outer, const View& inner, bool own_offsets);

// Offsets are first placed in the digit of the axis they belong to (slices,
// flips); if that leaves a digit out of range, the whole constant offset is
// decomposed instead (offsets moved between axes by squeeze).
std::optional<View> compose_uncached(const View& outer, const View& inner) {
  if (inner.is_contiguous()) return outer;
  if (auto v = compose_digits(outer, inner, true)) return v;
  return compose_digits(outer, inner, false);
}

}  // namespace

bool reads_each_once(const View& v) {
  for (size_t i = 0; i < v.rank(); ++i) {
    if (is_const(v.shape()[i], 1)) continue;
    auto s = axis_stride(v, i);
    if (!s || is_const(*s, 0)) return false;
  }
  return true;
}

std::optional<View> compose_views(const View& outer, const View& inner) {
  // Composition runs the simplifier many times and rules ask for the same
  // pairs in every iteration: memoise (a pure function of its arguments).
  static std::mutex mutex;
  static std::unordered_map<ViewPair, std::optional<View>, ViewPairHash> cache;
  ViewPair key{outer, inner};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::optional<View> result = compose_uncached(outer, inner);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > (1u << 16)) cache.clear();
  cache.emplace(std::move(key), result);
  return result;
}

namespace {

std::optional<View> compose_digits(const View& outer, const View& inner, bool own_offsets) {
  const std::vector<Expr>& S = inner.shape();
  const std::vector<Expr> st = row_major_strides(S);
  const size_t r = S.size();
  auto digit_axis = [&](size_t m) { return !is_const(S[m], 1); };

  // 1. Each moving axis of outer owns the digit of A whose stride it moves by
  //    (times a constant q); it may later extend over the digits outside it.
  struct Owner {
    size_t axis;
    int64_t q;
    size_t lo, hi;  // digits lo..hi; hi is the stride digit
  };
  std::vector<Owner> owners;
  std::vector<int> claimed(r, -1);  // index into owners
  std::vector<Expr> t(r, Expr(0));  // digit offsets
  std::vector<Expr> offsets;        // offsets not yet placed in a digit
  for (size_t k = 0; k < outer.rank(); ++k) {
    auto aff = affine_axis(outer, k);
    if (!aff) return std::nullopt;
    if (is_const(aff->stride, 0)) {
      offsets.push_back(aff->offset);
      continue;
    }
    std::optional<size_t> best;
    int64_t best_q = 0;
    for (size_t m = 0; m < r; ++m) {
      if (!digit_axis(m)) continue;
      auto q = const_ratio(aff->stride, st[m]);
      if (q && (!best || std::llabs(*q) < std::llabs(best_q))) {
        best = m;
        best_q = *q;
      }
    }
    if (!best || claimed[*best] >= 0) return std::nullopt;
    claimed[*best] = static_cast<int>(owners.size());
    owners.push_back({k, best_q, *best, *best});
    // An axis' own offset (a slice start, a flip's end) usually lies in its digit.
    std::optional<Expr> u;
    if (own_offsets) u = exact_div(aff->offset, st[*best]);
    if (u)
      t[*best] = *u;
    else
      offsets.push_back(aff->offset);
  }

  // 2. The remaining constant offset, split into digits.
  std::vector<Expr> terms;
  Expr total = 0;
  for (const Expr& o : offsets) total = total + o;
  collect_terms(total.simplify(), terms);
  int64_t constant = 0;
  std::vector<Expr> symbolic;
  for (const Expr& term : terms) {
    if (auto c = term.as_const())
      constant += *c;
    else
      symbolic.push_back(term);
  }
  if (constant < 0) return std::nullopt;
  bool all_const = true;
  for (size_t m = 0; m < r; ++m) all_const = all_const && st[m].as_const() && S[m].as_const();
  if (constant != 0) {
    if (all_const) {
      int64_t rem = constant;
      for (size_t m = 0; m < r; ++m) {
        const int64_t s = *st[m].as_const();
        if (s == 0) continue;
        t[m] = t[m] + Expr(rem / s);
        rem %= s;
      }
    } else {
      symbolic.push_back(Expr(constant));
    }
  }
  for (const Expr& term : symbolic) {
    bool placed = false;
    for (size_t m = 0; m < r && !placed; ++m) {
      if (!digit_axis(m)) continue;
      if (auto u = exact_div(term, st[m])) {
        t[m] = t[m] + *u;
        placed = true;
      }
    }
    if (!placed) return std::nullopt;
  }
  for (Expr& e : t) e = e.simplify();

  // 3. The value w(z) = W0 + q z of each owner's digits (in units of its stride
  //    digit) stays in [0, P) over the whole axis, P the product of its digits'
  //    sizes; checked at both ends. An owner moving by +-1 that overflows its
  //    digit extends over the next outer digits (a merged axis of A).
  std::vector<int> covered = claimed;
  std::vector<Expr> w0(owners.size());
  for (size_t o = 0; o < owners.size(); ++o) {
    Owner& ow = owners[o];
    const Expr n = outer.shape()[ow.axis];
    for (;;) {
      Expr P = 1, W0 = 0, radix = 1;
      for (size_t m = ow.hi + 1; m-- > ow.lo;) {
        W0 = W0 + t[m] * radix;
        radix = radix * S[m];
      }
      P = radix;
      const int64_t q = ow.q;
      const bool ok = q > 0 ? nonneg(W0) && nonneg(P - W0 - Expr(q) * n + Expr(q - 1))
                            : nonneg(P - Expr(1) - W0) && nonneg(W0 + Expr(q) * n - Expr(q));
      if (ok) {
        w0[o] = W0.simplify();
        break;
      }
      if (std::llabs(q) != 1 || ow.lo == 0 || covered[ow.lo - 1] >= 0) return std::nullopt;
      --ow.lo;
      covered[ow.lo] = static_cast<int>(o);
    }
  }
  for (size_t m = 0; m < r; ++m) {
    if (covered[m] >= 0 || is_const(t[m], 0)) continue;
    if (!nonneg(t[m]) || !nonneg(S[m] - Expr(1) - t[m])) return std::nullopt;
  }

  // 4. Read x through inner's axis expressions at those digits.
  const Expr z = Expr::index_var();
  std::vector<Expr> exprs(outer.rank(), Expr(0));
  Expr extra = 0;
  for (size_t m = 0; m < r; ++m)
    if (covered[m] < 0) extra = extra + at(inner.axis_exprs()[m], t[m]);
  for (size_t o = 0; o < owners.size(); ++o) {
    const Owner& ow = owners[o];
    const Expr w = w0[o] + Expr(ow.q) * z;
    Expr sum = 0, radix = 1;
    for (size_t m = ow.hi + 1; m-- > ow.lo;) {
      Expr digit = ow.lo == ow.hi ? w : w / radix;
      if (m != ow.lo) digit = digit % S[m];
      sum = sum + at(inner.axis_exprs()[m], digit);
      radix = radix * S[m];
    }
    exprs[ow.axis] = sum;
  }
  if (outer.rank() == 0) {
    if (!is_const(extra, 0)) return std::nullopt;
    return View();
  }
  exprs[0] = exprs[0] + extra;
  for (size_t k = 0; k < exprs.size(); ++k)
    exprs[k] = exprs[k].simplify(index_ranges(outer.shape()[k]));
  return View::from_axes(outer.shape(), std::move(exprs));
}

}  // namespace

}  // namespace luminal::egraph
