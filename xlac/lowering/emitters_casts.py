"""The ``convert`` primitive's emitter: NumPy's casts where ``stablehlo.convert`` differs.

- Complex to bool: NumPy's ``bool(1j)`` is True (``stablehlo.convert`` looks at the real part only).
- Bool to floating-point: through uint8 (XLA rewrites ``multiply(convert(pred), y)`` into ``select(pred, y, 0)``,
  which drops NumPy's ``False * inf = nan``).
- Floating-point (or complex, its real part) to an integer dtype: as NumPy casts on x86-64. C leaves a float out
  of the integer type's range undefined and XLA saturates it (300.0 -> uint8 255, NaN -> 0); NumPy truncates
  toward zero through a wider integer and keeps its low bits, so ``300.0`` as uint8 is 44 and ``-1.0`` is 255
  (alike on every machine for values inside int32's range); out of that range x86-64's conversion gives the
  lowest integer, so NaN, infinities and huge values become INT32_MIN's or INT64_MIN's low bits:

  - int8, int16, uint8, uint16, int32: through int32 (out of range: INT32_MIN), then the low bits;
  - int64: out of range, INT64_MIN;
  - uint32 and uint64: from 2**31 (2**63) on, the value less that, truncated, with the top bit set; below,
    the value truncated as signed (-1.0 gives all ones); from float16, uint32 through int64 as NumPy does.

>>> import numpy as np, xlac
>>> f = xlac.compile(lambda x: x.astype(np.uint8))
>>> np.asarray(f(np.array([300.0, -1.0, np.nan]))).tolist()
[44, 255, 0]
"""
from __future__ import annotations

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.dtypes import BOOL
from xlac.ir.types import TensorType
from xlac.lowering.emitters import emit_compare, emit_full, emit_zeros
from xlac.lowering.module import FunctionWriter

_INT32, _INT64, _FLOAT32 = np.dtype("int32"), np.dtype("int64"), np.dtype("float32")


def _convert(w: FunctionWriter, node, operands):
    x, out = node.operands[0].type, node.results[0].type
    (operand,) = operands
    if out.dtype == BOOL and x.dtype.kind == "c":
        return [emit_compare(w, operand, emit_zeros(w, x), x, "NE")]
    if x.dtype == BOOL and dtypes.is_inexact(out.dtype):
        u8 = x.with_dtype(np.dtype("uint8"))
        return [_plain(w, _plain(w, operand, x, u8), u8, out)]
    if dtypes.is_inexact(x.dtype) and dtypes.is_int(out.dtype):
        if x.dtype.kind == "c":
            real = x.with_dtype(np.dtype("float32") if x.dtype == np.complex64 else np.dtype("float64"))
            operand, x = w.op("stablehlo.real", [operand], [x], [real])[0], real
        return [emit_float_to_integer(w, operand, x, out)]
    return [_plain(w, operand, x, out)]


P.convert.register(emitter=_convert)


def emit_float_to_integer(w: FunctionWriter, x: str, t: TensorType, out: TensorType) -> str:
    """``x`` (real floating-point, of type ``t``) cast to ``out``'s integer dtype as NumPy does on x86-64."""
    target, from_half = out.dtype, t.dtype.itemsize < 4
    if from_half:                                  # float16 and bfloat16 go through float32, as NumPy's do
        x, t = _plain(w, x, t, t.with_dtype(_FLOAT32)), t.with_dtype(_FLOAT32)
    if target.kind == "u" and target.itemsize >= 4 and not (target.itemsize == 4 and from_half):
        wide = t.with_dtype(_INT64 if target.itemsize == 8 else _INT32)
        signed = _unsigned_bits(w, x, t, wide)
        return w.op("stablehlo.bitcast_convert", [signed], [wide], [out])[0]
    wide = t.with_dtype(_INT64 if target.itemsize == 8 or target == np.uint32 else _INT32)
    signed = _truncated(w, x, t, wide)
    return signed if wide.dtype == target else _plain(w, signed, wide, out)        # the low bits


def _truncated(w: FunctionWriter, x: str, t: TensorType, wide: TensorType) -> str:
    """``x`` truncated toward zero into ``wide``'s signed dtype; NaN and values out of its range: its lowest."""
    lowest = np.iinfo(wide.dtype).min
    bt = t.with_dtype(BOOL)
    above = emit_compare(w, x, emit_full(w, t, float(lowest)), t, "GE")
    below = emit_compare(w, x, emit_full(w, t, -float(lowest)), t, "LT")
    inside = w.op("stablehlo.and", [above, below], [bt, bt], [bt])[0]
    converted = _plain(w, x, t, wide)
    return w.op("stablehlo.select", [inside, converted, emit_full(w, wide, lowest)], [bt, wide, wide], [wide])[0]


def _unsigned_bits(w: FunctionWriter, x: str, t: TensorType, wide: TensorType) -> str:
    """The bits of ``x`` as an unsigned integer as wide as ``wide`` (held in that signed dtype): from
    2**(bits - 1) on, ``x`` less that, truncated, with the top bit set; below, ``x`` truncated as signed."""
    lowest = np.iinfo(wide.dtype).min
    bt = t.with_dtype(BOOL)
    top = emit_full(w, t, -float(lowest))
    high = emit_compare(w, x, top, t, "GE")
    shifted = _truncated(w, w.op("stablehlo.subtract", [x, top], [t, t], [t])[0], t, wide)
    shifted = w.op("stablehlo.xor", [shifted, emit_full(w, wide, lowest)], [wide, wide], [wide])[0]
    return w.op("stablehlo.select", [high, shifted, _truncated(w, x, t, wide)], [bt, wide, wide], [wide])[0]


def _plain(w: FunctionWriter, x: str, t: TensorType, out: TensorType) -> str:
    return w.op("stablehlo.convert", [x], [t], [out])[0]
