#include "luminal/frontend/promotion.hpp"

#include <cmath>
#include <cstdio>

#include "luminal/error.hpp"

namespace luminal {

namespace {

void require_promotable(DType d, const char* op) {
  if (!is_compute_type(d))
    throw DTypeError(std::string(op) + ": " + to_string(d) +
                     " is a storage type; convert it with to() first");
}

// Width rank inside the integer category (u8 and i8 share a rank).
int int_rank(DType d) {
  switch (d) {
    case DType::I8:
    case DType::U8:
      return 1;
    case DType::I32:
      return 4;
    default:
      return 8;  // I64
  }
}

// torch's combine_categories: `higher` is the dtype of a stronger tier, `lower`
// of a weaker one. The weaker tier only matters when it raises the category.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_float(*higher)) return higher;
  if (*higher == DType::Bool || is_float(*lower)) return promote_types(*higher, *lower);
  return higher;
}

void fold(std::optional<DType>& acc, DType d) {
  acc = acc ? promote_types(*acc, d) : d;
}

}  // namespace

DTypeCategory dtype_category(DType dtype) {
  require_promotable(dtype, "promotion");
  if (dtype == DType::Bool) return DTypeCategory::Bool;
  return is_float(dtype) ? DTypeCategory::Floating : DTypeCategory::Integer;
}

DType promote_types(DType a, DType b) {
  DTypeCategory ca = dtype_category(a), cb = dtype_category(b);
  if (a == b) return a;
  if (ca != cb) return ca > cb ? a : b;
  if (ca == DTypeCategory::Floating) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    return DType::F32;  // f16 + bf16, or either with f32
  }
  // Integers: the wider type; u8 with i8 needs i16, which luminal lacks -> i32.
  if (int_rank(a) == int_rank(b)) return DType::I32;
  return int_rank(a) > int_rank(b) ? a : b;
}

DType to_float_dtype(DType d) {
  return is_float(d) ? d : kDefaultFloat;
}

DType compute_dtype(DType d) {
  return d == DType::F64 ? DType::F64 : DType::F32;
}

DType precise_dtype(DType) {
  return DType::F64;
}

int64_t Scalar::to_int() const {
  return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_;
}

DType Scalar::default_dtype() const {
  switch (kind_) {
    case Kind::Bool:
      return DType::Bool;
    case Kind::Int:
      return kDefaultInt;
    default:
      return kDefaultFloat;
  }
}

DTypeCategory Scalar::category() const {
  switch (kind_) {
    case Kind::Bool:
      return DTypeCategory::Bool;
    case Kind::Int:
      return DTypeCategory::Integer;
    default:
      return DTypeCategory::Floating;
  }
}

bool Scalar::is_integral_value() const {
  return kind_ != Kind::Float || (std::isfinite(d_) && d_ == std::trunc(d_));
}

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool:
      return i_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(i_);
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d_);
      return buf;
    }
  }
}

const Tensor& TensorOrScalar::tensor() const {
  if (!is_tensor()) throw Error("TensorOrScalar: holds the scalar " + scalar().to_string());
  return std::get<Tensor>(v_);
}

const Scalar& TensorOrScalar::scalar() const {
  if (is_tensor()) throw Error("TensorOrScalar: holds the tensor " + tensor().describe());
  return std::get<Scalar>(v_);
}

Graph* TensorOrScalar::graph() const {
  return is_tensor() ? tensor().graph() : nullptr;
}

std::vector<Expr> TensorOrScalar::shape() const {
  return is_tensor() ? tensor().shape() : std::vector<Expr>{};
}

std::string TensorOrScalar::describe() const {
  return is_tensor() ? tensor().describe() : "scalar " + scalar().to_string();
}

void require_compute_dtype(const Tensor& x, const char* op) {
  if (!is_compute_type(x.dtype()))
    throw DTypeError(std::string(op) + ": " + x.describe() +
                     " is a storage type; convert it with to() first");
}

void require_float_dtype(const Tensor& x, const char* op) {
  require_compute_dtype(x, op);
  if (!is_float(x.dtype()))
    throw DTypeError(std::string(op) + ": expects a float tensor, got " + x.describe());
}

DType result_type(const std::vector<TensorOrScalar>& operands) {
  if (operands.empty()) throw Error("result_type: needs at least one operand");
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const TensorOrScalar& v : operands) {
    if (v.is_scalar()) {
      fold(wrapped_result, v.scalar().default_dtype());
    } else {
      DType d = v.tensor().dtype();
      require_promotable(d, "result_type");
      fold(v.tensor().rank() == 0 ? zero_result : dim_result, d);
    }
  }
  return *combine_categories(dim_result, combine_categories(zero_result, wrapped_result));
}

DType result_type(const TensorOrScalar& a, const TensorOrScalar& b) {
  return result_type(std::vector<TensorOrScalar>{a, b});
}

Tensor to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return x.cast(dtype);
}

Tensor scalar_tensor(Graph& graph, const Scalar& s, DType dtype) {
  if (s.is_float()) {
    if (is_float(dtype)) return graph.constant(s.to_double(), dtype);
    if (dtype == DType::Bool) return graph.constant_int(s.to_double() != 0.0 ? 1 : 0, dtype);
    // float -> int truncates (Cast semantics).
    return graph.constant(s.to_double(), dtype);
  }
  if (is_float(dtype)) return graph.constant(static_cast<double>(s.to_int()), dtype);
  return graph.constant_int(s.to_int(), dtype);
}

Tensor expr_tensor(Graph& graph, const Expr& value, DType dtype) {
  if (auto c = value.as_const()) return scalar_tensor(graph, Scalar(*c), dtype);
  Tensor t = graph.iota(value, 1, DType::I64).reshape({});
  return to(t, dtype);
}

Tensor as_tensor(const TensorOrScalar& v, DType dtype, Graph& graph) {
  if (v.is_tensor()) return to(v.tensor(), dtype);
  return scalar_tensor(graph, v.scalar(), dtype);
}

Graph& common_graph(const std::vector<TensorOrScalar>& operands, const char* op) {
  Graph* g = nullptr;
  for (const TensorOrScalar& v : operands) {
    Graph* vg = v.graph();
    if (!vg) continue;
    if (g && vg != g)
      throw Error(std::string(op) + ": operands belong to different graphs (" +
                  operands.front().describe() + ", " + v.describe() + ")");
    g = vg;
  }
  if (!g) throw Error(std::string(op) + ": needs at least one tensor operand (all are scalars)");
  return *g;
}

Promoted promote(const std::vector<TensorOrScalar>& operands, const char* op,
                 std::optional<DType> compute) {
  Graph& g = common_graph(operands, op);
  Promoted out;
  out.dtype = compute ? *compute : result_type(operands);
  require_promotable(out.dtype, op);
  for (const TensorOrScalar& v : operands) {
    if (v.is_tensor()) out.shape = broadcast_shapes(out.shape, v.tensor().shape(), op);
  }
  for (const TensorOrScalar& v : operands)
    out.tensors.push_back(as_tensor(v, out.dtype, g).expand(out.shape));
  return out;
}

std::pair<Tensor, Tensor> promote2(const TensorOrScalar& a, const TensorOrScalar& b, const char* op,
                                   std::optional<DType> compute) {
  Promoted p = promote({a, b}, op, compute);
  return {p.tensors[0], p.tensors[1]};
}

}  // namespace luminal
