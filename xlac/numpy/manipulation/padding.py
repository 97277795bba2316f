"""``pad`` and its modes (constant, edge, wrap, empty, linear_ramp, the statistics, reflect and
symmetric), with NumPy 2's values, dtypes and errors.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.pad(np.array([1, 2, 3]), 2, mode="reflect"))
array([3, 2, 1, 2, 3, 2, 1])
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from xlac.ir.dtypes import INT64
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import creation, index_write, reductions, ufuncs
from xlac.numpy._core import normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.manipulation._common import _as_static, _host, _not_traced, _axis_slice, _take_static
from xlac.numpy.shapes import as_array
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["pad"]


# ---------------------------------------------------------------- pad

PAD_KEYWORDS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
                "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
                "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
                "symmetric": ("reflect_type",)}


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded by ``pad_width`` (an int, a (before, after) pair, one pair per axis, or a dict of
    axis: width) with ``mode``: "constant" (``constant_values``), "edge", "reflect", "symmetric"
    (``reflect_type`` "even" or "odd"), "wrap", "linear_ramp" (``end_values``), "maximum", "minimum",
    "mean", "median" (``stat_length``) or "empty".

    ``pad_width`` and ``stat_length`` are static; ``constant_values`` may be a traced scalar.

    Deviation: mode="empty" fills with zeros (xlac has no uninitialized memory); a callable mode is not
    supported; reflect_type other than "even" and "odd" raises ValueError (NumPy treats it as "even").

    >>> np.asarray(pad(np.array([1, 2]), (1, 2), constant_values=9))
    array([9, 1, 2, 9, 9])
    >>> np.asarray(pad(np.array([1, 2, 3]), 2, mode="wrap"))
    array([2, 3, 1, 2, 3, 1, 2])
    """
    if callable(mode):
        raise UnsupportedError(located("pad: a callable mode is not supported; use one of the named modes"))
    try:
        unsupported = set(kwargs) - set(PAD_KEYWORDS[mode])
    except (KeyError, TypeError):
        raise ValueError(located(f"pad: mode '{mode}' is not supported")) from None
    if unsupported:
        raise ValueError(located(f"pad: unsupported keyword arguments for mode '{mode}': {unsupported}"))
    if current_trace() is None:
        pad_width = _as_static(pad_width)
        kwargs = {k: _as_static(v) for k, v in kwargs.items()}
    return _pad(array, pad_width, mode, **kwargs)


pad.__wrapped_numpy__ = pad


def _as_pairs(x, ndim: int, as_index: bool = False):
    """NumPy's ``_as_pairs``: ``x`` broadcast to ``ndim`` (before, after) pairs."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(INT64, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x[0] < 0:
                raise ValueError(located("pad: index can't contain negative values"))
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError(located("pad: index can't contain negative values"))
            return ((x[0], x[1]),) * ndim
    if as_index and x.size and x.min() < 0:
        raise ValueError(located("pad: index can't contain negative values"))
    try:
        return np.broadcast_to(x, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(located(f"pad: a pad argument of shape {x.shape} does not broadcast to ({ndim}, 2), "
                                 "one (before, after) pair per axis")) from None


def _pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    pad_width = _not_traced(pad_width, "pad", "pad_width")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            axis = normalize_axis(axis, ndim, "pad")
            seq[axis] = (width, width) if isinstance(width, numbers.Integral) else tuple(width)
        pad_width = seq
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise TypeError(located("pad: `pad_width` must be of integral type."))
    return [(int(b), int(a)) for b, a in _as_pairs(widths, ndim, as_index=True)]


def _pad_body(array, pad_width, mode, constant_values=0, end_values=0, stat_length=None, reflect_type="even"):
    x = as_array(array)
    widths = _pad_widths(pad_width, x.ndim)
    if reflect_type not in ("even", "odd"):
        raise ValueError(located(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}"))
    if mode == "constant":
        return _pad_constant(x, widths, constant_values)
    if mode == "empty":
        return _pad_constant(x, widths, 0)
    final = tuple(d + b + a for d, (b, a) in zip(x.shape, widths))
    if x.size == 0:
        for axis, (b, a) in enumerate(widths):
            if x.shape[axis] == 0 and (b or a):
                raise ValueError(located(f"pad: can't extend empty axis {axis} using modes other than "
                                         "'constant' or 'empty'"))
        return ops.full(final, 0, x.dtype)
    if mode == "linear_ramp":
        ends = _as_pairs(_not_traced(end_values, "pad", "end_values"), x.ndim)
    if mode in _STATISTICS:
        lengths = _as_pairs(_not_traced(stat_length, "pad", "stat_length"), x.ndim, as_index=True)
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        if mode == "linear_ramp":
            x = _pad_linear_ramp(x, axis, before, after, ends[axis])
        elif mode in _STATISTICS:
            x = _pad_statistic(x, axis, before, after, lengths[axis], mode)
        elif mode in ("reflect", "symmetric") and reflect_type == "odd" and x.shape[axis] > 1:
            x = _pad_reflect_odd(x, axis, before, after, include_edge=mode == "symmetric")
        else:
            index = np.pad(np.arange(x.shape[axis]), (before, after), mode)
            x = _take_static(x, axis, index)
    return x


_pad_body.__name__ = _pad_body.__qualname__ = "pad"
_pad = numpy_function(_pad_body)


def _pad_constant(x: Tracer, widths, constant_values) -> Tracer:
    """Constant padding: one pad for one value, else per axis (later axes' values win at the corners)."""
    if not widths:
        return x
    lows, highs = zip(*widths)
    if isinstance(constant_values, Tracer):
        if constant_values.ndim != 0:
            raise UnsupportedError(located("pad: traced constant_values must be a scalar; pass per-axis values "
                                           "as Python numbers or a NumPy array"))
        return ops.pad(x, ops.convert(constant_values, x.dtype), lows, highs)
    pairs = _as_pairs(_host(constant_values), x.ndim)
    values = [[_fill_scalar(v, x.dtype) for v in pair] for pair in pairs]
    if _one_value(pairs):
        return ops.pad(x, values[0][0], lows, highs)
    zeros = (0,) * x.ndim
    for axis, ((before, after), (low_value, high_value)) in enumerate(zip(widths, values)):
        x = ops.pad(x, low_value, tuple(before if d == axis else 0 for d in range(x.ndim)), zeros)
        x = ops.pad(x, high_value, zeros, tuple(after if d == axis else 0 for d in range(x.ndim)))
    return x


def _one_value(pairs) -> bool:
    flat = [np.asarray(v) for pair in pairs for v in pair]
    return all(v.dtype == flat[0].dtype and np.array_equal(v, flat[0], equal_nan=v.dtype.kind in "fc")
               for v in flat)


def _fill_scalar(value, dtype) -> Tracer:
    """A 0-d traced ``value`` cast to ``dtype`` as NumPy's assignment into the padded array casts."""
    if isinstance(value, Tracer):
        return ops.convert(value, dtype)
    if np.ndim(value) != 0:
        raise ValueError(located(f"pad: each pad value must be a scalar, got shape {np.shape(value)}"))
    return index_write.update_values(value, dtype)


def _pad_linear_ramp(x: Tracer, axis: int, before: int, after: int, ends) -> Tracer:
    """NumPy's ramps: linspace from each end value to the edge, the edge itself excluded."""
    n = x.shape[axis]
    pieces = []
    for width, end, edge_at, flipped in ((before, ends[0], 0, False), (after, ends[1], n - 1, True)):
        if not width:
            pieces.append(None)
            continue
        edge = ops.reshape(_axis_slice(x, axis, edge_at, edge_at + 1), x.shape[:axis] + x.shape[axis + 1:])
        ramp = creation.linspace(end, edge, width, endpoint=False, dtype=x.dtype, axis=axis)
        pieces.append(ops.reverse(ramp, (axis,)) if flipped else ramp)
    return ops.concatenate([p for p in (pieces[0], x, pieces[1]) if p is not None], axis)


def _median_keepdims(x: Tracer, axis: int) -> Tracer:
    n = x.shape[axis]
    ordered = ops.sort((x,), axis)[0]
    middle = _axis_slice(ordered, axis, (n - 1) // 2, n // 2 + 1)
    median = reductions.mean(middle, axis=axis, keepdims=True)
    if dtypes.is_inexact(x.dtype):
        has_nan = reductions.any(ufuncs.isnan(x), axis=axis, keepdims=True)
        median = ufuncs.where(has_nan, ops.full(median.shape, np.nan, median.dtype), median)
    return median


_STATISTICS = {"maximum": lambda x, axis: reductions.max(x, axis=axis, keepdims=True),
               "minimum": lambda x, axis: reductions.min(x, axis=axis, keepdims=True),
               "mean": lambda x, axis: reductions.mean(x, axis=axis, keepdims=True),
               "median": _median_keepdims}


def _pad_statistic(x: Tracer, axis: int, before: int, after: int, lengths, mode: str) -> Tracer:
    n = x.shape[axis]
    left, right = (n if length is None or length > n else int(length) for length in lengths)
    if (left == 0 or right == 0) and mode in ("maximum", "minimum"):
        raise ValueError(located("pad: stat_length of 0 yields no value for padding"))
    stat = _STATISTICS[mode]
    left_stat = stat(_axis_slice(x, axis, 0, left), axis)
    right_stat = left_stat if left == right == n else stat(_axis_slice(x, axis, n - right, n), axis)
    pieces = []
    for value, width in ((left_stat, before), (right_stat, after)):
        if dtypes.is_int(x.dtype) and dtypes.is_inexact(value.dtype):
            value = ops.round(value)           # NumPy rounds a mean or median for integer arrays
        value = ops.convert(value, x.dtype)
        pieces.append(ops.broadcast_to(value, x.shape[:axis] + (width,) + x.shape[axis + 1:]))
    return ops.concatenate([pieces[0], x, pieces[1]], axis)


def _pad_reflect_odd(x: Tracer, axis: int, before: int, after: int, include_edge: bool) -> Tracer:
    """NumPy's iterative odd reflection: each round reflects at most the filled length, point-mirrored
    through the current edge."""
    period = x.shape[axis]
    offset = 1 if include_edge else 0
    while before > 0 or after > 0:
        filled = x.shape[axis]
        if include_edge:
            usable = filled // period * period
        else:
            usable = (filled - 1) // (period - 1) * (period - 1)
        if before > 0:
            chunk = builtins.min(usable, before)
            mirrored = ops.reverse(_axis_slice(x, axis, 1 - offset, chunk - offset + 1), (axis,))
            x = ops.concatenate([_odd(mirrored, _axis_slice(x, axis, 0, 1)), x], axis)
            before -= chunk
        if after > 0:
            m = x.shape[axis]
            chunk = builtins.min(usable, after)
            mirrored = ops.reverse(_axis_slice(x, axis, m + offset - 1 - chunk, m + offset - 1), (axis,))
            x = ops.concatenate([x, _odd(mirrored, _axis_slice(x, axis, m - 1, m))], axis)
            after -= chunk
    return x


def _odd(mirrored: Tracer, edge: Tracer) -> Tracer:
    """``2 * edge - mirrored`` in NumPy's dtypes, cast back as the assignment into the padded array casts."""
    return ops.convert(ufuncs.subtract(ufuncs.multiply(2, edge), mirrored), mirrored.dtype)
