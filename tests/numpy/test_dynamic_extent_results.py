"""A compiled function may return values whose length is known only when the program runs (``x[mask]``,
``x[i:j]`` with traced bounds, ``np.nonzero``): the caller gets NumPy's array, of NumPy's length."""
import numpy as np
from hypothesis import example, given, settings, strategies as st

import xlac


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def selections(x, threshold, i, j):
    return x[x > threshold], x[i:j], np.flatnonzero(x > threshold), {"clipped": x[x > threshold] * 2}


_compiled_selections = xlac.compile(selections)


@settings(max_examples=13, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=0, max_size=12), st.floats(-6, 6),
       st.integers(-14, 14), st.integers(-14, 14))
@example([], 0.0, 0, 1)                  # an empty array: empty results (np.take of no positions from it)
def test_selections_and_traced_slices_come_back_with_numpy_lengths(values, threshold, i, j):
    x = np.array(values)
    got, want = _compiled_selections(x, threshold, i, j), selections(x, threshold, i, j)
    for g, w in zip(got[:3], want[:3]):
        _same(g, w)
    _same(got[3]["clipped"], want[3]["clipped"])


def rows_and_masks(m, k):
    picked = m[m > k]                    # a 2-D mask: a 1-D result in row-major order
    rows, cols = np.nonzero(m > k)
    return picked, rows, cols, m[k % 3:]


def test_a_two_dimensional_mask_and_nonzero_give_numpy_order():
    m = np.array([[3, -1, 4], [1, -5, 9], [2, 6, -5]])
    compiled = xlac.compile(rows_and_masks)
    for k in (-10, 0, 3, 100):
        for g, w in zip(compiled(m, k), rows_and_masks(m, k)):
            _same(g, w)


def test_a_selection_made_in_a_rolled_loop_comes_back_whole():
    def positives_of_cumulative(x):
        total = np.zeros_like(x)
        for i in range(1, x.shape[0]):
            total[i] = total[i - 1] + x[i]
        return total[total > 0]

    x = np.array([1.0, -3.0, 2.5, 0.5, -0.25, 4.0])
    _same(xlac.compile(positives_of_cumulative)(x), positives_of_cumulative(x))


def test_the_result_feeds_numpy_and_a_second_compiled_call():
    first = xlac.compile(lambda x: x[x > 0])
    x = np.array([0.5, -1.0, 2.0])
    kept = first(x)
    _same(np.asarray(kept) + 1, x[x > 0] + 1)
    _same(first(kept), x[x > 0])
