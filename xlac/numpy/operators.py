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

import xlac.numpy as xnp
from xlac import runtime
from xlac.errors import TracerConversionError, UnsupportedError, located
from xlac.numpy.array_api import namespace_for, to_device
from xlac.numpy.dtypes import with_complex_part
from xlac.numpy import dynamic_extent
from xlac.trace.tracer import Tracer
from xlac.numpy.protocols import array_function, array_ufunc


def _ranged(result, x, offset, sign: int, offset_sign: int):
    """``result`` (``sign * x + offset_sign * offset``, ``offset`` a Python int) with what is known of it from
    ``x``, a traced scalar: the range it lies in, where ``x``'s is known (a rolled loop's index: ``x[i + 1]``
    needs no bounds check where that range fits the axis), and, for ``x + n``, which value plus which
    offset it is (slices ``a[k + 1:]`` and ``b[k + 1:]`` hold the same positions)."""
    if type(offset) is not int or not isinstance(result, Tracer) or not isinstance(x, Tracer) or x.ndim:
        return result
    if x.known_range is not None:
        ends = sorted(sign * end + offset_sign * offset for end in x.known_range)
        result.known_range = (ends[0], ends[1])
    if sign == 1 and x.dtype.kind in "iu":
        base, shift = x.offset_of if x.offset_of is not None else (x.value.id, 0)
        result.offset_of = (base, shift + offset_sign * offset)
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
        return xnp.transpose(self)

    @property
    def mT(self):
        return xnp.matrix_transpose(self)

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
        return xnp.real(self)

    @real.setter
    def real(self, value):
        self._set_complex_part("real", value)

    @property
    def imag(self):
        return xnp.imag(self)

    @imag.setter
    def imag(self, value):
        self._set_complex_part("imag", value)

    def _set_complex_part(self, part: str, value):
        """``x.real = value`` / ``x.imag = value``: NumPy's assignment to a part of a complex array."""
        self._check_writable()
        self._store(with_complex_part(self, part, value))

    # -- arithmetic
    def __add__(self, other): return _ranged(xnp.add(self, other), self, other, 1, 1)
    def __radd__(self, other): return _ranged(xnp.add(other, self), self, other, 1, 1)
    def __sub__(self, other): return _ranged(xnp.subtract(self, other), self, other, 1, -1)
    def __rsub__(self, other): return _ranged(xnp.subtract(other, self), self, other, -1, 1)
    def __mul__(self, other): return xnp.multiply(self, other)
    def __rmul__(self, other): return xnp.multiply(other, self)
    def __truediv__(self, other): return xnp.divide(self, other)
    def __rtruediv__(self, other): return xnp.divide(other, self)
    def __floordiv__(self, other): return xnp.floor_divide(self, other)
    def __rfloordiv__(self, other): return xnp.floor_divide(other, self)
    def __mod__(self, other): return xnp.remainder(self, other)
    def __rmod__(self, other): return xnp.remainder(other, self)
    def __pow__(self, other): return xnp.power(self, other)
    def __rpow__(self, other): return xnp.power(other, self)
    def __matmul__(self, other): return xnp.matmul(self, other)
    def __rmatmul__(self, other): return xnp.matmul(other, self)
    def __divmod__(self, other): return xnp.floor_divide(self, other), xnp.remainder(self, other)
    def __rdivmod__(self, other): return xnp.floor_divide(other, self), xnp.remainder(other, self)
    def __neg__(self): return xnp.negative(self)
    def __pos__(self): return xnp.positive(self)
    def __abs__(self): return xnp.absolute(self)

    def __round__(self, ndigits=None):
        """``round(x)`` of a scalar, as of a NumPy scalar: an integer without ``ndigits``."""
        if self.ndim != 0:
            raise TypeError(f"type numpy.ndarray doesn't define __round__ method (round() of a {self.ndim}-d array)")
        if ndigits is None and not isinstance(self, Tracer):     # a concrete scalar: NumPy's Python int
            return round(np.asarray(self)[()])
        if ndigits is None:
            return xnp.round(self).astype(np.int64)
        return xnp.round(self, ndigits)
    def __trunc__(self):
        """``math.trunc(x)``: of a concrete scalar, NumPy's Python int; of a traced one, as ``int(x)``."""
        return int(self) if isinstance(self, Tracer) else math.trunc(np.asarray(self)[()])
    def __invert__(self): return xnp.invert(self)

    # -- bitwise
    def __and__(self, other): return xnp.bitwise_and(self, other)
    def __rand__(self, other): return xnp.bitwise_and(other, self)
    def __or__(self, other): return xnp.bitwise_or(self, other)
    def __ror__(self, other): return xnp.bitwise_or(other, self)
    def __xor__(self, other): return xnp.bitwise_xor(self, other)
    def __rxor__(self, other): return xnp.bitwise_xor(other, self)
    def __lshift__(self, other): return xnp.left_shift(self, other)
    def __rlshift__(self, other): return xnp.left_shift(other, self)
    def __rshift__(self, other): return xnp.right_shift(self, other)
    def __rrshift__(self, other): return xnp.right_shift(other, self)

    # -- comparison
    def __eq__(self, other): return xnp.equal(self, other)  # type: ignore[override]
    def __ne__(self, other): return xnp.not_equal(self, other)  # type: ignore[override]
    def __lt__(self, other): return xnp.less(self, other)
    def __le__(self, other): return xnp.less_equal(self, other)
    def __gt__(self, other): return xnp.greater(self, other)
    def __ge__(self, other): return xnp.greater_equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    # -- indexing
    def __getitem__(self, index):
        try:
            return xnp.getitem(self, index)
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
        self._store(xnp.index_update(self, index, value))

    def _update_in_place(self, ufunc: str, other):
        """``x op= other`` with NumPy's rules: the result keeps x's shape and casts to x's dtype under
        'same_kind' casting. Python and NumPy scalar arguments are rebound instead, as in Python."""
        result = getattr(xnp, ufunc)(self, other)
        if self.mutability == "value":
            return result
        self._check_writable()
        if result.shape != self.shape:
            raise ValueError(located(f"non-broadcastable output operand with shape {self.shape} doesn't match "
                                     f"the broadcast shape {result.shape}"))
        if result.dtype != self.dtype and not np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise TypeError(located(f"Cannot cast ufunc '{ufunc}' output from {result.dtype!r} to "
                                    f"{self.dtype!r} with casting rule 'same_kind'"))
        self._store(result if result.dtype == self.dtype else xnp.astype(result, self.dtype))
        return self

    def fill(self, value):
        """Set every element to ``value``, as ``ndarray.fill``."""
        self[...] = value

    def __iadd__(self, other): return self._update_in_place("add", other)
    def __isub__(self, other): return self._update_in_place("subtract", other)
    def __imul__(self, other): return self._update_in_place("multiply", other)
    def __itruediv__(self, other): return self._update_in_place("divide", other)
    def __ifloordiv__(self, other): return self._update_in_place("floor_divide", other)
    def __imod__(self, other): return self._update_in_place("remainder", other)
    def __ipow__(self, other): return self._update_in_place("power", other)
    def __imatmul__(self, other): return self._update_in_place("matmul", other)
    def __iand__(self, other): return self._update_in_place("bitwise_and", other)
    def __ior__(self, other): return self._update_in_place("bitwise_or", other)
    def __ixor__(self, other): return self._update_in_place("bitwise_xor", other)
    def __ilshift__(self, other): return self._update_in_place("left_shift", other)
    def __irshift__(self, other): return self._update_in_place("right_shift", other)

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
        return xnp.reshape(self, shape, order=order, copy=copy)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return xnp.transpose(self, axes or None)

    def swapaxes(self, axis1, axis2): return xnp.swapaxes(self, axis1, axis2)
    def squeeze(self, axis=None): return xnp.squeeze(self, axis)
    def ravel(self, order="C"): return xnp.ravel(self, order=order)
    def flatten(self, order="C"): return xnp.copy(xnp.ravel(self, order=order))
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return xnp.astype(self, dtype, copy=copy)
    # Reductions take NumPy's positional order (tests/test_fuzz_regressions_errors.py checks it).
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return xnp.sum(self, axis, dtype, out, keepdims, initial, where)
    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return xnp.prod(self, axis, dtype, out, keepdims, initial, where)
    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
        return xnp.mean(self, axis, dtype, out, keepdims, where=where)
    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
            correction=None):
        return xnp.var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
            correction=None):
        return xnp.std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    def max(self, axis=None, out=None, keepdims=False, initial=None, where=None):
        return xnp.max(self, axis, out, keepdims, initial, where)
    def min(self, axis=None, out=None, keepdims=False, initial=None, where=None):
        return xnp.min(self, axis, out, keepdims, initial, where)
    def all(self, axis=None, out=None, keepdims=False, *, where=None):
        return xnp.all(self, axis, out, keepdims, where=where)
    def any(self, axis=None, out=None, keepdims=False, *, where=None):
        return xnp.any(self, axis, out, keepdims, where=where)
    def argmax(self, axis=None, out=None, *, keepdims=False): return xnp.argmax(self, axis, out, keepdims=keepdims)
    def argmin(self, axis=None, out=None, *, keepdims=False): return xnp.argmin(self, axis, out, keepdims=keepdims)
    def clip(self, min=None, max=None, out=None): return xnp.clip(self, min, max, out)
    def diagonal(self, offset=0, axis1=0, axis2=1): return xnp.diagonal(self, offset, axis1, axis2)
    def dot(self, other, out=None): return xnp.dot(self, other, out)
    def conj(self): return xnp.conjugate(self)
    def copy(self, order="C"): return xnp.copy(self, order)
    def conjugate(self): return xnp.conjugate(self)
    def round(self, decimals=0, out=None): return xnp.round(self, decimals, out)
    def cumsum(self, axis=None, dtype=None, out=None): return xnp.cumsum(self, axis, dtype, out)
    def cumprod(self, axis=None, dtype=None, out=None): return xnp.cumprod(self, axis, dtype, out)
    def ptp(self, axis=None, keepdims=False): return xnp.ptp(self, axis, keepdims=keepdims)
    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return xnp.trace(self, offset, axis1, axis2, dtype, out)
    def take(self, indices, axis=None, out=None, mode="raise"): return xnp.take(self, indices, axis, out, mode)
    def repeat(self, repeats, axis=None): return xnp.repeat(self, repeats, axis)
    def compress(self, condition, axis=None, out=None): return xnp.compress(condition, self, axis, out)
    def choose(self, choices, out=None, mode="raise"): return xnp.choose(self, choices, out, mode)
    def nonzero(self): return xnp.nonzero(self)
    def searchsorted(self, v, side="left", sorter=None): return xnp.searchsorted(self, v, side, sorter)
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return xnp.argsort(self, axis, kind, order, stable=stable)
    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return xnp.argpartition(self, kth, axis, kind, order)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place, as ``ndarray.sort``."""
        self._check_writable()
        self._store(xnp.sort(self, axis, kind, order, stable=stable))

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place, as ``ndarray.partition``."""
        self._check_writable()
        self._store(xnp.partition(self, kth, axis, kind, order))

    def put(self, indices, values, mode="raise"):
        """``self.flat[indices] = values`` in place, as ``ndarray.put``."""
        xnp.put(self, indices, values, mode=mode)


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
