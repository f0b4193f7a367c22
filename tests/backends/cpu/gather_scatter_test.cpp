// Gather and Scatter kernels against the reference interpreter: every data
// dtype, i32 / i64 indexes, views, fused index math, out-of-range handling.

#include <gtest/gtest.h>

#include <random>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

using testing::expect_close;
using testing::expect_matches_interpreter;
using testing::fused_outputs;
using testing::kComputeTypes;
using testing::random_tensor;

TensorData random_indexes(DType d, const std::vector<int64_t>& shape, int64_t limit,
                          std::mt19937_64& rng) {
  TensorData t(d, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_int(i, static_cast<int64_t>(rng() % static_cast<uint64_t>(limit)));
  return t;
}

TEST(CpuGatherScatter, GatherEveryDtypeThroughViews) {
  Graph g;
  std::mt19937_64 rng(31);
  std::map<std::string, TensorData> in;
  for (DType d : kComputeTypes) {
    const std::string s(dtype_name(d));
    auto data = g.input("data_" + s, {5, 6}, d);
    in["data_" + s] = random_tensor(d, {5, 6}, rng, -9, 9, true);
    for (DType id : {DType::I32, DType::I64}) {
      const std::string t = s + "_" + std::string(dtype_name(id));
      auto idx = g.input("idx_" + t, {4, 3}, id);
      in["idx_" + t] = random_indexes(id, {4, 3}, 30, rng);
      g.output("g_" + t, idx.gather_from(data));  // plain
      g.output("gp_" + t, idx.permute({1, 0}).gather_from(data.permute({1, 0}).flip(0)));
    }
  }
  expect_matches_interpreter(g, in, fused_outputs(g));
}

TEST(CpuGatherScatter, EmbeddingLookupFusedWithIndexMath) {
  // rows of a [vocab, 8] table selected by token ids: index = token * 8 + column,
  // built from Iota and broadcasts, fused with the gather and a consumer.
  Graph g;
  auto table = g.weight("table", {11, 8}, DType::BF16);
  auto tokens = g.input("tokens", {"s"}, DType::I32);
  const NodeId first = static_cast<NodeId>(g.size());
  const Expr s("s");
  auto col = g.arange(8, DType::I32).unsqueeze(0).expand({s, 8});
  auto row = tokens.unsqueeze(1).expand({s, 8}) * g.constant_int(8, DType::I32).expand({s, 8});
  auto rows = (row + col).gather_from(table.reshape({88}));
  g.output("emb", rows * 2.0);
  Region all;
  for (NodeId i = first; i < g.size(); ++i) all.nodes.push_back(i);
  CpuOptions one;
  one.regions = {all};
  std::mt19937_64 rng(32);
  expect_matches_interpreter(g,
                             {{"table", random_tensor(DType::BF16, {11, 8}, rng)},
                              {"tokens", random_indexes(DType::I32, {6}, 11, rng)}},
                             one);
  EXPECT_EQ(CpuProgram(g, one).kernels().size(), 1u);
}

TEST(CpuGatherScatter, GatherOutOfRangeIsAnIndexError) {
  for (bool fused : {false, true}) {
    Graph g;
    auto data = g.input("data", {5, 6});
    auto idx = g.input("idx", {4}, DType::I64);
    g.output("out", idx.gather_from(data) * 2.0);
    CpuProgram p(g, fused ? fused_outputs(g) : CpuOptions{});
    for (int64_t bad : {30, -1}) {
      p.set_input("data", TensorData(DType::F32, {5, 6}));
      p.set_input("idx", TensorData::from_ints(DType::I64, {4}, {0, 29, bad, 3}));
      try {
        p.run();
        FAIL() << "no error for index " << bad;
      } catch (const IndexError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("Gather %"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad) + " at position 2"), std::string::npos)
            << msg;
        EXPECT_NE(msg.find("30 elements [5, 6]"), std::string::npos) << msg;
      }
    }
  }
}

TEST(CpuGatherScatter, ScatterLastWriteWinsAndSkipsOutOfRange) {
  Graph g;
  auto dest = g.input("dest", {10});
  auto idx = g.input("idx", {6}, DType::I32);
  auto src = g.input("src", {6});
  g.output("out", dest.scatter(idx, src));
  const TensorData d = TensorData::from_doubles(DType::F32, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const TensorData i = TensorData::from_ints(DType::I32, {6}, {1, 3, 1, -1, 10, 9});
  const TensorData s = TensorData::from_doubles(DType::F32, {6}, {10, 11, 12, 13, 14, 15});
  expect_matches_interpreter(g, {{"dest", d}, {"idx", i}, {"src", s}});
  CpuProgram p(g);
  p.set_input("dest", d);
  p.set_input("idx", i);
  p.set_input("src", s);
  p.run();
  // Hand-computed: position 1 is written twice (12 wins), -1 and 10 are skipped.
  expect_close(p.output("out"),
               TensorData::from_doubles(DType::F32, {10}, {0, 12, 2, 11, 4, 5, 6, 7, 8, 15}));
}

TEST(CpuGatherScatter, ScatterEveryDtypeThroughViews) {
  Graph g;
  std::mt19937_64 rng(33);
  std::map<std::string, TensorData> in;
  for (DType d : kComputeTypes) {
    const std::string s(dtype_name(d));
    auto dest = g.input("dest_" + s, {4, 5}, d);
    auto idx = g.input("idx_" + s, {3, 4}, DType::I64);
    auto src = g.input("src_" + s, {4, 3}, d);
    in["dest_" + s] = random_tensor(d, {4, 5}, rng, -9, 9, true);
    in["idx_" + s] = random_indexes(DType::I64, {3, 4}, 24, rng);  // some beyond 20: skipped
    in["src_" + s] = random_tensor(d, {4, 3}, rng, -9, 9, true);
    g.output("sc_" + s, dest.permute({1, 0}).scatter(idx, src.permute({1, 0}).flip(1)));
  }
  expect_matches_interpreter(g, in);
}

TEST(CpuGatherScatter, ScatterWithFusedProducersIntoACache) {
  // A KV-cache style update: rows `k` written at positions `pos` of a persistent
  // [8, 4] cache, index = pos * 4 + column from Iota, src scaled on the way in.
  Graph g;
  auto cache = g.weight("cache", {8, 4});
  auto k = g.input("k", {"s", 4});
  auto pos = g.input("pos", {"s"}, DType::I32);
  const NodeId first = static_cast<NodeId>(g.size());
  const Expr s("s");
  auto index = pos.unsqueeze(1).expand({s, 4}) * g.constant_int(4, DType::I32).expand({s, 4}) +
               g.arange(4, DType::I32).unsqueeze(0).expand({s, 4});
  auto updated = cache.reshape({32}).scatter(index, k * 0.5);
  const NodeId scatter = static_cast<NodeId>(g.size() - 1);
  g.output("cache_out", updated.reshape({8, 4}));
  Region r;
  for (NodeId i = first; i <= scatter; ++i) r.nodes.push_back(i);
  r.outputs = {scatter};
  CpuOptions opts;
  opts.regions = {
      r};  // the Output node gets its own region (a scatter is its region's only output)
  Interpreter ref(g);
  CpuProgram p(g, opts);
  std::mt19937_64 rng(34);
  const TensorData c = random_tensor(DType::F32, {8, 4}, rng);
  ref.set_input("cache", c);
  p.set_input("cache", c);
  for (int64_t steps : {3, 1, 2}) {
    const TensorData kv = random_tensor(DType::F32, {steps, 4}, rng);
    const TensorData where = random_indexes(DType::I32, {steps}, 8, rng);
    ref.set_input("k", kv);
    p.set_input("k", kv);
    ref.set_input("pos", where);
    p.set_input("pos", where);
    ref.run();
    p.run();
    expect_close(p.output("cache_out"), ref.output("cache_out"));
  }
  EXPECT_EQ(p.kernels().size(), 2u);
  EXPECT_EQ(p.kernels()[0].launches.size(), 2u);  // parallel copy, then the ordered writes
  EXPECT_FALSE(p.kernels()[0].launches[1].parallel);
}

}  // namespace
}  // namespace luminal::cpu
