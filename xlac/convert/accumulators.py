"""Accumulators: values a loop carries only to combine each iteration's term into them (``acc += f(i)``,
``acc -= f(i)``, ``acc *= f(i)``, ``acc = np.maximum(acc, f(i))``, ``acc = max(acc, f(i))``, where ``f(i)``
does not read ``acc``). A vectorized loop (see :mod:`xlac.convert.vectorized_loops`) computes every term at
once, reduces them over the iterations, then combines the result with the accumulator's value before the loop.

Seen in a loop body's graph, an accumulator is a carry whose new value comes from its old one through one
*combination* alone, which nothing else in the body reads: a primitive that is associative and commutative
(``add``, ``mul``, ``max``, ``min``, ``and``, ``or``), the subtraction of the term, or Python's ``max``/``min``
of two numbers (``select(term > acc, term, acc)``). Integer results are exact (they wrap on overflow the same
in any order); float sums and products are reassociated (rounded otherwise than in the loop's order), and a
maximum or minimum among zeros of both signs may take the other sign.

>>> import numpy as np, xlac
>>> @xlac.compile
... def total_response(x, w):
...     acc = 0.0
...     for i in range(x.shape[0]):
...         acc += np.tanh(x[i] @ w)
...     return acc
>>> x, w = np.arange(200.0).reshape(50, 4) / 200, np.ones(4)
>>> bool(np.isclose(total_response(x, w), np.tanh(x @ w).sum()))
True
>>> [d.reason.split("; ")[-1] for d in total_response.trace(x, w).loop_decisions]
['accumulated, then reduced: acc (sum)']
"""
from __future__ import annotations

from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.trace import ops
from xlac.trace.inline import bind_node
from xlac.trace.state import provenance_of
from xlac.trace.tracer import Tracer

__all__ = ["Accumulator"]

# each associative, commutative combination: the op of ``P.reduce`` that combines many terms as it does two
_REDUCTION_OF = {P.add: "sum", P.mul: "prod", P.max_: "max", P.min_: "min", P.and_: "and", P.or_: "or"}
# Python's ``max(acc, term)``/``min(acc, term)``: the term replaces the accumulator when it compares so
_WINS_WHEN = {"GT": "max", "GE": "max", "LT": "min", "LE": "min"}
_MIRRORED = {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE"}


class Accumulator:
    """A carry of a loop body's graph that is an accumulator: ``before`` and ``after`` (the carry going in
    and coming out), ``term`` (what each iteration combines into it), ``combination`` (the nodes making
    ``after`` from ``before`` and ``term``), ``reduction`` (the op of ``P.reduce`` over the terms) and
    ``skips_nan`` (Python's ``max``/``min`` of floats: a NaN term never replaces the accumulator)."""

    def __init__(self, before: Value, after: Value, term: Value, combination: list[Node], reduction: str,
                 skips_nan: bool):
        self.before, self.after, self.term, self.combination = before, after, term, combination
        self.reduction, self.skips_nan = reduction, skips_nan

    @classmethod
    def of(cls, graph: Graph, before: Value, after: Value) -> "Accumulator | None":
        """The accumulator that the carry ``before`` (an input of ``graph``) coming out as ``after`` (an
        output) is, or None.

        >>> import numpy as np
        >>> from xlac.ir.types import TensorType
        >>> from xlac.trace.inline import closed_graph
        >>> scalar = TensorType((), np.dtype("float64"))
        >>> body = closed_graph([scalar, scalar], lambda x: [ops.add(x[0], ops.exp(x[1]))])
        >>> Accumulator.of(body, body.inputs[0], body.outputs[0]).reduction
        'sum'
        >>> squared = closed_graph([scalar], lambda x: [ops.mul(x[0], x[0])])
        >>> Accumulator.of(squared, squared.inputs[0], squared.outputs[0]) is None
        True
        """
        producers = {r.id: node for node in graph.nodes for r in node.results}
        last = producers.get(after.id)
        if last is None:
            return None
        found = _combination(last, before, producers)
        if found is None:
            return None
        term, combination, reduction = found
        dtype = after.type.dtype
        if reduction in ("max", "min") and dtypes.is_inexact(dtype) and not dtypes.is_float(dtype):
            return None        # complex numbers: NumPy's order is lexicographic, XLA's max is not
        own = {before.id} | {r.id for node in combination for r in node.results}
        if any(v.id in own for node in graph.nodes if node not in combination for v in node.operands):
            return None
        if [v.id for v in graph.outputs if v.id in own] != [after.id]:
            return None
        if any(v.id not in own and v.id != term.id for node in combination for v in node.operands):
            return None
        skips_nan = last.primitive is P.select and dtypes.is_float(dtype)
        return cls(before, after, term, combination, reduction, skips_nan)

    def reduced(self, initial: Tracer, terms: Tracer) -> Tracer:
        """The accumulator after the iterations: ``initial`` (its value before them) combined with
        ``terms`` (each iteration's, stacked along axis 0), the terms reduced first."""
        with provenance_of(self.combination[-1].provenance.as_inlined()):
            if self.skips_nan:
                identity = float("-inf") if self.reduction == "max" else float("inf")
                terms = ops.select(ops.compare(terms, terms, "NE"), ops.full_like(terms, identity), terms)
            total = ops.reduce(terms, self.reduction, (0,))
            values = {self.before.id: initial, self.term.id: total}
            for node in self.combination:
                for value, result in zip(node.results, bind_node(node, [values[v.id] for v in node.operands])):
                    values[value.id] = result
        result = values[self.after.id]
        result.weak = initial.weak
        return result


def _combination(last: Node, before: Value, producers: dict) -> tuple[Value, list[Node], str] | None:
    """(term, combination nodes, reduction) where ``last`` combines ``before`` with a term, else None."""
    if last.primitive in _REDUCTION_OF:
        a, b = last.operands
        if (a.id == before.id) == (b.id == before.id):
            return None
        return (b if a.id == before.id else a), [last], _REDUCTION_OF[last.primitive]
    if last.primitive is P.sub:          # acc -= f(i): the sum of the terms, subtracted once
        a, b = last.operands
        return None if a.id != before.id or b.id == before.id else (b, [last], "sum")
    if last.primitive is not P.select:
        return None
    which, term, otherwise = last.operands
    test = producers.get(which.id)
    if otherwise.id != before.id or term.id == before.id or test is None or test.primitive is not P.compare:
        return None
    x, y = test.operands
    direction = test.attrs["direction"]
    if (x.id, y.id) == (before.id, term.id):
        direction = _MIRRORED.get(direction)
    elif (x.id, y.id) != (term.id, before.id):
        return None
    reduction = _WINS_WHEN.get(direction)
    return None if reduction is None else (term, [test, last], reduction)
