"""Placing dynamic extents of other bounds into common positions (xlac/numpy/dynamic_extent.py's ``aligned``,
``_moved``): values as NumPy's, and the structure that keeps a shrinking-slice loop from doing full-size work
per step: no move where the positions agree when tracing, else one fused gather (no padded copy)."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import levinson_durbin


def ops_named(text: str, op: str) -> list[str]:
    return [line for line in text.splitlines() if f'"stablehlo.{op}"' in line or f"stablehlo.{op} " in line]


def outcome(f, *args):
    """``f(*args)`` as NumPy arrays, or its error's type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(f(*args))
    except ValueError as error:
        return type(error)


def heads(x, y, k, j):
    return (x[:k] + y[:j]).sum()


def head_and_flipped(x, y, k, j):
    return (x[:k] * np.flip(y[j:j + k]) - np.flip(x[:k])).sum()


compiled_heads, compiled_head_and_flipped = xlac.compile(heads), xlac.compile(head_and_flipped)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 7), st.integers(0, 7))
def test_slices_from_the_start_of_other_lengths_add_as_numpy(k, j):
    x, y = np.arange(1.0, 8.0), np.arange(10.0, 80.0, 10.0)
    expected, got = outcome(heads, x, y, k, j), outcome(compiled_heads, x, y, np.int64(k), np.int64(j))
    if isinstance(expected, type):          # unequal lengths, neither 1: NumPy's broadcast error
        assert got is expected
    else:
        np.testing.assert_array_equal(got, expected)


def test_slices_from_the_start_are_combined_where_they_are():
    text = compiled_heads.lower(np.ones(7), np.ones(7), np.int64(3), np.int64(3)).as_text()
    assert not ops_named(text, "gather") and not ops_named(text, "pad")
    assert not [line for line in ops_named(text, "dynamic_slice") if "tensor<7xf64>" in line.split("->")[-1]]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 7), st.integers(-3, 9))
def test_a_flipped_slice_meets_a_head_as_numpy(k, j):
    x, y = np.arange(1.0, 8.0), np.arange(10.0, 80.0, 10.0)
    expected = outcome(head_and_flipped, x, y, k, j)
    got = outcome(compiled_head_and_flipped, x, y, np.int64(k), np.int64(j))
    if isinstance(expected, type):
        assert got is expected
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_the_levinson_durbin_step_realigns_its_flips_without_a_padded_copy():
    # (its values against NumPy: tests/numpy/test_windows.py)
    text = xlac.compile(levinson_durbin, loops="roll").lower(np.exp(-0.1 * np.arange(12.0))).as_text()
    assert not ops_named(text, "pad") and "tensor<36xf64>" not in text     # before: a[:k + 1] padded to 3x
    assert ops_named(text, "gather")


def test_the_gradient_through_a_realigned_flip_is_jax_s(x64):
    def f(x, k):
        return (x[:k] * np.flip(x[1:k + 1])).sum()

    def by_hand(x, k):
        positions = jnp.arange(x.shape[0])
        return jnp.where(positions < k, x * x[jnp.clip(k - positions, 0, x.shape[0] - 1)], 0.0).sum()

    x = np.linspace(0.5, 2.0, 6)
    for k in (0, 1, 3, 5):
        np.testing.assert_allclose(np.asarray(xlac.grad(f)(x, np.int64(k))),
                                   np.asarray(jax.grad(by_hand)(jnp.asarray(x), k)), rtol=1e-12)
