"""``np.cumsum``, ``np.cumprod`` and ``np.sort`` of values with a dynamic extent (slices with traced bounds,
selections by traced masks), against NumPy: written back into a static array, or reduced."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy.test_dynamic_extents import rolled

bounds = st.integers(-9, 9) | st.none()
dtypes = st.sampled_from([np.float64, np.int32, np.uint8, np.bool_])


def sample(seed: int, shape, dtype, with_nan: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, size=shape).astype(dtype)
    if dtype == np.float64:
        values = rng.normal(size=shape).round(1)
        if with_nan:
            values[rng.random(shape) < 0.2] = np.nan
    return values


def assert_same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


@settings(max_examples=8, deadline=None)
@given(bounds, bounds, dtypes, st.integers(0, 2 ** 16))
def test_cumsum_cumprod_and_sort_of_a_slice_with_traced_bounds_match_numpy(start, stop, dtype, seed):
    def f(x, start, stop):
        total = np.zeros(x.shape, np.cumsum(x).dtype)
        product = np.zeros(x.shape, np.cumprod(x).dtype)
        total[start:stop] = np.cumsum(x[start:stop])
        product[start:stop] = x[start:stop].cumprod()
        x[start:stop] = np.sort(x[start:stop])
        return total, product, x
    x = sample(seed, 8, dtype, with_nan=True)
    traced = [None if b is None else np.int64(b) for b in (start, stop)]
    for got, expected in zip(xlac.compile(f)(x.copy(), *traced), f(x.copy(), start, stop)):
        assert_same(got, expected)


@settings(max_examples=8, deadline=None)
@given(st.floats(0.0, 1.0), dtypes, st.integers(0, 2 ** 16))
def test_cumsum_and_sort_of_a_selection_by_a_traced_mask_match_numpy(density, dtype, seed):
    def f(x, keep):
        total = np.zeros(x.shape, np.cumsum(x).dtype)
        total[keep] = np.cumsum(x[keep])
        ordered = np.zeros_like(x)
        ordered[:np.count_nonzero(keep)] = np.sort(x[keep])
        return total, ordered, np.cumsum(np.sort(x[keep])).sum()
    x = sample(seed, 10, dtype, with_nan=True)
    keep = np.random.default_rng(seed + 1).random(10) < density
    for got, expected in zip(xlac.compile(f)(x, keep), f(x, keep)):
        assert_same(got, expected)


@settings(max_examples=6, deadline=None)
@given(st.integers(-5, 5), st.integers(-6, 6), st.integers(0, 2 ** 16))
def test_scans_and_sorts_along_each_axis_and_flattened_of_a_two_dimensional_extent_match_numpy(i, j, seed):
    def f(A, i, j):
        B = np.zeros_like(A)
        C = np.zeros_like(A)
        D = np.zeros_like(A)
        B[i:, :j] = np.cumsum(A[i:, :j], axis=1)
        C[i:, :j] = np.sort(A[i:, :j], axis=0)
        D[i:, :j] = np.sort(A[i:, :j])
        flat = A[i:, :j]
        return B, C, D, np.cumsum(flat).sum(), np.cumsum(np.sort(flat, axis=None)).sum()
    A = sample(seed, (4, 5), np.float64)
    for got, expected in zip(xlac.compile(f)(A, np.int64(i), np.int64(j)), f(A, i, j)):
        assert_same(got, expected)


def test_sorting_each_csr_row_in_place_rolls_and_matches_numpy():
    def sort_rows(data, indptr):
        for r in range(indptr.shape[0] - 1):
            data[indptr[r]:indptr[r + 1]] = np.sort(data[indptr[r]:indptr[r + 1]])
        return data
    rng = np.random.default_rng(0)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 6, size=20))])
    data = rng.normal(size=indptr[-1])
    compiled = xlac.compile(sort_rows)
    assert rolled(compiled, data.copy(), indptr)
    np.testing.assert_array_equal(np.asarray(compiled(data.copy(), indptr)), sort_rows(data.copy(), indptr))


def test_a_cumulative_sum_into_out_is_refused():
    def f(x, i):
        out = np.zeros(3)
        np.cumsum(x[i:], out=out)
        return out
    with pytest.raises(Exception, match="out="):
        xlac.compile(f)(np.arange(3.0), np.int64(1))


def test_the_gradient_through_a_cumulative_sum_and_a_sort_of_a_slice_is_masked():
    def f(x, i):
        return (np.cumsum(x[i:]) * np.sort(x[i:])).sum()
    x = np.array([3.0, 1.0, 4.0, 1.5, 5.0])
    step = 1e-6
    numeric = [(f(x + step * e, 2) - f(x - step * e, 2)) / (2 * step) for e in np.eye(5)]
    np.testing.assert_allclose(np.asarray(xlac.grad(f)(x, np.int64(2))), numeric, atol=1e-6)
