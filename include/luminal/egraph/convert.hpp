#pragma once
// HLIR <-> e-graph.
//
// import_graph() adds every node of a luminal::Graph: each HLIR node becomes
// an e-node of its op (payloads in op_registry.hpp); an operand read through a
// view other than the dense row-major view of its producer becomes an explicit
// `View(view)(producer)` e-node (identity views are elided). Output nodes are
// the roots.
//
// extract() rebuilds an HLIR graph from a Candidate (one e-node per reachable
// class, see candidate.hpp), with the original inputs (same names, dtypes,
// dims, persistence, in the original order — even those the candidate no
// longer reads) and outputs, so the reference interpreter can run it. View
// nodes become operand views again (composed when possible, otherwise read
// through a dense copy); non-HLIR ops are rebuilt by their registered `lower`.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/egraph/egraph.hpp"

namespace luminal::egraph {

struct Candidate;

/// What import_graph() created: the roots and the original choice.
struct ImportedGraph {
  std::vector<ClassId> outputs;      // Output classes, in graph order
  std::vector<ClassId> inputs;       // Input classes, in graph order
  std::vector<ENodeId> input_nodes;  // their Input e-nodes (payload: name, dtype, shape...)
  std::vector<ClassId> node_class;   // class of each HLIR node id
  std::vector<ENodeId> node_enode;   // e-node of each HLIR node id

  /// The output classes (the roots of every candidate), canonical in `egraph`.
  std::vector<ClassId> roots(const EGraph& egraph) const;
};

/// Add every node of `graph` to `egraph`. Writes `hlir.dot` and `egraph-import.dot`
/// to LUMINAL_DUMP_DIR when it is set.
ImportedGraph import_graph(EGraph& egraph, const Graph& graph);

/// The payload import_graph gives an HLIR node's e-node (a rule that rebuilds
/// HLIR and looks the result up in the e-graph needs the same one).
Payload node_payload(const Node& n);

/// Read tensor `t` (a logical tensor in some graph) through `view`: the
/// equivalent of the e-node View(view)(t). Composes with t's own view when
/// possible; otherwise reads a dense copy of t (Mul by one, which preserves
/// every value and dtype).
Tensor read_through(const Tensor& t, const View& view);

/// Build one HLIR op (or a View read) in `graph` from an e-node's op id,
/// payload and realised children — what extract() does for each chosen
/// HLIR e-node. Input and Output are not built here (throws luminal::Error).
Tensor build_hlir(Graph& graph, OpId op, const Payload& payload, std::span<const Tensor> children);

struct ExtractOptions {
  /// Also output every realised class as "__c<class id>" (to find the first
  /// class where two candidates disagree).
  bool debug_outputs = false;
};

struct Extracted {
  std::unique_ptr<Graph> graph;
  /// With debug_outputs: (class, output name) of every realised class, in
  /// creation (topological) order.
  std::vector<std::pair<ClassId, std::string>> class_outputs;
};

/// Build the HLIR graph of a candidate. Throws luminal::Error naming the class
/// if the candidate is cyclic, misses a reachable class, or uses an op that
/// cannot be lowered to HLIR.
Extracted extract(const EGraph& egraph, const ImportedGraph& imported, const Candidate& candidate,
                  const ExtractOptions& options = {});

}  // namespace luminal::egraph
