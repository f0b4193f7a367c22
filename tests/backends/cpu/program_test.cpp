// CpuProgram: the executor's interface (mirroring Interpreter), multi-call and
// changing dims, persistent inputs, the memory plan, threads, region checks,
// and compile errors in generated kernels.

#include "luminal/backends/cpu/program.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "backends/cpu/cpu_test_util.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

using testing::expect_close;
using testing::random_tensor;
using testing::TempDir;

// y = sum(x * w, 1) / s-independent scale; z = a view-heavy element-wise result.
void build_model(Graph& g) {
  auto x = g.input("x", {"s", 16});
  auto w = g.weight("w", {16});
  auto b = g.input("b", {"s"}, DType::I32);
  g.output("y", (x * w).sum_reduce(1) + b.cast(DType::F32));
  g.output("z", (x.permute({1, 0}).flip(1) * 2.0 + 1.0).exp2());
}

// build_model on the CPU program and the interpreter, the weight bound to
// both; run(s) binds random x and b of s rows to both, runs them and compares.
struct ModelRuns {
  Graph g;
  std::unique_ptr<Interpreter> ref;
  std::unique_ptr<CpuProgram> prog;
  std::mt19937_64 rng;
  explicit ModelRuns(uint64_t seed) : rng(seed) {
    build_model(g);
    ref = std::make_unique<Interpreter>(g);
    prog = std::make_unique<CpuProgram>(g);
    const TensorData w = random_tensor(DType::F32, {16}, rng);
    ref->set_input("w", w);
    prog->set_input("w", w);
  }
  void run(int64_t s) {
    const TensorData x = random_tensor(DType::F32, {s, 16}, rng);
    const TensorData b = random_tensor(DType::I32, {s}, rng);
    for (const auto& [name, t] : {std::pair{"x", &x}, std::pair{"b", &b}}) {
      ref->set_input(name, *t);
      prog->set_input(name, *t);
    }
    ref->run();
    prog->run();
    expect_close(prog->output("y"), ref->output("y"), 1, 8 * 0x1p-23 * 16 * 16,
                 "y s=" + std::to_string(s));
    expect_close(prog->output("z"), ref->output("z"), 1, 0, "z s=" + std::to_string(s));
  }
};

// run_before (a profile's bound): a deadline already past stops the run after
// its first kernel and says so; the program then runs to the end as before.
// ... and within a parallel launch: its pieces left once past the deadline
// are skipped (a single kernel of a naive candidate can take a second). Here
// none runs: the output keeps the previous run's values.
TEST(CpuProgram, RunBeforeSkipsTheRestOfALaunchPastTheDeadline) {
  Graph g;
  g.output("y", g.input("x", {1 << 18}).exp2());  // (one kernel writes the output)
  CpuOptions o;
  o.num_threads = 2;
  CpuProgram prog(g, o);
  prog.set_input("x", TensorData::full(DType::F32, {1 << 18}, 1.0));
  prog.run();
  EXPECT_EQ(prog.output("y").get((1 << 18) - 1), 2.0);
  prog.set_input("x", TensorData::full(DType::F32, {1 << 18}, 5.0));
  EXPECT_FALSE(prog.run_before({}, std::chrono::steady_clock::now()));
  EXPECT_EQ(prog.output("y").get(0), 2.0);
  EXPECT_EQ(prog.output("y").get((1 << 18) - 1), 2.0);
  prog.set_input("x", TensorData::full(DType::F32, {1 << 18}, 5.0));
  EXPECT_TRUE(prog.run_before({}, std::chrono::steady_clock::now() + std::chrono::hours(1)));
  EXPECT_EQ(prog.output("y").get(0), 32.0);
  EXPECT_EQ(prog.output("y").get((1 << 18) - 1), 32.0);
}

TEST(CpuProgram, RunBeforeStopsBetweenKernelsPastTheDeadline) {
  ModelRuns m(7);
  ASSERT_GE(m.prog->kernels().size(), 2u);
  std::mt19937_64 rng(1);
  m.prog->set_input("x", random_tensor(DType::F32, {3, 16}, rng));
  m.prog->set_input("b", random_tensor(DType::I32, {3}, rng));
  EXPECT_FALSE(m.prog->run_before({}, std::chrono::steady_clock::now()));
  EXPECT_FALSE(m.prog->has_input("x"));  // (transient inputs released as after any run)
  m.prog->set_input("x", random_tensor(DType::F32, {3, 16}, rng));
  m.prog->set_input("b", random_tensor(DType::I32, {3}, rng));
  EXPECT_TRUE(m.prog->run_before({}, std::chrono::steady_clock::now() + std::chrono::hours(1)));
  m.run(3);
}

TEST(CpuProgram, ChangingDimsAcrossCallsMatchTheInterpreter) {
  ModelRuns m(41);
  const CpuProgram& prog = *m.prog;
  const size_t kernels = prog.kernels().size();
  size_t arena_at_17 = 0;
  for (int64_t s : {3, 17, 1}) {
    m.run(s);
    EXPECT_EQ(prog.dims().at("s"), s);
    if (s == 17) arena_at_17 = prog.stats().arena_bytes;
    if (s == 1) {
      EXPECT_LT(prog.stats().arena_bytes, arena_at_17);  // the plan follows the dims
    }
  }
  EXPECT_EQ(prog.kernels().size(), kernels);  // nothing was compiled after the constructor
}

// A size growing a little per run (a decode step's cache position) keeps the
// memory plan for many runs: each dims-dependent size gets room to grow, and
// the plan is made again only when a size outgrows it or falls to half of it.
// Every run matches the interpreter.
TEST(CpuProgram, PlanIsKeptWhileSizesFitTheirRoom) {
  ModelRuns m(43);
  const CpuProgram& prog = *m.prog;
  m.run(200);
  ASSERT_EQ(prog.stats().plans, 1u);
  const size_t arena_at_200 = prog.stats().arena_bytes;
  // [200, 16] f32 = 12800 bytes get 13312 (an eighth of 8192 at a time): the
  // plan holds to s = 208, the next one to 224.
  for (int64_t s = 201; s < 216; ++s) m.run(s);
  EXPECT_EQ(prog.stats().plans, 2u);
  m.run(90);  // under half the room: planned again, for less
  EXPECT_EQ(prog.stats().plans, 3u);
  EXPECT_LT(prog.stats().arena_bytes, arena_at_200);
  m.run(230);  // past the room
  EXPECT_EQ(prog.stats().plans, 4u);
}

TEST(CpuProgram, SymbolicViewsAcrossCalls) {
  // The last s rows of an [n, 8] cache, flipped, plus new rows: views whose
  // offsets depend on two dims that change between calls.
  Graph g;
  auto cache = g.input("cache", {"n", 8});
  auto k = g.input("k", {"s", 8});
  const Expr n("n"), s("s");
  auto recent = cache.slice(0, n - s, n).flip(0);
  g.output("out", (recent + k).sum_reduce(1) * 0.5);
  CpuOptions fused;
  fused.regions = {{{}, {}, {}}};
  for (NodeId i = 0; i < g.size(); ++i)
    if (g.node(i).kind != OpKind::Input) fused.regions[0].nodes.push_back(i);
  Interpreter ref(g);
  CpuProgram prog(g, fused);
  ASSERT_EQ(prog.kernels().size(), 1u);
  std::mt19937_64 rng(44);
  for (auto [rows, news] : {std::pair<int64_t, int64_t>{5, 2}, {9, 9}, {3, 1}}) {
    const TensorData c = random_tensor(DType::F32, {rows, 8}, rng);
    const TensorData kv = random_tensor(DType::F32, {news, 8}, rng);
    for (const auto& [name, data] : {std::pair<std::string, TensorData>{"cache", c}, {"k", kv}}) {
      ref.set_input(name, data);
      prog.set_input(name, data);
    }
    ref.run();
    prog.run();
    expect_close(prog.output("out"), ref.output("out"), 1, 8 * 0x1p-23 * 8 * 8, "out");
  }
}

TEST(CpuProgram, PersistentInputsSurviveOthersAreReleased) {
  Graph g;
  build_model(g);
  CpuProgram prog(g);
  std::mt19937_64 rng(42);
  prog.set_input("w", random_tensor(DType::F32, {16}, rng));
  for (int call = 0; call < 3; ++call) {
    prog.set_input("x", random_tensor(DType::F32, {4, 16}, rng));
    prog.set_input("b", random_tensor(DType::I32, {4}, rng));
    prog.run();
    EXPECT_TRUE(prog.has_input("w"));
    EXPECT_FALSE(prog.has_input("x"));
  }
  EXPECT_THROW(prog.run(), LookupError);  // x and b were released
}

TEST(CpuProgram, InputAndOutputErrors) {
  Graph g;
  build_model(g);
  CpuProgram prog(g);
  EXPECT_THROW(prog.set_input("nope", TensorData(DType::F32, {16})), LookupError);
  EXPECT_THROW(prog.set_input("x", TensorData(DType::F64, {2, 16})), DTypeError);
  EXPECT_THROW(prog.set_input("x", TensorData(DType::F32, {32})), ShapeError);
  EXPECT_THROW(prog.set_input("w", TensorData(DType::F32, {17})), ShapeError);  // fixed: at once
  EXPECT_FALSE(prog.has_input("w"));
  EXPECT_THROW(prog.output("y"), LookupError);  // before the first run
  EXPECT_THROW(prog.output("nope"), LookupError);
  prog.set_input("w", TensorData(DType::F32, {16}));
  prog.set_input("x", TensorData(DType::F32, {2, 16}));
  prog.set_input("b", TensorData(DType::I32, {3}));  // s = 2 from x, 3 from b
  EXPECT_THROW(prog.run(), ShapeError);
  prog.set_input("w", TensorData(DType::F32, {16}));
  prog.set_input("x", TensorData(DType::F32, {2, 15}));  // the fixed dim is wrong
  prog.set_input("b", TensorData(DType::I32, {2}));
  EXPECT_THROW(prog.run(), ShapeError);
}

TEST(CpuProgram, ArenaReusesMemoryAlongAChain) {
  Graph g;
  auto x = g.input("x", {1000});
  auto y = x;
  for (int i = 0; i < 10; ++i) y = y * 1.01;
  g.output("y", y);
  CpuProgram prog(g);  // unfused: 10 intermediates of 4000 bytes (and 10 constants)
  prog.set_input("x", TensorData::full(DType::F32, {1000}, 1.0));
  prog.run();
  EXPECT_LE(prog.stats().arena_bytes, 3 * 4096u);  // far below 10 * 4000
  EXPECT_GE(prog.stats().arena_bytes, prog.stats().live_peak_bytes);
  EXPECT_NEAR(prog.output("y").get(999), std::pow(1.01, 10), 1e-5);
}

// A graph output that only copies a kernel's result is written by that kernel
// (no copy): other kernels then read the value from the output tensor, a
// second output of it and a permuted one are still copied, and taking the
// output between runs gives the next run a fresh tensor.
TEST(CpuProgram, OutputsAreWrittenByTheirProducer) {
  Graph g;
  auto x = g.input("x", {"s", 8});
  auto e = (x * 2.0).exp2();
  g.output("a", e);
  g.output("b", e);
  g.output("d", e.sum_reduce(1));
  g.output("t", e.permute({1, 0}));
  Interpreter ref(g);
  CpuProgram prog(g);
  EXPECT_EQ(prog.stats().outputs_written_by_producer, 2u);  // a (not b, not t) and d
  std::mt19937_64 rng(43);
  for (int64_t s : {3, 5, 3}) {
    const TensorData xv = random_tensor(DType::F32, {s, 8}, rng);
    ref.set_input("x", xv);
    prog.set_input("x", xv);
    ref.run();
    prog.run();
    for (const char* name : {"a", "b", "d", "t"})
      expect_close(prog.output(name), ref.output(name), 1, 1e-6, name);
    const TensorData taken = prog.take_output("a");
    expect_close(taken, ref.output("a"), 1, 0, "taken a");
  }
}

TEST(CpuProgram, ThreadCountsGiveIdenticalResults) {
  Graph g;
  auto x = g.input("x", {"r", 100});
  g.output("y", (x * x + 1.0).sqrt().recip());
  g.output("s", (x * 0.001).sum_reduce(1));
  std::mt19937_64 rng(43);
  const TensorData in = random_tensor(DType::F32, {3000, 100}, rng);
  std::map<std::string, TensorData> results[2];
  int k = 0;
  for (int threads : {1, 3}) {
    CpuOptions o;
    o.num_threads = threads;
    CpuProgram prog(g, o);
    prog.set_input("x", in);
    prog.run();
    results[k++] = prog.outputs();
  }
  expect_close(results[0].at("y"), results[1].at("y"));
  expect_close(results[0].at("s"), results[1].at("s"));
}

TEST(CpuProgram, RegionChecks) {
  Graph g;
  auto x = g.input("x", {4});
  auto a = x * 2.0;  // %1 constant, %2 mul
  auto b = a + 1.0;  // %3 constant, %4 add
  g.output("b", b);  // %5
  g.output("a", a);  // %6
  const NodeId mul = a.node(), add = b.node();
  auto fails = [&](std::vector<Region> regions, const std::string& words) {
    CpuOptions o;
    o.regions = std::move(regions);
    try {
      CpuProgram p(g, o);
      ADD_FAILURE() << "accepted regions expected to fail with: " << words;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  fails({{{mul}, {mul}}, {{mul, add}, {add}}}, "is in regions");
  fails({{{mul, add}, {add}}}, "is used outside its region");  // a is read by Output "a"
  fails({{{0}, {0}}}, "is an Input");
  fails({{{mul, 5}, {mul, 5}}, {{add}, {add}}}, "cycle");  // mul -> add -> Output %5
  fails({{{mul}, {mul, add}}}, "not a member");
  CpuOptions ok;
  ok.regions = {{{1, mul, 3, add, 5, 6}, {5, 6}, {}}};
  EXPECT_EQ(CpuProgram(g, ok).kernels().size(), 1u);
}

TEST(CpuProgram, RegionsMayLeaveNodesToTheDefault) {
  Graph g;
  auto x = g.input("x", {4});
  auto a = x * 2.0;
  auto b = a + 1.0;
  g.output("b", b);
  g.output("a", a);
  CpuOptions o;
  o.regions = {{{a.node(), b.node()}, {}, {}}};  // outputs derived: both are read elsewhere
  CpuProgram p(g, o);
  ASSERT_FALSE(p.kernels().empty());
  EXPECT_EQ(p.kernels()[2].outputs.size(), 2u);  // after the two constants
  p.set_input("x", TensorData::from_doubles(DType::F32, {4}, {1, 2, 3, 4}));
  p.run();
  expect_close(p.output("b"), TensorData::from_doubles(DType::F32, {4}, {3, 5, 7, 9}));
  expect_close(p.output("a"), TensorData::from_doubles(DType::F32, {4}, {2, 4, 6, 8}));
}

// A kernel is compiled under a name from its source, not from its node ids:
// the same kernel in another program (a search candidate whose graph numbers
// its nodes otherwise) comes from the cache, and both run right.
TEST(CpuProgram, TheSameKernelAtOtherNodeIdsComesFromTheCache) {
  TempDir dir;
  CpuOptions o;
  o.jit.cache_dir = dir.path();
  Graph a;
  a.output("y", (a.input("x", {4}).sqrt() * 3.0).exp2());
  Graph b;
  auto other = b.input("other", {4});
  auto bx = b.input("x", {4});
  b.output("unrelated", other.sin());  // (first: the kernels of y get other ids)
  b.output("y", (bx.sqrt() * 3.0).exp2());
  CpuProgram pa(a, o);
  CpuProgram pb(b, o);
  // (a: sqrt, constant, mul, exp2, output; b: sin first, then a's five under
  // other ids, which are cached; the outputs' copies are one kernel)
  EXPECT_EQ(pa.stats().kernels_compiled, 5u);
  EXPECT_EQ(pb.stats().kernels_compiled, 1u);
  EXPECT_EQ(pb.stats().kernels_from_cache, 5u);
  const TensorData x = TensorData::from_doubles(DType::F32, {4}, {1, 4, 9, 16});
  pa.set_input("x", x);
  pa.run();
  pb.set_input("x", x);
  pb.set_input("other", x);
  pb.run();
  const TensorData want = TensorData::from_doubles(DType::F32, {4}, {8, 64, 512, 4096});
  expect_close(pa.output("y"), want);
  expect_close(pb.output("y"), want);
  expect_close(pb.output("unrelated"),
               TensorData::from_doubles(
                   DType::F32, {4}, {std::sin(1.0), std::sin(4.0), std::sin(9.0), std::sin(16.0)}));
}

TEST(CpuProgram, SyntaxErrorInAKernelNamesTheKernel) {
  Graph g;
  auto x = g.input("x", {4});
  g.output("y", x.sqrt() * 3.0);
  TempDir dir;
  CpuOptions o;
  o.jit.cache_dir = dir.path();
  std::string broken;
  o.kernel_hook = [&](CpuKernel& k) {
    if (k.name.find("mul") == std::string::npos) return;
    broken = k.name;
    const size_t eol = k.code.find('\n');
    k.code.insert(eol + 1, "this is not C++;\n");  // line 2 of the kernel
  };
  try {
    CpuProgram p(g, o);
    FAIL() << "the broken kernel compiled";
  } catch (const KernelCompileError& e) {
    EXPECT_EQ(e.kernel(), broken);
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find(broken), std::string::npos) << e.what();
  }
}

TEST(CpuProgram, DeadNodesAreNotCompiled) {
  Graph g;
  auto x = g.input("x", {4});
  auto unused = g.input("unused", {4});
  (void)(unused.exp2() * 5.0);  // never reaches an output
  g.output("y", x + 1.0);
  CpuProgram p(g);
  EXPECT_EQ(p.kernels().size(), 3u);  // constant, add, output
  p.set_input("x", TensorData::full(DType::F32, {4}, 1.0));
  p.run();  // "unused" need not be bound
  EXPECT_EQ(p.output("y").get(3), 2.0);
}

}  // namespace
}  // namespace luminal::cpu

namespace luminal::cpu {
namespace {

// Regression: an outer axis whose size is a compound expression (p + s, as
// attention over a KV cache has) must be decomposed as `_t % (p + s)`, not
// `_t % p + s` (which divided by zero when p = 0 and read wrong rows otherwise).
TEST(CpuProgram, CompoundOuterAxisSizes) {
  Graph g;
  const Expr len = Expr("p") + Expr("s");
  Tensor x = g.input("x", {3, len, 4});
  g.output("y", x * 2.0 + 1.0);
  CpuProgram program(g);
  Interpreter ref(g);
  for (int64_t p : {0, 2}) {
    const int64_t n = 3 * (p + 2) * 4;
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
    const TensorData t = TensorData::from_doubles(DType::F32, {3, p + 2, 4}, v);
    program.set_input("x", t);
    ref.set_input("x", t);
    program.run({{"p", p}, {"s", 2}});
    ref.run({{"p", p}, {"s", 2}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(program.output("y").get(i), ref.output("y").get(i)) << "p=" << p << " i=" << i;
  }
}

}  // namespace
}  // namespace luminal::cpu

namespace luminal::cpu {
namespace {

// A KV-cache-like state: rows p .. p + s - 1 of a persistent [8, 4] cache are
// replaced by the new rows; the updated cache is "cache.next" and the result
// reads it. Updated in place, successive runs must agree with the interpreter
// fed its own "cache.next" back, without the caller rebinding anything.
TEST(CpuProgram, InPlaceStateUpdate) {
  Graph g;
  Tensor cache = g.weight("cache", {8, 4});
  Tensor rows = g.input("rows", {"s", 4});
  // Flat destination indexes of rows p .. p + s - 1: p * 4 + (0 .. 4s - 1).
  Tensor pos = g.iota(Expr::index_var() + Expr("p") * 4, Expr("s") * 4, DType::I32);
  Tensor next = g.scatter(cache.reshape({32}), pos, rows.reshape({Expr("s") * 4})).reshape({8, 4});
  g.output("cache.next", next);
  g.output("total", (next * 2.0).sum_reduce(1));
  CpuProgram program(g);
  EXPECT_TRUE(program.update_in_place("cache.next"));
  EXPECT_FALSE(program.update_in_place("total"));
  Interpreter ref(g);
  const TensorData zeros = TensorData::full(DType::F32, {8, 4}, 0.0);
  program.set_input("cache", zeros);
  ref.set_input("cache", zeros);
  int64_t p = 0;
  for (int64_t s : {3, 1, 2}) {
    std::vector<double> v(static_cast<size_t>(s * 4));
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(p * 10 + k + 1);
    const TensorData r = TensorData::from_doubles(DType::F32, {s, 4}, v);
    program.set_input("rows", r);
    ref.set_input("rows", r);
    program.run({{"p", p}});
    ref.run({{"p", p}});
    EXPECT_EQ(program.outputs().count("cache.next"), 0u);
    for (int64_t k = 0; k < 32; ++k)
      ASSERT_EQ(program.output("cache.next").get(k), ref.output("cache.next").get(k)) << k;
    for (int64_t k = 0; k < 8; ++k)
      ASSERT_EQ(program.output("total").get(k), ref.output("total").get(k)) << k;
    ref.set_input("cache", ref.output("cache.next"));  // the interpreter's caller rebinds
    p += s;
  }
}

// State bound from memory owned elsewhere (a numpy array, a file mapping) is
// copied once: the in-place updates never write into the caller's bytes, both
// when bound after update_in_place and when bound before it.
TEST(CpuProgram, InPlaceStateNeverWritesABorrowedInput) {
  Graph g;
  Tensor cache = g.weight("cache", {4});
  Tensor idx = g.input("idx", {1}, DType::I32);
  Tensor src = g.input("src", {1});
  g.output("cache.next", g.scatter(cache, idx, src));
  for (const bool bind_first : {false, true}) {
    auto callers = std::make_shared<std::vector<float>>(4, 7.0f);
    // Moved in, as the Python binding does (a copy of a borrowed tensor owns its bytes).
    TensorData borrowed =
        TensorData::borrow(DType::F32, {4}, reinterpret_cast<std::byte*>(callers->data()), callers);
    CpuProgram program(g);
    if (bind_first) program.set_input("cache", std::move(borrowed));
    ASSERT_TRUE(program.update_in_place("cache.next"));
    if (!bind_first) program.set_input("cache", std::move(borrowed));
    program.set_input("idx", TensorData::from_doubles(DType::I32, {1}, {2}));
    program.set_input("src", TensorData::from_doubles(DType::F32, {1}, {5}));
    program.run();
    EXPECT_EQ(program.output("cache.next").get(2), 5.0) << "bind_first=" << bind_first;
    EXPECT_EQ(program.output("cache.next").get(1), 7.0) << "bind_first=" << bind_first;
    EXPECT_EQ(*callers, std::vector<float>(4, 7.0f)) << "bind_first=" << bind_first;
  }
}

TEST(CpuProgram, InPlaceRefusedWhenTheStateIsReadElsewhere) {
  Graph g;
  Tensor cache = g.weight("cache", {8});
  Tensor idx = g.input("idx", {2}, DType::I32);
  Tensor src = g.input("src", {2});
  g.output("cache.next", g.scatter(cache, idx, src));
  g.output("old_sum", cache.sum_reduce(0));  // reads the old state
  CpuProgram program(g);
  EXPECT_FALSE(program.update_in_place("cache.next"));
  EXPECT_FALSE(program.update_in_place("no such output"));
}

}  // namespace
}  // namespace luminal::cpu
