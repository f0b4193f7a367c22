#include "luminal/egraph/rule_registry.hpp"

#include <algorithm>

#include "luminal/egraph/core_rules.hpp"
#include "luminal/error.hpp"

namespace luminal::egraph {

RuleRegistry& RuleRegistry::global() {
  static RuleRegistry* registry = [] {
    auto* r = new RuleRegistry();
    add_core_rules(*r);
    return r;
  }();
  return *registry;
}

RuleRegistry::RuleRegistry(const RuleRegistry& other) {
  std::lock_guard<std::mutex> lock(other.mutex_);
  rulesets_ = other.rulesets_;
  phases_ = other.phases_;
}

void RuleRegistry::add_ruleset(Ruleset ruleset) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Ruleset& r : rulesets_)
    if (r.name() == ruleset.name())
      throw Error("rule registry: a ruleset named " + ruleset.name() + " already exists");
  rulesets_.push_back(std::move(ruleset));
}

void RuleRegistry::add_rule(std::string_view ruleset, Rule rule) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Ruleset& r : rulesets_) {
    if (r.name() == ruleset) {
      r.add(std::move(rule));
      return;
    }
  }
  throw LookupError("rule registry: no ruleset named " + std::string(ruleset));
}

bool RuleRegistry::has_ruleset(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(rulesets_.begin(), rulesets_.end(),
                     [&](const Ruleset& r) { return r.name() == name; });
}

Ruleset RuleRegistry::ruleset(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Ruleset& r : rulesets_)
    if (r.name() == name) return r;
  std::string known;
  for (const Ruleset& r : rulesets_) known += (known.empty() ? "" : ", ") + r.name();
  throw LookupError("rule registry: no ruleset named " + std::string(name) + " (known: " + known +
                    ")");
}

std::vector<std::string> RuleRegistry::ruleset_names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const Ruleset& r : rulesets_) out.push_back(r.name());
  return out;
}

void RuleRegistry::add_phase(std::string name, std::string_view after) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Phase& p : phases_)
    if (p.name == name) throw Error("rule registry: a phase named " + name + " already exists");
  if (after.empty()) {
    phases_.push_back({std::move(name), {}});
    return;
  }
  for (size_t i = 0; i < phases_.size(); ++i) {
    if (phases_[i].name == after) {
      phases_.insert(phases_.begin() + static_cast<std::ptrdiff_t>(i) + 1, {std::move(name), {}});
      return;
    }
  }
  throw LookupError("rule registry: add_phase " + name + ": no phase named " + std::string(after));
}

void RuleRegistry::add_to_phase(std::string_view phase, std::string ruleset) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Phase& p : phases_) {
    if (p.name == phase) {
      if (std::find(p.rulesets.begin(), p.rulesets.end(), ruleset) == p.rulesets.end())
        p.rulesets.push_back(std::move(ruleset));
      return;
    }
  }
  throw LookupError("rule registry: no phase named " + std::string(phase));
}

std::vector<std::string> RuleRegistry::phases() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const Phase& p : phases_) out.push_back(p.name);
  return out;
}

std::vector<std::string> RuleRegistry::phase_rulesets(std::string_view phase) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Phase& p : phases_)
    if (p.name == phase) return p.rulesets;
  throw LookupError("rule registry: no phase named " + std::string(phase));
}

Schedule RuleRegistry::pipeline() const {
  std::vector<Schedule> steps;
  for (const std::string& p : phases()) steps.push_back(Schedule::phase(p));
  return Schedule::seq(std::move(steps));
}

}  // namespace luminal::egraph
