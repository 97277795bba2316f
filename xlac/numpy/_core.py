"""Conversions every xlac.numpy function shares: operands to traced arrays, promotion, broadcasting.

>>> import numpy as np
>>> from xlac.trace.context import Trace
>>> with Trace():
...     x, y = promote("add", np.ones(3, np.float32), 2.0)
>>> (x.dtype, y.dtype, y.shape)
(dtype('float32'), dtype('float32'), (3,))
"""
from __future__ import annotations

import numbers

import numpy as np

from xlac.errors import TracerConversionError, located
from xlac.argument_specs import refuse_array_subclass
from xlac.ir import dtypes
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

PYTHON_SCALARS = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    return isinstance(x, PYTHON_SCALARS) and not isinstance(x, np.generic)


def asarray(x, dtype=None) -> Tracer:
    """``x`` as a traced array: Python scalars become weak constants, NumPy data strong constants."""
    if isinstance(x, Tracer):
        return x if dtype is None else ops.convert(x, dtype)
    if is_python_scalar(x):
        if dtype is None:
            return ops.constant(x, dtypes.default_dtype(x), weak=True)
        return ops.constant(_python_scalar_as(x, dtypes.canonical(dtype)), dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) or isinstance(e, (list, tuple)) for e in x):
        from xlac.numpy.shapes import stack     # shapes builds on this module
        return stack([asarray(e) for e in x]) if dtype is None else stack([asarray(e, dtype) for e in x])
    refuse_array_subclass(x, "xnp.asarray")
    if isinstance(x, np.ndarray) or hasattr(x, "__xlac_array__"):
        trace = current_trace()
        if trace is not None and (not isinstance(x, np.ndarray) or x.dtype in dtypes.SUPPORTED):
            captured = trace.capture(x)
            return captured if dtype is None else ops.convert(captured, dtype)
        if hasattr(x, "__xlac_array__"):
            x = x.__xlac_array__()
    try:
        array = np.asarray(x)
    except TracerConversionError:
        raise
    except Exception as e:
        raise TypeError(located(f"cannot convert {type(x).__name__} to an array: {e}")) from None
    if array.dtype not in dtypes.SUPPORTED:
        raise TypeError(located(f"xlac supports numeric arrays only; got {type(x).__name__} of dtype {array.dtype}"))
    return ops.constant(array, dtype)


def writable(dst, op: str) -> Tracer:
    """The traced array an in-place operation (``out=``, ``copyto``, ``put``) writes into: ``dst`` itself
    when traced; for a NumPy array the call made, its traced value (see ``xlac.outside_state``); for an
    ``xlac.Array`` or NumPy array from outside, the implicit argument that stands for it (written back after
    the call).
    Write with ``writable(dst, op)[...] = value`` or ``._store(value)``."""
    if isinstance(dst, Tracer):
        return dst
    trace = current_trace()
    if trace is not None and (isinstance(dst, np.ndarray) or hasattr(dst, "__xlac_array__")):
        return trace.capture(dst, write=True)
    raise TypeError(located(f"{op}: the destination must be an array (NumPy, xlac.Array or traced), got "
                            f"{type(dst).__name__}"))


def _python_scalar_as(x, dtype: np.dtype):
    """A Python scalar converted to ``dtype`` with NumPy 2's rule: out-of-range integers raise OverflowError."""
    if isinstance(x, int) and not isinstance(x, bool) and dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        if not info.min <= x <= info.max:
            raise OverflowError(located(f"Python integer {x} out of bounds for {dtype}"))
    return x


def result_type(*xs) -> np.dtype:
    return dtypes.result_type(*xs)


def promote(op: str, *xs, dtype=None) -> list[Tracer]:
    """Operands converted to their NumPy result dtype (or ``dtype``) and broadcast to one shape."""
    target = dtypes.canonical(dtype) if dtype is not None else _result_type_for(op, xs)
    weak = dtypes.is_weak_result(*xs)
    tracers = [ops.convert(asarray(x, target), target, weak=weak) for x in xs]
    shape = ops.broadcast_shapes(*(t.shape for t in tracers), op=op)
    return [ops.broadcast_to(t, shape) for t in tracers]


def _result_type_for(op: str, xs) -> np.dtype:
    try:
        return dtypes.result_type(*xs)
    except TracerConversionError:
        raise
    except TypeError as e:
        raise TypeError(located(f"{op}: no common dtype for the operands ({e})")) from None


def normalize_axis(axis: int, ndim: int, op: str = "") -> int:
    """``axis`` in ``[0, ndim)``; NumPy's AxisError (a ValueError and IndexError) otherwise."""
    if isinstance(axis, Tracer) or not isinstance(axis, numbers.Integral):
        raise TypeError(located(f"{op}: axis must be a Python integer, got {axis!r}"))
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(located(f"{op}: axis {axis} is out of bounds for array of dimension {ndim}"))
    return axis % ndim


def normalize_axes(axis, ndim: int, op: str = "") -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, op) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(located(f"{op}: duplicate value in 'axis'"))
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim, op),)


def float_dtype_for(dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's float ufuncs (exp, sin, ...) compute in: the smallest float that holds ``dtype``."""
    if dtypes.is_inexact(dtype):
        return dtype
    return np.result_type(dtype, np.float16)
