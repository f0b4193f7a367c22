"""Real-model runners vs Hugging Face transformers (the oracle).

Small random-weight models of the real architectures (Llama / Qwen2 decoders,
a BERT encoder) are written with save_pretrained (safetensors + config.json),
loaded by luminal.models and compared with transformers on the same weights;
all-MiniLM-L6-v2 (the packaged model) is compared with BertModel + mean
pooling + normalisation. The SmolLM2 GGUF and the `luminal` command are in
test_models_smollm2.py.
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import luminal as lm

transformers = pytest.importorskip("transformers")  # installed by scripts/setup.sh

REPO = Path(__file__).resolve().parents[2]


def models_path(name):
    """A packaged model's path from scripts/fetch_models.sh, using the user's
    model cache (conftest points LUMINAL_CACHE_DIR at a temporary directory
    for compile caches; the 100 MB model files should not be fetched again)."""
    env_var = {"smollm2": "LUMINAL_SMOLLM2_GGUF", "minilm": "LUMINAL_MINILM_DIR"}[name]
    if os.environ.get(env_var):
        return os.environ[env_var]
    env = dict(os.environ)
    env.pop("LUMINAL_CACHE_DIR", None)
    if os.environ.get("LUMINAL_MODELS_CACHE"):
        env["LUMINAL_CACHE_DIR"] = os.environ["LUMINAL_MODELS_CACHE"]
    out = subprocess.run(["bash", str(REPO / "scripts" / "fetch_models.sh"), name], env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


# ---- decoders -------------------------------------------------------------------

DECODERS = {
    # Llama with grouped-query attention and an untied LM head.
    "llama": lambda: transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
        max_position_embeddings=128, tie_word_embeddings=False),
    # Qwen2: q / k / v biases, tied embeddings, another RoPE theta.
    "qwen2": lambda: transformers.Qwen2Config(
        vocab_size=80, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=1, rms_norm_eps=1e-6, rope_theta=50000.0,
        max_position_embeddings=128, tie_word_embeddings=True),
}

PROMPT = [1, 5, 9, 33, 2, 60, 7]


def random_decoder(kind, path):
    torch.manual_seed(0)
    config = DECODERS[kind]()
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for p in model.parameters():  # larger than the init: logits far from uniform
            p.normal_(0.0, 0.3)
    model.save_pretrained(path)
    return model


@pytest.fixture(scope="module", params=sorted(DECODERS))
def decoder(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(request.param)
    return random_decoder(request.param, path), path


def assert_close_rel(got, want, rel):
    scale = float(np.abs(want).max())
    err = float(np.abs(got - want).max())
    assert err <= rel * scale, f"max |diff| {err:.3g} > {rel} x max |ref| {scale:.3g}"


# f32 arithmetic (the reference interpreter; the CPU backend at matmul precision "highest")
# matches transformers' fp32 logits to 1e-4 of their range. At the default, "high", the CPU
# backend may round both operands of an f32 product to 14 bits per block of 32 (TF32-like):
# 1e-3, and the same greedy tokens.
@pytest.mark.parametrize("device,precision,rel", [("reference", "highest", 1e-4),
                                                  ("cpu", "highest", 1e-4), ("cpu", "high", 1e-3)])
def test_decoder_logits_and_greedy_match_transformers(decoder, device, precision, rel):
    ref, path = decoder
    m = lm.models.CausalLM(str(path), device=device, all_logits=True, cache_length=64,
                           matmul_precision=precision)
    with torch.no_grad():
        want = ref(torch.tensor([PROMPT])).logits[0].numpy()
    got = m.forward(PROMPT)
    assert got.shape == want.shape
    assert_close_rel(got, want, rel)
    # A shorter prompt on the same compiled program (another s, no recompile).
    with torch.no_grad():
        want3 = ref(torch.tensor([PROMPT[:3]])).logits[0].numpy()
    assert_close_rel(m.forward(PROMPT[:3]), want3, rel)
    # Greedy decoding through the KV cache, token for token.
    want_tokens = ref.generate(torch.tensor([PROMPT]), max_new_tokens=10, do_sample=False,
                               eos_token_id=None, pad_token_id=0)[0, len(PROMPT):].tolist()
    r = m.generate(PROMPT, max_tokens=10, stop_at_eos=False)
    assert r["tokens"] == want_tokens
    assert r["prompt_tokens"] == len(PROMPT) and r["finish_reason"] == "length"
    assert r["ttft_ms"] > 0 and r["tpot_ms"] > 0


def test_generation_options(decoder):
    ref, path = decoder
    m = lm.models.CausalLM(str(path), device="reference", cache_length=16)
    greedy = m.generate(PROMPT, max_tokens=4, stop_at_eos=False)["tokens"]
    # A stop token ends generation before it is emitted.
    stopped = m.generate(PROMPT, max_tokens=4, stop_tokens=[greedy[1]], stop_at_eos=False)
    assert stopped["tokens"] == greedy[:1] and stopped["finish_reason"] == "stop"
    # Seeded sampling is reproducible, and differs from greedy for some seed.
    kw = dict(max_tokens=6, temperature=1.5, top_k=20, top_p=0.95, stop_at_eos=False)
    a = m.generate(PROMPT, seed=1, **kw)["tokens"]
    assert a == m.generate(PROMPT, seed=1, **kw)["tokens"]
    assert any(m.generate(PROMPT, seed=s, **kw)["tokens"] != a for s in range(2, 6))
    # The cache bounds the generation: 7 prompt + 10 requested > 16 positions.
    assert len(m.generate(PROMPT, max_tokens=30, stop_at_eos=False)["tokens"]) == 10
    with pytest.raises(lm.Error, match="cache"):
        m.forward(list(range(17)))
    with pytest.raises(lm.Error, match="vocabulary"):
        m.forward([1, 10_000])
    with pytest.raises(lm.Error, match="temperature"):
        m.generate(PROMPT, temperature=-1.0)
    seen = []
    m.generate(PROMPT, max_tokens=3, stop_at_eos=False,
               on_token=lambda i, text: seen.append(i) or len(seen) < 2)
    assert seen == greedy[:2]  # the callback stopped it after two tokens


def test_missing_weight_is_named(tmp_path):
    random_decoder("llama", tmp_path)
    from safetensors.torch import load_file, save_file
    tensors = load_file(str(tmp_path / "model.safetensors"))
    del tensors["model.layers.1.mlp.up_proj.weight"]
    save_file(tensors, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(lm.LookupError, match="model.layers.1.mlp.up_proj.weight"):
        lm.models.CausalLM(str(tmp_path), device="reference")


# ---- RoPE scaling ---------------------------------------------------------------

ROPE_SCALINGS = {
    "linear": dict(rope_type="linear", factor=4.0),
    # The context (max_position_embeddings) is 8 tokens: the 12-token forward and
    # the generation past position 8 use NTK frequencies for their length.
    "dynamic": dict(rope_type="dynamic", factor=2.0),
    # head_dim 8, theta 1e4: wavelengths 6.3 (kept), 63 (interpolated), 628 and
    # 6283 (divided by the factor) against 64 / 4 and 64 / 1.
    "llama3": dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                   original_max_position_embeddings=64),
}
LONG_PROMPT = [1, 5, 9, 33, 2, 60, 7, 11, 40, 3, 28, 50]


def scaled_llama_config(scaling):
    return transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
        max_position_embeddings=8 if scaling == "dynamic" else 128, tie_word_embeddings=False,
        rope_scaling=dict(ROPE_SCALINGS[scaling]) if scaling else None)


@pytest.mark.parametrize("scaling,device", [("linear", "reference"), ("dynamic", "reference"),
                                            ("llama3", "reference"), ("llama3", "cpu")])
def test_rope_scaling_matches_transformers(scaling, device, tmp_path):
    torch.manual_seed(1)
    ref = transformers.LlamaForCausalLM(scaled_llama_config(scaling)).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0.0, 0.3)
    ref.save_pretrained(tmp_path)
    m = lm.models.CausalLM(str(tmp_path), device=device, all_logits=True, cache_length=32,
                           search_iters=2)
    with torch.no_grad():
        want = ref(torch.tensor([LONG_PROMPT])).logits[0].numpy()
        # The same weights without scaling: the comparison can tell them apart.
        plain = transformers.LlamaForCausalLM(scaled_llama_config(None)).eval()
        plain.load_state_dict(ref.state_dict())
        unscaled = plain(torch.tensor([LONG_PROMPT])).logits[0].numpy()
    assert float(np.abs(unscaled - want).max()) > 1e-2
    got = m.forward(LONG_PROMPT)
    assert got.shape == want.shape
    assert_close_rel(got, want, 1e-4)
    # Greedy decoding through the cache (dynamic: past the context, the
    # frequencies change per step as transformers' do).
    want_tokens = ref.generate(torch.tensor([PROMPT]), max_new_tokens=10, do_sample=False,
                               eos_token_id=None, pad_token_id=0)[0, len(PROMPT):].tolist()
    assert m.generate(PROMPT, max_tokens=10, stop_at_eos=False)["tokens"] == want_tokens


def test_unsupported_rope_scaling_is_refused(tmp_path):
    random_decoder("llama", tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0}
    config.pop("rope_parameters", None)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(lm.Error, match="yarn"):
        lm.models.CausalLM(str(tmp_path), device="reference")


# ---- BERT -----------------------------------------------------------------------

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "luminal compiles models ahead of time.",
    "A sentence embedding maps text to a vector.",
    "Hello, world!",
    "Ünïcödé, emoji 🙂 and numbers 12345 are tokenized too.",
    "Paris is the capital and most populous city of France.",
    "def add(a, b):\n    return a + b",
    "东京是日本的首都。",
    "   Leading and trailing whitespace, and    runs of it.   ",
    "A very long sentence that keeps going, listing apples, pears, plums, cherries, "
    "grapes, melons, lemons and limes, so that it is by far the longest in the batch.",
    "?!",
]


def reference_embeddings(model, tokenizer, texts):
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_minilm_embeddings_match_transformers():
    path = models_path("minilm")
    ref = transformers.BertModel.from_pretrained(path).eval()
    tok = transformers.AutoTokenizer.from_pretrained(path)
    want = reference_embeddings(ref, tok, SENTENCES)
    # A small search budget keeps the cold compile short; the CLI test reuses it.
    e = lm.models.SentenceEmbedder(path, device="cpu-jit", search_iters=4)
    got = e.embed(SENTENCES)  # one padded batch
    assert len(SENTENCES) >= 10 and got.shape == (len(SENTENCES), 384)
    cos = cosines(got, want)
    print(f"MiniLM embeddings, {len(SENTENCES)} sentences: min cosine {cos.min():.7f}")
    assert cos.min() >= 0.9999, cos
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    # One at a time (another batch size and length, same program).
    single = e.embed([SENTENCES[3]])
    assert cosines(single, want[3:4]).min() > 0.9999


def test_random_bert_matches_transformers(tmp_path):
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=64,
                                     max_position_embeddings=40, type_vocab_size=2)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    model.save_pretrained(tmp_path)
    ids = [[2, 7, 9, 11, 3], [2, 40, 3]]
    e = lm.models.SentenceEmbedder(str(tmp_path), device="reference")
    got = e.embed_ids(ids)  # padded to one batch inside
    enc = {"input_ids": torch.tensor([ids[0], ids[1] + [0, 0]]),
           "attention_mask": torch.tensor([[1] * 5, [1] * 3 + [0, 0]])}
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    want = torch.nn.functional.normalize((h * mask).sum(1) / mask.sum(1), dim=1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
