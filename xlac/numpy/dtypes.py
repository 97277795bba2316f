"""Dtype names, ``result_type``, ``astype`` and the dtype utilities of ``xlac.numpy``.

>>> import xlac.numpy as xnp
>>> xnp.result_type(xnp.int8, 1.0)
dtype('float64')
>>> xnp.result_type(xnp.float16, 1.0)
dtype('float16')
"""
from __future__ import annotations

import numpy as np

from xlac.ir import dtypes as _dtypes
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "bfloat16", "float32", "float64", "complex64", "complex128", "result_type", "astype", "dtype",
           "finfo", "iinfo", "issubdtype", "can_cast", "promote_types", "real", "imag", "conjugate", "conj",
           "newaxis", "pi", "e", "inf", "nan", "euler_gamma"]

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
bfloat16 = _dtypes.bfloat16.type
dtype = np.dtype
finfo, iinfo, issubdtype, can_cast = np.finfo, np.iinfo, np.issubdtype, np.can_cast
newaxis = None
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma


def result_type(*arrays_and_dtypes) -> np.dtype:
    """NumPy 2's result type (NEP 50: Python scalars are weak), bfloat16 included.

    >>> result_type(np.float32, 2.0)
    dtype('float32')
    """
    return _dtypes.result_type(*arrays_and_dtypes)


def promote_types(type1, type2) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` cast to safely.

    >>> promote_types(np.int8, np.uint8)
    dtype('int16')
    """
    return _dtypes.result_type(_dtypes.canonical(type1), _dtypes.canonical(type2))


@numpy_function
def astype(x, dtype, copy=True):
    """``x`` converted to ``dtype`` with NumPy's casting (floats to integers truncate toward zero).

    >>> np.asarray(astype(np.array([1.7, -1.7]), np.int32))
    array([ 1, -1], dtype=int32)
    """
    return ops.convert(asarray(x), _dtypes.canonical(dtype))


@numpy_function
def real(x):
    """The real part of ``x`` (``x`` itself for real dtypes).

    >>> np.asarray(real(np.array([1 + 2j])))
    array([1.])
    """
    a = asarray(x)
    return ops.unary("real", a) if a.dtype.kind == "c" else a


@numpy_function
def imag(x):
    """The imaginary part of ``x`` (zeros for real dtypes).

    >>> np.asarray(imag(np.array([1 + 2j])))
    array([2.])
    """
    a = asarray(x)
    return ops.unary("imag", a) if a.dtype.kind == "c" else ops.full(a.shape, 0, a.dtype)


@numpy_function
def conjugate(x):
    """The complex conjugate of ``x``.

    >>> np.asarray(conjugate(np.array([1 + 2j])))
    array([1.-2.j])
    """
    a = asarray(x)
    if a.dtype.kind != "c":
        return a
    return ops.complex(ops.unary("real", a), ops.unary("neg", ops.unary("imag", a)))


conj = conjugate
