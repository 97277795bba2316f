"""How a public ``xlac.numpy`` function runs: traced inside a compiled function, eagerly outside.

>>> import xlac.numpy as xnp
>>> xnp.add.__name__
'add'
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlac.trace.context import current_trace, origin
from xlac.trace.tracer import Tracer


def numpy_function(fn):
    """Make ``fn`` a public xlac.numpy function.

    Inside a trace it records the nodes it binds with its name as their origin;
    outside a trace it runs eagerly: compiled once per signature and executed on
    the device, returning an ``xlac.Array``.
    """
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if current_trace() is None:
            from xlac.array import eager_call
            return eager_call(wrapper, args, kwargs)
        with origin(name):
            return fn(*args, **kwargs)

    wrapper.__wrapped_numpy__ = fn
    return wrapper


def static_value(x):
    """``x`` with NumPy scalars and small host arrays made Python values; traced values are left as they are.

    Eager calls treat NumPy scalars and arrays as dynamic data; a shape, axis or count must be static.
    """
    if x is None or type(x) is int or isinstance(x, Tracer):
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(static_value(e) for e in x)
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray) or hasattr(x, "__xlac_array__"):
        return np.asarray(x).tolist()
    return x


def numpy_function_with_static(*static_params):
    """``@numpy_function`` whose ``static_params`` are made Python values (see :func:`static_value`) first."""
    def decorate(fn):
        traced = numpy_function(fn)
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
