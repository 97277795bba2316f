"""Arithmetic ufuncs: add, subtract, multiply, the divisions and remainders, powers, signs, extrema.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.add(np.array([1, 2], np.int8), 3))
array([4, 5], dtype=int8)
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located, user_location
from xlac.ir import dtypes
from xlac.numpy._core import asarray, promote
from xlac.ir.dtypes import BOOL
from xlac.numpy.ufuncs.float_bits import _copysign, _is_zero
from xlac.numpy.ufuncs.machinery import ufunc
from xlac.trace import ops
from xlac.trace.checks import Check
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
           "power", "negative", "positive", "absolute", "abs", "sign", "maximum", "minimum", "fmax", "fmin",
           "square", "reciprocal", "float_power", "divmod", "pow"]


def _no_bool(op: str, x, hint: str):
    if x.dtype == BOOL:
        raise TypeError(located(f"numpy boolean {op} is not supported, {hint}"))


@ufunc
def add(x1, x2):
    """``x1 + x2``; bool + bool is logical or, as in NumPy.

    >>> np.asarray(xnp.add(np.ones(2, np.float32), 1.5))
    array([2.5, 2.5], dtype=float32)
    """
    a, b = promote("add", x1, x2)
    return ops.or_(a, b) if a.dtype == BOOL else ops.add(a, b)


@ufunc
def subtract(x1, x2):
    """``x1 - x2``; NumPy refuses it on two booleans.

    >>> np.asarray(xnp.subtract(np.array([3, 4]), 1))
    array([2, 3])
    """
    a, b = promote("subtract", x1, x2)
    _no_bool("subtract, the `-` operator,", a, "use the bitwise_xor, the `^` operator, or the logical_xor function instead.")
    return ops.sub(a, b)


@ufunc
def multiply(x1, x2):
    """``x1 * x2``; bool * bool is logical and.

    >>> np.asarray(xnp.multiply(np.array([3, 4]), 2))
    array([6, 8])
    """
    a, b = promote("multiply", x1, x2)
    return ops.and_(a, b) if a.dtype == BOOL else ops.mul(a, b)


@ufunc
def divide(x1, x2):
    """True division ``x1 / x2``: integers and booleans divide in float64, as in NumPy.

    >>> np.asarray(xnp.divide(np.array([1, 2]), 2))
    array([0.5, 1. ])
    """
    dtype = dtypes.result_type(x1, x2)
    if not dtypes.is_inexact(dtype):
        dtype = np.dtype("float64")
    a, b = promote("divide", x1, x2, dtype=dtype)
    return ops.div(a, b)


true_divide = divide


def _int_floor_div(a, b):
    """Floor division of integers; NumPy gives 0 where b == 0."""
    zero = ops.full(a.shape, 0, a.dtype)
    safe_b = ops.select(ops.compare(b, zero, "EQ"), ops.full(a.shape, 1, a.dtype), b)
    q = ops.div(a, safe_b)
    if dtypes.is_signed_int(a.dtype):
        r = ops.rem(a, safe_b)
        signs_differ = ops.compare(ops.compare(r, zero, "LT"), ops.compare(safe_b, zero, "LT"), "NE")
        adjust = ops.and_(ops.compare(r, zero, "NE"), signs_differ)
        q = ops.select(adjust, ops.sub(q, ops.full(a.shape, 1, a.dtype)), q)
    return ops.select(ops.compare(b, zero, "EQ"), zero, q)


@ufunc
def floor_divide(x1, x2):
    """``x1 // x2`` rounded toward minus infinity, as NumPy and Python do.

    >>> np.asarray(xnp.floor_divide(np.array([-7, 7]), 2))
    array([-4,  3])
    """
    a, b = promote("floor_divide", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if dtypes.is_int(a.dtype):
        return _int_floor_div(a, b)
    _no_complex("floor_divide", a)
    return _float_floor_div(a, b)


def _float_floor_div(a, b):
    """NumPy's npy_floor_divide: from fmod, rounded so that the quotient is exact; a / 0 is a / b."""
    zero, one = ops.full(a.shape, 0, a.dtype), ops.full(a.shape, 1, a.dtype)
    mod = ops.rem(a, b)
    div = ops.div(ops.sub(a, mod), b)
    signs_differ = ops.compare(ops.compare(mod, zero, "LT"), ops.compare(b, zero, "LT"), "NE")
    adjust = ops.and_(ops.compare(mod, zero, "NE"), signs_differ)
    div = ops.select(adjust, ops.sub(div, one), div)
    floor = ops.floor(div)
    round_up = ops.compare(ops.sub(div, floor), ops.full(a.shape, 0.5, a.dtype), "GT")
    floor = ops.select(round_up, ops.add(floor, one), floor)
    true_quotient = ops.div(a, b)
    floor = ops.select(ops.compare(div, zero, "EQ"), ops.mul(zero, true_quotient), floor)
    return ops.select(ops.compare(b, zero, "EQ"), true_quotient, floor)


def _no_complex(op, a):
    if np.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(located(f"{op} is not defined for complex numbers"))


def _python_mod(a, b):
    """Python's and NumPy's modulo: the result, zero included, takes the sign of the divisor."""
    zero = ops.full(a.shape, 0, a.dtype)
    if dtypes.is_int(a.dtype):
        safe_b = ops.select(ops.compare(b, zero, "EQ"), ops.full(a.shape, 1, a.dtype), b)
        r = ops.rem(a, safe_b)
    else:
        r = ops.rem(a, b)
    if not dtypes.is_unsigned_int(a.dtype):
        signs_differ = ops.compare(ops.compare(r, zero, "LT"), ops.compare(b, zero, "LT"), "NE")
        adjust = ops.and_(ops.compare(r, zero, "NE"), signs_differ)
        r = ops.select(adjust, ops.add(r, b), r)
    if dtypes.is_int(a.dtype):
        return ops.select(ops.compare(b, zero, "EQ"), zero, r)
    return ops.select(_is_zero(r), _copysign(zero, b), r)     # a zero remainder has the divisor's sign


@ufunc
def remainder(x1, x2):
    """``x1 % x2`` with the sign of ``x2`` (NumPy's ``mod``); integer modulo by zero gives 0.

    >>> np.asarray(xnp.remainder(np.array([-7, 7]), 3))
    array([2, 1])
    """
    a, b = promote("remainder", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    _no_complex("remainder", a)
    return _python_mod(a, b)


mod = remainder


@ufunc
def fmod(x1, x2):
    """C's fmod: the remainder takes the sign of ``x1``.

    >>> np.asarray(xnp.fmod(np.array([-7.0, 7.0]), 3.0))
    array([-1.,  1.])
    """
    a, b = promote("fmod", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    _no_complex("fmod", a)
    if dtypes.is_int(a.dtype):
        zero = ops.full(a.shape, 0, a.dtype)
        is_zero = ops.compare(b, zero, "EQ")
        r = ops.rem(a, ops.select(is_zero, ops.full(a.shape, 1, a.dtype), b))
        return ops.select(is_zero, zero, r)
    return ops.rem(a, b)


@ufunc
def power(x1, x2):
    """``x1 ** x2``. NumPy refuses negative integer powers of integers: a constant exponent raises
    ValueError at once, a traced one after the call (see :mod:`xlac.trace.checks`).

    >>> np.asarray(xnp.power(np.array([2, 3]), 2))
    array([4, 9])
    """
    if dtypes.is_int(dtypes.result_type(x1, x2)) and _has_negative_constant(x2):
        raise ValueError(located("Integers to negative integer powers are not allowed."))
    a, b = promote("power", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if dtypes.is_signed_int(b.dtype) and isinstance(x2, Tracer) and current_trace().checks.enabled:
        negative = ops.compare(b, ops.full_like(b, 0), "LT")
        current_trace().checks.require(ops.not_(ops.reduce(negative, "or", tuple(range(b.ndim)))),
                                       ops.constant(0, np.int64),
                                       Check(ValueError, "Integers to negative integer powers are not allowed.",
                                             user_location()))
    if _is_constant_half(x2) and a.dtype.kind == "f":
        return ops.sqrt(a)      # as NumPy's: XLA would fold pow(x, 0.5) to a sqrt that gives (-inf) ** 0.5 = inf
    return ops.pow(a, b)


def _is_constant_half(x) -> bool:
    return not isinstance(x, Tracer) and np.ndim(x) == 0 and np.asarray(x).dtype.kind in "fc" and x == 0.5


def _has_negative_constant(x) -> bool:
    if isinstance(x, Tracer):
        return False
    arr = np.asarray(x)
    return arr.dtype.kind in "iu" and bool((arr < 0).any())


@ufunc
def negative(x):
    """``-x``; NumPy refuses it on booleans.

    >>> np.asarray(xnp.negative(np.array([1, -2])))
    array([-1,  2])
    """
    a = asarray(x)
    _no_bool("negative, the `-` operator,", a, "use the `~` operator or the logical_not function instead.")
    return ops.neg(a)


@ufunc
def positive(x):
    """``+x``: a copy of ``x``.

    >>> np.asarray(xnp.positive(np.array([1, -2])))
    array([ 1, -2])
    """
    a = asarray(x)
    _no_bool("positive", a, "")
    return a


@ufunc
def absolute(x):
    """``|x|``; the magnitude of complex numbers as a real dtype.

    >>> np.asarray(xnp.absolute(np.array([-1.5, 2.0])))
    array([1.5, 2. ])
    """
    a = asarray(x)
    if a.dtype == BOOL or dtypes.is_unsigned_int(a.dtype):
        return a
    return ops.abs(a)


abs = absolute


@ufunc
def sign(x):
    """-1, 0 or 1 by the sign of ``x`` (NaN for NaN).

    >>> np.asarray(xnp.sign(np.array([-3, 0, 2])))
    array([-1,  0,  1])
    """
    a = asarray(x)
    _no_bool("sign", a, "")
    if dtypes.is_unsigned_int(a.dtype):
        zero = ops.full(a.shape, 0, a.dtype)
        return ops.convert(ops.compare(a, zero, "NE"), a.dtype)
    if a.dtype.kind == "c":
        return _complex_sign(a)
    if a.dtype.kind == "f":     # XLA's sign keeps -0's sign bit; NumPy and the standard give +0
        return ops.select(_is_zero(a), ops.full_like(a, 0), ops.sign(a))
    return ops.sign(a)


def _complex_sign(z):
    """``z / |z|`` as the standard gives it: ``0+0j`` for any signed zero, ``nan+nanj`` when a part is NaN
    (NumPy 2.4 gives ``1+0j`` for ``inf+nanj``) or both are infinite (``inf/inf``), and with one infinite part
    its direction (``sign(inf - 2j) = 1 + 0j``, as NumPy)."""
    re, im = ops.real(z), ops.imag(z)
    zero, one = ops.full_like(re, 0), ops.full_like(re, 1)

    def infinite(part):
        return ops.compare(ops.abs(part), ops.full_like(part, np.inf), "EQ")

    def unit(part):     # an infinite part counts as ±1, a finite one as +0 beside it
        return ops.select(infinite(part), _copysign(one, part), zero)

    has_infinity = ops.or_(infinite(re), infinite(im))
    result = ops.sign(ops.select(has_infinity, ops.complex(unit(re), unit(im)), z))
    result = ops.select(ops.and_(_is_zero(re), _is_zero(im)), ops.complex(zero, zero), result)
    nan = ops.full_like(re, np.nan)
    undefined = ops.or_(ops.or_(ops.compare(re, re, "NE"), ops.compare(im, im, "NE")),
                        ops.and_(infinite(re), infinite(im)))
    return ops.select(undefined, ops.complex(nan, nan), result)


def _minmax(name: str, larger: bool, x1, x2, propagate_nan: bool):
    a, b = promote(name, x1, x2)
    if a.dtype == BOOL:
        return ops.or_(a, b) if larger else ops.and_(a, b)
    if a.dtype.kind == "c":
        return _complex_minmax(a, b, larger, propagate_nan)
    out = ops.max(a, b) if larger else ops.min(a, b)
    if dtypes.is_inexact(a.dtype) and not propagate_nan:
        # fmax/fmin: a NaN loses to a number.
        a_nan, b_nan = ops.compare(a, a, "NE"), ops.compare(b, b, "NE")
        out = ops.select(a_nan, b, ops.select(b_nan, a, out))
    return out


def _complex_minmax(a, b, larger: bool, propagate_nan: bool):
    """NumPy orders complex numbers lexicographically: by real part, then by imaginary part. A value with
    a NaN part is NaN: it wins for maximum/minimum and loses for fmax/fmin."""
    ar, ai, br, bi = ops.real(a), ops.imag(a), ops.real(b), ops.imag(b)
    strictly, or_equal = ("GT", "GE") if larger else ("LT", "LE")
    a_wins = ops.or_(ops.compare(ar, br, strictly),
                     ops.and_(ops.compare(ar, br, "EQ"), ops.compare(ai, bi, or_equal)))
    out = ops.select(a_wins, a, b)
    a_nan = ops.or_(ops.compare(ar, ar, "NE"), ops.compare(ai, ai, "NE"))
    b_nan = ops.or_(ops.compare(br, br, "NE"), ops.compare(bi, bi, "NE"))
    if propagate_nan:
        return ops.select(a_nan, a, ops.select(b_nan, b, out))
    return ops.select(a_nan, b, ops.select(b_nan, a, out))


@ufunc
def maximum(x1, x2):
    """Elementwise maximum; a NaN in either operand gives NaN.

    >>> np.asarray(xnp.maximum(np.array([1, 5]), 3))
    array([3, 5])
    """
    return _minmax("maximum", True, x1, x2, True)


@ufunc
def minimum(x1, x2):
    """Elementwise minimum; a NaN in either operand gives NaN.

    >>> np.asarray(xnp.minimum(np.array([1, 5]), 3))
    array([1, 3])
    """
    return _minmax("minimum", False, x1, x2, True)


@ufunc
def fmax(x1, x2):
    """Elementwise maximum that ignores NaNs.

    >>> np.asarray(xnp.fmax(np.array([np.nan, 1.0]), 0.0))
    array([0., 1.])
    """
    return _minmax("fmax", True, x1, x2, False)


@ufunc
def fmin(x1, x2):
    """Elementwise minimum that ignores NaNs.

    >>> np.asarray(xnp.fmin(np.array([np.nan, 1.0]), 0.0))
    array([0., 0.])
    """
    return _minmax("fmin", False, x1, x2, False)


@ufunc
def square(x):
    """``x * x``.

    >>> np.asarray(xnp.square(np.array([3])))
    array([9])
    """
    a = asarray(x)
    if a.dtype == BOOL:
        a = ops.convert(a, np.int8)
    return ops.mul(a, a)


@ufunc
def reciprocal(x):
    """``1 / x`` in ``x``'s dtype (integer reciprocals truncate, as in NumPy).

    Deviation: the integer reciprocal of 0 is -1 (XLA's integer ``x / 0``); NumPy's is C's undefined
    conversion of ``1.0 / 0`` to an integer, which depends on the platform (on x86-64 the dtype's minimum
    for int32 and int64, 0 for int8 and int16).

    >>> np.asarray(xnp.reciprocal(np.array([2.0, 4.0])))
    array([0.5 , 0.25])
    """
    a = asarray(x)
    if a.dtype == BOOL:
        a = ops.convert(a, np.int8)
    if a.dtype.kind == "c":
        return _complex_reciprocal(a)
    return ops.div(ops.full(a.shape, 1, a.dtype), a)


def _complex_reciprocal(a):
    """NumPy's formula, which scales by the larger part but, unlike division, has no case for 0:
    ``reciprocal(0j)`` is nan+nanj."""
    re, im = ops.real(a), ops.imag(a)
    by_real = ops.compare(ops.abs(im), ops.abs(re), "LE")
    small, large = ops.select(by_real, im, re), ops.select(by_real, re, im)
    ratio = ops.div(small, large)
    denominator = ops.add(large, ops.mul(small, ratio))
    one_over = ops.div(ops.full_like(re, 1), denominator)
    ratio_over = ops.mul(ratio, one_over)     # not ratio / denominator: XLA rewrites (a / b) / c as a / (b * c)
    return ops.complex(ops.select(by_real, one_over, ratio_over),
                       ops.neg(ops.select(by_real, ratio_over, one_over)))


@ufunc
def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 (complex128 for complex operands), whatever the operand dtypes.

    >>> np.asarray(xnp.float_power(np.array([2], np.int8), -1))
    array([0.5])
    """
    target = np.dtype("complex128" if dtypes.result_type(x1, x2).kind == "c" else "float64")
    return ops.pow(*promote("float_power", x1, x2, dtype=target))


@ufunc(nout=2)
def divmod(x1, x2):
    """``(x1 // x2, x1 % x2)``, as ``floor_divide`` and ``remainder`` give them.

    >>> [np.asarray(p) for p in xnp.divmod(np.array([7, -7]), 2)]
    [array([ 3, -4]), array([1, 1])]
    """
    a, b = promote("divmod", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    _no_complex("divmod", a)
    quotient = _int_floor_div(a, b) if dtypes.is_int(a.dtype) else _float_floor_div(a, b)
    return quotient, _python_mod(a, b)


pow = power
