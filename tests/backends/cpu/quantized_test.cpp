// GGUF block-quantized weights in graphs: a Cast from Q8_0 / Q4_0 / Q4_1 is the
// dequantization. The reference is dequantize (the GGUF reader's decoder,
// written independently from TensorData::get and the kernels' decoders); the
// CPU kernels (generated loops, CpuQMatMul, CpuGatherDequant) are checked
// against the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/io/ggml_type.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {
namespace {

GGMLType ggml_of(DType d) {
  switch (d) {
    case DType::Q8_0:
      return GGMLType::Q8_0;
    case DType::Q4_0:
      return GGMLType::Q4_0;
    default:
      return GGMLType::Q4_1;
  }
}

// Random blocks with sane f16 scales (random bytes elsewhere).
TensorData random_quantized(DType d, std::vector<int64_t> shape, std::mt19937& rng) {
  TensorData t(d, std::move(shape));
  const DTypeInfo& info = dtype_info(d);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  std::byte* p = t.data();
  const size_t blocks = static_cast<size_t>(t.numel()) / 32;
  for (size_t b = 0; b < blocks; ++b) {
    std::byte* block = p + b * info.block_bytes;
    for (size_t i = 0; i < info.block_bytes; ++i) block[i] = static_cast<std::byte>(byte(rng));
    const uint16_t dbits = float_to_f16_bits(scale(rng));
    std::memcpy(block, &dbits, 2);
    if (d == DType::Q4_1) {
      const uint16_t mbits = float_to_f16_bits(scale(rng) * 4);
      std::memcpy(block + 2, &mbits, 2);
    }
  }
  return t;
}

TensorData random_f32(std::vector<int64_t> shape, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return TensorData::from_doubles(DType::F32, std::move(shape), v);
}

// got == want within the kernels' tolerance: 1e-4 relative (absolute below 1),
// which f32 summation in another order than the interpreter's stays within.
::testing::AssertionResult near_reference(const TensorData& got, const TensorData& want) {
  if (got.shape() != want.shape()) return ::testing::AssertionFailure() << "shapes differ";
  for (int64_t i = 0; i < want.numel(); ++i)
    if (!(std::abs(got.get(i) - want.get(i)) <= 1e-4 * std::max(1.0, std::abs(want.get(i)))))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.get(i) << " vs " << want.get(i);
  return ::testing::AssertionSuccess();
}

const DType kQuantized[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1};

TEST(Quantized, ElementsDecodeAsTheGgufReaderDoes) {
  std::mt19937 rng(1);
  for (DType d : kQuantized) {
    TensorData t = random_quantized(d, {4, 64}, rng);
    const std::vector<float> want =
        dequantize(ggml_of(d), std::span<const std::byte>(t.data(), storage_bytes(d, t.numel())));
    for (int64_t i = 0; i < t.numel(); ++i)
      ASSERT_EQ(static_cast<float>(t.get(i)), want[static_cast<size_t>(i)])
          << to_string(d) << " " << i;
    EXPECT_THROW(t.get(t.numel()), IndexError);
  }
}

TEST(Quantized, CastIsTheDequantizationOnTheInterpreterAndInKernels) {
  std::mt19937 rng(2);
  for (DType d : kQuantized) {
    Graph g;
    Tensor q = g.weight("q", {3, 64}, d);
    // Read through a transposing view too: the Cast reads elements, not rows.
    g.output("dense", g.cast(q, DType::F32));
    g.output("t", g.cast(q.permute({1, 0}), DType::F16));
    TensorData data = random_quantized(d, {3, 64}, rng);
    const std::vector<float> want = dequantize(
        ggml_of(d), std::span<const std::byte>(data.data(), storage_bytes(d, data.numel())));
    Interpreter ref(g);
    ref.set_input("q", data);
    ref.run();
    for (int64_t i = 0; i < 3 * 64; ++i)
      ASSERT_EQ(ref.output("dense").get(i), want[static_cast<size_t>(i)]);
    CpuProgram program(g);  // one generated kernel per node
    program.set_input("q", data);
    program.run();
    for (const char* out : {"dense", "t"})
      for (int64_t i = 0; i < ref.output(out).numel(); ++i)
        ASSERT_EQ(program.output(out).get(i), ref.output(out).get(i)) << to_string(d) << " " << out;
  }
  Graph g;
  Tensor x = g.input("x", {32});
  EXPECT_THROW(g.cast(x, DType::Q4_1), DTypeError);  // quantized types are storage only
}

// A Linear layer with quantized storage (nn::ParameterStorage), as the
// CpuQMatMul kernel group: dequantized inside the kernel.
TEST(Quantized, QMatMulKernelMatchesInterpreter) {
  std::mt19937 rng(3);
  for (DType d : kQuantized) {
    for (int64_t k : {64, 320}) {  // 320: a 256-wide tile and a tail
      Graph g;
      Tensor x = g.input("x", {"s", k});
      std::optional<nn::Linear> lin;
      {
        nn::ParameterStorage storage([&](const std::string&, DType) { return d; });
        lin.emplace(g, "lin", k, 48, /*bias=*/false);
      }
      Tensor y = lin->forward(x);
      g.output("y", y);
      // The group: the Cast (dequantization), the Mul and the SumReduce.
      std::vector<NodeId> members;
      for (NodeId id = 0; id < g.size(); ++id) {
        const OpKind kind = g.node(id).kind;
        if (kind == OpKind::Cast || kind == OpKind::Mul || kind == OpKind::SumReduce)
          members.push_back(id);
      }
      ASSERT_EQ(members.size(), 3u);
      CpuOptions options;
      options.regions = {Region(members, {}, "CpuQMatMul")};
      CpuProgram program(g, options);
      bool fused = false;
      for (const CpuKernel& kern : program.kernels())
        fused = fused || kern.code.find("lk::qmatmul<") != std::string::npos;
      EXPECT_TRUE(fused) << "CpuQMatMul did not produce the quantized kernel";
      Interpreter ref(g);
      const TensorData w = random_quantized(d, {48, k}, rng);
      program.set_input("lin.weight", w);
      ref.set_input("lin.weight", w);
      for (int64_t s : {1, 5, 70}) {  // 70: the GEMM path (M >= 16: lk::qgemm)
        const TensorData xs = random_f32({s, k}, rng);
        program.set_input("x", xs);
        ref.set_input("x", xs);
        program.run();
        ref.run();
        ASSERT_TRUE(near_reference(program.output("y"), ref.output("y")))
            << to_string(d) << " k=" << k << " s=" << s;
      }
    }
  }
}

// The Cast, Mul and SumReduce of every quantized product in `g`: one
// CpuQMatMul group each.
std::vector<Region> qmatmul_regions(const Graph& g) {
  std::vector<Region> regions;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (g.node(id).kind != OpKind::SumReduce) continue;
    const NodeId mul = g.node(id).operands[0].node;
    NodeId cast = 0;
    for (const Operand& o : g.node(mul).operands)
      if (g.node(o.node).kind == OpKind::Cast) cast = o.node;
    regions.emplace_back(std::vector<NodeId>{cast, mul, id}, std::vector<NodeId>{}, "CpuQMatMul");
  }
  return regions;
}

// The decode-shaped GEMV / small GEMM (M < 64 rows, the lk::qmatmul path) for
// every block type and row count that exercises the row tiles (4 + 4 + ... +
// remainder), on one and two threads, with K = 96 (not a multiple of the old
// 256-element tile) and odd N (a column tail), against the interpreter. The
// second product reads x through a slice (row stride and offset not K, 0).
// Also the other builds of the kernel: the portable one (no vector code), as a
// host without AVX2 runs it, and the AVX2 one (-mno-avx512f), as a host without
// AVX-512 runs it (on such a host the native build is that one already).
TEST(Quantized, QMatMulDecodeShapesMatchInterpreter) {
  std::mt19937 rng(7);
  for (DType d : kQuantized) {
    Graph g;
    Tensor x = g.input("x", {"s", 96});
    Tensor wide = g.input("wide", {"s", 352});
    std::optional<nn::Linear> a, b;
    {
      nn::ParameterStorage storage([&](const std::string&, DType) { return d; });
      a.emplace(g, "a", 96, 37, /*bias=*/false);
      b.emplace(g, "b", 320, 19, /*bias=*/false);
    }
    g.output("ya", a->forward(x));
    g.output("yb", b->forward(wide.slice(1, 16, 336)));
    const TensorData wa = random_quantized(d, {37, 96}, rng);
    const TensorData wb = random_quantized(d, {19, 320}, rng);
    Interpreter ref(g);
    ref.set_input("a.weight", wa);
    ref.set_input("b.weight", wb);
    for (const char* flag : {"", "-DLK_QMM_PORTABLE", "-mno-avx512f"}) {
      for (int threads : {1, 2}) {
        CpuOptions options;
        options.regions = qmatmul_regions(g);
        options.num_threads = threads;
        if (*flag != '\0') options.jit.extra_flags = {flag};
        CpuProgram program(g, options);
        int quantized = 0;  // (other kernels: the outputs' copies)
        for (const CpuKernel& kern : program.kernels())
          quantized += kern.code.find("lk::qmatmul<") != std::string::npos ? 1 : 0;
        ASSERT_EQ(quantized, 2) << "a product did not become the quantized kernel";
        program.set_input("a.weight", wa);
        program.set_input("b.weight", wb);
        for (int64_t s : {1, 2, 3, 7, 15}) {  // (16 rows on: the GEMM path)
          const TensorData xs = random_f32({s, 96}, rng), ws = random_f32({s, 352}, rng);
          program.set_input("x", xs);
          program.set_input("wide", ws);
          ref.set_input("x", xs);
          ref.set_input("wide", ws);
          program.run();
          ref.run();
          for (const char* out : {"ya", "yb"})
            ASSERT_TRUE(near_reference(program.output(out), ref.output(out)))
                << to_string(d) << " " << out << " s=" << s << " threads=" << threads << " "
                << flag;
        }
      }
    }
  }
}

// Long rows: the AVX-512 kernel takes K in pieces of at most 1024 blocks (a
// piece after the first adds to the output) and keeps Q4_1's per-block sums
// of x for a group of rows on the stack (4096 blocks' worth): 9 rows of 512
// blocks span two row groups, 6 rows of 1056 blocks two pieces of K (fewer
// than 16 rows: the GEMV tiles, not lk::qgemm).
TEST(Quantized, QMatMulLongRowsMatchInterpreter) {
  std::mt19937 rng(11);
  for (DType d : kQuantized) {
    for (const auto& [s, k] : {std::pair<int64_t, int64_t>{9, 16384}, {6, 33792}}) {
      Graph g;
      Tensor x = g.input("x", {s, k});
      std::optional<nn::Linear> lin;
      {
        nn::ParameterStorage storage([&](const std::string&, DType) { return d; });
        lin.emplace(g, "lin", k, 5, /*bias=*/false);
      }
      g.output("y", lin->forward(x));
      CpuOptions options;
      options.regions = qmatmul_regions(g);
      CpuProgram program(g, options);
      Interpreter ref(g);
      const TensorData w = random_quantized(d, {5, k}, rng);
      const TensorData xs = random_f32({s, k}, rng);
      for (const char* in : {"lin.weight", "x"}) {
        program.set_input(in, *in == 'x' ? xs : w);
        ref.set_input(in, *in == 'x' ? xs : w);
      }
      program.run();
      ref.run();
      ASSERT_TRUE(near_reference(program.output("y"), ref.output("y")))
          << to_string(d) << " k=" << k << " s=" << s;
    }
  }
}

// CpuGatherDequant reads the table in place and decodes only the gathered
// elements: gathering its last row must not read past the table, which here
// ends right before an inaccessible page; the rows are the reference's.
TEST(Quantized, GatherDequantNeverReadsPastTheTable) {
  std::mt19937 rng(9);
  for (DType d : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    Graph g;
    std::optional<nn::Embedding> emb;
    {
      nn::ParameterStorage storage([d](const std::string&, DType) { return d; });
      emb.emplace(g, "emb", 50, 64);
    }
    g.output("e", emb->forward(g.input("ids", {3}, DType::I32)));
    std::vector<Region> regions;
    for (NodeId id = 0; id < g.size(); ++id)
      if (g.node(id).kind == OpKind::Gather)
        regions.emplace_back(std::vector<NodeId>{g.node(id).operands[1].node, id},
                             std::vector<NodeId>{}, "CpuGatherDequant");
    ASSERT_EQ(regions.size(), 1u);
    CpuOptions options;
    options.regions = regions;
    CpuProgram program(g, options);
    const TensorData table = random_quantized(d, {50, 64}, rng);
    testing::bind_guarded(program, "emb.weight", table);
    TensorData ids(DType::I32, {3});
    ids.set_int(0, 49), ids.set_int(1, 0), ids.set_int(2, 49);
    program.set_input("ids", ids);
    program.run();
    Interpreter ref(g);
    ref.set_input("emb.weight", table);
    ref.set_input("ids", ids);
    ref.run();
    testing::expect_close(program.output("e"), ref.output("e"), 0, 0, to_string(d));
  }
}

// Through the compiler: the rules offer CpuQMatMul (and at the default matmul
// precision, high, CpuQMatMulInt16) and CpuGatherDequant, and whatever the
// search picks agrees with the interpreter: within 1e-4 in f32, 1e-3 where the
// int16 product may round x to 16 bits per block (1.4e-4 seen on logits of 5).
TEST(Quantized, CompiledEmbeddingAndLinearMatchInterpreter) {
  Graph g;
  Tensor ids = g.input("ids", {1, "s"}, DType::I32);
  std::optional<nn::Embedding> emb;
  std::optional<nn::Linear> head;
  {
    nn::ParameterStorage storage([](const std::string& name, DType) {
      return name == "emb.weight" ? DType::Q8_0 : DType::Q4_1;
    });
    emb.emplace(g, "emb", 50, 64);
    head.emplace(g, "head", 64, 50, false);
  }
  g.output("logits", head->forward(emb->forward(ids)));
  CpuBackend backend;
  compiler::CompileOptions opts;
  opts.cache = false;
  opts.search_iters = 6;
  compiler::CompiledModel model = compiler::compile(g, backend, opts);
  const double tolerance = opts.matmul_precision == compiler::MatmulPrecision::High ? 1e-3 : 1e-4;
  std::mt19937 rng(4);
  const TensorData we = random_quantized(DType::Q8_0, {50, 64}, rng);
  const TensorData wh = random_quantized(DType::Q4_1, {50, 64}, rng);
  Interpreter ref(g);
  model.set_input("emb.weight", we);
  model.set_input("head.weight", wh);
  ref.set_input("emb.weight", we);
  ref.set_input("head.weight", wh);
  for (int64_t s : {3, 1}) {
    TensorData t(DType::I32, {1, s});
    for (int64_t i = 0; i < s; ++i) t.set_int(i, (i * 17 + 5) % 50);
    model.set_input("ids", t);
    ref.set_input("ids", t);
    model.run();
    ref.run();
    for (int64_t i = 0; i < ref.output("logits").numel(); ++i)
      ASSERT_NEAR(model.output("logits").get(i), ref.output("logits").get(i), tolerance) << i;
  }
}

}  // namespace
}  // namespace luminal::cpu
