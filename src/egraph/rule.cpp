// The rule language: pattern parsing, e-matching with joins, rule application.

#include "luminal/egraph/rule.hpp"

#include <cctype>

#include "luminal/error.hpp"

namespace luminal::egraph {

// ---- variables and parsing ---------------------------------------------------

int RuleVars::class_slot(std::string_view name) const {
  for (size_t i = 0; i < classes.size(); ++i)
    if (classes[i] == name) return static_cast<int>(i);
  return -1;
}

int RuleVars::payload_slot(std::string_view name) const {
  for (size_t i = 0; i < payloads.size(); ++i)
    if (payloads[i] == name) return static_cast<int>(i);
  return -1;
}

namespace {

class Parser {
public:
  Parser(std::string_view text, RuleVars& vars, Pattern& out) : s_(text), vars_(vars), out_(out) {}

  void parse() {
    skip();
    term();
    skip();
    if (i_ != s_.size()) fail("unexpected text after the pattern");
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("pattern \"" + std::string(s_) + "\": at position " + std::to_string(i_) + ": " +
                why);
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
           c == '-';
  }
  std::string name(const char* what) {
    const size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (i_ == start) fail(std::string("expected ") + what);
    return std::string(s_.substr(start, i_ - start));
  }
  int class_var(const std::string& n) {
    int slot = vars_.class_slot(n);
    if (slot < 0) {
      vars_.classes.push_back(n);
      slot = static_cast<int>(vars_.classes.size()) - 1;
    }
    return slot;
  }
  int payload_var(const std::string& n) {
    if (n == "_") return -1;
    int slot = vars_.payload_slot(n);
    if (slot < 0) {
      vars_.payloads.push_back(n);
      slot = static_cast<int>(vars_.payloads.size()) - 1;
    }
    return slot;
  }

  // Returns the index of the parsed node in out_.nodes.
  int term() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end of pattern");
    if (s_[i_] == '?') {
      ++i_;
      const int var = class_var(name("a variable name after '?'"));
      if (i_ < s_.size() && s_[i_] == '=') {
        ++i_;
        if (i_ >= s_.size() || s_[i_] != '(') fail("expected '(' after '='");
        const int node = op_term();
        out_.nodes[static_cast<size_t>(node)].var = var;
        return node;
      }
      Pattern::Node n;
      n.is_var = true;
      n.var = var;
      out_.nodes.push_back(std::move(n));
      return static_cast<int>(out_.nodes.size()) - 1;
    }
    if (s_[i_] == '(') return op_term();
    fail("expected '?var' or '('");
  }

  int op_term() {
    ++i_;  // '('
    skip();
    const std::string op = name("an op name");
    Pattern::Node n;
    auto id = OpRegistry::global().find(op);
    if (!id) fail("unknown op \"" + op + "\"");
    n.op = *id;
    if (i_ < s_.size() && s_[i_] == '@') {
      ++i_;
      n.payload = payload_var(name("a payload variable after '@'"));
    }
    std::vector<int> kids;
    for (;;) {
      skip();
      if (i_ >= s_.size()) fail("missing ')'");
      if (s_[i_] == ')') {
        ++i_;
        break;
      }
      kids.push_back(term());
    }
    const int arity = OpRegistry::global().info(n.op).arity;
    if (arity >= 0 && static_cast<size_t>(arity) != kids.size())
      fail(op + " takes " + std::to_string(arity) + " children, the pattern gives " +
           std::to_string(kids.size()));
    n.children = std::move(kids);
    out_.nodes.push_back(std::move(n));
    return static_cast<int>(out_.nodes.size()) - 1;
  }

  std::string_view s_;
  size_t i_ = 0;
  RuleVars& vars_;
  Pattern& out_;
};

// Children are parsed before their parent, so the root is the last node.
}  // namespace

Pattern Pattern::parse(std::string_view text, RuleVars& vars) {
  Pattern p;
  p.text = std::string(text);
  Parser(text, vars, p).parse();
  return p;
}

// ---- matches -------------------------------------------------------------------

Match::Match(const EGraph& egraph, std::shared_ptr<const RuleVars> vars,
             std::vector<ClassId> classes, std::vector<PayloadId> payloads,
             std::vector<ClassId> roots)
    : egraph_(&egraph),
      vars_(std::move(vars)),
      classes_(std::move(classes)),
      payloads_(std::move(payloads)),
      roots_(std::move(roots)) {}

ClassId Match::cls(std::string_view var) const {
  const int slot = vars_->class_slot(var);
  if (slot < 0 || classes_[static_cast<size_t>(slot)] == kNoId)
    throw Error("rule match: no class variable ?" + std::string(var));
  return classes_[static_cast<size_t>(slot)];
}

const Payload* Match::bound_payload(int slot) const {
  for (auto it = computed_.rbegin(); it != computed_.rend(); ++it)
    if (it->first == slot) return &it->second;
  if (slot >= 0 && payloads_[static_cast<size_t>(slot)] != kNoId)
    return &egraph_->payload(payloads_[static_cast<size_t>(slot)]);
  return nullptr;
}

const Payload& Match::payload(std::string_view var) const {
  const Payload* p = bound_payload(vars_->payload_slot(var));
  if (!p) throw Error("rule match: payload variable @" + std::string(var) + " is not bound");
  return *p;
}

void Match::bind(std::string_view var, Payload value) {
  const int slot = vars_->payload_slot(var);
  if (slot < 0)
    throw Error("rule match: bind: @" + std::string(var) +
                " is not a payload variable of the rule's patterns");
  computed_.emplace_back(slot, std::move(value));
}

// ---- rules -----------------------------------------------------------------------

Rule::Rule(std::string name, std::string_view pattern)
    : Rule(std::move(name), std::vector<std::string>{std::string(pattern)}) {}

Rule::Rule(std::string name, const std::vector<std::string>& patterns)
    : name_(std::move(name)), vars_(std::make_shared<RuleVars>()) {
  if (patterns.empty()) throw Error("rule " + name_ + ": needs at least one pattern");
  try {
    for (const std::string& p : patterns) patterns_.push_back(Pattern::parse(p, *vars_));
  } catch (const Error& e) {
    throw Error("rule " + name_ + ": " + e.what());
  }
}

Rule& Rule::where(Condition condition) {
  conditions_.push_back(std::move(condition));
  return *this;
}

Rule& Rule::to(std::string_view rhs) {
  const size_t lhs_vars = vars_->classes.size();
  try {
    rhs_ = Pattern::parse(rhs, *vars_);
  } catch (const Error& e) {
    throw Error("rule " + name_ + ": right-hand side: " + e.what());
  }
  if (vars_->classes.size() != lhs_vars)
    throw Error("rule " + name_ + ": right-hand side \"" + std::string(rhs) +
                "\" uses class variable ?" + vars_->classes.back() + " that no pattern binds");
  return *this;
}

Rule& Rule::then(Action action) {
  actions_.push_back(std::move(action));
  return *this;
}

Rule& Rule::because(std::string why) {
  why_ = std::move(why);
  return *this;
}

std::string Rule::describe() const {
  std::string s = name_ + ":";
  for (const Pattern& p : patterns_) s += " " + p.text;
  if (rhs_) s += " => " + rhs_->text;
  if (!why_.empty()) s += "  -- " + why_;
  return s;
}

bool Rule::accept(Match& m) const {
  for (const Condition& c : conditions_)
    if (!c(m)) return false;
  return true;
}

ClassId Rule::instantiate(EGraph& egraph, const Pattern& p, int index, const Match& m) const {
  const Pattern::Node& n = p.nodes[static_cast<size_t>(index)];
  if (n.is_var) return m.class_slot(n.var);
  std::vector<ClassId> kids;
  kids.reserve(n.children.size());
  for (int c : n.children) kids.push_back(instantiate(egraph, p, c, m));
  PayloadId pid = EGraph::kNoPayload;
  if (n.payload >= 0) {
    const Payload* value = m.bound_payload(n.payload);
    if (!value)
      throw Error("rule " + name_ + ": payload @" +
                  vars_->payloads[static_cast<size_t>(n.payload)] + " is not bound");
    pid = m.payload_id(n.payload);
    // A payload computed by a condition overrides the pattern's binding.
    if (pid == kNoId || value != &egraph.payload(pid)) pid = egraph.intern(*value);
  }
  return egraph.add(n.op, pid, kids);
}

void Rule::apply(EGraph& egraph, const Match& m) const {
  if (rhs_)
    egraph.merge(m.root(0),
                 instantiate(egraph, *rhs_, static_cast<int>(rhs_->nodes.size()) - 1, m));
  for (const Action& a : actions_) a(egraph, m);
}

Ruleset& Ruleset::add(Rule rule) {
  for (const Rule& r : rules_)
    if (r.name() == rule.name())
      throw Error("ruleset " + name_ + ": a rule named " + rule.name() + " already exists");
  rules_.push_back(std::move(rule));
  return *this;
}

// ---- search -------------------------------------------------------------------------

OpIndex::OpIndex(const EGraph& egraph) {
  by_op_.resize(OpRegistry::global().size());
  all_ = egraph.class_ids();
  for (ClassId c : all_) {
    for (ENodeId n : egraph.nodes(c)) {
      const OpId op = egraph.op(n);
      if (op >= by_op_.size()) by_op_.resize(op + 1);
      auto& list = by_op_[op];
      if (list.empty() || list.back() != c) list.push_back(c);
    }
  }
}

std::span<const ClassId> OpIndex::classes_with(OpId op) const {
  if (op >= by_op_.size()) return {};
  return by_op_[op];
}

namespace {

// Backtracking e-matcher. Bindings are undone on the way back; a
// continuation returning false stops the whole search.
class Searcher {
public:
  Searcher(const EGraph& eg, const OpIndex& index, const Rule& rule, size_t limit,
           const std::function<bool()>& should_stop)
      : eg_(eg), index_(index), rule_(rule), limit_(limit), should_stop_(should_stop) {
    cls_.assign(rule.vars().classes.size(), kNoId);
    pay_.assign(rule.vars().payloads.size(), kNoId);
    roots_.assign(rule.patterns().size(), kNoId);
  }

  SearchResult run() {
    join(0);
    return std::move(result_);
  }

private:
  bool tick() {
    if ((++steps_ & 1023) == 0 && should_stop_ && should_stop_()) {
      result_.stopped = true;
      return false;
    }
    return true;
  }

  bool join(size_t i) {
    if (i == rule_.patterns().size()) return emit();
    const Pattern& p = rule_.patterns()[i];
    const Pattern::Node& root = p.root();
    const int root_index = static_cast<int>(p.nodes.size()) - 1;
    if (root.var >= 0 && cls_[static_cast<size_t>(root.var)] != kNoId)
      return match_root(i, root_index, cls_[static_cast<size_t>(root.var)]);
    std::span<const ClassId> candidates = root.is_var ? index_.all() : index_.classes_with(root.op);
    for (ClassId c : candidates)
      if (!match_root(i, root_index, c)) return false;
    return true;
  }

  bool match_root(size_t i, int root_index, ClassId c) {
    const Pattern& p = rule_.patterns()[i];
    return match(p, root_index, c, [&] {
      roots_[i] = c;
      return join(i + 1);
    });
  }

  bool emit() {
    ++result_.found;
    Match m(eg_, rule_.shared_vars(), cls_, pay_, roots_);
    if (rule_.accept(m)) {
      result_.matches.push_back(std::move(m));
      if (result_.matches.size() >= limit_) {
        result_.capped = true;
        return false;
      }
    }
    return true;
  }

  // Bind slot `slot` of `slots` to `value` (or check an existing binding),
  // run k, undo. Slot -1 binds nothing.
  template <class K>
  static bool with_binding(std::vector<uint32_t>& slots, int slot, uint32_t value, const K& k) {
    if (slot < 0) return k();
    uint32_t& bound = slots[static_cast<size_t>(slot)];
    if (bound != kNoId) return bound == value ? k() : true;
    bound = value;
    const bool go_on = k();
    bound = kNoId;
    return go_on;
  }

  bool match(const Pattern& p, int index, ClassId c, const std::function<bool()>& k) {
    if (!tick()) return false;
    const Pattern::Node& n = p.nodes[static_cast<size_t>(index)];
    if (n.is_var) return with_binding(cls_, n.var, c, k);
    return with_binding(cls_, n.var, c, [&] {
      for (ENodeId e : eg_.nodes(c)) {
        const ENode& node = eg_.node(e);
        if (node.op != n.op || node.num_children != n.children.size()) continue;
        if (!with_binding(pay_, n.payload, node.payload,
                          [&] { return match_children(p, n, e, 0, k); }))
          return false;
      }
      return true;
    });
  }

  bool match_children(const Pattern& p, const Pattern::Node& n, ENodeId e, size_t i,
                      const std::function<bool()>& k) {
    if (i == n.children.size()) return k();
    const ClassId child = eg_.find(eg_.children(e)[i]);
    return match(p, n.children[i], child, [&] { return match_children(p, n, e, i + 1, k); });
  }

  const EGraph& eg_;
  const OpIndex& index_;
  const Rule& rule_;
  size_t limit_;
  const std::function<bool()>& should_stop_;
  std::vector<ClassId> cls_;
  std::vector<PayloadId> pay_;
  std::vector<ClassId> roots_;
  SearchResult result_;
  uint64_t steps_ = 0;
};

}  // namespace

SearchResult search(const EGraph& egraph, const OpIndex& index, const Rule& rule, size_t limit,
                    const std::function<bool()>& should_stop) {
  if (!egraph.clean()) throw Error("rule search: call rebuild() on the e-graph first");
  return Searcher(egraph, index, rule, limit, should_stop).run();
}

SearchResult find_matches(const EGraph& egraph, const Rule& rule, size_t limit) {
  return search(egraph, OpIndex(egraph), rule, limit);
}

}  // namespace luminal::egraph
