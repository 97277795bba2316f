"""Reductions of a boolean-masked selection (``values[mask].mean()``, ``np.mean(x, where=mask)``) reduce the
masked data in place: no compaction of the selected elements, and a mean's sum and count in one reduce
(``reduce_many``). Values and dtypes against NumPy; gradients and batching against JAX."""
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import binned_average

pytestmark = pytest.mark.usefixtures("x64_module")      # JAX in float64, this module only

REDUCTIONS = {
    "sum": lambda s: s.sum(), "prod": lambda s: s.prod(), "mean": lambda s: s.mean(),
    "max": lambda s: s.max(), "min": lambda s: s.min(), "any": lambda s: s.any(), "all": lambda s: s.all(),
    "var": lambda s: s.var(), "std": lambda s: s.std(), "var_ddof1": lambda s: np.var(s, ddof=1),
    "count": lambda s: np.count_nonzero(s), "size": lambda s: s.size + 0,
}
COMPACTION = ("scatter", "sort", "gather", "reduce-window", "cumsum")


def numpy_quietly(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's mean of nothing: nan, with a warning
        return fn(*args)


@pytest.mark.usefixtures("xla_defaults")
def test_a_masked_mean_is_one_reduce_without_compaction():
    def masked_mean(values, radius, r1, r2):
        return values[(r1 <= radius) & (radius < r2)].mean()
    rng = np.random.default_rng(0)
    args = (rng.normal(size=1000), rng.random(1000) * 10, 2.0, 3.5)
    compiled = xlac.compile(masked_mean)
    np.testing.assert_allclose(np.asarray(compiled(*args)), masked_mean(*args), rtol=1e-13)
    stablehlo = compiled.lower(*args).as_text()
    assert stablehlo.count('"stablehlo.reduce"') == 1            # the sum and the count together
    optimized = compiled.lower(*args).compile().as_text()
    assert not [op for op in COMPACTION if f" {op}(" in optimized]
    reduces = [line for line in optimized.splitlines() if " reduce(" in line]
    assert len(reduces) == 1 and "(f64[], s64[]) reduce(" in reduces[0]     # the masked sum, the count


@pytest.mark.usefixtures("xla_defaults")
def test_the_binned_average_loop_body_reduces_each_bin_in_one_pass():
    rng = np.random.default_rng(1)
    args = (rng.random(500) * 10, rng.normal(size=500), np.linspace(0.0, 10.0, 11))
    compiled = xlac.compile(binned_average)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # every bin holds elements: no mean of nothing
        expected = binned_average(*args)
    np.testing.assert_allclose(np.asarray(compiled(*args)), expected, rtol=1e-13)
    reduces = [line for line in compiled.lower(*args).as_text().splitlines() if '"stablehlo.reduce"' in line]
    assert reduces and all(re.search(r'%\d+:2 = "stablehlo.reduce"', line) for line in reduces)   # sum, count
    optimized = compiled.lower(*args).compile().as_text()
    assert not [op for op in COMPACTION if f" {op}(" in optimized]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(REDUCTIONS)), st.sampled_from(["float64", "float32", "int32", "bool"]),
       st.integers(0, 12), st.data())
def test_a_reduction_of_a_masked_selection_is_numpy_s(kind, dtype, n, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    values = (rng.normal(size=n) * 4).astype(dtype)
    mask = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)

    def f(values, mask):
        return REDUCTIONS[kind](values[mask])
    expected = np.asarray(numpy_quietly(f, values, mask)) if mask.any() or kind not in ("max", "min") else None
    compiled = xlac.compile(f)
    if expected is None:
        operation = "maximum" if kind == "max" else "minimum"
        with pytest.raises(ValueError, match=f"zero-size array to reduction operation {operation}") as raised:
            compiled(values, mask)
        assert f"test_masked_reductions.py:{REDUCTIONS[kind].__code__.co_firstlineno}" in str(raised.value)
        return
    result = np.asarray(compiled(values, mask))
    assert result.dtype == expected.dtype
    rtol = 1e-5 if np.result_type(expected.dtype, np.float32) == np.float32 else 1e-12
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["float64", "float32", "float16", "complex128", "int64"]),
       st.sampled_from([None, 0, 1, (0, 1)]), st.integers(0, 2), st.data())
def test_mean_and_var_with_where_are_numpy_s(dtype, axis, ddof, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = (rng.normal(size=(3, 4)) * 3).astype(dtype)
    mask = rng.random((3, 4)) < data.draw(st.sampled_from([0.0, 0.3, 0.8]))

    def f(x, mask):
        return (np.mean(x, axis=axis, where=mask), np.var(x, axis=axis, ddof=ddof, where=mask),
                np.std(x, axis=axis, where=mask, keepdims=True))
    expected = numpy_quietly(f, x, mask)
    rtol = 1e-2 if dtype == "float16" else 1e-5 if dtype == "float32" else 1e-12
    for result, want in zip(xlac.compile(f)(x, mask), expected):
        assert np.asarray(result).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(result), want, rtol=rtol, atol=rtol)


def test_a_masked_mean_differentiates_and_batches_as_jax_s():
    rng = np.random.default_rng(2)
    x, mask = rng.normal(size=(4, 6)), rng.random((4, 6)) < 0.5
    mask[:, 0] = True

    def loss(x):
        return np.mean(x * x, axis=1, where=mask).sum() + np.var(x, where=mask)

    def loss_jax(x):
        return jnp.mean(x * x, axis=1, where=mask).sum() + jnp.var(x, where=mask)
    np.testing.assert_allclose(np.asarray(xlac.grad(loss)(x)), jax.grad(loss_jax)(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xlac.vmap(lambda row, m: np.mean(row, where=m))(x, mask)),
                               jax.vmap(lambda row, m: jnp.mean(row, where=m))(x, mask), rtol=1e-12)


def test_the_binned_average_vectorized_is_numpy_s(monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "always")
    rng = np.random.default_rng(3)
    args = (rng.random(300) * 10, rng.normal(size=300), np.linspace(0.0, 12.0, 25))    # the last bins are empty
    compiled = xlac.compile(binned_average)
    np.testing.assert_allclose(np.asarray(compiled(*args)), numpy_quietly(binned_average, *args), rtol=1e-13)
    assert {d.decision for d in compiled.trace(*args).loop_decisions} == {"vectorized"}
