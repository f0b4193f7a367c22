// The core rulesets (see core_rules.hpp). Each rule's because() states why it
// is exact for every input and dtype under the reference semantics.

#include "luminal/egraph/core_rules.hpp"

#include "luminal/egraph/matmul.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/view_algebra.hpp"

namespace luminal::egraph {

namespace {

// Condition: the class bound to `var` holds one constant satisfying `pred`.
template <class Pred>
Condition uniform_is(const char* var, Pred pred) {
  return [var, pred](Match& m) {
    const auto& u = m.uniform(var);
    return u && pred(*u);
  };
}

Condition distinct(const char* a, const char* b) {
  return [a, b](Match& m) { return m.cls(a) != m.cls(b); };
}

bool plus_minus_one(const Scalar& s) {
  return s.equals(1.0) || s.equals(-1.0);
}

// A class already holds its constant: a Constant node, or a broadcast View of one.
bool holds_constant(const EGraph& eg, ClassId c) {
  for (ENodeId n : eg.nodes(c)) {
    if (eg.op(n) == op_id(OpKind::Constant)) return true;
    if (eg.op(n) == kViewOp && eg.has_op(eg.children(n)[0], op_id(OpKind::Constant))) return true;
  }
  return false;
}

const OpKind kUnary[] = {OpKind::Exp2, OpKind::Log2, OpKind::Sin, OpKind::Sqrt, OpKind::Recip};
const OpKind kBinary[] = {OpKind::Add, OpKind::Mul, OpKind::Mod, OpKind::LessThan};

std::string name_of(OpKind k) {
  return std::string(op_name(k));
}

}  // namespace

Ruleset algebra_rules() {
  Ruleset rs("algebra");
  rs.add(Rule("add-comm", "(Add ?a ?b)")
             .where(distinct("a", "b"))
             .to("(Add ?b ?a)")
             .because("IEEE addition is commutative for all inputs incl. NaN and signed zeros; "
                      "wrapping integer addition and bool or are commutative"));
  rs.add(Rule("mul-comm", "(Mul ?a ?b)")
             .where(distinct("a", "b"))
             .to("(Mul ?b ?a)")
             .because("IEEE multiplication is commutative for all inputs; so are wrapping "
                      "integer multiplication and bool and"));
  rs.add(Rule("mul-one", "(Mul ?x ?c)")
             .where(uniform_is("c", [](const Scalar& s) { return s.is_mul_identity(); }))
             .to("?x")
             .because("x * 1 == x exactly for every float (NaN, inf, -0.0 included) and int; "
                      "x and true == x"));
  rs.add(Rule("add-identity", "(Add ?x ?c)")
             .where(uniform_is("c", [](const Scalar& s) { return s.is_add_identity(); }))
             .to("?x")
             .because("x + (-0.0) == x for every float (+0 + -0 = +0, -0 + -0 = -0, NaN stays "
                      "NaN) — unlike x + 0.0, which turns -0.0 into +0.0; x + 0 == x for ints; "
                      "x or false == x"));
  rs.add(Rule("mul-int-zero", "(Mul ?x ?c)")
             .where(uniform_is("c", [](const Scalar& s) { return s.is_int_zero(); }))
             .to("?c")
             .because("x * 0 == 0 for wrapping integers and x and false == false; not for floats "
                      "(NaN * 0 = NaN, -1 * 0 = -0.0)"));
  rs.add(Rule("mul-cancel", "(Mul (Mul ?x ?c1) ?c2)")
             .where([](Match& m) {
               const auto &a = m.uniform("c1"), &b = m.uniform("c2");
               if (!a || !b) return false;
               if (a->is_float())
                 return plus_minus_one(*a) && plus_minus_one(*b) && a->equals(b->value);
               auto p = fold_binary(OpKind::Mul, *a, *b);
               return p && p->is_mul_identity();
             })
             .to("?x")
             .because("floats: multiplying by +-1 only flips the sign bit, so two equal factors "
                      "+-1 cancel exactly (double negation); ints: wrapping multiplication is "
                      "associative (arithmetic mod 2^n), so (x*c1)*c2 = x*(c1*c2) = x"));
  rs.add(Rule("cast-same", "(Cast@d ?x)")
             .where([](Match& m) { return m.info("x").dtype == m.get<DType>("d"); })
             .to("?x")
             .because("casting to the dtype a value already has returns it unchanged"));
  rs.add(Rule("cast-roundtrip", "(Cast@outer (Cast@inner ?x))")
             .where([](Match& m) {
               const DType d = m.info("x").dtype;
               return d == m.get<DType>("outer") && cast_is_lossless(d, m.get<DType>("inner"));
             })
             .to("?x")
             .because("the inner dtype represents every value of x's dtype exactly (NaN, inf, "
                      "-0.0 included), so converting back returns x"));
  rs.add(Rule("fold-constant", "?x")
             .where([](Match& m) {
               return m.uniform("x").has_value() && !holds_constant(m.egraph(), m.cls("x"));
             })
             .then([](EGraph& eg, const Match& m) {
               const ClassId x = m.cls("x");
               const Scalar value = *eg.uniform(x);
               const Shape shape = eg.info(x).shape;
               ClassId c = eg.add(OpKind::Constant, Payload(value), {});
               if (!shape.empty())
                 c = eg.add(kViewOp, Payload(View::from_axes(shape, Shape(shape.size(), Expr(0)))),
                            {c});
               eg.merge(x, c);
             })
             .because("the class' value was computed by folding with the interpreter's own "
                      "arithmetic (double, rounded once to the dtype; ints wrap); integer Mod by "
                      "zero, which is an error, is never folded"));
  return rs;
}

Ruleset view_rules() {
  Ruleset rs("views");
  rs.add(Rule("view-identity", "(View@v ?x)")
             .where([](Match& m) { return is_identity_view(m.get<View>("v"), m.info("x").shape); })
             .to("?x")
             .because("the dense row-major view of x's own shape reads x unchanged"));
  rs.add(Rule("view-compose", "(View@outer (View@inner ?x))")
             .where([](Match& m) {
               auto v = compose_views(m.get<View>("outer"), m.get<View>("inner"));
               if (v) m.bind("both", Payload(*v));
               return v.has_value();
             })
             .to("(View@both ?x)")
             .because("compose_views proves that the composed view reads the same element of x "
                      "for every index"));
  // Element-wise ops commute with reading through a view: element j of either
  // side is op(x_dense[v(j)]). Pushing a view inward only computes elements the
  // original reads; pulling it out computes op on all of x, which is safe only
  // for ops that cannot trap (integer Mod by zero and out-of-range Gather can).
  const std::string push_why =
      "an element-wise op reads and writes element by element, so reading its result through v "
      "equals applying it to its operands read through v";
  // Only views that read each element at most once are pushed inward: pushing a
  // broadcast would recompute the op per copy and, along a residual stream,
  // copy whole chains (quadratic growth in depth); broadcasts are pulled out.
  const Condition one_to_one = [](Match& m) { return reads_each_once(m.get<View>("v")); };
  for (OpKind k : kUnary) {
    const std::string op = name_of(k);
    rs.add(Rule("view-push-" + op, "(View@v (" + op + " ?x))")
               .where(one_to_one)
               .to("(" + op + " (View@v ?x))")
               .because(push_why));
    rs.add(Rule("view-pull-" + op, "(" + op + " (View@v ?x))")
               .to("(View@v (" + op + " ?x))")
               .because(push_why + "; float unary ops never trap"));
  }
  rs.add(Rule("view-push-Cast", "(View@v (Cast@d ?x))")
             .where(one_to_one)
             .to("(Cast@d (View@v ?x))")
             .because(push_why));
  rs.add(Rule("view-pull-Cast", "(Cast@d (View@v ?x))")
             .to("(View@v (Cast@d ?x))")
             .because(push_why + "; Cast never traps"));
  for (OpKind k : kBinary) {
    const std::string op = name_of(k);
    rs.add(Rule("view-push-" + op, "(View@v (" + op + " ?a ?b))")
               .where(one_to_one)
               .to("(" + op + " (View@v ?a) (View@v ?b))")
               .because(push_why));
    rs.add(Rule("view-pull-" + op, "(" + op + " (View@v ?a) (View@v ?b))")
               .where([k](Match& m) {
                 const TensorInfo& a = m.info("a");
                 if (k == OpKind::Mod && !is_float(a.dtype)) return false;
                 return same_shape(a.shape, m.info("b").shape);
               })
               .to("(View@v (" + op + " ?a ?b))")
               .because(push_why + "; the op cannot trap (integer Mod is excluded)"));
  }
  rs.add(Rule("view-push-Gather", "(View@v (Gather ?i ?d))")
             .where(one_to_one)
             .to("(Gather (View@v ?i) ?d)")
             .because("Gather is element-wise in its index operand: out[j] = data[i[j]]"));
  return rs;
}

Ruleset matmul_rules() {
  Ruleset rs("matmul");
  // A broadcast read of a non-affine layout (an operand that was permuted then
  // reshaped) is a broadcast of the compact tensor it reads, so the product can
  // be recognised on that tensor (which a backend may then materialise densely).
  rs.add(Rule("view-factor-broadcast", "(View@v ?x)")
             .where([](Match& m) {
               const View& v = m.get<View>("v");
               bool broadcast = false, irregular = false;
               Shape shape, exprs;
               for (size_t i = 0; i < v.rank(); ++i) {
                 const bool one = v.shape()[i].as_const() == 1;
                 if (!one && is_broadcast_axis(v, i)) {
                   broadcast = true;
                   continue;
                 }
                 irregular = irregular || !affine_axis(v, i);
                 shape.push_back(v.shape()[i]);
                 exprs.push_back(v.axis_exprs()[i]);
               }
               if (!broadcast || !irregular) return false;
               // outer: the compact tensor's row-major strides, 0 on broadcast axes.
               const std::vector<Expr> strides = row_major_strides(shape);
               Shape outer;
               size_t j = 0;
               for (size_t i = 0; i < v.rank(); ++i) {
                 const bool one = v.shape()[i].as_const() == 1;
                 if (!one && is_broadcast_axis(v, i))
                   outer.push_back(Expr(0));
                 else
                   outer.push_back((Expr::index_var() * strides[j++]).simplify());
               }
               m.bind("compact", Payload(View::from_axes(shape, exprs)));
               m.bind("bcast", Payload(View::from_axes(v.shape(), outer)));
               return true;
             })
             .to("(View@bcast (View@compact ?x))")
             .because("reading x through the compact view (v without its broadcast axes) and "
                      "then broadcasting reads, for every index, the element v reads"));
  rs.add(Rule("matmul-recognize", "(SumReduce@axis ?mul=(Mul ?x ?y))")
             .where([](Match& m) { return m.info("mul").shape.size() >= 2; })
             .then([](EGraph& eg, const Match& m) {
               // Every way each operand is read: its View nodes, or itself densely.
               auto options = [&](ClassId c) {
                 std::vector<std::pair<View, ClassId>> out;
                 for (ENodeId n : eg.nodes(c))
                   if (eg.op(n) == kViewOp && out.size() < 4)
                     out.emplace_back(eg.node_payload(n).as<View>(), eg.find(eg.children(n)[0]));
                 // Read densely only when not a view: a View operand's broadcast
                 // axes are what makes it a matrix product.
                 if (out.empty()) out.emplace_back(View::contiguous(eg.info(c).shape), eg.find(c));
                 return out;
               };
               const Shape shape = eg.info(m.cls("mul")).shape;
               const auto axis = static_cast<size_t>(m.get<int64_t>("axis"));
               for (const auto& [va, a] : options(m.cls("x"))) {
                 for (const auto& [vb, b] : options(m.cls("y"))) {
                   auto mm = recognize_matmul(shape, axis, va, vb);
                   if (!mm) continue;
                   const ClassId kids[2] = {mm->swapped ? b : a, mm->swapped ? a : b};
                   eg.merge(m.root(), eg.add(kMatMulOp, mm->spec.to_payload(), kids));
                 }
               }
             })
             .because("MatMul's semantics are defined as the same products summed in the same "
                      "order (lower_matmul rebuilds exactly this HLIR)"));
  return rs;
}

void add_core_rules(RuleRegistry& registry) {
  registry.add_ruleset(algebra_rules());
  registry.add_ruleset(view_rules());
  registry.add_ruleset(matmul_rules());
  registry.add_phase("simplify");
  registry.add_to_phase("simplify", "algebra");
  registry.add_to_phase("simplify", "views");
  registry.add_phase("library");
  registry.add_to_phase("library", "views");
  registry.add_to_phase("library", "matmul");
  registry.add_phase("lower");
  registry.add_phase("fuse");
}

}  // namespace luminal::egraph
