"""The StableHLO emitters of the control-flow primitives: ``while`` as ``stablehlo.while`` (the loop
invariants ride along as loop state, returned unchanged by the body), ``case`` as ``stablehlo.case``
(whose branches read the operands from above).

>>> from xlac.ir import primitives as P
>>> P.while_.emitter is not None and P.case.emitter is not None
True
"""
from __future__ import annotations

from xlac.ir import primitives as P
from xlac.lowering.module import FunctionWriter


def _emit_while(w: FunctionWriter, node, operands):
    cond, body = node.subgraphs
    types = [v.type for v in node.operands]
    invariants = range(node.attrs["n_carries"], len(types))
    regions = [w.graph_region(cond), w.graph_region(body, extra_returns=invariants)]
    results = w.op("stablehlo.while", operands, types, types, regions=regions)
    return results[:node.attrs["n_carries"]]


def _emit_case(w: FunctionWriter, node, operands):
    regions = [w.graph_region(branch, inputs=operands[1:]) for branch in node.subgraphs]
    return w.op("stablehlo.case", operands[:1], [node.operands[0].type], [v.type for v in node.results],
                regions=regions)


P.while_.register(emitter=_emit_while)
P.case.register(emitter=_emit_case)
