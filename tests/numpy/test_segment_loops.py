"""Loops that reduce, per row ``i``, the positions ``o[i] <= p < o[i + 1]`` of an array run as segment
reductions (xlac/convert/segment_reductions.py): values, dtypes and errors against NumPy (sorted bounds with
empty rows, bounds that are not sorted, where the rolled loop runs instead), XLA's program (a scatter, no row
loop outside the fallback) and the loop report."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import csr_matvec

ROWS, POSITIONS, COLUMNS = 12, 40, 9


def row_sums(vals, o):
    y = np.zeros(o.shape[0] - 1, vals.dtype)
    for i in range(o.shape[0] - 1):
        y[i] = np.sum(vals[o[i]:o[i + 1]])
    return y


def row_maxima(vals, o):
    y = np.zeros(o.shape[0] - 1, vals.dtype)
    for i in range(o.shape[0] - 1):
        y[i] = vals[o[i]:o[i + 1]].max()
    return y


def row_dots(a, b, o):
    y = np.zeros(o.shape[0] - 1)
    for i in range(o.shape[0] - 1):
        y[i] = (a[o[i]:o[i + 1]] * b[o[i]:o[i + 1]]).sum()
    return y


def fill_maxima(y, vals, o):
    for i in range(y.shape[0]):
        y[i] = vals[o[i]:o[i + 1]].max()


def products_minima_and_total(vals, starts, stops):
    y = np.zeros((2, starts.shape[0]))
    total = 0.0
    for i in range(starts.shape[0]):
        y[0, i] = np.prod(vals[starts[i]:stops[i]])
        y[1, i] = vals[starts[i]:stops[i]].min(initial=5.0)
        total += vals[starts[i]:stops[i]].sum()
    return y, total


def scaled_row_sums(vals, o):
    y = np.zeros(o.shape[0] - 1)
    for i in range(o.shape[0] - 1):
        y[i] = (vals[o[i]:o[i + 1]] * i).sum()
    return y


def sums_and_running_maxima(vals, o):
    y = np.zeros(o.shape[0] - 1)
    for i in range(o.shape[0] - 1):
        y[i] = np.sum(vals[o[i]:o[i + 1]]) + np.cumsum(vals[o[i]:o[i + 1]]).max()
    return y


compiled = {fn: xlac.compile(fn) for fn in (row_sums, row_maxima, row_dots, csr_matvec, fill_maxima,
                                            products_minima_and_total)}

sorted_bounds = st.lists(st.integers(0, POSITIONS), min_size=ROWS + 1, max_size=ROWS + 1).map(sorted)
any_bounds = st.lists(st.integers(-POSITIONS - 5, POSITIONS + 5), min_size=ROWS + 1, max_size=ROWS + 1)
dtypes = st.sampled_from(["float64", "int64", "float32"])


def _values(seed: int, dtype: str, n: int = POSITIONS) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=n) * 10).astype(dtype)


def _same_outcome(fn, args, rtol=1e-12):
    """``compiled[fn](*args)`` gives NumPy's values and dtype, or raises NumPy's error."""
    try:
        want = fn(*args)
    except Exception as error:          # noqa: BLE001 (NumPy's own error, whichever, is the point)
        with pytest.raises(type(error)) as raised:
            compiled[fn](*args)
        assert str(raised.value).splitlines()[0] == str(error)
        return
    got = np.asarray(compiled[fn](*args))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(o=sorted_bounds, dtype=dtypes, seed=st.integers(0, 1000))
def test_sums_over_sorted_rows_with_empty_ones_match_numpy(o, dtype, seed):
    _same_outcome(row_sums, (_values(seed, dtype), np.array(o)), rtol=1e-5 if dtype == "float32" else 1e-12)


@settings(max_examples=20, deadline=None)
@given(o=any_bounds, seed=st.integers(0, 1000))
def test_sums_over_bounds_not_sorted_match_numpy(o, seed):
    """Rows that overlap or run backwards (negative bounds wrap, as in NumPy): the rolled loop's values."""
    _same_outcome(row_sums, (_values(seed, "float64"), np.array(o)))


@settings(max_examples=20, deadline=None)
@given(o=st.one_of(sorted_bounds, any_bounds), dtype=dtypes, seed=st.integers(0, 1000),
       nan_at=st.one_of(st.none(), st.integers(0, POSITIONS - 1)))
def test_maxima_match_numpy_and_an_empty_row_raises_its_error(o, dtype, seed, nan_at):
    vals = _values(seed, dtype)
    if nan_at is not None and dtype != "int64":
        vals[nan_at] = np.nan
    _same_outcome(row_maxima, (vals, np.array(o)))


@settings(max_examples=20, deadline=None)
@given(o=st.one_of(sorted_bounds, any_bounds), seed=st.integers(0, 1000))
def test_dots_of_two_slices_with_the_same_bounds_match_numpy(o, seed):
    _same_outcome(row_dots, (_values(seed, "float64"), _values(seed + 1, "float64"), np.array(o)))


@settings(max_examples=20, deadline=None)
@given(o=st.one_of(sorted_bounds, any_bounds), seed=st.integers(0, 1000), bad_column=st.booleans())
def test_csr_matvec_matches_numpy(o, seed, bad_column):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, COLUMNS, POSITIONS)
    if bad_column:
        indices[rng.integers(0, POSITIONS)] = COLUMNS + 3      # NumPy's IndexError where a row holds it
    _same_outcome(csr_matvec, (rng.normal(size=POSITIONS), indices, np.array(o), rng.normal(size=COLUMNS)))


@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(0, POSITIONS), min_size=2 * ROWS, max_size=2 * ROWS).map(sorted),
       shuffled=st.booleans(), seed=st.integers(0, 1000))
def test_products_minima_and_an_accumulated_sum_over_intervals_with_gaps_match_numpy(cuts, shuffled, seed):
    """Bounds from two arrays (``vals[starts[i]:stops[i]]``): sorted intervals with gaps between them run as
    segment reductions; shuffled, they may overlap and the rolled loop runs."""
    starts, stops = np.array(cuts[0::2]), np.array(cuts[1::2])
    if shuffled:
        order = np.random.default_rng(seed).permutation(ROWS)
        starts, stops = starts[order], stops[::-1]
    vals = 1.0 + np.random.default_rng(seed).random(POSITIONS) / 10
    got, want = compiled[products_minima_and_total](vals, starts, stops), products_minima_and_total(vals, starts, stops)
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-12)
    np.testing.assert_allclose(float(got[1]), want[1], rtol=1e-12)


def test_rows_written_into_an_argument_match_numpy():
    o = np.array([0, 3, 5, 6, 9] + [9 + 2 * k for k in range(1, ROWS - 3)])
    vals = _values(4, "float64")
    want, got = np.full(ROWS, -1.0), np.full(ROWS, -1.0)
    fill_maxima(want, vals, o)
    compiled[fill_maxima](got, vals, o)
    np.testing.assert_array_equal(got, want)
    assert "segment reductions" in compiled[fill_maxima].trace(got, vals, o).loop_decisions[0].reason


def test_an_empty_row_leaves_the_rows_before_it_written_as_numpy_does():
    o = np.array([0, 3, 5, 5, 9] + [9 + k for k in range(1, ROWS - 3)])
    vals = _values(3, "float64")
    want, got = np.full(ROWS, -1.0), np.full(ROWS, -1.0)
    with pytest.raises(ValueError, match="zero-size array"):
        fill_maxima(want, vals, o)
    with pytest.raises(ValueError, match="zero-size array") as raised:
        compiled[fill_maxima](got, vals, o)
    assert "test_segment_loops.py" in str(raised.value)
    np.testing.assert_array_equal(got, want)


def _random_csr(rng, rows: int, columns: int, density: float):
    dense = np.where(rng.random((rows, columns)) < density, rng.normal(size=(rows, columns)), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))])
    return dense[dense != 0], np.nonzero(dense)[1], indptr


def test_the_loop_report_says_it_ran_as_segment_reductions():
    data, indices, indptr = _random_csr(np.random.default_rng(0), 30, 20, 0.2)
    (decision,) = compiled[csr_matvec].trace(data, indices, indptr, np.ones(20)).loop_decisions
    assert decision.decision == "vectorized"
    assert "as segment reductions: sum over [lo(i), hi(i))" in decision.reason
    (maxima,) = compiled[row_maxima].trace(_values(0, "float64"), np.arange(ROWS + 1)).loop_decisions
    assert "segment reductions: max" in maxima.reason
    cuts = np.arange(2 * ROWS)
    (mixed,) = compiled[products_minima_and_total].trace(_values(0, "float64"), cuts[0::2], cuts[1::2]).loop_decisions
    assert "as segment reductions: prod over [lo(i), hi(i)), min over [lo(i), hi(i)), sum" in mixed.reason
    assert "accumulated, then reduced: total (sum)" in mixed.reason


def _computations(hlo: str) -> dict[str, str]:
    """XLA's optimized program as its computations' text, by name (the entry's as "ENTRY")."""
    found = {}
    for block in re.split(r"\n(?=%|ENTRY )", hlo):
        header = re.match(r"(ENTRY )?%([\w.\-]+)", block)
        if header:
            found["ENTRY" if header.group(1) else header.group(2)] = block
    return found


def _reached(computations: dict[str, str], start: str, leaving_out: set[str]) -> set[str]:
    """The computations ``start`` calls, directly or not, never entering those of ``leaving_out``."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name in leaving_out:
            continue
        seen.add(name)
        body = computations[name].split("\n", 1)[1] if "\n" in computations[name] else ""
        todo += [called for called in re.findall(r"%([\w.\-]+)", body) if called in computations]
    return seen


def _row_loops(computations: dict[str, str], names: set[str]) -> list[str]:
    """The ``while`` instructions of ``names`` that are a converted Python loop (not a running sum's, nor a
    window loop of xlac.passes.windowed_reductions, whose ops are named after the NumPy function)."""
    return [line for name in names for line in computations[name].splitlines()
            if " while(" in line and 'op_name="while"' in line]


def _csr_program(data, indices, indptr, x) -> dict[str, str]:
    return _computations(xlac.compile(csr_matvec).lower(data, indices, indptr, x).compile().as_text())


@pytest.mark.usefixtures("xla_defaults")
def test_the_segment_path_of_csr_matvec_scatters_and_has_no_row_loop():
    data, indices, indptr = _random_csr(np.random.default_rng(1), 200, 150, 0.05)
    computations = _csr_program(data, indices, indptr, np.ones(150))
    (fallback_cond,) = [line for line in computations["ENTRY"].splitlines()
                        if " conditional(" in line and 'op_name="case"' in line]
    rolled, segments = re.search(r"branch_computations=\{%([\w.\-]+), %([\w.\-]+)\}", fallback_cond).groups()
    segment_path = _reached(computations, "ENTRY", {rolled})
    assert _row_loops(computations, segment_path) == []
    assert any(re.search(r"= \S+ scatter\(", computations[name]) for name in segment_path)
    assert _row_loops(computations, _reached(computations, rolled, set()))      # the fallback is the row loop


@pytest.mark.usefixtures("xla_defaults")
def test_without_vectorized_loops_the_row_loop_is_there(monkeypatch):
    """The structural test above can fail: the same kernel rolled has its row loop in the entry's path."""
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")
    data, indices, indptr = _random_csr(np.random.default_rng(1), 200, 150, 0.05)
    computations = _csr_program(data, indices, indptr, np.ones(150))
    assert _row_loops(computations, _reached(computations, "ENTRY", set()))


@pytest.mark.parametrize("kernel, why", [
    (scaled_row_sums, "on the CPU, a body without a contraction"),          # values that change per row
    (sums_and_running_maxima, "a slice with traced bounds other than in a sum, product, maximum or minimum"),
])
def test_loops_whose_slices_are_not_segment_reductions_stay_rolled(kernel, why):
    o = np.array([0, 2, 3, 5, 9, 10, 12, 20, 21, 30, 33, 38, 40])
    vals = _values(6, "float64")
    f = xlac.compile(kernel)
    np.testing.assert_allclose(np.asarray(f(vals, o)), kernel(vals, o), rtol=1e-12)
    (decision,) = f.trace(vals, o).loop_decisions
    assert decision.decision == "rolled" and why in decision.reason and "segment reductions" not in decision.reason
