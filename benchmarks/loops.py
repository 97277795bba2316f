"""Loops: xlac.fori_loop against jax.lax.fori_loop, measured in one run.

Run: python benchmarks/loops.py [--rows 1024,16384,65536] [--only compile,decode,jacobi,rnn]
Cases:
- compile time (trace, passes, lowering and XLA) of a loop of 50 and of 5,000 iterations, against the
  same loop unrolled in Python (for contrast: the program grows with the trip count);
- a decode-like loop: one 1024-float32 row written per iteration, from inside the body, into an N-row
  argument (xlac: the written argument becomes a loop carry and its buffer is donated; jax: donate_argnums
  and ``.at[i].set`` on a carry); time per iteration, which should not grow with N; with and without
  bounds checks;
- a 1,000-step Jacobi stencil on a 128 x 128 grid written with in-place slice assignment (jax: ``.at[].set``);
- ``scan`` of a small RNN (hidden 128, 64 steps, batch 16): forward, and forward + backward (grad), the
  latter also with ``checkpoint=True`` (iterations evaluated again in the backward pass).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402

STEPS = 64          # rows written per call of the decode-like loop
WIDTH = 1024


def compile_seconds(make, *args) -> float:
    start = time.perf_counter()
    make().lower(*args).compile()
    return time.perf_counter() - start


def compile_times() -> None:
    print("compile (trace + passes + lowering + XLA), seconds")
    x = np.ones(256, np.float32)

    def rolled(n):
        return lambda: xlac.compile(lambda v: xlac.fori_loop(0, n, lambda i, a: a * 0.999 + 1.0, v))

    def rolled_jax(n):
        return lambda: jax.jit(lambda v: jax.lax.fori_loop(0, n, lambda i, a: a * 0.999 + 1.0, v))

    def unrolled(n):
        def f(v):
            for _ in range(n):
                v = v * 0.999 + 1.0
            return v
        return lambda: xlac.compile(f)
    for n in (50, 5000):
        xs, js = compile_seconds(rolled(n), x), compile_seconds(rolled_jax(n), x)
        print(f"  fori_loop, {n:5d} iterations: xlac {xs:6.3f}  jax {js:6.3f}  ratio {xs / js:5.2f}")
    for n in (50, 200, 800):
        print(f"  unrolled,  {n:5d} iterations: xlac {compile_seconds(unrolled(n), x):6.3f}")


def decode(rows_list, check_bounds: bool) -> None:
    print(f"decode-like loop: {STEPS} rows of {WIDTH} float32 written per call, microseconds per iteration, "
          f"check_bounds={check_bounds}")

    @xlac.compile(check_bounds=check_bounds)
    def write_rows(cache, new_rows, start):
        def body(i, unused):
            cache[start + i] = new_rows[i]          # written in place: the loop carries the argument
            return unused
        xlac.fori_loop(0, STEPS, body, 0)

    def jax_rows(cache, new_rows, start):
        return jax.lax.fori_loop(0, STEPS, lambda i, c: c.at[start + i].set(new_rows[i]), cache)
    jax_write = jax.jit(jax_rows, donate_argnums=0)
    new_rows = np.random.default_rng(0).standard_normal((STEPS, WIDTH)).astype(np.float32)
    per_iteration = {}
    for n in rows_list:
        cache = xlac.asarray(np.zeros((n, WIDTH), np.float32))
        state = {"jax": jnp.zeros((n, WIDTH), jnp.float32)}
        rows_x, rows_j = xlac.asarray(new_rows), jnp.asarray(new_rows)

        def run_xlac():
            write_rows(cache, rows_x, 0)
            cache.block_until_ready()

        def run_jax():
            state["jax"] = jax_write(state["jax"], rows_j, 0)
            state["jax"].block_until_ready()
        xs, js = interleaved(run_xlac, run_jax, number=20)
        per_iteration[n] = xs / STEPS
        np.testing.assert_array_equal(np.asarray(cache)[:STEPS], np.asarray(state["jax"])[:STEPS])
        print(f"  {n:6d} rows: xlac {xs / STEPS * 1e6:8.2f}  jax {js / STEPS * 1e6:8.2f}  ratio {xs / js:5.2f}")
    first, last = rows_list[0], rows_list[-1]
    print(f"  xlac per iteration, {last} rows / {first} rows: {per_iteration[last] / per_iteration[first]:.2f}")


def jacobi() -> None:
    print("Jacobi stencil, 1000 steps on 128 x 128, milliseconds per call")

    def step(i, u):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return u

    def jax_step(i, u):
        return u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))
    grid = np.zeros((128, 128), np.float32)
    grid[0, :] = 1.0
    f = xlac.compile(lambda u: xlac.fori_loop(0, 1000, step, u))
    g = jax.jit(lambda u: jax.lax.fori_loop(0, 1000, jax_step, u))
    grid_x, grid_j = xlac.asarray(grid), jnp.asarray(grid)
    np.testing.assert_allclose(np.asarray(f(grid_x)), np.asarray(g(grid_j)), rtol=1e-5, atol=1e-6)
    xs, js = interleaved(lambda: f(grid_x).block_until_ready(), lambda: g(grid_j).block_until_ready(), number=3)
    print(f"  xlac {xs * 1e3:8.2f}  jax {js * 1e3:8.2f}  ratio {xs / js:5.2f}")


def rnn() -> None:
    print("scan of an RNN (hidden 128, 64 steps, batch 16), milliseconds per call")
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((128, 128)) / 12).astype(np.float32)
    xs = rng.standard_normal((64, 16, 128)).astype(np.float32)
    h0 = np.zeros((16, 128), np.float32)

    def loss(w, xs, h0, tanh, scan, **options):
        h, hs = scan(lambda h, x: (tanh(h @ w + x), h), h0, xs, **options)
        return (h * h).sum() + hs.sum()
    forward = xlac.compile(lambda w, xs, h0: loss(w, xs, h0, xnp.tanh, xlac.scan))
    forward_jax = jax.jit(lambda w, xs, h0: loss(w, xs, h0, jnp.tanh, jax.lax.scan))
    backward = xlac.compile(xlac.grad(lambda w, xs, h0: loss(w, xs, h0, xnp.tanh, xlac.scan)))
    backward_jax = jax.jit(jax.grad(lambda w, xs, h0: loss(w, xs, h0, jnp.tanh, jax.lax.scan)))
    checkpointed = xlac.compile(xlac.grad(lambda w, xs, h0: loss(w, xs, h0, xnp.tanh, xlac.scan, checkpoint=True)))
    checkpointed_jax = jax.jit(jax.grad(lambda w, xs, h0: loss(
        w, xs, h0, jnp.tanh, lambda f, *a: jax.lax.scan(jax.checkpoint(f), *a))))
    args = (xlac.asarray(w), xlac.asarray(xs), xlac.asarray(h0))
    args_jax = (jnp.asarray(w), jnp.asarray(xs), jnp.asarray(h0))
    for mine in (backward, checkpointed):
        np.testing.assert_allclose(np.asarray(mine(*args)), np.asarray(backward_jax(*args_jax)), rtol=2e-3, atol=2e-3)
    for name, mine, theirs in (("forward", forward, forward_jax), ("forward + backward", backward, backward_jax),
                               ("checkpointed f + b", checkpointed, checkpointed_jax)):
        xs_, js = interleaved(lambda: mine(*args).block_until_ready(), lambda: theirs(*args_jax).block_until_ready(),
                              number=10)
        print(f"  {name:20s} xlac {xs_ * 1e3:8.3f}  jax {js * 1e3:8.3f}  ratio {xs_ / js:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="1024,16384,65536")
    parser.add_argument("--only", default="compile,decode,jacobi,rnn")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if "compile" in only:
        compile_times()
    for check_bounds in (False, True) if "decode" in only else ():
        decode([int(n) for n in args.rows.split(",")], check_bounds)
    if "jacobi" in only:
        jacobi()
    if "rnn" in only:
        rnn()


if __name__ == "__main__":
    main()
