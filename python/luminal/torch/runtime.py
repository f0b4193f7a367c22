"""A compiled luminal program called with torch tensors.

`Program` owns the luminal CompiledModel of one FX graph and converts at the boundary:
torch tensors in (bfloat16 through float32 arrays, as the Python API wants), torch tensors
out with torch's dtypes (int64 stays int64, bool stays bool). Every tensor input is a
persistent luminal input: it is copied in only when the caller passes a different tensor
object or changed it in place (torch's version counter), so weights are bound once and a
KV cache is rebound only after it was written.
"""

from __future__ import annotations

import time
import weakref

import numpy as np
import sympy
import torch

from .translate import LuminalTorchError, Translator, _expr

# Module-level counters (tests count compiles: compile once, run many).
counters = {"compiles": 0, "runs": 0, "compile_ms": 0.0}


def reset_counters():
    counters.update(compiles=0, runs=0, compile_ms=0.0)


def _to_numpy(t: torch.Tensor, name: str) -> np.ndarray:
    if t.device.type != "cpu":
        raise LuminalTorchError(
            f"luminal: input '{name}' is on device '{t.device}': luminal's torch front end runs "
            "on the CPU only; move the model and inputs to the CPU (no silent fallback)")
    t = t.detach()
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        t = t.float()  # exact; luminal rounds back to the declared narrow dtype
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t.numpy()


def _from_numpy(a: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    t = torch.from_numpy(a)
    return t if t.dtype == dtype else t.to(dtype)


def _evaluate(expr, values, kind=int):
    """A sympy expression of torch's size symbols at this call's values."""
    return kind(expr.xreplace({s: values[str(s)] for s in expr.free_symbols}))


class Program:
    """The callable handed back to aot_autograd / torch.export: flat args -> flat outputs."""

    def __init__(self, gm: torch.fx.GraphModule, placeholders, device="cpu", options=None):
        t0 = time.perf_counter()
        tr = Translator(gm, placeholders).run()
        self.tr = tr
        self.device = device
        options = dict(options or {})
        # A graph whose outputs are all inputs or views of them computes nothing in luminal.
        self.model = None
        if any(kind == "tensor" for kind, _ in tr.outputs):
            self.model = tr.g.compile(device=device, **options)
            counters["compiles"] += 1
        self.compile_ms = (time.perf_counter() - t0) * 1e3
        counters["compile_ms"] += self.compile_ms
        self.dim_names = set(tr.g.dim_names)
        self.bound = {}  # luminal input name -> (weakref to the tensor, version)
        # Graph constants (get_attr tensors) are fed on the first call, not here: aot_autograd
        # calls the compiler under its FakeTensorMode, where reading a real tensor fails.
        self._pending = dict(tr.consts)

    def _remember(self, name, t):
        try:
            self.bound[name] = (weakref.ref(t), t._version)
        except TypeError:
            self.bound.pop(name, None)

    def _is_bound(self, name, t):
        entry = self.bound.get(name)
        return entry is not None and entry[0]() is t and entry[1] == t._version

    def _symbols(self, args):
        values = {}
        for sym, i in self.tr.sym_args.items():
            values[sym] = int(args[i])
        for sym, (i, axis) in self.tr.sym_dims.items():
            values.setdefault(sym, int(args[i].shape[axis]))
        return values

    def _replay_view(self, args, spec, values):
        """An output that is a view of input `i`: the same ATen view ops replayed on the
        caller's tensor (sizes / offsets evaluated at this call's symbol values)."""
        i, chain = spec
        t = args[i]

        def arg(a, prev):
            if isinstance(a, torch.fx.Node):
                if a is prev:
                    return t
                e = _expr(a.meta.get("val"))
                return _evaluate(e, values or {})
            if isinstance(a, (list, tuple)):
                return type(a)(arg(x, prev) for x in a)
            return a

        prev = chain[0].args[0]
        for node in chain:
            t = node.target(*arg(node.args, prev), **arg(node.kwargs, prev))
            prev = node
        return t

    def __call__(self, *args):
        tr = self.tr
        feed = {name: _to_numpy(t, name) for name, t in self._pending.items()}
        self._pending = {}
        for i, name, kind, dtype, _ in tr.inputs:
            t = args[i]
            if not isinstance(t, torch.Tensor):
                raise LuminalTorchError(f"luminal: argument {i} should be a tensor, got "
                                        f"{type(t).__name__}")
            if t.dtype != dtype:
                raise LuminalTorchError(f"luminal: argument {i} has dtype {t.dtype}, the "
                                        f"compiled graph expects {dtype}")
            if name in feed or not self._is_bound(name, t):
                feed[name] = _to_numpy(t, name)
                self._remember(name, t)
        values = None
        if tr.hidden or self.dim_names or tr.sym_args or tr.sym_dims:
            values = self._symbols(args)
        for name, expr in tr.hidden:
            feed[name] = (np.array(_evaluate(expr, values), dtype=np.int64) if expr.is_integer
                          else np.array(_evaluate(expr, values, float), dtype=np.float64))
        # a symbol that only arrives as a SymInt argument can still size an output
        # (torch.full((2 * n,), ...)); Graph.dim_names lists the input dims only
        dims = {k: v for k, v in (values or {}).items()
                if k in self.dim_names or k in tr.sym_args}
        out = {}
        if self.model is not None:
            try:
                out = self.model.run(feed, dims=dims or None)
            except Exception:
                self.bound.clear()  # nothing is known to be bound after a failed run
                raise
            counters["runs"] += 1
        results = []
        for kind, spec in tr.outputs:
            if kind == "tensor":
                name, dtype = spec
                results.append(_from_numpy(out[name], dtype))
            elif kind == "input":
                results.append(args[spec])
            elif kind == "view":
                results.append(self._replay_view(args, spec, values))
            elif kind == "sym":
                results.append(_evaluate(spec, values) if isinstance(spec, sympy.Basic) else spec)
            elif kind == "value":
                results.append(spec)
            else:
                results.append(None)
        return results
