"""``xlac.Array``, an array on a device.

The class holds a device buffer and its type; its operators and methods are
installed by ``xlac.numpy`` (:mod:`xlac.numpy.operators`), and ``xlac.numpy``
calls on it run eagerly through :mod:`xlac.eager`.

>>> import numpy as np, xlac
>>> a = xlac.asarray(np.arange(3.0))
>>> a
Array([0., 1., 2.], dtype=float64)
>>> a.shape, a.dtype
((3,), dtype('float64'))
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlac import runtime
from xlac.argument_specs import refuse_array_subclass
from xlac.ir import dtypes
from xlac.ir.graph import Graph, Value
from xlac.ir.sharding import NamedSharding
from xlac.ir.types import TensorType
from xlac.lowering import lower_module


class Array:
    """A handle to a buffer on a device, with NumPy's array interface.

    Made by compiled functions, by eager ``xlac.numpy`` calls and by :func:`asarray`.
    Passing it back into a compiled function reuses the device buffer.
    """

    # _device: the device, or for an array split over several devices its NamedSharding (xlac.sharding).
    # mutability: "mutable", or "readonly" (the zeros of a real array's .imag, read-only as in NumPy)
    __slots__ = ("_buffer", "_xlac_type", "_device", "mutability", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        raise TypeError("xlac.Array is not constructed directly; use xlac.asarray(x)")

    @classmethod
    def _from_buffer(cls, buffer, type: TensorType, device) -> "Array":
        self = object.__new__(cls)
        self._buffer = buffer
        self._xlac_type = type
        self._device = device
        self.mutability = "mutable"
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        return self._xlac_type.shape

    @property
    def dtype(self) -> np.dtype:
        return self._xlac_type.dtype

    @property
    def device(self):
        """The device holding the array; for an array split over several devices, its sharding (as JAX)."""
        return self._device

    @property
    def sharding(self):
        """How the array is split over devices: a ``NamedSharding``, or ``SingleDeviceSharding`` for an
        array on one device."""
        return self._device if type(self._device) is NamedSharding else SingleDeviceSharding(self._device)

    def devices(self) -> set:
        return set(self._buffer.devices())

    @property
    def addressable_shards(self) -> list:
        """The parts of the array on this process's devices: each a ``Shard`` with its ``device``, its
        ``index`` into the array and its ``data`` (an ``xlac.Array`` on that device)."""
        return [Shard(device, index, Array._from_buffer(data, TensorType(tuple(data.shape), self.dtype), device))
                for device, index, data in runtime.shards_of(self._buffer)]

    def __array__(self, dtype=None, copy=None):
        if type(self._device) is NamedSharding:
            host = runtime.to_numpy_global(self._buffer, self.dtype, self.shape)
        else:
            host = runtime.to_numpy(self._buffer, self.dtype, self.shape)
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return np.array(host, copy=True) if copy else host

    def __xlac_array__(self) -> np.ndarray:
        return self.__array__()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array's buffer: versioned when ``max_version`` allows DLPack 1.x, the
        legacy (unversioned) one otherwise, as the standard asks."""
        if max_version is not None and max_version[0] < 1:
            max_version = None
        return self._buffer.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self._buffer.__dlpack_device__()

    def _store(self, new: "Array") -> None:
        """In-place update: this handle now refers to ``new``'s buffer (views of eager Arrays are copies).
        Inside a compiled function ``new`` is traced: the write goes to the implicit argument standing
        for this array, and lands in it when the call returns."""
        trace = getattr(new, "_trace", None)       # a traced value: this Array is read from outside
        if trace is not None:
            trace.capture(self, write=True)._store(new)
            return
        self._buffer, self._device = new._buffer, new._device

    def _store_retyped(self, new: "Array") -> None:
        """This handle now refers to ``new``'s buffer, taking its shape and dtype (``inplace_update``)."""
        self._buffer, self._device, self._xlac_type = new._buffer, new._device, new._xlac_type

    def block_until_ready(self) -> "Array":
        self._buffer.block_until_ready()
        return self

    def __repr__(self) -> str:
        body = np.array2string(self.__array__(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"

    def __str__(self) -> str:
        return str(self.__array__())

    def _scalar(self, convert):
        if self.size != 1:
            raise TypeError(f"only arrays of size 1 can be converted to Python scalars, this one has shape {self.shape}")
        return convert(self.__array__().reshape(()))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self.__array__().reshape(()))

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if not dtypes.is_int(self.dtype) or self.shape:      # NumPy: only 0-d integer arrays are an index
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return self._scalar(int)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def item(self):
        return self.__array__().item()

    def tolist(self):
        return self.__array__().tolist()


@dataclass(frozen=True)
class SingleDeviceSharding:
    """The sharding of an array held whole by one device."""

    device: object


@dataclass(frozen=True)
class Shard:
    """One device's part of an array: ``data`` is ``array[index]``."""

    device: object
    index: tuple
    data: Array


def asarray(x, dtype=None, device=None) -> Array:
    """An ``xlac.Array`` holding a copy of ``x`` (a NumPy array, scalar, nested list or Array) on ``device``.

    >>> asarray([1, 2], dtype="float32")
    Array([1., 2.], dtype=float32)
    """
    if isinstance(x, Array) and dtype is None and device is None:
        return x
    refuse_array_subclass(x, "xlac.asarray")
    target = runtime.get_device(device)
    host = np.asarray(x, dtype=dtypes.canonical(dtype) if dtype is not None else None)
    if host.dtype not in dtypes.SUPPORTED:
        raise TypeError(f"xlac.asarray: dtype {host.dtype} is not supported")
    buffer = runtime.to_device(host, target, copy=True)
    if buffer.dtype != host.dtype:         # 64-bit data travelled as bytes: retype it on the device
        return _retype(buffer, TensorType(host.shape, host.dtype), target)
    return Array._from_buffer(buffer, TensorType(host.shape, host.dtype), target)


def _retype(buffer, type: TensorType, device) -> Array:
    """Copy ``buffer`` through a cached identity executable, which gives 64-bit data its real type."""
    key = (device, type)
    executable = _identities.get(key)
    if executable is None:
        value = Value(type)
        identity = lower_module(Graph(inputs=[value], outputs=[value], input_names=["x"]))
        executable = _identities[key] = runtime.compile_stablehlo(identity, device, output_types=[type])
    return Array._from_buffer(executable.execute([buffer])[0], type, device)


_identities: dict = {}
