"""Sorting and selection against torch: sort / argsort / msort / topk / kthvalue /
median / nanmedian. Values and indices are bit-exact. Data with ties and edge values
(nan, +-inf, -0.0) is compared with torch's stable sort; topk / kthvalue use distinct
values where torch does not define the order of ties.
"""

import numpy as np
import pytest
import torch

import luminal as lm
from conftest import check, edge_values, rand, randint

FLOATS = ["float16", "bfloat16", "float64"]


def ex(op, lm_fn, torch_fn, inputs, **kw):
    check(op, lm_fn, torch_fn, inputs, tol="exact", **kw)


def distinct(shape, dtype="float32"):
    """Distinct values (a shuffled range scaled), exactly representable in every dtype."""
    n = int(np.prod(shape))
    gen = np.random.default_rng(n)
    return (gen.permutation(n).reshape(shape) - n // 2).astype(np.float64).astype(
        "float32" if dtype == "bfloat16" else dtype)


@pytest.mark.parametrize("descending", [False, True])
def test_sort(descending):
    for shape, dim in [((7,), 0), ((3, 6), -1), ((5, 2, 4), 0), ((2, 5, 3), 1)]:
        ex("sort", lambda t: t.sort(dim, descending),
           lambda t: t.sort(dim=dim, descending=descending, stable=True), [rand(shape)])
    # Ties (small ints as floats), nan / inf / -0.0: torch's stable order.
    ties = randint((4, 9), -3, 3).astype(np.float32)
    ex("sort", lambda t: lm.sort(t, descending=descending),
       lambda t: torch.sort(t, descending=descending, stable=True), [ties], overload="ties")
    ex("sort", lambda t: t.sort(0, descending=descending, stable=True),
       lambda t: t.sort(dim=0, descending=descending, stable=True),
       [np.concatenate([edge_values(), edge_values()[::-1]])], overload="edge")


def test_sort_views_symbolic_dtypes():
    ex("sort", lambda t: t.sort(1), lambda t: t.sort(dim=1, stable=True), [rand((6, 4))],
       views=[lambda t: t.mT])
    ex("sort", lambda t: t.sort(-1), lambda t: t.sort(dim=-1, stable=True), [rand((3, 5))],
       symbolic={0: {1: "s"}}, overload="symbolic")
    for dt in FLOATS:
        ex("sort", lambda t: t.sort(-1), lambda t: t.sort(dim=-1, stable=True), [rand((3, 8))],
           dtype=dt)
    for dt in ["int32", "int64", "uint8", "bool"]:
        x = randint((3, 8), 0 if dt in ("uint8", "bool") else -100, 100, dt)
        ex("sort", lambda t: t.sort(-1, True), lambda t: t.sort(dim=-1, descending=True, stable=True), [x])


def test_argsort_msort():
    ex("argsort", lambda t: t.argsort(), lambda t: t.argsort(stable=True), [rand((4, 6))])
    ex("argsort", lambda t: lm.argsort(t, 0, descending=True),
       lambda t: torch.argsort(t, dim=0, descending=True, stable=True),
       [randint((6, 3), -2, 2, "int64")])
    ex("msort", lambda t: t.msort(), lambda t: torch.sort(t, dim=0, stable=True).values,
       [rand((5, 3))])


@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(k, largest):
    # k = 10 of 12 takes the rank-sort path; k = 1, 3 the selection passes.
    for shape, dim in [((12,), 0), ((3, 12), -1), ((12, 4), 0)]:
        ex("topk", lambda t: t.topk(k, dim, largest),
           lambda t: t.topk(k, dim, largest), [distinct(shape)])


def test_topk_edges_dtypes():
    ex("topk", lambda t: lm.topk(t, 4), lambda t: torch.topk(t, 4),
       [np.array([1.0, np.nan, -np.inf, 3.0, np.inf, -2.0], np.float32)], overload="edge")
    ex("topk", lambda t: t.topk(4, largest=False), lambda t: t.topk(4, largest=False),
       [np.array([1.0, np.nan, -np.inf, 3.0, np.inf, -2.0], np.float32)], overload="edge")
    ex("topk", lambda t: t.topk(2, 0), lambda t: t.topk(2, 0), [distinct((6, 3))],
       views=[lambda t: t[::2].mT.contiguous().mT])
    for dt in FLOATS:
        ex("topk", lambda t: t.topk(3), lambda t: t.topk(3), [distinct((2, 16))], dtype=dt)
    for dt in ["int32", "int64"]:
        for largest in [True, False]:
            ex("topk", lambda t: t.topk(3, largest=largest), lambda t: t.topk(3, largest=largest),
               [distinct((2, 9), dt)])
    # Top-k sampling shape: k = 40 of 400 takes the selection passes (k > 16, 8k <= n).
    ex("topk", lambda t: t.topk(40), lambda t: t.topk(40), [distinct((2, 400))],
       overload="sampling")
    # MoE routing: top-2 of 8 experts over a symbolic token count.
    ex("topk", lambda t: t.topk(2, -1), lambda t: t.topk(2, -1), [distinct((5, 8))],
       symbolic={0: {0: "s"}}, overload="symbolic")


def test_kthvalue_median():
    ex("kthvalue", lambda t: t.kthvalue(2, 1), lambda t: t.kthvalue(2, 1), [distinct((3, 5))])
    ex("kthvalue", lambda t: lm.kthvalue(t, 4, 0, keepdim=True),
       lambda t: torch.kthvalue(t, 4, 0, keepdim=True), [distinct((5, 3))])
    ex("median", lambda t: t.median(1), lambda t: t.median(1), [distinct((3, 6))], overload="dim")
    ex("median", lambda t: lm.median(t, -1, keepdim=True),
       lambda t: torch.median(t, -1, keepdim=True), [distinct((4, 5))], overload="dim")
    ex("median", lambda t: t.median(), lambda t: t.median(), [distinct((4, 5))])
    nanrows = np.array([[4, 1, 3, 2], [5, np.nan, 1, np.nan], [np.inf, -np.inf, 0, 7]],
                       np.float32)
    ex("median", lambda t: t.median(1), lambda t: t.median(1), [nanrows], overload="dim")
    ex("median", lambda t: t.median(), lambda t: t.median(), [nanrows])
    ex("nanmedian", lambda t: t.nanmedian(1), lambda t: t.nanmedian(1), [nanrows],
       overload="dim")
    ex("nanmedian", lambda t: t.nanmedian(), lambda t: t.nanmedian(), [nanrows])
    ex("median", lambda t: t.median(0), lambda t: t.median(0), [distinct((5, 2), "int64")],
       overload="dim")


def test_sorting_errors():
    g = lm.Graph()
    x = g.input("x", (3, 4))
    with pytest.raises(ValueError, match=r"sort: dim -3 is out of range for f32\[3, 4\]"):
        x.sort(-3)
    with pytest.raises(ValueError, match=r"topk: k = 5 is out of range.*f32\[3, 4\]"):
        x.topk(5)
