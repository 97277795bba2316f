"""Test settings: the IR verifier runs after tracing and after every pass; hypothesis stays quick on CI."""
import os

import hypothesis
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
