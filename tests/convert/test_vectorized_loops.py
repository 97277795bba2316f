"""xlac.convert.vectorized_loops: loops whose iterations are independent run at once (decision
'vectorized', no XLA loop in the program); loops that are not stay rolled, with the reason. The oracle: the
same Python on NumPy arrays, and jax.grad of the vmapped form for gradients."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from tests.numpy_kernels import binned_means, upper_gram, weighted_row_sums


def decisions(fn, *args, static_argnums=()):
    traced = xlac.compile(fn, static_argnums=static_argnums).trace(*args)
    return [(d.decision, d.reason) for d in traced.loop_decisions]


def stablehlo(fn, *args, static_argnums=()):
    return xlac.compile(fn, static_argnums=static_argnums).lower(*args).as_text()


def run(fn, *args, static_argnums=()):
    result = xlac.compile(fn, static_argnums=static_argnums)(*args)
    return np.asarray(result)


# ---------------------------------------------------------------- the issue's programs


@settings(max_examples=5)
@given(st.integers(1, 12), st.integers(40, 90), st.integers(0, 2 ** 16))
def test_an_upper_gram_matrix_row_by_row_equals_numpy(always, m, n, seed):
    d = np.random.default_rng(seed).normal(size=(m, n))
    np.testing.assert_allclose(run(upper_gram, d), upper_gram(d), rtol=1e-12, atol=1e-12)


@settings(max_examples=10)
@given(st.integers(30, 90), st.integers(1, 400), st.integers(0, 2 ** 16))
def test_binned_means_equal_numpy_empty_bins_included(always, nbins, n, seed):
    rng = np.random.default_rng(seed)
    values, labels = rng.normal(size=n), rng.integers(0, nbins, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # NumPy's mean of an empty bin: nan
        expected = binned_means(values, labels, nbins)
    np.testing.assert_allclose(run(binned_means, values, labels, nbins, static_argnums=2), expected, rtol=1e-12)


@settings(max_examples=10)
@given(st.integers(40, 120), st.integers(1, 9), st.integers(0, 2 ** 16))
def test_weighted_row_sums_equal_numpy(always, rows, cols, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(rows, cols)), rng.normal(size=cols)
    np.testing.assert_allclose(run(weighted_row_sums, x, w), weighted_row_sums(x, w), rtol=1e-12)


@pytest.mark.parametrize("fn, args, static", [
    (upper_gram, (np.ones((4, 60)),), ()),
    (binned_means, (np.arange(100.0), np.arange(100) % 50, 50), (2,)),
    (weighted_row_sums, (np.ones((64, 5)), np.ones(5)), ()),
])
def test_the_issues_loops_are_vectorized_and_their_program_has_no_loop(vectorize, fn, args, static):
    (decision, reason), = decisions(fn, *args, static_argnums=static)
    assert decision == "vectorized" and "independent" in reason
    assert "while" not in stablehlo(fn, *args, static_argnums=static)


def test_rows_and_columns_the_body_reads_by_the_index_are_slices_not_gathers(vectorize):
    for fn, args in [(weighted_row_sums, (np.ones((64, 5)), np.ones(5))), (upper_gram, (np.ones((4, 60)),))]:
        text = stablehlo(fn, *args)
        assert "while" not in text and "gather" not in text


def test_a_batch_too_large_stays_rolled_and_says_how_large(vectorize, monkeypatch, rng):
    from xlac.convert import vectorized_loops
    monkeypatch.setattr(vectorized_loops, "MAX_BATCHED_ELEMENTS", 1000)
    x, w = rng.normal(size=(64, 50)), rng.normal(size=50)
    (decision, reason), = decisions(weighted_row_sums, x, w)
    assert decision == "rolled" and "would hold 3150 elements in one value (more than 1000)" in reason
    np.testing.assert_allclose(run(weighted_row_sums, x, w), weighted_row_sums(x, w), rtol=1e-12)


# ---------------------------------------------------------------- forms that vectorize


def shifted_rows(x, w):
    out = np.zeros((x.shape[0] + 1, w.shape[1]))
    for i in range(x.shape[0]):
        out[i + 1, :] = x[i] @ w
    return out


def offset_range(x, w):
    out = np.full(x.shape[0], -1.0)
    for i in range(3, x.shape[0] - 2):
        out[i] += x[i] @ w
    return out


def two_outputs_and_a_branch(x, w):
    lengths, signs = np.zeros(x.shape[0]), np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        p = x[i] @ w
        if p > 0:
            signs[i] = 1.0
        else:
            signs[i] = -1.0
        lengths[i] = np.sqrt(p * p + 1.0)
    return lengths, signs


def columns_and_a_diagonal(x, w):
    out = np.zeros((x.shape[1] + 2, x.shape[0]))
    for j in range(x.shape[0]):
        out[1:4, j] = x[j] * (x[j] @ w)
        out[0, j] = -1.0
        out[-1, j] = out[:, j].sum()
    return out


def over_rows(x, w):
    out = np.zeros(x.shape[0])
    for i, row in enumerate(x):
        out[i] = row @ w
    return out


def into_an_argument(out, x, w):
    for i in range(x.shape[0]):
        out[i] = x[i] @ w
    return out.sum()


@pytest.mark.parametrize("fn", [shifted_rows, offset_range, two_outputs_and_a_branch, columns_and_a_diagonal,
                                over_rows])
def test_writes_at_the_index_plus_a_constant_branches_and_rows_vectorize(vectorize, fn, rng):
    x = rng.normal(size=(50, 3))
    w = rng.normal(size=(3, 2)) if fn is shifted_rows else rng.normal(size=3)
    assert [d for d, _ in decisions(fn, x, w)] == ["vectorized"]
    got, expected = xlac.compile(fn)(x, w), fn(x, w)
    for g, e in zip(_as_tuple(got), _as_tuple(expected)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def test_a_loop_writing_an_argument_vectorizes_and_writes_it_back(vectorize, rng):
    x, w = rng.normal(size=(40, 3)), rng.normal(size=3)
    out, expected_out = np.zeros(40), np.zeros(40)
    assert [d for d, _ in decisions(into_an_argument, out, x, w)] == ["vectorized"]
    total = xlac.compile(into_an_argument)(out, x, w)
    np.testing.assert_allclose(float(total), into_an_argument(expected_out, x, w), rtol=1e-12)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12)


def test_a_dynamic_extent_product_masks_after_the_contraction_where_it_may(vectorize):
    d = np.ones((3, 50))
    d[1, 7] = np.inf                    # only columns < 8 see it: in g[i, i:] for i <= 7, and nowhere else
    with np.errstate(invalid="ignore"):
        expected = upper_gram(d)
    np.testing.assert_array_equal(run(upper_gram, d), expected)


# ---------------------------------------------------------------- loops that must stay rolled


def running_total(x):
    out, t = np.zeros(x.shape[0]), 0.0
    for i in range(x.shape[0]):
        t += x[i].sum()
        out[i] = t
    return out


def reads_previous_row(x):
    out = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i].sum()
    return out


def copies_forward(x):
    out = np.zeros(x.shape[0] + 1)
    out[:2] = x[0, :2]
    for i in range(x.shape[0]):
        out[i + 1] = out[i]
    return out


def writes_a_fixed_place(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[0] += x[i].sum()
    return out


def reads_the_whole_array(x):
    out = np.ones(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = out.sum() + x[i, 0]
    return out


def reads_through_a_view(x):
    out = np.ones(x.shape[0])
    previous = out[:]
    for i in range(1, x.shape[0]):
        out[i] = previous[i - 1] * x[i, 0]
    return out


def gathers_by_data(x, idx):
    out = np.zeros(idx.shape[0])
    for i in range(idx.shape[0]):
        out[i] = x[idx[i]].sum()
    return out


def strided_rows(x):
    out = np.zeros(x.shape[0])
    for i in range(0, x.shape[0], 2):
        out[i] = x[i].sum()
    return out


@pytest.mark.parametrize("fn, why", [
    (running_total, "it carries t"),
    (reads_previous_row, "reads an array the loop writes"),
    (copies_forward, "reads an array the loop writes"),
    (writes_a_fixed_place, "other than the loop's index plus a constant"),
    (reads_the_whole_array, "reads an array the loop writes"),
    (reads_through_a_view, "reads an array the loop writes"),
])
def test_dependent_iterations_stay_rolled_with_the_reason_and_equal_numpy(vectorize, fn, why, rng):
    x = rng.normal(size=(60, 4))
    (decision, reason), = decisions(fn, x)
    assert decision == "rolled" and "not vectorized: " in reason and why in reason
    np.testing.assert_allclose(run(fn, x), fn(x), rtol=1e-12)


def adds_the_other_argument(a, b, x, w):
    for i in range(x.shape[0]):
        a[i] = x[i] @ w + b[i]
    return a


def test_arguments_sharing_memory_give_numpys_recurrence(vectorize, rng):
    x, w = rng.normal(size=(40, 3)), rng.normal(size=3)
    a, expected = np.zeros(41), np.zeros(41)
    adds_the_other_argument(expected[1:], expected[:-1], x, w)     # a[i + 1] = p[i] + a[i]: a running sum
    xlac.compile(adds_the_other_argument)(a[1:], a[:-1], x, w)
    np.testing.assert_allclose(a, expected, rtol=1e-12)
    a, b = np.zeros(40), np.ones(40)                                # apart, its iterations are independent
    assert [d for d, _ in decisions(adds_the_other_argument, a, b, x, w)] == ["vectorized"]
    np.testing.assert_allclose(run(adds_the_other_argument, a, b, x, w), x @ w + 1, rtol=1e-12)


def test_a_body_with_run_time_checks_stays_rolled_and_still_raises_numpys_error(vectorize, rng):
    x, idx = rng.normal(size=(10, 3)), rng.integers(0, 10, 60)
    (decision, reason), = decisions(gathers_by_data, x, idx)
    assert decision == "rolled" and "checks indices" in reason
    np.testing.assert_allclose(run(gathers_by_data, x, idx), gathers_by_data(x, idx), rtol=1e-12)
    idx[30] = 10
    with pytest.raises(IndexError):
        run(gathers_by_data, x, idx)


def test_a_strided_range_stays_rolled(vectorize, rng):
    x = rng.normal(size=(120, 3))
    (decision, reason), = decisions(strided_rows, x)
    assert decision == "rolled" and "plus a constant" in reason
    np.testing.assert_allclose(run(strided_rows, x), strided_rows(x), rtol=1e-12)


# ---------------------------------------------------------------- policy


def test_the_off_switch_rolls_and_says_so(vectorize, rng):
    vectorize("never")
    (decision, reason), = decisions(weighted_row_sums, rng.normal(size=(64, 5)), np.ones(5))
    assert decision == "rolled" and "vectorize_loops is 'never'" in reason


def test_on_the_cpu_auto_vectorizes_only_bodies_with_a_contraction(vectorize, rng):
    vectorize("auto")
    x, w = rng.normal(size=(64, 5)), rng.normal(size=5)
    (decision, reason), = decisions(weighted_row_sums, x, w)
    assert decision == "rolled" and "without a contraction" in reason
    assert [d for d, _ in decisions(over_rows, x, w)] == ["vectorized"]


def test_an_unknown_policy_is_an_error_naming_the_setting(vectorize, rng):
    vectorize("sometimes")
    with pytest.raises(ValueError, match="vectorize_loops must be 'auto', 'always' or 'never', got "
                                         "'sometimes'(.|\n)*numpy_kernels.py"):
        decisions(weighted_row_sums, rng.normal(size=(64, 5)), np.ones(5))


def test_a_loop_the_user_asks_to_roll_is_not_vectorized(vectorize, rng):
    traced = xlac.compile(weighted_row_sums, loops="roll").trace(rng.normal(size=(64, 5)), np.ones(5))
    decision, = traced.loop_decisions
    assert decision.decision == "rolled"


# ---------------------------------------------------------------- gradients


def projected_norms(x, w):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i] @ w) ** 2
    return out.sum()


def test_the_gradient_through_a_vectorized_loop_equals_jax_grad_of_the_vmapped_form(vectorize, rng, x64):
    x, w = rng.normal(size=(48, 4)), rng.normal(size=4)
    assert [d for d, _ in decisions(projected_norms, x, w)] == ["vectorized"]

    def reference(x, w):
        return jax.vmap(lambda row: jnp.tanh(row @ w) ** 2)(x).sum()
    got = xlac.grad(projected_norms, argnums=(0, 1))(x, w)
    expected = jax.grad(reference, argnums=(0, 1))(x, w)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10)
