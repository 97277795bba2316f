"""Packing the truth of elements into the bits of uint8 values, and unpacking them: ``packbits``,
``unpackbits``.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.packbits(np.array([1, 0, 1])))
array([160], dtype=uint8)
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located
from xlac.numpy import _core, creation, indexing, reductions, shapes, ufuncs
from xlac.numpy._dispatch import numpy_function_with_static
from xlac.numpy.manipulation import padding

__all__ = ['packbits', 'unpackbits']


@numpy_function_with_static("axis", "bitorder")
def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of ``a``'s elements into uint8 bits along ``axis`` (flattened when None).

    >>> np.asarray(packbits(np.array([1, 0, 1])))
    array([160], dtype=uint8)
    """
    a = _core.asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError(located("Expected an input array of integer or boolean data type (packbits)"))
    if bitorder not in ("big", "little"):
        raise ValueError(located("packbits: 'order' must be either 'little' or 'big'"))
    if axis is None:
        a, axis = shapes.ravel(a), 0
    axis = _core.normalize_axis(axis, a.ndim, "packbits")
    bits = (a != 0).astype(np.uint8)
    n = a.shape[axis]
    padded = -(-n // 8) * 8
    if padded != n:
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, padded - n)
        bits = padding.pad(bits, widths)
    shape = bits.shape[:axis] + (padded // 8, 8) + bits.shape[axis + 1:]
    bits = shapes.reshape(bits, shape)
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128],
                       np.uint8).reshape((8,) + (1,) * (a.ndim - axis - 1))
    return reductions.sum(bits * weights, axis=axis + 1, dtype=np.uint8)


@numpy_function_with_static("axis", "count", "bitorder")
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack uint8 elements into their bits along ``axis`` (flattened when None).

    >>> np.asarray(unpackbits(np.array([160], np.uint8)))
    array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
    """
    a = _core.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(located(f"Expected an input array of unsigned byte data type (unpackbits), got {a.dtype}"))
    if bitorder not in ("big", "little"):
        raise ValueError(located("unpackbits: 'order' must be either 'little' or 'big'"))
    if axis is None:
        a, axis = shapes.ravel(a), 0
    axis = _core.normalize_axis(axis, a.ndim, "unpackbits")
    shifts = np.array([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7], np.uint8)
    expanded = shapes.expand_dims(a, axis + 1)
    bits = ufuncs.bitwise_and(ufuncs.right_shift(expanded, shifts.reshape((8,) + (1,) * (a.ndim - axis - 1))),
                           np.uint8(1))
    bits = shapes.reshape(bits, a.shape[:axis] + (a.shape[axis] * 8,) + a.shape[axis + 1:])
    if count is not None:
        total = a.shape[axis] * 8
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = indexing.take(bits, creation.arange(keep), axis=axis)
        else:
            widths = [(0, 0)] * bits.ndim
            widths[axis] = (0, keep - total)
            bits = padding.pad(bits, widths)
    return bits
