#pragma once
// The core's rulesets. Every rule is EXACT: for every input of every dtype
// (NaN, infinities, -0.0, integer wrap-around included) both sides give the
// same values under the reference interpreter's semantics, so every candidate
// extracted from a saturated e-graph is bit-identical to the original graph
// on the interpreter. Each rule states its exactness argument in `because()`
// (core_rules.cpp); rules that are only approximately true (float
// associativity, recip(recip(x)) = x, x + 0.0 = x, x * 0 = 0 for floats) are
// deliberately absent.
//
//   algebra  commutativity of Add/Mul; x*1 = x; x + (-0.0) = x (floats; 0 for
//            ints); x*0 = 0 (ints, bool); (x*c1)*c2 = x when c1*c2 = 1 exactly
//            (double negation); Cast to the same dtype; lossless Cast round
//            trips; constant folding of uniform classes into a Constant
//            (broadcast through a View when not a scalar).
//   views    identity views vanish; View∘View composes (view_algebra.hpp);
//            views move through element-wise ops and Gather indexes, and are
//            pulled out of element-wise ops when both operands share a view
//            and the op cannot trap (not integer Mod).
//   matmul   SumReduce of a broadcast Mul -> MatMul (matmul.hpp).

#include "luminal/egraph/rule.hpp"

namespace luminal::egraph {

class RuleRegistry;

Ruleset algebra_rules();
Ruleset view_rules();
Ruleset matmul_rules();

/// Add the core rulesets and phases (simplify, library, lower, fuse) to `registry`.
void add_core_rules(RuleRegistry& registry);

}  // namespace luminal::egraph
