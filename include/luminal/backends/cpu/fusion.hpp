#pragma once
// Fusion for the CPU backend: the e-graph op `CpuFused`, one generated kernel
// computing a small DAG of element-wise ops, views, casts, constants and
// reductions (softmax, RMS / layer norm, activation chains, residual adds)
// without writing its intermediates to memory.
//
// Payload: the body — the result's dtype and shape, and entries in
// topological order, each (op id, op payload, operand refs), where a ref >= 0
// is an earlier entry and a ref < 0 the child (-1 - ref) of the e-node; the
// last entry is the result. Lowering rebuilds exactly those HLIR nodes from
// the children, so a CpuFused node is equal to its class by construction, and
// extraction records them as one kernel group (the region CpuProgram
// compiles).
//
// The rules (one per fusible HLIR op) add, for every e-node of a fusible op,
// the largest body reachable from it: children classes are inlined through
// their lowest-id fusible HLIR e-node, and stop the body (become kernel
// inputs) at inputs, gathers, scatters, classes holding a matrix product
// (which stays a library or matmul kernel), classes already on the current
// path (e-graph cycles such as x = x * 1), and when the body would exceed
// kMaxFusedEntries. Every class thus offers its unfused form and its largest
// fusion; smaller fusions appear as the fusions of its descendants. Where the
// largest body would evaluate transcendentals once per element of a broadcast
// (a rotary table [s, d] inside the rotation of [heads, s, d]), a second body
// leaves that class to its own kernel. The search picks by timing.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/op_registry.hpp"

namespace luminal::egraph {
class Ruleset;
}

namespace luminal::cpu {

// Large enough for an f32 GELU (exact erf, ~130 entries with its constants)
// plus a bias and a residual add in one body.
inline constexpr size_t kMaxFusedEntries = 192;

/// The CpuFused op (registered on first use).
egraph::OpId fused_op();

/// The fusion rules ("cpu-fuse").
egraph::Ruleset fusion_rules();

/// The patterns the fusion rules start bodies from (one per fusible HLIR op).
const std::vector<std::string>& fusion_root_patterns();

/// A CpuFused body: its payload (see above) and the classes its refs < 0 name.
struct FusedBody {
  egraph::Payload payload;
  std::vector<egraph::ClassId> inputs;
};

/// The largest body from e-node `node` of class `cls`, as the fusion rules
/// build it; nullopt when it would be a single op or read its own result.
std::optional<FusedBody> build_fused_body(const egraph::EGraph& eg, egraph::ClassId cls,
                                          egraph::ENodeId node);

/// Rebuild a body's HLIR nodes from its realised inputs; returns the result.
Tensor lower_fused_body(Graph& g, const egraph::Payload& body, std::span<const Tensor> inputs);

/// Ops whose classes bodies may inline through (not boundaries) although they
/// are kernel ops: CpuFused and the ops registered here (kernel ops that are
/// themselves fusions, such as CpuSgemmEpilogue).
void add_fusion_transparent_op(egraph::OpId op);

}  // namespace luminal::cpu
