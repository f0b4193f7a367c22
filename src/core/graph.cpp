#include "luminal/core/graph.hpp"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "luminal/core/tensor.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/error.hpp"

namespace luminal {

namespace {

std::string describe(DType dtype, const std::vector<Expr>& shape) {
  return to_string(dtype) + to_string(shape);
}

std::string describe(const Tensor& t) {
  return describe(t.dtype(), t.shape());
}

bool same_shape(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!provably_equal(a[i], b[i])) return false;
  return true;
}

std::vector<Expr> simplified(const std::vector<Expr>& shape) {
  std::vector<Expr> out;
  out.reserve(shape.size());
  for (const Expr& d : shape) out.push_back(d.simplify());
  return out;
}

void require_compute_type(const char* op, const Tensor& t) {
  if (!is_compute_type(t.dtype()))
    throw DTypeError(std::string(op) + ": " + describe(t) +
                     " is a storage type; convert it to a compute type first");
}

void require_int_indexes(const char* op, const Tensor& t) {
  if (t.dtype() != DType::I32 && t.dtype() != DType::I64)
    throw DTypeError(std::string(op) + ": indexes must be i32 or i64, got " + describe(t));
}

Node make_node(OpKind kind, DType dtype, std::vector<Expr> shape, std::vector<Operand> operands) {
  Node n;
  n.kind = kind;
  n.dtype = dtype;
  n.shape = std::move(shape);
  n.operands = std::move(operands);
  return n;
}

}  // namespace

const Node& Graph::node(NodeId id) const {
  if (id >= nodes_.size())
    throw LookupError("node %" + std::to_string(id) + " does not exist (graph has " +
                      std::to_string(nodes_.size()) + " nodes)");
  return nodes_[id];
}

Tensor Graph::add_node(Node node) {
  node.shape = simplified(node.shape);
  auto id = static_cast<NodeId>(nodes_.size());
  View view = View::contiguous(node.shape);
  DType dtype = node.dtype;
  nodes_.push_back(std::move(node));
  return Tensor(this, id, std::move(view), dtype);
}

const Node& Graph::checked_node(const Tensor& t, const char* op) const {
  if (t.graph() != this)
    throw Error(std::string(op) + ": operand " + describe(t) + " belongs to another graph");
  return node(t.node());
}

Tensor Graph::input(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                    bool persistent) {
  if (name.empty()) throw Error("input: the name must not be empty");
  if (find_input(name)) throw Error("input: an input named \"" + name + "\" already exists");
  for (const Expr& d : shape) {
    for (const std::string& v : d.variables())
      if (!v.empty() && v[0] == '_')
        throw ShapeError("input \"" + name + "\": dim " + d.to_string() +
                         " uses a reserved variable name");
    if (bounds(d).hi < 0)
      throw ShapeError("input \"" + name + "\": dim " + d.to_string() + " is negative");
  }
  Node n = make_node(OpKind::Input, dtype, shape, {});
  n.name = name;
  n.persistent = persistent;
  return add_node(std::move(n));
}

Tensor Graph::weight(const std::string& name, const std::vector<Expr>& shape, DType dtype) {
  return input(name, shape, dtype, true);
}

Tensor Graph::constant(double value, DType dtype) {
  if (!is_compute_type(dtype))
    throw DTypeError("constant: " + to_string(dtype) + " is not a compute type");
  Node n = make_node(OpKind::Constant, dtype, {}, {});
  if (is_int(dtype)) {
    n.int_value = saturating_float_to_int(value, dtype);
    n.value = static_cast<double>(n.int_value);
  } else if (dtype == DType::Bool) {
    n.int_value = value != 0.0 ? 1 : 0;
    n.value = static_cast<double>(n.int_value);
  } else {
    n.value = round_to_float_dtype(value, dtype);
    n.int_value = 0;
  }
  return add_node(std::move(n));
}

Tensor Graph::constant_int(int64_t value, DType dtype) {
  if (!is_int(dtype) && dtype != DType::Bool) return constant(static_cast<double>(value), dtype);
  Node n = make_node(OpKind::Constant, dtype, {}, {});
  n.int_value = dtype == DType::Bool ? (value != 0) : wrap_int(value, dtype);
  n.value = static_cast<double>(n.int_value);
  return add_node(std::move(n));
}

Tensor Graph::iota(const Expr& expr, const Expr& n, DType dtype) {
  if (!is_int(dtype))
    throw DTypeError("iota: dtype must be an integer type, got " + to_string(dtype));
  if (bounds(n).hi < 0) throw ShapeError("iota: length " + n.to_string() + " is negative");
  Node node = make_node(OpKind::Iota, dtype, {n}, {});
  node.iota_expr = expr;
  return add_node(std::move(node));
}

Tensor Graph::arange(const Expr& n, DType dtype) {
  return iota(Expr::index_var(), n, dtype);
}

void Graph::output(const std::string& name, const Tensor& t) {
  checked_node(t, "output");
  if (name.empty()) throw Error("output: the name must not be empty");
  if (find_output(name)) throw Error("output: an output named \"" + name + "\" already exists");
  Node n = make_node(OpKind::Output, t.dtype(), t.shape(), {{t.node(), t.view()}});
  n.name = name;
  add_node(std::move(n));
}

Tensor Graph::cast(const Tensor& x, DType dtype) {
  checked_node(x, "Cast");
  auto castable = [](DType d) {
    return is_compute_type(d) || d == DType::F8E4M3 || d == DType::F8E5M2;
  };
  // Block-quantized storage (GGUF Q8_0 / Q4_0 / Q4_1) casts to a float type:
  // that Cast is the dequantization (element i decodes block i / 32).
  const bool dequantize = is_quantized(x.dtype()) && is_float(dtype) && is_compute_type(dtype);
  if (!dequantize && (!castable(x.dtype()) || !castable(dtype)))
    throw DTypeError("Cast: cannot cast " + describe(x) + " to " + to_string(dtype) +
                     (is_quantized(dtype) ? " (block-quantized types are storage only: casts "
                                            "from them dequantize, casts to them are not supported)"
                                          : ""));
  Node n = make_node(OpKind::Cast, dtype, x.shape(), {{x.node(), x.view()}});
  return add_node(std::move(n));
}

Tensor Graph::unary(OpKind kind, const Tensor& x) {
  std::string op(op_name(kind));
  if (!is_unary(kind)) throw Error(op + " is not a unary op");
  checked_node(x, op.c_str());
  if (!is_float(x.dtype()) || !is_compute_type(x.dtype()))
    throw DTypeError(op + ": expects a float tensor (f32, f16, bf16, f64), got " + describe(x));
  Node n = make_node(kind, x.dtype(), x.shape(), {{x.node(), x.view()}});
  return add_node(std::move(n));
}

Tensor Graph::binary(OpKind kind, const Tensor& a, const Tensor& b) {
  std::string op(op_name(kind));
  if (!is_binary(kind)) throw Error(op + " is not a binary op");
  checked_node(a, op.c_str());
  checked_node(b, op.c_str());
  if (!same_shape(a.shape(), b.shape()))
    throw ShapeError(op + ": shapes differ: " + describe(a) + " vs " + describe(b));
  if (a.dtype() != b.dtype())
    throw DTypeError(op + ": dtypes differ: " + describe(a) + " vs " + describe(b));
  require_compute_type(op.c_str(), a);
  if (kind == OpKind::Mod && a.dtype() == DType::Bool)
    throw DTypeError("Mod: not defined for bool tensors: " + describe(a));
  Node n = make_node(kind, kind == OpKind::LessThan ? DType::Bool : a.dtype(), a.shape(),
                     {{a.node(), a.view()}, {b.node(), b.view()}});
  return add_node(std::move(n));
}

Tensor Graph::gather(const Tensor& indexes, const Tensor& data) {
  checked_node(indexes, "Gather");
  checked_node(data, "Gather");
  require_int_indexes("Gather", indexes);
  require_compute_type("Gather", data);
  Node n = make_node(OpKind::Gather, data.dtype(), indexes.shape(),
                     {{indexes.node(), indexes.view()}, {data.node(), data.view()}});
  return add_node(std::move(n));
}

Tensor Graph::scatter(const Tensor& dest, const Tensor& indexes, const Tensor& src) {
  checked_node(dest, "Scatter");
  checked_node(indexes, "Scatter");
  checked_node(src, "Scatter");
  require_int_indexes("Scatter", indexes);
  require_compute_type("Scatter", dest);
  if (!same_shape(indexes.shape(), src.shape()))
    throw ShapeError("Scatter: indexes " + describe(indexes) + " and src " + describe(src) +
                     " must have the same shape");
  if (dest.dtype() != src.dtype())
    throw DTypeError("Scatter: dest " + describe(dest) + " and src " + describe(src) +
                     " must have the same dtype");
  Node n = make_node(
      OpKind::Scatter, dest.dtype(), dest.shape(),
      {{dest.node(), dest.view()}, {indexes.node(), indexes.view()}, {src.node(), src.view()}});
  return add_node(std::move(n));
}

Tensor Graph::reduce(OpKind kind, const Tensor& x, int axis) {
  std::string op(op_name(kind));
  if (!is_reduce(kind)) throw Error(op + " is not a reduction");
  checked_node(x, op.c_str());
  require_compute_type(op.c_str(), x);
  auto rank = static_cast<int>(x.rank());
  if (axis < -rank || axis >= rank)
    throw ShapeError(op + ": axis " + std::to_string(axis) + " is out of range for " + describe(x));
  if (axis < 0) axis += rank;
  if (kind == OpKind::SumReduce && x.dtype() == DType::Bool)
    throw DTypeError("SumReduce: not defined for bool tensors (cast first): " + describe(x));
  std::vector<Expr> shape = x.shape();
  shape.erase(shape.begin() + axis);
  Node n = make_node(kind, x.dtype(), shape, {{x.node(), x.view()}});
  n.axis = axis;
  return add_node(std::move(n));
}

std::vector<NodeId> Graph::inputs() const {
  std::vector<NodeId> out;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == OpKind::Input) out.push_back(i);
  return out;
}

std::vector<NodeId> Graph::outputs() const {
  std::vector<NodeId> out;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == OpKind::Output) out.push_back(i);
  return out;
}

std::optional<NodeId> Graph::find_input(std::string_view name) const {
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == OpKind::Input && nodes_[i].name == name) return i;
  return std::nullopt;
}

std::optional<NodeId> Graph::find_output(std::string_view name) const {
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == OpKind::Output && nodes_[i].name == name) return i;
  return std::nullopt;
}

std::vector<std::string> Graph::dim_names() const {
  std::set<std::string> names;
  for (const Node& n : nodes_) {
    if (n.kind != OpKind::Input) continue;
    for (const Expr& d : n.shape)
      for (const std::string& v : d.variables()) names.insert(v);
  }
  return {names.begin(), names.end()};
}

namespace {

// The payload part of a node's label: `"x" persistent`, `1.5`, `iota(_z * 2)`, `axis=1`.
std::string payload(const Node& n) {
  std::ostringstream os;
  switch (n.kind) {
    case OpKind::Input:
      os << '"' << n.name << '"' << (n.persistent ? " persistent" : "");
      break;
    case OpKind::Output:
      os << '"' << n.name << '"';
      break;
    case OpKind::Constant:
      if (is_float(n.dtype))
        os << std::setprecision(9) << n.value;
      else
        os << n.int_value;
      break;
    case OpKind::Iota:
      os << n.iota_expr.to_string();
      break;
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
      os << "axis=" << n.axis;
      break;
    default:
      break;
  }
  return os.str();
}

// An operand prints as `%id` when it reads its producer densely, else with its view.
std::string operand_text(const Graph& g, const Operand& o) {
  std::string s = "%" + std::to_string(o.node);
  if (o.view != View::contiguous(g.node(o.node).shape)) s += " " + o.view.to_string();
  return s;
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void Graph::add_kernel_group(KernelGroup group) {
  std::sort(group.nodes.begin(), group.nodes.end());
  if (group.nodes.empty()) throw Error("kernel group " + group.op + ": no member nodes");
  for (size_t i = 0; i < group.nodes.size(); ++i) {
    const NodeId id = group.nodes[i];
    if (id >= nodes_.size())
      throw Error("kernel group " + group.op + ": node %" + std::to_string(id) +
                  " does not exist (the graph has " + std::to_string(nodes_.size()) + " nodes)");
    if (i > 0 && group.nodes[i - 1] == id)
      throw Error("kernel group " + group.op + ": node %" + std::to_string(id) + " listed twice");
    const OpKind k = nodes_[id].kind;
    if (k == OpKind::Input || k == OpKind::Output)
      throw Error("kernel group " + group.op + ": node %" + std::to_string(id) + " is an " +
                  std::string(op_name(k)) + " node");
    for (const KernelGroup& other : groups_)
      if (std::binary_search(other.nodes.begin(), other.nodes.end(), id))
        throw Error("kernel group " + group.op + ": node %" + std::to_string(id) +
                    " is already in a " + other.op + " group");
  }
  groups_.push_back(std::move(group));
}

std::string Graph::to_text() const {
  std::ostringstream os;
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    os << '%' << i << " = " << op_name(n.kind);
    std::string p = payload(n);
    if (!p.empty() || !n.operands.empty()) {
      os << '(' << p;
      for (size_t k = 0; k < n.operands.size(); ++k)
        os << (k == 0 && p.empty() ? "" : ", ") << operand_text(*this, n.operands[k]);
      os << ')';
    }
    os << " : " << describe(n.dtype, n.shape) << '\n';
  }
  for (const KernelGroup& grp : groups_) {
    os << "group " << grp.op << ':';
    for (NodeId id : grp.nodes) os << " %" << id;
    os << '\n';
  }
  return os.str();
}

std::string Graph::to_dot() const {
  std::ostringstream os;
  os << "digraph luminal {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::string label = "%" + std::to_string(i) + " " + std::string(op_name(n.kind));
    std::string p = payload(n);
    if (!p.empty()) label += " " + p;
    label += "\\n" + describe(n.dtype, n.shape);
    os << "  n" << i << " [label=\"" << dot_escape(label) << "\"";
    if (n.kind == OpKind::Input || n.kind == OpKind::Output) os << ", style=rounded";
    os << "];\n";
    for (size_t k = 0; k < n.operands.size(); ++k) {
      const Operand& o = n.operands[k];
      os << "  n" << o.node << " -> n" << i;
      if (o.view != View::contiguous(node(o.node).shape))
        os << " [label=\"" << dot_escape(o.view.to_string()) << "\"]";
      os << ";\n";
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace luminal
