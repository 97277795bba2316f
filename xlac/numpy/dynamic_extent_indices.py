"""Indices whose number depends on the data, as values with a dynamic extent (:mod:`xlac.numpy.dynamic_extent`):
``np.nonzero``, one-argument ``np.where``, ``np.argwhere`` and ``np.flatnonzero`` without ``size=`` hold, at
every position of the array, that position's coordinates, valid where the array is nonzero (so their bound
is its size). Indexing with them gathers at every position, NumPy's bounds checked after the call where they
hold elements (``x[np.nonzero(m)]`` over ``m``'s own shape is ``x[m]``, no gather); writing through them
scatters the valid positions. A dynamic value's own elements are read by position (``v[0]``, ``v[-1]``,
``v[k]``: IndexError after the call when there is no such element), by slice (``v[1:]``, ``v[::-1]``) and
by a mask of its own elements (``v[v > 0]``).

>>> import numpy as np, xlac
>>> @xlac.compile
... def positives(x):
...     idx = np.flatnonzero(x > 0)
...     return x[idx].sum(), x[x > 0][-1]
>>> [float(v) for v in positives(np.array([1.0, -2.0, 3.0, -4.0]))]
[4.0, 3.0]
"""
from __future__ import annotations

import math
import operator

import numpy as np

from xlac.numpy import array_api
from xlac.numpy import creation
from xlac.numpy import index_write
from xlac.numpy import indexing
from xlac.numpy import reductions
from xlac.numpy import shapes
from xlac.numpy import sorting
from xlac.numpy import ufuncs
from xlac.errors import UnsupportedError, located
from xlac.numpy._dispatch import dynamic_extent_rule
from xlac.numpy.dynamic_extent import (INDEX, REDERIVED, AxisExtent, DynamicExtent, bound_key, broadcast_operands,
                                       derived_view, elementwise, ndim_of, placed, ranks, require, selected,
                                       slice_extent, valid_mask)
from xlac.numpy.dynamic_extent_shapes import reversed_extent
from xlac.numpy.index_write import write_selected
from xlac.trace import ops
from xlac.trace.facts import set_known_range
from xlac.trace.tracer import Tracer

__all__ = ["argwhere", "flatnonzero", "getitem", "nonzero", "setitem"]


# ---------------------------------------------------------------- nonzero and its family


def _nonzero_extent(x: Tracer) -> AxisExtent:
    """The positions of ``x`` (flattened) that are nonzero: NaN counts, as in NumPy."""
    if x.dtype == np.bool_:
        return _flat_extent(x, ("mask", x.value.id))
    return _flat_extent(ufuncs.not_equal(x, 0), ("nonzero", x.value.id))


def _flat_extent(mask: Tracer, key: tuple) -> AxisExtent:
    flat = ops.reshape(mask, (mask.size,))
    return AxisExtent(flat, ops.reduce(ops.convert(flat, INDEX), "sum", (0,)), None, key)


def _coordinate(shape: tuple, axis: int) -> Tracer:
    """Each flat position's coordinate along ``axis`` of an array of ``shape``."""
    return ops.reshape(ops.iota(shape, INDEX, axis), (math.prod(shape),))


def _unsized(op: str, size, fill_value) -> None:
    if size is not None or fill_value is not None:
        raise UnsupportedError(located(f"np.{op} of a value whose length is known only when the program runs "
                                       "with size= or fill_value="))


@dynamic_extent_rule(sorting.nonzero)
def nonzero(a, *, size=None, fill_value=None):
    """``np.nonzero(a)`` inside a trace without ``size=``: per axis of ``a``, a dynamic value holding each
    position's coordinate, valid where ``a`` is nonzero. Of a one-dimensional dynamic value: the ranks of
    its nonzero elements."""
    _unsized("nonzero", size, fill_value)
    if isinstance(a, DynamicExtent):
        return (_nonzero_ranks(a),)
    x = creation.asarray(a)
    if x.ndim == 0:
        raise ValueError(located("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
                                 "instead. If the context of this error is of the form `arr[nonzero(cond)]`, just "
                                 "use `arr[cond]`."))
    extent = _nonzero_extent(x)
    return tuple(DynamicExtent(_coordinate(x.shape, axis), [extent], coordinates=(x.shape, axis))
                 for axis in range(x.ndim))


def _nonzero_ranks(value: DynamicExtent) -> DynamicExtent:
    if value.ndim != 1:
        raise UnsupportedError(located("np.nonzero of a value whose length is known only when the program runs: "
                                       "one-dimensional values only"))
    extent = value.axes[0]
    nonzero_here = ops.and_(extent.valid, ufuncs.not_equal(value.data, 0))
    return DynamicExtent(ranks(extent), [_flat_extent(nonzero_here, ("nonzero",) + extent.key)])


@dynamic_extent_rule(sorting.flatnonzero)
def flatnonzero(a, *, size=None, fill_value=None):
    """``np.flatnonzero(a)`` inside a trace without ``size=``: each flat position, valid where ``a`` is nonzero."""
    _unsized("flatnonzero", size, fill_value)
    if isinstance(a, DynamicExtent):
        return _nonzero_ranks(shapes.ravel(a))
    x = creation.asarray(a)
    return DynamicExtent(_coordinate((x.size,), 0), [_nonzero_extent(x)], coordinates=((x.size,), 0))


@dynamic_extent_rule(sorting.argwhere)
def argwhere(a, *, size=None, fill_value=None):
    """``np.argwhere(a)`` inside a trace without ``size=``: one row of coordinates per position of ``a``,
    valid where ``a`` is nonzero."""
    _unsized("argwhere", size, fill_value)
    if isinstance(a, DynamicExtent):
        raise UnsupportedError(located("np.argwhere of a value whose length is known only when the program runs"))
    x = creation.asarray(a)
    columns = [ops.reshape(_coordinate(x.shape, axis), (x.size, 1)) for axis in range(x.ndim)]
    data = ops.concatenate(columns, 1) if columns else ops.full((1, 0), 0, INDEX)
    return DynamicExtent(data, [_nonzero_extent(x), None])


@dynamic_extent_rule(ufuncs.where)
def where(condition, x=None, y=None):
    """``np.where`` with a dynamic operand, or one argument (``nonzero``)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError(located("either both or neither of x and y should be given"))
    return elementwise(ufuncs.where, (condition, x, y))


# ---------------------------------------------------------------- indexing with dynamic values


def _entries(index) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _by_own_mask(x, entries) -> tuple | None:
    """``(extent, k)`` where ``entries`` are ``np.nonzero(m)`` (or ``np.flatnonzero``) of an ``m`` whose shape
    is that of ``x``'s first ``k`` axes: indexing by them is selecting by ``m``."""
    first = entries[0]
    if not isinstance(first, DynamicExtent) or first.coordinates is None:
        return None
    shape = first.coordinates[0]
    if len(entries) != len(shape) or tuple(np.shape(x)[:len(shape)]) != tuple(shape):
        return None
    for axis, entry in enumerate(entries):
        if not isinstance(entry, DynamicExtent) or entry.coordinates != (shape, axis) or \
                entry.axes[0] is not first.axes[0]:
            return None
    return first.axes[0], len(shape)


def _is_array_entry(entry) -> bool:
    return isinstance(entry, (DynamicExtent, list)) or isinstance(entry, (Tracer, np.ndarray)) and entry.ndim > 0


def _is_integer_entry(entry) -> bool:
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_)) or \
        isinstance(entry, Tracer) and entry.ndim == 0 and entry.dtype.kind in "iu"


def _batch_position(entries, ndim: int) -> int:
    """Where NumPy puts the dimensions of the broadcast index arrays in the result: in place of the
    advanced indices (arrays and integers) where they are adjacent, else first."""
    advanced = [k for k, e in enumerate(entries) if _is_array_entry(e) or _is_integer_entry(e)]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        return 0
    consumed = sum(e is not None and e is not Ellipsis for e in entries)
    position = 0
    for entry in entries[:advanced[0]]:
        position += ndim - consumed if entry is Ellipsis else 1
    return position


class _Gather:
    """The advanced index arrays of an index holding dynamic values, broadcast together: their data in common
    coordinates, the extents of the broadcast axes, and where the elements are."""

    def __init__(self, x: Tracer, entries: tuple):
        arrays = [k for k, e in enumerate(entries) if _is_array_entry(e)]
        for k in arrays:
            dtype = entries[k].dtype if isinstance(entries[k], (DynamicExtent, Tracer)) else np.asarray(entries[k]).dtype
            if dtype == np.bool_:
                raise UnsupportedError(located("a boolean mask combined with an index whose length is known only "
                                               "when the program runs; index in two steps"))
            if dtype.kind not in "iu":
                raise IndexError(located("arrays used as indices must be of integer (or boolean) type"))
        data, self.targets = broadcast_operands([entries[k] for k in arrays],
                                                "shape mismatch: indexing arrays could not be broadcast together")
        self.batch_shape = tuple(np.broadcast_shapes(*(d.shape for d in data)))
        self.valid = valid_mask(DynamicExtent(ops.full(self.batch_shape, 0, INDEX), self.targets))
        self.arrays, self.data, self.entries = arrays, data, entries
        self.position = _batch_position(entries, x.ndim)
        self.count = ops.reduce(ops.convert(self.valid, INDEX), "sum", tuple(range(len(self.batch_shape))))
        self.axes = self._indexed_axes(x.ndim)
        if any(x.shape[a] == 0 for a in self.axes):
            raise UnsupportedError(located("indexing an axis of length 0 with a value whose length is known only "
                                           "when the program runs"))

    def _indexed_axes(self, ndim: int) -> list[int]:
        """The axis of ``x`` each index array indexes."""
        consumed = sum(e is not None and e is not Ellipsis for e in self.entries)
        axes, axis = {}, 0
        for k, entry in enumerate(self.entries):
            if entry is Ellipsis:
                axis += ndim - consumed
            elif entry is not None:
                axes[k] = axis
                axis += 1
        return [axes[k] for k in self.arrays]

    def index(self, arrays) -> tuple:
        entries = list(self.entries)
        for k, array in zip(self.arrays, arrays):
            entries[k] = array
        return tuple(entries)

    def safe_index(self) -> tuple:
        """The index with each array 0 where the index has no element (in bounds: no axis has length 0)."""
        return self.index([ufuncs.where(self.valid, data, 0) for data in self.data])

    @property
    def batch_axes(self) -> list[int]:
        """The axes of ``x[index]`` of the broadcast index arrays."""
        return list(range(self.position, self.position + len(self.batch_shape)))

    def placed_values(self, x: Tracer, values) -> Tracer:
        """``values`` broadcast to the region ``x[index]``, its elements at the index's elements."""
        region = indexing.getitem(x, self.safe_index())
        new = placed(values, region.ndim, self.result_axes(region.ndim), list(region.shape),
                     "shape mismatch: value array could not be broadcast to indexing result")
        return shapes.broadcast_to(new, region.shape)

    def result_axes(self, ndim: int) -> list:
        axes = [None] * ndim
        axes[self.position:self.position + len(self.batch_shape)] = self.targets
        return axes

    def require_in_bounds(self, x: Tracer) -> None:
        """NumPy's bounds check of the index arrays where they hold elements; the first in NumPy's order."""
        for data, axis in zip(self.data, self.axes):
            size = x.shape[axis]
            wide = shapes.broadcast_to(array_api.astype(data, INDEX), self.batch_shape)
            outside = ufuncs.logical_and(self.valid, ufuncs.logical_or(wide < -size, wide >= size))
            first = reductions.argmax(shapes.ravel(outside))
            require(ufuncs.logical_not(reductions.any(outside)), indexing.take(shapes.ravel(wide), first), IndexError,
                    f"index {{value}} is out of bounds for axis {axis} with size {size}")


@dynamic_extent_rule(indexing.getitem)
def getitem(x, index):
    """``x[index]`` where ``x`` or an entry of ``index`` is a dynamic value."""
    if isinstance(x, DynamicExtent):
        return _read_elements(x, index)
    entries = _entries(index)
    by_mask = _by_own_mask(x, entries)
    if by_mask is not None:
        return selected(creation.asarray(x), *by_mask)
    if len(entries) == 1 and isinstance(entries[0], DynamicExtent) and entries[0].ndim == 1 and \
            entries[0].dtype.kind in "iu":
        return _gather_rows(creation.asarray(x), entries[0])         # the rows of a loop over a CSR matrix
    x = creation.asarray(x)
    gather = _Gather(x, entries)
    gather.require_in_bounds(x)
    result = indexing.getitem(x, gather.safe_index())
    return DynamicExtent(result, gather.result_axes(result.ndim))


def _gather_rows(x: Tracer, rows: DynamicExtent) -> DynamicExtent:
    """``x[rows]`` for one vector of integers: a gather at every position of its data (so that a loop whose
    rows change per iteration, ``x[indices[start:stop]]``, gathers ``x[indices]`` once: XLA hoists it out of
    the loop), with NumPy's bounds checked where it has elements."""
    size, positions = x.shape[0], rows.data
    if positions.shape[0]:
        first_outside = _first_out_of_range(positions, rows.axes[0], size)
        require(first_outside == positions.shape[0], indexing.take(positions, first_outside, mode="clip"), IndexError,
                f"index {{value}} is out of bounds for axis 0 with size {size}")
    wrapped = ufuncs.where(positions < 0, positions + size, positions)
    return DynamicExtent(indexing.take(x, wrapped, axis=0, mode="clip"), rows.axes + [None] * (x.ndim - 1))


def _first_out_of_range(positions, extent: AxisExtent, size: int):
    """The position of ``positions``' first element among ``extent``'s (NumPy's order) outside ``[-size,
    size)``, or ``len(positions)`` if none. Where the elements are contiguous (a slice), what depends on the
    extent is one lookup into a scan of ``positions`` alone: in ``x[cols[ptr[i]:ptr[i + 1]]]`` that scan is
    the same every iteration and XLA computes it once, outside the loop."""
    length = positions.shape[0]
    out_of_range = ufuncs.logical_or(positions < -size, positions >= size)
    where_outside = ufuncs.where(out_of_range, ops.iota((length,), INDEX, 0), length)
    if extent.start is None:
        return reductions.min(ufuncs.where(extent.valid, where_outside, length))
    from_here = ops.cumulative(where_outside, "min", 0, reverse=True)
    first = indexing.take(from_here, extent.start, mode="clip")   # start == length: an empty extent at the end
    inside = ufuncs.logical_and(first >= extent.start, first < extent.start + extent.count)
    return ufuncs.where(inside, first, length)


@dynamic_extent_rule(operator.setitem)
def setitem(x: Tracer, index, value) -> Tracer:
    """``x`` after ``x[index] = value`` where ``index`` holds dynamic values: the valid positions written, in
    NumPy's order (the last of duplicates wins); of a dynamic ``x``, :func:`write_elements`."""
    if isinstance(x, DynamicExtent):
        return write_elements(x, index, value)
    entries = _entries(index)
    by_mask = _by_own_mask(x, entries)
    if by_mask is not None:
        extent, mask_ndim = by_mask
        flat = shapes.reshape(x, (extent.size,) + x.shape[mask_ndim:])
        return shapes.reshape(write_selected(flat, extent, value), x.shape)
    gather = _Gather(x, entries)
    gather.require_in_bounds(x)
    new = gather.placed_values(x, value)
    # Positions without an element write what the last element writes, where it writes: whatever their order
    # among the elements, that target ends with the last element's value, as NumPy leaves it.
    flat_valid = shapes.ravel(gather.valid)
    last = reductions.max(ufuncs.where(flat_valid, ops.iota((flat_valid.shape[0],), INDEX, 0), 0))
    arrays = [ufuncs.where(gather.valid, data, ufuncs.where(
        gather.count > 0, indexing.take(shapes.ravel(shapes.broadcast_to(data, gather.batch_shape)), last), 0))
        for data in gather.data]
    batch_axes, batch_rank = gather.batch_axes, len(gather.batch_shape)
    rows = shapes.moveaxis(new, batch_axes, list(range(batch_rank)))
    rows = shapes.reshape(rows, (-1,) + rows.shape[batch_rank:])
    rows = ufuncs.where(ops.broadcast_in_dim(flat_valid, rows.shape, (0,)), rows,
                     shapes.broadcast_to(indexing.take(rows, last, axis=0), rows.shape))
    new = shapes.moveaxis(shapes.reshape(rows, gather.batch_shape + rows.shape[1:]), list(range(batch_rank)), batch_axes)
    written = index_write.index_update(x, gather.index(arrays), new)
    return ufuncs.where(gather.count > 0, written, x)


def write_elements(value: DynamicExtent, index, new) -> None:
    """``v[index] = new`` of a dynamic value ``v``: per axis an integer (``v[0]``, ``v[i]``, ``v[-1]``: the
    element of that rank along a dynamic axis, IndexError after the call if there is none) or a slice of
    step 1 (``v[...]``, ``v[1:-1]``, bounds counted among the elements along a dynamic axis); the elements of
    that region written, in order."""
    axes, dropped = [], []
    for axis, (entry, extent) in enumerate(zip(_expanded(_entries(index), value.ndim), value.axes)):
        if _is_integer_entry(entry):
            axes.append(_element_region(entry, extent, value.data.shape[axis], axis))
            dropped.append(axis)
        elif not isinstance(entry, slice) or entry.step not in (None, 1):
            raise UnsupportedError(located(
                f"writing v[{index!r}] into a value whose length is known only when the program runs: integers and "
                "slices of step 1 per axis are supported (v[...] = x, v[1:-1] = x, v[0] = x); write into the array "
                "it came from"))
        elif extent is not None:
            axes.append(_sliced(extent, entry)[1])
        elif entry.start is None and entry.stop is None:
            axes.append(None)
        else:
            axes.append(slice_extent((entry.start, entry.stop, 1), value.data.shape[axis]))
    if dropped:           # the integers' axes, of length 1, put back into the value written
        kept = value.ndim - len(dropped)
        if ndim_of(new) > kept:
            raise ValueError(located(f"could not broadcast input array of {ndim_of(new)} dimensions into a region "
                                     f"of {kept}"))
        new = shapes.expand_dims(new, tuple(range(kept - ndim_of(new)))) if ndim_of(new) < kept else new
        new = shapes.expand_dims(new, tuple(dropped))
    new = placed(new, value.ndim, axes, list(value.data.shape), "could not broadcast input array into the region")
    value.write_elements(array_api.astype(shapes.broadcast_to(new, value.data.shape), value.dtype), axes)


_IDENTITIES = {"add": lambda dtype: 0, "multiply": lambda dtype: 1,
               "minimum": lambda dtype: np.inf if dtype.kind == "f" else np.iinfo(dtype).max,
               "maximum": lambda dtype: -np.inf if dtype.kind == "f" else np.iinfo(dtype).min}


@dynamic_extent_rule(index_write.index_update)
def index_update(x, index, values, mode="set"):
    """``xnp.index_update`` (``np.add.at``, ...) where ``index`` holds dynamic values: positions without an
    element combine the operation's identity into position 0."""
    if mode == "set":
        return setitem(creation.asarray(x), index, values)
    x = creation.asarray(x)
    if mode not in _IDENTITIES or x.dtype.kind not in "iuf":
        raise UnsupportedError(located(f"np.{mode}.at with an index whose length is known only when the program "
                                       "runs: add, multiply, minimum and maximum of numbers are supported"))
    gather = _Gather(x, _entries(index))
    gather.require_in_bounds(x)
    new = gather.placed_values(x, values)
    valid = ops.broadcast_in_dim(gather.valid, new.shape, tuple(gather.batch_axes))
    new = ufuncs.where(valid, new, creation.asarray(_IDENTITIES[mode](x.dtype), dtype=new.dtype))
    return index_write.index_update(x, gather.safe_index(), new, mode)


# ---------------------------------------------------------------- a dynamic value's elements


def _expanded(entries, ndim: int) -> list:
    consumed = sum(e is not None and e is not Ellipsis for e in entries)
    if consumed > ndim:
        raise IndexError(located(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were "
                                 "indexed"))
    out, seen = [], False
    for entry in entries:
        if entry is Ellipsis and not seen:
            out.extend([slice(None)] * (ndim - consumed))
            seen = True
        elif entry is Ellipsis:
            raise IndexError(located("an index can only have a single ellipsis ('...')"))
        else:
            out.append(entry)
    return out + [slice(None)] * (ndim - consumed if not seen else 0)


def _read_elements(value: DynamicExtent, index):
    """``v[index]`` of a dynamic value: integers, slices and ``None`` per axis, or a mask of its own elements."""
    entries = _entries(index)
    if len(entries) == 1 and isinstance(entries[0], DynamicExtent) and entries[0].dtype == np.bool_:
        return _masked(value, entries[0])
    static_index, axes, data_axis = [], [], 0
    for entry in _expanded(entries, value.ndim):
        if entry is None:
            static_index.append(None)
            axes.append(None)
            continue
        extent = value.axes[data_axis]
        if extent is None:
            if _is_array_entry(entry):
                raise UnsupportedError(located("an array index into a value whose length is known only when the "
                                               "program runs"))
            static_index.append(entry)
            if not _is_integer_entry(entry):
                axes.append(None)
        elif _is_integer_entry(entry):
            static_index.append(_element_position(extent, entry, data_axis))
        elif isinstance(entry, slice):
            entry, extent = _sliced(extent, entry)
            static_index.append(entry)
            axes.append(extent)
        else:
            raise UnsupportedError(located(f"indexing a value whose length is known only when the program runs "
                                           f"with {type(entry).__name__} along its axis {data_axis} of that length"))
        data_axis += 1
    if any(a is not None for a in axes):
        return derived_view(value, lambda data: data[tuple(static_index)], axes)
    data = value.data[tuple(static_index)]
    if value.is_view == REDERIVED and data.ndim > 0:      # a view of x that would not follow x's later writes
        raise UnsupportedError(located(
            "an array taken by an integer index along the axis of x[i::k] with a traced bound (x[i::k][1]): "
            "index x itself (x[i + k]) or copy the view first (x[i::k].copy()[1])"))
    return data if value.is_view or data.ndim == 0 else shapes.copy(data)


def _element_region(k, extent: AxisExtent | None, size: int, axis: int) -> AxisExtent:
    """The one position of the element of rank ``k`` along an axis of ``size`` (dynamic where ``extent`` is
    given), as an extent; IndexError (after the call, for a traced ``k`` or a dynamic axis) if there is none."""
    if extent is not None:
        position, key = _element_position(extent, k, axis), extent.key
    elif isinstance(k, Tracer):
        k, key = array_api.astype(k, INDEX), ("static", size)
        require(ufuncs.logical_and(k >= -size, k < size), k, IndexError,
                f"index {{value}} is out of bounds for axis {axis} with size {size}")
        position = ufuncs.clip(ufuncs.where(k < 0, k + size, k), 0, max(size - 1, 0))
    else:
        k, key = operator.index(k), ("static", size)
        if not -size <= k < size:
            raise IndexError(located(f"index {k} is out of bounds for axis {axis} with size {size}"))
        position = array_api.astype(creation.asarray(k % size), INDEX)
    valid = ufuncs.equal(ops.iota((size,), INDEX, 0), position)
    return AxisExtent(valid, array_api.astype(creation.asarray(1), INDEX), position,
                      ("element", key, bound_key(k, 0)))


def _element_position(extent: AxisExtent, k, axis: int) -> Tracer:
    """Where the element of rank ``k`` (negative from the end) is; IndexError after the call if none is."""
    count = extent.count
    if isinstance(k, Tracer):
        k = array_api.astype(k, INDEX)
        require(ufuncs.logical_and(k >= -count, k < count), k, IndexError,
                f"index {{value}} is out of bounds for axis {axis}, whose length is known only when the "
                "program runs")
    else:
        k = operator.index(k)
        require(count > k if k >= 0 else count >= -k, count, IndexError,
                f"index {k} is out of bounds for axis {axis} with size {{value}}")
    rank = ufuncs.where(k < 0, k + count, k)
    if extent.start is not None:
        position = extent.start + rank
    else:
        position = reductions.sum(array_api.astype(reductions.cumsum(ops.convert(extent.valid, INDEX)) <= rank, INDEX))
    position = ufuncs.clip(position, 0, extent.size - 1)
    set_known_range(position, (0, extent.size - 1))
    return position


def _sliced(extent: AxisExtent, entry: slice) -> tuple:
    """(the data's index, the new extent) for a slice of a dynamic axis: step 1 (bounds static or traced,
    counted among its elements), or the whole axis reversed."""
    bounds = (entry.start, entry.stop, entry.step)
    if all(b is None for b in bounds):
        return entry, extent
    if entry.start is None and entry.stop is None and isinstance(entry.step, int) and entry.step == -1:
        return entry, reversed_extent(extent)
    if entry.step is not None and (not isinstance(entry.step, int) or entry.step != 1):
        raise UnsupportedError(located("a slice with a step of a value whose length is known only when the "
                                       "program runs: steps 1 and the whole axis reversed (::-1) are supported"))
    count = extent.count
    low, high = _bound(entry.start, count, 0), _bound(entry.stop, count, count)
    rank = ranks(extent)
    inside = ops.and_(extent.valid, ufuncs.logical_and(rank >= low, rank < high))
    start = extent.start + low if extent.start is not None else None
    key = ("sliced", extent.key, bound_key(entry.start, 0), bound_key(entry.stop, -1))
    return slice(None), AxisExtent(inside, ufuncs.maximum(high - low, 0), start, key)


def _bound(value, count, default) -> Tracer:
    """A slice bound among ``count`` elements, as NumPy reads it for step 1."""
    if value is None:
        return array_api.astype(creation.asarray(default), INDEX)
    value = array_api.astype(creation.asarray(value), INDEX)
    return ufuncs.clip(ufuncs.where(value < 0, value + count, value), 0, count)


def _masked(value: DynamicExtent, mask: DynamicExtent) -> DynamicExtent:
    """``v[m]`` where ``m`` is a mask over ``v``'s elements along its first axis (``v[v > 0]``)."""
    extent, own = value.axes[0], mask.axes[0]
    if mask.ndim != 1 or extent is None or own is None or own.key != extent.key or any(mask.axes[1:]):
        raise UnsupportedError(located("indexing a value whose length is known only when the program runs by a "
                                       "mask: only a one-dimensional mask of its own elements (v[v > 0])"))
    inside = ops.and_(extent.valid, mask.data)
    narrowed = _flat_extent(inside, ("masked", extent.key, mask.data.value.id))
    return DynamicExtent(value.data, [narrowed] + value.axes[1:])


@dynamic_extent_rule(indexing.take)
def take(a, indices, axis=None, out=None, mode=None):
    """``np.take(a, indices, axis)`` where ``indices`` is a dynamic value: ``a`` (flattened when ``axis`` is
    None) indexed along ``axis``, as NumPy's default ``mode='raise'`` (bounds checked after the call); where
    ``a`` is one, flattened or of one dimension, its elements counted in NumPy's order."""
    if out is not None or mode not in (None, "raise"):
        raise UnsupportedError(located("np.take with out= or mode= and indices whose length is known only when "
                                       "the program runs: index the array instead (a[..., indices])"))
    if isinstance(a, DynamicExtent):
        if axis is not None and a.ndim != 1:
            raise UnsupportedError(located("np.take along an axis of a value whose length is known only when the "
                                           "program runs: flattened (axis=None) or of one dimension"))
        return _taken_from_elements(shapes.ravel(a), indices)
    x = creation.asarray(a)
    if axis is None:
        return getitem(shapes.ravel(x), indices)
    axis = axis + x.ndim if axis < 0 else axis
    return getitem(x, (slice(None),) * axis + (indices,))


def _taken_from_elements(flat: DynamicExtent, indices):
    """``np.take(v, indices)`` of a one-dimensional dynamic value: its elements in order, gathered to the front
    of an array, taken at ``indices`` counted among them (negative from the end; IndexError after the call
    where one is outside)."""
    extent = flat.axes[0]
    order = sorting.argsort(ufuncs.logical_not(extent.valid), kind="stable")
    front, count = indexing.take(flat.data, order), extent.count
    ranks_taken = elementwise(lambda k: ufuncs.where(k < 0, k + count, k), (indices,))
    inside = elementwise(lambda k: ufuncs.logical_and(k >= 0, k < count), (ranks_taken,))
    given = indices.data if isinstance(indices, DynamicExtent) else creation.asarray(indices)
    if isinstance(inside, DynamicExtent):
        inside = ufuncs.where(valid_mask(inside), inside.data, True)
    taken = indices.size if isinstance(indices, DynamicExtent) else given.size
    require(ufuncs.logical_or(count > 0, taken == 0), count, IndexError,
            "cannot do a non-empty take from an empty axes.")
    first_outside = reductions.argmax(shapes.ravel(ufuncs.logical_not(inside)))
    require(reductions.all(inside), indexing.take(shapes.ravel(given), first_outside), IndexError,
            "index {value} is out of bounds for axis 0, whose length is known only when the program runs")
    at = elementwise(lambda k: ufuncs.clip(k, 0, max(front.shape[0] - 1, 0)), (ranks_taken,))
    return getitem(front, at) if isinstance(at, DynamicExtent) else indexing.take(front, at)


def _ufunc_at(function, mode: str, negate: bool = False):
    """``np.<ufunc>.at(x, index, values)``'s new ``x`` where ``index`` holds dynamic values: ``function``'s
    ``at``, combining as ``index_update``'s ``mode``."""
    @dynamic_extent_rule((function, "at"))
    def updated(x, index, values):
        return index_update(x, index, ufuncs.negative(values) if negate else values, mode)
    return updated


_ufunc_at(ufuncs.add, "add")
_ufunc_at(ufuncs.subtract, "add", negate=True)
_ufunc_at(ufuncs.multiply, "multiply")
_ufunc_at(ufuncs.minimum, "minimum")
_ufunc_at(ufuncs.maximum, "maximum")
