"""How a public ``xlac.numpy`` function runs. Every call takes one of three routes (:func:`numpy_function`):

1. Outside a trace, the eager runner (registered by :mod:`xlac.eager`, which compiles and so sits above this
   package) compiles the function once per signature and runs it on the device, returning an ``xlac.Array``.
2. Inside a trace, when an argument (or an item of a list or tuple argument) has a dynamic extent
   (``x[i:j]`` with traced bounds, ``x[mask]`` with a traced mask), the function's dynamic-extent rule runs
   (:func:`dynamic_call`): the rules are registered by function object, next to each rule
   (:func:`dynamic_extent_rule`, in :mod:`xlac.numpy.dynamic_extent_math` and its siblings); a function without
   one raises.
3. Otherwise the function itself runs on tracers, recording its nodes with its name as their origin.

>>> import xlac.numpy as xnp
>>> xnp.add.__name__
'add'
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.trace.state import current_trace, origin
from xlac.trace.tracer import Tracer
from xlac.trace.views import VIEW_KINDS, finish_result


def numpy_function(fn=None, *, view: str | None = None, rule_key=None, makes_array: bool = False):
    """Make ``fn`` a public xlac.numpy function.

    Inside a trace it records the nodes it binds with its name as their origin;
    outside a trace it runs eagerly: compiled once per signature and executed on
    the device, returning an ``xlac.Array``.

    ``view`` says what NumPy's function returns: "writable" or "readonly" for a view
    of the first argument (where NumPy gives a view), "alias" for the argument itself
    (``asarray``), None for a new array: a result that is one of the inputs is then copied.

    ``rule_key``: what its dynamic-extent rule is registered under (:func:`dynamic_extent_rule`), where that
    is not the function itself: ``(ufunc, method name)`` for a ufunc's method.

    A new 0-d result is a NumPy scalar (``x.sum()``, ``a @ b`` of vectors, ``np.tanh(s)``): a value whose
    augmented assignment rebinds the name, as NumPy's ``t += 1`` does, unless ``makes_array`` (the creation
    functions, ``np.copy``, ``np.where``: NumPy gives a 0-d array, which ``+=`` writes in place).
    """
    if fn is None:
        return functools.partial(numpy_function, view=view, rule_key=rule_key, makes_array=makes_array)
    if view is not None and view not in VIEW_KINDS:
        raise ValueError(f"view must be one of {VIEW_KINDS}, got {view!r}")
    name = fn.__name__
    rule_key = fn if rule_key is None else rule_key

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        trace = current_trace()
        if trace is None:
            return _eager_call(wrapper, args, kwargs)
        if _holds_dynamic_extent(args, kwargs):
            return dynamic_call(rule_key, args, kwargs)
        first_node = len(trace.graph.nodes)
        with origin(name):
            result = fn(*args, **kwargs)
        result = finish_result(trace, args, result, first_node, view)
        if view is None and not makes_array and isinstance(result, Tracer) and result.ndim == 0 and \
                result.mutability == "mutable" and not _is_given(result, args, kwargs):
            result.mutability = "value"
        return result

    wrapper.__wrapped_numpy__ = fn
    return wrapper


def _is_given(result: Tracer, args, kwargs) -> bool:
    """Whether ``result`` is one of the arguments (an ``out=`` array the function wrote and returns)."""
    for arg in (*args, *kwargs.values()):
        if arg is result or isinstance(arg, (tuple, list)) and any(item is result for item in arg):
            return True
    return False


def _holds_dynamic_extent(args, kwargs) -> bool:
    """Whether an argument (or an item of a list or tuple argument) is a value with a dynamic extent, or
    the shape of one."""
    for arg in (*args, *kwargs.values()):
        if getattr(arg, "is_dynamic_extent", False) or getattr(arg, "is_dynamic_shape", False) or \
                isinstance(arg, (list, tuple)) and \
                any(getattr(item, "is_dynamic_extent", False) for item in arg):
            return True
    return False


# Each function's rule for arguments with a dynamic extent, under :func:`_rule_key` of the function.
_DYNAMIC_EXTENT_RULES: dict = {}
# The keys of the rules that take the shape of a dynamic value (``np.zeros(v.shape)``) as an argument.
_TAKES_DYNAMIC_SHAPE: set = set()


def _rule_key(function):
    """What ``function``'s dynamic-extent rule is registered under: the implementation behind an xlac.numpy
    function's wrappers (``xnp.max`` and ``xnp.amax`` are one), ``(that of a ufunc, method name)`` for a
    ufunc's method, anything else (``operator.setitem``) as it is."""
    if isinstance(function, tuple):
        ufunc, method = function
        return _rule_key(ufunc), method
    return getattr(function, "__wrapped_numpy__", function)


def _public_name(function) -> str:
    if isinstance(function, tuple):
        ufunc, method = function
        return f"{ufunc.__name__}.{method}"
    return function.__name__


def dynamic_extent_rule(*functions, takes_shape: bool = False):
    """Register the decorated function as what each of ``functions`` computes when an argument has a dynamic
    extent: an xlac.numpy function, ``(ufunc, method name)`` for a ufunc's method, or ``operator.setitem``
    (the statement ``x[index] = value``, as a new ``x``). A function takes one rule. ``takes_shape``: the
    rule also takes a dynamic value's shape (``np.zeros(v.shape)``); other functions given one raise.

    >>> import numpy as np, xlac
    >>> @xlac.compile
    ... def tail_sum(x, i):
    ...     return np.sum(x[i:])     # the rule registered for xnp.sum: xlac.numpy.dynamic_extent_math
    >>> float(tail_sum(np.arange(4.0), 1))
    6.0
    """
    def register(rule):
        for function in functions:
            key = _rule_key(function)
            if key in _DYNAMIC_EXTENT_RULES:
                raise ValueError(f"{_public_name(function)} already has a dynamic-extent rule")
            _DYNAMIC_EXTENT_RULES[key] = rule
            if takes_shape:
                _TAKES_DYNAMIC_SHAPE.add(key)
        return rule
    return register


def dynamic_call(function, args, kwargs):
    """``function`` (as :func:`dynamic_extent_rule` takes it) on arguments some of which have a dynamic extent:
    its registered rule, or an error naming it.

    >>> import xlac.numpy as xnp
    >>> dynamic_call(xnp.fft.fft, (), {})
    Traceback (most recent call last):
    xlac.errors.UnsupportedError: fft of a value whose length is known only when the program runs ...
    """
    key = _rule_key(function)
    if key not in _TAKES_DYNAMIC_SHAPE and any(getattr(a, "is_dynamic_shape", False)
                                               for a in (*args, *kwargs.values())):
        raise UnsupportedError(located(
            f"{_public_name(function)} of the shape of a value whose length is known only when the program runs: "
            "np.zeros, ones, empty, full and the *_like functions take it (a new value of the same extent)"))
    rule = _DYNAMIC_EXTENT_RULES.get(key)
    if rule is None:
        raise UnsupportedError(located(f"{_public_name(function)} of a value whose length is known only when the "
                                       "program runs (x[i:j] with traced bounds, x[mask] with a traced mask) is "
                                       "not supported"))
    return rule(*args, **kwargs)


def _no_eager_runner(fn, args, kwargs):
    raise RuntimeError("xlac internal error: xlac.numpy was used before xlac.eager registered its runner")


_eager_call = _no_eager_runner


def set_eager_runner(run) -> None:
    """Registration point for :mod:`xlac.eager`: ``run(fn, args, kwargs)`` executes ``fn`` outside a trace.
    (Eager execution compiles, and the compiler sits above this package.)"""
    global _eager_call
    _eager_call = run


def static_value(x):
    """``x`` with NumPy scalars and small host arrays made Python values; traced values are left as they are.

    Eager calls treat NumPy scalars and arrays as dynamic data; a shape, axis or count must be static.
    """
    if x is None or type(x) is int or isinstance(x, Tracer) or getattr(x, "is_dynamic_shape", False):
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(static_value(e) for e in x)
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray) or hasattr(x, "__xlac_array__"):
        return np.asarray(x).tolist()
    return x


def numpy_function_with_static(*static_params, view: str | None = None, makes_array: bool = False):
    """``@numpy_function`` whose ``static_params`` are made Python values (see :func:`static_value`) first."""
    def decorate(fn):
        traced = numpy_function(fn, view=view, makes_array=makes_array)
        names = list(inspect.signature(fn).parameters)
        positions = [(names.index(p), p) for p in static_params]

        @functools.wraps(fn)
        def public(*args, **kwargs):
            if any(i < len(args) for i, _ in positions):
                args = list(args)
                for i, _ in positions:
                    if i < len(args):
                        args[i] = static_value(args[i])
            for _, name in positions:
                if name in kwargs:
                    kwargs[name] = static_value(kwargs[name])
            return traced(*args, **kwargs)

        public.__wrapped_numpy__ = fn
        return public
    return decorate
