"""Windows whose start is computed twice: ``x[i % 2:i % 2 + 1]`` and ``x[i // 2:i // 2 + 2]`` are slices of
static length (``xlac/numpy/indexing.py``'s ``Window``), as ``x[i:i + 1]`` is, though each bound computes its
own ``i % 2`` (the offset facts ``xlac/numpy/operators.py`` keeps of ``%`` and ``//`` by a positive Python int).
Against NumPy: a loop that carries such a window rolls, and a window that could run past the end keeps NumPy's
shorter slice."""
import numpy as np
import pytest

import xlac


def decisions(compiled, *args) -> list[str]:
    return [d.decision for d in compiled.trace(*args).loop_decisions]


def test_a_loop_carrying_a_window_at_a_twice_computed_remainder_rolls_and_matches_numpy():
    def squares(a):
        acc = a[:2].copy()
        for i in range(5):
            acc = acc - np.square(acc[i % 2:i % 2 + 1]) * 0.25       # a 1-element window, carried
        return acc

    def shifted(a):
        acc = np.zeros(3)
        for i in range(6):
            acc[(i + 1) % 3:(i + 1) % 3 + 1] += a[i // 2:i // 2 + 2].sum()
        return acc
    a = np.linspace(0.5, 1.5, 8)
    for f in (squares, shifted):
        compiled = xlac.compile(f, loops="roll")
        np.testing.assert_allclose(np.asarray(compiled(a)), f(a), rtol=1e-14)
        assert decisions(compiled, a) == ["rolled"]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_a_window_at_a_traced_remainder_has_its_static_length_and_numpys_values(k):
    x = np.arange(10.0, 15.0)

    def window(x, j):
        return x[j % k:j % k + 1] * 2, x[j // k:j // k + 2]

    def window_by_divmod(x, j):
        quotient, remainder = divmod(j, k)
        return x[remainder:j % k + 1] * 2, x[quotient:j // k + 2]
    inside = [j for j in range(-12, 20) if 0 <= j // k <= 3]     # else x[j // k:j // k + 2] is shorter
    for f in (window, window_by_divmod):
        compiled = xlac.compile(f)
        for j in inside:
            for g, e in zip(compiled(x, np.int64(j)), f(x, j)):
                assert np.asarray(g).shape == e.shape
                np.testing.assert_array_equal(np.asarray(g), e)


def test_a_window_that_may_run_past_the_end_keeps_numpys_shorter_slice():
    def sums(x, n):
        total = np.zeros(())
        for i in range(n):
            total = total + x[i % 5:i % 5 + 2].sum() * (i + 1)     # x[4:6] holds one element of 4
        return total
    x = np.array([1.0, 2.0, 4.0, 8.0])
    compiled = xlac.compile(sums, loops="roll", static_argnums=1)
    assert float(compiled(x, 7)) == sums(x, 7)
    assert decisions(compiled, x, 7) == ["rolled"]
    at_traced_start = xlac.compile(lambda x, j: x[j % 5:j % 5 + 2].sum())
    for j in range(-6, 7):
        assert float(at_traced_start(x, np.int64(j))) == x[j % 5:j % 5 + 2].sum()


def test_a_returned_window_that_may_run_past_the_end_is_numpys_shorter_slice():
    def past_the_end(x, j):
        return x[j % 5:j % 5 + 2]
    x, compiled = np.arange(4.0), xlac.compile(past_the_end)
    for j in (1, 3, 4, -1):
        np.testing.assert_array_equal(np.asarray(compiled(x, np.int64(j))), past_the_end(x, j))


def test_different_expressions_are_not_one_start():
    def f(x, j):
        return x[j % 3:j % 4 + 1].sum(), x[j // 2:j // 3 + 1].sum(), x[j % -3:j % -3 + 1].sum()
    x, compiled = np.arange(1.0, 11.0), xlac.compile(f)
    for j in (-7, 0, 5, 11):
        got = compiled(x, np.int64(j))
        assert [float(g) for g in got] == [float(e) for e in f(x, j)]
