"""NumPy's operators and ndarray methods, installed onto tracers and ``xlac.Array`` by ``xlac.numpy``.

Each operator calls the ``xlac.numpy`` function NumPy's operator calls, so traced
and eager arrays promote, broadcast and fail exactly as the functions do. The
array classes live below this package (``xlac.trace.tracer``, ``xlac.array``) and
know nothing of it: :func:`install_array_methods` gives them their methods when
``xlac.numpy`` is imported, as JAX's ``register_jax_array_methods`` does.

>>> import numpy as np, xlac
>>> a = xlac.asarray(np.array([1.0, 2.0], np.float32))
>>> np.asarray(a * 2 + 1)
array([3., 5.], dtype=float32)
"""
from __future__ import annotations

import math

import numpy as np

from xlac.numpy import array_api
from xlac.numpy import contractions
from xlac.numpy import dtypes as numpy_dtypes
from xlac.numpy import index_write
from xlac.numpy import indexing
from xlac.numpy import inplace
from xlac.numpy import manipulation
from xlac.numpy import reductions
from xlac.numpy import shapes
from xlac.numpy import sorting
from xlac.numpy import ufuncs
from xlac import runtime
from xlac.errors import TracerConversionError, UnsupportedError, located
from xlac.numpy.array_api import namespace_for
from xlac.numpy.devices import to_device
from xlac.numpy.dtypes import with_complex_part
from xlac.numpy import dynamic_extent
from xlac.trace.facts import known_range, offset_form, set_known_range, set_offset_form
from xlac.trace.tracer import Tracer
from xlac.numpy.protocols import array_function, array_ufunc


def _ranged(result, x, offset, sign: int, offset_sign: int):
    """``result`` (``sign * x + offset_sign * offset``, ``offset`` a Python int) with what is known of it from
    ``x``, a traced scalar: the range it lies in, where ``x``'s is known (a rolled loop's index: ``x[i + 1]``
    needs no bounds check where that range fits the axis), and, for ``x + n``, which value plus which
    offset it is (slices ``a[k + 1:]`` and ``b[k + 1:]`` hold the same positions)."""
    if type(offset) is not int or not isinstance(result, Tracer) or not isinstance(x, Tracer) or x.ndim:
        return result
    known = known_range(x)
    if known is not None:
        ends = sorted(sign * end + offset_sign * offset for end in known)
        set_known_range(result, (ends[0], ends[1]))
    if sign == 1 and x.dtype.kind in "iu":
        base, shift = offset_form(x)
        set_offset_form(result, base, shift + offset_sign * offset)
    return result


def _scaled(result, x, factor):
    """``result`` (``x * factor``, ``factor`` a Python int) with what is known of it from ``x``, a traced
    scalar, as :func:`_ranged` keeps it: the range it lies in, and which value plus which offset it is (two
    ``r * s`` are one value: ``x[r * s:r * s + K]`` is a window of ``K`` elements)."""
    if type(factor) is not int or not isinstance(result, Tracer) or not isinstance(x, Tracer) or x.ndim:
        return result
    known = known_range(x)
    if known is not None:
        ends = sorted(end * factor for end in known)
        set_known_range(result, (ends[0], ends[1]))
    if x.dtype.kind in "iu":
        base, shift = offset_form(x)
        set_offset_form(result, ("times", base, factor), shift * factor)
    return result


def _divided(result, x, divisor, kind: str):
    """``result`` (``x % divisor`` or ``x // divisor``, ``kind`` "mod" or "floordiv", ``divisor`` a positive
    Python int) with what is known of it from ``x``, a traced integer scalar, as :func:`_ranged` keeps it: the
    range it lies in, and which expression of which value it is (two ``i % 2`` computed apart are one value:
    ``x[i % 2:i % 2 + 1]`` is a window of 1 element)."""
    if type(divisor) is not int or divisor <= 0 or not isinstance(result, Tracer) or not isinstance(x, Tracer) \
            or x.ndim or x.dtype.kind not in "iu":
        return result
    known = known_range(x)
    if kind == "floordiv":
        set_known_range(result, None if known is None else (known[0] // divisor, known[1] // divisor))
    else:
        inside = known is not None and 0 <= known[0] and known[1] < divisor
        set_known_range(result, known if inside else (0, divisor - 1))
    base, shift = offset_form(x)
    set_offset_form(result, (kind, base, shift, divisor), 0)
    return result


class ArrayOperators:
    """The methods every array class gets (see :func:`install_array_methods`); they use its ``shape``,
    ``dtype``, ``_check_writable`` and ``_store``."""

    __array_ufunc__ = array_ufunc         # np.exp(x), np.add.reduce(x), ndarray + x: xlac.numpy
    __array_function__ = array_function   # np.sum(x), np.split(x, 3), np.linalg.norm(x): xlac.numpy

    # -- attributes
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def T(self):
        return shapes.transpose(self)

    @property
    def mT(self):
        return array_api.matrix_transpose(self)

    @property
    def device(self):
        """The device the array lives on; a traced array's is the default device (see docs/array-api.md)."""
        return runtime.default_device()

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def real(self):
        return numpy_dtypes.real(self)

    @real.setter
    def real(self, value):
        self._set_complex_part("real", value)

    @property
    def imag(self):
        return numpy_dtypes.imag(self)

    @imag.setter
    def imag(self, value):
        self._set_complex_part("imag", value)

    def _set_complex_part(self, part: str, value):
        """``x.real = value`` / ``x.imag = value``: NumPy's assignment to a part of a complex array."""
        self._check_writable()
        self._store(with_complex_part(self, part, value))

    # -- arithmetic
    def __add__(self, other): return _ranged(ufuncs.add(self, other), self, other, 1, 1)
    def __radd__(self, other): return _ranged(ufuncs.add(other, self), self, other, 1, 1)
    def __sub__(self, other): return _ranged(ufuncs.subtract(self, other), self, other, 1, -1)
    def __rsub__(self, other): return _ranged(ufuncs.subtract(other, self), self, other, -1, 1)
    def __mul__(self, other): return _scaled(ufuncs.multiply(self, other), self, other)
    def __rmul__(self, other): return _scaled(ufuncs.multiply(other, self), self, other)
    def __truediv__(self, other): return ufuncs.divide(self, other)
    def __rtruediv__(self, other): return ufuncs.divide(other, self)
    def __floordiv__(self, other): return _divided(ufuncs.floor_divide(self, other), self, other, "floordiv")
    def __rfloordiv__(self, other): return ufuncs.floor_divide(other, self)
    def __mod__(self, other): return _divided(ufuncs.remainder(self, other), self, other, "mod")
    def __rmod__(self, other): return ufuncs.remainder(other, self)
    def __pow__(self, other): return ufuncs.power(self, other)
    def __rpow__(self, other): return ufuncs.power(other, self)
    def __matmul__(self, other): return contractions.matmul(self, other)
    def __rmatmul__(self, other): return contractions.matmul(other, self)
    def __divmod__(self, other): return self // other, self % other
    def __rdivmod__(self, other): return ufuncs.floor_divide(other, self), ufuncs.remainder(other, self)
    def __neg__(self): return ufuncs.negative(self)
    def __pos__(self): return ufuncs.positive(self)
    def __abs__(self): return ufuncs.absolute(self)

    def __round__(self, ndigits=None):
        """``round(x)`` of a scalar, as of a NumPy scalar: an integer without ``ndigits``."""
        if self.ndim != 0:
            raise TypeError(f"type numpy.ndarray doesn't define __round__ method (round() of a {self.ndim}-d array)")
        if ndigits is None and not isinstance(self, Tracer):     # a concrete scalar: NumPy's Python int
            return round(np.asarray(self)[()])
        if ndigits is None:
            return manipulation.round(self).astype(np.int64)
        return manipulation.round(self, ndigits)
    def __trunc__(self):
        """``math.trunc(x)``: of a concrete scalar, NumPy's Python int; of a traced one, as ``int(x)``."""
        return int(self) if isinstance(self, Tracer) else math.trunc(np.asarray(self)[()])
    def __invert__(self): return ufuncs.invert(self)

    # -- bitwise
    def __and__(self, other): return ufuncs.bitwise_and(self, other)
    def __rand__(self, other): return ufuncs.bitwise_and(other, self)
    def __or__(self, other): return ufuncs.bitwise_or(self, other)
    def __ror__(self, other): return ufuncs.bitwise_or(other, self)
    def __xor__(self, other): return ufuncs.bitwise_xor(self, other)
    def __rxor__(self, other): return ufuncs.bitwise_xor(other, self)
    def __lshift__(self, other): return ufuncs.left_shift(self, other)
    def __rlshift__(self, other): return ufuncs.left_shift(other, self)
    def __rshift__(self, other): return ufuncs.right_shift(self, other)
    def __rrshift__(self, other): return ufuncs.right_shift(other, self)

    # -- comparison
    def __eq__(self, other): return ufuncs.equal(self, other)  # type: ignore[override]
    def __ne__(self, other): return ufuncs.not_equal(self, other)  # type: ignore[override]
    def __lt__(self, other): return ufuncs.less(self, other)
    def __le__(self, other): return ufuncs.less_equal(self, other)
    def __gt__(self, other): return ufuncs.greater(self, other)
    def __ge__(self, other): return ufuncs.greater_equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    # -- indexing
    def __getitem__(self, index):
        try:
            return indexing.getitem(self, index)
        except TracerConversionError as error:   # a traced slice bound or mask: a dynamic extent
            return dynamic_extent.read(self, index, error)

    # -- in-place updates: subclasses provide `mutability` and `_store(new)`, which makes the memory
    # this array refers to hold `new` (an array of the same shape and dtype).
    def _check_writable(self):
        if self.mutability == "readonly":
            raise ValueError(located("assignment destination is read-only (a read-only array or view, such as "
                                     "broadcast_to's or a jax Array argument; copy it first)"))
        if self.mutability == "value":
            raise TypeError(located(f"a NumPy scalar ({self.dtype}) does not support item assignment: a Python or "
                                    "NumPy scalar argument, or an element read with an integer per axis "
                                    "(`t = x[0, 1]`), which NumPy gives as a scalar copy, not a view"))

    def __setitem__(self, index, value):
        """``x[index] = value`` with NumPy's broadcasting and casting of ``value``."""
        self._check_writable()
        self._store(index_write.index_update(self, index, value))

    def _update_in_place(self, ufunc, other):
        """``x op= other`` with NumPy's rules: the result keeps x's shape and casts to x's dtype under
        'same_kind' casting. Python and NumPy scalars (a weak 0-d value is a Python number) are rebound
        instead, as in Python."""
        result = ufunc(self, other)
        if self.mutability == "value" or getattr(self, "weak", False) and self.ndim == 0:
            return result
        self._check_writable()
        if result.shape != self.shape:
            raise ValueError(located(f"non-broadcastable output operand with shape {self.shape} doesn't match "
                                     f"the broadcast shape {result.shape}"))
        if result.dtype != self.dtype and not np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise TypeError(located(f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype!r} to "
                                    f"{self.dtype!r} with casting rule 'same_kind'"))
        self._store(result if result.dtype == self.dtype else array_api.astype(result, self.dtype))
        return self

    def fill(self, value):
        """Set every element to ``value``, as ``ndarray.fill``."""
        self[...] = value

    def __iadd__(self, other): return self._update_in_place(ufuncs.add, other)
    def __isub__(self, other): return self._update_in_place(ufuncs.subtract, other)
    def __imul__(self, other): return self._update_in_place(ufuncs.multiply, other)
    def __itruediv__(self, other): return self._update_in_place(ufuncs.divide, other)
    def __ifloordiv__(self, other): return self._update_in_place(ufuncs.floor_divide, other)
    def __imod__(self, other): return self._update_in_place(ufuncs.remainder, other)
    def __ipow__(self, other): return self._update_in_place(ufuncs.power, other)
    def __imatmul__(self, other): return self._update_in_place(contractions.matmul, other)
    def __iand__(self, other): return self._update_in_place(ufuncs.bitwise_and, other)
    def __ior__(self, other): return self._update_in_place(ufuncs.bitwise_or, other)
    def __ixor__(self, other): return self._update_in_place(ufuncs.bitwise_xor, other)
    def __ilshift__(self, other): return self._update_in_place(ufuncs.left_shift, other)
    def __irshift__(self, other): return self._update_in_place(ufuncs.right_shift, other)

    # -- Array API
    def __array_namespace__(self, /, *, api_version=None):
        """``xlac.numpy``, the Array API namespace of this array."""
        return namespace_for(api_version)

    def to_device(self, device, /, *, stream=None):
        """This array on ``device`` (itself when it is already there)."""
        if stream is not None:
            raise ValueError(located(f"to_device: xlac has no streams, got stream={stream!r}"))
        return to_device(self, device)

    # -- not supported: a clear error instead of a bare AttributeError
    def view(self, dtype=None, type=None):
        """Not supported: raises ``xlac.UnsupportedError`` naming the user's line (see the message)."""
        raise UnsupportedError(located(f"ndarray.view(dtype={dtype!r}) is not supported by xlac; use "
                                       "x.astype(dtype) for a converted copy, or x[...] for a view"))

    @property
    def flat(self):
        """Not supported: raises ``xlac.UnsupportedError`` naming the user's line (see the message)."""
        raise UnsupportedError(located("ndarray.flat is not supported by xlac; use x.ravel()[i] to read and "
                                       "x[np.unravel_index(i, x.shape)] = v to write"))

    # -- methods
    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return shapes.reshape(self, shape, order=order, copy=copy)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return shapes.transpose(self, axes or None)

    def swapaxes(self, axis1, axis2): return shapes.swapaxes(self, axis1, axis2)
    def squeeze(self, axis=None): return shapes.squeeze(self, axis)
    def ravel(self, order="C"): return shapes.ravel(self, order=order)
    def flatten(self, order="C"): return shapes.copy(shapes.ravel(self, order=order))
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return array_api.astype(self, dtype, copy=copy)
    # Reductions take NumPy's positional order (tests/test_fuzz_regressions_errors.py checks it).
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return reductions.sum(self, axis, dtype, out, keepdims, initial, where)
    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return reductions.prod(self, axis, dtype, out, keepdims, initial, where)
    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
        return reductions.mean(self, axis, dtype, out, keepdims, where=where)
    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
            correction=None):
        return reductions.var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
            correction=None):
        return reductions.std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    def max(self, axis=None, out=None, keepdims=False, initial=None, where=None):
        return reductions.max(self, axis, out, keepdims, initial, where)
    def min(self, axis=None, out=None, keepdims=False, initial=None, where=None):
        return reductions.min(self, axis, out, keepdims, initial, where)
    def all(self, axis=None, out=None, keepdims=False, *, where=None):
        return reductions.all(self, axis, out, keepdims, where=where)
    def any(self, axis=None, out=None, keepdims=False, *, where=None):
        return reductions.any(self, axis, out, keepdims, where=where)
    def argmax(self, axis=None, out=None, *, keepdims=False): return reductions.argmax(self, axis, out, keepdims=keepdims)
    def argmin(self, axis=None, out=None, *, keepdims=False): return reductions.argmin(self, axis, out, keepdims=keepdims)
    def clip(self, min=None, max=None, out=None): return ufuncs.clip(self, min, max, out)
    def diagonal(self, offset=0, axis1=0, axis2=1): return shapes.diagonal(self, offset, axis1, axis2)
    def dot(self, other, out=None): return contractions.dot(self, other, out)
    def conj(self): return numpy_dtypes.conjugate(self)
    def copy(self, order="C"): return shapes.copy(self, order)
    def conjugate(self): return numpy_dtypes.conjugate(self)
    def round(self, decimals=0, out=None): return manipulation.round(self, decimals, out)
    def cumsum(self, axis=None, dtype=None, out=None): return reductions.cumsum(self, axis, dtype, out)
    def cumprod(self, axis=None, dtype=None, out=None): return reductions.cumprod(self, axis, dtype, out)
    def ptp(self, axis=None, keepdims=False): return reductions.ptp(self, axis, keepdims=keepdims)
    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return reductions.trace(self, offset, axis1, axis2, dtype, out)
    def take(self, indices, axis=None, out=None, mode="raise"): return indexing.take(self, indices, axis, out, mode)
    def repeat(self, repeats, axis=None): return manipulation.repeat(self, repeats, axis)
    def compress(self, condition, axis=None, out=None): return manipulation.compress(condition, self, axis, out)
    def choose(self, choices, out=None, mode="raise"): return manipulation.choose(self, choices, out, mode)
    def nonzero(self): return sorting.nonzero(self)
    def searchsorted(self, v, side="left", sorter=None): return sorting.searchsorted(self, v, side, sorter)
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return sorting.argsort(self, axis, kind, order, stable=stable)
    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return sorting.argpartition(self, kth, axis, kind, order)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place, as ``ndarray.sort``."""
        self._check_writable()
        self._store(sorting.sort(self, axis, kind, order, stable=stable))

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place, as ``ndarray.partition``."""
        self._check_writable()
        self._store(sorting.partition(self, kth, axis, kind, order))

    def put(self, indices, values, mode="raise"):
        """``self.flat[indices] = values`` in place, as ``ndarray.put``."""
        inplace.put(self, indices, values, mode=mode)


_NOT_METHODS = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"}


def install_array_methods(cls) -> None:
    """Give the array class ``cls`` NumPy's operators, methods and protocol hooks; what ``cls`` defines itself
    (``xlac.Array``'s ``device``) stays.

    >>> class Pair:
    ...     shape, dtype = (2,), np.dtype("float32")
    >>> install_array_methods(Pair)
    >>> Pair().ndim, Pair().nbytes
    (1, 8)
    """
    for name, member in vars(ArrayOperators).items():
        if name not in _NOT_METHODS and name not in vars(cls):
            setattr(cls, name, member)
