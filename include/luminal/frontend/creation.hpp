#pragma once
// Tensor creation with PyTorch semantics: full / zeros / ones (and *_like),
// arange, linspace, eye, triangular masks and tril / triu, and seeded random
// tensors.
//
// Constant-filled tensors are a rank-0 Constant broadcast by a view (nothing is
// materialised). Index-shaped tensors (arange, eye, masks) are one Iota whose
// element expression computes the value from the flat index, so they work for
// symbolic sizes too.
//
// Random tensors are computed in the graph from a counter-based hash of the
// flat element index and the seed (there is no host-side constant tensor): a
// MiMC-style permutation of Z/pZ (p = 2147483579, a prime with p = 2 (mod 3)
// so that cubing is a bijection), eight rounds of `x = (x + k_r)^3 mod p` with
// round keys k_r derived from the seed on the host (splitmix64), using only
// exact i64 Add / Mul / Mod. Results are therefore identical on every backend
// for the uniform integers, deterministic per seed, and the same seed gives the
// same values on every call (unlike torch's stateful generator; they are not
// torch's values). Element counts must stay below p.

#include <cstdint>
#include <optional>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

// ---- constant fills -------------------------------------------------------

/// torch.full: `value` broadcast to `shape`. The dtype defaults to the scalar's
/// own (bool -> bool, int -> i64, float -> f32), as torch.full.
Tensor full(Graph& graph, const std::vector<Expr>& shape, Scalar value,
            std::optional<DType> dtype = std::nullopt);
Tensor zeros(Graph& graph, const std::vector<Expr>& shape, DType dtype = kDefaultFloat);
Tensor ones(Graph& graph, const std::vector<Expr>& shape, DType dtype = kDefaultFloat);
/// *_like: x's shape and (unless given) dtype.
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype = std::nullopt);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);

// ---- ranges ----------------------------------------------------------------

/// torch.arange(end): 0, 1, ..., end - 1 for an integer (possibly symbolic) end.
/// Default dtype i64 as torch.
Tensor arange(Graph& graph, const Expr& end, DType dtype = kDefaultInt);
/// torch.arange(start, end, step): length ceil((end - start) / step), element i =
/// start + i * step (computed in f64 and rounded once, as torch's CPU kernel).
/// The dtype defaults to i64 if all three are integers, else f32. Throws
/// ShapeError for step == 0 or a step whose sign does not lead from start to end.
Tensor arange(Graph& graph, Scalar start, Scalar end, Scalar step = 1,
              std::optional<DType> dtype = std::nullopt);
/// torch.linspace(start, end, steps): torch's symmetric formula (the first half
/// counts up from start, the second half down from end), default f32.
Tensor linspace(Graph& graph, double start, double end, int64_t steps, DType dtype = kDefaultFloat);
/// torch.logspace: base ** linspace(start, end, steps).
Tensor logspace(Graph& graph, double start, double end, int64_t steps, double base = 10.0,
                DType dtype = kDefaultFloat);

// ---- matrices and masks ----------------------------------------------------

/// torch.eye(n, m): ones on the main diagonal. `m` defaults to `n`. Symbolic sizes allowed.
Tensor eye(Graph& graph, const Expr& n, std::optional<Expr> m = std::nullopt,
           DType dtype = kDefaultFloat);
/// Bool [rows, cols] mask, true where col - row <= diagonal (the part tril keeps).
Tensor tril_mask(Graph& graph, const Expr& rows, const Expr& cols, int64_t diagonal = 0);
/// Bool [rows, cols] mask, true where col - row >= diagonal (the part triu keeps).
Tensor triu_mask(Graph& graph, const Expr& rows, const Expr& cols, int64_t diagonal = 0);
/// torch.tril / torch.triu over the last two axes (rank >= 2); the other
/// elements become 0. Exact for inf / nan (selection, not multiplication).
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// ---- random (seeded, deterministic; see the header comment) -----------------

/// Uniform in [0, 1): the hash's low m bits scaled by 2^-m where m is the
/// dtype's significand width (24 for f32, 11 for f16, 8 for bf16, 48 for f64),
/// so every value is exactly representable and 1.0 never occurs.
Tensor rand(Graph& graph, const std::vector<Expr>& shape, uint64_t seed,
            DType dtype = kDefaultFloat);
/// Standard normal (Box-Muller on two independent uniforms, computed in f64).
Tensor randn(Graph& graph, const std::vector<Expr>& shape, uint64_t seed,
             DType dtype = kDefaultFloat);
/// Integers uniform in [low, high) (throws ShapeError if high <= low).
Tensor randint(Graph& graph, int64_t low, int64_t high, const std::vector<Expr>& shape,
               uint64_t seed, DType dtype = kDefaultInt);
Tensor rand_like(const Tensor& x, uint64_t seed, std::optional<DType> dtype = std::nullopt);
Tensor randn_like(const Tensor& x, uint64_t seed, std::optional<DType> dtype = std::nullopt);
/// Bool tensor, true with probability p (a uniform < p), as torch.bernoulli's mask.
Tensor bernoulli(Graph& graph, const std::vector<Expr>& shape, double p, uint64_t seed);
/// F.dropout: training=false (inference) returns x; training=true zeroes
/// elements with probability p and scales the rest by 1 / (1 - p).
Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed);

}  // namespace luminal
