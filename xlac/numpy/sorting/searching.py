"""Binary search in sorted arrays: searchsorted and digitize.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.searchsorted(np.array([1, 2, 3]), np.array([2, 5])))
array([1, 3])
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import INT64
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, is_python_scalar
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.sorting._common import _checked, _concrete
from xlac.numpy.sorting.order import _flat, _is_complex, _less
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["searchsorted", "digitize"]


# ---------------------------------------------------------------- searchsorted, digitize


def _take_1d(x: Tracer, index: Tracer) -> Tracer:
    """``x[index]`` for a 1-D ``x`` and in-bounds int64 ``index`` of any shape."""
    return ops.gather(x, ops.reshape(index, index.shape + (1,)), offset_dims=(), collapsed_slice_dims=(0,),
                      start_index_map=(0,), slice_sizes=(1,))


def _scatter_1d(target: Tracer, index: Tracer, updates: Tracer, mode: str) -> Tracer:
    """``target`` (1-D) with ``updates[j]`` combined into ``target[index[j]]``; indices out of bounds
    are dropped."""
    return ops.scatter(target, ops.reshape(index, (index.size, 1)), _flat(updates), update_window_dims=(),
                       inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), mode=mode)


def _search(sorted_1d: Tracer, v: Tracer, right: bool) -> Tracer:
    """Insertion points (int64) of ``v`` in the sorted 1-D ``sorted_1d`` (same dtype): a binary search
    unrolled over the static length, each step one gather."""
    n = sorted_1d.shape[0]
    lo = ops.full(v.shape, 0, INT64)
    hi = ops.full(v.shape, n, INT64)
    one, two, last = (ops.full(v.shape, c, INT64) for c in (1, 2, n - 1))
    for _ in range(n.bit_length()):
        mid = ops.div(ops.add(lo, hi), two)
        probe = _take_1d(sorted_1d, ops.min(mid, last))
        go_right = ops.not_(_less(v, probe)) if right else _less(probe, v)
        active = ops.compare(lo, hi, "LT")
        lo = ops.select(ops.and_(active, go_right), ops.add(mid, one), lo)
        hi = ops.select(ops.and_(active, ops.not_(go_right)), mid, hi)
    return lo


def _strong_dtype(x, traced: Tracer) -> np.dtype:
    """The dtype NumPy's searchsorted compares the operand ``x`` (traced as ``traced``) in: a Python
    scalar its default dtype, not a weak one."""
    return dtypes.default_dtype(x) if is_python_scalar(x) else traced.dtype


@numpy_function
def searchsorted(a, v, side="left", sorter=None):
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted: for ``side="left"`` the first
    suitable position, for ``"right"`` the last. NaNs sort last, as in :func:`sort`. ``sorter`` holds
    indices that sort ``a``. Returns int64 of ``v``'s shape.

    Deviation: ``sorter`` indices out of bounds are clamped, not reported.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.searchsorted(np.array([1, 2, 2, 3]), np.array([2, 5]), side="right"))
    array([3, 4])
    """
    if side not in ("left", "right"):
        raise ValueError(located(f"searchsorted: search side must be 'left' or 'right' (got {side!r})"))
    a_t = asarray(a)
    if a_t.ndim != 1:
        raise ValueError(located(f"searchsorted: a must be 1-dimensional, got shape {a_t.shape}"))
    if sorter is not None:
        order = asarray(sorter)
        if not dtypes.is_int(order.dtype):
            raise TypeError(located(f"searchsorted: sorter must be an integer array, got dtype {order.dtype}"))
        if order.shape != a_t.shape:
            raise ValueError(located(f"searchsorted: sorter.size must equal a.size, got {order.shape} and "
                                     f"{a_t.shape}"))
        a_t = _take_1d(a_t, ops.convert(order, INT64)) if a_t.size else a_t
    v_t = asarray(v)
    common = dtypes.result_type(a_t.dtype, _strong_dtype(v, v_t))
    return _search(ops.convert(a_t, common), ops.convert(v_t, common), side == "right")


def _check_digitize(x, bins, right=False):
    edges = _concrete(bins)
    if edges is None or edges.ndim != 1 or edges.size < 2 or _is_complex(edges.dtype):
        return
    with np.errstate(invalid="ignore"):
        if not (np.all(edges[1:] >= edges[:-1]) or np.all(edges[1:] <= edges[:-1])):
            raise ValueError(located("digitize: bins must be monotonically increasing or decreasing"))


@_checked(_check_digitize)
def digitize(x, bins, right=False):
    """The index (int64) of the bin each element of ``x`` falls in: ``i`` with ``bins[i-1] <= x < bins[i]``
    for increasing ``bins`` (``<`` and ``<=`` swapped by ``right=True``; decreasing bins mirrored).

    Deviation: bins known on the host are checked to be monotonic, as NumPy checks; traced bins are not.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.digitize(np.array([0.5, 1.0, 2.5]), np.array([1.0, 2.0, 3.0])))
    array([0, 1, 2])
    """
    x_t = asarray(x)
    if _is_complex(x_t.dtype):
        raise TypeError(located("digitize: x may not be complex"))
    edges = asarray(bins)
    if edges.ndim != 1:
        raise ValueError(located(f"digitize: bins must be 1-dimensional, got shape {edges.shape}"))
    n = edges.shape[0]
    if n == 0:
        return ops.full(x_t.shape, 0, INT64)
    common = dtypes.result_type(edges.dtype, _strong_dtype(x, x_t))
    edges, values = ops.convert(edges, common), ops.convert(x_t, common)
    increasing = _search(edges, values, right=not right)
    decreasing = ops.sub(ops.full(x_t.shape, n, INT64),
                            _search(ops.reverse(edges, (0,)), values, right=not right))
    first, last = (ops.reshape(ops.slice(edges, (i,), (i + 1,)), ()) for i in (0, n - 1))
    falling = ops.broadcast_to(ops.compare(last, first, "LT"), x_t.shape)
    return ops.select(falling, decreasing, increasing)
