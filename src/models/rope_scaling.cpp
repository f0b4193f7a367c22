#include "luminal/models/rope_scaling.hpp"

#include <cmath>
#include <numbers>

#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal::models {

namespace {

// torch's float32 pow (glibc powf is correctly rounded in practice; so is the
// double pow rounded once).
float pow_f32(float base, float exponent) {
  return static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
}

// HF: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), all float32.
std::vector<float> default_inv_freq(int64_t dim, float base) {
  std::vector<float> inv(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) {
    const float expo = static_cast<float>(2 * i) / static_cast<float>(dim);
    inv[static_cast<size_t>(i)] = 1.0f / pow_f32(base, expo);
  }
  return inv;
}

std::string describe(const RopeScaling& s) {
  return "RoPE scaling '" + s.type + "' (factor " + std::to_string(s.factor) + ")";
}

// transformers' _compute_dynamic_ntk_parameters with a tensor seq_len (the
// forward's): the NTK base in float32.
float dynamic_base(const RopeScaling& s, int64_t dim, double theta, int64_t context,
                   int64_t seq_len) {
  if (seq_len <= context) return static_cast<float>(theta);
  const float factor = static_cast<float>(s.factor);
  const float ratio = factor * static_cast<float>(seq_len) / static_cast<float>(context);
  const float scale =
      pow_f32(ratio - (factor - 1.0f), static_cast<float>(static_cast<double>(dim) / (dim - 2)));
  return static_cast<float>(theta) * scale;
}

// transformers' _compute_llama3_parameters, float32 throughout.
void llama3(const RopeScaling& s, int64_t context, std::vector<float>& inv) {
  const double old_context =
      static_cast<double>(s.original_context_length > 0 ? s.original_context_length : context);
  if (!(s.high_freq_factor > s.low_freq_factor) || !(s.low_freq_factor > 0))
    throw Error(describe(s) + ": needs 0 < low_freq_factor < high_freq_factor, got " +
                std::to_string(s.low_freq_factor) + " and " + std::to_string(s.high_freq_factor));
  const float low_wavelen = static_cast<float>(old_context / s.low_freq_factor);
  const float high_wavelen = static_cast<float>(old_context / s.high_freq_factor);
  const float factor = static_cast<float>(s.factor);
  const float low = static_cast<float>(s.low_freq_factor);
  const float spread = static_cast<float>(s.high_freq_factor - s.low_freq_factor);
  const float two_pi = static_cast<float>(2 * std::numbers::pi);
  for (float& f : inv) {
    const float wavelen = two_pi / f;
    if (wavelen > low_wavelen) {
      f = f / factor;  // low frequencies: divided by the factor
    } else if (!(wavelen < high_wavelen)) {
      // Medium: interpolate between f / factor and f.
      const float smooth = (static_cast<float>(old_context) / wavelen - low) / spread;
      f = (1.0f - smooth) * f / factor + smooth * f;
    }
  }
}

}  // namespace

bool rope_scaling_supported(std::string_view type) {
  return type == "linear" || type == "dynamic" || type == "llama3";
}

std::vector<float> rope_inv_freq(int64_t dim, double theta,
                                 const std::optional<RopeScaling>& scaling, int64_t context_length,
                                 int64_t seq_len) {
  if (dim <= 0 || dim % 2 != 0)
    throw Error("rope_inv_freq: the rotary dim must be even and positive, got " +
                std::to_string(dim));
  if (!(theta > 0)) throw Error("rope_inv_freq: theta must be positive");
  if (!scaling) return default_inv_freq(dim, static_cast<float>(theta));
  const RopeScaling& s = *scaling;
  if (!s.freq_factors.empty()) {
    if (static_cast<int64_t>(s.freq_factors.size()) != dim / 2)
      throw Error("RoPE frequency factors: " + std::to_string(s.freq_factors.size()) +
                  " values for " + std::to_string(dim / 2) + " frequencies");
    std::vector<float> inv = default_inv_freq(dim, static_cast<float>(theta));
    for (size_t i = 0; i < inv.size(); ++i) {
      if (!(s.freq_factors[i] > 0))
        throw Error("RoPE frequency factors: factor " + std::to_string(i) + " is not positive");
      inv[i] /= s.freq_factors[i];
    }
    return inv;
  }
  if (!rope_scaling_supported(s.type))
    throw Error(describe(s) +
                " is not supported (supported: linear, dynamic, llama3, and GGUF rope_freqs)");
  if (!(s.factor > 0)) throw Error(describe(s) + ": the factor must be positive");
  if (s.type == "linear") {
    std::vector<float> inv = default_inv_freq(dim, static_cast<float>(theta));
    for (float& f : inv) f /= static_cast<float>(s.factor);
    return inv;
  }
  const bool needs_context = s.type == "dynamic" || s.original_context_length <= 0;
  if (needs_context && context_length <= 0)
    throw Error(describe(s) + " needs the model's context length (max_position_embeddings)");
  if (s.type == "dynamic")
    return default_inv_freq(dim, dynamic_base(s, dim, theta, context_length, seq_len));
  std::vector<float> inv = default_inv_freq(dim, static_cast<float>(theta));
  llama3(s, context_length, inv);
  return inv;
}

RopeTables rope_tables(const Tensor& inv_freq, const Expr& past, const Expr& s) {
  Graph& g = *inv_freq.graph();
  const Tensor positions = to(g.iota(past + Expr::index_var(), s, DType::I64), DType::F32);
  const Tensor angle = to(positions.unsqueeze(-1) * inv_freq, DType::F64);
  return {to(cos(angle), DType::F32), to(sin(angle), DType::F32)};
}

}  // namespace luminal::models
