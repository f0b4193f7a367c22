// The CpuMatMulAmx kernel (lk::amx_gemm: an f32 product on AMX tiles, each
// operand split into two bf16 and three bf16 products summed in f32) against
// the reference interpreter, each output within the split's error bound
// (2^-14 of the sum of |x w| over its terms: the split alone is about 2^-16):
// row counts below, at and past the 16-row tile and the 32-row pair with one
// compiled kernel (a dynamic row dim), column counts that are not a multiple
// of 16 or 32, a K that is not a multiple of 32, x through a slice (rows
// further apart than K, an offset), one and two threads, rows holding NaN /
// Inf (computed in f32: Inf stays Inf), and the weight packed once and again
// after it is bound again. Everywhere under LK_AMX_EMULATED (the tile
// instructions as plain C++), and with the real instructions where the host
// has AMX-BF16 (host_has_amx_bf16).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "luminal/backends/cpu/cpu_rules.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/nn/linear.hpp"
#include "qgemm_test_util.hpp"

namespace luminal::cpu {
namespace {

using testing::QLinears;

struct Build {
  std::string name;
  std::vector<std::string> flags;
};

std::vector<Build> builds() {
  std::vector<Build> out = {{"emulated", {"-DLK_AMX_EMULATED", "-O1"}}};
  if (host_has_amx_bf16()) out.push_back({"amx", {}});
  return out;
}

// Sets row r of x's inputs to hold NaN / Inf (rows 1, 2, 3 where they exist).
void add_special_rows(std::vector<std::pair<std::string, TensorData>>& inputs) {
  for (auto& [name, t] : inputs) {
    if (name.find(".weight") != std::string::npos) continue;
    const int64_t rows = t.shape()[0], k = t.shape()[1];
    if (rows > 1) t.set(k + 3, NAN);
    if (rows > 2) t.set(2 * k + k - 1, INFINITY);
    if (rows > 3) t.set(3 * k, -INFINITY), t.set(3 * k + 1, INFINITY);
  }
}

// y = x [rows, k] @ w[n, k]^T within the bound, x at column `offset` of its input.
void expect_product(const TensorData& y, const TensorData& x, int64_t offset, int64_t k,
                    const TensorData& w, const std::string& what) {
  const int64_t rows = y.shape()[0], n = y.shape()[1], xk = x.shape()[1];
  int reported = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n && reported < 5; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t t = 0; t < k; ++t) {
        const double term = x.get(i * xk + offset + t) * w.get(j * k + t);
        want += term;
        magnitude += std::abs(term);
      }
      const double got = y.get(i * n + j);
      const bool ok = std::isnan(want) ? std::isnan(got)
                      : std::isinf(want)
                          ? got == want
                          : std::abs(got - want) <= std::ldexp(magnitude, -14) + 1e-30;
      if (!ok) {
        ++reported;
        ADD_FAILURE() << what << ": y[" << i << ", " << j << "] = " << got << ", want " << want
                      << " (sum of |x w| " << magnitude << ")";
      }
    }
}

// q's two products ("a": x, K = 576; "b": input "wide" from column b_offset,
// K = b_k) in every build on one and two threads, `fn` called by both
// kernels, each row count with the special rows, within the bound; with a
// `twin` op, rows below kAmxQGemmMinRows give that op's results bit for bit
// instead (CpuQMatMulAmx's decode steps are the int16 product's).
void check_every_build(const QLinears& q, const std::string& fn, const std::vector<int64_t>& rows,
                       int64_t b_offset, int64_t b_k, const std::string& label,
                       std::mt19937_64& rng, const char* twin = nullptr) {
  for (const Build& b : builds())
    for (int threads : {1, 2}) {
      auto options_for = [&](const std::string& op) {
        CpuOptions options;
        options.regions = q.regions();
        for (Region& r : options.regions) r.kernel_op = op;
        options.num_threads = threads;
        options.jit.extra_flags = b.flags;
        return options;
      };
      CpuProgram program(q.g, options_for(q.op));
      std::optional<CpuProgram> other;
      if (twin != nullptr) other.emplace(q.g, options_for(twin));
      ASSERT_EQ(testing::kernels_calling(program, fn), 2) << b.name;
      for (int64_t m : rows) {
        auto inputs = q.inputs(m, rng);  // (a.weight, b.weight, x, wide)
        add_special_rows(inputs);
        for (const auto& [name, t] : inputs) program.set_input(name, t);
        program.run();
        const std::string what = b.name + " " + label + ", " + std::to_string(threads) +
                                 " threads, " + std::to_string(m) + " rows";
        if (other && m < kAmxQGemmMinRows) {
          for (const auto& [name, t] : inputs) other->set_input(name, t);
          other->run();
          for (const char* y : {"y_a", "y_b"})
            testing::expect_close(program.output(y), other->output(y), 0, 0,
                                  what + " " + y + " against " + twin);
          continue;
        }
        expect_product(program.output("y_a"), inputs[2].second, 0, 576, inputs[0].second,
                       what + " y_a");
        expect_product(program.output("y_b"), inputs[3].second, b_offset, b_k, inputs[1].second,
                       what + " y_b");
      }
    }
}

TEST(AmxMatMul, MatchesTheInterpreterWithinTheSplitsBound) {
  std::mt19937_64 rng(91);
  QLinears q;
  q.op = "CpuMatMulAmx";
  q.add(DType::F32, "a", q.g.input("x", {"s", 576}), 576, 200, rng);
  q.add(DType::F32, "b", q.g.input("wide", {"s", 100}).slice(1, 5, 75), 70, 13, rng);
  check_every_build(q, "lk::amx_gemm(", {1, 4, 16, 17, 33, 45}, 5, 70, "", rng);
}

// CpuQMatMulAmx: a GGUF weight (Q4_1, Q8_0, Q4_0) decoded per call from the
// int16 products' copy, the same bound against its decoded values (column
// counts 200 and 13: the last 32-column pair's second group past the copy);
// below 16 rows the int16 product's results bit for bit.
TEST(AmxMatMul, QuantizedWeightsWithinTheSplitsBound) {
  std::mt19937_64 rng(93);
  for (DType d : {DType::Q4_1, DType::Q8_0, DType::Q4_0}) {
    QLinears q;
    q.op = "CpuQMatMulAmx";
    q.add(d, "a", q.g.input("x", {"s", 576}), 576, 200, rng);
    q.add(d, "b", q.g.input("wide", {"s", 100}).slice(1, 8, 72), 64, 13, rng);
    check_every_build(q, "lk::amx_qgemm<", {3, 9, 16, 17, 45}, 8, 64, to_string(d), rng,
                      "CpuQMatMulInt16");
  }
}

// The packed weight follows the bound weight: binding another one packs again.
TEST(AmxMatMul, ABoundAgainWeightIsPackedAgain) {
  std::mt19937_64 rng(92);
  QLinears q;
  q.op = "CpuMatMulAmx";
  q.add(DType::F32, "a", q.g.input("x", {"s", 64}), 64, 48, rng);
  for (const Build& b : builds()) {
    CpuOptions options;
    options.regions = q.regions();
    options.jit.extra_flags = b.flags;
    CpuProgram program(q.g, options);
    for (int round = 0; round < 2; ++round) {
      auto inputs = q.inputs(20, rng);
      if (round == 1)
        inputs[0].second = testing::random_tensor(DType::F32, {48, 64}, rng, -2.0, 2.0);
      for (const auto& [name, t] : inputs) program.set_input(name, t);
      program.run();
      expect_product(program.output("y_a"), inputs[1].second, 0, 64, inputs[0].second,
                     b.name + " round " + std::to_string(round));
    }
  }
}

// The rule offers the kernel exactly where it can run: at High precision on
// hosts with the tiles (in the class of the f32 product: an alternative of
// the search), never at Highest, and not for a dequantized GGUF weight, which
// gets CpuQMatMulAmx instead.
TEST(AmxMatMul, OfferedAtHighWhereTheHostHasTheTiles) {
  const CpuOps ops = cpu_ops();
  for (DType weight : {DType::F32, DType::Q4_1}) {
    Graph g;
    std::optional<nn::Linear> lin;
    {
      nn::ParameterStorage storage([=](const std::string&, DType) { return weight; });
      lin.emplace(g, "proj", 64, 48, /*bias=*/false);
    }
    g.output("y", lin->forward(g.input("x", {"s", 64})));
    const auto high = testing::saturate_with_cpu_rules(g, compiler::MatmulPrecision::High);
    const auto highest = testing::saturate_with_cpu_rules(g, compiler::MatmulPrecision::Highest);
    const bool offered = weight == DType::F32 && host_has_amx_bf16();
    EXPECT_EQ(high->nodes_of(ops.matmul_amx).size(), offered ? 1u : 0u) << to_string(weight);
    EXPECT_EQ(highest->nodes_of(ops.matmul_amx).size(), 0u) << to_string(weight);
    const bool quantized = weight != DType::F32 && host_has_amx_bf16();
    EXPECT_EQ(high->nodes_of(ops.qmatmul_amx).size(), quantized ? 1u : 0u) << to_string(weight);
    EXPECT_EQ(highest->nodes_of(ops.qmatmul_amx).size(), 0u) << to_string(weight);
    if (offered) {
      EXPECT_EQ(high->eg.class_of(high->nodes_of(ops.matmul_amx)[0]),
                high->eg.class_of(high->nodes_of(ops.matmul)[0]));
    }
  }
}

}  // namespace
}  // namespace luminal::cpu
