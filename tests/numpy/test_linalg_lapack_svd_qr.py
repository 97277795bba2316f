"""svd and qr on LAPACK (gesdd; geqrf with orgqr/ungqr), as xlac calls them on CPU: values against NumPy
(up to the signs/phases of singular vectors and of Q's columns), gradients and vmap against JAX, the custom
calls in the StableHLO, and NumPy's LinAlgError for an SVD that did not converge (NaN input).

Each test compiles one function for many cases: compiling is what costs time here."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.runtime.client import get_device
from xlac.runtime.kernels import linalg_kernels
from tests.linalg_inputs import adjoint, rand

L = xnp.linalg
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}
DTYPES = ["float32", "float64", "complex64", "complex128"]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]           # square, tall, wide, a batch

pytestmark = pytest.mark.skipif(linalg_kernels(get_device("cpu")) != "lapack", reason="needs jaxlib's LAPACK")




def tree_np(x):
    return jax.tree_util.tree_map(np.asarray, x)


def closeness(dtype, scale=10):
    tol = TOL[np.dtype(dtype).name] * scale
    return lambda got, want: np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def column_phases(got, want, close):
    """d with got = want diag(d), |d| = 1 (columns equal up to sign, or a unit phase if complex), checked."""
    d = np.sum(np.conj(want) * got, axis=-2)
    close(np.abs(d), np.ones(d.shape))
    close(got, want * d[..., None, :])
    return d


def _svds(*xs):
    return [(tuple(L.svd(x)), tuple(L.svd(x, full_matrices=False)), L.svd(x, compute_uv=False), L.svdvals(x))
            for x in xs]


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_matches_numpy_in_every_mode(dtype):
    rng = np.random.default_rng(0)
    xs = [rand(rng, shape, dtype) for shape in SHAPES]
    close = closeness(dtype)
    for x, (full, reduced, s_only, svdvals) in zip(xs, tree_np(xlac.compile(_svds)(*xs))):
        k = min(x.shape[-2:])
        for (u, s, vh), full_matrices in ((full, True), (reduced, False)):
            want_u, want_s, want_vh = np.linalg.svd(x, full_matrices=full_matrices)
            assert [a.shape for a in (u, s, vh)] == [a.shape for a in (want_u, want_s, want_vh)]
            assert (u.dtype, s.dtype, vh.dtype) == (want_u.dtype, want_s.dtype, want_vh.dtype)
            close(s, want_s)
            close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x)
            close(adjoint(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2))
            close(vh @ adjoint(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2))
            column_phases(u[..., :k], want_u[..., :k], close)                 # distinct singular values
            column_phases(adjoint(vh)[..., :k], adjoint(want_vh)[..., :k], close)
        want_s = np.linalg.svd(x, compute_uv=False)
        for s in (s_only, svdvals):
            assert s.shape == want_s.shape and s.dtype == want_s.dtype
            close(s, want_s)


def _qrs(*xs):
    return [(tuple(L.qr(x)), tuple(L.qr(x, mode="complete")), L.qr(x, mode="r"), tuple(L.qr(x, mode="raw")))
            for x in xs]


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_matches_numpy_in_every_mode(dtype):
    """LAPACK's geqrf as NumPy's: the same raw (h, tau); Q and R NumPy's up to the phases of Q's columns (R's
    rows), which xlac fixes by det(Q) = 1 where Q is square."""
    rng = np.random.default_rng(1)
    xs = [rand(rng, shape, dtype) for shape in SHAPES[:3]]          # NumPy's raw mode takes one matrix
    xs.append(rand(rng, SHAPES[3], dtype))
    close = closeness(dtype)
    for x, (reduced, complete, r_only, raw) in zip(xs, tree_np(xlac.compile(_qrs)(*xs))):
        for (q, r), mode in ((reduced, "reduced"), (complete, "complete")):
            want_q, want_r = np.linalg.qr(x, mode=mode)
            assert (q.shape, r.shape, q.dtype, r.dtype) == (want_q.shape, want_r.shape, want_q.dtype, want_r.dtype)
            close(q @ r, x)
            k = min(x.shape[-2:])
            d = column_phases(q[..., :k], want_q[..., :k], close)
            close(r[..., :k, :], np.conj(d)[..., :, None] * want_r[..., :k, :])
        close(np.abs(r_only), np.abs(np.linalg.qr(x, mode="r")))
        if x.ndim == 2:
            for got, want in zip(raw, np.linalg.qr(x, mode="raw")):
                assert got.shape == want.shape and got.dtype == want.dtype
                close(got, want)


def test_svd_and_qr_of_empty_matrices_have_numpys_shapes():
    xs = [np.zeros((0, 3)), np.zeros((3, 0)), np.zeros((2, 0, 0))]
    got = tree_np(xlac.compile(lambda *xs: [(*_svds(x)[0], tuple(L.qr(x, mode="complete"))) for x in xs])(*xs))
    for x, (full, reduced, s_only, _, (q, r)) in zip(xs, got):
        for part, want in zip(full + reduced, np.linalg.svd(x) + np.linalg.svd(x, full_matrices=False)):
            np.testing.assert_array_equal(part, want)
        assert s_only.shape == np.linalg.svd(x, compute_uv=False).shape
        want_q, want_r = np.linalg.qr(x, mode="complete")
        np.testing.assert_array_equal(q, want_q)
        assert r.shape == want_r.shape


_reconstructions = xlac.compile(lambda tall, wide: (tuple(L.svd(tall)), tuple(L.svd(wide, full_matrices=False)),
                                                    tuple(L.qr(tall)), tuple(L.qr(wide, mode="complete"))))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_random_matrices_reconstruct(seed):
    rng = np.random.default_rng(seed)
    tall, wide = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)) * rng.uniform(0.1, 10)
    (u, s, vh), (uw, sw, vhw), (q, r), (qw, rw) = tree_np(_reconstructions(tall, wide))
    close = closeness("float64")
    close(s, np.linalg.svd(tall, compute_uv=False))
    close(sw, np.linalg.svd(wide, compute_uv=False))
    close((u[:, :3] * s) @ vh, tall)
    close((uw * sw) @ vhw, wide)
    close(q @ r, tall)
    close(qw @ rw, wide)
    assert np.linalg.det(qw) == pytest.approx(1.0)


def test_stablehlo_calls_gesdd_geqrf_and_orgqr():
    def fn(x):
        return tuple(L.svd(x)), tuple(L.qr(x)), L.svdvals(x)
    real = xlac.compile(fn).lower(np.ones((4, 3))).as_text()
    cplx = xlac.compile(fn).lower(np.ones((4, 3), np.complex64)).as_text()
    for target in ("lapack_dgesdd_ffi", "lapack_dgeqrf_ffi", "lapack_dorgqr_ffi"):
        assert target in real
    for target in ("lapack_cgesdd_ffi", "lapack_cgeqrf_ffi", "lapack_cungqr_ffi"):
        assert target in cplx
    for expander in ('"Qr"', '"ProductOfElementaryHouseholderReflectors"', '"Eigh"'):
        assert expander not in real and expander not in cplx


# ---------------------------------------------------------------- derivatives and vmap against JAX


def _losses(np_like, linalg, w):
    """Real functions of a matrix that do not depend on the phases of singular vectors or of Q's columns."""
    def cubed(x):
        return np_like.sum(np_like.abs(x) ** 3)

    def weighted(u, s, vh):
        return (u * w[:s.shape[-1]]) @ vh
    return [
        lambda a: np_like.sum(linalg.svd(a, compute_uv=False) * w[:min(a.shape)]),
        lambda a: cubed(linalg.svd(a, full_matrices=False)[0]) + cubed(linalg.svd(a, full_matrices=False)[2]),
        lambda a: np_like.sum(np_like.real(weighted(*linalg.svd(a, full_matrices=False)))),
        lambda a: np_like.sum(np_like.real(linalg.pinv(a))) + linalg.norm(a, "nuc") + linalg.norm(a, 2),
        lambda a: cubed(linalg.qr(a)[0]) + cubed(linalg.qr(a)[1]),
    ]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_gradients_match_jax_grad(dtype):
    rng = np.random.default_rng(2)
    xs = [rand(rng, shape, dtype) for shape in (SHAPES[:3] if dtype == "float64" else SHAPES[1:3])]
    w = np.arange(1.0, 5.0)
    got = tree_np(xlac.compile(lambda *xs: [[xlac.grad(f)(x) for f in _losses(xnp, L, w)] for x in xs])(*xs))
    with jax.enable_x64(True):
        want = tree_np(jax.jit(lambda *xs: [[jax.grad(f)(x) for f in _losses(jnp, jnp.linalg, jnp.asarray(w))]
                                            for x in xs])(*xs))
    for x, g_row, w_row in zip(xs, got, want):
        for i, (g, expected) in enumerate(zip(g_row, w_row)):
            np.testing.assert_allclose(g, expected, rtol=1e-8, atol=1e-8, err_msg=f"loss {i}, shape {x.shape}")


def test_full_matrices_derivatives_are_nan_only_through_completing_columns():
    """As the documented deviation says (JAX raises instead): the first k columns of a full U have the
    reduced SVD's derivatives, the others NaN."""
    a = np.random.default_rng(3).normal(size=(5, 3))

    def head(x):
        return xnp.sum(xnp.abs(L.svd(x)[0][:, :3]) ** 3)

    def reduced(x):
        return xnp.sum(xnp.abs(L.svd(x, full_matrices=False)[0]) ** 3)
    got_head, got_reduced, got_rest = tree_np(xlac.compile(
        lambda x: (xlac.grad(head)(x), xlac.grad(reduced)(x), xlac.grad(lambda y: xnp.sum(L.svd(y)[0][:, 3:]))(x)))(a))
    np.testing.assert_allclose(got_head, got_reduced, rtol=1e-12, atol=1e-12)
    assert np.isnan(got_rest).all()


def test_vmap_matches_jax_vmap():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(4, 3, 5))                       # mapped over axis 1

    def fns(np_like, linalg):
        return lambda x: (linalg.svdvals(x), np_like.abs(linalg.svd(x, full_matrices=False)[0]),
                          np_like.abs(linalg.qr(x)[1]), linalg.pinv(x))
    got = tree_np(xlac.compile(xlac.vmap(fns(xnp, L), in_axes=1))(a))
    with jax.enable_x64(True):
        want = tree_np(jax.jit(jax.vmap(fns(jnp, jnp.linalg), in_axes=1))(a))
    for g, expected in zip(got, want):
        np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- an SVD that did not converge


NAN_MATRIX = np.array([[1.0, np.nan], [0.0, 1.0]])


# NaN input raising NumPy's LinAlgError: tests/numpy/test_linalg.py, with the other failed decompositions.


def test_nan_input_without_checks_gives_nan():
    u, s, vh = tree_np(xlac.compile(lambda a: tuple(np.linalg.svd(a)), check_bounds=False)(NAN_MATRIX))
    assert np.isnan(s).all() and np.isnan(u).all() and np.isnan(vh).all()


def test_without_lapack_svd_is_the_jordan_wielandt_eigh_and_qr_xlas_expander(monkeypatch):
    """Where the device runs no LAPACK (here the CPU, told so), svd keeps the eigendecomposition of
    [[0, a], [a^H, 0]] and qr XLA's expander, with the same results and the same LinAlgError for NaN."""
    monkeypatch.setattr(xlac.runtime, "linalg_kernels", lambda device: "")
    rng = np.random.default_rng(5)
    tall, wide = rand(rng, (5, 3), "float64"), rand(rng, (3, 4), "complex128")

    def fn(tall, wide):
        return tuple(L.svd(tall)), tuple(L.svd(wide, full_matrices=False)), tuple(L.qr(tall)), L.svdvals(wide)
    compiled = xlac.compile(fn)
    text = compiled.lower(tall, wide).as_text()
    assert 'call_target_name = "lapack_' not in text and '"Eigh"' in text and '"Qr"' in text
    (u, s, vh), (uw, sw, vhw), (q, r), s_only = tree_np(compiled(tall, wide))
    close = closeness("float64", scale=100)
    close(s, np.linalg.svd(tall, compute_uv=False))
    close(sw, np.linalg.svd(wide, compute_uv=False))
    close(s_only, sw)
    close((u[:, :3] * s) @ vh, tall)
    close((uw * sw) @ vhw, wide)
    close(q @ r, tall)
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        xlac.compile(np.linalg.svdvals)(NAN_MATRIX)
