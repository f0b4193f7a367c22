// nn modules: parameter naming, and the KV-cache path checked against the
// same module run without a cache on the whole sequence (the two computations
// share no code past the projections: index_copy + slices + an offset mask
// versus one causal attention). torch comparisons: python/tests/test_nn.py.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/nn/attention.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/transformer.hpp"
#include "luminal/reference/interpreter.hpp"

using namespace luminal;

namespace {

TensorData normal_data(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 0.3);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}

void bind_random(Interpreter& run, const nn::Module& m) {
  unsigned seed = 100;
  for (const nn::Parameter& p : m.parameters()) {
    std::vector<int64_t> shape;
    for (const Expr& d : p.tensor.shape()) shape.push_back(d.value());
    run.set_input(p.name, normal_data(shape, seed++));
  }
}

}  // namespace

TEST(NnModules, LinearParametersAndForward) {
  Graph g;
  nn::Linear lin(g, "layers.0.q_proj", 2, 3);
  ASSERT_EQ(lin.parameters().size(), 2u);
  EXPECT_EQ(lin.parameters()[0].name, "layers.0.q_proj.weight");
  EXPECT_EQ(to_string(lin.parameters()[0].tensor.shape()), "[3, 2]");
  EXPECT_EQ(lin.parameters()[1].name, "layers.0.q_proj.bias");
  Tensor x = g.input("x", {1, 2});
  g.output("y", lin(x));
  Interpreter run(g);
  run.set_input("layers.0.q_proj.weight",
                TensorData::from_doubles(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1}));
  run.set_input("layers.0.q_proj.bias", TensorData::from_doubles(DType::F32, {3}, {0, 10, 100}));
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, 2}, {2, 3}));
  run.run();
  const auto& y = run.output("y");
  EXPECT_EQ(y.get(0), 2);
  EXPECT_EQ(y.get(1), 13);
  EXPECT_EQ(y.get(2), 105);
}

TEST(NnModules, LlamaParameterNamesAreHuggingFaces) {
  Graph g;
  nn::LlamaConfig c;
  c.block.attention = {.hidden_size = 16, .num_heads = 4, .num_kv_heads = 2};
  c.block.intermediate_size = 32;
  c.vocab_size = 10;
  c.num_layers = 2;
  nn::LlamaModel m(g, c);
  std::set<std::string> names;
  for (const auto& p : m.parameters()) names.insert(p.name);
  for (const char* n :
       {"model.embed_tokens.weight", "model.layers.1.self_attn.k_proj.weight",
        "model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight",
        "model.layers.1.mlp.up_proj.weight", "model.norm.weight", "lm_head.weight"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(names.size(), 3u + 2u * 9u);
}

TEST(NnModules, KvCacheStepsEqualFullForward) {
  nn::AttentionConfig cfg{.hidden_size = 16, .num_heads = 4, .num_kv_heads = 2};
  // Full (uncached) forward over 6 tokens.
  Graph full;
  nn::Attention a(full, "attn", cfg);
  full.output("y", a.forward(full.input("x", {1, 6, 16})));
  Interpreter ref(full);
  bind_random(ref, a);
  TensorData xs = normal_data({1, 6, 16}, 7);
  ref.set_input("x", xs);
  ref.run();
  const TensorData& want = ref.output("y");
  // Cached: prefill 4 tokens, then 2 decode steps of 1.
  Graph g;
  nn::Attention b(g, "attn", cfg);
  nn::KVCache cache = b.make_cache(1, 8);
  nn::AttentionStep step = b.forward(g.input("x", {1, "s", 16}), "p", cache);
  g.output("y", step.out);
  nn::mark_cache_outputs(g, cache, step.cache);
  Interpreter run(g);
  bind_random(run, b);
  run.set_input("attn.k_cache", TensorData(DType::F32, {1, 2, 8, 4}));
  run.set_input("attn.v_cache", TensorData(DType::F32, {1, 2, 8, 4}));
  int64_t p = 0;
  for (int64_t s : {4, 1, 1}) {
    std::vector<double> chunk;
    for (int64_t i = p * 16; i < (p + s) * 16; ++i) chunk.push_back(xs.get(i));
    run.set_input("x", TensorData::from_doubles(DType::F32, {1, s, 16}, chunk));
    run.run({{"p", p}});
    const TensorData& y = run.output("y");
    for (int64_t i = 0; i < s * 16; ++i)
      EXPECT_NEAR(y.get(i), want.get(p * 16 + i), 1e-5) << "p=" << p << " i=" << i;
    run.set_input("attn.k_cache", run.output("attn.k_cache.next"));
    run.set_input("attn.v_cache", run.output("attn.v_cache.next"));
    p += s;
  }
}

// last_only: the block's output for the last position alone, from every
// position's keys and values (the cache gets them all): equal to the last row
// of the full cached step, with the same updated caches, for a prefill (s = 5)
// and a decode step (s = 1).
TEST(NnModules, LastOnlyStepIsTheLastRow) {
  nn::TransformerConfig cfg;
  cfg.attention = {.hidden_size = 16, .num_heads = 4, .num_kv_heads = 2};
  cfg.intermediate_size = 24;
  Graph g;
  nn::TransformerBlock b(g, "blk", cfg);
  nn::KVCache cache = b.make_cache(1, 8);
  const Tensor x = g.input("x", {1, "s", 16});
  nn::AttentionStep all = b.forward(x, "p", cache);
  nn::AttentionStep last = b.forward(x, "p", cache, std::nullopt, true);
  g.output("all", all.out);
  g.output("last", last.out);
  g.output("k_all", all.cache.k);
  g.output("k_last", last.cache.k);
  g.output("v_all", all.cache.v);
  g.output("v_last", last.cache.v);
  Interpreter run(g);
  bind_random(run, b);
  run.set_input("blk.self_attn.k_cache", normal_data({1, 2, 8, 4}, 3));
  run.set_input("blk.self_attn.v_cache", normal_data({1, 2, 8, 4}, 4));
  for (const auto& [s, p] : {std::pair<int64_t, int64_t>{5, 2}, {1, 6}}) {
    run.set_input("x", normal_data({1, s, 16}, 11));
    run.run({{"p", p}});
    const TensorData& want = run.output("all");
    const TensorData& got = run.output("last");
    ASSERT_EQ(got.shape(), (std::vector<int64_t>{1, 1, 16}));
    for (int64_t i = 0; i < 16; ++i)
      EXPECT_NEAR(got.get(i), want.get((s - 1) * 16 + i), 1e-6) << "s=" << s << " i=" << i;
    for (const char* c : {"k", "v"}) {
      const TensorData& a = run.output(std::string(c) + "_all");
      const TensorData& l = run.output(std::string(c) + "_last");
      for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get(i), l.get(i)) << c << " " << i;
    }
  }
}

TEST(NnModules, BadConfigsThrow) {
  Graph g;
  EXPECT_THROW(nn::Attention(g, "a", {.hidden_size = 16, .num_heads = 4, .num_kv_heads = 3}),
               ShapeError);
  EXPECT_THROW(
      nn::MoE(g, "m", {.hidden_size = 8, .intermediate_size = 8, .num_experts = 2, .top_k = 3}),
      ShapeError);
}
