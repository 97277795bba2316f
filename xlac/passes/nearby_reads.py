"""Reads of one array at nearby traced positions become one read of the box around them.

A stencil written point by point (Gauss-Seidel's ``A[i - 1, j - 1] + A[i - 1, j] + ... + A[i + 1, j + 1]``)
reads the array at several ``dynamic_slice``s whose starts differ by Python ints. Inside a loop that writes
the same array in place, XLA cannot fuse a read at another position into the in-place update, so each read
becomes a kernel of its own, every iteration (nine for Gauss-Seidel, where ``jax.lax`` code reads one 3x3
window). This pass gives such a group one ``dynamic_slice`` of the box that holds them all, and each read a
static ``slice`` of the box.

A group: the ``dynamic_slice``s of one operand whose start in each axis is one value plus a Python int (the
same value for the whole group in that axis, or a constant), at least two of them, each proven inside the
array by :mod:`xlac.passes.index_ranges` (a start XLA would clamp reads other positions from a box: such a
read is left alone), and a box no larger than the reads together.

>>> import numpy as np, xlac
>>> def step(i, a):
...     a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3
...     return a
>>> def smooth(a):
...     return xlac.fori_loop(1, a.shape[0] - 1, step, a)
>>> a = np.arange(100.0) % 7
>>> expected = a.copy()
>>> for i in range(1, 99):
...     expected[i] = (expected[i - 1] + expected[i] + expected[i + 1]) / 3
>>> bool(np.allclose(xlac.compile(smooth)(a.copy()), expected))
True
>>> xlac.compile(smooth).trace(a).lower().ir("nearby_reads").report
{'reads_merged': 3}
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.passes.index_ranges import scalar_ranges
from xlac.passes.simplify import eliminate_dead_code

__all__ = ["nearby_reads"]


def nearby_reads(graph: Graph) -> Graph:
    """``graph`` with each group of nearby reads (see the module's docstring) read through one box;
    ``report`` counts the reads merged."""
    merger = _Merger(scalar_ranges(graph))
    rewritten = merger.rewrite(graph)
    return dataclasses.replace(rewritten, report={"reads_merged": merger.merged} if merger.merged else {})


class _Merger:
    def __init__(self, ranges: dict):
        self.ranges = ranges
        self.merged = 0

    def rewrite(self, graph: Graph) -> Graph:
        nodes = [dataclasses.replace(node, subgraphs=tuple(self.rewrite(region) for region in node.subgraphs))
                 if node.subgraphs else node for node in graph.nodes]
        forms = _OffsetForms(nodes)
        position = {r.id: k for k, node in enumerate(nodes) for r in node.results}
        groups: dict[tuple, list[Node]] = {}
        for node in nodes:
            if node.primitive is P.dynamic_slice and self._inside(node):
                key = (node.operands[0].id, tuple(forms.of(s)[0] for s in node.operands[1:]))
                groups.setdefault(key, []).append(node)
        replaced: dict[int, list[Node]] = {}    # id of a group's first read -> the nodes that take its place
        for group in groups.values():
            extents = _extents(group, forms)
            if len(group) < 2 or not _worth_a_box(group, extents):
                continue
            box_nodes, box = _box(group, forms, extents, position)
            for read in group:
                replaced[id(read)] = [_slice_of_box(read, box, forms, extents)]
            replaced[id(group[0])] = box_nodes + replaced[id(group[0])]
            self.merged += len(group)
        if not replaced:
            return dataclasses.replace(graph, nodes=nodes)
        return eliminate_dead_code(dataclasses.replace(
            graph, nodes=[new for node in nodes for new in replaced.get(id(node), [node])]))

    def _inside(self, read: Node) -> bool:
        """Whether every start of ``read`` is known to keep it inside its operand (XLA clamps none)."""
        operand, *starts = read.operands
        for start, size, extent in zip(starts, read.attrs["sizes"], operand.type.shape):
            known = self.ranges.get(start.id)
            if known is None or known[0] < 0 or known[1] > extent - size:
                return False
        return True


class _OffsetForms:
    """Each integer scalar as (the value it offsets, or None for a constant; a Python int), through ``add`` and
    ``sub`` of constants."""

    def __init__(self, nodes: list[Node]):
        self.producer = {r.id: node for node in nodes for r in node.results}
        self.values: dict[int, Value] = {}
        self.memo: dict[int, tuple] = {}

    def of(self, value: Value) -> tuple:
        if value.id not in self.memo:
            self.memo[value.id] = self._form(value)
        return self.memo[value.id]

    def value(self, base_id: int) -> Value:
        return self.values[base_id]

    def _form(self, value: Value) -> tuple:
        node = self.producer.get(value.id)
        if node is not None and node.primitive is P.constant and value.type.shape == ():
            return None, int(node.attrs["value"])
        if node is not None and node.primitive in (P.add, P.sub):
            x, y = (self.of(v) for v in node.operands)
            if y[0] is None:
                return x[0], x[1] + y[1] if node.primitive is P.add else x[1] - y[1]
            if x[0] is None and node.primitive is P.add:
                return y[0], x[1] + y[1]
        self.values[value.id] = value
        return value.id, 0


def _extents(group: list[Node], forms: _OffsetForms) -> list[tuple[int, int]]:
    """Per axis, the box's (first offset, end offset) around the group's reads."""
    per_axis = []
    for axis in range(group[0].operands[0].type.ndim):
        offsets = [(forms.of(read.operands[1 + axis])[1], read.attrs["sizes"][axis]) for read in group]
        per_axis.append((min(o for o, _ in offsets), max(o + s for o, s in offsets)))
    return per_axis


def _worth_a_box(group: list[Node], extents: list[tuple[int, int]]) -> bool:
    box = math.prod(end - first for first, end in extents)
    return box <= sum(math.prod(read.attrs["sizes"]) for read in group)


def _box(group: list[Node], forms: _OffsetForms, extents: list[tuple[int, int]],
         position: dict[int, int]) -> tuple[list[Node], Value]:
    """The nodes that read the group's box (its starts where no read's start is one already defined before
    the group's first read, then the ``dynamic_slice``), and the box."""
    first_read = group[0]
    operand, *starts = first_read.operands
    before = position.get(first_read.results[0].id)
    nodes, box_starts = [], []
    for axis, (start, (first, _)) in enumerate(zip(starts, extents)):
        base_id = forms.of(start)[0]
        defined = [read.operands[1 + axis] for read in group if forms.of(read.operands[1 + axis])[1] == first
                   and position.get(read.operands[1 + axis].id, -1) < before]
        if defined:
            box_starts.append(defined[0])
            continue
        offset = Value(start.type)
        nodes.append(Node(P.constant, (), {"value": np.array(first, start.type.dtype)}, (offset,),
                          first_read.provenance))
        if base_id is not None:
            shifted = Value(start.type)
            nodes.append(Node(P.add, (forms.value(base_id), offset), {}, (shifted,), first_read.provenance))
            offset = shifted
        box_starts.append(offset)
    sizes = tuple(end - first for first, end in extents)
    box = Value(operand.type.with_shape(sizes))
    nodes.append(Node(P.dynamic_slice, (operand, *box_starts), {"sizes": sizes}, (box,), first_read.provenance))
    return nodes, box


def _slice_of_box(read: Node, box: Value, forms: _OffsetForms, extents: list[tuple[int, int]]) -> Node:
    start = tuple(forms.of(s)[1] - first for s, (first, _) in zip(read.operands[1:], extents))
    limit = tuple(s + size for s, size in zip(start, read.attrs["sizes"]))
    return Node(P.slice_, (box,), {"start": start, "limit": limit, "strides": (1,) * len(start)},
                read.results, read.provenance)
