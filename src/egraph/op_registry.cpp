// The op registry and the core ops' shape/dtype inference.

#include "luminal/egraph/op_registry.hpp"

#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/matmul.hpp"
#include "luminal/error.hpp"

namespace luminal::egraph {

std::string TensorInfo::to_string() const {
  return std::string(dtype_name(dtype)) + luminal::to_string(shape);
}

bool same_shape(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && !provably_equal(a[i], b[i])) return false;
  return true;
}

Payload input_payload(const std::string& name, DType dtype, const Shape& shape, bool persistent) {
  return Payload(PayloadTuple{Payload(name), Payload(dtype), Payload(shape),
                              Payload(int64_t{persistent ? 1 : 0})});
}

Payload iota_payload(const Expr& expr, const Expr& n, DType dtype) {
  return Payload(PayloadTuple{Payload(expr), Payload(n), Payload(dtype)});
}

namespace {

using Children = std::span<const TensorInfo* const>;

void need(bool ok, std::string_view op, const std::string& why) {
  if (!ok) throw Error(std::string(op) + ": " + why);
}

std::string describe(Children c) {
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + c[i]->to_string();
  return "(" + s + ")";
}

TensorInfo infer_hlir(OpKind kind, const Payload& p, Children c) {
  const std::string_view name = op_name(kind);
  switch (kind) {
    case OpKind::Input:
      return {p.at(1).as<DType>(), p.at(2).as<Shape>()};
    case OpKind::Output:
      return *c[0];
    case OpKind::Constant:
      return {p.as<Scalar>().dtype, {}};
    case OpKind::Iota:
      return {p.at(2).as<DType>(), {p.at(1).as<Expr>()}};
    case OpKind::Cast:
      return {p.as<DType>(), c[0]->shape};
    case OpKind::Exp2:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Sqrt:
    case OpKind::Recip:
      need(is_float(c[0]->dtype), name, "expects a float operand, got " + describe(c));
      return *c[0];
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Mod:
    case OpKind::LessThan:
      need(c[0]->dtype == c[1]->dtype && same_shape(c[0]->shape, c[1]->shape), name,
           "operands must have equal shapes and dtypes, got " + describe(c));
      return {kind == OpKind::LessThan ? DType::Bool : c[0]->dtype, c[0]->shape};
    case OpKind::Gather:
      return {c[1]->dtype, c[0]->shape};
    case OpKind::Scatter:
      need(same_shape(c[1]->shape, c[2]->shape) && c[0]->dtype == c[2]->dtype, name,
           "bad operands " + describe(c));
      return *c[0];
    case OpKind::SumReduce:
    case OpKind::MaxReduce: {
      const int64_t axis = p.as<int64_t>();
      need(axis >= 0 && axis < static_cast<int64_t>(c[0]->shape.size()), name,
           "axis " + std::to_string(axis) + " out of range for " + describe(c));
      TensorInfo out = *c[0];
      out.shape.erase(out.shape.begin() + axis);
      return out;
    }
  }
  throw Error("unknown HLIR op");
}

TensorInfo infer_view(const Payload& p, Children c) {
  return {c[0]->dtype, p.as<View>().shape()};
}

Tensor lower_view(Graph&, const Payload& p, std::span<const Tensor> children, const TensorInfo&) {
  return read_through(children[0], p.as<View>());
}

}  // namespace

OpRegistry::OpRegistry() {
  ops_.reserve(kCapacity);
  for (int k = 0; k <= static_cast<int>(OpKind::MaxReduce); ++k) {
    const auto kind = static_cast<OpKind>(k);
    OpInfo info;
    info.name = std::string(op_name(kind));
    info.arity = op_arity(kind);
    info.hlir = kind;
    info.infer = [kind](const Payload& p, Children c) { return infer_hlir(kind, p, c); };
    add(std::move(info));
  }
  OpInfo view;
  view.name = "View";
  view.arity = 1;
  view.infer = infer_view;
  view.lower = lower_view;
  view.payload_doc = "View: the child's dense row-major buffer read through this view";
  if (add(std::move(view)) != kViewOp) throw Error("op registry: View must have id 18");
  if (add(matmul_op_info()) != kMatMulOp) throw Error("op registry: MatMul must have id 19");
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

OpId OpRegistry::add(OpInfo info) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (info.name.empty()) throw Error("op registry: an op needs a name");
  if (!info.infer) throw Error("op registry: op " + info.name + " needs an infer function");
  for (const auto& op : ops_)
    if (op->name == info.name)
      throw Error("op registry: an op named " + info.name + " is already registered");
  if (ops_.size() >= kCapacity) throw Error("op registry: too many ops");
  ops_.push_back(std::make_unique<const OpInfo>(std::move(info)));
  const size_t id = ops_.size() - 1;
  size_.store(ops_.size(), std::memory_order_release);
  return static_cast<OpId>(id);
}

OpId OpRegistry::get_or_add(OpInfo info) {
  if (auto id = find(info.name)) return *id;
  return add(std::move(info));
}

std::optional<OpId> OpRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < ops_.size(); ++i)
    if (ops_[i]->name == name) return static_cast<OpId>(i);
  return std::nullopt;
}

OpId OpRegistry::id(std::string_view name) const {
  if (auto id = find(name)) return *id;
  throw LookupError("op registry: no op named \"" + std::string(name) + "\"");
}

const OpInfo& OpRegistry::info(OpId id) const {
  if (id >= size_.load(std::memory_order_acquire))
    throw LookupError("op registry: no op with id " + std::to_string(id));
  return *ops_[id];
}

size_t OpRegistry::size() const {
  return size_.load(std::memory_order_acquire);
}

}  // namespace luminal::egraph
