#include "luminal/backends/cpu/cpu_rules.hpp"

#include "luminal/backends/cpu/fusion.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/egraph/matmul.hpp"
#include "luminal/egraph/op_registry.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/error.hpp"

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

// CpuQMatMul(spec)(a, q): MatMul(spec)(a, Cast(q, a's dtype)) with q
// block-quantized; children (a, q) so that the dequantization is a member.
egraph::OpId qmatmul_op() {
  egraph::OpInfo info;
  info.name = "CpuQMatMul";
  info.arity = 2;
  info.kernel_group = true;
  info.payload_doc = "MatMulSpec (matmul.hpp) of a @ dequantize(q)";
  info.infer = [](const egraph::Payload& p, std::span<const egraph::TensorInfo* const> c) {
    if (!is_quantized(c[1]->dtype))
      throw Error("CpuQMatMul: the weight " + c[1]->to_string() + " is not block-quantized");
    return egraph::TensorInfo{c[0]->dtype, egraph::MatMulSpec::from_payload(p).out_shape};
  };
  info.lower = [](Graph& g, const egraph::Payload& p, std::span<const Tensor> c,
                  const egraph::TensorInfo& result) {
    return egraph::lower_matmul(g, egraph::MatMulSpec::from_payload(p), c[0],
                                g.cast(c[1], result.dtype));
  };
  return egraph::OpRegistry::global().get_or_add(std::move(info));
}

// CpuGatherDequant(dtype)(indexes, q) = Gather(indexes, Cast(q, dtype)): one
// generated kernel that decodes only the gathered elements (an embedding
// lookup in a quantized table never dequantizes the table).
egraph::OpId gather_dequant_op() {
  egraph::OpInfo info;
  info.name = "CpuGatherDequant";
  info.arity = 2;
  info.kernel_group = true;
  info.payload_doc = "dtype of the result";
  info.infer = [](const egraph::Payload& p, std::span<const egraph::TensorInfo* const> c) {
    return egraph::TensorInfo{p.as<DType>(), c[0]->shape};
  };
  info.lower = [](Graph& g, const egraph::Payload& p, std::span<const Tensor> c,
                  const egraph::TensorInfo&) {
    return g.gather(c[0], g.cast(c[1], p.as<DType>()));
  };
  return egraph::OpRegistry::global().get_or_add(std::move(info));
}

}  // namespace

CpuOps cpu_ops() {
  static const CpuOps ops{matmul_kernel_op("CpuMatMul"), matmul_kernel_op("CpuSgemm"), qmatmul_op(),
                          gather_dequant_op()};
  return ops;
}

void add_cpu_rules(egraph::RuleRegistry& registry) {
  const CpuOps ops = cpu_ops();
  egraph::Ruleset rs("cpu-kernels");
  auto same_children = [](egraph::OpId id) {
    return [id](egraph::EGraph& eg, const egraph::Match& m) {
      const egraph::ClassId kids[2] = {m.cls("a"), m.cls("b")};
      eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
    };
  };
  // One generated kernel computing each output element's dot product in
  // registers: the Mul is never materialised (it is as large as the weights
  // times the rows). Any dtype.
  rs.add(egraph::Rule("cpu-matmul-loops", "(MatMul@spec ?a ?b)")
             .then(same_children(ops.matmul))
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
               .then(same_children(ops.sgemm))
               .because("CpuSgemm is the MatMul op itself; BLAS sums in another order, "
                        "within the search's tolerance"));
  // A product with a block-quantized weight (dequantized by a Cast): the
  // dequantization fused into the GEMV/GEMM.
  rs.add(egraph::Rule("cpu-matmul-quantized", "(MatMul@spec ?a (Cast@dt ?q))")
             .where([](egraph::Match& m) {
               return is_quantized(m.info("q").dtype) && m.info("a").dtype == DType::F32;
             })
             .then([id = ops.qmatmul](egraph::EGraph& eg, const egraph::Match& m) {
               const egraph::ClassId kids[2] = {m.cls("a"), m.cls("q")};
               eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
             })
             .because("CpuQMatMul lowers to exactly MatMul(a, Cast(q))"));
  rs.add(egraph::Rule("cpu-gather-dequantize", "(Gather ?i (Cast@dt ?q))")
             .where([](egraph::Match& m) { return is_quantized(m.info("q").dtype); })
             .then([id = ops.gather_dequant](egraph::EGraph& eg, const egraph::Match& m) {
               const egraph::ClassId kids[2] = {m.cls("i"), m.cls("q")};
               eg.merge(m.root(), eg.add(id, m.payload("dt"), kids));
             })
             .because("CpuGatherDequant lowers to exactly Gather(i, Cast(q))"));
  registry.add_ruleset(std::move(rs));
  registry.add_to_phase("lower", "cpu-kernels");
  registry.add_ruleset(fusion_rules());
  registry.add_to_phase("fuse", "cpu-fuse");
}

}  // namespace luminal::cpu
