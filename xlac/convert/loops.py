"""Converted Python loops. A ``while`` whose test is traced and a ``for`` over ``range(...)`` with a
traced bound run as one XLA loop (``xlac.while_loop``) whose carries are the loop's variables, matched by
name: arrays and Python numbers are carried (a Python number
the body turns into an array takes its dtype, as a weak value); any other value (``None``, a string, an
object) must come out of the body as it went in. A variable first bound inside the loop is local to each
iteration, and reading it after the loop is refused (with a traced trip count, Python's "the value of the
last iteration, if there was one" has no single answer).

A ``for`` whose trip count is known when tracing (over a ``range``, a traced array's rows, ``enumerate``
or ``zip`` of traced arrays) rolls when its trip count times its body's ops is large enough (see
``xlac.compile``'s ``loops``), as a ``fori_loop`` (or a ``while_loop`` when it may break), else it stays a
Python loop, as before conversion: its body is traced once per iteration. A loop that would roll and whose
iterations are shown independent runs at once instead, batched (see :mod:`xlac.convert.vectorized_loops`).
A ``while`` whose test is concrete stays a Python loop; one whose test becomes traced after some iterations
rolls from there. A loop's
break flag (see :mod:`xlac.convert.exits`) is part of its test; once traced in a Python loop, each
later iteration runs under it as a conditional. Each decision is noted on the trace
(``Traced.loop_decisions``).

>>> import numpy as np, xlac
>>> @xlac.compile
... def halvings(x):
...     n = 0
...     while x > 1.0:
...         x = x / 2
...         n += 1
...     return n
>>> int(halvings(40.0)), int(halvings(0.5))
(6, 0)
"""
from __future__ import annotations

import dataclasses
import os
import warnings
import weakref
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

import xlac.numpy as xnp
from xlac.control_flow import fori_loop, while_loop
from xlac.convert.branches import UNDEFINED, Variables, is_array_like, same_value, traced_if, variables_from_leaves
from xlac.convert.vectorized_loops import NotVectorized, VectorizedNotes, vectorized_fori
from xlac.config import config
from xlac.errors import UnsupportedError, located, user_location
from xlac.inspection.loops import LoopDecision
from xlac.trace import pytree
from xlac.trace.facts import known_range, set_known_range
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


@dataclass(frozen=True)
class Loop:
    """A converted loop as the converter describes it (one per ``while``/``for`` statement).

    ``body(item, *values)`` runs one iteration on the values of the variables it binds (``variables``:
    their names, which are read after the loop, which hold a ``return``'s value) and returns their new values
    (a ``while`` ignores ``item``); ``carried``: the names an iteration may read from the one before or that
    are read after the loop (the others are local to each iteration: a rolled loop does not carry them, see
    :mod:`xlac.convert.analysis`); ``until``: the position in the values of the loop's break flag, if it has
    one (it stops when that is set)."""

    body: Callable
    variables: Variables
    carried: tuple
    kind: str = "for"
    until: int | None = None


@dataclass(frozen=True)
class XlaLoop:
    """How a loop runs as one XLA loop over (item, the carried leaves): ``more(item, values)`` is its test;
    ``item`` starts at ``first_item`` and advances by ``step`` (a ``for``), or is None (a ``while``).
    ``index_range``: the lowest and highest item, known when tracing: indexing an axis that holds them needs
    no bounds check. ``count``: the loop runs ``item`` over ``range(*count)`` with no other exit: a
    ``fori_loop`` (its trip count known, so that reverse mode can differentiate it), ``unroll`` iterations
    per step; or, where ``vectorized`` is given, all at once (see :mod:`xlac.convert.vectorized_loops`), what
    it did noted there."""

    more: Callable
    first_item: object = None
    step: int | None = None
    index_range: tuple[int, int] | None = None
    count: tuple[int, int] | None = None
    unroll: int = 1
    vectorized: VectorizedNotes | None = None


def while_stmt(test_fn, loop: Loop, values: tuple):
    """``while test_fn(*values): values = loop.body(None, *values)``: the variables' values after the loop."""
    values = tuple(values)
    test = test_fn(*values)
    while not isinstance(test, Tracer):
        if not test:
            return values
        values = loop.body(None, *values)
        test = test_fn(*values)
    _decided("while", "traced", "rolled", "its test is traced")
    return _rolled(loop, values, XlaLoop(lambda item, vs: _truth(test_fn(*vs))))


def for_range(bounds: tuple, loop: Loop, values: tuple):
    """``for item in range(*bounds): values = loop.body(item, *values)``: the variables' values after it."""
    values = tuple(values)
    if not any(isinstance(b, Tracer) for b in bounds):
        return _counted(range(*bounds), loop, values)
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if isinstance(step, Tracer) or step == 0:
        raise UnsupportedError(located("for ... in range(...) with a traced bound: the step must be a nonzero "
                                       "Python int (its sign decides the loop's test)"))
    _decided("for", "traced", "rolled", "its trip count is traced")

    def more(item, vs):
        return _not_stopped(item < stop if step > 0 else item > stop, vs, loop.until)
    return _rolled(loop, values, XlaLoop(more, xnp.asarray(start), step, _traced_range(start, stop, step)))


def for_each(iterable, loop: Loop, values: tuple):
    """``for item in iterable: values = loop.body(item, *values)``. A traced array (or ``Rows`` of
    several, from ``loop_enumerate``/``loop_zip``) is iterated over its first axis with an index that may be
    traced, as ``for_range`` does; anything else as Python does."""
    values = tuple(values)
    if isinstance(iterable, Tracer):
        iterable = Rows((iterable,), single=True)
    if isinstance(iterable, Rows):
        return _counted(iterable, loop, values)
    for item in iterable:
        if loop.until is not None and _stopped(values[loop.until]):
            break
        values = _next_iteration(loop, item, values)
    return values


class Rows:
    """The items of a ``for`` over the first axis of traced arrays: ``zip``'s tuples of rows, and
    ``enumerate``'s ``(count, row)`` pairs, for an index that may be traced.

    >>> import numpy as np, xlac
    >>> @xlac.compile
    ... def weighted(x, w):
    ...     total = 0.0
    ...     for i, (row, weight) in enumerate(zip(x, w)):
    ...         total += i * weight * row.sum()
    ...     return total
    >>> float(weighted(np.ones((3, 2)), np.array([1.0, 2.0, 3.0])))
    16.0
    """

    def __init__(self, arrays: tuple, *, single: bool = False, count_from=None):
        for array in arrays:
            if array.ndim == 0:
                raise TypeError(located("iteration over a 0-d array"))
        self.arrays, self.single, self.count_from = arrays, single, count_from
        self.length = min(array.shape[0] for array in arrays) if arrays else 0

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        rows = tuple(array[index] for array in self.arrays)
        item = rows[0] if self.single else rows
        return item if self.count_from is None else (self.count_from + index, item)


def loop_enumerate(iterable, start=0):
    """What ``for ... in enumerate(iterable, start)`` iterates over: ``Rows`` for a traced array."""
    if isinstance(iterable, Tracer) and not isinstance(start, Tracer):
        return Rows((iterable,), single=True, count_from=start)
    if isinstance(iterable, Rows) and iterable.count_from is None and not isinstance(start, Tracer):
        return Rows(iterable.arrays, single=iterable.single, count_from=start)
    return enumerate(iterable, start)


def loop_zip(*iterables):
    """What ``for ... in zip(*iterables)`` iterates over: ``Rows`` when all are traced arrays."""
    if iterables and all(isinstance(x, Tracer) for x in iterables):
        return Rows(iterables)
    return zip(*iterables)


ROLL_AT_OPS = 256     # "auto": a loop rolls when its trip count times its body's ops reaches this ...
ROLL_AT_TRIPS = 4     # ... and it runs at least this many iterations, when its body allows
WARN_AT = 256         # ... and one that must unroll this many iterations says why
MAX_UNROLLED_OPS = 5_000    # xlac.compile's max_unrolled_ops: an unrolled program this large takes 5-6 s
                            # from trace to executable on 2 shared CPU cores (about 1 ms per op, and more per
                            # op past it: 10,000 ops of 16x16 matmuls take 27 s)
SHORT_BODY = 256      # a rolled loop whose body computes at most this many elements (all its ops' results) ...
UNROLL_SHORT = 4      # ... runs this many iterations per step of the XLA loop (less loop overhead per op;
                      # on larger arrays, XLA's fusions of the unrolled steps recompute and run slower)


def _counted(items, loop: Loop, values: tuple) -> tuple:
    """A loop whose trip count is known when tracing, over ``items`` (a ``range`` or ``Rows``): unrolled
    in Python, or rolled per ``Trace.loops`` (see ``xlac.compile``'s ``loops``). A rolled loop runs its
    first iteration unrolled, so that every variable is bound and typed going in (and its size is known),
    then the rest as one XLA loop over a traced index."""
    mode, trips = current_trace().loops, len(items)
    item_of = items.__getitem__ if isinstance(items, Rows) else partial(_range_item, items)
    if mode == "unroll" or trips < 2:
        reason = "xlac.compile(loops='unroll')" if mode == "unroll" else "it runs fewer than 2 iterations"
        _decided("for", trips, "unrolled", reason)
        return _unrolled(range(trips), item_of, loop, values, UnrollLimit(trips, reason))
    graph, python_effects = current_trace().graph, current_trace().python_effects
    limit = UnrollLimit(trips)
    nodes_before, effects_before = len(graph.nodes), len(python_effects)
    first = values
    values = _next_iteration(loop, item_of(0), values)
    limit.iterated()
    body, acted = graph.nodes[nodes_before:], python_effects[effects_before:]
    body_ops = _ops_in(body)
    reason = None
    if mode == "auto" and (trips < ROLL_AT_TRIPS or trips * body_ops < ROLL_AT_OPS):
        limit.reason = f"{trips} iterations of {body_ops} ops are few: unrolled runs faster"
        _decided("for", trips, "unrolled", limit.reason)
        return _unrolled(range(1, trips), item_of, loop, values, limit)
    if mode == "auto" and acted:
        reason = f"its body calls {acted[0]}, which acts on Python state (traced again, it would act again)"
    if reason is None and mode == "auto" and any(isinstance(v, (list, dict, set, bytearray)) for v in values):
        reason = "it changes a Python list, dict or set"
    if reason is None:
        def more(item, vs):
            return _not_stopped(item < trips, vs, loop.until)
        short = loop.until is None and trips > 2 * UNROLL_SHORT and _elements_computed(body) <= SHORT_BODY
        unroll = UNROLL_SHORT if short else 1
        # every variable is bound by the first iteration: none is first bound inside the rolled loop
        by_index = dataclasses.replace(loop, body=lambda index, *vs: loop.body(item_of(index), *vs),
                                       variables=dataclasses.replace(loop.variables, live=()))
        xla = XlaLoop(more, xnp.asarray(1), 1, (1, trips - 1), (1, trips) if loop.until is None else None, unroll)
        not_vectorized = _not_vectorizable(mode, loop)
        if not_vectorized is None:
            decisions, notes = len(current_trace().loop_decisions), VectorizedNotes()
            try:
                vectorized = _rolled(by_index, values, dataclasses.replace(xla, vectorized=notes),
                                     in_place=_kept_in_place(first, values))
            except Exception as error:          # the rolled loop's attempt raises the user's errors again
                not_vectorized = str(error) if isinstance(error, NotVectorized) else _failure(error)
                del current_trace().loop_decisions[decisions:]       # the inner loops' of the attempt
            else:
                _decided("for", trips, "vectorized", f"{trips} iterations of {body_ops} ops, independent: "
                         "run at once" + _vectorized_how(notes))
                return vectorized
        try:
            rolled = _rolled(by_index, values, xla, in_place=_kept_in_place(first, values))
        except Exception as error:
            if mode == "roll":
                raise
            reason = f"its body cannot run with a traced index ({_failure(error)})"
        else:
            _decided("for", trips, "rolled", f"{trips} iterations of {body_ops} ops" +
                     (f", {unroll} per step of the XLA loop" if unroll > 1 else "") +
                     (f"; not vectorized: {not_vectorized}" if mode == "auto" else ""))
            return rolled
    _decided("for", trips, "unrolled", reason)
    if trips >= WARN_AT:
        warnings.warn(located(f"xlac: this loop runs {trips} iterations unrolled, because {reason}; "
                              "compiling it takes time in proportion"), LoopUnrolledWarning, stacklevel=2)
    limit.reason = reason
    limit.check(values[loop.until] if loop.until is not None else None)
    return _unrolled(range(1, trips), item_of, loop, values, limit)


def _vectorized_how(notes: VectorizedNotes) -> str:
    """What the loop report adds about a vectorized loop: its segment reductions and accumulators."""
    how = ""
    if notes.segments:
        how += (f"; as segment reductions: {notes.segments} (the rolled loop where the intervals are not sorted "
                "and disjoint, or a check fails)")
    if notes.reduced:
        how += f"; accumulated, then reduced: {', '.join(notes.reduced)}"
    return how


def _not_vectorizable(mode: str, loop: Loop) -> str | None:
    """Why a loop that may roll is not even tried vectorized (see :mod:`xlac.convert.vectorized_loops`), or None."""
    if mode != "auto":
        return f"xlac.compile(loops={mode!r})"
    if config.vectorize_loops not in ("auto", "always", "never"):
        raise ValueError(located(f"xlac.config.vectorize_loops must be 'auto', 'always' or 'never', got "
                                 f"{config.vectorize_loops!r}"))
    if config.vectorize_loops == "never":
        return "xlac.config.vectorize_loops is 'never'"
    if loop.until is not None:
        return "it may break"
    return None


def _failure(error: Exception) -> str:
    """An error in a line: its type, its first line and the user's line it names (the call that failed)."""
    lines = str(error).splitlines()
    where = lines[-1].strip() if len(lines) > 1 and lines[-1].lstrip().startswith("at ") else ""
    if where:
        path, _, rest = where[3:].partition(":")
        where = f", at {os.path.basename(path)}:{rest.split()[0]}"
    return f"{type(error).__name__}: {lines[0] if lines else ''}{where}"


def _traced_range(start, stop, step: int) -> tuple[int, int] | None:
    """The lowest and highest item of ``range(start, stop, step)`` over every value its traced bounds are
    known to take (see :func:`xlac.trace.facts.known_range`), or None."""
    ends = []
    for bound in (start, stop):
        known = (bound, bound) if isinstance(bound, int) else known_range(bound)
        if known is None:
            return None
        ends.append(known)
    (start_low, start_high), (stop_low, stop_high) = ends
    return (start_low, stop_high - 1) if step > 0 else (stop_low + 1, start_high)


def _range_item(items: range, index):
    """``items[index]`` for an index that may be traced (then the item knows its range)."""
    if not isinstance(index, Tracer):
        return items[index]
    item = index if (items.start, items.step) == (0, 1) else items.start + index * items.step
    set_known_range(item, (min(items[0], items[-1]), max(items[0], items[-1])))
    return item


class LoopUnrolledWarning(UserWarning):
    """A long Python loop in a compiled function runs unrolled (its program grows with its trip count)."""


class UnrolledTooLargeError(UnsupportedError):
    """A loop that unrolls would make a program too large to compile in reasonable time (see
    ``xlac.compile``'s ``max_unrolled_ops``)."""


class UnrollLimit:
    """Stops an unrolling ``for`` early when the program it makes would grow past the trace's
    ``max_unrolled_ops``: after each iteration, the ops of the program so far plus the iterations left at
    the ops per iteration traced so far (an inner loop that unrolls counts in its outer loop's iterations)."""

    def __init__(self, trips: int, reason: str = ""):
        self.trips, self.reason = trips, reason
        self.most = current_trace().max_unrolled_ops
        self.most = MAX_UNROLLED_OPS if self.most is None else self.most
        self.started_at = _program_ops()      # the ops of the program when the current iteration started
        self.done = self.loop_ops = 0         # the iterations traced, and their ops

    def start(self) -> None:
        self.started_at = _program_ops()

    def iterated(self) -> None:
        self.done, self.loop_ops = self.done + 1, self.loop_ops + _program_ops() - self.started_at

    def check(self, break_flag=None) -> None:
        """Raise ``UnrolledTooLargeError`` if the program would grow too large; ``break_flag``: the loop's,
        while known when tracing (the loop may stop early: only the program so far is counted)."""
        ops = _program_ops()
        per_iteration = -(-self.loop_ops // self.done)
        may_stop = break_flag is not None and not isinstance(break_flag, Tracer)
        reach = ops if may_stop else ops + (self.trips - self.done) * per_iteration
        if reach <= self.most:
            return
        raise UnrolledTooLargeError(located(
            f"this `for` loop runs {self.trips} iterations unrolled, because {self.reason}; the program would "
            f"reach about {reach} ops ({ops - self.loop_ops} before the loop, then {self.trips} iterations x "
            f"{per_iteration} ops, as traced in the first {self.done}), more than max_unrolled_ops={self.most}: "
            "compiling takes about 1 s per 1000 ops, and more per op past that. Rewrite the loop so that it "
            "rolls, or pass a larger xlac.compile(max_unrolled_ops=...) to go on"))


def _program_ops() -> int:
    """The ops the program holds so far: the current trace's and those of the traces it runs in."""
    total, trace = 0, current_trace()
    while trace is not None:
        graph, counted, ops = _ops_counted.get(trace, (None, 0, 0))
        if graph is not trace.graph or counted > len(trace.graph.nodes):
            counted, ops = 0, 0
        ops += _ops_in(trace.graph.nodes[counted:])
        _ops_counted[trace] = (trace.graph, len(trace.graph.nodes), ops)
        total, trace = total + ops, trace.parent
    return total


# trace -> (its graph, the graph's first nodes, their ops): each node is counted once
_ops_counted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unrolled(indices, item_of, loop: Loop, values: tuple, limit: UnrollLimit) -> tuple:
    for index in indices:
        if loop.until is not None and _stopped(values[loop.until]):
            break
        limit.start()
        values = _next_iteration(loop, item_of(index), values)
        limit.iterated()
        limit.check(values[loop.until] if loop.until is not None else None)
    return values


def _next_iteration(loop: Loop, item, values: tuple) -> tuple:
    """The values after one more iteration; after a traced ``break`` (the flag at ``loop.until``), the
    iteration runs under its negation, as one conditional."""
    if loop.until is None or not isinstance(values[loop.until], Tracer):
        return loop.body(item, *values)
    return traced_if(values[loop.until], [lambda *vs: loop.body(item, *vs), lambda *vs: vs], values, loop.variables,
                     "for")


def _stopped(flag) -> bool:
    """Whether a loop's break flag is set, known when tracing (False while it is traced)."""
    return not isinstance(flag, Tracer) and bool(flag)


def _not_stopped(more, values: tuple, until: int | None):
    if until is None:
        return more
    return xnp.logical_and(more, xnp.logical_not(values[until]))


def _elements_computed(nodes) -> int:
    """The number of elements the results of ``nodes`` hold, those of their regions' ops included."""
    return sum(sum(int(np.prod(v.type.shape)) for v in node.results) +
               sum(_elements_computed(graph.nodes) for graph in node.subgraphs) for node in nodes)


def _ops_in(nodes) -> int:
    """The number of ops of ``nodes``, those of their regions included."""
    return sum(1 + sum(_ops_in(graph.nodes) for graph in node.subgraphs) for node in nodes)


def _decided(kind: str, trips, decision: str, reason: str) -> None:
    """Note how a loop runs on the trace (``Traced.loops``, ``explain``, the dumps' summary)."""
    location = user_location(2)
    current_trace().loop_decisions.append(LoopDecision(str(location) if location else "?", kind, trips,
                                                       decision, reason))


def _truth(test) -> Tracer:
    test = xnp.asarray(test)
    if test.size != 1:
        raise ValueError(located(f"the test of a while loop is a traced array of shape {test.shape}: the truth "
                                 "value of an array with more than one element is ambiguous"))
    test = test.reshape(())
    return test if test.dtype == np.bool_ else test != 0


class CarriedRanges:
    """The ranges a rolled loop's carried integer scalars are assumed to lie in at the start of every iteration
    (None: nothing assumed), so that the body indexes with them unchecked (``h = embed[token]`` where ``token``
    is the previous iteration's ``argmax``, ``x[k]`` where ``k = (k + 3) % n``). The body is traced first under
    no assumption; where a carry's value going in and its value coming out both lie in known ranges, it is
    traced again assuming their hull, which holds where every iteration's value coming out lies in it
    (``kept``: else a third trace assumes nothing).

    >>> CarriedRanges.going_in([3, 2.5, True]).entry
    [(3, 3), None, None]
    """

    def __init__(self, assumed: list, entry: list, final: bool = False):
        self.assumed, self.entry, self.final = assumed, entry, final

    @staticmethod
    def going_in(carried: list) -> "CarriedRanges":
        return CarriedRanges([None] * len(carried), [_integer_range(leaf) for leaf in carried])

    def assume(self, carry: list) -> None:
        for leaf, known in zip(carry, self.assumed):
            if known is not None and isinstance(leaf, Tracer):
                set_known_range(leaf, known)

    def kept(self, carry: list) -> list:
        """``carry`` (an iteration's values coming out), or :class:`_RangesNotKept` with what to assume
        instead."""
        if self.final:
            return carry
        out = [_integer_range(leaf) for leaf in carry]
        if any(known is not None for known in self.assumed):
            if any(known is not None and (now is None or now[0] < known[0] or now[1] > known[1])
                   for known, now in zip(self.assumed, out)):
                raise _RangesNotKept(CarriedRanges([None] * len(carry), self.entry, final=True))
            return carry
        hull = [None if before is None or now is None else (min(before[0], now[0]), max(before[1], now[1]))
                for before, now in zip(self.entry, out)]
        if any(known is not None for known in hull):
            raise _RangesNotKept(CarriedRanges(hull, self.entry))
        return carry


def _integer_range(leaf) -> tuple[int, int] | None:
    """What is known of an integer scalar's value: a Python int's own, a traced scalar's known range."""
    if type(leaf) is int:
        return leaf, leaf
    if isinstance(leaf, Tracer) and leaf.ndim == 0 and leaf.dtype.kind in "iu":
        return known_range(leaf)
    return None


class _RangesNotKept(Exception):
    """A carried integer may leave the range assumed for it: the loop is traced again (``ranges``)."""

    def __init__(self, ranges: CarriedRanges):
        super().__init__()
        self.ranges = ranges


class _Rebound(Exception):
    """A loop body rebound a name that held an array it was assumed to update in place."""

    def __init__(self, leaf):
        super().__init__()
        self.leaf = leaf


def _rolled(loop: Loop, values: tuple, xla: XlaLoop, in_place=None):
    """The loop as one XLA loop, as ``xla`` says.

    A name that still holds the same writable array after each iteration (``a += 1``, ``a[i] = v``: NumPy
    changes the array in place) is not carried: the body writes into the array itself, which the loop then
    carries as any array its body writes (``in_place``: those arrays, as the first iteration showed; by
    default every writable array the variables hold, and one the body rebinds is carried on a second try)."""
    if in_place is None:
        in_place = [leaf for value in values if value is not UNDEFINED for leaf in pytree.flatten(value)[0]
                    if _writable_array(leaf)]
    ranges = None
    while True:
        try:
            return _rolled_once(loop, values, xla, in_place, ranges)
        except _Rebound as rebound:
            in_place = [leaf for leaf in in_place if leaf is not rebound.leaf]
        except _RangesNotKept as widened:
            ranges = widened.ranges


def _writable_array(leaf) -> bool:
    return isinstance(leaf, Tracer) and leaf.mutability == "mutable"


def _kept_in_place(before: tuple, after: tuple) -> list:
    """The writable arrays that the variables held before an iteration and still hold after it."""
    held = [leaf for value in before if value is not UNDEFINED for leaf in pytree.flatten(value)[0]
            if _writable_array(leaf)]
    now = {id(leaf) for value in after if value is not UNDEFINED for leaf in pytree.flatten(value)[0]}
    return [leaf for leaf in held if id(leaf) in now]


def _rolled_once(loop: Loop, values: tuple, xla: XlaLoop, in_place: list, ranges: CarriedRanges | None):
    names, live, kind = loop.variables.names, loop.variables.live, loop.kind
    in_place_ids = {id(leaf) for leaf in in_place}
    carried, statics = [], []                       # per name: its leaves' tree, which leaves are carried
    carried_names = []
    for name, value in zip(names, values):
        if value is UNDEFINED:
            if name in live and name in loop.variables.returned:
                raise UnsupportedError(located(
                    f"a `return` inside a `{kind}` loop whose trip count is traced: the returned value's type is "
                    "not known before the loop runs. Bind the result to a variable before the loop, `break`, "
                    "and return it after the loop"))
            if name in live:
                raise TypeError(located(
                    f"variable '{name}' is first bound inside a `{kind}` loop whose trip count is traced, and read "
                    "after it: bind it before the loop"))
        if value is UNDEFINED or name not in loop.carried:
            statics.append(UNDEFINED)
            continue
        leaves, tree = pytree.flatten(value)
        is_carried = [is_array_like(leaf) and id(leaf) not in in_place_ids for leaf in leaves]
        statics.append((tree, [None if c else leaf for leaf, c in zip(leaves, is_carried)]))
        carried.extend(leaf for leaf, c in zip(leaves, is_carried) if c)
        carried_names.extend(name for c in is_carried if c)

    def rebuild(carry) -> tuple:
        it = iter(carry)
        return variables_from_leaves(statics, lambda leaf: leaf is None, lambda leaf: next(it))

    def carry_of(new_values) -> list:
        carry = []
        for name, static, value in zip(names, statics, new_values):
            if static is UNDEFINED:
                continue                             # local to the iteration
            tree, leaves = static
            new_leaves, new_tree = pytree.flatten(value)
            for leaf, new in zip(leaves, new_leaves):
                if id(leaf) in in_place_ids and new is not leaf:
                    raise _Rebound(leaf)
            if new_tree != tree or any((leaf is None) != is_array_like(new) and id(leaf) not in in_place_ids or
                                       leaf is not None and not same_value(leaf, new)
                                       for leaf, new in zip(leaves, new_leaves)):
                raise TypeError(located(
                    f"variable '{name}' is {value!r} after an iteration of a `{kind}` loop whose trip count is "
                    f"traced, and {rebuild_value(static)} before it: a rolled loop carries arrays and numbers; "
                    "any other value must stay as it is"))
            carry.extend(new for leaf, new in zip(leaves, new_leaves) if leaf is None)
        return carry

    def rebuild_value(static) -> str:
        tree, leaves = static
        return repr(pytree.unflatten(tree, ["<array>" if leaf is None else leaf for leaf in leaves]))

    def cond(state):
        item_now, carry = state
        return xla.more(item_now, rebuild(carry))

    ranges = ranges or CarriedRanges.going_in(carried)

    def body(state):
        item_now, carry = state
        set_known_range(item_now, xla.index_range)
        ranges.assume(carry)
        new_values = loop.body(item_now, *rebuild(carry))
        return (item_now + xla.step if xla.step is not None else item_now), ranges.kept(carry_of(new_values))

    if xla.count is not None:
        def counted_body(index, carry):
            set_known_range(index, xla.index_range)
            ranges.assume(carry)
            return ranges.kept(carry_of(loop.body(index, *rebuild(carry))))
        if xla.vectorized is not None:
            ranges = CarriedRanges([None] * len(carried), [None] * len(carried), final=True)
            written_names = {id(leaf): name for name, value in zip(names, values) if value is not UNDEFINED
                             for leaf in pytree.flatten(value)[0] if id(leaf) in in_place_ids}
            def rolled(carry):
                return fori_loop(*xla.count, counted_body, list(carry), unroll=xla.unroll)
            return rebuild(vectorized_fori(*xla.count, counted_body, list(carried), carried_names, xla.vectorized,
                                           written_names, rolled))
        return rebuild(fori_loop(*xla.count, counted_body, list(carried), unroll=xla.unroll))
    start = xla.first_item if xla.first_item is not None else xnp.asarray(0)
    _, final = while_loop(cond, body, (start, list(carried)))
    return rebuild(final)
