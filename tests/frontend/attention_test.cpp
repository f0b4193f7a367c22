// Attention and RoPE on small hand-computed cases; the full validation
// against torch is python/tests/test_attention.py.
#include "luminal/frontend/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"
#include "spatial_test_util.hpp"

using namespace luminal;
using luminal::test::expect_values;
using luminal::test::run_x;

TEST(FrontendAttention, CausalSdpaAveragesVisibleValues) {
  // Zero queries give uniform weights over the visible keys: the causal output
  // row i is the mean of values 0..i.
  Graph g;
  Tensor q = g.input("q", {1, 3, 2});
  Tensor kv = g.input("kv", {1, 3, 2});
  g.output("out", scaled_dot_product_attention(q, kv, kv, std::nullopt, 0.0, true));
  Interpreter run(g);
  run.set_input("q", TensorData::full(DType::F32, {1, 3, 2}, 0.0));
  run.set_input("kv", TensorData::from_doubles(DType::F32, {1, 3, 2}, {3, 0, 6, 3, 0, 9}));
  run.run();
  expect_values(run.output("out"), {3, 0, 4.5, 1.5, 3, 4});
}

TEST(FrontendAttention, FullyMaskedRowIsZero) {
  Graph g;
  Tensor q = g.input("q", {2, 2});
  Tensor mask = g.input("m", {2, 2}, DType::Bool);
  g.output("out", scaled_dot_product_attention(q, q, q, mask));
  Interpreter run(g);
  run.set_input("q", TensorData::from_doubles(DType::F32, {2, 2}, {1, 2, 3, 4}));
  run.set_input("m", TensorData::from_doubles(DType::Bool, {2, 2}, {0, 0, 0, 1}));
  run.run();
  // Row 0 sees nothing (zeros, as torch); row 1 sees only key 1.
  expect_values(run.output("out"), {0, 0, 3, 4});
}

TEST(FrontendAttention, CausalMaskOffset) {
  Graph g;
  g.output("out", causal_mask(g, 2, 4, 2));
  Interpreter run(g);
  run.run();
  expect_values(run.output("out"), {1, 1, 1, 0, 1, 1, 1, 1});
}

TEST(FrontendAttention, RopeRotatesPairsByPositionAngles) {
  // d = 4, theta = 100: inv_freq = 1, 0.1. Position 2 rotates pair (x0, x2) by 2
  // rad and (x1, x3) by 0.2 rad (HF half layout).
  Graph g;
  Tensor x = g.input("x", {1, 4});
  RopeTables t = rope_cache(g, 1, 4, 100.0, 2);
  g.output("half", apply_rotary_emb(x, t.cos, t.sin));
  g.output("inter", apply_rotary_emb(x, t.cos, t.sin, RopeLayout::Interleaved));
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(DType::F32, {1, 4}, {1, 0, 0, 1}));
  run.run();
  expect_values(run.output("half"), {std::cos(2.0), -std::sin(0.2), std::sin(2.0), std::cos(0.2)});
  // Interleaved pairs (x0, x1) by 2 rad and (x2, x3) by 0.2 rad.
  expect_values(run.output("inter"), {std::cos(2.0), std::sin(2.0), -std::sin(0.2), std::cos(0.2)});
}

TEST(FrontendAttention, FullWidthRopeIsElementWiseOverViews) {
  // Both layouts at full rotary width build no Scatter (a stack or cat would:
  // zeros plus one Scatter per part, which ends fusion with the Q / K
  // projections), and the interleaved one rotates each pair (x0, x1), (x2, x3)
  // by its own angle: hand-computed complex products.
  for (RopeLayout layout : {RopeLayout::HalfRotate, RopeLayout::Interleaved}) {
    Graph g;
    Tensor x = g.input("x", {1, 2, 4});
    RopeTables t = rope_cache(g, 2, 4, 100.0, 1);  // positions 1, 2
    g.output("y", apply_rotary_emb(x, t.cos, t.sin, layout));
    for (const Node& n : g.nodes()) EXPECT_NE(n.kind, OpKind::Scatter);
    if (layout != RopeLayout::Interleaved) continue;
    Interpreter run(g);
    run.set_input("x", TensorData::from_doubles(DType::F32, {1, 2, 4}, {1, 2, 3, 4, 1, 0, 0, 1}));
    run.run();
    std::vector<double> want;
    const double xs[2][4] = {{1, 2, 3, 4}, {1, 0, 0, 1}};
    for (int p = 0; p < 2; ++p)
      for (int pair = 0; pair < 2; ++pair) {
        const double angle = (p + 1) * (pair == 0 ? 1.0 : 0.1);
        const double re = xs[p][2 * pair], im = xs[p][2 * pair + 1];
        want.push_back(re * std::cos(angle) - im * std::sin(angle));
        want.push_back(re * std::sin(angle) + im * std::cos(angle));
      }
    expect_values(run.output("y"), want);
  }
}

TEST(FrontendAttention, BadArgumentsThrow) {
  Graph g;
  Tensor q = g.input("q", {1, 4, 3, 8});
  Tensor k = g.input("k", {1, 3, 3, 8});
  EXPECT_THROW(scaled_dot_product_attention(q, k, k, std::nullopt, 0, false, std::nullopt, true),
               ShapeError);  // 4 heads are not a multiple of 3
  EXPECT_THROW(scaled_dot_product_attention(q, q, q, std::nullopt, 0.5), Error);
  EXPECT_THROW(scaled_dot_product_attention(q, q, q, g.input("m", {3, 3}), 0, true), ShapeError);
  EXPECT_THROW(rope_cache(g, 4, 5), ShapeError);
  RopeTables t = rope_cache(g, 3, 32);
  EXPECT_THROW(apply_rotary_emb(q, t.cos, t.sin), ShapeError);  // 32 features > 8
}
