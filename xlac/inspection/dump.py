"""The dump folder of one compile: every stage of the IR, the StableHLO, XLA's HLO before and after
optimization, and the summary.

``DIR/<function>-<signature hash>/`` holds, in pipeline order:

- ``00-traced.xir``, ``01-<pass>.xir``, ...: the IR as traced and after each pass (first line: the
  pass's report);
- ``module.stablehlo.mlir``: the StableHLO module compiled (what ``Lowered.as_text()`` gives);
- ``module.hlo.txt``: XLA's HLO before its optimizations; ``module.optimized.hlo.txt``: after them;
- ``summary.txt`` and ``summary.json`` (keys documented in :mod:`xlac.inspection.summary`).

>>> import json, os, tempfile, numpy as np, xlac
>>> from xlac.inspection.summary import summarize
>>> compiled = xlac.compile(lambda x: x + 1).lower(np.ones(2, np.float32)).compile()
>>> summary = summarize("f", "x:f32[2]", "first call", compiled, {})
>>> folder = write_dump(tempfile.mkdtemp(), "f", "x:f32[2]", compiled, summary)
>>> sorted(os.listdir(folder))[:2], json.load(open(os.path.join(folder, "summary.json")))["function"]
(['00-traced.xir', '01-functionalize.xir'], 'f')
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import warnings

from xlac import runtime
from xlac.inspection.summary import format_summary

__all__ = ["dump_files", "dump_folder_name", "write_dump"]


def dump_folder_name(name: str, signature: str) -> str:
    """``<function name>-<8 hex digits of the signature's hash>``, with only file-name-safe characters.

    >>> dump_folder_name("<lambda>", "x:f32[2]")
    'lambda-8a8d402c'
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "function"
    return f"{safe}-{hashlib.sha1(signature.encode()).hexdigest()[:8]}"


def _stage_text(stage: str, graph) -> str:
    header = f"# {stage}" + (f": {json.dumps(graph.report, default=str)}" if graph.report else "")
    return f"{header}\n{graph}\n"


def _unoptimized_hlo(stablehlo: str) -> str:
    try:
        return runtime.stablehlo_to_hlo(stablehlo)
    except Exception as e:  # noqa: BLE001 - jaxlib's converter may refuse what PJRT compiles
        return f"// XLA's HLO before optimization is not available: {type(e).__name__}: {e}\n"


def dump_files(compiled, summary: dict) -> dict[str, str]:
    """File name -> content of a dump folder, in pipeline order."""

    stages = compiled.lowered.traced.stages
    files = {f"{i:02d}-{stage}.xir": _stage_text(stage, graph) for i, (stage, graph) in enumerate(stages)}
    stablehlo = compiled.lowered.as_text()
    files["module.stablehlo.mlir"] = stablehlo
    files["module.hlo.txt"] = _unoptimized_hlo(stablehlo)
    files["module.optimized.hlo.txt"] = compiled.as_text()
    files["summary.txt"] = format_summary(summary)
    files["summary.json"] = json.dumps({**summary, "files": list(files) + ["summary.json"]}, indent=2) + "\n"
    return files


def write_dump(root: str, name: str, signature: str, compiled, summary: dict) -> str | None:
    """Write the dump folder of one compile under ``root``; its path, or None (with a warning) if it
    cannot be written."""
    folder = os.path.join(os.fspath(root), dump_folder_name(name, signature))
    try:
        files = dump_files(compiled, summary)
        os.makedirs(folder, exist_ok=True)
        for file_name, text in files.items():
            with open(os.path.join(folder, file_name), "w", encoding="utf-8") as f:
                f.write(text)
    except OSError as e:
        warnings.warn(f"xlac: could not write the compile dump of {name} to {folder}: {e}", stacklevel=3)
        return None
    return folder
