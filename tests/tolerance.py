"""Float tolerances per dtype for comparing xlac against NumPy, and the comparison itself."""
import numpy as np

from xlac.ir import dtypes

_TOLERANCE = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-12,
              "complex64": 2e-5, "complex128": 1e-12}


def tolerance(dtype) -> float:
    """Relative (and absolute) tolerance for results of ``dtype``; 0 for exact dtypes."""
    return _TOLERANCE.get(np.dtype(dtype).name, 0.0)


def assert_matches(got, expected, *, rtol=None, check_dtype=True):
    """``got`` (an xlac.Array or NumPy value) equals NumPy's ``expected`` in value, shape and dtype."""
    expected = np.asarray(expected)
    got_np = np.asarray(got)
    if check_dtype:
        assert got_np.dtype == expected.dtype, f"dtype {got_np.dtype} != NumPy's {expected.dtype}"
    assert got_np.shape == expected.shape, f"shape {got_np.shape} != NumPy's {expected.shape}"
    tol = tolerance(expected.dtype) if rtol is None else rtol
    if tol == 0.0:
        np.testing.assert_array_equal(got_np, expected)
    else:
        np.testing.assert_allclose(got_np.astype(np.float64) if got_np.dtype == dtypes.bfloat16 else got_np,
                                   expected.astype(np.float64) if expected.dtype == dtypes.bfloat16 else expected,
                                   rtol=tol, atol=tol, equal_nan=True)
