"""Array creation: constants, ranges (linear and logarithmic), identity and triangular matrices, and conversion
to arrays (``asarray`` and its variants ``asanyarray``, ``ascontiguousarray``, ``require``, ...).

Sizes, counts and offsets (``shape``, ``N``, ``k``, ``num``) are static Python ints; the
default dtype is float64, as in NumPy.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.arange(3))
array([0, 1, 2])
"""
from __future__ import annotations

import math
import numbers
import operator
import warnings

import numpy as np

from xlac.ir.dtypes import FLOAT64, INT64
from xlac.errors import located, UnsupportedError
from xlac.ir import dtypes
from xlac.numpy import _core, reductions, shapes, ufuncs
from xlac.numpy.devices import takes_device
from xlac.numpy._dispatch import dynamic_call, numpy_function, numpy_function_with_static, static_value
from xlac.numpy.shapes import as_array, shape_tuple
from xlac.trace import ops, views
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.array import Array, asarray as device_array

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
           "linspace", "eye", "identity", "tri", "triu", "tril", "array", "asarray", "asanyarray", "ascontiguousarray",
           "asfortranarray", "asarray_chkfinite", "require", "logspace", "geomspace"]


def _dtype_or(dtype, default) -> np.dtype:
    return dtypes.canonical(default if dtype is None else dtype)


def _new_shape(shape, op: str) -> tuple[int, ...]:
    dims = shape_tuple(shape, op)
    if any(d < 0 for d in dims):
        raise ValueError(located(f"{op}: negative dimensions are not allowed, got shape {dims}"))
    return dims


# ---------------------------------------------------------------- filled arrays


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def zeros(shape, dtype=None):
    """An array of ``shape`` filled with zeros (float64 unless ``dtype`` says otherwise).

    >>> np.asarray(zeros((2, 2), np.int32))
    array([[0, 0],
           [0, 0]], dtype=int32)
    """
    return ops.full(_new_shape(shape, "zeros"), 0, _dtype_or(dtype, FLOAT64))


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def ones(shape, dtype=None):
    """An array of ``shape`` filled with ones.

    >>> np.asarray(ones(3))
    array([1., 1., 1.])
    """
    return ops.full(_new_shape(shape, "ones"), 1, _dtype_or(dtype, FLOAT64))


@takes_device
def empty(shape, dtype=None):
    """An array of ``shape``; xlac has no uninitialized memory, so it is filled with zeros.

    >>> np.asarray(empty(2))
    array([0., 0.])
    """
    return zeros(shape, dtype)


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (a scalar, or an array broadcast to ``shape``).

    Without ``dtype`` the dtype is that of ``np.array(fill_value)``: int64 for a Python int.

    >>> np.asarray(full((2,), 7))
    array([7, 7])
    """
    dims = _new_shape(shape, "full")
    value = as_array(fill_value) if dtype is None else _fill_value(fill_value, dtypes.canonical(dtype))
    return ops.broadcast_to(ops.convert(value, value.dtype, weak=False), dims)


def _fill_value(fill_value, dtype: np.dtype) -> Tracer:
    """``fill_value`` cast unsafely to ``dtype`` (a complex Python scalar loses its imaginary part, as in NumPy)."""
    if isinstance(fill_value, complex) and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=4)
        fill_value = fill_value.real
    return _core.asarray(fill_value, dtype)


def _like(a, dtype, shape, op: str):
    """The shape and dtype of the result of a ``*_like`` function."""
    x = as_array(a)
    dims = x.shape if shape is None else _new_shape(shape, op)
    return dims, _dtype_or(dtype, x.dtype)


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def zeros_like(a, dtype=None, shape=None):
    """Zeros with the shape and dtype of ``a`` (either may be overridden).

    >>> np.asarray(zeros_like(np.array([1, 2], np.int8)))
    array([0, 0], dtype=int8)
    """
    dims, dtype = _like(a, dtype, shape, "zeros_like")
    return ops.full(dims, 0, dtype)


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def ones_like(a, dtype=None, shape=None):
    """Ones with the shape and dtype of ``a`` (either may be overridden).

    >>> np.asarray(ones_like(np.zeros(2), dtype=bool))
    array([ True,  True])
    """
    dims, dtype = _like(a, dtype, shape, "ones_like")
    return ops.full(dims, 1, dtype)


@takes_device
def empty_like(a, dtype=None, shape=None):
    """Like :func:`zeros_like` (xlac has no uninitialized memory).

    >>> np.asarray(empty_like(np.ones(2)))
    array([0., 0.])
    """
    return zeros_like(a, dtype, shape)


@takes_device
@numpy_function_with_static("shape", makes_array=True)
def full_like(a, fill_value, dtype=None, shape=None):
    """``fill_value`` in an array with the shape and dtype of ``a``; the value is cast (unsafely) to that dtype.

    >>> np.asarray(full_like(np.arange(3), 2.7))
    array([2, 2, 2])
    """
    dims, dtype = _like(a, dtype, shape, "full_like")
    value = _fill_value(fill_value, dtype)
    return ops.broadcast_to(ops.convert(value, dtype, weak=False), dims)


# ---------------------------------------------------------------- ranges


def _static_number(x, op: str):
    """A static numeric argument as a Python number; a traced value raises TracerConversionError."""
    if isinstance(x, Tracer):
        int(x)
    x = static_value(x)
    if isinstance(x, bool):
        return int(x)
    if not isinstance(x, numbers.Number):
        raise TypeError(located(f"{op}: expected a number, got {type(x).__name__}"))
    return x


def _arange_dtype(start, stop, step) -> np.dtype:
    """NumPy 2's arange dtype for Python numbers: int64 for integers, float64 if any is a float."""
    if any(isinstance(v, complex) for v in (start, stop, step)):
        raise UnsupportedError(located("arange: complex start, stop or step is not supported"))
    return FLOAT64 if any(isinstance(v, float) for v in (start, stop, step)) else INT64


def _arange_length(start, stop, step) -> int:
    """NumPy's length: ceil((stop - start) / step), at least 0 (a zero step raises ZeroDivisionError)."""
    quotient = (stop - start) / step
    if not math.isfinite(quotient):
        raise ValueError(located(f"arange: cannot compute length of arange({start}, {stop}, {step})"))
    return max(0, math.ceil(quotient))


@takes_device
def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values ``start, start + step, ...`` below ``stop``, as ``np.arange``.

    The dtype is int64 for integer arguments and float64 if any is a float. A traced integer start or
    stop whose range tracing knows (``np.arange(v.size)``, a rolled loop's index) gives a value whose length
    is known only when the program runs (:mod:`xlac.numpy.dynamic_extent_shapes`); other traced bounds must
    be static (a Python int argument becomes one).

    >>> np.asarray(arange(1, 2, 0.25))
    array([1.  , 1.25, 1.5 , 1.75])
    """
    if stop is None:
        start, stop = 0, start
    if any(isinstance(v, Tracer) for v in (start, stop, step)):       # xlac.numpy.dynamic_extent_shapes
        return dynamic_call(arange, (start, stop, step), {"dtype": dtype})
    start, stop = _static_number(start, "arange"), _static_number(stop, "arange")
    step = 1 if step is None else _static_number(step, "arange")
    target = _arange_dtype(start, stop, step) if dtype is None else dtypes.canonical(dtype)
    return _arange(start, stop, step, target)


def _named_numpy_function(name, view=None):
    """``@numpy_function`` for a private body that records its nodes under the public ``name``."""
    def decorate(fn):
        fn.__name__ = fn.__qualname__ = name
        return numpy_function(fn, view=view, makes_array=True)
    return decorate


@_named_numpy_function("arange")
def _arange(start, stop, step, dtype):
    length = _arange_length(start, stop, step)
    if dtype == np.bool_:
        if length > 2:
            raise TypeError(located("arange() is only supported for booleans when the result has at most length 2."))
        return ops.constant(np.array([start, start + step][:length]).astype(bool))
    # As NumPy fills: the first two values in the target dtype, then first + i * (second - first).
    with np.errstate(all="ignore"):
        first = np.array(start).astype(dtype)
        delta = np.array(start + step).astype(dtype) - first
    compute = np.dtype("float32") if dtype.itemsize < 4 and dtypes.is_float(dtype) else dtype
    if length == 0:
        return ops.full((0,), 0, dtype)
    real = np.dtype("float64") if compute == np.complex128 else np.dtype("float32")
    index = ops.convert(ops.iota((length,), real if compute.kind == "c" else compute, 0), compute)
    scaled = ops.mul(index, ops.full((length,), delta, compute))
    values = ops.add(scaled, ops.full((length,), first, compute))
    return ops.convert(values, dtype)


@takes_device
@numpy_function_with_static("num", "axis", makes_array=True)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``), as ``np.linspace``.

    ``start`` and ``stop`` may be arrays (even traced ones); the samples run along ``axis``.

    >>> np.asarray(linspace(0, 1, 5))
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(located(f"linspace: Number of samples, {num}, must be non-negative."))
    div = num - 1 if endpoint else num
    compute = dtypes.result_type(start, stop)
    if not dtypes.is_inexact(compute):
        compute = FLOAT64
    lo, hi = _core.promote("linspace", start, stop, dtype=compute)
    lo, hi = (ops.convert(t, compute, weak=False) for t in (lo, hi))
    out_shape = (num,) + lo.shape
    delta = ops.sub(hi, lo)
    index = ops.iota(out_shape, compute, 0) if num else ops.full(out_shape, 0, compute)
    stretch = lambda t: ops.broadcast_in_dim(t, out_shape, tuple(range(1, len(out_shape))))  # noqa: E731
    if div > 0:
        step = ops.div(delta, ops.full(delta.shape, div, compute))
        by_step = ops.mul(index, stretch(step))
        # NumPy's guard for steps that underflow to 0 (gh-5437): scale by delta after dividing
        by_delta = ops.mul(ops.div(index, ops.full(out_shape, div, compute)), stretch(delta))
        zero_step = ops.compare(step, ops.full(step.shape, 0, compute), "EQ")
        y = ops.select(stretch(zero_step), by_delta, by_step)
    else:
        step = ops.full(delta.shape, np.nan, compute)
        y = ops.mul(index, stretch(delta))
    y = ops.add(y, stretch(lo))
    if endpoint and num > 1:
        head = ops.slice(y, (0,) * y.ndim, (num - 1,) + lo.shape)
        y = ops.concatenate([head, ops.reshape(hi, (1,) + hi.shape)], 0)
    y = _move_first_axis(y, axis)
    target = compute if dtype is None else dtypes.canonical(dtype)
    if dtypes.is_int(target) and dtypes.is_float(compute):
        y = ops.floor(y)
    y = ops.convert(y, target)
    return (y, step) if retstep else y


def _move_first_axis(y: Tracer, axis) -> Tracer:
    axis = _core.normalize_axis(static_value(axis), y.ndim, "linspace")
    order = list(range(1, y.ndim))
    order.insert(axis, 0)
    return ops.transpose(y, order)


# ---------------------------------------------------------------- matrices


def _matrix_dims(N, M, op: str) -> tuple[int, int]:
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(located(f"{op}: negative dimensions are not allowed, got ({n}, {m})"))
    return n, m


def _offset_mask(n: int, m: int, k: int, direction: str) -> Tracer:
    """True where ``j - i`` compares to ``k`` by ``direction`` ("EQ" for a diagonal, "LE" for tri),
    computed as ``j`` against ``i + k`` on int32 iotas when they fit (the mask XLA fuses best)."""
    fits_int32 = max(n, m) + abs(k) < 2 ** 31
    index_dtype = np.dtype("int32") if fits_int32 else INT64
    rows = ops.iota((n, m), index_dtype, 0)
    cols = ops.iota((n, m), index_dtype, 1)
    if k:
        rows = ops.add(rows, ops.full((n, m), k, index_dtype))
    return ops.compare(cols, rows, direction)


@takes_device
@numpy_function_with_static("N", "M", "k", makes_array=True)
def eye(N, M=None, k=0, dtype=None):
    """An ``N x M`` matrix with ones on diagonal ``k`` (0 the main, positive above) and zeros elsewhere.

    >>> np.asarray(eye(2, 3, k=1))
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    n, m = _matrix_dims(N, M, "eye")
    return ops.convert(_offset_mask(n, m, operator.index(k), "EQ"), _dtype_or(dtype, FLOAT64))


def identity(n, dtype=None):
    """The ``n x n`` identity matrix.

    >>> np.asarray(identity(2, dtype=int))
    array([[1, 0],
           [0, 1]])
    """
    return eye(n, dtype=dtype)


@numpy_function_with_static("N", "M", "k", makes_array=True)
def tri(N, M=None, k=0, dtype=None):
    """An ``N x M`` matrix with ones at and below diagonal ``k`` and zeros above.

    >>> np.asarray(tri(2, 3, dtype=int))
    array([[1, 0, 0],
           [1, 1, 0]])
    """
    n, m = _matrix_dims(N, M, "tri")
    return ops.convert(_offset_mask(n, m, operator.index(k), "LE"), _dtype_or(dtype, FLOAT64))


def _triangle(m, k, keep: str, op: str) -> Tracer:
    """``m`` with the elements outside a triangle zeroed; over the last two axes (1-D ``m`` is a row)."""
    x = as_array(m)
    if x.ndim == 0:
        raise ValueError(located(f"{op}: input must be at least 1-d, got a 0-d array"))
    rows, cols = x.shape[-2:] if x.ndim >= 2 else (x.shape[-1], x.shape[-1])
    keep_mask = _offset_mask(rows, cols, operator.index(k), keep)
    out_shape = x.shape if x.ndim >= 2 else (rows, cols)
    x = ops.broadcast_to(x, out_shape)
    mask = ops.broadcast_to(keep_mask, out_shape)
    return ops.select(mask, x, ops.full(out_shape, 0, x.dtype))


@numpy_function_with_static("k", makes_array=True)
def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` zeroed (over its last two axes).

    >>> np.asarray(triu(np.ones((2, 2), int)))
    array([[1, 1],
           [0, 1]])
    """
    return _triangle(m, k, "GE", "triu")


@numpy_function_with_static("k", makes_array=True)
def tril(m, k=0):
    """``m`` with the elements above diagonal ``k`` zeroed (over its last two axes).

    >>> np.asarray(tril(np.ones((2, 2), int)))
    array([[1, 0],
           [1, 1]])
    """
    return _triangle(m, k, "LE", "tril")


# ---------------------------------------------------------------- conversion


@_named_numpy_function("asarray", view="alias")
def traced_array(obj, dtype=None):
    """The traced body of :func:`array` and :func:`asarray`: ``obj`` as a traced array of ``dtype`` (the
    function their dynamic-extent rule is registered for).

    >>> traced_array([1, 2], np.float32)
    Array([1., 2.], dtype=float32)
    """
    if isinstance(obj, Tracer):
        return obj if dtype is None else ops.convert(obj, dtypes.canonical(dtype))
    return as_array(obj) if dtype is None else _core.asarray(obj, dtypes.canonical(dtype))


def _convert(obj, dtype, ndmin: int = 0):
    if current_trace() is None:
        return _to_device(obj, dtype, ndmin)
    result = traced_array(obj, dtype)
    return result if result.ndim >= ndmin else ops.reshape(result, (1,) * (ndmin - result.ndim) + result.shape)


def array(object, dtype=None, *, copy=True, ndmin=0):
    """``object`` (an array, nested sequence or scalar) as an array; traced values pass through.

    Outside a compiled function the result is an ``xlac.Array`` on the device.

    >>> array([[1, 2], [3, 4]], dtype=np.float32)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    result = _convert(object, dtype, operator.index(ndmin))
    return _new_array(result, object) if copy is not False else result


@takes_device
def asarray(a, dtype=None, order=None, *, copy=None):
    """``a`` as an array, without a copy when it already is one of ``dtype``.

    >>> asarray([1, 2])
    Array([1, 2], dtype=int64)
    """
    result = _convert(a, dtype)
    return _new_array(result, a) if copy else result


def _new_array(result, source):
    """``result``, copied when it is ``source`` itself: writes to a copy must leave ``source`` alone."""
    if isinstance(source, Tracer):
        return views.copy(result) if result.value is source.value else result
    if result is source:
        return shapes.copy(result)
    return result


def _to_device(obj, dtype, ndmin: int):
    """Eager conversion: the data goes to the device as it is (an xlac.Array of the right type is kept)."""
    if isinstance(obj, Array) and (dtype is None or dtypes.canonical(dtype) == obj.dtype) and obj.ndim >= ndmin:
        return obj
    host = np.array(obj, dtype=None if dtype is None else dtypes.canonical(dtype), ndmin=ndmin, copy=None)
    return device_array(host)


for _plain in (empty, empty_like, identity, arange, array, asarray):   # public functions that dispatch inside
    _plain.__wrapped_numpy__ = _plain


def asanyarray(a, dtype=None, order=None, *, like=None):
    """``asarray``: xlac has no ndarray subclasses, so this is the same function.

    >>> np.asarray(asanyarray([1, 2]))
    array([1, 2])
    """
    return asarray(a, dtype=dtype)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``asarray`` with at least one dimension (xlac's arrays are always contiguous).

    >>> ascontiguousarray(3.0).shape
    (1,)
    """
    return shapes.atleast_1d(asarray(a, dtype=dtype))


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
    if current_trace() is not None:
        raise UnsupportedError(located("asarray_chkfinite: the check needs concrete values, which a compiled "
                                       "function does not have; check with xnp.isfinite(x).all() outside it"))
    result = asarray(a, dtype=dtype)
    if result.dtype.kind in "fc" and not bool(reductions.all(ufuncs.isfinite(result))):
        raise ValueError("array must not contain infs or NaNs")
    return result


def require(a, dtype=None, requirements=None, *, like=None):
    """``asarray`` with ``dtype``; the memory requirements (C, F, A, W, O, E) always hold or are moot.

    >>> require([1, 2], np.float32).dtype
    dtype('float32')
    """
    return asarray(a, dtype=dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``.

    >>> np.asarray(logspace(0, 2, 3))
    array([  1.,  10., 100.])
    """
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    base = asarray(base)
    if base.ndim:
        base = shapes.expand_dims(base, axis)
    result = ufuncs.power(base, y)
    return result if dtype is None else result.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (endpoints exact, as NumPy's).

    >>> np.asarray(geomspace(1, 1000, 4))
    array([   1.,   10.,  100., 1000.])
    """
    start, stop = asarray(start), asarray(stop)
    kind = dtypes.result_type(start, stop, float(num))
    start, stop = start.astype(kind), stop.astype(kind)
    if kind.kind == "c":
        raise UnsupportedError(located("geomspace: complex endpoints are not supported by xlac"))
    sign = ufuncs.where(start < 0, -1.0, 1.0).astype(kind)
    log_start, log_stop = ufuncs.log10(ufuncs.abs(start)), ufuncs.log10(ufuncs.abs(stop))
    result = linspace(log_start, log_stop, num=num, endpoint=endpoint, axis=0)
    result = ufuncs.power(asarray(10.0, kind), result) * sign
    if num > 0:
        result = shapes.concatenate([shapes.expand_dims(start, 0), result[1:]], axis=0)
        if endpoint and num > 1:
            result = shapes.concatenate([result[:-1], shapes.expand_dims(stop, 0)], axis=0)
    if axis != 0:
        result = shapes.moveaxis(result, 0, axis)
    return result if dtype is None else result.astype(dtype)
