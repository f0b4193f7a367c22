#include "luminal/backends/cpu/codegen.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "luminal/error.hpp"

namespace luminal::cpu {

namespace {

// ---- dtypes in generated code ------------------------------------------------------------

void require_supported(DType d, const std::string& who) {
  if (is_quantized(d))
    throw DTypeError(who + ": " + std::string(dtype_name(d)) +
                     " is block-quantized storage; generated CPU kernels read it only in a Cast "
                     "(the dequantization)");
}

// The element type of a buffer.
const char* storage_type(DType d) {
  switch (d) {
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F16:
    case DType::BF16:
      return "uint16_t";
    case DType::I32:
      return "int32_t";
    case DType::I64:
      return "int64_t";
    case DType::I8:
      return "int8_t";
    default:
      return "uint8_t";  // u8, bool, fp8
  }
}

// The type a value is computed in: float for f32 and the narrow floats.
const char* value_type(DType d) {
  if (d == DType::F64) return "double";
  if (is_float(d)) return "float";
  return storage_type(d);
}

const char* narrow_name(DType d) {
  switch (d) {
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::F8E4M3:
      return "e4m3";
    case DType::F8E5M2:
      return "e5m2";
    default:
      return nullptr;
  }
}

std::string load_expr(DType d, const std::string& element) {
  if (const char* n = narrow_name(d)) return "lk::" + std::string(n) + "_to_f32(" + element + ")";
  if (d == DType::Bool) return "(uint8_t)(" + element + " != 0)";
  return element;
}

std::string store_expr(DType d, const std::string& value) {
  if (const char* n = narrow_name(d)) return "lk::f32_to_" + std::string(n) + "(" + value + ")";
  return value;
}

// A float computation's result rounded to the node's dtype.
std::string rounded(DType d, const std::string& expr) {
  if (const char* n = narrow_name(d)) return "lk::round_" + std::string(n) + "(" + expr + ")";
  return expr;
}

std::string float_literal(double v, bool as_double) {
  const char* f = as_double ? "" : "f";
  if (std::isnan(v))
    return std::string(std::signbit(v) ? "(-" : "(") + "__builtin_nan" + f + "(\"\"))";
  if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + "__builtin_inf" + f + "())";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return as_double ? "(" + std::string(buf) + ")" : "((float)" + std::string(buf) + ")";
}

std::string int_literal(int64_t v, DType d) {
  std::string text = v == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(v) + "LL";
  return "((" + std::string(storage_type(d)) + ")" + text + ")";
}

std::string min_literal(DType d) {
  switch (d) {
    case DType::I8:
      return "((int8_t)-128)";
    case DType::I32:
      return "((int32_t)(-2147483647 - 1))";
    case DType::I64:
      return "((int64_t)(-9223372036854775807LL - 1))";
    default:
      return "((uint8_t)0)";  // u8 and bool
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---- scopes ------------------------------------------------------------------------------

// A block of generated statements: the function body, one row, one element,
// or the body of a reduction loop. Values are emitted into the outermost
// scope whose variables their index uses.
struct Scope {
  Scope* parent = nullptr;
  int depth = 0;
  std::set<std::string> vars;  // index variables this scope defines
  std::vector<std::string> lines;
  std::map<std::pair<NodeId, std::vector<const ExprNode*>>, std::string> values;
  std::map<std::string, std::string> loads;  // "<buffer>[<offset>]" -> variable
  std::map<std::string, std::string> exprs;  // C expression -> variable (CSE)
};

std::string indent(const std::vector<std::string>& lines, const std::string& pad) {
  std::string out;
  for (const std::string& l : lines) out += pad + l + "\n";
  return out;
}

class Emitter {
public:
  Emitter(const Graph& graph, const Region& region, std::string name)
      : g_(graph), region_(region), name_(std::move(name)) {}

  CpuKernel generate();

private:
  // Index variables ------------------------------------------------------------------------
  Expr new_var(const std::string& stem, Scope* scope, const Expr& count) {
    const std::string name = stem + std::to_string(counter_++);
    scope->vars.insert(name);
    if (auto n = count.as_const(); n && *n > 0) ranges_[name] = Range{0, *n - 1};
    return Expr::internal_var(name);
  }
  std::string fresh() { return "_v" + std::to_string(counter_++); }

  // The innermost scope on cur's chain that defines a variable of `exprs`
  // (the function scope if they use none): where a value of them belongs.
  Scope* target(const std::vector<Expr>& exprs, Scope* cur) const {
    std::set<std::string> used;
    for (const Expr& e : exprs)
      for (const std::string& v : e.variables())
        if (v[0] == '_') used.insert(v);
    for (Scope* s = cur; s != nullptr; s = s->parent) {
      if (s->parent == nullptr) return s;
      for (const std::string& v : used)
        if (s->vars.count(v)) return s;
    }
    return cur;
  }

  // C source of an index expression: dims renamed to the kernel's locals.
  std::string c(const Expr& e) {
    std::map<std::string, Expr, std::less<>> rename;
    for (const std::string& v : e.variables()) {
      if (v[0] == '_') continue;
      auto it = std::find(dims_.begin(), dims_.end(), v);
      if (it == dims_.end()) it = dims_.insert(dims_.end(), v);
      rename[v] = Expr::internal_var("_d" + std::to_string(it - dims_.begin()));
    }
    return (rename.empty() ? e : e.substitute(rename)).simplify(ranges_).to_c();
  }

  std::vector<Expr> unflatten(const Expr& flat, const std::vector<Expr>& shape) {
    std::vector<Expr> idx;
    const std::vector<Expr> strides = row_major_strides(shape);
    for (size_t k = 0; k < shape.size(); ++k) {
      Expr e = flat / strides[k];
      if (k > 0) e = e % shape[k];
      idx.push_back(e.simplify(ranges_));
    }
    return idx;
  }

  // Row-major position of an index in a node's output (for error reports).
  std::string position(NodeId n, const std::vector<Expr>& idx) {
    const std::vector<Expr>& shape = g_.node(n).shape;
    const std::vector<Expr> strides = row_major_strides(shape);
    Expr flat = 0;
    for (size_t k = 0; k < idx.size(); ++k) flat = flat + idx[k] * strides[k];
    return c(flat);
  }

  size_t input_slot(NodeId producer) {
    auto it = std::find(inputs_.begin(), inputs_.end(), producer);
    if (it == inputs_.end()) it = inputs_.insert(inputs_.end(), producer);
    return static_cast<size_t>(it - inputs_.begin());
  }

  bool member(NodeId n) const { return members_.count(n) > 0; }

  std::string label(NodeId n) const {
    return std::string(op_name(g_.node(n).kind)) + " %" + std::to_string(n);
  }

  // Values ---------------------------------------------------------------------------------
  std::string operand(NodeId consumer, size_t k, const std::vector<Expr>& idx, Scope* cur);
  std::string value(NodeId n, const std::vector<Expr>& idx, Scope* cur);
  std::string reduce(NodeId n, const std::vector<Expr>& idx, Scope* t);
  std::string gather(NodeId n, const std::vector<Expr>& idx, Scope* t);
  // The C expression of an element-wise node; `deps` receives the variables it
  // reads and `checks` statements that must run before it (error checks).
  std::string compute(NodeId n, const std::vector<Expr>& idx, Scope* t,
                      std::vector<std::string>& deps, std::vector<std::string>& checks);
  // Define `var` in `scope` (remembered for dependency-based placement).
  void define(Scope* scope, const std::string& var, const std::string& line) {
    scope->lines.push_back(line);
    var_scope_[var] = scope;
  }

  // Functions ------------------------------------------------------------------------------
  struct Loop {
    Scope root, row, element;
    std::vector<Expr> idx;
    std::string n;  // C source of the innermost extent
    std::vector<Expr> shape;
  };
  void open_loop(Loop& loop, const std::vector<Expr>& shape);
  std::string close_loop(Loop& loop);
  std::string function(const std::string& symbol, const std::string& body);
  void validate();

  const Graph& g_;
  const Region& region_;
  std::string name_;
  std::set<NodeId> members_;
  std::vector<NodeId> inputs_;
  std::vector<std::string> dims_;
  Ranges ranges_;
  Expr work_ = 1;
  int counter_ = 0;
  std::map<std::string, Scope*> var_scope_;  // where each emitted variable is defined
  static constexpr int kMaxValues = 20000;
  int values_emitted_ = 0;
};

std::string Emitter::operand(NodeId consumer, size_t k, const std::vector<Expr>& idx, Scope* cur) {
  const Operand& o = g_.node(consumer).operands[k];
  const Node& p = g_.node(o.node);
  if (member(o.node)) {
    // The producer's own layout: same element, same index.
    if (o.view.is_contiguous() && o.view.shape() == p.shape) return value(o.node, idx, cur);
    return value(o.node, unflatten(o.view.offset(idx).simplify(ranges_), p.shape), cur);
  }
  const Expr offset = o.view.offset(idx).simplify(ranges_);
  Scope* t = target({offset}, cur);
  const std::string buffer = "_p" + std::to_string(input_slot(o.node));
  // Block-quantized storage is read one element at a time through its decoder.
  const std::string element =
      is_quantized(p.dtype)
          ? "lk::deq_" + std::string(dtype_name(p.dtype)) + "(" + buffer + ", " + c(offset) + ")"
          : buffer + "[" + c(offset) + "]";
  if (auto it = t->loads.find(element); it != t->loads.end()) return it->second;
  const std::string v = fresh();
  define(t, v,
         std::string("const ") + value_type(p.dtype) + " " + v + " = " +
             load_expr(p.dtype, element) + ";");
  t->loads[element] = v;
  return v;
}

std::string Emitter::value(NodeId n, const std::vector<Expr>& idx, Scope* cur) {
  Scope* t = target(idx, cur);
  std::pair<NodeId, std::vector<const ExprNode*>> key{n, {}};
  for (const Expr& e : idx) key.second.push_back(e.node());
  if (auto it = t->values.find(key); it != t->values.end()) return it->second;
  // Reading region members through views recomputes them; a pathological region could
  // blow up (each level of a diamond read through two views doubles the work).
  if (++values_emitted_ > kMaxValues)
    throw Error("cpu kernel " + name_ + ": the region needs more than " +
                std::to_string(kMaxValues) +
                " values (members recomputed through views); split it into smaller regions");
  // Operands are computed in t (never deeper): their index uses only t's chain.
  std::string v;
  switch (g_.node(n).kind) {
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
      v = reduce(n, idx, t);
      break;
    case OpKind::Gather:
      v = gather(n, idx, t);
      break;
    default: {
      std::vector<std::string> deps, checks;
      const std::string expr = compute(n, idx, t, deps, checks);
      // Loop-invariant code motion: the value goes to the innermost scope that
      // defines one of its inputs (an Iota depends on its index itself), which
      // may be outside t: x - max(x) broadcast over a row is computed once per row.
      // Error checks report the position from the node's own index: they stay in t.
      Scope* place = t;
      if (g_.node(n).kind != OpKind::Iota && checks.empty()) {
        place = nullptr;
        for (const std::string& d : deps) {
          Scope* s = var_scope_.at(d);
          if (place == nullptr || s->depth > place->depth) place = s;
        }
        if (place == nullptr) {  // a constant
          place = t;
          while (place->parent != nullptr) place = place->parent;
        }
      }
      const std::string typed = std::string(value_type(g_.node(n).dtype)) + " " + expr;
      if (auto it = place->exprs.find(typed); it != place->exprs.end() && checks.empty()) {
        v = it->second;  // the same expression of the same variables: computed already
        break;
      }
      v = fresh();
      for (const std::string& c : checks) place->lines.push_back(c);
      define(place, v,
             std::string("const ") + value_type(g_.node(n).dtype) + " " + v + " = " + expr + ";");
      place->exprs[typed] = v;
    }
  }
  var_scope_[v] = var_scope_.count(v) ? var_scope_[v] : t;
  t->values[key] = v;
  return v;
}

std::string Emitter::compute(NodeId n, const std::vector<Expr>& idx, Scope* t,
                             std::vector<std::string>& deps, std::vector<std::string>& checks) {
  const Node& node = g_.node(n);
  const DType d = node.dtype;
  const char* vt = value_type(d);
  // Operand k's value variable, recorded as a dependency.
  auto operand = [&](size_t k) {
    deps.push_back(this->operand(n, k, idx, t));
    return deps.back();
  };
  switch (node.kind) {
    case OpKind::Input:
    case OpKind::SumReduce:
    case OpKind::MaxReduce:
    case OpKind::Gather:
    case OpKind::Scatter:
      break;  // not element-wise values (validated / dispatched before)
    case OpKind::Constant:
      if (is_float(d)) return float_literal(node.value, d == DType::F64);
      return int_literal(d == DType::Bool ? (node.int_value != 0) : node.int_value, d);
    case OpKind::Iota: {
      const Expr e = node.iota_expr.substitute(Expr::index_var().name(), idx.at(0));
      return "(" + std::string(vt) + ")(int64_t)(" + c(e) + ")";
    }
    case OpKind::Output:
      return operand(0);
    case OpKind::Cast: {
      const DType s = g_.node(node.operands[0].node).dtype;
      const std::string x = operand(0);
      if (d == DType::Bool) return "(uint8_t)(" + x + " != 0)";
      if (is_float(s)) {
        if (d == DType::F64) return "(double)" + x;
        if (d == DType::F32) return s == DType::F64 ? "lk::d2f(" + x + ")" : "(float)" + x;
        if (is_float(d)) return rounded(d, s == DType::F64 ? "lk::d2f_odd(" + x + ")" : x);
        return "lk::sat_" + lower(dtype_name(d)) + "((double)" + x + ")";
      }
      if (d == DType::F64) return "(double)" + x;
      if (d == DType::F32) return "lk::d2f((double)" + x + ")";
      if (is_float(d)) return rounded(d, "lk::d2f_odd((double)" + x + ")");
      return "(" + std::string(vt) + ")" + x;
    }
    case OpKind::Exp2:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Sqrt:
    case OpKind::Recip: {
      const std::string x = operand(0);
      const bool dbl = d == DType::F64;
      std::string e;
      if (node.kind == OpKind::Recip) {
        e = (dbl ? "1.0 / " : "1.0f / ") + x;
      } else {
        const std::string fn = lower(op_name(node.kind));
        // f32 (and f16 / bf16, carried as float): the prelude's branch-free
        // lk::exp2f / log2f / sinf keep the loop vectorised (libm calls do not);
        // sqrtf is an instruction already. f64 stays libm.
        const bool inline_math = !dbl && node.kind != OpKind::Sqrt;
        e = (inline_math ? "lk::" : "") + fn + (dbl ? "" : "f") + "(" + x + ")";
      }
      return rounded(d, e);
    }
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Mod:
    case OpKind::LessThan: {
      const DType in = g_.node(node.operands[0].node).dtype;
      const std::string a = operand(0);
      const std::string b = operand(1);
      if (node.kind == OpKind::LessThan) return "(uint8_t)(" + a + " < " + b + ")";
      if (is_float(in)) {
        if (node.kind == OpKind::Mod)
          return rounded(d, std::string(d == DType::F64 ? "fmod(" : "fmodf(") + a + ", " + b + ")");
        return rounded(d, a + (node.kind == OpKind::Add ? " + " : " * ") + b);
      }
      if (in == DType::Bool)
        return "(uint8_t)(" + a + (node.kind == OpKind::Add ? " | " : " & ") + b + ")";
      if (node.kind == OpKind::Mod) {
        checks.push_back("if (" + b + " == 0) { _err[0] = " + std::to_string(n) +
                         "; _err[1] = " + position(n, idx) + "; _err[2] = 0; return 2; }");
        // x % -1 is 0 (INT_MIN % -1 overflows in C).
        return "(" + std::string(vt) + ")(" + b + " == -1 ? 0 : " + a + " % " + b + ")";
      }
      const char* op = node.kind == OpKind::Add ? " + " : " * ";
      if (in == DType::I32) return "(int32_t)((uint32_t)" + a + op + "(uint32_t)" + b + ")";
      if (in == DType::I64) return "(int64_t)((uint64_t)" + a + op + "(uint64_t)" + b + ")";
      return "(" + std::string(vt) + ")(" + a + op + b + ")";  // i8 / u8: no int overflow
    }
  }
  throw Error("cpu codegen: " + label(n) + " has no element-wise value");
}

std::string Emitter::gather(NodeId n, const std::vector<Expr>& idx, Scope* t) {
  const Node& node = g_.node(n);
  const View& data_view = node.operands[1].view;
  const Expr numel = data_view.numel();
  const std::string index = operand(n, 0, idx, t);
  const Expr j = new_var("_g", t, numel);
  const std::string jn = j.name();
  t->lines.push_back("const int64_t " + jn + " = (int64_t)" + index + ";");
  t->lines.push_back("if (" + jn + " < 0 || " + jn + " >= " + c(numel) +
                     ") { _err[0] = " + std::to_string(n) + "; _err[1] = " + position(n, idx) +
                     "; _err[2] = " + jn + "; return 1; }");
  return operand(n, 1, unflatten(j, data_view.shape()), t);
}

std::string Emitter::reduce(NodeId n, const std::vector<Expr>& idx, Scope* t) {
  const Node& node = g_.node(n);
  const DType d = node.dtype;
  const auto axis = static_cast<size_t>(node.axis);
  const Expr len = node.operands[0].view.shape().at(axis);
  work_ = work_ + len;
  const std::string id = std::to_string(counter_++);
  const std::string s = "_s" + id, cc = "_c" + id, L = "_L" + id, rb = "_rb" + id, l = "_l" + id;
  const std::string r = "_r" + id;
  if (auto n_len = len.as_const(); n_len && *n_len > 0) ranges_[r] = Range{0, *n_len - 1};
  std::vector<Expr> inner = idx;
  inner.insert(inner.begin() + static_cast<std::ptrdiff_t>(axis), Expr::internal_var(r));
  // The loop body, in a scope of its own under t.
  auto body = [&](Scope& scope, std::string& v) {
    scope.parent = t;
    scope.depth = t->depth + 1;
    scope.vars.insert(r);
    v = operand(n, 0, inner, &scope);
  };
  const char* vt = value_type(d);
  t->lines.push_back("const int64_t " + L + " = " + c(len) + ";");
  const std::string out = fresh();
  if (node.kind == OpKind::SumReduce && is_float(d)) {
    Scope lanes, tail;
    std::string v1, v2;
    body(lanes, v1);
    body(tail, v2);
    t->lines.push_back(std::string(vt) + " " + s + "[8] = {}, " + cc + "[8] = {};");
    t->lines.push_back("int64_t " + rb + " = 0;");
    t->lines.push_back("for (; " + rb + " + 8 <= " + L + "; " + rb + " += 8) {");
    t->lines.push_back("  for (int " + l + " = 0; " + l + " < 8; ++" + l + ") {");
    t->lines.push_back("    const int64_t " + r + " = " + rb + " + " + l + ";");
    for (const std::string& line : lanes.lines) t->lines.push_back("    " + line);
    t->lines.push_back("    lk::kahan_add(" + s + "[" + l + "], " + cc + "[" + l + "], " + v1 +
                       ");");
    t->lines.push_back("  }");
    t->lines.push_back("}");
    t->lines.push_back("for (; " + rb + " < " + L + "; ++" + rb + ") {");
    t->lines.push_back("  const int64_t " + r + " = " + rb + ";");
    for (const std::string& line : tail.lines) t->lines.push_back("  " + line);
    t->lines.push_back("  lk::kahan_add(" + s + "[0], " + cc + "[0], " + v2 + ");");
    t->lines.push_back("}");
    t->lines.push_back(std::string("const ") + vt + " " + out + " = " +
                       rounded(d, "lk::lanes_total(" + s + ", " + cc + ")") + ";");
    return out;
  }
  Scope loop;
  std::string v;
  body(loop, v);
  std::string init, step, result;
  if (node.kind == OpKind::SumReduce) {  // integers: wrap-around
    init = "uint64_t " + s + " = 0;";
    step = s + " += (uint64_t)" + v + ";";
    result = "(" + std::string(vt) + ")" + s;
  } else if (is_float(d)) {
    init = std::string(vt) + " " + s + " = " + float_literal(-INFINITY, d == DType::F64) + ";";
    step = s + " = lk::max_nan(" + s + ", " + v + ");";
    result = s;
  } else {
    init = std::string(vt) + " " + s + " = " + min_literal(d) + ";";
    step = s + " = " + s + " < " + v + " ? " + v + " : " + s + ";";
    result = s;
  }
  t->lines.push_back(init);
  t->lines.push_back("for (int64_t " + r + " = 0; " + r + " < " + L + "; ++" + r + ") {");
  for (const std::string& line : loop.lines) t->lines.push_back("  " + line);
  t->lines.push_back("  " + step);
  t->lines.push_back("}");
  t->lines.push_back(std::string("const ") + vt + " " + out + " = " + result + ";");
  return out;
}

// The loop nest over `shape`: rows (outer axes, decomposed once per row) and
// the innermost axis; loop.idx is the element's index.
void Emitter::open_loop(Loop& loop, const std::vector<Expr>& shape) {
  loop.shape = shape;
  loop.row.parent = &loop.root;
  loop.row.depth = 1;
  loop.element.parent = &loop.row;
  loop.element.depth = 2;
  const size_t rank = shape.size();
  for (size_t k = 0; k + 1 < rank; ++k) {
    const std::string a = "_a" + std::to_string(k);
    loop.row.vars.insert(a);
    if (auto v = shape[k].as_const(); v && *v > 0) ranges_[a] = Range{0, *v - 1};
    loop.idx.push_back(Expr::internal_var(a));
  }
  if (rank > 0) {
    loop.element.vars.insert("_i");
    if (auto v = shape.back().as_const(); v && *v > 0) ranges_["_i"] = Range{0, *v - 1};
    loop.idx.push_back(Expr::internal_var("_i"));
  }
}

std::string Emitter::close_loop(Loop& loop) {
  const size_t rank = loop.shape.size();
  std::string out = indent(loop.root.lines, "  ");
  out += "  const int64_t _n = " + (rank > 0 ? c(loop.shape.back()) : std::string("1")) + ";\n";
  out += "  int64_t _f = _begin;\n";
  out += "  while (_f < _end) {\n";
  out += "    const int64_t _row = _f / _n;\n";
  out += "    const int64_t _ilo = _f - _row * _n;\n";
  out += "    const int64_t _ihi = (_end - _f < _n - _ilo) ? _ilo + (_end - _f) : _n;\n";
  if (rank >= 2) {
    out += "    int64_t _t = _row;\n";
    for (size_t k = rank - 2; k >= 1; --k) {
      const std::string size = "(" + c(loop.shape[k]) + ")";
      out += "    const int64_t _a" + std::to_string(k) + " = _t % " + size + ";\n";
      out += "    _t /= " + size + ";\n";
    }
    out += "    const int64_t _a0 = _t;\n";
  }
  out += "    const int64_t _ob = _row * _n;\n";
  out += indent(loop.row.lines, "    ");
  out += "    for (int64_t _i = _ilo; _i < _ihi; ++_i) {\n";
  out += indent(loop.element.lines, "      ");
  out += "    }\n";
  out += "    _f += _ihi - _ilo;\n";
  out += "  }\n";
  out += "  return 0;\n";
  return out;
}

std::string Emitter::function(const std::string& symbol, const std::string& body) {
  std::string params, args;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const char* t = storage_type(g_.node(inputs_[i]).dtype);
    params += "const " + std::string(t) + "* __restrict _p" + std::to_string(i) + ", ";
    args += "(const " + std::string(t) + "*)_bufs[" + std::to_string(i) + "], ";
  }
  for (size_t i = 0; i < region_.outputs.size(); ++i) {
    const char* t = storage_type(g_.node(region_.outputs[i]).dtype);
    params += std::string(t) + "* __restrict _q" + std::to_string(i) + ", ";
    args += "(" + std::string(t) + "*)_bufs[" + std::to_string(inputs_.size() + i) + "], ";
  }
  std::string out = "static __attribute__((noinline)) int32_t " + symbol + "_impl(" + params +
                    "const int64_t* __restrict _dims, int64_t _begin, int64_t _end, "
                    "int64_t* __restrict _err) {\n";
  for (size_t k = 0; k < dims_.size(); ++k)
    out += "  const int64_t _d" + std::to_string(k) + " = _dims[" + std::to_string(k) + "];  // " +
           dims_[k] + "\n";
  out += body + "}\n";
  out += "extern \"C\" int32_t " + symbol +
         "(void* const* _bufs, const int64_t* _dims, int64_t _begin, int64_t _end, int64_t* _err) "
         "{\n";
  out += "  return " + symbol + "_impl(" + args + "_dims, _begin, _end, _err);\n}\n";
  return out;
}

void Emitter::validate() {
  const std::string who = "cpu kernel " + name_;
  if (region_.nodes.empty()) throw Error(who + ": the region has no nodes");
  if (region_.outputs.empty()) throw Error(who + ": the region has no outputs");
  for (NodeId n : region_.nodes) {
    if (n >= g_.size())
      throw Error(who + ": node %" + std::to_string(n) + " is not in the graph (" +
                  std::to_string(g_.size()) + " nodes)");
    if (!members_.insert(n).second)
      throw Error(who + ": node %" + std::to_string(n) + " is listed twice");
    const Node& node = g_.node(n);
    if (node.kind == OpKind::Input)
      throw Error(who + ": " + label(n) + " is an Input; inputs are buffers, not kernel members");
    require_supported(node.dtype, who + ": " + label(n));
    // Only a Cast (the dequantization) reads block-quantized storage.
    if (node.kind != OpKind::Cast)
      for (const Operand& o : node.operands) require_supported(g_.node(o.node).dtype, who);
  }
  std::set<NodeId> outs;
  for (NodeId n : region_.outputs) {
    if (!member(n))
      throw Error(who + ": output %" + std::to_string(n) + " is not a member of the region");
    if (!outs.insert(n).second)
      throw Error(who + ": output %" + std::to_string(n) + " is listed twice");
  }
  for (NodeId n : region_.nodes) {
    for (const Operand& o : g_.node(n).operands)
      if (member(o.node) && g_.node(o.node).kind == OpKind::Scatter)
        throw Error(who + ": " + label(o.node) +
                    " is read inside its region; a Scatter must be "
                    "its region's only output");
    if (g_.node(n).kind == OpKind::Scatter && region_.outputs != std::vector<NodeId>{n})
      throw Error(who + ": " + label(n) + " must be the region's only output");
  }
  const std::vector<Expr>& shape = g_.node(region_.outputs[0]).shape;
  for (NodeId n : region_.outputs) {
    const std::vector<Expr>& s = g_.node(n).shape;
    bool same = s.size() == shape.size();
    for (size_t k = 0; same && k < s.size(); ++k) same = provably_equal(s[k], shape[k]);
    if (!same)
      throw Error(who + ": outputs must share one shape, but " + label(region_.outputs[0]) +
                  " is " + to_string(shape) + " and " + label(n) + " is " + to_string(s));
  }
}

CpuKernel Emitter::generate() {
  validate();
  CpuKernel k;
  k.name = name_;
  k.outputs = region_.outputs;
  const std::string symbol = "lk_" + name_;
  const NodeId first = region_.outputs[0];
  const Node& out = g_.node(first);
  std::string code = "// region:";
  for (NodeId n : region_.nodes) code += " " + label(n);
  code += "\n";
  if (out.kind == OpKind::Scatter) {
    // Phase 1 (parallel): out = dest. Phase 2 (one thread, in order): the writes.
    Loop copy;
    open_loop(copy, out.shape);
    const std::string dest = operand(first, 0, copy.idx, &copy.element);
    copy.element.lines.push_back("_q0[_ob + _i] = " + store_expr(out.dtype, dest) + ";");
    const std::string copy_body = close_loop(copy);

    Loop writes;
    const std::vector<Expr> index_shape = out.operands[1].view.shape();
    open_loop(writes, index_shape);
    const std::string j = operand(first, 1, writes.idx, &writes.element);
    const std::string v = operand(first, 2, writes.idx, &writes.element);
    const std::string numel = c(View::contiguous(out.shape).numel());
    writes.element.lines.push_back("{ const int64_t _j = (int64_t)" + j + "; if (_j >= 0 && _j < " +
                                   numel + ") _q0[_j] = " + store_expr(out.dtype, v) + "; }");
    const std::string writes_body = close_loop(writes);
    code += function(symbol, copy_body) + function(symbol + "_scatter", writes_body);
    k.launches.push_back({symbol, View::contiguous(out.shape).numel(), 1, true});
    k.launches.push_back({symbol + "_scatter", View::contiguous(index_shape).numel(), 1, false});
  } else {
    Loop loop;
    open_loop(loop, out.shape);
    for (size_t i = 0; i < region_.outputs.size(); ++i) {
      const NodeId o = region_.outputs[i];
      const std::string v = value(o, loop.idx, &loop.element);
      loop.element.lines.push_back("_q" + std::to_string(i) +
                                   "[_ob + _i] = " + store_expr(g_.node(o).dtype, v) + ";");
    }
    code += function(symbol, close_loop(loop));
    k.launches.push_back({symbol, View::contiguous(out.shape).numel(), work_.simplify(), true});
  }
  k.code = std::move(code);
  k.inputs = inputs_;
  k.dims = dims_;
  return k;
}

}  // namespace

JitKernel CpuKernel::jit() const {
  JitKernel j;
  j.name = name;
  j.code = code;
  for (const KernelLaunch& l : launches) j.symbols.push_back(l.symbol);
  return j;
}

CpuKernel generate_kernel(const Graph& graph, const Region& region, const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') ||
      !std::all_of(name.begin(), name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
      }))
    throw Error("cpu kernel name \"" + name + "\" is not a C identifier");
  return Emitter(graph, region, name).generate();
}

std::string region_kernel_name(const Graph& graph, const Region& region) {
  std::vector<NodeId> nodes = region.nodes;
  std::sort(nodes.begin(), nodes.end());
  std::string name = "k" + (nodes.empty() ? std::string("empty") : std::to_string(nodes.front()));
  for (size_t i = 0; i < nodes.size() && i < 6; ++i) {
    if (nodes[i] >= graph.size()) break;
    name += "_" + lower(op_name(graph.node(nodes[i]).kind));
  }
  if (nodes.size() > 6) name += "_n" + std::to_string(nodes.size());
  return name;
}

}  // namespace luminal::cpu
