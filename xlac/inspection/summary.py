"""What one compile did, as a dict (``summary.json``) and as text (``summary.txt``).

Keys of the summary dict (and of ``summary.json``):

- ``function``: the function's name; ``signature``: its argument types and static values, as text;
  ``cause``: why it was compiled ("first call", "new shape: x f32[4] -> f32[8]", ...).
- ``stages``: the stage names in pipeline order: ``"traced"``, then each pass (``"functionalize"``, ...).
- ``op_counts``: per stage, ``{primitive name: number of nodes}``; ``op_totals``: per stage, the node count.
- ``pass_reports``: per stage, what its pass changed (the graph's ``report``, e.g. converts inserted).
- ``inplace_writes``: each in-place write (``x[i] = v``, ``x += y``): ``location`` (``file:line``),
  ``array`` (the array written, ``"x f32[8]"``), ``op`` (the op computing its new value), ``in_place``
  (whether XLA updates the buffer in place), ``reason`` (why not), ``bytes`` (the array's size).
- ``loops``: how each converted Python loop ran: ``location``, ``kind`` ("for"/"while"), ``trips`` (a
  number, or "traced"), ``decision`` ("rolled"/"unrolled") and ``reason``.
- ``timings_s``: seconds per stage (``trace``, each pass, ``lower``, ``xla_compile``) and their ``total``.
- ``cost_analysis``: XLA's estimate (``flops``, ``transcendentals``, ``bytes accessed``, ...).
- ``memory_analysis``: XLA's buffer sizes in bytes (``argument_size_in_bytes``, ``output_size_in_bytes``,
  ``alias_size_in_bytes``, ``temp_size_in_bytes``, ``peak_memory_in_bytes`` where known, ...).
- ``sharding``: for a program split over a mesh of devices, ``mesh`` (its axes), ``devices`` (their ids in
  partition order), and per argument (``arguments``, by name) and per output (``outputs``) its ``spec`` and
  the type of the part each device holds (``per_device``); None for a program on one device.
- ``files``: the files of the dump folder (present in ``summary.json`` only).

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> compiled = xlac.compile(lambda x: xnp.tanh(x) * 2).lower(np.ones(3, np.float32)).compile()
>>> summary = summarize("f", "x:f32[3]", "first call", compiled, {"trace": 0.001, "xla_compile": 0.02})
>>> summary["op_counts"]["traced"]["tanh"], summary["timings_s"]["total"]
(1, 0.021)
>>> print(format_summary(summary).splitlines()[0])
f(x:f32[3])  compiled: first call
"""
from __future__ import annotations

import numpy as np

from xlac.inspection.loops import LoopDecision
from xlac.passes.inplace import format_inplace_table

__all__ = ["SUMMARY_KEYS", "format_summary", "summarize"]

SUMMARY_KEYS = ("function", "signature", "cause", "stages", "op_counts", "op_totals", "pass_reports",
                "inplace_writes", "loops", "timings_s", "cost_analysis", "memory_analysis", "sharding")


def summarize(name: str, signature: str, cause: str, compiled, timings: dict[str, float]) -> dict:
    """The summary dict of one compile (keys documented in this module)."""
    stages = compiled.lowered.traced.stages
    op_counts = {stage: graph.op_counts() for stage, graph in stages}
    return {
        "function": name,
        "signature": signature,
        "cause": cause,
        "stages": [stage for stage, _ in stages],
        "op_counts": op_counts,
        "op_totals": {stage: sum(counts.values()) for stage, counts in op_counts.items()},
        "pass_reports": {stage: jsonable(graph.report) for stage, graph in stages},
        "inplace_writes": [w.as_dict() for w in _safely(compiled.inplace_report, [])],
        "loops": [decision.as_dict() for decision in compiled.lowered.traced.loop_decisions],
        "timings_s": _timings(timings),
        "cost_analysis": jsonable(_safely(compiled.cost_analysis, {})),
        "memory_analysis": jsonable(_safely(compiled.memory_analysis, {})),
        "sharding": sharding_summary(compiled),
    }


def sharding_summary(compiled) -> dict | None:
    """How a compiled program's arguments and outputs are split over its mesh (see the module's keys)."""
    traced = compiled.lowered.traced
    if traced.sharding is None:
        return None
    mesh = traced.sharding.mesh

    def part(sharding, shape, dtype):
        local = sharding.shard_shape(shape)
        return {"spec": repr(tuple(sharding.spec)), "per_device": f"{np.dtype(dtype).name}[{','.join(map(str, local))}]"}
    outputs = traced.ir("final").outputs
    return {"mesh": ", ".join(f"{n}={s}" for n, s in mesh.shape.items()),
            "devices": [getattr(d, "id", d) for d in mesh.device_list],
            "arguments": {path: part(s, shape, dtype) for path, s, (shape, dtype, _)
                          in zip(traced.in_paths, traced.sharding.inputs, traced.in_specs)},
            "outputs": [part(s, v.type.shape, v.type.dtype)
                        for s, v in zip(compiled.executable.output_shardings, outputs)]}


def _safely(get, default):
    """XLA's analyses are not offered by every backend: an analysis that fails is left out, not fatal."""
    try:
        return get()
    except Exception as e:  # noqa: BLE001 - a dump must never fail a compile
        return {"unavailable": f"{type(e).__name__}: {e}"} if isinstance(default, dict) else default


def _timings(timings: dict[str, float]) -> dict[str, float]:
    out = {stage: round(float(seconds), 6) for stage, seconds in timings.items()}
    out["total"] = round(sum(out.values()), 6)
    return out


def jsonable(value):
    """``value`` with NumPy scalars, dtypes, tuples and other objects made into JSON types (others by ``str``)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if np.isfinite(value) else str(value)
    if isinstance(value, np.generic):
        return jsonable(value.item())
    return str(value)


# ---------------------------------------------------------------- text


def format_summary(summary: dict) -> str:
    """``summary.txt``: the same facts as the dict, laid out for a person."""
    lines = [f"{summary['function']}({summary['signature']})  compiled: {summary['cause']}", "", "ops per stage:"]
    lines += _stage_lines(summary)
    lines += _report_lines(summary["pass_reports"])
    lines += _inplace_lines(summary["inplace_writes"])
    lines += _sharding_lines(summary["sharding"])
    if summary["loops"]:
        lines += ["", "loops:"] + [f"  {LoopDecision(**loop)}" for loop in summary["loops"]]
    lines += ["", "time (ms): " + ", ".join(f"{stage} {seconds * 1e3:.1f}"
                                            for stage, seconds in summary["timings_s"].items())]
    lines += ["", "XLA cost: " + _cost_text(summary["cost_analysis"]),
              "XLA memory: " + _memory_text(summary["memory_analysis"])]
    return "\n".join(lines) + "\n"


def _sharding_lines(sharding: dict | None) -> list[str]:
    if sharding is None:
        return []
    lines = ["", f"split over a mesh {sharding['mesh']} (devices {sharding['devices']}):"]
    rows = list(sharding["arguments"].items()) + [(f"output {i}", o) for i, o in enumerate(sharding["outputs"])]
    width = max(len(name) for name, _ in rows)
    return lines + [f"  {name.ljust(width)}  spec {row['spec']}, each device holds {row['per_device']}"
                    for name, row in rows]


def _stage_lines(summary: dict) -> list[str]:
    width = max(map(len, summary["stages"]))
    lines, previous = [], None
    for stage in summary["stages"]:
        counts = summary["op_counts"][stage]
        total = summary["op_totals"][stage]
        if previous is None:
            detail = ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        else:
            detail = _count_change(previous, counts) or "no change"
        lines.append(f"  {stage.ljust(width)}  {total:5d}  {detail}")
        previous = counts
    return lines


def _count_change(before: dict, after: dict) -> str:
    """``+2 convert, -1 store``: how the op counts moved between two stages."""
    changes = []
    for name in sorted(set(before) | set(after)):
        delta = after.get(name, 0) - before.get(name, 0)
        if delta:
            changes.append(f"{delta:+d} {name}")
    return ", ".join(changes)


def _report_lines(reports: dict) -> list[str]:
    filled = {stage: report for stage, report in reports.items() if report}
    if not filled:
        return []
    lines = ["", "what the passes changed:"]
    for stage, report in filled.items():
        lines.append(f"  {stage}: " + ", ".join(f"{key} {_brief(value)}" for key, value in report.items()))
    return lines


def _brief(value) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _inplace_lines(writes: list) -> list[str]:
    if not writes:
        return []
    return ["", "in-place writes:"] + [f"  {row}" for row in format_inplace_table(writes)]


def _cost_text(cost: dict) -> str:
    shown = [(key, cost[key]) for key in ("flops", "transcendentals", "bytes accessed") if key in cost]
    if not shown:
        return ", ".join(f"{k} {v}" for k, v in cost.items()) or "not available"
    return ", ".join(f"{key} {_number(value)}" for key, value in shown)


def _memory_text(memory: dict) -> str:
    if not memory:
        return "not available"
    return ", ".join(f"{key.replace('_size_in_bytes', '').replace('_in_bytes', '')} {_number(value)} B"
                     if isinstance(value, (int, float)) else f"{key} {value}" for key, value in memory.items())


def _number(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
