"""Where a compiled program spends its work, per line of the user's source: XLA's estimated flops and bytes
accessed (counted from the optimized HLO by :mod:`xlac.inspection.hlo_cost`), with each loop's trip count
and how it ran, most costly line first. ``Compiled.cost_by_line()`` returns the rows; ``python -m xlac
explain --cost`` prints them.

>>> hlo = '''HloModule m
... ENTRY %main (a: f64[100,200], b: f64[200,300]) -> f64[100,300] {
...   %a = f64[100,200]{1,0} parameter(0)
...   %b = f64[200,300]{1,0} parameter(1)
...   %d = f64[100,300]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={source_file="model.py" source_line=3}
...   ROOT %t = f64[100,300]{1,0} tanh(%d), metadata={source_file="model.py" source_line=4}
... }'''
>>> rows = cost_by_line(hlo, [])
>>> [(row.location, row.flops) for row in rows]
[('model.py:3', 12000000.0), ('model.py:4', 0.0)]
>>> print(format_cost_table(rows), end="")
     flops  transc.     bytes   share   runs  line        source
       12M        0      880k   96.2%      1  model.py:3
         0      30k      480k    3.8%      1  model.py:4
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass

from xlac.inspection.hlo_cost import instruction_costs
from xlac.inspection.loops import LoopDecision

__all__ = ["LineCost", "cost_by_line", "format_cost_table"]

NO_LINE = "(no source line)"


@dataclass(frozen=True)
class LineCost:
    """The estimated work of one line of the user's source per call: ``flops``, ``transcendentals``
    (``exp``, ``tanh``, ... one per element), ``bytes_accessed``; ``runs``: how many times its most
    repeated op runs per call (the trip counts of the loops around it, where XLA knows them); ``loops``:
    the converted Python loops on this line and how each ran; ``source``: the line's text."""

    location: str
    source: str
    flops: float
    transcendentals: float
    bytes_accessed: float
    runs: int
    loops: tuple[LoopDecision, ...] = ()

    @property
    def work(self) -> float:
        """What the rows are sorted by: flops, transcendentals and bytes accessed added up."""
        return self.flops + self.transcendentals + self.bytes_accessed

    def as_dict(self) -> dict:
        return dict(location=self.location, source=self.source, flops=self.flops,
                    transcendentals=self.transcendentals, bytes_accessed=self.bytes_accessed, runs=self.runs,
                    loops=[loop.as_dict() for loop in self.loops])


def cost_by_line(hlo: str, loop_decisions: list[LoopDecision]) -> list[LineCost]:
    """The rows of optimized HLO module text ``hlo``, one per source line its ops name, most work first; a
    line holding a loop of ``loop_decisions`` has that loop's row even where it costs nothing."""
    costs = instruction_costs(hlo)
    places = {None: None}
    for place in costs:
        if place is not None:
            places.setdefault(_location(place), place)
    loops: dict[str, list[LoopDecision]] = {}
    for loop in loop_decisions:
        loops.setdefault(loop.location, []).append(loop)
    rows = []
    by_location: dict[str, list] = {}
    for place, work in costs.items():
        by_location.setdefault(NO_LINE if place is None else _location(place), []).append((place, work))
    for location in set(by_location) | set(loops):
        parts = by_location.get(location, [])
        place = next((p for p, _ in parts if p is not None), None)
        source = linecache.getline(place[0], place[1]).strip() if place else ""
        rows.append(LineCost(location, source, sum(w.flops for _, w in parts),
                             sum(w.transcendentals for _, w in parts), sum(w.bytes_accessed for _, w in parts),
                             max((w.trips for _, w in parts), default=1), tuple(loops.get(location, ()))))
    return sorted(rows, key=lambda row: (-row.work, row.location))


def _location(place: tuple[str, int]) -> str:
    """``("/home/me/model.py", 12)`` -> ``"model.py:12"``, as xlac names a line everywhere."""
    return f"{place[0].rsplit('/', 1)[-1]}:{place[1]}"


def format_cost_table(rows: list[LineCost]) -> str:
    """The rows as a table: per line its flops, transcendentals, bytes accessed, share of all the work,
    runs per call, location and source, and under it the loops that start there."""
    total = sum(row.work for row in rows) or 1.0
    width = max([len(row.location) for row in rows] + [4])
    lines = [f"{'flops':>10s} {'transc.':>8s} {'bytes':>9s} {'share':>7s} {'runs':>6s}  {'line'.ljust(width)}  source"]
    for row in rows:
        lines.append(f"{_amount(row.flops):>10s} {_amount(row.transcendentals):>8s} {_amount(row.bytes_accessed):>9s} "
                     f"{100 * row.work / total:6.1f}% {row.runs:>6d}  {row.location.ljust(width)}  {row.source}")
        lines += [f"{'':{46 + width}s}  `{loop.kind}` ({_trips(loop)}) {loop.decision}: {loop.reason}"
                  for loop in row.loops]
    return "".join(line.rstrip() + "\n" for line in lines)


def _trips(loop: LoopDecision) -> str:
    return "traced trips: its body counted once" if loop.trips == "traced" else f"{loop.trips} trips"


def _amount(value: float) -> str:
    """``1234567.0`` -> ``'1.23M'``: three significant digits and a unit."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}" if value else "0"
