"""``x[mask] op= v`` with a traced boolean mask: NumPy reads ``x[mask]``, updates it, and writes it back.

The read alone has a shape known only when the program runs, so ``x[mask]`` with a traced ``mask`` (the
whole of ``x``'s shape, or its leading axes) gives a :class:`MaskedSelection`: it supports the in-place
operators with a value whose shape does not depend on the selection's length (a scalar, a row that
broadcasts against the unmasked axes) and being written back to the same place (``x[mask] = selection``), which becomes
one select over ``x``. Any other use raises the error the read would have raised.

>>> import numpy as np, xlac
>>> def f(a):
...     a[a < 0] += 10
...     return a
>>> np.asarray(xlac.compile(f)(np.array([-1, 2, -3])))
array([9, 2, 7])
"""
from __future__ import annotations

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.numpy import ufuncs
from xlac.trace import ops
from xlac.trace.tracer import Tracer
import xlac.numpy as xnp

_IN_PLACE = {"__iadd__": "add", "__isub__": "subtract", "__imul__": "multiply", "__itruediv__": "true_divide",
             "__ifloordiv__": "floor_divide", "__imod__": "remainder", "__ipow__": "power", "__iand__": "bitwise_and",
             "__ior__": "bitwise_or", "__ixor__": "bitwise_xor", "__ilshift__": "left_shift",
             "__irshift__": "right_shift"}


class MaskedSelection:
    """``x[mask]`` for a traced ``mask``, held as ``x``'s full-shape values (only the selected ones count)."""

    def __init__(self, base: Tracer, mask: Tracer, values: Tracer, error: Exception):
        self._base, self._mask, self._values, self._error = base, mask, values, error

    def writes_back_to(self, base, mask) -> bool:
        return base is self._base and mask is self._mask

    def new_base_value(self) -> Tracer:
        """``x`` with the selected elements replaced by this selection's values."""
        mask = ops.broadcast_in_dim(self._mask, self._base.shape, tuple(range(self._mask.ndim)))
        return ufuncs.where(mask, self._values, self._base)

    def _in_place(self, ufunc: str, other):
        other = self._against_full_values(ufunc, other)
        result = getattr(xnp, ufunc)(self._values, other)
        if result.dtype != self._values.dtype and not np.can_cast(result.dtype, self._values.dtype, "same_kind"):
            raise TypeError(located(f"Cannot cast ufunc '{ufunc}' output from {result.dtype!r} to "
                                    f"{self._values.dtype!r} with casting rule 'same_kind'"))
        return MaskedSelection(self._base, self._mask, xnp.astype(result, self._values.dtype), self._error)

    def _against_full_values(self, ufunc: str, other):
        """``other`` as it broadcasts against ``x[mask]`` (shape ``(k, *rest)``), made to broadcast the same
        against the full-shape values: a leading axis of 1 (which would broadcast against ``k``) dropped. A
        leading axis of another length would have to equal ``k``, known only when the program runs."""
        shape = np.shape(other)
        rest = self._base.shape[self._mask.ndim:]
        if len(shape) == len(rest) + 1 and shape[0] == 1:
            other, shape = xnp.reshape(other, shape[1:]), shape[1:]
        if len(shape) > len(rest):
            raise UnsupportedError(located(f"x[mask] {ufunc} with a traced mask takes a value of shape {rest} or one that "
                                    f"broadcasts to it, got shape {tuple(np.shape(other))} (the selection's number "
                                    "of elements is known only when the program runs); use xnp.where(mask, ..., x)"))
        return other

    def __getattr__(self, name):
        raise self._error

    def __array__(self, *args, **kwargs):
        raise self._error


def _in_place_operator(ufunc: str):
    return lambda self, other: self._in_place(ufunc, other)


def _refused(self, *args, **kwargs):
    raise self._error


for _name, _ufunc in _IN_PLACE.items():
    setattr(MaskedSelection, _name, _in_place_operator(_ufunc))
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__neg__", "__abs__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
              "__getitem__", "__setitem__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
              "__array_ufunc__", "__array_function__"):
    setattr(MaskedSelection, _name, _refused)
MaskedSelection.__hash__ = object.__hash__


def selection(x: Tracer, index, error: Exception):
    """The :class:`MaskedSelection` for ``x[index]`` when ``index`` is a traced boolean mask over ``x``'s
    leading axes; else raise ``error``."""
    if isinstance(index, Tracer) and index.dtype == np.bool_ and index.shape == x.shape[:index.ndim]:
        return MaskedSelection(x, index, x, error)
    raise error
