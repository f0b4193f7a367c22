// Python bindings of the frontend ops: linalg, movement, indexing, sort.
// owned by F2 (see bindings.hpp for the conventions and python/README-dev.md).
//
// Most ops exist both as `luminal.<name>(input, ...)` (torch.<name>) and as a
// Tensor method (torch.Tensor.<name>); def_both registers the pair with torch's
// argument names. View methods already bound in bind_core.cpp (permute,
// transpose, unsqueeze, squeeze, expand, reshape, view, contiguous, flip, t, mT)
// are only added here as top-level functions.

#include <string>

#include "bindings.hpp"
#include "luminal/error.hpp"
#include "luminal/frontend/indexing.hpp"
#include "luminal/frontend/linalg.hpp"
#include "luminal/frontend/movement.hpp"
#include "luminal/frontend/sorting.hpp"

namespace luminal::py {

using namespace nb::literals;

namespace {

// luminal.<name>(input, ...) and Tensor.<name>(...), same function.
template <typename F, typename... Extra>
void def_both(Bindings& b, const char* name, F f, const Extra&... extra) {
  b.m.def(name, f, "input"_a, extra...);
  b.tensor.def(name, f, extra...);
}

// torch-style varargs: f(1, 2), f((1, 2)) or f([1, 2]).
nb::handle varargs(const nb::args& args) {
  if (args.size() == 1 && !PyUnicode_Check(args[0].ptr()) && PySequence_Check(args[0].ptr()))
    return args[0];
  return args;
}

std::vector<int> int_list(nb::handle h) {
  if (PyIndex_Check(h.ptr())) return {nb::cast<int>(h)};
  std::vector<int> out;
  for (nb::handle x : nb::iter(h)) out.push_back(nb::cast<int>(x));
  return out;
}

std::vector<int64_t> int64_list(nb::handle h) {
  if (PyIndex_Check(h.ptr())) return {nb::cast<int64_t>(h)};
  std::vector<int64_t> out;
  for (nb::handle x : nb::iter(h)) out.push_back(nb::cast<int64_t>(x));
  return out;
}

std::vector<Tensor> tensor_list(nb::handle h) {
  std::vector<Tensor> out;
  for (nb::handle x : nb::iter(h)) out.push_back(nb::cast<Tensor>(x));
  return out;
}

// torch.return_types-like (values, indices) named tuple.
nb::object values_indices(const ValuesIndices& r) {
  static nb::object type =
      nb::module_::import_("collections")
          .attr("namedtuple")("values_indices", nb::make_tuple("values", "indices"));
  return type(r.values, r.indices);
}

PadMode pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "replicate") return PadMode::Replicate;
  if (mode == "circular") return PadMode::Circular;
  throw ShapeError("pad: unknown mode \"" + mode +
                   "\" (expected constant, reflect, replicate or circular)");
}

// A Python (or numpy) scalar as a double: value arguments of scatter / index_fill / pad.
double scalar_value(nb::handle v, const char* op) {
  if (nb::isinstance<PyTensor>(v) || !PyNumber_Check(v.ptr()))
    throw nb::type_error((std::string(op) + ": value must be a number").c_str());
  return nb::cast<double>(v);
}

void bind_linalg(Bindings& b) {
  def_both(b, "matmul", &matmul, "other"_a);
  def_both(b, "mm", &mm, "mat2"_a);
  def_both(b, "bmm", &bmm, "mat2"_a);
  def_both(b, "mv", &mv, "vec"_a);
  def_both(b, "dot", &dot, "tensor"_a);
  def_both(b, "inner", &inner, "other"_a);
  def_both(b, "outer", &outer, "vec2"_a);
  def_both(b, "ger", &outer, "vec2"_a);
  def_both(b, "addmm", &addmm, "mat1"_a, "mat2"_a, nb::kw_only(), "beta"_a = 1.0, "alpha"_a = 1.0);
  def_both(b, "addmv", &addmv, "mat"_a, "vec"_a, nb::kw_only(), "beta"_a = 1.0, "alpha"_a = 1.0);
  def_both(b, "baddbmm", &baddbmm, "batch1"_a, "batch2"_a, nb::kw_only(), "beta"_a = 1.0,
           "alpha"_a = 1.0);
  def_both(b, "addbmm", &addbmm, "batch1"_a, "batch2"_a, nb::kw_only(), "beta"_a = 1.0,
           "alpha"_a = 1.0);
  b.F.def("linear", &linear, "input"_a, "weight"_a, "bias"_a = nb::none());
  b.F.def("bilinear", &bilinear, "input1"_a, "input2"_a, "weight"_a, "bias"_a = nb::none());
  b.m.def(
      "einsum",
      [](const std::string& equation, nb::args operands) {
        if (operands.size() == 1 && PySequence_Check(operands[0].ptr()) &&
            !nb::isinstance<PyTensor>(operands[0]))
          return einsum(equation, tensor_list(operands[0]));
        return einsum(equation, tensor_list(operands));
      },
      "equation"_a, "operands"_a);
  b.m.def(
      "tensordot",
      [](const Tensor& a, const Tensor& c, nb::handle dims) {
        if (PyIndex_Check(dims.ptr())) return tensordot(a, c, nb::cast<int>(dims));
        if (nb::len(dims) != 2) throw ShapeError("tensordot: dims must be an int or two lists");
        return tensordot(a, c, int_list(dims[0]), int_list(dims[1]));
      },
      "a"_a, "b"_a, "dims"_a = 2);
}

void bind_movement(Bindings& b) {
  // Top-level versions of the view methods bound in bind_core.
  b.m.def(
      "reshape", [](const Tensor& x, nb::handle shape) { return reshape(x, to_shape(shape)); },
      "input"_a, "shape"_a);
  b.m.def(
      "permute", [](const Tensor& x, nb::handle dims) { return permute(x, int_list(dims)); },
      "input"_a, "dims"_a);
  b.m.def("transpose", &transpose, "input"_a, "dim0"_a, "dim1"_a);
  b.m.def("swapaxes", &swapaxes, "input"_a, "axis0"_a, "axis1"_a);
  b.m.def("t", &t, "input"_a);
  b.m.def("unsqueeze", &unsqueeze, "input"_a, "dim"_a);
  b.m.def(
      "squeeze",
      [](const Tensor& x, nb::handle dim) {
        return dim.is_none() ? squeeze(x) : squeeze(x, int_list(dim));
      },
      "input"_a, "dim"_a = nb::none());
  b.m.def(
      "flip", [](const Tensor& x, nb::handle dims) { return flip(x, int_list(dims)); }, "input"_a,
      "dims"_a);

  def_both(b, "flatten", &flatten, "start_dim"_a = 0, "end_dim"_a = -1);
  def_both(b, "ravel", &ravel);
  def_both(
      b, "unflatten",
      [](const Tensor& x, int dim, nb::handle sizes) { return unflatten(x, dim, to_shape(sizes)); },
      "dim"_a, "sizes"_a);
  def_both(b, "swapdims", &swapdims, "dim0"_a, "dim1"_a);
  def_both(
      b, "movedim",
      [](const Tensor& x, nb::handle src, nb::handle dst) {
        return movedim(x, int_list(src), int_list(dst));
      },
      "source"_a, "destination"_a);
  def_both(
      b, "moveaxis",
      [](const Tensor& x, nb::handle src, nb::handle dst) {
        return moveaxis(x, int_list(src), int_list(dst));
      },
      "source"_a, "destination"_a);
  def_both(
      b, "broadcast_to",
      [](const Tensor& x, nb::handle shape) { return broadcast_to(x, to_shape(shape)); }, "size"_a);
  b.m.def("broadcast_tensors", [](nb::args xs) { return broadcast_tensors(tensor_list(xs)); });
  b.m.def("atleast_1d", &atleast_1d, "input"_a);
  b.m.def("atleast_2d", &atleast_2d, "input"_a);
  b.m.def("atleast_3d", &atleast_3d, "input"_a);
  b.tensor.def("repeat",
               [](const Tensor& x, nb::args sizes) { return repeat(x, to_shape(varargs(sizes))); });
  def_both(
      b, "tile", [](const Tensor& x, nb::handle dims) { return tile(x, to_shape(dims)); },
      "dims"_a);
  def_both(b, "repeat_interleave", &repeat_interleave, "repeats"_a, "dim"_a = nb::none());
  def_both(b, "narrow", &narrow, "dim"_a, "start"_a, "length"_a);
  def_both(b, "select", &select, "dim"_a, "index"_a);
  b.tensor.def("unfold", &unfold, "dimension"_a, "size"_a, "step"_a);

  auto cat_fn = [](nb::handle tensors, int dim) { return cat(tensor_list(tensors), dim); };
  b.m.def("cat", cat_fn, "tensors"_a, "dim"_a = 0);
  b.m.def("concat", cat_fn, "tensors"_a, "dim"_a = 0);
  b.m.def("concatenate", cat_fn, "tensors"_a, "axis"_a = 0);
  b.m.def(
      "stack", [](nb::handle xs, int dim) { return stack(tensor_list(xs), dim); }, "tensors"_a,
      "dim"_a = 0);
  b.m.def(
      "hstack", [](nb::handle xs) { return hstack(tensor_list(xs)); }, "tensors"_a);
  b.m.def(
      "vstack", [](nb::handle xs) { return vstack(tensor_list(xs)); }, "tensors"_a);
  b.m.def(
      "dstack", [](nb::handle xs) { return dstack(tensor_list(xs)); }, "tensors"_a);
  b.m.def(
      "column_stack", [](nb::handle xs) { return column_stack(tensor_list(xs)); }, "tensors"_a);
  def_both(
      b, "split",
      [](const Tensor& x, nb::handle size, int dim) {
        if (PyIndex_Check(size.ptr())) return split(x, Expr(nb::cast<int64_t>(size)), dim);
        return split(x, to_shape(size), dim);
      },
      "split_size_or_sections"_a, "dim"_a = 0);
  def_both(
      b, "split_with_sizes",
      [](const Tensor& x, nb::handle sizes, int dim) { return split(x, to_shape(sizes), dim); },
      "split_sizes"_a, "dim"_a = 0);
  def_both(b, "chunk", &chunk, "chunks"_a, "dim"_a = 0);
  def_both(b, "tensor_split", &tensor_split, "sections"_a, "dim"_a = 0);
  def_both(b, "unbind", &unbind, "dim"_a = 0);

  b.F.def(
      "pad",
      [](const Tensor& x, nb::handle p, const std::string& mode, nb::handle value) {
        return pad(x, to_shape(p), pad_mode(mode),
                   value.is_none() ? 0.0 : scalar_value(value, "pad"));
      },
      "input"_a, "pad"_a, "mode"_a = "constant", "value"_a = nb::none());
  def_both(b, "fliplr", &fliplr);
  def_both(b, "flipud", &flipud);
  def_both(
      b, "roll",
      [](const Tensor& x, nb::handle shifts, nb::handle dims) {
        return roll(x, int64_list(shifts), dims.is_none() ? std::vector<int>{} : int_list(dims));
      },
      "shifts"_a, "dims"_a = nb::none());
  def_both(
      b, "rot90",
      [](const Tensor& x, int64_t k, nb::handle dims) { return rot90(x, k, int_list(dims)); },
      "k"_a = 1, "dims"_a = nb::make_tuple(0, 1));
  def_both(b, "diagonal", &diagonal, "offset"_a = 0, "dim1"_a = 0, "dim2"_a = 1);
  def_both(b, "diag_embed", &diag_embed, "offset"_a = 0, "dim1"_a = -2, "dim2"_a = -1);
  def_both(b, "diag", &diag, "diagonal"_a = 0);
  def_both(b, "trace", &trace);
  def_both(b, "clone", &clone);
}

void bind_indexing(Bindings& b) {
  def_both(b, "gather", &gather, "dim"_a, "index"_a);
  def_both(b, "take_along_dim", &take_along_dim, "indices"_a, "dim"_a = nb::none());
  def_both(b, "index_select", &index_select, "dim"_a, "index"_a);
  def_both(b, "take", &take, "index"_a);
  b.F.def(
      "embedding",
      [](const Tensor& input, const Tensor& weight, nb::handle padding_idx) {
        (void)padding_idx;  // only affects gradients in torch
        return embedding(input, weight);
      },
      "input"_a, "weight"_a, "padding_idx"_a = nb::none());
  def_both(
      b, "scatter",
      [](const Tensor& x, int dim, const Tensor& index, nb::handle src) {
        if (nb::isinstance<PyTensor>(src)) return scatter(x, dim, index, nb::cast<Tensor>(src));
        return scatter(x, dim, index, scalar_value(src, "scatter"));
      },
      "dim"_a, "index"_a, "src"_a);
  def_both(b, "scatter_add", &scatter_add, "dim"_a, "index"_a, "src"_a);
  def_both(b, "index_copy", &index_copy, "dim"_a, "index"_a, "source"_a);
  def_both(b, "index_add", &index_add, "dim"_a, "index"_a, "source"_a, nb::kw_only(),
           "alpha"_a = 1.0);
  def_both(
      b, "index_fill",
      [](const Tensor& x, int dim, const Tensor& index, nb::handle v) {
        return index_fill(x, dim, index, scalar_value(v, "index_fill"));
      },
      "dim"_a, "index"_a, "value"_a);
  def_both(
      b, "index_put",
      [](const Tensor& x, nb::handle indices, const Tensor& values, bool accumulate) {
        std::vector<std::optional<Tensor>> idx;
        for (nb::handle h : nb::iter(indices))
          idx.push_back(h.is_none() ? std::nullopt : std::optional<Tensor>(nb::cast<Tensor>(h)));
        return index_put(x, idx, values, accumulate);
      },
      "indices"_a, "values"_a, "accumulate"_a = false);
}

void bind_sorting(Bindings& b) {
  def_both(
      b, "sort",
      [](const Tensor& x, int dim, bool descending, bool stable) {
        return values_indices(sort(x, dim, descending, stable));
      },
      "dim"_a = -1, "descending"_a = false, nb::kw_only(), "stable"_a = false);
  def_both(b, "argsort", &argsort, "dim"_a = -1, "descending"_a = false, nb::kw_only(),
           "stable"_a = false);
  def_both(b, "msort", &msort);
  def_both(
      b, "topk",
      [](const Tensor& x, int64_t k, int dim, bool largest, bool sorted) {
        return values_indices(topk(x, k, dim, largest, sorted));
      },
      "k"_a, "dim"_a = -1, "largest"_a = true, "sorted"_a = true);
  def_both(
      b, "kthvalue",
      [](const Tensor& x, int64_t k, int dim, bool keepdim) {
        return values_indices(kthvalue(x, k, dim, keepdim));
      },
      "k"_a, "dim"_a = -1, "keepdim"_a = false);
  def_both(
      b, "median",
      [](const Tensor& x, nb::handle dim, bool keepdim) -> nb::object {
        if (dim.is_none()) return nb::cast(median(x));
        return values_indices(median(x, nb::cast<int>(dim), keepdim));
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  def_both(
      b, "nanmedian",
      [](const Tensor& x, nb::handle dim, bool keepdim) -> nb::object {
        if (dim.is_none()) return nb::cast(nanmedian(ravel(x), 0).values.reshape({}));
        return values_indices(nanmedian(x, nb::cast<int>(dim), keepdim));
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
}

}  // namespace

void bind_structural(Bindings& b) {
  bind_linalg(b);
  bind_movement(b);
  bind_indexing(b);
  bind_sorting(b);
}

}  // namespace luminal::py
