#include "luminal/models/causal_lm.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "luminal/error.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/models/rope_scaling.hpp"
#include "luminal/nn/transformer.hpp"
#include "luminal/tokenizer/chat_template.hpp"
#include "luminal/tokenizer/decode_stream.hpp"
#include "model_support.hpp"

namespace luminal::models {

namespace fs = std::filesystem;
using detail::Clock;
using detail::ms_since;

namespace {

constexpr const char* kTokens = "tokens";
constexpr const char* kLogits = "logits";

// The dtype the model computes in. GGUF block-quantized weights (Q8_0, Q4_0,
// Q4_1) stay quantized in the graph (nn::ParameterStorage): the CPU backend's
// quantized GEMV/GEMM and embedding kernels decode them inside the kernels.
DType weight_dtype() {
  return DType::F32;
}

// HF's (non-persistent) buffer name: the inverse RoPE frequencies of a model
// with RoPE scaling, computed on the host (rope_scaling.hpp) and bound as an input.
constexpr const char* kInvFreq = "model.rotary_emb.inv_freq";

// The decoder as a graph: nn::LlamaModel's modules and names, but the LM head
// only over the positions asked for, and one rotary table (from rope_theta, or
// from kInvFreq with RoPE scaling) built once and read by every layer: built
// per layer (nn::Attention's default) it costs 30 table kernels a step.
class DecoderGraph {
public:
  DecoderGraph(Graph& g, const LlamaModelConfig& config)
      : embed_(g, "model.embed_tokens", config.llama.vocab_size, hidden(config), dtype(config)),
        norm_(g, "model.norm", {hidden(config)}, config.llama.block.rms_norm_eps, true,
              dtype(config)) {
    const nn::LlamaConfig& c = config.llama;
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const std::string name = "model.layers." + std::to_string(i);
      layers_.emplace_back(g, name, c.block);
    }
    rotary_dim_ = config.head_dim();
    rope_theta_ = c.block.attention.rope_theta;
    rope_scaled_ = config.rope_scaling.has_value();
    if (!c.tie_word_embeddings)
      lm_head_.emplace(g, "lm_head", hidden(config), c.vocab_size, false, dtype(config));
  }

  // tokens [1, s] at cache position p; cache length m. Returns the cache input names.
  std::vector<std::string> build(Graph& g, bool all_logits, const Expr& cache_length) const {
    Tensor tokens = g.input(kTokens, {1, "s"}, DType::I32);
    Tensor h = embed_(tokens);
    std::vector<std::string> cache_names;
    auto step = [&](const nn::KVCache& cache, const nn::AttentionStep& out) {
      nn::mark_cache_outputs(g, cache, out.cache);
      cache_names.push_back(g.node(cache.k.node()).name);
      cache_names.push_back(g.node(cache.v.node()).name);
      h = out.out;
    };
    const RopeTables rope =
        rope_scaled_ ? rope_tables(g.input(kInvFreq, {rotary_dim_ / 2}, DType::F32, true), "p",
                                   tokens.dim(1))
                     : rope_cache(g, tokens.dim(1), rotary_dim_, rope_theta_, "p");
    // Without all_logits only the last position's output is needed: the last
    // layer computes its queries, attention output and feed-forward for that
    // row alone (every position still enters its cache), as llama.cpp's
    // output-row selection; a prefill skips ~1/num_layers of its GEMM work.
    for (size_t i = 0; i < layers_.size(); ++i) {
      const nn::KVCache cache = layers_[i].make_cache(1, cache_length);
      step(cache, layers_[i].forward(h, "p", cache, rope, !all_logits && i + 1 == layers_.size()));
    }
    if (!all_logits && layers_.empty()) {
      const Expr s = h.dim(1);
      h = h.slice(1, (s - 1).simplify(), s);  // the last position only
    }
    Tensor n = norm_(h);
    Tensor logits = lm_head_ ? (*lm_head_)(n) : linear(n, embed_.value(embed_.weight()));
    g.output(kLogits, logits);
    return cache_names;
  }

private:
  static int64_t hidden(const LlamaModelConfig& c) { return c.llama.block.attention.hidden_size; }
  static DType dtype(const LlamaModelConfig& c) { return c.llama.block.attention.dtype; }
  nn::Embedding embed_;
  std::vector<nn::TransformerBlock> layers_;
  int64_t rotary_dim_ = 0;
  double rope_theta_ = 10000.0;
  bool rope_scaled_ = false;  // the tables come from kInvFreq
  nn::RMSNorm norm_;
  std::optional<nn::Linear> lm_head_;
};

}  // namespace

struct CausalLM::Impl : detail::LoadedModel {
  LlamaModelConfig config;
  std::vector<std::string> cache_names;
  std::vector<bool> cache_in_place;  // per cache: updated in place by the program (no rebinding)
  std::vector<int64_t> cache_shape;  // [1, kv_heads, m, head_dim] with m set per run
  bool all_logits = false;
  int64_t cache_length = 0;  // 0: the dim "m"
  bool gguf = false;
  // RoPE scaling: the sequence length the bound inverse frequencies are for
  // (dynamic NTK recomputes them as transformers' dynamic_rope_update does).
  int64_t rope_len = 0;

  int64_t vocab() const { return config.llama.vocab_size; }

  // Fresh zero caches with room for `needed` tokens.
  void reset_cache(int64_t needed) {
    if (cache_length > 0 && needed > cache_length)
      throw Error("CausalLM: " + std::to_string(needed) + " tokens do not fit the KV cache of " +
                  std::to_string(cache_length) +
                  " positions: give it more (CausalLMOptions::cache_length; `luminal generate "
                  "--context N`, cache_length= in Python)");
    cache_shape[2] = cache_length > 0 ? cache_length : needed;
    for (const std::string& name : cache_names)
      model->set_input(name, detail::zeros(weight_dtype(), cache_shape));
  }

  void bind_inv_freq(int64_t seq_len) {
    const std::vector<float> inv =
        rope_inv_freq(config.head_dim(), config.llama.block.attention.rope_theta,
                      config.rope_scaling, config.context_length, seq_len);
    TensorData t(DType::F32, {static_cast<int64_t>(inv.size())});
    for (size_t i = 0; i < inv.size(); ++i) t.set(static_cast<int64_t>(i), inv[i]);
    model->set_input(kInvFreq, std::move(t));
    rope_len = std::max(seq_len, config.context_length);
  }

  // transformers' dynamic_frequency_update for a forward over positions
  // < seq_len: grow past the longest length seen, back to the original
  // frequencies for a sequence within the context after a longer one.
  void update_dynamic_rope(int64_t seq_len) {
    const int64_t seen = rope_len;
    if (seq_len > seen) bind_inv_freq(seq_len);
    if (seq_len < config.context_length && seen > config.context_length) bind_inv_freq(0);
  }

  // Runs `tokens` at position `past` and binds the updated caches.
  const TensorData& step(std::span<const int32_t> tokens, int64_t past) {
    const int64_t s = static_cast<int64_t>(tokens.size());
    if (s == 0) throw Error("CausalLM: no tokens to run");
    if (past + s > cache_shape[2])
      throw Error("CausalLM: position " + std::to_string(past + s) + " exceeds the cache length " +
                  std::to_string(cache_shape[2]));
    TensorData t(DType::I32, {1, s});
    for (int64_t i = 0; i < s; ++i) {
      if (tokens[i] < 0 || tokens[i] >= vocab())
        throw IndexError("CausalLM: token id " + std::to_string(tokens[i]) +
                         " is outside the vocabulary [0, " + std::to_string(vocab()) + ")");
      t.set_int(i, tokens[i]);
    }
    model->set_input(kTokens, std::move(t));
    if (config.rope_scaling && config.rope_scaling->type == "dynamic")
      update_dynamic_rope(past + s);
    model->run({{"p", past}});
    // Caches the program updates in place need no rebinding (no copy).
    for (size_t c = 0; c < cache_names.size(); ++c)
      if (!cache_in_place[c])
        model->set_input(cache_names[c], model->output(cache_names[c] + ".next"));
    return model->output(kLogits);
  }
};

CausalLM::CausalLM(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CausalLM::CausalLM(CausalLM&&) noexcept = default;
CausalLM& CausalLM::operator=(CausalLM&&) noexcept = default;
CausalLM::~CausalLM() = default;

CausalLM CausalLM::load(const std::string& path, const CausalLMOptions& options) {
  if (options.warmup_tokens < 0) throw Error("CausalLM: warmup_tokens must be >= 0");
  const Clock::time_point start = Clock::now();
  auto impl = std::make_unique<Impl>();
  impl->all_logits = options.all_logits;
  if (options.progress) options.progress("reading " + path);
  const fs::path p(path);
  if (!fs::exists(p)) throw Error(path + ": no such file or directory");
  BindOptions bind;
  // Weights stored in the dtype the graph wants are read straight from the
  // file's mapping (the model keeps its files open): no second copy in memory.
  bind.borrow_mapping = true;
  bind.convert_dtypes = true;  // quantized -> f32 (see weight_dtype)
  if (fs::is_directory(p)) {
    impl->config = llama_config_from_hf_json(detail::read_text_file(p / "config.json"),
                                             (p / "config.json").string());
    impl->open_hf_dir(p);
  } else {
    auto gguf = std::make_unique<GGUFFile>(GGUFFile::open(path));
    impl->config = llama_config_from_gguf(*gguf);
    if (gguf->has("tokenizer.ggml.model")) impl->tok = tokenizer::Tokenizer::from_gguf(*gguf);
    impl->files.push_back(std::move(gguf));
    impl->gguf = true;
    bind.tensor_name = [](std::string_view name) { return gguf_tensor_name(name); };
  }
  check_supported(impl->config);
  impl->config.llama.block.attention.dtype = weight_dtype();

  // Quantized GGUF matrices are bound as they are stored (rows of whole blocks).
  std::optional<nn::ParameterStorage> storage;
  if (impl->gguf) {
    const WeightSource* file = impl->files.back().get();
    storage.emplace([file](const std::string& name, DType compute) {
      const StoredTensor* t = file->find(gguf_tensor_name(name));
      if (t == nullptr || !t->dtype || !is_quantized(*t->dtype) || t->shape.size() != 2 ||
          t->shape.back() % 32 != 0)
        return compute;
      return *t->dtype;
    });
  }
  const DecoderGraph decoder(*impl->graph, impl->config);
  storage.reset();
  if (options.cache_length < 0) throw Error("CausalLM: cache_length must be >= 0");
  impl->cache_length = options.cache_length;
  impl->cache_names =
      decoder.build(*impl->graph, options.all_logits,
                    options.cache_length > 0 ? Expr(options.cache_length) : Expr("m"));
  const nn::AttentionConfig& a = impl->config.llama.block.attention;
  impl->cache_shape = {1, a.num_kv_heads ? a.num_kv_heads : a.num_heads, 0,
                       impl->config.head_dim()};

  // Profile a short step into a cache with room for it (the decode kernels:
  // fewer than 16 rows take the GEMV paths) and, unless the caller chose, a
  // 32-token prefill (the GEMM and tiled-attention paths), candidates timed at
  // both; the close contenders also at a 128-token prefill, where products
  // that pay a per-call weight decoding (CpuQMatMulAmx) win, while at 32
  // tokens they tie with the int16 ones.
  DimMap profile = {{"s", 4}, {"p", 4}};
  if (options.cache_length == 0) profile["m"] = 64;
  CausalLMOptions opts = options;
  const bool timed = options.device == "cpu-jit" || options.device == "cpu";
  if (timed && opts.compile.profile_dims.empty() && opts.compile.extra_profile_dims.empty() &&
      opts.compile.confirm_profile_dims.empty()) {
    if (options.cache_length == 0 || options.cache_length >= 32)
      opts.compile.extra_profile_dims.push_back({{"s", 32}, {"p", 0}});
    if (options.cache_length == 0)
      opts.compile.confirm_profile_dims.push_back({{"s", 128}, {"p", 0}, {"m", 128}});
    else if (options.cache_length >= 128)
      opts.compile.confirm_profile_dims.push_back({{"s", 128}, {"p", 0}});
  }
  std::set<std::string> runtime(impl->cache_names.begin(), impl->cache_names.end());
  runtime.insert(kTokens);
  if (impl->config.rope_scaling) runtime.insert(kInvFreq);
  impl->compile_and_bind(opts, profile, bind, runtime, start);
  if (impl->config.rope_scaling) impl->bind_inv_freq(0);
  for (const std::string& name : impl->cache_names)
    impl->cache_in_place.push_back(impl->model->update_in_place(name + ".next"));
  if (options.warmup_tokens > 0 && timed) {
    if (options.progress) options.progress("warming up");
    const Clock::time_point w0 = Clock::now();
    int64_t n = options.warmup_tokens;
    if (impl->cache_length > 0) n = std::min(n, impl->cache_length - 1);
    if (n > 0) {
      const std::vector<int32_t> tokens(static_cast<size_t>(n), 0);  // any valid id
      impl->reset_cache(n + 1);
      impl->step(tokens, 0);
      impl->step(std::span<const int32_t>(tokens).first(1), n);
      // (forward() and generate() start from a fresh cache)
    }
    impl->stats.warmup_ms = ms_since(w0);
  }
  return CausalLM(std::move(impl));
}

const LlamaModelConfig& CausalLM::config() const {
  return impl_->config;
}
const LoadStats& CausalLM::load_stats() const {
  return impl_->stats;
}
const compiler::CompileStats& CausalLM::compile_stats() const {
  return impl_->model->stats();
}
bool CausalLM::has_tokenizer() const {
  return impl_->tok.has_value();
}
const tokenizer::Tokenizer& CausalLM::tokenizer() const {
  if (!impl_->tok)
    throw Error(
        "CausalLM: the model has no tokenizer (no tokenizer.json / GGUF tokenizer metadata)");
  return *impl_->tok;
}

std::vector<int32_t> CausalLM::encode_prompt(std::string_view prompt, bool chat,
                                             const std::optional<std::string>& system) const {
  const tokenizer::Tokenizer& tok = tokenizer();
  if (!chat) return tok.encode_ids(prompt, true);
  tokenizer::ChatTemplate tmpl = tok.chat_template().empty()
                                     ? tokenizer::ChatTemplate()
                                     : tokenizer::ChatTemplate::from_jinja(tok.chat_template());
  std::vector<tokenizer::ChatMessage> messages;
  if (system) messages.push_back({"system", *system});
  messages.push_back({"user", std::string(prompt)});
  // The template writes the special tokens itself (as HF apply_chat_template).
  return tok.encode_ids(tmpl.apply(messages, true), false);
}

std::vector<int32_t> CausalLM::eos_tokens() const {
  std::vector<int32_t> ids;
  if (!impl_->tok) return ids;
  if (auto eos = impl_->tok->special_ids().eos) ids.push_back(*eos);
  if (auto im_end = impl_->tok->token_to_id("<|im_end|>"))
    if (std::find(ids.begin(), ids.end(), *im_end) == ids.end()) ids.push_back(*im_end);
  return ids;
}

TensorData CausalLM::forward(std::span<const int32_t> tokens) {
  impl_->reset_cache(static_cast<int64_t>(tokens.size()));
  return impl_->step(tokens, 0);  // a copy: the program keeps its output
}

GenerationResult CausalLM::generate(std::span<const int32_t> prompt,
                                    const GenerationOptions& options,
                                    const TokenCallback& on_token) {
  if (prompt.empty()) throw Error("generate: the prompt has no tokens");
  if (options.max_tokens < 0)
    throw Error("generate: max tokens must be >= 0, got " + std::to_string(options.max_tokens));
  Sampler sampler(options.sampling);
  std::set<int32_t> stops(options.stop_tokens.begin(), options.stop_tokens.end());
  if (options.stop_at_eos)
    for (int32_t id : eos_tokens()) stops.insert(id);

  GenerationResult r;
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  r.finish_reason = "length";
  if (options.max_tokens == 0) return r;
  std::vector<int32_t> history(prompt.begin(), prompt.end());
  const int64_t vocab = impl_->vocab();
  // The last position's row (all_logits models output every position).
  auto last_row = [&](const TensorData& logits) {
    const int64_t rows = logits.numel() / vocab;
    const float* data = reinterpret_cast<const float*>(logits.data()) + (rows - 1) * vocab;
    return std::span<const float>(data, static_cast<size_t>(vocab));
  };
  std::optional<tokenizer::DecodeStream> stream;
  if (impl_->tok) stream.emplace(*impl_->tok, true);

  // A fixed-length cache bounds the generation ("length" when it is full).
  int64_t max_tokens = options.max_tokens;
  if (impl_->cache_length > 0)
    max_tokens = std::min(max_tokens, impl_->cache_length - r.prompt_tokens + 1);
  impl_->reset_cache(std::max(r.prompt_tokens, r.prompt_tokens + max_tokens - 1));
  Clock::time_point t0 = Clock::now();
  int32_t next = sampler.sample(last_row(impl_->step(prompt, 0)), history);
  r.ttft_ms = ms_since(t0);
  double decode_ms = 0;
  int64_t decode_steps = 0;
  for (;;) {
    if (stops.count(next)) {
      r.finish_reason = "stop";
      break;
    }
    r.tokens.push_back(next);
    history.push_back(next);
    const std::string piece = stream ? stream->step(next) : std::string();
    r.text += piece;
    if (on_token && !on_token(next, piece)) {
      r.finish_reason = "stop";
      break;
    }
    if (static_cast<int64_t>(r.tokens.size()) >= max_tokens) break;
    t0 = Clock::now();
    const int32_t token[1] = {next};
    next = sampler.sample(last_row(impl_->step(token, static_cast<int64_t>(history.size()) - 1)),
                          history);
    decode_ms += ms_since(t0);
    ++decode_steps;
  }
  r.tpot_ms = decode_steps ? decode_ms / static_cast<double>(decode_steps) : 0.0;
  // The whole text at once: the stream may hold back an incomplete character.
  if (impl_->tok) r.text = impl_->tok->decode(r.tokens, true);
  return r;
}

}  // namespace luminal::models
