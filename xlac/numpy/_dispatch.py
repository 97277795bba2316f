"""How a public ``xlac.numpy`` function runs. Every call takes one of three routes (:func:`numpy_function`):

1. Outside a trace, the eager runner (registered by :mod:`xlac.eager`, which compiles and so sits above this
   package) compiles the function once per signature and runs it on the device, returning an ``xlac.Array``.
2. Inside a trace, when an argument (or an item of a list or tuple argument) has a dynamic extent
   (``x[i:j]`` with traced bounds, ``x[mask]`` with a traced mask), the dynamic-extent dispatch (registered by
   :mod:`xlac.numpy.dynamic_extent_math`) runs that function's rule for such values, or raises.
3. Otherwise the function itself runs on tracers, recording its nodes with its name as their origin.

>>> import xlac.numpy as xnp
>>> xnp.add.__name__
'add'
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlac.trace.state import current_trace, origin
from xlac.trace.tracer import Tracer
from xlac.trace.views import VIEW_KINDS, finish_result


def numpy_function(fn=None, *, view: str | None = None):
    """Make ``fn`` a public xlac.numpy function.

    Inside a trace it records the nodes it binds with its name as their origin;
    outside a trace it runs eagerly: compiled once per signature and executed on
    the device, returning an ``xlac.Array``.

    ``view`` says what NumPy's function returns: "writable" or "readonly" for a view
    of the first argument (where NumPy gives a view), "alias" for the argument itself
    (``asarray``), None for a new array: a result that is one of the inputs is then copied.
    """
    if fn is None:
        return functools.partial(numpy_function, view=view)
    if view is not None and view not in VIEW_KINDS:
        raise ValueError(f"view must be one of {VIEW_KINDS}, got {view!r}")
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        trace = current_trace()
        if trace is None:
            return _eager_call(wrapper, args, kwargs)
        if _holds_dynamic_extent(args, kwargs):
            return dynamic_call(name, args, kwargs)
        first_node = len(trace.graph.nodes)
        with origin(name):
            result = fn(*args, **kwargs)
        return finish_result(trace, args, result, first_node, view)

    wrapper.__wrapped_numpy__ = fn
    return wrapper


def _holds_dynamic_extent(args, kwargs) -> bool:
    """Whether an argument (or an item of a list or tuple argument) is a value with a dynamic extent, or
    the shape of one."""
    for arg in (*args, *kwargs.values()):
        if getattr(arg, "is_dynamic_extent", False) or getattr(arg, "is_dynamic_shape", False) or \
                isinstance(arg, (list, tuple)) and \
                any(getattr(item, "is_dynamic_extent", False) for item in arg):
            return True
    return False


def _dynamic_call(name, args, kwargs):
    raise RuntimeError("xlac internal error: xlac.numpy.dynamic_extent did not register its dispatch")


def dynamic_call(name: str, args, kwargs):
    """The xlac.numpy (or NumPy) function ``name`` on arguments some of which have a dynamic extent."""
    return _dynamic_call(name, args, kwargs)


def set_dynamic_dispatch(call) -> None:
    """Registration point for :mod:`xlac.numpy.dynamic_extent`: ``call(name, args, kwargs)`` runs the
    xlac.numpy function ``name`` on arguments some of which have a dynamic extent."""
    global _dynamic_call
    _dynamic_call = call


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


def numpy_function_with_static(*static_params, view: str | None = None):
    """``@numpy_function`` whose ``static_params`` are made Python values (see :func:`static_value`) first."""
    def decorate(fn):
        traced = numpy_function(fn, view=view)
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
