"""Loops whose iterations are independent (issue 33, item 2), compiled as written: rolled into an XLA loop
(``xlac.config.vectorize_loops = "never"``, as before), vectorized (``"always"``: the body batched over all
indices), and what ``"auto"`` decides, against NumPy and the same computation written for JAX (``vmap`` of
the body, or the natural ``jnp`` form), measured in one run.

Run: python benchmarks/vectorized_loops.py [WORD ...] (only the kernels whose name holds one of the words)
Per kernel: the decision under "auto", run time per call of each, and the ratios vectorized/rolled and
auto/NumPy (goal: vectorized no slower than rolled where "auto" picks it; auto no slower than NumPy).
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
from tests.numpy_kernels import (binned_means, diagonal_tanh_sum, rows_and_a_total, syr2k_lower,  # noqa: E402
                                 upper_gram, weighted_row_sums)

jax.config.update("jax_enable_x64", True)


def upper_gram_jax(d):
    return jnp.triu(d.T @ d)


def binned_means_jax(values, labels, nbins):
    return jax.vmap(lambda b: jnp.sum(jnp.where(labels == b, values, 0.0)) / jnp.sum(labels == b))(jnp.arange(nbins))


def weighted_row_sums_jax(x, w):
    return jax.vmap(lambda row: jnp.sum(row * w))(x)


def syr2k_lower_jax(c, a, b, alpha):
    rows = jnp.arange(c.shape[0])
    return jnp.where(rows[None, :] <= rows[:, None], c + alpha * (a @ b.T + b @ a.T), c)


def row_tanh_sums(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += np.tanh(x[i]).sum()
    return acc


def row_tanh_sums_jax(x):
    return jnp.tanh(x).sum()


def diagonal_tanh_sum_jax(a):
    return jnp.tanh(jnp.diag(a)).sum()



def rows_and_a_total_jax(x):
    out = jnp.tanh(x)
    return out, out.sum()


def cases():
    rng = np.random.default_rng(0)
    out = []
    for m, n in [(20, 100), (100, 500), (200, 1000)]:
        out.append((f"upper gram {m}x{n}", upper_gram, upper_gram_jax, (rng.random((m, n)),), ()))
    for nbins, n in [(100, 2000), (100, 100_000), (400, 5000)]:
        out.append((f"binned means {nbins} bins, {n}", binned_means, binned_means_jax,
                    (rng.random(n), rng.integers(0, nbins, n), nbins), (2,)))
    for rows, cols in [(100, 16), (2000, 64), (10000, 256)]:
        out.append((f"row sums {rows}x{cols}", weighted_row_sums, weighted_row_sums_jax,
                    (rng.random((rows, cols)), rng.random(cols)), ()))
    for n in [100, 1000]:
        out.append((f"carried scalar {n}", diagonal_tanh_sum, diagonal_tanh_sum_jax, (rng.random((n, n)),), ()))
    for rows, cols in [(1000, 16), (1000, 1000)]:
        out.append((f"row tanh sums {rows}x{cols}", row_tanh_sums, row_tanh_sums_jax, (rng.random((rows, cols)),), ()))
    for rows, cols in [(1000, 16), (1000, 256)]:
        out.append((f"rows and a total {rows}x{cols}", rows_and_a_total, rows_and_a_total_jax,
                    (rng.random((rows, cols)),), ()))
    for n, k in [(200, 50)]:
        out.append((f"SYR2K lower {n}, k={k}", syr2k_lower, syr2k_lower_jax,
                    (rng.random((n, n)), rng.random((n, k)), rng.random((n, k)), 0.5), (3,)))
    return out


def compiled_with(kernel, static, args, policy: str):
    """The kernel compiled and traced under ``vectorize_loops=policy``; its decision under it."""
    before = xlac.config.vectorize_loops
    xlac.config.update("vectorize_loops", policy)
    try:
        compiled = xlac.compile(kernel, static_argnums=static)
        decision = compiled.trace(*args).loop_decisions[-1].decision
        compiled(*copies(args))
    finally:
        xlac.config.update("vectorize_loops", before)
    return compiled, decision


def leaves(result) -> list[np.ndarray]:
    """A kernel's result (an array or a tuple of them) as NumPy arrays (waiting for the device's)."""
    return [np.asarray(x) for x in result] if isinstance(result, tuple) else [np.asarray(result)]


def copies(args):           # SYR2K writes into its first argument: each call gets a copy
    return (args[0].copy(),) + args[1:]


def main() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)          # NumPy's mean of an empty bin
    print(f"{'kernel':30s} {'auto':>10s} {'rolled ms':>10s} {'vector ms':>10s} {'NumPy ms':>9s} {'jax ms':>8s} "
          f"{'vec/rolled':>10s} {'auto/NumPy':>10s} {'auto/jax':>8s}")
    words = sys.argv[1:]
    for name, kernel, kernel_jax, args, static in cases():
        if words and not any(word in name for word in words):
            continue
        rolled, _ = compiled_with(kernel, static, args, "never")
        vectorized, _ = compiled_with(kernel, static, args, "always")
        _, auto = compiled_with(kernel, static, args, "auto")
        jitted = jax.jit(kernel_jax, static_argnums=static)
        for got in (vectorized(*copies(args)), jitted(*copies(args))):
            for leaf, expected in zip(leaves(got), leaves(kernel(*copies(args)))):
                np.testing.assert_allclose(leaf, expected, rtol=1e-9)
        number = 5
        rolled_time, vectorized_time = interleaved(lambda: leaves(rolled(*copies(args))),
                                                   lambda: leaves(vectorized(*copies(args))), number, rounds=5)
        auto_time = vectorized_time if auto == "vectorized" else rolled_time
        _, numpy_time = interleaved(lambda: leaves(vectorized(*copies(args))), lambda: kernel(*copies(args)),
                                    number, rounds=3)
        _, jax_time = interleaved(lambda: leaves(vectorized(*copies(args))),
                                  lambda: leaves(jitted(*copies(args))), number, rounds=3)
        print(f"{name:30s} {auto:>10s} {rolled_time * 1e3:10.3f} {vectorized_time * 1e3:10.3f} "
              f"{numpy_time * 1e3:9.3f} {jax_time * 1e3:8.3f} {vectorized_time / rolled_time:10.2f} "
              f"{auto_time / numpy_time:10.2f} {auto_time / jax_time:8.2f}", flush=True)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s)")
