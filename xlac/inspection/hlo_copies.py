"""Copies XLA makes inside loops: read from an optimized HLO module's text.

XLA carries a buffer through a ``while`` loop in place unless it cannot prove that nothing else reads the
old value; then the loop's body (or a computation it calls) holds a ``copy`` of the whole buffer, paid every
iteration (jax-ml/jax#40101). The in-place report asks this module which buffer types are copied there.

>>> hlo = '''%body (p: (s32[], f32[8,4])) -> (s32[], f32[8,4]) {
...   %x = f32[8,4]{1,0} get-tuple-element(%p), index=1
...   %copy.1 = f32[8,4]{1,0} copy(%x)
... }
... ENTRY %main (a: f32[8,4]) -> f32[8,4] {
...   %w = (s32[], f32[8,4]) while(%t), condition=%cond, body=%body
... }'''
>>> loop_body_copies(hlo)
{'f32[8,4]'}
"""
from __future__ import annotations

import dataclasses
import re

from xlac.ir.types import TensorType
from xlac.passes.inplace import InplaceReport

_COMPUTATION = re.compile(r"^(?:ENTRY )?%([\w.-]+) \(")
_CALLED = re.compile(r"(?:body|condition|calls|to_apply)=%([\w.-]+)")
_WHILE_BODY = re.compile(r"\bwhile\(.*\bbody=%([\w.-]+)")
_COPY = re.compile(r"= (\w+\[[\d,]*\])(?:\{[^}]*\})? copy\(")
_HLO_ELEMENT_TYPES = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64", "uint8": "u8",
                      "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "bfloat16": "bf16",
                      "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}


def loop_body_copies(hlo: str) -> set[str]:
    """The buffer types (``"f32[4096,256]"``) copied inside the bodies of the module's while loops, or in the
    computations those bodies call."""
    return {match for line in _loop_body_lines(hlo, called=True) for match in _COPY.findall(line)}


def loop_body_count(hlo: str, opcode: str) -> int:
    """How many ``opcode`` instructions (``"fusion"``: kernels run per iteration, ``"conditional"``) the
    bodies of the module's while loops hold themselves.

    >>> loop_body_count("%b (p: f32[]) -> f32[] {\\n  %f = f32[] fusion(%p)\\n}\\n"
    ...                 "ENTRY %m (a: f32[]) -> f32[] {\\n  %w = f32[] while(%a), condition=%c, body=%b\\n}", "fusion")
    1
    """
    pattern = re.compile(rf" {re.escape(opcode)}\(")
    return sum(len(pattern.findall(line)) for line in _loop_body_lines(hlo, called=False))


def while_bodies(hlo: str) -> dict[str, list[str]]:
    """The bodies of the module's while loops, by name: the lines of each (not of what it calls).

    >>> list(while_bodies("%b (p: f32[]) -> f32[] {\\n  %f = f32[] fusion(%p)\\n}\\n"
    ...                   "ENTRY %m (a: f32[]) -> f32[] {\\n  %w = f32[] while(%a), condition=%c, body=%b\\n}"))
    ['b']
    """
    computations = _computations(hlo)
    names = {body for lines in computations.values() for line in lines for body in _WHILE_BODY.findall(line)}
    return {name: computations[name] for name in names if name in computations}


def _computations(hlo: str) -> dict[str, list[str]]:
    """Each computation of the module, by name: its lines."""
    computations: dict[str, list[str]] = {}
    current = None
    for line in hlo.splitlines():
        start = _COMPUTATION.match(line)
        if start:
            current = computations.setdefault(start.group(1), [])
        elif current is not None:
            current.append(line)
    return computations


def _loop_body_lines(hlo: str, called: bool) -> list[str]:
    """The lines of the module's while bodies (and, if ``called``, of every computation they call)."""
    computations = _computations(hlo)
    pending = list(while_bodies(hlo))
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen or name not in computations:
            continue
        seen.add(name)
        if called:
            pending += [callee for line in computations[name] for callee in _CALLED.findall(line)]
    return [line for name in seen for line in computations[name]]


def hlo_type(t: TensorType) -> str:
    """How HLO spells a buffer of type ``t``: ``f32[4096,256]``.

    >>> import numpy as np
    >>> hlo_type(TensorType((3, 2), np.dtype("int32")))
    's32[3,2]'
    """
    return f"{_HLO_ELEMENT_TYPES.get(t.dtype.name, t.dtype.name)}[{','.join(map(str, t.shape))}]"


def with_loop_copies(report: InplaceReport, hlo: str) -> InplaceReport:
    """``report`` with each write inside a loop that the graph judged in place marked as copying where XLA's
    optimized module ``hlo`` copies a buffer of its array's type inside a loop body: the graph cannot see
    that."""
    copied = loop_body_copies(hlo)
    return InplaceReport(
        dataclasses.replace(w, in_place=False, reason=f"XLA copies the {hlo_type(w.array_type)} buffer inside the "
                            "loop's body (a copy in its optimized HLO): every iteration rewrites all of it")
        if w.in_place and w.in_loop and w.array_type is not None and hlo_type(w.array_type) in copied else w
        for w in report)
