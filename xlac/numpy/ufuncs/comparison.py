"""Comparison and logical ufuncs, and the tests for finite, NaN, infinite and NaT values: bool results.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.less(np.array([1, 3]), 2))
array([ True, False])
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, promote
from xlac.ir.dtypes import BOOL
from xlac.numpy.ufuncs.machinery import ufunc
from xlac.numpy.ufuncs.operands import _to_bool
from xlac.numpy.ufuncs.python_ints import comparison_with_out_of_range
from xlac.trace import ops

__all__ = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "logical_xor", "logical_not", "isfinite", "isnan", "isinf", "isnat"]


def _comparison(name: str, direction: str):
    def fn(x1, x2):
        by_value = comparison_with_out_of_range(direction, x1, x2)
        if by_value is not None:
            return by_value
        a, b = promote(name, x1, x2)
        return ops.compare(a, b, direction)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` after promotion, a bool array.\n\n"
                  f">>> np.asarray(xnp.{name}(np.array([1, 2, 3]), 2)).dtype\ndtype('bool')")
    return ufunc(fn)


equal = _comparison("equal", "EQ")
not_equal = _comparison("not_equal", "NE")
less = _comparison("less", "LT")
less_equal = _comparison("less_equal", "LE")
greater = _comparison("greater", "GT")
greater_equal = _comparison("greater_equal", "GE")


def _logical(name: str, apply):
    def fn(x1, x2):
        a, b = _to_bool(x1), _to_bool(x2)
        shape = ops.broadcast_shapes(a.shape, b.shape, op=name)
        return apply(ops.broadcast_to(a, shape), ops.broadcast_to(b, shape))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of truth values.\n\n>>> np.asarray(xnp.{name}(np.array([1, 0]), True)).dtype\ndtype('bool')"
    return ufunc(fn)


logical_and = _logical("logical_and", ops.and_)
logical_or = _logical("logical_or", ops.or_)
logical_xor = _logical("logical_xor", ops.xor)


@ufunc
def logical_not(x):
    """Elementwise ``not x``.

    >>> np.asarray(xnp.logical_not(np.array([0, 2])))
    array([ True, False])
    """
    return ops.not_(_to_bool(x))


@ufunc
def isfinite(x):
    """True where ``x`` is neither infinite nor NaN.

    >>> np.asarray(xnp.isfinite(np.array([1.0, np.inf, np.nan])))
    array([ True, False, False])
    """
    a = asarray(x)
    if not dtypes.is_float(a.dtype):
        return ops.full(a.shape, True, BOOL)
    return ops.is_finite(a)


@ufunc
def isnan(x):
    """True where ``x`` is NaN.

    >>> np.asarray(xnp.isnan(np.array([1.0, np.nan])))
    array([False,  True])
    """
    a = asarray(x)
    if not dtypes.is_inexact(a.dtype):
        return ops.full(a.shape, False, BOOL)
    return ops.compare(a, a, "NE")


@ufunc
def isinf(x):
    """True where ``x`` is +inf or -inf.

    >>> np.asarray(xnp.isinf(np.array([1.0, -np.inf])))
    array([False,  True])
    """
    a = asarray(x)
    if not dtypes.is_float(a.dtype):
        return ops.full(a.shape, False, BOOL)
    return ops.compare(ops.abs(a), ops.full(a.shape, np.inf, a.dtype), "EQ")


@ufunc
def isnat(x):
    """NumPy's test for NaT (not a time); xlac has no datetime dtypes, and NumPy refuses every other dtype.

    >>> xnp.isnat(np.ones(1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64...
    """
    raise TypeError(located("ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64 "
                            "(xlac has no datetime dtypes)"))
