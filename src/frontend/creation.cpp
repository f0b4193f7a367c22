#include "luminal/frontend/creation.hpp"

#include <array>
#include <cmath>
#include <numbers>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"

namespace luminal {

namespace {

void require_creatable(DType d, const char* op) {
  if (!is_compute_type(d))
    throw DTypeError(std::string(op) + ": cannot create a " + to_string(d) +
                     " tensor (storage type)");
}

Tensor iota_shaped(Graph& g, const Expr& expr, const std::vector<Expr>& shape, DType d) {
  return g.iota(expr, product(shape), d).reshape(shape);
}

}  // namespace

// ---- constant fills ----------------------------------------------------------

Tensor full(Graph& graph, const std::vector<Expr>& shape, Scalar value,
            std::optional<DType> dtype) {
  DType d = dtype.value_or(value.default_dtype());
  require_creatable(d, "full");
  return scalar_tensor(graph, value, d).expand(shape);
}

Tensor zeros(Graph& graph, const std::vector<Expr>& shape, DType dtype) {
  return full(graph, shape, Scalar(0), dtype);
}

Tensor ones(Graph& graph, const std::vector<Expr>& shape, DType dtype) {
  return full(graph, shape, Scalar(1), dtype);
}

Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype) {
  return full(*x.graph(), x.shape(), value, dtype.value_or(x.dtype()));
}

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype) {
  return full_like(x, Scalar(0), dtype);
}

Tensor ones_like(const Tensor& x, std::optional<DType> dtype) {
  return full_like(x, Scalar(1), dtype);
}

// ---- ranges ---------------------------------------------------------------------

Tensor arange(Graph& graph, const Expr& end, DType dtype) {
  require_creatable(dtype, "arange");
  if (dtype == DType::Bool) throw DTypeError("arange: bool is not a valid dtype");
  if (is_int(dtype)) return graph.iota(Expr::index_var(), end, dtype);
  return to(graph.iota(Expr::index_var(), end, DType::I64), dtype);
}

Tensor arange(Graph& graph, Scalar start, Scalar end, Scalar step, std::optional<DType> dtype) {
  bool all_int = !start.is_float() && !end.is_float() && !step.is_float();
  DType d = dtype.value_or(all_int ? kDefaultInt : kDefaultFloat);
  require_creatable(d, "arange");
  if (d == DType::Bool) throw DTypeError("arange: bool is not a valid dtype");
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  std::string args =
      "(" + start.to_string() + ", " + end.to_string() + ", " + step.to_string() + ")";
  if (st == 0.0) throw ShapeError("arange" + args + ": step must be nonzero");
  if (!std::isfinite(s) || !std::isfinite(e))
    throw ShapeError("arange" + args + ": start and end must be finite");
  double size_d = std::ceil((e - s) / st);
  if (size_d < 0)
    throw ShapeError("arange" + args +
                     ": upper bound and lower bound are inconsistent with the step sign");
  auto n = static_cast<int64_t>(size_d);
  if (all_int && is_int(d)) {
    // Exact integer values straight from the Iota expression.
    Expr value = Expr(start.to_int()) + Expr::index_var() * Expr(step.to_int());
    return to(graph.iota(value, n, DType::I64), d);
  }
  // As torch's CPU kernel: start + i * step in double, rounded once.
  Tensor i = to(graph.iota(Expr::index_var(), n, DType::I64), DType::F64);
  return to(i * st + s, d);
}

Tensor linspace(Graph& graph, double start, double end, int64_t steps, DType dtype) {
  require_creatable(dtype, "linspace");
  if (steps < 0)
    throw ShapeError("linspace: number of steps must be non-negative, got " +
                     std::to_string(steps));
  if (steps <= 1) return full(graph, {steps}, Scalar(start), dtype);
  // torch's symmetric formula: the first half counts up from start, the second
  // half down from end (so both ends are exact).
  double step = (end - start) / static_cast<double>(steps - 1);
  int64_t halfway = steps / 2;
  Tensor i = to(graph.iota(Expr::index_var(), steps, DType::I64), DType::F64);
  Tensor up = i * step + start;
  Tensor down = end - (static_cast<double>(steps - 1) - i) * step;
  Tensor first_half =
      to(graph.iota(lt(Expr::index_var(), Expr(halfway)), steps, DType::I32), DType::Bool);
  return to(where(first_half, up, down), dtype);
}

Tensor logspace(Graph& graph, double start, double end, int64_t steps, double base, DType dtype) {
  Tensor lin = linspace(graph, start, end, steps, DType::F64);
  return to(pow(base, lin), dtype);
}

// ---- matrices and masks -------------------------------------------------------------

Tensor eye(Graph& graph, const Expr& n, std::optional<Expr> m, DType dtype) {
  require_creatable(dtype, "eye");
  Expr cols = m.value_or(n);
  Expr z = Expr::index_var();
  return to(iota_shaped(graph, eq(z / cols, z % cols), {n, cols}, DType::I32), dtype);
}

namespace {
// Bool mask over [rows, cols]: col - row <= k (lower) or col - row >= k (upper),
// written without negative intermediates.
Tensor band_mask(Graph& g, const Expr& rows, const Expr& cols, int64_t k, bool lower) {
  Expr z = Expr::index_var();
  Expr col = z % cols + Expr(k < 0 ? -k : 0);
  Expr row = z / cols + Expr(k > 0 ? k : 0);
  Expr keep = lower ? le(col, row) : ge(col, row);
  return to(iota_shaped(g, keep, {rows, cols}, DType::I32), DType::Bool);
}

Tensor triangle(const Tensor& x, int64_t diagonal, bool lower, const char* op) {
  if (x.rank() < 2)
    throw ShapeError(std::string(op) + ": expects a tensor with at least 2 dims, got " +
                     x.describe());
  if (!is_compute_type(x.dtype()))
    throw DTypeError(std::string(op) + ": " + x.describe() + " is a storage type");
  Tensor mask = band_mask(*x.graph(), x.dim(-2), x.dim(-1), diagonal, lower);
  Tensor zero = scalar_tensor(*x.graph(), Scalar(0), x.dtype());
  return where(mask, x, zero);
}
}  // namespace

Tensor tril_mask(Graph& graph, const Expr& rows, const Expr& cols, int64_t diagonal) {
  return band_mask(graph, rows, cols, diagonal, true);
}

Tensor triu_mask(Graph& graph, const Expr& rows, const Expr& cols, int64_t diagonal) {
  return band_mask(graph, rows, cols, diagonal, false);
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  return triangle(x, diagonal, true, "tril");
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  return triangle(x, diagonal, false, "triu");
}

// ---- random ---------------------------------------------------------------------------------

namespace {

constexpr int64_t kPrime = 2147483579;  // p = 2 (mod 3): cubing permutes Z/pZ
constexpr int kRounds = 8;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform integers in [0, p): a MiMC-style permutation of the flat element
// index, keyed by (seed, stream). Only exact i64 Add / Mul / Mod.
Tensor hash_uniform(Graph& g, const std::vector<Expr>& shape, uint64_t seed, uint64_t stream,
                    const char* op) {
  Expr n = product(shape);
  if (auto c = n.as_const(); c && *c >= kPrime)
    throw ShapeError(std::string(op) + ": at most " + std::to_string(kPrime) +
                     " random elements per tensor, got " + to_string(shape));
  Tensor x = iota_shaped(g, Expr::index_var(), shape, DType::I64);
  Tensor p = g.constant_int(kPrime, DType::I64);
  uint64_t state = splitmix64(seed ^ splitmix64(stream + 0x5EED));
  for (int r = 0; r < kRounds; ++r) {
    state = splitmix64(state);
    auto key = static_cast<int64_t>(state % static_cast<uint64_t>(kPrime));
    x = (x + g.constant_int(key, DType::I64)) % p;
    x = ((x * x) % p) * x % p;
  }
  return x;
}

// Uniform in [0, 1) with `bits` random bits (exact in every float dtype).
Tensor uniform_bits(Graph& g, const std::vector<Expr>& shape, uint64_t seed, uint64_t stream,
                    int bits, const char* op) {
  if (bits <= 24) {
    Tensor h = hash_uniform(g, shape, seed, stream, op);
    Tensor low = h % g.constant_int(int64_t{1} << bits, DType::I64);
    return to(low, DType::F64) * std::ldexp(1.0, -bits);
  }
  // Two 24-bit draws for f64 (48 bits).
  Tensor hi = hash_uniform(g, shape, seed, stream, op) % g.constant_int(1 << 24, DType::I64);
  Tensor lo = hash_uniform(g, shape, seed, stream + 1000, op) % g.constant_int(1 << 24, DType::I64);
  return to(hi, DType::F64) * std::ldexp(1.0, -24) + to(lo, DType::F64) * std::ldexp(1.0, -48);
}

int significand_bits(DType d) {
  switch (d) {
    case DType::F16:
      return 11;
    case DType::BF16:
      return 8;
    case DType::F64:
      return 48;
    default:
      return 24;
  }
}

void require_random_float(DType d, const char* op) {
  if (!is_float(d) || !is_compute_type(d))
    throw DTypeError(std::string(op) + ": dtype must be a float type, got " + to_string(d));
}

}  // namespace

Tensor rand(Graph& graph, const std::vector<Expr>& shape, uint64_t seed, DType dtype) {
  require_random_float(dtype, "rand");
  return to(uniform_bits(graph, shape, seed, 0, significand_bits(dtype), "rand"), dtype);
}

Tensor randn(Graph& graph, const std::vector<Expr>& shape, uint64_t seed, DType dtype) {
  require_random_float(dtype, "randn");
  const double inv_p = 1.0 / static_cast<double>(kPrime);
  // u1 in (0, 1] (log is finite), u2 in [0, 1).
  Tensor u1 = (to(hash_uniform(graph, shape, seed, 1, "randn"), DType::F64) + 1.0) * inv_p;
  Tensor u2 = to(hash_uniform(graph, shape, seed, 2, "randn"), DType::F64) * inv_p;
  Tensor radius = (log(u1) * -2.0).sqrt();
  Tensor z = radius * cos(u2 * (2.0 * std::numbers::pi));
  return to(z, dtype);
}

Tensor randint(Graph& graph, int64_t low, int64_t high, const std::vector<Expr>& shape,
               uint64_t seed, DType dtype) {
  if (!is_int(dtype) && !is_float(dtype))
    throw DTypeError("randint: dtype must be an integer or float type, got " + to_string(dtype));
  require_creatable(dtype, "randint");
  if (high <= low)
    throw ShapeError("randint: high (" + std::to_string(high) + ") must be greater than low (" +
                     std::to_string(low) + ")");
  // h1 * p + h2 is uniform in [0, p^2) (p^2 < 2^62); reduce modulo the range.
  Tensor h1 = hash_uniform(graph, shape, seed, 3, "randint");
  Tensor h2 = hash_uniform(graph, shape, seed, 4, "randint");
  Tensor wide = h1 * graph.constant_int(kPrime, DType::I64) + h2;
  auto range = static_cast<int64_t>(static_cast<uint64_t>(high) - static_cast<uint64_t>(low));
  Tensor v = wide % graph.constant_int(range, DType::I64) + graph.constant_int(low, DType::I64);
  return to(v, dtype);
}

Tensor rand_like(const Tensor& x, uint64_t seed, std::optional<DType> dtype) {
  return rand(*x.graph(), x.shape(), seed, dtype.value_or(x.dtype()));
}

Tensor randn_like(const Tensor& x, uint64_t seed, std::optional<DType> dtype) {
  return randn(*x.graph(), x.shape(), seed, dtype.value_or(x.dtype()));
}

Tensor bernoulli(Graph& graph, const std::vector<Expr>& shape, double p, uint64_t seed) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error("bernoulli: p must be in [0, 1], got " + std::to_string(p));
  Tensor u = uniform_bits(graph, shape, seed, 5, 48, "bernoulli");
  return u.lt(graph.constant(p, DType::F64));
}

Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error("dropout: probability has to be between 0 and 1, but got " + std::to_string(p));
  if (!training || p == 0.0) return x;
  if (!is_float(x.dtype()))
    throw DTypeError("dropout: expects a float tensor, got " + x.describe());
  Tensor zero = scalar_tensor(*x.graph(), Scalar(0), x.dtype());
  if (p == 1.0) return mul(x, zero);
  Tensor drop = bernoulli(*x.graph(), x.shape(), p, seed);
  return where(drop, zero, mul(x, 1.0 / (1.0 - p)));
}

}  // namespace luminal
