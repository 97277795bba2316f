"""Arrays split over several devices, as jax Arrays: putting NumPy data onto a mesh, assembling a program's
per-device outputs into global arrays, reading the shardings XLA's partitioner chose.

A sharded ``xlac.Array`` holds a global jax Array (its shards on the mesh's devices), which
``execute_sharded`` takes as it is. 64-bit data keeps its type: each shard goes to its device through the
single-device put of ``xlac.runtime.transfer``.

>>> import numpy as np
>>> from xlac.ir.sharding import Mesh, NamedSharding, PartitionSpec
>>> from xlac.runtime.client import default_device
>>> s = NamedSharding(Mesh(np.array([default_device()]), ("x",)), PartitionSpec("x"))
>>> to_numpy_global(put_sharded(np.arange(4.0), s), np.dtype("float64"), (4,))
array([0., 1., 2., 3.])
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from xlac.ir.sharding import Mesh, NamedSharding, PartitionSpec, from_tiles
from xlac.runtime.transfer import to_device, to_numpy


@functools.lru_cache(maxsize=256)
def jax_sharding(sharding: NamedSharding):
    """JAX's NamedSharding for an xlac one."""
    mesh = jax.sharding.Mesh(sharding.mesh.devices, sharding.mesh.axis_names)
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*sharding.spec))


def _local_positions(mesh: Mesh) -> list[tuple[int, object]]:
    """(position in the mesh, device) for each device of the mesh this process can address."""
    return [(i, d) for i, d in enumerate(mesh.device_list) if d.process_index == jax.process_index()]


def put_sharded(array: np.ndarray, sharding: NamedSharding):
    """A global jax Array holding ``array`` split as ``sharding`` says: this process's shards, copied."""
    shards = [to_device(np.ascontiguousarray(array[sharding.shard_index(array.shape, i)]), device, copy=True)
              for i, device in _local_positions(sharding.mesh)]
    return assemble(array.shape, sharding, shards)


def put_local_shards(local: np.ndarray, global_shape: tuple[int, ...], sharding: NamedSharding):
    """A global jax Array of ``global_shape`` from this process's part of it (``local``: the rows of the
    leading axis this process's devices hold, in order), as ``jax.make_array_from_process_local_data``."""
    positions = _local_positions(sharding.mesh)
    indices = [sharding.shard_index(global_shape, i) for i, _ in positions]
    offset = min((ix[0].start or 0) if ix else 0 for ix in indices)
    shards = []
    for (i, device), index in zip(positions, indices):
        local_index = index
        if index:
            first = index[0]
            start = (first.start or 0) - offset
            stop = start + ((first.stop or global_shape[0]) - (first.start or 0))
            local_index = (slice(start, stop),) + index[1:]
        shards.append(to_device(np.ascontiguousarray(local[local_index]), device, copy=True))
    return assemble(global_shape, sharding, shards)


def assemble(shape: tuple[int, ...], sharding: NamedSharding, shards: list):
    """A global jax Array from its single-device shards (in the mesh's order of this process's devices)."""
    return jax.make_array_from_single_device_arrays(tuple(shape), jax_sharding(sharding), shards)


def to_numpy_global(buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The whole array of a global jax Array; ValueError when other processes hold some of it."""
    if not buffer.is_fully_addressable:
        raise ValueError("this array is split over the devices of several processes, and this process holds only "
                         "some of its shards: read them with .addressable_shards")
    if len(buffer.sharding.device_set) == 1:
        return to_numpy(buffer, dtype, shape)
    out = np.empty(shape, dtype)
    for shard in buffer.addressable_shards:
        out[shard.index] = to_numpy(shard.data, dtype, shard.data.shape)
    return out


def shards_of(buffer) -> list[tuple[object, tuple[slice, ...], object]]:
    """(device, index into the global array, single-device buffer) for each shard this process holds."""
    return [(shard.device, shard.index, shard.data) for shard in buffer.addressable_shards]


def sharding_of_output(op_sharding, mesh: Mesh, ndim: int) -> NamedSharding | None:
    """The NamedSharding over ``mesh`` that XLA's ``OpSharding`` of a program output describes (None
    when no partition spec over the mesh's axes does)."""
    kind = str(op_sharding.type).rsplit(".", 1)[-1]
    if kind == "REPLICATED":
        return NamedSharding(mesh, PartitionSpec())
    if kind != "OTHER" or list(op_sharding.last_tile_dims):
        return None
    grid = list(op_sharding.tile_assignment_dimensions)
    positions = list(op_sharding.tile_assignment_devices)
    if not positions:
        reshape, permutation = list(op_sharding.iota_reshape_dims), list(op_sharding.iota_transpose_perm)
        positions = np.arange(int(np.prod(grid))).reshape(reshape).transpose(permutation).reshape(-1).tolist()
    if not op_sharding.replicate_on_last_tile_dim:
        grid.append(1)
    if len(grid) != ndim + 1:
        return None
    return from_tiles(mesh, ndim, grid, positions)
