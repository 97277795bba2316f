"""xlac.numpy sorting, searching, counting, set functions and order statistics against NumPy: values
(bit for bit where NumPy is exact), dtypes, shapes, static sizes, gradients against JAX, and errors."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from xlac.differentiate import grad
from xlac.ir import dtypes
from tests.tolerance import assert_matches

BF16 = dtypes.bfloat16
REAL_DTYPES = [np.dtype(d) for d in ("bool", "int8", "int32", "int64", "uint8", "uint32", "float16", "float32",
                                     "float64")] + [BF16]
NUMBERS = [d for d in REAL_DTYPES if d != np.bool_]
FLOAT_POOL = [-np.inf, -2.5, -1.0, -0.0, 0.0, 0.0, 1.0, 2.5, 2.5, np.inf, np.nan]
QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint",
                    "nearest"]


# ---------------------------------------------------------------- strategies and helpers


@st.composite
def shapes(draw, min_side=0, max_dims=3):
    return tuple(draw(st.lists(st.integers(min_side, 4), min_size=0, max_size=max_dims)))


def special_array(seed, shape, dtype, *, specials=True):
    """Values with many duplicates; floats drawn from ±inf, ±0.0, NaN and a few numbers."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array(rng.random(shape) < 0.5)
    if dtypes.is_int(dtype):
        low = 0 if dtypes.is_unsigned_int(dtype) else -3
        return np.array(rng.integers(low, 4, size=shape), dtype)
    pool = FLOAT_POOL if specials else [-2.5, -1.0, 0.0, 1.0, 1.5, 2.5, 3.0]
    values = np.asarray(pool)[rng.integers(0, len(pool), size=shape)]
    if dtype.kind == "c":
        z = np.empty(shape, dtype)
        z.real, z.imag = values, np.asarray(pool)[rng.integers(0, len(pool), size=shape)]
        return z
    return np.array(values, dtype)


def distinct_array(seed, shape, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(int(np.prod(shape))) * 0.75 - 3.0).reshape(shape).astype(dtype)


def run(fn, args, compiled):
    """``fn(*args)`` eagerly or compiled, as NumPy values (a tuple stays a tuple)."""
    result = xlac.compile(fn)(*args) if compiled else fn(*args)
    if isinstance(result, tuple):
        return tuple(np.asarray(r) for r in result)
    return np.asarray(result)


def host(x):
    """``x`` as NumPy can sort it: bfloat16 as float32 (an exact, order-keeping widening)."""
    return x.astype(np.float32) if x.dtype == BF16 else x


def assert_bits_equal(got, expected):
    """Equal dtypes, shapes and bits: -0.0 and 0.0 told apart, NaNs compared as NaNs."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != NumPy's {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape} != NumPy's {expected.shape}"
    if expected.dtype.kind in "fcV" or expected.dtype == BF16:
        width = np.dtype(f"u{expected.dtype.itemsize}") if expected.dtype.kind != "c" else \
            np.dtype(f"u{expected.dtype.itemsize // 2}")
        np.testing.assert_array_equal(got.view(width), expected.view(width))
    else:
        np.testing.assert_array_equal(got, expected)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def axis_for(draw, ndim, allow_none=True):
    choices = list(range(-ndim, ndim)) + ([None] if allow_none else [])
    return draw(st.sampled_from(choices)) if choices else None


# ---------------------------------------------------------------- sort, argsort


@given(shape=shapes(), dtype=st.sampled_from(REAL_DTYPES), compiled=st.booleans(), seed=st.integers(0, 2**16),
       data=st.data())
def test_sort_and_argsort_match_numpy_stable_sort(shape, dtype, compiled, seed, data):
    axis = axis_for(data.draw, len(shape), allow_none=True)
    if axis is None and data.draw(st.booleans()):
        axis = -1 if shape else None
    x = special_array(seed, shape, dtype)
    if axis is not None and not shape:
        return
    order = np.argsort(host(x), axis=axis, kind="stable")
    values = np.take_along_axis(x.reshape(-1) if axis is None else x, order, axis=-1 if axis is None else axis)
    got_values, got_order = run(lambda v: (xnp.sort(v, axis=axis), xnp.argsort(v, axis=axis)), (x,), compiled)
    assert_bits_equal(got_values, values)
    assert_bits_equal(got_order, order)


@settings(max_examples=12, deadline=None)
@given(shape=shapes(min_side=1), dtype=st.sampled_from([np.dtype("int32"), np.dtype("float32")]),
       seed=st.integers(0, 2**16), data=st.data())
def test_descending_sort_is_the_array_api_stable_descending_sort(shape, dtype, seed, data):
    if not shape:
        return
    axis = axis_for(data.draw, len(shape), allow_none=False)
    x = special_array(seed, shape, dtype)
    flipped = np.flip(x, axis)
    expected_order = np.flip(x.shape[axis] - 1 - np.argsort(flipped, axis=axis, kind="stable"), axis)
    got_values, got_order = run(lambda v: (xnp.sort(v, axis, descending=True),
                                           xnp.argsort(v, axis, descending=True)), (x,), compiled=True)
    assert_bits_equal(got_order, expected_order)
    assert_bits_equal(got_values, np.take_along_axis(x, expected_order, axis))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_sort_orders_as_numpy(dtype):
    x = special_array(3, (40,), dtype)
    expected = np.sort(x, kind="stable")
    assert_bits_equal(xnp.sort(x), expected)
    assert_bits_equal(xnp.argsort(x), np.argsort(x, kind="stable"))
    assert_bits_equal(xnp.sort_complex(x), expected)      # np.sort_complex's own quicksort is not stable


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float16", "float32", "float64", "complex64"])
def test_sort_complex_result_dtypes(dtype):
    x = np.array([3, 1, 2, 0]).astype(dtype)
    assert_matches(xnp.sort_complex(x), np.sort_complex(x))


def test_sort_options_and_methods():
    x = np.array([[3, 1, 2], [9, 7, 8]], np.int16)
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        assert_matches(xnp.sort(x, kind=kind), np.sort(x, kind=kind))
    assert_matches(xnp.sort(x, stable=True), np.sort(x, stable=True))
    assert_matches(xnp.argsort(np.array(5)), np.argsort(np.array(5)))
    assert_matches(xnp.sort(x, axis=None), np.sort(x, axis=None))
    a = xlac.asarray(x.copy())
    a.sort(axis=0)
    assert_matches(a, np.sort(x, axis=0))
    assert_matches(a.argsort(), np.argsort(np.sort(x, axis=0)))


def test_sort_errors():
    x = np.array([3, 1, 2])
    with pytest.raises(ValueError, match="sort kind must be one of"):
        xnp.sort(x, kind="bogus")
    with pytest.raises(ValueError, match="can't be provided at the same time"):
        xnp.argsort(x, kind="stable", stable=True)
    with pytest.raises(ValueError, match="Cannot specify order"):
        xnp.sort(x, order="f0")
    with pytest.raises(np.exceptions.AxisError, match="sort: axis 1 is out of bounds"):
        xnp.sort(x, axis=1)


# ---------------------------------------------------------------- partition, lexsort


def assert_partitioned(got, x, kth, axis):
    """NumPy's partition contract: the kth element in place, nothing larger before it, nothing smaller after."""
    expected = np.sort(x, axis=axis, kind="stable")
    for k in np.atleast_1d(kth):
        k = int(k) % x.shape[axis]
        at = np.take(got, [k], axis=axis)
        assert_matches(at, np.take(expected, [k], axis=axis))
        with np.errstate(invalid="ignore"):
            assert not np.any(np.take(got, range(k), axis=axis) > at)
            assert not np.any(np.take(got, range(k + 1, x.shape[axis]), axis=axis) < at)


@given(shape=shapes(min_side=1, max_dims=2), seed=st.integers(0, 2**16), data=st.data())
def test_partition_and_argpartition_keep_numpys_contract(shape, seed, data):
    if not shape:
        return
    axis = axis_for(data.draw, len(shape), allow_none=False)
    n = shape[axis]
    kth = data.draw(st.one_of(st.integers(-n, n - 1), st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))
    x = special_array(seed, shape, np.float32, specials=False)
    got = run(lambda v: xnp.partition(v, kth, axis), (x,), compiled=True)
    assert_partitioned(got, x, kth, axis)
    order = np.asarray(xnp.argpartition(x, kth, axis))
    assert order.dtype == np.int64
    assert_partitioned(np.take_along_axis(x, order, axis), x, kth, axis)


def test_partition_errors():
    x = np.arange(5)
    with pytest.raises(ValueError, match=r"kth\(=5\) out of bounds \(5\)"):
        xnp.partition(x, 5)
    with pytest.raises(ValueError, match=r"kth\(=-1\) out of bounds"):
        xnp.argpartition(x, -6)
    with pytest.raises(TypeError, match="Partition index must be integer"):
        xnp.partition(x, 1.5)
    with pytest.raises(TypeError, match="kth must be a static integer"):
        xlac.compile(lambda v, k: xnp.partition(v, k))(x, np.int64(2))


@given(n=st.integers(0, 12), n_keys=st.integers(1, 3), seed=st.integers(0, 2**16), compiled=st.booleans())
def test_lexsort_matches_numpy(n, n_keys, seed, compiled):
    rng = np.random.default_rng(seed)
    keys = [rng.integers(0, 3, n).astype(np.int32), special_array(seed, (n,), np.float64),
            rng.random(n) < 0.5][:n_keys]
    assert_bits_equal(run(lambda *k: xnp.lexsort(k), keys, compiled), np.lexsort(keys))


def test_lexsort_of_a_2d_key_array_along_axes_and_errors():
    keys = np.array([[1, 0, 1, 0], [2, 2, 1, 1]])
    assert_matches(xnp.lexsort(keys), np.lexsort(keys))
    grid = np.array([[[3, 1], [1, 1]], [[0, 0], [1, 0]]])
    assert_matches(xnp.lexsort(grid, axis=0), np.lexsort(grid, axis=0))
    assert_matches(xnp.lexsort(np.array([1, 2, 0])), np.lexsort(np.array([1, 2, 0])))
    with pytest.raises(ValueError, match="all keys need to be the same shape"):
        xnp.lexsort([np.array([1, 2]), np.array([1, 2, 3])])
    with pytest.raises(TypeError, match="need sequence of keys"):
        xnp.lexsort([])


# ---------------------------------------------------------------- searchsorted, digitize


@given(n=st.integers(0, 9), m_shape=shapes(max_dims=2), dtype=st.sampled_from(NUMBERS + [np.dtype("complex64")]),
       side=st.sampled_from(["left", "right"]), compiled=st.booleans(), seed=st.integers(0, 2**16))
def test_searchsorted_matches_numpy(n, m_shape, dtype, side, compiled, seed):
    a = np.sort(special_array(seed, (n,), dtype))
    v = special_array(seed + 1, m_shape, dtype)
    expected = np.searchsorted(host(a), host(v), side=side)
    assert_matches(run(lambda s, w: xnp.searchsorted(s, w, side=side), (a, v), compiled), expected)


def test_searchsorted_sorter_scalars_and_mixed_dtypes():
    a = np.array([3.0, 1.0, np.nan, 2.0, 2.0])
    sorter = np.argsort(a, kind="stable")
    for side in ("left", "right"):
        assert_matches(xnp.searchsorted(a, [2.0, np.nan, 0.5], side=side, sorter=sorter),
                       np.searchsorted(a, [2.0, np.nan, 0.5], side=side, sorter=sorter))
    small = np.array([1, 2, 3], np.uint8)
    for v in (-1, 300, 2.5, np.int8(2), np.array([1.5], np.float32)):
        assert_matches(xnp.searchsorted(small, v), np.searchsorted(small, v))
    assert_matches(xlac.compile(lambda s, w: xnp.searchsorted(s, w))(np.arange(5.0), 2.0),
                   np.searchsorted(np.arange(5.0), 2.0))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="search side must be 'left' or 'right'"):
        xnp.searchsorted(np.arange(3), 1, side="middle")
    with pytest.raises(ValueError, match="a must be 1-dimensional"):
        xnp.searchsorted(np.ones((2, 2)), 1)
    with pytest.raises(ValueError, match="sorter.size must equal a.size"):
        xnp.searchsorted(np.arange(3), 1, sorter=np.array([0, 1]))


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 6), x_shape=shapes(max_dims=2), right=st.booleans(), falling=st.booleans(),
       compiled=st.booleans(), seed=st.integers(0, 2**16))
def test_digitize_matches_numpy(n, x_shape, right, falling, compiled, seed):
    bins = np.sort(special_array(seed, (n,), np.float64, specials=False))
    bins = bins[::-1].copy() if falling else bins
    x = special_array(seed + 1, x_shape, np.float64)
    assert_matches(run(lambda v, b: xnp.digitize(v, b, right=right), (x, bins), compiled),
                   np.digitize(x, bins, right=right))


def test_digitize_errors():
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        xnp.digitize(np.array([1, 2]), np.array([1, 3, 2]))
    with pytest.raises(ValueError, match="bins must be monotonically"):
        xlac.compile(lambda v: xnp.digitize(v, [1, 3, 2]))(np.array([1.0]))
    with pytest.raises(TypeError, match="x may not be complex"):
        xnp.digitize(np.array([1j]), np.array([1, 2]))


# ---------------------------------------------------------------- bincount, histogram


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 8), dtype=st.sampled_from(["bool", "uint8", "int32", "int64"]),
       weighted=st.sampled_from([None, "float32", "int8", "float64"]), minlength=st.integers(0, 6),
       seed=st.integers(0, 2**16))
def test_bincount_matches_numpy_eagerly_and_with_a_static_length(n, dtype, weighted, minlength, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, n).astype(dtype)
    weights = None if weighted is None else rng.integers(-3, 4, n).astype(weighted)
    expected = np.bincount(x, weights=weights, minlength=minlength)
    assert_matches(xnp.bincount(x, weights, minlength), expected)
    compiled = xlac.compile(lambda v, w: xnp.bincount(v, w, length=len(expected)))(x, weights)
    assert_matches(compiled, expected)


def test_bincount_length_cuts_and_errors():
    x = np.array([0, 1, 1, 7])
    assert_matches(xlac.compile(lambda v: xnp.bincount(v, length=3))(x), np.array([1, 2, 0]))
    with pytest.raises(ValueError, match="bincount: the output length .* pass length=N"):
        xlac.compile(lambda v: xnp.bincount(v))(x)
    with pytest.raises(ValueError, match="must have no negative elements"):
        xnp.bincount(np.array([1, -1]))
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\)"):
        xnp.bincount(np.array([1.0]))
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('uint64'\)"):
        xnp.bincount(np.array([1], np.uint64))
    with pytest.raises(ValueError, match="must be 1-dimensional"):
        xnp.bincount(np.ones((2, 2), np.int64))
    with pytest.raises(ValueError, match="The weights and list don't have the same length"):
        xnp.bincount(x, weights=np.ones(3))
    with pytest.raises(ValueError, match="minlength= must be non-negative"):
        xnp.bincount(x, minlength=-1)


@settings(max_examples=12, deadline=None)
@given(shape=shapes(max_dims=2), dtype=st.sampled_from(["int8", "int64", "float16", "float32", "float64", "bool"]),
       bins=st.one_of(st.integers(1, 5), st.just("edges")), with_range=st.booleans(), density=st.booleans(),
       weighted=st.sampled_from([None, "float32", "int64"]), compiled=st.booleans(), seed=st.integers(0, 2**16))
def test_histogram_matches_numpy(shape, dtype, bins, with_range, density, weighted, compiled, seed):
    x = special_array(seed, shape, dtype, specials=False)
    if bins == "edges":
        bins = [-2.0, -0.5, 0.0, 1.0, 1.0, 2.75]
    hist_range = (-1.0, 2.0) if with_range else None
    rng = np.random.default_rng(seed)
    weights = None if weighted is None else rng.integers(0, 4, shape).astype(weighted)
    expected = quiet(np.histogram, x, bins=bins, range=hist_range, density=density, weights=weights)
    got = run(lambda v, w: xnp.histogram(v, bins=bins, range=hist_range, density=density, weights=w),
              (x, weights), compiled)
    assert_matches(got[1], expected[1])
    assert_matches(got[0], expected[0], rtol=1e-6)
    edges = run(lambda v: xnp.histogram_bin_edges(v, bins=bins, range=hist_range), (x,), compiled)
    assert_matches(edges, quiet(np.histogram_bin_edges, x, bins=bins, range=hist_range))


def test_histogram_of_constant_data_and_errors():
    for x in (np.full(4, 3, np.int32), np.full(3, 0.5, np.float32), np.zeros(0, np.float32)):
        counts, edges = np.histogram(x, bins=3)
        got = xlac.compile(lambda v: xnp.histogram(v, bins=3))(x)
        assert_matches(got[0], counts)
        assert_matches(got[1], edges)
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="`bins` must increase monotonically"):
        xnp.histogram(x, bins=np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="`bins` must be positive"):
        xnp.histogram(x, bins=0)
    with pytest.raises(ValueError, match="max must be larger than min"):
        xnp.histogram(x, range=(2, 1))
    with pytest.raises(ValueError, match="supplied range of .* is not finite"):
        xnp.histogram(x, range=(0, np.inf))
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        xnp.histogram(x, weights=np.ones(3))
    with pytest.raises(xlac.UnsupportedError, match="bins='auto'"):
        xnp.histogram(x, bins="auto")


# ---------------------------------------------------------------- unique


@settings(max_examples=12, deadline=None)
@given(shape=shapes(), dtype=st.sampled_from(REAL_DTYPES + [np.dtype("complex64")]), equal_nan=st.booleans(),
       flags=st.tuples(st.booleans(), st.booleans(), st.booleans()), seed=st.integers(0, 2**16))
def test_unique_eagerly_is_numpys_result(shape, dtype, equal_nan, flags, seed):
    x = special_array(seed, shape, dtype)
    if dtype.kind == "c":
        x = np.where(np.isnan(x), 0, x)      # NumPy's complex NaN handling in unique depends on its sort kind
    kwargs = dict(return_index=flags[0], return_inverse=flags[1], return_counts=flags[2], equal_nan=equal_nan)
    expected = np.unique(host(x), **kwargs)
    got = xnp.unique(x, **kwargs)
    expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
    assert len(got) == len(expected)
    # -0.0 or 0.0: xlac keeps the first occurrence, NumPy whichever its (unstable) sort or hash table gives
    assert_matches(got[0], expected[0].astype(x.dtype))
    for g, e in zip(got[1:], expected[1:]):
        assert_bits_equal(g, e)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 10), dtype=st.sampled_from([np.dtype("int32"), np.dtype("float32")]),
       size=st.integers(0, 12), fill=st.sampled_from([None, 42]), seed=st.integers(0, 2**16))
def test_unique_with_a_static_size_pads_or_cuts(n, dtype, size, fill, seed):
    x = special_array(seed, (n,), dtype)
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    got = xlac.compile(lambda v: xnp.unique(v, return_index=True, return_inverse=True, return_counts=True,
                                            size=size, fill_value=fill))(x)
    k = min(size, len(values))
    pad_value = fill if fill is not None else (values[0] if n else 0)
    assert_bits_equal(got[0], np.concatenate([values[:k], np.full(size - k, pad_value, dtype)]))
    assert_bits_equal(got[1], np.concatenate([index[:k], np.zeros(size - k, np.int64)]))
    assert_bits_equal(got[3], np.concatenate([counts[:k], np.zeros(size - k, np.int64)]))
    assert_bits_equal(got[2], inverse)


@settings(max_examples=12, deadline=None)
@given(shape=shapes(min_side=0, max_dims=3), dtype=st.sampled_from(["int8", "float32", "bool"]),
       compiled=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_unique_along_an_axis_matches_numpy(shape, dtype, compiled, seed, data):
    if not shape:
        return
    axis = axis_for(data.draw, len(shape), allow_none=False)
    rng = np.random.default_rng(seed)
    x = special_array(seed, shape, dtype, specials=dtype == "float32")
    x = np.take(x, rng.integers(0, max(shape[axis], 1), shape[axis]), axis=axis) if shape[axis] else x
    expected = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    size = expected[0].shape[axis]
    got = run(lambda v: xnp.unique(v, return_index=True, return_inverse=True, return_counts=True, axis=axis,
                                   size=size if compiled else None), (x,), compiled)
    for g, e in zip(got, expected):
        assert_matches(g, e)


def test_array_api_unique_functions():
    x = np.array([[3.0, np.nan, 1.0], [3.0, np.nan, -0.0]])
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        expected, got = getattr(np, name)(x), getattr(xnp, name)(x)
        assert type(got).__name__ == type(expected).__name__
        assert got._fields == expected._fields
        for g, e in zip(got, expected):
            assert_matches(g, e)
    assert_matches(xnp.unique_values(x), np.sort(np.unique_values(x)))
    compiled = xlac.compile(lambda v: tuple(xnp.unique_counts(v, size=3)))(x)
    assert_matches(compiled[1], np.array([1, 1, 2]))


def test_unique_errors():
    x = np.array([1, 2, 2])
    with pytest.raises(ValueError, match="unique: the number of unique values depends on the data.*size=N"):
        xlac.compile(lambda v: xnp.unique(v))(x)
    with pytest.raises(ValueError, match="unique_values: .*size=N"):
        xlac.compile(lambda v: xnp.unique_values(v))(x)
    with pytest.raises(np.exceptions.AxisError, match="unique: axis 2 is out of bounds"):
        xnp.unique(np.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match="size= must be a static non-negative integer"):
        xnp.unique(x, size=2.5)


# ---------------------------------------------------------------- union1d, intersect1d, setdiff1d, setxor1d


@settings(max_examples=12, deadline=None)
@given(op=st.sampled_from(["union1d", "intersect1d", "setdiff1d", "setxor1d"]), n=st.integers(0, 7),
       m=st.integers(0, 7), dtype=st.sampled_from(["int8", "float32"]), assume_unique=st.booleans(),
       compiled=st.booleans(), extra=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_set_functions_match_numpy(op, n, m, dtype, assume_unique, compiled, extra, seed):
    a, b = special_array(seed, (n,), dtype), special_array(seed + 1, (m,), "float64" if op == "setdiff1d" else dtype)
    if assume_unique or op == "union1d":
        a, b = np.unique(a), np.unique(b)     # NumPy leaves duplicates undefined with assume_unique
        a = a if op != "setdiff1d" else np.random.default_rng(seed).permutation(a)
    kwargs = {} if op == "union1d" else {"assume_unique": assume_unique}
    expected = getattr(np, op)(a, b, **kwargs)
    if not compiled:
        assert_matches(getattr(xnp, op)(a, b, **kwargs), expected)
        return
    size = len(expected) + extra
    got = run(lambda u, v: getattr(xnp, op)(u, v, size=size, fill_value=7, **kwargs), (a, b), True)
    assert_matches(got, np.concatenate([expected, np.full(extra, 7, expected.dtype)]))


def test_intersect1d_indices_and_set_errors():
    a, b = np.array([[5, 1], [3, 1]]), np.array([3, 5, 7, 3])
    for g, e in zip(xnp.intersect1d(a, b, return_indices=True), np.intersect1d(a, b, return_indices=True)):
        assert_matches(g, e)
    got = xlac.compile(lambda u, v: xnp.intersect1d(u, v, return_indices=True, size=3))(a, b)
    for g, e in zip(got, (np.array([3, 5, 3]), np.array([2, 0, 0]), np.array([0, 1, 0]))):
        assert_matches(g, e)
    with pytest.raises(ValueError, match="setdiff1d: the number of values depends on the data.*size=N"):
        xlac.compile(lambda u, v: xnp.setdiff1d(u, v))(a, b)


# ---------------------------------------------------------------- nonzero, argwhere, flatnonzero, isin


@settings(max_examples=12, deadline=None)
@given(shape=shapes(), dtype=st.sampled_from(REAL_DTYPES), compiled=st.booleans(), seed=st.integers(0, 2**16),
       extra=st.integers(-2, 2))
def test_nonzero_argwhere_flatnonzero(shape, dtype, compiled, seed, extra):
    x = special_array(seed, shape, dtype)
    found = int(np.count_nonzero(x))
    if not compiled:
        if shape:
            for g, e in zip(xnp.nonzero(x), np.nonzero(x)):
                assert_matches(g, e)
        assert_matches(xnp.argwhere(x), np.argwhere(x))
        assert_matches(xnp.flatnonzero(x), np.flatnonzero(x))
        return
    size = max(found + extra, 0)
    k = min(size, found)
    expected = np.argwhere(x)[:k]
    got = run(lambda v: xnp.argwhere(v, size=size, fill_value=-1), (x,), True)
    assert_matches(got, np.concatenate([expected, np.full((size - k, x.ndim), -1, np.int64)]))
    flat = run(lambda v: xnp.flatnonzero(v, size=size), (x,), True)
    assert_matches(flat, np.concatenate([np.flatnonzero(x)[:k], np.zeros(size - k, np.int64)]))
    if shape:
        rows = run(lambda v: xnp.nonzero(v, size=size, fill_value=tuple(range(x.ndim))), (x,), True)
        for axis, (g, e) in enumerate(zip(rows, np.nonzero(x))):
            assert_matches(g, np.concatenate([e[:k], np.full(size - k, axis, np.int64)]))


def test_nonzero_errors():
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        xnp.nonzero(np.array(1))
    v = np.array([0.0, 2.0, 3.0])                   # without size=, it comes back at NumPy's length
    np.testing.assert_array_equal(xlac.compile(lambda v: xnp.nonzero(v))(v)[0], np.nonzero(v)[0])
    with pytest.raises(ValueError, match="fill_value has 1 entries for an array of 2 dimensions"):
        xnp.nonzero(np.ones((2, 2)), size=1, fill_value=(0,))


@given(shape=shapes(max_dims=2), n_tests=st.integers(0, 6), dtype=st.sampled_from(NUMBERS),
       invert=st.booleans(), compiled=st.booleans(), seed=st.integers(0, 2**16))
def test_isin_matches_numpy(shape, n_tests, dtype, invert, compiled, seed):
    x = special_array(seed, shape, dtype)
    tests = special_array(seed + 1, (n_tests,), dtype)
    expected = np.isin(host(x), host(tests), invert=invert)
    assert_matches(run(lambda a, b: xnp.isin(a, b, invert=invert), (x, tests), compiled), expected)


def test_isin_mixed_dtypes_and_kind():
    small = np.array([1, 2, 3], np.int8)
    assert_matches(xnp.isin(small, [2.0, 3.5]), np.isin(small, [2.0, 3.5]))
    assert_matches(xnp.isin(np.array([1, 2]), np.array([2]), kind="table"), np.array([False, True]))
    with pytest.raises(ValueError, match="Invalid kind"):
        xnp.isin(np.array([1]), [1], kind="hash")


# ---------------------------------------------------------------- median, quantile, percentile


@st.composite
def reduce_axes(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim)))


def reduced_size(shape, axis):
    axes = range(len(shape)) if axis is None else [axis] if isinstance(axis, int) else axis
    return int(np.prod([shape[a] for a in axes]))


@settings(max_examples=12, deadline=None)
@given(shape=shapes(min_side=1), dtype=st.sampled_from(REAL_DTYPES), keepdims=st.booleans(),
       nan=st.booleans(), compiled=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_median_and_nanmedian_match_numpy(shape, dtype, keepdims, nan, compiled, seed, data):
    axis = data.draw(reduce_axes(len(shape)))
    x = special_array(seed, shape, dtype, specials=nan)
    if dtypes.is_float(dtype):
        x = np.where(np.isinf(host(x)), 1.0, host(x)).astype(dtype)    # inf - inf makes NumPy's means NaN
    got = run(lambda v: (xnp.median(v, axis, keepdims=keepdims), xnp.nanmedian(v, axis, keepdims=keepdims)),
              (x,), compiled)
    reference = host(x) if dtype != BF16 else x.astype(np.float32)
    for g, fn in zip(got, (np.median, np.nanmedian)):
        expected = np.asarray(quiet(fn, reference, axis=axis, keepdims=keepdims))
        if dtype in (np.float16, BF16):
            expected = expected.astype(dtype)
        assert_matches(g, expected)


QUANTILE_FUNCTIONS = [("quantile", 1), ("nanquantile", 1), ("percentile", 100), ("nanpercentile", 100)]


@settings(max_examples=12, deadline=None)
@given(shape=shapes(min_side=1), dtype=st.sampled_from(NUMBERS), method=st.sampled_from(QUANTILE_METHODS),
       function=st.sampled_from(QUANTILE_FUNCTIONS),
       q=st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.1, 0.75], np.array([0.2, 0.9], np.float32), 1]),
       keepdims=st.booleans(), nan=st.booleans(), compiled=st.booleans(), seed=st.integers(0, 2**16),
       data=st.data())
def test_quantile_family_matches_numpy(shape, dtype, method, function, q, keepdims, nan, compiled, seed, data):
    axis = data.draw(reduce_axes(len(shape)))
    x = special_array(seed, shape, dtype, specials=False)
    if nan and dtypes.is_float(dtype):
        x[np.random.default_rng(seed).random(shape) < 0.25] = np.nan
    name, scale = function
    if scale == 100:
        q = q * 100 if isinstance(q, (int, float, np.ndarray)) else [v * 100 for v in q]
    got = run(lambda v: getattr(xnp, name)(v, q, axis, method=method, keepdims=keepdims), (x,), compiled)
    expected = np.asarray(quiet(getattr(np, name), host(x), q, axis=axis, method=method, keepdims=keepdims))
    expected = expected.astype(quantile_dtype(name, x, q, axis, method))
    rtol = {np.dtype("float16"): 4e-3, BF16: 3e-2}.get(np.dtype(dtype), 1e-6)
    assert_matches(got, expected, rtol=rtol if expected.dtype.kind == "f" or expected.dtype == BF16 else None)


def quantile_dtype(name, x, q, axis, method):
    """The dtype NumPy gives: bfloat16 promotes as float16 does; NaNs are replaced, as NumPy gives a nan*
    result whose slices are all NaN the data's dtype instead of the promoted one."""
    data = x.astype(np.float16) if x.dtype == BF16 else x
    if dtypes.is_float(data.dtype):
        data = np.where(np.isnan(data), 0, data).astype(data.dtype)
    dtype = np.asarray(quiet(getattr(np, name), data, q, axis=axis, method=method)).dtype
    return BF16 if x.dtype == BF16 and dtype == np.float16 else dtype


def test_quantile_traced_q_out_and_result_dtypes():
    x = np.array([[4.0, 1.0, 3.0], [2.0, 8.0, 6.0]], np.float32)
    q = np.array([0.25, 0.5], np.float32)
    assert_matches(xlac.compile(lambda v, qq: xnp.quantile(v, qq, axis=1))(x, q), np.quantile(x, q, axis=1))
    assert_matches(xnp.quantile(x, 0.3), np.quantile(x, 0.3))                     # weak q: float32
    assert_matches(xnp.quantile(x, np.float64(0.3)), np.quantile(x, np.float64(0.3)))
    assert_matches(xnp.quantile(np.arange(5), 1), np.quantile(np.arange(5), 1))   # integer q: take, int64
    assert_matches(xnp.median(np.array([True, False, True])), np.median(np.array([True, False, True])))
    out = np.zeros(2, np.float64)
    assert xnp.median(x, axis=1, out=out) is out
    np.testing.assert_allclose(out, np.median(x, axis=1))
    qs = np.array([[0.1, 0.2], [0.3, 0.4]])
    assert_matches(xnp.quantile(x, qs, axis=0), np.quantile(x, qs, axis=0))


def test_quantile_errors():
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        xnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        xnp.nanpercentile(x, [50, 101])
    with pytest.raises(ValueError, match="'middle' is not a valid method"):
        xnp.quantile(x, 0.5, method="middle")
    with pytest.raises(TypeError, match="a must be an array of real numbers"):
        xnp.percentile(x.astype(np.complex64), 5)
    with pytest.raises(ValueError, match="q must be a scalar or 1d"):
        xnp.quantile(x, np.full((1, 1, 1), 0.5))
    with pytest.raises(xlac.UnsupportedError, match="weights= is not supported"):
        xnp.quantile(x, 0.5, weights=np.ones(4))
    with pytest.raises(TypeError, match="numpy boolean subtract"):
        xnp.quantile(np.array([True, False]), 0.5)


# ---------------------------------------------------------------- gradients, against JAX


def test_gradients_of_sort_median_and_quantile_match_jax():
    x = distinct_array(5, (3, 5))
    q = np.array([0.2, 0.5, 0.9], np.float32)
    cases = [
        (lambda v: (xnp.sort(v, axis=1) * xnp.arange(5.0, dtype=np.float32)).sum(),
         lambda v: (jnp.sort(v, axis=1) * jnp.arange(5.0)).sum()),
        (lambda v: (xnp.median(v, axis=0) ** 2).sum(), lambda v: (jnp.median(v, axis=0) ** 2).sum()),
        (lambda v: (xnp.quantile(v, q, axis=1) * 3.0).sum(), lambda v: (jnp.quantile(v, q, axis=1) * 3.0).sum()),
        (lambda v: xnp.nanpercentile(v, 40.0), lambda v: jnp.nanpercentile(v, 40.0)),
    ]
    for f, jf in cases:
        np.testing.assert_allclose(np.asarray(grad(f)(x)), np.asarray(jax.jit(jax.grad(jf))(jnp.asarray(x))),
                                   rtol=1e-5, atol=1e-6)
