#include "luminal/reference/interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"

namespace luminal {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t product(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string node_label(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = std::string(op_name(n.kind)) + " %" + std::to_string(id);
  if (!n.name.empty()) s += " \"" + n.name + "\"";
  return s;
}

// Reads a producer's dense buffer through a view. The per-axis index
// expressions are tabulated once (size_k evaluations each); the offset of a
// logical element is then the sum of one table entry per axis.
class ViewReader {
public:
  ViewReader(const TensorData& data, const View& view, const DimMap& dims, const std::string& who)
      : data_(data), shape_(view.concrete_shape(dims)) {
    DimMap env = dims;
    const std::string z = Expr::index_var().name();
    for (size_t k = 0; k < shape_.size(); ++k) {
      if (shape_[k] < 0)
        throw ShapeError(who + ": operand axis " + std::to_string(k) + " has negative size " +
                         std::to_string(shape_[k]));
      std::vector<int64_t> table(static_cast<size_t>(shape_[k]));
      for (int64_t i = 0; i < shape_[k]; ++i) {
        env[z] = i;
        table[static_cast<size_t>(i)] = view.axis_exprs()[k].eval(env);
      }
      tables_.push_back(std::move(table));
    }
    numel_ = product(shape_);
    who_ = who;
    if (data.dtype() == DType::F32) f32_ = reinterpret_cast<const float*>(data.data());
  }

  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_; }

  // Physical offset of logical row-major element `flat`.
  int64_t offset(int64_t flat) const {
    int64_t off = 0;
    for (size_t k = tables_.size(); k-- > 0;) {
      int64_t n = shape_[k];
      off += tables_[k][static_cast<size_t>(flat % n)];
      flat /= n;
    }
    return checked(off);
  }
  double get(int64_t flat) const { return value(offset(flat)); }
  int64_t get_int(int64_t flat) const { return data_.get_int(offset(flat)); }

  // The logical elements in row-major order, each offset from the last by
  // one table step (an odometer): no division per element, which made the
  // interpreter spend most of a search's first seconds on offsets.
  class Walk {
  public:
    explicit Walk(const ViewReader& r) : r_(r), index_(r.shape_.size(), 0) {
      if (r.numel_ > 0)
        for (const auto& table : r.tables_) off_ += table[0];
    }
    double get() const { return r_.value(r_.checked(off_)); }
    int64_t get_int() const { return r_.data_.get_int(r_.checked(off_)); }
    void next() {
      for (size_t k = index_.size(); k-- > 0;) {
        const std::vector<int64_t>& table = r_.tables_[k];
        off_ -= table[static_cast<size_t>(index_[k])];
        if (++index_[k] < r_.shape_[k]) {
          off_ += table[static_cast<size_t>(index_[k])];
          return;
        }
        index_[k] = 0;
        off_ += table[0];
      }
    }

  private:
    const ViewReader& r_;
    std::vector<int64_t> index_;
    int64_t off_ = 0;
  };

private:
  int64_t checked(int64_t off) const {
    if (off < 0 || off >= data_.numel())
      throw Error(who_ + ": view reads offset " + std::to_string(off) +
                  " outside its producer of " + std::to_string(data_.numel()) + " elements");
    return off;
  }
  // (f32 producers, the common case, read directly: TensorData::get's
  // dispatch per element cost as much as the arithmetic)
  double value(int64_t off) const { return f32_ != nullptr ? f32_[off] : data_.get(off); }

  const TensorData& data_;
  std::vector<int64_t> shape_;
  std::vector<std::vector<int64_t>> tables_;
  int64_t numel_ = 1;
  std::string who_;
  const float* f32_ = nullptr;
};

// Whether values of this dtype are carried as doubles (floats) or int64 (ints, bool).
bool carried_as_float(DType d) {
  return is_float(d);
}

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// out.set(flat, v), f32 outputs (the common case) without TensorData::set's
// dispatch per element (as costly as the arithmetic).
void store(TensorData& out, float* f32, int64_t flat, double v) {
  if (f32 != nullptr)
    f32[flat] = double_to_float(v);
  else
    out.set(flat, v);
}
float* f32_data(TensorData& out) {
  return out.dtype() == DType::F32 ? reinterpret_cast<float*>(out.data()) : nullptr;
}

void store_int(TensorData& out, int64_t flat, int64_t v) {
  out.set_int(flat, out.dtype() == DType::Bool ? (v != 0) : v);
}

class Evaluator {
public:
  // fused[m]: Mul node m is evaluated inside its only consumer, a SumReduce
  // (see Interpreter::run).
  Evaluator(const Graph& g, const std::map<std::string, TensorData>& inputs, const DimMap& dims,
            const std::vector<bool>& fused)
      : g_(g), inputs_(inputs), dims_(dims), fused_(fused), values_(g.size()) {}

  TensorData& eval(NodeId id) {
    if (!values_[id]) values_[id] = compute(id);
    return *values_[id];
  }

  void release(NodeId id) { values_[id].reset(); }

private:
  std::vector<int64_t> concrete(const std::vector<Expr>& shape) const {
    std::vector<int64_t> out;
    for (const Expr& d : shape) out.push_back(d.eval(dims_));
    return out;
  }

  ViewReader reader(NodeId id, size_t k) {
    const Operand& o = g_.node(id).operands[k];
    return ViewReader(eval(o.node), o.view, dims_, node_label(g_, id));
  }

  std::unique_ptr<TensorData> compute(NodeId id) {
    const Node& n = g_.node(id);
    if (n.kind == OpKind::SumReduce && fused_[n.operands[0].node]) {
      auto out = std::make_unique<TensorData>(n.dtype, concrete(n.shape));
      if (sum_of_products(n, *out)) return out;
    }
    // Evaluate operands first (recursion depth is bounded by graph depth; the
    // caller evaluates in id order, so operands are normally already present).
    for (const Operand& o : n.operands) eval(o.node);
    auto out = std::make_unique<TensorData>(n.dtype, concrete(n.shape));
    const int64_t count = out->numel();
    switch (n.kind) {
      case OpKind::Input: {
        auto it = inputs_.find(n.name);
        if (it == inputs_.end()) throw LookupError("input \"" + n.name + "\" is not set");
        *out = it->second;
        break;
      }
      case OpKind::Output: {
        ViewReader r = reader(id, 0);
        copy(r, *out);
        break;
      }
      case OpKind::Constant:
        if (carried_as_float(n.dtype))
          out->set(0, n.value);
        else
          store_int(*out, 0, n.int_value);
        break;
      case OpKind::Iota: {
        DimMap env = dims_;
        const std::string z = Expr::index_var().name();
        for (int64_t i = 0; i < count; ++i) {
          env[z] = i;
          out->set_int(i, n.iota_expr.eval(env));
        }
        break;
      }
      case OpKind::Cast: {
        ViewReader r = reader(id, 0);
        ViewReader::Walk w(r);
        float* f32 = f32_data(*out);
        DType src = g_.node(n.operands[0].node).dtype;
        // A whole quantized weight, in order: decoded block by block.
        if (is_quantized(src) && f32 != nullptr && n.operands[0].view.is_contiguous() &&
            eval(n.operands[0].node).numel() == count) {
          dequantize_elements(src, eval(n.operands[0].node).data(), 0, count, f32);
          break;
        }
        for (int64_t i = 0; i < count; ++i, w.next()) {
          if (carried_as_float(src))
            store(*out, f32, i, w.get());
          else if (n.dtype == DType::Bool)
            out->set_int(i, w.get_int() != 0);
          else if (carried_as_float(n.dtype))
            out->set(i, static_cast<double>(w.get_int()));
          else
            out->set_int(i, w.get_int());
        }
        break;
      }
      case OpKind::Exp2:
      case OpKind::Log2:
      case OpKind::Sin:
      case OpKind::Sqrt:
      case OpKind::Recip: {
        ViewReader r = reader(id, 0);
        ViewReader::Walk w(r);
        float* f32 = f32_data(*out);
        for (int64_t i = 0; i < count; ++i, w.next()) store(*out, f32, i, unary(n.kind, w.get()));
        break;
      }
      case OpKind::Add:
      case OpKind::Mul:
      case OpKind::Mod:
      case OpKind::LessThan:
        binary(id, n, *out);
        break;
      case OpKind::Gather:
        gather(id, *out);
        break;
      case OpKind::Scatter:
        scatter(id, *out);
        break;
      case OpKind::SumReduce:
      case OpKind::MaxReduce:
        reduce(id, n, *out);
        break;
    }
    return out;
  }

  static void copy(const ViewReader& r, TensorData& out) {
    ViewReader::Walk w(r);
    float* f32 = f32_data(out);
    for (int64_t i = 0; i < out.numel(); ++i, w.next()) {
      if (carried_as_float(out.dtype()))
        store(out, f32, i, w.get());
      else
        out.set_int(i, w.get_int());
    }
  }

  static double unary(OpKind kind, double x) {
    switch (kind) {
      case OpKind::Exp2:
        return std::exp2(x);
      case OpKind::Log2:
        return std::log2(x);
      case OpKind::Sin:
        return std::sin(x);
      case OpKind::Sqrt:
        return std::sqrt(x);
      default:
        return 1.0 / x;  // Recip
    }
  }

  void binary(NodeId id, const Node& n, TensorData& out) {
    ViewReader a = reader(id, 0), b = reader(id, 1);
    ViewReader::Walk wa(a), wb(b);
    DType in = g_.node(n.operands[0].node).dtype;
    float* f32 = f32_data(out);
    for (int64_t i = 0; i < out.numel(); ++i, wa.next(), wb.next()) {
      if (carried_as_float(in)) {
        double x = wa.get(), y = wb.get();
        switch (n.kind) {
          case OpKind::Add:
            store(out, f32, i, x + y);
            break;
          case OpKind::Mul:
            store(out, f32, i, x * y);
            break;
          case OpKind::Mod:
            store(out, f32, i, std::fmod(x, y));
            break;
          default:
            out.set_int(i, x < y);
            break;  // LessThan (false for NaN)
        }
        continue;
      }
      int64_t x = wa.get_int(), y = wb.get_int();
      switch (n.kind) {
        case OpKind::Add:
          store_int(out, i, in == DType::Bool ? (x | y) : wrap_add(x, y));
          break;
        case OpKind::Mul:
          store_int(out, i, in == DType::Bool ? (x & y) : wrap_mul(x, y));
          break;
        case OpKind::Mod:
          if (y == 0)
            throw Error(node_label(g_, id) + ": integer modulo by zero at element " +
                        std::to_string(i));
          // INT64_MIN % -1 overflows in C; its mathematical value is 0.
          out.set_int(i, y == -1 ? 0 : x % y);
          break;
        default:
          out.set_int(i, x < y);
          break;
      }
    }
  }

  void gather(NodeId id, TensorData& out) {
    ViewReader idx = reader(id, 0), data = reader(id, 1);
    for (int64_t k = 0; k < out.numel(); ++k) {
      int64_t j = idx.get_int(k);
      if (j < 0 || j >= data.numel())
        throw IndexError(node_label(g_, id) + ": index " + std::to_string(j) + " at position " +
                         std::to_string(k) + " is out of range for data of " +
                         std::to_string(data.numel()) + " elements " + shape_text(data.shape()));
      if (carried_as_float(out.dtype()))
        out.set(k, data.get(j));
      else
        out.set_int(k, data.get_int(j));
    }
  }

  void scatter(NodeId id, TensorData& out) {
    ViewReader dest = reader(id, 0), idx = reader(id, 1), src = reader(id, 2);
    copy(dest, out);
    // Out-of-range indexes are skipped; writes happen in src order, so the last one wins.
    for (int64_t k = 0; k < src.numel(); ++k) {
      int64_t j = idx.get_int(k);
      if (j < 0 || j >= out.numel()) continue;
      if (carried_as_float(out.dtype()))
        out.set(j, src.get(k));
      else
        out.set_int(j, src.get_int(k));
    }
  }

  void reduce(NodeId id, const Node& n, TensorData& out) {
    ViewReader x = reader(id, 0);
    ViewReader::Walk w(x);
    const bool sum = n.kind == OpKind::SumReduce;
    if (carried_as_float(n.dtype)) {
      reduce_floats(x.shape(), n, sum, out, [&] {
        const double v = w.get();
        w.next();
        return v;
      });
      return;
    }
    std::vector<int64_t> acc(static_cast<size_t>(out.numel()), sum ? 0 : min_of(n.dtype));
    for_each_reduced(x.shape(), static_cast<size_t>(n.axis), [&](int64_t o) {
      int64_t& a = acc[static_cast<size_t>(o)];
      const int64_t v = w.get_int();
      w.next();
      a = sum ? wrap_add(a, v) : std::max(a, v);
    });
    for (int64_t o = 0; o < out.numel(); ++o) store_int(out, o, acc[static_cast<size_t>(o)]);
  }

  // fn(o) for every element of a reduction's operand (`shape`, reduced along
  // `axis`) in row-major order, o the output element it reduces into (the
  // (outer, inner) pair around the reduced axis): each output takes its
  // elements in axis order, r = 0, 1, ..., len - 1.
  template <class Fn>
  static void for_each_reduced(const std::vector<int64_t>& shape, size_t axis, Fn fn) {
    int64_t inner = 1;
    for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
    const int64_t len = shape[axis];
    const int64_t outer = inner * len == 0 ? 0 : product(shape) / (inner * len);
    for (int64_t q = 0; q < outer; ++q)
      for (int64_t r = 0; r < len; ++r)
        for (int64_t i = 0; i < inner; ++i) fn(q * inner + i);
  }

  // A float SumReduce / MaxReduce in double of the values next() gives in
  // row-major order.
  template <class Next>
  static void reduce_floats(const std::vector<int64_t>& shape, const Node& n, bool sum,
                            TensorData& out, Next next) {
    std::vector<double> acc(static_cast<size_t>(out.numel()),
                            sum ? 0.0 : -std::numeric_limits<double>::infinity());
    for_each_reduced(shape, static_cast<size_t>(n.axis), [&](int64_t o) {
      const double v = next();
      double& a = acc[static_cast<size_t>(o)];
      // MaxReduce's rule (op.hpp): NaN anywhere gives the canonical NaN;
      // otherwise the first element equal to the maximum stays (std::max
      // returns its first argument on ties), which decides the sign of a
      // zero maximum. Backends reducing in lanes reproduce exactly this.
      if (sum)
        a += v;
      else if (std::isnan(v) || std::isnan(a))
        a = std::numeric_limits<double>::quiet_NaN();
      else
        a = std::max(a, v);
    });
    float* f32 = f32_data(out);
    for (int64_t o = 0; o < out.numel(); ++o) store(out, f32, o, acc[static_cast<size_t>(o)]);
  }

  // SumReduce(Mul(a, b)) without the Mul's tensor (a matrix product's is
  // m x n x k): each product rounded to f32 as the Mul stores it, then summed
  // as reduce() sums the stored tensor. The SumReduce reads the Mul densely
  // (fused only then), so its row-major order is the Mul's. false (nothing
  // done) if the sizes differ.
  bool sum_of_products(const Node& n, TensorData& out) {
    const NodeId mul = n.operands[0].node;
    ViewReader a = reader(mul, 0), b = reader(mul, 1);
    const std::vector<int64_t> shape = n.operands[0].view.concrete_shape(dims_);
    if (product(shape) != a.numel() || a.numel() != b.numel()) return false;
    ViewReader::Walk wa(a), wb(b);
    reduce_floats(shape, n, true, out, [&] {
      const double v = double_to_float(wa.get() * wb.get());
      wa.next();
      wb.next();
      return v;
    });
    return true;
  }

  static int64_t min_of(DType d) {
    switch (d) {
      case DType::I8:
        return std::numeric_limits<int8_t>::min();
      case DType::I32:
        return std::numeric_limits<int32_t>::min();
      case DType::I64:
        return std::numeric_limits<int64_t>::min();
      default:
        return 0;  // unsigned and bool
    }
  }

  const Graph& g_;
  const std::map<std::string, TensorData>& inputs_;
  const DimMap& dims_;
  const std::vector<bool>& fused_;
  std::vector<std::unique_ptr<TensorData>> values_;
};

}  // namespace

namespace {
bool fixed_shape(const Node& n) {
  return std::all_of(n.shape.begin(), n.shape.end(), [](const Expr& d) { return d.is_const(); });
}
}  // namespace

std::vector<NodeId> inputs_with_dims(const Graph& graph) {
  std::vector<NodeId> out;
  for (NodeId id : graph.inputs())
    if (!fixed_shape(graph.node(id))) out.push_back(id);
  return out;
}

DimMap infer_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                  const DimMap& given) {
  return infer_dims(graph, inputs, given, inputs_with_dims(graph));
}

DimMap infer_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                  const DimMap& given, const std::vector<NodeId>& with_dims) {
  DimMap dims = given;
  std::map<std::string, std::string> source;  // dim -> the input it came from
  for (NodeId id : with_dims) {
    const Node& n = graph.node(id);
    auto it = inputs.find(n.name);
    if (it == inputs.end()) continue;
    const std::vector<int64_t>& shape = it->second.shape();
    for (size_t k = 0; k < n.shape.size() && k < shape.size(); ++k) {
      if (!n.shape[k].is_var()) continue;
      const std::string& v = n.shape[k].name();
      auto known = dims.find(v);
      if (known == dims.end()) {
        dims[v] = shape[k];
        source[v] = n.name;
      } else if (known->second != shape[k]) {
        std::string from = source.count(v) ? "input \"" + source[v] + "\"" : "the given dims";
        throw ShapeError("input \"" + n.name + "\" has " + v + " = " + std::to_string(shape[k]) +
                         " (axis " + std::to_string(k) + ") but " + from + " has " + v + " = " +
                         std::to_string(known->second));
      }
    }
  }
  return dims;
}

Interpreter::Interpreter(const Graph& graph) : graph_(graph) {}

void check_input(const Graph& graph, const std::string& name, const TensorData& data) {
  auto id = graph.find_input(name);
  if (!id) {
    std::string known;
    for (NodeId i : graph.inputs()) known += (known.empty() ? "" : ", ") + graph.node(i).name;
    throw LookupError("set_input: the graph has no input named \"" + name + "\" (inputs: " + known +
                      ")");
  }
  const Node& n = graph.node(*id);
  if (data.dtype() != n.dtype)
    throw DTypeError("set_input \"" + name + "\": expected " + to_string(n.dtype) +
                     to_string(n.shape) + ", got " + data.describe());
  if (data.rank() != n.shape.size())
    throw ShapeError("set_input \"" + name + "\": expected rank " + std::to_string(n.shape.size()) +
                     " " + to_string(n.dtype) + to_string(n.shape) + ", got " + data.describe());
  // A fixed shape is checked here, once (a run checks only the shapes that
  // depend on dims: a model's hundreds of weights are not looked at per run).
  if (!fixed_shape(n)) return;
  for (size_t k = 0; k < n.shape.size(); ++k)
    if (n.shape[k].as_const() != data.shape()[k])
      throw ShapeError("set_input \"" + name + "\": expected " + to_string(n.dtype) +
                       to_string(n.shape) + ", got " + data.describe());
}

DimMap resolve_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                    const DimMap& given) {
  return resolve_dims(graph, inputs, given, inputs_with_dims(graph));
}

DimMap resolve_dims(const Graph& graph, const std::map<std::string, TensorData>& inputs,
                    const DimMap& given, const std::vector<NodeId>& with_dims) {
  DimMap dims = infer_dims(graph, inputs, given, with_dims);
  for (NodeId id : with_dims) {  // (check_input checked the fixed shapes)
    const Node& n = graph.node(id);
    auto it = inputs.find(n.name);
    if (it == inputs.end()) continue;
    std::vector<int64_t> want;
    try {
      for (const Expr& d : n.shape) want.push_back(d.eval(dims));
    } catch (const LookupError&) {
      throw LookupError("input \"" + n.name + "\": dims " + to_string(n.shape) +
                        " cannot be computed; pass the value of every dim they use");
    }
    if (want != it->second.shape())
      throw ShapeError("input \"" + n.name + "\": expected " + to_string(n.dtype) +
                       to_string(n.shape) + " = " + shape_text(want) + ", got " +
                       it->second.describe());
  }
  return dims;
}

void Interpreter::set_input(const std::string& name, TensorData data) {
  check_input(graph_, name, data);
  inputs_[name] = std::move(data);
}

bool Interpreter::has_input(const std::string& name) const {
  return inputs_.count(name) > 0;
}

void Interpreter::run(const DimMap& given) {
  DimMap dims = resolve_dims(graph_, inputs_, given);

  // Evaluate only what the outputs need, in id (topological) order, freeing
  // intermediates after their last use.
  std::vector<bool> needed(graph_.size(), false);
  std::vector<NodeId> last_use(graph_.size(), 0);
  std::vector<int> uses(graph_.size(), 0);
  for (NodeId id : graph_.outputs()) needed[id] = true;
  for (NodeId id = static_cast<NodeId>(graph_.size()); id-- > 0;) {
    if (!needed[id]) continue;
    for (const Operand& o : graph_.node(id).operands) {
      needed[o.node] = true;
      last_use[o.node] = std::max(last_use[o.node], id);
      ++uses[o.node];
    }
  }
  // An f32 Mul read densely by its only consumer, a SumReduce (a matrix
  // product), is computed inside it (Evaluator::sum_of_products): its tensor
  // (m x n x k) would be most of the run's time and memory. Its operands then
  // live until the SumReduce.
  std::vector<bool> fused(graph_.size(), false);
  for (NodeId id = 0; id < graph_.size(); ++id) {
    const Node& n = graph_.node(id);
    if (!needed[id] || n.kind != OpKind::SumReduce || !carried_as_float(n.dtype)) continue;
    const NodeId m = n.operands[0].node;
    const Node& mul = graph_.node(m);
    if (mul.kind != OpKind::Mul || mul.dtype != DType::F32 || uses[m] != 1 ||
        !carried_as_float(graph_.node(mul.operands[0].node).dtype) ||
        !n.operands[0].view.is_contiguous())
      continue;
    fused[m] = true;
    for (const Operand& o : mul.operands) last_use[o.node] = std::max(last_use[o.node], id);
  }
  Evaluator ev(graph_, inputs_, dims, fused);
  std::map<std::string, TensorData> results;
  auto release_after = [&](NodeId id, NodeId operand_of) {
    for (const Operand& o : graph_.node(operand_of).operands)
      if (last_use[o.node] == id && graph_.node(o.node).kind != OpKind::Output) ev.release(o.node);
  };
  for (NodeId id = 0; id < graph_.size(); ++id) {
    if (!needed[id] || fused[id]) continue;
    ev.eval(id);
    release_after(id, id);
    for (const Operand& o : graph_.node(id).operands)
      if (fused[o.node]) {  // (this node is its only consumer)
        release_after(id, o.node);
        ev.release(o.node);  // (computed after all if the sizes differed)
      }
    if (graph_.node(id).kind == OpKind::Output) results[graph_.node(id).name] = ev.eval(id);
  }
  outputs_ = std::move(results);
  dims_ = std::move(dims);
  // Only persistent inputs (weights, caches) stay bound.
  for (auto it = inputs_.begin(); it != inputs_.end();) {
    auto id = graph_.find_input(it->first);
    if (id && graph_.node(*id).persistent)
      ++it;
    else
      it = inputs_.erase(it);
  }
}

const TensorData& Interpreter::output(const std::string& name) const {
  auto it = outputs_.find(name);
  if (it == outputs_.end()) {
    if (graph_.find_output(name))
      throw LookupError("output \"" + name + "\" is not available: call run() first");
    throw LookupError("the graph has no output named \"" + name + "\"");
  }
  return it->second;
}

}  // namespace luminal
