"""Writes into a reshaped 1-D array that read the array (``xlac/passes/flat_writes.py``): XLA:CPU (jaxlib
0.10.2) runs ``dynamic_update_slice(reshape(a), f(slice(a)))`` in place while reading ``a`` when the result
has several readers, and returns rows already overwritten (``jax.jit`` of
``m = lax.dynamic_update_slice(a.reshape(3, 4), a.reshape(3, 4)[:2] - 1, (1, 0)); m[1:].sum(), m[1:]`` gives
0.0 for 20.0). Found by ``benchmarks/fuzz.py --seed 23``."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac


def shifted_rows(a, rows, shift):
    b = a.reshape(rows, -1)
    b[shift:] = b[:rows - shift] * 2 - 1
    return a.sum(), b[shift:], b[shift:].max(), a * 1


def overlapping_views(p0, p1):          # the fuzz program: two views of one array, one written
    p0[...] = p1 - p1.sum()
    t1 = np.count_nonzero(p0 > 0) + 2
    return p0.ravel()[t1] if t1 < p0.size else p0.ravel()[-1], p0.sum(), p0.copy()


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 5), st.integers(1, 4), st.data(), st.sampled_from([np.int32, np.int64, np.float32]))
def test_a_shifted_write_through_a_reshape_reads_the_rows_before_it(rows, columns, data, dtype):
    shift = data.draw(st.integers(1, rows - 1))
    a = np.arange(rows * columns).astype(dtype) - 3
    expected_array, into = a.copy(), a.copy()
    expected = shifted_rows(expected_array, rows, shift)
    got = xlac.compile(shifted_rows, static_argnums=(1, 2))(into, rows, shift)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)
    np.testing.assert_array_equal(into, expected_array)


def test_two_overlapping_views_read_after_the_write_as_numpy():
    a = np.array([[-5, -1, 0, 1], [3, -3, 3, -1], [-1, -4, 4, 1]], np.int32)
    expected_array, into = a.copy(), a.copy()
    expected = overlapping_views(expected_array[1:], expected_array[:-1])
    got = xlac.compile(overlapping_views)(into[1:], into[:-1])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)
    np.testing.assert_array_equal(into, expected_array)


def test_the_write_is_made_on_the_flat_array():
    traced = xlac.compile(shifted_rows, static_argnums=(1, 2)).trace(np.arange(12, dtype=np.int32), 3, 1)
    final = traced.ir("final")
    assert final.report == {"flat_writes": 1}
    writes = [n for n in final.nodes if n.primitive.name == "dynamic_update_slice"]
    assert [tuple(n.operands[0].type.shape) for n in writes] == [(12,)]


def shifted_window(a, shift, column):
    b = a.reshape(3, 4)
    b[shift:, column:column + 2] = b[:3 - shift, :2] * 2 - 1
    return b[shift:].sum(), b[shift:], a * 1


def test_a_write_through_a_reshape_of_a_two_dimensional_array_is_selected_in():
    """A 2-D array reshaped: XLA miscompiles the write made on a flattened copy too, so the update is selected
    into a new array (traced starts, a window that is not contiguous)."""
    compiled = xlac.compile(shifted_window)
    for shift, column in [(1, 0), (2, 2), (1, 1)]:
        a = np.arange(12.0).reshape(6, 2)
        into = a.copy()
        expected = shifted_window(a, shift, column)
        got = compiled(into, shift, column)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(g), e)
        np.testing.assert_array_equal(into, a)
    assert compiled.trace(np.zeros((6, 2)), 1, 0).ir("final").report == {"flat_writes": 1}
