"""NEP 50's exceptions for Python integers out of the range of an integer array's dtype: NumPy 2 compares
them by value, and ``clip`` and ``where`` take them, where arithmetic raises ``OverflowError``.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.equal(np.array([0, 255], np.uint8), -1))
array([False, False])
"""
from __future__ import annotations

import numpy as np

from xlac.numpy._core import asarray, is_python_scalar
from xlac.trace import ops

__all__ = ["out_of_range", "comparison_with_out_of_range", "clipped_bound", "wrapped_into"]


def out_of_range(value, other) -> bool:
    """Whether ``value`` is a Python int outside the range of ``other``'s integer dtype."""
    if not (is_python_scalar(value) and type(value) is int) or is_python_scalar(other):
        return False
    dtype = np.result_type(asarray(other).dtype)
    if dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return not info.min <= value <= info.max


def comparison_with_out_of_range(direction: str, x1, x2):
    """``x1 <direction> x2`` when one side is a Python int out of the other's range: every element compares
    the same way, by value (``u8 == -1`` is all False, ``i8 < 1000`` all True). None when neither is."""
    if out_of_range(x2, x1):
        array, value, flipped = asarray(x1), x2, False
    elif out_of_range(x1, x2):
        array, value, flipped = asarray(x2), x1, True
    else:
        return None
    above = value > np.iinfo(array.dtype).max        # the Python int is above every element (else below)
    array_is_less = above != flipped                  # is x1 < x2 for every element?
    answer = {"EQ": False, "NE": True, "LT": array_is_less, "LE": array_is_less,
              "GT": not array_is_less, "GE": not array_is_less}[direction]
    return ops.full(array.shape, answer, np.bool_)


def clipped_bound(bound, array, lower: bool):
    """A clip bound as NumPy's ``clip`` takes it: a Python int beyond ``array``'s integer range on the side
    that clips nothing (below it for the lower bound, above it for the upper) is dropped (None); the other
    side is left to raise OverflowError as arithmetic does."""
    if not out_of_range(bound, array):
        return bound
    info = np.iinfo(np.result_type(asarray(array).dtype))
    return None if (bound < info.min if lower else bound > info.max) else bound


def wrapped_into(value, array):
    """A Python int out of ``array``'s integer range as ``where`` takes it: wrapped into the dtype."""
    if not out_of_range(value, array):
        return value
    dtype = np.result_type(asarray(array).dtype)
    return np.array(value % (1 << (8 * dtype.itemsize))).astype(np.uint64).astype(dtype)
