#pragma once
// A region: the HLIR nodes that one generated CPU kernel computes.
//
// Which nodes share a kernel is op selection, and op selection belongs to the
// e-graph (SPEC section 1, invariant 2): regions are always given by the
// caller — the search's extraction, or a test — and never discovered by the
// backend. The backend's own default (CpuProgram without regions) is one
// region per node, the unfused baseline that fused candidates must beat.

#include <string>
#include <utility>
#include <vector>

#include "luminal/core/graph.hpp"

namespace luminal::cpu {

struct Region {
  Region() = default;
  Region(std::vector<NodeId> members, std::vector<NodeId> outs = {}, std::string op = {})
      : nodes(std::move(members)), outputs(std::move(outs)), kernel_op(std::move(op)) {}
  /// Nodes computed by the kernel: any HLIR op except Input. Operands that are
  /// not members are the kernel's external inputs (read through their views).
  std::vector<NodeId> nodes;
  /// Members whose values the kernel writes to buffers (used outside the
  /// region, or graph outputs). All must have the same shape: the kernel's
  /// iteration space. A region containing a Scatter has it as its only output.
  std::vector<NodeId> outputs;
  /// The e-graph op the region implements when it is a kernel group
  /// (Graph::KernelGroup::op): "CpuSgemm" is compiled as a BLAS call (see
  /// library_kernels.hpp); empty or any other op: generated loops.
  std::string kernel_op;
};

}  // namespace luminal::cpu
