"""xlac.numpy reductions and scans against NumPy: values, dtypes, shapes and errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.ir import dtypes
from tests.tolerance import assert_matches, tolerance

BF16 = dtypes.bfloat16
HALF = (np.dtype("float16"), BF16)
DTYPES = [np.dtype(d) for d in ("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64")] + [BF16]
FLOATS = [d for d in DTYPES if dtypes.is_float(d)]


# ---------------------------------------------------------------- strategies and oracles


@st.composite
def shapes(draw, min_side=0):
    return tuple(draw(st.lists(st.integers(min_side, 4), min_size=0, max_size=3)))


@st.composite
def axes(draw, ndim):
    """None, an int (maybe negative), or a tuple of distinct axes (maybe negative, maybe empty)."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


def make_array(seed, shape, dtype, *, low=-3, high=3, nan=False):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_int(dtype):
        low = 0 if dtypes.is_unsigned_int(dtype) else low
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    values = rng.uniform(low, high, size=shape)
    if nan and values.size:
        values[rng.random(shape) < 0.2] = np.nan
    return values.astype(dtype)


def reference(fn, x, **kwargs):
    """NumPy's answer; half-precision inputs are computed in float32 (as xlac does) and rounded back,
    with the dtype NumPy itself gives."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.asarray(fn(x, **kwargs))
        if x.dtype in HALF:
            expected = np.asarray(fn(x.astype(np.float32), **kwargs)).astype(expected.dtype)
    return expected


def summed_tolerance(expected, x, scale=1.0):
    """Float sums accumulate rounding error linearly in the number of terms and their size."""
    n = max(x.size, 1)
    return tolerance(expected.dtype) * n * scale


def reduced_axes(shape, axis):
    if axis is None:
        return list(range(len(shape)))
    return [a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))]


# ---------------------------------------------------------------- sum, prod


@given(shape=shapes(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), seed=st.integers(0, 2**16),
       data=st.data())
def test_sum_matches_numpy(shape, dtype, keepdims, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, low=-100, high=100)
    expected = reference(np.sum, x, axis=axis, keepdims=keepdims)
    assert_matches(xnp.sum(x, axis, keepdims=keepdims), expected, rtol=summed_tolerance(expected, x, 100))


@given(shape=shapes(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), seed=st.integers(0, 2**16),
       data=st.data())
def test_prod_matches_numpy(shape, dtype, keepdims, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, low=-3, high=3)   # integer products wrap exactly as NumPy's do
    if dtypes.is_float(dtype):
        x = (np.sign(x) * (np.abs(x.astype(np.float64)) % 1.0 + 0.5)).astype(dtype)
    expected = reference(np.prod, x, axis=axis, keepdims=keepdims)
    assert_matches(xnp.prod(x, axis=axis, keepdims=keepdims), expected, rtol=summed_tolerance(expected, x))


@pytest.mark.parametrize("dtype, expected", [
    ("bool", "int64"), ("int8", "int64"), ("int16", "int64"), ("int32", "int64"), ("int64", "int64"),
    ("uint8", "uint64"), ("uint32", "uint64"), ("float16", "float16"), ("bfloat16", "bfloat16"),
    ("float32", "float32"), ("complex64", "complex64")])
def test_sum_prod_cumsum_result_dtypes(dtype, expected):
    x = np.ones((2, 3), dtypes.canonical(dtype))
    for fn in (xnp.sum, xnp.prod, xnp.cumsum, xnp.cumprod):
        assert np.asarray(fn(x)).dtype == dtypes.canonical(expected), fn.__name__
    np_dtype = np.sum(x).dtype
    assert np_dtype == dtypes.canonical(expected)


def test_sum_of_many_float16_accumulates_in_float32():
    x = np.full(4096, 0.1, np.float16)
    got = xnp.sum(x)
    # a float16 running sum stalls at 256; accumulating in float32 gives the true sum.
    assert_matches(got, np.float16(np.sum(x.astype(np.float32))))


def test_sum_of_complex_and_explicit_dtypes():
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, -2]], np.complex64)
    assert_matches(xnp.sum(z, axis=0), np.sum(z, axis=0))
    x = np.array([100, 100, 100], np.int32)
    assert_matches(xnp.sum(x, dtype=np.int8), np.sum(x, dtype=np.int8))        # wraps, as NumPy does
    assert_matches(xnp.sum(x, dtype=np.float32), np.sum(x, dtype=np.float32))
    assert_matches(xnp.sum(np.array([True, True]), dtype=bool), np.sum(np.array([True, True]), dtype=bool))
    assert_matches(xnp.sum(5), np.sum(5))
    assert_matches(xnp.prod(np.array([2.0, 3.0]), dtype=np.float16), np.prod(np.array([2.0, 3.0]), dtype=np.float16))


def test_sum_prod_where_and_initial():
    x = np.arange(12.0).reshape(3, 4)
    where = np.array([True, False, True, True])
    for fn in (np.sum, np.prod):
        xfn = getattr(xnp, fn.__name__)
        assert_matches(xfn(x, axis=1, where=where), fn(x, axis=1, where=where))
        assert_matches(xfn(x, axis=0, initial=2.0), fn(x, axis=0, initial=2.0))
        assert_matches(xfn(x, where=where, initial=5.0, keepdims=True), fn(x, where=where, initial=5.0, keepdims=True))
    i8 = np.array([1, 2], np.int8)
    assert_matches(xnp.sum(i8, initial=1000), np.sum(i8, initial=1000))
    assert_matches(xnp.sum(i8, initial=1.5), np.sum(i8, initial=1.5))   # unsafe cast of initial, as NumPy
    assert_matches(xnp.sum(np.zeros((0, 3), np.int32), axis=0, initial=7), np.sum(np.zeros((0, 3), np.int32), axis=0, initial=7))


# ---------------------------------------------------------------- mean, var, std


@settings(max_examples=12, deadline=None)
@given(shape=shapes(), dtype=st.sampled_from(DTYPES + [np.dtype("complex64")]), keepdims=st.booleans(),
       ddof=st.sampled_from([0, 1]), seed=st.integers(0, 2**16), data=st.data())
def test_mean_var_std_match_numpy(shape, dtype, keepdims, ddof, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype if dtype.kind != "c" else np.float32)
    if dtype.kind == "c":
        x = (x + 1j * make_array(seed + 1, shape, np.float32)).astype(dtype)
    expected = reference(np.mean, x, axis=axis, keepdims=keepdims)
    assert_matches(xnp.mean(x, axis, keepdims=keepdims), expected, rtol=summed_tolerance(expected, x, 3))
    for np_fn, xfn in ((np.var, xnp.var), (np.std, xnp.std)):
        expected = reference(np_fn, x, axis=axis, ddof=ddof, keepdims=keepdims)
        assert_matches(xfn(x, axis, ddof=ddof, keepdims=keepdims), expected, rtol=summed_tolerance(expected, x, 10))


def test_mean_var_std_options():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], np.float32)
    where = np.array([[True, False, True], [True, True, False]])
    assert_matches(xnp.mean(x, axis=1, where=where), np.mean(x, axis=1, where=where))
    assert_matches(xnp.var(x, axis=1, where=where), np.var(x, axis=1, where=where))
    assert_matches(xnp.std(x, correction=1), np.std(x, correction=1))
    mean = np.mean(x, axis=1, keepdims=True)
    assert_matches(xnp.var(x, axis=1, mean=mean), np.var(x, axis=1, mean=mean))
    assert_matches(xnp.mean(x, dtype=np.float64), np.mean(x, dtype=np.float64))
    assert_matches(xnp.mean(np.array([1, 2], np.int8), dtype=np.int8), np.mean(np.array([1, 2], np.int8), dtype=np.int8))
    assert_matches(xnp.mean(np.array([1, 2, 4]), dtype=np.float32), np.mean(np.array([1, 2, 4]), dtype=np.float32))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_matches(xnp.var(np.array([1.0, 2.0]), ddof=3), np.var(np.array([1.0, 2.0]), ddof=3))   # inf
        assert_matches(xnp.mean(np.zeros((0, 2), np.int32), axis=0), np.mean(np.zeros((0, 2), np.int32), axis=0))
    with pytest.raises(ValueError, match="ddof and correction"):
        xnp.var(x, ddof=1, correction=1)
    with pytest.raises(xlac.UnsupportedError, match="dtype=int64"):
        xnp.std(x, dtype=np.int64)


# ---------------------------------------------------------------- max, min


@given(shape=shapes(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), nan=st.booleans(),
       seed=st.integers(0, 2**16), data=st.data())
def test_max_min_match_numpy(shape, dtype, keepdims, nan, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, nan=nan)
    if any(shape[a] == 0 for a in reduced_axes(shape, axis)):
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
            xnp.max(x, axis, keepdims=keepdims)
        return
    for np_fn, xfn in ((np.max, xnp.max), (np.min, xnp.amin)):
        assert_matches(xfn(x, axis, keepdims=keepdims), np_fn(x, axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_min_propagate_nan_from_any_position(dtype):
    f = xlac.compile(lambda x: (xnp.max(x, axis=1), xnp.min(x, axis=1), xnp.max(x), xnp.min(x, axis=0)))
    x = np.array([[np.nan, 1, 2], [1, np.nan, 2], [1, 2, np.nan], [1, 2, 3]], dtype)
    with np.errstate(invalid="ignore"):
        expected = (np.max(x, 1), np.min(x, 1), np.max(x), np.min(x, 0))
    for got, want in zip(f(x), expected):
        assert_matches(got, want)


def test_max_min_where_initial():
    x = np.array([[1.0, 9.0, np.nan], [4.0, -2.0, 0.5]])
    where = np.array([True, True, False])
    for np_fn in (np.max, np.min):
        xfn = getattr(xnp, np_fn.__name__)
        assert_matches(xfn(x, axis=1, where=where, initial=3.0), np_fn(x, axis=1, where=where, initial=3.0))
        assert_matches(xfn(x, axis=0, initial=2.0), np_fn(x, axis=0, initial=2.0))
        assert_matches(xfn(np.zeros((0, 2)), axis=0, initial=-1.0), np_fn(np.zeros((0, 2)), axis=0, initial=-1.0))
    i = np.array([3, 1, 2], np.int64)
    assert_matches(xnp.max(i, initial=2.5), np.max(i, initial=2.5))
    assert_matches(xnp.max(np.array([True, False]), axis=0), np.max(np.array([True, False]), axis=0))
    assert_matches(xnp.min(np.zeros((0, 3), np.int8), axis=1), np.min(np.zeros((0, 3), np.int8), axis=1))


# ---------------------------------------------------------------- argmax, argmin


@settings(max_examples=12, deadline=None)
@given(shape=shapes(min_side=1), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), nan=st.booleans(),
       seed=st.integers(0, 2**16), data=st.data())
def test_argmax_argmin_match_numpy(shape, dtype, keepdims, nan, seed, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)) if shape else st.none())
    x = make_array(seed, shape, dtype, low=-2, high=2, nan=nan)   # a small range makes ties common
    if dtypes.is_float(dtype):
        x = np.round(x)
    for np_fn, xfn in ((np.argmax, xnp.argmax), (np.argmin, xnp.argmin)):
        assert_matches(xfn(x, axis, keepdims=keepdims), np_fn(x, axis, keepdims=keepdims))


def test_argmax_picks_first_nan_and_first_tie():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [5.0, 5.0, 1.0, 1.0]], np.float32)
    f = xlac.compile(lambda x: (xnp.argmax(x, axis=1), xnp.argmin(x, axis=1), xnp.argmax(x), xnp.argmin(x.T)))
    for got, expected in zip(f(x), (np.argmax(x, 1), np.argmin(x, 1), np.argmax(x), np.argmin(x.T))):
        assert_matches(got, expected)


# No subnormals: XLA's CPU client flushes them to zero (a documented deviation, docs/numpy-coverage.md).
_SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, -np.nan, 65504.0]


@settings(max_examples=4, deadline=None)
@given(dtype=st.sampled_from(["float16", "float32", "float64", "bfloat16"]), rows=st.integers(1, 4),
       picks=st.lists(st.integers(0, len(_SPECIAL_FLOATS) - 1), min_size=1, max_size=24))
def test_argmax_argmin_order_special_floats_as_numpy(dtype, rows, picks):
    """Signed zeros tie, NaNs of either sign win, infinities order as NumPy orders them."""
    values = np.array([_SPECIAL_FLOATS[p] for p in picks])
    with np.errstate(over="ignore", under="ignore"):
        x = np.resize(values, (rows, len(values))).astype(dtypes.canonical(dtype))
    x[:, ::2] = -x[:, ::2]                       # negative NaNs too (np.negative flips the sign bit)
    for np_fn, xfn in ((np.argmax, xnp.argmax), (np.argmin, xnp.argmin)):
        for axis in (None, 0, 1):
            assert_matches(xlac.compile(lambda v: xfn(v, axis))(x), np_fn(x, axis))


# ---------------------------------------------------------------- all, any


@given(shape=shapes(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), nan=st.booleans(),
       seed=st.integers(0, 2**16), data=st.data())
def test_all_any_match_numpy(shape, dtype, keepdims, nan, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, low=0, high=2, nan=nan)
    if dtypes.is_float(dtype):
        x = np.round(x).astype(dtype)
    for np_fn, xfn in ((np.all, xnp.all), (np.any, xnp.any)):
        assert_matches(xfn(x, axis, keepdims=keepdims), np_fn(x, axis, keepdims=keepdims))


def test_all_any_where_nan_and_complex():
    x = np.array([[0.0, np.nan], [1.0, 2.0]])
    where = np.array([False, True])
    assert_matches(xnp.all(x, axis=1, where=where), np.all(x, axis=1, where=where))
    assert_matches(xnp.any(x, axis=0, where=where), np.any(x, axis=0, where=where))
    z = np.array([0j, 1j])
    assert_matches(xnp.all(z), np.all(z))
    assert_matches(xnp.any(z), np.any(z))
    assert_matches(xnp.all(np.zeros((0,))), np.all(np.zeros((0,))))


# ---------------------------------------------------------------- cumsum, cumprod


@given(shape=shapes(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16), data=st.data())
def test_cumsum_cumprod_match_numpy(shape, dtype, seed, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)) if shape else st.none())
    x = make_array(seed, shape, dtype, low=-3, high=3)
    expected = reference(np.cumsum, x, axis=axis)
    assert_matches(xnp.cumsum(x, axis), expected, rtol=summed_tolerance(expected, x, 3))
    if dtypes.is_float(dtype):
        x = (np.sign(x) * (np.abs(x.astype(np.float64)) % 1.0 + 0.5)).astype(dtype)
    expected = reference(np.cumprod, x, axis=axis)
    assert_matches(xnp.cumprod(x, axis), expected, rtol=summed_tolerance(expected, x))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 1000])
def test_cumsum_exact_for_integers_of_any_length(n):
    x = np.arange(n, dtype=np.int64) * 7 - 3
    assert_matches(xnp.cumsum(x), np.cumsum(x))
    b = np.arange(n) % 3 == 0
    assert_matches(xnp.cumsum(b, dtype=bool), np.cumsum(b, dtype=bool))
    assert_matches(xnp.cumprod(b), np.cumprod(b))


def test_cumsum_dtype_and_compiled():
    x = np.full((2, 70), 3, np.int8)
    assert_matches(xnp.cumsum(x, axis=1, dtype=np.int8), np.cumsum(x, axis=1, dtype=np.int8))   # wraps
    f = xlac.compile(lambda x: (xnp.cumsum(x, axis=0), xnp.cumprod(x)))
    y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    for got, expected in zip(f(y), (np.cumsum(y, axis=0), np.cumprod(y))):
        assert_matches(got, expected)
    assert_matches(xnp.cumsum(np.float32(2.5)), np.cumsum(np.float32(2.5)))


# ---------------------------------------------------------------- nan-ignoring reductions


@settings(max_examples=12, deadline=None)
@given(shape=shapes(), dtype=st.sampled_from([np.dtype("float32"), np.dtype("float64"), np.dtype("int32")]),
       keepdims=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_nan_functions_match_numpy(shape, dtype, keepdims, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, nan=True)
    kwargs = dict(axis=axis, keepdims=keepdims)
    for name in ("nansum", "nanprod", "nanmean"):
        expected = reference(getattr(np, name), x, **kwargs)
        assert_matches(getattr(xnp, name)(x, **kwargs), expected, rtol=summed_tolerance(expected, x, 50))
    for name in ("nanmax", "nanmin"):
        if any(shape[a] == 0 for a in reduced_axes(shape, axis)):
            with pytest.raises(ValueError, match="reduction operation f"):
                getattr(xnp, name)(x, **kwargs)
        else:
            assert_matches(getattr(xnp, name)(x, **kwargs), reference(getattr(np, name), x, **kwargs))


def test_nanmax_all_nan_and_initial():
    x = np.array([[np.nan, np.nan], [np.nan, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_matches(xnp.nanmax(x, axis=1), np.nanmax(x, axis=1))
        assert_matches(xnp.nanmin(x, axis=0), np.nanmin(x, axis=0))
        for initial in (1.0, 5.0, np.nan):
            assert_matches(xnp.nanmax(x, axis=1, initial=initial), np.nanmax(x, axis=1, initial=initial))


# ---------------------------------------------------------------- errors


def test_bad_axes_raise_like_numpy():
    x = np.ones((2, 3), np.float32)
    for fn in (xnp.sum, xnp.mean, xnp.max, xnp.all, xnp.argmax, xnp.cumsum):
        with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
            fn(x, 2)
        with pytest.raises(np.exceptions.AxisError, match="axis -3 is out of bounds"):
            fn(x, -3)
    for fn in (xnp.sum, xnp.prod, xnp.var, xnp.min, xnp.any):
        with pytest.raises(ValueError, match="duplicate value in 'axis'"):
            fn(x, (0, -2))
    with pytest.raises(TypeError, match="axis must be a Python integer"):
        xnp.argmax(x, axis=(0,))
    with pytest.raises(np.exceptions.AxisError):
        xnp.sum(np.float32(1.0), axis=0)


def test_empty_and_identityless_reductions_raise_like_numpy():
    empty = np.zeros((0, 3), np.float32)
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum which has no identity"):
        xnp.min(empty)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        xnp.max(empty, axis=0)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        xnp.argmax(empty)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        xnp.argmin(empty, axis=0)
    with pytest.raises(ValueError, match="'maximum' does not have an identity, so to use a where mask"):
        xnp.max(np.ones(3), where=np.array([True, False, True]))
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        xnp.max(np.array([1, 2], np.int8), initial=1000)


def test_unsupported_arguments_raise():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="where= must be a boolean array"):
        xnp.sum(x, where=np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="does not broadcast"):
        xnp.sum(x, where=np.array([True, False]))


def test_errors_inside_compile_name_the_users_line():
    f = xlac.compile(lambda x: xnp.max(x, axis=0))
    with pytest.raises(ValueError, match=r"(?s)which has no identity.*test_reductions\.py"):
        f(np.zeros((0, 2), np.float32))


# ---------------------------------------------------------------- compiled path and methods


def test_methods_inside_compile():
    def fn(x):
        return (x.sum(axis=0), x.sum(), x.prod(axis=1, keepdims=True), x.mean(), x.mean(axis=-1),
                x.var(ddof=1), x.std(axis=0), x.max(axis=1), x.min(), x.argmax(), x.argmin(axis=0),
                x.all(), x.any(axis=1, keepdims=True))
    x = np.array([[1.0, -2.0, 3.5], [0.0, 4.0, 4.0]], np.float32)
    for got, expected in zip(xlac.compile(fn)(x), fn(x)):
        assert_matches(got, expected)


def test_eager_methods_on_xlac_arrays():
    a = xlac.asarray(np.array([[3, 1], [2, 7]], np.int16))
    assert_matches(a.sum(axis=1), np.array([4, 9]))
    assert_matches(a.argmax(axis=0, keepdims=True), np.array([[0, 1]]))
    assert_matches(a.mean(), np.float64(3.25))


def test_compiled_reductions_of_traced_results():
    f = xlac.compile(lambda x, y: xnp.sum(x * y, axis=(0, -1), keepdims=True) + xnp.max(y))
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    y = np.full((2, 3, 4), 0.5)
    assert_matches(f(x, y), np.sum(x * y, axis=(0, -1), keepdims=True) + np.max(y))


# ---------------------------------------------------------------- nanvar, nanstd, nanarg*, nancum*


def quiet_reference(fn, x, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return reference(fn, x, **kwargs)


@settings(max_examples=8)
@given(shape=shapes(), dtype=st.sampled_from([np.dtype("float32"), np.dtype("float64"), np.dtype("int32"),
                                              np.dtype("complex64")]),
       keepdims=st.booleans(), ddof=st.integers(0, 2), seed=st.integers(0, 2**16), data=st.data())
def test_nanvar_nanstd_match_numpy(shape, dtype, keepdims, ddof, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, nan=True)
    if dtype.kind == "c":
        x = x + 1j * make_array(seed + 1, shape, np.dtype("float32"), nan=True)
    for name in ("nanvar", "nanstd"):
        expected = quiet_reference(getattr(np, name), x, axis=axis, keepdims=keepdims, ddof=ddof)
        assert_matches(getattr(xnp, name)(x, axis=axis, keepdims=keepdims, ddof=ddof), expected,
                       rtol=summed_tolerance(expected, x, 10))


def test_nanvar_options_and_errors():
    x = np.array([[1.0, np.nan, 4.0], [3.0, 5.0, np.nan], [np.nan, np.nan, np.nan]], np.float32)
    where = np.array([[True, True, False], [True, True, True], [True, True, True]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_matches(xnp.nanvar(x, axis=1, where=where), np.nanvar(x, axis=1, where=where))
        assert_matches(xnp.nanstd(x, axis=0, correction=1), np.nanstd(x, axis=0, correction=1))
        mean = np.nanmean(x, axis=1, keepdims=True)
        assert_matches(xnp.nanvar(x, axis=1, mean=mean), np.nanvar(x, axis=1, mean=mean))
        assert_matches(xnp.nanvar(x, dtype=np.float64), np.nanvar(x, dtype=np.float64))
        out = np.zeros(3)
        assert xnp.nanstd(x, axis=1, out=out) is out
        assert_matches(out, np.nanstd(x, axis=1, out=np.zeros(3)))
        compiled = xlac.compile(lambda a: xnp.nanstd(a, axis=0, ddof=1, keepdims=True))
        assert_matches(compiled(x), np.nanstd(x, axis=0, ddof=1, keepdims=True))
    assert_matches(xnp.nanvar(np.array([1, 2, 4], np.int8)), np.nanvar(np.array([1, 2, 4], np.int8)))
    with pytest.raises(TypeError, match="If a is inexact, then dtype must be inexact"):
        xnp.nanvar(x, dtype=np.int32)
    with pytest.raises(TypeError, match="If a is inexact, then out must be inexact"):
        xnp.nanstd(x, axis=1, out=np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="ddof and correction"):
        xnp.nanvar(x, ddof=1, correction=1)


@settings(max_examples=8)
@given(shape=shapes(min_side=1), dtype=st.sampled_from([np.dtype("float32"), np.dtype("int8"), BF16]),
       keepdims=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_nanargmax_nanargmin_match_numpy(shape, dtype, keepdims, seed, data):
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    x = make_array(seed, shape, dtype, nan=True)
    if dtypes.is_float(dtype):
        x = np.where(np.isnan(x.astype(np.float32)), np.nan, x).astype(dtype)
        flat = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
        x = x if flat.size == 0 or not np.isnan(flat.astype(np.float32)).all(axis=-1).any() else np.nan_to_num(x)
    for name in ("nanargmax", "nanargmin"):
        expected = getattr(np, name)(x.astype(np.float32) if dtype == BF16 else x, axis=axis, keepdims=keepdims)
        assert_matches(getattr(xnp, name)(x, axis=axis, keepdims=keepdims), expected)


def test_nanargmax_all_nan_slice_gives_its_first_index():
    x = np.array([[np.nan, np.nan], [np.nan, -np.inf]])
    assert_matches(xnp.nanargmax(x, axis=1), np.array([0, 0]))      # NaN is -inf here, as in NumPy
    assert_matches(xlac.compile(lambda a: xnp.nanargmin(a, axis=0))(x), np.array([0, 1]))
    out = np.zeros(2, np.int64)
    assert xnp.nanargmax(x, axis=0, out=out) is out


@settings(max_examples=8)
@given(shape=shapes(), dtype=st.sampled_from([np.dtype("float32"), np.dtype("int8"), np.dtype("bool")]),
       seed=st.integers(0, 2**16), data=st.data())
def test_nancumsum_nancumprod_match_numpy(shape, dtype, seed, data):
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    x = make_array(seed, shape, dtype, nan=True)
    for name in ("nancumsum", "nancumprod"):
        expected = reference(getattr(np, name), x, axis=axis)
        assert_matches(getattr(xnp, name)(x, axis=axis), expected, rtol=summed_tolerance(expected, x, 10))


# ---------------------------------------------------------------- ptp, count_nonzero, average


@settings(max_examples=8)
@given(shape=shapes(min_side=1), dtype=st.sampled_from([np.dtype("int8"), np.dtype("uint8"), np.dtype("float32"),
                                                        BF16]),
       keepdims=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_ptp_and_count_nonzero_match_numpy(shape, dtype, keepdims, seed, data):
    axis = data.draw(axes(len(shape)))
    x = make_array(seed, shape, dtype, low=-100, high=100, nan=True)
    expected = reference(np.ptp, x, axis=axis, keepdims=keepdims)
    assert_matches(xnp.ptp(x, axis=axis, keepdims=keepdims), expected)
    assert_matches(xnp.count_nonzero(x, axis=axis, keepdims=keepdims),
                   np.count_nonzero(x.astype(np.float32) if dtype == BF16 else x, axis=axis, keepdims=keepdims))


def test_ptp_and_count_nonzero_edge_cases():
    x = np.array([[-128, 127], [3, 3]], np.int8)
    assert_matches(xnp.ptp(x), np.ptp(x))                                  # wraps, as NumPy's does
    out = np.zeros((), np.int64)
    assert xnp.ptp(x, out=out) is out
    assert_matches(out, np.ptp(x, out=np.zeros((), np.int64)))              # computed in out's dtype
    with pytest.raises(TypeError, match="boolean subtract"):
        xnp.ptp(np.ones(2, bool))
    with pytest.raises(ValueError, match="zero-size array"):
        xnp.ptp(np.zeros((0, 2)), axis=0)
    z = np.array([[0, 1j], [np.nan, 0], [2, 0]])
    assert_matches(xnp.count_nonzero(z, axis=0), np.count_nonzero(z, axis=0))
    assert_matches(xnp.count_nonzero(z), np.asarray(np.count_nonzero(z)))
    assert_matches(xlac.compile(lambda a: xnp.count_nonzero(a, axis=(0, 1), keepdims=True))(z),
                   np.count_nonzero(z, axis=(0, 1), keepdims=True))


@pytest.mark.parametrize("dtype, weights_dtype", [("float32", "int64"), ("int8", "float32"), ("float16", None)])
def test_average_matches_numpy(dtype, weights_dtype):
    rng = np.random.default_rng(0)
    x = make_array(1, (2, 3, 4), np.dtype(dtype), low=-5, high=5)
    cases = [dict(), dict(axis=1), dict(axis=(2, 0)), dict(axis=-1, keepdims=True), dict(returned=True),
             dict(axis=(0, 2), returned=True, keepdims=True)]
    for kwargs in cases:
        if weights_dtype is not None:
            axis = kwargs.get("axis")
            shape = x.shape if axis is None else tuple(x.shape[a] for a in np.atleast_1d(axis))
            kwargs = dict(kwargs, weights=rng.integers(1, 4, shape).astype(weights_dtype))
        expected = np.average(x, **kwargs)
        got = xnp.average(x, **kwargs)
        for g, e in zip(got if kwargs.get("returned") else (got,), expected if kwargs.get("returned") else (expected,)):
            assert_matches(g, e, rtol=4 * tolerance(np.asarray(e).dtype))


def test_average_errors_and_compiled():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="Axis must be specified when shapes of a and weights differ"):
        xnp.average(x, weights=np.ones(3))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        xnp.average(x, axis=0, weights=np.ones(3))
    compiled = xlac.compile(lambda a, w: xnp.average(a, axis=1, weights=w, returned=True))
    for g, e in zip(compiled(x, np.array([1.0, 2.0, 3.0])), np.average(x, axis=1, weights=[1.0, 2.0, 3.0],
                                                                        returned=True)):
        assert_matches(g, e)
    with np.errstate(all="ignore"):
        assert np.isnan(np.asarray(xnp.average(x, axis=1, weights=np.zeros(3)))).all()   # NumPy raises here


# ---------------------------------------------------------------- cumulative_sum, cumulative_prod


@pytest.mark.parametrize("dtype", ["bool", "uint8", "complex64"])
def test_cumulative_sum_prod_match_numpy(dtype):
    x = make_array(3, (2, 3), np.dtype(dtype) if dtype != "complex64" else np.dtype("float32")).astype(dtype)
    for name in ("cumulative_sum", "cumulative_prod"):
        for kwargs in (dict(axis=1), dict(axis=0, include_initial=True), dict(axis=-1, dtype=np.float64)):
            assert_matches(getattr(xnp, name)(x, **kwargs), reference(getattr(np, name), x, **kwargs))
        assert_matches(getattr(xnp, name)(x[0], include_initial=True),
                       reference(getattr(np, name), x[0], include_initial=True))


def test_cumulative_sum_axis_rules_out_and_zero_dimensions():
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        xnp.cumulative_sum(np.ones((2, 2)))
    assert_matches(xnp.cumulative_sum(np.float64(3.0)), np.cumulative_sum(np.float64(3.0)))
    out = np.zeros((2, 4))
    assert xnp.cumulative_sum(np.ones((2, 3), np.int8), axis=1, include_initial=True, out=out) is out
    assert_matches(out, np.cumulative_sum(np.ones((2, 3), np.int8), axis=1, include_initial=True,
                                          out=np.zeros((2, 4))))
    with pytest.raises(ValueError, match="cumulative_sum: out has shape"):
        xnp.cumulative_sum(np.ones((2, 3)), axis=1, include_initial=True, out=np.zeros((2, 3)))
    compiled = xlac.compile(lambda a: xnp.cumulative_prod(a, axis=0, include_initial=True))
    assert_matches(compiled(np.arange(1, 4)), np.cumulative_prod(np.arange(1, 4), axis=0, include_initial=True))


def test_every_reduction_takes_numpy_parameters():
    import inspect
    from xlac.numpy import reductions
    for name in reductions.__all__:
        ours = inspect.signature(getattr(xnp, name).__wrapped_numpy__).parameters
        theirs = inspect.signature(getattr(np, name)).parameters
        assert list(ours) == list(theirs), name
