"""After-call checks: conditions a compiled program verifies on traced values and reports after the call.

XLA cannot raise, so a program that indexes with a traced value computes, next to its results, one more
int64[2] output: a status (0: every check held; k: the k-th check failed first) and a payload (the
offending value).
After the call xlac reads the status and raises the check's error, ``IndexError`` for an index, with
NumPy's words and the user's line, as JAX's ``checkify`` does. Writes that come after a failed check in
program order are not made, so the arrays a call writes to are left as NumPy leaves them when it raises.

A trace collects checks in its :class:`Checks`. A transform (``grad``, ``vmap``, ...) traces its function
into a graph of its own; that graph's checks become its last output, which the transform hands to the
enclosing trace's :class:`Checks` (:func:`xlac.function_graph.adopt_checks`), as do loops and conditionals
(:mod:`xlac.control_flow`).

xlac evaluates some code that Python evaluates only under a condition: the right side of ``a and b`` for a
traced ``a``, both branches of a short conditional computed and selected. That code runs under a guard
(:meth:`Checks.evaluated_when`): its checks fail only where the guard holds, and an error it raises while
traced (a constant index out of bounds) is raised after the call where the guard holds (:meth:`Checks.fail`).

>>> import numpy as np, xlac
>>> f = xlac.compile(lambda x, i: x[i])
>>> f(np.arange(3.0), 10)
Traceback (most recent call last):
IndexError: index 10 is out of bounds for axis 0 with size 3
  at <doctest ...>:1 (in <lambda>)
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlac.errors import located, raised_at, user_location
from xlac.ir.dtypes import INDEX as INDEX_DTYPE
from xlac.ir.graph import SourceLocation
from xlac.trace import ops
from xlac.trace.state import current_trace



@dataclass(frozen=True)
class Check:
    """What one check says when it fails: the error type and a message with a ``{value}`` field for the
    payload (the offending index), and the user's line (None: the message names it)."""

    error: type
    message: str
    location: SourceLocation | None

    def exception(self, value: int) -> Exception:
        message = self.message.format(value=value)
        return self.error(located(message, self.location) if self.location is not None else message)


# Errors that code raises while it is traced and that Python raises only where it evaluates that code: raised
# after the call where Python would have evaluated it (see Checks.fail), as a traced index out of bounds is.
_DEFERRABLE_ERRORS = (LookupError, ArithmeticError, AssertionError)
_INTERNAL_ERROR = "xlac internal error"


@dataclass(frozen=True)
class RaisedBy:
    """A check whose error is the one a Python function raises on the offending float64, which the payload
    holds as its bits: ``math.sqrt`` of a negative number fails as it does in Python, message included."""

    function: Callable[[float], object]
    location: SourceLocation | None

    def exception(self, value: int) -> Exception:
        offending = float(np.array(value, INDEX_DTYPE).view(np.float64))
        try:
            result = self.function(offending)
        except Exception as error:        # noqa: BLE001 (Python's own error, whichever it is, is the point)
            return type(error)(located(str(error), self.location))
        name = getattr(self.function, "__name__", repr(self.function))
        return FloatingPointError(located(f"{name}({offending!r}) is {result!r} in Python, but "
                                          "not a finite number in the compiled program", self.location))


class Checks:
    """The checks of one trace: sources of (int64 code, int64 payload, the checks a code numbers from 1)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.sources: list[tuple] = []
        # bool Tracer: where writes traced now are made: every check so far held, and Python evaluates the
        # code traced now (None: always)
        self.ok = None
        self.guard = None       # bool Tracer: where Python would evaluate the code traced now (None: always)
        self._guarded: set[int] = set()   # ids of values whose writes already take ``ok`` into account

    @contextmanager
    def evaluated_when(self, condition):
        """Trace code that Python evaluates only where ``condition`` (a 0-d bool Tracer) holds but xlac
        evaluates always (the right side of ``a and b``, both branches of a selected ``if``): the checks it
        records fail, and the writes it makes are made, only where ``condition`` holds too. Nested guards
        are conjoined.

        >>> import numpy as np, xlac, xlac.numpy as xnp
        >>> from xlac.trace.state import current_trace
        >>> def first_or_zero(x, i):
        ...     inside = i < x.shape[0]
        ...     with current_trace().checks.evaluated_when(inside):
        ...         item = x[i]
        ...     return xnp.where(inside, item, 0.0)
        >>> float(xlac.compile(first_or_zero)(np.arange(3.0), 7))
        0.0
        """
        outer_guard, outer_ok, n_sources = self.guard, self.ok, len(self.sources)
        self.guard = condition if outer_guard is None else ops.and_(outer_guard, condition)
        self.ok = condition if outer_ok is None else ops.and_(outer_ok, condition)
        try:
            yield
        finally:
            self.guard = outer_guard
            if len(self.sources) == n_sources:
                self.ok = outer_ok
            else:               # the checks recorded here hold where ``condition`` does not
                held_here = ops.or_(self.ok, ops.not_(condition))
                self.ok = held_here if outer_ok is None else ops.and_(outer_ok, held_here)

    def guard_write(self, old, new):
        """The value a write of ``new`` over ``old`` leaves: ``old`` where a check before it failed (NumPy
        would have raised before writing) or where Python would not evaluate the write (see
        :meth:`evaluated_when`). Index updates guard their own region (:meth:`guarded`)."""
        if self.ok is None or new.value.id in self._guarded:
            return new
        return ops.select(self.ok, new, old)

    def guarded(self, value):
        """Note that ``value`` (an index update's result) already leaves its array unchanged where a check
        before it failed; returns it."""
        if self.ok is not None:
            self._guarded.add(value.value.id)
        return value

    def require(self, holds, payload, check: Check) -> None:
        """Check that ``holds`` (a 0-d bool Tracer) is true; else fail with ``check`` and ``payload``."""
        code = ops.select(holds, ops.constant(0, INDEX_DTYPE), ops.constant(1, INDEX_DTYPE))
        self.adopt(code, ops.convert(payload, INDEX_DTYPE), [check])

    def defers(self, error: BaseException) -> bool:
        """Whether ``error``, raised while tracing code that Python may not evaluate, is raised after the
        call instead (see :meth:`fail`): an error of evaluation (an index out of bounds, a division by zero,
        an assert) while checks are on, and not xlac's own."""
        return self.enabled and isinstance(error, _DEFERRABLE_ERRORS) and not str(error).startswith(_INTERNAL_ERROR)

    def fail(self, error: Exception) -> None:
        """Note that the code traced now raised ``error`` while tracing (a constant index out of bounds in
        code that Python evaluates only where a traced condition holds): the call raises it afterwards,
        wherever the current guard holds (see :meth:`evaluated_when`)."""
        message = str(error).replace("{", "{{").replace("}", "}}")
        self.require(ops.constant(False, np.dtype(bool)), ops.constant(0, INDEX_DTYPE),
                     Check(type(error), message, raised_at(error)))

    def adopt(self, code, payload, checks: list[Check]) -> None:
        """Take over the checks of another graph: ``code`` 0, or k for ``checks[k - 1]`` (0 outside the
        current guard, see :meth:`evaluated_when`)."""
        if self.guard is not None:
            code = ops.select(self.guard, code, ops.constant(0, INDEX_DTYPE))
        self.sources.append((code, payload, list(checks)))
        held = ops.compare(code, ops.constant(0, INDEX_DTYPE), "EQ")
        self.ok = held if self.ok is None else ops.and_(self.ok, held)

    def adopt_status(self, status, checks: list[Check]) -> None:
        """Take over the checks of another graph from its int64[2] status output (see :meth:`output`)."""
        code = ops.reshape(ops.slice(status, (0,), (1,), (1,)), ())
        payload = ops.reshape(ops.slice(status, (1,), (2,), (1,)), ())
        self.adopt(code, payload, checks)

    def all_checks(self) -> list[Check]:
        """Every check, numbered from 1 in the order of the status codes."""
        return [check for _, _, checks in self.sources for check in checks]

    def output(self):
        """One int64[2] Tracer: the first failing check's number from 1 (0 if none), and its payload (one
        output, so that reading it after the call is one transfer)."""
        status, payload = ops.constant(0, INDEX_DTYPE), ops.constant(0, INDEX_DTYPE)
        offset = sum(len(checks) for _, _, checks in self.sources)
        for code, value, checks in reversed(self.sources):
            offset -= len(checks)
            failed = ops.compare(code, ops.constant(0, INDEX_DTYPE), "NE")
            status = ops.select(failed, ops.add(code, ops.constant(offset, INDEX_DTYPE)), status)
            payload = ops.select(failed, value, payload)
        return ops.concatenate([ops.reshape(status, (1,)), ops.reshape(payload, (1,))], 0)


def raise_if_failed(status: int, payload: int, checks: list[Check]) -> None:
    """After a call: raise the error of check number ``status`` (from 1), if any."""
    if status:
        raise checks[status - 1].exception(payload)


def require_index_in_bounds(index, size: int, axis: int) -> None:
    """Check in the current trace that every element of ``index`` (an integer Tracer, before negative
    indices are wrapped) lies in ``[-size, size)``, NumPy's rule; the payload is the first one that does not."""
    checks = current_trace().checks
    if not checks.enabled:
        return
    wide = ops.convert(index, INDEX_DTYPE)
    if index.dtype == np.dtype("uint64"):      # values past int64 wrap negative; catch them as out of range
        wide = ops.select(ops.compare(index, ops.full_like(index, 2 ** 63), "GE"),
                          ops.full_like(wide, -(2 ** 62)), wide)
    lowest = ops.full_like(wide, -size)
    limit = ops.full_like(wide, size)
    inside = ops.and_(ops.compare(wide, lowest, "GE"), ops.compare(wide, limit, "LT"))
    if wide.ndim:
        flat_inside = ops.reshape(inside, (inside.size,))
        first_bad = ops.argmax(ops.convert(ops.not_(flat_inside), np.int32), 0, INDEX_DTYPE)
        payload = ops.reshape(ops.dynamic_slice(ops.reshape(wide, (wide.size,)), [first_bad], [1]), ())
        inside = ops.reduce(inside, "and", tuple(range(inside.ndim)))
    else:
        payload = wide
    message = f"index {{value}} is out of bounds for axis {axis} with size {size}"
    checks.require(inside, payload, Check(IndexError, message, user_location(2)))


def require_python_accepts(function, value, fails) -> None:
    """Check in the current trace that ``fails`` (a 0-d bool Tracer) is false; else raise after the call what
    Python's ``function`` raises on ``value`` (a float64 Tracer)."""
    checks = current_trace().checks
    if checks.enabled:
        checks.require(ops.not_(fails), ops.bitcast_convert(value, INDEX_DTYPE), RaisedBy(function, user_location(2)))


def require_true(holds, error: type, message: str) -> None:
    """Check in the current trace that ``holds`` (a 0-d bool Tracer) is true; else the call raises
    ``error(message)`` afterwards, with the user's line (unless the trace's checks are off)."""
    checks = current_trace().checks
    if checks.enabled:
        literal = message.replace("{", "{{").replace("}", "}}")
        checks.require(holds, ops.constant(0, INDEX_DTYPE), Check(error, literal, user_location(2)))
