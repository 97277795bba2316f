"""xlac's GPU linear algebra gives NumPy's results, run on the CPU with cuSOLVER's kernels imitated in NumPy
(see fake_gpu_solvers): what xlac computes around the kernels (outputs read, pivots, gesvdj's V, gesvd's
transposed call, slices, NumPy's LinAlgError) is checked here; the calls themselves against JAX's in
test_gpu_solver_calls."""
from __future__ import annotations

import numpy as np
import pytest

import xlac.numpy as xnp
from tests.linalg_inputs import adjoint, hermitian_positive, rand
from tests.lowering.fake_gpu_solvers import run_with_fake_solvers


def _close(actual, expected, dtype, scale=1.0):
    tolerance = (1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10) * max(scale, 1.0)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("shape, dtype", [((2, 3, 3), "float64"), ((4, 4), "complex64")])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(shape, dtype, upper, monkeypatch, x64):
    a = hermitian_positive(np.random.default_rng(0), shape, np.dtype(dtype))
    factor = run_with_fake_solvers(lambda a: xnp.linalg.cholesky(a, upper=upper), a, monkeypatch=monkeypatch)
    _close(factor, np.linalg.cholesky(a, upper=upper), dtype, scale=10)


def test_cholesky_of_an_indefinite_matrix_raises_linalgerror(monkeypatch, x64):
    with pytest.raises(np.linalg.LinAlgError):
        run_with_fake_solvers(xnp.linalg.cholesky, -np.eye(3), monkeypatch=monkeypatch)


@pytest.mark.parametrize("shape, dtype", [((5, 3), "float64"), ((3, 5), "float32"), ((2, 4, 3), "complex128")])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, dtype, mode, monkeypatch, x64):
    a = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    result = run_with_fake_solvers(lambda a: xnp.linalg.qr(a, mode=mode), a, monkeypatch=monkeypatch)
    r_numpy = np.linalg.qr(a, mode=mode if mode != "r" else "r")
    if mode == "r":
        _close(np.abs(result), np.abs(r_numpy), dtype, scale=10)
        return
    q, r = (np.asarray(x) for x in result)
    _close(q @ r, a, dtype, scale=10)
    _close(adjoint(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), dtype, 10)
    _close(np.abs(r), np.abs(r_numpy.R), dtype, scale=10)


@pytest.mark.parametrize("shape, dtype", [((4, 4), "float64"), ((2, 3, 3), "complex64")])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(shape, dtype, uplo, monkeypatch, x64):
    a = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    values, vectors = run_with_fake_solvers(lambda a: tuple(xnp.linalg.eigh(a, UPLO=uplo)), a,
                                            monkeypatch=monkeypatch)
    expected = np.linalg.eigh(a, UPLO=uplo)
    _close(values, expected.eigenvalues, dtype, scale=10)
    h = (vectors * np.asarray(values)[..., None, :]) @ adjoint(vectors)
    _close(h, (expected.eigenvectors * expected.eigenvalues[..., None, :]) @ adjoint(expected.eigenvectors),
           dtype, scale=10)


@pytest.mark.parametrize("shape, dtype, full_matrices", [
    ((4, 4), "float64", True), ((2, 3, 40), "float32", False), ((40, 50), "float64", False),
    ((50, 40), "complex128", False), ((40, 50), "complex64", True),
    ((3, 1100), "float64", True), ((3, 1100), "float32", False), ((1100, 3), "complex128", False)])
def test_svd(shape, dtype, full_matrices, monkeypatch, x64):
    a = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    u, s, vh = (np.asarray(x) for x in run_with_fake_solvers(
        lambda a: tuple(xnp.linalg.svd(a, full_matrices=full_matrices)), a, monkeypatch=monkeypatch))
    expected_u, expected_s, expected_vh = np.linalg.svd(a, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (expected_u.shape, expected_s.shape, expected_vh.shape)
    k = s.shape[-1]
    _close(s, expected_s, dtype, scale=100)
    _close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, scale=100)
    for x in (u, vh):
        n = min(x.shape[-2:])
        gram = adjoint(x) @ x if x.shape[-2] >= x.shape[-1] else x @ adjoint(x)
        _close(gram, np.broadcast_to(np.eye(n), gram.shape), dtype, scale=100)


@pytest.mark.parametrize("shape, dtype", [((4, 4), "float64"), ((40, 50), "float32"), ((3, 1100), "float64")])
def test_singular_values(shape, dtype, monkeypatch, x64):
    a = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    s = run_with_fake_solvers(xnp.linalg.svdvals, a, monkeypatch=monkeypatch)
    _close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=100)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_solve_inv_det_slogdet(dtype, monkeypatch, x64):
    a, b = rand(np.random.default_rng(0), (2, 4, 4), dtype), rand(np.random.default_rng(1), (2, 4, 3), dtype)
    run = lambda fn, *args: run_with_fake_solvers(fn, *args, monkeypatch=monkeypatch)
    _close(run(xnp.linalg.solve, a, b), np.linalg.solve(a, b), dtype, scale=100)
    _close(run(xnp.linalg.inv, a), np.linalg.inv(a), dtype, scale=100)
    _close(run(xnp.linalg.det, a), np.linalg.det(a), dtype, scale=100)
    sign, logabsdet = run(lambda a: tuple(xnp.linalg.slogdet(a)), a)
    expected = np.linalg.slogdet(a)
    _close(sign, expected.sign, dtype, scale=10)
    _close(logabsdet, expected.logabsdet, dtype, scale=10)


def test_solve_of_a_singular_matrix_raises_linalgerror(monkeypatch, x64):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        run_with_fake_solvers(xnp.linalg.solve, singular, np.ones(2), monkeypatch=monkeypatch)


@pytest.mark.parametrize("shape, dtype", [((4, 4), "float64"), ((3, 3), "float32"), ((2, 3, 3), "complex128")])
def test_eig(shape, dtype, monkeypatch, x64):
    a = rand(np.random.default_rng(0), shape, np.dtype(dtype))
    values, vectors = run_with_fake_solvers(lambda a: tuple(xnp.linalg.eig(a)), a, monkeypatch=monkeypatch)
    _close(values, np.linalg.eig(a).eigenvalues, dtype, scale=10)
    _close(a @ vectors, np.asarray(vectors) * np.asarray(values)[..., None, :], dtype, scale=10)
    _close(run_with_fake_solvers(xnp.linalg.eigvals, a, monkeypatch=monkeypatch), np.linalg.eigvals(a), dtype, 10)


def test_gradients_and_batching_on_the_gpu_kernels_are_jaxs(monkeypatch, x64):
    import jax
    import jax.numpy as jnp
    import xlac

    a = rand(np.random.default_rng(0), (3, 4, 4), np.dtype("float64"))
    spd = hermitian_positive(np.random.default_rng(0), (4, 4), np.dtype("float64"))
    run = lambda fn, *args: run_with_fake_solvers(fn, *args, monkeypatch=monkeypatch)
    _close(run(xlac.grad(lambda a: xnp.linalg.slogdet(a)[1]), a[0]),
           jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(a[0]), "float64", scale=10)
    _close(run(xlac.grad(lambda a: xnp.sum(xnp.linalg.cholesky(a))), spd),
           jax.grad(lambda a: jnp.sum(jnp.linalg.cholesky(a)))(spd), "float64", scale=10)
    _close(run(xlac.vmap(xnp.linalg.svdvals), a), jax.vmap(jnp.linalg.svdvals)(a), "float64", scale=10)
