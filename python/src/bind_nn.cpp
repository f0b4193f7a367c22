// Python bindings of the frontend ops: conv, pool, interpolate, attention, rope, nn modules.
// owned by F3 (see bindings.hpp for the conventions and python/README-dev.md).
//
// Functions are registered in luminal.F with torch.nn.functional's names,
// argument names and defaults; `int | tuple` arguments (stride, padding...)
// accept both forms as torch does.

#include "bindings.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/attention.hpp"
#include "luminal/frontend/convolution.hpp"
#include "luminal/frontend/interpolate.hpp"
#include "luminal/frontend/pooling.hpp"
#include "luminal/nn/attention.hpp"
#include "luminal/nn/conv.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/mlp.hpp"
#include "luminal/nn/moe.hpp"
#include "luminal/nn/normalization.hpp"
#include "luminal/nn/transformer.hpp"

using namespace nb::literals;

namespace luminal::py {

namespace {

// torch's `int | tuple[int, ...]`.
SpatialArg to_spatial(nb::handle h, const char* what) {
  if (PyLong_Check(h.ptr())) return SpatialArg(nb::cast<int64_t>(h));
  if (PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr())) {
    std::vector<int64_t> v;
    for (nb::handle item : nb::iter(h)) {
      if (!PyLong_Check(item.ptr()))
        throw ShapeError(std::string(what) + " must be an int or a tuple of ints");
      v.push_back(nb::cast<int64_t>(item));
    }
    return SpatialArg(std::move(v));
  }
  throw ShapeError(std::string(what) + " must be an int or a tuple of ints, got " +
                   nb::cast<std::string>(nb::str(h)));
}

std::optional<SpatialArg> to_opt_spatial(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  return to_spatial(h, what);
}

ConvPadding to_padding(nb::handle h) {
  if (PyUnicode_Check(h.ptr())) return ConvPadding(nb::cast<std::string>(h));
  return ConvPadding(to_spatial(h, "padding").values);
}

// adaptive pools: an int or a tuple whose None entries keep the input size.
std::vector<Expr> to_output_size(nb::handle h, const Tensor& x, size_t nsp) {
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) {
    if (h.is_none()) return {x.dim(-1)};
    return {to_dim(h)};
  }
  std::vector<Expr> out;
  size_t i = 0;
  for (nb::handle item : nb::iter(h)) {
    size_t axis = x.rank() - nsp + i++;
    out.push_back(item.is_none() && axis < x.rank() ? x.shape()[axis] : to_dim(item));
  }
  return out;
}

std::optional<std::vector<double>> to_scale_factor(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (PySequence_Check(h.ptr())) {
    std::vector<double> v;
    for (nb::handle item : nb::iter(h)) v.push_back(nb::cast<double>(item));
    return v;
  }
  return std::vector<double>{nb::cast<double>(h)};
}

std::optional<std::vector<Expr>> to_opt_size(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_shape(h);
}

RopeLayout to_layout(const std::string& s) {
  if (s == "half" || s == "rotate_half" || s == "neox") return RopeLayout::HalfRotate;
  if (s == "interleaved" || s == "gptj" || s == "meta") return RopeLayout::Interleaved;
  throw ShapeError(
      "rotary layout must be 'half' (HF rotate_half) or 'interleaved' (GPT-J / "
      "Meta), got '" +
      s + "'");
}

void reject_indices(bool return_indices, const char* op) {
  if (return_indices)
    throw Error(std::string(op) + ": return_indices=True is not supported by luminal");
}

void bind_convolution(Bindings& b) {
  using ConvFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&, SpatialArg,
                            ConvPadding, SpatialArg, int64_t);
  auto conv = [&](const char* name, ConvFn fn) {
    b.F.def(
        name,
        [fn](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
             nb::handle stride, nb::handle padding, nb::handle dilation, int64_t groups) {
          return fn(input, weight, bias, to_spatial(stride, "stride"), to_padding(padding),
                    to_spatial(dilation, "dilation"), groups);
        },
        "input"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0,
        "dilation"_a = 1, "groups"_a = 1);
  };
  conv("conv1d", &conv1d);
  conv("conv2d", &conv2d);
  conv("conv3d", &conv3d);
  using ConvTFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&, SpatialArg,
                             SpatialArg, SpatialArg, int64_t, SpatialArg);
  auto conv_t = [&](const char* name, ConvTFn fn) {
    b.F.def(
        name,
        [fn](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
             nb::handle stride, nb::handle padding, nb::handle output_padding, int64_t groups,
             nb::handle dilation) {
          return fn(input, weight, bias, to_spatial(stride, "stride"),
                    to_spatial(padding, "padding"), to_spatial(output_padding, "output_padding"),
                    groups, to_spatial(dilation, "dilation"));
        },
        "input"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0,
        "output_padding"_a = 0, "groups"_a = 1, "dilation"_a = 1);
  };
  conv_t("conv_transpose1d", &conv_transpose1d);
  conv_t("conv_transpose2d", &conv_transpose2d);
  b.F.def(
      "unfold",
      [](const Tensor& input, nb::handle kernel_size, nb::handle dilation, nb::handle padding,
         nb::handle stride) {
        return im2col(input, to_spatial(kernel_size, "kernel_size"),
                      to_spatial(dilation, "dilation"), to_spatial(padding, "padding"),
                      to_spatial(stride, "stride"));
      },
      "input"_a, "kernel_size"_a, "dilation"_a = 1, "padding"_a = 0, "stride"_a = 1);
}

void bind_pooling(Bindings& b) {
  using MaxFn = Tensor (*)(const Tensor&, SpatialArg, std::optional<SpatialArg>, SpatialArg,
                           SpatialArg, bool);
  auto max_pool = [&](const char* name, MaxFn fn) {
    b.F.def(
        name,
        [fn, name](const Tensor& input, nb::handle kernel_size, nb::handle stride,
                   nb::handle padding, nb::handle dilation, bool ceil_mode, bool return_indices) {
          reject_indices(return_indices, name);
          return fn(input, to_spatial(kernel_size, "kernel_size"), to_opt_spatial(stride, "stride"),
                    to_spatial(padding, "padding"), to_spatial(dilation, "dilation"), ceil_mode);
        },
        "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0, "dilation"_a = 1,
        "ceil_mode"_a = false, "return_indices"_a = false);
  };
  max_pool("max_pool1d", &max_pool1d);
  max_pool("max_pool2d", &max_pool2d);
  max_pool("max_pool3d", &max_pool3d);
  b.F.def(
      "avg_pool1d",
      [](const Tensor& input, nb::handle kernel_size, nb::handle stride, nb::handle padding,
         bool ceil_mode, bool count_include_pad) {
        return avg_pool1d(input, to_spatial(kernel_size, "kernel_size"),
                          to_opt_spatial(stride, "stride"), to_spatial(padding, "padding"),
                          ceil_mode, count_include_pad);
      },
      "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0, "ceil_mode"_a = false,
      "count_include_pad"_a = true);
  using AvgFn = Tensor (*)(const Tensor&, SpatialArg, std::optional<SpatialArg>, SpatialArg, bool,
                           bool, std::optional<int64_t>);
  auto avg_pool = [&](const char* name, AvgFn fn) {
    b.F.def(
        name,
        [fn](const Tensor& input, nb::handle kernel_size, nb::handle stride, nb::handle padding,
             bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
          return fn(input, to_spatial(kernel_size, "kernel_size"), to_opt_spatial(stride, "stride"),
                    to_spatial(padding, "padding"), ceil_mode, count_include_pad, divisor_override);
        },
        "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0, "ceil_mode"_a = false,
        "count_include_pad"_a = true, "divisor_override"_a = nb::none());
  };
  avg_pool("avg_pool2d", &avg_pool2d);
  avg_pool("avg_pool3d", &avg_pool3d);
  using LpFn = Tensor (*)(const Tensor&, double, SpatialArg, std::optional<SpatialArg>, bool);
  auto lp_pool = [&](const char* name, LpFn fn) {
    b.F.def(
        name,
        [fn](const Tensor& input, double norm_type, nb::handle kernel_size, nb::handle stride,
             bool ceil_mode) {
          return fn(input, norm_type, to_spatial(kernel_size, "kernel_size"),
                    to_opt_spatial(stride, "stride"), ceil_mode);
        },
        "input"_a, "norm_type"_a, "kernel_size"_a, "stride"_a = nb::none(), "ceil_mode"_a = false);
  };
  lp_pool("lp_pool1d", &lp_pool1d);
  lp_pool("lp_pool2d", &lp_pool2d);
  b.F.def(
      "adaptive_avg_pool1d",
      [](const Tensor& input, nb::handle output_size) {
        return adaptive_avg_pool1d(input, to_output_size(output_size, input, 1)[0]);
      },
      "input"_a, "output_size"_a);
  b.F.def(
      "adaptive_avg_pool2d",
      [](const Tensor& input, nb::handle output_size) {
        return adaptive_avg_pool2d(input, to_output_size(output_size, input, 2));
      },
      "input"_a, "output_size"_a);
  b.F.def(
      "adaptive_avg_pool3d",
      [](const Tensor& input, nb::handle output_size) {
        return adaptive_avg_pool3d(input, to_output_size(output_size, input, 3));
      },
      "input"_a, "output_size"_a);
  b.F.def(
      "adaptive_max_pool1d",
      [](const Tensor& input, nb::handle output_size, bool return_indices) {
        reject_indices(return_indices, "adaptive_max_pool1d");
        return adaptive_max_pool1d(input, to_output_size(output_size, input, 1)[0]);
      },
      "input"_a, "output_size"_a, "return_indices"_a = false);
  b.F.def(
      "adaptive_max_pool2d",
      [](const Tensor& input, nb::handle output_size, bool return_indices) {
        reject_indices(return_indices, "adaptive_max_pool2d");
        return adaptive_max_pool2d(input, to_output_size(output_size, input, 2));
      },
      "input"_a, "output_size"_a, "return_indices"_a = false);
}

void bind_interpolate(Bindings& b) {
  b.F.def(
      "interpolate",
      [](const Tensor& input, nb::handle size, nb::handle scale_factor, const std::string& mode,
         std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
         bool antialias) {
        if (antialias) throw Error("interpolate: antialias=True is not supported by luminal");
        return interpolate(input, to_opt_size(size), to_scale_factor(scale_factor), mode,
                           align_corners, recompute_scale_factor);
      },
      "input"_a, "size"_a = nb::none(), "scale_factor"_a = nb::none(), "mode"_a = "nearest",
      "align_corners"_a = nb::none(), "recompute_scale_factor"_a = nb::none(),
      "antialias"_a = false);
  b.F.def(
      "upsample_nearest",
      [](const Tensor& input, nb::handle size, nb::handle scale_factor) {
        return upsample_nearest(input, to_opt_size(size), to_scale_factor(scale_factor));
      },
      "input"_a, "size"_a = nb::none(), "scale_factor"_a = nb::none());
  b.F.def(
      "upsample_bilinear",
      [](const Tensor& input, nb::handle size, nb::handle scale_factor) {
        return upsample_bilinear(input, to_opt_size(size), to_scale_factor(scale_factor));
      },
      "input"_a, "size"_a = nb::none(), "scale_factor"_a = nb::none());
}

void bind_attention(Bindings& b) {
  b.F.def("scaled_dot_product_attention", &scaled_dot_product_attention, "query"_a, "key"_a,
          "value"_a, "attn_mask"_a = nb::none(), "dropout_p"_a = 0.0, "is_causal"_a = false,
          "scale"_a = nb::none(), "enable_gqa"_a = false);
  b.F.def("rotate_half", &rotate_half, "x"_a);
  b.F.def(
      "apply_rotary_emb",
      [](const Tensor& x, const Tensor& cos, const Tensor& sin, const std::string& layout) {
        return apply_rotary_emb(x, cos, sin, to_layout(layout));
      },
      "x"_a, "cos"_a, "sin"_a, "layout"_a = "half",
      "Rotate x [..., d] by rotary tables cos / sin [..., r/2] (or HF full-width [..., r]); "
      "layout 'half' (HF rotate_half) or 'interleaved' (GPT-J / Meta).");
  b.F.def(
      "rope_cache",
      [](const Tensor& positions, int64_t dim, double theta, nb::handle dtype) {
        RopeTables t = rope_cache(positions, dim, theta, to_dtype(dtype));
        return std::make_pair(t.cos, t.sin);
      },
      "positions"_a, "dim"_a, "theta"_a = 10000.0, "dtype"_a = "float32",
      "(cos, sin) rotary tables [*positions.shape, dim / 2] for integer positions.");
  b.graph.def(
      "rope_cache",
      [](PyGraph& g, const Expr& seq_len, int64_t dim, double theta, const Expr& offset,
         nb::handle dtype) {
        RopeTables t = rope_cache(*g.g, seq_len, dim, theta, offset, to_dtype(dtype));
        return std::make_pair(t.cos, t.sin);
      },
      "seq_len"_a, "dim"_a, "theta"_a = 10000.0, "offset"_a = 0, "dtype"_a = "float32",
      "(cos, sin) rotary tables [seq_len, dim / 2] for positions offset .. offset + seq_len - 1 "
      "(offset may be a dim name, e.g. the KV-cache length).");
  b.graph.def(
      "causal_mask",
      [](PyGraph& g, const Expr& l, const Expr& s, const Expr& offset) {
        return causal_mask(*g.g, l, s, offset);
      },
      "l"_a, "s"_a, "offset"_a = 0, "Bool [l, s] mask, true where key j <= query i + offset.");
}

// ---- nn modules ---------------------------------------------------------------------
//
// Modules are bound as C++ classes whose constructors keep their Graph alive
// (keep_alive<1, 2>: the graph is the first constructor argument). Every module
// has forward / __call__ and parameters() -> [(name, shape, dtype)].

nb::list parameter_list(const nn::Module& m) {
  nb::list out;
  for (const nn::Parameter& p : m.parameters())
    out.append(
        nb::make_tuple(p.name, shape_to_py(p.tensor.shape()), dtype_py_name(p.tensor.dtype())));
  return out;
}

nb::dict parameter_dict(const nn::Module& m) {
  nb::dict out;
  for (const nn::Parameter& p : m.parameters()) out[p.name.c_str()] = nb::cast(p.tensor);
  return out;
}

nn::AttentionConfig attention_config(int64_t hidden_size, int64_t num_heads, int64_t num_kv_heads,
                                     int64_t head_dim, bool qkv_bias, bool o_bias, bool qk_norm,
                                     double norm_eps, bool rope, double rope_theta,
                                     const std::string& rope_layout, bool causal,
                                     nb::handle dtype) {
  return {.hidden_size = hidden_size,
          .num_heads = num_heads,
          .num_kv_heads = num_kv_heads,
          .head_dim = head_dim,
          .qkv_bias = qkv_bias,
          .o_bias = o_bias,
          .qk_norm = qk_norm,
          .norm_eps = norm_eps,
          .rope = rope,
          .rope_theta = rope_theta,
          .rope_layout = to_layout(rope_layout),
          .causal = causal,
          .dtype = to_dtype(dtype)};
}

nn::TransformerConfig transformer_config(nb::kwargs kw) {
  auto get = [&](const char* key, nb::object dflt) -> nb::object {
    return kw.contains(key) ? nb::borrow(kw[key]) : dflt;
  };
  nn::TransformerConfig c;
  c.attention = attention_config(nb::cast<int64_t>(get("hidden_size", nb::int_(0))),
                                 nb::cast<int64_t>(get("num_heads", nb::int_(0))),
                                 nb::cast<int64_t>(get("num_kv_heads", nb::int_(0))),
                                 nb::cast<int64_t>(get("head_dim", nb::int_(0))),
                                 nb::cast<bool>(get("qkv_bias", nb::bool_(false))),
                                 nb::cast<bool>(get("o_bias", nb::bool_(false))),
                                 nb::cast<bool>(get("qk_norm", nb::bool_(false))),
                                 nb::cast<double>(get("norm_eps", nb::float_(1e-6))),
                                 nb::cast<bool>(get("rope", nb::bool_(true))),
                                 nb::cast<double>(get("rope_theta", nb::float_(10000.0))),
                                 nb::cast<std::string>(get("rope_layout", nb::str("half"))),
                                 nb::cast<bool>(get("causal", nb::bool_(true))),
                                 get("dtype", nb::str("float32")));
  c.intermediate_size = nb::cast<int64_t>(get("intermediate_size", nb::int_(0)));
  c.rms_norm_eps = nb::cast<double>(get("rms_norm_eps", nb::float_(1e-6)));
  c.mlp_bias = nb::cast<bool>(get("mlp_bias", nb::bool_(false)));
  const int64_t experts = nb::cast<int64_t>(get("num_experts", nb::int_(0)));
  if (experts > 0) {
    nn::MoEConfig m;
    m.num_experts = experts;
    m.top_k = nb::cast<int64_t>(get("top_k", nb::int_(2)));
    m.norm_topk_prob = nb::cast<bool>(get("norm_topk_prob", nb::bool_(true)));
    m.intermediate_size =
        nb::cast<int64_t>(get("moe_intermediate_size", nb::int_(c.intermediate_size)));
    c.moe = m;
  }
  static const char* known[] = {"hidden_size",
                                "num_heads",
                                "num_kv_heads",
                                "head_dim",
                                "qkv_bias",
                                "o_bias",
                                "qk_norm",
                                "norm_eps",
                                "rope",
                                "rope_theta",
                                "rope_layout",
                                "causal",
                                "dtype",
                                "intermediate_size",
                                "rms_norm_eps",
                                "mlp_bias",
                                "num_experts",
                                "top_k",
                                "norm_topk_prob",
                                "moe_intermediate_size",
                                "vocab_size",
                                "num_layers",
                                "tie_word_embeddings",
                                "prefix"};
  for (auto [key, value] : kw) {
    std::string k = nb::cast<std::string>(key);
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) throw nb::type_error(("unexpected keyword argument '" + k + "'").c_str());
  }
  return c;
}

nb::tuple cache_tuple(const nn::KVCache& c) {
  return nb::make_tuple(nb::cast(c.k), nb::cast(c.v));
}

nn::KVCache to_cache(nb::handle h) {
  nb::tuple t = nb::cast<nb::tuple>(h);
  if (t.size() != 2) throw ShapeError("a KV cache is a (k_cache, v_cache) pair");
  return {nb::cast<Tensor>(t[0]), nb::cast<Tensor>(t[1])};
}

template <class M>
nb::class_<M, nn::Module> module_class(Bindings& b, const char* name, const char* doc) {
  nb::class_<M, nn::Module> cls(b.nn, name, doc);
  cls.def(
         "forward", [](const M& m, const Tensor& x) { return m.forward(x); }, "input"_a)
      .def(
          "__call__", [](const M& m, const Tensor& x) { return m.forward(x); }, "input"_a);
  return cls;
}

template <class M>
void bind_conv_module(Bindings& b, const char* name, const char* doc) {
  module_class<M>(b, name, doc)
      .def(
          "__init__",
          [](M* self, PyGraph& g, const std::string& n, int64_t in_channels, int64_t out_channels,
             nb::handle kernel_size, nb::handle stride, nb::handle padding, nb::handle dilation,
             int64_t groups, bool bias, nb::handle dtype) {
            new (self) M(*g.g, n, in_channels, out_channels, to_spatial(kernel_size, "kernel_size"),
                         {.stride = to_spatial(stride, "stride"),
                          .padding = to_padding(padding),
                          .dilation = to_spatial(dilation, "dilation"),
                          .groups = groups,
                          .bias = bias,
                          .dtype = to_dtype(dtype)});
          },
          "graph"_a, "name"_a, "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1,
          "padding"_a = 0, "dilation"_a = 1, "groups"_a = 1, "bias"_a = true, "dtype"_a = "float32",
          nb::keep_alive<1, 2>());
}

// forward / __call__ (no cache, positions offset..), make_cache and step (one
// cached step) of Attention and TransformerBlock.
template <class M>
void def_decoder_methods(nb::class_<M, nn::Module>& cls) {
  auto forward = [](const M& m, const Tensor& x, const Expr& offset) {
    return m.forward(x, offset);
  };
  cls.def("forward", forward, "input"_a, "offset"_a = 0)
      .def("__call__", forward, "input"_a, "offset"_a = 0)
      .def(
          "make_cache",
          [](const M& m, const Expr& batch, const Expr& max_len) {
            return cache_tuple(m.make_cache(batch, max_len));
          },
          "batch"_a, "max_len"_a,
          "Persistent inputs <name>.k_cache / .v_cache [batch, kv_heads, max_len, head_dim].")
      .def(
          "step",
          [](const M& m, const Tensor& x, const Expr& past, nb::handle cache) {
            nn::AttentionStep s = m.forward(x, past, to_cache(cache));
            return nb::make_tuple(nb::cast(s.out), cache_tuple(s.cache));
          },
          "input"_a, "past"_a, "cache"_a,
          "One cached step at positions past .. past + s - 1: (out, (k_cache, v_cache) "
          "updated).");
}

void bind_modules(Bindings& b) {
  nb::class_<nn::Module>(b.nn, "Module",
                         "A module: parameters are persistent graph inputs named <prefix>.<name>.")
      .def("parameters", &parameter_list,
           "[(name, shape, dtype)] of every parameter, in construction order.")
      .def("named_parameters", &parameter_dict, "{name: Tensor} of every parameter.")
      .def_prop_ro("prefix", &nn::Module::prefix);

  module_class<nn::Linear>(b, "Linear", "torch.nn.Linear: weight [out, in], bias [out].")
      .def(
          "__init__",
          [](nn::Linear* self, PyGraph& g, const std::string& name, const Expr& in_features,
             const Expr& out_features, bool bias, nb::handle dtype) {
            new (self) nn::Linear(*g.g, name, in_features, out_features, bias, to_dtype(dtype));
          },
          "graph"_a, "name"_a, "in_features"_a, "out_features"_a, "bias"_a = true,
          "dtype"_a = "float32", nb::keep_alive<1, 2>());
  module_class<nn::Embedding>(b, "Embedding", "torch.nn.Embedding: weight [num, dim].")
      .def(
          "__init__",
          [](nn::Embedding* self, PyGraph& g, const std::string& name, const Expr& num,
             const Expr& dim,
             nb::handle dtype) { new (self) nn::Embedding(*g.g, name, num, dim, to_dtype(dtype)); },
          "graph"_a, "name"_a, "num_embeddings"_a, "embedding_dim"_a, "dtype"_a = "float32",
          nb::keep_alive<1, 2>());
  module_class<nn::LayerNorm>(b, "LayerNorm", "torch.nn.LayerNorm.")
      .def(
          "__init__",
          [](nn::LayerNorm* self, PyGraph& g, const std::string& name, nb::handle shape, double eps,
             bool elementwise_affine, bool bias, nb::handle dtype) {
            new (self) nn::LayerNorm(*g.g, name, to_shape(shape), eps, elementwise_affine, bias,
                                     to_dtype(dtype));
          },
          "graph"_a, "name"_a, "normalized_shape"_a, "eps"_a = 1e-5, "elementwise_affine"_a = true,
          "bias"_a = true, "dtype"_a = "float32", nb::keep_alive<1, 2>());
  module_class<nn::RMSNorm>(b, "RMSNorm", "torch.nn.RMSNorm.")
      .def(
          "__init__",
          [](nn::RMSNorm* self, PyGraph& g, const std::string& name, nb::handle shape,
             std::optional<double> eps, bool elementwise_affine, nb::handle dtype) {
            new (self)
                nn::RMSNorm(*g.g, name, to_shape(shape), eps, elementwise_affine, to_dtype(dtype));
          },
          "graph"_a, "name"_a, "normalized_shape"_a, "eps"_a = nb::none(),
          "elementwise_affine"_a = true, "dtype"_a = "float32", nb::keep_alive<1, 2>());
  bind_conv_module<nn::Conv1d>(b, "Conv1d", "torch.nn.Conv1d (padding_mode='zeros').");
  bind_conv_module<nn::Conv2d>(b, "Conv2d", "torch.nn.Conv2d (padding_mode='zeros').");
  module_class<nn::MLP>(b, "MLP", "fc1 -> activation -> fc2.")
      .def(
          "__init__",
          [](nn::MLP* self, PyGraph& g, const std::string& name, const Expr& in_features,
             const Expr& hidden_features, std::optional<Expr> out_features, const std::string& act,
             bool bias, nb::handle dtype) {
            new (self) nn::MLP(*g.g, name, in_features, hidden_features,
                               out_features.value_or(in_features), act, bias, to_dtype(dtype));
          },
          "graph"_a, "name"_a, "in_features"_a, "hidden_features"_a, "out_features"_a = nb::none(),
          "act"_a = "gelu", "bias"_a = true, "dtype"_a = "float32", nb::keep_alive<1, 2>());
  module_class<nn::SwiGLU>(b, "SwiGLU", "down_proj(silu(gate_proj(x)) * up_proj(x)).")
      .def(
          "__init__",
          [](nn::SwiGLU* self, PyGraph& g, const std::string& name, const Expr& hidden_size,
             const Expr& intermediate_size, bool bias, nb::handle dtype, const std::string& act) {
            new (self)
                nn::SwiGLU(*g.g, name, hidden_size, intermediate_size, bias, to_dtype(dtype), act);
          },
          "graph"_a, "name"_a, "hidden_size"_a, "intermediate_size"_a, "bias"_a = false,
          "dtype"_a = "float32", "act"_a = "silu", nb::keep_alive<1, 2>());
  module_class<nn::MoE>(b, "MoE", "Softmax router + top-k SwiGLU experts (HF Mixtral/Qwen-MoE).")
      .def(
          "__init__",
          [](nn::MoE* self, PyGraph& g, const std::string& name, int64_t hidden_size,
             int64_t intermediate_size, int64_t num_experts, int64_t top_k, bool norm_topk_prob,
             nb::handle dtype) {
            new (self) nn::MoE(*g.g, name,
                               {.hidden_size = hidden_size,
                                .intermediate_size = intermediate_size,
                                .num_experts = num_experts,
                                .top_k = top_k,
                                .norm_topk_prob = norm_topk_prob,
                                .dtype = to_dtype(dtype)});
          },
          "graph"_a, "name"_a, "hidden_size"_a, "intermediate_size"_a, "num_experts"_a,
          "top_k"_a = 2, "norm_topk_prob"_a = true, "dtype"_a = "float32", nb::keep_alive<1, 2>())
      .def("routing_weights", &nn::MoE::routing_weights, "input"_a);

  nb::class_<nn::MultiheadAttention, nn::Module>(
      b.nn, "MultiheadAttention", "torch.nn.MultiheadAttention(batch_first=True), kdim = vdim = E.")
      .def(
          "__init__",
          [](nn::MultiheadAttention* self, PyGraph& g, const std::string& name, int64_t embed_dim,
             int64_t num_heads, bool bias, nb::handle dtype) {
            new (self)
                nn::MultiheadAttention(*g.g, name, embed_dim, num_heads, bias, to_dtype(dtype));
          },
          "graph"_a, "name"_a, "embed_dim"_a, "num_heads"_a, "bias"_a = true, "dtype"_a = "float32",
          nb::keep_alive<1, 2>())
      .def("forward", &nn::MultiheadAttention::forward, "query"_a, "key"_a, "value"_a,
           "key_padding_mask"_a = nb::none(), "attn_mask"_a = nb::none(), "is_causal"_a = false)
      .def("__call__", &nn::MultiheadAttention::forward, "query"_a, "key"_a, "value"_a,
           "key_padding_mask"_a = nb::none(), "attn_mask"_a = nb::none(), "is_causal"_a = false);

  nb::class_<nn::Attention, nn::Module> attention(
      b.nn, "Attention",
      "Decoder attention (HF Llama/Qwen names) with grouped-query heads, RoPE and a KV cache.");
  attention.def(
      "__init__",
      [](nn::Attention* self, PyGraph& g, const std::string& name, int64_t hidden_size,
         int64_t num_heads, int64_t num_kv_heads, int64_t head_dim, bool qkv_bias, bool o_bias,
         bool qk_norm, double norm_eps, bool rope, double rope_theta,
         const std::string& rope_layout, bool causal, nb::handle dtype) {
        new (self) nn::Attention(
            *g.g, name,
            attention_config(hidden_size, num_heads, num_kv_heads, head_dim, qkv_bias, o_bias,
                             qk_norm, norm_eps, rope, rope_theta, rope_layout, causal, dtype));
      },
      "graph"_a, "name"_a, "hidden_size"_a, "num_heads"_a, "num_kv_heads"_a = 0, "head_dim"_a = 0,
      "qkv_bias"_a = false, "o_bias"_a = false, "qk_norm"_a = false, "norm_eps"_a = 1e-6,
      "rope"_a = true, "rope_theta"_a = 10000.0, "rope_layout"_a = "half", "causal"_a = true,
      "dtype"_a = "float32", nb::keep_alive<1, 2>());
  def_decoder_methods(attention);

  nb::class_<nn::TransformerBlock, nn::Module> block(
      b.nn, "TransformerBlock",
      "Pre-norm decoder block: RMSNorm -> attention -> residual -> RMSNorm -> SwiGLU / MoE -> "
      "residual (HF Llama names).");
  block.def(
      "__init__",
      [](nn::TransformerBlock* self, PyGraph& g, const std::string& name, nb::kwargs kw) {
        new (self) nn::TransformerBlock(*g.g, name, transformer_config(kw));
      },
      "graph"_a, "name"_a, "kwargs"_a, nb::keep_alive<1, 2>());
  def_decoder_methods(block);

  nb::class_<nn::LlamaModel, nn::Module>(
      b.nn, "LlamaModel", "model.embed_tokens -> model.layers.<i> -> model.norm -> lm_head.")
      .def(
          "__init__",
          [](nn::LlamaModel* self, PyGraph& g, int64_t vocab_size, int64_t num_layers,
             bool tie_word_embeddings, const std::string& prefix, nb::kwargs kw) {
            nn::LlamaConfig c;
            c.block = transformer_config(kw);
            c.vocab_size = vocab_size;
            c.num_layers = num_layers;
            c.tie_word_embeddings = tie_word_embeddings;
            new (self) nn::LlamaModel(*g.g, c, prefix);
          },
          "graph"_a, "vocab_size"_a, "num_layers"_a, "tie_word_embeddings"_a = false,
          "prefix"_a = "", "kwargs"_a, nb::keep_alive<1, 2>())
      .def(
          "forward", [](const nn::LlamaModel& m, const Tensor& t) { return m.forward(t); },
          "tokens"_a)
      .def(
          "__call__", [](const nn::LlamaModel& m, const Tensor& t) { return m.forward(t); },
          "tokens"_a)
      .def(
          "make_caches",
          [](const nn::LlamaModel& m, const Expr& batch, const Expr& max_len) {
            nb::list out;
            for (const nn::KVCache& c : m.make_caches(batch, max_len)) out.append(cache_tuple(c));
            return out;
          },
          "batch"_a, "max_len"_a)
      .def(
          "step",
          [](const nn::LlamaModel& m, const Tensor& tokens, const Expr& past, nb::list caches) {
            std::vector<nn::KVCache> cs;
            for (nb::handle c : caches) cs.push_back(to_cache(c));
            nn::LlamaModel::Step s = m.forward(tokens, past, cs);
            nb::list updated;
            for (const nn::KVCache& c : s.caches) updated.append(cache_tuple(c));
            return nb::make_tuple(nb::cast(s.logits), updated);
          },
          "tokens"_a, "past"_a, "caches"_a);
  b.nn.def(
      "mark_cache_outputs",
      [](PyGraph& g, nb::handle inputs, nb::handle updated) {
        nn::mark_cache_outputs(*g.g, to_cache(inputs), to_cache(updated));
      },
      "graph"_a, "inputs"_a, "updated"_a,
      "Output the updated caches as '<k_cache input name>.next' / '<v_cache input name>.next'.");
}

}  // namespace

void bind_nn(Bindings& b) {
  bind_convolution(b);
  bind_pooling(b);
  bind_interpolate(b);
  bind_attention(b);
  bind_modules(b);
}

}  // namespace luminal::py
