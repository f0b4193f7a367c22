#pragma once
// The lazy HLIR graph. Building a model records nodes; nothing is computed
// until a backend (or the reference interpreter) runs the graph.
//
// Every node writes a dense row-major buffer of `shape`; each operand reads a
// producer through a View, so permutes, broadcasts and slices are free until
// something reads them. Node ids are indexes into nodes() and are assigned in
// creation order, which is a topological order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "luminal/core/dtype.hpp"
#include "luminal/core/op.hpp"
#include "luminal/shape/expr.hpp"
#include "luminal/shape/view.hpp"

namespace luminal {

namespace compiler {
class Backend;
class CompiledModel;
struct CompileOptions;
}  // namespace compiler

using NodeId = uint32_t;
class Tensor;

/// One operand of a node: a producer read through a view.
struct Operand {
  NodeId node;
  View view;
  bool operator==(const Operand&) const = default;
};

struct Node {
  OpKind kind = OpKind::Constant;
  DType dtype = DType::F32;
  std::vector<Expr> shape;  // shape of the dense output buffer
  std::vector<Operand> operands;

  // Payloads (only the ones of `kind` are meaningful).
  std::string name;         // Input, Output
  bool persistent = false;  // Input: survives execute (weights, caches)
  double value = 0.0;       // Constant (floats and bool)
  int64_t int_value = 0;    // Constant (integers; exact for i64)
  Expr iota_expr;           // Iota: element expression of Expr::index_var()
  int axis = 0;             // SumReduce, MaxReduce (normalised, >= 0)
};

/// Nodes that one backend kernel implements, as chosen by e-graph extraction:
/// the HLIR nodes a backend op (one registered with OpInfo::kernel_group) was
/// lowered to. Op selection is the e-graph's (SPEC invariant 2): a backend
/// compiles the groups it is given and never forms its own. The members alone
/// define the semantics (they are ordinary HLIR nodes the interpreter can run);
/// `op` tells the backend which of its kernels to use for them, and a backend
/// re-derives every parameter it needs (strides, sizes) from the members, so a
/// group stays correct after any node renumbering.
struct KernelGroup {
  std::string op;             // the backend op's registered name ("CpuSgemm", ...)
  std::vector<NodeId> nodes;  // members, ascending; never Input or Output nodes
  bool operator==(const KernelGroup&) const = default;
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph&) = delete;  // Tensors point at their graph
  Graph& operator=(const Graph&) = delete;

  // ---- leaves --------------------------------------------------------------
  /// A named input with (possibly symbolic) dims: g.input("x", {"s", 64}).
  /// Names must be unique among inputs; dims must be >= 0 expressions whose
  /// variables are user dims (no reserved `_` names).
  Tensor input(const std::string& name, const std::vector<Expr>& shape, DType dtype = DType::F32,
               bool persistent = false);
  /// A persistent input (weights, caches): survives run/execute.
  Tensor weight(const std::string& name, const std::vector<Expr>& shape, DType dtype = DType::F32);
  /// A scalar constant (rank 0). For integer dtypes the value is truncated.
  Tensor constant(double value, DType dtype = DType::F32);
  /// An exact integer scalar constant.
  Tensor constant_int(int64_t value, DType dtype = DType::I32);
  /// Iota(expr, n): element i = expr with Expr::index_var() = i. Default i32.
  Tensor iota(const Expr& expr, const Expr& n, DType dtype = DType::I32);
  /// 0, 1, ..., n-1 (Iota with the index variable itself).
  Tensor arange(const Expr& n, DType dtype = DType::I32);
  /// Mark `t` as the named output. Names must be unique among outputs.
  void output(const std::string& name, const Tensor& t);

  // ---- primitive ops (validated; throw ShapeError / DTypeError) ------------
  Tensor cast(const Tensor& x, DType dtype);
  Tensor unary(OpKind kind, const Tensor& x);
  /// Operands must have equal shapes and dtypes (no implicit broadcasting here).
  Tensor binary(OpKind kind, const Tensor& a, const Tensor& b);
  Tensor gather(const Tensor& indexes, const Tensor& data);
  Tensor scatter(const Tensor& dest, const Tensor& indexes, const Tensor& src);
  Tensor reduce(OpKind kind, const Tensor& x, int axis);

  // ---- inspection ----------------------------------------------------------
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const;
  size_t size() const { return nodes_.size(); }
  /// Input / Output node ids in creation order.
  std::vector<NodeId> inputs() const;
  std::vector<NodeId> outputs() const;
  std::optional<NodeId> find_input(std::string_view name) const;
  std::optional<NodeId> find_output(std::string_view name) const;
  /// Names of every dimension variable used by the inputs, sorted.
  std::vector<std::string> dim_names() const;

  // ---- compilation (defined by the compiler layer: include
  // "luminal/compiler/compile.hpp" to call these) -------------------------
  /// Compile for `backend` (compiler::compile): saturation, search, cache.
  compiler::CompiledModel compile(compiler::Backend& backend,
                                  const compiler::CompileOptions& options) const;
  /// Compile for a device by name ("cpu", "reference"; compiler::backend_for_device).
  compiler::CompiledModel compile(const std::string& device,
                                  const compiler::CompileOptions& options) const;
  compiler::CompiledModel compile(const std::string& device = "cpu") const;

  /// Record a kernel group. Throws luminal::Error if a member does not exist,
  /// is an Input or Output node, or is already in another group.
  void add_kernel_group(KernelGroup group);
  const std::vector<KernelGroup>& kernel_groups() const { return groups_; }

  /// One line per node: `%3 = Add(%1 [s, 64], %2 [s, 64] {...}) : f32[s, 64]`.
  std::string to_text() const;
  /// Graphviz DOT.
  std::string to_dot() const;

private:
  Tensor add_node(Node node);
  const Node& checked_node(const Tensor& t, const char* op) const;
  std::vector<Node> nodes_;
  std::vector<KernelGroup> groups_;
};

}  // namespace luminal
