"""Keys that compare values exactly: by type and bits, where ``==`` would say 0.0 == -0.0 and 1 == 1.0 == True.
Compile caches key static values by them, and simplify compares node attributes by them.
"""
from __future__ import annotations

import struct

import numpy as np


_ATOMS = (int, bool, str, type(None))


def exact_key(value):
    """A hashable stand-in for ``value`` that tells apart what ``==`` confuses: 0.0 and -0.0, 1 and 1.0 and
    True, NaNs with other bits (and a NaN equals itself). Raises TypeError for what cannot be hashed.

    >>> exact_key(0.0) == exact_key(-0.0), exact_key(1) == exact_key(1.0), exact_key(float("nan")) == exact_key(float("nan"))
    (False, False, True)
    """
    kind = type(value)
    if kind in _ATOMS:
        return (kind, value)
    if kind in (tuple, list):              # ints inline: shapes and axes are most of what compile keys hold
        return (kind, tuple([(int, v) if type(v) is int else exact_key(v) for v in value]))
    if kind is float:
        return (kind, struct.pack("<d", value))
    if kind is complex:
        return (kind, struct.pack("<dd", value.real, value.imag))
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        return (np.ndarray, array.dtype.str, array.shape, array.tobytes())
    if kind is dict:
        return (kind, tuple(sorted((k, exact_key(v)) for k, v in value.items())))
    hash(value)                              # raises TypeError for what cannot be compared
    return (kind, value)
