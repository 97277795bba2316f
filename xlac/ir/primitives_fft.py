"""The ``fft`` primitive: StableHLO's fast Fourier transform over the trailing 1 to 3 axes.

``fft x {fft_type, fft_length}``: ``fft_type`` is one of

- ``FFT`` / ``IFFT``: complex to complex, forward (unnormalized) or inverse (divided by the size);
- ``RFFT``: real to complex, the last axis keeps its ``n // 2 + 1`` non-negative frequencies;
- ``IRFFT``: those ``n // 2 + 1`` frequencies back to ``n`` real values, divided by the size.

``fft_length`` holds the logical sizes of the transformed (trailing) axes; padding and cropping are
:mod:`xlac.numpy.fft`'s business.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> fft.infer_types(TensorType((2, 8), np.dtype("float32")), fft_type="RFFT", fft_length=(8,))
(c64[2,5],)
"""
from __future__ import annotations

import numpy as np

from xlac.ir.autocast_classes import FLOAT32
from xlac.ir.primitive import ShapeError, declare
from xlac.ir.types import TensorType

__all__ = ["fft", "FFT_TYPES"]

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {np.dtype("float32"): np.dtype("complex64"), np.dtype("float64"): np.dtype("complex128")}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ShapeError(message)


def _fft_rule(x: TensorType, *, fft_type, fft_length) -> TensorType:
    lengths = tuple(fft_length)
    _check(fft_type in FFT_TYPES, f"fft: unknown fft_type {fft_type!r}; expected one of {FFT_TYPES}")
    _check(1 <= len(lengths) <= 3 and all(n >= 1 for n in lengths),
           f"fft: fft_length {lengths} must hold 1 to 3 positive sizes")
    _check(x.ndim >= len(lengths), f"fft: {x} has fewer axes than fft_length {lengths}")
    lead, tail = x.shape[:x.ndim - len(lengths)], x.shape[x.ndim - len(lengths):]
    half = lengths[:-1] + (lengths[-1] // 2 + 1,)
    if fft_type == "RFFT":
        _check(x.dtype in _COMPLEX_OF, f"fft RFFT expects a float32 or float64 operand, got {x}")
        _check(tail == lengths, f"fft RFFT: the trailing axes of {x} must be fft_length {lengths}")
        return TensorType(lead + half, _COMPLEX_OF[x.dtype])
    _check(x.dtype in _REAL_OF, f"fft {fft_type} expects a complex64 or complex128 operand, got {x}")
    if fft_type == "IRFFT":
        _check(tail == half, f"fft IRFFT of length {lengths}: the trailing axes of {x} must be {half}")
        return TensorType(lead + lengths, _REAL_OF[x.dtype])
    _check(tail == lengths, f"fft {fft_type}: the trailing axes of {x} must be fft_length {lengths}")
    return x


fft = declare("fft", _fft_rule, category="fft", autocast=FLOAT32)
