#!/usr/bin/env python3
"""Generation benchmark (a command, not a test): SmolLM2-135M-Instruct on the CPU.

    python3 bench/generate_bench.py [--device cpu-jit] [--prompt-tokens 128]
                                    [--decode-tokens 64] [--json out.json] [--no-torch]

The program is $LUMINAL_BIN, else build/luminal, else `python -m luminal`.

luminal: `luminal generate --json` in a subprocess, twice with a fresh compile
cache (cold, then cached): TTFT (one prefill forward over the prompt plus the
first token), TPOT (mean greedy decode step), compile ms, peak RSS of the
process. PyTorch eager (transformers fp32 with the same dequantized weights,
python/tests/test_models_smollm2.py) on the same prompt and thread count:
TTFT (one forward over the prompt) and TPOT (greedy `generate` with its KV cache,
the time of 1 + N tokens minus that of 1, over N).
Prints a table with ratios; --json writes the figures.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXT = ("luminal is an ahead-of-time inference compiler. It records a model as a graph of a "
        "few primitive operations, explores equivalent programs in an e-graph, times the "
        "candidates on the device and keeps the fastest one. ")


def luminal_cmd():
    if os.environ.get("LUMINAL_BIN"):  # e.g. build-dev/luminal
        return [os.environ["LUMINAL_BIN"]]
    built = REPO / "build" / "luminal"
    if built.exists():
        return [str(built)]
    return [sys.executable, "-m", "luminal"]


def run_luminal(model, prompt, args, cache_dir):
    env = dict(os.environ, LUMINAL_CACHE_DIR=cache_dir)
    # The packaged model lives in the user's cache: pass its path, not "smollm2".
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run(
        luminal_cmd() + ["generate", "--model", model, "--prompt", prompt, "--greedy", "--json",
                         "--quiet", "--max-tokens", str(args.decode_tokens + 1),
                         "--device", args.device],
        env=env, capture_output=True, text=True, check=True)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # max over children, KiB
    result = json.loads(out.stdout)
    result["peak_rss_mb"] = max(rss, before) / 1024
    return result


def torch_eager(model_path, ids, decode_tokens):
    import torch

    sys.path.insert(0, str(REPO / "python" / "tests"))
    from test_models_smollm2 import torch_llama_from_gguf

    model = torch_llama_from_gguf(model_path)
    x = torch.tensor([ids])
    greedy = dict(do_sample=False, eos_token_id=None, pad_token_id=0)
    with torch.no_grad():
        model(x)  # warm-up
        t0 = time.perf_counter()
        model(x)
        ttft = (time.perf_counter() - t0) * 1e3
        # Decode steps: generate() with and without them (its own KV cache).
        t0 = time.perf_counter()
        model.generate(x, max_new_tokens=1, **greedy)
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.generate(x, max_new_tokens=decode_tokens + 1, **greedy)
        tpot = (time.perf_counter() - t0 - one) * 1e3 / decode_tokens
    return {"ttft_ms": ttft, "tpot_ms": tpot, "threads": torch.get_num_threads()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu-jit")
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--decode-tokens", type=int, default=64)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch eager baseline")
    args = p.parse_args()

    import luminal as lm

    model = subprocess.run(["bash", str(REPO / "scripts" / "fetch_models.sh"), "smollm2"],
                           capture_output=True, text=True, check=True).stdout.strip()
    tok = lm.tokenizer.Tokenizer.from_gguf(model)
    ids = tok.encode(TEXT * 8)[: args.prompt_tokens]
    prompt = tok.decode(ids)
    ids = tok.encode(prompt)

    with tempfile.TemporaryDirectory(prefix="luminal-bench-cache-") as cache:
        cold = run_luminal(model, prompt, args, cache)
        cached = run_luminal(model, prompt, args, cache)
    results = {"model": model, "device": args.device, "prompt_tokens": cached["prompt_tokens"],
               "decode_tokens": args.decode_tokens, "gguf_mb": os.path.getsize(model) / 2**20,
               "luminal": {"ttft_ms": cached["ttft_ms"], "tpot_ms": cached["tpot_ms"],
                           "compile_cold_ms": cold["compile_ms"],
                           "compile_cached_ms": cached["compile_ms"],
                           "cached": cached["cached"], "peak_rss_mb": cold["peak_rss_mb"]}}
    if not args.no_torch:
        results["torch_eager"] = torch_eager(model, ids, args.decode_tokens)

    lu = results["luminal"]
    print(f"SmolLM2-135M-Instruct Q4_1 ({results['gguf_mb']:.0f} MB), "
          f"{results['prompt_tokens']} prompt tokens, {args.decode_tokens} decode tokens, "
          f"device {args.device}")
    print(f"{'':22}{'luminal':>12}{'torch eager':>14}{'ratio':>8}")
    te = results.get("torch_eager", {})
    for key, label in [("ttft_ms", "TTFT ms"), ("tpot_ms", "TPOT ms")]:
        ref = te.get(key)
        ratio = f"{lu[key] / ref:.2f}x" if ref else "-"
        print(f"{label:22}{lu[key]:12.1f}{(ref or float('nan')):14.1f}{ratio:>8}")
    print(f"{'compile cold ms':22}{lu['compile_cold_ms']:12.0f}")
    print(f"{'compile cached ms':22}{lu['compile_cached_ms']:12.0f}   (cached: {lu['cached']})")
    print(f"{'peak RSS MB':22}{lu['peak_rss_mb']:12.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
