"""The README's "Errors name your line" bullet, run: what compiles, and what raises with the user's line."""
import numpy as np
import pytest

import xlac


def sign_flip(x):
    if x.sum() > 0:
        return x
    return -x


def zeros_of_traced_length(x, n):
    return np.zeros(n) + x[0]


def total_as_python_float(x):
    return x.sum().item()


def test_an_if_on_a_traced_value_compiles_with_the_converter():
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0])):
        np.testing.assert_array_equal(np.asarray(xlac.compile(sign_flip)(x)), sign_flip(x))


def test_without_the_converter_the_if_raises_and_suggests_where():
    line = sign_flip.__code__.co_firstlineno + 1
    with pytest.raises(xlac.TracerConversionError, match=rf"(?s)Python control flow on a traced value.*xnp\.where.*"
                                                         rf"\n  at .*test_readme_errors.py:{line}"):
        xlac.compile(sign_flip, convert=False)(np.ones(2))


def test_a_shape_from_a_traced_value_and_item_raise_at_the_line():
    line = zeros_of_traced_length.__code__.co_firstlineno + 1
    with pytest.raises(xlac.TracerConversionError, match=rf"(?s)shape.*static argument.*test_readme_errors.py:{line}"):
        xlac.compile(zeros_of_traced_length)(np.ones(2), np.int64(3))
    np.testing.assert_array_equal(np.asarray(xlac.compile(zeros_of_traced_length, static_argnums=1)(np.ones(2), 3)),
                                  np.ones(3))
    line = total_as_python_float.__code__.co_firstlineno + 1
    with pytest.raises(xlac.TracerConversionError, match=rf"(?s)needs a concrete value.*test_readme_errors.py:{line}"):
        xlac.compile(total_as_python_float)(np.ones(2))
