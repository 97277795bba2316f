"""NumPy kernels with Python loops, as scientific users write them: the cases of
tests/test_convert_loops.py and benchmarks/numpy_loops.py, which compile them unmodified."""
import numpy as np


def heat_1d(u, steps):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def jacobi_2d(g, steps):
    for _ in range(steps):
        g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    return g


def floyd_warshall(d):
    n = d.shape[0]
    for k in range(n):
        d = np.minimum(d, d[:, k][:, None] + d[k, :][None, :])
    return d


def diagonal_tanh_sum(a):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += np.tanh(a[i, i])
    return acc


def checksum(data):
    h = 7
    for i in range(data.shape[0]):
        v = data[i]
        if v & 1:
            h = (h * 31 + v) & 0xFFFF
        else:
            h = h ^ v
    return h


def newton_roots(c):
    x = np.ones_like(c)
    while np.max(np.abs(x * x * x - c)) > 1e-12:
        x = x - (x * x * x - c) / (3 * x * x)
    return x


def greedy_decode(embed, w_out, h, steps, eos):
    """A toy recurrent language model decoding greedily: one token per step written into the output, until
    the end token."""
    tokens = np.full(steps, -1)
    token = 0
    for t in range(steps):
        h = np.tanh(h + embed[token])
        token = np.argmax(h @ w_out)
        tokens[t] = token
        if token == eos:
            break
    return tokens
