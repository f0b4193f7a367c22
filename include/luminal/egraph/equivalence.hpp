#pragma once
// Equivalence fuzzing (SPEC section 6): saturate a graph, draw many random
// candidates from the one e-graph, run each on the reference interpreter and
// compare with the original graph. Every core rule is exact, so candidates
// must agree BIT FOR BIT (NaN equals NaN); a disagreement names the
// candidate, the output, the element and the first class (in the
// candidate's topological order) whose value differs, with the e-node the
// candidate chose for it and the HLIR node the class came from.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"

namespace luminal::egraph {

using Inputs = std::map<std::string, TensorData>;

/// Deterministic inputs for every input of `graph` at these dims: floats in
/// [-2, 2] on a 1/64 grid (exactly representable in every float dtype), ints
/// in [0, 3], bool 0/1. Inputs already in `given` are kept.
Inputs random_inputs(const Graph& graph, const DimMap& dims, uint64_t seed, Inputs given = {});

/// Run `graph` on the interpreter; returns every output.
std::map<std::string, TensorData> run_graph(const Graph& graph, const Inputs& inputs,
                                            const DimMap& dims = {});

/// "" if the tensors are equal bit for bit (NaN == NaN), else a description
/// of the first differing element.
std::string compare_exact(const TensorData& expected, const TensorData& actual);

struct FuzzOptions {
  size_t candidates = 32;
  uint64_t seed = 1;
  DimMap dims;
  Inputs inputs;  // completed by random_inputs()
  Budget budget;
  /// The schedule to saturate with (default: the registry's pipeline).
  std::optional<Schedule> schedule;
  const RuleRegistry* registry = nullptr;  // default: RuleRegistry::global()
};

struct FuzzResult {
  SaturationReport saturation;
  size_t egraph_nodes = 0, egraph_classes = 0;
  size_t checked = 0;   // candidates run
  size_t distinct = 0;  // structurally distinct among them
  /// For each op that is not an HLIR primitive (View, MatMul, backend ops):
  /// how many checked candidates use it.
  std::map<std::string, size_t> non_hlir_uses;
  std::vector<std::string> failures;
};

/// Import `graph`, saturate, then check options.candidates random candidates
/// (the first one is the original choice, the second the "first" choice).
FuzzResult fuzz_equivalence(const Graph& graph, const FuzzOptions& options);

/// Check one candidate against the original graph's outputs; "" if equal.
std::string check_candidate(const EGraph& egraph, const ImportedGraph& imported,
                            const Candidate& candidate, const Graph& original, const Inputs& inputs,
                            const DimMap& dims);

}  // namespace luminal::egraph
