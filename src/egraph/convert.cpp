// HLIR <-> e-graph conversion (see convert.hpp).

#include "luminal/egraph/convert.hpp"

#include <algorithm>
#include <map>

#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/diagnostics.hpp"
#include "luminal/egraph/view_algebra.hpp"
#include "luminal/error.hpp"

namespace luminal::egraph {

namespace {

// The e-node of `cls` with exactly this content (the one add() found or made).
ENodeId find_node(const EGraph& eg, ClassId cls, OpId op, PayloadId payload,
                  const std::vector<ClassId>& kids) {
  for (ENodeId n : eg.nodes(cls)) {
    if (eg.op(n) != op || eg.node(n).payload != payload) continue;
    const auto ch = eg.children(n);
    bool same = ch.size() == kids.size();
    for (size_t i = 0; same && i < ch.size(); ++i) same = eg.find(ch[i]) == eg.find(kids[i]);
    if (same) return n;
  }
  throw Error("import: e-node not found in its class");
}

}  // namespace

Payload node_payload(const Node& n) {
  switch (n.kind) {
    case OpKind::Input:
      return input_payload(n.name, n.dtype, n.shape, n.persistent);
    case OpKind::Output:
      return Payload(n.name);
    case OpKind::Constant:
      return Payload(Scalar{n.dtype, n.value, n.int_value});
    case OpKind::Iota:
      return iota_payload(n.iota_expr, n.shape[0], n.dtype);
    case OpKind::Cast:
      return Payload(n.dtype);
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
      return Payload(int64_t{n.axis});
    default:
      return Payload();
  }
}

std::vector<ClassId> ImportedGraph::roots(const EGraph& egraph) const {
  std::vector<ClassId> out;
  for (ClassId c : outputs) out.push_back(egraph.find(c));
  return out;
}

ImportedGraph import_graph(EGraph& eg, const Graph& graph) {
  if (dump_dir()) write_dump("hlir", "dot", graph.to_dot());
  ImportedGraph out;
  out.node_class.resize(graph.size());
  out.node_enode.resize(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& n = graph.node(id);
    std::vector<ClassId> kids;
    for (const Operand& o : n.operands) {
      const ClassId producer = out.node_class[o.node];
      const Shape& shape = graph.node(o.node).shape;
      if (o.view == View::contiguous(shape) || is_identity_view(o.view, shape))
        kids.push_back(producer);
      else
        kids.push_back(eg.add(kViewOp, Payload(o.view), {producer}));
    }
    const PayloadId payload = eg.intern(node_payload(n));
    const ClassId cls = eg.add(op_id(n.kind), payload, kids);
    out.node_class[id] = cls;
    out.node_enode[id] = find_node(eg, cls, op_id(n.kind), payload, kids);
    if (n.kind == OpKind::Input) {
      out.inputs.push_back(cls);
      out.input_nodes.push_back(out.node_enode[id]);
    }
    if (n.kind == OpKind::Output) out.outputs.push_back(cls);
  }
  if (dump_dir()) write_dump("egraph-import", "dot", eg.to_dot());
  return out;
}

Tensor read_through(const Tensor& t, const View& view) {
  Graph& g = *t.graph();
  if (t.view().is_contiguous()) return Tensor(&g, t.node(), view, t.dtype());
  if (auto v = compose_views(view, t.view())) return Tensor(&g, t.node(), std::move(*v), t.dtype());
  const Tensor dense = t.contiguous();
  return Tensor(&g, dense.node(), view, t.dtype());
}

Tensor build_hlir(Graph& g, OpId op, const Payload& p, std::span<const Tensor> kids) {
  if (op == kViewOp) return read_through(kids[0], p.as<View>());
  const auto kind = hlir_kind(op);
  if (!kind) throw Error("build_hlir: " + OpRegistry::global().name(op) + " is not an HLIR op");
  switch (*kind) {
    case OpKind::Constant: {
      const Scalar& s = p.as<Scalar>();
      return s.is_float() ? g.constant(s.value, s.dtype) : g.constant_int(s.int_value, s.dtype);
    }
    case OpKind::Iota:
      return g.iota(p.at(0).as<Expr>(), p.at(1).as<Expr>(), p.at(2).as<DType>());
    case OpKind::Cast:
      return g.cast(kids[0], p.as<DType>());
    case OpKind::Exp2:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Sqrt:
    case OpKind::Recip:
      return g.unary(*kind, kids[0]);
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Mod:
    case OpKind::LessThan:
      return g.binary(*kind, kids[0], kids[1]);
    case OpKind::Gather:
      return g.gather(kids[0], kids[1]);
    case OpKind::Scatter:
      return g.scatter(kids[0], kids[1], kids[2]);
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
      return g.reduce(*kind, kids[0], static_cast<int>(p.as<int64_t>()));
    case OpKind::Input:
    case OpKind::Output:
      break;
  }
  throw Error("build_hlir: an " + std::string(op_name(*kind)) +
              " node cannot be built as an operand");
}

namespace {

class Extractor {
public:
  Extractor(const EGraph& eg, const ImportedGraph& imported, const Candidate& cand,
            const ExtractOptions& options)
      : eg_(eg), imported_(imported), cand_(cand), options_(options) {
    out_.graph = std::make_unique<Graph>();
    tensors_.resize(eg.num_class_slots());
  }

  Extracted run() {
    Graph& g = *out_.graph;
    // Every original input, in the original order, whether or not still read.
    for (ENodeId n : imported_.input_nodes) {
      const Payload& p = eg_.node_payload(n);
      const std::string& name = p.at(0).as<std::string>();
      inputs_.emplace(name, g.input(name, p.at(2).as<Shape>(), p.at(1).as<DType>(),
                                    p.at(3).as<int64_t>() != 0));
    }
    // Children before parents; each root's Output comes last in its traversal,
    // so outputs keep the original order. reachable() rejects cyclic choices.
    const std::vector<ClassId> roots = imported_.roots(eg_);
    for (ClassId c : CandidateSpace(eg_, roots).reachable(cand_)) {
      const ENodeId n = cand_.at(c);
      const bool is_root = std::find(roots.begin(), roots.end(), c) != roots.end();
      if (is_root != (eg_.op(n) == op_id(OpKind::Output)))
        throw Error("extract: class c" + std::to_string(c) + " chose " + eg_.node_text(n) +
                    (is_root ? " instead of its Output" : ", an Output, as an operand"));
      if (is_root) {
        g.output(eg_.node_payload(n).as<std::string>(), *tensors_[eg_.find(eg_.children(n)[0])]);
        continue;
      }
      tensors_[c] = build(c, n);
      if (options_.debug_outputs) {
        const std::string name = "__c" + std::to_string(c);
        g.output(name, *tensors_[c]);
        out_.class_outputs.emplace_back(c, name);
      }
    }
    return std::move(out_);
  }

private:
  Tensor build(ClassId c, ENodeId n) {
    Graph& g = *out_.graph;
    const Payload& p = eg_.node_payload(n);
    std::vector<Tensor> kids;
    for (ClassId k : eg_.children(n)) kids.push_back(*tensors_[eg_.find(k)]);
    const TensorInfo& info = eg_.info(c);
    Tensor t = [&]() -> Tensor {
      const auto kind = hlir_kind(eg_.op(n));
      if (!kind) {
        const OpInfo& oi = OpRegistry::global().info(eg_.op(n));
        if (!oi.lower)
          throw Error("extract: op " + oi.name + " (class c" + std::to_string(c) +
                      ") has no lowering to HLIR");
        if (!oi.kernel_group) return oi.lower(g, p, kids, info);
        // A backend kernel: dense children outside the group, then the members.
        if (!oi.group_reads_views)
          for (Tensor& kid : kids)
            if (!kid.view().is_contiguous()) kid = kid.contiguous();
        const auto first = static_cast<NodeId>(g.size());
        Tensor r = oi.lower(g, p, kids, info);
        KernelGroup group{oi.name, {}};
        for (auto id = first; id < g.size(); ++id) group.nodes.push_back(id);
        if (!group.nodes.empty()) g.add_kernel_group(std::move(group));
        return r;
      }
      if (*kind == OpKind::Input) return inputs_.at(p.at(0).as<std::string>());
      return build_hlir(g, eg_.op(n), p, kids);
    }();
    if (t.dtype() != info.dtype || !same_shape(t.shape(), info.shape))
      throw Error("extract: class c" + std::to_string(c) + " " + info.to_string() +
                  " was realised as " + t.describe() + " by " + eg_.node_text(n));
    return t;
  }

  const EGraph& eg_;
  const ImportedGraph& imported_;
  const Candidate& cand_;
  ExtractOptions options_;
  Extracted out_;
  std::vector<std::optional<Tensor>> tensors_;
  std::map<std::string, Tensor> inputs_;
};

}  // namespace

Extracted extract(const EGraph& egraph, const ImportedGraph& imported, const Candidate& candidate,
                  const ExtractOptions& options) {
  if (!egraph.clean()) throw Error("extract: call rebuild() on the e-graph first");
  return Extractor(egraph, imported, candidate, options).run();
}

}  // namespace luminal::egraph
