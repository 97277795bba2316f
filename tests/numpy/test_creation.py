"""xlac.numpy.creation against NumPy: values, dtypes and shapes, compiled and eager, and NumPy's errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings
from hypothesis.extra import numpy as hnp

import xlac
import xlac.numpy as xnp
from xlac.errors import TracerConversionError
from tests.tolerance import assert_matches

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]
dtype_st = st.sampled_from(DTYPES)
shape_st = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# ---------------------------------------------------------------- filled arrays


@given(shape_st, st.sampled_from([None] + DTYPES), st.booleans())
def test_zeros_ones_full_empty_match_numpy(shape, dtype, as_int):
    shape_arg = shape[0] if as_int and len(shape) == 1 else shape
    f = xlac.compile(lambda: (xnp.zeros(shape_arg, dtype), xnp.ones(shape_arg, dtype=dtype),
                              xnp.full(shape_arg, 1, dtype), xnp.empty(shape_arg, dtype)))
    zeros, ones, full, empty = f()
    assert_matches(zeros, np.zeros(shape_arg, dtype))
    assert_matches(ones, np.ones(shape_arg, dtype))
    assert_matches(full, np.full(shape_arg, 1, dtype))
    assert_matches(empty, np.zeros(shape_arg, dtype))


@pytest.mark.parametrize("fill", [7, 2.5, True, 1 + 2j, np.float32(1.5), np.int8(-3), np.array([1, 2, 3]),
                                  np.array([[1.0], [2.0]], np.float16)])
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_full_fill_values(fill):
    assert_matches(xnp.full((2, 3), fill), np.full((2, 3), fill))
    assert_matches(xnp.full((2, 3), fill, np.float32), np.full((2, 3), fill, np.float32))
    assert_matches(xnp.full_like(np.zeros((2, 3), np.int16), fill), np.full_like(np.zeros((2, 3), np.int16), fill))


def test_full_with_traced_fill_value():
    f = xlac.compile(lambda v: xnp.full((2, 2), v))
    assert_matches(f(np.float32(3)), np.full((2, 2), np.float32(3)))


def test_filled_errors():
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        xnp.zeros(-1)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        xnp.ones((2, -1))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        xnp.full(3, 300, np.uint8)
    with pytest.raises(ValueError, match="cannot broadcast"):
        xnp.full((2, 3), np.zeros(2))
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        xnp.zeros((2.5,))


def test_traced_shape_raises_tracer_conversion_error():
    for make in (lambda n: xnp.zeros(n), lambda n: xnp.ones((n, 2)), lambda n: xnp.eye(n),
                 lambda n: xnp.arange(n), lambda n: xnp.linspace(0, 1, n), lambda n: xnp.tri(3, k=n)):
        with pytest.raises(TracerConversionError, match="static argument"):
            xlac.compile(make)(np.int64(3))


def test_numpy_integers_are_static_eagerly():
    assert_matches(xnp.zeros(np.int64(3)), np.zeros(3))
    assert_matches(xnp.ones((np.int32(2), 2), np.int8), np.ones((2, 2), np.int8))
    assert_matches(xnp.eye(np.int64(2), k=np.int8(1)), np.eye(2, k=1))
    assert_matches(xnp.arange(np.int32(4)), np.arange(np.int32(4)))
    assert_matches(xnp.linspace(0, 1, np.int64(3)), np.linspace(0, 1, 3))


@given(shape_st, dtype_st, st.sampled_from([None] + DTYPES), st.one_of(st.none(), shape_st))
def test_like_functions_match_numpy(shape, dtype, override_dtype, override_shape):
    a = np.ones(shape, dtype)
    f = xlac.compile(lambda a: (xnp.zeros_like(a, override_dtype, override_shape),
                                xnp.ones_like(a, dtype=override_dtype, shape=override_shape),
                                xnp.full_like(a, 2, override_dtype, override_shape),
                                xnp.empty_like(a, override_dtype, override_shape)))
    zeros, ones, full, empty = f(a)
    assert_matches(zeros, np.zeros_like(a, override_dtype, shape=override_shape))
    assert_matches(ones, np.ones_like(a, override_dtype, shape=override_shape))
    assert_matches(full, np.full_like(a, 2, override_dtype, shape=override_shape))
    assert_matches(empty, np.zeros_like(a, override_dtype, shape=override_shape))


def test_like_functions_eager_casts_and_non_arrays():
    ints = np.arange(3, dtype=np.int8)
    assert_matches(xnp.full_like(ints, 2.7), np.full_like(ints, 2.7))
    assert_matches(xnp.full_like(np.zeros(2), np.array([1, 2])), np.full_like(np.zeros(2), np.array([1, 2])))
    assert_matches(xnp.zeros_like([[1, 2]]), np.zeros_like([[1, 2]]))
    assert_matches(xnp.ones_like(3.0), np.ones_like(3.0))
    assert_matches(xnp.zeros_like(ints, shape=4), np.zeros_like(ints, shape=4))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        xnp.full_like(ints, 300)


# ---------------------------------------------------------------- arange


number_st = st.one_of(st.integers(-20, 20), st.floats(-20, 20, allow_nan=False, width=32))


@given(number_st, st.one_of(st.none(), number_st), st.one_of(st.none(), number_st.filter(lambda v: v != 0)))
def test_arange_matches_numpy(start, stop, step):
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    expected = np.arange(*args)
    if expected.size > 200:
        return
    assert_matches(xlac.compile(lambda: xnp.arange(*args))(), expected)


@pytest.mark.parametrize("args, dtype", [
    ((5,), None), ((2, 7), None), ((7, 2, -2), None), ((0.0, 1.0, 0.1), None), ((1, 3.0), None),
    ((np.float32(1), 5), None), ((np.int8(1), np.int8(5)), None), ((10,), np.float32), ((0, 1, 0.1), np.float16),
    ((0.5, 5), np.int64), ((5, 0, -1), np.uint8), ((3,), np.complex64), ((0, 2), np.bool_), ((0, 1, 0.3), np.int8),
    ((-3.5, 2.25, 0.75), np.float32), ((10, 0), None), ((1e3, 1.5e3, 7.5), None)])
def test_arange_dtypes(args, dtype):
    assert_matches(xnp.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype))


def test_arange_lowers_to_iota():
    traced = xlac.compile(lambda: xnp.arange(2, 10, 2)).trace()
    assert "iota" in [node.primitive.name for node in traced.graph.nodes]
    assert all(node.origin == "arange" for node in traced.graph.nodes)


def test_arange_errors():
    with pytest.raises(ZeroDivisionError):
        xnp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="only supported for booleans when the result has at most length 2"):
        xnp.arange(0, 5, dtype=bool)
    with pytest.raises(ValueError, match="cannot compute length"):
        xnp.arange(0, np.inf)


# ---------------------------------------------------------------- linspace


@given(st.floats(-100, 100, width=32), st.floats(-100, 100, width=32), st.integers(0, 12), st.booleans(),
       st.sampled_from([None, np.float32, np.float64, np.int32, np.int64, np.complex64]))
def test_linspace_matches_numpy(start, stop, num, endpoint, dtype):
    f = xlac.compile(lambda: xnp.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype))
    got, got_step = f()
    expected, expected_step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype)
    if np.issubdtype(expected.dtype, np.integer):
        # NumPy floors float64 values; an ulp of difference may land on the other side of an integer
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(np.asarray(got), expected, atol=1)
    else:
        assert_matches(got, expected, rtol=1e-6 if expected.dtype == np.complex64 else None)
    assert_matches(got_step, np.float64(expected_step))


def test_linspace_dtype_rules_and_arrays():
    assert_matches(xnp.linspace(np.float32(0), np.float32(1), 4), np.linspace(np.float32(0), np.float32(1), 4))
    assert_matches(xnp.linspace(np.int8(0), 5, 3), np.linspace(np.int8(0), 5, 3))
    assert_matches(xnp.linspace(0, 1, 3, dtype=np.int8), np.linspace(0, 1, 3, dtype=np.int8))
    assert_matches(xnp.linspace(-1.5, 1.5, 4, dtype=int), np.linspace(-1.5, 1.5, 4, dtype=int))
    start, stop = np.array([0.0, 1.0]), np.array([[2.0, 5.0], [3.0, 4.0]])
    for axis in (0, 1, -1):
        assert_matches(xnp.linspace(start, stop, 5, axis=axis), np.linspace(start, stop, 5, axis=axis))
    f = xlac.compile(lambda a, b: xnp.linspace(a, b, 6, endpoint=False, axis=-1))
    assert_matches(f(start, stop), np.linspace(start, stop, 6, endpoint=False, axis=-1))


def test_linspace_endpoint_is_exactly_stop():
    # start + (num - 1) * step misses stop by an ulp here; NumPy (and xlac) store stop itself
    for start, stop, num in ((0, 1, 50), (-1.1, 3.3, 9)):
        got = np.asarray(xnp.linspace(start, stop, num))
        assert got[-1] == stop
        np.testing.assert_array_equal(got, np.linspace(start, stop, num))


def test_linspace_errors():
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
        xnp.linspace(0, 1, -1)
    with pytest.raises(np.exceptions.AxisError):
        xnp.linspace(0, 1, 3, axis=1)


# ---------------------------------------------------------------- matrices


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 5)), st.integers(-6, 6),
       st.sampled_from([None, np.int32, np.bool_, np.float32, np.complex64]))
def test_eye_tri_identity_match_numpy(n, m, k, dtype):
    f = xlac.compile(lambda: (xnp.eye(n, m, k, dtype), xnp.tri(n, m, k=k, dtype=dtype), xnp.identity(n, dtype)))
    eye, tri, identity = f()
    assert_matches(eye, np.eye(n, m, k, dtype=dtype or float))
    assert_matches(tri, np.tri(n, m, k, dtype=dtype or float))
    assert_matches(identity, np.identity(n, dtype=dtype or float))


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), st.integers(-4, 4), dtype_st)
def test_triu_tril_match_numpy(shape, k, dtype):
    m = (np.arange(int(np.prod(shape))) + 1).reshape(shape).astype(dtype)
    f = xlac.compile(lambda m: (xnp.triu(m, k), xnp.tril(m, k=k)))
    upper, lower = f(m)
    assert_matches(upper, np.triu(m, k))
    assert_matches(lower, np.tril(m, k))


def test_matrix_errors():
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        xnp.eye(-1)
    with pytest.raises(ValueError, match="at least 1-d"):
        xnp.triu(np.float32(1))


# ---------------------------------------------------------------- array / asarray


@pytest.mark.parametrize("obj", [[1, 2, 3], [[1.0, 2.0], [3.0, 4.0]], 3, 2.5, True, 1j, np.arange(4, dtype=np.int16),
                                 np.float32(1.5), [np.float32(1), 2.0]])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int64])
def test_array_and_asarray_eager(obj, dtype):
    if dtype is not None and isinstance(obj, complex):
        return
    for fn, ref in ((xnp.array, np.array), (xnp.asarray, np.asarray)):
        got = fn(obj, dtype)
        assert isinstance(got, xlac.Array)
        assert_matches(got, ref(obj, dtype))


def test_asarray_keeps_an_array_and_array_ndmin():
    a = xlac.asarray(np.arange(3))
    assert xnp.asarray(a) is a
    assert_matches(xnp.asarray(a, np.float32), np.arange(3, dtype=np.float32))
    assert_matches(xnp.array([1, 2], ndmin=3), np.array([1, 2], ndmin=3))
    assert_matches(xlac.compile(lambda x: xnp.array(x, ndmin=2))(np.arange(2)), np.array(np.arange(2), ndmin=2))


def test_array_and_asarray_inside_a_trace():
    x = np.arange(3, dtype=np.float32)

    @xlac.compile
    def f(x):
        same = xnp.asarray(x)
        assert same is x                        # a traced value passes through
        return (same, xnp.array(x, dtype=np.int32), xnp.asarray(2.0) + x, xnp.asarray([1, 2, 3]) * x,
                xnp.array([x, x + 1.0]), xnp.asarray([[1, 2], [3, 4]], dtype=np.float16))
    got = f(x)
    expected = (x, x.astype(np.int32), np.asarray(2.0) + x, np.asarray([1, 2, 3]) * x, np.array([x, x + 1.0]),
                np.asarray([[1, 2], [3, 4]], dtype=np.float16))
    for g, e in zip(got, expected, strict=True):
        assert_matches(g, e)


def test_array_errors():
    with pytest.raises(TypeError, match="not supported"):
        xnp.asarray(["a", "b"])
    with pytest.raises(TypeError, match="numeric arrays only"):
        xlac.compile(lambda x: xnp.asarray(["a"]) + x)(np.zeros(1))


def test_array_and_asarray_copy_true_give_a_separate_array():
    a = xlac.asarray(np.arange(3.0))
    for b in (xnp.array(a), xnp.asarray(a, copy=True)):
        assert b is not a
        b[0] = 9.0
        np.testing.assert_array_equal(np.asarray(a), [0.0, 1.0, 2.0])
    assert xnp.asarray(a) is a

    def f(x):
        y = xnp.asarray(x, copy=True)
        y[0] = 5.0
        return x, y
    x, y = xlac.compile(f)(np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(y), [5.0, 1.0, 2.0])
