"""NumPy's smaller functions: type predicates, array-conversion variants, window functions, log-spaced
ranges, covariance, and a few helpers (``ix_``, ``fromfunction``, ``unwrap``, ``putmask``, bit packing).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.hanning(4)).round(3)
array([0.  , 0.75, 0.75, 0.  ])
"""
from __future__ import annotations

import numbers

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import _core
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.trace.context import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["angle", "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require",
           "iscomplexobj", "isrealobj", "iscomplex", "isreal", "isscalar", "iterable", "isfortran",
           "isneginf", "isposinf", "common_type", "mintypecode", "min_scalar_type", "bartlett", "blackman",
           "hamming", "hanning", "kaiser", "geomspace", "logspace", "cov", "corrcoef", "ix_", "fromfunction",
           "unwrap", "putmask", "packbits", "unpackbits", "rollaxis", "einsum_path", "real_if_close",
           "mask_indices", "row_stack", "trim_zeros", "extract", "histogramdd", "histogram2d"]


def _xnp():
    import xlac.numpy
    return xlac.numpy


def _dtype_of(x) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return np.asarray(x).dtype


# ---------------------------------------------------------------- conversion variants


def asanyarray(a, dtype=None, order=None, *, like=None):
    """``asarray``: xlac has no ndarray subclasses, so this is the same function.

    >>> np.asarray(asanyarray([1, 2]))
    array([1, 2])
    """
    return _xnp().asarray(a, dtype=dtype)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``asarray`` with at least one dimension (xlac's arrays are always contiguous).

    >>> ascontiguousarray(3.0).shape
    (1,)
    """
    xnp = _xnp()
    return xnp.atleast_1d(xnp.asarray(a, dtype=dtype))


def asfortranarray(a, dtype=None, *, like=None):
    """``asarray`` with at least one dimension.

    Deviation: memory order is XLA's to choose; the values are the same as NumPy's.

    >>> asfortranarray([[1, 2]]).shape
    (1, 2)
    """
    return ascontiguousarray(a, dtype=dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray`` that raises ValueError when ``a`` holds inf or NaN.

    Deviation: inside a compiled function the values are unknown at trace time, so this raises
    xlac.UnsupportedError there instead of returning an unchecked array.

    >>> asarray_chkfinite([1.0, np.inf])
    Traceback (most recent call last):
    ValueError: array must not contain infs or NaNs
    """
    xnp = _xnp()
    if current_trace() is not None:
        raise UnsupportedError(located("asarray_chkfinite: the check needs concrete values, which a compiled "
                                       "function does not have; check with xnp.isfinite(x).all() outside it"))
    result = xnp.asarray(a, dtype=dtype)
    if result.dtype.kind in "fc" and not bool(xnp.all(xnp.isfinite(result))):
        raise ValueError("array must not contain infs or NaNs")
    return result


def require(a, dtype=None, requirements=None, *, like=None):
    """``asarray`` with ``dtype``; the memory requirements (C, F, A, W, O, E) always hold or are moot.

    >>> require([1, 2], np.float32).dtype
    dtype('float32')
    """
    return _xnp().asarray(a, dtype=dtype)


# ---------------------------------------------------------------- type predicates


@numpy_function_with_static("deg")
def angle(z, deg=False):
    """The counterclockwise angle of each complex element from the positive real axis (radians).

    >>> np.asarray(angle(np.array([1j, -1.0])))
    array([1.57079633, 3.14159265])
    """
    xnp = _xnp()
    z = _core.asarray(z)
    if z.dtype.kind == "c":
        a = xnp.arctan2(xnp.imag(z), xnp.real(z))
    else:
        a = xnp.arctan2(0, z)
    return a * (180 / np.pi) if deg else a


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype (a Python bool; only the dtype is read).

    >>> iscomplexobj(np.ones(2, np.complex64))
    True
    """
    return _dtype_of(x).kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x`` has a non-complex dtype.

    >>> isrealobj([1.0])
    True
    """
    return not iscomplexobj(x)


@numpy_function
def iscomplex(x):
    """Element-wise: a non-zero imaginary part.

    >>> np.asarray(iscomplex(np.array([1 + 1j, 2])))
    array([ True, False])
    """
    x = _core.asarray(x)
    if x.dtype.kind != "c":
        return _xnp().zeros(x.shape, bool)
    return _xnp().imag(x) != 0


@numpy_function
def isreal(x):
    """Element-wise: a zero imaginary part.

    >>> np.asarray(isreal(np.array([1 + 1j, 2])))
    array([False,  True])
    """
    x = _core.asarray(x)
    if x.dtype.kind != "c":
        return _xnp().ones(x.shape, bool)
    return _xnp().imag(x) == 0


def isscalar(element) -> bool:
    """NumPy's ``isscalar``: arrays, traced or not, are not scalars.

    >>> isscalar(3.0), isscalar(np.ones(1))
    (True, False)
    """
    if isinstance(element, Tracer) or hasattr(element, "__xlac_array__"):
        return False
    return bool(np.isscalar(element))


def iterable(y) -> bool:
    """Whether ``iter(y)`` works (a 0-d array is not iterable).

    >>> iterable([1]), iterable(1)
    (True, False)
    """
    if isinstance(y, Tracer) or hasattr(y, "__xlac_array__"):
        return len(y.shape) > 0
    return bool(np.iterable(y))


def isfortran(a) -> bool:
    """False: xlac arrays are C-ordered (or XLA's choice), never Fortran-ordered views.

    >>> isfortran(np.ones((2, 2)))
    False
    """
    return False


@numpy_function
def isneginf(x, out=None):
    """Element-wise ``x == -inf``.

    >>> np.asarray(isneginf(np.array([-np.inf, 0.0, np.inf])))
    array([ True, False, False])
    """
    x = _core.asarray(x)
    _reject_complex(x, "isneginf")
    return _xnp().isinf(x) & _xnp().signbit(x) if x.dtype.kind == "f" else _xnp().zeros(x.shape, bool)


@numpy_function
def isposinf(x, out=None):
    """Element-wise ``x == +inf``.

    >>> np.asarray(isposinf(np.array([-np.inf, 0.0, np.inf])))
    array([False, False,  True])
    """
    x = _core.asarray(x)
    _reject_complex(x, "isposinf")
    return _xnp().isinf(x) & ~_xnp().signbit(x) if x.dtype.kind == "f" else _xnp().zeros(x.shape, bool)


def _reject_complex(x, op: str):
    if x.dtype.kind == "c":
        raise TypeError(located(f"This operation is not supported for complex values because it would be "
                                f"ambiguous ({op})"))


def common_type(*arrays) -> type:
    """The inexact scalar type common to ``arrays`` (integers count as float64), as NumPy's.

    >>> common_type(np.ones(2, np.float32), np.ones(2, np.int8))
    <class 'numpy.float64'>
    """
    return np.common_type(*(np.empty(0, _dtype_of(a)) for a in arrays))


def mintypecode(typechars, typeset="GDFgdf", default="d") -> str:
    """NumPy's ``mintypecode`` (works on dtype characters and array dtypes only).

    >>> mintypecode(['d', 'f'])
    'd'
    """
    return np.mintypecode([t if isinstance(t, str) else _dtype_of(t).char for t in typechars], typeset, default)


def min_scalar_type(a) -> np.dtype:
    """The smallest dtype that holds ``a``'s values.

    Deviation: reads the values, so traced arrays raise xlac.UnsupportedError (their dtype is their own).

    >>> min_scalar_type(10)
    dtype('uint8')
    """
    if isinstance(a, Tracer):
        raise UnsupportedError(located("min_scalar_type: the result depends on the values of a traced array"))
    if hasattr(a, "__xlac_array__"):
        a = a.__xlac_array__()
    return np.min_scalar_type(a)


def real_if_close(a, tol=100):
    """``a`` without its imaginary part when that part is within ``tol`` machine epsilons of zero.

    Deviation: the result dtype depends on the values, so traced complex arrays raise xlac.UnsupportedError.

    >>> np.asarray(real_if_close(np.array([1 + 1e-20j])))
    array([1.])
    """
    xnp = _xnp()
    if _dtype_of(a).kind != "c":
        return xnp.asarray(a)
    if isinstance(a, Tracer):
        raise UnsupportedError(located("real_if_close: the result dtype depends on the values of a traced array; "
                                       "use xnp.real(x) inside compiled functions"))
    return xnp.asarray(np.real_if_close(np.asarray(a), tol))


# ---------------------------------------------------------------- windows


def _window(M, op: str):
    if isinstance(M, Tracer) or not isinstance(M, numbers.Integral):
        raise TypeError(located(f"{op}: M must be a Python integer, got {M!r}"))
    return int(M)


def _cosine_window(M, coefficients, op: str):
    xnp = _xnp()
    M = _window(M, op)
    if M < 1:
        return xnp.zeros(0, np.float64)
    if M == 1:
        return xnp.ones(1, np.float64)
    n = xnp.arange(1 - M, M, 2, dtype=np.float64)
    result = 0.0
    for k, c in enumerate(coefficients):
        result = result + c * xnp.cos(k * np.pi * n / (M - 1))
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
    xnp = _xnp()
    M = _window(M, "bartlett")
    if M < 1:
        return xnp.zeros(0, np.float64)
    if M == 1:
        return xnp.ones(1, np.float64)
    n = xnp.arange(1 - M, M, 2, dtype=np.float64)
    return xnp.where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape ``beta`` (float64).

    >>> np.asarray(kaiser(3, 0.0))
    array([1., 1., 1.])
    """
    xnp = _xnp()
    M = _window(M, "kaiser")
    if M == 1:
        return xnp.ones(1, np.float64)
    n = xnp.arange(0, M, dtype=np.float64)
    alpha = (M - 1) / 2.0
    beta = _core.asarray(beta, np.float64) if not _core.is_python_scalar(beta) else float(beta)
    return xnp.i0(beta * xnp.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / xnp.i0(xnp.asarray(beta, np.float64))


# ---------------------------------------------------------------- ranges


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``.

    >>> np.asarray(logspace(0, 2, 3))
    array([  1.,  10., 100.])
    """
    xnp = _xnp()
    y = xnp.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    base = xnp.asarray(base)
    if base.ndim:
        base = xnp.expand_dims(base, axis)
    result = xnp.power(base, y)
    return result if dtype is None else xnp.astype(result, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (endpoints exact, as NumPy's).

    >>> np.asarray(geomspace(1, 1000, 4))
    array([   1.,   10.,  100., 1000.])
    """
    xnp = _xnp()
    start, stop = xnp.asarray(start), xnp.asarray(stop)
    kind = xnp.result_type(start, stop, float(num))
    start, stop = xnp.astype(start, kind), xnp.astype(stop, kind)
    if kind.kind == "c":
        raise UnsupportedError(located("geomspace: complex endpoints are not supported by xlac"))
    sign = xnp.where(start < 0, -1.0, 1.0).astype(kind)
    log_start, log_stop = xnp.log10(xnp.abs(start)), xnp.log10(xnp.abs(stop))
    result = xnp.linspace(log_start, log_stop, num=num, endpoint=endpoint, axis=0)
    result = xnp.power(xnp.asarray(10.0, kind), result) * sign
    if num > 0:
        result = xnp.concatenate([xnp.expand_dims(start, 0), result[1:]], axis=0)
        if endpoint and num > 1:
            result = xnp.concatenate([result[:-1], xnp.expand_dims(stop, 0)], axis=0)
    if axis != 0:
        result = xnp.moveaxis(result, 0, axis)
    return result if dtype is None else xnp.astype(result, dtype)


# ---------------------------------------------------------------- statistics


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """The covariance matrix of the rows (variables) of ``m`` (and ``y``), as NumPy's ``cov``.

    >>> np.asarray(cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    xnp = _xnp()
    m = xnp.asarray(m)
    if m.ndim > 2:
        raise ValueError(located("cov: m has more than 2 dimensions"))
    kind = np.dtype(dtype) if dtype is not None else \
        xnp.result_type(m, np.float64) if y is None else xnp.result_type(m, xnp.asarray(y), np.float64)
    X = xnp.atleast_2d(xnp.astype(m, kind))
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return xnp.zeros((0, 0), kind)
    if y is not None:
        Y = xnp.atleast_2d(xnp.astype(xnp.asarray(y), kind))
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = xnp.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = xnp.astype(xnp.asarray(fweights), np.float64)
    if aweights is not None:
        a = xnp.astype(xnp.asarray(aweights), np.float64)
        w = a if w is None else w * a
    if w is None:
        mean = xnp.mean(X, axis=1, keepdims=True)
        fact = X.shape[1] - ddof
    else:
        w_sum = xnp.sum(w)
        mean = xnp.sum(X * w, axis=1, keepdims=True) / w_sum
        fact = w_sum - ddof if aweights is None else \
            w_sum - ddof * xnp.sum(w * xnp.astype(xnp.asarray(aweights), np.float64)) / w_sum
    Xc = X - mean
    Xw = Xc if w is None else Xc * w
    c = xnp.matmul(Xw, xnp.conj(Xc).T) / fact
    return xnp.squeeze(c) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, clipped to [-1, 1] as NumPy's.

    >>> np.asarray(corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    xnp = _xnp()
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = xnp.diagonal(c)
    stddev = xnp.sqrt(xnp.real(d))
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind == "c":
        return xnp.clip(xnp.real(c), -1, 1) + 1j * xnp.clip(xnp.imag(c), -1, 1)
    return xnp.clip(c, -1, 1)


# ---------------------------------------------------------------- helpers


def ix_(*args):
    """Open-mesh index arrays: ``x[ix_(rows, cols)]`` picks the cross product.

    >>> [a.shape for a in ix_([0, 1], [2, 3, 4])]
    [(2, 1), (1, 3)]
    """
    xnp = _xnp()
    out = []
    for k, seq in enumerate(args):
        a = xnp.asarray(seq)
        if a.ndim != 1:
            raise ValueError(located("ix_: cross index must be 1 dimensional"))
        if a.dtype == np.bool_:
            if isinstance(a, Tracer):
                raise UnsupportedError(located("ix_: a traced boolean sequence has a data-dependent length"))
            a = xnp.asarray(np.nonzero(np.asarray(a))[0])
        if a.size == 0 and a.dtype.kind == "f":
            a = xnp.astype(a, np.intp)
        out.append(xnp.reshape(a, (1,) * k + (a.size,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices(shape))``: the function is called once, with one coordinate array per axis.

    >>> np.asarray(fromfunction(lambda i, j: i + j, (2, 2)))
    array([[0., 1.],
           [1., 2.]])
    """
    return function(*_xnp().indices(shape, dtype=dtype), **kwargs)


@numpy_function_with_static("axis")
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Unwrap phase jumps larger than ``discont`` by multiples of ``period`` along ``axis``.

    >>> np.asarray(unwrap(np.array([0.0, 6.0]))).round(3)
    array([ 0.   , -0.283])
    """
    xnp = _xnp()
    p = _core.asarray(p)
    axis = _core.normalize_axis(axis, p.ndim, "unwrap")
    dtype = xnp.result_type(p, period)
    p = xnp.astype(p, dtype) if p.dtype != dtype else p
    dd = xnp.diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    interval_high = period / 2
    boundary_ambiguous = True
    if dtypes.is_int(dtype):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    interval_low = -interval_high
    ddmod = xnp.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        ddmod = xnp.where((ddmod == interval_low) & (dd > 0), interval_high, ddmod)
    correction = ddmod - dd
    correction = xnp.where(xnp.abs(dd) < discont, xnp.zeros_like(correction), correction)
    head = xnp.take(p, xnp.arange(1), axis=axis)
    tail = xnp.take(p, xnp.arange(1, p.shape[axis]), axis=axis) + xnp.cumsum(correction, axis=axis)
    return xnp.concatenate([head, xnp.astype(tail, dtype)], axis=axis)


def putmask(a, mask, values):
    """``a[mask] = values`` with ``values`` repeated cyclically over the flat positions, in place.

    >>> a = np.arange(4.0); x = __import__("xlac").asarray(a)
    >>> putmask(x, a > 1, [10.0, 20.0]); np.asarray(x)
    array([ 0.,  1., 10., 20.])
    """
    xnp = _xnp()
    target = _core.writable(a, "putmask") if current_trace() is not None else a
    if _core.is_python_scalar(values) or isinstance(values, (np.ndarray, np.generic)):
        # NumPy converts constant values to the array's dtype first (a Python int out of its range raises)
        values = np.asarray(values, dtype=np.result_type(target))
    values = xnp.asarray(values)
    if values.size == 0:
        return None
    flat_values = xnp.resize(xnp.ravel(values), (target.size,))
    new = xnp.where(xnp.asarray(mask), xnp.reshape(flat_values, target.shape), target)
    target[...] = new
    return None


@numpy_function_with_static("axis", "bitorder")
def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of ``a``'s elements into uint8 bits along ``axis`` (flattened when None).

    >>> np.asarray(packbits(np.array([1, 0, 1])))
    array([160], dtype=uint8)
    """
    xnp = _xnp()
    a = _core.asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError(located("Expected an input array of integer or boolean data type (packbits)"))
    if bitorder not in ("big", "little"):
        raise ValueError(located("packbits: 'order' must be either 'little' or 'big'"))
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = _core.normalize_axis(axis, a.ndim, "packbits")
    bits = xnp.astype(a != 0, np.uint8)
    n = a.shape[axis]
    padded = -(-n // 8) * 8
    if padded != n:
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, padded - n)
        bits = xnp.pad(bits, widths)
    shape = bits.shape[:axis] + (padded // 8, 8) + bits.shape[axis + 1:]
    bits = xnp.reshape(bits, shape)
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128],
                       np.uint8).reshape((8,) + (1,) * (a.ndim - axis - 1))
    return xnp.sum(bits * weights, axis=axis + 1, dtype=np.uint8)


@numpy_function_with_static("axis", "count", "bitorder")
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack uint8 elements into their bits along ``axis`` (flattened when None).

    >>> np.asarray(unpackbits(np.array([160], np.uint8)))
    array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
    """
    xnp = _xnp()
    a = _core.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(located(f"Expected an input array of unsigned byte data type (unpackbits), got {a.dtype}"))
    if bitorder not in ("big", "little"):
        raise ValueError(located("unpackbits: 'order' must be either 'little' or 'big'"))
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = _core.normalize_axis(axis, a.ndim, "unpackbits")
    shifts = np.array([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7], np.uint8)
    expanded = xnp.expand_dims(a, axis + 1)
    bits = xnp.bitwise_and(xnp.right_shift(expanded, shifts.reshape((8,) + (1,) * (a.ndim - axis - 1))),
                           np.uint8(1))
    bits = xnp.reshape(bits, a.shape[:axis] + (a.shape[axis] * 8,) + a.shape[axis + 1:])
    if count is not None:
        total = a.shape[axis] * 8
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = xnp.take(bits, xnp.arange(keep), axis=axis)
        else:
            widths = [(0, 0)] * bits.ndim
            widths[axis] = (0, keep - total)
            bits = xnp.pad(bits, widths)
    return bits


def rollaxis(a, axis, start=0):
    """Move ``axis`` to before position ``start`` (NumPy's older ``moveaxis``).

    >>> rollaxis(np.ones((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    xnp = _xnp()
    a = xnp.asarray(a)
    n = a.ndim
    axis = _core.normalize_axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise np.exceptions.AxisError(located(f"rollaxis: start {start} out of range for {n} dimensions"))
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return xnp.transpose(a, axes)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction-order report for these operands' shapes (xlac contracts greedily in pairs).

    >>> einsum_path("ij,jk", np.ones((2, 3)), np.ones((3, 4)))[0]
    ['einsum_path', (0, 1)]
    """
    stand_ins = [np.broadcast_to(np.zeros((), _dtype_of(x)), np.shape(x) if not hasattr(x, "shape") else x.shape)
                 for x in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (``n`` and ``k`` static).

    >>> [np.asarray(i).tolist() for i in mask_indices(2, np.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    m = np.asarray(mask_func(np.ones((n, n), int), k))
    rows, cols = np.nonzero(m)
    xnp = _xnp()
    return xnp.asarray(rows), xnp.asarray(cols)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's deprecated alias of ``vstack``.

    >>> row_stack([np.ones(2), np.zeros(2)]).shape
    (2, 2)
    """
    import warnings
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return _xnp().vstack(tup, dtype=dtype, casting=casting)


def _concrete_only(op: str, suggestion: str):
    if current_trace() is not None:
        raise UnsupportedError(located(f"{op}: the result's length depends on the values, which a compiled "
                                       f"function does not know; {suggestion}"))


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros.

    Deviation: the result's length depends on the values, so inside a compiled function this raises
    xlac.UnsupportedError; it works eagerly.

    >>> np.asarray(trim_zeros(np.array([0, 1, 2, 0])))
    array([1, 2])
    """
    _concrete_only("trim_zeros", "slice with static bounds instead")
    xnp = _xnp()
    host = np.asarray(filt)
    kept = np.trim_zeros(host, trim) if axis is None else np.trim_zeros(host, trim, axis=axis)
    if kept.size == host.size:
        return xnp.asarray(filt)
    return xnp.asarray(kept)


def extract(condition, arr):
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is true.

    Deviation: the result's length depends on the values, so inside a compiled function a traced condition
    raises xlac.UnsupportedError (use ``xnp.where`` or ``xnp.nonzero(..., size=)``); a NumPy condition works.

    >>> np.asarray(extract(np.array([True, False, True]), np.array([1, 2, 3])))
    array([1, 3])
    """
    xnp = _xnp()
    if isinstance(condition, Tracer):
        _concrete_only("extract", "use xnp.where(condition, arr, fill) or xnp.nonzero(condition, size=n)")
    positions = np.nonzero(np.ravel(np.asarray(condition)))[0]
    return xnp.take(xnp.ravel(xnp.asarray(arr)), xnp.asarray(positions) if current_trace() is None else positions)


def _static_bin_spec(bins, dims: int, op: str) -> list:
    """One bin spec per dimension: a Python int (equal bins) or a 1-D array of edges."""
    if isinstance(bins, numbers.Integral):
        return [int(bins)] * dims
    specs = list(bins)
    if len(specs) != dims:
        raise ValueError(located(f"{op}: The dimension of bins must be equal to the dimension of the sample x."))
    return [int(b) if isinstance(b, numbers.Integral) else b for b in specs]


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The D-dimensional histogram of the ``(N, D)`` ``sample`` (or a sequence of D arrays): (counts, edges).

    Bin counts (``bins``: ints or edge arrays) must be static; equal bins span ``range`` or the data's
    min to max. Counts are float64, as NumPy's. Each bin is half-open except the last, which is closed.

    >>> h, edges = histogramdd(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> np.asarray(h)
    array([[1., 0.],
           [1., 1.]])
    """
    xnp = _xnp()
    if isinstance(sample, (list, tuple)):
        sample = xnp.stack([xnp.asarray(s) for s in sample], axis=-1)
    sample = xnp.asarray(sample)
    if sample.ndim == 1:
        sample = xnp.reshape(sample, (-1, 1))
    if sample.ndim != 2:
        raise ValueError(located(f"histogramdd: sample must be (N, D), got shape {sample.shape}"))
    n, dims = sample.shape
    specs = _static_bin_spec(bins, dims, "histogramdd")
    ranges = [None] * dims if range is None else list(range)
    edges, positions, sizes = [], [], []
    for i, (spec, bounds) in enumerate(zip(specs, ranges)):
        column = sample[:, i]
        edge = xnp.histogram_bin_edges(column, spec, bounds)
        edge = xnp.astype(edge, np.float64) if edge.dtype != np.float64 and dtypes.is_int(edge.dtype) else edge
        count = edge.shape[0] - 1
        # NumPy: searchsorted right, then values on the last edge go into the last bin; 0 and count+1 are
        # the outliers on either side.
        where = xnp.searchsorted(edge, column, side="right")
        where = xnp.where(column == edge[-1], where - 1, where)
        edges.append(edge)
        positions.append(where)
        sizes.append(count + 2)
    flat = xnp.zeros(n, np.int64)
    for where, size in zip(positions, sizes):
        flat = flat * size + xnp.astype(where, np.int64)
    total = int(np.prod(sizes))
    counts = xnp.bincount(flat, weights=weights, minlength=total, length=total)
    counts = xnp.reshape(xnp.astype(counts, np.float64), tuple(sizes))
    counts = counts[tuple(slice(1, -1) for _ in sizes)]
    if density:
        widths = [xnp.diff(e) for e in edges]
        volume = 1.0
        for i, w in enumerate(widths):
            volume = volume * xnp.reshape(w, (1,) * i + (w.shape[0],) + (1,) * (dims - i - 1))
        counts = counts / volume / xnp.sum(counts)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The 2-D histogram of points ``(x, y)``: (counts, x edges, y edges), as NumPy's ``histogram2d``.

    >>> h, xe, ye = histogram2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]), bins=2)
    >>> np.asarray(h)
    array([[1., 0.],
           [0., 1.]])
    """
    if not isinstance(bins, numbers.Integral) and len(bins) not in (1, 2):
        bins = [bins, bins]
    counts, (x_edges, y_edges) = histogramdd([x, y], bins, range, density, weights)
    return counts, x_edges, y_edges
