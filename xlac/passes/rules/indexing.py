"""Batching rules: for each primitive, how to apply it to operands that carry a batch axis.

A rule is ``rule(attrs, operands, dims) -> (results, result_dims)``: ``dims[i]`` is the batch axis of
operand ``i`` (``None``: not batched, the same for every example); the rule emits the batched
computation into the current trace and says where each result's batch axis lies. The engine
(:mod:`xlac.passes.batching`) calls a rule only when some operand is batched. Rules are attached to
the primitives (``primitive.batch``) when this module is imported, one for every primitive of the
catalog except the mutation primitives, which functionalization removes first.

>>> from xlac.ir import primitives as P
>>> P.dot_general.batch is not None and P.gather.batch is not None
True
"""
from __future__ import annotations

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.primitive import CATALOG
from xlac.passes.batching import move_batch_axis
from xlac.trace import ops
from xlac.trace.tracer import Tracer

def _rule(*prims):
    def register(fn):
        for prim in prims:
            prim.register(batch=fn)
        return fn
    return register


def _size(operands, dims) -> int:
    return next(x.shape[d] for x, d in zip(operands, dims) if d is not None)


def _shift(axes, dim: int):
    """Axes of an unbatched array renumbered for the batched array whose batch axis is ``dim``."""
    return tuple(a if a < dim else a + 1 for a in axes)


def _front(x: Tracer, dim, size: int) -> Tracer:
    """``x`` with its batch axis first (broadcast when unbatched)."""
    return move_batch_axis(x, dim, 0, size)


# ---------------------------------------------------------------- elementwise


def _align(operands, dims, scalars_stay: bool = False):
    """Operands of one shape brought to one batch axis: the common one if the batched operands agree,
    else 0. With ``scalars_stay`` (select's predicate, clamp's bounds), operands may be 0-d per example:
    unbatched ones stay 0-d, batched ones are broadcast to the full shape."""
    size = _size(operands, dims)
    batched = {d for d in dims if d is not None}
    target = batched.pop() if len(batched) == 1 else 0
    example_shape = max((x.shape[:d] + x.shape[d + 1:] if d is not None else x.shape
                         for x, d in zip(operands, dims)), key=len)
    full_shape = example_shape[:target] + (size,) + example_shape[target:]
    out = []
    for x, d in zip(operands, dims):
        example_rank = x.ndim - (d is not None)
        if example_rank == len(example_shape):
            out.append(move_batch_axis(x, d, target, size))
        elif d is None:
            out.append(x)
        else:
            out.append(ops.broadcast_in_dim(x, full_shape, (target,)))
    return out, target


def _elementwise(prim, scalars_stay: bool = False):
    def rule(attrs, operands, dims):
        aligned, target = _align(operands, dims, scalars_stay)
        out = ops.bind(prim, *aligned, **attrs)
        return [out], [target]
    return rule


for _prim in CATALOG.values():
    if _prim.category in ("unary", "binary", "compare", "convert", "identity") and _prim is not P.bitcast_convert:
        _rule(_prim)(_elementwise(_prim))
_rule(P.select)(_elementwise(P.select, scalars_stay=True))
_rule(P.clamp)(_elementwise(P.clamp, scalars_stay=True))


@_rule(P.bitcast_convert)
def _bitcast(attrs, operands, dims):
    (x,), (d,) = operands, dims
    return [ops.bind(P.bitcast_convert, _front(x, d, 0), **attrs)], [0]


# ---------------------------------------------------------------- creation (never batched)


@_rule(P.iota, P.constant)
def _creation(attrs, operands, dims):
    raise AssertionError("iota and constant take no operands, so the engine never batches them")


# ---------------------------------------------------------------- shapes and data movement


@_rule(P.broadcast_in_dim)
def _broadcast_in_dim(attrs, operands, dims):
    (x,), (d,) = operands, dims
    size = x.shape[d]
    x = _front(x, d, size)
    shape = (size,) + tuple(attrs["shape"])
    return [ops.broadcast_in_dim(x, shape, (0,) + tuple(a + 1 for a in attrs["broadcast_dimensions"]))], [0]


@_rule(P.reshape)
def _reshape(attrs, operands, dims):
    (x,), (d,) = operands, dims
    size = x.shape[d]
    return [ops.reshape(_front(x, d, size), (size,) + tuple(attrs["shape"]))], [0]


@_rule(P.transpose)
def _transpose(attrs, operands, dims):
    (x,), (d,) = operands, dims
    perm = (d,) + _shift(attrs["permutation"], d)
    return [ops.transpose(x, perm)], [0]


@_rule(P.reverse)
def _reverse(attrs, operands, dims):
    (x,), (d,) = operands, dims
    return [ops.reverse(x, _shift(attrs["dimensions"], d))], [d]


@_rule(P.slice_)
def _slice(attrs, operands, dims):
    (x,), (d,) = operands, dims
    start, limit, strides = (list(attrs[k]) for k in ("start", "limit", "strides"))
    start.insert(d, 0)
    limit.insert(d, x.shape[d])
    strides.insert(d, 1)
    return [ops.slice(x, start, limit, strides)], [d]


@_rule(P.concatenate)
def _concatenate(attrs, operands, dims):
    size = _size(operands, dims)
    xs = [_front(x, d, size) for x, d in zip(operands, dims)]
    return [ops.concatenate(xs, attrs["dimension"] + 1)], [0]


@_rule(P.pad)
def _pad(attrs, operands, dims):
    (x, value), (d, vd) = operands, dims
    size = _size(operands, dims)
    x = _front(x, d, size)
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


# ---------------------------------------------------------------- reductions, contraction, sort


@_rule(P.reduce)
def _reduce(attrs, operands, dims):
    (x,), (d,) = operands, dims
    axes = _shift(attrs["axes"], d)
    out_dim = d - sum(a < d for a in axes)
    return [ops.reduce(x, attrs["op"], axes)], [out_dim]


@_rule(P.cumulative)
def _cumulative(attrs, operands, dims):
    (x,), (d,) = operands, dims
    (axis,) = _shift((attrs["axis"],), d)
    return [ops.cumulative(x, attrs["op"], axis, attrs["reverse"])], [d]


def _arg_reduce(prim):
    def rule(attrs, operands, dims):
        (x,), (d,) = operands, dims
        (axis,) = _shift((attrs["axis"],), d)
        out = ops.bind(prim, x, axis=axis, index_dtype=attrs["index_dtype"])
        return [out], [d - (axis < d)]
    return rule


_rule(P.argmax)(_arg_reduce(P.argmax))
_rule(P.argmin)(_arg_reduce(P.argmin))


@_rule(P.dot_general)
def _dot_general(attrs, operands, dims):
    (lhs, rhs), (ld, rd) = operands, dims
    (lc, rc), (lb, rb) = attrs["contracting"], attrs["batch"]
    pref = attrs.get("preferred_dtype")
    if ld is not None and rd is not None:
        size = lhs.shape[ld]
        lhs, rhs = _front(lhs, ld, size), _front(rhs, rd, size)
        contracting = (_shift(lc, 0), _shift(rc, 0))
        batch = ((0,) + _shift(lb, 0), (0,) + _shift(rb, 0))
        return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [0]
    if ld is not None:
        contracting, batch = (_shift(lc, ld), tuple(rc)), (_shift(lb, ld), tuple(rb))
        lhs_free = [a for a in range(lhs.ndim) if a not in contracting[0] and a not in batch[0]]
        return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [len(lb) + lhs_free.index(ld)]
    contracting, batch = (tuple(lc), _shift(rc, rd)), (tuple(lb), _shift(rb, rd))
    n_lhs_free = lhs.ndim - len(lc) - len(lb)
    rhs_free = [a for a in range(rhs.ndim) if a not in contracting[1] and a not in batch[1]]
    return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [len(lb) + n_lhs_free + rhs_free.index(rd)]


@_rule(P.sort)
def _sort(attrs, operands, dims):
    size = _size(operands, dims)
    xs = [_front(x, d, size) for x, d in zip(operands, dims)]
    outs = ops.sort(xs, attrs["dimension"] + 1, is_stable=attrs.get("is_stable", True),
                    num_keys=attrs.get("num_keys", 1))
    return list(outs), [0] * len(outs)


# ---------------------------------------------------------------- gather and scatter


def _with_batch_index(indices: Tracer, size: int) -> Tracer:
    """Indices (batch axis first, index vector last) with each example's batch position prepended to its
    index vector, so a gather/scatter on the batched operand reaches its own example."""
    dtype = indices.dtype
    if np.iinfo(dtype).max < size:
        indices, dtype = ops.convert(indices, np.int32), np.dtype(np.int32)
    position = ops.iota(indices.shape[:-1] + (1,), dtype, 0)
    return ops.concatenate([position, indices], indices.ndim - 1)


@_rule(P.gather)
def _gather(attrs, operands, dims):
    (x, indices), (xd, id_) = operands, dims
    size = _size(operands, dims)
    offset_dims = tuple(attrs["offset_dims"])
    collapsed = tuple(attrs["collapsed_slice_dims"])
    start_map = tuple(attrs["start_index_map"])
    slice_sizes = tuple(attrs["slice_sizes"])
    operand_bd = tuple(attrs.get("operand_batching_dims", ()))
    indices_bd = tuple(attrs.get("start_indices_batching_dims", ()))
    if id_ is None:          # the batch axis becomes the first window (offset) axis of the result
        x = _front(x, xd, size)
        out = ops.gather(x, indices, offset_dims=(0,) + _shift(offset_dims, 0), collapsed_slice_dims=_shift(collapsed, 0),
                         start_index_map=_shift(start_map, 0), slice_sizes=(size,) + slice_sizes,
                         operand_batching_dims=_shift(operand_bd, 0), start_indices_batching_dims=indices_bd)
        return [out], [0]
    indices = _front(indices, id_, size)
    if xd is None:           # the batch axis of the indices becomes the first batch axis of the result
        out = ops.gather(x, indices, offset_dims=_shift(offset_dims, 0), collapsed_slice_dims=collapsed,
                         start_index_map=start_map, slice_sizes=slice_sizes, operand_batching_dims=operand_bd,
                         start_indices_batching_dims=_shift(indices_bd, 0))
        return [out], [0]
    x = _front(x, xd, size)
    out = ops.gather(x, _with_batch_index(indices, size), offset_dims=_shift(offset_dims, 0),
                     collapsed_slice_dims=(0,) + _shift(collapsed, 0), start_index_map=(0,) + _shift(start_map, 0),
                     slice_sizes=(1,) + slice_sizes, operand_batching_dims=_shift(operand_bd, 0),
                     start_indices_batching_dims=_shift(indices_bd, 0))
    return [out], [0]


@_rule(P.scatter)
def _scatter(attrs, operands, dims):
    (x, indices, updates), (xd, id_, ud) = operands, dims
    size = _size(operands, dims)
    window = tuple(attrs["update_window_dims"])
    inserted = tuple(attrs["inserted_window_dims"])
    to_operand = tuple(attrs["scatter_dims_to_operand_dims"])
    input_bd = tuple(attrs.get("input_batching_dims", ()))
    indices_bd = tuple(attrs.get("scatter_indices_batching_dims", ()))
    mode = attrs.get("mode", "set")
    x, updates = _front(x, xd, size), _front(updates, ud, size)
    if id_ is None:          # the batch axis is the first window axis of operand and updates
        out = ops.scatter(x, indices, updates, update_window_dims=(0,) + _shift(window, 0),
                          inserted_window_dims=_shift(inserted, 0), scatter_dims_to_operand_dims=_shift(to_operand, 0),
                          mode=mode, input_batching_dims=_shift(input_bd, 0), scatter_indices_batching_dims=indices_bd)
        return [out], [0]
    indices = _with_batch_index(_front(indices, id_, size), size)
    out = ops.scatter(x, indices, updates, update_window_dims=_shift(window, 0),
                      inserted_window_dims=(0,) + _shift(inserted, 0),
                      scatter_dims_to_operand_dims=(0,) + _shift(to_operand, 0), mode=mode,
                      input_batching_dims=_shift(input_bd, 0), scatter_indices_batching_dims=_shift(indices_bd, 0))
    return [out], [0]


# ---------------------------------------------------------------- dynamic slices


def _starts_vector(starts, dims, size: int) -> Tracer:
    """The start indices as one (size, n) int array, each example's starts in a row."""
    dtype = dtypes.result_type(*(s.dtype for s in starts)) if starts else np.dtype(np.int32)
    cols = [ops.convert(_front(s, d, size), dtype) for s, d in zip(starts, dims)]
    return ops.concatenate([ops.reshape(c, (size, 1)) for c in cols], 1)


@_rule(P.dynamic_slice)
def _dynamic_slice(attrs, operands, dims):
    x, starts = operands[0], operands[1:]
    xd, start_dims = dims[0], dims[1:]
    size = _size(operands, dims)
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
    x = _front(x, xd, size)
    indices = _with_batch_index(vector, size)
    out = ops.gather(x, indices, offset_dims=tuple(range(1, x.ndim)), collapsed_slice_dims=(0,),
                     start_index_map=tuple(range(x.ndim)), slice_sizes=(1,) + sizes)
    return [out], [0]


@_rule(P.dynamic_update_slice)
def _dynamic_update_slice(attrs, operands, dims):
    x, update, starts = operands[0], operands[1], operands[2:]
    xd, upd_d, start_dims = dims[0], dims[1], dims[2:]
    size = _size(operands, dims)
    if all(d is None for d in start_dims):
        x, update = _front(x, xd, size), _front(update, upd_d, size)
        zero = ops.constant(0, starts[0].dtype if starts else np.int32)
        return [ops.dynamic_update_slice(x, update, [zero] + list(starts))], [0]
    x, update = _front(x, xd, size), _front(update, upd_d, size)
    vector = _starts_vector(starts, start_dims, size)
    # dynamic_update_slice clamps starts so the update fits; scatter would drop it instead: clamp first.
    limit = np.array([xs - us for xs, us in zip(x.shape[1:], update.shape[1:])], dtype=vector.dtype)
    vector = ops.clamp(ops.full(vector.shape, 0, vector.dtype), vector,
                       ops.broadcast_in_dim(ops.constant(limit), vector.shape, (1,)))
    indices = _with_batch_index(vector, size)
    out = ops.scatter(x, indices, update, update_window_dims=tuple(range(1, x.ndim)), inserted_window_dims=(0,),
                      scatter_dims_to_operand_dims=tuple(range(x.ndim)), mode="set")
    return [out], [0]


def _unbatchable(name):
    def rule(attrs, operands, dims):
        raise NotImplementedError(f"vmap: {name} never reaches the batching pass (functionalization removes it)")
    return rule


_rule(P.copy)(_unbatchable("copy"))
_rule(P.store)(_unbatchable("store"))


from xlac.passes.rules import control, fft, linalg, sharding  # noqa: E402,F401  (their batching rules)
