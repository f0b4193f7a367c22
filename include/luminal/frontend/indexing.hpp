#pragma once
// Indexing with PyTorch semantics: gather / take_along_dim / index_select /
// embedding read through the Gather primitive; scatter / index_copy /
// index_put write through the Scatter primitive; the
// accumulating forms (scatter_add, index_add, index_put(accumulate)) use an
// exact one-hot sum.
//
// Construction:
// - Reads: the logical flat index into x is `index * stride(dim) + rest`, where
//   `rest` is one Iota over the result's elements giving the offset of the other
//   coordinates; one Gather reads x through its view.
// - Writes: the same flat index computed for every source element, one Scatter
//   into x (read through its view, written densely). Duplicate destinations: the
//   last source element in row-major order wins (torch leaves this undefined).
//   Out-of-range indexes are skipped by Scatter; Gather reports them at run time
//   (IndexError from the interpreter).
// - Accumulation: neg[.., j, ..] = sum_k (index[.., k, ..] == j ? -src : 0) (one-hot
//   compare + exact selection, no 0 * inf), then out = x - neg. x - (+0.0) == x
//   bit for bit (untouched elements keep -0.0, which x + 0.0 would not) and
//   x - sum(-src) == x + sum(src) exactly. Costs O(index_len * dim_len) per
//   position: meant for moderate sizes (MoE routing, small vocabularies).
// - masked_fill (exact selection, like where) is F1's, in elementwise.hpp,
//   which this header includes so `masked_fill` is found from here too.
//
// Index tensors must be i32 or i64 (torch uses int64). Functions that document
// negative-index wrapping (take, index) add the dim size to negative entries;
// the others follow torch and treat negative indexes as invalid.

#include <functional>
#include <optional>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/frontend/elementwise.hpp"  // masked_fill
#include "luminal/shape/expr.hpp"

namespace luminal {

// ---- building block ------------------------------------------------------------

/// An i64 tensor of `shape` whose element at coordinates c is `f(c)`, built as
/// ONE Iota over the flat index z: f receives the per-axis coordinates as
/// Exprs of z (`(z / stride_d) % size_d`) and returns the element's Expr. This
/// is how the ops here (and conv/pool/pad) compute flat Gather / Scatter
/// positions with straight-line index math instead of chains of tensor ops.
Tensor coordinate_iota(Graph& g, const std::vector<Expr>& shape,
                       const std::function<Expr(const std::vector<Expr>& coords)>& f);

// ---- reads -------------------------------------------------------------------

/// torch.gather(x, dim, index): out[i][j][k] = x[index[i][j][k]][j][k] (dim 0).
/// index has x's rank; index.size(d) <= x.size(d) for d != dim; out has index's shape.
Tensor gather(const Tensor& x, int dim, const Tensor& index);
/// torch.take_along_dim(x, indices, dim): like gather, but x and indices broadcast
/// against each other on every dim except `dim`. dim = nullopt: both flattened.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int> dim);
/// torch.index_select(x, dim, index): index is 1-D (or rank 0); the result has
/// x's rank with dim of size len(index).
Tensor index_select(const Tensor& x, int dim, const Tensor& index);
/// Advanced indexing along one dim, x[:, ..., idx] with idx of any shape:
/// result shape x.shape[:dim] + idx.shape + x.shape[dim+1:]. Negative indexes
/// wrap (idx + size). This is what Python's `x[idx_tensor]` uses.
Tensor index(const Tensor& x, int dim, const Tensor& idx);
/// torch.take(x, index): x flattened, negative indexes wrap; result has index's shape.
Tensor take(const Tensor& x, const Tensor& index);
/// F.embedding(input, weight): weight [num, dim]; result input.shape + [dim].
/// (padding_idx only affects gradients in torch, so it does not exist here.)
Tensor embedding(const Tensor& input, const Tensor& weight);

// ---- writes ------------------------------------------------------------------

/// torch.scatter(x, dim, index, src): out = x; out[index[i][j][k]][j][k] = src[i][j][k]
/// (dim 0) for every position of index (src may be larger than index; only the
/// index-shaped corner is used). src is cast to x's dtype.
Tensor scatter(const Tensor& x, int dim, const Tensor& index, const Tensor& src);
/// torch.scatter(x, dim, index, value): scatter a scalar.
Tensor scatter(const Tensor& x, int dim, const Tensor& index, double value);
/// torch.scatter_add(x, dim, index, src): duplicates accumulate (exact one-hot sum).
Tensor scatter_add(const Tensor& x, int dim, const Tensor& index, const Tensor& src);
/// torch.index_copy(x, dim, index, src): out[..., index[i], ...] = src[..., i, ...];
/// index is 1-D with len == src.size(dim); src has x's shape except on dim.
/// This is the KV-cache update: cache.index_copy(seq_dim, positions, new_kv).
Tensor index_copy(const Tensor& x, int dim, const Tensor& index, const Tensor& src);
/// torch.index_add(x, dim, index, src, alpha): out[..., index[i], ...] += alpha * src[..., i, ...].
Tensor index_add(const Tensor& x, int dim, const Tensor& index, const Tensor& src,
                 double alpha = 1.0);
/// torch.index_fill(x, dim, index, value).
Tensor index_fill(const Tensor& x, int dim, const Tensor& index, double value);
/// torch.index_put(x, indices, values, accumulate): indices are the index
/// tensors of the LEADING dims of x (nullopt = the whole dim, only allowed
/// after the last index tensor, i.e. as a trailing full slice); index tensors
/// broadcast together to shape B, values broadcast to B + x.shape[len(indices):].
/// Negative indexes wrap. accumulate = true sums duplicates (exact one-hot sum).
Tensor index_put(const Tensor& x, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false);
}  // namespace luminal
