"""Reductions and scans with NumPy 2's axes, keepdims, result dtypes and NaN rules.

Sums and products of bool and small integers give int64 (unsigned: uint64), as in
NumPy; float16 and bfloat16 accumulate in float32 and round once at the end.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.sum(np.array([[1, 2], [3, 4]], np.int8), axis=0))
array([4, 6])
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from xlac.ir.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from xlac.errors import located, UnsupportedError
from xlac.ir import dtypes
from xlac.numpy import _out, complex_order
from xlac.numpy._core import asarray, float_dtype_for, is_python_scalar, normalize_axes, normalize_axis
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.shapes import diagonal
from xlac.numpy.ufuncs import multiply, subtract
from xlac.trace import ops
from xlac.trace.facts import set_known_range
from xlac.trace.tracer import Tracer

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
           "cumsum", "cumprod", "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "trace", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "ptp", "average", "count_nonzero",
           "cumulative_sum", "cumulative_prod"]


# ---------------------------------------------------------------- shared pieces


def _output(out, op: str):
    """The traced array ``out=`` names (None for none), NumPy's errors for anything else."""
    return _out.output_operand(out, op)


def _compute_dtype(x_dtype: np.dtype, dst, default: np.dtype) -> np.dtype:
    """The dtype a reduction computes in without dtype=: with ``out``, NumPy's reduce promotes the input
    with ``out``'s dtype (np.sum(float32, out=float64) sums in float64); without, ``default``."""
    return default if dst is None else dtypes.result_type(x_dtype, dst.dtype)


def _reduce_into(dst, result, ufunc: str, public: str):
    """``result`` as the function's return value: itself, or written into ``dst`` (unsafe cast, as NumPy's
    reductions cast) after NumPy's shape checks, returning ``dst``."""
    if dst is None:
        return result
    if dst.ndim != result.ndim:
        raise ValueError(located(f"{public}: output parameter for reduction operation {ufunc} has the wrong "
                                 f"number of dimensions: Found {dst.ndim} but expected {result.ndim}"))
    if dst.shape != result.shape:
        raise ValueError(located(f"{public}: output array of shape {dst.shape} does not match the "
                                 f"reduction's result shape {result.shape}"))
    return _out.store(dst, result)


def _reduce_op(op: str, dtype: np.dtype) -> str:
    """The reduce op for sum/prod/max/min in ``dtype``: booleans sum and take maxima by or, multiply and
    take minima by and."""
    return {"sum": "or", "prod": "and", "max": "or", "min": "and"}[op] if dtype == BOOL else op


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's result dtype of sum/prod/cumsum: small ints widen to the platform int (uint: uint64)."""
    if dtype == BOOL or (dtypes.is_signed_int(dtype) and dtype.itemsize < 8):
        return INT64
    if dtypes.is_unsigned_int(dtype):
        return np.dtype("uint64")
    return dtype


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic runs in: half-precision floats accumulate in float32."""
    return FLOAT32 if dtype in (np.float16, dtypes.bfloat16) else dtype


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return {"complex64": FLOAT32, "complex128": FLOAT64}.get(dtype.name, dtype)


def _kept(result, shape, axes, keepdims: bool):
    if not keepdims:
        return result
    return ops.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _mask(where, shape, op: str):
    """``where`` as a bool tracer of ``shape``, or None when every element takes part."""
    if where is None or (is_python_scalar(where) and where is True):
        return None
    mask = asarray(where)
    if mask.dtype != BOOL:
        raise TypeError(located(f"{op}: where= must be a boolean array, got dtype {mask.dtype}"))
    try:
        return ops.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(located(f"{op}: where= of shape {mask.shape} does not broadcast to the "
                                 f"array's shape {tuple(shape)}")) from None


def _fill_masked(x, mask, fill):
    """``x`` with the elements outside ``mask`` replaced by ``fill``."""
    if mask is None:
        return x
    return ops.select(mask, x, ops.full(x.shape, fill, x.dtype))


def _scalar_as(value, dtype: np.dtype):
    """A 0-d tracer of ``value`` cast to ``dtype`` as NumPy casts ``initial=`` (unsafe, but Python ints
    out of range raise OverflowError)."""
    if is_python_scalar(value) and not isinstance(value, (float, complex)):
        return asarray(value, dtype)
    x = asarray(value)
    if x.shape != ():
        raise ValueError(located(f"initial= must be a scalar, got an array of shape {x.shape}"))
    return ops.convert(x, dtype)


def _isnan(x):
    return ops.compare(x, x, "NE")


def _without_nans(mask, x):
    """``mask`` (None: everything) narrowed to the elements of ``x`` that are not NaN."""
    not_nan = ops.not_(_isnan(x))
    return not_nan if mask is None else ops.and_(mask, not_nan)


def _total_and_count(x, axes, mask):
    """The sum over ``axes`` of ``x``'s elements inside ``mask`` and how many they are (in ``x``'s dtype): a
    constant count without a mask, else both in one pass (one reduce, which computes the mask once). The
    count sums in int64, exact, and on the CPU 2.5x faster than in float64 beside a float64 sum."""
    if mask is None:
        return ops.reduce(x, "sum", axes), ops.constant(math.prod(x.shape[a] for a in axes), x.dtype)
    total, count = ops.reduce_many([_fill_masked(x, mask, 0), ops.convert(mask, INT64)], ("sum", "sum"), axes)
    return total, ops.convert(count, x.dtype)


def _divide(total, count, dtype: np.dtype):
    """``total / count`` in ``dtype``; integer dtypes divide in float64 and truncate, as NumPy's unsafe cast."""
    count = ops.broadcast_to(ops.convert(count, total.dtype), total.shape)
    if dtypes.is_inexact(dtype):
        return ops.convert(ops.div(total, count), dtype)
    quotient = ops.div(ops.convert(total, FLOAT64), ops.convert(count, FLOAT64))
    return ops.convert(quotient, dtype)


# ---------------------------------------------------------------- sum, prod


_IDENTITY = {"sum": 0, "prod": 1}
# The elementwise op that combines two partial results of each reduce op.
_COMBINE_TWO = {"sum": ops.add, "prod": ops.mul, "max": ops.max, "min": ops.min, "and": ops.and_, "or": ops.or_}


def _sum_or_prod(op: str, a, axis, dtype, out, keepdims, initial, where, skip_nan=False):
    public = ("nan" if skip_nan else "") + op
    dst = _output(out, public)
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim, public)
    result_dtype = (dtypes.canonical(dtype) if dtype is not None
                    else _compute_dtype(x.dtype, dst, _sum_dtype(x.dtype)))
    mask = _mask(where, x.shape, public)
    if skip_nan and dtypes.is_inexact(x.dtype):
        mask = _without_nans(mask, x)
    x = _fill_masked(_out.cast(x, _accumulator(result_dtype)), mask, _IDENTITY[op])
    result = ops.reduce(x, _reduce_op(op, x.dtype), axes)
    if initial is not None:
        start = ops.broadcast_to(_scalar_as(initial, result.dtype), result.shape)
        result = (_COMBINE_TWO[_reduce_op(op, result.dtype)])(start, result)
    result = _kept(ops.convert(result, result_dtype), x.shape, axes, keepdims)
    return _reduce_into(dst, result, "add" if op == "sum" else "multiply", public)


@numpy_function
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum of ``a`` over ``axis`` (None: every axis; an int or a tuple of ints).

    bool and integers narrower than 64 bits sum in int64 (unsigned: uint64), as in NumPy.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.sum(np.array([[1, 2], [3, 4]], np.int8), axis=1, keepdims=True))
    array([[3],
           [7]])
    >>> float(xnp.sum(np.array([1.0, 2.0, 3.0]), where=np.array([True, False, True]), initial=10.0))
    14.0
    """
    return _sum_or_prod("sum", a, axis, dtype, out, keepdims, initial, where)


@numpy_function
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product of ``a`` over ``axis``, with sum's result dtypes.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.prod(np.array([[1, 2], [3, 4]], np.uint8), axis=0))
    array([3, 8], dtype=uint64)
    """
    return _sum_or_prod("prod", a, axis, dtype, out, keepdims, initial, where)


@numpy_function
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero.

    >>> import xlac.numpy as xnp
    >>> float(xnp.nansum(np.array([1.0, np.nan, 2.0])))
    3.0
    """
    return _sum_or_prod("sum", a, axis, dtype, out, keepdims, initial, where, skip_nan=True)


@numpy_function
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs as one.

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanprod(np.array([2.0, np.nan, 3.0])))
    6.0
    """
    return _sum_or_prod("prod", a, axis, dtype, out, keepdims, initial, where, skip_nan=True)


# ---------------------------------------------------------------- mean, var, std


def _mean_dtypes(x_dtype: np.dtype, dtype) -> tuple[np.dtype, np.dtype]:
    """(result dtype, accumulation dtype) of mean: integers and bool average in float64."""
    if dtype is not None:
        result = dtypes.canonical(dtype)
    elif x_dtype == BOOL or dtypes.is_int(x_dtype):
        result = FLOAT64
    else:
        result = x_dtype
    return result, _accumulator(result)


def _mean_parts(op: str, a, axis, dtype, dst, where, skip_nan=False):
    """(sum in the accumulation dtype, element count, x in that dtype, mask, axes, result dtype).
    With an output array ``dst`` and no dtype=, floats sum in their promotion with ``dst``'s dtype."""
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim, op)
    if dst is not None and dtype is None and dtypes.is_inexact(x.dtype) and x.dtype != np.float16:
        dtype = dtypes.result_type(x.dtype, dst.dtype)
    result_dtype, acc = _mean_dtypes(x.dtype, dtype)
    mask = _mask(where, x.shape, op)
    if skip_nan and dtypes.is_inexact(x.dtype):
        mask = _without_nans(mask, x)
    x = ops.convert(x, acc)
    total, count = _total_and_count(x, axes, mask)
    return total, count, x, mask, axes, result_dtype


@numpy_function
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``; integers and bool give float64, float16 averages in float32.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.mean(np.array([[1, 2], [3, 5]]), axis=0))
    array([2. , 3.5])
    """
    return _mean("mean", a, axis, dtype, out, keepdims, where)


def _mean(op: str, a, axis, dtype, out, keepdims, where, skip_nan=False):
    dst = _output(out, op)
    if skip_nan and dst is not None and dtypes.is_inexact(asarray(a).dtype) and not dtypes.is_inexact(dst.dtype):
        raise TypeError(located(f"{op}: If a is inexact, then out must be inexact"))
    total, count, x, _, axes, result_dtype = _mean_parts(op, a, axis, dtype, dst, where, skip_nan)
    if dst is None:
        return _kept(_divide(total, count, result_dtype), x.shape, axes, keepdims)
    count = _kept(ops.broadcast_to(count, total.shape), x.shape, axes, keepdims)
    total = _kept(total, x.shape, axes, keepdims)
    return _reduce_into(dst, _divide_into(total, count, dst.dtype), "add", op)


def _divide_into(total, count, out_dtype: np.dtype):
    """NumPy's ``true_divide(out, count, out=out, casting="unsafe")`` after summing into ``out``: the total
    is rounded to ``out``'s dtype, divided in its promotion with the (int64) count, and cast back."""
    division = dtypes.result_type(out_dtype, INT64)
    if not dtypes.is_inexact(division):
        division = FLOAT64
    total = _out.cast(_out.cast(total, out_dtype), division)
    return _out.cast(ops.div(total, ops.convert(count, division)), out_dtype)


@numpy_function
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Mean of the elements that are not NaN (NaN where there are none).

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanmean(np.array([1.0, np.nan, 3.0])))
    2.0
    """
    return _mean("nanmean", a, axis, dtype, out, keepdims, where, skip_nan=True)


def _variance(op: str, a, axis, dtype, dst, ddof, keepdims, where, mean, correction, skip_nan=False):
    """(sum of squared deviations, degrees of freedom, result dtype, input shape, axes); with an output
    array ``dst`` and no dtype=, floats' squares sum in their promotion with ``dst``'s dtype."""
    if correction is not None:
        if ddof != 0:
            raise ValueError(located(f"{op}: ddof and correction can't be provided simultaneously."))
        ddof = correction
    if dtype is not None and not dtypes.is_inexact(dtypes.canonical(dtype)):
        raise UnsupportedError(located(f"{op}: dtype={dtypes.canonical(dtype)} is not supported; "
                                       "use a floating or complex dtype"))
    total, count, x, mask, axes, result_dtype = _mean_parts(op, a, axis, dtype, None, where, skip_nan)
    if mean is None:
        mean_value = ops.div(total, ops.broadcast_to(count, total.shape))
        mean_value = ops.broadcast_in_dim(mean_value, x.shape, [i for i in range(x.ndim) if i not in axes])
    else:
        mean_value = ops.broadcast_to(ops.convert(asarray(mean), x.dtype), x.shape)
    deviation = ops.sub(x, mean_value)
    if deviation.dtype.kind == "c":
        re, im = ops.real(deviation), ops.imag(deviation)
        squares = ops.add(ops.mul(re, re), ops.mul(im, im))
    else:
        squares = ops.mul(deviation, deviation)
    if dst is not None and dtype is None:
        squares = ops.convert(squares, dtypes.result_type(squares.dtype, dst.dtype))
    spread = ops.reduce(_fill_masked(squares, mask, 0), "sum", axes)
    dof = ops.broadcast_to(_degrees_of_freedom(
        math.prod(x.shape[a] for a in axes) if mask is None else count, ddof, spread.dtype), spread.shape)
    return spread, dof, _real_dtype(result_dtype), x.shape, axes


def _variance_result(op: str, a, axis, dtype, out, ddof, keepdims, where, mean, correction, root: bool,
                     skip_nan=False):
    dst = _output(out, op)
    if skip_nan:
        skip_nan = _check_nan_variance(op, a, dtype, dst)
    spread, dof, result_dtype, shape, axes = _variance(op, a, axis, dtype, dst, ddof, keepdims, where, mean,
                                                       correction, skip_nan)
    if dst is None:
        variance = _nan_without_freedom(ops.div(spread, dof), dof, skip_nan)
        return _kept(ops.convert(ops.sqrt(variance) if root else variance, result_dtype), shape, axes,
                     keepdims)
    variance = _divide_into(_kept(spread, shape, axes, keepdims), _kept(dof, shape, axes, keepdims), dst.dtype)
    variance = _nan_without_freedom(variance, _kept(dof, shape, axes, keepdims), skip_nan)
    if root:        # NumPy's sqrt(out, out=out): same_kind casting, so an integer out is refused
        root_dtype = float_dtype_for(dst.dtype)
        if root_dtype != dst.dtype and not np.can_cast(root_dtype, dst.dtype, "same_kind"):
            raise TypeError(located(f"Cannot cast ufunc 'sqrt' output from {root_dtype!r} to {dst.dtype!r} with "
                                    "casting rule 'same_kind'"))
        variance = ops.sqrt(variance)
    return _reduce_into(dst, variance, "add", op)


def _check_nan_variance(op: str, a, dtype, dst) -> bool:
    """Whether nanvar/nanstd skip NaNs (for inexact ``a``; otherwise they are var/std), after NumPy's checks."""
    if not dtypes.is_inexact(asarray(a).dtype):
        return False
    if dtype is not None and not dtypes.is_inexact(dtypes.canonical(dtype)):
        raise TypeError(located(f"{op}: If a is inexact, then dtype must be inexact"))
    if dst is not None and not dtypes.is_inexact(dst.dtype):
        raise TypeError(located(f"{op}: If a is inexact, then out must be inexact"))
    return True


def _nan_without_freedom(variance, dof, skip_nan: bool):
    """nanvar's NaN where no degrees of freedom are left (var divides by zero there instead)."""
    if not skip_nan:
        return variance
    no_freedom = ops.compare(dof, ops.full(dof.shape, 0, dof.dtype), "LE")
    return ops.select(no_freedom, ops.full(variance.shape, np.nan, variance.dtype), variance)


def _degrees_of_freedom(count, ddof, dtype):
    """max(count - ddof, 0), NumPy's divisor for var/std; ``count``: an int, or a mask's traced count."""
    if isinstance(count, int):
        return ops.constant(builtins.max(count - ddof, 0), dtype)
    count = ops.convert(ops.real(count) if count.dtype.kind == "c" else count, dtype)
    dof = ops.sub(count, ops.full(count.shape, ddof, dtype))
    return ops.max(dof, ops.full(dof.shape, 0, dtype))


@numpy_function
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance ``mean(abs(a - a.mean())**2)`` with ``ddof`` delta degrees of freedom; complex gives real.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.var(np.array([[1.0, 2.0], [3.0, 5.0]]), axis=1, ddof=1))
    array([0.5, 2. ])
    """
    return _variance_result("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction, root=False)


@numpy_function
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Standard deviation: the square root of :func:`var`.

    >>> import xlac.numpy as xnp
    >>> float(xnp.std(np.array([1, 3])))
    1.0
    """
    return _variance_result("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction, root=True)


@numpy_function
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance of the elements that are not NaN; NaN where fewer than ``ddof + 1`` are left.

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanvar(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    return _variance_result("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction, root=False,
                            skip_nan=True)


@numpy_function
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Standard deviation of the elements that are not NaN: the square root of :func:`nanvar`.

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanstd(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    return _variance_result("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean, correction, root=True,
                            skip_nan=True)


# ---------------------------------------------------------------- max, min


_UFUNC_NAME = {"max": "maximum", "min": "minimum", "nanmax": "fmax", "nanmin": "fmin"}  # named in errors


def _lowest(op: str, dtype: np.dtype):
    """The value that never wins ``op``: -inf for max of floats, the largest int for min of ints, ..."""
    if dtype == BOOL:
        return op == "min"
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return int(info.min if op == "max" else info.max)
    return -np.inf if op == "max" else np.inf


def _extremum(op: str, a, axis, out, keepdims, initial, where, skip_nan=False):
    public = ("nan" if skip_nan else "") + op
    ufunc = _UFUNC_NAME[public]
    dst = _output(out, public)
    x = asarray(a)
    x = _out.cast(x, _compute_dtype(x.dtype, dst, x.dtype))
    axes = normalize_axes(axis, x.ndim, public)
    mask = _mask(where, x.shape, public)
    if initial is None:
        if mask is not None:
            raise ValueError(located(f"reduction operation '{ufunc}' does not have an identity, "
                                     "so to use a where mask one has to specify 'initial'"))
        if builtins.any(x.shape[i] == 0 for i in axes):
            raise ValueError(located(f"zero-size array to reduction operation {ufunc} which has no identity"))
    if x.dtype.kind == "c":
        result = complex_order.extreme(x, axes, op, mask, initial, skip_nan)
        return _reduce_into(dst, _kept(result, x.shape, axes, keepdims), ufunc, public)
    skip = skip_nan and dtypes.is_float(x.dtype)
    if skip:
        mask = _without_nans(mask, x)
    # XLA's max/min propagate NaN (checked in tests), which is NumPy's rule for max/min.
    combine = {"max": "or", "min": "and"}[op] if x.dtype == BOOL else op
    result = ops.reduce(_fill_masked(x, mask, _lowest(op, x.dtype)), combine, axes)
    if skip:
        # fmax/fmin: NaN only where no element was a number (and initial, if given, is NaN).
        nothing = ops.reduce(ops.not_(mask), "and", axes)
        if initial is None:
            result = ops.select(nothing, ops.full(result.shape, np.nan, x.dtype), result)
    if initial is not None:
        start = ops.broadcast_to(_scalar_as(initial, x.dtype), result.shape)
        combined = _COMBINE_TWO[combine](start, result)
        if skip:
            combined = ops.select(_isnan(start), ops.select(nothing, start, result), combined)
        result = combined
    return _reduce_into(dst, _kept(result, x.shape, axes, keepdims), ufunc, public)


@numpy_function
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Largest element over ``axis``; NaN if any element is NaN, as in NumPy.

    An empty reduction needs ``initial``, and so does ``where=``.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.max(np.array([[1, 5], [7, 2]]), axis=1))
    array([5, 7])
    >>> float(xnp.max(np.array([1.0, np.nan])))
    nan
    """
    return _extremum("max", a, axis, out, keepdims, initial, where)


@numpy_function
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Smallest element over ``axis``; NaN if any element is NaN.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.min(np.array([[1, 5], [7, 2]]), axis=0))
    array([1, 2])
    """
    return _extremum("min", a, axis, out, keepdims, initial, where)


@numpy_function
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Largest element ignoring NaNs (NaN where every element is NaN).

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanmax(np.array([1.0, np.nan, 3.0])))
    3.0
    """
    return _extremum("max", a, axis, out, keepdims, initial, where, skip_nan=True)


@numpy_function
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Smallest element ignoring NaNs (NaN where every element is NaN).

    >>> import xlac.numpy as xnp
    >>> float(xnp.nanmin(np.array([np.nan, 2.0, 3.0])))
    2.0
    """
    return _extremum("min", a, axis, out, keepdims, initial, where, skip_nan=True)


# ---------------------------------------------------------------- argmax, argmin


def _arg_extremum(op: str, a, axis, out, keepdims, skip_nan=False):
    public = ("nan" if skip_nan else "") + op
    dst = _output(out, public)
    if dst is not None and not np.can_cast(dst.dtype, INT64, "safe"):
        raise TypeError(located(f"{public}: Cannot cast scalar from {dst.dtype!r} to dtype('int64') according "
                                "to the rule 'safe'"))
    x = asarray(a)
    if skip_nan and x.dtype.kind == "c":
        x = complex_order.without_nans(x, op[3:])
    elif skip_nan and dtypes.is_float(x.dtype):     # NumPy's way: NaN loses to everything, -inf included
        x = _fill_masked(x, ops.not_(_isnan(x)), -np.inf if op == "argmax" else np.inf)
    if x.dtype == BOOL:
        x = ops.convert(x, np.dtype("uint8"))
    shape = x.shape
    if axis is None:
        x, reduced = ops.reshape(x, (x.size,)), 0
        kept_shape = (1,) * len(shape)
    else:
        reduced = normalize_axis(axis, x.ndim, public)
        kept_shape = tuple(1 if i == reduced else d for i, d in enumerate(shape))
    if x.shape[reduced] == 0:
        raise ValueError(located(f"attempt to get {op} of an empty sequence"))
    if x.dtype.kind == "c":
        index = complex_order.arg_extreme(x, reduced, op[3:])
    else:
        index = (ops.argmax if op == "argmax" else ops.argmin)(x, reduced, INT64)
    index = ops.reshape(index, kept_shape) if keepdims else index
    if isinstance(index, Tracer) and index.ndim == 0:
        set_known_range(index, (0, x.shape[reduced] - 1))     # h = embed[np.argmax(s)] needs no bounds check
    if dst is not None and dst.shape != index.shape:
        raise ValueError(located(f"output array does not match result of np.{op}."))
    return _reduce_into(dst, index, op, public)


@numpy_function
def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the largest element along ``axis`` (None: of the flattened array); the first one on ties,
    the first NaN if there is one. Indices are int64.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.argmax(np.array([[1, 9], [7, 2]]), axis=0))
    array([1, 0])
    >>> int(xnp.argmax(np.array([1.0, np.nan, 5.0])))
    1
    """
    return _arg_extremum("argmax", a, axis, out, keepdims)


@numpy_function
def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the smallest element along ``axis`` (None: of the flattened array).

    >>> import xlac.numpy as xnp
    >>> int(xnp.argmin(np.array([[4, 9], [0, 2]])))
    2
    """
    return _arg_extremum("argmin", a, axis, out, keepdims)


@numpy_function
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the largest element that is not NaN along ``axis``.

    Deviation: an all-NaN slice gives the index of its first element; NumPy raises ValueError (the check
    depends on the data, which a compiled program cannot raise on).

    >>> import xlac.numpy as xnp
    >>> int(xnp.nanargmax(np.array([1.0, np.nan, 5.0])))
    2
    """
    return _arg_extremum("argmax", a, axis, out, keepdims, skip_nan=True)


@numpy_function
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the smallest element that is not NaN along ``axis``.

    Deviation: an all-NaN slice gives the index of its first element; NumPy raises ValueError.

    >>> import xlac.numpy as xnp
    >>> int(xnp.nanargmin(np.array([np.nan, 2.0, 1.0])))
    2
    """
    return _arg_extremum("argmin", a, axis, out, keepdims, skip_nan=True)


# ---------------------------------------------------------------- all, any


def _truth(op: str, a, axis, out, keepdims, where):
    dst = _output(out, op)
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim, op)
    truth = x if x.dtype == BOOL else ops.compare(x, ops.full(x.shape, 0, x.dtype), "NE")
    truth = _fill_masked(truth, _mask(where, x.shape, op), op == "all")
    result = _kept(ops.reduce(truth, "and" if op == "all" else "or", axes), x.shape, axes, keepdims)
    return _reduce_into(dst, result, "logical_and" if op == "all" else "logical_or", op)


@numpy_function
def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """True where every element along ``axis`` is nonzero (NaN counts as nonzero); always bool.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.all(np.array([[1, 0], [2, 3]]), axis=1))
    array([False,  True])
    """
    return _truth("all", a, axis, out, keepdims, where)


@numpy_function
def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """True where some element along ``axis`` is nonzero; always bool.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.any(np.array([[1, 0], [0, 0]]), axis=1))
    array([ True, False])
    """
    return _truth("any", a, axis, out, keepdims, where)


# ---------------------------------------------------------------- cumsum, cumprod, running maxima and minima

# The public name and the ufunc of each running op.
_CUMULATIVE_NAMES = {"sum": ("cumsum", "add"), "prod": ("cumprod", "multiply"),
                     "max": ("maximum.accumulate", "maximum"), "min": ("minimum.accumulate", "minimum")}


def _cumulative(op: str, a, axis, dtype, out, skip_nan=False):
    name, ufunc = _CUMULATIVE_NAMES[op]
    public = ("nan" if skip_nan else "") + name
    dst = _output(out, public)
    x = asarray(a)
    if axis is None:
        x, axis = ops.reshape(x, (x.size,)), 0
    else:
        axis = normalize_axis(axis, x.ndim, public)
    if dst is not None and dst.shape != x.shape:
        raise ValueError(located(f"{public}: provided out is the wrong size for the accumulation (out has shape "
                                 f"{dst.shape}, the result {x.shape})."))
    scanned = _scan(op, x, axis, dtype, dst, skip_nan)
    return _reduce_into(dst, scanned, ufunc, public)


def _scan(op: str, x, axis: int, dtype, dst, skip_nan=False):
    """The running sum, product, maximum or minimum of ``x`` along ``axis`` in NumPy's result dtype (NaNs
    as the identity with ``skip_nan``)."""
    default = _sum_dtype(x.dtype) if op in ("sum", "prod") else x.dtype
    result_dtype = dtypes.canonical(dtype) if dtype is not None else _compute_dtype(x.dtype, dst, default)
    if op in ("max", "min") and x.dtype.kind == "c":
        return complex_order.running_extreme(_out.cast(x, result_dtype), axis, op)
    if skip_nan and dtypes.is_inexact(x.dtype):
        x = _fill_masked(x, ops.not_(_isnan(x)), _IDENTITY[op])
    x = _out.cast(x, _accumulator(result_dtype))
    scanned = ops.cumulative(x, _reduce_op(op, x.dtype), axis)
    return ops.convert(scanned, result_dtype)


@numpy_function
def maximum_accumulate(a, axis=0, dtype=None, out=None):
    """``np.maximum.accumulate``: the running maximum along ``axis``; a NaN carries on to the end.

    >>> np.asarray(maximum_accumulate(np.array([1.0, 3.0, 2.0, np.nan, 5.0])))
    array([ 1.,  3.,  3., nan, nan])
    """
    return _cumulative("max", a, axis, dtype, out)


@numpy_function
def minimum_accumulate(a, axis=0, dtype=None, out=None):
    """``np.minimum.accumulate``: the running minimum along ``axis``; a NaN carries on to the end.

    >>> np.asarray(minimum_accumulate(np.array([[3, 1], [2, 4]]), axis=1))
    array([[3, 1],
           [2, 2]])
    """
    return _cumulative("min", a, axis, dtype, out)


@numpy_function
def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis`` (None: of the flattened array), with sum's result dtypes. On CPU the terms
    are added in NumPy's order (the same rounding); on other devices in a tree, as jax adds them.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.cumsum(np.array([[1, 2, 3], [4, 5, 6]], np.int8), axis=1))
    array([[ 1,  3,  6],
           [ 4,  9, 15]])
    """
    return _cumulative("sum", a, axis, dtype, out)


@numpy_function
def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis`` (None: of the flattened array).

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.cumprod(np.array([1.0, 2.0, 3.0, 4.0])))
    array([ 1.,  2.,  6., 24.])
    """
    return _cumulative("prod", a, axis, dtype, out)


@numpy_function
def nancumsum(a, axis=None, dtype=None, out=None):
    """Running sum treating NaNs as zero.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.nancumsum(np.array([1.0, np.nan, 2.0])))
    array([1., 1., 3.])
    """
    return _cumulative("sum", a, axis, dtype, out, skip_nan=True)


@numpy_function
def nancumprod(a, axis=None, dtype=None, out=None):
    """Running product treating NaNs as one.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.nancumprod(np.array([2.0, np.nan, 3.0])))
    array([2., 2., 6.])
    """
    return _cumulative("prod", a, axis, dtype, out, skip_nan=True)


def _cumulative_array_api(op: str, x, axis, dtype, out, include_initial: bool):
    public = "cumulative_" + op
    dst = _output(out, public)
    x = asarray(x)
    if x.ndim == 0:
        x = ops.reshape(x, (1,))
    if axis is None:
        if x.ndim >= 2:
            raise ValueError(located(f"{public}: For arrays which have more than one dimension ``axis`` argument "
                                     "is required."))
        axis = 0
    axis = normalize_axis(axis, x.ndim, public)
    shape = tuple(d + (i == axis and include_initial) for i, d in enumerate(x.shape))
    if dst is not None and dst.shape != shape:
        raise ValueError(located(f"{public}: out has shape {dst.shape}, the result {shape}"))
    scanned = _scan(op, x, axis, dtype, dst)
    if include_initial:
        start = ops.full(tuple(1 if i == axis else d for i, d in enumerate(x.shape)), _IDENTITY[op], scanned.dtype)
        scanned = ops.concatenate([start, scanned], axis)
    return _reduce_into(dst, scanned, "add" if op == "sum" else "multiply", public)


@numpy_function
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The Array API's running sum: ``axis`` may be left out only for arrays of at most one dimension;
    ``include_initial`` starts the result with 0.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.cumulative_sum(np.array([1, 2, 3]), include_initial=True))
    array([0, 1, 3, 6])
    """
    return _cumulative_array_api("sum", x, axis, dtype, out, include_initial)


@numpy_function
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The Array API's running product (see :func:`cumulative_sum`); ``include_initial`` starts it with 1.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.cumulative_prod(np.array([[1, 2], [3, 4]]), axis=1))
    array([[ 1,  2],
           [ 3, 12]])
    """
    return _cumulative_array_api("prod", x, axis, dtype, out, include_initial)


# ---------------------------------------------------------------- ptp, count_nonzero, average


@numpy_function
def ptp(a, axis=None, out=None, keepdims=False):
    """Range ``max - min`` along ``axis``, in ``a``'s dtype (integers wrap, as in NumPy).

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.ptp(np.array([[4, 9, 2], [3, 3, 3]]), axis=1))
    array([7, 0])
    """
    dst = _output(out, "ptp")
    highest = _extremum("max", a, axis, None, keepdims, None, None)
    lowest = _extremum("min", a, axis, None, keepdims, None, None)
    if dst is None:
        return subtract.__wrapped_numpy__(highest, lowest)
    if dst.shape != highest.shape:
        raise ValueError(located(f"ptp: output array of shape {dst.shape} does not match the reduction's result "
                                 f"shape {highest.shape}"))
    # NumPy's subtract(maximum(a, out=out), minimum(a), out=out): the maximum is first cast to out's dtype.
    return subtract.__wrapped_numpy__(_out.cast(highest, dst.dtype), lowest, out=dst)


@numpy_function
def count_nonzero(a, axis=None, *, keepdims=False):
    """How many elements along ``axis`` are nonzero (NaN counts), as int64.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.count_nonzero(np.array([[0, 1, 2], [0, 0, 3]]), axis=1))
    array([2, 1])
    """
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    if x.dtype.kind == "c":
        zero = ops.full(x.shape, 0, _real_dtype(x.dtype))
        nonzero = ops.or_(ops.compare(ops.real(x), zero, "NE"),
                             ops.compare(ops.imag(x), zero, "NE"))
    else:
        nonzero = x if x.dtype == BOOL else ops.compare(x, ops.full(x.shape, 0, x.dtype), "NE")
    return _kept(ops.reduce(ops.convert(nonzero, INT64), "sum", axes), x.shape, axes, keepdims)


@numpy_function
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted mean along ``axis``: ``sum(a * weights) / sum(weights)``; ``weights`` has ``a``'s shape or
    the shape of ``a`` along ``axis``. ``returned=True`` also gives the sum of the weights (the number of
    elements averaged without them).

    Deviation: weights that sum to zero give inf or NaN; NumPy raises ZeroDivisionError (a check on the data).

    >>> import xlac.numpy as xnp
    >>> float(xnp.average(np.array([1.0, 2.0, 4.0]), weights=np.array([1, 1, 2])))
    2.75
    """
    x = asarray(a)
    axes = _ordered_axes(axis, x.ndim, "average")
    reduced = None if axes is None else tuple(sorted(axes))
    if weights is None:
        avg = _mean("mean", x, reduced, None, None, keepdims, None)
        count = x.size // builtins.max(avg.size, 1) if avg.size else 0
        scale = ops.full(avg.shape, count, avg.dtype)
    else:
        w = _weights_for(asarray(weights), x, axes)
        exact = x.dtype == BOOL or dtypes.is_int(x.dtype)
        result_dtype = dtypes.result_type(x.dtype, w.dtype, *([FLOAT64] if exact else []))
        scale = sum.__wrapped_numpy__(w, reduced, result_dtype, None, keepdims)
        total = sum.__wrapped_numpy__(multiply.__wrapped_numpy__(x, w, dtype=result_dtype), reduced, None, None,
                                      keepdims)
        avg = ops.div(total, ops.broadcast_to(scale, total.shape))
        scale = ops.broadcast_to(scale, avg.shape)
    return (avg, scale) if returned else avg


def _ordered_axes(axis, ndim: int, op: str):
    """``axis`` normalized, in the order given (NumPy's normalize_axis_tuple), or None."""
    if axis is None:
        return None
    axes = tuple(normalize_axis(i, ndim, op) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(located(f"{op}: repeated axis"))
    return axes


def _weights_for(w, x, axes):
    """``average``'s weights, reshaped to broadcast against ``x`` where they are given along ``axes``."""
    if w.shape == x.shape:
        return w
    if axes is None:
        raise TypeError(located("average: Axis must be specified when shapes of a and weights differ."))
    if w.shape != tuple(x.shape[i] for i in axes):
        raise ValueError(located(f"average: Shape of weights must be consistent with shape of a along specified "
                                 f"axis (weights {w.shape}, a {x.shape}, axis {axes})."))
    w = ops.transpose(w, tuple(int(i) for i in np.argsort(axes)))
    return ops.reshape(w, tuple(d if i in axes else 1 for i, d in enumerate(x.shape)))


# ---------------------------------------------------------------- trace


@numpy_function
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the diagonal of ``axis1`` and ``axis2`` (see :func:`diagonal`), with sum's result dtypes.

    >>> import xlac.numpy as xnp
    >>> int(xnp.trace(np.arange(9, dtype=np.int8).reshape(3, 3)))
    12
    >>> np.asarray(xnp.trace(np.ones((2, 3, 4)), 1, 1, 2))
    array([3., 3.])
    """
    return sum.__wrapped_numpy__(diagonal(a, offset, axis1, axis2), -1, dtype, out)


# Outside a compiled function, out= is written into and returned as NumPy returns it.
_OUT_POSITION = {"sum": 3, "prod": 3, "mean": 3, "var": 3, "std": 3, "max": 2, "min": 2, "argmax": 2, "argmin": 2,
                 "all": 2, "any": 2, "cumsum": 3, "cumprod": 3, "nansum": 3, "nanprod": 3, "nanmean": 3,
                 "nanmax": 2, "nanmin": 2, "trace": 5, "nanvar": 3, "nanstd": 3, "nanargmax": 2, "nanargmin": 2,
                 "nancumsum": 3, "nancumprod": 3, "ptp": 2, "cumulative_sum": 1, "cumulative_prod": 1}
for _name, _position in _OUT_POSITION.items():
    globals()[_name] = _out.returns_out(globals()[_name], _position)
amax = max
amin = min
