"""histogram, histogram2d and histogramdd with a bin count compute each value's bin (NumPy's estimate and
its correction by one against the edges) instead of searching it: the counts must be NumPy's exactly,
values on the edges, just beside them, outside the range and NaN included."""
import numpy as np
from hypothesis import assume, given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

FLOATS = [np.dtype(d) for d in ("float16", "float32", "float64")]
RANGES = [(-1.0, 2.0), (0.0, 1.0), (-3.5, 1e-3), (1e3, 1e3 + 0.7)]


def _on_and_beside_edges(rng, n, bins, bounds, dtype):
    """Values of ``dtype``: NumPy's edges of these bins, their neighbours one ulp away, points inside the
    range and beyond it, NaN. No subnormals: XLA:CPU flushes them to zero (searching as well)."""
    edges = np.linspace(*bounds, bins + 1, dtype=np.result_type(*bounds, dtype))
    pool = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), [np.nan],
                           rng.uniform(bounds[0] - 1, bounds[1] + 1, 8)]).astype(dtype)
    pool = pool[~(np.abs(pool) < np.finfo(dtype).tiny) | (pool == 0)]
    return rng.choice(pool, n)


def _possible(dtype, bins, bounds) -> bool:
    """Whether NumPy can make these bins in ``dtype`` (edges strictly increasing)."""
    edges = np.linspace(*bounds, bins + 1, dtype=np.result_type(*bounds, dtype))
    return bool(np.all(edges[:-1] < edges[1:]))


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(FLOATS), st.integers(1, 70), st.sampled_from(RANGES), st.integers(0, 200),
       st.sampled_from([None, "int64", "float64"]), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_histogram_counts_values_on_edges_as_numpy(dtype, bins, bounds, n, weighted, density, seed):
    assume(_possible(dtype, bins, bounds))
    rng = np.random.default_rng(seed)
    x = _on_and_beside_edges(rng, n, bins, bounds, dtype)
    weights = None if weighted is None else rng.integers(0, 5, n).astype(weighted)   # sums exact in any order
    with np.errstate(all="ignore"):
        expected = np.histogram(x, bins, range=bounds, weights=weights, density=density)
    got = xlac.compile(lambda x, w: xnp.histogram(x, bins, range=bounds, weights=w, density=density))(x, weights)
    assert_matches(got[1], expected[1])
    assert_matches(got[0], expected[0], rtol=1e-12 if density else 0.0)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(FLOATS), st.integers(1, 70), st.integers(1, 300), st.integers(0, 2 ** 32 - 1))
def test_histogram_of_the_data_range_counts_as_searchsorted(dtype, bins, n, seed):
    """Edges from the traced min and max can differ from NumPy's by an ulp (XLA:CPU fuses linspace's
    multiply-add, and computes float16 in float32); the counts are those of a search among these edges."""
    x = (np.random.default_rng(seed).standard_normal(n) * 4).astype(dtype)
    counts, edges = xlac.compile(lambda x: xnp.histogram(x, bins))(x)
    edges = np.asarray(edges)
    scale = float(np.max(np.abs(x.astype(np.float64))))
    np.testing.assert_allclose(edges, np.histogram_bin_edges(x, bins), rtol=0, atol=4 * np.finfo(dtype).eps * scale)
    index = np.minimum(np.searchsorted(edges, x, side="right") - 1, bins - 1)
    assert_matches(counts, np.bincount(index, minlength=bins))


@settings(max_examples=3, deadline=None)
@given(st.sampled_from(FLOATS), st.integers(1, 40), st.integers(1, 40), st.sampled_from(RANGES),
       st.sampled_from(RANGES), st.integers(0, 150), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_histogram2d_and_dd_count_values_on_edges_as_numpy(dtype, xbins, ybins, xrange, yrange, n, weighted, seed):
    assume(_possible(dtype, xbins, xrange) and _possible(dtype, ybins, yrange))
    rng = np.random.default_rng(seed)
    x = _on_and_beside_edges(rng, n, xbins, xrange, dtype)
    y = _on_and_beside_edges(rng, n, ybins, yrange, dtype)
    weights = rng.integers(0, 5, n).astype(np.float64) if weighted else None
    expected = np.histogram2d(x, y, (xbins, ybins), range=(xrange, yrange), weights=weights)
    got = xlac.compile(lambda x, y: xnp.histogram2d(x, y, (xbins, ybins), range=(xrange, yrange), weights=weights))(x, y)
    for g, e in zip(got, expected):
        assert_matches(g, e)
    sample = np.stack([x, y], 1)
    expected = np.histogramdd(sample, (xbins, ybins), range=(xrange, yrange))
    assert_matches(xnp.histogramdd(sample, (xbins, ybins), range=(xrange, yrange))[0], expected[0])


def test_integer_data_and_a_mix_of_counts_and_edges():
    x = np.array([0, 1, 2, 3, 4, 5, 10, -1], np.int64)
    for bins, bounds in ((5, (0, 5)), (3, None), (10, (0, 10))):
        assert_matches(xnp.histogram(x, bins, range=bounds)[0], np.histogram(x, bins, range=bounds)[0])
    y = np.linspace(-1, 1, 8)
    bins = [3, np.array([-1.0, 0.0, 0.5, 1.0])]
    expected = np.histogram2d(x.astype(np.float64), y, bins)
    for g, e in zip(xnp.histogram2d(x.astype(np.float64), y, bins), expected):
        assert_matches(g, e)
