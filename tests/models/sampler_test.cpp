// The sampler against hand-computed distributions (HF generate's warpers).

#include "luminal/models/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "luminal/error.hpp"

namespace luminal::models {
namespace {

std::vector<double> softmax(const std::vector<double>& x) {
  double total = 0;
  std::vector<double> p;
  for (double v : x) total += std::exp(v);
  for (double v : x) p.push_back(std::exp(v) / total);
  return p;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "id " << i;
}

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, -1.0f, 0.0f};

TEST(Sampler, GreedyIsArgmaxLowestIdOnTies) {
  Sampler s({});
  EXPECT_EQ(s.sample(kLogits, {}), 1);
  const std::vector<float> tie = {0.5f, 2.0f, 2.0f};
  EXPECT_EQ(s.sample(tie, {}), 1);
  expect_near(s.distribution(kLogits, {}), {0, 1, 0, 0, 0});
}

TEST(Sampler, TemperatureScalesLogits) {
  Sampler s({.temperature = 2.0});
  expect_near(s.distribution(kLogits, {}), softmax({0.5, 1.5, 1.0, -0.5, 0.0}));
}

TEST(Sampler, TopKKeepsTheKLargestAndTiesAtTheBoundary) {
  Sampler s({.temperature = 1.0, .top_k = 2});
  const std::vector<double> two = softmax({3.0, 2.0});  // ids 1, 2
  expect_near(s.distribution(kLogits, {}), {0, two[0], two[1], 0, 0});
  const std::vector<float> tie = {1.0f, 2.0f, 1.0f, 0.0f};
  Sampler s2({.temperature = 1.0, .top_k = 2});
  const std::vector<double> three = softmax({1.0, 2.0, 1.0});  // the 2nd largest is tied
  expect_near(s2.distribution(tie, {}), {three[0], three[1], three[2], 0});
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.25, 0.125, 0.125 (logits are their logs, rounded to
  // float: the probabilities are within 1e-7 of these).
  const std::vector<float> logits = {std::log(0.5f), std::log(0.25f), std::log(0.125f),
                                     std::log(0.125f)};
  Sampler s({.temperature = 1.0, .top_p = 0.7});  // 0.5 < 0.7, 0.75 >= 0.7: keep two
  expect_near(s.distribution(logits, {}), {2.0 / 3.0, 1.0 / 3.0, 0, 0}, 1e-6);
  Sampler first({.temperature = 1.0, .top_p = 0.45});  // the first alone reaches 0.45
  expect_near(first.distribution(logits, {}), {1, 0, 0, 0});
  Sampler tiny({.temperature = 1.0, .top_p = 0.01});  // at least one survives
  expect_near(tiny.distribution(logits, {}), {1, 0, 0, 0});
  Sampler three({.temperature = 1.0, .top_p = 0.8});  // 0.75 < 0.8: a third (tie: lower id)
  expect_near(three.distribution(logits, {}), {0.5 / 0.875, 0.25 / 0.875, 0.125 / 0.875, 0}, 1e-6);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  // ids 1 (3.0 -> 1.5) and 3 (-1.0 -> -2.0) were seen (id 1 twice: penalised once).
  Sampler s({.temperature = 1.0, .repetition_penalty = 2.0});
  const std::vector<int32_t> history = {1, 3, 1};
  expect_near(s.distribution(kLogits, history), softmax({1.0, 1.5, 2.0, -2.0, 0.0}));
  Sampler greedy({.repetition_penalty = 2.0});
  EXPECT_EQ(greedy.sample(kLogits, history), 2);  // 2.0 now beats 1.5
}

TEST(Sampler, SeededDrawsAreDeterministicAndFollowTheDistribution) {
  const SamplingOptions o{.temperature = 1.0, .seed = 42};
  Sampler a(o), b(o);
  std::vector<int32_t> first;
  for (int i = 0; i < 50; ++i) {
    const int32_t x = a.sample(kLogits, {});
    EXPECT_EQ(x, b.sample(kLogits, {}));
    first.push_back(x);
  }
  Sampler other({.temperature = 1.0, .seed = 43});
  std::vector<int32_t> second;
  for (int i = 0; i < 50; ++i) second.push_back(other.sample(kLogits, {}));
  EXPECT_NE(first, second);
  // 20000 draws: frequencies within 0.02 of the probabilities.
  Sampler many({.temperature = 1.0, .seed = 7});
  std::map<int32_t, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[many.sample(kLogits, {})];
  const std::vector<double> p = softmax({1.0, 3.0, 2.0, -1.0, 0.0});
  for (int id = 0; id < 5; ++id) EXPECT_NEAR(counts[id] / double(n), p[id], 0.02) << "id " << id;
}

TEST(Sampler, TopKOneSamplesTheArgmax) {
  Sampler s({.temperature = 5.0, .top_k = 1, .seed = 3});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(kLogits, {}), 1);
}

TEST(Sampler, RejectsBadOptions) {
  EXPECT_THROW(Sampler({.temperature = -1.0}), Error);
  EXPECT_THROW(Sampler({.top_k = -2}), Error);
  EXPECT_THROW(Sampler({.top_p = 0.0}), Error);
  EXPECT_THROW(Sampler({.top_p = 1.5}), Error);
  EXPECT_THROW(Sampler({.repetition_penalty = 0.0}), Error);
  EXPECT_THROW(Sampler({.temperature = NAN}), Error);
  Sampler s({});
  EXPECT_THROW(s.sample(std::vector<float>{}, {}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{1.0f, NAN}, {}), Error);
}

}  // namespace
}  // namespace luminal::models
