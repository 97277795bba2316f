"""The ufunc methods (reduce, accumulate, reduceat, outer, at) against NumPy's, reached both ways: as
``xnp.add.reduce`` and as NumPy's ``np.add.reduce`` on traced values (``__array_ufunc__``), compiled and eager.
Where NumPy raises, xlac raises the same exception type.

Float tolerance: a reorderable fold combines pairwise where NumPy folds in order, so each result is off by
at most one rounding per element folded (n eps relative, n the elements reduced), as for ``sum``."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

REORDERABLE = ["add", "multiply", "maximum", "minimum", "fmax", "logical_and", "logical_xor", "bitwise_and",
               "bitwise_or", "gcd", "hypot", "logaddexp"]
IN_ORDER = ["subtract", "divide", "power", "arctan2", "remainder", "lcm", "copysign"]
DTYPES = [np.dtype(t) for t in ("bool", "int32", "int64", "float32", "float64")]


def values(data, shape, dtype, name):
    """Elements every ufunc here takes without overflow, division by zero or negative integer powers."""
    if dtype == np.bool_:
        return data.draw(st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
                         .map(lambda v: np.array(v, bool).reshape(shape)))
    low, high = (0, 3) if name in ("power", "multiply") else (1, 9)
    ints = data.draw(st.lists(st.integers(low, high), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    x = np.array(ints).reshape(shape)
    return (x / 4 + 0.25).astype(dtype) if dtype.kind == "f" else x.astype(dtype)


def numpy_result(fn):
    try:
        return fn(), None
    except Exception as error:        # NumPy's own error: xlac must raise the same builtin type
        return None, next(t for t in type(error).__mro__ if t.__module__ == "builtins")


def check(expected_and_error, run, n_folded: int):
    expected, error = expected_and_error
    if error is not None:
        with pytest.raises(error):
            run()
        return
    got = run()
    expected = np.asarray(expected)
    rtol = 4 * max(n_folded, 1) * np.finfo(expected.dtype).eps if expected.dtype.kind == "f" else None
    assert_matches(got, expected, rtol=rtol)


def both_ways(name, method, *args, **kwargs):
    """The xlac results of ``np.<name>.<method>`` on a traced first argument, of ``xnp.<name>.<method>``
    compiled, and of it eagerly."""
    compiled_numpy = xlac.compile(lambda x: getattr(getattr(np, name), method)(x, *args, **kwargs))
    compiled_xnp = xlac.compile(lambda x: getattr(getattr(xnp, name), method)(x, *args, **kwargs))
    return [compiled_numpy, compiled_xnp, lambda x: getattr(getattr(xnp, name), method)(x, *args, **kwargs)]


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_reduce_matches_numpy(data):
    name = data.draw(st.sampled_from(REORDERABLE + IN_ORDER), label="ufunc")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(0 if name in REORDERABLE else 1, 4), min_size=0, max_size=3),
                            label="shape"))
    x = values(data, shape, dtype, name)
    ndim = len(shape)
    axes = data.draw(st.sampled_from([None, *range(-ndim, ndim)] +
                                     ([(0, ndim - 1)] if ndim > 1 and name in REORDERABLE else [])), label="axis")
    kwargs = {"axis": axes, "keepdims": data.draw(st.booleans(), label="keepdims")}
    if ndim and data.draw(st.booleans(), label="with initial and where"):
        kwargs["initial"] = x.flat[0] if x.size else np.array(1).astype(dtype)[()]
        kwargs["where"] = data.draw(st.lists(st.booleans(), min_size=shape[-1], max_size=shape[-1]).map(np.array),
                                    label="where")
    ufunc = getattr(np, name)
    expected = numpy_result(lambda: ufunc.reduce(x, **kwargs))
    n = x.size if axes is None else int(np.prod([shape[a] for a in np.atleast_1d(axes)])) if ndim else 1
    for run in both_ways(name, "reduce", **kwargs):
        check(expected, lambda: run(x), n)


@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_accumulate_matches_numpy(data):
    name = data.draw(st.sampled_from(REORDERABLE + IN_ORDER), label="ufunc")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=2), label="shape"))
    x = values(data, shape, dtype, name)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    expected = numpy_result(lambda: getattr(np, name).accumulate(x, axis=axis))
    for run in both_ways(name, "accumulate", axis=axis):
        check(expected, lambda: run(x), shape[axis])


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_reduceat_matches_numpy(data):
    name = data.draw(st.sampled_from(["add", "multiply", "maximum", "subtract", "bitwise_or"]), label="ufunc")
    dtype = data.draw(st.sampled_from([np.dtype("int32"), np.dtype("float64")]), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=2), label="shape"))
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    indices = data.draw(st.lists(st.integers(0, shape[axis] - 1), min_size=1, max_size=4), label="indices")
    x = values(data, shape, dtype, name)
    expected = numpy_result(lambda: getattr(np, name).reduceat(x, indices, axis=axis))
    for run in both_ways(name, "reduceat", indices, axis=axis):
        check(expected, lambda: run(x), shape[axis])


@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_outer_matches_numpy(data):
    name = data.draw(st.sampled_from(["add", "subtract", "multiply", "greater", "arctan2", "divmod"]), label="ufunc")
    a_shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="a"))
    b_shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="b"))
    a, b = values(data, a_shape, np.dtype("float64"), name), values(data, b_shape, np.dtype("int32"), name)
    expected = getattr(np, name).outer(a, b)
    for run in both_ways(name, "outer", b):
        got = run(a)
        for g, e in zip(got, expected) if name == "divmod" else [(got, expected)]:
            assert_matches(g, e)


AT_UFUNCS = ["add", "subtract", "multiply", "maximum", "divide", "power", "negative", "square", "floor"]


@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_at_applies_every_repeated_index_as_numpy(data):
    name = data.draw(st.sampled_from(AT_UFUNCS), label="ufunc")
    dtype = data.draw(st.sampled_from([np.dtype("int32"), np.dtype("float32"), np.dtype("float64")]), label="dtype")
    n = data.draw(st.integers(1, 5), label="n")
    index = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6), label="index")
    x = values(data, (n, 2), dtype, name)
    ufunc = getattr(np, name)
    operands = (values(data, (len(index), 2), dtype, name),) if ufunc.nin == 2 else ()

    def program(module):
        def f(a):
            a = a.copy()
            getattr(getattr(module, name), "at")(a, index, *operands)
            return a
        return f
    expected, error = numpy_result(lambda: program(np)(x))
    for run in (xlac.compile(program(np)), xlac.compile(program(xnp))):
        check((expected, error), lambda: run(x), len(index))
    if error is None:
        eager = x.copy()
        getattr(xnp, name).at(eager, index, *operands)         # writes into the NumPy array itself
        assert_matches(eager, expected, rtol=8 * np.finfo(dtype).eps if dtype.kind == "f" else None)


def test_at_with_traced_indices_and_a_ufunc_without_a_scatter():
    def f(a, i):
        np.power.at(a, i, 2)
        return a
    x, index = np.array([1, 2, 3, 4]), np.array([1, 1, 3])
    expected = f(x.copy(), index)
    assert_matches(xlac.compile(f)(x.copy(), index), expected)


def test_reduce_errors_are_numpys_with_the_users_line():
    x = np.ones((2, 3))
    line = test_reduce_errors_are_numpys_with_the_users_line.__code__.co_firstlineno
    cases = [
        (lambda: xnp.subtract.reduce(x, axis=(0, 1)), ValueError,
         r"reduction operation 'subtract' is not reorderable, so at most one axis may be specified", 4),
        (lambda: xnp.maximum.reduce(np.ones((0, 2))), ValueError,
         r"zero-size array to reduction operation maximum which has no identity", 6),
        (lambda: xnp.divide.reduce(x, where=np.array([True, False, True])), ValueError,
         r"reduction operation 'divide' does not have an identity, so to use a where mask one has to specify", 8),
        (lambda: xnp.negative.reduce(x), ValueError, r"reduce only supported for binary functions", 10),
        (lambda: xnp.divmod.accumulate(x), ValueError, r"accumulate only supported for functions returning a single",
         11),
        (lambda: xnp.equal.reduce(np.arange(3)), TypeError, r"No loop matching the specified signature", 13),
        (lambda: xnp.add.at(x, [0]), ValueError, r"second operand needed for ufunc", 14),
    ]
    for fn, error, message, offset in cases:
        with pytest.raises(error, match=message):
            fn()
        with pytest.raises(error, match=rf"{message}.*\n  at .*test_ufunc_methods.py:{line + offset}"):
            xlac.compile(lambda a: fn())(x)


def test_methods_of_every_ufunc_are_there_as_numpys():
    for name in ("add", "subtract", "gcd", "logical_xor", "negative", "sqrt"):
        ours, theirs = getattr(xnp, name), getattr(np, name)
        assert (ours.nin, ours.nout, ours.identity) == (theirs.nin, theirs.nout, theirs.identity)
        for method in ("reduce", "accumulate", "reduceat", "outer", "at"):
            assert callable(getattr(ours, method)) and hasattr(theirs, method)


def test_a_fold_in_order_longer_than_xlac_unrolls_is_refused_by_name():
    with pytest.raises(xlac.UnsupportedError, match=r"subtract: reducing or accumulating an axis of 2000 elements "
                                                    r"with a ufunc that is not reorderable .* at most 1024"):
        xlac.compile(lambda x: xnp.subtract.reduce(x))(np.ones(2000))
    got = xlac.compile(lambda x: xnp.logaddexp.reduce(x))(np.zeros(2000))      # reorderable: log2(n) steps
    np.testing.assert_allclose(float(got), np.logaddexp.reduce(np.zeros(2000)), rtol=11 * 2.3e-16)


def test_numpys_methods_on_lists_of_traced_arrays():
    def f(a, b, c):            # NumPy finds no traced operand inside a list: the converter routes the call
        return np.logical_and.reduce([a > 0, b > 0, c < 0]), np.maximum.reduce([a, b, c]), np.add.outer([1, 2], a)
    args = np.array([1.0, -1.0, 2.0]), np.array([2.0, 3.0, -1.0]), np.array([-1.0, -2.0, -3.0])
    for got, expected in zip(xlac.compile(f)(*args), f(*args)):
        assert_matches(got, expected)
