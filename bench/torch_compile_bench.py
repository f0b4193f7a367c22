"""The same HF Llama (random config) through eager, torch.compile(inductor) and
torch.compile(backend="luminal"): TTFT (one forward over the prompt), TPOT (greedy decode
with a StaticCache, one token per call), compile time (first call minus a warm call).

    PYTHONPATH=build-<you>/python python3 bench/torch_compile_bench.py [--out bench_torch.json]
        [--layers 4 --hidden 256 --prompt 32 --decode 16 --device cpu-jit]

Prints `name value` lines (ratios are luminal / peer, lower is better for times) and writes
JSON. A command, not a test.
"""

import argparse
import json
import platform
import time

import torch
import transformers as T  # noqa: N812

import luminal.torch as lt


def build(args):
    torch.manual_seed(0)
    heads = max(1, args.hidden // 64)
    cfg = T.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                        intermediate_size=args.hidden * 3, num_hidden_layers=args.layers,
                        num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                        max_position_embeddings=args.prompt + args.decode + 8)
    return cfg, T.LlamaForCausalLM(cfg).eval()


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def measure(name, model, cfg, args, backend=None, options=None):
    torch._dynamo.reset()
    lt.reset_counters()
    gen = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, args.vocab, (1, args.prompt), generator=gen)
    res = {}
    with torch.no_grad():
        prefill = model if backend is None else torch.compile(
            model, backend=backend, dynamic=False, options=options)
        run = lambda: prefill(input_ids=prompt, use_cache=False).logits  # noqa: E731
        _, first = timed(run)
        times = [timed(run)[1] for _ in range(args.reps)]
        res["ttft_ms"] = min(times) * 1e3
        res["prefill_compile_s"] = max(0.0, first - min(times))

        cache = T.StaticCache(config=cfg, max_cache_len=args.prompt + args.decode + 4)
        logits = model(input_ids=prompt, past_key_values=cache,
                       cache_position=torch.arange(args.prompt), use_cache=True).logits
        step = model if backend is None else torch.compile(model, backend=backend,
                                                           options=options)
        tok = logits[:, -1:].argmax(-1)
        tokens, step_times = [], []
        for i in range(args.decode):
            pos = torch.tensor([args.prompt + i])
            out, dt = timed(lambda: step(input_ids=tok, past_key_values=cache, cache_position=pos,
                                         use_cache=True).logits)
            step_times.append(dt)
            tok = out[:, -1:].argmax(-1)
            tokens.append(int(tok))
        res["decode_compile_s"] = max(0.0, step_times[0] - min(step_times[1:]))
        steady = sorted(step_times[1:])
        res["tpot_ms"] = steady[len(steady) // 2] * 1e3
        res["tokens"] = tokens
    if backend == "luminal":
        res["luminal_compiles"] = lt.counters["compiles"]
    print(f"# {name}: {json.dumps({k: v for k, v in res.items() if k != 'tokens'})}",
          flush=True)
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--prompt", type=int, default=32)
    p.add_argument("--decode", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--device", default="cpu-jit", help="luminal device (cpu | cpu-jit)")
    p.add_argument("--search-iters", type=int, default=16,
                   help="luminal search budget (the default of Graph.compile)")
    p.add_argument("--no-inductor", action="store_true")
    p.add_argument("--out", default="bench_torch.json")
    args = p.parse_args()

    cfg, model = build(args)
    results = {"eager": measure("eager", model, cfg, args)}
    if not args.no_inductor:
        results["inductor"] = measure("inductor", model, cfg, args, backend="inductor")
    results["luminal"] = measure("luminal", model, cfg, args, backend="luminal",
                                 options={"device": args.device, "search_iters": args.search_iters})
    lum = results["luminal"]
    lines = {}
    for peer in [k for k in results if k != "luminal"]:
        for metric in ("ttft_ms", "tpot_ms"):
            lines[f"luminal_vs_{peer}_{metric}"] = lum[metric] / results[peer][metric]
    lines["luminal_same_tokens_as_eager"] = float(lum["tokens"] == results["eager"]["tokens"])
    for k, v in lines.items():
        print(f"{k} {v:.3f}")
    meta = {"machine": platform.machine(), "cpu": platform.processor(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "config": vars(args)}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "results": results, "ratios": lines}, f, indent=2)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
