"""Dtype names, ``result_type``, ``astype``, the dtype utilities of ``xlac.numpy`` and the predicates that read
only a dtype or a type (``iscomplexobj``, ``isscalar``, ``common_type``, ``min_scalar_type``, ...).

>>> import xlac.numpy as xnp
>>> xnp.result_type(xnp.int8, 1.0)
dtype('float64')
>>> xnp.result_type(xnp.float16, 1.0)
dtype('float16')
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from xlac.ir.dtypes import FLOAT16
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes as _dtypes
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.ufuncs import ufunc
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
           "float32", "float64", "complex64", "complex128", "result_type", "astype", "dtype", "finfo", "iinfo",
           "issubdtype", "isdtype", "can_cast", "promote_types", "real", "imag", "conjugate", "conj", "newaxis", "pi",
           "e", "inf", "nan", "euler_gamma", "iscomplexobj", "isrealobj", "isscalar", "iterable", "isfortran",
           "common_type", "mintypecode", "min_scalar_type"]

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
bfloat16 = _dtypes.bfloat16.type
dtype = np.dtype
newaxis = None
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma

BF16 = _dtypes.bfloat16
PYTHON_NUMBERS = (bool, int, float, complex)


def dtype_of(x) -> np.dtype:
    """The dtype ``x`` names or has: a dtype, a scalar type, a name, a NumPy scalar or any array."""
    if isinstance(x, np.dtype):
        return x
    if isinstance(x, type) and issubclass(x, np.generic):
        return np.dtype(x)
    if isinstance(x, (type, str)):
        return _dtypes.canonical(x)
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return np.asarray(x).dtype


def result_type(*arrays_and_dtypes) -> np.dtype:
    """NumPy 2's result type (NEP 50: Python scalars are weak), bfloat16 included (it promotes as
    float16 does, and with float16 gives float32).

    >>> result_type(np.float32, 2.0)
    dtype('float32')
    >>> result_type("int8", np.uint8)
    dtype('int16')
    """
    if not arrays_and_dtypes:
        raise ValueError(located("at least one array or dtype is required"))
    return _dtypes.result_type(*(_dtypes.canonical(x) if isinstance(x, str) else x for x in arrays_and_dtypes))


def promote_types(type1, type2, /) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` cast to safely.

    >>> promote_types(np.int8, np.uint8)
    dtype('int16')
    >>> promote_types(bfloat16, np.float16)
    dtype('float32')
    """
    return _dtypes.result_type(_dtypes.canonical(type1), _dtypes.canonical(type2))


def can_cast(from_, to, casting="safe") -> bool:
    """Whether ``from_`` (a dtype, NumPy scalar or array) casts to ``to`` under ``casting``; bfloat16
    follows float16's rules except that float16 and bfloat16 do not cast safely to each other.

    >>> can_cast(np.int8, np.float16), can_cast(np.int64, np.float32, "same_kind"), can_cast(bfloat16, np.float16)
    (True, True, False)
    """
    if isinstance(from_, PYTHON_NUMBERS):
        raise TypeError(located("can_cast() does not support Python ints, floats, and complex because the result "
                                "used to depend on the value.\nThis change was part of adopting NEP 50, we may "
                                "explicitly allow them again in the future."))
    src, dst = dtype_of(from_), _dtypes.canonical(to)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(located(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' "
                                 f"(got {casting!r})"))
    if BF16 not in (src, dst):
        return bool(np.can_cast(src, dst, casting))
    if src == dst or casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return False
    if casting == "same_kind":
        return bool(np.can_cast(FLOAT16 if src == BF16 else src, FLOAT16 if dst == BF16 else dst, casting))
    if src == BF16:
        return dst in (np.dtype("float32"), np.dtype("float64"), np.dtype("complex64"), np.dtype("complex128"))
    return src != FLOAT16 and bool(np.can_cast(src, FLOAT16, "safe"))


def finfo(type):
    """Machine limits of a floating dtype (or an array of one): NumPy's ``finfo``, ml_dtypes' for
    bfloat16; a complex dtype gives its real part's.

    >>> float(finfo(np.float32).eps), float(finfo(bfloat16).eps)
    (1.1920928955078125e-07, 0.0078125)
    """
    dt = dtype_of(type)
    if dt == BF16:
        return ml_dtypes.finfo(BF16)
    return np.finfo(dt)


def iinfo(type):
    """Machine limits of an integer dtype (or an array of one).

    >>> int(iinfo(np.int8).min), int(iinfo("uint16").max)
    (-128, 65535)
    """
    dt = dtype_of(type)
    if dt == BF16:
        raise ValueError(located("Invalid integer data type 'bfloat16'."))
    return np.iinfo(dt)


def issubdtype(arg1, arg2) -> bool:
    """Whether ``arg1`` is ``arg2`` or below it in NumPy's type hierarchy; bfloat16 counts as a
    ``np.floating``.

    >>> issubdtype(np.int8, np.integer), issubdtype(bfloat16, np.floating), issubdtype(bfloat16, np.float16)
    (True, True, False)
    """
    if _is_bfloat16(arg1):
        if _is_bfloat16(arg2):
            return True
        return isinstance(arg2, type) and arg2 in (np.floating, np.inexact, np.number, np.generic)
    if _is_bfloat16(arg2):
        return False
    return bool(np.issubdtype(arg1, arg2))


def _is_bfloat16(x) -> bool:
    try:
        return dtype_of(x) == BF16
    except (TypeError, ValueError):
        return False


_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": _dtypes.is_signed_int,
    "unsigned integer": _dtypes.is_unsigned_int,
    "integral": _dtypes.is_int,
    "real floating": _dtypes.is_float,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: _dtypes.is_int(d) or _dtypes.is_inexact(d),
}
_ABSTRACT = (np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger, np.inexact, np.floating,
             np.complexfloating)


def _is_dtype_like(x) -> bool:
    return isinstance(x, np.dtype) or isinstance(x, type) and issubclass(x, np.generic)


def isdtype(dtype, kind) -> bool:
    """The Array API's test of ``dtype`` against ``kind``: a dtype, one of the names "bool", "signed integer",
    "unsigned integer", "integral", "real floating" (bfloat16 included), "complex floating", "numeric", or a
    tuple of these.

    >>> isdtype(np.float32, "real floating"), isdtype(bfloat16, ("integral", "real floating"))
    (True, True)
    """
    if not _is_dtype_like(dtype):
        raise TypeError(located(f"dtype argument must be a NumPy dtype, but it is a {type(dtype)}."))
    dt = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(located(f"kind argument is a string, but {k!r} is not a known kind name."))
            if _KINDS[k](dt):
                return True
        elif _is_dtype_like(k):
            if k not in _ABSTRACT and dt == np.dtype(k):
                return True
        else:
            raise TypeError(located(f"kind argument must be comprised of NumPy dtypes or strings only, but is a "
                                    f"{type(k)}."))
    return False


@numpy_function
def astype(x, dtype, copy=True):
    """``x`` converted to ``dtype`` with NumPy's casting (floats to integers truncate toward zero).

    >>> np.asarray(astype(np.array([1.7, -1.7]), np.int32))
    array([ 1, -1], dtype=int32)
    """
    return ops.convert(asarray(x), _dtypes.canonical(dtype))


@numpy_function(view="writable")
def real(x):
    """The real part of ``x``: a view, written through by ``x.real[i] = v`` (``x`` itself for real dtypes).

    >>> np.asarray(real(np.array([1 + 2j])))
    array([1.])
    """
    a = asarray(x)
    return ops.real(a) if a.dtype.kind == "c" else a


def _imag(x):
    a = asarray(x)
    if a.dtype.kind == "c":
        return ops.imag(a)
    zeros = ops.full(a.shape, 0, a.dtype)
    zeros.mutability = "readonly"
    return zeros


_imag.__name__ = "imag"                  # the origin traced nodes are recorded with
_traced_imag = numpy_function(_imag, view="writable")


def imag(x):
    """The imaginary part of ``x``: a view for complex dtypes; for real dtypes read-only zeros, as NumPy's
    (eagerly too).

    >>> np.asarray(imag(np.array([1 + 2j])))
    array([2.])
    >>> imag(np.array([1.0])).mutability
    'readonly'
    """
    part = _traced_imag(x)
    if np.result_type(x).kind != "c":
        part.mutability = "readonly"
    return part


imag.__wrapped_numpy__ = _imag


@numpy_function
def with_complex_part(x, part: str, value):
    """``x`` with its real or imaginary ``part`` replaced by ``value`` (broadcast and cast to the part's
    dtype): what ``x.real = value`` and ``x.imag = value`` store. A real ``x`` has only a real part.

    >>> np.asarray(with_complex_part(np.array([1 + 2j]), "imag", 5))
    array([1.+5.j])
    """
    a = asarray(x)
    if a.dtype.kind != "c":
        if part == "imag":
            raise TypeError(located(f"array does not have imaginary part to set (a real {a.dtype} array; "
                                    "NumPy's error for `x.imag = v` on a real array)"))
        return ops.convert(ops.broadcast_to(asarray(value), a.shape), a.dtype)
    real_part, imag_part = ops.real(a), ops.imag(a)
    new = ops.convert(ops.broadcast_to(asarray(value), a.shape), real_part.dtype)
    return ops.complex(new, imag_part) if part == "real" else ops.complex(real_part, new)


@ufunc
def conjugate(x):
    """The complex conjugate of ``x`` (``x`` itself for real dtypes; booleans as int8, as NumPy, which
    has no bool loop).

    >>> np.asarray(conjugate(np.array([1 + 2j])))
    array([1.-2.j])
    """
    a = asarray(x)
    if a.dtype == np.bool_:
        return ops.convert(a, np.int8)
    return ops.conj(a)


conj = conjugate


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype (a Python bool; only the dtype is read).

    >>> iscomplexobj(np.ones(2, np.complex64))
    True
    """
    return dtype_of(x).kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x`` has a non-complex dtype.

    >>> isrealobj([1.0])
    True
    """
    return not iscomplexobj(x)


def isscalar(element) -> bool:
    """NumPy's ``isscalar``: arrays, traced or not, are not scalars.

    >>> isscalar(3.0), isscalar(np.ones(1))
    (True, False)
    """
    if isinstance(element, Tracer) or hasattr(element, "__xlac_array__"):
        return False
    return bool(np.isscalar(element))


def iterable(y) -> bool:
    """Whether ``iter(y)`` works (a 0-d array is not iterable).

    >>> iterable([1]), iterable(1)
    (True, False)
    """
    if isinstance(y, Tracer) or hasattr(y, "__xlac_array__"):
        return len(y.shape) > 0
    return bool(np.iterable(y))


def isfortran(a) -> bool:
    """False: xlac arrays are C-ordered (or XLA's choice), never Fortran-ordered views.

    >>> isfortran(np.ones((2, 2)))
    False
    """
    return False


def common_type(*arrays) -> type:
    """The inexact scalar type common to ``arrays`` (integers count as float64), as NumPy's.

    >>> common_type(np.ones(2, np.float32), np.ones(2, np.int8))
    <class 'numpy.float64'>
    """
    return np.common_type(*(np.empty(0, dtype_of(a)) for a in arrays))


def mintypecode(typechars, typeset="GDFgdf", default="d") -> str:
    """NumPy's ``mintypecode`` (works on dtype characters and array dtypes only).

    >>> mintypecode(['d', 'f'])
    'd'
    """
    return np.mintypecode([t if isinstance(t, str) else dtype_of(t).char for t in typechars], typeset, default)


def min_scalar_type(a) -> np.dtype:
    """The smallest dtype that holds ``a``'s values.

    Deviation: reads the values, so traced arrays raise xlac.UnsupportedError (their dtype is their own).

    >>> min_scalar_type(10)
    dtype('uint8')
    """
    if isinstance(a, Tracer):
        raise UnsupportedError(located("min_scalar_type: the result depends on the values of a traced array"))
    if hasattr(a, "__xlac_array__"):
        a = a.__xlac_array__()
    return np.min_scalar_type(a)
