"""VJP, JVP and batching rules of the reductions, contractions and sort: reduce, cumulative, argmax, argmin,
dot_general, sort; reduce_many (several reduces in one) as its reduces, one by one.

Running products, maxima and minima are differentiated as JAX differentiates cumprod, cummax and cummin;
a reduction's max/min shares the derivative among the elements equal to the result.

>>> from xlac.ir import primitives as P
>>> all(p.vjp and p.jvp and p.batch for p in (P.reduce, P.reduce_many, P.cumulative, P.dot_general, P.sort))
True
"""
from __future__ import annotations

import numpy as np

from xlac.ir import primitives as P
from xlac.passes.autodiff import forward, is_differentiable, linearize_reverse
from xlac.passes.rules.common import batch_size, no_cotangents, no_tangents, shift_axes, to_front
from xlac.trace import ops
from xlac.trace.checks import INDEX_DTYPE
from xlac.trace.inline import closed_graph
from xlac.trace.tracer import Tracer

__all__: list[str] = []


# ---------------------------------------------------------------- reduce

def _expand(y, x, axes):
    """A reduction's result (or cotangent) broadcast back to the operand's shape."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    return ops.broadcast_in_dim(y, x.shape, kept)


def _reduce_partial(op, x, y, axes):
    """d y / d x for each element of x (in x's shape)."""
    if op == "prod":
        return _product_of_others(x, axes)
    # max/min: the elements equal to the result share the derivative evenly
    hits = ops.convert(ops.compare(x, _expand(y, x, axes), "EQ"), x.dtype)
    count = _expand(ops.reduce(hits, "sum", axes), x, axes)
    return ops.div(hits, count)


def _product_of_others(x, axes):
    """For each element of x, the product of the other elements of its reduced group: exclusive running
    products from the left and from the right, multiplied (exact where elements are zero, unlike y / x)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    order = kept + sorted(axes)
    lead = tuple(x.shape[d] for d in kept)
    n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    flat = ops.reshape(ops.transpose(x, order), lead + (n,))
    last = len(lead)
    left = _exclusive_products(flat, last)
    right = ops.reverse(_exclusive_products(ops.reverse(flat, (last,)), last), (last,))
    others = ops.reshape(ops.mul(left, right), tuple(x.shape[d] for d in order))
    return ops.transpose(others, tuple(int(i) for i in np.argsort(order)))


def _exclusive_products(x, axis):
    """Running products along ``axis`` of the elements before each one (1 for the first)."""
    inclusive = ops.cumulative(x, "prod", axis)
    n = x.shape[axis]
    head = ops.slice(inclusive, (0,) * x.ndim, tuple(n - 1 if i == axis else d for i, d in enumerate(x.shape)))
    return ops.pad(head, ops.constant(1, x.dtype), tuple(1 if i == axis else 0 for i in range(x.ndim)),
                   (0,) * x.ndim)


def _reduce_vjp(attrs, operands, results, cts):
    (x,), (y,), (ct,) = operands, results, cts
    op, axes = attrs["op"], tuple(attrs["axes"])
    if not is_differentiable(x.dtype) or op in ("and", "or"):
        return [None]
    expanded = _expand(ct, x, axes)
    if op == "sum":
        return [expanded]
    return [ops.mul(expanded, _reduce_partial(op, x, y, axes))]


def _reduce_jvp(attrs, operands, results, tangents):
    (x,), (y,), (t,) = operands, results, tangents
    op, axes = attrs["op"], tuple(attrs["axes"])
    if not is_differentiable(x.dtype) or op in ("and", "or"):
        return [None]
    if op == "sum":
        return [ops.reduce(t, "sum", axes)]
    return [ops.reduce(ops.mul(t, _reduce_partial(op, x, y, axes)), "sum", axes)]


def _reduce_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    axes = shift_axes(attrs["axes"], d)
    out_dim = d - sum(a < d for a in axes)
    return [ops.reduce(x, attrs["op"], axes)], [out_dim]


P.reduce.register(vjp=_reduce_vjp, jvp=_reduce_jvp, batch=_reduce_batch)


# ---------------------------------------------------------------- reduce_many: each operand as its own reduce

def _each_reduce(rule):
    """reduce_many's VJP or JVP: ``rule`` (reduce's) applied to each operand with its op."""
    def apply(attrs, operands, results, derivatives):
        return [None if d is None else rule({"op": op, "axes": attrs["axes"]}, [x], [y], [d])[0]
                for op, x, y, d in zip(attrs["ops"], operands, results, derivatives)]
    return apply


def _reduce_many_batch(attrs, operands, dims):
    size = batch_size(operands, dims)
    xs = [to_front(x, d, size) for x, d in zip(operands, dims)]
    results = ops.reduce_many(xs, attrs["ops"], shift_axes(attrs["axes"], 0))
    return list(results), [0] * len(results)


P.reduce_many.register(vjp=_each_reduce(_reduce_vjp), jvp=_each_reduce(_reduce_jvp), batch=_reduce_many_batch)


# ---------------------------------------------------------------- cumulative

# Running sums are linear. Running products, maxima and minima are differentiated as jax differentiates
# cumprod, cummax and cummin: through its associative_scan, a log-depth tree of elementwise ops whose
# derivatives (ties of max/min split evenly, zeros of prod exact) are those of ``_tree_scan``'s combine ops.
_COMBINE = {"prod": ops.mul, "max": ops.max, "min": ops.min}


def _cumulative_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if ct is None or not is_differentiable(x.dtype):
        return [None]
    if attrs["op"] == "sum":
        return [ops.cumulative(ct, "sum", attrs["axis"], not attrs["reverse"])]
    _, backward = linearize_reverse(_tree_scan_graph(attrs, x), [x], [0])
    return backward([ct])


def _cumulative_jvp(attrs, operands, results, tangents):
    (x,), (t,) = operands, tangents
    if t is None or not is_differentiable(x.dtype):
        return [None]
    if attrs["op"] == "sum":
        return [ops.cumulative(t, "sum", attrs["axis"], attrs["reverse"])]
    _, (tangent,) = forward(_tree_scan_graph(attrs, x), [x], [t])
    return [tangent]


def _cumulative_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    (axis,) = shift_axes((attrs["axis"],), d)
    return [ops.cumulative(x, attrs["op"], axis, attrs["reverse"])], [d]


P.cumulative.register(vjp=_cumulative_vjp, jvp=_cumulative_jvp, batch=_cumulative_batch)


def _tree_scan_graph(attrs, x):
    """The graph of the running ``attrs["op"]`` of values like ``x`` as :func:`_tree_scan` computes it."""
    combine, axis = _COMBINE[attrs["op"]], attrs["axis"]

    def scan(inputs):
        v, = inputs
        if not attrs["reverse"]:
            return [_tree_scan(v, combine, axis)]
        return [ops.reverse(_tree_scan(ops.reverse(v, (axis,)), combine, axis), (axis,))]
    return closed_graph([x.value.type], scan)


def _tree_scan(x, combine, axis):
    """The running ``combine`` of ``x`` along ``axis`` as jax's ``associative_scan`` computes it: combine
    neighbouring pairs, scan those (the results at the odd positions), then combine each with the next
    element (the even positions)."""
    n = x.shape[axis]
    if n < 2:
        return x
    odd = _tree_scan(combine(_strided(x, axis, 0, n - 1), _strided(x, axis, 1, n)), combine, axis)
    followed = odd if n % 2 else _strided(odd, axis, 0, n // 2 - 1, 1)    # by an element at an even position
    even = ops.concatenate([_strided(x, axis, 0, 1, 1), combine(followed, _strided(x, axis, 2, n))], axis)
    return _interleave(even, odd, axis)


def _strided(x, axis, start, limit, stride=2):
    """``x[start:limit:stride]`` along ``axis``."""
    starts = tuple(start if d == axis else 0 for d in range(x.ndim))
    limits = tuple(limit if d == axis else size for d, size in enumerate(x.shape))
    return ops.slice(x, starts, limits, tuple(stride if d == axis else 1 for d in range(x.ndim)))


def _interleave(even, odd, axis):
    """The elements of ``even`` at the even positions along ``axis`` and those of ``odd`` between them."""
    same = even.shape[axis] == odd.shape[axis]
    return ops.add(_spread(even, axis, 0, 1 if same else 0), _spread(odd, axis, 1, 0 if same else 1))


def _spread(x, axis, low, high):
    """``x`` with a zero between neighbours along ``axis`` and ``low``, ``high`` zeros before and after."""
    def at_axis(n):
        return tuple(n if d == axis else 0 for d in range(x.ndim))
    return ops.pad(x, ops.constant(0, x.dtype), at_axis(low), at_axis(high), at_axis(1))


# ---------------------------------------------------------------- argmax, argmin

def _arg_reduce_batch(prim):
    def rule(attrs, operands, dims):
        (x,), (d,) = operands, dims
        (axis,) = shift_axes((attrs["axis"],), d)
        out = ops.bind(prim, x, axis=axis, index_dtype=attrs["index_dtype"])
        return [out], [d - (axis < d)]
    return rule


for _primitive in (P.argmax, P.argmin):
    _primitive.register(vjp=no_cotangents, jvp=no_tangents, batch=_arg_reduce_batch(_primitive))
del _primitive


# ---------------------------------------------------------------- dot_general

def _dot_operand_cotangent(ct, other, mine_ndim, my_dims, other_dims, preferred, my_dtype, lhs_side):
    """The cotangent of one dot_general operand: ct contracted with the other operand, then transposed.

    ``my_dims`` = (contracting, batch) of this operand, ``other_dims`` those of the other one."""
    (my_c, my_b), (other_c, other_b) = my_dims, other_dims
    my_free = [d for d in range(mine_ndim) if d not in my_c and d not in my_b]
    other_free = [d for d in range(other.ndim) if d not in other_c and d not in other_b]
    n_batch = len(my_b)
    # ct axes: batch, lhs free, rhs free
    if lhs_side:
        ct_mine = list(range(n_batch, n_batch + len(my_free)))
        ct_other = list(range(n_batch + len(my_free), ct.ndim))
    else:
        ct_other = list(range(n_batch, n_batch + len(other_free)))
        ct_mine = list(range(n_batch + len(other_free), ct.ndim))
    ct = ops.convert(ct, my_dtype)
    out = ops.dot_general(ct, other, (ct_other, other_free), (list(range(n_batch)), list(other_b)),
                          preferred_dtype=preferred)
    # out axes: batch (my_b order), my free (via ct_mine, in order), then other's contracting dims in
    # other's axis order, which stand for my contracting dims
    order = list(my_b) + my_free + [my_c[list(other_c).index(d)] for d in sorted(other_c)]
    del ct_mine
    permutation = [order.index(axis) for axis in range(mine_ndim)]
    return ops.convert(ops.transpose(out, permutation), my_dtype)


def _dot_general_vjp(attrs, operands, results, cts):
    (lhs, rhs), (ct,) = operands, cts
    if not is_differentiable(lhs.dtype):
        return [None, None]
    (lc, rc), (lb, rb) = attrs["contracting"], attrs["batch"]
    preferred = attrs.get("preferred_dtype")
    d_lhs = _dot_operand_cotangent(ct, rhs, lhs.ndim, (lc, lb), (rc, rb), preferred, lhs.dtype, True)
    d_rhs = _dot_operand_cotangent(ct, lhs, rhs.ndim, (rc, rb), (lc, lb), preferred, rhs.dtype, False)
    return [d_lhs, d_rhs]


def _dot_general_jvp(attrs, operands, results, tangents):
    (lhs, rhs), (t_lhs, t_rhs) = operands, tangents
    if not is_differentiable(lhs.dtype):
        return [None]
    args = (attrs["contracting"], attrs["batch"], attrs.get("preferred_dtype"))
    terms = []
    if t_lhs is not None:
        terms.append(ops.dot_general(t_lhs, rhs, *args))
    if t_rhs is not None:
        terms.append(ops.dot_general(lhs, t_rhs, *args))
    return [terms[0] if len(terms) == 1 else ops.add(*terms)]


def _dot_general_batch(attrs, operands, dims):
    (lhs, rhs), (ld, rd) = operands, dims
    (lc, rc), (lb, rb) = attrs["contracting"], attrs["batch"]
    pref = attrs.get("preferred_dtype")
    if ld is not None and rd is not None:
        size = lhs.shape[ld]
        lhs, rhs = to_front(lhs, ld, size), to_front(rhs, rd, size)
        contracting = (shift_axes(lc, 0), shift_axes(rc, 0))
        batch = ((0,) + shift_axes(lb, 0), (0,) + shift_axes(rb, 0))
        return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [0]
    if ld is not None:
        contracting, batch = (shift_axes(lc, ld), tuple(rc)), (shift_axes(lb, ld), tuple(rb))
        lhs_free = [a for a in range(lhs.ndim) if a not in contracting[0] and a not in batch[0]]
        return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [len(lb) + lhs_free.index(ld)]
    contracting, batch = (tuple(lc), shift_axes(rc, rd)), (tuple(lb), shift_axes(rb, rd))
    n_lhs_free = lhs.ndim - len(lc) - len(lb)
    rhs_free = [a for a in range(rhs.ndim) if a not in contracting[1] and a not in batch[1]]
    return [ops.dot_general(lhs, rhs, contracting, batch, pref)], [len(lb) + n_lhs_free + rhs_free.index(rd)]


P.dot_general.register(vjp=_dot_general_vjp, jvp=_dot_general_jvp, batch=_dot_general_batch)


# ---------------------------------------------------------------- sort

def _sort_permutation(attrs, operands) -> Tracer:
    """Where each sorted element came from along the sort dimension (the keys sorted with an iota)."""
    keys = list(operands[:attrs["num_keys"]])
    positions = ops.iota(keys[0].shape, INDEX_DTYPE, attrs["dimension"])
    sorted_all = ops.sort(keys + [positions], attrs["dimension"], is_stable=True, num_keys=len(keys))
    return sorted_all[-1]


def _sort_vjp(attrs, operands, results, cts):
    wanted = [i for i, (x, ct) in enumerate(zip(operands, cts)) if ct is not None and is_differentiable(x.dtype)]
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
    wanted = [i for i, (x, t) in enumerate(zip(operands, tangents)) if t is not None and is_differentiable(x.dtype)]
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


def _sort_batch(attrs, operands, dims):
    size = batch_size(operands, dims)
    xs = [to_front(x, d, size) for x, d in zip(operands, dims)]
    outs = ops.sort(xs, attrs["dimension"] + 1, is_stable=attrs.get("is_stable", True),
                    num_keys=attrs.get("num_keys", 1))
    return list(outs), [0] * len(outs)


P.sort.register(vjp=_sort_vjp, jvp=_sort_jvp, batch=_sort_batch)
