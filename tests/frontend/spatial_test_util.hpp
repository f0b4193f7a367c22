#pragma once
// Helpers of the conv / pool / interpolate / attention / nn tests: run a graph
// on the reference interpreter and compare with hand-computed values.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::test {

/// Marks `out` as output "out", runs g with input "x" = values (f32 unless
/// `dtype`) and returns the output.
inline TensorData run_x(Graph& g, const Tensor& out, std::vector<int64_t> shape,
                        const std::vector<double>& values, DType dtype = DType::F32) {
  g.output("out", out);
  Interpreter run(g);
  run.set_input("x", TensorData::from_doubles(dtype, std::move(shape), values));
  run.run();
  return run.output("out");
}

/// Element-wise |got - want| <= tol; NaN where `want` is NaN.
inline void expect_values(const TensorData& got, const std::vector<double>& want,
                          double tol = 1e-6) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << got.describe();
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.get(static_cast<int64_t>(i));
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(g)) << "element " << i;
    else
      EXPECT_NEAR(g, want[i], tol) << "element " << i;
  }
}

/// The same after checking the shape.
inline void expect_values(const TensorData& got, const std::vector<int64_t>& shape,
                          const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.shape(), shape) << got.describe();
  expect_values(got, want, tol);
}

}  // namespace luminal::test
