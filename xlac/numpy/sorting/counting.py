"""Counting values into bins: bincount, histogram, histogram_bin_edges.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.bincount(np.array([0, 1, 1, 3])))
array([1, 2, 0, 1])
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from xlac.ir.dtypes import BOOL, COMPLEX128, FLOAT64, INT64, UINT8
from xlac.errors import UnsupportedError, located
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.sorting._common import _checked, _concrete
from xlac.numpy.sorting._sizes import _needs_size, _sized, _static_size
from xlac.numpy.sorting.order import _flat, _is_complex
from xlac.numpy.sorting.searching import _scatter_1d, _search, _take_1d
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["bincount", "histogram", "histogram_bin_edges"]


# ---------------------------------------------------------------- bincount


def _bincount_operand(x) -> Tracer:
    x = asarray(x)
    if x.dtype != BOOL and not (dtypes.is_int(x.dtype) and np.can_cast(x.dtype, INT64, "safe")):
        raise TypeError(located(f"bincount: Cannot cast array data from {x.dtype!r} to dtype('int64') "
                                "according to the rule 'safe'"))
    if x.ndim != 1:
        depth = "too deep" if x.ndim else "of too small depth"
        raise ValueError(located(f"bincount: x must be 1-dimensional (object {depth} for desired array), got "
                                 f"shape {x.shape}"))
    return ops.convert(x, INT64)


@numpy_function
def _bincount_extent(x):
    """(smallest, largest) value of the bincount operand ``x`` (non-empty)."""
    x = _bincount_operand(x)
    return ops.reduce(x, "min", (0,)), ops.reduce(x, "max", (0,))


def _bincount_length(x, weights=None, minlength=0, *, length=None) -> int:
    minlength = _check_minlength(minlength)
    if np.shape(x) == (0,):
        return minlength
    low, high = (int(v) for v in _bincount_extent(x))
    if low < 0:
        raise ValueError(located("bincount: 'list' argument must have no negative elements"))
    return builtins.max(minlength, high + 1)


def _check_minlength(minlength) -> int:
    return 0 if minlength is None else _static_size(minlength, "bincount", "minlength")


@_sized(_bincount_length, "length")
def bincount(x, weights=None, minlength=0, *, length=None):
    """How many times each value ``0, 1, ...`` occurs in the non-negative integers ``x`` (int64), or the
    sum of the ``weights`` at each (float64).

    ``length=`` (as JAX's) sets the static output length, values at or past it dropped; it is needed
    inside a compiled function. Outside one it defaults to ``max(minlength, x.max() + 1)``, NumPy's.

    Deviation: inside a compiled function ``length=`` is required, and negative values are dropped
    rather than reported.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.bincount(np.array([0, 1, 1, 3])))
    array([1, 2, 0, 1])
    >>> np.asarray(xnp.bincount(np.array([0, 1, 1]), weights=np.array([0.5, 1.0, 2.0]), length=3))
    array([0.5, 3. , 0. ])
    """
    values = _bincount_operand(x)
    minlength = _check_minlength(minlength)
    if length is None:
        _needs_size("bincount", "length", "the output length (the largest value + 1)")
    length = _static_size(length, "bincount", "length")
    if weights is None or values.size == 0:       # NumPy counts an empty x in int64, weights or not
        updates, dtype = ops.full(values.shape, 1, INT64), INT64
    else:
        w = asarray(weights)
        if w.shape != values.shape:
            raise ValueError(located(f"bincount: The weights and list don't have the same length "
                                     f"({w.shape} and {values.shape})."))
        if not np.can_cast(w.dtype, FLOAT64, "safe") and w.dtype != dtypes.bfloat16:
            raise TypeError(located(f"bincount: Cannot cast array data from {w.dtype!r} to dtype('float64') "
                                    "according to the rule 'safe'"))
        updates, dtype = ops.convert(w, FLOAT64), FLOAT64
    inside = ops.and_(ops.compare(values, ops.full(values.shape, 0, INT64), "GE"),
                        ops.compare(values, ops.full(values.shape, length, INT64), "LT"))
    index = ops.select(inside, values, ops.full(values.shape, length, INT64))
    return _scatter_1d(ops.full((length,), 0, dtype), index, updates, "add")


# ---------------------------------------------------------------- histogram


def _histogram_check(a, bins=10, range=None, *args, **kwargs):
    if isinstance(bins, str):
        raise UnsupportedError(located(f"histogram: bins={bins!r} (an estimator) is not supported; pass a "
                                       "number of bins or the bin edges"))
    edges = _concrete(bins)
    if edges is not None and edges.ndim == 1 and edges.size > 1 and np.any(edges[:-1] > edges[1:]):
        raise ValueError(located("histogram: `bins` must increase monotonically, when an array"))
    if range is not None:
        first, last = range
        if isinstance(first, Tracer) or isinstance(last, Tracer):
            raise TypeError(located("histogram: range= must be static numbers, not traced values"))
        if first > last:
            raise ValueError(located("histogram: max must be larger than min in range parameter."))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(located(f"histogram: supplied range of [{first}, {last}] is not finite"))


def _linspace_edges(first, last, num: int, dt: np.dtype) -> Tracer:
    """NumPy's ``linspace(first, last, num)`` computed in ``dt``, on traced end points."""
    delta = ops.sub(last, first)
    step = ops.div(delta, ops.constant(num - 1, dt))
    y = ops.iota((num,), dt, 0)
    scaled = ops.select(ops.broadcast_to(ops.compare(step, ops.constant(0, dt), "EQ"), (num,)),
                        ops.mul(ops.div(y, ops.full((num,), num - 1, dt)),
                                   ops.broadcast_to(delta, (num,))),
                        ops.mul(y, ops.broadcast_to(step, (num,))))
    y = ops.add(scaled, ops.broadcast_to(first, (num,)))
    return ops.concatenate([ops.slice(y, (0,), (num - 1,)), ops.reshape(last, (1,))], 0)


def _equal_bin_edges(x: Tracer, bins: int, range) -> Tracer:
    """The ``bins + 1`` edges of equal bins over ``range`` (default: the data's min to max), NumPy's."""
    if range is not None or x.size == 0:
        first, last = range if range is not None else (0, 1)
        if first == last:
            first, last = first - 0.5, last + 0.5
        bin_type = dtypes.result_type(first, last, x.dtype)
        if not dtypes.is_inexact(bin_type):
            bin_type = FLOAT64
        return ops.constant(np.linspace(first, last, bins + 1, dtype=bin_type), bin_type)
    bin_type = x.dtype if dtypes.is_inexact(x.dtype) else FLOAT64
    first, last = ops.reduce(x, "min", (0,)), ops.reduce(x, "max", (0,))
    same = ops.compare(first, last, "EQ")
    first, last = ops.convert(first, bin_type), ops.convert(last, bin_type)
    half = ops.constant(0.5, bin_type)
    first = ops.select(same, ops.sub(first, half), first)
    last = ops.select(same, ops.add(last, half), last)
    return _linspace_edges(first, last, bins + 1, bin_type)


def _bin_edges(x: Tracer, bins, range) -> Tracer:
    if is_bin_count(bins):
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError(located("histogram: `bins` must be an integer, a string, or an array")) from None
        if count < 1:
            raise ValueError(located("histogram: `bins` must be positive, when an integer"))
        return _equal_bin_edges(x, count, range)
    edges = asarray(bins)
    if edges.ndim != 1:
        raise ValueError(located("histogram: `bins` must be 1d, when an array"))
    return edges


def _histogram_input(a, weights):
    x = asarray(a)
    w = None if weights is None else asarray(weights)
    if w is not None and w.shape != x.shape:
        raise ValueError(located(f"histogram: weights should have the same shape as a ({w.shape} and {x.shape})."))
    x = _flat(x)
    if x.dtype == BOOL:
        x = ops.convert(x, UINT8)       # as NumPy, which warns
    return x, None if w is None else _flat(w)


def is_bin_count(bins) -> bool:
    """Whether ``bins`` of histogram asks for that many equal bins (else it holds the edges)."""
    return np.ndim(bins) == 0 and not isinstance(bins, Tracer)


def _edge(edges: Tracer, i: int, shape) -> Tracer:
    return ops.broadcast_to(ops.reshape(ops.slice(edges, (i,), (i + 1,)), ()), shape)


def equal_bin_index(x: Tracer, edges: Tracer) -> Tracer:
    """The bin (int64) of each ``x`` that lies in ``[edges[0], edges[-1]]``, for equal bins between
    ``edges`` of ``x``'s dtype; some index in range for other ``x``. As NumPy's histogram computes it: the
    estimate ``(x - first) / (last - first) * bins``, corrected by one either way so that bin ``i`` holds
    ``edges[i] <= x < edges[i+1]``, the last bin also its right edge; what searchsorted gives, without a
    search.

    >>> import xlac
    >>> edges = np.linspace(0.0, 1.0, 11)          # 0.3 and 0.7 lie just below edges[3] and edges[7]
    >>> np.asarray(xlac.compile(equal_bin_index)(np.array([0.0, 0.3, 0.7, 1.0]), edges))
    array([0, 2, 6, 9])
    """
    nbins = edges.shape[0] - 1
    first, last = _edge(edges, 0, x.shape), _edge(edges, nbins, x.shape)
    estimate = ops.mul(ops.div(ops.sub(x, first), ops.sub(last, first)), ops.full(x.shape, nbins, x.dtype))
    lowest, highest = ops.full(x.shape, 0, INT64), ops.full(x.shape, nbins - 1, INT64)
    index = ops.clamp(lowest, ops.convert(estimate, INT64), highest)     # the top edge: the last bin
    one = ops.full(x.shape, 1, INT64)
    below = ops.compare(x, _take_1d(edges, index), "LT")
    index = ops.max(ops.select(below, ops.sub(index, one), index), lowest)
    above = ops.and_(ops.compare(x, _take_1d(edges, ops.add(index, one)), "GE"), ops.compare(index, highest, "LT"))
    return ops.select(above, ops.add(index, one), index)


def _bin_counts(x: Tracer, edges: Tracer, w, equal: bool):
    """Counts (int64) or summed weights (the weights' dtype) per bin: bin ``i`` holds
    ``edges[i] <= x < edges[i+1]``, the last bin also its right edge. ``equal``: the bins are equal
    (histogram's ``bins`` was a count), and each value's bin is computed rather than searched."""
    nbins = edges.shape[0] - 1
    common = dtypes.result_type(x.dtype, edges.dtype)
    x, edges = ops.convert(x, common), ops.convert(edges, common)
    first, last = _edge(edges, 0, x.shape), _edge(edges, nbins, x.shape)
    inside = ops.and_(ops.compare(x, first, "GE"), ops.compare(x, last, "LE"))
    if equal and dtypes.is_float(common):
        bin_index = equal_bin_index(x, edges)
    else:
        bin_index = ops.min(ops.sub(_search(edges, x, right=True), ops.full(x.shape, 1, INT64)),
                            ops.full(x.shape, nbins - 1, INT64))
    index = ops.select(inside, bin_index, ops.full(x.shape, nbins, INT64))
    if w is None:
        return _scatter_1d(ops.full((nbins,), 0, INT64), index, ops.full(x.shape, 1, INT64), "add")
    total = COMPLEX128 if _is_complex(w.dtype) else FLOAT64
    sums = _scatter_1d(ops.full((nbins,), 0, total), index, ops.convert(w, total), "add")
    return _out.cast(sums, w.dtype)


@_checked(_histogram_check, scalar="bins")
def histogram(a, bins=10, range=None, density=None, weights=None):
    """(counts, bin edges) of the flattened ``a``: ``bins`` equal bins over ``range`` (default: the data's
    min to max), or the given increasing edges. Counts are int64, or the summed ``weights`` in their
    dtype; ``density=True`` gives float64 densities. Bins are half-open, the last one closed.

    Deviation: estimator names (``bins="auto"``) are not supported, and a data range that is not
    finite gives NaN edges rather than NumPy's error.

    >>> import xlac.numpy as xnp
    >>> counts, edges = xnp.histogram(np.array([1, 2, 2, 3, 4]), bins=3)
    >>> np.asarray(counts), np.asarray(edges)
    (array([1, 2, 2]), array([1., 2., 3., 4.]))
    """
    x, w = _histogram_input(a, weights)
    edges = _bin_edges(x, bins, range)
    counts = _bin_counts(x, edges, w, equal=is_bin_count(bins))
    if not density:
        return counts, edges
    nbins = edges.shape[0] - 1
    widths = ops.convert(ops.sub(ops.slice(edges, (1,), (nbins + 1,)), ops.slice(edges, (0,), (nbins,))),
                         FLOAT64)
    dtype = COMPLEX128 if _is_complex(counts.dtype) else FLOAT64
    n = ops.convert(counts, dtype)
    total = ops.broadcast_to(ops.reduce(n, "sum", (0,)), (nbins,))
    return ops.div(ops.div(n, ops.convert(widths, dtype)), total), edges


@_checked(_histogram_check, scalar="bins")
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges :func:`histogram` would use.

    >>> import xlac.numpy as xnp
    >>> np.asarray(xnp.histogram_bin_edges(np.array([0.0, 1.0]), bins=4))
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    x, _ = _histogram_input(a, weights)
    return _bin_edges(x, bins, range)
