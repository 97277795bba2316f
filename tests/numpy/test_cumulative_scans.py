"""Running sums, products, maxima and minima (np.cumsum, np.cumprod, np.maximum.accumulate, ...): results and
dtypes against NumPy, derivatives against jax's cumprod/cummax/cummin, vmap against jax.vmap, and the
compiled form: one reduce_window, as jax lowers them, with no log-step scan around it."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.lowering import emitters
from xlac.differentiate import grad, jvp
from tests.tolerance import assert_matches

SCANS = {
    "cumsum": lambda v, axis: np.cumsum(v, axis=axis),
    "cumprod": lambda v, axis: np.cumprod(v, axis=axis),
    "nancumsum": lambda v, axis: np.nancumsum(v, axis=axis),
    "nancumprod": lambda v, axis: np.nancumprod(v, axis=axis),
    "maximum.accumulate": lambda v, axis: np.maximum.accumulate(v, axis=axis),
    "minimum.accumulate": lambda v, axis: np.minimum.accumulate(v, axis=axis),
}
DTYPES = ["float32", "float64", "int32", "int64", "bool", "complex64"]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0])


def _values(rng, shape, dtype):
    """Small values with repeats; for floats NaN, the infinities and zeros among them."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    x = rng.integers(-3, 4, shape).astype(np.float64) / (1 if dtype.kind in "iu" else 2)
    if dtype.kind in "fc":
        x = np.where(rng.random(shape) < 0.25, rng.choice(SPECIALS, shape), x)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-2, 3, shape)
    return x.astype(dtype)


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(SCANS)), dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), data=st.data())
def test_scans_match_numpy(name, dtype, shape, data):
    _check_scan(name, dtype, shape, data)


def _check_scan(name, dtype, shape, data):
    if dtype == "complex64" and name.endswith("accumulate"):
        return                                  # xlac orders no complex numbers
    _check_scan_at(name, dtype, shape, data.draw(st.integers(-len(shape), len(shape) - 1), label="axis"), data)


def _check_scan_at(name, dtype, shape, axis, data):
    x = _values(np.random.default_rng(data.draw(st.integers(0, 2 ** 16))), shape, dtype)
    scan = SCANS[name]
    with np.errstate(invalid="ignore", over="ignore"):
        expected = scan(x, axis)
    assert_matches(xlac.compile(lambda v: scan(v, axis))(x), expected)


def test_flattened_scans_match_numpy():
    x = _values(np.random.default_rng(0), (3, 4), "float32")
    for name in ("cumsum", "cumprod", "nancumprod"):
        assert_matches(xlac.compile(lambda v: SCANS[name](v, None))(x), SCANS[name](x, None))


def test_maxima_carry_nan_to_the_end_like_numpy():
    x = np.array([[1.0, np.nan, 3.0, -np.inf], [-np.inf, 2.0, np.inf, 0.0]], np.float32)
    for name in ("maximum.accumulate", "minimum.accumulate"):
        for axis in (0, 1):
            assert_matches(xlac.compile(lambda v: SCANS[name](v, axis))(x), SCANS[name](x, axis))


# ---------------------------------------------------------------- derivatives and vmap, against jax

JAX_SCANS = {"cumprod": lambda v, axis: jnp.cumprod(v, axis=axis),
             "maximum.accumulate": lambda v, axis: jax.lax.cummax(v, axis=axis),
             "minimum.accumulate": lambda v, axis: jax.lax.cummin(v, axis=axis),
             "cumsum": lambda v, axis: jnp.cumsum(v, axis=axis)}
TIES_AND_ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, 3.0, -1.0, 3.0, 2.0],
                           [1.0, 1.0, 1.0, 1.0, -2.0, -2.0, 0.5, 4.0]], np.float32)
WEIGHTS = np.arange(1, TIES_AND_ZEROS.size + 1, dtype=np.float32).reshape(TIES_AND_ZEROS.shape)


@pytest.mark.parametrize("name", sorted(JAX_SCANS))
@pytest.mark.parametrize("axis", [0, 1])
def test_grad_and_jvp_match_jax_at_ties_and_zeros(name, axis):
    scan, jax_scan = SCANS[name], JAX_SCANS[name]
    got = grad(lambda v: np.sum(scan(v, axis) * WEIGHTS))(TIES_AND_ZEROS)
    expected = jax.grad(lambda v: jnp.sum(jax_scan(v, axis) * WEIGHTS))(TIES_AND_ZEROS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)
    _, got_tangent = jvp(lambda v: scan(v, axis), (TIES_AND_ZEROS,), (WEIGHTS,))
    _, expected_tangent = jax.jvp(lambda v: jax_scan(v, axis), (TIES_AND_ZEROS,), (WEIGHTS,))
    np.testing.assert_allclose(np.asarray(got_tangent), np.asarray(expected_tangent), rtol=1e-6)


def test_second_derivative_of_a_running_product_matches_jax():
    x = np.array([1.5, 0.0, 2.0, -0.5], np.float32)
    got = xlac.hessian(lambda v: np.sum(np.cumprod(v)))(x)
    expected = jax.hessian(lambda v: jnp.sum(jnp.cumprod(v)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(JAX_SCANS))
def test_vmap_matches_jax(name):
    scan, jax_scan = SCANS[name], JAX_SCANS[name]
    got = xlac.vmap(lambda v: scan(v, 0), in_axes=1)(TIES_AND_ZEROS)
    expected = jax.vmap(lambda v: jax_scan(v, 0), in_axes=1)(TIES_AND_ZEROS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


# ---------------------------------------------------------------- the compiled form


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumprod", "maximum.accumulate", "minimum.accumulate"])
def test_a_scan_is_one_loop_on_cpu_and_one_reduce_window_elsewhere(name, monkeypatch):
    x = np.ones((16, 64), np.float32)
    text = xlac.compile(lambda v: SCANS[name](v, 1)).lower(x).as_text()
    assert text.count("stablehlo.while") == 1 and "stablehlo.reduce_window" not in text
    monkeypatch.setattr(emitters, "scans_loop", lambda w: False)
    text = xlac.compile(lambda v: SCANS[name](v, 1)).lower(x).as_text()
    assert text.count("stablehlo.reduce_window") == 1
    assert "stablehlo.slice" not in text and "stablehlo.pad" not in text and "stablehlo.while" not in text


@settings(max_examples=8, deadline=None)
@given(name=st.sampled_from(["maximum.accumulate", "minimum.accumulate", "cumsum", "cumprod"]),
       dtype=st.sampled_from(["float64", "int64", "int32", "bool"]),
       length=st.integers(emitters._BLOCKED_SCAN_LENGTH, 3 * emitters._BLOCKED_SCAN_LENGTH), data=st.data())
def test_long_scans_in_blocks_match_numpy(name, dtype, length, data):
    """Exact running ops (maxima, minima, integer sums and products) on a long axis run in blocks of about
    sqrt(n): a loop over positions, one over block totals, one combine; floats sums keep NumPy's loop."""
    if dtype == "float64" and name in ("cumsum", "cumprod"):
        return
    shape = data.draw(st.sampled_from([(length,), (2, length), (length, 3)]), label="shape")
    axis = int(np.argmax(shape))
    _check_scan_at(name, dtype, shape, axis, data)


def test_a_long_running_minimum_is_two_short_loops():
    text = xlac.compile(lambda v: np.minimum.accumulate(v[::-1])).lower(np.ones(20146, np.int64)).as_text()
    assert text.count("stablehlo.while") == 2


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(sorted(SCANS)), dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), data=st.data())
def test_scans_as_reduce_windows_match_numpy(name, dtype, shape, data):
    """The lowering of devices other than CPUs (jax's), run on the CPU."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(emitters, "scans_loop", lambda w: False)
        _check_scan(name, dtype, shape, data)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_float_sums_and_products_on_cpu_are_numpys_to_the_bit(axis):
    """A loop adds (multiplies) in NumPy's order, so the rounding is NumPy's."""
    x = np.random.default_rng(5).standard_normal((7, 50, 9))
    for name in ("cumsum", "cumprod"):
        np.testing.assert_array_equal(np.asarray(xlac.compile(lambda v: SCANS[name](v, axis))(x)), SCANS[name](x, axis))

