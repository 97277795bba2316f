"""Run time of the compiled MLP and transformer block: xlac against jax.jit of the same math, in one run.

Run: python benchmarks/runtime.py
The goal is a ratio of 1.0: the same HLO quality.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.models import make_mlp, make_transformer_block, mlp_params, transformer_params  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402


def main(number: int = 50) -> None:
    rng = np.random.default_rng(0)
    cases = [
        ("mlp", make_mlp(xnp), make_mlp(jnp), mlp_params(rng)),
        ("transformer block", make_transformer_block(xnp, 4), make_transformer_block(jnp, 4),
         transformer_params(rng)),
    ]
    print(f"{'model':18s} {'xlac ms':>9s} {'jax.jit ms':>11s} {'ratio':>6s}")
    for name, xlac_fn, jax_fn, args in cases:
        compiled = xlac.compile(xlac_fn)
        jitted = jax.jit(jax_fn)
        xlac_args = jax.tree_util.tree_map(xlac.asarray, args)
        jax_args = jax.tree_util.tree_map(jax.device_put, args)
        np.testing.assert_allclose(np.asarray(compiled(*xlac_args)), np.asarray(jitted(*jax_args)),
                                   rtol=1e-3, atol=1e-3)
        t_xlac, t_jax = (1e3 * t for t in interleaved(lambda: compiled(*xlac_args).block_until_ready(),
                                                      lambda: jitted(*jax_args).block_until_ready(), number))
        print(f"{name:18s} {t_xlac:9.3f} {t_jax:11.3f} {t_xlac / t_jax:6.2f}")


if __name__ == "__main__":
    main()
