"""Linear algebra: `xlac.compile` of NumPy's `np.linalg` functions against `jax.jit` of `jax.numpy.linalg`
and NumPy itself, float64, in one run (issue 19's table: cholesky, solve, eigh at n = 200 and 800, plus
inv, det, slogdet, svd and qr). Arguments are on the device for xlac and jax; each xlac result is checked
against NumPy's first (singular vectors, eigenvectors and Q, R up to sign).

    python benchmarks/linalg.py [--sizes 200 800] [--cases svd qr]
"""
from __future__ import annotations

import argparse
import functools
import timeit

import jax
import jax.numpy as jnp
import numpy as np

import xlac
from timing import interleaved

jax.config.update("jax_enable_x64", True)


def _spd(n: int, rng) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


CASES = {                       # name: (function of a linalg module and the arguments, arguments from (n, rng))
    "cholesky": (lambda la, a: la.cholesky(a), lambda n, rng: (_spd(n, rng),)),
    "solve": (lambda la, a, b: la.solve(a, b), lambda n, rng: (rng.standard_normal((n, n)),
                                                               rng.standard_normal((n, 4)))),
    "inv": (lambda la, a: la.inv(a), lambda n, rng: (rng.standard_normal((n, n)),)),
    "det": (lambda la, a: la.det(a), lambda n, rng: (rng.standard_normal((n, n)) / np.sqrt(n),)),
    "slogdet": (lambda la, a: tuple(la.slogdet(a)), lambda n, rng: (rng.standard_normal((n, n)),)),
    "eigh": (lambda la, a: tuple(la.eigh(a)), lambda n, rng: (_spd(n, rng),)),
    "svd": (lambda la, a: tuple(la.svd(a)), lambda n, rng: (rng.standard_normal((n, n)),)),
    "qr": (lambda la, a: tuple(la.qr(a)), lambda n, rng: (rng.standard_normal((n, n)),)),
}
UP_TO_SIGN = ("eigh", "svd", "qr")            # their matrices' columns (rows) are unique up to sign


def _check(name, got, want, n):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g = np.asarray(g)
        if name in UP_TO_SIGN and g.ndim == 2:
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=1e-6 * n, atol=1e-6 * n * np.abs(w).max())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 800])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':<10} {'n':>5} {'xlac ms':>9} {'jax ms':>9} {'numpy ms':>9} {'xlac/jax':>9} {'xlac/numpy':>10}")
    for n in args.sizes:
        for name in args.cases:
            fn, make = CASES[name]
            host = make(n, rng)
            compiled = xlac.compile(functools.partial(fn, np.linalg))
            jitted = jax.jit(functools.partial(fn, jnp.linalg))
            on_xlac = [xlac.asarray(x) for x in host]
            on_jax = [jax.device_put(x) for x in host]
            want = fn(np.linalg, *host)
            _check(name, compiled(*on_xlac), want, n)
            number = max(1, int(0.05 / max(1e-6, timeit.timeit(lambda: fn(np.linalg, *host), number=1))))
            t_xlac, t_jax = interleaved(lambda: jax.block_until_ready(compiled(*on_xlac)),
                                        lambda: jax.block_until_ready(jitted(*on_jax)), number, args.rounds)
            t_numpy = min(timeit.repeat(lambda: fn(np.linalg, *host), number=number, repeat=3)) / number
            print(f"{name:<10} {n:>5} {t_xlac * 1e3:>9.2f} {t_jax * 1e3:>9.2f} {t_numpy * 1e3:>9.2f} "
                  f"{t_xlac / t_jax:>9.2f} {t_xlac / t_numpy:>10.2f}")


if __name__ == "__main__":
    main()
