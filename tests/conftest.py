"""Test settings: the IR verifier runs after tracing and after every pass; hypothesis stays quick on CI."""
import os

import hypothesis
import jax
import numpy as np
import pytest

import xlac

xlac.config.update("verify_passes", True)

# XLA's code generation for the CPU is most of the suite's time and none of what it checks: the values xlac's
# programs compute. XLA's older CPU emitters without LLVM's optimizations compile them 2.4x faster. A test of
# XLA's optimized program itself (its fusions, copies, costs) takes ``xla_defaults``: what users get.
FAST_COMPILES = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}
xlac.config.update("compiler_options", FAST_COMPILES)

hypothesis.settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow],
    derandomize=True)
hypothesis.settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def xla_defaults():
    """XLA's own compile options, for a test of the optimized program users get (see ``FAST_COMPILES``)."""
    xlac.config.update("compiler_options", {})
    try:
        yield
    finally:
        xlac.config.update("compiler_options", FAST_COMPILES)


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
