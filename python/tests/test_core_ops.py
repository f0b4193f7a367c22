"""Core Tensor ops bound in bind_core.cpp (indexing, views, casts), validated
against torch with conftest.check on several shapes, non-contiguous inputs and
every dtype (views are bit-exact: tolerance class "exact")."""

import numpy as np
import pytest
import torch

import luminal as lm
from conftest import check, edge_values, rand, randint

ALL_DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8",
              "bool"]


def data(shape, dtype):
    if dtype == "bool":
        return randint(shape, 0, 2, "bool")
    if dtype in ("int32", "int64", "int8"):
        return randint(shape, -100, 100, dtype)
    if dtype == "uint8":
        return randint(shape, 0, 255, dtype)
    return rand(shape, dtype)


def exact(op, fn, arrays, overload=None, views=None, tfn=None, **kw):
    """check() with the same function on both sides (the API mirrors torch)."""
    return check(op, fn, tfn or fn, arrays, overload=overload, views=views, tol="exact", **kw)


NONCONTIG = {
    "permuted": lambda t: t.permute(2, 0, 1),
    "sliced": lambda t: t[1:, :, ::2],
    "expanded": lambda t: t[:, :1].expand(-1, 3, -1),
}


# ---- indexing ---------------------------------------------------------------------------

# (overload, key): every key is valid for a (4, 5, 6) tensor in numpy and torch.
INDEX_KEYS = [
    ("int", (1,)),
    ("int_negative", (-1,)),
    ("int_multi", (2, -3)),
    ("int_all", (3, 4, 5)),
    ("slice", (slice(1, 3),)),
    ("slice_step", (slice(None), slice(0, 5, 2))),
    ("slice_negative_bounds", (slice(-3, -1), slice(None, -2))),
    ("slice_clamped", (slice(2, 100), slice(-100, 3))),
    ("slice_empty", (slice(3, 1),)),
    ("none", (None,)),
    ("none_middle", (slice(None), None, 1)),
    ("ellipsis", (Ellipsis, 0)),
    ("ellipsis_middle", (1, Ellipsis, slice(1, 4))),
    ("ellipsis_none", (Ellipsis, None)),
    ("mixed", (slice(1, None, 2), None, -1, slice(None, None, 3))),
]


@pytest.mark.parametrize("overload,key", INDEX_KEYS, ids=[k for k, _ in INDEX_KEYS])
def test_getitem(overload, key):
    for dt in ["float32", "float16", "bfloat16", "int64", "bool"]:
        exact("getitem", lambda t: t[key], [data((4, 5, 6), dt)], overload=overload)


@pytest.mark.parametrize("key", [np.s_[::-1], np.s_[:, ::-2], np.s_[3:0:-1, 1], np.s_[..., -2::-3]],
                         ids=["reverse", "step_minus2", "bounds", "ellipsis"])
def test_getitem_negative_step(key):
    # torch has no negative steps: compare with numpy, recorded as a getitem overload.
    x = data((4, 5, 6), "float32")
    g = lm.Graph()
    y = g.input("x", x.shape)[key]
    g.output("y", y)
    out = g.compile().run({"x": x})["y"]
    np.testing.assert_array_equal(out, x[key])
    from conftest import record

    record("getitem", "negative_step", "float32", True)


def test_getitem_noncontiguous_and_symbolic():
    for name, v in NONCONTIG.items():
        exact("getitem", lambda t: t[1, ::2], [data((4, 5, 6), "float32")], overload="int_slice",
              views=[v])
    # Symbolic dim: negative indexes and clamped slices resolve at run time.
    for key in [np.s_[:, -1], np.s_[:, 1:], np.s_[:, :-2], np.s_[:, 2:100], np.s_[:, ::2]]:
        exact("getitem", lambda t: t[key], [data((3, 7, 2), "float32")], overload="symbolic",
              symbolic={0: {1: "s"}})


def test_getitem_errors():
    g = lm.Graph()
    x = g.input("x", (4, 5))
    with pytest.raises(IndexError, match=r"index 4 is out of range.*size 4"):
        x[4]
    with pytest.raises(lm.IndexError, match=r"index -6 .*size 5"):
        x[:, -6]
    with pytest.raises(IndexError, match="too many indices"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(lm.IndexError, match="unsupported index"):
        x["a"]


# ---- views --------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_views_all_dtypes(dt):
    x = data((2, 3, 4), dt)
    exact("permute", lambda t: t.permute(2, 0, 1), [x])
    exact("transpose", lambda t: t.transpose(0, -1), [x])
    exact("unsqueeze", lambda t: t.unsqueeze(-1), [x])
    exact("reshape", lambda t: t.reshape(4, -1), [x])
    exact("flip", lambda t: t.flip(0, 2), [x])
    exact("contiguous", lambda t: t.permute(1, 0, 2).contiguous(), [x])


def test_permute():
    exact("permute", lambda t: t.permute(2, 0, 1), [data((2, 3, 4), "float32")])
    exact("permute", lambda t: t.permute((1, 0)), [data((5, 3), "float32")], overload="tuple")
    exact("permute", lambda t: t.permute(-1, 0, 1), [data((2, 3, 4), "float32")],
          overload="negative")
    for v in NONCONTIG.values():
        exact("permute", lambda t: t.permute(1, 2, 0), [data((4, 5, 6), "float32")], views=[v])
    exact("permute", lambda t: t.permute(()), [data((), "float32")], overload="rank0")


def test_transpose_family():
    for shape, a, b in [((2, 3), 0, 1), ((2, 3, 4), -1, 0), ((2, 3, 4), 1, 1), ((1, 4, 1), 0, 2)]:
        exact("transpose", lambda t: t.transpose(a, b), [data(shape, "float32")])
        exact("swapaxes", lambda t: t.swapaxes(a, b), [data(shape, "float32")])
    for v in NONCONTIG.values():
        exact("transpose", lambda t: t.transpose(0, 2), [data((4, 5, 6), "float32")], views=[v])
    for shape in [(3, 4), (5,), ()]:
        exact("t", lambda t: t.t(), [data(shape, "float32")])
    for shape in [(3, 4), (2, 3, 4), (5,)]:
        exact("T", lambda t: t.permute(*reversed(range(t.ndim))), [data(shape, "float32")],
              tfn=lambda t: t.permute(*reversed(range(t.ndim))))
    exact("T", lambda t: t.T, [data((3, 4), "float32")], overload="property")
    for shape in [(3, 4), (2, 3, 4)]:
        exact("mT", lambda t: t.mT, [data(shape, "float32")])


def test_unsqueeze_squeeze():
    for dim in [0, 1, 3, -1, -4]:
        exact("unsqueeze", lambda t: t.unsqueeze(dim), [data((2, 3, 4), "float32")])
    exact("unsqueeze", lambda t: t.unsqueeze(0), [data((), "float32")], overload="rank0")
    exact("squeeze", lambda t: t.squeeze(), [data((1, 3, 1, 4, 1), "float32")], overload="all")
    for dim in [0, 2, -1, 1]:  # dim 1 has size 3: a no-op, as torch
        exact("squeeze", lambda t: t.squeeze(dim), [data((1, 3, 1, 4, 1), "float32")],
              overload="dim")
    exact("squeeze", lambda t: t.squeeze((0, 2)), [data((1, 3, 1, 4), "float32")],
          overload="dims")
    exact("squeeze", lambda t: t.squeeze(), [data((1, 1), "float32")], overload="all")
    for v in NONCONTIG.values():
        exact("squeeze", lambda t: t[:, :1].squeeze(1), [data((4, 5, 6), "float32")], views=[v],
              overload="dim")


def test_expand():
    exact("expand", lambda t: t.expand(3, 4), [data((1, 4), "float32")])
    exact("expand", lambda t: t.expand(2, -1, 5), [data((3, 1), "float32")], overload="new_dims")
    exact("expand", lambda t: t.expand((2, 3)), [data((), "float32")], overload="rank0")
    exact("expand", lambda t: t.expand(4, 3), [data((4, 3), "int64")], overload="same")
    exact("expand_as", lambda a, b: a.expand_as(b), [data((1, 3), "float32"), data((4, 3), "float32")])
    for v in NONCONTIG.values():
        exact("expand", lambda t: t[:1].expand(3, -1, -1), [data((4, 5, 6), "float32")], views=[v])


def test_reshape_view():
    for shape, new in [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, -1, 2)),
                       ((6,), (1, 6, 1)), ((), (1,)), ((1,), ())]:
        exact("reshape", lambda t: t.reshape(new), [data(shape, "float32")])
        exact("view", lambda t: t.view(new), [data(shape, "float32")])
    # Non-contiguous inputs: torch's reshape copies; luminal copies when the view can't express it.
    for v in NONCONTIG.values():
        exact("reshape", lambda t: t.reshape(-1), [data((4, 5, 6), "float32")], views=[v],
              overload="noncontiguous")
    exact("reshape_as", lambda a, b: a.reshape_as(b), [data((2, 6), "float32"), data((3, 4), "float32")])
    exact("view_as", lambda a, b: a.view_as(b), [data((2, 6), "float32"), data((4, 3), "float32")])
    # Symbolic: [2, s, 8] -> [-1, 8] has 2*s rows.
    exact("reshape", lambda t: t.reshape(-1, 8), [data((2, 5, 8), "float32")], overload="symbolic",
          symbolic={0: {1: "s"}})


def test_flip_contiguous():
    for dims in [(0,), (-1,), (0, 1, 2), (1, -1)]:
        exact("flip", lambda t: t.flip(dims), [data((3, 4, 5), "float32")])
    for v in NONCONTIG.values():
        exact("flip", lambda t: t.flip(0, 1), [data((4, 5, 6), "float32")], views=[v])
        exact("contiguous", lambda t: t.contiguous(), [data((4, 5, 6), "float32")], views=[v])
    e = edge_values("float32")
    exact("contiguous", lambda t: t.flip(0).contiguous(), [e], overload="edge_values")


# ---- casts -------------------------------------------------------------------------------------

CAST_METHODS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16",
                "double": "float64", "int": "int32", "long": "int64", "char": "int8",
                "byte": "uint8", "bool": "bool"}


@pytest.mark.parametrize("src", ALL_DTYPES)
def test_to_all_pairs(src):
    x = data((3, 5), src)
    if src in ("float32", "float16", "bfloat16", "float64"):
        # In-range values for every destination (torch leaves out-of-range float->int undefined).
        x = np.clip(x * 40, -120, 120).astype(np.float32 if src == "bfloat16" else src)
        if src == "bfloat16":
            from conftest import to_dtype

            x = to_dtype(x, "bfloat16")
    for dst in ALL_DTYPES:
        if dst == "uint8" and src in ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int8"):
            xin = np.abs(x).astype(x.dtype)  # negative -> uint8 wraps (ints) / is undefined (floats)
        else:
            xin = x
        check("to", lambda t: t.to(dst), lambda t: t.to(getattr(torch, dst)), [xin],
              label=f"{src}->{dst}", dtype=src if src == "bfloat16" else None, tol="exact")


def test_cast_methods():
    x = rand((4, 3)) * 10
    for name, dt in CAST_METHODS.items():
        xin = np.abs(x) if dt == "uint8" else x
        check(name, lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), [xin],
              tol="exact")
    check("type", lambda t: t.type("float16"), lambda t: t.type(torch.float16), [x], tol="exact")


def test_cast_edge_values():
    e = edge_values("float32")
    # float -> bool: x != 0 (nan -> True, -0.0 -> False); float -> float keeps inf/nan/-0.0.
    for dst in ["bool", "float16", "bfloat16", "float64"]:
        check("to", lambda t: t.to(dst), lambda t: t.to(getattr(torch, dst)), [e],
              overload="edge_values", label=f"float32->{dst}", tol="exact")
    for src in ["float16", "bfloat16", "float64"]:
        check("to", lambda t: t.to("float32"), lambda t: t.to(torch.float32), [edge_values(src)],
              overload="edge_values", label=f"{src}->float32",
              dtype=src if src == "bfloat16" else None,
              tol="exact")
    # float -> int truncates toward zero.
    v = np.array([-2.7, -2.5, -0.5, -0.0, 0.4, 1.5, 2.999, 100.9], np.float32)
    for dst in ["int32", "int64", "int8"]:
        check("to", lambda t: t.to(dst), lambda t: t.to(getattr(torch, dst)), [v],
              overload="truncate", label=f"float32->{dst}", tol="exact")
