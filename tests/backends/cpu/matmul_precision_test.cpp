// CompileOptions::matmul_precision: the names parse; High adds the int16
// quantized product (CpuQMatMulInt16) next to the f32 one on hosts with
// AVX-512 VNNI, and the int16 f32 product (CpuMatMulInt16) where K is whole
// blocks of 32, Highest neither; the precision is part of the compile-cache key,
// and a Highest compile extracts no int16 kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "cpu_test_util.hpp"
#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/compiler/compile_cache.hpp"
#include "luminal/error.hpp"
#include "luminal/nn/linear.hpp"

namespace luminal::cpu {
namespace {

using compiler::MatmulPrecision;

// y = x @ W^T with W stored as Q4_1 blocks (a GGUF Linear layer's form).
void build_quantized_linear(Graph& g, DType weight = DType::Q4_1) {
  std::optional<nn::Linear> lin;
  {
    nn::ParameterStorage storage([=](const std::string&, DType) { return weight; });
    lin.emplace(g, "proj", 64, 32, /*bias=*/false);
  }
  g.output("y", lin->forward(g.input("x", {"s", 64})));
}

TEST(MatmulPrecision, NamesParse) {
  EXPECT_EQ(compiler::parse_matmul_precision("highest"), MatmulPrecision::Highest);
  EXPECT_EQ(compiler::parse_matmul_precision("high"), MatmulPrecision::High);
  EXPECT_EQ(compiler::to_string(MatmulPrecision::Highest), "highest");
  EXPECT_EQ(compiler::to_string(MatmulPrecision::High), "high");
  try {
    compiler::parse_matmul_precision("medium");
    FAIL() << "no error for an unknown precision";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"medium\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("highest"), std::string::npos) << e.what();
  }
}

// $LUMINAL_MATMUL_PRECISION sets the default of CompileOptions (read when
// options are made); unset or empty: high; a bad value names the variable.
TEST(MatmulPrecision, DefaultComesFromTheEnvironment) {
  const char* before = std::getenv("LUMINAL_MATMUL_PRECISION");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("LUMINAL_MATMUL_PRECISION", "highest", 1);
  EXPECT_EQ(compiler::CompileOptions().matmul_precision, MatmulPrecision::Highest);
  ::setenv("LUMINAL_MATMUL_PRECISION", "high", 1);
  EXPECT_EQ(compiler::CompileOptions().matmul_precision, MatmulPrecision::High);
  ::setenv("LUMINAL_MATMUL_PRECISION", "", 1);
  EXPECT_EQ(compiler::default_matmul_precision(), MatmulPrecision::High);
  ::unsetenv("LUMINAL_MATMUL_PRECISION");
  EXPECT_EQ(compiler::default_matmul_precision(), MatmulPrecision::High);
  ::setenv("LUMINAL_MATMUL_PRECISION", "medium", 1);
  try {
    compiler::default_matmul_precision();
    ADD_FAILURE() << "no error for LUMINAL_MATMUL_PRECISION=medium";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LUMINAL_MATMUL_PRECISION"), std::string::npos)
        << e.what();
  }
  if (saved)
    ::setenv("LUMINAL_MATMUL_PRECISION", saved->c_str(), 1);
  else
    ::unsetenv("LUMINAL_MATMUL_PRECISION");
}

TEST(MatmulPrecision, HighAddsTheInt16ProductWhereTheHostHasIt) {
  Graph g;
  build_quantized_linear(g);
  const CpuOps ops = cpu_ops();
  const auto high = testing::saturate_with_cpu_rules(g, MatmulPrecision::High);
  const auto highest = testing::saturate_with_cpu_rules(g, MatmulPrecision::Highest);
  EXPECT_EQ(high->nodes_of(ops.qmatmul).size(), 1u);
  EXPECT_EQ(highest->nodes_of(ops.qmatmul).size(), 1u);
  EXPECT_EQ(high->nodes_of(ops.qmatmul_int16).size(), host_has_int16_products() ? 1u : 0u);
  EXPECT_EQ(highest->nodes_of(ops.qmatmul_int16).size(), 0u);
  // Both products are in the class of the f32 one: alternatives of the search.
  if (host_has_int16_products()) {
    EXPECT_EQ(high->eg.class_of(high->nodes_of(ops.qmatmul_int16)[0]),
              high->eg.class_of(high->nodes_of(ops.qmatmul)[0]));
  }
  // Q8_0 the same way.
  Graph q8;
  build_quantized_linear(q8, DType::Q8_0);
  const auto high_q8 = testing::saturate_with_cpu_rules(q8, MatmulPrecision::High);
  EXPECT_EQ(high_q8->nodes_of(ops.qmatmul_int16).size(), host_has_int16_products() ? 1u : 0u);
}

// f32 Linear layers: K = 64 takes CpuMatMulInt16 at High on VNNI and AVX2 hosts (in
// the class of the BLAS / loop products), K = 40 (not whole blocks) never.
TEST(MatmulPrecision, HighAddsTheInt16F32ProductForWholeBlocks) {
  for (int64_t k : {64, 40}) {
    Graph g;
    nn::Linear lin(g, "proj", k, 32, /*bias=*/false);
    g.output("y", lin.forward(g.input("x", {"s", k})));
    const CpuOps ops = cpu_ops();
    const auto high = testing::saturate_with_cpu_rules(g, MatmulPrecision::High);
    const auto highest = testing::saturate_with_cpu_rules(g, MatmulPrecision::Highest);
    const size_t want = host_has_int16_products() && k % 32 == 0 ? 1u : 0u;
    ASSERT_EQ(high->nodes_of(ops.matmul_int16).size(), want) << "K = " << k;
    EXPECT_EQ(highest->nodes_of(ops.matmul_int16).size(), 0u);
    if (want == 1) {
      EXPECT_EQ(high->eg.class_of(high->nodes_of(ops.matmul_int16)[0]),
                high->eg.class_of(high->nodes_of(ops.matmul)[0]));
    }
  }
}

TEST(MatmulPrecision, IsPartOfTheCacheKey) {
  Graph g;
  build_quantized_linear(g);
  CpuBackend backend;
  compiler::CompileOptions o;
  const std::string high = compiler::cache_key(g, backend, o);
  o.matmul_precision = MatmulPrecision::Highest;
  EXPECT_NE(compiler::cache_key(g, backend, o), high);
}

TEST(MatmulPrecision, HighestExtractsNoInt16Kernel) {
  Graph g;
  build_quantized_linear(g);
  CpuBackend backend;
  compiler::CompileOptions o;
  o.cache = false;
  o.search_iters = 8;
  o.profile_dims = {{"s", 32}};
  o.matmul_precision = MatmulPrecision::Highest;
  const compiler::CompiledModel m = compiler::compile(g, backend, o);
  for (const KernelGroup& group : m.graph().kernel_groups()) {
    EXPECT_NE(group.op, "CpuQMatMulInt16");
    EXPECT_NE(group.op, "CpuMatMulInt16");
  }
}

}  // namespace
}  // namespace luminal::cpu
