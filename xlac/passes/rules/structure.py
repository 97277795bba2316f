"""VJP and JVP rules of the structural and indexing primitives (shapes, slicing, padding, gather,
scatter, sort), attached to the primitive objects at import (``P.x.vjp``, ``P.x.jvp``).

Interfaces (see :mod:`xlac.passes.autodiff`): ``vjp(attrs, operands, results, cotangents)`` returns one
cotangent per operand and ``jvp(attrs, operands, results, tangents)`` one tangent per result; ``None``
stands for zero (and for integer values, which have no derivative). Rules emit nodes into the current
trace through :mod:`xlac.trace.ops`.

Gather clamps out-of-bounds start indices while scatter drops out-of-bounds windows (XLA's rules); the
rules below clamp or mask so each transposed op reads and writes the same elements as the forward one.
An overwriting scatter with several updates for one element keeps one of them (xlac's indexing sends all
but the last writer out of bounds first); its rule gives the gradient to the update that survives.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
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

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__: list[str] = []

INDEX_DTYPE = np.dtype("int64")


def _has_derivative(x: Tracer) -> bool:
    return dtypes.is_inexact(x.dtype)


def _zeros(shape, dtype) -> Tracer:
    return ops.full(tuple(shape), 0, dtype)


def _or_zeros(t: Tracer | None, like: Tracer) -> Tracer:
    return t if t is not None else _zeros(like.shape, like.dtype)


def _linear_jvp(apply):
    """JVP of an op linear in its first operand (the rest are static-like: indices): apply it to the tangent."""
    def jvp(attrs, operands, results, tangents):
        if tangents[0] is None:
            return [None]
        return [apply(attrs, tangents[0], operands)]
    return jvp


def _attach(primitive, vjp, jvp) -> None:
    primitive.register(vjp=vjp, jvp=jvp)


# ---------------------------------------------------------------- shapes


def _broadcast_in_dim_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if ct is None or not _has_derivative(x):
        return [None]
    dims, shape = attrs["broadcast_dimensions"], attrs["shape"]
    stretched = {d for size, d in zip(x.shape, dims) if size == 1 and shape[d] != 1}
    summed = [d for d in range(len(shape)) if d not in dims or d in stretched]
    return [ops.reshape(ops.reduce(ct, "sum", summed), x.shape)]


_attach(P.broadcast_in_dim, _broadcast_in_dim_vjp, _linear_jvp(
    lambda a, t, xs: ops.broadcast_in_dim(t, a["shape"], a["broadcast_dimensions"])))


def _reshape_vjp(attrs, operands, results, cts):
    return [None if cts[0] is None else ops.reshape(cts[0], operands[0].shape)]


_attach(P.reshape, _reshape_vjp, _linear_jvp(lambda a, t, xs: ops.reshape(t, a["shape"])))


def _transpose_vjp(attrs, operands, results, cts):
    if cts[0] is None:
        return [None]
    return [ops.transpose(cts[0], tuple(np.argsort(attrs["permutation"])))]


_attach(P.transpose, _transpose_vjp, _linear_jvp(lambda a, t, xs: ops.transpose(t, a["permutation"])))


def _reverse_vjp(attrs, operands, results, cts):
    return [None if cts[0] is None else ops.reverse(cts[0], attrs["dimensions"])]


_attach(P.reverse, _reverse_vjp, _linear_jvp(lambda a, t, xs: ops.reverse(t, a["dimensions"])))


def _slice_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if ct is None:
        return [None]
    low, high, interior = [], [], []
    for size, start, stride, out in zip(x.shape, attrs["start"], attrs["strides"], ct.shape):
        covered = out + max(out - 1, 0) * (stride - 1)
        low.append(start)
        high.append(size - start - covered)
        interior.append(stride - 1)
    return [ops.pad(ct, ops.constant(0, ct.dtype), low, high, interior)]


_attach(P.slice_, _slice_vjp, _linear_jvp(
    lambda a, t, xs: ops.slice(t, a["start"], a["limit"], a["strides"])))


def _pad_operand_ct(ct: Tracer, x_shape, low, high, interior) -> Tracer:
    """The elements of ``ct`` that the operand of pad(low, high, interior) landed on (zero where cut off)."""
    ct = ops.pad(ct, ops.constant(0, ct.dtype), [max(-lo, 0) for lo in low], [max(-hi, 0) for hi in high])
    start = [max(lo, 0) for lo in low]
    limit = [s + (d - 1) * (i + 1) + 1 if d else s for s, d, i in zip(start, x_shape, interior)]
    return ops.slice(ct, start, limit, [i + 1 for i in interior])


def _pad_vjp(attrs, operands, results, cts):
    (x, value), (ct,) = operands, cts
    if ct is None or not _has_derivative(x):
        return [None, None]
    x_ct = _pad_operand_ct(ct, x.shape, attrs["low"], attrs["high"], attrs["interior"])
    everything = range(ct.ndim)
    value_ct = ops.sub(ops.reduce(ct, "sum", everything), ops.reduce(x_ct, "sum", everything))
    return [x_ct, value_ct]


def _pad_jvp(attrs, operands, results, tangents):
    (x, value), (tx, tv) = operands, tangents
    if tx is None and tv is None:
        return [None]
    return [ops.pad(_or_zeros(tx, x), _or_zeros(tv, value), attrs["low"], attrs["high"], attrs["interior"])]


_attach(P.pad, _pad_vjp, _pad_jvp)


def _concatenate_vjp(attrs, operands, results, cts):
    (ct,), dim = cts, attrs["dimension"]
    if ct is None or not _has_derivative(operands[0]):
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
    return [ops.concatenate([_or_zeros(t, x) for t, x in zip(tangents, operands)], attrs["dimension"])]


_attach(P.concatenate, _concatenate_vjp, _concatenate_jvp)


# ---------------------------------------------------------------- dynamic slices


def _dynamic_slice_vjp(attrs, operands, results, cts):
    x, starts, ct = operands[0], operands[1:], cts[0]
    none = [None] * len(starts)
    if ct is None or not _has_derivative(x):
        return [None] + none
    return [ops.dynamic_update_slice(_zeros(x.shape, x.dtype), ct, starts)] + none


_attach(P.dynamic_slice, _dynamic_slice_vjp, _linear_jvp(
    lambda a, t, xs: ops.dynamic_slice(t, xs[1:], a["sizes"])))


def _dynamic_update_slice_vjp(attrs, operands, results, cts):
    x, update, starts, ct = operands[0], operands[1], operands[2:], cts[0]
    none = [None] * len(starts)
    if ct is None or not _has_derivative(x):
        return [None, None] + none
    x_ct = ops.dynamic_update_slice(ct, _zeros(update.shape, update.dtype), starts)
    return [x_ct, ops.dynamic_slice(ct, starts, update.shape)] + none


def _dynamic_update_slice_jvp(attrs, operands, results, tangents):
    x, update, starts = operands[0], operands[1], operands[2:]
    tx, tu = tangents[0], tangents[1]
    if tx is None and tu is None:
        return [None]
    return [ops.dynamic_update_slice(_or_zeros(tx, x), _or_zeros(tu, update), starts)]


_attach(P.dynamic_update_slice, _dynamic_update_slice_vjp, _dynamic_update_slice_jvp)


# ---------------------------------------------------------------- gather and scatter


def _scatter_numbers(gather_attrs) -> dict:
    """The scatter that writes where the gather with ``gather_attrs`` reads (its transpose)."""
    return dict(update_window_dims=tuple(gather_attrs["offset_dims"]),
                inserted_window_dims=tuple(gather_attrs["collapsed_slice_dims"]),
                scatter_dims_to_operand_dims=tuple(gather_attrs["start_index_map"]),
                input_batching_dims=tuple(gather_attrs.get("operand_batching_dims", ())),
                scatter_indices_batching_dims=tuple(gather_attrs.get("start_indices_batching_dims", ())))


def _window_sizes(attrs, x_shape, updates: Tracer) -> list[int]:
    """Per operand axis, the extent of one scatter update window."""
    dropped = set(attrs["inserted_window_dims"]) | set(attrs.get("input_batching_dims", ()))
    window = iter(updates.shape[d] for d in attrs["update_window_dims"])
    return [1 if d in dropped else next(window) for d in range(len(x_shape))]


def _gather_numbers(scatter_attrs, x_shape, updates: Tracer) -> dict:
    """The gather that reads where the scatter with ``scatter_attrs`` writes."""
    return dict(offset_dims=tuple(scatter_attrs["update_window_dims"]),
                collapsed_slice_dims=tuple(scatter_attrs["inserted_window_dims"]),
                start_index_map=tuple(scatter_attrs["scatter_dims_to_operand_dims"]),
                slice_sizes=tuple(_window_sizes(scatter_attrs, x_shape, updates)),
                operand_batching_dims=tuple(scatter_attrs.get("input_batching_dims", ())),
                start_indices_batching_dims=tuple(scatter_attrs.get("scatter_indices_batching_dims", ())))


def _index_limits(indices: Tracer, index_map, x_shape, window) -> Tracer:
    """Per index-vector entry, the largest start that keeps the window inside the operand."""
    limits = np.array([x_shape[d] - window[d] for d in index_map], indices.dtype)
    return ops.broadcast_in_dim(ops.constant(limits, indices.dtype), indices.shape, (indices.ndim - 1,))


def _gather_vjp(attrs, operands, results, cts):
    (x, indices), (ct,) = operands, cts
    if ct is None or not _has_derivative(x):
        return [None, None]
    # gather clamps start indices into range; scatter would drop them instead, so clamp first.
    limits = _index_limits(indices, attrs["start_index_map"], x.shape, attrs["slice_sizes"])
    clamped = ops.clamp(_zeros(indices.shape, indices.dtype), indices, limits)
    x_ct = ops.scatter(_zeros(x.shape, x.dtype), clamped, ct, mode="add", **_scatter_numbers(attrs))
    return [x_ct, None]


_attach(P.gather, _gather_vjp, _linear_jvp(lambda a, t, xs: ops.gather(t, xs[1], **a)))


def _scatter_parts(attrs, operands):
    x, indices, updates = operands
    return x, indices, updates, _gather_numbers(attrs, x.shape, updates)


def _update_mask(attrs, x_shape, indices: Tracer, updates: Tracer) -> Tracer:
    """bool, shaped like ``updates``: whether each update's window lies inside the operand (XLA's scatter
    skips a window that does not)."""
    window = _window_sizes(attrs, x_shape, updates)
    limits = _index_limits(indices, attrs["scatter_dims_to_operand_dims"], x_shape, window)
    inside = ops.and_(ops.compare(indices, _zeros(indices.shape, indices.dtype), "GE"),
                        ops.compare(indices, limits, "LE"))
    inside = ops.reduce(inside, "and", (indices.ndim - 1,))
    scatter_dims = [d for d in range(updates.ndim) if d not in attrs["update_window_dims"]]
    return ops.broadcast_in_dim(inside, updates.shape, scatter_dims)


def _masked(mask: Tracer, x: Tracer) -> Tracer:
    return ops.select(mask, x, _zeros(x.shape, x.dtype))


def _surviving_updates(attrs, x: Tracer, indices: Tracer, updates: Tracer) -> Tracer:
    """bool, shaped like ``updates``: whether each update element is the one an overwriting scatter keeps
    (the last of several writes to one element; none of those dropped out of bounds)."""
    ids = ops.reshape(ops.iota((updates.size,), INDEX_DTYPE, 0), updates.shape)
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    winners = ops.scatter(ops.full(x.shape, -1, INDEX_DTYPE), indices, ids, mode="max", **numbers)
    landed = ops.gather(winners, indices, **_gather_numbers(attrs, x.shape, updates))
    return ops.compare(landed, ids, "EQ")


def _scatter_set_vjp(attrs, x, indices, updates, ct, gather_numbers):
    x_ct = ops.scatter(ct, indices, _zeros(updates.shape, updates.dtype), **attrs)
    kept = _surviving_updates(attrs, x, indices, updates)
    return x_ct, _masked(kept, ops.gather(ct, indices, **gather_numbers))


def _scatter_add_vjp(attrs, x, indices, updates, ct, gather_numbers):
    inside = _update_mask(attrs, x.shape, indices, updates)
    return ct, _masked(inside, ops.gather(ct, indices, **gather_numbers))


def _product_of_others(attrs, x, indices, updates, gather_numbers) -> Tracer:
    """Per update, the product of the other updates combined into the same element (exact with zeros:
    the product of the nonzero ones, and the number of zero ones)."""
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    one, zero = ops.full(updates.shape, 1, updates.dtype), _zeros(updates.shape, updates.dtype)
    is_zero = ops.compare(updates, zero, "EQ")
    nonzero = ops.scatter(ops.full(x.shape, 1, x.dtype), indices, ops.select(is_zero, one, updates),
                          mode="mul", **numbers)
    zeros = ops.scatter(_zeros(x.shape, x.dtype), indices, ops.select(is_zero, one, zero), mode="add", **numbers)
    nonzero, zeros = (ops.gather(v, indices, **gather_numbers) for v in (nonzero, zeros))
    no_other_zero = ops.compare(ops.sub(zeros, ops.select(is_zero, one, zero)), zero, "EQ")
    others = ops.select(is_zero, nonzero, ops.div(nonzero, ops.select(is_zero, one, updates)))
    return ops.select(no_other_zero, others, zero)


def _scatter_mul_vjp(attrs, x, indices, updates, ct, gather_numbers):
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    factor = ops.scatter(ops.full(x.shape, 1, x.dtype), indices, updates, mode="mul", **numbers)
    others = _product_of_others(attrs, x, indices, updates, gather_numbers)
    u_ct = ops.mul(ops.gather(ops.mul(ct, x), indices, **gather_numbers), others)
    return ops.mul(ct, factor), _masked(_update_mask(attrs, x.shape, indices, updates), u_ct)


def _extremal_parts(attrs, x, indices, updates, result, gather_numbers):
    """Which operand and update elements equal the result they fed (ties share the gradient), and per
    operand element how many did."""
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    x_won = ops.compare(x, result, "EQ")
    u_won = ops.and_(ops.compare(updates, ops.gather(result, indices, **gather_numbers), "EQ"),
                       _update_mask(attrs, x.shape, indices, updates))
    as_float = lambda b: ops.convert(b, x.dtype)  # noqa: E731
    count = ops.scatter(as_float(x_won), indices, as_float(u_won), mode="add", **numbers)
    return x_won, u_won, count


def _scatter_extremal_vjp(attrs, x, indices, updates, ct, gather_numbers, result):
    x_won, u_won, count = _extremal_parts(attrs, x, indices, updates, result, gather_numbers)
    shared = ops.div(ct, count)
    return _masked(x_won, shared), _masked(u_won, ops.gather(shared, indices, **gather_numbers))


def _scatter_vjp(attrs, operands, results, cts):
    x, indices, updates, gather_numbers = _scatter_parts(attrs, operands)
    ct = cts[0]
    if ct is None or not _has_derivative(x):
        return [None, None, None]
    mode = attrs.get("mode", "set")
    if mode in ("max", "min"):
        x_ct, u_ct = _scatter_extremal_vjp(attrs, x, indices, updates, ct, gather_numbers, results[0])
    else:
        rule = {"set": _scatter_set_vjp, "add": _scatter_add_vjp, "mul": _scatter_mul_vjp}[mode]
        x_ct, u_ct = rule(attrs, x, indices, updates, ct, gather_numbers)
    return [x_ct, None, u_ct]


def _scatter_jvp(attrs, operands, results, tangents):
    x, indices, updates, gather_numbers = _scatter_parts(attrs, operands)
    tx, tu = tangents[0], tangents[2]
    if (tx is None and tu is None) or not _has_derivative(x):
        return [None]
    tx, tu = _or_zeros(tx, x), _or_zeros(tu, updates)
    mode = attrs.get("mode", "set")
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    if mode in ("set", "add"):
        return [ops.scatter(tx, indices, tu, **attrs)]
    if mode == "mul":
        factor = ops.scatter(ops.full(x.shape, 1, x.dtype), indices, updates, mode="mul", **numbers)
        others = _product_of_others(attrs, x, indices, updates, gather_numbers)
        spread = ops.scatter(_zeros(x.shape, x.dtype), indices, ops.mul(tu, others), mode="add", **numbers)
        return [ops.add(ops.mul(tx, factor), ops.mul(x, spread))]
    x_won, u_won, count = _extremal_parts(attrs, x, indices, updates, results[0], gather_numbers)
    total = ops.scatter(_masked(x_won, tx), indices, _masked(u_won, tu), mode="add", **numbers)
    return [ops.div(total, count)]


_attach(P.scatter, _scatter_vjp, _scatter_jvp)


# ---------------------------------------------------------------- sort


def _sort_permutation(attrs, operands) -> Tracer:
    """Where each sorted element came from along the sort dimension (the keys sorted with an iota)."""
    keys = list(operands[:attrs["num_keys"]])
    positions = ops.iota(keys[0].shape, INDEX_DTYPE, attrs["dimension"])
    sorted_all = ops.sort(keys + [positions], attrs["dimension"], is_stable=True, num_keys=len(keys))
    return sorted_all[-1]


def _sort_vjp(attrs, operands, results, cts):
    wanted = [i for i, (x, ct) in enumerate(zip(operands, cts)) if ct is not None and _has_derivative(x)]
    out = [None] * len(operands)
    if not wanted:
        return out
    permutation = _sort_permutation(attrs, operands)
    # Sorting by the permutation sends each cotangent back to where its element came from.
    unsorted = ops.sort([permutation] + [cts[i] for i in wanted], attrs["dimension"], num_keys=1)
    for i, ct in zip(wanted, unsorted[1:]):
        out[i] = ct
    return out


def _sort_jvp(attrs, operands, results, tangents):
    wanted = [i for i, (x, t) in enumerate(zip(operands, tangents)) if t is not None and _has_derivative(x)]
    out = [None] * len(operands)
    if not wanted:
        return out
    num_keys = attrs["num_keys"]
    keys = list(operands[:num_keys])
    sorted_all = ops.sort(keys + [tangents[i] for i in wanted], attrs["dimension"], is_stable=True,
                          num_keys=num_keys)
    for i, t in zip(wanted, sorted_all[num_keys:]):
        out[i] = t
    return out


_attach(P.sort, _sort_vjp, _sort_jvp)


# ---------------------------------------------------------------- complex parts and bitcasts


def _real_vjp(attrs, operands, results, cts):
    ct = cts[0]
    return [None if ct is None else ops.complex(ct, _zeros(ct.shape, ct.dtype))]


def _imag_vjp(attrs, operands, results, cts):
    ct = cts[0]
    return [None if ct is None else ops.complex(_zeros(ct.shape, ct.dtype), ops.neg(ct))]


def _complex_vjp(attrs, operands, results, cts):
    ct = cts[0]
    if ct is None:
        return [None, None]
    return [ops.bind(P.real, ct), ops.neg(ops.bind(P.imag, ct))]


def _complex_jvp(attrs, operands, results, tangents):
    if all(t is None for t in tangents):
        return [None]
    return [ops.complex(*(_or_zeros(t, x) for t, x in zip(tangents, operands)))]


_attach(P.real, _real_vjp, _linear_jvp(lambda a, t, xs: ops.bind(P.real, t)))
_attach(P.imag, _imag_vjp, _linear_jvp(lambda a, t, xs: ops.bind(P.imag, t)))
_attach(P.complex_, _complex_vjp, _complex_jvp)


def _no_derivative(attrs, operands, results, values):
    return [None] * max(len(operands), len(results))


_attach(P.bitcast_convert, _no_derivative, _no_derivative)
