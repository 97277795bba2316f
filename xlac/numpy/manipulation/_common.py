"""What the parts of xlac.numpy.manipulation share: static arguments that travel by value in eager
calls (:class:`HostArray`, ``_static_function``) and slicing helpers for static positions.

>>> import numpy as np
>>> HostArray(np.arange(3)) == HostArray(np.arange(3))
True
"""
from __future__ import annotations

import inspect

import numpy as np

from xlac.ir.dtypes import INT64
from xlac.errors import TracerConversionError, UnsupportedError, located
from xlac.numpy import indexing
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__: list[str] = []


MAX_SLICE_RUNS = 16        # a static take along an axis with more runs than this becomes one gather


# ---------------------------------------------------------------- static arguments


class HostArray:
    """A NumPy array passed as a static argument of an eager call: hashable by value, dtype kept."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __hash__(self):
        return hash((self.array.dtype.str, self.array.shape, self.array.tobytes()))

    def __eq__(self, other):
        return (isinstance(other, HostArray) and self.array.dtype == other.array.dtype
                and self.array.shape == other.array.shape and self.array.tobytes() == other.array.tobytes())


def _as_static(x):
    """``x`` with its NumPy arrays and xlac.Arrays made :class:`HostArray` (static); tracers are left alone."""
    if isinstance(x, (list, tuple)):
        return type(x)(_as_static(e) for e in x)
    if isinstance(x, np.ndarray) or hasattr(x, "__xlac_array__"):
        return HostArray(np.asarray(x))
    return x


def _host(x):
    """A static argument as the user gave it: :class:`HostArray` back to NumPy arrays."""
    if isinstance(x, HostArray):
        return x.array
    if isinstance(x, (list, tuple)):
        return type(x)(_host(e) for e in x)
    return x


def _static_function(name: str, *static_params: str, view: str | None = None, check=None):
    """``@numpy_function`` named ``name`` whose ``static_params`` are static in eager calls (see HostArray);
    ``check(*args, **kwargs)`` runs first on an eager call's concrete arguments (bounds of index arrays
    that travel as dynamic arguments)."""
    def decorate(fn):
        fn.__name__ = fn.__qualname__ = name
        traced = numpy_function(fn, view=view)
        names = list(inspect.signature(fn).parameters)
        positions = [(names.index(p), p) for p in static_params]

        def public(*args, **kwargs):
            if current_trace() is None:
                args = list(args)
                for i, param in positions:
                    if i < len(args):
                        args[i] = _as_static(args[i])
                    elif param in kwargs:
                        kwargs[param] = _as_static(kwargs[param])
                if check is not None:
                    check(*args, **kwargs)
            return traced(*args, **kwargs)

        public.__name__ = public.__qualname__ = name
        public.__doc__ = fn.__doc__
        public.__module__ = fn.__module__
        public.__wrapped_numpy__ = fn
        public.__signature__ = inspect.signature(fn)
        return public
    return decorate


def _not_traced(value, op: str, what: str, hint: str = ""):
    if isinstance(value, Tracer):
        raise TracerConversionError(located(
            f"{op}: {what} must be known when tracing (a Python value or NumPy array), got a traced "
            f"{value.value.type}; it decides the shape of the result.{(' ' + hint) if hint else ''}"))
    return _host(value)


def _plain(fn):
    """A public function that dispatches inside (it calls xlac.numpy functions, or needs no trace)."""
    fn.__wrapped_numpy__ = fn
    return fn


# ---------------------------------------------------------------- slicing helpers


def _axis_slice(x: Tracer, axis: int, start: int, stop: int) -> Tracer:
    begin, end = [0] * x.ndim, list(x.shape)
    begin[axis], end[axis] = start, stop
    return ops.slice(x, begin, end)


def _runs(index: np.ndarray) -> list[tuple[int, int, int]]:
    """``index`` as (first, length, step) runs with steps 1, -1 or 0."""
    runs, i, n = [], 0, len(index)
    while i < n:
        step = int(index[i + 1] - index[i]) if i + 1 < n else 1
        j = i + 1
        if step in (-1, 0, 1):
            while j < n and index[j] - index[j - 1] == step:
                j += 1
        else:
            step = 1
        runs.append((int(index[i]), j - i, step))
        i = j
    return runs


def _take_static(x: Tracer, axis: int, index) -> Tracer:
    """``x`` indexed along ``axis`` by the static ``index`` (values in range): slices, reverses and
    broadcasts joined by one concatenate, or a gather when the index has many runs."""
    index = np.asarray(index, INT64).reshape(-1)
    runs = _runs(index)
    if len(runs) > MAX_SLICE_RUNS:
        return indexing.take.__wrapped_numpy__(x, index, axis)
    pieces = []
    for first, length, step in runs:
        low = first - length + 1 if step < 0 else first
        piece = _axis_slice(x, axis, low, low + (1 if step == 0 else length))
        if step < 0:
            piece = ops.reverse(piece, (axis,))
        elif step == 0 and length > 1:
            piece = ops.broadcast_to(piece, x.shape[:axis] + (length,) + x.shape[axis + 1:])
        pieces.append(piece)
    if not pieces:
        return _axis_slice(x, axis, 0, 0)
    return ops.concatenate(pieces, axis)


def _moved_last(x: Tracer, axis: int) -> Tracer:
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    return ops.transpose(x, order)


def _concrete_only(op: str, suggestion: str):
    if current_trace() is not None:
        raise UnsupportedError(located(f"{op}: the result's length depends on the values, which a compiled "
                                       f"function does not know; {suggestion}"))
