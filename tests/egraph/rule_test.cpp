// The rule language, e-matching with joins and conditions, schedules,
// budgets, the rule registry and the environment switches.
#include "luminal/egraph/rule.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"
#include "luminal/error.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

ClassId input(EGraph& eg, const std::string& name, Shape shape = {4}, DType d = DType::F32) {
  return eg.add(OpKind::Input, input_payload(name, d, shape, false), {});
}

size_t count(const EGraph& eg, const Rule& r) {
  return find_matches(eg, r).matches.size();
}

// a0 + (a1 + (a2 + ...)) over n i32 inputs.
ClassId long_sum(EGraph& eg, int n) {
  ClassId acc = input(eg, "a" + std::to_string(n - 1), {4}, DType::I32);
  for (int i = n - 2; i >= 0; --i)
    acc =
        eg.add(OpKind::Add, Payload(), {input(eg, "a" + std::to_string(i), {4}, DType::I32), acc});
  return acc;
}

RuleRegistry ac_registry() {
  RuleRegistry reg;
  Ruleset ac("ac");
  // Exact for wrapping integers (the test graph is i32); this pair of rules
  // generates every bracketing and order of a sum: exponential without a budget.
  ac.add(Rule("assoc", "(Add ?a (Add ?b ?c))").to("(Add (Add ?a ?b) ?c)"));
  ac.add(Rule("assoc-back", "(Add (Add ?a ?b) ?c)").to("(Add ?a (Add ?b ?c))"));
  ac.add(Rule("comm", "(Add ?a ?b)").to("(Add ?b ?a)"));
  reg.add_ruleset(ac);
  return reg;
}

}  // namespace

TEST(RulePattern, ParsesAndReportsErrors) {
  RuleVars vars;
  const Pattern p = Pattern::parse("(Mul ?a (View@v ?b))", vars);
  ASSERT_EQ(p.nodes.size(), 4u);
  EXPECT_EQ(p.root().op, op_id(OpKind::Mul));
  EXPECT_EQ(vars.classes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(vars.payloads, (std::vector<std::string>{"v"}));
  EXPECT_THROW(Pattern::parse("(NoSuchOp ?a)", vars), Error);
  EXPECT_THROW(Pattern::parse("(Mul ?a ?b", vars), Error);
  EXPECT_THROW(Pattern::parse("(Mul ?a)", vars), Error);  // Mul takes 2 children
  EXPECT_THROW(Pattern::parse("(Mul ?a ?b) extra", vars), Error);
  EXPECT_THROW(Pattern::parse("?", vars), Error);
  // The right-hand side may only use variables the patterns bind.
  EXPECT_THROW(Rule("r", "(Exp2 ?x)").to("(Exp2 ?y)"), Error);
  try {
    Pattern::parse("(Mul ?a (Frobnicate ?b))", vars);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op \"Frobnicate\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("position"), std::string::npos);
  }
}

TEST(RuleMatch, NonLinearPatternsAndPayloadCaptures) {
  EGraph eg;
  const ClassId x = input(eg, "x"), y = input(eg, "y");
  eg.add(OpKind::Add, Payload(), {x, x});
  eg.add(OpKind::Add, Payload(), {x, y});
  EXPECT_EQ(count(eg, Rule("any", "(Add ?a ?b)")), 2u);
  EXPECT_EQ(count(eg, Rule("same", "(Add ?a ?a)")), 1u);
  const View rev = View::contiguous({4}).flip(0);
  const ClassId vx = eg.add(kViewOp, Payload(rev), {x});
  const ClassId vy = eg.add(kViewOp, Payload(rev), {y});
  const ClassId vy2 =
      eg.add(kViewOp, Payload(View::contiguous({4}).slice(0, 0, 2).repeat(0, 2)), {y});
  eg.add(OpKind::Mul, Payload(), {vx, vy});
  eg.add(OpKind::Mul, Payload(), {vx, vy2});
  // A payload variable used twice joins on payload equality.
  const Rule same_view("same-view", "(Mul (View@v ?a) (View@v ?b))");
  auto r = find_matches(eg, same_view);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].cls("a"), x);
  EXPECT_EQ(r.matches[0].cls("b"), y);
  EXPECT_EQ(r.matches[0].get<View>("v"), rev);
  EXPECT_EQ(count(eg, Rule("any-views", "(Mul (View@v ?a) (View@w ?b))")), 2u);
  EXPECT_EQ(count(eg, Rule("wildcard", "(Mul (View@_ ?a) (View@_ ?b))")), 2u);
  // ?m=( ... ) binds an inner class.
  auto inner = find_matches(eg, Rule("bind", "(Mul ?l=(View@v ?a) ?r)"));
  ASSERT_EQ(inner.matches.size(), 2u);
  EXPECT_EQ(inner.matches[0].cls("l"), vx);
}

TEST(RuleMatch, MatchesThroughEveryNodeOfAClass) {
  EGraph eg;
  const ClassId x = input(eg, "x"), y = input(eg, "y");
  const ClassId ex = eg.add(OpKind::Exp2, Payload(), {x});
  const ClassId sy = eg.add(OpKind::Sin, Payload(), {y});
  const ClassId m = eg.add(OpKind::Mul, Payload(), {ex, y});
  EXPECT_EQ(count(eg, Rule("r", "(Mul (Sin ?a) ?b)")), 0u);
  eg.merge(ex, sy);  // now the Mul's first operand is also Sin(y)
  eg.rebuild();
  auto r = find_matches(eg, Rule("r", "(Mul (Sin ?a) ?b)"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].root(), eg.find(m));
  EXPECT_EQ(r.matches[0].cls("a"), y);
  EXPECT_EQ(count(eg, Rule("r2", "(Mul (Exp2 ?a) ?b)")), 1u);
}

TEST(RuleMatch, MultiPatternsJoinOnSharedVariables) {
  EGraph eg;
  const ClassId x = input(eg, "x"), y = input(eg, "y"), z = input(eg, "z");
  eg.add(OpKind::Exp2, Payload(), {x});
  eg.add(OpKind::Exp2, Payload(), {y});
  eg.add(OpKind::Sin, Payload(), {y});
  eg.add(OpKind::Sin, Payload(), {z});
  // Only y has both an Exp2 and a Sin parent.
  auto r = find_matches(eg, Rule("both", std::vector<std::string>{"(Exp2 ?t)", "(Sin ?t)"}));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].cls("t"), y);
  EXPECT_EQ(r.matches[0].root(1), eg.find(eg.add(OpKind::Sin, Payload(), {y})));
  // A second pattern rooted at a bound variable is matched in place.
  auto r2 = find_matches(eg, Rule("at", std::vector<std::string>{"?e=(Exp2 ?t)", "?e"}));
  EXPECT_EQ(r2.matches.size(), 2u);
  // Without a shared variable the join is a cross product (2 x 2).
  EXPECT_EQ(count(eg, Rule("cross", std::vector<std::string>{"(Exp2 ?a)", "(Sin ?b)"})), 4u);
}

TEST(RuleMatch, ConditionsFilterAndBindPayloads) {
  EGraph eg;
  const ClassId x = input(eg, "x", {2, 3});
  const ClassId i = input(eg, "i", {2, 3}, DType::I32);
  eg.add(OpKind::Cast, Payload(DType::F32), {x});
  eg.add(OpKind::Cast, Payload(DType::F32), {i});
  Rule only_float("only-float", "(Cast@d ?a)");
  only_float.where([](Match& m) { return is_float(m.info("a").dtype); });
  auto r = find_matches(eg, only_float);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.found, 2u);
  EXPECT_EQ(r.matches[0].cls("a"), x);
  // A condition may compute a payload the right-hand side uses.
  Rule identity("identity", "(Cast@d ?a)");
  identity.where([](Match& m) {
    m.bind("t", Payload(View::contiguous(m.info("a").shape)));
    return is_float(m.info("a").dtype);
  });
  identity.to("(View@t (Cast@d ?a))");
  RuleRegistry reg;
  Ruleset rs("t");
  rs.add(identity);
  reg.add_ruleset(rs);
  const ClassId cast_x = eg.add(OpKind::Cast, Payload(DType::F32), {x});
  const PayloadId id_view = eg.intern(Payload(View::contiguous({2, 3})));
  EXPECT_FALSE(eg.lookup(kViewOp, id_view, std::vector<ClassId>{cast_x}).has_value());
  run_schedule(eg, Schedule::run({"t"}), reg);
  const auto v = eg.lookup(kViewOp, id_view, std::vector<ClassId>{cast_x});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(eg.same(*v, cast_x));
  // Binding a name the rule does not know is an error.
  Rule bad("bad", "(Cast@d ?a)");
  bad.where([](Match& m) {
    m.bind("nope", Payload());
    return true;
  });
  EXPECT_THROW(find_matches(eg, bad), Error);
}

TEST(RuleMatch, SearchOrderIsDeterministic) {
  auto run = [] {
    EGraph eg;
    ClassId acc = long_sum(eg, 6);
    (void)acc;
    RuleRegistry reg = ac_registry();
    run_schedule(eg, Schedule::run({"ac"}, 3), reg);
    return eg.to_text();
  };
  EXPECT_EQ(run(), run());
}

TEST(Schedule, RunSaturateSeqRepeat) {
  RuleRegistry reg;
  Ruleset comm("comm");
  comm.add(Rule("mul-comm", "(Mul ?a ?b)").to("(Mul ?b ?a)"));
  reg.add_ruleset(comm);
  EGraph eg;
  const ClassId x = input(eg, "x"), y = input(eg, "y");
  eg.add(OpKind::Mul, Payload(), {x, y});
  // One iteration adds y*x; the second finds nothing new: saturated.
  SaturationReport r = run_schedule(eg, Schedule::saturate(Schedule::run({"comm"})), reg);
  EXPECT_EQ(r.reason, StopReason::Saturated);
  EXPECT_EQ(r.iterations, 2u);
  EXPECT_EQ(r.nodes, 4u);
  ASSERT_EQ(r.phases.size(), 1u);
  ASSERT_EQ(r.phases[0].rules.size(), 1u);
  EXPECT_EQ(r.phases[0].rules[0].rule, "mul-comm");
  EXPECT_EQ(r.phases[0].rules[0].changed, 1u);

  // run N stops early once nothing changes; repeat and seq compose.
  EGraph eg2;
  long_sum(eg2, 7);
  RuleRegistry ac = ac_registry();
  r = run_schedule(eg2, Schedule::run({"ac"}, 2), ac);
  EXPECT_EQ(r.iterations, 2u);
  EXPECT_EQ(r.reason, StopReason::Completed);
  r = run_schedule(
      eg2, Schedule::seq({Schedule::repeat(2, Schedule::run({"ac"})), Schedule::run({"ac"}, 1)}),
      ac);
  EXPECT_EQ(r.iterations, 3u);
  EXPECT_EQ(
      Schedule::seq({Schedule::repeat(2, Schedule::run({"ac"})), Schedule::phase("p")}).to_string(),
      "seq(repeat(2, run(ac)), phase(p))");
}

TEST(Schedule, BudgetStopsABlowUpAtTheNodeLimit) {
  // Associativity + commutativity over a 12-term sum: the e-graph of every
  // bracketing and order has millions of nodes; the node budget stops it.
  EGraph eg;
  const ClassId sum = long_sum(eg, 12);
  RuleRegistry reg = ac_registry();
  Budget budget;
  budget.max_nodes = 5000;
  const SaturationReport r =
      run_schedule(eg, Schedule::saturate(Schedule::run({"ac"})), reg, budget);
  EXPECT_EQ(r.reason, StopReason::NodeLimit) << r.to_string();
  EXPECT_TRUE(r.budget_hit());
  EXPECT_GE(r.nodes, 5000u);
  EXPECT_LT(r.nodes, 5200u);  // stopped between applications, not after the iteration
  EXPECT_NE(r.to_string().find("stopped by node limit"), std::string::npos);
  // The e-graph stays consistent and usable: extract a candidate and run it.
  EXPECT_TRUE(eg.clean());
  CandidateSpace space(eg, {sum});
  std::mt19937_64 rng(3);
  EXPECT_TRUE(space.is_valid(space.random(rng)));
}

TEST(Schedule, IterationTimeMemoryBudgetsAndTheMatchCap) {
  RuleRegistry reg = ac_registry();
  const Schedule sat = Schedule::saturate(Schedule::run({"ac"}));
  {
    EGraph eg;
    long_sum(eg, 10);
    Budget b;
    b.max_iterations = 3;
    const SaturationReport r = run_schedule(eg, sat, reg, b);
    EXPECT_EQ(r.reason, StopReason::IterationLimit);
    EXPECT_EQ(r.iterations, 3u);
  }
  {
    EGraph eg;
    long_sum(eg, 10);
    Budget b;
    b.max_seconds = 0;
    const SaturationReport r = run_schedule(eg, sat, reg, b);
    EXPECT_EQ(r.reason, StopReason::TimeLimit);
    EXPECT_EQ(r.iterations, 0u);
  }
  {
    EGraph eg;
    long_sum(eg, 10);
    Budget b;
    b.max_memory_bytes = 256 * 1024;
    const SaturationReport r = run_schedule(eg, sat, reg, b);
    EXPECT_EQ(r.reason, StopReason::MemoryLimit);
    EXPECT_GE(r.memory_bytes, b.max_memory_bytes);
  }
  {
    EGraph eg;
    long_sum(eg, 10);
    Budget b;
    b.max_iterations = 4;
    b.max_matches_per_rule = 10;
    const SaturationReport r = run_schedule(eg, sat, reg, b);
    const auto totals = r.rule_totals();
    bool capped = false;
    for (const RuleStats& s : totals) {
      EXPECT_LE(s.matches, 10u * r.iterations) << s.rule;
      capped = capped || s.capped > 0;
    }
    EXPECT_TRUE(capped);
    EXPECT_NE(r.to_string().find("capped"), std::string::npos);
  }
}

TEST(Schedule, RuleErrorsNameTheRule) {
  RuleRegistry reg;
  Ruleset bad("bad");
  // Equates a [4] tensor with its [] sum: a shape error the e-graph catches.
  bad.add(Rule("sum-is-x", "(SumReduce@a ?x)").to("?x"));
  reg.add_ruleset(bad);
  EGraph eg;
  eg.add(OpKind::SumReduce, Payload(int64_t{0}), {input(eg, "x")});
  try {
    run_schedule(eg, Schedule::run({"bad"}), reg);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad/sum-is-x"), std::string::npos) << e.what();
  }
}

TEST(RuleRegistry, PhasesAndBackendExtensions) {
  RuleRegistry& global = RuleRegistry::global();
  EXPECT_TRUE(global.has_ruleset("algebra"));
  EXPECT_TRUE(global.has_ruleset("views"));
  EXPECT_TRUE(global.has_ruleset("matmul"));
  EXPECT_EQ(global.phases(), (std::vector<std::string>{"simplify", "library", "lower", "fuse"}));

  // A "backend" extends a copy: its ruleset runs in two phases, and a new
  // phase is inserted after "library" without the core naming either.
  RuleRegistry reg(global);
  Ruleset backend("test-backend");
  backend.add(Rule("exp2-count", "(Exp2 ?x)"));
  reg.add_ruleset(backend);
  reg.add_phase("test-phase", "library");
  reg.add_to_phase("test-phase", "test-backend");
  reg.add_to_phase("fuse", "test-backend");
  reg.add_to_phase("fuse", "test-backend");  // listed once
  EXPECT_EQ(reg.phases(),
            (std::vector<std::string>{"simplify", "library", "test-phase", "lower", "fuse"}));
  EXPECT_EQ(reg.phase_rulesets("fuse"), (std::vector<std::string>{"test-backend"}));
  EXPECT_FALSE(global.has_ruleset("test-backend"));
  EXPECT_THROW(reg.add_ruleset(Ruleset("test-backend")), Error);
  EXPECT_THROW(reg.ruleset("nope"), LookupError);
  EXPECT_THROW(reg.add_to_phase("nope", "views"), LookupError);

  EGraph eg;
  eg.add(OpKind::Exp2, Payload(), {input(eg, "x")});
  const SaturationReport r = run_schedule(eg, reg.pipeline(), reg);
  size_t phases_with_backend = 0;
  for (const PhaseReport& p : r.phases)
    for (const RuleStats& s : p.rules)
      if (s.ruleset == "test-backend" && s.matches > 0) ++phases_with_backend;
  EXPECT_EQ(phases_with_backend, 2u);
  EXPECT_EQ(r.phases.size(), 5u);
}

TEST(Diagnostics, LogAndDumpFromTheEnvironment) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("luminal-egraph-dump-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("LUMINAL_LOG_EGRAPH", "1", 1);
  ::setenv("LUMINAL_DUMP_DIR", dir.c_str(), 1);
  Graph g;
  const Tensor x = g.input("x", {2, 3});
  g.output("y", (x.transpose(0, 1) * 2.0).exp2());
  EGraph eg;
  testing::internal::CaptureStderr();
  import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  const std::string log = testing::internal::GetCapturedStderr();
  ::unsetenv("LUMINAL_LOG_EGRAPH");
  ::unsetenv("LUMINAL_DUMP_DIR");
  EXPECT_NE(log.find("phase simplify"), std::string::npos) << log;
  EXPECT_NE(log.find("algebra/mul-comm"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped by saturated"), std::string::npos) << log;
  std::vector<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    names.push_back(f.path().filename());
  std::sort(names.begin(), names.end());
  auto has = [&](const std::string& suffix) {
    for (const std::string& n : names)
      if (n.size() >= suffix.size() &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    return false;
  };
  EXPECT_TRUE(has("-hlir.dot"));
  EXPECT_TRUE(has("-egraph-import.dot"));
  EXPECT_TRUE(has("-egraph-simplify.dot"));
  EXPECT_TRUE(has("-egraph-library.dot"));
  for (const std::string& n : names) {
    std::ifstream in(dir / n);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("digraph", 0), 0u) << n;
  }
  std::filesystem::remove_all(dir);
  // Without the variables, nothing is written and nothing is logged.
  testing::internal::CaptureStderr();
  EGraph quiet;
  import_graph(quiet, g);
  run_schedule(quiet, RuleRegistry::global().pipeline(), RuleRegistry::global());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(std::filesystem::exists(dir));
}
