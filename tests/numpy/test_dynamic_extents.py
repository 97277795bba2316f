"""Values with a dynamic extent (xlac/numpy/dynamic_extent.py): slices with traced bounds and traced boolean
masks, against NumPy; gradients and batching against JAX's hand-masked equivalents."""
import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.numpy as xnp
from tests.numpy_kernels import (binned_average, cholesky_rows, csr_matvec, forward_substitution, gram_schmidt,
                                 lu_without_pivoting, syr2k_lower)
from xlac.convert.loops import LoopUnrolledWarning, UnrolledTooLargeError


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def numpy_quietly(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # the mean of an empty slice is nan, as here
        return fn(*args)


def slice_statistics(x, y, i, j):
    s = x[i:j]
    return (s.sum(), s.prod(), s.mean(), np.any(s > 0.5), np.all(s > -0.5), np.count_nonzero(s > 0),
            s @ y[i:j], np.dot(s, s), (s * 2.0 - y[i:j]).sum(), np.linalg.norm(s), s.var())


bounds = st.integers(-14, 14) | st.none()


@settings(max_examples=13, deadline=None)
@given(st.integers(0, 12), bounds, bounds)
def test_slices_with_traced_bounds_reduce_and_contract_as_numpy(n, i, j):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    f = xlac.compile(slice_statistics)
    traced = [np.int64(b) if b is not None else None for b in (i, j)]
    got = f(x, y, *traced)
    expected = numpy_quietly(slice_statistics, x, y, i, j)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-12, equal_nan=True)
        assert np.asarray(g).dtype == np.asarray(e).dtype


@settings(max_examples=13, deadline=None)
@given(st.integers(0, 12), bounds, bounds, st.sampled_from([2, 3, -1, -2, -3]))
def test_stepped_and_reversed_slices_with_traced_bounds_read_as_numpy(n, i, j, step):
    x = np.random.default_rng(n).normal(size=n)

    def f(x, i, j):
        s = x[i:j:step]
        return s.sum(), (s * x[i:j:step] ** 2).sum(), np.count_nonzero(s > 0), s.mean()
    got = xlac.compile(f)(x, *(np.int64(b) if b is not None else None for b in (i, j)))
    for g, e in zip(got, numpy_quietly(f, x, i, j)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-12, equal_nan=True)
    if len(x[i:j:step]):
        got = xlac.compile(lambda x, i, j: x[i:j:step].argmax())(x, *(np.int64(b) if b is not None else None
                                                                       for b in (i, j)))
        assert int(got) == x[i:j:step].argmax()


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 10), bounds, bounds, st.sampled_from([2, 3, -1, -2]))
def test_writes_through_stepped_slices_with_traced_bounds_match_numpy(n, i, j, step):
    def f(x, y, i, j):
        x[i:j:step] = 7.0
        x[i:j:step] += y[i:j:step] * 2
        return x
    x, y = np.arange(float(n)), np.arange(float(n)) ** 2
    got = xlac.compile(f)(x.copy(), y, *(np.int64(b) if b is not None else None for b in (i, j)))
    np.testing.assert_array_equal(np.asarray(got), f(x.copy(), y, i, j))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from([-2.0, 0.0, 1.0, 3.0]), min_size=1, max_size=6),
       st.lists(st.sampled_from([-2.0, 0.0, 1.0, 3.0]), min_size=1, max_size=6))
def test_writes_through_a_traced_mask_take_one_value_per_selected_element_as_numpy(a, b):
    def f(a, b):
        a[a > 0] = b[b < 1]
        return a
    a, b = np.array(a), np.array(b)
    try:
        expected = f(a.copy(), b)
    except ValueError:
        with pytest.raises(ValueError, match="could not be broadcast"):
            xlac.compile(f)(a.copy(), b)
        return
    np.testing.assert_array_equal(np.asarray(xlac.compile(f)(a.copy(), b)), expected)


def test_the_functional_index_update_writes_through_traced_masks_and_slices_as_assignment_does():
    def f(x, m, i):
        return xnp.index_update(xnp.index_update(x, m > 0, np.arange(4.0)), slice(i, None), -1.0)
    x, m = np.zeros(8), np.array([1, 0, 1, 1, 0, 1, 0, 0])
    expected = x.copy()
    expected[m > 0] = np.arange(4.0)
    expected[5:] = -1.0
    np.testing.assert_array_equal(np.asarray(xlac.compile(f)(x, m, 5)), expected)
    with pytest.raises(ValueError, match="could not be broadcast"):
        xlac.compile(f)(x, np.ones(8), 5)                    # 8 selected, 4 values: after the call


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=6), st.integers(1, 4))
def test_a_selection_by_a_traced_mask_pairs_with_a_static_axis_of_its_length_as_numpy(mask, length):
    def f(x, m, y):
        return x[m > 0] * y + 1.0
    x, m, y = np.arange(float(len(mask))), np.array(mask), np.arange(1.0, length + 1)
    try:
        expected = f(x, m, y).sum()
    except ValueError:
        with pytest.raises(ValueError, match="could not be broadcast together"):
            xlac.compile(lambda x, m, y: f(x, m, y).sum())(x, m, y)
        return
    np.testing.assert_allclose(np.asarray(xlac.compile(lambda x, m, y: f(x, m, y).sum())(x, m, y)), expected)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 10), st.integers(-12, 12), st.integers(-12, 12))
def test_max_min_argmax_of_a_traced_slice_and_numpys_error_when_empty(n, i, j):
    x = np.random.default_rng(n).permutation(n).astype(np.float64)

    def f(x, i, j):
        return x[i:j].max(), np.min(x[i:j]), x[i:j].argmax(), np.argmin(x[i:j])
    if len(x[i:j]) == 0:
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum|empty sequence"):
            xlac.compile(f)(x, np.int64(i), np.int64(j))
        return
    assert tuple(float(v) for v in xlac.compile(f)(x, np.int64(i), np.int64(j))) == f(x, i, j)


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 10), st.integers(-3, 10), st.integers(0, 3), st.integers(0, 3))
def test_slices_of_different_starts_align_and_unequal_lengths_fail_as_numpy(n, i, shift, extra):
    x, y = np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64) ** 2

    def f(x, y, i, shift, extra, four):     # a traced length: no window of static length (test_windows.py)
        return (x[i:i + four] * y[i + shift:i + shift + four + extra]).sum()
    try:
        expected = f(x, y, i, shift, extra, 4)
    except ValueError:
        with pytest.raises(ValueError, match="operands could not be broadcast together"):
            xlac.compile(f)(x, y, np.int64(i), np.int64(shift), np.int64(extra), np.int64(4))
        return
    assert float(xlac.compile(f)(x, y, np.int64(i), np.int64(shift), np.int64(extra), np.int64(4))) == expected


@pytest.mark.parametrize("extra", [0, 1])
def test_slices_as_long_as_one_loop_index_pair_without_a_check_and_unequal_ones_fail_as_numpy(extra):
    def recursion(r, extra):   # Levinson-Durbin's: a[:k] against r[1:k + 1] reversed, both k long
        a = np.zeros(r.shape[0])
        a[0] = 1.0
        for k in range(1, r.shape[0]):
            lam = -np.dot(a[:k], np.flip(r[1:k + 1 + extra])) / r[0]
            a[:k + 1] = a[:k + 1] + lam * np.flip(a[:k + 1])
        return a
    r = np.linspace(8.0, 1.0, 9)
    compiled = xlac.compile(recursion, static_argnums=1)
    if extra:
        with pytest.raises(ValueError, match=r"shapes \(1,\) and \(2,\) not aligned"):
            recursion(r, extra)
        with pytest.raises(ValueError, match=r"shapes \(1,\) and \(2,\) not aligned"):
            compiled(r, extra)
        return
    np.testing.assert_allclose(np.asarray(compiled(r, extra)), recursion(r, extra), rtol=1e-12)
    assert compiled.trace(r, extra).checks == []     # the lengths are one value, known when tracing


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 10), bounds, bounds, st.floats(-3, 3))
def test_writes_into_a_traced_slice_match_numpy(n, i, j, v):
    def f(x, y, i, j, v):
        x[i:j] = v
        y[i:j] += x[i:j] * 2
        y[:j] -= 1
        return x, y
    x, y = np.zeros(n), np.arange(float(n))
    expected = f(x.copy(), y.copy(), i, j, v)
    got = xlac.compile(f)(x.copy(), y.copy(), *(np.int64(b) if b is not None else None for b in (i, j)), v)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(g), e)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from([-2.0, 0.0, 1.0, 3.0]), min_size=1, max_size=6),
       st.lists(st.sampled_from([-2.0, 0.0, 1.0, 3.0]), min_size=1, max_size=6))
def test_selections_by_two_traced_masks_pair_their_elements_as_numpy(a, b):
    def f(a, b):
        return (a[a > 0] * b[b < 1]).sum(), (a[a > 0] - b[b < 1]).max()
    a, b = np.array(a), np.array(b)
    try:
        expected = f(a, b)
    except ValueError:          # lengths that do not broadcast, or the max of nothing
        with pytest.raises(ValueError):
            xlac.compile(f)(a, b)
        return
    assert tuple(float(v) for v in xlac.compile(f)(a, b)) == expected


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=20), st.floats(-5, 5))
def test_traced_boolean_masks_in_reductions_match_numpy(values, threshold):
    def f(x, t):
        m = x > t
        x[x < -t] *= 0.5
        return x[m].sum(), x[m].mean(), np.count_nonzero(x[m] > 1), (x[m] * x[m]).sum(), x
    x = np.array(values)
    got = xlac.compile(f)(x.copy(), threshold)
    for g, e in zip(got, numpy_quietly(f, x.copy(), threshold)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_a_dynamic_value_leaves_at_its_length_and_cannot_give_its_shape_as_an_int_and_says_where():
    def returns(x, i):
        return x[:i]

    def asks(x, i):
        return x[:i].reshape(2, -1)          # would split the axis of unknown length
    np.testing.assert_array_equal(xlac.compile(returns)(np.arange(4.0), np.int64(3)), np.arange(3.0))
    with pytest.raises(xlac.TracerConversionError, match="length is known only when the program runs") as info:
        xlac.compile(asks)(np.arange(4.0), np.int64(2))
    assert f"test_dynamic_extents.py:{line_of(asks, 'reshape')}" in str(info.value)
    with pytest.raises(ValueError, match="could not be broadcast"):       # NumPy's error, after the call
        xlac.compile(lambda x: np.where(x > 0, x[x > 0], 0.0))(np.arange(3.0))


def test_a_loop_whose_body_takes_the_length_rolls_and_one_that_needs_it_as_an_int_unrolls_and_says_why():
    def prefix_lengths(x):
        total = 0
        for i in range(x.shape[0]):
            total += len(x[:i]) + x[:i].shape[0]        # the traced length
        return total

    def last_two_items(x):
        total = 0
        for i in range(x.shape[0]):
            total += len(list(x[:i][-2:]))             # Python's list needs the length as an int
        return total

    def prefix_items(x):
        total = 0
        for i in range(x.shape[0]):
            total += len(list(x[:i]))                  # every item of every prefix: 44,850 of them
        return total
    x = np.arange(300.0)
    rolled = xlac.compile(prefix_lengths, loops="roll")
    assert "while" in str(rolled.trace(x).ir())
    assert int(rolled(x)) == prefix_lengths(x)
    why = "cannot run with a traced index .* length is known only when the program runs"
    with pytest.warns(LoopUnrolledWarning, match=why):
        assert int(xlac.compile(last_two_items)(x)) == last_two_items(x)     # 300 iterations of a few ops
    with pytest.warns(LoopUnrolledWarning, match=why), pytest.raises(UnrolledTooLargeError, match=why) as raised:
        xlac.compile(prefix_items)(x)                  # unrolled, past max_unrolled_ops: stops, and says why
    assert f"test_dynamic_extents.py:{line_of(prefix_items, 'for i in')}" in str(raised.value)


def test_grad_of_a_masked_sum_is_masked_as_jax_gives_it(x64):
    def f(x, i, j):
        return (np.sin(x[i:j]) * x[i:j]).sum()

    def jax_f(x, i, j):
        positions = jnp.arange(x.shape[0])
        return jnp.where((positions >= i) & (positions < j), jnp.sin(x) * x, 0.0).sum()
    x = np.linspace(-1.0, 1.0, 9)
    got = xlac.grad(f)(x, np.int64(2), np.int64(7))
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.grad(jax_f)(jnp.asarray(x), 2, 7)), rtol=1e-14)
    batched = xlac.vmap(f, in_axes=(0, None, None))(np.stack([x, 2 * x]), np.int64(1), np.int64(5))
    np.testing.assert_allclose(np.asarray(batched), [f(x, 1, 5), f(2 * x, 1, 5)], rtol=1e-14)


# ---------------------------------------------------------------- loops whose slices depend on the index


EPS = np.finfo(np.float64).eps


def rolled(compiled, *args) -> bool:
    """Whether every loop of more than one iteration rolled (or, its iterations independent, vectorized)."""
    return all(d.decision in ("rolled", "vectorized") for d in compiled.trace(*args).loop_decisions
               if d.trips == "traced" or d.trips > 1)


def assert_within(got, expected, bound):
    """``|got - expected| <= bound`` elementwise: the bound is what the algorithm guarantees (sums taken in
    another order, by XLA here and by BLAS in NumPy)."""
    got, expected = np.asarray(got), np.asarray(expected)
    excess = np.abs(got - expected) - bound
    assert excess.max() <= 0, f"over the bound by {excess.max():.3g} at {np.unravel_index(excess.argmax(), excess.shape)}"


def test_a_triangular_solve_of_1000_rows_rolls_and_is_backward_stable():
    rng = np.random.default_rng(0)
    n = 1000
    L = np.tril(rng.normal(size=(n, n))) + n * np.eye(n)
    b = rng.normal(size=n)
    f = xlac.compile(forward_substitution)
    assert rolled(f, L, b)
    x = np.asarray(f(L, b))
    # forward substitution solves (L + dL) x = b with |dL| <= n eps |L| (Higham, Theorem 8.5)
    assert_within(L @ x, b, 2 * n * EPS * (np.abs(L) @ np.abs(x)) + n * EPS * np.abs(b))
    expected = forward_substitution(L, b)
    condition = np.linalg.cond(L, np.inf)
    assert np.abs(x - expected).max() <= 4 * n * EPS * condition * np.abs(expected).max()


@pytest.mark.parametrize("kernel", [lu_without_pivoting, cholesky_rows])
def test_lu_and_row_wise_cholesky_of_120_roll_and_match_numpy(kernel):
    rng = np.random.default_rng(1)
    n = 120
    a = rng.normal(size=(n, n))
    a = a @ a.T + n * np.eye(n)
    f = xlac.compile(kernel)
    assert rolled(f, a.copy())
    got, expected = np.asarray(f(a.copy())), kernel(a.copy())
    lower, upper = (np.tril(got, -1) + np.eye(n), np.triu(got)) if kernel is lu_without_pivoting else (got, got.T)
    # backward error of LU and Cholesky: |L U - A| <= c n eps |L| |U| (Higham, Theorems 9.3 and 10.3)
    assert_within(lower @ upper, a, 4 * n * EPS * (np.abs(lower) @ np.abs(upper)))
    assert np.linalg.norm(got - expected) <= 4 * n * EPS * np.linalg.cond(a) * np.linalg.norm(expected)


def test_gram_schmidt_and_a_triangular_rank_2k_update_roll_and_match_numpy():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(30, 20))
    q, r = (np.asarray(v) for v in xlac.compile(gram_schmidt)(a))
    expected_q, expected_r = gram_schmidt(a)
    assert_within(q @ r, a, 8 * 30 * EPS * (np.abs(q) @ np.abs(r)))
    tolerance = 8 * 30 * EPS * np.linalg.cond(a) ** 2
    assert np.abs(q - expected_q).max() <= tolerance and np.abs(r - expected_r).max() <= tolerance * np.abs(r).max()
    c, x, y = rng.normal(size=(70, 70)), rng.normal(size=(70, 5)), rng.normal(size=(70, 5))
    f = xlac.compile(syr2k_lower)
    assert rolled(f, c.copy(), x, y, 0.5)
    products = 0.5 * (np.abs(x) @ np.abs(y).T + np.abs(y) @ np.abs(x).T)
    assert_within(f(c.copy(), x, y, 0.5), syr2k_lower(c.copy(), x, y, 0.5), 16 * EPS * (products + np.abs(c)))


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2 ** 31), st.floats(0.0, 0.5))
def test_csr_rows_and_binned_masks_roll_and_match_numpy(seed, density):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((90, 40)) < density, rng.normal(size=(90, 40)), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int64)
    indices = np.nonzero(dense)[1].astype(np.int64)
    data, x = dense[dense != 0], rng.normal(size=40)
    f = xlac.compile(csr_matvec)
    assert rolled(f, data, indices, indptr, x)
    assert_within(f(data, indices, indptr, x), dense @ x, 2 * 40 * EPS * (np.abs(dense) @ np.abs(x)))
    radius, values, edges = rng.random(500) * 10, rng.normal(size=500), np.linspace(0.0, 10.0, 81)
    got = np.asarray(xlac.compile(binned_average)(radius, values, edges))
    expected = numpy_quietly(binned_average, radius, values, edges)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    assert_within(got[finite], expected[finite], 2 * 500 * EPS * np.abs(values).max())


@settings(max_examples=6, deadline=None)
@given(st.integers(-7, 7))
def test_einsum_over_slices_with_traced_bounds_matches_numpy(k):
    def f(A, x, k):
        return (np.einsum("ij,j->i", A[k:, k:], x[k:]).sum(), np.einsum("i,i->", x[k:], x[k:]),
                np.einsum("ij,ij->", A[:k, :k], A[:k, :k]))
    A, x = np.arange(25.0).reshape(5, 5), np.arange(5.0)
    assert tuple(float(v) for v in xlac.compile(f)(A, x, np.int64(k))) == f(A, x, k)


@settings(max_examples=8, deadline=None)
@given(st.integers(-7, 7), st.integers(-8, 8), st.integers(0, 41))
def test_argmax_and_argmin_over_two_dynamic_axes_count_as_numpy(i, j, threshold):
    A = np.random.default_rng(3).permutation(42).reshape(6, 7).astype(np.float64)

    def f(A, i, j, t):
        block = A[i:, :j]
        return block.argmax(), block.argmin(axis=0).sum(), block.argmax(axis=1).sum(), A[A >= t].argmax()
    block = A[i:, :j]
    if block.size == 0:
        with pytest.raises(ValueError, match="empty sequence"):
            xlac.compile(f)(A, np.int64(i), np.int64(j), float(threshold))
        return
    assert tuple(int(v) for v in xlac.compile(f)(A, np.int64(i), np.int64(j), float(threshold))) == \
        f(A, i, j, threshold)


def test_a_gather_by_a_dynamic_index_checks_numpys_bounds_only_where_it_has_elements():
    def f(x, indices, start, stop):
        return x[indices[start:stop]].sum()
    x, indices = np.arange(5.0), np.array([1, 4, -1, 9])
    assert float(xlac.compile(f)(x, indices, np.int64(0), np.int64(3))) == f(x, indices, 0, 3)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
        xlac.compile(f)(x, indices, np.int64(1), np.int64(4))
