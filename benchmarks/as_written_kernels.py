"""The kernels of issue 33's benchmark that ``benchmarks/numpy_loops.py`` and ``numpy_extents.py`` do not
hold: each written once in plain NumPy as a scientist writes it (loops, fixed windows, shrinking slices,
masks, scalar bit loops, stencil time loops, a decode step, independent rows), and the same algorithm
written by hand in ``jax.lax`` (the ``_jax`` twin), which ``benchmarks/as_written.py`` runs against it.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tests.numpy_kernels import conv2d_valid as conv, crc16_arc, upper_gram as gram_upper  # noqa: F401 (shared with the tests)

lax = jax.lax


# ---------------------------------------------------------------- fixed-size windows at traced offsets


def conv_jax(img, k):
    K = k.shape[0]
    n, rows, cols, f = img.shape[0], img.shape[1] - K + 1, img.shape[2] - K + 1, k.shape[3]

    def row(r, out):
        def column(c, out):
            window = lax.dynamic_slice(img, (0, r, c, 0), (n, K, K, img.shape[3]))
            return lax.dynamic_update_slice(out, jnp.tensordot(window, k, axes=3)[:, None, None, :], (0, r, c, 0))
        return lax.fori_loop(0, cols, column, out)
    return lax.fori_loop(0, rows, row, jnp.zeros((n, rows, cols, f)))


# ---------------------------------------------------------------- scalar bit loops and recurrences


def crc16_arc_jax(data, poly=0xA001):
    def byte(crc, b):
        def bit(_, state):
            crc, cur = state
            crc = jnp.where((crc & 1) ^ (cur & 1), (crc >> 1) ^ poly, crc >> 1)
            return crc, cur >> 1
        crc, _ = lax.fori_loop(0, 8, bit, (crc, b.astype(crc.dtype) & 0xFF))
        return crc, None
    return lax.scan(byte, jnp.int64(0), data)[0]


def exponential_smoothing(x, alpha):
    """An exponential moving average: one scalar recurrence over a time series."""
    y = np.empty_like(x)
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = alpha * x[t] + (1 - alpha) * y[t - 1]
    return y


def exponential_smoothing_jax(x, alpha):
    def step(previous, value):
        current = alpha * value + (1 - alpha) * previous
        return current, current
    return jnp.concatenate([x[:1], lax.scan(step, x[0], x[1:])[1]])


# ---------------------------------------------------------------- shrinking slices


def levinson_durbin(r):
    """The Levinson-Durbin recursion: the order ``len(r) - 1`` prediction coefficients of the
    autocorrelation ``r`` and the final prediction error (issue 33, cause 4: ``np.flip(r[:k])``)."""
    order = r.shape[0] - 1
    a = np.zeros(order + 1)
    a[0] = 1.0
    e = r[0]
    for k in range(1, order + 1):
        lam = -np.dot(a[:k], np.flip(r[1:k + 1])) / e
        a[:k + 1] = a[:k + 1] + lam * np.flip(a[:k + 1])
        e *= 1.0 - lam * lam
    return a, e


def levinson_durbin_jax(r):
    order = r.shape[0] - 1
    positions = jnp.arange(order + 1)

    def step(k, state):
        a, e = state
        lam = -jnp.where(positions < k, a * r[jnp.clip(k - positions, 0, order)], 0.0).sum() / e
        a = jnp.where(positions <= k, a + lam * a[jnp.clip(k - positions, 0, order)], a)
        return a, e * (1.0 - lam * lam)
    return lax.fori_loop(1, order + 1, step, (jnp.zeros(order + 1).at[0].set(1.0), r[0]))


# ---------------------------------------------------------------- stencil time loops


def jacobi_1d(A, B, steps):
    """PolyBench's jacobi-1d: two arrays updated in turn."""
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def jacobi_1d_jax(A, B, steps):
    def step(_, state):
        A, B = state
        B = B.at[1:-1].set(0.33333 * (A[:-2] + A[1:-1] + A[2:]))
        return A.at[1:-1].set(0.33333 * (B[:-2] + B[1:-1] + B[2:])), B
    return lax.fori_loop(0, steps, step, (A, B))


def heat_3d(A, B, steps):
    """PolyBench's heat-3d."""
    for _ in range(steps):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])
    return A, B


def heat_3d_jax(A, B, steps):
    def heat(X):
        inner = X[1:-1, 1:-1, 1:-1]
        return (0.125 * (X[2:, 1:-1, 1:-1] - 2.0 * inner + X[:-2, 1:-1, 1:-1])
                + 0.125 * (X[1:-1, 2:, 1:-1] - 2.0 * inner + X[1:-1, :-2, 1:-1])
                + 0.125 * (X[1:-1, 1:-1, 2:] - 2.0 * inner + X[1:-1, 1:-1, :-2]) + inner)

    def step(_, state):
        A, B = state
        B = B.at[1:-1, 1:-1, 1:-1].set(heat(A))
        return A.at[1:-1, 1:-1, 1:-1].set(heat(B)), B
    return lax.fori_loop(0, steps, step, (A, B))


def gauss_seidel_2d(A, steps):
    """PolyBench's seidel-2d: a 9-point Gauss-Seidel sweep, point by point (each reads the points just
    updated)."""
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1]
                           + A[i, j - 1] + A[i, j] + A[i, j + 1]
                           + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0
    return A


def gauss_seidel_2d_jax(A, steps):
    n = A.shape[0]

    def point(i, j, A):
        window = lax.dynamic_slice(A, (i - 1, j - 1), (3, 3))
        return A.at[i, j].set(window.sum() / 9.0)

    def row(i, A):
        return lax.fori_loop(1, n - 1, lambda j, A: point(i, j, A), A)
    return lax.fori_loop(0, steps, lambda _, A: lax.fori_loop(1, n - 1, row, A), A)


# ---------------------------------------------------------------- masks and independent rows


def sigma_clipped_mean(x, rounds, k):
    """The mean of ``x`` after ``rounds`` rounds of dropping the points more than ``k`` standard
    deviations from the mean of those kept (astronomy's sigma clipping)."""
    kept = np.ones(x.shape, dtype=bool)
    for _ in range(rounds):
        mean, std = x[kept].mean(), x[kept].std()
        kept = np.abs(x - mean) < k * std
    return x[kept].mean()


def sigma_clipped_mean_jax(x, rounds, k):
    def masked_mean(kept):
        return jnp.where(kept, x, 0.0).sum() / kept.sum()

    def step(_, kept):
        mean = masked_mean(kept)
        std = jnp.sqrt(jnp.where(kept, (x - mean) ** 2, 0.0).sum() / kept.sum())
        return jnp.abs(x - mean) < k * std
    return masked_mean(lax.fori_loop(0, rounds, step, jnp.ones(x.shape, dtype=bool)))


def gram_upper_jax(d):
    n = d.shape[1]
    positions = jnp.arange(n)

    def row(i, g):
        return g.at[i].set(jnp.where(positions >= i, d[:, i] @ d, 0.0))
    return lax.fori_loop(0, n, row, jnp.zeros((n, n)))


# ---------------------------------------------------------------- a decode step


def attention_decode_step(x, wq, wk, wv, wo, k_cache, v_cache, pos):
    """One token of multi-head attention decoding: write its key and value into the caches at ``pos`` and
    attend over the ``pos + 1`` cached positions."""
    heads, head_dim = k_cache.shape[1], k_cache.shape[2]
    q = (x @ wq).reshape(heads, head_dim)
    k_cache[pos] = (x @ wk).reshape(heads, head_dim)
    v_cache[pos] = (x @ wv).reshape(heads, head_dim)
    scores = np.einsum("hd,thd->ht", q, k_cache[:pos + 1]) / np.sqrt(head_dim)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return np.einsum("ht,thd->hd", weights, v_cache[:pos + 1]).reshape(-1) @ wo


def attention_decode_step_jax(x, wq, wk, wv, wo, k_cache, v_cache, pos):
    heads, head_dim = k_cache.shape[1], k_cache.shape[2]
    q = (x @ wq).reshape(heads, head_dim)
    k_cache = lax.dynamic_update_slice(k_cache, (x @ wk).reshape(1, heads, head_dim), (pos, 0, 0))
    v_cache = lax.dynamic_update_slice(v_cache, (x @ wv).reshape(1, heads, head_dim), (pos, 0, 0))
    valid = jnp.arange(k_cache.shape[0]) <= pos
    scores = jnp.where(valid, jnp.einsum("hd,thd->ht", q, k_cache) / jnp.sqrt(head_dim), -jnp.inf)
    weights = jnp.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return jnp.einsum("ht,thd->hd", weights, v_cache).reshape(-1) @ wo, k_cache, v_cache
