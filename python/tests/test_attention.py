"""Attention and rotary embeddings against torch:
F.scaled_dot_product_attention (plain, causal incl. L != S, bool masks,
additive float masks with -inf, broadcast masks, custom scale, grouped-query
heads, symbolic sequence lengths, dtypes) and RoPE (tables vs Hugging Face's
float32 formula, apply_rotary_emb vs hand-written torch references of HF's
rotate_half layout and Meta's interleaved complex layout)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import check, rand, randint

SDPA = TF.scaled_dot_product_attention


def sdpa_ref(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    # torch's math backend in float64, rounded to the input dtype (the CPU flash
    # kernel used for float32 differs from it by a few ulps).
    out = SDPA(q.double(), k.double(), v.double(),
               attn_mask=attn_mask.double() if attn_mask is not None and attn_mask.is_floating_point()
               else attn_mask, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    return out.to(q.dtype)


SHAPES = [  # q, k, v
    ((2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8)),
    ((1, 2, 4, 16), (1, 2, 7, 16), (1, 2, 7, 6)),   # L != S, Ev != E
    ((3, 6, 8), (3, 9, 8), (3, 9, 8)),              # 3-D (no head axis)
]


@pytest.mark.parametrize("case", range(len(SHAPES)))
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa(case, causal):
    qs, ks, vs = SHAPES[case]
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=causal),
          lambda q, k, v: sdpa_ref(q, k, v, is_causal=causal), [rand(qs), rand(ks), rand(vs)],
          tol="composite", overload="causal" if causal else None)


def test_sdpa_torch_kernel_directly():
    # Also against torch's own (flash / math) float32 kernel, not only the f64 reference.
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: SDPA(q, k, v, is_causal=True),
          [rand((1, 4, 6, 16)), rand((1, 4, 6, 16)), rand((1, 4, 6, 16))], tol="composite",
          overload="causal")


def test_sdpa_masks():
    q, k, v = rand((2, 2, 5, 8)), rand((2, 2, 7, 8)), rand((2, 2, 7, 8))
    # Bool mask (true = attend), broadcast over batch and heads; every row keeps a key.
    m = randint((5, 7), 0, 2, "bool")
    m[:, 0] = True
    check("scaled_dot_product_attention",
          lambda q, k, v, m: lm.F.scaled_dot_product_attention(q, k, v, attn_mask=m),
          lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m), [q, k, v, m], tol="composite",
          overload="bool_mask")
    # Per-batch bool mask [B, 1, L, S].
    mb = randint((2, 1, 5, 7), 0, 2, "bool")
    mb[..., 3] = True
    check("scaled_dot_product_attention",
          lambda q, k, v, m: lm.F.scaled_dot_product_attention(q, k, v, attn_mask=m),
          lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m), [q, k, v, mb], tol="composite",
          overload="bool_mask")
    # Additive float mask with -inf entries (an additive causal + padding mask).
    fm = rand((5, 7)).astype(np.float32)
    fm[np.triu_indices(5, 3)] = -np.inf
    check("scaled_dot_product_attention",
          lambda q, k, v, m: lm.F.scaled_dot_product_attention(q, k, v, attn_mask=m),
          lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m), [q, k, v, fm], tol="composite",
          overload="float_mask")
    # A fully masked row gives zeros (torch's _safe_softmax), not NaN.
    fm2 = np.zeros((5, 7), np.float32)
    fm2[2, :] = -np.inf
    check("scaled_dot_product_attention",
          lambda q, k, v, m: lm.F.scaled_dot_product_attention(q, k, v, attn_mask=m),
          lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m), [q, k, v, fm2], tol="composite",
          overload="float_mask")


def test_sdpa_scale_gqa_symbolic_dtypes():
    q, k, v = rand((1, 6, 4, 8)), rand((1, 2, 5, 8)), rand((1, 2, 5, 8))
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
          lambda q, k, v: sdpa_ref(q, k, v, enable_gqa=True), [q, k, v], tol="composite",
          overload="gqa")
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3,
                                                            enable_gqa=True),
          lambda q, k, v: sdpa_ref(q, k, v, is_causal=True, scale=0.3, enable_gqa=True),
          [q, k, v], tol="composite", overload="gqa")
    # Non-contiguous [B, S, H, D] inputs transposed to [B, H, S, D] (as HF does).
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: sdpa_ref(q, k, v, is_causal=True),
          [rand((2, 5, 3, 8)), rand((2, 5, 3, 8)), rand((2, 5, 3, 8))],
          views=[lambda t: t.transpose(1, 2)] * 3, tol="composite", overload="causal")
    # Symbolic sequence lengths (one program for every length).
    check("scaled_dot_product_attention",
          lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: sdpa_ref(q, k, v, is_causal=True),
          [rand((1, 2, 6, 8)), rand((1, 2, 6, 8)), rand((1, 2, 6, 8))],
          symbolic={0: {2: "s"}, 1: {2: "s"}, 2: {2: "s"}}, tol="composite", overload="causal")
    for dt in ["float16", "bfloat16", "float64"]:
        check("scaled_dot_product_attention",
              lambda q, k, v: lm.F.scaled_dot_product_attention(q, k, v, is_causal=True),
              lambda q, k, v: sdpa_ref(q, k, v, is_causal=True),
              [rand((1, 2, 5, 8)), rand((1, 2, 5, 8)), rand((1, 2, 5, 8))], dtype=dt,
              tol="composite", overload="causal")


def test_sdpa_errors():
    g = lm.Graph()
    q = g.input("q", (1, 4, 3, 8))
    k = g.input("k", (1, 3, 3, 8))
    with pytest.raises(ValueError, match="enable_gqa"):
        lm.F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    with pytest.raises(RuntimeError, match="dropout"):
        lm.F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    with pytest.raises(TypeError, match="dtype"):
        lm.F.scaled_dot_product_attention(q, q, g.input("v", (1, 4, 3, 8), dtype="float16"))


# ---- rotary embeddings ----------------------------------------------------------------


def hf_tables(positions, dim, theta):
    """Hugging Face LlamaRotaryEmbedding (float32), as half-width tables."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    freqs = positions.float()[..., None] * inv_freq
    return freqs.cos(), freqs.sin()


def hf_rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_apply(x, cos, sin):
    # HF: emb = cat(freqs, freqs); x * cos + rotate_half(x) * sin.
    cos, sin = torch.cat((cos, cos), -1).to(x.dtype), torch.cat((sin, sin), -1).to(x.dtype)
    return x * cos + hf_rotate_half(x) * sin


def meta_apply(x, cos, sin):
    # Meta llama: view pairs as complex numbers and multiply by polar(1, freqs).
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * torch.complex(cos, sin)).flatten(-2)
    return out.to(x.dtype)


@pytest.mark.parametrize("theta", [10000.0, 500000.0])
def test_rope_cache(theta):
    for dim, offset, seq in [(64, 0, 9), (128, 1000, 4), (96, 37, 6)]:
        g = lm.Graph()
        cos, sin = g.rope_cache(seq, dim, theta=theta, offset=offset)
        g.output("cos", cos)
        g.output("sin", sin)
        out = g.compile().run({})
        tc, ts = hf_tables(torch.arange(offset, offset + seq), dim, theta)
        from conftest import assert_close, record
        try:
            assert_close(out["cos"], tc, "float32", tol="elementwise")
            assert_close(out["sin"], ts, "float32", tol="elementwise")
        except AssertionError:
            record("rope_cache", None, "float32", False)
            raise
        record("rope_cache", None, "float32", True)
    # From an integer position tensor (batched position ids).
    pos = randint((2, 5), 0, 4096, "int64")
    check("rope_cache", lambda p: lm.F.rope_cache(p, 32, theta=theta),
          lambda p: hf_tables(p, 32, theta), [pos], tol="elementwise", overload="positions")


def test_rope_cache_symbolic_offset():
    # KV-cache positions: offset is the dim "p" set per run.
    g = lm.Graph()
    x = g.input("x", (1, 2, "s", 16))
    cos, sin = g.rope_cache("s", 16, offset="p")
    g.output("y", lm.F.apply_rotary_emb(x, cos, sin))
    m = g.compile()
    for p, s in [(0, 5), (5, 1), (6, 1), (300, 3)]:
        xv = rand((1, 2, s, 16))
        got = m.run({"x": xv}, dims={"p": p})["y"]
        c, sn = hf_tables(torch.arange(p, p + s), 16, 10000.0)
        from conftest import assert_close
        assert_close(got, hf_apply(torch.from_numpy(xv), c, sn), "float32", tol="composite")


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_apply_rotary_emb(layout):
    ref = hf_apply if layout == "half" else meta_apply
    for xs, dim in [((2, 3, 5, 16), 16), ((1, 5, 2, 8), 8)]:
        cos, sin = hf_tables(torch.arange(3, 3 + 5), dim, 10000.0)
        views = None
        if xs[1] == 5:  # Meta's [B, S, H, D] layout: tables broadcast over heads
            cos, sin = cos[:, None, :], sin[:, None, :]
        check("apply_rotary_emb", lambda x, c, s: lm.F.apply_rotary_emb(x, c, s, layout=layout),
              lambda x, c, s: ref(x, c, s), [rand(xs), cos.numpy(), sin.numpy()],
              views=views, tol="composite", overload=layout)
    for dt in ["float16", "bfloat16"]:
        cos, sin = hf_tables(torch.arange(4), 8, 10000.0)
        check("apply_rotary_emb", lambda x, c, s: lm.F.apply_rotary_emb(x, c, s, layout=layout),
              lambda x, c, s: ref(x, c.float(), s.float()),
              [rand((1, 2, 4, 8)), cos.numpy(), sin.numpy()], dtype=dt, tol="composite",
              overload=layout)


def test_apply_rotary_emb_full_width_and_partial():
    cos, sin = hf_tables(torch.arange(6), 16, 10000.0)
    full_c, full_s = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)
    # HF's full-width tables.
    check("apply_rotary_emb", lambda x, c, s: lm.F.apply_rotary_emb(x, c, s),
          lambda x, c, s: x * c + hf_rotate_half(x) * s,
          [rand((1, 2, 6, 16)), full_c.numpy(), full_s.numpy()], tol="composite",
          overload="half")
    # Partial rotary (GPT-NeoX rotary_pct): only the first 8 of 24 features rotate.
    c8, s8 = hf_tables(torch.arange(6), 8, 10000.0)
    check("apply_rotary_emb", lambda x, c, s: lm.F.apply_rotary_emb(x, c, s),
          lambda x, c, s: torch.cat((hf_apply(x[..., :8], c, s), x[..., 8:]), -1),
          [rand((1, 2, 6, 24)), c8.numpy(), s8.numpy()], tol="composite", overload="partial")
    check("rotate_half", lambda x: lm.F.rotate_half(x), hf_rotate_half, [rand((2, 3, 8))],
          tol="exact")
