#pragma once
// Facts about views that rules test (strides, broadcast axes, contiguity) and
// the composition of two views.
//
// All predicates are conservative: they answer true only when the simplifier
// proves the fact for every value of the dims, so a rule guarded by them is
// sound for symbolic shapes.

#include <optional>
#include <utility>

#include "luminal/shape/expr.hpp"
#include "luminal/shape/view.hpp"

namespace luminal::egraph {

/// An axis whose expression is `stride * z + offset` over its whole range.
struct AffineAxis {
  Expr stride;
  Expr offset;
};

/// The affine form of axis `axis` of `v`, if it has one (a size-1 axis is
/// affine with stride 0 whatever its expression).
std::optional<AffineAxis> affine_axis(const View& v, size_t axis);
/// The stride of an affine axis.
std::optional<Expr> axis_stride(const View& v, size_t axis);
/// Every index of the axis reads the same element (stride provably 0).
bool is_broadcast_axis(const View& v, size_t axis);
/// The innermost axis is affine with stride 1 (vectorisable loads).
bool inner_axis_contiguous(const View& v);
/// `v` is the dense row-major view of `shape` (an identity read).
bool is_identity_view(const View& v, const std::vector<Expr>& shape);
/// Every axis is broadcast and the offset is zero: reads element 0 everywhere.
bool is_pure_broadcast(const View& v);
/// Every axis of size other than 1 is affine with a non-zero stride (a
/// permute / slice / flip / unsqueeze: no element is read twice along an axis).
bool reads_each_once(const View& v);

/// Composition of views. `inner` reads tensor x to form tensor A (of shape
/// inner.shape()); `outer` reads A's dense row-major materialisation. The
/// result reads x's dense buffer directly, so that for every index j of outer:
///
///     View(compose(outer, inner))(x)[j] == View(outer)(View(inner)(x))[j]
///
/// Exact when `inner` is contiguous, or when every axis of `outer` is affine
/// and lands on a distinct axis of A with provably in-range indexes (permute,
/// expand, slice, flip, unsqueeze of A). nullopt otherwise (for example a
/// reshape of A that merges axes of a permuted x): the caller then keeps the
/// two reads, or materialises A.
std::optional<View> compose_views(const View& outer, const View& inner);

}  // namespace luminal::egraph
