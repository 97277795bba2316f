"""The graph interpreter: evaluate a graph node by node in program order, with a rule per node.

Inlining a graph into a trace, both autodiff engines and the batching transform are this one loop
with different ``apply`` rules and different values: Tracers, (Tracer, batch axis) pairs, anything.
A node that holds sub-graphs (a loop body, the branches of a conditional) is handed to ``apply`` like
any other; its rule evaluates the sub-graphs by calling :func:`interpret` again.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> x = Value(TensorType((), np.dtype("float64"))); y = Value(x.type)
>>> graph = Graph([x], [Node(P.neg, (x,), {}, (y,))], [y])
>>> interpret(graph, [2.0], lambda node, operands: [-operands[0]])
[-2.0]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from xlac.ir.graph import Graph, Node


def interpret(graph: Graph, inputs: Sequence[Any], apply: Callable[[Node, list], Sequence[Any]]) -> list:
    """The values of ``graph``'s outputs, given values for its inputs and ``apply(node, operand values)``
    returning the values of the node's results (a sequence, one per result)."""
    env = {value.id: x for value, x in zip(graph.inputs, inputs, strict=True)}
    for node in graph.nodes:
        results = apply(node, [env[v.id] for v in node.operands])
        for value, result in zip(node.results, results, strict=True):
            env[value.id] = result
    return [env[v.id] for v in graph.outputs]
