"""xlac.numpy.linalg against numpy.linalg: values, dtypes and shapes (compiled and eager), reconstructions
where the result is not unique (QR, eigenvectors, SVD), accuracy of the SVD on hard matrices, errors,
and derivatives and vmap against JAX.

Decompositions are slow to compile, so each test compiles one function that computes many results,
and hypothesis varies values, not shapes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.errors import UnsupportedError

L = xnp.linalg
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}
seeds = st.integers(0, 2**31 - 1)


def tree_np(x):
    return jax.tree_util.tree_map(np.asarray, x)


def rand(rng, shape, dtype):
    x = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(-4, 5, size=shape).astype(dtype)
        return x + np.eye(shape[-1], dtype=dtype) * 9 if shape[-2:] == shape[-1:] * 2 else x
    return x.astype(dtype)


def well_conditioned(rng, shape, dtype):
    """A random matrix (stack) plus a multiple of the identity: condition number about 10."""
    a = rand(rng, shape, dtype)
    return a if a.dtype.kind in "iu" else (a + 3 * np.sqrt(shape[-1]) * np.eye(shape[-1])).astype(dtype)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def check(got, want, dtype, *, scale=1.0):
    """Same shape and dtype as NumPy's, values within the dtype's tolerance."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != NumPy's {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != NumPy's {want.dtype}"
    dtype = np.dtype(dtype)
    tol = TOL["float64" if dtype.kind in "iub" else dtype.name]
    np.testing.assert_allclose(got, want, rtol=tol * scale, atol=tol * scale)


# ---------------------------------------------------------------- values against NumPy


def _many(a, b, v, spd):
    """Every function on one matrix stack (and a right-hand side, a vector, a positive-definite stack)."""
    sign, logabsdet = L.slogdet(a)
    return {
        "det": L.det(a), "sign": sign, "logabsdet": logabsdet, "inv": L.inv(a), "solve": L.solve(a, b),
        "solve_vector": L.solve(a, v), "cholesky": L.cholesky(spd), "cholesky_upper": L.cholesky(spd, upper=True),
        "eigvalsh": L.eigvalsh(spd), "eigvalsh_upper": L.eigvalsh(spd, UPLO="U"), "svdvals": L.svdvals(a),
        "norm2": L.norm(a, 2, axis=(-2, -1)), "nuc": L.matrix_norm(a, ord="nuc"), "fro": L.norm(a, axis=(-1, -2)),
        "cond": L.cond(a), "cond1": L.cond(a, 1), "pinv": L.pinv(a), "rank": L.matrix_rank(a),
        "power": L.matrix_power(a, -2),
    }


def _numpy_many(a, b, v, spd):
    sign, logabsdet = np.linalg.slogdet(a)
    return {
        "det": np.linalg.det(a), "sign": sign, "logabsdet": logabsdet, "inv": np.linalg.inv(a),
        "solve": np.linalg.solve(a, b), "solve_vector": np.linalg.solve(a, v), "cholesky": np.linalg.cholesky(spd),
        "cholesky_upper": np.linalg.cholesky(spd, upper=True), "eigvalsh": np.linalg.eigvalsh(spd),
        "eigvalsh_upper": np.linalg.eigvalsh(spd, UPLO="U"), "svdvals": np.linalg.svdvals(a),
        "norm2": np.linalg.norm(a, 2, axis=(-2, -1)), "nuc": np.linalg.matrix_norm(a, ord="nuc"),
        "fro": np.linalg.norm(a, axis=(-1, -2)), "cond": np.linalg.cond(a), "cond1": np.linalg.cond(a, 1),
        "pinv": np.linalg.pinv(a), "rank": np.linalg.matrix_rank(a), "power": np.linalg.matrix_power(a, -2),
    }


_compiled_many = xlac.compile(_many)
CASES = [("float64", (2, 3, 3)), ("float32", (4, 4)), ("complex128", (3, 3))]


def _operands(seed, dtype, shape):
    rng = np.random.default_rng(seed)
    a = well_conditioned(rng, shape, dtype)
    b, v, m = rand(rng, shape[:-1] + (2,), dtype), rand(rng, shape[-1:], dtype), rand(rng, shape, dtype)
    spd = (m @ adjoint(m) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    return a, b, v, spd


@settings(max_examples=3)
@pytest.mark.parametrize("dtype, shape", CASES)
@given(seed=seeds)
def test_compiled_values_match_numpy(dtype, shape, seed):
    a, b, v, spd = _operands(seed, dtype, shape)
    got = tree_np(_compiled_many(a, b, v, spd))
    want = _numpy_many(a, b, v, spd)
    for key in want:
        check(got[key], want[key], dtype, scale=30 if key in ("pinv", "power", "cond", "cond1") else 10)


@settings(max_examples=4)
@given(seed=seeds)
def test_eager_values_match_numpy(seed):
    a, b, v, spd = _operands(seed, "float64", (2, 3, 3))
    want = _numpy_many(a, b, v, spd)
    x = xlac.asarray(a)                       # outside a trace each function runs eagerly
    got = {"det": L.det(x), "solve": L.solve(x, b), "cholesky": L.cholesky(spd), "svdvals": L.svdvals(x),
           "eigvalsh_upper": L.eigvalsh(spd, UPLO="U"), "logabsdet": L.slogdet(x).logabsdet}
    for key, value in got.items():
        assert isinstance(value, xlac.Array), key
        check(value, want[key], "float64", scale=10)


def test_named_results_dtypes_and_singular_matrices():
    """NumPy's named tuples; result dtypes; with the after-call checks off, singular matrices give
    infinities (and NaN), not errors."""
    def f(a32, ints, c64, z, diag, neg):
        res, slog, q, svd = L.eigh(a32), L.slogdet(z), L.qr(a32), L.svd(a32)
        assert isinstance(res, L.EighResult) and isinstance(slog, L.SlogdetResult)
        assert isinstance(q, L.QRResult) and isinstance(svd, L.SVDResult)
        return (res.eigenvalues, svd.S, L.det(ints), L.norm(c64), L.solve(a32, np.ones(2)), L.det(z), slog.sign,
                slog.logabsdet, L.inv(z), L.cond(diag), L.cholesky(neg), L.inv(ints), L.eigvalsh(ints))
    a32, ints = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32), np.array([[1, 2], [2, 4]])
    args = (a32, ints, np.ones(3, np.complex64), np.zeros((3, 3)), np.diag([1.0, 0.0]), -np.eye(2))
    (w, s, det_int, norm_c, solved, det_z, sign, logabsdet, inv_z, cond_inf, chol_nan, inv_int,
     eig_int) = tree_np(xlac.compile(f, check_bounds=False)(*args))
    assert (w.dtype, s.dtype, det_int.dtype, norm_c.dtype, solved.dtype) == (np.float32, np.float32, np.float64,
                                                                             np.float32, np.float64)
    assert det_z == 0 and sign == 0 and logabsdet == -np.inf and not np.isfinite(inv_z).all()
    assert inv_int.dtype == eig_int.dtype == np.float64
    np.testing.assert_allclose(eig_int, np.linalg.eigvalsh(ints), atol=1e-12)
    assert cond_inf == np.inf and np.isnan(chol_nan).any()
    with pytest.raises(TypeError, match=r"det: array type float16 is unsupported in linalg"):
        L.det(np.eye(2, dtype=np.float16))


# ---------------------------------------------------------------- decompositions that are not unique


def _decompositions(x, sym):
    return {"qr": tuple(L.qr(x)), "qr_complete": tuple(L.qr(x, mode="complete")), "r": L.qr(x, mode="r"),
            "raw": tuple(L.qr(x, mode="raw")), "svd": tuple(L.svd(x)),
            "svd_reduced": tuple(L.svd(x, full_matrices=False)), "eigh": tuple(L.eigh(sym)),
            "eigh_upper": tuple(L.eigh(sym, UPLO="U")), "hermitian_svd": tuple(L.svd(sym, hermitian=True)),
            "hermitian_s": L.svd(sym, compute_uv=False, hermitian=True)}


def _is_orthonormal(m, close):
    k = m.shape[-1]
    close(adjoint(m) @ m, np.broadcast_to(np.eye(k), m.shape[:-2] + (k, k)))


@pytest.mark.parametrize("dtype, shape", [("float64", (5, 3)), ("complex64", (3, 5)), ("float32", (2, 3, 3))])
def test_qr_eigh_svd_reconstruct_with_numpys_shapes(dtype, shape):
    rng = np.random.default_rng(1)
    x = rand(rng, shape, dtype)
    sym = rand(rng, (4, 4), dtype)
    sym = sym + adjoint(sym)
    got = tree_np(xlac.compile(_decompositions)(x, sym))
    tol = TOL[dtype] * 10
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=tol, atol=tol)  # noqa: E731
    for key, mode in (("qr", "reduced"), ("qr_complete", "complete")):
        (q, r), (nq, nr) = got[key], np.linalg.qr(x, mode=mode)
        assert (q.shape, r.shape, q.dtype) == (nq.shape, nr.shape, nq.dtype)
        close(q @ r, x)
        _is_orthonormal(q, close)
    close(np.abs(got["r"]), np.abs(np.linalg.qr(x, mode="r")))
    for got_part, want_part in zip(got["raw"], np.linalg.qr(x, mode="raw")):
        close(got_part, want_part)
    (u, s, vh), (ur, sr, vhr), ns = got["svd"], got["svd_reduced"], np.linalg.svd(x)
    assert (u.shape, s.shape, vh.shape) == (ns.U.shape, ns.S.shape, ns.Vh.shape)
    k = s.shape[-1]
    close(s, ns.S)
    close(sr, ns.S)
    close((ur * sr[..., None, :]) @ vhr, x)
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x)
    for m in (u, adjoint(vh), ur, adjoint(vhr)):
        _is_orthonormal(m, close)
    for key in ("eigh", "eigh_upper"):
        w, v = got[key]
        close(w, np.linalg.eigvalsh(sym))
        close((v * w) @ adjoint(v), sym)
    u, s, vh = got["hermitian_svd"]
    close(s, np.linalg.svd(sym, compute_uv=False))
    close(got["hermitian_s"], s)
    close((u * s) @ vh, sym)


def _hard_matrices(rng, m, n, dtype):
    """A stack: random, condition 1e12, rank 2 short of full, three equal singular values, all zeros."""
    k = min(m, n)
    spectra = [np.sort(rng.uniform(0.5, 2, k))[::-1], np.logspace(0, -12, k),
               np.r_[np.sort(rng.uniform(1, 2, k - 2))[::-1], 0, 0], np.r_[2, 2, 2, np.ones(k - 3)], np.zeros(k)]
    out = []
    for s in spectra:
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        u, _ = np.linalg.qr(rand(rng, (m, m), dtype).astype(wide))
        v, _ = np.linalg.qr(rand(rng, (n, n), dtype).astype(u.dtype))
        out.append((u[:, :k] * s) @ adjoint(v)[:k])
    return np.stack(out).astype(dtype)


def _one_norm(x):
    return np.abs(x).sum(axis=-2).max(axis=-1)


# LAPACK's own test programs accept a decomposition when its backward-error ratio, the residual divided by
# (order * eps * ||a||), is below 30 (THRESH in LAPACK's svd.in and sep.in). The same criterion bounds what a
# backward-stable algorithm guarantees on any machine, unlike a number of eps measured on one machine.
LAPACK_THRESHOLD = 30


@pytest.mark.parametrize("dtype, shapes", [("float64", ((6, 6), (8, 5), (5, 8), (10, 6))),
                                           ("float32", ((8, 5),)), ("complex128", ((6, 4),))])
def test_svd_is_backward_stable_on_ill_conditioned_and_rank_deficient_matrices(dtype, shapes):
    """svd's accuracy statement: a U S Vh that reconstructs a, orthonormal U and Vh, and singular values
    within the backward error (Weyl), by LAPACK's test criterion."""
    rng = np.random.default_rng(2)
    stacks = [_hard_matrices(rng, m, n, dtype) for m, n in shapes]
    got = tree_np(xlac.compile(lambda *xs: [tuple(L.svd(x, full_matrices=False)) for x in xs])(*stacks))
    eps = np.finfo(dtype).eps
    for x, (u, s, vh) in zip(stacks, got):
        m, n = x.shape[-2:]
        order = max(m, n)
        norm = np.maximum(_one_norm(x), np.finfo(dtype).tiny)
        exact = np.linalg.svd(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), compute_uv=False)
        assert (_one_norm((u * s[..., None, :]) @ vh - x) / (norm * order * eps)).max() < LAPACK_THRESHOLD
        assert (_one_norm(adjoint(u) @ u - np.eye(u.shape[-1])) / (m * eps)).max() < LAPACK_THRESHOLD
        assert (_one_norm(vh @ adjoint(vh) - np.eye(vh.shape[-2])) / (n * eps)).max() < LAPACK_THRESHOLD
        assert (np.abs(s - exact).max(axis=-1) / (norm * order * eps)).max() < LAPACK_THRESHOLD
        assert (np.diff(s, axis=-1) <= 0).all()


def _jordan_wielandt(a):
    m, n = a.shape[-2:]
    out = np.zeros(a.shape[:-2] + (m + n, m + n), a.dtype)
    out[..., :m, m:] = a
    out[..., m:, :m] = adjoint(a)
    return out


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_eigh_is_backward_stable(dtype):
    """eigh's accuracy statement: residual ||a V - V diag(w)||, orthonormality of V and the eigenvalues'
    error within LAPACK's test criterion, for random, graded (1 to 1e-14), repeated and rank-deficient
    (the Jordan-Wielandt matrices that svd decomposes) inputs. Clusters of distinct eigenvalues closer than
    about 1e-8 ||a|| are the documented exception and are not among them."""
    rng = np.random.default_rng(5)
    n = 12

    def with_spectrum(w):
        q, _ = np.linalg.qr(rand(rng, (n, n), dtype).astype(np.complex128 if dtype.startswith("complex") else np.float64))
        return (q * w) @ adjoint(q)
    spectra = [np.logspace(0, -14, n), np.r_[np.full(6, 2.0), np.full(6, -1.0)], rng.uniform(-3, 3, n)]
    hermitian = [(x + adjoint(x)) / 2 for x in map(with_spectrum, spectra)]
    x = np.concatenate([np.stack(hermitian), _jordan_wielandt(_hard_matrices(rng, 7, 5, dtype))]).astype(dtype)
    w, v = tree_np(xlac.compile(lambda x: tuple(L.eigh(x)))(x))
    eps = np.finfo(dtype).eps
    norm = np.maximum(_one_norm(x), np.finfo(dtype).tiny)
    assert (_one_norm(x @ v - v * w[..., None, :]) / (norm * n * eps)).max() < LAPACK_THRESHOLD
    assert (_one_norm(adjoint(v) @ v - np.eye(n)) / (n * eps)).max() < LAPACK_THRESHOLD
    exact = np.linalg.eigvalsh(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    assert (np.abs(w - exact).max(axis=-1) / (norm * n * eps)).max() < LAPACK_THRESHOLD
    assert (np.diff(w, axis=-1) >= 0).all()


def test_least_squares_rank_and_pseudo_inverse_of_rank_deficient_matrices():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 4))            # rank 2
    b, y = rng.normal(size=(6, 3)), rng.normal(size=6)
    wide = a.T

    def f(a, b, y, wide):
        return (tuple(L.lstsq(a, b)), tuple(L.lstsq(a, y, rcond=1e-3)), tuple(L.lstsq(wide, b[:4])), L.pinv(a),
                L.pinv(a, rtol=None),
                L.pinv(a, rcond=0.5), L.matrix_rank(a), L.matrix_rank(a, tol=1e-3), L.matrix_rank(a, rtol=0.9),
                L.matrix_rank(np.stack([a, 2 * a, np.zeros_like(a)])))
    got = tree_np(xlac.compile(f)(a, b, y, wide))
    (x, res, rank, s), (x1, _, rank1, _), (xw, resw, rankw, _) = got[:3]
    nx, _, nrank, ns = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, nx, atol=1e-10)
    assert int(rank) == nrank == 2 and rank.dtype == np.int32 and res.shape == (3,)
    np.testing.assert_allclose(res, ((b - a @ nx) ** 2).sum(0), rtol=1e-10)     # Deviation: given for rank < N
    np.testing.assert_allclose(s, ns, atol=1e-12)
    np.testing.assert_allclose(x1, np.linalg.lstsq(a, y, rcond=1e-3)[0], atol=1e-10)
    np.testing.assert_allclose(xw, np.linalg.lstsq(wide, b[:4])[0], atol=1e-10)
    assert resw.shape == (0,) and int(rankw) == 2
    for g, want in zip(got[3:6], (np.linalg.pinv(a), np.linalg.pinv(a, rtol=None), np.linalg.pinv(a, rcond=0.5))):
        np.testing.assert_allclose(g, want, atol=1e-10)
    assert [int(r) for r in got[6:9]] == [2, 2, np.linalg.matrix_rank(a, rtol=0.9)]
    assert got[9].tolist() == [2, 2, 0] and got[9].dtype == np.int64


# ---------------------------------------------------------------- norms


NORM_CASES = [dict(), dict(ord="fro"), dict(ord="nuc"), dict(ord=np.inf), dict(ord=-np.inf), dict(ord=1),
              dict(ord=-1), dict(ord=2), dict(ord=-2), dict(axis=0), dict(axis=-1, ord=0), dict(axis=1, ord=3),
              dict(axis=0, ord=-np.inf, keepdims=True), dict(axis=(1, 0), ord=1, keepdims=True), dict(keepdims=True)]


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int32"])
def test_norms_match_numpy(dtype):
    rng = np.random.default_rng(4)
    x = rand(rng, (3, 4), dtype)
    v = rand(rng, (5,), dtype)
    got = tree_np(xlac.compile(lambda x, v: (
        [L.norm(x, **kw) for kw in NORM_CASES],
        [L.norm(v, o) for o in (None, 0, 1, 2, np.inf, -np.inf, 0.5, -1)],
        L.vector_norm(x), L.vector_norm(x, axis=(0, 1), keepdims=True, ord=np.inf), L.vector_norm(x, axis=0, ord=1),
        L.matrix_norm(x), L.matrix_norm(x, ord=-2, keepdims=True)))(x, v))
    with np.errstate(divide="ignore"):
        want = _numpy_norms(x, v)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        check(g, w, dtype if dtype != "int32" else "float64", scale=10)


def _numpy_norms(x, v):
    return ([np.linalg.norm(x, **kw) for kw in NORM_CASES],
            [np.linalg.norm(v, o) for o in (None, 0, 1, 2, np.inf, -np.inf, 0.5, -1)],
            np.linalg.vector_norm(x), np.linalg.vector_norm(x, axis=(0, 1), keepdims=True, ord=np.inf),
            np.linalg.vector_norm(x, axis=0, ord=1), np.linalg.matrix_norm(x),
            np.linalg.matrix_norm(x, ord=-2, keepdims=True))


# ---------------------------------------------------------------- products and the array API names


def test_products_and_array_api_functions_match_numpy():
    rng = np.random.default_rng(5)
    a, b, c, d = rng.normal(size=4), rng.normal(size=(4, 6)), rng.normal(size=(6, 2)), rng.normal(size=2)
    m = np.arange(4).reshape(2, 2)
    stack, t = rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 6))
    u, w = rng.normal(size=(4, 1, 3)), rng.integers(-3, 3, size=(2, 3))
    rhs = rng.normal(size=(2, 3))
    t4 = (np.eye(24) * 3 + rng.normal(size=(24, 24))).reshape(4, 6, 8, 3)
    pairs = [
        (L.multi_dot([a, b, c, d]), np.linalg.multi_dot([a, b, c, d])),
        (L.multi_dot([b, c, c.T]), np.linalg.multi_dot([b, c, c.T])),
        (L.multi_dot([b, c]), np.linalg.multi_dot([b, c])),
        (L.matrix_power(m, 3), np.linalg.matrix_power(m, 3)), (L.matrix_power(m, 0), np.linalg.matrix_power(m, 0)),
        (L.matrix_power(stack, 1), np.linalg.matrix_power(stack, 1)),
        (L.tensorsolve(t, rhs), np.linalg.tensorsolve(t, rhs)),
        (L.tensorinv(t4, ind=2), np.linalg.tensorinv(t4, ind=2)),
        (L.cross(u, w), np.linalg.cross(u, w)),
        (L.cross(u[:, 0].T, w[:1].T, axis=0), np.linalg.cross(u[:, 0].T, w[:1].T, axis=0)),
        (L.outer(a, d), np.linalg.outer(a, d)), (L.trace(stack, offset=1), np.linalg.trace(stack, offset=1)),
        (L.diagonal(stack, offset=-1), np.linalg.diagonal(stack, offset=-1)),
        (L.matrix_transpose(stack), np.linalg.matrix_transpose(stack)),
        (L.vecdot(stack, a[:3]), np.linalg.vecdot(stack, a[:3])),
        (L.matmul(stack, stack), np.linalg.matmul(stack, stack)),
        (L.tensordot(b, c, axes=1), np.linalg.tensordot(b, c, axes=1)),
    ]
    for got, want in pairs:
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    target = np.zeros(2)
    assert L.multi_dot([a, b, c], out=target) is target
    np.testing.assert_allclose(target, a @ b @ c)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: L.det(np.ones(3)), np.linalg.LinAlgError, r"det: 1-dimensional array given"),
    (lambda: L.inv(np.ones((2, 3))), np.linalg.LinAlgError, r"inv: Last 2 dimensions of the array must be square"),
    (lambda: L.solve(np.eye(3), np.ones(2)), ValueError, r"solve: the right-hand side of shape \(2,\) does not match"),
    (lambda: L.eigh(np.eye(2), UPLO="X"), ValueError, r"eigh: UPLO argument must be 'L' or 'U'"),
    (lambda: L.qr(np.eye(2), mode="full"), ValueError, r"qr: Unrecognized mode 'full'"),
    (lambda: L.norm(np.ones(3), "fro"), ValueError, r"Invalid norm order 'fro' for vectors"),
    (lambda: L.norm(np.ones((2, 2)), 3), ValueError, r"Invalid norm order 3 for matrices"),
    (lambda: L.norm(np.ones((2, 2, 2))), None, None),
    (lambda: L.norm(np.ones((2, 2, 2)), 1), ValueError, r"Improper number of dimensions to norm"),
    (lambda: L.norm(np.ones((2, 2)), axis=(0, 0)), ValueError, r"Duplicate axes given"),
    (lambda: L.matrix_power(np.eye(2), 1.5), TypeError, r"matrix_power: exponent must be an integer"),
    (lambda: L.cond(np.zeros((0, 0))), np.linalg.LinAlgError, r"cond is not defined on empty arrays"),
    (lambda: L.multi_dot([np.eye(2)]), ValueError, r"Expecting at least two arrays"),
    (lambda: L.multi_dot([np.eye(2), np.ones((2, 2, 2)), np.eye(2)]), np.linalg.LinAlgError, r"3-dimensional"),
    (lambda: L.cross(np.ones(2), np.ones(3)), ValueError, r"cross: both input arrays must be"),
    (lambda: L.outer(np.ones((2, 2)), np.ones(2)), ValueError, r"outer: Input arrays must be one-dimensional"),
    (lambda: L.matrix_transpose(np.ones(3)), ValueError, r"at least 2-dimensional"),
    (lambda: L.pinv(np.eye(2), rcond=0.1, rtol=0.1), ValueError, r"`rtol` and `rcond` can't be both set"),
    (lambda: L.matrix_rank(np.eye(2), tol=0.1, rtol=0.1), ValueError, r"`tol` and `rtol` can't be both set"),
    (lambda: L.tensorsolve(np.ones((2, 3)), np.ones(2)), np.linalg.LinAlgError, r"prod\(a.shape\[b.ndim:\]\)"),
    (lambda: L.tensorinv(np.ones((2, 2)), ind=0), ValueError, r"Invalid ind argument"),
    (lambda: L.lstsq(np.ones((3, 2)), np.ones(2)), np.linalg.LinAlgError, r"Incompatible dimensions"),
])
def test_errors_name_the_function(call, error, match):
    if error is None:
        call()
        return
    with pytest.raises(error, match=match):
        call()


def test_matrix_rank_of_vectors_is_a_zero_d_array():
    assert int(L.matrix_rank(np.ones(3))) == 1 and int(L.matrix_rank(np.zeros(3))) == 0


# ---------------------------------------------------------------- derivatives and vmap against JAX


def _losses(np_like, linalg):
    """Scalar functions of a square matrix a (and a right-hand side b) for every differentiable path."""
    w = np_like.arange(1.0, 4.0)
    return [
        lambda a, b: linalg.det(a),
        lambda a, b: linalg.slogdet(a)[1],
        lambda a, b: np_like.sum(linalg.inv(a) * w),
        lambda a, b: np_like.sum(linalg.solve(a, b) * w[:, None]),
        lambda a, b: np_like.sum(linalg.eigh(a + a.T)[0] * w),
        lambda a, b: np_like.sum(linalg.svd(a, compute_uv=False) * w),
        lambda a, b: np_like.sum(linalg.svdvals(a @ a[:, :2]) * w[:2]),
        lambda a, b: np_like.sum(linalg.cholesky(a @ a.T + 3 * np_like.eye(3)) * w),
        lambda a, b: np_like.sum(_phase_free_svd(np_like, linalg, a) * w),
        lambda a, b: linalg.norm(a, "nuc") + linalg.norm(a, 2),
    ]


def _phase_free_svd(np_like, linalg, a):
    u, s, vh = linalg.svd(a, full_matrices=False)
    return (u * np_like.arange(1.0, 4.0)) @ vh


def test_gradients_match_jax_grad():
    rng = np.random.default_rng(6)
    a, b = well_conditioned(rng, (3, 3), np.float64), rng.normal(size=(3, 2))
    got = tree_np(xlac.compile(lambda a, b: [xlac.grad(f, argnums=(0, 1))(a, b)
                                             for f in _losses(xnp, L)])(a, b))
    with jax.enable_x64(True):
        want = tree_np(jax.jit(lambda a, b: [jax.grad(f, argnums=(0, 1))(a, b)
                                             for f in _losses(jnp, jnp.linalg)])(a, b))
    for i, (g, w) in enumerate(zip(got, want)):
        for gi, wi in zip(g, w):
            np.testing.assert_allclose(gi, wi, rtol=1e-8, atol=1e-8, err_msg=f"loss {i}")


def test_vmap_matches_jax_vmap():
    rng = np.random.default_rng(7)
    a = well_conditioned(rng, (3, 4, 4), np.float64)
    a_axis1 = np.moveaxis(a, 0, 1)
    b = rng.normal(size=(4,))

    def fns(linalg):
        return lambda x, y: (linalg.det(x), linalg.solve(x, y), linalg.svdvals(x), linalg.eigvalsh(x @ x.T),
                             linalg.inv(x))
    got = tree_np(xlac.compile(lambda x, y: xlac.vmap(fns(L), in_axes=(1, None))(x, y))(a_axis1, b))
    with jax.enable_x64(True):
        want = tree_np(jax.jit(jax.vmap(fns(jnp.linalg), in_axes=(1, None)))(a_axis1, b))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn, arg", [
    (np.linalg.inv, np.array([[1.0, 2.0], [2.0, 4.0]])),                       # U has an exact zero pivot
    (lambda a: np.linalg.solve(a, np.ones(2)), np.array([[1.0, 2.0], [2.0, 4.0]])),
    (lambda a: np.linalg.solve(a, np.ones((2, 2, 1))), np.stack([np.eye(2), np.zeros((2, 2))])),   # one of two
    (np.linalg.cholesky, np.array([[1.0, 2.0], [2.0, 1.0]])),                  # indefinite
] + [(fn, np.array([[1.0, np.nan], [0.0, 1.0]])) for fn in (                   # an SVD that did not converge
    np.linalg.svd, lambda a: np.linalg.svd(a, compute_uv=False), np.linalg.svdvals, np.linalg.pinv,
    np.linalg.matrix_rank, lambda a: np.linalg.norm(a, 2), lambda a: np.linalg.norm(a, "nuc"), np.linalg.cond,
    lambda a: np.linalg.lstsq(a, np.ones(2)))])
def test_singular_and_indefinite_matrices_raise_numpys_linalg_error_after_the_call(fn, arg):
    with pytest.raises(np.linalg.LinAlgError) as numpy_error:
        fn(arg)
    with pytest.raises(np.linalg.LinAlgError) as error:
        xlac.compile(fn)(arg)
    assert str(numpy_error.value) in str(error.value)
    assert "test_linalg.py" in str(error.value)                                   # the user's line


def test_cholesky_of_nan_gives_nan_as_numpy_does():
    a = np.array([[4.0, np.nan], [np.nan, 5.0]])
    np.testing.assert_array_equal(np.asarray(xlac.compile(np.linalg.cholesky)(a)), np.linalg.cholesky(a))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_lu_based_functions_match_numpy_on_ill_conditioned_and_singular_matrices(dtype):
    """det, slogdet, solve and inv factor by LU as NumPy does: exact zeros where NumPy finds a zero pivot,
    the same sign, and solutions as accurate as LAPACK's on a Hilbert matrix."""
    hilbert = (1.0 / (np.arange(6)[:, None] + np.arange(6)[None, :] + 1)).astype(dtype)
    singular = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype)
    b = np.arange(6.0).astype(dtype)
    det_s, sign_s, log_s, det_h, solved = tree_np(xlac.compile(
        lambda s, h, b: (L.det(s), *L.slogdet(s), L.det(h), L.solve(h, b)))(singular, hilbert, b))
    assert det_s == np.linalg.det(singular) and sign_s == np.linalg.slogdet(singular).sign
    assert log_s == np.linalg.slogdet(singular).logabsdet
    eps = np.finfo(np.dtype(dtype)).eps
    np.testing.assert_allclose(det_h, np.linalg.det(hilbert), rtol=100 * eps * np.linalg.cond(hilbert))
    residual = np.abs(hilbert @ solved - b).max()          # LAPACK's backward error: O(n eps ||A|| ||x||)
    assert residual <= 100 * 6 * eps * np.abs(hilbert).max() * np.abs(solved).max()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_and_eigvals_match_numpy(dtype):
    """geev, as NumPy: the same eigenvalues (complex, in LAPACK's order), unit eigenvectors with a v = v w,
    batched over leading axes; the results are complex for real input (a documented deviation)."""
    rng = np.random.default_rng(11)
    a = rng.normal(size=(3, 5, 5))
    if dtype.startswith("complex"):
        a = a + 1j * rng.normal(size=a.shape)
    a = a.astype(dtype)
    w, v, values = tree_np(xlac.compile(lambda a: (*np.linalg.eig(a), np.linalg.eigvals(a)))(a))
    want_w = np.linalg.eigvals(a)
    complex_dtype = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == values.dtype == complex_dtype
    eps = np.finfo(complex_dtype).eps
    tol = 1e3 * eps * np.abs(a).max()
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(want_w.astype(complex_dtype)), atol=tol)
    np.testing.assert_allclose(values, w, atol=tol)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)


def test_eigenvalue_gradients_match_jax_and_eigenvector_derivatives_are_refused():
    rng = np.random.default_rng(12)
    a = rng.normal(size=(2, 4, 4))
    loss = lambda linalg, np_like: lambda a: np_like.sum(np_like.abs(linalg.eigvals(a)) ** 2) + \
        np_like.sum(linalg.eigvals(a).real)
    got = np.asarray(xlac.compile(xlac.grad(loss(L, xnp)))(a))
    with jax.enable_x64(True):
        want = np.asarray(jax.grad(loss(jnp.linalg, jnp))(a))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    with pytest.raises(UnsupportedError, match="eigenvectors of numpy.linalg.eig"):
        xlac.compile(xlac.grad(lambda a: xnp.abs(L.eig(a).eigenvectors).sum()))(a)


def test_eig_where_the_device_has_no_lapack_names_the_function():
    from xlac.ir.types import TensorType
    from xlac.trace.context import Trace
    with Trace(kernels="") as trace:
        x = trace.add_input(TensorType((2, 2), np.dtype("float64")))
        with pytest.raises(UnsupportedError, match=r"xnp.linalg.eig: eigenvalues of a general .* LAPACK's geev"):
            L.eig(x)
        assert L.solve(x, np.ones(2)).shape == (2,)        # solve falls back to QR there
