// The fused attention kernel (CpuAttention): the rule recognises what
// frontend attention and nn::Attention build, a candidate choosing it
// extracts to a "CpuAttention" kernel group, and the kernel's output matches
// the reference interpreter on the original graph (the expected values)
// across dynamic sequence / cache lengths, head dims, GQA and masks.
#include "luminal/backends/cpu/attention_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/egraph/candidate.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"
#include "luminal/frontend/attention.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/nn/attention.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

// Random values for every input of `g` at `dims` (bool inputs from `mask`
// when given), seeded.
std::map<std::string, TensorData> random_inputs(const Graph& g, const DimMap& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::map<std::string, TensorData> out;
  for (NodeId id : g.inputs()) {
    const Node& n = g.node(id);
    std::vector<int64_t> shape;
    for (const Expr& e : n.shape) shape.push_back(e.eval(dims));
    TensorData t(n.dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (n.dtype == DType::Bool)
        t.set_int(i, rng() % 4 != 0 ? 1 : 0);
      else
        t.set(i, u(rng));
    }
    out.emplace(n.name, std::move(t));
  }
  return out;
}

void expect_close(const TensorData& got, const TensorData& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (std::isnan(want.get(i))) {  // (a NaN key: NaN where the reference has it)
      ASSERT_TRUE(std::isnan(got.get(i))) << what << " element " << i;
      continue;
    }
    ASSERT_NEAR(got.get(i), want.get(i), 2e-5 * std::max(1.0, std::abs(want.get(i))))
        << what << " element " << i;
  }
}

// Extract the candidate choosing every CpuAttention node, compile it on the
// CPU backend (checking the fused kernel is used, not generated loops) and
// compare every output with the interpreter on `g` for each dims / input set.
struct Run {
  DimMap dims;
  std::map<std::string, TensorData> inputs;
};

// `codes`, when given, receives the source of each fused kernel; `flags` are
// added to the kernels' compiler flags.
void check_fused(const Graph& g, const std::vector<Run>& runs, size_t expected_groups = 1,
                 std::vector<std::string>* codes = nullptr,
                 const std::vector<std::string>& flags = {}) {
  auto sat = testing::saturate_with_cpu_rules(g);
  const auto nodes = sat->nodes_of(attention_op());
  ASSERT_EQ(nodes.size(), expected_groups) << "the attention rule did not fire";
  egraph::CandidateSpace space(sat->eg, sat->imp.roots(sat->eg));
  auto extracted = egraph::extract(sat->eg, sat->imp, space.prefer(nodes)).graph;
  CpuOptions options;
  options.jit.extra_flags = flags;
  for (const KernelGroup& group : extracted->kernel_groups())
    options.regions.push_back(Region{group.nodes, {}, group.op});
  CpuProgram program(*extracted, options);
  size_t fused = 0;
  for (const CpuKernel& k : program.kernels())
    if (k.code.find("// CpuAttention:") != std::string::npos) {
      ++fused;
      if (codes) codes->push_back(k.code);
    }
  ASSERT_EQ(fused, expected_groups) << "the CpuAttention group ran as generated loops";
  Interpreter ref(g);
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const auto& [name, t] : runs[r].inputs) {
      program.set_input(name, t);
      ref.set_input(name, t);
    }
    program.run(runs[r].dims);
    ref.run(runs[r].dims);
    for (const auto& [name, want] : ref.outputs())
      expect_close(program.output(name), want, name + " run " + std::to_string(r));
  }
}

std::vector<Run> runs_at(const Graph& g, const std::vector<DimMap>& dims) {
  std::vector<Run> out;
  for (size_t i = 0; i < dims.size(); ++i)
    out.push_back({dims[i], random_inputs(g, dims[i], static_cast<uint32_t>(7 + i))});
  return out;
}

// Plain SDPA, no mask: keys 1, 7, 64 and 300 in one compiled program, head dim 64.
TEST(CpuAttention, PlainSdpaDynamicKeys) {
  Graph g;
  Tensor q = g.input("q", {2, 3, "l", 64});
  Tensor k = g.input("k", {2, 3, "s", 64});
  Tensor v = g.input("v", {2, 3, "s", 64});
  g.output("o", scaled_dot_product_attention(q, k, v));
  check_fused(g, runs_at(g, {{{"l", 3}, {"s", 1}},
                             {{"l", 3}, {"s", 7}},
                             {{"l", 5}, {"s", 64}},
                             {{"l", 2}, {"s", 300}}}));
}

// Causal (is_causal: a bool mask from iotas), L = S dynamic, head dim 32.
TEST(CpuAttention, CausalSdpa) {
  Graph g;
  Tensor q = g.input("q", {1, 2, "s", 32});
  Tensor k = g.input("k", {1, 2, "s", 32});
  Tensor v = g.input("v", {1, 2, "s", 32});
  g.output("o", scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true));
  check_fused(g, runs_at(g, {{{"s", 1}}, {{"s", 7}}, {{"s", 64}}, {{"s", 130}}}));
}

// Grouped-query heads (4 query heads on 2 kv heads, no copy of k / v) of
// head dim `d` (values `dv`) with an explicit bool mask [l, s].
void masked_gqa(Graph& g, int64_t d, int64_t dv, std::optional<double> scale) {
  Tensor q = g.input("q", {1, 4, "l", d});
  Tensor k = g.input("k", {1, 2, "s", d});
  Tensor v = g.input("v", {1, 2, "s", dv});
  Tensor m = g.input("m", {"l", "s"}, DType::Bool);
  g.output("o", scaled_dot_product_attention(q, k, v, m, 0.0, false, scale, true));
}

// GQA with a bool mask; one run has a fully masked row (-> zeros).
TEST(CpuAttention, GqaWithBoolMaskAndFullyMaskedRow) {
  Graph g;
  masked_gqa(g, 32, 32, 0.3);
  auto runs = runs_at(g, {{{"l", 3}, {"s", 7}}, {{"l", 4}, {"s", 64}}, {{"l", 2}, {"s", 300}}});
  for (int64_t j = 0; j < 64; ++j) runs[1].inputs.at("m").set_int(2 * 64 + j, 0);  // row 2: no key
  check_fused(g, runs);
}

nn::AttentionConfig small_config() {
  nn::AttentionConfig cfg;
  cfg.hidden_size = 128;
  cfg.num_heads = 4;
  cfg.num_kv_heads = 2;  // head dim 32, groups of 2
  return cfg;
}

// nn::Attention with a KV cache: prefill (s tokens, causal) and decode (one
// token over a cache of dynamic length) are both recognised.
TEST(CpuAttention, NnAttentionPrefillAndDecode) {
  for (const bool decode : {false, true}) {
    SCOPED_TRACE(decode ? "decode" : "prefill");
    Graph g;
    nn::Attention attn(g, "attn", small_config());
    const nn::KVCache cache = attn.make_cache(1, 320);
    const Expr s = decode ? Expr(1) : Expr("s");
    Tensor x = g.input("x", {1, s, 128});
    const nn::AttentionStep step = attn.forward(x, Expr("p"), cache);
    g.output("o", step.out);
    std::vector<DimMap> dims;
    if (decode)
      dims = {{{"p", 0}}, {{"p", 6}}, {{"p", 63}}, {{"p", 299}}};
    else  // p 60 and 70, s 9: rows whose keys end on either side of a 64-key block edge
      dims = {
          {{"p", 0}, {"s", 7}}, {{"p", 3}, {"s", 5}}, {{"p", 70}, {"s", 9}}, {{"p", 60}, {"s", 9}}};
    // Halved inputs: with weights in [-1, 1] the scores reach tens and the
    // output projection cancels sums of tens down to ~1, which leaves f32
    // rounding close to the tolerance whatever the kernel.
    auto runs = runs_at(g, dims);
    for (auto& r : runs)
      for (auto& [name, t] : r.inputs)
        for (int64_t i = 0; i < t.numel(); ++i) t.set(i, 0.5 * t.get(i));
    check_fused(g, runs);
  }
}

bool contains(const std::string& code, const std::string& what) {
  return code.find(what) != std::string::npos;
}

// Decode (one query row per head): `heads` query heads over 2 KV heads of
// head dim `d`, a bool mask [1, s] over the cache.
void masked_decode(Graph& g, int64_t heads, int64_t d) {
  Tensor q = g.input("q", {1, heads, 1, d});
  Tensor k = g.input("k", {1, 2, "s", d});
  Tensor v = g.input("v", {1, 2, "s", d});
  Tensor m = g.input("m", {1, "s"}, DType::Bool);
  g.output("o", scaled_dot_product_attention(q, k, v, m, 0.0, false, std::nullopt, true));
}

// Causal GQA, 3 query heads per kv head, head dim `head`.
void causal_gqa(Graph& g, int64_t head) {
  Tensor q = g.input("q", {1, 6, "s", head});
  Tensor k = g.input("k", {1, 2, "s", head});
  Tensor v = g.input("v", {1, 2, "s", head});
  g.output("o", scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true, std::nullopt, true));
}

// The rows of a group share K / V rows, so s = 1 gives tiles of 3 rows (the
// few-rows path, head dim on the lanes), s = 2 tiles of 6 (8 lanes), s = 5 and
// 67 tiles of 16 rows across the heads of a group, their remainders, and keys
// across a block edge.
TEST(CpuAttention, CausalGqaTileRemainders) {
  Graph g;
  causal_gqa(g, 32);
  std::vector<std::string> codes;
  check_fused(g, runs_at(g, {{{"s", 1}}, {{"s", 2}}, {{"s", 5}}, {{"s", 67}}}), 1, &codes);
  ASSERT_EQ(codes.size(), 1u);
  // Contiguous heads: compile-time strides and the few-rows path.
  EXPECT_TRUE(contains(codes[0], "constexpr int64_t KD = 1;"));
  EXPECT_TRUE(contains(codes[0], "rows<3>("));
}

// A head dim of 24 fills 8-float vectors but not 16-float ones: AVX2 hosts
// take the 8-float row path, AVX-512 hosts tile4 (both are emitted, each in
// its branch).
TEST(CpuAttention, FewRowsWithAHeadDimOfEightFloatVectors) {
  Graph g;
  causal_gqa(g, 24);
  std::vector<std::string> codes;
  check_fused(g, runs_at(g, {{{"s", 1}}, {{"s", 3}}, {{"s", 70}}}), 1, &codes);
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_TRUE(contains(codes[0], "rows<3>("));
  EXPECT_TRUE(contains(codes[0], "tile4(a, n,"));
}

// Hosts without AVX-512 (this project's CI may be one) still run the kernel's
// AVX-512 branch (tile16, the 16-float row path, tile4 for other head dims):
// compiled with __AVX512F__ defined, GCC's 16-float vectors become pairs of
// AVX2 registers, and the prelude's AVX-512 builtins are avx512_emulation.hpp's
// (as in QGemmInt16.VnniPathsUnderEmulationMatchThePortableBuild). A kernel
// compiled without the macro would not test that branch: checked by a
// preprocessor error in the flags' absence.
TEST(CpuAttention, Avx512BranchUnderEmulation) {
  if (__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "the host runs the AVX-512 branch itself";
  if (!host_has_int16_products()) GTEST_SKIP() << "the emulation needs AVX2, FMA and F16C";
  const std::string header =
      (std::filesystem::path(__FILE__).parent_path() / "avx512_emulation.hpp").string();
  const std::vector<std::string> flags = {"-D__AVX512F__", "-DLK_QMM_EMULATED_AVX512", "-Wno-psabi",
                                          "-include", header};
  for (int64_t head : {32, 24}) {
    SCOPED_TRACE("head dim " + std::to_string(head));
    Graph gqa;
    causal_gqa(gqa, head);
    check_fused(gqa, runs_at(gqa, {{{"s", 1}}, {{"s", 2}}, {{"s", 5}}, {{"s", 67}}}), 1, nullptr,
                flags);
  }
  Graph g;  // decode with a mask: rows<2> over masked blocks
  masked_decode(g, 4, 32);
  auto runs = runs_at(g, {{{"s", 130}}, {{"s", 9}}, {{"s", 700}}});  // (700: keys split)
  for (int64_t j = 64; j < 128; ++j) runs[0].inputs.at("m").set_int(j, 0);
  check_fused(g, runs, 1, nullptr, flags);
}

// Keys read transposed (their head-dim stride is the key count, a runtime
// value), a head dim that is not a multiple of 16 and a different value head
// dim: the generic path (runtime strides, one row per lane) for tiles of 2, 6
// and 16 + 2 rows.
TEST(CpuAttention, StridedKeysAndOddHeadDims) {
  Graph g;
  Tensor q = g.input("q", {1, 4, "l", 24});
  Tensor kt = g.input("kt", {1, 2, 24, "s"});
  Tensor v = g.input("v", {1, 2, "s", 40});
  g.output("o", scaled_dot_product_attention(q, kt.transpose(2, 3), v, std::nullopt, 0.0, false,
                                             std::nullopt, true));
  std::vector<std::string> codes;
  check_fused(g, runs_at(g, {{{"l", 1}, {"s", 5}}, {{"l", 3}, {"s", 70}}, {{"l", 9}, {"s", 64}}}),
              1, &codes);
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_TRUE(contains(codes[0], "const int64_t KD = a.KD;"));
  EXPECT_FALSE(contains(codes[0], "rows<"));
}

// Decode (one query row per head, GQA) with an explicit bool mask over a
// cache: masked keys across block edges, a 64-key block with no visible key,
// and a mask hiding every key (-> zeros).
TEST(CpuAttention, DecodeWithBoolMask) {
  Graph g;
  masked_decode(g, 4, 32);
  auto runs = runs_at(g, {{{"s", 130}}, {{"s", 200}}, {{"s", 9}}});
  for (int64_t j = 64; j < 128; ++j) runs[1].inputs.at("m").set_int(j, 0);
  for (int64_t j = 0; j < 9; ++j) runs[2].inputs.at("m").set_int(j, 0);
  check_fused(g, runs);
}

// Decode over a long cache, few rows: the keys are split across the pool's
// threads and each row's splits combined (flash-decoding). Runs where the
// first splits see no key (masked), where one split holds a NaN key, where
// every key is masked, and short caches that are not split.
TEST(CpuAttention, DecodeSplitsKeysAcrossThreads) {
  Graph g;
  masked_decode(g, 6, 64);
  auto runs = runs_at(g, {{{"s", 1000}}, {{"s", 777}}, {{"s", 1000}}, {{"s", 600}}, {{"s", 100}}});
  for (int64_t j = 0; j < 700; ++j) runs[1].inputs.at("m").set_int(j, 0);  // early splits: none
  runs[2].inputs.at("k").set(2 * 1000 * 64 - 5, std::nan(""));             // kv head 1, a late key
  for (int64_t j = 0; j < 600; ++j) runs[3].inputs.at("m").set_int(j, 0);  // no key at all
  std::vector<std::string> codes;
  check_fused(g, runs, 1, &codes);
  ASSERT_EQ(codes.size(), 1u);
  if (ThreadPool::shared().size() > 1) {
    EXPECT_TRUE(contains(codes[0], "_combine("));
  }
}

// Tiles of 9 to 16 rows (AVX2: two 8-float vectors of rows, tile8x2; AVX-512:
// tile16) with every remainder of their blocked loops: 2 heads per group x 13
// rows = tiles of 16 and 10, 70 keys (a block of 64 then 6: keys left over
// from blocks of 4 and 8), a value head dim of 42 (columns left over from
// blocks of 4 and 8), a bool mask with a row that sees no key in the first
// block, and one that sees none at all.
TEST(CpuAttention, SixteenRowTilesWithRemainders) {
  Graph g;
  masked_gqa(g, 20, 42, std::nullopt);
  auto runs = runs_at(g, {{{"l", 13}, {"s", 70}}, {{"l", 13}, {"s", 70}}, {{"l", 16}, {"s", 5}}});
  for (int64_t j = 0; j < 64; ++j) runs[1].inputs.at("m").set_int(3 * 70 + j, 0);   // row 3
  for (int64_t j = 0; j < 70; ++j) runs[1].inputs.at("m").set_int(11 * 70 + j, 0);  // row 11
  check_fused(g, runs);
}

// Decode with 12 query rows per group (one tile of two vectors of rows on
// AVX2) over a long cache: the keys split across threads, as above, with a
// NaN key and fully masked splits.
TEST(CpuAttention, DecodeSplitsKeysOfSixteenRowTiles) {
  Graph g;
  masked_decode(g, 24, 64);
  auto runs = runs_at(g, {{{"s", 1000}}, {{"s", 777}}, {{"s", 1000}}});
  for (int64_t j = 0; j < 700; ++j) runs[1].inputs.at("m").set_int(j, 0);
  runs[2].inputs.at("k").set(1000 * 64 + 3, std::nan(""));  // kv head 1, key 0
  check_fused(g, runs);
}

// The payload (serialised with e-graph nodes) round-trips; a foreign one throws.
TEST(CpuAttention, SpecPayloadRoundTrip) {
  AttentionSpec s;
  s.qk.m = Expr("l");
  s.qk.n = Expr("s");
  s.qk.k = 64;
  s.pv.k = Expr("s");
  s.scale = 0.125;
  s.mask = View::contiguous({Expr("l"), Expr("s")});
  const AttentionSpec back = AttentionSpec::from_payload(s.to_payload());
  EXPECT_EQ(back.qk, s.qk);
  EXPECT_EQ(back.pv, s.pv);
  EXPECT_EQ(back.scale, s.scale);
  ASSERT_TRUE(back.mask.has_value());
  EXPECT_TRUE(*back.mask == *s.mask);
  EXPECT_THROW(AttentionSpec::from_payload(egraph::Payload(int64_t{3})), Error);
}

}  // namespace
}  // namespace luminal::cpu
