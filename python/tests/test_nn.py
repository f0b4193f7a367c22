"""nn modules against torch.nn modules (or torch references written here) with
the same weights: the torch module's state_dict is bound by name to the
luminal module's persistent inputs, so the tests also check that parameter
names, shapes and dtypes match torch / Hugging Face conventions.

KV cache: a prefill of 5 tokens and 3 decode steps, each compared with torch
full attention over the whole prefix; the updated caches are fed back as the
next step's inputs and the compiled program is reused for every step."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import luminal as lm
from conftest import assert_close, rand, randint

torch.manual_seed(0)


def bind(module, state, prefix):
    """{luminal input name: numpy} from a torch state_dict; checks names and shapes."""
    params = {name: (shape, dtype) for name, shape, dtype in module.parameters()}
    weights = {f"{prefix}.{k}" if prefix else k: v.detach().numpy() for k, v in state.items()}
    assert set(params) == set(weights), f"luminal {sorted(params)}, torch {sorted(weights)}"
    for name, (shape, _) in params.items():
        assert tuple(shape) == weights[name].shape, name
    return weights


def run(g, outputs, feeds, dims=None):
    for name, t in outputs.items():
        g.output(name, t)
    return g.compile().run(feeds, dims=dims)


def random_weights(module):
    """Seeded random values for every parameter of a luminal module (for torch references)."""
    return {name: rand(shape) * (1.0 / math.sqrt(shape[-1])) for name, shape, _ in module.parameters()}


# ---- simple modules ----------------------------------------------------------------------


def compare_module(make, tm, prefix, x, tol, n=None, x_dims=None):
    """Build make(g) -> luminal module, bind tm's weights by name, run it on x
    (numpy; x_dims names symbolic dims of the input) and compare with tm(x)."""
    g = lm.Graph()
    m = make(g)
    shape = tuple((x_dims or {}).get(i, d) for i, d in enumerate(x.shape))
    xi = g.input("x", shape, dtype=x.dtype.name)
    out = run(g, {"y": m(xi)}, {**bind(m, tm.state_dict(), prefix), "x": x})
    assert_close(out["y"], tm(torch.from_numpy(x)), "float32", tol=tol, n=n)


@pytest.mark.op("nn.Linear")
@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    compare_module(lambda g: lm.nn.Linear(g, "proj", 12, 7, bias=bias),
                   torch.nn.Linear(12, 7, bias=bias), "proj", rand((2, 5, 12)), "reduction", 12,
                   {1: "s"})


@pytest.mark.op("nn.Embedding")
def test_embedding():
    compare_module(lambda g: lm.nn.Embedding(g, "embed_tokens", 50, 8), torch.nn.Embedding(50, 8),
                   "embed_tokens", randint((2, 6), 0, 50), "exact", x_dims={1: "s"})


def randomized(tm):
    with torch.no_grad():
        for p in tm.parameters():
            p.normal_()
    return tm


@pytest.mark.op("nn.LayerNorm")
def test_layernorm():
    compare_module(lambda g: lm.nn.LayerNorm(g, "ln", 16, eps=1e-6),
                   randomized(torch.nn.LayerNorm(16, eps=1e-6)), "ln", rand((3, 4, 16)),
                   "composite")


@pytest.mark.op("nn.RMSNorm")
@pytest.mark.parametrize("eps", [1e-5, None])
def test_rmsnorm(eps):
    compare_module(lambda g: lm.nn.RMSNorm(g, "norm", 16, eps=eps),
                   randomized(torch.nn.RMSNorm(16, eps=eps)), "norm", rand((3, 4, 16)),
                   "composite")


@pytest.mark.op("nn.Conv1d")
def test_conv1d_module():
    kw = dict(stride=2, padding=1, groups=2)
    compare_module(lambda g: lm.nn.Conv1d(g, "conv", 4, 6, 3, **kw), torch.nn.Conv1d(4, 6, 3, **kw),
                   "conv", rand((2, 4, 11)), "reduction", 6, {2: "t"})


@pytest.mark.op("nn.Conv2d")
@pytest.mark.parametrize("kw", [dict(stride=2, padding=1),
                                dict(padding="same", dilation=2, bias=False),
                                dict(groups=3, padding=(1, 0))])
def test_conv2d_module(kw):
    k = (3, 2) if "groups" in kw else 3
    compare_module(lambda g: lm.nn.Conv2d(g, "features.0", 3, 6, k, **kw),
                   torch.nn.Conv2d(3, 6, k, **kw), "features.0", rand((1, 3, 9, 8)), "reduction",
                   27)


class TorchMLP(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc1, self.fc2, self.act = torch.nn.Linear(8, 32), torch.nn.Linear(32, 8), act

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


@pytest.mark.op("nn.MLP")
@pytest.mark.parametrize("act", ["gelu", "relu", "gelu_tanh"])
def test_mlp(act):
    tact = {"gelu": torch.nn.GELU(), "relu": torch.nn.ReLU(),
            "gelu_tanh": torch.nn.GELU(approximate="tanh")}[act]
    compare_module(lambda g: lm.nn.MLP(g, "mlp", 8, 32, act=act), TorchMLP(tact), "mlp",
                   rand((2, 5, 8)), "reduction", 64)


class TorchSwiGLU(torch.nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.up_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.down_proj = torch.nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(TF.silu(self.gate_proj(x)) * self.up_proj(x))


@pytest.mark.op("nn.SwiGLU")
def test_swiglu():
    compare_module(lambda g: lm.nn.SwiGLU(g, "model.layers.0.mlp", 16, 40), TorchSwiGLU(16, 40),
                   "model.layers.0.mlp", rand((1, 7, 16)), "reduction", 80, {1: "s"})


class TorchMoE(torch.nn.Module):
    """Hugging Face Mixtral / Qwen-MoE sparse block (reference, loops over experts)."""

    def __init__(self, hidden, inter, experts, top_k, norm):
        super().__init__()
        self.gate = torch.nn.Linear(hidden, experts, bias=False)
        self.experts = torch.nn.ModuleList([TorchSwiGLU(hidden, inter) for _ in range(experts)])
        self.top_k, self.norm = top_k, norm

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        w = TF.softmax(self.gate(x), dim=1, dtype=torch.float)
        w, sel = torch.topk(w, self.top_k, dim=-1)
        if self.norm:
            w = w / w.sum(dim=-1, keepdim=True)
        w = w.to(x.dtype)
        out = torch.zeros_like(x)
        mask = TF.one_hot(sel, num_classes=len(self.experts)).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            idx, top_x = torch.where(mask[e])
            out.index_add_(0, top_x, expert(x[top_x]) * w[top_x, idx, None])
        return out.reshape(shape)


@pytest.mark.op("nn.MoE")
@pytest.mark.parametrize("norm", [True, False])
def test_moe(norm):
    compare_module(lambda g: lm.nn.MoE(g, "mlp", 16, 24, 6, top_k=2, norm_topk_prob=norm),
                   TorchMoE(16, 24, 6, 2, norm), "mlp", rand((2, 9, 16)), "reduction", 48,
                   {1: "s"})


@pytest.mark.op("nn.MultiheadAttention")
def test_multihead_attention():
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    with torch.no_grad():
        tm.in_proj_bias.normal_()
    g = lm.Graph()
    m = lm.nn.MultiheadAttention(g, "attn", 16, 4)
    q = g.input("q", (2, 5, 16))
    kv = g.input("kv", (2, 7, 16))
    kpm = g.input("kpm", (2, 7), dtype="bool")
    am = g.input("am", (5, 7), dtype="bool")
    qv, kvv = rand((2, 5, 16)), rand((2, 7, 16))
    kpmv = np.zeros((2, 7), bool)
    kpmv[0, 5:] = True  # padding keys of the first sequence
    amv = np.triu(np.ones((5, 7), bool), 4)
    outs = {"self": m(q, q, q), "cross": m(q, kv, kv, key_padding_mask=kpm),
            "masked": m(q, kv, kv, attn_mask=am), "causal": m(q, q, q, is_causal=True)}
    res = run(g, outs, {**bind(m, tm.state_dict(), "attn"), "q": qv, "kv": kvv, "kpm": kpmv,
                        "am": amv})
    tq, tkv = torch.from_numpy(qv), torch.from_numpy(kvv)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
    want = {"self": tm(tq, tq, tq, need_weights=False)[0],
            "cross": tm(tq, tkv, tkv, key_padding_mask=torch.from_numpy(kpmv),
                        need_weights=False)[0],
            "masked": tm(tq, tkv, tkv, attn_mask=torch.from_numpy(amv), need_weights=False)[0],
            "causal": tm(tq, tq, tq, attn_mask=causal, need_weights=False)[0]}
    for k in outs:
        assert_close(res[k], want[k], "float32", tol="composite", what=k)


# ---- decoder attention, blocks, KV cache ---------------------------------------------------


def hf_rope(x, positions, theta):
    d = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = positions.float()[:, None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def ref_attention(w, p, x, cfg, positions):
    """HF LlamaAttention / Qwen3Attention over x [B, S, hidden] at `positions` (causal
    bottom-right: the last query sees every key)."""
    B, S, _ = x.shape
    H, Hkv, D = cfg["num_heads"], cfg.get("num_kv_heads") or cfg["num_heads"], cfg["head_dim"]

    def proj(name, n):
        y = TF.linear(x, w[f"{p}.{name}.weight"], w.get(f"{p}.{name}.bias"))
        return y.view(B, S, n, D)

    q, k, v = proj("q_proj", H), proj("k_proj", Hkv), proj("v_proj", Hkv)
    if cfg.get("qk_norm"):
        q = rms(q, w[f"{p}.q_norm.weight"], 1e-6)
        k = rms(k, w[f"{p}.k_norm.weight"], 1e-6)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    q, k = hf_rope(q, positions, cfg["rope_theta"]), hf_rope(k, positions, cfg["rope_theta"])
    k, v = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(D)
    scores = scores.masked_fill(torch.triu(torch.ones(S, S, dtype=torch.bool), 1), -math.inf)
    o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, S, H * D)
    return TF.linear(o, w[f"{p}.o_proj.weight"], w.get(f"{p}.o_proj.bias"))


ATTN_CFGS = [
    dict(hidden_size=32, num_heads=4, num_kv_heads=2, head_dim=8, rope_theta=10000.0),
    dict(hidden_size=24, num_heads=3, num_kv_heads=1, head_dim=16, qkv_bias=True,
         qk_norm=True, rope_theta=1000000.0),  # Qwen3-like: head_dim * heads != hidden
]


def attention_graph(name, batch, c):
    cfg = ATTN_CFGS[c]
    g = lm.Graph()
    return g, lm.nn.Attention(g, name, **cfg), g.input("x", (batch, "s", cfg["hidden_size"])), cfg


@pytest.mark.op("nn.Attention")
@pytest.mark.parametrize("c", range(len(ATTN_CFGS)))
def test_attention_module(c):
    g, m, x, cfg = attention_graph("self_attn", 2, c)
    w = random_weights(m)
    xv = rand((2, 6, cfg["hidden_size"]))
    out = run(g, {"y": m(x)}, {**w, "x": xv})
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    want = ref_attention(tw, "self_attn", torch.from_numpy(xv), cfg, torch.arange(6))
    assert_close(out["y"], want, "float32", tol="reduction", n=64)


@pytest.mark.op("nn.Attention", "kv_cache")
@pytest.mark.parametrize("c", range(len(ATTN_CFGS)))
def test_attention_kv_cache(c):
    g, m, x, cfg = attention_graph("layers.0.self_attn", 1, c)
    cache = m.make_cache(1, 16)
    y, updated = m.step(x, "p", cache)
    g.output("y", y)
    lm.nn.mark_cache_outputs(g, cache, updated)
    model = g.compile()
    w = random_weights(m)
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    D = cfg["head_dim"]
    Hkv = cfg["num_kv_heads"]
    kc = np.zeros((1, Hkv, 16, D), np.float32)
    vc = np.zeros((1, Hkv, 16, D), np.float32)
    seq = rand((1, 8, cfg["hidden_size"]))
    p = 0
    for s in [5, 1, 1, 1]:  # prefill, then three decode steps
        res = model.run({**w, "x": seq[:, p:p + s], "layers.0.self_attn.k_cache": kc,
                         "layers.0.self_attn.v_cache": vc}, dims={"p": p})
        full = ref_attention(tw, "layers.0.self_attn", torch.from_numpy(seq[:, :p + s]), cfg,
                             torch.arange(p + s))
        assert_close(res["y"], full[:, p:p + s], "float32", tol="reduction", n=64,
                     what=f"step p={p} s={s}")
        kc, vc = res["layers.0.self_attn.k_cache.next"], res["layers.0.self_attn.v_cache.next"]
        assert np.all(kc[:, :, p + s:] == 0)  # rows beyond the prefix untouched
        p += s


@pytest.mark.op("nn.Attention", "kv_cache")
def test_attention_kv_cache_updated_in_place():
    g, m, x, cfg = attention_graph("layers.0.self_attn", 1, 0)
    cache = m.make_cache(1, 16)
    y, updated = m.step(x, "p", cache)
    g.output("y", y)
    lm.nn.mark_cache_outputs(g, cache, updated)
    model = g.compile(device="cpu-jit", search_iters=2)
    names = ["layers.0.self_attn.k_cache.next", "layers.0.self_attn.v_cache.next"]
    with pytest.raises(lm.LookupError, match="no output named"):
        model.update_in_place("no_such_output")
    assert not model.update_in_place("y")  # not a Scatter into a persistent input
    assert all(model.update_in_place(n) for n in names)
    with pytest.raises(lm.LookupError, match="not updated in place"):
        model.state("y")
    w = random_weights(m)
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    D, Hkv = cfg["head_dim"], cfg["num_kv_heads"]
    kc = np.zeros((1, Hkv, 16, D), np.float32)
    vc = np.zeros((1, Hkv, 16, D), np.float32)
    seq = rand((1, 8, cfg["hidden_size"]))
    p = 0
    for s in [5, 1, 1, 1]:  # prefill, then three decode steps: the caches are bound once
        caches = {"layers.0.self_attn.k_cache": kc, "layers.0.self_attn.v_cache": vc} if p == 0 \
            else {}
        res = model.run({**w, **caches, "x": seq[:, p:p + s]}, dims={"p": p})
        assert sorted(res) == ["y"]
        full = ref_attention(tw, "layers.0.self_attn", torch.from_numpy(seq[:, :p + s]), cfg,
                             torch.arange(p + s))
        assert_close(res["y"], full[:, p:p + s], "float32", tol="reduction", n=64,
                     what=f"step p={p} s={s}")
        p += s
    state = model.state(names[0])
    assert state.shape == kc.shape and np.all(state[:, :, p:] == 0) and np.any(state[:, :, :p])
    assert not np.any(kc) and not np.any(vc)  # the arrays passed in are never written


def ref_block(tw, p, x, cfg, positions):
    h = x + ref_attention(tw, f"{p}.self_attn", rms(x, tw[f"{p}.input_layernorm.weight"], 1e-6),
                          cfg, positions)
    n = rms(h, tw[f"{p}.post_attention_layernorm.weight"], 1e-6)
    mlp = TF.linear(TF.silu(TF.linear(n, tw[f"{p}.mlp.gate_proj.weight"])) *
                    TF.linear(n, tw[f"{p}.mlp.up_proj.weight"]), tw[f"{p}.mlp.down_proj.weight"])
    return h + mlp


@pytest.mark.op("nn.TransformerBlock")
def test_transformer_block():
    cfg = dict(ATTN_CFGS[0], intermediate_size=48)
    g = lm.Graph()
    m = lm.nn.TransformerBlock(g, "model.layers.3", **cfg)
    names = [n for n, _, _ in m.parameters()]
    assert "model.layers.3.self_attn.q_proj.weight" in names
    assert "model.layers.3.mlp.down_proj.weight" in names
    x = g.input("x", (2, "s", 32))
    w = random_weights(m)
    xv = rand((2, 5, 32))
    out = run(g, {"y": m(x)}, {**w, "x": xv})
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    assert_close(out["y"], ref_block(tw, "model.layers.3", torch.from_numpy(xv), cfg,
                                     torch.arange(5)), "float32", tol="reduction", n=96)


@pytest.mark.op("nn.LlamaModel")
def test_llama_model_prefill_and_decode():
    cfg = dict(ATTN_CFGS[0], intermediate_size=48)
    vocab, layers = 40, 2
    g = lm.Graph()
    m = lm.nn.LlamaModel(g, vocab, layers, tie_word_embeddings=True, **cfg)
    tokens = g.input("tokens", (1, "s"), dtype="int64")
    caches = m.make_caches(1, 12)
    logits, updated = m.step(tokens, "p", caches)
    g.output("logits", logits)
    for c, u in zip(caches, updated):
        lm.nn.mark_cache_outputs(g, c, u)
    model = g.compile()
    w = random_weights(m)
    tw = {k: torch.from_numpy(v) for k, v in w.items()}

    def ref(ids):
        h = tw["model.embed_tokens.weight"][ids]
        for i in range(layers):
            h = ref_block(tw, f"model.layers.{i}", h, cfg, torch.arange(ids.shape[1]))
        return TF.linear(rms(h, tw["model.norm.weight"], 1e-6), tw["model.embed_tokens.weight"])

    ids = randint((1, 7), 0, vocab)
    cache_vals = {}
    for i in range(layers):
        for kv in "kv":
            cache_vals[f"model.layers.{i}.self_attn.{kv}_cache"] = np.zeros((1, 2, 12, 8),
                                                                           np.float32)
    p = 0
    for s in [4, 1, 1, 1]:
        res = model.run({**w, **cache_vals, "tokens": ids[:, p:p + s]}, dims={"p": p})
        want = ref(torch.from_numpy(ids[:, :p + s]))[:, p:p + s]
        assert_close(res["logits"], want, "float32", tol="reduction", n=256, what=f"p={p}")
        for name in cache_vals:
            cache_vals[name] = res[name + ".next"]
        p += s
