"""PyTorch front end: ``torch.compile(model, backend="luminal")`` and ``luminal.torch.compile``.

Two entry points share one translator (``translate.py``: ATen op -> luminal frontend ops)
and one runtime (``runtime.py``: a compiled luminal model called with torch tensors):

* the Dynamo backend :func:`luminal_backend`, registered as ``"luminal"`` when this module
  is imported and through the ``torch_dynamo_backends`` entry point (so it also works without
  importing luminal). It runs aot_autograd with the core ATen decompositions, so it receives
  a functionalized ATen graph; AOT's runtime wrapper writes mutated inputs (KV-cache
  ``index_copy_`` / ``copy_``) back into the caller's tensors and returns only the user
  outputs. Options: ``torch.compile(m, backend="luminal", options={"device": "cpu",
  "search_iters": 4, "seed": 0, ...})`` (any ``Graph.compile`` option; ``matmul_precision``
  follows ``torch.get_float32_matmul_precision()`` unless given: torch's default, "highest",
  keeps every product f32).
* :func:`compile` — ``torch.export`` without Dynamo: weights and buffers become persistent
  inputs bound once; buffer and input mutations are written back after each call.

See docs/TORCH.md for the op coverage and limits.
"""

from __future__ import annotations

import torch
from torch.utils import _pytree as pytree

from .runtime import Program, counters, reset_counters
from .translate import OPS, LuminalTorchError, UnsupportedOpError

__all__ = ["luminal_backend", "compile", "counters", "reset_counters", "LuminalTorchError",
           "UnsupportedOpError", "supported_ops", "LuminalExportedModule"]


def _decompositions():
    from torch._decomp import core_aten_decompositions

    return core_aten_decompositions()


def _matmul_precision():
    """luminal's matmul precision for torch's ``torch.get_float32_matmul_precision()``.

    torch's default, "highest", keeps every product f32; "high" and "medium" allow reduced
    internal precision (TF32, bf16), which luminal's "high" (integer dot products on 16- or
    14-bit roundings) stays within. A compiled model so never rounds more than the user
    allowed eager PyTorch to."""
    return "highest" if torch.get_float32_matmul_precision() == "highest" else "high"


def _split_options(options):
    opts = dict(options or {})
    device = opts.pop("device", "cpu")
    if not isinstance(device, str):
        device = str(device)
    opts.setdefault("matmul_precision", _matmul_precision())
    return device, opts


def _no_backward(gm, example_inputs):
    raise LuminalTorchError(
        "luminal: the torch front end compiles inference graphs only; run the model under "
        "torch.no_grad() / torch.inference_mode() (backward is not supported)")


def luminal_backend(gm: torch.fx.GraphModule, example_inputs, options=None, **kwargs):
    """The Dynamo backend: ``torch.compile(model, backend="luminal", options={...})``."""
    from torch._dynamo.backends.common import aot_autograd

    if kwargs:
        raise TypeError(f"luminal backend: unexpected arguments {sorted(kwargs)} "
                        "(pass compile options as options={...})")
    device, opts = _split_options(options)
    # Fail before tracing when an input lives on another device (no silent CPU fallback).
    for i, t in enumerate(example_inputs):
        if isinstance(t, torch.Tensor) and t.device.type != "cpu":
            raise LuminalTorchError(
                f"luminal: graph input {i} is on device '{t.device}': luminal's torch front end "
                "runs on the CPU only (device='cpu' / 'cpu-jit'); move the model and inputs to "
                "the CPU or use another backend")

    def fw_compiler(fx_gm, fx_inputs):
        kinds = [("sym", None) if isinstance(e, (int, torch.SymInt)) else ("user", None)
                 for e in fx_inputs]
        return Program(fx_gm, kinds, device, opts)

    aot = aot_autograd(fw_compiler=fw_compiler, bw_compiler=_no_backward,
                       decompositions=_decompositions())
    return aot(gm, example_inputs)


class LuminalExportedModule:
    """What :func:`compile` returns: call it like the model (same positional / keyword
    structure as the example inputs); parameters and buffers stay bound in luminal."""

    def __init__(self, ep, program, state):
        self.exported_program = ep
        self.program = program
        self._state = state  # placeholder index -> tensor (parameters, buffers, constants)
        sig = ep.graph_signature
        self._user_positions = [i for i, s in enumerate(sig.input_specs)
                                if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
        self._user_names = {s.arg.name: k for k, s in enumerate(
            s for s in sig.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT)}
        self._n_inputs = len(sig.input_specs)

    def __call__(self, *args, **kwargs):
        from torch.export.graph_signature import OutputKind

        ep = self.exported_program
        flat, spec = pytree.tree_flatten((args, kwargs))
        if spec != ep.call_spec.in_spec:
            raise TypeError(f"luminal: called with {spec}, the model was exported for "
                            f"{ep.call_spec.in_spec}")
        full = [None] * self._n_inputs
        for pos, v in zip(self._user_positions, flat):
            full[pos] = v
        for pos, t in self._state.items():
            full[pos] = t
        outs = self.program(*full)
        user = []
        for s, v in zip(ep.graph_signature.output_specs, outs):
            if s.kind == OutputKind.BUFFER_MUTATION:
                with torch.no_grad():
                    ep.state_dict[s.target].copy_(v)
            elif s.kind == OutputKind.USER_INPUT_MUTATION:
                with torch.no_grad():
                    flat[self._user_names[s.target]].copy_(v)
            elif s.kind == OutputKind.USER_OUTPUT:
                user.append(v)
            else:
                raise LuminalTorchError(f"luminal: unsupported exported output kind {s.kind}")
        return pytree.tree_unflatten(user, ep.call_spec.out_spec)


def compile(model: torch.nn.Module, example_inputs, dynamic_shapes=None, *, example_kwargs=None,
            **options):
    """Export ``model`` with ``torch.export`` (no Dynamo guards) and compile it with luminal.

    ``example_inputs``: a tuple of positional arguments; ``dynamic_shapes``: as for
    ``torch.export.export`` (e.g. ``{"x": {0: torch.export.Dim("batch")}}``); ``options``:
    ``device`` ("cpu" | "cpu-jit") and any ``Graph.compile`` option. Returns a callable
    :class:`LuminalExportedModule`.
    """
    from torch.export.graph_signature import InputKind

    device, opts = _split_options(options)
    args = tuple(example_inputs) if isinstance(example_inputs, (list, tuple)) else (
        example_inputs,)
    for t in pytree.tree_leaves((args, example_kwargs or {})):
        if isinstance(t, torch.Tensor) and t.device.type != "cpu":
            raise LuminalTorchError(
                f"luminal: an example input is on device '{t.device}': luminal's torch front end "
                "runs on the CPU only; move the model and inputs to the CPU")
    with torch.no_grad():
        ep = torch.export.export(model, args, kwargs=example_kwargs,
                                 dynamic_shapes=dynamic_shapes, strict=False)
        ep = ep.run_decompositions(_decompositions())
    kinds, state = [], {}
    placeholders = [n for n in ep.graph_module.graph.nodes if n.op == "placeholder"]
    for i, (s, node) in enumerate(zip(ep.graph_signature.input_specs, placeholders)):
        val = node.meta.get("val")
        if s.kind == InputKind.USER_INPUT:
            kinds.append(("sym", None) if isinstance(val, (int, torch.SymInt)) else ("user", None))
            continue
        if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            t = ep.state_dict[s.target] if s.target in ep.state_dict else ep.constants[s.target]
        elif s.kind in (InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ):
            t = ep.constants[s.target]
        else:
            raise LuminalTorchError(f"luminal: unsupported exported input kind {s.kind}")
        if not isinstance(t, torch.Tensor):
            raise LuminalTorchError(f"luminal: input '{s.target}' is not a tensor")
        state[i] = t.detach() if t.requires_grad else t
        kinds.append(("param", state[i]))
    program = Program(ep.graph_module, kinds, device, opts)
    return LuminalExportedModule(ep, program, state)


def supported_ops():
    """The ATen ops (overload packets / overloads) the translator handles, sorted by name."""
    return sorted({str(k) for k in OPS})


def _register():
    try:
        from torch._dynamo.backends import registry
    except ImportError:  # pragma: no cover - torch without Dynamo
        return
    # When Dynamo loads us through the entry point it registers the function itself after
    # this import; registering here too would be a duplicate.
    if "luminal" in registry._COMPILER_FNS or registry._BACKENDS.get("luminal") is not None:
        return
    registry.register_backend(compiler_fn=luminal_backend, name="luminal")


_register()
