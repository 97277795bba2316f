"""Helpers the rule modules share: zeros where a derivative is ``None``, the rules of linear and of
constant primitives, and batch axes.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> from xlac.trace.context import Trace
>>> with Trace() as t:
...     x = t.add_input(TensorType((5, 3), np.dtype("float32")))     # a batch of 3 along axis 1
...     front = to_front(x, 1, batch_size([x], [1]))
>>> front.shape
(3, 5)
"""
from __future__ import annotations

from xlac.passes.batching import move_batch_axis
from xlac.trace import ops
from xlac.trace.tracer import Tracer

__all__ = ["zeros", "or_zeros", "linear_jvp", "no_cotangents", "no_tangents", "batch_size", "shift_axes",
           "to_front"]


def zeros(shape, dtype) -> Tracer:
    """Zeros of ``shape`` and ``dtype`` in the current trace.

    >>> import numpy as np
    >>> from xlac.trace.context import Trace
    >>> with Trace():
    ...     z = zeros((2, 3), np.float32)
    >>> z.shape, str(z.dtype)
    ((2, 3), 'float32')
    """
    return ops.full(tuple(shape), 0, dtype)


def or_zeros(derivative: Tracer | None, like: Tracer) -> Tracer:
    """``derivative``, or zeros shaped like ``like`` where it is ``None`` (rules' zero).

    >>> import numpy as np
    >>> from xlac.ir.types import TensorType
    >>> from xlac.trace.context import Trace
    >>> with Trace() as t:
    ...     x = t.add_input(TensorType((4,), np.dtype("float64")))
    ...     same, zero = or_zeros(x, x), or_zeros(None, x)
    >>> same is x, zero.shape, str(zero.dtype)
    (True, (4,), 'float64')
    """
    return derivative if derivative is not None else zeros(like.shape, like.dtype)


def linear_jvp(apply):
    """The JVP of a primitive linear in its first operand (the others are indices or sizes):
    ``apply(attrs, tangent, operands)`` applied to the tangent of the first operand.

    >>> jvp = linear_jvp(lambda attrs, t, operands: ops.neg(t))
    >>> jvp({}, ["x"], ["y"], [None])
    [None]
    """
    def jvp(attrs, operands, results, tangents):
        if tangents[0] is None:
            return [None]
        return [apply(attrs, tangents[0], operands)]
    return jvp


def no_cotangents(attrs, operands, results, cotangents) -> list[None]:
    """The VJP of a primitive whose derivative is zero (comparisons, rounding, integer ops, indices).

    >>> no_cotangents({}, ["x", "y"], ["z"], ["ct"])
    [None, None]
    """
    return [None] * len(operands)


def no_tangents(attrs, operands, results, tangents) -> list[None]:
    """The JVP of a primitive whose derivative is zero.

    >>> no_tangents({}, ["x", "y"], ["z"], ["tx", None])
    [None]
    """
    return [None] * len(results)


def batch_size(operands, dims) -> int:
    """The batch size: the extent of the first batched operand along its batch axis.

    >>> import numpy as np
    >>> batch_size([np.ones(3), np.ones((2, 7))], [None, 1])
    7
    """
    return next(x.shape[d] for x, d in zip(operands, dims) if d is not None)


def shift_axes(axes, dim: int) -> tuple[int, ...]:
    """Axes of an example renumbered for the batched array whose batch axis is ``dim``.

    >>> shift_axes((0, 1, 2), 1)
    (0, 2, 3)
    """
    return tuple(a if a < dim else a + 1 for a in axes)


def to_front(x: Tracer, dim: int | None, size: int) -> Tracer:
    """``x`` with its batch axis first (broadcast to ``size`` where ``dim`` is ``None``: unbatched).

    >>> import numpy as np
    >>> from xlac.trace.context import Trace
    >>> with Trace():
    ...     shared = to_front(ops.full((2,), 1.0, np.float32), None, 4)
    >>> shared.shape
    (4, 2)
    """
    return move_batch_axis(x, dim, 0, size)

