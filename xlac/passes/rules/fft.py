"""VJP, JVP and batching rules of the ``fft`` primitive.

The FFT is linear, so its JVP is the same transform of the tangent. Its VJP is the transpose, in JAX's
convention for complex values (the transpose, not the conjugate transpose): the DFT matrix is symmetric,
so FFT and IFFT transpose to themselves. RFFT is a full FFT of a real signal cropped to the non-negative
frequencies; its transpose zero-pads the cotangent back to full length, transforms it and keeps the real
part. IRFFT reads each frequency strictly between DC and Nyquist twice (once for its Hermitian mirror), so
its transpose is the conjugated RFFT of the cotangent, weighted 2 there and 1 at DC and Nyquist, divided
by the size.

>>> from xlac.ir import primitives as P
>>> P.fft.vjp is not None and P.fft.jvp is not None and P.fft.batch is not None
True
"""
from __future__ import annotations

import math

import numpy as np

from xlac.ir import primitives as P
from xlac.passes.rules.common import to_front
from xlac.trace import ops

__all__: list[str] = []


def _conj(z):
    return ops.complex(ops.real(z), ops.neg(ops.imag(z)))


def _rfft_transpose(ct, lengths):
    """Cotangent of the real operand of an RFFT of ``lengths`` from the cotangent ``ct`` of its result."""
    missing = lengths[-1] - ct.shape[-1]
    zeros = (0,) * ct.ndim
    full = ops.pad(ct, ops.constant(0, ct.dtype), zeros, zeros[:-1] + (missing,))
    return ops.real(ops.fft(full, "FFT", lengths))


def _irfft_transpose(ct, lengths):
    """Cotangent of the complex operand of an IRFFT of ``lengths`` from the real cotangent ``ct``."""
    spectrum = ops.fft(ct, "RFFT", lengths)
    n, kept = lengths[-1], spectrum.shape[-1]
    weights = np.full(kept, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights /= math.prod(lengths)
    scale = ops.broadcast_in_dim(ops.constant(weights, spectrum.dtype), spectrum.shape, (spectrum.ndim - 1,))
    return _conj(ops.mul(spectrum, scale))


def _fft_vjp(attrs, operands, results, cts):
    (ct,) = cts
    kind, lengths = attrs["fft_type"], tuple(attrs["fft_length"])
    if kind == "RFFT":
        return [_rfft_transpose(ct, lengths)]
    if kind == "IRFFT":
        return [_irfft_transpose(ct, lengths)]
    return [ops.fft(ct, kind, lengths)]


def _fft_jvp(attrs, operands, results, tangents):
    (t,) = tangents
    return [ops.fft(t, attrs["fft_type"], attrs["fft_length"])]


def _fft_batch(attrs, operands, dims):
    """The transform acts on trailing axes: a batch axis among them moves to the front."""
    (x,), (d,) = operands, dims
    if d >= x.ndim - len(attrs["fft_length"]):
        x, d = to_front(x, d, x.shape[d]), 0
    return [ops.bind(P.fft, x, **attrs)], [d]


P.fft.register(vjp=_fft_vjp, jvp=_fft_jvp, batch=_fft_batch)
