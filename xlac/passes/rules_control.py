"""VJP, JVP and batching rules of the control-flow primitives (``while``, ``case``).

Differentiating and batching loops and branches is not built yet: each rule raises an
:class:`~xlac.errors.UnsupportedError` that says so, with the user's line, instead of a wrong result.

>>> from xlac.ir import primitives as P
>>> P.while_.vjp is not None and P.case.batch is not None
True
"""
from __future__ import annotations

from xlac.errors import UnsupportedError, located
from xlac.ir import primitives as P

__all__: list[str] = []

_API_NAME = {P.while_: "xlac.while_loop / fori_loop / scan", P.case: "xlac.cond / switch"}


def _refusal(primitive, transform: str):
    def rule(*args, **kwargs):
        raise UnsupportedError(located(f"{transform} of {_API_NAME[primitive]} is not supported yet: "
                                       "compute the derivative or the batch outside the loop or branch"))
    return rule


for _primitive in (P.while_, P.case):
    _primitive.register(vjp=_refusal(_primitive, "reverse-mode differentiation (grad, vjp)"),
                        jvp=_refusal(_primitive, "forward-mode differentiation (jvp, jacfwd)"),
                        batch=_refusal(_primitive, "vmap"))
