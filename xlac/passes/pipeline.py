"""The pass pipeline: the passes every compile runs, in order, with the verifier between them.

>>> [name for name, _ in PASSES]
['functionalize', 'autocast', 'simplify', 'nearby_reads', 'view_writes', 'windowed_reductions', 'flat_writes']
"""
from __future__ import annotations

import time

from xlac.config import config
from xlac.ir.graph import Graph
from xlac.ir.verifier import verify
from xlac.passes.autocast import autocast_pass
from xlac.passes.flat_writes import flat_writes
from xlac.passes.functionalize import functionalize
from xlac.passes.nearby_reads import nearby_reads
from xlac.passes.simplify import simplify
from xlac.passes.view_writes import view_writes
from xlac.passes.windowed_reductions import windowed_reductions

PASSES = [("functionalize", functionalize), ("autocast", autocast_pass), ("simplify", simplify),
          ("nearby_reads", nearby_reads), ("view_writes", view_writes), ("windowed_reductions", windowed_reductions),
          ("flat_writes", flat_writes)]


def run_passes(graph: Graph, timings: dict | None = None) -> list[tuple[str, Graph]]:
    """Every stage in order: ``[("traced", g0), ("simplify", g1), ...]``; the last is what gets lowered.
    ``timings`` gets the seconds each pass took, by name."""
    stages = [("traced", graph)]
    if config.verify_passes:
        verify(graph)
    for name, run in PASSES:
        start = time.perf_counter()
        graph = run(graph)
        if timings is not None:
            timings[name] = time.perf_counter() - start
        if config.verify_passes:
            verify(graph)
        stages.append((name, graph))
    return stages
