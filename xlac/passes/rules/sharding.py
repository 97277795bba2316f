"""VJP, JVP and batching rules of ``sharding_constraint``.

A constraint changes where values live, not what they are: the tangent and the cotangent of a constrained
value are laid out as the value is, and a batch axis added by ``vmap`` is not split (JAX's rules).

>>> from xlac.ir import primitives as P
>>> None not in (P.sharding_constraint.vjp, P.sharding_constraint.jvp, P.sharding_constraint.batch)
True
"""
from __future__ import annotations

from xlac.ir import primitives as P
from xlac.ir.sharding import NamedSharding, PartitionSpec
from xlac.trace import ops

__all__: list[str] = []


def _constrain_like(attrs, operands, results, derivatives):
    return [ops.sharding_constraint(d, attrs["sharding"]) for d in derivatives]


def _sharding_constraint_batch(attrs, operands, dims):
    """The batch axis is inserted into the spec, unsplit."""
    (x,), (d,) = operands, dims
    sharding = attrs["sharding"]
    if d is None:
        return [ops.sharding_constraint(x, sharding)], [None]
    entries = [sharding.spec[i] if i < len(sharding.spec) else None for i in range(x.ndim - 1)]
    entries.insert(d, None)
    return [ops.sharding_constraint(x, NamedSharding(sharding.mesh, PartitionSpec(*entries)))], [d]


P.sharding_constraint.register(vjp=_constrain_like, jvp=_constrain_like, batch=_sharding_constraint_batch)
