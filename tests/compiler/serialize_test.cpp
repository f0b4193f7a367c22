// Graph serialisation round trips: random graphs over every op, views and
// symbolic dims come back with the same text dump and the same outputs.
#include "luminal/compiler/serialize.hpp"

#include <gtest/gtest.h>

#include <random>

#include "luminal/core/tensor.hpp"
#include "luminal/egraph/equivalence.hpp"
#include "luminal/error.hpp"

namespace luminal::compiler {
namespace {

/// A random graph: inputs with symbolic dims, unary/binary/reduce/cast ops,
/// iota/gather, constants of several dtypes, read through random views.
std::unique_ptr<Graph> random_graph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto g = std::make_unique<Graph>();
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Tensor> pool = {g->input("x", {"s", 4}), g->weight("w", {"s", 4}),
                              g->input("y\t name", {3, "s", 4}, DType::F32).sum_reduce(0)};
  const OpKind unary[] = {OpKind::Exp2, OpKind::Log2, OpKind::Sin, OpKind::Sqrt, OpKind::Recip};
  const OpKind binary[] = {OpKind::Add, OpKind::Mul, OpKind::Mod};
  for (int step = 0; step < 12; ++step) {
    Tensor a = pool[pick(pool.size())];
    switch (pick(7)) {
      case 0:
        pool.push_back(g->unary(unary[pick(5)], a));
        break;
      case 1: {
        Tensor b = pool[pick(pool.size())];
        pool.push_back(g->binary(binary[pick(3)], a, b.flip(static_cast<int>(pick(2)))));
        break;
      }
      case 2:
        pool.push_back(a.permute({1, 0}).contiguous().permute({1, 0}) * -0.0);
        break;
      case 3:
        pool.push_back(a.max_reduce(1).unsqueeze(1).expand({"s", 4}) + a.slice(1, 0, 4));
        break;
      case 4:
        pool.push_back(a.cast(DType::BF16).cast(DType::F32) * 2.5);
        break;
      case 5: {
        // Gather rows through an iota index chain (in range for every s).
        Tensor idx = g->iota(Expr::index_var() % 4, Expr("s") * 4, DType::I64);
        pool.push_back(idx.gather_from(a.slice(0, 0, 1).reshape({4})).reshape({"s", 4}));
        break;
      }
      default:
        pool.push_back(a.lt(pool[0]).cast(DType::F32) +
                       g->constant_int(-3, DType::I64).cast(DType::F32).expand({"s", 4}));
    }
  }
  g->output("out", pool.back());
  g->output("other", pool[pool.size() / 2]);
  return g;
}

TEST(Serialize, RandomGraphsRoundTrip) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    auto g = random_graph(seed);
    const std::string text = serialize_graph(*g);
    auto back = deserialize_graph(text);
    ASSERT_EQ(back->to_text(), g->to_text()) << "seed " << seed;
    EXPECT_EQ(serialize_graph(*back), text);
    const DimMap dims = {{"s", 3}};
    const auto inputs = egraph::random_inputs(*g, dims, seed);
    const auto want = egraph::run_graph(*g, inputs, dims);
    const auto got = egraph::run_graph(*back, inputs, dims);
    for (const auto& [name, data] : want)
      EXPECT_EQ(egraph::compare_exact(data, got.at(name)), "") << "seed " << seed << " " << name;
  }
}

TEST(Serialize, ConstantsAndNamesAreExact) {
  Graph g;
  Tensor x = g.input("x with spaces\n", {2}, DType::F64, true);
  g.output("o", x + g.constant(-0.0, DType::F64) + g.constant(0.1, DType::F64));
  g.output("i", g.constant_int(INT64_MIN + 1, DType::I64));
  auto back = deserialize_graph(serialize_graph(g));
  EXPECT_EQ(back->to_text(), g.to_text());
  EXPECT_TRUE(back->node(0).persistent);
  EXPECT_EQ(back->node(0).name, "x with spaces\n");
  EXPECT_EQ(back->node(back->size() - 2).int_value, INT64_MIN + 1);
}

TEST(Serialize, MalformedTextThrows) {
  Graph g;
  g.output("y", g.input("x", {"s"}) * 2.0);
  const std::string text = serialize_graph(g);
  for (size_t cut : {size_t{0}, size_t{5}, text.size() / 2, text.size() - 2})
    EXPECT_THROW(deserialize_graph(text.substr(0, cut)), Error) << cut;
  EXPECT_THROW(deserialize_graph(text + "junk"), Error);
  EXPECT_THROW(deserialize_graph("luminal-graph 2 0\n"), Error);
}

}  // namespace
}  // namespace luminal::compiler
