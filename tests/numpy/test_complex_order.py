"""max, min, argmax, argmin, their NaN-skipping forms and running forms of complex arrays in NumPy's order (real part, then imaginary part; a NaN in
either part wins; the first of equal elements wins), compiled and eager, against NumPy bit for bit."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.numpy as xnp

PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if want.dtype.kind == "c" else ((got, want),):
        np.testing.assert_array_equal(g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w))


@st.composite
def complex_arrays(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    parts = st.sampled_from(PARTS)
    values = [complex(draw(parts), draw(parts)) for _ in range(int(np.prod(shape)))]
    dtype = draw(st.sampled_from([np.complex128, np.complex64]))
    return np.array(values, dtype=dtype).reshape(shape)


@settings(max_examples=10, deadline=None)
@given(x=complex_arrays(), data=st.data(),
       name=st.sampled_from(["max", "min", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin"]))
def test_complex_extremes_match_numpy(x, data, name):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")

    def f(v):
        return getattr(np, name)(v, axis=axis, keepdims=keepdims)
    try:
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = f(x)
    except ValueError:              # nanargmax of an all-NaN slice: NumPy raises, xlac (as for floats) does not
        return
    _same(xlac.compile(f)(x), want)
    _same(getattr(xnp, name)(x, axis=axis, keepdims=keepdims), want)


@settings(max_examples=15, deadline=None)
@given(x=complex_arrays(), data=st.data(), op=st.sampled_from(["max", "min", "nanmax", "nanmin"]))
def test_initial_and_where_match_numpy(x, data, op):
    where = np.array(data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)), bool).reshape(x.shape)
    initial = complex(data.draw(st.sampled_from(PARTS)), data.draw(st.sampled_from(PARTS)))

    def f(v):
        return getattr(np, op)(v, axis=-1, initial=initial, where=where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(x)
    _same(xlac.compile(f)(x), want)
    _same(getattr(xnp, op)(x, axis=-1, initial=initial, where=where), want)


def test_several_axes_match_numpy():
    x = (np.arange(24) % 5 - 2 + 1j * (np.arange(24) % 3)).reshape(2, 3, 4)
    for op in (np.max, np.min):
        _same(xlac.compile(lambda v: op(v, axis=(0, 2)))(x), op(x, axis=(0, 2)))


@settings(max_examples=10, deadline=None)
@given(x=complex_arrays(), data=st.data(), name=st.sampled_from(["max", "min", "argmax", "argmin"]))
def test_extremes_of_complex_selections_and_traced_slices_match_numpy(x, data, name):
    flat = x.reshape(-1)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=flat.size, max_size=flat.size)), bool)
    start = data.draw(st.integers(0, flat.size - 1), label="start")
    mask[start] = True                                   # never empty: NumPy raises for an empty one

    def selected(v, m):
        return getattr(v[m], name)()

    def sliced(v, i):
        return getattr(v[i:], name)()
    with np.errstate(invalid="ignore"):
        _same(xlac.compile(selected)(flat, mask), selected(flat, mask))
        _same(xlac.compile(sliced)(flat, start), sliced(flat, start))


@settings(max_examples=15, deadline=None)
@given(x=complex_arrays(), data=st.data(), ufunc=st.sampled_from([np.maximum, np.minimum]))
def test_running_extremes_match_numpy(x, data, ufunc):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")

    def f(v):
        return ufunc.accumulate(v, axis=axis)
    _same(xlac.compile(f)(x), f(x))
    _same(f(xlac.asarray(x)), f(x))


def test_all_nan_slices_give_the_first_nan_as_numpy():
    x = np.array([[complex(np.nan, 1), complex(2, np.nan)], [complex(1, 1), complex(np.nan, -0.0)]])
    for op in (np.nanmax, np.nanmin):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = op(x, axis=1)
        _same(xlac.compile(lambda v: op(v, axis=1))(x), want)
        assert np.isnan(want[0].real) and want[0].imag == 1.0       # the test can tell one NaN from another


def test_nanargmax_sees_nan_as_minus_infinity_plus_zero_j():
    x = np.array([complex(-np.inf, -1), complex(np.nan, 5), complex(-np.inf, -2)])
    assert int(np.nanargmax(x)) == 1
    assert int(xlac.compile(np.nanargmax)(x)) == 1
    assert int(xnp.nanargmin(x)) == int(np.nanargmin(x)) == 2


@pytest.mark.parametrize("name", ["max", "nanmin", "running max"])
def test_gradients_through_complex_extremes_match_jax(name):
    import jax
    import jax.numpy as jnp
    ours = {"max": np.max, "nanmin": np.nanmin, "running max": np.maximum.accumulate}[name]
    theirs = {"max": jnp.max, "nanmin": jnp.nanmin, "running max": jax.lax.cummax}[name]
    v = np.array([1.0, 3.0, -2.0, 2.5], np.float32)     # no ties: JAX splits a tie's cotangent, xlac does not
    rotation = np.complex64(1 - 2j)
    want = jax.grad(lambda u: jnp.sum(jnp.real(theirs(u * rotation) * rotation)))(v)
    got = xlac.grad(lambda u: np.sum(np.real(ours(u * rotation) * rotation)))(v)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("name", ["max", "argmin", "nanargmax", "nanmin", "running min"])
def test_vmap_of_complex_extremes_is_numpy_row_by_row(name):
    f = {"max": np.max, "argmin": np.argmin, "nanargmax": np.nanargmax, "nanmin": np.nanmin,
         "running min": np.minimum.accumulate}[name]
    x = np.array([[1 + 2j, 3 - 1j, complex(np.nan, 1), 0.5j], [2 - 1j, 2 + 1j, -1j, complex(2, np.nan)]])
    with np.errstate(invalid="ignore"):
        want = np.stack([f(row) for row in x])
    _same(xlac.vmap(lambda row: f(row))(x), want)
