"""Compiling a partitioned (SPMD) StableHLO module for a list of devices, and global arrays from local shards.

The runtime half of sharding, on plain StableHLO text (``sdy.mesh``, ``#sdy.sharding`` attributes) and
jax's sharding objects; it works the same in one process and in several (``xlac.runtime.distributed``),
where each process passes the same global device list and puts only the shards of its own devices.

>>> import numpy as np
>>> from xlac.runtime.client import get_device
>>> text = '''module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
...   sdy.mesh @mesh = <["x"=1]>
...   func.func public @main(%a: tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
...       -> (tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
...     %z = stablehlo.constant dense<0.0> : tensor<f32>
...     %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
...         : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
...     return %r : tensor<3xf32>
...   }
... }'''
>>> devices = [get_device("cpu")]
>>> exe = compile_spmd(text, devices)
>>> sharding = named_sharding(devices, (1,), ("x",), ("x", None))
>>> x = global_array((2, 3), np.float32, sharding, lambda index: np.ones((2, 3), np.float32)[index])
>>> (total,) = exe.execute([x], outputs=[((3,), named_sharding(devices, (1,), ("x",), (None,)))])
>>> [(index, shard.tolist()) for index, shard in addressable_shards(total)]
[((slice(None, None, None),), [2.0, 2.0, 2.0])]
"""
from __future__ import annotations

import jax
import jax.extend.backend as jax_backend
import numpy as np

from xlac.runtime.executable import CompileError
from xlac.runtime.memory import raise_if_out_of_memory
from xlac.runtime.transfer import to_device


def spmd_compile_options(devices: list):
    """PJRT compile options for a module partitioned over ``devices`` (in the module's mesh order): one
    replica, ``len(devices)`` partitions, this device assignment, SPMD partitioning by Shardy (a module with
    ``sdy`` attributes compiled with Shardy off fails a RET_CHECK in XLA's partitioner)."""
    ids = np.array([d.id for d in devices]).reshape(1, len(devices))
    options = jax_backend.get_compile_options(num_replicas=1, num_partitions=len(devices), device_assignment=ids)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    return options


class SpmdExecutable:
    """A program compiled for several devices; ``execute(arrays)`` takes and returns global jax Arrays."""

    def __init__(self, loaded, devices: list):
        self._loaded = loaded
        self.devices = list(devices)
        self._device_set = frozenset(self.devices)

    def execute(self, arrays: list, outputs: list | None = None) -> list:
        """Run on this process's devices (every process of the program must call it, with its global arrays)
        and wait for the results: on a 2-core machine calls with collectives left in flight can deadlock.
        ``outputs``: each result's ``(global_shape, sharding)``, to get global jax Arrays back; without it
        each result is the list of this process's single-device arrays, in the order of ``devices``."""
        for i, array in enumerate(arrays):
            if not isinstance(array, jax.Array):
                raise TypeError(f"argument {i}: expected a global jax Array, got {type(array).__name__}")
            if array.sharding.device_set != self._device_set:
                # PJRT does not check this; a wrongly placed argument can crash the process.
                raise ValueError(f"argument {i} lies on devices {sorted(d.id for d in array.sharding.device_set)}, "
                                 f"the program was compiled for {sorted(d.id for d in self.devices)}")
        try:
            results = self._loaded.execute_sharded(list(arrays)).disassemble_into_single_device_arrays()
            for per_device in results:
                for buffer in per_device:
                    buffer.block_until_ready()
        except Exception as error:
            raise_if_out_of_memory(error, "running the partitioned program")
            raise
        if outputs is None:
            return results
        if len(outputs) != len(results):
            raise ValueError(f"outputs describes {len(outputs)} result(s), the program has {len(results)}")
        return [jax.make_array_from_single_device_arrays(tuple(shape), sharding, per_device)
                for (shape, sharding), per_device in zip(outputs, results)]

    def optimized_hlo(self) -> str:
        """XLA's HLO after partitioning and optimization (per-device shapes, the collectives)."""
        return "\n".join(m.to_string() for m in self._loaded.hlo_modules())


def compile_spmd(text: str, devices: list) -> SpmdExecutable:
    """Compile a module whose ``mhlo.num_partitions`` is ``len(devices)``; ``devices`` in the mesh's order
    (every process of a multi-process program passes the same list, the global devices)."""
    backend = devices[0].client
    try:
        loaded = backend.compile_and_load(text, list(devices), spmd_compile_options(devices))
    except Exception as error:
        raise_if_out_of_memory(error, "compiling the partitioned program")
        raise CompileError(f"XLA refused the partitioned module: {error}") from error
    return SpmdExecutable(loaded, devices)


def named_sharding(devices: list, mesh_shape: tuple, axis_names: tuple, spec: tuple):
    """A jax ``NamedSharding``: ``devices`` laid out row-major into a mesh of ``mesh_shape`` named
    ``axis_names``; ``spec`` one entry per dimension (an axis name, a tuple of them, or None)."""
    mesh = jax.sharding.Mesh(np.array(devices, dtype=object).reshape(mesh_shape), tuple(axis_names))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec))


def global_array(global_shape: tuple, dtype, sharding, shard_of) -> jax.Array:
    """A global array of ``global_shape`` split as ``sharding`` says, built from this process's shards only:
    ``shard_of(index)`` gives the NumPy data of the block ``index`` (a tuple of slices) for each of this
    process's devices."""
    dtype = np.dtype(dtype)
    buffers = []
    for device, index in sharding.addressable_devices_indices_map(tuple(global_shape)).items():
        shard = np.asarray(shard_of(index), dtype=dtype)
        buffer = to_device(shard, device, copy=True)
        if buffer.shape != shard.shape or buffer.dtype != dtype:
            raise TypeError(f"xlac: a {dtype} shard travelled as {buffer.dtype}{list(buffer.shape)}; global arrays of "
                            f"this dtype need jaxlib's batched_device_put")
        buffers.append(buffer)
    return jax.make_array_from_single_device_arrays(tuple(global_shape), sharding, buffers)


def addressable_shards(array: jax.Array) -> list:
    """This process's blocks of a global array, as ``(index, NumPy array)`` pairs in device-id order."""
    shards = sorted(array.addressable_shards, key=lambda s: s.device.id)
    return [(shard.index, np.asarray(shard.data)) for shard in shards]
