#pragma once
// RoPE frequency scaling: the inverse frequencies of rotary embeddings as
// Hugging Face computes them for its `rope_scaling` variants, and as llama.cpp
// stores them in GGUF files.
//
// A decoder with scaling takes its inverse frequencies as a graph input (one
// f32 vector of head_dim / 2, computed here once on the host), so scaling adds
// nothing to the graph; "dynamic" (NTK) frequencies depend on the sequence
// length and are recomputed on the host when it changes, never recompiled.
//
// The formulas follow transformers' modeling_rope_utils in float32, operation
// by operation, so the frequencies match transformers' to the last bit in
// practice:
//   default   inv[i] = 1 / theta^(2i / d)
//   linear    inv[i] / factor
//   dynamic   default with theta' = theta * (factor * L / C - (factor - 1))^(d / (d - 2))
//             for a sequence of L > C tokens (C = the context length); default otherwise
//   llama3    inv[i] / factor for wavelengths 2 pi / inv[i] > C0 / low_freq_factor,
//             unchanged below C0 / high_freq_factor, interpolated between
//             (C0 = original_context_length)
// llama.cpp writes Llama 3.1 scaling as per-frequency divisors instead (the
// `rope_freqs.weight` tensor): inv[i] / freq_factors[i].

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/frontend/attention.hpp"

namespace luminal::models {

/// RoPE frequency scaling as Hugging Face's `rope_scaling` / `rope_parameters`
/// (or GGUF `<arch>.rope.scaling.*`) describes it.
struct RopeScaling {
  std::string type;  // "linear", "dynamic", "llama3"; others ("yarn" ...) are refused
  double factor = 1.0;
  /// llama3: the pretraining context (original_max_position_embeddings);
  /// 0: the model's context length.
  int64_t original_context_length = 0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
  /// GGUF `rope_freqs.weight` (llama.cpp's Llama 3.1 form): each inverse
  /// frequency is divided by its factor; when set it replaces the formula.
  std::vector<float> freq_factors;
};

/// Whether rope_inv_freq implements `type`.
bool rope_scaling_supported(std::string_view type);

/// The inverse frequencies [rotary_dim / 2] for `theta` and the scaling (none:
/// the default). `context_length` is the model's (HF max_position_embeddings);
/// `seq_len` matters only for "dynamic": the positions the forward covers
/// (HF's max(position_ids) + 1). Throws Error for an unsupported type, a
/// non-positive factor, a missing context length, or freq_factors of the
/// wrong size.
std::vector<float> rope_inv_freq(int64_t rotary_dim, double theta,
                                 const std::optional<RopeScaling>& scaling, int64_t context_length,
                                 int64_t seq_len = 0);

/// cos / sin [s, inv_freq.size] of positions past .. past + s - 1 from the
/// inverse frequencies (a graph input, e.g. rope_inv_freq's values): HF's
/// float32 angle pos * inv_freq, with cos / sin evaluated in float64 from it
/// and rounded once (as luminal::rope_cache does). nn::Attention takes them
/// in place of its theta-built tables.
RopeTables rope_tables(const Tensor& inv_freq, const Expr& past, const Expr& s);

}  // namespace luminal::models
