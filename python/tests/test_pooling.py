"""Pooling (F.max_pool*, F.avg_pool*, F.lp_pool*, F.adaptive_*_pool*) against torch:
kernel / stride / padding / dilation / ceil_mode / count_include_pad / divisor
combinations, unbatched and non-contiguous inputs, symbolic sizes, integer and
reduced-precision dtypes, and inf / nan propagation."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, edge_values, rand, randint

MAX2D_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((1, 2, 9, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 1, 10, 11), dict(kernel_size=(3, 2), stride=(2, 3), dilation=(2, 1), ceil_mode=True)),
    ((2, 7, 6), dict(kernel_size=2, stride=1, padding=1)),  # unbatched
    ((1, 2, 5, 5), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
]


@pytest.mark.parametrize("case", range(len(MAX2D_CASES)))
def test_max_pool2d(case):
    xs, kw = MAX2D_CASES[case]
    check("max_pool2d", lambda x: lm.F.max_pool2d(x, **kw), lambda x: TF.max_pool2d(x, **kw),
          [rand(xs)], tol="exact")


def test_max_pool2d_edges_views_symbolic_dtypes():
    # inf / nan / -0.0: max propagates nan and keeps infinities, as torch.
    e = edge_values()
    x = np.resize(e, (1, 2, 6, 6)).astype(np.float32)
    check("max_pool2d", lambda x: lm.F.max_pool2d(x, 2, padding=1),
          lambda x: TF.max_pool2d(x, 2, padding=1), [x], tol="exact")
    check("max_pool2d", lambda x: lm.F.max_pool2d(x, 3, 2, 1),
          lambda x: TF.max_pool2d(x, 3, 2, 1), [rand((1, 9, 8, 3))],
          views=[lambda t: t.permute(0, 3, 1, 2)], tol="exact")
    check("max_pool2d", lambda x: lm.F.max_pool2d(x, 2, ceil_mode=True),
          lambda x: TF.max_pool2d(x, 2, ceil_mode=True), [rand((1, 2, 7, 9))],
          symbolic={0: {2: "h", 3: "w"}}, tol="exact")
    for dt in ["float16", "bfloat16", "float64"]:
        check("max_pool2d", lambda x: lm.F.max_pool2d(x, 3, 1, 1),
              lambda x: TF.max_pool2d(x, 3, 1, 1), [rand((1, 2, 5, 6))], dtype=dt, tol="exact")


def test_max_pool_int():
    # torch's CPU max_pool2d accepts integers; luminal pads with the dtype minimum.
    x = randint((1, 2, 6, 5), -100, 100, "int64")
    check("max_pool2d", lambda x: lm.F.max_pool2d(x, 2, 2, 1),
          lambda x: TF.max_pool2d(x, 2, 2, 1), [x], tol="exact")


def test_max_pool1d_and_3d():
    for xs, kw in [((2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
                   ((1, 4, 10), dict(kernel_size=2, dilation=3, ceil_mode=True)),
                   ((3, 8), dict(kernel_size=4))]:
        check("max_pool1d", lambda x: lm.F.max_pool1d(x, **kw), lambda x: TF.max_pool1d(x, **kw),
              [rand(xs)], tol="exact")
    check("max_pool3d", lambda x: lm.F.max_pool3d(x, 2, (1, 2, 2), 1),
          lambda x: TF.max_pool3d(x, 2, (1, 2, 2), 1), [rand((1, 2, 4, 5, 6))], tol="exact")


AVG2D_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((1, 2, 9, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 9, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((1, 2, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 2, 10, 8), dict(kernel_size=(4, 3), stride=(3, 2), padding=(2, 1), ceil_mode=True,
                         count_include_pad=False)),
    ((1, 2, 6, 6), dict(kernel_size=3, padding=1, divisor_override=5)),
    ((3, 6, 5), dict(kernel_size=2, stride=1)),  # unbatched
]


@pytest.mark.parametrize("case", range(len(AVG2D_CASES)))
def test_avg_pool2d(case):
    xs, kw = AVG2D_CASES[case]
    check("avg_pool2d", lambda x: lm.F.avg_pool2d(x, **kw), lambda x: TF.avg_pool2d(x, **kw),
          [rand(xs)], tol="reduction", reduce_n=16)


def test_avg_pool2d_symbolic_views_dtypes():
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    check("avg_pool2d", lambda x: lm.F.avg_pool2d(x, **kw), lambda x: TF.avg_pool2d(x, **kw),
          [rand((1, 2, 9, 8))], symbolic={0: {2: "h", 3: "w"}}, tol="reduction", reduce_n=9)
    check("avg_pool2d", lambda x: lm.F.avg_pool2d(x, 2), lambda x: TF.avg_pool2d(x, 2),
          [rand((1, 8, 6, 2))], views=[lambda t: t.permute(0, 3, 2, 1)], tol="reduction",
          reduce_n=4)
    for dt in ["float16", "bfloat16", "float64"]:
        check("avg_pool2d", lambda x: lm.F.avg_pool2d(x, 3, 2, 1),
              lambda x: TF.avg_pool2d(x, 3, 2, 1), [rand((1, 2, 7, 6))], dtype=dt,
              tol="reduction", reduce_n=9)


def test_avg_pool1d_and_3d():
    for xs, kw in [((2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
                   ((1, 2, 10), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True,
                                     count_include_pad=False)),
                   ((4, 9), dict(kernel_size=2))]:
        check("avg_pool1d", lambda x: lm.F.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw),
              [rand(xs)], tol="reduction", reduce_n=4)
    check("avg_pool3d", lambda x: lm.F.avg_pool3d(x, 2, padding=1, count_include_pad=False),
          lambda x: TF.avg_pool3d(x, 2, padding=1, count_include_pad=False),
          [rand((1, 2, 4, 5, 3))], tol="reduction", reduce_n=8)


def test_lp_pool():
    check("lp_pool2d", lambda x: lm.F.lp_pool2d(x, 2.0, 2), lambda x: TF.lp_pool2d(x, 2.0, 2),
          [rand((1, 2, 6, 6))], tol="composite")
    check("lp_pool2d", lambda x: lm.F.lp_pool2d(x, 3.0, (3, 2), stride=1),
          lambda x: TF.lp_pool2d(x, 3.0, (3, 2), stride=1), [rand((1, 2, 5, 6), low=0.1, high=2)],
          tol="composite")
    check("lp_pool1d", lambda x: lm.F.lp_pool1d(x, 2.0, 3, 2), lambda x: TF.lp_pool1d(x, 2.0, 3, 2),
          [rand((2, 3, 9))], tol="composite")


ADAPTIVE_CASES = [
    ((2, 3, 8, 8), (4, 4)),   # equal bins
    ((1, 2, 7, 9), (3, 4)),   # overlapping bins
    ((1, 2, 5, 6), (1, 1)),   # global
    ((1, 2, 5, 6), (7, 8)),   # more bins than inputs
    ((3, 9, 7), (4, 2)),      # unbatched
]


@pytest.mark.parametrize("case", range(len(ADAPTIVE_CASES)))
def test_adaptive_avg_pool2d(case):
    xs, out = ADAPTIVE_CASES[case]
    check("adaptive_avg_pool2d", lambda x: lm.F.adaptive_avg_pool2d(x, out),
          lambda x: TF.adaptive_avg_pool2d(x, out), [rand(xs)], tol="reduction", reduce_n=16)


@pytest.mark.parametrize("case", range(len(ADAPTIVE_CASES)))
def test_adaptive_max_pool2d(case):
    xs, out = ADAPTIVE_CASES[case]
    check("adaptive_max_pool2d", lambda x: lm.F.adaptive_max_pool2d(x, out),
          lambda x: TF.adaptive_max_pool2d(x, out), [rand(xs)], tol="exact")


def test_adaptive_pools_more():
    check("adaptive_avg_pool2d", lambda x: lm.F.adaptive_avg_pool2d(x, (3, None)),
          lambda x: TF.adaptive_avg_pool2d(x, (3, None)), [rand((1, 2, 7, 5))],
          tol="reduction", reduce_n=9)
    check("adaptive_avg_pool2d", lambda x: lm.F.adaptive_avg_pool2d(x, 3),
          lambda x: TF.adaptive_avg_pool2d(x, 3), [rand((1, 2, 7, 10))],
          symbolic={0: {2: "h", 3: "w"}}, tol="reduction", reduce_n=16)
    for dt in ["float16", "bfloat16"]:
        check("adaptive_avg_pool2d", lambda x: lm.F.adaptive_avg_pool2d(x, (2, 3)),
              lambda x: TF.adaptive_avg_pool2d(x, (2, 3)), [rand((1, 2, 5, 7))], dtype=dt,
              tol="reduction", reduce_n=9)
    for xs, out in [((2, 3, 10), 4), ((1, 2, 7), 3), ((4, 6), 6)]:
        check("adaptive_avg_pool1d", lambda x: lm.F.adaptive_avg_pool1d(x, out),
              lambda x: TF.adaptive_avg_pool1d(x, out), [rand(xs)], tol="reduction", reduce_n=4)
        check("adaptive_max_pool1d", lambda x: lm.F.adaptive_max_pool1d(x, out),
              lambda x: TF.adaptive_max_pool1d(x, out), [rand(xs)], tol="exact")
    check("adaptive_max_pool2d", lambda x: lm.F.adaptive_max_pool2d(x, 2),
          lambda x: TF.adaptive_max_pool2d(x, 2), [np.resize(edge_values(), (1, 1, 4, 5))],
          tol="exact")
    check("adaptive_avg_pool3d", lambda x: lm.F.adaptive_avg_pool3d(x, (2, 3, 2)),
          lambda x: TF.adaptive_avg_pool3d(x, (2, 3, 2)), [rand((1, 2, 5, 7, 4))],
          tol="reduction", reduce_n=16)


def test_pool_errors():
    g = lm.Graph()
    x = g.input("x", (1, 1, 4, 4))
    with pytest.raises(ValueError, match="max_pool2d.*half"):
        lm.F.max_pool2d(x, 2, 2, 2)
    with pytest.raises(ValueError, match="too small"):
        lm.F.max_pool2d(x, 5)
    with pytest.raises(TypeError, match="avg_pool2d"):
        lm.F.avg_pool2d(g.input("i", (1, 4, 4), dtype="int32"), 2)
    with pytest.raises(RuntimeError, match="return_indices"):
        lm.F.max_pool2d(x, 2, return_indices=True)
