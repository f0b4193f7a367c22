#pragma once
// The e-graph: a set of equivalence classes (e-classes) of e-nodes.
//
// An e-class stands for one LOGICAL tensor (a shape, a dtype and values); an
// e-node is an op (HLIR or backend, see op_registry.hpp), an immutable payload
// and child e-classes. Two e-nodes in one class compute the same tensor.
// Operand views of the HLIR are explicit `View(view)(x)` nodes meaning "x's
// dense row-major materialisation read through `view`" (see docs/EGRAPH.md).
//
// The engine follows egg (Willsey et al. 2021): e-nodes are hash-consed, a
// union-find with path compression tracks class identity, and congruence is
// restored by an explicit, incremental rebuild() that repairs the parents of
// merged classes from a worklist. Every container is a vector or an
// open-addressing table keyed by content, and every iteration is in id order,
// so the same sequence of operations gives the same ids in every run.
//
// Per-class analysis: the TensorInfo (dtype and shape) inferred by the op
// registry, checked equal when classes merge (an unsound rule that equates
// tensors of different shapes is reported immediately), and an optional
// "uniform" Scalar when every element of the tensor is known to be that
// constant (constant folding with the interpreter's semantics).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "luminal/egraph/op_registry.hpp"
#include "luminal/egraph/payload.hpp"
#include "luminal/egraph/scalar.hpp"

namespace luminal::egraph {

using ClassId = uint32_t;
using ENodeId = uint32_t;
using PayloadId = uint32_t;
inline constexpr uint32_t kNoId = 0xffffffffu;

struct ENode {
  OpId op = 0;
  PayloadId payload = 0;
  uint32_t first_child = 0;  // index into the e-graph's child pool
  uint32_t num_children = 0;
};

class EGraph {
public:
  EGraph();

  // ---- payloads (interned: equal payloads get equal ids) --------------------
  PayloadId intern(const Payload& p);
  const Payload& payload(PayloadId id) const { return payloads_[id]; }
  /// The id of the empty payload.
  static constexpr PayloadId kNoPayload = 0;

  // ---- building ---------------------------------------------------------------
  /// Add an e-node (children are canonicalised) and return its class. An
  /// existing equal e-node returns its class and adds nothing. Throws
  /// luminal::Error if the op's infer rejects the children.
  ClassId add(OpId op, PayloadId payload, std::span<const ClassId> children);
  ClassId add(OpId op, const Payload& payload, std::span<const ClassId> children) {
    return add(op, intern(payload), children);
  }
  ClassId add(OpId op, const Payload& payload, std::initializer_list<ClassId> children) {
    return add(op, intern(payload), std::span<const ClassId>(children.begin(), children.size()));
  }
  ClassId add(OpKind op, const Payload& payload, std::initializer_list<ClassId> children) {
    return add(op_id(op), payload, children);
  }
  /// The class of an existing e-node, if any (children are canonicalised).
  std::optional<ClassId> lookup(OpId op, PayloadId payload,
                                std::span<const ClassId> children) const;
  /// Assert that two classes are equal. Returns false if they already were.
  /// Throws luminal::Error if their TensorInfos differ. Call rebuild() before
  /// reading the e-graph again.
  bool merge(ClassId a, ClassId b);
  /// Restore the congruence invariant (and the analysis) after merges.
  void rebuild();
  /// True when no merge is waiting for rebuild().
  bool clean() const { return pending_.empty() && analysis_pending_.empty(); }

  // ---- reading ----------------------------------------------------------------
  ClassId find(ClassId id) const;
  bool same(ClassId a, ClassId b) const { return find(a) == find(b); }
  /// Canonical class ids in increasing order.
  std::vector<ClassId> class_ids() const;
  size_t num_classes() const { return num_classes_; }
  /// Distinct live e-nodes.
  size_t num_nodes() const { return num_live_nodes_; }
  /// E-nodes ever created (live or merged away by congruence): ids are below this.
  size_t num_node_slots() const { return nodes_.size(); }
  /// Number of class ids ever created: ids are below this.
  size_t num_class_slots() const { return parent_.size(); }
  /// The e-nodes of a class (canonical, in increasing id order after rebuild()).
  std::span<const ENodeId> nodes(ClassId id) const { return classes_[find(id)].nodes; }
  /// The e-nodes that have a child in this class.
  std::span<const ENodeId> parents(ClassId id) const { return classes_[find(id)].parents; }
  const ENode& node(ENodeId id) const { return nodes_[id]; }
  std::span<const ClassId> children(ENodeId id) const {
    return {child_pool_.data() + nodes_[id].first_child, nodes_[id].num_children};
  }
  OpId op(ENodeId id) const { return nodes_[id].op; }
  const Payload& node_payload(ENodeId id) const { return payloads_[nodes_[id].payload]; }
  /// Canonical class of an e-node.
  ClassId class_of(ENodeId id) const { return find(node_class_[id]); }
  /// False once congruence closure found the e-node equal to an older one.
  bool alive(ENodeId id) const { return forward_[id] == kNoId; }
  /// The live e-node equal to `id` (itself if alive).
  ENodeId canonical_node(ENodeId id) const;
  /// True if the class holds an e-node with this op.
  bool has_op(ClassId id, OpId op) const;

  const TensorInfo& info(ClassId id) const { return classes_[find(id)].info; }
  const std::optional<Scalar>& uniform(ClassId id) const { return classes_[find(id)].uniform; }

  /// A counter that grows whenever a node is added or two classes merge.
  uint64_t version() const { return version_; }
  /// Estimate of the memory held by the e-graph, in bytes.
  size_t memory_bytes() const;

  // ---- diagnostics -------------------------------------------------------------
  /// "Mul", "View [s, 64] {_z * 64, _z}", "SumReduce 1"
  std::string node_label(ENodeId id) const;
  /// "(Mul c3 c7)"
  std::string node_text(ENodeId id) const;
  /// Graphviz DOT: one cluster per class, edges from e-nodes to child classes.
  std::string to_dot() const;
  /// One line per class: `c3 f32[s, 64] = (Mul c1 c2) | (View ... c9)`.
  std::string to_text() const;

private:
  struct EClass {
    std::vector<ENodeId> nodes;
    std::vector<ENodeId> parents;
    TensorInfo info;
    std::optional<Scalar> uniform;
  };

  // Content hash of (op, payload, children).
  static uint64_t hash_node(OpId op, PayloadId payload, std::span<const ClassId> children);
  ENodeId memo_find(OpId op, PayloadId payload, std::span<const ClassId> children,
                    uint64_t h) const;
  void memo_insert(ENodeId id, uint64_t h);
  void memo_erase(ENodeId id, uint64_t h);
  void memo_grow();
  uint64_t node_hash(ENodeId id) const;
  void canonicalize_children(ENodeId id);
  void repair(ClassId id);
  std::optional<Scalar> compute_uniform(ENodeId id) const;
  void clean_class(ClassId id);
  // Empty `list` into a sorted, duplicate-free list of canonical ids.
  std::vector<ClassId> take_canonical(std::vector<ClassId>& list) const;

  std::vector<ENode> nodes_;
  std::vector<ClassId> child_pool_;
  std::vector<ClassId> node_class_;      // class at creation (find() for the canonical one)
  std::vector<ENodeId> forward_;         // kNoId if alive, else the congruent node that replaced it
  mutable std::vector<ClassId> parent_;  // union-find (path compression in find)
  std::vector<EClass> classes_;          // indexed by ClassId; only roots are meaningful
  std::vector<uint32_t> memo_;           // open addressing: 0 empty, kTomb deleted, else id + 1
  size_t memo_used_ = 0;                 // live + tombstones
  std::vector<Payload> payloads_;
  std::unordered_map<size_t, std::vector<PayloadId>> payload_index_;  // hash -> ids
  size_t payload_bytes_ = 0;
  std::vector<ClassId> pending_;           // merged roots whose parents need repair
  std::vector<ENodeId> analysis_pending_;  // nodes whose uniform value may have changed
  std::vector<ClassId> dirty_;             // classes whose node lists need cleaning
  size_t num_classes_ = 0;
  size_t num_live_nodes_ = 0;
  uint64_t version_ = 0;
};

}  // namespace luminal::egraph
