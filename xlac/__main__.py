"""``python -m xlac``: compile a small model, run it, print its result and its StableHLO.

With arguments, the command line of :mod:`xlac.cli`: ``python -m xlac dump|explain FILE.py:FUNCTION ...``.
"""
from __future__ import annotations

import numpy as np

import xlac
import xlac.numpy as xnp


def make_mlp(xp):
    """A 2-layer MLP with a tanh-approximated GELU, written against the array namespace ``xp``."""
    def mlp(x, w1, b1, w2, b2):
        h = x @ w1 + b1
        h = 0.5 * h * (1.0 + xp.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
        return xp.mean(h @ w2 + b2, axis=-1)
    return mlp


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 16), dtype=np.float32)
    w1 = rng.standard_normal((16, 32), dtype=np.float32) / 4
    b1 = np.zeros(32, np.float32)
    w2 = rng.standard_normal((32, 8), dtype=np.float32) / 6
    b2 = np.zeros(8, np.float32)

    compiled = xlac.compile(make_mlp(xnp))
    out = compiled(x, w1, b1, w2, b2)
    expected = make_mlp(np)(x, w1, b1, w2, b2)
    print("xlac result: ", np.asarray(out))
    print("NumPy result:", expected)
    print("device:      ", out.device)
    print("\nIR as traced:")
    print(compiled.trace(x, w1, b1, w2, b2))
    print("\nStableHLO:")
    print(compiled.lower(x, w1, b1, w2, b2).as_text())


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        from xlac.cli import main as cli_main
        sys.exit(cli_main(sys.argv[1:]))
    main()
