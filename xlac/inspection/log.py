"""The compile log: one line per compile on the ``"xlac"`` logger at WARNING level, like ``jax_log_compiles``;
and the notice on stderr of a compile that takes long.

>>> print(format_compile_line("f", "x:f32[8]", "new shape: x f32[4] -> f32[8]",
...                           {"trace": 0.0012, "simplify": 0.0001, "xla_compile": 0.031}))
xlac: compiled f(x:f32[8]) because new shape: x f32[4] -> f32[8] in 32.3 ms (trace 1.2, simplify 0.1, xla_compile 31.0)
"""
from __future__ import annotations

import logging
import sys
import threading
import time

__all__ = ["CompileNotice", "format_compile_line", "log_compile", "logger"]

logger = logging.getLogger("xlac")


def format_compile_line(name: str, signature: str, cause: str, timings: dict[str, float]) -> str:
    """``xlac: compiled NAME(SIGNATURE) because CAUSE in TOTAL ms (STAGE MS, ...)``."""
    total = sum(timings.values()) * 1e3
    stages = ", ".join(f"{stage} {seconds * 1e3:.1f}" for stage, seconds in timings.items())
    return f"xlac: compiled {name}({signature}) because {cause} in {total:.1f} ms ({stages})"


def log_compile(name: str, signature: str, cause: str, timings: dict[str, float]) -> None:
    """Log one compile as a WARNING on the ``"xlac"`` logger (shown without any logging setup)."""
    logger.warning(format_compile_line(name, signature, cause, timings))


class CompileNotice:
    """Within ``with CompileNotice(name):``, a compile still running after ``after`` seconds prints
    ``xlac: compiling NAME (1,234 ops) ...`` on stderr, and ``xlac: compiled NAME (1,234 ops) in 3.2 s``
    when it ends; a shorter one prints nothing. ``ops``, once known, is the number of operations.

    Whether a compile will take long is not known at its start, so a timer prints the first line when
    ``after`` seconds have passed (a daemon thread, cancelled when the compile ends first); a lock keeps
    the two lines in order, and nothing is printed after the end.

    >>> with CompileNotice("block", after=2.0) as notice:
    ...     notice.ops = 1234            # a compile of 1,234 ops, done well within 2 s: no line
    """

    def __init__(self, name: str, after: float = 2.0, enabled: bool = True):
        self.name, self.after, self.enabled = name, after, enabled
        self.ops: int | None = None
        self._lock = threading.Lock()
        self._announced = self._finished = False
        self._timer = None

    def __enter__(self) -> "CompileNotice":
        self._start = time.perf_counter()
        if self.enabled:
            self._timer = threading.Timer(self.after, self._announce)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._finished = True
            if self._announced:
                seconds = time.perf_counter() - self._start
                outcome = f"compiled {self._what()} in" if error is None else f"compiling {self._what()} failed after"
                _print_notice(f"xlac: {outcome} {seconds:.1f} s")
        return False

    def _what(self) -> str:
        return self.name if self.ops is None else f"{self.name} ({self.ops:,} ops)"

    def _announce(self) -> None:
        with self._lock:
            if not self._finished:
                self._announced = True
                _print_notice(f"xlac: compiling {self._what()} ...")


def _print_notice(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
