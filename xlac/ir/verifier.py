"""Checks a graph's invariants; tests run it after every pass.

- every operand is defined (a graph input or an earlier node's result) before it is used;
- every value is defined once;
- every node's result types are what its primitive's type rule gives;
- every output is defined;
- a node's sub-graphs (regions) are closed and fit it (its primitive's ``region_rule``).

>>> import numpy as np
>>> from xlac.ir.graph import Graph, Value
>>> from xlac.ir.types import TensorType
>>> x = Value(TensorType((3,), np.dtype("float32")))
>>> verify(Graph([x], [], [x]))
"""
from __future__ import annotations

from xlac.ir.graph import Graph
from xlac.ir.primitive import ShapeError


class VerificationError(Exception):
    """A graph breaks an invariant of the IR."""


def verify(graph: Graph, outer_defined: frozenset[int] = frozenset()) -> None:
    defined = set(outer_defined)
    for v in graph.inputs:
        if v.id in defined:
            raise VerificationError(f"input {v} defined twice")
        defined.add(v.id)
    for i, node in enumerate(graph.nodes):
        where = f"node {i} ({node.primitive.name}, {node.location})"
        for v in node.operands:
            if v.id not in defined:
                raise VerificationError(f"{where}: operand {v} used before it is defined")
        for sub in node.subgraphs:
            verify(sub)          # regions are closed: they read only their own inputs
        if node.primitive.region_rule is not None:
            try:
                node.primitive.region_rule(node)
            except ShapeError as e:
                raise VerificationError(f"{where}: {e}") from None
        try:
            expected = node.primitive.infer_types(*(v.type for v in node.operands), **node.attrs)
        except (ShapeError, TypeError) as e:
            raise VerificationError(f"{where}: type rule rejects its operands: {e}") from None
        got = tuple(v.type for v in node.results)
        if expected != got:
            raise VerificationError(f"{where}: results {got}, type rule gives {expected}")
        for v in node.results:
            if v.id in defined:
                raise VerificationError(f"{where}: result {v} defined twice")
            defined.add(v.id)
    for v in graph.outputs:
        if v.id not in defined:
            raise VerificationError(f"output {v} is not defined")
