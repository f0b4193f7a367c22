// View facts and view composition. compose_views is checked by brute force:
// for every index of the outer view, the composed view must read the same
// element of x as reading through the inner view, materialising, and reading
// through the outer view — computed here with View::offset_at only.
#include "luminal/egraph/view_algebra.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace luminal;
using namespace luminal::egraph;

namespace {

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Element of x read by View(outer)(View(inner)(x)) at every outer index.
std::vector<int64_t> reference_reads(const View& outer, const View& inner, const DimMap& dims) {
  const std::vector<int64_t> os = outer.concrete_shape(dims), is = inner.concrete_shape(dims);
  std::vector<int64_t> out;
  for (int64_t j = 0; j < numel(os); ++j) {
    const int64_t f = outer.offset_at(unflatten(j, os), dims);  // flat index into A
    out.push_back(inner.offset_at(unflatten(f, is), dims));
  }
  return out;
}

std::vector<int64_t> direct_reads(const View& v, const DimMap& dims) {
  const std::vector<int64_t> s = v.concrete_shape(dims);
  std::vector<int64_t> out;
  for (int64_t j = 0; j < numel(s); ++j) out.push_back(v.offset_at(unflatten(j, s), dims));
  return out;
}

// A random movement op applied to v (keeping every size small and >= 1).
View random_move(const View& v, std::mt19937_64& rng) {
  const int r = static_cast<int>(v.rank());
  const int axis = r ? static_cast<int>(rng() % static_cast<uint64_t>(r)) : 0;
  switch (rng() % 7) {
    case 0: {
      std::vector<int> order(static_cast<size_t>(r));
      for (int i = 0; i < r; ++i) order[static_cast<size_t>(i)] = i;
      std::shuffle(order.begin(), order.end(), rng);
      return v.permute(order);
    }
    case 1: {
      const int64_t n = v.shape()[static_cast<size_t>(axis)].value();
      if (n < 2) return v;
      const int64_t start = static_cast<int64_t>(rng() % 2);
      return v.slice(axis, start, n, 1 + static_cast<int64_t>(rng() % 2));
    }
    case 2:
      return r ? v.flip(axis) : v;
    case 3:
      return v.unsqueeze(axis).expand(axis, 1 + static_cast<int64_t>(rng() % 3));
    case 4:
      if (r >= 2 && axis + 1 < r) return v.merge(axis);
      return v;
    case 5: {
      const int64_t n = v.shape()[static_cast<size_t>(axis)].value();
      for (int64_t inner : {2, 3})
        if (n % inner == 0 && n > inner)
          if (auto s = v.split(axis, inner)) return *s;
      return v;
    }
    default:
      return r && v.shape()[static_cast<size_t>(axis)].value() <= 3 ? v.repeat(axis, 2) : v;
  }
}

}  // namespace

TEST(ViewAlgebra, AxisFacts) {
  const View v = View::contiguous({4, 1, 6}).permute({2, 1, 0}).expand(1, 5);  // [6, 5, 4]
  ASSERT_TRUE(affine_axis(v, 0).has_value());
  EXPECT_EQ(affine_axis(v, 0)->stride, Expr(1));
  EXPECT_EQ(affine_axis(v, 2)->stride, Expr(6));
  EXPECT_TRUE(is_broadcast_axis(v, 1));
  EXPECT_FALSE(is_broadcast_axis(v, 0));
  EXPECT_FALSE(inner_axis_contiguous(v));
  EXPECT_TRUE(inner_axis_contiguous(View::contiguous({3, 4})));
  EXPECT_FALSE(reads_each_once(v));
  EXPECT_TRUE(reads_each_once(View::contiguous({4, 6}).permute({1, 0}).flip(0)));
  const View sliced = View::contiguous({8, 8}).slice(0, 2, 6);
  EXPECT_EQ(affine_axis(sliced, 0)->offset, Expr(16));
  // A merged permuted axis is not affine.
  const View merged = View::contiguous({4, 6}).permute({1, 0}).merge(0);
  EXPECT_FALSE(affine_axis(merged, 0).has_value());
  EXPECT_TRUE(is_identity_view(View::contiguous({"s", 4}), {"s", 4}));
  EXPECT_FALSE(is_identity_view(View::contiguous({"s", 4}), {4, "s"}));
  EXPECT_TRUE(is_pure_broadcast(View::from_axes({3, 4}, {0, 0})));
  // Symbolic strides.
  const View sym = View::contiguous({"s", "d"}).permute({1, 0});
  EXPECT_EQ(affine_axis(sym, 0)->stride, Expr(1));
  EXPECT_EQ(affine_axis(sym, 1)->stride, Expr("d"));
}

TEST(ViewAlgebra, ComposeKnownCases) {
  const View x = View::contiguous({3, 4});
  // permute of a permute is the identity read.
  const View t = x.permute({1, 0});
  auto both = compose_views(View::contiguous({4, 3}).permute({1, 0}), t);
  ASSERT_TRUE(both.has_value());
  EXPECT_TRUE(both->is_contiguous());
  // A contiguous inner view composes with anything.
  EXPECT_EQ(compose_views(t, x), t);
  // A slice of a transpose.
  auto st = compose_views(View::contiguous({4, 3}).slice(0, 1, 3), t);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(direct_reads(*st, {}), reference_reads(View::contiguous({4, 3}).slice(0, 1, 3), t, {}));
  // Reshaping a transposed tensor cannot be expressed per axis: refused.
  EXPECT_FALSE(compose_views(View::contiguous({4, 3}).reshape({12})->reshape({2, 6}).value(), t)
                   .has_value());
}

TEST(ViewAlgebra, ComposeMatchesBruteForceOnRandomViews) {
  std::mt19937_64 rng(7);
  int composed = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // inner: random movement ops on x of shape [2..4, 2..4, 2..4].
    std::vector<Expr> xs;
    for (int i = 0; i < 3; ++i) xs.push_back(Expr(2 + static_cast<int64_t>(rng() % 3)));
    View inner = View::contiguous(xs);
    for (int i = 0; i < 3; ++i) inner = random_move(inner, rng);
    View outer = View::contiguous(inner.shape());
    for (int i = 0; i < 3; ++i) outer = random_move(outer, rng);
    const auto c = compose_views(outer, inner);
    if (!c) {
      ++refused;
      continue;
    }
    ++composed;
    ASSERT_EQ(c->shape(), outer.shape());
    ASSERT_EQ(direct_reads(*c, {}), reference_reads(outer, inner, {}))
        << "outer " << outer.to_string() << " inner " << inner.to_string() << " composed "
        << c->to_string();
  }
  // Most random pairs are expressible; the refusals are merges of permuted axes.
  EXPECT_GT(composed, 200);
  std::cout << "[view compose] " << composed << " composed, " << refused << " refused\n";
}

TEST(ViewAlgebra, ComposeWithSymbolicDims) {
  // x: [s, 8] read transposed and sliced, then broadcast and flipped.
  const View inner = View::contiguous({"s", 8}).permute({1, 0}).slice(1, 1, "s");  // [8, s-1]
  const View outer = View::contiguous(inner.shape()).flip(1).unsqueeze(0).expand(0, 3);
  const auto c = compose_views(outer, inner);
  ASSERT_TRUE(c.has_value());
  for (int64_t s : {2, 3, 7}) {
    const DimMap dims{{"s", s}};
    EXPECT_EQ(direct_reads(*c, dims), reference_reads(outer, inner, dims)) << "s = " << s;
  }
}
