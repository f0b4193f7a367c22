// MatMul recognition, payload encoding and lowering (see matmul.hpp).

#include "luminal/egraph/matmul.hpp"

#include <mutex>
#include <unordered_map>
#include <variant>

#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/view_algebra.hpp"
#include "luminal/error.hpp"

namespace luminal::egraph {

namespace {

bool is_zero(const Expr& e) {
  const auto c = e.simplify().as_const();
  return c && *c == 0;
}

bool is_one(const Expr& e) {
  const auto c = e.simplify().as_const();
  return c && *c == 1;
}

bool equal(const Expr& a, const Expr& b) {
  return a == b || a.simplify() == b.simplify() || provably_equal(a, b);
}

enum class Role { Batch, M, N };

struct Axis {
  Expr size;
  Expr sa;  // stride in a's dense buffer
  Expr sb;  // stride in b's dense buffer
  Role role;
};

// Merge a run of axes (outer to inner) into one along the strides `stride`
// selects; returns the merged (size, stride) and how many outer axes did not merge.
struct Merged {
  Expr size = 1;
  Expr stride = 0;
  size_t unmerged = 0;
};
template <class Stride>
Merged merge_run(const std::vector<Axis>& run, Stride stride) {
  Merged out;
  if (run.empty()) return out;
  size_t i = run.size() - 1;
  out.size = run[i].size;
  out.stride = stride(run[i]);
  while (i > 0) {
    const Axis& o = run[i - 1];
    if (!equal(stride(o), (out.size * out.stride).simplify())) break;
    out.size = (out.size * o.size).simplify();
    --i;
  }
  out.unmerged = i;
  return out;
}

Payload shape_payload(const Shape& s) {
  Shape simplified;
  for (const Expr& e : s) simplified.push_back(e.simplify());
  return Payload(std::move(simplified));
}

}  // namespace

namespace {

// The payload is a 13-tuple of these fields, in this order.
using Field = std::variant<Shape MatMulSpec::*, Expr MatMulSpec::*>;
const Field kFields[] = {
    &MatMulSpec::batch,
    &MatMulSpec::m,
    &MatMulSpec::n,
    &MatMulSpec::k,
    &MatMulSpec::a_batch_strides,
    &MatMulSpec::a_m_stride,
    &MatMulSpec::a_k_stride,
    &MatMulSpec::a_offset,
    &MatMulSpec::b_batch_strides,
    &MatMulSpec::b_k_stride,
    &MatMulSpec::b_n_stride,
    &MatMulSpec::b_offset,
    &MatMulSpec::out_shape,
};
constexpr size_t kNumFields = sizeof(kFields) / sizeof(kFields[0]);

}  // namespace

Payload MatMulSpec::to_payload() const {
  PayloadTuple t;
  for (const Field& f : kFields) {
    if (const auto* shape = std::get_if<Shape MatMulSpec::*>(&f)) {
      t.push_back(shape_payload(this->**shape));
    } else {
      t.push_back(Payload((this->*std::get<Expr MatMulSpec::*>(f)).simplify()));
    }
  }
  return Payload(std::move(t));
}

MatMulSpec MatMulSpec::from_payload(const Payload& p) {
  if (!p.is<PayloadTuple>() || p.tuple_size() != kNumFields)
    throw Error("MatMul: malformed payload " + p.to_string());
  MatMulSpec s;
  for (size_t i = 0; i < kNumFields; ++i) {
    if (const auto* shape = std::get_if<Shape MatMulSpec::*>(&kFields[i]))
      s.** shape = p.at(i).as<Shape>();
    else
      s.*std::get<Expr MatMulSpec::*>(kFields[i]) = p.at(i).as<Expr>();
  }
  return s;
}

MatLayout MatMulSpec::a_layout() const {
  if (is_one(a_k_stride)) return MatLayout::RowMajor;
  if (is_one(a_m_stride)) return MatLayout::ColMajor;
  return MatLayout::Strided;
}

MatLayout MatMulSpec::b_layout() const {
  if (is_one(b_n_stride)) return MatLayout::RowMajor;
  if (is_one(b_k_stride)) return MatLayout::ColMajor;
  return MatLayout::Strided;
}

Expr MatMulSpec::lda() const {
  return a_layout() == MatLayout::ColMajor ? a_k_stride : a_m_stride;
}

Expr MatMulSpec::ldb() const {
  return b_layout() == MatLayout::ColMajor ? b_n_stride : b_k_stride;
}

Expr MatMulSpec::batch_count() const {
  return product(batch);
}

std::string MatMulSpec::to_string() const {
  auto lay = [](MatLayout l) {
    return l == MatLayout::RowMajor ? "row" : l == MatLayout::ColMajor ? "col" : "strided";
  };
  return "batch " + luminal::to_string(batch) + " m " + m.to_string() + " n " + n.to_string() +
         " k " + k.to_string() + " a " + lay(a_layout()) + " b " + lay(b_layout());
}

namespace {

// Constants c of sub-expressions `f(z) / c` and `f(z) % c` of an axis expression:
// the inner sizes at which a non-affine axis may split into affine ones.
void split_sizes(const Expr& e, std::vector<int64_t>& out) {
  if ((e.kind() == ExprKind::Div || e.kind() == ExprKind::Mod) &&
      e.children()[0].depends_on(Expr::index_var().name())) {
    if (auto c = e.children()[1].as_const(); c && *c > 1) out.push_back(*c);
  }
  for (const Expr& c : e.children()) split_sizes(c, out);
}

// Split output axes that are not affine in both operands (a grouped-query
// head axis reads its KV head at z / group) into affine (outer, inner) pairs.
bool split_non_affine(Shape& shape, size_t& axis, View& va, View& vb) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i == axis || (affine_axis(va, i) && affine_axis(vb, i))) continue;
    std::vector<int64_t> sizes;
    split_sizes(va.axis_exprs()[i], sizes);
    split_sizes(vb.axis_exprs()[i], sizes);
    bool done = false;
    for (int64_t inner : sizes) {
      std::optional<View> a2, b2;
      try {
        a2 = va.split(static_cast<int>(i), inner);
        b2 = vb.split(static_cast<int>(i), inner);
      } catch (const Error&) {
        continue;  // not divisible
      }
      if (!a2 || !b2 || !affine_axis(*a2, i) || !affine_axis(*a2, i + 1) || !affine_axis(*b2, i) ||
          !affine_axis(*b2, i + 1))
        continue;
      va = *a2;
      vb = *b2;
      shape = va.shape();
      if (axis > i) ++axis;
      ++i;
      done = true;
      break;
    }
    if (!done) return false;
  }
  return true;
}

std::optional<MatMulMatch> recognize_affine(const Shape& mul_shape, size_t axis, const View& va,
                                            const View& vb, Shape out_shape);

struct Key {
  Shape shape;
  size_t axis;
  View va, vb;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = k.axis;
    for (const Expr& e : k.shape) h = h * 1000003u ^ e.hash();
    for (const View* v : {&k.va, &k.vb}) {
      for (const Expr& e : v->shape()) h = h * 1000003u ^ e.hash();
      for (const Expr& e : v->axis_exprs()) h = h * 1000003u ^ e.hash();
    }
    return h;
  }
};

std::optional<MatMulMatch> recognize_uncached(const Shape& mul_shape, size_t axis, View va,
                                              View vb) {
  const size_t r = mul_shape.size();
  if (axis >= r || va.rank() != r || vb.rank() != r) return std::nullopt;
  Shape out_shape = mul_shape;
  out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
  Shape shape = mul_shape;
  if (!split_non_affine(shape, axis, va, vb)) return std::nullopt;
  return recognize_affine(shape, axis, va, vb, std::move(out_shape));
}

}  // namespace

std::optional<MatMulMatch> recognize_matmul(const Shape& mul_shape, size_t axis, const View& va,
                                            const View& vb) {
  // Recognition runs the simplifier a lot and rules ask again every iteration.
  static std::mutex mutex;
  static std::unordered_map<Key, std::optional<MatMulMatch>, KeyHash> cache;
  Key key{mul_shape, axis, va, vb};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto result = recognize_uncached(mul_shape, axis, va, vb);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > (1u << 14)) cache.clear();
  cache.emplace(std::move(key), result);
  return result;
}

namespace {

std::optional<MatMulMatch> recognize_affine(const Shape& mul_shape, size_t axis, const View& va,
                                            const View& vb, Shape out_shape) {
  const size_t r = mul_shape.size();
  MatMulMatch out;
  MatMulSpec& s = out.spec;
  Expr a_off = 0, b_off = 0;
  std::vector<Axis> axes;
  for (size_t i = 0; i < r; ++i) {
    auto fa = affine_axis(va, i);
    auto fb = affine_axis(vb, i);
    if (!fa || !fb) return std::nullopt;
    a_off = a_off + fa->offset;
    b_off = b_off + fb->offset;
    if (i == axis) {
      s.k = mul_shape[i];
      s.a_k_stride = fa->stride;
      s.b_k_stride = fb->stride;
      continue;
    }
    if (is_one(mul_shape[i])) continue;  // size-1 axes only contribute their offset
    const bool a0 = is_zero(fa->stride), b0 = is_zero(fb->stride);
    const Role role = (!a0 && b0) ? Role::M : (a0 && !b0) ? Role::N : Role::Batch;
    axes.push_back({mul_shape[i], fa->stride, fb->stride, role});
  }
  s.a_offset = a_off;
  s.b_offset = b_off;

  // Output order: batch axes, then one run of M axes and one run of N axes.
  size_t first = 0;
  while (first < axes.size() && axes[first].role == Role::Batch) ++first;
  std::vector<Axis> batch(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(first));
  std::vector<Axis> run1, run2;
  for (size_t i = first; i < axes.size(); ++i) {
    if (axes[i].role == Role::Batch) return std::nullopt;
    if (run2.empty() && (run1.empty() || axes[i].role == run1.front().role))
      run1.push_back(axes[i]);
    else if (run2.empty() || axes[i].role == run2.front().role)
      run2.push_back(axes[i]);
    else
      return std::nullopt;
  }
  if (run1.empty()) return std::nullopt;  // no operand is broadcast: not a matrix product
  // C = B^T A^T when the N axes come first in the output.
  if (run1.front().role == Role::N && !run2.empty()) {
    out.swapped = true;
    auto swap_axis = [](Axis& a) {
      std::swap(a.sa, a.sb);
      a.role = a.role == Role::M ? Role::N : a.role == Role::N ? Role::M : Role::Batch;
    };
    for (Axis& a : batch) swap_axis(a);
    for (Axis& a : run1) swap_axis(a);
    for (Axis& a : run2) swap_axis(a);
    std::swap(s.a_k_stride, s.b_k_stride);
    std::swap(s.a_offset, s.b_offset);
  }
  std::vector<Axis> m_run, n_run;
  (run1.front().role == Role::M ? m_run : n_run) = run1;
  if (!run2.empty()) (run2.front().role == Role::M ? m_run : n_run) = run2;

  const Merged mm = merge_run(m_run, [](const Axis& a) { return a.sa; });
  s.m = mm.size;
  s.a_m_stride = mm.stride;
  // Outer M axes that do not merge become batch axes (b is broadcast along them).
  batch.insert(batch.end(), m_run.begin(),
               m_run.begin() + static_cast<std::ptrdiff_t>(mm.unmerged));
  const Merged nm = merge_run(n_run, [](const Axis& a) { return a.sb; });
  s.n = nm.size;
  s.b_n_stride = nm.stride;
  if (nm.unmerged > 0) {
    // Outer N axes can only become batch axes when no M axis sits between.
    if (!m_run.empty()) return std::nullopt;
    batch.insert(batch.end(), n_run.begin(),
                 n_run.begin() + static_cast<std::ptrdiff_t>(nm.unmerged));
  }

  // Merge adjacent batch axes whose strides line up in both operands.
  std::vector<Axis> merged;
  for (const Axis& a : batch) {
    if (!merged.empty()) {
      Axis& last = merged.back();
      if (equal(last.sa, (a.size * a.sa).simplify()) &&
          equal(last.sb, (a.size * a.sb).simplify())) {
        last.size = (last.size * a.size).simplify();
        last.sa = a.sa;
        last.sb = a.sb;
        continue;
      }
    }
    merged.push_back(a);
  }
  for (const Axis& a : merged) {
    s.batch.push_back(a.size);
    s.a_batch_strides.push_back(a.sa.simplify());
    s.b_batch_strides.push_back(a.sb.simplify());
  }
  for (Expr* e : {&s.m, &s.n, &s.k, &s.a_m_stride, &s.a_k_stride, &s.a_offset, &s.b_k_stride,
                  &s.b_n_stride, &s.b_offset})
    *e = e->simplify();
  s.out_shape = std::move(out_shape);
  return out;
}

}  // namespace

Tensor lower_matmul(Graph& graph, const MatMulSpec& s, const Tensor& a, const Tensor& b) {
  const Expr z = Expr::index_var();
  Shape shape = s.batch;
  shape.insert(shape.end(), {s.m, s.k, s.n});
  std::vector<Expr> ea, eb;
  for (size_t d = 0; d < s.batch.size(); ++d) {
    ea.push_back(z * s.a_batch_strides[d]);
    eb.push_back(z * s.b_batch_strides[d]);
  }
  ea.insert(ea.end(), {z * s.a_m_stride, z * s.a_k_stride, Expr(0)});
  eb.insert(eb.end(), {Expr(0), z * s.b_k_stride, z * s.b_n_stride});
  ea[0] = ea[0] + s.a_offset;
  eb[0] = eb[0] + s.b_offset;
  for (Expr& e : ea) e = e.simplify();
  for (Expr& e : eb) e = e.simplify();
  Tensor ta = read_through(a, View::from_axes(shape, ea));
  Tensor tb = read_through(b, View::from_axes(shape, eb));
  Tensor sum = graph.reduce(OpKind::SumReduce, graph.binary(OpKind::Mul, ta, tb),
                            static_cast<int>(shape.size()) - 2);
  return Tensor(&graph, sum.node(), View::contiguous(s.out_shape), sum.dtype());
}

OpInfo matmul_op_info() {
  OpInfo info;
  info.name = "MatMul";
  info.arity = 2;
  info.payload_doc = "MatMulSpec (matmul.hpp)";
  info.infer = [](const Payload& p, std::span<const TensorInfo* const> c) {
    if (c[0]->dtype != c[1]->dtype)
      throw Error("MatMul: operand dtypes differ: " + c[0]->to_string() + " vs " +
                  c[1]->to_string());
    return TensorInfo{c[0]->dtype, MatMulSpec::from_payload(p).out_shape};
  };
  info.lower = [](Graph& g, const Payload& p, std::span<const Tensor> c, const TensorInfo&) {
    return lower_matmul(g, MatMulSpec::from_payload(p), c[0], c[1]);
  };
  return info;
}

}  // namespace luminal::egraph
