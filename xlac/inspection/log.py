"""The compile log: one line per compile on the ``"xlac"`` logger at WARNING level, like ``jax_log_compiles``.

>>> print(format_compile_line("f", "x:f32[8]", "new shape: x f32[4] -> f32[8]",
...                           {"trace": 0.0012, "simplify": 0.0001, "xla_compile": 0.031}))
xlac: compiled f(x:f32[8]) because new shape: x f32[4] -> f32[8] in 32.3 ms (trace 1.2, simplify 0.1, xla_compile 31.0)
"""
from __future__ import annotations

import logging

__all__ = ["format_compile_line", "log_compile", "logger"]

logger = logging.getLogger("xlac")


def format_compile_line(name: str, signature: str, cause: str, timings: dict[str, float]) -> str:
    """``xlac: compiled NAME(SIGNATURE) because CAUSE in TOTAL ms (STAGE MS, ...)``."""
    total = sum(timings.values()) * 1e3
    stages = ", ".join(f"{stage} {seconds * 1e3:.1f}" for stage, seconds in timings.items())
    return f"xlac: compiled {name}({signature}) because {cause} in {total:.1f} ms ({stages})"


def log_compile(name: str, signature: str, cause: str, timings: dict[str, float]) -> None:
    """Log one compile as a WARNING on the ``"xlac"`` logger (shown without any logging setup)."""
    logger.warning(format_compile_line(name, signature, cause, timings))
