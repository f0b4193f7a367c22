#include "luminal/frontend/linalg.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "luminal/error.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/promotion.hpp"

namespace luminal {

namespace {

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  if (a.graph() != b.graph())
    throw Error(std::string(op) + ": operands " + a.describe() + " and " + b.describe() +
                " belong to different graphs");
  if (a.dtype() != b.dtype())
    throw DTypeError(std::string(op) + ": expected operands of the same dtype, got " +
                     a.describe() + " and " + b.describe());
  if (a.dtype() == DType::Bool || !is_compute_type(a.dtype()))
    throw DTypeError(std::string(op) + ": not defined for " + a.describe() + " and " +
                     b.describe());
}

void require_rank(const char* op, const Tensor& t, size_t rank, const Tensor& other) {
  if (t.rank() != rank)
    throw ShapeError(std::string(op) + ": expected a " + std::to_string(rank) + "-D tensor, got " +
                     t.describe() + " (with " + other.describe() + ")");
}

// beta * input + alpha * product, with torch's rule that beta == 0 ignores input.
Tensor add_scaled(const char* op, const Tensor& input, const Tensor& prod, double beta,
                  double alpha) {
  if (input.graph() != prod.graph() || input.dtype() != prod.dtype())
    throw DTypeError(std::string(op) + ": input " + input.describe() +
                     " must have the dtype of the product " + prod.describe());
  broadcast_shapes(input.shape(), prod.shape(), op);  // validates
  if (input.rank() > prod.rank())
    throw ShapeError(std::string(op) + ": input " + input.describe() +
                     " does not broadcast to the product " + prod.describe());
  Tensor p = alpha == 1.0 ? prod : prod * alpha;
  if (beta == 0.0) return p;
  Tensor in = input.expand(prod.shape());
  return (beta == 1.0 ? in : in * beta) + p;
}

// ---- general contraction (einsum, tensordot, inner) -----------------------------

struct Labeled {
  Tensor t;
  std::vector<int> labels;  // one per axis, no repeats
};

// Arrange `x` to the axis order `order` (labels it lacks become size-1 axes).
Tensor align(const Labeled& x, const std::vector<int>& order) {
  std::vector<int> perm;
  for (int l : order) {
    auto it = std::find(x.labels.begin(), x.labels.end(), l);
    if (it != x.labels.end()) perm.push_back(static_cast<int>(it - x.labels.begin()));
  }
  Tensor t = perm.empty() ? x.t : x.t.permute(perm);
  for (size_t k = 0; k < order.size(); ++k)
    if (std::find(x.labels.begin(), x.labels.end(), order[k]) == x.labels.end())
      t = t.unsqueeze(static_cast<int>(k));
  return t;
}

// Sum the axes of `x` whose labels are not in `keep`.
Labeled sum_unneeded(Labeled x, const std::vector<int>& keep) {
  for (size_t k = x.labels.size(); k-- > 0;) {
    if (std::find(keep.begin(), keep.end(), x.labels[k]) != keep.end()) continue;
    x.t = x.t.sum_reduce(static_cast<int>(k));
    x.labels.erase(x.labels.begin() + static_cast<long>(k));
  }
  return x;
}

// Contract operands left to right into `output` labels. Each pairwise step
// multiplies the operands aligned to [kept labels..., summed labels...] and
// reduces the summed labels from the last axis backwards: the canonical
// broadcast-Mul + SumReduce(last) form of matmul.
Tensor contract(std::vector<Labeled> ops, const std::vector<int>& output) {
  auto needed_after = [&](size_t i) {
    std::vector<int> need = output;
    for (size_t j = i + 1; j < ops.size(); ++j)
      need.insert(need.end(), ops[j].labels.begin(), ops[j].labels.end());
    return need;
  };
  // Labels used by one operand only (and not the output) are summed right away.
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<int> need = output;
    for (size_t j = 0; j < ops.size(); ++j)
      if (j != i) need.insert(need.end(), ops[j].labels.begin(), ops[j].labels.end());
    ops[i] = sum_unneeded(ops[i], need);
  }
  Labeled cur = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    const std::vector<int> need = needed_after(i);
    const bool last = i + 1 == ops.size();
    std::vector<int> kept, summed;
    auto add = [&](int l) {
      bool keep = std::find(need.begin(), need.end(), l) != need.end();
      auto& v = keep ? kept : summed;
      if (std::find(v.begin(), v.end(), l) == v.end()) v.push_back(l);
    };
    if (last) {
      kept = output;
    } else {
      for (int l : cur.labels) add(l);
      for (int l : ops[i].labels) add(l);
    }
    if (last) {
      for (int l : cur.labels) add(l);
      for (int l : ops[i].labels) add(l);
    }
    std::vector<int> order = kept;
    order.insert(order.end(), summed.begin(), summed.end());
    Tensor prod = align(cur, order) * align(ops[i], order);
    for (size_t k = 0; k < summed.size(); ++k) prod = prod.sum_reduce(-1);
    cur = {prod, kept};
  }
  cur = sum_unneeded(cur, output);
  return align(cur, output);
}

// einsum label ids: letters 0..51 (A-Z, a-z: torch's order), ellipsis dims 52 + k.
int letter_label(char c) {
  return std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : 26 + (c - 'a');
}

}  // namespace

// ---- matmul family ---------------------------------------------------------------

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_operands("matmul", a, b);
  if (a.rank() == 0 || b.rank() == 0)
    throw ShapeError("matmul: both arguments need at least 1 dimension, got " + a.describe() +
                     " and " + b.describe());
  const Tensor a2 = a.rank() == 1 ? a.unsqueeze(0) : a;  // [.., M, K]
  const Tensor b2 = b.rank() == 1 ? b.unsqueeze(1) : b;  // [.., K, N]
  const Expr k = a2.shape().back();
  if (!provably_equal(k, b2.shape()[b2.rank() - 2]))
    throw ShapeError("matmul: shapes " + a.describe() + " and " + b.describe() +
                     " cannot be multiplied (" + k.to_string() + " vs " +
                     b2.shape()[b2.rank() - 2].to_string() + ")");
  const std::vector<Expr> batch_a(a2.shape().begin(), a2.shape().end() - 2);
  const std::vector<Expr> batch_b(b2.shape().begin(), b2.shape().end() - 2);
  std::vector<Expr> shape = broadcast_shapes(batch_a, batch_b, "matmul");
  const Expr m = a2.shape()[a2.rank() - 2];
  const Expr n = b2.shape().back();
  shape.insert(shape.end(), {m, n, k});
  // [.., M, 1, K] * [.., 1, N, K] -> SumReduce(last): the canonical GEMM form.
  Tensor out = (a2.unsqueeze(-2).expand(shape) * b2.transpose(-2, -1).unsqueeze(-3).expand(shape))
                   .sum_reduce(-1);
  if (a.rank() == 1) out = out.squeeze(-2);
  if (b.rank() == 1) out = out.squeeze(-1);
  return out;
}

namespace {

// matmul restricted to operand ranks (ra, rb), as torch's mm / bmm / mv / dot.
Tensor ranked_matmul(const char* op, const Tensor& a, const Tensor& b, size_t ra, size_t rb) {
  check_operands(op, a, b);
  require_rank(op, a, ra, b);
  require_rank(op, b, rb, a);
  if (ra == 3 && !provably_equal(a.shape()[0], b.shape()[0]))
    throw ShapeError(std::string(op) + ": batch sizes differ: " + a.describe() + " and " +
                     b.describe());
  return matmul(a, b);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  return ranked_matmul("mm", a, b, 2, 2);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  return ranked_matmul("bmm", a, b, 3, 3);
}

Tensor mv(const Tensor& a, const Tensor& v) {
  return ranked_matmul("mv", a, v, 2, 1);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  return ranked_matmul("dot", a, b, 1, 1);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  check_operands("inner", a, b);
  if (a.rank() == 0 || b.rank() == 0) return a * b;
  return tensordot(a, b, {-1}, {-1});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  require_rank("outer", a, 1, b);
  require_rank("outer", b, 1, a);
  // torch.outer is a broadcast multiply, so it promotes (unlike matmul).
  auto [x, y] = promote2(a.unsqueeze(1), b.unsqueeze(0), "outer");
  return x * y;
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  check_operands("linear", x, weight);
  if (weight.rank() != 2 && weight.rank() != 1)
    throw ShapeError("linear: weight must be [out_features, in_features], got " +
                     weight.describe() + " for input " + x.describe());
  Tensor out = matmul(x, t(weight));
  if (!bias) return out;
  check_operands("linear", out, *bias);
  broadcast_shapes(out.shape(), bias->shape(), "linear");
  if (bias->rank() > out.rank())
    throw ShapeError("linear: bias " + bias->describe() + " does not broadcast to " +
                     out.describe());
  return out + *bias;
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const std::optional<Tensor>& bias) {
  check_operands("bilinear", x1, weight);
  check_operands("bilinear", x2, weight);
  require_rank("bilinear", weight, 3, x1);
  Tensor out = einsum("...i,oij,...j->...o", {x1, weight, x2});
  if (!bias) return out;
  check_operands("bilinear", out, *bias);
  return out + *bias;
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
  return add_scaled("addmm", input, mm(m1, m2), beta, alpha);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  return add_scaled("addmv", input, mv(mat, vec), beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  return add_scaled("baddbmm", input, bmm(b1, b2), beta, alpha);
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  check_operands("addbmm", b1, b2);
  require_rank("addbmm", b1, 3, b2);
  require_rank("addbmm", b2, 3, b1);
  // Sum over the batch and K together: [M, N, B, K] reduced over K then B.
  return add_scaled("addbmm", input, einsum("bmk,bkn->mn", {b1, b2}), beta, alpha);
}

// ---- einsum / tensordot -------------------------------------------------------------

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  auto fail = [&](const std::string& why) -> ShapeError {
    std::string shapes;
    for (size_t i = 0; i < operands.size(); ++i) shapes += (i ? ", " : "") + operands[i].describe();
    return ShapeError("einsum: equation \"" + equation + "\" with operands " + shapes + ": " + why);
  };
  if (operands.empty()) throw fail("expects at least one operand");
  for (const Tensor& t : operands) check_operands("einsum", operands[0], t);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  // Split the input subscripts.
  std::vector<std::string> subs(1);
  for (char c : lhs) {
    if (c == ',')
      subs.emplace_back();
    else
      subs.back() += c;
  }
  if (subs.size() != operands.size())
    throw fail(std::to_string(subs.size()) + " subscripts for " + std::to_string(operands.size()) +
               " operands");
  // Parse one subscript string into label ids; `ell` = number of ellipsis dims.
  int max_ell = 0;
  auto parse = [&](const std::string& s, int ell, bool& has_ell) {
    std::vector<int> labels;
    has_ell = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 3, "...") == 0) {
        if (has_ell) throw fail("more than one ellipsis in \"" + s + "\"");
        has_ell = true;
        for (int k = 0; k < ell; ++k) labels.push_back(52 + (max_ell - ell) + k);
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
        labels.push_back(letter_label(s[i]));
      } else {
        throw fail(std::string("invalid subscript character '") + s[i] + "'");
      }
    }
    return labels;
  };
  std::vector<int> ells(operands.size(), 0);
  for (size_t i = 0; i < subs.size(); ++i) {
    int letters = 0;
    for (char c : subs[i]) letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
    const bool has = subs[i].find("...") != std::string::npos;
    const int ell = static_cast<int>(operands[i].rank()) - letters;
    if ((!has && ell != 0) || ell < 0)
      throw fail("subscript \"" + subs[i] + "\" does not match " + operands[i].describe());
    ells[i] = has ? ell : 0;
    max_ell = std::max(max_ell, ells[i]);
  }
  std::vector<Labeled> ops;
  std::map<int, int> count;
  bool any_ell = false;
  for (size_t i = 0; i < subs.size(); ++i) {
    bool has_ell = false;
    Labeled op{operands[i], parse(subs[i], ells[i], has_ell)};
    any_ell = any_ell || has_ell;
    for (int l : op.labels) ++count[l];  // before diagonals: "ii" is not implicit output
    // A label repeated inside one operand: take that diagonal (moved to the end).
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < op.labels.size() && !again; ++p)
        for (size_t q = p + 1; q < op.labels.size() && !again; ++q)
          if (op.labels[p] == op.labels[q]) {
            if (!provably_equal(op.t.shape()[p], op.t.shape()[q]))
              throw fail("repeated subscript with different sizes in operand " + std::to_string(i));
            const int l = op.labels[p];
            op.t = diagonal(op.t, 0, static_cast<int>(p), static_cast<int>(q));
            op.labels.erase(op.labels.begin() + static_cast<long>(q));
            op.labels.erase(op.labels.begin() + static_cast<long>(p));
            op.labels.push_back(l);
            again = true;
          }
    }
    ops.push_back(op);
  }
  // Sizes of equal labels must agree (or be 1: broadcast).
  std::map<int, Expr> size;
  for (const Labeled& op : ops)
    for (size_t k = 0; k < op.labels.size(); ++k) {
      const Expr& s = op.t.shape()[k];
      auto [it, fresh] = size.emplace(op.labels[k], s);
      if (fresh || provably_equal(it->second, s) || s.as_const() == 1) continue;
      if (it->second.as_const() == 1)
        it->second = s;
      else
        throw fail("sizes " + it->second.to_string() + " and " + s.to_string() +
                   " of one subscript differ");
    }
  std::vector<int> output;
  if (arrow == std::string::npos) {
    for (int k = 0; k < max_ell; ++k) output.push_back(52 + k);
    for (auto [l, c] : count)
      if (l < 52 && c == 1) output.push_back(l);
  } else {
    bool has_ell = false;
    output = parse(eq.substr(arrow + 2), max_ell, has_ell);
    for (size_t i = 0; i < output.size(); ++i) {
      if (!count.count(output[i]) && output[i] < 52)
        throw fail("output subscript does not appear in the inputs");
      if (std::count(output.begin(), output.end(), output[i]) > 1)
        throw fail("output subscript appears more than once");
    }
    if (any_ell && !has_ell && max_ell > 0)
      throw fail("the output must contain \"...\" when the inputs do");
  }
  // Broadcast size-1 operand axes of output labels to the label's size.
  Tensor out = contract(ops, output);
  std::vector<Expr> shape;
  for (int l : output) shape.push_back(size.count(l) ? size[l] : Expr(1));
  return out.expand(shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int dims) {
  if (dims < 0 || static_cast<size_t>(dims) > a.rank() || static_cast<size_t>(dims) > b.rank())
    throw ShapeError("tensordot: dims " + std::to_string(dims) + " is invalid for " + a.describe() +
                     " and " + b.describe());
  std::vector<int> da, db;
  for (int i = 0; i < dims; ++i) {
    da.push_back(static_cast<int>(a.rank()) - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int>& dims_a,
                 const std::vector<int>& dims_b) {
  check_operands("tensordot", a, b);
  if (dims_a.size() != dims_b.size())
    throw ShapeError("tensordot: dims lists have different lengths for " + a.describe() + " and " +
                     b.describe());
  auto norm = [&](int d, const Tensor& t) {
    const auto r = static_cast<int>(t.rank());
    if (d < -r || d >= r)
      throw ShapeError("tensordot: dim " + std::to_string(d) + " is out of range for " +
                       t.describe());
    return d < 0 ? d + r : d;
  };
  // Labels: a's axes 0..ra-1, b's free axes ra.., contracted b axes share a's label.
  const auto ra = static_cast<int>(a.rank());
  Labeled la{a, {}}, lb{b, {}};
  for (int k = 0; k < ra; ++k) la.labels.push_back(k);
  for (size_t k = 0; k < b.rank(); ++k) lb.labels.push_back(ra + static_cast<int>(k));
  std::vector<int> contracted;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int x = norm(dims_a[i], a), y = norm(dims_b[i], b);
    if (!provably_equal(a.shape()[x], b.shape()[y]))
      throw ShapeError("tensordot: contracted dims " + std::to_string(dims_a[i]) + " and " +
                       std::to_string(dims_b[i]) + " differ in size for " + a.describe() + " and " +
                       b.describe());
    lb.labels[y] = x;
    contracted.push_back(x);
  }
  std::vector<int> output;
  for (int l : la.labels)
    if (std::find(contracted.begin(), contracted.end(), l) == contracted.end()) output.push_back(l);
  for (int l : lb.labels)
    if (l >= ra) output.push_back(l);
  return contract({la, lb}, output);
}

}  // namespace luminal
