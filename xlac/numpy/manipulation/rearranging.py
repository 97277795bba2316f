"""Rearranging arrays: roll, rot90, flips, tile, repeat, append/insert/delete, resize, block and the
h/v/d splits, and applying functions along or over axes, with NumPy 2's values, dtypes and errors.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.roll(np.arange(5), 2))
array([3, 4, 0, 1, 2])
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator

import numpy as np

from xlac.errors import TracerConversionError, located
from xlac.ir import dtypes
from xlac.numpy import creation, index_write, indexing, shapes, ufuncs
from xlac.numpy._core import normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.ir.dtypes import BOOL, INT64
from xlac.numpy.manipulation._common import (
    _concrete_only, _host, _static_function, _not_traced, _plain, _axis_slice, _take_static, _moved_last)
from xlac.numpy.shapes import as_array, shape_tuple
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["roll", "rot90", "fliplr", "flipud", "tile", "repeat", "append", "insert", "delete", "resize", "block",
           "broadcast_shapes", "hsplit", "vsplit", "dsplit", "apply_along_axis", "apply_over_axes", "trim_zeros"]


# ---------------------------------------------------------------- rearranging


@_static_function("roll", "shift", "axis")
def roll(a, shift, axis=None):
    """``a`` with its elements shifted by ``shift`` along ``axis`` (the flattened array when None);
    elements that roll off one end come back at the other. ``shift`` and ``axis`` may be tuples
    (broadcast together); ``shift`` may be a traced integer.

    >>> np.asarray(roll(np.arange(6).reshape(2, 3), (1, -1), axis=(0, 1)))
    array([[4, 5, 3],
           [1, 2, 0]])
    """
    x = as_array(a)
    if axis is None:
        return ops.reshape(roll(ops.reshape(x, (x.size,)), shift, 0), x.shape)
    axes = _host(axis)
    axes = (axes,) if np.ndim(axes) == 0 else np.asarray(axes).reshape(-1).tolist()
    axes = tuple(normalize_axis(ax, x.ndim, "roll") for ax in axes)
    if isinstance(shift, Tracer):
        return _roll_traced(x, shift, axes)
    shift = _host(shift)
    try:
        pairs = np.broadcast(np.asarray(shift), np.asarray(axes))
    except ValueError as e:
        raise ValueError(located(f"roll: {e}")) from None
    if pairs.ndim > 1:
        raise ValueError(located("roll: 'shift' and 'axis' should be scalars or 1D sequences"))
    offsets = dict.fromkeys(range(x.ndim), 0)
    for sh, ax in pairs:
        offsets[int(ax)] += int(sh)
    for ax, offset in offsets.items():
        n = x.shape[ax]
        if n and offset % n:
            x = _take_static(x, ax, (np.arange(n) - offset) % n)
    return x


def _roll_traced(x: Tracer, shift: Tracer, axes) -> Tracer:
    """Roll by a traced shift: per axis, a dynamic slice of ``x`` joined to itself."""
    if not dtypes.is_int(shift.dtype) or shift.ndim > 1:
        raise TypeError(located(f"roll: a traced shift must be an integer scalar or 1-D array, got {shift.value.type}"))
    if shift.ndim == 1:
        if len(axes) == 1:
            axes = axes * shift.shape[0]
        if shift.shape[0] not in (1, len(axes)):
            raise ValueError(located(f"roll: shape mismatch: {shift.shape[0]} shifts for {len(axes)} axes"))
    totals = {}
    for i, ax in enumerate(axes):
        s = shift if shift.ndim == 0 else indexing.getitem(shift, i if shift.shape[0] > 1 else 0)
        s = ops.convert(s, INT64)
        totals[ax] = s if ax not in totals else ops.add(totals[ax], s)
    for ax, s in totals.items():
        n = x.shape[ax]
        if n == 0:
            continue
        start = ops.sub(ops.constant(n, INT64), ufuncs.remainder(s, n))
        zero = ops.constant(0, INT64)
        x = ops.dynamic_slice(ops.concatenate([x, x], ax), [start if d == ax else zero for d in range(x.ndim)], x.shape)
    return x


@_static_function("rot90", "k", "axes", view="writable")
def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis towards the
    second; a view, as in NumPy.

    >>> np.asarray(rot90(np.array([[1, 2], [3, 4]])))
    array([[2, 4],
           [1, 3]])
    """
    axes = tuple(_host(axes))
    if len(axes) != 2:
        raise ValueError(located("rot90: len(axes) must be 2."))
    x = as_array(m)
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError(located("rot90: Axes must be different."))
    if not all(-x.ndim <= ax < x.ndim for ax in axes):
        raise ValueError(located(f"rot90: Axes={axes} out of range for array of ndim={x.ndim}."))
    first, second = axes[0] % x.ndim, axes[1] % x.ndim
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return ops.reverse(x, sorted((first, second)))
    perm = list(range(x.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    if k == 1:
        return ops.transpose(ops.reverse(x, (second,)), perm)
    return ops.reverse(ops.transpose(x, perm), (second,))


@numpy_function(view="writable")
def fliplr(m):
    """``m`` with its columns (axis 1) in reverse order; a view.

    >>> np.asarray(fliplr(np.array([[1, 2], [3, 4]])))
    array([[2, 1],
           [4, 3]])
    """
    x = as_array(m)
    if x.ndim < 2:
        raise ValueError(located(f"fliplr: Input must be >= 2-d, got an array of dimension {x.ndim}."))
    return ops.reverse(x, (1,))


@numpy_function(view="writable")
def flipud(m):
    """``m`` with its rows (axis 0) in reverse order; a view.

    >>> np.asarray(flipud(np.array([1, 2, 3])))
    array([3, 2, 1])
    """
    x = as_array(m)
    if x.ndim < 1:
        raise ValueError(located("flipud: Input must be >= 1-d, got a 0-d array."))
    return ops.reverse(x, (0,))


@_static_function("tile", "reps")
def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (``reps`` an int or a tuple; the shorter of ``A.ndim``
    and ``len(reps)`` is padded with leading 1s).

    >>> np.asarray(tile(np.array([1, 2]), (2, 2)))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    reps = _not_traced(reps, "tile", "reps")
    reps = tuple(reps) if isinstance(reps, (tuple, list, np.ndarray)) else (reps,)
    reps = tuple(operator.index(r) for r in reps)
    x = as_array(A)
    if x.ndim < len(reps):
        x = ops.reshape(x, (1,) * (len(reps) - x.ndim) + x.shape)
    reps = (1,) * (x.ndim - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError(located(f"tile: negative dimensions are not allowed, got reps {reps}"))
    interleaved = tuple(d for pair in zip(reps, x.shape) for d in pair)
    stretched = ops.broadcast_in_dim(x, interleaved, tuple(range(1, 2 * x.ndim, 2)))
    return ops.reshape(stretched, tuple(r * d for r, d in zip(reps, x.shape)))


@_static_function("repeat", "repeats", "axis", "total_repeat_length")
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (the flattened array when None);
    ``repeats`` is an int or one count per element.

    ``total_repeat_length`` (as in JAX) fixes the length of the result: extra elements are dropped,
    missing ones repeat the last element. With it, ``repeats`` may be traced.

    Deviation: inside a compiled function ``repeats`` must be static unless ``total_repeat_length``
    is given, since it decides the result's shape.

    >>> np.asarray(repeat(np.array([1, 2, 3]), [2, 0, 1]))
    array([1, 1, 3])
    """
    x = as_array(a)
    if axis is None:
        x, axis = ops.reshape(x, (x.size,)), 0
    axis = normalize_axis(_host(axis), x.ndim, "repeat")
    n = x.shape[axis]
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise TracerConversionError(located(
                f"repeat: traced repeats {repeats.value.type} decide the length of the result; pass them as a "
                "NumPy array or Python ints, or give total_repeat_length= (the fixed length of the result)"))
        return _repeat_traced(x, axis, repeats, operator.index(total_repeat_length))
    counts = np.asarray(_host(repeats))
    if counts.dtype.kind not in "biuf":
        raise TypeError(located(f"repeat: repeats must be integers, got dtype {counts.dtype}"))
    counts = counts.astype(INT64)
    if counts.ndim > 1:
        raise ValueError(located("repeat: repeats must be an int or a 1-D sequence"))
    if (counts < 0).any():
        raise ValueError(located("repeat: negative dimensions are not allowed (repeats may not be negative)"))
    if counts.size == 1 and total_repeat_length is None:
        count = int(counts.reshape(()))
        stretched = ops.broadcast_in_dim(x, x.shape[:axis + 1] + (count,) + x.shape[axis + 1:],
                                         tuple(range(axis + 1)) + tuple(range(axis + 2, x.ndim + 1)))
        return ops.reshape(stretched, x.shape[:axis] + (n * count,) + x.shape[axis + 1:])
    if counts.size not in (1, n):
        raise ValueError(located(f"repeat: operands could not be broadcast together with shape ({n},) "
                                 f"({counts.size},)"))
    source = np.repeat(np.arange(n), np.broadcast_to(counts.reshape(-1), (n,)))
    if total_repeat_length is not None:
        source = _fit_length(source, operator.index(total_repeat_length))
    return _take_static(x, axis, source)


def _fit_length(source: np.ndarray, length: int) -> np.ndarray:
    if length < 0:
        raise ValueError(located(f"repeat: total_repeat_length must be non-negative, got {length}"))
    if length > source.size and source.size == 0:
        raise ValueError(located("repeat: total_repeat_length is larger than the result, which is empty"))
    if length <= source.size:
        return source[:length]
    return np.concatenate([source, np.full(length - source.size, source[-1])])


def _repeat_traced(x: Tracer, axis: int, repeats: Tracer, length: int) -> Tracer:
    """JAX's algorithm: mark where each element's block starts, then a running sum gives each output's source."""
    n = x.shape[axis]
    if not (dtypes.is_int(repeats.dtype) or repeats.dtype == BOOL) or repeats.ndim > 1:
        raise TypeError(located(f"repeat: traced repeats must be an integer scalar or 1-D array, got "
                                f"{repeats.value.type}"))
    if n == 0 or length == 0:
        return _axis_slice(x, axis, 0, 0) if length == 0 else ops.full(
            x.shape[:axis] + (length,) + x.shape[axis + 1:], 0, x.dtype)
    counts = ops.broadcast_to(ops.convert(repeats, INT64), (n,))
    ends = ops.cumulative(counts, "sum", 0)
    starts = ops.sub(ends, counts)
    marks = ops.scatter(ops.full((length,), 0, INT64), ops.reshape(starts, (n, 1)), ops.full((n,), 1, INT64),
                        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                        mode="add")
    source = ops.sub(ops.cumulative(marks, "sum", 0), ops.full((length,), 1, INT64))
    source = ops.clamp(ops.constant(0, INT64), source, ops.constant(n - 1, INT64))
    return indexing.take.__wrapped_numpy__(x, source, axis)


# ---------------------------------------------------------------- inserting, deleting, resizing


@numpy_function
def append(arr, values, axis=None):
    """``values`` joined to the end of ``arr`` along ``axis`` (both flattened when ``axis`` is None).

    >>> np.asarray(append(np.array([1, 2]), [[3.5]]))
    array([1. , 2. , 3.5])
    """
    x = as_array(arr)
    if axis is None:
        v = as_array(values)
        x, v = ops.reshape(x, (x.size,)), ops.reshape(v, (v.size,))
        return shapes.concatenate.__wrapped_numpy__([x, v], 0)
    return shapes.concatenate.__wrapped_numpy__([x, as_array(values)], axis)


def _axis_for(x: Tracer, axis, op: str):
    """``x`` and the axis insert/delete work on: the flattened array when ``axis`` is None."""
    if axis is None:
        if x.ndim != 1:
            x = ops.reshape(x, (x.size,))
        return x, 0
    return x, normalize_axis(axis, x.ndim, op)


@_static_function("insert", "obj", "axis")
def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the positions ``obj`` (an int, a slice or a sequence, static)
    along ``axis`` (the flattened array when None).

    Deviation: ``obj`` must be static (it decides the result's shape); ``values`` may be traced.

    >>> np.asarray(insert(np.array([1, 2, 3]), [1, 3], [10, 30]))
    array([ 1, 10,  2,  3, 30])
    """
    x, axis = _axis_for(as_array(arr), axis, "insert")
    obj = _not_traced(obj, "insert", "obj (the positions)")
    n = x.shape[axis]
    if isinstance(obj, slice):
        positions = np.arange(*obj.indices(n))
    else:
        positions = np.array(obj)
        if positions.dtype == BOOL:
            if positions.ndim != 1:
                raise ValueError(located("insert: boolean array argument obj to insert must be one dimensional"))
            positions = np.flatnonzero(positions)
        elif positions.ndim > 1:
            raise ValueError(located("insert: index array argument obj to insert must be one dimensional or scalar"))
    values = index_write.update_values(values, x.dtype)
    if positions.size == 1:
        index = positions.item()
        if not isinstance(index, numbers.Integral):
            raise IndexError(located(f"insert: {indexing.VALID_INDICES}"))
        if index < -n or index > n:
            raise IndexError(located(f"insert: index {index} is out of bounds for axis {axis} with size {n}"))
        if index < 0:
            index += n
        if values.ndim < x.ndim:
            values = ops.reshape(values, (1,) * (x.ndim - values.ndim) + values.shape)
        if positions.ndim == 0:
            values = _moved_to(values, 0, axis)
        target = x.shape[:axis] + (values.shape[axis],) + x.shape[axis + 1:]
        values = index_write.broadcast_values(values, target, advanced=False)
        return ops.concatenate([_axis_slice(x, axis, 0, index), values, _axis_slice(x, axis, index, n)], axis)
    if positions.size == 0 and not isinstance(obj, np.ndarray):
        positions = positions.astype(INT64)
    if positions.dtype.kind not in "iu":
        raise IndexError(located(f"insert: {indexing.VALID_INDICES}"))
    positions = positions.astype(INT64)
    positions[positions < 0] += n
    count = positions.size
    positions[np.argsort(positions, kind="stable")] += np.arange(count)
    keep = np.ones(n + count, bool)
    try:
        keep[positions] = False
    except IndexError as e:
        raise IndexError(located(f"insert: {e}")) from None
    source = np.empty(n + count, INT64)
    source[keep] = np.arange(n)
    source[positions] = n + np.arange(count)
    target = x.shape[:axis] + (count,) + x.shape[axis + 1:]
    values = index_write.broadcast_values(values, target, advanced=True)
    return _take_static(ops.concatenate([x, values], axis), axis, source)


def _moved_to(x: Tracer, source: int, destination: int) -> Tracer:
    order = [d for d in range(x.ndim) if d != source]
    order.insert(destination, source)
    return ops.transpose(x, order)


@_static_function("delete", "obj", "axis")
def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, a slice, a sequence of ints or a boolean mask; static)
    along ``axis`` (the flattened array when None).

    Deviation: ``obj`` must be static (it decides the result's shape).

    >>> np.asarray(delete(np.arange(6), slice(None, None, 2)))
    array([1, 3, 5])
    """
    x, axis = _axis_for(as_array(arr), axis, "delete")
    obj = _not_traced(obj, "delete", "obj (the positions)")
    n = x.shape[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
        return _take_static(x, axis, np.flatnonzero(keep))
    single = isinstance(obj, numbers.Integral) and not isinstance(obj, (bool, np.bool_))
    if not single:
        given = obj
        obj = np.asarray(obj)
        if obj.size == 0 and not isinstance(given, np.ndarray):
            obj = obj.astype(INT64)
        elif obj.size == 1 and obj.dtype.kind in "ui":
            obj, single = obj.item(), True
    if single:
        if not -n <= obj < n:
            raise IndexError(located(f"delete: index {obj} is out of bounds for axis {axis} with size {n}"))
        keep[obj] = False
    elif obj.dtype == BOOL:
        if obj.shape != (n,):
            raise ValueError(located("delete: boolean array argument obj to delete must be one dimensional and "
                                     f"match the axis length of {n}"))
        keep = ~obj
    elif obj.dtype.kind not in "iu":
        raise IndexError(located(f"delete: {indexing.VALID_INDICES}"))
    else:
        bad = (obj < -n) | (obj >= n)
        if bad.any():
            raise IndexError(located(f"delete: index {obj[bad].flat[0]} is out of bounds for axis {axis} "
                                     f"with size {n}"))
        keep[obj.reshape(-1)] = False
    return _take_static(x, axis, np.flatnonzero(keep))


@_static_function("resize", "new_shape")
def resize(a, new_shape):
    """A new array of ``new_shape`` filled with the elements of ``a`` (flattened), repeated as needed;
    zeros when ``a`` is empty.

    >>> np.asarray(resize(np.array([1, 2, 3]), (2, 4)))
    array([[1, 2, 3, 1],
           [2, 3, 1, 2]])
    """
    shape = shape_tuple(_not_traced(new_shape, "resize", "new_shape"), "resize")
    if any(d < 0 for d in shape):
        raise ValueError(located(f"resize: all elements of `new_shape` must be non-negative, got {shape}"))
    x = as_array(a)
    x = ops.reshape(x, (x.size,))
    size = math.prod(shape)
    if x.size == 0 or size == 0:
        return ops.full(shape, 0, x.dtype)
    copies = -(-size // x.size)
    repeated = ops.reshape(ops.broadcast_in_dim(x, (copies, x.size), (1,)), (copies * x.size,))
    return ops.reshape(_axis_slice(repeated, 0, 0, size), shape)


# ---------------------------------------------------------------- assembling and splitting


def _block_depth(arrays, index=()) -> tuple[tuple, int]:
    """NumPy's depth check: (the index of the first innermost element, the largest element ndim)."""
    if isinstance(arrays, tuple):
        raise TypeError(located(f"block: {_block_position(index)} is a tuple. Only lists can be used to arrange "
                                "blocks, and np.block does not allow implicit conversion from tuple to ndarray."))
    if isinstance(arrays, list) and arrays:
        first, deepest = None, 0
        for i, element in enumerate(arrays):
            position, ndim = _block_depth(element, index + (i,))
            deepest = builtins.max(deepest, ndim)
            if first is None:
                first = position
            elif len(position) != len(first):
                raise ValueError(located(
                    f"block: List depths are mismatched. First element was at depth {len(first)}, but there is "
                    f"an element at depth {len(position)} ({_block_position(position)})"))
            if position[-1] is None:
                first = position
        return first, deepest
    if isinstance(arrays, list):
        return index + (None,), 0
    return index, arrays.ndim if isinstance(arrays, Tracer) else np.ndim(arrays)


def _block_position(index) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)


def _assemble(arrays, depth: int, list_ndim: int, result_ndim: int) -> Tracer:
    if depth < list_ndim:
        parts = [_assemble(a, depth + 1, list_ndim, result_ndim) for a in arrays]
        return shapes.concatenate.__wrapped_numpy__(parts, -(list_ndim - depth))
    x = as_array(arrays)
    return ops.reshape(x, (1,) * (result_ndim - x.ndim) + x.shape) if x.ndim < result_ndim else x


@numpy_function
def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists join along the last axis,
    the next ones along the one before, and so on.

    >>> np.asarray(block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 3))]]))
    array([[1., 0., 0.],
           [0., 1., 0.],
           [1., 1., 1.]])
    """
    first, deepest = _block_depth(arrays)
    if first and first[-1] is None:
        raise ValueError(located(f"block: List at {_block_position(first[:-1])} cannot be empty"))
    list_ndim = len(first)
    return _assemble(arrays, 0, list_ndim, builtins.max(deepest, list_ndim))


@_plain
def broadcast_shapes(*args):
    """The shape that arrays of the shapes ``args`` broadcast to.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        return np.broadcast_shapes(*args)
    except ValueError as e:
        raise ValueError(located(f"broadcast_shapes: {e}")) from None


def _sections(indices_or_sections):
    sections = _not_traced(indices_or_sections, "split", "indices_or_sections")
    return sections.tolist() if isinstance(sections, np.ndarray) else sections


@_static_function("hsplit", "indices_or_sections", view="writable")
def hsplit(ary, indices_or_sections):
    """:func:`split` along axis 1 (axis 0 for 1-D arrays): a list of views.

    >>> [np.asarray(p).tolist() for p in hsplit(np.arange(4).reshape(2, 2), 2)]
    [[[0], [2]], [[1], [3]]]
    """
    x = as_array(ary)
    if x.ndim == 0:
        raise ValueError(located("hsplit: hsplit only works on arrays of 1 or more dimensions"))
    return shapes.split.__wrapped_numpy__(x, _sections(indices_or_sections), 1 if x.ndim > 1 else 0)


@_static_function("vsplit", "indices_or_sections", view="writable")
def vsplit(ary, indices_or_sections):
    """:func:`split` along axis 0 of an array of 2 or more dimensions: a list of views.

    >>> [np.asarray(p).tolist() for p in vsplit(np.arange(4).reshape(2, 2), 2)]
    [[[0, 1]], [[2, 3]]]
    """
    x = as_array(ary)
    if x.ndim < 2:
        raise ValueError(located("vsplit: vsplit only works on arrays of 2 or more dimensions"))
    return shapes.split.__wrapped_numpy__(x, _sections(indices_or_sections), 0)


@_static_function("dsplit", "indices_or_sections", view="writable")
def dsplit(ary, indices_or_sections):
    """:func:`split` along axis 2 of an array of 3 or more dimensions: a list of views.

    >>> [np.asarray(p).shape for p in dsplit(np.zeros((1, 2, 4)), [1])]
    [(1, 2, 1), (1, 2, 3)]
    """
    x = as_array(ary)
    if x.ndim < 3:
        raise ValueError(located("dsplit: dsplit only works on arrays of 3 or more dimensions"))
    return shapes.split.__wrapped_numpy__(x, _sections(indices_or_sections), 2)


@numpy_function
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``, vectorized with :func:`xlac.vmap`
    (``func1d`` must be traceable); its result's dimensions replace ``axis``.

    Deviation: ``func1d`` is traced once for all slices, so it must be written with xlac.numpy
    functions and cannot branch on the slice's values.

    >>> np.asarray(apply_along_axis(lambda row: row[0] + row[-1], 1, np.arange(6).reshape(2, 3)))
    array([2, 8])
    """
    from xlac.vectorize import vmap      # vmap traces with xlac.numpy: it sits above this package
    x = as_array(arr)
    axis = normalize_axis(axis, x.ndim, "apply_along_axis")
    moved = _moved_last(x, axis)
    batch = moved.shape[:-1]
    if 0 in batch:
        raise ValueError(located("apply_along_axis: Cannot apply_along_axis when any iteration dimensions are 0"))
    rows = ops.reshape(moved, (math.prod(batch), x.shape[axis]))
    out = vmap(lambda row: as_array(func1d(row, *args, **kwargs)))(rows)
    result_shape = out.shape[1:]
    out = ops.reshape(out, batch + result_shape)
    order = list(range(axis)) + [len(batch) + i for i in range(len(result_shape))] + \
        list(range(axis, len(batch)))
    return ops.transpose(out, order)


@_plain
def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, its result given back its reduced axis (as
    ``keepdims``) so that the dimension count stays.

    >>> np.asarray(apply_over_axes(xnp.sum, np.arange(6).reshape(2, 3), [0, 1]))
    array([[15]])
    """
    value = creation.asarray(a)
    ndim = len(np.shape(value))
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis + ndim if axis < 0 else axis
        result = func(value, axis)
        if result.ndim != value.ndim:
            result = shapes.expand_dims(result, axis)
            if result.ndim != value.ndim:
                raise ValueError(located("apply_over_axes: function is not returning an array of the correct "
                                         "shape"))
        value = result
    return value


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros.

    Deviation: the result's length depends on the values, so inside a compiled function this raises
    xlac.UnsupportedError; it works eagerly.

    >>> np.asarray(trim_zeros(np.array([0, 1, 2, 0])))
    array([1, 2])
    """
    _concrete_only("trim_zeros", "slice with static bounds instead")
    host = np.asarray(filt)
    kept = np.trim_zeros(host, trim) if axis is None else np.trim_zeros(host, trim, axis=axis)
    if kept.size == host.size:
        return creation.asarray(filt)
    return creation.asarray(kept)
