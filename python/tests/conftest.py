"""Shared helpers of the luminal Python test suite: validating ops against torch.

check() builds a luminal graph with one input per array, applies the same
optional view transform in luminal and in torch, runs the op in both, and
compares with a tolerance derived from the result dtype's machine epsilon.
Every check is recorded (op, overload, dtype, passed) into a JSON file that
tools/gen_ops_md.py turns into docs/OPS.md. See python/README-dev.md.
"""

import json
import math
import os
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import torch  # the oracle: a missing torch must fail the suite, not skip it

# Compiled models are cached on disk; keep the suite's entries out of the user's cache.
os.environ.setdefault("LUMINAL_CACHE_DIR", tempfile.mkdtemp(prefix="luminal-test-cache-"))
# The op tests compare with torch's f32 at f32 tolerances: products stay f32 unless a test
# asks for matmul_precision="high" (luminal's default, whose integer products round operands
# to 16 / 14 bits per block; the search picks them by timing, so results would depend on it).
os.environ["LUMINAL_MATMUL_PRECISION"] = "highest"

import luminal as lm  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
COVERAGE_PATH = Path(os.environ.get("LUMINAL_OPS_COVERAGE", REPO / "build" / "ops_coverage.json"))

# ---- tolerances ----------------------------------------------------------------------

EPS = {
    "float64": 2.0**-52,
    "float32": 2.0**-23,
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
}

# One k per op class: rtol = atol = k * eps(result dtype). Reductions scale with
# sqrt(n) (rounding errors of n accumulations grow like a random walk).
TOL_K = {
    "exact": 0.0,           # movement, indexing, comparisons, casts, min/max: bit-exact
    "elementwise": 2.0,     # one correctly rounded op (+ - * /, sqrt) in both
    "transcendental": 8.0,  # exp / log / sin / tanh ... (exp2/log2 decompositions)
    "composite": 32.0,      # activations / normalizations built from several rounded steps
    "reduction": 4.0,       # times sqrt(n), n = reduced elements
}

TORCH_DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int32": torch.int32, "int64": torch.int64, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")


def torch_dtype_name(dt):
    return str(dt).replace("torch.", "")


def tolerance(dtype, tol="elementwise", n=None):
    """(rtol, atol) for results of `dtype` in tolerance class `tol`."""
    if dtype not in EPS:
        return 0.0, 0.0
    k = TOL_K[tol]
    if tol == "reduction":
        k *= math.sqrt(max(n or 1, 1))
    return k * EPS[dtype], k * EPS[dtype]


# ---- deterministic data ---------------------------------------------------------------


class _Rng:
    gen = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seed_per_test(request):
    """Every test gets its own seed (from its id): results do not depend on -k selection."""
    _Rng.gen = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    yield


def rand(shape, dtype="float32", low=None, high=None):
    """Seeded floats: standard normal, or uniform in [low, high). bfloat16 gives a
    float32 array already rounded to bf16 values."""
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    if low is None and high is None:
        x = _Rng.gen.standard_normal(shape)
    else:
        x = _Rng.gen.uniform(0.0 if low is None else low, 1.0 if high is None else high, shape)
    return to_dtype(x, dtype)


def randint(shape, low, high, dtype="int64"):
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    if dtype == "bool":
        return _Rng.gen.integers(0, 2, shape).astype(np.bool_)
    return _Rng.gen.integers(low, high, shape).astype(dtype)


def edge_values(dtype="float32"):
    """0, -0.0, +-1, +-inf, nan, +-large, +-tiny (normal), +-0.5 for a float dtype."""
    if dtype == "bfloat16":
        large, tiny = 1.0e38, 1.2e-38
    else:
        fi = np.finfo(dtype)
        large, tiny = float(fi.max) / 2, float(fi.tiny)
    v = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, large, -large, tiny, -tiny, 0.5, -0.5]
    return to_dtype(np.array(v, np.float64), dtype)


def to_dtype(x, dtype):
    """numpy array of `dtype`; bfloat16 -> float32 array rounded to bf16 (nearest even)."""
    x = np.asarray(x)
    if dtype == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(x, np.float32)).to(torch.bfloat16).float().numpy()
    return x.astype(dtype)


# ---- comparison -------------------------------------------------------------------------


def _torch_to_numpy(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.float().numpy()
    return t.numpy()


def assert_close(actual, expected, dtype, tol="elementwise", n=None, what="result"):
    """Compare a luminal result (numpy) with a torch result (tensor or numpy) of `dtype`."""
    exp = _torch_to_numpy(expected) if isinstance(expected, torch.Tensor) else np.asarray(expected)
    act = np.asarray(actual)
    assert act.shape == exp.shape, f"{what}: shape {act.shape}, torch {exp.shape}"
    if dtype not in EPS:  # ints and bools: exact
        bad = act != exp
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            raise AssertionError(f"{what} ({dtype}): {int(bad.sum())} of {bad.size} elements differ; "
                                 f"first at {i}: luminal {act[i]!r}, torch {exp[i]!r}")
        return
    a = act.astype(np.float64)
    b = exp.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        i = tuple(np.argwhere(nan_a != nan_b)[0])
        raise AssertionError(f"{what} ({dtype}): NaN positions differ; first at {i}: "
                             f"luminal {a[i]!r}, torch {b[i]!r}")
    inf = (np.isinf(a) | np.isinf(b)) & ~nan_b
    if (a[inf] != b[inf]).any():
        i = tuple(np.argwhere(inf & (a != b))[0])
        raise AssertionError(f"{what} ({dtype}): infinities differ; first at {i}: "
                             f"luminal {a[i]!r}, torch {b[i]!r}")
    fin = ~(nan_b | inf)
    rtol, atol = tolerance(dtype, tol, n)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(fin, np.abs(a - b), 0.0)
        bound = atol + rtol * np.abs(b)
    bad = fin & (err > bound)
    if tol == "exact":
        # Bit-exact classes also keep the sign of zero (torch does).
        bad |= fin & (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{what} ({dtype}, tol={tol}, rtol=atol={rtol:.3g}): {int(bad.sum())} of {bad.size} "
            f"elements differ; max abs err {float(err.max()):.3g}; first at {i}: "
            f"luminal {a[i]!r}, torch {b[i]!r}")


# ---- coverage records ---------------------------------------------------------------------

_RECORDS = []


def record(op, overload=None, dtype="float32", passed=True, test=None):
    """Record one validation of (op, overload) for dtype (docs/OPS.md)."""
    _RECORDS.append({"op": op, "overload": overload or "", "dtype": dtype, "passed": bool(passed),
                     "test": test or os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]})


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "op(name, overload=None, dtypes=('float32',)): the test validates this op "
        "against torch (recorded for docs/OPS.md from the test outcome)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" and not (rep.when == "setup" and rep.failed):
        return
    for mark in item.iter_markers("op"):
        name = mark.args[0] if mark.args else mark.kwargs["name"]
        overload = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("overload")
        for dt in mark.kwargs.get("dtypes", ("float32",)):
            record(name, overload, dt, rep.passed, item.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if not _RECORDS:
        return
    COVERAGE_PATH.parent.mkdir(parents=True, exist_ok=True)
    COVERAGE_PATH.write_text(json.dumps(_RECORDS, indent=0))


# ---- check ----------------------------------------------------------------------------------


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def check(op, lm_fn, torch_fn, inputs, *, overload=None, dtype=None, views=None,
          tol="elementwise", reduce_n=None, symbolic=None, label=None, graph=False):
    """Validate lm_fn against torch_fn on `inputs`; see python/README-dev.md.

    Returns the luminal outputs (list of numpy arrays)."""
    arrays = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            x = _torch_to_numpy(x)
        x = np.asarray(x)
        if dtype is not None and x.dtype.kind == "f":
            x = to_dtype(x, dtype)
        arrays.append(x)
    in_dtypes = [dtype if (dtype is not None and a.dtype.kind == "f") else a.dtype.name
                 for a in arrays]
    views = views or [None] * len(arrays)
    symbolic = symbolic or {}
    label_dtype = label or dtype or (in_dtypes[0] if in_dtypes else "float32")
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    try:
        # torch
        tt = []
        for a, d, v in zip(arrays, in_dtypes, views):
            t = torch.from_numpy(a.copy()).to(TORCH_DTYPES[d])
            tt.append(v(t) if v else t)
        expected = _as_list(torch_fn(*tt))

        # luminal
        g = lm.Graph()
        lt = []
        for i, (a, d, v) in enumerate(zip(arrays, in_dtypes, views)):
            names = symbolic.get(i, {})
            shape = tuple(names.get(ax, n) for ax, n in enumerate(a.shape))
            t = g.input(f"in{i}", shape, dtype=d)
            lt.append(v(t) if v else t)
        outs = _as_list(lm_fn(g, *lt) if graph else lm_fn(*lt))
        assert len(outs) == len(expected), f"{op}: {len(outs)} outputs, torch {len(expected)}"
        for i, (o, e) in enumerate(zip(outs, expected)):
            assert o.dtype == torch_dtype_name(e.dtype), (
                f"{op}: output {i} dtype {o.dtype}, torch {torch_dtype_name(e.dtype)}")
            g.output(f"out{i}", o)
        m = g.compile(device="reference")
        res = m.run({f"in{i}": a for i, a in enumerate(arrays)})
        got = [res[f"out{i}"] for i in range(len(outs))]
        for i, (a, e) in enumerate(zip(got, expected)):
            n = reduce_n
            if tol == "reduction" and n is None:
                n = max((x.size for x in arrays), default=1) // max(int(e.numel()), 1)
            shapes = ", ".join(str(tuple(x.shape)) for x in tt)
            assert_close(a, e, torch_dtype_name(e.dtype), tol, n,
                         what=f"{op}{'[' + overload + ']' if overload else ''} output {i} "
                              f"(inputs {shapes})")
    except BaseException:
        record(op, overload, label_dtype, False, test)
        raise
    record(op, overload, label_dtype, True, test)
    return got
