"""Doctests see ``np``, ``xlac`` and ``xnp`` without importing them."""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
    doctest_namespace["xnp"] = xnp
    doctest_namespace["xlac"] = xlac
