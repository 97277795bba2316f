"""How an array is split over a mesh of devices: ``Mesh``, ``PartitionSpec``, ``NamedSharding``.

JAX's model, in xlac's own small immutable classes (``as_sharding`` takes JAX's objects too). A mesh
arranges devices in a grid with named axes; a partition spec says, per array dimension, which mesh axes
split it (none: every device along the other axes holds the whole dimension). XLA's SPMD partitioner
does the rest: it reads the shardings of the program's arguments, results and constraints, and inserts
the communication.

>>> mesh = Mesh(np.arange(8).reshape(2, 4), ("x", "y"))         # stand-ins for devices
>>> s = NamedSharding(mesh, PartitionSpec("x", None))
>>> s.shard_shape((8, 32))
(4, 32)
>>> s.shard_index((8, 32), 5)                                  # device 5 is at x=1, y=1
(slice(4, 8, None), slice(None, None, None))
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


class Mesh:
    """Devices arranged in a grid whose axes have names: ``Mesh(devices_2d, ("x", "y"))``.

    >>> Mesh(np.arange(4).reshape(2, 2), ("data", "model")).shape
    {'data': 2, 'model': 2}
    """

    __slots__ = ("devices", "axis_names", "_key")

    def __init__(self, devices, axis_names: Sequence[str]):
        devices = np.array(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(f"Mesh: {devices.ndim}-d devices array with {len(axis_names)} axis names "
                             f"{axis_names}")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names repeat: {axis_names}")
        ids = [getattr(d, "id", d) for d in devices.flat]
        if len(set(ids)) != len(ids):
            raise ValueError("Mesh: a device appears twice")
        self.devices = devices
        self.axis_names = axis_names
        self._key = (axis_names, devices.shape, tuple(ids))

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return self.devices.size

    @property
    def device_list(self) -> list:
        """The devices in the mesh's order: position ``i`` runs partition ``i`` of the program."""
        return list(self.devices.flat)

    def __eq__(self, other):
        return isinstance(other, Mesh) and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        ids = self._key[2]
        return f"Mesh({axes})" if ids == tuple(range(len(ids))) else f"Mesh({axes}, devices {list(ids)})"


class PartitionSpec(tuple):
    """Per array dimension, the mesh axis (a name), axes (a tuple of names, major first) or ``None``
    that split it; dimensions past its length are not split. JAX's ``PartitionSpec`` is equal to it.

    >>> PartitionSpec("x", None, ("y", "z"))
    PartitionSpec('x', None, ('y', 'z'))
    """

    def __new__(cls, *dims):
        return super().__new__(cls, dims)

    def __repr__(self):
        return "PartitionSpec(" + ", ".join(map(repr, self)) + ")"

    def axes_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes that split dimension ``dim``, major first (``()``: not split)."""
        entry = self[dim] if dim < len(self) else None
        if entry is None:
            return ()
        return (entry,) if isinstance(entry, str) else tuple(entry)


class NamedSharding:
    """An array split over ``mesh`` as ``spec`` says.

    >>> mesh = Mesh(np.arange(2), ("x",))
    >>> NamedSharding(mesh, PartitionSpec("x"))
    NamedSharding(Mesh('x': 2), PartitionSpec('x'))
    """

    __slots__ = ("mesh", "spec", "_split")

    def __init__(self, mesh: Mesh, spec: PartitionSpec = PartitionSpec()):
        if not isinstance(mesh, Mesh):
            mesh = as_mesh(mesh)
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        used = [a for d in range(len(spec)) for a in spec.axes_of(d)]
        for axis in used:
            if axis not in mesh.shape:
                raise ValueError(f"PartitionSpec {tuple(spec)} names mesh axis {axis!r}, which the mesh lacks "
                                 f"(its axes: {', '.join(mesh.axis_names)})")
        if len(set(used)) != len(used):
            raise ValueError(f"PartitionSpec {tuple(spec)} uses a mesh axis for two dimensions")
        self.mesh = mesh
        self.spec = spec
        # The spec without its trailing unsplit dimensions (``P("x", None) == P("x")``): what equality compares.
        dims = [spec.axes_of(d) for d in range(len(spec))]
        while dims and not dims[-1]:
            dims.pop()
        self._split = tuple(dims)

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and other.mesh == self.mesh and self._split == other._split

    def __hash__(self):
        return hash((self.mesh, self._split))

    def __repr__(self):
        return f"NamedSharding({self.mesh!r}, {self.spec!r})"

    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[a] == 1 for d in self._split for a in d)

    def check_shape(self, shape: tuple[int, ...], what: str) -> None:
        """ValueError naming ``what`` unless this sharding fits an array of ``shape``: a spec as long as
        the array at most, each split dimension divisible by its number of parts."""
        if len(self.spec) > len(shape):
            raise ValueError(f"{what}: PartitionSpec {tuple(self.spec)} has {len(self.spec)} entries for an array "
                             f"of {len(shape)} dimensions (shape {shape})")
        for dim, parts in enumerate(self.parts(len(shape))):
            if shape[dim] % parts:
                raise ValueError(f"{what}: dimension {dim} of shape {shape} (size {shape[dim]}) does not divide into "
                                 f"{parts} parts along mesh axes {self.spec.axes_of(dim)}")

    def parts(self, ndim: int) -> list[int]:
        """Into how many parts each of ``ndim`` dimensions is split."""
        return [math.prod(self.mesh.shape[a] for a in self.spec.axes_of(d)) for d in range(ndim)]

    def shard_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the part each device holds."""
        return tuple(n // p for n, p in zip(shape, self.parts(len(shape))))

    def shard_index(self, shape: tuple[int, ...], position: int) -> tuple[slice, ...]:
        """The part of an array of ``shape`` that the device at ``position`` in the mesh's order holds."""
        coordinates = dict(zip(self.mesh.axis_names, np.unravel_index(position, self.mesh.devices.shape)))
        index = []
        for dim, size in enumerate(shape):
            axes = self.spec.axes_of(dim)
            if not axes:
                index.append(slice(None))
                continue
            part = 0
            for axis in axes:
                part = part * self.mesh.shape[axis] + int(coordinates[axis])
            step = size // math.prod(self.mesh.shape[a] for a in axes)
            index.append(slice(part * step, (part + 1) * step))
        return tuple(index)

    def tiles(self, ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """XLA's tiled form of this sharding for an array of ``ndim`` dimensions: the tile grid's shape
        (the parts per dimension, then the number of copies of each tile) and the mesh position of each
        tile in row-major order."""
        split = [a for d in range(ndim) for a in self.spec.axes_of(d)]
        replicated = [a for a in self.mesh.axis_names if a not in split]
        order = [self.mesh.axis_names.index(a) for a in split + replicated]
        positions = np.arange(self.mesh.size).reshape(self.mesh.devices.shape).transpose(order)
        copies = math.prod(self.mesh.shape[a] for a in replicated)
        return tuple(self.parts(ndim)) + (copies,), tuple(int(p) for p in positions.flat)


@dataclass(frozen=True)
class ProgramSharding:
    """A program split over ``mesh``: each input's sharding, and each output's (None: XLA's partitioner
    chooses, from what the program computes)."""

    mesh: Mesh
    inputs: tuple
    outputs: tuple


def from_tiles(mesh: Mesh, ndim: int, grid: Sequence[int], positions: Sequence[int]) -> NamedSharding | None:
    """The ``NamedSharding`` over ``mesh`` whose tiled form (see ``NamedSharding.tiles``) is ``grid`` and
    ``positions``; None when no spec over the mesh's axes gives it.

    >>> mesh = Mesh(np.arange(8).reshape(2, 4), ("x", "y"))
    >>> from_tiles(mesh, 2, *NamedSharding(mesh, PartitionSpec("y", "x")).tiles(2)).spec
    PartitionSpec('y', 'x')
    """
    grid, positions = tuple(grid), tuple(positions)
    for assignment in itertools.product(range(ndim + 1), repeat=len(mesh.axis_names)):
        per_dim = [[a for a, d in zip(mesh.axis_names, assignment) if d == dim] for dim in range(ndim)]
        if any(math.prod(mesh.shape[a] for a in axes) != grid[dim] for dim, axes in enumerate(per_dim)):
            continue
        for orders in itertools.product(*(itertools.permutations(axes) for axes in per_dim)):
            spec = PartitionSpec(*(order[0] if len(order) == 1 else (tuple(order) or None) for order in orders))
            candidate = NamedSharding(mesh, spec)
            if candidate.tiles(ndim) == (grid, positions):
                return candidate
    return None


def as_mesh(mesh) -> Mesh:
    """An xlac ``Mesh`` for an xlac or JAX mesh (anything with ``devices`` and ``axis_names``)."""
    if isinstance(mesh, Mesh):
        return mesh
    if hasattr(mesh, "devices") and hasattr(mesh, "axis_names"):
        return Mesh(np.asarray(mesh.devices, dtype=object), tuple(mesh.axis_names))
    raise TypeError(f"expected a Mesh, got {type(mesh).__name__}")


def as_sharding(sharding, what: str = "sharding") -> NamedSharding:
    """An xlac ``NamedSharding`` for an xlac or JAX ``NamedSharding`` (anything with ``mesh`` and ``spec``).

    >>> as_sharding(NamedSharding(Mesh(np.arange(2), "x"), PartitionSpec())).spec
    PartitionSpec()
    """
    if isinstance(sharding, NamedSharding):
        return sharding
    if hasattr(sharding, "mesh") and hasattr(sharding, "spec"):
        return NamedSharding(as_mesh(sharding.mesh), PartitionSpec(*sharding.spec))
    raise TypeError(f"{what}: expected a NamedSharding (xlac's or JAX's), got {type(sharding).__name__}")
