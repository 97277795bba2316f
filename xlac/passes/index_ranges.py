"""The ranges the integer scalars of a graph lie in, read off the graph: a short interpreter over intervals.

Known: an integer constant; ``add``, ``sub``, ``mul``, ``max``, ``min`` and an integer ``convert`` of known
ranges; and inside a ``while`` with a ``trip_count``, a carry the body steps by a constant (a rolled loop's
counter: from its first value to its last, ``trip_count - 1`` steps on), a carry the body passes on
unchanged and every loop invariant, with the ranges of the operands they come from. Anything else is
unknown (absent from the result), as is a range that leaves its dtype (the value may wrap). A pass that
needs to know that an index stays inside an axis (that XLA will not clamp it) asks here.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> i64 = TensorType((), np.dtype("int64"))
>>> i, one, j = Value(i64), Value(i64), Value(i64)
>>> g = Graph([i], [Node(P.constant, (), {"value": np.array(1)}, (one,)), Node(P.add, (i, one), {}, (j,))], [j])
>>> scalar_ranges(g, {i.id: (0, 9)})[j.id]
(1, 10)
"""
from __future__ import annotations

import numpy as np

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node

Range = tuple[int, int]


def scalar_ranges(graph: Graph, input_ranges: dict[int, Range] | None = None) -> dict[int, Range]:
    """Value id -> (lowest, highest) for the integer scalars of ``graph`` and of its regions whose range is
    known; ``input_ranges``: what is known of the graph's inputs, by value id."""
    ranges = dict(input_ranges or {})
    for node in graph.nodes:
        if node.primitive is P.while_:
            _enter_loop(node, ranges)
            continue
        rule = _RULES.get(node.primitive)
        if rule is None or len(node.results) != 1 or not _is_int_scalar(node.results[0]):
            continue
        known = rule(node, ranges)
        if known is not None and _fits(known, node.results[0].type.dtype):
            ranges[node.results[0].id] = known
    return ranges


def _is_int_scalar(value) -> bool:
    return value.type.shape == () and value.type.dtype.kind in "iu"


def _fits(known: Range, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= known[0] <= known[1] <= info.max


def _operand_ranges(node: Node, ranges: dict) -> list[Range] | None:
    found = [ranges.get(v.id) for v in node.operands]
    return None if any(r is None for r in found) else found


def _constant(node: Node, ranges: dict) -> Range:
    value = int(node.attrs["value"])
    return value, value


def _add(node: Node, ranges: dict) -> Range | None:
    found = _operand_ranges(node, ranges)
    return None if found is None else (found[0][0] + found[1][0], found[0][1] + found[1][1])


def _sub(node: Node, ranges: dict) -> Range | None:
    found = _operand_ranges(node, ranges)
    return None if found is None else (found[0][0] - found[1][1], found[0][1] - found[1][0])


def _mul(node: Node, ranges: dict) -> Range | None:
    found = _operand_ranges(node, ranges)
    if found is None:
        return None
    products = [a * b for a in found[0] for b in found[1]]
    return min(products), max(products)


def _extreme(pick):
    def rule(node: Node, ranges: dict) -> Range | None:
        found = _operand_ranges(node, ranges)
        return None if found is None else (pick(found[0][0], found[1][0]), pick(found[0][1], found[1][1]))
    return rule


def _convert(node: Node, ranges: dict) -> Range | None:
    (operand,) = node.operands
    return ranges.get(operand.id) if operand.type.dtype.kind in "iu" else None


_RULES = {P.constant: _constant, P.add: _add, P.sub: _sub, P.mul: _mul, P.max_: _extreme(max),
          P.min_: _extreme(min), P.convert: _convert}


def _enter_loop(node: Node, ranges: dict) -> None:
    """The ranges inside a loop's regions, where its trip count is known (else nothing inside is known)."""
    trips = node.attrs.get("trip_count")
    if trips is None or trips < 1:
        return
    cond, body = node.subgraphs
    n_carries = node.attrs["n_carries"]
    inside = {}
    body_steps = _constant_steps(body, n_carries)
    for k, operand in enumerate(node.operands):
        known = ranges.get(operand.id)
        if known is None:
            continue
        step = 0 if k >= n_carries else body_steps.get(k)
        if step is None:
            continue
        low, high = known
        inside[k] = (low + min(step, 0) * (trips - 1), high + max(step, 0) * (trips - 1))
    for region in (cond, body):
        ranges.update(scalar_ranges(region, {region.inputs[k].id: r for k, r in inside.items()
                                             if _fits(r, region.inputs[k].type.dtype)}))


def _constant_steps(body: Graph, n_carries: int) -> dict[int, int]:
    """Carry position -> the constant the body adds to it each iteration (0: passed on unchanged)."""
    producer = {r.id: node for node in body.nodes for r in node.results}
    constants = {node.results[0].id: int(node.attrs["value"]) for node in body.nodes
                 if node.primitive is P.constant and _is_int_scalar(node.results[0])}
    steps = {}
    for k in range(n_carries):
        carry, out = body.inputs[k], body.outputs[k]
        if out is carry:
            steps[k] = 0
            continue
        node = producer.get(out.id)
        if node is None or node.primitive not in (P.add, P.sub) or not _is_int_scalar(out):
            continue
        x, y = node.operands
        if x is carry and y.id in constants:
            steps[k] = constants[y.id] if node.primitive is P.add else -constants[y.id]
        elif y is carry and x.id in constants and node.primitive is P.add:
            steps[k] = constants[x.id]
    return steps
