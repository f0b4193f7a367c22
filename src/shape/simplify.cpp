// The simplifier and the interval analysis it relies on.
//
// Canonical forms produced by Expr::simplify():
//   - sums are polynomials: terms `k * m` where the monomial m is a product of
//     non-constant factors sorted by Expr::compare; like terms are combined, terms are
//     ordered by monomial and the constant comes last (`4 * (z / 4) + z % 4 + 1`).
//     Nested Add/Mul are left-nested chains (`(a + b) + c`, `(k * x) * y`).
//   - products are sorted factor chains with the constant coefficient first; a constant
//     times a sum is distributed, and so is a sum times a sum while the expansion stays
//     under kMaxExpandedTerms terms.
//   - Min/Max chains are flattened, deduplicated, pruned of provably dominated operands
//     and sorted; Eq/Ne operands are sorted.
//
// Rewrite rules (d is any divisor with bounds(d).lo >= 1 unless said otherwise; all
// conditions are checked with bounds(), using the declared ranges and `>= 0` otherwise):
//   constants fold (never a division by zero); x + 0, x * 1, x * 0, x / 1, x / -1, x % 1,
//   x % -1; 0 / d, 0 % d, d % d, d / d for d provably != 0;
//   x / d -> 0 and x % d -> x when 0 <= x < d (or -d < x <= 0); x < d is also proved
//     through symbolic upper bounds (UpperBounds: `v < b`), by lower-bounding d - x
//     with each bounded variable of negative coefficient at b - 1;
//   (x / a) / d -> x / (a * d) for a >= 1;
//   (x % (q * d)) / d -> (x / d) % q and (x % (q * d)) % d -> x % d for q >= 1;
//   (6 * x + 4) / 4 -> (3 * x + 2) / 2 (common factor of a constant division);
//   (d * q + y) / d -> q + y / d and (d * q + y) % d -> y % d when y = 0 or when
//     d * q + y and y are both >= 0 (or both <= 0); for % a constant d also reduces
//     positive coefficients (`(5 * x + 6) % 4 -> (x + 2) % 4` when x >= 0); d may be a
//     sum (q from the terms of n that d's leading term divides, when y is shorter than n);
//   ceil_div(x, 1) -> x; ceil_div(d * q + y, d) -> q + ceil_div(y, d) when d * q + y >= 0
//     and y >= 0; ceil_div(0, d) -> 0; ceil_div(x, d) -> 1 when 1 <= x <= d;
//   in sums: c * a * (x / a) + c * (x % a) -> c * x and
//     c * a * ((x / a) % b) + c * (x % a) -> c * (x % (a * b)) for a, b >= 1 (a may be
//     a sum: a * (x / a) is matched in its expanded form);
//   min/max drop operands provably dominated by another (difference bounds, or
//     through the operands of min/max chains: min(.., x, ..) <= x <= max(.., x, ..),
//     min(2, s) <= min(5, s));
//   comparisons fold to 0/1 when the bounds of the difference decide them.
// All rules assume that evaluation does not overflow int64.

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "luminal/error.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {
namespace {

using K = ExprKind;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr size_t kMaxExpandedTerms = 32;
constexpr int kMaxRounds = 8;

// ---- saturating and wrapping int64 arithmetic --------------------------------------------

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMax : kMin;
  return r;
}
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? kMin : kMax;
  return r;
}
int64_t sat_neg(int64_t a) {
  return a == kMin ? kMax : -a;
}
int64_t sat_abs(int64_t a) {
  return a < 0 ? sat_neg(a) : a;
}
int64_t sat_div(int64_t a, int64_t b) {
  return a == kMin && b == -1 ? kMax : a / b;
}
// Coefficients combine modulo 2^64, exactly like evaluation does.
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ---- interval arithmetic ------------------------------------------------------------------

Range add_r(Range a, Range b) {
  return {sat_add(a.lo, b.lo), sat_add(a.hi, b.hi)};
}

Range corners(Range a, Range b, int64_t (*f)(int64_t, int64_t)) {
  const int64_t v[] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
  return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
}

Range div_r(Range a, Range b) {
  // Division by zero throws, so a zero divisor contributes no value.
  if (b.lo == 0 && b.hi == 0) return {kMin, kMax};
  if (b.lo == 0) b.lo = 1;
  if (b.hi == 0) b.hi = -1;
  if (b.lo < 0 && b.hi > 0) {  // |a / b| <= |a|
    const int64_t m = std::max(sat_abs(a.lo), sat_abs(a.hi));
    return {sat_neg(m), m};
  }
  // For a fixed sign of b, truncating division is monotone in each operand.
  return corners(a, b, sat_div);
}

Range mod_r(Range a, Range b) {
  if (b.lo >= 1 && ((a.lo >= 0 && a.hi < b.lo) || (a.hi <= 0 && a.lo > -b.lo))) return a;
  // |a % b| < |b| and |a % b| <= |a|; the result has the sign of a.
  const int64_t m = sat_add(std::max(sat_abs(b.lo), sat_abs(b.hi)), -1);
  return {a.lo >= 0 ? 0 : std::max(a.lo, sat_neg(m)), a.hi <= 0 ? 0 : std::min(a.hi, m)};
}

Range ceil_div_r(Range a, Range b) {
  if (a.lo >= 0 && b.lo >= 1) {  // ceil(a / b): increasing in a, decreasing in b
    auto up = [](int64_t x, int64_t y) { return x / y + (x % y != 0); };
    return {up(a.lo, b.hi), up(a.hi, b.lo)};
  }
  return div_r({sat_add(sat_add(a.lo, b.lo), -1), sat_add(sat_add(a.hi, b.hi), -1)}, b);
}

Range bool_r(bool always, bool never) {
  return always ? Range{1, 1} : never ? Range{0, 0} : Range{0, 1};
}

void check_ranges(const Ranges& ranges) {
  for (const auto& [name, r] : ranges) {
    if (r.lo > r.hi) {
      throw Error("empty range for dimension '" + name + "': [" + std::to_string(r.lo) + ", " +
                  std::to_string(r.hi) + "]");
    }
  }
}

// ---- polynomials --------------------------------------------------------------------------

void flatten(const Expr& e, K kind, std::vector<Expr>& out) {
  if (e.kind() != kind) {
    out.push_back(e);
    return;
  }
  for (const Expr& c : e.children()) flatten(c, kind, out);
}

std::vector<Expr> factors(const Expr& e) {
  std::vector<Expr> out;
  flatten(e, K::Mul, out);
  return out;
}

// A left-nested chain of `kind` over the operands in the order given.
Expr chain(K kind, const std::vector<Expr>& operands) {
  Expr out = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) out = Expr::make(kind, {out, operands[i]});
  return out;
}

// The canonical product of non-constant factors; nullopt for the empty product.
std::optional<Expr> monomial(std::vector<Expr> fs) {
  if (fs.empty()) return std::nullopt;
  std::sort(fs.begin(), fs.end());
  return chain(K::Mul, fs);
}

// Removes the factors `sub` (a sorted multiset) from the sorted multiset `fs`.
std::optional<std::vector<Expr>> remove_factors(const std::vector<Expr>& fs,
                                                const std::vector<Expr>& sub) {
  std::vector<Expr> rest;
  size_t j = 0;
  for (const Expr& f : fs) {
    if (j < sub.size() && f == sub[j]) {
      ++j;
    } else {
      rest.push_back(f);
    }
  }
  if (j != sub.size()) return std::nullopt;
  return rest;
}

// sum of coefficient * monomial, plus a constant.
struct Poly {
  std::map<Expr, int64_t> terms;
  int64_t constant = 0;

  void add(const std::optional<Expr>& m, int64_t k) {
    if (!m) {
      constant = wrap_add(constant, k);
      return;
    }
    int64_t& c = terms[*m];
    c = wrap_add(c, k);
    if (c == 0) terms.erase(*m);
  }
  void add(const Poly& p, int64_t scale) {
    for (const auto& [m, k] : p.terms) add(m, wrap_mul(k, scale));
    constant = wrap_add(constant, wrap_mul(p.constant, scale));
  }
  size_t size() const { return terms.size() + (constant != 0); }
  bool is_zero() const { return size() == 0; }
  // Every term including the constant (as a term without monomial).
  std::vector<std::pair<std::optional<Expr>, int64_t>> all_terms() const {
    std::vector<std::pair<std::optional<Expr>, int64_t>> out(terms.begin(), terms.end());
    if (constant != 0) out.emplace_back(std::nullopt, constant);
    return out;
  }
};

Poly poly_of(const Expr& e) {
  Poly p;
  std::vector<Expr> summands;
  flatten(e, K::Add, summands);
  for (const Expr& s : summands) {
    int64_t k = 1;
    std::vector<Expr> fs;
    for (const Expr& f : factors(s)) {
      if (f.is_const()) {
        k = wrap_mul(k, f.value());
      } else {
        fs.push_back(f);
      }
    }
    p.add(monomial(std::move(fs)), k);
  }
  return p;
}

Expr build_term(const std::optional<Expr>& m, int64_t k) {
  if (!m) return Expr::constant(k);
  if (k == 1) return *m;
  std::vector<Expr> fs{Expr::constant(k)};
  flatten(*m, K::Mul, fs);
  return chain(K::Mul, fs);
}

Expr build(const Poly& p) {
  std::vector<Expr> terms;
  for (const auto& [m, k] : p.terms) terms.push_back(build_term(m, k));
  if (p.constant != 0 || terms.empty()) terms.push_back(Expr::constant(p.constant));
  return chain(K::Add, terms);
}

// The single term (coefficient, monomial) of a one-term polynomial.
std::optional<std::pair<int64_t, std::optional<Expr>>> single_term(const Poly& p) {
  if (p.size() != 1) return std::nullopt;
  if (p.terms.empty()) return std::make_pair(p.constant, std::optional<Expr>());
  return std::make_pair(p.terms.begin()->second, std::optional<Expr>(p.terms.begin()->first));
}

// Splits n = d * q + y term by term, where d is a positive constant or a positive
// coefficient times a monomial: q collects the terms divisible by d. With `reduce`, a
// positive coefficient that is not a multiple of a constant d is split too (5x = 4x + x).
std::optional<std::pair<Poly, Poly>> split(const Poly& n, const Expr& d, bool reduce) {
  const auto dt = single_term(poly_of(d));
  if (!dt || dt->first <= 0) return std::nullopt;
  const int64_t kd = dt->first;
  const std::vector<Expr> fd = dt->second ? factors(*dt->second) : std::vector<Expr>{};
  std::pair<Poly, Poly> qy;
  for (const auto& [m, k] : n.all_terms()) {
    auto rest = remove_factors(m ? factors(*m) : std::vector<Expr>{}, fd);
    const bool take = rest && (k % kd == 0 || (reduce && fd.empty() && k > 0));
    if (!take) {
      qy.second.add(m, k);
      continue;
    }
    qy.first.add(monomial(std::move(*rest)), k / kd);
    qy.second.add(m, k % kd);
  }
  return qy;
}

// ---- the simplifier -----------------------------------------------------------------------

class Simplifier {
public:
  explicit Simplifier(const Ranges& ranges, const UpperBounds& below = no_upper_bounds())
      : ranges_(ranges), below_(below) {
    // v < b with v >= lo says b >= lo + 1: a loop over a dynamic extent (s, or p + s)
    // runs its body only when the extent is >= 1, which makes it a divisor the rules
    // may use. Kept for b as given and in its simplified form (how divisors appear).
    for (const auto& [name, bound] : below_) {
      const auto v = ranges_.find(name);
      const int64_t lo = v == ranges_.end() ? 0 : v->second.lo;
      if (lo == kMax) continue;
      for (const Expr& b : {bound, Simplifier(ranges_).fixpoint(bound)}) {
        auto [it, inserted] = floors_.try_emplace(b.node(), lo + 1);
        if (!inserted) it->second = std::max(it->second, lo + 1);
      }
    }
  }

  Range bounds(const Expr& e);

  Expr fixpoint(Expr e) {
    for (int round = 0; round < kMaxRounds; ++round) {
      Expr next = simp(e);
      if (next == e) break;
      e = next;
    }
    return e;
  }

private:
  Expr simp(const Expr& e);
  // Smart constructors: given simplified operands, they return a simplified result.
  Expr add(const Expr& a, const Expr& b);
  Expr sum(Poly p);
  Expr mul(const Expr& a, const Expr& b);
  Expr div(const Expr& n, const Expr& d);
  Expr mod(const Expr& n, const Expr& d);
  Expr ceil_div(const Expr& n, const Expr& d);
  Expr min_max(K kind, const Expr& a, const Expr& b);
  Expr compare(K kind, const Expr& a, const Expr& b);
  bool recombine(Poly& p);
  std::optional<Expr> exact_quotient(const Expr& n, const Expr& d);
  std::optional<std::pair<Poly, Poly>> split_any(const Poly& n, const Expr& d, bool reduce);
  Expr difference(const Expr& a, const Expr& b) { return add(a, mul(Expr::constant(-1), b)); }
  bool positive(const Expr& e) { return bounds(e).lo >= 1; }
  // 0 <= n < d (or -d < n <= 0) for every assignment, d >= 1: then n / d is 0 and n % d is n.
  bool within_divisor(const Expr& n, const Expr& d) {
    const Range bn = bounds(n), bd = bounds(d);
    if ((bn.lo >= 0 && bn.hi < bd.lo) || (bn.hi <= 0 && bn.lo > -bd.lo)) return true;
    return bn.lo >= 0 && provably_lt_by_upper_bounds(n, d);
  }
  // n < d through the symbolic upper bounds: d - n is at least d - n with each bounded
  // variable v of negative coefficient -k at its largest value, bound - 1 (the terms
  // k * v of other signs and v's other occurrences keep their numeric ranges).
  bool provably_lt_by_upper_bounds(const Expr& n, const Expr& d) {
    if (below_.empty()) return false;
    const Poly diff = poly_of(difference(d, n));
    Poly relaxed;
    bool used = false;
    for (const auto& [m, k] : diff.all_terms()) {
      const auto it = m && m->is_var() && k < 0 ? below_.find(m->name()) : below_.end();
      if (it == below_.end()) {
        relaxed.add(m, k);
        continue;
      }
      relaxed.add(poly_of(it->second), k);
      relaxed.add(std::nullopt, -k);
      used = true;
    }
    return used && positive(sum(std::move(relaxed)));
  }
  // r raised to the floor an upper bound implies for e, unless that leaves no value
  // (then no variable satisfies its bound: the expression is never evaluated).
  Range with_floor(const Expr& e, Range r) const {
    if (floors_.empty()) return r;
    auto it = floors_.find(e.node());
    if (it != floors_.end() && it->second <= r.hi) r.lo = std::max(r.lo, it->second);
    return r;
  }
  static const UpperBounds& no_upper_bounds() {
    static const UpperBounds none;
    return none;
  }
  // a <= b for every assignment.
  bool provably_le(const Expr& a, const Expr& b) {
    if (a == b) return true;
    // Through the operands of min/max chains, whatever the bounds: a <= min(bs)
    // when a <= every b, max(as) <= b when every a <= b, min(as) <= b when some
    // a <= b, a <= max(bs) when a <= some b (x[2:5] on a dim s: the stop
    // max(min(2, s), min(5, s)) is min(5, s)).
    const auto operands = [](const Expr& e, K kind) {
      std::vector<Expr> items;
      flatten(e, kind, items);
      return items;
    };
    const auto all = [&](const std::vector<Expr>& xs, auto&& f) {
      return std::all_of(xs.begin(), xs.end(), f);
    };
    const auto any = [&](const std::vector<Expr>& xs, auto&& f) {
      return std::any_of(xs.begin(), xs.end(), f);
    };
    if (b.kind() == K::Min &&
        all(operands(b, K::Min), [&](const Expr& x) { return provably_le(a, x); }))
      return true;
    if (a.kind() == K::Max &&
        all(operands(a, K::Max), [&](const Expr& x) { return provably_le(x, b); }))
      return true;
    if (a.kind() == K::Min &&
        any(operands(a, K::Min), [&](const Expr& x) { return provably_le(x, b); }))
      return true;
    if (b.kind() == K::Max &&
        any(operands(b, K::Max), [&](const Expr& x) { return provably_le(a, x); }))
      return true;
    return bounds(a).hi <= bounds(b).lo || bounds(difference(a, b)).hi <= 0;
  }

  const Ranges& ranges_;
  const UpperBounds& below_;
  std::unordered_map<const ExprNode*, int64_t> floors_;  // e >= floor, implied by below_
  std::unordered_map<const ExprNode*, Range> bounds_memo_;
  std::unordered_map<const ExprNode*, Expr> simp_memo_;
};

Range Simplifier::bounds(const Expr& e) {
  if (e.is_const()) return {e.value(), e.value()};
  if (e.is_var()) {
    auto it = ranges_.find(e.name());
    return with_floor(e, it == ranges_.end() ? Range{} : it->second);
  }
  if (auto it = bounds_memo_.find(e.node()); it != bounds_memo_.end()) return it->second;
  const Range a = bounds(e.children()[0]);
  const Range b = bounds(e.children()[1]);
  Range r;
  switch (e.kind()) {
    case K::Add:
      r = add_r(a, b);
      break;
    case K::Mul:
      r = corners(a, b, sat_mul);
      break;
    case K::Div:
      r = div_r(a, b);
      break;
    case K::CeilDiv:
      r = ceil_div_r(a, b);
      break;
    case K::Mod:
      r = mod_r(a, b);
      break;
    case K::Min:
      r = {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      break;
    case K::Max:
      r = {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      break;
    case K::Lt:
      r = bool_r(a.hi < b.lo, a.lo >= b.hi);
      break;
    case K::Le:
      r = bool_r(a.hi <= b.lo, a.lo > b.hi);
      break;
    case K::Eq:
      r = bool_r(a.lo == a.hi && a == b, a.hi < b.lo || b.hi < a.lo);
      break;
    case K::Ne:
      r = bool_r(a.hi < b.lo || b.hi < a.lo, a.lo == a.hi && a == b);
      break;
    case K::Const:
    case K::Var:
      break;
  }
  r = with_floor(e, r);
  bounds_memo_.emplace(e.node(), r);
  return r;
}

Expr Simplifier::simp(const Expr& e) {
  if (e.is_const() || e.is_var()) return e;
  if (auto it = simp_memo_.find(e.node()); it != simp_memo_.end()) return it->second;
  const Expr a = simp(e.children()[0]);
  const Expr b = simp(e.children()[1]);
  Expr r;
  switch (e.kind()) {
    case K::Add:
      r = add(a, b);
      break;
    case K::Mul:
      r = mul(a, b);
      break;
    case K::Div:
      r = div(a, b);
      break;
    case K::CeilDiv:
      r = ceil_div(a, b);
      break;
    case K::Mod:
      r = mod(a, b);
      break;
    case K::Min:
    case K::Max:
      r = min_max(e.kind(), a, b);
      break;
    default:
      r = compare(e.kind(), a, b);
      break;
  }
  simp_memo_.emplace(e.node(), r);
  return r;
}

Expr Simplifier::add(const Expr& a, const Expr& b) {
  Poly p = poly_of(a);
  p.add(poly_of(b), 1);
  return sum(std::move(p));
}

Expr Simplifier::sum(Poly p) {
  for (int i = 0; i < 64 && recombine(p); ++i) {
  }
  return build(p);
}

// Finds terms `c * (x % a)` and `c * a * f` (a * f expanded, so a may be a sum) with
// f = x / a or f = (x / a) % b, and replaces them by c * x or c * (x % (a * b)).
// Returns whether it changed p.
bool Simplifier::recombine(Poly& p) {
  for (const auto& [m, c] : p.terms) {
    if (m.kind() != K::Mod || !positive(m.children()[1])) continue;
    const Expr x = m.children()[0], a = m.children()[1];
    const Expr quotient = Expr::make(K::Div, {x, a});
    std::vector<Expr> candidates{quotient};
    for (const auto& [m2, c2] : p.terms) {
      for (const Expr& g : factors(m2)) {
        if (g.kind() == K::Mod && g.children()[0] == quotient && positive(g.children()[1])) {
          candidates.push_back(g);
        }
      }
    }
    for (const Expr& f : candidates) {
      const Poly t = poly_of(mul(a, f));
      const bool present =
          t.constant == 0 && std::all_of(t.terms.begin(), t.terms.end(), [&](const auto& term) {
            auto it = p.terms.find(term.first);
            return term.first != m && it != p.terms.end() && it->second == wrap_mul(c, term.second);
          });
      if (!present || t.terms.empty()) continue;
      const Expr merged = f == quotient ? x : mod(x, mul(a, f.children()[1]));
      Poly next = p;
      next.add(t, -c);
      next.add(std::optional<Expr>(m), -c);
      next.add(poly_of(merged), c);
      p = std::move(next);
      return true;
    }
  }
  return false;
}

Expr Simplifier::mul(const Expr& a, const Expr& b) {
  const Poly pa = poly_of(a), pb = poly_of(b);
  if (pa.size() > 1 && pb.size() > 1 && pa.size() * pb.size() > kMaxExpandedTerms) {
    std::vector<Expr> fs = factors(a);  // two big sums: keep their product unexpanded
    flatten(b, K::Mul, fs);
    return *monomial(std::move(fs));
  }
  Poly out;
  for (const auto& [ma, ka] : pa.all_terms()) {
    for (const auto& [mb, kb] : pb.all_terms()) {
      std::vector<Expr> fs = ma ? factors(*ma) : std::vector<Expr>{};
      if (mb) flatten(*mb, K::Mul, fs);
      out.add(monomial(std::move(fs)), wrap_mul(ka, kb));
    }
  }
  return sum(std::move(out));
}

std::optional<Expr> Simplifier::exact_quotient(const Expr& n, const Expr& d) {
  auto qy = split(poly_of(n), d, false);
  if (!qy || !qy->second.is_zero()) return std::nullopt;
  return sum(std::move(qy->first));
}

// n = d * q + y as polynomials: split() for a one-term d; for a sum d, q collects
// t / l for the terms t of n that the leading term l of d divides (exactly, coefficient
// included), and y = n - d * q, kept only when it has fewer terms than n
// (`i + a p + a s` over `p + s`: q = a, y = i).
std::optional<std::pair<Poly, Poly>> Simplifier::split_any(const Poly& n, const Expr& d,
                                                           bool reduce) {
  const Poly pd = poly_of(d);
  if (pd.size() <= 1) return split(n, d, reduce);
  if (pd.terms.empty()) return std::nullopt;
  const auto& [lead, kl] = *pd.terms.begin();
  if (kl <= 0) return std::nullopt;
  const std::vector<Expr> fl = factors(lead);
  Poly q;
  for (const auto& [m, k] : n.terms) {
    auto rest = remove_factors(factors(m), fl);
    if (rest && k % kl == 0) q.add(monomial(std::move(*rest)), k / kl);
  }
  if (q.is_zero()) return std::nullopt;
  Poly y = n;
  y.add(poly_of(mul(d, sum(q))), -1);
  if (y.size() >= n.size()) return std::nullopt;
  return std::make_pair(std::move(q), std::move(y));
}

Expr Simplifier::div(const Expr& n, const Expr& d) {
  if (n.is_const() && d.is_const() && d.value() != 0) return n / d;
  if (d.is_const() && d.value() == 1) return n;
  if (d.is_const() && d.value() == -1) return mul(Expr::constant(-1), n);
  const Range bd = bounds(d);
  if (n.is_const() && n.value() == 0 && (bd.lo > 0 || bd.hi < 0)) return 0;
  if (bd.lo < 1) return Expr::make(K::Div, {n, d});
  if (n == d) return 1;
  const Range bn = bounds(n);
  if (within_divisor(n, d)) return 0;
  if (n.kind() == K::Mod) {
    if (auto q = exact_quotient(n.children()[1], d); q && positive(*q)) {
      return mod(div(n.children()[0], d), *q);
    }
  }
  if (n.kind() == K::Div && positive(n.children()[1])) {
    const Expr& a = n.children()[1];
    int64_t unused;
    if (!(a.is_const() && d.is_const() && __builtin_mul_overflow(a.value(), d.value(), &unused))) {
      return div(n.children()[0], mul(a, d));
    }
  }
  Poly pn = poly_of(n);
  if (d.is_const()) {
    // Dividing numerator and divisor by a common factor keeps the exact quotient, hence
    // its truncation.
    int64_t g = d.value();
    for (const auto& [m, k] : pn.all_terms()) g = k == kMin ? 1 : std::gcd(g, k);
    if (g > 1) {
      Poly reduced;
      for (const auto& [m, k] : pn.all_terms()) reduced.add(m, k / g);
      return div(sum(std::move(reduced)), Expr::constant(d.value() / g));
    }
  }
  if (auto qy = split_any(pn, d, false); qy && !qy->first.is_zero()) {
    const Expr y = sum(qy->second);
    const Range by = bounds(y);
    if (qy->second.is_zero() || (bn.lo >= 0 && by.lo >= 0) || (bn.hi <= 0 && by.hi <= 0)) {
      return add(sum(std::move(qy->first)), div(y, d));
    }
  }
  return Expr::make(K::Div, {n, d});
}

Expr Simplifier::mod(const Expr& n, const Expr& d) {
  if (n.is_const() && d.is_const() && d.value() != 0) return n % d;
  if (d.is_const() && (d.value() == 1 || d.value() == -1)) return 0;
  const Range bd = bounds(d);
  if ((n == d || (n.is_const() && n.value() == 0)) && (bd.lo > 0 || bd.hi < 0)) return 0;
  if (bd.lo < 1) return Expr::make(K::Mod, {n, d});
  const Range bn = bounds(n);
  if (within_divisor(n, d)) return n;
  if (n.kind() == K::Mod) {
    if (auto q = exact_quotient(n.children()[1], d); q && positive(*q)) {
      return mod(n.children()[0], d);
    }
  }
  if (auto qy = split_any(poly_of(n), d, true); qy && !qy->first.is_zero()) {
    if (qy->second.is_zero()) return 0;
    const Expr y = sum(std::move(qy->second));
    const Range by = bounds(y);
    if ((bn.lo >= 0 && by.lo >= 0) || (bn.hi <= 0 && by.hi <= 0)) return mod(y, d);
  }
  return Expr::make(K::Mod, {n, d});
}

Expr Simplifier::ceil_div(const Expr& n, const Expr& d) {
  if (n.is_const() && d.is_const() && d.value() != 0) return luminal::ceil_div(n, d);
  if (d.is_const() && d.value() == 1) return n;
  const Range bd = bounds(d);
  if (bd.lo < 1) return Expr::make(K::CeilDiv, {n, d});
  const Range bn = bounds(n);
  if (bn.lo == 0 && bn.hi == 0) return 0;
  if (bn.lo >= 1 && bn.hi <= bd.lo) return 1;
  // (d * q + y + d - 1) / d = q + (y + d - 1) / d needs a non-negative numerator and
  // y + d - 1 >= 0; with a negative numerator truncation would round the wrong way.
  if (auto qy = split(poly_of(n), d, false); qy && !qy->first.is_zero() && bn.lo >= 0) {
    const Expr y = sum(std::move(qy->second));
    if (bounds(y).lo >= 0) return add(sum(std::move(qy->first)), ceil_div(y, d));
  }
  return Expr::make(K::CeilDiv, {n, d});
}

Expr Simplifier::min_max(K kind, const Expr& a, const Expr& b) {
  std::vector<Expr> items;
  flatten(a, kind, items);
  flatten(b, kind, items);
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  // x is redundant when another operand y is always on the winning side of it.
  const auto beats = [&](const Expr& y, const Expr& x) {
    return kind == K::Min ? provably_le(y, x) : provably_le(x, y);
  };
  std::vector<Expr> kept;
  for (const Expr& x : items) {
    if (std::any_of(kept.begin(), kept.end(), [&](const Expr& y) { return beats(y, x); })) {
      continue;
    }
    std::erase_if(kept, [&](const Expr& y) { return beats(x, y); });
    kept.push_back(x);
  }
  std::sort(kept.begin(), kept.end());
  return chain(kind, kept);
}

Expr Simplifier::compare(K kind, const Expr& a, const Expr& b) {
  const Range d = bounds(difference(b, a));  // b - a
  switch (kind) {
    case K::Lt:
      if (d.lo > 0 || d.hi <= 0) return d.lo > 0 ? 1 : 0;
      break;
    case K::Le:
      if (d.lo >= 0 || d.hi < 0) return d.lo >= 0 ? 1 : 0;
      break;
    case K::Eq:
    case K::Ne: {
      const bool equal = a == b || (d.lo == 0 && d.hi == 0), differ = d.lo > 0 || d.hi < 0;
      if (equal || differ) return (equal == (kind == K::Eq)) ? 1 : 0;
      return Expr::make(kind, {std::min(a, b), std::max(a, b)});
    }
    default:
      throw Error("simplify: unknown expression kind");
  }
  return Expr::make(kind, {a, b});
}

}  // namespace

Expr Expr::simplify(const Ranges& ranges) const {
  check_ranges(ranges);
  if (!ranges.empty()) return Simplifier(ranges).fixpoint(*this);
  // Without ranges the result depends on the expression alone, and expressions
  // are hash-consed and never freed, so it is memoised per thread: graph
  // construction and deserialisation simplify the same shapes and strides
  // thousands of times (a 30-layer model repeats one layer's expressions).
  thread_local std::unordered_map<const ExprNode*, Expr> memo;
  if (auto it = memo.find(node_); it != memo.end()) return it->second;
  Expr result = Simplifier(ranges).fixpoint(*this);
  if (memo.size() >= (size_t{1} << 18)) memo.clear();  // bound the memory
  memo.emplace(node_, result);
  return result;
}

Expr Expr::simplify(const Ranges& ranges, const UpperBounds& below) const {
  if (below.empty()) return simplify(ranges);
  check_ranges(ranges);
  for (const auto& [name, bound] : below) {
    if (bound.depends_on(name)) {
      throw Error("upper bound of '" + name + "' depends on itself: " + bound.to_string());
    }
  }
  return Simplifier(ranges, below).fixpoint(*this);
}

Range bounds(const Expr& e, const Ranges& ranges) {
  check_ranges(ranges);
  Simplifier s(ranges);
  // Both the tree as given and its simplified form are sound; like terms cancel only in
  // the latter (x - x), while the former may be tighter elsewhere, so intersect.
  const Range raw = s.bounds(e);
  const Range simple = s.bounds(s.fixpoint(e));
  const Range both{std::max(raw.lo, simple.lo), std::min(raw.hi, simple.hi)};
  return both.lo <= both.hi ? both : raw;
}

bool provably_equal(const Expr& a, const Expr& b, const Ranges& ranges) {
  if (a == b) return true;
  check_ranges(ranges);
  Simplifier s(ranges);
  if (s.fixpoint(a) == s.fixpoint(b)) return true;
  const Expr diff = s.fixpoint(a - b);
  const Range r = s.bounds(diff);
  return r.lo == 0 && r.hi == 0;
}

Expr product(const std::vector<Expr>& factors) {
  Expr out = 1;
  for (const Expr& f : factors) out = out * f;
  return out.simplify();
}

std::string to_string(const std::vector<Expr>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].to_string();
  return out + "]";
}

}  // namespace luminal
