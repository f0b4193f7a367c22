#include "luminal/compiler/serialize.hpp"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <unordered_map>
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

uint64_t hash64(std::string_view bytes, uint64_t seed) {
  // Eight bytes per step (FNV-1a's byte loop is the bottleneck of a cache hit
  // on a large graph); each word is mixed with a multiply and a fold.
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = seed ^ (bytes.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  return h ^ (h >> 32);
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

void put_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
  out += ' ';
}

// Expressions are written once each, in a table before the nodes (children
// before parents), and referred to by index: a model repeats the same few
// shapes and strides thousands of times, so this keeps the text small and
// reading it cheap.
class ExprTable {
public:
  /// The index of `e` in the table, adding it (and its children) if new.
  size_t index(const Expr& e) {
    if (auto it = index_.find(e.node()); it != index_.end()) return it->second;
    std::string line;
    switch (e.kind()) {
      case ExprKind::Const:
        line = '#' + std::to_string(e.value());
        break;
      case ExprKind::Var:
        line = '$' + e.name();
        break;
      default:
        line = '(' + std::to_string(static_cast<int>(e.kind()));
        for (const Expr& c : e.children()) line += ' ' + std::to_string(index(c));
    }
    text_ += line;
    text_ += '\n';
    const size_t i = index_.size();
    index_.emplace(e.node(), i);
    return i;
  }
  size_t size() const { return index_.size(); }
  const std::string& text() const { return text_; }

private:
  std::unordered_map<const ExprNode*, size_t> index_;
  std::string text_;
};

void put_expr(std::string& out, ExprTable& table, const Expr& e) {
  put_int(out, static_cast<int64_t>(table.index(e)));
}

void put_shape(std::string& out, ExprTable& table, const std::vector<Expr>& shape) {
  put_int(out, static_cast<int64_t>(shape.size()));
  for (const Expr& e : shape) put_expr(out, table, e);
}

void put_view(std::string& out, ExprTable& table, const View& v) {
  put_shape(out, table, v.shape());
  for (const Expr& e : v.axis_exprs()) put_expr(out, table, e);
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
  /// The expression table: one expression per line, children by earlier index.
  void expr_table() {
    if (token() != "exprs") fail("missing expression table");
    const int64_t n = integer();
    if (n < 0 || n > static_cast<int64_t>(text_.size())) fail("bad expression count");
    exprs_.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      std::string_view t = token();
      if (t[0] == '#') {
        exprs_.push_back(Expr::constant(parse_int(t.substr(1))));
      } else if (t[0] == '$') {
        std::string_view name = t.substr(1);
        if (name.empty()) fail("empty variable name");
        exprs_.push_back(name[0] == '_' ? Expr::internal_var(name) : Expr::var(name));
      } else if (t[0] == '(') {
        const int64_t k = parse_int(t.substr(1));
        if (k <= static_cast<int64_t>(ExprKind::Var) || k > static_cast<int64_t>(ExprKind::Ne))
          fail("bad expression kind " + std::to_string(k));
        Expr a = expr();
        Expr b = expr();
        exprs_.push_back(Expr::make(static_cast<ExprKind>(k), {a, b}));
      } else {
        fail("bad expression token \"" + std::string(t) + "\"");
      }
    }
  }
  /// A reference into the expression table (only to entries already read).
  Expr expr() {
    const int64_t i = integer();
    if (i < 0 || i >= static_cast<int64_t>(exprs_.size())) fail("expression index out of range");
    return exprs_[static_cast<size_t>(i)];
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
  std::vector<Expr> exprs_;
};

}  // namespace

std::string serialize_graph(const Graph& graph) {
  ExprTable table;
  std::string out;
  for (const Node& n : graph.nodes()) {
    put_int(out, static_cast<int>(n.kind));
    put_int(out, static_cast<int>(n.dtype));
    put_shape(out, table, n.shape);
    put_int(out, static_cast<int64_t>(n.operands.size()));
    for (const Operand& o : n.operands) {
      put_int(out, o.node);
      put_view(out, table, o.view);
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
        out.append(buf, r.ptr);
        out += ' ';
        put_int(out, n.int_value);
        break;
      }
      case OpKind::Iota:
        put_expr(out, table, n.iota_expr);
        break;
      case OpKind::SumReduce:
      case OpKind::MaxReduce:
        put_int(out, n.axis);
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
  return "luminal-graph 3 " + std::to_string(graph.size()) + "\nexprs " +
         std::to_string(table.size()) + '\n' + table.text() + out;
}

std::unique_ptr<Graph> deserialize_graph(std::string_view text) {
  Reader r(text);
  if (r.token() != "luminal-graph") r.fail("missing header");
  if (r.integer() != 3) r.fail("unsupported graph format version");
  const int64_t count = r.integer();
  if (count < 0) r.fail("bad node count");
  r.expr_table();
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
