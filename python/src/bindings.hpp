#pragma once
// Shared declarations of the nanobind extension `luminal._luminal`.
//
// The extension is split by op family; each family has one binder function
// and one file (python/src/bind_<family>.cpp):
//   bind_core        (P)  Graph, Tensor basics, operators, indexing, compile/run
//   bind_elementwise (F1) promotion, creation, elementwise, reductions, norms
//   bind_structural  (F2) linalg, movement, indexing, sort
//   bind_nn          (F3) conv, pool, interpolate, attention, rope, nn modules
// module.cpp calls them in that order; bind_core runs first and registers the
// classes, exceptions and type casters everything else relies on.
//
// Writing bindings: C++ functions taking and returning luminal::Tensor (also
// std::vector<Tensor>, std::optional<Tensor>, std::pair/tuple of Tensors) bind
// directly, because the type caster below converts between luminal::Tensor and
// the Python `luminal.Tensor` object:
//   b.F.def("gelu", [](const Tensor& x, const std::string& approximate) {...},
//           "input"_a, "approximate"_a = "none");
//   b.tensor.def("exp", [](const Tensor& self) { return luminal::exp(self); });
// luminal::Scalar converts from Python bool / int / float (and numpy scalars);
// luminal::TensorOrScalar from a Tensor or such a number, so ops declared with
// TensorOrScalar operands (promotion.hpp) bind directly: `lm.add(x, 2.5)`.
// luminal::DType converts from "float32" / np.float32 / torch.float32 and to a
// numpy-style name; luminal::Expr converts from int or str (a dim name) and to
// int (constant) or str (symbolic).

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/compiler/matmul_precision.hpp"
#include "luminal/core/dtype.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/shape/expr.hpp"

namespace nb = nanobind;

namespace luminal::py {

using namespace nb::literals;  // "name"_a

/// The Python `luminal.Tensor`: a luminal::Tensor plus shared ownership of its
/// Graph, so a Graph lives as long as any Python object that refers to it
/// (luminal::Tensor itself only holds a raw Graph*).
struct PyTensor {
  Tensor t;
  std::shared_ptr<Graph> owner;
};

/// The Python `luminal.Graph`.
struct PyGraph {
  std::shared_ptr<Graph> g;
};

/// The owning pointer of a graph created from Python; throws luminal::Error
/// for a graph Python does not know (a C++ bug, never user input).
std::shared_ptr<Graph> graph_owner(const Graph* graph);

/// "highest" / "high" -> MatmulPrecision; ValueError naming the accepted values.
compiler::MatmulPrecision python_matmul_precision(const std::string& text);

/// str(obj) (nb::str(accessor) does not convert: use this).
std::string py_str(nb::handle obj);
/// "float32" / "f32" / np.float32 / np.dtype("float32") / torch.float32 -> DType.
/// Throws DTypeError naming the unknown dtype.
DType to_dtype(nb::handle obj);
/// numpy / torch name of a dtype ("float32", "bfloat16", "bool", ...).
std::string dtype_py_name(DType dtype);
/// A Python int -> constant, str -> dim variable (Expr::var); ShapeError otherwise.
Expr to_dim(nb::handle obj);
/// An int, a str or a sequence of them -> shape (torch accepts both x.view(2, 3)
/// and x.view((2, 3)); binders pass either form here).
std::vector<Expr> to_shape(nb::handle obj);
/// Expr -> Python int (constant) or str (symbolic, str(Expr)).
nb::object dim_to_py(const Expr& e);
nb::tuple shape_to_py(const std::vector<Expr>& shape);
/// A Python scalar (bool/int/float, numpy scalar) as a rank-0 constant in the
/// graph of `like`. Without F1's promotion the constant takes like's dtype.
/// Raises TypeError (nb::type_error) if `value` is not a scalar.
Tensor scalar_like(nb::handle value, const Tensor& like);
/// A Tensor, or a Python scalar converted with scalar_like(value, like).
Tensor tensor_or_scalar(nb::handle value, const Tensor& like);

/// What the family binders add to.
struct Bindings {
  nb::module_ m;                // luminal._luminal: re-exported as `luminal.*`
                                //   (torch.* functions that are not in F: lm.where, lm.cat)
  nb::module_ F;                // luminal.F  (torch.nn.functional mirror)
  nb::module_ nn;               // luminal.nn (modules, F3)
  nb::class_<PyTensor> tensor;  // luminal.Tensor: add torch.Tensor-named methods
  nb::class_<PyGraph> graph;    // luminal.Graph
};

void bind_core(Bindings& b);         // P
void bind_elementwise(Bindings& b);  // F1
void bind_structural(Bindings& b);   // F2
void bind_nn(Bindings& b);           // F3
void bind_tokenizer(Bindings& b);    // TOK (luminal.tokenizer)
void bind_models(Bindings& b);       // M (luminal.models: CausalLM, SentenceEmbedder, cli_run)

}  // namespace luminal::py

namespace nanobind::detail {

// NB_TYPE_CASTER for types without a default constructor (the converted value
// is held in a std::optional). The caster defines from_python and
// from_cpp(const Value&, rv_policy, cleanup_list*).
#define LUMINAL_OPTIONAL_CASTER(Value_, descr)                                         \
  using Value = Value_;                                                                \
  static constexpr auto Name = descr;                                                  \
  template <typename T_>                                                               \
  using Cast = movable_cast_t<T_>;                                                     \
  template <typename T_>                                                               \
  static constexpr bool can_cast() {                                                   \
    return true;                                                                       \
  }                                                                                    \
  template <typename T_, enable_if_t<std::is_same_v<std::remove_cv_t<T_>, Value>> = 0> \
  static handle from_cpp(T_* p, rv_policy policy, cleanup_list* list) noexcept {       \
    if (!p) return none().release();                                                   \
    return from_cpp(*p, policy, list);                                                 \
  }                                                                                    \
  explicit operator Value*() {                                                         \
    return &*value;                                                                    \
  }                                                                                    \
  explicit operator Value&() {                                                         \
    return *value;                                                                     \
  }                                                                                    \
  explicit operator Value&&() {                                                        \
    return std::move(*value);                                                          \
  }                                                                                    \
  std::optional<Value> value;

/// luminal::Tensor <-> luminal.Tensor (a PyTensor instance).
template <>
struct type_caster<luminal::Tensor> {
  LUMINAL_OPTIONAL_CASTER(luminal::Tensor, const_name("luminal.Tensor"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (!isinstance<luminal::py::PyTensor>(src)) return false;
    value.emplace(inst_ptr<luminal::py::PyTensor>(src)->t);
    return true;
  }

  static handle from_cpp(const luminal::Tensor& t, rv_policy, cleanup_list* cleanup) noexcept {
    try {
      luminal::py::PyTensor p{t, luminal::py::graph_owner(t.graph())};
      return make_caster<luminal::py::PyTensor>::from_cpp(std::move(p), rv_policy::move, cleanup);
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      return handle();
    }
  }
};

/// Python bool / int / float / numpy scalar -> luminal::Scalar (kind preserved:
/// bool stays bool, ints stay exact int64, floats double) and back.
inline bool py_to_scalar(handle src, std::optional<luminal::Scalar>& out) noexcept {
  PyObject* p = src.ptr();
  if (PyBool_Check(p)) {
    out.emplace(p == Py_True);
    return true;
  }
  if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    out.emplace(static_cast<int64_t>(v));
    return true;
  }
  if (PyFloat_Check(p)) {
    out.emplace(PyFloat_AS_DOUBLE(p));
    return true;
  }
  // numpy scalars: np.bool_, np.int32, np.float16 ... (0-d, with .item()).
  if (std::string_view(Py_TYPE(p)->tp_name).rfind("numpy.", 0) != 0) return false;
  PyObject* item = PyObject_CallMethod(p, "item", nullptr);
  if (!item) {
    PyErr_Clear();
    return false;
  }
  bool ok = (PyBool_Check(item) || PyLong_Check(item) || PyFloat_Check(item)) &&
            py_to_scalar(handle(item), out);
  Py_DECREF(item);
  return ok;
}

template <>
struct type_caster<luminal::Scalar> {
  LUMINAL_OPTIONAL_CASTER(luminal::Scalar, const_name("bool | int | float"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept { return py_to_scalar(src, value); }
  static handle from_cpp(const luminal::Scalar& s, rv_policy, cleanup_list*) noexcept {
    if (s.is_bool()) return handle(s.to_double() != 0.0 ? Py_True : Py_False).inc_ref();
    if (s.is_int()) return PyLong_FromLongLong(s.to_int());
    return PyFloat_FromDouble(s.to_double());
  }
};

/// luminal.Tensor or a Python number -> luminal::TensorOrScalar.
template <>
struct type_caster<luminal::TensorOrScalar> {
  LUMINAL_OPTIONAL_CASTER(luminal::TensorOrScalar,
                          const_name("luminal.Tensor | bool | int | float"))
  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    make_caster<luminal::Tensor> t;
    if (t.from_python(src, flags, cleanup)) {
      value.emplace(t.operator luminal::Tensor&());
      return true;
    }
    std::optional<luminal::Scalar> s;
    if (!py_to_scalar(src, s)) return false;
    value.emplace(*s);
    return true;
  }
  static handle from_cpp(const luminal::TensorOrScalar& v, rv_policy policy,
                         cleanup_list* cleanup) noexcept {
    if (v.is_tensor()) return make_caster<luminal::Tensor>::from_cpp(v.tensor(), policy, cleanup);
    return make_caster<luminal::Scalar>::from_cpp(v.scalar(), policy, cleanup);
  }
};

/// luminal::DType <- str / numpy dtype / torch dtype; -> numpy-style name.
template <>
struct type_caster<luminal::DType> {
  NB_TYPE_CASTER(luminal::DType, const_name("str"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    try {
      value = luminal::py::to_dtype(src);
      return true;
    } catch (...) {
      return false;
    }
  }
  static handle from_cpp(luminal::DType d, rv_policy, cleanup_list*) noexcept {
    std::string name = luminal::py::dtype_py_name(d);
    return PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
  }
};

/// luminal::Expr <- int | str; -> int (constant) | str (symbolic).
template <>
struct type_caster<luminal::Expr> {
  NB_TYPE_CASTER(luminal::Expr, const_name("int | str"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    try {
      value = luminal::py::to_dim(src);
      return true;
    } catch (...) {
      PyErr_Clear();
      return false;
    }
  }
  static handle from_cpp(const luminal::Expr& e, rv_policy, cleanup_list*) noexcept {
    try {
      return luminal::py::dim_to_py(e).release();
    } catch (...) {
      return handle();
    }
  }
};

}  // namespace nanobind::detail
