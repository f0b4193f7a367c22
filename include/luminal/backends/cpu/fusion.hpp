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
// fusion; smaller fusions appear as the fusions of its descendants. The search
// picks by timing.

#include "luminal/egraph/op_registry.hpp"

namespace luminal::egraph {
class Ruleset;
}

namespace luminal::cpu {

inline constexpr size_t kMaxFusedEntries = 48;

/// The CpuFused op (registered on first use).
egraph::OpId fused_op();

/// The fusion rules ("cpu-fuse").
egraph::Ruleset fusion_rules();

}  // namespace luminal::cpu
