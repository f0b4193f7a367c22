#pragma once
// The configuration of a Llama-family decoder (Llama 2/3, SmolLM, Mistral,
// Qwen2 with q/k/v biases, Qwen3 with q/k norms) read from either source a
// model comes in:
//   - GGUF metadata (`<arch>.block_count`, `<arch>.embedding_length`, ...), as
//     llama.cpp writes it; tensor names are llama.cpp's (`blk.0.attn_q.weight`)
//     and gguf_tensor_name() maps the graph's Hugging Face names to them;
//   - a Hugging Face config.json (LlamaConfig / Qwen2Config / ...) next to
//     safetensors files with Hugging Face names.
//
// RoPE layout: llama.cpp's converter permutes the rows of q_proj / k_proj so
// that rotated pairs are adjacent (GPT-J layout) for the "llama" architecture;
// with those weights the attention must rotate interleaved pairs, which is
// the same function as Hugging Face's rotate_half on the unpermuted weights
// (attention scores are dot products, invariant to a common permutation of q
// and k features). So GGUF llama models use RopeLayout::Interleaved and need
// no un-permutation; Qwen-style GGUFs and every HF checkpoint use HalfRotate.
//
// RoPE scaling (rope_scaling.hpp) comes from HF `rope_scaling` /
// `rope_parameters` (type, factor, original_max_position_embeddings,
// low / high_freq_factor), or from GGUF `<arch>.rope.scaling.type` / `.factor`
// / `.original_context_length` (plus llama3-style `.low_freq_factor` /
// `.high_freq_factor` when present), the legacy `<arch>.rope.scale_linear`,
// and the `rope_freqs.weight` tensor llama.cpp writes for Llama 3.1.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "luminal/models/rope_scaling.hpp"
#include "luminal/nn/transformer.hpp"

namespace luminal {
class GGUFFile;
}

namespace luminal::models {

struct LlamaModelConfig {
  /// Hugging Face model_type / GGUF general.architecture: "llama", "qwen2", ...
  std::string architecture;
  nn::LlamaConfig llama;
  int64_t context_length = 0;  // 0: unknown
  std::optional<RopeScaling> rope_scaling;
  /// One line for `luminal info`.
  std::string describe() const;
  /// The attention head size (head_dim, else hidden_size / num_heads).
  int64_t head_dim() const;
};

/// The decoder configuration in a GGUF file's metadata. Throws LookupError for
/// a missing required key (block_count, embedding_length, head_count,
/// feed_forward_length), Error for an architecture that is not Llama-like.
LlamaModelConfig llama_config_from_gguf(const GGUFFile& file);

/// The decoder configuration in the text of a Hugging Face config.json;
/// `origin` names the file in messages. Throws Error (bad JSON, a missing
/// field, an unsupported model_type).
LlamaModelConfig llama_config_from_hf_json(std::string_view json_text,
                                           std::string_view origin = "config.json");

/// Throws Error when the configuration cannot be built: a non-positive size,
/// or RoPE scaling rope_inv_freq does not implement (yarn, longrope ...).
void check_supported(const LlamaModelConfig& config);

/// The llama.cpp tensor name of a Hugging Face parameter name
/// ("model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight");
/// names it does not know are returned unchanged.
std::string gguf_tensor_name(std::string_view hf_name);

}  // namespace luminal::models
