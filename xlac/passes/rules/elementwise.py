"""VJP and JVP rules of the math primitives: elementwise, compare/select/clamp, convert, reductions,
dot_general, and the primitives with a zero derivative.

A VJP rule is ``rule(attrs, operands, results, cotangents) -> operand cotangents`` (one per result in,
one per operand out, ``None`` for a zero); a JVP rule is ``rule(attrs, operands, results, tangents) ->
result tangents``. Rules emit nodes through :mod:`xlac.trace.ops` into the current trace. Ties of
``max``/``min`` split the derivative evenly, as in JAX.

>>> from xlac.ir import primitives as P
>>> P.sin.vjp is not None and P.compare.jvp is not None
True
"""
from __future__ import annotations

import math

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.passes import autodiff
from xlac.trace import ops
from xlac.trace.inline import closed_graph

__all__: list[str] = []


# ---------------------------------------------------------------- helpers

def _float(dtype) -> bool:
    return dtypes.is_inexact(dtype)


def _mask(pred, like):
    """A boolean predicate as 1.0/0.0 of ``like``'s dtype."""
    return ops.convert(pred, like.dtype)


def _zero(attrs, operands, results, cts):
    return [None] * len(operands)


def _zero_jvp(attrs, operands, results, tangents):
    return [None] * len(results)


def _define(primitive, vjp, jvp):
    primitive.register(vjp=vjp, jvp=jvp)


# ---------------------------------------------------------------- unary

# name -> derivative dy/dx from (x, y), emitted in x's dtype
_UNARY_DERIVATIVES = {
    P.exp: lambda x, y: y,
    P.expm1: lambda x, y: ops.add(y, ops.full_like(y, 1)),
    P.log: lambda x, y: ops.div(ops.full_like(x, 1), x),
    P.log1p: lambda x, y: ops.div(ops.full_like(x, 1), ops.add(x, ops.full_like(x, 1))),
    P.sqrt: lambda x, y: ops.div(ops.full_like(y, 0.5), y),
    P.rsqrt: lambda x, y: ops.div(ops.mul(ops.full_like(y, -0.5), y), x),
    P.cbrt: lambda x, y: ops.div(ops.full_like(y, 1 / 3), ops.mul(y, y)),
    P.tanh: lambda x, y: ops.sub(ops.full_like(y, 1), ops.mul(y, y)),
    P.logistic: lambda x, y: ops.mul(y, ops.sub(ops.full_like(y, 1), y)),
    P.sin: lambda x, y: ops.cos(x),
    P.cos: lambda x, y: ops.neg(ops.sin(x)),
    P.tan: lambda x, y: ops.add(ops.full_like(y, 1), ops.mul(y, y)),
    P.erf: lambda x, y: ops.mul(ops.full_like(x, 2 / math.sqrt(math.pi)), ops.exp(ops.neg(ops.mul(x, x)))),
}


def _unary_rules(derivative):
    def vjp(attrs, operands, results, cts):
        (x,), (y,), (ct,) = operands, results, cts
        return [ops.mul(ct, derivative(x, y))]

    def jvp(attrs, operands, results, tangents):
        (x,), (y,), (t,) = operands, results, tangents
        return [ops.mul(t, derivative(x, y))]
    return vjp, jvp


for _primitive, _derivative in _UNARY_DERIVATIVES.items():
    _define(_primitive, *_unary_rules(_derivative))


def _complex_abs_rules():
    """|z| of complex z: d|z| = Re(conj(z) dz) / |z|; the cotangent of z is ct * conj(z) / |z| (JAX's
    convention), 0 at z = 0."""
    real_vjp, real_jvp = _unary_rules(lambda x, y: ops.sign(x))

    def unit(x, y):              # z / |z| with 0 at z = 0, complex
        safe = ops.select(ops.compare(y, ops.full_like(y, 0), "EQ"), ops.full_like(y, 1), y)
        return ops.div(x, ops.complex(safe, ops.full_like(safe, 0)))

    def vjp(attrs, operands, results, cts):
        (x,), (y,), (ct,) = operands, results, cts
        if not np.issubdtype(x.dtype, np.complexfloating):
            return real_vjp(attrs, operands, results, cts)
        u = unit(x, y)
        conj_u = ops.complex(ops.real(u), ops.neg(ops.imag(u)))
        return [ops.mul(ops.complex(ct, ops.full_like(ct, 0)), conj_u)]

    def jvp(attrs, operands, results, tangents):
        (x,), (y,), (t,) = operands, results, tangents
        if not np.issubdtype(x.dtype, np.complexfloating):
            return real_jvp(attrs, operands, results, tangents)
        u = unit(x, y)
        re = lambda v: ops.real(v)      # noqa: E731
        im = lambda v: ops.imag(v)      # noqa: E731
        return [ops.add(ops.mul(re(u), re(t)), ops.mul(im(u), im(t)))]
    return vjp, jvp


_define(P.abs_, *_complex_abs_rules())

_define(P.neg, lambda a, o, r, cts: [ops.neg(cts[0])], lambda a, o, r, ts: [ops.neg(ts[0])])
for _primitive in (P.sign, P.floor, P.ceil, P.round_, P.not_, P.popcnt, P.is_finite, P.compare, P.constant, P.iota, P.argmax, P.argmin, P.stop_gradient):
    _define(_primitive, _zero, _zero_jvp)


# ---------------------------------------------------------------- binary

def _max_min_masks(x, y, direction):
    """How much of the derivative goes to x and to y: 1, 0, or 0.5 each at a tie."""
    wins = _mask(ops.compare(x, y, direction), x)
    tie = ops.mul(_mask(ops.compare(x, y, "EQ"), x), ops.full_like(x, 0.5))
    x_share = ops.add(wins, tie)
    return x_share, ops.sub(ops.full_like(x, 1), x_share)


def _pow_partials(x, y, z):
    """d(x**y)/dx = y * x**(y-1) (0 where y == 0); d/dy = log(x) * x**y (0 where x == 0)."""
    zero, one = ops.full_like(x, 0), ops.full_like(x, 1)
    dx = ops.mul(y, ops.pow(x, ops.sub(y, one)))
    dx = ops.select(ops.compare(y, zero, "EQ"), zero, dx)
    x_is_zero = ops.compare(x, zero, "EQ")
    dy = ops.mul(ops.log(ops.select(x_is_zero, one, x)), z)
    dy = ops.select(x_is_zero, zero, dy)
    return dx, dy


def _binary_partials(primitive, x, y, z):
    """(dz/dx, dz/dy) of ``z = primitive(x, y)``; add and sub are handled by the caller."""
    if primitive is P.mul:
        return y, x
    if primitive is P.div:
        return ops.div(ops.full_like(x, 1), y), ops.neg(ops.div(z, y))
    if primitive is P.pow_:
        return _pow_partials(x, y, z)
    if primitive in (P.max_, P.min_):
        return _max_min_masks(x, y, "GT" if primitive is P.max_ else "LT")
    if primitive is P.rem:
        q = ops.div(x, y)
        trunc = ops.mul(ops.sign(q), ops.floor(ops.abs(q)))
        return ops.full_like(x, 1), ops.neg(trunc)
    if primitive is P.atan2:
        r2 = ops.add(ops.mul(x, x), ops.mul(y, y))
        return ops.div(y, r2), ops.neg(ops.div(x, r2))
    raise KeyError(primitive)


def _binary_rules(primitive):
    def vjp(attrs, operands, results, cts):
        (x, y), (z,), (ct,) = operands, results, cts
        if not _float(x.dtype):
            return [None, None]
        if primitive is P.add:
            return [ct, ct]
        if primitive is P.sub:
            return [ct, ops.neg(ct)]
        dx, dy = _binary_partials(primitive, x, y, z)
        return [ops.mul(ct, dx), ops.mul(ct, dy)]

    def jvp(attrs, operands, results, tangents):
        (x, y), (z,), (tx, ty) = operands, results, tangents
        if not _float(x.dtype):
            return [None]
        if primitive in (P.add, P.sub):
            if ty is None:
                return [tx]
            ty = ty if primitive is P.add else ops.neg(ty)
            return [ty if tx is None else ops.add(tx, ty)]
        dx, dy = _binary_partials(primitive, x, y, z)
        terms = [ops.mul(t, d) for t, d in ((tx, dx), (ty, dy)) if t is not None]
        return [terms[0] if len(terms) == 1 else ops.add(*terms)]
    return vjp, jvp


for _primitive in (P.add, P.sub, P.mul, P.div, P.pow_, P.max_, P.min_, P.rem, P.atan2):
    _define(_primitive, *_binary_rules(_primitive))
for _primitive in (P.and_, P.or_, P.xor, P.shift_left, P.shift_right_arithmetic, P.shift_right_logical):
    _define(_primitive, _zero, _zero_jvp)


# ---------------------------------------------------------------- select, clamp, convert

def _select_vjp(attrs, operands, results, cts):
    pred, on_true, _ = operands
    (ct,) = cts
    if not _float(on_true.dtype):
        return [None, None, None]
    zero = ops.full_like(ct, 0)
    return [None, ops.select(pred, ct, zero), ops.select(pred, zero, ct)]


def _select_jvp(attrs, operands, results, tangents):
    pred, on_true, _ = operands
    _, t_true, t_false = tangents
    if not _float(on_true.dtype):
        return [None]
    zero = ops.full_like(on_true, 0)
    return [ops.select(pred, zero if t_true is None else t_true, zero if t_false is None else t_false)]


_define(P.select, _select_vjp, _select_jvp)


def _clamp_masks(lo, x, hi):
    """Where the derivative goes: to lo (x below it), to x (strictly inside), to hi (x above it)."""
    lo_b, hi_b = ops.broadcast_to(lo, x.shape), ops.broadcast_to(hi, x.shape)
    to_lo = ops.and_(ops.compare(lo_b, x, "GT"), ops.compare(lo_b, hi_b, "LT"))
    to_x = ops.and_(ops.compare(x, lo_b, "GT"), ops.compare(x, hi_b, "LT"))
    to_hi = ops.compare(hi_b, x, "LT")
    return to_lo, to_x, to_hi


def _sum_to(ct, shape):
    """``ct`` summed down to a bound's shape (a 0-d bound takes the whole sum)."""
    return ct if ct.shape == tuple(shape) else ops.reduce(ct, "sum", range(ct.ndim))


def _clamp_vjp(attrs, operands, results, cts):
    lo, x, hi = operands
    (ct,) = cts
    if not _float(x.dtype):
        return [None, None, None]
    zero = ops.full_like(ct, 0)
    masks = _clamp_masks(lo, x, hi)
    return [_sum_to(ops.select(m, ct, zero), o.shape) for m, o in zip(masks, operands)]


def _clamp_jvp(attrs, operands, results, tangents):
    lo, x, hi = operands
    if not _float(x.dtype):
        return [None]
    zero = ops.full_like(x, 0)
    out = zero
    for mask, t in zip(_clamp_masks(lo, x, hi), tangents):
        if t is not None:
            out = ops.add(out, ops.select(mask, ops.broadcast_to(t, x.shape), zero))
    return [out]


_define(P.clamp, _clamp_vjp, _clamp_jvp)


def _convert_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if not (_float(x.dtype) and _float(ct.dtype)):
        return [None]
    return [ops.convert(ct, x.dtype)]


def _convert_jvp(attrs, operands, results, tangents):
    (t,), (y,) = tangents, results
    if not (_float(t.dtype) and _float(y.dtype)):
        return [None]
    return [ops.convert(t, y.dtype)]


_define(P.convert, _convert_vjp, _convert_jvp)


# ---------------------------------------------------------------- reductions

def _expand(y, x, axes):
    """A reduction's result (or cotangent) broadcast back to the operand's shape."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    return ops.broadcast_in_dim(y, x.shape, kept)


def _reduce_partial(op, x, y, axes):
    """d y / d x for each element of x (in x's shape)."""
    if op == "prod":
        return _product_of_others(x, axes)
    # max/min: the elements equal to the result share the derivative evenly
    hits = _mask(ops.compare(x, _expand(y, x, axes), "EQ"), x)
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
    if not _float(x.dtype) or op in ("and", "or"):
        return [None]
    expanded = _expand(ct, x, axes)
    if op == "sum":
        return [expanded]
    return [ops.mul(expanded, _reduce_partial(op, x, y, axes))]


def _reduce_jvp(attrs, operands, results, tangents):
    (x,), (y,), (t,) = operands, results, tangents
    op, axes = attrs["op"], tuple(attrs["axes"])
    if not _float(x.dtype) or op in ("and", "or"):
        return [None]
    if op == "sum":
        return [ops.reduce(t, "sum", axes)]
    return [ops.reduce(ops.mul(t, _reduce_partial(op, x, y, axes)), "sum", axes)]


_define(P.reduce, _reduce_vjp, _reduce_jvp)


# ---------------------------------------------------------------- cumulative

# Running sums are linear. Running products, maxima and minima are differentiated as jax differentiates
# cumprod, cummax and cummin: through its associative_scan, a log-depth tree of elementwise ops whose
# derivatives (ties of max/min split evenly, zeros of prod exact) are those of ``_tree_scan``'s combine ops.
_COMBINE = {"prod": ops.mul, "max": ops.max, "min": ops.min}


def _cumulative_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if ct is None or not _float(x.dtype):
        return [None]
    if attrs["op"] == "sum":
        return [ops.cumulative(ct, "sum", attrs["axis"], not attrs["reverse"])]
    _, backward = autodiff.linearize_reverse(_tree_scan_graph(attrs, x), [x], [0])
    return backward([ct])


def _cumulative_jvp(attrs, operands, results, tangents):
    (x,), (t,) = operands, tangents
    if t is None or not _float(x.dtype):
        return [None]
    if attrs["op"] == "sum":
        return [ops.cumulative(t, "sum", attrs["axis"], attrs["reverse"])]
    _, (tangent,) = autodiff.forward(_tree_scan_graph(attrs, x), [x], [t])
    return [tangent]


_define(P.cumulative, _cumulative_vjp, _cumulative_jvp)


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


def _dot_vjp(attrs, operands, results, cts):
    (lhs, rhs), (ct,) = operands, cts
    if not _float(lhs.dtype):
        return [None, None]
    (lc, rc), (lb, rb) = attrs["contracting"], attrs["batch"]
    preferred = attrs.get("preferred_dtype")
    d_lhs = _dot_operand_cotangent(ct, rhs, lhs.ndim, (lc, lb), (rc, rb), preferred, lhs.dtype, True)
    d_rhs = _dot_operand_cotangent(ct, lhs, rhs.ndim, (rc, rb), (lc, lb), preferred, rhs.dtype, False)
    return [d_lhs, d_rhs]


def _dot_jvp(attrs, operands, results, tangents):
    (lhs, rhs), (t_lhs, t_rhs) = operands, tangents
    if not _float(lhs.dtype):
        return [None]
    args = (attrs["contracting"], attrs["batch"], attrs.get("preferred_dtype"))
    terms = []
    if t_lhs is not None:
        terms.append(ops.dot_general(t_lhs, rhs, *args))
    if t_rhs is not None:
        terms.append(ops.dot_general(lhs, t_rhs, *args))
    return [terms[0] if len(terms) == 1 else ops.add(*terms)]


_define(P.dot_general, _dot_vjp, _dot_jvp)

del _derivative, _primitive
np  # noqa: B018  (kept for doctest namespaces)
