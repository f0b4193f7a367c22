#!/usr/bin/env python3
"""Generation benchmark (a command, not a test): SmolLM2-135M-Instruct on the CPU,
luminal vs PyTorch eager vs torch.compile (inductor), same weights and thread count.

    python3 bench/generate_bench.py [--device cpu-jit] [--prompt-tokens 128]
                                    [--decode-tokens 64] [--repeats 3] [--json out.json]
                                    [--no-torch] [--no-inductor]

The program is $LUMINAL_BIN, else build/luminal, else `python -m luminal`.

Every column runs in its own process, twice (cold, then with its compile cache
warm), and its peak RSS is that process's (wait4): "peak RSS" is the warm run's (serving
memory, what the RSS target is about), "cold run RSS" the first run's (it includes the
compiler's search, or inductor's compilation):
  luminal   `luminal generate --greedy --json`: TTFT (the prefill forward over the
            prompt plus choosing the first token), TPOT (the mean greedy decode
            step), compile ms (cold: a fresh compile cache; cached: the second run).
  eager     transformers LlamaForCausalLM fp32 with the GGUF's dequantized weights
            (python/tests/test_models_smollm2.py): a greedy loop with its KV cache
            (DynamicCache), run twice to warm up and once timed.
  inductor  the same model under torch.compile(backend="inductor") with a StaticCache
            (the transformers recipe for compiled decoding); compile ms is the two
            warm-up generations minus twice the timed one, cold with a fresh inductor
            cache directory, cached with that directory reused.
TTFT is one real prefill of the prompt (+ argmax), TPOT the mean of the decode steps; each
column reports the best of --repeats timed generations (luminal: that many cached runs of the
command, each a fresh process; PyTorch: that many generations after the warm-up ones), since
the machines here are shared and a single sample varies by 20-50 %.
The PyTorch columns' peak RSS includes building the fp32 model from the GGUF
(gguf-py dequantization), as a user of that path would see.
Prints a table, `name value` ratio lines (luminal / peer: below 1 is faster) and the
targets (TPOT <= 0.33x eager, TTFT <= 0.5x eager, cached compile <= 2 s, peak RSS
<= 2x the GGUF file plus the KV cache) as met / missed; --json writes everything.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXT = ("luminal is an ahead-of-time inference compiler. It records a model as a graph of a "
        "few primitive operations, explores equivalent programs in an e-graph, times the "
        "candidates on the device and keeps the fastest one. ")
CONTEXT = 512  # luminal's KV-cache length (`luminal generate --context`, its default) ...


def context_for(args):
    """... or the prompt and every generated token where they need more: a multiple of 256."""
    need = args.prompt_tokens + args.decode_tokens + 1
    return max(CONTEXT, (need + 255) // 256 * 256)


def luminal_cmd():
    if os.environ.get("LUMINAL_BIN"):  # e.g. build-dev/luminal
        return [os.environ["LUMINAL_BIN"]]
    built = REPO / "build" / "luminal"
    if built.exists():
        return [str(built)]
    return [sys.executable, "-m", "luminal"]


def run_measured(cmd, env):
    """Runs cmd; returns (stdout, its own peak RSS in MB). wait4 gives this child's
    rusage (RUSAGE_CHILDREN would be the maximum over every child so far)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{stderr[-3000:]}")
    return stdout, usage.ru_maxrss / 1024  # KiB -> MiB


def run_luminal(model, prompt, args, cache_dir):
    env = dict(os.environ, LUMINAL_CACHE_DIR=cache_dir)
    # The packaged model lives in the user's cache: pass its path, not "smollm2".
    out, rss = run_measured(
        luminal_cmd() + ["generate", "--model", model, "--prompt", prompt, "--greedy", "--json",
                         "--quiet", "--max-tokens", str(args.decode_tokens + 1),
                         "--context", str(context_for(args)), "--device", args.device], env)
    result = json.loads(out)
    result["peak_rss_mb"] = rss
    return result


# ---- the PyTorch columns (each in a worker process: --worker eager|inductor) ------


def greedy_run(model, x, decode_tokens, cache):
    """Prefill + decode_tokens greedy steps through `cache`; per-phase times."""
    import torch

    # Static input shapes: inductor compiles one graph for the prefill and one
    # for a decode step, instead of a dynamic-shape graph for both (slower on
    # the CPU); the cache position stays a dynamic int.
    def static(t):
        torch._dynamo.mark_static(t)
        return t

    n = x.shape[1]
    t0 = time.perf_counter()
    logits = model(input_ids=static(x), past_key_values=cache,
                   cache_position=static(torch.arange(n)), use_cache=True).logits
    tok = logits[:, -1:].argmax(-1)
    ttft = time.perf_counter() - t0
    tokens, steps = [int(tok)], []
    for i in range(decode_tokens):
        t0 = time.perf_counter()
        logits = model(input_ids=static(tok), past_key_values=cache,
                       cache_position=static(torch.tensor([n + i])), use_cache=True).logits
        tok = logits[:, -1:].argmax(-1)
        steps.append(time.perf_counter() - t0)
        tokens.append(int(tok))
    return ttft, steps, tokens


def torch_worker(kind, model_path, ids, decode_tokens, threads, repeats):
    import torch
    import transformers

    torch.set_num_threads(threads)
    sys.path.insert(0, str(REPO / "python" / "tests"))
    from test_models_smollm2 import torch_llama_from_gguf

    model = torch_llama_from_gguf(model_path)
    x = torch.tensor([ids])
    max_len = len(ids) + decode_tokens + 8

    # Inductor: ONE StaticCache, reset between runs (a new cache object would
    # fail the compiled graphs' guards and recompile).
    static = None
    if kind == "inductor":
        static = transformers.StaticCache(config=model.config, max_cache_len=max_len)

    def cache():
        if static is None:
            return transformers.DynamicCache()
        static.reset()
        return static

    step = model if kind == "eager" else torch.compile(model, backend="inductor")
    with torch.no_grad():
        # Two warm-up runs (inductor compiles in both: the first call of a
        # StaticCache initialises it lazily, which its graphs guard on).
        warm = 0.0
        for _ in range(2):
            t0 = time.perf_counter()
            greedy_run(step, x, decode_tokens, cache())
            warm += time.perf_counter() - t0
        ttft, tpot, timed = float("inf"), float("inf"), float("inf")
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            run_ttft, steps, tokens = greedy_run(step, x, decode_tokens, cache())
            timed = min(timed, time.perf_counter() - t0)
            ttft, tpot = min(ttft, run_ttft), min(tpot, sum(steps) / len(steps))
    import resource

    return {"ttft_ms": ttft * 1e3, "tpot_ms": tpot * 1e3,
            "compile_ms": max(0.0, warm - 2 * timed) * 1e3 if kind != "eager" else None,
            "tokens": tokens, "threads": torch.get_num_threads(),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_torch(kind, model, ids, args, cache_dir=None):
    env = dict(os.environ)
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    cmd = [sys.executable, __file__, "--worker", kind, "--model", model,
           "--ids", ",".join(map(str, ids)), "--decode-tokens", str(args.decode_tokens),
           "--threads", str(args.threads), "--repeats", str(args.repeats)]
    out, rss = run_measured(cmd, env)
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = max(result["peak_rss_mb"], rss)
    return result


# ---- the report ---------------------------------------------------------------------


def kv_cache_mb(model_path, context):
    """luminal's f32 KV cache for `context` positions, from the GGUF metadata."""
    import gguf

    r = gguf.GGUFReader(model_path)
    meta = {k: f.contents() for k, f in r.fields.items() if not k.startswith("tokenizer.")}
    a = meta["general.architecture"] + "."
    heads = int(meta[a + "attention.head_count"])
    kv_heads = int(meta.get(a + "attention.head_count_kv", heads))
    head_dim = int(meta.get(a + "attention.key_length", int(meta[a + "embedding_length"]) // heads))
    return 2 * int(meta[a + "block_count"]) * kv_heads * head_dim * context * 4 / 2**20


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def report(results, args):
    lu, eager, ind = results["luminal"], results.get("eager"), results.get("inductor")
    print(f"{results['machine']['cpu']}, {results['machine']['cores']} cores")
    print(f"SmolLM2-135M-Instruct Q4_1 ({results['gguf_mb']:.0f} MB), "
          f"{results['prompt_tokens']} prompt tokens, {args.decode_tokens} decode tokens, "
          f"{args.threads} threads, luminal device {args.device}")
    cols = [("luminal", lu), ("torch eager", eager), ("inductor", ind)]
    print(f"{'':20}" + "".join(f"{name:>14}" for name, _ in cols))

    def row(label, key, fmt):
        cells = []
        for _, r in cols:
            v = r.get(key) if r else None
            cells.append(f"{fmt.format(v):>14}" if v is not None else f"{'-':>14}")
        print(f"{label:20}" + "".join(cells))

    row("TTFT ms", "ttft_ms", "{:.1f}")
    row("TPOT ms", "tpot_ms", "{:.1f}")
    row("compile cold ms", "compile_cold_ms", "{:.0f}")
    row("compile cached ms", "compile_cached_ms", "{:.0f}")
    row("peak RSS MB", "peak_rss_mb", "{:.0f}")
    row("  cold run RSS MB", "peak_rss_cold_mb", "{:.0f}")

    ratios = {}
    for peer, r in [("eager", eager), ("inductor", ind)]:
        if r:
            for key in ("ttft_ms", "tpot_ms"):
                ratios[f"luminal_vs_{peer}_{key}"] = lu[key] / r[key]
            if r.get("tokens") is not None:
                ratios[f"luminal_same_tokens_as_{peer}"] = float(r["tokens"] == lu["tokens"])
    for name, v in ratios.items():
        print(f"{name} {v:.3f}")

    rss_limit = 2 * results["gguf_mb"] + results["kv_cache_mb"]
    targets = {"rss": (lu["peak_rss_mb"] <= rss_limit,
                       f"peak RSS (cached run) {lu['peak_rss_mb']:.0f} MB <= 2 x {results['gguf_mb']:.0f} MB "
                       f"GGUF + {results['kv_cache_mb']:.0f} MB KV cache = {rss_limit:.0f} MB"),
               "compile_cached": (lu["compile_cached_ms"] <= 2000,
                                  f"cached compile {lu['compile_cached_ms']:.0f} ms <= 2000 ms")}
    if eager:
        targets["tpot"] = (ratios["luminal_vs_eager_tpot_ms"] <= 0.33,
                           f"TPOT {ratios['luminal_vs_eager_tpot_ms']:.2f}x eager <= 0.33x")
        targets["ttft"] = (ratios["luminal_vs_eager_ttft_ms"] <= 0.5,
                           f"TTFT {ratios['luminal_vs_eager_ttft_ms']:.2f}x eager <= 0.5x")
    for name, (met, text) in targets.items():
        print(f"target {name}: {'met' if met else 'MISSED'} ({text})")
    results["ratios"] = ratios
    results["targets"] = {k: {"met": met, "text": text} for k, (met, text) in targets.items()}


def at_least(low):
    """An argparse type: an int >= low (a clear usage error otherwise)."""
    def parse(text):
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    parse.__name__ = "int"  # (argparse names the type in its messages)
    return parse


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu-jit")
    p.add_argument("--prompt-tokens", type=at_least(1), default=128)
    p.add_argument("--decode-tokens", type=at_least(1), default=64)
    p.add_argument("--threads", type=at_least(1), default=os.cpu_count(),
                   help="torch threads (luminal's pool uses every core)")
    p.add_argument("--repeats", type=at_least(1), default=3,
                   help="timed generations per column; the best TTFT and TPOT are reported")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--no-torch", action="store_true", help="skip both PyTorch columns")
    p.add_argument("--no-inductor", action="store_true", help="skip torch.compile")
    p.add_argument("--worker", choices=["eager", "inductor"], help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--ids", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        ids = [int(i) for i in args.ids.split(",")]
        print(json.dumps(torch_worker(args.worker, args.model, ids, args.decode_tokens,
                                      args.threads, args.repeats)))
        return 0

    import luminal as lm

    model = subprocess.run(["bash", str(REPO / "scripts" / "fetch_models.sh"), "smollm2"],
                           capture_output=True, text=True, check=True).stdout.strip()
    tok = lm.tokenizer.Tokenizer.from_gguf(model)
    # The text repeated until it has the tokens asked for (once ~46 tokens).
    text = TEXT
    while len(tok.encode(text)) < args.prompt_tokens:
        text += TEXT
    ids = tok.encode(text)[: args.prompt_tokens]
    prompt = tok.decode(ids)
    ids = tok.encode(prompt)

    results = {"model": model, "device": args.device, "prompt_tokens": len(ids),
               "decode_tokens": args.decode_tokens, "threads": args.threads,
               "gguf_mb": os.path.getsize(model) / 2**20, "kv_cache_mb": kv_cache_mb(model, context_for(args)),
               "machine": {"cpu": cpu_name(), "cores": os.cpu_count()}}
    with tempfile.TemporaryDirectory(prefix="luminal-bench-cache-") as cache:
        cold = run_luminal(model, prompt, args, cache)
        runs = [run_luminal(model, prompt, args, cache) for _ in range(max(1, args.repeats))]
    cached = dict(runs[0], ttft_ms=min(r["ttft_ms"] for r in runs),
                  tpot_ms=min(r["tpot_ms"] for r in runs),
                  compile_ms=min(r["compile_ms"] for r in runs),
                  peak_rss_mb=max(r["peak_rss_mb"] for r in runs))
    assert cached["prompt_tokens"] == len(ids), (cached["prompt_tokens"], len(ids))
    results["luminal"] = {"ttft_ms": cached["ttft_ms"], "tpot_ms": cached["tpot_ms"],
                          "compile_cold_ms": cold["compile_ms"],
                          "compile_cached_ms": cached["compile_ms"], "cached": cached["cached"],
                          # Serving memory (a run from the compile cache) and, apart,
                          # the first run's, which includes the compiler's search.
                          "peak_rss_mb": cached["peak_rss_mb"],
                          "peak_rss_cold_mb": cold["peak_rss_mb"],
                          "tokens": cached["tokens"]}
    if not args.no_torch:
        results["eager"] = run_torch("eager", model, ids, args)
        if not args.no_inductor:
            with tempfile.TemporaryDirectory(prefix="inductor-bench-cache-") as cache:
                cold = run_torch("inductor", model, ids, args, cache)
                warm = run_torch("inductor", model, ids, args, cache)
            results["inductor"] = dict(warm, compile_cold_ms=cold["compile_ms"],
                                       compile_cached_ms=warm["compile_ms"],
                                       peak_rss_mb=warm["peak_rss_mb"],
                                       peak_rss_cold_mb=cold["peak_rss_mb"])
    report(results, args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
        print(f"# wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
