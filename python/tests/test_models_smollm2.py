"""SmolLM2-135M-Instruct (the packaged GGUF, Q4_1) vs a torch reference, and
the `luminal` command line.

The reference is transformers' LlamaForCausalLM with the GGUF's weights
dequantized by the `gguf` package (independent of luminal's reader) and the
q / k rows un-permuted as transformers' own GGUF loader does (llama.cpp's
converter permutes them for its interleaved RoPE). (transformers' own
`from_pretrained(gguf_file=...)` would do the same but needs `accelerate`, which
the test command does not install.) Checked: last-position logits of 3 prompts
within 1e-2, and 32 greedy tokens identical to the reference's `generate` for
each. The luminal model is compiled once per module (the compile cache makes
the CLI runs below fast).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import luminal as lm
from test_models import models_path

transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")

PROMPT = "The capital of France is"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def reverse_permute(w, n_head):
    dim = w.shape[0] // n_head // 2
    return w.reshape(n_head, dim, 2, *w.shape[1:]).swapaxes(2, 1).reshape(w.shape)


def torch_llama_from_gguf(path):
    r = gguf.GGUFReader(path)
    meta = {k: f.contents() for k, f in r.fields.items() if not k.startswith("tokenizer.ggml.")}
    a = "llama."
    cfg = transformers.LlamaConfig(
        vocab_size=int(meta[a + "vocab_size"]), hidden_size=int(meta[a + "embedding_length"]),
        intermediate_size=int(meta[a + "feed_forward_length"]),
        num_hidden_layers=int(meta[a + "block_count"]),
        num_attention_heads=int(meta[a + "attention.head_count"]),
        num_key_value_heads=int(meta[a + "attention.head_count_kv"]),
        rms_norm_eps=float(meta[a + "attention.layer_norm_rms_epsilon"]),
        rope_theta=float(meta[a + "rope.freq_base"]),
        max_position_embeddings=int(meta[a + "context_length"]), tie_word_embeddings=True)
    names = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
             "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}
    state = {}
    for t in r.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w = w.reshape([int(x) for x in reversed(t.shape)])
        if t.name == "token_embd.weight":
            key = "model.embed_tokens.weight"
        elif t.name == "output_norm.weight":
            key = "model.norm.weight"
        else:
            _, layer, kind, suffix = t.name.split(".")
            key = f"model.layers.{layer}.{names[kind]}.{suffix}"
            if kind == "attn_q":
                w = reverse_permute(w, cfg.num_attention_heads)
            elif kind == "attn_k":
                w = reverse_permute(w, cfg.num_key_value_heads)
        state[key] = torch.from_numpy(np.ascontiguousarray(w))
    model = transformers.LlamaForCausalLM(cfg)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    return model.eval()


@pytest.fixture(scope="module")
def smollm2_path():
    return models_path("smollm2")


@pytest.fixture(scope="module")
def reference(smollm2_path):
    return torch_llama_from_gguf(smollm2_path)


@pytest.fixture(scope="module")
def smollm2(smollm2_path):
    # (luminal's default precision, which the suite's conftest sets to highest elsewhere)
    return lm.models.CausalLM(smollm2_path, device="cpu-jit", matmul_precision="high")


# Raw prompts and a chat prompt (the template's special tokens).
# The last one is long enough (> 64 tokens) for the prefill's products to be
# GEMMs (at the default matmul precision, with 16-bit integer activations).
PROMPTS = [(PROMPT, False), ("def fibonacci(n):", False),
           ("What is the tallest mountain in the world?", True),
           ("The history of astronomy begins with the observation of the night sky by ancient "
            "peoples, who tracked the motions of the sun, the moon and the planets to keep "
            "calendars and to predict the seasons. Babylonian astronomers recorded eclipses "
            "for centuries, and Greek philosophers proposed that the earth was a sphere. In "
            "the seventeenth century, the telescope changed everything, because", False)]


@pytest.fixture(scope="module")
def prompt_ids(smollm2):
    return [smollm2.encode_prompt(text, chat=chat) for text, chat in PROMPTS]


def test_smollm2_logits_match_torch(smollm2, reference, prompt_ids):
    assert len(prompt_ids[0]) == 5
    diffs = []
    for ids in prompt_ids:
        with torch.no_grad():
            want = reference(torch.tensor([ids])).logits[0, -1].numpy()
        got = smollm2.forward(ids)[-1]
        diffs.append(float(np.abs(got - want).max()))
    print(f"SmolLM2 last-position logits, {len(diffs)} prompts: max |diff| = "
          + ", ".join(f"{d:.3g}" for d in diffs))
    assert max(diffs) <= 1e-2, diffs


def test_smollm2_matmul_precision_is_validated(smollm2_path):
    with pytest.raises(ValueError, match="medium"):
        lm.models.CausalLM(smollm2_path, matmul_precision="medium")


def test_smollm2_greedy_matches_torch_generate(smollm2, reference, prompt_ids):
    for (text, _), ids in zip(PROMPTS, prompt_ids):
        # An explicit mask: generate() would infer one that hides every pad id
        # (the chat prompt holds <|im_end|>, id 2).
        x = torch.tensor([ids])
        want = reference.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=32,
                                  do_sample=False, eos_token_id=None,
                                  pad_token_id=0)[0, len(ids):].tolist()
        r = smollm2.generate(ids, max_tokens=32, stop_at_eos=False)
        assert r["tokens"] == want, text
    assert "Paris" in smollm2.generate(prompt_ids[0], max_tokens=8, stop_at_eos=False)["text"]


def test_smollm2_chat_prompt(smollm2):
    ids = smollm2.encode_prompt("Hi", chat=True)
    tok = smollm2.eos_tokens
    assert 2 in tok  # <|im_end|> ends an assistant turn
    # <|im_start|>system ... <|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n
    assert ids[0] == 1 and ids.count(1) == 3 and ids.count(2) == 2


# ---- the `luminal` command ------------------------------------------------------


@pytest.fixture(scope="module")
def cli_env(smollm2_path, tmp_path_factory):
    """The environment of `luminal` subprocesses: the suite's compile cache (so
    the fixture's compile is reused) with the packaged model linked into its
    models/ directory (so `--model smollm2` needs no download)."""
    env = dict(os.environ)
    env["LUMINAL_MATMUL_PRECISION"] = "high"  # (the CLI's default, as the fixture's model)
    cache = env.get("LUMINAL_CACHE_DIR") or str(tmp_path_factory.mktemp("cache"))
    env["LUMINAL_CACHE_DIR"] = cache
    models = os.path.join(cache, "models")
    os.makedirs(models, exist_ok=True)
    link = os.path.join(models, GGUF_NAME)
    if not os.path.exists(link):
        os.symlink(smollm2_path, link)
    return env


def luminal(env, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "luminal", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_cli_generate_json(smollm2, cli_env):
    r = luminal(cli_env, "generate", "--model", "smollm2", "--prompt", PROMPT,
                "--max-tokens", "8", "--temperature", "0", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in ["text", "tokens", "prompt_tokens", "ttft_ms", "tpot_ms", "compile_ms", "cached"]:
        assert key in out, key
    assert out["prompt_tokens"] == 5 and len(out["tokens"]) == 8
    assert out["cached"] is True  # the fixture compiled the same graph
    ids = smollm2.encode_prompt(PROMPT)
    assert out["tokens"] == smollm2.generate(ids, max_tokens=8, stop_at_eos=False)["tokens"]
    assert out["text"].strip().startswith("Paris")
    # Streaming (no --json): the same text on stdout, a stats line on stderr.
    s = luminal(cli_env, "generate", "--model", "smollm2", "--prompt", PROMPT,
                "--max-tokens", "8", "--greedy")
    assert s.returncode == 0, s.stderr
    assert s.stdout.rstrip("\n") == out["text"]
    assert "TTFT" in s.stderr


@pytest.mark.parametrize("command", ["generate", "embed", "info"])
def test_cli_help(command):
    r = luminal(dict(os.environ), command, "--help")
    assert r.returncode == 0
    assert r.stdout.startswith(f"usage: luminal {command}")
    assert "--help" in r.stdout


def test_cli_top_level_help_lists_commands():
    r = luminal(dict(os.environ), "--help")
    assert r.returncode == 0
    for command in ["generate", "embed", "info", "demo"]:
        assert command in r.stdout


def test_cli_errors(tmp_path):
    env = dict(os.environ)
    missing = str(tmp_path / "nope.gguf")
    r = luminal(env, "generate", "--model", missing, "--prompt", "x")
    assert r.returncode != 0
    assert "nope.gguf" in r.stderr and "no such file" in r.stderr
    assert r.stdout == ""
    r = luminal(env, "generate", "--prompt", "x")
    assert r.returncode == 2 and "--model" in r.stderr
    r = luminal(env, "generate", "--model", missing, "--prompt", "x", "--top-p", "2")
    assert r.returncode == 2 and "top-p" in r.stderr
    r = luminal(env, "generate", "--bogus")
    assert r.returncode == 2 and "--bogus" in r.stderr
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00truncated")
    r = luminal(env, "info", str(bad))
    assert r.returncode == 1 and "bad.gguf" in r.stderr


def test_cli_info(smollm2_path):
    r = luminal(dict(os.environ), "info", smollm2_path)
    assert r.returncode == 0, r.stderr
    assert "GGUF v3" in r.stdout and "architecture: llama" in r.stdout
    assert "30 layers, hidden 576, 9 heads / 3 kv heads" in r.stdout
    assert "Q4_1" in r.stdout and "byte-level BPE, 49152 tokens" in r.stdout


def test_cli_embed(cli_env):
    minilm = models_path("minilm")
    r = luminal(cli_env, "embed", "--model", minilm, "--search-iters", "4", "Hello, world!",
                "Another sentence.")
    assert r.returncode == 0, r.stderr
    vectors = np.array(json.loads(r.stdout))
    assert vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
