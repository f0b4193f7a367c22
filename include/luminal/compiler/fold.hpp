#pragma once
// Folding of repeated blocks (SPEC section 6, "Repeated structure"): a
// 30-layer model must not cost 30x the e-graph and search of one layer.
//
// find_blocks() finds runs of identical blocks in an HLIR graph: contiguous
// node ranges (models are built layer by layer, so a layer's nodes are
// consecutive ids) that repeat with a period P, node for node (same ops,
// dtypes, shapes, payloads and operand views), where every instance reads
//   - its own nodes at the same positions, or
//   - values from outside the instance, the *ports* (its weights and KV
//     caches, the residual stream of the previous instance, shared tables),
//     numbered in first-use order, consistently: a port is one value per
//     instance, whatever its position of use.
// Operand-less leaves (Constant, Iota) outside the range are cloned into the
// block. Input and Output nodes are never block members.
//
// compile() then builds one representative graph per block kind
// (block_graph: ports become Inputs "__port<i>", persistent if they are
// persistent inputs, and values used outside become Outputs "__out<offset>"),
// saturates and searches that graph only, and expand() instantiates the
// winner once per instance with the instance's own ports.
// Nodes outside every block are kept as they are.

#include <cstddef>
#include <memory>
#include <vector>

#include "luminal/core/graph.hpp"

namespace luminal::compiler {

/// One kind of repeated block and its instances.
struct BlockKind {
  NodeId period = 0;                       // nodes per instance
  std::vector<NodeId> starts;              // first node id of each instance
  std::vector<std::vector<NodeId>> ports;  // [instance][port]: producers outside it
  std::vector<NodeId> outputs;             // offsets whose value is used outside
  bool is_member(NodeId id) const;         // a block node (not Input/Output) of an instance
  const Graph* graph = nullptr;            // the graph this kind was found in
};

struct FoldPlan {
  std::vector<BlockKind> kinds;
  size_t instances() const;
  /// Block nodes (all instances) over all nodes of the graph.
  double coverage = 0;
};

struct FoldOptions {
  /// Blocks smaller than this are not worth folding.
  size_t min_period = 8;
  size_t max_kinds = 8;
};

/// Repeated blocks of `graph`, disjoint, the largest coverage first.
FoldPlan find_blocks(const Graph& graph, const FoldOptions& options = {});

/// Add every maximal run of nodes outside the plan's blocks (the embedding
/// before the first layer, the head after the last, anything between) as a
/// kind with one instance, so that the search covers them too (each is searched
/// as its own small graph). Returns how many were added.
size_t add_segments(const Graph& graph, FoldPlan& plan);

/// The representative graph of `kind` (its first instance).
std::unique_ptr<Graph> block_graph(const BlockKind& kind);

/// `graph` with every instance of every kind replaced by `winners[k]` (a graph
/// with the inputs and outputs of block_graph(kinds[k])).
std::unique_ptr<Graph> expand(const Graph& graph, const FoldPlan& plan,
                              const std::vector<const Graph*>& winners);

}  // namespace luminal::compiler
