"""Clean-up: drop nodes whose results nothing uses.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> x = Value(TensorType((2,), np.dtype("float32"))); y = Value(x.type)
>>> len(eliminate_dead_code(Graph([x], [Node(P.unary["exp"], (x,), {}, (y,))], [x])).nodes)
0
"""
from __future__ import annotations

from xlac.ir.graph import Graph


def eliminate_dead_code(graph: Graph) -> Graph:
    """A graph without the nodes whose results reach no output."""
    live = {v.id for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(v.id in live for v in node.results):
            kept.append(node)
            live.update(v.id for v in node.operands)
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs, graph.input_names, graph.input_updates, graph.writes)
