"""Complex elementwise functions at the special values C99 Annex G and the Array API standard specify (signed
zeros, infinities and NaNs in either part), written as selects around XLA's operation so that they lower to
every device.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.exp(np.array([complex(np.inf, 0.0), complex(1.0, -0.0)])))
array([       inf+0.j, 2.71828183-0.j])
"""
from __future__ import annotations

import numpy as np

from xlac.numpy.ufuncs.float_bits import _copysign, _is_zero, _sign_set
from xlac.trace import ops

__all__ = []


def _equals(part, value: float):
    return ops.compare(part, ops.full_like(part, value), "EQ")


def _not_finite(part):
    return ops.not_(ops.is_finite(part))


def complex_exp(z):
    """``exp(z)`` with Annex G's special cases: ``exp(x ± 0j) = exp(x) ± 0j``; ``exp(-inf + yj) = 0 ± 0j``
    and ``exp(+inf + yj) = inf + nanj`` for an infinite or NaN ``y``; XLA's ``exp`` elsewhere."""
    x, y = ops.real(z), ops.imag(z)
    zero = ops.full_like(x, 0)
    result = ops.exp(z)
    result = ops.select(_is_zero(y), ops.complex(ops.exp(x), y), result)
    vanishing = ops.complex(zero, ops.select(_is_infinite(y), _copysign(zero, y), zero))
    result = ops.select(ops.and_(_equals(x, -np.inf), _not_finite(y)), vanishing, result)
    unbounded = ops.complex(ops.full_like(x, np.inf), ops.full_like(x, np.nan))
    return ops.select(ops.and_(_equals(x, np.inf), _not_finite(y)), unbounded, result)


def _is_nan(part):
    return ops.compare(part, part, "NE")


def _is_infinite(part):
    return ops.compare(ops.abs(part), ops.full_like(part, np.inf), "EQ")


def complex_log(z):
    """``log(z)`` with Annex G's ``log(±inf + nanj) = log(nan ± infj) = inf + nanj``; XLA's ``log`` elsewhere."""
    return _unbounded_beside_nan(z, ops.log(z))


def complex_log1p(z):
    """``log1p(z)`` with the standard's ``log1p(±inf + nanj) = log1p(nan ± infj) = inf + nanj``; XLA's
    ``log1p`` elsewhere."""
    return _unbounded_beside_nan(z, ops.log1p(z))


def _unbounded_beside_nan(z, result):
    """``result``, but ``inf + nanj`` where one part of ``z`` is infinite and the other NaN (logarithms)."""
    x, y = ops.real(z), ops.imag(z)
    infinite_beside_nan = ops.or_(ops.and_(_is_infinite(x), _is_nan(y)), ops.and_(_is_nan(x), _is_infinite(y)))
    unbounded = ops.complex(ops.full_like(x, np.inf), ops.full_like(x, np.nan))
    return ops.select(infinite_beside_nan, unbounded, result)


def complex_sqrt(z):
    """``sqrt(z)`` with Annex G's special cases: the imaginary part has the sign of ``z``'s (``sqrt(conj(z)) =
    conj(sqrt(z))``, also for -0); ``sqrt(x ± infj) = inf ± infj`` for every ``x``; ``sqrt(-inf + nanj) =
    nan + infj`` and ``sqrt(inf + nanj) = inf + nanj``; XLA's ``sqrt`` elsewhere."""
    x, y = ops.real(z), ops.imag(z)
    root = ops.sqrt(z)
    result = ops.complex(ops.real(root), _copysign(ops.imag(root), y))
    inf, nan = ops.full_like(x, np.inf), ops.full_like(x, np.nan)
    result = ops.select(ops.and_(_equals(x, np.inf), _is_nan(y)), ops.complex(inf, nan), result)
    result = ops.select(ops.and_(_equals(x, -np.inf), _is_nan(y)), ops.complex(nan, inf), result)
    return ops.select(_is_infinite(y), ops.complex(inf, y), result)


def _negated_where(condition, value):
    return ops.select(condition, ops.neg(value), value)


def complex_sinh(z, real_sinh, real_cosh):
    """``sinh(x + yj) = sinh(x) cos(y) + cosh(x) sin(y) j`` from the real ``real_sinh``/``real_cosh`` at ``|x|,
    |y|``, then signed (``sinh`` is odd in ``x`` and conjugate-symmetric), with Annex G's cases:
    ``sinh(x ± 0j) = sinh(x) ± 0j``, ``sinh(±0 + yj) = ±0 + nanj`` and ``sinh(±inf + yj) = inf + nanj``
    (Annex G leaves the sign of that inf open) for an infinite or NaN ``y``."""
    x, y = ops.real(z), ops.imag(z)
    a, b = ops.abs(x), ops.abs(y)
    zero, inf, nan = ops.full_like(a, 0), ops.full_like(a, np.inf), ops.full_like(a, np.nan)
    re, im = ops.mul(real_sinh(a), ops.cos(b)), ops.mul(real_cosh(a), ops.sin(b))
    for where, case_re, case_im in [(_is_zero(y), real_sinh(a), zero), (ops.and_(_is_zero(x), _not_finite(y)), zero, nan)]:
        re, im = ops.select(where, case_re, re), ops.select(where, case_im, im)
    re, im = _negated_where(_sign_set(x), re), _negated_where(_sign_set(y), im)
    unbounded = ops.and_(_equals(a, np.inf), _not_finite(y))          # +inf whatever the sign, as NumPy
    return ops.complex(ops.select(unbounded, inf, re), ops.select(unbounded, nan, im))


def complex_cosh(z, real_sinh, real_cosh):
    """``cosh(x + yj) = cosh(x) cos(y) + sinh(x) sin(y) j`` from the real ``real_sinh``/``real_cosh`` at ``|x|,
    |y|``, the imaginary part then signed by the signs of ``x`` and ``y``, with Annex G's cases:
    ``cosh(x ± 0j) = cosh(x) ± 0j`` (signed as ``x * y``), ``cosh(±0 + yj) = nan + 0j`` and
    ``cosh(±inf + yj) = inf + nanj`` for an infinite or NaN ``y``."""
    x, y = ops.real(z), ops.imag(z)
    a, b = ops.abs(x), ops.abs(y)
    zero, inf, nan = ops.full_like(a, 0), ops.full_like(a, np.inf), ops.full_like(a, np.nan)
    re, im = ops.mul(real_cosh(a), ops.cos(b)), ops.mul(real_sinh(a), ops.sin(b))
    re, im = ops.select(_is_zero(y), real_cosh(a), re), ops.select(_is_zero(y), zero, im)
    im = _negated_where(ops.xor(_sign_set(x), _sign_set(y)), im)
    cases = [(ops.and_(_is_zero(x), _not_finite(y)), nan, zero),
             (ops.and_(_equals(a, np.inf), _not_finite(y)), inf, nan)]
    for where, case_re, case_im in cases:
        re, im = ops.select(where, case_re, re), ops.select(where, case_im, im)
    return ops.complex(re, im)


def complex_tanh(z):
    """XLA's ``tanh`` at ``|x| + |y|j``, then signed (``tanh`` is odd in ``x`` and conjugate-symmetric), with
    Annex G's cases: ``tanh(x ± 0j) = tanh(x) ± 0j``, ``tanh(±0 + yj) = ±0 + nanj`` for an infinite or NaN
    ``y``, and ``tanh(±inf + yj) = ±1 + 0j`` with the sign of ``sin(2y)`` on the zero (of ``y`` when ``y`` is
    not finite)."""
    x, y = ops.real(z), ops.imag(z)
    a, b = ops.abs(x), ops.abs(y)
    zero, one, nan = ops.full_like(a, 0), ops.full_like(a, 1), ops.full_like(a, np.nan)
    quadrant = ops.tanh(ops.complex(a, b))
    re, im = ops.real(quadrant), ops.imag(quadrant)
    twice_b = ops.add(b, b)
    cases = [(_is_zero(y), ops.real(ops.tanh(ops.complex(a, zero))), zero),
             (ops.and_(_is_zero(x), _not_finite(y)), zero, nan),
             (_equals(a, np.inf), one, ops.select(ops.is_finite(b), _copysign(zero, ops.sin(twice_b)), zero))]
    for where, case_re, case_im in cases:
        re, im = ops.select(where, case_re, re), ops.select(where, case_im, im)
    return ops.complex(_negated_where(_sign_set(x), re), _negated_where(_sign_set(y), im))


def complex_expm1(z):
    """``expm1(z)``: XLA's where both parts are finite (accurate near 0), ``expm1(x) ± 0j`` on the real axis, and
    ``exp(z) - 1`` with exp's special cases elsewhere (``expm1(+inf + 0j) = inf + 0j``, ``expm1(-inf + yj) =
    -1 ± 0j``, ``expm1(+inf + infj) = inf + nanj``)."""
    x, y = ops.real(z), ops.imag(z)
    exponential = complex_exp(z)
    shifted = ops.complex(ops.sub(ops.real(exponential), ops.full_like(x, 1)), ops.imag(exponential))
    finite = ops.and_(ops.is_finite(x), ops.is_finite(y))
    result = ops.select(finite, ops.expm1(z), shifted)
    return ops.select(_is_zero(y), ops.complex(ops.expm1(x), y), result)


_ZERO, _FINITE, _NONZERO_FINITE, _INF, _MINUS_INF, _PLUS_INF, _NAN, _ONE = (
    "zero", "finite", "nonzero finite", "inf", "-inf", "+inf", "nan", "one")


def _part_is(part, kind: str):
    """Whether ``part`` (a real or imaginary part) is of the special-value class ``kind``."""
    tests = {_ZERO: lambda: _is_zero(part), _FINITE: lambda: ops.is_finite(part),
             _NONZERO_FINITE: lambda: ops.and_(ops.is_finite(part), ops.not_(_is_zero(part))),
             _INF: lambda: _is_infinite(part), _MINUS_INF: lambda: _equals(part, -np.inf),
             _PLUS_INF: lambda: _equals(part, np.inf), _NAN: lambda: _is_nan(part),
             _ONE: lambda: _equals(part, 1.0)}
    return tests[kind]()


def _with_cases(a, b, re, im, cases):
    """``re + im j``, but the value of the first case whose classes ``a`` and ``b`` are in: ``cases`` is a list of
    (class of a, class of b, real part, imaginary part)."""
    for kind_a, kind_b, case_re, case_im in reversed(cases):
        where = ops.and_(_part_is(a, kind_a), _part_is(b, kind_b))
        re, im = ops.select(where, ops.full_like(a, case_re), re), ops.select(where, ops.full_like(a, case_im), im)
    return re, im


_NAN_AND_NAN = [(_NAN, _NAN, np.nan, np.nan)]
_PI = np.pi


def complex_asinh(z, quadrant_asinh):
    """``asinh(z)`` from ``quadrant_asinh`` (a formula for finite arguments of nonnegative parts) at ``|x| +
    |y|j``, signed by symmetry (asinh is odd and conjugate-symmetric), with the standard's special cases."""
    return _odd_from_quadrant(z, quadrant_asinh, [
        (_FINITE, _INF, np.inf, _PI / 2), (_INF, _INF, np.inf, _PI / 4), (_NAN, _INF, np.inf, np.nan),
        (_INF, _FINITE, np.inf, 0.0), (_INF, _NAN, np.inf, np.nan), (_FINITE, _NAN, np.nan, np.nan),
        (_NAN, _ZERO, np.nan, 0.0), (_NAN, _FINITE, np.nan, np.nan), *_NAN_AND_NAN])


def _quadrant_atanh(z):
    """``atanh(a + bj)`` for ``a, b >= 0`` part by part: ``log1p(4a / ((1 - a)**2 + b**2)) / 4 + atan2(2b, (1 - a)
    (1 + a) - b**2) / 2 j``, exact on the axes (``atanh(bj)`` has real part 0; on the cut, ``atanh(a + 0j)``
    for ``a > 1`` has imaginary part +pi/2)."""
    a, b = ops.real(z), ops.imag(z)
    one = ops.full_like(a, 1)
    one_minus_a = ops.sub(one, a)
    denominator = ops.add(ops.mul(one_minus_a, one_minus_a), ops.mul(b, b))
    re = ops.mul(ops.full_like(a, 0.25), ops.log1p(ops.div(ops.mul(ops.full_like(a, 4), a), denominator)))
    angle = ops.atan2(ops.add(b, b), ops.sub(ops.mul(one_minus_a, ops.add(one, a)), ops.mul(b, b)))
    return ops.complex(re, ops.mul(ops.full_like(a, 0.5), angle))


def complex_atanh(z):
    """``atanh(z)`` at ``|x| + |y|j``, signed by symmetry (atanh is odd and conjugate-symmetric), with the
    standard's special cases."""
    return _odd_from_quadrant(z, _quadrant_atanh, [
        (_ZERO, _ZERO, 0.0, 0.0), (_ZERO, _NAN, 0.0, np.nan), (_ONE, _ZERO, np.inf, 0.0),
        (_FINITE, _INF, 0.0, _PI / 2), (_FINITE, _NAN, np.nan, np.nan), (_INF, _FINITE, 0.0, _PI / 2),
        (_INF, _INF, 0.0, _PI / 2), (_INF, _NAN, 0.0, np.nan), (_NAN, _FINITE, np.nan, np.nan),
        (_NAN, _INF, 0.0, _PI / 2), *_NAN_AND_NAN])


def _odd_from_quadrant(z, quadrant_function, cases):
    x, y = ops.real(z), ops.imag(z)
    a, b = ops.abs(x), ops.abs(y)
    value = quadrant_function(ops.complex(a, b))
    re, im = _with_cases(a, b, ops.real(value), ops.imag(value), cases)
    return ops.complex(_negated_where(_sign_set(x), re), _negated_where(_sign_set(y), im))


def complex_acosh(z, upper_half_acosh):
    """``acosh(z)`` from ``upper_half_acosh`` at ``x + |y|j``, conjugated where ``y`` has its sign set
    (acosh is conjugate-symmetric), with the standard's special cases (NumPy's sign where they leave it open)."""
    return _conjugate_symmetric_from_upper_half(z, upper_half_acosh, [
        (_ZERO, _ZERO, 0.0, _PI / 2), (_FINITE, _INF, np.inf, _PI / 2), (_ZERO, _NAN, np.nan, _PI / 2),
        (_NONZERO_FINITE, _NAN, np.nan, np.nan), (_MINUS_INF, _FINITE, np.inf, _PI),
        (_PLUS_INF, _FINITE, np.inf, 0.0), (_MINUS_INF, _INF, np.inf, 3 * _PI / 4),
        (_PLUS_INF, _INF, np.inf, _PI / 4), (_INF, _NAN, np.inf, np.nan), (_NAN, _FINITE, np.nan, np.nan),
        (_NAN, _INF, np.inf, np.nan), *_NAN_AND_NAN])


def complex_acos(z, upper_half_acos):
    """``acos(z)`` from ``upper_half_acos`` at ``x + |y|j``, conjugated where ``y`` has its sign set (acos is
    conjugate-symmetric), with the standard's special cases (NumPy's sign where they leave it open)."""
    return _conjugate_symmetric_from_upper_half(z, upper_half_acos, [
        (_ZERO, _ZERO, _PI / 2, -0.0), (_ZERO, _NAN, _PI / 2, np.nan), (_FINITE, _INF, _PI / 2, -np.inf),
        (_NONZERO_FINITE, _NAN, np.nan, np.nan), (_MINUS_INF, _FINITE, _PI, -np.inf),
        (_PLUS_INF, _FINITE, 0.0, -np.inf), (_MINUS_INF, _INF, 3 * _PI / 4, -np.inf),
        (_PLUS_INF, _INF, _PI / 4, -np.inf), (_INF, _NAN, np.nan, -np.inf), (_NAN, _FINITE, np.nan, np.nan),
        (_NAN, _INF, np.nan, -np.inf), *_NAN_AND_NAN])


def _conjugate_symmetric_from_upper_half(z, upper_half_function, cases):
    x, y = ops.real(z), ops.imag(z)
    b = ops.abs(y)
    value = upper_half_function(ops.complex(x, b))
    re, im = _with_cases(x, b, ops.real(value), ops.imag(value), cases)
    return ops.complex(re, _negated_where(_sign_set(y), im))
