#pragma once
// Choosing the next token from a row of logits, with Hugging Face
// `generate`'s warpers applied in its order:
//   1. repetition penalty (every id already in the history: a positive logit
//      is divided by the penalty, a negative one multiplied, as HF's
//      RepetitionPenaltyLogitsProcessor),
//   2. greedy (temperature 0): argmax, lowest id on ties (torch.argmax);
//      otherwise temperature (logits / T),
//   3. top-k: keep the ids whose logit is >= the k-th largest (ties at the
//      boundary are kept, as HF's TopKLogitsWarper),
//   4. top-p (nucleus): in descending probability, keep an id while the mass
//      before it is < p (HF's TopPLogitsWarper; at least one id survives),
//   5. softmax over the survivors and one draw from a seeded generator.
// The draw uses mt19937_64 and its top 53 bits as the uniform number, so a
// seed gives the same tokens on every platform and standard library.

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace luminal::models {

struct SamplingOptions {
  double temperature = 0.0;         // 0: greedy (deterministic)
  int64_t top_k = 0;                // 0: off
  double top_p = 1.0;               // 1: off; in (0, 1]
  double repetition_penalty = 1.0;  // 1: off; > 0
  uint64_t seed = 0;
};

/// Throws luminal::Error naming the option when a value is out of range
/// (negative temperature or top-k, top-p outside (0, 1], penalty <= 0, NaN).
void validate(const SamplingOptions& options);

class Sampler {
public:
  explicit Sampler(const SamplingOptions& options);

  /// The next token for `logits` (one row, vocab entries); `history` is the
  /// prompt plus the tokens generated so far (for the repetition penalty).
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

  /// The probabilities sample() draws from (vocab entries, zeros for the ids
  /// top-k / top-p removed); greedy gives a one-hot row. For tests and tools.
  std::vector<double> distribution(std::span<const float> logits,
                                   std::span<const int32_t> history) const;

  const SamplingOptions& options() const { return options_; }

private:
  std::vector<double> penalized(std::span<const float> logits,
                                std::span<const int32_t> history) const;
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace luminal::models
