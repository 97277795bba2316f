"""NumPy's order and the functions that sort by it: sort, argsort, partition, argpartition, lexsort,
sort_complex.

Every sort is stable and orders as NumPy does: NaNs after every number, -0.0 equal to 0.0, complex
numbers by real part then imaginary part (those with NaN parts last). Indices are int64 (NumPy's intp).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.argsort(np.array([3.0, np.nan, -1.0])))
array([2, 0, 1])
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import BOOL, COMPLEX128, COMPLEX64, INT64, UINT8
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["sort", "argsort", "partition", "argpartition", "lexsort", "sort_complex"]


# ---------------------------------------------------------------- NumPy's order


def _isnan(x: Tracer) -> Tracer:
    return ops.compare(x, x, "NE")


def _is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def _order_keys(x: Tracer) -> list[Tracer]:
    """Keys whose lexicographic order, under the sort primitive's comparison (NaN after numbers), is
    NumPy's order of ``x``. Complex numbers sort as ``[R + Rj, R + nanj, nan + Rj, nan + nanj]``: by which
    parts are NaN, then real part, then imaginary part."""
    if not _is_complex(x.dtype):
        return [x]
    re, im = ops.real(x), ops.imag(x)
    nan_re, nan_im = ops.convert(_isnan(re), UINT8), ops.convert(_isnan(im), UINT8)
    category = ops.add(ops.add(nan_re, nan_re), nan_im)
    return [category, re, im]


def _key_less(x: Tracer, y: Tracer) -> Tracer:
    """``x < y`` for real keys, NaN after every number."""
    if x.dtype == BOOL:
        return ops.and_(ops.not_(x), y)
    less = ops.compare(x, y, "LT")
    if dtypes.is_float(x.dtype):
        less = ops.or_(less, ops.and_(ops.not_(_isnan(x)), _isnan(y)))
    return less


def _key_equal(x: Tracer, y: Tracer) -> Tracer:
    """``x == y`` for real keys, two NaNs equal (neither sorts before the other)."""
    equal = ops.compare(x, y, "EQ")
    if dtypes.is_float(x.dtype):
        equal = ops.or_(equal, ops.and_(_isnan(x), _isnan(y)))
    return equal


def _less(x: Tracer, y: Tracer) -> Tracer:
    """``x < y`` in NumPy's sort order (the comparison ``searchsorted`` uses)."""
    xs, ys = _order_keys(x), _order_keys(y)
    result = _key_less(xs[-1], ys[-1])
    for kx, ky in zip(reversed(xs[:-1]), reversed(ys[:-1])):
        result = ops.or_(_key_less(kx, ky), ops.and_(_key_equal(kx, ky), result))
    return result


def _sorted(x: Tracer, axis: int, payloads=(), descending: bool = False):
    """``x`` sorted stably along ``axis`` in NumPy's order, and ``payloads`` permuted alongside it.
    Descending keeps equal elements in their input order too (the Array API's stable descending sort)."""
    payloads = list(payloads)
    if x.shape[axis] <= 1:
        return x, payloads
    if descending:
        x, payloads = ops.reverse(x, (axis,)), [ops.reverse(p, (axis,)) for p in payloads]
    keys = _order_keys(x)
    carried = [x] if len(keys) > 1 else []
    out = ops.sort(keys + carried + payloads, axis, is_stable=True, num_keys=len(keys))
    values, payloads = out[len(keys) - 1 + len(carried)], list(out[len(keys) + len(carried):])
    if descending:
        values, payloads = ops.reverse(values, (axis,)), [ops.reverse(p, (axis,)) for p in payloads]
    return values, payloads


def _positions(shape, axis: int) -> Tracer:
    return ops.iota(shape, INT64, axis)


def _argsorted(x: Tracer, axis: int, descending: bool = False) -> Tracer:
    return _sorted(x, axis, [_positions(x.shape, axis)], descending)[1][0]


def _flat(x: Tracer) -> Tracer:
    return ops.reshape(x, (x.size,))


# ---------------------------------------------------------------- sort, argsort, partition, lexsort


def _sort_axis(x: Tracer, axis, op: str):
    """(the array to sort, the axis): ``axis=None`` sorts the flattened array."""
    if axis is None:
        return _flat(x), 0
    return x, normalize_axis(axis, x.ndim, op)


def _check_sort_options(op: str, kind, order, stable) -> None:
    if order is not None:
        raise ValueError(located(f"{op}: Cannot specify order when the array has no fields."))
    if kind is not None and stable is not None:
        raise ValueError(located(f"{op}: `kind` and keyword parameters can't be provided at the same time. "
                                 "Use only one of them."))
    if kind is not None and (not isinstance(kind, str) or kind[:1].lower() not in ("q", "m", "h", "s")):
        raise ValueError(located(f"{op}: sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})"))


@numpy_function
def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """``a`` sorted along ``axis`` (None: the flattened array); NaNs last.

    ``descending=True`` (the Array API's) sorts from largest to smallest, equal elements kept in order.

    Deviation: every ``kind`` sorts stably, so equal elements (-0.0 and 0.0 among them) keep their input
    order; NumPy's default quicksort leaves their order unspecified.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.sort(np.array([[3, 1, 2], [0, 5, 4]]), axis=1))
    array([[1, 2, 3],
           [0, 4, 5]])
    >>> np.asarray(xnp.sort(np.array([1, 3, 2]), descending=True))
    array([3, 2, 1])
    """
    _check_sort_options("sort", kind, order, stable)
    x, axis = _sort_axis(asarray(a), axis, "sort")
    return _sorted(x, axis, descending=descending)[0]


@numpy_function
def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Indices (int64) that sort ``a`` along ``axis``: equal elements in their input order, as NumPy's
    stable sort gives them; NaNs last.

    Deviation: every ``kind`` is stable (NumPy's default quicksort may order ties differently).

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.argsort(np.array([3.0, 1.0, np.nan, 1.0])))
    array([1, 3, 0, 2])
    """
    _check_sort_options("argsort", kind, order, stable)
    x = asarray(a)
    if x.ndim == 0:
        x, axis = ops.reshape(x, (1,)), None         # NumPy's argsort of a 0-d array is array([0])
    x, axis = _sort_axis(x, axis, "argsort")
    return _argsorted(x, axis, descending)


def _check_kth(kth, n: int, op: str) -> None:
    """NumPy's checks of ``kth`` (an int or a sequence of ints) for an axis of length ``n``."""
    if isinstance(kth, Tracer):
        raise TypeError(located(f"{op}: kth must be a static integer or sequence of integers, not a traced value"))
    for k in kth if isinstance(kth, (list, tuple)) else [kth]:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(located(f"{op}: Partition index must be integer"))
        k = int(k) + n if k < 0 else int(k)
        if not 0 <= k < n:
            raise ValueError(located(f"{op}: kth(={k}) out of bounds ({n})"))


def _partition_operand(op: str, a, kth, axis, kind, order):
    if kind != "introselect":
        raise ValueError(located(f"{op}: kind must be 'introselect', got {kind!r}"))
    if order is not None:
        raise ValueError(located(f"{op}: Cannot specify order when the array has no fields."))
    x, axis = _sort_axis(asarray(a), axis, op)
    _check_kth(kth, x.shape[axis], op)
    return x, axis


@numpy_function_with_static("kth")
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` rearranged along ``axis`` so that the element at each ``kth`` position is the one a sort
    would put there, smaller elements before it and larger after.

    Deviation: the result is the fully sorted array (stable), one of the arrangements NumPy allows.

    >>> import xlac.numpy as xnp
    >>> int(xnp.partition(np.array([7, 1, 5, 3]), 2)[2])
    5
    """
    x, axis = _partition_operand("partition", a, kth, axis, kind, order)
    return _sorted(x, axis)[0]


@numpy_function_with_static("kth")
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices (int64) that partition ``a`` around each ``kth`` position along ``axis``.

    Deviation: the result is a full stable argsort, one of the answers NumPy allows.

    >>> import xlac.numpy as xnp
    >>> int(xnp.argpartition(np.array([7, 1, 5, 3]), 0)[0])
    1
    """
    x, axis = _partition_operand("argpartition", a, kth, axis, kind, order)
    return _argsorted(x, axis)


def _lexsort_keys(keys) -> list[Tracer]:
    if isinstance(keys, (list, tuple)):
        if not keys:
            raise TypeError(located("lexsort: need sequence of keys with len > 0 in lexsort"))
        return [asarray(k) for k in keys]
    stacked = asarray(keys)
    if stacked.ndim == 0:
        raise TypeError(located("lexsort: need sequence of keys with len > 0 in lexsort"))
    rest = stacked.shape[1:]
    return [ops.reshape(ops.slice(stacked, (i,) + (0,) * len(rest), (i + 1,) + rest), rest)
            for i in range(stacked.shape[0])]


@numpy_function
def lexsort(keys, axis=-1):
    """Indices (int64) that sort by several keys: the last key first, ties broken by the one before it,
    and so on. ``keys`` is a sequence of arrays of one shape, or an array whose rows are the keys.

    >>> import xlac.numpy as xnp
    >>> surnames, first = np.array([2, 1, 2, 1]), np.array([0, 5, 1, 3])
    >>> np.asarray(xnp.lexsort((first, surnames)))
    array([3, 1, 0, 2])
    """
    keys = _lexsort_keys(keys)
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError(located(f"lexsort: all keys need to be the same shape, got "
                                 f"{', '.join(str(k.shape) for k in keys)}"))
    if not shape:
        return ops.constant(0, INT64)
    axis = normalize_axis(axis, len(shape), "lexsort")
    positions = _positions(shape, axis)
    if shape[axis] <= 1:
        return positions
    operands = [part for k in reversed(keys) for part in _order_keys(k)]
    return ops.sort(operands + [positions], axis, is_stable=True, num_keys=len(operands))[-1]


def _sort_complex_dtype(dtype: np.dtype) -> np.dtype:
    if _is_complex(dtype):
        return dtype
    return COMPLEX64 if dtype in (np.dtype(t) for t in ("int8", "uint8", "int16", "uint16")) else COMPLEX128


@numpy_function
def sort_complex(a):
    """``a`` sorted along its last axis by real part, then imaginary part, as a complex array
    (complex64 for 8- and 16-bit integers, complex128 for other real dtypes, as NumPy's).

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.sort_complex(np.array([1 + 2j, 1 - 1j, 0 + 5j])))
    array([0.+5.j, 1.-1.j, 1.+2.j])
    """
    x = asarray(a)
    axis = normalize_axis(-1, x.ndim, "sort_complex")
    return ops.convert(_sorted(x, axis)[0], _sort_complex_dtype(x.dtype))
