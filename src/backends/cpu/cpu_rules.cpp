#include "luminal/backends/cpu/cpu_rules.hpp"

#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/egraph/matmul.hpp"
#include "luminal/egraph/op_registry.hpp"
#include "luminal/egraph/rule_registry.hpp"

namespace luminal::cpu {

namespace {

// A matrix-product kernel op: same payload, inference and lowering as the
// core MatMul, recorded as a kernel group by extraction.
egraph::OpId matmul_kernel_op(const char* name) {
  egraph::OpInfo info = egraph::matmul_op_info();
  info.name = name;
  info.kernel_group = true;
  return egraph::OpRegistry::global().get_or_add(std::move(info));
}

}  // namespace

CpuOps cpu_ops() {
  static const CpuOps ops{matmul_kernel_op("CpuMatMul"), matmul_kernel_op("CpuSgemm")};
  return ops;
}

void add_cpu_rules(egraph::RuleRegistry& registry) {
  const CpuOps ops = cpu_ops();
  egraph::Ruleset rs("cpu-matmul");
  // One generated kernel computing each output element's dot product in
  // registers: the Mul is never materialised (it is as large as the weights
  // times the rows). Any dtype.
  rs.add(egraph::Rule("cpu-matmul-loops", "(MatMul@spec ?a ?b)")
             .then([id = ops.matmul](egraph::EGraph& eg, const egraph::Match& m) {
               const egraph::ClassId kids[2] = {m.cls("a"), m.cls("b")};
               eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
             })
             .because("CpuMatMul is the MatMul op itself (same payload and lowering), "
                      "computed by one kernel"));
  // BLAS sgemm for f32 products whose operands are row- or column-major.
  if (Blas::get() != nullptr)
    rs.add(egraph::Rule("cpu-matmul-blas", "(MatMul@spec ?a ?b)")
               .where([](egraph::Match& m) {
                 if (m.info("a").dtype != DType::F32) return false;
                 const auto spec = egraph::MatMulSpec::from_payload(m.payload("spec"));
                 return spec.a_layout() != egraph::MatLayout::Strided &&
                        spec.b_layout() != egraph::MatLayout::Strided;
               })
               .then([id = ops.sgemm](egraph::EGraph& eg, const egraph::Match& m) {
                 const egraph::ClassId kids[2] = {m.cls("a"), m.cls("b")};
                 eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
               })
               .because("CpuSgemm is the MatMul op itself; BLAS sums in another order, "
                        "within the search's tolerance"));
  registry.add_ruleset(std::move(rs));
  registry.add_to_phase("lower", "cpu-matmul");
}

}  // namespace luminal::cpu
