#include "luminal/compiler/compile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "luminal/compiler/compile_cache.hpp"
#include "luminal/compiler/fold.hpp"
#include "luminal/compiler/serialize.hpp"
#include "luminal/core/dtype.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/op_registry.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::compiler {

namespace {

using Clock = std::chrono::steady_clock;

// The search stops timing a candidate once it takes more than this many times
// the best so far plus this many ms (Search::evaluate).
constexpr double kCutoffFactor = 4, kCutoffSlackMs = 2;
// At the end, the best few candidates within this ratio of the best are timed
// again, in turn, this many rounds (Search::confirm). (On a shared 2-core VM
// one core sometimes adds nothing for seconds: a two-thread GEMV of 18 us then
// times 30 us, and 1.25 of the best kept it out of the second look.) Four
// rounds: with two, a SmolLM2 layer without its fused attention won on one
// calm timing (10.48 ms against 10.95 and 10.99, the fused layer's two
// timings both in slow spells; its second 17.0) and the model's prefill took
// twice as long (TTFT 286 - 372 ms against 142 - 154) in 2 of 12 searches on
// the Zen 3 host; a round costs a few of each contender's runs.
constexpr size_t kConfirmCandidates = 3;
constexpr double kConfirmRatio = 1.5;
constexpr int kConfirmRounds = 4;
// The last of those places goes to the fastest candidate of another mix of
// kernel ops (the kernel ops its program uses) first timed within this ratio
// of the best, if there is one: a slow spell during the search can time every
// candidate of one kind slowly (session 11: every int16 candidate of a block
// prefill, whose winner then took 10.7 ms instead of ~4.5), and those are the
// ones to look at again. (Still at most kConfirmCandidates programs at once:
// each holds its own packed weights, a model's size each.)
constexpr double kConfirmOtherRatio = 4;
// A kernel op applied everywhere (the greedy passes) that times within this
// ratio of the best without beating it is timed once more at once, keeping the
// smaller time: the passes build on the best so far, so one slow timing there
// (a spell of the machine) would leave the op out of every later candidate
// (session 12: a block prefill's int16 product first timed at 1.64x the BLAS
// one; that search's best was 8.6 ms, 4.4 in a calm one).
constexpr double kPassSecondLookRatio = 2.5;
// A near miss whose second look still loses is then timed in turn with the
// best, this many rounds each (Search::paired_ratio).
constexpr int kPairedRounds = 2;
// How many contenders besides the best (within kConfirmRatio of it) are
// evaluated with their kernel ops' last variants after the greedy passes.
constexpr size_t kLastVariantContenders = 2;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

bool log_search() {
  return env_on("LUMINAL_LOG_SEARCH") || env_on("LUMINAL_LOG");
}

/// The search of step 3 (see compile.hpp): state shared by the candidate
/// generators and the evaluation of one candidate.
class Search {
public:
  Search(const egraph::EGraph& eg, const egraph::ImportedGraph& imp, Backend& backend,
         const CompileOptions& opt, CompileStats& stats,
         const std::map<std::string, TensorData>& expected)
      : eg_(eg),
        imp_(imp),
        space_(eg, imp.roots(eg)),
        backend_(backend),
        opt_(opt),
        stats_(stats),
        expected_(expected),
        rng_(stats.seed),
        log_(log_search()) {}

  void run() {
    const auto t0 = Clock::now();
    const size_t budget = std::max<size_t>(opt_.search_iters, 1);
    auto out_of_time = [&] {
      return opt_.time_limit_ms > 0 && !pool_.empty() && ms_since(t0) > opt_.time_limit_ms;
    };
    stats_.search_stop = "budget";
    // Seeds: the original graph and the shallowest choice; then the backend's
    // kernel ops, greedily: each op (in registration order) is tried applied
    // wherever it can be, on top of the ops accepted so far, and accepted if
    // that candidate is the new best; then random candidates. Timing decides
    // everything; this only makes sure the search sees each kernel family
    // applied everywhere, which random choices over many classes never produce.
    std::map<egraph::OpId, std::vector<egraph::ENodeId>> kernel_nodes;
    for (egraph::ClassId c : eg_.class_ids())
      for (egraph::ENodeId n : eg_.nodes(c))
        if (egraph::OpRegistry::global().info(eg_.op(n)).kernel_group)
          kernel_nodes[eg_.op(n)].push_back(n);
    // The seeds are timed right after the first kernel-op candidate that
    // runs, so against its time: a naive seed (a SmolLM2 layer's unfused
    // graph, a second per run at a prefill) is then cut off at its first dims
    // point instead of timed at every point (~3 s of that model's cold
    // compile). The pass's own op was accepted by beating nothing: it is not,
    // should a seed beat it. (Seeds first where the budget holds little more
    // than them, or where there is no kernel op.)
    std::vector<egraph::Candidate> seeds{space_.prefer(imp_.node_enode), space_.first()};
    auto evaluate_seeds = [&]() -> bool {  // false: out of time
      for (egraph::Candidate& seed : seeds) {
        if (stats_.candidates >= budget) break;
        if (out_of_time()) return false;
        evaluate(std::move(seed));
      }
      seeds.clear();
      return true;
    };
    if ((budget <= seeds.size() + 1 || kernel_nodes.empty()) && !evaluate_seeds())
      return stop("time");
    // A candidate choosing `nodes` wherever they are and the best so far
    // elsewhere. Classes the best does not reach (the trial op may read other,
    // equivalent classes) take the accepted kernel ops where they can, else the
    // shallowest choice.
    const egraph::Candidate shallow = space_.first();
    std::vector<egraph::OpId> accepted;
    auto overlay_on_best = [&](const std::vector<egraph::ENodeId>& nodes) {
      egraph::Candidate c = shallow;
      for (egraph::OpId op : accepted)
        for (egraph::ENodeId n : kernel_nodes[op]) c.choice[eg_.class_of(n)] = n;
      if (!pool_.empty()) {
        const egraph::Candidate& best = pool_.front().candidate;
        for (egraph::ClassId k : space_.reachable(best)) c.choice[k] = best.choice[k];
      }
      for (egraph::ENodeId n : nodes) c.choice[eg_.class_of(n)] = n;
      return c;
    };
    // How many of `nodes` the program candidate c describes uses (none where
    // c is not valid).
    auto used_nodes = [&](const egraph::Candidate& c, const std::vector<egraph::ENodeId>& nodes) {
      std::vector<egraph::ENodeId> used;
      if (!space_.is_valid(c)) return used;
      std::set<egraph::ClassId> live;
      for (egraph::ClassId k : space_.reachable(c)) live.insert(k);
      for (egraph::ENodeId n : nodes)
        if (live.count(eg_.class_of(n)) && c.choice[eg_.class_of(n)] == n) used.push_back(n);
      return used;
    };
    auto count_used = [&](const egraph::Candidate& c, const std::vector<egraph::ENodeId>& nodes) {
      return used_nodes(c, nodes).size();
    };
    // c with the classes above `nodes` rerouted so that the program reaches
    // them: each class that could reach one of their classes but whose choice
    // does not takes a node on a shortest path down to one (a kernel group's
    // where there is one at that distance: a fused body rather than loose ops),
    // except classes whose choice is in `keep` (the op's nodes c uses already:
    // a fused loop over the down projection reads the up projection too).
    auto reroute = [&](egraph::Candidate c, const std::vector<egraph::ENodeId>& nodes,
                       const std::set<egraph::ENodeId>& keep) {
      std::map<egraph::ClassId, std::pair<int, egraph::ENodeId>> via;  // class -> (distance, node)
      std::vector<egraph::ClassId> queue;
      for (egraph::ENodeId n : nodes)
        if (via.emplace(eg_.class_of(n), std::make_pair(0, n)).second)
          queue.push_back(eg_.class_of(n));
      for (size_t q = 0; q < queue.size(); ++q) {
        const int d = via.at(queue[q]).first;
        for (egraph::ENodeId p : eg_.parents(queue[q])) {
          const egraph::ClassId k = eg_.class_of(p);
          auto [it, fresh] = via.emplace(k, std::make_pair(d + 1, p));
          if (fresh) {
            queue.push_back(k);
          } else if (it->second.first == d + 1 &&
                     !egraph::OpRegistry::global().info(eg_.op(it->second.second)).kernel_group &&
                     egraph::OpRegistry::global().info(eg_.op(p)).kernel_group) {
            it->second.second = p;
          }
        }
      }
      for (int round = 0; round < 64 && space_.is_valid(c) && count_used(c, nodes) < nodes.size();
           ++round) {
        bool changed = false;
        for (egraph::ClassId k : space_.reachable(c)) {
          auto it = via.find(k);
          if (it == via.end() || it->second.first == 0 || keep.count(c.choice[k])) continue;
          bool down = false;
          for (egraph::ClassId ch : eg_.children(c.choice[k]))
            down =
                down || (via.count(eg_.find(ch)) && via.at(eg_.find(ch)).first < it->second.first);
          if (!down) c.choice[k] = it->second.second, changed = true;
        }
        if (!changed) break;
      }
      return c;
    };
    auto overlay = [&](const std::vector<egraph::ENodeId>& nodes) {
      egraph::Candidate c = overlay_on_best(nodes);
      // The best's choices may hide some of the nodes: a kernel group reading
      // its own copies of their classes' inputs (an f32 GEMM with its
      // epilogue over one of the int16 products, while the others are used).
      // Then the program is rerouted through those, kept where it uses more.
      if (!space_.is_valid(c)) return c;
      const std::vector<egraph::ENodeId> used_list = used_nodes(c, nodes);
      const std::set<egraph::ENodeId> used(used_list.begin(), used_list.end());
      std::vector<egraph::ENodeId> hidden;
      for (egraph::ENodeId n : nodes)
        if (!used.count(n)) hidden.push_back(n);
      if (hidden.empty()) return c;
      egraph::Candidate d = reroute(c, hidden, used);
      return count_used(d, nodes) > used.size() ? d : c;
    };
    // The op's nodes in the classes where the best so far runs a loose
    // primitive op: the op filling the gaps between the best's kernels
    // instead of replacing them. Applied everywhere, a fused body also takes
    // the classes of the best's library products (a GEMV as generated loops;
    // through the classes inside such a kernel, which the best does not
    // reach, a product stored whole then summed) and the candidate loses by
    // those, though it would win where the best leaves loose element-wise
    // ops (a block's decode step at `highest`: 0.35 - 0.56 ms depending on
    // whether a later random pick happened to combine the two).
    auto gaps_of_best = [&](const std::vector<egraph::ENodeId>& nodes) {
      std::vector<egraph::ENodeId> out;
      if (pool_.empty()) return out;
      const egraph::Candidate& best = pool_.front().candidate;
      std::set<egraph::ClassId> loose;
      for (egraph::ClassId k : space_.reachable(best))
        if (!egraph::OpRegistry::global().info(eg_.op(best.choice[k])).kernel_group)
          loose.insert(k);
      for (egraph::ENodeId n : nodes)
        if (loose.count(eg_.class_of(n))) out.push_back(n);
      return out;
    };
    // Two passes: an op tried before a later one was accepted (e.g. a fused
    // attention before the fused element-wise kernels around it) is tried
    // again on top of the new best, and so is an accepted op that a later one
    // took classes from (an sgemm with its epilogue over the int16 product,
    // 2 % ahead of it before the fused kernels came: session 12, 6.2 ms where
    // the int16 product with them took 4.4); an unchanged overlay is a
    // duplicate and costs nothing.
    // Ops whose candidate timed within kConfirmRatio of the best without
    // beating it (runners-up, in op order), for the confirm points below.
    std::vector<egraph::OpId> close;
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& [op, nodes] : kernel_nodes) {
        if (stats_.candidates >= budget) break;
        if (out_of_time()) return stop("time");
        const bool was_accepted = std::find(accepted.begin(), accepted.end(), op) != accepted.end();
        if (pass == 0 && was_accepted) continue;
        egraph::Candidate c = overlay(nodes);
        const bool valid = space_.is_valid(c);
        if (log_)
          std::fprintf(stderr, "\n[search] pass %d: %s applied everywhere%s\n", pass,
                       egraph::OpRegistry::global().info(op).name.c_str(),
                       valid ? "" : ": not a valid candidate");
        if (!valid) continue;
        const uint64_t h = space_.hash(c);
        const double best_before =
            pool_.empty() ? std::numeric_limits<double>::infinity() : pool_.front().ms;
        if (evaluate(std::move(c), kPassSecondLookRatio)) {
          if (!was_accepted) accepted.push_back(op);
          if (!seeds.empty()) {
            if (!evaluate_seeds()) return stop("time");
            if (pool_.front().hash != h && !look_again(h) && !was_accepted) {
              accepted.pop_back();
              // (beaten by a seed: a runner-up like any near miss)
              if (const Evaluated* e = timed(h); e && e->ms <= kConfirmRatio * pool_.front().ms)
                close.push_back(op);
            }
          }
        } else {
          if (const Evaluated* e = timed(h);
              e && e->ms <= kConfirmRatio * best_before && !was_accepted &&
              std::find(close.begin(), close.end(), op) == close.end())
            close.push_back(op);
          // Lost where it replaced the best's kernels: the op in the best's
          // gaps only (a new candidate only if it differs).
          const std::vector<egraph::ENodeId> gaps = gaps_of_best(nodes);
          if (gaps.empty() || gaps.size() == nodes.size() || stats_.candidates >= budget) continue;
          // (Not rerouted: a fused body hides the classes below it that it
          // computes itself, and routing the program through those would cut
          // the body up.)
          egraph::Candidate g = overlay_on_best(gaps);
          if (!space_.is_valid(g) || seen_.count(space_.hash(g))) continue;  // (h is seen)
          if (log_)
            std::fprintf(stderr, "\n[search] pass %d: %s where the best has no kernel op\n", pass,
                         egraph::OpRegistry::global().info(op).name.c_str());
          if (evaluate(std::move(g), kPassSecondLookRatio) && !was_accepted) accepted.push_back(op);
        }
      }
    if (!seeds.empty() && !evaluate_seeds()) return stop("time");  // (no pass candidate ran)
    // The best with every runner-up applied at once: the greedy passes accept
    // an op only on a win, so two ops that each tie (a fused attention, by
    // noise; a product that wins only from ~64 rows, or one timed inside an
    // otherwise unfused program, where a tie in its own time is noise in the
    // sum) never meet in one candidate otherwise. (A block's decode step,
    // session 17: sgemm's GEMV accepted over the int16 one by 0.0003 ms in
    // pass 0, the int16 product then tried again before the fused kernels
    // came: a 0.6 ms program instead of 0.22.) With confirm points, it takes
    // a contender's place.
    std::erase_if(close, [&](egraph::OpId op) {
      return std::find(accepted.begin(), accepted.end(), op) != accepted.end();
    });
    if (!close.empty() && stats_.candidates < budget) {
      if (out_of_time()) return stop("time");
      std::vector<egraph::ENodeId> nodes;
      std::string names;
      for (egraph::OpId op : close) {
        nodes.insert(nodes.end(), kernel_nodes[op].begin(), kernel_nodes[op].end());
        names += (names.empty() ? "" : " + ") + egraph::OpRegistry::global().info(op).name;
      }
      egraph::Candidate c = overlay(nodes);
      if (space_.is_valid(c)) {
        if (log_) std::fprintf(stderr, "\n[search] the best with %s applied\n", names.c_str());
        runners_up_ = space_.hash(c);
        evaluate(std::move(c));
      }
    }
    // Then the best with each kernel op replaced by its class' last node of
    // the same op, where there are several (a fused body that leaves a
    // broadcast table to its own kernel, next to the largest body): the
    // overlays above apply an op's nodes together and the later ones win, but
    // the shallowest candidate, on which they build, may hold the other.
    // Timed as the passes' candidates are (a second look, then in turn with
    // the best): the rotary tables of a block prefill at `highest`, left to
    // their own kernels, saved ~2.5 ms of ~10, but this one candidate timed
    // 13.5 ms in a slow spell against the best's 10.4 and every search kept
    // the per-head tables (0.85x eager; 1.0 - 1.05x with the tables).
    if (!pool_.empty() && stats_.candidates < budget) {
      if (out_of_time()) return stop("time");
      // The contenders within kConfirmRatio of the best, before this step.
      std::vector<egraph::Candidate> contenders;
      for (size_t i = 1; i < pool_.size() && contenders.size() < kLastVariantContenders; ++i)
        if (pool_[i].ms <= kConfirmRatio * pool_.front().ms)
          contenders.push_back(pool_[i].candidate);
      if (log_) std::fprintf(stderr, "\n[search] the best with its kernel ops' last variants\n");
      if (egraph::Candidate c = last_variants(pool_.front().candidate); space_.is_valid(c))
        evaluate(std::move(c), kPassSecondLookRatio);
      // And the close contenders with theirs: an overlay that brought a
      // kernel op in may also have brought the other variant back (a block
      // prefill's fused attention, applied over the best, rerouted the
      // rotary tables into per-head bodies: 7.7 ms against the best's 6.6
      // without attention; with the tables left out, 4.1).
      for (egraph::Candidate& k : contenders) {
        if (stats_.candidates >= budget) break;
        if (out_of_time()) return stop("time");
        egraph::Candidate c = last_variants(std::move(k));
        if (!space_.is_valid(c) || seen_.count(space_.hash(c))) continue;
        if (log_)
          std::fprintf(stderr, "\n[search] a contender with its kernel ops' last variants\n");
        evaluate(std::move(c), kPassSecondLookRatio);
      }
    }
    const size_t n_random = std::max<size_t>(1, budget / 4);
    for (size_t i = 0; i < n_random && stats_.candidates < budget; ++i) {
      if (out_of_time()) return stop("time");
      evaluate(space_.random(rng_));
    }
    // Mutations of the elite, escalating on stagnation.
    size_t changes = 1, since_best = 0, misses = 0;
    const size_t max_misses = 64 + 8 * budget;
    while (stats_.candidates < budget) {
      if (out_of_time()) return stop("time");
      // After a duplicate, alternate mutations with fresh random candidates.
      const bool fresh = pool_.empty() || misses % 2 == 1;
      egraph::Candidate c =
          fresh ? space_.random(rng_)
                : space_.mutate(pool_[rng_() % std::min(opt_.elite, pool_.size())].candidate, rng_,
                                changes);
      const size_t before = stats_.candidates;
      const bool improved = evaluate(std::move(c));
      if (stats_.candidates == before) {
        // A duplicate: widen the mutation, and give up when nothing new turns up.
        if (++misses > max_misses) return stop("exhausted");
        if (misses % 8 == 0) changes = std::min<size_t>(changes * 2, 1024);
        continue;
      }
      misses = 0;
      if (improved) {
        changes = 1;
        since_best = 0;
      } else if (++since_best >= std::max<size_t>(opt_.stagnation, 1)) {
        changes = std::min<size_t>(changes * 2, 1024);
        since_best = 0;
      }
    }
    finish_progress();
  }

  /// The program's time: the sum over profile_dims, the extra dims points
  /// and (`confirming` only) the confirm points, stopping once past `bound`
  /// (> 0). profile_dims comes first: a decoder's decode step, its cheapest
  /// point, so that a hopeless candidate (a naive seed: a second per run at a
  /// 32-token prefill, 1/8 of that at 4 tokens) passes the bound there. A
  /// program timed to the end then runs once more at profile_dims: the
  /// outputs checked against the interpreter are those of its last run.
  double timed_ms(Program& program, double bound, bool confirming = false) const {
    std::vector<DimMap> points{stats_.profile_dims};
    auto add = [&](const std::vector<DimMap>& more) {
      for (const DimMap& extra : more) {
        DimMap dims = stats_.profile_dims;
        for (const auto& [name, value] : extra) dims[name] = value;
        points.push_back(std::move(dims));
      }
    };
    add(opt_.extra_profile_dims);
    if (confirming) add(opt_.confirm_profile_dims);
    double ms = 0;
    for (const DimMap& dims : points) {
      ms += program.profile(dims, opt_.warmup, opt_.trials, bound);
      if (bound > 0 && ms > bound) return ms;
    }
    if (points.size() > 1) program.profile(stats_.profile_dims, 0, 1, 0);
    return ms;
  }

  /// The close contenders (up to kConfirmCandidates within kConfirmRatio of
  /// the best, the last place to the fastest of another kernel-op mix within
  /// kConfirmOtherRatio) are timed again, in turn, kConfirmRounds times (a slow spell
  /// of the machine then falls on one round of each, not on all of one
  /// contender's), each keeping its smallest time (noise on a busy machine
  /// only adds), and the smallest wins: one unlucky timing would otherwise
  /// decide the program that the compile cache then keeps for good. With
  /// confirm_profile_dims, those rounds also time the contenders there, and
  /// the contenders are ranked by these sums alone (their first times lack
  /// the confirm points). Only for wall-time profiles (a cost model gives the
  /// same numbers again).
  void confirm() {
    struct Contender {
      size_t index;
      std::shared_ptr<const Graph> graph;
      std::unique_ptr<Program> program;
      double ms;  // the smallest time so far (at the confirm points too, if any)
    };
    const bool longer = !opt_.confirm_profile_dims.empty();
    if (pool_.empty()) return;
    progress(true);
    std::vector<size_t> picks;
    for (size_t i = 0; i < std::min(pool_.size(), kConfirmCandidates); ++i)
      if (pool_[i].ms <= kConfirmRatio * pool_.front().ms) picks.push_back(i);
    std::set<std::set<egraph::OpId>> mixes;
    for (size_t i = 0; i < picks.size() && i + 1 < kConfirmCandidates; ++i)
      mixes.insert(kernel_mix(pool_[picks[i]].candidate));
    for (size_t i = 1; i < pool_.size(); ++i) {
      if (pool_[i].ms > kConfirmOtherRatio * pool_.front().ms) break;
      if (mixes.count(kernel_mix(pool_[i].candidate))) continue;
      if (picks.size() == kConfirmCandidates) picks.pop_back();
      if (std::find(picks.begin(), picks.end(), i) == picks.end()) picks.push_back(i);
      break;
    }
    // The best with the runners-up (run) is what the confirm points are for:
    // it takes the place before the last (the other mix keeps its own).
    if (longer && runners_up_)
      for (size_t i = 1; i < pool_.size(); ++i) {
        if (pool_[i].hash != *runners_up_) continue;
        if (pool_[i].ms <= kConfirmOtherRatio * pool_.front().ms &&
            std::find(picks.begin(), picks.end(), i) == picks.end()) {
          if (picks.size() == kConfirmCandidates) picks.erase(picks.end() - 2);
          picks.insert(picks.end() - (picks.size() > 1 ? 1 : 0), i);
        }
        break;
      }
    std::vector<Contender> contenders;
    for (size_t i : picks) {
      try {
        auto graph =
            std::shared_ptr<const Graph>(egraph::extract(eg_, imp_, pool_[i].candidate).graph);
        auto program = backend_.compile(graph);
        if (!program->profiles_wall_time()) return;
        const double first = longer ? std::numeric_limits<double>::infinity() : pool_[i].ms;
        contenders.push_back({i, std::move(graph), std::move(program), first});
      } catch (const std::exception&) {
        // (it compiled and ran before: keep its first time)
      }
    }
    if (contenders.size() < 2) return;
    for (int round = 0; round < kConfirmRounds; ++round)
      for (Contender& c : contenders) {
        if (!c.program) continue;
        const Evaluated& e = pool_[c.index];
        try {
          const double again = timed_ms(*c.program, opt_.per_candidate_timeout_ms, longer);
          if (log_)
            std::fprintf(stderr, "[search] confirming hash %s: %.4f ms, again %.4f ms%s\n",
                         hex64(e.hash).c_str(), c.ms, again,
                         longer ? " (with the confirm points)" : "");
          c.ms = std::min(c.ms, again);
        } catch (const std::exception&) {
          c.program.reset();  // (keep its times so far)
        }
      }
    // The winner stays the best as first timed (its time perhaps lowered),
    // unless a contender that ran to the end now has a smaller time: its
    // graph and outputs (of its last run, at profile_dims, for the winner
    // check) then replace the winner's. (The best as first timed is
    // contenders[0] unless it failed to compile again.)
    uint64_t lead = pool_.front().hash;
    double lead_ms = contenders.front().index == 0 ? contenders.front().ms
                     : longer                      ? std::numeric_limits<double>::infinity()
                                                   : pool_.front().ms;
    const Contender* faster = nullptr;
    for (const Contender& c : contenders)
      if (c.program && c.ms < lead_ms) lead = pool_[c.index].hash, lead_ms = c.ms, faster = &c;
    if (faster) {
      best_graph_ = faster->graph;
      best_outputs_ = faster->program->outputs();
    }
    if (!longer) {
      for (const Contender& c : contenders) pool_[c.index].ms = c.ms;
      std::stable_sort(pool_.begin(), pool_.end(),
                       [](const Evaluated& a, const Evaluated& b) { return a.ms < b.ms; });
    }
    stats_.best_ms = lead_ms;
    if (lead == stats_.winner_hash) return;
    stats_.winner_hash = lead;
    if (log_) std::fprintf(stderr, "[search] confirmed winner: hash %s\n", hex64(lead).c_str());
  }

  /// `c` with each kernel op's node replaced by its class' last node of the
  /// same op, where there are several; repeated, since the new nodes' inputs
  /// may reach classes `c` did not.
  egraph::Candidate last_variants(egraph::Candidate c) const {
    std::set<egraph::ClassId> done;
    for (bool changed = true; changed;) {
      changed = false;
      for (egraph::ClassId k : space_.reachable(c)) {
        if (!done.insert(k).second) continue;
        changed = true;
        const egraph::OpId op = eg_.op(c.choice[k]);
        if (!egraph::OpRegistry::global().info(op).kernel_group) continue;
        for (egraph::ENodeId n : eg_.nodes(k))
          if (eg_.op(n) == op) c.choice[k] = n;
      }
    }
    return c;
  }

  /// The kernel ops (OpInfo::kernel_group) a candidate's program uses.
  std::set<egraph::OpId> kernel_mix(const egraph::Candidate& c) const {
    std::set<egraph::OpId> ops;
    for (egraph::ClassId k : space_.reachable(c)) {
      const egraph::OpId op = eg_.op(c.choice[k]);
      if (egraph::OpRegistry::global().info(op).kernel_group) ops.insert(op);
    }
    return ops;
  }

  bool has_winner() const { return !pool_.empty(); }
  const std::shared_ptr<const Graph>& winner_graph() const { return best_graph_; }
  const std::map<std::string, TensorData>& winner_outputs() const { return best_outputs_; }

private:
  struct Evaluated {
    egraph::Candidate candidate;
    uint64_t hash;
    double ms;
  };

  /// The pool's entry for a candidate hash, if it was timed.
  const Evaluated* timed(uint64_t hash) const {
    for (const Evaluated& e : pool_)
      if (e.hash == hash) return &e;
    return nullptr;
  }

  void stop(const char* why) {
    stats_.search_stop = why;
    finish_progress();
  }

  /// Extract, compile, profile. Returns true on a new best.
  bool evaluate(egraph::Candidate c, double second_look = 0) {
    const uint64_t h = space_.hash(c);
    if (!seen_.insert(h).second) return false;
    const size_t index = stats_.candidates++;
    std::shared_ptr<const Graph> graph;
    std::unique_ptr<Program> program;
    double ms = 0, compile_s = 0, timed_s = 0;
    // A candidate far slower than the best so far is not timed to the end:
    // once its time passes kCutoffFactor x the best (plus a slack that keeps
    // the first-run costs of small graphs from counting), profiling stops
    // there and the candidate keeps that time, more than the best's: it can
    // no longer win. Slow candidates (random picks, one kernel op applied
    // everywhere) otherwise spend warm-up and trials at every point: seconds
    // of a decoder's cold compile. Not with verify_all, which checks every
    // candidate's outputs at profile_dims, nor for a cost model's times.
    double bound = opt_.per_candidate_timeout_ms;
    try {
      const auto t0 = Clock::now();
      graph = std::shared_ptr<const Graph>(egraph::extract(eg_, imp_, c).graph);
      program = backend_.compile(graph);
      compile_s = ms_since(t0) / 1000;
      const auto timing = Clock::now();
      if (!pool_.empty() && !opt_.verify_all && program->profiles_wall_time())
        bound = cutoff_bound();
      ms = timed_ms(*program, bound);
      if (second_look > 0 && !pool_.empty() && program->profiles_wall_time() &&
          ms > pool_.front().ms && ms <= second_look * pool_.front().ms) {
        const double again = timed_ms(*program, bound);
        if (log_)
          std::fprintf(stderr, "\n[search] candidate #%zu: %.4f ms, again %.4f ms\n", index, ms,
                       again);
        ms = std::min(ms, again);
        // The smaller of two times against the best's one favours the one
        // timed twice (noise only adds; a cold compile's timings here vary
        // by half): the best is timed again too before it can lose. (A block
        // decode step: sgemm's epilogue took the int16 products' classes on
        // 1.21 against 1.43 ms, first timed 1.87.)
        ms = against_best(*program, ms, bound, static_cast<long>(index));
      }
      timed_s = ms_since(timing) / 1000;
    } catch (const std::exception& e) {
      ++stats_.dropped;
      if (log_)
        std::fprintf(stderr, "\n[search] candidate #%zu (hash %s) dropped: %s\n", index,
                     hex64(h).c_str(), e.what());
      progress();
      return false;
    }
    if (opt_.per_candidate_timeout_ms > 0 && ms > opt_.per_candidate_timeout_ms) {
      ++stats_.dropped;
      if (log_)
        std::fprintf(stderr, "\n[search] candidate #%zu (hash %s) dropped: %.3f ms > timeout\n",
                     index, hex64(h).c_str(), ms);
      progress();
      return false;
    }
    const bool cut = bound > 0 && ms > bound;
    if (log_)
      std::fprintf(stderr,
                   "\n[search] candidate #%zu (hash %s): %.4f ms%s (compiled in %.1f s, timed in "
                   "%.1f s)\n",
                   index, hex64(h).c_str(), ms, cut ? " or more, cut off" : "", compile_s, timed_s);
    if (opt_.verify_all) check(*program, index, h);
    const bool best = pool_.empty() || ms < pool_.front().ms;
    insert_sorted({std::move(c), h, ms});
    if (best) set_best(graph, *program, h, ms, "candidate #" + std::to_string(index) + " ");
    progress();
    return best;
  }

  /// The bound of a candidate's profile once something is timed: past
  /// kCutoffFactor x the best (plus kCutoffSlackMs, which keeps the first-run
  /// costs of small graphs from counting) it can no longer win; never past
  /// the per-candidate timeout.
  double cutoff_bound() const {
    const double cutoff = kCutoffFactor * pool_.front().ms + kCutoffSlackMs;
    const double timeout = opt_.per_candidate_timeout_ms;
    return timeout > 0 && timeout < cutoff ? timeout : cutoff;
  }

  void insert_sorted(Evaluated e) {
    const auto at = std::upper_bound(pool_.begin(), pool_.end(), e.ms,
                                     [](double m, const Evaluated& x) { return m < x.ms; });
    pool_.insert(at, std::move(e));
  }

  /// A new best (`who` names it in the log: "candidate #3 ", or nothing).
  void set_best(const std::shared_ptr<const Graph>& graph, const Program& program, uint64_t h,
                double ms, const std::string& who) {
    best_graph_ = graph;
    best_outputs_ = program.outputs();
    stats_.best_ms = ms;
    stats_.winner_hash = h;
    if (log_)
      std::fprintf(stderr, "\n[search] new best: %s(hash %s) %.4f ms\n", who.c_str(),
                   hex64(h).c_str(), ms);
  }

  /// The best's program compiled again to be timed once more (its kernels
  /// come from the JIT's cache), or null where it is not to be: nothing
  /// timed yet, verify_all, or a cost model's profile (the same numbers).
  std::unique_ptr<Program> best_again() {
    if (pool_.empty() || !best_graph_ || opt_.verify_all) return nullptr;
    auto program = backend_.compile(best_graph_);
    return program->profiles_wall_time() ? std::move(program) : nullptr;
  }

  /// A near miss timed in turn with the best, kPairedRounds rounds: the ratio
  /// of their smallest times there (candidate / best), or 1 where the best
  /// cannot run again. Both looks of a near miss may fall in one slow spell
  /// of a shared machine, while the best's time came from a calm moment: the
  /// op then stayed out of every later candidate (a block prefill's fused
  /// attention, 11.9 ms against the int16 products' 9.1 in such a spell,
  /// 8.4 against 8.8 in calm ones: the search kept 7.1 ms, 4.2 otherwise).
  /// Timed in turn, a spell slows both. A ratio below 1 scales the best's
  /// time for the candidate's: the pool's times stay comparable.
  double paired_ratio(Program& candidate, double bound) {
    try {
      auto best = best_again();
      if (!best) return 1;
      double b = std::numeric_limits<double>::infinity(), c = b;
      for (int round = 0; round < kPairedRounds; ++round) {
        b = std::min(b, timed_ms(*best, opt_.per_candidate_timeout_ms));
        c = std::min(c, timed_ms(candidate, bound));
      }
      if (log_)
        std::fprintf(stderr, "\n[search] in turn with the best: %.4f ms against %.4f ms\n", c, b);
      return b > 0 && std::isfinite(b) && std::isfinite(c) ? c / b : 1;
    } catch (const std::exception&) {
      return 1;  // (it ran before; the candidate keeps its own times)
    }
  }

  /// A second look's time `ms` (its smaller one) settled against the best:
  /// where it would win, the best is timed again first (two times against
  /// two); where it then loses (a near miss, or one the best's second time
  /// beat), it is timed in turn with the best (paired_ratio) and takes the
  /// best's time scaled by their ratio where it is faster there, else keeps
  /// `ms`. The best's second time may come from a calm moment and the
  /// candidate's from a slow one (a block prefill's fused element-wise
  /// kernels, 6.07 against the best's 5.91 ms so timed, were never tried
  /// again, and the search kept a 5.2 ms program instead of 4.1). `index`
  /// names the candidate in the log (-1: none).
  double against_best(Program& program, double ms, double bound, long index) {
    if (ms < pool_.front().ms) retime_best();
    if (ms < pool_.front().ms) return ms;
    const double r = paired_ratio(program, bound);
    if (r >= 1) return ms;
    if (log_) {
      if (index >= 0)
        std::fprintf(stderr, "\n[search] candidate #%ld: ", index);
      else
        std::fprintf(stderr, "\n[search] ");
      std::fprintf(stderr, "%.3f of the best's time when timed in turn with it\n", r);
    }
    return r * pool_.front().ms;
  }

  /// The best so far timed once more (its program compiled again: the
  /// kernels come from the JIT's cache); it keeps the smaller time.
  void retime_best() {
    try {
      auto program = best_again();
      if (!program) return;
      const double again = timed_ms(*program, opt_.per_candidate_timeout_ms);
      if (log_)
        std::fprintf(stderr, "\n[search] the best again: %.4f ms, was %.4f ms\n", again,
                     pool_.front().ms);
      if (again < pool_.front().ms) pool_.front().ms = stats_.best_ms = again;
    } catch (const std::exception&) {
      // (it ran before: it keeps its time)
    }
  }

  /// A pass candidate that a seed, timed after it, beat: the second look
  /// that evaluate() gives a near miss of the best (kPassSecondLookRatio),
  /// which it could not have when nothing was timed before it. Its kernels
  /// come from the JIT's cache. Returns true on a new best.
  bool look_again(uint64_t h) {
    auto it =
        std::find_if(pool_.begin(), pool_.end(), [&](const Evaluated& e) { return e.hash == h; });
    if (it == pool_.begin() || it == pool_.end() || opt_.verify_all ||
        it->ms > kPassSecondLookRatio * pool_.front().ms)
      return false;
    Evaluated e = *it;
    std::shared_ptr<const Graph> graph;
    std::unique_ptr<Program> program;
    double again = 0;
    try {
      graph = std::shared_ptr<const Graph>(egraph::extract(eg_, imp_, e.candidate).graph);
      program = backend_.compile(graph);
      if (!program->profiles_wall_time()) return false;
      again = timed_ms(*program, cutoff_bound());
    } catch (const std::exception&) {
      return false;  // (it ran before: it keeps its first time)
    }
    if (log_)
      std::fprintf(stderr, "\n[search] hash %s: %.4f ms, again %.4f ms (after the seeds)\n",
                   hex64(h).c_str(), e.ms, again);
    if (again >= e.ms) return false;
    again = against_best(*program, again, cutoff_bound(), -1);
    pool_.erase(it);
    e.ms = again;
    const bool best = again < pool_.front().ms;
    insert_sorted(std::move(e));
    if (best) set_best(graph, *program, h, again, "");
    return best;
  }

  void check(const Program& program, size_t index, uint64_t h) const {
    for (const auto& [name, want] : expected_) {
      const std::string diff = compare_outputs(want, program.output(name), opt_.tolerance);
      if (!diff.empty())
        throw Error("compile: candidate #" + std::to_string(index) + " (hash " + hex64(h) +
                    ") disagrees with the reference interpreter on output \"" + name +
                    "\": " + diff);
    }
  }

  void progress(bool confirming = false) const {
    if (opt_.on_progress) {
      SearchProgress p;
      p.candidates = stats_.candidates;
      p.budget = opt_.search_iters;
      p.best_ms = pool_.empty() ? 0 : stats_.best_ms;
      p.confirming = confirming;
      opt_.on_progress(p);
    }
    if (!log_ || confirming) return;
    const size_t total = std::max<size_t>(opt_.search_iters, 1);
    const size_t width = 30, filled = std::min(width, stats_.candidates * width / total);
    std::fprintf(stderr, "\r[search] %zu/%zu [%s%s] best %.4f ms", stats_.candidates, total,
                 std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                 stats_.best_ms);
  }
  void finish_progress() const {
    if (log_)
      std::fprintf(stderr, "\n[search] done: %zu candidates, stop: %s\n", stats_.candidates,
                   stats_.search_stop.c_str());
  }

  const egraph::EGraph& eg_;
  const egraph::ImportedGraph& imp_;
  egraph::CandidateSpace space_;
  Backend& backend_;
  const CompileOptions& opt_;
  CompileStats& stats_;
  const std::map<std::string, TensorData>& expected_;
  std::mt19937_64 rng_;
  bool log_;
  std::unordered_set<uint64_t> seen_;
  std::vector<Evaluated> pool_;         // sorted by time, stable (earlier first on ties)
  std::optional<uint64_t> runners_up_;  // the hash of the best with the runners-up (run)
  std::shared_ptr<const Graph> best_graph_;
  std::map<std::string, TensorData> best_outputs_;
};

/// The oracle's outputs on the dummy profiling inputs; nullopt if the graph
/// cannot run on them (see compile()).
std::optional<std::map<std::string, TensorData>> oracle_outputs(const Graph& graph,
                                                                const DimMap& dims) {
  Interpreter oracle(graph);
  try {
    for (auto& [name, data] : dummy_inputs(graph, dims)) oracle.set_input(name, data);
    oracle.run(dims);
  } catch (const Error& e) {
    if (log_search())
      std::fprintf(stderr, "[search] not searching: the graph cannot run on dummy inputs: %s\n",
                   e.what());
    return std::nullopt;
  }
  return oracle.outputs();
}

void check_winner(const std::map<std::string, TensorData>& want,
                  const std::map<std::string, TensorData>& got, uint64_t hash, double tolerance) {
  for (const auto& [name, data] : want) {
    const std::string diff = compare_outputs(data, got.at(name), tolerance);
    if (!diff.empty())
      throw Error("compile: the winning candidate (hash " + hex64(hash) +
                  ") disagrees with the reference interpreter on output \"" + name + "\": " + diff);
  }
}

/// Step 2' of compile(): search one representative per block kind, expand.
/// nullopt when folding does not apply (then the graph is compiled whole).
std::optional<CompiledModel> compile_folded(const Graph& graph, Backend& backend,
                                            const CompileOptions& options, CompileStats stats,
                                            Clock::time_point t0) {
  FoldPlan plan = find_blocks(graph);
  if (plan.kinds.empty() || plan.coverage < 0.5) return std::nullopt;
  const size_t repeated_kinds = plan.kinds.size();
  add_segments(graph, plan);
  // Every block kind's winner is checked against the interpreter at the
  // profiling dims by its own compile(). The expanded graph is checked as a
  // whole only with verify_all (at dims of 1 where the graph runs there): a
  // run of the whole graph costs as much as all its layers, which is exactly
  // what folding avoids, and on the reference interpreter it would dominate.
  DimMap check_dims = stats.profile_dims;
  std::optional<std::map<std::string, TensorData>> want;
  if (options.verify_all) {
    for (auto& [name, value] : check_dims) value = std::min<int64_t>(value, 1);
    want = oracle_outputs(graph, check_dims);
    if (!want) want = oracle_outputs(graph, check_dims = stats.profile_dims);
    if (!want) return std::nullopt;
  }
  std::vector<std::unique_ptr<Graph>> reps;
  try {
    for (const BlockKind& kind : plan.kinds) reps.push_back(block_graph(kind));
  } catch (const Error& e) {
    if (log_search()) std::fprintf(stderr, "[search] not folding: %s\n", e.what());
    return std::nullopt;
  }
  CompileOptions sub = options;
  sub.cache = false;
  sub.fold = false;
  sub.seed = stats.seed;
  std::vector<CompiledModel> blocks;
  std::vector<const Graph*> winners;
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const auto& rep : reps) {
    if (options.on_progress)
      sub.on_progress = [&options, block = blocks.size(),
                         blocks = reps.size()](const SearchProgress& p) {
        SearchProgress q = p;
        q.block = block;
        q.blocks = blocks;
        options.on_progress(q);
      };
    blocks.push_back(compile(*rep, backend, sub));
    const CompileStats& s = blocks.back().stats();
    winners.push_back(&blocks.back().graph());
    stats.egraph_nodes += s.egraph_nodes;
    stats.egraph_classes += s.egraph_classes;
    stats.candidates += s.candidates;
    stats.dropped += s.dropped;
    if (stats.stop_reason.empty()) stats.stop_reason = s.stop_reason;
    if (stats.search_stop.empty()) stats.search_stop = s.search_stop;
    hash = fnv1a64(hex64(s.winner_hash), hash);
    stats.best_ms += s.best_ms * static_cast<double>(plan.kinds[&rep - reps.data()].starts.size());
  }
  std::shared_ptr<const Graph> chosen(expand(graph, plan, winners));
  stats.winner_hash = hash;
  stats.block_kinds = repeated_kinds;
  stats.block_instances = plan.instances() - (plan.kinds.size() - repeated_kinds);
  if (want) {
    auto probe = backend.compile(chosen);
    probe->profile(check_dims, 0, 1, 0);  // runs on the dummy inputs
    check_winner(*want, probe->outputs(), hash, options.tolerance);
  }
  auto program = backend.compile(chosen);
  stats.compile_ms = ms_since(t0);
  return CompiledModel(std::move(chosen), std::move(program), std::move(stats));
}

}  // namespace

CompiledModel::CompiledModel(std::shared_ptr<const Graph> chosen, std::unique_ptr<Program> program,
                             CompileStats stats)
    : chosen_(std::move(chosen)), program_(std::move(program)), stats_(std::move(stats)) {}

uint64_t default_seed() {
  if (const char* s = std::getenv("LUMINAL_SEED"); s != nullptr && *s != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 0);
    if (end != nullptr && *end == '\0') return v;
    throw Error("LUMINAL_SEED must be an unsigned integer, got \"" + std::string(s) + "\"");
  }
  return 0x5eed;
}

DimMap profile_dims(const Graph& graph, const CompileOptions& options) {
  DimMap dims = options.profile_dims;
  for (const std::string& name : graph.dim_names())
    if (!dims.count(name)) dims[name] = options.default_dim;
  return dims;
}

std::string compare_outputs(const TensorData& expected, const TensorData& actual,
                            double tolerance) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "expected " + expected.describe() + ", got " + actual.describe();
  const DType d = expected.dtype();
  if (is_quantized(d)) {
    return std::equal(expected.bytes().begin(), expected.bytes().end(), actual.bytes().begin())
               ? ""
               : "quantized bytes differ";
  }
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (!is_float(d)) {
      if (expected.get_int(i) != actual.get_int(i))
        return "element " + std::to_string(i) + ": expected " +
               std::to_string(expected.get_int(i)) + ", got " + std::to_string(actual.get_int(i));
      continue;
    }
    const double e = expected.get(i), a = actual.get(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;  // also equal infinities
    if (std::isfinite(e) && std::isfinite(a) && std::abs(e - a) <= tolerance * (1.0 + std::abs(e)))
      continue;
    return "element " + std::to_string(i) + ": expected " + std::to_string(e) + ", got " +
           std::to_string(a);
  }
  return "";
}

CompiledModel compile(const Graph& graph, Backend& backend, const CompileOptions& options) {
  const auto t0 = Clock::now();
  // The profiles' shared dummy values are let go when this compile ends (the
  // winner's program keeps those it borrowed).
  struct ReleaseProfileInputs {
    ~ReleaseProfileInputs() { release_profile_inputs(); }
  } release;
  if (graph.outputs().empty())
    throw LookupError("compile: the graph has no outputs; mark results with Graph::output");
  CompileStats stats;
  stats.seed = options.seed.value_or(default_seed());
  stats.profile_dims = profile_dims(graph, options);

  std::string dir, key;
  if (options.cache) {
    dir = cache_directory(options);
    key = cache_key(graph, backend, options);
    if (auto entry = cache_load(dir, key)) {
      auto program = backend.compile(entry->graph);
      CompileStats cached = entry->stats;
      cached.cached = true;
      cached.compile_ms = ms_since(t0);
      return CompiledModel(entry->graph, std::move(program), std::move(cached));
    }
  }

  if (options.fold) {
    if (auto folded = compile_folded(graph, backend, options, stats, t0)) {
      if (options.cache) cache_store(dir, key, folded->graph(), folded->stats());
      return std::move(*folded);
    }
  }

  egraph::RuleRegistry registry(egraph::RuleRegistry::global());
  backend.register_rules(registry, options.matmul_precision);
  egraph::EGraph eg;
  const egraph::ImportedGraph imp = egraph::import_graph(eg, graph);
  const egraph::SaturationReport report =
      egraph::run_schedule(eg, registry.pipeline(), registry, options.budget);
  stats.egraph_nodes = eg.num_nodes();
  stats.egraph_classes = eg.num_classes();
  stats.stop_reason = egraph::to_string(report.reason);

  // The oracle's outputs on the profiling inputs. A graph the dummy inputs
  // cannot run (e.g. an integer Mod by an input that is 0, or dims the graph
  // rejects) cannot be profiled: it keeps its own form, unsearched.
  const auto want = oracle_outputs(graph, stats.profile_dims);
  if (!want) {
    egraph::CandidateSpace space(eg, imp.roots(eg));
    const egraph::Candidate original = space.prefer(imp.node_enode);
    std::shared_ptr<const Graph> chosen(egraph::extract(eg, imp, original).graph);
    stats.winner_hash = space.hash(original);
    stats.search_stop = "unprofilable";
    auto program = backend.compile(chosen);
    stats.compile_ms = ms_since(t0);
    return CompiledModel(std::move(chosen), std::move(program), std::move(stats));
  }

  Search search(eg, imp, backend, options, stats, *want);
  search.run();
  search.confirm();
  if (!search.has_winner())
    throw Error("compile: none of the " + std::to_string(stats.candidates) +
                " candidates could be compiled and profiled by backend \"" + backend.name() +
                "\" (run with LUMINAL_LOG_SEARCH=1 for the reasons)");
  check_winner(*want, search.winner_outputs(), stats.winner_hash, options.tolerance);
  std::shared_ptr<const Graph> chosen = search.winner_graph();
  auto program = backend.compile(chosen);
  stats.compile_ms = ms_since(t0);
  if (options.cache) cache_store(dir, key, *chosen, stats);
  return CompiledModel(std::move(chosen), std::move(program), std::move(stats));
}

}  // namespace luminal::compiler

namespace luminal {

compiler::CompiledModel Graph::compile(compiler::Backend& backend,
                                       const compiler::CompileOptions& options) const {
  return compiler::compile(*this, backend, options);
}

compiler::CompiledModel Graph::compile(const std::string& device,
                                       const compiler::CompileOptions& options) const {
  // The backend only lives through the compile: programs own what they need.
  const std::unique_ptr<compiler::Backend> backend = compiler::backend_for_device(device);
  return compiler::compile(*this, *backend, options);
}

compiler::CompiledModel Graph::compile(const std::string& device) const {
  return compile(device, compiler::CompileOptions{});
}

}  // namespace luminal
