// Core Python bindings: exceptions, dtype / dim conversion, Graph, Tensor
// basics (shape, dtype, operators, indexing, view methods), compile and run.

#include <Python.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bindings.hpp"
#include "luminal/compiler/compile.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/elementwise.hpp"  // Python operators (F1's torch-semantics ops)
#include "luminal/frontend/linalg.hpp"       // @ (F2's matmul)
#include "luminal/reference/interpreter.hpp"

#ifndef LUMINAL_VERSION
#define LUMINAL_VERSION "0.0.0"
#endif

namespace luminal::py {

// ---- graph ownership ------------------------------------------------------------

namespace {

// Graphs created from Python, so that a C++ function returning a Tensor can be
// given back the shared owner of its graph. Entries are removed by the deleter.
// Only touched with the GIL held.
std::unordered_map<const Graph*, std::weak_ptr<Graph>>& graph_registry() {
  static auto* registry = new std::unordered_map<const Graph*, std::weak_ptr<Graph>>();
  return *registry;
}

std::shared_ptr<Graph> new_graph() {
  std::shared_ptr<Graph> g(new Graph(), [](Graph* p) {
    graph_registry().erase(p);
    delete p;
  });
  graph_registry()[g.get()] = g;
  return g;
}

}  // namespace

std::shared_ptr<Graph> graph_owner(const Graph* graph) {
  auto it = graph_registry().find(graph);
  if (it != graph_registry().end())
    if (auto owner = it->second.lock()) return owner;
  throw Error("luminal: a Tensor refers to a graph that Python does not own");
}

// ---- exceptions -----------------------------------------------------------------

namespace {

PyObject* g_error = nullptr;         // lm.Error(RuntimeError)
PyObject* g_shape_error = nullptr;   // lm.ShapeError(Error, ValueError)
PyObject* g_dtype_error = nullptr;   // lm.DTypeError(Error, TypeError)
PyObject* g_index_error = nullptr;   // lm.IndexError(Error, IndexError)
PyObject* g_lookup_error = nullptr;  // lm.LookupError(Error, ValueError)

PyObject* new_exception(nb::module_& m, const char* name, nb::tuple bases, const char* doc) {
  std::string qual = std::string("luminal.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases.ptr(), nullptr);
  if (!cls) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

void bind_exceptions(nb::module_& m) {
  g_error = new_exception(m, "Error", nb::make_tuple(nb::handle(PyExc_RuntimeError)),
                          "Base class of every error luminal raises.");
  nb::handle err(g_error);
  g_shape_error = new_exception(m, "ShapeError", nb::make_tuple(err, nb::handle(PyExc_ValueError)),
                                "A shape, rank or axis does not fit the operation.");
  g_dtype_error = new_exception(m, "DTypeError", nb::make_tuple(err, nb::handle(PyExc_TypeError)),
                                "A dtype is not accepted by the operation.");
  g_index_error = new_exception(m, "IndexError", nb::make_tuple(err, nb::handle(PyExc_IndexError)),
                                "An index is outside its tensor.");
  g_lookup_error =
      new_exception(m, "LookupError", nb::make_tuple(err, nb::handle(PyExc_ValueError)),
                    "A named input, output or dimension is missing or unknown.");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ShapeError& e) {
      PyErr_SetString(g_shape_error, e.what());
    } catch (const DTypeError& e) {
      PyErr_SetString(g_dtype_error, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(g_index_error, e.what());
    } catch (const LookupError& e) {
      PyErr_SetString(g_lookup_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

}  // namespace

// ---- dtypes and dims ------------------------------------------------------------

compiler::MatmulPrecision python_matmul_precision(const std::string& text) {
  try {
    return compiler::parse_matmul_precision(text);
  } catch (const Error& e) {
    throw nb::value_error(e.what());
  }
}

std::string py_str(nb::handle obj) {
  nb::object s = nb::steal(PyObject_Str(obj.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(s);
}

DType to_dtype(nb::handle obj) {
  std::string name;
  if (PyUnicode_Check(obj.ptr())) {
    name = nb::cast<std::string>(obj);
  } else if (obj.is(nb::handle(reinterpret_cast<PyObject*>(&PyFloat_Type)))) {
    name = "float64";  // numpy's meaning of dtype=float
  } else if (obj.is(nb::handle(reinterpret_cast<PyObject*>(&PyLong_Type)))) {
    name = "int64";
  } else if (obj.is(nb::handle(reinterpret_cast<PyObject*>(&PyBool_Type)))) {
    name = "bool";
  } else {
    std::string module = nb::cast<std::string>(nb::type_name(obj.type()));
    if (module.rfind("numpy.", 0) == 0 || PyType_Check(obj.ptr())) {
      // np.dtype instances and numpy scalar types (np.float32).
      nb::object np = nb::module_::import_("numpy");
      try {
        name = nb::cast<std::string>(np.attr("dtype")(obj).attr("name"));
      } catch (const nb::python_error&) {
        name = py_str(obj);
      }
    } else {
      name = py_str(obj);  // torch.float32 -> "torch.float32"
    }
  }
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  return parse_dtype(name);
}

std::string dtype_py_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "float32";
    case DType::F16:
      return "float16";
    case DType::BF16:
      return "bfloat16";
    case DType::F64:
      return "float64";
    case DType::I32:
      return "int32";
    case DType::I64:
      return "int64";
    case DType::I8:
      return "int8";
    case DType::U8:
      return "uint8";
    case DType::Bool:
      return "bool";
    case DType::F8E4M3:
      return "float8_e4m3fn";
    case DType::F8E5M2:
      return "float8_e5m2";
    default:
      return std::string(dtype_name(dtype));
  }
}

Expr to_dim(nb::handle obj) {
  if (PyUnicode_Check(obj.ptr())) {
    std::string name = nb::cast<std::string>(obj);
    try {
      return Expr::var(name);
    } catch (const Error& e) {
      throw ShapeError("invalid dim name \"" + name + "\": " + e.what());
    }
  }
  if (!PyBool_Check(obj.ptr()) && PyIndex_Check(obj.ptr())) {
    int64_t v = nb::cast<int64_t>(nb::int_(obj));
    return Expr(v);
  }
  throw ShapeError("dims must be int or str (a dim name), got " +
                   nb::cast<std::string>(nb::repr(obj)));
}

std::vector<Expr> to_shape(nb::handle obj) {
  if (PyUnicode_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) return {to_dim(obj)};
  if (!PySequence_Check(obj.ptr()))
    throw ShapeError("a shape must be a sequence of int | str, got " +
                     nb::cast<std::string>(nb::repr(obj)));
  std::vector<Expr> shape;
  for (nb::handle d : nb::iter(obj)) shape.push_back(to_dim(d));
  return shape;
}

nb::object dim_to_py(const Expr& e) {
  if (auto c = e.as_const()) return nb::int_(*c);
  return nb::str(e.to_string().c_str());
}

nb::tuple shape_to_py(const std::vector<Expr>& shape) {
  nb::list out;
  for (const Expr& d : shape) out.append(dim_to_py(d));
  return nb::tuple(out);
}

namespace {

bool is_py_scalar(nb::handle v) {
  std::optional<Scalar> s;
  return nb::detail::py_to_scalar(v, s);
}

}  // namespace

Tensor scalar_like(nb::handle value, const Tensor& like) {
  std::optional<Scalar> s;
  if (!nb::detail::py_to_scalar(value, s))
    throw nb::type_error(("expected a luminal.Tensor or a Python scalar, got " +
                          nb::cast<std::string>(nb::type_name(value.type())))
                             .c_str());
  Graph& g = *like.graph();
  DType d = like.dtype();
  if (is_int(d) && !s->is_float()) return g.constant_int(s->to_int(), d);
  return g.constant(s->to_double(), d);
}

Tensor tensor_or_scalar(nb::handle value, const Tensor& like) {
  if (nb::isinstance<PyTensor>(value)) return nb::inst_ptr<PyTensor>(value)->t;
  return scalar_like(value, like);
}

// ---- numpy conversion --------------------------------------------------------------

namespace {

nb::object numpy() {
  return nb::module_::import_("numpy");
}

// A C-contiguous buffer view of a numpy array (released on destruction).
class Buffer {
public:
  Buffer(nb::handle arr, bool writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(arr.ptr(), &view_, flags) != 0) throw nb::python_error();
  }
  ~Buffer() { PyBuffer_Release(&view_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return view_.buf; }
  size_t size() const { return static_cast<size_t>(view_.len); }

private:
  Py_buffer view_{};
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]) + (shape.size() == 1 ? "," : "");
  return s + ")";
}

// Float types numpy has no dtype for (bf16, fp8): inputs take float32 arrays,
// rounded to nearest even; outputs come back as float32 arrays (exact).
// Arrays of ml_dtypes' types of the same name are taken as raw bits.
bool is_narrow_float(DType d) {
  return d == DType::BF16 || d == DType::F8E4M3 || d == DType::F8E5M2;
}

void encode_narrow(DType d, const float* src, std::byte* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (d == DType::BF16)
      reinterpret_cast<uint16_t*>(dst)[i] = float_to_bf16_bits(src[i]);
    else if (d == DType::F8E4M3)
      reinterpret_cast<uint8_t*>(dst)[i] = float_to_f8e4m3_bits(src[i]);
    else
      reinterpret_cast<uint8_t*>(dst)[i] = float_to_f8e5m2_bits(src[i]);
  }
}

void decode_narrow(DType d, const std::byte* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (d == DType::BF16)
      dst[i] = bf16_bits_to_float(reinterpret_cast<const uint16_t*>(src)[i]);
    else if (d == DType::F8E4M3)
      dst[i] = f8e4m3_bits_to_float(reinterpret_cast<const uint8_t*>(src)[i]);
    else
      dst[i] = f8e5m2_bits_to_float(reinterpret_cast<const uint8_t*>(src)[i]);
  }
}

// Convert the value given for input `name` (declared dtype `want`) to TensorData.
// numpy arrays must have the declared dtype (or float32 for bf16 / fp8); lists
// and scalars are converted to it. A C-contiguous array of the declared dtype
// is borrowed, not copied (zero-copy: the tensor keeps the array alive and
// reads it in place, so changing the array later changes a persistent input);
// anything else is copied once.
TensorData to_tensor_data(const std::string& name, nb::handle value, DType want) {
  nb::object np = numpy();
  nb::object arr;
  const bool narrow = is_narrow_float(want);
  const std::string expected = dtype_py_name(want);
  if (nb::isinstance(value, np.attr("ndarray"))) {
    arr = nb::borrow(value);
  } else if (PySequence_Check(value.ptr()) || is_py_scalar(value)) {
    arr = np.attr("asarray")(value, "dtype"_a = narrow ? std::string("float32") : expected);
  } else {
    arr = np.attr("asarray")(value);  // torch tensors and other array-likes: dtype checked below
  }
  std::string got = nb::cast<std::string>(arr.attr("dtype").attr("name"));
  const bool from_f32 = narrow && got == "float32";
  if (got != expected && !from_f32)
    throw DTypeError("run: input \"" + name + "\" expects dtype " + expected +
                     (narrow ? " (or float32, rounded to " + expected + ")" : "") + ", got a " +
                     got + " array of shape " + py_str(arr.attr("shape")) +
                     " (luminal does not convert input dtypes silently)");
  if (!nb::cast<bool>(arr.attr("flags").attr("c_contiguous")))
    arr = np.attr("ascontiguousarray")(arr);
  std::vector<int64_t> shape;
  for (nb::handle d : nb::iter(arr.attr("shape"))) shape.push_back(nb::cast<int64_t>(d));
  // Read the raw bytes through a uint8 view (the buffer protocol does not know
  // every numpy dtype, e.g. ml_dtypes' bfloat16).
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (!from_f32 && count > 0) {
    nb::object bytes = arr.attr("reshape")(-1).attr("view")("uint8");
    std::byte* ptr = nullptr;
    size_t size = 0;
    {
      Buffer buf(bytes, false);
      ptr = static_cast<std::byte*>(buf.data());
      size = buf.size();
    }
    if (size == storage_bytes(want, count)) {
      // The array object keeps the memory alive; release it with the GIL held
      // (the tensor may be destroyed on a thread that released it).
      PyObject* keep = bytes.release().ptr();
      std::shared_ptr<const void> owner(keep, [](const void* o) {
        nb::gil_scoped_acquire gil;
        Py_DECREF(static_cast<PyObject*>(const_cast<void*>(o)));
      });
      return TensorData::borrow(want, shape, ptr, std::move(owner));
    }
  }
  TensorData data(want, shape);
  if (data.numel() == 0) return data;
  Buffer buf(arr.attr("reshape")(-1).attr("view")("uint8"), false);
  if (from_f32) {
    encode_narrow(want, static_cast<const float*>(buf.data()), data.data(), data.numel());
  } else {
    if (buf.size() != data.nbytes())
      throw Error("run: input \"" + name + "\": " + std::to_string(buf.size()) + " bytes for " +
                  data.describe());
    std::memcpy(data.data(), buf.data(), data.nbytes());
  }
  return data;
}

// A numpy array holding a copy of `data` (bf16 / fp8 become float32, exactly).
nb::object to_numpy(const TensorData& data) {
  nb::object np = numpy();
  nb::list shape;
  for (int64_t d : data.shape()) shape.append(d);
  const bool narrow = is_narrow_float(data.dtype());
  nb::object arr = np.attr("empty")(
      nb::tuple(shape), "dtype"_a = narrow ? std::string("float32") : dtype_py_name(data.dtype()));
  if (data.numel() == 0) return arr;
  Buffer buf(arr.attr("reshape")(-1).attr("view")("uint8"), true);
  if (narrow) {
    decode_narrow(data.dtype(), data.data(), static_cast<float*>(buf.data()), data.numel());
  } else {
    std::memcpy(buf.data(), data.data(), std::min(buf.size(), data.nbytes()));
  }
  return arr;
}

// A numpy array over `data`'s own memory (zero-copy: the array owns the
// tensor); bf16 / fp8 are converted to float32 (a copy).
nb::object to_numpy_owned(TensorData&& data) {
  if (is_narrow_float(data.dtype()) || data.numel() == 0) return to_numpy(data);
  auto owned = std::make_unique<TensorData>(std::move(data));
  const size_t n = owned->nbytes();
  void* ptr = owned->data();
  nb::capsule owner(owned.get(), [](void* p) noexcept { delete static_cast<TensorData*>(p); });
  const TensorData& t = *owned.release();
  nb::object bytes = nb::ndarray<nb::numpy, uint8_t>(ptr, 1, &n, owner).cast();
  nb::list shape;
  for (int64_t d : t.shape()) shape.append(d);
  return bytes.attr("view")(dtype_py_name(t.dtype())).attr("reshape")(nb::tuple(shape));
}

// ---- compiled model ---------------------------------------------------------------

/// What Graph.compile returns: the compiler's CompiledModel (the searched
/// program of the device's backend) plus the Python graph, kept alive for its
/// input declarations and to detect changes after compile.
class CompiledModel {
public:
  CompiledModel(std::shared_ptr<Graph> graph, std::string device, std::string backend,
                compiler::CompiledModel compiled)
      : graph_(std::move(graph)),
        device_(std::move(device)),
        backend_(std::move(backend)),
        nodes_at_compile_(graph_->size()),
        model_(std::make_unique<compiler::CompiledModel>(std::move(compiled))) {}

  nb::dict run(nb::handle inputs, nb::handle dims) {
    if (graph_->size() != nodes_at_compile_)
      throw Error("run: the graph changed after compile (" + std::to_string(nodes_at_compile_) +
                  " nodes then, " + std::to_string(graph_->size()) +
                  " now); call Graph.compile again");
    if (!inputs.is_none() && !PyDict_Check(inputs.ptr()))
      throw nb::type_error("run: inputs must be a dict {name: numpy array}");
    DimMap given;
    if (!dims.is_none()) {
      if (!PyDict_Check(dims.ptr())) throw nb::type_error("run: dims must be a dict {name: int}");
      for (auto [k, v] : nb::borrow<nb::dict>(dims))
        given[nb::cast<std::string>(k)] = nb::cast<int64_t>(v);
    }
    // Convert and validate everything before binding anything.
    std::vector<std::pair<std::string, TensorData>> bound;
    nb::dict in = inputs.is_none() ? nb::dict() : nb::borrow<nb::dict>(inputs);
    for (auto [k, v] : in) {
      std::string name = nb::cast<std::string>(k);
      auto id = graph_->find_input(name);
      if (!id)
        throw LookupError("run: the graph has no input named \"" + name +
                          "\" (inputs: " + join(input_names()) + ")");
      const Node& n = graph_->node(*id);
      TensorData data = to_tensor_data(name, v, n.dtype);
      if (data.rank() != n.shape.size())
        throw ShapeError("run: input \"" + name + "\" expects rank " +
                         std::to_string(n.shape.size()) + " " + dtype_py_name(n.dtype) +
                         to_string(n.shape) + ", got an array of shape " +
                         shape_text(data.shape()));
      bound.emplace_back(std::move(name), std::move(data));
    }
    for (NodeId id : graph_->inputs()) {
      const Node& n = graph_->node(id);
      if (in.contains(n.name.c_str())) continue;
      if (n.persistent && model_->has_input(n.name)) continue;
      throw LookupError("run: missing input \"" + n.name + "\" (" + dtype_py_name(n.dtype) +
                        to_string(n.shape) + (n.persistent ? ", persistent" : "") +
                        "); inputs given: [" + join_keys(in) + "]");
    }
    for (auto& [name, data] : bound) model_->set_input(name, std::move(data));
    {
      nb::gil_scoped_release release;
      model_->run(given);
    }
    ++runs_;
    nb::dict out;
    // Each output handed over without a copy where the backend allows it.
    std::vector<std::string> names;
    for (const auto& entry : model_->outputs()) names.push_back(entry.first);
    for (const std::string& name : names)
      out[name.c_str()] = to_numpy_owned(model_->take_output(name));
    return out;
  }

  bool update_in_place(const std::string& name) {
    if (!graph_->find_output(name))
      throw LookupError("update_in_place: the graph has no output named \"" + name +
                        "\" (outputs: " + join(output_names()) + ")");
    if (!model_->update_in_place(name)) return false;
    in_place_.insert(name);
    return true;
  }

  nb::object state(const std::string& name) const {
    if (!in_place_.count(name))
      throw LookupError("state: output \"" + name +
                        "\" is not updated in place (update_in_place); run() returns it");
    return to_numpy(model_->output(name));
  }

  std::vector<std::string> input_names() const {
    std::vector<std::string> names;
    for (NodeId id : graph_->inputs()) names.push_back(graph_->node(id).name);
    return names;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> names;
    for (NodeId id : graph_->outputs()) names.push_back(graph_->node(id).name);
    return names;
  }
  nb::dict stats() const {
    nb::dict s;
    const compiler::CompileStats& st = model_->stats();
    s["backend"] = backend_;
    s["device"] = device_;
    s["runs"] = runs_;
    nb::dict dims;
    for (const auto& [k, v] : model_->dims()) dims[k.c_str()] = v;
    s["dims"] = dims;
    s["egraph_nodes"] = st.egraph_nodes;
    s["egraph_classes"] = st.egraph_classes;
    s["candidates"] = st.candidates;
    s["dropped"] = st.dropped;
    s["compile_ms"] = st.compile_ms;
    s["cached"] = st.cached;
    s["best_ms"] = st.best_ms;
    s["stop_reason"] = st.stop_reason;
    s["search_stop"] = st.search_stop;
    s["choice_hash"] = st.winner_hash;
    s["seed"] = st.seed;
    s["block_kinds"] = st.block_kinds;
    s["block_instances"] = st.block_instances;
    nb::dict pdims;
    for (const auto& [k, v] : st.profile_dims) pdims[k.c_str()] = v;
    s["profile_dims"] = pdims;
    return s;
  }
  const std::string& device() const { return device_; }
  const std::string& backend() const { return backend_; }

private:
  static std::string join(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }
  static std::string join_keys(const nb::dict& d) {
    std::string s;
    for (auto [k, v] : d) s += (s.empty() ? "\"" : ", \"") + py_str(k) + "\"";
    return s;
  }

  std::shared_ptr<Graph> graph_;
  std::string device_;
  std::string backend_;
  size_t nodes_at_compile_;
  std::unique_ptr<compiler::CompiledModel> model_;
  std::set<std::string> in_place_;  // outputs updated in place (update_in_place)
  int64_t runs_ = 0;
};

// Options Graph.compile accepts (compiler::CompileOptions).
const std::vector<std::string> kCompileOptions = {
    "search_iters", "seed",          "cache",
    "cache_dir",    "time_limit_ms", "per_candidate_timeout_ms",
    "profile_dims", "verify_all",    "matmul_precision"};

compiler::CompileOptions compile_options(const nb::kwargs& options) {
  compiler::CompileOptions o;
  for (auto [k, v] : options) {
    const std::string key = nb::cast<std::string>(k);
    if (v.is_none()) continue;  // None: the default
    if (key == "search_iters") {
      const int64_t n = nb::cast<int64_t>(v);
      if (n < 1) throw nb::value_error("Graph.compile: search_iters must be >= 1");
      o.search_iters = static_cast<size_t>(n);
    } else if (key == "seed") {
      o.seed = nb::cast<uint64_t>(v);
    } else if (key == "cache") {
      o.cache = nb::cast<bool>(v);
    } else if (key == "cache_dir") {
      o.cache_dir = nb::cast<std::string>(nb::str(v));
    } else if (key == "time_limit_ms") {
      o.time_limit_ms = nb::cast<double>(v);
    } else if (key == "per_candidate_timeout_ms") {
      o.per_candidate_timeout_ms = nb::cast<double>(v);
    } else if (key == "verify_all") {
      o.verify_all = nb::cast<bool>(v);
    } else if (key == "matmul_precision") {
      o.matmul_precision = python_matmul_precision(nb::cast<std::string>(v));
    } else if (key == "profile_dims") {
      if (!PyDict_Check(v.ptr()))
        throw nb::type_error("Graph.compile: profile_dims must be a dict {name: int}");
      for (auto [dk, dv] : nb::borrow<nb::dict>(v))
        o.profile_dims[nb::cast<std::string>(dk)] = nb::cast<int64_t>(dv);
    }
  }
  return o;
}

std::unique_ptr<CompiledModel> compile(const PyGraph& g, const std::string& device,
                                       const nb::kwargs& options) {
  std::string unknown;
  for (auto [k, v] : options) {
    std::string key = nb::cast<std::string>(k);
    if (std::find(kCompileOptions.begin(), kCompileOptions.end(), key) == kCompileOptions.end())
      unknown += (unknown.empty() ? "" : ", ") + key;
  }
  if (!unknown.empty())
    throw nb::type_error(("Graph.compile: unknown option(s): " + unknown).c_str());
  std::string dev = device;
  for (char& c : dev) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::unique_ptr<compiler::Backend> backend;
  try {
    backend = compiler::backend_for_device(dev);
  } catch (const LookupError&) {
    throw nb::value_error(("Graph.compile: unknown device \"" + device +
                           "\" (expected \"cpu\", \"reference\" or \"cuda\")")
                              .c_str());
  }
  if (g.g->outputs().empty())
    throw LookupError("Graph.compile: the graph has no outputs; mark results with Graph.output");
  const compiler::CompileOptions o = compile_options(options);
  std::optional<compiler::CompiledModel> compiled;
  {
    nb::gil_scoped_release release;
    compiled.emplace(compiler::compile(*g.g, *backend, o));
  }
  return std::make_unique<CompiledModel>(g.g, dev, backend->name(), std::move(*compiled));
}

// ---- indexing -----------------------------------------------------------------------

// Python slice semantics on one axis (clamped bounds, negative indexes and
// negative steps via flip).
Tensor slice_axis(const Tensor& t, int ax, nb::handle slice) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(slice.ptr(), &start, &stop, &step) != 0) throw nb::python_error();
  Expr n = t.shape()[ax];
  if (auto c = n.as_const()) {
    Py_ssize_t len = PySlice_AdjustIndices(*c, &start, &stop, step);
    if (step > 0)
      return t.slice(ax, Expr(int64_t{start}),
                     Expr(int64_t{start + (len > 0 ? (len - 1) * step + 1 : 0)}), step);
    // Negative step: element k is start + k*step; in flipped coordinates
    // (j -> n-1-j) that is n-1-start - k*step, an ordinary positive-step slice.
    int64_t s2 = *c - 1 - start;
    if (len == 0) return t.slice(ax, 0, 0, 1);
    return t.flip(ax).slice(ax, Expr(s2), Expr(s2 + (len - 1) * (-step) + 1), -step);
  }
  auto* sl = reinterpret_cast<PySliceObject*>(slice.ptr());
  auto bound = [&](PyObject* b, bool is_start) -> Expr {
    if (b == Py_None) return is_start ? Expr(0) : n;
    int64_t v = nb::cast<int64_t>(nb::int_(nb::handle(b)));
    if (v >= 0) return is_start && v == 0 ? Expr(0) : min(Expr(v), n).simplify();
    return max(n + Expr(v), Expr(0)).simplify();
  };
  if (step < 0) {
    if (sl->start != Py_None || sl->stop != Py_None)
      throw IndexError("getitem: a negative step with explicit bounds needs a constant dim; dim " +
                       std::to_string(ax) + " of " + t.describe() + " is " + n.to_string());
    return t.flip(ax).slice(ax, 0, n, -step);
  }
  Expr s = bound(sl->start, true);
  Expr e = max(bound(sl->stop, false), s).simplify();
  return t.slice(ax, s, e, step);
}

std::string key_repr(nb::handle key) {
  return nb::cast<std::string>(nb::repr(key));
}

// x[key] with ints, slices, None and Ellipsis (basic indexing; views only).
Tensor getitem(const Tensor& x, nb::handle key) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  } else {
    items.push_back(key);
  }
  const auto rank = static_cast<int64_t>(x.rank());
  int64_t consumed = 0;
  int ellipses = 0;
  for (nb::handle h : items) {
    PyObject* p = h.ptr();
    if (p == Py_Ellipsis) {
      ++ellipses;
    } else if (p == Py_None) {
    } else if (PySlice_Check(p) || (!PyBool_Check(p) && PyIndex_Check(p))) {
      ++consumed;
    } else {
      throw IndexError("getitem: unsupported index " + key_repr(h) + " for " + x.describe() +
                       " (supported: int, slice, None, ...; use index_select / gather for "
                       "tensor indexes)");
    }
  }
  if (ellipses > 1) throw IndexError("getitem: an index can only have a single ellipsis ('...')");
  if (consumed > rank)
    throw IndexError("getitem: too many indices for " + x.describe() + ": " +
                     std::to_string(consumed) + " indices for " + std::to_string(rank) + " dims");
  Tensor t = x;
  int ax = 0;  // current axis of t
  for (nb::handle h : items) {
    PyObject* p = h.ptr();
    if (p == Py_Ellipsis) {
      ax += static_cast<int>(rank - consumed);
    } else if (p == Py_None) {
      t = t.unsqueeze(ax);
      ++ax;
    } else if (PySlice_Check(p)) {
      t = slice_axis(t, ax, h);
      ++ax;
    } else {
      int64_t i = nb::cast<int64_t>(nb::int_(h));
      Expr n = t.shape()[ax];
      Expr start;
      if (auto c = n.as_const()) {
        if (i < -*c || i >= *c)
          throw IndexError("getitem: index " + std::to_string(i) + " is out of range for dim " +
                           std::to_string(ax) + " of size " + std::to_string(*c) + " of " +
                           x.describe());
        start = Expr(i < 0 ? i + *c : i);
      } else {
        start = i < 0 ? (n + Expr(i)).simplify() : Expr(i);
      }
      t = t.slice(ax, start, start + Expr(1)).squeeze(ax);
    }
  }
  return t;
}

// Resolve one -1 in a torch-style shape (reshape / view).
std::vector<Expr> infer_shape(const Tensor& t, std::vector<Expr> shape, const char* op) {
  int infer = -1;
  Expr known(1);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].as_const() == -1) {
      if (infer >= 0) throw ShapeError(std::string(op) + ": only one dim can be -1");
      infer = static_cast<int>(i);
    } else {
      known = known * shape[i];
    }
  }
  if (infer >= 0) shape[infer] = (t.numel() / known).simplify();
  return shape;
}

// Collect torch-style varargs dims: f(1, 2) or f((1, 2)) or f([1, 2]).
nb::handle single_or_args(const nb::args& args) {
  if (args.size() == 1 && !PyUnicode_Check(args[0].ptr()) && PySequence_Check(args[0].ptr()))
    return args[0];
  return args;
}

std::vector<int> to_ints(nb::handle seq) {
  std::vector<int> out;
  if (PyIndex_Check(seq.ptr())) return {nb::cast<int>(seq)};
  for (nb::handle h : nb::iter(seq)) out.push_back(nb::cast<int>(h));
  return out;
}

int norm_axis(const Tensor& t, int64_t axis, const char* op) {
  auto r = static_cast<int64_t>(t.rank());
  if (axis < -r || axis >= r)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(axis) + " is out of range for " +
                     t.describe() + " (rank " + std::to_string(r) + ")");
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

// torch semantics: squeezing a dim whose size is not 1 is a no-op.
Tensor squeeze_dims(const Tensor& t, std::vector<int> dims) {
  for (int& d : dims) d = norm_axis(t, d, "squeeze");
  std::sort(dims.rbegin(), dims.rend());
  Tensor out = t;
  for (int d : dims)
    if (out.shape()[d].as_const() == 1) out = out.squeeze(d);
  return out;
}

// Tensor.to(dtype): no node when the dtype already matches (as torch).
Tensor luminal_to(const Tensor& t, DType d) {
  return t.dtype() == d ? t : t.cast(d);
}

// ---- operators --------------------------------------------------------------------
// Python operators take a Tensor and a Tensor or a Python number and call the
// frontend's ops, so broadcasting and dtype promotion follow torch
// (int tensor + 2.5 -> float32; / is true division; % is torch.remainder).

using BinaryFn = Tensor (*)(const TensorOrScalar&, const TensorOrScalar&);

Tensor op_add(const TensorOrScalar& a, const TensorOrScalar& b) {
  return luminal::add(a, b);
}
Tensor op_sub(const TensorOrScalar& a, const TensorOrScalar& b) {
  return luminal::sub(a, b);
}
Tensor op_div(const TensorOrScalar& a, const TensorOrScalar& b) {
  return luminal::div(a, b);
}
Tensor op_matmul(const TensorOrScalar& a, const TensorOrScalar& b) {
  return luminal::matmul(a.tensor(), b.tensor());
}

// b as an operand: a Tensor or a Python number; nullopt for anything else
// (the operator then returns NotImplemented, as Python expects).
std::optional<TensorOrScalar> operand(nb::handle b, bool tensors_only) {
  if (nb::isinstance<PyTensor>(b)) return TensorOrScalar(nb::inst_ptr<PyTensor>(b)->t);
  std::optional<Scalar> s;
  if (tensors_only || !nb::detail::py_to_scalar(b, s)) return std::nullopt;
  return TensorOrScalar(*s);
}

void bind_operators(nb::class_<PyTensor>& T) {
  struct Binary {
    const char* name;   // __add__
    const char* rname;  // __radd__ (nullptr: no reflected form)
    BinaryFn fn;
  };
  const Binary binaries[] = {
      {"__add__", "__radd__", &op_add},
      {"__sub__", "__rsub__", &op_sub},
      {"__mul__", "__rmul__", &luminal::mul},
      {"__truediv__", "__rtruediv__", &op_div},
      {"__floordiv__", "__rfloordiv__", &luminal::floor_divide},
      {"__mod__", "__rmod__", &luminal::remainder},
      {"__pow__", "__rpow__", &luminal::pow},
      {"__matmul__", nullptr, &op_matmul},
      {"__and__", "__rand__", &luminal::bitwise_and},
      {"__or__", "__ror__", &luminal::bitwise_or},
      {"__xor__", "__rxor__", &luminal::bitwise_xor},
      {"__lt__", nullptr, &luminal::lt},
      {"__le__", nullptr, &luminal::le},
      {"__gt__", nullptr, &luminal::gt},
      {"__ge__", nullptr, &luminal::ge},
      {"__eq__", nullptr, &luminal::eq},
      {"__ne__", nullptr, &luminal::ne},
  };
  for (const Binary& op : binaries) {
    BinaryFn fn = op.fn;
    const bool tensors_only = fn == &op_matmul;
    T.def(op.name, [fn, tensors_only](const Tensor& a, nb::handle b) -> nb::object {
      auto other = operand(b, tensors_only);
      if (!other) return nb::borrow(Py_NotImplemented);
      return nb::cast(fn(a, *other));
    });
    if (op.rname)
      T.def(op.rname, [fn](const Tensor& a, nb::handle b) -> nb::object {
        auto other = operand(b, false);
        if (!other) return nb::borrow(Py_NotImplemented);
        return nb::cast(fn(*other, a));
      });
  }
  T.def("__neg__", [](const Tensor& a) { return luminal::neg(a); });
  T.def("__pos__", [](const Tensor& a) { return a; });
  T.def("__abs__", [](const Tensor& a) { return luminal::abs(a); });
  T.def("__invert__", [](const Tensor& a) { return luminal::bitwise_not(a); });
}

}  // namespace

// ---- bind_core -----------------------------------------------------------------------

void bind_core(Bindings& b) {
  nb::module_& m = b.m;
  m.attr("__version__") = LUMINAL_VERSION;
  bind_exceptions(m);

  // ---- Graph ----
  b.graph.doc() = "A lazy computation graph. Build it with input/ops/output, then compile().";
  b.graph.def("__init__", [](PyGraph* self) { new (self) PyGraph{new_graph()}; })
      .def(
          "input",
          [](PyGraph& g, const std::string& name, nb::handle shape, nb::handle dtype,
             bool persistent) {
            return g.g->input(name, to_shape(shape), to_dtype(dtype), persistent);
          },
          "name"_a, "shape"_a, "dtype"_a = "float32", "persistent"_a = false,
          "A named input; str dims are symbolic (inferred from the arrays at run time). "
          "persistent inputs (weights, caches) stay bound across runs.")
      .def(
          "weight",
          [](PyGraph& g, const std::string& name, nb::handle shape, nb::handle dtype) {
            return g.g->weight(name, to_shape(shape), to_dtype(dtype));
          },
          "name"_a, "shape"_a, "dtype"_a = "float32",
          "A persistent input (same as input(..., persistent=True)).")
      .def(
          "output",
          [](PyGraph& g, const std::string& name, const Tensor& t) {
            if (t.graph() != g.g.get())
              throw Error("Graph.output: \"" + name + "\" is a tensor of another graph");
            g.g->output(name, t);
          },
          "name"_a, "tensor"_a, "Mark a tensor as the named output.")
      .def(
          "constant",
          [](PyGraph& g, nb::handle value, nb::handle dtype) {
            DType d = dtype.is_none() ? (PyBool_Check(value.ptr())   ? DType::Bool
                                         : PyLong_Check(value.ptr()) ? DType::I64
                                                                     : DType::F32)
                                      : to_dtype(dtype);
            if (is_int(d) && !PyFloat_Check(value.ptr()))
              return g.g->constant_int(nb::cast<int64_t>(nb::int_(value)), d);
            return g.g->constant(nb::cast<double>(nb::float_(value)), d);
          },
          "value"_a, "dtype"_a = nb::none(),
          "A rank-0 constant (dtype defaults as torch.tensor(value): bool, int64 or float32).")
      .def(
          "arange",
          [](PyGraph& g, const Expr& n, nb::handle dtype) {
            return g.g->arange(n, to_dtype(dtype));
          },
          "n"_a, "dtype"_a = "int64", "0, 1, ..., n-1 (n may be a dim name).")
      .def("to_text", [](const PyGraph& g) { return g.g->to_text(); })
      .def("to_dot", [](const PyGraph& g) { return g.g->to_dot(); })
      .def("__len__", [](const PyGraph& g) { return g.g->size(); })
      .def_prop_ro("input_names",
                   [](const PyGraph& g) {
                     std::vector<std::string> names;
                     for (NodeId id : g.g->inputs()) names.push_back(g.g->node(id).name);
                     return names;
                   })
      .def_prop_ro("output_names",
                   [](const PyGraph& g) {
                     std::vector<std::string> names;
                     for (NodeId id : g.g->outputs()) names.push_back(g.g->node(id).name);
                     return names;
                   })
      .def_prop_ro("dim_names", [](const PyGraph& g) { return g.g->dim_names(); })
      .def("__repr__",
           [](const PyGraph& g) {
             std::string s = "Graph(nodes=" + std::to_string(g.g->size()) + ", inputs=[";
             bool first = true;
             for (NodeId id : g.g->inputs()) {
               const Node& n = g.g->node(id);
               s += (first ? "" : ", ") + n.name + ": " + to_string(n.dtype) + to_string(n.shape);
               first = false;
             }
             s += "], outputs=[";
             first = true;
             for (NodeId id : g.g->outputs()) {
               s += (first ? "" : ", ") + g.g->node(id).name;
               first = false;
             }
             return s + "])";
           })
      .def("compile", &compile, "device"_a = "cpu", "options"_a,
           "Compile for a device (\"cpu\"): saturate the e-graph, time candidates, keep the "
           "fastest. Options: search_iters (candidate budget), seed (default $LUMINAL_SEED), "
           "cache (on-disk, $LUMINAL_CACHE_DIR), cache_dir, time_limit_ms, "
           "per_candidate_timeout_ms, profile_dims ({dim: value}; others 8), verify_all, "
           "matmul_precision (\"high\", the default, lets products use 16-bit integer "
           "activations, 14-bit with both operands rounded for f32 weights; \"highest\" keeps "
           "them f32). "
           "Returns a CompiledModel (m.stats has the figures); the graph must not change "
           "afterwards.");

  // ---- CompiledModel ----
  nb::class_<CompiledModel>(m, "CompiledModel", "A compiled graph: run it with numpy arrays.")
      .def("run", &CompiledModel::run, "inputs"_a = nb::none(), "dims"_a = nb::none(),
           "Run with {name: numpy array}; returns {output name: numpy array}. Dims are "
           "inferred from the input shapes; persistent inputs may be omitted after the "
           "first run.")
      .def("__call__", &CompiledModel::run, "inputs"_a = nb::none(), "dims"_a = nb::none())
      .def("update_in_place", &CompiledModel::update_in_place, "name"_a,
           "Keep output `name` (a Scatter into a persistent input read by nothing else, e.g. "
           "a KV cache's \"<cache>.next\" from nn.mark_cache_outputs) as that input's state, "
           "updated in place: each run writes only the new rows into it, no copy of the whole "
           "state, and run() no longer returns it (read it with state(name)). The input is "
           "copied once when bound (a numpy array passed in is never written); binding it "
           "again resets the state. Returns False where the backend cannot (then run() keeps "
           "returning it: bind it back as the input).")
      .def("state", &CompiledModel::state, "name"_a,
           "A copy of the current state of an output updated in place (update_in_place).")
      .def_prop_ro("input_names", &CompiledModel::input_names)
      .def_prop_ro("output_names", &CompiledModel::output_names)
      .def_prop_ro("stats", &CompiledModel::stats)
      .def_prop_ro("device", &CompiledModel::device)
      .def("__repr__", [](const CompiledModel& c) {
        return "CompiledModel(device=\"" + c.device() + "\", backend=\"" + c.backend() + "\")";
      });

  // ---- Tensor ----
  nb::class_<PyTensor>& T = b.tensor;
  T.doc() = "A lazy tensor: a node of a Graph seen through a view.";
  T.attr("__array_ufunc__") = nb::none();  // numpy defers to our reflected operators
  T.def_prop_ro("shape", [](const Tensor& t) { return shape_to_py(t.shape()); })
      .def_prop_ro("dtype", [](const Tensor& t) { return dtype_py_name(t.dtype()); })
      .def_prop_ro("ndim", [](const Tensor& t) { return t.rank(); })
      .def_prop_ro("graph", [](const PyTensor& t) { return PyGraph{t.owner}; })
      .def(
          "dim", [](const Tensor& t) { return t.rank(); }, "The number of dims (torch.Tensor.dim).")
      .def(
          "size",
          [](const Tensor& t, nb::handle dim) -> nb::object {
            if (dim.is_none()) return shape_to_py(t.shape());
            return dim_to_py(t.shape()[norm_axis(t, nb::cast<int64_t>(dim), "size")]);
          },
          "dim"_a = nb::none())
      .def("numel", [](const Tensor& t) { return dim_to_py(t.numel().simplify()); })
      .def("__repr__",
           [](const Tensor& t) {
             return "Tensor(" + t.describe() + ", node=%" + std::to_string(t.node()) + ")";
           })
      .def("__bool__",
           [](const Tensor& t) -> bool {
             throw nb::type_error(("a luminal.Tensor " + t.describe() +
                                   " is lazy and has no truth value; compile and run the graph")
                                      .c_str());
           })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__len__",
           [](const Tensor& t) -> int64_t {
             if (t.rank() == 0) throw nb::type_error("len() of a 0-d tensor");
             auto c = t.shape()[0].as_const();
             if (!c)
               throw nb::type_error(
                   ("len() of a tensor with symbolic first dim: " + t.describe()).c_str());
             return *c;
           })
      .def("__getitem__", &getitem)
      // ---- movement (views; torch names) ----
      .def("permute",
           [](const Tensor& t, nb::args dims) {
             std::vector<int> order = to_ints(single_or_args(dims));
             if (order.size() != t.rank())
               throw ShapeError("permute: " + std::to_string(order.size()) + " dims given for " +
                                t.describe());
             for (int& d : order) d = norm_axis(t, d, "permute");
             return t.permute(order);
           })
      .def(
          "transpose",
          [](const Tensor& t, int64_t a, int64_t b) {
            return t.transpose(norm_axis(t, a, "transpose"), norm_axis(t, b, "transpose"));
          },
          "dim0"_a, "dim1"_a)
      .def(
          "swapaxes",
          [](const Tensor& t, int64_t a, int64_t b) {
            return t.transpose(norm_axis(t, a, "swapaxes"), norm_axis(t, b, "swapaxes"));
          },
          "axis0"_a, "axis1"_a)
      .def("t",
           [](const Tensor& t) {
             if (t.rank() > 2)
               throw ShapeError("t: expects a tensor with <= 2 dims, got " + t.describe());
             return t.rank() < 2 ? t : t.transpose(0, 1);
           })
      .def_prop_ro("T",
                   [](const Tensor& t) {
                     std::vector<int> order(t.rank());
                     for (size_t i = 0; i < order.size(); ++i)
                       order[i] = static_cast<int>(order.size() - 1 - i);
                     return t.permute(order);
                   })
      .def_prop_ro("mT",
                   [](const Tensor& t) {
                     if (t.rank() < 2)
                       throw ShapeError("mT: expects a tensor with >= 2 dims, got " + t.describe());
                     return t.transpose(-2, -1);
                   })
      .def(
          "unsqueeze",
          [](const Tensor& t, int64_t dim) {
            auto r = static_cast<int64_t>(t.rank());
            if (dim < -r - 1 || dim > r)
              throw ShapeError("unsqueeze: dim " + std::to_string(dim) + " is out of range for " +
                               t.describe());
            return t.unsqueeze(static_cast<int>(dim < 0 ? dim + r + 1 : dim));
          },
          "dim"_a)
      .def(
          "squeeze",
          [](const Tensor& t, nb::handle dim) {
            std::vector<int> dims;
            if (dim.is_none()) {
              for (size_t i = 0; i < t.rank(); ++i) dims.push_back(static_cast<int>(i));
            } else {
              dims = to_ints(dim);
            }
            return squeeze_dims(t, dims);
          },
          "dim"_a = nb::none())
      .def("expand",
           [](const Tensor& t, nb::args sizes) {
             std::vector<Expr> shape = to_shape(single_or_args(sizes));
             size_t lead = shape.size() >= t.rank() ? shape.size() - t.rank() : 0;
             for (size_t i = lead; i < shape.size(); ++i)
               if (shape[i].as_const() == -1) shape[i] = t.shape()[i - lead];
             return t.expand(shape);
           })
      .def("expand_as", [](const Tensor& t, const Tensor& o) { return t.expand(o.shape()); })
      .def("reshape",
           [](const Tensor& t, nb::args shape) {
             return t.reshape(infer_shape(t, to_shape(single_or_args(shape)), "reshape"));
           })
      .def("view",
           [](const Tensor& t, nb::args shape) {
             return t.reshape(infer_shape(t, to_shape(single_or_args(shape)), "view"));
           })
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return t.reshape(o.shape()); })
      .def("view_as", [](const Tensor& t, const Tensor& o) { return t.reshape(o.shape()); })
      .def("contiguous", [](const Tensor& t) { return t.contiguous(); })
      .def("flip",
           [](const Tensor& t, nb::args dims) {
             Tensor out = t;
             for (int d : to_ints(single_or_args(dims))) out = out.flip(norm_axis(t, d, "flip"));
             return out;
           })
      // ---- casts ----
      .def(
          "to",
          [](const Tensor& t, nb::handle dtype) {
            // torch's x.to(other) takes other's dtype; x.to("cpu") is a no-op here.
            if (nb::isinstance<PyTensor>(dtype))
              return luminal_to(t, nb::inst_ptr<PyTensor>(dtype)->t.dtype());
            if (PyUnicode_Check(dtype.ptr()) && py_str(dtype) == "cpu") return t;
            return luminal_to(t, to_dtype(dtype));
          },
          "dtype"_a)
      .def("is_floating_point", [](const Tensor& t) { return is_float(t.dtype()); })
      .def("__iter__",
           [](nb::handle self) {
             const Tensor& t = nb::inst_ptr<PyTensor>(self)->t;
             if (t.rank() == 0) throw nb::type_error("iteration over a 0-d tensor");
             auto n = t.shape()[0].as_const();
             if (!n)
               throw nb::type_error(
                   ("iteration over a tensor with symbolic first dim: " + t.describe()).c_str());
             nb::list items;
             for (int64_t i = 0; i < *n; ++i) items.append(self[nb::int_(i)]);
             return nb::iter(items);
           })
      .def(
          "type",
          [](const Tensor& t, nb::handle dtype) -> nb::object {
            if (dtype.is_none()) return nb::str(dtype_py_name(t.dtype()).c_str());
            return nb::cast(luminal_to(t, to_dtype(dtype)));
          },
          "dtype"_a = nb::none());
  struct NamedCast {
    const char* name;
    DType dtype;
  };
  for (NamedCast c : {NamedCast{"float", DType::F32},
                      {"half", DType::F16},
                      {"bfloat16", DType::BF16},
                      {"double", DType::F64},
                      {"int", DType::I32},
                      {"long", DType::I64},
                      {"char", DType::I8},
                      {"byte", DType::U8},
                      {"bool", DType::Bool}}) {
    DType d = c.dtype;
    T.def(c.name, [d](const Tensor& t) { return luminal_to(t, d); });
  }

  bind_operators(T);
}

}  // namespace luminal::py
