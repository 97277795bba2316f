"""NumPy's shape functions on values with a dynamic extent (:mod:`xlac.numpy.dynamic_extent`): each moves the
data as NumPy moves the elements and carries every dynamic axis's extent to where that axis goes.

- ``transpose``, ``moveaxis``, ``swapaxes``, ``expand_dims``, ``squeeze`` (of static axes): the extents move
  with their axes;
- ``flip`` (and ``v[::-1]``): a flipped dynamic axis holds its elements at the mirrored positions;
- ``concatenate``, ``stack``, ``hstack``, ``vstack``: along a dynamic axis the elements of each operand
  follow those of the one before (the operands' other dynamic axes must hold the same positions: slices
  with the same bounds, selections by the same mask);
- ``repeat``: along a dynamic axis, each element repeated;
- ``reshape``/``ravel``: static axes split or merged freely; a dynamic axis kept as it is
  (``(n?, 4) -> (n?, 2, 2)``) or merged with its neighbours into one dynamic axis (``ravel``), never split;
  ``w.reshape(v.shape)`` into the shape of another dynamic value;
- new values: ``np.zeros(v.shape)`` and the other fill functions, ``np.arange(v.size)`` (``arange`` of any
  integer bound whose range tracing knows).

>>> import numpy as np, xlac
>>> @xlac.compile
... def heads(x, n):
...     q = x[:n].reshape(-1, 2, 2).transpose(1, 0, 2)     # (2, n?, 2)
...     return (q * np.flip(q, axis=1)).sum(axis=(1, 2))
>>> np.asarray(heads(np.arange(12.0).reshape(3, 4), 2)).tolist()
[10.0, 66.0]
"""
from __future__ import annotations

import functools
import itertools
import math
import operator

import numpy as np

from xlac.numpy import array_api
from xlac.numpy import creation
from xlac.numpy import indexing
from xlac.numpy import manipulation
from xlac.numpy import shapes
from xlac.numpy import sorting
from xlac.numpy import ufuncs
from xlac.errors import TracerConversionError, UnsupportedError, ValueNeeded, located
from xlac.ir.view_rules import contiguous_strides, nocopy_reshape_strides
from xlac.numpy._core import normalize_axes, normalize_axis
from xlac.numpy._dispatch import dynamic_extent_rule
from xlac.numpy.dynamic_extent import (INDEX, REDERIVED, AxisExtent, DerivedView, DynamicExtent, DynamicShapeError,
                                       SteppedView, bound_key, derived_view, ndim_of, ranks, require, valid_mask)
from xlac.trace import ops
from xlac.trace.facts import known_range
from xlac.trace.tracer import Tracer
from xlac.trace.views import strides_of

__all__ = ["reversed_extent"]


def _value(data, axes):
    """A new dynamic value, or the array ``data`` where no axis is dynamic."""
    return DynamicExtent(data, axes) if any(a is not None for a in axes) else data


def _parts(value) -> tuple:
    """(data, per-axis extents) of a dynamic value or an array."""
    if isinstance(value, DynamicExtent):
        return value.data, list(value.axes)
    data = creation.asarray(value)
    return data, [None] * data.ndim


# ---------------------------------------------------------------- axes moved


def _each_axis(axes, ndim: int, op: str) -> tuple:
    """``axes`` (one or a sequence, in the order given) each normalized to ``[0, ndim)``."""
    return tuple(normalize_axis(a, ndim, op) for a in (axes if isinstance(axes, (tuple, list)) else (axes,)))


@dynamic_extent_rule(shapes.transpose)
def transpose(value, axes=None):
    order = tuple(reversed(range(value.ndim))) if axes is None else _each_axis(axes, value.ndim, "transpose")
    return derived_view(value, lambda data: shapes.transpose(data, order), [value.axes[a] for a in order])


@dynamic_extent_rule(shapes.moveaxis)
def moveaxis(value, source, destination):
    source, destination = _each_axis(source, value.ndim, "moveaxis"), _each_axis(destination, value.ndim, "moveaxis")
    if len(source) != len(destination):
        raise ValueError(located("`source` and `destination` arguments must have the same number of elements"))
    order = [a for a in range(value.ndim) if a not in source]
    for to, origin in sorted(zip(destination, source)):
        order.insert(to, origin)
    return transpose(value, order)


@dynamic_extent_rule(shapes.swapaxes)
def swapaxes(value, axis1, axis2):
    order = list(range(value.ndim))
    a, b = normalize_axis(axis1, value.ndim, "swapaxes"), normalize_axis(axis2, value.ndim, "swapaxes")
    order[a], order[b] = order[b], order[a]
    return transpose(value, order)


@dynamic_extent_rule(shapes.expand_dims)
def expand_dims(value, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = value.ndim + len(axes)
    new = normalize_axes(tuple(axes), ndim, "expand_dims")
    extents = iter(value.axes)
    out = [None if a in new else next(extents) for a in range(ndim)]
    return derived_view(value, lambda data: shapes.expand_dims(data, tuple(new)), out)


@dynamic_extent_rule(shapes.squeeze)
def squeeze(value, axis=None):
    if axis is None:
        axes = tuple(a for a, n in enumerate(value.data.shape) if n == 1 and value.axes[a] is None)
        if any(n == 1 and value.axes[a] is not None for a, n in enumerate(value.data.shape)):
            raise value.shape_error("squeeze (whether an axis of at most one element has one)")
    else:
        axes = normalize_axes(axis if isinstance(axis, (tuple, list)) else (axis,), value.ndim, "squeeze")
        if any(value.axes[a] is not None for a in axes):
            raise value.shape_error("squeeze along an axis")
    kept = [extent for a, extent in enumerate(value.axes) if a not in axes]
    return derived_view(value, lambda data: shapes.squeeze(data, axes), kept)


# ---------------------------------------------------------------- flipped, repeated


def reversed_extent(extent: AxisExtent) -> AxisExtent:
    """The extent of an axis after its positions are reversed."""
    start = None if extent.start is None else extent.size - extent.start - extent.count
    return AxisExtent(shapes.flip(extent.valid), extent.count, start, ("reversed",) + extent.key)


@dynamic_extent_rule(shapes.flip)
def flip(value, axis=None):
    axes = tuple(range(value.ndim)) if axis is None else \
        normalize_axes(axis if isinstance(axis, (tuple, list)) else (axis,), value.ndim, "flip")
    extents = [reversed_extent(e) if a in axes and e is not None else e for a, e in enumerate(value.axes)]
    return derived_view(value, lambda data: shapes.flip(data, axes), extents)


@dynamic_extent_rule(manipulation.fliplr)
def fliplr(value):
    return flip(value, 1)


@dynamic_extent_rule(manipulation.flipud)
def flipud(value):
    return flip(value, 0)


@dynamic_extent_rule(manipulation.repeat)
def repeat(value, repeats, axis=None):
    if axis is None:
        value, axis = ravel(value), 0
    axis = normalize_axis(axis, value.ndim, "repeat")
    extent = value.axes[axis]
    if extent is None:
        return DynamicExtent(manipulation.repeat(value.data, repeats, axis), value.axes)
    if np.ndim(repeats) != 0 or not isinstance(repeats, (int, np.integer)):
        raise UnsupportedError(located("np.repeat along an axis whose length is known only when the program runs: "
                                       "repeats must be one Python int"))
    times = operator.index(repeats)
    start = None if extent.start is None else extent.start * times
    repeated = AxisExtent(manipulation.repeat(extent.valid, times), extent.count * times, start, ("repeated", times) + extent.key)
    axes = list(value.axes)
    axes[axis] = repeated
    return DynamicExtent(manipulation.repeat(value.data, times, axis), axes)


@dynamic_extent_rule(manipulation.roll)
def roll(value, shift, axis=None):
    """``np.roll`` of a dynamic value: along a dynamic axis its elements rotate among themselves (a
    gather from the position of each one's source rank)."""
    if axis is None and value.ndim != 1:
        return _unsupported("np.roll without axis= of a multi-dimensional value")
    axis = 0 if axis is None else axis
    if isinstance(axis, (tuple, list)) or isinstance(shift, (tuple, list)):
        return _unsupported("np.roll over several axes")
    axis = normalize_axis(axis, value.ndim, "roll")
    extent = value.axes[axis]
    if extent is None:
        return DynamicExtent(manipulation.roll(value.data, shift, axis), value.axes)
    count = ufuncs.maximum(extent.count, 1)
    source_rank = ufuncs.remainder(ranks(extent) - array_api.astype(creation.asarray(shift), INDEX), count)
    in_order = ops.iota((extent.size,), INDEX, 0) if extent.start is not None else \
        sorting.argsort(ufuncs.logical_not(extent.valid), kind="stable")           # the elements' positions, in order
    first = extent.start if extent.start is not None else ops.constant(0, INDEX)
    source = indexing.take(in_order, ufuncs.clip(first + source_rank, 0, extent.size - 1))
    return DynamicExtent(indexing.take(value.data, source, axis=axis), value.axes)


@dynamic_extent_rule(manipulation.diff)
def diff(value, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` of a dynamic value: differences of consecutive elements (along a dynamic axis, of
    consecutive ranks: ``v[1:] - v[:-1]``)."""
    if prepend is not None or append is not None:
        return _unsupported("np.diff with prepend= or append=")
    axis = normalize_axis(axis, value.ndim, "diff")
    before, after = [slice(None)] * value.ndim, [slice(None)] * value.ndim
    before[axis], after[axis] = slice(None, -1), slice(1, None)
    for _ in range(n):
        value = value[tuple(after)] - value[tuple(before)] if value.dtype != np.bool_ else \
            value[tuple(after)] != value[tuple(before)]
    return value


def _unsupported(what: str):
    raise UnsupportedError(located(f"{what} of a value whose length is known only when the program runs"))


# ---------------------------------------------------------------- joined


@dynamic_extent_rule(shapes.concatenate)
def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """``np.concatenate`` where some operands are dynamic: along a dynamic axis, a selection of each
    operand's elements in turn; the other axes must hold the same positions in every operand."""
    if out is not None:
        raise UnsupportedError(located("np.concatenate of values whose length is known only when the program runs "
                                       "with out="))
    if axis is None:
        arrays, axis = [ravel(a) if isinstance(a, DynamicExtent) else shapes.ravel(a) for a in arrays], 0
    parts = [_parts(a) for a in arrays]
    ndim = parts[0][0].ndim
    if any(data.ndim != ndim for data, _ in parts):
        raise ValueError(located("all the input array dimensions except for the concatenation axis must match "
                                 "exactly, but the operands have different numbers of dimensions"))
    axis = normalize_axis(axis, ndim, "concatenate")
    extents = []
    for a in range(ndim):
        if a == axis:
            joined = [e if e is not None else _whole(data.shape[a]) for data, axes in parts for e in (axes[a],)]
            extents.append(_joined(joined) if any(axes[a] is not None for _, axes in parts) else None)
            continue
        keys = {None if axes[a] is None else axes[a].key for _, axes in parts}
        if len(keys) > 1:
            raise DynamicShapeError(located(
                f"np.concatenate: along axis {a} the operands hold different positions (slices with different "
                "bounds, selections by different masks, or a static axis against a dynamic one); slice them alike"))
        extents.append(next((axes[a] for _, axes in parts if axes[a] is not None), None))
    data = shapes.concatenate([d for d, _ in parts], axis=axis, dtype=dtype, casting=casting)
    return _value(data, extents)


def _whole(size: int) -> AxisExtent:
    return AxisExtent(ops.full((size,), True, np.bool_), ops.constant(size, INDEX), ops.constant(0, INDEX),
                      ("whole", size))


def _joined(extents: list) -> AxisExtent:
    """The extent of an axis joined from axes of ``extents``: each one's elements in turn."""
    count = extents[0].count
    for extent in extents[1:]:
        count = ops.add(count, extent.count)
    valid = ops.concatenate([e.valid for e in extents], 0)
    return AxisExtent(valid, count, None, ("joined",) + tuple(e.key for e in extents))


@dynamic_extent_rule(shapes.stack)
def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    ndim = max(ndim_of(a) for a in arrays) + 1
    axis = normalize_axis(axis, ndim, "stack")
    expanded = [expand_dims(a, axis) if isinstance(a, DynamicExtent) else shapes.expand_dims(a, axis) for a in arrays]
    return concatenate(expanded, axis, out, dtype, casting)


@dynamic_extent_rule(shapes.hstack)
def hstack(tup, dtype=None, casting="same_kind"):
    arrays = [a if ndim_of(a) else shapes.atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if ndim_of(arrays[0]) == 1 else 1, dtype=dtype, casting=casting)


@dynamic_extent_rule(shapes.column_stack)
def column_stack(tup):
    return concatenate([expand_dims(a, 1) if isinstance(a, DynamicExtent) and a.ndim == 1 else
                        a if ndim_of(a) > 1 else shapes.expand_dims(a, 1) for a in tup], 1)


def _atleast(ndim: int, function):
    """``np.atleast_1d`` (``ndim`` 1, ``function`` xnp's), ``atleast_2d``, ``atleast_3d`` of dynamic values, as
    NumPy adds axes."""
    @dynamic_extent_rule(function)
    def run(*arrays):
        out = []
        for a in arrays:
            if not isinstance(a, DynamicExtent):
                out.append(function(a))
            elif a.ndim >= ndim:
                out.append(a)
            elif ndim == 2:
                out.append(expand_dims(a, 0))
            else:               # atleast_3d: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
                out.append(expand_dims(a, (0, 2)) if a.ndim == 1 else expand_dims(a, 2))
        return out[0] if len(out) == 1 else tuple(out)
    return run


_atleast(1, shapes.atleast_1d)
_atleast(2, shapes.atleast_2d)
_atleast(3, shapes.atleast_3d)


@dynamic_extent_rule(shapes.vstack)
def vstack(tup, dtype=None, casting="same_kind"):
    arrays = [expand_dims(a, 0) if isinstance(a, DynamicExtent) and a.ndim == 1 else
              a if isinstance(a, DynamicExtent) else shapes.atleast_2d(a) for a in tup]
    return concatenate(arrays, 0, dtype=dtype, casting=casting)


# ---------------------------------------------------------------- reshaped


def _reshape_groups(old: tuple, new: tuple) -> list[tuple[list[int], list[int]]]:
    """:func:`_groups`, where a reshape into one axis (``ravel``) is one group of every axis (dynamic axes of
    length 1 among them too)."""
    return [(list(range(len(old))), [0])] if len(new) == 1 else _groups(old, new)


def _groups(old: tuple, new: tuple) -> list[tuple[list[int], list[int]]]:
    """The axes of ``old`` and of ``new`` (shapes of one size, none 0) that hold the same elements: runs
    whose products agree, NumPy's reshape within each run."""
    groups, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        olds, news, p, q = [i], [j], old[i], new[j]
        while p != q:
            if p < q:
                i += 1
                olds.append(i)
                p *= old[i]
            else:
                j += 1
                news.append(j)
                q *= new[j]
        groups.append((olds, news))
        i, j = i + 1, j + 1
    groups.extend(([a], []) for a in range(i, len(old)))          # trailing axes of length 1
    groups.extend(([], [b]) for b in range(j, len(new)))
    return groups


def _resolved(shape, sizes: tuple) -> tuple[tuple, int | None]:
    """``shape`` with its -1 worked out against the data's ``sizes``, and where that -1 was."""
    shape = tuple(operator.index(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    unknown = [k for k, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError(located("can only specify one unknown dimension"))
    if not unknown:
        return shape, None
    known = math.prod(n for n in shape if n != -1)
    total = math.prod(sizes)
    if known == 0 or total % known:
        raise ValueError(located(f"cannot reshape a value whose length is known only when the program runs into "
                                 f"shape {shape}"))
    return tuple(total // known if n == -1 else n for n in shape), unknown[0]


@dynamic_extent_rule(shapes.reshape, takes_shape=True)
def reshape(value, shape, order="C", **kwargs):
    """``np.reshape`` of a dynamic value: static axes split or merged as NumPy does; a dynamic axis kept
    where it is, or merged with its neighbours (its elements in NumPy's order), never split. A length
    given (not -1) for a dynamic axis is checked after the call."""
    shape = kwargs.pop("newshape", kwargs.pop("shape", shape))
    return _reshape(value, shape, order, kwargs, _reshape_views)


def _reshape(value, shape, order, kwargs, views) -> DynamicExtent:
    """``reshape`` or ``ravel`` (whether NumPy's result is a view: ``views(shape, strides, new_shape)``)."""
    if order != "C" or kwargs:
        raise UnsupportedError(located("reshape of a value whose length is known only when the program runs: "
                                       "order='C' only"))
    if getattr(shape, "is_dynamic_shape", False):
        return _reshaped_as(value, shape.value)
    old = value.data.shape
    new, unknown_at = _resolved(shape, old)
    if 0 in old or math.prod(new) != math.prod(old):
        raise ValueError(located(f"cannot reshape a value whose length is known only when the program runs into "
                                 f"shape {new}: give the length of its dynamic axis as -1"))
    extents = [None] * len(new)
    merged = False      # a dynamic axis merged with another: NumPy views or copies as the strides allow
    flat = len(new) == 1
    for olds, news in _reshape_groups(old, new):
        dynamic = [a for a in olds if value.axes[a] is not None]
        if not dynamic:
            continue
        long_axes = news if flat else [b for b in news if new[b] != 1]
        if len(long_axes) != 1 or not flat and any(old[a] == 1 for a in dynamic):
            raise value.shape_error(f"reshape into {new} (it would split an axis whose length is known only "
                                     "when the program runs)")
        (to,) = long_axes
        others = [a for a in olds if a not in dynamic and old[a] != 1]
        kept = len(dynamic) == 1 and not others
        merged = merged or not kept
        extents[to] = value.axes[dynamic[0]] if kept else _merged(value, olds)
        if to != unknown_at:
            elements = _elements(value, olds)
            require(elements == new[to], elements, ValueError,
                    f"cannot reshape an axis of {{value}} elements into one of length {new[to]}")
    if value.is_view and (merged or views is _ravel_views):
        return _view_or_copy(value, new, extents, views)
    return derived_view(value, lambda data: shapes.reshape(data, new), extents)


def _reshape_views(shape, strides, new_shape) -> bool:
    """Whether NumPy's reshape is a view: where the strides allow one."""
    return nocopy_reshape_strides(shape, strides, new_shape) is not None


def _ravel_views(shape, strides, new_shape) -> bool:
    """Whether NumPy's ravel is a view: of a C-contiguous array only (axes of length 1 do not count)."""
    return 0 in shape or all(s == c for n, s, c in zip(shape, strides, contiguous_strides(shape)) if n != 1)


def _view_or_copy(value: DynamicExtent, new: tuple, extents: list, views):
    """``reshape`` (or ``ravel``) of a view that NumPy views or copies as the strides allow, which here can
    depend on the lengths known only when the program runs (``x[:, i:j].reshape(-1)`` is a view where
    ``j - i`` is 0, 1 or the whole row, else a copy): the result is then the one or the other, chosen
    when the program runs (a write into it is refused)."""
    if value.is_view == REDERIVED and not isinstance(value, SteppedView):
        raise UnsupportedError(located(
            "a reshape or ravel of a view (transposed, flipped, ...) of x[i::k] with a traced bound that merges "
            "its axes: reshape x[i::k] itself, or copy the view first"))
    strides = value.strides if isinstance(value, SteppedView) else strides_of(value.data)
    viewed = _viewed_when(value, strides, new, views)
    if viewed is True:
        return derived_view(value, lambda data: shapes.reshape(data, new), extents)
    copy = shapes.copy(shapes.reshape(value.data, new))
    if viewed is False:
        return DynamicExtent(copy, extents)
    return DerivedView(value, lambda data: ufuncs.where(viewed, shapes.reshape(data, new), copy), extents,
                       "an in-place write into a reshape of a view with a traced bound that NumPy views or copies "
                       "depending on a length known only when the program runs: copy it first, or write the view",
                       data=copy)


def _viewed_when(value: DynamicExtent, strides, new: tuple, views):
    """Whether NumPy's ``reshape(new)`` of the view ``value`` (element ``strides``; its dynamic axes holding
    their counts) is a view (``views(shape, strides, new_shape)``), as a condition on those counts: True,
    False, or a traced boolean. It can change only where a count is 0 or 1, or makes an axis's stride that
    of another (the ratios of the strides); one other count stands for all the rest."""
    old, dynamic = value.data.shape, [a for a, extent in enumerate(value.axes) if extent is not None]
    groups = _reshape_groups(old, new)

    def candidates(axis: int) -> list:
        named = {0, 1} | {strides[b] // strides[axis] for b in range(len(old))
                          if strides[axis] and strides[b] % strides[axis] == 0 and 1 < strides[b] // strides[axis]
                          <= old[axis]}
        other = next((n for n in range(2, old[axis] + 1) if n not in named), None)
        return [(n, True) for n in sorted(named) if n <= old[axis]] + ([(other, False)] if other else [])

    def views_with(counts: dict) -> bool:
        shape = [counts.get(a, n) for a, n in enumerate(old)]
        shape_new = list(new)
        for olds, news in groups:
            if any(a in counts for a in olds):
                long_axis = next((b for b in news if new[b] != 1), news[0])
                shape_new[long_axis] = math.prod(shape[a] for a in olds)
        return views(tuple(shape), strides, tuple(shape_new))

    per_axis = [candidates(a) for a in dynamic]
    outcomes = [(combo, views_with({a: n for a, (n, _) in zip(dynamic, combo)}))
                for combo in itertools.product(*per_axis)]
    if all(v for _, v in outcomes) or not any(v for _, v in outcomes):
        return outcomes[0][1]
    viewed = None
    for combo, is_view in outcomes:
        if not is_view:
            continue
        held = None
        for axis, (n, named), choices in zip(dynamic, combo, per_axis):
            count = value.axes[axis].count
            term = ufuncs.equal(count, n) if named else functools.reduce(
                ufuncs.logical_and, [ufuncs.not_equal(count, m) for m, is_named in choices if is_named])
            held = term if held is None else ufuncs.logical_and(held, term)
        viewed = held if viewed is None else ufuncs.logical_or(viewed, held)
    return viewed


def _reshaped_as(value, target: DynamicExtent):
    """``value.reshape(target.shape)`` (``value`` dynamic or not): the elements of ``value`` in the shape of
    ``target``, which has one dynamic axis; that the two have as many elements is checked after the call."""
    if sum(extent is not None for extent in target.axes) != 1:
        raise target.shape_error("the shape, to reshape another value into it (it has more than one dynamic axis)")
    new = tuple(n if extent is None else -1 for n, extent in zip(target.data.shape, target.axes))
    if isinstance(value, DynamicExtent) and 0 in value.data.shape:      # no element: none in the target either
        reshaped, size = DynamicExtent(ops.full(target.data.shape, 0, value.dtype), target.axes), value.size
    elif isinstance(value, DynamicExtent) and value.data.shape == target.data.shape and \
            [a is None for a in value.axes] == [a is None for a in target.axes]:     # already of that shape
        reshaped, size = value, value.size
    elif isinstance(value, DynamicExtent):
        reshaped, size = reshape(value, new), value.size
    else:
        reshaped = shapes.reshape(value, new)
        size = ops.constant(math.prod(reshaped.shape), INDEX)
    require(size == target.size, size, ValueError, "cannot reshape an array of size {value} into the shape of "
            "another value (a length known only when the program runs) with as many elements")
    return reshaped


def _elements(value: DynamicExtent, axes: list) -> object:
    """How many elements ``value`` has over ``axes`` together (int64)."""
    count = ops.constant(math.prod(value.data.shape[a] for a in axes if value.axes[a] is None), INDEX)
    for a in axes:
        if value.axes[a] is not None:
            count = ops.mul(count, value.axes[a].count)
    return count


def _merged(value: DynamicExtent, axes: list) -> AxisExtent:
    """The extent of one axis merged from ``axes`` (consecutive): their elements in NumPy's order."""
    shape = tuple(value.data.shape[a] for a in axes)
    block = DynamicExtent(ops.full(shape, 0, INDEX), [value.axes[a] for a in axes])
    valid = ops.reshape(valid_mask(block), (math.prod(shape),))
    key = ("merged",) + tuple(("whole", value.data.shape[a]) if value.axes[a] is None else value.axes[a].key
                              for a in axes)
    return AxisExtent(valid, _elements(value, axes), None, key)


@dynamic_extent_rule(shapes.ravel)
def ravel(value, order="C"):
    if value.ndim == 1 and value.is_view != REDERIVED:      # contiguous: itself (a stepped view: a copy)
        return value
    return _reshape(value, -1, order, {}, _ravel_views)


# ---------------------------------------------------------------- new values of a dynamic value's shape


def _shaped(make):
    """Register ``np.zeros`` (``make`` is xlac.numpy's) of a dynamic value's shape: a new value of its extents."""
    @dynamic_extent_rule(make, takes_shape=True)
    def run(shape, *args, **kwargs):
        if not getattr(shape, "is_dynamic_shape", False):
            raise UnsupportedError(located(f"np.{make.__name__} of a value whose length is known only when the "
                                           "program runs, other than as its shape (np.zeros(v.shape))"))
        value = shape.value
        return DynamicExtent(make(value.data.shape, *args, **kwargs), value.axes)


def _like(make):
    """Register ``np.zeros_like`` (``make`` is xlac.numpy's) of a dynamic value, or with the shape of one: a new
    value of its extents."""
    @dynamic_extent_rule(make, takes_shape=True)
    def run(a, *args, shape=None, **kwargs):
        data = a.data if isinstance(a, DynamicExtent) else a
        if getattr(shape, "is_dynamic_shape", False):
            return DynamicExtent(make(data, *args, shape=shape.value.data.shape, **kwargs), shape.value.axes)
        if shape is None and isinstance(a, DynamicExtent):
            return DynamicExtent(make(data, *args, **kwargs), a.axes)
        return make(data, *args, shape=shape, **kwargs)


for _make in (creation.zeros, creation.ones, creation.empty, creation.full):
    _shaped(_make)
for _make in (creation.zeros_like, creation.ones_like, creation.empty_like, creation.full_like):
    _like(_make)


@dynamic_extent_rule(creation.arange)
def arange(start, stop, step, dtype=None):
    """``np.arange`` with a traced integer start or stop whose range tracing knows (``np.arange(v.size)``, a
    rolled loop's index ``i`` in ``np.arange(i)``): ``start, start + step, ...`` from position 0 of an axis as
    long as the longest such range allows, its elements up to the traced length. A bound whose range is not
    known must be a Python int (a Python int argument becomes static and the call traces again)."""
    bounds = [_traced_integer(v) for v in (start, stop)]
    ranges = [(v, v) if isinstance(v, int) else known_range(v) for v in bounds]
    if any(known is None for known in ranges):
        _static_bound(next(v for v, known in zip(bounds, ranges) if known is None))
    step = 1 if step is None else _static_integer(step)      # a traced step: static if a Python int argument
    if step == 0:
        raise ZeroDivisionError(located("arange: the step must not be zero"))
    (low_start, high_start), (low_stop, high_stop) = ranges
    longest = -(-(high_stop - low_start) // step) if step > 0 else -(-(high_start - low_stop) // -step)
    size = max(longest, 0)
    first, end = (ops.constant(v, INDEX) if isinstance(v, int) else array_api.astype(v, INDEX) for v in bounds)
    count = ufuncs.maximum((end - first + (step - 1 if step > 0 else step + 1)) // step, 0)
    positions = ops.iota((size,), INDEX, 0)
    extent = AxisExtent(positions < count, count, ops.constant(0, INDEX),
                        ("arange", size, *(bound_key(v, 0) for v in bounds), step))
    data = first + step * positions
    return DynamicExtent(data if dtype is None else array_api.astype(data, dtype), [extent])


def _static_bound(bound: Tracer):
    """Raise for an arange bound whose range tracing does not know: ``ValueNeeded`` for a Python int argument
    (the call traces again with it static), else a DynamicShapeError saying what is needed."""
    try:
        operator.index(bound)
    except ValueNeeded:
        raise
    except TracerConversionError:
        pass
    raise DynamicShapeError(located(
        "np.arange with a traced start or stop: its length would be known only when the program runs, and "
        "tracing knows no bound on it (it knows one for np.arange(v.size) of a value of dynamic length, and for a "
        "rolled loop's index i in np.arange(i)); pass the bound as a static argument, or select with "
        "xnp.where(xnp.arange(N) < n, ...)"))


def _traced_integer(value):
    """An arange bound: a Python int, or a traced integer scalar (0-d)."""
    if isinstance(value, Tracer):
        if value.ndim != 0 or value.dtype.kind not in "biu":
            raise UnsupportedError(located(f"arange of a traced {value.dtype} {value.shape}: a traced start or stop "
                                           "must be an integer scalar"))
        return value
    return _static_integer(value)


def _static_integer(value) -> int:
    if isinstance(value, (float, np.floating)) or isinstance(value, Tracer) and value.dtype.kind not in "biu":
        raise UnsupportedError(located("arange with a traced bound and a float one: its start, stop and step must be "
                                       "integers"))
    return operator.index(value)
