#pragma once
// Fused scaled-dot-product attention on the CPU backend (issue 5).
//
// `CpuAttention(spec)(q, k, v[, mask])` is a kernel op (OpInfo::kernel_group)
// standing for exactly what frontend scaled_dot_product_attention builds from
// primitives:
//
//   raw    = q @ k^T                        (a MatMul, spec.qk)
//   scores = raw * scale                    (scale: an f32 constant)
//   scores = where(mask, scores, -inf)      (only with a bool mask, read through spec.mask)
//   probs  = where(amax(scores, -1) == -inf, 0, softmax(scores, -1))   (torch's _safe_softmax)
//   out    = probs @ v                      (a MatMul, spec.pv)
//
// Its lowering rebuilds that subgraph with the frontend's own functions, so
// it is equivalent by construction. The rule (add_attention_rules) starts at
// the final MatMul, finds the scores MatMul, the scale and the mask below it
// with a bounded walk, rebuilds the middle (scale, mask, safe softmax) in a
// scratch graph and accepts only when every one of those nodes already exists
// in the e-graph with those classes (EGraph::lookup): no rule can
// misrecognise a near-miss, whatever the walk found. Recognised forms are all
// that frontend attention produces: no mask, causal (a bool mask), any bool
// attn_mask, grouped-query heads (k / v read per kv head through the MatMul
// strides, no copy), decode (one query row, a KV cache of dynamic length read
// in place) and prefill. Additive (float) masks are not recognised.
//
// The kernel (generate_attention_kernel) works on tiles of up to 16 output
// rows that read the same K / V rows (consecutive query rows of a head, and
// the heads of one GQA group), so each K / V row loaded serves the whole tile.
// Each row gets an online softmax over blocks of 64 keys (running max,
// running sum, f32 accumulation, the prelude's lk::exp2f): scores are never
// written to memory. Two layouts of the work, both plain C++ vector types:
//   * one row per vector lane (tiles of 5-16 rows: prefill), any strides;
//   * with AVX-512, contiguous heads and head dims that are multiples of 16,
//     the head dim along the lanes for tiles of 1-4 rows (decode).
// Strides known at generation time are compile-time constants. Keys after
// the last one any row of a tile may see (causal) are not computed; masked
// keys get probability 0; a row whose keys are all masked is 0. Dynamic
// sequence / cache lengths are kernel arguments. The launch has 16 items per
// output row (KernelLaunch::align 16: chunks never split a row), so the pool spreads
// even a 9-row decode step over its threads. The second product must read
// whole rows of the probabilities (always so for attention); a view that
// does not makes the kernel fail with kKernelUnsupportedLayout rather than
// compute garbage.
// Only f32 is fused (other dtypes keep their generated kernels).

#include <optional>
#include <span>
#include <string>

#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/backends/cpu/region.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/egraph/matmul.hpp"
#include "luminal/egraph/op_registry.hpp"

namespace luminal::egraph {
class RuleRegistry;
}

namespace luminal::cpu {

struct AttentionSpec {
  egraph::MatMulSpec qk;  // raw = q @ k^T: children 0 (q) and 1 (k)
  egraph::MatMulSpec pv;  // out = probs @ v: probs is the MatMul's A, child 2 (v) its B
  double scale = 1.0;     // value of the f32 constant the raw scores are multiplied by
  /// The view the where() reads child 3 (a bool tensor) through, over the
  /// scores' shape; nullopt without a mask.
  std::optional<View> mask;

  egraph::Payload to_payload() const;
  /// Throws luminal::Error if the payload is not an attention payload.
  static AttentionSpec from_payload(const egraph::Payload& p);
};

/// The middle of attention, as frontend scaled_dot_product_attention builds
/// it from the raw scores q @ k^T: scale, where(mask, ., -inf), safe softmax.
/// `mask` must have the scores' shape (already broadcast).
Tensor attention_probs(const Tensor& raw_scores, double scale, const std::optional<Tensor>& mask);

/// The CpuAttention op, registered on first use.
egraph::OpId attention_op();

/// Whether the fused kernel takes this spec (f32 is checked by the caller):
/// constant head dims up to 256, probabilities read row by row.
bool attention_kernel_supports(const AttentionSpec& spec);

/// Add the ruleset "cpu-attention" (rule "cpu-attention") to phase "lower".
void add_attention_rules(egraph::RuleRegistry& registry);

/// The kernel of a "CpuAttention" group (the members attention_op's lowering
/// created); the parameters are derived again from the members. nullopt when
/// the members do not have that form.
std::optional<CpuKernel> generate_attention_kernel(const Graph& graph, const Region& region,
                                                   const std::string& name);

}  // namespace luminal::cpu
