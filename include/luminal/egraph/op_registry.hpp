#pragma once
// The open registry of e-node ops. The 18 HLIR ops have the ids of their
// OpKind values; the core adds `View` (read a tensor through a view) and
// `MatMul` (a recognised matrix product, see matmul.hpp). Backends register
// their own ops (kernels, library calls, fused regions) at startup by name,
// without the core knowing them.
//
// Ids are assigned in registration order and are only meaningful inside one
// process: anything persisted (caches) must refer to ops by name.
//
// Each op says how to compute the shape and dtype of its result (`infer`, used
// by the e-graph's analysis and to catch unsound rules early) and, for ops
// that are not HLIR, how to rebuild it from HLIR primitives (`lower`), so that
// every extracted candidate can run on the reference interpreter.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/op.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/egraph/payload.hpp"

namespace luminal::egraph {

using OpId = uint32_t;

/// The logical tensor an e-class stands for: dtype and shape.
struct TensorInfo {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorInfo&) const = default;
  /// "f32[s, 64]"
  std::string to_string() const;
};

/// Shape/dtype of an op's result from its payload and its children's infos.
/// Throws luminal::Error when the children do not fit the op.
using InferFn =
    std::function<TensorInfo(const Payload& payload, std::span<const TensorInfo* const> children)>;

/// Rebuilds the op from HLIR primitives in `graph`: `children` are the
/// realised children (logical tensors, possibly read through views), `result`
/// is the e-class' shape and dtype. Returns a tensor with exactly that shape.
using LowerFn = std::function<Tensor(Graph& graph, const Payload& payload,
                                     std::span<const Tensor> children, const TensorInfo& result)>;

struct OpInfo {
  std::string name;
  int arity = -1;  // number of children, -1 for any
  InferFn infer;
  LowerFn lower;               // required for non-HLIR ops that candidates may contain
  std::optional<OpKind> hlir;  // set for the 18 primitive ops
  std::string payload_doc;     // what the payload holds (documentation, DOT labels)
  /// A backend kernel op: extract() records the nodes its lowering creates as
  /// one Graph::KernelGroup named after the op, which the backend compiles as
  /// that kernel (see graph.hpp). Its children are materialised densely first,
  /// so the members read dense buffers of nodes outside the group.
  bool kernel_group = false;
  /// For kernel ops: the kernel reads its children through any view (generated
  /// loops do), so extraction does not materialise them densely first.
  bool group_reads_views = false;
};

class OpRegistry {
public:
  /// The process-wide registry (HLIR ops, View and MatMul are pre-registered).
  static OpRegistry& global();

  /// Register a new op; throws luminal::Error if the name is taken or `infer` is missing.
  OpId add(OpInfo info);
  /// The id of `info.name`, registering it first if it is new (idempotent
  /// start-up registration for backends and tests).
  OpId get_or_add(OpInfo info);
  /// The id of a registered op; throws LookupError naming the unknown op.
  OpId id(std::string_view name) const;
  std::optional<OpId> find(std::string_view name) const;
  /// Info of a registered op (lock-free; ids from add() are always valid).
  const OpInfo& info(OpId id) const;
  const std::string& name(OpId id) const { return info(id).name; }
  size_t size() const;

  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

private:
  OpRegistry();
  static constexpr size_t kCapacity = 4096;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<const OpInfo>> ops_;  // reserved to kCapacity: never reallocates
  std::atomic<size_t> size_{0};
};

/// The id of an HLIR op.
inline OpId op_id(OpKind kind) {
  return static_cast<OpId>(kind);
}
/// `View(view)(x)`: x's dense row-major materialisation read through `view`.
inline constexpr OpId kViewOp = 18;
/// `MatMul(spec)(a, b)`: see matmul.hpp.
inline constexpr OpId kMatMulOp = 19;

/// The HLIR kind of an op id, if it is one of the 18 primitives.
inline std::optional<OpKind> hlir_kind(OpId id) {
  if (id < kViewOp) return static_cast<OpKind>(id);
  return std::nullopt;
}

// ---- payloads of the core ops ----------------------------------------------
// Input     (name: string, dtype, shape, persistent: int)
// Output    name: string
// Constant  Scalar
// Iota      (expr: Expr, n: Expr, dtype)
// Cast      dtype
// SumReduce, MaxReduce   axis: int
// View      View
// MatMul    see matmul.hpp
// Exp2 ... Recip, Add ... LessThan, Gather, Scatter: none
Payload input_payload(const std::string& name, DType dtype, const Shape& shape, bool persistent);
Payload iota_payload(const Expr& expr, const Expr& n, DType dtype);

/// Shapes of equal rank whose dims are structurally or provably equal.
bool same_shape(const Shape& a, const Shape& b);

}  // namespace luminal::egraph
