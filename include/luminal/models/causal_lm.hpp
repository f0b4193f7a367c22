#pragma once
// A Llama-family causal language model ready to run: weights, tokenizer and
// one compiled program with a KV cache, plus the generation loop.
//
// The graph: tokens [1, s] at cache position p (dims "s" and "p") -> the
// decoder (nn::TransformerBlock with Hugging Face parameter names) -> logits.
// Each layer's KV cache is a persistent input [1, kv_heads, m, head_dim]
// (m a constant, or a dim too: CausalLMOptions::cache_length), so one compiled
// program serves every prompt length and every decode position: prefill runs s = prompt
// length at p = 0, then each decode step s = 1 at p = tokens so far; the
// updated caches (`<cache>.next` outputs) are bound back as the next inputs.
// Only the last position goes through the LM head unless all_logits is set,
// so a prefill never materialises [s, vocab] logits it does not need.
//
// Weights: GGUF Q8_0 / Q4_0 / Q4_1 matrices are bound as they are stored
// (nn::ParameterStorage; the CPU backend decodes them inside its kernels);
// other dtypes (F16 / BF16 ...) are converted to f32 at load.
//
// RoPE scaling (linear, dynamic NTK, llama3, GGUF rope_freqs): the inverse
// frequencies are an input (`model.rotary_emb.inv_freq`) computed on the host
// at load; dynamic NTK recomputes them when the sequence outgrows the context,
// as transformers does, so no length ever needs a recompile.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/core/tensor_data.hpp"
#include "luminal/models/llama_config.hpp"
#include "luminal/models/load_options.hpp"
#include "luminal/models/sampler.hpp"
#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::models {

struct CausalLMOptions : LoadOptions {
  /// Output logits for every position ([s, vocab]) instead of the last one.
  bool all_logits = false;
  /// KV-cache length: the most tokens (prompt + generated) one sequence can
  /// hold. 0 makes it a dim ("m") sized per call to exactly what the call
  /// needs, the cheapest choice; a constant is the default because the
  /// cpu-jit backend miscompiles the symbolic form for now (the compiler's
  /// winner check rejects it).
  int64_t cache_length = 512;
  /// After loading, one forward over this many tokens and one decode step run
  /// (forward() and generate() start from a fresh cache), so that the first real prompt does not
  /// pay one-time costs: the first touches of the arena and the weights, BLAS's per-thread buffers,
  /// the kernels' code pages (llama.cpp warms up the same way). 0: none. The CPU backend only (the
  /// interpreter has nothing to warm).
  int64_t warmup_tokens = 32;
};

struct GenerationOptions {
  SamplingOptions sampling;
  int64_t max_tokens = 128;
  /// Tokens that end generation besides the model's EOS (not part of the result).
  std::vector<int32_t> stop_tokens;
  bool stop_at_eos = true;
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // generated ids, without the stop token
  std::string text;             // their decoded text (special tokens skipped)
  int64_t prompt_tokens = 0;
  std::string finish_reason;  // "stop" (a stop token / EOS / the callback), "length"
  double ttft_ms = 0;         // prefill forward over the prompt + choosing the first token
  double tpot_ms = 0;         // mean time of one decode step (0 with a single token)
};

/// Called once per generated token with its id and the text it completes
/// (possibly empty mid-character); returning false stops generation.
using TokenCallback = std::function<bool(int32_t id, std::string_view text)>;

class CausalLM {
public:
  /// A GGUF file, or a Hugging Face directory (config.json, *.safetensors,
  /// optional tokenizer.json). Throws Error / FormatError naming the file.
  static CausalLM load(const std::string& path, const CausalLMOptions& options = {});
  CausalLM(CausalLM&&) noexcept;
  CausalLM& operator=(CausalLM&&) noexcept;
  ~CausalLM();

  const LlamaModelConfig& config() const;
  const LoadStats& load_stats() const;
  const compiler::CompileStats& compile_stats() const;
  bool has_tokenizer() const;
  /// Throws Error when the model came without a tokenizer.
  const tokenizer::Tokenizer& tokenizer() const;

  /// Prompt ids: the raw text (with the tokenizer's own special tokens), or
  /// with `chat` the single-user-message chat prompt (ChatML, the model's
  /// template; `system` replaces the default system prompt).
  std::vector<int32_t> encode_prompt(std::string_view prompt, bool chat = false,
                                     const std::optional<std::string>& system = std::nullopt) const;
  /// The model's EOS id(s): tokenizer EOS, and <|im_end|> when it exists.
  std::vector<int32_t> eos_tokens() const;

  /// One forward over `tokens` from an empty cache: logits [s, vocab] with
  /// all_logits, else [1, vocab] (the last position).
  TensorData forward(std::span<const int32_t> tokens);

  GenerationResult generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                            const TokenCallback& on_token = {});

private:
  struct Impl;
  explicit CausalLM(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace luminal::models
