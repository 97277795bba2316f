"""Converted Python loops whose trip depends on traced values (xlac/convert/loops.py), against NumPy."""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from xlac.convert import loops as convert_loops
from tests.numpy_kernels import diagonal_tanh_sum, heat_1d


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


@settings(max_examples=15, deadline=None)
@given(st.floats(0.01, 1e6))
def test_a_while_on_a_traced_test_gives_numpys_value_and_iteration_count(x):
    n, y = xlac.compile(halvings)(x)
    assert (int(n), float(y)) == halvings(x)
    assert float(xlac.compile(newton_sqrt)(x)) == pytest.approx(newton_sqrt(x), rel=1e-12)


@settings(max_examples=15, deadline=None)
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
    assert f"test_loops.py:{line_of(f, 'for i in range(n)')}" in str(info.value)


def test_a_loop_that_changes_a_python_value_is_refused():
    def f(x):
        mode = "start"
        while x > 1.0:
            x = x / 2
            mode = "halved"
        return x, mode
    with pytest.raises(TypeError, match="variable 'mode' is 'halved' after an iteration"):
        xlac.compile(f)(8.0)


def test_a_while_whose_exit_sits_in_a_try_says_why_it_cannot_roll():
    def f(x):
        while x > 1.0:
            x = x / 2
            try:
                if x < 3.0:
                    break
            finally:
                pass
        return x
    with pytest.raises(xlac.TracerConversionError, match="cannot become an XLA loop because its loop body uses "
                                                         "break or continue") as info:
        xlac.compile(f)(8.0)
    assert f"test_loops.py:{line_of(f, 'while x > 1.0')}" in str(info.value)


# ---------------------------------------------------------------- loops with a trip count known when tracing


def test_a_long_stencil_loop_rolls_into_one_while_with_numpys_values():
    u = np.sin(np.linspace(0.0, np.pi, 64))
    expected = heat_1d(u.copy(), 1000)
    f = xlac.compile(heat_1d, static_argnums=1)
    ir = str(f.trace(u, 1000).ir())
    assert ir.count("= while[") == 1
    np.testing.assert_allclose(np.asarray(f(u, 1000)), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(u, expected, rtol=1e-12, atol=1e-14)     # the argument, written in place


def test_a_carried_python_scalar_and_index_dependent_reads_roll(monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")     # an accumulator: else vectorized
    a = np.random.default_rng(0).normal(size=(100, 100))
    f = xlac.compile(diagonal_tanh_sum)
    assert str(f.trace(a).ir()).count("= while[") == 1
    assert float(f(a)) == pytest.approx(diagonal_tanh_sum(a), rel=1e-12)


@pytest.mark.usefixtures("xla_defaults")
def test_index_dependent_writes_roll_and_update_the_argument_in_place():
    def f(out, x):
        for i in range(out.shape[0]):
            out[i] = x * i
        return out.sum()
    out = xlac.asarray(np.zeros((80, 3)))
    total = xlac.compile(f)(out, np.arange(3.0))
    expected = np.zeros((80, 3))
    assert float(total) == f(expected, np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), expected)
    report = xlac.compile(f).lower(out, np.arange(3.0)).compile().as_text()
    assert "while" in report


def test_short_loops_and_loops_that_act_on_python_state_unroll_with_numpys_result():
    def building(x):
        rows = []
        for i in range(70):
            rows.append(x * i)
        return np.stack(rows)
    f = xlac.compile(building)
    assert "while" not in str(f.trace(np.ones(2)).ir())
    np.testing.assert_array_equal(np.asarray(f(np.ones(2))), building(np.ones(2)))


def test_a_body_that_needs_a_concrete_index_unrolls_and_says_why_when_long(monkeypatch):
    monkeypatch.setattr(convert_loops, "WARN_AT", 40)        # the defaults' 256 iterations compile for 20 s
    monkeypatch.setattr(convert_loops, "ROLL_AT_OPS", 40)

    def prefix_sums(x):
        out = np.zeros(45)
        for i in range(45):
            out[i] = x[:i].sum() + len(list(x[:i]))   # a Python list of a length that depends on the index
        return out
    x = np.arange(45.0)
    with pytest.warns(UserWarning, match=r"runs 45 iterations unrolled, because its body cannot run with a "
                                         r"traced index \(DynamicShapeError: cannot take the elements"):
        got = xlac.compile(prefix_sums)(x)
    np.testing.assert_array_equal(np.asarray(got), prefix_sums(x))
    with pytest.raises(xlac.TracerConversionError, match="cannot take the elements"):
        xlac.compile(prefix_sums, loops="roll")(x)


def test_loops_option_chooses():
    a = np.random.default_rng(1).normal(size=(8, 8))
    assert "while" in str(xlac.compile(diagonal_tanh_sum, loops="roll").trace(a).ir())
    big = np.random.default_rng(1).normal(size=(70, 70))
    assert "while" not in str(xlac.compile(diagonal_tanh_sum, loops="unroll").trace(big).ir())
    with pytest.raises(ValueError, match="loops must be"):
        xlac.compile(diagonal_tanh_sum, loops="sometimes")


# ---------------------------------------------------------------- generated loops

LOOP_STATEMENTS = ("s = s + a[i % 4]", "a = a * 0.5 + s", "b[i % 3] += s", "s = s * 0.9 - b[(i + 1) % 3]",
                   "a[i % 4] = s - i", "t = a.sum() * 0.1\n{indent}s = s + t",
                   "if a[0] > s:\n{indent}    s = s - 1.0\n{indent}else:\n{indent}    s = s + 0.5",
                   "b = np.where(b > s, b - 1.0, b + 1.0)", "if s > 3.0:\n{indent}    break",
                   "if a[1] < s:\n{indent}    s = s + 0.25\n{indent}    continue")


@st.composite
def loop_programs(draw):
    lo, hi = draw(st.integers(-3, 6)), draw(st.integers(-3, 9))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    over_rows = draw(st.booleans())          # iterate over b's rows (which the body may write) instead
    statements = LOOP_STATEMENTS + (("s = s + v",) if over_rows else ())
    body = [draw(st.sampled_from(statements)).format(indent="        ")
            for _ in range(draw(st.integers(1, 4)))]
    header = "for i, v in enumerate(b):" if over_rows else f"for i in range({lo}, {hi}, {step}):"
    lines = ["def program(a, b, s):", "    a = a.copy()", f"    {header}"]
    lines += ["        " + statement for statement in body]
    return "\n".join(lines + ["    return a, b, s"]) + "\n"


@settings(max_examples=10, deadline=None)
@given(source=loop_programs(), values=st.lists(st.floats(-2, 2), min_size=8, max_size=8))
def test_generated_loops_rolled_match_numpy(tmp_path_factory, source, values):
    path = tmp_path_factory.mktemp("loops") / "program.py"
    path.write_text(source)
    namespace = {"np": np}
    exec(compile(source, str(path), "exec"), namespace)
    program = namespace["program"]
    a, b, s = np.array(values[:4]), np.array(values[4:7]), values[7]
    expected = program(a, b.copy(), s)
    got = xlac.compile(program, loops="roll")(a, b.copy(), s)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10, atol=1e-10)


def test_a_rolled_loops_own_index_needs_no_bounds_check_and_others_keep_theirs(monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")     # an accumulator: else vectorized
    def total(data, extra):
        h = 0
        for i in range(data.shape[0] + extra):
            h = h + data[i]
        return h
    data = np.arange(100)
    fits = xlac.compile(total, static_argnums=1).trace(data, 0)
    assert "= while[" in str(fits.ir()) and fits.checks == []
    assert int(xlac.compile(total, static_argnums=1)(data, 0)) == total(data, 0)
    with pytest.raises(IndexError, match="index 100 is out of bounds for axis 0 with size 100"):
        xlac.compile(total, static_argnums=1)(data, 5)


@pytest.mark.parametrize("loops", ["auto", "roll"])
def test_an_array_updated_in_place_under_its_name_in_a_rolled_loop_is_updated_every_iteration(loops):
    """``a += 1`` changes the array ``a`` names, every iteration (NumPy); rebinding ``acc = acc + a`` carries
    a new value. Rolled loops over a range, a traced range and a traced test, with another name for ``a``."""
    def program(a, n):
        other = a
        acc = np.zeros(2)
        for i in range(300):
            a += 1.0
        for i in range(n):
            acc = acc + other
            a *= 0.5
        k = 0
        while k < n:
            a -= other * 0.25
            k += 1
        return acc, other.sum()
    expected_a = np.array([1.0, 2.0])
    expected = program(expected_a, 3)
    a = np.array([1.0, 2.0])
    got = xlac.compile(program, loops=loops)(a, 3)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)
    np.testing.assert_allclose(a, expected_a, rtol=1e-12)
