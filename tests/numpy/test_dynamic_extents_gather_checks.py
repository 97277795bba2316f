"""NumPy's bounds check of a gather by a dynamic-extent index (``x[cols[ptr[i]:ptr[i + 1]]]``,
``x[indices[mask]]``): an out-of-range index among the selected positions raises NumPy's IndexError (its
first, in NumPy's order) after the call; one outside them does not."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import csr_matvec
from tests.numpy.test_dynamic_extents import rolled

SIZE = 5
x = np.arange(float(SIZE))
indices = np.array([1, 9, 4, -1, -6, 0, 7, 2])     # 9, -6 and 7 are out of range for an axis of 5


def numpy_outcome(fn, *args):
    """``fn``'s result, or its IndexError's message."""
    try:
        return float(fn(*args))
    except IndexError as error:
        return str(error)


def xlac_outcome(fn, *args):
    try:
        return float(xlac.compile(fn)(*args))
    except IndexError as error:
        return str(error).splitlines()[0]


bounds = st.integers(-10, 10) | st.none()


@settings(max_examples=8, deadline=None)
@given(bounds, bounds, st.sampled_from([1, 2, -1, -3]))
def test_a_gather_by_a_slice_with_traced_bounds_raises_as_numpy_only_for_the_selected_indices(start, stop, step):
    def gather_sum(x, indices, start, stop):
        return x[indices[start:stop:step]].sum()
    traced = [None if b is None else np.int64(b) for b in (start, stop)]
    assert xlac_outcome(gather_sum, x, indices, *traced) == numpy_outcome(gather_sum, x, indices, start, stop)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.booleans(), min_size=len(indices), max_size=len(indices)))
def test_a_gather_by_a_traced_mask_selection_raises_as_numpy_only_for_the_selected_indices(selected):
    def gather_sum(x, indices, selected):
        return x[indices[selected]].sum()
    selected = np.array(selected)
    assert xlac_outcome(gather_sum, x, indices, selected) == numpy_outcome(gather_sum, x, indices, selected)


def test_an_empty_slice_at_the_end_of_the_indices_checks_nothing():
    def gather_sum(x, indices, start):
        return x[indices[start:]].sum()
    assert float(xlac.compile(gather_sum)(x, np.array([0, 9]), np.int64(2))) == 0.0


def csr_with_unused_tail():
    """A 16x5 CSR matrix (its last 13 rows empty) whose index array holds two more entries than its rows use."""
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 0.0])
    cols = np.array([0, 4, 1, 2, 3, 99, -99])
    indptr = np.array([0, 2, 2] + [5] * 14)
    return data, cols, indptr


def test_csr_rows_ignore_an_out_of_range_column_index_outside_every_row():
    data, cols, indptr = csr_with_unused_tail()
    vector = np.arange(1.0, 6.0)
    compiled = xlac.compile(csr_matvec)
    assert rolled(compiled, data, cols, indptr, vector)
    np.testing.assert_array_equal(np.asarray(compiled(data, cols, indptr, vector)),
                                  csr_matvec(data, cols, indptr, vector))


@pytest.mark.parametrize("position, bad", [(0, 7), (1, -6), (4, 5)])
def test_csr_rows_raise_numpys_index_error_for_an_out_of_range_column_index_in_a_row(position, bad):
    data, cols, indptr = csr_with_unused_tail()
    cols[position] = bad
    vector = np.arange(1.0, 6.0)
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 0 with size 5") as numpy_error:
        csr_matvec(data, cols, indptr, vector)
    compiled = xlac.compile(csr_matvec)
    assert rolled(compiled, data, cols, indptr, vector)
    with pytest.raises(IndexError) as xlac_error:
        compiled(data, cols, indptr, vector)
    assert str(xlac_error.value).splitlines()[0] == str(numpy_error.value)
