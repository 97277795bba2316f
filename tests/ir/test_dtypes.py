"""NEP 50 promotion: xlac's result_type against NumPy 2's, weak Python scalars and bfloat16 included."""
import itertools

import numpy as np
import pytest

from xlac.ir import dtypes

STANDARD = [d for d in dtypes.SUPPORTED if d != dtypes.bfloat16]
SCALARS = [True, 3, 2.5, 1j]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(STANDARD, 2)))
def test_pairs_match_numpy(a, b):
    assert dtypes.result_type(a, b) == np.result_type(a, b)


@pytest.mark.parametrize("dtype,scalar", list(itertools.product(STANDARD, SCALARS)))
def test_python_scalars_are_weak_as_in_numpy(dtype, scalar):
    expected = (np.zeros(2, dtype) + scalar).dtype if not (dtype == np.bool_ and scalar is True) else np.dtype(bool)
    assert dtypes.result_type(dtype, scalar) == expected


class WeakValue:
    """Stands for a traced value that came from a Python scalar."""
    weak = True

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


def test_weak_traced_values_promote_like_python_scalars():
    assert dtypes.result_type(np.dtype("float32"), WeakValue("float64")) == np.float32
    assert dtypes.result_type(np.dtype("int8"), WeakValue("int64")) == np.int8
    assert dtypes.result_type(np.dtype("int8"), WeakValue("float64")) == np.float64
    assert dtypes.is_weak_result(2.0, WeakValue("float64"))
    assert not dtypes.is_weak_result(2.0, np.dtype("float32"))


@pytest.mark.parametrize("other,expected", [
    ("float32", "float32"), ("float64", "float64"), ("float16", "float32"), ("int8", "bfloat16"),
    ("uint8", "bfloat16"), ("int32", "float64"), ("bool", "bfloat16"), ("complex64", "complex64"),
])
def test_bfloat16_promotes_like_float16(other, expected):
    assert dtypes.result_type(dtypes.bfloat16, np.dtype(other)) == dtypes.canonical(expected)


def test_bfloat16_with_python_float_stays_bfloat16():
    assert dtypes.result_type(dtypes.bfloat16, 1.0) == dtypes.bfloat16


def test_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="not supported"):
        dtypes.canonical("float128" if hasattr(np, "float128") else "datetime64")
