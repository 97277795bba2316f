"""Order statistics: median, percentile, quantile and their NaN-skipping forms.

>>> import numpy as np, xlac.numpy as xnp
>>> float(xnp.median(np.array([3.0, 1.0, 2.0])))
2.0
"""
from __future__ import annotations

import math

import numpy as np

from xlac.ir.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from xlac.errors import located, UnsupportedError
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray, is_python_scalar, normalize_axes
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.indexing import take_along_axis
from xlac.numpy.sorting._common import _checked, _concrete
from xlac.numpy.sorting.order import _is_complex, _isnan, _sorted
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile"]


# ---------------------------------------------------------------- median, quantile, percentile


def _layout(x: Tracer, axis, op: str):
    """(``x`` with the reduced axes moved last and merged into one, the kept shape, the keepdims shape)."""
    axes = normalize_axes(axis, x.ndim, op)
    kept = [i for i in range(x.ndim) if i not in axes]
    rest = tuple(x.shape[i] for i in kept)
    kept_dims = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    merged = math.prod(x.shape[i] for i in axes)
    return ops.reshape(ops.transpose(x, kept + list(axes)), rest + (merged,)), rest, kept_dims


def _valid_counts(xs: Tracer, skip_nan: bool):
    """How many leading elements of each sorted row of ``xs`` count: the non-NaN ones for the nan*
    functions (a traced int64 per row), else the whole row (a Python int)."""
    n = xs.shape[-1]
    if not (skip_nan and dtypes.is_inexact(xs.dtype)):
        return n
    nans = ops.reduce(ops.convert(_isnan(xs), INT64), "sum", (xs.ndim - 1,))
    return ops.sub(ops.full(nans.shape, n, INT64), nans)


def _take_last(xs: Tracer, index: Tracer) -> Tracer:
    """``xs[..., index]`` row by row: ``index`` has ``xs``'s leading shape plus one trailing axis."""
    return take_along_axis.__wrapped_numpy__(xs, index, axis=-1)


def _row_value(xs: Tracer, i) -> Tracer:
    """``xs[..., i]`` for a static ``i``."""
    n = xs.shape[-1]
    start = tuple(0 for _ in xs.shape[:-1]) + (i % n,)
    return ops.reshape(ops.slice(xs, start, xs.shape[:-1] + (i % n + 1,)), xs.shape[:-1])


def _nan_like(shape, dtype) -> Tracer:
    return ops.full(shape, np.nan, dtype)


def _finish(result: Tracer, out, op: str, shape):
    """``result`` reshaped to ``shape`` and, with ``out=``, written into it."""
    result = ops.reshape(result, shape)
    dst = _out.output_operand(out, op)
    if dst is None:
        return result
    if dst.shape != result.shape:
        raise ValueError(located(f"{op}: out has shape {dst.shape}, the result {result.shape}"))
    return _out.store(dst, result)


def _median(op: str, a, axis, out, keepdims, skip_nan):
    x = asarray(a)
    xs, rest, kept_dims = _layout(x, axis, op)
    result_dtype = FLOAT64 if x.dtype == BOOL or dtypes.is_int(x.dtype) else x.dtype
    accumulate = FLOAT32 if result_dtype in (np.dtype("float16"), dtypes.bfloat16) else result_dtype
    shape = kept_dims if keepdims else rest
    n = xs.shape[-1]
    if n == 0:
        return _finish(_nan_like(rest, result_dtype), out, op, shape)
    xs = _sorted(xs, xs.ndim - 1)[0]
    count = _valid_counts(xs, skip_nan)
    if isinstance(count, int):
        low, high = _row_value(xs, (n - 1) // 2), _row_value(xs, n // 2)
    else:
        one = ops.full(rest, 1, INT64)
        below = ops.max(ops.sub(count, one), ops.full(rest, 0, INT64))
        low_at = ops.div(below, ops.full(rest, 2, INT64))
        high_at = ops.min(ops.div(count, ops.full(rest, 2, INT64)), ops.full(rest, n - 1, INT64))
        low, high = (ops.reshape(_take_last(xs, ops.reshape(i, rest + (1,))), rest) for i in (low_at, high_at))
    low, high = ops.convert(low, accumulate), ops.convert(high, accumulate)
    middle = ops.div(ops.add(low, high), ops.full(rest, 2, accumulate))
    if isinstance(count, int):
        value = low if n % 2 else middle
    else:
        odd = ops.compare(ops.rem(count, ops.full(rest, 2, INT64)), ops.full(rest, 1, INT64), "EQ")
        value = ops.select(odd, low, middle)
    value = ops.convert(value, result_dtype)
    if dtypes.is_inexact(x.dtype):
        empty = (_isnan(_row_value(xs, n - 1)) if isinstance(count, int)
                 else ops.compare(count, ops.full(rest, 0, INT64), "EQ"))
        value = ops.select(empty, _nan_like(rest, result_dtype), value)
    return _finish(value, out, op, shape)


@numpy_function
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (None: all; an int or a tuple): the mean of the middle two sorted
    elements for an even count. NaN where a slice holds NaN; integers and bool give float64.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.median(np.array([[4, 1, 3], [2, 8, 6]]), axis=1))
    array([3., 6.])
    """
    return _median("median", a, axis, out, keepdims, skip_nan=False)


@numpy_function
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaNs (NaN for a slice of NaNs only).

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanmedian(np.array([1.0, np.nan, 3.0, 4.0])))
    3.0
    """
    return _median("nanmedian", a, axis, out, keepdims, skip_nan=True)


QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_ALPHA_BETA = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}


def _q_check(op: str, divisor):
    """The host check of ``q``'s range NumPy makes (traced ``q`` is not checked)."""
    def check(a, q, *args, **kwargs):
        values = _concrete(q)
        if values is None or values.dtype.kind not in "biuf":
            return
        with np.errstate(invalid="ignore"):
            scaled = values / divisor
            if not np.all((scaled >= 0) & (scaled <= 1) | np.isnan(scaled)):
                what = "Percentiles" if divisor == 100 else "Quantiles"
                raise ValueError(located(f"{op}: {what} must be in the range [0, {divisor}]"))
    return check


def _discrete_index(method: str, n: Tracer, q: Tracer) -> Tracer:
    """The (int64) position a discrete method picks, ``n`` the count and ``q`` the quantile, both float."""
    one = ops.full_like(q, 1)
    if method in ("lower", "higher", "nearest"):
        position = ops.mul(ops.sub(n, one), q)
        rounded = {"lower": ops.floor, "higher": ops.ceil, "nearest": ops.round}[method](position)
        return ops.convert(rounded, INT64)
    index = ops.sub(ops.mul(n, q), one)
    if method == "closest_observation":
        index = ops.sub(index, ops.full_like(q, 0.5))
    previous = ops.floor(index)
    take_previous = ops.compare(ops.sub(index, previous), ops.full_like(q, 0), "EQ")
    if method == "closest_observation":
        odd = ops.compare(ops.rem(previous, ops.full_like(q, 2)), ops.full_like(q, 0), "NE")
        take_previous = ops.and_(take_previous, odd)
    chosen = ops.select(take_previous, previous, ops.add(previous, one))
    return ops.max(ops.convert(chosen, INT64), ops.full(q.shape, 0, INT64))


def _virtual_index(method: str, n: Tracer, q: Tracer) -> Tracer:
    """Where between the sorted elements the quantile ``q`` lies (float), as NumPy computes it."""
    one = ops.full_like(q, 1)
    if method == "linear":
        return ops.mul(ops.sub(n, one), q)
    if method == "averaged_inverted_cdf":
        return ops.sub(ops.mul(n, q), one)
    if method == "midpoint":
        position = ops.mul(ops.sub(n, one), q)
        both = ops.add(ops.floor(position), ops.ceil(position))
        return ops.mul(ops.full_like(q, 0.5), both)
    alpha, beta = _ALPHA_BETA[method]
    shift = ops.add(ops.full_like(q, alpha), ops.mul(q, ops.full_like(q, 1 - alpha - beta)))
    return ops.sub(ops.add(ops.mul(n, q), shift), one)


def _gamma(method: str, virtual: Tracer, previous: Tracer) -> Tracer:
    gamma = ops.sub(virtual, previous)
    if method == "averaged_inverted_cdf":
        return ops.select(ops.compare(gamma, ops.full_like(gamma, 0), "EQ"), ops.full_like(gamma, 0.5), ops.full_like(gamma, 1))
    if method == "midpoint":
        whole = ops.compare(ops.rem(virtual, ops.full_like(virtual, 1)), ops.full_like(virtual, 0), "EQ")
        return ops.select(whole, ops.full_like(gamma, 0), ops.full_like(gamma, 0.5))
    return gamma


def _lerp(low: Tracer, high: Tracer, t: Tracer, dtype: np.dtype) -> Tracer:
    """NumPy's ``_lerp``: ``low + (high - low) * t``, or ``high - (high - low) * (1 - t)`` where t >= 0.5;
    the difference is taken in the data's dtype, the rest in ``dtype``."""
    if low.dtype == BOOL:
        raise TypeError(located("numpy boolean subtract, the `-` operator, is not supported, use the "
                                "bitwise_xor, the `^` operator, or the logical_xor function instead."))
    diff = ops.convert(ops.sub(high, low), dtype)
    upper = ops.compare(t, ops.full_like(t, 0.5), "GE")
    complement = ops.convert(ops.sub(ops.full_like(t, 1), t), dtype)
    t = ops.convert(t, dtype)
    forward = ops.add(ops.convert(low, dtype), ops.mul(diff, t))
    backward = ops.sub(ops.convert(high, dtype), ops.mul(diff, complement))
    return ops.select(upper, backward, forward)


def _quantile(op: str, a, q, axis, out, method, keepdims, skip_nan, percent=False):
    x = asarray(a)
    if _is_complex(x.dtype):
        raise TypeError(located(f"{op}: a must be an array of real numbers"))
    if method not in QUANTILE_METHODS:
        raise ValueError(located(f"{op}: {method!r} is not a valid method. Use one of: {QUANTILE_METHODS}"))
    weak_q = type(q) in (int, float)
    qs = asarray(q)
    q_dtype = dtypes.default_dtype(q) if is_python_scalar(q) else qs.dtype
    qs = ops.convert(qs, q_dtype)
    if percent:
        q_dtype = q_dtype if dtypes.is_inexact(q_dtype) else FLOAT64
        qs = ops.div(ops.convert(qs, q_dtype), ops.full(qs.shape, 100, q_dtype))
    if qs.ndim > 2:
        raise ValueError(located(f"{op}: q must be a scalar or 1d"))
    xs, rest, kept_dims = _layout(x, axis, op)
    n = xs.shape[-1]
    out_shape = qs.shape + (kept_dims if keepdims else rest)
    integer_positions = method in _DISCRETE or (method == "linear" and dtypes.is_int(q_dtype))
    index_dtype = q_dtype if dtypes.is_inexact(q_dtype) else FLOAT64
    if integer_positions:
        result_dtype = x.dtype
    else:
        result_dtype = dtypes.result_type(x.dtype, 0.0 if weak_q else index_dtype)
    if n == 0:
        if skip_nan:
            return _finish(_nan_like((qs.size,) + rest, result_dtype), out, op, out_shape)
        raise IndexError(located(f"{op}: cannot take a quantile of an empty array (index -1 is out of bounds "
                                 "for axis 0 with size 0)"))
    xs = _sorted(xs, xs.ndim - 1)[0]
    count = _valid_counts(xs, skip_nan)
    k = qs.size
    grid = rest + (k,)
    index_dims = tuple(range(len(rest), len(grid)))
    q_grid = ops.broadcast_in_dim(ops.reshape(qs, (k,)), grid, index_dims)
    count_grid = (ops.full(grid, count, INT64) if isinstance(count, int)
                  else ops.broadcast_in_dim(count, grid, tuple(range(len(rest)))))
    last = ops.max(ops.sub(count_grid, ops.full(grid, 1, INT64)), ops.full(grid, 0, INT64))
    if integer_positions:
        if method == "linear":
            position = ops.mul(ops.convert(last, q_dtype), ops.convert(q_grid, q_dtype))
            position = ops.convert(position, INT64)
        else:
            float_q = ops.convert(q_grid, index_dtype)
            position = _discrete_index(method, ops.convert(count_grid, float_q.dtype), float_q)
        position = ops.min(ops.max(position, ops.full(grid, 0, INT64)), last)
        result = _take_last(xs, position)
    else:
        float_q = ops.convert(q_grid, index_dtype)
        virtual = _virtual_index(method, ops.convert(count_grid, index_dtype), float_q)
        previous = ops.convert(ops.floor(virtual), INT64)
        following = ops.add(previous, ops.full(grid, 1, INT64))
        above = ops.or_(ops.compare(virtual, ops.convert(last, index_dtype), "GE"), _isnan(virtual))
        below = ops.compare(virtual, ops.full_like(virtual, 0), "LT")
        previous = ops.select(above, last, ops.select(below, ops.full(grid, 0, INT64), previous))
        following = ops.select(above, last, ops.select(below, ops.full(grid, 0, INT64), following))
        gamma = _gamma(method, virtual, ops.convert(previous, index_dtype))
        result = _lerp(_take_last(xs, previous), _take_last(xs, following), gamma, result_dtype)
    if dtypes.is_inexact(x.dtype):
        if isinstance(count, int):
            last_value = ops.convert(_row_value(xs, n - 1), result_dtype)
            nan_rows = ops.broadcast_in_dim(_isnan(last_value), grid, tuple(range(len(rest))))
            result = ops.select(nan_rows, ops.broadcast_in_dim(last_value, grid, tuple(range(len(rest)))), result)
        else:
            empty = ops.compare(count_grid, ops.full(grid, 0, INT64), "EQ")
            result = ops.select(empty, _nan_like(grid, result_dtype), result)
    result = ops.transpose(result, (len(rest),) + tuple(range(len(rest))))
    return _finish(result, out, op, out_shape)


@_checked(_q_check("quantile", 1))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or 1-D, may be traced) of ``a`` along ``axis``,
    by any of NumPy's 13 ``method``\\ s (default linear interpolation). The result has ``q``'s shape in
    front; its dtype is NumPy's (float64 for integer data, the data's dtype for discrete methods).

    Deviation: ``weights=`` is not supported; traced ``q`` is not range-checked.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.quantile(np.array([1.0, 2.0, 3.0, 4.0]), [0.25, 0.5]))
    array([1.75, 2.5 ])
    """
    _no_weights("quantile", weights)
    return _quantile("quantile", a, q, axis, out, method, keepdims, skip_nan=False)


@_checked(_q_check("percentile", 100))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None):
    """The ``q``-th percentiles (``q`` in [0, 100]): :func:`quantile` of ``q / 100``.

    Deviation: ``weights=`` is not supported; traced ``q`` is not range-checked.

    >>> import xlac.numpy as xnp
    >>> float(xnp.percentile(np.array([1, 2, 3, 4, 5]), 25))
    2.0
    """
    _no_weights("percentile", weights)
    return _quantile("percentile", a, q, axis, out, method, keepdims, skip_nan=False, percent=True)


@_checked(_q_check("nanquantile", 1))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    """:func:`quantile` ignoring NaNs (NaN for a slice of NaNs only).

    Deviation: ``weights=`` is not supported; the result dtype does not depend on the data (NumPy gives
    a result whose slices are all NaN the data's dtype).

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanquantile(np.array([1.0, np.nan, 3.0]), 0.5))
    2.0
    """
    _no_weights("nanquantile", weights)
    return _quantile("nanquantile", a, q, axis, out, method, keepdims, skip_nan=True)


@_checked(_q_check("nanpercentile", 100))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None):
    """:func:`percentile` ignoring NaNs.

    Deviation: as :func:`nanquantile`'s.

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanpercentile(np.array([1.0, np.nan, 3.0]), 100))
    3.0
    """
    _no_weights("nanpercentile", weights)
    return _quantile("nanpercentile", a, q, axis, out, method, keepdims, skip_nan=True, percent=True)


def _no_weights(op: str, weights) -> None:
    if weights is not None:
        raise UnsupportedError(located(f"{op}: weights= is not supported"))


# Outside a compiled function, out= is written into and returned as NumPy returns it.
for _name, _position in {"median": 2, "nanmedian": 2, "quantile": 3, "percentile": 3, "nanquantile": 3,
                         "nanpercentile": 3}.items():
    globals()[_name] = _out.returns_out(globals()[_name], _position)
