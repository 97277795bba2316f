"""``where`` and ``clip``: elementwise selection, not ufuncs.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.clip(np.array([-1, 9]), 0, 6))
array([0, 6])
"""
from __future__ import annotations

from xlac.numpy import sorting
from xlac.errors import located
from xlac.numpy import _out
from xlac.numpy._core import asarray, promote
from xlac.numpy._dispatch import numpy_function
from xlac.numpy.ufuncs.arithmetic import maximum, minimum
from xlac.numpy.ufuncs.operands import _to_bool
from xlac.numpy.ufuncs.python_ints import clipped_bound, wrapped_into
from xlac.trace import ops

__all__ = ["where", "clip"]


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``, broadcast together; with one argument, ``nonzero(condition)``
    (inside a compiled function, values whose length is known only when the program runs).

    >>> np.asarray(xnp.where(np.array([True, False]), 1.0, np.array([5.0, 6.0])))
    array([1., 6.])
    """
    if x is None and y is None:
        return sorting.nonzero(condition)
    return _select(condition, x, y)


def _select(condition, x, y):
    if x is None or y is None:
        raise ValueError(located("either both or neither of x and y should be given"))
    x, y = wrapped_into(x, y), wrapped_into(y, x)
    a, b = promote("where", x, y)
    c = _to_bool(condition)
    shape = ops.broadcast_shapes(c.shape, a.shape, op="where")
    return ops.select(ops.broadcast_to(c, shape), ops.broadcast_to(a, shape), ops.broadcast_to(b, shape))


_select.__name__ = "where"           # the origin of its nodes, and the name a dynamic value dispatches on
_select = numpy_function(_select, makes_array=True)
where.__wrapped_numpy__ = _select.__wrapped_numpy__


@numpy_function
def clip(a, /, min=None, max=None, out=None, *, a_min=None, a_max=None):
    """``a`` limited to ``[min, max]`` (the standard's names; NumPy's ``a_min``/``a_max`` as keywords too),
    with NumPy's promotion of the bounds; ``out=`` casts as a ufunc's (``same_kind``). With no bound it is
    a copy of ``a``.

    >>> np.asarray(xnp.clip(np.array([-1, 5, 9]), 0, 6))
    array([0, 5, 6])
    >>> np.asarray(xnp.clip(np.array([-1, 5, 9]), a_max=6))
    array([-1,  5,  6])
    """
    if min is not None and a_min is not None or max is not None and a_max is not None:
        raise TypeError(located("clip: give each bound once, as min/max or as a_min/a_max, not both"))
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    dst = _out.output_operand(out, "clip", ufunc=True)
    result = asarray(a)
    a_min, a_max = clipped_bound(a_min, result, lower=True), clipped_bound(a_max, result, lower=False)
    if a_min is not None:
        result = maximum.__wrapped_numpy__(result, a_min)
    if a_max is not None:
        result = minimum.__wrapped_numpy__(result, a_max)
    if dst is None:
        return result
    _out.check_output_casting("clip", result, dst, "same_kind")
    return _out.store(dst, result)
