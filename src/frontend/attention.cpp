#include "luminal/frontend/attention.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/creation.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/frontend/reduction.hpp"

namespace luminal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::optional<int64_t> const_of(const Expr& e) {
  return e.simplify().as_const();
}

std::string describe_qkv(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "query " + q.describe() + ", key " + k.describe() + ", value " + v.describe();
}

}  // namespace

Tensor causal_mask(Graph& g, const Expr& l, const Expr& s, const Expr& offset) {
  return to(coordinate_iota(g, {l, s},
                            [&](const std::vector<Expr>& c) { return le(c[1], c[0] + offset); }),
            DType::Bool);
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale, bool enable_gqa) {
  const std::string op = "scaled_dot_product_attention";
  const Tensor& q = query;
  if (q.rank() < 2 || key.rank() < 2 || value.rank() < 2)
    throw ShapeError(op + ": query, key and value need at least 2 dims, got " +
                     describe_qkv(q, key, value));
  if (!is_float(q.dtype()) || key.dtype() != q.dtype() || value.dtype() != q.dtype())
    throw DTypeError(op + ": query, key and value must share one floating-point dtype, got " +
                     describe_qkv(q, key, value));
  if (dropout_p != 0.0)
    throw Error(op + ": dropout_p must be 0 (luminal is an inference compiler), got " +
                std::to_string(dropout_p));
  if (is_causal && attn_mask)
    throw ShapeError(op + ": an explicit attn_mask must not be set when is_causal=true");
  if (!provably_equal(q.dim(-1), key.dim(-1)) || !provably_equal(key.dim(-2), value.dim(-2)))
    throw ShapeError(op +
                     ": expected query and key to share the last dim and key and value the "
                     "sequence dim, got " +
                     describe_qkv(q, key, value));
  Tensor k = key;
  Tensor v = value;
  if (enable_gqa && q.rank() >= 3 && k.rank() >= 3 && !provably_equal(q.dim(-3), k.dim(-3))) {
    auto hq = const_of(q.dim(-3));
    auto hkv = const_of(k.dim(-3));
    if (!hq || !hkv || *hkv == 0 || *hq % *hkv != 0 || !provably_equal(k.dim(-3), v.dim(-3)))
      throw ShapeError(op +
                       ": enable_gqa needs the query heads to be a multiple of the key / "
                       "value heads, got " +
                       describe_qkv(q, key, value));
    // Each kv head serves Hq / Hkv consecutive query heads (a broadcast view).
    k = repeat_interleave(k, *hq / *hkv, -3);
    v = repeat_interleave(v, *hq / *hkv, -3);
  }
  double s = 0;
  if (scale) {
    s = *scale;
  } else {
    auto e = const_of(q.dim(-1));
    if (!e) throw ShapeError(op + ": the head dim of " + q.describe() + " must be constant");
    s = 1.0 / std::sqrt(static_cast<double>(*e));
  }
  Tensor scores = matmul(q, mT(k)) * s;  // [..., L, S]
  const Expr l = q.dim(-2);
  const Expr sl = k.dim(-2);
  if (is_causal) scores = where(causal_mask(*q.graph(), l, sl), scores, -kInf);
  if (attn_mask) {
    if (attn_mask->dtype() == DType::Bool)
      scores = where(*attn_mask, scores, -kInf);
    else if (attn_mask->dtype() == q.dtype())
      scores = scores + *attn_mask;
    else
      throw DTypeError(op + ": attn_mask must be bool or the query dtype, got mask " +
                       attn_mask->describe() + " for " + describe_qkv(q, key, value));
  }
  // torch's _safe_softmax: a row whose scores are all -inf (every key masked)
  // gets zero weights instead of softmax's NaN.
  Tensor all_masked = eq(amax(scores, {-1}, true), -kInf);
  return matmul(where(all_masked, 0.0, softmax(scores, -1)), v);
}

RopeTables rope_cache(Graph& g, const Expr& seq_len, int64_t rotary_dim, double theta,
                      const Expr& offset, DType dtype) {
  return rope_cache(g.iota(offset + Expr::index_var(), seq_len, DType::I64), rotary_dim, theta,
                    dtype);
}

RopeTables rope_cache(const Tensor& positions, int64_t rotary_dim, double theta, DType dtype) {
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    throw ShapeError("rope_cache: rotary_dim must be even and positive, got " +
                     std::to_string(rotary_dim));
  if (!(theta > 0)) throw ShapeError("rope_cache: theta must be positive");
  if (!is_float(dtype)) throw DTypeError("rope_cache: dtype must be a float type");
  Graph& g = *positions.graph();
  const int64_t half = rotary_dim / 2;
  // HF: inv_freq = 1 / theta ** (arange(0, d, 2).float() / d), all float32. The
  // exponent and the power are evaluated in f64 and rounded to f32 (the
  // correctly rounded f32 values torch computes), then the f32 reciprocal.
  Tensor i2 = to(g.iota(2 * Expr::index_var(), half, DType::I64), DType::F64);
  Tensor expo = to(to(i2 / static_cast<double>(rotary_dim), DType::F32), DType::F64);
  Tensor power = to(exp2(expo * std::log2(theta)), DType::F32);
  Tensor inv_freq = power.recip();
  // angle = float(pos) * inv_freq in f32; cos / sin of that f32 angle in f64.
  Tensor angle = to(positions, DType::F32).unsqueeze(-1) * inv_freq;
  Tensor a64 = to(angle, DType::F64);
  return {to(cos(a64), dtype), to(sin(a64), dtype)};
}

Tensor rotate_half(const Tensor& x) {
  auto d = const_of(x.dim(-1));
  if (!d || *d % 2 != 0)
    throw ShapeError("rotate_half: the last dim of " + x.describe() + " must be constant and even");
  Tensor x1 = x.slice(-1, 0, *d / 2);
  Tensor x2 = x.slice(-1, *d / 2, *d);
  return cat({-x2, x1}, -1);
}

Tensor apply_rotary_emb(const Tensor& x, const Tensor& cos_t, const Tensor& sin_t,
                        RopeLayout layout) {
  const std::string op = "apply_rotary_emb";
  if (!is_float(x.dtype()))
    throw DTypeError(op + ": x must be a float tensor, got " + x.describe());
  if (x.rank() == 0 || cos_t.rank() == 0 || cos_t.rank() != sin_t.rank() ||
      !provably_equal(sin_t.dim(-1), cos_t.dim(-1)) || !const_of(x.dim(-1)) ||
      !const_of(cos_t.dim(-1)))
    throw ShapeError(op + ": x " + x.describe() + ", cos " + cos_t.describe() + " and sin " +
                     sin_t.describe() + " need constant, matching last dims");
  const int64_t d = *const_of(x.dim(-1));
  const int64_t w = *const_of(cos_t.dim(-1));
  // Half-width tables rotate r = 2w features; HF's full-width tables cat(f, f)
  // (only possible when 2w > d) rotate r = w and repeat their first half.
  int64_t r = 2 * w;
  Tensor c = cos_t;
  Tensor s = sin_t;
  if (layout == RopeLayout::HalfRotate && r > d && w % 2 == 0) {
    r = w;
    c = c.slice(-1, 0, r / 2);
    s = s.slice(-1, 0, r / 2);
  }
  if (r > d)
    throw ShapeError(op + ": tables cos " + cos_t.describe() + " rotate " + std::to_string(r) +
                     " features, more than x " + x.describe() + " has");
  c = to(c, x.dtype());
  s = to(s, x.dtype());
  if (layout == RopeLayout::HalfRotate && r == d) {
    // x * [c, c] + roll(x, r / 2) * [-s, s]: the same products and sums as
    // the half-by-half form below (bit for bit), but element-wise over views
    // (tables repeated, x rolled) instead of a cat (zeros and two Scatters,
    // which end fusion), so the rotation fuses with the Q / K projection's
    // kernels around it.
    Graph& g = *x.graph();
    const int axis = static_cast<int>(c.rank()) - 1;
    const Tensor sign = to(ge(arange(g, r, DType::I64), r / 2), x.dtype()) * 2.0 - 1.0;
    return x * c.repeat_axis(axis, 2) + roll(x, {r / 2}, {-1}) * (s.repeat_axis(axis, 2) * sign);
  }
  if (layout == RopeLayout::Interleaved && r == d) {
    // x * c' + swap(x) * s' with c'[j] = c[j / 2], s'[j] = s[j / 2] * (j odd ? 1 : -1) and
    // swap(x)[j] = x[j ^ 1]: the complex multiply below product for product (x * -s is
    // -(x * s) exactly), element-wise over views instead of a stack (zeros and two
    // Scatters with two-element rows, which end fusion).
    Graph& g = *x.graph();
    const int axis = static_cast<int>(c.rank()) - 1;
    std::vector<Expr> pairs(x.shape().begin(), x.shape().end() - 1);
    pairs.push_back(r / 2);
    pairs.push_back(2);
    const Tensor swapped = flip(x.reshape(pairs), {-1}).reshape(x.shape());
    const Tensor sign =
        to(g.iota(Expr::index_var() % Expr(2), r, DType::I64), x.dtype()) * 2.0 - 1.0;
    return x * repeat_interleave(c, 2, axis) + swapped * (repeat_interleave(s, 2, axis) * sign);
  }
  Tensor xr = r == d ? x : x.slice(-1, 0, r);
  std::vector<Tensor> parts;
  if (layout == RopeLayout::HalfRotate) {
    // x * cos + rotate_half(x) * sin, half by half.
    Tensor x1 = xr.slice(-1, 0, r / 2);
    Tensor x2 = xr.slice(-1, r / 2, r);
    parts = {x1 * c - x2 * s, x2 * c + x1 * s};
  } else {
    // Complex multiply of (x[2i], x[2i+1]) by (cos, sin), as torch's complex64 mul.
    std::vector<Expr> pairs(xr.shape().begin(), xr.shape().end() - 1);
    pairs.push_back(r / 2);
    pairs.push_back(2);
    Tensor xp = xr.reshape(pairs);
    Tensor re = select(xp, -1, 0);
    Tensor im = select(xp, -1, 1);
    Tensor rot = stack({re * c - im * s, re * s + im * c}, -1);
    std::vector<Expr> flat(rot.shape().begin(), rot.shape().end() - 2);
    flat.push_back(r);
    parts = {rot.reshape(flat)};
  }
  if (r < d) parts.push_back(x.slice(-1, r, d));
  return parts.size() == 1 ? parts[0] : cat(parts, -1);
}

}  // namespace luminal
