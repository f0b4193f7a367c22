#include "luminal/backends/cpu/codegen.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
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
    bound_index(name, count);
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

  // An index variable that runs over [0, extent): a constant extent is a numeric
  // range, a dynamic one a symbolic bound (the same name may serve several loops in
  // turn, so the other kind is dropped).
  void bound_index(const std::string& name, const Expr& extent) {
    ranges_.erase(name);
    below_.erase(name);
    if (auto n = extent.as_const()) {
      if (*n > 0) ranges_[name] = Range{0, *n - 1};
    } else {
      below_[name] = extent;
    }
  }
  Expr simplify(const Expr& e) const { return e.simplify(ranges_, below_); }

  // C source of an index expression: dims renamed to the kernel's locals.
  std::string c(const Expr& e) {
    std::map<std::string, Expr, std::less<>> rename;
    for (const std::string& v : e.variables()) {
      if (v[0] == '_') continue;
      auto it = std::find(dims_.begin(), dims_.end(), v);
      if (it == dims_.end()) it = dims_.insert(dims_.end(), v);
      rename[v] = Expr::internal_var("_d" + std::to_string(it - dims_.begin()));
    }
    if (rename.empty()) return simplify(e).to_c(ranges_);
    // The symbolic bounds in the renamed dims; a bound over a dim that e does not
    // use cannot help simplify e.
    UpperBounds below;
    for (const auto& [v, bound] : below_) {
      const std::set<std::string> vars = bound.variables();
      if (std::all_of(vars.begin(), vars.end(),
                      [&](const std::string& d) { return d[0] == '_' || rename.count(d); })) {
        below[v] = bound.substitute(rename);
      }
    }
    return e.substitute(rename).simplify(ranges_, below).to_c(ranges_);
  }

  std::vector<Expr> unflatten(const Expr& flat, const std::vector<Expr>& shape) {
    std::vector<Expr> idx;
    const std::vector<Expr> strides = row_major_strides(shape);
    for (size_t k = 0; k < shape.size(); ++k) {
      Expr e = flat / strides[k];
      if (k > 0) e = e % shape[k];
      idx.push_back(simplify(e));
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
    // The element loop again over pairs (_i = 2 _j, 2 _j + 1), used where a row range
    // starts and ends even: see emit_pairs.
    Scope pair;
    bool paired = false;
    // The element loop again over blocks of `block` elements (_i = block _h + _l),
    // used where a row range starts and ends on block boundaries: see emit_blocks.
    Scope block_outer, block_inner;
    int64_t block = 0;
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
  UpperBounds below_;  // index variables over dynamic extents
  Expr work_ = 1;
  int counter_ = 0;
  std::map<std::string, Scope*> var_scope_;  // where each emitted variable is defined
  // Row caches (see reduce): a reduction over the innermost axis at row level
  // whose operand the element loop also needs at the same index stores the
  // operand's values in a row buffer, and the element loop reads them back
  // instead of computing them again (softmax: exp once, not twice). Decided
  // after the element loop is generated; unused caches are removed.
  struct RowCache {
    NodeId node;         // the reduction's operand
    std::string buffer;  // the buffer's variable; its lines are tagged with kCacheTag + buffer
    std::string type;    // the operand's value type
  };
  std::vector<RowCache> row_caches_;
  const Loop* main_loop_ = nullptr;  // the element loop of a single-output kernel
  bool output_row_cache_ = false;    // a row cache lives in the output row
  static constexpr const char* kCacheTag = "  // row cache ";
  static constexpr const char* kNoCacheTag = "  // no row cache ";  // kept if unused
  // Next-row prefetches (see prefetch_next_row), tagged with their reduction's
  // id: only the last row reduction's are kept.
  static constexpr const char* kPrefetchTag = "  // prefetch ";
  std::string last_prefetch_;
  void finish_row_caches(Loop& loop);
  void finish_prefetches(Loop& loop);
  void emit_pairs(Loop& loop);
  void emit_blocks(Loop& loop);
  // Lines storing every output at `idx` (its last entry the element's place in
  // the row) into `scope`.
  void store_outputs(const std::vector<Expr>& idx, Scope* scope);
  bool has_reductions() const;
  // Whether two nodes compute the same values (the same node, or members with
  // the same op, payload and operands): graphs built without the e-graph repeat
  // subexpressions (softmax's exp), which a row cache may serve alike.
  bool same_value(NodeId a, NodeId b);
  std::map<std::pair<NodeId, NodeId>, bool> same_value_memo_;
  static constexpr int kMaxValues = 20000;
  // Input elements read while a reduction's lane body is generated (the
  // buffer, its element bytes, the offset): see prefetch_next_row.
  struct InputRead {
    std::string buffer;
    size_t bytes;
    Expr offset;
  };
  std::vector<InputRead>* input_reads_ = nullptr;
  std::vector<std::string> prefetch_next_row(const std::vector<InputRead>& reads,
                                             const std::string& r, const std::string& rb,
                                             int lanes);
  // Accumulator lanes of a reduction loop: 32 floats (or doubles) keep two to
  // four AVX-512 (four to eight AVX2) independent dependency chains busy.
  static constexpr int kLanes = 32;
  int values_emitted_ = 0;
};

std::string Emitter::operand(NodeId consumer, size_t k, const std::vector<Expr>& idx, Scope* cur) {
  const Operand& o = g_.node(consumer).operands[k];
  const Node& p = g_.node(o.node);
  if (member(o.node)) {
    // The producer's own layout: same element, same index.
    if (o.view.is_contiguous() && o.view.shape() == p.shape) return value(o.node, idx, cur);
    return value(o.node, unflatten(simplify(o.view.offset(idx)), p.shape), cur);
  }
  const Expr offset = simplify(o.view.offset(idx));
  Scope* t = target({offset}, cur);
  const std::string buffer = "_p" + std::to_string(input_slot(o.node));
  if (input_reads_ != nullptr && !is_quantized(p.dtype))
    input_reads_->push_back({buffer, storage_bytes(p.dtype, 1), offset});
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
        if (s != DType::F64 && (d == DType::I32 || d == DType::I8 || d == DType::U8))
          return "lk::satf_" + lower(dtype_name(d)) + "(" + x + ")";
        return "lk::sat_" + lower(dtype_name(d)) + "((double)" + x + ")";
      }
      if (d == DType::F64) return "(double)" + x;
      // Integers of up to 32 bits are exact in double, so (float)x rounds
      // once like d2f((double)x) does, and it vectorises (d2f of a general
      // double does not). 64-bit integers keep the reference's two steps, but
      // the double of one (|x| < 2^63) is finite and far inside float's range,
      // where d2f is the plain conversion: (float)(double)x, which vectorises
      // (d2f's NaN and overflow selects kept GCC from vectorising the loop of
      // RoPE's sign, a cast of an int64 `i & 1`).
      if (d == DType::F32 && element_size(s) <= 4) return "(float)" + x;
      if (d == DType::F32) return "(float)(double)" + x;
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
  bound_index(r, len);
  std::vector<Expr> inner = idx;
  inner.insert(inner.begin() + static_cast<std::ptrdiff_t>(axis), Expr::internal_var(r));
  // The loop body (the operand at element r), in a scope of its own under t:
  // its lines, and the variable holding the value. Values that do not depend
  // on r land in t (or further out) once, before the loops.
  std::vector<std::unique_ptr<Scope>> scopes;
  auto body = [&](std::string& v) -> const std::vector<std::string>& {
    Scope& scope = *scopes.emplace_back(std::make_unique<Scope>());
    scope.parent = t;
    scope.depth = t->depth + 1;
    scope.vars.insert(r);
    v = operand(n, 0, inner, &scope);
    return scope.lines;
  };
  const char* vt = value_type(d);
  const bool sum = node.kind == OpKind::SumReduce;
  const bool flt = is_float(d);
  // Accumulators: kLanes independent lanes (element r goes to lane r % kLanes
  // in the main loop, the tail to lane 0), so that the lane loop is a straight
  // vector body; lanes are combined after the loops (see codegen.hpp).
  //  * float sums (f32 / f16 / bf16) accumulate in double lanes;
  //  * f64 sums in Kahan-compensated double lanes;
  //  * integer sums in wrapping uint64 lanes (order-free);
  //  * maxima in lanes of the value type (floats: with NaN marker lanes,
  //    lk::max_step).
  const std::string lanes = std::to_string(kLanes);
  std::string acc, init, combined;
  std::function<std::string(const std::string&, const std::string&)> step;
  if (sum && flt && d != DType::F64) {
    acc = "double";
    init = "0.0";
    step = [&](const std::string& lane, const std::string& v) {
      return s + "[" + lane + "] += (double)" + v + ";";
    };
    // One rounding from the double total: d2f for f32, round-to-odd first for
    // the narrow formats (as TensorData::set rounds the interpreter's double).
    const std::string total = "lk::lanes_sum<" + lanes + ">(" + s + ")";
    combined =
        d == DType::F32 ? "lk::d2f(" + total + ")" : rounded(d, "lk::d2f_odd(" + total + ")");
  } else if (sum && flt) {
    acc = "double";
    init = "0.0";
    step = [&](const std::string& lane, const std::string& v) {
      return "lk::kahan_add(" + s + "[" + lane + "], " + cc + "[" + lane + "], " + v + ");";
    };
    combined = "lk::lanes_total<" + lanes + ">(" + s + ", " + cc + ")";
  } else if (sum) {
    acc = "uint64_t";
    init = "0";
    step = [&](const std::string& lane, const std::string& v) {
      return s + "[" + lane + "] += (uint64_t)" + v + ";";
    };
    combined = "(" + std::string(vt) + ")lk::lanes_sum<" + lanes + ">(" + s + ")";
  } else if (flt) {  // a maximum lane and a NaN lane (cc), see lk::max_step
    acc = vt;
    init = float_literal(-INFINITY, d == DType::F64);
    step = [&](const std::string& lane, const std::string& v) {
      return "lk::max_step(" + s + "[" + lane + "], " + cc + "[" + lane + "], " + v + ");";
    };
    combined = "lk::lanes_max<" + lanes + ">(" + s + ", " + cc + ")";
  } else {
    acc = vt;
    init = min_literal(d);
    step = [&](const std::string& lane, const std::string& v) {
      const std::string a = s + "[" + lane + "]";
      return a + " = " + a + " < " + v + " ? " + v + " : " + a + ";";
    };
    combined = "lk::lanes_max_int<" + lanes + ">(" + s + ")";
  }
  // Floats keep a second lane array: Kahan compensations, or NaN markers.
  const bool second = flt && (d == DType::F64 || !sum);
  std::string v_lane, v_tail;
  std::vector<InputRead> reads;
  std::vector<InputRead>* const outer_reads = input_reads_;  // (a reduction in a lane body)
  input_reads_ = &reads;
  const std::vector<std::string>& lane_lines = body(v_lane);
  input_reads_ = outer_reads;
  const std::vector<std::string>& tail_lines = body(v_tail);
  auto& out_lines = t->lines;
  // A row cache of the operand: the reduction runs once per row over the
  // innermost axis, and element r of it is the element loop's element _i = r.
  std::string cache_store;
  const Operand& src = node.operands[0];
  if (main_loop_ != nullptr && t == &main_loop_->row && member(src.node) &&
      src.view.is_contiguous() && src.view.shape() == g_.node(src.node).shape &&
      inner.size() == main_loop_->idx.size() && axis + 1 == inner.size() &&
      provably_equal(len, main_loop_->shape.back())) {
    bool same_row = true;
    for (size_t k = 0; k < axis; ++k) same_row = same_row && inner[k] == main_loop_->idx[k];
    if (same_row) {
      const std::string buffer = "_rc" + id;
      const std::string type = value_type(g_.node(src.node).dtype);
      const std::string tag = kCacheTag + buffer;
      Scope* root = t->parent;
      root->lines.push_back("lk::RowBuffer<" + type + "> " + buffer + "_h(" + c(len) + ");" + tag);
      root->lines.push_back("if (" + buffer + "_h.p == nullptr) { _err[0] = " + std::to_string(n) +
                            "; _err[1] = 0; _err[2] = 0; return " +
                            std::to_string(kKernelOutOfMemory) + "; }" + tag);
      // A row this call writes whole can hold the cache in the output row itself
      // (each element is read just before it is overwritten), where the stores
      // also fetch the output's cache lines while the reduction computes.
      // Only one cache may live there.
      const DType out_dtype = g_.node(region_.outputs[0]).dtype;
      const bool in_output = region_.outputs.size() == 1 && !narrow_name(out_dtype) &&
                             type == storage_type(out_dtype) && !output_row_cache_;
      if (in_output) output_row_cache_ = true;
      if (in_output)
        t->lines.push_back(type + "* const " + buffer +
                           " = (_ilo == 0 && _ihi == _n) ? _q0 + _ob : " + buffer + "_h.p;" + tag);
      else
        t->lines.push_back(type + "* const " + buffer + " = " + buffer + "_h.p;" + tag);
      row_caches_.push_back({src.node, buffer, type});
      cache_store = buffer + "[" + r + "] = ";
    }
  }
  auto store = [&](const std::string& v) {
    return cache_store.empty()
               ? std::string()
               : cache_store + v + ";" + kCacheTag + cache_store.substr(0, cache_store.find('['));
  };
  out_lines.push_back("const int64_t " + L + " = " + c(len) + ";");
  out_lines.push_back(acc + " " + s + "[" + lanes + "];");
  if (second) out_lines.push_back(acc + " " + cc + "[" + lanes + "];");
  out_lines.push_back("for (int " + l + " = 0; " + l + " < " + lanes + "; ++" + l + ") {");
  out_lines.push_back("  " + s + "[" + l + "] = " + init + ";");
  if (second) out_lines.push_back("  " + cc + "[" + l + "] = 0;");
  out_lines.push_back("}");
  out_lines.push_back("int64_t " + rb + " = 0;");
  out_lines.push_back("for (; " + rb + " + " + lanes + " <= " + L + "; " + rb + " += " + lanes +
                      ") {");
  if (main_loop_ != nullptr && t == &main_loop_->row && axis + 1 == inner.size()) {
    const std::vector<std::string> lines = prefetch_next_row(reads, r, rb, kLanes);
    if (!lines.empty()) last_prefetch_ = id;
    for (const std::string& line : lines) out_lines.push_back("  " + line + kPrefetchTag + id);
  }
  out_lines.push_back("  for (int " + l + " = 0; " + l + " < " + lanes + "; ++" + l + ") {");
  out_lines.push_back("    const int64_t " + r + " = " + rb + " + " + l + ";");
  for (const std::string& line : lane_lines) out_lines.push_back("    " + line);
  // A float sum whose operand goes to a row cache adds the cached row in a loop
  // of its own (the same blocks, so the same order per lane): widening to
  // double in the computing loop costs an extract and two conversions per 8
  // floats there; read back from L1 it is one converting load per 4.
  // Softmax's exp loop: 0.63 -> 0.53 ns per element on Zen 3.
  const bool split = !cache_store.empty() && sum && flt && d != DType::F64;
  if (!cache_store.empty()) out_lines.push_back("    " + store(v_lane));
  const std::string buffer = cache_store.substr(0, cache_store.find('['));
  // (If the cache goes unused, finish_row_caches keeps the fused step instead.)
  out_lines.push_back("    " + step(l, v_lane) + (split ? kNoCacheTag + buffer : std::string()));
  out_lines.push_back("  }");
  out_lines.push_back("}");
  if (split) {
    const std::string rs = "_rs" + id;
    out_lines.push_back("for (int64_t " + rs + " = 0; " + rs + " + " + lanes + " <= " + L + "; " +
                        rs + " += " + lanes + ") {" + kCacheTag + buffer);
    out_lines.push_back("  for (int " + l + " = 0; " + l + " < " + lanes + "; ++" + l + ") {" +
                        kCacheTag + buffer);
    out_lines.push_back("    " + step(l, buffer + "[" + rs + " + " + l + "]") + kCacheTag + buffer);
    const std::string tag = kCacheTag + buffer;
    out_lines.push_back("  }" + tag);
    out_lines.push_back("}" + tag);
  }
  out_lines.push_back("for (; " + rb + " < " + L + "; ++" + rb + ") {");
  out_lines.push_back("  const int64_t " + r + " = " + rb + ";");
  for (const std::string& line : tail_lines) out_lines.push_back("  " + line);
  if (!cache_store.empty()) out_lines.push_back("  " + store(v_tail));
  out_lines.push_back("  " + step("0", v_tail));
  out_lines.push_back("}");
  const std::string out = fresh();
  if (sum || !flt) {
    out_lines.push_back("const " + std::string(vt) + " " + out + " = " + combined + ";");
    return out;
  }
  // Float max: the lanes give the maximum's value, but when it is zero, which
  // zero (+0 / -0) is the first element equal to it (MaxReduce keeps the first
  // maximum, see op.hpp): a rare second pass finds it in order.
  out_lines.push_back(std::string(vt) + " " + out + " = " + combined + ";");
  std::string v_zero;
  const std::vector<std::string>& zero_lines = body(v_zero);
  out_lines.push_back("if (" + out + " == 0 && " + L + " >= " + lanes + ") {");
  out_lines.push_back("  for (int64_t " + r + " = 0; " + r + " < " + L + "; ++" + r + ") {");
  for (const std::string& line : zero_lines) out_lines.push_back("    " + line);
  out_lines.push_back("    if (" + v_zero + " == 0) {");
  out_lines.push_back("      " + out + " = " + v_zero + ";");
  out_lines.push_back("      break;");
  out_lines.push_back("    }");
  out_lines.push_back("  }");
  out_lines.push_back("}");
  return out;
}

// A row reduction (softmax's exp and sum, a norm's sum of squares) over inputs
// read along the row is compute-bound after its first pass brings the row in:
// the hardware prefetcher, which follows demand misses, then idles until the
// next row's first pass stalls on DRAM. Each block of lanes prefetches the
// same block of the next row (the innermost row axis + 1; past a row range's
// end the address is harmless) for inputs read with stride 1 along the row.
// Only the row's last reduction keeps them (finish_prefetches): it is the one
// that computes most (exp), and prefetches in the first pass, which streams
// the row itself, slowed it. Softmax 4096 x 4096 on Zen 3, two threads:
// 9.0 ms without, 8.6 in both passes, 7.5 in the last. Returns the lines for
// the block loop (r = rb).
std::vector<std::string> Emitter::prefetch_next_row(const std::vector<InputRead>& reads,
                                                    const std::string& r, const std::string& rb,
                                                    int lanes) {
  std::vector<std::string> lines;
  if (main_loop_->idx.size() < 2) return lines;
  const Expr row = main_loop_->idx[main_loop_->idx.size() - 2];
  const std::string row_var = *row.variables().begin();
  const Expr rv = Expr::internal_var(r);
  std::set<std::string> seen;
  for (const InputRead& read : reads) {
    if (read.offset.variables().count(r) == 0) continue;
    const Expr step = simplify(read.offset.substitute(r, rv + 1) - read.offset);
    if (step.as_const() != std::optional<int64_t>(1)) continue;
    const Expr next = read.offset.substitute(row_var, row + 1);
    const Expr delta = simplify(next - read.offset);
    if (delta.as_const() == std::optional<int64_t>(0) || delta.variables().count(r) > 0) continue;
    const int64_t per_line = std::max<int64_t>(1, 64 / static_cast<int64_t>(read.bytes));
    for (int64_t k = 0; k < lanes; k += per_line) {
      const Expr at = next.substitute(r, Expr::internal_var(rb) + k);
      const std::string line = "lk::prefetch(" + read.buffer + ", " + c(at) + ");";
      if (seen.insert(line).second) lines.push_back(line);
    }
  }
  return lines;
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
    bound_index(a, shape[k]);
    loop.idx.push_back(Expr::internal_var(a));
  }
  if (rank > 0) {
    loop.element.vars.insert("_i");
    bound_index("_i", shape.back());
    loop.idx.push_back(Expr::internal_var("_i"));
  }
}

// Index math on element pairs (`_i >> 1`, `_i & 1`: interleaved RoPE reads
// x[2 (_i >> 1) - (_i & 1) + 1] and its tables at _i >> 1) makes GCC gather each
// element. The same outputs computed for _i = 2 _j and 2 _j + 1 in one iteration
// have affine indexes (x[2 _j + 1], x[2 _j], tables at _j) and vectorise as
// contiguous loads and shuffles: RoPE over 128 x 576 took 118 us on one thread
// with gathers, 13 us so. Only for element-wise regions (no reductions: their row
// caches and prefetches index by _i), and only where an element line does such math.
bool Emitter::has_reductions() const {
  return std::any_of(region_.nodes.begin(), region_.nodes.end(), [&](NodeId n) {
    const OpKind k = g_.node(n).kind;
    return k == OpKind::SumReduce || k == OpKind::MaxReduce;
  });
}

void Emitter::store_outputs(const std::vector<Expr>& idx, Scope* scope) {
  const std::string at = idx.empty() ? "_i" : c(idx.back());  // (a scalar: one element)
  for (size_t i = 0; i < region_.outputs.size(); ++i) {
    const NodeId o = region_.outputs[i];
    const std::string v = value(o, idx, scope);
    scope->lines.push_back("_q" + std::to_string(i) + "[_ob + " + at +
                           "] = " + store_expr(g_.node(o).dtype, v) + ";");
  }
}

void Emitter::emit_pairs(Loop& loop) {
  if (loop.shape.empty() || has_reductions()) return;
  const bool pair_math =
      std::any_of(loop.element.lines.begin(), loop.element.lines.end(), [](const std::string& l) {
        return l.find("_i >> 1") != std::string::npos || l.find("_i & 1") != std::string::npos;
      });
  if (!pair_math) return;
  loop.pair.parent = &loop.row;
  loop.pair.depth = 2;
  loop.pair.vars.insert("_j");
  bound_index("_j", simplify(loop.shape.back() / 2));
  const Expr j = Expr::internal_var("_j");
  for (int64_t e = 0; e < 2; ++e) {
    std::vector<Expr> idx = loop.idx;
    idx.back() = 2 * j + e;
    store_outputs(idx, &loop.pair);
  }
  loop.paired = true;
}

namespace {

// The block size B of the element index math `_i >> k`, `_i & (2^k - 1)`,
// `_i / B` or `_i % B` in `lines` (the same in every use), or 0; B >= 8 (a
// vector of floats with AVX2: shorter inner loops would not vectorise).
int64_t element_block(const std::vector<std::string>& lines) {
  int64_t block = 0;
  for (const std::string& l : lines) {
    for (size_t at = l.find("_i "); at != std::string::npos; at = l.find("_i ", at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(l[at - 1])) || l[at - 1] == '_'))
        continue;
      size_t op = at + 3, end = l.find(' ', op);
      if (end == std::string::npos || end + 1 >= l.size()) continue;
      const std::string sym = l.substr(op, end - op);
      size_t digits = end + 1;
      while (digits < l.size() && std::isdigit(static_cast<unsigned char>(l[digits]))) ++digits;
      if (digits == end + 1 || digits - end > 10) continue;
      const int64_t v = std::stoll(l.substr(end + 1, digits - end - 1));
      int64_t b = 0;
      if (sym == ">>" && v < 31) b = int64_t{1} << v;
      if (sym == "&" && ((v + 1) & v) == 0) b = v + 1;
      if (sym == "/" || sym == "%") b = v;
      if (b == 0) continue;
      if (b < 8 || (block != 0 && b != block)) return 0;
      block = b;
    }
  }
  return block;
}

}  // namespace

// A row whose elements are read through a merged axis (the attention output
// transposed back to [s, heads * 64] reads x[64 s (_i >> 6) + (_i & 63)]) makes
// GCC compute each element's address on its own and load it as a scalar. The
// same outputs computed for _i = B _h + _l in nested loops have indexes affine
// in _l (x[64 s _h + _l]), contiguous loads that vectorise, and what depends
// on _h alone is hoisted out of the inner loop: the attention output's
// transposing copy, 128 x 576 on two threads, 50 -> 13.5 us. Only for element-wise
// regions (as emit_pairs), where no pair loop was emitted.
void Emitter::emit_blocks(Loop& loop) {
  if (loop.shape.empty() || loop.paired || has_reductions()) return;
  const int64_t b = element_block(loop.element.lines);
  if (b == 0) return;
  loop.block_outer.parent = &loop.row;
  loop.block_outer.depth = 2;
  loop.block_outer.vars.insert("_h");
  bound_index("_h", simplify(loop.shape.back() / b));
  loop.block_inner.parent = &loop.block_outer;
  loop.block_inner.depth = 3;
  loop.block_inner.vars.insert("_l");
  bound_index("_l", Expr(b));
  std::vector<Expr> idx = loop.idx;
  idx.back() = b * Expr::internal_var("_h") + Expr::internal_var("_l");
  store_outputs(idx, &loop.block_inner);
  loop.block = b;
}

std::string Emitter::close_loop(Loop& loop) {
  const size_t rank = loop.shape.size();
  std::string out = indent(loop.root.lines, "  ");
  out += "  if (_begin >= _end) return 0;\n";
  out += "  const int64_t _n = " + (rank > 0 ? c(loop.shape.back()) : std::string("1")) + ";\n";
  out += "  int64_t _f = _begin;\n";
  // The row's index is split into the outer loop variables once; each following row
  // steps them like an odometer. Splitting every row cost an integer division per
  // dimension of a dynamic extent, as much as a row's work where rows are short
  // (RoPE's rows of 64 lanes over [s, heads]).
  out += "  int64_t _row = _f / _n;\n";
  out += "  int64_t _ilo = _f - _row * _n;\n";
  if (rank >= 2) {
    out += "  int64_t _t = _row;\n";
    for (size_t k = rank - 2; k >= 1; --k) {
      const std::string kk = std::to_string(k);
      out += "  const int64_t _e" + kk + " = " + c(loop.shape[k]) + ";\n";
      out += "  int64_t _w" + kk + " = _t % _e" + kk + ";\n";
      out += "  _t /= _e" + kk + ";\n";
    }
    out += "  int64_t _w0 = _t;\n";
  }
  out += "  while (_f < _end) {\n";
  out += "    const int64_t _ihi = (_end - _f < _n - _ilo) ? _ilo + (_end - _f) : _n;\n";
  for (size_t k = 0; k + 1 < rank; ++k)
    out += "    const int64_t _a" + std::to_string(k) + " = _w" + std::to_string(k) + ";\n";
  out += "    const int64_t _ob = _row * _n;\n";
  out += indent(loop.row.lines, "    ");
  std::string elements = "    for (int64_t _i = _ilo; _i < _ihi; ++_i) {\n";
  elements += indent(loop.element.lines, "      ");
  elements += "    }\n";
  if (loop.block > 0) {
    const std::string b = std::to_string(loop.block);
    out += "    if (_ilo % " + b + " == 0 && _ihi % " + b + " == 0) {\n";
    out += "      for (int64_t _h = _ilo / " + b + "; _h < _ihi / " + b + "; ++_h) {\n";
    out += indent(loop.block_outer.lines, "        ");
    out += "        for (int64_t _l = 0; _l < " + b + "; ++_l) {\n";
    out += indent(loop.block_inner.lines, "          ");
    out += "        }\n";
    out += "      }\n";
    out += "    } else {\n";
    out += elements;
    out += "    }\n";
  } else if (loop.paired) {
    out += "    if (((_ilo | _ihi) & 1) == 0) {\n";
    out += "      for (int64_t _j = _ilo >> 1; _j < (_ihi >> 1); ++_j) {\n";
    out += indent(loop.pair.lines, "        ");
    out += "      }\n";
    out += "    } else {\n";
    out += elements;
    out += "    }\n";
  } else {
    out += elements;
  }
  out += "    _f += _ihi - _ilo;\n";
  out += "    _ilo = 0;\n";
  out += "    ++_row;\n";
  if (rank >= 2) {
    // ++_w{rank-2}, carrying into the outer ones; _w0 has no bound.
    std::string step = "++_w0;";
    for (size_t k = 1; k + 1 < rank; ++k) {
      const std::string kk = std::to_string(k);
      step = "if (++_w" + kk + " == _e" + kk + ") { _w" + kk + " = 0; " + step + " }";
    }
    out += "    " + step + "\n";
  }
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

bool Emitter::same_value(NodeId a, NodeId b) {
  if (a == b) return true;
  if (!member(a) || !member(b)) return false;
  if (auto it = same_value_memo_.find({a, b}); it != same_value_memo_.end()) return it->second;
  const Node& x = g_.node(a);
  const Node& y = g_.node(b);
  bool same = x.kind == y.kind && x.dtype == y.dtype && x.shape == y.shape && x.axis == y.axis &&
              x.int_value == y.int_value && x.iota_expr == y.iota_expr && x.name == y.name &&
              x.operands.size() == y.operands.size() &&
              std::memcmp(&x.value, &y.value, sizeof(double)) == 0;  // -0 and NaNs too
  for (size_t k = 0; same && k < x.operands.size(); ++k)
    same = x.operands[k].view == y.operands[k].view &&
           same_value(x.operands[k].node, y.operands[k].node);
  same_value_memo_[{a, b}] = same;
  return same;
}

void Emitter::finish_prefetches(Loop& loop) {
  const std::string tag = kPrefetchTag;
  std::vector<std::string> kept;
  for (std::string& line : loop.row.lines) {
    const size_t at = line.find(tag);
    if (at == std::string::npos)
      kept.push_back(std::move(line));
    else if (line.substr(at + tag.size()) == last_prefetch_)
      kept.push_back(line.substr(0, at));
  }
  loop.row.lines = std::move(kept);
}

void Emitter::finish_row_caches(Loop& loop) {
  std::set<std::string> used;
  std::set<NodeId> replaced;
  std::vector<const ExprNode*> idx;
  for (const Expr& e : loop.idx) idx.push_back(e.node());
  for (const RowCache& rc : row_caches_) {
    for (const auto& [key, var] : loop.element.values) {
      if (key.second != idx || replaced.count(key.first) || !same_value(key.first, rc.node))
        continue;
      // The element loop's definition of the value becomes a read of the
      // cache; what computed it is dead code the compiler drops.
      const std::string def = "const " + rc.type + " " + var + " = ";
      for (std::string& line : loop.element.lines) {
        if (line.rfind(def, 0) != 0) continue;
        line = def + rc.buffer + "[_i];";
        used.insert(rc.buffer);
        replaced.insert(key.first);
        break;
      }
    }
  }
  // Drop the lines of unused caches (and those that stand in for a cache when
  // it is unused); strip the tags of the others.
  const std::string tag = kCacheTag, no_tag = kNoCacheTag;
  for (Scope* scope : {&loop.root, &loop.row}) {
    std::vector<std::string> kept;
    for (std::string& line : scope->lines) {
      const size_t at = line.find(tag), no_at = line.find(no_tag);
      if (at == std::string::npos && no_at == std::string::npos) {
        kept.push_back(std::move(line));
      } else if (at != std::string::npos && used.count(line.substr(at + tag.size()))) {
        kept.push_back(line.substr(0, at));
      } else if (no_at != std::string::npos && !used.count(line.substr(no_at + no_tag.size()))) {
        kept.push_back(line.substr(0, no_at));
      }
    }
    scope->lines = std::move(kept);
  }
  row_caches_.clear();
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
    if (!out.shape.empty()) main_loop_ = &loop;
    store_outputs(loop.idx, &loop.element);
    finish_row_caches(loop);
    finish_prefetches(loop);
    emit_pairs(loop);
    emit_blocks(loop);
    main_loop_ = nullptr;
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
  j.library_calls = library_calls;
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

std::string entry_prologue(const std::string& symbol, const CpuKernel& k) {
  std::string code = "extern \"C\" int32_t " + symbol +
                     "(void* const* __restrict _buf, const int64_t* __restrict _dims, "
                     "int64_t _begin, int64_t _end, int64_t* __restrict _err) {\n"
                     "  (void)_err; (void)_dims;\n";
  for (size_t i = 0; i < k.dims.size(); ++i)
    code += "  const int64_t _d" + std::to_string(i) + " = _dims[" + std::to_string(i) + "];\n";
  return code;
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
