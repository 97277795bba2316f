"""``out=`` (and ``where=``, ``casting=``) on xlac.numpy ufuncs and reductions against NumPy 2, compiled and eager."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches, tolerance


def outcome(fn):
    """``fn()``'s result, or the type of the exception it raised."""
    try:
        return fn()
    except Exception as e:          # noqa: BLE001 - the oracle's exception type is what we compare
        return type(e)


def compiled_with_out(call, inputs, out):
    """``call(ns, *inputs, out)`` with NumPy and compiled with xlac (out a NumPy argument): the results and
    the out arrays after."""
    np_out = out.copy()
    expected = call(np, *inputs, np_out)
    xl_out = out.copy()
    got = xlac.compile(lambda o, *xs: call(xnp, *xs, o))(xl_out, *inputs)
    return got, xl_out, expected, np_out


# ---------------------------------------------------------------- ufuncs


UFUNC_CASES = [
    ("add", (np.int8, np.int8), np.int16),
    ("add", (np.int8, np.int8), np.float32),
    ("subtract", (np.float32, np.float64), np.float32),
    ("multiply", (np.bool_, np.bool_), np.int32),
    ("divide", (np.int64, np.int64), np.float32),
    ("floor_divide", (np.int32, np.int32), np.int64),
    ("remainder", (np.float64, np.float64), np.float32),
    ("power", (np.float32, np.float32), np.complex64),
    ("maximum", (np.int16, np.uint8), np.float64),
    ("arctan2", (np.float32, np.float32), np.float64),
    ("less", (np.float64, np.int64), np.float64),
    ("equal", (np.int8, np.int8), np.int8),
    ("logical_and", (np.float32, np.int64), np.uint8),
    ("bitwise_xor", (np.int16, np.int16), np.int64),
    ("left_shift", (np.uint8, np.uint8), np.uint16),
    ("sqrt", (np.int32,), np.float32),
    ("exp", (np.float16,), np.float64),
    ("negative", (np.int8,), np.int64),
    ("absolute", (np.complex64,), np.float64),
    ("floor", (np.float64,), np.float32),
    ("isnan", (np.float32,), np.float64),
    ("invert", (np.uint16,), np.int32),
    ("positive", (np.float32,), np.float64),
]


@pytest.mark.parametrize("name, in_dtypes, out_dtype", UFUNC_CASES)
def test_ufunc_out_matches_numpy(name, in_dtypes, out_dtype, rng):
    inputs = [(rng.standard_normal((2, 3)) * 4).astype(d) for d in in_dtypes]
    if name in ("left_shift", "floor_divide"):
        inputs = [np.abs(x) % 7 + 1 for x in inputs]
    out = np.full((2, 3), 3, out_dtype)

    def call(ns, *xs):
        *xs, o = xs
        return getattr(ns, name)(*xs, out=o)
    got, xl_out, expected, np_out = compiled_with_out(call, inputs, out)
    rtol = max(tolerance(d) for d in in_dtypes + (out_dtype,))      # the loop may be less precise than out
    assert_matches(got, expected, rtol=rtol)
    assert_matches(xl_out, np_out, rtol=rtol)
    eager_out = out.copy()
    assert getattr(xnp, name)(*inputs, out=eager_out) is eager_out
    assert_matches(eager_out, np_out, rtol=rtol)


def test_out_broadcasts_inputs_to_its_shape_and_takes_a_tuple():
    x = np.arange(3.0)
    got, xl_out, expected, np_out = compiled_with_out(lambda ns, x, o: ns.add(x, 1, out=(o,)), [x], np.zeros((2, 3)))
    assert_matches(got, expected)
    assert_matches(xl_out, np_out)
    positional = np.zeros(3)
    assert xnp.multiply(x, 2, positional) is positional
    assert_matches(positional, x * 2)


def test_out_equal_to_an_input_updates_the_argument_as_numpy_does():
    def f(ns, a, b):
        r = ns.add(a, b, out=a)
        r[0] = -1.0                     # the returned array is `a` itself
        return a * 2, r is a
    a, b = np.arange(4.0), np.ones(4)
    expected_a = a.copy()
    expected, _ = f(np, expected_a, b)
    got_a = a.copy()
    got, _ = xlac.compile(lambda a, b: f(xnp, a, b))(got_a, b)
    assert_matches(got, expected)
    assert_matches(got_a, expected_a)
    handle = xlac.asarray(a)
    xlac.compile(lambda a, b: f(xnp, a, b))(handle, b)
    assert_matches(handle, expected_a)
    eager = xlac.asarray(a)
    assert xnp.add(eager, eager, out=eager) is eager
    assert_matches(eager, a + a)
    host = a.copy()
    assert xnp.subtract(host[::-1], host, out=host) is host
    assert_matches(host, a[::-1] - a)


def test_out_of_a_view_writes_the_base():
    def f(ns, a):
        ns.multiply(a[1], 10, out=a[0])
        ns.sqrt(a[:, 1:], out=a[:, :-1])
        return a.sum()
    got, xl_a, expected, np_a = compiled_with_out(lambda ns, a: f(ns, a), [], np.arange(1.0, 7.0).reshape(2, 3))
    assert_matches(got, expected)
    assert_matches(xl_a, np_a)


def test_where_with_out_leaves_the_other_elements():
    mask = np.array([[True, False, True]])
    call = lambda ns, x, o: ns.exp(x, out=o, where=mask)      # noqa: E731
    got, xl_out, expected, np_out = compiled_with_out(call, [np.arange(6.0).reshape(2, 3)], np.full((2, 3), -5.0))
    assert_matches(got, expected)
    assert_matches(xl_out, np_out)


@given(x_shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3),
       out_shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3),
       x_dtype=st.sampled_from([np.int8, np.int64, np.uint8, np.float32, np.float64, np.bool_]),
       out_dtype=st.sampled_from([np.int16, np.int64, np.uint16, np.float32, np.float64, np.bool_, np.complex64]),
       casting=st.sampled_from(["same_kind", "safe", "unsafe", "no"]))
def test_ufunc_out_shapes_dtypes_and_casting_follow_numpy(x_shape, out_shape, x_dtype, out_dtype, casting):
    x = np.ones(x_shape, x_dtype)
    np_out, xl_out = np.zeros(out_shape, out_dtype), np.zeros(out_shape, out_dtype)
    expected = outcome(lambda: np.add(x, x, out=np_out, casting=casting))
    got = outcome(lambda: xnp.add(x, x, out=xl_out, casting=casting))
    if isinstance(expected, type):
        assert got is expected or (isinstance(got, type) and issubclass(expected, got))
    else:
        assert got is xl_out
        assert_matches(xl_out, np_out)


@pytest.mark.parametrize("call, error, match", [
    (lambda: xnp.add(np.ones(3), 1, out=np.zeros(3, np.int32)), TypeError,
     r"Cannot cast ufunc 'add' output from dtype\('float64'\) to dtype\('int32'\) with casting rule 'same_kind'"),
    (lambda: xnp.add(np.ones((2, 3)), 1, out=np.zeros(3)), ValueError,
     r"non-broadcastable output operand with shape \(3,\) doesn't match the broadcast shape \(2,3\)"),
    (lambda: xnp.add(np.ones((4, 3)), 1, out=np.zeros((2, 3))), ValueError, "could not be broadcast"),
    (lambda: xnp.add(np.ones(3), 1, out=(np.zeros(3), np.zeros(3))), ValueError, "exactly one entry"),
    (lambda: xnp.add(np.ones(3), 1, out=[0.0, 0.0, 0.0]), TypeError, "return arrays must be of ArrayType"),
    (lambda: xnp.add(np.ones(3), 1, out=np.zeros(3), casting="sometimes"), ValueError, "casting must be one of"),
    (lambda: xnp.sqrt(np.array([4]), casting="no"), TypeError, r"Cannot cast ufunc 'sqrt' input from"),
    (lambda: xnp.less(np.ones(3), np.ones(3, np.float32), casting="no"), TypeError, "input 1"),
    (lambda: xnp.add(np.ones(3), 1, out=np.broadcast_to(np.zeros(1), (3,))), ValueError,
     "output array is read-only"),
    (lambda: xnp.add(np.ones(3), 1, np.zeros(3), out=np.zeros(3)), TypeError, "both a positional and keyword"),
])
def test_ufunc_out_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("x1, x2, out_dtype", [(1.5, 1, np.int64), (1, 2, np.int8), (True, 2, np.bool_),
                                                (1, 2.5, np.float16), (2, 3, np.uint8)])
def test_python_scalars_cast_to_out_as_numpy_does(x1, x2, out_dtype):
    np_out, xl_out = np.zeros((), out_dtype), np.zeros((), out_dtype)
    expected = outcome(lambda: np.add(x1, x2, out=np_out))
    got = outcome(lambda: xnp.add(x1, x2, out=xl_out))
    if isinstance(expected, type):
        assert isinstance(got, type) and issubclass(expected, got)      # NumPy's UFuncTypeError is a TypeError
    else:
        assert got is xl_out
    assert_matches(xl_out, np_out)


def test_compiled_out_errors_name_read_only_views_and_scalars():
    with pytest.raises(ValueError, match="output array is read-only"):
        xlac.compile(lambda x: xnp.add(x, 1, out=xnp.broadcast_to(x, (3,))))(np.ones(3))
    with pytest.raises(ValueError, match="output array is read-only"):
        xlac.compile(lambda x: xnp.negative(x[0], out=x.diagonal()))(np.ones((2, 2)))
    with pytest.raises(TypeError, match="return arrays must be of ArrayType"):
        xlac.compile(lambda x, s: xnp.add(x, 1, out=s))(np.ones(()), 2.0)


# ---------------------------------------------------------------- reductions


REDUCTION_CASES = [
    (lambda ns, x, o: ns.sum(x, out=o), np.int8, (), np.int16),
    (lambda ns, x, o: ns.sum(x, axis=0, out=o), np.float32, (4,), np.float64),
    (lambda ns, x, o: ns.sum(x, axis=1, out=o), np.float64, (3,), np.int32),
    (lambda ns, x, o: ns.sum(x, out=o), np.int8, (), np.bool_),
    (lambda ns, x, o: ns.sum(x, axis=1, dtype=np.float64, out=o, keepdims=True), np.int8, (3, 1), np.int8),
    (lambda ns, x, o: ns.sum(x, axis=1, out=o, where=np.array([True, False, True, True])), np.float64, (3,),
     np.float64),
    (lambda ns, x, o: ns.prod(x, axis=0, out=o), np.float64, (4,), np.int64),
    (lambda ns, x, o: ns.max(x, axis=1, out=o), np.float64, (3,), np.int64),
    (lambda ns, x, o: ns.min(x, out=o, initial=-1.5), np.float64, (), np.float32),
    (lambda ns, x, o: ns.amax(x, axis=(0, 1), out=o), np.int8, (), np.int16),
    (lambda ns, x, o: ns.argmax(x, axis=1, out=o), np.float64, (3,), np.int32),
    (lambda ns, x, o: ns.argmin(x, out=o), np.int64, (), np.int8),
    (lambda ns, x, o: ns.argmax(x, axis=0, keepdims=True, out=o), np.float32, (1, 4), np.int64),
    (lambda ns, x, o: ns.all(x, axis=0, out=o), np.float64, (4,), np.float32),
    (lambda ns, x, o: ns.any(x, axis=1, out=o), np.int64, (3,), np.int8),
    (lambda ns, x, o: ns.mean(x, axis=1, out=o), np.int64, (3,), np.int64),
    (lambda ns, x, o: ns.mean(x, out=o), np.float64, (), np.int32),
    (lambda ns, x, o: ns.mean(x, axis=0, out=o), np.int32, (4,), np.float32),
    (lambda ns, x, o: ns.mean(x, axis=1, keepdims=True, out=o), np.float16, (3, 1), np.float16),
    (lambda ns, x, o: ns.var(x, axis=1, out=o), np.int64, (3,), np.int64),
    (lambda ns, x, o: ns.var(x, axis=0, ddof=1, out=o), np.float64, (4,), np.float32),
    (lambda ns, x, o: ns.std(x, out=o), np.float32, (), np.float64),
    (lambda ns, x, o: ns.cumsum(x, axis=1, out=o), np.int8, (3, 4), np.float32),
    (lambda ns, x, o: ns.cumsum(x, out=o), np.float64, (12,), np.int64),
    (lambda ns, x, o: ns.cumprod(x, axis=0, out=o), np.int16, (3, 4), np.int16),
    (lambda ns, x, o: ns.nansum(x, axis=0, out=o), np.float64, (4,), np.int64),
    (lambda ns, x, o: ns.nanprod(x, out=o), np.float32, (), np.float64),
    (lambda ns, x, o: ns.nanmean(x, axis=1, out=o), np.float64, (3,), np.float32),
    (lambda ns, x, o: ns.nanmax(x, axis=1, out=o), np.float64, (3,), np.int64),
    (lambda ns, x, o: ns.nanmin(x, out=o), np.float32, (), np.float64),
    (lambda ns, x, o: ns.trace(x, 1, out=o), np.int8, (), np.float32),
]


@pytest.mark.parametrize("call, x_dtype, out_shape, out_dtype", REDUCTION_CASES)
def test_reduction_out_matches_numpy(call, x_dtype, out_shape, out_dtype):
    x = (np.arange(12).reshape(3, 4) * 37 % 23 - 9.5).astype(x_dtype)
    if any(name.startswith("nan") for name in call.__code__.co_names):
        x[1, 2] = np.nan
    out = np.full(out_shape, 7, out_dtype)
    got, xl_out, expected, np_out = compiled_with_out(lambda ns, x, o: call(ns, x, o), [x], out)
    rtol = max(tolerance(x_dtype), tolerance(out_dtype))
    assert_matches(got, expected, rtol=rtol)
    assert_matches(xl_out, np_out, rtol=rtol)
    eager_out = out.copy()
    assert call(xnp, x, eager_out) is eager_out
    assert_matches(eager_out, np_out, rtol=rtol)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
       data=st.data(),
       name=st.sampled_from(["sum", "prod", "max", "mean", "any", "cumsum"]),
       x_dtype=st.sampled_from([np.int8, np.int32, np.float32, np.float64]),
       out_dtype=st.sampled_from([np.int16, np.int64, np.float32, np.float64, np.bool_]))
def test_reduction_out_over_axes_and_dtypes(shape, data, name, x_dtype, out_dtype):
    x = (np.arange(np.prod(shape)).reshape(shape) % 5 + 1).astype(x_dtype)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    keepdims = name != "cumsum" and data.draw(st.booleans())
    kwargs = {"keepdims": True} if keepdims else {}
    result_shape = np.asarray(getattr(np, name)(x, axis=axis, **kwargs)).shape
    np_out, xl_out = np.zeros(result_shape, out_dtype), np.zeros(result_shape, out_dtype)
    expected = outcome(lambda: getattr(np, name)(x, axis=axis, out=np_out, **kwargs))
    got = outcome(lambda: getattr(xnp, name)(x, axis=axis, out=xl_out, **kwargs))
    if isinstance(expected, type):
        assert got is expected
    else:
        assert got is xl_out
        assert_matches(xl_out, np_out, rtol=max(tolerance(x_dtype), tolerance(out_dtype)))


@pytest.mark.parametrize("call, error, match", [
    (lambda o: xnp.sum(np.ones((2, 3)), axis=0, out=o((1, 3))), ValueError, "wrong number of dimensions"),
    (lambda o: xnp.sum(np.ones((2, 3)), axis=0, keepdims=True, out=o((3,))), ValueError,
     "wrong number of dimensions: Found 1 but expected 2"),
    (lambda o: xnp.max(np.ones((2, 3)), axis=0, out=o((2,))), ValueError, "shape"),
    (lambda o: xnp.argmax(np.ones((2, 3)), axis=0, out=o((2,), np.int64)), ValueError,
     "output array does not match result of np.argmax"),
    (lambda o: xnp.argmin(np.ones(3), out=o((), np.float64)), TypeError, "Cannot cast scalar from"),
    (lambda o: xnp.cumsum(np.ones((2, 3)), out=o((2, 3))), ValueError, "wrong size for the accumulation"),
    (lambda o: xnp.std(np.ones(3), out=o((), np.int64)), TypeError, "Cannot cast ufunc 'sqrt' output"),
    (lambda o: xnp.nanmean(np.ones(3), out=o((), np.int64)), TypeError, "out must be inexact"),
    (lambda o: xnp.sum(np.ones(3), out=(o(()),)), TypeError, "return arrays must be of ArrayType"),
    (lambda o: xnp.mean(np.ones(3), out=np.broadcast_to(o(()), ())), ValueError, "output array is read-only"),
])
def test_reduction_out_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(lambda shape, dtype=np.float64: np.zeros(shape, dtype))


def test_reduction_out_returns_the_out_tracer_compiled():
    def f(x, o):
        r = xnp.sum(x, axis=0, out=o)
        r += 1.0
        return o * 1.0
    o = np.zeros(3)
    got = xlac.compile(f)(np.ones((2, 3)), o)
    assert_matches(got, np.full(3, 3.0))
    assert_matches(o, np.full(3, 3.0))
    handle = xlac.asarray(np.zeros(3))
    xlac.compile(f)(np.ones((2, 3)), handle)
    assert_matches(handle, np.full(3, 3.0))
