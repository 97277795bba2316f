"""Converted Python loops whose trip depends on traced values (xlac/convert/loops.py), against NumPy."""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def halvings(x):
    n = 0
    while x > 1.0:
        x = x / 2
        n += 1
    return n, x


def weighted_prefix(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i] * i
    for j in range(n - 1, 0, -2):
        x[j] = -x[j]
    return total, x


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 1e6))
def test_a_while_on_a_traced_test_gives_numpys_value_and_iteration_count(x):
    n, y = xlac.compile(halvings)(x)
    assert (int(n), float(y)) == halvings(x)
    assert float(xlac.compile(newton_sqrt)(x)) == pytest.approx(newton_sqrt(x), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 8))
def test_a_for_over_a_traced_range_carries_scalars_and_writes_in_place(n):
    f = xlac.compile(weighted_prefix)
    total, x = f(np.arange(8.0), n)
    expected_total, expected_x = weighted_prefix(np.arange(8.0), n)
    assert float(total) == expected_total
    np.testing.assert_array_equal(np.asarray(x), expected_x)


def test_one_loop_node_and_one_trace_whatever_the_trip_count():
    f = xlac.compile(weighted_prefix)
    for n in (2, 7):
        f(np.arange(8.0), n)
    assert f.cache_info().traces == 1
    ir = str(f.trace(np.arange(8.0), 3).ir())
    assert ir.count("= while[") == 2


def test_concrete_loops_stay_python_loops():
    def f(x):
        for i in range(3):
            x = x + i
        k = 0
        while k < 2:
            k += 1
        return x, i, k
    got = xlac.compile(f)(1.0)
    assert [float(v) for v in got] == [4.0, 2.0, 2.0]
    assert "while" not in str(xlac.compile(f).trace(1.0).ir())


def test_a_while_that_becomes_traced_rolls_from_there():
    def f(x):
        k = 0
        total = 0.0
        while k < 3 or total < x:          # concrete for three iterations, then traced
            total = total + 1.0
            k += 1
        return total
    for x in (1.0, 7.5):
        assert float(xlac.compile(f)(x)) == f(x)


def test_vmap_through_a_converted_while_matches_each_example():
    xs = np.array([40.0, 0.5, 3.0, 1000.0])
    ns, ys = xlac.vmap(halvings)(xs)
    for x, n, y in zip(xs, np.asarray(ns), np.asarray(ys)):
        assert (int(n), float(y)) == halvings(x)


def test_reverse_mode_through_a_traced_trip_count_is_refused_clearly():
    with pytest.raises(xlac.UnsupportedError, match="fori_loop"):
        xlac.grad(lambda a: newton_sqrt(a))(2.0)


# ---------------------------------------------------------------- errors


def test_a_variable_first_bound_in_a_rolled_loop_and_read_after_is_refused():
    def f(x, n):
        for i in range(n):
            last = x[i]
        return last
    with pytest.raises(TypeError, match="variable 'last' is first bound inside a `for` loop") as info:
        xlac.compile(f)(np.arange(3.0), 2)
    assert f"test_convert_loops.py:{line_of(f, 'for i in range(n)')}" in str(info.value)


def test_a_loop_that_changes_a_python_value_is_refused():
    def f(x):
        mode = "start"
        while x > 1.0:
            x = x / 2
            mode = "halved"
        return x, mode
    with pytest.raises(TypeError, match="variable 'mode' is 'halved' after an iteration"):
        xlac.compile(f)(8.0)


def test_a_while_with_break_on_a_traced_test_says_why_it_cannot_roll():
    def f(x):
        while x > 1.0:
            x = x / 2
            if x < 3.0:
                break
        return x
    with pytest.raises(xlac.TracerConversionError, match="cannot become an XLA loop because its loop body uses "
                                                         "break or continue") as info:
        xlac.compile(f)(8.0)
    assert f"test_convert_loops.py:{line_of(f, 'while x > 1.0')}" in str(info.value)
