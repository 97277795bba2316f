"""A converted ``for`` that must unroll stops early, naming its line, why it could not roll and the program
size it would reach, when that is past ``xlac.compile(max_unrolled_ops=...)`` (see xlac.convert.loops)."""
from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import xlac
from xlac.convert.loops import MAX_UNROLLED_OPS, LoopUnrolledWarning, UnrolledTooLargeError
from xlac.trace.tracer import Tracer


class Coefficients:
    """A Python sequence that needs a concrete index (a loop over it cannot roll); counts the iterations
    traced with one."""

    def __init__(self, values):
        self.values, self.reads = list(values), 0

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError("Coefficients needs a Python int index")
        self.reads += 1
        return self.values[index]

    def __len__(self):
        return len(self.values)


def polynomial(coeffs: Coefficients, trips: int):
    def f(x):
        for i in range(trips):
            x = x * 0.5 + coeffs[i]
        return x
    return f


def polynomial_numpy(coeffs: Coefficients, trips: int, x):
    for i in range(trips):
        x = x * 0.5 + coeffs.values[i]
    return x


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def reported_size(message: str) -> tuple[int, int, int, int]:
    """(reach, ops before the loop, trips, ops per iteration) as the error states them."""
    found = re.search(r"about (\d+) ops \((\d+) before the loop, then (\d+) iterations x (\d+) ops", message)
    assert found, message
    return tuple(int(g) for g in found.groups())


def compile_quietly(fn, *args, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoopUnrolledWarning)
        return xlac.compile(fn, **options)(*args)


def test_a_long_loop_that_must_unroll_stops_after_its_first_iteration_naming_line_reason_size_and_option():
    trips = 100_000
    coeffs = Coefficients(np.linspace(0.0, 1.0, trips))
    fn = polynomial(coeffs, trips)
    with pytest.raises(UnrolledTooLargeError) as raised:
        compile_quietly(fn, np.ones(4))
    message = str(raised.value)
    assert f"test_unroll_limit.py:{line_of(polynomial, 'for i in range')}" in message
    assert "its body cannot run with a traced index" in message and "Coefficients needs a Python int" in message
    reach, before, reported_trips, per_iteration = reported_size(message)
    assert reported_trips == trips and per_iteration >= 2 and reach == before + trips * per_iteration
    assert reach > MAX_UNROLLED_OPS and f"max_unrolled_ops={MAX_UNROLLED_OPS}" in message
    assert "xlac.compile(max_unrolled_ops=...)" in message
    assert coeffs.reads <= 2          # stopped after the first iteration, not after tracing all of them


def test_the_option_raised_the_loop_compiles_and_equals_numpy():
    trips, x = 60, np.linspace(-1.0, 1.0, 4)
    coeffs = Coefficients(np.cos(np.arange(trips)))
    with pytest.raises(UnrolledTooLargeError, match="max_unrolled_ops=50"):
        compile_quietly(polynomial(coeffs, trips), x, max_unrolled_ops=50)
    got = compile_quietly(polynomial(coeffs, trips), x, max_unrolled_ops=1000)
    np.testing.assert_allclose(np.asarray(got), polynomial_numpy(coeffs, trips, x), rtol=1e-12)


def test_a_loop_below_the_limit_is_unaffected():
    trips, x = 60, np.arange(3.0)
    coeffs = Coefficients(np.arange(trips) / trips)
    compiled = xlac.compile(polynomial(coeffs, trips))
    np.testing.assert_allclose(np.asarray(compiled(x)), polynomial_numpy(coeffs, trips, x), rtol=1e-12)
    [decision] = compiled.trace(x).loop_decisions
    assert decision.decision == "unrolled" and "traced index" in decision.reason


def test_nested_unrolled_loops_multiply_and_the_outer_loop_stops_after_its_first_iteration():
    coeffs = Coefficients(np.arange(40.0))

    def nested(x):
        for i in range(40):
            for j in range(40):
                x = x * 0.5 + coeffs[i] * coeffs[j]
        return x

    with pytest.raises(UnrolledTooLargeError) as raised:
        compile_quietly(nested, np.ones(2), max_unrolled_ops=1000)
    message = str(raised.value)
    assert f":{line_of(nested, 'for i in range')} " in message
    reach, before, trips, per_iteration = reported_size(message)
    assert trips == 40 and per_iteration >= 40 * 3 and reach == before + 40 * per_iteration
    assert coeffs.reads <= 2 * 2 * 40     # the outer loop stopped after its first iteration


def test_the_program_before_the_loop_counts():
    coeffs = Coefficients(np.arange(100.0))

    def two_loops(x):
        for i in range(100):
            x = x * 0.5 + coeffs[i]
        for i in range(100):
            x = x * 0.25 + coeffs[i]
        return x

    with pytest.raises(UnrolledTooLargeError) as raised:
        compile_quietly(two_loops, np.ones(2), max_unrolled_ops=1000)
    reach, before, trips, per_iteration = reported_size(str(raised.value))
    assert f":{line_of(two_loops, 'x * 0.25') - 1} " in str(raised.value)
    assert before >= 100 * per_iteration and reach == before + trips * per_iteration
    x = np.ones(2)
    got = compile_quietly(two_loops, x, max_unrolled_ops=2000)
    want = x
    for scale in (0.5, 0.25):
        for i in range(100):
            want = want * scale + coeffs.values[i]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_loops_unroll_is_limited_too():
    def f(x):
        for i in range(5000):
            x = x * 0.5 + i
        return x

    with pytest.raises(UnrolledTooLargeError, match=r"because xlac.compile\(loops='unroll'\)"):
        compile_quietly(f, np.ones(2), loops="unroll")


def test_a_loop_that_breaks_at_a_concrete_index_is_not_extrapolated():
    coeffs = Coefficients(np.arange(1000.0))

    def early(x):
        for i in range(1000):
            if i == 5:
                break
            x = x * 0.5 + coeffs[i]
        return x

    x = np.ones(3)
    want = x
    for i in range(5):
        want = want * 0.5 + coeffs.values[i]
    np.testing.assert_allclose(np.asarray(compile_quietly(early, x, max_unrolled_ops=100)), want)


class State:
    last = None


def test_the_error_leaves_no_tracer_in_the_users_objects():
    state, log = State(), []
    state.last = "before"
    coeffs = Coefficients(np.arange(1000.0))

    def remembers(x):
        for i in range(1000):
            x = x * 0.5 + coeffs[i]
            state.last = x
            log.append(x)
        return x

    with pytest.raises(UnrolledTooLargeError):
        compile_quietly(remembers, np.ones(2), max_unrolled_ops=100)
    assert state.last == "before"
    assert not any(isinstance(item, Tracer) for item in log)


@pytest.mark.parametrize("bad", [-1, 1.5, "100", True])
def test_max_unrolled_ops_must_be_a_nonnegative_int(bad):
    with pytest.raises(ValueError, match=r"xlac.compile: max_unrolled_ops must be None or an int >= 0, got"):
        xlac.compile(lambda x: x, max_unrolled_ops=bad)
