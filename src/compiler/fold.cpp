#include "luminal/compiler/fold.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/error.hpp"

namespace luminal::compiler {

namespace {

bool is_io(OpKind k) {
  return k == OpKind::Input || k == OpKind::Output;
}
bool is_inline_leaf(const Node& n) {
  return n.operands.empty() && !is_io(n.kind);
}

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ULL + (h >> 29);
}

/// Everything of a node but its name and operand producers.
uint64_t local_signature(const Node& n) {
  uint64_t h = mix(0xcbf29ce484222325ULL, static_cast<uint64_t>(n.kind));
  h = mix(h, static_cast<uint64_t>(n.dtype));
  for (const Expr& e : n.shape) h = mix(h, e.hash());
  h = mix(h, n.persistent);
  h = mix(h, std::bit_cast<uint64_t>(n.value));
  h = mix(h, static_cast<uint64_t>(n.int_value));
  if (n.kind == OpKind::Iota) h = mix(h, n.iota_expr.hash());
  h = mix(h, static_cast<uint64_t>(n.axis));
  for (const Operand& o : n.operands) {
    h = mix(h, std::hash<std::string>()(o.view.to_string()));
    h = mix(h, static_cast<uint64_t>(n.kind == OpKind::Input));
  }
  return h;
}

bool same_payload(const Node& a, const Node& b) {
  const bool same_value = std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value) ||
                          (a.value != a.value && b.value != b.value);
  return a.kind == b.kind && a.dtype == b.dtype && a.shape == b.shape &&
         a.persistent == b.persistent && same_value && a.int_value == b.int_value &&
         (a.kind != OpKind::Iota || a.iota_expr == b.iota_expr) && a.axis == b.axis &&
         a.operands.size() == b.operands.size();
}

/// Validates instances [start + j * period) against the first one and fills
/// ports and outputs. False if they are not isomorphic blocks.
bool validate(const Graph& g, const std::vector<std::vector<NodeId>>& users, BlockKind& kind) {
  const auto& nodes = g.nodes();
  const NodeId s0 = kind.starts[0], P = kind.period;
  auto in_instance = [&](NodeId id, NodeId start) {
    return id >= start && id < start + P && !is_io(nodes[id].kind);
  };
  const size_t n = kind.starts.size();
  kind.ports.assign(n, {});
  std::map<NodeId, size_t> port_of;  // first instance's producer -> index
  for (size_t j = 0; j < n; ++j) {
    const NodeId sj = kind.starts[j];
    auto& ports = kind.ports[j];
    for (NodeId p = 0; p < P; ++p) {
      const Node& a = nodes[s0 + p];
      const Node& b = nodes[sj + p];
      if (!same_payload(a, b)) return false;
      if (is_io(a.kind)) continue;
      for (size_t k = 0; k < a.operands.size(); ++k) {
        if (!(a.operands[k].view == b.operands[k].view)) return false;
        const NodeId x = a.operands[k].node, y = b.operands[k].node;
        const Node& nx = nodes[x];
        const Node& ny = nodes[y];
        if (in_instance(x, s0)) {
          if (y != x - s0 + sj) return false;
        } else if (in_instance(y, sj)) {
          return false;
        } else if (is_inline_leaf(nx)) {
          if (!is_inline_leaf(ny) || !same_payload(nx, ny)) return false;
        } else {
          const size_t idx = port_of.emplace(x, port_of.size()).first->second;
          if (ports.size() == idx) ports.push_back(y);
          if (idx >= ports.size() || ports[idx] != y) return false;
        }
      }
    }
    if (ports.size() != port_of.size()) return false;
  }
  // Offsets whose value some instance uses outside itself.
  kind.outputs.clear();
  for (NodeId p = 0; p < P; ++p) {
    if (is_io(nodes[s0 + p].kind)) continue;
    for (NodeId sj : kind.starts) {
      const auto& us = users[sj + p];
      if (std::any_of(us.begin(), us.end(), [&](NodeId u) { return !in_instance(u, sj); })) {
        kind.outputs.push_back(p);
        break;
      }
    }
  }
  return true;
}

/// Block nodes per instance (runs of weight Inputs or Outputs repeat too).
size_t members(const Graph& g, const BlockKind& kind) {
  size_t n = 0;
  for (NodeId p = 0; p < kind.period; ++p) n += !is_io(g.node(kind.starts[0] + p).kind);
  return n;
}

/// Copy `n` into `dst` with operands `ops` (already in `dst`).
Tensor copy_node(Graph& dst, const Node& n, const std::vector<Tensor>& ops) {
  switch (n.kind) {
    case OpKind::Input:
      return dst.input(n.name, n.shape, n.dtype, n.persistent);
    case OpKind::Output:
      dst.output(n.name, ops[0]);
      return ops[0];
    case OpKind::Constant:
      return is_float(n.dtype) || n.dtype == DType::Bool ? dst.constant(n.value, n.dtype)
                                                         : dst.constant_int(n.int_value, n.dtype);
    case OpKind::Iota:
      return dst.iota(n.iota_expr, n.shape[0], n.dtype);
    case OpKind::Cast:
      return dst.cast(ops[0], n.dtype);
    case OpKind::Gather:
      return dst.gather(ops[0], ops[1]);
    case OpKind::Scatter:
      return dst.scatter(ops[0], ops[1], ops[2]);
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
      return dst.reduce(n.kind, ops[0], n.axis);
    default:
      if (is_unary(n.kind)) return dst.unary(n.kind, ops[0]);
      return dst.binary(n.kind, ops[0], ops[1]);
  }
}

Tensor dense(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return Tensor(&g, id, View::contiguous(n.shape), n.dtype);
}

std::string port_name(size_t i) {
  return "__port" + std::to_string(i);
}
std::string out_name(NodeId offset) {
  return "__out" + std::to_string(offset);
}

}  // namespace

bool BlockKind::is_member(NodeId id) const {
  if (graph == nullptr || is_io(graph->node(id).kind)) return false;
  auto it = std::upper_bound(starts.begin(), starts.end(), id);
  return it != starts.begin() && id < *std::prev(it) + period;
}

size_t FoldPlan::instances() const {
  size_t n = 0;
  for (const BlockKind& k : kinds) n += k.starts.size();
  return n;
}

FoldPlan find_blocks(const Graph& graph, const FoldOptions& options) {
  FoldPlan plan;
  const auto& nodes = graph.nodes();
  const size_t n = nodes.size();
  std::vector<uint64_t> sig(n);
  std::vector<std::vector<NodeId>> users(n);
  for (NodeId i = 0; i < n; ++i) {
    sig[i] = local_signature(nodes[i]);
    for (const Operand& o : nodes[i].operands) users[o.node].push_back(i);
  }
  std::vector<bool> taken(n, false);
  size_t covered = 0;
  for (size_t round = 0; round < options.max_kinds; ++round) {
    // Candidate runs: (coverage, period, start, count), periodic by signature.
    std::vector<std::tuple<size_t, size_t, size_t, size_t>> runs;
    for (size_t P = std::max<size_t>(options.min_period, 1); 2 * P <= n; ++P) {
      size_t best_len = 0, best_start = 0;
      for (size_t i = 0, len = 0; i + P < n; ++i) {
        len = (sig[i] == sig[i + P] && !taken[i] && !taken[i + P]) ? len + 1 : 0;
        if (len > best_len) best_len = len, best_start = i + 1 - len;
      }
      const size_t count = (best_len + P) / P;
      if (count >= 2) runs.emplace_back(count * P, P, best_start, count);
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
      return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                              : std::get<1>(a) < std::get<1>(b);
    });
    bool found = false;
    for (size_t r = 0; r < runs.size() && r < 16 && !found; ++r) {
      const auto [cov, P, start, count] = runs[r];
      BlockKind kind;
      kind.graph = &graph;
      kind.period = static_cast<NodeId>(P);
      // Drop trailing instances until the rest validate (a run may end in a
      // block whose wiring differs, e.g. the last layer feeding the head).
      for (size_t c = count; c >= 2 && !found; --c) {
        kind.starts.clear();
        for (size_t j = 0; j < c; ++j) kind.starts.push_back(static_cast<NodeId>(start + j * P));
        found = validate(graph, users, kind) && !kind.outputs.empty() &&
                members(graph, kind) >= options.min_period;
      }
      if (!found) continue;
      for (NodeId s : kind.starts)
        for (NodeId p = 0; p < kind.period; ++p) {
          taken[s + p] = true;
          if (!is_io(nodes[s + p].kind)) ++covered;
        }
      plan.kinds.push_back(std::move(kind));
    }
    if (!found) break;
  }
  // Separate runs of one block (e.g. the layers before and after a layer that
  // differs) are one kind: merged when all their instances validate together.
  // Each run starts where its match started, so the phase of one run is tried
  // at every shift that keeps its instances on nodes of no other kind.
  std::vector<int> owner(n, -1);
  auto own = [&](const BlockKind& kind, int who) {
    for (NodeId st : kind.starts)
      for (NodeId p = 0; p < kind.period; ++p) owner[st + p] = who;
  };
  for (size_t k = 0; k < plan.kinds.size(); ++k) own(plan.kinds[k], static_cast<int>(k));
  auto try_merge = [&](size_t a, size_t b) {
    const BlockKind& other = plan.kinds[b];
    const int64_t P = plan.kinds[a].period;
    if (other.period != plan.kinds[a].period) return false;
    for (int64_t shift = 0; shift < 2 * P - 1; ++shift) {
      const int64_t d = shift % 2 == 0 ? shift / 2 : -(shift + 1) / 2;  // 0, -1, 1, -2...
      BlockKind merged = plan.kinds[a];
      bool free = true;
      for (NodeId st : other.starts) {
        const int64_t moved = static_cast<int64_t>(st) + d;
        if (moved < 0 || moved + P > static_cast<int64_t>(n)) free = false;
        for (int64_t i = moved; free && i < moved + P; ++i)
          free = owner[i] == -1 || owner[i] == static_cast<int>(b);
        merged.starts.push_back(static_cast<NodeId>(moved));
        if (!free) break;
      }
      if (!free) continue;
      std::sort(merged.starts.begin(), merged.starts.end());
      if (!validate(graph, users, merged)) continue;
      own(other, -1);
      own(merged, static_cast<int>(a));
      plan.kinds[a] = std::move(merged);
      return true;
    }
    return false;
  };
  for (size_t a = 0; a < plan.kinds.size(); ++a)
    for (size_t b = a + 1; b < plan.kinds.size();) {
      if (!try_merge(a, b)) {
        ++b;
        continue;
      }
      plan.kinds.erase(plan.kinds.begin() + static_cast<std::ptrdiff_t>(b));
      for (size_t k = b; k < plan.kinds.size(); ++k) own(plan.kinds[k], static_cast<int>(k));
    }
  covered = 0;
  for (NodeId i = 0; i < n; ++i) covered += owner[i] != -1 && !is_io(nodes[i].kind);
  plan.coverage = n == 0 ? 0 : static_cast<double>(covered) / static_cast<double>(n);
  return plan;
}

size_t add_segments(const Graph& graph, FoldPlan& plan) {
  const auto& nodes = graph.nodes();
  const size_t n = nodes.size();
  std::vector<std::vector<NodeId>> users(n);
  for (NodeId i = 0; i < n; ++i)
    for (const Operand& o : nodes[i].operands) users[o.node].push_back(i);
  std::vector<bool> owned(n, false);
  for (const BlockKind& kind : plan.kinds)
    for (NodeId st : kind.starts)
      for (NodeId p = 0; p < kind.period; ++p) owned[st + p] = true;
  size_t added = 0;
  for (NodeId i = 0; i < n;) {
    if (owned[i]) {
      ++i;
      continue;
    }
    NodeId end = i;
    while (end < n && !owned[end]) ++end;
    BlockKind seg;
    seg.graph = &graph;
    seg.period = end - i;
    seg.starts = {i};
    if (members(graph, seg) > 0 && validate(graph, users, seg) && !seg.outputs.empty()) {
      plan.kinds.push_back(std::move(seg));
      ++added;
    }
    i = end;
  }
  return added;
}

std::unique_ptr<Graph> block_graph(const BlockKind& kind) {
  const Graph& src = *kind.graph;
  auto g = std::make_unique<Graph>();
  std::unordered_map<NodeId, NodeId> map;  // source id -> id in g
  for (size_t i = 0; i < kind.ports[0].size(); ++i) {
    const Node& n = src.node(kind.ports[0][i]);
    const bool persistent = n.kind == OpKind::Input && n.persistent;
    map[kind.ports[0][i]] = g->input(port_name(i), n.shape, n.dtype, persistent).node();
  }
  const NodeId s0 = kind.starts[0];
  for (NodeId id = s0; id < s0 + kind.period; ++id) {
    const Node& n = src.node(id);
    if (is_io(n.kind)) continue;
    std::vector<Tensor> ops;
    for (const Operand& o : n.operands) {
      auto it = map.find(o.node);
      if (it == map.end())  // an operand-less leaf outside the block: clone it
        it = map.emplace(o.node, copy_node(*g, src.node(o.node), {}).node()).first;
      ops.emplace_back(g.get(), it->second, o.view, src.node(o.node).dtype);
    }
    map[id] = copy_node(*g, n, ops).node();
  }
  for (NodeId p : kind.outputs) g->output(out_name(p), dense(*g, map.at(s0 + p)));
  return g;
}

std::unique_ptr<Graph> expand(const Graph& graph, const FoldPlan& plan,
                              const std::vector<const Graph*>& winners) {
  if (winners.size() != plan.kinds.size())
    throw Error("fold: expand needs one winner per block kind");
  auto g = std::make_unique<Graph>();
  // Each source node's logical value (its dense buffer read through a view).
  std::vector<std::optional<Tensor>> value(graph.size());
  auto read = [&](const Operand& o) { return egraph::read_through(*value.at(o.node), o.view); };
  for (NodeId id : graph.inputs()) value[id] = copy_node(*g, graph.node(id), {});
  // Which instance starts at a node id.
  std::map<NodeId, std::pair<size_t, size_t>> instance_at;
  for (size_t k = 0; k < plan.kinds.size(); ++k)
    for (size_t j = 0; j < plan.kinds[k].starts.size(); ++j)
      instance_at[plan.kinds[k].starts[j]] = {k, j};

  for (NodeId id = 0; id < graph.size(); ++id) {
    if (auto it = instance_at.find(id); it != instance_at.end()) {
      const auto [k, j] = it->second;
      const BlockKind& kind = plan.kinds[k];
      const Graph& w = *winners[k];
      std::vector<std::optional<Tensor>> wv(w.size());
      for (NodeId wid = 0; wid < w.size(); ++wid) {
        const Node& n = w.node(wid);
        if (n.kind == OpKind::Input) {
          wv[wid] = *value.at(kind.ports[j].at(std::stoul(n.name.substr(6))));
        } else if (n.kind == OpKind::Output) {
          const NodeId offset = static_cast<NodeId>(std::stoul(n.name.substr(5)));
          value[id + offset] = egraph::read_through(*wv[n.operands[0].node], n.operands[0].view);
        } else {
          std::vector<Tensor> ops;
          for (const Operand& o : n.operands)
            ops.push_back(egraph::read_through(*wv[o.node], o.view));
          wv[wid] = copy_node(*g, n, ops);
        }
      }
      // The winner's kernel groups, for this instance's copies of their members.
      for (const KernelGroup& grp : w.kernel_groups()) {
        KernelGroup copy{grp.op, {}};
        for (NodeId wid : grp.nodes) copy.nodes.push_back(wv.at(wid)->node());
        g->add_kernel_group(std::move(copy));
      }
      continue;
    }
    const Node& n = graph.node(id);
    if (n.kind == OpKind::Input || value[id].has_value()) continue;
    bool member = false;
    for (const BlockKind& kind : plan.kinds) member = member || kind.is_member(id);
    if (member) continue;  // produced by its instance (or unused outside it)
    std::vector<Tensor> ops;
    for (const Operand& o : n.operands) ops.push_back(read(o));
    value[id] = copy_node(*g, n, ops);
  }
  return g;
}

}  // namespace luminal::compiler
