"""The `luminal` command-line program.

Python subcommands are registered in _SUBCOMMANDS: each is (name, help,
add_arguments, run). generate / embed / info are implemented in C++
(luminal::cli::run, shared with the C++ `luminal` program): their arguments are
forwarded unparsed, so both programs behave exactly alike.
"""

import argparse
import sys


def _demo_arguments(p):
    p.add_argument("--seq", type=int, nargs="+", default=[5, 9],
                   help="values of the symbolic dim s to run with (default: 5 9)")


def _demo(args):
    import numpy as np

    import luminal as lm

    g = lm.Graph()
    x = g.input("x", (2, "s", 8), dtype="float32")
    w = g.input("w", (8, 4), dtype="float32", persistent=True)
    y = (x @ w).softmax(-1)
    z = lm.F.gelu(y)
    g.output("y", y)
    g.output("z", z)
    print(g)
    m = g.compile(device="cpu")
    rng = np.random.default_rng(0)
    feeds = {"w": rng.standard_normal((8, 4)).astype(np.float32)}
    for s in args.seq:
        feeds["x"] = rng.standard_normal((2, s, 8)).astype(np.float32)
        out = m.run(feeds)
        feeds = {}  # "w" is persistent: bound once
        sums = np.array2string(out["y"].sum(-1)[0, :3], precision=5)
        z00 = np.array2string(out["z"][0, 0], precision=4)
        print(f"s={s}: y{out['y'].shape} row sums {sums}, z{out['z'].shape} z[0, 0] = {z00}")
    print(f"stats: {m.stats}")
    return 0


_SUBCOMMANDS = [
    ("demo", "build, compile and run the quick-start graph", _demo_arguments, _demo),
]


# Implemented by luminal::cli::run (src/cli/cli.cpp); listed here for --help.
_NATIVE = [
    ("generate", "generate text with a Llama-family model (GGUF or HF dir, or smollm2)"),
    ("embed", "sentence embeddings with a BERT encoder (HF dir, or minilm) as JSON"),
    ("info", "describe a model file: format, tensors, architecture, tokenizer"),
]


def _native(argv):
    from luminal import _luminal

    sys.stdout.flush()
    sys.stderr.flush()
    return _luminal.models.cli_run(["luminal", *argv])


def build_parser():
    from luminal import __version__

    parser = argparse.ArgumentParser(
        prog="luminal", description="luminal: an ahead-of-time inference compiler")
    parser.add_argument("--version", action="version", version=f"luminal {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in _NATIVE:
        sub.add_parser(name, help=help_text + f" (luminal {name} --help)", add_help=False)
    for name, help_text, add_arguments, run in _SUBCOMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(p)
        p.set_defaults(func=run)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in {name for name, _ in _NATIVE}:
        return _native(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except Exception as e:  # noqa: BLE001  (a CLI reports errors, it does not trace back)
        import luminal as lm

        if isinstance(e, lm.Error):
            print(f"luminal: error: {e}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
