"""The torch front end's contract: both entry points, dtypes at the boundary, dynamic
shapes, in-place mutation write-back, weights bound once, clear errors. Oracle: eager torch."""

import importlib
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

import luminal as lm
import luminal.torch as lt

REPO = Path(__file__).resolve().parents[2]
OPTS = {"search_iters": 1, "seed": 0, "device": "reference"}


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    lt.reset_counters()
    yield
    torch._dynamo.reset()


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x))).softmax(-1)


class ResBlock(torch.nn.Module):
    """conv, batch norm (eval), relu, max/avg/adaptive pooling, a residual add, linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 10)
        with torch.no_grad():  # non-trivial running statistics
            for bn in (self.bn1, self.bn2):
                bn.running_mean.normal_(0, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0, 0.1)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        y = torch.relu(y + self.bn2(self.conv2(y)))
        y = F.avg_pool2d(y, 2)
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


def test_backend_registered_by_import_and_entry_point():
    from torch._dynamo import list_backends

    assert "luminal" in list_backends(exclude_tags=())
    # the torch_dynamo_backends entry point (pyproject.toml) names a loadable backend
    text = (REPO / "pyproject.toml").read_text()
    assert "[project.entry-points.torch_dynamo_backends]" in text
    section = text.split("[project.entry-points.torch_dynamo_backends]", 1)[1]
    line = next(ln for ln in section.splitlines() if ln.strip().startswith("luminal ="))
    module, attr = line.split("=", 1)[1].strip().strip('"').split(":")
    assert getattr(importlib.import_module(module), attr) is lt.luminal_backend


def test_mlp_multi_call_dynamic_batch():
    model = MLP().eval()
    compiled = torch.compile(model, backend="luminal", dynamic=True, options=OPTS)
    with torch.no_grad():
        for batch in (3, 2, 5, 3):  # size 1 would be specialised by Dynamo
            x = torch.randn(batch, 16, generator=gen(batch))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)
    assert lt.counters == {**lt.counters, "compiles": 1, "runs": 4}


def test_weights_bound_once_and_rebound_after_inplace_update():
    model = MLP().eval()
    compiled = torch.compile(model, backend="luminal", options=OPTS)
    x = torch.randn(2, 16, generator=gen())
    with torch.no_grad():
        first = compiled(x)
        (prog,) = _programs()
        weight_names = [n for i, n, *_ in prog.tr.inputs
                        if prog.bound.get(n) and prog.bound[n][0]() is model.fc1.weight]
        assert weight_names, "fc1.weight should stay bound between calls"
        model.fc1.weight.mul_(0.5)  # in place: the version counter changes -> rebound
        second = compiled(x)
        torch.testing.assert_close(second, model(x), rtol=1e-5, atol=1e-6)
        assert not torch.allclose(first, second)


_seen_programs = []


def _programs():
    return list(_seen_programs)


@pytest.fixture(autouse=True)
def _track_programs(monkeypatch):
    _seen_programs.clear()
    original = lt.runtime.Program.__init__

    def init(self, *a, **k):
        original(self, *a, **k)
        _seen_programs.append(self)

    monkeypatch.setattr(lt.runtime.Program, "__init__", init)


def test_resnet_block_dynamic_batch():
    model = ResBlock().eval()
    compiled = torch.compile(model, backend="luminal", dynamic=True, options=OPTS)
    with torch.no_grad():
        for batch in (2, 3, 5):
            x = torch.randn(batch, 3, 16, 16, generator=gen(batch))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert lt.counters["compiles"] == 1


def test_export_path_dynamic_batch():
    model = ResBlock().eval()
    x = torch.randn(2, 3, 16, 16, generator=gen())
    batch = torch.export.Dim("batch", min=1, max=64)
    compiled = lt.compile(model, (x,), dynamic_shapes={"x": {0: batch}}, **OPTS)
    with torch.no_grad():
        for n in (2, 4, 1):
            x = torch.randn(n, 3, 16, 16, generator=gen(n))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert lt.counters["compiles"] == 1 and lt.counters["runs"] == 3


class Counter(torch.nn.Module):
    """A buffer and a user input mutated in place (as a KV cache is)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, cache, pos, row):
        self.calls.add_(1)
        cache.index_copy_(0, pos, row)
        return cache.sum(0) * self.calls


def test_export_writes_back_buffer_and_input_mutations():
    model = Counter()
    cache = torch.zeros(4, 3)
    compiled = lt.compile(model, (cache.clone(), torch.tensor([0]), torch.ones(1, 3)))
    ref_cache = cache.clone()
    ref_model = Counter()
    for step in range(3):
        row = torch.full((1, 3), float(step + 1))
        pos = torch.tensor([step])
        got = compiled(cache, pos, row)
        ref = ref_model(ref_cache, pos, row)
        torch.testing.assert_close(got, ref)
        torch.testing.assert_close(cache, ref_cache)  # written back into the caller's tensor
    assert int(model.calls) == 3
    assert lt.counters["compiles"] == 1


def test_dynamo_writes_back_input_mutation():
    def f(cache, pos, row):
        cache.index_copy_(1, pos, row)
        return cache.mean(-1)

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    cache, ref_cache = torch.zeros(2, 6, 4), torch.zeros(2, 6, 4)
    for step in range(3):
        row = torch.randn(2, 1, 4, generator=gen(step))
        pos = torch.tensor([step])
        torch.testing.assert_close(compiled(cache, pos, row), f(ref_cache, pos, row))
        torch.testing.assert_close(cache, ref_cache)
    assert lt.counters["compiles"] == 1


def test_dtypes_preserved_at_the_boundary():
    def f(x, ids, flags):
        picked = x[ids]  # advanced indexing with int64
        return picked.argmax(-1), picked > 0, ids * 2, flags.logical_not(), picked.to(torch.float16)

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    x = torch.randn(5, 7, generator=gen())
    ids = torch.tensor([4, 0, 2])
    flags = torch.tensor([True, False, True])
    got, ref = compiled(x, ids, flags), f(x, ids, flags)
    assert [t.dtype for t in got] == [torch.int64, torch.bool, torch.int64, torch.bool,
                                      torch.float16]
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b)


def test_inf_nan_constants_and_causal_mask():
    def f(scores):
        n = scores.shape[-1]
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        s = scores.masked_fill(~mask, float("-inf"))
        return s.softmax(-1), torch.where(s.isinf(), torch.full_like(s, float("nan")), s)

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    x = torch.randn(2, 5, 5, generator=gen())
    for a, b in zip(compiled(x), f(x)):
        torch.testing.assert_close(a, b, equal_nan=True)


def test_weights_shared_with_the_module_without_copy():
    """fp32 / fp16 weights are borrowed: luminal reads the parameter's own storage. A write
    through `.data` bypasses the version counter (so the runtime does not re-send the
    weight), yet the next call sees it. bf16 goes through a float32 copy (numpy has no
    bfloat16), so there the stale copy is kept until the version counter changes."""
    for dtype, shared in ((torch.float32, True), (torch.float16, True), (torch.bfloat16, False)):
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 4).to(dtype).eval()
        compiled = torch.compile(model, backend="luminal", options=OPTS)
        x = torch.randn(3, 8, generator=gen()).to(dtype)
        with torch.no_grad():
            before = compiled(x)
            version = model.weight._version
            model.weight.data.mul_(-1.0)
            assert model.weight._version == version
            after = compiled(x)
            # a few ulps of the narrow types (luminal rounds once, torch per op)
            tol = {torch.float16: 4 * 2.0**-10, torch.bfloat16: 4 * 2.0**-8}.get(dtype)
            if shared:
                assert not torch.allclose(after, before)
                torch.testing.assert_close(after, model(x), rtol=tol, atol=tol)
            else:
                torch.testing.assert_close(after, before)
                model.weight.mul_(1.0)  # a tracked in-place update: re-sent
                torch.testing.assert_close(compiled(x), model(x), rtol=tol, atol=tol)
    assert lt.counters["compiles"] == 3


def test_int64_index_math_and_sym_size_arithmetic():
    """Sizes used as values (b * n, n - 1), int64 arithmetic on indices (%, //, negative
    wrap, clamp to a symbolic bound), one program for three shapes."""
    def f(x, ids):
        b, n = x.shape
        flat = x.reshape(b * n)
        pos = torch.arange(n) * b + (n - 1)
        idx = (ids * n + ids.remainder(n)) % (b * n)
        return (flat[idx], flat[idx - b * n], pos, ids // 2, ids.clamp(max=n - 1),
                torch.full((2,), b * n))

    compiled = torch.compile(f, backend="luminal", dynamic=True, options=OPTS)
    for b, n in ((3, 5), (4, 7), (2, 6)):
        x = torch.randn(b, n, generator=gen(b))
        ids = torch.randint(-20, 20, (4,), generator=gen(n))
        got, ref = compiled(x, ids), f(x, ids)
        assert [t.dtype for t in got] == [t.dtype for t in ref]
        assert ref[2].dtype == torch.int64
        for a, r in zip(got, ref):
            torch.testing.assert_close(a, r)
    assert lt.counters["compiles"] == 1


def test_compound_symbolic_sizes():
    """Creation ops, aranges and slices whose sizes are expressions of the dynamic dims
    (n + 1, 2n - 1, b * n + 1, n // 2, a slice from n - 2, a strided slice)."""
    def f(x):
        b, n = x.shape
        return (x.new_zeros(n + 1), torch.full((2, 2 * n - 1), 3.0), torch.arange(n + 2),
                torch.ones(b * n + 1, dtype=torch.int64), x[:, : n // 2].sum(-1),
                x[:, n - 2:] * 2, x[:, 1::2] + 1)

    compiled = torch.compile(f, backend="luminal", dynamic=True, options=OPTS)
    for b, n in ((3, 5), (4, 7), (2, 6)):
        x = torch.randn(b, n, generator=gen(n))
        got, ref = compiled(x), f(x)
        for a, r in zip(got, ref):
            assert a.dtype == r.dtype
            torch.testing.assert_close(a, r)
    assert lt.counters["compiles"] == 1


def test_outputs_that_are_views_of_inputs():
    """An output aliasing an input is regenerated by AOT from the returned tensor's strides
    and offset: it must be a real view of the caller's tensor (dynamic offsets too)."""
    def f(x):
        return x[:, x.shape[1] - 2:], x.t(), x * 2

    compiled = torch.compile(f, backend="luminal", dynamic=True, options=OPTS)
    for n in (5, 6, 4):
        x = torch.arange(3.0 * n).reshape(3, n)
        got, ref = compiled(x), f(x)
        for a, r in zip(got, ref):
            torch.testing.assert_close(a, r)
        assert got[0].data_ptr() == ref[0].data_ptr()  # aliases x, as in eager


def test_positive_infinity_constants():
    def f(x):
        lo = torch.full_like(x, float("inf")).minimum(x)  # inf as a fill value
        return lo.clamp(min=-float("inf"), max=0.5), x.masked_fill(x > 1, float("inf")).amin(-1)

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    x = torch.randn(4, 6, generator=gen()) * 2
    for a, b in zip(compiled(x), f(x)):
        torch.testing.assert_close(a, b)


def test_sdpa_and_symbolic_arange():
    def f(q, k, v):
        pos = torch.arange(q.shape[1]) + k.shape[1]  # sym_size arithmetic as a tensor value
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out, pos

    compiled = torch.compile(f, backend="luminal", dynamic=True, options=OPTS)
    for s in (4, 6, 3):
        q, k, v = (torch.randn(1, 2, s, 8, generator=gen(s + i)).transpose(1, 2).transpose(1, 2)
                   for i in range(3))
        got, ref = compiled(q, k, v), f(q, k, v)
        torch.testing.assert_close(got[0], ref[0], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(got[1], ref[1])
    assert lt.counters["compiles"] == 1


def test_graph_break_keeps_luminal_parts():
    def f(x):
        y = torch.tanh(x) * 2
        torch._dynamo.graph_break()
        return (y + 1).sum(-1)

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    x = torch.randn(3, 4, generator=gen())
    torch.testing.assert_close(compiled(x), f(x))
    assert lt.counters["compiles"] == 2  # one luminal program on each side of the break


def test_cpu_jit_device():
    model = MLP().eval()
    compiled = torch.compile(model, backend="luminal", options={**OPTS, "device": "cpu-jit"})
    with torch.no_grad():
        for seed in range(3):
            x = torch.randn(4, 16, generator=gen(seed))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-6)
    (prog,) = _programs()
    assert prog.model.stats["device"] == "cpu-jit"


def test_matmul_precision_follows_torch():
    # torch's default "highest" keeps luminal's products f32; "high" / "medium" allow
    # luminal's "high"; an explicit option wins.
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert lt._split_options({})[1]["matmul_precision"] == "highest"
        assert lt._split_options({"matmul_precision": "high"})[1]["matmul_precision"] == "high"
        for level in ("high", "medium"):
            torch.set_float32_matmul_precision(level)
            assert lt._split_options({"device": "cpu"})[1]["matmul_precision"] == "high"
        # At torch's default a Linear whose K is whole blocks of 32 (the int16 kernels'
        # form) matches eager to f32 rounding, for rows with an outlier too.
        torch.set_float32_matmul_precision("highest")
        torch.manual_seed(0)
        model = torch.nn.Linear(64, 48).eval()
        compiled = torch.compile(model, backend="luminal",
                                 options={**OPTS, "device": "cpu-jit", "search_iters": 4})
        x = torch.randn(16, 64, generator=gen(5))
        x[3, 7] = 300.0
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=2e-6, atol=2e-6)
    finally:
        torch.set_float32_matmul_precision(before)


def test_unsupported_op_names_the_aten_op_and_node():
    def f(x):
        return torch.special.zeta(x, torch.full_like(x, 2.0)) + 1

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    with pytest.raises(Exception) as info:
        compiled(torch.rand(3) + 2)
    text = str(info.value)
    assert "unsupported ATen op 'aten.special_zeta" in text
    assert "FX node" in text


def test_unsupported_device_fails_clearly():
    def f(x):
        return x * 2

    compiled = torch.compile(f, backend="luminal", options=OPTS)
    with pytest.raises(Exception, match="on device 'meta'.*CPU only"):
        compiled(torch.empty(3, device="meta"))
    with pytest.raises(lt.LuminalTorchError, match="on device 'meta'"):
        lt.compile(torch.nn.Linear(2, 2), (torch.empty(1, 2, device="meta"),))


def test_unknown_luminal_device_is_an_error():
    compiled = torch.compile(lambda x: x + 1, backend="luminal", options={"device": "tpu"})
    with pytest.raises(Exception, match="unknown device"):
        compiled(torch.ones(2))


def test_luminal_error_types_visible():
    assert issubclass(lt.UnsupportedOpError, lt.LuminalTorchError)
    assert issubclass(lt.LuminalTorchError, RuntimeError)
    assert "aten.convolution" in lt.supported_ops()
    assert lm.Graph is not None and "luminal.torch" in sys.modules
