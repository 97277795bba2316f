"""xlac.convert.accumulators: a loop whose only carried values are accumulators (``acc += f(i)``, ``*=``,
``-=``, ``max``/``min``, ``np.maximum``/``np.minimum``) runs at once, its terms reduced after the batch
(decision 'vectorized', no XLA loop in the program); one that breaks or reads its accumulator stays rolled.
The oracle: the same Python run by NumPy, values and dtypes."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from tests.numpy_kernels import diagonal_tanh_sum, rows_and_a_total


def decisions(fn, *args):
    return [(d.decision, d.reason) for d in xlac.compile(fn).trace(*args).loop_decisions]


def run(fn, *args):
    return np.asarray(xlac.compile(fn)(*args))


def numpy_result(fn, *args):
    """``fn`` run by NumPy, its integer overflows wrapping silently as they do in the compiled program."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(*args))


def assert_numpys(got, expected, dtype_tolerance):
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    rtol = dtype_tolerance.get(expected.dtype.name, 0)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


FLOAT_TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


# ---------------------------------------------------------------- accumulators, against NumPy


def product_of_ratios(x):
    acc = 1.0
    for i in range(x.shape[0]):
        acc *= 1 + x[i] / 64
    return acc


def subtracted_squares(x):
    acc = 10.0
    for i in range(x.shape[0]):
        acc -= x[i] * x[i]
    return acc


def builtin_max(x):
    best = -np.inf
    for i in range(x.shape[0]):
        best = max(best, x[i] * 2)
    return best


def builtin_min(x):
    best = np.inf
    for i in range(x.shape[0]):
        best = min(best, np.sin(x[i]))
    return best


def numpy_maximum(x):
    best = x[0]
    for i in range(x.shape[0]):
        best = np.maximum(best, np.abs(x[i]))
    return best


def numpy_minimum(x):
    best = x[0]
    for i in range(x.shape[0]):
        best = np.minimum(best, x[i] - 1)
    return best


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([diagonal_tanh_sum, product_of_ratios, subtracted_squares, builtin_max, builtin_min,
                        numpy_maximum, numpy_minimum]),
       st.integers(64, 100), st.sampled_from(["float32", "float64"]), st.integers(0, 2 ** 16))
def test_float_accumulators_equal_numpy_in_value_and_dtype(always, fn, n, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, n) if fn is diagonal_tanh_sum else n).astype(dtype)
    (decision, reason), = decisions(fn, x)
    assert decision == "vectorized" and "then reduced" in reason
    assert_numpys(run(fn, x), numpy_result(fn, x), FLOAT_TOLERANCE)


def integer_sum(x):
    acc = 0
    for i in range(x.shape[0]):
        acc += x[i] * 3 + 1
    return acc


def integer_product(x):
    acc = x[0]
    for i in range(x.shape[0]):
        acc *= x[i] | 1
    return acc


def integer_max(x):
    best = x[0]
    for i in range(x.shape[0]):
        best = max(best, x[i] ^ 5)
    return best


def bits_set_anywhere(x):
    acc = x[0] & 0
    for i in range(x.shape[0]):
        acc |= x[i] & 0x0F
    return acc


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([integer_sum, integer_product, integer_max, bits_set_anywhere]), st.integers(64, 100),
       st.sampled_from(["int8", "uint8", "int32", "int64"]), st.integers(0, 2 ** 16))
def test_integer_accumulators_are_exact_and_wrap_as_numpy(always, fn, n, dtype, seed):
    info = np.iinfo(dtype)
    x = np.random.default_rng(seed).integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    (decision, _), = decisions(fn, x)
    assert decision == "vectorized"
    assert_numpys(run(fn, x), numpy_result(fn, x), {})


def python_float_plus_terms(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


def python_int_plus_terms(x):
    acc = 0
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


def float64_scalar_plus_terms(x):
    acc = np.float64(0.5)
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


def float32_scalar_plus_terms(x):
    acc = np.float32(0.5)
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


@pytest.mark.parametrize("fn", [python_float_plus_terms, python_int_plus_terms, float64_scalar_plus_terms,
                                float32_scalar_plus_terms])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_the_accumulators_dtype_is_numpys_promotion_of_its_start_and_terms(vectorize, fn, dtype, rng):
    x = rng.normal(size=100).astype(dtype) if dtype != "int16" else rng.integers(-9, 9, 100).astype(dtype)
    assert [d for d, _ in decisions(fn, x)] == ["vectorized"]
    assert_numpys(run(fn, x), numpy_result(fn, x), {**FLOAT_TOLERANCE, "float32": 1e-5})


def sum_of_the_index(n):
    acc = 0.0
    for i in range(n):
        acc += i * 0.5
    return acc


def test_terms_of_the_index_alone_and_of_invariants_are_reduced(vectorize):
    assert float(xlac.compile(sum_of_the_index, static_argnums=0)(300)) == sum_of_the_index(300)

    def constant_term(x):
        acc = 0.0
        for _ in range(300):
            acc += x.sum()
        return acc
    x = np.arange(4.0)
    assert [d for d, _ in decisions(constant_term, x)] == ["vectorized"]
    np.testing.assert_allclose(run(constant_term, x), constant_term(x), rtol=1e-13)


def nan_terms(x):
    best, largest, total = -np.inf, x[1], 0.0
    for i in range(x.shape[0]):
        best = max(best, x[i])                    # Python's max: a NaN term never wins
        largest = np.maximum(largest, x[i])       # NumPy's: a NaN wins
        total += x[i] * 0
    return best, largest, total


def test_nans_take_the_loops_meaning_python_max_skips_them_numpy_maximum_keeps_them(vectorize, rng):
    x = rng.normal(size=120)
    x[[3, 50]] = np.nan
    (decision, reason), = decisions(nan_terms, x)
    assert decision == "vectorized" and all(f"{name}, " in reason + ", " for name in
                                            ["best (max)", "largest (max)", "total (sum)"])
    got, expected = xlac.compile(nan_terms)(x), nan_terms(x)
    assert float(got[0]) == expected[0] == np.nanmax(x)
    assert np.isnan(float(got[1])) and np.isnan(expected[1]) and np.isnan(float(got[2]))



def test_an_accumulator_beside_row_writes_vectorizes(vectorize, rng):
    x = rng.normal(size=(80, 5))
    (decision, reason), = decisions(rows_and_a_total, x)
    assert decision == "vectorized" and "total (sum)" in reason
    (out, total), (expected_out, expected_total) = xlac.compile(rows_and_a_total)(x), rows_and_a_total(x)
    np.testing.assert_allclose(np.asarray(out), expected_out, rtol=1e-13)
    np.testing.assert_allclose(float(total), expected_total, rtol=1e-12)


def column_totals(x):
    total = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        total += np.tanh(x[i])                    # in place: NumPy writes into total's memory
    return total


def adds_into_the_argument(total, x):
    for i in range(x.shape[0]):
        total += x[i] * 2
    return total.sum()


def test_an_array_accumulated_in_place_is_reduced_and_an_argument_is_written_back(vectorize, rng):
    x = rng.normal(size=(90, 4))
    (decision, reason), = decisions(column_totals, x)
    assert decision == "vectorized" and reason.endswith("total (sum)")
    np.testing.assert_allclose(run(column_totals, x), column_totals(x), rtol=1e-12)
    total, expected_total = np.arange(4.0), np.arange(4.0)
    got = xlac.compile(adds_into_the_argument)(total, x)
    expected = adds_into_the_argument(expected_total, x)
    np.testing.assert_allclose(float(got), expected, rtol=1e-12)
    np.testing.assert_allclose(total, expected_total, rtol=1e-12)


# ---------------------------------------------------------------- the program, and the report


@pytest.mark.usefixtures("xla_defaults")
def test_the_carried_scalar_kernel_has_no_loop_and_says_it_reduced(vectorize, rng):
    a = rng.normal(size=(1000, 1000))
    (decision, reason), = decisions(diagonal_tanh_sum, a)
    assert decision == "vectorized" and reason.endswith("accumulated, then reduced: acc (sum)")
    compiled = xlac.compile(diagonal_tanh_sum)
    assert "while" not in compiled.lower(a).as_text()
    assert "while" not in compiled.lower(a).compile().as_text()
    np.testing.assert_allclose(float(compiled(a)), diagonal_tanh_sum(a), rtol=1e-12)


def projected_total(x, w):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += np.tanh(x[i] @ w)
    return acc


def test_on_the_cpu_auto_vectorizes_accumulators_of_contractions_only(vectorize, rng):
    vectorize("auto")
    a = rng.normal(size=(100, 100))
    (decision, reason), = decisions(diagonal_tanh_sum, a)
    assert decision == "rolled" and "without a contraction" in reason
    x, w = rng.normal(size=(100, 8)), rng.normal(size=8)
    (decision, reason), = decisions(projected_total, x, w)
    assert decision == "vectorized" and reason.endswith("acc (sum)")
    np.testing.assert_allclose(run(projected_total, x, w), projected_total(x, w), rtol=1e-12)


def test_the_off_switch_keeps_the_loop_rolled_in_the_loops_order(vectorize, rng):
    vectorize("never")
    x = rng.normal(size=1000) * 10.0 ** rng.integers(-8, 8, 1000)
    (decision, reason), = decisions(python_float_plus_terms, x)
    assert decision == "rolled" and "vectorize_loops is 'never'" in reason
    assert "while" in xlac.compile(python_float_plus_terms).lower(x).as_text()
    assert float(run(python_float_plus_terms, x)) == python_float_plus_terms(x)    # the same additions, in order


# ---------------------------------------------------------------- loops that stay rolled


def stops_early(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 2.0:
            break
        acc += x[i]
    return acc


def reads_the_accumulator(x):
    acc = 1.0
    for i in range(x.shape[0]):
        acc += x[i] * acc
    return acc


def writes_the_running_value(x):
    out, acc = np.zeros_like(x), 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        out[i] = acc
    return out


def decays(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = 0.5 * acc + x[i]
    return acc


def max_with_the_term_first(x):
    best = -np.inf
    for i in range(x.shape[0]):
        best = max(x[i], best)                    # a NaN term wins, until the next term replaces it
    return best


def divides(x):
    acc = 1.0
    for i in range(x.shape[0]):
        acc /= x[i]
    return acc


@pytest.mark.parametrize("fn, why", [
    (stops_early, "it may break"),
    (reads_the_accumulator, "it carries acc"),
    (writes_the_running_value, "it carries acc"),
    (decays, "it carries acc"),
    (max_with_the_term_first, "it carries best"),
    (divides, "it carries acc"),
])
def test_a_loop_that_breaks_or_reads_its_accumulator_stays_rolled_and_equals_numpy(vectorize, fn, why, rng):
    x = rng.uniform(0.5, 2.5, size=90)
    x[[10, 60]] = np.nan
    (decision, reason), = decisions(fn, x)
    assert decision == "rolled" and "not vectorized: " in reason and why in reason
    np.testing.assert_allclose(run(fn, x), numpy_result(fn, x), rtol=1e-12)


def sums_by_index(x, idx):
    acc = 0.0
    for i in range(idx.shape[0]):
        acc += x[idx[i]]
    return acc


def test_a_body_that_checks_its_indices_stays_rolled_and_raises_numpys_error(vectorize, rng):
    x, idx = rng.normal(size=10), rng.integers(0, 10, 80)
    (decision, reason), = decisions(sums_by_index, x, idx)
    assert decision == "rolled" and "checks indices" in reason
    np.testing.assert_allclose(run(sums_by_index, x, idx), sums_by_index(x, idx), rtol=1e-12)
    idx[40] = 10
    with pytest.raises(IndexError, match="index 10 is out of bounds(.|\n)*test_vectorized_reductions.py"):
        run(sums_by_index, x, idx)


# ---------------------------------------------------------------- gradients


def damped_product(w, x):
    acc = 1.0
    for i in range(x.shape[0]):
        acc *= 1 + np.tanh(w * x[i]) / 4
    return acc


def test_the_gradient_through_a_reduced_product_equals_jax_grad_of_the_loop(vectorize, x64):
    x = np.linspace(-1.0, 1.0, 100)
    assert [d for d, _ in decisions(damped_product, 0.3, x)] == ["vectorized"]

    def reference(w, x):
        return jax.lax.fori_loop(0, x.shape[0], lambda i, acc: acc * (1 + jnp.tanh(w * x[i]) / 4), 1.0)
    expected = jax.grad(reference)(0.3, jnp.asarray(x))
    assert float(xlac.grad(damped_product)(0.3, x)) == pytest.approx(float(expected), rel=1e-12)
