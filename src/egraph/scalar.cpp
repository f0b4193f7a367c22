// Scalars and constant folding. Every fold stores its result through a
// one-element TensorData exactly as the reference interpreter stores element
// results, so folded constants are bit-identical to what the interpreter
// would compute at run time.

#include "luminal/egraph/scalar.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <sstream>

#include "luminal/core/tensor_data.hpp"

namespace luminal::egraph {

namespace {

uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Read element 0 of a one-element tensor back as a Scalar.
Scalar read_back(const TensorData& t) {
  Scalar s;
  s.dtype = t.dtype();
  if (is_float(t.dtype())) {
    s.value = t.get(0);
    s.int_value = 0;
  } else {
    s.int_value = t.get_int(0);
    s.value = static_cast<double>(s.int_value);
  }
  return s;
}

// Store as the interpreter stores a double result (TensorData::set).
Scalar store_double(DType dtype, double v) {
  TensorData t(dtype, {});
  t.set(0, v);
  return read_back(t);
}

// Store as the interpreter stores an integer result (bool: != 0, else wrap).
Scalar store_int(DType dtype, int64_t v) {
  TensorData t(dtype, {});
  t.set_int(0, dtype == DType::Bool ? (v != 0) : v);
  return read_back(t);
}

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace

Scalar Scalar::from_double(DType dtype, double value) {
  Scalar s;
  s.dtype = dtype;
  if (is_int(dtype)) {
    s.int_value = saturating_float_to_int(value, dtype);
    s.value = static_cast<double>(s.int_value);
  } else if (dtype == DType::Bool) {
    s.int_value = value != 0.0 ? 1 : 0;
    s.value = static_cast<double>(s.int_value);
  } else {
    s.value = round_to_float_dtype(value, dtype);
  }
  return s;
}

Scalar Scalar::from_int(DType dtype, int64_t value) {
  if (!luminal::is_int(dtype) && dtype != DType::Bool)
    return from_double(dtype, static_cast<double>(value));
  Scalar s;
  s.dtype = dtype;
  s.int_value = dtype == DType::Bool ? (value != 0) : wrap_int(value, dtype);
  s.value = static_cast<double>(s.int_value);
  return s;
}

bool Scalar::is_float() const {
  return luminal::is_float(dtype);
}

bool Scalar::equals(double v) const {
  return *this == from_double(dtype, v);
}

bool Scalar::is_mul_identity() const {
  return equals(1.0);
}

bool Scalar::is_add_identity() const {
  if (is_float()) return bits_of(value) == bits_of(-0.0);
  return int_value == 0;
}

bool Scalar::is_int_zero() const {
  return !is_float() && int_value == 0;
}

bool Scalar::operator==(const Scalar& other) const {
  return dtype == other.dtype && bits_of(value) == bits_of(other.value) &&
         int_value == other.int_value;
}

size_t Scalar::hash() const {
  size_t h = std::hash<uint64_t>{}(bits_of(value));
  h ^= std::hash<int64_t>{}(int_value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h ^ (static_cast<size_t>(dtype) << 56);
}

std::string Scalar::to_string() const {
  std::ostringstream os;
  if (is_float())
    os << std::setprecision(9) << value;
  else if (dtype == DType::Bool)
    os << (int_value ? "true" : "false");
  else
    os << int_value;
  os << ':' << dtype_name(dtype);
  return os.str();
}

std::optional<Scalar> fold_unary(OpKind kind, const Scalar& x) {
  if (!x.is_float()) return std::nullopt;
  double v = x.value;
  double r;
  switch (kind) {
    case OpKind::Exp2:
      r = std::exp2(v);
      break;
    case OpKind::Log2:
      r = std::log2(v);
      break;
    case OpKind::Sin:
      r = std::sin(v);
      break;
    case OpKind::Sqrt:
      r = std::sqrt(v);
      break;
    case OpKind::Recip:
      r = 1.0 / v;
      break;
    default:
      return std::nullopt;
  }
  return store_double(x.dtype, r);
}

std::optional<Scalar> fold_binary(OpKind kind, const Scalar& a, const Scalar& b) {
  if (a.dtype != b.dtype) return std::nullopt;
  const DType out = kind == OpKind::LessThan ? DType::Bool : a.dtype;
  if (a.is_float()) {
    const double x = a.value, y = b.value;
    switch (kind) {
      case OpKind::Add:
        return store_double(out, x + y);
      case OpKind::Mul:
        return store_double(out, x * y);
      case OpKind::Mod:
        return store_double(out, std::fmod(x, y));
      case OpKind::LessThan:
        return store_int(out, x < y);  // false for NaN
      default:
        return std::nullopt;
    }
  }
  const int64_t x = a.int_value, y = b.int_value;
  const bool boolean = a.dtype == DType::Bool;
  switch (kind) {
    case OpKind::Add:
      return store_int(out, boolean ? (x | y) : wrap_add(x, y));
    case OpKind::Mul:
      return store_int(out, boolean ? (x & y) : wrap_mul(x, y));
    case OpKind::Mod:
      if (y == 0 || boolean) return std::nullopt;  // the interpreter raises an error
      return store_int(out, y == -1 ? 0 : x % y);
    case OpKind::LessThan:
      return store_int(out, x < y);
    default:
      return std::nullopt;
  }
}

Scalar fold_cast(const Scalar& x, DType dtype) {
  // Mirrors the interpreter's Cast: float sources go through TensorData::set
  // (truncate + saturate to ints, != 0 to bool, rounding to floats).
  if (x.is_float()) return store_double(dtype, x.value);
  if (dtype == DType::Bool) return store_int(dtype, x.int_value != 0);
  if (luminal::is_float(dtype)) return store_double(dtype, static_cast<double>(x.int_value));
  return store_int(dtype, x.int_value);
}

bool cast_is_lossless(DType from, DType to) {
  if (from == to) return true;
  if (from == DType::Bool) return is_compute_type(to) || to == DType::F8E4M3 || to == DType::F8E5M2;
  auto in = [&](std::initializer_list<DType> set) {
    for (DType d : set)
      if (d == to) return true;
    return false;
  };
  switch (from) {
    // Narrow floats are subsets of the wider formats (values, infinities, NaN, -0.0).
    case DType::F8E4M3:
    case DType::F8E5M2:
      return in({DType::F16, DType::BF16, DType::F32, DType::F64});
    case DType::F16:
    case DType::BF16:
      return in({DType::F32, DType::F64});
    case DType::F32:
      return in({DType::F64});
    // Small integers are exact in every wider integer and in f16/bf16 (8+ significand bits).
    case DType::I8:
    case DType::U8:
      return in({DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64});
    case DType::I32:
      return in({DType::I64, DType::F64});
    default:
      return false;
  }
}

}  // namespace luminal::egraph
