"""Reading with NumPy's indexing: ``x[index]``, ``take`` and ``take_along_axis``.

Basic indexing (integers, slices, ``None``, ``...``) lowers to slice, reverse,
dynamic_slice and reshape; advanced indexing (integer arrays, boolean masks known
at trace time) lowers to one gather, with NumPy's rule for where the broadcast
index dimensions go.

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
import warnings
from dataclasses import dataclass

import numpy as np

from xlac.errors import TracerConversionError, UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops, views
from xlac.trace.checks import require_index_in_bounds
from xlac.trace.context import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["getitem", "index_update", "take", "take_along_axis"]

INDEX_DTYPE = np.dtype("int64")
VALID_INDICES = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                 "boolean arrays are valid indices")


# ---------------------------------------------------------------- parsing the index


@dataclass
class _Item:
    """One entry of the expanded index.

    kind: "slice" | "int" (static) | "dyn" (traced 0-d integer) | "array" (integer array, static or traced)
          | "new" (None) | "ellipsis" (a marker: it separates advanced indices even when it spans no axis).
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


def _parse(shape, index) -> tuple[list[_Item], tuple[int, ...]]:
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
                items.append(_Item("ellipsis"))
            for _ in range(len(shape) - indexed):
                items.append(_Item("slice", len(work_shape), slice(None)))
                work_shape.append(shape[axis])
                axis += 1
            indexed = len(shape)
        elif kind == "new":
            items.append(_Item("new"))
        elif kind == "bool":
            items.append(_Item("array", len(work_shape), np.zeros(1 if value else 0, INDEX_DTYPE), True))
            work_shape.append(1)
        elif kind == "mask":
            _check_mask(value, shape, axis)
            for positions in np.nonzero(value):
                items.append(_Item("array", len(work_shape), positions.astype(INDEX_DTYPE), True))
                work_shape.append(shape[axis])
                axis += 1
        else:
            items.append(_make_item(kind, value, len(work_shape), axis, shape[axis]))
            work_shape.append(shape[axis])
            axis += 1
    return items, tuple(work_shape)


def _check_mask(mask: np.ndarray, shape, axis: int) -> None:
    for i, size in enumerate(mask.shape):
        if size != shape[axis + i]:
            raise IndexError(located(
                f"boolean index did not match indexed array along axis {axis + i}; size of axis is "
                f"{shape[axis + i]} but size of corresponding boolean axis is {size}"))


def _make_item(kind: str, value, work_axis: int, axis: int, size: int) -> _Item:
    if kind == "int":
        return _Item("int", work_axis, _normalized_static(np.asarray(value), axis, size).item())
    if kind == "array" and not isinstance(value, Tracer):
        return _Item("array", work_axis, _normalized_static(value, axis, size), True)
    if kind == "dyn" and size == 0:
        raise IndexError(located(f"index is out of bounds for axis {axis} with size 0"))
    if kind == "slice":
        _check_slice(value)
    return _Item(kind, work_axis, value, source_axis=axis)


def _normalized_static(index: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Static indices in [0, size), or NumPy's IndexError naming the first one out of bounds."""
    index = index.astype(INDEX_DTYPE)
    bad = (index < -size) | (index >= size)
    if bad.any():
        raise IndexError(located(f"index {index[bad].flat[0]} is out of bounds for axis {axis} with size {size}"))
    return np.where(index < 0, index + size, index)


def _check_slice(s: slice) -> None:
    for bound in (s.start, s.stop, s.step):
        if isinstance(bound, Tracer):
            raise TracerConversionError(located(
                f"slice bounds must be known at trace time, got a traced {bound.value.type}. Make the bound a "
                "static argument, or gather with an integer array, e.g. x[start + xnp.arange(size)]."))


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


def _normalized_traced(index: Tracer, size: int, axis: int | None) -> Tracer:
    """A traced index as int64 with negative values wrapped. Unless the trace's checks are off, the call
    raises IndexError afterwards for an index outside ``[-size, size)`` (see :mod:`xlac.trace.checks`);
    XLA clamps such an index meanwhile."""
    require_index_in_bounds(index, size, axis)
    if dtypes.is_unsigned_int(index.dtype):
        return ops.convert(index, INDEX_DTYPE)
    index = ops.convert(index, INDEX_DTYPE)
    zero = ops.full(index.shape, 0, INDEX_DTYPE)
    wrapped = ops.add(index, ops.full(index.shape, size, INDEX_DTYPE))
    return ops.select(ops.compare(index, zero, "LT"), wrapped, index)


def _basic(x: Tracer, items) -> Tracer:
    x = _apply_slices(x, items)
    dynamic = {item.axis: item.value for item in items if item.kind == "dyn"}
    if dynamic:
        zero = ops.constant(0, INDEX_DTYPE)
        axes = {item.axis: item.source_axis for item in items if item.kind == "dyn"}
        starts = [_normalized_traced(dynamic[a], x.shape[a], axes[a]) if a in dynamic else zero
                  for a in range(x.ndim)]
        x = ops.dynamic_slice(x, starts, [1 if a in dynamic else d for a, d in enumerate(x.shape)])
    shape = []
    for item in items:
        if item.kind == "slice":
            shape.append(x.shape[item.axis])
        elif item.kind == "new":
            shape.append(1)
    return ops.reshape(x, shape)


def _broadcast_index_shape(arrays) -> tuple[int, ...]:
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
            column = array if normalized else _normalized_traced(array, size, axis)
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
    batch_shape = _broadcast_index_shape([a.value for a in arrays])
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
    items, work_shape = _parse(x.shape, index)
    return _index(x, items, work_shape)


_getitem.__name__ = "getitem"          # the origin traced nodes are recorded with
_traced_getitem = numpy_function(_getitem, view="writable")   # basic indexing gives views


def _concrete_index(index):
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
    masks known at trace time are supported, with NumPy's placement of advanced-index dimensions.
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
        index = _concrete_index(index)
        _parse(np.shape(x), index)
        index = _masks_as_positions(index)
        element = reads_one_element(np.ndim(x), index)
        result = _traced_getitem(x, index)
        if element:                     # NumPy's element read is a scalar: `t += 1` rebinds t
            result.mutability = "value"
        return result
    result = _traced_getitem(x, index)
    return views.element(result) if reads_one_element(np.ndim(x), index) else result


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


def _masks_as_positions(index):
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
    if mode != "raise":
        if size == 0:
            raise IndexError(located("take: cannot do a non-empty take from an empty axes."))
        index = _static_mode(np.asarray(index), size, mode) if not isinstance(index, Tracer) \
            else _traced_mode(index, size, mode)
    items = [_Item("slice", d, slice(None)) for d in range(a.ndim)]
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
            items.append(_Item("array", d, ops.iota(grid_shape, INDEX_DTYPE, d), True))
    return _index(arr, items, arr.shape)


# ---------------------------------------------------------------- writing: x[index] = values, functionally

UPDATE_MODES = {"set": "set", "add": "add", "multiply": "mul", "minimum": "min", "maximum": "max"}
_MASK_COMBINERS = {"add": ops.add, "mul": ops.mul, "min": ops.min, "max": ops.max}
_BOOL_COMBINERS = {"add": ops.or_, "max": ops.or_, "mul": ops.and_, "min": ops.and_}


def _real_part_if_complex(values, dtype):
    """NumPy complex values written into a real array: their real part, with NumPy's ComplexWarning."""
    if isinstance(values, (np.ndarray, np.generic)) and values.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=4)
        return values.real
    return values


def _update_values(values, dtype) -> Tracer:
    """``values`` cast to ``dtype`` as NumPy's setitem casts (unsafe; Python scalars checked like NumPy)."""
    if isinstance(values, Tracer):
        if np.dtype(values.dtype).kind == "c" and np.dtype(dtype).kind != "c":
            values = ops.real(values)
        return ops.convert(values, dtype)
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


def _broadcast_values(values: Tracer, target, advanced: bool) -> Tracer:
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
            item = _Item("array", item.axis, np.asarray(item.value, INDEX_DTYPE), True, item.source_axis)
        elif item.kind == "dyn":
            item = _Item("array", item.axis, item.value, False, item.source_axis)
        else:
            item = _Item(item.kind, item.axis, item.value, item.normalized, item.source_axis)
        out.append(item)
    return out


def _layout(items, work_shape):
    """(target shape, {slice item position: target dim}, first batch dim, batch shape) of ``x[items]``."""
    arrays = [item.value for item in items if item.kind == "array"]
    batch_shape = _broadcast_index_shape(arrays) if arrays else ()
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
        elif item.kind == "array":
            value = item.value
            if isinstance(value, Tracer):
                value = value if item.normalized else _normalized_traced(value, work_shape[item.axis],
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
    window, starts, reversed_axes = [], [], []
    for item in items:
        if item.kind in ("int", "dyn"):
            window.append(1)
            starts.append(ops.constant(item.value, INDEX_DTYPE) if item.kind == "int"
                          else _normalized_traced(item.value, x.shape[item.axis], item.source_axis))
        elif item.kind == "slice":
            first, stop, step = item.value.indices(x.shape[item.axis])
            count = len(range(first, stop, step))
            if step < 0:
                reversed_axes.append(item.axis)
                first = first + (count - 1) * step
            window.append(count)
            starts.append(ops.constant(first if count else 0, INDEX_DTYPE))
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
    values = _update_values(values, x.dtype)
    try:
        values = _broadcast_values(values, template, advanced=True)
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
    items, work_shape = _parse(x.shape, index)
    advanced = any(item.kind == "array" for item in items)
    if x.dtype == np.bool_ and mode == "set" and _is_full_integer_index(items, x.ndim):
        values = _truth_value(values)
    values = _update_values(values, x.dtype)
    if values.ndim and _is_full_integer_index(items, x.ndim):
        raise ValueError(located("setting an array element with a sequence."))
    target = _layout(_as_advanced(items), work_shape)[0]
    if advanced and any(work_shape[i.axis] == 0 for i in items if i.kind == "array") \
            and 0 not in _layout(items, work_shape)[3]:
        raise IndexError(located("index is out of bounds for an axis of size 0"))
    values = _broadcast_values(values, target, advanced)
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

    ``index`` takes every form :func:`getitem` does, plus a traced boolean mask (written with a select, so
    ``values`` must fit any number of True elements: a scalar, or one row). ``values`` is broadcast to the
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
    if current_trace() is None:
        index = _concrete_index(index)
        entries, at = _traced_mask_position(index)
        _check_boolean_assign(np.shape(x), index, values)
        if at is None:
            _parse(np.shape(x), index)
            index = _masks_as_positions(index)
        if isinstance(values, np.generic):
            values = _real_part_if_complex(values, np.result_type(x)).item()
    return _traced_index_update(x, index, values, mode)


index_update.__wrapped_numpy__ = _index_update
