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
