// Fused attention on the CPU backend: the CpuAttention op, its recognition
// rule and its kernel (see attention_kernel.hpp).

#include "luminal/backends/cpu/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_set>

#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/rule.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/view_algebra.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/reduction.hpp"

namespace luminal::cpu {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The kernel keeps a query row and an output row in registers / on the stack.
constexpr int64_t kMaxHeadDim = 256;

std::optional<int64_t> const_of(const Expr& e) {
  return e.simplify().as_const();
}

bool is_const(const Expr& e, int64_t v) {
  const auto c = const_of(e);
  return c && *c == v;
}

bool same_expr(const Expr& a, const Expr& b) {
  return a == b || a.simplify() == b.simplify() || provably_equal(a, b);
}

}  // namespace

// ---- the op ------------------------------------------------------------------

egraph::Payload AttentionSpec::to_payload() const {
  egraph::PayloadTuple t{qk.to_payload(), pv.to_payload(), egraph::Payload(scale),
                         mask ? egraph::Payload(*mask) : egraph::Payload()};
  return egraph::Payload(std::move(t));
}

AttentionSpec AttentionSpec::from_payload(const egraph::Payload& p) {
  if (!p.is<egraph::PayloadTuple>() || p.tuple_size() != 4)
    throw Error("CpuAttention: malformed payload " + p.to_string());
  AttentionSpec s;
  s.qk = egraph::MatMulSpec::from_payload(p.at(0));
  s.pv = egraph::MatMulSpec::from_payload(p.at(1));
  s.scale = p.at(2).as<double>();
  if (!p.at(3).empty()) s.mask = p.at(3).as<View>();
  return s;
}

// Exactly the middle of frontend scaled_dot_product_attention (attention.cpp):
// the same calls in the same order build the same primitive nodes.
Tensor attention_probs(const Tensor& raw_scores, double scale, const std::optional<Tensor>& mask) {
  Tensor scores = raw_scores * scale;
  if (mask) scores = where(*mask, scores, -kInf);
  Tensor all_masked = eq(amax(scores, {-1}, true), -kInf);
  return where(all_masked, 0.0, softmax(scores, -1));
}

namespace {

Tensor lower_attention(Graph& g, const AttentionSpec& spec, std::span<const Tensor> c) {
  Tensor raw = egraph::lower_matmul(g, spec.qk, c[0], c[1]);
  std::optional<Tensor> mask;
  if (spec.mask) mask = egraph::read_through(c[3], *spec.mask);
  return egraph::lower_matmul(g, spec.pv, attention_probs(raw, spec.scale, mask), c[2]);
}

}  // namespace

egraph::OpId attention_op() {
  static const egraph::OpId id = [] {
    egraph::OpInfo info;
    info.name = "CpuAttention";
    info.arity = -1;
    info.kernel_group = true;
    info.payload_doc =
        "AttentionSpec (attention_kernel.hpp): (qk MatMulSpec, pv MatMulSpec, "
        "scale, mask view or empty)";
    info.infer = [](const egraph::Payload& p, std::span<const egraph::TensorInfo* const> c) {
      const AttentionSpec s = AttentionSpec::from_payload(p);
      if (c.size() != (s.mask ? 4u : 3u))
        throw Error("CpuAttention: expected " + std::string(s.mask ? "4" : "3") +
                    " children (q, k, v[, mask]), got " + std::to_string(c.size()));
      return egraph::TensorInfo{c[0]->dtype, s.pv.out_shape};
    };
    info.lower = [](Graph& g, const egraph::Payload& p, std::span<const Tensor> c,
                    const egraph::TensorInfo&) {
      return lower_attention(g, AttentionSpec::from_payload(p), c);
    };
    return egraph::OpRegistry::global().get_or_add(std::move(info));
  }();
  return id;
}

bool attention_kernel_supports(const AttentionSpec& s) {
  const auto d = const_of(s.qk.k);
  const auto dv = const_of(s.pv.n);
  if (!d || !dv || *d < 1 || *dv < 1 || *d > kMaxHeadDim || *dv > kMaxHeadDim) return false;
  // probs @ v reads whole rows of the dense probabilities [.., L, S]: row r of
  // the scores is row poff / S of the probabilities.
  const Expr& n = s.qk.n;
  // (That a row starts at a multiple of S is checked by the kernel: a view
  // reading rows across row boundaries makes it fail loudly, never wrongly.)
  if (!same_expr(s.pv.k, n) || !is_const(s.pv.a_k_stride, 1)) return false;
  // The scores' last axis is the key axis (the kernel masks by key).
  if (s.qk.out_shape.empty() || !same_expr(s.qk.out_shape.back(), n)) return false;
  // The mask is read at the scores' flat index: its key axis must be affine.
  if (s.mask && (s.mask->rank() == 0 || !same_expr(s.mask->shape().back(), n) ||
                 !egraph::affine_axis(*s.mask, s.mask->rank() - 1)))
    return false;
  return true;
}

// ---- recognition -------------------------------------------------------------

namespace {

using egraph::ClassId;
using egraph::EGraph;
using egraph::ENodeId;

// The class of the e-node (op, payload, kids), if the e-graph has it. Walks
// the parents of the child with the fewest instead of using the hash-cons
// memo: actions run while other actions' merges are not yet rebuilt, and a
// node whose child was merged is stale in the memo until then.
std::optional<ClassId> find_enode(EGraph& eg, egraph::OpId op, const egraph::Payload& payload,
                                  const std::vector<ClassId>& kids) {
  const egraph::PayloadId pid = eg.intern(payload);
  if (kids.empty()) return eg.lookup(op, pid, kids);
  ClassId pick = kids[0];
  for (ClassId k : kids)
    if (eg.parents(k).size() < eg.parents(pick).size()) pick = k;
  for (ENodeId n : eg.parents(pick)) {
    if (eg.op(n) != op || eg.node(n).payload != pid) continue;
    const auto ch = eg.children(n);
    bool same = ch.size() == kids.size();
    for (size_t i = 0; same && i < ch.size(); ++i) same = eg.find(ch[i]) == eg.find(kids[i]);
    if (same) return eg.class_of(n);
  }
  return std::nullopt;
}

// The class of `result` when every node of `g` (built on the Input
// placeholders `leaves`) already exists in the e-graph, as import_graph would
// have added it; nullopt as soon as one does not. Only looks up (payloads
// are interned, nothing else is added).
std::optional<ClassId> lookup_graph(EGraph& eg, const Graph& g,
                                    const std::map<NodeId, ClassId>& leaves, const Tensor& result) {
  std::vector<ClassId> cls(g.size(), egraph::kNoId);
  auto operand_class = [&](NodeId producer, const View& view) -> std::optional<ClassId> {
    const ClassId c = cls[producer];
    const std::vector<Expr>& shape = g.node(producer).shape;
    if (view == View::contiguous(shape) || egraph::is_identity_view(view, shape)) return c;
    return find_enode(eg, egraph::kViewOp, egraph::Payload(view), {c});
  };
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.kind == OpKind::Input) {
      cls[id] = leaves.at(id);
      continue;
    }
    std::vector<ClassId> kids;
    for (const Operand& o : n.operands) {
      const auto c = operand_class(o.node, o.view);
      if (!c) return std::nullopt;
      kids.push_back(eg.find(*c));
    }
    const auto c = find_enode(eg, egraph::op_id(n.kind), egraph::node_payload(n), kids);
    if (!c) return std::nullopt;
    cls[id] = eg.find(*c);
  }
  return operand_class(result.node(), result.view());
}

struct MaskCandidate {
  ClassId cls;
  View view;
};

// Classes below `from` (itself included), breadth first: nearest first, at
// most `max_classes` classes and `max_depth` levels (the guard against
// walking a whole model from every MatMul).
template <class Visit>
void walk_below(const EGraph& eg, ClassId from, size_t max_classes, int max_depth, Visit visit) {
  std::unordered_set<ClassId> seen{eg.find(from)};
  std::vector<std::pair<ClassId, int>> queue{{eg.find(from), 0}};
  for (size_t at = 0; at < queue.size(); ++at) {
    const auto [c, depth] = queue[at];
    if (!visit(c) || depth >= max_depth) continue;
    for (ENodeId n : eg.nodes(c))
      for (ClassId k : eg.children(n))
        if (seen.size() < max_classes && seen.insert(eg.find(k)).second)
          queue.push_back({eg.find(k), depth + 1});
  }
}

// The MatMul e-nodes below the probabilities whose class has their shape:
// the raw scores (the walk does not descend into q and k).
std::vector<ENodeId> scores_matmuls(const EGraph& eg, ClassId probs) {
  const egraph::TensorInfo& pinfo = eg.info(probs);
  std::vector<ENodeId> out;
  walk_below(eg, probs, 400, 12, [&](ClassId c) {
    const egraph::TensorInfo& info = eg.info(c);
    if (info.dtype != DType::F32 || !egraph::same_shape(info.shape, pinfo.shape)) return true;
    bool found = false;
    for (ENodeId n : eg.nodes(c))
      if (eg.op(n) == egraph::kMatMulOp) out.push_back(n), found = true;
    return !found;
  });
  return out;
}

struct Scaled {
  double scale;
  ClassId cls;  // raw * scale
};

// The raw scores multiplied by a uniform f32 constant: Mul(raw, constant).
std::vector<Scaled> scales_of(const EGraph& eg, ClassId raw) {
  std::vector<Scaled> out;
  for (ENodeId n : eg.parents(raw)) {
    if (eg.op(n) != egraph::op_id(OpKind::Mul)) continue;
    const auto ch = eg.children(n);
    if (eg.find(ch[0]) != eg.find(raw)) continue;
    const auto& u = eg.uniform(ch[1]);
    if (u && u->is_float() && u->dtype == DType::F32) out.push_back({u->value, eg.class_of(n)});
  }
  return out;
}

// The bool tensors where(mask, scaled, -inf) may read: below the index
// operand of the Scatters writing the scaled scores (select's form), the bool
// classes of the scores' shape and the bool tensors viewed to that shape.
std::vector<MaskCandidate> masks_of(const EGraph& eg, ClassId scaled) {
  const egraph::Shape& shape = eg.info(scaled).shape;
  std::vector<MaskCandidate> out;
  for (ENodeId n : eg.parents(scaled)) {
    if (eg.op(n) != egraph::op_id(OpKind::Scatter)) continue;
    const auto ch = eg.children(n);
    if (eg.find(ch[2]) != eg.find(scaled)) continue;
    walk_below(eg, ch[1], 64, 6, [&](ClassId c) {
      const egraph::TensorInfo& info = eg.info(c);
      if (!egraph::same_shape(info.shape, shape)) return false;
      // A viewed tensor first: the kernel then reads the small mask (a causal
      // [L, S]) rather than a materialised broadcast of it.
      for (ENodeId v : eg.nodes(c))
        if (eg.op(v) == egraph::kViewOp && eg.info(eg.children(v)[0]).dtype == DType::Bool)
          out.push_back({eg.find(eg.children(v)[0]), eg.node_payload(v).as<View>()});
      if (info.dtype == DType::Bool) out.push_back({c, View::contiguous(info.shape)});
      return true;
    });
  }
  return out;
}

// The middle of attention from `raw` (with this scale and mask) exists in the
// e-graph and is the class `probs`.
bool middle_matches(EGraph& eg, ClassId raw, ClassId probs, double scale,
                    const std::optional<MaskCandidate>& mask) {
  Graph g;
  std::map<NodeId, ClassId> leaves;
  Tensor r = g.input("raw", eg.info(raw).shape, DType::F32);
  leaves[r.node()] = eg.find(raw);
  std::optional<Tensor> m;
  if (mask) {
    Tensor mt = g.input("mask", eg.info(mask->cls).shape, DType::Bool);
    leaves[mt.node()] = eg.find(mask->cls);
    m = egraph::read_through(mt, mask->view);
  }
  const Tensor p = attention_probs(r, scale, m);
  const auto c = lookup_graph(eg, g, leaves, p);
  return c && eg.find(*c) == eg.find(probs);
}

void recognize_attention(EGraph& eg, const egraph::Match& match) {
  const egraph::OpId op = attention_op();
  const ClassId root = match.root();
  if (eg.has_op(root, op)) return;
  const ClassId probs = eg.find(match.cls("p"));
  const ClassId v = eg.find(match.cls("v"));
  if (eg.info(probs).dtype != DType::F32 || eg.info(v).dtype != DType::F32 ||
      eg.info(probs).shape.size() < 2)
    return;
  for (ENodeId mm : scores_matmuls(eg, probs)) {
    const auto qk = eg.children(mm);
    if (eg.info(qk[0]).dtype != DType::F32 || eg.info(qk[1]).dtype != DType::F32) continue;
    const ClassId raw = eg.class_of(mm);
    for (const Scaled& sc : scales_of(eg, raw)) {
      std::vector<std::optional<MaskCandidate>> masks{std::nullopt};
      for (const MaskCandidate& c : masks_of(eg, sc.cls)) masks.emplace_back(c);
      for (const auto& mask : masks) {
        if (!middle_matches(eg, raw, probs, sc.scale, mask)) continue;
        AttentionSpec spec;
        spec.qk = egraph::MatMulSpec::from_payload(eg.node_payload(mm));
        spec.pv = egraph::MatMulSpec::from_payload(match.payload("s"));
        spec.scale = sc.scale;
        if (mask) spec.mask = mask->view;
        if (!attention_kernel_supports(spec)) return;
        std::vector<ClassId> kids{eg.find(qk[0]), eg.find(qk[1]), v};
        if (mask) kids.push_back(eg.find(mask->cls));
        eg.merge(root, eg.add(op, spec.to_payload(), kids));
        return;
      }
    }
  }
}

}  // namespace

void add_attention_rules(egraph::RuleRegistry& registry) {
  attention_op();
  egraph::Ruleset rs("cpu-attention");
  rs.add(egraph::Rule("cpu-attention", "(MatMul@s ?p ?v)")
             .where([](egraph::Match& m) {
               // Cheap filter before the walk: f32 probabilities with a softmax axis.
               const auto& p = m.info("p");
               return p.dtype == DType::F32 && p.shape.size() >= 2;
             })
             .then(recognize_attention)
             .because("CpuAttention lowers with the frontend's own attention functions, and the "
                      "rule only merges when every node of that middle (scale, mask, safe "
                      "softmax) is found in the e-graph between the two matched MatMuls"));
  registry.add_ruleset(std::move(rs));
  registry.add_to_phase("lower", "cpu-attention");
}

// ---- the kernel --------------------------------------------------------------

namespace {

bool member_of(const Region& r, NodeId id) {
  return std::binary_search(r.nodes.begin(), r.nodes.end(), id);
}

struct Product {
  NodeId mul = 0, sum = 0;
  egraph::MatMulSpec spec;
};

std::optional<Product> product_at(const Graph& g, NodeId sum) {
  const Node& s = g.node(sum);
  if (s.kind != OpKind::SumReduce || !s.operands[0].view.is_contiguous()) return std::nullopt;
  const NodeId mul = s.operands[0].node;
  const Node& m = g.node(mul);
  if (m.kind != OpKind::Mul) return std::nullopt;
  auto mm = egraph::recognize_matmul(m.shape, static_cast<size_t>(s.axis), m.operands[0].view,
                                     m.operands[1].view);
  if (!mm || mm->swapped) return std::nullopt;
  return Product{mul, sum, mm->spec};
}

struct Derived {
  AttentionSpec spec;
  NodeId q = 0, k = 0, v = 0;
  std::optional<NodeId> mask;
  NodeId out = 0;
};

// The attention spec of a CpuAttention group, derived from its members.
std::optional<Derived> derive(const Graph& g, Region region) {
  std::sort(region.nodes.begin(), region.nodes.end());
  if (region.outputs.size() != 1) return std::nullopt;
  Derived d;
  d.out = region.outputs[0];
  const auto pv = product_at(g, d.out);
  if (!pv || !member_of(region, pv->mul)) return std::nullopt;
  const Node& pv_mul = g.node(pv->mul);
  if (!member_of(region, pv_mul.operands[0].node) || member_of(region, pv_mul.operands[1].node))
    return std::nullopt;
  d.v = pv_mul.operands[1].node;
  d.spec.pv = pv->spec;
  std::optional<Product> qk;
  for (NodeId id : region.nodes) {
    if (id == d.out || g.node(id).kind != OpKind::SumReduce) continue;
    auto p = product_at(g, id);
    if (!p || !member_of(region, p->mul)) continue;
    const Node& m = g.node(p->mul);
    if (member_of(region, m.operands[0].node) || member_of(region, m.operands[1].node)) continue;
    if (qk) return std::nullopt;  // two products of outside tensors
    qk = p;
    d.q = m.operands[0].node;
    d.k = m.operands[1].node;
  }
  if (!qk) return std::nullopt;
  d.spec.qk = qk->spec;
  bool scaled = false;
  for (NodeId id : region.nodes) {
    const Node& n = g.node(id);
    if (n.kind != OpKind::Mul || n.operands[0].node != qk->sum) continue;
    const Node& c = g.node(n.operands[1].node);
    if (c.kind != OpKind::Constant || c.dtype != DType::F32 || scaled) return std::nullopt;
    d.spec.scale = c.value;
    // Recognition gives the canonical [batch, m, n] shape; the lowering read
    // the raw scores as the scores' own shape (the mask's).
    d.spec.qk.out_shape = n.shape;
    scaled = true;
  }
  if (!scaled) return std::nullopt;
  // Outside operands other than q, k and v: the mask, if any.
  for (NodeId id : region.nodes)
    for (const Operand& o : g.node(id).operands) {
      if (member_of(region, o.node) || o.node == d.q || o.node == d.k || o.node == d.v) continue;
      if (g.node(o.node).dtype != DType::Bool || (d.mask && *d.mask != o.node)) return std::nullopt;
      d.mask = o.node;
      d.spec.mask = o.view;
    }
  for (NodeId id : {d.q, d.k, d.v})
    if (g.node(id).dtype != DType::F32) return std::nullopt;
  if (!attention_kernel_supports(d.spec)) return std::nullopt;
  // The members are exactly the lowering (same node count from the same leaves).
  Graph scratch;
  std::vector<Tensor> leaves;
  for (NodeId id : {d.q, d.k, d.v})
    leaves.push_back(scratch.input("i" + std::to_string(id), g.node(id).shape, DType::F32));
  if (d.mask) leaves.push_back(scratch.input("m", g.node(*d.mask).shape, DType::Bool));
  const size_t before = scratch.size();
  lower_attention(scratch, d.spec, leaves);
  if (scratch.size() - before != region.nodes.size()) return std::nullopt;
  return d;
}

// The dims an expression set uses, renamed to kernel arguments `_d<i>`.
class DimArgs {
public:
  DimArgs(const std::vector<Expr>& exprs, CpuKernel& k) {
    std::set<std::string> vars;
    for (const Expr& e : exprs)
      for (const std::string& v : e.variables())
        if (v.empty() || v[0] != '_') vars.insert(v);
    for (const std::string& v : vars) {
      rename_.emplace(v, Expr::internal_var("_d" + std::to_string(k.dims.size())));
      k.dims.push_back(v);
    }
  }
  std::string operator()(const Expr& e) const {
    return "(int64_t)(" + e.simplify().substitute(rename_).to_c() + ")";
  }

private:
  std::map<std::string, Expr, std::less<>> rename_;
};

std::vector<Expr> spec_exprs(const egraph::MatMulSpec& s) {
  std::vector<Expr> out{s.m,        s.n,          s.k,          s.a_m_stride, s.a_k_stride,
                        s.a_offset, s.b_k_stride, s.b_n_stride, s.b_offset};
  for (size_t d = 0; d < s.batch.size(); ++d)
    out.insert(out.end(), {s.batch[d], s.a_batch_strides[d], s.b_batch_strides[d]});
  return out;
}

// Code declaring `a` / `b`: the offsets of row `row` of product `s` in its
// A and B operands (the row's index in m, then its batch indexes).
std::string row_offsets(const egraph::MatMulSpec& s, const DimArgs& c, const std::string& row,
                        const std::string& a, const std::string& b) {
  const std::string m = c(s.m);
  std::string code = "    int64_t " + a + " = " + c(s.a_offset) + " + (" + row + " % " + m +
                     ") * " + c(s.a_m_stride) + ", " + b + " = " + c(s.b_offset) + ";\n";
  code += "    { int64_t _r = " + row + " / " + m + ";\n";
  for (size_t d = s.batch.size(); d-- > 0;)
    code += "      { const int64_t _n = " + c(s.batch[d]) +
            "; const int64_t _i = _r % _n; _r /= _n; " + a + " += _i * " + c(s.a_batch_strides[d]) +
            "; " + b + " += _i * " + c(s.b_batch_strides[d]) + "; }\n";
  return code + "    }\n";
}

std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9ef", v);
  return buf;
}

}  // namespace

std::optional<CpuKernel> generate_attention_kernel(const Graph& graph, const Region& region,
                                                   const std::string& name) {
  const auto d = derive(graph, region);
  if (!d) return std::nullopt;
  const AttentionSpec& s = d->spec;
  const egraph::MatMulSpec& qk = s.qk;
  const egraph::MatMulSpec& pv = s.pv;
  CpuKernel k;
  k.name = name;
  std::vector<Expr> exprs = spec_exprs(qk);
  const std::vector<Expr> pv_exprs = spec_exprs(pv);
  exprs.insert(exprs.end(), pv_exprs.begin(), pv_exprs.end());
  const Expr mask_flat = Expr::internal_var("_mf");
  Expr mask_base = 0, mask_stride = 0;
  if (s.mask) {
    mask_base = s.mask->flat_offset(mask_flat);
    mask_stride = egraph::affine_axis(*s.mask, s.mask->rank() - 1)->stride;
    exprs.insert(exprs.end(), {mask_base, mask_stride});
  }
  const DimArgs c(exprs, k);
  const std::string symbol = "lk_" + name;
  const std::string out_slot = s.mask ? "4" : "3";

  std::string code = "// CpuAttention: " + qk.to_string() + " | " + pv.to_string() + "\n";
  code += "extern \"C\" int32_t " + symbol +
          "(void* const* __restrict _buf, const int64_t* __restrict _dims, "
          "int64_t _begin, int64_t _end, int64_t* __restrict _err) {\n"
          "  (void)_err; (void)_dims;\n";
  for (size_t i = 0; i < k.dims.size(); ++i)
    code += "  const int64_t _d" + std::to_string(i) + " = _dims[" + std::to_string(i) + "];\n";
  code +=
      "  const float* __restrict Q = (const float*)_buf[0];\n"
      "  const float* __restrict K = (const float*)_buf[1];\n"
      "  const float* __restrict V = (const float*)_buf[2];\n";
  if (s.mask) code += "  const uint8_t* __restrict MK = (const uint8_t*)_buf[3];\n";
  code += "  float* __restrict O = (float*)_buf[" + out_slot + "];\n";
  code += "  constexpr int64_t D = " + std::to_string(*const_of(qk.k)) +
          ", DV = " + std::to_string(*const_of(pv.n)) + ";\n";
  code += "  const int64_t S = " + c(qk.n) + ";\n";
  code += "  const float scale = " + float_literal(s.scale) +
          ";\n"
          "  const float log2e = 1.44269504088896341f;\n"
          "  for (int64_t r2 = _begin; r2 < _end; ++r2) {\n";
  code += row_offsets(pv, c, "r2", "poff", "voff");
  code +=
      "    if (S > 0 && poff % S != 0) {  // not a whole row of the probabilities\n"
      "      _err[0] = r2; _err[1] = poff; _err[2] = S;\n"
      "      return 4;  // kKernelUnsupportedLayout\n"
      "    }\n"
      "    const int64_t r1 = S > 0 ? poff / S : 0;\n";
  code += row_offsets(qk, c, "r1", "qoff", "koff");
  if (s.mask)
    code += "    const int64_t _mf = r1 * S;\n    const int64_t mbase = " + c(mask_base) +
            ", ms = " + c(mask_stride) + ";\n";
  code += "    const int64_t qd = " + c(qk.a_k_stride) + ", kd = " + c(qk.b_k_stride) +
          ", kj = " + c(qk.b_n_stride) + ", vj = " + c(pv.b_k_stride) +
          ", vd = " + c(pv.b_n_stride) + ";\n";
  code +=
      "    float q[D];\n"
      "    for (int64_t i = 0; i < D; ++i) q[i] = Q[qoff + i * qd];\n"
      "    float acc[DV];\n"
      "    for (int64_t i = 0; i < DV; ++i) acc[i] = 0.0f;\n"
      "    float mx = -__builtin_inff(), l = 0.0f;\n"
      "    bool nan = false;\n"
      "    for (int64_t j0 = 0; j0 < S; j0 += 64) {\n"
      "      const int64_t nb = S - j0 < 64 ? S - j0 : 64;\n"
      "      float sc[64];\n"
      "      float bm = -__builtin_inff();\n"
      "      for (int64_t jj = 0; jj < nb; ++jj) {\n"
      "        const int64_t j = j0 + jj;\n";
  if (s.mask)
    code += "        if (!MK[mbase + j * ms]) { sc[jj] = -__builtin_inff(); continue; }\n";
  // Eight partial sums: a dot product the compiler vectorises without
  // reassociating a single sum (no -ffast-math).
  code +=
      "        const float* __restrict kr = K + koff + j * kj;\n"
      "        float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};\n"
      "        int64_t i = 0;\n"
      "        for (; i + 8 <= D; i += 8)\n"
      "          for (int t = 0; t < 8; ++t) part[t] += q[i + t] * kr[(i + t) * kd];\n"
      "        float dot = ((part[0] + part[4]) + (part[1] + part[5])) +\n"
      "                    ((part[2] + part[6]) + (part[3] + part[7]));\n"
      "        for (; i < D; ++i) dot += q[i] * kr[i * kd];\n"
      "        const float x = dot * scale;\n"
      "        sc[jj] = x;\n"
      "        nan = nan || x != x;\n"
      "        bm = x > bm ? x : bm;\n"
      "      }\n"
      "      if (bm == -__builtin_inff()) continue;  // every key of the block masked\n"
      "      const float mn = bm > mx ? bm : mx;\n"
      "      const float corr = lk::exp2f((mx - mn) * log2e);\n"
      "      l *= corr;\n"
      "      for (int64_t i = 0; i < DV; ++i) acc[i] *= corr;\n"
      "      mx = mn;\n"
      "      for (int64_t jj = 0; jj < nb; ++jj) {\n"
      "        if (sc[jj] == -__builtin_inff()) continue;\n"
      "        const float e = lk::exp2f((sc[jj] - mx) * log2e);\n"
      "        l += e;\n"
      "        const float* __restrict vr = V + voff + (j0 + jj) * vj;\n"
      "        for (int64_t i = 0; i < DV; ++i) acc[i] += e * vr[i * vd];\n"
      "      }\n"
      "    }\n"
      "    float* __restrict o = O + r2 * DV;\n"
      "    if (nan) {\n"
      "      for (int64_t i = 0; i < DV; ++i) o[i] = __builtin_nanf(\"\");\n"
      "    } else if (mx == -__builtin_inff()) {  // every key masked: _safe_softmax's 0\n"
      "      for (int64_t i = 0; i < DV; ++i) o[i] = 0.0f;\n"
      "    } else {\n"
      "      const float inv = 1.0f / l;\n"
      "      for (int64_t i = 0; i < DV; ++i) o[i] = acc[i] * inv;\n"
      "    }\n"
      "  }\n"
      "  return 0;\n"
      "}\n";
  k.code = std::move(code);
  k.inputs = {d->q, d->k, d->v};
  if (d->mask) k.inputs.push_back(*d->mask);
  k.outputs = {d->out};
  KernelLaunch l;
  l.symbol = symbol;
  l.extent = (product(pv.batch) * pv.m).simplify();
  l.work_per_item = (qk.n * (qk.k + pv.n)).simplify();
  k.launches.push_back(std::move(l));
  return k;
}

}  // namespace luminal::cpu
