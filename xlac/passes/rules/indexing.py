"""VJP, JVP and batching rules of the indexing primitives: slice, dynamic_slice, dynamic_update_slice, gather,
scatter (and the mutation primitives, which functionalization removes before any transform).

Gather clamps out-of-bounds start indices while scatter drops out-of-bounds windows (XLA's rules); the
rules below clamp or mask so each transposed op reads and writes the same elements as the forward one.
An overwriting scatter with several updates for one element keeps one of them (xlac's indexing sends all
but the last writer out of bounds first); its rule gives the gradient to the update that survives. A
batched gather or scatter whose indices differ per example prepends each example's position to its index
vectors.

>>> from xlac.ir import primitives as P
>>> P.gather.vjp is not None and P.scatter.batch is not None
True
"""
from __future__ import annotations

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.passes.autodiff import is_differentiable
from xlac.passes.rules.common import batch_size, linear_jvp, or_zeros, shift_axes, to_front, zeros
from xlac.trace import ops
from xlac.trace.checks import INDEX_DTYPE
from xlac.trace.tracer import Tracer

__all__: list[str] = []


# ---------------------------------------------------------------- slices

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


def _slice_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    start, limit, strides = (list(attrs[k]) for k in ("start", "limit", "strides"))
    start.insert(d, 0)
    limit.insert(d, x.shape[d])
    strides.insert(d, 1)
    return [ops.slice(x, start, limit, strides)], [d]


P.slice_.register(vjp=_slice_vjp, batch=_slice_batch, jvp=linear_jvp(
    lambda a, t, xs: ops.slice(t, a["start"], a["limit"], a["strides"])))


def _starts_vector(starts, dims, size: int) -> Tracer:
    """The start indices as one (size, n) int array, each example's starts in a row."""
    dtype = dtypes.result_type(*(s.dtype for s in starts)) if starts else np.dtype(np.int32)
    cols = [ops.convert(to_front(s, d, size), dtype) for s, d in zip(starts, dims)]
    return ops.concatenate([ops.reshape(c, (size, 1)) for c in cols], 1)


def _dynamic_slice_vjp(attrs, operands, results, cts):
    x, starts, ct = operands[0], operands[1:], cts[0]
    none = [None] * len(starts)
    if ct is None or not is_differentiable(x.dtype):
        return [None] + none
    return [ops.dynamic_update_slice(zeros(x.shape, x.dtype), ct, starts)] + none


def _dynamic_slice_batch(attrs, operands, dims):
    x, starts = operands[0], operands[1:]
    xd, start_dims = dims[0], dims[1:]
    size = batch_size(operands, dims)
    sizes = tuple(attrs["sizes"])
    if all(d is None for d in start_dims):
        zero = ops.constant(0, starts[0].dtype if starts else np.int32)
        starts = list(starts)
        starts.insert(xd, zero)
        return [ops.dynamic_slice(x, starts, sizes[:xd] + (size,) + sizes[xd:])], [xd]
    vector = _starts_vector(starts, start_dims, size)
    if xd is None:           # one window of the shared operand per example
        out = ops.gather(x, vector, offset_dims=tuple(range(1, x.ndim + 1)), collapsed_slice_dims=(),
                         start_index_map=tuple(range(x.ndim)), slice_sizes=sizes)
        return [out], [0]
    x = to_front(x, xd, size)
    indices = _with_batch_index(vector, size)
    out = ops.gather(x, indices, offset_dims=tuple(range(1, x.ndim)), collapsed_slice_dims=(0,),
                     start_index_map=tuple(range(x.ndim)), slice_sizes=(1,) + sizes)
    return [out], [0]


P.dynamic_slice.register(vjp=_dynamic_slice_vjp, batch=_dynamic_slice_batch, jvp=linear_jvp(
    lambda a, t, xs: ops.dynamic_slice(t, xs[1:], a["sizes"])))


def _dynamic_update_slice_vjp(attrs, operands, results, cts):
    x, update, starts, ct = operands[0], operands[1], operands[2:], cts[0]
    none = [None] * len(starts)
    if ct is None or not is_differentiable(x.dtype):
        return [None, None] + none
    x_ct = ops.dynamic_update_slice(ct, zeros(update.shape, update.dtype), starts)
    return [x_ct, ops.dynamic_slice(ct, starts, update.shape)] + none


def _dynamic_update_slice_jvp(attrs, operands, results, tangents):
    x, update, starts = operands[0], operands[1], operands[2:]
    tx, tu = tangents[0], tangents[1]
    if tx is None and tu is None:
        return [None]
    return [ops.dynamic_update_slice(or_zeros(tx, x), or_zeros(tu, update), starts)]


def _dynamic_update_slice_batch(attrs, operands, dims):
    x, update, starts = operands[0], operands[1], operands[2:]
    xd, upd_d, start_dims = dims[0], dims[1], dims[2:]
    size = batch_size(operands, dims)
    if all(d is None for d in start_dims):
        x, update = to_front(x, xd, size), to_front(update, upd_d, size)
        zero = ops.constant(0, starts[0].dtype if starts else np.int32)
        return [ops.dynamic_update_slice(x, update, [zero] + list(starts))], [0]
    x, update = to_front(x, xd, size), to_front(update, upd_d, size)
    vector = _starts_vector(starts, start_dims, size)
    # dynamic_update_slice clamps starts so the update fits; scatter would drop it instead: clamp first.
    limit = np.array([xs - us for xs, us in zip(x.shape[1:], update.shape[1:])], dtype=vector.dtype)
    vector = ops.clamp(ops.full(vector.shape, 0, vector.dtype), vector,
                       ops.broadcast_in_dim(ops.constant(limit), vector.shape, (1,)))
    indices = _with_batch_index(vector, size)
    out = ops.scatter(x, indices, update, update_window_dims=tuple(range(1, x.ndim)), inserted_window_dims=(0,),
                      scatter_dims_to_operand_dims=tuple(range(x.ndim)), mode="set")
    return [out], [0]


P.dynamic_update_slice.register(vjp=_dynamic_update_slice_vjp, jvp=_dynamic_update_slice_jvp,
                                batch=_dynamic_update_slice_batch)


# ---------------------------------------------------------------- gather and scatter

def _with_batch_index(indices: Tracer, size: int) -> Tracer:
    """Indices (batch axis first, index vector last) with each example's batch position prepended to its
    index vector, so a gather/scatter on the batched operand reaches its own example."""
    dtype = indices.dtype
    if np.iinfo(dtype).max < size:
        indices, dtype = ops.convert(indices, np.int32), np.dtype(np.int32)
    position = ops.iota(indices.shape[:-1] + (1,), dtype, 0)
    return ops.concatenate([position, indices], indices.ndim - 1)


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
    if ct is None or not is_differentiable(x.dtype):
        return [None, None]
    # gather clamps start indices into range; scatter would drop them instead, so clamp first.
    limits = _index_limits(indices, attrs["start_index_map"], x.shape, attrs["slice_sizes"])
    clamped = ops.clamp(zeros(indices.shape, indices.dtype), indices, limits)
    x_ct = ops.scatter(zeros(x.shape, x.dtype), clamped, ct, mode="add", **_scatter_numbers(attrs))
    return [x_ct, None]


def _gather_batch(attrs, operands, dims):
    (x, indices), (xd, id_) = operands, dims
    size = batch_size(operands, dims)
    offset_dims = tuple(attrs["offset_dims"])
    collapsed = tuple(attrs["collapsed_slice_dims"])
    start_map = tuple(attrs["start_index_map"])
    slice_sizes = tuple(attrs["slice_sizes"])
    operand_bd = tuple(attrs.get("operand_batching_dims", ()))
    indices_bd = tuple(attrs.get("start_indices_batching_dims", ()))
    if id_ is None:          # the batch axis becomes the first window (offset) axis of the result
        x = to_front(x, xd, size)
        out = ops.gather(x, indices, offset_dims=(0,) + shift_axes(offset_dims, 0), collapsed_slice_dims=shift_axes(collapsed, 0),
                         start_index_map=shift_axes(start_map, 0), slice_sizes=(size,) + slice_sizes,
                         operand_batching_dims=shift_axes(operand_bd, 0), start_indices_batching_dims=indices_bd)
        return [out], [0]
    indices = to_front(indices, id_, size)
    if xd is None:           # the batch axis of the indices becomes the first batch axis of the result
        out = ops.gather(x, indices, offset_dims=shift_axes(offset_dims, 0), collapsed_slice_dims=collapsed,
                         start_index_map=start_map, slice_sizes=slice_sizes, operand_batching_dims=operand_bd,
                         start_indices_batching_dims=shift_axes(indices_bd, 0))
        return [out], [0]
    x = to_front(x, xd, size)
    out = ops.gather(x, _with_batch_index(indices, size), offset_dims=shift_axes(offset_dims, 0),
                     collapsed_slice_dims=(0,) + shift_axes(collapsed, 0), start_index_map=(0,) + shift_axes(start_map, 0),
                     slice_sizes=(1,) + slice_sizes, operand_batching_dims=shift_axes(operand_bd, 0),
                     start_indices_batching_dims=shift_axes(indices_bd, 0))
    return [out], [0]


P.gather.register(vjp=_gather_vjp, jvp=linear_jvp(lambda a, t, xs: ops.gather(t, xs[1], **a)),
                  batch=_gather_batch)


def _scatter_parts(attrs, operands):
    x, indices, updates = operands
    return x, indices, updates, _gather_numbers(attrs, x.shape, updates)


def _update_mask(attrs, x_shape, indices: Tracer, updates: Tracer) -> Tracer:
    """bool, shaped like ``updates``: whether each update's window lies inside the operand (XLA's scatter
    skips a window that does not)."""
    window = _window_sizes(attrs, x_shape, updates)
    limits = _index_limits(indices, attrs["scatter_dims_to_operand_dims"], x_shape, window)
    inside = ops.and_(ops.compare(indices, zeros(indices.shape, indices.dtype), "GE"),
                        ops.compare(indices, limits, "LE"))
    inside = ops.reduce(inside, "and", (indices.ndim - 1,))
    scatter_dims = [d for d in range(updates.ndim) if d not in attrs["update_window_dims"]]
    return ops.broadcast_in_dim(inside, updates.shape, scatter_dims)


def _masked(mask: Tracer, x: Tracer) -> Tracer:
    return ops.select(mask, x, zeros(x.shape, x.dtype))


def _surviving_updates(attrs, x: Tracer, indices: Tracer, updates: Tracer) -> Tracer:
    """bool, shaped like ``updates``: whether each update element is the one an overwriting scatter keeps
    (the last of several writes to one element; none of those dropped out of bounds)."""
    ids = ops.reshape(ops.iota((updates.size,), INDEX_DTYPE, 0), updates.shape)
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    winners = ops.scatter(ops.full(x.shape, -1, INDEX_DTYPE), indices, ids, mode="max", **numbers)
    landed = ops.gather(winners, indices, **_gather_numbers(attrs, x.shape, updates))
    return ops.compare(landed, ids, "EQ")


def _scatter_set_vjp(attrs, x, indices, updates, ct, gather_numbers):
    x_ct = ops.scatter(ct, indices, zeros(updates.shape, updates.dtype), **attrs)
    kept = _surviving_updates(attrs, x, indices, updates)
    return x_ct, _masked(kept, ops.gather(ct, indices, **gather_numbers))


def _scatter_add_vjp(attrs, x, indices, updates, ct, gather_numbers):
    inside = _update_mask(attrs, x.shape, indices, updates)
    return ct, _masked(inside, ops.gather(ct, indices, **gather_numbers))


def _product_of_others(attrs, x, indices, updates, gather_numbers) -> Tracer:
    """Per update, the product of the other updates combined into the same element (exact with zeros:
    the product of the nonzero ones, and the number of zero ones)."""
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    one, zero = ops.full(updates.shape, 1, updates.dtype), zeros(updates.shape, updates.dtype)
    is_zero = ops.compare(updates, zero, "EQ")
    nonzero = ops.scatter(ops.full(x.shape, 1, x.dtype), indices, ops.select(is_zero, one, updates),
                          mode="mul", **numbers)
    zero_count = ops.scatter(zeros(x.shape, x.dtype), indices, ops.select(is_zero, one, zero), mode="add", **numbers)
    nonzero, zero_count = (ops.gather(v, indices, **gather_numbers) for v in (nonzero, zero_count))
    no_other_zero = ops.compare(ops.sub(zero_count, ops.select(is_zero, one, zero)), zero, "EQ")
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
    if ct is None or not is_differentiable(x.dtype):
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
    if (tx is None and tu is None) or not is_differentiable(x.dtype):
        return [None]
    tx, tu = or_zeros(tx, x), or_zeros(tu, updates)
    mode = attrs.get("mode", "set")
    numbers = {k: v for k, v in attrs.items() if k != "mode"}
    if mode in ("set", "add"):
        return [ops.scatter(tx, indices, tu, **attrs)]
    if mode == "mul":
        factor = ops.scatter(ops.full(x.shape, 1, x.dtype), indices, updates, mode="mul", **numbers)
        others = _product_of_others(attrs, x, indices, updates, gather_numbers)
        spread = ops.scatter(zeros(x.shape, x.dtype), indices, ops.mul(tu, others), mode="add", **numbers)
        return [ops.add(ops.mul(tx, factor), ops.mul(x, spread))]
    x_won, u_won, count = _extremal_parts(attrs, x, indices, updates, results[0], gather_numbers)
    total = ops.scatter(_masked(x_won, tx), indices, _masked(u_won, tu), mode="add", **numbers)
    return [ops.div(total, count)]


def _scatter_batch(attrs, operands, dims):
    (x, indices, updates), (xd, id_, ud) = operands, dims
    size = batch_size(operands, dims)
    window = tuple(attrs["update_window_dims"])
    inserted = tuple(attrs["inserted_window_dims"])
    to_operand = tuple(attrs["scatter_dims_to_operand_dims"])
    input_bd = tuple(attrs.get("input_batching_dims", ()))
    indices_bd = tuple(attrs.get("scatter_indices_batching_dims", ()))
    mode = attrs.get("mode", "set")
    x, updates = to_front(x, xd, size), to_front(updates, ud, size)
    if id_ is None:          # the batch axis is the first window axis of operand and updates
        out = ops.scatter(x, indices, updates, update_window_dims=(0,) + shift_axes(window, 0),
                          inserted_window_dims=shift_axes(inserted, 0), scatter_dims_to_operand_dims=shift_axes(to_operand, 0),
                          mode=mode, input_batching_dims=shift_axes(input_bd, 0), scatter_indices_batching_dims=indices_bd)
        return [out], [0]
    indices = _with_batch_index(to_front(indices, id_, size), size)
    out = ops.scatter(x, indices, updates, update_window_dims=shift_axes(window, 0),
                      inserted_window_dims=(0,) + shift_axes(inserted, 0),
                      scatter_dims_to_operand_dims=(0,) + shift_axes(to_operand, 0), mode=mode,
                      input_batching_dims=shift_axes(input_bd, 0), scatter_indices_batching_dims=shift_axes(indices_bd, 0))
    return [out], [0]


P.scatter.register(vjp=_scatter_vjp, jvp=_scatter_jvp, batch=_scatter_batch)


# ---------------------------------------------------------------- mutation (removed by functionalization)

def _unbatchable(name):
    def rule(attrs, operands, dims):
        raise NotImplementedError(f"vmap: {name} never reaches the batching pass (functionalization removes it)")
    return rule


P.copy.register(batch=_unbatchable("copy"))
P.store.register(batch=_unbatchable("store"))
