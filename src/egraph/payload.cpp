#include "luminal/egraph/payload.hpp"

#include <cstring>
#include <functional>
#include <iomanip>
#include <sstream>

#include "luminal/error.hpp"

namespace luminal::egraph {

namespace {

size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

size_t hash_exprs(const std::vector<Expr>& v, size_t h) {
  for (const Expr& e : v) h = mix(h, e.hash());
  return mix(h, v.size());
}

uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace

void Payload::check(bool ok, const char* wanted) const {
  if (!ok)
    throw Error(std::string("payload: expected a ") + wanted + " payload, got a " + kind_name() +
                " (" + to_string() + ")");
}

const Payload& Payload::at(size_t i) const {
  const PayloadTuple& t = as<PayloadTuple>();
  if (i >= t.size())
    throw Error("payload: tuple element " + std::to_string(i) + " out of range for " + to_string());
  return t[i];
}

size_t Payload::tuple_size() const {
  return as<PayloadTuple>().size();
}

const char* Payload::kind_name() const {
  static const char* const names[] = {"none",  "int",  "float",  "dtype",  "expr",
                                      "shape", "view", "string", "scalar", "tuple"};
  return names[v_.index()];
}

size_t Payload::hash() const {
  size_t h = v_.index() * 0x100000001b3ULL;
  return std::visit(
      [&](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return h;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return mix(h, std::hash<int64_t>{}(x));
        } else if constexpr (std::is_same_v<T, double>) {
          return mix(h, std::hash<uint64_t>{}(bits_of(x)));
        } else if constexpr (std::is_same_v<T, DType>) {
          return mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, Expr>) {
          return mix(h, x.hash());
        } else if constexpr (std::is_same_v<T, Shape>) {
          return hash_exprs(x, h);
        } else if constexpr (std::is_same_v<T, View>) {
          return hash_exprs(x.axis_exprs(), hash_exprs(x.shape(), h));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return mix(h, std::hash<std::string>{}(x));
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return mix(h, x.hash());
        } else {
          for (const Payload& p : *x) h = mix(h, p.hash());
          return mix(h, x->size());
        }
      },
      v_);
}

bool Payload::operator==(const Payload& other) const {
  if (v_.index() != other.v_.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(other.v_);
        if constexpr (std::is_same_v<T, double>) {
          return bits_of(x) == bits_of(y);
        } else if constexpr (std::is_same_v<T, TuplePtr>) {
          return x == y || *x == *y;
        } else {
          return x == y;
        }
      },
      v_);
}

std::string Payload::to_string() const {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream os;
          os << std::setprecision(17) << x;
          return os.str();
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(x));
        } else if constexpr (std::is_same_v<T, Expr>) {
          return x.to_string();
        } else if constexpr (std::is_same_v<T, Shape>) {
          return luminal::to_string(x);
        } else if constexpr (std::is_same_v<T, View>) {
          return x.to_string();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return '"' + x + '"';
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return x.to_string();
        } else {
          std::string s = "(";
          for (size_t i = 0; i < x->size(); ++i) s += (i ? ", " : "") + (*x)[i].to_string();
          return s + ")";
        }
      },
      v_);
}

size_t Payload::approx_bytes() const {
  size_t n = sizeof(Payload);
  if (const auto* s = std::get_if<Shape>(&v_)) n += s->capacity() * sizeof(Expr);
  if (const auto* v = std::get_if<View>(&v_)) n += 2 * v->rank() * sizeof(Expr) + 48;
  if (const auto* s = std::get_if<std::string>(&v_)) n += s->capacity();
  if (const auto* t = std::get_if<TuplePtr>(&v_)) {
    n += 32;
    for (const Payload& p : **t) n += p.approx_bytes();
  }
  return n;
}

}  // namespace luminal::egraph
