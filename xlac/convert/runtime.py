"""The functions converted code calls (see :mod:`xlac.convert.rewrite`). Each keeps Python's behaviour for
concrete values and routes traced ones into xlac. Errors name the user's line from the calling frame,
whose code keeps the user's line numbers.

>>> if_expr(True, lambda: "yes", lambda: "no")
'yes'
>>> and_(lambda: 0, lambda: 1 / 0)          # short-circuits, as Python's `and`
0
"""
from __future__ import annotations

import operator

import numpy as np

import xlac.numpy as xnp
from xlac.convert import branches, loops
from xlac.convert.branches import UNDEFINED, Variables
from xlac.convert.cache import converted
from xlac.convert.known_calls import UNKNOWN, effects_of
from xlac.convert.substitutes import substitute
from xlac.errors import SourceLocation, TracerConversionError, UnsupportedError, located
from xlac.ir.dtypes import SUPPORTED
from xlac.numpy._core import writable
from xlac.numpy.index_write import broadcast_values
from xlac.trace.checks import require_true
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["UNDEFINED", "and_", "assert_", "call", "call_allocation", "compare_chain", "concrete_test",
           "current_values", "if_expr", "if_return", "if_stmt", "not_", "or_", "outside", "current", "operator_result",
           "getitem", "setitem", "aug_setitem", "index_slice", "setitem_either", "while_stmt", "for_range",
           "for_each", "loop_enumerate", "loop_zip"]


def _traced(x) -> bool:
    return isinstance(x, Tracer)


# ---------------------------------------------------------------- if


def current_values(local_vars: dict, names: tuple) -> tuple:
    """The values of ``names`` in a frame's locals, UNDEFINED for those not bound yet."""
    return tuple(local_vars.get(name, UNDEFINED) for name in names)


def if_stmt(test, true_fn, false_fn, values: tuple, *, names: tuple, live: tuple, returned: tuple = ()) -> tuple:
    """An ``if`` statement: the new values of the variables ``names`` it binds (``returned``: those holding
    the value of a ``return`` inside a loop)."""
    if not _traced(test):
        return (true_fn if test else false_fn)(*values)
    return branches.traced_if(test, [false_fn, true_fn], values, Variables(names, live, returned), "if")


def if_return(test, true_fn, false_fn, values: tuple, *, names: tuple, live: tuple):
    """An ``if`` statement whose branches both return: the value returned."""
    if not _traced(test):
        return (true_fn if test else false_fn)(*values)
    wrap = [lambda *v, fn=fn: (fn(*v),) for fn in (false_fn, true_fn)]
    return branches.traced_if(test, wrap, values, Variables(("the returned value",)), "if")[0]


def if_expr(test, body, orelse):
    """``body() if test else orelse()``."""
    if not _traced(test):
        return body() if test else orelse()
    wrap = [lambda: (orelse(),), lambda: (body(),)]
    return branches.traced_if(test, wrap, (), Variables(("the value",)), "if-else expression")[0]


def concrete_test(test, *, reason: str, what: str = "if"):
    """The test of an ``if`` or ``while`` the converter left as written (``reason``): a traced one raises."""
    if _traced(test):
        if what == "while":
            raise TracerConversionError(located(
                f"this `while` tests a traced value, and it cannot become an XLA loop because {reason}. Move the "
                "exit into the test (carry a flag), or use xlac.while_loop"))
        raise TracerConversionError(located(
            f"this `if` tests a traced value, and it cannot become a conditional because {reason}. Rewrite it "
            "so that both branches end alike (bind the same variables, or both return), or select with "
            "xnp.where(test, a, b)"))
    return test


# ---------------------------------------------------------------- loops


def while_stmt(test_fn, body_fn, values: tuple, *, names: tuple, live: tuple, carried: tuple,
               returned: tuple = ()) -> tuple:
    """A ``while`` loop: the new values of the variables ``names`` its body binds; ``carried``: those it
    carries from one iteration to the next; ``returned``: those holding the value of a ``return`` inside it."""
    body = loops.Loop(lambda item, *vs: body_fn(*vs), Variables(names, live, returned), carried, kind="while")
    return loops.while_stmt(test_fn, body, values)


def for_range(bounds: tuple, body_fn, values: tuple, *, names: tuple, live: tuple, carried: tuple,
              until: str | None, returned: tuple = ()) -> tuple:
    """A ``for`` loop over ``range(*bounds)``: the new values of its target and the variables its body binds.
    ``until``: its break flag's name, if any; ``returned`` as for ``while_stmt``."""
    loop = loops.Loop(body_fn, Variables(names, live, returned), carried, until=_position(names, until))
    return loops.for_range(bounds, loop, values)


def for_each(iterable, body_fn, values: tuple, *, names: tuple, live: tuple, carried: tuple,
             until: str | None, returned: tuple = ()) -> tuple:
    """A ``for`` loop over anything else: a traced array's rows, ``loop_enumerate``/``loop_zip``'s items,
    or a Python iterable."""
    loop = loops.Loop(body_fn, Variables(names, live, returned), carried, until=_position(names, until))
    return loops.for_each(iterable, loop, values)


def _position(names: tuple, name: str | None) -> int | None:
    return None if name is None else names.index(name)


loop_enumerate = loops.loop_enumerate
loop_zip = loops.loop_zip


# ---------------------------------------------------------------- boolean operators


def _truth(x, what: str) -> Tracer:
    """A traced value's truth as a boolean scalar; like NumPy, only a one-element array has one."""
    x = xnp.asarray(x)
    if x.size != 1:
        raise ValueError(located(f"`{what}` on a traced array of shape {x.shape}: the truth value of an array "
                                 "with more than one element is ambiguous. Use xnp.logical_and/logical_or, "
                                 "a.any() or a.all()"))
    x = x.reshape(())
    return x if x.dtype == np.bool_ else x != 0


def _combine(kind: str, first, truth, rest):
    """``first and rest`` / ``first or rest`` for a traced ``first`` whose truth is ``truth``: a logical
    operation for booleans, else the operand Python would have returned, chosen per the traced truth."""
    first_array, rest_array = xnp.asarray(first), xnp.asarray(rest)
    if first_array.dtype == np.bool_ and rest_array.dtype == np.bool_ and rest_array.size == 1:
        rest_truth = rest_array.reshape(())
        return xnp.logical_and(truth, rest_truth) if kind == "and" else xnp.logical_or(truth, rest_truth)
    result = xnp.where(truth, rest, first) if kind == "and" else xnp.where(truth, first, rest)
    if result.dtype != first_array.dtype or not rest_array.weak and rest_array.dtype != first_array.dtype:
        raise TypeError(located(
            f"`{kind}` of a traced {first_array.dtype} value and a {rest_array.dtype} one: Python's `{kind}` "
            "returns one operand or the other, so the result's type would depend on the traced value. "
            "Compare to booleans first, or select with xnp.where(cond, a, b)"))
    return result


def _short_circuit(kind: str, thunks):
    """Python's ``and``/``or``. After a traced operand the rest is evaluated always, and its checks
    (an index out of bounds) fail only where Python would have evaluated it; so does an error it raises
    while traced (a constant index out of bounds), where Python returns the traced operand elsewhere."""
    value = thunks[0]()
    for k in range(1, len(thunks)):
        if _traced(value):
            truth = _truth(value, kind)
            checks = current_trace().checks
            with checks.evaluated_when(truth if kind == "and" else xnp.logical_not(truth)):
                try:
                    rest = _short_circuit(kind, thunks[k:])
                except Exception as error:
                    if not checks.defers(error):
                        raise
                    checks.fail(error)
                    return value
            return _combine(kind, value, truth, rest)
        if bool(value) != (kind == "and"):
            return value
        value = thunks[k]()
    return value


def and_(*thunks):
    """``a and b and ...`` over thunks of the operands."""
    return _short_circuit("and", thunks)


def or_(*thunks):
    """``a or b or ...`` over thunks of the operands."""
    return _short_circuit("or", thunks)


def not_(x):
    """``not x``."""
    return xnp.logical_not(_truth(x, "not")) if _traced(x) else not x


_COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
                "!=": operator.ne, "is": operator.is_, "is not": operator.is_not,
                "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}


def compare_chain(*operands, ops: tuple):
    """``a < b < c``: each operand evaluated once, when Python would evaluate it."""
    values = [operands[0]()]

    def comparison(k):
        def thunk():
            values.append(operands[k + 1]())
            return _COMPARISONS[ops[k]](values[k], values[k + 1])
        return thunk
    return and_(*[comparison(k) for k in range(len(ops))])


# ---------------------------------------------------------------- assert


def assert_(test, message=None, *, test_source: str, message_source: str | None = None) -> None:
    """``assert test, message()`` (``message``: a thunk, or None for an assert without one).

    A concrete test is Python's ``assert``. A traced one is checked when the program runs, as the bounds
    checks are: the call raises ``AssertionError`` afterwards, with the message and the user's line (not
    with ``xlac.compile(check_bounds=False)``). The message is then evaluated while tracing, whether or not
    the assertion fails; one that reads traced values (``f"d = {d}"`` of a traced ``d``) has no value
    yet and is shown as written (``test_source``, ``message_source``: the source text of both).

    >>> assert_(2 > 1, lambda: 1 / 0, test_source="2 > 1")
    >>> assert_(2 < 1, lambda: "2 is not less than 1", test_source="2 < 1")
    Traceback (most recent call last):
    AssertionError: 2 is not less than 1
    """
    if not _traced(test):
        if not test:
            raise AssertionError() if message is None else AssertionError(message())
        return
    holds = _truth(test, "assert")
    if current_trace().checks.enabled:
        require_true(holds, AssertionError, _assertion_message(message, test_source, message_source))


def _assertion_message(message, test_source: str, message_source: str | None) -> str:
    """The message of a traced assert's AssertionError: the user's, evaluated while tracing, where it can be."""
    if message is None:
        return f"assert {test_source}"
    try:
        text = message()
    except Exception as error:       # it needs a concrete value, or fails as Python would only on failure
        first_line = str(error).partition("\n")[0]
        return f"{message_source} (shown as written: evaluating it while tracing raised " \
               f"{type(error).__name__}: {first_line})"
    if _traced(text) or "Tracer<" in str(text):     # it reads a traced value, which has no value yet
        return f"{message_source} (shown as written: it reads values known only when the program runs)"
    return str(text)


# ---------------------------------------------------------------- state from outside


def outside(value):
    """A value read from outside the function (a global, a closed-over name, an attribute): a NumPy array
    there, while tracing, is read as ``xlac.outside_state.OutsideState.read`` says (a floating-point one is
    the implicit argument standing for it: read at every call, written back after it)."""
    if type(value) is np.ndarray and value.dtype in SUPPORTED:
        trace = current_trace()
        owner = trace.outside_state() if trace is not None else None
        if owner is not None:
            return owner.read(value)
    return value


def current(value):
    """A local name's value: for a NumPy array whose program value is a traced one (an array the call made
    that a traced value was written into, in whichever function; an implicit argument), that traced value,
    so that every read sees the write."""
    if type(value) is np.ndarray:
        trace = current_trace()
        owner = trace.outside_state() if trace is not None else None
        if owner is not None:
            known = owner.current(value)
            return known if not isinstance(known, Tracer) or known._trace is trace else trace.lift(known)
    return value


index_slice = slice


def _index_has_traced(index) -> bool:
    """Whether a subscript's index holds a traced value: itself, an item of a tuple or list, a slice bound."""
    if isinstance(index, (tuple, list)):
        return any(_index_has_traced(i) for i in index)
    if isinstance(index, slice):
        return any(_traced(b) for b in (index.start, index.stop, index.step))
    return _traced(index) or getattr(index, "is_dynamic_extent", False)      # np.nonzero's, x[mask]


def _traced_numpy(array, index, value=None) -> bool:
    return isinstance(array, np.ndarray) and array.dtype in SUPPORTED and current_trace() is not None \
        and (_index_has_traced(index) or _traced(value) or getattr(value, "is_dynamic_extent", False))


def getitem(container, index):
    """``container[index]``: a NumPy array indexed with a traced value is read through the implicit
    argument standing for it; a floating-point array taken from a list or dict as :func:`outside`."""
    if _traced_numpy(container, index):
        return xnp.asarray(container)[index]
    item = container[index]
    if not isinstance(container, (np.ndarray, Tracer)) and isinstance(item, np.ndarray) and item.base is None:
        return outside(item)
    return item


def setitem(target, index, value) -> None:
    """``target[index] = value``: into a NumPy array with a traced index or value, through the implicit
    argument standing for it, written back into the array after the call."""
    if _traced_numpy(target, index, value):
        writable(target, "a[i] = v")[index] = value
    else:
        target[index] = value


def setitem_either(target, index, test, when_true, when_false) -> None:
    """``if test: target[index] = when_true()`` / ``else: target[index] = when_false()``. With a traced test,
    one store of the selected value (both cast to the target's dtype and shaped as the region they go to,
    as the store would), not a conditional over the whole array."""
    if not _traced(test):
        setitem(target, index, when_true() if test else when_false())
        return
    region = getitem(target, index)
    if getattr(region, "is_dynamic_extent", False):
        value = if_expr(test, when_true, when_false)
    else:
        shape, dtype = np.shape(region), region.dtype

        def fitted(value_of):
            return lambda: broadcast_values(xnp.astype(xnp.asarray(value_of()), dtype), shape, advanced=False)
        value = if_expr(test, fitted(when_true), fitted(when_false))
    setitem(target, index, value)


_IN_PLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
             "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
             "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
             ">>=": operator.irshift}


def aug_setitem(target, index, op: str, value) -> None:
    """``target[index] op= value``, as Python runs it: the item read, updated in place, stored back."""
    if _traced_numpy(target, index, value):
        target = writable(target, f"a[i] {op} v")
    item = _IN_PLACE[op](target[index], value)
    if getattr(item, "is_dynamic_extent", False) and item.is_view:
        return          # x[i:j] with traced bounds is a view, which the update wrote through: storing it again is a no-op
    target[index] = item


# ---------------------------------------------------------------- calls


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with ``fn`` converted when it is the user's code, and builtins and NumPy
    creation functions that cannot take traced values routed to xlac, as is a NumPy array's method given
    traced values (to its traced value's). The state a user function reaches is watched as the traced
    function's own (see ``xlac.rebinding``): no traced value stays there. The arrays a NumPy function or
    method returns are noted as the call's own where they are new (see ``xlac.outside_state``)."""
    trace = current_trace()
    if trace is None:
        return fn(*args, **kwargs)
    replacement = substitute(fn, args, kwargs)
    if replacement is not None:
        return replacement(*args, **kwargs)
    run = converted(fn)
    owner = trace.outside_state()
    if run is not fn:
        if owner is not None:
            owner.watch_called(fn)
        try:
            return run(*args, **kwargs)
        except RecursionError:
            raise UnsupportedError(_endless_recursion(fn)) from None
    effects = effects_of(fn)
    array = getattr(fn, "__self__", None)
    if type(array) is np.ndarray and array.dtype in SUPPORTED and \
            any(isinstance(a, Tracer) for a in (*args, *kwargs.values())):
        # a NumPy array's method given traced values (`b.fill(t)`, `b.dot(t)`): its traced value's method
        return getattr(trace.capture(array, write="self" in effects.writes), fn.__name__)(*args, **kwargs)
    if effects.python_state and effects is not UNKNOWN:      # a library's function: assumed not to
        trace.python_effects.append(getattr(fn, "__qualname__", None) or repr(fn))
    result = fn(*args, **kwargs)
    if owner is not None and _is_numpys(fn):
        owner.note_made(fn, args, kwargs, result)
    return result


def _endless_recursion(fn) -> str:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)        # a function or a method
    return located(
        f"{getattr(fn, '__name__', repr(fn))} calls itself deeper than Python allows (sys.getrecursionlimit()) "
        "while tracing. Both branches of an `if` on a traced value are traced, so a recursion that ends on a "
        "traced value never ends: end it on a value known when tracing (a shape, a Python int, a static argument)",
        code and SourceLocation(code.co_filename, code.co_firstlineno, code.co_name))


def operator_result(value):
    """The value of an operator (``t = b * 2``) bound by an assignment: a NumPy array there is a new one, the
    call's own (see ``xlac.outside_state``)."""
    if type(value) is np.ndarray:
        trace = current_trace()
        owner = trace.outside_state() if trace is not None else None
        if owner is not None:
            owner.note_made(None, (), {}, value)
    return value


def _is_numpys(fn) -> bool:
    """Whether ``fn`` is a NumPy function, ufunc or array method (whose new arrays are the call's own)."""
    module = getattr(fn, "__module__", None) or ""
    return isinstance(getattr(fn, "__self__", None), np.ndarray) or isinstance(fn, np.ufunc) or \
        module == "numpy" or module.startswith("numpy.")


def call_allocation(fn, *args, **kwargs):
    """A call whose result the function writes into later (``out = np.zeros(n)`` then ``out[i] = ...``):
    a NumPy creation function makes an xlac array instead, which traced values can be written into."""
    if current_trace() is None:
        return fn(*args, **kwargs)
    replacement = substitute(fn, args, kwargs, writable=True)
    if replacement is not None:
        return replacement(*args, **kwargs)
    return call(fn, *args, **kwargs)
