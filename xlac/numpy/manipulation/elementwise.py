"""Comparing arrays and elementwise numerics: isclose, allclose, array_equal, array_equiv,
nan_to_num, round/around, fix, sinc, i0, angle, and the elementwise tests iscomplex, isreal, isneginf,
isposinf and real_if_close, with NumPy 2's values, dtypes and errors.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.isclose(np.array([1.0, 2.0]), np.array([1.0, 2.1])))
array([ True, False])
"""
from __future__ import annotations

import builtins
import operator

import ml_dtypes
import numpy as np

from xlac.ir.dtypes import BOOL, FLOAT64
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import _core, creation, inplace, reductions, ufuncs
from xlac.numpy._core import asarray
from xlac.numpy.dtypes import dtype_of
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.numpy.manipulation._common import _static_function
from xlac.numpy.shapes import as_array
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.numpy import dtypes as numpy_dtypes

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "nan_to_num", "round", "around", "fix",
           "sinc", "i0", "angle", "iscomplex", "isreal", "isneginf", "isposinf", "real_if_close"]


# ---------------------------------------------------------------- comparing


def _close_operand(x):
    """isclose keeps Python numbers as they are (weak) and makes everything else an array."""
    return asarray(x) if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic) else as_array(x)


@numpy_function
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (and equal infinities; NaNs equal with ``equal_nan``).

    >>> np.asarray(isclose(np.array([1.0, 1.1, np.nan]), 1.0))
    array([ True, False, False])
    """
    x, y, atol, rtol = (_close_operand(v) for v in (a, b, atol, rtol))
    if not y.weak:
        y = ops.convert(y, dtypes.result_type(y, 1.0))
    elif dtypes.is_int(y.dtype) or y.dtype == BOOL:
        y = ops.convert(y, FLOAT64, weak=True)
    absolute = ufuncs.absolute
    result = ufuncs.less_equal(absolute(ufuncs.subtract(x, y)), ufuncs.add(atol, ufuncs.multiply(rtol, absolute(y))))
    result = ufuncs.logical_or(ufuncs.logical_and(result, ufuncs.isfinite(y)), ufuncs.equal(x, y))
    if equal_nan:
        result = ufuncs.logical_or(result, ufuncs.logical_and(ufuncs.isnan(x), ufuncs.isnan(y)))
    return result


@numpy_function
def _all_close(a, b, rtol, atol, equal_nan):
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element of ``a`` is close to ``b`` (see :func:`isclose`).

    Deviation: inside a compiled function the answer is a traced 0-d bool array, not a Python bool.

    >>> allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    True
    """
    result = _all_close(a, b, rtol, atol, equal_nan)
    return result if current_trace() is not None else builtins.bool(result)


@numpy_function
def _array_equal(a1, a2, equal_nan=False):
    x, y = as_array(a1), as_array(a2)
    if x.shape != y.shape:
        return ops.constant(False)
    same = ufuncs.equal(x, y)
    if equal_nan and (dtypes.is_inexact(x.dtype) or dtypes.is_inexact(y.dtype)):
        x_nan, y_nan = ufuncs.isnan(x), ufuncs.isnan(y)
        nan_match = reductions.all(ufuncs.equal(x_nan, y_nan))
        return ufuncs.logical_and(nan_match, reductions.all(ufuncs.logical_or(same, x_nan)))
    return reductions.all(same)


def array_equal(a1, a2, equal_nan=False):
    """True if ``a1`` and ``a2`` have one shape and equal elements (NaNs equal with ``equal_nan``).

    Deviation: inside a compiled function the answer is a traced 0-d bool array, not a Python bool.

    >>> array_equal([1, 2], np.array([1.0, 2.0])), array_equal([1, 2], [1, 2, 3])
    (True, False)
    """
    result = _array_equal(a1, a2, equal_nan)
    return result if current_trace() is not None else builtins.bool(result)


@numpy_function
def _array_equiv(a1, a2):
    x, y = as_array(a1), as_array(a2)
    try:
        ops.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return ops.constant(False)
    return reductions.all(ufuncs.equal(x, y))


def array_equiv(a1, a2):
    """True if ``a1`` and ``a2`` broadcast together and are equal everywhere.

    Deviation: inside a compiled function the answer is a traced 0-d bool array, not a Python bool.

    >>> array_equiv([1, 2], [[1, 2], [1, 2]])
    True
    """
    result = _array_equiv(a1, a2)
    return result if current_trace() is not None else builtins.bool(result)


for _public, _traced in ((allclose, _all_close), (array_equal, _array_equal), (array_equiv, _array_equiv)):
    _traced.__name__ = _traced.__qualname__ = _public.__name__
    _public.__wrapped_numpy__ = _public


# ---------------------------------------------------------------- elementwise numerics


def _finfo(dtype: np.dtype):
    return ml_dtypes.finfo(dtype) if dtype == dtypes.bfloat16 else np.finfo(dtype)


def _fill_as(value, dtype: np.dtype, shape) -> Tracer:
    if isinstance(value, Tracer):
        return ops.broadcast_to(ops.convert(value, dtype), shape)
    with np.errstate(over="ignore"):
        return ops.full(shape, np.asarray(value).astype(dtype), dtype)


@numpy_function
def _nan_to_num(x, nan, posinf, neginf):
    t = as_array(x)
    if not dtypes.is_inexact(t.dtype):
        return t
    if np.issubdtype(t.dtype, np.complexfloating):
        parts = [_replace_non_finite(part(t), nan, posinf, neginf) for part in (ops.real, ops.imag)]
        return ops.complex(*parts)
    return _replace_non_finite(t, nan, posinf, neginf)


_nan_to_num.__name__ = _nan_to_num.__qualname__ = "nan_to_num"


def _replace_non_finite(d: Tracer, nan, posinf, neginf) -> Tracer:
    info = _finfo(d.dtype)
    biggest = info.max if posinf is None else posinf
    smallest = info.min if neginf is None else neginf
    inf = ops.full(d.shape, np.inf, d.dtype)
    is_nan, is_posinf = ops.compare(d, d, "NE"), ops.compare(d, inf, "EQ")
    is_neginf = ops.compare(d, ops.neg(inf), "EQ")
    d = ops.select(is_nan, _fill_as(nan, d.dtype, d.shape), d)
    d = ops.select(is_posinf, _fill_as(biggest, d.dtype, d.shape), d)
    return ops.select(is_neginf, _fill_as(smallest, d.dtype, d.shape), d)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default: the largest
    finite values of the dtype), real and imaginary parts alike; integers come back unchanged.
    With ``copy=False`` an array ``x`` is updated in place and returned, as in NumPy.

    >>> np.asarray(nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)))
    array([ 0.0000000e+00,  3.4028235e+38, -3.4028235e+38,  1.0000000e+00], dtype=float32)
    """
    result = _nan_to_num(x, nan, posinf, neginf)
    if copy or not (isinstance(x, (Tracer, np.ndarray)) or hasattr(x, "_xlac_type")):
        return result
    if dtypes.is_inexact(x.dtype):
        inplace._target(x, "nan_to_num")[...] = result
    return x


nan_to_num.__wrapped_numpy__ = nan_to_num


def _rounded(x: Tracer, decimals: int) -> Tracer:
    """NumPy's round: rint of ``x * 10**decimals`` divided back (or the reverse for negative decimals)."""
    if np.issubdtype(x.dtype, np.complexfloating):
        return ops.complex(*(_rounded(part(x), decimals) for part in (ops.real, ops.imag)))
    if x.dtype == BOOL and decimals != 0:
        raise TypeError(located("round: Cannot cast ufunc output from dtype('float64') to dtype('bool') with "
                                "casting rule 'same_kind'"))
    if dtypes.is_int(x.dtype):
        if decimals >= 0:
            return x
        scale = 10.0 ** -decimals
        return ops.convert(ufuncs.multiply(ufuncs.rint(ufuncs.divide(x, scale)), scale), x.dtype)
    if decimals == 0:
        return ufuncs.rint(x)
    if decimals > 0:
        scale = 10.0 ** decimals
        return ufuncs.divide(ufuncs.rint(ufuncs.multiply(x, scale)), scale)
    scale = 10.0 ** -decimals
    return ufuncs.multiply(ufuncs.rint(ufuncs.divide(x, scale)), scale)


@_static_function("round", "decimals")
def round(a, decimals=0, out=None):
    """``a`` rounded to ``decimals`` places, halves to even (NumPy's scale, rint, unscale); integers with
    ``decimals >= 0`` come back unchanged, complex numbers round both parts.

    Deviation: ``out=`` is not supported.

    >>> np.asarray(round(np.array([0.125, 2.5]), 2)), np.asarray(round(np.array([15, 25]), -1))
    (array([0.12, 2.5 ]), array([20, 20]))
    """
    if out is not None:
        raise UnsupportedError(located("round: out= is not supported; use the returned array"))
    return _rounded(as_array(a), operator.index(decimals))


around = round


@numpy_function
def fix(x, out=None):
    """``x`` rounded towards zero (``trunc``); integers and booleans come back unchanged.

    >>> np.asarray(fix(np.array([-2.5, 2.5])))
    array([-2.,  2.])
    """
    if out is not None:
        raise UnsupportedError(located("fix: out= is not supported; use the returned array"))
    t = as_array(x)
    if np.issubdtype(t.dtype, np.complexfloating):
        raise TypeError(located(f"fix: ufunc 'trunc' not supported for the input types ({t.dtype})"))
    if not dtypes.is_float(t.dtype):
        return t
    return ops.select(ops.compare(t, ops.full(t.shape, 0, t.dtype), "GE"), ops.floor(t), ops.ceil(t))


@numpy_function
def sinc(x):
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.

    >>> np.asarray(sinc(np.array([0.0, 0.5])))
    array([1.        , 0.63661977])
    """
    t = ufuncs.multiply(np.pi, as_array(x))
    eps = np.finfo(t.dtype).eps if t.dtype.kind == "f" else 1e-20
    y = ufuncs.where(t, t, eps)
    return ufuncs.divide(ufuncs.sin(y), y)


I0_SMALL = (  # Chebyshev coefficients for exp(-x) I0(x) on [0, 8], as in NumPy (Cephes)
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
I0_LARGE = (  # Chebyshev coefficients for exp(-x) sqrt(x) I0(x) in 32/x - 2 on (8, inf)
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1)


def _chebyshev(x, coefficients):
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


@numpy_function
def i0(x):
    """The modified Bessel function of the first kind, order 0, by NumPy's Chebyshev expansions.

    >>> np.asarray(i0(np.array([0.0, 1.0])))
    array([1.        , 1.26606588])
    """
    t = as_array(x)
    if np.issubdtype(t.dtype, np.complexfloating):
        raise TypeError(located("i0: i0 not supported for complex values"))
    if t.dtype.kind != "f":
        t = ops.convert(t, FLOAT64)
    t = ufuncs.absolute(t)
    small = ufuncs.less_equal(t, 8.0)
    near = ufuncs.where(small, t, 0.0)          # each branch sees only arguments it is defined for
    far = ufuncs.where(small, 9.0, t)
    inner = ufuncs.exp(near) * _chebyshev(near / 2.0 - 2, I0_SMALL)
    outer = ufuncs.exp(far) * _chebyshev(32.0 / far - 2.0, I0_LARGE) / ufuncs.sqrt(far)
    return ops.convert(ufuncs.where(small, inner, outer), t.dtype)


@numpy_function_with_static("deg")
def angle(z, deg=False):
    """The counterclockwise angle of each complex element from the positive real axis (radians).

    >>> np.asarray(angle(np.array([1j, -1.0])))
    array([1.57079633, 3.14159265])
    """
    z = _core.asarray(z)
    if z.dtype.kind == "c":
        a = ufuncs.arctan2(numpy_dtypes.imag(z), numpy_dtypes.real(z))
    else:
        a = ufuncs.arctan2(0, z)
    return a * (180 / np.pi) if deg else a


@numpy_function
def iscomplex(x):
    """Element-wise: a non-zero imaginary part.

    >>> np.asarray(iscomplex(np.array([1 + 1j, 2])))
    array([ True, False])
    """
    x = _core.asarray(x)
    if x.dtype.kind != "c":
        return creation.zeros(x.shape, bool)
    return numpy_dtypes.imag(x) != 0


@numpy_function
def isreal(x):
    """Element-wise: a zero imaginary part.

    >>> np.asarray(isreal(np.array([1 + 1j, 2])))
    array([False,  True])
    """
    x = _core.asarray(x)
    if x.dtype.kind != "c":
        return creation.ones(x.shape, bool)
    return numpy_dtypes.imag(x) == 0


@numpy_function
def isneginf(x, out=None):
    """Element-wise ``x == -inf``.

    >>> np.asarray(isneginf(np.array([-np.inf, 0.0, np.inf])))
    array([ True, False, False])
    """
    x = _core.asarray(x)
    _reject_complex(x, "isneginf")
    return ufuncs.isinf(x) & ufuncs.signbit(x) if x.dtype.kind == "f" else creation.zeros(x.shape, bool)


@numpy_function
def isposinf(x, out=None):
    """Element-wise ``x == +inf``.

    >>> np.asarray(isposinf(np.array([-np.inf, 0.0, np.inf])))
    array([False, False,  True])
    """
    x = _core.asarray(x)
    _reject_complex(x, "isposinf")
    return ufuncs.isinf(x) & ~ufuncs.signbit(x) if x.dtype.kind == "f" else creation.zeros(x.shape, bool)


def _reject_complex(x, op: str):
    if x.dtype.kind == "c":
        raise TypeError(located(f"This operation is not supported for complex values because it would be "
                                f"ambiguous ({op})"))


def real_if_close(a, tol=100):
    """``a`` without its imaginary part when that part is within ``tol`` machine epsilons of zero.

    Deviation: the result dtype depends on the values, so traced complex arrays raise xlac.UnsupportedError.

    >>> np.asarray(real_if_close(np.array([1 + 1e-20j])))
    array([1.])
    """
    if dtype_of(a).kind != "c":
        return creation.asarray(a)
    if isinstance(a, Tracer):
        raise UnsupportedError(located("real_if_close: the result dtype depends on the values of a traced array; "
                                       "use xnp.real(x) inside compiled functions"))
    return creation.asarray(np.real_if_close(np.asarray(a), tol))
