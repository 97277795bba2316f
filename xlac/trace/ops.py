"""Typed helpers that bind primitives to traced values, like ``jax.lax``.

``xlac.numpy`` is written on these. They take Tracers (and, where noted, constants),
do no broadcasting or promotion beyond what is stated, and skip no-op nodes
(a convert to the same dtype, a reshape to the same shape).

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> from xlac.trace.context import Trace
>>> with Trace() as t:
...     x = t.add_input(TensorType((2, 3), np.dtype("float32")))
...     y = transpose(x, (1, 0))
>>> y.shape
(3, 2)
"""
from __future__ import annotations

import builtins

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


def _trace():
    trace = current_trace()
    if trace is None:
        raise RuntimeError("xlac internal error: a primitive was bound outside a trace")
    return trace


def bind(primitive, *operands, weak: bool = False, **attrs):
    return _trace().bind(primitive, operands, attrs, weak=weak)


def constant(value, dtype=None, *, weak: bool = False) -> Tracer:
    """A constant node holding ``value`` (a NumPy array or scalar) converted to ``dtype``."""
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
        array = np.asarray(value).astype(dtype, copy=False)
    else:
        array = np.asarray(value)
        dtypes.canonical(array.dtype)
    return bind(P.constant, value=np.array(array, copy=True), weak=weak)


def full(shape, value, dtype) -> Tracer:
    """``value`` broadcast to ``shape``: one scalar constant and a broadcast_in_dim."""
    scalar = constant(value, dtype)
    return broadcast_in_dim(scalar, tuple(shape), ()) if tuple(shape) else scalar


def sharding_constraint(x: Tracer, sharding) -> Tracer:
    """``x`` laid out over the devices as ``sharding`` (an ``xlac.ir.sharding.NamedSharding``) says."""
    return bind(P.sharding_constraint, x, weak=x.weak, sharding=sharding)


def _elementwise_unary(primitive):
    def apply(x: Tracer) -> Tracer:
        return bind(primitive, x, weak=x.weak)
    apply.__name__ = apply.__qualname__ = primitive.name
    apply.__doc__ = f"``{primitive.name}`` of each element of ``x`` (no promotion: see xlac.ir.primitives)."
    return apply


def _elementwise_binary(primitive):
    def apply(x: Tracer, y: Tracer) -> Tracer:
        return bind(primitive, x, y, weak=x.weak and y.weak)
    apply.__name__ = apply.__qualname__ = primitive.name
    apply.__doc__ = (f"``{primitive.name}`` of ``x`` and ``y`` elementwise (one shape and dtype: see "
                     "xlac.ir.primitives).")
    return apply


# Named as jax.lax names them; "and", "or" and "not" end in "_".
neg = _elementwise_unary(P.neg)
sign = _elementwise_unary(P.sign)
abs = _elementwise_unary(P.abs_)
exp = _elementwise_unary(P.exp)
expm1 = _elementwise_unary(P.expm1)
log = _elementwise_unary(P.log)
log1p = _elementwise_unary(P.log1p)
sqrt = _elementwise_unary(P.sqrt)
rsqrt = _elementwise_unary(P.rsqrt)
cbrt = _elementwise_unary(P.cbrt)
tanh = _elementwise_unary(P.tanh)
logistic = _elementwise_unary(P.logistic)
sin = _elementwise_unary(P.sin)
cos = _elementwise_unary(P.cos)
tan = _elementwise_unary(P.tan)
floor = _elementwise_unary(P.floor)
ceil = _elementwise_unary(P.ceil)
round = _elementwise_unary(P.round_)
erf = _elementwise_unary(P.erf)
not_ = _elementwise_unary(P.not_)
popcnt = _elementwise_unary(P.popcnt)
real = _elementwise_unary(P.real)
imag = _elementwise_unary(P.imag)

add = _elementwise_binary(P.add)
sub = _elementwise_binary(P.sub)
mul = _elementwise_binary(P.mul)
div = _elementwise_binary(P.div)
rem = _elementwise_binary(P.rem)
pow = _elementwise_binary(P.pow_)
max = _elementwise_binary(P.max_)
min = _elementwise_binary(P.min_)
atan2 = _elementwise_binary(P.atan2)
and_ = _elementwise_binary(P.and_)
or_ = _elementwise_binary(P.or_)
xor = _elementwise_binary(P.xor)
shift_left = _elementwise_binary(P.shift_left)
shift_right_arithmetic = _elementwise_binary(P.shift_right_arithmetic)
shift_right_logical = _elementwise_binary(P.shift_right_logical)


def complex(real: Tracer, imag: Tracer) -> Tracer:
    return bind(P.complex_, real, imag)


def is_finite(x: Tracer) -> Tracer:
    return bind(P.is_finite, x)


def compare(x: Tracer, y: Tracer, direction: str) -> Tracer:
    return bind(P.compare, x, y, direction=direction)


def select(pred: Tracer, on_true: Tracer, on_false: Tracer) -> Tracer:
    return bind(P.select, pred, on_true, on_false, weak=on_true.weak and on_false.weak)


def clamp(lo: Tracer, x: Tracer, hi: Tracer) -> Tracer:
    return bind(P.clamp, lo, x, hi, weak=x.weak)


def convert(x: Tracer, dtype, *, weak: bool = False) -> Tracer:
    dtype = dtypes.canonical(dtype)
    if x.dtype == dtype:
        if x.weak == weak:
            return x
        return Tracer(x.value, x._trace, weak)
    return bind(P.convert, x, dtype=dtype, weak=weak)


def bitcast_convert(x: Tracer, dtype) -> Tracer:
    return bind(P.bitcast_convert, x, dtype=dtypes.canonical(dtype))


def full_like(x: Tracer, value) -> Tracer:
    """``value`` in ``x``'s shape and dtype."""
    return full(x.shape, value, x.dtype)


def broadcast_in_dim(x: Tracer, shape, broadcast_dimensions) -> Tracer:
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if shape == x.shape and dims == tuple(range(x.ndim)):
        return x
    return bind(P.broadcast_in_dim, x, shape=shape, broadcast_dimensions=dims, weak=x.weak)


def broadcast_shapes(*shapes, op: str = "broadcast") -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes``; raises ValueError naming ``op`` and the shapes."""
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(located(f"{op}: operands could not be broadcast together with shapes "
                                     + " ".join(str(tuple(s)) for s in shapes)))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x: Tracer, shape) -> Tracer:
    """NumPy-rule broadcast of ``x`` to ``shape`` (trailing axes aligned)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or any(d not in (1, shape[lead + i]) for i, d in enumerate(x.shape)):
        raise ValueError(located(f"broadcast_to: cannot broadcast a {x.shape} array to shape {shape}"))
    keep = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    if len(keep) != x.ndim:   # drop size-1 axes that stretch, so broadcast_in_dim sees exact sizes
        x = reshape(x, tuple(x.shape[i] for i in keep))
    return broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def reshape(x: Tracer, shape) -> Tracer:
    shape = tuple(int(d) for d in shape)
    if shape == x.shape:
        return x
    return bind(P.reshape, x, shape=shape, weak=x.weak)


def transpose(x: Tracer, permutation) -> Tracer:
    permutation = tuple(permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return bind(P.transpose, x, permutation=permutation, weak=x.weak)


def reverse(x: Tracer, dimensions) -> Tracer:
    dimensions = tuple(dimensions)
    if not dimensions:
        return x
    return bind(P.reverse, x, dimensions=dimensions, weak=x.weak)


def slice(x: Tracer, start, limit, strides=None) -> Tracer:
    start, limit = tuple(start), tuple(limit)
    strides = tuple(strides) if strides is not None else (1,) * x.ndim
    if start == (0,) * x.ndim and limit == x.shape and strides == (1,) * x.ndim:
        return x
    return bind(P.slice_, x, start=start, limit=limit, strides=strides, weak=x.weak)


def dynamic_slice(x: Tracer, starts, sizes) -> Tracer:
    return bind(P.dynamic_slice, x, *starts, sizes=tuple(sizes), weak=x.weak)


def dynamic_update_slice(x: Tracer, update: Tracer, starts) -> Tracer:
    return bind(P.dynamic_update_slice, x, update, *starts)


def gather(x: Tracer, indices: Tracer, **dimension_numbers) -> Tracer:
    return bind(P.gather, x, indices, **dimension_numbers)


def scatter(x: Tracer, indices: Tracer, updates: Tracer, **dimension_numbers) -> Tracer:
    return bind(P.scatter, x, indices, updates, **dimension_numbers)


def concatenate(xs, dimension: int) -> Tracer:
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    return bind(P.concatenate, *xs, dimension=dimension)


def pad(x: Tracer, padding_value: Tracer, low, high, interior=None) -> Tracer:
    interior = tuple(interior) if interior is not None else (0,) * x.ndim
    return bind(P.pad, x, padding_value, low=tuple(low), high=tuple(high), interior=interior)


def iota(shape, dtype, dimension: int) -> Tracer:
    return bind(P.iota, shape=tuple(shape), dtype=dtypes.canonical(dtype), dimension=dimension)


def reduce(x: Tracer, op: str, axes) -> Tracer:
    axes = tuple(sorted(axes))
    if not axes:
        return x
    return bind(P.reduce, x, op=op, axes=axes)


def reduce_many(xs, reduce_ops, axes) -> tuple[Tracer, ...]:
    """``tuple(reduce(x, op, axes) for x, op in zip(xs, reduce_ops))`` in one pass over ``xs`` (one shape;
    floating operands of one dtype).

    >>> from xlac.ir.types import TensorType
    >>> from xlac.trace.context import Trace
    >>> with Trace() as t:
    ...     x = t.add_input(TensorType((4, 3), np.dtype("float64")))
    ...     positive = convert(compare(x, full_like(x, 0), "GT"), np.int64)
    ...     total, count = reduce_many([x, positive], ("sum", "sum"), (0,))
    >>> total.shape, str(count.dtype)
    ((3,), 'int64')
    """
    axes = tuple(sorted(axes))
    if not axes:
        return tuple(xs)
    return bind(P.reduce_many, *xs, ops=tuple(reduce_ops), axes=axes)


def argmax(x: Tracer, axis: int, index_dtype) -> Tracer:
    return bind(P.argmax, x, axis=axis, index_dtype=dtypes.canonical(index_dtype))


def argmin(x: Tracer, axis: int, index_dtype) -> Tracer:
    return bind(P.argmin, x, axis=axis, index_dtype=dtypes.canonical(index_dtype))


def dot_general(lhs: Tracer, rhs: Tracer, contracting, batch=((), ()), preferred_dtype=None) -> Tracer:
    contracting = (tuple(contracting[0]), tuple(contracting[1]))
    batch = (tuple(batch[0]), tuple(batch[1]))
    return bind(P.dot_general, lhs, rhs, contracting=contracting, batch=batch, preferred_dtype=preferred_dtype)


def sort(operands, dimension: int, *, is_stable: bool = True, num_keys: int = 1) -> tuple[Tracer, ...]:
    return bind(P.sort, *operands, dimension=dimension, is_stable=is_stable, num_keys=num_keys)


def cumulative(x: Tracer, op: str, axis: int, reverse: bool = False) -> Tracer:
    """The running ``op`` (one of :func:`reduce`'s: "sum", "prod", "max", ...) of ``x`` along ``axis``, from
    the last element with ``reverse``, in ``x``'s dtype: one reduce_window, which XLA runs blocked.

    >>> from xlac.ir.types import TensorType
    >>> from xlac.trace.context import Trace
    >>> with Trace() as t:
    ...     running_max = cumulative(t.add_input(TensorType((4, 3), np.dtype("float32"))), "max", 0)
    >>> running_max.shape, str(running_max.dtype)
    ((4, 3), 'float32')
    """
    if x.shape[axis] <= 1:
        return x
    return bind(P.cumulative, x, op=op, axis=axis, reverse=reverse)


def fft(x: Tracer, fft_type: str, fft_length) -> Tracer:
    """StableHLO's FFT over the trailing ``len(fft_length)`` axes (see :mod:`xlac.ir.primitives_fft`)."""
    return bind(P.fft, x, fft_type=fft_type, fft_length=tuple(int(n) for n in fft_length))


# ---------------------------------------------------------------- matrices (the linalg primitives and their rules)


def conj(x: Tracer) -> Tracer:
    """The complex conjugate (``x`` itself for real dtypes)."""
    if not np.issubdtype(x.dtype, np.complexfloating):
        return x
    return complex(real(x), neg(imag(x)))


def matrix_transpose(x: Tracer, conjugate: bool = False) -> Tracer:
    """``x`` with its last two axes swapped (and conjugated: the adjoint, with ``conjugate``)."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    out = transpose(x, perm)
    return conj(out) if conjugate else out


def matmul(x: Tracer, y: Tracer) -> Tracer:
    """``x @ y`` over the last two axes; the leading (batch) axes of both must be equal."""
    batch = tuple(range(x.ndim - 2))
    return dot_general(x, y, ((x.ndim - 1,), (y.ndim - 2,)), (batch, batch))


def triangle(x: Tracer, lower: bool, strict: bool = False) -> Tracer:
    """``x`` with the elements outside the lower (or upper) triangle of its last two axes zeroed;
    ``strict`` zeroes the diagonal too."""
    rows = iota(x.shape, np.int32, x.ndim - 2)
    cols = iota(x.shape, np.int32, x.ndim - 1)
    direction = ("GT" if strict else "GE") if lower else ("LT" if strict else "LE")
    return select(compare(rows, cols, direction), x, full(x.shape, 0, x.dtype))


def cholesky(a: Tracer, lower: bool = True) -> Tracer:
    return bind(P.cholesky, a, lower=lower)


def triangular_solve(a: Tracer, b: Tracer, *, left_side: bool, lower: bool, transpose_a: str = "NO_TRANSPOSE",
                     unit_diagonal: bool = False) -> Tracer:
    return bind(P.triangular_solve, a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                unit_diagonal=unit_diagonal)


def qr(a: Tracer, mode: str = "reduced") -> tuple[Tracer, Tracer]:
    return bind(P.qr, a, mode=mode)


def eigh(a: Tracer, lower: bool = True) -> tuple[Tracer, Tracer]:
    return bind(P.eigh, a, lower=lower)


def lu(a: Tracer) -> tuple[Tracer, Tracer]:
    return bind(P.lu, a)


def eig(a: Tracer, vectors: bool = True) -> tuple[Tracer, Tracer]:
    return bind(P.eig, a, vectors=vectors)


def svd(a: Tracer, full_matrices: bool = False, compute_uv: bool = True) -> tuple[Tracer, ...]:
    return tuple(bind(P.svd, a, full_matrices=full_matrices, compute_uv=compute_uv))
