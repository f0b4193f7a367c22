// Convolutions against a naive direct loop written here (an independent
// reference); the full validation against torch is python/tests/test_convolution.py.
#include "luminal/frontend/convolution.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"
#include "spatial_test_util.hpp"

using namespace luminal;
using luminal::test::expect_values;
using luminal::test::run_x;

namespace {

std::vector<double> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// Direct 2-D convolution (batch 1): out[o][y][x] = b[o] + sum w[o][c][i][j] * in[g*cig + c][y*s +
// i*d - p][...].
std::vector<double> naive_conv2d(const std::vector<double>& in, int c_in, int h, int w,
                                 const std::vector<double>& wt, int c_out, int kh, int kw,
                                 const std::vector<double>& bias, int stride, int pad, int dil,
                                 int groups, int* oh_out, int* ow_out) {
  const int oh = (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1;
  const int ow = (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
  const int cig = c_in / groups, cog = c_out / groups;
  std::vector<double> out(static_cast<size_t>(c_out * oh * ow));
  for (int o = 0; o < c_out; ++o)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        double acc = bias.empty() ? 0.0 : bias[o];
        const int g = o / cog;
        for (int c = 0; c < cig; ++c)
          for (int i = 0; i < kh; ++i)
            for (int j = 0; j < kw; ++j) {
              const int yy = y * stride + i * dil - pad, xx = x * stride + j * dil - pad;
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              acc += wt[((o * cig + c) * kh + i) * kw + j] * in[((g * cig + c) * h + yy) * w + xx];
            }
        out[(o * oh + y) * ow + x] = acc;
      }
  *oh_out = oh;
  *ow_out = ow;
  return out;
}

struct Conv2dCase {
  int c_in, h, w, c_out, k, stride, pad, dil, groups;
  bool bias;
};

}  // namespace

TEST(FrontendConvolution, Conv2dMatchesDirectLoop) {
  const Conv2dCase cases[] = {{3, 7, 6, 4, 3, 1, 1, 1, 1, true},
                              {4, 9, 8, 6, 3, 2, 0, 1, 2, false},
                              {2, 8, 8, 4, 2, 1, 2, 2, 1, true},
                              {4, 5, 7, 4, 3, 1, 1, 1, 4, true},
                              {1, 6, 6, 1, 1, 3, 0, 1, 1, false}};
  unsigned seed = 1;
  for (const auto& c : cases) {
    Graph g;
    Tensor x = g.input("x", {1, c.c_in, c.h, c.w});
    Tensor w = g.input("w", {c.c_out, c.c_in / c.groups, c.k, c.k});
    std::optional<Tensor> b;
    if (c.bias) b = g.input("b", {c.c_out});
    g.output("out", conv2d(x, w, b, c.stride, c.pad, c.dil, c.groups));
    auto xv = random_values(static_cast<size_t>(c.c_in * c.h * c.w), seed++);
    auto wv = random_values(static_cast<size_t>(c.c_out * c.c_in / c.groups * c.k * c.k), seed++);
    auto bv = c.bias ? random_values(static_cast<size_t>(c.c_out), seed++) : std::vector<double>{};
    Interpreter run(g);
    run.set_input("x", TensorData::from_doubles(DType::F32, {1, c.c_in, c.h, c.w}, xv));
    run.set_input("w",
                  TensorData::from_doubles(DType::F32, {c.c_out, c.c_in / c.groups, c.k, c.k}, wv));
    if (c.bias) run.set_input("b", TensorData::from_doubles(DType::F32, {c.c_out}, bv));
    run.run();
    int oh = 0, ow = 0;
    auto want = naive_conv2d(xv, c.c_in, c.h, c.w, wv, c.c_out, c.k, c.k, bv, c.stride, c.pad,
                             c.dil, c.groups, &oh, &ow);
    const auto& got = run.output("out");
    ASSERT_EQ(got.shape(), (std::vector<int64_t>{1, c.c_out, oh, ow}));
    expect_values(got, want, 1e-5);
  }
}

TEST(FrontendConvolution, Conv1dSymbolicLengthAndSamePadding) {
  // "same" with an even kernel pads 1 before and 2 after (torch puts the extra on the right).
  Graph g;
  Tensor x = g.input("x", {2, "L"});  // unbatched [C, L]
  Tensor w = g.input("w", {1, 2, 4});
  g.output("out", conv1d(x, w, std::nullopt, 1, "same"));
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {2, 5}, {1, 2, 3, 4, 5, 0, 0, 0, 0, 1}));
  run.set_input("w",
                TensorData::from_doubles(DType::F32, {1, 2, 4}, {1, 10, 100, 1000, 0, 0, 0, 1}));
  run.run();
  // out[t] = sum_j w0[j] * x0[t + j - 1] + w1[j] * x1[t + j - 1] (hand-computed;
  // torch.nn.functional.conv1d agrees).
  expect_values(run.output("out"), {3210, 4321, 5433, 543, 54}, 0);
}

TEST(FrontendConvolution, ConvTranspose2dIsTheAdjoint) {
  // <conv_transpose(y, w), x> == <y, conv(x, w)> for matching geometry (stride 2,
  // padding 1, dilation 1, groups 2), checked on random data.
  const int cin = 4, cout = 2, k = 3, s = 2, p = 1, groups = 2, h = 7, w = 6;
  Graph g;
  Tensor x = g.input("x", {1, cout, h, w});  // the conv input
  Tensor y = g.input("y", {1, cin, 4, 3});   // the conv output shape
  Tensor wt = g.input("w", {cin, cout / groups, k, k});
  Tensor conv = conv2d(x, wt, std::nullopt, s, p, 1, groups);
  Tensor ct = conv_transpose2d(y, wt, std::nullopt, s, p, {0, 1}, groups);
  g.output("conv", conv);
  g.output("ct", ct);
  auto xv = random_values(static_cast<size_t>(cout * h * w), 11);
  auto yv = random_values(static_cast<size_t>(cin * 4 * 3), 12);
  auto wv = random_values(static_cast<size_t>(cin * cout / groups * k * k), 13);
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, cout, h, w}, xv));
  run.set_input("y", TensorData::from_doubles(DType::F32, {1, cin, 4, 3}, yv));
  run.set_input("w", TensorData::from_doubles(DType::F32, {cin, cout / groups, k, k}, wv));
  run.run();
  const auto& cv = run.output("conv");
  const auto& tv = run.output("ct");
  // conv_transpose output: (4 - 1) * 2 - 2 + 3 = 7 rows, (3 - 1) * 2 - 2 + 3 + 1 = 6
  // columns (output_padding 1 recovers the column the floor division dropped).
  ASSERT_EQ(cv.shape(), (std::vector<int64_t>{1, cin, 4, 3}));
  ASSERT_EQ(tv.shape(), (std::vector<int64_t>{1, cout, 7, 6}));
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < cv.numel(); ++i) lhs += cv.get(i) * yv[static_cast<size_t>(i)];
  for (int c = 0; c < cout; ++c)
    for (int r = 0; r < h; ++r)
      for (int q = 0; q < w; ++q) rhs += tv.get((c * h + r) * w + q) * xv[(c * h + r) * w + q];
  EXPECT_NEAR(lhs, rhs, 1e-4);
}

TEST(FrontendConvolution, Im2colLayout) {
  Graph g;
  Tensor x = g.input("x", {1, 1, 3, 3});
  g.output("out", im2col(x, 2));
  Interpreter run(g);
  run.set_input("x",
                TensorData::from_doubles(DType::F32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  run.run();
  // Rows are the 4 kernel positions, columns the 4 windows.
  expect_values(run.output("out"), {1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9}, 0);
}

TEST(FrontendConvolution, BadArgumentsThrow) {
  Graph g;
  Tensor x = g.input("x", {1, 3, 8, 8});
  Tensor w = g.input("w", {4, 2, 3, 3});
  EXPECT_THROW(conv2d(x, w), ShapeError);                           // 3 channels vs 2 * 1
  EXPECT_THROW(conv2d(x, w, std::nullopt, 2, "same"), ShapeError);  // same + stride
  EXPECT_THROW(conv2d(x, g.input("w2", {4, 3, 3, 3}, DType::F16)), DTypeError);
  EXPECT_THROW(conv2d(x, g.input("w3", {4, 3, 9, 9})), ShapeError);  // kernel > input
  EXPECT_THROW(conv2d(x, g.input("w4", {4, 3, 3, 3}), std::nullopt, {1, 1, 1}), ShapeError);
  EXPECT_THROW(ConvPadding("full"), ShapeError);
}
