#include "spatial.hpp"

#include "luminal/error.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/movement.hpp"

namespace luminal::detail {

Batched batch_input(const Tensor& x, size_t nsp, const std::string& op) {
  if (x.rank() == nsp + 2) return {x, false};
  if (x.rank() == nsp + 1) return {x.unsqueeze(0), true};
  throw ShapeError(op + ": expected a " + std::to_string(nsp + 1) + "-D (unbatched) or " +
                   std::to_string(nsp + 2) + "-D (batched) input, got " + x.describe());
}

std::optional<int64_t> const_of(const Expr& e) {
  return e.simplify().as_const();
}

Tensor sliding_windows(const Tensor& x, size_t nsp, const std::vector<Expr>& kernel,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  const size_t lead = x.rank() - nsp;
  Tensor w = x;
  // unfold appends each window axis at the end and keeps the spatial axis in
  // place (now counting windows); a stepped slice of the appended axis picks
  // every dilation-th element of a window of span dilation * (k - 1) + 1.
  for (size_t i = 0; i < nsp; ++i) {
    const Expr span = (Expr(dilation[i]) * (kernel[i] - 1) + 1).simplify();
    w = unfold(w, static_cast<int>(lead + i), span, stride[i]);
    if (dilation[i] != 1) w = w.slice(-1, 0, span, dilation[i]);
  }
  return w;
}

Tensor merge_axes(const Tensor& x, size_t start, size_t count) {
  View v = x.view();
  if (count == 0) {
    v = v.unsqueeze(static_cast<int>(start));
  } else {
    for (size_t k = 1; k < count; ++k) v = v.merge(static_cast<int>(start));
  }
  return Tensor(x.graph(), x.node(), std::move(v), x.dtype());
}

Tensor embed_spatial(const Tensor& x, size_t nsp, const std::vector<Expr>& lo,
                     const std::vector<Expr>& hi, const std::vector<int64_t>& step, double value) {
  const size_t lead = x.rank() - nsp;
  std::vector<Expr> shape = x.shape();
  for (size_t i = 0; i < nsp; ++i) {
    const Expr s = x.shape()[lead + i];
    shape[lead + i] = (lo[i] + (s - 1) * Expr(step[i]) + 1 + hi[i]).simplify();
  }
  const std::vector<Expr> strides = row_major_strides(shape);
  Tensor idx = coordinate_iota(*x.graph(), x.shape(), [&](const std::vector<Expr>& c) {
    Expr flat = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      Expr pos = d < lead ? c[d] : lo[d - lead] + c[d] * Expr(step[d - lead]);
      flat = flat + pos * strides[d];
    }
    return flat;
  });
  return x.graph()->constant(value, x.dtype()).expand(shape).scatter(idx, x);
}

}  // namespace luminal::detail
