"""Normalizations validated against torch.nn.functional (CPU): several shapes and
dims, non-contiguous inputs, f16 / bf16 (computed in f32 as torch), optional
weight / bias, symbolic dims, extreme rows (all -inf, huge values)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, edge_values, rand

HALF = ["float16", "bfloat16"]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family(name):
    lfn, tfn = getattr(lm.F, name), getattr(TF, name)
    for shape, dim in [((3, 5), -1), ((2, 1, 7), 1), ((4,), 0), ((2, 3, 4), 0), ((2, 3, 4), -2)]:
        check(name, lambda t: lfn(t, dim), lambda t: tfn(t, dim), [rand(shape) * 3], tol="composite")
    check(name, lambda t: lfn(t, 0), lambda t: tfn(t, 0), [rand((6, 4))], views=[lambda t: t.mT],
          tol="composite")
    check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [rand((1, 5))],
          views=[lambda t: t.expand(3, 5)], tol="composite")
    for dt in HALF + ["float64"]:
        check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [rand((3, 8)) * 4], dtype=dt,
              tol="composite")
    check(name, lambda t: lfn(t, -1, dtype="float32"), lambda t: tfn(t, -1, dtype=torch.float32),
          [rand((3, 8))], dtype="float16", tol="composite", overload="dtype")
    inf = np.inf
    rows = np.array([[1e30, 1e30, -1e30], [-inf, 0.0, -inf], [-inf, -inf, -inf], [inf, 1.0, 2.0],
                     [np.nan, 1.0, 2.0], [100.0, -100.0, 0.0]], np.float32)
    check(name, lambda t: lfn(t, 1), lambda t: tfn(t, 1), [rows], tol="composite", overload="edge")
    check(name, lambda t: lfn(t, -1), lambda t: tfn(t, -1), [rand((2, 7))], symbolic={0: {1: "s"}},
          tol="composite", overload="symbolic")
    if name != "softmin":
        check(name, lambda t: getattr(t, name)(-1), lambda t: getattr(t, name)(-1), [rand((3, 4))],
              tol="composite", overload="method")
        check(name, lambda t: getattr(lm, name)(t, 0), lambda t: getattr(torch, name)(t, 0), [rand((3, 4))],
              tol="composite", overload="torch")


def test_layer_norm():
    for shape, ns in [((2, 5), (5,)), ((2, 3, 4), (3, 4)), ((6,), (6,)), ((2, 1, 8), (8,))]:
        check("layer_norm", lambda x: lm.F.layer_norm(x, ns), lambda x: TF.layer_norm(x, ns),
              [rand(shape) * 3 + 1], tol="composite")
        check("layer_norm", lambda x, w, b: lm.F.layer_norm(x, ns, w, b, 1e-3),
              lambda x, w, b: TF.layer_norm(x, ns, w, b, 1e-3),
              [rand(shape), rand(ns), rand(ns)], tol="composite", overload="affine")
    check("layer_norm", lambda x, w: lm.F.layer_norm(x, (4,), weight=w),
          lambda x, w: TF.layer_norm(x, (4,), weight=w), [rand((3, 4)), rand((4,))], tol="composite",
          overload="affine")
    check("layer_norm", lambda x: lm.F.layer_norm(x, (3,)), lambda x: TF.layer_norm(x, (3,)),
          [rand((3, 5))], views=[lambda t: t.mT], tol="composite")
    for dt in HALF:
        check("layer_norm", lambda x, w, b: lm.F.layer_norm(x, (8,), w, b),
              lambda x, w, b: TF.layer_norm(x, (8,), w, b), [rand((3, 8)), rand((8,)), rand((8,))],
              dtype=dt, tol="composite", overload="affine")
    check("layer_norm", lambda x: lm.F.layer_norm(x, (8,)), lambda x: TF.layer_norm(x, (8,)),
          [rand((3, 8)) * 1e3 + 1e4], tol="composite")
    check("layer_norm", lambda x: lm.F.layer_norm(x, (8,)), lambda x: TF.layer_norm(x, (8,)),
          [rand((2, 5, 8))], symbolic={0: {1: "s"}}, tol="composite", overload="symbolic")
    with pytest.raises(ValueError, match="layer_norm"):
        g = lm.Graph()
        lm.F.layer_norm(g.input("x", (2, 3)), (4,))


def test_rms_norm():
    for shape, ns in [((2, 5), (5,)), ((2, 3, 4), (3, 4)), ((7,), (7,))]:
        check("rms_norm", lambda x: lm.F.rms_norm(x, ns), lambda x: TF.rms_norm(x, ns), [rand(shape)],
              tol="composite")
        check("rms_norm", lambda x, w: lm.F.rms_norm(x, ns, w, 1e-5),
              lambda x, w: TF.rms_norm(x, ns, w, 1e-5), [rand(shape), rand(ns)], tol="composite",
              overload="weight")
    for dt in HALF:
        check("rms_norm", lambda x, w: lm.F.rms_norm(x, (8,), w), lambda x, w: TF.rms_norm(x, (8,), w),
              [rand((3, 8)), rand((8,))], dtype=dt, tol="composite", overload="weight")
    # default eps = f32 epsilon also for f16 inputs (tiny rows expose it)
    check("rms_norm", lambda x: lm.F.rms_norm(x, (4,)), lambda x: TF.rms_norm(x, (4,)),
          [rand((3, 4)) * 1e-3], dtype="float16", tol="composite", overload="eps_default")
    check("rms_norm", lambda x: lm.F.rms_norm(x, (4,)), lambda x: TF.rms_norm(x, (4,)),
          [rand((3, 4)) * 1e-4], tol="composite", overload="eps_default")
    check("rms_norm", lambda x, w: lm.F.rms_norm(x, (6,), w), lambda x, w: TF.rms_norm(x, (6,), w),
          [rand((3, 6)), rand((6,))], dtype="float64", tol="composite", overload="weight")


def test_group_norm():
    for shape, groups in [((2, 4, 3), 2), ((1, 6, 2, 3), 3), ((3, 4), 4), ((2, 8, 5), 1)]:
        c = shape[1]
        check("group_norm", lambda x: lm.F.group_norm(x, groups), lambda x: TF.group_norm(x, groups),
              [rand(shape) * 2 + 1], tol="composite")
        check("group_norm", lambda x, w, b: lm.F.group_norm(x, groups, w, b, 1e-3),
              lambda x, w, b: TF.group_norm(x, groups, w, b, 1e-3), [rand(shape), rand((c,)), rand((c,))],
              tol="composite", overload="affine")
    check("group_norm", lambda x, w, b: lm.F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
          [rand((2, 4, 6)), rand((4,)), rand((4,))], dtype="bfloat16", tol="composite", overload="affine")
    check("group_norm", lambda x: lm.F.group_norm(x, 2), lambda x: TF.group_norm(x, 2),
          [rand((2, 6, 4))], views=[lambda t: t.transpose(1, 2)], tol="composite")


def test_batch_norm():
    for shape in [(4, 3), (2, 3, 5), (2, 3, 2, 2)]:
        c = shape[1]
        rm, rv = rand((c,)), rand((c,), low=0.5, high=2.0)
        check("batch_norm", lambda x, m, v: lm.F.batch_norm(x, m, v), lambda x, m, v: TF.batch_norm(x, m, v),
              [rand(shape), rm, rv], tol="composite", overload="inference")
        check("batch_norm", lambda x, m, v, w, b: lm.F.batch_norm(x, m, v, w, b, eps=1e-3),
              lambda x, m, v, w, b: TF.batch_norm(x, m, v, w, b, eps=1e-3),
              [rand(shape), rm, rv, rand((c,)), rand((c,))], tol="composite", overload="inference")
        check("batch_norm", lambda x, w, b: lm.F.batch_norm(x, None, None, w, b, training=True),
              lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True),
              [rand(shape), rand((c,)), rand((c,))], tol="composite", overload="training")
    check("batch_norm", lambda x, m, v: lm.F.batch_norm(x, m, v), lambda x, m, v: TF.batch_norm(x, m, v),
          [rand((2, 4, 3)), rand((4,)), rand((4,), low=0.5, high=2.0)], dtype="float16", tol="composite",
          overload="inference")


def test_instance_norm_normalize():
    check("instance_norm", lambda x: lm.F.instance_norm(x), lambda x: TF.instance_norm(x),
          [rand((2, 3, 5))], tol="composite")
    check("instance_norm", lambda x, w, b: lm.F.instance_norm(x, weight=w, bias=b),
          lambda x, w, b: TF.instance_norm(x, weight=w, bias=b), [rand((2, 3, 2, 4)), rand((3,)), rand((3,))],
          tol="composite", overload="affine")
    for p, dim in [(2.0, 1), (1.0, -1), (3.0, 0), (float("inf"), 1)]:
        check("normalize", lambda x: lm.F.normalize(x, p, dim), lambda x: TF.normalize(x, p, dim),
              [rand((3, 4, 2))], tol="composite")
    check("normalize", lambda x: lm.F.normalize(x), lambda x: TF.normalize(x), [np.zeros((2, 3), np.float32)],
          tol="composite", overload="zeros")
    check("normalize", lambda x: lm.F.normalize(x, dim=-1), lambda x: TF.normalize(x, dim=-1),
          [rand((3, 8))], dtype="float16", tol="composite")
    check("normalize", lambda x: lm.F.normalize(x, dim=0), lambda x: TF.normalize(x, dim=0),
          [edge_values()[:, None]], tol="composite", overload="edge")
