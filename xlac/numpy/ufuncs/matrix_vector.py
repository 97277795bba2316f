"""The matrix-vector generalized ufuncs ``matvec`` and ``vecmat``.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.matvec(np.eye(2), np.array([1.0, 2.0])))
array([1., 2.])
"""
from __future__ import annotations

from xlac.errors import located
from xlac.numpy.ufuncs.machinery import ufunc
from xlac.trace import ops

__all__ = ["matvec", "vecmat"]


def _gufunc_operands(name: str, signature: str, x1, x2, core_ndims):
    from xlac.numpy.contractions import _operand     # contractions builds on the ufuncs
    operands = _operand(x1), _operand(x2)
    for k, (t, need) in enumerate(zip(operands, core_ndims)):
        if t.ndim < need:
            raise ValueError(located(f"{name}: Input operand {k} does not have enough dimensions (has {t.ndim}, "
                                     f"gufunc core with signature {signature} requires {need})"))
    return operands


def _core_mismatch(name: str, signature: str, expected: int, got: int):
    if expected != got:
        raise ValueError(located(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                 f"signature {signature} (size {got} is different from {expected})"))


def _contract_batched(name, a, a_core, b, b_core, out_core):
    """``a`` and ``b`` contracted over their shared core labels, the leading (loop) axes broadcast."""
    from xlac.numpy.contractions import _contract     # contractions builds on the ufuncs
    loop = ops.broadcast_shapes(a.shape[:a.ndim - len(a_core)], b.shape[:b.ndim - len(b_core)], op=name)
    names = [f"loop{d}" for d in range(len(loop))]
    labels_a = names[len(names) - (a.ndim - len(a_core)):] + a_core
    labels_b = names[len(names) - (b.ndim - len(b_core)):] + b_core
    return _contract([a, b], [labels_a, labels_b], names + out_core, name)


MATVEC_SIGNATURE = "(m,n),(n)->(m)"
VECMAT_SIGNATURE = "(n),(n,m)->(m)"


@ufunc(signature=MATVEC_SIGNATURE)
def matvec(x1, x2):
    """Matrix-vector product over the last axes, the others broadcast (the matrix is not conjugated).

    >>> np.asarray(xnp.matvec(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0])))
    array([3., 7.])
    """
    a, b = _gufunc_operands("matvec", MATVEC_SIGNATURE, x1, x2, (2, 1))
    _core_mismatch("matvec", MATVEC_SIGNATURE, a.shape[-1], b.shape[-1])
    return _contract_batched("matvec", a, ["m", "n"], b, ["n"], ["m"])


@ufunc(signature=VECMAT_SIGNATURE)
def vecmat(x1, x2):
    """Vector-matrix product over the last axes, the others broadcast; the vector is conjugated.

    >>> np.asarray(xnp.vecmat(np.array([1j, 1.0]), np.array([[1j], [2.0]])))
    array([3.+0.j])
    """
    a, b = _gufunc_operands("vecmat", VECMAT_SIGNATURE, x1, x2, (1, 2))
    _core_mismatch("vecmat", VECMAT_SIGNATURE, a.shape[-1], b.shape[-2])
    return _contract_batched("vecmat", ops.conj(a), ["n"], b, ["n", "m"], ["m"])
