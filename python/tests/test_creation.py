"""Creation ops validated against torch (CPU); seeded random tensors validated by
determinism and moments (luminal's counter-based generator is not torch's)."""

import numpy as np
import pytest
import torch

import luminal as lm
from conftest import check, rand, record


def _graph_op(fn):
    """lm side of check(): creation ops need the graph, reached through a dummy input."""
    return lambda t: fn(t.graph)


DUMMY = [np.zeros((1,), np.float32)]


def test_full_zeros_ones():
    for size, dt in [((2, 3), "float32"), ((4,), "int64"), ((2, 1, 3), "bool"), ((3,), "float16"), ((), "int32")]:
        td = getattr(torch, dt)
        check("zeros", _graph_op(lambda g: g.zeros(size, dtype=dt)), lambda _: torch.zeros(size, dtype=td),
              DUMMY, label=dt)
        check("ones", _graph_op(lambda g: g.ones(size, dtype=dt)), lambda _: torch.ones(size, dtype=td),
              DUMMY, label=dt)
    for value in [2.5, 7, True, -np.inf]:
        check("full", _graph_op(lambda g: g.full((2, 3), value)), lambda _: torch.full((2, 3), value), DUMMY,
              label=str(torch.full((1,), value).dtype).replace("torch.", ""))
    check("full", _graph_op(lambda g: g.full((2,), 3, dtype="float16")),
          lambda _: torch.full((2,), 3, dtype=torch.float16), DUMMY, label="float16")


def test_like():
    for name in ["zeros_like", "ones_like"]:
        check(name, getattr(lm, name), getattr(torch, name), [rand((2, 3))])
        check(name, lambda t: getattr(lm, name)(t, dtype="int32"),
              lambda t: getattr(torch, name)(t, dtype=torch.int32), [rand((2, 3))], label="int32")
        check(name, getattr(lm, name), getattr(torch, name), [rand((4, 2))], views=[lambda t: t.mT])
    check("full_like", lambda t: lm.full_like(t, 3.5), lambda t: torch.full_like(t, 3.5), [rand((2, 3))])
    check("full_like", lambda t: lm.full_like(t, 3.5), lambda t: torch.full_like(t, 3.5),
          [np.arange(6, dtype=np.int64).reshape(2, 3)], label="int64")


def test_arange():
    cases = [((5,), {}), ((2, 9), {}), ((1, 10, 3), {}), ((10, 1, -3), {}), ((0.5, 3.0), {}),
             ((0, 1, 0.1), {}), ((-1.5, 2.25, 0.25), {}), ((3,), {"dtype": "float32"}),
             ((1, 7, 2), {"dtype": "int32"}), ((0, 2.5, 0.5), {"dtype": "float64"}),
             ((0, 5), {"dtype": "float16"})]
    for args, kw in cases:
        tkw = {"dtype": getattr(torch, kw["dtype"])} if kw else {}
        label = kw.get("dtype") or str(torch.arange(*args).dtype).replace("torch.", "")
        check("arange", _graph_op(lambda g: g.arange(*args, **kw)), lambda _: torch.arange(*args, **tkw),
              DUMMY, label=label)
    # symbolic end: the length comes from a dim
    check("arange", lambda t: t.graph.arange("n") + t.sum().long() * 0, lambda t: torch.arange(t.shape[0]),
          [rand((6,))], symbolic={0: {0: "n"}}, overload="symbolic", label="int64")
    with pytest.raises(ValueError):
        lm.Graph().arange(0, 5, -1)


def test_linspace_logspace_eye():
    for start, end, steps in [(0, 1, 5), (-2.5, 3.0, 7), (1, 1, 3), (10, -10, 6), (0, 1, 1)]:
        check("linspace", _graph_op(lambda g: g.linspace(start, end, steps)),
              lambda _: torch.linspace(start, end, steps), DUMMY, tol="elementwise")
        check("logspace", _graph_op(lambda g: g.logspace(start / 4, end / 4, steps)),
              lambda _: torch.logspace(start / 4, end / 4, steps), DUMMY, tol="transcendental")
    check("linspace", _graph_op(lambda g: g.linspace(0, 4, 5, dtype="int64")),
          lambda _: torch.linspace(0, 4, 5, dtype=torch.int64), DUMMY, label="int64")
    check("logspace", _graph_op(lambda g: g.logspace(0, 3, 4, base=2.0)),
          lambda _: torch.logspace(0, 3, 4, base=2.0), DUMMY, tol="transcendental")
    for n, m in [(3, None), (2, 4), (4, 1)]:
        check("eye", _graph_op(lambda g: g.eye(n, m)),
              lambda _: torch.eye(n, m) if m is not None else torch.eye(n), DUMMY)
    check("eye", _graph_op(lambda g: g.eye(3, dtype="bool")), lambda _: torch.eye(3, dtype=torch.bool),
          DUMMY, label="bool")


def test_tril_triu():
    inf = np.inf
    x = rand((3, 4, 5))
    x[0, 1, 2], x[1, 3, 0] = inf, -inf
    for name in ["tril", "triu"]:
        for d in [0, 1, -1, 3, -4]:
            check(name, lambda t: getattr(lm, name)(t, d), lambda t: getattr(torch, name)(t, d), [x],
                  tol="exact")
        check(name, lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), [rand((4, 3))],
              views=[lambda t: t.mT], tol="exact", overload="method")
        check(name, lambda t: getattr(lm, name)(t, 1), lambda t: getattr(torch, name)(t, 1),
              [np.arange(12, dtype=np.int32).reshape(3, 4)], label="int32")
        check(name, lambda t: getattr(lm, name)(t), lambda t: getattr(torch, name)(t),
              [np.ones((3, 3), np.bool_)], label="bool")
        check(name, lambda t: getattr(lm, name)(t), lambda t: getattr(torch, name)(t), [rand((2, 4, 4))],
              symbolic={0: {1: "s", 2: "s"}}, tol="exact", overload="symbolic")
    for d in [0, 1, -2]:
        check("tril_mask", _graph_op(lambda g: g.tril_mask(3, 4, d)),
              lambda _: torch.ones(3, 4, dtype=torch.bool).tril(d), DUMMY, label="bool")
        check("triu_mask", _graph_op(lambda g: g.triu_mask(4, 3, d)),
              lambda _: torch.ones(4, 3, dtype=torch.bool).triu(d), DUMMY, label="bool")


def _run(g, outs):
    for k, v in outs.items():
        g.output(k, v)
    return g.compile(device="reference").run({})


@pytest.mark.op("rand", dtypes=("float32", "float16", "bfloat16", "float64"))
@pytest.mark.op("randn", dtypes=("float32", "float16", "float64"))
@pytest.mark.op("randint", dtypes=("int64", "int32"))
def test_random_statistics():
    g = lm.Graph()
    outs = {"u": g.rand((256, 64), seed=3), "u_again": g.rand((256, 64), seed=3), "v": g.rand((256, 64), seed=4),
            "h": g.rand((2048,), seed=1, dtype="float16"), "b": g.rand((2048,), seed=1, dtype="bfloat16"),
            "d": g.rand((2048,), seed=1, dtype="float64"),
            "n": g.randn((64, 64), seed=3), "nh": g.randn((2048,), seed=2, dtype="float16"),
            "nd": g.randn((2048,), seed=2, dtype="float64"),
            "i": g.randint(-5, 7, (4096,), seed=9), "i32": g.randint(0, 3, (999,), seed=9, dtype="int32")}
    r = _run(g, outs)
    u = r["u"]
    assert u.dtype == np.float32 and u.shape == (256, 64)
    np.testing.assert_array_equal(u, r["u_again"])
    assert not np.array_equal(u, r["v"])
    for k in ["u", "h", "b", "d"]:
        x = r[k].astype(np.float64)
        assert x.min() >= 0 and x.max() < 1, k
        assert abs(x.mean() - 0.5) < 0.03 and abs(x.var() - 1 / 12) < 0.01, k
    flat = u.ravel().astype(np.float64)
    assert abs(np.corrcoef(flat[1:], flat[:-1])[0, 1]) < 0.05  # neighbours uncorrelated
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.2  # 256 samples: 3 sigma
    for k in ["n", "nh", "nd"]:
        x = r[k].astype(np.float64).ravel()
        assert abs(x.mean()) < 0.08 and abs(x.std() - 1) < 0.06, k
        # Normal: about 68% within one standard deviation, kurtosis ~3
        assert abs((np.abs(x) < 1).mean() - 0.6827) < 0.03, k
        assert abs((x ** 4).mean() - 3) < 0.4, k
    i = r["i"]
    assert i.dtype == np.int64 and i.min() == -5 and i.max() == 6
    counts = np.bincount(i + 5)
    assert counts.min() > 4096 / 12 * 0.8
    assert r["i32"].dtype == np.int32 and set(np.unique(r["i32"])) == {0, 1, 2}


@pytest.mark.op("dropout", dtypes=("float32",))
@pytest.mark.op("bernoulli", dtypes=("bool",))
@pytest.mark.op("rand_like", dtypes=("float32",))
@pytest.mark.op("randn_like", dtypes=("float32",))
def test_dropout_bernoulli_like():
    g = lm.Graph()
    x = g.input("x", (4096,))
    outs = {"drop": lm.F.dropout(x, 0.25, seed=5), "eval": lm.F.dropout(x, 0.25, training=False),
            "bern": g.bernoulli((4096,), 0.3, seed=1), "rl": lm.rand_like(x, seed=2), "rn": lm.randn_like(x, seed=2)}
    for k, v in outs.items():
        g.output(k, v)
    xv = np.ones(4096, np.float32)
    res = g.compile(device="reference").run({"x": xv})
    d = res["drop"]
    kept = d != 0
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_allclose(d[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(res["eval"], xv)
    assert abs(res["bern"].mean() - 0.3) < 0.03 and res["bern"].dtype == np.bool_
    assert res["rl"].shape == (4096,) and 0 <= res["rl"].min() and res["rl"].max() < 1
    assert abs(res["rn"].mean()) < 0.08


def test_creation_errors():
    g = lm.Graph()
    with pytest.raises(ValueError, match="randint"):
        g.randint(5, 5, (3,))
    with pytest.raises(TypeError, match="rand"):
        g.rand((3,), dtype="int32")
    with pytest.raises(ValueError, match="tril"):
        lm.tril(g.input("v", (3,)))
    record("rand", "determinism", "float32", True)
