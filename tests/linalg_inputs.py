"""Random matrices for the linear-algebra tests (real or complex), and the adjoint."""
from __future__ import annotations

import numpy as np


def rand(rng, shape, dtype):
    """Standard normal entries (real and imaginary parts for complex ``dtype``)."""
    x = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def hermitian_positive(rng, shape, dtype):
    """A well-conditioned Hermitian positive definite stack: a a^H + n I."""
    a = rand(rng, shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))
