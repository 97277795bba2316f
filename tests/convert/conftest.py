"""Fixtures of the vectorized-loop tests: the policy ``xlac.config.vectorize_loops`` set per test or per module."""
from __future__ import annotations

import pytest

import xlac


@pytest.fixture
def vectorize(monkeypatch):
    """Set ``xlac.config.vectorize_loops`` for one test."""
    def use(policy: str):
        monkeypatch.setattr(xlac.config, "vectorize_loops", policy)
    use("always")
    return use


@pytest.fixture(scope="module")
def always():
    """``vectorize_loops='always'`` for a whole module's hypothesis tests."""
    before = xlac.config.vectorize_loops
    xlac.config.update("vectorize_loops", "always")
    yield
    xlac.config.update("vectorize_loops", before)
