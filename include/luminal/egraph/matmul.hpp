#pragma once
// MatMul: the core's "library op" for a (batched) matrix product, recognised
// from the HLIR form SumReduce(K) of Mul(View(va)(a), View(vb)(b)) whatever
// the operand layouts, so that backends match GEMM / BLAS / cuBLAS calls on
// one node instead of on every way a user can write a matmul.
//
//   C[b..., i, j] = sum_{k = 0 .. K-1} A(b..., i, k) * B(b..., k, j)
//   A(b..., i, k) = a_dense[a_offset + sum_d b_d * a_batch_strides[d] + i * a_m_stride + k *
//   a_k_stride] B(b..., k, j) = b_dense[b_offset + sum_d b_d * b_batch_strides[d] + k * b_k_stride
//   + j * b_n_stride]
//
// with a_dense / b_dense the dense row-major buffers of the two children. C
// is dense row-major [batch..., m, n], which is the e-class' tensor (shape
// `out_shape`, same element count and order). Its exact semantics are the
// HLIR it replaces: products rounded to the dtype, summed over k in
// increasing order, rounded once (lower_matmul rebuilds exactly that).
//
// The recognised form is canonical: size-1 axes dropped; adjacent M axes
// (axes where b is broadcast) merged when A's strides line up, so a linear
// layer over [batch, seq, hidden] becomes ONE [batch*seq, hidden] GEMM;
// adjacent N axes and batch axes merged likewise; outer M axes that do not
// merge become batch axes with b_batch_stride 0; an output laid out
// [batch, N, M] is recognised with the operands swapped (C = B^T A^T).

#include <optional>
#include <span>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/egraph/op_registry.hpp"
#include "luminal/egraph/payload.hpp"

namespace luminal::egraph {

enum class MatLayout {
  RowMajor,  // the inner (second) index has stride 1: A[m][k], B[k][n]
  ColMajor,  // the outer (first) index has stride 1: a transposed operand
  Strided,   // neither (GEMM with copies, or a generic kernel)
};

struct MatMulSpec {
  Shape batch;
  Expr m = 1, n = 1, k = 1;
  Shape a_batch_strides;
  Expr a_m_stride = 0, a_k_stride = 0, a_offset = 0;
  Shape b_batch_strides;
  Expr b_k_stride = 0, b_n_stride = 0, b_offset = 0;
  Shape out_shape;  // the e-class' shape (the dense C reinterpreted)

  Payload to_payload() const;
  /// Throws luminal::Error if the payload is not a MatMul payload.
  static MatMulSpec from_payload(const Payload& p);

  /// Layout of A as an m x k matrix / of B as a k x n matrix.
  MatLayout a_layout() const;
  MatLayout b_layout() const;
  /// Leading dimension (the stride of the non-unit index) for RowMajor/ColMajor.
  Expr lda() const;
  Expr ldb() const;
  /// Product of the batch sizes.
  Expr batch_count() const;
  bool operator==(const MatMulSpec&) const = default;
  std::string to_string() const;
};

/// Result of recognising a matmul: the spec and whether the operands were
/// swapped (child 0 of the MatMul is then the Mul's second operand).
struct MatMulMatch {
  MatMulSpec spec;
  bool swapped = false;
};

/// Recognise `SumReduce(axis)(Mul(View(va)(a), View(vb)(b)))`, where the Mul
/// has shape `mul_shape` and `out_shape` is the SumReduce's shape. nullopt
/// when the views are not a matrix product (non-affine axes, an operand not
/// broadcast where it must be, output axes in an order GEMM cannot write).
std::optional<MatMulMatch> recognize_matmul(const Shape& mul_shape, size_t axis, const View& va,
                                            const View& vb);

/// The op info registered as `MatMul` (infer + lowering to HLIR).
OpInfo matmul_op_info();

/// Rebuild a MatMul from HLIR: Mul of the two operands read through the
/// spec's strides, SumReduce over k, then the dense result as `out_shape`.
Tensor lower_matmul(Graph& graph, const MatMulSpec& spec, const Tensor& a, const Tensor& b);

}  // namespace luminal::egraph
