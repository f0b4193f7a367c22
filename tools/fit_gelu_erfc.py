#!/usr/bin/env python3
"""Fits the polynomial of GELU's one-branch erfc (src/frontend/elementwise.cpp,
one_plus_erf_f32) and measures the f32 formula's error, op by op.

    erfc(a) = t 2^(w P(w) - a^2 log2 e),  t = 1 / (1 + a / 2),  w = 1 - t

P (degree --degree - 1) is a Chebyshev least-squares fit in double of
(log2(erfc(a) / t) + a^2 log2 e) / w over a in [0, --amax], rounded to f32.
The GELU x / 2 (1 + erf(x / sqrt 2)) = x / 2 ((1 + s) - s erfc(|u|)) is then
evaluated in numpy f32 with every operation rounded as the kernels round it
(exp2 taken as correctly rounded) and compared with the double formula.

    python3 tools/fit_gelu_erfc.py [--degree 9] [--amax 10.5]

Prints the coefficients (the C++ array, c[0] first) and the worst relative
error by range of x. Needs numpy only.
"""

import argparse
import math

import numpy as np

F32 = np.float32
LOG2E = math.log2(math.e)


def target(w):
    """(log2(erfc(a) / t) + a^2 log2 e) / w for w = 1 - t, t = 1 / (1 + a / 2)."""
    t = 1.0 - w
    a = 2.0 * (1.0 / t - 1.0)
    return (math.log2(math.erfc(a) / t) + a * a * LOG2E) / w


def fit(degree, amax, nodes=3000):
    wmax = 1.0 - 1.0 / (1.0 + 0.5 * amax)
    k = np.arange(nodes)
    ws = wmax * (0.5 - 0.5 * np.cos(np.pi * (k + 0.5) / nodes))
    ys = np.array([target(w) for w in ws])
    cheb = np.polynomial.chebyshev.chebfit(2.0 * ws / wmax - 1.0, ys, degree - 1)
    mono = np.polynomial.Polynomial(np.polynomial.chebyshev.cheb2poly(cheb))
    poly = mono(np.polynomial.Polynomial([-1.0, 2.0 / wmax]))
    return [float(F32(c)) for c in poly.coef]


def r32(v):
    return np.asarray(v).astype(F32)


def gelu_f32(x, coef):
    x = r32(x)
    u = r32(x * F32(math.sqrt(2.0) * 0.5))
    s = np.where(np.signbit(u) & (u != 0), F32(-1.0), F32(1.0)).astype(F32)
    a = r32(u * s)
    t = r32(F32(1.0) / r32(r32(a * F32(0.5)) + F32(1.0)))
    w = r32(F32(1.0) - t)
    p = np.full_like(w, F32(coef[-1]))
    for c in reversed(coef[:-1]):
        p = r32(r32(p * w) + F32(c))
    arg = r32(r32(w * p) + r32(a * r32(a * F32(-LOG2E))))
    erfc = r32(t * r32(np.exp2(arg.astype(np.float64))))
    one_plus_erf = r32(r32(F32(1.0) + s) - r32(s * erfc))
    return r32(r32(x * F32(0.5)) * one_plus_erf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--degree", type=int, default=9, help="degree of w P(w) (default 9)")
    ap.add_argument("--amax", type=float, default=10.5, help="fit range of a (default 10.5)")
    args = ap.parse_args()
    coef = fit(args.degree, args.amax)
    print("c = {" + ", ".join("%.9g" % c for c in coef) + "}")
    xs = np.concatenate([np.arange(-12000, 8001) * 1e-3, np.linspace(-1, 1, 200001),
                         np.linspace(-3, 3, 300001), np.linspace(-13, -8, 100001)]).astype(F32)
    want = np.array([0.5 * float(x) * math.erfc(-float(x) / math.sqrt(2.0)) for x in xs])
    with np.errstate(all="ignore"):
        got = gelu_f32(xs, coef).astype(np.float64)
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-38)
    for name, m in [("x > 0", xs > 0), ("-1 < x < 0", (xs < 0) & (xs > -1)),
                    ("-5 < x <= -1", (xs <= -1) & (xs > -5)), ("x <= -5", xs <= -5)]:
        i = np.argmax(np.where(m, rel, 0.0))
        print("%-14s worst relative error %.3g at x = %.6g" % (name, rel[i], xs[i]))


if __name__ == "__main__":
    main()
