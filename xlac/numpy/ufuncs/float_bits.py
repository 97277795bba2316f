"""Ufuncs on the bits of floats: copysign, signbit, nextafter, spacing, frexp, ldexp, heaviside and modf,
exact for subnormals even where XLA's CPU flushes them to zero.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.copysign(np.array([1.0]), -0.0))
array([-1.])
"""
from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np

from xlac.ir import dtypes
from xlac.numpy._core import asarray
from xlac.ir.dtypes import BOOL
from xlac.numpy.ufuncs.machinery import ufunc
from xlac.numpy.ufuncs.operands import _real_float, _real_floats, _unsupported
from xlac.trace import ops

__all__ = ["copysign", "signbit", "nextafter", "spacing", "frexp", "ldexp", "heaviside", "modf"]


def _float_part(dtype: np.dtype) -> np.dtype:
    return np.dtype("float32") if dtype == np.complex64 else np.dtype("float64")


class _FloatLayout(NamedTuple):
    uint: np.dtype      # the unsigned integer of the float's width
    mantissa: int       # stored fraction bits
    bias: int           # exponent bias; the largest exponent field, 2 * bias + 1, is inf and NaN
    eps: float


def _float_layout(dtype: np.dtype) -> _FloatLayout:
    dtype = _float_part(dtype) if dtype.kind == "c" else dtype
    info = ml_dtypes.finfo(dtype) if dtype == dtypes.bfloat16 else np.finfo(dtype)
    return _FloatLayout(np.dtype(f"uint{dtype.itemsize * 8}"), int(info.nmant), int(info.maxexp) - 1,
                        float(info.eps))


def _bits(a):
    """(the bits of float ``a`` as an unsigned integer, its sign bit alone, the rest)."""
    uint = _float_layout(a.dtype).uint
    bits = ops.bitcast_convert(a, uint)
    sign_bit = 1 << (uint.itemsize * 8 - 1)
    return bits, ops.and_(bits, ops.full_like(bits, sign_bit)), ops.and_(bits, ops.full_like(bits, sign_bit - 1))


def _sign_set(a):
    """Where the sign bit of float ``a`` is set (-0.0 and negative NaNs included)."""
    _, sign, _ = _bits(a)
    return ops.compare(sign, ops.full_like(sign, 0), "NE")


def _is_zero(a):
    """Where float ``a`` is ±0; unlike ``a == 0`` on XLA's CPU, which flushes subnormals, exact."""
    _, _, magnitude = _bits(a)
    return ops.compare(magnitude, ops.full_like(magnitude, 0), "EQ")


def _copysign(a, b):
    """``|a|`` with the sign bit of ``b``: abs and neg only flip bits, so this is exact and differentiable."""
    magnitude = ops.abs(a)
    return ops.select(_sign_set(b), ops.neg(magnitude), magnitude)


@ufunc
def copysign(x1, x2):
    """``|x1|`` with the sign (bit) of ``x2``.

    >>> np.asarray(xnp.copysign(np.array([1.0, 2.0]), np.array([-0.0, 3.0])))
    array([-1.,  2.])
    """
    return _copysign(*_real_floats("copysign", x1, x2))


@ufunc
def signbit(x):
    """True where the sign bit of ``x`` is set (-0.0 included).

    >>> np.asarray(xnp.signbit(np.array([-0.0, 1.0, -2.0])))
    array([ True, False,  True])
    """
    a = asarray(x)
    if a.dtype.kind == "c":
        raise _unsupported("signbit", a.dtype)
    if dtypes.is_float(a.dtype):
        return _sign_set(a)
    if dtypes.is_signed_int(a.dtype):
        return ops.compare(a, ops.full_like(a, 0), "LT")
    return ops.full(a.shape, False, BOOL)


@ufunc
def nextafter(x1, x2):
    """The float after ``x1`` in the direction of ``x2`` (``x2`` where they are equal; for float16, as
    NumPy's half loop does, ``x1``), computed on the bits as XLA's math library does, so subnormals are exact.

    >>> np.asarray(xnp.nextafter(np.array([1.0], np.float32), 2.0)) - 1
    array([1.1920929e-07], dtype=float32)
    """
    a, b = _real_floats("nextafter", x1, x2)
    bits_a, sign_a, magnitude_a = _bits(a)
    bits_b, sign_b, magnitude_b = _bits(b)
    zero, one = ops.full_like(bits_a, 0), ops.full_like(bits_a, 1)
    toward_zero = ops.or_(ops.compare(magnitude_a, magnitude_b, "GT"), ops.compare(sign_a, sign_b, "NE"))
    step = ops.select(toward_zero, ops.sub(bits_a, one), ops.add(bits_a, one))
    a_zero = ops.compare(magnitude_a, zero, "EQ")
    equal = ops.or_(ops.compare(bits_a, bits_b, "EQ"), ops.and_(a_zero, ops.compare(magnitude_b, zero, "EQ")))
    bits = ops.select(equal, bits_a if a.dtype == np.float16 else bits_b,
                      ops.select(a_zero, ops.or_(sign_b, one), step))
    nan = ops.or_(_is_nan_exactly(a), _is_nan_exactly(b))
    return ops.select(nan, ops.add(a, b), ops.bitcast_convert(bits, a.dtype))


@ufunc
def spacing(x):
    """The distance from ``x`` to the next float away from zero, with the sign of ``x`` (NaN for inf and
    NaN; the smallest subnormal for ±0). float16 follows NumPy's half loop: the distance to the next float
    toward +inf, always positive.

    >>> np.asarray(xnp.spacing(np.array([1.0, -1.0], np.float32)))
    array([ 1.1920929e-07, -1.1920929e-07], dtype=float32)
    """
    a = _real_float("spacing", x)
    layout = _float_layout(a.dtype)
    bits, sign, magnitude = _bits(a)
    zero = ops.full_like(magnitude, 0)
    inf_bits = ops.full_like(magnitude, (2 * layout.bias + 1) << layout.mantissa)
    largest = ops.sub(inf_bits, ops.full_like(magnitude, 1))
    nonzero = ops.compare(magnitude, zero, "NE")
    if a.dtype == np.float16:
        below = ops.and_(ops.compare(sign, zero, "NE"), nonzero)     # a negative float's gap toward zero
        gap = _gap_above(ops.select(below, ops.sub(magnitude, ops.full_like(magnitude, 1)), magnitude), layout)
        gap = ops.select(ops.compare(bits, largest, "EQ"), inf_bits, gap)
    else:
        gap = _gap_above(magnitude, layout)
        gap = ops.select(ops.compare(magnitude, largest, "EQ"), inf_bits, gap)
        gap = ops.select(nonzero, ops.or_(gap, sign), gap)
    special = ops.compare(magnitude, inf_bits, "GE")
    return ops.select(special, ops.full_like(a, np.nan), ops.bitcast_convert(gap, a.dtype))


def _gap_above(magnitude, layout: _FloatLayout):
    """The bits of the distance from the float with ``magnitude`` bits to the next larger one: a normal
    power of 2 for exponent fields above the mantissa width, a subnormal one below, the smallest for 0."""
    m = ops.full_like(magnitude, layout.mantissa)
    one = ops.full_like(magnitude, 1)
    field = ops.shift_right_logical(magnitude, m)
    normal = ops.shift_left(ops.sub(field, m), m)
    subnormal = ops.shift_left(one, ops.sub(field, one))
    gap = ops.select(ops.compare(field, m, "GT"), normal, subnormal)
    return ops.select(ops.compare(field, ops.full_like(field, 0), "EQ"), one, gap)


def _is_nan_exactly(a):
    """NaN test on the bits: LLVM merges a float ``a != a`` with bit tests of ``a`` into a class test that,
    with XLA's CPU flushing subnormals, mistakes subnormals for zeros."""
    layout = _float_layout(a.dtype)
    _, _, magnitude = _bits(a)
    return ops.compare(magnitude, ops.full_like(magnitude, (2 * layout.bias + 1) << layout.mantissa), "GT")


def _decompose(a):
    """(sign bit, exponent e as int32, significand s) with ``|a| = s * 2**(e - m)`` and s an integer in
    ``[2**m, 2**(m+1))`` for finite nonzero ``a`` (m the stored fraction bits), and where ``a`` is ±0, inf
    or NaN. Integer arithmetic only: XLA's CPU flushes subnormal floats to zero."""
    layout = _float_layout(a.dtype)
    m, bias = layout.mantissa, layout.bias
    _, sign, magnitude = _bits(a)
    field = ops.shift_right_logical(magnitude, ops.full_like(magnitude, m))
    fraction = ops.and_(magnitude, ops.full_like(magnitude, (1 << m) - 1))
    # A subnormal's fraction converts exactly to a normal float, whose exponent field gives the exponent.
    _, _, renormalized = _bits(ops.convert(fraction, a.dtype))
    subnormal = ops.compare(field, ops.full_like(field, 0), "EQ")
    int32 = np.dtype("int32")
    exponent = ops.select(
        subnormal,
        ops.add(ops.convert(ops.shift_right_logical(renormalized, ops.full_like(renormalized, m)), int32),
                   ops.full(a.shape, 1 - 2 * bias - m, int32)),
        ops.sub(ops.convert(field, int32), ops.full(a.shape, bias, int32)))
    implicit = ops.full_like(magnitude, 1 << m)
    significand = ops.or_(implicit, ops.and_(ops.select(subnormal, renormalized, fraction), ops.full_like(fraction, (1 << m) - 1)))
    special = ops.or_(ops.compare(magnitude, ops.full_like(magnitude, 0), "EQ"),
                      ops.compare(field, ops.full_like(field, 2 * bias + 1), "EQ"))
    return sign, exponent, significand, special


def _compose(sign, exponent, significand, dtype: np.dtype):
    """The float ``±significand * 2**(exponent - m)`` (see :func:`_decompose`): exact where it is normal,
    rounded half to even where it is subnormal, ±inf where it overflows."""
    layout = _float_layout(dtype)
    m, bias = layout.mantissa, layout.bias
    field = ops.add(exponent, ops.full_like(exponent, bias))
    fraction = ops.and_(significand, ops.full_like(significand, (1 << m) - 1))
    normal_field = ops.convert(ops.clamp(ops.full_like(field, 1), field, ops.full_like(field, 2 * bias)), layout.uint)
    normal = ops.or_(ops.shift_left(normal_field, ops.full_like(normal_field, m)), fraction)
    shift = ops.convert(ops.clamp(ops.full_like(field, 1), ops.sub(ops.full_like(field, 1), field), ops.full_like(field, m + 2)),
                        layout.uint)
    one = ops.full_like(significand, 1)
    kept = ops.shift_right_logical(significand, shift)
    rest = ops.and_(significand, ops.sub(ops.shift_left(one, shift), one))
    half = ops.shift_left(one, ops.sub(shift, one))
    odd = ops.compare(ops.and_(kept, one), ops.full_like(kept, 0), "NE")
    round_up = ops.or_(ops.compare(rest, half, "GT"), ops.and_(ops.compare(rest, half, "EQ"), odd))
    subnormal = ops.select(round_up, ops.add(kept, one), kept)
    bits = ops.select(ops.compare(field, ops.full_like(field, 1), "LT"), subnormal, normal)
    bits = ops.select(ops.compare(field, ops.full_like(field, 2 * bias), "GT"), ops.full_like(bits, (2 * bias + 1) << m), bits)
    return ops.bitcast_convert(ops.or_(bits, sign), dtype)


def _normal_exponent(e, layout: _FloatLayout):
    """Where ``2**e`` is a normal float."""
    return ops.and_(ops.compare(e, ops.full_like(e, 1 - layout.bias), "GE"), ops.compare(e, ops.full_like(e, layout.bias), "LE"))


@ufunc(nout=2)
def frexp(x):
    """(mantissa, exponent) with ``x == mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1`` and an int32
    exponent; (x, 0) for ±0, inf and NaN.

    >>> [np.asarray(p) for p in xnp.frexp(np.array([8.0, -3.0]))]
    [array([ 0.5 , -0.75]), array([4, 2], dtype=int32)]
    """
    a = _real_float("frexp", x)
    sign, exponent, significand, special = _decompose(a)
    mantissa = _compose(sign, ops.full(a.shape, -1, np.int32), significand, a.dtype)
    exponent = ops.add(exponent, ops.full_like(exponent, 1))
    return ops.select(special, a, mantissa), ops.select(special, ops.full_like(exponent, 0), exponent)


@ufunc(cast_inputs=1)
def ldexp(x1, x2):
    """``x1 * 2**x2`` for integer ``x2``, rounded once (subnormal results included).

    >>> np.asarray(xnp.ldexp(np.array([0.75], np.float32), 3))
    array([6.], dtype=float32)
    """
    a, n = _real_float("ldexp", x1), asarray(x2)
    if _is_python_int(x1) and not n.weak:
        a = ops.convert(a, np.float16)      # NumPy's loop search takes 'ei->e' first for a Python int
    if not (dtypes.is_int(n.dtype) or n.dtype == BOOL) or n.dtype == np.uint64:
        raise _unsupported("ldexp", a.dtype, n.dtype)
    shape = ops.broadcast_shapes(a.shape, n.shape, op="ldexp")
    a, n = ops.broadcast_to(a, shape), ops.broadcast_to(n, shape)
    sign, exponent, significand, special = _decompose(a)
    layout = _float_layout(a.dtype)
    limit = 2 * (layout.bias + layout.mantissa + 2)       # beyond it, everything is 0 or inf
    n = ops.convert(n, np.int64)
    n = ops.convert(ops.clamp(ops.full_like(n, -limit), n, ops.full_like(n, limit)), np.int32)
    total = ops.add(exponent, n)
    exact = ops.select(special, a, _compose(sign, total, significand, a.dtype))
    # Where a normal (or special) a times a normal 2**n is normal, the product is exact and carries a's
    # gradient; XLA's CPU would flush a subnormal a or result, which the bits above get right.
    power = _compose(ops.full(a.shape, 0, layout.uint), n, ops.full_like(significand, 1 << layout.mantissa), a.dtype)
    normal_a = ops.and_(_normal_exponent(exponent, layout), ops.not_(special))
    by_product = ops.and_(_normal_exponent(n, layout),
                       ops.or_(special, ops.and_(normal_a, _normal_exponent(total, layout))))
    return ops.select(by_product, ops.mul(a, power), exact)


def _trunc(a):
    return ops.select(_sign_set(a), ops.ceil(a), ops.floor(a))


@ufunc(nout=2)
def modf(x):
    """(fractional part, integral part) of ``x``, both with the sign of ``x``.

    >>> [np.asarray(p) for p in xnp.modf(np.array([-2.5, 3.0]))]
    [array([-0.5,  0. ]), array([-2.,  3.])]
    """
    a = _real_float("modf", x)
    whole = _trunc(a)
    magnitude = ops.abs(a)
    fraction = _copysign(ops.sub(a, whole), a)
    fraction = ops.select(ops.compare(magnitude, ops.full_like(a, 1), "LT"), a, fraction)     # exact, subnormals too
    fraction = ops.select(ops.compare(magnitude, ops.full_like(a, np.inf), "EQ"), _copysign(ops.full_like(a, 0), a), fraction)
    return fraction, whole


@ufunc
def heaviside(x1, x2):
    """The step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``, NaN for NaN.

    >>> np.asarray(xnp.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5))
    array([0. , 0.5, 1. ])
    """
    a, b = _real_floats("heaviside", x1, x2)
    step = ops.select(_sign_set(a), ops.full_like(a, 0), ops.full_like(a, 1))
    return ops.select(_is_nan_exactly(a), a, ops.select(_is_zero(a), b, step))


def _is_python_int(x) -> bool:
    a = asarray(x)
    return a.weak and dtypes.is_int(a.dtype)
