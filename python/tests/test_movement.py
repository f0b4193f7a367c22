"""Shape and movement ops against torch: bit-exact (tolerance class "exact", which
also checks the sign of zero), for several shapes, negative dims, size-1 dims,
non-contiguous inputs, symbolic dims, edge values and every dtype.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, edge_values, rand, randint

DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "bool"]


def data(shape, dtype="float32"):
    if dtype == "bool":
        return randint(shape, 0, 2, "bool")
    if dtype.startswith("int") or dtype == "uint8":
        return randint(shape, -100, 100, dtype)
    return rand(shape, dtype)


def ex(op, lm_fn, torch_fn, inputs, **kw):
    check(op, lm_fn, torch_fn, inputs, tol="exact", **kw)


# ---- reshaping ---------------------------------------------------------------------


def test_reshape_view_flatten():
    x = rand((2, 3, 4))
    ex("reshape", lambda t: lm.reshape(t, (-1, 6)), lambda t: torch.reshape(t, (-1, 6)), [x])
    ex("reshape", lambda t: t.reshape(4, -1), lambda t: t.reshape(4, -1), [x],
       views=[lambda t: t.permute(2, 0, 1)])  # non-contiguous: a copy
    ex("flatten", lambda t: lm.flatten(t), lambda t: torch.flatten(t), [x])
    ex("flatten", lambda t: t.flatten(1), lambda t: t.flatten(1), [x])
    ex("flatten", lambda t: t.flatten(-3, -2), lambda t: t.flatten(-3, -2), [x],
       views=[lambda t: t.mT])
    ex("ravel", lambda t: t.ravel(), lambda t: t.ravel(), [x], views=[lambda t: t[:, ::2]])
    ex("unflatten", lambda t: t.unflatten(-1, (2, -1)), lambda t: t.unflatten(-1, (2, -1)), [x])
    ex("flatten", lambda t: t.flatten(), lambda t: t.flatten(), [rand((3, 4))],
       symbolic={0: {0: "s"}}, overload="symbolic")


@pytest.mark.parametrize("dtype", DTYPES)
def test_movement_dtypes(dtype):
    x = data((3, 4), dtype)
    ex("cat", lambda a: lm.cat([a, a.flip(0)], 1), lambda a: torch.cat([a, a.flip(0)], 1), [x],
       dtype=dtype if dtype in ("float16", "bfloat16") else None)
    ex("roll", lambda a: a.roll(1, 0), lambda a: a.roll(1, 0), [x],
       dtype=dtype if dtype in ("float16", "bfloat16") else None)
    ex("pad", lambda a: lm.F.pad(a, (1, 2)), lambda a: TF.pad(a, (1, 2)), [x],
       dtype=dtype if dtype in ("float16", "bfloat16") else None)
    ex("repeat", lambda a: a.repeat(2, 1, 2), lambda a: a.repeat(2, 1, 2), [x],
       dtype=dtype if dtype in ("float16", "bfloat16") else None)


# ---- axis order and size-1 axes -------------------------------------------------------


def test_axis_order():
    x = rand((2, 3, 4))
    ex("permute", lambda t: lm.permute(t, (2, 0, 1)), lambda t: torch.permute(t, (2, 0, 1)), [x])
    ex("transpose", lambda t: lm.transpose(t, 0, -1), lambda t: torch.transpose(t, 0, -1), [x])
    ex("swapdims", lambda t: t.swapdims(1, 2), lambda t: t.swapdims(1, 2), [x])
    ex("movedim", lambda t: t.movedim(0, -1), lambda t: t.movedim(0, -1), [x])
    ex("movedim", lambda t: lm.movedim(t, (0, 1), (2, 0)),
       lambda t: torch.movedim(t, (0, 1), (2, 0)), [x], overload="tuple")
    ex("moveaxis", lambda t: t.moveaxis(-1, 0), lambda t: t.moveaxis(-1, 0), [x])
    ex("t", lambda t: lm.t(t), lambda t: torch.t(t), [rand((3, 4))])
    ex("unsqueeze", lambda t: lm.unsqueeze(t, -1), lambda t: torch.unsqueeze(t, -1), [x])
    ex("squeeze", lambda t: lm.squeeze(t), lambda t: torch.squeeze(t), [rand((1, 3, 1, 2))])
    ex("squeeze", lambda t: lm.squeeze(t, (0, 1)), lambda t: torch.squeeze(t, (0, 1)),
       [rand((1, 3, 1, 2))], overload="dims")
    ex("broadcast_to", lambda t: t.broadcast_to((2, 3, 4)),
       lambda t: t.broadcast_to((2, 3, 4)), [rand((3, 1))])
    ex("broadcast_tensors", lambda a, b: lm.broadcast_tensors(a, b),
       lambda a, b: torch.broadcast_tensors(a, b), [rand((3, 1)), rand((2, 1, 4))])
    for fn in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for shape in [(), (3,), (2, 3)]:
            ex(fn, getattr(lm, fn), getattr(torch, fn), [rand(shape)])


# ---- repetition ----------------------------------------------------------------------


def test_repeat_tile_interleave():
    x = rand((2, 3))
    ex("repeat", lambda t: t.repeat(2, 3), lambda t: t.repeat(2, 3), [x])
    ex("repeat", lambda t: t.repeat((1, 2, 1)), lambda t: t.repeat((1, 2, 1)), [x],
       views=[lambda t: t.mT])
    ex("tile", lambda t: t.tile((2,)), lambda t: t.tile((2,)), [x])
    ex("tile", lambda t: lm.tile(t, (2, 1, 2)), lambda t: torch.tile(t, (2, 1, 2)), [x])
    ex("repeat_interleave", lambda t: t.repeat_interleave(3, dim=1),
       lambda t: t.repeat_interleave(3, dim=1), [x])
    ex("repeat_interleave", lambda t: t.repeat_interleave(2), lambda t: t.repeat_interleave(2),
       [x], overload="flat")
    ex("repeat_interleave", lambda t: t.repeat_interleave(2, dim=-3),
       lambda t: t.repeat_interleave(2, dim=-3), [rand((2, 1, 4))],
       views=[lambda t: t.expand(2, 3, 4)])


# ---- slicing -------------------------------------------------------------------------


def test_narrow_select_slice_unfold():
    x = rand((5, 6))
    ex("narrow", lambda t: t.narrow(1, 2, 3), lambda t: t.narrow(1, 2, 3), [x])
    ex("narrow", lambda t: lm.narrow(t, -2, -3, 2), lambda t: torch.narrow(t, -2, -3, 2), [x])
    ex("select", lambda t: t.select(1, -1), lambda t: t.select(1, -1), [x])
    ex("select", lambda t: lm.select(t, 0, 2), lambda t: torch.select(t, 0, 2), [x],
       views=[lambda t: t.mT])
    for sl in [np.s_[1:-1:2], np.s_[-100:100], np.s_[4:2], np.s_[::3], np.s_[-2:]]:
        ex("slice", lambda t: t[:, sl], lambda t: t[:, sl], [x])
    ex("unfold", lambda t: t.unfold(1, 3, 2), lambda t: t.unfold(1, 3, 2), [x])
    ex("unfold", lambda t: t.unfold(0, 2, 1), lambda t: t.unfold(0, 2, 1), [x],
       views=[lambda t: t.mT])
    ex("unfold", lambda t: t.unfold(-1, 2, 3), lambda t: t.unfold(-1, 2, 3), [rand((2, 9))],
       views=[lambda t: t[:, 1:]])


# ---- joining and splitting -----------------------------------------------------------


def test_cat_stack():
    a, b, c = rand((2, 3)), rand((2, 1)), rand((2, 4))
    ex("cat", lambda x, y, z: lm.cat([x, y, z], dim=-1), lambda x, y, z: torch.cat([x, y, z], -1),
       [a, b, c])
    ex("cat", lambda x, y: lm.cat((x, y)), lambda x, y: torch.cat((x, y)), [a, a],
       views=[None, lambda t: t.flip(0)])
    ex("concat", lambda x, y: lm.concat([x, y], 1), lambda x, y: torch.concat([x, y], 1), [a, b])
    ex("concatenate", lambda x, y: lm.concatenate([x, y], axis=0),
       lambda x, y: torch.concatenate([x, y], axis=0), [a, a])
    ex("cat", lambda x, y: lm.cat([x, y], 1), lambda x, y: torch.cat([x, y], 1),
       [rand((3, 2)), rand((3, 5))], symbolic={0: {0: "s"}, 1: {0: "s"}}, overload="symbolic")
    ex("cat", lambda x, y: lm.cat([x, y], 0), lambda x, y: torch.cat([x, y], 0),
       [edge_values(), edge_values()[::-1].copy()], overload="edge")
    ex("stack", lambda x, y: lm.stack([x, y], -1), lambda x, y: torch.stack([x, y], -1), [a, a])
    ex("stack", lambda x, y: lm.stack([x, y]), lambda x, y: torch.stack([x, y]), [a, a],
       views=[lambda t: t.mT, lambda t: t.mT])
    for fn in ["hstack", "vstack", "dstack", "column_stack"]:
        ex(fn, lambda x, y: getattr(lm, fn)([x, y]), lambda x, y: getattr(torch, fn)([x, y]),
           [rand((3,)), rand((3,))])
        ex(fn, lambda x, y: getattr(lm, fn)([x, y]), lambda x, y: getattr(torch, fn)([x, y]),
           [rand((2, 3)), rand((2, 3))])


def test_split_chunk_unbind():
    x = rand((7, 4))
    ex("split", lambda t: t.split(3), lambda t: t.split(3), [x])
    ex("split", lambda t: lm.split(t, [1, 3], dim=-1), lambda t: torch.split(t, [1, 3], dim=-1),
       [x], overload="sections")
    ex("split_with_sizes", lambda t: t.split_with_sizes([2, 5]),
       lambda t: t.split_with_sizes([2, 5]), [x])
    ex("chunk", lambda t: t.chunk(3), lambda t: t.chunk(3), [x])
    ex("chunk", lambda t: lm.chunk(t, 4, dim=1), lambda t: torch.chunk(t, 4, dim=1), [x],
       views=[lambda t: t[::2]])
    ex("tensor_split", lambda t: t.tensor_split(3), lambda t: t.tensor_split(3), [x])
    ex("unbind", lambda t: t.unbind(1), lambda t: t.unbind(1), [x])
    ex("unbind", lambda t: lm.unbind(t), lambda t: torch.unbind(t), [rand((3, 2))])


# ---- pad, flip, roll -------------------------------------------------------------------


PAD_CASES = [
    ((2, 3, 5), (1, 2), "constant"),
    ((2, 3, 5), (1, 2, 0, 1), "constant"),
    ((2, 3, 5), (-1, 2, 1, -2), "constant"),   # negative pads crop
    ((2, 3, 5), (2, 3), "reflect"),
    ((1, 2, 4, 5), (1, 2, 3, 0), "reflect"),
    ((2, 3, 5), (2, 4), "replicate"),
    ((1, 2, 4, 5), (1, 2, 3, 0), "replicate"),
    ((2, 3, 5), (2, 5), "circular"),
    ((1, 2, 4, 5), (1, 2, 3, 0), "circular"),
]


@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_pad(case):
    shape, p, mode = PAD_CASES[case]
    ex("pad", lambda t: lm.F.pad(t, p, mode=mode), lambda t: TF.pad(t, p, mode=mode),
       [rand(shape)], overload=mode)


def test_pad_values_and_views():
    for value in [-np.inf, np.nan, -0.0, 2.5]:
        ex("pad", lambda t: lm.F.pad(t, (1, 1, 2, 0), value=value),
           lambda t: TF.pad(t, (1, 1, 2, 0), value=value), [rand((3, 4))], overload="constant")
    ex("pad", lambda t: lm.F.pad(t, (2, 1), mode="reflect"),
       lambda t: TF.pad(t, (2, 1), mode="reflect"), [rand((2, 5, 3))],
       views=[lambda t: t.mT], overload="reflect")
    ex("pad", lambda t: lm.F.pad(t, (1, 1)), lambda t: TF.pad(t, (1, 1)), [rand((2, 5))],
       symbolic={0: {1: "s"}}, overload="constant")
    ex("pad", lambda t: lm.F.pad(t, (2, 2), mode="replicate"),
       lambda t: TF.pad(t, (2, 2), mode="replicate"), [rand((1, 2, 5))],
       symbolic={0: {2: "s"}}, overload="replicate")


def test_flip_roll_rot90():
    x = rand((3, 4, 5))
    ex("flip", lambda t: lm.flip(t, (0, -1)), lambda t: torch.flip(t, (0, -1)), [x])
    ex("fliplr", lambda t: t.fliplr(), lambda t: t.fliplr(), [x])
    ex("flipud", lambda t: lm.flipud(t), lambda t: torch.flipud(t), [x])
    ex("roll", lambda t: t.roll(2, 1), lambda t: t.roll(2, 1), [x])
    ex("roll", lambda t: t.roll((-1, 7), (0, 2)), lambda t: t.roll((-1, 7), (0, 2)), [x],
       overload="dims")
    ex("roll", lambda t: lm.roll(t, 5), lambda t: torch.roll(t, 5), [x], overload="flat")
    ex("roll", lambda t: t.roll(3, 0), lambda t: t.roll(3, 0), [rand((6, 2))],
       symbolic={0: {0: "s"}}, overload="symbolic")
    ex("roll", lambda t: t.roll(1, -1), lambda t: t.roll(1, -1), [x], views=[lambda t: t.mT])
    for k in [1, 2, 3, -1]:
        ex("rot90", lambda t: t.rot90(k, (1, 2)), lambda t: t.rot90(k, (1, 2)), [x])


# ---- diagonals and copies ----------------------------------------------------------------


def test_diagonals():
    x = rand((3, 4, 5))
    for off in [0, 1, -2]:
        ex("diagonal", lambda t: t.diagonal(off, 1, 2), lambda t: t.diagonal(off, 1, 2), [x])
        ex("diag_embed", lambda t: t.diag_embed(off), lambda t: t.diag_embed(off),
           [rand((2, 3))])
        ex("diag", lambda t: lm.diag(t, off), lambda t: torch.diag(t, off), [rand((4,))])
        ex("diag", lambda t: t.diag(off), lambda t: t.diag(off), [rand((4, 5))], overload="2d")
    ex("diagonal", lambda t: lm.diagonal(t, 0, -1, 0), lambda t: torch.diagonal(t, 0, -1, 0), [x],
       views=[lambda t: t.permute(2, 0, 1)])
    ex("diag_embed", lambda t: lm.diag_embed(t, 1, 0, 2), lambda t: torch.diag_embed(t, 1, 0, 2),
       [rand((2, 3))], overload="dims")
    check("trace", lambda t: t.trace(), lambda t: t.trace(), [rand((4, 4))], tol="reduction")
    ex("trace", lm.trace, torch.trace, [randint((3, 5), -9, 9, "int32")])


def test_clone_contiguous():
    ex("clone", lambda t: t.clone(), lambda t: t.clone(), [edge_values()])
    ex("clone", lambda t: lm.clone(t), lambda t: torch.clone(t), [rand((3, 4))],
       views=[lambda t: t.mT])
    ex("contiguous", lambda t: t.contiguous(), lambda t: t.contiguous(), [rand((3, 4))],
       views=[lambda t: t[:, 1::2]])


def test_movement_errors():
    g = lm.Graph()
    x = g.input("x", (2, 3))
    with pytest.raises(ValueError, match=r"cat.*\[2, 3\]"):
        lm.cat([x, g.input("y", (3, 3))], 1)
    with pytest.raises(ValueError, match="flatten"):
        lm.flatten(x, 3)
    with pytest.raises(ValueError, match="pad"):
        lm.F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="split"):
        lm.split(x, [1, 1], 1)


def test_cat_stack_promote():
    ex("cat", lambda x, y: lm.cat([x, y]), lambda x, y: torch.cat([x, y]),
       [randint((2,), -5, 5, "int32"), rand((3,), "float16")], overload="promote")
    ex("stack", lambda x, y: lm.stack([x, y]), lambda x, y: torch.stack([x, y]),
       [randint((2,), -5, 5, "int32"), randint((2,), -5, 5, "int64")], overload="promote")
