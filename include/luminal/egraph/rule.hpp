#pragma once
// Rewrite rules in a small s-expression language.
//
//   pattern  := ?var                      any class, bound to var
//             | ?var=(Op ...)             bind the class the sub-pattern matched
//             | (Op[@pvar] pattern*)      an e-node of op Op; @pvar binds its payload
//
// Op is any registered op name (HLIR names like Mul, SumReduce, core View and
// MatMul, backend names like cpu.Gemm). A variable used twice must bind the
// same class (or equal payload): `(Add ?a ?a)`, `(Mul (View@v ?a) (View@v ?b))`.
// `@_` matches any payload without binding it.
//
// A rule has one or more patterns (a multi-pattern: later patterns are
// joined with earlier ones on shared variables), optional conditions
// (lambdas on the match: payloads, analyses, views — they may also bind new
// payload variables for the right-hand side), and then either a right-hand
// side pattern whose class is merged with the first pattern's root, or an
// action lambda that adds terms and merges classes itself.
//
//   Rule("mul-one", "(Mul ?x ?c)").to("?x")
//       .where([](Match& m) { auto u = m.uniform("c"); return u && u->is_mul_identity(); });
//
//   Rule("view-compose", "(View@outer (View@inner ?x))").to("(View@both ?x)")
//       .where([](Match& m) {
//         auto v = compose_views(m.get<View>("outer"), m.get<View>("inner"));
//         if (v) m.bind("both", Payload(*v));
//         return v.has_value();
//       });

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminal/egraph/egraph.hpp"

namespace luminal::egraph {

/// Variable names of one rule, shared by its patterns and right-hand side.
struct RuleVars {
  std::vector<std::string> classes;   // ?x
  std::vector<std::string> payloads;  // @p
  int class_slot(std::string_view name) const;
  int payload_slot(std::string_view name) const;
};

/// A parsed pattern: a tree of nodes, root last.
struct Pattern {
  struct Node {
    bool is_var = false;
    int var = -1;               // class slot: ?x (is_var) or ?x=( ... ) binding (op node)
    OpId op = 0;                // op nodes
    int payload = -1;           // payload slot, -1 for none/any
    std::vector<int> children;  // indexes into nodes
  };
  std::vector<Node> nodes;
  std::string text;
  const Node& root() const { return nodes.back(); }
  /// Parse `text`, adding its variables to `vars`. Throws luminal::Error with
  /// the position and reason on a syntax error or an unknown op.
  static Pattern parse(std::string_view text, RuleVars& vars);
};

/// One match of a rule: the classes and payloads its variables bound.
class Match {
public:
  Match(const EGraph& egraph, std::shared_ptr<const RuleVars> vars, std::vector<ClassId> classes,
        std::vector<PayloadId> payloads, std::vector<ClassId> roots);

  const EGraph& egraph() const { return *egraph_; }
  /// The class bound to ?var (throws Error for an unknown or unbound variable).
  ClassId cls(std::string_view var) const;
  /// The payload bound to @var (by the pattern, or by bind()).
  const Payload& payload(std::string_view var) const;
  template <class T>
  const T& get(std::string_view var) const {
    return payload(var).as<T>();
  }
  /// Bind (or rebind) a payload variable for the right-hand side.
  void bind(std::string_view var, Payload value);
  /// The class the i-th pattern matched.
  ClassId root(size_t i = 0) const { return roots_.at(i); }
  /// Shortcuts to the analysis of ?var's class.
  const TensorInfo& info(std::string_view var) const { return egraph_->info(cls(var)); }
  const std::optional<Scalar>& uniform(std::string_view var) const {
    return egraph_->uniform(cls(var));
  }
  /// Payload slot values (kNoId when bound by bind() or unbound).
  PayloadId payload_id(int slot) const { return payloads_[static_cast<size_t>(slot)]; }
  ClassId class_slot(int slot) const { return classes_[static_cast<size_t>(slot)]; }
  const Payload* bound_payload(int slot) const;

private:
  const EGraph* egraph_;
  std::shared_ptr<const RuleVars> vars_;  // shared with the rule: a match outlives a temporary rule
  std::vector<ClassId> classes_;
  std::vector<PayloadId> payloads_;
  std::vector<std::pair<int, Payload>> computed_;
  std::vector<ClassId> roots_;
};

using Condition = std::function<bool(Match&)>;
using Action = std::function<void(EGraph&, const Match&)>;

class Rule {
public:
  /// A rule matching one pattern, or several joined on shared variables.
  Rule(std::string name, std::string_view pattern);
  Rule(std::string name, const std::vector<std::string>& patterns);

  /// Add a condition (all must hold, in order; they may bind payload variables).
  Rule& where(Condition condition);
  /// Merge the first pattern's root with this term (its variables come from the
  /// patterns or from bind()).
  Rule& to(std::string_view rhs);
  /// Run an action for every match (after the right-hand side, if any).
  Rule& then(Action action);
  /// Documentation: why the rule is exact (printed by describe()).
  Rule& because(std::string why);

  const std::string& name() const { return name_; }
  const std::string& why() const { return why_; }
  const std::vector<Pattern>& patterns() const { return patterns_; }
  const RuleVars& vars() const { return *vars_; }
  const std::shared_ptr<RuleVars>& shared_vars() const { return vars_; }
  std::string describe() const;

  /// Check the conditions on a fresh match (binding computed payloads).
  bool accept(Match& m) const;
  /// Apply the right-hand side and the actions.
  void apply(EGraph& egraph, const Match& m) const;

private:
  ClassId instantiate(EGraph& egraph, const Pattern& p, int node, const Match& m) const;
  std::string name_;
  std::string why_;
  std::shared_ptr<RuleVars> vars_;  // shared by copies of the rule and by its matches
  std::vector<Pattern> patterns_;
  std::vector<Condition> conditions_;
  std::optional<Pattern> rhs_;
  std::vector<Action> actions_;
};

/// A named, ordered list of rules.
class Ruleset {
public:
  explicit Ruleset(std::string name) : name_(std::move(name)) {}
  Ruleset& add(Rule rule);
  const std::string& name() const { return name_; }
  const std::vector<Rule>& rules() const { return rules_; }

private:
  std::string name_;
  std::vector<Rule> rules_;
};

/// The classes holding an e-node of each op (ascending), built once per
/// search round of a clean e-graph: pattern roots are only tried there.
class OpIndex {
public:
  explicit OpIndex(const EGraph& egraph);
  std::span<const ClassId> classes_with(OpId op) const;
  std::span<const ClassId> all() const { return all_; }

private:
  std::vector<std::vector<ClassId>> by_op_;
  std::vector<ClassId> all_;
};

struct SearchResult {
  std::vector<Match> matches;  // accepted matches (conditions held), in search order
  size_t found = 0;            // pattern matches before conditions
  bool capped = false;         // stopped at `limit` accepted matches
  bool stopped = false;        // `should_stop` asked to stop (time budget)
};

/// Search a clean e-graph for the matches of `rule`, in a deterministic order
/// (roots by class id, e-nodes by id), checking its conditions; stop after
/// `limit` accepted matches. `should_stop` is polled now and then.
SearchResult search(const EGraph& egraph, const OpIndex& index, const Rule& rule,
                    size_t limit = SIZE_MAX, const std::function<bool()>& should_stop = {});

/// search() with a fresh index: for tests and tools.
SearchResult find_matches(const EGraph& egraph, const Rule& rule, size_t limit = SIZE_MAX);

}  // namespace luminal::egraph
