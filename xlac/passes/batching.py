"""The batching transform: evaluate a graph into the current trace with every value carrying a batch axis.

Each value of the graph is evaluated to a pair (Tracer of the current trace, its batch axis or ``None``).
A node whose operands are all unbatched is emitted as it is (it costs nothing extra); otherwise its
primitive's batching rule (``primitive.batch``, see :mod:`xlac.passes.batching_rules`) emits the batched
computation and says where the batch axis of each result lies. Rules move batch axes only when they must.

>>> import numpy as np, xlac.numpy as xnp
>>> import xlac.passes.batching_rules  # noqa: F401  (attaches the rules)
>>> from xlac.trace.context import Trace
>>> from xlac.trace.subgraph import trace_subgraph
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
from xlac.trace.context import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["batch_graph", "move_batch_axis"]


def batch_graph(graph: Graph, inputs: list[Tracer], dims: list[int | None]):
    """Evaluate ``graph`` on ``inputs`` (each batched along ``dims[i]``, or unbatched where ``None``) into
    the current trace; returns (outputs, their batch axes)."""
    trace = current_trace()
    env = {value.id: (tracer, dim) for value, tracer, dim in zip(graph.inputs, inputs, dims)}
    for node in graph.nodes:
        if node.subgraphs:
            raise NotImplementedError(f"batching {node.primitive.name} with sub-graphs")
        operands = [env[v.id] for v in node.operands]
        tracers = [t for t, _ in operands]
        operand_dims = [d for _, d in operands]
        if all(d is None for d in operand_dims):
            results = trace.bind(node.primitive, tracers, node.attrs, like=node)
            results = results if node.primitive.multiple_results else (results,)
            result_dims = [None] * len(results)
        else:
            results, result_dims = _apply_rule(trace, node, tracers, operand_dims)
        for value, tracer, dim in zip(node.results, results, result_dims):
            env[value.id] = (tracer, dim)
    outs = [env[v.id] for v in graph.outputs]
    return [t for t, _ in outs], [d for _, d in outs]


def _apply_rule(trace, node, tracers, dims):
    rule = node.primitive.batch
    if rule is None:
        raise NotImplementedError(located(f"vmap: primitive {node.primitive.name!r} has no batching rule"))
    first = len(trace.graph.nodes)
    results, result_dims = rule(dict(node.attrs), list(tracers), list(dims))
    for new in trace.graph.nodes[first:]:     # the batched nodes point at the user's line of the original
        new.location, new.origin = node.location, node.origin
    return list(results), list(result_dims)


def move_batch_axis(x: Tracer, dim: int | None, to: int, size: int) -> Tracer:
    """``x`` with its batch axis (``dim``; ``None``: unbatched, then broadcast to ``size``) at axis ``to``."""
    from xlac.trace import ops
    if dim is None:
        shape = x.shape[:to] + (size,) + x.shape[to:]
        return ops.broadcast_in_dim(x, shape, [a if a < to else a + 1 for a in range(x.ndim)])
    if dim == to:
        return x
    perm = [a for a in range(x.ndim) if a != dim]
    perm.insert(to, dim)
    return ops.transpose(x, perm)
