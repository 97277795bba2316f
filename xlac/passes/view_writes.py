"""A write into a slice of an array, seen through reshapes and transposes and put back, writes into the array.

A loop over columns run batched (``out[:, r, c, :] = ...`` for every ``c`` at once, see
:mod:`xlac.convert.vectorized_loops`) updates the slice ``out[:, :, 1:, :]`` with its batch axis moved to the
front, then moves it back and writes the slice into ``out``::

    s = slice(x, a:b);  t = transpose(reshape(s));  u = dynamic_update_slice(t, update, starts)
    y = dynamic_update_slice(x, reshape(transpose(u)), a)

XLA runs that as written: two transposed copies of the slice and a copy of ``x`` per iteration. Where the
layout changes going out undo those coming in, and each start of ``u`` is proven to keep ``update`` inside
``t`` (by :mod:`xlac.passes.index_ranges`: XLA clamps a start, and a clamp inside ``t`` is not one inside
``x``), this pass writes ``update`` (its axes reordered as ``x``'s) straight into ``x`` at ``a + starts``.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> f64, i64 = np.dtype("float64"), np.dtype("int64")
>>> x, row = Value(TensorType((4, 6), f64)), Value(TensorType((1, 2), f64))
>>> s, t, u, w, y = (Value(TensorType(shape, f64)) for shape in [(4, 5), (5, 4), (5, 4), (4, 5), (4, 6)])
>>> zero, one, two = (Value(TensorType((), i64)) for _ in range(3))
>>> nodes = [Node(P.constant, (), {"value": np.array(k)}, (v,)) for k, v in enumerate([zero, one, two])] + [
...     Node(P.slice_, (x,), {"start": (0, 1), "limit": (4, 6), "strides": (1, 1)}, (s,)),
...     Node(P.transpose, (s,), {"permutation": (1, 0)}, (t,)),
...     Node(P.dynamic_update_slice, (t, row, two, one), {}, (u,)),
...     Node(P.transpose, (u,), {"permutation": (1, 0)}, (w,)),
...     Node(P.dynamic_update_slice, (x, w, zero, one), {}, (y,))]
>>> g = view_writes(Graph([x, row], nodes, [y]))
>>> g.report, [n.primitive.name for n in g.nodes if n.primitive is not P.constant]
({'view_writes_folded': 1}, ['transpose', 'add', 'dynamic_update_slice'])
"""
from __future__ import annotations

import dataclasses

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.passes.index_ranges import scalar_ranges
from xlac.passes.simplify import eliminate_dead_code

__all__ = ["view_writes"]

_LAYOUT = (P.reshape, P.transpose)


def view_writes(graph: Graph) -> Graph:
    """``graph`` with each write of an updated view back into its array (see the module's docstring) made
    one update of the array; ``report`` counts them."""
    folder = _Folder(scalar_ranges(graph))
    rewritten = folder.rewrite(graph)
    return dataclasses.replace(rewritten, report={"view_writes_folded": folder.folded} if folder.folded else {})


class _Folder:
    def __init__(self, ranges: dict):
        self.ranges = ranges
        self.folded = 0

    def rewrite(self, graph: Graph) -> Graph:
        nodes = [dataclasses.replace(node, subgraphs=tuple(self.rewrite(region) for region in node.subgraphs))
                 if node.subgraphs else node for node in graph.nodes]
        producer = {r.id: node for node in nodes for r in node.results}
        out, changed = [], False
        for node in nodes:
            folded = self._fold(node, producer) if node.primitive is P.dynamic_update_slice else None
            if folded is None:
                out.append(node)
                continue
            out += folded
            changed = True
            self.folded += 1
        return eliminate_dead_code(dataclasses.replace(graph, nodes=out)) if changed else \
            dataclasses.replace(graph, nodes=nodes)

    def _fold(self, write_back: Node, producer: dict) -> list[Node] | None:
        array, written, *corner = write_back.operands
        corner = [_constant(v, producer) for v in corner]
        going_out, update_node = _layout_chain(written, producer)
        if update_node is None or update_node.primitive is not P.dynamic_update_slice or None in corner:
            return None
        view, update, *starts = update_node.operands
        if 0 in update.type.shape:        # writes nothing (and a reshape would not keep its axes of length 0)
            return None
        coming_in, slice_node = _layout_chain(view, producer)
        if slice_node is None or not _is_region(slice_node, array, corner, written.type.shape):
            return None
        into_view = _axis_sources(coming_in, slice_node.results[0].type.shape)    # view axis -> slice axis
        out_of_update = _axis_sources(going_out, view.type.shape)                  # written axis -> view axis
        if into_view is None or out_of_update is None:
            return None
        if any(into_view[source] != axis for axis, source in out_of_update.items()):
            return None
        if any(start.type != write_back.operands[2].type for start in starts):
            return None
        if not all(self._inside(start, size, patch) for start, size, patch
                   in zip(starts, view.type.shape, update.type.shape) if size != 1):
            return None
        return _direct_write(write_back, array, update, starts, corner, out_of_update)

    def _inside(self, start: Value, size: int, patch: int) -> bool:
        known = self.ranges.get(start.id)
        return known is not None and known[0] >= 0 and known[1] <= size - patch


def _constant(value: Value, producer: dict) -> int | None:
    node = producer.get(value.id)
    if node is None or node.primitive is not P.constant or value.type.shape != ():
        return None
    return int(node.attrs["value"])


def _layout_chain(value: Value, producer: dict) -> tuple[list[Node], Node | None]:
    """The reshapes and transposes that made ``value`` (first applied first), and the node below them."""
    chain = []
    node = producer.get(value.id)
    while node is not None and node.primitive in _LAYOUT:
        chain.append(node)
        node = producer.get(node.operands[0].id)
    return chain[::-1], node


def _is_region(slice_node: Node, array: Value, corner: list[int], shape: tuple) -> bool:
    """Whether ``slice_node`` reads exactly the region of ``array`` a write of ``shape`` at ``corner`` covers."""
    attrs = slice_node.attrs
    return (slice_node.primitive is P.slice_ and slice_node.operands[0] is array
            and all(s == 1 for s in attrs["strides"]) and list(attrs["start"]) == corner
            and all(lo + n == hi for lo, n, hi in zip(corner, shape, attrs["limit"])))


def _axis_sources(chain: list[Node], shape: tuple) -> dict[int, int] | None:
    """Each axis of longer than 1 of the chain's result -> the axis of its operand (of ``shape``) it is; None
    where a reshape does more than add or drop axes of length 1."""
    sources = {axis: axis for axis, n in enumerate(shape) if n != 1}
    for node in chain:
        result = node.results[0].type.shape
        if node.primitive is P.transpose:
            sources = {axis: sources[source] for axis, source in enumerate(node.attrs["permutation"])
                       if result[axis] != 1}
            continue
        long_before = [axis for axis, n in enumerate(node.operands[0].type.shape) if n != 1]
        long_after = [axis for axis, n in enumerate(result) if n != 1]
        if [node.operands[0].type.shape[a] for a in long_before] != [result[a] for a in long_after]:
            return None
        sources = {after: sources[before] for after, before in zip(long_after, long_before)}
    return sources


def _direct_write(write_back: Node, array: Value, update: Value, starts: list[Value], corner: list[int],
                  out_of_update: dict[int, int]) -> list[Node]:
    """The nodes writing ``update`` into ``array``: its axes reordered as the array's, at ``corner + starts``."""
    provenance, nodes = write_back.provenance, []

    def emit(primitive, operands, attrs, type_):
        result = Value(type_)
        nodes.append(Node(primitive, tuple(operands), attrs, (result,), provenance))
        return result

    def reshaped(x: Value, shape: tuple) -> Value:
        return x if x.type.shape == shape else emit(P.reshape, [x], {"shape": shape}, x.type.with_shape(shape))
    view_axes = sorted(out_of_update.values())                  # the update's long axes, in its own order
    written_axes = sorted(out_of_update)                        # the array's axes they land on, in its order
    squeezed = reshaped(update, tuple(update.type.shape[a] for a in view_axes))
    order = tuple(view_axes.index(out_of_update[axis]) for axis in written_axes)
    if order != tuple(range(len(order))):
        squeezed = emit(P.transpose, [squeezed], {"permutation": order},
                        squeezed.type.with_shape(tuple(squeezed.type.shape[k] for k in order)))
    shape = tuple(update.type.shape[out_of_update[axis]] if axis in out_of_update else 1
                  for axis in range(array.type.ndim))
    patch = reshaped(squeezed, shape)
    index_type = write_back.operands[2].type
    new_starts = []
    for axis, at in enumerate(corner):
        start = starts[out_of_update[axis]] if axis in out_of_update else None
        if start is None or at != 0:
            offset = emit(P.constant, [], {"value": np.array(at, index_type.dtype)}, index_type)
            start = offset if start is None else emit(P.add, [start, offset], {}, index_type)
        new_starts.append(start)
    nodes.append(Node(P.dynamic_update_slice, (array, patch, *new_starts), {}, write_back.results, provenance))
    return nodes
