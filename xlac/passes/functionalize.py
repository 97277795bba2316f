"""Functionalization: rewrite views and in-place stores into pure operations.

The traced IR says what NumPy does: view nodes (``node.view``) whose result
aliases operand 0, and ``store target value`` nodes that overwrite the memory a
value refers to. This pass is an interpreter over that graph. It keeps, for every
array that owns memory (a graph input or a node result), its current pure value,
and gives each read of a view the view of that current value. A store through a
chain of views is written back into the owner one view at a time, by each view
primitive's ``write_back`` rule (:mod:`xlac.ir.view_rules`): a slice by
``dynamic_update_slice``, a transpose, reshape or reverse by its inverse, ``.real``
or ``.imag`` by a ``complex`` with the other part. Arguments that were written to get extra
outputs, recorded in ``graph.input_updates`` so the runtime can write them back
(and XLA can do the update in the argument's own buffer).

>>> import numpy as np, xlac
>>> def f(x):
...     x[1:3] += 1.0
...     return x.sum()
>>> traced = xlac.compile(f).trace(np.zeros(4, np.float32))
>>> "store" in str(traced.ir("traced")), "store" in str(traced.ir("functionalize"))
(True, False)
"""
from __future__ import annotations

import dataclasses

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import NO_PROVENANCE, Graph, Node, Value


class _Functionalizer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.nodes: list[Node] = []
        self.owner: dict[int, int] = {}            # value id -> id of the value owning its memory
        self.view_node: dict[int, Node] = {}       # view value id -> the view node defining it
        self.view_extra: dict[int, list[Value]] = {}   # view value id -> its other operands, read at creation
        self.current: dict[int, Value] = {}        # owner id -> its current pure value
        self.version: dict[int, int] = {}          # owner id -> number of stores into it so far
        self.cached_view: dict[int, tuple[int, Value]] = {}   # view value id -> (owner version, pure value)
        self.provenance = NO_PROVENANCE            # the provenance of the node being rewritten
        self.writes: list[tuple] = []              # (store location, owner value before, owner value after)

    # ------------------------------------------------------------ emitting pure nodes

    def emit(self, primitive, operands, **attrs) -> Value:
        (out_type,) = primitive.infer_types(*(v.type for v in operands), **attrs)
        result = Value(out_type)
        self.nodes.append(Node(primitive, tuple(operands), attrs, (result,), self.provenance))
        return result

    def constant(self, value, dtype) -> Value:
        return self.emit(P.constant, (), value=np.array(value, dtype=dtype))

    # ------------------------------------------------------------ reading and writing memory

    def own(self, value: Value, pure: Value) -> None:
        self.owner[value.id] = value.id
        self.current[value.id] = pure
        self.version[value.id] = 0

    def read(self, value: Value) -> Value:
        """The pure value ``value`` holds now."""
        owner = self.owner[value.id]
        if owner == value.id:
            return self.current[owner]
        version = self.version[owner]
        cached = self.cached_view.get(value.id)
        if cached is not None and cached[0] == version:
            return cached[1]
        node = self.view_node[value.id]
        pure = self.emit(node.primitive, (self.read(node.operands[0]), *self.view_extra[value.id]), **node.attrs)
        self.cached_view[value.id] = (version, pure)
        return pure

    def write(self, target: Value, new: Value) -> None:
        """Make the memory ``target`` refers to hold ``new``, writing through its views to their owner."""
        while True:
            owner = self.owner[target.id]
            if owner == target.id:
                self.writes.append((self.provenance.location, self.current[owner], new))
                self.current[owner] = new
                self.version[owner] += 1
                return
            node = self.view_node[target.id]
            parent = node.operands[0]
            new = node.primitive.view_rule.write_back(self, node, self.read(parent), new,
                                                      self.view_extra[target.id])
            target = parent

    # ------------------------------------------------------------ the interpreter

    def run(self) -> Graph:
        graph = self.graph
        for v in graph.inputs:
            self.own(v, v)
        for node in graph.nodes:
            self.provenance = node.provenance
            if node.primitive is P.store:
                target, value = node.operands
                self.write(target, self.read(value))
            elif node.view:
                result = node.results[0]
                self.owner[result.id] = self.owner[node.operands[0].id]
                self.view_node[result.id] = node
                self.view_extra[result.id] = [self.read(v) for v in node.operands[1:]]
            elif node.primitive is P.copy:
                result = node.results[0]
                self.own(result, self.read(node.operands[0]))
            else:
                operands = tuple(self.read(v) for v in node.operands)
                if operands != node.operands:      # Values compare by identity
                    node = dataclasses.replace(node, operands=operands)
                self.nodes.append(node)
                for r in node.results:
                    self.own(r, r)
        self.provenance = NO_PROVENANCE
        outputs = [self.read(v) for v in graph.outputs]
        updates = []
        for i, v in enumerate(graph.inputs):
            if self.version[v.id]:
                updates.append((i, len(outputs)))
                outputs.append(self.current[v.id])
        return dataclasses.replace(graph, nodes=self.nodes, outputs=outputs, input_updates=updates,
                                   writes=self.writes)


def functionalize(graph: Graph) -> Graph:
    """A pure graph computing what ``graph`` computes, with an output per argument it writes to."""
    if not any(node.view or node.primitive in (P.store, P.copy) for node in graph.nodes):
        return graph
    return _Functionalizer(graph).run()


__all__ = ["functionalize"]
