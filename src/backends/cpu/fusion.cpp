#include "luminal/backends/cpu/fusion.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {

namespace {

using egraph::ClassId;
using egraph::EGraph;
using egraph::ENodeId;
using egraph::OpId;
using egraph::Payload;
using egraph::PayloadTuple;

// Ops a body may contain.
bool fusible(OpId op) {
  if (op == egraph::kViewOp) return true;
  const auto kind = egraph::hlir_kind(op);
  if (!kind) return false;
  switch (*kind) {
    case OpKind::Input:
    case OpKind::Output:
    case OpKind::Gather:
    case OpKind::Scatter:
      return false;
    default:
      return true;
  }
}

// Ops that start a body (the rules' roots): computations, not leaves or views.
bool computes(OpId op) {
  const auto kind = egraph::hlir_kind(op);
  return kind && fusible(op) && *kind != OpKind::Constant && *kind != OpKind::Iota;
}

// Classes that stay kernel inputs: those holding a matrix product (it stays
// its own library or matmul kernel) or any backend kernel op.
// Registered once per op (from its registration, possibly while another
// thread's compile reads them): a few lock-free slots.
struct TransparentOps {
  static constexpr size_t kSlots = 8;
  std::array<std::atomic<OpId>, kSlots> ops{};
  std::atomic<size_t> count{0};
  bool contains(OpId op) const {
    const size_t n = count.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i)
      if (ops[i].load(std::memory_order_relaxed) == op) return true;
    return false;
  }
};
TransparentOps& transparent_ops() {
  static TransparentOps ops;
  return ops;
}

bool boundary(const EGraph& eg, ClassId c) {
  for (ENodeId n : eg.nodes(c)) {
    const OpId op = eg.op(n);
    if (op == fused_op() || transparent_ops().contains(op)) continue;
    if (op == egraph::kMatMulOp || egraph::OpRegistry::global().info(op).kernel_group) return true;
  }
  return false;
}

// The number of elements of `shape` with every dim variable at 64: enough to
// tell a broadcast operand (fewer elements than the body's result, whatever
// the dims) from the rest. nullopt if it cannot be evaluated.
std::optional<int64_t> probe_numel(const egraph::Shape& shape) {
  const Expr n = product(shape);
  DimMap dims;
  for (const std::string& v : n.variables()) dims[v] = 64;
  try {
    return n.eval(dims);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Builds the largest body from one e-node; with `hoist`, classes that would be
// recomputed for every element of a broadcast (see hoisted()) stay inputs.
class BodyBuilder {
public:
  BodyBuilder(const EGraph& eg, ClassId root, bool hoist)
      : eg_(eg), hoist_(hoist), root_numel_(probe_numel(eg.info(root).shape)) {}

  // Whether the body left out a class it would otherwise have inlined.
  bool hoisted() const { return hoisted_; }

  // Entry index of class `c`'s value (inlined or an input ref).
  int64_t value(ClassId c) {
    c = eg_.find(c);
    if (auto it = memo_.find(c); it != memo_.end()) return it->second;
    if (hoist_ && recomputed_per_broadcast(c)) {
      hoisted_ = true;
      const int64_t ref = input(c);
      memo_[c] = ref;
      return ref;
    }
    if (entries_.size() < kMaxFusedEntries && !boundary(eg_, c) && !on_path_.count(c)) {
      for (ENodeId n : eg_.nodes(c)) {
        if (!fusible(eg_.op(n))) continue;
        bool cyclic = false;
        for (ClassId k : eg_.children(n))
          cyclic = cyclic || on_path_.count(eg_.find(k)) || eg_.find(k) == c;
        if (cyclic) continue;
        const int64_t e = entry(c, n);
        memo_[c] = e;
        return e;
      }
    }
    const int64_t ref = input(c);
    memo_[c] = ref;
    return ref;
  }

  // Entry of e-node n (in class c).
  int64_t entry(ClassId c, ENodeId n) {
    on_path_.insert(c);
    PayloadTuple refs;
    for (ClassId k : eg_.children(n)) refs.emplace_back(value(k));
    on_path_.erase(c);
    PayloadTuple e;
    e.reserve(3);
    e.push_back(Payload(static_cast<int64_t>(eg_.op(n))));
    e.push_back(eg_.node_payload(n));
    e.push_back(Payload(std::move(refs)));
    entries_.push_back(Payload(std::move(e)));
    return static_cast<int64_t>(entries_.size()) - 1;
  }

  int64_t input(ClassId c) {
    auto it = std::find(inputs_.begin(), inputs_.end(), c);
    if (it == inputs_.end()) {
      inputs_.push_back(c);
      it = std::prev(inputs_.end());
    }
    return -1 - static_cast<int64_t>(it - inputs_.begin());
  }

  const std::vector<ClassId>& inputs() const { return inputs_; }
  size_t size() const { return entries_.size(); }
  PayloadTuple take() { return std::move(entries_); }

private:
  // What inlining a class evaluates (through the e-nodes value() would pick).
  struct Work {
    bool transcendental = false;  // Sin, Exp2 or Log2 somewhere
    bool reduces = false;         // a reduction somewhere
  };

  Work work(ClassId c) {
    c = eg_.find(c);
    if (auto it = work_.find(c); it != work_.end()) return it->second;
    work_[c] = {};  // an e-graph cycle adds nothing
    Work w;
    if (!boundary(eg_, c))
      for (ENodeId n : eg_.nodes(c)) {
        if (!fusible(eg_.op(n))) continue;
        if (const auto kind = egraph::hlir_kind(eg_.op(n))) {
          w.transcendental = *kind == OpKind::Sin || *kind == OpKind::Exp2 || *kind == OpKind::Log2;
          w.reduces = *kind == OpKind::SumReduce || *kind == OpKind::MaxReduce;
        }
        for (ClassId k : eg_.children(n)) {
          const Work kw = work(k);
          w.transcendental = w.transcendental || kw.transcendental;
          w.reduces = w.reduces || kw.reduces;
        }
        break;
      }
    work_[c] = w;
    return w;
  }

  // A class with fewer elements than the result, which the body reads through
  // a broadcast, is evaluated once per element of the result: a rotary table
  // [s, d] inside the rotation of [heads, s, d] computes its sin and exp2
  // `heads` times. Worth its own kernel when it evaluates transcendentals and
  // no reduction (reductions feeding a broadcast, as in softmax and the norms,
  // are what one-pass fusion is for; the generated loops evaluate them once per
  // row).
  bool recomputed_per_broadcast(ClassId c) {
    if (!root_numel_ || boundary(eg_, c)) return false;
    const std::optional<int64_t> n = probe_numel(eg_.info(c).shape);
    if (!n || *n >= *root_numel_) return false;
    const Work w = work(c);
    return w.transcendental && !w.reduces;
  }

  const EGraph& eg_;
  const bool hoist_;
  const std::optional<int64_t> root_numel_;
  bool hoisted_ = false;
  std::map<ClassId, Work> work_;
  std::map<ClassId, int64_t> memo_;
  std::set<ClassId> on_path_;
  std::vector<ClassId> inputs_;
  PayloadTuple entries_;
};

// Rebuild the body's HLIR nodes from the realised children.
Tensor lower_body(Graph& g, const Payload& p, std::span<const Tensor> kids) {
  const PayloadTuple& entries = p.at(2).as<PayloadTuple>();
  std::vector<Tensor> built;
  for (const Payload& e : entries) {
    std::vector<Tensor> ops;
    for (const Payload& r : e.at(2).as<PayloadTuple>()) {
      const int64_t ref = r.as<int64_t>();
      ops.push_back(ref >= 0 ? built.at(static_cast<size_t>(ref))
                             : kids[static_cast<size_t>(-1 - ref)]);
    }
    built.push_back(egraph::build_hlir(g, static_cast<OpId>(e.at(0).as<int64_t>()), e.at(1), ops));
  }
  if (built.empty()) throw Error("CpuFused: empty body");
  return built.back();
}

// The body from e-node `node`; `hoisted` (when given) receives whether the
// body left a broadcast transcendental to its own kernel (see BodyBuilder).
std::optional<FusedBody> build_body(const EGraph& eg, ClassId cls, ENodeId node, bool hoist,
                                    bool* hoisted = nullptr) {
  const ClassId root = eg.find(cls);
  BodyBuilder b(eg, root, hoist);
  b.entry(root, node);
  if (hoisted != nullptr) *hoisted = b.hoisted();
  if (b.size() < 2) return std::nullopt;  // a single op is the unfused kernel already
  for (ClassId in : b.inputs())
    if (in == root) return std::nullopt;  // the body would read its own result
  const egraph::TensorInfo& info = eg.info(root);
  FusedBody out;
  out.inputs = b.inputs();
  PayloadTuple parts;
  parts.reserve(3);
  parts.push_back(Payload(info.dtype));
  parts.push_back(Payload(info.shape));
  parts.push_back(Payload(b.take()));
  out.payload = Payload(std::move(parts));
  return out;
}

// The action of every fusion rule: the largest body from the matched node and,
// where it differs, the body that leaves broadcast transcendentals to their
// own kernels (added second, so the search's kernel-op seeding, which applies
// every CpuFused node in order, starts from it; timing decides). The second is
// built first: where it leaves nothing out it is the largest body, built once.
void add_fused(EGraph& eg, ClassId cls, ENodeId node) {
  auto add = [&](const std::optional<FusedBody>& body) {
    if (body) eg.merge(eg.find(cls), eg.add(fused_op(), body->payload, body->inputs));
  };
  bool hoisted = false;
  std::optional<FusedBody> second = build_body(eg, cls, node, true, &hoisted);
  if (hoisted) add(build_body(eg, cls, node, false));
  add(second);
}

}  // namespace

std::optional<FusedBody> build_fused_body(const EGraph& eg, ClassId cls, ENodeId node) {
  return build_body(eg, cls, node, false);
}

Tensor lower_fused_body(Graph& g, const Payload& body, std::span<const Tensor> inputs) {
  return lower_body(g, body, inputs);
}

void add_fusion_transparent_op(OpId op) {
  static std::mutex mutex;  // writers only
  std::lock_guard<std::mutex> lock(mutex);
  TransparentOps& t = transparent_ops();
  if (t.contains(op)) return;
  const size_t n = t.count.load(std::memory_order_relaxed);
  if (n == TransparentOps::kSlots) throw Error("add_fusion_transparent_op: too many ops");
  t.ops[n].store(op, std::memory_order_relaxed);
  t.count.store(n + 1, std::memory_order_release);
}

const std::vector<std::string>& fusion_root_patterns() {
  static const std::vector<std::string> patterns = {
      "(Exp2 ?a)",   "(Log2 ?a)",        "(Sin ?a)",         "(Sqrt ?a)",
      "(Recip ?a)",  "(Cast@_ ?a)",      "(Add ?a ?b)",      "(Mul ?a ?b)",
      "(Mod ?a ?b)", "(LessThan ?a ?b)", "(SumReduce@_ ?a)", "(MaxReduce@_ ?a)"};
  return patterns;
}

OpId fused_op() {
  static const OpId id = [] {
    egraph::OpInfo info;
    info.name = "CpuFused";
    info.arity = -1;
    info.kernel_group = true;
    info.group_reads_views = true;
    info.payload_doc = "(dtype, shape, entries (op, payload, refs))";
    info.infer = [](const Payload& p, std::span<const egraph::TensorInfo* const>) {
      return egraph::TensorInfo{p.at(0).as<DType>(), p.at(1).as<egraph::Shape>()};
    };
    info.lower = [](Graph& g, const Payload& p, std::span<const Tensor> kids,
                    const egraph::TensorInfo&) { return lower_body(g, p, kids); };
    return egraph::OpRegistry::global().get_or_add(std::move(info));
  }();
  return id;
}

egraph::Ruleset fusion_rules() {
  egraph::Ruleset rs("cpu-fuse");
  for (const std::string& pattern : fusion_root_patterns()) {
    std::string name = "fuse-" + pattern.substr(1);
    name = name.substr(0, name.find(' '));
    rs.add(egraph::Rule(name, pattern)
               .then([](EGraph& eg, const egraph::Match& m) {
                 // The matched e-node: the root class' node of this op whose
                 // children are the matched classes.
                 const ClassId root = eg.find(m.root());
                 for (ENodeId n : eg.nodes(root)) {
                   if (!computes(eg.op(n))) continue;
                   add_fused(eg, root, n);
                   return;
                 }
               })
               .because("CpuFused lowers to exactly the HLIR e-nodes it was built from, "
                        "which are members of the classes it reads"));
  }
  return rs;
}

}  // namespace luminal::cpu
