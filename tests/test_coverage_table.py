"""The generated NumPy coverage table in docs/ agrees with xlac.numpy, and every implemented function is tested."""
from __future__ import annotations

import pathlib
import re

from xlac.coverage import coverage_markdown, coverage_rows

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "numpy-coverage.md"


def _documented() -> dict[tuple[str, str], str]:
    """(namespace, name) -> status, read from the committed table."""
    found, namespace = {}, None
    for line in TABLE.read_text().splitlines():
        heading = re.match(r"## `(numpy[\w.]*)`", line)
        if heading:
            namespace = heading.group(1)
            continue
        row = re.match(r"\| `(\w+)` \| (implemented|out of scope|missing) \|", line)
        if row and namespace:
            found[(namespace, row.group(1))] = row.group(2)
    return found


def test_committed_table_matches_the_code():
    documented = _documented()
    assert len(documented) > 300
    stale = [(key, documented[key], row.status) for row in coverage_rows()
             if (key := (row.namespace, row.name)) in documented and documented[key] != row.status]
    assert not stale, ("docs/numpy-coverage.md is out of date; regenerate it with "
                       f"`python -m xlac.coverage docs/numpy-coverage.md`: {stale[:10]}")


def test_no_numpy_function_is_left_unaccounted():
    missing = [f"{r.namespace}.{r.name}" for r in coverage_rows() if r.status == "missing"]
    assert not missing, f"NumPy functions neither implemented nor listed as out of scope: {missing}"


def test_every_implemented_function_appears_in_a_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    untested = [f"{r.namespace}.{r.name}" for r in coverage_rows()
                if r.status == "implemented" and not re.search(rf"\b{re.escape(r.name)}\b", tests)]
    assert not untested, f"implemented but named in no test: {untested}"


def test_table_renders_deviations_from_docstrings():
    text = coverage_markdown()
    assert "| `allclose` | implemented | inside a compiled function" in text
    assert "## `xlac.random`" in text
