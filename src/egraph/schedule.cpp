// Schedules, budgets and the saturation loop (see schedule.hpp).

#include "luminal/egraph/schedule.hpp"

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "luminal/egraph/diagnostics.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/error.hpp"

namespace luminal::egraph {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::Saturated:
      return "saturated";
    case StopReason::Completed:
      return "schedule completed";
    case StopReason::NodeLimit:
      return "node limit";
    case StopReason::MemoryLimit:
      return "memory limit";
    case StopReason::IterationLimit:
      return "iteration limit";
    case StopReason::TimeLimit:
      return "time limit";
  }
  return "?";
}

// ---- schedules -------------------------------------------------------------------

Schedule Schedule::run(std::vector<std::string> rulesets, size_t iterations) {
  Schedule s;
  s.kind_ = Kind::Run;
  s.rulesets_ = std::move(rulesets);
  s.count_ = iterations;
  return s;
}

Schedule Schedule::saturate(Schedule body) {
  Schedule s;
  s.kind_ = Kind::Saturate;
  s.children_.push_back(std::move(body));
  return s;
}

Schedule Schedule::seq(std::vector<Schedule> steps) {
  Schedule s;
  s.kind_ = Kind::Seq;
  s.children_ = std::move(steps);
  return s;
}

Schedule Schedule::repeat(size_t times, Schedule body) {
  Schedule s;
  s.kind_ = Kind::Repeat;
  s.count_ = times;
  s.children_.push_back(std::move(body));
  return s;
}

Schedule Schedule::phase(std::string name) {
  Schedule s;
  s.kind_ = Kind::Phase;
  s.name_ = std::move(name);
  return s;
}

std::string Schedule::to_string() const {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  switch (kind_) {
    case Kind::Run:
      return "run(" + join(rulesets_) + ")" + (count_ != 1 ? "*" + std::to_string(count_) : "");
    case Kind::Saturate:
      return "saturate(" + children_[0].to_string() + ")";
    case Kind::Repeat:
      return "repeat(" + std::to_string(count_) + ", " + children_[0].to_string() + ")";
    case Kind::Phase:
      return "phase(" + name_ + ")";
    case Kind::Seq: {
      std::vector<std::string> parts;
      for (const Schedule& c : children_) parts.push_back(c.to_string());
      return "seq(" + join(parts) + ")";
    }
  }
  return "?";
}

// ---- reports -----------------------------------------------------------------------

bool SaturationReport::budget_hit() const {
  return reason != StopReason::Saturated && reason != StopReason::Completed;
}

std::vector<RuleStats> SaturationReport::rule_totals() const {
  std::map<std::pair<std::string, std::string>, RuleStats> totals;
  for (const PhaseReport& p : phases) {
    for (const RuleStats& r : p.rules) {
      RuleStats& t = totals[{r.ruleset, r.rule}];
      t.ruleset = r.ruleset;
      t.rule = r.rule;
      t.found += r.found;
      t.matches += r.matches;
      t.changed += r.changed;
      t.capped += r.capped;
      t.search_seconds += r.search_seconds;
      t.apply_seconds += r.apply_seconds;
    }
  }
  std::vector<RuleStats> out;
  for (auto& [key, stats] : totals) out.push_back(stats);
  return out;
}

namespace {

std::string rule_line(const RuleStats& r) {
  std::ostringstream os;
  os << "  " << std::left << std::setw(36) << (r.ruleset + "/" + r.rule) << std::right << " found "
     << std::setw(7) << r.found << "  matches " << std::setw(7) << r.matches << "  changed "
     << std::setw(7) << r.changed;
  if (r.capped) os << "  capped " << r.capped << "x";
  os << std::fixed << std::setprecision(2) << "  search " << r.search_seconds * 1e3 << " ms  apply "
     << r.apply_seconds * 1e3 << " ms";
  return os.str();
}

std::string phase_text(const PhaseReport& p) {
  std::ostringstream os;
  os << "phase " << p.name << ": " << p.iterations << " iterations, " << std::fixed
     << std::setprecision(2) << p.seconds * 1e3 << " ms, nodes " << p.nodes_before << " -> "
     << p.nodes_after << ", classes " << p.classes_before << " -> " << p.classes_after << '\n';
  for (const RuleStats& r : p.rules) os << rule_line(r) << '\n';
  return os.str();
}

}  // namespace

std::string SaturationReport::to_string() const {
  std::ostringstream os;
  os << "e-graph: stopped by " << egraph::to_string(reason) << " after " << iterations
     << " iterations: " << nodes << " nodes, " << classes << " classes, " << std::fixed
     << std::setprecision(1) << static_cast<double>(memory_bytes) / (1 << 20) << " MiB, "
     << std::setprecision(2) << seconds * 1e3 << " ms\n";
  for (const PhaseReport& p : phases) os << phase_text(p);
  return os.str();
}

// ---- the runner ------------------------------------------------------------------------

class ScheduleRunner {
public:
  ScheduleRunner(EGraph& eg, const RuleRegistry& registry, const Budget& budget)
      : eg_(eg), registry_(registry), budget_(budget), start_(Clock::now()) {}

  SaturationReport run(const Schedule& s) {
    eg_.rebuild();
    if (s.kind() == Schedule::Kind::Phase) {
      exec(s);
    } else {
      PhaseReport top = begin_phase("schedule " + s.to_string());
      current_ = &top;
      exec(s);
      current_ = nullptr;
      if (top.iterations > 0 || !top.rules.empty()) end_phase(std::move(top));
    }
    eg_.rebuild();
    report_.reason =
        stop_ ? *stop_ : (last_changed_ ? StopReason::Completed : StopReason::Saturated);
    report_.iterations = iterations_;
    report_.nodes = eg_.num_nodes();
    report_.classes = eg_.num_classes();
    report_.memory_bytes = eg_.memory_bytes();
    report_.seconds = elapsed();
    if (log_egraph_enabled())
      std::fprintf(stderr, "luminal: e-graph stopped by %s after %zu iterations (%zu nodes)\n",
                   to_string(report_.reason), iterations_, report_.nodes);
    return std::move(report_);
  }

private:
  using Clock = std::chrono::steady_clock;

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  PhaseReport begin_phase(std::string name) const {
    PhaseReport p;
    p.name = std::move(name);
    p.nodes_before = eg_.num_nodes();
    p.classes_before = eg_.num_classes();
    p.seconds = -elapsed();
    return p;
  }

  void end_phase(PhaseReport p) {
    p.seconds += elapsed();
    p.nodes_after = eg_.num_nodes();
    p.classes_after = eg_.num_classes();
    if (log_egraph_enabled()) std::fprintf(stderr, "luminal: %s", phase_text(p).c_str());
    if (dump_dir()) write_dump("egraph-" + p.name, "dot", eg_.to_dot());
    report_.phases.push_back(std::move(p));
  }

  // Returns true if the e-graph changed.
  bool exec(const Schedule& s) {
    if (stop_) return false;
    bool any = false;
    switch (s.kind_) {
      case Schedule::Kind::Run: {
        std::vector<Ruleset> sets;
        for (const std::string& name : s.rulesets_) sets.push_back(registry_.ruleset(name));
        for (size_t i = 0; i < s.count_ && !stop_; ++i) {
          const bool changed = iterate(sets);
          any = any || changed;
          if (!changed) break;
        }
        break;
      }
      case Schedule::Kind::Saturate:
        while (!stop_) {
          const bool changed = exec(s.children_[0]);
          any = any || changed;
          if (!changed) break;
        }
        break;
      case Schedule::Kind::Seq:
        for (const Schedule& c : s.children_) any = exec(c) || any;
        break;
      case Schedule::Kind::Repeat:
        for (size_t i = 0; i < s.count_ && !stop_; ++i) any = exec(s.children_[0]) || any;
        break;
      case Schedule::Kind::Phase: {
        PhaseReport* outer = current_;
        PhaseReport p = begin_phase(s.name_);
        current_ = &p;
        const std::vector<std::string> sets = registry_.phase_rulesets(s.name_);
        if (!sets.empty()) any = exec(Schedule::saturate(Schedule::run(sets)));
        current_ = outer;
        end_phase(std::move(p));
        break;
      }
    }
    return any;
  }

  bool check_budget() {
    if (iterations_ >= budget_.max_iterations)
      stop_ = StopReason::IterationLimit;
    else if (eg_.num_nodes() >= budget_.max_nodes)
      stop_ = StopReason::NodeLimit;
    else if (eg_.memory_bytes() >= budget_.max_memory_bytes)
      stop_ = StopReason::MemoryLimit;
    else if (elapsed() >= budget_.max_seconds)
      stop_ = StopReason::TimeLimit;
    return !stop_;
  }

  RuleStats& stats(const std::string& ruleset, const std::string& rule) {
    for (RuleStats& r : current_->rules)
      if (r.ruleset == ruleset && r.rule == rule) return r;
    current_->rules.push_back(RuleStats{ruleset, rule});
    return current_->rules.back();
  }

  // One search / apply / rebuild round over the union of `sets`.
  bool iterate(const std::vector<Ruleset>& sets) {
    if (!check_budget()) return false;
    const uint64_t version = eg_.version();
    const std::function<bool()> out_of_time = [&] { return elapsed() >= budget_.max_seconds; };
    struct Found {
      const Rule* rule;
      RuleStats* stats;
      std::vector<Match> matches;
    };
    std::vector<Found> found;
    // Create every statistics entry first: the pointers below must stay valid.
    for (const Ruleset& rs : sets)
      for (const Rule& rule : rs.rules()) stats(rs.name(), rule.name());
    {
      const OpIndex index(eg_);
      for (const Ruleset& rs : sets) {
        for (const Rule& rule : rs.rules()) {
          RuleStats& st = stats(rs.name(), rule.name());
          const auto t0 = Clock::now();
          SearchResult res = search(eg_, index, rule, budget_.max_matches_per_rule, out_of_time);
          st.search_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
          st.found += res.found;
          st.matches += res.matches.size();
          st.capped += res.capped;
          found.push_back({&rule, nullptr, std::move(res.matches)});
          found.back().stats = &st;
          if (res.stopped) {
            stop_ = StopReason::TimeLimit;
            return false;
          }
        }
      }
    }
    size_t applied = 0;
    for (Found& f : found) {
      const auto t0 = Clock::now();
      for (const Match& m : f.matches) {
        const uint64_t before = eg_.version();
        try {
          f.rule->apply(eg_, m);
        } catch (const Error& e) {
          throw Error("rule " + f.stats->ruleset + "/" + f.rule->name() + ": " + e.what());
        }
        f.stats->changed += eg_.version() != before;
        if (eg_.num_nodes() >= budget_.max_nodes) stop_ = StopReason::NodeLimit;
        if ((++applied & 63) == 0) {
          if (eg_.memory_bytes() >= budget_.max_memory_bytes) stop_ = StopReason::MemoryLimit;
          if (elapsed() >= budget_.max_seconds) stop_ = StopReason::TimeLimit;
        }
        if (stop_) break;
      }
      f.stats->apply_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      if (stop_) break;
    }
    try {
      eg_.rebuild();
    } catch (const Error& e) {
      throw Error(std::string("e-graph rebuild after rules: ") + e.what());
    }
    ++iterations_;
    ++current_->iterations;
    last_changed_ = eg_.version() != version;
    return last_changed_;
  }

  EGraph& eg_;
  const RuleRegistry& registry_;
  Budget budget_;
  Clock::time_point start_;
  SaturationReport report_;
  PhaseReport* current_ = nullptr;
  std::optional<StopReason> stop_;
  size_t iterations_ = 0;
  bool last_changed_ = false;
};

SaturationReport run_schedule(EGraph& egraph, const Schedule& schedule,
                              const RuleRegistry& registry, const Budget& budget) {
  return ScheduleRunner(egraph, registry, budget).run(schedule);
}

}  // namespace luminal::egraph
