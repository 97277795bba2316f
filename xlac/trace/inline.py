"""A graph evaluated into the current trace, node by node: how inlining, autodiff and batching emit what
they compute. Each new node keeps the source line and origin of the node it comes from.

>>> import numpy as np
>>> from xlac.ir.graph import Graph, Node, Value
>>> from xlac.ir import primitives as P
>>> from xlac.ir.types import TensorType
>>> from xlac.trace.context import Trace
>>> x = Value(TensorType((3,), np.dtype("float32")))
>>> y = Value(x.type)
>>> g = Graph(inputs=[x], nodes=[Node(P.neg, (x,), {}, (y,))], outputs=[y])
>>> with Trace() as t:
...     (out,) = inline(g, [t.add_input(x.type)])
>>> [node.primitive.name for node in t.graph.nodes]
['neg']
"""
from __future__ import annotations

import dataclasses

from xlac.ir.graph import Graph, Node
from xlac.ir.interpreter import interpret
from xlac.trace.context import Trace
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


def closed_graph(types, build) -> Graph:
    """A graph over inputs of ``types`` (a region of a loop or a conditional): ``build(input tracers)``
    emits its nodes and returns its output tracers."""
    with Trace() as trace:
        inputs = [trace.add_input(t) for t in types]
        outputs = build(inputs)
    return dataclasses.replace(trace.graph, outputs=[x.value for x in outputs])


def inline(graph: Graph, inputs: list[Tracer]) -> list[Tracer]:
    """Evaluate ``graph`` on ``inputs`` into the current trace; its outputs. Each node keeps its line."""
    return interpret(graph, inputs, bind_node)


def bind_node(node: Node, operands: list[Tracer]) -> list[Tracer]:
    """Apply ``node``'s primitive, with its attributes, to ``operands`` in the current trace; the results
    as a list. The new node keeps ``node``'s provenance (as inlined: its graph already ran the autocast
    pass) and sub-graphs (regions are closed, so they serve unchanged)."""
    results = current_trace().bind(node.primitive, operands, node.attrs, provenance=node.provenance.as_inlined(),
                                   subgraphs=node.subgraphs)
    return list(results) if node.primitive.multiple_results else [results]
