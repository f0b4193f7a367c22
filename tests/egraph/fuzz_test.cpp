// Equivalence fuzzing: saturate the core rules on model-shaped graphs built
// from primitives, draw >= 32 random candidates from the one e-graph and run
// each on the reference interpreter. Every core rule is exact, so every
// candidate must match the original graph BIT FOR BIT (NaN == NaN). The
// expected values are the original graph's own interpreter outputs: the
// code under test (rules, extraction) never produces the reference.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/egraph/matmul.hpp"

using namespace luminal;
using namespace luminal::egraph;

namespace {

const double kLog2e = 1.4426950408889634;

// A matmul written with K in the middle (the frontend reduces the last axis):
// broadcast Mul + SumReduce over K. Recognition must not depend on the form.
Tensor matmul_kmid(const Tensor& a, const Tensor& b) {
  return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum_reduce(-2);
}
Tensor exp(const Tensor& x) {
  return (x * kLog2e).exp2();
}
Tensor softmax(const Tensor& x) {
  const Tensor shifted = x - x.max_reduce(-1).unsqueeze(-1);
  const Tensor e = exp(shifted);
  return e * e.sum_reduce(-1).recip().unsqueeze(-1);
}
Tensor silu(const Tensor& x) {
  return x * (exp(-x) + 1.0).recip();
}
Tensor relu(const Tensor& x) {
  Graph& g = *x.graph();
  const Tensor positive = g.constant(0.0, x.dtype()).expand(x.shape()).lt(x);
  return x * positive.cast(x.dtype());
}
Tensor rms_norm(const Tensor& x, const Tensor& w) {
  const Expr d = x.dim(-1);
  const double inv = 1.0 / static_cast<double>(d.value());
  const Tensor ms = (x * x).sum_reduce(-1) * inv + 1e-5;
  return x * ms.sqrt().recip().unsqueeze(-1) * w;
}
Tensor cos(const Tensor& x) {
  return (x + M_PI / 2).sin();
}

void expect_equivalent(const Graph& g, FuzzOptions options, const char* name,
                       bool uses_matmul = true) {
  const auto t0 = std::chrono::steady_clock::now();
  const FuzzResult r = fuzz_equivalence(g, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[fuzz " << name << "] HLIR " << g.size() << " nodes -> e-graph " << r.egraph_nodes
            << " nodes / " << r.egraph_classes << " classes, " << to_string(r.saturation.reason)
            << " in " << r.saturation.seconds * 1e3 << " ms; " << r.checked << " candidates ("
            << r.distinct << " distinct) checked in " << ms << " ms total\n";
  EXPECT_FALSE(r.saturation.budget_hit()) << r.saturation.to_string();
  EXPECT_GE(r.checked, 32u);
  EXPECT_GE(r.distinct, 8u) << "the e-graph offers too little variety to fuzz";
  if (uses_matmul) {
    auto it = r.non_hlir_uses.find("MatMul");
    EXPECT_TRUE(it != r.non_hlir_uses.end() && it->second > 0)
        << "no candidate used a recognised MatMul";
  }
  for (const std::string& f : r.failures) ADD_FAILURE() << name << ": " << f;
}

// (a) A two-layer MLP with bias and ReLU.
void build_mlp(Graph& g) {
  const Tensor x = g.input("x", {"b", 8});
  const Tensor w1 = g.weight("w1", {8, 16}), b1 = g.weight("b1", {16});
  const Tensor w2 = g.weight("w2", {16, 4}), b2 = g.weight("b2", {4});
  const Tensor h = relu(matmul_kmid(x, w1) + b1);
  g.output("y", matmul_kmid(h, w2) + b2);
}

// (b) Single-head softmax attention with a causal mask from Iota / LessThan.
void build_attention(Graph& g) {
  const Expr s = "s";
  const Tensor x = g.input("x", {s, 8});
  const Tensor wq = g.weight("wq", {8, 8}), wk = g.weight("wk", {8, 8}),
               wv = g.weight("wv", {8, 8});
  const Tensor q = matmul_kmid(x, wq), k = matmul_kmid(x, wk), v = matmul_kmid(x, wv);
  const Tensor scores = matmul_kmid(q, k.transpose(0, 1)) * (1.0 / std::sqrt(8.0));
  const Tensor rows = g.arange(s).unsqueeze(1).expand({s, s});
  const Tensor cols = g.arange(s).unsqueeze(0).expand({s, s});
  const Tensor masked = rows.lt(cols).cast(DType::F32);  // key after query
  const Tensor p = softmax(scores + masked * -1e9);
  g.output("out", matmul_kmid(p, v));
}

// (c) A 2-layer Llama-style stack: token embedding by Gather, RMSNorm, GQA
// attention with RoPE (cos = sin(x + pi/2)) and a KV cache updated by
// Scatter, SwiGLU MLP, bf16 weights cast to f32, tied lm head.
constexpr int64_t kDim = 16, kHeads = 4, kKvHeads = 2, kHeadDim = 4, kFfn = 32, kVocab = 20,
                  kCache = 8;

Tensor rope(const Tensor& x, const Tensor& cos_t, const Tensor& sin_t) {
  // x [s, h, hd] as pairs [s, h, hd/2, 2]; cos/sin [s, 1, hd/2, 1].
  Graph& g = *x.graph();
  const Expr s = x.dim(0), h = x.dim(1);
  const Tensor pairs = x.reshape({s, h, kHeadDim / 2, 2});
  const Tensor x0 = pairs.slice(3, 0, 1), x1 = pairs.slice(3, 1, 2);
  const Tensor o0 = x0 * cos_t - x1 * sin_t;
  const Tensor o1 = x1 * cos_t + x0 * sin_t;
  const Tensor first = g.arange(2).lt(g.constant_int(1).expand({2})).cast(DType::F32);
  const Tensor second = 1.0 - first;
  return (o0 * first + o1 * second).reshape({s, h, kHeadDim});
}

Tensor linear_bf16(const Tensor& x, const Tensor& w) {
  return matmul_kmid(x, w.cast(DType::F32));
}

void build_llama(Graph& g, int layers) {
  const Expr s = "s", p = "p";
  const Expr z = Expr::index_var();
  const Tensor tokens = g.input("tokens", {s}, DType::I32);
  const Tensor emb = g.weight("emb", {kVocab, kDim});
  const Tensor inv_freq = g.weight("inv_freq", {kHeadDim / 2});
  // Embedding: flat index tokens[i] * dim + j.
  const Tensor cols = g.arange(kDim).unsqueeze(0).expand({s, kDim});
  const Tensor idx = tokens.unsqueeze(1).expand({s, kDim}) * static_cast<double>(kDim) + cols;
  Tensor h = idx.gather_from(emb);
  // Rotary angles at positions p .. p + s - 1.
  const Tensor pos = g.iota(p + z, s).cast(DType::F32);
  const Tensor angle = pos.unsqueeze(1) * inv_freq.unsqueeze(0);  // [s, hd/2]
  const Tensor sin_t = angle.sin().unsqueeze(1).unsqueeze(3);
  const Tensor cos_t = cos(angle).unsqueeze(1).unsqueeze(3);
  // Causal mask over the cache: query p + i sees keys j <= p + i.
  const Expr keys = p + s;
  const Tensor qpos = g.iota(p + z, s).unsqueeze(1).expand({s, keys});
  const Tensor kpos = g.arange(keys).unsqueeze(0).expand({s, keys});
  const Tensor mask = qpos.lt(kpos).cast(DType::F32) * -1e9;
  const int64_t kv_width = kKvHeads * kHeadDim;
  // Flat cache indexes of the new rows: (p + i) * width + j.
  const Tensor cache_idx =
      g.iota((p + z / kv_width) * kv_width + z % kv_width, s * kv_width).reshape({s, kv_width});
  for (int l = 0; l < layers; ++l) {
    const std::string L = "l" + std::to_string(l) + ".";
    const Tensor wq = g.weight(L + "wq", {kDim, kHeads * kHeadDim}, DType::BF16);
    const Tensor wk = g.weight(L + "wk", {kDim, kv_width}, DType::BF16);
    const Tensor wv = g.weight(L + "wv", {kDim, kv_width}, DType::BF16);
    const Tensor wo = g.weight(L + "wo", {kHeads * kHeadDim, kDim}, DType::BF16);
    const Tensor wg = g.weight(L + "wg", {kDim, kFfn}, DType::BF16);
    const Tensor wu = g.weight(L + "wu", {kDim, kFfn}, DType::BF16);
    const Tensor wd = g.weight(L + "wd", {kFfn, kDim}, DType::BF16);
    const Tensor n1 = g.weight(L + "attn_norm", {kDim}), n2 = g.weight(L + "mlp_norm", {kDim});
    const Tensor k_cache = g.weight(L + "k_cache", {kCache, kv_width});
    const Tensor v_cache = g.weight(L + "v_cache", {kCache, kv_width});

    const Tensor xn = rms_norm(h, n1);
    const Tensor q = rope(linear_bf16(xn, wq).reshape({s, kHeads, kHeadDim}), cos_t, sin_t);
    const Tensor k_new = rope(linear_bf16(xn, wk).reshape({s, kKvHeads, kHeadDim}), cos_t, sin_t);
    const Tensor v_new = linear_bf16(xn, wv);
    const Tensor k_all = k_cache.scatter(cache_idx, k_new.reshape({s, kv_width}));
    const Tensor v_all = v_cache.scatter(cache_idx, v_new);
    g.output(L + "k_cache_out", k_all);
    g.output(L + "v_cache_out", v_all);
    // Grouped-query heads: each KV head serves kHeads / kKvHeads query heads.
    auto heads = [&](const Tensor& cache) {
      return cache.slice(0, 0, keys)
          .reshape({keys, kKvHeads, 1, kHeadDim})
          .expand({keys, kKvHeads, kHeads / kKvHeads, kHeadDim})
          .reshape({keys, kHeads, kHeadDim})
          .permute({1, 0, 2});  // [heads, keys, hd]
    };
    const Tensor kh = heads(k_all), vh = heads(v_all);
    const Tensor qh = q.permute({1, 0, 2});  // [heads, s, hd]
    const Tensor scores = matmul_kmid(qh, kh.transpose(1, 2)) * (1.0 / std::sqrt(double(kHeadDim)));
    const Tensor att = matmul_kmid(softmax(scores + mask.unsqueeze(0)), vh);  // [heads, s, hd]
    h = h +
        matmul_kmid(att.permute({1, 0, 2}).reshape({s, kHeads * kHeadDim}), wo.cast(DType::F32));
    const Tensor xm = rms_norm(h, n2);
    h = h + linear_bf16(silu(linear_bf16(xm, wg)) * linear_bf16(xm, wu), wd);
  }
  const Tensor final_norm = g.weight("final_norm", {kDim});
  g.output("logits", matmul_kmid(rms_norm(h, final_norm), emb.transpose(0, 1)));
}

// (d) A small conv net: conv 3x3 via Gather (im2col) + MatMul, bias, ReLU, a
// padded 3x3 conv whose out-of-image taps are masked (Iota + LessThan style
// index math), 2x2 max pooling with views, and a linear head.
constexpr int64_t kC = 2, kH = 6, kW = 6, kCo = 3, kK = 3;

Tensor im2col(Graph& g, const Tensor& x, int64_t c, int64_t h, int64_t w, int64_t pad,
              Tensor* valid) {
  const Expr z = Expr::index_var();
  const int64_t ho = h + 2 * pad - kK + 1, wo = w + 2 * pad - kK + 1;
  const int64_t n = c * kK * kK * ho * wo;
  // z = (((ci * K + kh) * K + kw) * Ho + oh) * Wo + ow
  const Expr ow = z % wo, oh = (z / wo) % ho, kw = (z / (wo * ho)) % kK,
             kh = (z / (wo * ho * kK)) % kK, ci = z / (wo * ho * kK * kK);
  const Expr row = oh + kh - pad, col = ow + kw - pad;
  const Expr inside = ge(row, 0) * lt(row, h) * ge(col, 0) * lt(col, w);
  const Expr clamped = ci * (h * w) + min(max(row, 0), h - 1) * w + min(max(col, 0), w - 1);
  if (valid) *valid = g.iota(inside, n).cast(DType::F32).reshape({c * kK * kK, ho * wo});
  return g.iota(clamped, n).gather_from(x).reshape({c * kK * kK, ho * wo});
}

void build_convnet(Graph& g) {
  const Tensor x = g.input("x", {kC, kH, kW});
  const Tensor w1 = g.weight("w1", {kCo, kC * kK * kK}), b1 = g.weight("b1", {kCo, 1});
  const Tensor w2 = g.weight("w2", {kCo, kCo * kK * kK}), b2 = g.weight("b2", {kCo, 1});
  const Tensor head = g.weight("head", {kCo * 2 * 2, 5});
  // conv1: no padding, 6x6 -> 4x4.
  const Tensor c1 = relu(matmul_kmid(w1, im2col(g, x, kC, kH, kW, 0, nullptr)) + b1);  // [Co, 16]
  // conv2: padding 1, 4x4 -> 4x4, masked taps.
  Tensor valid = c1;
  const Tensor cols = im2col(g, c1.reshape({kCo, 4, 4}), kCo, 4, 4, 1, &valid);
  const Tensor c2 = relu(matmul_kmid(w2, cols * valid) + b2);  // [Co, 16]
  // 2x2 max pool: [Co, 2, 2, 2, 2] -> max over the window axes.
  const Tensor pooled = c2.reshape({kCo, 2, 2, 2, 2}).max_reduce(4).max_reduce(2);  // [Co, 2, 2]
  g.output("logits", matmul_kmid(pooled.reshape({1, kCo * 4}), head));
}

FuzzOptions options(DimMap dims, uint64_t seed) {
  FuzzOptions o;
  o.candidates = 40;
  o.seed = seed;
  o.dims = std::move(dims);
  o.budget.max_seconds = 20;
  return o;
}

}  // namespace

TEST(EquivalenceFuzz, Mlp) {
  Graph g;
  build_mlp(g);
  expect_equivalent(g, options({{"b", 3}}, 11), "mlp");
}

TEST(EquivalenceFuzz, CausalAttention) {
  Graph g;
  build_attention(g);
  expect_equivalent(g, options({{"s", 5}}, 12), "attention");
}

TEST(EquivalenceFuzz, LlamaTwoLayersWithKvCache) {
  Graph g;
  build_llama(g, 2);
  FuzzOptions o = options({{"s", 3}, {"p", 2}}, 13);
  // Token ids must index the vocabulary: random_inputs draws ints in [0, 3].
  expect_equivalent(g, o, "llama-2");
}

TEST(EquivalenceFuzz, ConvNet) {
  Graph g;
  build_convnet(g);
  expect_equivalent(g, options({}, 14), "convnet");
}

TEST(EquivalenceFuzz, RecognisesTheMatmulsOfTheLlamaStack) {
  Graph g;
  build_llama(g, 2);
  EGraph eg;
  const ImportedGraph imp = import_graph(eg, g);
  run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  // 7 projections + 2 attention products per layer, and the lm head.
  size_t matmul_classes = 0;
  for (ClassId c : eg.class_ids()) matmul_classes += eg.has_op(c, kMatMulOp);
  EXPECT_EQ(matmul_classes, 2u * 9 + 1);
}

TEST(EquivalenceFuzz, SaturatingTheTwoLayerStackIsFast) {
  Graph g;
  build_llama(g, 2);
  EGraph eg;
  import_graph(eg, g);
  const auto t0 = std::chrono::steady_clock::now();
  const SaturationReport r =
      run_schedule(eg, RuleRegistry::global().pipeline(), RuleRegistry::global());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << r.to_string();
  EXPECT_EQ(r.reason, StopReason::Saturated);
  EXPECT_LT(s, 1.0) << "saturating the 2-layer stack took " << s << " s";
}

TEST(EquivalenceFuzz, SpecialValuesSurviveEveryCandidate) {
  // Identities that hold only for some inputs (x + 0.0, x * 0.0, (x*2)*0.5)
  // must not be applied; the exact ones must not change a bit. Inputs include
  // -0.0, NaN, +-inf and a value whose double overflows.
  Graph g;
  const Tensor x = g.input("x", {6});
  const Tensor i = g.input("i", {6}, DType::I32);
  g.output("plus_neg_zero", x + (-0.0));
  g.output("plus_zero", x + 0.0);
  g.output("times_one", x * 1.0);
  g.output("times_zero", x * 0.0);
  g.output("neg_neg", -(-x));
  g.output("double_half", (x * 2.0) * 0.5);
  g.output("via_f64", x.cast(DType::F64).cast(DType::F32));
  g.output("via_i32", x.cast(DType::I32).cast(DType::F32));
  g.output("int_ops", ((i * 0.0) + (i * -1.0) * -1.0 + i * 1.0 + 0.0) * 3.0);
  g.output("int_mod", i % (i * i + 1.0));  // i*i + 1 is never 0 mod 2^32
  g.output("less", x.lt(x * 1.0).cast(DType::F32));
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  FuzzOptions o = options({}, 15);
  o.inputs["x"] = TensorData::from_doubles(DType::F32, {6}, {-0.0, 0.0, nan, inf, -inf, 3e38});
  o.inputs["i"] = TensorData::from_ints(DType::I32, {6}, {0, -1, INT32_MAX, INT32_MIN, 7, -7});
  expect_equivalent(g, o, "special-values", false);

  // The original graph's values, from IEEE arithmetic by hand.
  const auto out = run_graph(g, o.inputs);
  EXPECT_FALSE(std::signbit(out.at("plus_zero").get(0)));     // -0 + +0 = +0
  EXPECT_TRUE(std::signbit(out.at("plus_neg_zero").get(0)));  // -0 + -0 = -0
  EXPECT_TRUE(std::isnan(out.at("times_zero").get(3)));       // inf * 0 = NaN
  EXPECT_TRUE(std::isinf(out.at("double_half").get(5)));      // 3e38 * 2 overflows in f32
  EXPECT_TRUE(std::signbit(out.at("neg_neg").get(0)));
}

TEST(EquivalenceFuzz, AWrongRuleIsCaughtAndNamed) {
  // exp2(x) = sin(x) is false; the fuzzer must report the class it broke.
  Graph g;
  build_attention(g);
  RuleRegistry registry(RuleRegistry::global());
  Ruleset bad("bad");
  bad.add(Rule("exp2-is-sin", "(Exp2 ?x)").to("(Sin ?x)"));
  registry.add_ruleset(bad);
  FuzzOptions o = options({{"s", 4}}, 16);
  o.registry = &registry;
  o.schedule = Schedule::seq({registry.pipeline(), Schedule::run({"bad"})});
  const FuzzResult r = fuzz_equivalence(g, o);
  ASSERT_FALSE(r.failures.empty());
  const std::string& f = r.failures.front();
  std::cout << "[fuzz wrong-rule] " << r.failures.size() << " failures; first: " << f << "\n";
  EXPECT_NE(f.find("candidate #"), std::string::npos) << f;
  EXPECT_NE(f.find("first differing class"), std::string::npos) << f;
  EXPECT_NE(f.find("(Sin c"), std::string::npos) << f;
  EXPECT_NE(f.find("HLIR node %"), std::string::npos) << f;
}
