"""copyto, put, place, fill_diagonal, ndarray.fill and xlac.inplace_update against NumPy, compiled and eager."""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches


def compiled_and_numpy(body, *arrays):
    """``body(ns, *arrays)`` run with NumPy on copies and compiled with xlac on other copies: the arrays after."""
    np_arrays = [a.copy() for a in arrays]
    body(np, *np_arrays)
    xl_arrays = [a.copy() for a in arrays]
    xlac.compile(lambda *a: body(xnp, *a))(*xl_arrays)
    return xl_arrays, np_arrays


@pytest.mark.parametrize("body", [
    lambda ns, a, b: ns.copyto(a, b),
    lambda ns, a, b: ns.copyto(a, b[0]),
    lambda ns, a, b: ns.copyto(a, b, where=b > 0.5),
    lambda ns, a, b: ns.copyto(a, 7),
    lambda ns, a, b: ns.put(a, [0, 5, -1], [9.0, 8.0]),
    lambda ns, a, b: ns.put(a, [1, 100], [3.0], mode="clip"),
    lambda ns, a, b: ns.put(a, [-13, 14], [3.0, 4.0], mode="wrap"),
    lambda ns, a, b: ns.place(a, np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]], bool), [1.0, 2.0, 3.0]),
    lambda ns, a, b: ns.fill_diagonal(a, 5.0),
    lambda ns, a, b: ns.fill_diagonal(a[:, :3], [1.0, 2.0, 3.0]),
    lambda ns, a, b: ns.fill_diagonal(a.T, 2.5),
    lambda ns, a, b: a.fill(3.0),
    lambda ns, a, b: a[1:].fill(-1.0),
])
def test_writing_functions_match_numpy(body):
    a = np.arange(12.0).reshape(3, 4)
    b = np.random.default_rng(0).random((3, 4))
    got, expected = compiled_and_numpy(body, a, b)
    for g, e in zip(got, expected):
        assert_matches(g, e)


def test_fill_diagonal_wrap_and_nd():
    for shape, wrap in [((7, 3), True), ((7, 3), False), ((3, 3, 3), False)]:
        got, expected = compiled_and_numpy(lambda ns, a: ns.fill_diagonal(a, 4.0, wrap=wrap), np.zeros(shape))
        assert_matches(got[0], expected[0])


def test_eager_writes_update_the_array_handle():
    a = xlac.asarray(np.zeros(4))
    same = a
    xnp.copyto(a, np.arange(4.0))
    xnp.put(a, [0], [10.0])
    assert_matches(same, np.array([10.0, 1.0, 2.0, 3.0]))


def test_copyto_refuses_casts_numpy_refuses():
    with pytest.raises(TypeError, match="Cannot cast array data from dtype\\('float64'\\) to dtype\\('int64'\\)"):
        xlac.compile(lambda a, b: xnp.copyto(a, b))(np.zeros(3, np.int64), np.ones(3))
    with pytest.raises(TypeError, match="Cannot cast array data from dtype\\('float64'\\) to dtype\\('int64'\\)"):
        xnp.copyto(np.zeros(3, np.int64), np.ones(3))


def test_inplace_update_keeps_or_takes_the_dtype():
    a = xlac.asarray(np.zeros(3, np.float32))
    xlac.inplace_update(a, np.array([1.7, 2.2, 3.9]), keep_input_dtype=True)
    assert_matches(a, np.array([1.7, 2.2, 3.9], np.float32))
    xlac.inplace_update(a, np.array([1, 2]))
    assert_matches(a, np.array([1, 2]))

    def f(x, v):
        xlac.inplace_update(x, v, keep_input_dtype=True)
        return x * 2
    x = np.zeros(2, np.int32)
    out = xlac.compile(f)(x, np.array([1.5, -2.5]))
    assert_matches(x, np.array([1, -2], np.int32))
    assert_matches(out, np.array([2, -4], np.int32))
    with pytest.raises(xlac.UnsupportedError, match="keep_input_dtype=True"):
        xlac.compile(lambda x, v: xlac.inplace_update(x, v))(np.zeros(2, np.int32), np.ones(2))


@pytest.mark.parametrize("body", [
    lambda ns, a: ns.copyto(a, np.arange(12.0).reshape(3, 4), where=np.arange(4) > 1),
    lambda ns, a: ns.put(a, [0, -1], [9.0, 8.0]),
    lambda ns, a: ns.place(a, np.eye(3, 4, dtype=bool), [4.0, 5.0]),
    lambda ns, a: ns.fill_diagonal(a, 6.0),
])
def test_writing_functions_take_numpy_destinations_eagerly(body):
    expected, got = np.zeros((3, 4)), np.zeros((3, 4))
    body(np, expected)
    body(xnp, got)
    assert_matches(got, expected)


def test_writing_functions_refuse_non_arrays():
    with pytest.raises(TypeError, match="the destination must be an array"):
        xnp.copyto([0.0, 0.0], np.ones(2))
    with pytest.raises(TypeError, match="the destination must be an array"):
        xlac.compile(lambda x: xnp.put(2.0, [0], x))(np.ones(1))


@pytest.mark.usefixtures("xla_defaults")
def test_returning_an_updated_argument_returns_it_without_a_copy():
    """``x[0] = 1; return x`` returns x itself, as NumPy does, and XLA copies nothing to give it twice."""
    def f(x, y):
        x[0] = 1.0
        x += y
        return x, x * 2
    compiled = xlac.compile(f)
    a = xlac.asarray(np.zeros(4))
    same, doubled = compiled(a, np.ones(4))
    assert same is a
    np.testing.assert_array_equal(np.asarray(a), [2.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(doubled), [4.0, 2.0, 2.0, 2.0])
    entry = compiled.lower(a, np.ones(4)).compile().as_text().split("ENTRY")[1]
    assert " copy(" not in entry, entry
    host = np.zeros(4)                       # a NumPy argument: updated in place and returned itself
    same, _ = compiled(host, np.ones(4))
    assert same is host
    np.testing.assert_array_equal(host, [2.0, 1.0, 1.0, 1.0])
    written = np.zeros(4)                    # also where only windows of it are written back
    assert xlac.compile(_write_first)(written, 3.0) is written
    np.testing.assert_array_equal(written, [3.0, 0.0, 0.0, 0.0])


def _write_first(x, v):
    x[0] = v
    return x
