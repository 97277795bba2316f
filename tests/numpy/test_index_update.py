"""xnp.index_update (the functional ``x[index] = values``) against NumPy: values, dtypes, duplicates, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from tests.numpy.test_indexing import _with_traced_integers, index_cases
from tests.tolerance import assert_matches

VALUE_DTYPES = [np.float32, np.int32, np.bool_, np.float64, np.uint8]


def _numpy_update(x, index, values):
    y = x.copy()
    y[index] = values
    return y


@st.composite
def update_cases(draw):
    """(x, index, values): values of a shape that broadcasts to x[index] and of another dtype."""
    x, index = draw(index_cases())
    try:
        target = x[index].shape
    except IndexError:
        target = (2,)
    keep = draw(st.integers(0, len(target)))
    shape = tuple(draw(st.sampled_from([1, d])) for d in target[len(target) - keep:])
    if draw(st.booleans()):
        shape = (1,) + shape
    dtype = draw(st.sampled_from(VALUE_DTYPES))
    values = ((np.arange(int(np.prod(shape))) * 3 + 1) % 7 / (2 if dtype in (np.float32, np.float64) else 1))
    return x, index, values.astype(dtype).reshape(shape)


@settings(max_examples=12, deadline=None)
@given(update_cases())
def test_index_update_matches_numpy(case):
    x, index, values = case
    try:
        expected = _numpy_update(x, index, values)
    except (IndexError, ValueError, TypeError) as e:     # out of bounds; NumPy's rules for 0-d and mask targets
        with pytest.raises(type(e)):
            xlac.compile(lambda a, v: xnp.index_update(a, index, v))(x, values)
        with pytest.raises(type(e)):
            xnp.index_update(x, index, values)
        return
    assert_matches(xlac.compile(lambda a, v: xnp.index_update(a, index, v))(x, values), expected)
    assert_matches(xnp.index_update(x, index, values), expected)
    arguments, rebuild = _with_traced_integers(index)
    if arguments:
        traced = xlac.compile(lambda a, ints, v: xnp.index_update(a, rebuild(ints), v))
        assert_matches(traced(x, arguments, values), expected)


# ---------------------------------------------------------------- duplicates: the last write wins


def test_duplicate_static_indices_keep_the_last_value():
    b = np.zeros(3)
    assert_matches(xlac.compile(lambda a: xnp.index_update(a, [0, 0], [5, 7]))(b), np.array([7.0, 0, 0]))
    assert_matches(xnp.index_update(b, [0, 0], [5, 7]), np.array([7.0, 0, 0]))


def test_many_traced_duplicates_keep_the_last_value():
    rng = np.random.default_rng(0)
    x = np.zeros((6, 5), np.float32)
    rows, cols = rng.integers(-6, 6, 100), rng.integers(0, 5, 100)
    values = rng.normal(size=100).astype(np.float32)
    expected = _numpy_update(x, (rows, cols), values)
    f = xlac.compile(lambda a, r, c, v: xnp.index_update(a, (r, c), v))
    assert_matches(f(x, rows, cols, values), expected)
    assert_matches(xnp.index_update(x, (rows, cols), values), expected)           # eager: traced indices
    row_block = _numpy_update(x, rows[:30], values[:30, None] * np.ones(5, np.float32))
    assert_matches(xlac.compile(lambda a, r, v: xnp.index_update(a, r, v[:, None]))(x, rows[:30], values[:30]),
                   row_block)


def test_traced_out_of_bounds_writes_raise_or_are_dropped_without_checks():
    args = np.zeros(4), np.array([0, 9, 0]), np.array([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        xlac.compile(lambda a, i, v: xnp.index_update(a, i, v))(*args)
    unchecked = xlac.compile(lambda a, i, v: xnp.index_update(a, i, v), check_bounds=False)
    assert_matches(unchecked(*args), np.array([3.0, 0, 0, 0]))


@pytest.mark.parametrize("mode, ufunc", [("add", np.add), ("multiply", np.multiply),
                                         ("minimum", np.minimum), ("maximum", np.maximum)])
def test_modes_accumulate_like_ufunc_at(mode, ufunc):
    x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    index, values = ([1, 0, 1, 1], slice(None, None, -1)), np.array([[3], [-2], [5], [2]], np.int32)
    expected = x.copy()
    ufunc.at(expected, index, values)
    assert_matches(xlac.compile(lambda a: xnp.index_update(a, index, values, mode=mode))(x), expected)
    rows = np.array([1, 0, 1, 1])
    f = xlac.compile(lambda a, r: xnp.index_update(a, (r, slice(None, None, -1)), values, mode=mode))
    assert_matches(f(x, rows), expected)


# ---------------------------------------------------------------- explicit forms


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("index, values", [
    ((slice(None, None, -1), slice(2, None, -2), 1), np.float32(9)),
    ((slice(None, None, -1),), X[0] * 2),
    ((Ellipsis, None, 1), np.array([[[1.5]], [[2.5]]])),
    ((1, slice(3, 0, -1), slice(None, None, 3)), [[1, 2]]),
    ((True, 0), 4),
])
def test_explicit_forms(index, values):
    expected = _numpy_update(X, index, values)
    assert_matches(xlac.compile(lambda a: xnp.index_update(a, index, values))(X), expected)
    assert_matches(xnp.index_update(X, index, values), expected)


def test_traced_mask_with_scalar_or_row_values_is_a_select():
    mask = np.array([[True, False, True], [False, False, True]])
    for values in (7.0, np.arange(4.0), np.array([[1.0, 2.0, 3.0, 4.0]])):
        f = xlac.compile(lambda a, m: xnp.index_update(a, m, values))
        assert_matches(f(X, mask), _numpy_update(X, mask, values))
    f = xlac.compile(lambda a, m: xnp.index_update(a, (Ellipsis, m), -1.0))
    assert_matches(f(X, X[0, 0] > 1), _numpy_update(X, (Ellipsis, X[0, 0] > 1), -1.0))
    counts = f.trace(X, X[0, 0] > 1).ir("final").op_counts()
    assert counts.get("select") == 1 and "scatter" not in counts


def test_values_are_cast_like_numpy_setitem():
    ints = np.zeros(4, np.int32)
    assert_matches(xnp.index_update(ints, slice(0, 2), [2.7, -1.9]), _numpy_update(ints, slice(0, 2), [2.7, -1.9]))
    floats = np.zeros(2)
    assert_matches(xlac.compile(lambda a, v: xnp.index_update(a, 0, v))(floats, np.complex64(3 + 4j)),
                   np.array([3.0, 0.0]))
    assert_matches(xnp.index_update(np.zeros(2, bool), [1], 0.5), np.array([False, True]))


# ---------------------------------------------------------------- lowering


def _op_counts(fn, *args):
    return xlac.compile(fn).trace(*args).ir("final").op_counts()


@pytest.mark.parametrize("index", [(1, slice(1, 3)), (Ellipsis, slice(None, None, -1)), (None, 0, 2)])
def test_unit_step_basic_write_is_one_dynamic_update_slice(index):
    counts = _op_counts(lambda a: xnp.index_update(a, index, 1.0), X)
    assert counts.get("dynamic_update_slice") == 1 and "scatter" not in counts and "gather" not in counts


def test_traced_integer_write_is_one_dynamic_update_slice():
    counts = _op_counts(lambda a, i: xnp.index_update(a, (i, slice(1, None)), 1.0), X, np.int32(-1))
    assert counts.get("dynamic_update_slice") == 1 and "scatter" not in counts
    f = xlac.compile(lambda a, i: xnp.index_update(a, (i, slice(1, None)), 1.0))
    assert_matches(f(X, np.int32(-1)), _numpy_update(X, (-1, slice(1, None)), 1.0))


def test_advanced_write_is_one_scatter():
    assert _op_counts(lambda a: xnp.index_update(a, ([0, 1], slice(None), [2, 3]), 1.0), X).get("scatter") == 1


# ---------------------------------------------------------------- errors


def test_broadcast_errors_match_numpy():
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) into shape \(2,\)"):
        xlac.compile(lambda a: xnp.index_update(a, slice(0, 2), [1, 2, 3]))(np.zeros(4))
    with pytest.raises(ValueError, match=r"value array of shape \(3,\) could not be broadcast to indexing result"):
        xnp.index_update(np.zeros(4), [0, 1], np.ones(3))
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        xlac.compile(lambda a: xnp.index_update(a, 0, np.array([5])))(np.zeros(3))


def test_static_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        xlac.compile(lambda a: xnp.index_update(a, (0, [5]), 1.0))(X)
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        xnp.index_update(X, -3, 1.0)


@pytest.mark.parametrize("value, error, message", [
    (float("nan"), ValueError, "cannot convert float NaN to integer"),
    (float("inf"), OverflowError, "cannot convert float infinity to integer"),
    (300, OverflowError, "Python integer 300 out of bounds for int8"),
    (1 + 2j, TypeError, "complex"),
])
def test_python_scalars_that_do_not_fit_raise_like_numpy(value, error, message):
    with pytest.raises(error, match=message):
        xlac.compile(lambda a: xnp.index_update(a, 0, value))(np.zeros(3, np.int8))
    with pytest.raises(error, match=message):
        xnp.index_update(np.zeros(3, np.int8), [1], value)


def test_traced_mask_with_one_value_per_selected_element_writes_them_in_order():
    f = xlac.compile(lambda a, m: xnp.index_update(a, m, xnp.arange(2.0)))
    expected = np.zeros(3)
    expected[np.array([True, False, True])] = np.arange(2.0)
    np.testing.assert_array_equal(np.asarray(f(np.zeros(3), np.array([True, False, True]))), expected)
    with pytest.raises(ValueError, match=r"(?s)could not be broadcast.*test_index_update"):
        f(np.zeros(3), np.array([True, True, True]))


def test_unknown_mode_raises():
    with pytest.raises(ValueError, match="mode must be one of"):
        xnp.index_update(np.zeros(3), 0, 1.0, mode="subtract")


def test_full_mask_assignment_rules_match_numpy():
    mask = X > 10
    with pytest.raises(TypeError, match="requires a 0 or 1-dimensional input, input has 2 dimensions"):
        xnp.index_update(X, mask, np.ones((1, 1)))
    with pytest.raises(ValueError, match="cannot assign 3 input values to the 13 output values"):
        xlac.compile(lambda a: xnp.index_update(a, mask, [1.0, 2.0, 3.0]))(X)
    values = np.arange(13.0)
    assert_matches(xlac.compile(lambda a: xnp.index_update(a, mask, values))(X), _numpy_update(X, mask, values))
