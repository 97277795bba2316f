"""Programs split over several devices: meshes, shardings, sharded arrays and constraints.

A ``Mesh`` arranges devices in a grid with named axes; ``NamedSharding(mesh, PartitionSpec(...))`` says
which mesh axes split each dimension of an array. ``xlac.device_put`` splits an array so;
``xlac.compile(fn, in_shardings=..., out_shardings=...)`` compiles one program for the mesh (arguments'
shardings default to those of the sharded ``xlac.Array``s passed), and XLA's SPMD partitioner inserts the
communication; ``with_sharding_constraint`` fixes an intermediate value's layout. JAX's ``Mesh``,
``NamedSharding`` and ``PartitionSpec`` are accepted wherever xlac's are.

>>> import numpy as np, xlac
>>> mesh = xlac.sharding.make_mesh((1,), ("x",))
>>> a = xlac.device_put(np.arange(4.0), NamedSharding(mesh, PartitionSpec("x")))
>>> a.sharding.spec
PartitionSpec('x')
"""
from __future__ import annotations

import math

import numpy as np

from xlac import runtime
from xlac.argument_specs import refuse_array_subclass
from xlac.array import Array, asarray
from xlac.errors import located
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.graph import Graph
from xlac.ir.sharding import Mesh, NamedSharding, PartitionSpec, ProgramSharding, as_sharding
from xlac.ir.types import TensorType
from xlac.trace import ops, pytree
from xlac.trace.tracer import Tracer

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "devices", "device_put", "make_array_from_callback", "make_mesh",
           "with_sharding_constraint"]


def devices(platform: str | None = None) -> list:
    """The devices of the default platform (or of ``platform``), all processes' devices included.

    >>> len(devices()) >= 1
    True
    """
    return runtime.all_devices(platform)


def make_mesh(axis_shapes, axis_names, devices_=None) -> Mesh:
    """A mesh of ``axis_shapes`` named ``axis_names`` over the first devices (or ``devices_``), as
    ``jax.make_mesh``.

    >>> make_mesh((1,), ("data",))
    Mesh('data': 1)
    """
    axis_shapes = tuple(axis_shapes)
    pool = list(devices_) if devices_ is not None else devices()
    count = math.prod(axis_shapes)
    if count > len(pool):
        raise ValueError(f"make_mesh: a mesh of shape {axis_shapes} needs {count} devices; there are {len(pool)}")
    grid = np.empty(count, dtype=object)
    grid[:] = pool[:count]
    return Mesh(grid.reshape(axis_shapes), axis_names)


def device_put(x, sharding) -> Array:
    """``x`` (a NumPy array, scalar or ``xlac.Array``) as an ``xlac.Array`` split over a mesh as ``sharding``
    says (a ``NamedSharding``, xlac's or JAX's), or on one device (a device).

    >>> a = device_put(np.ones((2, 3)), NamedSharding(make_mesh((1,), ("x",)), PartitionSpec("x", None)))
    >>> a.shape, len(a.addressable_shards)
    ((2, 3), 1)
    """
    if not hasattr(sharding, "spec"):
        return asarray(x, device=sharding)
    sharding = as_sharding(sharding, "device_put")
    refuse_array_subclass(x, "xlac.device_put")
    host = np.asarray(x)
    if host.dtype not in dtypes.SUPPORTED:
        raise TypeError(f"xlac.device_put: dtype {host.dtype} is not supported")
    sharding.check_shape(host.shape, "xlac.device_put")
    return Array._from_buffer(runtime.put_sharded(host, sharding), TensorType(host.shape, host.dtype), sharding)


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> Array:
    """An ``xlac.Array`` of ``shape`` split as ``sharding`` says, built from ``data_callback(index)``: the
    part of the global array at ``index`` (a tuple of slices), called for this process's devices only, as
    ``jax.make_array_from_callback``. With several processes, each builds its own shards this way.
    ``dtype``: the array's dtype (default: that of the first block).

    >>> full = np.arange(6.0).reshape(3, 2)
    >>> a = make_array_from_callback((3, 2), NamedSharding(make_mesh((1,), ("x",)), PartitionSpec("x")),
    ...                              lambda index: full[index])
    >>> np.asarray(a).tolist()
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    """
    sharding = as_sharding(sharding, "make_array_from_callback")
    shape = tuple(shape)
    sharding.check_shape(shape, "xlac.sharding.make_array_from_callback")
    buffer = runtime.put_from_callback(shape, dtypes.canonical(dtype) if dtype is not None else None, sharding,
                                       data_callback)
    return Array._from_buffer(buffer, TensorType(shape, np.dtype(buffer.dtype)), sharding)


def with_sharding_constraint(x, sharding):
    """``x`` (an array or a pytree of them), laid out over the devices as ``sharding`` says: inside a
    compiled function a constraint for XLA's partitioner (which inserts the communication that moves the
    value there); outside one, ``device_put``. A pytree of shardings may be a prefix of ``x``'s.

    >>> @xlac.compile
    ... def f(a):
    ...     return with_sharding_constraint(a * 2, NamedSharding(make_mesh((1,), ("x",)), PartitionSpec("x")))
    >>> np.asarray(f(np.arange(2.0)))
    array([0., 2.])
    """
    leaves, tree = pytree.flatten(x)
    shardings = broadcast_prefix(sharding, tree, "with_sharding_constraint")
    out = []
    for leaf, s in zip(leaves, shardings):
        s = as_sharding(s, "with_sharding_constraint")
        if isinstance(leaf, Tracer):
            try:
                s.check_shape(leaf.shape, "with_sharding_constraint")
            except ValueError as e:
                raise ValueError(located(str(e))) from None
            out.append(ops.sharding_constraint(leaf, s))
        else:
            out.append(device_put(leaf, s))
    return pytree.unflatten(tree, out)


def broadcast_prefix(prefix, tree: pytree.TreeDef, what: str) -> list:
    """One sharding of ``prefix`` (a pytree that is a prefix of ``tree``; a single sharding applies to every
    leaf) per leaf of ``tree``; None entries stay None."""
    try:
        return pytree.broadcast_prefix(prefix, tree, lambda s: type(s) not in (tuple, list, dict))
    except pytree.PrefixMismatch as mismatch:
        raise ValueError(f"{what}: the shardings {mismatch.prefix!r} are not a prefix of the arguments' structure "
                         f"{mismatch.tree}") from None


def result_shardings(out_shardings, out_tree: pytree.TreeDef, outputs, what: str) -> list:
    """A NamedSharding or None per result value (``outputs``), from ``out_shardings`` (a prefix of the
    results' pytree ``out_tree``), each checked against its result's shape."""
    shardings = [None if s is None else as_sharding(s, f"{what}: out_shardings")
                 for s in broadcast_prefix(out_shardings, out_tree, f"{what}: out_shardings")]
    for i, (s, value) in enumerate(zip(shardings, outputs)):
        if s is not None:
            s.check_shape(value.type.shape, f"{what}: out_shardings of result {i}")
    return shardings


def program_sharding(graph: Graph, inputs: list, results: list, what: str, specs, paths) -> ProgramSharding | None:
    """How a program is split: ``inputs`` (a NamedSharding or None per graph input, each checked against
    its argument's spec and named by its path) and ``results`` (per result, the graph's first outputs) as
    given, the mesh being the one they and the graph's constraints name. None when nothing names a mesh
    (one device). Unspecified inputs are replicated over the mesh, and the output holding an input's new
    value is split as the input is; XLA's partitioner chooses for the other outputs."""
    for s, (shape, _, _), path in zip(inputs, specs, paths):
        if s is not None:
            s.check_shape(shape, f"argument {path}")
    outputs = list(results) + [None] * (len(graph.outputs) - len(results))
    meshes = {s.mesh for s in list(inputs) + list(outputs) if s is not None}
    meshes |= {node.attrs["sharding"].mesh for node in _constraints(graph)}
    if not meshes:
        return None
    if len(meshes) > 1:
        raise ValueError(f"{what}: its shardings name {len(meshes)} different meshes ({', '.join(map(repr, meshes))}); "
                         "a compiled program runs on one mesh")
    mesh = meshes.pop()
    replicated = NamedSharding(mesh, PartitionSpec())
    inputs = [s or replicated for s in inputs]
    for i, j in graph.input_updates:
        outputs[j] = inputs[i]
    return ProgramSharding(mesh, tuple(inputs), tuple(outputs))


def _constraints(graph: Graph):
    for node in graph.nodes:
        if node.primitive is P.sharding_constraint:
            yield node
        for region in node.subgraphs or ():
            yield from _constraints(region)


def sharding_of(leaf):
    """The sharding of a sharded ``xlac.Array`` or jax Array argument; None for anything on one device."""
    if type(leaf) is Array:
        return leaf._device if type(leaf._device) is NamedSharding else None
    if runtime.is_split_buffer(leaf) and hasattr(leaf.sharding, "spec"):
        return as_sharding(leaf.sharding)
    return None

