// RoPE inverse frequencies with scaling. Expected values are computed here in
// double from the published formulas (transformers' modeling_rope_utils,
// llama.cpp's rope_freqs), independently of the float32 code under test; the
// float32 results must agree to float32 precision.

#include "luminal/models/rope_scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "luminal/error.hpp"

namespace luminal::models {
namespace {

constexpr int64_t kDim = 8;
constexpr double kTheta = 10000.0;

double plain(int64_t i, double theta = kTheta) {
  return std::pow(theta, -2.0 * static_cast<double>(i) / kDim);
}

void expect_freqs(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * want[i]) << "frequency " << i;
}

RopeScaling scaling(const std::string& type, double factor) {
  RopeScaling s;
  s.type = type;
  s.factor = factor;
  return s;
}

TEST(RopeScaling, DefaultAndLinear) {
  expect_freqs(rope_inv_freq(kDim, kTheta, std::nullopt, 0),
               {1.0, plain(1), plain(2), plain(3)});  // 1, 0.1, 0.01, 0.001
  expect_freqs(rope_inv_freq(kDim, kTheta, scaling("linear", 4.0), 0),
               {0.25, plain(1) / 4, plain(2) / 4, plain(3) / 4});
}

TEST(RopeScaling, DynamicNtkDependsOnTheLength) {
  const RopeScaling s = scaling("dynamic", 2.0);
  // Within the context (16): the default frequencies.
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 16, 0), {1, plain(1), plain(2), plain(3)});
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 16, 16), {1, plain(1), plain(2), plain(3)});
  // 40 tokens: base' = base * (2 * 40 / 16 - 1)^(8 / 6) = base * 4^(4/3).
  const double base = kTheta * std::pow(4.0, 8.0 / 6.0);
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 16, 40),
               {1, plain(1, base), plain(2, base), plain(3, base)});
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, s, 0, 40), Error);  // needs the context
}

TEST(RopeScaling, Llama3InterpolatesTheMiddleBand) {
  RopeScaling s = scaling("llama3", 8.0);
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_context_length = 64;
  // Wavelengths 2 pi / f: 6.28 < 64 / 4 kept; 62.8 between 16 and 64
  // interpolated; 628 and 6283 > 64 divided by 8.
  const double f1 = plain(1);
  const double smooth = (64.0 / (2 * std::numbers::pi / f1) - 1.0) / 3.0;
  const std::vector<double> want = {1.0, (1 - smooth) * f1 / 8 + smooth * f1, plain(2) / 8,
                                    plain(3) / 8};
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 1 << 20), want);
  // Without original_context_length the model's context is the original one.
  s.original_context_length = 0;
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 64), want);
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, s, 0), Error);
  s.original_context_length = 64;
  s.high_freq_factor = 1.0;  // no band
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, s, 0), Error);
}

TEST(RopeScaling, GgufFrequencyFactors) {
  RopeScaling s = scaling("llama3", 1.0);
  s.freq_factors = {1.0f, 2.0f, 8.0f, 8.0f};
  expect_freqs(rope_inv_freq(kDim, kTheta, s, 0), {1.0, plain(1) / 2, plain(2) / 8, plain(3) / 8});
  s.freq_factors = {1.0f, 2.0f};
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, s, 0), Error);
  s.freq_factors = {1.0f, 0.0f, 1.0f, 1.0f};
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, s, 0), Error);
}

TEST(RopeScaling, UnsupportedTypesAndBadArgumentsThrow) {
  for (const char* type : {"yarn", "longrope", "su"}) {
    EXPECT_FALSE(rope_scaling_supported(type));
    try {
      rope_inv_freq(kDim, kTheta, scaling(type, 4.0), 128);
      FAIL() << type;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(type), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(rope_inv_freq(kDim, kTheta, scaling("linear", 0.0), 0), Error);
  EXPECT_THROW(rope_inv_freq(7, kTheta, std::nullopt, 0), Error);
  EXPECT_THROW(rope_inv_freq(kDim, -1.0, std::nullopt, 0), Error);
}

}  // namespace
}  // namespace luminal::models
