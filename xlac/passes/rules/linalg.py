"""Derivative (VJP, JVP) and batching rules of the decompositions: cholesky, triangular_solve, qr, eigh, lu,
eig, svd.

The derivative formulas are the standard ones (as in JAX's ``lax.linalg``): the Cholesky rule of Murray
(arXiv:1602.07527), the QR rule of Townsend ("Differentiating the QR decomposition"), first-order
perturbation theory for eigh and svd (distinct eigenvalues or singular values; a pair of exactly equal
ones contributes nothing instead of an infinity; svd's JVP is JAX's ``_svd_jvp_rule``). Complex values
follow JAX's convention (a VJP is the transpose of the JVP). ``cholesky`` and ``eigh`` read one triangle
of a Hermitian matrix; their derivatives treat the operand as Hermitian: the JVP takes the Hermitian part
of its tangent and the VJP gives a Hermitian cotangent. QR's Q has determinant 1 whenever it is square
(see :mod:`xlac.ir.primitives_linalg`), which fixes the phase of its last column; the rules follow that
choice. The last m - n columns of a complete Q of a tall matrix only complete an orthonormal basis (they
are not unique): derivatives through them are NaN, while those of the other columns and of R are exact.
The same holds for the completing columns of u (rows of vt) of a full-matrices SVD of a non-square matrix
(JAX refuses those). The raw (Householder) form of QR has no derivative.

Batching moves the batch axis first: every decomposition already works on a stack of matrices.

>>> from xlac.ir import primitives as P
>>> all(p.vjp and p.jvp and p.batch for p in (P.cholesky, P.triangular_solve, P.qr, P.eigh, P.svd))
True
"""
from __future__ import annotations

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.ir import primitives as P
from xlac.passes.rules.common import batch_size, to_front
from xlac.trace import ops
from xlac.trace.checks import INDEX_DTYPE
from xlac.trace.inline import closed_graph
from xlac.trace.state import current_trace

__all__: list[str] = []


# ---------------------------------------------------------------- helpers

def _add(*xs):
    xs = [x for x in xs if x is not None]
    out = xs[0]
    for x in xs[1:]:
        out = ops.add(out, x)
    return out


def _scale(x, factor: float):
    return ops.mul(x, ops.full(x.shape, factor, x.dtype))


def _h(x):
    """The adjoint (conjugate transpose) of the last two axes."""
    return ops.matrix_transpose(x, conjugate=True)


def _mm(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = ops.matmul(out, x)
    return out


def _hermitian_part(x):
    return _scale(_add(x, _h(x)), 0.5)


def _is_complex(x) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def _real(x):
    return ops.real(x) if _is_complex(x) else x


def _imag_as_complex(x):
    """i * imag(x), in x's complex dtype."""
    return ops.complex(ops.full(x.shape, 0, _real(x).dtype), ops.imag(x))


def _as(x, like):
    """A real ``x`` in ``like``'s (possibly complex) dtype."""
    if _is_complex(like) and not _is_complex(x):
        return ops.complex(x, ops.full(x.shape, 0, x.dtype))
    return x


def _diagonal_mask(x):
    rows = ops.iota(x.shape, np.int32, x.ndim - 2)
    cols = ops.iota(x.shape, np.int32, x.ndim - 1)
    return ops.compare(rows, cols, "EQ")


def _only_diagonal(x):
    return ops.select(_diagonal_mask(x), x, ops.full(x.shape, 0, x.dtype))


def _diagonal(x):
    """The diagonal of the last two (square) axes, shape (..., n)."""
    return ops.reduce(_only_diagonal(x), "sum", (x.ndim - 1,))


def _diag(v, like):
    """The vector ``v`` (..., n) on the diagonal of a matrix shaped like ``like``."""
    nd = like.ndim
    spread = ops.broadcast_in_dim(v, like.shape, tuple(range(nd - 2)) + (nd - 1,))
    return _only_diagonal(spread)


def _solve(a, b, *, left_side: bool, lower: bool, transpose: bool = False, conjugate: bool = False,
           unit_diagonal: bool = False):
    """A triangular solve with op(a) = a, a^T, conj(a) or a^H."""
    if conjugate and not transpose:
        a, conjugate = ops.conj(a), False
    kind = "NO_TRANSPOSE" if not transpose else ("ADJOINT" if conjugate and _is_complex(a) else "TRANSPOSE")
    return ops.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=kind, unit_diagonal=unit_diagonal)


def _zeros_like(x):
    return ops.full(x.shape, 0, x.dtype)


def _batch_at_front(primitive):
    """The batching rule of a decomposition, which treats leading axes as a batch: batch axes move first."""
    def rule(attrs, operands, dims):
        size = batch_size(operands, dims)
        out = ops.bind(primitive, *(to_front(x, d, size) for x, d in zip(operands, dims)), **attrs)
        results = list(out) if primitive.multiple_results else [out]
        return results, [0] * len(results)
    return rule


# ---------------------------------------------------------------- cholesky

def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    lower = ops.triangle(x, lower=True)
    return ops.sub(lower, _scale(_only_diagonal(x), 0.5))


def _cholesky_jvp(attrs, operands, results, tangents):
    (t,), (factor,) = tangents, results
    if t is None:
        return [None]
    lower = attrs.get("lower", True)
    chol = factor if lower else _h(factor)          # a = L L^H
    sigma = _hermitian_part(t)
    inner = _solve(chol, _solve(chol, sigma, left_side=True, lower=True), left_side=False, lower=True,
                   transpose=True, conjugate=True)  # L^-1 sigma L^-H
    dl = _mm(chol, _phi(inner))
    return [dl if lower else _h(dl)]


def _cholesky_vjp(attrs, operands, results, cts):
    (ct,), (factor,) = cts, results
    if ct is None:
        return [None]
    lower = attrs.get("lower", True)
    chol, ct = (factor, ct) if lower else (_h(factor), _h(ct))
    inner = _phi(_mm(ops.matrix_transpose(chol), ct))
    left = _solve(chol, inner, left_side=True, lower=True, transpose=True)          # L^-T inner
    s = _solve(chol, left, left_side=False, lower=True, conjugate=True)             # ... conj(L)^-1
    return [_hermitian_part(s)]


P.cholesky.register(vjp=_cholesky_vjp, jvp=_cholesky_jvp, batch=_batch_at_front(P.cholesky))


# ---------------------------------------------------------------- triangular_solve

def _op_flags(kind: str) -> tuple[bool, bool]:
    """(transpose, conjugate) of a transpose_a kind."""
    return {"NO_TRANSPOSE": (False, False), "TRANSPOSE": (True, False), "ADJOINT": (True, True)}[kind]


def _apply_op(x, transpose: bool, conjugate: bool):
    x = ops.matrix_transpose(x) if transpose else x
    return ops.conj(x) if conjugate else x


def _solve_like(attrs, a, b, flip: bool = False):
    transpose, conjugate = _op_flags(attrs.get("transpose_a", "NO_TRANSPOSE"))
    return _solve(a, b, left_side=attrs["left_side"], lower=attrs["lower"], transpose=transpose != flip,
                  conjugate=conjugate, unit_diagonal=attrs.get("unit_diagonal", False))


def _operand_triangle(attrs, x):
    """The part of a matrix that the solve reads: its triangle, without the diagonal if unit."""
    return ops.triangle(x, lower=attrs["lower"], strict=attrs.get("unit_diagonal", False))


def _triangular_solve_jvp(attrs, operands, results, tangents):
    (a, _), (x,), (ta, tb) = operands, results, tangents
    terms = []
    if tb is not None:
        terms.append(_solve_like(attrs, a, tb))
    if ta is not None:
        transpose, conjugate = _op_flags(attrs.get("transpose_a", "NO_TRANSPOSE"))
        d_op = _apply_op(_operand_triangle(attrs, ta), transpose, conjugate)
        product = _mm(d_op, x) if attrs["left_side"] else _mm(x, d_op)
        terms.append(ops.neg(_solve_like(attrs, a, product)))
    return [_add(*terms)]


def _triangular_solve_vjp(attrs, operands, results, cts):
    (a, _), (x,), (ct,) = operands, results, cts
    if ct is None:
        return [None, None]
    ct_b = _solve_like(attrs, a, ct, flip=True)
    outer = _mm(ct_b, ops.matrix_transpose(x)) if attrs["left_side"] else _mm(ops.matrix_transpose(x), ct_b)
    transpose, conjugate = _op_flags(attrs.get("transpose_a", "NO_TRANSPOSE"))
    ct_a = ops.neg(_operand_triangle(attrs, _apply_op(outer, transpose, conjugate)))
    return [ct_a, ct_b]


P.triangular_solve.register(vjp=_triangular_solve_vjp, jvp=_triangular_solve_jvp,
                            batch=_batch_at_front(P.triangular_solve))


# ---------------------------------------------------------------- qr

def _raw_qr_error(shape):
    return NotImplementedError(
        f"xlac cannot differentiate qr(mode='raw') of a {shape[-2]}x{shape[-1]} matrix: the Householder "
        "representation has no derivative rule; use mode='reduced'")


def _nan_like(x):
    return ops.full(x.shape, np.nan, x.dtype)


def _nan_where_used(grad, ct_completing):
    """``grad`` (a stack of matrices), NaN for the matrices whose cotangent on completing columns (which have
    no derivative) is not zero."""
    used = ops.compare(ct_completing, _zeros_like(ct_completing), "NE")
    nd = grad.ndim
    used = ops.broadcast_in_dim(ops.reduce(used, "or", (nd - 2, nd - 1)), grad.shape, tuple(range(nd - 2)))
    return ops.select(used, _nan_like(grad), grad)


def _unit_det_gauge(x) -> bool:
    """Whether determinant 1 of a square complex q (not a real diagonal of r) fixes the phase of the
    last column of q that r multiplies: so when m <= n (for a tall matrix, complete mode scales a
    completing column, which r's zero rows never multiply)."""
    m, n = x.shape[-2:]
    return _is_complex(x) and m <= n


def _diagonal_gauge(c, unit_det: bool):
    """The imaginary diagonal of omega = q^H dq: i Im(c_ii), the last one replaced by minus the sum of the
    others where det(q) = 1."""
    im = ops.imag(_diagonal(c))
    if unit_det:
        n = im.shape[-1]
        head = ops.slice(im, (0,) * im.ndim, im.shape[:-1] + (n - 1,))
        total = ops.reduce(head, "sum", (im.ndim - 1,))
        last = ops.reshape(ops.neg(total), total.shape + (1,))
        im = ops.concatenate([head, last], im.ndim - 1)
    return _diag(ops.complex(ops.full(im.shape, 0, im.dtype), im), c)


def _diagonal_gauge_transposed(w, unit_det: bool):
    """The transpose of ``c -> _diagonal_gauge(c)`` applied to the cotangent ``w`` of omega."""
    im = ops.imag(_diagonal(w))
    if unit_det:
        n = im.shape[-1]
        head = ops.slice(im, (0,) * im.ndim, im.shape[:-1] + (n - 1,))
        last = ops.slice(im, (0,) * (im.ndim - 1) + (n - 1,), im.shape)
        head = ops.sub(head, ops.broadcast_in_dim(ops.reshape(last, last.shape[:-1]), head.shape,
                                               tuple(range(im.ndim - 1))))
        im = ops.concatenate([head, _zeros_like(last)], im.ndim - 1)
    return _diag(ops.complex(ops.full(im.shape, 0, im.dtype), im), w)


def _thin_qr_jvp(q, r, dx, unit_det: bool):
    """(dq, dr) of x = q r with x (m, n), m >= n, q (m, n), r (n, n)."""
    z = _solve(r, dx, left_side=False, lower=False)                 # dx r^-1
    c = _mm(_h(q), z)
    low = ops.triangle(c, lower=True, strict=True)
    omega = ops.sub(low, _h(low))
    if _is_complex(c):
        omega = _add(omega, _diagonal_gauge(c, unit_det))
    dq = _add(_mm(q, ops.sub(omega, c)), z)
    dr = _mm(ops.sub(c, omega), r)
    return dq, dr


def _thin_qr_vjp(q, r, ct_q, ct_r, unit_det: bool):
    """The cotangent of x for x = q r (m >= n) given those of q and r (None: zero)."""
    d = _mm(ct_r, ops.matrix_transpose(r)) if ct_r is not None else None                  # cotangent of (c - omega)
    e = _mm(ops.matrix_transpose(q), ct_q) if ct_q is not None else None                  # cotangent of (omega - c)
    if d is None and e is None:
        return None
    w = ops.sub(e, d) if d is not None and e is not None else (e if d is None else ops.neg(d))   # of omega
    ct_c = ops.neg(w)
    ct_c = _add(ct_c, ops.triangle(ops.sub(w, _h(w)), lower=True, strict=True))
    if _is_complex(q):
        ct_c = _add(ct_c, _diagonal_gauge_transposed(w, unit_det))
    ct_z = _mm(ops.conj(q), ct_c)
    if ct_q is not None:
        ct_z = _add(ct_z, ct_q)
    return _solve(r, ct_z, left_side=False, lower=False, transpose=True)    # ct_z r^-T


def _completing_columns(attrs, x) -> bool:
    """Whether q is a complete Q of a tall matrix: its last m - n columns complete an orthonormal basis
    (any completion would do), so derivatives through them are NaN."""
    m, n = x.shape[-2:]
    return attrs.get("mode", "reduced") == "complete" and m > n


def _split_columns(q, n: int):
    zero = (0,) * q.ndim
    return ops.slice(q, zero, q.shape[:-1] + (n,)), ops.slice(q, zero[:-1] + (n,), q.shape)


def _qr_jvp(attrs, operands, results, tangents):
    (x,), (q, r), (dx,) = operands, results, tangents
    m, n = x.shape[-2:]
    if attrs.get("mode", "reduced") == "raw":
        raise _raw_qr_error(x.shape)
    if dx is None:
        return [None, None]
    unit_det = _unit_det_gauge(x)
    if _completing_columns(attrs, x):
        zero = (0,) * x.ndim
        q_thin, q_rest = _split_columns(q, n)
        r_thin = ops.slice(r, zero, r.shape[:-2] + (n, n))
        dq, dr = _thin_qr_jvp(q_thin, r_thin, dx, unit_det)
        dr_rest = ops.full(r.shape[:-2] + (m - n, n), 0, r.dtype)          # r's last m - n rows are zeros
        return [ops.concatenate([dq, _nan_like(q_rest)], x.ndim - 1), ops.concatenate([dr, dr_rest], x.ndim - 2)]
    if m >= n:
        return list(_thin_qr_jvp(q, r, dx, unit_det))
    zero = (0,) * x.ndim
    x2 = ops.slice(x, zero[:-1] + (m,), x.shape)
    dx1, dx2 = ops.slice(dx, zero, x.shape[:-1] + (m,)), ops.slice(dx, zero[:-1] + (m,), x.shape)
    r1 = ops.slice(r, zero, r.shape[:-1] + (m,))
    dq, dr1 = _thin_qr_jvp(q, r1, dx1, unit_det)
    dr2 = _add(_mm(_h(dq), x2), _mm(_h(q), dx2))
    return [dq, ops.concatenate([dr1, dr2], x.ndim - 1)]


def _qr_vjp(attrs, operands, results, cts):
    (x,), (q, r), (ct_q, ct_r) = operands, results, cts
    m, n = x.shape[-2:]
    if attrs.get("mode", "reduced") == "raw":
        raise _raw_qr_error(x.shape)
    unit_det = _unit_det_gauge(x)
    if _completing_columns(attrs, x):
        zero = (0,) * x.ndim
        q_thin = _split_columns(q, n)[0]
        r_thin = ops.slice(r, zero, r.shape[:-2] + (n, n))
        ct_rest = None
        if ct_q is not None:
            ct_q, ct_rest = _split_columns(ct_q, n)
        ct_r = None if ct_r is None else ops.slice(ct_r, zero, ct_r.shape[:-2] + (n, n))
        ct_x = _thin_qr_vjp(q_thin, r_thin, ct_q, ct_r, unit_det)
        ct_x = _zeros_like(x) if ct_x is None else ct_x
        return [ct_x if ct_rest is None else _nan_where_used(ct_x, ct_rest)]
    if m >= n:
        return [_thin_qr_vjp(q, r, ct_q, ct_r, unit_det)]
    zero = (0,) * x.ndim
    x2 = ops.slice(x, zero[:-1] + (m,), x.shape)
    r1 = ops.slice(r, zero, r.shape[:-1] + (m,))
    ct_r1 = ct_r2 = None
    if ct_r is not None:
        ct_r1 = ops.slice(ct_r, zero, ct_r.shape[:-1] + (m,))
        ct_r2 = ops.slice(ct_r, zero[:-1] + (m,), ct_r.shape)
        extra = _h(_mm(ct_r2, ops.matrix_transpose(x2)))                                   # dr2 = dq^H x2 + q^H dx2
        ct_q = extra if ct_q is None else _add(ct_q, extra)
    ct_x1 = _thin_qr_vjp(q, r1, ct_q, ct_r1, unit_det)
    ct_x1 = _zeros_like(ops.slice(x, zero, x.shape[:-1] + (m,))) if ct_x1 is None else ct_x1
    ct_x2 = _mm(ops.conj(q), ct_r2) if ct_r2 is not None else _zeros_like(x2)
    return [ops.concatenate([ct_x1, ct_x2], x.ndim - 1)]


P.qr.register(vjp=_qr_vjp, jvp=_qr_jvp, batch=_batch_at_front(P.qr))


# ---------------------------------------------------------------- eigh

def _inverse_or_zero(x):
    """1 / x, and 0 where x == 0."""
    zero = ops.compare(x, _zeros_like(x), "EQ")
    inverse = ops.div(ops.full(x.shape, 1, x.dtype), ops.select(zero, ops.full(x.shape, 1, x.dtype), x))
    return ops.select(zero, _zeros_like(x), inverse)


def _pairs(w, like):
    """(w_j, w_i): the vector w (..., n) spread along the rows and along the columns of ``like``."""
    nd = like.ndim
    return (ops.broadcast_in_dim(w, like.shape, tuple(range(nd - 2)) + (nd - 1,)),
            ops.broadcast_in_dim(w, like.shape, tuple(range(nd - 2)) + (nd - 2,)))


def _inverse_gaps(w, like):
    """F with F_ij = 1 / (w_j - w_i) for i != j; 0 on the diagonal and wherever w_i == w_j exactly."""
    return _inverse_or_zero(ops.sub(*_pairs(w, like)))


def _eigh_jvp(attrs, operands, results, tangents):
    (da,), (w, v) = tangents, results
    if da is None:
        return [None, None]
    p = _mm(_h(v), _hermitian_part(da), v)
    dw = _real(_diagonal(p))
    dv = _mm(v, ops.mul(_as(_inverse_gaps(w, v), v), p))
    return [dw, dv]


def _eigh_vjp(attrs, operands, results, cts):
    (w, v), (ct_w, ct_v) = results, cts
    if ct_w is None and ct_v is None:
        return [None]
    terms = []
    if ct_w is not None:
        terms.append(_diag(_as(ct_w, v), v))
    if ct_v is not None:
        terms.append(ops.mul(_as(_inverse_gaps(w, v), v), _mm(ops.matrix_transpose(v), ct_v)))
    ct_p = _add(*terms)
    return [_hermitian_part(_mm(ops.conj(v), ct_p, ops.matrix_transpose(v)))]


P.eigh.register(vjp=_eigh_vjp, jvp=_eigh_jvp, batch=_batch_at_front(P.eigh))


# ---------------------------------------------------------------- lu

def pivots_to_permutation(pivots):
    """The row permutation LAPACK's pivots (from 0; row i swapped with row pivots[i] at step i) make: perm
    with (P a)[i] = a[perm[i]], one loop of n swaps over a stack of pivot vectors (..., n)."""
    n = pivots.shape[-1]
    last = pivots.ndim - 1

    def at(x, k):               # x[..., k] for a traced k, kept as a length-1 last axis
        return ops.dynamic_slice(x, [ops.constant(0, INDEX_DTYPE)] * last + [k], x.shape[:-1] + (1,))

    def cond_region(xs):
        return [ops.compare(xs[0], ops.constant(n, INDEX_DTYPE), "LT")]

    def body_region(xs):
        i, perm, pivots = xs
        positions = ops.iota(perm.shape, perm.dtype, last)         # (a region reads only its inputs)
        pivot = ops.broadcast_in_dim(at(pivots, i), perm.shape, tuple(range(perm.ndim)))
        here = ops.compare(positions, ops.broadcast_in_dim(ops.convert(i, perm.dtype), perm.shape, ()), "EQ")
        there = ops.compare(positions, pivot, "EQ")
        at_pivot = ops.reduce(ops.select(there, perm, ops.full(perm.shape, 0, perm.dtype)), "sum", (last,))
        at_pivot = ops.broadcast_in_dim(at_pivot, perm.shape, tuple(range(last)))
        at_i = ops.broadcast_in_dim(at(perm, i), perm.shape, tuple(range(perm.ndim)))
        swapped = ops.select(here, at_pivot, ops.select(there, at_i, perm))
        return [ops.add(i, ops.constant(1, INDEX_DTYPE)), swapped]

    operands = [ops.constant(0, INDEX_DTYPE), ops.iota(pivots.shape, pivots.dtype, last), pivots]
    types = [x.value.type for x in operands]
    _, perm = current_trace().bind(P.while_, operands, {"n_carries": 2, "trip_count": n},
                                   subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    return perm


def permutation_matrix(perm, dtype):
    """P with P[..., i, j] = 1 where perm[..., i] == j: (P a)[i] = a[perm[i]]."""
    shape = perm.shape + (perm.shape[-1],)
    rows = ops.broadcast_in_dim(perm, shape, tuple(range(perm.ndim)))
    return ops.convert(ops.compare(rows, ops.iota(shape, perm.dtype, perm.ndim), "EQ"), dtype)


def permute_rows(b, permutation):
    """P b for a stack of row permutations (..., M): (P b)[..., i, :] = b[..., permutation[i], :]."""
    nb = b.ndim - 2
    return ops.gather(b, ops.reshape(permutation, permutation.shape + (1,)), offset_dims=(nb + 1,),
                      collapsed_slice_dims=(nb,), start_index_map=(nb,), slice_sizes=(1,) * (nb + 1) + (b.shape[-1],),
                      operand_batching_dims=tuple(range(nb)), start_indices_batching_dims=tuple(range(nb)))


def lu_factors(lu):
    """(L with its unit diagonal, U) of a packed LU factorization."""
    unit = ops.broadcast_in_dim(ops.convert(ops.constant(np.eye(lu.shape[-1], dtype=bool)), lu.dtype),
                                lu.shape, (lu.ndim - 2, lu.ndim - 1))
    return ops.add(ops.triangle(lu, lower=True, strict=True), unit), ops.triangle(lu, lower=False)


def lu_solve(lower, upper, permuted_b):
    """x with L U x = permuted_b (P b, see :func:`permute_rows`)."""
    y = ops.triangular_solve(lower, permuted_b, left_side=True, lower=True, unit_diagonal=True)
    return ops.triangular_solve(upper, y, left_side=True, lower=False)


def _lu_jvp(attrs, operands, results, tangents):
    (t,), (lu, pivots) = tangents, results
    if t is None:
        return [None, None]
    lower, upper = lu_factors(lu)
    x = _solve(upper, _solve(lower, permute_rows(t, pivots_to_permutation(pivots)), left_side=True, lower=True,
                             unit_diagonal=True), left_side=False, lower=False)    # L^-1 P da U^-1
    return [_add(_mm(lower, ops.triangle(x, lower=True, strict=True)), _mm(ops.triangle(x, lower=False), upper)),
            None]


def _lu_vjp(attrs, operands, results, cts):
    (ct, _), (lu, pivots) = cts, results
    if ct is None:
        return [None]
    lower, upper = lu_factors(lu)
    x_ct = _add(ops.triangle(_mm(ops.matrix_transpose(lower), ct), lower=True, strict=True),
                ops.triangle(_mm(ct, ops.matrix_transpose(upper)), lower=False))
    y_ct = _solve(upper, _solve(lower, x_ct, left_side=True, lower=True, transpose=True, unit_diagonal=True),
                  left_side=False, lower=False, transpose=True)                   # L^-T x_ct U^-T
    p = permutation_matrix(pivots_to_permutation(pivots), lu.dtype)
    return [_mm(ops.matrix_transpose(p), y_ct)]


P.lu.register(vjp=_lu_vjp, jvp=_lu_jvp, batch=_batch_at_front(P.lu))


# ---------------------------------------------------------------- eig

def _general_solve(a, b):
    """a^-1 b for general square a, by LU (eig, whose rules need it, exists only where LU does)."""
    packed, pivots = ops.lu(a)
    return lu_solve(*lu_factors(packed), permute_rows(b, pivots_to_permutation(pivots)))


def _refuse_eigenvector_derivatives(mode: str):
    raise UnsupportedError(located(
        f"{mode} differentiation through the eigenvectors of numpy.linalg.eig is not supported: geev's "
        "eigenvectors are unique only up to a complex phase, which their derivative depends on (JAX refuses them "
        "too). Differentiate the eigenvalues (numpy.linalg.eigvals), or use eigh for a Hermitian matrix"))


def _eigenvectors(attrs, a, v):
    """The eigenvectors the rules need: ``v``, or computed where eig ran without them (eigvals)."""
    return v if attrs.get("vectors", True) else ops.eig(a)[1]


def _eig_jvp(attrs, operands, results, tangents):
    (a,), (da,), (_, v) = operands, tangents, results
    if da is None:
        return [None, None]
    if attrs.get("vectors", True):
        _refuse_eigenvector_derivatives("forward-mode (jvp)")
    v = _eigenvectors(attrs, a, v)
    return [_diagonal(_general_solve(v, _mm(_as(da, v), v))), None]          # diag(V^-1 dA V)


def _eig_vjp(attrs, operands, results, cts):
    (a,), (_, v), (ct_w, ct_v) = operands, results, cts
    if ct_v is not None:
        _refuse_eigenvector_derivatives("reverse-mode (grad, vjp)")
    if ct_w is None:
        return [None]
    vt = ops.matrix_transpose(_eigenvectors(attrs, a, v))
    grad = _general_solve(vt, _mm(_diag(ct_w, v), vt))                 # V^-T diag(ct_w) V^T
    return [grad if _is_complex(a) else ops.real(grad)]


P.eig.register(vjp=_eig_vjp, jvp=_eig_jvp, batch=_batch_at_front(P.eig))


# ---------------------------------------------------------------- svd

def _row_scaled(x, v):
    """x * v[..., None, :] (v real, x possibly complex): column j scaled by v_j."""
    return ops.mul(x, _as(ops.broadcast_in_dim(v, x.shape, tuple(range(x.ndim - 2)) + (x.ndim - 1,)), x))


def _column_scaled(x, v):
    """x * v[..., :, None]: row i scaled by v_i."""
    return ops.mul(x, _as(ops.broadcast_in_dim(v, x.shape, tuple(range(x.ndim - 2)) + (x.ndim - 2,)), x))


def _inverse_square_gaps(s, like):
    """F with F_ij = 1 / (s_j^2 - s_i^2) for i != j, 0 on the diagonal and for equal s, the difference taken
    as (s_j - s_i)(s_j + s_i): exactly 0 on the diagonal (s_j^2 - s_i^2 need not be, where XLA fuses a
    product into a subtraction)."""
    s_j, s_i = _pairs(s, like)
    return _as(_inverse_or_zero(ops.mul(ops.sub(s_j, s_i), ops.add(s_j, s_i))), like)


def _without_span(x, q):
    """x - q q^H x: x's columns with their part in the span of q's orthonormal columns removed."""
    return ops.sub(x, _mm(q, _mm(_h(q), x)))


def _reduced_svd(attrs, a, results):
    """(s, u, v) of the reduced SVD the rules differentiate: the results' leading k columns of u and rows of
    vt (all of them unless ``full_matrices``), or a reduced SVD computed where only s was."""
    if not attrs.get("compute_uv", True):
        s, u, vt = ops.svd(a, full_matrices=False, compute_uv=True)
        return s, u, _h(vt)
    s, u, vt = results
    k = s.shape[-1]
    zero = (0,) * a.ndim
    u = ops.slice(u, zero, u.shape[:-1] + (k,))
    vt = ops.slice(vt, zero, vt.shape[:-2] + (k, vt.shape[-1]))
    return s, u, _h(vt)


def _completing_count(attrs, a) -> tuple[int, int]:
    """How many columns of u and of vt^H only complete an orthonormal basis (full_matrices, m != n)."""
    m, n = a.shape[-2:]
    if not (attrs.get("full_matrices", False) and attrs.get("compute_uv", True)):
        return 0, 0
    k = min(m, n)
    return m - k, n - k


def _svd_jvp(attrs, operands, results, tangents):
    """JAX's ``_svd_jvp_rule``: with dS = u^H da v and F_ij = 1 / (s_j^2 - s_i^2), ds = Re diag(dS),
    du = u (F o (dS s + s dS^H) + i Im diag(dS) / s) + (I - u u^H) da v / s (m > n),
    dv = v (F o (s dS + dS^H s)) + (I - v v^H) da^H u / s (n > m)."""
    (a,), (da,) = operands, tangents
    compute_uv = attrs.get("compute_uv", True)
    if da is None:
        return [None] * (3 if compute_uv else 1)
    s, u, v = _reduced_svd(attrs, a, results)
    ds_matrix = _mm(_h(u), da, v)
    ds = _real(_diagonal(ds_matrix))
    if not compute_uv:
        return [ds]
    m, n = a.shape[-2:]
    f = _inverse_square_gaps(s, ds_matrix)
    ds_s = _row_scaled(ds_matrix, s)
    s_ds = _column_scaled(ds_matrix, s)
    phase = _row_scaled(_only_diagonal(_scale(ops.sub(ds_matrix, _h(ds_matrix)), 0.5)), _inverse_or_zero(s))
    du = _mm(u, _add(ops.mul(f, _add(ds_s, _h(ds_s))), phase))
    dv = _mm(v, ops.mul(f, _add(s_ds, _h(s_ds))))
    one_over_s = ops.div(ops.full(s.shape, 1, s.dtype), s)
    if m > n:
        du = _add(du, _row_scaled(_without_span(_mm(da, v), u), one_over_s))
    if n > m:
        dv = _add(dv, _row_scaled(_without_span(_mm(_h(da), u), v), one_over_s))
    extra_u, extra_v = _completing_count(attrs, a)
    if extra_u:
        du = ops.concatenate([du, ops.full(du.shape[:-1] + (extra_u,), np.nan, du.dtype)], a.ndim - 1)
    if extra_v:
        dv = ops.concatenate([dv, ops.full(dv.shape[:-1] + (extra_v,), np.nan, dv.dtype)], a.ndim - 1)
    return [ds, du, _h(dv)]


def _svd_vjp(attrs, operands, results, cts):
    """The transpose of :func:`_svd_jvp`; a cotangent on a completing column of u (row of vt) makes the
    gradient NaN, as those columns' derivatives are."""
    (a,), (ct_s, *ct_vectors) = operands, cts
    ct_u, ct_vt = ct_vectors if ct_vectors else (None, None)
    if ct_s is None and ct_u is None and ct_vt is None:
        return [None]
    s, u, v = _reduced_svd(attrs, a, results)
    k = s.shape[-1]
    zero = (0,) * a.ndim
    unused = []
    if ct_u is not None and ct_u.shape[-1] > k:
        unused.append(ops.slice(ct_u, zero[:-1] + (k,), ct_u.shape))
        ct_u = ops.slice(ct_u, zero, ct_u.shape[:-1] + (k,))
    if ct_vt is not None and ct_vt.shape[-2] > k:
        unused.append(ops.slice(ct_vt, zero[:-2] + (k, 0), ct_vt.shape))
        ct_vt = ops.slice(ct_vt, zero, ct_vt.shape[:-2] + (k, ct_vt.shape[-1]))
    ct_v = None if ct_vt is None else _h(ct_vt)
    m, n = a.shape[-2:]
    like = ops.full(u.shape[:-2] + (k, k), 0, u.dtype)          # the shape and dtype of dS = u^H da v
    f = _inverse_square_gaps(s, like)
    one_over_s = ops.div(ops.full(s.shape, 1, s.dtype), s)
    terms, ct_a = [], []
    if ct_s is not None:
        terms.append(_diag(_as(ct_s, like), like))
    if ct_u is not None:
        ct_x = _mm(ops.matrix_transpose(u), ct_u)
        ct_g = ops.mul(f, ct_x)
        terms.append(_row_scaled(_add(ct_g, _h(ct_g)), s))
        on_diagonal = _row_scaled(_only_diagonal(ct_x), _inverse_or_zero(s))
        terms.append(_scale(ops.sub(on_diagonal, _h(on_diagonal)), 0.5))
        if m > n:
            ct_a.append(_mm(_without_span(_row_scaled(ct_u, one_over_s), ops.conj(u)), ops.matrix_transpose(v)))
    if ct_v is not None:
        ct_g = ops.mul(f, _mm(ops.matrix_transpose(v), ct_v))
        terms.append(_column_scaled(_add(ct_g, _h(ct_g)), s))
        if n > m:
            ct_a.append(_mm(ops.conj(u), _h(_without_span(_row_scaled(ct_v, one_over_s), ops.conj(v)))))
    if terms:
        ct_a.append(_mm(ops.conj(u), _add(*terms), ops.matrix_transpose(v)))
    grad = _add(*ct_a)
    for rest in unused:
        grad = _nan_where_used(grad, rest)
    return [grad]


P.svd.register(vjp=_svd_vjp, jvp=_svd_jvp, batch=_batch_at_front(P.svd))
