"""A reduction over a slice with traced bounds of a long axis reads only the slice (a loop over fixed-size
windows when the slice is short, the masked whole axis otherwise): values against NumPy, and the graph and
XLA's program checked for the loop."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from xlac.inspection.hlo_copies import loop_body_count
from xlac.passes.windowed_reductions import MIN_LENGTH
from tests.numpy_kernels import csr_matvec

LENGTH = 3 * MIN_LENGTH + 5


def reductions(x, lo, hi):
    part = x[lo:hi]
    return part.sum(), part.max(initial=-7), part.min(initial=7), (part * 0.5 + 1).prod()


compiled_reductions = xlac.compile(reductions)     # compiled once per dtype: the bounds are traced
compiled_csr_matvec = xlac.compile(csr_matvec)

@settings(max_examples=13, deadline=None)
@given(lo=st.integers(-LENGTH - 3, LENGTH + 3), hi=st.integers(-LENGTH - 3, LENGTH + 3),
       dtype=st.sampled_from(["float64", "int64", "float32"]))
def test_reductions_over_a_traced_slice_match_numpy(lo, hi, dtype):
    x = (np.random.default_rng(abs(lo) * 7 + abs(hi)).normal(size=LENGTH) * 3).astype(dtype)
    got = compiled_reductions(x, lo, hi)
    for g, want in zip(got, reductions(x, lo, hi)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5 if dtype == "float32" else 1e-12)
        assert np.asarray(g).dtype == np.asarray(want).dtype


def test_what_lies_outside_the_slice_is_never_read():
    x = np.full(LENGTH, np.nan)
    x[100:120] = np.arange(20.0)
    x[121::3] = np.inf
    assert float(compiled_reductions(x, 100, 120)[0]) == np.arange(20.0).sum()


def random_csr(rng, rows, columns, density):
    dense = rng.normal(size=(rows, columns)) * (rng.random((rows, columns)) < density)
    dense[rng.random(rows) < 0.2] = 0.0                     # empty rows
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))])
    indices = np.nonzero(dense)[1]
    return dense, dense[dense != 0], indices, indptr


@settings(max_examples=5, deadline=None)
@given(rows=st.integers(1, 40), density=st.floats(0.0, 0.5), seed=st.integers(0, 100))
def test_a_csr_matrix_vector_product_matches_numpy(rows, density, seed):
    rng = np.random.default_rng(seed)
    dense, data, indices, indptr = random_csr(rng, rows, 2 * MIN_LENGTH, density)
    x = rng.normal(size=dense.shape[1])
    got = compiled_csr_matvec(data, indices, indptr, x)
    np.testing.assert_allclose(np.asarray(got), csr_matvec(data, indices, indptr, x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got), dense @ x, rtol=1e-10, atol=1e-12)


def test_an_index_out_of_bounds_in_a_row_still_raises_numpys_error():
    rng = np.random.default_rng(0)
    _, data, indices, indptr = random_csr(rng, 30, 2 * MIN_LENGTH, 0.2)
    indices = indices.copy()
    indices[len(indices) // 2] = 10 ** 6
    with pytest.raises(IndexError, match="out of bounds"):
        csr_matvec(data, indices, indptr, np.ones(2 * MIN_LENGTH))
    with pytest.raises(IndexError, match="out of bounds"):
        xlac.compile(csr_matvec)(data, indices, indptr, np.ones(2 * MIN_LENGTH))


@pytest.mark.usefixtures("xla_defaults")
def test_the_row_loop_reduces_each_row_in_windows():
    rng = np.random.default_rng(1)
    _, data, indices, indptr = random_csr(rng, 50, 4 * MIN_LENGTH, 0.3)
    compiled = xlac.compile(csr_matvec)
    args = (data, indices, indptr, np.ones(4 * MIN_LENGTH))
    assert data.shape[0] >= MIN_LENGTH
    ir = compiled.trace(*args).ir("final")
    # the row loop runs where the rows' intervals are not sorted (else as segment reductions)
    loops = [node for node in _all_nodes(ir) if node.primitive.name == "while"]
    assert any(loop.subgraphs[1].report == {"reductions_windowed": 1} for loop in loops)
    hlo = compiled.lower(*args).compile().as_text()
    assert loop_body_count(hlo, "conditional") >= 1          # the row's choice: windows or the whole axis


def _all_nodes(graph):
    for node in graph.nodes:
        yield node
        for region in node.subgraphs:
            yield from _all_nodes(region)


def test_a_short_axis_is_reduced_whole():
    x = np.arange(float(MIN_LENGTH - 1))
    assert "while" not in xlac.compile(reductions).trace(x, 3, 9).ir("final").op_counts()


def test_a_prefix_is_reduced_whole():
    """``x[:i]`` in a loop over ``i`` covers half the axis on average: no windows."""
    x = np.arange(float(LENGTH))
    assert "while" not in xlac.compile(lambda x, i: x[:i].sum()).trace(x, 9).ir("final").op_counts()
