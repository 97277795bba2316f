"""NumPy kernels with Python loops, compiled as written, against NumPy and against the same kernel
hand-written with ``jax.lax.fori_loop`` / ``while_loop``, measured in one run.

Run: python benchmarks/numpy_loops.py
Per kernel: how xlac ran its loops (the decisions of ``Traced.loop_decisions``: vectorized, rolled,
unrolled), compile time (trace to executable; goal under 2 s, flat in the trip count) for xlac and jax, and run time per call with ratios xlac/NumPy and
xlac/jax (goal: no slower than the hand-written JAX).
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
from benchmarks.timing import interleaved  # noqa: E402
from tests.numpy_kernels import (checksum, diagonal_tanh_sum, floyd_warshall, greedy_decode,  # noqa: E402
                                 heat_1d, jacobi_2d, newton_roots)

jax.config.update("jax_enable_x64", True)        # the kernels are float64 and int64, as NumPy's


# ---------------------------------------------------------------- the same, hand-written with jax.lax


def heat_1d_jax(u, steps):
    def step(_, u):
        return u.at[1:-1].set(u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2]))
    return jax.lax.fori_loop(0, steps, step, u)


def jacobi_2d_jax(g, steps):
    def step(_, g):
        return g.at[1:-1, 1:-1].set(0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]))
    return jax.lax.fori_loop(0, steps, step, g)


def floyd_warshall_jax(d):
    def step(k, d):
        return jnp.minimum(d, d[:, k][:, None] + d[k, :][None, :])
    return jax.lax.fori_loop(0, d.shape[0], step, d)


def diagonal_tanh_sum_jax(a):
    return jax.lax.fori_loop(0, a.shape[0], lambda i, acc: acc + jnp.tanh(a[i, i]), 0.0)


def checksum_jax(data):
    def step(i, h):
        v = data[i]
        return jnp.where(v & 1, (h * 31 + v) & 0xFFFF, h ^ v)
    return jax.lax.fori_loop(0, data.shape[0], step, jnp.int64(7))


def newton_roots_jax(c):
    def more(x):
        return jnp.max(jnp.abs(x * x * x - c)) > 1e-12

    def step(x):
        return x - (x * x * x - c) / (3 * x * x)
    return jax.lax.while_loop(more, step, jnp.ones_like(c))


def greedy_decode_jax(embed, w_out, h, steps, eos):
    def more(state):
        t, _, _, _, done = state
        return (t < steps) & ~done

    def step(state):
        t, h, token, tokens, _ = state
        h = jnp.tanh(h + embed[token])
        token = jnp.argmax(h @ w_out)
        return t + 1, h, token, tokens.at[t].set(token), token == eos
    return jax.lax.while_loop(more, step, (0, h, 0, jnp.full(steps, -1), False))[3]


def cases():
    rng = np.random.default_rng(0)
    u = np.sin(np.linspace(0.0, np.pi, 256))
    g = rng.random((128, 128))
    d = rng.random((128, 128)) * 10
    a = rng.normal(size=(1000, 1000))
    data = rng.integers(0, 1 << 16, size=20000)
    c = rng.random(1000) * 100 + 1
    embed, w_out, h = rng.normal(size=(512, 64)) * 0.5, rng.normal(size=(64, 512)), np.zeros(64)
    return [
        ("heat 1-D, 100 steps", heat_1d, heat_1d_jax, (u, 100), (1,)),
        ("heat 1-D, 20000 steps", heat_1d, heat_1d_jax, (u, 20000), (1,)),
        ("Jacobi 2-D 128^2, 500 steps", jacobi_2d, jacobi_2d_jax, (g, 500), (1,)),
        ("Floyd-Warshall 128", floyd_warshall, floyd_warshall_jax, (d,), ()),
        ("carried scalar, 1000", diagonal_tanh_sum, diagonal_tanh_sum_jax, (a,), ()),
        ("checksum with branches, 20000", checksum, checksum_jax, (data,), ()),
        ("Newton until converged", newton_roots, newton_roots_jax, (c,), ()),
        ("greedy decode 200 (break)", greedy_decode, greedy_decode_jax, (embed, w_out, h, 200, -1), (3, 4)),
    ]


def main() -> None:
    run(cases())


def _on_host(result):
    return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)


def run(cases: list) -> None:
    """Per case ``(name, kernel, kernel_jax, args, static_argnums)``: one line of the table."""
    print(f"{'kernel':32s} {'loops':>10s} {'compile xlac s':>14s} {'jax s':>7s} {'run xlac ms':>11s} "
          f"{'NumPy ms':>9s} {'jax ms':>8s} {'xlac/NumPy':>10s} {'xlac/jax':>8s}")
    for name, kernel, kernel_jax, args, static in cases:
        compiled = xlac.compile(kernel, static_argnums=static)
        start = time.perf_counter()
        traced = compiled.trace(*args)
        traced.lower().compile()
        xlac_compile = time.perf_counter() - start
        ran = "/".join(sorted({d.decision for d in traced.loop_decisions})) or "none"
        jitted = jax.jit(kernel_jax, static_argnums=static)
        start = time.perf_counter()
        jitted.lower(*args).compile()
        jax_compile = time.perf_counter() - start

        def copies():           # some kernels write into their first argument: each call (all three peers) gets a copy
            return (args[0].copy(),) + args[1:]
        compiled(*copies())
        run_xlac = lambda: _on_host(compiled(*copies()))  # noqa: E731
        run_numpy = lambda: kernel(*copies())  # noqa: E731
        run_jax = lambda: _on_host(jitted(*copies()))  # noqa: E731
        number = 3
        xlac_time, numpy_time = interleaved(run_xlac, run_numpy, number=number, rounds=3)
        _, jax_time = interleaved(run_xlac, run_jax, number=number, rounds=3)
        print(f"{name:32s} {ran:>10s} {xlac_compile:14.3f} {jax_compile:7.3f} "
              f"{xlac_time * 1e3:11.3f} {numpy_time * 1e3:9.3f} {jax_time * 1e3:8.3f} "
              f"{xlac_time / numpy_time:10.2f} {xlac_time / jax_time:8.2f}")


if __name__ == "__main__":
    main()
