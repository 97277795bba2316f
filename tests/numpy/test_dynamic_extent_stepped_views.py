"""``x[i::k]`` with a traced bound and a step other than 1 is NumPy's view of ``x``
(``xlac.numpy.dynamic_extent.SteppedView``): an in-place operator on it writes ``x``, and a write into ``x``
shows in it. Both were lost before (fuzz ``--loops --seed 5``, seed 263: ``u6 = a2[:, j % 1::2]; u6 -= ...``
in a ``fori_loop`` body left ``a2`` as it was); so do the views made of it (transposed, reshaped, flipped,
sliced), which before read the elements gathered before the write."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac


def written_through(a, i, j):
    v = a[:, i::2]
    v -= 1.5
    w = a[j::-2]
    w *= 2
    return v.sum(), w.sum()


def read_after_writes(a, i):
    v = a[i::3]
    before = v.sum()
    a[...] = np.arange(a.shape[0]) * 1.0
    after = v.sum()
    a[1] = 100.0
    return before, after, v.max()


def views_of_a_view_read_after_writes(a, i):
    v = a[:, i::2]
    flipped, transposed, flat = v[::-1], v.T, v.reshape(-1)
    rows = v[1:]
    v += 1.0
    a[0] = -3.0
    return flipped.sum(), (transposed * np.arange(a.shape[0])).sum(), flat.max(), rows.sum(), v.sum()


_written_through = xlac.compile(written_through)
_read_after_writes = xlac.compile(read_after_writes)
_views_of_a_view = xlac.compile(views_of_a_view_read_after_writes)


@settings(max_examples=15, deadline=None)
@given(st.integers(-7, 7), st.integers(-4, 4))
def test_an_in_place_operator_on_a_stepped_view_writes_its_array(i, j):
    a = np.arange(24.0).reshape(4, 6)
    expected_array, got_array = a.copy(), a.copy()
    expected = written_through(expected_array, i, j)
    got = _written_through(got_array, i, j)
    np.testing.assert_array_equal(got_array, expected_array)
    for g, e in zip(got, expected, strict=True):
        assert float(g) == e


def assert_reads_as_numpy(program, compiled, a, i):
    """``program`` and ``compiled`` return the same scalars and leave ``a`` (each a copy of it) the same."""
    expected_array, got_array = a.copy(), a.copy()
    expected = program(expected_array, i)
    got = compiled(got_array, i)
    for g, e in zip(got, expected, strict=True):
        assert float(g) == e
    np.testing.assert_array_equal(got_array, expected_array)


@settings(max_examples=10, deadline=None)
@given(st.integers(-6, 6))
def test_a_stepped_view_reads_what_was_written_into_its_array(i):
    assert_reads_as_numpy(read_after_writes, _read_after_writes, np.linspace(-1.0, 1.0, 7), i)


@settings(max_examples=10, deadline=None)
@given(st.integers(-5, 4))
def test_views_of_a_stepped_view_read_what_was_written_into_its_array(i):
    assert_reads_as_numpy(views_of_a_view_read_after_writes, _views_of_a_view, np.arange(15.0).reshape(3, 5), i)


def test_a_row_of_a_stepped_view_is_refused_and_a_row_of_its_copy_is_not():
    def row_of_view(a, i):
        return a[i::2][1] + 0.0

    def row_of_copy(a, i):
        row = a[i::2].copy()[1]
        a[...] = 7.0
        return row
    with pytest.raises(xlac.UnsupportedError, match=r"index x itself \(x\[i \+ k\]\)"):
        xlac.compile(row_of_view)(np.arange(12.0).reshape(4, 3), 1)
    a = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(xlac.compile(row_of_copy)(a.copy(), 1), row_of_copy(a.copy(), 1))


def test_a_reshape_merging_the_axis_of_a_view_of_a_stepped_view_is_refused():
    def program(a, i):
        return a[:, i::2].T.reshape(-1)
    with pytest.raises(xlac.UnsupportedError, match=r"reshape x\[i::k\] itself, or copy the view first"):
        xlac.compile(program)(np.arange(12.0).reshape(4, 3), 1)


def test_a_stepped_view_written_in_a_fori_loop_body_writes_the_argument():
    def program(a0, a2):
        def body(j, carry):
            u = a2[:, j % 1::2]
            u -= np.sin(a0[j % 3:j % 3 + 1])
            return carry
        xlac.fori_loop(0, 2, body, 0)
    a0, a2 = np.array([1, 2, 3], np.int8), (np.arange(6).reshape(2, 1, 3) + 1j).astype(np.complex64)
    expected, got = a2.copy(), a2.copy()
    for j in range(2):
        u = expected[:, j % 1::2]
        u -= np.sin(a0[j % 3:j % 3 + 1])
    xlac.compile(program)(a0, got)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_an_in_place_write_into_a_view_of_a_stepped_view_is_refused():
    def program(a, i):
        v = a[i::2].reshape(-1, 1)
        v -= 1.0
    with pytest.raises(xlac.UnsupportedError, match=r"view \(transposed, reshaped, ...\) of x\[i::k\]"):
        xlac.compile(program)(np.arange(6.0), 1)
