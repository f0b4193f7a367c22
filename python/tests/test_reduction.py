"""Reductions validated against torch (CPU): one axis, several axes and all axes,
negative dims, keepdim, non-contiguous inputs, symbolic axes, edge values (inf,
nan, -0.0, large magnitudes) and the dtype rules (sum of ints -> int64, f16
accumulated in f32, ...)."""

import numpy as np
import pytest
import torch

import luminal as lm
from conftest import check, edge_values, rand, randint

DIMS = [None, 0, -1, 1, (0, 2), (-1, -3), (1, 2)]
HALF = ["float16", "bfloat16"]


def _dim_kwargs(dim, keepdim):
    return {} if dim is None else {"dim": dim, "keepdim": keepdim}


def _run(name, lm_fn, torch_fn, tol, data=None, dtypes=("float32",) + tuple(HALF) + ("float64",),
         dims=DIMS, edges=True):
    data = data or (lambda shape, dt="float32": rand(shape, dt))
    for dim in dims:
        for keepdim in (False, True):
            kw = _dim_kwargs(dim, keepdim)
            ov = "all" if dim is None else ("dims" if isinstance(dim, tuple) else "dim")
            check(name, lambda t: lm_fn(t, **kw), lambda t: torch_fn(t, **kw), [data((3, 4, 5))],
                  tol=tol, overload=ov)
    # non-contiguous and size-1 axes
    check(name, lambda t: lm_fn(t, dim=1), lambda t: torch_fn(t, dim=1), [data((5, 4))],
          views=[lambda t: t.mT], tol=tol, overload="dim")
    check(name, lambda t: lm_fn(t, dim=0), lambda t: torch_fn(t, dim=0), [data((1, 6))],
          views=[lambda t: t[:, ::2].expand(3, 3)], tol=tol, overload="dim")
    check(name, lambda t: lm_fn(t, dim=-1, keepdim=True), lambda t: torch_fn(t, dim=-1, keepdim=True),
          [data((4, 1))], tol=tol, overload="dim")
    for dt in dtypes:
        if dt != "float32":
            check(name, lambda t: lm_fn(t, dim=-1), lambda t: torch_fn(t, dim=-1), [data((3, 6), dt)],
                  dtype=dt, tol=tol, overload="dim")
    if edges:
        e = edge_values()
        check(name, lambda t: lm_fn(t, dim=-1), lambda t: torch_fn(t, dim=-1),
              [np.stack([e, np.roll(e, 3), np.abs(e)])], tol=tol, overload="dim")


def test_sum():
    _run("sum", lm.sum, torch.sum, "reduction")
    for dt in ["int32", "int64", "int8", "uint8", "bool"]:
        x = randint((3, 4, 5), 0 if dt in ("uint8", "bool") else -9, 9, dt)
        check("sum", lambda t: t.sum(), lambda t: t.sum(), [x], overload="all", label=dt)
        check("sum", lambda t: t.sum((0, -1), keepdim=True), lambda t: t.sum((0, -1), keepdim=True), [x],
              overload="dims", label=dt)
    check("sum", lambda t: lm.sum(t, 1, dtype="float64"), lambda t: torch.sum(t, 1, dtype=torch.float64),
          [rand((3, 4))], tol="reduction", overload="dtype")
    check("sum", lambda t: lm.sum(t, dim=0, dtype="int32"), lambda t: torch.sum(t, dim=0, dtype=torch.int32),
          [randint((5, 3), -9, 9, "int8")], overload="dtype", label="int8")
    check("sum", lambda t: t.sum(1), lambda t: t.sum(1), [rand((2, "s", 4)[:1] + (3, 4))],
          symbolic={0: {0: "s"}}, tol="reduction", overload="symbolic")


def test_nansum_nanmean():
    e = edge_values()
    x = np.stack([e, np.where(np.isinf(e), 1.0, e)])
    check("nansum", lambda t: lm.nansum(t, 1), lambda t: torch.nansum(t, 1), [x], tol="reduction")
    check("nanmean", lambda t: lm.nanmean(t, 1), lambda t: torch.nanmean(t, 1), [x], tol="reduction")
    check("nansum", lm.nansum, torch.nansum, [rand((3, 4))], tol="reduction")
    check("nanmean", lambda t: t.nanmean(0, keepdim=True), lambda t: t.nanmean(0, keepdim=True),
          [rand((3, 4))], tol="reduction")


def test_mean():
    _run("mean", lm.mean, torch.mean, "reduction")
    check("mean", lambda t: lm.mean(t, 1, dtype="float32"), lambda t: torch.mean(t, 1, dtype=torch.float32),
          [randint((3, 4), -9, 9, "int32")], tol="reduction", overload="dtype", label="int32")
    check("mean", lambda t: t.mean((0, 1)), lambda t: t.mean((0, 1)), [rand((3, 4, 2))],
          symbolic={0: {0: "s", 1: "t"}}, tol="reduction", overload="symbolic")
    with pytest.raises(TypeError):
        g = lm.Graph()
        lm.mean(g.input("x", (3,), dtype="int64"))


def test_prod():
    def data(shape, dt="float32"):
        return rand(shape, dt, low=-1.5, high=1.5)

    _run("prod", lambda t, **kw: lm.prod(t, **kw) if "dim" not in kw or not isinstance(kw["dim"], tuple)
         else lm.prod(lm.prod(t, dim=kw["dim"][1], keepdim=kw["keepdim"]), dim=kw["dim"][0], keepdim=kw["keepdim"]),
         lambda t, **kw: torch.prod(t, **kw) if "dim" not in kw or not isinstance(kw["dim"], tuple)
         else torch.prod(torch.prod(t, dim=kw["dim"][1], keepdim=kw["keepdim"]), dim=kw["dim"][0],
                         keepdim=kw["keepdim"]),
         "reduction", data=data, dims=[None, 0, -1, 1])
    for dt in ["int32", "int64", "int8", "uint8", "bool"]:
        x = randint((3, 7), 0 if dt in ("uint8", "bool") else -5, 5, dt)
        check("prod", lambda t: t.prod(1), lambda t: t.prod(1), [x], overload="dim", label=dt)
        check("prod", lambda t: t.prod(), lambda t: t.prod(), [x], overload="all", label=dt)
    big = np.array([[3, -7, 11, -13, 17, 19, 23, -29, 31, 37, 41]], np.int64)
    check("prod", lambda t: t.prod(1), lambda t: t.prod(1), [big], overload="dim", label="int64")
    e = edge_values()
    check("prod", lambda t: t.prod(1), lambda t: t.prod(1), [np.stack([e[:5], e[5:10], e[8:13]])],
          tol="reduction", overload="dim")


def test_amax_amin():
    for name, lfn, tfn in [("amax", lm.amax, torch.amax), ("amin", lm.amin, torch.amin)]:
        _run(name, lambda t, f=lfn, **kw: f(t, **kw), lambda t, f=tfn, **kw: f(t, **kw), "exact")
        for dt in ["int32", "int64", "int8", "uint8", "bool"]:
            x = randint((3, 4), 0 if dt in ("uint8", "bool") else -100, 100, dt)
            check(name, lambda t: getattr(t, name)(1), lambda t: getattr(t, name)(1), [x], overload="dim",
                  label=dt)
        i = np.array([[-2**31, 2**31 - 1, 0]], np.int32)
        check(name, lambda t: getattr(t, name)(-1), lambda t: getattr(t, name)(-1), [i], overload="dim",
              label="int32")
    check("aminmax", lambda t: lm.aminmax(t, dim=1), lambda t: tuple(torch.aminmax(t, dim=1)),
          [rand((3, 4))], tol="exact")
    check("aminmax", lambda t: lm.aminmax(t), lambda t: tuple(torch.aminmax(t)), [rand((3, 4))], tol="exact",
          overload="all")


def test_max_min_with_indices():
    for name in ["max", "min"]:
        for dim in [0, 1, -1]:
            for keepdim in (False, True):
                check(name, lambda t: getattr(lm, name)(t, dim, keepdim),
                      lambda t: tuple(getattr(torch, name)(t, dim, keepdim)),
                      [np.round(rand((4, 6)) * 2)], tol="exact", overload="dim")
        check(name, lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), [rand((3, 5))], tol="exact",
              overload="all")
        e = edge_values()
        check(name, lambda t: getattr(t, name)(1), lambda t: tuple(getattr(t, name)(1)),
              [np.stack([e[:6], e[6:12], e[7:13]])], tol="exact", overload="dim")
        check(name, lambda t: getattr(t, name)(0), lambda t: tuple(getattr(t, name)(0)),
              [randint((5, 3), -3, 3, "int64")], overload="dim", label="int64")
        for dt in HALF:
            check(name, lambda t: getattr(t, name)(-1), lambda t: tuple(getattr(t, name)(-1)),
                  [rand((3, 5))], dtype=dt, tol="exact", overload="dim")


def test_argmax_argmin():
    for name in ["argmax", "argmin"]:
        lfn, tfn = getattr(lm, name), getattr(torch, name)
        for dim in [None, 0, 1, -1]:
            for keepdim in (False, True):
                check(name, lambda t: lfn(t, dim, keepdim), lambda t: tfn(t, dim, keepdim),
                      [np.round(rand((4, 5, 3)))], overload="dim" if dim is not None else "all")
        e = edge_values()
        check(name, lambda t: lfn(t, 1), lambda t: tfn(t, 1), [np.stack([e[:6], e[6:12], e[7:13]])],
              overload="dim")
        check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [randint((4, 7), -2, 2, "int32")],
              overload="dim", label="int32")
        check(name, lambda t: getattr(t, name)(0), lambda t: getattr(t, name)(0), [rand((3, 4))],
              views=[lambda t: t.mT], overload="dim")
        for dt in HALF:
            check(name, lambda t: lfn(t, 1), lambda t: tfn(t, 1), [rand((3, 8))], dtype=dt, overload="dim")
        check(name, lambda t: lfn(t, 1), lambda t: tfn(t, 1), [rand((2, 9))], symbolic={0: {1: "n"}},
              overload="symbolic")


def test_var_std():
    for name in ["var", "std"]:
        lfn, tfn = getattr(lm, name), getattr(torch, name)
        _run(name, lambda t, f=lfn, **kw: f(t, **kw), lambda t, f=tfn, **kw: f(t, **kw), "reduction",
             dtypes=("float32", "float64") + tuple(HALF), edges=False)
        for corr in [0, 1, 2]:
            check(name, lambda t: lfn(t, 1, correction=corr), lambda t: tfn(t, 1, correction=corr),
                  [rand((3, 7))], tol="reduction", overload="correction")
        check(name, lambda t: lfn(t, 0, unbiased=False), lambda t: tfn(t, 0, unbiased=False),
              [rand((5, 3))], tol="reduction", overload="unbiased")
        check(name, lambda t: getattr(t, name)(-1, keepdim=True), lambda t: getattr(t, name)(-1, keepdim=True),
              [rand((2, 3, 6)) * 1e3 + 1e4], tol="reduction", overload="dim")
    for name in ["var_mean", "std_mean"]:
        lfn, tfn = getattr(lm, name), getattr(torch, name)
        for dim in [None, 1, (0, 2)]:
            check(name, lambda t: lfn(t, dim), lambda t: tuple(tfn(t, dim)), [rand((3, 4, 5))],
                  tol="reduction", overload="dim" if dim is not None else "all")
        check(name, lambda t: lfn(t, 1, keepdim=True, correction=0),
              lambda t: tuple(tfn(t, 1, keepdim=True, correction=0)), [rand((3, 4))], tol="reduction",
              overload="dim")


def test_logsumexp():
    for dim in [0, -1, (0, 1)]:
        for keepdim in (False, True):
            check("logsumexp", lambda t: lm.logsumexp(t, dim, keepdim),
                  lambda t: torch.logsumexp(t, dim, keepdim), [rand((3, 4, 5)) * 30], tol="reduction",
                  overload="dims" if isinstance(dim, tuple) else "dim")
    inf = np.inf
    x = np.array([[-inf, -inf, -inf], [inf, 1.0, 2.0], [np.nan, 0.0, 1.0], [1e30, 1e30, -1e30],
                  [-inf, 3.0, -inf]], np.float32)
    check("logsumexp", lambda t: lm.logsumexp(t, 1), lambda t: torch.logsumexp(t, 1), [x],
          tol="reduction", overload="dim")
    for dt in HALF + ["float64"]:
        check("logsumexp", lambda t: t.logsumexp(-1), lambda t: t.logsumexp(-1), [rand((3, 8)) * 5],
              dtype=dt, tol="reduction", overload="dim")
    check("logsumexp", lambda t: t.logsumexp(0), lambda t: t.logsumexp(0), [rand((4, 3))],
          views=[lambda t: t.mT], tol="reduction", overload="dim")


def test_any_all_count_nonzero():
    for name in ["any", "all"]:
        lfn, tfn = getattr(lm, name), getattr(torch, name)
        for dt, x in [("bool", randint((3, 4, 2), 0, 2, "bool")),
                      ("float32", np.round(rand((3, 4, 2), low=0, high=1.3))),
                      ("int32", randint((3, 4, 2), 0, 2, "int32")),
                      ("uint8", randint((3, 4, 2), 0, 2, "uint8"))]:
            for dim in [None, 0, -1, (0, 2)]:
                kw = _dim_kwargs(dim, True)
                check(name, lambda t: lfn(t, **kw), lambda t: tfn(t, **kw), [x], label=dt,
                      overload="all" if dim is None else "dim")
        check(name, lambda t: lfn(t, 0), lambda t: tfn(t, 0), [edge_values()[:, None]], overload="dim")
    for dim in [None, 0, (0, 1)]:
        kw = {} if dim is None else {"dim": dim}
        check("count_nonzero", lambda t: lm.count_nonzero(t, **kw), lambda t: torch.count_nonzero(t, **kw),
              [np.round(rand((3, 4, 2)))])
    check("count_nonzero", lambda t: t.count_nonzero(1), lambda t: t.count_nonzero(1),
          [randint((3, 5), -1, 2, "int64")], label="int64")
    check("count_nonzero", lm.count_nonzero, torch.count_nonzero, [edge_values()])


def test_norms():
    for p in [2, 1, float("inf"), float("-inf"), 3, 0.5, 0]:
        for dim in [None, 1, (0, 1)]:
            check("vector_norm", lambda t: lm.vector_norm(t, p, dim),
                  lambda t: torch.linalg.vector_norm(t, p, dim), [rand((3, 4, 2))], tol="reduction",
                  overload=f"ord={p}")
    check("vector_norm", lambda t: lm.vector_norm(t, 2, -1, True), lambda t: torch.linalg.vector_norm(t, 2, -1, True),
          [rand((3, 4))], dtype="float16", tol="reduction", overload="ord=2")
    check("vector_norm", lambda t: lm.vector_norm(t, 2, -1), lambda t: torch.linalg.vector_norm(t, 2, -1),
          [edge_values()[None, :]], tol="reduction", overload="ord=2")
    for p in [2, 1, "fro"]:
        check("norm", lambda t: lm.norm(t, p), lambda t: torch.norm(t, p), [rand((3, 4))], tol="reduction",
              overload=f"p={p}")
        check("norm", lambda t: t.norm(p, 1, True), lambda t: t.norm(p, 1, True), [rand((3, 4))],
              tol="reduction", overload=f"p={p}")
    check("frobenius_norm", lambda t: lm.frobenius_norm(t), lambda t: torch.linalg.matrix_norm(t, "fro"),
          [rand((2, 3, 4))], tol="reduction")


def test_cumsum_cumprod():
    for name in ["cumsum", "cumprod"]:
        lfn, tfn = getattr(lm, name), getattr(torch, name)
        for dim in [0, 1, -1]:
            check(name, lambda t: lfn(t, dim), lambda t: tfn(t, dim), [rand((3, 9, 4), low=0.5, high=1.5)],
                  tol="reduction")
        check(name, lambda t: lfn(t, 0), lambda t: tfn(t, 0), [rand((33,), low=0.8, high=1.2)],
              tol="reduction")
        check(name, lambda t: getattr(t, name)(1), lambda t: getattr(t, name)(1), [rand((4, 5))],
              views=[lambda t: t.mT], tol="reduction", overload="method")
        for dt in ["int32", "int64", "uint8", "bool", "int8"]:
            x = randint((3, 6), 0 if dt in ("uint8", "bool") else -3, 3, dt)
            check(name, lambda t: lfn(t, 1), lambda t: tfn(t, 1), [x], label=dt)
        for dt in HALF + ["float64"]:
            check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [rand((3, 6), low=0.5, high=1.5)],
                  dtype=dt, tol="reduction")
        check(name, lambda t: lfn(t, 1, dtype="float64"), lambda t: tfn(t, 1, dtype=torch.float64),
              [rand((2, 5))], tol="reduction", overload="dtype")
        e = edge_values()
        check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [np.stack([e, e[::-1]])], tol="reduction")
    check("cumsum", lambda t: lm.cumsum(t, 0), lambda t: torch.cumsum(t, 0), [rand((6, 2))],
          symbolic={0: {0: "s"}}, tol="reduction", overload="symbolic")


def test_reduction_errors():
    g = lm.Graph()
    x = g.input("x", (2, 3))
    with pytest.raises(ValueError, match="sum"):
        lm.sum(x, 2)
    with pytest.raises(ValueError, match="more than once"):
        lm.sum(x, (0, -2))
    with pytest.raises(ValueError, match="prod"):
        lm.prod(g.input("y", ("s",)))
