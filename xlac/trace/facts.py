"""What tracing knows of a traced integer scalar's value beyond its type, for the bounds checks and for slices:

- the range it lies in (a rolled loop's own index): ``x[i + 1]`` needs no bounds check where that range fits
  the axis, and ``x[i:i + 3]`` is a window proven inside it;
- which value plus which Python int it is: ``a[k + 1:]`` and ``b[k + 1:]`` hold the same positions, and
  ``x[k:k + 3]`` is a window of 3; an element read ``o[i]`` is the value of any other read of ``o`` at an
  index of the same form with no write in between, so ``a[o[i]:o[i + 1]]`` and ``b[o[i]:o[i + 1]]`` hold the
  same positions too.

Each trace keeps them for its own values (``Trace.scalar_facts``, by value id); writing into a value in place
forgets them. Read them with :func:`known_range` and :func:`offset_form` only.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> from xlac.trace import ops
>>> from xlac.trace.context import Trace
>>> with Trace() as t:
...     i = t.add_input(TensorType((), np.dtype("int64")))
...     set_known_range(i, (0, 9))
...     j = ops.add(i, ops.constant(1, np.dtype("int64")))
...     set_offset_form(j, offset_form(i)[0], 1)
>>> known_range(i), known_range(j), offset_form(j) == (i.value.id, 1)
((0, 9), None, True)
"""
from __future__ import annotations

from dataclasses import dataclass

from xlac.trace.tracer import Tracer


@dataclass(slots=True)
class ScalarFacts:
    """The facts of one value: ``known_range`` (lowest, highest) or None; ``offset_of`` (what identifies a
    value v, a Python int n) where the value is v + n, or None."""

    known_range: tuple[int, int] | None = None
    offset_of: tuple | None = None


def _facts(x: Tracer) -> ScalarFacts | None:
    return x._trace.scalar_facts.get(x.value.id)


def known_range(x) -> tuple[int, int] | None:
    """(lowest, highest): the values the traced scalar ``x`` is known to lie between, or None (also for
    anything that is not a traced value)."""
    facts = _facts(x) if isinstance(x, Tracer) else None
    return facts.known_range if facts is not None else None


def offset_form(x: Tracer) -> tuple:
    """(what identifies a value v, a Python int n): ``x`` is v + n, as far as tracing knows (else itself + 0).
    Two scalars of one form hold the same value."""
    facts = _facts(x)
    return facts.offset_of if facts is not None and facts.offset_of is not None else (x.value.id, 0)


def _own_facts(x: Tracer) -> ScalarFacts:
    return x._trace.scalar_facts.setdefault(x.value.id, ScalarFacts())


def set_known_range(x: Tracer, known: tuple[int, int] | None) -> None:
    """Note that ``x`` lies between ``known``'s lowest and highest (both included); None: nothing is known."""
    _own_facts(x).known_range = known


def set_offset_form(x: Tracer, of, n: int) -> None:
    """Note that ``x`` is the value identified by ``of`` (an :func:`offset_form`'s first item) plus ``n``."""
    _own_facts(x).offset_of = (of, n)


def note_element_read(element: Tracer, array: Tracer, index: tuple) -> None:
    """Note that ``element`` is ``array[index]`` read now (``index``: one integer per axis, Python ints or
    traced scalars): it is the value of every read of ``array`` at an index of the same form made before
    the trace reading it writes into any array (``Trace.stores`` counts those writes; an array of an
    enclosing trace is written, while this one runs, only through it).

    >>> import numpy as np
    >>> from xlac.ir.types import TensorType
    >>> from xlac.trace import ops
    >>> from xlac.trace.context import Trace
    >>> with Trace() as t:
    ...     o, i = t.add_input(TensorType((5,), np.dtype("int64"))), t.add_input(TensorType((), np.dtype("int64")))
    ...     first, again = (ops.reshape(ops.dynamic_slice(o, [i], (1,)), ()) for _ in range(2))
    ...     note_element_read(first, o, (i,)); note_element_read(again, o, (i,))
    >>> offset_form(first) == offset_form(again)
    True
    """
    forms = tuple(offset_form(k) if isinstance(k, Tracer) else ("int", int(k)) for k in index)
    set_offset_form(element, ("element", array.value.id, forms, element._trace.stores), 0)

