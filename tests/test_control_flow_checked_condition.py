"""A while_loop whose cond_fun indexes with a traced index: the check is carried out of the loop and raises
NumPy's IndexError after the call, naming the user's line; values and vmap against jax.lax.while_loop."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac

FEW = settings(max_examples=10, deadline=None)
pytestmark = pytest.mark.usefixtures("x64_module")


def _first_zero(x, start):
    return xlac.while_loop(lambda i: x[i] != 0, lambda i: i + 1, start)     # the condition's line


def _numpy_first_zero(x, start):
    i = start
    while x[i] != 0:
        i += 1
    return i


@FEW
@given(values=st.lists(st.integers(0, 2), min_size=1, max_size=6), start=st.integers(-8, 8))
def test_a_condition_that_indexes_runs_as_numpy_or_raises_its_index_error(values, start):
    x = np.array(values)
    f = xlac.compile(_first_zero)
    try:
        expected = _numpy_first_zero(x, start)
    except IndexError as error:
        with pytest.raises(IndexError, match=str(error)) as raised:
            f(x, start)
        assert "test_control_flow_checked_condition.py:18" in str(raised.value)
        return
    assert int(f(x, start)) == expected
    if start >= 0:
        assert int(f(x, start)) == int(jax.lax.while_loop(lambda i: jnp.asarray(x)[i] != 0, lambda i: i + 1, start))


def test_checks_of_the_body_and_the_condition_raise_in_the_order_numpy_meets_them():
    def f(x, idx, limit):
        def body(state):
            i, total = state
            return i + 1, total + x[idx[i]]                  # the body's check
        return xlac.while_loop(lambda s: idx[s[0]] < limit, body, (0, 0.0))[1]     # the condition's check
    x, g = np.arange(5.0), xlac.compile(f)
    assert float(g(x, np.array([1, 2, 3, 9]), 9)) == 6.0
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        g(x, np.array([1, 7, 3, 9]), 9)                      # the body fails first, in the second iteration
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        g(x, np.array([1, 2, 3, 4]), 9)                      # the condition runs off the end of idx


def test_a_failed_check_in_the_condition_stops_the_loop_and_its_writes():
    def f(x, out):
        def body(i):
            out[i] = x[i] * 2
            return i + 1
        return xlac.while_loop(lambda i: x[i] > 0, body, 0)
    out = np.zeros(3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        xlac.compile(f)(np.array([1.0, 2.0, 3.0]), out)        # would loop forever on a clamped index
    np.testing.assert_array_equal(out, [2.0, 4.0, 6.0])


def test_vmap_of_a_loop_whose_condition_indexes_equals_jax():
    x = np.array([3, 2, 0, 1, 0])
    starts = np.array([0, 3, 4, 2])
    got = xlac.vmap(lambda s: _first_zero(x, s))(starts)
    expected = jax.vmap(lambda s: jax.lax.while_loop(lambda i: jnp.asarray(x)[i] != 0, lambda i: i + 1, s))(starts)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_a_python_while_on_a_traced_index_is_converted_and_checked():
    def f(x, i):
        while x[i] != 0:
            i += 1
        return i
    g = xlac.compile(f)
    assert int(g(np.array([4, 0, 1]), 0)) == 1
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3") as raised:
        g(np.array([4, 5, 1]), 0)
    assert "test_control_flow_checked_condition.py" in str(raised.value)
