"""Set functions: the unique family, union1d, intersect1d, setdiff1d, setxor1d, isin, and nonzero,
argwhere, flatnonzero. Results whose size depends on the data take a static ``size=`` inside a
compiled function (nonzero, argwhere and flatnonzero without one give values whose length is known only when
the program runs).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.intersect1d(np.array([1, 3, 4]), np.array([3, 1, 2])))
array([1, 3])
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

from xlac.ir.dtypes import BOOL, INT64
from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import dynamic_call, numpy_function
from xlac.numpy.sorting._sizes import _compact, _inclusive_count, _needs_size, _sized, _static_size
from xlac.numpy.sorting.order import _flat, _isnan, _order_keys, _positions, _sorted
from xlac.numpy.sorting.searching import _scatter_1d, _search, _strong_dtype, _take_1d
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "union1d", "intersect1d",
           "setdiff1d", "setxor1d", "isin", "nonzero", "argwhere", "flatnonzero"]


# ---------------------------------------------------------------- unique


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _unique_items(x: Tracer, axis, op: str):
    """(``x`` as rows, one per item ``unique`` compares: its elements for ``axis=None`` or a 1-D ``x``,
    else its slices along ``axis``; the shape of one item, None for elements)."""
    if axis is not None:
        axis = normalize_axis(axis, x.ndim, op)
    if axis is None or x.ndim == 1:
        return ops.reshape(x, (x.size, 1)), None
    moved = ops.transpose(x, [axis] + [i for i in range(x.ndim) if i != axis])
    return ops.reshape(moved, (x.shape[axis], math.prod(moved.shape[1:]))), moved.shape[1:]


def _take_rows(rows: Tracer, index: Tracer) -> Tracer:
    """``rows[index]`` for a 2-D ``rows`` and in-bounds int64 ``index`` (1-D)."""
    return ops.gather(rows, ops.reshape(index, (index.size, 1)), offset_dims=(1,), collapsed_slice_dims=(0,),
                      start_index_map=(0,), slice_sizes=(1, rows.shape[1]))


def _groups(rows: Tracer, equal_nan: bool):
    """(the rows sorted lexicographically in NumPy's order, where each sorted row came from, which sorted
    rows start a new value): what everything ``unique`` returns is made of."""
    n, m = rows.shape
    positions = _positions((n,), 0)
    keys = [k for j in range(m) for k in _order_keys(ops.reshape(ops.slice(rows, (0, j), (n, j + 1)), (n,)))]
    origin = positions
    if n > 1 and keys:
        origin = ops.sort(keys + [positions], 0, is_stable=True, num_keys=len(keys))[-1]
    if n == 0:
        return rows, origin, ops.full((0,), True, BOOL)
    ordered = _take_rows(rows, origin)
    head, tail = ops.slice(ordered, (0, 0), (n - 1, m)), ops.slice(ordered, (1, 0), (n, m))
    differs = ops.compare(tail, head, "NE")
    if equal_nan and dtypes.is_inexact(rows.dtype):
        differs = ops.and_(differs, ops.not_(ops.and_(_isnan(tail), _isnan(head))))
    differs = ops.reduce(differs, "or", (1,))
    return ordered, origin, ops.concatenate([ops.full((1,), True, BOOL), differs], 0)


@numpy_function
def _distinct_count(ar, equal_nan, axis):
    rows, item_shape = _unique_items(asarray(ar), axis, "unique")
    return ops.reduce(ops.convert(_groups(rows, equal_nan and item_shape is None)[2], INT64), "sum", (0,))


def _unique_size(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
                 **kwargs) -> int:
    return int(_distinct_count(ar, bool(equal_nan), axis))


def _unique_parts(op: str, ar, axis, equal_nan: bool, size, fill_value, want_index: bool, want_inverse: bool,
                  want_counts: bool):
    """(values, first indices, inverse, counts) of ``unique``, each None when not wanted. Slices along an
    axis holding NaNs never compare equal (NumPy's rule)."""
    if size is None:
        _needs_size(op, "size", "the number of unique values")
    size = _static_size(size, op)
    x = asarray(ar)
    rows, item_shape = _unique_items(x, axis, op)
    n, m = rows.shape
    ordered, origin, starts = _groups(rows, equal_nan and item_shape is None)
    # one slot more than asked: where the run after the last value kept begins
    (first, begins), filled = _compact(starts, [origin, _positions((n,), 0)], size + 1)
    next_begins, next_filled = ops.slice(begins, (1,), (size + 1,)), ops.slice(filled, (1,), (size + 1,))
    first, begins, filled = (ops.slice(v, (0,), (size,)) for v in (first, begins, filled))
    first = ops.select(filled, first, ops.full((size,), 0, INT64))
    if fill_value is not None:
        fill = ops.convert(asarray(fill_value), x.dtype)
        if fill.shape != ():
            raise ValueError(located(f"{op}: fill_value must be a scalar, got shape {fill.shape}"))
        fill = ops.broadcast_to(fill, (size, m))
    elif n:
        fill = ops.broadcast_to(ops.slice(ordered, (0, 0), (1, m)), (size, m))    # the smallest, as JAX pads
    else:
        fill = ops.full((size, m), 0, x.dtype)
    uniques = ops.select(ops.broadcast_in_dim(filled, (size, m), (0,)), _take_rows(rows, first), fill) if n else fill
    if item_shape is None:
        uniques = ops.reshape(uniques, (size,))
    else:
        uniques = ops.reshape(uniques, (size,) + tuple(item_shape))
        axis = normalize_axis(axis, x.ndim, op)
        uniques = ops.transpose(uniques, list(range(1, axis + 1)) + [0] + list(range(axis + 1, x.ndim)))
    inverse = None
    if want_inverse:
        group = ops.sub(_inclusive_count(starts), ops.full(starts.shape, 1, INT64))
        inverse = _scatter_1d(ops.full((n,), 0, INT64), origin, group, "set")
        inverse = ops.reshape(inverse, x.shape) if item_shape is None else inverse
    counts = None
    if want_counts:       # from where each value's run begins to where the next one's does
        ends = ops.select(next_filled, next_begins, ops.full((size,), n, INT64))
        counts = ops.select(filled, ops.sub(ends, begins), ops.full((size,), 0, INT64))
    return uniques, first if want_index else None, inverse, counts


@_sized(_unique_size)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True, size=None, fill_value=None):
    """The sorted distinct values of ``ar`` (flattened, or its distinct slices along ``axis``), and
    optionally the index of each one's first occurrence, the inverse (``values[inverse]`` rebuilds ``ar``;
    ``ar``'s shape for ``axis=None``) and the counts, all int64. ``equal_nan=True`` makes all NaNs one
    value (for ``axis=None`` or 1-D ``ar``, as in NumPy).

    ``size=`` (as JAX's) fixes the number of values: fewer are padded with ``fill_value`` (default: the
    smallest value; first indices and counts with 0), more are cut. It is needed inside a compiled
    function; outside one the result is NumPy's exactly.

    Deviation: inside a compiled function ``size=`` is required; ``sorted=False`` still sorts; of values
    that compare equal (-0.0 and 0.0) the first occurrence is returned, where NumPy's pick depends on its
    internal sort or hash table.

    >>> import xlac.numpy as xnp
    >>> values, counts = xnp.unique(np.array([2, 1, 2, 5]), return_counts=True)
    >>> np.asarray(values), np.asarray(counts)
    (array([1, 2, 5]), array([1, 2, 1]))
    >>> np.asarray(xnp.unique(np.array([2, 1, 2]), size=4, fill_value=-1))
    array([ 1,  2, -1, -1])
    >>> np.asarray(xnp.unique(np.array([[1, 2], [0, 5], [1, 2]]), axis=0))
    array([[0, 5],
           [1, 2]])
    """
    parts = _unique_parts("unique", ar, axis, equal_nan, size, fill_value, return_index, return_inverse,
                          return_counts)
    wanted = (parts[0],) + tuple(p for p in parts[1:] if p is not None)
    return wanted[0] if len(wanted) == 1 else wanted


def _unique_api(op: str, ar, size, fill_value, *, index=False, inverse=False, counts=False):
    return _unique_parts(op, ar, None, False, size, fill_value, index, inverse, counts)


def _array_api_unique(fn, result=None):
    """A public Array API unique function: ``size`` counted eagerly when left out (NaNs all distinct),
    the plain tuple the numpy_function returns wrapped in NumPy's named tuple."""
    sized = _sized(lambda x, *, size=None, fill_value=None: int(_distinct_count(x, False, None)))(fn)
    if result is None:
        return sized

    @functools.wraps(fn)
    def public(x, /, *, size=None, fill_value=None):
        return result(*sized(x, size=size, fill_value=fill_value))
    public.__wrapped_numpy__ = sized.__wrapped_numpy__
    return public


def unique_values(x, /, *, size=None, fill_value=None):
    """The distinct values of ``x``, sorted; every NaN is its own value (the Array API's unique_values).

    Deviation: sorted, where NumPy 2.3+ may return them in hash order (the Array API leaves it open);
    inside a compiled function ``size=`` is required, as for all four unique_* functions.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.unique_values(np.array([3.0, np.nan, 3.0, np.nan])))
    array([ 3., nan, nan])
    """
    return _unique_api("unique_values", x, size, fill_value)[0]


def unique_counts(x, /, *, size=None, fill_value=None):
    """``UniqueCountsResult(values, counts)``: the distinct values of ``x`` and how often each occurs.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.unique_counts(np.array([1, 1, 4])).counts)
    array([2, 1])
    """
    values, _, _, counts = _unique_api("unique_counts", x, size, fill_value, counts=True)
    return values, counts


def unique_inverse(x, /, *, size=None, fill_value=None):
    """``UniqueInverseResult(values, inverse_indices)``: ``values[inverse_indices]`` rebuilds ``x``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.unique_inverse(np.array([[5, 1], [1, 5]])).inverse_indices)
    array([[1, 0],
           [0, 1]])
    """
    values, _, inverse, _ = _unique_api("unique_inverse", x, size, fill_value, inverse=True)
    return values, inverse


def unique_all(x, /, *, size=None, fill_value=None):
    """``UniqueAllResult(values, indices, inverse_indices, counts)`` of ``x``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.unique_all(np.array([7, 3, 7])).indices)
    array([1, 0])
    """
    return _unique_api("unique_all", x, size, fill_value, index=True, inverse=True, counts=True)


unique_values = _array_api_unique(unique_values)
unique_counts = _array_api_unique(unique_counts, UniqueCountsResult)
unique_inverse = _array_api_unique(unique_inverse, UniqueInverseResult)
unique_all = _array_api_unique(unique_all, UniqueAllResult)


# ---------------------------------------------------------------- nonzero, argwhere, flatnonzero, isin


def _nonzero_mask(x: Tracer) -> Tracer:
    if x.dtype == BOOL:
        return x
    return ops.compare(x, ops.full(x.shape, 0, x.dtype), "NE")


@numpy_function
def _nonzero_count(a):
    return ops.reduce(ops.convert(_flat(_nonzero_mask(asarray(a))), INT64), "sum", (0,))


def _nonzero_size(a, *args, **kwargs) -> int:
    return int(_nonzero_count(a))


def _fill_values(fill_value, ndim: int, op: str) -> list:
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ValueError(located(f"{op}: fill_value has {len(fill_value)} entries for an array of "
                                     f"{ndim} dimensions"))
        return list(fill_value)
    return [fill_value] * ndim


def _coordinates(x: Tracer, size: int, fill_value, op: str) -> list[Tracer]:
    """One int64 array of length ``size`` per axis of ``x``: the coordinates of its nonzero elements
    in C order, padded with ``fill_value`` (a scalar or one per axis)."""
    fills = [ops.convert(asarray(f), INT64) for f in _fill_values(fill_value, x.ndim, op)]
    mask = _flat(_nonzero_mask(x))
    (flat_index,), valid = _compact(mask, [_positions(mask.shape, 0)], size)
    coordinates, stride = [], 1
    for axis in reversed(range(x.ndim)):
        dim = x.shape[axis]
        c = ops.div(flat_index, ops.full((size,), stride, INT64)) if stride > 1 else flat_index
        c = ops.rem(c, ops.full((size,), dim, INT64)) if axis > 0 else c
        coordinates.append(ops.select(valid, c, ops.broadcast_to(fills[axis], (size,))))
        stride *= dim
    return coordinates[::-1]


def _nonzero_operand(a, op: str):
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError(located(f"{op}: Calling nonzero on 0d arrays is not allowed. Use "
                                 "np.atleast_1d(scalar).nonzero() instead."))
    return x


@_sized(_nonzero_size)
def nonzero(a, *, size=None, fill_value=None):
    """A tuple with, per axis, the indices (int64) of ``a``'s nonzero elements, in C order.

    ``size=`` (as JAX's) fixes how many: fewer are padded with ``fill_value`` (default 0; a scalar or
    one per axis), more are cut. Without it, inside a compiled function, each is a value whose length is
    known only when the program runs (:mod:`xlac.numpy.dynamic_extent_indices`): it indexes, reduces,
    combines elementwise, writes and is returned as NumPy's, but cannot give its shape as Python ints.

    >>> import xlac.numpy as xnp
    >>> rows, cols = xnp.nonzero(np.array([[0, 3], [4, 0]]))
    >>> np.asarray(rows), np.asarray(cols)
    (array([0, 1]), array([1, 0]))
    """
    x = _nonzero_operand(a, "nonzero")
    if size is None:          # a value whose length is known only when the program runs
        return dynamic_call(nonzero, (x,), {"fill_value": fill_value})
    size = _static_size(size, "nonzero")
    return tuple(_coordinates(x, size, fill_value, "nonzero"))


@_sized(_nonzero_size)
def argwhere(a, *, size=None, fill_value=None):
    """The indices (int64) of ``a``'s nonzero elements, one row each: shape ``(N, a.ndim)``.
    ``size=`` and ``fill_value=`` as in :func:`nonzero`.

    Without ``size=``, inside a compiled function: a value whose length is known only when the program runs.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.argwhere(np.array([[0, 3], [4, 0]])))
    array([[0, 1],
           [1, 0]])
    """
    x = asarray(a)
    if size is None:
        return dynamic_call(argwhere, (x,), {"fill_value": fill_value})
    size = _static_size(size, "argwhere")
    if x.ndim == 0:
        return ops.full((size, 0), 0, INT64)
    columns = _coordinates(x, size, fill_value, "argwhere")
    return ops.concatenate([ops.reshape(c, (size, 1)) for c in columns], 1)


@_sized(_nonzero_size)
def flatnonzero(a, *, size=None, fill_value=None):
    """The indices (int64) of the nonzero elements of the flattened ``a``; ``size=`` as in :func:`nonzero`.

    Without ``size=``, inside a compiled function: a value whose length is known only when the program runs.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.flatnonzero(np.array([[0, 3], [4, 0]])))
    array([1, 2])
    """
    x = asarray(a)
    if size is None:
        return dynamic_call(flatnonzero, (x,), {"fill_value": fill_value})
    size = _static_size(size, "flatnonzero")
    return _coordinates(_flat(x), size, fill_value, "flatnonzero")[0]


@numpy_function
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` occurs in ``test_elements`` (bool, ``element``'s shape); NaN
    is in nothing, -0.0 matches 0.0. ``invert=True`` negates; ``kind`` is accepted and ignored.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.isin(np.array([[1, 2], [3, 4]]), [2, 4, 9]))
    array([[False,  True],
           [False,  True]])
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(located(f"isin: Invalid kind: '{kind}'. Please use None, 'sort' or 'table'."))
    x = asarray(element)
    tests = _flat(asarray(test_elements))
    common = dtypes.result_type(_strong_dtype(element, x), tests.dtype)
    found = _found(ops.convert(x, common), ops.convert(tests, common))[0]
    return ops.not_(found) if invert else found


def _found(x: Tracer, tests: Tracer):
    """(whether each element of ``x`` equals one of the 1-D ``tests`` (same dtype), the position in
    ``tests`` of the first equal one, where there is one)."""
    m = tests.shape[0]
    if m == 0:
        return ops.full(x.shape, False, BOOL), ops.full(x.shape, 0, INT64)
    ordered, (origin,) = _sorted(tests, 0, [_positions((m,), 0)])
    at = ops.min(_search(ordered, x, right=False), ops.full(x.shape, m - 1, INT64))
    return ops.compare(_take_1d(ordered, at), x, "EQ"), _take_1d(origin, at)


# ---------------------------------------------------------------- union1d, intersect1d, setdiff1d, setxor1d


def _set_operands(ar1, ar2, promote: bool = True):
    """Both operands flattened, in their common dtype when ``promote``."""
    a, b = _flat(asarray(ar1)), _flat(asarray(ar2))
    if promote:
        common = dtypes.result_type(_strong_dtype(ar1, a), _strong_dtype(ar2, b))
        a, b = ops.convert(a, common), ops.convert(b, common)
    return a, b


def _distinct(x: Tracer):
    """(the 1-D ``x`` sorted, where each element came from, which start a new value; NaNs one value)."""
    ordered, origin, starts = _groups(ops.reshape(x, (x.size, 1)), True)
    return ops.reshape(ordered, (x.size,)), origin, starts


def _union(ar1, ar2, assume_unique):
    a, b = _set_operands(ar1, ar2)
    values, _, starts = _distinct(ops.concatenate([a, b], 0))
    return values, starts, []


def _difference(ar1, ar2, assume_unique):
    a, b = _set_operands(ar1, ar2, promote=False)
    values, keep = (a, None) if assume_unique else _distinct(a)[::2]
    common = dtypes.result_type(values.dtype, b.dtype)
    absent = ops.not_(_found(ops.convert(values, common), ops.convert(b, common))[0])
    return values, absent if keep is None else ops.and_(keep, absent), []


def _intersection(ar1, ar2, assume_unique):
    a, b = _set_operands(ar1, ar2)
    values, origin, starts = _distinct(a)
    found, where_in_b = _found(values, b)
    return values, ops.and_(starts, found), [origin, where_in_b]


def _exclusive(ar1, ar2, assume_unique):
    a, b = _set_operands(ar1, ar2)
    (a_values, _, a_starts), (b_values, _, b_starts) = _distinct(a), _distinct(b)
    a_only = ops.and_(a_starts, ops.not_(_found(a_values, b)[0]))
    b_only = ops.and_(b_starts, ops.not_(_found(b_values, a)[0]))
    values, (keep,) = _sorted(ops.concatenate([a_values, b_values], 0), 0,
                              [ops.concatenate([a_only, b_only], 0)])
    return values, keep, []


_SET_OPERATIONS = {"union1d": _union, "setdiff1d": _difference, "intersect1d": _intersection,
                   "setxor1d": _exclusive}


@numpy_function
def _set_count(op, ar1, ar2, assume_unique):
    return ops.reduce(ops.convert(_SET_OPERATIONS[op](ar1, ar2, assume_unique)[1], INT64), "sum", (0,))


def _set_size(op: str):
    def count(ar1, ar2, assume_unique=False, *args, **kwargs) -> int:
        return int(_set_count(op, ar1, ar2, bool(assume_unique)))
    return count


def _set_result(op: str, ar1, ar2, assume_unique, size, fill_value):
    """(the values ``op`` keeps, in order, cut or padded to ``size``; its index payloads, padded with 0)."""
    if size is None:
        _needs_size(op, "size", "the number of values")
    size = _static_size(size, op)
    values, keep, payloads = _SET_OPERATIONS[op](ar1, ar2, bool(assume_unique))
    (values, *payloads), filled = _compact(keep, [values] + payloads, size)
    if fill_value is not None:
        fill = ops.convert(asarray(fill_value), values.dtype)
    elif values.shape[0]:
        first = ops.reshape(ops.slice(values, (0,), (1,)), ())       # the smallest value, as JAX pads
        fill = ops.select(ops.reshape(ops.slice(filled, (0,), (1,)), ()), first, ops.constant(0, values.dtype))
    else:
        fill = ops.constant(0, values.dtype)
    values = ops.select(filled, values, ops.broadcast_to(fill, (size,)))
    return values, [ops.select(filled, p, ops.full((size,), 0, INT64)) for p in payloads]


@_sized(_set_size("union1d"))
def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values found in either array (both flattened), NaNs one value.

    ``size=`` and ``fill_value=`` as in :func:`unique`.

    Deviation: inside a compiled function ``size=`` is required.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.union1d(np.array([3, 1]), np.array([[1, 2]])))
    array([1, 2, 3])
    """
    return _set_result("union1d", ar1, ar2, False, size, fill_value)[0]


@_sized(_set_size("intersect1d"))
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted distinct values found in both arrays (NaN never is), and with ``return_indices`` the
    index (int64) of each one's first occurrence in each flattened array.

    ``size=`` and ``fill_value=`` as in :func:`unique` (indices padded with 0).

    Deviation: inside a compiled function ``size=`` is required; ``assume_unique`` is ignored (same results
    for inputs that are unique).

    >>> import xlac.numpy as xnp
    >>> values, i, j = xnp.intersect1d(np.array([5, 1, 3]), np.array([3, 5, 7]), return_indices=True)
    >>> np.asarray(values), np.asarray(i), np.asarray(j)
    (array([3, 5]), array([2, 0]), array([0, 1]))
    """
    values, (first_in_a, first_in_b) = _set_result("intersect1d", ar1, ar2, assume_unique, size, fill_value)
    return (values, first_in_a, first_in_b) if return_indices else values


@_sized(_set_size("setdiff1d"))
def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values of ``ar1`` not in ``ar2``, in ``ar1``'s dtype; with ``assume_unique``
    the elements of ``ar1`` not in ``ar2``, in their order.

    ``size=`` and ``fill_value=`` as in :func:`unique`.

    Deviation: inside a compiled function ``size=`` is required.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.setdiff1d(np.array([4, 1, 3, 1]), np.array([3, 9])))
    array([1, 4])
    """
    return _set_result("setdiff1d", ar1, ar2, assume_unique, size, fill_value)[0]


@_sized(_set_size("setxor1d"))
def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values found in exactly one of the arrays (a NaN in each gives two NaNs, as NumPy).

    ``size=`` and ``fill_value=`` as in :func:`unique`.

    Deviation: inside a compiled function ``size=`` is required; ``assume_unique`` is ignored (same results
    for inputs that are unique).

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.setxor1d(np.array([1, 2, 3]), np.array([3, 4])))
    array([1, 2, 4])
    """
    return _set_result("setxor1d", ar1, ar2, assume_unique, size, fill_value)[0]
