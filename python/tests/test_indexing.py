"""Indexing ops against torch: gather / take_along_dim / index_select / take / embedding
(reads), scatter / index_copy / index_fill / index_put (writes, unique indexes since
torch leaves the order of duplicate writes undefined) and the accumulating forms
scatter_add / index_add / index_put(accumulate=True) with duplicate indexes.
Reads and writes are bit-exact; accumulations are sums ("reduction" tolerance).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, edge_values, rand, randint

FLOATS = ["float16", "bfloat16", "float64"]


def ex(op, lm_fn, torch_fn, inputs, **kw):
    check(op, lm_fn, torch_fn, inputs, tol="exact", **kw)


def perm_index(shape, dim, n):
    """int64 index of `shape` whose rows along `dim` are distinct values in [0, n)."""
    gen = np.random.default_rng(sum(shape) * 31 + dim)
    moved = list(shape)
    k = moved.pop(dim)
    rows = [gen.permutation(n)[:k] for _ in range(int(np.prod(moved)))]
    out = np.array(rows, np.int64).reshape(moved + [k])
    return np.moveaxis(out, -1, dim).copy()


# ---- reads -----------------------------------------------------------------------


def test_gather():
    x = rand((4, 5, 6))
    for dim in [0, 1, -1]:
        shape = [3, 4, 2]
        n = x.shape[dim]
        ex("gather", lambda t, i: t.gather(dim, i), lambda t, i: t.gather(dim, i),
           [x, randint(shape, 0, n)])
    ex("gather", lambda t, i: lm.gather(t, 1, i), lambda t, i: torch.gather(t, 1, i),
       [rand((5, 4)), randint((4, 7), 0, 5)], views=[lambda t: t.mT, None])
    ex("gather", lambda t, i: t.gather(0, i), lambda t, i: t.gather(0, i),
       [rand((4, 3)), randint((2, 3), 0, 4, "int32").astype(np.int64)], overload="int64")
    ex("gather", lambda t, i: t.gather(-1, i), lambda t, i: t.gather(-1, i),
       [rand((3, 6)), randint((3, 2), 0, 6)], symbolic={0: {0: "s"}, 1: {0: "s"}})
    for dt in FLOATS:
        ex("gather", lambda t, i: t.gather(1, i), lambda t, i: t.gather(1, i),
           [rand((3, 4)), randint((3, 4), 0, 4)], dtype=dt)
    for dt in ["int32", "bool"]:
        ex("gather", lambda t, i: t.gather(1, i), lambda t, i: t.gather(1, i),
           [randint((3, 4), 0, 9, dt), randint((3, 4), 0, 4)])


def test_take_along_dim_take():
    x = rand((3, 5))
    ex("take_along_dim", lambda t, i: t.take_along_dim(i, 1),
       lambda t, i: t.take_along_dim(i, 1), [x, randint((3, 2), 0, 5)])
    ex("take_along_dim", lambda t, i: lm.take_along_dim(t, i, 0),
       lambda t, i: torch.take_along_dim(t, i, 0), [x, randint((2, 1), 0, 3)],
       overload="broadcast")
    ex("take_along_dim", lambda t, i: t.take_along_dim(i), lambda t, i: t.take_along_dim(i),
       [x, randint((4,), 0, 15)], overload="flat")
    ex("take", lambda t, i: t.take(i), lambda t, i: t.take(i), [x, randint((2, 3), -15, 15)])


def test_index_select_embedding():
    x = rand((4, 5, 3))
    for dim in [0, -2, 2]:
        ex("index_select", lambda t, i: t.index_select(dim, i),
           lambda t, i: t.index_select(dim, i), [x, randint((6,), 0, x.shape[dim])])
    ex("index_select", lambda t, i: lm.index_select(t, 1, i),
       lambda t, i: torch.index_select(t, 1, i), [x, randint((2,), 0, 3)],
       views=[lambda t: t.permute(2, 0, 1), None])
    ex("index_select", lambda t, i: t.index_select(0, i), lambda t, i: t.index_select(0, i),
       [edge_values(), randint((20,), 0, 13)], overload="edge")
    w = rand((10, 4))
    ex("embedding", lm.F.embedding, TF.embedding, [randint((2, 3), 0, 10), w])
    ex("embedding", lambda i, w: lm.F.embedding(i, w, padding_idx=0),
       lambda i, w: TF.embedding(i, w, padding_idx=0), [randint((5,), 0, 10), w])
    ex("embedding", lm.F.embedding, TF.embedding, [randint((3, 7), 0, 10), w],
       symbolic={0: {1: "s"}}, overload="symbolic")
    for dt in FLOATS:
        ex("embedding", lm.F.embedding, TF.embedding, [randint((4,), 0, 10), w], dtype=dt)


# ---- writes ----------------------------------------------------------------------


def test_scatter():
    for dim in [0, 1, -1]:
        x = rand((4, 5, 6))
        idx_shape = [3, 4, 5]
        idx = perm_index(idx_shape, dim if dim >= 0 else 2, x.shape[dim])
        ex("scatter", lambda t, i, s: t.scatter(dim, i, s), lambda t, i, s: t.scatter(dim, i, s),
           [x, idx, rand((4, 5, 6))])
    ex("scatter", lambda t, i: t.scatter(1, i, -np.inf), lambda t, i: t.scatter(1, i, -np.inf),
       [rand((3, 4)), perm_index([3, 2], 1, 4)], overload="value")
    ex("scatter", lambda t, i, s: lm.scatter(t, 0, i, s), lambda t, i, s: torch.scatter(t, 0, i, s),
       [rand((4, 3)), perm_index([4, 3], 0, 4), rand((3, 4))],
       views=[None, None, lambda t: t.mT])
    for dt in FLOATS + ["int64"]:
        x = randint((3, 4), -9, 9, dt) if dt == "int64" else rand((3, 4))
        src = randint((3, 4), -9, 9, dt) if dt == "int64" else rand((3, 4))
        ex("scatter", lambda t, i, s: t.scatter(1, i, s), lambda t, i, s: t.scatter(1, i, s),
           [x, perm_index([3, 4], 1, 4), src], dtype=dt if dt in FLOATS else None)


def test_scatter_add_with_duplicates():
    for dim in [0, -1]:
        check("scatter_add", lambda t, i, s: t.scatter_add(dim, i, s),
              lambda t, i, s: t.scatter_add(dim, i, s),
              [rand((4, 5)), randint((6, 5) if dim == 0 else (4, 7), 0, 4 if dim == 0 else 5),
               rand((6, 5) if dim == 0 else (4, 7))], tol="reduction", reduce_n=7)
    # Index smaller than x in the other dims; src larger than index.
    check("scatter_add", lambda t, i, s: lm.scatter_add(t, 1, i, s),
          lambda t, i, s: torch.scatter_add(t, 1, i, s),
          [rand((4, 6)), randint((2, 3), 0, 6), rand((3, 5))], tol="reduction", reduce_n=3)
    # -0.0 in x stays -0.0 where nothing is added; inf in src stays in its slot.
    x = np.array([-0.0, 0.0, 1.0, -0.0], np.float32)
    s = np.array([np.inf, 2.0, -0.0], np.float32)
    ex("scatter_add", lambda t, i, s: t.scatter_add(0, i, s), lambda t, i, s: t.scatter_add(0, i, s),
       [x, np.array([2, 1, 1], np.int64), s], overload="edge")
    ex("scatter_add", lambda t, i, s: t.scatter_add(0, i, s), lambda t, i, s: t.scatter_add(0, i, s),
       [randint((5,), -9, 9, "int32"), randint((8,), 0, 5), randint((8,), -9, 9, "int32")],
       overload="int")


def test_index_copy_fill_add():
    # KV-cache update: cache[:, :, positions] = new
    ex("index_copy", lambda c, p, n: c.index_copy(2, p, n), lambda c, p, n: c.index_copy(2, p, n),
       [rand((2, 3, 8, 4)), np.array([5, 6], np.int64), rand((2, 3, 2, 4))])
    ex("index_copy", lambda c, p, n: lm.index_copy(c, 0, p, n),
       lambda c, p, n: torch.index_copy(c, 0, p, n),
       [rand((6, 3)), perm_index([4], 0, 6), rand((3, 4))], views=[None, None, lambda t: t.mT])
    ex("index_fill", lambda t, i: t.index_fill(1, i, -np.inf),
       lambda t, i: t.index_fill(1, i, -np.inf), [rand((3, 5)), np.array([0, 3], np.int64)])
    ex("index_fill", lambda t, i: t.index_fill(0, i, 7), lambda t, i: t.index_fill(0, i, 7),
       [randint((3, 5), -9, 9, "int64"), np.array([2], np.int64)], overload="int")
    check("index_add", lambda t, i, s: t.index_add(0, i, s), lambda t, i, s: t.index_add(0, i, s),
          [rand((4, 3)), np.array([1, 3, 1, 1, 0], np.int64), rand((5, 3))], tol="reduction",
          reduce_n=5)
    check("index_add", lambda t, i, s: lm.index_add(t, 1, i, s, alpha=2.0),
          lambda t, i, s: torch.index_add(t, 1, i, s, alpha=2.0),
          [rand((2, 4)), np.array([3, 3], np.int64), rand((2, 2))], tol="reduction",
          reduce_n=2, overload="alpha")


def test_index_put():
    ex("index_put", lambda t, i, v: t.index_put((i,), v), lambda t, i, v: t.index_put((i,), v),
       [rand((5, 3)), np.array([0, -2], np.int64), rand((2, 3))])
    ex("index_put", lambda t, r, c, v: t.index_put((r, c), v),
       lambda t, r, c, v: t.index_put((r, c), v),
       [rand((4, 5)), np.array([[0], [3]], np.int64), np.array([1, -1], np.int64), rand((2, 2))],
       overload="broadcast")
    check("index_put", lambda t, r, v: lm.index_put(t, (r,), v, accumulate=True),
          lambda t, r, v: torch.index_put(t, (r,), v, accumulate=True),
          [rand((4, 2)), np.array([1, 1, -1, 1], np.int64), rand((4, 2))], tol="reduction",
          reduce_n=4, overload="accumulate")


def test_indexing_errors():
    g = lm.Graph()
    x = g.input("x", (3, 4))
    i = g.input("i", (3, 2), dtype="int64")
    with pytest.raises(ValueError, match=r"gather: dim 2 is out of range for f32\[3, 4\]"):
        x.gather(2, i)
    with pytest.raises(TypeError, match="index_select.*float32|index_select.*f32"):
        x.index_select(0, g.input("f", (2,)))
    with pytest.raises(ValueError, match=r"index_copy.*\[3, 4\]"):
        x.index_copy(0, g.input("p", (2,), dtype="int64"), g.input("s", (2, 5)))
