"""Writing with NumPy's indexing, functionally: ``index_update(x, index, values)`` is a new array equal to
``x`` after ``x[index] = values``. The tracer's ``x[index] = v`` stores this result back into ``x`` (the
functionalization pass makes it an in-place update); the index is parsed as :mod:`xlac.numpy.indexing`
parses it for reading.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.index_update(np.zeros(3), 1, 5.0))
array([0., 5., 0.])
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.numpy import _out, creation, shapes, ufuncs
from xlac.numpy._dispatch import dynamic_call
from xlac.numpy.dynamic_extent import (AxisExtent, DynamicExtent, aligned, from_front, handles_write,
                                       holds_dynamic_index, is_traced_mask, mask_extent, placed, slice_extent,
                                       static_view_index, stepped_extent, valid_mask)
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.indexing import (INDEX_DTYPE, IndexItem, broadcast_index_shape, concrete_index, dynamic_starts,
                                 masks_as_positions, normalized_traced_index, parse_index)
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["index_update"]

UPDATE_MODES = {"set": "set", "add": "add", "multiply": "mul", "minimum": "min", "maximum": "max"}
_MASK_COMBINERS = {"add": ops.add, "mul": ops.mul, "min": ops.min, "max": ops.max}
_BOOL_COMBINERS = {"add": ops.or_, "max": ops.or_, "mul": ops.and_, "min": ops.and_}


def _real_part_if_complex(values, dtype):
    """NumPy complex values written into a real array: their real part, with NumPy's ComplexWarning (into a
    bool array NumPy's cast itself gives ``values != 0``)."""
    if isinstance(values, (np.ndarray, np.generic)) and values.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=4)
        return values.real
    return values


def update_values(values, dtype) -> Tracer:
    """``values`` cast to ``dtype`` as NumPy's setitem casts (unsafe; Python scalars checked like NumPy)."""
    if isinstance(values, Tracer):
        return _out.cast(values, dtype)
    if hasattr(values, "__xlac_array__"):
        values = values.__xlac_array__()
    values = _real_part_if_complex(values, dtype)
    try:
        shape = np.shape(values)
        cast = np.empty(shape, dtype)
        if shape == ():
            cast[()] = values           # NumPy's scalar path: NaN/inf into integers and overflow raise
        else:
            cast[...] = values
    except (ValueError, TypeError, OverflowError) as e:
        raise type(e)(located(str(e))) from None
    return ops.constant(cast, dtype)


def broadcast_values(values: Tracer, target, advanced: bool) -> Tracer:
    """``values`` broadcast to the indexed shape ``target`` (leading size-1 axes of ``values`` may be dropped)."""
    shape = values.shape
    while values.ndim > len(target) and values.shape[0] == 1:
        values = ops.reshape(values, values.shape[1:])
    lead = len(target) - values.ndim
    if lead < 0 or any(d not in (1, target[lead + i]) for i, d in enumerate(values.shape)):
        if advanced:
            message = (f"shape mismatch: value array of shape {shape} could not be broadcast to indexing "
                       f"result of shape {tuple(target)}")
        else:
            message = f"could not broadcast input array from shape {shape} into shape {tuple(target)}"
        raise ValueError(located(message))
    return ops.broadcast_to(values, tuple(target))


def _is_full_integer_index(items, ndim: int) -> bool:
    return len(items) == ndim and all(item.kind in ("int", "dyn") for item in items)


def _as_advanced(items):
    """Copies of the items with integers as 0-d index arrays (same target positions and result shape)."""
    out = []
    for item in items:
        if item.kind == "int":
            item = IndexItem("array", item.axis, np.asarray(item.value, INDEX_DTYPE), True, item.source_axis)
        elif item.kind == "dyn":
            item = IndexItem("array", item.axis, item.value, False, item.source_axis)
        else:
            item = IndexItem(item.kind, item.axis, item.value, item.normalized, item.source_axis)
        out.append(item)
    return out


def _layout(items, work_shape):
    """(target shape, {slice item position: target dim}, first batch dim, batch shape) of ``x[items]``."""
    arrays = [item.value for item in items if item.kind == "array"]
    batch_shape = broadcast_index_shape(arrays) if arrays else ()
    positions = [i for i, item in enumerate(items) if item.kind == "array"]
    adjacent = not positions or all(items[i].kind == "array" for i in range(positions[0], positions[-1] + 1))
    target, slice_dims, batch_at = ([] if adjacent else list(batch_shape)), {}, (None if adjacent else 0)
    for i, item in enumerate(items):
        if item.kind == "array" and batch_at is None:
            batch_at = len(target)
            target.extend(batch_shape)
        elif item.kind == "slice":
            slice_dims[i] = len(target)
            target.append(len(range(*item.value.indices(work_shape[item.axis]))))
        elif item.kind == "window":
            slice_dims[i] = len(target)
            target.append(item.value.length)
        elif item.kind == "new":
            target.append(1)
    return tuple(target), slice_dims, batch_at or 0, batch_shape


def _columns(items, work_shape, target, slice_dims, batch_at, batch_shape):
    """Per axis of the working array, the position every element of ``x[items]`` writes to (broadcastable
    to ``target``): NumPy arrays where the index is static, int64 tracers (negatives wrapped) otherwise."""
    columns = [None] * len(work_shape)
    place_batch = tuple(range(batch_at, batch_at + len(batch_shape)))
    for i, item in enumerate(items):
        if item.kind == "slice":
            positions = np.arange(*item.value.indices(work_shape[item.axis]), dtype=INDEX_DTYPE)
            shape = [1] * len(target)
            shape[slice_dims[i]] = positions.size
            columns[item.axis] = positions.reshape(shape)
        elif item.kind == "window":
            window = item.value
            steps = ops.mul(ops.iota((window.length,), INDEX_DTYPE, 0), ops.full((window.length,), window.step,
                                                                               INDEX_DTYPE))
            first = ops.broadcast_in_dim(window.first_position(item.source_axis), (window.length,), ())
            columns[item.axis] = ops.broadcast_in_dim(ops.add(first, steps), target, (slice_dims[i],))
        elif item.kind == "array":
            value = item.value
            if isinstance(value, Tracer):
                value = value if item.normalized else normalized_traced_index(value, work_shape[item.axis],
                                                                         item.source_axis)
                value = ops.broadcast_to(ops.convert(value, INDEX_DTYPE), batch_shape)
                columns[item.axis] = ops.broadcast_in_dim(value, target, place_batch)
            else:
                value = np.broadcast_to(value, batch_shape)
                shape = [1] * len(target)
                for d, size in zip(place_batch, batch_shape):
                    shape[d] = size
                columns[item.axis] = value.reshape(shape)
    return columns


def _scatter_elements(x: Tracer, indices: Tracer, updates: Tracer, mode: str) -> Tracer:
    """``x`` with ``updates[j]`` combined into the element at ``indices[j]`` (an (n, x.ndim) int64 tensor)."""
    return ops.scatter(x, indices, updates, update_window_dims=(), inserted_window_dims=tuple(range(x.ndim)),
                       scatter_dims_to_operand_dims=tuple(range(x.ndim)), mode=mode)


def _take_flat(values: Tracer, positions) -> Tracer:
    positions = ops.constant(np.asarray(positions, INDEX_DTYPE).reshape(-1, 1), INDEX_DTYPE)
    return ops.gather(values, positions, offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,),
                      slice_sizes=(1,))


def _static_last_writers(columns, work_shape, values: Tracer):
    """Static indices with only the last update of each target element kept (NumPy's last-wins)."""
    target = values.shape
    stacked = np.stack([np.broadcast_to(c, target).reshape(-1) for c in columns], axis=-1)
    flat_values = ops.reshape(values, (values.size,))
    linear = np.ravel_multi_index(tuple(stacked.T), work_shape)
    _, last_reversed = np.unique(linear[::-1], return_index=True)
    keep = np.sort(linear.size - 1 - last_reversed)
    if keep.size == linear.size:
        return ops.constant(stacked, INDEX_DTYPE), flat_values
    return ops.constant(stacked[keep], INDEX_DTYPE), _take_flat(flat_values, keep)


def _traced_last_writers(indices: Tracer, work_shape) -> Tracer:
    """``indices`` (n, ndim) with every update that is not the last writer of its element sent out of
    bounds, so the scatter drops it: XLA applies duplicate scatter updates in an unspecified order."""
    n, rank = indices.shape
    strides = np.cumprod((work_shape[1:] + (1,))[::-1])[::-1]
    flat_size = int(np.prod(work_shape))
    strides = ops.broadcast_in_dim(ops.constant(strides.astype(INDEX_DTYPE), INDEX_DTYPE), indices.shape, (1,))
    linear = ops.reduce(ops.mul(indices, strides), "sum", (1,))
    zero, limits = ops.full(indices.shape, 0, INDEX_DTYPE), ops.constant(np.array(work_shape, INDEX_DTYPE))
    in_bounds = ops.and_(ops.compare(indices, zero, "GE"),
                           ops.compare(indices, ops.broadcast_in_dim(limits, indices.shape, (1,)), "LT"))
    in_bounds = ops.reduce(in_bounds, "and", (1,))
    linear = ops.select(in_bounds, linear, ops.full((n,), flat_size, INDEX_DTYPE))
    order = ops.iota((n,), INDEX_DTYPE, 0)
    winners = ops.scatter(ops.full((flat_size,), -1, INDEX_DTYPE), ops.reshape(linear, (n, 1)), order,
                          update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                          mode="max")
    winner = ops.gather(winners, ops.reshape(linear, (n, 1)), offset_dims=(), collapsed_slice_dims=(0,),
                        start_index_map=(0,), slice_sizes=(1,))
    keep = ops.and_(ops.compare(winner, order, "EQ"), in_bounds)
    dropped = ops.full(indices.shape, work_shape[0], INDEX_DTYPE)
    return ops.select(ops.broadcast_in_dim(keep, indices.shape, (0,)), indices, dropped)


def _scatter_update(x: Tracer, items, work_shape, values: Tracer, mode: str, dedupe: bool) -> Tracer:
    """The general write: one element-wise scatter (after deduplicating writes for ``mode="set"``)."""
    items = _as_advanced(items)
    target, slice_dims, batch_at, batch_shape = _layout(items, work_shape)
    columns = _columns(items, work_shape, target, slice_dims, batch_at, batch_shape)
    if not any(isinstance(c, Tracer) for c in columns):
        if dedupe:
            indices, updates = _static_last_writers(columns, work_shape, values)
        else:
            stacked = np.stack([np.broadcast_to(c, target).reshape(-1) for c in columns], axis=-1)
            indices, updates = ops.constant(stacked, INDEX_DTYPE), ops.reshape(values, (values.size,))
        return _scatter_elements(x, _dropped_after_failed_check(indices, work_shape), updates, mode)
    n = int(np.prod(target))
    stacked = [ops.reshape(ops.broadcast_to(c if isinstance(c, Tracer) else ops.constant(c, INDEX_DTYPE), target),
                           (n, 1)) for c in columns]
    indices = ops.concatenate(stacked, 1)
    if dedupe:
        indices = _traced_last_writers(indices, work_shape)
    return _scatter_elements(x, _dropped_after_failed_check(indices, work_shape), ops.reshape(values, (n,)), mode)


def _dropped_after_failed_check(indices: Tracer, work_shape) -> Tracer:
    """Scatter ``indices`` sent out of bounds, so that XLA drops every update, where a check before the
    write failed (NumPy would have raised before writing)."""
    ok = current_trace().checks.ok
    if ok is None:
        return indices
    return ops.select(ok, indices, ops.full_like(indices, work_shape[0]))


def _slice_update(x: Tracer, items, values: Tracer) -> Tracer:
    """Basic indexing with unit steps: one dynamic_update_slice (``values`` already has the target shape)."""
    starts, window = dynamic_starts(items, x.shape)
    reversed_axes = []
    for item in items:
        if item.kind == "int":
            window[item.axis] = 1
            starts[item.axis] = ops.constant(item.value, INDEX_DTYPE)
        elif item.kind == "slice":
            first, stop, step = item.value.indices(x.shape[item.axis])
            count = len(range(first, stop, step))
            if step < 0:
                reversed_axes.append(item.axis)
                first = first + (count - 1) * step
            window[item.axis] = count
            starts[item.axis] = ops.constant(first if count else 0, INDEX_DTYPE)
    update = ops.reverse(ops.reshape(values, window), reversed_axes)
    ok = current_trace().checks.ok
    if ok is not None:          # after a failed check the region keeps what it held
        update = ops.select(ok, update, ops.dynamic_slice(x, starts, window))
    return ops.dynamic_update_slice(x, update, starts)


def _unit_steps(items, work_shape) -> bool:
    for item in items:
        if item.kind == "slice":
            first, stop, step = item.value.indices(work_shape[item.axis])
            if abs(step) != 1 and len(range(first, stop, step)) > 1:
                return False
        elif item.kind == "window" and item.value.step != 1 and item.value.length > 1:
            return False
    return True


def _traced_mask_position(index):
    entries = index if isinstance(index, tuple) else (index,)
    found = [i for i, e in enumerate(entries) if isinstance(e, Tracer) and e.dtype == np.bool_]
    return (entries, found[0]) if found else (entries, None)


def _masked_update(x: Tracer, entries, at: int, values, mode: str) -> Tracer:
    """``x[..., mask, ...] = values`` for a traced boolean ``mask``: a select, as the result keeps its shape."""
    mask = entries[at]
    others = entries[:at] + entries[at + 1:]
    if len(entries) > 1 + sum(e is Ellipsis for e in others) + sum(_is_full_slice(e) for e in others) or \
            sum(e is Ellipsis for e in others) > 1:
        raise UnsupportedError(located(
            "a traced boolean mask can be combined only with `:` and `...` in an assignment index; "
            "index with the mask alone, e.g. x[mask] = v, or use xnp.where(mask, v, x)"))
    after = sum(_is_full_slice(e) for e in entries[at + 1:])
    before = sum(_is_full_slice(e) for e in entries[:at])
    if mask.ndim + before + after > x.ndim:
        raise IndexError(located(f"too many indices for array: array is {x.ndim}-dimensional, "
                                 f"but {mask.ndim + before + after} were indexed"))
    start = x.ndim - mask.ndim - after if any(e is Ellipsis for e in entries[:at]) else before
    for i, size in enumerate(mask.shape):
        if size != x.shape[start + i]:
            raise IndexError(located(
                f"boolean index did not match indexed array along axis {start + i}; size of axis is "
                f"{x.shape[start + i]} but size of corresponding boolean axis is {size}"))
    stop = start + mask.ndim
    template = x.shape[:start] + (1,) + x.shape[stop:]
    values = update_values(values, x.dtype)
    try:
        values = broadcast_values(values, template, advanced=True)
    except ValueError:
        raise ValueError(located(
            f"assigning a {values.shape} array through a traced boolean mask: NumPy broadcasts the values to "
            f"x[mask]'s shape {x.shape[:start]} + (number of True elements,) + {x.shape[stop:]}, which is known "
            "only when the program runs. Assign a scalar (or values that fit every count, of shape "
            f"{x.shape[stop:]}), or use xnp.where(mask, values_for_all_elements, x)")) from None
    values = ops.broadcast_to(ops.reshape(values, x.shape[:start] + (1,) * mask.ndim + x.shape[stop:]), x.shape)
    if mode != "set":
        combiner = (_BOOL_COMBINERS if x.dtype == np.bool_ else _MASK_COMBINERS)[mode]
        values = combiner(x, values)
    pred = ops.broadcast_in_dim(mask, x.shape, tuple(range(start, stop)))
    return ops.select(pred, values, x)


def _check_boolean_assign(shape, index, values) -> None:
    """NumPy's rules for ``x[mask] = values`` with one mask covering every axis: values of at most one
    dimension, and (for a mask known at trace time) one value per True element or a single one."""
    entries = index if isinstance(index, tuple) else (index,)
    mask = entries[0] if len(entries) == 1 else None
    if not (isinstance(mask, (np.ndarray, Tracer)) and mask.dtype == np.bool_ and mask.ndim == len(shape)):
        return
    ndim = np.ndim(values) if not isinstance(values, Tracer) else values.ndim
    if ndim > 1:
        raise TypeError(located("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, "
                                f"input has {ndim} dimensions"))
    size, count = int(np.prod(np.shape(values))), None if isinstance(mask, Tracer) else int(mask.sum())
    if ndim == 1 and count is not None and size not in (1, count):
        raise ValueError(located(f"NumPy boolean array indexing assignment cannot assign {size} input values to "
                                 f"the {count} output values where the mask is true"))


def _truth_value(value):
    """What NumPy stores into one element of a bool array: ``bool(value)``, so a size-1 array gives its
    element and a list whether it is empty."""
    if isinstance(value, (list, tuple)):
        return bool(value)
    if np.ndim(value) == 0 or np.size(value) != 1:
        return value            # a larger array: NumPy's "setting an array element with a sequence" below
    return ops.reshape(asarray(value), ())


def _is_full_slice(entry) -> bool:
    return isinstance(entry, slice) and entry == slice(None)


def _index_update(x, index, values, mode="set"):
    x = asarray(x)
    if mode not in UPDATE_MODES:
        raise ValueError(located(f"index_update: mode must be one of {', '.join(map(repr, UPDATE_MODES))}, "
                                 f"got {mode!r}"))
    mode = UPDATE_MODES[mode]
    _check_boolean_assign(x.shape, index, values)
    entries, at = _traced_mask_position(index)
    if at is not None:
        return _masked_update(x, entries, at, values, mode)
    items, work_shape = parse_index(x.shape, index)
    advanced = any(item.kind == "array" for item in items)
    if x.dtype == np.bool_ and mode == "set" and _is_full_integer_index(items, x.ndim):
        values = _truth_value(values)
    values = update_values(values, x.dtype)
    if values.ndim and _is_full_integer_index(items, x.ndim):
        raise ValueError(located("setting an array element with a sequence."))
    target = _layout(_as_advanced(items), work_shape)[0]
    if advanced and any(work_shape[i.axis] == 0 for i in items if i.kind == "array") \
            and 0 not in _layout(items, work_shape)[3]:
        raise IndexError(located("index is out of bounds for an axis of size 0"))
    values = broadcast_values(values, target, advanced)
    if values.size == 0:
        return x
    work = ops.reshape(x, work_shape)
    if not advanced and mode == "set" and _unit_steps(items, work_shape):
        work = _slice_update(work, items, values)
    else:
        work = _scatter_update(work, items, work_shape, values, mode, dedupe=advanced and mode == "set")
    return current_trace().checks.guarded(ops.reshape(work, x.shape))


_index_update.__name__ = "index_update"
_traced_index_update = numpy_function(_index_update)


def index_update(x, index, values, mode="set"):
    """A new array equal to ``x`` after NumPy's ``x[index] = values`` (``x`` itself is not changed).

    ``index`` takes every form :func:`getitem` does, plus a traced boolean mask (``values`` a scalar, one row,
    or one element per True element in order, their count checked after the call) and slices with traced
    bounds (:mod:`xlac.numpy.dynamic_extent`). ``values`` is broadcast to the
    shape of ``x[index]`` and cast to ``x.dtype`` as NumPy's assignment casts (floats into integers
    truncate; a Python NaN into an integer array raises ValueError). Duplicate positions keep the last
    value, as in NumPy, on every backend. Traced indices wrap negatives; one out of bounds raises
    IndexError after the call (unless checks are off: ``xlac.compile(..., check_bounds=False)``).

    ``mode`` "add", "multiply", "minimum" or "maximum" combines ``values`` into ``x`` instead, with
    duplicates accumulating as in ``np.add.at(x, index, values)``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.index_update(np.zeros(4), [0, 2, 0], [5.0, 6.0, 7.0]))
    array([7., 0., 6., 0.])
    >>> np.asarray(xnp.index_update(np.zeros(4, int), slice(None, None, 2), 1.9))
    array([1, 0, 1, 0])
    >>> np.asarray(xnp.index_update(np.zeros(3), [1, 1], 2.0, mode="add"))
    array([0., 4., 0.])
    """
    if mode == "set" and current_trace() is not None and handles_write(x, index, values):
        return write_dynamic(asarray(x), index, values)   # traced slice bounds, a traced mask's order
    if current_trace() is None:
        index = concrete_index(index)
        entries, at = _traced_mask_position(index)
        _check_boolean_assign(np.shape(x), index, values)
        if at is None:
            parse_index(np.shape(x), index)
            index = masks_as_positions(index)
        if isinstance(values, np.generic):
            values = _real_part_if_complex(values, np.result_type(x)).item()
    return _traced_index_update(x, index, values, mode)


index_update.__wrapped_numpy__ = _index_update


# ---------------------------------------------------------------- writes through a dynamic extent


def write_dynamic(x: Tracer, index, value) -> Tracer:
    """``x`` after ``x[index] = value``, for an index :func:`xlac.numpy.dynamic_extent.read` takes or one holding dynamic values."""
    if holds_dynamic_index(index):
        return dynamic_call(operator.setitem, (x, index, value), {})
    if is_traced_mask(x, index):
        rows = x.shape[:index.ndim]
        flat = shapes.reshape(x, (index.size,) + x.shape[index.ndim:])
        return shapes.reshape(write_selected(flat, mask_extent(index, ("mask", index.value.id)), value),
                           rows + x.shape[index.ndim:])
    view_index, dynamic = static_view_index(x.shape, index)
    region = x[view_index]
    axes, sizes, stepped = [None] * region.ndim, list(region.shape), {}
    for view_axis, (source_axis, bounds) in dynamic.items():
        if bounds[2] == 1:
            axes[view_axis] = slice_extent(bounds, x.shape[source_axis])
        else:               # the value is aligned as the slice reads: its elements from the front
            first, step, axes[view_axis] = stepped_extent(bounds, region.shape[view_axis])
            stepped[view_axis] = (first, step)
            sizes[view_axis] = axes[view_axis].size
    new = aligned(value, region.ndim, axes, sizes, "could not broadcast input array into the region")
    new = shapes.broadcast_to(_cast_for_write(new, x.dtype), tuple(sizes))
    inside = valid_mask(DynamicExtent(region, [None if a in stepped else e for a, e in enumerate(axes)]))
    for axis, (first, step) in stepped.items():
        new, placed = from_front(new, axis, first, step, region.shape[axis], axes[axis].count)
        inside = ops.and_(inside, ops.broadcast_in_dim(placed, region.shape, (axis,)))
    return index_update(x, view_index, ufuncs.where(inside, new, region))


def write_selected(x: Tracer, extent: AxisExtent, value) -> Tracer:
    """``x`` (its first axis that of ``extent``, a selection by a mask) after ``x[mask] = value``: a value of
    the same selection in place, else one element (row) per selected one in order, each selected position
    taking that of its rank (lengths checked after the call), or one broadcast to all."""
    rest = x.shape[1:]
    if isinstance(value, DynamicExtent) and value.axes[0] is not None and value.axes[0].key == extent.key and \
            value.data.shape == x.shape and not any(value.axes[1:]):
        new = value.data
    else:
        new = placed(value, x.ndim, [extent] + [None] * len(rest), list(x.shape),
                     "shape mismatch: value array could not be broadcast to the indexing result")
    new = shapes.broadcast_to(_cast_for_write(new, x.dtype), x.shape)
    return ufuncs.where(ops.broadcast_in_dim(extent.valid, x.shape, (0,)), new, x)


def _cast_for_write(values, dtype):
    return update_values(creation.asarray(values), dtype)
