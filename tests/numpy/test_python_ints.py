"""NEP 50: Python ints out of an integer array's range compare by value, and clip and where take them."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
compare_all = xlac.compile(lambda a, v: tuple(op(a, v) for op in COMPARISONS) + tuple(op(v, a) for op in COMPARISONS),
                           static_argnums=1)


def _array(dtype):
    info = np.iinfo(dtype)
    return np.array([info.min, 0, 1, info.max], dtype)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(INT_DTYPES), st.integers(-2 ** 70, 2 ** 70))
def test_comparisons_with_any_python_int_match_numpy(dtype, value):
    a = _array(dtype)
    expected = [op(a, value) for op in COMPARISONS] + [op(value, a) for op in COMPARISONS]
    try:
        expected = [np.asarray(e) for e in expected]
    except OverflowError:       # beyond int64/uint64: NumPy itself refuses; so may xlac
        return
    for got, want in zip(compare_all(a, value), expected):
        np.testing.assert_array_equal(np.asarray(got), want)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(INT_DTYPES[:6]), st.integers(-70000, 70000), st.integers(-70000, 70000))
def test_clip_and_where_take_out_of_range_python_ints_as_numpy_does(dtype, low, high):
    a = _array(dtype)
    try:
        clipped = np.clip(a, low, high)
    except OverflowError as e:          # a bound beyond the range on the side that would clip
        with pytest.raises(OverflowError, match=str(e)):
            xlac.compile(lambda a: np.clip(a, low, high))(a)
    else:
        got = np.asarray(xlac.compile(lambda a: np.clip(a, low, high))(a))
        np.testing.assert_array_equal(got, clipped)
        assert got.dtype == clipped.dtype
    mask = np.array([True, False, True, False])
    picked = np.where(mask, a, low)
    got = np.asarray(xlac.compile(lambda a: np.where(mask, a, low))(a))
    np.testing.assert_array_equal(got, picked)
    assert got.dtype == picked.dtype


def test_arithmetic_with_an_out_of_range_python_int_still_raises():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        xlac.compile(lambda a: a + 300)(np.zeros(2, np.uint8))
