"""Moving arrays between NumPy and device buffers.

``jax.device_put`` narrows 64-bit values to 32 bits unless JAX's x64 mode is on,
and xlac must neither depend on that mode nor change it. 64-bit arrays therefore
travel as their bytes (a ``uint8`` view); the executable, which checks only byte
sizes, reads them with the type it was compiled for. xlac checks every argument's
shape and dtype before it gets here.

>>> import numpy as np
>>> buf = to_device(np.arange(3.0), get_device("cpu"))
>>> to_numpy(buf, np.dtype("float64"), (3,))
array([0., 1., 2.])
"""
from __future__ import annotations

import jax
import numpy as np

from xlac.runtime.client import get_device  # noqa: F401  (used by the docstring example)

_jax_array_type = jax.Array


def is_device_buffer(x) -> bool:
    """True for a jax Array (the buffers that xlac.Array wraps are jax Arrays too)."""
    return isinstance(x, _jax_array_type)


def buffer_dtype(buffer) -> np.dtype:
    return buffer.dtype


def to_device(array: np.ndarray, device, *, copy: bool = False):
    """A device buffer holding ``array``'s bytes; 64-bit dtypes arrive as raw bytes.

    With ``copy=False`` a CPU buffer may share memory with ``array`` (PJRT uses an
    aligned NumPy array in place), so callers that keep the buffer pass ``copy=True``.
    """
    if copy:
        array = np.array(array, copy=True, order="C")
    elif not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    if array.dtype.itemsize == 8 or array.dtype.kind == "c":
        array = array.reshape(-1).view(np.uint8)
    return jax.device_put(array, device)


def to_numpy(buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The buffer's contents as a NumPy array of ``dtype`` and ``shape``."""
    host = np.asarray(buffer)
    if host.dtype != dtype:
        host = host.view(dtype)
    return host.reshape(shape)


def put_buffer(buffer, device):
    """``buffer`` on ``device`` (a no-op when it already lives there)."""
    if buffer.devices() == {device}:
        return buffer
    return jax.device_put(buffer, device)
