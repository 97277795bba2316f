"""Statistics over samples: covariance and correlation matrices, and multi-dimensional histograms
(one-dimensional ``histogram`` and ``bincount`` are in :mod:`xlac.numpy.sorting.counting`).

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
array([[ 1., -1.],
       [-1.,  1.]])
"""
from __future__ import annotations

import numbers

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy import contractions, creation, reductions, shapes, ufuncs
from xlac.numpy.sorting import counting
from xlac.numpy import dtypes as numpy_dtypes
from xlac.numpy.manipulation import numerics
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.sorting import searching
from xlac.trace import ops

__all__ = ['cov', 'corrcoef', 'histogramdd', 'histogram2d']


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """The covariance matrix of the rows (variables) of ``m`` (and ``y``), as NumPy's ``cov``.

    >>> np.asarray(cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    m = creation.asarray(m)
    if m.ndim > 2:
        raise ValueError(located("cov: m has more than 2 dimensions"))
    kind = np.dtype(dtype) if dtype is not None else \
        dtypes.result_type(m, np.float64) if y is None else dtypes.result_type(m, creation.asarray(y), np.float64)
    X = shapes.atleast_2d(m.astype(kind))
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return creation.zeros((0, 0), kind)
    if y is not None:
        Y = shapes.atleast_2d(creation.asarray(y).astype(kind))
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = shapes.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = creation.asarray(fweights).astype(np.float64)
    if aweights is not None:
        a = creation.asarray(aweights).astype(np.float64)
        w = a if w is None else w * a
    if w is None:
        mean = reductions.mean(X, axis=1, keepdims=True)
        fact = X.shape[1] - ddof
    else:
        w_sum = reductions.sum(w)
        mean = reductions.sum(X * w, axis=1, keepdims=True) / w_sum
        fact = w_sum - ddof if aweights is None else \
            w_sum - ddof * reductions.sum(w * creation.asarray(aweights).astype(np.float64)) / w_sum
    Xc = X - mean
    Xw = Xc if w is None else Xc * w
    c = contractions.matmul(Xw, numpy_dtypes.conj(Xc).T) / fact
    return shapes.squeeze(c) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, clipped to [-1, 1] as NumPy's.

    >>> np.asarray(corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = shapes.diagonal(c)
    stddev = ufuncs.sqrt(numpy_dtypes.real(d))
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind == "c":
        return ufuncs.clip(numpy_dtypes.real(c), -1, 1) + 1j * ufuncs.clip(numpy_dtypes.imag(c), -1, 1)
    return ufuncs.clip(c, -1, 1)


def _static_bin_spec(bins, dims: int, op: str) -> list:
    """One bin spec per dimension: a Python int (equal bins) or a 1-D array of edges."""
    if isinstance(bins, numbers.Integral):
        return [int(bins)] * dims
    specs = list(bins)
    if len(specs) != dims:
        raise ValueError(located(f"{op}: The dimension of bins must be equal to the dimension of the sample x."))
    return [int(b) if isinstance(b, numbers.Integral) else b for b in specs]


def _range_edges(bounds, count: int):
    """NumPy's histogramdd edges of ``count`` equal bins over a given range: ``linspace`` of the range's own
    scalars (float64 for Python numbers), not in the sample's dtype as histogram's.

    >>> _range_edges((0, 1), 4).dtype
    dtype('float64')
    """
    first, last = bounds
    if first > last:
        raise ValueError(located("histogramdd: max must be larger than min in range parameter."))
    if not (np.isfinite(first) and np.isfinite(last)):
        raise ValueError(located(f"histogramdd: supplied range of [{first}, {last}] is not finite"))
    if first == last:
        first, last = first - 0.5, last + 0.5
    return creation.asarray(np.linspace(first, last, count + 1))


@numpy_function
def _equal_bin_position(column, edges):
    """searchsorted(edges, column, side="right"), values on the last edge moved into the last bin, for equal
    bins: each value's bin computed, not searched (``counting.equal_bin_index``); outliers 0 and bins + 1.
    (A function of its own: ops need tracers, and histogramdd also runs eagerly on arrays.)"""
    common = dtypes.result_type(column.dtype, edges.dtype)
    x, edges = ops.convert(column, common), ops.convert(edges, common)
    count = edges.shape[0] - 1
    inside = ops.and_(x >= edges[0], x <= edges[count])
    bin_position = counting.equal_bin_index(x, edges) + 1
    outlier = ufuncs.where(x < edges[0], 0, count + 1)
    return ufuncs.where(inside, bin_position, outlier)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The D-dimensional histogram of the ``(N, D)`` ``sample`` (or a sequence of D arrays): (counts, edges).

    Bin counts (``bins``: ints or edge arrays) must be static; equal bins span ``range`` or the data's
    min to max. Counts are float64, as NumPy's. Each bin is half-open except the last, which is closed.

    >>> h, edges = histogramdd(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> np.asarray(h)
    array([[1., 0.],
           [1., 1.]])
    """
    if isinstance(sample, (list, tuple)):
        sample = shapes.stack([creation.asarray(s) for s in sample], axis=-1)
    sample = creation.asarray(sample)
    if sample.ndim == 1:
        sample = shapes.reshape(sample, (-1, 1))
    if sample.ndim != 2:
        raise ValueError(located(f"histogramdd: sample must be (N, D), got shape {sample.shape}"))
    n, dims = sample.shape
    specs = _static_bin_spec(bins, dims, "histogramdd")
    ranges = [None] * dims if range is None else list(range)
    edges, positions, sizes = [], [], []
    for i, (spec, bounds) in enumerate(zip(specs, ranges)):
        column = sample[:, i]
        if isinstance(spec, int) and bounds is not None:
            edge = _range_edges(bounds, spec)
        else:
            edge = counting.histogram_bin_edges(column, spec, bounds)
        edge = edge.astype(np.float64) if edge.dtype != np.float64 and dtypes.is_int(edge.dtype) else edge
        count = edge.shape[0] - 1
        # NumPy: searchsorted right, then values on the last edge go into the last bin; 0 and count+1 are
        # the outliers on either side.
        if isinstance(spec, int):
            where = _equal_bin_position(column, edge)
        else:
            where = searching.searchsorted(edge, column, side="right")
            where = ufuncs.where(column == edge[-1], where - 1, where)
        edges.append(edge)
        positions.append(where)
        sizes.append(count + 2)
    flat = creation.zeros(n, np.int64)
    for where, size in zip(positions, sizes):
        flat = flat * size + where.astype(np.int64)
    total = int(np.prod(sizes))
    counts = counting.bincount(flat, weights=weights, minlength=total, length=total)
    counts = shapes.reshape(counts.astype(np.float64), tuple(sizes))
    counts = counts[tuple(slice(1, -1) for _ in sizes)]
    if density:
        widths = [numerics.diff(e) for e in edges]
        volume = 1.0
        for i, w in enumerate(widths):
            volume = volume * shapes.reshape(w, (1,) * i + (w.shape[0],) + (1,) * (dims - i - 1))
        counts = counts / volume / reductions.sum(counts)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The 2-D histogram of points ``(x, y)``: (counts, x edges, y edges), as NumPy's ``histogram2d``.

    >>> h, xe, ye = histogram2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]), bins=2)
    >>> np.asarray(h)
    array([[1., 0.],
           [0., 1.]])
    """
    if not isinstance(bins, numbers.Integral) and len(bins) not in (1, 2):
        bins = [bins, bins]
    counts, (x_edges, y_edges) = histogramdd([x, y], bins, range, density, weights)
    return counts, x_edges, y_edges
