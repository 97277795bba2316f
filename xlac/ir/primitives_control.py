"""The control-flow primitives: nodes that hold sub-graphs (regions), lowered to ``stablehlo.while`` and
``stablehlo.case``.

``while_ *carries, *invariants {n_carries}`` with ``node.subgraphs = (cond, body)``: both regions take
every operand (the carries, then the loop invariants: values of the enclosing graph the regions read);
``cond`` returns one ``bool[]``, ``body`` the carries' next values. The results are the carries' final
values. ``trip_count``, where the loop's number of iterations is known when tracing (``fori_loop`` with
Python int bounds, ``scan``), lets reverse-mode differentiation run the body backwards: from the values each
iteration's backward pass reads, stored per iteration by the forward loop, or with ``checkpoint`` from the
carries each iteration starts from, evaluating the iteration again. ``write_once``: carries the body only
writes into, no element in two iterations, from a constant (scan's stacked outputs): the backward loop reads
their cotangents from the final ones instead of carrying them.

``case index, *operands {result_types}`` with one region per branch: ``index`` (an ``int32[]`` already in
range) picks the branch, each region takes the operands and returns values of ``result_types``.

Regions are closed: everything a region reads is an input of it, so every pass can treat a region as a
graph of its own. A region's signature is checked by the verifier through ``region_rule``.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> f32 = TensorType((3,), np.dtype("float32"))
>>> while_.infer_types(f32, TensorType((), np.dtype("int32")), f32, n_carries=2)
(f32[3], i32[])
"""
from __future__ import annotations

import numpy as np

from xlac.ir.autocast_classes import KEEP
from xlac.ir.primitive import ShapeError, declare
from xlac.ir.types import TensorType

__all__ = ["while_", "case"]

BOOL_SCALAR = TensorType((), np.dtype("bool"))
INDEX_SCALAR = TensorType((), np.dtype("int32"))


def _while_rule(*operands: TensorType, n_carries: int, trip_count: int | None = None, checkpoint: bool = False,
                write_once: tuple = ()):
    if not 0 <= n_carries <= len(operands):
        raise ShapeError(f"while: {n_carries} carries but {len(operands)} operands")
    return tuple(operands[:n_carries])


def _case_rule(index: TensorType, *operands: TensorType, result_types: tuple):
    if index != INDEX_SCALAR:
        raise ShapeError(f"case: the branch index must be {INDEX_SCALAR}, got {index}")
    return tuple(result_types)


def _check_signature(what: str, graph, inputs, outputs) -> None:
    got_in, got_out = [v.type for v in graph.inputs], [v.type for v in graph.outputs]
    if got_in != list(inputs):
        raise ShapeError(f"{what} takes {got_in}, expected {list(inputs)}")
    if got_out != list(outputs):
        raise ShapeError(f"{what} returns {got_out}, expected {list(outputs)}")


def _while_regions(node) -> None:
    operands = [v.type for v in node.operands]
    if len(node.subgraphs) != 2:
        raise ShapeError(f"while holds {len(node.subgraphs)} regions, expected 2 (cond, body)")
    cond, body = node.subgraphs
    _check_signature("while's cond", cond, operands, [BOOL_SCALAR])
    _check_signature("while's body", body, operands, operands[:node.attrs["n_carries"]])


def _case_regions(node) -> None:
    operands = [v.type for v in node.operands[1:]]
    if not node.subgraphs:
        raise ShapeError("case holds no branch")
    for k, branch in enumerate(node.subgraphs):
        _check_signature(f"case's branch {k}", branch, operands, node.attrs["result_types"])


# Their regions are autocast where they are traced; the node itself runs as it was traced.
while_ = declare("while", _while_rule, multiple_results=True, category="control", autocast=KEEP)
case = declare("case", _case_rule, multiple_results=True, category="control", autocast=KEEP)
while_.register(region_rule=_while_regions)
case.register(region_rule=_case_regions)
