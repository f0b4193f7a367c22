// The nanobind extension module `luminal._luminal`. The Python package
// `luminal` (python/luminal/__init__.py) re-exports its contents.

#include "bindings.hpp"

NB_MODULE(_luminal, m) {
  using namespace luminal::py;
  m.doc() = "luminal: an ahead-of-time inference compiler (native extension)";
  nb::module_ F = m.def_submodule("F", "Functional ops mirroring torch.nn.functional");
  nb::module_ nn = m.def_submodule("nn", "Neural-network modules mirroring torch.nn");
  Bindings b{m, F, nn, nb::class_<PyTensor>(m, "Tensor"), nb::class_<PyGraph>(m, "Graph")};
  bind_core(b);  // first: exceptions, Graph, Tensor basics the others rely on
  bind_elementwise(b);
  bind_structural(b);
  bind_nn(b);
  bind_tokenizer(b);
  bind_models(b);
}
