// CausalLM on a tiny random Llama written twice: as a Hugging Face directory
// (config.json + safetensors, HF names, rotate-half RoPE) and as a GGUF the
// way llama.cpp's converter writes it (llama.cpp names, q / k rows permuted
// for interleaved RoPE, tied embeddings without output.weight). The two must
// give the same logits and tokens; and the KV-cache path must agree with
// nn::LlamaModel's uncached forward over the whole sequence on the
// interpreter. (The comparison with transformers is python/tests/test_models.py.)

#include "luminal/models/causal_lm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/io/gguf_writer.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/nn/transformer.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::models {
namespace {

constexpr int64_t kHidden = 16, kHeads = 4, kKvHeads = 2, kFfn = 24, kVocab = 20, kLayers = 2;
constexpr int64_t kHeadDim = kHidden / kHeads;

struct Weights {
  std::vector<std::pair<std::string, TensorData>> tensors;  // HF names
};

Weights random_weights() {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 0.4);
  Weights w;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, bool ones_ish) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = ones_ish ? 1.0 + 0.1 * normal(rng) : normal(rng);
    w.tensors.emplace_back(name, TensorData::from_doubles(DType::F32, shape, v));
  };
  add("model.embed_tokens.weight", {kVocab, kHidden}, false);
  for (int64_t i = 0; i < kLayers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(p + "input_layernorm.weight", {kHidden}, true);
    add(p + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}, false);
    add(p + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}, false);
    add(p + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}, false);
    add(p + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}, false);
    add(p + "post_attention_layernorm.weight", {kHidden}, true);
    add(p + "mlp.gate_proj.weight", {kFfn, kHidden}, false);
    add(p + "mlp.up_proj.weight", {kFfn, kHidden}, false);
    add(p + "mlp.down_proj.weight", {kHidden, kFfn}, false);
  }
  add("model.norm.weight", {kHidden}, true);
  return w;
}

// llama.cpp's convert_hf_to_gguf permute(): rows (head, half, i) -> (head, i, half).
TensorData permute_rows(const TensorData& w, int64_t heads) {
  const int64_t rows = w.shape()[0], cols = w.shape()[1], d = rows / heads;
  TensorData out(DType::F32, w.shape());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t i = 0; i < d / 2; ++i)
        for (int64_t c = 0; c < cols; ++c)
          out.set((h * d + 2 * i + half) * cols + c,
                  w.get((h * d + half * (d / 2) + i) * cols + c));
  return out;
}

// `rope` is extra config.json text (a rope_scaling entry).
void write_hf(const Weights& w, const std::string& dir, const std::string& rope = "") {
  std::vector<std::pair<std::string, const TensorData*>> list;
  for (const auto& [name, t] : w.tensors) list.emplace_back(name, &t);
  write_safetensors(dir + "/model.safetensors", list, {{"format", "pt"}});
  std::ofstream(dir + "/config.json") << R"({"model_type": "llama", "hidden_size": 16,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 24,
    "num_hidden_layers": 2, "vocab_size": 20, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    "tie_word_embeddings": true, "max_position_embeddings": 64)"
                                      << rope << "}";
}

// `extra` adds RoPE-scaling metadata or tensors.
void write_gguf(const Weights& w, const std::string& path,
                const std::function<void(GGUFWriter&)>& extra = {}) {
  GGUFWriter g;
  if (extra) extra(g);
  g.add_string("general.architecture", "llama");
  g.add_u32("llama.block_count", kLayers);
  g.add_u32("llama.embedding_length", kHidden);
  g.add_u32("llama.feed_forward_length", kFfn);
  g.add_u32("llama.attention.head_count", kHeads);
  g.add_u32("llama.attention.head_count_kv", kKvHeads);
  g.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  g.add_f32("llama.rope.freq_base", 10000.0f);
  g.add_u32("llama.vocab_size", kVocab);
  for (const auto& [name, t] : w.tensors) {
    const std::string gname = gguf_tensor_name(name);
    if (name.find("q_proj") != std::string::npos) {
      g.add_tensor(gname, permute_rows(t, kHeads));
    } else if (name.find("k_proj") != std::string::npos) {
      g.add_tensor(gname, permute_rows(t, kKvHeads));
    } else {
      g.add_tensor(gname, t);
    }
  }
  g.write(path);
}

CausalLMOptions reference_options(bool all_logits) {
  CausalLMOptions o;
  o.device = "reference";
  o.all_logits = all_logits;
  o.cache_length = 16;
  o.compile.cache = false;
  o.compile.search_iters = 2;
  return o;
}

const std::vector<int32_t> kPrompt = {3, 17, 5, 0, 11, 19};

TEST(CausalLM, GgufAndSafetensorsGiveTheSameModel) {
  io_test::TempDir dir;
  const Weights w = random_weights();
  write_hf(w, dir.file(""));
  write_gguf(w, dir.file("tiny.gguf"));
  CausalLM hf = CausalLM::load(dir.file(""), reference_options(true));
  CausalLM gguf = CausalLM::load(dir.file("tiny.gguf"), reference_options(true));
  EXPECT_EQ(hf.config().llama.block.attention.rope_layout, RopeLayout::HalfRotate);
  EXPECT_EQ(gguf.config().llama.block.attention.rope_layout, RopeLayout::Interleaved);
  const TensorData a = hf.forward(kPrompt);
  const TensorData b = gguf.forward(kPrompt);
  ASSERT_EQ(a.shape(), (std::vector<int64_t>{1, 6, kVocab}));
  ASSERT_EQ(b.shape(), a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.get(i), b.get(i), 1e-5) << i;
  GenerationOptions g;
  g.max_tokens = 8;
  g.stop_at_eos = false;
  const GenerationResult ra = hf.generate(kPrompt, g);
  EXPECT_EQ(ra.tokens.size(), 8u);
  EXPECT_EQ(ra.tokens, gguf.generate(kPrompt, g).tokens);
  EXPECT_FALSE(hf.has_tokenizer());
  EXPECT_THROW(hf.tokenizer(), Error);
}

// A prompt longer than the KV cache is an error naming both lengths and the
// option that sets the cache's (not a crash, not a truncated prompt).
TEST(CausalLM, PromptLongerThanTheCacheIsAnError) {
  io_test::TempDir dir;
  write_hf(random_weights(), dir.file(""));
  CausalLM lm = CausalLM::load(dir.file(""), reference_options(false));
  std::vector<int32_t> prompt;
  for (int i = 0; i < 17; ++i) prompt.push_back(i % 7);  // the cache holds 16
  GenerationOptions g;
  g.max_tokens = 2;
  try {
    lm.generate(prompt, g);
    FAIL() << "a 17-token prompt ran in a 16-position cache";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("17 tokens do not fit the KV cache of 16 positions"), std::string::npos)
        << what;
    EXPECT_NE(what.find("--context"), std::string::npos) << what;
  }
  prompt.pop_back();  // 16 tokens fit: one generated token, no decode step
  EXPECT_EQ(lm.generate(prompt, g).tokens.size(), 1u);
}

// Loading reports its steps (progress) and, while compiling, where the
// search stands (progress_detail: the part and the candidate of the budget).
TEST(CausalLM, ProgressReportsTheStepsAndTheSearch) {
  io_test::TempDir dir;
  write_hf(random_weights(), dir.file(""));
  CausalLMOptions o = reference_options(false);
  std::vector<std::string> steps, details;
  o.progress = [&](std::string_view m) { steps.emplace_back(m); };
  o.progress_detail = [&](std::string_view d) { details.emplace_back(d); };
  CausalLM::load(dir.file(""), o);
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps[0].rfind("reading ", 0), 0u) << steps[0];
  EXPECT_NE(std::find(steps.begin(), steps.end(), "compiling for reference"), steps.end());
  ASSERT_FALSE(details.empty());
  EXPECT_NE(details.front().find("candidate 1/2"), std::string::npos) << details.front();
  for (const std::string& d : details)
    EXPECT_TRUE(d.find("candidate ") != std::string::npos ||
                d.find("timing the best candidates again") != std::string::npos)
        << d;
}

// The warm-up run after loading (cpu-jit) leaves no trace: the same logits,
// bit for bit, and the same greedy tokens as the same program loaded without it.
TEST(CausalLM, WarmupLeavesNoTrace) {
  io_test::TempDir dir;
  const Weights w = random_weights();
  write_hf(w, dir.file(""));
  CausalLMOptions o = reference_options(false);
  o.device = "cpu-jit";
  o.compile.cache = true;  // both loads run the same program (the search is timed)
  o.warmup_tokens = 9;
  CausalLM warm = CausalLM::load(dir.file(""), o);
  o.warmup_tokens = 0;
  CausalLM cold = CausalLM::load(dir.file(""), o);
  EXPECT_GT(warm.load_stats().warmup_ms, 0.0);
  EXPECT_EQ(cold.load_stats().warmup_ms, 0.0);
  const TensorData a = warm.forward(kPrompt);
  const TensorData b = cold.forward(kPrompt);
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.get(i), b.get(i)) << i;
  GenerationOptions g;
  g.max_tokens = 6;
  g.stop_at_eos = false;
  EXPECT_EQ(warm.generate(kPrompt, g).tokens, cold.generate(kPrompt, g).tokens);
  o.warmup_tokens = -1;
  EXPECT_THROW(CausalLM::load(dir.file(""), o), Error);
}

// Prefill + one-token steps through the cache vs one uncached forward over
// the whole sequence (nn::LlamaModel on the interpreter).
TEST(CausalLM, CachedStepsMatchTheUncachedForward) {
  io_test::TempDir dir;
  const Weights w = random_weights();
  write_hf(w, dir.file(""));
  CausalLM lm = CausalLM::load(dir.file(""), reference_options(false));
  GenerationOptions g;
  g.max_tokens = 5;
  g.stop_at_eos = false;
  const GenerationResult r = lm.generate(kPrompt, g);

  Graph graph;
  nn::LlamaConfig c;
  c.block.attention = {.hidden_size = kHidden, .num_heads = kHeads, .num_kv_heads = kKvHeads};
  c.block.intermediate_size = kFfn;
  c.block.rms_norm_eps = 1e-5;
  c.vocab_size = kVocab;
  c.num_layers = kLayers;
  c.tie_word_embeddings = true;
  nn::LlamaModel model(graph, c);
  graph.output("logits", model.forward(graph.input("tokens", {1, "s"}, DType::I32)));
  Interpreter run(graph);
  for (const auto& [name, t] : w.tensors) run.set_input(name, t);
  std::vector<int32_t> seq = kPrompt;
  for (int32_t expected : r.tokens) {
    TensorData t(DType::I32, {1, static_cast<int64_t>(seq.size())});
    for (size_t i = 0; i < seq.size(); ++i) t.set_int(static_cast<int64_t>(i), seq[i]);
    run.set_input("tokens", t);
    run.run();
    const TensorData& logits = run.output("logits");
    const int64_t last = (static_cast<int64_t>(seq.size()) - 1) * kVocab;
    int32_t best = 0;
    for (int32_t v = 1; v < kVocab; ++v)
      if (logits.get(last + v) > logits.get(last + best)) best = v;
    EXPECT_EQ(best, expected) << "position " << seq.size();
    seq.push_back(best);
  }
  // The last-position output of a prefill equals the uncached last row.
  const TensorData last = lm.forward(kPrompt);
  ASSERT_EQ(last.shape(), (std::vector<int64_t>{1, 1, kVocab}));
}

// RoPE scaling written both ways: HF rope_scaling in config.json and what
// llama.cpp's converter writes (rope.scaling.* metadata; for Llama 3.1 the
// rope_freqs.weight divisors, computed here from Meta's formula). Same
// logits, and different from the unscaled model's. (transformers is the
// oracle in python/tests/test_models.py.)
TEST(CausalLM, RopeScalingFromGgufAndConfigJsonAgree) {
  const Weights w = random_weights();
  io_test::TempDir plain_dir;
  write_hf(w, plain_dir.file(""));
  const TensorData plain =
      CausalLM::load(plain_dir.file(""), reference_options(true)).forward(kPrompt);
  // Llama 3.1 divisors for head_dim 4 (frequencies 1 and 0.01), original
  // context 8, low / high frequency factors 1 / 2, factor 8: wavelength 6.28
  // lies between 8 / 2 and 8 / 1 (interpolated), 628 above (divided by 8).
  const double wavelen = 2 * 3.141592653589793;
  const double smooth = (8.0 / wavelen - 1.0) / (2.0 - 1.0);
  const std::vector<float> factors = {static_cast<float>(1.0 / ((1 - smooth) / 8 + smooth)), 8.0f};
  struct Case {
    std::string json;
    std::function<void(GGUFWriter&)> gguf;
  };
  const std::vector<Case> cases = {
      {R"(, "rope_scaling": {"type": "linear", "factor": 4.0})",
       [](GGUFWriter& g) {
         g.add_string("llama.rope.scaling.type", "linear");
         g.add_f32("llama.rope.scaling.factor", 4.0f);
       }},
      {R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 2.0, "original_max_position_embeddings": 8})",
       [&](GGUFWriter& g) {
         g.add_tensor("rope_freqs.weight", GGMLType::F32, {2}, std::as_bytes(std::span(factors)));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    io_test::TempDir dir;
    write_hf(w, dir.file(""), c.json);
    write_gguf(w, dir.file("scaled.gguf"), c.gguf);
    CausalLM hf = CausalLM::load(dir.file(""), reference_options(true));
    CausalLM gguf = CausalLM::load(dir.file("scaled.gguf"), reference_options(true));
    ASSERT_TRUE(gguf.config().rope_scaling.has_value());
    const TensorData a = hf.forward(kPrompt);
    const TensorData b = gguf.forward(kPrompt);
    double max_change = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      EXPECT_NEAR(a.get(i), b.get(i), 1e-5) << i;
      max_change = std::max(max_change, std::abs(a.get(i) - plain.get(i)));
    }
    EXPECT_GT(max_change, 1e-2);  // scaling changed the logits
  }
}

TEST(CausalLM, ErrorsNameThePath) {
  io_test::TempDir dir;
  try {
    CausalLM::load(dir.file("missing.gguf"), reference_options(false));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.gguf"), std::string::npos) << e.what();
  }
  std::ofstream(dir.file("config.json")) << R"({"model_type": "llama"})";
  EXPECT_THROW(CausalLM::load(dir.file(""), reference_options(false)), Error);
}

}  // namespace
}  // namespace luminal::models
