"""ATen FX graph -> luminal graph.

The input is a functionalized ATen graph (from aot_autograd or torch.export, after the
core ATen decompositions): placeholders are tensors (user inputs, lifted parameters and
buffers) or SymInts; every call_function node is an ATen/prims op or a SymInt operator.
Each node becomes luminal frontend ops (the ~300 validated torch-named ops of the Python
package); `OPS` maps an ATen overload packet to its translation.

Symbolic sizes: torch records every dynamic size as a sympy expression over symbols
(`s0`, `s1`, ...). A plain symbol becomes a luminal dim of the same name; a size that is
a compound expression (`s0 + 1`) is avoided where torch's own metadata gives an
equivalent spelling (a slice to the end, a `-1` in view/expand, a narrow of the output's
length). A SymInt used as a tensor *value* (`arange(n) + s0`) becomes a hidden scalar
int64 input fed at run time from the evaluated expression.
"""

from __future__ import annotations

import operator

import sympy
import torch

import luminal as lm

aten = torch.ops.aten
prims = torch.ops.prims


class LuminalTorchError(RuntimeError):
    """An FX graph luminal cannot compile (the message names the node and the op)."""


class UnsupportedOpError(LuminalTorchError, NotImplementedError):
    """An ATen op with no luminal translation."""


def dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def _expr(v):
    """A size (int | SymInt | sympy) as a sympy expression."""
    if isinstance(v, torch.SymInt):
        return sympy.sympify(v.node.expr)
    if isinstance(v, (torch.SymFloat, torch.SymBool)):
        return sympy.sympify(v.node.expr)
    if isinstance(v, sympy.Basic):
        return v
    return sympy.sympify(v)


def _concrete(e):
    """int/float for a constant expression, else the expression itself."""
    if isinstance(e, sympy.Basic) and e.is_number:
        if e.is_Integer:
            return int(e)
        if e is sympy.true or e is sympy.false:
            return bool(e)
        return float(e)
    return e


class _Compound(Exception):
    pass


def dim_of(e):
    """A luminal dim (int or dim name) for a size; raises _Compound for e.g. s0 + 1."""
    if isinstance(e, bool):
        raise _Compound(e)
    if isinstance(e, int):
        return e
    e = _expr(e)
    if e.is_Integer:
        return int(e)
    if isinstance(e, sympy.Symbol):
        return str(e)
    raise _Compound(e)


def meta_shape(node):
    val = node.meta.get("val") if hasattr(node, "meta") else None
    if val is None or not hasattr(val, "shape"):
        return None
    return [_expr(d) for d in val.shape]


class _Unavailable:
    """A value luminal does not compute (max_pool indices...): an error if used."""

    def __init__(self, what):
        self.what = what


class Translator:
    """Builds one luminal Graph from an FX GraphModule.

    `placeholders` gives, per placeholder in order, how the runtime feeds it:
    ("user", None) for a tensor passed on every call, ("param", tensor) for a tensor bound
    once (weights; still checked for changes), ("sym", None) for a SymInt argument.
    """

    def __init__(self, gm: torch.fx.GraphModule, placeholders):
        self.gm = gm
        self.g = lm.Graph()
        self.env = {}
        self.kinds = placeholders
        self.inputs = []  # (placeholder index, luminal name, kind, torch dtype, bound tensor)
        self.sym_args = {}  # symbol name -> placeholder index of a SymInt arg
        self.sym_dims = {}  # symbol name -> (placeholder index, axis)
        self.hidden = []  # (luminal input name, sympy expr): SymInt values used as tensors
        self.consts = []  # (luminal input name, torch tensor): get_attr constants
        self.outputs = []  # output specs, see Program
        self.node = None

    # ---- helpers used by the op table ------------------------------------------------

    def fail(self, msg, cls=LuminalTorchError):
        n = self.node
        where = f" (FX node '{n.name}': {n.format_node()})" if n is not None else ""
        raise cls(f"luminal: {msg}{where}")

    def tensor(self, v, dtype=None):
        """v as a luminal Tensor (python / sympy scalars become constants / hidden inputs)."""
        if isinstance(v, lm.Tensor):
            return v
        if isinstance(v, _Unavailable):
            self.fail(f"{v.what} is not computed by luminal but is used here", UnsupportedOpError)
        if isinstance(v, sympy.Basic):
            c = _concrete(v)
            if isinstance(c, sympy.Basic):
                return self.hidden_scalar(c)
            v = c
        if isinstance(v, (bool, int, float)):
            if dtype is None:
                dtype = "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"
            return self.g.full((), v, dtype=dtype)
        self.fail(f"expected a tensor, got {type(v).__name__}")

    def hidden_scalar(self, e):
        for name, ex in self.hidden:
            if ex == e:
                return self.hidden_inputs[name]
        name = f"sym_{len(self.hidden)}"
        # SymFloat values (1 / sqrt(head_dim) with a dynamic head_dim) are float64 inputs
        t = self.g.input(name, (), dtype="int64" if e.is_integer else "float64")
        self.hidden.append((name, e))
        self.hidden_inputs[name] = t
        return t

    def scalar(self, v):
        """A python / sympy scalar operand (symbolic ones become hidden scalar inputs)."""
        if isinstance(v, sympy.Basic):
            c = _concrete(v)
            return self.hidden_scalar(c) if isinstance(c, sympy.Basic) else c
        return v

    def operand(self, v):
        return v if isinstance(v, lm.Tensor) else self.scalar(v)

    def out_meta(self):
        return self.node.meta.get("val")

    def out_dtype(self):
        val = self.out_meta()
        return dtype_name(val.dtype) if isinstance(val, torch.Tensor) else None

    def in_shape(self, i=0):
        arg = self.node.args[i]
        return meta_shape(arg)

    def size_arg(self, sizes, ref=None):
        """A torch size list as luminal dims; a compound entry becomes -1 (one allowed) or,
        when `ref` (torch shape of the same rank) has the same expression there, -1 too."""
        out, inferred = [], False
        for i, s in enumerate(sizes):
            try:
                out.append(dim_of(s))
            except _Compound:
                if ref is not None and i < len(ref) and _expr(ref[i]) == _expr(s):
                    out.append(-1)
                elif not inferred:
                    out.append(-1)
                    inferred = True
                else:
                    self.fail(f"size {list(map(str, sizes))} has several compound symbolic entries")
        return out

    def carrier(self, e, dtype="int64"):
        """A 1-D zeros tensor whose length is the size expression `e`.

        luminal's Python API names only plain dims, but its shape algebra builds compound
        sizes from ops: a sum is a concatenation, a product the flattened outer sum, `e - c`
        a slice dropping c elements and `e // c` a strided slice. Used to spell the sizes of
        creation ops, aranges and slices torch gives as compound expressions (`s0 + 1`)."""
        e = _expr(e)
        if e.is_Integer and int(e) >= 0:
            return self.g.zeros((int(e),), dtype=dtype)
        if isinstance(e, sympy.Symbol):
            return self.g.zeros((str(e),), dtype=dtype)
        if isinstance(e, sympy.Add):
            const = int(sum(t for t in e.args if t.is_Integer))
            terms = [t for t in e.args if not t.is_Integer]
            if const > 0:
                terms.append(sympy.Integer(const))
            out = lm.cat([self.carrier(t, dtype) for t in terms], 0) if len(terms) > 1 else (
                self.carrier(terms[0], dtype))
            return out[:const] if const < 0 else out
        if isinstance(e, sympy.Mul):
            parts = [self.carrier(f, dtype) for f in e.args]
            out = parts[0]
            for p in parts[1:]:
                out = (out.unsqueeze(1) + p.unsqueeze(0)).flatten()
            return out
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
            return self.carrier(sympy.Mul(*[e.base] * int(e.exp), evaluate=False), dtype)
        if type(e).__name__ == "FloorDiv" and e.args[1].is_Integer and int(e.args[1]) > 0:
            c = int(e.args[1])
            base = self.carrier(e.args[0], dtype)
            return base[c - 1::c] if c > 1 else base
        raise _Compound(e)

    def zeros_of(self, shape, dtype):
        """Zeros of a torch shape whose entries may be compound expressions (carriers)."""
        plain, extra = [], []
        for axis, d in enumerate(shape):
            try:
                plain.append(dim_of(d))
            except _Compound:
                plain.append(1)
                extra.append(axis)
        out = self.g.zeros(tuple(plain), dtype=dtype)
        for axis in extra:
            c = self.carrier(shape[axis], dtype)
            for _ in range(axis):
                c = c.unsqueeze(0)
            for _ in range(len(shape) - axis - 1):
                c = c.unsqueeze(-1)
            out = out + c
        return out

    def arange_of(self, e):
        """int64 0, 1, ..., e - 1 for a size expression e."""
        try:
            return self.g.arange(dim_of(e), dtype="int64")
        except _Compound:
            return lm.ones_like(self.carrier(e), dtype="int64").cumsum(0) - 1

    def out_dims(self, axes=None):
        """The output's shape (from torch's metadata) as luminal dims."""
        shape = meta_shape(self.node)
        sel = shape if axes is None else [shape[a] for a in axes]
        try:
            return [dim_of(d) for d in sel]
        except _Compound as e:
            self.fail(f"output size {e} is a compound symbolic expression luminal's Python API "
                      "cannot spell here")

    # ---- graph walk ------------------------------------------------------------------

    def run(self):
        self.hidden_inputs = {}
        ph_index = 0
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self.env[node] = self.placeholder(node, ph_index)
                ph_index += 1
            elif node.op == "get_attr":
                self.env[node] = self.get_attr(node)
            elif node.op == "call_function":
                self.env[node] = self.call(node)
            elif node.op == "output":
                self.output(node)
            else:
                self.fail(f"unsupported FX node kind '{node.op}'", UnsupportedOpError)
        self.node = None
        return self

    def placeholder(self, node, i):
        kind, bound = self.kinds[i]
        val = node.meta.get("val")
        if isinstance(val, (torch.SymInt, int)) or kind == "sym":
            e = _expr(val)
            if isinstance(e, sympy.Symbol):
                self.sym_args.setdefault(str(e), i)
            return _concrete(e)
        if isinstance(val, (torch.SymFloat, torch.SymBool, float, bool)):
            self.fail("SymFloat / SymBool graph inputs are not supported", UnsupportedOpError)
        if not isinstance(val, torch.Tensor):
            self.fail(f"unsupported graph input of type {type(val).__name__}", UnsupportedOpError)
        if val.device.type != "cpu":
            self.fail(f"input '{node.name}' is on device '{val.device}': luminal's torch "
                      "front end runs on the CPU only (device='cpu' / 'cpu-jit'); move the model "
                      "and inputs to the CPU or use another backend")
        if val.is_sparse or val.is_quantized or val.is_complex():
            self.fail(f"input '{node.name}' ({val.dtype}, layout {val.layout}) is not supported")
        shape = []
        for axis, d in enumerate(val.shape):
            e = _expr(d)
            try:
                shape.append(dim_of(e))
            except _Compound:
                self.fail(f"input '{node.name}' has a compound symbolic size {e}; mark plain "
                          "dims dynamic instead", UnsupportedOpError)
            if isinstance(e, sympy.Symbol):
                self.sym_dims.setdefault(str(e), (i, axis))
        name = f"in{i}_{node.name}"
        # Every tensor input is persistent: it stays bound between calls and is rebound
        # only when the caller passes another tensor or mutates it (version counter), so
        # weights are copied in once.
        t = self.g.input(name, tuple(shape), dtype=dtype_name(val.dtype), persistent=True)
        self.inputs.append((i, name, kind, val.dtype, bound))
        return t

    def get_attr(self, node):
        value = getattr(self.gm, node.target) if not hasattr(self, "attrs") else self.attrs[node.target]
        if not isinstance(value, torch.Tensor):
            return value
        name = f"const{len(self.consts)}"
        shape = tuple(int(d) for d in value.shape)
        t = self.g.input(name, shape, dtype=dtype_name(value.dtype), persistent=True)
        self.consts.append((name, value))
        return t

    def load(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.load(x) for x in a)
        if isinstance(a, dict):
            return {k: self.load(v) for k, v in a.items()}
        if isinstance(a, (torch.SymInt, torch.SymFloat)):
            return _concrete(_expr(a))
        return a

    def call(self, node):
        target = node.target
        val = node.meta.get("val")
        # SymInt arithmetic (sym_size, operator.add, ...): torch already knows the result
        # as an expression of the input symbols.
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return _concrete(_expr(val))
        if target is operator.getitem:
            seq = self.load(node.args[0])
            return seq[node.args[1]]
        if target in _NOOP:
            return None
        packet = getattr(target, "overloadpacket", None)
        fn = OPS.get(target) or OPS.get(packet)
        if fn is None:
            if isinstance(val, (int, float, bool)):
                return val  # a constant-folded python scalar
            name = str(target)
            self.fail(f"unsupported ATen op '{name}'", UnsupportedOpError)
        args = self.load(node.args)
        kwargs = self.load(node.kwargs)
        try:
            out = fn(self, *args, **kwargs)
        except (LuminalTorchError, lm.Error):
            raise
        except _Compound as e:
            self.fail(f"'{target}': size {e} is a compound symbolic expression", UnsupportedOpError)
        return self.conform(out, val)

    def conform(self, out, val):
        """Casts to torch's result dtype (torch's metadata is the oracle) and checks ranks."""
        if isinstance(out, lm.Tensor) and isinstance(val, torch.Tensor):
            if out.ndim != val.dim():
                self.fail(f"internal: luminal result has rank {out.ndim} (shape {out.shape}), "
                          f"torch expects {tuple(val.shape)}")
            want = dtype_name(val.dtype)
            if out.dtype != want:
                out = out.to(want)
            return out
        if isinstance(out, (list, tuple)) and isinstance(val, (list, tuple)):
            return type(out)(self.conform(o, v) for o, v in zip(out, val))
        return out

    def output(self, node):
        (results,) = node.args
        if not isinstance(results, (list, tuple)):
            results = (results,)
        placeholders = {n: i for i, n in enumerate(n for n in self.gm.graph.nodes
                                                   if n.op == "placeholder")}
        for k, r in enumerate(results):
            if r is None:
                self.outputs.append(("none", None))
                continue
            if isinstance(r, torch.fx.Node) and r in placeholders and isinstance(
                    self.env[r], lm.Tensor):
                self.outputs.append(("input", placeholders[r]))
                continue
            chain = _view_chain(r, placeholders)
            if chain is not None:
                self.outputs.append(("view", chain))
                continue
            v = self.load(r)
            if isinstance(v, lm.Tensor):
                name = f"out{k}"
                self.g.output(name, v)
                self.outputs.append(("tensor", (name, r.meta["val"].dtype)))
            elif isinstance(v, sympy.Basic):
                self.outputs.append(("sym", v))
            elif isinstance(v, (int, float, bool)):
                self.outputs.append(("value", v))
            else:
                self.fail(f"unsupported graph output {type(v).__name__}", UnsupportedOpError)


def _view_chain(node, placeholders):
    """(placeholder index, [view nodes]) when `node` is a chain of ATen views of a graph
    input, else None. Such an output aliases the caller's tensor: AOT regenerates it from
    the input with the returned tensor's strides and storage offset, so the runtime must
    return a real torch view (replayed on the input), not a fresh luminal buffer."""
    chain = []
    while isinstance(node, torch.fx.Node) and node not in placeholders:
        target = node.target
        if node.op != "call_function" or not getattr(target, "is_view", False):
            return None
        chain.append(node)
        node = node.args[0]
    if not chain or not isinstance(node.meta.get("val"), torch.Tensor):
        return None
    return placeholders[node], chain[::-1]


# ---- the op table ---------------------------------------------------------------------

OPS = {}
_NOOP = {
    aten._assert_async.msg if hasattr(aten._assert_async, "msg") else aten._assert_async,
    aten.sym_constrain_range_for_size.default,
    aten._assert_scalar.default,
}
for _name in ("_assert_tensor_metadata", "sym_constrain_range", "_print"):
    if hasattr(aten, _name):
        _NOOP.add(getattr(aten, _name).default)


def op(*targets):
    def deco(fn):
        for t in targets:
            OPS[t] = fn
        return fn

    return deco


def _unary(method):
    return lambda T, x, *a, **k: getattr(T.tensor(x), method)()


for _aten, _method in {
    "abs": "abs", "neg": "neg", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
    "sigmoid": "sigmoid", "relu": "relu", "erf": "erf", "erfc": "erfc", "floor": "floor",
    "ceil": "ceil", "trunc": "trunc", "sign": "sign", "reciprocal": "reciprocal",
    "logical_not": "logical_not", "bitwise_not": "bitwise_not", "isnan": "isnan",
    "isinf": "isinf", "silu": "silu", "frac": "frac", "signbit": "signbit",
    "isfinite": "isfinite", "square": "square",
}.items():
    if hasattr(aten, _aten):
        OPS[getattr(aten, _aten)] = _unary(_method)


@op(aten.round)
def _round(T, x, decimals=0):
    return T.tensor(x).round() if decimals == 0 else lm.round(T.tensor(x), decimals=decimals)


@op(aten.gelu)
def _gelu(T, x, approximate="none"):
    return lm.F.gelu(T.tensor(x), approximate=approximate)


@op(aten.hardtanh)
def _hardtanh(T, x, min_val=-1.0, max_val=1.0):
    return lm.F.hardtanh(T.tensor(x), min_val, max_val)


@op(aten.leaky_relu)
def _leaky_relu(T, x, negative_slope=0.01):
    return lm.F.leaky_relu(T.tensor(x), negative_slope)


@op(aten.elu)
def _elu(T, x, alpha=1.0, scale=1.0, input_scale=1.0):
    if scale != 1.0 or input_scale != 1.0:
        T.fail("elu with scale/input_scale is not supported", UnsupportedOpError)
    return lm.F.elu(T.tensor(x), alpha)


@op(aten.hardswish)
def _hardswish(T, x):
    return lm.F.hardswish(T.tensor(x))


@op(aten.hardsigmoid)
def _hardsigmoid(T, x):
    return lm.F.hardsigmoid(T.tensor(x))


@op(aten.softplus)
def _softplus(T, x, beta=1, threshold=20):
    return lm.F.softplus(T.tensor(x), beta, threshold)


@op(aten.mish)
def _mish(T, x):
    return lm.F.mish(T.tensor(x))


def _binary(fn):
    def tr(T, a, b, **kw):
        if not isinstance(a, lm.Tensor) and not isinstance(b, lm.Tensor):
            a = T.tensor(a)
        return fn(T.operand(a), T.operand(b))

    return tr


for _aten, _fn in {
    "mul": operator.mul, "div": operator.truediv, "true_divide": operator.truediv,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "remainder": operator.mod,
    "floor_divide": operator.floordiv, "bitwise_and": lm.bitwise_and,
    "bitwise_or": lm.bitwise_or, "bitwise_xor": lm.bitwise_xor,
    "logical_and": lm.logical_and, "logical_or": lm.logical_or, "logical_xor": lm.logical_xor,
    "maximum": lm.maximum, "minimum": lm.minimum, "fmod": lm.fmod, "pow": operator.pow,
    "fmax": lm.fmax, "fmin": lm.fmin,
}.items():
    OPS[getattr(aten, _aten)] = _binary(_fn)


def _tensorize_pair(T, a, b):
    """Functions like lm.maximum take tensors only: make the scalar side a constant of the
    tensor side's dtype (torch's scalar promotion keeps the tensor's category)."""
    if isinstance(a, lm.Tensor) and not isinstance(b, lm.Tensor):
        b = T.tensor(T.scalar(b), dtype=a.dtype)
    elif isinstance(b, lm.Tensor) and not isinstance(a, lm.Tensor):
        a = T.tensor(T.scalar(a), dtype=b.dtype)
    return a, b


for _aten in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
              "logical_xor", "maximum", "minimum", "fmod", "fmax", "fmin"):
    _f = getattr(lm, _aten)
    OPS[getattr(aten, _aten)] = (lambda f: lambda T, a, b: f(*_tensorize_pair(T, a, b)))(_f)


@op(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(T, a, b, rounding_mode=None):
    a, b = T.operand(a), T.operand(b)
    if not isinstance(a, lm.Tensor):
        a = T.tensor(a)
    return lm.div(a, b, rounding_mode=rounding_mode)


@op(aten.add)
def _add(T, a, b, alpha=1):
    if not isinstance(a, lm.Tensor) and not isinstance(b, lm.Tensor):
        a = T.tensor(a)
    a, b = T.operand(a), T.operand(b)
    return a + (b * alpha if alpha != 1 else b)


@op(aten.sub)
def _sub(T, a, b, alpha=1):
    if not isinstance(a, lm.Tensor) and not isinstance(b, lm.Tensor):
        a = T.tensor(a)
    a, b = T.operand(a), T.operand(b)
    return a - (b * alpha if alpha != 1 else b)


@op(aten.rsub)
def _rsub(T, a, b, alpha=1):
    return _sub(T, b, a, alpha)


@op(aten.where)
def _where(T, c, a=None, b=None):
    if a is None:
        T.fail("where(condition) (nonzero) has a data-dependent shape", UnsupportedOpError)
    dt = T.out_dtype()
    return lm.where(T.tensor(c), T.tensor(T.scalar(a), dt), T.tensor(T.scalar(b), dt))


@op(aten.clamp, aten.clip)
def _clamp(T, x, min=None, max=None):
    x = T.tensor(x)
    lo = T.operand(min) if min is not None else None
    hi = T.operand(max) if max is not None else None
    return lm.clamp(x, lo, hi)


@op(aten.clamp_min)
def _clamp_min(T, x, m):
    return lm.clamp(T.tensor(x), T.operand(m), None)


@op(aten.clamp_max)
def _clamp_max(T, x, m):
    return lm.clamp(T.tensor(x), None, T.operand(m))


@op(aten.masked_fill)
def _masked_fill(T, x, mask, value):
    x = T.tensor(x)
    return lm.where(T.tensor(mask), T.tensor(T.scalar(value), x.dtype), x)


@op(aten.lerp)
def _lerp(T, a, b, w):
    return lm.lerp(T.tensor(a), T.tensor(b), T.operand(w))


@op(aten.addcmul)
def _addcmul(T, x, a, b, value=1):
    return T.tensor(x) + T.tensor(a) * T.tensor(b) * value


@op(aten.addcdiv)
def _addcdiv(T, x, a, b, value=1):
    return T.tensor(x) + T.tensor(a) / T.tensor(b) * value


# ---- dtype / copies -------------------------------------------------------------------


def _check_device(T, device):
    if device is not None and torch.device(device).type != "cpu":
        T.fail(f"a tensor is created on device '{device}': luminal's torch front end runs on the "
               "CPU only")


@op(aten._to_copy)
def _to_copy(T, x, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    _check_device(T, device)
    x = T.tensor(x)
    return x.to(dtype_name(dtype)) if dtype is not None else x


@op(prims.convert_element_type)
def _convert(T, x, dtype):
    return T.tensor(x).to(dtype_name(dtype))


@op(aten.clone, aten.alias, aten.detach, aten.lift_fresh_copy, aten.contiguous,
    aten.lift_fresh, aten.dropout, aten.feature_dropout, aten.alpha_dropout)
def _identity(T, x, *args, **kwargs):
    return T.tensor(x)


@op(aten.native_dropout)
def _native_dropout(T, x, p, train):
    x = T.tensor(x)
    if train and p > 0:
        T.fail("dropout in training mode is not supported (eval mode only)", UnsupportedOpError)
    return x, lm.ones_like(x, dtype="bool")


@op(aten.copy)
def _copy(T, dst, src, non_blocking=False):
    dst, src = T.tensor(dst), T.tensor(src)
    src = src.to(dst.dtype)
    if tuple(src.shape) != tuple(dst.shape):
        src = src + lm.zeros_like(dst)
    return src


# ---- creation -------------------------------------------------------------------------


@op(aten.scalar_tensor)
def _scalar_tensor(T, v, dtype=None, layout=None, device=None, pin_memory=None):
    _check_device(T, device)
    return T.tensor(T.scalar(v), T.out_dtype())


@op(aten.full, aten.empty, aten.zeros, aten.ones, aten.new_full, aten.new_zeros,
    aten.new_ones, aten.new_empty, aten.empty_strided, aten.new_empty_strided)
def _full(T, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None,
          **kw):
    _check_device(T, device)
    name = T.node.target.overloadpacket.__name__
    value = {"full": None, "new_full": None, "ones": 1, "new_ones": 1}.get(name, 0)
    if value is None:
        value = args[-1]
    value = T.scalar(value)
    dt = T.out_dtype()
    try:
        shape = tuple(dim_of(d) for d in meta_shape(T.node))
    except _Compound:  # a size like s0 + 1: zeros built from carriers, plus the value
        return T.zeros_of(meta_shape(T.node), dt) + T.tensor(value, dt).to(dt)
    if isinstance(value, lm.Tensor):
        return value.to(dt).expand(*shape) + lm.zeros_like(T.g.zeros(shape, dtype=dt))
    return T.g.full(shape, value, dtype=dt)


@op(aten.full_like, aten.zeros_like, aten.ones_like, aten.empty_like)
def _full_like(T, x, *args, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None, **kw):
    _check_device(T, device)
    name = T.node.target.overloadpacket.__name__
    value = {"full_like": args[0] if args else None, "ones_like": 1}.get(name, 0)
    value = T.scalar(value)
    x = T.tensor(x)
    out = lm.zeros_like(x, dtype=T.out_dtype())
    if isinstance(value, lm.Tensor):
        return out + value.to(T.out_dtype())
    return lm.full_like(x, value, dtype=T.out_dtype())


@op(aten.arange)
def _arange(T, *args, dtype=None, layout=None, device=None, pin_memory=None, **kw):
    _check_device(T, device)
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else 1
    out_dt = T.out_dtype()
    start, end, step = (T.scalar(v) for v in (start, end, step))
    if all(isinstance(v, (int, float)) for v in (start, end, step)):
        return T.g.arange(start, end, step, dtype=out_dt)
    # Symbolic bounds: the length is torch's output size; values start + i * step.
    idx = T.arange_of(meta_shape(T.node)[0])
    if isinstance(step, lm.Tensor) or step != 1:
        idx = idx * step
    if isinstance(start, lm.Tensor) or start != 0:
        idx = idx + start
    return idx.to(out_dt)


@op(aten.iota) if hasattr(aten, "iota") else (lambda f: f)
def _iota(T, size, *, start, step, dtype, device, requires_grad):
    return (T.arange_of(meta_shape(T.node)[0]) * step + start).to(dtype_name(dtype))


@op(aten.tril)
def _tril(T, x, diagonal=0):
    return T.tensor(x).tril(diagonal)


@op(aten.triu)
def _triu(T, x, diagonal=0):
    return T.tensor(x).triu(diagonal)


# ---- reductions -----------------------------------------------------------------------


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return [dim]
    return list(dim)


def _reduce(method):
    def tr(T, x, dim=None, keepdim=False, dtype=None):
        x = T.tensor(x)
        if dtype is not None:
            x = x.to(dtype_name(dtype))
        dims = _dims(dim)
        if dims is not None and len(dims) == 0:
            dims = None
        return getattr(x, method)(dims, keepdim)

    return tr


for _aten, _method in {"sum": "sum", "mean": "mean", "prod": "prod", "any": "any",
                       "all": "all", "nansum": "nansum"}.items():
    OPS[getattr(aten, _aten)] = _reduce(_method)


@op(aten.amax, aten.amin)
def _amax(T, x, dim=(), keepdim=False):
    x = T.tensor(x)
    dims = _dims(dim) or list(range(x.ndim))  # () reduces every axis
    return getattr(x, T.node.target.overloadpacket.__name__)(dims, keepdim)


@op(aten.max.dim, aten.min.dim)
def _max_dim(T, x, dim, keepdim=False):
    method = T.node.target.overloadpacket.__name__
    return tuple(getattr(T.tensor(x), method)(dim, keepdim))


@op(aten.max.default, aten.min.default)
def _max_all(T, x):
    return getattr(T.tensor(x), T.node.target.overloadpacket.__name__)()


@op(aten.max.other, aten.min.other)
def _max_other(T, a, b):
    return (lm.maximum if T.node.target.overloadpacket.__name__ == "max" else lm.minimum)(
        T.tensor(a), T.tensor(b))


@op(aten.argmax, aten.argmin)
def _argmax(T, x, dim=None, keepdim=False):
    return getattr(T.tensor(x), T.node.target.overloadpacket.__name__)(dim, keepdim)


@op(aten.var, aten.std)
def _var(T, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(unbiased, (list, tuple)):  # var.dim(x, dim, unbiased, keepdim)
        dim, unbiased = unbiased, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    method = T.node.target.overloadpacket.__name__
    return getattr(T.tensor(x), method)(_dims(dim), keepdim=keepdim, correction=correction)


@op(aten.var_mean)
def _var_mean(T, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return tuple(lm.var_mean(T.tensor(x), _dims(dim), keepdim=keepdim, correction=correction))


@op(aten.cumsum, aten.cumprod)
def _cumsum(T, x, dim, dtype=None):
    x = T.tensor(x)
    if dtype is not None:
        x = x.to(dtype_name(dtype))
    return getattr(x, T.node.target.overloadpacket.__name__)(dim)


@op(aten.logsumexp)
def _logsumexp(T, x, dim, keepdim=False):
    return T.tensor(x).logsumexp(_dims(dim), keepdim)


@op(aten._softmax, aten.softmax, aten._log_softmax, aten.log_softmax)
def _softmax(T, x, dim, half_to_float=False, dtype=None):
    x = T.tensor(x)
    if dtype is not None:
        x = x.to(dtype_name(dtype))
    name = T.node.target.overloadpacket.__name__.lstrip("_")  # softmax | log_softmax
    return getattr(x, name)(dim)


# ---- normalization ----------------------------------------------------------------------


@op(aten.native_layer_norm)
def _layer_norm(T, x, normalized_shape, weight, bias, eps):
    x = T.tensor(x)
    shape = tuple(T.size_arg(normalized_shape))
    out = lm.F.layer_norm(x, shape, weight, bias, eps)
    dims = list(range(x.ndim - len(shape), x.ndim))
    # torch returns mean and rstd in the input's dtype (float for reduced precision)
    xf = x.float() if x.dtype in ("float16", "bfloat16") else x
    mean = xf.mean(dims, True)
    rstd = (xf.var(dims, keepdim=True, correction=0) + eps).rsqrt()
    return out, mean, rstd


@op(aten.layer_norm)
def _layer_norm_plain(T, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn=True):
    return lm.F.layer_norm(T.tensor(x), tuple(T.size_arg(normalized_shape)), weight, bias, eps)


@op(aten._native_batch_norm_legit_no_training)
def _batch_norm_eval(T, x, weight, bias, running_mean, running_var, momentum, eps):
    x = T.tensor(x)
    out = lm.F.batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    empty = _Unavailable("batch_norm's saved mean/invstd")
    return out, empty, empty


@op(aten.native_batch_norm, aten._native_batch_norm_legit)
def _batch_norm(T, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if training:
        T.fail("batch_norm in training mode is not supported (eval mode only)",
               UnsupportedOpError)
    return _batch_norm_eval(T, x, weight, bias, running_mean, running_var, momentum, eps)


@op(aten.native_group_norm)
def _group_norm(T, x, weight, bias, n, c, hw, group, eps):
    out = lm.F.group_norm(T.tensor(x), group, weight, bias, eps)
    return out, _Unavailable("group_norm's mean"), _Unavailable("group_norm's rstd")


# ---- linear algebra -------------------------------------------------------------------


@op(aten.mm, aten.bmm, aten.matmul)
def _mm(T, a, b):
    return T.tensor(a) @ T.tensor(b)


@op(aten.addmm)
def _addmm(T, bias, a, b, beta=1, alpha=1):
    prod = T.tensor(a) @ T.tensor(b)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    bias = T.tensor(bias)
    return prod + (bias * beta if beta != 1 else bias)


@op(aten.baddbmm)
def _baddbmm(T, bias, a, b, beta=1, alpha=1):
    return _addmm(T, bias, a, b, beta, alpha)


@op(aten.linear)
def _linear(T, x, w, b=None):
    return lm.F.linear(T.tensor(x), T.tensor(w), b)


@op(aten.convolution)
def _convolution(T, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    x, w = T.tensor(x), T.tensor(w)
    nd = w.ndim - 2
    if nd not in (1, 2, 3):
        T.fail(f"convolution with {nd} spatial dims is not supported", UnsupportedOpError)
    if transposed:
        if nd == 3:
            T.fail("conv_transpose3d is not supported", UnsupportedOpError)
        fn = lm.F.conv_transpose1d if nd == 1 else lm.F.conv_transpose2d
        return fn(x, w, b, list(stride), list(padding), list(output_padding), groups,
                  list(dilation))
    fn = {1: lm.F.conv1d, 2: lm.F.conv2d, 3: lm.F.conv3d}[nd]
    return fn(x, w, b, list(stride), list(padding), list(dilation), groups)


# ---- pooling --------------------------------------------------------------------------


@op(aten.max_pool2d_with_indices, aten.max_pool1d_with_indices, aten.max_pool3d_with_indices)
def _max_pool_idx(T, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    x = T.tensor(x)
    nd = len(kernel_size)
    fn = {1: lm.F.max_pool1d, 2: lm.F.max_pool2d, 3: lm.F.max_pool3d}[nd]
    out = fn(x, list(kernel_size), list(stride) if stride else None, padding, dilation,
             ceil_mode)
    return out, _Unavailable("max_pool indices")


@op(aten.max_pool2d, aten.max_pool1d)
def _max_pool(T, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool_idx(T, x, kernel_size, stride, padding, dilation, ceil_mode)[0]


@op(aten.avg_pool2d, aten.avg_pool1d, aten.avg_pool3d)
def _avg_pool(T, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    x = T.tensor(x)
    nd = len(kernel_size)
    fn = {1: lm.F.avg_pool1d, 2: lm.F.avg_pool2d, 3: lm.F.avg_pool3d}[nd]
    kw = {"divisor_override": divisor_override} if divisor_override is not None and nd > 1 else {}
    return fn(x, list(kernel_size), list(stride) if stride else None, padding, ceil_mode,
              count_include_pad, **kw)


@op(aten._adaptive_avg_pool2d, aten.adaptive_avg_pool2d, aten.adaptive_avg_pool1d,
    aten._adaptive_avg_pool3d)
def _adaptive_avg(T, x, output_size):
    x = T.tensor(x)
    nd = len(output_size)
    fn = {1: lm.F.adaptive_avg_pool1d, 2: lm.F.adaptive_avg_pool2d,
          3: lm.F.adaptive_avg_pool3d}[nd]
    return fn(x, list(output_size))


# ---- movement -------------------------------------------------------------------------


@op(aten.view, aten._unsafe_view, aten.reshape, aten.view_copy, aten._reshape_alias)
def _view(T, x, size, *rest):
    # torch's output shape, not the requested one: it has -1 resolved (luminal's own
    # inference leaves (64 * s) / (16 * s) unsimplified)
    x = T.tensor(x)
    out = meta_shape(T.node)
    try:
        return x.reshape(*[dim_of(d) for d in out])
    except _Compound:
        pass
    groups = _reshape_groups(T.in_shape(), out)
    if groups is None:
        return x.reshape(*T.size_arg(out))
    # A compound output size (12 * s) is a merge of input axes: spell the reshape as
    # flatten / unflatten of axis groups so luminal builds the same product expressions.
    for (i0, i1), (j0, j1) in reversed(groups):
        if i1 - i0 > 1:
            x = x.flatten(i0, i1 - 1)
        if j1 - j0 > 1:
            x = x.unflatten(i0, tuple(T.size_arg(out[j0:j1])))
        elif j1 - j0 == 0:
            x = x.squeeze(i0)
        elif i1 - i0 == 0:
            x = x.unsqueeze(i0)
    return x


def _reshape_groups(src, dst):
    """Consecutive axis groups [(src range), (dst range)] with equal element counts, or None."""
    def divides(a, b):
        return sympy.fraction(sympy.cancel(b / a))[1] == 1

    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        if i < len(src) and j < len(dst):
            i0, j0 = i, j
            p, q = src[i], dst[j]
            i, j = i + 1, j + 1
            while sympy.simplify(p - q) != 0:
                if divides(p, q) and i < len(src):
                    p, i = p * src[i], i + 1
                elif divides(q, p) and j < len(dst):
                    q, j = q * dst[j], j + 1
                else:
                    return None
            groups.append(((i0, i), (j0, j)))
        elif i < len(src):  # trailing size-1 input axes
            if src[i] != 1 or not groups:
                return None
            (a, _), (c, d) = groups[-1]
            groups[-1] = ((a, i + 1), (c, d))
            i += 1
        else:
            if dst[j] != 1 or not groups:
                return None
            (a, b), (c, _) = groups[-1]
            groups[-1] = ((a, b), (c, j + 1))
            j += 1
    return groups


@op(aten.permute)
def _permute(T, x, dims):
    return T.tensor(x).permute(*dims)


@op(aten.transpose)
def _transpose(T, x, d0, d1):
    return T.tensor(x).transpose(d0, d1)


@op(aten.t)
def _t(T, x):
    return T.tensor(x).t()


@op(aten.unsqueeze)
def _unsqueeze(T, x, dim):
    return T.tensor(x).unsqueeze(dim)


@op(aten.squeeze)
def _squeeze(T, x, dim=None):
    x = T.tensor(x)
    if dim is None:
        return x.squeeze()
    dims = _dims(dim)
    # torch ignores dims whose size is not 1; luminal may reject them
    in_shape = T.in_shape()
    keep = [d for d in dims if in_shape[d] == 1]
    return x.squeeze(tuple(keep)) if keep else x


@op(aten.expand)
def _expand(T, x, size, implicit=False):
    x = T.tensor(x)
    ref = T.in_shape()
    # torch aligns the trailing dims; a compound size equal to the input's becomes -1
    pad = len(size) - len(ref)
    ref = [None] * pad + list(ref)
    out = []
    for s, r in zip(size, ref):
        try:
            out.append(dim_of(s))
        except _Compound:
            if r is not None and _expr(r) == _expr(s):
                out.append(-1)
            else:
                raise
    return x.expand(*out)


@op(aten.slice)
def _slice(T, x, dim=0, start=None, end=None, step=1):
    x = T.tensor(x)
    shape = T.in_shape()
    dim = dim % x.ndim
    size = _expr(shape[dim])
    start = _expr(0 if start is None else start)
    if _concrete(start) == 0 and (end is None or sympy.simplify(_expr(end) - size).is_nonnegative
                                  or _concrete(_expr(end)) == 2**63 - 1) and step == 1:
        return x
    # Prefer narrow(start, length) with torch's output length: it keeps luminal's shapes as
    # plain as torch's (python slicing of a symbolic dim yields min/max expressions).
    length = _expr(meta_shape(T.node)[dim])
    if step == 1:
        try:
            s0 = _concrete(start)
            if isinstance(s0, int) and s0 < 0:
                s0 = dim_of(size + s0)
            return x.narrow(dim, s0 if isinstance(s0, int) else dim_of(start), dim_of(length))
        except _Compound:
            pass
    s0, e0 = _concrete(start), None if end is None else _concrete(_expr(end))
    if isinstance(s0, int) and s0 >= 0 and (e0 is None or isinstance(e0, int) and e0 >= 0):
        return x[(slice(None),) * dim + (slice(s0, e0, step),)]
    # Compound bounds (x[:, : n // 2], x[n - k:]): gather the rows start + i * step, i over
    # torch's output length; a negative constant start counts from the end.
    if isinstance(s0, int) and s0 < 0:
        start = size + s0
    rows = T.arange_of(length) * step + T.scalar(sympy.Max(start, 0))
    return x.index_select(dim, rows)


@op(aten.narrow)
def _narrow(T, x, dim, start, length):
    return T.tensor(x).narrow(dim, dim_of(start), dim_of(length))


@op(aten.select)
def _select(T, x, dim, index):
    x = T.tensor(x)
    index = _concrete(_expr(index))
    if isinstance(index, int):
        return x.select(dim, index)
    return x.select(dim, dim_of(index))


@op(aten.cat, aten.concat)
def _cat(T, tensors, dim=0):
    ts = [T.tensor(t) for t in tensors]
    # torch skips legacy empty 1-D tensors in cat
    ts = [t for t in ts if not (t.ndim == 1 and t.shape[0] == 0)] or ts[:1]
    return lm.cat(ts, dim)


@op(aten.stack)
def _stack(T, tensors, dim=0):
    return lm.stack([T.tensor(t) for t in tensors], dim)


@op(aten.split_with_sizes, aten.split_with_sizes_copy)
def _split_with_sizes(T, x, sizes, dim=0):
    return list(lm.split_with_sizes(T.tensor(x), T.size_arg(sizes), dim))


@op(aten.split, aten.split_copy)
def _split(T, x, size, dim=0):
    x = T.tensor(x)
    if isinstance(size, (list, tuple)):
        return list(lm.split_with_sizes(x, T.size_arg(size), dim))
    return list(lm.split(x, dim_of(size), dim))


@op(aten.unbind)
def _unbind(T, x, dim=0):
    return list(lm.unbind(T.tensor(x), dim))


@op(aten.flip)
def _flip(T, x, dims):
    return T.tensor(x).flip(*dims)


@op(aten.roll)
def _roll(T, x, shifts, dims=()):
    return lm.roll(T.tensor(x), list(shifts), list(dims) if dims else None)


@op(aten.repeat)
def _repeat(T, x, repeats):
    return T.tensor(x).repeat(*T.size_arg(repeats))


@op(aten.constant_pad_nd)
def _pad(T, x, pad, value=0):
    return lm.F.pad(T.tensor(x), list(pad), "constant", value)


@op(aten.unfold)
def _unfold(T, x, dim, size, step):
    return T.tensor(x).unfold(dim, size, step)


# ---- indexing -------------------------------------------------------------------------


@op(aten.embedding)
def _embedding(T, weight, indices, padding_idx=-1, scale_grad=False, sparse=False):
    return lm.F.embedding(T.tensor(indices), T.tensor(weight))


@op(aten.index_select)
def _index_select(T, x, dim, index):
    return T.tensor(x).index_select(dim, T.tensor(index))


@op(aten.gather)
def _gather(T, x, dim, index, sparse_grad=False):
    return T.tensor(x).gather(dim, T.tensor(index))


@op(aten.index.Tensor)
def _index(T, x, indices):
    """x[i0, i1, ...] with index tensors (None = full slice), torch's advanced indexing."""
    x = T.tensor(x)
    indices = list(indices) + [None] * (x.ndim - len(indices))
    dims = [d for d, i in enumerate(indices) if i is not None]
    idx = [T.tensor(indices[d]) for d in dims]
    if any(i.dtype == "bool" for i in idx):
        T.fail("boolean mask indexing has a data-dependent shape", UnsupportedOpError)
    in_shape = T.in_shape()
    fixed = []
    for d, i in zip(dims, idx):
        # negative indices count from the end (a symbolic size is a hidden int64 input)
        i = i.long()
        fixed.append(lm.where(i < 0, i + T.scalar(in_shape[d]), i))
    if len(fixed) > 1:
        fixed = list(lm.broadcast_tensors(*fixed))
    rank = fixed[0].ndim
    others = [d for d in range(x.ndim) if d not in dims]
    cur = x.permute(*(dims + others))
    flat = [i.reshape(-1) for i in fixed]
    cur = cur.index_select(0, flat[0])
    for f in flat[1:]:
        shape = [-1] + [1] * (cur.ndim - 1)
        f = f.reshape(*shape) + lm.zeros_like(cur.narrow(1, 0, 1), dtype="int64")
        cur = cur.gather(1, f).squeeze(1)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    pos = dims[0] if adjacent else 0
    if rank == 0:
        cur = cur.squeeze(0)
    elif rank > 1:
        cur = cur.unflatten(0, tuple(T.out_dims(range(pos, pos + rank))))
    if pos:
        cur = cur.movedim(list(range(rank)), list(range(pos, pos + rank)))
    return cur


@op(aten.index_put)
def _index_put(T, x, indices, values, accumulate=False):
    x = T.tensor(x)
    idx = [None if i is None else T.tensor(i) for i in indices]
    values = T.tensor(values, x.dtype).to(x.dtype)
    given = [d for d, i in enumerate(idx) if i is not None]
    if (len(given) == 1 and given[0] > 0 and idx[given[0]].ndim == 1
            and values.ndim == x.ndim):
        # x[:, :, pos] = v (a KV-cache write): luminal's index_put wants the index first,
        # index_copy / index_add take the axis
        d = given[0]
        if accumulate:
            return lm.index_add(x, d, idx[d], values)
        return lm.index_copy(x, d, idx[d], values)
    return lm.index_put(x, idx, values, accumulate)


@op(aten.index_copy)
def _index_copy(T, x, dim, index, source):
    return lm.index_copy(T.tensor(x), dim, T.tensor(index), T.tensor(source))


@op(aten.index_add)
def _index_add(T, x, dim, index, source, alpha=1):
    return lm.index_add(T.tensor(x), dim, T.tensor(index), T.tensor(source), alpha=alpha)


@op(aten.scatter)
def _scatter(T, x, dim, index, src, reduce=None):
    if reduce is not None:
        T.fail(f"scatter with reduce='{reduce}' is not supported", UnsupportedOpError)
    src = src if isinstance(src, lm.Tensor) else T.scalar(src)
    return lm.scatter(T.tensor(x), dim, T.tensor(index), src)


@op(aten.scatter_add)
def _scatter_add(T, x, dim, index, src):
    return lm.scatter_add(T.tensor(x), dim, T.tensor(index), T.tensor(src))


@op(aten.index_fill)
def _index_fill(T, x, dim, index, value):
    return lm.index_fill(T.tensor(x), dim, T.tensor(index), T.scalar(value))


@op(aten.topk)
def _topk(T, x, k, dim=-1, largest=True, sorted=True):
    return tuple(lm.topk(T.tensor(x), k, dim, largest, sorted))


@op(aten.sort)
def _sort(T, x, dim=-1, descending=False, stable=None):
    return tuple(lm.sort(T.tensor(x), dim, descending))


@op(aten.scaled_dot_product_attention,
    aten._scaled_dot_product_flash_attention_for_cpu if hasattr(
        aten, "_scaled_dot_product_flash_attention_for_cpu") else aten.scaled_dot_product_attention)
def _sdpa(T, q, k, v, *args, **kw):
    name = T.node.target.overloadpacket.__name__
    if name == "scaled_dot_product_attention":
        mask = args[0] if args else kw.get("attn_mask")
        dropout = args[1] if len(args) > 1 else kw.get("dropout_p", 0.0)
        causal = args[2] if len(args) > 2 else kw.get("is_causal", False)
    else:  # _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *, attn_mask, scale)
        dropout = args[0] if args else kw.get("dropout_p", 0.0)
        causal = args[1] if len(args) > 1 else kw.get("is_causal", False)
        mask = kw.get("attn_mask")
    if dropout:
        T.fail("attention dropout is not supported (eval mode only)", UnsupportedOpError)
    scale = kw.get("scale")
    enable_gqa = kw.get("enable_gqa", False)
    out = lm.F.scaled_dot_product_attention(
        T.tensor(q), T.tensor(k), T.tensor(v), attn_mask=mask, is_causal=causal, scale=scale,
        enable_gqa=enable_gqa)
    if name == "scaled_dot_product_attention":
        return out
    return out, _Unavailable("attention logsumexp")

