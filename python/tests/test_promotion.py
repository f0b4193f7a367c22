"""Type promotion validated against torch.promote_types / torch.result_type and the
dtypes torch gives binary ops on mixed operands (tensors of each dtype, rank-0
tensors, Python bool / int / float scalars)."""

import itertools

import numpy as np
import pytest
import torch

import luminal as lm
from conftest import TORCH_DTYPES, check, rand, randint, record

DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool"]


def _data(dt, shape=(2, 3)):
    if dt == "bool":
        return randint(shape, 0, 2, "bool")
    if dt in ("int32", "int64", "int8", "uint8"):
        return randint(shape, 1, 5, dt)
    return rand(shape, dt)


def _name(torch_dtype):
    return str(torch_dtype).replace("torch.", "")


def test_promote_types_table():
    ok = True
    for a, b in itertools.product(DTYPES, DTYPES):
        want = _name(torch.promote_types(TORCH_DTYPES[a], TORCH_DTYPES[b]))
        if {a, b} == {"int8", "uint8"}:
            want = "int32"  # torch: int16, which luminal does not have (documented)
        got = lm.promote_types(a, b)
        assert got == want, (a, b, got, want)
    record("promote_types", None, "all", ok)


def test_result_type_tiers():
    g = lm.Graph()
    scalars = [2.5, 3, True]
    for dt in DTYPES:
        t = torch.zeros((2,), dtype=TORCH_DTYPES[dt])
        z = torch.zeros((), dtype=TORCH_DTYPES[dt])
        lt = g.input(f"t_{dt}", (2,), dtype=dt)
        lz = g.input(f"z_{dt}", (), dtype=dt)
        for s in scalars:
            assert lm.result_type(lt, s) == _name(torch.result_type(t, s)), (dt, s)
            assert lm.result_type(lz, s) == _name(torch.result_type(z, s)), (dt, s)
        for dt2 in DTYPES:
            if {dt, dt2} == {"int8", "uint8"}:
                continue
            z2 = torch.zeros((), dtype=TORCH_DTYPES[dt2])
            lz2 = g.input(f"z2_{dt}_{dt2}", (), dtype=dt2)
            assert lm.result_type(lt, lz2) == _name(torch.result_type(t, z2)), (dt, dt2)
    record("result_type", None, "all", True)


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum", "eq", "remainder", "pow"])
def test_binary_ops_promote_like_torch(op):
    lfn, tfn = getattr(lm, op), getattr(torch, op)
    for a, b in itertools.product(DTYPES, DTYPES):
        if {a, b} == {"int8", "uint8"}:
            continue
        if op == "remainder" and b == "bool":
            continue  # integer division by False (zero) raises in torch and in luminal
        tol = "transcendental" if op == "pow" else "elementwise"
        try:
            torch_fn_ok = tfn(torch.ones(1, dtype=TORCH_DTYPES[a]), torch.ones(1, dtype=TORCH_DTYPES[b]))
        except RuntimeError:
            continue  # torch rejects the combination (e.g. bool - bool)
        del torch_fn_ok
        check(op, lfn, tfn, [_data(a), _data(b, (3,))], tol=tol, overload="promotion", label=f"{a}+{b}")
    for dt in DTYPES:
        for s in [2.5, 2, True]:
            try:
                tfn(torch.ones(1, dtype=TORCH_DTYPES[dt]), s if op not in ("maximum",) else torch.tensor(s))
            except RuntimeError:
                continue
            ts = (lambda t, s=s: tfn(t, torch.tensor(s))) if op == "maximum" else (lambda t, s=s: tfn(t, s))
            check(op, lambda t, s=s: lfn(t, s), ts, [_data(dt)], tol="transcendental" if op == "pow" else "elementwise",
                  overload="promotion_scalar", label=f"{dt}+{type(s).__name__}")


def test_to_and_casts():
    for a, b in itertools.product(DTYPES, DTYPES):
        x = _data(a)
        if a in ("float32", "float16", "bfloat16", "float64") and b in ("uint8",):
            x = np.abs(x)  # negative float -> uint8 is undefined behaviour in C / torch
        check("to", lambda t, b=b: t.to(b), lambda t, b=b: t.to(TORCH_DTYPES[b]), [x], tol="exact",
              label=f"{a}->{b}")


def test_operator_promotion_errors():
    g = lm.Graph()
    x = g.input("x", (2, 3), dtype="int32")
    y = g.input("y", (4,))
    with pytest.raises(ValueError, match="add"):
        lm.add(x, y)
    with pytest.raises(TypeError):
        lm.add(x, 2, alpha=0.5)
    with pytest.raises(TypeError):
        lm.pow(x, -1)
