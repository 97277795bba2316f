"""A readable per-pass diff of the IR: the ops each pass added, removed or changed, one op per line with
the user's source line.

``-`` an op the pass removed, ``+`` one it added, ``~`` one it kept but changed (its result type, e.g. moved
to bf16, or the values it reads, e.g. the new value of an array written in place), with what it was.

>>> import numpy as np, xlac
>>> def f(x):
...     x[0] = 1.0
...     return x * 2
>>> traced = xlac.compile(f).trace(np.zeros(3, np.float32))
>>> print(diff_graphs(traced.ir("traced"), traced.ir("functionalize")))  # doctest: +ELLIPSIS
  - store a f                          # <doctest ...>:2
  ~ i:f32[3] = mul f h  (was mul a h)  # <doctest ...>:3 multiply
"""
from __future__ import annotations

import difflib

from xlac.ir.graph import Graph, Node
from xlac.passes.inplace import format_inplace_table
from xlac.ir.printer import Namer, format_location, format_node

__all__ = ["diff_graphs", "explain"]

MAX_LINES_PER_PASS = 400


def _name_all(graph: Graph, name: Namer) -> None:
    for v in graph.inputs:
        name(v)
    for node in graph.nodes:
        for v in node.results:
            name(v)


def _match(before: list[Node], after: list[Node]) -> dict[int, int]:
    """after index -> before index for the ops a pass kept: the same result value (or the same store),
    else, among the rest, the same primitive from the same line in the same order."""
    by_result = {n.results[0].id: i for i, n in enumerate(before) if n.results}
    by_effect = {(n.primitive.name, tuple(v.id for v in n.operands)): i for i, n in enumerate(before) if not n.results}
    matched: dict[int, int] = {}
    for j, node in enumerate(after):
        i = (by_result.get(node.results[0].id) if node.results
             else by_effect.get((node.primitive.name, tuple(v.id for v in node.operands))))
        if i is not None:
            matched[j] = i
    taken = set(matched.values())
    rest_before = [i for i in range(len(before)) if i not in taken]
    rest_after = [j for j in range(len(after)) if j not in matched]

    def key(node: Node):
        return node.primitive.name, str(node.location), node.origin

    matcher = difflib.SequenceMatcher(None, [key(before[i]) for i in rest_before],
                                      [key(after[j]) for j in rest_after], autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            matched[rest_after[block.b + k]] = rest_before[block.a + k]
    return matched


def _line(mark: str, text: str, node: Node, width: int, note: str = "") -> str:
    where = format_location(node)
    body = f"{text}  {note}" if note else text
    return f"  {mark} {body.ljust(width)}  # {where}" if where else f"  {mark} {body}"


def _change_note(old: Node, new: Node, name: Namer) -> str:
    """What changed in a kept op, or "" if nothing a reader cares about did."""
    old_types = [str(v.type) for v in old.results]
    new_types = [str(v.type) for v in new.results]
    if old_types != new_types:
        return f"(was {', '.join(old_types)})"
    if old.attrs.keys() != new.attrs.keys():
        return f"(was {format_node(old, name).split(' = ', 1)[-1]})"
    old_reads = [name(v) for v in old.operands]
    if old_reads != [name(v) for v in new.operands]:
        return f"(was {old.primitive.name} {' '.join(old_reads)})"
    return ""


def diff_graphs(before: Graph, after: Graph, name: Namer | None = None) -> str:
    """The ops that differ between two stages, in the order of ``after`` (removed ops where they were)."""
    name = name or Namer()
    _name_all(before, name)
    _name_all(after, name)
    matched = _match(before.nodes, after.nodes)
    kept_before = set(matched.values())
    # A removed op is printed after the kept op that preceded it in ``before``.
    position_after = {i: j for j, i in matched.items()}
    removed_at: dict[int, list[Node]] = {}
    anchor = -1
    for i, node in enumerate(before.nodes):
        if i in kept_before:
            anchor = position_after[i]
        else:
            removed_at.setdefault(anchor, []).append(node)
    entries = [("-", format_node(n, name), n, "") for n in removed_at.get(-1, [])]
    for j, node in enumerate(after.nodes):
        if j not in matched:
            entries.append(("+", format_node(node, name), node, ""))
        else:
            note = _change_note(before.nodes[matched[j]], node, name)
            if note:
                entries.append(("~", format_node(node, name), node, note))
        entries += [("-", format_node(n, name), n, "") for n in removed_at.get(j, [])]
    width = max((len(text) + (len(note) + 2 if note else 0) for _, text, _, note in entries), default=0)
    lines = [_line(mark, text, node, width, note) for mark, text, node, note in entries]
    if len(lines) > MAX_LINES_PER_PASS:
        lines = lines[:MAX_LINES_PER_PASS] + [f"  ... {len(lines) - MAX_LINES_PER_PASS} more changed ops"]
    return "\n".join(lines)


def _writes_lines(graph: Graph, name: Namer) -> list[str]:
    """Each in-place write and the pure op that now computes the array's new value."""
    defined_by = {v.id: n for n in graph.nodes for v in n.results}
    lines = []
    for location, old, new in graph.writes:
        op = defined_by.get(new.id)
        how = f"{op.primitive.name} gives {name(new)}" if op is not None else f"now {name(new)}"
        lines.append(f"  write at {location or '?'}: {name(old)} -> {how}")
    return lines


def explain(stages: list[tuple[str, Graph]], inplace_writes=None, loop_decisions=()) -> str:
    """Per pass, what it changed: op count, its report, and the diff of the IR against the stage before.
    ``inplace_writes``: the in-place report (``Compiled.inplace_report()``), printed at the end;
    ``loop_decisions``: how each converted Python loop ran (``Traced.loop_decisions``), printed first."""
    name = Namer()
    first_stage, first = stages[0]
    lines = (["loops:"] + [f"  {decision}" for decision in loop_decisions] + [""] if loop_decisions else []) + \
        [f"{first_stage}: {len(first.nodes)} ops"]
    for (_, before), (stage, after) in zip(stages, stages[1:]):
        header = f"{stage}: {len(before.nodes)} -> {len(after.nodes)} ops"
        if after.report:
            header += "  (" + ", ".join(f"{k}: {v}" for k, v in after.report.items()) + ")"
        lines += ["", header]
        diff = diff_graphs(before, after, name)
        lines.append(diff if diff else "  no change")
        if after.writes and not before.writes:
            lines += _writes_lines(after, name)
    if inplace_writes:
        lines += ["", "in-place writes:"] + [f"  {row}" for row in format_inplace_table(
            [w.as_dict() for w in inplace_writes])]
    return "\n".join(lines)
