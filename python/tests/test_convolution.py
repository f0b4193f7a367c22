"""Convolutions (F.conv1d/2d/3d, F.conv_transpose1d/2d, F.unfold) against torch.

Each case combines stride / padding (ints, tuples, "same", "valid") / dilation /
groups / bias, batched and unbatched inputs, a non-contiguous input and a
symbolic spatial size; f16 / bf16 / f64 where torch supports them on CPU.
"""

import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, rand

# (input shape, weight shape, kwargs) for conv2d.
CONV2D_CASES = [
    ((2, 3, 9, 8), (4, 3, 3, 3), dict()),
    ((1, 4, 10, 9), (6, 2, 3, 2), dict(stride=2, padding=1, groups=2)),
    ((2, 2, 11, 11), (3, 2, 3, 3), dict(stride=(2, 1), padding=(2, 0), dilation=(2, 3))),
    ((1, 6, 7, 7), (6, 1, 3, 3), dict(padding=1, groups=6)),  # depthwise
    ((1, 3, 8, 6), (5, 3, 4, 3), dict(padding="same", dilation=2)),
    ((1, 3, 8, 6), (5, 3, 2, 2), dict(padding="valid", stride=3)),
    ((3, 7, 7), (2, 3, 1, 1), dict()),  # unbatched, 1x1
]


@pytest.mark.parametrize("case", range(len(CONV2D_CASES)))
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d(case, bias):
    xs, ws, kw = CONV2D_CASES[case]
    inputs = [rand(xs), rand(ws)] + ([rand((ws[0],))] if bias else [])
    k = xs[-3] if len(xs) == 4 else xs[0]
    check("conv2d", lambda x, w, *b: lm.F.conv2d(x, w, *b, **kw),
          lambda x, w, *b: TF.conv2d(x, w, *b, **kw), inputs, tol="reduction",
          reduce_n=k * ws[2] * ws[3], overload="bias" if bias else None)


def test_conv2d_noncontiguous_and_symbolic():
    w = rand((4, 3, 3, 3))
    # Permuted input (NHWC storage), and a stepped slice.
    check("conv2d", lambda x, w: lm.F.conv2d(x, w, padding=1),
          lambda x, w: TF.conv2d(x, w, padding=1), [rand((2, 7, 6, 3)), w],
          views=[lambda t: t.permute(0, 3, 1, 2), None], tol="reduction", reduce_n=27)
    check("conv2d", lambda x, w: lm.F.conv2d(x, w, stride=2),
          lambda x, w: TF.conv2d(x, w, stride=2), [rand((1, 3, 12, 14)), w],
          views=[lambda t: t[:, :, ::2, 1:], None], tol="reduction", reduce_n=27)
    # Symbolic height and width: the same program for any size.
    check("conv2d", lambda x, w: lm.F.conv2d(x, w, padding=(1, 2), stride=2),
          lambda x, w: TF.conv2d(x, w, padding=(1, 2), stride=2), [rand((1, 3, 9, 10)), w],
          symbolic={0: {2: "h", 3: "w"}}, tol="reduction", reduce_n=27)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_conv2d_dtypes(dtype):
    check("conv2d", lambda x, w, b: lm.F.conv2d(x, w, b, padding=1, groups=2),
          # torch's reduced-precision CPU convs accumulate in float; f64 is the reference
          lambda x, w, b: TF.conv2d(x.double(), w.double(), b.double(), padding=1,
                                    groups=2).to(x.dtype),
          [rand((1, 4, 6, 6)), rand((4, 2, 3, 3)), rand((4,))], dtype=dtype, tol="reduction",
          reduce_n=18)


CONV1D_CASES = [
    ((2, 4, 17), (6, 4, 3), dict(padding=1)),
    ((1, 4, 20), (4, 2, 5), dict(stride=3, dilation=2, groups=2)),
    ((2, 3, 9), (2, 3, 4), dict(padding="same")),
    ((3, 12), (5, 3, 2), dict(stride=2, padding=(3,))),  # unbatched
]


@pytest.mark.parametrize("case", range(len(CONV1D_CASES)))
def test_conv1d(case):
    xs, ws, kw = CONV1D_CASES[case]
    check("conv1d", lambda x, w, b: lm.F.conv1d(x, w, b, **kw),
          lambda x, w, b: TF.conv1d(x, w, b, **kw), [rand(xs), rand(ws), rand((ws[0],))],
          tol="reduction", reduce_n=ws[1] * ws[2])


def test_conv1d_symbolic_length():
    # Whisper-style: a stride-2 conv over an audio length that varies per call.
    check("conv1d", lambda x, w, b: lm.F.conv1d(x, w, b, stride=2, padding=1),
          lambda x, w, b: TF.conv1d(x, w, b, stride=2, padding=1),
          [rand((1, 4, 15)), rand((8, 4, 3)), rand((8,))], symbolic={0: {2: "t"}},
          tol="reduction", reduce_n=12)


def test_conv3d():
    check("conv3d", lambda x, w, b: lm.F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
          lambda x, w, b: TF.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
          [rand((1, 4, 5, 6, 4)), rand((4, 2, 3, 3, 2)), rand((4,))], tol="reduction",
          reduce_n=36)


CONVT2D_CASES = [
    ((1, 4, 5, 6), (4, 3, 3, 3), dict()),
    ((2, 4, 4, 5), (4, 2, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 2, 5, 4), (2, 3, 2, 3), dict(stride=(3, 2), padding=(0, 1), dilation=(2, 1))),
    ((1, 2, 3, 3), (2, 2, 3, 3), dict(stride=2, dilation=2, output_padding=1)),
    ((3, 4, 4), (3, 2, 2, 2), dict(stride=2)),  # unbatched
]


@pytest.mark.parametrize("case", range(len(CONVT2D_CASES)))
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose2d(case, bias):
    xs, ws, kw = CONVT2D_CASES[case]
    groups = kw.get("groups", 1)
    inputs = [rand(xs), rand(ws)] + ([rand((ws[1] * groups,))] if bias else [])
    check("conv_transpose2d", lambda x, w, *b: lm.F.conv_transpose2d(x, w, *b, **kw),
          lambda x, w, *b: TF.conv_transpose2d(x, w, *b, **kw), inputs, tol="reduction",
          reduce_n=ws[0] * ws[2] * ws[3], overload="bias" if bias else None)


def test_conv_transpose1d():
    for xs, ws, kw in [((2, 3, 7), (3, 4, 3), dict(stride=2, padding=1, output_padding=1)),
                       ((1, 4, 6), (4, 1, 4), dict(groups=2, dilation=2))]:
        groups = kw.get("groups", 1)
        check("conv_transpose1d", lambda x, w, b: lm.F.conv_transpose1d(x, w, b, **kw),
              lambda x, w, b: TF.conv_transpose1d(x, w, b, **kw),
              [rand(xs), rand(ws), rand((ws[1] * groups,))], tol="reduction",
              reduce_n=ws[0] * ws[2])


def test_conv_transpose2d_symbolic():
    check("conv_transpose2d", lambda x, w: lm.F.conv_transpose2d(x, w, stride=2, padding=1),
          lambda x, w: TF.conv_transpose2d(x, w, stride=2, padding=1),
          [rand((1, 2, 4, 5)), rand((2, 3, 3, 3))], symbolic={0: {2: "h", 3: "w"}},
          tol="reduction", reduce_n=18)


def test_unfold():
    for xs, kw in [((2, 3, 6, 5), dict(kernel_size=2)),
                   ((1, 2, 7, 8), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=2))]:
        check("unfold", lambda x: lm.F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [rand(xs)],
              tol="exact")


def test_conv_errors():
    g = lm.Graph()
    x = g.input("x", (1, 3, 8, 8))
    with pytest.raises(ValueError, match="conv2d.*groups=1"):
        lm.F.conv2d(x, g.input("w", (4, 2, 3, 3)))
    with pytest.raises(ValueError, match="same"):
        lm.F.conv2d(x, g.input("w2", (4, 3, 3, 3)), stride=2, padding="same")
    with pytest.raises(TypeError, match="dtype"):
        lm.F.conv2d(x, g.input("w3", (4, 3, 3, 3), dtype="float16"))
    with pytest.raises(ValueError, match="output padding"):
        lm.F.conv_transpose2d(x, g.input("w4", (3, 3, 3, 3)), stride=2, output_padding=2)
