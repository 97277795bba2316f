"""How each converted Python loop of a compiled function ran (see :mod:`xlac.convert.loops`): what
``Traced.loop_decisions``, ``explain`` and the dumps' summary list.

>>> print(LoopDecision("model.py:12", "for", 1000, "rolled", "1000 iterations of 9 ops"))
model.py:12: `for` (1000 trips) rolled: 1000 iterations of 9 ops
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LoopDecision"]


@dataclass(frozen=True)
class LoopDecision:
    """How one converted loop of a compiled function ran: ``location`` (its ``file:line``), ``kind``
    ("for" or "while"), ``trips`` (its trip count, or "traced"), ``decision`` ("vectorized", "rolled" or "unrolled"),
    ``reason`` (why)."""

    location: str
    kind: str
    trips: int | str
    decision: str
    reason: str

    def __str__(self) -> str:
        trips = "traced trips" if self.trips == "traced" else f"{self.trips} trips"
        return f"{self.location}: `{self.kind}` ({trips}) {self.decision}: {self.reason}"

    def as_dict(self) -> dict:
        return dict(location=self.location, kind=self.kind, trips=self.trips, decision=self.decision,
                    reason=self.reason)
