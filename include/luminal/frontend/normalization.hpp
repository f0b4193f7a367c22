#pragma once
// Normalizations with torch.nn.functional semantics: softmax family,
// layer / RMS / group / batch / instance norm and F.normalize.
//
// Precision as torch's CPU kernels: f16 / bf16 inputs are cast up, computed and
// cast down once. softmax / log_softmax subtract the row max and evaluate the
// exponentials in f64 for f16 / bf16 / f32 inputs (see elementwise.hpp); a row
// of all -inf gives nan, as torch. Statistics are two-pass (mean, then squared
// deviations) and biased (divide by N), as torch's normalization layers.
// Optional weight / bias promote with the input as torch does.

#include <optional>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal {

/// F.softmax(x, dim, dtype): `dtype` casts the input first (as torch).
Tensor softmax(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);
/// F.softmin: softmax(-x).
Tensor softmin(const Tensor& x, int dim, std::optional<DType> dtype = std::nullopt);

/// F.layer_norm over the trailing axes given by normalized_shape (which must
/// equal x's last dims: ShapeError otherwise); weight / bias have that shape.
Tensor layer_norm(const Tensor& x, const std::vector<Expr>& normalized_shape,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
/// F.rms_norm: x * rsqrt(mean(x^2) + eps) * weight over the trailing axes, the
/// statistics in f32 for f16 / bf16; eps defaults to torch's (the epsilon of
/// the computation dtype).
Tensor rms_norm(const Tensor& x, const std::vector<Expr>& normalized_shape,
                const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);
/// F.group_norm: x is [N, C, *]; C must be divisible by num_groups; weight and
/// bias are [C].
Tensor group_norm(const Tensor& x, int64_t num_groups,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
/// F.batch_norm: x is [N, C, *]. With training=false (inference) it uses
/// running_mean / running_var ([C], required); with training=true it uses the
/// batch statistics over every axis but 1 (running stats are not updated:
/// graphs are functional; momentum is accepted for signature parity).
Tensor batch_norm(const Tensor& x, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
/// F.instance_norm with per-instance statistics (use_input_stats=True):
/// x is [N, C, *], weight / bias [C].
Tensor instance_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                     const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
/// F.normalize: x / max(||x||_p over dim, eps).
Tensor normalize(const Tensor& x, double p = 2.0, int dim = 1, double eps = 1e-12);

}  // namespace luminal
