"""Test settings: the IR verifier runs after tracing and after every pass; hypothesis stays quick on CI."""
import os

import hypothesis
import jax
import numpy as np
import pytest

import xlac

xlac.config.update("verify_passes", True)

hypothesis.settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow],
    derandomize=True)
hypothesis.settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def x64():
    """JAX with 64-bit types, for comparisons against JAX in float64 (xlac follows NumPy's dtypes)."""
    with jax.enable_x64(True):
        yield


@pytest.fixture(scope="module")
def x64_module():
    """``x64`` for a whole module (hypothesis tests cannot take function-scoped fixtures)."""
    with jax.enable_x64(True):
        yield
