"""luminal: an ahead-of-time inference compiler.

Build a lazy graph in PyTorch's vocabulary, compile it, run it with numpy::

    import numpy as np, luminal as lm
    g = lm.Graph()
    x = g.input("x", (2, "s", 8))                 # str dims are symbolic
    w = g.input("w", (8, 4), persistent=True)     # weights stay bound across runs
    g.output("y", (x @ w).softmax(-1))
    m = g.compile(device="cpu")
    out = m.run({"x": np.ones((2, 5, 8), np.float32), "w": np.ones((8, 4), np.float32)})

Errors are raised as luminal.Error (a RuntimeError) or its subclasses
ShapeError (also ValueError), DTypeError (also TypeError), IndexError (also the
builtin IndexError) and LookupError (also ValueError).
"""

# Arrays cross into and out of luminal as numpy arrays, and nanobind imports
# numpy at the first conversion: imported here, its cost (~50 ms, and the start
# of numpy's BLAS threads, which spin for a while) is paid at `import luminal`
# instead of inside the first forward / run a user times.
import numpy as _np  # noqa: F401

from . import _luminal
from ._luminal import (  # noqa: F401
    F,
    CompiledModel,
    DTypeError,
    Error,
    Graph,
    ShapeError,
    Tensor,
    __version__,
    nn,
)
from ._luminal import IndexError, LookupError  # noqa: F401,A004  (luminal's, not the builtins)

import sys as _sys

# `import luminal.F` / `from luminal.F import gelu` work like the attribute.
_sys.modules[__name__ + ".F"] = F
_sys.modules[__name__ + ".nn"] = nn


def _export_native():
    """Re-export the torch.*-style functions the op families register on the
    extension module (lm.cat, lm.where, ...). Names that are Python builtins
    (sum, max, abs, ...) are exported as attributes but left out of __all__."""
    import builtins

    names = []
    for name in dir(_luminal):
        if name.startswith("_") or name in globals():
            continue
        globals()[name] = getattr(_luminal, name)
        if not hasattr(builtins, name):
            names.append(name)
    return names


# IndexError / LookupError are left out of __all__ too: `from luminal import *`
# must not shadow the builtins.
__all__ = ["F", "nn", "Graph", "Tensor", "CompiledModel", "Error", "ShapeError", "DTypeError",
           "__version__"] + _export_native()
