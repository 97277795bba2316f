"""Window functions: ``hanning``, ``hamming``, ``blackman``, ``bartlett`` and ``kaiser`` of ``M`` points
(float64, as NumPy's; ``M`` is static).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.hanning(4)).round(3)
array([0.  , 0.75, 0.75, 0.  ])
"""
from __future__ import annotations

import numbers

import numpy as np

from xlac.errors import located
from xlac.numpy import _core, creation, ufuncs
from xlac.trace.tracer import Tracer
from xlac.numpy.manipulation import elementwise

__all__ = ['hanning', 'hamming', 'blackman', 'bartlett', 'kaiser']


def _window(M, op: str):
    if isinstance(M, Tracer) or not isinstance(M, numbers.Integral):
        raise TypeError(located(f"{op}: M must be a Python integer, got {M!r}"))
    return int(M)


def _cosine_window(M, coefficients, op: str):
    M = _window(M, op)
    if M < 1:
        return creation.zeros(0, np.float64)
    if M == 1:
        return creation.ones(1, np.float64)
    n = creation.arange(1 - M, M, 2, dtype=np.float64)
    result = 0.0
    for k, c in enumerate(coefficients):
        result = result + c * ufuncs.cos(k * np.pi * n / (M - 1))
    return result


def hanning(M):
    """The Hann window of ``M`` points (float64).

    >>> np.asarray(hanning(3))
    array([0., 1., 0.])
    """
    return _cosine_window(M, (0.5, 0.5), "hanning")


def hamming(M):
    """The Hamming window of ``M`` points (float64).

    >>> np.asarray(hamming(3)).round(2)
    array([0.08, 1.  , 0.08])
    """
    return _cosine_window(M, (0.54, 0.46), "hamming")


def blackman(M):
    """The Blackman window of ``M`` points (float64).

    >>> np.asarray(blackman(3)).round(2)
    array([-0.,  1., -0.])
    """
    return _cosine_window(M, (0.42, 0.5, 0.08), "blackman")


def bartlett(M):
    """The triangular Bartlett window of ``M`` points (float64).

    >>> np.asarray(bartlett(5))
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    M = _window(M, "bartlett")
    if M < 1:
        return creation.zeros(0, np.float64)
    if M == 1:
        return creation.ones(1, np.float64)
    n = creation.arange(1 - M, M, 2, dtype=np.float64)
    return ufuncs.where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape ``beta`` (float64).

    >>> np.asarray(kaiser(3, 0.0))
    array([1., 1., 1.])
    """
    M = _window(M, "kaiser")
    if M == 1:
        return creation.ones(1, np.float64)
    n = creation.arange(0, M, dtype=np.float64)
    alpha = (M - 1) / 2.0
    beta = _core.asarray(beta, np.float64) if not _core.is_python_scalar(beta) else float(beta)
    window = elementwise.i0(beta * ufuncs.sqrt(1 - ((n - alpha) / alpha) ** 2.0))
    return window / elementwise.i0(creation.asarray(beta, np.float64))
