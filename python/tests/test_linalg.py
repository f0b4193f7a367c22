"""Linear algebra (matmul family, linear, addmm/baddbmm, einsum, tensordot) against torch.

Shapes cover torch.matmul's 1-D promotion rules, broadcast batch dims, size-1 dims,
non-contiguous (transposed, sliced, expanded) operands and symbolic dims; f16 / bf16 /
f64 / int where torch supports them on CPU. Products are reductions over K:
tolerance class "reduction" with n = K.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, rand, randint

MATMUL_CASES = [
    ((5,), (5,)),              # dot -> rank 0
    ((5,), (5, 3)),            # 1-D promoted then removed
    ((4, 5), (5,)),            # matrix @ vector
    ((4, 5), (5, 3)),
    ((2, 4, 5), (5, 3)),       # batch @ matrix
    ((4, 5), (2, 5, 3)),       # matrix @ batch
    ((2, 1, 4, 5), (3, 5, 6)),  # broadcast batch dims
    ((1, 5), (5, 1)),          # size-1 M and N
    ((3, 2, 1, 5), (5,)),      # N-D @ 1-D
    ((5,), (2, 3, 5, 4)),      # 1-D @ N-D
]


@pytest.mark.parametrize("case", range(len(MATMUL_CASES)))
def test_matmul(case):
    a, b = MATMUL_CASES[case]
    k = a[-1]
    check("matmul", lambda x, y: x @ y, lambda x, y: x @ y, [rand(a), rand(b)],
          tol="reduction", reduce_n=k)
    check("matmul", lm.matmul, torch.matmul, [rand(a), rand(b)], tol="reduction", reduce_n=k)


def test_matmul_noncontiguous_and_symbolic():
    check("matmul", lambda x, y: x.matmul(y), lambda x, y: x.matmul(y),
          [rand((6, 4)), rand((3, 6))], views=[lambda t: t.mT, lambda t: t.mT],
          tol="reduction", reduce_n=6)
    check("matmul", lm.matmul, torch.matmul, [rand((3, 8, 5)), rand((5, 1))],
          views=[lambda t: t[:, ::2], lambda t: t.expand(5, 4)], tol="reduction", reduce_n=5)
    check("matmul", lm.matmul, torch.matmul, [rand((2, 7, 5)), rand((5, 3))],
          symbolic={0: {1: "s"}}, tol="reduction", reduce_n=5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_matmul_dtypes(dtype):
    check("matmul", lm.matmul, torch.matmul, [rand((2, 3, 8)), rand((8, 4))], dtype=dtype,
          tol="reduction", reduce_n=8)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_matmul_ints(dtype):
    check("matmul", lm.matmul, torch.matmul,
          [randint((3, 4), -50, 50, dtype), randint((4, 2), -50, 50, dtype)])


def test_matmul_inf_nan():
    a = np.array([[1.0, np.inf], [np.nan, 2.0], [0.0, 1.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, -1.0]], np.float32)
    check("matmul", lm.matmul, torch.matmul, [a, b], overload="edge", tol="reduction",
          reduce_n=2)


def test_matmul_errors():
    g = lm.Graph()
    a, b = g.input("a", (2, 3)), g.input("b", (4, 2))
    with pytest.raises(ValueError, match=r"matmul.*\[2, 3\].*\[4, 2\]"):
        lm.matmul(a, b)
    with pytest.raises(TypeError, match="matmul"):
        lm.matmul(a, g.input("c", (3, 2), dtype="float16"))


def test_mm_bmm_mv_dot():
    check("mm", lm.mm, torch.mm, [rand((4, 6)), rand((6, 3))], tol="reduction", reduce_n=6)
    check("mm", lambda x, y: x.mm(y), lambda x, y: x.mm(y), [rand((6, 4)), rand((6, 3))],
          views=[lambda t: t.t(), None], tol="reduction", reduce_n=6)
    check("bmm", lm.bmm, torch.bmm, [rand((3, 4, 6)), rand((3, 6, 2))], tol="reduction",
          reduce_n=6)
    check("bmm", lm.bmm, torch.bmm, [rand((3, 4, 6)), rand((1, 6, 2))],
          views=[None, lambda t: t.expand(3, 6, 2)], tol="reduction", reduce_n=6)
    check("mv", lm.mv, torch.mv, [rand((4, 6)), rand((6,))], tol="reduction", reduce_n=6)
    check("dot", lm.dot, torch.dot, [rand((7,)), rand((7,))], tol="reduction", reduce_n=7)
    check("dot", lambda x, y: x.dot(y), lambda x, y: x.dot(y),
          [randint((7,), -9, 9, "int64"), randint((7,), -9, 9, "int64")])
    check("inner", lm.inner, torch.inner, [rand((2, 5)), rand((3, 5))], tol="reduction",
          reduce_n=5)
    check("outer", lm.outer, torch.outer, [rand((4,)), rand((3,))])
    check("outer", lambda x, y: x.outer(y), lambda x, y: x.outer(y),
          [randint((4,), -5, 5, "int32"), randint((3,), -5, 5, "int32")])


@pytest.mark.parametrize("bias", [False, True])
def test_linear(bias):
    for xs in [(5, 8), (2, 3, 8), (8,)]:
        inputs = [rand(xs), rand((6, 8))] + ([rand((6,))] if bias else [])
        check("linear", lm.F.linear, TF.linear, inputs, tol="reduction", reduce_n=8,
              overload="bias" if bias else None)


def test_linear_dtypes():
    for dt in ["float16", "bfloat16", "float64"]:
        check("linear", lm.F.linear, TF.linear, [rand((3, 8)), rand((4, 8)), rand((4,))],
              dtype=dt, tol="reduction", reduce_n=8, overload="bias")


def test_bilinear():
    check("bilinear", lm.F.bilinear, TF.bilinear,
          [rand((4, 3)), rand((4, 5)), rand((2, 3, 5)), rand((2,))], tol="reduction",
          reduce_n=15)


def test_addmm_family():
    check("addmm", lambda i, a, b: lm.addmm(i, a, b, beta=0.5, alpha=2.0),
          lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0),
          [rand((3,)), rand((4, 5)), rand((5, 3))], tol="reduction", reduce_n=5)
    # beta = 0 ignores input, even nan/inf.
    check("addmm", lambda i, a, b: i.addmm(a, b, beta=0.0),
          lambda i, a, b: i.addmm(a, b, beta=0.0),
          [np.full((4, 3), np.nan, np.float32), rand((4, 5)), rand((5, 3))],
          overload="beta0", tol="reduction", reduce_n=5)
    check("addmv", lambda i, a, b: lm.addmv(i, a, b, alpha=-1.0),
          lambda i, a, b: torch.addmv(i, a, b, alpha=-1.0),
          [rand((4,)), rand((4, 5)), rand((5,))], tol="reduction", reduce_n=5)
    check("baddbmm", lambda i, a, b: lm.baddbmm(i, a, b, beta=2.0, alpha=0.5),
          lambda i, a, b: torch.baddbmm(i, a, b, beta=2.0, alpha=0.5),
          [rand((1, 4, 3)), rand((2, 4, 5)), rand((2, 5, 3))], tol="reduction", reduce_n=5)
    check("addbmm", lm.addbmm, torch.addbmm,
          [rand((4, 3)), rand((2, 4, 5)), rand((2, 5, 3))], tol="reduction", reduce_n=10)


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),   # attention scores
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),        # bilinear, three operands
    ("ab,cd", [(2, 3), (4, 5)]),                           # implicit outer product
    ("Ba,aB->B", [(3, 4), (4, 3)]),                        # upper-case labels
    ("ij,kj->ik", [(3, 4), (1, 4)]),                       # size-1 broadcast label k
]


@pytest.mark.parametrize("case", range(len(EINSUM_CASES)))
def test_einsum(case):
    eq, shapes = EINSUM_CASES[case]
    check("einsum", lambda *t: lm.einsum(eq, *t), lambda *t: torch.einsum(eq, *t),
          [rand(s) for s in shapes], tol="reduction", reduce_n=20)


def test_einsum_list_operands_and_errors():
    check("einsum", lambda a, b: lm.einsum("ij,jk", [a, b]),
          lambda a, b: torch.einsum("ij,jk", [a, b]), [rand((3, 4)), rand((4, 2))],
          tol="reduction", reduce_n=4)
    g = lm.Graph()
    a = g.input("a", (3, 4))
    with pytest.raises(ValueError, match="einsum"):
        lm.einsum("ij,jk->ik", a, g.input("b", (5, 2)))
    with pytest.raises(ValueError, match="einsum"):
        lm.einsum("ijk->i", a)


def test_tensordot():
    check("tensordot", lambda a, b: lm.tensordot(a, b, dims=2),
          lambda a, b: torch.tensordot(a, b, dims=2), [rand((3, 4, 5)), rand((4, 5, 2))],
          tol="reduction", reduce_n=20)
    check("tensordot", lambda a, b: lm.tensordot(a, b, dims=([0, 2], [2, 0])),
          lambda a, b: torch.tensordot(a, b, dims=([0, 2], [2, 0])),
          [rand((3, 4, 5)), rand((5, 2, 3))], overload="lists", tol="reduction", reduce_n=15)


def test_outer_promotes():
    check("outer", lm.outer, torch.outer, [randint((3,), -5, 5, "int32"), rand((2,))],
          overload="promote")
