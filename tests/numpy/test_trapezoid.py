"""np.trapezoid with an even spacing (one weighted reduction) against NumPy's sum of pairs."""
import hypothesis.extra.numpy as hnp
import ml_dtypes
import numpy as np
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

INEXACT = [np.dtype(d) for d in ("float16", "float32", "float64", "complex64", "complex128")]
SPACINGS = [1.0, 0.25, -3, np.float64(0.5), np.float32(2.0), np.int64(2), 1.5j, np.array(0.75)]
SPECIALS = np.array([np.nan, np.inf, -np.inf])


def _values(rng, shape, dtype, specials):
    y = rng.uniform(-3, 3, shape)
    if np.issubdtype(dtype, np.complexfloating):
        y = y + 1j * rng.uniform(-3, 3, shape)
    if specials and y.size:
        y = np.where(rng.random(shape) < 0.15, rng.choice(SPECIALS, shape), y)
    return y.astype(dtype)


def _check_against_numpy(got, y, dx, axis):
    """Same dtype and shape; NaN and infinities where NumPy has them; elsewhere within what summing n + 1
    terms in any order guarantees, (n + 2) eps |dx| sum |y| in the coarser of y's and the result's dtype
    (NumPy's result and this one are each that close to the exact integral)."""
    expected = np.asarray(np.trapezoid(y, dx=dx, axis=axis))
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    n = y.shape[axis]
    eps = max(float(ml_dtypes.finfo(d).eps) for d in (y.dtype, expected.dtype))     # NumPy adds pairs in y's dtype
    magnitude = np.abs(complex(dx)) * np.sum(np.abs(y.astype(np.complex128)), axis=axis)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(got[~finite], expected[~finite])
    error = np.abs(got[finite].astype(np.complex128) - expected[finite])
    assert np.all(error <= 2 * (n + 2) * eps * magnitude[finite])


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(INEXACT), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
       st.sampled_from(SPACINGS), st.booleans(), st.integers(0, 2 ** 32 - 1), st.data())
def test_evenly_spaced_matches_numpy(dtype, shape, dx, specials, seed, data):
    y = _values(np.random.default_rng(seed), shape, dtype, specials)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    with np.errstate(all="ignore"):
        _check_against_numpy(xnp.trapezoid(y, dx=dx, axis=axis), y, dx, axis)


def test_short_axes_give_zeros_even_for_infinities():
    for y in (np.array([np.inf]), np.array([np.nan], np.float32), np.zeros((3, 0)), np.zeros((0, 4))):
        assert_matches(xnp.trapezoid(y), np.trapezoid(y))


def test_infinities_at_the_ends_propagate_as_numpys_pairs():
    for y in ([np.inf, 1.0, 2.0], [1.0, 2.0, -np.inf], [np.inf, 1.0, -np.inf], [np.inf, -np.inf]):
        with np.errstate(all="ignore"):
            assert_matches(xnp.trapezoid(np.array(y)), np.trapezoid(np.array(y)))


def test_integers_and_booleans_add_their_pairs_in_their_own_dtype():
    wraps = np.array([100, 100, 100], np.int8)       # NumPy's 100 + 100 wraps to -56 in int8
    for y in (wraps, np.arange(5, dtype=np.uint8), np.array([True, True, False])):
        assert_matches(xnp.trapezoid(y), np.trapezoid(y))


def test_compiled_with_a_traced_spacing():
    y = _values(np.random.default_rng(0), (4, 7), np.dtype(np.float32), False)
    f = xlac.compile(lambda y, dx: np.trapezoid(y, dx=dx, axis=0))
    for dx in (np.float32(0.1), np.float64(0.1)):
        _check_against_numpy(f(y, dx), y, dx, 0)
