"""Loops that reduce, per iteration ``i``, the positions ``lo(i) <= p < hi(i)`` of an array, run as segment
reductions: ``y[i] = data[o[i]:o[i + 1]] @ x[indices[o[i]:o[i + 1]]]`` (a CSR matrix-vector product),
``y[i] = vals[o[i]:o[i + 1]].max()``.

xlac.numpy holds a slice with traced bounds as the whole array and a mask, and reduces it as
``reduce(select(lo <= iota < hi, values, identity))`` (see :mod:`xlac.numpy.dynamic_extent`): batched over
the iterations, that is ``(iterations x positions)`` work. Where ``values`` is the same in every iteration
(only the bounds move with ``i``) and the intervals ``[lo(i), hi(i))`` are sorted and disjoint, each position
belongs to one iteration at most, its *segment*, and the reductions of all iterations are one scatter of
``values`` into their segments (``add`` for a sum, ``max`` for a maximum): ``(iterations + positions)`` work.

:class:`Segments` finds such reductions in a loop body's graph; :func:`segment_reduce` computes them for all
iterations, and whether the intervals were sorted and disjoint, which only the running program knows (a
vectorized loop runs the rolled loop instead where they are not: see :mod:`xlac.convert.vectorized_loops`).

>>> import numpy as np, xlac
>>> @xlac.compile
... def row_sums(vals, o):
...     y = np.zeros(o.shape[0] - 1)
...     for i in range(o.shape[0] - 1):
...         y[i] = np.sum(vals[o[i]:o[i + 1]])
...     return y
>>> o = np.array([0, 2, 2, 5, 9, 9, 10, 14])
>>> row_sums(np.arange(14.0), o).tolist()
[1.0, 0.0, 9.0, 26.0, 0.0, 9.0, 46.0]
>>> print(row_sums.trace(np.arange(14.0), o).loop_decisions[0].reason.split("; ")[1])
as segment reductions: sum over [lo(i), hi(i)) (the rolled loop where the intervals are not sorted and \
disjoint, or a check fails)
"""
from __future__ import annotations

import dataclasses

import numpy as np

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.dtypes import INDEX
from xlac.ir.graph import Graph, Node, Value
from xlac.passes.simplify import eliminate_dead_code
from xlac.passes.windowed_reductions import interval_reduced
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["Segments", "segment_reduce", "varying_values"]

_SCATTER_MODE = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


@dataclasses.dataclass(frozen=True)
class SegmentReduction:
    """A reduction of a loop body: ``node`` (the ``reduce``), ``values`` (what it reduces, the same in every
    iteration), ``op``, and ``family`` (which bounds: an index into :attr:`Segments.bounds`)."""

    node: Node
    values: Value
    op: str
    family: int


@dataclasses.dataclass(frozen=True)
class Segments:
    """The segment reductions of a loop body's graph, and their bounds: per family, the values ``lo`` and
    ``hi`` of the graph (0-d integers) of the positions ``lo <= p < hi`` its reductions reduce."""

    reductions: list[SegmentReduction]
    bounds: list[tuple[Value, Value]]

    @classmethod
    def of(cls, graph: Graph, varying: set[int]) -> "Segments | None":
        """The reductions of ``graph`` (a loop body) over positions whose bounds vary with the iteration and
        whose values do not (``varying``: the ids of the values that do, see :func:`varying_values`), or None.

        >>> from xlac.ir.types import TensorType
        >>> from xlac.trace.inline import closed_graph
        >>> index, data = TensorType((), INDEX), TensorType((8,), np.dtype("float64"))
        >>> def window_sum(inputs):
        ...     i, x = inputs
        ...     p = ops.iota((8,), INDEX, 0)
        ...     inside = ops.and_(ops.compare(p, ops.broadcast_in_dim(i, (8,), ()), "GE"),
        ...                       ops.compare(p, ops.broadcast_in_dim(ops.add(i, i), (8,), ()), "LT"))
        ...     return [ops.reduce(ops.select(inside, x, ops.full((8,), 0.0, x.dtype)), "sum", (0,))]
        >>> body = closed_graph([index, data], window_sum)
        >>> [r.op for r in Segments.of(body, varying_values(body, [body.inputs[0]])).reductions]
        ['sum']
        """
        producer = {r.id: node for node in graph.nodes for r in node.results}
        reductions, bounds = [], []
        for node in graph.nodes:
            found = interval_reduced(node, producer)
            if found is None:
                continue
            values, lo, hi = found
            op = node.attrs["op"]
            if values.id in varying or lo.id not in varying or hi.id not in varying:
                continue
            dtype = values.type.dtype
            complex_extreme = dtypes.is_inexact(dtype) and not dtypes.is_float(dtype) and op in ("max", "min")
            short_float_total = dtypes.is_float(dtype) and dtype.itemsize < 4 and op in ("sum", "prod")
            if complex_extreme or short_float_total:
                continue       # complex order is NumPy's own; a 16-bit scatter-add would round at each element
            if (lo, hi) not in bounds:
                bounds.append((lo, hi))
            reductions.append(SegmentReduction(node, values, op, bounds.index((lo, hi))))
        return cls(reductions, bounds) if reductions else None

    def without_reductions(self, graph: Graph) -> Graph:
        """``graph`` with the result of each reduction a new input (after the others, in order), and without
        the nodes that no output needs any more."""
        reduced = {id(r.node) for r in self.reductions}
        nodes = [node for node in graph.nodes if id(node) not in reduced]
        inputs = list(graph.inputs) + [r.node.results[0] for r in self.reductions]
        return eliminate_dead_code(dataclasses.replace(graph, inputs=inputs, nodes=nodes,
                                                       input_names=[""] * len(inputs)))

    def describe(self) -> str:
        """The reductions, as the loop report says them."""
        return ", ".join(f"{r.op} over [lo(i), hi(i))" for r in self.reductions)


def varying_values(graph: Graph, seeds: list[Value]) -> set[int]:
    """The ids of the values of ``graph`` computed from any of ``seeds`` (inputs of it), the seeds included."""
    varying = {v.id for v in seeds}
    for node in graph.nodes:
        if any(v.id in varying for v in node.operands):
            varying.update(r.id for r in node.results)
    return varying


def window_masks_left(graph: Graph, varying: set[int]) -> bool:
    """Whether ``graph`` compares positions (an ``iota``) with bounds that vary with the iteration: a slice
    with traced bounds used other than in a segment reduction, which batched would be (iterations x
    positions) work."""
    producer = {r.id: node for node in graph.nodes for r in node.results}
    for node in graph.nodes:
        if node.primitive is not P.compare or not any(v.id in varying for v in node.operands):
            continue
        if any(producer.get(v.id) is not None and producer[v.id].primitive is P.iota for v in node.operands):
            return True
    return False


def segment_reduce(values: list[tuple[Tracer, str]], lo: Tracer, hi: Tracer) -> tuple[list[Tracer], Tracer]:
    """For each ``(v, op)`` of ``values`` (1-D, of one length), ``v`` reduced by ``op`` over the positions
    ``lo[i] <= p < hi[i]`` for each ``i`` (``lo``, ``hi``: 1-D integers, one per iteration), the identity
    where there are none; and whether those intervals (clipped to the axis) are sorted and disjoint, the
    condition for the results to be right.

    >>> import xlac
    >>> @xlac.compile(convert=False)
    ... def sums(v, lo, hi):
    ...     (total,), holds = segment_reduce([(v, "sum")], lo, hi)
    ...     return total, holds
    >>> total, holds = sums(np.arange(6.0), np.array([0, 2, 2]), np.array([2, 2, 6]))
    >>> np.asarray(total).tolist(), bool(holds)
    ([1.0, 0.0, 14.0], True)
    """
    n, length = lo.shape[0], values[0][0].shape[0]
    lo, hi = ops.convert(lo, INDEX), ops.convert(hi, INDEX)
    zero, end = ops.full((n,), 0, INDEX), ops.full((n,), length, INDEX)
    first = ops.clamp(zero, lo, end)
    last = ops.max(ops.clamp(zero, hi, end), first)
    if n > 1:
        ordered = ops.compare(ops.slice(last, (0,), (n - 1,)), ops.slice(first, (1,), (n,)), "LE")
        holds = ops.reduce(ordered, "and", (0,))
    else:
        holds = ops.constant(True, np.dtype("bool"))
    segment = _segment_of_positions(first, last, length)
    reduced = []
    for v, op in values:
        into = ops.full((n + 1,), P.reduce_identity(op, v.dtype), v.dtype)
        scattered = ops.scatter(into, ops.reshape(segment, (length, 1)), v, update_window_dims=(),
                                inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), mode=_SCATTER_MODE[op])
        reduced.append(ops.slice(scattered, (0,), (n,)))
    return reduced, holds


def _segment_of_positions(first: Tracer, last: Tracer, length: int) -> Tracer:
    """For each position ``p`` of an axis of ``length``: the ``i`` whose interval ``first[i] <= p < last[i]``
    holds it, or ``n`` (no interval), where the intervals are sorted and disjoint (anything in ``[0, n]``
    where they are not): the count of intervals starting at or before ``p``, less one."""
    n = first.shape[0]
    starts = ops.scatter(ops.full((length + 1,), 0, INDEX), ops.reshape(first, (n, 1)), ops.full((n,), 1, INDEX),
                         update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                         mode="add")
    segment = ops.sub(ops.cumulative(ops.slice(starts, (0,), (length,)), "sum", 0), ops.full((length,), 1, INDEX))
    clamped = ops.clamp(ops.full((length,), 0, INDEX), segment, ops.full((length,), n - 1, INDEX))
    segment_end = ops.gather(last, ops.reshape(clamped, (length, 1)), offset_dims=(), collapsed_slice_dims=(0,),
                             start_index_map=(0,), slice_sizes=(1,))
    positions = ops.iota((length,), INDEX, 0)
    inside = ops.and_(ops.compare(segment, ops.full((length,), 0, INDEX), "GE"),
                      ops.compare(positions, segment_end, "LT"))
    return ops.select(inside, segment, ops.full((length,), n, INDEX))
