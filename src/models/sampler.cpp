#include "luminal/models/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "luminal/error.hpp"

namespace luminal::models {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Ids in descending value order; equal values keep ascending ids (stable).
std::vector<size_t> descending(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  return order;
}

// Softmax of the finite-or--inf scores (in double: the sampler is not the
// model, and exact probabilities make the hand-computed tests meaningful).
std::vector<double> softmax(const std::vector<double>& scores) {
  const double m = *std::max_element(scores.begin(), scores.end());
  std::vector<double> p(scores.size());
  double total = 0;
  for (size_t i = 0; i < scores.size(); ++i) total += p[i] = std::exp(scores[i] - m);
  for (double& x : p) x /= total;
  return p;
}

size_t argmax(const std::vector<double>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

void validate(const SamplingOptions& o) {
  auto bad = [](const std::string& what) { throw Error("sampling: " + what); };
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    bad("temperature must be >= 0 (0 = greedy), got " + std::to_string(o.temperature));
  if (o.top_k < 0) bad("top-k must be >= 0 (0 = off), got " + std::to_string(o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1))
    bad("top-p must be in (0, 1] (1 = off), got " + std::to_string(o.top_p));
  if (!(o.repetition_penalty > 0) || !std::isfinite(o.repetition_penalty))
    bad("repetition penalty must be > 0 (1 = off), got " + std::to_string(o.repetition_penalty));
}

Sampler::Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {
  validate(options_);
}

std::vector<double> Sampler::penalized(std::span<const float> logits,
                                       std::span<const int32_t> history) const {
  if (logits.empty()) throw Error("sampling: empty logits row");
  std::vector<double> s(logits.begin(), logits.end());
  const double r = options_.repetition_penalty;
  if (r != 1.0) {
    // Each id once, however often it occurred (HF gathers and scatters the
    // unique ids' scores).
    std::vector<bool> seen(s.size(), false);
    for (int32_t id : history) {
      if (id < 0 || static_cast<size_t>(id) >= s.size() || seen[id]) continue;
      seen[id] = true;
      s[id] = s[id] < 0 ? s[id] * r : s[id] / r;
    }
  }
  for (double& x : s)
    if (std::isnan(x)) throw Error("sampling: the logits contain NaN");
  return s;
}

std::vector<double> Sampler::distribution(std::span<const float> logits,
                                          std::span<const int32_t> history) const {
  std::vector<double> s = penalized(logits, history);
  if (options_.temperature == 0) {
    std::vector<double> one_hot(s.size(), 0.0);
    one_hot[argmax(s)] = 1.0;
    return one_hot;
  }
  for (double& x : s) x /= options_.temperature;
  const std::vector<size_t> order = descending(s);
  if (options_.top_k > 0 && static_cast<size_t>(options_.top_k) < s.size()) {
    const double kth = s[order[options_.top_k - 1]];
    for (double& x : s)
      if (x < kth) x = kNegInf;
  }
  if (options_.top_p < 1.0) {
    const std::vector<double> p = softmax(s);
    double before = 0;
    for (size_t rank = 0; rank < order.size(); ++rank) {
      const size_t id = order[rank];
      if (rank > 0 && before >= options_.top_p) s[id] = kNegInf;
      before += p[id];
    }
  }
  return softmax(s);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  const std::vector<double> p = distribution(logits, history);
  if (options_.temperature == 0) return static_cast<int32_t>(argmax(p));
  // The top 53 bits as a double in [0, 1): the same on every platform.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  double cumulative = 0;
  size_t last = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    last = i;
    cumulative += p[i];
    if (u < cumulative) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(last);  // rounding left u above the total
}

}  // namespace luminal::models
