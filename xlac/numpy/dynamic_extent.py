"""Values whose length along some axes is known only when the program runs: ``x[i:j]`` with traced bounds
and ``x[mask]`` with a traced boolean mask. (A slice of static length at a traced start, ``x[i:i + K]``, is a
window of static shape instead: :class:`xlac.numpy.indexing.Window`.)

XLA needs static shapes, so such a value is held as the full-size data it came from plus, per dynamic axis,
which positions hold its elements (:class:`AxisExtent`): a traced start and count for a slice, a traced
mask for a boolean selection. Its elements stay where they were in the source array; operations mask the
rest, as JAX users write by hand with ``where``:

- elementwise operations (operators, ufuncs, ``np.where``) between values of the same extent, or with
  operands that broadcast along the dynamic axes (scalars, axes of length 1); two slices of different
  starts are aligned by shifting one, and equal lengths are checked when the program runs (NumPy's
  broadcast error after the call);
- reductions fill the masked positions with the operation's identity (``sum``, ``prod``, ``max``/``min``,
  with NumPy's error for an empty extent checked after the call, ``mean``/``var``/``std`` as NumPy's
  ``where=`` over the data (the sum and the count in one reduce), ``any``/``all``, ``argmax``/``argmin``,
  ``count_nonzero``, a vector's ``norm``); the elements are never gathered into a shorter array;
- contractions (``dot``, ``@``, ``inner``, ``vdot``, ``outer``) zero the masked positions first;
- ``cumsum``/``cumprod`` scan the data with the masked positions the identity (the result keeps the extent);
  ``sort`` fills them with what sorts last, so that the elements take the leading positions;
- a gather by a dynamic index (``x[cols[ptr[i]:ptr[i + 1]]]``) gathers at every position and checks NumPy's
  bounds only where the index has elements;
- writes (``x[i:j] = v``, ``x[k + 1:, k] /= x[k, k]``, ``x[mask] += 1``) become a select over the region.

``np.nonzero`` and its family, indexing with such values and reading their elements are
:mod:`xlac.numpy.dynamic_extent_indices`'s; the shape functions (``transpose``, ``reshape`` over static
axes, ``concatenate``, ...) :mod:`xlac.numpy.dynamic_extent_shapes`'s.

Its ``shape`` is a :class:`DynamicShape`: a tuple holding, for each dynamic axis, the traced length (a weak
int64, as ``size``); ``np.zeros``/``ones``/``empty``/``full`` of it, and the ``*_like`` functions of the value,
make a new value of the same extent. A converted ``len(v)`` is that traced length too; elsewhere Python's
``len`` must be an int, so it raises. What needs the length as a Python int (a ``reshape`` that splits its
axis, iterating over it) raises :class:`DynamicShapeError`; a converted loop whose body does so runs unrolled
instead (see :mod:`xlac.convert.loops`). Returned from a compiled function, the value comes back as NumPy's
array of its length (:meth:`DynamicExtent.as_result`).

>>> import numpy as np, xlac
>>> @xlac.compile
... def forward_substitution(L, b):
...     x = np.zeros_like(b)
...     for i in range(b.shape[0]):
...         x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
...     return x
>>> L = np.tril(np.ones((3, 3))) + np.eye(3)
>>> np.asarray(forward_substitution(L, np.array([2.0, 5.0, 9.0]))).tolist()
[1.0, 2.0, 3.0]
"""
from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass

import numpy as np

from xlac.numpy import array_api
from xlac.numpy import contractions
from xlac.numpy import creation
from xlac.numpy import indexing
from xlac.numpy import reductions
from xlac.numpy import shapes
from xlac.numpy import sorting
from xlac.numpy import ufuncs
from xlac.numpy._core import asarray as core_asarray
from xlac.numpy._dispatch import dynamic_call
from xlac.numpy.protocols import xlac_function_for
from xlac.errors import TracerConversionError, UnsupportedError, located, user_location
from xlac.ir import dtypes
from xlac.trace import ops, views
from xlac.trace.checks import Check
from xlac.trace.facts import known_range, offset_form, set_known_range
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["AxisExtent", "DynamicExtent", "DynamicShapeError", "handles_write", "has_traced_slice", "read"]

INDEX = dtypes.INDEX


class DynamicShapeError(TracerConversionError):
    """A value whose length is known only when the program runs (``x[i:j]`` with traced bounds, ``x[mask]``
    with a traced mask) was asked for its shape, or used where XLA needs one."""


@dataclass(frozen=True, eq=False)
class AxisExtent:
    """Which positions along one axis of the data hold a dynamic value's elements: ``valid`` (bool, the
    axis's length), ``count`` (how many, int64), and ``start`` (the first, int64) where they are contiguous
    (a slice); ``key`` identifies their bounds (two slices with the same key hold the same positions, two
    mask selections with the same key the same mask)."""

    valid: Tracer
    count: Tracer
    start: Tracer | None
    key: tuple

    @property
    def size(self) -> int:
        return self.valid.shape[0]


class DynamicExtent:
    """``data`` (the full-size values) and, per axis, its :class:`AxisExtent` or None (a static axis)."""

    is_dynamic_extent = True          # what xlac.numpy's functions look for, to call their dynamic-extent rule

    def __init__(self, data: Tracer, axes: list, is_view: bool = False, coordinates: tuple | None = None):
        # is_view: ``data`` is a view of an array (x[i:j] with traced bounds is a view, as in NumPy), so an
        # in-place operator writes into that array; other values are new arrays.
        # coordinates: (shape, axis) where ``data`` holds, at each position of its one axis, that position's
        # coordinate along ``axis`` of an array of ``shape`` (``np.nonzero``'s results): indexing such an
        # array with them selects by the mask itself, without a gather.
        self.data, self.axes, self.is_view, self.coordinates = data, list(axes), is_view, coordinates
        self.made_at = user_location()

    # ---- what is known when tracing
    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def shape_error(self, what: str) -> DynamicShapeError:
        made = f" (the value made at {self.made_at})" if self.made_at is not None else ""
        return DynamicShapeError(located(
            f"cannot take {what} of a value{made} whose length is known only when the program runs (x[i:j] with "
            "traced bounds, or "
            "x[mask] with a traced mask): it can be combined elementwise, reduced (sum, max, mean, ...), "
            "contracted (dot, @) or written into an array; its length is a traced value (v.shape[0], v.size), not "
            "a Python int. Outside a loop, select with xnp.where(mask, x, 0), or give nonzero a size= (JAX's "
            "convention)"))

    @property
    def shape(self) -> DynamicShape:
        """Per axis its length: a Python int, or where it is dynamic the traced count (a weak int64)."""
        return DynamicShape(self)

    @property
    def size(self) -> Tracer:
        """The number of elements, known only when the program runs: a weak int64 (NumPy's ``size`` is a
        Python int), which arithmetic, comparisons and traced loop bounds take."""
        size = ops.constant(math.prod(n for n, axis in zip(self.data.shape, self.axes) if axis is None), INDEX)
        for axis in self.axes:
            if axis is not None:
                size = ops.mul(size, ops.convert(axis.count, INDEX))
        size = ops.convert(size, INDEX, weak=True)
        set_known_range(size, (0, math.prod(self.data.shape)))
        return size

    def __len__(self):
        raise self.shape_error("len()")

    def __iter__(self):
        if self.ndim == 0 or self.axes[0] is not None:
            raise self.shape_error("the elements one by one (iterating)")
        return (self[k] for k in range(self.data.shape[0]))     # a static leading axis: its rows

    def __array__(self, *args, **kwargs):
        raise self.shape_error("a NumPy array (np.asarray outside converted code)")

    def __bool__(self):
        raise self.shape_error("the truth value")

    def as_result(self) -> tuple[Tracer, Tracer, tuple]:
        """The value as a compiled function's result: the data with the elements moved, in order, to the
        leading positions of each dynamic axis, their lengths (int64, one per dynamic axis), and those axes;
        the caller keeps the leading part (see ``xlac.trace.pytree.leading``)."""
        data, lengths, dynamic = self.data, [], []
        for axis, extent in enumerate(self.axes):
            if extent is None:
                continue
            size = extent.size
            if extent.start is not None:           # contiguous: the positions from the start on
                positions = ufuncs.minimum(ufuncs.add(extent.start, creation.arange(size)), size - 1)
            else:                                  # the selected positions first, in order
                positions = sorting.argsort(ufuncs.logical_not(extent.valid), kind="stable")
            data = indexing.take(data, positions, axis=axis, mode="clip")
            lengths.append(ops.convert(extent.count, INDEX))
            dynamic.append(axis)
        return core_asarray(data), shapes.stack(lengths), tuple(dynamic)

    def __getitem__(self, index):
        return dynamic_call(indexing.getitem, (self, index), {})

    def __setitem__(self, index, value):
        dynamic_call(operator.setitem, (self, index, value), {})

    def write_elements(self, new: Tracer, axes: list | None = None) -> None:
        """Make the elements (those of ``axes``, a region of them, where given) hold ``new`` (the data's shape
        and dtype) at their positions: through the view into its array, or for a new value (``x[mask]``,
        ``np.zeros_like(v)``) by taking ``new`` as its data."""
        region = self if axes is None else DynamicExtent(self.data, axes)
        data = ufuncs.where(valid_mask(region), new, self.data)
        if self.is_view:
            self.data[...] = data
        else:
            self.data = data

    def reshape(self, *shape, **kwargs):
        return dynamic_call(shapes.reshape, (self, shape[0] if len(shape) == 1 else shape), kwargs)

    def flatten(self, order="C"):
        return dynamic_call(shapes.ravel, (self, order), {})

    def __repr__(self) -> str:
        dims = ", ".join("?" if a is not None else str(n) for a, n in zip(self.axes, self.data.shape))
        return f"DynamicExtent({self.dtype}[{dims}])"

    __hash__ = object.__hash__

    # ---- NumPy's protocols and methods: the dynamic-extent rules of the xlac.numpy functions standing for them
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        function = xlac_function_for(ufunc)
        if function is not None and method in ("__call__", "reduce") and not kwargs.get("out"):
            kwargs.pop("out", None)
            return dynamic_call(function if method == "__call__" else (function, method), inputs, kwargs)
        raise UnsupportedError(located(f"np.{ufunc.__name__}.{method} of a value whose length is known only when "
                                       "the program runs"))

    def __array_function__(self, func, types, args, kwargs):
        function = xlac_function_for(func)
        if function is None:
            raise UnsupportedError(located(f"{func.__module__}.{func.__name__} of a value whose length is known "
                                           "only when the program runs"))
        return dynamic_call(function, args, kwargs)

    def astype(self, dtype, *args, **kwargs):
        return DynamicExtent(views.copy(array_api.astype(self.data, dtype)), self.axes)

    def copy(self):
        return DynamicExtent(views.copy(self.data), self.axes)

    @property
    def T(self):
        return dynamic_call(shapes.transpose, (self,), {})

    def transpose(self, *axes):
        order = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None
        return dynamic_call(shapes.transpose, (self, order), {})

    def __matmul__(self, other):
        return dynamic_call(contractions.matmul, (self, other), {})

    def __rmatmul__(self, other):
        return dynamic_call(contractions.matmul, (other, self), {})


class DynamicShape(tuple):
    """The shape of a :class:`DynamicExtent` ``value``: per axis a Python int, or where the axis is dynamic
    its traced length (a weak int64). ``np.zeros``/``ones``/``empty``/``full`` of it make a dynamic value
    with ``value``'s extents; a shape built from it (``(2,) + v.shape``) is a plain tuple and is refused."""

    is_dynamic_shape = True         # what xlac.numpy's creation functions look for, to call :func:`dispatch`

    def __new__(cls, value: DynamicExtent):
        shape = super().__new__(cls, (n if axis is None else _length_of(axis) for n, axis in
                                      zip(value.data.shape, value.axes)))
        shape.value = value
        return shape


def _length_of(axis: AxisExtent) -> Tracer:
    """How many elements ``axis`` holds, as a dynamic value's shape gives it: a weak int64 known to lie in
    [0, the axis's size]."""
    length = ops.convert(axis.count, INDEX, weak=True)
    set_known_range(length, (0, axis.size))
    return length


# The methods that are xlac.numpy functions (sum, mean, argmax, repeat, ...): xlac.numpy.dynamic_extent_math
# installs them, where every rule is registered.
_OPERATORS = {"add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply, "truediv": ufuncs.true_divide,
              "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder, "pow": ufuncs.power,
              "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor,
              "lshift": ufuncs.left_shift, "rshift": ufuncs.right_shift}
_COMPARISONS = {"lt": ufuncs.less, "le": ufuncs.less_equal, "gt": ufuncs.greater, "ge": ufuncs.greater_equal,
                "eq": ufuncs.equal, "ne": ufuncs.not_equal}
_UNARY = {"neg": ufuncs.negative, "pos": ufuncs.positive, "abs": ufuncs.absolute, "invert": ufuncs.invert}


def _binary(fn, reflected: bool = False):
    if reflected:
        return lambda self, other: elementwise(fn, (other, self))
    return lambda self, other: elementwise(fn, (self, other))


def _in_place(fn):
    name = fn.__name__

    def apply(self, other):
        result = elementwise(fn, (self, other))
        if result.dtype != self.dtype and not np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise TypeError(located(f"Cannot cast ufunc '{name}' output from {result.dtype!r} to {self.dtype!r} "
                                    "with casting rule 'same_kind'"))
        result = result.astype(self.dtype)
        new = placed(result, self.ndim, self.axes, list(self.data.shape), "non-broadcastable output operand")
        self.write_elements(shapes.broadcast_to(new, self.data.shape))
        return self
    return apply


for _op, _fn in _OPERATORS.items():
    setattr(DynamicExtent, f"__{_op}__", _binary(_fn))
    setattr(DynamicExtent, f"__r{_op}__", _binary(_fn, reflected=True))
    setattr(DynamicExtent, f"__i{_op}__", _in_place(_fn))
for _op, _fn in _COMPARISONS.items():
    setattr(DynamicExtent, f"__{_op}__", _binary(_fn))
for _op, _fn in _UNARY.items():
    setattr(DynamicExtent, f"__{_op}__", lambda self, _fn=_fn: elementwise(_fn, (self,)))


# ---------------------------------------------------------------- reading and writing


def has_traced_slice(index) -> bool:
    """Whether ``index`` holds a slice with a traced bound."""
    entries = index if isinstance(index, tuple) else (index,)
    return any(isinstance(e, slice) and any(isinstance(b, Tracer) for b in (e.start, e.stop, e.step))
               for e in entries)


def is_traced_mask(x, index) -> bool:
    return isinstance(index, Tracer) and index.dtype == np.bool_ and \
        index.shape == x.shape[:index.ndim]


def read(x: Tracer, index, error: Exception):
    """``x[index]`` for an index with a traced slice bound or a traced boolean mask over ``x``'s leading
    axes, as a :class:`DynamicExtent`; else raise ``error``."""
    if is_traced_mask(x, index):
        return selected(x, mask_extent(index, ("mask", index.value.id)), index.ndim)
    if not has_traced_slice(index):
        raise error
    view, axes, stepped_strides = _view_and_extents(x, index)
    if stepped_strides is not None:
        return SteppedView(x, index, view, axes, stepped_strides)
    return DynamicExtent(view, axes, is_view=view.base is not None or view is x)


def _view_and_extents(x: Tracer, index) -> tuple:
    """``x[index]`` (a traced slice bound): the data, the extents, and where a stepped axis gathered the
    data, the element strides NumPy's view ``x[index]`` has (else None)."""
    view_index, dynamic = static_view_index(x.shape, index)
    view = x[view_index]
    axes, strides, stepped = [None] * view.ndim, list(views.strides_of(view)), False
    for view_axis, (source_axis, bounds) in dynamic.items():
        if bounds[2] == 1:
            axes[view_axis] = slice_extent(bounds, x.shape[source_axis])
        else:
            view, axes[view_axis] = _stepped(view, view_axis, bounds)
            strides[view_axis] *= bounds[2]
            stepped = True
    return view, axes, (strides if stepped else None)


REDERIVED = "re-derived"      # ``is_view`` of a view whose data is computed again when read after a write


class RecomputedView(DynamicExtent):
    """A view whose data (a value of its own, not a view XLA knows) is computed again, ``recompute()``, when
    read after a write into any array of the trace, so that it shows that write as NumPy's view would."""

    @property
    def data(self) -> Tracer:
        trace = current_trace()
        if (trace, trace.stores) != self._computed_at:
            self.data = self.recompute()
        return self._data

    @data.setter
    def data(self, value: Tracer) -> None:
        trace = current_trace()
        self._data, self._computed_at = value, (trace, trace.stores)


class SteppedView(RecomputedView):
    """``x[i::2]`` with a traced bound and a step other than 1: its elements gathered to the front of an
    axis (a copy), which behaves as NumPy's view of ``x``: gathered again from ``x`` when read after a write
    (``x[...] = 0`` shows in it), and an in-place operator on it writes the elements back into ``x``
    (``x[index] = ...``, which places them at their positions). ``strides``: those of NumPy's view, in
    elements of ``x``."""

    def __init__(self, source: Tracer, index, data: Tracer, axes: list, strides: list):
        self.source, self.index, self.strides = source, index, strides
        super().__init__(data, axes, is_view=REDERIVED)

    def recompute(self) -> Tracer:
        return _view_and_extents(self.source, self.index)[0]

    def write_elements(self, new: Tracer, axes: list | None = None) -> None:
        region = self if axes is None else DynamicExtent(self.data, axes)
        data = ufuncs.where(valid_mask(region), new, self.data)
        self.source[self.index] = DynamicExtent(data, self.axes)
        self.data = data


class DerivedView(RecomputedView):
    """A view made of a view (``derive(view.data)``: transposed, reshaped, flipped, indexed, ...) whose data
    is computed again when read after a write, so that it shows the writes into the array both are views
    of, as NumPy's does: made of a :class:`SteppedView`, or a reshape NumPy views or copies depending on
    lengths known only when the program runs (``dynamic_extent_shapes``). A write into it raises
    ``refusal``. ``data``: its data now, where the caller has it (else derived)."""

    def __init__(self, view: DynamicExtent, derive, axes: list, refusal: str, data: Tracer | None = None):
        self.view, self.derive, self.refusal = view, derive, refusal
        super().__init__(derive(view.data) if data is None else data, axes, is_view=REDERIVED)

    def recompute(self) -> Tracer:
        return self.derive(self.view.data)

    def write_elements(self, new: Tracer, axes: list | None = None) -> None:
        raise UnsupportedError(located(self.refusal))


def derived_view(value: DynamicExtent, derive, axes: list):
    """The value whose data is ``derive(value.data)`` and whose axes have the extents ``axes``: the array
    itself where no axis is dynamic, and a view where ``value`` is one (NumPy's transpose, reshape, flip, ...
    of a slice are views of its array); of a :data:`REDERIVED` view, one computed again after writes."""
    if all(a is None for a in axes):
        return derive(value.data)
    if isinstance(value, DerivedView):
        return DerivedView(value, derive, axes, value.refusal)
    if value.is_view == REDERIVED:
        return DerivedView(value, derive, axes, "an in-place write into a view (transposed, reshaped, ...) of "
                                                "x[i::k] with a traced bound: write x[i::k] itself, or assign "
                                                "x[i::k] = new values")
    return DynamicExtent(derive(value.data), axes, value.is_view)


def handles_write(x: Tracer, index, value) -> bool:
    """Whether ``x[index] = value`` is :func:`write`'s: a dynamic value, a slice with a traced bound that is
    no window of static length (:class:`xlac.numpy.indexing.Window`), or a traced mask taking one value
    per selected element (a scalar or one row is xlac.numpy's select)."""
    if isinstance(value, DynamicExtent) or holds_dynamic_index(index):
        return True
    if has_traced_slice(index):
        return not indexing.takes_as_windows(x.shape, index)
    return is_traced_mask(x, index) and ndim_of(value) == x.ndim - index.ndim + 1 and np.shape(value)[0] != 1


def holds_dynamic_index(index) -> bool:
    """Whether ``index`` holds a value with a dynamic extent (``x[np.nonzero(m)]``, ``x[idx]``)."""
    return any(isinstance(e, DynamicExtent) for e in (index if isinstance(index, tuple) else (index,)))


def mask_extent(mask: Tracer, key: tuple) -> AxisExtent:
    """The extent of a selection by ``mask`` (any shape, flattened in NumPy's order)."""
    flat = ops.reshape(mask, (mask.size,))
    return AxisExtent(flat, ops.reduce(ops.convert(flat, INDEX), "sum", (0,)), None, key)


def selected(x: Tracer, extent: AxisExtent, mask_ndim: int) -> DynamicExtent:
    """``x[mask]``: ``x``'s leading ``mask_ndim`` axes (those of the mask of ``extent``) flattened into one."""
    rest = x.shape[mask_ndim:]
    data = views.copy(shapes.reshape(x, (extent.size,) + rest))    # a copy, as NumPy's: later writes to x miss it
    return DynamicExtent(data, [extent] + [None] * len(rest))


def ranks(extent: AxisExtent) -> Tracer:
    """Per position of ``extent``'s axis, its rank among the elements (int64; meaningless elsewhere)."""
    if extent.start is not None:
        return ops.iota((extent.size,), INDEX, 0) - extent.start
    return reductions.cumsum(ops.convert(extent.valid, INDEX)) - 1


def placed(value, ndim: int, targets: list, sizes: list, message: str):
    """As :func:`aligned`, where a target may also be a selection by a mask: there ``value``'s elements
    (unless it holds that selection itself, or broadcasts) go to the selected positions in order."""
    fronts, by_rank = list(targets), []
    lead = ndim - ndim_of(value)
    for axis, target in enumerate(targets):
        own = value.axes[axis - lead] if isinstance(value, DynamicExtent) and axis >= lead else None
        if target is not None and target.start is None and (own is None or own.key != target.key):
            fronts[axis] = AxisExtent(ops.iota((target.size,), INDEX, 0) < target.count, target.count,
                                      ops.constant(0, INDEX), ("front",) + target.key)
            by_rank.append(axis)
    data = aligned(value, ndim, fronts, sizes, message)
    for axis in by_rank:
        if data.shape[axis] != 1:
            data = indexing.take(data, ufuncs.clip(ranks(targets[axis]), 0, data.shape[axis] - 1), axis=axis)
    return data


def _as_static(value, what: str):
    if isinstance(value, DynamicExtent):
        raise UnsupportedError(located(f"a value whose length is known only when the program runs, {what}"))
    return value


def static_view_index(shape: tuple, index) -> tuple[tuple, dict]:
    """``index`` into an array of ``shape`` with each traced slice replaced by ``:`` (or by the positions of
    its :func:`clipped_window`), and for each such slice: the axis of the view it becomes, the axis of ``x``
    it slices, and its bounds."""
    ndim = len(shape)
    entries = index if isinstance(index, tuple) else (index,)
    consumed = sum(0 if e is None or e is Ellipsis else 1 for e in entries)
    view_index, dynamic, view_axis, source_axis = [], {}, 0, 0
    for entry in entries:
        if entry is Ellipsis:
            span = ndim - consumed
            view_index.append(entry)
            view_axis, source_axis = view_axis + span, source_axis + span
        elif entry is None:
            view_index.append(entry)
            view_axis += 1
        elif isinstance(entry, slice):
            if has_traced_slice(entry):
                if isinstance(entry.step, Tracer):
                    raise UnsupportedError(located("a slice's step must be known when tracing (a Python int)"))
                step = 1 if entry.step is None else operator.index(entry.step)
                if step == 0:
                    raise ValueError(located("slice step cannot be zero"))
                bounds = (entry.start, entry.stop, step)
                dynamic[view_axis] = (source_axis, bounds)
                window = clipped_window(bounds, shape[source_axis]) if source_axis < len(shape) else None
                view_index.append(slice(None) if window is None else slice(window[0], window[0] + window[1]))
            else:
                view_index.append(entry)
            view_axis, source_axis = view_axis + 1, source_axis + 1
        elif isinstance(entry, (int, np.integer)) or isinstance(entry, Tracer) and entry.ndim == 0 and \
                entry.dtype.kind in "iu":
            view_index.append(entry)
            source_axis += 1
        else:
            raise UnsupportedError(located(
                "a slice with a traced bound combined with an integer array or boolean index is not supported; "
                "index in two steps"))
    if source_axis > ndim:
        raise IndexError(located(f"too many indices for array: array is {ndim}-dimensional, but {source_axis} "
                                 "were indexed"))
    return tuple(view_index), dynamic


def _bound(value, size: int, default: int) -> Tracer:
    """A slice bound as NumPy reads it for step 1: negative counts from the end, then clipped to [0, size].
    A bound known when tracing, or known to lie in [0, size] already (a loop's index ``k`` in ``a[:k]``),
    is kept as it is, with what tracing knows of it: ``a[:k]`` and ``r[1:k + 1]`` are both ``k`` long."""
    if value is None:
        return _index_constant(default)
    if isinstance(value, Tracer) and (value.ndim != 0 or value.dtype.kind not in "iub"):
        raise TypeError(located("slice indices must be integers or None or have an __index__ method"))
    if not isinstance(value, Tracer):
        value = operator.index(value)
        return _index_constant(min(max(value + size if value < 0 else value, 0), size))
    value = _as_index(value)
    known = known_range(value)
    if known is not None and 0 <= known[0] and known[1] <= size:
        return value
    if known is not None and -size <= known[0] and known[1] < 0:
        return value + size
    value = ufuncs.where(value < 0, value + size, value)
    return ufuncs.clip(value, 0, size)


def _as_index(value: Tracer) -> Tracer:
    """A traced integer scalar as int64, keeping the range tracing knows it lies in."""
    if value.dtype == INDEX:
        return value
    converted = array_api.astype(value, INDEX)
    if value.dtype.kind in "bi" or value.dtype.itemsize < INDEX.itemsize:     # int64 holds every value
        set_known_range(converted, known_range(value))
    return converted


def _index_constant(value: int) -> Tracer:
    """An int64 constant that tracing knows the value of (its range is that one value)."""
    constant = ops.constant(value, INDEX)
    set_known_range(constant, (value, value))
    return constant


def _length(start: Tracer, stop: Tracer) -> Tracer:
    """How many positions ``start:stop`` holds, ``max(stop - start, 0)``, with what tracing knows of it: a
    bound known when tracing is subtracted as a Python int, so ``k - 0`` and ``(k + 1) - 1`` are one value."""
    low, high = known_range(start), known_range(stop)
    if low is not None and low[0] == low[1]:
        count = stop - low[0] if low[0] else stop
    elif high is not None and high[0] == high[1]:
        count = high[0] - start
    else:
        count = stop - start
    known = known_range(count)
    return count if known is not None and known[0] >= 0 else ufuncs.maximum(count, 0)


def same_value(a: Tracer, b: Tracer) -> bool:
    """Whether two traced integer scalars are known, when tracing, to hold the same value."""
    if a is b or offset_form(a) == offset_form(b):
        return True
    known = known_range(a)
    return known is not None and known[0] == known[1] and known_range(b) == known


def _stepped(view, axis: int, bounds) -> tuple:
    """``view[start:stop:step]`` along ``axis`` (a static step other than 1, negative too): its elements
    gathered to the front of an axis of ``ceil(size / |step|)``, in slice order, and that axis's extent."""
    size = view.shape[axis]
    first, step, extent = stepped_extent(bounds, size)
    positions = first + step * ops.iota((extent.size,), INDEX, 0)
    return indexing.take(view, ufuncs.clip(positions, 0, size - 1), axis=axis), extent


def stepped_extent(bounds, size: int) -> tuple:
    """A stepped slice of an axis of ``size``: its first position, its step, and the extent of its elements
    gathered to the front of an axis of ``ceil(size / |step|)``."""
    start, stop, step = bounds
    if step > 0:
        first, end = _bound(start, size, 0), _bound(stop, size, size)
        count = ufuncs.maximum((end - first + step - 1) // step, 0)
    else:
        first, end = _reversed_bound(start, size, size - 1), _reversed_bound(stop, size, -1)
        count = ufuncs.maximum((first - end - step - 1) // -step, 0)
    length = -(-size // abs(step))
    valid = ops.iota((length,), INDEX, 0) < count
    key = ("stepped", size, step, bound_key(start, 0), bound_key(stop, size))
    return first, step, AxisExtent(valid, count, ops.constant(0, INDEX), key)


def from_front(data, axis: int, first, step: int, size: int, count) -> tuple:
    """The inverse of gathering a stepped slice to the front: ``data`` (its elements from position 0 along
    ``axis``) placed back at ``first, first + step, ...`` of an axis of ``size``; and where those are."""
    offset = ops.iota((size,), INDEX, 0) - first
    rank = offset // step
    inside = ufuncs.logical_and(ufuncs.logical_and(offset % step == 0, rank >= 0), rank < count)
    return indexing.take(data, ufuncs.clip(rank, 0, data.shape[axis] - 1), axis=axis), inside


def _reversed_bound(value, size: int, default: int) -> Tracer:
    """A bound of a slice with a negative step, as NumPy reads it: negative counts from the end, then
    clipped to [-1, size - 1]."""
    if value is None:
        return ops.constant(default, INDEX)
    value = array_api.astype(creation.asarray(value), INDEX)
    value = ufuncs.where(value < 0, value + size, value)
    return ufuncs.clip(value, -1, size - 1)


def bound_key(value, default: int):
    """What identifies a slice bound: a Python int, or a traced value plus a Python int."""
    if value is None:
        return ("int", default)
    if not isinstance(value, Tracer):
        return ("int", int(value))
    return ("traced",) + offset_form(value)


def clipped_window(bounds, size: int) -> tuple | None:
    """For ``x[i:i + K]`` (step 1, ``K`` a Python int from 1 to ``size``) whose start may run past an end
    of the axis (else it is a :class:`xlac.numpy.indexing.Window`): the ``K`` positions that hold NumPy's
    slice wherever it is clipped, as (the first, int64 with its known range, ``K``); else None."""
    start, stop, step = bounds
    if step != 1 or not (isinstance(start, Tracer) and isinstance(stop, Tracer)) or start.ndim or stop.ndim or \
            start.dtype.kind not in "iu" or stop.dtype.kind not in "iu":
        return None
    (base, low), (stop_base, high) = offset_form(start), offset_form(stop)
    if base != stop_base or not 1 <= high - low <= size:
        return None
    length = high - low
    first = ufuncs.clip(_bound(start, size, 0), 0, size - length)
    set_known_range(first, (0, size - length))
    return first, length


def slice_extent(bounds, size: int) -> AxisExtent:
    """Where ``x[start:stop]`` (``bounds``, step 1) holds its elements along an axis of ``size``: among the
    positions of its :func:`clipped_window` where it has one, else among all."""
    start, stop = _bound(bounds[0], size, 0), _bound(bounds[1], size, size)
    count = _length(start, stop)
    key = ("slice", size, bound_key(bounds[0], 0), bound_key(bounds[1], size))
    window = clipped_window(bounds, size)
    if window is not None:
        first, size = window
        start, key = start - first, ("window", size) + key
    elif bounds[0] is None or isinstance(bounds[0], (int, np.integer)) and bounds[0] == 0:
        start = _zero_start()
    positions = ops.iota((size,), INDEX, 0)
    valid = ufuncs.logical_and(positions >= start, positions < start + count)
    return AxisExtent(valid, count, start, key)


# ---------------------------------------------------------------- alignment


def valid_mask(value: DynamicExtent) -> Tracer:
    """Where ``value``'s elements are, as a bool array of the data's shape."""
    mask = None
    for axis, extent in enumerate(value.axes):
        if extent is None:
            continue
        along = ops.broadcast_in_dim(extent.valid, value.data.shape, (axis,))
        mask = along if mask is None else ops.and_(mask, along)
    return mask if mask is not None else ops.full(value.data.shape, True, np.bool_)


def require(holds, payload, error: type, message: str) -> None:
    """Check after the call that ``holds``; else raise ``error(message)`` with ``payload`` as ``{value}``."""
    checks = current_trace().checks
    if checks.enabled:
        checks.require(holds, payload, Check(error, message, user_location(3)))


def _shifted(data, axis: int, by, size: int):
    """``out[t] = data[t - by]`` along ``axis`` for ``t`` in ``[0, size)``, zero where that is outside."""
    return _gathered(data, axis, ops.iota((size,), INDEX, 0) - by)


def _gathered(data, axis: int, source):
    """``out[t] = data[source[t]]`` along ``axis``, zero where ``source[t]`` is outside ``data``: one gather
    that XLA fuses into what reads it (a padded copy and a slice of it would be written out each time)."""
    length = data.shape[axis]
    if length == 0:
        shape = list(data.shape)
        shape[axis] = source.shape[0]
        result = ops.full(tuple(shape), 0, data.dtype)
    else:
        clamped = ops.clamp(ops.constant(0, INDEX), source, ops.constant(length - 1, INDEX))
        gathered = ops.gather(data, ops.reshape(clamped, (source.shape[0], 1)),
                              offset_dims=tuple(d for d in range(data.ndim) if d != axis),
                              collapsed_slice_dims=(axis,), start_index_map=(axis,),
                              slice_sizes=tuple(1 if d == axis else n for d, n in enumerate(data.shape)))
        inside = ops.broadcast_in_dim(ufuncs.logical_and(source >= 0, source < length), gathered.shape, (axis,))
        result = ufuncs.where(inside, gathered, 0)
    result.weak = data.weak
    return result


def _first_along(data, axis: int, start, size: int):
    """The element at ``start`` along ``axis``, repeated ``size`` times."""
    starts = [ops.constant(0, INDEX)] * data.ndim
    starts[axis] = start
    sizes = list(data.shape)
    sizes[axis] = 1
    first = ops.dynamic_slice(data, starts, sizes)
    shape = list(data.shape)
    shape[axis] = size
    return shapes.broadcast_to(first, tuple(shape))


def aligned(operand, ndim: int, targets: list, sizes: list, message: str):
    """``operand``'s data placed in the coordinates of ``targets`` (per axis of an ``ndim``-dimensional
    result: the :class:`AxisExtent` there, or None), broadcastable to it; unequal lengths fail after the call."""
    if isinstance(operand, DynamicExtent):
        data, axes = operand.data, operand.axes
    else:
        data = core_asarray(operand)           # a Python scalar stays weak (NEP 50): x[m] * 2 keeps x's dtype
        axes = [None] * data.ndim
    while data.ndim > ndim and (axes[0] is not None or data.shape[0] == 1):   # NumPy drops leading length-1 axes
        extent = axes[0]
        if extent is not None:              # of a length known when the program runs: it must be 1
            require(extent.count == 1, extent.count, ValueError,
                    f"{message}: a leading axis of length {{value}} where the region has none")
            first = extent.start if extent.start is not None else reductions.argmax(extent.valid)
            data = _first_along(data, 0, first, 1)
        data, axes = shapes.reshape(data, tuple(data.shape[1:])), axes[1:]
    if data.ndim > ndim:
        raise ValueError(located(f"{message}: too many dimensions"))
    lead = ndim - data.ndim
    if lead:
        data = shapes.reshape(data, (1,) * lead + tuple(data.shape))
        axes = [None] * lead + list(axes)
    for axis, target in enumerate(targets):
        extent, length = axes[axis], data.shape[axis]
        if target is None and extent is not None:
            target = whole_axis(sizes[axis])               # a static axis: the whole of it, from 0
        if target is None or extent is target:
            continue
        if extent is not None:
            if extent.key == target.key and length == sizes[axis]:
                continue
            if target.start is None:
                raise DynamicShapeError(located(
                    f"{message}: a value placed into the positions of a selection by a traced mask; combine "
                    "them elementwise first, or select with xnp.where(mask, x, 0)"))
            equal = same_value(extent.count, target.count)
            if not equal:
                require(ufuncs.logical_or(extent.count == target.count, extent.count == 1), extent.count,
                        ValueError, f"{message}: a value of length {{value}} against one of another length "
                        "(slices with traced bounds, or selections by traced masks)")
            data = _moved(data, axis, extent, target.start, sizes[axis], repeats_one=not equal)
        elif length != 1:
            if target.start is None:
                raise DynamicShapeError(located(
                    f"{message}: an axis of length {length} against a selection by a traced mask, whose length "
                    "is known only when the program runs (a scalar, or an axis of length 1, broadcasts)"))
            require(ops.compare(target.count, ops.constant(length, INDEX), "EQ"), target.count, ValueError,
                     f"{message}: a value of length {{value}} (a slice with traced bounds, or a selection by a traced mask) against an axis of length {length}")
            data = _shifted(data, axis, target.start, sizes[axis])
    return data


def whole_axis(size: int) -> AxisExtent:
    """The extent of a whole static axis of ``size``: its positions from 0."""
    return AxisExtent(ops.full((size,), True, np.bool_), ops.constant(size, INDEX), _zero_start(), ("whole", size))


def _result_axes(operands, ndim: int) -> tuple[list, list]:
    """Per axis of the broadcast result: the first operand's :class:`AxisExtent` there (or None), and the
    size of the data along it."""
    targets, sizes = [None] * ndim, [1] * ndim
    for operand in operands:
        if not isinstance(operand, DynamicExtent):
            shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
            for axis, n in enumerate(shape, ndim - len(shape)):
                if targets[axis] is None and n != 1:
                    sizes[axis] = n
            continue
        lead = ndim - operand.ndim
        for axis, extent in enumerate(operand.axes, lead):
            if extent is not None and targets[axis] is None:
                targets[axis], sizes[axis] = extent, extent.size
            elif targets[axis] is None and operand.data.shape[axis - lead] != 1:
                sizes[axis] = operand.data.shape[axis - lead]
    return targets, sizes


def _common_positions(operands: list, ndim: int) -> list:
    """``operands`` with each axis where their elements sit at different positions (slices of other bounds,
    selections by other masks, a selection by a mask against a static axis) re-based: there each holds its
    elements from position 0 (a selection by a mask first compacted in order), and one of length 1 repeats
    its element, as NumPy broadcasts it. Their lengths are checked after the call (equal, or 1)."""
    for axis in range(ndim):
        extents, static_lengths = [], []
        for k, operand in enumerate(operands):
            own_axis = axis - (ndim - ndim_of(operand))
            if isinstance(operand, DynamicExtent) and own_axis >= 0 and operand.axes[own_axis] is not None:
                extents.append((k, own_axis, operand.axes[own_axis]))
            elif own_axis >= 0 and np.shape(operand.data if isinstance(operand, DynamicExtent) else operand)[
                    own_axis] != 1:
                static_lengths.append(np.shape(operand.data if isinstance(operand, DynamicExtent) else operand)[
                    own_axis])
        if len({extent.key for _, _, extent in extents}) <= 1 and not (extents and static_lengths):
            continue
        size = max([extent.size for _, _, extent in extents] + static_lengths)
        count = extents[0][2].count
        equal = not static_lengths and all(same_value(extent.count, count) for _, _, extent in extents)
        for _, _, extent in ([] if equal else extents[1:]):
            count = ufuncs.where(count == 1, extent.count, count)
        for length in static_lengths:          # one element broadcasts against a static axis too
            count = ufuncs.where(count == 1, ops.constant(length, INDEX), count)
        target = AxisExtent(ops.iota((size,), INDEX, 0) < count, count, _zero_start(),
                            ("rebased", next(_fresh_keys)))
        for k, own_axis, extent in extents:
            if not equal:
                require(ufuncs.logical_or(extent.count == count, extent.count == 1), extent.count, ValueError,
                        "operands could not be broadcast together: a value of length {value} against one of "
                        "another length (slices with traced bounds, or selections by traced masks)")
            operands[k] = _rebased(operands[k], own_axis, extent, target, repeats_one=not equal)
    return operands


_fresh_keys = itertools.count()


def _rebased(value: DynamicExtent, axis: int, extent: AxisExtent, target: AxisExtent,
             repeats_one: bool = True) -> DynamicExtent:
    """``value`` with its elements along ``axis`` moved to ``target``'s positions (from 0)."""
    axes = list(value.axes)
    axes[axis] = target
    return DynamicExtent(_moved(value.data, axis, extent, target.start, target.size, repeats_one), axes)


def _moved(data, axis: int, extent: AxisExtent, start, size: int, repeats_one: bool = True):
    """``data``'s elements along ``axis`` (those of ``extent``) moved to begin at ``start`` of an axis of
    ``size``: a selection by a mask first gathered in order; one element repeated where there is only one
    (``repeats_one``; not needed where the target is known to hold as many elements)."""
    if extent.start is None:
        data = indexing.take(data, sorting.argsort(ufuncs.logical_not(extent.valid), kind="stable"), axis=axis)
        first = _zero_start()
    else:
        first = extent.start
    if data.shape[axis] == size and same_value(first, start):
        if not repeats_one:
            return data
        return ufuncs.where(extent.count == 1, _first_along(data, axis, first, size), data)
    source = ops.iota((size,), INDEX, 0) - (start - first)
    return _gathered(data, axis, ufuncs.where(extent.count == 1, first, source) if repeats_one else source)


def _zero_start() -> Tracer:
    """The start of an extent that begins at position 0 whatever the program's values."""
    return _index_constant(0)


def ndim_of(x) -> int:
    """The number of axes of a dynamic value, a traced array or anything NumPy takes."""
    return x.ndim if isinstance(x, (DynamicExtent, Tracer)) else np.ndim(x)


def broadcast_operands(operands, message: str = "operands could not be broadcast together") -> tuple[list, list]:
    """``operands`` (some of them dynamic) as NumPy broadcasts them: their data placed in common
    coordinates, and per axis of the result the :class:`AxisExtent` there (or None)."""
    ndim = max(ndim_of(x) for x in operands)
    operands = _common_positions(list(operands), ndim)
    targets, sizes = _result_axes(operands, ndim)
    return [aligned(x, ndim, targets, sizes, message) for x in operands], targets


def elementwise(fn, operands):
    """``fn`` (an elementwise xlac.numpy function) of operands some of which are dynamic. Along an axis where
    an operand has a static length other than 1, the result has that length, as NumPy broadcasts (the dynamic
    operands' lengths are checked after the call: that length, or 1): ``acc + acc[:k]`` is an array."""
    data, targets = broadcast_operands(operands)
    result = fn(*data)
    for axis, length in _static_lengths(operands, result.ndim).items():
        if targets[axis] is not None:          # a rebased extent: its elements at positions 0 .. length - 1
            limit = list(result.shape)
            limit[axis] = length
            result, targets[axis] = ops.slice(result, [0] * result.ndim, limit), None
    return DynamicExtent(result, targets) if any(t is not None for t in targets) else result


def _static_lengths(operands, ndim: int) -> dict:
    """Per axis of a broadcast result of ``ndim`` axes, the static length other than 1 some operand has there."""
    lengths = {}
    for operand in operands:
        if isinstance(operand, DynamicExtent):
            shape = [None if extent is not None else n for extent, n in zip(operand.axes, operand.data.shape)]
        else:
            shape = list(np.shape(operand) if not isinstance(operand, Tracer) else operand.shape)
        for axis, n in enumerate(shape, ndim - len(shape)):
            if n is not None and n != 1:
                lengths[axis] = n
    return lengths
