"""Cost of one eager operation on small arrays: xlac.Array against jax.numpy on jax Arrays, in one run.

Run: python benchmarks/eager.py
Prints microseconds per call and the ratio xlac / jax for `a + b` (the issue's goal: no slower, ratio
<= 1.0) and for a few other eager calls (a ufunc through NumPy's protocol, a reduction, a matmul).
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
from benchmarks.timing import interleaved  # noqa: E402


def cases(a, b, aj, bj):
    """(label, xlac call, jax call) pairs on the same data."""
    return [
        ("a + b", lambda: a + b, lambda: aj + bj),
        ("xnp.add(a, b) / jnp.add", lambda: xnp.add(a, b), lambda: jnp.add(aj, bj)),
        ("np.exp(a) via __array_ufunc__ / jnp.exp", lambda: np.exp(a), lambda: jnp.exp(aj)),
        ("a.sum(axis=0)", lambda: a.sum(axis=0), lambda: aj.sum(axis=0)),
        ("a @ b", lambda: a @ b, lambda: aj @ bj),
    ]


def main(number: int = 2000) -> None:
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((8, 8)).astype(np.float32)
    b_np = rng.standard_normal((8, 8)).astype(np.float32)
    a, b = xlac.asarray(a_np), xlac.asarray(b_np)
    aj, bj = jax.device_put(a_np), jax.device_put(b_np)
    print(f"eager ops on f32[8,8], {jax.devices()[0].platform}, jax {jax.__version__}; best of 7 rounds of {number}")
    print(f"{'operation':42s} {'xlac us':>8s} {'jax us':>8s} {'xlac/jax':>9s}")
    for label, xlac_call, jax_call in cases(a, b, aj, bj):
        np.testing.assert_allclose(np.asarray(xlac_call()), np.asarray(jax_call()), rtol=1e-5, atol=1e-6)
        t_xlac, t_jax = interleaved(lambda: xlac_call().block_until_ready(),
                                    lambda: jax_call().block_until_ready(), number)
        print(f"{label:42s} {t_xlac * 1e6:8.1f} {t_jax * 1e6:8.1f} {t_xlac / t_jax:9.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
