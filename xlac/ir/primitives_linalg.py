"""Matrix decompositions: Cholesky, triangular solve, QR, LU, the symmetric (Hermitian) and general
eigendecompositions and the SVD.

Each works on the last two axes of its operands; leading axes are a batch. On CPU they are LAPACK calls;
elsewhere XLA expands cholesky, triangular_solve, qr and eigh into ordinary HLO, and lu, eig and svd have
no kernel (see :mod:`xlac.lowering.emitters_linalg`). Operands are float32, float64, complex64 or
complex128 matrices.

>>> from xlac.ir.types import TensorType
>>> a = TensorType((5, 3, 3), np.dtype("float32"))
>>> eigh.infer_types(a, lower=True)
(f32[5,3], f32[5,3,3])
>>> qr.infer_types(TensorType((4, 2), np.dtype("float64")), mode="complete")
(f64[4,4], f64[4,2])
>>> svd.infer_types(TensorType((2, 4, 3), np.dtype("complex64")), full_matrices=False, compute_uv=True)
(f32[2,3], c64[2,4,3], c64[2,3,3])
"""
from __future__ import annotations

import numpy as np

from xlac.ir.autocast_classes import FLOAT32
from xlac.ir.primitive import ShapeError, declare
from xlac.ir.types import TensorType

__all__ = ["cholesky", "triangular_solve", "qr", "eigh", "lu", "eig", "svd"]

LINALG_DTYPES = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
TRANSPOSE_KINDS = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")
QR_MODES = ("reduced", "complete", "raw")


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ShapeError(message)


def _matrices(name: str, a: TensorType, square: bool = True) -> None:
    _check(a.dtype in LINALG_DTYPES,
           f"{name} expects float32, float64, complex64 or complex128 matrices, got {a}")
    _check(a.ndim >= 2, f"{name} expects matrices (at least 2 axes), got {a}")
    if square:
        _check(a.shape[-1] == a.shape[-2], f"{name} expects square matrices, got {a}")


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a linalg dtype: complex64 -> float32, complex128 -> float64."""
    return {"complex64": np.dtype("float32"), "complex128": np.dtype("float64")}.get(dtype.name, dtype)


def _cholesky_rule(a: TensorType, *, lower: bool = True) -> TensorType:
    _matrices("cholesky", a)
    return a


# ``cholesky a``: the triangular factor (lower: L with a = L L^H; else U with a = U^H U), the other
# triangle zero. Only the named triangle of ``a`` is read; ``a`` that is not positive definite gives NaNs.
# The decompositions run in float32 under xlac.autocast: 16 bits lose too much in them.
cholesky = declare("cholesky", _cholesky_rule, category="linalg", autocast=FLOAT32)


def _triangular_solve_rule(a: TensorType, b: TensorType, *, left_side: bool, lower: bool,
                           transpose_a: str = "NO_TRANSPOSE", unit_diagonal: bool = False) -> TensorType:
    _matrices("triangular_solve", a)
    _check(transpose_a in TRANSPOSE_KINDS,
           f"triangular_solve: transpose_a must be one of {TRANSPOSE_KINDS}, got {transpose_a!r}")
    _check(b.dtype == a.dtype and b.ndim == a.ndim and b.shape[:-2] == a.shape[:-2],
           f"triangular_solve expects a right-hand side of {a}'s dtype and batch shape, got {a} and {b}")
    n, axis = a.shape[-1], (-2 if left_side else -1)
    _check(b.shape[axis] == n,
           f"triangular_solve: the {'rows' if left_side else 'columns'} of {b} must match the order {n} of {a}")
    return b


# ``triangular_solve a b``: x with op(a) x = b (left_side) or x op(a) = b, op(a) = a, a^T or a^H as
# ``transpose_a`` says; only the ``lower`` (or upper) triangle of a is read, its diagonal taken as ones
# with ``unit_diagonal``.
triangular_solve = declare("triangular_solve", _triangular_solve_rule, category="linalg", autocast=FLOAT32)


def _qr_rule(a: TensorType, *, mode: str = "reduced") -> tuple[TensorType, TensorType]:
    _matrices("qr", a, square=False)
    _check(mode in QR_MODES, f"qr: mode must be one of {QR_MODES}, got {mode!r}")
    *batch, m, n = a.shape
    k = min(m, n)
    batch = tuple(batch)
    if mode == "raw":
        return a, TensorType(batch + (k,), a.dtype)
    rows = m if mode == "complete" else k
    return TensorType(batch + (m, rows), a.dtype), TensorType(batch + (rows, n), a.dtype)


# ``qr a``: (q, r) with a = q r, q with orthonormal columns, r upper triangular; "reduced" gives q of
# shape (m, k), r (k, n), k = min(m, n), "complete" q (m, m), r (m, n). Whenever q is square, det(q) = 1
# (the last row of r carries the sign). "raw" gives LAPACK's geqrf pair instead: r above the diagonal and
# the Householder vectors below it, and the Householder scalars tau (no derivative).
qr = declare("qr", _qr_rule, multiple_results=True, category="linalg", autocast=FLOAT32)


def _eigh_rule(a: TensorType, *, lower: bool = True) -> tuple[TensorType, TensorType]:
    _matrices("eigh", a)
    return TensorType(a.shape[:-1], real_dtype(a.dtype)), a


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return {"float32": np.dtype("complex64"), "float64": np.dtype("complex128")}.get(dtype.name, dtype)


def _eig_rule(a: TensorType, *, vectors: bool = True) -> tuple[TensorType, TensorType]:
    _matrices("eig", a)
    complex_type = a.with_dtype(_complex_dtype(a.dtype))
    return TensorType(a.shape[:-1], complex_type.dtype), complex_type


# ``eig a``: (w, v), the eigenvalues of a general square matrix and its right eigenvectors (columns of v, each
# of unit 2-norm, a v = v diag(w)), complex for real input too, as LAPACK's geev gives them; with
# ``vectors=False`` v is not computed (its contents are undefined). Lowered where the device runs LAPACK.
eig = declare("eig", _eig_rule, multiple_results=True, category="linalg", autocast=FLOAT32)


def _lu_rule(a: TensorType) -> tuple[TensorType, TensorType]:
    _matrices("lu", a)
    return a, TensorType(a.shape[:-1], np.dtype("int32"))


# ``lu a``: (lu, pivots), LU decomposition with partial pivoting of square matrices, as LAPACK's getrf: lu
# holds L below its diagonal (L's unit diagonal implied) and U on and above it; row i was swapped with
# row pivots[i] (from 0) at step i, so that P a = L U. A singular matrix gives a zero on U's diagonal.
# Lowered only where the device has an LU kernel (xlac.runtime.kernels); xlac.numpy uses QR elsewhere.
lu = declare("lu", _lu_rule, multiple_results=True, category="linalg", autocast=FLOAT32)


# ``eigh a``: (w, v), the eigenvalues of the Hermitian matrix a in ascending order and its orthonormal
# eigenvectors (columns of v), a v = v diag(w). Only the ``lower`` (or upper) triangle of a is read.
eigh = declare("eigh", _eigh_rule, multiple_results=True, category="linalg", autocast=FLOAT32)


def _svd_rule(a: TensorType, *, full_matrices: bool = False, compute_uv: bool = True) -> tuple[TensorType, ...]:
    _matrices("svd", a, square=False)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    s = TensorType(batch + (k,), real_dtype(a.dtype))
    if not compute_uv:
        return (s,)
    u_columns, vt_rows = (m, n) if full_matrices else (k, k)
    return s, TensorType(batch + (m, u_columns), a.dtype), TensorType(batch + (vt_rows, n), a.dtype)


# ``svd a``: (s, u, vt) with a = u[..., :k] diag(s) vt[..., :k, :], k = min(m, n), the singular values s real and
# descending, u and vt^H with orthonormal columns: (m, k) and (k, n), or square (m, m) and (n, n) with
# ``full_matrices``; only (s,) with ``compute_uv=False``. Lowered where the device runs LAPACK (gesdd);
# xlac.numpy computes the SVD through eigh elsewhere. A failed (or NaN) decomposition gives NaNs.
svd = declare("svd", _svd_rule, multiple_results=True, category="linalg", autocast=FLOAT32)
