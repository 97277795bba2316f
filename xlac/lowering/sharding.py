"""Shardy's spelling of shardings in StableHLO: the mesh, and the sharding of each argument, result and
``sharding_constraint``, which XLA's SPMD partitioner reads.

>>> import numpy as np
>>> from xlac.ir.sharding import Mesh, NamedSharding, PartitionSpec
>>> s = NamedSharding(Mesh(np.arange(8).reshape(2, 4), ("x", "y")), PartitionSpec(None, ("x", "y")))
>>> sdy_sharding(s, 3)
'#sdy.sharding<@mesh, [{}, {"x", "y"}, {}]>'
>>> sdy_mesh(s.mesh)
'sdy.mesh @mesh = <["x"=2, "y"=4]>'
"""
from __future__ import annotations

from xlac.ir import primitives as P
from xlac.ir.sharding import Mesh, NamedSharding

MESH_NAME = "@mesh"     # one mesh per program


def sdy_mesh(mesh: Mesh) -> str:
    axes = ", ".join(f'"{name}"={size}' for name, size in mesh.shape.items())
    return f"sdy.mesh {MESH_NAME} = <[{axes}]>"


def sdy_sharding(sharding: NamedSharding, ndim: int) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in sharding.spec.axes_of(d)) + "}" for d in range(ndim))
    return f"#sdy.sharding<{MESH_NAME}, [{dims}]>"


def module_attributes(mesh: Mesh) -> str:
    return f"attributes {{mhlo.num_partitions = {mesh.size} : i32, mhlo.num_replicas = 1 : i32}} "


def _sharding_constraint(w, node, operands):
    t = node.results[0].type
    attr = f"sharding = {sdy_sharding(node.attrs['sharding'], t.ndim)}"
    return w.op("sdy.sharding_constraint", operands, [t], [t], attr)


P.sharding_constraint.register(emitter=_sharding_constraint)
