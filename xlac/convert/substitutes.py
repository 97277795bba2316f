"""What a converted call runs instead of a builtin or a NumPy function that cannot take traced values:
``max``/``min`` of traced numbers (Python compares them with ``bool()``), three-argument ``pow``, ``len`` of a
value whose length is known only when the program runs (a traced length), Python's
scalar functions (``float``, ``int``, ``round``, ``math.sqrt``, ...: :mod:`xlac.numpy.python_scalars`),
NumPy's creation functions (``np.zeros``, ``np.array([t1, t2])``, ...), which build NumPy arrays that a
traced value cannot be written into, NumPy's random functions (see :mod:`xlac.convert.numpy_random`), and
the methods of NumPy's ufuncs given lists of traced values (``np.logical_and.reduce([a > 0, b > 0])``).

>>> import numpy as np
>>> substitute(np.zeros, ((3,),), {}, writable=True).__module__
'xlac.numpy.creation'
>>> substitute(max, (1, 2), {}) is None           # nothing traced: Python's own max
True
"""
from __future__ import annotations

import builtins

import numpy as np

import xlac.numpy as xnp
from xlac.array import Array
from xlac.convert import numpy_random
from xlac.numpy.python_scalars import python_scalar_function
from xlac.trace import pytree
from xlac.trace.tracer import Tracer


def _extreme(pick):
    """``max``/``min`` over traced numbers: as Python's, the first of equal candidates wins."""
    def run(*args, key=None, default=None):
        items = list(args[0]) if len(args) == 1 else list(args)
        if key is not None:
            raise TypeError("max()/min() with key= over traced values is not supported: compare the keys "
                            "with xnp.where")
        if not items:
            if default is None:
                raise ValueError("max()/min() of an empty sequence")
            return default
        if len(args) == 1 and isinstance(args[0], Tracer):
            return (xnp.max if pick == "max" else xnp.min)(args[0], axis=0)
        best = items[0]
        for item in items[1:]:
            better = item > best if pick == "max" else item < best
            best = xnp.where(better, item, best)
        return best
    return run


def _pow(base, exp, mod=None):
    return base ** exp if mod is None else (base ** exp) % mod


def _len(obj):
    """``len`` of a value whose length is known only when the program runs (``x[mask]``): its traced length,
    as ``obj.shape[0]``; of anything else, Python's ``len``."""
    if getattr(obj, "is_dynamic_extent", False) and obj.ndim > 0:
        return obj.shape[0]
    return len(obj)


_BUILTINS = {builtins.max: _extreme("max"), builtins.min: _extreme("min"), builtins.pow: _pow, builtins.len: _len}

_CREATION_NAMES = ("zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace", "tri", "array",
                   "asarray", "asanyarray", "ascontiguousarray", "zeros_like", "ones_like", "empty_like",
                   "full_like", "diag", "stack", "vstack", "hstack", "concatenate", "column_stack")
_CREATION = {getattr(np, name): getattr(xnp, name) for name in _CREATION_NAMES}


def _ufunc_method(fn):
    """xlac.numpy's method for a NumPy ufunc's method (``np.logical_and.reduce``), or None: NumPy looks for
    traced values only among a method's operands, not inside a list of them (``[a > 0, b > 0]``)."""
    owner = getattr(fn, "__self__", None)
    if not isinstance(owner, np.ufunc) or getattr(np, owner.__name__, None) is not owner:
        return None
    return getattr(getattr(xnp, owner.__name__, None), fn.__name__, None)


def _has_traced(args, kwargs, kinds=(Tracer, Array)) -> bool:
    leaves, _ = pytree.flatten((list(args), dict(kwargs)))
    return any(isinstance(leaf, kinds) or getattr(leaf, "is_dynamic_extent", False) or
               getattr(leaf, "is_dynamic_shape", False) for leaf in leaves)


def substitute(fn, args, kwargs, writable: bool = False):
    """What to call instead of ``fn(*args, **kwargs)`` while tracing, or None for ``fn`` itself.
    ``writable``: the function writes into the result later (a NumPy allocation it fills)."""
    draw = numpy_random.replacement(fn)
    if draw is not None:
        return draw
    method = _ufunc_method(fn)
    if method is not None:
        return method if _has_traced(args, kwargs) else None
    scalar_function = python_scalar_function(fn)
    if scalar_function is not None:
        return scalar_function if _has_traced(args, kwargs, Tracer) else None     # an Array has its value
    try:
        allocation = _CREATION.get(fn)
        replacement = allocation or _BUILTINS.get(fn)
    except TypeError:                   # an unhashable callable
        return None
    if replacement is None or "like" in kwargs:          # like=: NumPy dispatches it to xlac itself
        return None
    return replacement if (allocation is not None and writable) or _has_traced(args, kwargs) else None
