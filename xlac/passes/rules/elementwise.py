"""VJP, JVP and batching rules of the elementwise primitives (the first section of ``xlac/ir/primitives.py``):
unary and binary math, complex parts, compare, select, clamp, convert, bitcast_convert, stop_gradient.

An elementwise primitive's derivative is one entry: of ``_UNARY_DERIVATIVES`` (dy/dx from x and y) or of
``_binary_partials``; its batching rule comes from its category (operands brought to one batch axis). Ties
of ``max``/``min`` split the derivative evenly, as in JAX.

>>> from xlac.ir import primitives as P
>>> P.sin.vjp is not None and P.compare.jvp is not None and P.add.batch is not None
True
"""
from __future__ import annotations

import math

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.primitive import CATALOG
from xlac.passes.autodiff import is_differentiable
from xlac.passes.batching import move_batch_axis
from xlac.passes.rules.common import batch_size, linear_jvp, no_cotangents, no_tangents, or_zeros, to_front, zeros
from xlac.trace import ops

__all__: list[str] = []


# ---------------------------------------------------------------- batching

def _align(operands, dims, scalars_stay: bool = False):
    """Operands of one shape brought to one batch axis: the common one if the batched operands agree,
    else 0. With ``scalars_stay`` (select's predicate, clamp's bounds), operands may be 0-d per example:
    unbatched ones stay 0-d, batched ones are broadcast to the full shape."""
    size = batch_size(operands, dims)
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


def _elementwise_batch(prim, scalars_stay: bool = False):
    def rule(attrs, operands, dims):
        aligned, target = _align(operands, dims, scalars_stay)
        out = ops.bind(prim, *aligned, **attrs)
        return [out], [target]
    return rule


# Every elementwise primitive batches alike; select's predicate and clamp's bounds may be 0-d per example.
_ELEMENTWISE_CATEGORIES = ("unary", "binary", "compare", "convert", "identity")
for _primitive in CATALOG.values():
    if _primitive.category in _ELEMENTWISE_CATEGORIES and _primitive is not P.bitcast_convert:
        _primitive.register(batch=_elementwise_batch(_primitive))
P.select.register(batch=_elementwise_batch(P.select, scalars_stay=True))
P.clamp.register(batch=_elementwise_batch(P.clamp, scalars_stay=True))


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
    _vjp, _jvp = _unary_rules(_derivative)
    _primitive.register(vjp=_vjp, jvp=_jvp)


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


_vjp, _jvp = _complex_abs_rules()
P.abs_.register(vjp=_vjp, jvp=_jvp)
P.neg.register(vjp=lambda a, o, r, cts: [ops.neg(cts[0])], jvp=lambda a, o, r, ts: [ops.neg(ts[0])])
for _primitive in (P.sign, P.floor, P.ceil, P.round_, P.not_, P.popcnt, P.is_finite, P.compare, P.stop_gradient):
    _primitive.register(vjp=no_cotangents, jvp=no_tangents)


# ---------------------------------------------------------------- binary

def _mask(pred, like):
    """A boolean predicate as 1.0/0.0 of ``like``'s dtype."""
    return ops.convert(pred, like.dtype)


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
        if not is_differentiable(x.dtype):
            return [None, None]
        if primitive is P.add:
            return [ct, ct]
        if primitive is P.sub:
            return [ct, ops.neg(ct)]
        dx, dy = _binary_partials(primitive, x, y, z)
        return [ops.mul(ct, dx), ops.mul(ct, dy)]

    def jvp(attrs, operands, results, tangents):
        (x, y), (z,), (tx, ty) = operands, results, tangents
        if not is_differentiable(x.dtype):
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
    _vjp, _jvp = _binary_rules(_primitive)
    _primitive.register(vjp=_vjp, jvp=_jvp)
for _primitive in (P.and_, P.or_, P.xor, P.shift_left, P.shift_right_arithmetic, P.shift_right_logical):
    _primitive.register(vjp=no_cotangents, jvp=no_tangents)


# ---------------------------------------------------------------- select, clamp, convert

def _select_vjp(attrs, operands, results, cts):
    pred, on_true, _ = operands
    (ct,) = cts
    if not is_differentiable(on_true.dtype):
        return [None, None, None]
    zero = ops.full_like(ct, 0)
    return [None, ops.select(pred, ct, zero), ops.select(pred, zero, ct)]


def _select_jvp(attrs, operands, results, tangents):
    pred, on_true, _ = operands
    _, t_true, t_false = tangents
    if not is_differentiable(on_true.dtype):
        return [None]
    zero = ops.full_like(on_true, 0)
    return [ops.select(pred, zero if t_true is None else t_true, zero if t_false is None else t_false)]


P.select.register(vjp=_select_vjp, jvp=_select_jvp)


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
    if not is_differentiable(x.dtype):
        return [None, None, None]
    zero = ops.full_like(ct, 0)
    masks = _clamp_masks(lo, x, hi)
    return [_sum_to(ops.select(m, ct, zero), o.shape) for m, o in zip(masks, operands)]


def _clamp_jvp(attrs, operands, results, tangents):
    lo, x, hi = operands
    if not is_differentiable(x.dtype):
        return [None]
    zero = ops.full_like(x, 0)
    out = zero
    for mask, t in zip(_clamp_masks(lo, x, hi), tangents):
        if t is not None:
            out = ops.add(out, ops.select(mask, ops.broadcast_to(t, x.shape), zero))
    return [out]


P.clamp.register(vjp=_clamp_vjp, jvp=_clamp_jvp)


def _convert_vjp(attrs, operands, results, cts):
    (x,), (ct,) = operands, cts
    if not (is_differentiable(x.dtype) and is_differentiable(ct.dtype)):
        return [None]
    return [ops.convert(ct, x.dtype)]


def _convert_jvp(attrs, operands, results, tangents):
    (t,), (y,) = tangents, results
    if not (is_differentiable(t.dtype) and is_differentiable(y.dtype)):
        return [None]
    return [ops.convert(t, y.dtype)]


P.convert.register(vjp=_convert_vjp, jvp=_convert_jvp)


# ---------------------------------------------------------------- complex parts and bitcasts

def _real_vjp(attrs, operands, results, cts):
    ct = cts[0]
    return [None if ct is None else ops.complex(ct, zeros(ct.shape, ct.dtype))]


def _imag_vjp(attrs, operands, results, cts):
    ct = cts[0]
    return [None if ct is None else ops.complex(zeros(ct.shape, ct.dtype), ops.neg(ct))]


def _complex_vjp(attrs, operands, results, cts):
    ct = cts[0]
    if ct is None:
        return [None, None]
    return [ops.bind(P.real, ct), ops.neg(ops.bind(P.imag, ct))]


def _complex_jvp(attrs, operands, results, tangents):
    if all(t is None for t in tangents):
        return [None]
    return [ops.complex(*(or_zeros(t, x) for t, x in zip(tangents, operands)))]


P.real.register(vjp=_real_vjp, jvp=linear_jvp(lambda a, t, xs: ops.bind(P.real, t)))
P.imag.register(vjp=_imag_vjp, jvp=linear_jvp(lambda a, t, xs: ops.bind(P.imag, t)))
P.complex_.register(vjp=_complex_vjp, jvp=_complex_jvp)


def _bitcast_convert_batch(attrs, operands, dims):
    (x,), (d,) = operands, dims
    return [ops.bind(P.bitcast_convert, to_front(x, d, 0), **attrs)], [0]


P.bitcast_convert.register(vjp=no_cotangents, jvp=no_tangents, batch=_bitcast_convert_batch)


del _primitive, _derivative, _vjp, _jvp
