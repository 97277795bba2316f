"""``assert`` on a traced value is a check made when the program runs: AssertionError after the call, with
the user's message and line, as Python raises it; ``check_bounds=False`` turns it off with the other checks.

PYTEST_DONT_REWRITE: the functions here run under plain Python as the oracle, with Python's own asserts."""
import ast

import numpy as np
import pytest

import xlac
import xlac.convert.rewrite as rewrite

HERE = "test_checks_assert.py"


def _line(fn, offset: int) -> str:
    return f"{HERE}:{fn.__code__.co_firstlineno + offset}"


def scaled(x, d):
    assert d != 0, "the distance must not be zero"
    return x / d


def test_an_assert_that_holds():
    np.testing.assert_array_equal(np.asarray(xlac.compile(scaled)(np.ones(2), 2.0)), scaled(np.ones(2), 2.0))


def test_an_assert_that_fails_raises_its_message_at_its_line():
    with pytest.raises(AssertionError, match="^the distance must not be zero\n") as error:
        xlac.compile(scaled)(np.ones(2), 0.0)
    assert _line(scaled, 1) in str(error.value)
    with pytest.raises(AssertionError, match="^the distance must not be zero$"):
        scaled(np.ones(2), 0.0)                          # Python's, for comparison


def test_check_bounds_false_turns_asserts_off():
    np.testing.assert_array_equal(np.asarray(xlac.compile(scaled, check_bounds=False)(np.ones(2), 0.0)),
                                  [np.inf, np.inf])


def no_message(x, d):
    assert d != 0
    return x / d


def traced_message(x, d):
    assert d != 0, f"d = {d}"
    return x / d


def raising_message(x, d):
    assert d != 0, {"a": 1}["b"]
    return x / d


@pytest.mark.parametrize("fn, message", [
    (no_message, "assert d != 0"),
    (traced_message, "f'd = {d}' (shown as written: it reads values known only when the program runs)"),
    (raising_message, "{'a': 1}['b'] (shown as written: evaluating it while tracing raised KeyError: 'b')"),
])
def test_a_message_with_no_value_while_tracing_is_shown_as_written(fn, message):
    assert float(xlac.compile(fn)(np.ones(1), 4.0)[0]) == 0.25
    with pytest.raises(AssertionError) as error:
        xlac.compile(fn)(np.ones(1), 0.0)
    first, at = str(error.value).splitlines()
    assert first == message and _line(fn, 1) in at


def concrete(x, n):
    assert n > 0, f"n = {n}"
    return x * n


def test_a_concrete_test_is_python_s_assert():
    compiled = xlac.compile(concrete, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(compiled(np.ones(2), 3)), [3.0, 3.0])
    with pytest.raises(AssertionError, match="^n = -1$"):
        compiled(np.ones(2), -1)


def test_the_message_of_a_concrete_test_that_holds_is_not_evaluated():
    def checked(x):
        assert x.ndim == 1, 1 / 0
        return x.sum()
    assert float(xlac.compile(checked)(np.arange(3.0))) == 3.0


def test_a_traced_array_test_needs_one_element():
    def all_positive(x):
        assert x > 0
        return x
    with pytest.raises(ValueError, match="`assert` on a traced array of shape \\(2,\\)"):
        xlac.compile(all_positive)(np.ones(2))
    with pytest.raises(ValueError, match="truth value of an array"):
        all_positive(np.ones(2))


def write_after(x, d):
    assert d != 0, "zero"
    x[0] = 5.0
    return x.sum()


def test_writes_after_a_failed_assert_are_not_made():
    x = np.ones(3)
    with pytest.raises(AssertionError, match="zero"):
        xlac.compile(write_after)(x, 0.0)
    np.testing.assert_array_equal(x, np.ones(3))       # as NumPy leaves it: the assert raised first


def checked_sum(x):
    total = 0.0
    for j in range(x.shape[0]):
        assert x[j] >= 0, "a negative entry"
        total += x[j]
    return total


@pytest.mark.parametrize("loops", ["roll", "unroll"])
def test_asserts_inside_loops(loops):
    compiled = xlac.compile(checked_sum, loops=loops)
    assert float(compiled(np.arange(5.0))) == checked_sum(np.arange(5.0))
    with pytest.raises(AssertionError, match="a negative entry") as error:
        compiled(np.array([1.0, 2.0, -1.0, 3.0, 4.0]))
    assert _line(checked_sum, 3) in str(error.value)


def halvings(d):
    n = 0
    while d > 1:
        assert d < 100, "too large"
        d = d / 2
        n += 1
    return n


def test_an_assert_inside_a_while_loop_with_a_traced_test():
    compiled = xlac.compile(halvings)
    assert int(compiled(50.0)) == halvings(50.0)
    with pytest.raises(AssertionError, match="too large"):
        compiled(500.0)


def positive_at(x, i):
    assert x[i] > 0, "not positive"
    return True


def positive_if_inside(x, i):
    return i < x.shape[0] and positive_at(x, i)


def assert_in_a_branch(x, i):
    if i < x.shape[0]:
        assert x[i] > 0, "not positive"
    return x.sum()


def concrete_assert_in_a_branch(x, i):
    if i >= x.shape[0]:
        assert x.shape[0] > 5, "too short"
    return x.sum()


@pytest.mark.parametrize("fn", [positive_if_inside, assert_in_a_branch, concrete_assert_in_a_branch])
def test_asserts_python_would_not_reach_do_not_fire(fn):
    x = np.array([1.0, -1.0])
    compiled = xlac.compile(fn)
    for i in (0, 1, 9):
        try:
            expected = fn(x, i)
        except AssertionError as error:
            with pytest.raises(AssertionError, match=str(error)):
                compiled(x, i)
        else:
            assert np.asarray(compiled(x, i)) == expected


def test_under_vmap():
    batched = xlac.vmap(scaled)
    np.testing.assert_array_equal(np.asarray(batched(np.ones((2, 2)), np.array([1.0, 2.0]))), [[1, 1], [0.5, 0.5]])
    with pytest.raises(AssertionError, match="the distance must not be zero"):
        batched(np.ones((2, 2)), np.array([1.0, 0.0]))


def test_python_minus_o_leaves_asserts_out(monkeypatch):
    """``python -O`` compiles no assert; neither does the converter then (``ASSERTS_RUN`` is read from
    ``sys.flags.optimize``)."""
    source = "def f(x):\n    assert x > 0, 'positive'\n    return x"
    kept = ast.unparse(rewrite.convert_function(ast.parse(source).body[0]))
    assert "assert_(__xlac_runtime__.current(x) > 0, lambda: 'positive', test_source='x > 0', " \
           "message_source=\"'positive'\")" in kept
    monkeypatch.setattr(rewrite, "ASSERTS_RUN", False)
    left_out = ast.unparse(rewrite.convert_function(ast.parse(source).body[0]))
    assert "assert" not in left_out and "return __xlac_runtime__.current(x)" in left_out
