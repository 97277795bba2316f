"""Dtypes: the set xlac supports, NumPy 2 promotion (NEP 50) and StableHLO element type names.

Python scalars are *weak*: they take the dtype of the array they meet
(``float32 array * 2.0`` stays float32). Traced values that came from Python
scalars carry ``weak=True`` and promote the same way.

>>> result_type(np.dtype("float32"), 2.0)
dtype('float32')
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)
# The dtypes xlac's modules name most, defined here once.
BOOL = np.dtype("bool")
UINT8 = np.dtype("uint8")
INT32 = np.dtype("int32")
INT64 = np.dtype("int64")
FLOAT16 = np.dtype("float16")
FLOAT32 = np.dtype("float32")
FLOAT64 = np.dtype("float64")
COMPLEX64 = np.dtype("complex64")
COMPLEX128 = np.dtype("complex128")
INDEX = INT64          # positions, counts and check payloads xlac computes

SUPPORTED = tuple(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")) + (bfloat16,)

_SUPPORTED_SET = frozenset(SUPPORTED)

_MLIR_NAMES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}
_SHORT_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}
_BY_SHORT_NAME = {short: np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
                  for name, short in _SHORT_NAMES.items()}
# The same tables keyed by the dtype itself: hashing a dtype is far cheaper than computing its name.
_SHORT_BY_DTYPE = {dtype: short for short, dtype in _BY_SHORT_NAME.items()}
_MLIR_BY_DTYPE = {dtype: _MLIR_NAMES[dtype.name] for dtype in _BY_SHORT_NAME.values()}


def canonical(dtype) -> np.dtype:
    """The np.dtype for ``dtype`` (a dtype, a type, or a name such as ``"bfloat16"``).

    >>> canonical("bfloat16") == bfloat16
    True
    """
    if isinstance(dtype, np.dtype) and dtype in _SUPPORTED_SET:     # the common case, without a comparison per dtype
        return dtype
    if isinstance(dtype, str) and dtype in _BY_SHORT_NAME and dtype not in ("bool",):
        return _BY_SHORT_NAME[dtype]
    if dtype is float:
        return np.dtype("float64")
    if dtype is int:
        return np.dtype("int64")
    if dtype is complex:
        return np.dtype("complex128")
    if dtype is bool:
        return np.dtype("bool")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"xlac: {dtype!r} is not a dtype") from None
    if dt not in SUPPORTED:
        raise TypeError(f"xlac: dtype {dt} is not supported; supported: "
                        + ", ".join(str(d) for d in SUPPORTED))
    return dt


def mlir_name(dtype: np.dtype) -> str:
    """StableHLO element type: ``mlir_name(np.dtype('float32')) == 'f32'``."""
    return _MLIR_BY_DTYPE.get(dtype) or _MLIR_NAMES[dtype.name]


def short_name(dtype: np.dtype) -> str:
    """Short name used by the IR printer: ``short_name(np.dtype('float32')) == 'f32'``."""
    return _SHORT_BY_DTYPE.get(dtype) or _SHORT_NAMES[dtype.name]


def from_short_name(name: str) -> np.dtype:
    """Inverse of :func:`short_name`: ``from_short_name('bf16') == bfloat16``."""
    return _BY_SHORT_NAME[name]


def _kind(dtype) -> str:
    """NumPy's kind letter ('b', 'i', 'u', 'f', 'c'; 'V' for ml_dtypes' types such as bfloat16): a cheap
    test, where np.issubdtype walks the type hierarchy."""
    return dtype.kind if isinstance(dtype, np.dtype) else np.dtype(dtype).kind


def is_float(dtype) -> bool:
    """True for real floating dtypes, bfloat16 included."""
    kind = _kind(dtype)
    return kind == "f" or (kind == "V" and (dtype == bfloat16 or np.issubdtype(dtype, np.floating)))


def is_inexact(dtype) -> bool:
    """True for floating and complex dtypes."""
    return _kind(dtype) == "c" or is_float(dtype)


def is_signed_int(dtype) -> bool:
    return _kind(dtype) == "i"


def is_unsigned_int(dtype) -> bool:
    return _kind(dtype) == "u"


def is_int(dtype) -> bool:
    return _kind(dtype) in "iu"


def is_bool(dtype) -> bool:
    return dtype == np.bool_


_WEAK_PROXY = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def weak_proxy(dtype: np.dtype):
    """The Python scalar that stands for a weak value of ``dtype`` in promotion."""
    return _WEAK_PROXY["f" if dtype == bfloat16 else dtype.kind]


def default_dtype(scalar) -> np.dtype:
    """The dtype NumPy gives a Python scalar on its own: int64, float64, complex128 or bool."""
    if isinstance(scalar, (bool, np.bool_)):
        return np.dtype("bool")
    if isinstance(scalar, int):
        return np.dtype("int64")
    if isinstance(scalar, float):
        return np.dtype("float64")
    if isinstance(scalar, complex):
        return np.dtype("complex128")
    raise TypeError(f"xlac: {type(scalar).__name__} is not a Python scalar")


def result_type(*operands) -> np.dtype:
    """NumPy 2 result type of ``operands``: dtypes, arrays, traced values or Python scalars.

    bfloat16 promotes as float16 does in NumPy; bfloat16 with float16 gives float32.

    >>> result_type(np.dtype("int32"), np.dtype("float32"))
    dtype('float64')
    >>> result_type(bfloat16, 1.0) == bfloat16
    True
    """
    args = []
    saw_bf16 = saw_f16 = False
    for x in operands:
        if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
            args.append(x)
            continue
        weak = getattr(x, "weak", False)
        if isinstance(x, np.dtype):
            dt = x
        elif isinstance(x, type):
            dt = canonical(x)
        else:
            dt = canonical(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)
        if weak:
            args.append(weak_proxy(dt))
            continue
        if dt == bfloat16:
            saw_bf16 = True
            dt = np.dtype("float16")
        elif dt == np.float16:
            saw_f16 = True
        args.append(dt)
    out = np.result_type(*args)
    if saw_bf16:
        if out == np.float16:
            out = np.dtype("float32") if saw_f16 else bfloat16
        elif out == np.complex64 and not saw_f16:
            out = np.dtype("complex64")
    return out


def is_weak_result(*operands) -> bool:
    """A result is weak when every operand is weak (Python scalars or weak traced values)."""
    return all(isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)
               or getattr(x, "weak", False) for x in operands)
