"""A traced value written into a NumPy array made inside the function. Converted (the default), the array
is an xlac one and the program is NumPy's; traced as written (``convert=False``), the error says what
happened and suggests ``xnp.zeros(...)`` / ``np.zeros(..., like=x)``, which work (NumPy dispatches ``like=``
to xlac)."""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

X = np.array([3.0, -1.0, 2.5])
HINT = "make it with xnp.zeros(...) or np.zeros(..., like=x)"


def _line_of(fn, offset: int) -> str:
    return f"{__file__}:{fn.__code__.co_firstlineno + offset}"


def item_into_numpy_array(x):
    out = np.zeros(3)
    out[0] = x[0]
    return out


def slice_into_numpy_array(x):
    out = np.zeros(3)
    out[:] = x
    return out


def numpy_array_of_traced_values(x):
    return np.array([x[0], x[1]])


def integer_item_into_numpy_array(i):
    out = np.zeros(3, np.int64)
    out[1] = i[0]
    return out


def test_an_item_written_into_a_numpy_array_says_what_happened():
    with pytest.raises(xlac.TracerConversionError) as info:
        xlac.compile(item_into_numpy_array, convert=False)(X)
    message = str(info.value)
    assert message.startswith("a traced value (f64[]) was used in a write to a NumPy array (`a[i] = v`, as v or i)")
    assert "A NumPy array made inside the function (`out = np.zeros(3)`) cannot hold a traced value" in message
    assert HINT in message and "setting an array element with a sequence" not in message
    assert f"at {_line_of(item_into_numpy_array, 2)} (in item_into_numpy_array)" in message
    assert info.value.__suppress_context__          # NumPy's ValueError is not shown as the error


def test_an_integer_item_takes_the_same_path():
    with pytest.raises(xlac.TracerConversionError, match="used in a write to a NumPy array") as info:
        xlac.compile(integer_item_into_numpy_array, convert=False)(np.array([4, 5]))
    assert _line_of(integer_item_into_numpy_array, 2) in str(info.value)


def test_a_slice_written_into_a_numpy_array_says_what_happened():
    with pytest.raises(xlac.TracerConversionError) as info:
        xlac.compile(slice_into_numpy_array, convert=False)(X)
    message = str(info.value)
    assert message.startswith("a traced value (f64[3]) was used in a write to a NumPy array") and HINT in message
    assert f"at {_line_of(slice_into_numpy_array, 2)} " in message


def test_np_array_of_traced_values_suggests_xnp_stack():
    with pytest.raises(xlac.TracerConversionError) as info:
        xlac.compile(numpy_array_of_traced_values, convert=False)(X)
    message = str(info.value)
    assert message.startswith("np.asarray() / np.array() of a traced value (`np.array([x, y])` too) needs a "
                              "concrete value")
    assert HINT in message and "xnp.stack([...]) instead of np.array([...])" in message
    assert f"at {_line_of(numpy_array_of_traced_values, 1)} " in message


def test_converted_the_same_functions_are_numpys_programs():
    for fn, args in ((item_into_numpy_array, (X,)), (slice_into_numpy_array, (X,)),
                     (numpy_array_of_traced_values, (X,)), (integer_item_into_numpy_array, (np.array([4, 5]),))):
        assert_matches(xlac.compile(fn)(*args), fn(*args))
    assert_matches(xlac.grad(lambda x: item_into_numpy_array(x).sum())(X), np.array([1.0, 0.0, 0.0]))


def test_an_explicit_float_of_a_traced_value_keeps_its_own_message():
    with pytest.raises(xlac.TracerConversionError, match=r"^float\(\) needs a concrete value"):
        xlac.compile(lambda x: float(x[0]), convert=False)(X)       # converted, it is a weak float64


def test_another_value_error_is_left_alone():
    def f(x):
        raise ValueError("the user's own error")
    with pytest.raises(ValueError, match="^the user's own error$"):
        xlac.compile(f)(X)


# ---------------------------------------------------------------- what the hint suggests works

def written_with_like(x):
    out = np.zeros(3, like=x)
    out[0] = x[1]
    filled = np.full(3, 2.0, like=x)
    filled[1:] = x[:2]
    return out, filled, np.ones((2,), dtype=np.float32, like=x), np.empty(3, like=x) * 0, \
        np.eye(2, like=x), np.arange(3, like=x), np.array([x[0], x[2]], like=x)


def written_with_xnp(x):
    out = xnp.zeros(3)
    out[0] = x[1]
    return out


def test_like_x_and_xnp_zeros_take_traced_values_as_numpy_does():
    for got, expected in zip(xlac.compile(written_with_like)(X), written_with_like(X)):
        assert_matches(got, expected)
    assert_matches(xlac.compile(written_with_xnp)(X), written_with_like(X)[0])


def test_like_an_xlac_array_runs_eagerly():
    x = xlac.asarray(X)
    ones = np.ones((2, 2), like=x)
    assert isinstance(ones, xlac.Array)
    assert_matches(ones, np.ones((2, 2)))
    assert_matches(np.full(3, 7, like=x), np.full(3, 7))


OUTSIDE = np.zeros(4)


def test_a_traced_index_into_an_outside_numpy_array_suggests_an_xlac_array():
    def f(i):
        OUTSIDE[i] = 1.0
        return i
    with pytest.raises(xlac.TracerConversionError) as info:
        xlac.compile(f, convert=False)(np.int64(2))
    message = str(info.value)
    assert message.startswith("a traced value (i64[]) was used in a write to a NumPy array (`a[i] = v`, as v or i)")
    assert "hold it as an xlac.Array (xlac.asarray(a))" in message and _line_of(f, 1) in message
    assert not OUTSIDE.any()
