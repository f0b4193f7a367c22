#pragma once
// Running rules: schedules (composable values), hard budgets, and the report
// of what happened and why saturation stopped.
//
// One iteration searches every rule of the running rulesets on the same clean
// e-graph (so rule order does not change what matches), then applies all
// accepted matches in rule order, then rebuilds. Budgets are checked before
// every iteration, between applications (node count, memory) and during the
// search (time); hitting one stops the whole schedule, rebuilds the e-graph
// so it stays consistent and usable for extraction, and is named in the report.
//
// Per-rule guard against expensive joins: at most `max_matches_per_rule`
// accepted matches are collected per rule per iteration (the rest waits for
// the next iteration); each time a rule hits the cap it is counted in its
// statistics (`capped`).
//
// Environment: LUMINAL_LOG_EGRAPH=1 prints per-rule statistics for every phase
// to stderr; LUMINAL_DUMP_DIR=<dir> writes the e-graph as DOT after each phase.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule.hpp"

namespace luminal::egraph {

class RuleRegistry;

struct Budget {
  size_t max_nodes = 500'000;                 // live e-nodes
  size_t max_memory_bytes = size_t{2} << 30;  // memory_bytes() estimate
  size_t max_iterations = 100;                // search/apply/rebuild rounds, whole schedule
  double max_seconds = 60.0;                  // wall time, whole schedule
  size_t max_matches_per_rule = 50'000;       // accepted matches per rule per iteration
};

enum class StopReason {
  Saturated,  // the last iteration changed nothing
  Completed,  // the schedule ran to its end (fixed iteration counts) still changing
  NodeLimit,
  MemoryLimit,
  IterationLimit,
  TimeLimit,
};
const char* to_string(StopReason reason);

struct RuleStats {
  std::string ruleset;
  std::string rule;
  uint64_t found = 0;    // pattern matches (before conditions)
  uint64_t matches = 0;  // accepted matches (conditions held)
  uint64_t changed = 0;  // applications that added a node or merged classes
  uint64_t capped = 0;   // iterations in which the per-rule match cap was hit
  double search_seconds = 0;
  double apply_seconds = 0;
};

struct PhaseReport {
  std::string name;  // the phase, or the schedule's text for unnamed runs
  size_t iterations = 0;
  double seconds = 0;
  size_t nodes_before = 0, nodes_after = 0;
  size_t classes_before = 0, classes_after = 0;
  std::vector<RuleStats> rules;
};

struct SaturationReport {
  StopReason reason = StopReason::Saturated;
  size_t iterations = 0;
  size_t nodes = 0, classes = 0, memory_bytes = 0;
  double seconds = 0;
  std::vector<PhaseReport> phases;
  /// True if a budget (not the schedule) ended the run.
  bool budget_hit() const;
  /// Statistics summed over phases, by ruleset then rule name.
  std::vector<RuleStats> rule_totals() const;
  /// Multi-line human-readable summary with one line per rule.
  std::string to_string() const;
};

/// A schedule is a value: build it from these constructors and run it with run_schedule().
class Schedule {
public:
  enum class Kind { Run, Saturate, Seq, Repeat, Phase };
  /// Run the union of these rulesets for `iterations` iterations (fewer if an
  /// iteration changes nothing).
  static Schedule run(std::vector<std::string> rulesets, size_t iterations = 1);
  /// Repeat `body` until an execution of it changes nothing.
  static Schedule saturate(Schedule body);
  static Schedule seq(std::vector<Schedule> steps);
  static Schedule repeat(size_t times, Schedule body);
  /// Saturate the rulesets a RuleRegistry lists for this phase (looked up when run).
  static Schedule phase(std::string name);

  Kind kind() const { return kind_; }
  std::string to_string() const;

private:
  friend class ScheduleRunner;
  Kind kind_ = Kind::Seq;
  std::vector<std::string> rulesets_;
  size_t count_ = 1;
  std::string name_;
  std::vector<Schedule> children_;
};

/// Run `schedule` on `egraph` with rulesets (and phases) from `registry`.
/// The e-graph is rebuilt (clean) when this returns. Throws luminal::Error
/// naming the rule if a rule equates tensors of different shapes or dtypes.
SaturationReport run_schedule(EGraph& egraph, const Schedule& schedule,
                              const RuleRegistry& registry, const Budget& budget = {});

}  // namespace luminal::egraph
