// Equivalence fuzzing against the reference interpreter (see equivalence.hpp).

#include "luminal/egraph/equivalence.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <sstream>

#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::egraph {

Inputs random_inputs(const Graph& graph, const DimMap& dims, uint64_t seed, Inputs given) {
  std::mt19937_64 rng(seed);
  for (NodeId id : graph.inputs()) {
    const Node& n = graph.node(id);
    if (given.count(n.name)) continue;
    std::vector<int64_t> shape;
    for (const Expr& d : n.shape) shape.push_back(d.eval(dims));
    TensorData t(n.dtype, shape);
    if (is_quantized(n.dtype)) {
      // Random blocks whose f16 scales (and Q4_1 minimums) are small exact values.
      const DTypeInfo& info = dtype_info(n.dtype);
      for (size_t b = 0; b < t.nbytes() / info.block_bytes; ++b) {
        std::byte* block = t.data() + b * info.block_bytes;
        for (size_t k = 0; k < info.block_bytes; ++k) block[k] = static_cast<std::byte>(rng());
        const size_t scales = n.dtype == DType::Q4_1 ? 2 : 1;
        for (size_t k = 0; k < scales; ++k) {
          const auto v = static_cast<float>(static_cast<int64_t>(rng() % 17) - 8) / 64.0f;
          const uint16_t bits = float_to_f16_bits(v);
          std::memcpy(block + 2 * k, &bits, 2);
        }
      }
      given.emplace(n.name, std::move(t));
      continue;
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      const uint64_t r = rng();
      if (is_float(n.dtype))
        t.set(i, static_cast<double>(static_cast<int64_t>(r % 257) - 128) / 64.0);
      else if (n.dtype == DType::Bool)
        t.set_int(i, static_cast<int64_t>(r & 1));
      else
        t.set_int(i, static_cast<int64_t>(r % 4));
    }
    given.emplace(n.name, std::move(t));
  }
  return given;
}

std::map<std::string, TensorData> run_graph(const Graph& graph, const Inputs& inputs,
                                            const DimMap& dims) {
  Interpreter it(graph);
  for (const auto& [name, data] : inputs)
    if (graph.find_input(name)) it.set_input(name, data);
  it.run(dims);
  return it.outputs();
}

std::string compare_exact(const TensorData& expected, const TensorData& actual) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "expected " + expected.describe() + ", got " + actual.describe();
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool same;
    if (is_float(expected.dtype())) {
      const double a = expected.get(i), b = actual.get(i);
      same = (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
      if (!same) {
        std::ostringstream os;
        os.precision(17);
        os << "element " << i << ": expected " << a << ", got " << b;
        return os.str();
      }
    } else {
      same = expected.get_int(i) == actual.get_int(i);
      if (!same)
        return "element " + std::to_string(i) + ": expected " +
               std::to_string(expected.get_int(i)) + ", got " + std::to_string(actual.get_int(i));
    }
  }
  return "";
}

namespace {

// The HLIR node(s) a class came from, for messages.
std::string origin(const EGraph& eg, const ImportedGraph& imp, const Graph& original, ClassId c) {
  for (NodeId id = 0; id < imp.node_class.size(); ++id)
    if (eg.find(imp.node_class[id]) == c)
      return "HLIR node %" + std::to_string(id) + " " +
             std::string(op_name(original.node(id).kind));
  return "no HLIR node (created by rules)";
}

// Where two realisations first disagree: the reference (original choice) and
// the candidate, both with every class as an output.
std::string first_difference(const EGraph& eg, const ImportedGraph& imp, const Candidate& cand,
                             const Graph& original, const Inputs& inputs, const DimMap& dims) {
  CandidateSpace space(eg, imp.roots(eg));
  const Extracted ref = extract(eg, imp, space.prefer(imp.node_enode), {true});
  const Extracted got = extract(eg, imp, cand, {true});
  const auto ref_values = run_graph(*ref.graph, inputs, dims);
  const auto got_values = run_graph(*got.graph, inputs, dims);
  for (const auto& [cls, name] : got.class_outputs) {
    auto it = ref_values.find(name);
    if (it == ref_values.end()) continue;
    const std::string diff = compare_exact(it->second, got_values.at(name));
    if (diff.empty()) continue;
    return "first differing class c" + std::to_string(cls) + " " + eg.info(cls).to_string() + " (" +
           origin(eg, imp, original, cls) + "): the candidate computes it as " +
           eg.node_text(cand.at(cls)) + ", " + diff;
  }
  return "no single differing class found";
}

std::string check_against(const EGraph& eg, const ImportedGraph& imp, const Candidate& cand,
                          const Graph& original, const std::map<std::string, TensorData>& expected,
                          const Inputs& inputs, const DimMap& dims) {
  std::map<std::string, TensorData> actual;
  try {
    actual = run_graph(*extract(eg, imp, cand).graph, inputs, dims);
  } catch (const Error& e) {
    return std::string("running the candidate failed: ") + e.what();
  }
  for (const auto& [name, want] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) return "output \"" + name + "\" is missing";
    const std::string diff = compare_exact(want, it->second);
    if (diff.empty()) continue;
    std::string where;
    try {
      where = first_difference(eg, imp, cand, original, inputs, dims);
    } catch (const Error& e) {
      where = std::string("(diagnosis failed: ") + e.what() + ")";
    }
    return "output \"" + name + "\" " + diff + "; " + where;
  }
  return "";
}

}  // namespace

std::string check_candidate(const EGraph& egraph, const ImportedGraph& imported,
                            const Candidate& candidate, const Graph& original, const Inputs& inputs,
                            const DimMap& dims) {
  return check_against(egraph, imported, candidate, original, run_graph(original, inputs, dims),
                       inputs, dims);
}

FuzzResult fuzz_equivalence(const Graph& graph, const FuzzOptions& options) {
  FuzzResult result;
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, graph);
  const RuleRegistry& registry = options.registry ? *options.registry : RuleRegistry::global();
  result.saturation = run_schedule(eg, options.schedule ? *options.schedule : registry.pipeline(),
                                   registry, options.budget);
  result.egraph_nodes = eg.num_nodes();
  result.egraph_classes = eg.num_classes();

  const Inputs inputs = random_inputs(graph, options.dims, options.seed, options.inputs);
  const auto expected = run_graph(graph, inputs, options.dims);
  CandidateSpace space(eg, imp.roots(eg));
  std::mt19937_64 rng(options.seed);
  std::set<uint64_t> hashes;
  for (size_t i = 0; i < options.candidates; ++i) {
    const Candidate cand = i == 0   ? space.prefer(imp.node_enode)
                           : i == 1 ? space.first()
                                    : space.random(rng);
    const uint64_t h = space.hash(cand);
    hashes.insert(h);
    std::set<OpId> used;
    for (ClassId c : space.reachable(cand))
      if (!hlir_kind(eg.op(cand.at(c)))) used.insert(eg.op(cand.at(c)));
    for (OpId op : used) ++result.non_hlir_uses[OpRegistry::global().name(op)];
    ++result.checked;
    const std::string failure = check_against(eg, imp, cand, graph, expected, inputs, options.dims);
    if (!failure.empty()) {
      std::ostringstream os;
      os << "candidate #" << i << " (hash " << std::hex << h << std::dec << "): " << failure;
      result.failures.push_back(os.str());
    }
  }
  result.distinct = hashes.size();
  return result;
}

}  // namespace luminal::egraph
