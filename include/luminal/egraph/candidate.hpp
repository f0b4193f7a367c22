#pragma once
// Candidates: one e-node choice per reachable e-class — the unit the search
// extracts, times and mutates (SPEC section 6).
//
// E-graphs contain cycles (x * 1 = x puts Mul(x, 1) into x's own class), so
// a choice must be acyclic. CandidateSpace produces only acyclic choices: it
// picks, for given per-node weights, the choice minimising
//
//     cost(class) = min over its e-nodes n of  weight(n) + max(cost(children of n))
//
// with Knuth's generalisation of Dijkstra's algorithm. Because every weight is
// >= 1, a chosen node always costs more than each of its children, so
// following choices can never return to a class: the result is acyclic by
// construction. Random weights give random candidates; weights that favour a
// base candidate except at a few classes give its mutations. All randomness
// comes from a caller-provided std::mt19937_64 and is mapped to weights by
// bit operations (not std::uniform_*_distribution), so a seed gives the same
// candidates with every standard library.

#include <cstdint>
#include <random>
#include <vector>

#include "luminal/egraph/egraph.hpp"

namespace luminal::egraph {

struct Candidate {
  /// Chosen e-node per class id (kNoId where no choice is made); indexed by
  /// canonical class ids of the e-graph the candidate was made for.
  std::vector<ENodeId> choice;
  ENodeId at(ClassId c) const { return c < choice.size() ? choice[c] : kNoId; }
  bool operator==(const Candidate&) const = default;
};

class CandidateSpace {
public:
  /// The e-graph must be clean and must not change while the space is used.
  CandidateSpace(const EGraph& egraph, std::vector<ClassId> roots);

  /// The deterministic "smallest" candidate: all weights 1 (fewest levels of
  /// nesting; ties broken by e-node id, i.e. the oldest e-node).
  Candidate first() const;
  /// The choice of these e-nodes (as far as acyclic): each listed node is
  /// preferred in its class (e.g. ImportedGraph::node_enode = the original graph).
  Candidate prefer(const std::vector<ENodeId>& nodes) const;
  /// A random acyclic candidate.
  Candidate random(std::mt19937_64& rng) const;
  /// `base` with the choice changed at up to `changes` random reachable
  /// classes that have alternatives (acyclic; may equal base if no acyclic
  /// alternative exists there).
  Candidate mutate(const Candidate& base, std::mt19937_64& rng, size_t changes) const;
  /// The minimum-cost candidate for explicit per-e-node weights (indexed by
  /// e-node id, each >= 1; 0 forbids the node).
  Candidate with_weights(const std::vector<uint64_t>& weights) const;

  /// Classes reachable from the roots through the choice, children before
  /// parents. Throws luminal::Error if a reachable class has no choice or the
  /// choice is cyclic.
  std::vector<ClassId> reachable(const Candidate& c) const;
  bool is_valid(const Candidate& c) const;
  /// Structural hash of the program a candidate denotes: ops, payloads and
  /// structure of the reachable choice (not class or node ids), so candidates
  /// differing only in unreachable classes hash equal.
  uint64_t hash(const Candidate& c) const;
  /// Reachable classes with more than one e-node.
  size_t num_choices(const Candidate& c) const;

  const std::vector<ClassId>& roots() const { return roots_; }
  const EGraph& egraph() const { return egraph_; }

private:
  const EGraph& egraph_;
  std::vector<ClassId> roots_;
};

}  // namespace luminal::egraph
