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

from xlac.ir.graph import Graph, SourceLocation


@dataclass(frozen=True)
class InplaceWrite:
    """One write (``x[i] = v``, ``x += y``, ...): where it is, whether XLA can do it in place, and why not."""

    location: SourceLocation | None
    in_place: bool
    reason: str
    bytes: int

    def __str__(self) -> str:
        where = str(self.location) if self.location else "?"
        verdict = "in place" if self.in_place else f"copies {self.bytes} bytes: {self.reason}"
        return f"{where}: {verdict}"


def inplace_report(graph: Graph) -> list[InplaceWrite]:
    """The writes of a functionalized graph, in program order, each judged in place or not."""
    position = {}
    readers: dict[int, list[int]] = {}
    for i, node in enumerate(graph.nodes):
        for r in node.results:
            position[r.id] = i
        for v in node.operands:
            readers.setdefault(v.id, []).append(i)
    outputs = {v.id for v in graph.outputs}
    inputs = {v.id for v in graph.inputs}
    report = []
    for location, old, new in graph.writes:
        size = old.type.size * old.type.dtype.itemsize
        if new.id not in position:              # the write was dead (its value never used): nothing to do
            continue
        written_at = position[new.id]
        later = [i for i in readers.get(old.id, []) if i > written_at]
        if later:
            reader = graph.nodes[later[0]]
            report.append(InplaceWrite(location, False, f"the old value is read afterwards by "
                                       f"{reader.primitive.name} at {reader.location or '?'}", size))
        elif old.id in outputs and old.id not in inputs:
            report.append(InplaceWrite(location, False, "the old value is also returned", size))
        else:
            report.append(InplaceWrite(location, True, "", size))
    return report
