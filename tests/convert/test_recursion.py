"""A function that calls itself is converted at every level of its recursion, like any other callee: NumPy's
creation functions at its leaves (``np.array([x[0]])``) take traced values. The depth is static, as the
shapes give it; a recursion that would end only on a traced value is refused with the function's line."""
import numpy as np
import pytest

import xlac
from xlac.errors import UnsupportedError


def fft(x):
    """Radix-2 decimation in time, as a textbook writes it."""
    n = x.shape[0]
    if n == 1:
        return np.array([x[0]])
    even = fft(x[::2])
    odd = fft(x[1::2])
    twiddled = np.exp(-2j * np.pi * np.arange(n // 2) / n) * odd
    return np.concatenate([even + twiddled, even - twiddled])


def pairwise_sum(x):
    n = x.shape[0]
    if n == 1:
        return np.array(x[0])
    return pairwise_sum(x[:n // 2]) + pairwise_sum(x[n // 2:])


def merge_sort(x):
    n = x.shape[0]
    if n <= 1:
        return x.copy()
    a, b = merge_sort(x[:n // 2]), merge_sort(x[n // 2:])
    out = np.empty(n, dtype=x.dtype)          # each element's place: its rank in its half plus in the other
    out[np.arange(a.shape[0]) + np.searchsorted(b, a, side="left")] = a
    out[np.arange(b.shape[0]) + np.searchsorted(a, b, side="right")] = b
    return out


def alternating_head(x):          # x[0] - x[1] * 2 + x[2] - x[3] * 2 ..., through two functions
    if x.shape[0] == 0:
        return np.array(0.0)
    return x[0] - doubled_head(x[1:])


def doubled_head(x):
    if x.shape[0] == 0:
        return np.array(0.0)
    return np.array([x[0] * 2])[0] + alternating_head(x[1:])


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n", [1, 2, 8, 32])
def test_a_recursive_fft_matches_numpys(n):
    x = RNG.standard_normal(n)
    got = xlac.compile(fft)(x)
    assert got.dtype == fft(x).dtype and got.shape == (n,)         # the program under NumPy: float64 for n = 1
    # float64 rounding: log2(n) butterfly levels, each off by a few units in the last place of sum|x|
    np.testing.assert_allclose(np.asarray(got), np.fft.fft(x), rtol=0, atol=8 * (np.log2(n) + 1) * 2e-16 * np.abs(x).sum())


def test_a_recursive_fft_of_complex_float32_input():
    x = (RNG.standard_normal(16) + 1j * RNG.standard_normal(16)).astype(np.complex64)
    got = xlac.compile(fft)(x)
    expected = fft(x)                              # NumPy running the same program
    assert got.dtype == expected.dtype == np.complex128   # np.exp(-2j * np.pi ...) is complex128 in NumPy
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=8 * 5 * 2e-16 * np.abs(x).sum())


@pytest.mark.parametrize("n", [1, 6])
def test_a_recursive_sum_and_merge_sort_match_numpys(n):
    x = RNG.standard_normal(n)
    got = xlac.compile(pairwise_sum)(x)
    assert got.dtype == pairwise_sum(x).dtype == np.float64
    np.testing.assert_allclose(float(got), pairwise_sum(x), rtol=1e-15, atol=1e-15)
    values = RNG.integers(0, 4, n).astype(np.int32)      # ties: the merge must place them stably
    sorted_values = xlac.compile(merge_sort)(values)
    assert sorted_values.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(sorted_values), np.sort(values))
    np.testing.assert_array_equal(merge_sort(values), np.sort(values))     # the program is NumPy's


def test_mutual_recursion_is_converted_at_every_level():
    x = RNG.standard_normal(7)
    got = xlac.compile(alternating_head)(x)
    np.testing.assert_allclose(float(got), alternating_head(x), rtol=1e-15)


def test_a_nested_function_that_calls_itself_through_its_closure():
    def total(x):
        def half_sums(y):
            if y.shape[0] == 1:
                return np.array([y[0]])
            return half_sums(y[: y.shape[0] // 2]) + half_sums(y[y.shape[0] // 2:])
        return half_sums(x)
    x = RNG.standard_normal(8)
    np.testing.assert_allclose(np.asarray(xlac.compile(total)(x)), total(x), rtol=1e-15)


class Transform:
    def fft(self, x):               # a method named as the global it calls: the global runs, converted
        return fft(x) * 2


def test_a_method_calling_the_global_of_its_own_name():
    x = RNG.standard_normal(4)
    np.testing.assert_allclose(np.asarray(xlac.compile(Transform().fft)(x)), np.fft.fft(x) * 2, atol=1e-14)


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def test_a_recursion_that_ends_on_a_traced_value_is_refused_with_its_line():
    assert int(xlac.compile(factorial, static_argnums=0)(5)) == 120
    line = factorial.__code__.co_firstlineno
    with pytest.raises(UnsupportedError, match=rf"factorial calls itself deeper than Python allows .* end it on a "
                                               rf"value known when tracing .*\n  at .*test_recursion.py:{line}"):
        xlac.compile(factorial)(5)


class Tree:
    def depth_sum(self, x):          # a method that calls itself through self
        if x.shape[0] == 1:
            return np.array([x[0]])
        return self.depth_sum(x[1:]) * 2 + x[0]

    def count_down(self, n):
        return 0 if n <= 0 else 1 + self.count_down(n - 1)


def test_a_method_that_calls_itself_through_self():
    x = RNG.standard_normal(5)
    np.testing.assert_allclose(np.asarray(xlac.compile(Tree().depth_sum)(x)), Tree().depth_sum(x), rtol=1e-15)
    line = Tree.count_down.__code__.co_firstlineno
    with pytest.raises(UnsupportedError, match=rf"count_down calls itself deeper .*\n  at .*:{line} \(in count_down\)"):
        xlac.compile(Tree().count_down)(3)
