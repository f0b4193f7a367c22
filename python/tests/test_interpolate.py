"""F.interpolate against torch: nearest (legacy index formula incl. the float32
rounding of `dst * scale`), nearest-exact, linear / bilinear / trilinear with
align_corners True and False, area; size or scale_factor (with and without
recompute_scale_factor); up- and down-sampling; symbolic sizes; dtypes."""

import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, rand, randint

NEAREST_CASES = [
    ((1, 2, 5, 7), dict(size=(10, 14))),            # out == 2 * in (shift path)
    ((1, 2, 5, 7), dict(size=(3, 12))),             # float index formula
    ((2, 1, 7, 9), dict(scale_factor=1.7)),         # 1 / scale_factor, float32
    ((1, 2, 10, 6), dict(scale_factor=(0.3, 2.5))),
    ((1, 2, 9, 7), dict(scale_factor=0.6, recompute_scale_factor=True)),
    ((1, 2, 13, 11), dict(size=(13, 5))),           # out == in on one axis (copy)
]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("case", range(len(NEAREST_CASES)))
def test_interpolate_nearest(case, mode):
    xs, kw = NEAREST_CASES[case]
    check("interpolate", lambda x: lm.F.interpolate(x, mode=mode, **kw),
          lambda x: TF.interpolate(x, mode=mode, **kw), [rand(xs)], tol="exact",
          overload=mode)


def test_interpolate_nearest_1d_3d_int_symbolic():
    check("interpolate", lambda x: lm.F.interpolate(x, size=11),
          lambda x: TF.interpolate(x, size=11), [rand((2, 3, 7))], tol="exact", overload="nearest")
    check("interpolate", lambda x: lm.F.interpolate(x, scale_factor=(2, 1.5, 0.5)),
          lambda x: TF.interpolate(x, scale_factor=(2, 1.5, 0.5)), [rand((1, 1, 3, 4, 6))],
          tol="exact", overload="nearest")
    # torch's CPU nearest kernel takes uint8 (images).
    check("interpolate", lambda x: lm.F.interpolate(x, size=(5, 9)),
          lambda x: TF.interpolate(x, size=(5, 9)), [randint((1, 3, 4, 6), 0, 255, "uint8")],
          tol="exact", overload="nearest")
    # Symbolic input size with a dyadic scale factor and with a fixed output size.
    check("interpolate", lambda x: lm.F.interpolate(x, scale_factor=1.5),
          lambda x: TF.interpolate(x, scale_factor=1.5), [rand((1, 2, 5, 6))],
          symbolic={0: {2: "h", 3: "w"}}, tol="exact", overload="nearest")
    check("interpolate", lambda x: lm.F.interpolate(x, size=(7, 4)),
          lambda x: TF.interpolate(x, size=(7, 4)), [rand((1, 2, 5, 6))],
          symbolic={0: {2: "h", 3: "w"}}, tol="exact", overload="nearest")


LINEAR_CASES = [
    ((1, 2, 5, 7), dict(size=(10, 14))),
    ((2, 1, 7, 9), dict(size=(4, 5))),
    ((1, 2, 6, 5), dict(scale_factor=1.7)),
    ((1, 2, 6, 5), dict(scale_factor=(0.5, 3.0))),
    ((1, 1, 4, 4), dict(size=(1, 9))),
]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("case", range(len(LINEAR_CASES)))
def test_interpolate_bilinear(case, align_corners):
    xs, kw = LINEAR_CASES[case]
    check("interpolate", lambda x: lm.F.interpolate(x, mode="bilinear",
                                                    align_corners=align_corners, **kw),
          lambda x: TF.interpolate(x, mode="bilinear", align_corners=align_corners, **kw),
          [rand(xs)], tol="composite", overload="bilinear")


def test_interpolate_linear_trilinear_area():
    for ac in [False, True]:
        check("interpolate", lambda x: lm.F.interpolate(x, size=13, mode="linear",
                                                        align_corners=ac),
              lambda x: TF.interpolate(x, size=13, mode="linear", align_corners=ac),
              [rand((2, 3, 6))], tol="composite", overload="linear")
        check("interpolate", lambda x: lm.F.interpolate(x, scale_factor=(1.5, 2, 0.5),
                                                        mode="trilinear", align_corners=ac),
              lambda x: TF.interpolate(x, scale_factor=(1.5, 2, 0.5), mode="trilinear",
                                       align_corners=ac),
              [rand((1, 2, 4, 3, 6))], tol="composite", overload="trilinear")
    for kw in [dict(size=(3, 4)), dict(scale_factor=0.5), dict(size=(7, 9))]:
        check("interpolate", lambda x: lm.F.interpolate(x, mode="area", **kw),
              lambda x: TF.interpolate(x, mode="area", **kw), [rand((1, 2, 6, 8))],
              tol="reduction", reduce_n=4, overload="area")


def test_interpolate_bilinear_symbolic_views_dtypes():
    check("interpolate", lambda x: lm.F.interpolate(x, size=(9, 4), mode="bilinear"),
          lambda x: TF.interpolate(x, size=(9, 4), mode="bilinear"), [rand((1, 2, 5, 7))],
          symbolic={0: {2: "h", 3: "w"}}, tol="composite", overload="bilinear")
    check("interpolate", lambda x: lm.F.interpolate(x, scale_factor=2, mode="bilinear",
                                                    align_corners=True),
          lambda x: TF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
          [rand((1, 2, 5, 7))], symbolic={0: {2: "h"}}, tol="composite", overload="bilinear")
    check("interpolate", lambda x: lm.F.interpolate(x, size=(6, 6), mode="bilinear"),
          lambda x: TF.interpolate(x, size=(6, 6), mode="bilinear"), [rand((1, 4, 5, 2))],
          views=[lambda t: t.permute(0, 3, 2, 1)], tol="composite", overload="bilinear")
    for dt in ["float16", "bfloat16", "float64"]:
        check("interpolate", lambda x: lm.F.interpolate(x, size=(7, 3), mode="bilinear"),
              lambda x: TF.interpolate(x, size=(7, 3), mode="bilinear"), [rand((1, 2, 4, 5))],
              dtype=dt, tol="composite", overload="bilinear")


def test_upsample_aliases():
    check("upsample_nearest", lambda x: lm.F.upsample_nearest(x, scale_factor=3),
          lambda x: TF.interpolate(x, scale_factor=3, mode="nearest"), [rand((1, 2, 3, 4))],
          tol="exact")
    check("upsample_bilinear", lambda x: lm.F.upsample_bilinear(x, size=(5, 7)),
          lambda x: TF.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True),
          [rand((1, 2, 3, 4))], tol="composite")


def test_interpolate_errors():
    g = lm.Graph()
    x = g.input("x", (1, 2, 4, 4))
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        lm.F.interpolate(x, size=8, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners"):
        lm.F.interpolate(x, size=8, align_corners=True)
    with pytest.raises(ValueError, match="bicubic"):
        lm.F.interpolate(x, size=8, mode="bicubic")
    with pytest.raises(TypeError, match="bilinear"):
        lm.F.interpolate(g.input("i", (1, 2, 4, 4), dtype="int32"), size=8, mode="bilinear")
