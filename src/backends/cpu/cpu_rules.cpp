#include "luminal/backends/cpu/cpu_rules.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "luminal/backends/cpu/attention_kernel.hpp"
#include "luminal/backends/cpu/fusion.hpp"
#include "luminal/backends/cpu/jit.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/compiler/matmul_precision.hpp"
#include "luminal/egraph/convert.hpp"
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
// CpuQMatMulInt16 is the same product with a rounded to 16-bit integers per
// block (MatmulPrecision::High).
egraph::OpId qmatmul_op(const char* name) {
  egraph::OpInfo info;
  info.name = name;
  info.arity = 2;
  info.kernel_group = true;
  info.payload_doc = "MatMulSpec (matmul.hpp) of a @ dequantize(q)";
  info.infer = [name](const egraph::Payload& p, std::span<const egraph::TensorInfo* const> c) {
    if (!is_quantized(c[1]->dtype))
      throw Error(std::string(name) + ": the weight " + c[1]->to_string() +
                  " is not block-quantized");
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

// CpuSgemmEpilogue(spec, body, p)(a, b, inputs...): the CpuFused body `body`
// whose input p is MatMul(spec)(a, b) and whose other inputs are `inputs`, in
// order. One kernel: BLAS computes a block of the product's rows, the body runs
// on that block while it is in cache (library_kernels.hpp).
egraph::OpId sgemm_epilogue_op() {
  static const egraph::OpId id = [] {
    egraph::OpInfo info;
    info.name = "CpuSgemmEpilogue";
    info.arity = -1;
    info.kernel_group = true;
    info.group_reads_views = true;
    info.payload_doc = "(MatMulSpec, CpuFused body, index of the product among the body's inputs)";
    info.infer = [](const egraph::Payload& p, std::span<const egraph::TensorInfo* const>) {
      const egraph::Payload& body = p.at(1);
      return egraph::TensorInfo{body.at(0).as<DType>(), body.at(1).as<egraph::Shape>()};
    };
    info.lower = [](Graph& g, const egraph::Payload& p, std::span<const Tensor> c,
                    const egraph::TensorInfo&) {
      const Tensor product =
          egraph::lower_matmul(g, egraph::MatMulSpec::from_payload(p.at(0)), c[0], c[1]);
      std::vector<Tensor> inputs(c.begin() + 2, c.end());
      inputs.insert(inputs.begin() + p.at(2).as<int64_t>(), product);
      return lower_fused_body(g, p.at(1), inputs);
    };
    const egraph::OpId op = egraph::OpRegistry::global().get_or_add(std::move(info));
    // Bodies above it still inline its class (it is a fusion, not a boundary).
    add_fusion_transparent_op(op);
    return op;
  }();
  return id;
}

// Whether a body (entries as fusion.hpp describes them) reads input `p` only
// element by element in its own flat order: every entry that depends on p is
// element-wise, a View of an entry that depends on p keeps the flat order, and
// the result has p's element count. Then a block of p's rows determines the
// same block of the result.
bool reads_rows_in_order(const egraph::Payload& body, int64_t p, const Expr& numel) {
  const egraph::PayloadTuple& entries = body.at(2).as<egraph::PayloadTuple>();
  std::vector<bool> dep(entries.size(), false);
  for (size_t i = 0; i < entries.size(); ++i) {
    const egraph::Payload& e = entries[i];
    bool d = false;
    for (const egraph::Payload& r : e.at(2).as<egraph::PayloadTuple>()) {
      const int64_t ref = r.as<int64_t>();
      d = d || (ref >= 0 ? dep[static_cast<size_t>(ref)] : -1 - ref == p);
    }
    dep[i] = d;
    if (!d) continue;
    const auto op = static_cast<egraph::OpId>(e.at(0).as<int64_t>());
    if (op == egraph::kViewOp) {
      const View& v = e.at(1).as<View>();
      if (!v.is_contiguous() || v.numel().simplify() != numel.simplify()) return false;
      continue;
    }
    const auto kind = egraph::hlir_kind(op);
    if (!kind || *kind == OpKind::SumReduce || *kind == OpKind::MaxReduce ||
        *kind == OpKind::Gather || *kind == OpKind::Scatter)
      return false;
  }
  return !entries.empty() && dep.back() &&
         product(body.at(1).as<egraph::Shape>()).simplify() == numel.simplify();
}

// Whether operand class a or b of a product is a block-quantized (GGUF)
// tensor dequantized by a Cast: the quantized products (CpuQMatMul*) read its
// blocks in place, where an f32 kernel over that class would make the run
// dequantize the whole weight every time (SmolLM2's down projections through
// sgemm with a residual epilogue: 2.5 ms of Cast per layer and token).
bool product_reads_dequantized(const egraph::EGraph& eg, egraph::ClassId a, egraph::ClassId b) {
  for (egraph::ClassId c : {a, b})
    for (egraph::ENodeId n : eg.nodes(c))
      if (egraph::hlir_kind(eg.op(n)) == OpKind::Cast &&
          is_quantized(eg.info(eg.children(n)[0]).dtype))
        return true;
  return false;
}

// Adds CpuSgemmEpilogue nodes for node n's body and every product it reads.
void add_epilogues(egraph::EGraph& eg, egraph::ClassId root, egraph::ENodeId n) {
  std::optional<FusedBody> body = build_fused_body(eg, root, n);
  if (!body) return;
  for (size_t p = 0; p < body->inputs.size(); ++p) {
    const egraph::ClassId pc = eg.find(body->inputs[p]);
    for (egraph::ENodeId mn : eg.nodes(pc)) {
      if (eg.op(mn) != egraph::kMatMulOp) continue;
      const std::span<const egraph::ClassId> ab = eg.children(mn);
      if (eg.info(ab[0]).dtype != DType::F32 || product_reads_dequantized(eg, ab[0], ab[1]))
        continue;
      const auto spec = egraph::MatMulSpec::from_payload(eg.node_payload(mn));
      if (spec.a_layout() == egraph::MatLayout::Strided ||
          spec.b_layout() == egraph::MatLayout::Strided)
        continue;
      // (batched: every batch's rows in turn, the product's flat order)
      if (!reads_rows_in_order(body->payload, static_cast<int64_t>(p),
                               spec.batch_count() * spec.m * spec.n))
        continue;
      std::vector<egraph::ClassId> kids{ab[0], ab[1]};
      for (size_t i = 0; i < body->inputs.size(); ++i)
        if (i != p) kids.push_back(body->inputs[i]);
      egraph::PayloadTuple parts{eg.node_payload(mn), body->payload,
                                 egraph::Payload(static_cast<int64_t>(p))};
      eg.merge(root, eg.add(sgemm_epilogue_op(), egraph::Payload(std::move(parts)), kids));
      break;
    }
  }
}

// The epilogue alternative of every fused body that reads an f32 product BLAS
// can compute (the operands' layouts of cpu-matmul-blas, batched or not).
egraph::Ruleset sgemm_epilogue_rules() {
  egraph::Ruleset rs("cpu-sgemm-epilogue");
  for (const std::string& pattern : fusion_root_patterns()) {
    std::string name = "sgemm-epilogue-" + pattern.substr(1);
    name = name.substr(0, name.find(' '));
    rs.add(egraph::Rule(name, pattern)
               .then([](egraph::EGraph& eg, const egraph::Match& m) {
                 const egraph::ClassId root = eg.find(m.root());
                 for (egraph::ENodeId n : eg.nodes(root)) {
                   const auto kind = egraph::hlir_kind(eg.op(n));
                   if (!kind || *kind == OpKind::Constant || *kind == OpKind::Iota) continue;
                   add_epilogues(eg, root, n);
                   return;
                 }
               })
               .because("CpuSgemmEpilogue lowers to exactly the fused body with the "
                        "MatMul it reads (the members of the classes it reads)"));
  }
  return rs;
}

// An f32 product in a Linear layer's form: the weight rows' K contiguous, x
// rows contiguous, no batch (and K whole blocks of 32 where asked).
bool f32_linear_product(egraph::Match& m, bool whole_blocks) {
  if (m.info("a").dtype != DType::F32 || m.info("b").dtype != DType::F32) return false;
  const auto spec = egraph::MatMulSpec::from_payload(m.payload("spec"));
  const auto k = spec.k.as_const(), bk = spec.b_k_stride.as_const(),
             ak = spec.a_k_stride.as_const();
  if (whole_blocks && !(k && *k > 0 && *k % 32 == 0)) return false;
  return spec.batch.empty() && bk && *bk == 1 && ak && *ak == 1;
}

// Adds kernel op `id` with the MatMul's payload and operands, unless an
// operand is a dequantized GGUF weight (product_reads_dequantized).
auto product_of_f32_weight(egraph::OpId id) {
  return [id](egraph::EGraph& eg, const egraph::Match& m) {
    if (product_reads_dequantized(eg, m.cls("a"), m.cls("b"))) return;
    const egraph::ClassId kids[2] = {m.cls("a"), m.cls("b")};
    eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
  };
}

}  // namespace

CpuOps cpu_ops() {
  static const CpuOps ops{matmul_kernel_op("CpuMatMul"),
                          matmul_kernel_op("CpuSgemm"),
                          qmatmul_op("CpuQMatMul"),
                          qmatmul_op("CpuQMatMulInt16"),
                          matmul_kernel_op("CpuMatMulInt16"),
                          matmul_kernel_op("CpuMatMulAmx"),
                          qmatmul_op("CpuQMatMulAmx"),
                          gather_dequant_op(),
                          sgemm_epilogue_op()};
  return ops;
}

bool host_has_vnni_int16() {
  // (the kernels are compiled with -march=native: this host's ISA is theirs)
  // (VL: the int16 GEMV's 256-bit VNNI forms; the prelude's LK_QMM_VNNI wants it too)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512vnni");
  return has;
}

bool host_has_int16_products() {
  static const bool has =
      host_has_vnni_int16() || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                                __builtin_cpu_supports("f16c"));
  return has;
}

namespace {
// Whether the CPU has AMX-TILE and `feature`, LUMINAL_AMX is not "off" and
// the OS grants this process the tile registers (Linux 5.16+, once for every
// thread).
bool host_has_amx(bool has_feature) {
  if (JitCompiler::amx_turned_off()) return false;
#if defined(__x86_64__) && defined(__linux__)
  if (!__builtin_cpu_supports("amx-tile") || !has_feature) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  (void)has_feature;
  return false;
#endif
}
}  // namespace

bool host_has_amx_bf16() {
  static const bool has = host_has_amx(__builtin_cpu_supports("amx-bf16"));
  return has;
}

void add_cpu_rules(egraph::RuleRegistry& registry, compiler::MatmulPrecision precision) {
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
               .then(product_of_f32_weight(ops.sgemm))
               .because("CpuSgemm is the MatMul op itself; BLAS sums in another order, "
                        "within the search's tolerance"));
  // A product with a block-quantized weight (dequantized by a Cast): the
  // dequantization fused into the GEMV/GEMM.
  auto quantized_product = [](egraph::EGraph& eg, const egraph::Match& m, egraph::OpId id) {
    const egraph::ClassId kids[2] = {m.cls("a"), m.cls("q")};
    eg.merge(m.root(), eg.add(id, m.payload("spec"), kids));
  };
  auto f32_by_quantized = [](egraph::Match& m) {
    return is_quantized(m.info("q").dtype) && m.info("a").dtype == DType::F32;
  };
  rs.add(egraph::Rule("cpu-matmul-quantized", "(MatMul@spec ?a (Cast@dt ?q))")
             .where(f32_by_quantized)
             .then([=, id = ops.qmatmul](egraph::EGraph& eg, const egraph::Match& m) {
               quantized_product(eg, m, id);
             })
             .because("CpuQMatMul lowers to exactly MatMul(a, Cast(q))"));
  // The same product with 16-bit integer activations and VNNI dot products:
  // twice the multiply throughput of f32 for a prefill's GEMMs, where the
  // precision allows it and the host has the instructions (or AVX2 alone:
  // vpmaddwd over the weight's interleaved copy, a GEMV without the f32
  // decoding of every weight).
  if (precision == compiler::MatmulPrecision::High && host_has_int16_products())
    rs.add(egraph::Rule("cpu-matmul-quantized-int16", "(MatMul@spec ?a (Cast@dt ?q))")
               .where(f32_by_quantized)
               .then([=, id = ops.qmatmul_int16](egraph::EGraph& eg, const egraph::Match& m) {
                 quantized_product(eg, m, id);
               })
               .because("CpuQMatMulInt16 lowers to exactly MatMul(a, Cast(q)); its kernel "
                        "rounds a to 16 bits per block of 32 (MatmulPrecision::High), within "
                        "the search's tolerance"));
  // The same product on AMX tiles as three bf16 products (as CpuMatMulAmx),
  // the weight decoded per call from the int16 products' copy; below 16 rows
  // that int16 product itself.
  if (precision == compiler::MatmulPrecision::High && host_has_amx_bf16())
    rs.add(egraph::Rule("cpu-matmul-quantized-amx", "(MatMul@spec ?a (Cast@dt ?q))")
               .where(f32_by_quantized)
               .then([=, id = ops.qmatmul_amx](egraph::EGraph& eg, const egraph::Match& m) {
                 quantized_product(eg, m, id);
               })
               .because("CpuQMatMulAmx lowers to exactly MatMul(a, Cast(q)); its kernel splits "
                        "a and the decoded weight into two bf16 each and sums three bf16 products "
                        "in f32, below 16 rows rounds a to 16 bits per block of 32 "
                        "(MatmulPrecision::High), within the search's tolerance"));
  // An f32 product the same way, its weight rounded too (to 14 bits per block
  // of 32, as x: see library_kernels.hpp): the weight rows' K contiguous, K
  // whole blocks, x rows contiguous, no batch (a Linear layer's form).
  if (precision == compiler::MatmulPrecision::High && host_has_int16_products())
    rs.add(egraph::Rule("cpu-matmul-int16", "(MatMul@spec ?a ?b)")
               .where([](egraph::Match& m) { return f32_linear_product(m, /*whole_blocks=*/true); })
               .then(product_of_f32_weight(ops.matmul_int16))
               .because("CpuMatMulInt16 is the MatMul op itself; its kernel rounds both "
                        "operands to 14 bits per block of 32 (MatmulPrecision::High, TF32-like "
                        "error), within the search's tolerance"));
  // An f32 product on AMX tiles, each operand as two bf16 and three bf16
  // products (torch's "high" float32 matmul precision allows bf16x3): the
  // same layouts, any K.
  if (precision == compiler::MatmulPrecision::High && host_has_amx_bf16())
    rs.add(
        egraph::Rule("cpu-matmul-amx", "(MatMul@spec ?a ?b)")
            .where([](egraph::Match& m) { return f32_linear_product(m, /*whole_blocks=*/false); })
            .then(product_of_f32_weight(ops.matmul_amx))
            .because("CpuMatMulAmx is the MatMul op itself; its kernel splits both operands "
                     "into two bf16 and sums three bf16 products in f32 (MatmulPrecision::High, "
                     "about 2^-16 per term), within the search's tolerance"));
  rs.add(egraph::Rule("cpu-gather-dequantize", "(Gather ?i (Cast@dt ?q))")
             .where([](egraph::Match& m) { return is_quantized(m.info("q").dtype); })
             .then([id = ops.gather_dequant](egraph::EGraph& eg, const egraph::Match& m) {
               const egraph::ClassId kids[2] = {m.cls("i"), m.cls("q")};
               eg.merge(m.root(), eg.add(id, m.payload("dt"), kids));
             })
             .because("CpuGatherDequant lowers to exactly Gather(i, Cast(q))"));
  registry.add_ruleset(std::move(rs));
  registry.add_to_phase("lower", "cpu-kernels");
  add_attention_rules(registry);
  registry.add_ruleset(fusion_rules());
  registry.add_to_phase("fuse", "cpu-fuse");
  // GEMM epilogues: BLAS products with the fused element-wise body after them.
  if (Blas::get() != nullptr) {
    registry.add_ruleset(sgemm_epilogue_rules());
    registry.add_to_phase("fuse", "cpu-sgemm-epilogue");
  }
}

}  // namespace luminal::cpu
