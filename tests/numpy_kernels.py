"""NumPy kernels with Python loops, as scientific users write them: the cases of
tests/convert/test_loops.py and benchmarks/numpy_loops.py, which compile them unmodified; the loops whose
iterations are independent of tests/convert/test_vectorized_loops.py and benchmarks/vectorized_loops.py (and
those that accumulate, of tests/convert/test_vectorized_reductions.py)."""
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


# ---------------------------------------------------------------- loops whose slices depend on the index


def forward_substitution(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def lu_without_pivoting(A):
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def cholesky_rows(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j] - L[i, :j] @ L[j, :j]
            if i == j:
                L[i, j] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return L


def gram_schmidt(A):
    n = A.shape[1]
    Q = np.zeros_like(A)
    R = np.zeros((n, n))
    for j in range(n):
        R[:j, j] = Q[:, :j].T @ A[:, j]
        v = A[:, j] - Q[:, :j] @ R[:j, j]
        R[j, j] = np.linalg.norm(v)
        Q[:, j] = v / R[j, j]
    return Q, R


def syr2k_lower(C, A, B, alpha):
    for i in range(C.shape[0]):
        C[i, :i + 1] += alpha * (A[i] @ B[:i + 1].T + B[i] @ A[:i + 1].T)
    return C


def csr_matvec(data, indices, indptr, x):
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        start, stop = indptr[i], indptr[i + 1]
        y[i] = data[start:stop] @ x[indices[start:stop]]
    return y


def binned_average(radius, values, edges):
    means = np.zeros(edges.shape[0] - 1)
    for b in range(edges.shape[0] - 1):
        r1, r2 = edges[b], edges[b + 1]
        means[b] = values[(r1 <= radius) & (radius < r2)].mean()
    return means


def upper_gram(d):
    n = d.shape[1]
    g = np.zeros((n, n))
    for i in range(n):
        g[i, i:] = d[:, i] @ d[:, i:]
    return g


def binned_means(values, labels, nbins):
    out = np.zeros(nbins)
    for b in range(nbins):
        out[b] = values[labels == b].mean()
    return out


def weighted_row_sums(x, w):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sum(x[i] * w)
    return out


def conv2d_valid(img, k):              # img (N, H, W, C), k (K, K, C, F): windows at the loop indices (issue 33)
    K = k.shape[0]
    out = np.zeros((img.shape[0], img.shape[1] - K + 1, img.shape[2] - K + 1, k.shape[3]))
    for r in range(out.shape[1]):
        for c in range(out.shape[2]):
            out[:, r, c, :] = np.tensordot(img[:, r:r + K, c:c + K, :], k, axes=3)
    return out


def levinson_durbin(r):                # prediction coefficients and error of the autocorrelation r
    a = np.zeros(r.shape[0])
    a[0] = 1.0
    e = r[0]
    for k in range(1, r.shape[0]):
        lam = -np.dot(a[:k], np.flip(r[1:k + 1])) / e
        a[:k + 1] = a[:k + 1] + lam * np.flip(a[:k + 1])
        e *= 1.0 - lam * lam
    return a, e


def crc16_arc(data, poly=0xA001):      # CRC-16/ARC of a byte array, bit by bit (issue 33, cause 3)
    crc = 0
    for b in data:
        cur = b & 0xFF
        for _ in range(8):
            if (crc & 1) ^ (cur & 1):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    return crc


def rows_and_a_total(x):               # each row written, then read back into a total
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i])
        total += out[i].sum()
    return out, total
