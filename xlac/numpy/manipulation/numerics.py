"""Numerical helpers over arrays: diff, ediff1d, gradient, cross, kron, interp, convolve/correlate,
trapezoid and polyval, with NumPy 2's values, dtypes and errors.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.diff(np.array([1, 4, 9, 16])))
array([3, 5, 7])
"""
from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy import _core, creation, indexing, reductions, shapes, ufuncs
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.numpy.contractions import _compute_dtype, _to_result
from xlac.ir.dtypes import BOOL, COMPLEX128, FLOAT64, INT64
from xlac.numpy.manipulation._common import (
    _as_static, _host, _static_function, _not_traced, _axis_slice, _moved_last)
from xlac.numpy.shapes import as_array, normalize_axis_tuple
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["diff", "ediff1d", "gradient", "cross", "kron", "interp", "convolve", "correlate", "trapezoid",
           "polyval", "unwrap"]


# ---------------------------------------------------------------- differences, gradients, products


@_static_function("diff", "n", "axis")
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference ``a[1:] - a[:-1]`` along ``axis`` (``!=`` for booleans), after
    joining ``prepend`` and ``append`` (scalars are broadcast) to ``a``.

    >>> np.asarray(diff(np.array([1, 4, 9, 16]), n=2))
    array([2, 2])
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(located(f"diff: order must be non-negative but got {n!r}"))
    x = as_array(a)
    if n == 0:
        return x
    if x.ndim == 0:
        raise ValueError(located("diff: diff requires input that is at least one dimensional"))
    axis = normalize_axis(axis, x.ndim, "diff")
    parts = ([as_array(prepend)] if prepend is not None else []) + [x] + \
        ([as_array(append)] if append is not None else [])
    parts = [ops.broadcast_to(p, x.shape[:axis] + (1,) + x.shape[axis + 1:]) if p.ndim == 0 else p for p in parts]
    if len(parts) > 1:
        x = shapes.concatenate.__wrapped_numpy__(parts, axis)
    op = ufuncs.not_equal if x.dtype == BOOL else ufuncs.subtract
    for _ in range(n):
        size = x.shape[axis]
        x = op(_axis_slice(x, axis, builtins.min(1, size), size), _axis_slice(x, axis, 0, builtins.max(size - 1, 0)))
    return x


@numpy_function
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary``, with ``to_begin`` and ``to_end``
    (cast to ``ary``'s dtype, which they must reach under 'same_kind') joined at the ends.

    >>> np.asarray(ediff1d(np.array([1, 2, 4, 7]), to_begin=-99))
    array([-99,   1,   2,   3])
    """
    x = as_array(ary)
    x = ops.reshape(x, (x.size,))
    n = x.size
    diffs = ufuncs.subtract(_axis_slice(x, 0, builtins.min(1, n), n), _axis_slice(x, 0, 0, builtins.max(n - 1, 0)))
    begin = [] if to_begin is None else [_ediff1d_end(to_begin, "to_begin", x.dtype)]
    end = [] if to_end is None else [_ediff1d_end(to_end, "to_end", x.dtype)]
    return ops.concatenate(begin + [diffs] + end, 0)


def _ediff1d_end(values, name: str, dtype: np.dtype) -> Tracer:
    t = as_array(values)
    if not np.can_cast(t.dtype, dtype, casting="same_kind"):
        raise TypeError(located(f"ediff1d: dtype of `{name}` must be compatible with input `ary` under the "
                                f"`same_kind` rule (got {t.dtype} for {dtype})."))
    return ops.convert(ops.reshape(t, (t.size,)), dtype)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of ``f`` by second-order central differences inside and first- or second-order
    (``edge_order``) one-sided differences at the ends, per axis; spacings are one scalar, one per axis,
    or coordinate arrays. One array for one axis, else a tuple.

    >>> np.asarray(gradient(np.array([1.0, 2.0, 4.0, 7.0])))
    array([1. , 1.5, 2.5, 3. ])
    """
    if current_trace() is None:
        varargs = tuple(_as_static(v) for v in varargs)
    return _gradient(f, varargs, axis, edge_order)


gradient.__wrapped_numpy__ = gradient


def _gradient_body(f, varargs, axis, edge_order):
    x = as_array(f)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(_host(axis), x.ndim, "gradient")
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(_host(varargs[0])) == 0:
        spacings = [_host(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(_host(v), x.shape[ax]) for v, ax in zip(varargs, axes)]
    else:
        raise TypeError(located(f"gradient: invalid number of arguments: {len(varargs)} spacings for "
                                f"{len(axes)} axes"))
    edge_order = operator.index(edge_order)
    if edge_order > 2:
        raise ValueError(located("gradient: 'edge_order' greater than 2 not supported"))
    out_dtype = x.dtype
    if not dtypes.is_inexact(x.dtype):
        if dtypes.is_int(x.dtype):
            x = ops.convert(x, FLOAT64)
        out_dtype = FLOAT64
    results = []
    for ax, dx in zip(axes, spacings):
        if x.shape[ax] < edge_order + 1:
            raise ValueError(located("gradient: Shape of array too small to calculate a numerical gradient, at "
                                     "least (edge_order + 1) elements are required."))
        pieces = _gradient_pieces(x, ax, dx, edge_order)
        results.append(ops.concatenate([ops.convert(p, out_dtype) for p in pieces], ax))
    return results[0] if len(results) == 1 else tuple(results)


_gradient_body.__name__ = _gradient_body.__qualname__ = "gradient"
_gradient = numpy_function(_gradient_body)


def _spacing(distances, size: int):
    """One axis's spacing: a scalar as given, or the differences of its coordinates (a scalar when even)."""
    if isinstance(distances, Tracer):
        if distances.ndim == 0:
            return distances
        coords = distances
    else:
        coords = np.asanyarray(distances)
        if coords.ndim == 0:
            return distances
    if coords.ndim != 1:
        raise ValueError(located("gradient: distances must be either scalars or 1d"))
    if coords.shape[0] != size:
        raise ValueError(located("gradient: when 1d, distances must match the length of the corresponding "
                                 "dimension"))
    if isinstance(coords, Tracer):
        if not dtypes.is_inexact(coords.dtype):
            coords = ops.convert(coords, FLOAT64)
        return diff(coords)
    if np.issubdtype(coords.dtype, np.integer):
        coords = coords.astype(FLOAT64)
    steps = np.diff(coords)
    if steps.size and (steps == steps[0]).all():
        return steps[0]
    return ops.constant(steps)


def _gradient_pieces(f: Tracer, axis: int, dx, edge_order: int) -> list:
    n = f.shape[axis]

    def at(start, stop):
        return _axis_slice(f, axis, start, stop)

    uniform = not isinstance(dx, Tracer) or dx.ndim == 0
    if uniform:
        interior = (at(2, n) - at(0, n - 2)) / (2.0 * dx)
    else:
        dx1, dx2 = dx[0:-1], dx[1:]
        shape = tuple(n - 2 if d == axis else 1 for d in range(f.ndim))
        a = ops.reshape(-dx2 / (dx1 * (dx1 + dx2)), shape)
        b = ops.reshape((dx2 - dx1) / (dx1 * dx2), shape)
        c = ops.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
        interior = a * at(0, n - 2) + b * at(1, n - 1) + c * at(2, n)
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / (dx if uniform else dx[0])
        last = (at(n - 1, n) - at(n - 2, n - 1)) / (dx if uniform else dx[-1])
        return [first, interior, last]
    if uniform:
        a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
    else:
        dx1, dx2 = dx[0], dx[1]
        a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = -dx1 / (dx2 * (dx1 + dx2))
    first = a * at(0, 1) + b * at(1, 2) + c * at(2, 3)
    if uniform:
        a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
    else:
        dx1, dx2 = dx[-2], dx[-1]
        a = dx2 / (dx1 * (dx1 + dx2))
        b = -(dx2 + dx1) / (dx1 * dx2)
        c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
    last = a * at(n - 3, n - 2) + b * at(n - 2, n - 1) + c * at(n - 1, n)
    return [first, interior, last]


@_static_function("cross", "axisa", "axisb", "axisc", "axis")
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors, whose z component is 0) along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (``axis`` sets all three), broadcast over the other axes; the result's vectors run
    along ``axisc``. Two 2-vectors give the scalar z component (deprecated in NumPy 2, warned likewise).

    >>> np.asarray(cross(np.array([1, 0, 0]), np.array([0, 1, 0])))
    array([0, 0, 1])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_array(a), as_array(b)
    if x.ndim < 1 or y.ndim < 1:
        raise ValueError(located("cross: At least one array has zero dimension"))
    x = _moved_last(x, normalize_axis(axisa, x.ndim, "cross (axisa)"))
    y = _moved_last(y, normalize_axis(axisb, y.ndim, "cross (axisb)"))
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(located("cross: incompatible dimensions for cross product\n(dimension must be 2 or 3)"))
    if 2 in (x.shape[-1], y.shape[-1]):
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                      "instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=4)
    dtype = dtypes.result_type(x.dtype, y.dtype)
    x, y = ops.convert(x, dtype), ops.convert(y, dtype)
    xs = [indexing.getitem(x, (Ellipsis, i)) for i in range(x.shape[-1])]
    ys = [indexing.getitem(y, (Ellipsis, i)) for i in range(y.shape[-1])]
    mul, sub, neg = ufuncs.multiply, ufuncs.subtract, ufuncs.negative
    z = sub(mul(xs[0], ys[1]), mul(xs[1], ys[0]))
    if len(xs) == 2 and len(ys) == 2:
        return z
    if len(xs) == 2:
        components = [mul(xs[1], ys[2]), neg(mul(xs[0], ys[2])), z]
    elif len(ys) == 2:
        components = [neg(mul(xs[2], ys[1])), mul(xs[2], ys[0]), z]
    else:
        components = [sub(mul(xs[1], ys[2]), mul(xs[2], ys[1])), sub(mul(xs[2], ys[0]), mul(xs[0], ys[2])), z]
    batch = ops.broadcast_shapes(xs[0].shape, ys[0].shape, op="cross")
    result = ops.concatenate([ops.reshape(ops.broadcast_to(c, batch), batch + (1,)) for c in components],
                             len(batch))
    out_axis = normalize_axis(axisc, result.ndim, "cross (axisc)")
    order = list(range(result.ndim - 1))
    order.insert(out_axis, result.ndim - 1)
    return ops.transpose(result, order)


@numpy_function
def kron(a, b):
    """The Kronecker product: blocks ``a[i, j] * b`` laid out as ``a`` is (shapes padded with leading 1s).

    >>> np.asarray(kron(np.array([1, 10]), np.array([1, 2, 3])))
    array([ 1,  2,  3, 10, 20, 30])
    """
    y = as_array(b)
    x = as_array(a)
    if x.ndim < y.ndim:
        x = ops.reshape(x, (1,) * (y.ndim - x.ndim) + x.shape)
    if x.ndim == 0 or y.ndim == 0:
        return ufuncs.multiply(x, y)
    y = ops.reshape(y, (1,) * (x.ndim - y.ndim) + y.shape)
    left = ops.reshape(x, tuple(d for s in x.shape for d in (s, 1)))
    right = ops.reshape(y, tuple(d for s in y.shape for d in (1, s)))
    return ops.reshape(ufuncs.multiply(left, right), tuple(p * q for p, q in zip(x.shape, y.shape)))


# ---------------------------------------------------------------- interpolation, convolution, integration


@numpy_function
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) (``xp`` increasing) at ``x``:
    ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside, or periodic with ``period``. float64
    (complex128 for complex ``fp``), with NumPy's rules for NaN and exact hits.

    ``period`` is static; the search is a compare-and-count for a few points, else a binary search.

    >>> np.asarray(interp(np.array([0.5, 2.5, 9.0]), [0, 1, 3], [0.0, 10.0, 30.0]))
    array([ 5., 25., 30.])
    """
    values = as_array(fp)
    dtype = COMPLEX128 if np.issubdtype(values.dtype, np.complexfloating) else FLOAT64
    points = ops.convert(as_array(x), FLOAT64)
    knots = ops.convert(as_array(xp), FLOAT64)
    values = ops.convert(values, dtype)
    if knots.ndim != 1 or values.ndim != 1:
        raise ValueError(located(f"interp: Data points must be 1-D sequences, got xp of dimension {knots.ndim} "
                                 f"and fp of dimension {values.ndim}"))
    if knots.shape[0] != values.shape[0]:
        raise ValueError(located(f"interp: fp and xp are not of the same length ({values.shape[0]} and "
                                 f"{knots.shape[0]})."))
    if knots.shape[0] == 0:
        raise ValueError(located("interp: array of sample points is empty"))
    if period is not None:
        period = builtins.abs(_not_traced(period, "interp", "period"))
        if period == 0:
            raise ValueError(located("interp: period must be a non-zero value"))
        points = ufuncs.remainder(points, period)
        knots, values = ops.sort((ufuncs.remainder(knots, period), values), 0, num_keys=1)
        n = knots.shape[0]
        knots = ops.concatenate([ufuncs.subtract(_axis_slice(knots, 0, n - 1, n), period), knots,
                                 ufuncs.add(_axis_slice(knots, 0, 0, 1), period)], 0)
        values = ops.concatenate([_axis_slice(values, 0, n - 1, n), values, _axis_slice(values, 0, 0, 1)], 0)
        left = right = None
    n = knots.shape[0]
    low = _axis_slice(values, 0, 0, 1) if left is None else _core_scalar(left, dtype)
    high = _axis_slice(values, 0, n - 1, n) if right is None else _core_scalar(right, dtype)
    low, high = ops.reshape(low, ()), ops.reshape(high, ())
    count = _count_at_most(knots, points)
    if dtype == COMPLEX128:
        parts = [_interp_real(points, count, knots, part(values), part(low),
                              part(high)) for part in (ops.real, ops.imag)]
        if n > 1:
            nan = ufuncs.isnan(points)
            parts[1] = ops.select(nan, ops.full(points.shape, 0.0, FLOAT64), parts[1])
        return ops.complex(*parts)
    return _interp_real(points, count, knots, values, low, high)


def _core_scalar(value, dtype) -> Tracer:
    scalar = asarray(value, dtype) if not isinstance(value, Tracer) else ops.convert(value, dtype)
    if scalar.ndim != 0:
        raise ValueError(located(f"interp: left and right must be scalars, got shape {scalar.shape}"))
    return ops.convert(scalar, dtype)


def _count_at_most(knots: Tracer, points: Tracer) -> Tracer:
    """How many of the sorted ``knots`` are <= each point (int64): one broadcast compare for a few knots,
    an unrolled binary search (one gather per step) for many."""
    n, shape = knots.shape[0], points.shape
    if n <= 64:
        wide = shape + (n,)
        at_most = ops.compare(ops.broadcast_in_dim(knots, wide, (len(shape),)),
                              ops.broadcast_in_dim(points, wide, tuple(range(len(shape)))), "LE")
        return ops.reduce(ops.convert(at_most, INT64), "sum", (len(shape),))
    low, high = ops.full(shape, 0, INT64), ops.full(shape, n, INT64)
    one, two = ops.full(shape, 1, INT64), ops.full(shape, 2, INT64)
    for _ in range(n.bit_length()):
        middle = ops.div(ops.add(low, high), two)
        probe = ops.clamp(ops.constant(0, INT64), middle, ops.constant(n - 1, INT64))
        below = ops.compare(indexing.take.__wrapped_numpy__(knots, probe), points, "LE")
        active = ops.compare(low, high, "LT")
        low = ops.select(ops.and_(active, below), ops.add(middle, one), low)
        high = ops.select(ops.and_(active, ops.not_(below)), middle, high)
    return low


def _interp_real(points, count, knots, values, low, high):
    """NumPy's compiled_interp on float64 data, element by element, as selects."""
    n, shape = knots.shape[0], points.shape
    where, isnan = ufuncs.where, ufuncs.isnan
    first_x, first_f = (ops.reshape(_axis_slice(t, 0, 0, 1), ()) for t in (knots, values))
    last_x, last_f = (ops.reshape(_axis_slice(t, 0, n - 1, n), ()) for t in (knots, values))
    if n == 1:
        return where(points < first_x, low, where(points > first_x, high, first_f))
    j = ops.clamp(ops.constant(0, INT64), ops.sub(count, ops.full(shape, 1, INT64)),
                  ops.constant(n - 2, INT64))
    j1 = ops.add(j, ops.full(shape, 1, INT64))
    take = indexing.take.__wrapped_numpy__
    xj, xj1, fj, fj1 = take(knots, j), take(knots, j1), take(values, j), take(values, j1)
    slope = (fj1 - fj) / (xj1 - xj)
    result = slope * (points - xj) + fj
    result = where(isnan(result), slope * (points - xj1) + fj1, result)
    result = where(isnan(result) & (fj == fj1), fj, result)
    result = where(points == xj, fj, result)
    result = where(count == n, where(points == last_x, last_f, high), result)
    result = where(count == 0, low, result)
    return where(isnan(points), points, result)


def _correlation_mode(mode, op: str) -> int:
    if isinstance(mode, str):
        modes = {"valid": 0, "same": 1, "full": 2}
        if mode not in modes:
            raise ValueError(located(f"{op}: mode must be one of 'valid', 'same', or 'full' (got {mode!r})"))
        return modes[mode]
    mode = operator.index(mode)
    if mode not in (0, 1, 2):
        raise ValueError(located(f"{op}: integer convolve/correlate mode must be 0, 1, or 2"))
    return mode


def _signal_pair(a, v, op: str, at_least_1d: bool):
    x, y = as_array(a), as_array(v)
    if at_least_1d:
        x, y = (ops.reshape(t, (1,)) if t.ndim == 0 else t for t in (x, y))
    for t in (x, y):
        if t.ndim != 1:
            raise ValueError(located(f"{op}: object {'too deep' if t.ndim > 1 else 'of too small depth'} for "
                                     f"desired array (the inputs must be 1-D, got dimension {t.ndim})"))
    for t, name in ((x, "a" if at_least_1d else "first array argument"),
                    (y, "v" if at_least_1d else "second array argument")):
        if t.shape[0] == 0:
            raise ValueError(located(f"{op}: {name} cannot be empty"))
    dtype = dtypes.result_type(x, y)
    return ops.convert(x, dtype), ops.convert(y, dtype)


def _sliding_dot(signal: Tracer, kernel: Tracer) -> Tracer:
    """``out[k] = sum_n kernel[n] * signal_padded[n + k]`` for every overlap (length ``len(signal) +
    len(kernel) - 1``), the signal zero-padded by ``len(kernel) - 1`` on both sides. The windows are a
    broadcast read with a row stride one longer than the padded signal: no gather."""
    dtype = signal.dtype
    compute = _compute_dtype(dtype)
    signal, kernel = ops.convert(signal, compute), ops.convert(kernel, compute)
    m = kernel.shape[0]
    padded = ops.pad(signal, ops.constant(0, compute), (m - 1,), (m - 1,))
    width, length = padded.shape[0], signal.shape[0] + m - 1
    rows = ops.reshape(ops.broadcast_in_dim(padded, (m, width), (1,)), (m * width,))
    rows = ops.pad(rows, ops.constant(0, compute), (0,), (m,))
    windows = _axis_slice(ops.reshape(rows, (m, width + 1)), 1, 0, length)
    return _to_result(ops.dot_general(kernel, windows, ((0,), (0,))), dtype)


def _full_correlation(x: Tracer, y: Tracer) -> Tracer:
    """``c[k] = sum_n x[n + k - (len(y) - 1)] * y[n]``, the shorter input sliding over the longer."""
    if y.shape[0] <= x.shape[0]:
        return _sliding_dot(x, y)
    return ops.reverse(_sliding_dot(y, x), (0,))


def _mode_window(full: Tracer, mode: int, short: int, long: int, same_start: int) -> Tracer:
    if mode == 2:
        return full
    if mode == 1:
        return _axis_slice(full, 0, same_start, same_start + long)
    return _axis_slice(full, 0, short - 1, long)


@numpy_function
def convolve(a, v, mode="full"):
    """The discrete linear convolution of the 1-D ``a`` and ``v``: "full" (every overlap), "same" (the
    length of the longer input, centred) or "valid" (complete overlaps only), in their common dtype.

    >>> np.asarray(convolve(np.array([1, 2, 3]), np.array([0, 1, 0.5])))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    mode = _correlation_mode(mode, "convolve")
    x, y = _signal_pair(a, v, "convolve", at_least_1d=True)
    short, long = sorted((x.shape[0], y.shape[0]))
    full = _full_correlation(x, ops.reverse(y, (0,)))
    return _mode_window(full, mode, short, long, short - 1 - short // 2)


@numpy_function
def correlate(a, v, mode="valid"):
    """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of the 1-D ``a`` and ``v``, for the
    lags of ``mode`` ("valid", "same" or "full"), in their common dtype.

    >>> np.asarray(correlate(np.array([1, 2, 3]), np.array([0, 1, 0.5]), "full"))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    mode = _correlation_mode(mode, "correlate")
    x, y = _signal_pair(a, v, "correlate", at_least_1d=False)
    if np.issubdtype(y.dtype, np.complexfloating):
        y = ops.complex(ops.real(y), ops.neg(ops.imag(y)))
    short, long = sorted((x.shape[0], y.shape[0]))
    same_start = short // 2 if y.shape[0] > x.shape[0] else short - 1 - short // 2
    return _mode_window(_full_correlation(x, y), mode, short, long, same_start)


@numpy_function
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at points ``x`` (1-D, or shaped like
    ``y``) or spaced ``dx`` apart.

    >>> float(trapezoid(np.array([1.0, 2.0, 3.0]), dx=0.5))
    2.0
    """
    values = as_array(y)
    real = dtypes.is_float(values.dtype) and dtypes.is_float(dtypes.result_type(dx, values))
    if x is None and _ndim(dx) == 0 and real:
        return _trapezoid_evenly_spaced(values, dx, normalize_axis(axis, values.ndim, "trapezoid"))
    if x is None:
        step = dx
    else:
        points = as_array(x)
        if points.ndim == 1:
            step = diff(points)
            shape = [1] * values.ndim
            shape[axis] = step.shape[0]
            step = ops.reshape(step, shape)
        else:
            step = diff(points, axis=axis)
    axis = normalize_axis(axis, values.ndim, "trapezoid")
    n = values.shape[axis]
    upper = _axis_slice(values, axis, builtins.min(1, n), n)
    lower = _axis_slice(values, axis, 0, builtins.max(n - 1, 0))
    return reductions.sum(step * (upper + lower) / 2.0, axis)


def _ndim(value) -> int:
    return value.ndim if hasattr(value, "ndim") else np.ndim(value)


def _trapezoid_evenly_spaced(values, dx, axis: int):
    """NumPy's ``sum(dx * (y[1:] + y[:-1]) / 2)`` as ``dx * (sum(y) - (y[0] + y[-1]) / 2)``: one reduction
    of ``y`` (XLA:CPU copies both shifted slices when they feed a reduction). Where an end is infinite or
    NaN, ``dx * sum(y)``: the sum of pairs is then the infinity or NaN that the sum has, where subtracting
    the end would give inf - inf. Real floating ``y`` only: NumPy adds pairs of integers in their dtype,
    wrapping, and its complex products and quotients (a complex ``dx``) give infinities their own NaN parts.
    """
    dtype = dtypes.result_type(dx, values)
    n = values.shape[axis]
    kept = values.shape[:axis] + values.shape[axis + 1:]
    if n < 2:
        return ops.full(kept, 0, dtype)       # no pairs: an empty sum
    values = ops.convert(values, dtype)
    total = reductions.sum(values, axis)
    half = ops.full(kept, 0.5, dtype)
    ends = ops.mul(half, ops.add(ops.reshape(_axis_slice(values, axis, 0, 1), kept),
                                 ops.reshape(_axis_slice(values, axis, n - 1, n), kept)))
    inner = ops.select(ufuncs.isfinite(ends), ops.sub(total, ends), total)
    return ops.mul(inner, ops.broadcast_to(ops.convert(asarray(dx), dtype), kept))


@numpy_function
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule.

    >>> np.asarray(polyval([3, 0, 1], np.array([1, 2])))
    array([ 4, 13])
    """
    coefficients, t = as_array(p), as_array(x)
    if coefficients.ndim == 0:
        raise TypeError(located("polyval: iteration over a 0-d array (p must be a sequence of coefficients)"))
    y = ops.full(t.shape, 0, t.dtype)
    for i in range(coefficients.shape[0]):
        y = y * t + indexing.getitem(coefficients, i)
    return y


@numpy_function_with_static("axis")
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Unwrap phase jumps larger than ``discont`` by multiples of ``period`` along ``axis``.

    >>> np.asarray(unwrap(np.array([0.0, 6.0]))).round(3)
    array([ 0.   , -0.283])
    """
    p = _core.asarray(p)
    axis = _core.normalize_axis(axis, p.ndim, "unwrap")
    dtype = dtypes.result_type(p, period)
    p = p.astype(dtype) if p.dtype != dtype else p
    dd = diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    interval_high = period / 2
    boundary_ambiguous = True
    if dtypes.is_int(dtype):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    interval_low = -interval_high
    ddmod = ufuncs.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        ddmod = ufuncs.where((ddmod == interval_low) & (dd > 0), interval_high, ddmod)
    correction = ddmod - dd
    correction = ufuncs.where(ufuncs.abs(dd) < discont, creation.zeros_like(correction), correction)
    head = indexing.take(p, creation.arange(1), axis=axis)
    tail = indexing.take(p, creation.arange(1, p.shape[axis]), axis=axis) + reductions.cumsum(correction, axis=axis)
    return shapes.concatenate([head, tail.astype(dtype)], axis=axis)
