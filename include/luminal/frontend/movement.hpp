#pragma once
// Shape and movement ops with PyTorch names and semantics (torch.reshape,
// torch.cat, F.pad, torch.roll ...). Negative dims count from the end.
//
// How they are built (no new primitives):
// - views only (free): reshape/view of expressible layouts, flatten, unflatten,
//   permute, transpose, movedim, (un)squeeze, expand, repeat, tile,
//   repeat_interleave (unsqueeze + expand + merge), narrow, slice, select,
//   split/chunk/unbind, flip, rot90, roll (axis expression e((z + n - s) % n)),
//   diagonal (one axis reading e1(z + r1) + e2(z + r2)), unfold (affine axes).
// - Scatter chains: cat writes each input into a broadcast zero buffer of the
//   output shape with one Scatter per input; the Scatter indexes are a single
//   Iota over the input's elements whose expression is the output flat offset
//   (straight-line index math: `(z / inner) * out_stride + offset + z % inner`).
//   stack = cat of unsqueezed inputs. Constant pad scatters the (cropped) input
//   into a broadcast fill value the same way (exact for any value incl. -inf,
//   nan, -0.0: nothing is multiplied); diag_embed scatters into zeros.
// - Iota + Gather: reflect / replicate / circular pad read the input at a
//   computed logical flat index (one Iota over the output's elements, one Gather).
//
// Sizes are Exprs (symbolic dims allowed). Ops whose number of results depends
// on a size (split, chunk, unbind) need that size to be a constant and throw
// ShapeError otherwise. Python-style negative starts/indexes need constants
// unless the dim itself is constant.

#include <cstdint>
#include <optional>
#include <vector>

#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

// ---- reshaping ---------------------------------------------------------------

/// torch.reshape: one entry may be -1 (inferred from numel). Copies only when
/// the current view cannot express the new shape.
Tensor reshape(const Tensor& x, const std::vector<Expr>& shape);
/// Tensor.view: same as reshape (luminal has no aliasing, so view never fails
/// where reshape succeeds).
Tensor view(const Tensor& x, const std::vector<Expr>& shape);
/// Tensor.reshape_as / view_as.
Tensor reshape_as(const Tensor& x, const Tensor& other);
/// torch.flatten: merge dims start_dim..end_dim (rank 0 -> [1]).
Tensor flatten(const Tensor& x, int start_dim = 0, int end_dim = -1);
/// torch.ravel: flatten to 1-D.
Tensor ravel(const Tensor& x);
/// torch.unflatten: split `dim` into `sizes` (one entry may be -1).
Tensor unflatten(const Tensor& x, int dim, const std::vector<Expr>& sizes);

// ---- axis order ----------------------------------------------------------------

/// torch.permute.
Tensor permute(const Tensor& x, const std::vector<int>& dims);
/// torch.transpose / swapaxes / swapdims.
Tensor transpose(const Tensor& x, int dim0, int dim1);
Tensor swapaxes(const Tensor& x, int dim0, int dim1);
Tensor swapdims(const Tensor& x, int dim0, int dim1);
/// torch.t: transpose of a rank <= 2 tensor (rank 0 and 1 unchanged).
Tensor t(const Tensor& x);
/// Tensor.mT: transpose of the last two dims (rank >= 2).
Tensor mT(const Tensor& x);  // NOLINT(readability-identifier-naming): torch's name
/// torch.movedim / moveaxis.
Tensor movedim(const Tensor& x, int source, int destination);
Tensor movedim(const Tensor& x, const std::vector<int>& source,
               const std::vector<int>& destination);
Tensor moveaxis(const Tensor& x, const std::vector<int>& source,
                const std::vector<int>& destination);

// ---- size-1 axes and broadcasting -----------------------------------------------

/// torch.unsqueeze (dim in [-rank-1, rank]).
Tensor unsqueeze(const Tensor& x, int dim);
/// torch.squeeze(): remove every axis of constant size 1.
Tensor squeeze(const Tensor& x);
/// torch.squeeze(dim): remove `dim` if its size is 1, otherwise unchanged (as torch).
Tensor squeeze(const Tensor& x, int dim);
/// torch.squeeze(dims): the same for each listed dim.
Tensor squeeze(const Tensor& x, const std::vector<int>& dims);
/// Tensor.expand: -1 keeps a size; new leading dims may be prepended.
Tensor expand(const Tensor& x, const std::vector<Expr>& sizes);
/// Tensor.expand_as.
Tensor expand_as(const Tensor& x, const Tensor& other);
/// torch.broadcast_to (same as expand).
Tensor broadcast_to(const Tensor& x, const std::vector<Expr>& shape);
/// torch.broadcast_tensors.
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& xs);
/// torch.atleast_1d / 2d / 3d.
Tensor atleast_1d(const Tensor& x);
Tensor atleast_2d(const Tensor& x);
Tensor atleast_3d(const Tensor& x);

// ---- repetition ---------------------------------------------------------------------

/// Tensor.repeat: tile each dim `repeats[i]` times; len(repeats) >= rank (leading
/// dims are prepended).
Tensor repeat(const Tensor& x, const std::vector<Expr>& repeats);
/// torch.tile: like repeat, but fewer repeats than dims are padded with 1 on the left.
Tensor tile(const Tensor& x, const std::vector<Expr>& reps);
/// torch.repeat_interleave with a scalar count: each element repeated `repeats`
/// times along `dim` (dim = nullopt flattens first, as torch).
Tensor repeat_interleave(const Tensor& x, const Expr& repeats,
                         std::optional<int> dim = std::nullopt);

// ---- slicing ---------------------------------------------------------------------------

/// torch.narrow: elements [start, start + length) of `dim`; a negative constant
/// start counts from the end.
Tensor narrow(const Tensor& x, int dim, const Expr& start, const Expr& length);
/// Python slice x[..., start:stop:step, ...] on `dim`: nullopt = omitted, negative
/// constants count from the end, out-of-range bounds clamp (result may be empty).
/// step must be >= 1 (as torch). Symbolic bounds are clamped with min/max.
Tensor slice(const Tensor& x, int dim, const std::optional<Expr>& start,
             const std::optional<Expr>& stop, int64_t step = 1);
/// torch.select / x[..., index, ...]: removes `dim`; a negative constant index
/// counts from the end; an out-of-range constant index throws IndexError.
Tensor select(const Tensor& x, int dim, const Expr& index);
/// Tensor.unfold(dim, size, step): sliding windows of `size` along `dim` with
/// stride `step`, appended as a new last axis: [..., (n - size) / step + 1, ..., size].
/// A view for affine layouts (copies first otherwise).
Tensor unfold(const Tensor& x, int dim, const Expr& size, int64_t step);

// ---- joining and splitting -------------------------------------------------------

/// torch.cat / concat / concatenate: all inputs have equal rank and dtype and
/// equal sizes except on `dim`. (As torch, 1-D empty [0] tensors are skipped.)
Tensor cat(const std::vector<Tensor>& xs, int dim = 0);
Tensor concat(const std::vector<Tensor>& xs, int dim = 0);
Tensor concatenate(const std::vector<Tensor>& xs, int dim = 0);
/// torch.stack: equal shapes, new axis at `dim`.
Tensor stack(const std::vector<Tensor>& xs, int dim = 0);
/// torch.hstack / vstack / dstack / column_stack.
Tensor hstack(const std::vector<Tensor>& xs);
Tensor vstack(const std::vector<Tensor>& xs);
Tensor dstack(const std::vector<Tensor>& xs);
Tensor column_stack(const std::vector<Tensor>& xs);
/// torch.split(x, split_size, dim): pieces of `split_size` (last one smaller).
std::vector<Tensor> split(const Tensor& x, const Expr& split_size, int dim = 0);
/// torch.split(x, [sizes...], dim) / split_with_sizes: sizes must sum to the dim.
std::vector<Tensor> split(const Tensor& x, const std::vector<Expr>& sizes, int dim = 0);
/// torch.chunk: ceil(n / chunks)-sized pieces (may return fewer than `chunks`).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int dim = 0);
/// torch.tensor_split(x, sections, dim): `sections` pieces, the first n % sections
/// one element longer.
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int dim = 0);
/// torch.unbind: the slices along `dim`, each without it.
std::vector<Tensor> unbind(const Tensor& x, int dim = 0);

// ---- padding, flipping, rolling ---------------------------------------------------

enum class PadMode { Constant, Reflect, Replicate, Circular };
/// F.pad: `pad` lists (before, after) pairs starting from the LAST dim, as torch.
/// Constant mode fills with `value` (any double incl. -inf/nan; cast to x's
/// dtype) and accepts negative pads (crop). Reflect needs pad < size, replicate
/// and circular pad <= size (circular: as torch); those modes need pads >= 0.
Tensor pad(const Tensor& x, const std::vector<Expr>& pad, PadMode mode = PadMode::Constant,
           double value = 0.0);
/// torch.flip over several dims.
Tensor flip(const Tensor& x, const std::vector<int>& dims);
/// torch.fliplr / flipud.
Tensor fliplr(const Tensor& x);
Tensor flipud(const Tensor& x);
/// torch.roll: shift elements along `dims` by `shifts` (wrapping). With empty
/// dims, rolls the flattened tensor by shifts[0] and restores the shape.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int>& dims = {});
/// torch.rot90(x, k, dims).
Tensor rot90(const Tensor& x, int64_t k = 1, const std::vector<int>& dims = {0, 1});

// ---- diagonals ---------------------------------------------------------------------

/// torch.diagonal: the diagonal of dims (dim1, dim2) shifted by `offset`,
/// appended as the last axis.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int dim1 = 0, int dim2 = 1);
/// torch.diag_embed: last dim becomes the diagonal of new dims (dim1, dim2); zeros elsewhere.
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int dim1 = -2, int dim2 = -1);
/// torch.diag: 1-D -> 2-D diagonal matrix; 2-D -> its diagonal.
Tensor diag(const Tensor& x, int64_t offset = 0);
/// torch.trace: sum of the main diagonal of a 2-D tensor.
Tensor trace(const Tensor& x);

// ---- copies --------------------------------------------------------------------------

/// Tensor.contiguous: a dense row-major copy (Mul by one; exact for every value).
Tensor contiguous(const Tensor& x);
/// torch.clone: same as contiguous (graph values are immutable).
Tensor clone(const Tensor& x);

}  // namespace luminal
