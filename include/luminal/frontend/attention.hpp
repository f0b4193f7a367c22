#pragma once
// Attention and rotary position embeddings with PyTorch / Hugging Face semantics.
//
// scaled_dot_product_attention is torch's math formulation:
//     scores = (q @ k^T) * scale            (canonical matmul form, linalg.hpp)
//     scores = where(mask, scores, -inf)    (bool mask, true = attend)
//           or scores + mask                (float mask, additive, -inf allowed)
//     out    = softmax(scores, -1) @ v
// The causal mask is torch's top-left aligned `ones(L, S).tril()`: query i sees
// keys j <= i even when L != S (decoding with a cache needs the bottom-right
// alignment instead: pass `causal_mask(L, S, S - L)` or use nn::Attention).
// Masks are exact selections (where), never 0 * -inf blends. A query row whose
// keys are all masked (all scores -inf) gets zero weights and a zero output,
// as torch's _safe_softmax does (plain softmax would give NaN).
// Grouped-query attention (enable_gqa): Hq = G * Hkv; each kv head serves G
// consecutive query heads (torch's repeat_interleave), expressed as a
// broadcast view - the keys and values are not copied.
//
// Rotary embeddings (RoPE) rotate pairs of features by position-dependent
// angles: angle(pos, i) = pos * theta^(-2i / d), i < d / 2. Two layouts:
//   HalfRotate  (Hugging Face `rotate_half`): pairs (x[i], x[i + d/2]);
//               out = x * cos + rotate_half(x) * sin
//   Interleaved (GPT-J / Meta llama `view_as_complex`): pairs (x[2i], x[2i+1]).
// Tables are [.., d / 2] (one angle per pair) and broadcast against
// x[..., :d/2]; HF's full-width tables cat(freqs, freqs) [.., d] are accepted too.
// rope_cache builds them in-graph from positions (an Iota `offset + i`, so a
// symbolic KV-cache offset works) with HF's float32 formula
//     inv_freq = 1 / theta^(arange(0, d, 2) / d),   angle = float(pos) * inv_freq
// and evaluates cos / sin of the float32 angle in float64 before rounding, so
// the tables match torch.cos / torch.sin of HF's float32 angles to the last bit
// in practice (a long float32 chain would drift by ~pos * eps).

#include <optional>

#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

/// F.scaled_dot_product_attention. q [..., Hq, L, E], k [..., Hkv, S, E],
/// v [..., Hkv, S, Ev] (leading batch dims broadcast); attn_mask (bool or the
/// query dtype) broadcasts to [..., Hq, L, S]; dropout_p must be 0 (inference);
/// scale defaults to 1 / sqrt(E); is_causal and attn_mask are exclusive (as
/// torch). Without enable_gqa Hq must equal Hkv. Returns [..., Hq, L, Ev].
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt,
                                    double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

/// A bool [L, S] mask, true where key j may be attended by query i:
/// j <= i + offset. offset 0 is torch's is_causal (top-left); offset S - L is
/// the bottom-right alignment of a query block at the end of the keys (KV cache).
Tensor causal_mask(Graph& g, const Expr& l, const Expr& s, const Expr& offset = 0);

enum class RopeLayout {
  HalfRotate,   // Hugging Face: rotate_half pairs (i, i + d/2)
  Interleaved,  // GPT-J / Meta: adjacent pairs (2i, 2i + 1)
};

/// cos / sin tables of rotary embeddings, [..positions.., rotary_dim / 2].
struct RopeTables {
  Tensor cos;
  Tensor sin;
};

/// Tables for positions offset, offset + 1, ..., offset + seq_len - 1:
/// [seq_len, rotary_dim / 2] in `dtype`. rotary_dim must be even and > 0.
RopeTables rope_cache(Graph& g, const Expr& seq_len, int64_t rotary_dim, double theta = 10000.0,
                      const Expr& offset = 0, DType dtype = DType::F32);
/// Tables for an integer position tensor of any shape: [*positions.shape, rotary_dim / 2].
RopeTables rope_cache(const Tensor& positions, int64_t rotary_dim, double theta = 10000.0,
                      DType dtype = DType::F32);

/// Rotate x [..., d] by the tables (cos / sin broadcast against x[..., :r/2]).
/// Tables of width w are half-width (one angle per pair: r = 2w) whenever
/// 2w <= d; a wider HalfRotate table (2w > d) is read as HF's full-width
/// cat(freqs, freqs) (r = w, its first half is used). When r < d only the
/// first r features rotate (partial rotary, as GPT-NeoX / Phi) and the rest
/// pass through; pass half-width tables for that. Tables are cast to x's dtype
/// first, as HF does. Throws ShapeError when r does not fit d.
Tensor apply_rotary_emb(const Tensor& x, const Tensor& cos, const Tensor& sin,
                        RopeLayout layout = RopeLayout::HalfRotate);
/// Hugging Face's rotate_half: cat(-x[..., d/2:], x[..., :d/2]).
Tensor rotate_half(const Tensor& x);

}  // namespace luminal
