"""The in-place report: for each write of a program, whether XLA can do it in the array's own buffer.

XLA updates a buffer in place (``dynamic_update_slice``, ``scatter``) only when
nothing reads the old value afterwards; otherwise it must copy the whole buffer
first. After functionalization every write replaces an array's old value by a
new one, so the question is whether the old value is read after the write (or
returned). An argument's first write reads the argument's own buffer, which xlac
donates to XLA when the program writes to the argument.

>>> import numpy as np, xlac
>>> def f(x, v):
...     x[0] = v
...     return x
>>> [w.in_place for w in xlac.compile(f).trace(np.zeros(3), 1.0).inplace_report()]
[True]
"""
from __future__ import annotations

from dataclasses import dataclass

from xlac.ir import primitives as P
from xlac.ir.graph import Graph, SourceLocation
from xlac.ir.types import TensorType


@dataclass(frozen=True)
class InplaceWrite:
    """One write (``x[i] = v``, ``x += y``, ...): where it is, whether XLA can do it in place, and why not;
    ``array`` names the array written (``"x f64[8]"``), ``op`` the pure op that now computes its new value;
    ``in_loop``: the write is in a loop's body; ``array_type``: the array's type."""

    location: SourceLocation | None
    in_place: bool
    reason: str
    bytes: int
    array: str = ""
    op: str = ""
    in_loop: bool = False
    array_type: TensorType | None = None

    def as_dict(self) -> dict:
        """The write as JSON types (the entries of ``summary.json``'s ``inplace_writes``)."""
        return {"location": str(self.location) if self.location else None, "array": self.array, "op": self.op,
                "in_place": self.in_place, "reason": self.reason, "bytes": self.bytes}

    def __str__(self) -> str:
        return f"{self.location or '?'}: {_verdict(self.as_dict())}"


class InplaceReport(list):
    """The in-place writes of a program (a list of :class:`InplaceWrite`) that prints as a table.

    >>> import numpy as np, xlac
    >>> def f(x, v):
    ...     x[0] = v
    ...     return x
    >>> print(xlac.compile(f).trace(np.zeros(3), 1.0).inplace_report())  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    line                array     op                    result
    <doctest ...>:2     x f64[3]  dynamic_update_slice  in place
    """

    def __str__(self) -> str:
        return "\n".join(format_inplace_table([w.as_dict() for w in self]))


def format_inplace_table(writes: list[dict]) -> list[str]:
    """The lines of the in-place table (no indent), one row per write (``InplaceWrite.as_dict()``) under a
    header; ``["no in-place writes"]`` for none. The one formatter of the report, ``explain`` and summaries."""
    if not writes:
        return ["no in-place writes"]
    rows = [("line", "array", "op", "result")]
    rows += [(w["location"] or "?", w.get("array") or "?", w.get("op") or "?", _verdict(w)) for w in writes]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3] for row in rows]


def _verdict(write: dict) -> str:
    return "in place" if write["in_place"] else f"copies {write['bytes']} bytes: {write['reason']}"


def inplace_report(graph: Graph, array_names: dict[int, str] | None = None, in_loop: bool = False) -> InplaceReport:
    """The writes of a functionalized graph, in program order, each judged in place or not; then those inside
    the regions of its loops and conditionals, judged within their region (a loop carries the array it writes
    in its own buffer when nothing in the body reads the old value after the write). ``array_names``: value
    id -> the name of the array it is (for a region, the arrays of the enclosing graph its inputs stand for).
    This judges the graph only; ``Compiled.inplace_report`` also reads XLA's optimized HLO for copies of the
    buffers loops carry (:mod:`xlac.inspection.hlo_copies`)."""
    position = {}
    readers: dict[int, list[int]] = {}
    for i, node in enumerate(graph.nodes):
        for r in node.results:
            position[r.id] = i
        for v in node.operands:
            readers.setdefault(v.id, []).append(i)
    outputs = {v.id for v in graph.outputs}
    inputs = {v.id for v in graph.inputs}
    array_names = dict(array_names or {})
    array_names.update({v.id: f"{name} {v.type}" for v, name in zip(graph.inputs, graph.input_names) if name})
    report = InplaceReport()
    for location, old, new in graph.writes:
        size = old.type.size * old.type.dtype.itemsize
        array = array_names.get(old.id, f"local {old.type}")
        array_names[new.id] = array            # a later write to the new value writes the same array
        if new.id not in position:              # the write was dead (its value never used): nothing to do
            continue
        written_at = position[new.id]
        op = graph.nodes[written_at].primitive.name
        later = [i for i in readers.get(old.id, []) if i > written_at]
        if later:
            reader = graph.nodes[later[0]]
            in_place, reason = False, (f"the old value is read afterwards by {reader.primitive.name} at "
                                       f"{reader.location or '?'}")
        elif old.id in outputs and old.id not in inputs:
            in_place, reason = False, "the old value is also returned"
        else:
            in_place, reason = True, ""
        report.append(InplaceWrite(location, in_place, reason, size, array, op, in_loop, old.type))
    for node in graph.nodes:
        for region in node.subgraphs:
            operands = node.operands[len(node.operands) - len(region.inputs):]
            names = {v.id: array_names[o.id] for v, o in zip(region.inputs, operands) if o.id in array_names}
            report.extend(inplace_report(region, names, in_loop or node.primitive is P.while_))
    return report
