"""The decomposition primitives (cholesky, triangular_solve, qr, eigh, lu, eig, svd): values against NumPy, derivatives
against JAX (and finite differences where the choice of phases matters), batching against jax.vmap.

Each test compiles one function that checks many cases at once: compiling the decompositions is what
costs time here."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.ir import ShapeError, TensorType, primitives as P
from xlac.trace import ops
from tests.ir.test_primitives import covers
from tests.linalg_inputs import adjoint, hermitian_positive, rand
from tests.tolerance import assert_matches

LINALG_DTYPES = [np.dtype(d) for d in ("float32", "float64", "complex64", "complex128")]
TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}


def run(fn, *args):
    """Compile ``fn`` on ``args``; its (nested tuple of) results as NumPy arrays."""
    return jax.tree_util.tree_map(np.asarray, xlac.compile(fn)(*args))


def close(got, want, dtype, scale=1.0):
    tol = TOL[np.dtype(dtype).name] * 10
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol * scale)


# ---------------------------------------------------------------- values


@covers("cholesky")
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_cholesky_matches_numpy_and_reads_one_triangle(dtype):
    rng = np.random.default_rng(0)
    a = hermitian_positive(rng, (2, 4, 4), dtype)
    junk = a + np.triu(rand(rng, a.shape, dtype), 1)            # the upper triangle is never read
    lower, upper = run(lambda x, y: (ops.cholesky(x), ops.cholesky(adjoint_op(y), lower=False)), junk, junk)
    expected = np.linalg.cholesky(a.astype(np.complex128 if dtype.kind == "c" else np.float64))
    close(lower, expected, dtype, scale=3)
    close(upper, adjoint(expected), dtype, scale=3)
    assert np.all(np.triu(lower, 1) == 0) and np.all(np.tril(upper, -1) == 0)


def adjoint_op(x):
    return ops.matrix_transpose(x, conjugate=True)


def test_cholesky_of_an_indefinite_matrix_is_nan():
    got = run(ops.cholesky, np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert np.isnan(got).any()


SOLVE_CASES = list(itertools.product([True, False], [True, False], ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
                                     [False, True]))


def _op(a, kind):
    return {"NO_TRANSPOSE": a, "TRANSPOSE": np.swapaxes(a, -1, -2), "ADJOINT": adjoint(a)}[kind]


@covers("triangular_solve")
@pytest.mark.parametrize("dtype", [np.dtype("float32"), np.dtype("complex128")])
def test_triangular_solve_every_variant(dtype):
    rng = np.random.default_rng(1)
    n = 4
    base = rand(rng, (2, n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    left_b, right_b = rand(rng, (2, n, 3), dtype), rand(rng, (2, 3, n), dtype)

    def all_variants(a, bl, br):
        return tuple(ops.triangular_solve(a, bl if left else br, left_side=left, lower=lower, transpose_a=kind,
                                          unit_diagonal=unit) for left, lower, kind, unit in SOLVE_CASES)
    got = run(all_variants, base, left_b, right_b)
    for out, (left, lower, kind, unit) in zip(got, SOLVE_CASES):
        tri = np.tril(base) if lower else np.triu(base)
        if unit:
            tri = tri.copy()
            tri[..., range(n), range(n)] = 1
        op = _op(tri, kind)
        expected = np.linalg.solve(op, left_b) if left else np.swapaxes(
            np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(right_b, -1, -2)), -1, -2)
        close(out, expected, dtype, scale=10)


def _check_qr(a, q, r, mode):
    m, n = a.shape[-2:]
    k = min(m, n)
    rows = m if mode == "complete" else k
    assert q.shape == a.shape[:-2] + (m, rows) and r.shape == a.shape[:-2] + (rows, n)
    tol = TOL[a.dtype.name] * 20
    np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol)
    np.testing.assert_allclose(adjoint(q) @ q, np.broadcast_to(np.eye(rows), q.shape[:-2] + (rows, rows)),
                               rtol=tol, atol=tol)
    assert np.all(np.tril(r, -1) == 0)
    if rows == m and m:
        np.testing.assert_allclose(np.linalg.det(q), 1, rtol=tol, atol=tol)


QR_CASES = {     # dtype -> (shape or "eye"/"triangular", mode) pairs: between them every shape, mode and dtype
    "float32": [((5, 3), "reduced"), ((5, 3), "complete"), ((2, 3, 3), "reduced")],
    "float64": [((3, 5), "reduced"), ((3, 5), "complete"), ("eye", "reduced"), ("triangular", "complete")],
    "complex64": [((4, 4), "reduced"), ((5, 3), "complete")],
    "complex128": [((3, 5), "complete"), ((2, 3, 3), "reduced"), ("triangular", "reduced")],
}


@covers("qr")
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_qr_reconstructs_with_orthonormal_q_of_determinant_one(dtype):
    rng = np.random.default_rng(2)
    cases = QR_CASES[dtype.name]
    arrays = [np.eye(3, dtype=dtype) if s == "eye" else np.triu(rand(rng, (3, 3), dtype)) if s == "triangular"
              else rand(rng, s, dtype) for s, _ in cases]
    got = run(lambda *xs: tuple(ops.qr(x, mode) for x, (_, mode) in zip(xs, cases)), *arrays)
    for a, (q, r), (_, mode) in zip(arrays, got, cases):
        _check_qr(a, q, r, mode)


@pytest.mark.parametrize("dtype", [np.dtype("float64"), np.dtype("complex128")])
def test_qr_raw_is_lapacks_geqrf(dtype):
    rng = np.random.default_rng(3)
    a = rand(rng, (5, 3), dtype)
    h, tau = run(lambda x: ops.qr(x, "raw"), a)
    expected_h, expected_tau = np.linalg.qr(a, mode="raw")
    close(np.swapaxes(h, -1, -2), expected_h, dtype)
    close(tau, expected_tau, dtype)


def test_qr_and_eigh_of_empty_matrices():
    q, r, w, v = run(lambda a, b: (*ops.qr(a, "complete"), *ops.eigh(b)), np.zeros((3, 0)), np.zeros((2, 0, 0)))
    assert_matches(q, np.eye(3))
    assert r.shape == (3, 0) and w.shape == (2, 0) and v.shape == (2, 0, 0)


@covers("eigh")
@pytest.mark.parametrize("dtype", [d for d in LINALG_DTYPES if d != np.float64])   # float64: the tests below
def test_eigh_matches_numpy_and_reconstructs(dtype):
    rng = np.random.default_rng(4)
    a = rand(rng, (3, 5, 5), dtype)
    h = a + adjoint(a)
    lower_only, upper_only = np.tril(h), np.triu(h)
    (wl, vl), (wu, vu) = run(lambda x, y: (ops.eigh(x), ops.eigh(y, lower=False)), lower_only, upper_only)
    expected = np.linalg.eigvalsh(h.astype(np.complex128 if dtype.kind == "c" else np.float64))
    assert wl.dtype == np.dtype("float32" if dtype.itemsize in (4, 8) and dtype.name != "float64" else "float64")
    for w, v in ((wl, vl), (wu, vu)):
        close(w, expected, dtype, scale=10)
        close((v * w[..., None, :]) @ adjoint(v), h, dtype, scale=10)
        close(adjoint(v) @ v, np.broadcast_to(np.eye(5), v.shape), dtype)


def test_eigh_float64_repeated_and_close_eigenvalues():
    """XLA's Jacobi stops short of float64 accuracy; the emitter's refinement must not break degenerate
    eigenspaces (a first-order correction divides by eigenvalue gaps)."""
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    spectra = [np.array([1, 1, 1, 2, 2, 3, -1, -1.0]), np.array([1, 1 + 1e-3, 2, 3, 4, 5, 6, 7.0]),
               np.linspace(-3, 5, 8)]
    mats = [(q * d) @ q.T * 100 for d in spectra]
    for h, (w, v) in zip(mats, run(lambda *xs: tuple(ops.eigh(x) for x in xs), *mats)):
        np.testing.assert_allclose((v * w) @ v.T, h, atol=_backward_error_bound(h))
        np.testing.assert_allclose(v.T @ v, np.eye(8), atol=_backward_error_bound(np.eye(8)))
        np.testing.assert_allclose(w, np.linalg.eigvalsh(h), atol=_backward_error_bound(h))


def _backward_error_bound(a):
    """What a backward-stable decomposition of ``a`` guarantees, by LAPACK's test criterion: 30 * n * eps
    * ||a||_1 (THRESH = 30 in LAPACK's sep.in), not a number of eps measured on one machine."""
    return 30 * a.shape[-1] * np.finfo(a.dtype).eps * np.abs(a).sum(axis=-2).max()


@settings(max_examples=8)
@given(st.integers(0, 2**31 - 1))
def test_eigh_of_random_symmetric_matrices(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(6, 6)) * 10.0 ** rng.integers(-3, 4)
    h = a + a.T
    w, v = jax.tree_util.tree_map(np.asarray, _eigh(h))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), atol=_backward_error_bound(h))
    np.testing.assert_allclose((v * w) @ v.T, h, atol=_backward_error_bound(h))


_eigh = xlac.compile(lambda x: ops.eigh(x))


# ---------------------------------------------------------------- type rules


@pytest.mark.parametrize("fn, args, match", [
    (lambda x: ops.cholesky(x), (np.ones((2, 3)),), r"cholesky expects square matrices, got f64\[2,3\]"),
    (lambda x: ops.cholesky(x), (np.ones(3),), r"cholesky expects matrices \(at least 2 axes\), got f64\[3\]"),
    (lambda x: ops.eigh(x), (np.ones((2, 2), np.float16),), r"eigh expects float32, float64, complex64 or complex128"),
    (lambda x: ops.qr(x, "full"), (np.ones((2, 2)),), r"qr: mode must be one of"),
    (lambda a, b: ops.triangular_solve(a, b, left_side=True, lower=True), (np.ones((3, 3)), np.ones((2, 1))),
     r"triangular_solve: the rows of f64\[2,1\] must match the order 3 of f64\[3,3\]"),
    (lambda a, b: ops.triangular_solve(a, b, left_side=True, lower=True),
     (np.ones((3, 3)), np.ones((3, 1), np.float32)),
     r"triangular_solve expects a right-hand side of f64\[3,3\]'s dtype"),
    (lambda a, b: ops.triangular_solve(a, b, left_side=False, lower=True, transpose_a="CONJ"),
     (np.ones((3, 3)), np.ones((1, 3))), r"transpose_a must be one of"),
])
def test_type_rule_errors(fn, args, match):
    with pytest.raises(ShapeError, match=match):
        xlac.compile(fn)(*args)


# ---------------------------------------------------------------- derivatives


def _jax64(fn, *args):
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, fn(*args))


def _compare_trees(got, want, tol=1e-9):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _gradient_case(dtype):
    """Operands and tangents/cotangents for every primitive, and the xlac and JAX functions that use them
    (eigh and qr through functions that do not depend on the phases of the vectors)."""
    rng = np.random.default_rng(6)
    n = 4
    spd = hermitian_positive(rng, (n, n), dtype)
    sym = rand(rng, (n, n), dtype)
    sym = sym + adjoint(sym)
    tri = np.tril(rand(rng, (n, n), dtype)) + 3 * np.eye(n)
    b = rand(rng, (n, 2), dtype)
    tall, wide = rand(rng, (5, 3), dtype), rand(rng, (3, 5), dtype)
    weights = rng.normal(size=5)
    primals = (spd, sym, tri, b, tall, wide)

    def invariants(q, r, mm, h):
        k = min(q.shape[-1], r.shape[-2])
        return (mm(q * weights[:q.shape[-1]], h(q)), mm(h(r), r * weights[:r.shape[-2], None]),
                mm(q[:, :k] * weights[:k], r[:k]))

    def xlac_fn(spd, sym, tri, b, tall, wide):
        w, v = ops.eigh(sym)
        cw = ops.constant(weights[:n].astype(dtype))
        vw = ops.mul(v, ops.broadcast_in_dim(cw, v.shape, (1,)))
        outs = [ops.cholesky(spd), ops.cholesky(spd, lower=False), w, ops.matmul(vw, adjoint_op(v)),
                ops.triangular_solve(tri, b, left_side=True, lower=True, transpose_a="ADJOINT"),
                ops.triangular_solve(ops.matrix_transpose(tri), ops.matrix_transpose(b), left_side=False, lower=False)]
        for x, mode in ((tall, "reduced"), (wide, "complete")):
            q, r = ops.qr(x, mode)
            outs.extend(_xlac_invariants(q, r, weights, dtype))
        return tuple(outs)

    def jax_fn(spd, sym, tri, b, tall, wide):
        from jax import lax
        w, v = jnp.linalg.eigh(sym)
        chol = lax.linalg.cholesky(spd)
        outs = [chol, jnp.conj(chol.T), w, (v * weights[:n]) @ jnp.conj(v.T),
                lax.linalg.triangular_solve(tri, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True),
                lax.linalg.triangular_solve(tri.T, b.T, left_side=False, lower=False)]
        for x in (tall, wide):
            outs.extend(invariants(*jnp.linalg.qr(x), jnp.matmul, lambda y: jnp.conj(y.T)))
        return tuple(outs)

    tangents = tuple(rand(rng, p.shape, dtype) for p in primals)
    tangents = (tangents[0] + adjoint(tangents[0]), tangents[1] + adjoint(tangents[1])) + tangents[2:]
    return primals, tangents, xlac_fn, jax_fn, rng


def _xlac_invariants(q, r, weights, dtype):
    k = min(q.shape[-1], r.shape[-2])
    cq = ops.broadcast_in_dim(ops.constant(weights[:q.shape[-1]].astype(dtype)), q.shape, (1,))
    cr = ops.broadcast_in_dim(ops.constant(weights[:r.shape[-2]].astype(dtype)), r.shape, (0,))
    qk = ops.slice(ops.mul(q, cq), (0, 0), (q.shape[0], k))
    return (ops.matmul(ops.mul(q, cq), adjoint_op(q)), ops.matmul(adjoint_op(r), ops.mul(r, cr)),
            ops.matmul(qk, ops.slice(r, (0, 0), (k, r.shape[1]))))


@pytest.mark.parametrize("dtype", [np.dtype("float64"), np.dtype("complex128")])
def test_jvp_and_vjp_match_jax(dtype):
    primals, tangents, xlac_fn, jax_fn, rng = _gradient_case(dtype)
    want_out = _jax64(lambda: jax.jit(jax_fn)(*primals))
    cotangents = tuple(rand(rng, np.shape(o), np.asarray(o).dtype) for o in want_out)

    def both(fn, jvp, vjp):
        return lambda p, t, ct: (jvp(fn, p, t), vjp(fn, *p)[1](ct))
    # Traced as written: xlac_fn makes trace-time constants of the closed-over NumPy weights with ops.constant
    # (converted, a floating-point array from outside is read per call, a traced value).
    got = xlac.compile(both(xlac_fn, xlac.jvp, xlac.vjp), convert=False)(primals, tangents, cotangents)
    want = _jax64(lambda: jax.jit(both(jax_fn, jax.jvp, jax.vjp))(primals, tangents, cotangents))
    _compare_trees(got, want)


def test_complex_qr_and_eigh_vjps_are_transposes_of_jvps_that_match_finite_differences():
    """Phase-invariant functions cannot see the phase of Q's columns: check dQ, dR against finite
    differences of xlac's own qr (its phases are fixed by det(Q) = 1), and each VJP against its JVP
    (<ct, J t> = <J^T ct, t>), eigh's too."""
    rng = np.random.default_rng(7)
    cases = (((4, 4), "reduced"), ((3, 5), "complete"), ((5, 3), "reduced"))
    step = 1e-6
    a = [rand(rng, shape, np.complex128) for shape, _ in cases]
    da = [rand(rng, shape, np.complex128) for shape, _ in cases]
    h = rand(rng, (4, 4), np.complex128)
    h, dh = h + adjoint(h), rand(rng, (4, 4), np.complex128)
    dh = dh + adjoint(dh)
    fns = [lambda x, mode=mode: ops.qr(x, mode) for _, mode in cases] + [ops.eigh]
    primals, tangents = a + [h], da + [dh]
    result_types = [P.qr.infer_types(TensorType(x.shape, x.dtype), mode=mode) for x, (_, mode) in zip(a, cases)]
    result_types.append(P.eigh.infer_types(TensorType(h.shape, h.dtype), lower=True))
    cotangents = [tuple(rand(rng, t.shape, t.dtype) for t in types) for types in result_types]

    def everything(primals, tangents, cotangents):
        out = []
        for f, x, t, ct in zip(fns, primals, tangents, cotangents):
            small = ops.mul(t, ops.full(t.shape, step, t.dtype))
            plus, minus = f(ops.add(x, small)), f(ops.sub(x, small))
            out.append((xlac.jvp(f, (x,), (t,))[1], xlac.vjp(f, x)[1](ct), plus, minus))
        return out
    results = run(everything, primals, tangents, cotangents)
    for i, (tangent_out, (ct_x,), plus, minus) in enumerate(results):
        if i < len(cases):          # qr: finite differences of xlac's own phases
            for d, p, m in zip(tangent_out, plus, minus):
                np.testing.assert_allclose((p - m) / (2 * step), d, atol=1e-8)
        lhs = sum(np.real(np.sum(c * d)) for c, d in zip(cotangents[i], tangent_out))
        np.testing.assert_allclose(lhs, np.real(np.sum(ct_x * tangents[i])), rtol=1e-10)


def test_raw_qr_has_no_derivative_and_completing_columns_have_nan_derivatives():
    with pytest.raises(NotImplementedError, match=r"qr\(mode='raw'\)"):
        xlac.grad(lambda x: ops.reduce(ops.qr(x, "raw")[1], "sum", (0,)))(np.eye(2))
    a = np.random.default_rng(10).normal(size=(4, 2))

    def column_sum(lo, hi):
        return lambda x: ops.reduce(ops.slice(ops.qr(x, "complete")[0], (0, lo), (4, hi)), "sum", (0, 1))
    first, rest = run(lambda x: (xlac.grad(column_sum(0, 2))(x), xlac.grad(column_sum(2, 4))(x)), a)
    assert np.isfinite(first).all() and np.isnan(rest).all()
    thin = run(xlac.grad(lambda x: ops.reduce(ops.qr(x)[0], "sum", (0, 1))), a)
    np.testing.assert_allclose(first, thin, rtol=1e-12)


# ---------------------------------------------------------------- batching


def test_vmap_matches_jax_vmap():
    rng = np.random.default_rng(9)
    spd = hermitian_positive(rng, (4, 3, 3), np.float64)
    spd_b1 = np.moveaxis(spd, 0, 1)
    tri = np.tril(rand(rng, (3, 3), np.float64)) + 3 * np.eye(3)
    b = rand(rng, (3, 2, 4), np.float64)                          # batched along axis 2
    wide = rand(rng, (4, 2, 3), np.float64)

    def xlac_fn(s, t, rhs, x):
        w, _ = ops.eigh(s)
        q, r = ops.qr(x)
        return (ops.cholesky(s), w, ops.triangular_solve(t, rhs, left_side=True, lower=True),
                ops.matmul(q, r), ops.matmul(adjoint_op(r), r))

    def jax_fn(s, t, rhs, x):
        from jax import lax
        q, r = jnp.linalg.qr(x)
        return (lax.linalg.cholesky(s), jnp.linalg.eigvalsh(s), lax.linalg.triangular_solve(t, rhs, left_side=True,
                lower=True), q @ r, r.T @ r)
    in_axes = (1, None, 2, 0)
    right = lambda t, rhs: ops.triangular_solve(t, rhs, left_side=False, lower=True)  # noqa: E731
    tris, rhs = np.stack([tri, 2 * tri]), b[:, :, 0].T
    got, got_right = run(lambda *args: (xlac.vmap(xlac_fn, in_axes=in_axes)(*args[:4]),
                                        xlac.vmap(right, in_axes=(0, None))(*args[4:])),
                         spd_b1, tri, b, wide, tris, rhs)
    want = _jax64(lambda: jax.jit(jax.vmap(jax_fn, in_axes=in_axes))(spd_b1, tri, b, wide))
    _compare_trees(got, want)
    assert_matches(got_right, np.stack([np.linalg.solve(m.T, rhs.T).T for m in (tri, 2 * tri)]))


@covers("lu")
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_lu_matches_lapack_and_its_derivatives_match_jax(dtype):
    rng = np.random.default_rng(3)
    a, tangent, cotangent = (rand(rng, (2, 5, 5), dtype) for _ in range(3))
    factors, pivots = run(ops.lu, a)
    want_factors, want_pivots, _ = _jax64(jax.lax.linalg.lu, a)
    close(factors, want_factors, dtype)
    np.testing.assert_array_equal(pivots, want_pivots)
    assert pivots.dtype == np.int32
    lu_only = lambda x: ops.lu(x)[0]
    jvp = run(lambda x, t: xlac.jvp(lu_only, (x,), (t,))[1], a, tangent)
    vjp = run(lambda x, c: xlac.vjp(lu_only, x)[1](c)[0], a, cotangent)
    jax_lu = lambda x: jax.lax.linalg.lu(x)[0]
    close(jvp, _jax64(lambda: jax.jvp(jax_lu, (a,), (tangent,))[1]), dtype, scale=10)
    close(vjp, _jax64(lambda: jax.vjp(jax_lu, a)[1](cotangent)[0]), dtype, scale=10)
    batched = run(xlac.vmap(ops.lu), a)
    np.testing.assert_array_equal(batched[1], want_pivots)


@covers("eig")
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_eig_matches_lapack_and_its_eigenvalue_derivatives_match_jax(dtype):
    rng = np.random.default_rng(4)
    a, tangent = rand(rng, (2, 4, 4), dtype), rand(rng, (2, 4, 4), dtype)
    w, v = run(ops.eig, a)
    want_w, want_v = _jax64(lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=False), a)
    close(w, want_w, dtype, scale=10)
    close(np.abs(v), np.abs(want_v), dtype, scale=10)
    values = lambda x: ops.eig(x, vectors=False)[0]
    jvp = run(lambda x, t: xlac.jvp(values, (x,), (t,))[1], a, tangent)
    jax_values = lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]
    close(jvp, _jax64(lambda: jax.jvp(jax_values, (a,), (tangent,))[1]), dtype, scale=100)
    close(run(xlac.vmap(values), a), want_w, dtype, scale=10)


SVD_SHAPES = [(2, 4, 4), (5, 3), (3, 5)]


@covers("svd")
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_svd_is_lapacks_gesdd(dtype):
    """The same gesdd as jax.lax.linalg.svd on CPU: equal singular values and vectors (phases included), in
    every mode; vmap keeps leading axes a batch."""
    rng = np.random.default_rng(12)
    arrays = [rand(rng, s, dtype) for s in SVD_SHAPES]
    modes = [(True, True), (False, True), (False, False)]
    got, batched = run(lambda *xs: ([ops.svd(x, full, uv) for x in xs for full, uv in modes],
                                    xlac.vmap(lambda x: ops.svd(x, compute_uv=False)[0])(xs[0])), *arrays)
    want = _jax64(lambda: jax.jit(lambda *xs: [jax.lax.linalg.svd(x, full_matrices=full, compute_uv=uv)
                                               for x in xs for full, uv in modes])(*arrays))
    for g, w in zip(got, want):
        w = (w,) if isinstance(w, np.ndarray) else (w[1], w[0], w[2])        # jax: (u, s, vt)
        assert [x.shape for x in g] == [x.shape for x in w] and g[0].dtype == w[0].dtype
        for x, y in zip(g, w):
            close(x, y, dtype, scale=10)
    close(batched, want[2], dtype, scale=10)


@pytest.mark.parametrize("dtype", [np.dtype("float64"), np.dtype("complex128")])
def test_reduced_svd_jvp_and_vjp_match_jax(dtype):
    rng = np.random.default_rng(13)
    arrays, tangents = ([rand(rng, s, dtype) for s in SVD_SHAPES] for _ in range(2))
    cotangents = [tuple(rand(rng, t.shape, t.dtype) for t in P.svd.infer_types(TensorType(x.shape, x.dtype)))
                  for x in arrays]
    got = run(lambda xs, ts, cts: [(xlac.jvp(ops.svd, (x,), (t,))[1], xlac.vjp(ops.svd, x)[1](ct)[0])
                                   for x, t, ct in zip(xs, ts, cts)], arrays, tangents, cotangents)
    reduced = lambda x: jax.lax.linalg.svd(x, full_matrices=False)            # noqa: E731

    def jax_derivatives(xs, ts, cts):
        return [((lambda du, ds, dvt: (ds, du, dvt))(*jax.jvp(reduced, (x,), (t,))[1]),
                 jax.vjp(reduced, x)[1]((ct[1], ct[0], ct[2]))[0]) for x, t, ct in zip(xs, ts, cts)]
    _compare_trees(got, _jax64(lambda: jax.jit(jax_derivatives)(arrays, tangents, cotangents)), tol=1e-8)
