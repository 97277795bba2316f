"""What values with a dynamic extent (:mod:`xlac.numpy.dynamic_extent`) compute: elementwise functions (every
ufunc), reductions that fill the masked positions with the operation's identity, contractions that zero them.
Each is registered as the rule of the ``xlac.numpy`` functions it stands for
(:func:`xlac.numpy._dispatch.dynamic_extent_rule`), which NumPy's protocols and the values' methods reach too;
importing this module registers those of :mod:`xlac.numpy.dynamic_extent_shapes` and
:mod:`xlac.numpy.dynamic_extent_indices` as well.

>>> import numpy as np, xlac
>>> @xlac.compile
... def tail_stats(x, i):
...     return x[i:].mean(), x[i:].max(), x[i:] @ x[i:]
>>> [float(v) for v in tail_stats(np.arange(5.0), 2)]
[3.0, 4.0, 29.0]
"""
from __future__ import annotations

import math

import numpy as np

from xlac.numpy import array_api
from xlac.numpy import complex_order
from xlac.numpy import contractions
from xlac.numpy import creation
from xlac.numpy import dtypes as numpy_dtypes
from xlac.numpy import linalg
from xlac.numpy import manipulation
from xlac.numpy import reductions
from xlac.numpy import shapes
from xlac.numpy import sorting
from xlac.numpy import ufuncs
from xlac.errors import UnsupportedError, located
from xlac.numpy._core import normalize_axis
from xlac.numpy import dynamic_extent_indices, dynamic_extent_shapes  # noqa: F401  (their rules registered)
from xlac.numpy._dispatch import dynamic_call, dynamic_extent_rule
from xlac.numpy.dynamic_extent import (INDEX, AxisExtent, DynamicExtent, DynamicShapeError, aligned, elementwise,
                                       ndim_of, require, valid_mask, whole_axis)
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["reduce"]


# ---------------------------------------------------------------- reductions


def _axes(value: DynamicExtent, axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(value.ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % value.ndim for a in axes))


def _identity(kind: str, dtype):
    if kind in ("sum", "any"):
        return 0
    if kind in ("prod", "all"):
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _count(value: DynamicExtent, axes) -> Tracer:
    """How many elements a reduction over ``axes`` takes, per result element (int64)."""
    count = ops.constant(math.prod(value.data.shape[a] for a in axes if value.axes[a] is None), INDEX)
    for a in axes:
        if value.axes[a] is not None:
            count = ops.mul(count, value.axes[a].count)
    return count


def _finish(result, value: DynamicExtent, axes, keepdims: bool):
    remaining = [None if a in axes else extent for a, extent in enumerate(value.axes)]
    if not keepdims:
        remaining = [extent for a, extent in enumerate(remaining) if a not in axes]
    return DynamicExtent(result, remaining) if any(e is not None for e in remaining) else result


# The xlac.numpy function of each kind of reduction.
_REDUCTIONS = {"sum": reductions.sum, "prod": reductions.prod, "max": reductions.max, "min": reductions.min,
               "any": reductions.any, "all": reductions.all, "argmax": reductions.argmax,
               "argmin": reductions.argmin, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod}


def reduce(kind: str, value, axis=None, keepdims=False, dtype=None, initial=None):
    """``np.sum`` (``kind``: "sum", "prod", "max", "min", "any", "all") of a dynamic value; ``initial`` as
    NumPy's (with it, the maximum of nothing is ``initial``)."""
    kwargs = {"initial": initial} if initial is not None else {}
    if not isinstance(value, DynamicExtent):
        return _REDUCTIONS[kind](value, axis=axis, keepdims=keepdims, **kwargs)
    axes = _axes(value, axis)
    if kind in ("max", "min") and initial is None:
        name = "maximum" if kind == "max" else "minimum"
        require(ops.compare(_count(value, axes), ops.constant(0, INDEX), "GT"), _count(value, axes),
                 ValueError, f"zero-size array to reduction operation {name} which has no identity")
    data = value.data
    if kind in ("max", "min") and data.dtype.kind == "c":
        result = complex_order.extreme(data, axes, kind, valid_mask(value), initial)
        if keepdims:
            result = ops.reshape(result, tuple(1 if a in axes else n for a, n in enumerate(data.shape)))
        return _finish(result, value, axes, keepdims)
    if kind in ("any", "all"):
        data = data != 0
    filled = ufuncs.where(valid_mask(value), data, _identity(kind, data.dtype))
    if dtype is not None and kind in ("sum", "prod"):
        kwargs["dtype"] = dtype
    result = _REDUCTIONS[kind](filled, axis=axes, keepdims=keepdims, **kwargs)
    return _finish(result, value, axes, keepdims)


@dynamic_extent_rule(reductions.mean)
def mean(value, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """``np.mean`` of a dynamic value: the mean of its data where its elements are (``where=``), whose sum
    and count XLA computes in one pass, the elements never gathered into a shorter array."""
    if not isinstance(value, DynamicExtent):
        return reductions.mean(value, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = _axes(value, axis)
    result = reductions.mean(value.data, axis=axes, dtype=dtype, keepdims=keepdims, where=valid_mask(value))
    return _finish(result, value, axes, keepdims)


@dynamic_extent_rule(reductions.var)
def var(value, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """``np.var`` of a dynamic value: the variance of its data where its elements are (``where=``)."""
    if not isinstance(value, DynamicExtent):
        return reductions.var(value, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    axes = _axes(value, axis)
    result = reductions.var(value.data, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims,
                            where=valid_mask(value))
    return _finish(result, value, axes, keepdims)


@dynamic_extent_rule(reductions.std)
def std(value, *args, **kwargs):
    """``np.std`` of a dynamic value."""
    return _sqrt(var(value, *args, **kwargs))


def _sqrt(value):
    return elementwise(ufuncs.sqrt, (value,)) if isinstance(value, DynamicExtent) else ufuncs.sqrt(value)


def arg_extreme(kind: str, value, axis=None):
    """``np.argmax`` / ``np.argmin`` of a dynamic value: positions among its elements (counted in the
    flattened elements for ``axis=None``, as NumPy counts them)."""
    if not isinstance(value, DynamicExtent):
        return _REDUCTIONS[kind](value, axis=axis)
    axes = _axes(value, axis)
    require(ops.compare(_count(value, axes), ops.constant(0, INDEX), "GT"), _count(value, axes), ValueError,
            f"attempt to get {kind} of an empty sequence")
    if axis is not None:
        (axis,) = axes
        return _finish(_rank(value, axis, _extreme_position(kind, value, axis)), value, axes, False)
    flat = _extreme_position(kind, value, None)
    index = ops.constant(0, INDEX)
    for axis, coordinate in enumerate(manipulation.unravel_index(flat, value.data.shape)):
        extent = value.axes[axis]
        length = extent.count if extent is not None else ops.constant(value.data.shape[axis], INDEX)
        index = index * length + _rank(value, axis, coordinate)
    return index


def _extreme_position(kind: str, value: DynamicExtent, axis: int | None):
    """The position in the data (along ``axis``, or in the flattened data) of the first largest ("argmax")
    or smallest element among ``value``'s elements."""
    if value.dtype.kind == "c":
        data, valid = value.data, valid_mask(value)
        if axis is None:
            data, valid, axis = ops.reshape(data, (data.size,)), ops.reshape(valid, (data.size,)), 0
        return complex_order.arg_extreme(data, axis, kind[3:], valid)
    filled = ufuncs.where(valid_mask(value), value.data, _identity(kind[3:], value.dtype))
    return _REDUCTIONS[kind](filled, axis=axis)


@dynamic_extent_rule(reductions.argmax)
def argmax(a, axis=None, out=None, **kwargs):
    return arg_extreme("argmax", a, axis)


@dynamic_extent_rule(reductions.argmin)
def argmin(a, axis=None, out=None, **kwargs):
    return arg_extreme("argmin", a, axis)


def _rank(value: DynamicExtent, axis: int, position):
    """The rank among the elements along ``axis`` of ``position`` (a position of the data along it)."""
    extent = value.axes[axis]
    if extent is None:
        return position
    if extent.start is not None:
        return position - extent.start
    before = ops.iota((extent.size,), INDEX, 0) < shapes.expand_dims(position, -1)
    return reductions.sum(ufuncs.logical_and(before, extent.valid), axis=-1)


@dynamic_extent_rule(reductions.count_nonzero)
def count_nonzero(value, axis=None, *, keepdims=False):
    return reduce("sum", elementwise(lambda d: array_api.astype(d != 0, INDEX), (value,)), axis, keepdims)


@dynamic_extent_rule(linalg.norm)
def norm(value, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a dynamic value: vector norms (``ord`` None, 2, 1, inf, -inf, 0 or another
    number) of a vector or along one ``axis``, and the Frobenius norm (``ord`` None or "fro") of all its
    elements or over two axes."""
    axes = tuple(range(value.ndim)) if axis is None else _axes(value, axis)
    vector = len(axes) == 1 and ord != "fro"
    if not vector and (ord not in (None, "fro") or axis is not None and len(axes) != 2):
        raise UnsupportedError(located("np.linalg.norm of a value whose length is known only when the program "
                                       "runs: vector norms and the Frobenius norm are supported"))
    magnitude = elementwise(ufuncs.abs, (value,))
    if not vector or ord in (None, 2):
        total = reduce("sum", elementwise(lambda d: numpy_dtypes.real(d * numpy_dtypes.conj(d)), (value,)), axes, keepdims)
        return _sqrt(total)
    if ord == np.inf:
        return reduce("max", magnitude, axes, keepdims, initial=0)      # NumPy's: 0 for no elements
    if ord == -np.inf:
        return reduce("min", magnitude, axes, keepdims)
    if ord == 0:
        return reduce("sum", elementwise(lambda d: array_api.astype(d != 0, d.dtype), (magnitude,)), axes, keepdims)
    if ord == 1:
        return reduce("sum", magnitude, axes, keepdims)
    powered = reduce("sum", elementwise(lambda d: d ** ord, (magnitude,)), axes, keepdims)
    return elementwise(lambda d: d ** (1.0 / ord), (powered,)) if isinstance(powered, DynamicExtent) \
        else powered ** (1.0 / ord)


# ---------------------------------------------------------------- running sums and sorting


def _filled_along(value: DynamicExtent, axis, fill) -> tuple:
    """``value``'s data with its masked positions ``fill``, the axis to scan or sort along and the extents
    of the result's axes. ``axis=None`` flattens: the flat axis's elements are those of a mask (in row-major
    order, NumPy's), a contiguous extent where ``value`` is one-dimensional."""
    filled = ufuncs.where(valid_mask(value), value.data, creation.asarray(fill, value.dtype))
    if axis is not None:
        return filled, normalize_axis(axis, value.ndim), list(value.axes)
    if value.ndim == 1:
        return filled, 0, list(value.axes)
    size = math.prod(value.data.shape)
    all_axes = tuple(range(value.ndim))
    flat = AxisExtent(ops.reshape(valid_mask(value), (size,)), _count(value, all_axes), None,
                      ("flattened",) + tuple(None if e is None else e.key for e in value.axes))
    return shapes.reshape(filled, (size,)), 0, [flat]


def cumulative(kind: str, value, axis=None, dtype=None, out=None):
    """``np.cumsum`` (``kind`` "sum") or ``np.cumprod`` ("prod") of a dynamic value: NumPy's result at the
    positions of its elements (the same extent), from a scan of the data with the masked positions the
    operation's identity.

    >>> import numpy as np, xlac
    >>> @xlac.compile
    ... def running_tail(x, i):
    ...     y = np.zeros_like(x)
    ...     y[i:] = np.cumsum(x[i:])
    ...     return y
    >>> np.asarray(running_tail(np.arange(1.0, 6.0), 2)).tolist()
    [0.0, 0.0, 3.0, 7.0, 12.0]
    """
    if out is not None:
        raise UnsupportedError(located(f"np.cum{kind} of a dynamic value with out="))
    filled, axis, axes = _filled_along(value, axis, _identity(kind, value.dtype))
    return DynamicExtent(_REDUCTIONS[f"cum{kind}"](filled, axis=axis, dtype=dtype), axes)


@dynamic_extent_rule(reductions.cumsum)
def cumsum(value, axis=None, dtype=None, out=None):
    return cumulative("sum", value, axis, dtype, out)


@dynamic_extent_rule(reductions.cumprod)
def cumprod(value, axis=None, dtype=None, out=None):
    return cumulative("prod", value, axis, dtype, out)


def _sorts_last(dtype: np.dtype):
    """A value that NumPy's sort places after every other of ``dtype`` (ties with it are indistinguishable)."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "c":
        return complex(np.nan, np.nan)
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max


@dynamic_extent_rule(sorting.sort)
def sort(value, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort`` of a dynamic value: its elements sorted to the front of the axis (the masked positions
    filled with a value that sorts after all others), a dynamic value whose elements are the leading
    positions there.

    >>> import numpy as np, xlac
    >>> @xlac.compile
    ... def sort_segment(x, i, j):
    ...     x[i:j] = np.sort(x[i:j])
    ...     return x
    >>> np.asarray(sort_segment(np.array([5.0, 4.0, 3.0, 2.0, 1.0]), 1, 4)).tolist()
    [5.0, 2.0, 3.0, 4.0, 1.0]
    """
    filled, axis, axes = _filled_along(value, axis, _sorts_last(value.dtype))
    extent = axes[axis]
    if extent is not None:
        axes[axis] = AxisExtent(ops.iota((extent.size,), INDEX, 0) < extent.count, extent.count,
                                ops.constant(0, INDEX), ("leading",) + extent.key)
    return DynamicExtent(sorting.sort(filled, axis, kind, order, stable=stable), axes)


# ---------------------------------------------------------------- contractions


def _zeroed_along(value, axes):
    """The data zero outside the elements along ``axes`` (the other axes as they are), and the per-axis
    extents (None for a static operand)."""
    if not isinstance(value, DynamicExtent):
        value = creation.asarray(value)
        return value, [None] * value.ndim
    chosen = {a % value.data.ndim for a in axes}
    masked = DynamicExtent(value.data, [e if a in chosen else None for a, e in enumerate(value.axes)])
    if all(e is None for e in masked.axes):
        return value.data, list(value.axes)
    return ufuncs.where(valid_mask(masked), value.data, 0), list(value.axes)


@dynamic_extent_rule(contractions.matmul, linalg.matmul)
def matmul(a, b):
    """``a @ b`` where either is dynamic, with NumPy's batch axes: ``b``'s contracted axis placed in the
    coordinates of ``a``'s, the other axes left where their elements are (the data is zero elsewhere). Only
    the contracted axes are zeroed before the product, the others in the result: a mask along the rows of
    one operand does not make that operand another value per row (a batched loop's ``d[:, i:]``)."""
    if ndim_of(a) == 1 and ndim_of(b) == 1:
        return _vector_dot(a, b)
    contracted = -2 if ndim_of(b) > 1 else 0
    a_data, a_axes = _zeroed_along(a, (-1,))
    b_data, b_axes = _zeroed_along(b, (contracted,))
    a_extent, b_extent = a_axes[-1], b_axes[contracted]
    if a_extent is not None or b_extent is not None:
        target = a_extent if a_extent is not None else whole_axis(a_data.shape[-1])
        own, targets, sizes = [None] * b_data.ndim, [None] * b_data.ndim, list(b_data.shape)
        own[contracted], targets[contracted], sizes[contracted] = b_extent, target, target.size
        b_operand = DynamicExtent(b_data, own) if b_extent is not None else b_data
        b_data = aligned(b_operand, b_data.ndim, targets, sizes, "matmul: mismatch in its core dimension")
    result = contractions.matmul(a_data, b_data)
    batch = _batch_extents(a_data, a_axes[:-2], b_data, b_axes[:-2], result.ndim - (a_data.ndim > 1) -
                           (b_data.ndim > 1))
    axes = batch + a_axes[-2:-1] + (b_axes[-1:] if b_data.ndim > 1 else [])
    if not any(e is not None for e in axes):
        return result
    return DynamicExtent(_zeroed_along(DynamicExtent(result, axes), range(result.ndim))[0], axes)


def _batch_extents(a_data, a_axes: list, b_data, b_axes: list, batch: int) -> list:
    """The extents of ``matmul``'s broadcast batch axes: where one operand's is dynamic, the other's must be
    the same positions, or of length 1, or absent."""
    extents = []
    for axis in range(batch):
        found = []
        for data, axes in ((a_data, a_axes), (b_data, b_axes)):
            own = axis - (batch - len(axes))
            if own >= 0:
                found.append((axes[own], data.shape[own]))
        dynamic = [e for e, _ in found if e is not None]
        if dynamic and any(e is None and n != 1 or e is not None and e.key != dynamic[0].key for e, n in found):
            raise DynamicShapeError(located(
                "matmul: a batch axis whose length is known only when the program runs against another length"))
        extents.append(dynamic[0] if dynamic else None)
    return extents


def _vector_dot(a, b):
    """The dot product of two vectors, either dynamic: ``b`` placed in ``a``'s coordinates, the product summed
    where ``a`` has elements (one select, which XLA fuses with the product and the sum)."""
    a_data = a.data if isinstance(a, DynamicExtent) else creation.asarray(a)
    target = a.axes[0] if isinstance(a, DynamicExtent) else whole_axis(a_data.shape[0])
    b_data = aligned(b, 1, [target], [target.size], "matmul: mismatch in its core dimension")
    return reductions.sum(ufuncs.where(target.valid, ufuncs.multiply(a_data, b_data), 0))


@dynamic_extent_rule(contractions.dot)
def dot(a, b, out=None):
    """``np.dot`` where either operand is dynamic."""
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return elementwise(ufuncs.multiply, (a, b))
    return matmul(a, b)


@dynamic_extent_rule(contractions.vdot)
def vdot(a, b):
    return matmul(elementwise(numpy_dtypes.conj, (a,)) if isinstance(a, DynamicExtent) else numpy_dtypes.conj(a), b)


@dynamic_extent_rule(contractions.inner)
def inner(a, b):
    if ndim_of(a) != 1 or ndim_of(b) != 1:
        raise UnsupportedError(located("np.inner of dynamic values: vectors only"))
    return matmul(a, b)


@dynamic_extent_rule(contractions.einsum)
def einsum(subscripts, *operands, **kwargs):
    """``np.einsum`` with explicit subscripts (``"ij,j->i"``) where operands are dynamic: each masked to zero
    outside its elements along the letters summed over (a letter of the output keeps its extent in the result,
    whose positions outside it hold whatever the product gives); the operands' dynamic axes of one letter must
    hold the same positions (the same bounds), and a static operand's axis of such a letter must have length
    1."""
    if not isinstance(subscripts, str) or "->" not in subscripts or "." in subscripts:
        raise UnsupportedError(located("np.einsum of values whose length is known only when the program runs "
                                       "takes explicit subscripts ('ij,j->i') without ellipses"))
    inputs, output = subscripts.replace(" ", "").split("->")
    letters = inputs.split(",")
    extents: dict[str, AxisExtent] = {}
    for spec, operand in zip(letters, operands):
        for letter, extent in zip(spec, operand.axes if isinstance(operand, DynamicExtent) else ()):
            if extent is None:
                continue
            known = extents.setdefault(letter, extent)
            if known.key != extent.key:
                raise UnsupportedError(located(
                    f"np.einsum: the operands' axes '{letter}' are slices with different bounds; slice them alike"))
    contracted = set(extents) - set(output)
    data = []
    for spec, operand in zip(letters, operands):
        value, axes = _zeroed_along(operand, [a for a, letter in enumerate(spec) if letter in contracted])
        for letter, extent, n in zip(spec, axes, value.shape):
            if letter in extents and extent is None and n != 1:
                raise DynamicShapeError(located(
                    f"np.einsum: axis '{letter}' of length {n} against a slice whose length is known only when "
                    "the program runs"))
        data.append(value)
    result = contractions.einsum(subscripts, *data, **kwargs)
    axes = [extents.get(letter) for letter in output]
    return DynamicExtent(result, axes) if any(e is not None for e in axes) else result


@dynamic_extent_rule(contractions.outer, linalg.outer)
def outer(a, b, out=None):
    """``np.outer`` of two vectors, either dynamic (both axes are free: nothing is masked)."""
    a_data, a_axes = _zeroed_along(a, ())
    b_data, b_axes = _zeroed_along(b, ())
    if a_data.ndim != 1 or b_data.ndim != 1:
        raise UnsupportedError(located("np.outer of dynamic values: vectors only"))
    return DynamicExtent(contractions.outer(a_data, b_data), [a_axes[0], b_axes[0]])


def _reduction(kind: str, function):
    """Register the rule of ``function``, ``np.sum`` (``kind``) and its kind, with NumPy's positional
    parameters."""
    def unsupported(out, where):
        if out is not None or where is not None:
            raise UnsupportedError(located(f"np.{kind} of a value whose length is known only when the program runs "
                                           "with out= or where="))
    if kind in ("max", "min"):
        def run(a, axis=None, out=None, keepdims=False, initial=None, where=None):
            unsupported(out, where)
            return reduce(kind, a, axis, keepdims, initial=initial)
    elif kind in ("any", "all"):
        def run(a, axis=None, out=None, keepdims=False, *, where=None):
            unsupported(out, where)
            return reduce(kind, a, axis, keepdims)
    else:
        def run(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
            unsupported(out, where)
            return reduce(kind, a, axis, keepdims, dtype, initial)
    dynamic_extent_rule(function)(run)


def _ufunc_reduce(kind: str, function):
    """Register ``function.reduce`` (a ufunc's) of a dynamic value: the reduction ``kind`` (axis 0 by default,
    as NumPy's)."""
    @dynamic_extent_rule((function, "reduce"))
    def run(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
        if out is not None or where is not True:
            raise UnsupportedError(located(f"np.{function.__name__}.reduce of a value whose length is known only "
                                           "when the program runs with out= or where="))
        return reduce(kind, array, axis, keepdims, dtype if kind in ("sum", "prod") else None, initial)


# Each kind of reduction: its xlac.numpy function and the ufunc whose reduce it is.
for _kind, _function, _ufunc in (("sum", reductions.sum, ufuncs.add), ("prod", reductions.prod, ufuncs.multiply),
                                 ("max", reductions.max, ufuncs.maximum), ("min", reductions.min, ufuncs.minimum),
                                 ("any", reductions.any, ufuncs.logical_or),
                                 ("all", reductions.all, ufuncs.logical_and)):
    _reduction(_kind, _function)
    _ufunc_reduce(_kind, _ufunc)


@dynamic_extent_rule(shapes.copy)
def copy(a, *args, **kwargs):
    return a.copy()


@dynamic_extent_rule(creation.traced_array)
def asarray(a, dtype=None):
    """``np.asarray`` and ``np.array`` of a dynamic value (``np.array`` copies it then, as of any array)."""
    return a if dtype is None else a.astype(dtype)


@dynamic_extent_rule(ufuncs.clip)
def clip(a, a_min=None, a_max=None, **kwargs):
    return elementwise(lambda *v: ufuncs.clip(*v), (a, a_min, a_max))


def _elementwise(function):
    """Register ``function`` (an xlac.numpy ufunc) of dynamic values: :func:`elementwise`."""
    @dynamic_extent_rule(function)
    def run(*operands, **kwargs):
        return elementwise(lambda *values: function(*values, **kwargs), operands)


# Every ufunc of NumPy's xlac.numpy has, but the generalized ones (matmul: above).
for _ufunc in sorted({u for u in vars(np).values() if isinstance(u, np.ufunc) and u.signature is None},
                    key=lambda u: u.__name__):
    _function = getattr(ufuncs, _ufunc.__name__, None) or getattr(numpy_dtypes, _ufunc.__name__, None)
    if _function is not None:
        _elementwise(_function)


def _method(function):
    return lambda self, *args, **kwargs: dynamic_call(function, (self, *args), kwargs)


# A dynamic value's methods that are xlac.numpy functions: their rules.
for _function in (reductions.sum, reductions.prod, reductions.max, reductions.min, reductions.any, reductions.all,
                  reductions.mean, reductions.var, reductions.std, reductions.argmax, reductions.argmin,
                  contractions.dot, reductions.cumsum, reductions.cumprod, shapes.ravel, shapes.squeeze,
                  shapes.swapaxes, manipulation.repeat, sorting.nonzero):
    setattr(DynamicExtent, _function.__name__, _method(_function))
