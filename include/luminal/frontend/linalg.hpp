#pragma once
// Linear algebra with PyTorch semantics: matmul and its special cases, linear,
// addmm/baddbmm, einsum and tensordot. Everything is a broadcast Mul followed by
// SumReduce; no op here adds a primitive.
//
// Canonical matmul form (the compiler's GEMM recognition matches exactly this):
//
//     out[..., m, n] = SumReduce(axis = -1)( A[..., m, 1, k] * B^T[..., 1, n, k] )
//
// i.e. `a.unsqueeze(-2)` broadcast to [..., M, N, K] times `b.mT.unsqueeze(-3)`
// broadcast to [..., M, N, K], reduced over the LAST axis (K). Both operands are
// read through views (no copies); with row-major A and B the reduced axis is
// contiguous in A and strided by N in B. Batch dims broadcast as in torch.matmul.
// einsum and tensordot build the same form: output labels first (in output
// order), contracted labels last, one SumReduce per contracted label from the
// last axis backwards.
//
// Dtypes: operands must have the same dtype (as torch; no implicit promotion
// for matmul-like ops): float and integer dtypes are accepted, bool throws
// DTypeError. The reference interpreter accumulates in double (floats) or
// wrapping int64 (ints).

#include <optional>
#include <string>
#include <vector>

#include "luminal/core/tensor.hpp"

namespace luminal {

/// torch.matmul: 1-D x 1-D is a dot product (rank 0); a 1-D first operand is
/// treated as [1, K] and the 1 removed afterwards; a 1-D second operand as
/// [K, 1] likewise; N-D operands broadcast their batch dims (all but the last
/// two). Throws ShapeError naming both shapes when K differs or batch dims do
/// not broadcast, ShapeError for rank-0 operands, DTypeError for mixed dtypes.
Tensor matmul(const Tensor& a, const Tensor& b);
/// torch.mm: [M, K] x [K, N] (both exactly 2-D, no broadcasting).
Tensor mm(const Tensor& a, const Tensor& b);
/// torch.bmm: [B, M, K] x [B, K, N] (both exactly 3-D, equal batch).
Tensor bmm(const Tensor& a, const Tensor& b);
/// torch.mv: [M, K] x [K] -> [M].
Tensor mv(const Tensor& a, const Tensor& v);
/// torch.dot: [K] . [K] -> rank 0.
Tensor dot(const Tensor& a, const Tensor& b);
/// torch.inner: sum over the last axis of both; out shape a.shape[:-1] + b.shape[:-1].
Tensor inner(const Tensor& a, const Tensor& b);
/// torch.outer (torch.ger): [N] x [M] -> [N, M].
Tensor outer(const Tensor& a, const Tensor& b);

/// F.linear: x @ weight^T + bias, weight is [out_features, in_features] as in
/// torch, bias (optional) is [out_features]. x may have any rank >= 1.
Tensor linear(const Tensor& x, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);
/// F.bilinear: out[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o].
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const std::optional<Tensor>& bias = std::nullopt);

/// torch.addmm: beta * input + alpha * (m1 @ m2); input broadcasts to [M, N].
/// As in torch, beta == 0 ignores `input` entirely (nan/inf in it do not propagate).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta = 1.0,
             double alpha = 1.0);
/// torch.addmv: beta * input + alpha * (mat @ vec).
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta = 1.0,
             double alpha = 1.0);
/// torch.baddbmm: beta * input + alpha * bmm(b1, b2); input broadcasts to [B, M, N].
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta = 1.0,
               double alpha = 1.0);
/// torch.addbmm: beta * input + alpha * sum_b bmm(b1, b2)[b]; input broadcasts to [M, N].
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta = 1.0,
              double alpha = 1.0);

/// torch.einsum. Equation grammar as torch: comma-separated operand subscripts
/// of letters [a-zA-Z], optional "..." (once per operand; broadcast dims), optional
/// "->" with output subscripts (implicit output: labels appearing exactly once,
/// sorted alphabetically, preceded by "..." dims). Labels of equal letter must
/// have equal (or size-1, broadcast) sizes. A label repeated inside one operand
/// takes that operand's diagonal ("ii->i", "ii->" = trace). Operands are
/// contracted left to right; after each pair, labels needed by neither the
/// remaining operands nor the output are summed away.
/// Throws ShapeError on a malformed equation or mismatched sizes.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

/// torch.tensordot(a, b, dims=n): contract the last n axes of a with the first n of b.
Tensor tensordot(const Tensor& a, const Tensor& b, int dims = 2);
/// torch.tensordot(a, b, dims=(dims_a, dims_b)): contract the listed axes pairwise.
Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int>& dims_a,
                 const std::vector<int>& dims_b);

}  // namespace luminal
