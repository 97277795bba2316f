"""VJP, JVP and batching rules of the structural primitives: broadcast_in_dim, reshape, transpose, reverse,
concatenate, pad, and the creation primitives iota and constant.

>>> import numpy as np
>>> from xlac.ir import primitives as P
>>> from xlac.ir.types import TensorType
>>> from xlac.trace import ops
>>> from xlac.trace.context import Trace
>>> with Trace() as t:
...     x = t.add_input(TensorType((2, 3), np.dtype("float64")))
...     y = ops.transpose(x, (1, 0))
...     ct = t.add_input(TensorType((3, 2), np.dtype("float64")))
...     (x_ct,) = P.transpose.vjp({"permutation": (1, 0)}, [x], [y], [ct])
>>> x_ct.shape
(2, 3)
"""
from __future__ import annotations

import numpy as np

from xlac.ir import primitives as P
from xlac.passes.autodiff import is_differentiable
from xlac.passes.rules.common import (batch_size, linear_jvp, no_cotangents, no_tangents, or_zeros, shift_axes,
                                      to_front)
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__: list[str] = []


# ---------------------------------------------------------------- broadcast_in_dim, reshape, transpose, reverse

def _broadcast_in_dim_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if ct is None or not is_differentiable(x.dtype):
        return [None]
    dims, shape = attrs["broadcast_dimensions"], attrs["shape"]
    stretched = {d for size, d in zip(x.shape, dims) if size == 1 and shape[d] != 1}
    summed = [d for d in range(len(shape)) if d not in dims or d in stretched]
    return [ops.reshape(ops.reduce(ct, "sum", summed), x.shape)]


def _broadcast_in_dim_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    size = x.shape[d]
    x = to_front(x, d, size)
    shape = (size,) + tuple(attrs["shape"])
    return [ops.broadcast_in_dim(x, shape, (0,) + tuple(a + 1 for a in attrs["broadcast_dimensions"]))], [0]


P.broadcast_in_dim.register(vjp=_broadcast_in_dim_vjp, batch=_broadcast_in_dim_batch, jvp=linear_jvp(
    lambda a, t, xs: ops.broadcast_in_dim(t, a["shape"], a["broadcast_dimensions"])))


def _reshape_vjp(attrs, operands, results, cts):
    return [None if cts[0] is None else ops.reshape(cts[0], operands[0].shape)]


def _reshape_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    size = x.shape[d]
    return [ops.reshape(to_front(x, d, size), (size,) + tuple(attrs["shape"]))], [0]


P.reshape.register(vjp=_reshape_vjp, jvp=linear_jvp(lambda a, t, xs: ops.reshape(t, a["shape"])),
                   batch=_reshape_batch)


def _transpose_vjp(attrs, operands, results, cts):
    if cts[0] is None:
        return [None]
    return [ops.transpose(cts[0], tuple(np.argsort(attrs["permutation"])))]


def _transpose_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    perm = (d,) + shift_axes(attrs["permutation"], d)
    return [ops.transpose(x, perm)], [0]


P.transpose.register(vjp=_transpose_vjp, jvp=linear_jvp(lambda a, t, xs: ops.transpose(t, a["permutation"])),
                     batch=_transpose_batch)


def _reverse_vjp(attrs, operands, results, cts):
    return [None if cts[0] is None else ops.reverse(cts[0], attrs["dimensions"])]


def _reverse_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    return [ops.reverse(x, shift_axes(attrs["dimensions"], d))], [d]


P.reverse.register(vjp=_reverse_vjp, jvp=linear_jvp(lambda a, t, xs: ops.reverse(t, a["dimensions"])),
                   batch=_reverse_batch)


# ---------------------------------------------------------------- concatenate, pad

def _concatenate_vjp(attrs, operands, results, cts):
    (ct,), dim = cts, attrs["dimension"]
    if ct is None or not is_differentiable(operands[0].dtype):
        return [None] * len(operands)
    out, offset = [], 0
    for x in operands:
        start = [0] * ct.ndim
        start[dim] = offset
        limit = list(ct.shape)
        limit[dim] = offset + x.shape[dim]
        out.append(ops.slice(ct, start, limit))
        offset += x.shape[dim]
    return out


def _concatenate_jvp(attrs, operands, results, tangents):
    if all(t is None for t in tangents):
        return [None]
    return [ops.concatenate([or_zeros(t, x) for t, x in zip(tangents, operands)], attrs["dimension"])]


def _concatenate_batch(attrs, operands, dims):
    size = batch_size(operands, dims)
    xs = [to_front(x, d, size) for x, d in zip(operands, dims)]
    return [ops.concatenate(xs, attrs["dimension"] + 1)], [0]


P.concatenate.register(vjp=_concatenate_vjp, jvp=_concatenate_jvp, batch=_concatenate_batch)


def _pad_operand_ct(ct: Tracer, x_shape, low, high, interior) -> Tracer:
    """The elements of ``ct`` that the operand of pad(low, high, interior) landed on (zero where cut off)."""
    ct = ops.pad(ct, ops.constant(0, ct.dtype), [max(-lo, 0) for lo in low], [max(-hi, 0) for hi in high])
    start = [max(lo, 0) for lo in low]
    limit = [s + (d - 1) * (i + 1) + 1 if d else s for s, d, i in zip(start, x_shape, interior)]
    return ops.slice(ct, start, limit, [i + 1 for i in interior])


def _pad_vjp(attrs, operands, results, cts):
    (x, value), (ct,) = operands, cts
    if ct is None or not is_differentiable(x.dtype):
        return [None, None]
    x_ct = _pad_operand_ct(ct, x.shape, attrs["low"], attrs["high"], attrs["interior"])
    everything = range(ct.ndim)
    value_ct = ops.sub(ops.reduce(ct, "sum", everything), ops.reduce(x_ct, "sum", everything))
    return [x_ct, value_ct]


def _pad_jvp(attrs, operands, results, tangents):
    (x, value), (tx, tv) = operands, tangents
    if tx is None and tv is None:
        return [None]
    return [ops.pad(or_zeros(tx, x), or_zeros(tv, value), attrs["low"], attrs["high"], attrs["interior"])]


def _pad_batch(attrs, operands, dims):
    (x, value), (d, vd) = operands, dims
    size = batch_size(operands, dims)
    x = to_front(x, d, size)
    low, high, interior = ((0,) + tuple(attrs[k]) for k in ("low", "high", "interior"))
    if vd is None:
        return [ops.pad(x, value, low, high, interior)], [0]
    # A per-example padding value: pad with zeros, then select the padding value where the mask says so.
    padded = ops.pad(x, ops.constant(0, x.dtype), low, high, interior)
    inside = ops.full(x.shape[1:], True, np.bool_)
    mask = ops.pad(inside, ops.constant(False, np.bool_), low[1:], high[1:], interior[1:])
    mask = ops.broadcast_in_dim(mask, padded.shape, tuple(range(1, padded.ndim)))
    fill = ops.broadcast_in_dim(value, padded.shape, (vd,) if value.ndim else (0,))
    return [ops.select(mask, padded, fill)], [0]


P.pad.register(vjp=_pad_vjp, jvp=_pad_jvp, batch=_pad_batch)


# ---------------------------------------------------------------- creation

def _creation_batch(attrs, operands, dims):
    raise AssertionError("iota and constant take no operands, so the engine never batches them")


for _primitive in (P.iota, P.constant):
    _primitive.register(vjp=no_cotangents, jvp=no_tangents, batch=_creation_batch)
del _primitive
