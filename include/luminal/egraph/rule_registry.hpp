#pragma once
// Where rulesets live and when they run.
//
// A RuleRegistry holds named rulesets and an ordered list of named phases;
// each phase saturates the union of the rulesets listed for it. Backends add
// their rulesets (lowering, fusion, library calls) to phases by name at
// start-up; the core never names a backend ruleset. A ruleset may be listed
// in several phases — SPEC 12: a rule whose output enables other rules must
// run where those rules run (the core lists "views" in every core phase for
// that reason, and a backend that needs view simplification after its
// lowering adds "views" to its own phase).
//
// Core phases, in order (see core_rules.hpp for the rulesets):
//   simplify  algebra, views
//   library   views, matmul          (library-call recognition)
//   lower     (empty: backends add lowering rulesets)
//   fuse      (empty: backends add fusion rulesets)
//
// Registration is not synchronised with running schedules: register at
// start-up, before compiling.

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/egraph/rule.hpp"
#include "luminal/egraph/schedule.hpp"

namespace luminal::egraph {

class RuleRegistry {
public:
  /// An empty registry (tests, custom pipelines).
  RuleRegistry() = default;
  /// The process-wide registry, holding the core rulesets and phases.
  static RuleRegistry& global();

  /// Add a ruleset; throws luminal::Error if one with that name exists.
  void add_ruleset(Ruleset ruleset);
  /// Add a rule to an existing ruleset (throws LookupError if unknown).
  void add_rule(std::string_view ruleset, Rule rule);
  bool has_ruleset(std::string_view name) const;
  /// A copy (rules are cheap to copy): safe to use while the registry changes.
  Ruleset ruleset(std::string_view name) const;
  std::vector<std::string> ruleset_names() const;

  /// Add a phase at the end, or right after phase `after`.
  void add_phase(std::string name, std::string_view after = {});
  /// List `ruleset` in `phase` (once; order of listing is kept).
  void add_to_phase(std::string_view phase, std::string ruleset);
  std::vector<std::string> phases() const;
  std::vector<std::string> phase_rulesets(std::string_view phase) const;
  /// seq(phase(p) for every phase p), the default compilation schedule.
  Schedule pipeline() const;

  RuleRegistry(const RuleRegistry& other);
  RuleRegistry& operator=(const RuleRegistry&) = delete;

private:
  struct Phase {
    std::string name;
    std::vector<std::string> rulesets;
  };
  mutable std::mutex mutex_;
  std::vector<Ruleset> rulesets_;
  std::vector<Phase> phases_;
};

}  // namespace luminal::egraph
