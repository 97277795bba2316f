"""Index arrays and choosing elements: indices, meshgrid, put_along_axis, diag/diagflat, the
tril/triu/diag index helpers, vander, select, choose, compress, extract, unravel_index, ravel_multi_index,
ix_, mask_indices and fromfunction.

>>> import numpy as np, xlac.numpy as xnp
>>> [np.asarray(i).tolist() for i in xnp.unravel_index(5, (2, 3))]
[1, 2]
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from xlac.errors import UnsupportedError, located, user_location
from xlac.ir import dtypes
from xlac.numpy import creation, index_write, indexing, inplace, _out, shapes, ufuncs
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.ir.dtypes import BOOL, INT64
from xlac.numpy.manipulation._common import (_concrete_only, _host, _static_function, _not_traced,
                                             _take_static)
from xlac.numpy.shapes import as_array, shape_tuple
from xlac.trace import ops
from xlac.trace.checks import Check
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["meshgrid", "indices", "put_along_axis", "diag", "diagflat", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "diag_indices", "diag_indices_from", "vander", "select",
           "choose", "compress", "unravel_index", "ravel_multi_index", "ix_", "fromfunction", "mask_indices", "extract"]


@numpy_function
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors: ``indexing="xy"`` (Cartesian, the first two axes
    swapped) or "ij" (matrix); ``sparse`` keeps each one broadcastable instead of full. A tuple.

    >>> [np.asarray(g).tolist() for g in meshgrid(np.array([1, 2]), np.array([3, 4, 5]))]
    [[[1, 2], [1, 2], [1, 2]], [[3, 3], [4, 4], [5, 5]]]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(located("meshgrid: Valid values for `indexing` are 'xy' and 'ij'."))
    ndim = len(xi)
    grids = [as_array(x) for x in xi]
    grids = [ops.reshape(g, (1,) * i + (g.size,) + (1,) * (ndim - i - 1)) for i, g in enumerate(grids)]
    if indexing == "xy" and ndim > 1:
        grids[0] = ops.reshape(grids[0], (1, grids[0].size) + (1,) * (ndim - 2))
        grids[1] = ops.reshape(grids[1], (grids[1].size, 1) + (1,) * (ndim - 2))
    if not sparse:
        shape = ops.broadcast_shapes(*(g.shape for g in grids), op="meshgrid")
        grids = [ops.broadcast_to(g, shape) for g in grids]
    return tuple(grids)


@_static_function("indices", "dimensions")
def indices(dimensions, dtype=int, sparse=False):
    """An array of shape ``(len(dimensions), *dimensions)`` whose ``i``-th slice holds each position's
    ``i``-th index; with ``sparse``, a tuple of broadcastable index arrays instead.

    >>> np.asarray(indices((2, 3)))[1]
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = shape_tuple(_not_traced(dimensions, "indices", "dimensions"), "indices")
    dtype = dtypes.canonical(dtype)
    n = len(dims)
    if sparse:
        return tuple(ops.convert(ops.iota((1,) * i + (d,) + (1,) * (n - i - 1), INT64, i), dtype)
                     for i, d in enumerate(dims))
    if n == 0:
        return ops.full((0,), 0, dtype)
    grids = [ops.reshape(ops.convert(ops.iota(dims, INT64, i), dtype), (1,) + dims) for i in range(n)]
    return ops.concatenate(grids, 0)


def put_along_axis(arr, indices, values, axis):
    """Write ``values`` into ``arr`` at ``indices`` along ``axis`` (matched position by position on the
    other axes), in place, as NumPy's ``put_along_axis``: the inverse of :func:`take_along_axis`.
    Duplicate positions keep the last value.

    Traced indices out of bounds raise IndexError after the call (see ``xlac.compile``'s ``check_bounds``).

    >>> import xlac
    >>> a = xlac.asarray(np.zeros((2, 3))); xnp.put_along_axis(a, np.array([[2], [0]]), 1.0, axis=1); a
    Array([[0., 0., 1.],
           [1., 0., 0.]], dtype=float64)
    """
    dst = inplace._target(arr, "put_along_axis")
    dtype = indices.dtype if hasattr(indices, "dtype") else np.asarray(indices).dtype
    if not dtypes.is_int(dtype):
        raise IndexError(located("put_along_axis: `indices` must be an integer array"))
    ndim = len(dst.shape)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError(located("put_along_axis: when axis=None, `indices` must have a single dimension."))
        flat = index_write.index_update(shapes.reshape(dst, (-1,)), indices, values)
        dst[...] = shapes.reshape(flat, dst.shape)
        return None
    if np.ndim(indices) != ndim:
        raise ValueError(located("put_along_axis: `indices` and `arr` must have the same number of dimensions"))
    axis = normalize_axis(axis, ndim, "put_along_axis")
    index = tuple(indices if d == axis else np.arange(size).reshape([size if k == d else 1 for k in range(ndim)])
                  for d, size in enumerate(dst.shape))
    dst[...] = index_write.index_update(dst, index, values)
    return None


put_along_axis.__wrapped_numpy__ = put_along_axis


# ---------------------------------------------------------------- diagonals and triangles


def _diagonal_matrix(v: Tracer, k: int) -> Tracer:
    """The square matrix with the 1-D ``v`` on diagonal ``k`` and zeros elsewhere: a select, no scatter."""
    n = v.shape[0] + builtins.abs(k)
    padded = ops.pad(v, ops.constant(0, v.dtype), (0,), (builtins.abs(k),))
    values = ops.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    return ops.select(creation._offset_mask(n, n, k, "EQ"), values, ops.full((n, n), 0, v.dtype))


@_static_function("diag", "k", view="marked")
def diag(v, k=0):
    """For a 1-D ``v``, the square matrix with ``v`` on diagonal ``k``; for a 2-D ``v``, its diagonal ``k``
    (a read-only view, as :func:`diagonal`).

    >>> np.asarray(diag(np.array([1, 2]), 1))
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    x = as_array(v)
    k = operator.index(k)
    if x.ndim == 1:
        return _diagonal_matrix(x, k)
    if x.ndim == 2:
        return shapes.diagonal.__wrapped_numpy__(x, k)
    raise ValueError(located(f"diag: Input must be 1- or 2-d, got an array of dimension {x.ndim}."))


@_static_function("diagflat", "k")
def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on diagonal ``k``.

    >>> np.asarray(diagflat(np.array([[1, 2]])))
    array([[1, 0],
           [0, 2]])
    """
    x = as_array(v)
    return _diagonal_matrix(ops.reshape(x, (x.size,)), operator.index(k))


def _index_constants(arrays) -> tuple:
    return tuple(ops.constant(np.asarray(a, INT64)) for a in arrays)


@_static_function("tril_indices", "n", "k", "m")
def tril_indices(n, k=0, m=None):
    """The (row, column) indices of the lower triangle (at and below diagonal ``k``) of an ``n x m`` array.

    >>> [np.asarray(i).tolist() for i in tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    return _index_constants(np.tril_indices(n, k, m))


@_static_function("triu_indices", "n", "k", "m")
def triu_indices(n, k=0, m=None):
    """The (row, column) indices of the upper triangle (at and above diagonal ``k``) of an ``n x m`` array.

    >>> [np.asarray(i).tolist() for i in triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return _index_constants(np.triu_indices(n, k, m))


def _matrix_shape(arr, op: str) -> tuple[int, int]:
    x = as_array(arr)
    if x.ndim != 2:
        raise ValueError(located(f"{op}: input array must be 2-d, got an array of dimension {x.ndim}"))
    return x.shape


@_static_function("tril_indices_from", "k")
def tril_indices_from(arr, k=0):
    """:func:`tril_indices` for the shape of the 2-D ``arr``.

    >>> [np.asarray(i).tolist() for i in tril_indices_from(np.zeros((2, 2)))]
    [[0, 1, 1], [0, 0, 1]]
    """
    rows, cols = _matrix_shape(arr, "tril_indices_from")
    return _index_constants(np.tril_indices(rows, k, cols))


@_static_function("triu_indices_from", "k")
def triu_indices_from(arr, k=0):
    """:func:`triu_indices` for the shape of the 2-D ``arr``.

    >>> [np.asarray(i).tolist() for i in triu_indices_from(np.zeros((2, 2)))]
    [[0, 0, 1], [0, 1, 1]]
    """
    rows, cols = _matrix_shape(arr, "triu_indices_from")
    return _index_constants(np.triu_indices(rows, k, cols))


@_static_function("diag_indices", "n", "ndim")
def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``n x n x ...`` array of ``ndim`` dimensions: ``ndim``
    copies of ``arange(n)``.

    >>> [np.asarray(i).tolist() for i in diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    return _index_constants([np.arange(n)] * ndim)


@numpy_function
def diag_indices_from(arr):
    """:func:`diag_indices` for ``arr``, which must have at least 2 dimensions, all of one length.

    >>> [np.asarray(i).tolist() for i in diag_indices_from(np.zeros((2, 2)))]
    [[0, 1], [0, 1]]
    """
    x = as_array(arr)
    if x.ndim < 2:
        raise ValueError(located("diag_indices_from: input array must be at least 2-d"))
    if len(set(x.shape)) != 1:
        raise ValueError(located(f"diag_indices_from: All dimensions of input must be of equal length, got {x.shape}"))
    return _index_constants([np.arange(x.shape[0])] * x.ndim)


@_static_function("vander", "N")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed with
    ``increasing``), in ``x``'s dtype promoted with int64, each power one multiplication from the last.

    >>> np.asarray(vander(np.array([1, 2, 3]), 3))
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    t = as_array(x)
    if t.ndim != 1:
        raise ValueError(located("vander: x must be a one-dimensional array or sequence."))
    n = t.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(located(f"vander: negative dimensions are not allowed, got N={n}"))
    dtype = dtypes.result_type(t.dtype, INT64)
    t = ops.convert(t, dtype)
    if n == 0:
        return ops.full((t.shape[0], 0), 0, dtype)
    columns = [ops.full(t.shape, 1, dtype)]
    for _ in range(n - 1):
        columns.append(t if len(columns) == 1 else ops.mul(columns[-1], t))
    if not increasing:
        columns.reverse()
    return ops.concatenate([ops.reshape(c, (t.shape[0], 1)) for c in columns], 1)


# ---------------------------------------------------------------- choosing elements


def _choice_operand(x):
    """A choice as NumPy's select keeps it: Python numbers weak, everything else an array."""
    return asarray(x) if type(x) in (int, float, complex) else as_array(x)


@numpy_function
def select(condlist, choicelist, default=0):
    """Per element, the entry of the first choice whose condition holds, else ``default``.

    >>> x = np.arange(6)
    >>> np.asarray(select([x < 2, x > 3], [x, x ** 2], 42))
    array([ 0,  1, 42, 42, 16, 25])
    """
    if len(condlist) != len(choicelist):
        raise ValueError(located("select: list of cases must be same length as list of conditions"))
    if len(condlist) == 0:
        raise ValueError(located("select: select with an empty condition list is not possible"))
    choices = [_choice_operand(c) for c in choicelist] + [_choice_operand(default)]
    try:
        dtype = dtypes.result_type(*choices)
    except TypeError as e:
        raise TypeError(located(f"select: Choicelist and default value do not have a common dtype: {e}")) from None
    conds = [as_array(c) for c in condlist]
    cond_shape = ops.broadcast_shapes(*(c.shape for c in conds), op="select")
    choice_shape = ops.broadcast_shapes(*(c.shape for c in choices), op="select")
    for i, c in enumerate(conds):
        if c.dtype != BOOL:
            raise TypeError(located(f"select: invalid entry {i} in condlist: should be boolean ndarray"))
    shape = ops.broadcast_shapes(cond_shape, choice_shape, op="select")
    result = ops.broadcast_to(ops.convert(choices[-1], dtype), shape)
    for choice, cond in zip(reversed(choices[:-1]), reversed(conds)):
        result = ops.select(ops.broadcast_to(cond, shape), ops.broadcast_to(ops.convert(choice, dtype), shape), result)
    return result


CLIP_MODES = ("raise", "wrap", "clip")


def _check_clip_mode(mode, op: str) -> str:
    if mode not in CLIP_MODES:
        raise ValueError(located(f"{op}: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})"))
    return mode


def _concrete_indices(x):
    """``x`` as a NumPy array when it is known now (not traced), else None."""
    if isinstance(x, Tracer):
        return None
    return np.asarray(x)


def _check_choose(a, choices, out=None, mode="raise"):
    index = _concrete_indices(a)
    if index is not None and mode == "raise" and index.dtype.kind in "biu":
        count = len(choices)
        if index.size and ((index < 0) | (index >= count)).any():
            raise ValueError(located("choose: invalid entry in choice array"))


@_static_function("choose", check=_check_choose)
def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` per element, ``a`` and the choices broadcast together; ``mode`` "wrap" and
    "clip" bring out-of-range indices into range.

    With mode="raise", a traced ``a`` out of range raises NumPy's ValueError after the call (see
    :mod:`xlac.trace.checks`); with ``compile(check_bounds=False)`` it is clipped.

    >>> np.asarray(choose(np.array([0, 1, 1]), [np.array([1, 2, 3]), 10]))
    array([ 1, 10, 10])
    """
    dst = _out.output_operand(out, "choose")
    _check_clip_mode(mode, "choose")
    _check_choose(a, choices, mode=mode)
    index = as_array(a)
    if not (dtypes.is_int(index.dtype) or index.dtype == BOOL):
        raise TypeError(located(f"choose: Cannot cast array data from {index.dtype!r} to dtype('int64') "
                                "according to the rule 'safe'"))
    options = [choices[i] for i in range(choices.shape[0])] if isinstance(choices, Tracer) else list(choices)
    if not options:
        raise ValueError(located("choose: at least one choice is needed"))
    options = [_choice_operand(c) for c in options]
    dtype = dtypes.result_type(*options)
    shape = ops.broadcast_shapes(index.shape, *(c.shape for c in options), op="choose")
    count = len(options)
    index = ops.broadcast_to(ops.convert(index, INT64), shape)
    if mode == "wrap":
        index = ufuncs.remainder(index, count)
    elif mode == "raise" and isinstance(index, Tracer) and current_trace().checks.enabled:
        outside = ops.or_(ops.compare(index, ops.full_like(index, 0), "LT"),
                          ops.compare(index, ops.full_like(index, count), "GE"))
        current_trace().checks.require(ops.not_(ops.reduce(outside, "or", tuple(range(index.ndim)))),
                                       ops.constant(0, INT64),
                                       Check(ValueError, "invalid entry in choice array", user_location()))
    index = ops.clamp(ops.constant(0, INT64), index, ops.constant(count - 1, INT64))
    stacked = ops.concatenate([ops.reshape(ops.broadcast_to(ops.convert(c, dtype), shape), (1,) + shape)
                               for c in options], 0)
    picked = indexing.take_along_axis.__wrapped_numpy__(stacked, ops.reshape(index, (1,) + shape), 0)
    return _out.store_whole_result(dst, ops.reshape(picked, shape), "choose")


@_static_function("compress", "condition", "axis")
def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` (the flattened array when None) where the static 1-D
    ``condition`` is true; a shorter condition counts as False past its end.

    Deviation: ``condition`` must be static (it decides the result's shape).

    >>> np.asarray(compress([False, True, True], np.array([[1, 2], [3, 4], [5, 6]]), axis=0))
    array([[3, 4],
           [5, 6]])
    """
    dst = _out.output_operand(out, "compress")
    cond = np.asarray(_not_traced(condition, "compress", "condition", "Use xnp.where(condition, a, 0) to keep "
                                  "the shape."))
    if cond.ndim != 1:
        raise ValueError(located("compress: condition must be a 1-d array"))
    x = as_array(a)
    if axis is None:
        x, axis = ops.reshape(x, (x.size,)), 0
    axis = normalize_axis(axis, x.ndim, "compress")
    positions = np.flatnonzero(cond)
    if positions.size and positions[-1] >= x.shape[axis]:
        raise IndexError(located(f"compress: index {positions[-1]} is out of bounds for axis {axis} with size "
                                 f"{x.shape[axis]}"))
    return _out.store_whole_result(dst, _take_static(x, axis, positions), "compress")


# ---------------------------------------------------------------- flat and multi-dimensional indices


def _check_unravel(indices, shape, order="C"):
    index = _concrete_indices(indices)
    if index is not None and index.dtype.kind in "iu":
        size = math.prod(shape_tuple(_host(shape), "unravel_index"))
        bad = (index < 0) | (index >= size)
        if bad.any():
            raise ValueError(located(f"unravel_index: index {index[bad].flat[0]} is out of bounds for array with "
                                     f"size {size}"))


@_static_function("unravel_index", "shape", check=_check_unravel)
def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of the flat ``indices``, as a tuple of int64 arrays.

    Deviation: traced indices cannot be checked; out-of-range ones give meaningless coordinates.

    >>> [np.asarray(c).tolist() for c in unravel_index(np.array([1, 5]), (2, 3))]
    [[0, 1], [1, 2]]
    """
    dims = shape_tuple(_not_traced(shape, "unravel_index", "shape"), "unravel_index")
    if order not in ("C", "F"):
        raise ValueError(located("unravel_index: only 'C' or 'F' order is permitted"))
    _check_unravel(indices, dims)
    index = as_array(indices)
    if not dtypes.is_int(index.dtype):
        raise TypeError(located(f"unravel_index: only int indices permitted, got dtype {index.dtype}"))
    rest = ops.convert(index, INT64)
    coords = [None] * len(dims)
    for d in (reversed(range(len(dims))) if order == "C" else range(len(dims))):
        size = ops.full(rest.shape, builtins.max(dims[d], 1), INT64)
        coords[d] = ops.rem(rest, size)
        rest = ops.div(rest, size)
    return tuple(coords)


def _coordinate_list(multi_index) -> list:
    if isinstance(multi_index, Tracer):
        return [multi_index[i] for i in range(multi_index.shape[0])] if multi_index.ndim else [multi_index]
    return list(multi_index)


def _clip_modes(mode, count: int) -> tuple:
    modes = (mode,) * count if isinstance(mode, str) else tuple(mode)
    if len(modes) != count:
        raise ValueError(located(f"ravel_multi_index: {len(modes)} clip modes for {count} dimensions"))
    return tuple(_check_clip_mode(m, "ravel_multi_index") for m in modes)


def _check_ravel(multi_index, dims, mode="raise", order="C"):
    dims = shape_tuple(_host(dims), "ravel_multi_index")
    coordinates = _coordinate_list(multi_index)
    if len(coordinates) != len(dims):
        return
    for coordinate, size, m in zip(coordinates, dims, _clip_modes(mode, len(dims))):
        values = _concrete_indices(coordinate)
        if m == "raise" and values is not None and values.dtype.kind in "iu" and \
                ((values < 0) | (values >= size)).any():
            raise ValueError(located("ravel_multi_index: invalid entry in coordinates array"))


@_static_function("ravel_multi_index", "dims", check=_check_ravel)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices (int64) of the coordinates ``multi_index`` in an array of shape ``dims``;
    ``mode`` ("raise", "wrap", "clip", or one per dimension) handles out-of-range coordinates.

    Deviation: with mode="raise" traced coordinates cannot be checked.

    >>> np.asarray(ravel_multi_index((np.array([1, 0]), np.array([2, 1])), (2, 3)))
    array([5, 1])
    """
    dims = shape_tuple(_not_traced(dims, "ravel_multi_index", "dims"), "ravel_multi_index")
    coordinates = _coordinate_list(multi_index)
    if len(coordinates) != len(dims):
        raise ValueError(located(f"ravel_multi_index: parameter multi_index must be a sequence of length "
                                 f"{len(dims)}"))
    if order not in ("C", "F"):
        raise ValueError(located("ravel_multi_index: only 'C' or 'F' order is permitted"))
    modes = _clip_modes(mode, len(dims))
    _check_ravel(multi_index, dims, mode, order)
    coordinates = [as_array(c) for c in coordinates]
    for c in coordinates:
        if not dtypes.is_int(c.dtype):
            raise TypeError(located(f"ravel_multi_index: only int indices permitted, got dtype {c.dtype}"))
    shape = ops.broadcast_shapes(*(c.shape for c in coordinates), op="ravel_multi_index")
    strides = [math.prod(dims[d + 1:]) if order == "C" else math.prod(dims[:d]) for d in range(len(dims))]
    total = ops.full(shape, 0, INT64)
    for c, size, stride, m in zip(coordinates, dims, strides, modes):
        c = ops.broadcast_to(ops.convert(c, INT64), shape)
        if m == "wrap":
            c = ufuncs.remainder(c, size)
        elif m == "clip":
            c = ops.clamp(ops.constant(0, INT64), c, ops.constant(builtins.max(size - 1, 0), INT64))
        total = ops.add(total, ops.mul(c, ops.full(shape, stride, INT64)))
    return total


def ix_(*args):
    """Open-mesh index arrays: ``x[ix_(rows, cols)]`` picks the cross product.

    >>> [a.shape for a in ix_([0, 1], [2, 3, 4])]
    [(2, 1), (1, 3)]
    """
    out = []
    for k, seq in enumerate(args):
        a = creation.asarray(seq)
        if a.ndim != 1:
            raise ValueError(located("ix_: cross index must be 1 dimensional"))
        if a.dtype == np.bool_:
            if isinstance(a, Tracer):
                raise UnsupportedError(located("ix_: a traced boolean sequence has a data-dependent length"))
            a = creation.asarray(np.nonzero(np.asarray(a))[0])
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.intp)
        out.append(shapes.reshape(a, (1,) * k + (a.size,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices(shape))``: the function is called once, with one coordinate array per axis.

    >>> np.asarray(fromfunction(lambda i, j: i + j, (2, 2)))
    array([[0., 1.],
           [1., 2.]])
    """
    return function(*indices(shape, dtype=dtype), **kwargs)


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (``n`` and ``k`` static).

    >>> [np.asarray(i).tolist() for i in mask_indices(2, np.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    m = np.asarray(mask_func(np.ones((n, n), int), k))
    rows, cols = np.nonzero(m)
    return creation.asarray(rows), creation.asarray(cols)


def extract(condition, arr):
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is true.

    Deviation: the result's length depends on the values, so inside a compiled function a traced condition
    raises xlac.UnsupportedError (use ``xnp.where`` or ``xnp.nonzero(..., size=)``); a NumPy condition works.

    >>> np.asarray(extract(np.array([True, False, True]), np.array([1, 2, 3])))
    array([1, 3])
    """
    if isinstance(condition, Tracer):
        _concrete_only("extract", "use xnp.where(condition, arr, fill) or xnp.nonzero(condition, size=n)")
    positions = np.nonzero(np.ravel(np.asarray(condition)))[0]
    positions = creation.asarray(positions) if current_trace() is None else positions
    return indexing.take(shapes.ravel(creation.asarray(arr)), positions)
