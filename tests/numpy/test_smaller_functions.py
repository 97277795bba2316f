"""NumPy's smaller functions against NumPy: predicates, conversions, windows, log ranges, cov/corrcoef,
bit packing, helpers."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches


def compiled_and_eager(fn, *args):
    """``fn``'s result compiled (args traced) and eager (args as xlac.Arrays), as NumPy arrays."""
    compiled = xlac.compile(fn)(*args)
    eager = fn(*(xlac.asarray(a) for a in args))
    return [np.asarray(compiled), np.asarray(eager)]


def check(xlac_fn, numpy_fn, *args, rtol=None):
    expected = numpy_fn(*args)
    for got in compiled_and_eager(xlac_fn, *args):
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        assert_matches(got, expected, rtol=rtol)


FLOAT_ARRAYS = hnp.arrays(st.sampled_from([np.float32, np.float64]), hnp.array_shapes(max_dims=3, max_side=4),
                          elements=st.floats(-1e3, 1e3, width=32))


@settings(max_examples=8, deadline=None)
@given(FLOAT_ARRAYS, st.booleans())
def test_angle_of_real_and_complex(x, deg):
    check(lambda a: xnp.angle(a, deg=deg), lambda a: np.angle(a, deg=deg), x)
    z = (x + 1j * x[::-1].reshape(x.shape)).astype(np.complex128)
    check(lambda a: xnp.angle(a, deg=deg), lambda a: np.angle(a, deg=deg), z)


@pytest.mark.parametrize("name", ["isneginf", "isposinf", "iscomplex", "isreal"])
def test_elementwise_predicates(name):
    x = np.array([-np.inf, -1.0, 0.0, np.nan, np.inf], np.float32)
    check(getattr(xnp, name), getattr(np, name), x)
    if name in ("iscomplex", "isreal"):
        z = np.array([1 + 0j, 1j, 0j], np.complex64)
        check(getattr(xnp, name), getattr(np, name), z)


def test_type_predicates_read_only_the_dtype():
    for f in (xnp.iscomplexobj, xnp.isrealobj, xnp.isscalar, xnp.iterable):
        for v in (np.ones(2), np.ones(2, np.complex64), 3.0, [1, 2]):
            assert f(v) == getattr(np, f.__name__)(v)
    assert xnp.isfortran(np.ones((2, 2))) is np.isfortran(np.ones((2, 2))) is False

    @xlac.compile
    def f(x):
        assert xnp.iscomplexobj(x) is False and xnp.isrealobj(x) and not xnp.isscalar(x) and xnp.iterable(x)
        assert np.iscomplexobj(x) is False              # NumPy's own, through __array_function__
        return x
    f(np.ones(2, np.float32))
    assert xnp.common_type(np.ones(1, np.float32), np.ones(1, np.int8)) is np.common_type(
        np.ones(1, np.float32), np.ones(1, np.int8))
    assert xnp.mintypecode(["d", "f"]) == "d"
    assert xnp.min_scalar_type(300) == np.dtype("uint16")


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman", "bartlett"])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
def test_windows(name, M):
    got = getattr(xnp, name)(M)
    expected = getattr(np, name)(M)
    assert got.dtype == expected.dtype
    assert_matches(np.asarray(got), expected)


@pytest.mark.parametrize("M,beta", [(1, 3.0), (5, 0.0), (8, 5.0)])
def test_kaiser(M, beta):
    assert_matches(np.asarray(xnp.kaiser(M, beta)), np.kaiser(M, beta), rtol=1e-6)


@pytest.mark.parametrize("args,kwargs", [((0, 2, 5), {}), ((1.0, 3.0, 4), {"base": 2.0}),
                                          ((0, 1, 4), {"endpoint": False, "dtype": np.float32})])
def test_logspace(args, kwargs):
    got, expected = xnp.logspace(*args, **kwargs), np.logspace(*args, **kwargs)
    assert got.dtype == expected.dtype
    assert_matches(np.asarray(got), expected, rtol=1e-6)


@pytest.mark.parametrize("args,kwargs", [((1, 1000, 4), {}), ((-1.0, -16.0, 5), {}),
                                          ((2.0, 50.0, 6), {"endpoint": False}), ((1, 8, 4), {"dtype": np.float32})])
def test_geomspace(args, kwargs):
    got, expected = xnp.geomspace(*args, **kwargs), np.geomspace(*args, **kwargs)
    assert got.dtype == expected.dtype
    assert_matches(np.asarray(got), expected, rtol=1e-6)


@settings(max_examples=5, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(3, 6)),
                  elements=st.floats(-100, 100)), st.booleans(), st.booleans())
def test_cov_and_corrcoef(m, rowvar, bias):
    check(lambda a: xnp.cov(a, rowvar=rowvar, bias=bias), lambda a: np.cov(a, rowvar=rowvar, bias=bias), m,
          rtol=1e-9)
    with np.errstate(all="ignore"):
        expected = np.corrcoef(m, rowvar=rowvar)
    for got in compiled_and_eager(lambda a: xnp.corrcoef(a, rowvar=rowvar), m):
        assert_matches(got, expected, rtol=1e-9)


def test_cov_weights():
    m = np.array([[1.0, 2.0, 4.0, 7.0], [0.0, 1.0, 0.5, 2.0]])
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.0])
    assert_matches(np.asarray(xnp.cov(m, fweights=fw, aweights=aw)), np.cov(m, fweights=fw, aweights=aw),
                   rtol=1e-12)


def test_ix_fromfunction_rollaxis_mask_indices():
    x = np.arange(20.0).reshape(4, 5)
    rows, cols = [0, 3], [1, 2, 4]
    np.testing.assert_array_equal(np.asarray(xlac.compile(lambda a: a[xnp.ix_(rows, cols)])(x)), x[np.ix_(rows, cols)])
    np.testing.assert_array_equal(np.asarray(xnp.fromfunction(lambda i, j: i * 10 + j, (3, 2))),
                                  np.fromfunction(lambda i, j: i * 10 + j, (3, 2)))
    y = np.ones((2, 3, 4, 5))
    for axis, start in [(3, 1), (0, 4), (-1, 0), (1, -1)]:
        assert xnp.rollaxis(y, axis, start).shape == np.rollaxis(y, axis, start).shape
    for got, expected in zip(xnp.mask_indices(3, np.triu, 1), np.mask_indices(3, np.triu, 1)):
        np.testing.assert_array_equal(np.asarray(got), expected)


@settings(max_examples=4, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=6),
                  elements=st.floats(-20, 20)))
def test_unwrap(p):
    check(xnp.unwrap, np.unwrap, p, rtol=1e-12)
    check(lambda a: xnp.unwrap(a, axis=0, period=5.0), lambda a: np.unwrap(a, axis=0, period=5.0), p, rtol=1e-12)


@settings(max_examples=4, deadline=None)
@given(hnp.arrays(st.sampled_from([np.uint8, np.bool_, np.int32]), hnp.array_shapes(min_dims=1, max_dims=2,
                                                                                     max_side=11)),
       st.sampled_from(["big", "little"]), st.sampled_from([None, 0, -1]))
def test_packbits_roundtrip(a, bitorder, axis):
    check(lambda x: xnp.packbits(x, axis=axis, bitorder=bitorder),
          lambda x: np.packbits(x, axis=axis, bitorder=bitorder), a)
    packed = np.packbits(a, axis=axis, bitorder=bitorder)
    for count in (None, 3, -2):
        check(lambda x: xnp.unpackbits(x, axis=axis, count=count, bitorder=bitorder),
              lambda x: np.unpackbits(x, axis=axis, count=count, bitorder=bitorder), packed)


def test_putmask_writes_in_place_eager_and_compiled():
    a = np.arange(6.0)
    expected = a.copy()
    np.putmask(expected, expected > 2, [10.0, 20.0])
    eager = xlac.asarray(a)
    xnp.putmask(eager, a > 2, [10.0, 20.0])
    np.testing.assert_array_equal(np.asarray(eager), expected)

    def f(x):
        xnp.putmask(x, x > 2, np.array([10.0, 20.0]))
    host = a.copy()
    xlac.compile(f)(host)
    np.testing.assert_array_equal(host, expected)


def test_conversion_variants_and_einsum_path():
    for f in (xnp.asanyarray, xnp.ascontiguousarray, xnp.asfortranarray, xnp.require):
        assert_matches(np.asarray(f([[1, 2]])), np.asarray([[1, 2]]))
    assert xnp.ascontiguousarray(2.0).shape == (1,)
    assert_matches(np.asarray(xnp.asarray_chkfinite([1.0, 2.0])), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="infs or NaNs"):
        xnp.asarray_chkfinite(np.array([1.0, np.nan]))
    with pytest.raises(xlac.UnsupportedError, match="asarray_chkfinite"):
        xlac.compile(lambda x: xnp.asarray_chkfinite(x))(np.ones(2))
    a, b = np.ones((2, 3)), np.ones((3, 4))
    assert xnp.einsum_path("ij,jk", a, b)[0] == np.einsum_path("ij,jk", a, b)[0]
    assert_matches(np.asarray(xnp.real_if_close(np.array([1 + 1e-20j]))), np.real_if_close(np.array([1 + 1e-20j])))
    with pytest.raises(xlac.UnsupportedError, match="real_if_close"):
        xlac.compile(lambda z: xnp.real_if_close(z))(np.ones(2, np.complex64))


def test_data_dependent_lengths_work_eagerly_and_refuse_traced_values():
    a = np.array([0, 0, 3, 0, 4, 0, 0])
    for trim in ("f", "b", "fb"):
        np.testing.assert_array_equal(np.asarray(xnp.trim_zeros(xlac.asarray(a), trim)), np.trim_zeros(a, trim))
    with pytest.raises(xlac.UnsupportedError, match="trim_zeros"):
        xlac.compile(xnp.trim_zeros)(a)
    condition = np.arange(6) % 2 == 0
    np.testing.assert_array_equal(np.asarray(xnp.extract(condition, np.arange(6) * 10)),
                                  np.extract(condition, np.arange(6) * 10))
    np.testing.assert_array_equal(np.asarray(xlac.compile(lambda x: xnp.extract(condition, x))(np.arange(6.0))),
                                  np.extract(condition, np.arange(6.0)))
    with pytest.raises(xlac.UnsupportedError, match="extract"):
        xlac.compile(lambda c, x: xnp.extract(c, x))(condition, np.arange(6.0))
    with pytest.warns(DeprecationWarning):
        stacked = xnp.row_stack([np.ones(2), np.zeros(2)])
    np.testing.assert_array_equal(np.asarray(stacked), np.vstack([np.ones(2), np.zeros(2)]))


@settings(max_examples=6, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 3)), elements=st.floats(-5, 5)),
       st.integers(1, 4), st.booleans(), st.booleans())
def test_histogramdd_matches_numpy(sample, bins, density, weighted):
    weights = np.linspace(0.5, 2.0, sample.shape[0]) if weighted else None
    with np.errstate(all="ignore"):
        expected, expected_edges = np.histogramdd(sample, bins=bins, density=density, weights=weights)
    for h, edges in (xnp.histogramdd(xlac.asarray(sample), bins=bins, density=density, weights=weights),
                     xlac.compile(lambda s: xnp.histogramdd(s, bins=bins, density=density, weights=weights))(sample)):
        assert_matches(np.asarray(h), expected, rtol=1e-12)
        for got_edge, edge in zip(edges, expected_edges):
            assert_matches(np.asarray(got_edge), edge)


def test_histogram2d_bins_forms():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=40), rng.normal(size=40)
    for bins in (3, [2, 5], np.linspace(-2, 2, 4), [np.linspace(-3, 3, 5), 2]):
        expected = np.histogram2d(x, y, bins=bins)
        got = xlac.compile(lambda x, y: xnp.histogram2d(x, y, bins=bins))(x, y)
        for g, e in zip(got, expected):
            assert_matches(np.asarray(g), e)
    with pytest.raises(ValueError, match="dimension of bins"):
        xnp.histogramdd(np.ones((4, 2)), bins=[2, 2, 2])
