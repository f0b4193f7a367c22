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

#include "luminal/backends/cpu/thread_pool.hpp"
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

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Output rows handled together: up to kTile rows reading the same K / V rows
// (consecutive rows of one head, or the heads of one GQA group at decode),
// one row per vector lane.
constexpr int kTile = 16;
// Key splits (flash-decoding): see the kernel's entry.
constexpr int kMaxKeySplits = 8;
constexpr int64_t kSplitKeysPerThread = 128, kSplitRowsPerThread = 16;

// One tile of rows: RV vectors of W (4, 8 or 16) float lanes, lane t of
// vector v is row v * W + t (R = W * RV rows). Scores are computed for blocks
// of 64 keys as q.k over the head dim with each K element broadcast across the
// lanes (so no horizontal sums, and each K / V row loaded serves every row of
// the tile), then an online softmax per lane (running max, running sum, f32,
// the prelude's lk::exp2f) and probs @ v into per-lane accumulators. Keys past
// the last one any row of the tile may see (the causal case) are never
// computed. Unused lanes repeat row 0 (every key masked where there is a mask)
// and are not stored. GCC vector types; lk::exp2f in loops over float arrays,
// which the compiler vectorises.
// The products are multiply-adds with one rounding (madd) where the host has
// FMA: -ffp-contract=off keeps a * b + c as two, and on Zen 3 the separate
// multiply and add made the score and probs @ v loops issue-bound (7 % of the
// kernel). With two vectors of rows (AVX2's 16-row tiles), each broadcast K or
// V element serves two multiply-adds and each K / V row is read once for 16
// rows instead of twice: the loops block KB keys / CB columns by RV vectors in
// KB * RV accumulators (8 of AVX2's 16 registers), and keep_in_register makes
// the compiler keep the q / p vectors in registers (it re-read them from
// memory as an operand of every multiply-add, three loads per two FMAs, more
// than the host's ports issue). 1.28x the two 8-row tiles on Zen 3 (s = 512,
// one thread, 5.5 -> 4.3 ms).
constexpr const char* kTileSource = R"(
static void tileW(const Args& a, int n, const int64_t* qoff, const int64_t* mb,
                  const int64_t* orow, int64_t koff, int64_t voff) {
  constexpr int W = LANES, RV = ROW_VECTORS, R = W * RV, KB = 8 / RV, CB = 8 / RV;
  typedef float Vec __attribute__((vector_size(W * 4)));
  typedef int32_t VecI __attribute__((vector_size(W * 4)));
  // x * b + acc, b broadcast.
  const auto madd = [](Vec x, float b, Vec acc) -> Vec {
MADD_BODY  };
  const auto keep_in_register = [](Vec& x) {
KEEP_BODY  };
STRIDES  const Vec zero = {};
  const Vec ninf = zero - __builtin_inff();
  alignas(64) float qt[D * R];
  for (int64_t i = 0; i < D; ++i)
    for (int t = 0; t < R; ++t) qt[i * R + t] = a.Q[qoff[t] + i * QD];
  alignas(64) float acc[DV * R];
  for (int64_t i = 0; i < DV * R; ++i) acc[i] = 0.0f;
  Vec mx[RV], l[RV];
  VecI nan[RV];
  for (int v = 0; v < RV; ++v) mx[v] = ninf, l[v] = zero, nan[v] = VecI{};
  (void)mb;
  for (int64_t j0 = a.JB; j0 < a.JE; j0 += 64) {
    int64_t nb = a.JE - j0 < 64 ? a.JE - j0 : 64;
MASK_READ    alignas(64) float sc[64 * R];
    const float* __restrict kb = a.K + koff + j0 * KJ;
    int64_t jj = 0;
    // KB keys at a time: each q vector loaded serves KB keys.
    for (; jj + KB <= nb; jj += KB) {
      const float* __restrict k0 = kb + jj * KJ;
      Vec s[KB][RV];
      for (int u = 0; u < KB; ++u)
        for (int v = 0; v < RV; ++v) s[u][v] = zero;
      for (int64_t i = 0; i < D; ++i) {
        Vec qi[RV];
        memcpy(qi, qt + i * R, sizeof qi);
        for (int v = 0; v < RV; ++v) keep_in_register(qi[v]);
        for (int u = 0; u < KB; ++u) {
          const float kv = k0[u * KJ + i * KD];
          for (int v = 0; v < RV; ++v) s[u][v] = madd(qi[v], kv, s[u][v]);
        }
      }
      memcpy(sc + jj * R, s, sizeof s);
    }
    for (; jj < nb; ++jj) {
      const float* __restrict k0 = kb + jj * KJ;
      Vec s0[RV];
      for (int v = 0; v < RV; ++v) s0[v] = zero;
      for (int64_t i = 0; i < D; ++i) {
        Vec qi[RV];
        memcpy(qi, qt + i * R, sizeof qi);
        for (int v = 0; v < RV; ++v) s0[v] = madd(qi[v], k0[i * KD], s0[v]);
      }
      memcpy(sc + jj * R, s0, sizeof s0);
    }
    Vec bm[RV];
    for (int v = 0; v < RV; ++v) bm[v] = ninf;
    for (jj = 0; jj < nb; ++jj)
      for (int v = 0; v < RV; ++v) {
        Vec x;
        memcpy(&x, sc + jj * R + v * W, sizeof x);
        x *= SCALE;
MASK_APPLY        nan[v] |= x != x;
        bm[v] = x > bm[v] ? x : bm[v];
        memcpy(sc + jj * R + v * W, &x, sizeof x);
      }
    // mz: the new running max, 0 where it is still -inf (no key seen: its
    // probabilities are then exp2(-inf) = 0 instead of NaN).
    alignas(64) float mzs[R], corr[R];
    Vec cv[RV];
    for (int v = 0; v < RV; ++v) {
      const Vec mn = bm[v] > mx[v] ? bm[v] : mx[v];
      const Vec mz = mn == ninf ? zero : mn;
      memcpy(mzs + v * W, &mz, sizeof mz);
      for (int t = 0; t < W; ++t) corr[v * W + t] = lk::exp2f((mx[v][t] - mzs[v * W + t]) * LOG2E);
      memcpy(&cv[v], corr + v * W, sizeof cv[v]);
      mx[v] = mn;
    }
    // The probabilities: the flat block in chunks of 16 (mz repeated 16 / R
    // times), so the loop vectorises for every W. A per-key loop over W = 4
    // lanes stayed scalar (2/3 of a decode step's attention on AVX2). The
    // padding up to 16 is zeroed first: sc has 64 * R floats.
    alignas(64) float mzr[16];
    for (int k = 0; k < 16; ++k) mzr[k] = mzs[k % R];
    const int64_t ne = (nb * R + 15) & ~int64_t{15};
    for (int64_t i = nb * R; i < ne; ++i) sc[i] = 0.0f;
    for (int64_t i0 = 0; i0 < ne; i0 += 16)
      for (int k = 0; k < 16; ++k) sc[i0 + k] = lk::exp2f((sc[i0 + k] - mzr[k]) * LOG2E);
    for (int v = 0; v < RV; ++v) {
      Vec lsum = zero;
      for (jj = 0; jj < nb; ++jj) {
        Vec p;
        memcpy(&p, sc + jj * R + v * W, sizeof p);
        lsum += p;
      }
      l[v] = l[v] * cv[v] + lsum;
    }
    const float* __restrict vb = a.V + voff + j0 * VJ;
    // CB output columns at a time (CB * RV accumulators in registers), then
    // the columns left (a compile-time range: no loop where there are none).
    constexpr int64_t DB = DV / CB * CB;
    for (int64_t d0 = 0; d0 < DB; d0 += CB) {
      Vec ac[CB][RV];
      memcpy(ac, acc + d0 * R, sizeof ac);
      for (int u = 0; u < CB; ++u)
        for (int v = 0; v < RV; ++v) ac[u][v] *= cv[v];
      for (jj = 0; jj < nb; ++jj) {
        Vec p[RV];
        memcpy(p, sc + jj * R, sizeof p);
        for (int v = 0; v < RV; ++v) keep_in_register(p[v]);
        const float* __restrict vr = vb + jj * VJ + d0 * VD;
        for (int u = 0; u < CB; ++u)
          for (int v = 0; v < RV; ++v) ac[u][v] = madd(p[v], vr[u * VD], ac[u][v]);
      }
      memcpy(acc + d0 * R, ac, sizeof ac);
    }
    for (int64_t d0 = DB; d0 < DV; ++d0) {
      Vec a0[RV];
      memcpy(a0, acc + d0 * R, sizeof a0);
      for (int v = 0; v < RV; ++v) a0[v] *= cv[v];
      for (jj = 0; jj < nb; ++jj) {
        Vec p[RV];
        memcpy(p, sc + jj * R, sizeof p);
        for (int v = 0; v < RV; ++v) a0[v] = madd(p[v], vb[jj * VJ + d0 * VD], a0[v]);
      }
      memcpy(acc + d0 * R, a0, sizeof a0);
    }
  }
  for (int t = 0; t < n; ++t) {
    const int v = t / W, lane = t % W;
    if (a.P != nullptr) {  // a key split's state: max, sum, NaN seen, unscaled sums
      float* __restrict p = a.P + orow[t] * (DV + 3);
      p[0] = mx[v][lane], p[1] = l[v][lane], p[2] = nan[v][lane] ? 1.0f : 0.0f;
      for (int64_t i = 0; i < DV; ++i) p[3 + i] = acc[i * R + t];
      continue;
    }
    float* __restrict o = a.O + orow[t] * DV;
    if (nan[v][lane]) {
      for (int64_t i = 0; i < DV; ++i) o[i] = __builtin_nanf("");
    } else if (mx[v][lane] == -__builtin_inff()) {  // every key masked: _safe_softmax's 0
      for (int64_t i = 0; i < DV; ++i) o[i] = 0.0f;
    } else {
      const float inv = 1.0f / l[v][lane];
      for (int64_t i = 0; i < DV; ++i) o[i] = acc[i * R + t] * inv;
    }
  }
}
)";

// madd's body per lane count: FMA where the host has it (the AVX-512 one
// under __AVX512F__ only, where tile16 is compiled), else a multiply and an add.
std::string madd_body(int lanes) {
  std::string splat = "    const Vec bv = {b";
  for (int t = 1; t < lanes; ++t) splat += ", b";
  splat += "};\n";
  const std::string fma = lanes == 16
                              ? "__builtin_ia32_vfmaddps512_mask(x, bv, acc, (unsigned short)-1, 4)"
                          : lanes == 8 ? "__builtin_ia32_vfmaddps256(x, bv, acc)"
                                       : "__builtin_ia32_vfmaddps(x, bv, acc)";
  return "#if defined(__FMA__)\n" + splat + "    return " + fma +
         ";\n#else\n    return acc + x * b;\n#endif\n";
}

// The tile's mask over the block as one bit per key and row (lanes: rows;
// bit jj of lo / hi: key jj / jj + 32), the block shortened to the last key
// any row may see (a block no row sees is skipped), and whether every row
// sees every key of it (then no select is needed).
constexpr const char* kMaskRead = R"(    alignas(64) uint32_t lo[R], hi[R];
    uint64_t any = 0, all = ~uint64_t{0};
    for (int t = 0; t < R; ++t) {
      const uint64_t b = t < n ? mask_bits(a.MK + mb[t] + j0 * MS, nb, MS) : 0;
      lo[t] = (uint32_t)b, hi[t] = (uint32_t)(b >> 32);
      any |= b, all &= b;
    }
    if (any == 0) continue;
    nb = 64 - __builtin_clzll(any);
    const bool full = all == (nb == 64 ? ~uint64_t{0} : (uint64_t{1} << nb) - 1);
    VecI mlo[RV], mhi[RV];
    memcpy(mlo, lo, sizeof mlo);
    memcpy(mhi, hi, sizeof mhi);
)";

constexpr const char* kMaskApply = R"(        if (!full) {
          const VecI bit = jj < 32 ? mlo[v] >> (int)jj : mhi[v] >> (int)(jj - 32);
          x = (bit & 1) != 0 ? x : ninf;
        }
)";

// One row with the head dim along the vector lanes (VW floats: 16 with
// AVX-512, 8 with AVX2), for tiles of a few rows (decode: the query rows of
// one GQA group) where lanes over rows would sit mostly empty (with AVX2's 4
// lanes, 3 rows: 3 of 4 lanes used and one broadcast per multiply-add).
// Contiguous q / k / v with head dims that are multiples of VW only. Scores of
// VW keys are the lane sums of VW products, reduced together by a shuffle tree
// (hsum); the rest is the tile's online softmax for one row. probs @ v runs
// VW output columns at a time over the block's keys, the N rows' accumulators
// in registers. Separate multiplies and adds, unlike the tile: each score's
// sum is a chain of D / VW steps with only N chains per key, and FMA's longer
// latency made a decode step's attention 8 % slower on Zen 3 (151 -> 163 us
// over 2048 keys, 9 query heads on 3 KV heads).
constexpr const char* kRowSource = R"(
typedef float VF __attribute__((vector_size(VW * 4)));
typedef int32_t VI __attribute__((vector_size(VW * 4)));
HSUM_SOURCE
template <int N>
static void rows(const Args& a, const int64_t* qoff, const int64_t* mb, const int64_t* orow,
                 int64_t koff, int64_t voff) {
  constexpr int64_t CD = D / VW, CV = DV / VW;
STRIDES  VI lane;
  for (int i = 0; i < VW; ++i) lane[i] = i;
  const float ninf = -__builtin_inff();
  const VF zero = {};
  VF q[N][CD], acc[N][CV];
  float mx[N], l[N];
  bool nan[N];
  for (int t = 0; t < N; ++t) {
    for (int64_t c = 0; c < CD; ++c) memcpy(&q[t][c], a.Q + qoff[t] + VW * c, sizeof q[t][c]);
    for (int64_t c = 0; c < CV; ++c) acc[t][c] = zero;
    mx[t] = ninf, l[t] = 0.0f, nan[t] = false;
  }
  (void)mb;
  for (int64_t j0 = a.JB; j0 < a.JE; j0 += 64) {
    int64_t nb = a.JE - j0 < 64 ? a.JE - j0 : 64;
MASK_READ    alignas(64) float sc[N][64];
    for (int64_t g = 0; g < nb; g += VW) {
      VF part[N][VW];
      for (int64_t k = 0; k < VW; ++k) {
        if (g + k >= nb) {
          for (int t = 0; t < N; ++t) part[t][k] = zero;
          continue;
        }
        const float* __restrict kr = a.K + koff + (j0 + g + k) * KJ;
        VF s[N];
        for (int t = 0; t < N; ++t) s[t] = zero;
        for (int64_t c = 0; c < CD; ++c) {
          VF kv;
          memcpy(&kv, kr + VW * c, sizeof kv);
          for (int t = 0; t < N; ++t) s[t] = c == 0 ? q[t][0] * kv : s[t] + q[t][c] * kv;
        }
        for (int t = 0; t < N; ++t) part[t][k] = s[t];
      }
      for (int t = 0; t < N; ++t) {
        VF r;
        hsum(part[t], &r);
        r *= SCALE;
        memcpy(sc[t] + g, &r, sizeof r);
      }
    }
    // Per row: lanes past nb (zero products) and masked keys become -inf;
    // mz is the new running max, 0 where it is still -inf (probabilities
    // exp2(-inf) = 0 rather than NaN).
    const int64_t ng = (nb + VW - 1) / VW;
    for (int t = 0; t < N; ++t) {
      VF bmv = zero + ninf;
      VI nanv = {};
      for (int64_t g = 0; g < ng; ++g) {
        VF x;
        memcpy(&x, sc[t] + VW * g, sizeof x);
        VI live = lane + (int32_t)(VW * g) < (int32_t)nb;
MASK_APPLY        x = live ? x : zero + ninf;
        nanv |= x != x;
        bmv = x > bmv ? x : bmv;
        memcpy(sc[t] + VW * g, &x, sizeof x);
      }
      float bm = ninf;
      for (int i = 0; i < VW; ++i) {
        bm = bmv[i] > bm ? bmv[i] : bm;
        nan[t] = nan[t] || nanv[i] != 0;
      }
      const float mn = bm > mx[t] ? bm : mx[t];
      const float mz = mn == ninf ? 0.0f : mn;
      const float corr = lk::exp2f((mx[t] - mz) * LOG2E);
      mx[t] = mn;
      for (int64_t jj = 0; jj < VW * ng; ++jj) sc[t][jj] = lk::exp2f((sc[t][jj] - mz) * LOG2E);
      VF lsv = zero;
      for (int64_t g = 0; g < ng; ++g) {
        VF p;
        memcpy(&p, sc[t] + VW * g, sizeof p);
        lsv += p;
      }
      float ls = 0.0f;
      for (int i = 0; i < VW; ++i) ls += lsv[i];
      l[t] = l[t] * corr + ls;
      for (int64_t c = 0; c < CV; ++c) acc[t][c] *= corr;
    }
    const float* __restrict vb = a.V + voff + j0 * VJ;
    for (int64_t c = 0; c < CV; ++c) {
      VF o[N];
      for (int t = 0; t < N; ++t) o[t] = acc[t][c];
      for (int64_t jj = 0; jj < nb; ++jj) {
        VF vv;
        memcpy(&vv, vb + jj * VJ + VW * c, sizeof vv);
        for (int t = 0; t < N; ++t) o[t] += sc[t][jj] * vv;
      }
      for (int t = 0; t < N; ++t) acc[t][c] = o[t];
    }
  }
  for (int t = 0; t < N; ++t) {
    if (a.P != nullptr) {  // a key split's state: max, sum, NaN seen, unscaled sums
      float* __restrict p = a.P + orow[t] * (DV + 3);
      p[0] = mx[t], p[1] = l[t], p[2] = nan[t] ? 1.0f : 0.0f;
      for (int64_t c = 0; c < CV; ++c) memcpy(p + 3 + VW * c, &acc[t][c], sizeof acc[t][c]);
      continue;
    }
    float* __restrict o = a.O + orow[t] * DV;
    if (nan[t]) {
      for (int64_t i = 0; i < DV; ++i) o[i] = __builtin_nanf("");
    } else if (mx[t] == ninf) {  // every key masked: _safe_softmax's 0
      for (int64_t i = 0; i < DV; ++i) o[i] = 0.0f;
    } else {
      const float inv = 1.0f / l[t];
      for (int64_t c = 0; c < CV; ++c) {
        const VF r = acc[t][c] * inv;
        memcpy(o + VW * c, &r, sizeof r);
      }
    }
  }
}
)";

// hsum(v, out): lane k of *out is the sum of the lanes of v[k], by a tree of
// shuffles (HSUM_TREE, per width): each step adds two halves of pairs of
// vectors, so log2(VW) steps reduce VW vectors together. Without
// __builtin_shufflevector (GCC < 12), plain loops.
constexpr const char* kHsum = R"(
static inline void hsum(const VF* v, VF* out) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define LK_ATT_SHUFFLE 1
#endif
#endif
#if defined(LK_ATT_SHUFFLE)
HSUM_TREE#else
  for (int k = 0; k < VW; ++k) {
    float s = 0.0f;
    for (int i = 0; i < VW; ++i) s += v[k][i];
    (*out)[k] = s;
  }
#endif
}
)";

constexpr const char* kHsumTree16 = R"(  VF w[8], x[4], y[2];
  for (int k = 0; k < 8; ++k)  // lanes 0-7: 8 partial sums of v[2k]; 8-15: of v[2k + 1]
    w[k] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18,
                                   19, 20, 21, 22, 23) +
           __builtin_shufflevector(v[2 * k], v[2 * k + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25,
                                   26, 27, 28, 29, 30, 31);
  for (int k = 0; k < 4; ++k)  // 4 lanes each of v[4k] .. v[4k + 3]
    x[k] = __builtin_shufflevector(w[2 * k], w[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18,
                                   19, 24, 25, 26, 27) +
           __builtin_shufflevector(w[2 * k], w[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22,
                                   23, 28, 29, 30, 31);
  for (int k = 0; k < 2; ++k)  // 2 lanes each of v[8k] .. v[8k + 7]
    y[k] = __builtin_shufflevector(x[2 * k], x[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20,
                                   21, 24, 25, 28, 29) +
           __builtin_shufflevector(x[2 * k], x[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22,
                                   23, 26, 27, 30, 31);
  *out = __builtin_shufflevector(y[0], y[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                 28, 30) +
         __builtin_shufflevector(y[0], y[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                 29, 31);
)";

constexpr const char* kHsumTree8 = R"(  VF w[4], x[2];
  for (int k = 0; k < 4; ++k)  // lanes 0-3: 4 partial sums of v[2k]; 4-7: of v[2k + 1]
    w[k] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(v[2 * k], v[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  for (int k = 0; k < 2; ++k)  // 2 lanes each of v[4k], v[4k + 1], v[4k + 2], v[4k + 3]
    x[k] = __builtin_shufflevector(w[2 * k], w[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13) +
           __builtin_shufflevector(w[2 * k], w[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15);
  *out = __builtin_shufflevector(x[0], x[1], 0, 2, 4, 6, 8, 10, 12, 14) +
         __builtin_shufflevector(x[0], x[1], 1, 3, 5, 7, 9, 11, 13, 15);
)";

// The row mask: bits[t] holds row t's 64 keys; nb shortened as in the tile.
constexpr const char* kRowMaskRead = R"(    uint64_t bits[N], any = 0;
    for (int t = 0; t < N; ++t) {
      bits[t] = mask_bits(a.MK + mb[t] + j0 * MS, nb, MS);
      any |= bits[t];
    }
    if (any == 0) continue;
    nb = 64 - __builtin_clzll(any);
)";

constexpr const char* kRowMaskApply =
    R"(        const VI word = VI{} + (int32_t)(uint32_t)(bits[t] >> (VW * g));
        live &= ((word >> lane) & 1) != 0;
)";

// Runs a tile of n rows sharing K / V rows. With AVX-512 (32 vector
// registers): 16 or 8 lanes, and FEW_ROWS_512 (the 16-float row path where
// the layout allows it, else tile4) for up to 4 rows. With 16 registers,
// 16-lane vectors would spill: 8 lanes, 16 rows as two vectors of 8 (tile8x2),
// and FEW_ROWS_AVX2 (the 8-float row path where the layout allows it, else tile4).
constexpr const char* kRunTile = R"(static void run_tile(const Args& a, int n, const int64_t* qoff,
                     const int64_t* mb, const int64_t* orow, int64_t koff, int64_t voff) {
#if defined(__AVX512F__)
  if (n > 8) return tile16(a, n, qoff, mb, orow, koff, voff);
  if (n > 4) return tile8(a, n, qoff, mb, orow, koff, voff);
FEW_ROWS_512#else
  if (n > 8) return tile8x2(a, n, qoff, mb, orow, koff, voff);
  if (n > 4) return tile8(a, n, qoff, mb, orow, koff, voff);
FEW_ROWS_AVX2#endif
}
)";

// Bit jj set where mask byte jj (of nb <= 64, stride ms) is nonzero.
constexpr const char* kMaskBits = R"(
static inline uint64_t mask_bits(const uint8_t* p, int64_t nb, int64_t ms) {
#if defined(__AVX512BW__)
  if (ms == 1) {  // a masked load never touches bytes past nb
    const __mmask64 live = nb >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
    const __m512i v = _mm512_maskz_loadu_epi8(live, p);
    return (uint64_t)_mm512_test_epi8_mask(v, v);
  }
#elif defined(__AVX2__)
  if (ms == 1) {  // whole 32-byte groups below nb (vpmovmskb), the rest byte by byte
    typedef char C32 __attribute__((vector_size(32)));
    uint64_t bits = 0;
    int64_t j = 0;
    for (; j + 32 <= nb; j += 32) {
      C32 v;
      memcpy(&v, p + j, sizeof v);
      const uint32_t zero = (uint32_t)__builtin_ia32_pmovmskb256((C32)(v == 0));
      bits |= (uint64_t)~zero << j;
    }
    for (; j < nb; ++j) bits |= (uint64_t)(p[j] != 0) << j;
    return bits;
  }
#endif
  uint64_t bits = 0;
  for (int64_t j = 0; j < nb; ++j) bits |= (uint64_t)(p[j * ms] != 0) << j;
  return bits;
}
)";

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
  const std::string scratch_slot = s.mask ? "5" : "4";
  // Key splits: one per pool thread (at most kMaxKeySplits), used when there
  // are few rows (at most kSplitRowsPerThread per thread: a decode step's
  // heads) and at least kSplitKeysPerThread keys per thread.
  const int splits = std::clamp(ThreadPool::shared().size(), 1, kMaxKeySplits);
  const std::string split_condition = "KS > 1 && S >= " + std::to_string(kSplitKeysPerThread) +
                                      " * KS && R <= " + std::to_string(kSplitRowsPerThread) +
                                      " * KS";
  const Expr rows = (product(pv.batch) * pv.m).simplify();

  // Strides known at generation time are constants of the tile functions (the
  // contiguous case then vectorises with plain loads); others are read from Args.
  const std::vector<std::pair<std::string, Expr>> strides{
      {"QD", qk.a_k_stride}, {"KD", qk.b_k_stride}, {"KJ", qk.b_n_stride},
      {"VJ", pv.b_k_stride}, {"VD", pv.b_n_stride}, {"MS", mask_stride}};
  std::string stride_decls, stride_args;
  for (const auto& [field, e] : strides) {
    const auto v = const_of(e);
    stride_decls += v ? "  constexpr int64_t " + field + " = " + std::to_string(*v) + ";\n"
                      : "  const int64_t " + field + " = a." + field + ";\n";
    stride_args += "  a." + field + " = " + c(e) + ";\n";
  }
  const auto instantiate = [&](std::string t, const char* mask_read, const char* mask_apply) {
    replace_all(t, "MASK_READ", s.mask ? mask_read : "");
    replace_all(t, "MASK_APPLY", s.mask ? mask_apply : "");
    replace_all(t, "STRIDES", stride_decls + "  (void)MS;\n");
    // The scores rounded as the reference rounds raw * scale; exp(x - max) is
    // exp2((x - max) * log2(e)): the difference is exact near the max, so
    // the largest probabilities lose no accuracy to large scores.
    replace_all(t, "SCALE", float_literal(s.scale));
    replace_all(t, "LOG2E", "1.44269504088896341f");
    return t;
  };
  // The row path needs contiguous heads that fill whole vectors.
  const int64_t head = *const_of(qk.k), head_v = *const_of(pv.n);
  const bool contiguous =
      is_const(qk.a_k_stride, 1) && is_const(qk.b_k_stride, 1) && is_const(pv.b_n_stride, 1);
  const auto fills = [&](int width) {
    return contiguous && head % width == 0 && head_v % width == 0;
  };
  // tile<lanes>, or tile<lanes>x2 with two vectors of rows.
  const auto tile = [&](int lanes, int row_vectors = 1) {
    std::string t = instantiate(kTileSource, kMaskRead, kMaskApply);
    replace_all(t, "tileW",
                "tile" + std::to_string(lanes) +
                    (row_vectors > 1 ? "x" + std::to_string(row_vectors) : ""));
    replace_all(t, "LANES", std::to_string(lanes));
    replace_all(t, "ROW_VECTORS", std::to_string(row_vectors));
    replace_all(t, "MADD_BODY", madd_body(lanes));
    // (An empty asm that takes and returns the vector in a register.)
    // (Without AVX a 32-byte vector fits no register: nothing to keep.)
    replace_all(t, "KEEP_BODY",
                row_vectors > 1 ? "#if defined(__AVX__)\n    __asm__(\"\" : \"+x\"(x));\n#else\n"
                                  "    (void)x;\n#endif\n"
                                : "    (void)x;\n");
    return t;
  };
  const auto row_path = [&](int width) {
    std::string t = instantiate(kRowSource, kRowMaskRead, kRowMaskApply);
    replace_all(t, "HSUM_SOURCE", kHsum);
    replace_all(t, "HSUM_TREE", width == 16 ? kHsumTree16 : kHsumTree8);
    replace_all(t, "VW", std::to_string(width));
    return t;
  };
  // Up to 4 rows: the row path of the host's vector width where the layout
  // allows it, else tile4 (only what a host uses is emitted: less to compile).
  const auto few_rows = [&](int width) {
    return fills(width) ? "  switch (n) {\n"
                          "    case 1: return rows<1>(a, qoff, mb, orow, koff, voff);\n"
                          "    case 2: return rows<2>(a, qoff, mb, orow, koff, voff);\n"
                          "    case 3: return rows<3>(a, qoff, mb, orow, koff, voff);\n"
                          "    default: return rows<4>(a, qoff, mb, orow, koff, voff);\n"
                          "  }\n"
                        : "  tile4(a, n, qoff, mb, orow, koff, voff);\n";
  };
  std::string tile_code = tile(8) + "#if defined(__AVX512F__)\n" + tile(16) +
                          (fills(16) ? row_path(16) : tile(4)) + "#else\n" + tile(8, 2) +
                          (fills(8) ? row_path(8) : tile(4)) + "#endif\n";
  std::string run = kRunTile;
  replace_all(run, "FEW_ROWS_512", few_rows(16));
  replace_all(run, "FEW_ROWS_AVX2", few_rows(8));
  tile_code += run;

  std::string code = "// CpuAttention: " + qk.to_string() + " | " + pv.to_string() + "\n";
  if (s.mask) code += "#if defined(__AVX512BW__)\n#include <immintrin.h>\n#endif\n";
  code += "namespace " + symbol +
          "_impl {\nconstexpr int64_t D = " + std::to_string(*const_of(qk.k)) +
          ", DV = " + std::to_string(*const_of(pv.n)) +
          ";\n"
          "struct Args {\n"
          "  const float* Q; const float* K; const float* V; const uint8_t* MK; float* O;\n"
          "  int64_t QD, KD, KJ, VJ, VD, MS;\n"
          "  int64_t JB, JE;  // the keys [JB, JE) (all S unless split)\n"
          "  float* P;        // a key split's state per row, or null: the output\n"
          "};\n";
  if (s.mask) code += kMaskBits;
  code += tile_code + "}  // namespace " + symbol + "_impl\n";
  code += entry_prologue(symbol, k);
  code += "  " + symbol +
          "_impl::Args a;\n  a.Q = (const float*)_buf[0];\n  a.K = (const float*)_buf[1];\n"
          "  a.V = (const float*)_buf[2];\n";
  code += s.mask ? "  a.MK = (const uint8_t*)_buf[3];\n" : "  a.MK = nullptr;\n";
  code += "  a.O = (float*)_buf[" + out_slot + "];\n";
  code += "  const int64_t S = " + c(qk.n) + ";\n";
  code += stride_args;
  // Items: kTile per output row and key split (see the launches below); a
  // chunk owns the (row, split) pairs whose first item it holds.
  code += "  const int64_t R = " + c(rows) + ";\n";
  code += "  const int64_t KS = " + std::to_string(splits) + ", DV = " + symbol + "_impl::DV;\n";
  code += "  const bool split = " + split_condition + ";\n";
  code += "  float* const P = " +
          (splits > 1 ? "(float*)_buf[" + scratch_slot + "]" : std::string("nullptr")) + ";\n";
  code += "  const int64_t v0 = (_begin + " + std::to_string(kTile - 1) + ") / " +
          std::to_string(kTile) + ", v1 = (_end + " + std::to_string(kTile - 1) + ") / " +
          std::to_string(kTile) + ";\n";
  // Rows [r, rend) over keys [a.JB, a.JE), in tiles of rows sharing K / V rows.
  code += "  auto rows_of = [&](int64_t r, int64_t rend) -> int32_t {\n";
  code +=
      "  while (r < rend) {\n"
      "    int64_t qoffs[" +
      std::to_string(kTile) + "], mbs[" + std::to_string(kTile) + "], orows[" +
      std::to_string(kTile) +
      "], koff0 = 0, voff0 = 0;\n"
      "    int n = 0;\n"
      "    while (r < rend && n < " +
      std::to_string(kTile) + ") {\n";
  code += row_offsets(pv, c, "r", "poff", "voff");
  code +=
      "    if (S > 0 && poff % S != 0) {  // not a whole row of the probabilities\n"
      "      _err[0] = r; _err[1] = poff; _err[2] = S;\n"
      "      return 4;  // kKernelUnsupportedLayout\n"
      "    }\n"
      "    const int64_t r1 = S > 0 ? poff / S : 0;\n";
  code += row_offsets(qk, c, "r1", "qoff", "koff");
  code +=
      "    if (n > 0 && (koff != koff0 || voff != voff0)) break;  // other K / V rows\n"
      "    koff0 = koff; voff0 = voff;\n"
      "    qoffs[n] = qoff; orows[n] = r;\n";
  if (s.mask)
    code += "    const int64_t _mf = r1 * S;\n    mbs[n] = " + c(mask_base) + ";\n";
  else
    code += "    mbs[n] = 0;\n";
  code +=
      "    ++n; ++r;\n"
      "    }\n"
      "    for (int t = n; t < " +
      std::to_string(kTile) +
      "; ++t) qoffs[t] = qoffs[0], mbs[t] = mbs[0], orows[t] = orows[0];\n"
      "    " +
      symbol +
      "_impl::run_tile(a, n, qoffs, mbs, orows, koff0, voff0);\n"
      "  }\n"
      "  return 0;\n"
      "  };\n";
  // Unsplit: row-major items (row r's are r KS .. r KS + KS - 1), every key,
  // straight into the output. Split (few rows, many keys: a decode step's
  // GQA groups would leave threads idle): split-major items, split c taking
  // keys [S c / KS, S (c + 1) / KS) in whole blocks of 64 into its state in
  // the scratch; the second launch combines the splits of each row.
  code +=
      "  if (!split) {\n"
      "    a.JB = 0, a.JE = S, a.P = nullptr;\n"
      "    const int64_t r0 = (v0 + KS - 1) / KS, r1 = (v1 + KS - 1) / KS;\n"
      "    return rows_of(r0, r1 < R ? r1 : R);\n"
      "  }\n"
      "  for (int64_t c = v0 / R; c < KS && c * R < v1; ++c) {\n"
      "    a.JB = S * c / KS / 64 * 64;\n"
      "    a.JE = c + 1 == KS ? S : S * (c + 1) / KS / 64 * 64;\n"
      "    a.P = P + c * R * (DV + 3);\n"
      "    const int64_t r0 = v0 > c * R ? v0 - c * R : 0, r1 = v1 - c * R < R ? v1 - c * R : R;\n"
      "    if (const int32_t st = rows_of(r0, r1); st != 0) return st;\n"
      "  }\n"
      "  return 0;\n"
      "}\n";
  if (splits > 1) {
    // Each row's splits combined as one online softmax would have: the
    // largest max M, sums and values scaled by exp(m_c - M) (a split that saw
    // no key has m_c = -inf and weight 0); NaN if any split saw one, zeros if
    // no split saw a key.
    code += entry_prologue(symbol + "_combine", k);
    code +=
        "  constexpr int64_t DV = " + symbol + "_impl::DV, KS = " + std::to_string(splits) +
        ";\n  const int64_t S = " + c(qk.n) + ", R = " + c(rows) + ";\n" + "  if (!(" +
        split_condition +
        ")) return 0;\n"
        "  const float* P = (const float*)_buf[" +
        scratch_slot +
        "];\n"
        "  float* O = (float*)_buf[" +
        out_slot +
        "];\n"
        "  for (int64_t r = (_begin + " +
        std::to_string(kTile - 1) + ") / " + std::to_string(kTile) + "; r * " +
        std::to_string(kTile) +
        " < _end && r < R; ++r) {\n"
        "    float M = -__builtin_inff();\n"
        "    bool nan = false;\n"
        "    for (int64_t c = 0; c < KS; ++c) {\n"
        "      const float* p = P + (c * R + r) * (DV + 3);\n"
        "      nan = nan || p[2] != 0.0f;\n"
        "      M = p[0] > M ? p[0] : M;\n"
        "    }\n"
        "    float* __restrict o = O + r * DV;\n"
        "    if (nan) {\n"
        "      for (int64_t i = 0; i < DV; ++i) o[i] = __builtin_nanf(\"\");\n"
        "      continue;\n"
        "    }\n"
        "    if (M == -__builtin_inff()) {  // every key masked: _safe_softmax's 0\n"
        "      for (int64_t i = 0; i < DV; ++i) o[i] = 0.0f;\n"
        "      continue;\n"
        "    }\n"
        "    float w[KS], l = 0.0f;\n"
        "    for (int64_t c = 0; c < KS; ++c) {\n"
        "      const float* p = P + (c * R + r) * (DV + 3);\n"
        "      w[c] = p[0] == -__builtin_inff() ? 0.0f : lk::exp2f((p[0] - M) * "
        "1.44269504088896341f);\n"
        "      l += p[1] * w[c];\n"
        "    }\n"
        "    const float inv = 1.0f / l;\n"
        "    for (int64_t i = 0; i < DV; ++i) {\n"
        "      float v = 0.0f;\n"
        "      for (int64_t c = 0; c < KS; ++c) v += w[c] * P[(c * R + r) * (DV + 3) + 3 + i];\n"
        "      o[i] = v * inv;\n"
        "    }\n"
        "  }\n"
        "  return 0;\n"
        "}\n";
  }
  k.code = std::move(code);
  k.inputs = {d->q, d->k, d->v};
  if (d->mask) k.inputs.push_back(*d->mask);
  k.outputs = {d->out};
  KernelLaunch l;
  l.symbol = symbol;
  // kTile items per row and split, chunks cut at multiples of kTile (a row
  // belongs to the chunk holding its first item): with one item per row, a
  // decode step (one row per head: 9 rows) would run on one thread.
  l.extent = (rows * kTile * splits).simplify();
  l.align = kTile;
  l.work_per_item = (qk.n * (qk.k + pv.n) / (kTile * splits)).simplify();
  k.launches.push_back(std::move(l));
  if (splits > 1) {
    KernelLaunch combine;
    combine.symbol = symbol + "_combine";
    combine.extent = (rows * kTile).simplify();
    combine.align = kTile;
    combine.work_per_item = (pv.n * splits / kTile).simplify();
    k.launches.push_back(std::move(combine));
    // each split's state per row: max, sum, NaN seen, DV unscaled sums
    k.scratch_bytes = (rows * Expr(splits * (*const_of(pv.n) + 3) * 4)).simplify();
  }
  return k;
}

}  // namespace luminal::cpu
