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

import math

import jax
import numpy as np

from xlac.runtime.client import get_device  # noqa: F401  (used by the docstring example)
from xlac.runtime.memory import raise_if_out_of_memory, raising_memory_error

_jax_array_type = jax.Array


def is_device_buffer(x) -> bool:
    """True for a jax Array (the buffers that xlac.Array wraps are jax Arrays too)."""
    return isinstance(x, _jax_array_type)


def is_split_buffer(x) -> bool:
    """True for a jax Array whose shards lie on several devices."""
    return isinstance(x, _jax_array_type) and len(x.sharding.device_set) > 1


def to_device(array: np.ndarray, device, *, copy: bool = False):
    """A device buffer holding ``array`` with its own dtype (64-bit dtypes are not narrowed).

    With ``copy=False`` a CPU buffer may share memory with ``array`` (PJRT uses an
    aligned NumPy array in place), so callers that keep the buffer pass ``copy=True``.
    """
    copy = copy or (device.platform == "cpu" and _copied_anyway(array))
    try:
        if _direct_put is not None:
            try:
                return _direct_put(array, device, copy)
            except TypeError:
                _disable_direct_put()
        return _put_as_bytes(array, device, copy)
    except Exception as error:
        raise_if_out_of_memory(error, lambda: f"moving an array of shape {array.shape} to the device")
        raise


# On CPU, PJRT uses a NumPy array's memory in place only when it is 64-byte aligned (large NumPy arrays
# usually lie at 16 bytes past a 64-byte boundary); otherwise it copies it, and the copy it makes when asked
# to (``copy=True``) is several times faster than the one it makes on its own (measured with jaxlib 0.10.2 on
# a loaded 2-core machine, best of 9: 1 MiB 90 us against 640 us, 4 MiB 2.5 ms against 3.9 ms; equal below
# 64 KiB, where the check is skipped).
_ZERO_COPY_ALIGNMENT = 64
_SMALL_BYTES = 1 << 16


def _copied_anyway(array: np.ndarray) -> bool:
    """Whether PJRT on CPU must copy ``array`` (large and not aligned for use in place)."""
    return array.nbytes >= _SMALL_BYTES and array.__array_interface__["data"][0] % _ZERO_COPY_ALIGNMENT != 0


def _put_as_bytes(array: np.ndarray, device, copy: bool):
    """The portable way: ``jax.device_put``, with 64-bit data sent as raw bytes.

    The executable reads such a buffer as the type it was compiled for (PJRT checks
    only byte sizes); xlac checks every argument's dtype before it gets here.
    """
    if copy:
        array = np.array(array, copy=True, order="C")
    elif not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    if array.dtype.itemsize == 8 or array.dtype.kind == "c":
        array = array.reshape(-1).view(np.uint8)
    return jax.device_put(array, device)


def _make_direct_put():
    """jaxlib's batched_device_put: about 3 us against jax.device_put's 20 us, and it keeps 64-bit
    dtypes when asked to (``enable_x64=True`` for this transfer only; JAX's own setting is untouched).
    ``direct_put.put_with(shape, dtype, device)``: jaxlib's put and its arguments besides the array and
    ``copy``, for arrays of one shape and dtype."""
    try:
        from jax._src import core
        from jax.sharding import SingleDeviceSharding
        from jaxlib import _jax
        put, zero_copy = _jax.batched_device_put, _jax.HostBufferSemantics.ZERO_COPY
    except (ImportError, AttributeError):
        return None
    avals: dict = {}
    shardings: dict = {}

    def parts(shape, dtype, device):
        key = (shape, dtype)
        aval = avals.get(key)
        if aval is None:
            aval = avals[key] = core.ShapedArray(shape, dtype)
        sharding = shardings.get(device)
        if sharding is None:
            sharding = shardings[device] = SingleDeviceSharding(device)
        return aval, sharding

    def direct_put(array: np.ndarray, device, copy: bool):
        aval, sharding = parts(array.shape, array.dtype, device)
        return put(aval, sharding, [array], [device], True, copy, zero_copy, True)

    def put_with(shape, dtype, device):
        return (put, *parts(shape, dtype, device), [device], zero_copy)
    direct_put.put_with = put_with
    return direct_put


_direct_put = _make_direct_put()


def _disable_direct_put():
    global _direct_put
    _direct_put = None


def host_putter(shape: tuple[int, ...], dtype: np.dtype, device, *, copy: bool = False):
    """``put(array)``: ``to_device(array, device, copy=copy)`` for NumPy arrays of ``shape`` and ``dtype``,
    with what the transfer needs besides the array made once (the cached call path's NumPy arguments).

    >>> put = host_putter((2,), np.dtype("float64"), get_device("cpu"))
    >>> to_numpy(put(np.arange(2.0)), np.dtype("float64"), (2,))
    array([0., 1.])
    """
    if _direct_put is None:
        return lambda array: to_device(array, device, copy=copy)
    direct, aval, sharding, devices, semantics = _direct_put.put_with(tuple(shape), np.dtype(dtype), device)
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    check_alignment = not copy and device.platform == "cpu" and nbytes >= _SMALL_BYTES

    def put(array: np.ndarray):
        try:
            copied = copy or (check_alignment and _copied_anyway(array))
            return direct(aval, sharding, [array], devices, True, copied, semantics, True)
        except Exception:     # noqa: BLE001 - the general path falls back, or names the failure
            return to_device(array, device, copy=copy)
    return put


def to_numpy(buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The buffer's contents as a NumPy array of ``dtype`` and ``shape``; MemoryError for a buffer whose
    allocation failed (reading it would abort the process)."""
    with raising_memory_error(lambda: f"reading an array of shape {shape}"):
        buffer.block_until_ready()
    host = np.asarray(buffer)
    if host.dtype != dtype:
        host = host.view(dtype)
    return host.reshape(shape)


def put_buffer(buffer, device):
    """``buffer`` on ``device`` (a no-op when it already lives there)."""
    if buffer.devices() == {device}:
        return buffer
    return jax.device_put(buffer, device)
