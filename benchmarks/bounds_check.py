"""The cost of checking traced indices: xlac.compile with checks (the default) against check_bounds=False,
and against jax.jit (which clamps and drops without checking), measured in one run.

Run: python benchmarks/bounds_check.py
Goal: under 5% on the transformer block. Cases:
- transformer block: no traced index, so the program is the same with and without checks;
- the block fed by an embedding lookup of 64 traced token ids into a 1000 x 128 table (a checked gather);
- a KV-cache write: one 1024-float row written at a traced position into a donated xlac.Array of N rows.
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
from benchmarks.models import make_transformer_block, transformer_params  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402


def _row(name, checked_s, unchecked_s, jax_s=None):
    jax_text = f"{jax_s * 1e6:9.1f} {checked_s / jax_s:10.2f}" if jax_s else f"{'-':>9s} {'-':>10s}"
    print(f"{name:32s} {checked_s * 1e6:10.1f} {unchecked_s * 1e6:12.1f} {checked_s / unchecked_s:8.3f} {jax_text}")


def main(number: int = 50) -> None:
    rng = np.random.default_rng(0)
    x, params = transformer_params(rng)
    block_np, block_jnp = make_transformer_block(xnp, 4), make_transformer_block(jnp, 4)
    table = rng.standard_normal((1000, x.shape[1])).astype(np.float32)
    ids = rng.integers(0, 1000, x.shape[0])
    print(f"{'case':32s} {'checked us':>10s} {'unchecked us':>12s} {'ratio':>8s} {'jax us':>9s} {'vs jax':>10s}")

    checked, unchecked = xlac.compile(block_np), xlac.compile(block_np, check_bounds=False)
    jitted = jax.jit(block_jnp)
    a, b = interleaved(lambda: checked(x, params).block_until_ready(),
                       lambda: unchecked(x, params).block_until_ready(), number)
    _, j = interleaved(lambda: checked(x, params).block_until_ready(),
                       lambda: jitted(x, params).block_until_ready(), number)
    _row("transformer block", a, b, j)

    def embedded(table, ids, params, xp):
        return make_transformer_block(xp, 4)(table[ids], params)
    checked = xlac.compile(lambda t, i, p: embedded(t, i, p, xnp))
    unchecked = xlac.compile(lambda t, i, p: embedded(t, i, p, xnp), check_bounds=False)
    jitted = jax.jit(lambda t, i, p: embedded(t, i, p, jnp))
    t_dev, i_dev = xlac.asarray(table), xlac.asarray(ids)
    a, b = interleaved(lambda: checked(t_dev, i_dev, params).block_until_ready(),
                       lambda: unchecked(t_dev, i_dev, params).block_until_ready(), number)
    _, j = interleaved(lambda: checked(t_dev, i_dev, params).block_until_ready(),
                       lambda: jitted(table, ids, params).block_until_ready(), number)
    _row("embedding (64 ids) + block", a, b, j)

    def write_row(cache, row, pos):
        cache[pos] = row
    for rows in (1024, 16384):
        row = np.ones(1024, np.float32)
        caches = [xlac.asarray(np.zeros((rows, 1024), np.float32)) for _ in range(2)]
        checked = xlac.compile(write_row)
        unchecked = xlac.compile(write_row, check_bounds=False)
        a, b = interleaved(lambda: (checked(caches[0], row, 7), caches[0].block_until_ready()),
                           lambda: (unchecked(caches[1], row, 7), caches[1].block_until_ready()), number)
        _row(f"KV-cache row write, {rows} rows", a, b)


if __name__ == "__main__":
    main()
