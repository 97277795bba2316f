"""The StableHLO emitter of the ``fft`` primitive: one ``stablehlo.fft`` op.

>>> from xlac.ir import primitives as P
>>> P.fft.emitter is not None
True
"""
from __future__ import annotations

from xlac.ir import primitives as P
from xlac.lowering.module import FunctionWriter, dims


def _emit_fft(w: FunctionWriter, node, operands):
    attrs = (f"fft_type = #stablehlo<fft_type {node.attrs['fft_type']}>, "
             f"fft_length = {dims(node.attrs['fft_length'])}")
    return w.op("stablehlo.fft", operands, [v.type for v in node.operands], [v.type for v in node.results], attrs)


P.fft.register(emitter=_emit_fft)
