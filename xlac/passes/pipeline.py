"""The pass pipeline: the passes every compile runs, in order, with the verifier between them.

>>> [name for name, _ in PASSES]
['functionalize', 'simplify']
"""
from __future__ import annotations

from xlac.config import config
from xlac.ir.graph import Graph
from xlac.ir.verifier import verify
from xlac.passes.functionalize import functionalize
from xlac.passes.simplify import eliminate_dead_code

PASSES = [("functionalize", functionalize), ("simplify", eliminate_dead_code)]


def run_passes(graph: Graph) -> list[tuple[str, Graph]]:
    """Every stage in order: ``[("traced", g0), ("simplify", g1), ...]``; the last is what gets lowered."""
    stages = [("traced", graph)]
    if config.verify_passes:
        verify(graph)
    for name, run in PASSES:
        graph = run(graph)
        if config.verify_passes:
            verify(graph)
        stages.append((name, graph))
    return stages
