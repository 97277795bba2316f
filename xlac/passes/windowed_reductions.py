"""Reductions over positions ``lo <= p < hi`` with traced bounds read those positions only.

xlac.numpy reduces a slice with traced bounds (``x[lo:hi].sum()``, ``a[lo:hi] @ b[lo:hi]``) over the whole
axis, masked: ``reduce(select(lo <= iota < hi, values, identity))``. On a long axis this pass makes such a
reduction, when the positions are few (at most 1/8 of the axis, decided when the program runs), a loop over
windows of ``MIN_WINDOW`` elements from ``lo`` to ``hi``: ``ceil((hi - lo) / MIN_WINDOW)`` steps, each
reading a ``dynamic_slice`` masked to the positions of its step; otherwise the masked reduction as it was.
Inside a loop over rows (a CSR matrix-vector product's ``data[indptr[i]:indptr[i + 1]] @
x[indices[indptr[i]:indptr[i + 1]]]``) a row then costs its length instead of the axis's, and XLA hoists
``values`` out of the loop over rows where it does not depend on the row.

Matched: a 1-D ``reduce`` (sum, max, min, prod) of a ``select`` whose predicate is ``(iota >= lo) & (iota <
hi)`` (either order, either spelling of each comparison) with ``lo`` and ``hi`` broadcast scalars, neither a
constant (a prefix ``x[:i]`` in a loop over ``i`` covers half the axis on average: not worth the windows),
and whose other branch is the reduction's identity, on an axis of at least ``MIN_LENGTH`` elements. The sum of each
window is added in another order than one reduction's (which XLA does not fix either).

>>> import numpy as np, xlac
>>> def tail_sum(x, lo, hi):
...     return x[lo:hi].sum()
>>> x = np.arange(1000.0)
>>> bool(xlac.compile(tail_sum)(x, 10, 20) == x[10:20].sum())
True
>>> xlac.compile(tail_sum).trace(x, 10, 20).ir("final").op_counts().get("while", 0)
1
"""
from __future__ import annotations

import dataclasses

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.ir.types import TensorType
from xlac.passes.simplify import eliminate_dead_code

__all__ = ["windowed_reductions", "MIN_LENGTH", "interval_reduced"]

MIN_WINDOW = 64
MIN_LENGTH = 4 * MIN_WINDOW
_FEW = 8
_BOOL = np.dtype("bool")


def windowed_reductions(graph: Graph) -> Graph:
    """``graph`` with every matched masked reduction (see the module's docstring) made a loop over windows;
    regions are rewritten on their own (they are closed graphs)."""
    producer = {r.id: node for node in graph.nodes for r in node.results}
    nodes, rewritten = [], 0
    for node in graph.nodes:
        if node.subgraphs:
            regions = tuple(windowed_reductions(region) for region in node.subgraphs)
            rewritten += sum(region.report.get("reductions_windowed", 0) for region in regions)
            node = dataclasses.replace(node, subgraphs=regions)
        match = _masked_reduction(node, producer)
        if match is None:
            nodes.append(node)
            continue
        nodes += _windowed(node, *match)
        rewritten += 1
    if not rewritten:
        return dataclasses.replace(graph, report={})
    return dataclasses.replace(eliminate_dead_code(dataclasses.replace(graph, nodes=nodes)),
                               report={"reductions_windowed": rewritten})


def _masked_reduction(node: Node, producer: dict):
    """(values, lo, hi) where ``node`` reduces ``values`` over ``lo <= p < hi`` only, on a long axis, else None."""
    if node.primitive is not P.reduce or node.operands[0].type.shape[-1:] < (MIN_LENGTH,):
        return None
    dtype = node.operands[0].type.dtype
    if dtype.kind not in "iu" and dtype.itemsize < 4:
        return None             # 16-bit floats: the windows' running total would round at each window
    return interval_reduced(node, producer)


def interval_reduced(node: Node, producer: dict):
    """(values, lo, hi) where ``node`` is a 1-D sum, product, maximum or minimum of ``values`` over the
    positions ``lo <= p < hi`` only (``lo`` and ``hi`` 0-d values, neither a constant), else None.
    ``producer``: the node defining each value of the graph, by value id."""
    if node.primitive is not P.reduce or node.attrs["op"] not in ("sum", "prod", "max", "min"):
        return None
    (operand,) = node.operands
    if operand.type.ndim != 1 or operand.type.dtype == _BOOL:
        return None
    return _masked_operand(node, operand, producer)


def _masked_operand(node: Node, operand: Value, producer: dict):
    """(values, lo, hi) where ``operand`` is ``select(lo <= iota < hi, values, identity of node's op)``."""
    select = _defined_by(operand, P.select, producer)
    if select is None:
        return None
    mask, values, fill = select.operands
    if not _is_identity(fill, node.attrs["op"], producer):
        return None
    both = _defined_by(mask, P.and_, producer)
    if both is None:
        return None
    bounds = [_bound_of(v, producer) for v in both.operands]
    lows = [b for kind, b in bounds if kind == "lo"]
    highs = [b for kind, b in bounds if kind == "hi"]
    if len(lows) != 1 or len(highs) != 1:
        return None
    if _scalar_constant(lows[0], producer) is not None or _scalar_constant(highs[0], producer) is not None:
        return None             # a prefix or a suffix (x[:i] in a loop over i): on average half the axis
    return values, lows[0], highs[0]


def _defined_by(value: Value, primitive, producer: dict) -> Node | None:
    node = producer.get(value.id)
    return node if node is not None and node.primitive is primitive else None


def _scalar_constant(value: Value, producer: dict):
    """The number a value holds everywhere, where it is a constant or a broadcast scalar constant."""
    broadcast = _defined_by(value, P.broadcast_in_dim, producer)
    if broadcast is not None:
        value = broadcast.operands[0]
    constant = _defined_by(value, P.constant, producer)
    if constant is None or constant.attrs["value"].shape != ():
        return None
    return constant.attrs["value"][()]


def _is_identity(fill: Value, op: str, producer: dict) -> bool:
    number = _scalar_constant(fill, producer)
    return number is not None and number == P.reduce_identity(op, fill.type.dtype)


# compare(a, b, direction) as a bound on the iota: (which side the iota is on, direction) -> the bound's kind
_BOUNDS = {(0, "GE"): "lo", (1, "LE"): "lo", (0, "LT"): "hi", (1, "GT"): "hi"}


def _bound_of(value: Value, producer: dict):
    """("lo", bound) for ``iota >= bound``, ("hi", bound) for ``iota < bound`` (bound a 0-d value), else
    (None, None)."""
    compare = _defined_by(value, P.compare, producer)
    if compare is None:
        return None, None
    for side, operand in enumerate(compare.operands):
        iota = _defined_by(operand, P.iota, producer)
        other = _defined_by(compare.operands[1 - side], P.broadcast_in_dim, producer)
        if iota is None or other is None or iota.attrs["dimension"] != 0 or other.operands[0].type.shape != ():
            continue
        kind = _BOUNDS.get((side, compare.attrs["direction"]))
        if kind is not None:
            return kind, other.operands[0]
    return None, None


class _Emitter:
    """Appends nodes to ``nodes``, each with ``provenance``; ``emit(P.add, a, b)`` gives the result value."""

    def __init__(self, provenance):
        self.nodes: list[Node] = []
        self.provenance = provenance

    def __call__(self, primitive, *operands: Value, subgraphs: tuple = (), **attrs):
        types = primitive.infer_types(*[v.type for v in operands], **attrs)
        results = tuple(Value(t) for t in types)
        self.nodes.append(Node(primitive, tuple(operands), attrs, results, self.provenance, subgraphs))
        return results if primitive.multiple_results else results[0]

    def constant(self, number, dtype) -> Value:
        return self(P.constant, value=np.array(number, dtype=dtype))


def _windowed(node: Node, values: Value, lo: Value, hi: Value) -> list[Node]:
    """The nodes that compute ``node``'s result (the same value): when the positions are few (at most
    1/``_FEW`` of the axis, known when the program runs), the loop over windows, else the masked reduction
    as it was."""
    length = values.type.shape[0]
    emit = _Emitter(node.provenance)
    index = lo.type.dtype
    zero, total = emit.constant(0, index), emit.constant(length, index)
    first = emit(P.max_, emit(P.min_, lo, total), zero)
    last = emit(P.max_, emit(P.min_, hi, total), first)
    few = emit(P.compare, emit(P.mul, emit(P.sub, last, first), emit.constant(_FEW, index)), total, direction="LE")
    branch = emit(P.convert, few, dtype=np.dtype("int32"))
    types = [v.type for v in (values, first, last)]
    whole = _region(types, lambda emit, data, at, end: [_masked(emit, data, at, end, node.attrs["op"])],
                    node.provenance)
    windows = _region(types, lambda emit, data, at, end: [_window_loop(emit, data, at, end, node.attrs["op"])],
                      node.provenance)
    emit(P.case, branch, values, first, last, result_types=(node.results[0].type,), subgraphs=(whole, windows))
    # The case node gives the reduction's result under the old value's name.
    emit.nodes[-1] = dataclasses.replace(emit.nodes[-1], results=node.results)
    return emit.nodes


def _masked(emit: _Emitter, data: Value, at: Value, end: Value, op: str) -> Value:
    """``data`` reduced over the positions ``at <= p < end``: the whole axis, masked."""
    inside = _between(emit, emit(P.iota, shape=data.type.shape, dtype=at.type.dtype, dimension=0), at, end)
    return emit(P.reduce, emit(P.select, inside, data, _identity_of(emit, op, data.type)), op=op, axes=(0,))


def _between(emit: _Emitter, positions: Value, at: Value, end: Value) -> Value:
    shape = positions.type.shape
    return emit(P.and_,
                emit(P.compare, positions, emit(P.broadcast_in_dim, at, shape=shape, broadcast_dimensions=()),
                     direction="GE"),
                emit(P.compare, positions, emit(P.broadcast_in_dim, end, shape=shape, broadcast_dimensions=()),
                     direction="LT"))


def _identity_of(emit: _Emitter, op: str, type_: TensorType) -> Value:
    return emit(P.broadcast_in_dim, emit(P.constant, value=P.reduce_identity(op, type_.dtype)),
                shape=type_.shape, broadcast_dimensions=())


def _window_loop(emit: _Emitter, data: Value, first: Value, last: Value, op: str) -> Value:
    """``data`` reduced over ``first <= p < last`` by a loop over windows of a fixed size."""
    size = MIN_WINDOW
    start = emit(P.constant, value=P.reduce_identity(op, data.type.dtype))
    carries, invariants = [first, start], [last, data]
    types = [v.type for v in carries + invariants]
    cond = _region(types, lambda emit, at, _acc, end, _data: [emit(P.compare, at, end, direction="LT")],
                   emit.provenance)
    body = _region(types, lambda emit, at, acc, end, data: _window_step(emit, at, acc, end, data, size, op),
                   emit.provenance)
    return emit(P.while_, *carries, *invariants, n_carries=len(carries), subgraphs=(cond, body))[1]


def _window_step(emit: _Emitter, at: Value, acc: Value, end: Value, data: Value, size: int, op: str) -> list:
    """One step: the elements ``at <= p < min(end, at + size)`` of ``data`` reduced into ``acc``."""
    index = at.type.dtype
    length = data.type.shape[0]
    start = emit(P.clamp, emit.constant(0, index), at, emit.constant(length - size, index))
    window = emit(P.dynamic_slice, data, start, sizes=(size,))
    positions = emit(P.add, emit(P.iota, shape=(size,), dtype=index, dimension=0),
                     emit(P.broadcast_in_dim, start, shape=(size,), broadcast_dimensions=()))
    stop = emit(P.min_, end, emit(P.add, at, emit.constant(size, index)))
    inside = _between(emit, positions, at, stop)
    reduced = emit(P.reduce, emit(P.select, inside, window, _identity_of(emit, op, window.type)), op=op, axes=(0,))
    combined = emit(P.reduce_combiner(op), acc, reduced)
    return [stop, combined]


def _region(types: list[TensorType], build, provenance) -> Graph:
    """A closed graph over inputs of ``types``: ``build(emit, *inputs)`` gives its outputs."""
    inputs = [Value(t) for t in types]
    emit = _Emitter(provenance)
    outputs = build(emit, *inputs)
    return Graph(inputs=inputs, nodes=emit.nodes, outputs=list(outputs))
