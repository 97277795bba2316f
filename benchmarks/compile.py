"""Front-end compile time: xlac's trace + passes + lowering against JAX's trace + lower, in one run.

Run: python benchmarks/compile.py
XLA's own compile time (the same backend for both) is shown apart.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.models import make_mlp, make_transformer_block, mlp_params, transformer_params  # noqa: E402


def best_ms(fn, repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    cases = [
        ("mlp", make_mlp(xnp), make_mlp(jnp), mlp_params(rng)),
        ("transformer block", make_transformer_block(xnp, 4), make_transformer_block(jnp, 4),
         transformer_params(rng)),
    ]
    print(f"{'model':18s} {'xlac front ms':>14s} {'jax front ms':>13s} {'ratio':>6s} "
          f"{'xlac XLA ms':>12s} {'jax XLA ms':>11s}")
    for name, xlac_fn, jax_fn, args in cases:
        # A fresh function object each time, so that neither JAX's trace/lowering caches nor xlac's apply.
        def xlac_front():
            return xlac.compile(lambda *a: xlac_fn(*a)).lower(*args)

        def jax_front():
            return jax.jit(lambda *a: jax_fn(*a)).trace(*args).lower()
        t_xlac = best_ms(xlac_front)
        t_jax = best_ms(jax_front)
        xla_xlac = best_ms(lambda: xlac_front().compile(), repeat=3) - t_xlac
        xla_jax = best_ms(lambda: jax_front().compile(), repeat=3) - t_jax
        print(f"{name:18s} {t_xlac:14.2f} {t_jax:13.2f} {t_xlac / t_jax:6.2f} {xla_xlac:12.1f} {xla_jax:11.1f}")


if __name__ == "__main__":
    main()
