"""NumPy kernels whose slices depend on the loop index (dynamic extents, issue 18; windows of static length at
the loop index, issue 33: the convolution), compiled as written,
against NumPy and against the same kernel hand-written in JAX with ``where`` masks and ``fori_loop``,
measured in one run.

Run: python benchmarks/numpy_extents.py [--only NAME] [--unchecked]
``--only NAME`` runs the kernels whose name contains NAME (case-insensitive; ``--only csr``);
``--unchecked`` adds, per kernel, xlac compiled with ``check_bounds=False`` against jax in the same run.
The columns are those of ``benchmarks/numpy_loops.py``: whether xlac rolled the loop, compile time (goal
under 3 s), run time per call, ratios xlac/NumPy and xlac/jax (goal: no slower than the hand-masked JAX).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
from benchmarks.numpy_loops import _on_host, run  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
from tests.numpy_kernels import (binned_average, cholesky_rows, conv2d_valid, csr_matvec,  # noqa: E402
                                 forward_substitution, gram_schmidt, levinson_durbin, lu_without_pivoting,
                                 syr2k_lower)

jax.config.update("jax_enable_x64", True)
lax = jax.lax


# ---------------------------------------------------------------- the same, masked by hand in JAX


def forward_substitution_jax(L, b):
    positions = jnp.arange(b.shape[0])

    def step(i, x):
        done = jnp.where(positions < i, L[i] * x, 0.0).sum()
        return x.at[i].set((b[i] - done) / L[i, i])
    return lax.fori_loop(0, b.shape[0], step, jnp.zeros_like(b))


def lu_without_pivoting_jax(A):
    positions = jnp.arange(A.shape[0])

    def step(k, A):
        below = positions > k
        column = jnp.where(below, A[:, k] / A[k, k], A[:, k])
        A = A.at[:, k].set(column)
        return A - jnp.outer(jnp.where(below, column, 0.0), jnp.where(below, A[k], 0.0))
    return lax.fori_loop(0, A.shape[0] - 1, step, A)


def cholesky_rows_jax(A):
    positions = jnp.arange(A.shape[0])

    def row(i, L):
        def column(j, L):
            s = A[i, j] - jnp.where(positions < j, L[i] * L[j], 0.0).sum()
            return L.at[i, j].set(jnp.where(i == j, jnp.sqrt(s), s / L[j, j]))
        return lax.fori_loop(0, i + 1, column, L)
    return lax.fori_loop(0, A.shape[0], row, jnp.zeros_like(A))


def gram_schmidt_jax(A):
    n = A.shape[1]
    positions = jnp.arange(n)

    def step(j, state):
        Q, R = state
        before = positions < j
        Q_before = jnp.where(before[None, :], Q, 0.0)
        r = jnp.where(before, Q_before.T @ A[:, j], 0.0)
        v = A[:, j] - Q_before @ r
        norm = jnp.linalg.norm(v)
        R = R.at[:, j].set(jnp.where(before, r, R[:, j])).at[j, j].set(norm)
        return Q.at[:, j].set(v / norm), R
    return lax.fori_loop(0, n, step, (jnp.zeros_like(A), jnp.zeros((n, n))))


def syr2k_lower_jax(C, A, B, alpha):
    positions = jnp.arange(C.shape[0])

    def step(i, C):
        return C.at[i].add(jnp.where(positions <= i, alpha * (A[i] @ B.T + B[i] @ A.T), 0.0))
    return lax.fori_loop(0, C.shape[0], step, C)


def csr_matvec_jax(data, indices, indptr, x):
    positions = jnp.arange(data.shape[0])
    products = data * x[indices]

    def step(i, y):
        row = (positions >= indptr[i]) & (positions < indptr[i + 1])
        return y.at[i].set(jnp.where(row, products, 0.0).sum())
    return lax.fori_loop(0, indptr.shape[0] - 1, step, jnp.zeros(indptr.shape[0] - 1))


def binned_average_jax(radius, values, edges):
    def step(b, means):
        inside = (edges[b] <= radius) & (radius < edges[b + 1])
        return means.at[b].set(jnp.where(inside, values, 0.0).sum() / inside.sum())
    return lax.fori_loop(0, edges.shape[0] - 1, step, jnp.zeros(edges.shape[0] - 1))


def conv2d_valid_jax(img, k):
    K, (N, H, W, C), F = k.shape[0], img.shape, k.shape[3]

    def row(r, out):
        def column(c, out):
            window = lax.dynamic_slice(img, (0, r, c, 0), (N, K, K, C))
            return out.at[:, r, c, :].set(jnp.tensordot(window, k, axes=3))
        return lax.fori_loop(0, W - K + 1, column, out)
    return lax.fori_loop(0, H - K + 1, row, jnp.zeros((N, H - K + 1, W - K + 1, F)))


def levinson_durbin_jax(r):
    n = r.shape[0]
    positions = jnp.arange(n)

    def step(k, state):
        a, e = state
        mirrored = jnp.clip(k - positions, 0, n - 1)          # r[k - j] and a[k - j] at j
        lam = -jnp.where(positions < k, a * r[mirrored], 0.0).sum() / e
        a = jnp.where(positions <= k, a + lam * a[mirrored], a)
        return a, e * (1.0 - lam * lam)
    return lax.fori_loop(1, n, step, (jnp.zeros(n).at[0].set(1.0), r[0]))


def cases():
    rng = np.random.default_rng(0)
    L, b = {}, {}
    for n in (1000, 2000):
        L[n], b[n] = np.tril(rng.normal(size=(n, n))) + n * np.eye(n), rng.normal(size=n)
    a = rng.normal(size=(120, 120))
    spd = a @ a.T + 120 * np.eye(120)
    tall = rng.normal(size=(200, 100))
    c, x5, y5 = rng.normal(size=(200, 200)), rng.normal(size=(200, 50)), rng.normal(size=(200, 50))
    dense = np.where(rng.random((2000, 2000)) < 0.005, rng.normal(size=(2000, 2000)), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int64)
    indices = np.nonzero(dense)[1].astype(np.int64)
    radius, values, edges = rng.random(100_000) * 10, rng.normal(size=100_000), np.linspace(0.0, 10.0, 101)
    return [
        ("forward substitution 1000", forward_substitution, forward_substitution_jax, (L[1000], b[1000]), ()),
        ("forward substitution 2000", forward_substitution, forward_substitution_jax, (L[2000], b[2000]), ()),
        ("LU without pivoting 120", lu_without_pivoting, lu_without_pivoting_jax, (spd,), ()),
        ("row-wise Cholesky 120", cholesky_rows, cholesky_rows_jax, (spd,), ()),
        ("Gram-Schmidt 200x100", gram_schmidt, gram_schmidt_jax, (tall,), ()),
        ("SYR2K lower 200, k=50", syr2k_lower, syr2k_lower_jax, (c, x5, y5, 0.5), ()),
        ("CSR matvec 2000, 0.5%", csr_matvec, csr_matvec_jax, (dense[dense != 0], indices, indptr, rng.normal(size=2000)),
         ()),
        ("binned average 100k, 100 bins", binned_average, binned_average_jax, (radius, values, edges), ()),
        ("conv (4,32,32,3) * (3,3,3,8)", conv2d_valid, conv2d_valid_jax,
         (rng.normal(size=(4, 32, 32, 3)), rng.normal(size=(3, 3, 3, 8))), ()),
        ("Levinson-Durbin 1000", levinson_durbin, levinson_durbin_jax, (np.exp(-0.01 * np.arange(1000.0)),), ()),
    ]


def run_unchecked(cases: list) -> None:
    """Per case: run time of xlac with ``check_bounds=False`` against the hand-masked jax, one line each."""
    print(f"{'kernel, check_bounds=False':32s} {'run xlac ms':>11s} {'jax ms':>8s} {'xlac/jax':>8s}")
    for name, kernel, kernel_jax, args, static in cases:
        compiled = xlac.compile(kernel, static_argnums=static, check_bounds=False)
        jitted = jax.jit(kernel_jax, static_argnums=static)

        def copies():
            return (args[0].copy(),) + args[1:]
        compiled(*copies())
        jitted(*copies())
        xlac_time, jax_time = interleaved(lambda: _on_host(compiled(*copies())),
                                          lambda: _on_host(jitted(*copies())), number=3, rounds=3)
        print(f"{name:32s} {xlac_time * 1e3:11.3f} {jax_time * 1e3:8.3f} {xlac_time / jax_time:8.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the kernels whose name contains this")
    parser.add_argument("--unchecked", action="store_true", help="also time xlac with check_bounds=False")
    options = parser.parse_args()
    selected = [case for case in cases() if options.only.lower() in case[0].lower()]
    run(selected)
    if options.unchecked:
        run_unchecked(selected)
