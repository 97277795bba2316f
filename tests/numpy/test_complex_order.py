"""max, min, argmax and argmin of complex arrays in NumPy's order (real part, then imaginary part; a NaN in
either part wins; the first of equal elements wins), compiled and eager, against NumPy bit for bit."""
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


@settings(max_examples=40, deadline=None)
@given(x=complex_arrays(), data=st.data(), name=st.sampled_from(["max", "min", "argmax", "argmin"]))
def test_complex_extremes_match_numpy(x, data, name):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")

    def f(v):
        return getattr(np, name)(v, axis=axis, keepdims=keepdims)
    with np.errstate(invalid="ignore"):
        want = f(x)
    _same(xlac.compile(f)(x), want)
    _same(getattr(xnp, name)(x, axis=axis, keepdims=keepdims), want)


@settings(max_examples=20, deadline=None)
@given(x=complex_arrays(), data=st.data(), op=st.sampled_from(["max", "min"]))
def test_initial_and_where_match_numpy(x, data, op):
    where = np.array(data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)), bool).reshape(x.shape)
    initial = complex(data.draw(st.sampled_from(PARTS)), data.draw(st.sampled_from(PARTS)))

    def f(v):
        return getattr(np, op)(v, axis=-1, initial=initial, where=where)
    _same(xlac.compile(f)(x), f(x))


def test_several_axes_match_numpy():
    x = (np.arange(24) % 5 - 2 + 1j * (np.arange(24) % 3)).reshape(2, 3, 4)
    for op in (np.max, np.min):
        _same(xlac.compile(lambda v: op(v, axis=(0, 2)))(x), op(x, axis=(0, 2)))


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanargmax", "nanargmin"])
def test_nan_skipping_extremes_of_complex_arrays_are_refused_by_name(name):
    with pytest.raises(xlac.UnsupportedError, match=f"{name}: complex arrays are not supported"):
        xlac.compile(getattr(np, name))(np.array([1 + 1j, np.nan]))


@settings(max_examples=20, deadline=None)
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
