"""Helpers shared by the sorting parts: checks of arguments known on the host.

>>> _concrete([1, 2]).tolist()
[1, 2]
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlac.numpy._dispatch import numpy_function
from xlac.trace.tracer import Tracer


def _concrete(x):
    """``x`` as a host NumPy array when its value is known now (not a traced value), else None."""
    if isinstance(x, Tracer):
        return None
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) for e in x):
        return None
    return np.asarray(x)


def _checked(check, scalar: str | None = None):
    """A public xlac.numpy function that first runs ``check(*args, **kwargs)``: checks of values known on
    the host (NumPy arrays, lists, xlac.Arrays), in and out of a trace. A NumPy scalar given for the
    parameter ``scalar`` (a count) is made a Python one, a static value."""
    def decorate(fn):
        traced = numpy_function(fn)
        position = list(inspect.signature(fn).parameters).index(scalar) if scalar else None

        @functools.wraps(fn)
        def public(*args, **kwargs):
            if position is not None and position < len(args) and isinstance(args[position], np.generic):
                args = args[:position] + (args[position].item(),) + args[position + 1:]
            if scalar in kwargs and isinstance(kwargs[scalar], np.generic):
                kwargs[scalar] = kwargs[scalar].item()
            check(*args, **kwargs)
            return traced(*args, **kwargs)
        public.__wrapped_numpy__ = fn
        return public
    return decorate
