"""Shape manipulation: reshape, transpose (and rollaxis), broadcasting, joining (and row_stack) and splitting,
with NumPy 2's rules and errors.

Shape and axis arguments are static: Python ints (NumPy integers are accepted too).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.reshape(np.arange(6), (2, -1)))
array([[0, 1, 2],
       [3, 4, 5]])
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from xlac.errors import TracerConversionError, UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, is_python_scalar, normalize_axis
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static, static_value
from xlac.trace import ops
from xlac.trace.tracer import Tracer
from xlac.trace.views import copy, element, here, is_contiguous, mark_view, strides_of, view_of

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
           "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "concatenate", "stack", "hstack",
           "vstack", "dstack", "column_stack", "split", "array_split", "flip", "diagonal", "copy", "shape", "ndim",
           "size", "rollaxis", "row_stack"]

ORDERS = ("C", "F", "A", "K")

# ---------------------------------------------------------------- helpers shared with xlac.numpy.creation


def as_array(x) -> Tracer:
    """``x`` as a traced array; a Python scalar becomes a *strong* array, as ``np.asarray`` makes it."""
    if is_python_scalar(x):
        return asarray(x, dtypes.default_dtype(x))
    return asarray(x)


def shape_tuple(shape, op: str) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple; a traced value raises TracerConversionError."""
    if isinstance(shape, Tracer):
        return (operator.index(shape),)
    try:
        return (operator.index(shape),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(d) for d in shape)
    except TracerConversionError:
        raise
    except TypeError as e:
        raise TypeError(located(f"{op}: shape must be an int or a sequence of ints ({e})")) from None


def normalize_axis_tuple(axis, ndim: int, op: str, argname: str | None = None) -> tuple[int, ...]:
    """NumPy's normalize_axis_tuple: an int or sequence of axes, non-negative, order kept, repeats refused."""
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    axes = tuple(normalize_axis(a, ndim, op) for a in axes)
    if len(set(axes)) != len(axes):
        where = f" in `{argname}` argument" if argname else ""
        raise ValueError(located(f"{op}: repeated axis{where}"))
    return axes


def _check_order(order: str, op: str) -> str:
    if order is None:
        return "C"
    if order not in ORDERS:
        raise ValueError(located(f"{op}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})"))
    if order in ("A", "K"):
        raise UnsupportedError(located(f"{op}: order={order!r} depends on memory layout, which xlac arrays do "
                                       "not have; use order='C' or order='F'"))
    return order


# ---------------------------------------------------------------- reshaping


def _shape_text(shape) -> str:
    dims = ["newaxis" if d < 0 else str(d) for d in shape]
    return "(" + ",".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _resolve_shape(size: int, shape: tuple[int, ...], op: str) -> tuple[int, ...]:
    """``shape`` with its one negative (unknown) dimension inferred, as NumPy does."""
    unknown = [i for i, d in enumerate(shape) if d < 0]
    if len(unknown) > 1:
        raise ValueError(located(f"{op}: can only specify one unknown dimension"))
    known = int(np.prod([d for d in shape if d >= 0], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError(located(f"{op}: cannot reshape array of size {size} into shape {_shape_text(shape)}"))
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError(located(f"{op}: cannot reshape array of size {size} into shape {_shape_text(shape)}"))
    return shape


def _reversed_axes(x: Tracer) -> Tracer:
    return ops.transpose(x, tuple(reversed(range(x.ndim))))


@numpy_function_with_static("shape", view="writable")
def reshape(a, shape=None, order="C", *, copy=None):
    """``a`` with a new shape and the same data; one dimension may be -1 (inferred).

    >>> np.asarray(reshape(np.arange(6), (3, -1)))
    array([[0, 1],
           [2, 3],
           [4, 5]])
    """
    if shape is None:
        raise TypeError(located("reshape() missing required argument 'shape'"))
    order = _check_order(order, "reshape")
    x = as_array(a)
    new_shape = _resolve_shape(x.size, shape_tuple(shape, "reshape"), "reshape")
    if order == "F":
        return _reversed_axes(ops.reshape(_reversed_axes(x), tuple(reversed(new_shape))))
    return ops.reshape(x, new_shape)


@numpy_function(view="writable")
def ravel(a, order="C"):
    """``a`` flattened to one dimension.

    >>> np.asarray(ravel(np.array([[1, 2], [3, 4]])))
    array([1, 2, 3, 4])
    """
    order = _check_order(order, "ravel")
    x = as_array(a)
    if order == "F":
        x = _reversed_axes(x)
    if not is_contiguous(x):       # NumPy's ravel views only a C-contiguous array
        return copy(ops.reshape(x, (x.size,)))
    return ops.reshape(x, (x.size,))


# ---------------------------------------------------------------- axis permutations


@numpy_function_with_static("axes", view="writable")
def transpose(a, axes=None):
    """``a`` with its axes permuted by ``axes`` (reversed when None).

    >>> np.asarray(transpose(np.zeros((1, 2, 3)), (2, 0, 1))).shape
    (3, 1, 2)
    """
    x = as_array(a)
    if axes is None:
        return _reversed_axes(x)
    axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    if len(axes) != x.ndim:
        raise ValueError(located(f"transpose: axes don't match array: {len(axes)} axes given for an array "
                                 f"of dimension {x.ndim}"))
    perm = tuple(normalize_axis(ax, x.ndim, "transpose") for ax in axes)
    if len(set(perm)) != len(perm):
        raise ValueError(located("transpose: repeated axis in transpose"))
    return ops.transpose(x, perm)


@numpy_function_with_static("axis1", "axis2", view="writable")
def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged.

    >>> np.asarray(swapaxes(np.zeros((1, 2, 3)), 0, -1)).shape
    (3, 2, 1)
    """
    x = as_array(a)
    i, j = normalize_axis(axis1, x.ndim, "swapaxes"), normalize_axis(axis2, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return ops.transpose(x, perm)


@numpy_function_with_static("source", "destination", view="writable")
def moveaxis(a, source, destination):
    """``a`` with the axes ``source`` moved to positions ``destination``; the others keep their order.

    >>> np.asarray(moveaxis(np.zeros((1, 2, 3)), 0, -1)).shape
    (2, 3, 1)
    """
    x = as_array(a)
    src = normalize_axis_tuple(source, x.ndim, "moveaxis", "source")
    dst = normalize_axis_tuple(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(located("moveaxis: `source` and `destination` arguments must have the same number "
                                 f"of elements, got {len(src)} and {len(dst)}"))
    order = [ax for ax in range(x.ndim) if ax not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.transpose(x, order)


# ---------------------------------------------------------------- adding and removing unit axes


@numpy_function_with_static("axis", view="writable")
def expand_dims(a, axis):
    """``a`` with new axes of size 1 at positions ``axis`` (an int or a tuple) of the result.

    >>> np.asarray(expand_dims(np.zeros((2, 3)), (0, -1))).shape
    (1, 2, 3, 1)
    """
    x = as_array(a)
    new_axes = (axis,) if not isinstance(axis, (tuple, list)) else axis
    out_ndim = x.ndim + len(new_axes)
    new_axes = set(normalize_axis_tuple(axis, out_ndim, "expand_dims"))
    sizes = iter(x.shape)
    return ops.reshape(x, tuple(1 if i in new_axes else next(sizes) for i in range(out_ndim)))


@numpy_function_with_static("axis", view="writable")
def squeeze(a, axis=None):
    """``a`` without its axes of size 1 (or only those in ``axis``, which must have size 1).

    >>> np.asarray(squeeze(np.zeros((1, 2, 1)))).shape
    (2,)
    """
    x = as_array(a)
    if axis is None:
        drop = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        drop = set(normalize_axis_tuple(axis, x.ndim, "squeeze"))
        for i in sorted(drop):
            if x.shape[i] != 1:
                raise ValueError(located(f"squeeze: cannot select an axis to squeeze out which has size not "
                                         f"equal to one (axis {i} of an array of shape {x.shape})"))
    return ops.reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in drop))


# ---------------------------------------------------------------- broadcasting


@numpy_function_with_static("shape", view="readonly")
def broadcast_to(array, shape):
    """``array`` broadcast to ``shape`` with NumPy's rule (trailing axes aligned).

    >>> np.asarray(broadcast_to(np.array([1, 2]), (2, 2)))
    array([[1, 2],
           [1, 2]])
    """
    target = shape_tuple(shape, "broadcast_to")
    if any(d < 0 for d in target):
        raise ValueError(located(f"broadcast_to: all elements of broadcast shape must be non-negative, got {target}"))
    return ops.broadcast_to(as_array(array), target)


@numpy_function(view="marked")
def broadcast_arrays(*args):
    """The arguments broadcast against each other, as a tuple of views: the arguments themselves where all
    have the common shape already, else read-only views.

    Deviation: writing to a broadcast view raises NumPy's read-only ValueError (NumPy 2 still writes, with
    a FutureWarning that this will stop).

    >>> [np.asarray(r).shape for r in broadcast_arrays(np.zeros(3), np.zeros((2, 1)))]
    [(2, 3), (2, 3)]
    """
    target = ops.broadcast_shapes(*(np.shape(a) for a in args), op="broadcast_arrays")
    if all(np.shape(a) == target for a in args):
        return tuple(_view_or_new(a, lambda t: t) for a in args)
    return tuple(_view_or_new(a, lambda t: ops.broadcast_to(t, target), writable=False) for a in args)


def _view_or_new(a, make, writable: bool = True):
    """``make(a)``: a view of ``a`` where ``a`` is a traced array of this trace, else a new array (from a
    Python scalar, a list or a NumPy constant)."""
    x = as_array(a)
    return view_of(x, make, writable) if x is a else make(x)


def _atleast(arys, ndim_fn):
    results = tuple(_view_or_new(a, ndim_fn) for a in arys)
    return results[0] if len(results) == 1 else results


def _at_least_1d(x):
    return ops.reshape(x, (1,)) if x.ndim == 0 else x


def _at_least_2d(x):
    return ops.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def _at_least_3d(x):
    if x.ndim == 0:
        return ops.reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return ops.reshape(x, (1,) + x.shape + (1,))
    if x.ndim == 2:
        return ops.reshape(x, x.shape + (1,))
    return x


@numpy_function(view="marked")
def atleast_1d(*arys):
    """Each argument viewed with at least one dimension; one array for one argument, else a tuple.

    >>> np.asarray(atleast_1d(3.0))
    array([3.])
    """
    return _atleast(arys, _at_least_1d)


@numpy_function(view="marked")
def atleast_2d(*arys):
    """Each argument viewed with at least two dimensions (a 1-D array of n becomes shape (1, n)).

    >>> np.asarray(atleast_2d(np.array([1, 2]))).shape
    (1, 2)
    """
    return _atleast(arys, _at_least_2d)


@numpy_function(view="marked")
def atleast_3d(*arys):
    """Each argument viewed with at least three dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1).

    >>> np.asarray(atleast_3d(np.zeros((2, 3)))).shape
    (2, 3, 1)
    """
    return _atleast(arys, _at_least_3d)


# ---------------------------------------------------------------- joining


def _target_dtype(xs, dtype, casting: str, op: str):
    if dtype is None:
        try:
            return dtypes.result_type(*xs)
        except TypeError as e:
            raise TypeError(located(f"{op}: no common dtype for the inputs ({e})")) from None
    target = dtypes.canonical(dtype)
    for x in xs:
        if not np.can_cast(x.dtype, target, casting):
            raise TypeError(located(f"{op}: Cannot cast array data from {x.dtype!r} to {target!r} according "
                                    f"to the rule {casting!r}"))
    return target


def _sequence(arrays, op: str) -> list:
    if isinstance(arrays, (list, tuple, Tracer)) or hasattr(arrays, "__xlac_array__") \
            or isinstance(arrays, np.ndarray):
        return list(arrays)
    raise TypeError(located(f"{op}: arrays to {op} must be passed as a sequence (list or tuple), "
                            f"got {type(arrays).__name__}"))


def _join(xs: list[Tracer], axis: int, dtype, casting: str, op: str) -> Tracer:
    """concatenate's core: ``xs`` joined along ``axis`` (checked against the first input's rank)."""
    if not xs:
        raise ValueError(located(f"{op}: need at least one array to concatenate"))
    if xs[0].ndim == 0:
        raise ValueError(located(f"{op}: zero-dimensional arrays cannot be concatenated"))
    axis = normalize_axis(axis, xs[0].ndim, op)
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != first.ndim:
            raise ValueError(located(
                f"{op}: all the input arrays must have same number of dimensions, but the array at index 0 has "
                f"{first.ndim} dimension(s) and the array at index {i} has {x.ndim} dimension(s)"))
        for d in range(first.ndim):
            if d != axis and x.shape[d] != first.shape[d]:
                raise ValueError(located(
                    f"{op}: all the input array dimensions except for the concatenation axis must match exactly, "
                    f"but along dimension {d}, the array at index 0 has size {first.shape[d]} and the array at "
                    f"index {i} has size {x.shape[d]}"))
    target = _target_dtype(xs, dtype, casting, op)
    return ops.concatenate([ops.convert(x, target) for x in xs], axis)


@numpy_function_with_static("axis")
def concatenate(arrays, axis=0, dtype=None, casting="same_kind"):
    """The arrays joined along an existing ``axis`` (flattened first when ``axis`` is None).

    The result dtype is NumPy's result type of the inputs, or ``dtype``.

    >>> np.asarray(concatenate([np.array([1, 2], np.int8), np.array([0.5])]))
    array([1. , 2. , 0.5])
    """
    xs = [as_array(a) for a in _sequence(arrays, "concatenate")]
    if axis is None:
        xs = [ops.reshape(x, (x.size,)) for x in xs]
        axis = 0
    return _join(xs, axis, dtype, casting, "concatenate")


@numpy_function_with_static("axis")
def stack(arrays, axis=0, *, dtype=None, casting="same_kind"):
    """The arrays (all of one shape) joined along a new ``axis``.

    >>> np.asarray(stack([np.array([1, 2]), np.array([3, 4])], axis=1))
    array([[1, 3],
           [2, 4]])
    """
    xs = [as_array(a) for a in _sequence(arrays, "stack")]
    if not xs:
        raise ValueError(located("stack: need at least one array to stack"))
    if len({x.shape for x in xs}) != 1:
        raise ValueError(located("stack: all input arrays must have the same shape, got "
                                 + ", ".join(str(x.shape) for x in xs)))
    axis = normalize_axis(axis, xs[0].ndim + 1, "stack")
    new_shape = xs[0].shape[:axis] + (1,) + xs[0].shape[axis:]
    return _join([ops.reshape(x, new_shape) for x in xs], axis, dtype, casting, "stack")


@numpy_function
def hstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays joined column-wise: along axis 0 for 1-D inputs, axis 1 otherwise.

    >>> np.asarray(hstack([np.array([1, 2]), np.array([3])]))
    array([1, 2, 3])
    """
    xs = [_at_least_1d(as_array(a)) for a in _sequence(tup, "hstack")]
    axis = 0 if xs and xs[0].ndim == 1 else 1
    return _join(xs, axis, dtype, casting, "hstack")


@numpy_function
def vstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays joined row-wise (along axis 0), 1-D inputs as rows.

    >>> np.asarray(vstack([np.array([1, 2]), np.array([3, 4])]))
    array([[1, 2],
           [3, 4]])
    """
    xs = [_at_least_2d(as_array(a)) for a in _sequence(tup, "vstack")]
    return _join(xs, 0, dtype, casting, "vstack")


@numpy_function
def dstack(tup):
    """The arrays joined depth-wise (along axis 2) after :func:`atleast_3d`.

    >>> np.asarray(dstack([np.array([1, 2]), np.array([3, 4])])).shape
    (1, 2, 2)
    """
    xs = [_at_least_3d(as_array(a)) for a in _sequence(tup, "dstack")]
    return _join(xs, 2, None, "same_kind", "dstack")


@numpy_function
def column_stack(tup):
    """1-D arrays as columns of a 2-D array; 2-D arrays are joined as they are (along axis 1).

    >>> np.asarray(column_stack([np.array([1, 2]), np.array([3, 4])]))
    array([[1, 3],
           [2, 4]])
    """
    xs = []
    for a in _sequence(tup, "column_stack"):
        x = as_array(a)
        xs.append(ops.reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return _join(xs, 1, None, "same_kind", "column_stack")


# ---------------------------------------------------------------- splitting


def _split_points(n: int, indices_or_sections) -> list[tuple[int, int]]:
    """(start, stop) of each piece along an axis of size ``n``, as NumPy's array_split computes them."""
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(located("array_split: number sections must be larger than 0."))
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        bounds = np.cumsum(sizes).tolist()
    points = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        start, stop, _ = builtins.slice(start, stop).indices(n)   # Python's slice rules, as NumPy uses
        points.append((start, max(start, stop)))
    return points


def _pieces(x: Tracer, axis: int, points) -> list[Tracer]:
    pieces = []
    for start, stop in points:
        begin = [0] * x.ndim
        end = list(x.shape)
        begin[axis], end[axis] = start, stop
        pieces.append(ops.slice(x, begin, end))
    return pieces


@numpy_function_with_static("indices_or_sections", "axis", view="writable")
def array_split(ary, indices_or_sections, axis=0):
    """``ary`` split into pieces along ``axis``: N nearly equal sections (the first ones one longer), or at indices.

    >>> [np.asarray(p).tolist() for p in array_split(np.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    x = as_array(ary)
    axis = normalize_axis(axis, x.ndim, "array_split")
    return _pieces(x, axis, _split_points(x.shape[axis], indices_or_sections))


@numpy_function_with_static("indices_or_sections", "axis", view="writable")
def split(ary, indices_or_sections, axis=0):
    """``ary`` split along ``axis`` into equal sections (an int that must divide the axis) or at indices.

    >>> [np.asarray(p).tolist() for p in split(np.arange(6), [2, 3])]
    [[0, 1], [2], [3, 4, 5]]
    """
    x = as_array(ary)
    axis = normalize_axis(axis, x.ndim, "split")
    if not isinstance(indices_or_sections, (list, tuple)):
        sections = operator.index(indices_or_sections)
        if x.shape[axis] % sections:
            raise ValueError(located(f"split: array split does not result in an equal division: axis {axis} of "
                                     f"size {x.shape[axis]} into {sections} sections"))
    return _pieces(x, axis, _split_points(x.shape[axis], indices_or_sections))


# ---------------------------------------------------------------- the rest


@numpy_function_with_static("axis", view="writable")
def flip(m, axis=None):
    """``m`` with the order of elements reversed along ``axis`` (all axes when None).

    >>> np.asarray(flip(np.array([[1, 2], [3, 4]]), 1))
    array([[2, 1],
           [4, 3]])
    """
    x = as_array(m)
    if x.ndim == 0 and axis is None:
        return element(x)                       # NumPy's m[()]: a scalar, not a view
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim, "flip")
    return ops.reverse(x, sorted(axes))


@numpy_function_with_static("offset", "axis1", "axis2", view="marked")
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``a[..., i, i + offset]`` of the axes ``axis1`` and ``axis2``, as a new last axis.

    As in NumPy it is a read-only view: writing into it raises, and it shows later writes to ``a``.

    >>> np.asarray(diagonal(np.arange(6).reshape(2, 3), 1))
    array([1, 5])
    >>> np.asarray(diagonal(np.arange(24).reshape(2, 3, 4), 1, 2, 0))
    array([[12],
           [16],
           [20]])
    """
    x = as_array(a)
    if x.ndim < 2:
        raise ValueError(located("diagonal: diag requires an array of at least two dimensions"))
    offset = operator.index(offset)
    i, j = normalize_axis(axis1, x.ndim, "diagonal"), normalize_axis(axis2, x.ndim, "diagonal")
    if i == j:
        raise ValueError(located("diagonal: axis1 and axis2 cannot be the same"))
    x = here(x)
    first_node = len(x._trace.graph.nodes)
    rest = [d for d in range(x.ndim) if d not in (i, j)]
    # Move the two axes last, cut the square block the diagonal crosses, and take every (n+1)-th element
    # of it flattened: a transpose, a slice, a reshape and a strided slice.
    moved = ops.transpose(x, rest + [i, j])
    row, col = builtins.min(builtins.max(-offset, 0), x.shape[i]), builtins.min(builtins.max(offset, 0), x.shape[j])
    n = builtins.max(0, builtins.min(x.shape[i] - row, x.shape[j] - col))
    batch = moved.shape[:-2]
    block = ops.slice(moved, (0,) * len(batch) + (row, col), batch + (row + n, col + n))
    flat = ops.reshape(block, batch + (n * n,))
    result = ops.slice(flat, (0,) * flat.ndim, flat.shape, (1,) * len(batch) + (n + 1,))
    strides = strides_of(x)
    return mark_view(x, result, first_node, [strides[d] for d in rest] + [strides[i] + strides[j]])


@numpy_function(makes_array=True)
def copy(a, order="K"):
    """A copy of ``a`` (xlac arrays are immutable, so this is ``a`` as an array).

    >>> np.asarray(copy([1, 2]))
    array([1, 2])
    """
    return as_array(a)


def _concrete_shape(a) -> tuple[int, ...]:
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return tuple(a.shape)
    try:
        return np.shape(a)
    except TracerConversionError:       # a nested list holding traced values
        return as_array(a).shape


def shape(a) -> tuple[int, ...]:
    """The shape of ``a`` (an array, traced value, nested list or scalar) as a tuple of Python ints.

    >>> shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
    """
    return _concrete_shape(a)


def ndim(a) -> int:
    """The number of dimensions of ``a``.

    >>> ndim(np.zeros((2, 3)))
    2
    """
    return len(_concrete_shape(a))


def size(a, axis=None) -> int:
    """The number of elements of ``a`` (along ``axis``, an int or a tuple, if given).

    >>> size(np.zeros((2, 3))), size(np.zeros((2, 3)), 1)
    (6, 3)
    """
    dims = _concrete_shape(a)
    if axis is None:
        return int(np.prod(dims, dtype=np.int64))
    axes = normalize_axis_tuple(static_value(axis), len(dims), "size")
    return int(np.prod([dims[i] for i in axes], dtype=np.int64))


for _query in (shape, ndim, size):     # answer from static shapes, in and out of a trace
    _query.__wrapped_numpy__ = _query


def rollaxis(a, axis, start=0):
    """Move ``axis`` to before position ``start`` (NumPy's older ``moveaxis``).

    >>> rollaxis(np.ones((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    n = np.ndim(a)
    axis = normalize_axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise np.exceptions.AxisError(located(f"rollaxis: start {start} out of range for {n} dimensions"))
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return transpose(a, axes)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's deprecated alias of ``vstack``.

    >>> row_stack([np.ones(2), np.zeros(2)]).shape
    (2, 2)
    """
    import warnings
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)
