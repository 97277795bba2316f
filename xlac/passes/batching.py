"""The batching transform: evaluate a graph into the current trace with every value carrying a batch axis.

Each value of the graph is evaluated to a pair (Tracer of the current trace, its batch axis or ``None``).
A node whose operands are all unbatched is emitted as it is (it costs nothing extra); otherwise its
primitive's batching rule (``primitive.batch``, see :mod:`xlac.passes.rules`) emits the batched
computation and says where the batch axis of each result lies. Rules move batch axes only when they must.

>>> import numpy as np, xlac.numpy as xnp
>>> import xlac.passes.rules  # noqa: F401  (registers the rules)
>>> from xlac.trace.context import Trace
>>> from xlac.function_graph import trace_subgraph
>>> sub = trace_subgraph(lambda x: xnp.sum(x * 2, axis=0), (np.ones((3, 4), np.float32),))
>>> with Trace() as t:
...     xs = t.add_input(sub.graph.inputs[0].type.with_shape((3, 5, 4)))   # batch of 5 along axis 1
...     (y,), (dim,) = batch_graph(sub.graph, [xs], [1])
>>> y.shape, dim
((5, 4), 0)
"""
from __future__ import annotations

from xlac.errors import located
from xlac.ir.graph import Graph
from xlac.ir.interpreter import interpret
from xlac.trace import ops
from xlac.trace.state import provenance_of
from xlac.trace.inline import bind_node
from xlac.trace.tracer import Tracer

__all__ = ["batch_graph", "move_batch_axis"]


def batch_graph(graph: Graph, inputs: list[Tracer], dims: list[int | None]):
    """Evaluate ``graph`` on ``inputs`` (each batched along ``dims[i]``, or unbatched where ``None``) into
    the current trace; returns (outputs, their batch axes)."""
    outs = interpret(graph, list(zip(inputs, dims)), _batch_node)
    return [t for t, _ in outs], [d for _, d in outs]


def _batch_node(node, operands: list[tuple[Tracer, int | None]]) -> list[tuple[Tracer, int | None]]:
    """``node`` applied to (Tracer, batch axis) pairs: as it is where nothing is batched, else by its
    primitive's batching rule."""
    tracers = [t for t, _ in operands]
    dims = [d for _, d in operands]
    if all(d is None for d in dims):
        return [(result, None) for result in bind_node(node, tracers)]
    results, result_dims = _apply_rule(node, tracers, dims)
    return list(zip(results, result_dims))


def _apply_rule(node, tracers, dims):
    rule = node.primitive.batch
    if rule is None:
        raise NotImplementedError(located(f"vmap: primitive {node.primitive.name!r} has no batching rule"))
    with provenance_of(node.provenance.as_inlined()):
        results, result_dims = rule(dict(node.rule_attrs), list(tracers), list(dims))
    return list(results), list(result_dims)


def move_batch_axis(x: Tracer, dim: int | None, to: int, size: int) -> Tracer:
    """``x`` with its batch axis (``dim``; ``None``: unbatched, then broadcast to ``size``) at axis ``to``."""
    if dim is None:
        shape = x.shape[:to] + (size,) + x.shape[to:]
        return ops.broadcast_in_dim(x, shape, [a if a < to else a + 1 for a in range(x.ndim)])
    if dim == to:
        return x
    perm = [a for a in range(x.ndim) if a != dim]
    perm.insert(to, dim)
    return ops.transpose(x, perm)
