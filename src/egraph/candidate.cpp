// Acyclic candidate choices (see candidate.hpp).

#include "luminal/egraph/candidate.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>

#include "luminal/error.hpp"

namespace luminal::egraph {

namespace {

constexpr uint64_t kBig = uint64_t{1} << 32;

uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// A weight in [1, 2^bits] from raw generator output, spread log-uniformly so
// that both small and large differences between alternatives occur.
uint64_t random_weight(std::mt19937_64& rng, unsigned max_bits) {
  const unsigned bits = 1 + static_cast<unsigned>(rng() % max_bits);
  return 1 + (rng() >> (64 - bits));
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

}  // namespace

CandidateSpace::CandidateSpace(const EGraph& egraph, std::vector<ClassId> roots)
    : egraph_(egraph), roots_(std::move(roots)) {
  if (!egraph.clean()) throw Error("candidates: call rebuild() on the e-graph first");
  for (ClassId& r : roots_) r = egraph.find(r);
}

Candidate CandidateSpace::with_weights(const std::vector<uint64_t>& weights) const {
  const EGraph& eg = egraph_;
  const size_t nodes = eg.num_node_slots();
  if (weights.size() < nodes) throw Error("candidates: one weight per e-node is needed");
  Candidate out;
  out.choice.assign(eg.num_class_slots(), kNoId);
  std::vector<uint64_t> cost(eg.num_class_slots(), std::numeric_limits<uint64_t>::max());
  std::vector<uint32_t> waiting(nodes, 0);  // children classes not final yet
  using Item = std::tuple<uint64_t, ENodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;

  auto distinct_children = [&](ENodeId n) {
    std::vector<ClassId> kids;
    for (ClassId c : eg.children(n)) kids.push_back(eg.find(c));
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    return kids;
  };
  auto node_cost = [&](ENodeId n) {
    uint64_t worst = 0;
    for (ClassId c : eg.children(n)) worst = std::max(worst, cost[eg.find(c)]);
    return sat_add(weights[n], worst);
  };
  for (ClassId c : eg.class_ids()) {
    for (ENodeId n : eg.nodes(c)) {
      if (weights[n] == 0) continue;
      waiting[n] = static_cast<uint32_t>(distinct_children(n).size());
      if (waiting[n] == 0) queue.emplace(weights[n], n);
    }
  }
  // Knuth's algorithm: a class is final when popped with its least cost; a
  // node becomes available once all its children classes are final.
  while (!queue.empty()) {
    const auto [c_cost, n] = queue.top();
    queue.pop();
    const ClassId c = eg.class_of(n);
    if (out.choice[c] != kNoId) continue;
    out.choice[c] = n;
    cost[c] = c_cost;
    std::vector<ENodeId> parents(eg.parents(c).begin(), eg.parents(c).end());
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    for (ENodeId p : parents) {
      if (!eg.alive(p) || weights[p] == 0 || waiting[p] == 0) continue;
      if (--waiting[p] == 0 && out.choice[eg.class_of(p)] == kNoId) queue.emplace(node_cost(p), p);
    }
  }
  return out;
}

Candidate CandidateSpace::first() const {
  return with_weights(std::vector<uint64_t>(egraph_.num_node_slots(), 1));
}

Candidate CandidateSpace::prefer(const std::vector<ENodeId>& nodes) const {
  std::vector<uint64_t> w(egraph_.num_node_slots(), kBig);
  for (ENodeId n : nodes) w[egraph_.canonical_node(n)] = 1;
  return with_weights(w);
}

Candidate CandidateSpace::random(std::mt19937_64& rng) const {
  std::vector<uint64_t> w(egraph_.num_node_slots());
  for (uint64_t& x : w) x = random_weight(rng, 24);
  return with_weights(w);
}

Candidate CandidateSpace::mutate(const Candidate& base, std::mt19937_64& rng,
                                 size_t changes) const {
  const EGraph& eg = egraph_;
  std::vector<ClassId> open;
  for (ClassId c : reachable(base))
    if (eg.nodes(c).size() > 1) open.push_back(c);
  // Partial Fisher-Yates: the first `changes` entries are the classes to change.
  const size_t k = std::min(changes, open.size());
  for (size_t i = 0; i < k; ++i) std::swap(open[i], open[i + rng() % (open.size() - i)]);
  std::vector<uint64_t> w(eg.num_node_slots());
  for (uint64_t& x : w) x = kBig + random_weight(rng, 16);
  for (ClassId c = 0; c < base.choice.size(); ++c)
    if (base.choice[c] != kNoId && base.choice[c] < w.size()) w[base.choice[c]] = 1;
  for (size_t i = 0; i < k; ++i) {
    for (ENodeId n : eg.nodes(open[i])) w[n] = random_weight(rng, 16);
    w[base.at(open[i])] = kBig * 2;
  }
  return with_weights(w);
}

std::vector<ClassId> CandidateSpace::reachable(const Candidate& cand) const {
  const EGraph& eg = egraph_;
  std::vector<uint8_t> state(eg.num_class_slots(), 0);
  std::vector<ClassId> order;
  auto choice = [&](ClassId c) {
    const ENodeId n = cand.at(c);
    if (n == kNoId || n >= eg.num_node_slots() || !eg.alive(n) || eg.class_of(n) != c)
      throw Error("candidate: no valid choice for reachable class c" + std::to_string(c));
    return n;
  };
  for (ClassId root : roots_) {
    std::vector<ClassId> stack{root};
    while (!stack.empty()) {
      const ClassId c = stack.back();
      if (state[c] == 2) {
        stack.pop_back();
        continue;
      }
      const ENodeId n = choice(c);
      if (state[c] == 0) {
        state[c] = 1;
        for (ClassId k : eg.children(n)) {
          const ClassId kc = eg.find(k);
          if (state[kc] == 1)
            throw Error("candidate: cyclic choice through class c" + std::to_string(kc));
          if (state[kc] == 0) stack.push_back(kc);
        }
        continue;
      }
      stack.pop_back();
      state[c] = 2;
      order.push_back(c);
    }
  }
  return order;
}

bool CandidateSpace::is_valid(const Candidate& c) const {
  try {
    reachable(c);
    return true;
  } catch (const Error&) {
    return false;
  }
}

uint64_t CandidateSpace::hash(const Candidate& cand) const {
  const EGraph& eg = egraph_;
  std::vector<uint64_t> h(eg.num_class_slots(), 0);
  for (ClassId c : reachable(cand)) {
    const ENodeId n = cand.at(c);
    uint64_t x = mix(std::hash<std::string>{}(OpRegistry::global().name(eg.op(n))),
                     eg.node_payload(n).hash());
    for (ClassId k : eg.children(n)) x = mix(x, h[eg.find(k)]);
    h[c] = x;
  }
  uint64_t out = 0x51ed27;
  for (ClassId r : roots_) out = mix(out, h[r]);
  return out;
}

size_t CandidateSpace::num_choices(const Candidate& c) const {
  size_t n = 0;
  for (ClassId cls : reachable(c)) n += egraph_.nodes(cls).size() > 1;
  return n;
}

}  // namespace luminal::egraph
