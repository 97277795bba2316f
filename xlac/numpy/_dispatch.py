"""How a public ``xlac.numpy`` function runs: traced inside a compiled function, eagerly outside.

>>> import xlac.numpy as xnp
>>> xnp.add.__name__
'add'
"""
from __future__ import annotations

import functools

from xlac.trace.context import current_trace, origin


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
