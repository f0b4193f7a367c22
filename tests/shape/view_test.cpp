// Tests of luminal::View against an independent reference: an explicit table
// holding the physical offset of every logical element, transformed by naive
// implementations of the same view operations.

#include "luminal/shape/view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "luminal/error.hpp"

namespace luminal {

// Readable gtest output (internal linkage: other test files may define their own).
[[maybe_unused]] static void PrintTo(const Expr& e, std::ostream* os) {
  *os << e.to_string();
}
[[maybe_unused]] static void PrintTo(const View& v, std::ostream* os) {
  *os << v.to_string();
}

namespace {

using Shape = std::vector<int64_t>;

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

int64_t ravel(const Shape& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + idx[k];
  return flat;
}

std::string str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// ----------------------------------------------------------------------------
// Reference: the offset of every logical element, row-major.

struct Ref {
  Shape shape;
  std::vector<int64_t> data;

  static Ref iota(const Shape& shape) {
    Ref r{shape, std::vector<int64_t>(static_cast<size_t>(count(shape)))};
    std::iota(r.data.begin(), r.data.end(), 0);
    return r;
  }
  int64_t at(const Shape& idx) const { return data[static_cast<size_t>(ravel(idx, shape))]; }
  /// A new table of shape `new_shape` whose element idx is this table's
  /// element old_index(idx).
  Ref remap(const Shape& new_shape, const std::function<Shape(const Shape&)>& old_index) const {
    Ref r{new_shape, {}};
    for (int64_t f = 0; f < count(new_shape); ++f)
      r.data.push_back(at(old_index(unravel(f, new_shape))));
    return r;
  }
  Ref with_shape(const Shape& new_shape) const { return Ref{new_shape, data}; }
  /// The contribution of axis k at index i (other axes at 0), minus the base.
  int64_t axis_fn(size_t k, int64_t i) const {
    Shape idx(shape.size(), 0);
    const int64_t base = at(idx);
    idx[k] = i;
    return at(idx) - base;
  }
  bool axis_affine(size_t k) const {
    if (shape[k] < 2) return true;
    const int64_t s = axis_fn(k, 1);
    for (int64_t i = 0; i < shape[k]; ++i) {
      if (axis_fn(k, i) != i * s) return false;
    }
    return true;
  }
  /// Can axis k be written as f(i1) + g(i2) with i = i1 * inner + i2?
  bool axis_separable(size_t k, int64_t inner) const {
    const int64_t outer = shape[k] / inner;
    for (int64_t i1 = 0; i1 < outer; ++i1) {
      for (int64_t i2 = 0; i2 < inner; ++i2) {
        if (axis_fn(k, i1 * inner + i2) != axis_fn(k, i1 * inner) + axis_fn(k, i2)) return false;
      }
    }
    return true;
  }
};

size_t norm(int axis, size_t limit) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int>(limit) : axis);
}

// ----------------------------------------------------------------------------
// View operations as data, applied both to a View and to a Ref.

enum class OpKind {
  Permute,
  Unsqueeze,
  Squeeze,
  Expand,
  Slice,
  Flip,
  Repeat,
  Merge,
  Split,
  Reshape
};

struct Op {
  OpKind kind = OpKind::Flip;
  std::vector<int> order;
  int axis = 0;
  Expr a;  // expand size, slice start, repeat times, split inner
  Expr b;  // slice end
  int64_t step = 1;
  std::vector<Expr> shape;  // reshape target

  std::string describe() const {
    std::ostringstream os;
    switch (kind) {
      case OpKind::Permute:
        os << "permute(";
        for (size_t i = 0; i < order.size(); ++i) os << (i ? "," : "") << order[i];
        os << ")";
        break;
      case OpKind::Unsqueeze:
        os << "unsqueeze(" << axis << ")";
        break;
      case OpKind::Squeeze:
        os << "squeeze(" << axis << ")";
        break;
      case OpKind::Expand:
        os << "expand(" << axis << ", " << a.to_string() << ")";
        break;
      case OpKind::Slice:
        os << "slice(" << axis << ", " << a.to_string() << ", " << b.to_string() << ", " << step
           << ")";
        break;
      case OpKind::Flip:
        os << "flip(" << axis << ")";
        break;
      case OpKind::Repeat:
        os << "repeat(" << axis << ", " << a.to_string() << ")";
        break;
      case OpKind::Merge:
        os << "merge(" << axis << ")";
        break;
      case OpKind::Split:
        os << "split(" << axis << ", " << a.to_string() << ")";
        break;
      case OpKind::Reshape:
        os << "reshape(" << to_string(shape) << ")";
        break;
    }
    return os.str();
  }
};

std::optional<View> apply(const View& v, const Op& op) {
  switch (op.kind) {
    case OpKind::Permute:
      return v.permute(op.order);
    case OpKind::Unsqueeze:
      return v.unsqueeze(op.axis);
    case OpKind::Squeeze:
      return v.squeeze(op.axis);
    case OpKind::Expand:
      return v.expand(op.axis, op.a);
    case OpKind::Slice:
      return v.slice(op.axis, op.a, op.b, op.step);
    case OpKind::Flip:
      return v.flip(op.axis);
    case OpKind::Repeat:
      return v.repeat(op.axis, op.a);
    case OpKind::Merge:
      return v.merge(op.axis);
    case OpKind::Split:
      return v.split(op.axis, op.a);
    case OpKind::Reshape:
      return v.reshape(op.shape);
  }
  return std::nullopt;
}

Ref apply(const Ref& r, const Op& op, const DimMap& dims) {
  const size_t rank = r.shape.size();
  switch (op.kind) {
    case OpKind::Permute: {
      Shape ns;
      for (int o : op.order) ns.push_back(r.shape[norm(o, rank)]);
      return r.remap(ns, [&](const Shape& idx) {
        Shape old(rank);
        for (size_t k = 0; k < rank; ++k) old[norm(op.order[k], rank)] = idx[k];
        return old;
      });
    }
    case OpKind::Unsqueeze: {
      Shape ns = r.shape;
      ns.insert(ns.begin() + static_cast<std::ptrdiff_t>(norm(op.axis, rank + 1)), 1);
      return r.with_shape(ns);
    }
    case OpKind::Squeeze: {
      Shape ns = r.shape;
      ns.erase(ns.begin() + static_cast<std::ptrdiff_t>(norm(op.axis, rank)));
      return r.with_shape(ns);
    }
    case OpKind::Expand: {
      const size_t a = norm(op.axis, rank);
      Shape ns = r.shape;
      ns[a] = op.a.eval(dims);
      return r.remap(ns, [&](const Shape& idx) {
        Shape old = idx;
        if (r.shape[a] == 1) old[a] = 0;
        return old;
      });
    }
    case OpKind::Slice: {
      const size_t a = norm(op.axis, rank);
      const int64_t start = op.a.eval(dims);
      const int64_t end = op.b.eval(dims);
      Shape ns = r.shape;
      ns[a] = (end - start + op.step - 1) / op.step;
      return r.remap(ns, [&](const Shape& idx) {
        Shape old = idx;
        old[a] = start + idx[a] * op.step;
        return old;
      });
    }
    case OpKind::Flip: {
      const size_t a = norm(op.axis, rank);
      return r.remap(r.shape, [&](const Shape& idx) {
        Shape old = idx;
        old[a] = r.shape[a] - 1 - idx[a];
        return old;
      });
    }
    case OpKind::Repeat: {
      const size_t a = norm(op.axis, rank);
      Shape ns = r.shape;
      ns[a] *= op.a.eval(dims);
      return r.remap(ns, [&](const Shape& idx) {
        Shape old = idx;
        old[a] = idx[a] % r.shape[a];
        return old;
      });
    }
    case OpKind::Merge: {
      const size_t a = norm(op.axis, rank - 1);
      Shape ns = r.shape;
      ns[a] *= ns[a + 1];
      ns.erase(ns.begin() + static_cast<std::ptrdiff_t>(a) + 1);
      return r.with_shape(ns);
    }
    case OpKind::Split: {
      const size_t a = norm(op.axis, rank);
      const int64_t inner = op.a.eval(dims);
      Shape ns = r.shape;
      ns[a] /= inner;
      ns.insert(ns.begin() + static_cast<std::ptrdiff_t>(a) + 1, inner);
      return r.with_shape(ns);
    }
    case OpKind::Reshape: {
      Shape ns;
      for (const Expr& e : op.shape) ns.push_back(e.eval(dims));
      return r.with_shape(ns);
    }
  }
  return r;
}

/// Checks every logical element of the view against the reference table.
void expect_matches(const View& v, const Ref& r, const DimMap& dims, const std::string& context) {
  ASSERT_EQ(v.concrete_shape(dims), r.shape) << context << "\nview: " << v.to_string();
  ASSERT_EQ(v.numel().eval(dims), count(r.shape)) << context;
  const Expr z = Expr::index_var();
  // Axis expressions mention only the index and the dims (no internal temporaries).
  for (const Expr& e : v.axis_exprs()) {
    for (const std::string& var : e.variables()) {
      ASSERT_TRUE(var == z.name() || dims.count(var) != 0)
          << context << "\nstray variable " << var << " in " << v.to_string();
    }
  }
  const Expr flat = v.flat_offset(z);
  DimMap vars = dims;
  for (int64_t f = 0; f < count(r.shape); ++f) {
    const Shape idx = unravel(f, r.shape);
    ASSERT_EQ(v.offset_at(idx, dims), r.data[static_cast<size_t>(f)])
        << context << "\nview: " << v.to_string() << "\nindex " << str(idx);
    vars[z.name()] = f;
    ASSERT_EQ(flat.eval(vars), r.data[static_cast<size_t>(f)])
        << context << "\nview: " << v.to_string() << "\nflat offset: " << flat.to_string()
        << "\nflat index " << f;
  }
  if (v.is_contiguous()) {
    for (int64_t f = 0; f < count(r.shape); ++f) {
      ASSERT_EQ(r.data[static_cast<size_t>(f)], f)
          << context << "\nis_contiguous() is true for a non-contiguous view " << v.to_string();
    }
  }
}

// ----------------------------------------------------------------------------
// PyTorch's view-compatibility rule (ATen computeStride) on the strides of an
// affine view: if it accepts the reshape, View::reshape must not return nullopt.

bool torch_can_view(const Shape& old_shape, const Shape& old_stride, const Shape& new_shape) {
  if (old_shape.empty()) return true;
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_stride.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    const auto td = static_cast<size_t>(tensor_d);
    tensor_numel *= old_shape[td];
    if (tensor_d == 0 ||
        (old_shape[td - 1] != 1 && old_stride[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || new_shape[static_cast<size_t>(view_d)] == 1)) {
        view_numel *= new_shape[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old_stride[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

// ----------------------------------------------------------------------------
// Random chains of operations on concrete shapes.

constexpr int64_t kMaxNumel = 1500;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

struct Stats {
  int chains = 0;
  int ops = 0;
  int split_ok = 0;
  int split_nullopt = 0;   // the axis does not separate: a copy is required
  int split_spurious = 0;  // separates, but not provably (non-affine axes only)
  int reshape_ok = 0;
  int reshape_nullopt = 0;
};

class RandomChains {
public:
  /// With `merge_split_bias`, most operations are merges, splits and repeats:
  /// the mix that produces non-separable axes.
  explicit RandomChains(uint32_t seed, bool merge_split_bias = false)
      : rng_(seed), bias_(merge_split_bias) {}

  int64_t uniform(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  /// An axis index, sometimes written negatively.
  int pick_axis(size_t limit) {
    const int a = static_cast<int>(uniform(0, static_cast<int64_t>(limit) - 1));
    return uniform(0, 3) == 0 ? a - static_cast<int>(limit) : a;
  }

  std::optional<Op> random_op(const Ref& r) {
    const size_t rank = r.shape.size();
    const int64_t n = count(r.shape);
    Op op;
    static constexpr int64_t kBiased[] = {7, 7, 8, 8, 8, 6, 4, 4, 0};
    switch (bias_ ? kBiased[uniform(0, 8)] : uniform(0, 9)) {
      case 0: {
        if (rank == 0) return std::nullopt;
        op.kind = OpKind::Permute;
        for (size_t k = 0; k < rank; ++k) op.order.push_back(static_cast<int>(k));
        std::shuffle(op.order.begin(), op.order.end(), rng_);
        for (int& o : op.order) {
          if (uniform(0, 3) == 0) o -= static_cast<int>(rank);
        }
        return op;
      }
      case 1:
        if (rank >= 6) return std::nullopt;
        op.kind = OpKind::Unsqueeze;
        op.axis = pick_axis(rank + 1);
        return op;
      case 2:
      case 3: {  // squeeze or expand a size-1 axis
        std::vector<size_t> ones;
        for (size_t k = 0; k < rank; ++k) {
          if (r.shape[k] == 1) ones.push_back(k);
        }
        if (ones.empty()) return std::nullopt;
        op.axis = static_cast<int>(
            ones[static_cast<size_t>(uniform(0, static_cast<int64_t>(ones.size()) - 1))]);
        // (Squeezing the only axis could drop an offset: see SqueezeKeepsOffset.)
        op.kind = uniform(0, 1) == 0 && rank > 1 ? OpKind::Squeeze : OpKind::Expand;
        if (op.kind == OpKind::Expand) {
          op.a = uniform(1, 4);
          if (n * op.a.value() > kMaxNumel) return std::nullopt;
        }
        return op;
      }
      case 4: {
        if (rank == 0) return std::nullopt;
        op.kind = OpKind::Slice;
        op.axis = pick_axis(rank);
        const int64_t size = r.shape[norm(op.axis, rank)];
        const int64_t start = uniform(0, size - 1);
        const int64_t end = uniform(start + 1, size);
        op.a = start;
        op.b = end;
        op.step = uniform(1, 3);
        return op;
      }
      case 5:
        if (rank == 0) return std::nullopt;
        op.kind = OpKind::Flip;
        op.axis = pick_axis(rank);
        return op;
      case 6:
        if (rank == 0) return std::nullopt;
        op.kind = OpKind::Repeat;
        op.axis = pick_axis(rank);
        op.a = uniform(1, 3);
        if (n * op.a.value() > kMaxNumel) return std::nullopt;
        return op;
      case 7:
        if (rank < 2) return std::nullopt;
        op.kind = OpKind::Merge;
        op.axis = pick_axis(rank - 1);
        return op;
      case 8: {
        if (rank == 0 || rank >= 6) return std::nullopt;
        op.kind = OpKind::Split;
        op.axis = pick_axis(rank);
        auto ds = divisors(r.shape[norm(op.axis, rank)]);
        if (bias_ && ds.size() > 2) ds = std::vector<int64_t>(ds.begin() + 1, ds.end() - 1);
        op.a = ds[static_cast<size_t>(uniform(0, static_cast<int64_t>(ds.size()) - 1))];
        return op;
      }
      default: {
        op.kind = OpKind::Reshape;
        int64_t rest = n;
        const int64_t new_rank = uniform(1, 4);
        Shape target;
        for (int64_t k = 0; k + 1 < new_rank; ++k) {
          const auto ds = divisors(rest);
          const int64_t d =
              ds[static_cast<size_t>(uniform(0, static_cast<int64_t>(ds.size()) - 1))];
          target.push_back(d);
          rest /= d;
        }
        target.push_back(rest);
        std::shuffle(target.begin(), target.end(), rng_);
        for (int64_t s : target) op.shape.push_back(s);
        return op;
      }
    }
  }

  void run_chain(Stats& stats) {
    const int64_t rank = uniform(1, 4);
    Shape shape;
    for (int64_t k = 0; k < rank; ++k) shape.push_back(uniform(1, 6));
    std::vector<Expr> eshape(shape.begin(), shape.end());
    View v = View::contiguous(eshape);
    Ref r = Ref::iota(shape);
    std::string log = "start " + str(shape);
    const int64_t steps = bias_ ? uniform(3, 8) : uniform(1, 6);
    for (int64_t step = 0; step < steps;) {
      const std::optional<Op> op = random_op(r);
      if (!op) continue;
      ++step;
      ++stats.ops;
      log += "\n  " + op->describe();
      std::optional<View> next;
      try {
        next = apply(v, *op);
      } catch (const Error& e) {
        FAIL() << log << "\nunexpected error: " << e.what() << "\nview: " << v.to_string();
      }
      if (!next) {
        if (op->kind == OpKind::Split) {
          const size_t a = norm(op->axis, r.shape.size());
          const int64_t inner = op->a.value();
          // Affine axes always split; other separable axes split when the
          // simplifier can show it (best effort, counted).
          ASSERT_FALSE(r.axis_affine(a))
              << log << "\nsplit returned nullopt for an affine axis of " << v.to_string();
          if (r.axis_separable(a, inner)) {
            ++stats.split_spurious;
          } else {
            ++stats.split_nullopt;
          }
        } else {
          ASSERT_EQ(op->kind, OpKind::Reshape) << log;
          ++stats.reshape_nullopt;
          bool affine = true;
          Shape strides;
          for (size_t k = 0; k < r.shape.size(); ++k) {
            affine = affine && r.axis_affine(k);
            strides.push_back(r.shape[k] > 1 ? r.axis_fn(k, 1) : 0);
          }
          Shape target;
          for (const Expr& e : op->shape) target.push_back(e.value());
          ASSERT_FALSE(affine && torch_can_view(r.shape, strides, target))
              << log << "\nreshape returned nullopt where a strided view exists, view "
              << v.to_string();
        }
        // Continue from a contiguous copy, in both representations.
        log += " -> nullopt, copy";
        r = apply(Ref::iota(r.shape), *op, {});
        std::vector<Expr> s(r.shape.begin(), r.shape.end());
        v = View::contiguous(s);
      } else {
        if (op->kind == OpKind::Split) ++stats.split_ok;
        if (op->kind == OpKind::Reshape) ++stats.reshape_ok;
        v = *next;
        r = apply(r, *op, {});
      }
      ASSERT_EQ(v.concrete_shape({}), r.shape) << log << "\nview: " << v.to_string();
    }
    expect_matches(v, r, {}, log);
    ++stats.chains;
  }

private:
  std::mt19937 rng_;
  bool bias_ = false;
};

Stats run_random_chains(uint32_t seed, int chains, bool merge_split_bias = false) {
  RandomChains gen(seed, merge_split_bias);
  Stats stats;
  for (int i = 0; i < chains; ++i) {
    gen.run_chain(stats);
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return stats;
  }
  EXPECT_EQ(stats.chains, chains);
  // The generator must actually exercise the interesting paths.
  EXPECT_GT(stats.split_ok, 0);
  if (!merge_split_bias) {
    EXPECT_GT(stats.reshape_ok, 0);
  }
  ::testing::Test::RecordProperty("split_ok", stats.split_ok);
  ::testing::Test::RecordProperty("split_nullopt", stats.split_nullopt);
  ::testing::Test::RecordProperty("split_spurious", stats.split_spurious);
  ::testing::Test::RecordProperty("reshape_ok", stats.reshape_ok);
  ::testing::Test::RecordProperty("reshape_nullopt", stats.reshape_nullopt);
  return stats;
}

TEST(ViewRandom, ChainsSeed1) {
  run_random_chains(1, 500);
}
TEST(ViewRandom, ChainsSeed2) {
  run_random_chains(2, 500);
}
TEST(ViewRandom, ChainsSeed3) {
  run_random_chains(3, 500);
}
TEST(ViewRandom, ChainsSeed4) {
  run_random_chains(4, 500);
}

// Merges, repeats and splits: split() must succeed on affine axes, may fail
// only on axes that do not separate or (rarely) whose separation the simplifier
// cannot show (checked by brute force in run_chain), and both outcomes occur.
TEST(ViewRandom, MergeSplitChains) {
  const Stats stats = run_random_chains(5, 500, true);
  EXPECT_GT(stats.split_nullopt, 10);
  EXPECT_GT(stats.split_ok, 100);
  EXPECT_LE(stats.split_spurious * 20, stats.split_ok);
}

// ----------------------------------------------------------------------------
// Random chains over symbolic dims, checked at several values of the dims.

TEST(ViewRandom, SymbolicChains) {
  std::mt19937 rng(12345);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const std::vector<DimMap> assignments = {
      {{"a", 2}, {"b", 3}}, {{"a", 3}, {"b", 2}}, {{"a", 4}, {"b", 5}}, {{"a", 2}, {"b", 2}}};
  const std::vector<Expr> dims = {Expr("a"), Expr("b"), Expr(2), Expr(3), Expr(1)};
  int symbolic_splits = 0;
  for (int chain = 0; chain < 300; ++chain) {
    const int64_t rank = uniform(1, 3);
    std::vector<Expr> shape;
    for (int64_t k = 0; k < rank; ++k) shape.push_back(dims[static_cast<size_t>(uniform(0, 4))]);
    View v = View::contiguous(shape);
    std::vector<Op> ops;
    std::string log = "start " + to_string(shape);
    for (int step = 0; step < 6; ++step) {
      const size_t r = v.rank();
      Op op;
      const int64_t choice = uniform(0, 7);
      if (choice == 0 && r > 0) {
        op.kind = OpKind::Permute;
        for (size_t k = 0; k < r; ++k) op.order.push_back(static_cast<int>(k));
        std::shuffle(op.order.begin(), op.order.end(), rng);
      } else if (choice == 1 && r < 5) {
        op.kind = OpKind::Unsqueeze;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r)));
      } else if (choice == 2 && r > 0) {
        op.kind = OpKind::Flip;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r) - 1));
      } else if (choice == 3 && r >= 2) {
        op.kind = OpKind::Merge;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r) - 2));
      } else if (choice == 4 && r > 0) {
        // Slice [0, size - 1) or [0 or 1, size) of an axis of size a, b or a
        // constant >= 3: every dim is >= 2, so the result is never empty.
        op.kind = OpKind::Slice;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r) - 1));
        const Expr size = v.shape()[static_cast<size_t>(op.axis)];
        const bool big = size.is_var() || (size.is_const() && size.value() >= 3);
        if (!big) continue;
        op.a = uniform(0, 1);
        op.b = op.a == Expr(0) && uniform(0, 1) == 0 ? size - Expr(1) : size;
      } else if (choice == 5 && r > 0) {
        op.kind = OpKind::Repeat;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r) - 1));
        op.a = uniform(0, 1) == 0 ? Expr(2) : Expr("b");
      } else if (choice == 6 && r > 0) {
        // Split an axis by a factor, when split() accepts it as a divisor.
        op.kind = OpKind::Split;
        op.axis = static_cast<int>(uniform(0, static_cast<int64_t>(r) - 1));
        const Expr factors[] = {Expr("a"), Expr("b"), Expr(2), Expr(3)};
        op.a = factors[uniform(0, 3)];
        try {
          (void)v.split(op.axis, op.a);
        } catch (const ShapeError&) {
          continue;
        }
        if (!op.a.is_const()) ++symbolic_splits;
      } else if (choice == 7) {
        // Reshape to the same dims plus a size-1 axis, or fully flattened.
        op.kind = OpKind::Reshape;
        if (uniform(0, 1) == 0) {
          op.shape = {v.numel()};
        } else {
          op.shape = v.shape();
          op.shape.insert(op.shape.begin(), Expr(1));
        }
      } else {
        continue;
      }
      log += "\n  " + op.describe();
      std::optional<View> next = apply(v, op);
      if (!next) {
        // Not representable: continue from a contiguous copy (recorded as a
        // reset so that the references replay it).
        log += " -> nullopt, copy";
        ASSERT_TRUE(op.kind == OpKind::Split || op.kind == OpKind::Reshape) << log;
        ops.push_back(op);
        ops.back().step = -1;  // marks "copy, then apply"
        std::vector<Expr> target = op.kind == OpKind::Reshape ? op.shape : v.shape();
        if (op.kind == OpKind::Split) {
          const size_t a = static_cast<size_t>(op.axis);
          target[a] = (target[a] / op.a).simplify();
          target.insert(target.begin() + static_cast<std::ptrdiff_t>(a) + 1, op.a);
        }
        v = View::contiguous(target);
        continue;
      }
      ops.push_back(op);
      v = *next;
    }
    for (const DimMap& dm : assignments) {
      Shape shape0;
      for (const Expr& s : shape) shape0.push_back(s.eval(dm));
      Ref ref = Ref::iota(shape0);
      for (const Op& op : ops) {
        if (op.step == -1) {
          Op copy = op;
          copy.step = 1;
          ref = apply(Ref::iota(ref.shape), copy, dm);
        } else {
          ref = apply(ref, op, dm);
        }
      }
      std::ostringstream ctx;
      ctx << log << "\nat a=" << dm.at("a") << " b=" << dm.at("b");
      expect_matches(v, ref, dm, ctx.str());
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(symbolic_splits, 10);
}

// ----------------------------------------------------------------------------
// Targeted tests.

int64_t eval_at(const Expr& e, int64_t zv, DimMap dims = {}) {
  dims[Expr::index_var().name()] = zv;
  return e.eval(dims);
}

template <typename F>
void expect_shape_error(F&& f, const std::string& op_name) {
  try {
    f();
    ADD_FAILURE() << "expected ShapeError from " << op_name;
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find(op_name), std::string::npos) << e.what();
  }
}

TEST(View, ScalarView) {
  const Expr z = Expr::index_var();
  const View v;
  EXPECT_EQ(v.rank(), 0u);
  EXPECT_EQ(v.numel(), Expr(1));
  EXPECT_EQ(v.flat_offset(z), Expr(0));
  EXPECT_EQ(v.offset_at({}, {}), 0);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.to_string(), "[] {}");
  const auto r = v.reshape({1, 1});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rank(), 2u);
  EXPECT_EQ(r->offset_at({0, 0}, {}), 0);
}

TEST(View, RowMajorStrides) {
  const auto strides = row_major_strides({2, 3, 4});
  ASSERT_EQ(strides.size(), 3u);
  EXPECT_EQ(strides[0], Expr(12));
  EXPECT_EQ(strides[1], Expr(4));
  EXPECT_EQ(strides[2], Expr(1));
  const auto sym = row_major_strides({"a", "b", "c"});
  const DimMap dims = {{"a", 2}, {"b", 5}, {"c", 7}};
  EXPECT_EQ(sym[0].eval(dims), 35);
  EXPECT_EQ(sym[1].eval(dims), 7);
  EXPECT_EQ(sym[2], Expr(1));
  EXPECT_TRUE(row_major_strides({}).empty());
}

TEST(View, ContiguousAxisExprs) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({2, 3, 4});
  ASSERT_EQ(v.rank(), 3u);
  EXPECT_EQ(v.axis_exprs()[0], (z * 12).simplify());
  EXPECT_EQ(v.axis_exprs()[1], (z * 4).simplify());
  EXPECT_EQ(v.axis_exprs()[2], z);
  EXPECT_EQ(v.numel(), Expr(24));
  EXPECT_TRUE(v.is_contiguous());
  // Size-1 axes read index 0 only: their expression is 0.
  const View w = View::contiguous({1, 5});
  EXPECT_EQ(w.axis_exprs()[0], Expr(0));
  EXPECT_TRUE(w.is_contiguous());
}

TEST(View, ContiguousSymbolicFlatOffsetIsIdentity) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"s", 64});
  EXPECT_EQ(v.flat_offset(z), z) << v.flat_offset(z).to_string();
  EXPECT_EQ(View::contiguous({7}).flat_offset(z), z);
  EXPECT_EQ(View::contiguous({"s"}).flat_offset(z), z);
  EXPECT_EQ(View::contiguous({4, 8}).flat_offset(z), z)
      << View::contiguous({4, 8}).flat_offset(z).to_string();
}

TEST(View, ContiguousThreeAxesFlatOffset) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"a", 3, 4});
  const Expr f = v.flat_offset(z);
  for (int64_t a : {1, 2, 5}) {
    for (int64_t i = 0; i < a * 12; ++i) EXPECT_EQ(eval_at(f, i, {{"a", a}}), i);
  }
}

TEST(View, ToString) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"s", 64});
  EXPECT_EQ(v.to_string(),
            "[s, 64] {" + v.axis_exprs()[0].to_string() + ", " + z.to_string() + "}");
  EXPECT_EQ(v.to_string().rfind("[s, 64] {", 0), 0u) << v.to_string();
  EXPECT_EQ(View::contiguous({3, 1}).to_string(), "[3, 1] {_z, 0}");
  EXPECT_EQ(View().to_string(), "[] {}");
}

TEST(View, FromAxes) {
  const Expr z = Expr::index_var();
  const View v = View::from_axes({3, 4}, {z, z * 3});  // column-major
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.offset_at({2, 1}, {}), 5);
  EXPECT_EQ(v.shape(), (std::vector<Expr>{3, 4}));
  expect_shape_error([] { View::from_axes({3, 4}, {Expr::index_var()}); }, "from_axes");
}

TEST(View, PermuteSymbolicMatchesBruteForce) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"s", 64}).permute({1, 0});
  EXPECT_EQ(v.shape(), (std::vector<Expr>{64, "s"}));
  const Expr f = v.flat_offset(z);
  for (int64_t s : {3, 5}) {
    const DimMap dims = {{"s", s}};
    for (int64_t j = 0; j < 64; ++j) {
      for (int64_t i = 0; i < s; ++i) {
        const int64_t want = i * 64 + j;  // element (j, i) of the transpose
        EXPECT_EQ(v.offset_at({j, i}, dims), want);
        EXPECT_EQ(eval_at(f, j * s + i, dims), want);
      }
    }
  }
}

TEST(View, PermuteNegativeAxesAndRoundTrip) {
  const View v = View::contiguous({2, 3, 4});
  const View p = v.permute({-1, 0, -2});
  EXPECT_EQ(p.shape(), (std::vector<Expr>{4, 2, 3}));
  EXPECT_EQ(p.offset_at({3, 1, 2}, {}), 1 * 12 + 2 * 4 + 3);
  EXPECT_EQ(p.permute({1, 2, 0}), v);
}

TEST(View, PermuteErrors) {
  const View v = View::contiguous({2, 3});
  expect_shape_error([&] { v.permute({0, 0}); }, "permute");
  expect_shape_error([&] { v.permute({0}); }, "permute");
  expect_shape_error([&] { v.permute({0, 2}); }, "permute");
  expect_shape_error([&] { v.permute({0, -3}); }, "permute");
  try {
    v.permute({1, 1});
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
}

TEST(View, UnsqueezeSqueezeRoundTrip) {
  const View v = View::contiguous({"s", 4});
  for (int axis : {0, 1, 2, -1, -3}) {
    const View u = v.unsqueeze(axis);
    ASSERT_EQ(u.rank(), 3u);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    EXPECT_EQ(u.shape()[a], Expr(1));
    EXPECT_EQ(u.axis_exprs()[a], Expr(0));
    EXPECT_TRUE(u.is_contiguous());
    EXPECT_EQ(u.squeeze(axis), v);
  }
  expect_shape_error([&] { v.unsqueeze(3); }, "unsqueeze");
  expect_shape_error([&] { v.unsqueeze(-4); }, "unsqueeze");
}

TEST(View, SqueezeErrors) {
  const View v = View::contiguous({1, "s", 4});
  expect_shape_error([&] { v.squeeze(1); }, "squeeze");  // symbolic, not provably 1
  expect_shape_error([&] { v.squeeze(2); }, "squeeze");
  expect_shape_error([&] { v.squeeze(3); }, "squeeze");
  EXPECT_EQ(v.squeeze(0).shape(), (std::vector<Expr>{"s", 4}));
}

TEST(View, SqueezeKeepsOffsetOfSlicedAxis) {
  // x[2] of a [5, 3] tensor: slice then squeeze.
  const View v = View::contiguous({5, 3}).slice(0, 2, 3).squeeze(0);
  ASSERT_EQ(v.rank(), 1u);
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(v.offset_at({j}, {}), 6 + j);
  EXPECT_FALSE(v.is_contiguous());
  // A rank-0 view has no offset: dropping an offset axis is refused.
  const View one = View::contiguous({5}).slice(0, 3, 4);
  expect_shape_error([&] { one.squeeze(0); }, "squeeze");
  EXPECT_EQ(View::contiguous({1}).squeeze(0).rank(), 0u);
}

TEST(View, ExpandBroadcasts) {
  const View v = View::contiguous({3, 1}).expand(1, 4);
  EXPECT_EQ(v.shape(), (std::vector<Expr>{3, 4}));
  EXPECT_EQ(v.axis_exprs()[1], Expr(0));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(v.offset_at({i, j}, {}), i);
  }
  EXPECT_FALSE(v.is_contiguous());
  const View s = View::contiguous({1, 8}).expand(-2, "s");
  EXPECT_EQ(s.concrete_shape({{"s", 5}}), (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(s.offset_at({4, 7}, {{"s", 5}}), 7);
}

TEST(View, ExpandErrors) {
  const View v = View::contiguous({3, 1});
  expect_shape_error([&] { v.expand(0, 6); }, "expand");
  expect_shape_error([&] { v.expand(1, -2); }, "expand");
  expect_shape_error([&] { v.expand(2, 4); }, "expand");
  expect_shape_error([&] { View::contiguous({"s"}).expand(0, 4); }, "expand");
  EXPECT_EQ(v.expand(0, 3), v);  // expanding to the same size is a no-op
}

TEST(View, SliceConstant) {
  const View v = View::contiguous({10}).slice(0, 2, 9, 3);
  EXPECT_EQ(v.shape()[0], Expr(3));
  EXPECT_EQ(v.offset_at({0}, {}), 2);
  EXPECT_EQ(v.offset_at({1}, {}), 5);
  EXPECT_EQ(v.offset_at({2}, {}), 8);
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(View::contiguous({4, 5}).slice(1, 0, 5), View::contiguous({4, 5}));
  EXPECT_EQ(View::contiguous({10}).slice(0, 4, 4).shape()[0], Expr(0));
}

TEST(View, SliceSymbolicEnd) {
  const Expr z = Expr::index_var();
  const Expr s("s");
  const View v = View::contiguous({s, 4}).slice(0, 1, s - 1);
  for (int64_t sv : {3, 5, 8}) {
    const DimMap dims = {{"s", sv}};
    EXPECT_EQ(v.concrete_shape(dims), (std::vector<int64_t>{sv - 2, 4}));
    const Expr f = v.flat_offset(z);
    for (int64_t i = 0; i < sv - 2; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        EXPECT_EQ(v.offset_at({i, j}, dims), (i + 1) * 4 + j);
        EXPECT_EQ(eval_at(f, i * 4 + j, dims), (i + 1) * 4 + j);
      }
    }
  }
  // Symbolic end with a step.
  const View w = View::contiguous({s}).slice(0, 0, s, 2);
  EXPECT_EQ(w.concrete_shape({{"s", 7}}), (std::vector<int64_t>{4}));
  EXPECT_EQ(w.offset_at({3}, {{"s", 7}}), 6);
}

TEST(View, SliceErrors) {
  const View v = View::contiguous({6, 4});
  expect_shape_error([&] { v.slice(0, 4, 2); }, "slice");   // end before start
  expect_shape_error([&] { v.slice(0, 0, 7); }, "slice");   // past the end
  expect_shape_error([&] { v.slice(0, -1, 2); }, "slice");  // negative start
  expect_shape_error([&] { v.slice(0, 0, 2, 0); }, "slice");
  expect_shape_error([&] { v.slice(0, 0, 2, -1); }, "slice");
  expect_shape_error([&] { v.slice(2, 0, 2); }, "slice");
  const Expr s("s");
  expect_shape_error([&] { View::contiguous({s}).slice(0, 0, s + 1); }, "slice");
}

TEST(View, FlipOffsets) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({3, 4}).flip(1);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(v.offset_at({i, j}, {}), i * 4 + 3 - j);
  }
  EXPECT_FALSE(v.is_contiguous());
  const View back = v.flip(-1);
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_EQ(back.flat_offset(z), z);
  const View s = View::contiguous({"s"}).flip(0);
  EXPECT_EQ(s.offset_at({0}, {{"s", 6}}), 5);
  EXPECT_EQ(s.offset_at({5}, {{"s", 6}}), 0);
  expect_shape_error([&] { v.flip(2); }, "flip");
}

TEST(View, RepeatOffsets) {
  const View v = View::contiguous({2, 3}).repeat(1, 2);
  EXPECT_EQ(v.shape(), (std::vector<Expr>{2, 6}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(v.offset_at({i, j}, {}), i * 3 + j % 3);
  }
  const View s = View::contiguous({"s"}).repeat(0, "t");
  const DimMap dims = {{"s", 3}, {"t", 4}};
  EXPECT_EQ(s.concrete_shape(dims), (std::vector<int64_t>{12}));
  for (int64_t j = 0; j < 12; ++j) EXPECT_EQ(s.offset_at({j}, dims), j % 3);
  EXPECT_EQ(View::contiguous({5}).repeat(0, 1), View::contiguous({5}));
  expect_shape_error([&] { v.repeat(0, -1); }, "repeat");
}

TEST(View, MergeContiguousStaysContiguous) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"s", 64}).merge(0);
  ASSERT_EQ(v.rank(), 1u);
  EXPECT_EQ(v.axis_exprs()[0], z);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.concrete_shape({{"s", 3}}), (std::vector<int64_t>{192}));
  const View w = View::contiguous({2, 3, 4}).merge(-1);
  EXPECT_EQ(w, View::contiguous({2, 12}));
  expect_shape_error([] { View::contiguous({4}).merge(0); }, "merge");
  expect_shape_error([] { View::contiguous({4, 2}).merge(1); }, "merge");
}

TEST(View, MergeThenSplitRestoresExprs) {
  const View c = View::contiguous({6, 4});
  const auto c2 = c.merge(0).split(0, 4);
  ASSERT_TRUE(c2.has_value());
  EXPECT_EQ(*c2, c);
  // A transposed view: merging gives a non-affine axis, splitting restores it.
  const View t = View::contiguous({4, 6}).permute({1, 0});
  const auto t2 = t.merge(0).split(0, 4);
  ASSERT_TRUE(t2.has_value());
  EXPECT_EQ(*t2, t) << t2->to_string();
  // The same with a symbolic inner size.
  const View ts = View::contiguous({"s", 64}).permute({1, 0});
  const auto ts2 = ts.merge(0).split(0, "s");
  ASSERT_TRUE(ts2.has_value()) << ts.merge(0).to_string();
  EXPECT_EQ(*ts2, ts) << ts2->to_string();
  const View cs = View::contiguous({"s", 64});
  const auto cs2 = cs.merge(0).split(0, 64);
  ASSERT_TRUE(cs2.has_value());
  EXPECT_EQ(*cs2, cs);
}

TEST(View, SplitAffineAxis) {
  const View v = View::contiguous({12}).slice(0, 0, 12, 1).flip(0);
  const auto s = v.split(0, 3);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->shape(), (std::vector<Expr>{4, 3}));
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(s->offset_at({i, j}, {}), 11 - (i * 3 + j));
  }
  const auto sym = View::contiguous({Expr("s") * 8}).split(0, 8);
  ASSERT_TRUE(sym.has_value());
  EXPECT_EQ(*sym, View::contiguous({"s", 8}));
}

TEST(View, SplitNonSeparableReturnsNullopt) {
  // Merge (3, 4) of a strided view, split into (2, 6): not representable.
  const View v = View::contiguous({3, 8}).slice(1, 0, 4).merge(0);
  EXPECT_FALSE(v.split(0, 6).has_value());
  // Splitting at the merged boundary works.
  const auto ok = v.split(0, 4);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->offset_at({2, 3}, {}), 19);
  // Repeat (2 -> 6) split into (2, 3) is not separable, (3, 2) is.
  const View r = View::contiguous({2}).repeat(0, 3);
  EXPECT_FALSE(r.split(0, 3).has_value());
  EXPECT_TRUE(r.split(0, 2).has_value());
}

TEST(View, SplitErrors) {
  const View v = View::contiguous({6, "s"});
  expect_shape_error([&] { v.split(0, 4); }, "split");
  expect_shape_error([&] { v.split(0, 0); }, "split");
  expect_shape_error([&] { v.split(1, 2); }, "split");  // s is not provably even
  expect_shape_error([&] { v.split(2, 2); }, "split");
}

TEST(View, ReshapeContiguous) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({"s", 64});
  const auto r = v.reshape({"s", 8, 8});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, View::contiguous({"s", 8, 8}));
  const auto flat = v.reshape({Expr("s") * 64});
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->flat_offset(z), z);
}

TEST(View, ReshapeNonContiguous) {
  // Transposed [4, 6] -> [24]: merging is always representable (non-affine).
  const View t = View::contiguous({6, 4}).permute({1, 0});
  const auto m = t.reshape({24});
  ASSERT_TRUE(m.has_value());
  for (int64_t f = 0; f < 24; ++f) EXPECT_EQ(m->offset_at({f}, {}), (f % 6) * 4 + f / 6);
  // ... but splitting that merged axis differently is not: it needs a copy.
  EXPECT_FALSE(m->reshape({3, 8}).has_value());
  EXPECT_FALSE(View::contiguous({3, 8}).slice(1, 0, 4).reshape({2, 6}).has_value());
  // Splitting the inner (strided) axis of a transpose works.
  const auto s = t.reshape({4, 2, 3});
  ASSERT_TRUE(s.has_value());
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(s->offset_at({i, j, k}, {}), (j * 3 + k) * 4 + i);
    }
  }
  // Size-1 axes come and go freely, offsets included.
  const View sl = View::contiguous({5, 3}).slice(0, 2, 3);
  const auto u = sl.reshape({3, 1});
  ASSERT_TRUE(u.has_value());
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(u->offset_at({j, 0}, {}), 6 + j);
  // A single element at a non-zero offset cannot become rank 0.
  EXPECT_FALSE(View::contiguous({5}).slice(0, 3, 4).reshape({}).has_value());
}

TEST(View, ReshapeSymbolicNonContiguous) {
  // [s, 8, 4] transposed to [s, 4, 8], reshape to [s, 2, 2, 8].
  const View v = View::contiguous({"s", 8, 4}).permute({0, 2, 1});
  const auto r = v.reshape({"s", 2, 2, 8});
  ASSERT_TRUE(r.has_value());
  for (int64_t sv : {1, 3}) {
    const DimMap dims = {{"s", sv}};
    for (int64_t a = 0; a < sv; ++a) {
      for (int64_t b = 0; b < 4; ++b) {
        for (int64_t c = 0; c < 8; ++c) {
          EXPECT_EQ(r->offset_at({a, b / 2, b % 2, c}, dims), a * 32 + c * 4 + b);
        }
      }
    }
  }
}

TEST(View, ReshapeMismatchedNumelThrows) {
  const View v = View::contiguous({4, 6});
  expect_shape_error([&] { (void)v.reshape({5, 5}); }, "reshape");
  expect_shape_error([&] { (void)v.reshape({-4, -6}); }, "reshape");
  const View s = View::contiguous({"s", 4});
  expect_shape_error([&] { (void)s.reshape({"s", 5}); }, "reshape");
  expect_shape_error([&] { (void)s.reshape({"t", 4}); }, "reshape");
  try {
    (void)v.reshape({5, 5});
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[4, 6]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[5, 5]"), std::string::npos) << e.what();
  }
}

TEST(View, OffsetSymbolic) {
  const View v = View::contiguous({"s", 64});
  const Expr o = v.offset({"i", "j"});
  EXPECT_EQ(o.eval({{"i", 3}, {"j", 5}}), 3 * 64 + 5);
  EXPECT_EQ(o, (Expr("i") * 64 + Expr("j")).simplify());
  expect_shape_error([&] { (void)v.offset({"i"}); }, "offset");
}

TEST(View, OffsetAtErrors) {
  const View v = View::contiguous({"s", 4});
  EXPECT_THROW((void)v.offset_at({0}, {{"s", 2}}), ShapeError);
  EXPECT_THROW((void)v.offset_at({2, 0}, {{"s", 2}}), IndexError);
  EXPECT_THROW((void)v.offset_at({0, -1}, {{"s", 2}}), IndexError);
  EXPECT_THROW((void)v.offset_at({0, 0}, {}), LookupError);
  EXPECT_THROW((void)v.concrete_shape({}), LookupError);
  EXPECT_EQ(v.offset_at({1, 3}, {{"s", 2}}), 7);
}

TEST(View, NumelAndConcreteShape) {
  const View v = View::contiguous({"s", 4, "t"});
  EXPECT_EQ(v.numel().eval({{"s", 2}, {"t", 3}}), 24);
  EXPECT_EQ(v.concrete_shape({{"s", 2}, {"t", 3}}), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(View::contiguous({2, 3}).numel(), Expr(6));
}

TEST(View, IsContiguousCases) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({2, 3, 4});
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_FALSE(v.permute({1, 0, 2}).is_contiguous());
  EXPECT_TRUE(v.permute({1, 0, 2}).permute({1, 0, 2}).is_contiguous());
  EXPECT_TRUE(v.unsqueeze(1).is_contiguous());
  EXPECT_FALSE(v.slice(2, 0, 3).is_contiguous());
  EXPECT_FALSE(v.slice(0, 1, 2).is_contiguous());  // size-1 axis at an offset
  EXPECT_TRUE(v.slice(1, 0, 3).is_contiguous());
  EXPECT_FALSE(v.unsqueeze(0).expand(0, 2).is_contiguous());
  EXPECT_TRUE(View::contiguous({1, 4}).permute({1, 0}).is_contiguous());
  EXPECT_TRUE(View::from_axes({4, 1}, {z, 0}).is_contiguous());
}

TEST(View, ReshapeSymbolicStridedAxis) {
  // [64, s] transposed to [s, 64]: the 64-axis has stride s; split it 8 x 8.
  const Expr s("s");
  const View v = View::contiguous({64, s}).permute({1, 0});
  const auto r = v.reshape({s, 8, 8});
  ASSERT_TRUE(r.has_value());
  for (int64_t sv : {2, 5}) {
    const DimMap dims = {{"s", sv}};
    for (int64_t i = 0; i < sv; ++i) {
      for (int64_t j = 0; j < 64; ++j) {
        EXPECT_EQ(r->offset_at({i, j / 8, j % 8}, dims), j * sv + i);
      }
    }
  }
  // Merging the two axes is representable, splitting it differently is not.
  const auto m = v.reshape({s * 64});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset_at({65}, {{"s", 3}}), 1 * 3 + 1);
}

TEST(View, MergeAndSplitBroadcastAxes) {
  const View v = View::contiguous({1, 1}).expand(0, 3).expand(1, 4).merge(0);
  EXPECT_EQ(v.shape(), (std::vector<Expr>{12}));
  EXPECT_EQ(v.axis_exprs()[0], Expr(0));
  const auto s = v.split(0, 6);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->axis_exprs(), (std::vector<Expr>{0, 0}));
  EXPECT_EQ(s->flat_offset(Expr::index_var()), Expr(0));
}

TEST(View, SplitSymbolicInnerOfMergedAxis) {
  // [a, b] -> merge -> split by b gives back [a, b], also for a transposed view.
  const View t = View::contiguous({"b", "a"}).permute({1, 0});
  const View m = t.merge(0);
  const auto back = m.split(0, "b");
  ASSERT_TRUE(back.has_value()) << m.to_string();
  EXPECT_EQ(*back, t);
  // Splitting by a factor of the symbolic size that is not the merge boundary.
  const View u = View::contiguous({"a", 6}).permute({1, 0});  // [6, a] {z, 6 * z}
  const auto w = u.merge(0).split(0, Expr("a") * 2);          // [3, 2 * a]
  ASSERT_TRUE(w.has_value()) << u.merge(0).to_string();
  for (int64_t a : {1, 2, 4}) {
    const DimMap dims = {{"a", a}};
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 2 * a; ++j) {
        const int64_t flat = i * 2 * a + j;  // row-major index into [6, a]
        EXPECT_EQ(w->offset_at({i, j}, dims), (flat % a) * 6 + flat / a);
      }
    }
  }
}

TEST(View, FlatOffsetOfPermutedView) {
  const Expr z = Expr::index_var();
  const View v = View::contiguous({4, 6}).permute({1, 0});
  const Expr f = v.flat_offset(z);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(eval_at(f, i), (i % 4) * 6 + i / 4);
  // A symbolic flat index that is not the index variable.
  const Expr g = View::contiguous({"s", 4}).flat_offset(Expr("i") + 1);
  EXPECT_EQ(g.eval({{"i", 6}, {"s", 3}}), 7);
}

}  // namespace
// Merging axes whose symbolic sizes the simplifier cannot relate by divisibility
// ((H - 3) / 2 + 1 and (W - 3) / 2 + 1) is still a pure merge, not a copy.
TEST(View, ReshapeMergesNonDivisibleSymbolicAxes) {
  const Expr oh = (Expr("H") - 3) / 2 + 1;
  const Expr ow = (Expr("W") - 3) / 2 + 1;
  // [C, OH, OW] seen as [OH, OW, C] (channels-last), then flatten the spatial axes.
  View v = View::contiguous({4, oh, ow}).permute({1, 2, 0});
  auto r = v.reshape({oh * ow, 4});
  ASSERT_TRUE(r.has_value());
  for (int64_t h : {3, 7, 8}) {
    for (int64_t w : {5, 6}) {
      DimMap dims{{"H", h}, {"W", w}};
      const int64_t OH = (h - 3) / 2 + 1, OW = (w - 3) / 2 + 1;
      for (int64_t p = 0; p < OH * OW; ++p)
        for (int64_t c = 0; c < 4; ++c)
          EXPECT_EQ(r->offset_at({p, c}, dims), c * OH * OW + p) << h << " " << w;
    }
  }
}

}  // namespace luminal
