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
    return put_from_callback(array.shape, array.dtype, sharding, array.__getitem__)


def put_from_callback(shape: tuple[int, ...], dtype: np.dtype | None, sharding: NamedSharding, block_at):
    """A global jax Array of ``shape`` split as ``sharding`` says, each of this process's shards being
    ``block_at(index)`` (a tuple of slices into the global array): the way each process of several puts
    only its own part. ``dtype``: None for the first block's."""
    shards = []
    for i, device in _local_positions(sharding.mesh):
        index = sharding.shard_index(tuple(shape), i)
        block = np.ascontiguousarray(np.asarray(block_at(index), dtype=dtype))
        dtype = block.dtype
        if block.shape != sharding.shard_shape(tuple(shape)):
            raise ValueError(f"the block for index {index} has shape {block.shape}; the sharding {sharding} "
                             f"gives each device {sharding.shard_shape(tuple(shape))}")
        shards.append(to_device(block, device, copy=True))
    return assemble(shape, sharding, shards)


def assemble(shape: tuple[int, ...], sharding: NamedSharding, shards: list):
    """A global jax Array from its single-device shards (in the mesh's order of this process's devices)."""
    return jax.make_array_from_single_device_arrays(tuple(shape), jax_sharding(sharding), shards)


def result_handlers(output_types, places) -> list | None:
    """jaxlib's C++ result handlers making each output of a call an array of its type, on its device or
    split as its NamedSharding says; None where this jaxlib lacks them."""
    try:
        from jax._src import core
        from jaxlib import _jax
        make = _jax.array_result_handler
    except (ImportError, AttributeError):
        return None
    return [make(core.ShapedArray(t.shape, t.dtype), _jax_placement(place), committed=True, _skip_checks=True)
            for t, place in zip(output_types, places)]


def _jax_placement(place):
    return jax_sharding(place) if isinstance(place, NamedSharding) else jax.sharding.SingleDeviceSharding(place)


def to_numpy_global(buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The whole array of a global jax Array; ValueError when other processes hold parts of it that this
    one does not (a replicated array is read from this process's copy)."""
    if not buffer.is_fully_addressable and not buffer.is_fully_replicated:
        raise ValueError("this array is split over the devices of several processes, and this process holds only "
                         "some of its shards: read them with .addressable_shards")
    if len(buffer.sharding.device_set) == 1:
        return to_numpy(buffer, dtype, shape)
    if buffer.is_fully_replicated:
        return to_numpy(buffer.addressable_shards[0].data, dtype, shape)
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
