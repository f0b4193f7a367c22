#include "luminal/compiler/serialize.hpp"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <vector>

#include "luminal/core/tensor.hpp"
#include "luminal/error.hpp"

namespace luminal::compiler {

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void put_hex_string(std::string& out, std::string_view s) {
  out += 'x';  // never empty, so the tokenizer always sees a token
  for (char c : s) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  out += ' ';
}

void put_expr(std::string& out, const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Const:
      out += '#' + std::to_string(e.value()) + ' ';
      return;
    case ExprKind::Var:
      out += '$' + e.name() + ' ';
      return;
    default:
      out += '(' + std::to_string(static_cast<int>(e.kind())) + ' ';
      for (const Expr& c : e.children()) put_expr(out, c);
  }
}

void put_shape(std::string& out, const std::vector<Expr>& shape) {
  out += std::to_string(shape.size()) + ' ';
  for (const Expr& e : shape) put_expr(out, e);
}

void put_view(std::string& out, const View& v) {
  put_shape(out, v.shape());
  for (const Expr& e : v.axis_exprs()) put_expr(out, e);
}

/// Whitespace tokenizer over the serialised text with error reporting.
class Reader {
public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool done() {
    skip();
    return pos_ >= text_.size();
  }
  std::string_view token() {
    skip();
    if (pos_ >= text_.size()) fail("unexpected end of input");
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\n') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  int64_t integer() { return parse_int(token()); }
  uint64_t hex_u64() {
    std::string_view t = token();
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 16);
    if (ec != std::errc() || p != t.data() + t.size())
      fail("bad hex number \"" + std::string(t) + "\"");
    return v;
  }
  std::string hex_string() {
    std::string_view t = token();
    if (t.empty() || t[0] != 'x' || t.size() % 2 == 0) fail("bad string token");
    std::string s;
    for (size_t i = 1; i < t.size(); i += 2)
      s += static_cast<char>((nibble(t[i]) << 4) | nibble(t[i + 1]));
    return s;
  }
  Expr expr(int depth = 0) {
    if (depth > 10000) fail("expression nested too deeply");
    std::string_view t = token();
    if (t[0] == '#') return Expr::constant(parse_int(t.substr(1)));
    if (t[0] == '$') {
      std::string_view name = t.substr(1);
      if (name.empty()) fail("empty variable name");
      return name[0] == '_' ? Expr::internal_var(name) : Expr::var(name);
    }
    if (t[0] == '(') {
      const int64_t k = parse_int(t.substr(1));
      if (k <= static_cast<int64_t>(ExprKind::Var) || k > static_cast<int64_t>(ExprKind::Ne))
        fail("bad expression kind " + std::to_string(k));
      Expr a = expr(depth + 1);
      Expr b = expr(depth + 1);
      return Expr::make(static_cast<ExprKind>(k), {a, b});
    }
    fail("bad expression token \"" + std::string(t) + "\"");
  }
  std::vector<Expr> shape() {
    const int64_t rank = integer();
    if (rank < 0 || rank > 64) fail("bad rank");
    std::vector<Expr> s;
    for (int64_t i = 0; i < rank; ++i) s.push_back(expr());
    return s;
  }
  View view() {
    std::vector<Expr> sizes = shape();
    std::vector<Expr> axes;
    for (size_t i = 0; i < sizes.size(); ++i) axes.push_back(expr());
    return View::from_axes(std::move(sizes), std::move(axes));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("deserialize_graph: " + what + " at byte " + std::to_string(pos_));
  }

private:
  void skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  int64_t parse_int(std::string_view t) const {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || t.empty())
      fail("bad integer \"" + std::string(t) + "\"");
    return v;
  }
  int nibble(char c) const {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    fail("bad hex digit");
  }
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string serialize_graph(const Graph& graph) {
  std::string out;
  out += "luminal-graph 2 " + std::to_string(graph.size()) + '\n';
  for (const Node& n : graph.nodes()) {
    out += std::to_string(static_cast<int>(n.kind)) + ' ' +
           std::to_string(static_cast<int>(n.dtype)) + ' ';
    put_shape(out, n.shape);
    out += std::to_string(n.operands.size()) + ' ';
    for (const Operand& o : n.operands) {
      out += std::to_string(o.node) + ' ';
      put_view(out, o.view);
    }
    switch (n.kind) {
      case OpKind::Input:
        put_hex_string(out, n.name);
        out += n.persistent ? "1 " : "0 ";
        break;
      case OpKind::Output:
        put_hex_string(out, n.name);
        break;
      case OpKind::Constant: {
        char buf[32];
        auto r = std::to_chars(buf, buf + sizeof buf, std::bit_cast<uint64_t>(n.value), 16);
        out += std::string(buf, r.ptr) + ' ' + std::to_string(n.int_value) + ' ';
        break;
      }
      case OpKind::Iota:
        put_expr(out, n.iota_expr);
        break;
      case OpKind::SumReduce:
      case OpKind::MaxReduce:
        out += std::to_string(n.axis) + ' ';
        break;
      default:
        break;
    }
    out.back() = '\n';
  }
  // Kernel groups: "<count>" then per group "<hex op> <n> <node ids>".
  out += std::to_string(graph.kernel_groups().size()) + '\n';
  for (const KernelGroup& grp : graph.kernel_groups()) {
    put_hex_string(out, grp.op);
    out += std::to_string(grp.nodes.size());
    for (NodeId id : grp.nodes) out += ' ' + std::to_string(id);
    out += '\n';
  }
  return out;
}

std::unique_ptr<Graph> deserialize_graph(std::string_view text) {
  Reader r(text);
  if (r.token() != "luminal-graph") r.fail("missing header");
  if (r.integer() != 2) r.fail("unsupported graph format version");
  const int64_t count = r.integer();
  if (count < 0) r.fail("bad node count");
  auto g = std::make_unique<Graph>();
  for (int64_t id = 0; id < count; ++id) {
    const int64_t kind_num = r.integer();
    const int64_t dtype_num = r.integer();
    if (kind_num < 0 || kind_num > static_cast<int64_t>(OpKind::MaxReduce)) r.fail("bad op kind");
    if (dtype_num < 0 || dtype_num > static_cast<int64_t>(DType::Q4_1)) r.fail("bad dtype");
    const auto kind = static_cast<OpKind>(kind_num);
    const auto dtype = static_cast<DType>(dtype_num);
    const std::vector<Expr> shape = r.shape();
    const int64_t nops = r.integer();
    if (nops != op_arity(kind)) r.fail("wrong operand count for " + std::string(op_name(kind)));
    std::vector<Tensor> ops;
    for (int64_t i = 0; i < nops; ++i) {
      const int64_t producer = r.integer();
      if (producer < 0 || producer >= id) r.fail("operand refers to a later node");
      View v = r.view();
      ops.emplace_back(g.get(), static_cast<NodeId>(producer), std::move(v),
                       g->node(static_cast<NodeId>(producer)).dtype);
    }
    switch (kind) {
      case OpKind::Input: {
        std::string name = r.hex_string();
        const bool persistent = r.integer() != 0;
        g->input(name, shape, dtype, persistent);
        break;
      }
      case OpKind::Output:
        g->output(r.hex_string(), ops[0]);
        break;
      case OpKind::Constant: {
        const double value = std::bit_cast<double>(r.hex_u64());
        const int64_t int_value = r.integer();
        if (is_float(dtype) || dtype == DType::Bool)
          g->constant(value, dtype);
        else
          g->constant_int(int_value, dtype);
        break;
      }
      case OpKind::Iota: {
        if (shape.size() != 1) r.fail("Iota must have rank 1");
        g->iota(r.expr(), shape[0], dtype);
        break;
      }
      case OpKind::Cast:
        g->cast(ops[0], dtype);
        break;
      case OpKind::Gather:
        g->gather(ops[0], ops[1]);
        break;
      case OpKind::Scatter:
        g->scatter(ops[0], ops[1], ops[2]);
        break;
      case OpKind::SumReduce:
      case OpKind::MaxReduce:
        g->reduce(kind, ops[0], static_cast<int>(r.integer()));
        break;
      default:
        if (is_unary(kind))
          g->unary(kind, ops[0]);
        else if (is_binary(kind))
          g->binary(kind, ops[0], ops[1]);
        else
          r.fail("unknown op");
    }
    const Node& made = g->node(static_cast<NodeId>(id));
    if (made.dtype != dtype || made.shape != shape)
      r.fail("node %" + std::to_string(id) + " rebuilt with a different shape or dtype");
  }
  const int64_t groups = r.integer();
  if (groups < 0 || groups > count) r.fail("bad kernel group count");
  for (int64_t i = 0; i < groups; ++i) {
    KernelGroup grp;
    grp.op = r.hex_string();
    const int64_t n = r.integer();
    if (n <= 0 || n > count) r.fail("bad kernel group size");
    for (int64_t k = 0; k < n; ++k) {
      const int64_t id = r.integer();
      if (id < 0 || id >= count) r.fail("kernel group member out of range");
      grp.nodes.push_back(static_cast<NodeId>(id));
    }
    try {
      g->add_kernel_group(std::move(grp));
    } catch (const Error& e) {
      r.fail(e.what());
    }
  }
  if (!r.done()) r.fail("trailing data");
  return g;
}

}  // namespace luminal::compiler
