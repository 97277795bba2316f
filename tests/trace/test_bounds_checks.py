"""Traced indices out of bounds raise NumPy's IndexError after the call, and leave the arrays as NumPy does."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.numpy as xnp


def _numpy_outcome(fn, *args):
    """(result or the IndexError's text, the arguments afterwards) of running ``fn`` with NumPy."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        result = fn(*args)
    except IndexError as e:
        result = str(e)
    return result, args


def _xlac_outcome(compiled, *args):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        result = np.asarray(compiled(*args))
    except IndexError as e:
        result = str(e).splitlines()[0]
    return result, args


def _assert_same(fn, *args, compiled=None):
    expected, expected_args = _numpy_outcome(fn, *args)
    got, got_args = _xlac_outcome(compiled or xlac.compile(fn), *args)
    if isinstance(expected, str):
        assert got == expected
    else:
        np.testing.assert_array_equal(got, expected)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)


def read_one(x, i):
    return x[i]


def read_row(x, i):
    return x[i, 1:]


def read_many(x, idx):
    return x[idx] * 2


def write_one(x, i, v):
    x[i] = v
    return x.sum()


def add_at(x, idx):
    x[idx] += 1.0
    return x


FUNCTIONS = {fn.__name__: xlac.compile(fn) for fn in (read_one, read_row, read_many, write_one, add_at)}


@settings(max_examples=30, deadline=None)
@given(st.integers(-8, 8), st.integers(1, 5))
def test_scalar_reads_and_writes_match_numpy_in_and_out_of_bounds(i, n):
    x = np.arange(float(n))
    _assert_same(read_one, x, i, compiled=FUNCTIONS["read_one"])
    _assert_same(write_one, x, i, 7.0, compiled=FUNCTIONS["write_one"])
    _assert_same(read_row, np.arange(3.0 * n).reshape(n, 3), i, compiled=FUNCTIONS["read_row"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-6, 6), min_size=1, max_size=4))
def test_index_arrays_report_the_first_index_out_of_bounds_as_numpy_does(indices):
    x = np.arange(4.0)
    idx = np.array(indices)
    _assert_same(read_many, x, idx, compiled=FUNCTIONS["read_many"])
    _assert_same(add_at, x, idx, compiled=FUNCTIONS["add_at"])


def test_writes_before_the_failing_index_are_made_and_the_ones_after_are_not():
    def f(x, i, j):
        x[i] = 5.0
        x[j] = 7.0            # fails for j = 9: NumPy raises here
        x[1:3] += 1.0
        x *= 2.0
        return x

    _assert_same(f, np.zeros(4), 1, 9)
    _assert_same(f, np.zeros(4), 1, 2)
    array = xlac.asarray(np.zeros(4))                  # a donated xlac.Array: the same
    with pytest.raises(IndexError):
        xlac.compile(f)(array, 2, -5)
    np.testing.assert_array_equal(np.asarray(array), [0, 0, 5, 0])


def test_the_message_names_the_index_the_axis_its_size_and_the_users_line():
    def f(x, i, j):
        return x[i, j]

    with pytest.raises(IndexError) as error:
        xlac.compile(f)(np.zeros((2, 3)), 1, 3)
    first, where = str(error.value).splitlines()
    assert first == "index 3 is out of bounds for axis 1 with size 3"
    assert where.strip().startswith(f"at {__file__}:{f.__code__.co_firstlineno + 1}")


def test_check_bounds_false_clamps_reads_and_drops_index_array_writes():
    read = xlac.compile(read_one, check_bounds=False)
    assert float(read(np.arange(3.0), 10)) == 2.0
    assert float(read(np.arange(3.0), -10)) == 0.0
    written = xlac.compile(add_at, check_bounds=False)(np.zeros(3), np.array([0, 5]))
    np.testing.assert_array_equal(np.asarray(written), [1, 0, 0])


def test_a_program_without_traced_indices_has_no_checks():
    traced = xlac.compile(lambda x: x[1] + x[-1]).trace(np.arange(3.0))
    assert traced.checks == []
    assert len(traced.ir("final").outputs) == 1


def test_checks_hold_through_grad_jvp_and_vmap():
    loss = lambda w, i: (w[i] ** 2).sum()                       # noqa: E731
    grad = xlac.compile(xlac.grad(loss))
    np.testing.assert_array_equal(np.asarray(grad(np.arange(3.0), np.array([2, 2]))), [0, 0, 8])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        grad(np.arange(3.0), np.array([0, 3]))
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        xlac.jvp(lambda w: w[4], (np.arange(3.0),), (np.ones(3),))
    gather = xlac.vmap(lambda x, i: x[i], in_axes=(None, 0))
    np.testing.assert_array_equal(np.asarray(gather(np.arange(3.0), np.array([2, 0]))), [2, 0])
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 0 with size 3"):
        xlac.compile(gather)(np.arange(3.0), np.array([0, 1, -7, 2]))


def test_eager_indexing_with_an_index_on_the_device_raises():
    x = xlac.asarray(np.arange(3.0))
    assert float(x[xlac.asarray(np.int64(2))]) == 2.0
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        x[xlac.asarray(np.int64(5))]
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        xnp.take(x, xlac.asarray(np.array([0, 3])))


def test_the_ahead_of_time_executable_checks_too():
    compiled = xlac.compile(read_one).lower(np.arange(3.0), 0).compile()
    assert float(compiled(np.arange(3.0), 2)) == 2.0
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        compiled(np.arange(3.0), 3)


def test_a_failed_call_leaves_no_rebinding_and_the_next_call_works():
    class Model:
        def __init__(self):
            self.table = xlac.asarray(np.arange(4.0))

        @xlac.compile
        def lookup(self, i):
            self.last = self.table[i]
            return self.last

    model = Model()
    with pytest.raises(IndexError):
        model.lookup(4)
    assert not hasattr(model, "last")
    assert float(model.lookup(3)) == 3.0 and float(model.last) == 3.0
