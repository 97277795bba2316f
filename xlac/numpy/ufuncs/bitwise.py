"""Bitwise and integer ufuncs: and, or, xor, shifts, invert, gcd, lcm and bitwise_count.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.gcd(np.array([12, 18]), 8))
array([4, 2])
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, promote
from xlac.ir.dtypes import BOOL
from xlac.numpy.ufuncs.machinery import ufunc
from xlac.numpy.ufuncs.operands import _unsupported
from xlac.trace import ops

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert", "bitwise_not", "gcd",
           "lcm", "bitwise_count", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"]


def _bitwise(name: str, apply):
    def fn(x1, x2):
        a, b = promote(name, x1, x2)
        if not (dtypes.is_int(a.dtype) or a.dtype == BOOL):
            raise TypeError(located(f"{name} is only defined for integers and booleans, got {a.dtype}"))
        return apply(a, b)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` of integers or booleans.\n\n"
                  f">>> np.asarray(xnp.{name}(np.array([6]), 3)).dtype\ndtype('int64')")
    return ufunc(fn)


bitwise_and = _bitwise("bitwise_and", ops.and_)
bitwise_or = _bitwise("bitwise_or", ops.or_)
bitwise_xor = _bitwise("bitwise_xor", ops.xor)


@ufunc
def left_shift(x1, x2):
    """``x1 << x2`` for integers.

    >>> np.asarray(xnp.left_shift(np.array([1]), 3))
    array([8])
    """
    a, b = promote("left_shift", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if not dtypes.is_int(a.dtype):
        raise TypeError(located(f"left_shift is only defined for integers, got {a.dtype}"))
    return ops.shift_left(a, b)


@ufunc
def right_shift(x1, x2):
    """``x1 >> x2``: arithmetic for signed integers, logical for unsigned.

    >>> np.asarray(xnp.right_shift(np.array([-8]), 1))
    array([-4])
    """
    a, b = promote("right_shift", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if not dtypes.is_int(a.dtype):
        raise TypeError(located(f"right_shift is only defined for integers, got {a.dtype}"))
    shift = ops.shift_right_arithmetic if dtypes.is_signed_int(a.dtype) else ops.shift_right_logical
    return shift(a, b)


@ufunc
def invert(x):
    """``~x``: bitwise not of integers, logical not of booleans.

    >>> np.asarray(xnp.invert(np.array([True, False])))
    array([False,  True])
    """
    a = asarray(x)
    if not (dtypes.is_int(a.dtype) or a.dtype == BOOL):
        raise TypeError(located(f"invert is only defined for integers and booleans, got {a.dtype}"))
    return ops.not_(a)


bitwise_not = invert


def _integers(name: str, x1, x2):
    a, b = promote(name, x1, x2)
    if not dtypes.is_int(a.dtype):
        raise _unsupported(name, a.dtype, b.dtype)
    return a, b


def _magnitude(a):
    """``|a|`` as the unsigned integer of ``a``'s width, so that ``|INT_MIN|`` is exact."""
    if dtypes.is_unsigned_int(a.dtype):
        return a
    bits = ops.bitcast_convert(a, np.dtype(f"uint{a.dtype.itemsize * 8}"))
    return ops.select(ops.compare(a, ops.full_like(a, 0), "LT"), ops.sub(ops.full_like(bits, 0), bits), bits)


def _trailing_zeros(x, zero, one):
    """Trailing zero bits of unsigned ``x``; its width for 0."""
    lowest = ops.and_(x, ops.sub(zero, x))
    return ops.popcnt(ops.sub(lowest, one))


def _gcd_unsigned(u, v):
    """Stein's binary GCD, unrolled: with both odd, each step replaces the larger by its difference with the
    smaller, stripped of factors of 2, which shortens it by a bit; 2 * width steps always finish."""
    zero, one = ops.full_like(u, 0), ops.full_like(u, 1)
    common = _trailing_zeros(ops.or_(u, v), zero, one)
    a = ops.shift_right_logical(u, _trailing_zeros(u, zero, one))
    b = ops.shift_right_logical(v, _trailing_zeros(v, zero, one))
    for _ in range(2 * u.dtype.itemsize * 8):
        done = ops.compare(b, zero, "EQ")
        low, high = ops.min(a, b), ops.max(a, b)
        difference = ops.sub(high, low)
        a = ops.select(done, a, low)
        b = ops.select(done, b, ops.shift_right_logical(difference, _trailing_zeros(difference, zero, one)))
    g = ops.shift_left(a, common)
    return ops.select(ops.compare(u, zero, "EQ"), v, ops.select(ops.compare(v, zero, "EQ"), u, g))


@ufunc
def gcd(x1, x2):
    """Greatest common divisor of ``|x1|`` and ``|x2|``; as in NumPy, ``gcd(INT_MIN, 0)`` wraps to INT_MIN.

    >>> np.asarray(xnp.gcd(np.array([12, -18, 0]), 8))
    array([4, 2, 8])
    """
    a, b = _integers("gcd", x1, x2)
    return ops.bitcast_convert(_gcd_unsigned(_magnitude(a), _magnitude(b)), a.dtype)


@ufunc
def lcm(x1, x2):
    """Least common multiple of ``|x1|`` and ``|x2|`` (0 if either is 0); overflow wraps, as in NumPy.

    >>> np.asarray(xnp.lcm(np.array([4, -6, 0]), 6))
    array([12,  6,  0])
    """
    a, b = _integers("lcm", x1, x2)
    u, v = _magnitude(a), _magnitude(b)
    g = _gcd_unsigned(u, v)
    zero = ops.compare(g, ops.full_like(g, 0), "EQ")
    multiple = ops.mul(ops.div(u, ops.select(zero, ops.full_like(g, 1), g)), v)
    return ops.bitcast_convert(ops.select(zero, g, multiple), a.dtype)


@ufunc(cast_inputs=0)
def bitwise_count(x):
    """The number of 1 bits in ``|x|``, as uint8.

    >>> np.asarray(xnp.bitwise_count(np.array([7, -1, 256])))
    array([3, 1, 1], dtype=uint8)
    """
    a = asarray(x)
    if a.dtype == BOOL:
        return ops.convert(a, np.uint8)
    if not dtypes.is_int(a.dtype):
        raise _unsupported("bitwise_count", a.dtype)
    return ops.convert(ops.popcnt(_magnitude(a)), np.uint8)


bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift
