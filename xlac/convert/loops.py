"""Converted Python loops whose trip depends on a traced value: a ``while`` whose test is traced, a
``for`` over ``range(...)`` with a traced bound. Each runs as one XLA loop (``xlac.while_loop``) whose
carries are the loop's variables, matched by name: arrays and Python numbers are carried (a Python number
the body turns into an array takes its dtype, as a weak value); any other value (``None``, a string, an
object) must come out of the body as it went in. A variable first bound inside the loop is local to each
iteration, and reading it after the loop is refused (with a traced trip count, Python's "the value of the
last iteration, if there was one" has no single answer).

A ``for`` over a ``range`` known when tracing rolls too when it is long (see ``xlac.compile``'s
``loops``), else it stays a Python loop, as before conversion: its body is traced once per iteration. A
``while`` whose test is concrete stays a Python loop; one whose test becomes traced after some iterations
rolls from there.

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

import warnings

import numpy as np

import xlac.numpy as xnp
from xlac.control_flow import while_loop
from xlac.convert.branches import UNDEFINED, is_array_like, same_value, variables_from_leaves
from xlac.errors import UnsupportedError, located
from xlac.trace import pytree
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer


def while_stmt(test_fn, body_fn, values: tuple, names: tuple, live: tuple):
    """``while test_fn(*values): values = body_fn(*values)``: the variables' values after the loop."""
    values = tuple(values)
    test = test_fn(*values)
    while not isinstance(test, Tracer):
        if not test:
            return values
        values = body_fn(*values)
        test = test_fn(*values)
    return _rolled(lambda item, vs: _truth(test_fn(*vs)), lambda item, vs: body_fn(*vs), None, None,
                   values, names, live, "while")


def for_range(bounds: tuple, body_fn, values: tuple, names: tuple, live: tuple, pure: bool):
    """``for item in range(*bounds): values = body_fn(item, *values)``: the variables' values after it.
    ``pure``: the body calls nothing that looks like a Python side effect (print, append, ...)."""
    values = tuple(values)
    if not any(isinstance(b, Tracer) for b in bounds):
        return _static_range(range(*bounds), body_fn, values, names, pure)
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if isinstance(step, Tracer) or step == 0:
        raise UnsupportedError(located("for ... in range(...) with a traced bound: the step must be a nonzero "
                                       "Python int (its sign decides the loop's test)"))
    if step > 0:
        def more(item, _):
            return item < stop
    else:
        def more(item, _):
            return item > stop
    return _rolled(more, lambda item, vs: body_fn(item, *vs), xnp.asarray(start), step, values, names, live,
                   "for")


ROLL_AT = 64          # "auto": a loop of at least this many iterations rolls when its body allows
WARN_AT = 256         # ... and one that must unroll this many iterations says why


def _static_range(items: range, body_fn, values: tuple, names: tuple, pure: bool) -> tuple:
    """A loop whose trip count is known: unrolled in Python, or rolled per ``Trace.loops`` (see
    ``xlac.compile``'s ``loops``). A rolled loop runs its first iteration unrolled, so that every variable
    is bound and typed going in, then the rest as one XLA loop."""
    mode = current_trace().loops
    reason = None
    if mode == "unroll" or len(items) < 2 or mode == "auto" and len(items) < ROLL_AT:
        return _unrolled(items, body_fn, values)
    if mode == "auto" and not pure:
        reason = "its body calls print, append or another function that acts on Python state"
    values = body_fn(items[0], *values)
    if reason is None and mode == "auto" and any(isinstance(v, (list, dict, set, bytearray)) for v in values):
        reason = "it changes a Python list, dict or set"
    if reason is None:
        rest = items[1:]
        if rest.step > 0:
            def more(item, _):
                return item < rest.stop
        else:
            def more(item, _):
                return item > rest.stop
        try:
            return _rolled(more, lambda item, vs: body_fn(item, *vs), xnp.asarray(rest.start), rest.step, values,
                           names, (), "for", item_range=(min(rest[0], rest[-1]), max(rest[0], rest[-1])))
        except Exception as error:
            if mode == "roll":
                raise
            reason = f"its body cannot run with a traced index ({type(error).__name__}: " \
                     f"{str(error).splitlines()[0]})"
    if len(items) >= WARN_AT:
        warnings.warn(located(f"xlac: this loop runs {len(items)} iterations unrolled, because {reason}; "
                              "compiling it takes time in proportion"), LoopUnrolledWarning, stacklevel=2)
    return _unrolled(items[1:], body_fn, values)


class LoopUnrolledWarning(UserWarning):
    """A long Python loop in a compiled function runs unrolled (its program grows with its trip count)."""


def _unrolled(items, body_fn, values: tuple) -> tuple:
    for item in items:
        values = body_fn(item, *values)
    return values


def _truth(test) -> Tracer:
    test = xnp.asarray(test)
    if test.size != 1:
        raise ValueError(located(f"the test of a while loop is a traced array of shape {test.shape}: the truth "
                                 "value of an array with more than one element is ambiguous"))
    test = test.reshape(())
    return test if test.dtype == np.bool_ else test != 0


def _rolled(more, step_fn, item, step, values: tuple, names: tuple, live: tuple, kind: str,
            item_range: tuple[int, int] | None = None):
    """The loop as one ``while_loop`` over (item, the carried leaves); ``more(item, values)`` is its test,
    ``step_fn(item, values)`` its body; ``item`` advances by ``step`` (a ``for``), or is None.
    ``item_range``: the lowest and highest item (a range known when tracing): indexing an axis that holds
    them needs no bounds check."""
    carried, statics = [], []                       # per name: its leaves' tree, which leaves are carried
    for name, value in zip(names, values):
        if value is UNDEFINED:
            if name in live:
                raise TypeError(located(
                    f"variable '{name}' is first bound inside a `{kind}` loop whose trip count is traced, and read "
                    "after it: bind it before the loop"))
            statics.append(UNDEFINED)
            continue
        leaves, tree = pytree.flatten(value)
        statics.append((tree, [None if is_array_like(leaf) else leaf for leaf in leaves]))
        carried.extend(leaf for leaf in leaves if is_array_like(leaf))

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
            if new_tree != tree or any((leaf is None) != is_array_like(new) or
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
        return more(item_now, rebuild(carry))

    def body(state):
        item_now, carry = state
        item_now.known_range = item_range
        new_values = step_fn(item_now, rebuild(carry))
        return (item_now + step if step is not None else item_now), carry_of(new_values)

    start = item if item is not None else xnp.asarray(0)
    _, final = while_loop(cond, body, (start, list(carried)))
    return rebuild(final)
