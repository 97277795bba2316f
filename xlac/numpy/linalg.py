"""``xlac.numpy.linalg``: NumPy 2's ``numpy.linalg``, on the device's solver library (LAPACK, cuSOLVER,
hipSOLVER) where it has one, else on XLA's decompositions.

Everything is built on the primitives of :mod:`xlac.ir.primitives_linalg`: Cholesky, triangular solve, LU
with partial pivoting, Householder QR, the eigendecompositions of Hermitian and general matrices and the
SVD, each with derivatives and batching rules. On CPU they call LAPACK (potrf, trsm, getrf, geqrf/orgqr,
syevd/heevd, geev, gesdd) as NumPy and JAX do; on GPUs the same calls as JAX's (cuSOLVER's or hipSOLVER's
potrf, getrf, geqrf/orgqr, syevd, gesvdj/gesvd, the plugin's host-side geev; XLA's triangular solve); on
a device without solver kernels (TPU) XLA expands cholesky, triangular solve, QR and eigh into plain HLO. ``det``, ``slogdet``, ``inv`` and ``solve`` use LU as NumPy does (QR on a device
without solver kernels: there a singular matrix is found only when R has an exact zero); ``svd`` and everything
built on it (``svdvals``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cond``, the 2- and nuclear norms) use
LAPACK's gesdd on CPU (cuSOLVER's SVD on GPUs), and elsewhere the eigendecomposition of the Jordan-Wielandt matrix
``[[0, A], [A^H, 0]]``, whose eigenvalues are plus and minus the singular values of A: singular values
come out accurate to about ``eps * ||A||`` (absolutely), as LAPACK's.

Stacks of matrices ``(..., M, N)`` work wherever NumPy allows them. Integer and boolean inputs are
computed in float64; float16 is refused, as NumPy refuses it. Derivatives of ``eigh`` and
``cholesky`` treat the input as Hermitian (its gradient is Hermitian), as JAX's do.

A singular matrix given to ``solve`` or ``inv`` (an exact zero pivot, as LAPACK's getrf reports it), a
matrix ``cholesky`` cannot factor and an SVD that did not converge (NaN in the input, as NumPy) raise
NumPy's LinAlgError after the call, naming the user's line (the
after-call checks of :mod:`xlac.trace.checks`; with ``check_bounds=False`` the results hold inf or NaN).
Deviation: float32 inputs are computed in float32 (NumPy computes them in float64 and rounds), so
results are accurate to float32's epsilon times the condition number.
Deviation: the named tuples (EighResult, SVDResult, QRResult, SlogdetResult) cannot yet be returned
as they are from a compiled function (xlac's pytrees take plain tuples): unpack them or ``tuple()`` them.

>>> import numpy as np, xlac.numpy as xnp
>>> round(float(xnp.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
5.0
"""
from __future__ import annotations

import functools
import numbers
import operator
from typing import NamedTuple

import numpy as np

from xlac.ir.dtypes import FLOAT64
from xlac.errors import UnsupportedError, located, user_location
from xlac.ir import dtypes
from xlac.numpy import _out, contractions, reductions, shapes, ufuncs
from xlac.numpy._core import asarray, normalize_axis, promote
from xlac.numpy._dispatch import numpy_function, numpy_function_with_static
from xlac.passes.rules.linalg import lu_factors, lu_solve, permutation_matrix, permute_rows, pivots_to_permutation
from xlac.trace import ops
from xlac.trace.checks import Check
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "solve", "cholesky", "qr", "eigh",
           "eigvalsh", "eig", "eigvals", "svd", "svdvals", "matrix_power", "matrix_rank", "pinv", "lstsq",
           "multi_dot", "cond", "tensorsolve", "tensorinv", "matrix_transpose", "diagonal", "trace", "outer",
           "cross", "vecdot", "matmul", "tensordot", "LinAlgError",
           "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]

LinAlgError = np.linalg.LinAlgError
SUPPORTED = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _named(result_type, plain=lambda args, kwargs: False):
    """Wrap a public function whose traced body returns a plain tuple so that it returns ``result_type``
    (NumPy's named tuples); a non-tuple result (``svd(compute_uv=False)``), or any result of a call that
    ``plain(args, kwargs)`` picks, passes through."""
    def decorate(public):
        @functools.wraps(public)
        def call(*args, **kwargs):
            out = public(*args, **kwargs)
            return result_type(*out) if type(out) is tuple and not plain(args, kwargs) else out
        call.__wrapped_numpy__ = public.__wrapped_numpy__
        return call
    return decorate


# ---------------------------------------------------------------- operands


def _linalg_dtype(dtype: np.dtype, op: str) -> np.dtype:
    """The dtype NumPy's linalg computes ``dtype`` in: integers and bools in float64; float16 refused."""
    if dtype == np.bool_ or dtypes.is_int(dtype):
        return FLOAT64
    if dtype not in SUPPORTED:
        raise TypeError(located(f"{op}: array type {dtype} is unsupported in linalg "
                                "(it takes float32, float64, complex64 and complex128 arrays)"))
    return dtype


def _operands(op: str, *xs) -> list[Tracer]:
    """Arrays converted to their common linalg dtype (float32 only if every one is float32 or complex64)."""
    arrays = [asarray(x) for x in xs]
    target = np.result_type(*(_linalg_dtype(a.dtype, op) for a in arrays))
    return [ops.convert(a, target) for a in arrays]


def _check_matrices(a: Tracer, op: str, square: bool = False) -> None:
    if a.ndim < 2:
        raise LinAlgError(located(f"{op}: {a.ndim}-dimensional array given. Array must be at least "
                                  "two-dimensional"))
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError(located(f"{op}: Last 2 dimensions of the array must be square, got shape {a.shape}"))


def _matrix(a, op: str, square: bool = False) -> Tracer:
    (x,) = _operands(op, a)
    _check_matrices(x, op, square)
    return x


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return {"complex64": np.dtype("float32"), "complex128": FLOAT64}.get(dtype.name, dtype)


def _is_complex(x: Tracer) -> bool:
    return x.dtype.kind == "c"


# ---------------------------------------------------------------- traced helpers


def _h(x: Tracer) -> Tracer:
    return ops.matrix_transpose(x, conjugate=True)


def _batch_broadcast(a: Tracer, b: Tracer, op: str) -> tuple[Tracer, Tracer]:
    """Two stacks of matrices with their batch (leading) axes broadcast to one shape."""
    batch = ops.broadcast_shapes(a.shape[:-2], b.shape[:-2], op=op)
    return ops.broadcast_to(a, batch + a.shape[-2:]), ops.broadcast_to(b, batch + b.shape[-2:])


def _diagonal_of(x: Tracer) -> Tracer:
    """The diagonal of the last two axes: shape (..., min(M, N))."""
    k = min(x.shape[-2:])
    square = ops.slice(x, (0,) * x.ndim, x.shape[:-2] + (k, k))
    flat = ops.reshape(square, x.shape[:-2] + (k * k,))           # the diagonal: every (k + 1)-th element
    return ops.slice(flat, (0,) * (x.ndim - 1), x.shape[:-2] + (k * k,), (1,) * (x.ndim - 2) + (k + 1,))


def _scale_columns(x: Tracer, v: Tracer) -> Tracer:
    """x * v[..., None, :]."""
    return ops.mul(x, ops.broadcast_in_dim(v, x.shape, tuple(range(x.ndim - 2)) + (x.ndim - 1,)))


def _phase(d: Tracer) -> Tracer:
    """d / |d|, and 1 where d == 0: the sign of a real d, the unit phase of a complex one."""
    zero = ops.full(d.shape, 0, d.dtype)
    is_zero = ops.compare(d, zero, "EQ")
    if not _is_complex(d):
        return ops.select(is_zero, ops.full(d.shape, 1, d.dtype), ops.sign(d))
    magnitude = ops.abs(d)
    magnitude = ops.select(is_zero, ops.full(magnitude.shape, 1, magnitude.dtype), magnitude)
    return ops.select(is_zero, ops.full(d.shape, 1, d.dtype),
                      ops.div(d, ops.complex(magnitude, ops.full(magnitude.shape, 0, magnitude.dtype))))


def _eye(n: int, dtype, batch=()) -> Tracer:
    return ops.constant(np.ascontiguousarray(np.broadcast_to(np.eye(n, dtype=dtype), tuple(batch) + (n, n))))


def _solve_square(a: Tracer, b: Tracer) -> Tracer:
    """a^-1 b for square a (..., M, M) and b (..., M, K) of one batch shape, by QR: r^-1 (q^H b)."""
    q, r = ops.qr(a, "reduced")
    return ops.triangular_solve(r, ops.matmul(_h(q), b), left_side=True, lower=False)


def _normalize_phases(q: Tracer, r: Tracer, k: int) -> Tracer:
    """The first k columns of q multiplied by the phases of r's diagonal: they then point along the
    columns that the QR factored (r's diagonal made positive)."""
    phase = _phase(_diagonal_of(r))                          # (..., k)
    if q.shape[-1] > k:
        ones = ops.full(phase.shape[:-1] + (q.shape[-1] - k,), 1, phase.dtype)
        phase = ops.concatenate([phase, ones], phase.ndim - 1)
    return _scale_columns(q, phase)


def _jordan_wielandt(a: Tracer) -> Tracer:
    """[[0, a], [a^H, 0]]: Hermitian, with eigenvalues +-s_i (the singular values of a) and |m - n| zeros."""
    *batch, m, n = a.shape
    batch = tuple(batch)
    top = ops.concatenate([ops.full(batch + (m, m), 0, a.dtype), a], a.ndim - 1)
    bottom = ops.concatenate([_h(a), ops.full(batch + (n, n), 0, a.dtype)], a.ndim - 1)
    return ops.concatenate([top, bottom], a.ndim - 2)


def _svd_parts(a: Tracer, compute_uv: bool, full_matrices: bool, failure: str = "SVD did not converge"):
    """(u, s, vh) or s of a stack of matrices: the device's SVD kernel (LAPACK's gesdd, cuSOLVER's gesvdj or
    gesvd) where it has one, else from the eigendecomposition of the Jordan-Wielandt matrix. NaN singular values (a failed decomposition, or NaN in
    ``a``) raise NumPy's LinAlgError(``failure``) after the call."""
    if _device_has_solvers():
        parts = ops.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    else:
        parts = _jordan_wielandt_svd(a, compute_uv, full_matrices)
    s = parts[0]
    if s.size:
        _require_after_call(ops.not_(_any_nan(s)), failure)
    return (parts[1], s, parts[2]) if compute_uv else s


def _jordan_wielandt_svd(a: Tracer, compute_uv: bool, full_matrices: bool) -> tuple[Tracer, ...]:
    """(s, u, vh) or (s,) of a stack of matrices, from the eigendecomposition of its Jordan-Wielandt matrix.

    The eigenvectors of the k = min(M, N) largest eigenvalues s_i are [u_i; v_i] / sqrt(2). Their halves
    are orthonormalized by QR (which also completes the bases where full_matrices, and where s_i = 0 and
    the eigenvector mixes +s_i and -s_i), and the columns given back their direction (and phase)."""
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    real = _real_dtype(a.dtype)
    if k == 0:
        s = ops.full(batch + (0,), 0, real)
        if not compute_uv:
            return (s,)
        u = _eye(m, a.dtype, batch) if full_matrices else ops.full(batch + (m, 0), 0, a.dtype)
        vh = _eye(n, a.dtype, batch) if full_matrices else ops.full(batch + (0, n), 0, a.dtype)
        return s, u, vh
    w, x = ops.eigh(_jordan_wielandt(a))
    nd = a.ndim
    top_w = ops.reverse(ops.slice(w, (0,) * (nd - 2) + (m + n - k,), w.shape), (nd - 2,))
    s = ops.max(top_w, ops.full(top_w.shape, 0, real))
    if not compute_uv:
        return (s,)
    top_x = ops.reverse(ops.slice(x, (0,) * (nd - 1) + (m + n - k,), x.shape), (nd - 1,))
    xu = ops.slice(top_x, (0,) * nd, batch + (m, k))
    xv = ops.slice(top_x, (0,) * (nd - 2) + (m, 0), batch + (m + n, k))
    mode = "complete" if full_matrices else "reduced"
    qu, ru = ops.qr(xu, mode)
    qv, rv = ops.qr(xv, mode)
    return s, _normalize_phases(qu, ru, k), _h(_normalize_phases(qv, rv, k))


def _sort_descending(keys: Tracer, *payloads: Tracer) -> list[Tracer]:
    """Payloads (of keys' shape, or with one more axis before the last, for matrix columns) sorted along
    the last axis by descending keys."""
    out = []
    for p in payloads:
        k = keys if p.shape == keys.shape else ops.broadcast_in_dim(
            keys, p.shape, tuple(range(p.ndim - 2)) + (p.ndim - 1,))
        sorted_ = ops.sort([k, p], p.ndim - 1)[1]
        out.append(ops.reverse(sorted_, (p.ndim - 1,)))
    return out


def _hermitian_svd(a: Tracer, compute_uv: bool):
    """NumPy's hermitian=True: singular values |w| of eigh, sorted descending, signs moved into vh."""
    w, v = ops.eigh(a)
    magnitude = ops.abs(w)
    (s,) = _sort_descending(magnitude, magnitude)
    if not compute_uv:
        return s
    signs, u = _sort_descending(magnitude, ops.sign(w), v)
    signs = ops.convert(signs, a.dtype)
    return u, s, _h(_scale_columns(u, signs))


def _singular_values(a: Tracer, hermitian: bool = False) -> Tracer:
    return _hermitian_svd(a, False) if hermitian else _svd_parts(a, False, False)


# ---------------------------------------------------------------- decompositions


@numpy_function_with_static("upper")
def cholesky(a, /, *, upper=False):
    """The Cholesky factor of a Hermitian positive-definite matrix: L with a = L L^H (or U with a = U^H U).

    Only the lower (upper, with ``upper=True``) triangle of ``a`` is read. A matrix that is not positive
    definite raises NumPy's LinAlgError after the call (with ``check_bounds=False``: its factor is NaN).

    >>> import numpy as np
    >>> np.asarray(cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])))
    array([[2., 0.],
           [1., 2.]])
    """
    x = _matrix(a, "cholesky", square=True)
    factor = ops.cholesky(x, lower=not upper)
    if factor.size:
        # A failed factorization is NaN (XLA's and LAPACK's alike); NaN read from the input is not a failure
        # (LAPACK carries it through, and NumPy gives the NaNs without an error).
        failed, given_nan = _any_nan(_diagonal_of(factor)), _any_nan(ops.triangle(x, lower=not upper))
        _require_after_call(ops.or_(ops.not_(failed), given_nan), "Matrix is not positive definite")
    return factor


def _any_nan(x: Tracer) -> Tracer:
    return ops.reduce(ops.compare(x, x, "NE"), "or", tuple(range(x.ndim)))


def _require_after_call(holds: Tracer, message: str) -> None:
    """Raise LinAlgError(message) after the call, naming the user's line, unless ``holds`` (0-d bool)."""
    checks = current_trace().checks
    if checks.enabled:
        checks.require(holds, ops.constant(0, np.int64), Check(LinAlgError, message, user_location(2)))


def _lu(x: Tracer):
    """(L, U, getrf's pivots) with P x = L U, by LAPACK's getrf, for square x; a zero on U's diagonal
    (getrf's "singular") is left to the caller."""
    packed, pivots = ops.lu(x)
    return (*lu_factors(packed), pivots)


def _device_has_solvers() -> bool:
    """Whether the program's device runs a vendor's matrix kernels (LAPACK on CPU, cuSOLVER or hipSOLVER on
    GPUs): then xlac factors matrices as NumPy does (LU for solve, an SVD kernel, geev); else (TPU) it
    builds them on XLA's expanders."""
    return current_trace().kernels != ""


def _uses_lu(x: Tracer) -> bool:
    """Whether ``x``'s square matrices are factored by LU (where the device has an LU kernel, as NumPy does)."""
    return _device_has_solvers() and x.size > 0


def _require_nonsingular(upper: Tracer) -> None:
    """NumPy's LinAlgError("Singular matrix") after the call where an LU factor U has a zero pivot."""
    diagonal = _diagonal_of(upper)
    zero = ops.compare(diagonal, ops.full(diagonal.shape, 0, diagonal.dtype), "EQ")
    _require_after_call(ops.not_(ops.reduce(zero, "or", tuple(range(zero.ndim)))), "Singular matrix")


def _parity_sign(pivots: Tracer, dtype) -> Tracer:
    """det(P) of getrf's pivots: -1 per row swapped with another."""
    positions = ops.iota(pivots.shape, pivots.dtype, pivots.ndim - 1)
    swaps = ops.reduce(ops.convert(ops.compare(pivots, positions, "NE"), np.int32), "sum", (pivots.ndim - 1,))
    odd = ops.compare(ops.rem(swaps, ops.full(swaps.shape, 2, swaps.dtype)), ops.full(swaps.shape, 1, swaps.dtype),
                      "EQ")
    return ops.select(odd, ops.full(odd.shape, -1, dtype), ops.full(odd.shape, 1, dtype))


def _raw_mode(args, kwargs) -> bool:
    return (args[1] if len(args) > 1 else kwargs.get("mode")) == "raw"


@_named(QRResult, plain=_raw_mode)
@numpy_function_with_static("mode")
def qr(a, mode="reduced"):
    """The QR decomposition a = Q R of a stack of matrices; ``mode`` is 'reduced', 'complete', 'r' or 'raw'.

    On CPU this is LAPACK's geqrf and orgqr (ungqr), as NumPy's. Q and R are unique only up to the signs
    (phases) of Q's columns and R's rows: xlac's R has a real diagonal like LAPACK's, except that whenever
    Q is square its last row is scaled so that det(Q) = 1.
    'raw' gives LAPACK's (h, tau), h transposed as NumPy's is (it has no derivative); derivatives through
    the last M - N columns of a complete Q of a tall matrix are NaN (any orthonormal completion would do).
    Deviation: the deprecated modes 'full' and 'economic' are not accepted.
    Deviation: the signs of Q's columns (R's rows) need not match NumPy's.

    >>> import numpy as np
    >>> q, r = qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> bool(np.allclose(np.asarray(q) @ np.asarray(r), [[3, 1], [4, 2]]))
    True
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(located(f"qr: Unrecognized mode '{mode}' (xlac takes 'reduced', 'complete', 'r' "
                                 "and 'raw'; NumPy's deprecated 'full' and 'economic' are not supported)"))
    x = _matrix(a, "qr")
    if mode == "raw":
        h, tau = ops.qr(x, "raw")
        return ops.matrix_transpose(h), tau
    q, r = ops.qr(x, "complete" if mode == "complete" else "reduced")
    return r if mode == "r" else (q, r)


def _uplo(UPLO, op: str) -> bool:
    if UPLO not in ("L", "U"):
        raise ValueError(located(f"{op}: UPLO argument must be 'L' or 'U', got {UPLO!r}"))
    return UPLO == "L"


@_named(EighResult)
@numpy_function_with_static("UPLO")
def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian (real symmetric) matrix.

    Only the lower (``UPLO='L'``) or upper triangle is read. Eigenvectors are unique only up to sign
    (phase), and within a repeated eigenvalue's eigenspace.
    Deviation: eigenvector signs (phases) need not match NumPy's.
    On CPU this is LAPACK's syevd/heevd, as NumPy's (cuSOLVER's syevd on GPUs).
    Deviation: on a device without solver kernels (TPU), XLA's Jacobi solver stops at about 1e-8 * ||a||; float64 results
    are refined from there to a backward error of a few eps * n * ||a|| (LAPACK's test criterion), except
    for distinct eigenvalues closer to each other than about 1e-8 * ||a||, whose eigenvectors are only a
    basis of their cluster's space (residual up to about the cluster's width).

    >>> import numpy as np
    >>> np.asarray(eigh(np.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues)
    array([1., 3.])
    """
    lower = _uplo(UPLO, "eigh")
    return tuple(ops.eigh(_matrix(a, "eigh", square=True), lower=lower))


@numpy_function_with_static("UPLO")
def eigvalsh(a, UPLO="L"):
    """The eigenvalues of a Hermitian (real symmetric) matrix, ascending.

    Deviation: as eigh's: distinct float64 eigenvalues closer than about 1e-8 * ||a|| are accurate to about
    their distance; the others to a few eps * n * ||a||.

    >>> import numpy as np
    >>> np.asarray(eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])))
    array([1., 3.])
    """
    lower = _uplo(UPLO, "eigvalsh")
    return ops.eigh(_matrix(a, "eigvalsh", square=True), lower=lower)[0]


def _general_eigen(a, name: str, vectors: bool) -> tuple[Tracer, Tracer]:
    x = _matrix(a, name, square=True)
    if not _device_has_solvers() and x.size:
        raise UnsupportedError(located(
            f"xnp.linalg.{name}: eigenvalues of a general (non-symmetric) matrix need LAPACK's geev, which xlac "
            "calls on CPU and GPUs; this device has no such kernel. For a symmetric (Hermitian) matrix use eigh or "
            "eigvalsh; for singular values, svd."))
    w, v = ops.eig(x, vectors=vectors)
    if x.size:       # geev did not converge (its results are then NaN): NumPy's LinAlgError
        _require_after_call(ops.or_(ops.not_(_any_nan(w)), _any_nan(x)), "Eigenvalues did not converge")
    return w, v


@_named(EigResult)
@numpy_function
def eig(a):
    """Eigenvalues and right eigenvectors (columns, each of unit length) of a general square matrix, by
    LAPACK's geev as NumPy's. Derivatives: of the eigenvalues only (the eigenvectors' depend on a phase
    LAPACK chooses; JAX refuses them too).

    Deviation: the results are complex also for a real matrix whose eigenvalues are all real (NumPy then
    returns real arrays: a dtype that depends on the values, which a compiled program cannot have).
    Deviation: only on CPU (LAPACK) and GPUs (geev on the host, as JAX); TPUs raise UnsupportedError.

    >>> import numpy as np
    >>> np.asarray(eig(np.array([[0.0, -1.0], [1.0, 0.0]])).eigenvalues)
    array([0.+1.j, 0.-1.j])
    """
    return _general_eigen(a, "eig", vectors=True)


@numpy_function
def eigvals(a):
    """The eigenvalues of a general square matrix, by LAPACK's geev as NumPy's (complex, in geev's order).

    Deviation: complex also for a real matrix whose eigenvalues are all real (see eig).
    Deviation: only on CPU (LAPACK) and GPUs (geev on the host, as JAX); TPUs raise UnsupportedError.

    >>> import numpy as np
    >>> np.asarray(eigvals(np.array([[2.0, 0.0], [0.0, 3.0]])))
    array([2.+0.j, 3.+0.j])
    """
    return _general_eigen(a, "eigvals", vectors=False)[0]


@_named(SVDResult)
@numpy_function_with_static("full_matrices", "compute_uv", "hermitian")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition a = U diag(S) Vh of a stack of matrices, S descending.

    On CPU this is LAPACK's gesdd, as NumPy's (on GPUs cuSOLVER's gesvdj, or gesvd above 1024 rows or
    columns, as JAX's); NaN in ``a`` (gesdd's failure) raises NumPy's
    LinAlgError("SVD did not converge") after the call (with ``check_bounds=False``: NaN results).
    Deviation: singular vectors' signs (phases) need not match NumPy's (the decomposition is not unique).
    Deviation: on a device without solver kernels (TPU), computed from the eigendecomposition of [[0, a], [a^H, 0]] (U and
    Vh orthonormalized by QR, which also completes them for ``full_matrices`` and for zero singular values),
    backward stable by LAPACK's test criterion (U diag(S) Vh = a and orthonormal U, Vh within a few
    eps * max(M, N) * ||a||, also for condition 1e12, rank-deficient and repeated singular values), except
    that distinct singular values closer than about 1e-8 * ||a|| have singular vectors accurate to about
    that distance; it costs an eigendecomposition of order M + N.
    Deviation: with ``full_matrices`` and a non-square matrix, derivatives through the columns of U (rows
    of Vh) that only complete the bases are NaN (they are not unique; JAX raises); the others are exact.

    >>> import numpy as np
    >>> np.round(np.asarray(svd(np.array([[3.0, 0.0], [0.0, -4.0]])).S), 12)
    array([4., 3.])
    """
    x = _matrix(a, "svd", square=hermitian)
    if hermitian:
        return _hermitian_svd(x, compute_uv)
    return _svd_parts(x, compute_uv, full_matrices)


@numpy_function
def svdvals(x, /):
    """The singular values of a stack of matrices, descending (``svd(x, compute_uv=False)``).

    >>> import numpy as np
    >>> np.round(np.asarray(svdvals(np.array([[0.0, 2.0], [1.0, 0.0]]))), 12)
    array([2., 1.])
    """
    return _svd_parts(_matrix(x, "svdvals"), False, False)


# ---------------------------------------------------------------- determinants, inverses, solves


@numpy_function
def det(a):
    """The determinant of a stack of square matrices from P a = L U, as NumPy computes it: sign times
    exp(log|det|) (exactly 0 where a pivot is 0). On a device without solver kernels (TPU): the product of R's diagonal
    in a = QR.

    >>> import numpy as np
    >>> round(float(det(np.array([[1.0, 2.0], [3.0, 4.0]]))), 12)
    -2.0
    """
    x = _matrix(a, "det", square=True)
    if _uses_lu(x):
        sign, logabsdet = _sign_and_log_of_det(x)
        return ops.mul(sign, ops.convert(ops.exp(logabsdet), sign.dtype))       # NumPy's formula
    _, r = ops.qr(x, "reduced")
    return ops.reduce(_diagonal_of(r), "prod", (x.ndim - 2,))


@_named(SlogdetResult)
@numpy_function
def slogdet(a):
    """The sign (a unit complex number for complex input) and natural log of the absolute value of the
    determinant; (0, -inf) for a singular matrix (an exact zero pivot of LU, as NumPy finds it).

    Deviation: on a device without solver kernels (TPU) (QR), a numerically singular matrix can give a large negative
    logabsdet where NumPy gives -inf.

    >>> import numpy as np
    >>> sign, logabsdet = slogdet(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> float(sign), round(float(logabsdet), 12)
    (-1.0, 0.69314718056)
    """
    return _sign_and_log_of_det(_matrix(a, "slogdet", square=True))


def _sign_and_log_of_det(x: Tracer) -> tuple[Tracer, Tracer]:
    """slogdet's (sign, logabsdet): from LU's U and row swaps as NumPy (from QR's R on a device without
    LAPACK)."""
    if _uses_lu(x):
        _, upper, pivots = _lu(x)
        d = _diagonal_of(upper)
    else:
        _, r = ops.qr(x, "reduced")
        d = _diagonal_of(r)
    axis = (x.ndim - 2,)
    magnitude = ops.abs(d)
    logabsdet = ops.reduce(ops.log(magnitude), "sum", axis)
    zero = ops.compare(magnitude, ops.full(magnitude.shape, 0, magnitude.dtype), "EQ")
    phase = _phase(d)
    if _uses_lu(x):
        parity = ops.broadcast_in_dim(_parity_sign(pivots, d.dtype), d.shape, tuple(range(d.ndim - 1)))
        first = ops.compare(ops.iota(d.shape, np.int32, d.ndim - 1), ops.full(d.shape, 0, np.int32), "EQ")
        phase = ops.select(first, ops.mul(phase, parity), phase)       # det(P) rides on the first pivot
    sign = ops.reduce(phase, "prod", axis)
    singular = ops.reduce(zero, "or", axis)
    return ops.select(singular, ops.full(sign.shape, 0, sign.dtype), sign), logabsdet     # 0, not -0


@numpy_function
def inv(a):
    """The inverse of a stack of square matrices, by LU as NumPy (QR, R^-1 Q^H, on a device without
    LAPACK). A singular matrix (a zero pivot) raises NumPy's LinAlgError after the call.

    >>> import numpy as np
    >>> np.asarray(inv(np.array([[2.0, 0.0], [0.0, 4.0]])))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    x = _matrix(a, "inv", square=True)
    if _uses_lu(x):
        lower, upper, pivots = _lu(x)
        _require_nonsingular(upper)
        return lu_solve(lower, upper, permutation_matrix(pivots_to_permutation(pivots), x.dtype))
    q, r = ops.qr(x, "reduced")
    return ops.triangular_solve(r, _h(q), left_side=True, lower=False)


@numpy_function
def solve(a, b):
    """The solution x of a x = b for a stack of square matrices a; b of shape (..., M, K), or (M,) when it
    is 1-D (NumPy 2's rule), batch axes broadcast. Solved by LU as NumPy (by QR on a device without
    LAPACK); a singular matrix (a zero pivot) raises NumPy's LinAlgError after the call.

    >>> import numpy as np
    >>> np.asarray(solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([1.0, 1.0])))
    array([0.5 , 0.25])
    """
    x, y = _operands("solve", a, b)
    _check_matrices(x, "solve", square=True)
    vector = y.ndim == 1
    if vector:
        y = ops.reshape(y, y.shape + (1,))
    if y.ndim < 2 or y.shape[-2] != x.shape[-1]:
        given = y.shape[:-1] if vector else y.shape
        raise ValueError(located(f"solve: the right-hand side of shape {given} does not match "
                                 f"the {x.shape[-1]}x{x.shape[-1]} matrices of shape {x.shape}"))
    x, y = _batch_broadcast(x, y, "solve")
    if _uses_lu(x):
        lower, upper, pivots = _lu(x)
        _require_nonsingular(upper)
        out = lu_solve(lower, upper, permute_rows(y, pivots_to_permutation(pivots)))
    else:
        out = _solve_square(x, y)
    return ops.reshape(out, out.shape[:-1]) if vector else out


@numpy_function_with_static("n")
def matrix_power(a, n):
    """a raised to the integer power n (matrix products; a negative n inverts first).

    >>> import numpy as np
    >>> np.asarray(matrix_power(np.array([[1, 1], [0, 1]]), 3))
    array([[1, 3],
           [0, 1]])
    """
    x = asarray(a)
    _check_matrices(x, "matrix_power", square=True)
    if isinstance(n, Tracer):
        raise TypeError(located("matrix_power: the exponent must be a Python integer (static), not a traced value"))
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(located(f"matrix_power: exponent must be an integer, got {n!r}")) from None
    if n == 0:
        return ops.broadcast_to(ops.constant(np.eye(x.shape[-1], dtype=x.dtype)), x.shape)
    if n < 0:
        x = inv(x)
        n = -n
    result, square = None, x
    while True:
        if n & 1:
            result = square if result is None else contractions.matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = contractions.matmul(square, square)


# ---------------------------------------------------------------- rank, pseudo-inverse, least squares


def _max_last(s: Tracer, keepdims: bool = False) -> Tracer:
    """The maximum over the last axis (0 for an empty axis, as NumPy's initial=0)."""
    m = ops.reduce(s, "max", (s.ndim - 1,))
    if s.shape[-1] == 0:
        m = ops.full(m.shape, 0, s.dtype)
    return ops.reshape(m, m.shape + (1,)) if keepdims else m


def _per_matrix(value, batch: tuple, dtype, op: str, name: str) -> Tracer:
    """A tolerance given per matrix (a scalar or an array of the batch shape) as (..., 1)."""
    t = ops.convert(asarray(value), dtype)
    try:
        return ops.reshape(ops.broadcast_to(t, batch), batch + (1,))
    except ValueError:
        raise ValueError(located(f"{op}: {name} of shape {t.shape} does not broadcast to the stack shape "
                                 f"{batch}")) from None


@numpy_function_with_static("hermitian")
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above ``tol`` (default: rtol * max(s), rtol = max(M, N) * eps).

    Deviation: for an input of fewer than 2 dimensions the result is a 0-d int64 array, not a Python int.

    >>> import numpy as np
    >>> int(matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    if tol is not None and rtol is not None:
        raise ValueError(located("matrix_rank: `tol` and `rtol` can't be both set."))
    x = asarray(A)
    if x.ndim < 2:
        nonzero = ops.compare(x, ops.full(x.shape, 0, x.dtype), "NE")
        return ops.convert(ops.reduce(nonzero, "or", range(x.ndim)), np.int64)
    x = _matrix(x, "matrix_rank")
    s = _singular_values(x, hermitian)
    if hermitian:
        s = ops.abs(s)
    batch = s.shape[:-1]
    if tol is None:
        rtol = (max(x.shape[-2:]) * np.finfo(s.dtype).eps if rtol is None else rtol)
        threshold = ops.mul(_max_last(s, keepdims=True),
                               ops.broadcast_to(_per_matrix(rtol, batch, s.dtype, "matrix_rank", "rtol"),
                                                batch + (1,)))
    else:
        threshold = _per_matrix(tol, batch, s.dtype, "matrix_rank", "tol")
    above = ops.compare(s, ops.broadcast_to(threshold, s.shape), "GT")
    return ops.reduce(ops.convert(above, np.int64), "sum", (s.ndim - 1,))


_NO_VALUE = object()


def _inverted_singular_values(s: Tracer, cutoff: Tracer) -> Tracer:
    """1 / s where s > cutoff, else 0."""
    large = ops.compare(s, ops.broadcast_to(cutoff, s.shape), "GT")
    safe = ops.select(large, s, ops.full(s.shape, 1, s.dtype))
    return ops.select(large, ops.div(ops.full(s.shape, 1, s.dtype), safe), ops.full(s.shape, 0, s.dtype))


@numpy_function_with_static("hermitian")
def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """The Moore-Penrose pseudo-inverse: V diag(1/s) U^H, singular values at or below rcond * max(s)
    dropped (rcond: 1e-15 by default, max(M, N) * eps with ``rtol=None``).

    >>> import numpy as np
    >>> np.asarray(pinv(np.array([[2.0, 0.0], [0.0, 0.0]])))
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = None
        else:
            rcond = rtol
        use_eps = rtol is None
    elif rtol is not _NO_VALUE:
        raise ValueError(located("pinv: `rtol` and `rcond` can't be both set."))
    else:
        use_eps = False
    x = _matrix(a, "pinv", square=hermitian)
    *batch, m, n = x.shape
    batch = tuple(batch)
    if m == 0 or n == 0:
        return ops.full(batch + (n, m), 0, x.dtype)
    if use_eps:
        rcond = max(m, n) * np.finfo(_real_dtype(x.dtype)).eps
    u, s, vh = _hermitian_svd(x, True) if hermitian else _svd_parts(x, True, False)
    cutoff = ops.mul(_per_matrix(rcond, batch, s.dtype, "pinv", "rcond"), _max_last(s, keepdims=True))
    s_inv = ops.convert(_inverted_singular_values(s, cutoff), x.dtype)
    return ops.matmul(_scale_columns(_h(vh), s_inv), _h(u))


@numpy_function
def lstsq(a, b, rcond=None):
    """The least-squares solution x of a x = b (minimum norm), with the residuals, rank and singular values.

    Singular values at or below rcond * max(s) count as zero (rcond: max(M, N) * float64 eps by default).
    Deviation: for M > N the residuals (sums of squared residuals per column) are always returned, also when
    the rank is below N (NumPy then returns an empty array); rank is a 0-d int32 array.

    >>> import numpy as np
    >>> x, res, rank, s = lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([1.0, 1.0, 2.0]))
    >>> np.round(np.asarray(x), 12), int(rank)
    (array([1., 1.]), 2)
    """
    x, y = _operands("lstsq", a, b)
    if x.ndim != 2 or y.ndim not in (1, 2):
        raise LinAlgError(located(f"lstsq: a must be 2-dimensional and b 1- or 2-dimensional, got shapes "
                                  f"{x.shape} and {y.shape}"))
    vector = y.ndim == 1
    if vector:
        y = ops.reshape(y, y.shape + (1,))
    m, n = x.shape
    if y.shape[0] != m:
        raise LinAlgError(located(f"lstsq: Incompatible dimensions: a has {m} rows, b has {y.shape[0]}"))
    real = _real_dtype(x.dtype)
    if rcond is None:
        rcond = np.finfo(FLOAT64).eps * max(m, n)
    if min(m, n) == 0:
        solution = ops.full((n, y.shape[1]), 0, x.dtype)
        s = ops.full((0,), 0, real)
        rank = ops.constant(0, np.int32)
    else:
        u, s, vh = _svd_parts(x, True, False, "SVD did not converge in Linear Least Squares")
        cutoff = ops.mul(ops.convert(asarray(rcond), real), _max_last(s))
        s_inv = _inverted_singular_values(s, ops.reshape(cutoff, (1,)))
        rank = ops.reduce(ops.convert(ops.compare(s, ops.broadcast_to(ops.reshape(cutoff, (1,)), s.shape), "GT"),
                                      np.int32), "sum", (0,))
        projected = ops.mul(ops.matmul(_h(u), y),
                               ops.broadcast_in_dim(ops.convert(s_inv, x.dtype), (s.shape[0], y.shape[1]), (0,)))
        solution = ops.matmul(_h(vh), projected)
    if m > n:
        residual = ops.sub(y, ops.matmul(x, solution))
        magnitude = ops.abs(residual)
        residuals = ops.reduce(ops.mul(magnitude, magnitude), "sum", (0,))
    else:
        residuals = ops.full((0,), 0, real)
    if vector:
        solution = ops.reshape(solution, (n,))
    return solution, residuals, rank, s


@numpy_function_with_static("p")
def cond(x, p=None):
    """The condition number in the norm ``p`` (None or 2: s_max / s_min; -2: s_min / s_max; else
    norm(x, p) * norm(inv(x), p)). A singular matrix gives inf.

    >>> import numpy as np
    >>> round(float(cond(np.array([[1.0, 0.0], [0.0, 4.0]]))), 12)
    4.0
    """
    a = _matrix(x, "cond")
    if 0 in a.shape[-2:]:
        raise LinAlgError(located("cond is not defined on empty arrays"))
    if p is None or p in (2, -2):
        s = _svd_parts(a, False, False)
        last = s.ndim - 1
        first = ops.reshape(ops.slice(s, (0,) * s.ndim, s.shape[:-1] + (1,)), s.shape[:-1])
        final = ops.reshape(ops.slice(s, (0,) * last + (s.shape[-1] - 1,), s.shape), s.shape[:-1])
        r = ops.div(final, first) if p == -2 else ops.div(first, final)
    else:
        _check_matrices(a, "cond", square=True)
        axes = (a.ndim - 2, a.ndim - 1)
        r = ops.mul(_norm(a, p, axes, False), _norm(inv(a), p, axes, False))
        r = ops.convert(r, _real_dtype(a.dtype))
    nan_result = ops.compare(r, r, "NE")
    nan_input = ops.reduce(ops.compare(a, a, "NE"), "or", (a.ndim - 2, a.ndim - 1))
    to_inf = ops.and_(nan_result, ops.not_(nan_input))
    return ops.select(to_inf, ops.full(r.shape, np.inf, r.dtype), r)


# ---------------------------------------------------------------- norms


def _norm_input(x) -> Tracer:
    a = asarray(x)
    if not dtypes.is_inexact(a.dtype):
        a = ops.convert(a, FLOAT64)
    return a


def _sum_abs_power(a: Tracer, axes, ord_) -> Tracer:
    return reductions.sum(ufuncs.power(ufuncs.abs(a), ord_), axis=axes)


def _norm(a: Tracer, ord_, axes: tuple, keepdims: bool) -> Tracer:
    """NumPy's norm for normalized ``axes`` (one axis: vector norms, two: matrix norms)."""
    if len(axes) == 1:
        result = _vector_norm_along(a, ord_, axes)
    elif len(axes) == 2:
        result = _matrix_norm_along(a, ord_, axes)
    else:
        raise ValueError(located("norm: Improper number of dimensions to norm."))
    if keepdims:
        result = ops.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(a.shape)))
    return result


def _vector_norm_along(a: Tracer, ord_, axes) -> Tracer:
    if isinstance(ord_, str):
        raise ValueError(located(f"norm: Invalid norm order '{ord_}' for vectors"))
    if ord_ == np.inf:
        return reductions.max(ufuncs.abs(a), axis=axes, initial=0)
    if ord_ == -np.inf:
        return reductions.min(ufuncs.abs(a), axis=axes)
    if ord_ == 0:
        nonzero = ops.compare(a, ops.full(a.shape, 0, a.dtype), "NE")
        return reductions.sum(ops.convert(nonzero, _real_dtype(a.dtype)), axis=axes)
    if ord_ == 1:
        return reductions.sum(ufuncs.abs(a), axis=axes)
    if ord_ is None or ord_ == 2:
        return ufuncs.sqrt(reductions.sum(_abs_squared(a), axis=axes))
    summed = _sum_abs_power(a, axes, ord_)
    return ufuncs.power(summed, ops.constant(1 / ord_, summed.dtype))


def _abs_squared(a: Tracer) -> Tracer:
    if _is_complex(a):
        re, im = ops.real(a), ops.imag(a)
        return ops.add(ops.mul(re, re), ops.mul(im, im))
    return ops.mul(a, a)


def _matrix_norm_along(a: Tracer, ord_, axes) -> Tracer:
    row, col = axes
    if ord_ in (2, -2, "nuc"):
        moved = shapes.moveaxis(a, (row, col), (-2, -1))
        s = _singular_values(_matrix(moved, "norm"))
        if ord_ == 2:
            return _max_last(s)
        if ord_ == -2:
            return ops.reduce(s, "min", (s.ndim - 1,))
        return ops.reduce(s, "sum", (s.ndim - 1,))
    if ord_ in (1, -1):
        sums = reductions.sum(ufuncs.abs(a), axis=row)
        col = col - 1 if col > row else col
        return reductions.max(sums, axis=col, initial=0) if ord_ == 1 else reductions.min(sums, axis=col)
    if ord_ in (np.inf, -np.inf):
        sums = reductions.sum(ufuncs.abs(a), axis=col)
        row = row - 1 if row > col else row
        return reductions.max(sums, axis=row, initial=0) if ord_ == np.inf else reductions.min(sums, axis=row)
    if ord_ in (None, "fro", "f"):
        return ufuncs.sqrt(reductions.sum(_abs_squared(a), axis=axes))
    raise ValueError(located(f"norm: Invalid norm order {ord_!r} for matrices."))


def _axis_tuple(axis, ndim: int, op: str) -> tuple:
    if isinstance(axis, tuple):
        axes = tuple(normalize_axis(ax, ndim, op) for ax in axis)
    elif isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        axes = (normalize_axis(axis, ndim, op),)
    else:
        raise TypeError(located(f"{op}: 'axis' must be None, an integer or a tuple of integers, got {axis!r}"))
    if len(set(axes)) != len(axes):
        raise ValueError(located(f"{op}: Duplicate axes given."))
    return axes


@numpy_function_with_static("ord", "axis", "keepdims")
def norm(x, ord=None, axis=None, keepdims=False):
    """A matrix or vector norm (NumPy's ``ord``: None, 'fro', 'nuc', inf, -inf, 0, 1, -1, 2, -2, other p).

    >>> import numpy as np
    >>> float(norm(np.array([3.0, 4.0])))
    5.0
    """
    a = _norm_input(x)
    if axis is None:
        nd = a.ndim
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            result = ops.sqrt(ops.reduce(_abs_squared(a), "sum", range(nd)))
            return ops.reshape(result, (1,) * nd) if keepdims else result
        axes = tuple(range(nd))
    else:
        axes = _axis_tuple(axis, a.ndim, "norm")
    return _norm(a, ord, axes, keepdims)


@numpy_function_with_static("axis", "keepdims", "ord")
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (None: all axes, a tuple: those axes as one vector).

    >>> import numpy as np
    >>> float(vector_norm(np.array([[3.0], [4.0]])))
    5.0
    """
    a = _norm_input(x)
    shape = a.shape
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = _axis_tuple(axis, a.ndim, "vector_norm")
    rest = tuple(i for i in range(a.ndim) if i not in axes)
    flat = ops.reshape(ops.transpose(a, axes + rest), (int(np.prod([shape[i] for i in axes], dtype=np.int64)),)
                       + tuple(shape[i] for i in rest))
    result = _vector_norm_along(flat, ord, (0,))
    if keepdims:
        result = ops.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


@numpy_function_with_static("keepdims", "ord")
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix of a stack (the last two axes).

    >>> import numpy as np
    >>> float(matrix_norm(np.eye(2), ord=1))
    1.0
    """
    a = _norm_input(x)
    _check_matrices(a, "matrix_norm")
    return _norm(a, ord, (a.ndim - 2, a.ndim - 1), keepdims)


# ---------------------------------------------------------------- products, tensors, array API names


def _chain_order(shapes) -> list:
    """NumPy's multi_dot ordering: the cheapest parenthesization of a matrix chain (dynamic programming)."""
    n = len(shapes)
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(arrays, split, i: int, j: int):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return contractions.dot(_chain_product(arrays, split, i, k), _chain_product(arrays, split, k + 1, j))


@numpy_function
def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices, multiplied in the cheapest order; the first and last may be 1-D.

    >>> import numpy as np
    >>> np.asarray(multi_dot([np.ones(2), np.eye(2), np.ones(2)]))
    array(2.)
    """
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(located("multi_dot: Expecting at least two arrays."))
    if len(arrays) == 2:
        result = contractions.dot(arrays[0], arrays[1])
    else:
        first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
        if first_1d:
            arrays[0] = ops.reshape(arrays[0], (1,) + arrays[0].shape)
        if last_1d:
            arrays[-1] = ops.reshape(arrays[-1], arrays[-1].shape + (1,))
        for x in arrays:
            if x.ndim != 2:
                raise LinAlgError(located(f"multi_dot: {x.ndim}-dimensional array given. Array must be "
                                          "two-dimensional"))
        result = _chain_product(arrays, _chain_order([x.shape for x in arrays]), 0, len(arrays) - 1)
        if first_1d and last_1d:
            result = ops.reshape(result, ())
        elif first_1d or last_1d:
            result = ops.reshape(result, (result.size,))
    dst = _out.output_operand(out, "multi_dot")
    if dst is None:
        return result
    if dst.shape != result.shape or dst.dtype != result.dtype:
        raise ValueError(located(f"multi_dot: output array is not acceptable (must have the right datatype "
                                 f"{result.dtype} and shape {result.shape}, got {dst.dtype} {dst.shape})"))
    return _out.store(dst, result)


multi_dot = _out.returns_out(multi_dot, 1)


@numpy_function_with_static("axes")
def tensorsolve(a, b, axes=None):
    """The tensor x with tensordot(a, x, x.ndim) = b (a's trailing axes form the unknown's shape).

    >>> import numpy as np
    >>> np.asarray(tensorsolve(np.eye(4).reshape(4, 2, 2), np.ones(4))).shape
    (2, 2)
    """
    x, y = _operands("tensorsolve", a, b)
    an = x.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(normalize_axis(k, an, "tensorsolve"))
            order.append(normalize_axis(k, an, "tensorsolve"))
        x = ops.transpose(x, order)
    old_shape = x.shape[y.ndim:]
    size = int(np.prod(old_shape, dtype=np.int64))
    if x.size != size * size:
        raise LinAlgError(located("tensorsolve: Input arrays must satisfy the requirement "
                                  "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"))
    flat = _solve_square(ops.reshape(x, (size, size)), ops.reshape(y, (size, 1)))
    return ops.reshape(flat, old_shape)


@numpy_function_with_static("ind")
def tensorinv(a, ind=2):
    """The inverse of a tensor with respect to tensordot over its first ``ind`` axes.

    >>> import numpy as np
    >>> np.asarray(tensorinv(np.eye(4).reshape(4, 2, 2), ind=1)).shape
    (2, 2, 4)
    """
    x = _operands("tensorinv", a)[0]
    if ind <= 0:
        raise ValueError(located("tensorinv: Invalid ind argument."))
    old_shape = x.shape
    inv_shape = old_shape[ind:] + old_shape[:ind]
    rows = int(np.prod(old_shape[ind:], dtype=np.int64))
    if rows == 0 or x.size % rows:
        raise LinAlgError(located(f"tensorinv: cannot invert an array of shape {old_shape} with ind={ind}"))
    square = ops.reshape(x, (rows, x.size // rows))
    _check_matrices(square, "tensorinv", square=True)
    q, r = ops.qr(square, "reduced")
    return ops.reshape(ops.triangular_solve(r, _h(q), left_side=True, lower=False), inv_shape)


@numpy_function
def matrix_transpose(x, /):
    """The stack of matrices with the last two axes swapped.

    >>> import numpy as np
    >>> np.asarray(matrix_transpose(np.array([[1, 2]])))
    array([[1],
           [2]])
    """
    a = asarray(x)
    if a.ndim < 2:
        raise ValueError(located(f"matrix_transpose: Input array must be at least 2-dimensional, got {a.ndim}"))
    return ops.matrix_transpose(a)


@numpy_function_with_static("offset")
def diagonal(x, /, *, offset=0):
    """The diagonals (``offset`` above the main one) of a stack of matrices.

    >>> import numpy as np
    >>> np.asarray(diagonal(np.array([[1, 2], [3, 4]])))
    array([1, 4])
    """
    return shapes.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@numpy_function_with_static("offset")
def trace(x, /, *, offset=0, dtype=None):
    """The sums along the diagonals of a stack of matrices.

    >>> import numpy as np
    >>> int(trace(np.array([[1, 2], [3, 4]])))
    5
    """
    return reductions.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@numpy_function
def outer(x1, x2, /):
    """The outer product of two 1-D arrays.

    >>> import numpy as np
    >>> np.asarray(outer(np.array([1, 2]), np.array([1, 10])))
    array([[ 1, 10],
           [ 2, 20]])
    """
    a, b = asarray(x1), asarray(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(located(f"outer: Input arrays must be one-dimensional, got shapes {a.shape} and {b.shape}"))
    return contractions.outer(a, b)


@numpy_function_with_static("axis")
def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along ``axis`` (other axes broadcast).

    >>> import numpy as np
    >>> np.asarray(cross(np.array([1, 0, 0]), np.array([0, 1, 0])))
    array([0, 0, 1])
    """
    a, b = asarray(x1), asarray(x2)
    for v in (a, b):
        if v.ndim == 0 or v.shape[normalize_axis(axis, v.ndim, "cross")] != 3:
            raise ValueError(located(f"cross: both input arrays must be (arrays of) 3-dimensional vectors along "
                                     f"axis {axis}, got shapes {a.shape} and {b.shape}"))
    a = ops.transpose(a, _axis_last(a.ndim, normalize_axis(axis, a.ndim, "cross")))
    b = ops.transpose(b, _axis_last(b.ndim, normalize_axis(axis, b.ndim, "cross")))
    a, b = promote("cross", a, b)
    if a.dtype == np.bool_:
        raise TypeError(located("cross: boolean inputs are not supported (NumPy's subtract refuses them)"))

    def part(v, i):
        return ops.reshape(ops.slice(v, (0,) * (v.ndim - 1) + (i,), v.shape[:-1] + (i + 1,)), v.shape[:-1])
    ax, ay, az = (part(a, i) for i in range(3))
    bx, by, bz = (part(b, i) for i in range(3))
    mul, sub = (lambda p, q: ops.mul(p, q)), (lambda p, q: ops.sub(p, q))
    parts = [sub(mul(ay, bz), mul(az, by)), sub(mul(az, bx), mul(ax, bz)), sub(mul(ax, by), mul(ay, bx))]
    stacked = ops.concatenate([ops.reshape(p, p.shape + (1,)) for p in parts], a.ndim - 1)
    axis = normalize_axis(axis, a.ndim, "cross")
    return ops.transpose(stacked, tuple(int(i) for i in np.argsort(_axis_last(a.ndim, axis))))


def _axis_last(ndim: int, axis: int) -> tuple:
    return tuple(i for i in range(ndim) if i != axis) + (axis,)


@numpy_function_with_static("axis")
def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis`` (the first conjugated), other axes broadcast.

    >>> import numpy as np
    >>> np.asarray(vecdot(np.array([1, 2]), np.array([3, 4])))
    array(11)
    """
    return contractions.vecdot(x1, x2, axis=axis)


@numpy_function
def matmul(x1, x2, /):
    """The matrix product (``xnp.matmul``).

    >>> import numpy as np
    >>> np.asarray(matmul(np.eye(2), np.array([1.0, 2.0])))
    array([1., 2.])
    """
    return contractions.matmul(x1, x2)


@numpy_function_with_static("axes")
def tensordot(x1, x2, /, *, axes=2):
    """The tensor dot product over ``axes`` (``xnp.tensordot``).

    >>> import numpy as np
    >>> np.asarray(tensordot(np.ones((2, 3)), np.ones((3, 2)), axes=1)).shape
    (2, 2)
    """
    return contractions.tensordot(x1, x2, axes=axes)
