// The e-graph engine: hash-consing, union-find, incremental congruence
// closure and the per-class analysis (see egraph.hpp).

#include "luminal/egraph/egraph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "luminal/error.hpp"

namespace luminal::egraph {

namespace {

constexpr uint32_t kTomb = 0xffffffffu;

uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

bool same_uniform(const Scalar& a, const Scalar& b) {
  if (a == b) return true;
  // Two NaNs are the same value even when their payload bits differ.
  return a.dtype == b.dtype && a.is_float() && std::isnan(a.value) && std::isnan(b.value);
}

}  // namespace

EGraph::EGraph() {
  payloads_.emplace_back();  // id 0: the empty payload
  payload_index_[payloads_[0].hash()].push_back(0);
  payload_bytes_ = payloads_[0].approx_bytes();
}

PayloadId EGraph::intern(const Payload& p) {
  const size_t h = p.hash();
  std::vector<PayloadId>& bucket = payload_index_[h];
  for (PayloadId id : bucket)
    if (payloads_[id] == p) return id;
  const auto id = static_cast<PayloadId>(payloads_.size());
  payloads_.push_back(p);
  payload_bytes_ += p.approx_bytes() + 3 * sizeof(void*);
  bucket.push_back(id);
  return id;
}

ClassId EGraph::find(ClassId id) const {
  if (id >= parent_.size())
    throw Error("egraph: unknown class id " + std::to_string(id) + " (the e-graph has " +
                std::to_string(parent_.size()) + ")");
  while (parent_[id] != id) {
    parent_[id] = parent_[parent_[id]];  // path halving
    id = parent_[id];
  }
  return id;
}

uint64_t EGraph::hash_node(OpId op, PayloadId payload, std::span<const ClassId> children) {
  uint64_t h = mix64(op, payload);
  for (ClassId c : children) h = mix64(h, c);
  return mix64(h, children.size());
}

uint64_t EGraph::node_hash(ENodeId id) const {
  return hash_node(nodes_[id].op, nodes_[id].payload, children(id));
}

ENodeId EGraph::memo_find(OpId op, PayloadId payload, std::span<const ClassId> kids,
                          uint64_t h) const {
  if (memo_.empty()) return kNoId;
  const size_t mask = memo_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t slot = memo_[i];
    if (slot == 0) return kNoId;
    if (slot == kTomb) continue;
    const ENodeId id = slot - 1;
    const ENode& n = nodes_[id];
    if (n.op == op && n.payload == payload && n.num_children == kids.size() &&
        std::equal(kids.begin(), kids.end(), child_pool_.begin() + n.first_child))
      return id;
  }
}

void EGraph::memo_grow() {
  size_t live = 0;
  for (uint32_t s : memo_) live += (s != 0 && s != kTomb);
  size_t size = 1024;
  while (size < 4 * (live + 1)) size *= 2;
  std::vector<uint32_t> old = std::move(memo_);
  memo_.assign(size, 0);
  memo_used_ = 0;
  for (uint32_t s : old)
    if (s != 0 && s != kTomb) memo_insert(s - 1, node_hash(s - 1));
}

void EGraph::memo_insert(ENodeId id, uint64_t h) {
  if (memo_.empty() || 4 * (memo_used_ + 1) > 3 * memo_.size()) memo_grow();
  const size_t mask = memo_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (memo_[i] == 0) {
      memo_[i] = id + 1;
      ++memo_used_;
      return;
    }
    if (memo_[i] == kTomb) {
      memo_[i] = id + 1;
      return;
    }
  }
}

void EGraph::memo_erase(ENodeId id, uint64_t h) {
  if (memo_.empty()) return;
  const size_t mask = memo_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (memo_[i] == 0) return;
    if (memo_[i] == id + 1) {
      memo_[i] = kTomb;
      return;
    }
  }
}

std::optional<ClassId> EGraph::lookup(OpId op, PayloadId payload,
                                      std::span<const ClassId> children) const {
  std::vector<ClassId> kids(children.begin(), children.end());
  for (ClassId& c : kids) c = find(c);
  const ENodeId n = memo_find(op, payload, kids, hash_node(op, payload, kids));
  if (n == kNoId) return std::nullopt;
  return class_of(n);
}

ClassId EGraph::add(OpId op, PayloadId payload, std::span<const ClassId> children) {
  // Copy first: `children` may point into child_pool_, which grows below.
  std::vector<ClassId> kids(children.begin(), children.end());
  for (ClassId& c : kids) c = find(c);
  const uint64_t h = hash_node(op, payload, kids);
  if (ENodeId existing = memo_find(op, payload, kids, h); existing != kNoId)
    return class_of(existing);

  const OpInfo& oi = OpRegistry::global().info(op);
  if (oi.arity >= 0 && static_cast<size_t>(oi.arity) != kids.size())
    throw Error("egraph: add: " + oi.name + " takes " + std::to_string(oi.arity) +
                " children, got " + std::to_string(kids.size()));
  std::vector<const TensorInfo*> infos;
  infos.reserve(kids.size());
  for (ClassId c : kids) infos.push_back(&classes_[c].info);
  TensorInfo info = oi.infer(payloads_[payload], infos);

  const auto id = static_cast<ENodeId>(nodes_.size());
  const auto cls = static_cast<ClassId>(parent_.size());
  nodes_.push_back(ENode{op, payload, static_cast<uint32_t>(child_pool_.size()),
                         static_cast<uint32_t>(kids.size())});
  child_pool_.insert(child_pool_.end(), kids.begin(), kids.end());
  node_class_.push_back(cls);
  forward_.push_back(kNoId);
  parent_.push_back(cls);
  classes_.push_back(EClass{{id}, {}, std::move(info), std::nullopt});
  classes_[cls].uniform = compute_uniform(id);
  for (size_t i = 0; i < kids.size(); ++i) {
    // A child appearing twice (Mul(x, x)) lists the parent once.
    if (std::find(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(i), kids[i]) ==
        kids.begin() + static_cast<std::ptrdiff_t>(i))
      classes_[kids[i]].parents.push_back(id);
  }
  memo_insert(id, h);
  ++num_classes_;
  ++num_live_nodes_;
  ++version_;
  return cls;
}

bool EGraph::merge(ClassId a, ClassId b) {
  a = find(a);
  b = find(b);
  if (a == b) return false;
  EClass& ca = classes_[a];
  EClass& cb = classes_[b];
  if (ca.info.dtype != cb.info.dtype || !same_shape(ca.info.shape, cb.info.shape))
    throw Error("egraph: cannot merge class c" + std::to_string(a) + " " + ca.info.to_string() +
                " with class c" + std::to_string(b) + " " + cb.info.to_string() +
                ": a rule equated tensors of different shapes or dtypes");
  if (ca.uniform && cb.uniform && !same_uniform(*ca.uniform, *cb.uniform))
    throw Error("egraph: cannot merge class c" + std::to_string(a) + " (all " +
                ca.uniform->to_string() + ") with class c" + std::to_string(b) + " (all " +
                cb.uniform->to_string() + "): a rule equated different constants");
  // The class with more nodes and parents stays the root (less to move).
  const size_t wa = ca.nodes.size() + ca.parents.size();
  const size_t wb = cb.nodes.size() + cb.parents.size();
  ClassId root = a, other = b;
  if (wb > wa || (wb == wa && b < a)) std::swap(root, other);
  EClass& r = classes_[root];
  EClass& o = classes_[other];
  parent_[other] = root;
  const bool root_gains = !r.uniform && o.uniform;
  const bool other_gains = r.uniform && !o.uniform;
  if (root_gains) r.uniform = o.uniform;
  // Parents whose child just learnt a constant value may now fold.
  if (root_gains)
    analysis_pending_.insert(analysis_pending_.end(), r.parents.begin(), r.parents.end());
  if (other_gains)
    analysis_pending_.insert(analysis_pending_.end(), o.parents.begin(), o.parents.end());
  r.nodes.insert(r.nodes.end(), o.nodes.begin(), o.nodes.end());
  r.parents.insert(r.parents.end(), o.parents.begin(), o.parents.end());
  std::vector<ENodeId>().swap(o.nodes);
  std::vector<ENodeId>().swap(o.parents);
  o.info.shape.clear();
  o.uniform.reset();
  pending_.push_back(root);
  dirty_.push_back(root);
  --num_classes_;
  ++version_;
  return true;
}

void EGraph::canonicalize_children(ENodeId id) {
  const ENode& n = nodes_[id];
  for (uint32_t i = 0; i < n.num_children; ++i) {
    ClassId& c = child_pool_[n.first_child + i];
    c = find(c);
  }
}

void EGraph::repair(ClassId id) {
  id = find(id);
  const std::vector<ENodeId> parents = classes_[id].parents;
  for (ENodeId p : parents) {
    if (!alive(p)) continue;
    memo_erase(p, node_hash(p));
    canonicalize_children(p);
    const uint64_t h = node_hash(p);
    const ENode& n = nodes_[p];
    const ENodeId twin = memo_find(n.op, n.payload, children(p), h);
    if (twin != kNoId && twin != p) {
      // Congruent to an existing node: the two classes are equal.
      forward_[p] = twin;
      --num_live_nodes_;
      dirty_.push_back(class_of(p));
      merge(class_of(p), class_of(twin));
    } else {
      memo_insert(p, h);
    }
  }
  EClass& c = classes_[find(id)];
  std::erase_if(c.parents, [&](ENodeId p) { return !alive(p); });
  std::sort(c.parents.begin(), c.parents.end());
  c.parents.erase(std::unique(c.parents.begin(), c.parents.end()), c.parents.end());
}

void EGraph::clean_class(ClassId id) {
  EClass& c = classes_[id];
  std::erase_if(c.nodes, [&](ENodeId n) { return !alive(n); });
  std::sort(c.nodes.begin(), c.nodes.end());
  c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
}

void EGraph::rebuild() {
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty())
      for (ClassId c : take_canonical(pending_)) repair(c);
    while (!analysis_pending_.empty()) {
      const ENodeId n = analysis_pending_.back();
      analysis_pending_.pop_back();
      if (!alive(n)) continue;
      const ClassId c = class_of(n);
      if (classes_[c].uniform) continue;
      if (auto u = compute_uniform(n)) {
        classes_[c].uniform = u;
        analysis_pending_.insert(analysis_pending_.end(), classes_[c].parents.begin(),
                                 classes_[c].parents.end());
      }
    }
  }
  for (ClassId c : take_canonical(dirty_)) clean_class(c);
}

std::vector<ClassId> EGraph::take_canonical(std::vector<ClassId>& list) const {
  std::vector<ClassId> out;
  out.swap(list);
  for (ClassId& c : out) c = find(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<Scalar> EGraph::compute_uniform(ENodeId id) const {
  const ENode& n = nodes_[id];
  auto child = [&](size_t i) -> const std::optional<Scalar>& {
    return classes_[find(child_pool_[n.first_child + i])].uniform;
  };
  if (n.op == kViewOp) return child(0);
  const auto kind = hlir_kind(n.op);
  if (!kind) return std::nullopt;
  switch (*kind) {
    case OpKind::Constant:
      return payloads_[n.payload].as<Scalar>();
    case OpKind::Cast:
      if (!child(0)) return std::nullopt;
      return fold_cast(*child(0), payloads_[n.payload].as<DType>());
    case OpKind::Exp2:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Sqrt:
    case OpKind::Recip:
      if (!child(0)) return std::nullopt;
      return fold_unary(*kind, *child(0));
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Mod:
    case OpKind::LessThan:
      if (!child(0) || !child(1)) return std::nullopt;
      return fold_binary(*kind, *child(0), *child(1));
    case OpKind::MaxReduce: {
      // The max of copies of one value is that value, if the axis is not empty.
      if (!child(0)) return std::nullopt;
      const TensorInfo& in = classes_[find(child_pool_[n.first_child])].info;
      const auto len = in.shape[static_cast<size_t>(payloads_[n.payload].as<int64_t>())].as_const();
      if (!len || *len < 1) return std::nullopt;
      Scalar s = *child(0);
      // The interpreter produces its own quiet NaN for a NaN maximum.
      if (s.is_float() && std::isnan(s.value))
        s = Scalar::from_double(s.dtype, std::numeric_limits<double>::quiet_NaN());
      return s;
    }
    default:
      return std::nullopt;
  }
}

ENodeId EGraph::canonical_node(ENodeId id) const {
  while (forward_[id] != kNoId) id = forward_[id];
  return id;
}

bool EGraph::has_op(ClassId id, OpId op) const {
  for (ENodeId n : nodes(id))
    if (nodes_[n].op == op) return true;
  return false;
}

std::vector<ClassId> EGraph::class_ids() const {
  std::vector<ClassId> out;
  out.reserve(num_classes_);
  for (ClassId i = 0; i < parent_.size(); ++i)
    if (parent_[i] == i) out.push_back(i);
  return out;
}

size_t EGraph::memory_bytes() const {
  size_t bytes = nodes_.capacity() * sizeof(ENode) + child_pool_.capacity() * sizeof(ClassId) +
                 node_class_.capacity() * sizeof(ClassId) + forward_.capacity() * sizeof(ENodeId) +
                 parent_.capacity() * sizeof(ClassId) + classes_.capacity() * sizeof(EClass) +
                 memo_.capacity() * sizeof(uint32_t) + payload_bytes_ + payload_index_.size() * 48;
  for (ClassId i = 0; i < parent_.size(); ++i) {
    const EClass& c = classes_[i];
    bytes += (c.nodes.capacity() + c.parents.capacity()) * sizeof(ENodeId) +
             c.info.shape.capacity() * sizeof(Expr);
  }
  return bytes;
}

std::string EGraph::node_label(ENodeId id) const {
  std::string s = OpRegistry::global().name(nodes_[id].op);
  const Payload& p = payloads_[nodes_[id].payload];
  if (!p.empty()) s += " " + p.to_string();
  return s;
}

std::string EGraph::node_text(ENodeId id) const {
  std::string s = "(" + node_label(id);
  for (ClassId c : children(id)) s += " c" + std::to_string(find(c));
  return s + ")";
}

std::string EGraph::to_text() const {
  std::ostringstream os;
  for (ClassId c : class_ids()) {
    os << 'c' << c << ' ' << classes_[c].info.to_string();
    if (classes_[c].uniform) os << " (all " << classes_[c].uniform->to_string() << ')';
    os << " =";
    bool first = true;
    for (ENodeId n : classes_[c].nodes) {
      os << (first ? " " : " | ") << node_text(n);
      first = false;
    }
    os << '\n';
  }
  return os.str();
}

std::string EGraph::to_dot() const {
  std::ostringstream os;
  os << "digraph egraph {\n  compound=true;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (ClassId c : class_ids()) {
    os << "  subgraph cluster_" << c << " {\n    style=rounded;\n    label=\"c" << c << " "
       << dot_escape(classes_[c].info.to_string()) << "\";\n";
    for (ENodeId n : classes_[c].nodes)
      os << "    n" << n << " [label=\"" << dot_escape(node_label(n)) << "\"];\n";
    os << "  }\n";
  }
  for (ClassId c : class_ids()) {
    for (ENodeId n : classes_[c].nodes) {
      const auto kids = children(n);
      for (size_t i = 0; i < kids.size(); ++i) {
        const ClassId k = find(kids[i]);
        if (classes_[k].nodes.empty()) continue;
        os << "  n" << n << " -> n" << classes_[k].nodes.front() << " [lhead=cluster_" << k;
        if (kids.size() > 1) os << ", label=\"" << i << "\"";
        os << "];\n";
      }
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace luminal::egraph
