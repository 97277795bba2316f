"""Per-thread tracing state: the traces being built, the ``xlac.numpy`` function running, the autocast
states in force. The lowest module of the trace layer: ``ops`` reads the current trace from here without
importing the ``Trace`` class (:mod:`xlac.trace.context`), which itself uses ``ops``.

>>> current_trace() is None
True
"""
from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xlac.trace.context import Trace


class _ThreadState(threading.local):
    """Per thread: the traces being built (innermost last), the xlac.numpy function running, the
    autocast states pushed. Attributes set here, so reading them is cheap on the call path."""

    def __init__(self):
        self.stack: list = []
        self.origin = ""
        self.call = 0             # counts the outermost xlac.numpy calls: nodes of one call share a number
        self.autocast: list = []
        self.inherited = None     # a Provenance every node bound now takes (a rule rewriting a node)


_state = _ThreadState()
# How many autocast scopes are open, in all threads: while none is, every thread's state is None, which the
# cached call path (``autocast_state`` on every call) then reads without reaching the thread's state.
_open_autocast_scopes = 0
_autocast_scopes_lock = threading.Lock()


# How many traces are being built, in all threads: while none is, no thread is tracing, which the cached call
# path (``tracing_here`` on every call) then reads without reaching the thread's state.
_open_traces = 0
_open_traces_lock = threading.Lock()


def push_trace(trace: "Trace") -> "Trace | None":
    """Make ``trace`` this thread's innermost trace; the one it runs inside (or None)."""
    global _open_traces
    stack = _state.stack
    parent = stack[-1] if stack else None
    with _open_traces_lock:
        _open_traces += 1
    stack.append(trace)
    return parent


def pop_trace() -> None:
    """End this thread's innermost trace."""
    global _open_traces
    _state.stack.pop()
    with _open_traces_lock:
        _open_traces -= 1


def tracing_here() -> bool:
    """Whether this thread is building a trace (a compiled function called now is inlined into it).

    >>> tracing_here()
    False
    """
    return bool(_open_traces) and bool(_state.stack)


def current_trace() -> "Trace | None":
    """The innermost active trace of this thread, or None."""
    stack = _state.stack
    return stack[-1] if stack else None


class origin:
    """``with origin(name):`` tags the nodes bound inside with the ``xlac.numpy`` function that is running
    (outermost wins). A class rather than a generator: every xlac.numpy call enters one."""

    __slots__ = ("name", "outer")

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        self.outer = _state.origin
        if not self.outer:
            _state.origin = self.name
            _state.call += 1

    def __exit__(self, *exc_info) -> None:
        _state.origin = self.outer


@contextlib.contextmanager
def provenance_of(provenance):
    """Give every node bound inside ``provenance`` (a rule emitting what one node of another graph
    computes: its batching, JVP or VJP rule), instead of the caller's line, origin and autocast state."""
    outer = _state.inherited
    _state.inherited = provenance
    try:
        yield
    finally:
        _state.inherited = outer


def autocast_state():
    """The autocast state in force on this thread (pushed by ``xlac.autocast``), or None."""
    if not _open_autocast_scopes:
        return None
    stack = _state.autocast
    return stack[-1] if stack else None


@contextlib.contextmanager
def autocast_scope(state):
    """Make ``state`` (a hashable autocast state, or None for off) the one in force inside."""
    global _open_autocast_scopes
    stack = _state.autocast
    with _autocast_scopes_lock:
        _open_autocast_scopes += 1
    stack.append(state)
    try:
        yield
    finally:
        stack.pop()
        with _autocast_scopes_lock:
            _open_autocast_scopes -= 1
