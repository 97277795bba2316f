"""Reading with NumPy's indexing: ``x[index]``, ``take`` and ``take_along_axis``.

Basic indexing (integers, slices, ``None``, ``...``) lowers to slice, reverse,
dynamic_slice and reshape; advanced indexing (integer arrays, boolean masks known
at trace time) lowers to one gather, with NumPy's rule for where the broadcast
index dimensions go. A slice of static length at a traced start (``x[i:i + K]``,
a :class:`Window`) is a dynamic_slice of that length.

>>> import numpy as np, xlac.numpy as xnp
>>> x = np.arange(12).reshape(3, 4)
>>> np.asarray(xnp.getitem(x, (slice(None, None, -1), [0, 3])))
array([[ 8, 11],
       [ 4,  7],
       [ 0,  3]])
"""
from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

import numpy as np

from xlac.errors import TracerConversionError, UnsupportedError, located, user_location
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops, views
from xlac.trace.checks import Check, require_index_in_bounds
from xlac.trace.facts import known_range, note_element_read, offset_form
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["getitem", "take", "take_along_axis"]

INDEX_DTYPE = dtypes.INDEX
VALID_INDICES = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                 "boolean arrays are valid indices")


# ---------------------------------------------------------------- parsing the index


@dataclass
class IndexItem:
    """One entry of the expanded index.

    kind: "slice" | "int" (static) | "dyn" (traced 0-d integer) | "array" (integer array, static or traced)
          | "window" (a :class:`Window`) | "new" (None)
          | "ellipsis" (a marker: it separates advanced indices even when it spans no axis).
    axis: the axis of the working array it indexes (boolean scalars get a size-1 axis of their own).
    """

    kind: str
    axis: int | None = None
    value: object = None
    normalized: bool = False      # "array" values already in [0, size)
    source_axis: int | None = None   # the axis of the indexed array, as NumPy's messages number it


def _classify(entry):
    """(kind, value) for one entry of the user's index, before axes are assigned."""
    if entry is None:
        return "new", None
    if entry is Ellipsis:
        return "ellipsis", None
    if isinstance(entry, slice):
        return "slice", entry
    if isinstance(entry, Tracer):
        return _classify_tracer(entry)
    if isinstance(entry, (bool, np.bool_)):
        return "bool", bool(entry)
    if isinstance(entry, numbers.Integral):
        return "int", int(entry)
    if isinstance(entry, range):      # NumPy indexes with a range as with the integer array it lists
        entry = np.arange(entry.start, entry.stop, entry.step)
    if isinstance(entry, (list, tuple, np.ndarray)) or hasattr(entry, "__xlac_array__"):
        return _classify_array(entry)
    raise IndexError(located(VALID_INDICES))


def _holds_tracer(sequence) -> bool:
    return any(isinstance(e, Tracer) or (isinstance(e, (list, tuple)) and _holds_tracer(e)) for e in sequence)


def _classify_tracer(t: Tracer):
    if t.dtype == np.bool_:
        raise TracerConversionError(located(
            f"boolean mask indexing with a traced mask {t.value.type}: the result's shape depends on how many "
            "elements are True, which is known only when the program runs. Keep the shape with "
            "xnp.where(mask, x, 0) (or xnp.where(mask, x, other)), or pass the mask as a NumPy array "
            "(a constant or a static argument)."))
    if not dtypes.is_int(t.dtype):
        raise IndexError(located(f"arrays used as indices must be of integer (or boolean) type, got a traced {t.dtype}"))
    return ("dyn", t) if t.ndim == 0 else ("array", t)


def _classify_array(entry):
    is_sequence = isinstance(entry, (list, tuple))
    if is_sequence and _holds_tracer(entry):       # a list of traced integers: one traced index array
        return _classify_tracer(asarray(entry))
    if hasattr(entry, "__xlac_array__"):
        entry = entry.__xlac_array__()
    try:
        array = np.asarray(entry)
    except (ValueError, TypeError):
        raise IndexError(located(VALID_INDICES)) from None
    if is_sequence and array.size == 0:
        array = array.astype(np.intp)
    if array.dtype == np.bool_:
        return ("bool", bool(array)) if array.ndim == 0 else ("mask", array)
    if not dtypes.is_int(array.dtype):
        raise IndexError(located(VALID_INDICES if is_sequence else
                                 "arrays used as indices must be of integer (or boolean) type"))
    return ("int", int(array)) if array.ndim == 0 else ("array", array)


def _consumed(kind: str, value) -> int:
    """How many axes of the array an entry indexes."""
    if kind in ("slice", "int", "dyn", "array"):
        return 1
    if kind == "mask":
        return value.ndim
    return 0


def parse_index(shape, index) -> tuple[list[IndexItem], tuple[int, ...]]:
    """The index as items with axes assigned, and the working shape (``shape`` with boolean scalars' axes)."""
    entries = [_classify(e) for e in (index if isinstance(index, tuple) else (index,))]
    if sum(kind == "ellipsis" for kind, _ in entries) > 1:
        raise IndexError(located("an index can only have a single ellipsis ('...')"))
    indexed = sum(_consumed(kind, value) for kind, value in entries)
    if indexed > len(shape):
        raise IndexError(located(f"too many indices for array: array is {len(shape)}-dimensional, "
                                 f"but {indexed} were indexed"))
    if all(kind != "ellipsis" for kind, _ in entries):
        entries.append(("end", None))
    items, work_shape, axis = [], [], 0
    for kind, value in entries:
        if kind in ("ellipsis", "end"):
            if kind == "ellipsis":
                items.append(IndexItem("ellipsis"))
            for _ in range(len(shape) - indexed):
                items.append(IndexItem("slice", len(work_shape), slice(None)))
                work_shape.append(shape[axis])
                axis += 1
            indexed = len(shape)
        elif kind == "new":
            items.append(IndexItem("new"))
        elif kind == "bool":
            items.append(IndexItem("array", len(work_shape), np.zeros(1 if value else 0, INDEX_DTYPE), True))
            work_shape.append(1)
        elif kind == "mask":
            _check_mask(value, shape, axis)
            for positions in np.nonzero(value):
                items.append(IndexItem("array", len(work_shape), positions.astype(INDEX_DTYPE), True))
                work_shape.append(shape[axis])
                axis += 1
        else:
            items.append(_make_item(kind, value, len(work_shape), axis, shape[axis]))
            work_shape.append(shape[axis])
            axis += 1
    if any(item.kind == "window" for item in items) and any(item.kind == "array" for item in items):
        _check_slice(slice(next(item.value.start for item in items if item.kind == "window")))
    return items, tuple(work_shape)


def takes_as_windows(shape, index) -> bool:
    """Whether :func:`parse_index` takes ``index``, its slices with traced bounds as windows
    (:class:`Window`), rather than leaving them to :mod:`xlac.numpy.dynamic_extent`.

    >>> import numpy as np, xlac
    >>> found = []
    >>> _ = xlac.compile(lambda x, i: found.extend([takes_as_windows(x.shape, (slice(i, i + 2), 0)),
    ...                                              takes_as_windows(x.shape, slice(i, None))]))(np.ones((4, 3)), 1)
    >>> found
    [True, False]
    """
    try:
        parse_index(shape, index)
    except TracerConversionError:
        return False
    return True


def _check_mask(mask: np.ndarray, shape, axis: int) -> None:
    for i, size in enumerate(mask.shape):
        if size != shape[axis + i]:
            raise IndexError(located(
                f"boolean index did not match indexed array along axis {axis + i}; size of axis is "
                f"{shape[axis + i]} but size of corresponding boolean axis is {size}"))


def _make_item(kind: str, value, work_axis: int, axis: int, size: int) -> IndexItem:
    if kind == "int":
        return IndexItem("int", work_axis, _normalized_static(np.asarray(value), axis, size).item())
    if kind == "array" and not isinstance(value, Tracer):
        return IndexItem("array", work_axis, _normalized_static(value, axis, size), True)
    if kind == "dyn" and size == 0:
        raise IndexError(located(f"index is out of bounds for axis {axis} with size 0"))
    if kind == "slice" and _has_traced_bound(value):
        window = Window.of(value, size)
        if window is None:
            _check_slice(value)
        return IndexItem("window", work_axis, window, source_axis=axis)
    return IndexItem(kind, work_axis, value, source_axis=axis)


def _normalized_static(index: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Static indices in [0, size), or NumPy's IndexError naming the first one out of bounds."""
    index = index.astype(INDEX_DTYPE)
    bad = (index < -size) | (index >= size)
    if bad.any():
        raise IndexError(located(f"index {index[bad].flat[0]} is out of bounds for axis {axis} with size {size}"))
    return np.where(index < 0, index + size, index)


def _has_traced_bound(s: slice) -> bool:
    return any(isinstance(bound, Tracer) for bound in (s.start, s.stop, s.step))


def _check_slice(s: slice) -> None:
    for bound in (s.start, s.stop, s.step):
        if isinstance(bound, Tracer):
            raise TracerConversionError(located(
                f"slice bounds must be known at trace time, got a traced {bound.value.type}. Make the bound a "
                "static argument, or gather with an integer array, e.g. x[start + xnp.arange(size)]."))


@dataclass(frozen=True)
class Window:
    """A slice of static length at a traced start, ``x[i:i + K]`` or ``x[i:i + K:step]`` (``K`` and a
    positive ``step`` Python ints): ``length`` elements that span ``span`` positions of the axis.

    NumPy's slice is shorter where it runs past the end of the axis (or starts before its beginning); this
    one has the static length. :meth:`of` takes a slice as a window only where the start's known range (a
    rolled loop's index, ``xlac.trace.facts.known_range``) proves it inside the axis, or where nothing is known of
    the start: then :meth:`first_position` checks after the call that NumPy's slice is the whole window
    (else :class:`xlac.UnsupportedError` names the start). A slice that may run out of the axis in a known
    range stays a value of dynamic extent among the positions it may hold
    (:func:`xlac.numpy.dynamic_extent.clipped_window`), which gives NumPy's result.

    >>> import numpy as np, xlac
    >>> window = xlac.compile(lambda x, i: x[i:i + 2] * 10)
    >>> np.asarray(window(np.arange(5.0), 3)).tolist()
    [30.0, 40.0]
    """

    start: Tracer
    extent: int           # stop - start
    step: int
    length: int
    size: int             # of the axis
    proven: bool          # the start's known range lies inside the axis

    @property
    def span(self) -> int:
        return (self.length - 1) * self.step + 1

    @classmethod
    def of(cls, s: slice, size: int) -> Window | None:
        """``s`` as a window of an axis of ``size``, or None."""
        start, stop, step = s.start, s.stop, 1 if s.step is None else s.step
        if not (isinstance(start, Tracer) and isinstance(stop, Tracer)) or isinstance(step, Tracer) or \
                not isinstance(step, numbers.Integral) or step <= 0:
            return None
        if start.ndim or stop.ndim or not (dtypes.is_int(start.dtype) and dtypes.is_int(stop.dtype)):
            return None
        (base, low), (stop_base, high) = offset_form(start), offset_form(stop)
        if base != stop_base or high - low < 1:
            return None
        length = -(-(high - low) // step)
        window = cls(start, high - low, int(step), length, size, False)
        if window.span > size:
            return None
        known = known_range(start)
        if known is None:
            return window
        if known[0] >= 0 and known[1] + window.span <= size:
            return cls(start, high - low, int(step), length, size, True)
        return None                     # NumPy's shorter slice, for some start: a dynamic extent

    def first_position(self, axis: int | None) -> Tracer:
        """The window's first position along the axis (int64); unless the start is proven inside the axis,
        the call checks afterwards that NumPy's slice holds the whole window (see ``check_bounds``)."""
        start = ops.convert(self.start, INDEX_DTYPE)
        if self.proven:
            return start
        first, stop = _numpy_bound(start, self.size), _numpy_bound(ops.add(start, _int64(self.extent)), self.size)
        checks = current_trace().checks
        if checks.enabled:
            message = (f"a slice start:start + {self.extent}" + (f":{self.step}" if self.step != 1 else "") +
                       f" at a traced start, compiled as a window of {self.length} elements, starts at {{value}}"
                       f", where axis {axis} of size {self.size} holds fewer of them: NumPy's slice would be "
                       "shorter, and a compiled window's length is static. Keep the start within "
                       f"[{-self.size}, {self.size - self.span}], or slice with static bounds")
            checks.require(ops.compare(ops.sub(stop, first), _int64(self.span), "GE"), start,
                           Check(UnsupportedError, message, user_location()))
        return first


def _int64(n: int) -> Tracer:
    return ops.constant(n, INDEX_DTYPE)


def _numpy_bound(bound: Tracer, size: int) -> Tracer:
    """A slice bound (int64) as NumPy reads it for a positive step: negative counts from the end, then
    clipped to ``[0, size]``."""
    wrapped = ops.select(ops.compare(bound, _int64(0), "LT"), ops.add(bound, _int64(size)), bound)
    return ops.clamp(_int64(0), wrapped, _int64(size))


# ---------------------------------------------------------------- lowering


def _apply_slices(x: Tracer, items) -> Tracer:
    """Static slices (and, in basic indexing, static integers) as one slice and one reverse."""
    start, limit, strides, reversed_axes = [0] * x.ndim, list(x.shape), [1] * x.ndim, []
    for item in items:
        if item.kind == "int":
            start[item.axis], limit[item.axis] = item.value, item.value + 1
        elif item.kind == "slice":
            first, stop, step = item.value.indices(x.shape[item.axis])
            count = len(range(first, stop, step))
            if step < 0:
                reversed_axes.append(item.axis)
                first, step = first + (count - 1) * step, -step   # slice forwards from the last element
            start[item.axis] = first if count else 0
            limit[item.axis] = first + (count - 1) * step + 1 if count else 0
            strides[item.axis] = step
    return ops.reverse(ops.slice(x, start, limit, strides), reversed_axes)


def normalized_traced_index(index: Tracer, size: int, axis: int | None) -> Tracer:
    """A traced index as int64 with negative values wrapped. Unless the trace's checks are off, the call
    raises IndexError afterwards for an index outside ``[-size, size)`` (see :mod:`xlac.trace.checks`);
    XLA clamps such an index meanwhile. An index known to lie in ``[0, size)`` (a rolled loop's own index
    over a range that fits the axis) needs neither."""
    known = known_range(index)
    if known is not None and 0 <= known[0] and known[1] < size:
        return ops.convert(index, INDEX_DTYPE)
    require_index_in_bounds(index, size, axis)
    if dtypes.is_unsigned_int(index.dtype):
        return ops.convert(index, INDEX_DTYPE)
    index = ops.convert(index, INDEX_DTYPE)
    zero = ops.full(index.shape, 0, INDEX_DTYPE)
    wrapped = ops.add(index, ops.full(index.shape, size, INDEX_DTYPE))
    return ops.select(ops.compare(index, zero, "LT"), wrapped, index)


def dynamic_starts(items, shape) -> tuple[list, list]:
    """The start (int64 Tracer) and size per axis of the one dynamic_slice that reads (or the
    dynamic_update_slice that writes) traced integers' and windows' positions, the other axes whole."""
    starts, sizes = [_int64(0)] * len(shape), list(shape)
    for item in items:
        if item.kind == "dyn":
            starts[item.axis] = normalized_traced_index(item.value, shape[item.axis], item.source_axis)
            sizes[item.axis] = 1
        elif item.kind == "window":
            starts[item.axis] = item.value.first_position(item.source_axis)
            sizes[item.axis] = item.value.span
    return starts, sizes


def _basic(x: Tracer, items) -> Tracer:
    # Traced indices and windows read one block with one dynamic_slice, into which static integers and
    # forward unit-step slices fold as constant starts: never a copy of the whole array sliced first (which
    # XLA makes in each iteration of a loop whose index the block takes).
    static_items = items
    if any(item.kind in ("dyn", "window") for item in items):
        x, static_items = _dynamic_block(x, items)
    x = _apply_slices(x, static_items)
    shape = []
    for item in items:
        if item.kind in ("slice", "window"):
            shape.append(x.shape[item.axis])
        elif item.kind == "new":
            shape.append(1)
    return ops.reshape(x, shape)


def _dynamic_block(x: Tracer, items) -> tuple[Tracer, list]:
    """The block that traced indices, windows, static integers and forward unit-step slices read, as one
    dynamic_slice (and a strided slice for windows' steps); the static items left to apply to it."""
    starts, sizes = dynamic_starts(items, x.shape)
    left = []
    for item in items:
        if item.kind == "int":
            starts[item.axis], sizes[item.axis] = _int64(item.value), 1
        elif item.kind == "slice" and (item.value.step or 1) == 1:
            first, stop, _ = item.value.indices(x.shape[item.axis])
            starts[item.axis], sizes[item.axis] = _int64(first), max(stop - first, 0)
        else:
            left.append(item)
    x = ops.dynamic_slice(x, starts, sizes)
    steps = [1] * x.ndim
    for item in items:
        if item.kind == "window":
            steps[item.axis] = item.value.step
    if any(step != 1 for step in steps):
        x = ops.slice(x, [0] * x.ndim, list(x.shape), steps)
    return x, left


def broadcast_index_shape(arrays) -> tuple[int, ...]:
    shapes = [tuple(a.shape) for a in arrays]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError(located("shape mismatch: indexing arrays could not be broadcast together with shapes "
                                 + " ".join(str(s) for s in shapes))) from None


def _index_tensor(arrays, sizes, batch_shape) -> Tracer:
    """The gather indices: every index array broadcast to ``batch_shape``, stacked in a last axis.
    ``arrays``: (index array, already normalized, the axis it indexes) triples."""
    if not any(isinstance(a, Tracer) for a, _, _ in arrays):
        stacked = np.stack([np.broadcast_to(a, batch_shape) for a, _, _ in arrays], axis=-1)
        return ops.constant(stacked, INDEX_DTYPE)
    columns = []
    for (array, normalized, axis), size in zip(arrays, sizes):
        if isinstance(array, Tracer):
            column = array if normalized else normalized_traced_index(array, size, axis)
            column = ops.broadcast_to(ops.convert(column, INDEX_DTYPE), batch_shape)
        else:
            column = ops.constant(np.broadcast_to(array, batch_shape), INDEX_DTYPE)
        columns.append(ops.reshape(column, batch_shape + (1,)))
    return ops.concatenate(columns, len(batch_shape))


def _advanced(x: Tracer, items) -> Tracer:
    for item in items:
        if item.kind in ("int", "dyn"):
            item.kind, item.value = "array", (np.asarray(item.value, INDEX_DTYPE) if item.kind == "int" else item.value)
            item.normalized = item.normalized or not isinstance(item.value, Tracer)
    x = _apply_slices(x, items)
    advanced = [i for i, item in enumerate(items) if item.kind == "array"]
    arrays = [items[i] for i in advanced]
    batch_shape = broadcast_index_shape([a.value for a in arrays])
    adjacent = all(items[i].kind == "array" for i in range(advanced[0], advanced[-1] + 1))
    batch_at = sum(item.kind == "slice" for item in items[:advanced[0]]) if adjacent else 0
    out_shape = _advanced_shape(items, x.shape, batch_shape, adjacent)
    axes = [a.axis for a in arrays]
    if any(x.shape[a] == 0 for a in axes) and 0 not in batch_shape:
        raise IndexError(located("index is out of bounds for an axis of size 0"))
    if 0 in out_shape:
        return ops.full(out_shape, 0, x.dtype)
    indices = _index_tensor([(a.value, a.normalized, a.source_axis) for a in arrays], [x.shape[a] for a in axes],
                            batch_shape)
    rank = len(batch_shape) + x.ndim - len(axes)
    gathered = ops.gather(
        x, indices,
        offset_dims=tuple(d for d in range(rank) if not batch_at <= d < batch_at + len(batch_shape)),
        collapsed_slice_dims=tuple(sorted(axes)), start_index_map=tuple(axes),
        slice_sizes=tuple(1 if a in axes else d for a, d in enumerate(x.shape)))
    return ops.reshape(gathered, out_shape)


def _advanced_shape(items, shape, batch_shape, adjacent: bool) -> tuple[int, ...]:
    out = [] if adjacent else list(batch_shape)
    placed = not adjacent
    for item in items:
        if item.kind == "array" and not placed:
            out.extend(batch_shape)
            placed = True
        elif item.kind == "slice":
            out.append(shape[item.axis])
        elif item.kind == "new":
            out.append(1)
    return tuple(out)


def _index(x: Tracer, items, work_shape) -> Tracer:
    x = ops.reshape(x, work_shape)
    if any(item.kind == "array" for item in items):
        return _advanced(x, items)
    return _basic(x, items)


# ---------------------------------------------------------------- public functions


def _getitem(x, index):
    x = asarray(x)
    items, work_shape = parse_index(x.shape, index)
    return _index(x, items, work_shape)


_getitem.__name__ = "getitem"          # the origin traced nodes are recorded with
_traced_getitem = numpy_function(_getitem, view="writable")   # basic indexing gives views


def concrete_index(index):
    """An eager call's index with every concrete entry in the form the eager cache keys on: NumPy integers
    as Python ints, masks, lists and ``xlac.Array`` as NumPy arrays (which travel as dynamic arguments)."""
    def entry(e):
        if isinstance(e, (bool, np.bool_)):
            return bool(e)
        if isinstance(e, numbers.Integral):
            return int(e)
        if isinstance(e, (list, tuple)) or hasattr(e, "__xlac_array__"):
            kind, value = _classify_array(e)
            return value if kind in ("int", "bool") else np.asarray(value)
        if isinstance(e, np.ndarray) and e.ndim == 0 and e.dtype.kind in "biu":
            return e.item()
        return e
    return tuple(entry(e) for e in index) if isinstance(index, tuple) else entry(index)


def getitem(x, index):
    """``x[index]`` with NumPy 2's indexing rules; ``x[index]`` on traced and ``xlac.Array`` values calls it.

    Integers, slices (any step), ``None``, ``...``, integer arrays (NumPy, lists or traced) and boolean
    masks known at trace time are supported, with NumPy's placement of advanced-index dimensions; a slice
    of static length at a traced start (``x[i:i + K]``) is a :class:`Window`.
    Static out-of-bounds indices raise NumPy's IndexError at once, traced ones after the call (see
    ``xlac.compile``'s ``check_bounds``); negative traced indices wrap as in NumPy.
    A traced boolean mask raises :class:`xlac.TracerConversionError`: the result's shape would depend on
    the data; use ``xnp.where(mask, x, 0)`` instead.

    >>> import xlac.numpy as xnp
    >>> x = np.arange(10.0)
    >>> np.asarray(xnp.getitem(x, slice(7, 2, -2)))
    array([7., 5., 3.])
    >>> np.asarray(xnp.getitem(x.reshape(2, 5), (x.reshape(2, 5) > 6.5)))
    array([7., 8., 9.])
    """
    if current_trace() is None:         # check bounds and masks on the concrete index before compiling
        index = concrete_index(index)
        parse_index(np.shape(x), index)
        index = masks_as_positions(index)
        element = reads_one_element(np.ndim(x), index)
        result = _traced_getitem(x, index)
        if element:                     # NumPy's element read is a scalar: `t += 1` rebinds t
            result.mutability = "value"
        return result
    result = _traced_getitem(x, index)
    if not reads_one_element(np.ndim(x), index):
        return result
    element = views.element(result)
    if isinstance(x, Tracer):
        note_element_read(element, x, index if isinstance(index, tuple) else (index,))
    return element


def reads_one_element(ndim: int, index) -> bool:
    """NumPy's rule for when ``x[index]`` is a scalar (a copy) rather than a view: every axis is
    removed by an integer (a Python or NumPy integer, or a 0-d integer array, traced or not).

    >>> reads_one_element(2, (0, -1)), reads_one_element(2, (0, ...)), reads_one_element(0, ())
    (True, False, True)
    """
    entries = index if isinstance(index, tuple) else (index,)
    return len(entries) == ndim and all(_is_integer_scalar(e) for e in entries)


def _is_integer_scalar(entry) -> bool:
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, numbers.Integral):
        return True
    if isinstance(entry, (Tracer, np.ndarray)) or hasattr(entry, "__xlac_array__"):
        return np.ndim(entry) == 0 and dtypes.is_int(entry.dtype)
    return False


getitem.__wrapped_numpy__ = _getitem


def masks_as_positions(index):
    """Boolean arrays as their ``nonzero()`` integer arrays (the same index), so eager masks stay concrete."""
    def expand(e):
        if isinstance(e, np.ndarray) and e.dtype == np.bool_ and e.ndim > 0:
            return tuple(np.nonzero(e))
        return (e,)
    entries = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(e, np.ndarray) and e.dtype == np.bool_ and e.ndim > 0 for e in entries):
        return index
    return tuple(p for e in entries for p in expand(e))


def _with_eager_check(check):
    """A public function that, outside a trace, first runs ``check(*args, **kwargs)`` on the concrete
    arguments (bounds of index arrays that will travel as dynamic arguments), then the numpy_function."""
    def decorate(fn):
        traced = numpy_function(fn)

        @functools.wraps(fn)
        def public(*args, **kwargs):
            if current_trace() is None:
                check(*args, **kwargs)
            return traced(*args, **kwargs)
        public.__wrapped_numpy__ = fn
        return public
    return decorate


def _concrete(indices):
    if isinstance(indices, (list, tuple, np.ndarray, np.generic)) or hasattr(indices, "__xlac_array__"):
        kind, value = _classify(indices)
        return value if kind in ("int", "array") else None
    return None


def _check_take(a, indices, axis=None, out=None, mode="raise"):
    index = _concrete(indices)
    if index is not None and mode == "raise":
        shape = np.shape(a)
        if axis is None:
            _normalized_static(np.asarray(index), 0, int(np.prod(shape)))
        else:
            axis = normalize_axis(axis, len(shape), "take")
            _normalized_static(np.asarray(index), axis, shape[axis])


def _check_take_along_axis(arr, indices, axis=-1):
    index = _concrete(indices)
    shape = np.shape(arr)
    if index is not None and np.ndim(index) == (1 if axis is None else len(shape)):
        if axis is None:
            _normalized_static(np.asarray(index), 0, int(np.prod(shape)))
        else:
            axis = normalize_axis(axis, len(shape), "take_along_axis")
            _normalized_static(np.asarray(index), axis, shape[axis])


@_with_eager_check(_check_take)
def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of ``a`` at ``indices`` along ``axis`` (the flattened array when ``axis`` is None).

    ``mode="raise"`` checks static indices (traced ones are clamped, as in :func:`getitem`);
    ``"clip"`` clips to the valid range and ``"wrap"`` wraps around, as in NumPy.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.take(np.array([[1, 2], [3, 4]]), [3, -1, 0]))
    array([4, 4, 1])
    >>> np.asarray(xnp.take(np.arange(4), [5, -7], mode="wrap"))
    array([1, 1])
    """
    dst = _out.output_operand(out, "take")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(located(f"take: mode must be 'raise', 'clip' or 'wrap', got {mode!r}"))
    a = asarray(a)
    if axis is None:
        a, axis = ops.reshape(a, (a.size,)), 0
    axis = normalize_axis(axis, a.ndim, "take")
    kind, index = _classify(indices)
    if kind in ("bool", "mask"):
        raise IndexError(located("take: indices must be integers, got booleans"))
    if kind not in ("int", "dyn", "array"):
        raise IndexError(located(f"take: indices must be an integer array, got {indices!r}"))
    size = a.shape[axis]
    if mode != "raise" and not (size == 0 and np.size(index) == 0):
        if size == 0:
            raise IndexError(located("take: cannot do a non-empty take from an empty axes."))
        index = _static_mode(np.asarray(index), size, mode) if not isinstance(index, Tracer) \
            else _traced_mode(index, size, mode)
    items = [IndexItem("slice", d, slice(None)) for d in range(a.ndim)]
    scalar_kind = "int" if not isinstance(index, Tracer) else "dyn"
    item_kind = scalar_kind if np.ndim(index) == 0 else "array"
    value = int(index) if item_kind == "int" else index
    items[axis] = _make_item(item_kind, value, axis, axis, size)
    return _out.store_whole_result(dst, _index(a, items, a.shape), "take")


def _static_mode(index: np.ndarray, size: int, mode: str) -> np.ndarray:
    return np.clip(index, 0, size - 1) if mode == "clip" else np.mod(index, size)


def _traced_mode(index: Tracer, size: int, mode: str) -> Tracer:
    index = ops.convert(index, INDEX_DTYPE)
    if mode == "clip":
        return ops.clamp(ops.constant(0, INDEX_DTYPE), index, ops.constant(size - 1, INDEX_DTYPE))
    n = ops.full(index.shape, size, INDEX_DTYPE)
    remainder = ops.rem(index, n)
    negative = ops.compare(remainder, ops.full(index.shape, 0, INDEX_DTYPE), "LT")
    return ops.select(negative, ops.add(remainder, n), remainder)


@_with_eager_check(_check_take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    """``arr`` indexed by ``indices`` along ``axis``, the other axes matched (broadcast) position by position:
    the inverse of ``argsort`` / ``argmax(keepdims=True)``. ``axis=None`` works on the flattened array.

    >>> import xlac.numpy as xnp
    >>> a = np.array([[3, 1, 2], [9, 7, 8]])
    >>> np.asarray(xnp.take_along_axis(a, np.argsort(a, axis=1), axis=1))
    array([[1, 2, 3],
           [7, 8, 9]])
    """
    arr = asarray(arr)
    kind, index = _classify(indices)
    if kind in ("bool", "mask"):
        raise IndexError(located("`indices` must be an integer array"))
    if axis is None:
        if np.ndim(index) != 1:
            raise ValueError(located("when axis=None, `indices` must have a single dimension."))
        arr, axis = ops.reshape(arr, (arr.size,)), 0
    if np.ndim(index) != arr.ndim:
        raise ValueError(located("`indices` and `arr` must have the same number of dimensions"))
    axis = normalize_axis(axis, arr.ndim, "take_along_axis")
    items = []
    for d, size in enumerate(arr.shape):
        if d == axis:
            items.append(_make_item(kind, index, d, d, size))
        else:
            grid_shape = tuple(size if k == d else 1 for k in range(arr.ndim))
            items.append(IndexItem("array", d, ops.iota(grid_shape, INDEX_DTYPE, d), True))
    return _index(arr, items, arr.shape)
