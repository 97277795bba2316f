"""Python's scalar functions on traced scalars: ``float(x)``, ``int(x)``, ``complex(x)``, ``round(x[, n])``
and the functions of ``math`` that NumPy has, with Python's semantics on the value the program computes
(and NumPy's scalar types, ``np.float32(x)``, which convert as ``x.astype`` does).

What they return is a Python number, a weak value (NEP 50): ``float(x)`` and ``math.sqrt(x)`` a weak
float64 (``float(x) + np.float32(1)`` is float32, as in NumPy), ``int(x)``, ``math.floor(x)`` and ``round(x)``
a weak int64, ``math.isnan(x)`` a bool. ``math``'s functions compute in float64, as Python converts their
arguments to ``float`` first. Where Python raises on a value (``math.sqrt(-1.0)``, ``math.exp(1000.0)``,
``int(nan)``), the program computes on and the call raises Python's own error after it, with the user's
line (:func:`xlac.trace.checks.require_python_accepts`). Python's ints are unbounded, xlac's int64: an
``int()`` past int64 raises OverflowError after the call. ``round(x, n)`` follows the number it is given:
a weak value (a Python float) rounds as Python's ``round`` does, to the nearest decimal exactly; a NumPy
scalar as NumPy's (``np.round``, its dtype kept).

>>> import math, numpy as np, xlac
>>> f = xlac.compile(lambda x: (math.sqrt(x[0]), math.floor(x[1]), round(float(x[2]), 2)))
>>> [float(v) for v in f(np.array([2.0, -1.5, 2.675]))]
[1.4142135623730951, -2.0, 2.67]
>>> xlac.compile(lambda x: math.log(x[0]))(np.zeros(1))
Traceback (most recent call last):
ValueError: math domain error
  at <doctest ...>:1 (in <lambda>)
"""
from __future__ import annotations

import builtins
import math
import warnings
from functools import partial

import numpy as np

from xlac.ir.dtypes import COMPLEX128, FLOAT64, INT64
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import ufuncs
from xlac.numpy._core import asarray
from xlac.numpy.manipulation import elementwise
from xlac.trace import ops
from xlac.trace.checks import require_python_accepts
from xlac.trace.tracer import Tracer

__all__ = ["python_scalar_function"]


def python_scalar_function(fn):
    """What a converted call runs for the Python scalar function ``fn`` (``float``, ``math.sqrt``, ...) given
    traced arguments, or None when ``fn`` is none of them.

    >>> python_scalar_function(math.sqrt).__name__, python_scalar_function(print)
    ('sqrt', None)
    """
    try:
        replacement = _FUNCTIONS.get(fn)
    except TypeError:                   # an unhashable callable
        return None
    if replacement is None and getattr(fn, "__module__", None) == "math" and getattr(math, fn.__name__, None) is fn:
        return partial(_unsupported, fn.__name__)
    return replacement


def _unsupported(name: str, *args, **kwargs):
    raise UnsupportedError(located(f"math.{name}() of a traced value: xlac computes math's functions that NumPy "
                                   "has (sqrt, exp, log, sin, floor, isnan, ...; not gamma, erf, factorial, fsum, "
                                   "...). Compute it from those, or pass the value as a static argument"))


# ---------------------------------------------------------------- conversions


def _zero_d(x, what: str) -> Tracer:
    x = asarray(x)
    if x.ndim != 0:
        raise TypeError(located(f"{what} of a traced array of shape {x.shape}: only 0-dimensional arrays can be "
                                "converted to Python scalars"))
    return x


def _scalar(x, what: str) -> Tracer:
    """``x`` as a 0-d real value; a complex one loses its imaginary part with NumPy's ComplexWarning."""
    x = _zero_d(x, what)
    if x.dtype.kind == "c":
        warnings.warn(located(f"{what}: casting complex values to real discards the imaginary part"),
                      np.exceptions.ComplexWarning, stacklevel=3)
        return ops.real(x)
    return x


def _python_float(x, what: str = "float()") -> Tracer:
    return ops.convert(_scalar(x, what), FLOAT64, weak=True)


def _float(x=0.0):
    """``float(x)``: a weak float64."""
    return _python_float(x)


def _complex(real=0.0, imag=None):
    """``complex(real, imag)``: a weak complex128."""
    if imag is None:
        return ops.convert(_zero_d(real, "complex()"), COMPLEX128, weak=True)
    re, im = (ops.convert(asarray(_complex(v)), COMPLEX128) for v in (real, imag))
    # complex(a, b) is a + b*1j, each part of b's product with 1j taken as Python takes it
    result = ops.complex(ops.sub(ops.real(re), ops.imag(im)), ops.add(ops.imag(re), ops.real(im)))
    return ops.convert(result, COMPLEX128, weak=True)


_INT64_END = 2.0 ** 63


def _within_int64(python_function, x: float):
    """Python's ``python_function(x)`` (its error for nan or inf), or, for one past int64, xlac's."""
    value = python_function(x)
    raise OverflowError(f"{python_function.__name__}({x!r}) is {value}, past the int64 range of xlac's traced "
                        "integers")


def _python_int(x, rounding, python_function) -> Tracer:
    """``python_function(x)`` (``int``, ``math.floor``, ``round``, ...) as a weak int64: ``rounding`` to a whole
    number in float64, then an after-call check for nan, infinity and values past int64."""
    x = _scalar(x, f"{python_function.__name__}()")
    if x.dtype.kind in "biu":
        if x.dtype == np.dtype("uint64"):
            past = ops.compare(x, ops.full_like(x, 2 ** 63), "GE")
            require_python_accepts(partial(_within_int64, python_function), ops.convert(x, FLOAT64), past)
        return ops.convert(x, INT64, weak=True)
    whole = rounding(ops.convert(x, FLOAT64))
    inside = ops.and_(ops.compare(whole, ops.full_like(whole, -_INT64_END), "GE"),
                      ops.compare(whole, ops.full_like(whole, _INT64_END), "LT"))     # false for nan
    require_python_accepts(partial(_within_int64, python_function), ops.convert(x, FLOAT64), ops.not_(inside))
    return ops.convert(ops.select(inside, whole, ops.full_like(whole, 0)), INT64, weak=True)


def _int(x=0):
    """``int(x)``: truncated toward zero, a weak int64."""
    return _python_int(x, ufuncs.trunc, builtins.int)


# ---------------------------------------------------------------- round


def _round(x, ndigits=None):
    """``round(x)``: half to even, a weak int64. ``round(x, n)``: Python's for a weak value, NumPy's
    (``np.round``, the dtype kept) for a NumPy scalar."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(located(f"type {'complex' if x.weak else 'numpy.' + x.dtype.name} doesn't define "
                                "__round__ method"))
    if x.ndim != 0:
        raise TypeError(located(f"type numpy.ndarray doesn't define __round__ method (round() of a {x.ndim}-d "
                                "array)"))
    if ndigits is None:
        return _python_int(x, ufuncs.rint, builtins.round)
    if isinstance(ndigits, Tracer):
        raise UnsupportedError(located("round(x, ndigits) with a traced ndigits: give a Python int"))
    ndigits = builtins.int(ndigits.__index__())
    if not x.weak:
        return elementwise.round(x, ndigits)
    if x.dtype.kind in "biu":
        return _round_python_int(ops.convert(x, INT64, weak=True), ndigits)
    return _round_python_float(ops.convert(x, FLOAT64), ndigits)


def _round_python_int(x: Tracer, ndigits: int) -> Tracer:
    """Python's ``round(int, ndigits)``: to a multiple of ``10**-ndigits``, halves to even."""
    if ndigits >= 0:
        return x
    if -ndigits > 18:                        # 10**19 is past every int64: they all round to 0
        return ops.convert(ops.full_like(x, 0), INT64, weak=True)
    scale = ops.full_like(x, 10 ** -ndigits)
    quotient = ufuncs.floor_divide(x, scale)
    twice_rest = ops.mul(ops.sub(x, ops.mul(quotient, scale)), ops.full_like(x, 2))
    odd = ops.compare(ops.rem(quotient, ops.full_like(x, 2)), ops.full_like(x, 0), "NE")
    up = ops.or_(ops.compare(twice_rest, scale, "GT"), ops.and_(ops.compare(twice_rest, scale, "EQ"), odd))
    quotient = ops.select(up, ops.add(quotient, ops.full_like(x, 1)), quotient)
    limit = ops.full_like(x, (2 ** 63 - 1) // 10 ** -ndigits)
    past = ops.or_(ops.compare(quotient, limit, "GT"), ops.compare(quotient, ops.neg(limit), "LT"))
    require_python_accepts(partial(_past_int64, f"round(x, {ndigits})"), ops.convert(x, FLOAT64), past)
    return ops.convert(ops.mul(quotient, scale), INT64, weak=True)


def _past_int64(what: str, x: float):
    raise OverflowError(f"{what} of {builtins.int(x)} is past the int64 range of xlac's traced integers")


_MANTISSA_BITS = 52
_LIMB = 2 ** 26


def _round_python_float(x: Tracer, ndigits: int) -> Tracer:
    """Python's ``round(float, ndigits)``: the float nearest to ``x`` rounded to ``ndigits`` decimals, halves
    to even, ``x`` taken exactly. ``x * 10**n`` (or ``x / 10**-n``) is rounded to a whole number; where that
    product rounded onto a half (or, past 2**52, between two whole numbers), the side of the exact product
    decides, found in exact integer arithmetic on the significands (:func:`_exact_side`)."""
    if builtins.abs(ndigits) > 22:
        raise UnsupportedError(located(f"round(x, {ndigits}) of a traced float: xlac rounds to at most 22 digits "
                                       "either side of the point (10**22 is the largest power of ten a float "
                                       "holds exactly)"))
    half, zero, one = ops.full_like(x, 0.5), ops.full_like(x, 0.0), ops.full_like(x, 1.0)
    # XLA divides by a constant as a product with its (rounded) reciprocal, and fuses a product into the
    # addition after it (an FMA): the divisor is made no constant, and the product meets no addition
    scale = ops.select(_isnan(x), one, ops.full_like(x, 10.0 ** builtins.abs(ndigits)))
    scaled = ops.mul(x, scale) if ndigits >= 0 else ops.div(x, scale)
    nearest = ops.round(scaled)
    side = _exact_side(x, scaled, 5 ** builtins.abs(ndigits), ndigits)   # sign of the exact product - scaled
    above, below = ops.compare(side, zero, "GT"), ops.compare(side, zero, "LT")
    step = ops.select(ops.and_(ops.compare(scaled, ops.add(nearest, half), "EQ"), above), one, zero)
    step = ops.select(ops.and_(ops.compare(scaled, ops.sub(nearest, half), "EQ"), below), ops.neg(one), step)
    if ndigits > 0:                          # past 2**52 the product is whole and its true value may lie on a half
        on_half = ops.compare(ops.abs(side), half, "EQ")
        odd = ops.compare(ops.rem(nearest, ops.full_like(x, 2.0)), zero, "NE")
        step = ops.select(ops.and_(on_half, odd), ops.select(above, one, ops.neg(one)), step)
    whole = ops.select(ops.compare(step, zero, "NE"), ops.add(nearest, step), nearest)
    rounded = ops.div(whole, scale) if ndigits >= 0 else ops.mul(whole, scale)
    exact_enough = ops.compare(ops.abs(scaled), ops.full_like(x, 2.0 ** 53), "LE")   # false for inf and nan
    result = ops.select(exact_enough, ufuncs.copysign(rounded, x), x)
    return ops.convert(result, FLOAT64, weak=True)


def _parts(x: Tracer):
    """A positive normal float64 ``|x|`` as (significand, exponent): int64s with ``|x| = m * 2**e``."""
    bits = ops.bitcast_convert(ops.abs(x), INT64)
    significand = ops.or_(ops.and_(bits, ops.full_like(bits, 2 ** _MANTISSA_BITS - 1)),
                          ops.full_like(bits, 2 ** _MANTISSA_BITS))
    exponent = ops.sub(ops.shift_right_logical(bits, ops.full_like(bits, _MANTISSA_BITS)),
                       ops.full_like(bits, 1075))
    return significand, exponent


def _product_limbs(significand: Tracer, factor: int):
    """``significand * factor`` (< 2**53 each) exactly, as (high, low) with ``high * 2**52 + low``."""
    def const(v):
        return ops.full_like(significand, v)
    a1, a0 = ops.shift_right_logical(significand, const(26)), ops.and_(significand, const(_LIMB - 1))
    b1, b0 = divmod(factor, _LIMB)
    middle = ops.add(ops.mul(a1, const(b0)), ops.mul(a0, const(b1)))
    low = ops.add(ops.mul(a0, const(b0)), ops.shift_left(ops.and_(middle, const(_LIMB - 1)), const(26)))
    high = ops.add(ops.add(ops.mul(a1, const(b1)), ops.shift_right_logical(middle, const(26))),
                   ops.shift_right_logical(low, const(_MANTISSA_BITS)))
    return high, ops.and_(low, const(2 ** _MANTISSA_BITS - 1))


def _shifted_limbs(significand: Tracer, shift: Tracer):
    """``significand << shift`` (0 <= shift <= 53) as (high, low) with ``high * 2**52 + low``."""
    def const(v):
        return ops.full_like(significand, v)
    wide = ops.compare(shift, const(_MANTISSA_BITS), "GE")
    up = ops.select(wide, ops.sub(shift, const(_MANTISSA_BITS)), const(0))
    down = ops.select(wide, const(0), ops.sub(const(_MANTISSA_BITS), shift))
    high = ops.shift_right_logical(ops.shift_left(significand, up), down)
    kept = ops.sub(ops.shift_left(const(1), down), const(1))
    low = ops.select(wide, const(0), ops.shift_left(ops.and_(significand, kept), ops.select(wide, const(0), shift)))
    return high, low


def _exact_side(x: Tracer, scaled: Tracer, five_power: int, ndigits: int) -> Tracer:
    """``exact - scaled`` where it is decisive (its sign, and whether it is a half), for ``exact`` the real
    ``x * 10**n`` (``x / 10**-n``): zero where ``|scaled| < 1/2`` (no half in reach) or it is not finite. With ``x = m 2**e``
    and ``scaled = q 2**f``, both sides are integers times a power of two: ``m 5**n`` (multiplying) or
    ``q 5**-n`` (dividing) against the other significand shifted, each in two 52-bit limbs."""
    usable = ops.and_(ops.is_finite(scaled), ops.compare(ops.abs(scaled), ops.full_like(x, 0.5), "GE"))
    one = ops.full_like(x, 1.0)
    x_safe, scaled_safe = ops.select(usable, x, one), ops.select(usable, scaled, one)
    (mx, ex), (ms, es) = _parts(x_safe), _parts(scaled_safe)
    digits = ops.full_like(ex, builtins.abs(ndigits))
    if ndigits >= 0:        # x 10**n - scaled = (m_x 5**n - m_s 2**shift) 2**(e_x + n)
        big, small, shift, unit = mx, ms, ops.sub(es, ops.add(ex, digits)), ops.add(ex, digits)
    else:                   # x - scaled 10**k = (m_x 2**shift - m_s 5**k) 2**(e_s + k); its sign is that of x/10**k - scaled
        big, small, shift, unit = ms, mx, ops.sub(ex, ops.add(es, digits)), ops.add(es, digits)
    product_high, product_low = _product_limbs(big, five_power)
    other_high, other_low = _shifted_limbs(small, shift)
    difference = ops.add(ops.mul(ops.sub(product_high, other_high), ops.full_like(ex, 2 ** _MANTISSA_BITS)),
                         ops.sub(product_low, other_low))
    if ndigits < 0:
        difference = ops.neg(difference)
    # the difference times 2**unit, as a float: exact for the multiplication, only its sign counts for division
    as_float = ufuncs.ldexp(ops.convert(difference, FLOAT64), ops.convert(unit, np.dtype("int32")))
    if ndigits < 0:
        as_float = ops.sign(as_float)
    sign = ops.mul(ops.sign(x_safe), as_float)
    return ops.select(usable, sign, ops.full_like(x, 0.0))


# ---------------------------------------------------------------- math


def _python_error_where_result_is_bad(python_function, x: Tracer, result: Tracer) -> None:
    """CPython's rule for ``math``'s one-argument functions: a nan from a number, or an infinity from a
    finite number, is an error (a domain or range error: Python's function says which)."""
    nan_from_number = ops.and_(_isnan(result), ops.not_(_isnan(x)))
    infinite_from_finite = ops.and_(_isinf(result), ops.is_finite(x))
    require_python_accepts(python_function, x, ops.or_(nan_from_number, infinite_from_finite))


def _isnan(x):
    return ops.compare(x, x, "NE")


def _isinf(x):
    return ops.compare(ops.abs(x), ops.full_like(x, np.inf), "EQ")


def _math_unary(python_function, numpy_function, checked: bool = True):
    def run(x):
        x = _python_float(x, f"math.{python_function.__name__}()")
        result = ops.convert(numpy_function(x), FLOAT64, weak=True)
        if checked:
            _python_error_where_result_is_bad(python_function, x, result)
        return result
    run.__name__ = python_function.__name__
    run.__doc__ = f"``math.{python_function.__name__}(x)`` on a traced scalar: a weak float64."
    return run


def _raises_as(python_function, *arguments, **keywords):
    """A function of the offending value that raises what ``python_function(*arguments, **keywords)``
    raises (for a function of two arguments, whose check can carry only one of them)."""
    def reproduce(_value):
        python_function(*arguments, **keywords)
    reproduce.__name__ = python_function.__name__
    return reproduce


def _log(x, base=None):
    """``math.log(x[, base])``: ValueError for ``x <= 0`` or ``base <= 0``, ZeroDivisionError for base 1."""
    x = _python_float(x, "math.log()")
    result = ufuncs.log(x)
    _python_error_where_result_is_bad(math.log, x, result)
    if base is not None:
        base = _python_float(base, "math.log()")
        divisor = ufuncs.log(base)
        _python_error_where_result_is_bad(_raises_as(math.log, 0.0), base, divisor)
        require_python_accepts(_raises_as(math.log, 2.0, 1.0), base,
                               ops.compare(divisor, ops.full_like(divisor, 0.0), "EQ"))
        result = ops.div(result, divisor)
    return ops.convert(result, FLOAT64, weak=True)


def _pow(x, y):
    """``math.pow(x, y)``: C99's special cases; for finite x and y, a nan result is a domain error, an
    infinite one from 0 too, else a range error."""
    x, y = _python_float(x, "math.pow()"), _python_float(y, "math.pow()")
    result = ufuncs.power(x, y)
    finite = ops.and_(ops.is_finite(x), ops.is_finite(y))
    from_zero = ops.compare(x, ops.full_like(x, 0.0), "EQ")
    domain = ops.and_(finite, ops.or_(_isnan(result), ops.and_(_isinf(result), from_zero)))
    require_python_accepts(_raises_as(math.pow, -1.0, 0.5), x, domain)
    overflow = ops.and_(finite, ops.and_(_isinf(result), ops.not_(from_zero)))
    require_python_accepts(_raises_as(math.pow, 10.0, 400.0), x, overflow)
    return ops.convert(result, FLOAT64, weak=True)


def _fmod(x, y):
    """``math.fmod(x, y)``: nan from numbers (``y == 0``, infinite ``x``) is a domain error."""
    x, y = _python_float(x, "math.fmod()"), _python_float(y, "math.fmod()")
    result = ufuncs.fmod(x, y)
    bad = ops.and_(_isnan(result), ops.and_(ops.not_(_isnan(x)), ops.not_(_isnan(y))))
    require_python_accepts(_raises_as(math.fmod, 1.0, 0.0), x, bad)
    return ops.convert(result, FLOAT64, weak=True)


def _ldexp(x, i):
    """``math.ldexp(x, i)``: an infinity from a finite ``x`` is a range error."""
    x = _python_float(x, "math.ldexp()")
    i = asarray(i)
    if i.dtype.kind not in "biu":
        raise TypeError(located(f"math.ldexp(): expected an integer exponent, got a traced {i.dtype}"))
    result = ufuncs.ldexp(x, ops.convert(i, INT64))
    require_python_accepts(_raises_as(math.ldexp, 1.0, 5000), x, ops.and_(_isinf(result), ops.is_finite(x)))
    return ops.convert(result, FLOAT64, weak=True)


def _float_binary(python_function, numpy_function):
    def run(x, y):
        what = f"math.{python_function.__name__}()"
        return ops.convert(numpy_function(_python_float(x, what), _python_float(y, what)), FLOAT64, weak=True)
    run.__name__ = python_function.__name__
    run.__doc__ = f"``math.{python_function.__name__}(x, y)`` on traced scalars: a weak float64."
    return run


def _hypot(*coordinates):
    """``math.hypot(*coordinates)``."""
    if not coordinates:
        return 0.0
    total = _python_float(coordinates[0], "math.hypot()")
    total = ops.abs(total)
    for c in coordinates[1:]:
        total = ufuncs.hypot(total, _python_float(c, "math.hypot()"))
    return ops.convert(total, FLOAT64, weak=True)


def _ulp(x):
    """``math.ulp(x)``: the distance from ``|x|`` to the next float away from zero (below, for the largest)."""
    size = ops.abs(_python_float(x, "math.ulp()"))
    up = ufuncs.nextafter(size, ops.full_like(size, np.inf))
    down = ufuncs.subtract(size, ufuncs.nextafter(size, ops.full_like(size, 0.0)))
    result = ops.select(ops.is_finite(up), ops.sub(up, size), down)
    return ops.convert(ops.select(ops.is_finite(size), result, size), FLOAT64, weak=True)


def _frexp(x):
    """``math.frexp(x)``: (weak float64, weak int64)."""
    mantissa, exponent = ufuncs.frexp(_python_float(x, "math.frexp()"))
    return ops.convert(mantissa, FLOAT64, weak=True), ops.convert(exponent, INT64, weak=True)


def _modf(x):
    """``math.modf(x)``: (fractional part, whole part), weak float64s."""
    fraction, whole = ufuncs.modf(_python_float(x, "math.modf()"))
    return ops.convert(fraction, FLOAT64, weak=True), ops.convert(whole, FLOAT64, weak=True)


def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """``math.isclose(a, b, rel_tol=..., abs_tol=...)``, as CPython computes it."""
    a, b = _python_float(a, "math.isclose()"), _python_float(b, "math.isclose()")
    rel_tol, abs_tol = _python_float(rel_tol, "math.isclose()"), _python_float(abs_tol, "math.isclose()")
    require_python_accepts(_raises_as(math.isclose, 1.0, 1.0, rel_tol=-1.0), rel_tol,
                           ops.or_(ops.compare(rel_tol, ops.full_like(rel_tol, 0.0), "LT"),
                                   ops.compare(abs_tol, ops.full_like(abs_tol, 0.0), "LT")))
    difference = ops.abs(ops.sub(b, a))
    within = ops.or_(ops.or_(ops.compare(difference, ops.abs(ops.mul(rel_tol, b)), "LE"),
                             ops.compare(difference, ops.abs(ops.mul(rel_tol, a)), "LE")),
                     ops.compare(difference, abs_tol, "LE"))
    either_infinite = ops.or_(_isinf(a), _isinf(b))
    return ops.or_(ops.compare(a, b, "EQ"), ops.and_(ops.not_(either_infinite), within))


def _predicate(python_function, test):
    def run(x):
        return test(_python_float(x, f"math.{python_function.__name__}()"))
    run.__name__ = python_function.__name__
    run.__doc__ = f"``math.{python_function.__name__}(x)`` on a traced scalar: a bool."
    return run


def _math_int(python_function, rounding):
    def run(x):
        return _python_int(x, rounding, python_function)
    run.__name__ = python_function.__name__
    run.__doc__ = f"``math.{python_function.__name__}(x)`` on a traced scalar: a weak int64."
    return run


_UNARY = {"sqrt": ufuncs.sqrt, "exp": ufuncs.exp, "exp2": ufuncs.exp2, "expm1": ufuncs.expm1, "log2": ufuncs.log2,
          "log10": ufuncs.log10, "log1p": ufuncs.log1p, "sin": ufuncs.sin, "cos": ufuncs.cos, "tan": ufuncs.tan,
          "asin": ufuncs.arcsin, "acos": ufuncs.arccos, "atan": ufuncs.arctan, "sinh": ufuncs.sinh,
          "cosh": ufuncs.cosh, "tanh": ufuncs.tanh, "asinh": ufuncs.arcsinh, "acosh": ufuncs.arccosh,
          "atanh": ufuncs.arctanh, "cbrt": ufuncs.cbrt, "fabs": ufuncs.fabs}
_UNCHECKED_UNARY = {"degrees": ufuncs.degrees, "radians": ufuncs.radians}      # CPython multiplies, unchecked
_BINARY = {"atan2": ufuncs.arctan2, "copysign": ufuncs.copysign, "nextafter": ufuncs.nextafter}

def _numpy_scalar_type(kind):
    def run(x):
        return asarray(x).astype(kind)
    run.__name__ = kind.__name__
    run.__doc__ = f"``np.{kind.__name__}(x)`` of a traced value: ``x.astype(np.{kind.__name__})``, as NumPy converts an array."
    return run


_NUMPY_SCALAR_TYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                       np.float16, np.float32, np.float64, np.complex64, np.complex128)

_FUNCTIONS = {
    **{kind: _numpy_scalar_type(kind) for kind in _NUMPY_SCALAR_TYPES},
    builtins.float: _float, builtins.int: _int, builtins.complex: _complex, builtins.round: _round,
    math.log: _log, math.pow: _pow, math.fmod: _fmod, math.ldexp: _ldexp, math.hypot: _hypot, math.ulp: _ulp,
    math.frexp: _frexp, math.modf: _modf, math.isclose: _isclose,
    math.isnan: _predicate(math.isnan, _isnan), math.isinf: _predicate(math.isinf, _isinf),
    math.isfinite: _predicate(math.isfinite, ops.is_finite),
    math.floor: _math_int(math.floor, ufuncs.floor), math.ceil: _math_int(math.ceil, ufuncs.ceil),
    math.trunc: _math_int(math.trunc, ufuncs.trunc),
    **{getattr(math, name): _math_unary(getattr(math, name), fn) for name, fn in _UNARY.items()
       if hasattr(math, name)},
    **{getattr(math, name): _math_unary(getattr(math, name), fn, checked=False)
       for name, fn in _UNCHECKED_UNARY.items()},
    **{getattr(math, name): _float_binary(getattr(math, name), fn) for name, fn in _BINARY.items()},
}
