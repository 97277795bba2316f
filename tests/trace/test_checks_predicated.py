"""Checks of code that Python would not evaluate do not fire: the right side of ``and``/``or``, the branch not
taken of a conditional computed both ways, a later operand of a chained comparison. The oracle is plain
Python running the same function on NumPy arrays (its result, or its error's type and text).
Asserts on traced values are after-call checks: tests/trace/test_checks_assert.py."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac

X = np.array([1.0, -1.0, 2.0, 3.0])


def _outcome(fn, *args):
    """``fn(*args)`` as a NumPy value, or (error type, first line of its message)."""
    try:
        return np.asarray(fn(*args))
    except (IndexError, np.linalg.LinAlgError, AssertionError) as error:
        return type(error), str(error).splitlines()[0] if str(error) else ""


def _assert_as_python(fn, *args, compiled=None):
    expected, got = _outcome(fn, *args), _outcome(compiled or xlac.compile(fn), *args)
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert not isinstance(got, tuple), got
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def bin_of(edges, v):
    k = 0
    while k < edges.shape[0] - 1 and edges[k + 1] <= v:   # Python never reads edges[4]
        k += 1
    return k


@pytest.mark.parametrize("v", [10.0, 1.5, -1.0])
def test_the_issue_s_search_loop_never_reads_past_the_end(v):
    compiled = xlac.compile(bin_of)
    assert int(compiled(np.arange(4.0), v)) == bin_of(np.arange(4.0), v)


def read_or(x, i):
    return i >= x.shape[0] or x[i] > 0


def read_and(x, i):
    return i < x.shape[0] and x[i] > 0


def read_chain(x, i):
    return 0 <= i < x.shape[0] and x[i] > 0


def read_chain_operand(x, i):
    return i < x.shape[0] <= x[i] * 2      # x[i] read only where i < 4


def read_nested(x, i, j):
    return i < 4 and (j >= 4 or x[j] > x[i])


@pytest.mark.parametrize("fn", [read_or, read_and, read_chain, read_chain_operand])
def test_the_operand_python_skips_checks_nothing(fn):
    compiled = xlac.compile(fn)
    for i in (1, 2, 7, -9):           # -9: Python evaluates x[-9] and raises, and so does the program
        _assert_as_python(fn, X, i, compiled=compiled)


def test_nested_operators_conjoin_their_conditions():
    compiled = xlac.compile(read_nested)
    for i, j in [(5, 9), (1, 9), (1, 2), (9, 2), (1, -7)]:
        _assert_as_python(read_nested, X, i, j, compiled=compiled)


def read_always(x, i):
    return i > -100 and x[i] > 0


def test_the_check_fires_where_the_operand_is_evaluated():
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 4") as error:
        xlac.compile(read_always)(X, 7)
    assert f"test_checks_predicated.py:{read_always.__code__.co_firstlineno + 1}" in str(error.value)


def ternary_selected(x, i):
    return x[i] * 2 if i < x.shape[0] else -1.0


def ternary_conditional(x, i):
    return x[i] * x.sum() if i < x.shape[0] else -1.0


def statement_selected(x, i):
    if i < x.shape[0]:
        y = x[i] * 2
    else:
        y = 0.0
    return y


def statement_else_reads(x, i):
    if i >= x.shape[0]:
        y = 0.0
    else:
        y = x[i] + 1
    return y


def store_either(x, i):
    out = np.zeros(2)
    if i < x.shape[0]:
        out[0] = x[i]
    else:
        out[0] = -1.0
    return out


@pytest.mark.parametrize("fn", [ternary_selected, ternary_conditional, statement_selected, statement_else_reads,
                                store_either])
def test_the_branch_not_taken_checks_nothing(fn):
    compiled = xlac.compile(fn)
    for i in (2, 7, -9):
        _assert_as_python(fn, X, i, compiled=compiled)


@pytest.mark.parametrize("fn, form", [(ternary_selected, "selected"), (ternary_conditional, "conditional")])
def test_both_forms_of_a_conditional_are_covered(fn, form):
    """Short elementwise branches are computed both and selected, others are one ``case`` node: the tests
    above cover both."""
    has_case = "= case" in str(xlac.compile(fn).trace(X, 1))
    assert has_case == (form == "conditional")


def count_rises(x):
    count = 0
    for j in range(x.shape[0]):
        if j + 1 < x.shape[0] and x[j + 1] > x[j]:
            count += 1
    return count


@pytest.mark.parametrize("loops", ["roll", "unroll"])
def test_guards_inside_rolled_and_unrolled_loops(loops):
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0])
    assert int(xlac.compile(count_rises, loops=loops)(x)) == count_rises(x)


def first_negative(x):
    k = -1
    for j in range(6):                 # past the end of a 4-element x: Python breaks before, or raises
        if x[j] < 0:
            k = j
            break
    return k


@pytest.mark.parametrize("loops", ["auto", "roll", "unroll"])
def test_a_loop_that_breaks_before_a_constant_index_out_of_bounds(loops):
    """Unrolled, the index is a constant, out of bounds while tracing: the error is raised after the call,
    only where the loop has not broken yet, as Python raises it."""
    compiled = xlac.compile(first_negative, loops=loops)
    _assert_as_python(first_negative, X, compiled=compiled)
    _assert_as_python(first_negative, np.ones(4), compiled=compiled)


def constant_index_under_and(x, i):
    return i > 10 and x[5] > 0


def constant_index_in_a_branch(x, i):
    return x[5] if i > 10 else 0.0


@pytest.mark.parametrize("fn", [constant_index_under_and, constant_index_in_a_branch])
def test_a_constant_index_out_of_bounds_raises_where_evaluated(fn):
    compiled = xlac.compile(fn)
    _assert_as_python(fn, X, 3, compiled=compiled)
    with pytest.raises(IndexError, match="index 5 is out of bounds") as error:
        compiled(X, 11)
    assert f"test_checks_predicated.py:{fn.__code__.co_firstlineno + 1}" in str(error.value)


def per_extra_element(x, i):
    return x[0] * (x.shape[0] // (x.shape[0] - 4)) if i > 10 else x[0]


def test_a_python_error_raised_while_tracing_raises_where_evaluated_at_its_line():
    compiled = xlac.compile(per_extra_element)
    _assert_as_python(per_extra_element, X, 3, compiled=compiled)
    with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero") as error:
        compiled(X, 11)
    assert f"test_checks_predicated.py:{per_extra_element.__code__.co_firstlineno + 1}" in str(error.value)


def test_a_constant_index_out_of_bounds_raises_at_once_when_checks_are_off():
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        xlac.compile(constant_index_under_and, check_bounds=False)(X, 3)


def mark(x, i):
    x[i] = -1.0
    return True


def mark_if_inside(x, i):
    return i < x.shape[0] and mark(x, i)


def doubled(x):
    x *= 2
    return True


def double_if_positive(x, c):
    return c > 0 and doubled(x)


@pytest.mark.parametrize("fn, args", [(mark_if_inside, (1,)), (mark_if_inside, (9,)), (double_if_positive, (1.0,)),
                                      (double_if_positive, (-1.0,))])
def test_writes_python_would_not_make_are_not_made(fn, args):
    expected_x, got_x = np.arange(4.0), np.arange(4.0)
    expected = fn(expected_x, *args)
    assert bool(xlac.compile(fn)(got_x, *args)) == expected
    np.testing.assert_array_equal(got_x, expected_x)


def zero_first(x, n):
    j = 0
    while j < n:                       # a loop variable updated in place: not after a failed check
        x[j] = 0.0
        j += 1
    return True


def zero_first_if_positive(x, c, n):
    return c > 0 and zero_first(x, n)


@pytest.mark.parametrize("c, n", [(1.0, 2), (-1.0, 2), (-1.0, 9), (1.0, 9)])
def test_a_loop_under_a_condition_that_fails_a_check_stops(c, n):
    """The loop stops at its first failed check (it ran forever: its variable's update came after it, and
    was not made); under a condition that does not hold, its check and its writes are dropped."""
    expected_x, got_x = np.arange(1.0, 5.0), np.arange(1.0, 5.0)
    expected = _outcome(zero_first_if_positive, expected_x, c, n)
    got = _outcome(xlac.compile(zero_first_if_positive), got_x, c, n)
    assert got == expected if isinstance(expected, tuple) else bool(got) == bool(expected)
    np.testing.assert_array_equal(got_x, expected_x)


def inverse_if_positive(a, c):
    return c > 0 and np.linalg.inv(a).sum() > 0


def test_a_linalg_check_under_a_condition():
    compiled = xlac.compile(inverse_if_positive)
    singular = np.zeros((2, 2))
    assert not bool(compiled(singular, -1.0))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        compiled(singular, 1.0)


def test_under_vmap():
    batched = xlac.vmap(read_and, in_axes=(None, 0))
    indices = np.array([0, 1, 9])
    expected = [read_and(X, i) for i in indices]
    np.testing.assert_array_equal(np.asarray(batched(X, indices)), expected)
    np.testing.assert_array_equal(np.asarray(xlac.compile(batched)(X, indices)), expected)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        xlac.vmap(read_always, in_axes=(None, 0))(X, indices)


def gated_sum(x, i):
    return np.where(i < x.shape[0] and x[i] > 0, x.sum(), 0.0)


@pytest.mark.parametrize("i", [0, 1, 9])
def test_under_grad(i):
    def reference(x):
        return jnp.where((i < 4) & (x[min(i, 3)] > 0), x.sum(), 0.0)
    expected = jax.grad(reference)(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(xlac.grad(gated_sum)(X, i)), np.asarray(expected))


FORMS = [read_or, read_and, read_chain, read_chain_operand, ternary_selected, statement_else_reads]
COMPILED_FORMS = [xlac.compile(fn) for fn in FORMS]      # compiled at their first call, once for all examples


@settings(max_examples=30)
@given(form=st.sampled_from(range(len(FORMS))), i=st.integers(-7, 8),
       x=st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.0]), min_size=4, max_size=4))
def test_random_indices_and_values_as_python(form, i, x):
    _assert_as_python(FORMS[form], np.array(x), i, compiled=COMPILED_FORMS[form])
