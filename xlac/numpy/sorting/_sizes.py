"""Results whose size depends on the data: the size= / length= handling shared by the set functions,
nonzero and bincount. Inside a compiled function they need a static size (as in JAX); outside one the
size is counted first on the concrete data.

>>> from xlac.numpy.sorting._sizes import _static_size
>>> _static_size(3, "unique")
3
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xlac.ir.dtypes import INT64
from xlac.errors import located
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.sorting.order import _positions
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


# ---------------------------------------------------------------- data-dependent sizes


def _needs_size(op: str, keyword: str, what: str) -> None:
    raise ValueError(located(
        f"{op}: {what} depends on the data, so inside a compiled function it must be given as a static "
        f"number: pass {keyword}=N (as jax.numpy.{op} takes it); the result is padded or cut to N"))


def _sized(count, keyword: str = "size"):
    """A public xlac.numpy function whose ``keyword`` (a static result size) may be left out when it runs
    eagerly: ``count(*args, **kwargs)`` then computes it from the concrete data first, on the device.
    Inside a trace it must be given."""
    def decorate(fn):
        traced = numpy_function(fn)

        @functools.wraps(fn)
        def public(*args, **kwargs):
            if kwargs.get(keyword) is None and current_trace() is None:
                kwargs[keyword] = count(*args, **kwargs)
            return traced(*args, **kwargs)
        public.__wrapped_numpy__ = fn
        return public
    return decorate


def _static_size(size, op: str, keyword: str = "size") -> int:
    if isinstance(size, Tracer) or isinstance(size, (bool, np.bool_)):
        raise TypeError(located(f"{op}: {keyword}= must be a static non-negative integer, got {size!r}"))
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(located(f"{op}: {keyword}= must be a static non-negative integer, got {size!r}")) from None
    if size < 0:
        raise ValueError(located(f"{op}: {keyword}= must be non-negative, got {size}"))
    return size


def _inclusive_count(flags: Tracer) -> Tracer:
    """Running count (int64) of the true ``flags`` along a 1-D array."""
    return ops.cumulative(ops.convert(flags, INT64), "sum", 0)


def _resize(x: Tracer, size: int, fill) -> Tracer:
    """The 1-D ``x`` cut or padded (with the scalar ``fill``) to length ``size``."""
    n = x.shape[0]
    if size <= n:
        return ops.slice(x, (0,), (size,))
    return ops.pad(x, ops.convert(asarray(fill), x.dtype), (0,), (size - n,))


def _compact(flags: Tracer, values, size: int):
    """(each 1-D array of ``values`` at the positions where ``flags`` holds, in order, cut or padded to
    length ``size``; a bool mask of the ``size`` slots that hold one): a stable sort of the flags."""
    values = list(values)
    if flags.shape[0] > 1:
        values = list(ops.sort([ops.not_(flags)] + values, 0, is_stable=True, num_keys=1)[1:])
    found = ops.reduce(ops.convert(flags, INT64), "sum", (0,))
    filled = ops.compare(_positions((size,), 0), ops.broadcast_to(found, (size,)), "LT")
    return [_resize(v, size, 0) for v in values], filled
