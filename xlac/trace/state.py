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
        self.autocast: list = []


_state = _ThreadState()


def current_trace() -> "Trace | None":
    """The innermost active trace of this thread, or None."""
    stack = _state.stack
    return stack[-1] if stack else None


@contextlib.contextmanager
def origin(name: str):
    """Tag the nodes bound inside with the ``xlac.numpy`` function that is running (outermost wins)."""
    outer = _state.origin
    if not outer:
        _state.origin = name
    try:
        yield
    finally:
        _state.origin = outer


def autocast_state():
    """The autocast state in force on this thread (pushed by ``xlac.autocast``), or None."""
    stack = _state.autocast
    return stack[-1] if stack else None


@contextlib.contextmanager
def autocast_scope(state):
    """Make ``state`` (a hashable autocast state, or None for off) the one in force inside."""
    stack = _state.autocast
    stack.append(state)
    try:
        yield
    finally:
        stack.pop()
