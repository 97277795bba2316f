"""A write into a reshaped array that reads the array: made so that XLA:CPU does not miscompile it.

``b = a.reshape(3, 4); b[1:] = b[:-1] - 1`` (or two overlapping views of one NumPy array, which xlac takes as
views of their flat memory) is ``dynamic_update_slice(reshape(a), f(slice(a)), 1, 0)``. XLA's CPU backend
(jaxlib 0.10.2) fuses that update to run in place on ``a``'s buffer while it still reads ``a`` at other
positions, where the result has more than one reader: the reads see rows already overwritten
(``jax.jit`` of the same program gives 0.0 for 20.0, see ``tests/passes/test_flat_writes.py``), whatever
``a``'s shape, as long as the written array is a reshape of it. Where the update is computed from ``a``:

- ``a`` 1-D and the region contiguous in the reshaped array (whole trailing axes): the update, flattened, is
  written into ``a`` itself at the region's flat offset (the starts clamped as XLA clamps them) and the
  result reshaped, which XLA copies correctly and still runs in place;
- otherwise the update is placed into zeros of the reshaped array's shape and selected into it where the
  region lies: a new array, never an in-place write of ``a``'s buffer.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> f32, i64 = np.dtype("float32"), np.dtype("int64")
>>> a, b, s, u, y = (Value(TensorType(shape, f32)) for shape in [(12,), (3, 4), (2, 4), (2, 4), (3, 4)])
>>> one, zero = Value(TensorType((), i64)), Value(TensorType((), i64))
>>> nodes = [Node(P.constant, (), {"value": np.array(1)}, (one,)),
...          Node(P.constant, (), {"value": np.array(0)}, (zero,)),
...          Node(P.reshape, (a,), {"shape": (3, 4)}, (b,)),
...          Node(P.slice_, (b,), {"start": (0, 0), "limit": (2, 4), "strides": (1, 1)}, (s,)),
...          Node(P.neg, (s,), {}, (u,)), Node(P.dynamic_update_slice, (b, u, one, zero), {}, (y,))]
>>> g = flat_writes(Graph([a], nodes, [y]))
>>> g.report, [tuple(n.operands[0].type.shape) for n in g.nodes if n.primitive is P.dynamic_update_slice]
({'flat_writes': 1}, [(12,)])
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value

__all__ = ["flat_writes"]


def flat_writes(graph: Graph) -> Graph:
    """``graph`` with each such write made on the 1-D array or selected into a new one (see the module's
    docstring); ``report`` counts them."""
    rewriter = _Rewriter()
    rewritten = rewriter.rewrite(graph)
    return dataclasses.replace(rewritten, report={"flat_writes": rewriter.count} if rewriter.count else {})


class _Rewriter:
    def __init__(self):
        self.count = 0

    def rewrite(self, graph: Graph) -> Graph:
        nodes = [dataclasses.replace(node, subgraphs=tuple(self.rewrite(region) for region in node.subgraphs))
                 if node.subgraphs else node for node in graph.nodes]
        producer = {r.id: node for node in nodes for r in node.results}
        out = []
        for node in nodes:
            array = _array_reshaped(node, producer) if node.primitive is P.dynamic_update_slice else None
            if array is None or not _computed_from(node.operands[1], array, producer):
                out.append(node)
                continue
            out += _write_flat(node, array) if array.type.ndim == 1 and _contiguous(node) else _write_selected(node)
            self.count += 1
        return dataclasses.replace(graph, nodes=out)


def _array_reshaped(update: Node, producer: dict) -> Value | None:
    """The array whose reshape the ``dynamic_update_slice`` writes into, if it writes into one."""
    reshape = producer.get(update.operands[0].id)
    return reshape.operands[0] if reshape is not None and reshape.primitive is P.reshape else None


def _contiguous(update: Node) -> bool:
    """Whether the region written is contiguous in row-major order: axes of length 1, then one axis, then
    whole axes."""
    shape, patch = update.operands[0].type.shape, update.operands[1].type.shape
    leading = next((axis for axis, n in enumerate(patch) if n != 1), len(patch))
    return all(patch[axis] == shape[axis] for axis in range(leading + 1, len(shape)))


def _computed_from(value: Value, array: Value, producer: dict, limit: int = 256) -> bool:
    """Whether ``value`` is computed from ``array`` (looking back at most ``limit`` nodes)."""
    pending, seen = [value], set()
    while pending and len(seen) < limit:
        v = pending.pop()
        if v is array:
            return True
        node = producer.get(v.id)
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            pending.extend(node.operands)
    return False


class _Emitter:
    """New nodes at ``update``'s source line, and its start indices clamped as XLA clamps them."""

    def __init__(self, update: Node):
        self.update, self.nodes = update, []
        self.index_type = update.operands[2].type

    def __call__(self, primitive, operands, attrs, type_) -> Value:
        result = Value(type_)
        self.nodes.append(Node(primitive, tuple(operands), attrs, (result,), self.update.provenance))
        return result

    def constant(self, n, type_=None) -> Value:
        type_ = type_ or self.index_type
        return self(P.constant, [], {"value": np.array(n, type_.dtype)}, type_)

    def clamped_starts(self) -> list[Value | None]:
        """Per axis the start, clamped into the axis; None along an axis the update covers whole."""
        operand, patch, *starts = self.update.operands
        return [None if size == length else
                self(P.clamp, [self.constant(0), start, self.constant(size - length)], {}, self.index_type)
                for start, size, length in zip(starts, operand.type.shape, patch.type.shape)]

    def finish(self, primitive, operands, attrs) -> list[Node]:
        self.nodes.append(Node(primitive, tuple(operands), attrs, self.update.results, self.update.provenance))
        return self.nodes


def _write_flat(update: Node, flat: Value) -> list[Node]:
    """``reshape(dynamic_update_slice(flat, reshape(patch), offset))`` for ``update``."""
    operand, patch = update.operands[:2]
    emit = _Emitter(update)
    offset = None
    for axis, start in enumerate(emit.clamped_starts()):
        stride = math.prod(operand.type.shape[axis + 1:])
        if start is None:
            continue
        term = start if stride == 1 else emit(P.mul, [start, emit.constant(stride)], {}, emit.index_type)
        offset = term if offset is None else emit(P.add, [offset, term], {}, emit.index_type)
    offset = emit.constant(0) if offset is None else offset
    flat_patch = emit(P.reshape, [patch], {"shape": (patch.type.size,)}, patch.type.with_shape((patch.type.size,)))
    written = emit(P.dynamic_update_slice, [flat, flat_patch, offset], {}, flat.type)
    return emit.finish(P.reshape, [written], {"shape": operand.type.shape})


def _write_selected(update: Node) -> list[Node]:
    """``select(region, dynamic_update_slice(zeros, patch, starts), operand)`` for ``update``."""
    operand, patch, *starts = update.operands
    t = operand.type
    emit = _Emitter(update)
    zero = emit.constant(0, t.with_shape(()))
    zeros = emit(P.broadcast_in_dim, [zero], {"shape": t.shape, "broadcast_dimensions": ()}, t)
    placed = emit(P.dynamic_update_slice, [zeros, patch, *starts], {}, t)
    flags, region = t.with_dtype(np.dtype(bool)), None
    for axis, start in enumerate(emit.clamped_starts()):
        if start is None:
            continue
        positions = emit(P.iota, [], {"shape": t.shape, "dtype": emit.index_type.dtype, "dimension": axis},
                         t.with_dtype(emit.index_type.dtype))
        end = emit(P.add, [start, emit.constant(patch.type.shape[axis])], {}, emit.index_type)
        inside = [emit(P.compare, [positions, emit(P.broadcast_in_dim, [bound], {"shape": t.shape,
                                                                             "broadcast_dimensions": ()},
                                                   positions.type)], {"direction": direction}, flags)
                  for bound, direction in ((start, "GE"), (end, "LT"))]
        axis_region = emit(P.and_, inside, {}, flags)
        region = axis_region if region is None else emit(P.and_, [region, axis_region], {}, flags)
    if region is None:                 # the update covers the whole array
        return emit.finish(P.reshape, [patch], {"shape": t.shape})
    return emit.finish(P.select, [region, placed, operand], {})
