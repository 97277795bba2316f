"""A 2-layer MLP and a pre-norm transformer block, written once, run with NumPy and compiled with xlac."""
import numpy as np

import xlac
import xlac.numpy as xnp
from benchmarks.models import make_mlp, make_transformer_block, mlp_params, transformer_params


def test_mlp_matches_numpy():
    args = mlp_params(np.random.default_rng(0), batch=8, d_in=32, d_hidden=64, d_out=16)
    got = xlac.compile(make_mlp(xnp))(*args)
    expected = make_mlp(np)(*args)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-5, atol=2e-5)


def test_mlp_float64_matches_numpy_exactly_enough():
    args = mlp_params(np.random.default_rng(1), batch=4, d_in=8, d_hidden=16, d_out=4, dtype=np.float64)
    got = xlac.compile(make_mlp(xnp))(*args)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), make_mlp(np)(*args), rtol=1e-12, atol=1e-12)


def test_transformer_block_matches_numpy():
    x, params = transformer_params(np.random.default_rng(2), seq=16, d_model=32)
    got = xlac.compile(make_transformer_block(xnp, n_heads=4))(x, params)
    expected = make_transformer_block(np, n_heads=4)(x, params)
    assert got.dtype == expected.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-4)
