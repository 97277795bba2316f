"""Operand helpers the ufuncs share: truth values, the float dtype NumPy's float-only ufuncs compute in,
refusals of unsupported dtypes, and small constructors of constants, masks and shifts.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.hypot(np.array([3], np.int8), 4))
array([5.], dtype=float16)
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, float_dtype_for, is_python_scalar, promote
from xlac.ir.dtypes import BOOL
from xlac.trace import ops

__all__ = []


def _float_operand(x, other):
    """``x`` in the float dtype NumPy's float-only ufuncs cast it to; a Python scalar first meets ``other``."""
    if is_python_scalar(x) or getattr(x, "weak", False):
        if dtypes.is_weak_result(x, other):
            a = asarray(x)
            return ops.convert(a, float_dtype_for(a.dtype), weak=True)
        return asarray(x, float_dtype_for(dtypes.result_type(other, x)))
    a = asarray(x)
    return ops.convert(a, float_dtype_for(a.dtype), weak=a.weak)


def _to_bool(x):
    a = asarray(x)
    if a.dtype == BOOL:
        return a
    return ops.compare(a, ops.full(a.shape, 0, a.dtype), "NE")


def _unsupported(name: str, *operand_dtypes) -> TypeError:
    kinds = ", ".join(str(d) for d in operand_dtypes)
    return TypeError(located(f"ufunc '{name}' not supported for the input types ({kinds}), and the inputs could "
                             "not be safely coerced to any supported types according to the casting rule ''safe''"))


def _real_float(name: str, x):
    """``x`` in the float dtype NumPy's real-float ufuncs compute in; complex is refused, as NumPy does."""
    a = asarray(x)
    if a.dtype.kind == "c":
        raise _unsupported(name, a.dtype)
    return ops.convert(a, float_dtype_for(a.dtype), weak=a.weak)


def _real_floats(name: str, x1, x2):
    """Both operands in the float dtype NumPy's binary real-float ufuncs pick for them, broadcast."""
    a, b = promote(name, _float_operand(x1, x2), _float_operand(x2, x1))
    if a.dtype.kind == "c":
        raise _unsupported(name, a.dtype, b.dtype)
    return a, b


def _in_float32(body):
    """``body`` computed in float32 for float16 and bfloat16 operands, as NumPy's half-precision loops
    do, and rounded back once."""
    def run(*xs):
        dtype = xs[0].dtype
        if dtype not in (np.dtype("float16"), dtypes.bfloat16):
            return body(*xs)
        return ops.convert(body(*(ops.convert(x, np.float32) for x in xs)), dtype)
    return run

