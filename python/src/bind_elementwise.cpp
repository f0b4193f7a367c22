// Python bindings of the frontend ops: promotion, creation, elementwise, reductions, normalization.
// owned by F1 (see bindings.hpp for the conventions and python/README-dev.md).
//
// Names, argument names and defaults follow torch: module functions as torch.<name>
// (`lm.exp(x)`, `lm.sum(x, dim, keepdim)`), Tensor methods as torch.Tensor
// (`x.exp()`, `x.sum(1, keepdim=True)`), functional ops as torch.nn.functional
// (`lm.F.gelu(x, approximate="tanh")`). Creation ops need a graph: they are Graph
// methods (`g.zeros((2, "s"))`, `g.arange(0, 10, 2)`) and *_like functions.

#include <cmath>
#include <limits>

#include "bindings.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/creation.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/promotion.hpp"
#include "luminal/frontend/reduction.hpp"

using namespace nb::literals;

namespace luminal::py {

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const TensorOrScalar&, const TensorOrScalar&);

// torch's `dim` argument: None (every axis), an int, or a sequence of ints.
std::vector<int> to_dims(nb::handle dim) {
  if (dim.is_none()) return {};
  if (PyLong_Check(dim.ptr())) return {nb::cast<int>(dim)};
  std::vector<int> out;
  for (nb::handle d : nb::iter(dim)) out.push_back(nb::cast<int>(d));
  return out;
}

std::optional<DType> opt_dtype(nb::handle d) {
  if (d.is_none()) return std::nullopt;
  return to_dtype(d);
}

// A size given as torch does: an int, a dim name, or a sequence of them.
std::vector<Expr> to_size(nb::handle size) {
  return to_shape(size);
}

// Register `f` as luminal.<name>(input, ...) and Tensor.<name>(self, ...).
template <typename F, typename... Extra>
void def_both(Bindings& b, const char* name, F f, const Extra&... extra) {
  b.m.def(name, f, "input"_a, extra...);
  b.tensor.def(name, f, extra...);
}

// ... and luminal.F.<name>(input, ...) as well.
template <typename F, typename... Extra>
void def_all(Bindings& b, const char* name, F f, const Extra&... extra) {
  def_both(b, name, f, extra...);
  b.F.def(name, f, "input"_a, extra...);
}

void bind_unary(Bindings& b) {
  struct Entry {
    const char* name;
    Unary fn;
    bool functional;  // also in luminal.F (torch.nn.functional)
  };
  const Entry entries[] = {
      {"neg", &luminal::neg, false},
      {"negative", &luminal::neg, false},
      {"abs", &luminal::abs, false},
      {"absolute", &luminal::abs, false},
      {"sign", &luminal::sign, false},
      {"square", &luminal::square, false},
      {"reciprocal", &luminal::reciprocal, false},
      {"exp", &luminal::exp, false},
      {"exp2", &luminal::exp2, false},
      {"expm1", &luminal::expm1, false},
      {"log", &luminal::log, false},
      {"log2", &luminal::log2, false},
      {"log10", &luminal::log10, false},
      {"log1p", &luminal::log1p, false},
      {"sqrt", &luminal::sqrt, false},
      {"rsqrt", &luminal::rsqrt, false},
      {"sin", &luminal::sin, false},
      {"cos", &luminal::cos, false},
      {"tan", &luminal::tan, false},
      {"tanh", &luminal::tanh, true},
      {"sinh", &luminal::sinh, false},
      {"cosh", &luminal::cosh, false},
      {"sigmoid", &luminal::sigmoid, true},
      {"erf", &luminal::erf, false},
      {"erfc", &luminal::erfc, false},
      {"floor", &luminal::floor, false},
      {"ceil", &luminal::ceil, false},
      {"trunc", &luminal::trunc, false},
      {"fix", &luminal::trunc, false},
      {"frac", &luminal::frac, false},
      {"isnan", &luminal::isnan, false},
      {"isinf", &luminal::isinf, false},
      {"isposinf", &luminal::isposinf, false},
      {"isneginf", &luminal::isneginf, false},
      {"isfinite", &luminal::isfinite, false},
      {"signbit", &luminal::signbit, false},
      {"logical_not", &luminal::logical_not, false},
      {"bitwise_not", &luminal::bitwise_not, false},
      {"relu", &luminal::relu, true},
      {"relu6", &luminal::relu6, true},
      {"selu", &luminal::selu, true},
      {"silu", &luminal::silu, true},
      {"mish", &luminal::mish, true},
      {"hardsigmoid", &luminal::hardsigmoid, true},
      {"hardswish", &luminal::hardswish, true},
      {"logsigmoid", &luminal::logsigmoid, true},
      {"softsign", &luminal::softsign, true},
      {"tanhshrink", &luminal::tanhshrink, true},
  };
  for (const Entry& e : entries) {
    Unary fn = e.fn;
    b.m.def(e.name, fn, "input"_a);
    b.tensor.def(e.name, fn);
    if (e.functional) b.F.def(e.name, fn, "input"_a);
  }
}

void bind_binary(Bindings& b) {
  struct Entry {
    const char* name;
    Binary fn;
  };
  const Entry entries[] = {
      {"mul", &luminal::mul},
      {"multiply", &luminal::mul},
      {"true_divide", &luminal::true_divide},
      {"floor_divide", &luminal::floor_divide},
      {"fmod", &luminal::fmod},
      {"remainder", &luminal::remainder},
      {"pow", &luminal::pow},
      {"float_power", &luminal::float_power},
      {"maximum", &luminal::maximum},
      {"minimum", &luminal::minimum},
      {"fmax", &luminal::fmax},
      {"fmin", &luminal::fmin},
      {"lt", &luminal::lt},
      {"less", &luminal::lt},
      {"le", &luminal::le},
      {"less_equal", &luminal::le},
      {"gt", &luminal::gt},
      {"greater", &luminal::gt},
      {"ge", &luminal::ge},
      {"greater_equal", &luminal::ge},
      {"eq", &luminal::eq},
      {"ne", &luminal::ne},
      {"not_equal", &luminal::ne},
      {"logical_and", &luminal::logical_and},
      {"logical_or", &luminal::logical_or},
      {"logical_xor", &luminal::logical_xor},
      {"bitwise_and", &luminal::bitwise_and},
      {"bitwise_or", &luminal::bitwise_or},
      {"bitwise_xor", &luminal::bitwise_xor},
  };
  for (const Entry& e : entries) {
    Binary fn = e.fn;
    b.m.def(e.name, fn, "input"_a, "other"_a);
    b.tensor.def(
        e.name, [fn](const Tensor& self, const TensorOrScalar& other) { return fn(self, other); },
        "other"_a);
  }
  auto add = [](const TensorOrScalar& a, const TensorOrScalar& o, Scalar alpha) {
    return luminal::add(a, o, alpha);
  };
  auto sub = [](const TensorOrScalar& a, const TensorOrScalar& o, Scalar alpha) {
    return luminal::sub(a, o, alpha);
  };
  auto rsub = [](const TensorOrScalar& a, const TensorOrScalar& o, Scalar alpha) {
    return luminal::rsub(a, o, alpha);
  };
  for (auto [name, fn] :
       {std::pair{"add", +add}, {"sub", +sub}, {"subtract", +sub}, {"rsub", +rsub}}) {
    b.m.def(name, fn, "input"_a, "other"_a, nb::kw_only(), "alpha"_a = 1);
    b.tensor.def(
        name,
        [fn](const Tensor& self, const TensorOrScalar& o, Scalar alpha) {
          return fn(self, o, alpha);
        },
        "other"_a, nb::kw_only(), "alpha"_a = 1);
  }
  auto div = [](const TensorOrScalar& a, const TensorOrScalar& o,
                const std::optional<std::string>& rounding_mode) {
    return luminal::div(a, o, rounding_mode);
  };
  for (const char* name : {"div", "divide"}) {
    b.m.def(name, div, "input"_a, "other"_a, nb::kw_only(), "rounding_mode"_a = nb::none());
    b.tensor.def(
        name,
        [div](const Tensor& self, const TensorOrScalar& o,
              const std::optional<std::string>& rounding_mode) {
          return div(self, o, rounding_mode);
        },
        "other"_a, nb::kw_only(), "rounding_mode"_a = nb::none());
  }
}

void bind_misc_elementwise(Bindings& b) {
  def_both(
      b, "round", [](const Tensor& x, int64_t decimals) { return luminal::round(x, decimals); },
      nb::kw_only(), "decimals"_a = 0);
  auto clamp = [](const Tensor& x, const std::optional<TensorOrScalar>& min,
                  const std::optional<TensorOrScalar>& max) { return luminal::clamp(x, min, max); };
  def_both(b, "clamp", clamp, "min"_a = nb::none(), "max"_a = nb::none());
  def_both(b, "clip", clamp, "min"_a = nb::none(), "max"_a = nb::none());
  def_both(
      b, "clamp_min", [](const Tensor& x, const TensorOrScalar& m) { return clamp_min(x, m); },
      "min"_a);
  def_both(
      b, "clamp_max", [](const Tensor& x, const TensorOrScalar& m) { return clamp_max(x, m); },
      "max"_a);
  b.m.def(
      "where",
      [](const Tensor& c, const TensorOrScalar& x, const TensorOrScalar& y) {
        return luminal::where(c, x, y);
      },
      "condition"_a, "input"_a, "other"_a);
  // Tensor.where(condition, other) == torch.where(condition, self, other)
  b.tensor.def(
      "where",
      [](const Tensor& self, const Tensor& c, const TensorOrScalar& y) {
        return luminal::where(c, self, y);
      },
      "condition"_a, "other"_a);
  b.tensor.def(
      "masked_fill",
      [](const Tensor& self, const Tensor& mask, const TensorOrScalar& v) {
        return luminal::masked_fill(self, mask, v);
      },
      "mask"_a, "value"_a);
  def_both(
      b, "nan_to_num",
      [](const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
        return luminal::nan_to_num(x, nan, posinf, neginf);
      },
      "nan"_a = 0.0, "posinf"_a = nb::none(), "neginf"_a = nb::none());
  def_both(
      b, "lerp",
      [](const Tensor& s, const Tensor& e, const TensorOrScalar& w) {
        return luminal::lerp(s, e, w);
      },
      "end"_a, "weight"_a);
  def_both(
      b, "addcmul",
      [](const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
        return luminal::addcmul(x, t1, t2, value);
      },
      "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
  def_both(
      b, "addcdiv",
      [](const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
        return luminal::addcdiv(x, t1, t2, value);
      },
      "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
}

void bind_activations(Bindings& b) {
  def_all(
      b, "gelu",
      [](const Tensor& x, const std::string& approximate) { return luminal::gelu(x, approximate); },
      "approximate"_a = "none");
  def_all(
      b, "leaky_relu", [](const Tensor& x, double slope) { return luminal::leaky_relu(x, slope); },
      "negative_slope"_a = 0.01);
  def_all(
      b, "elu", [](const Tensor& x, double alpha) { return luminal::elu(x, alpha); },
      "alpha"_a = 1.0);
  def_all(
      b, "celu", [](const Tensor& x, double alpha) { return luminal::celu(x, alpha); },
      "alpha"_a = 1.0);
  def_all(
      b, "softplus",
      [](const Tensor& x, double beta, double threshold) {
        return luminal::softplus(x, beta, threshold);
      },
      "beta"_a = 1.0, "threshold"_a = 20.0);
  def_all(
      b, "hardtanh",
      [](const Tensor& x, double lo, double hi) { return luminal::hardtanh(x, lo, hi); },
      "min_val"_a = -1.0, "max_val"_a = 1.0);
  def_all(
      b, "hardshrink", [](const Tensor& x, double l) { return luminal::hardshrink(x, l); },
      "lambd"_a = 0.5);
  def_all(
      b, "softshrink", [](const Tensor& x, double l) { return luminal::softshrink(x, l); },
      "lambd"_a = 0.5);
  def_all(
      b, "threshold",
      [](const Tensor& x, double t, double v) { return luminal::threshold(x, t, v); },
      "threshold"_a, "value"_a);
  def_all(
      b, "prelu", [](const Tensor& x, const Tensor& w) { return luminal::prelu(x, w); },
      "weight"_a);
  def_all(
      b, "glu", [](const Tensor& x, int dim) { return luminal::glu(x, dim); }, "dim"_a = -1);
  b.F.def(
      "dropout",
      [](const Tensor& x, double p, bool training, bool, uint64_t seed) {
        return luminal::dropout(x, p, training, seed);
      },
      "input"_a, "p"_a = 0.5, "training"_a = true, "inplace"_a = false, "seed"_a = 0);
}

void bind_reductions(Bindings& b) {
  def_both(
      b, "sum",
      [](const Tensor& x, nb::handle dim, bool keepdim, nb::handle dtype) {
        return luminal::sum(x, to_dims(dim), keepdim, opt_dtype(dtype));
      },
      "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a = nb::none());
  def_both(
      b, "nansum",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::nansum(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "mean",
      [](const Tensor& x, nb::handle dim, bool keepdim, nb::handle dtype) {
        return luminal::mean(x, to_dims(dim), keepdim, opt_dtype(dtype));
      },
      "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a = nb::none());
  def_both(
      b, "nanmean",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::nanmean(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "prod",
      [](const Tensor& x, nb::handle dim, bool keepdim, nb::handle dtype) {
        return luminal::prod(x, to_dims(dim), keepdim, opt_dtype(dtype));
      },
      "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a = nb::none());
  def_both(
      b, "amax",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::amax(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::tuple(), "keepdim"_a = false);
  def_both(
      b, "amin",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::amin(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::tuple(), "keepdim"_a = false);
  def_both(
      b, "aminmax",
      [](const Tensor& x, std::optional<int> dim, bool keepdim) {
        return luminal::aminmax(x, dim, keepdim);
      },
      nb::kw_only(), "dim"_a = nb::none(), "keepdim"_a = false);
  // torch.max / torch.min: (input) -> value, (input, dim, keepdim) -> (values, indices),
  // (input, other: Tensor) -> maximum / minimum.
  for (bool is_max : {true, false}) {
    auto fn = [is_max](const Tensor& x, nb::handle dim, bool keepdim) -> nb::object {
      if (dim.is_none()) return nb::cast(is_max ? luminal::max(x) : luminal::min(x));
      if (nb::isinstance<PyTensor>(dim)) {
        const Tensor& o = nb::inst_ptr<PyTensor>(dim)->t;
        return nb::cast(is_max ? luminal::maximum(x, o) : luminal::minimum(x, o));
      }
      int d = nb::cast<int>(dim);
      return nb::cast(is_max ? luminal::max(x, d, keepdim) : luminal::min(x, d, keepdim));
    };
    def_both(b, is_max ? "max" : "min", fn, "dim"_a = nb::none(), "keepdim"_a = false);
  }
  for (bool is_max : {true, false}) {
    auto fn = [is_max](const Tensor& x, std::optional<int> dim, bool keepdim) {
      return is_max ? luminal::argmax(x, dim, keepdim) : luminal::argmin(x, dim, keepdim);
    };
    def_both(b, is_max ? "argmax" : "argmin", fn, "dim"_a = nb::none(), "keepdim"_a = false);
  }
  // var / std: torch's (dim, unbiased, keepdim) and (dim, *, correction, keepdim) forms.
  auto correction_of = [](std::optional<bool> unbiased, std::optional<double> correction) {
    if (correction) return *correction;
    return unbiased.value_or(true) ? 1.0 : 0.0;
  };
  for (const char* name : {"var", "std", "var_mean", "std_mean"}) {
    std::string n = name;
    auto fn = [n, correction_of](const Tensor& x, nb::handle dim, std::optional<bool> unbiased,
                                 bool keepdim, std::optional<double> correction) -> nb::object {
      double c = correction_of(unbiased, correction);
      std::vector<int> dims = to_dims(dim);
      if (n == "var") return nb::cast(luminal::var(x, dims, c, keepdim));
      if (n == "std") return nb::cast(luminal::std(x, dims, c, keepdim));
      if (n == "var_mean") return nb::cast(luminal::var_mean(x, dims, c, keepdim));
      return nb::cast(luminal::std_mean(x, dims, c, keepdim));
    };
    def_both(b, name, fn, "dim"_a = nb::none(), "unbiased"_a = nb::none(), "keepdim"_a = false,
             nb::kw_only(), "correction"_a = nb::none());
  }
  def_both(
      b, "logsumexp",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::logsumexp(x, to_dims(dim), keepdim);
      },
      "dim"_a, "keepdim"_a = false);
  def_both(
      b, "any",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::any(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "all",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        return luminal::all(x, to_dims(dim), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "count_nonzero",
      [](const Tensor& x, nb::handle dim) { return luminal::count_nonzero(x, to_dims(dim)); },
      "dim"_a = nb::none());
  // torch.norm(p=2 | 'fro' | inf | number, dim, keepdim)
  def_both(
      b, "norm",
      [](const Tensor& x, nb::handle p, nb::handle dim, bool keepdim) {
        double ord = 2.0;
        if (nb::isinstance<nb::str>(p)) {
          if (nb::cast<std::string>(p) != "fro")
            throw Error("norm: only p='fro' is supported among string norms, got '" +
                        nb::cast<std::string>(p) + "'");
        } else if (!p.is_none()) {
          ord = nb::cast<double>(p);
        }
        return luminal::norm(x, ord, to_dims(dim), keepdim);
      },
      "p"_a = "fro", "dim"_a = nb::none(), "keepdim"_a = false);
  b.m.def(
      "vector_norm",
      [](const Tensor& x, double ord, nb::handle dim, bool keepdim, nb::handle dtype) {
        return luminal::vector_norm(x, ord, to_dims(dim), keepdim, opt_dtype(dtype));
      },
      "x"_a, "ord"_a = 2.0, "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(),
      "dtype"_a = nb::none());
  b.m.def(
      "frobenius_norm",
      [](const Tensor& x, nb::handle dim, bool keepdim) {
        std::vector<int> dims = to_dims(dim);
        return luminal::frobenius_norm(x, dims.empty() ? std::vector<int>{-2, -1} : dims, keepdim);
      },
      "input"_a, "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "cumsum",
      [](const Tensor& x, int dim, nb::handle dtype) {
        return luminal::cumsum(x, dim, opt_dtype(dtype));
      },
      "dim"_a, nb::kw_only(), "dtype"_a = nb::none());
  def_both(
      b, "cumprod",
      [](const Tensor& x, int dim, nb::handle dtype) {
        return luminal::cumprod(x, dim, opt_dtype(dtype));
      },
      "dim"_a, nb::kw_only(), "dtype"_a = nb::none());
}

void bind_normalization(Bindings& b) {
  auto softmax = [](const Tensor& x, int dim, nb::handle dtype) {
    return luminal::softmax(x, dim, opt_dtype(dtype));
  };
  auto log_softmax = [](const Tensor& x, int dim, nb::handle dtype) {
    return luminal::log_softmax(x, dim, opt_dtype(dtype));
  };
  auto softmin = [](const Tensor& x, int dim, nb::handle dtype) {
    return luminal::softmin(x, dim, opt_dtype(dtype));
  };
  def_all(b, "softmax", softmax, "dim"_a, "dtype"_a = nb::none());
  def_all(b, "log_softmax", log_softmax, "dim"_a, "dtype"_a = nb::none());
  b.F.def("softmin", softmin, "input"_a, "dim"_a, "dtype"_a = nb::none());
  b.F.def(
      "layer_norm",
      [](const Tensor& x, nb::handle shape, const std::optional<Tensor>& w,
         const std::optional<Tensor>& bias,
         double eps) { return luminal::layer_norm(x, to_shape(shape), w, bias, eps); },
      "input"_a, "normalized_shape"_a, "weight"_a = nb::none(), "bias"_a = nb::none(),
      "eps"_a = 1e-5);
  b.F.def(
      "rms_norm",
      [](const Tensor& x, nb::handle shape, const std::optional<Tensor>& w,
         std::optional<double> eps) { return luminal::rms_norm(x, to_shape(shape), w, eps); },
      "input"_a, "normalized_shape"_a, "weight"_a = nb::none(), "eps"_a = nb::none());
  b.F.def(
      "group_norm",
      [](const Tensor& x, int64_t groups, const std::optional<Tensor>& w,
         const std::optional<Tensor>& bias,
         double eps) { return luminal::group_norm(x, groups, w, bias, eps); },
      "input"_a, "num_groups"_a, "weight"_a = nb::none(), "bias"_a = nb::none(), "eps"_a = 1e-5);
  b.F.def(
      "batch_norm",
      [](const Tensor& x, const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
         const std::optional<Tensor>& w, const std::optional<Tensor>& bias, bool training,
         double momentum,
         double eps) { return luminal::batch_norm(x, rm, rv, w, bias, training, momentum, eps); },
      "input"_a, "running_mean"_a, "running_var"_a, "weight"_a = nb::none(), "bias"_a = nb::none(),
      "training"_a = false, "momentum"_a = 0.1, "eps"_a = 1e-5);
  b.F.def(
      "instance_norm",
      [](const Tensor& x, const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
         const std::optional<Tensor>& w, const std::optional<Tensor>& bias, bool use_input_stats,
         double, double eps) {
        if (!use_input_stats || rm || rv)
          throw Error(
              "instance_norm: only use_input_stats=True without running stats is supported");
        return luminal::instance_norm(x, w, bias, eps);
      },
      "input"_a, "running_mean"_a = nb::none(), "running_var"_a = nb::none(),
      "weight"_a = nb::none(), "bias"_a = nb::none(), "use_input_stats"_a = true,
      "momentum"_a = 0.1, "eps"_a = 1e-5);
  b.F.def(
      "normalize",
      [](const Tensor& x, double p, int dim, double eps) {
        return luminal::normalize(x, p, dim, eps);
      },
      "input"_a, "p"_a = 2.0, "dim"_a = 1, "eps"_a = 1e-12);
}

void bind_creation(Bindings& b) {
  auto& G = b.graph;
  G.def(
      "zeros",
      [](PyGraph& g, nb::handle size, nb::handle dtype) {
        return luminal::zeros(*g.g, to_size(size), to_dtype(dtype));
      },
      "size"_a, "dtype"_a = "float32");
  G.def(
      "ones",
      [](PyGraph& g, nb::handle size, nb::handle dtype) {
        return luminal::ones(*g.g, to_size(size), to_dtype(dtype));
      },
      "size"_a, "dtype"_a = "float32");
  G.def(
      "full",
      [](PyGraph& g, nb::handle size, Scalar value, nb::handle dtype) {
        return luminal::full(*g.g, to_size(size), value, opt_dtype(dtype));
      },
      "size"_a, "fill_value"_a, "dtype"_a = nb::none());
  G.def(
      "eye",
      [](PyGraph& g, const Expr& n, std::optional<Expr> m, nb::handle dtype) {
        return luminal::eye(*g.g, n, m, to_dtype(dtype));
      },
      "n"_a, "m"_a = nb::none(), "dtype"_a = "float32");
  // torch.arange(end) / (start, end, step=1); a single int or dim-name argument may be
  // symbolic. Replaces the core's arange(n) (same meaning for one argument).
  nb::delattr(G, "arange");
  G.def(
      "arange",
      [](PyGraph& g, nb::handle start, nb::handle end, Scalar step, nb::handle dtype) {
        if (end.is_none()) {
          if (nb::isinstance<nb::str>(start) || PyLong_Check(start.ptr()))
            return luminal::arange(*g.g, to_dim(start), opt_dtype(dtype).value_or(kDefaultInt));
          return luminal::arange(*g.g, Scalar(0), nb::cast<Scalar>(start), step, opt_dtype(dtype));
        }
        return luminal::arange(*g.g, nb::cast<Scalar>(start), nb::cast<Scalar>(end), step,
                               opt_dtype(dtype));
      },
      "start"_a, "end"_a = nb::none(), "step"_a = 1, "dtype"_a = nb::none(),
      "torch.arange: g.arange(end) (end may be a dim name) or g.arange(start, end, step).");
  G.def(
      "linspace",
      [](PyGraph& g, double start, double end, int64_t steps, nb::handle dtype) {
        return luminal::linspace(*g.g, start, end, steps, to_dtype(dtype));
      },
      "start"_a, "end"_a, "steps"_a, "dtype"_a = "float32");
  G.def(
      "logspace",
      [](PyGraph& g, double start, double end, int64_t steps, double base, nb::handle dtype) {
        return luminal::logspace(*g.g, start, end, steps, base, to_dtype(dtype));
      },
      "start"_a, "end"_a, "steps"_a, "base"_a = 10.0, "dtype"_a = "float32");
  G.def(
      "tril_mask",
      [](PyGraph& g, const Expr& rows, const Expr& cols, int64_t diagonal) {
        return luminal::tril_mask(*g.g, rows, cols, diagonal);
      },
      "rows"_a, "cols"_a, "diagonal"_a = 0);
  G.def(
      "triu_mask",
      [](PyGraph& g, const Expr& rows, const Expr& cols, int64_t diagonal) {
        return luminal::triu_mask(*g.g, rows, cols, diagonal);
      },
      "rows"_a, "cols"_a, "diagonal"_a = 0);
  G.def(
      "rand",
      [](PyGraph& g, nb::handle size, uint64_t seed, nb::handle dtype) {
        return luminal::rand(*g.g, to_size(size), seed, to_dtype(dtype));
      },
      "size"_a, "seed"_a = 0, "dtype"_a = "float32");
  G.def(
      "randn",
      [](PyGraph& g, nb::handle size, uint64_t seed, nb::handle dtype) {
        return luminal::randn(*g.g, to_size(size), seed, to_dtype(dtype));
      },
      "size"_a, "seed"_a = 0, "dtype"_a = "float32");
  G.def(
      "randint",
      [](PyGraph& g, int64_t low, int64_t high, nb::handle size, uint64_t seed, nb::handle dtype) {
        return luminal::randint(*g.g, low, high, to_size(size), seed, to_dtype(dtype));
      },
      "low"_a, "high"_a, "size"_a, "seed"_a = 0, "dtype"_a = "int64");
  G.def(
      "bernoulli",
      [](PyGraph& g, nb::handle size, double p, uint64_t seed) {
        return luminal::bernoulli(*g.g, to_size(size), p, seed);
      },
      "size"_a, "p"_a, "seed"_a = 0);

  b.m.def(
      "zeros_like",
      [](const Tensor& x, nb::handle dtype) { return luminal::zeros_like(x, opt_dtype(dtype)); },
      "input"_a, "dtype"_a = nb::none());
  b.m.def(
      "ones_like",
      [](const Tensor& x, nb::handle dtype) { return luminal::ones_like(x, opt_dtype(dtype)); },
      "input"_a, "dtype"_a = nb::none());
  b.m.def(
      "full_like",
      [](const Tensor& x, Scalar v, nb::handle dtype) {
        return luminal::full_like(x, v, opt_dtype(dtype));
      },
      "input"_a, "fill_value"_a, "dtype"_a = nb::none());
  b.m.def(
      "rand_like",
      [](const Tensor& x, uint64_t seed, nb::handle dtype) {
        return luminal::rand_like(x, seed, opt_dtype(dtype));
      },
      "input"_a, "seed"_a = 0, "dtype"_a = nb::none());
  b.m.def(
      "randn_like",
      [](const Tensor& x, uint64_t seed, nb::handle dtype) {
        return luminal::randn_like(x, seed, opt_dtype(dtype));
      },
      "input"_a, "seed"_a = 0, "dtype"_a = nb::none());
  def_both(
      b, "tril", [](const Tensor& x, int64_t d) { return luminal::tril(x, d); }, "diagonal"_a = 0);
  def_both(
      b, "triu", [](const Tensor& x, int64_t d) { return luminal::triu(x, d); }, "diagonal"_a = 0);
}

void bind_promotion(Bindings& b) {
  b.m.def(
      "promote_types",
      [](nb::handle a, nb::handle c) { return luminal::promote_types(to_dtype(a), to_dtype(c)); },
      "type1"_a, "type2"_a);
  b.m.def(
      "result_type",
      [](const TensorOrScalar& a, const TensorOrScalar& c) { return luminal::result_type(a, c); },
      "tensor1"_a, "tensor2"_a);
}

}  // namespace

void bind_elementwise(Bindings& b) {
  bind_promotion(b);
  bind_unary(b);
  bind_binary(b);
  bind_misc_elementwise(b);
  bind_activations(b);
  bind_reductions(b);
  bind_normalization(b);
  bind_creation(b);
}

}  // namespace luminal::py
