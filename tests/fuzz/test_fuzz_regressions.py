"""Bugs the differential fuzzer (tests/fuzz) found, each pinned as a plain test against NumPy."""
import numpy as np
import pytest

import xlac


@pytest.mark.parametrize("axis", [0, -1])
def test_ufunc_reduce_of_a_0d_array_takes_axis_0(axis):
    a = np.array(3, np.int32)
    expected = np.logical_or.reduce(a, axis=axis)
    got = xlac.compile(lambda x: np.logical_or.reduce(x, axis=axis))(a)
    assert np.asarray(got).dtype == expected.dtype and np.asarray(got) == expected
    eager = np.add.reduce(xlac.asarray(a), axis=axis)
    assert np.asarray(eager).dtype == np.add.reduce(a, axis=axis).dtype and np.asarray(eager) == 3


@pytest.mark.parametrize("write", ["augmented", "slice", "out"])
def test_complex_values_into_a_bool_array_are_nonzero_tests(write):
    """NumPy casts complex to bool as ``x != 0`` (either part), not by the real part."""
    def f(a, v):
        if write == "augmented":
            a[0, -3] += 1j
        elif write == "slice":
            a[1, 1:] = v
        else:
            np.add(np.resize(v, a.shape), 0, out=a, casting="unsafe")
    v = np.array([1j, 0])
    expected = np.zeros((2, 3), bool)
    f(expected, v)
    compiled = np.zeros((2, 3), bool)
    xlac.compile(f)(compiled, v)
    eager = xlac.asarray(np.zeros((2, 3), bool))
    f(eager, v)
    np.testing.assert_array_equal(compiled, expected)
    np.testing.assert_array_equal(np.asarray(eager), expected)


def test_a_traced_mask_selection_in_a_function_raises_tracer_conversion_error():
    def program(a):
        t = a[a > 0]
        return np.where(a > 0, t, t)
    with pytest.raises(xlac.TracerConversionError, match="traced mask"):
        xlac.compile(program)(np.ones((1, 3), np.uint8))


@pytest.mark.parametrize("start", [3, -2])
def test_a_masked_selection_takes_a_one_element_array_as_numpy(start):
    """``t[t > 0] -= t`` with ``t`` of shape (1,): the value broadcasts against the selection as a scalar."""
    def program(a):
        t = a.astype(np.float32).cumsum()
        t[t > 0] -= t
        return t
    a = np.int32(start)
    got = xlac.compile(program)(a)
    np.testing.assert_array_equal(np.asarray(got), program(a))
    assert np.asarray(got).dtype == program(a).dtype


def test_a_masked_selection_of_leading_axes_takes_a_row():
    def f(x, r):
        x[x.sum(1) > 0] += r
        return x
    x = np.array([[1.0, 2.0], [-3.0, -4.0], [5.0, 6.0]])
    for r in (np.array([[10.0, 20.0]]), np.array([10.0, 20.0]), 1.5):
        np.testing.assert_array_equal(np.asarray(xlac.compile(f)(x.copy(), r)), f(x.copy(), r))


def test_a_masked_selection_pairs_with_a_value_of_its_length_and_fails_as_numpy_for_another():
    def f(x, r):
        x[x.sum(1) > 0] += r
        return x
    r = np.ones((2, 2))
    x = np.array([[1.0, 2.0], [-3.0, -4.0], [5.0, 6.0]])          # two rows selected: r pairs with them
    np.testing.assert_array_equal(np.asarray(xlac.compile(f)(x.copy(), r)), f(x.copy(), r))
    with pytest.raises(ValueError, match="could not be broadcast"):
        f(np.ones((3, 2)), r)                                        # NumPy: three rows against two
    with pytest.raises(ValueError, match="could not be broadcast together.* length 3 .* against an axis of length 2"):
        xlac.compile(f)(np.ones((3, 2)), r)
