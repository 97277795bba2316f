"""Contractions of values whose length is known only when the program runs, along an axis the contraction
keeps (a free axis): the result carries the extent and the operand is not masked (no select over it);
along an axis it sums over, the masked positions are zeroed first, since NumPy never reads them and they may
hold inf or nan."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac


def _cache(rng, length, heads, dim, stop):
    """A cache whose rows from ``stop`` on hold nan and inf: NumPy never reads them."""
    cache = rng.normal(size=(length, heads, dim))
    cache[stop:] = np.nan
    cache[stop + 1::2] = np.inf
    return cache


def scores(q, k_cache, pos):
    return np.einsum("hd,thd->ht", q, k_cache[:pos + 1])


def attend(weights, v_cache, pos):
    return np.einsum("ht,thd->hd", weights[:, :pos + 1], v_cache[:pos + 1])


def decode_attention(q, k_cache, v_cache, pos):
    s = np.einsum("hd,thd->ht", q, k_cache[:pos + 1])
    s -= s.max(axis=1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=1, keepdims=True)
    return np.einsum("ht,thd->hd", w, v_cache[:pos + 1])


@settings(max_examples=8, deadline=None)
@given(length=st.integers(2, 12), heads=st.integers(1, 3), dim=st.integers(1, 4), data=st.data())
def test_a_free_dynamic_axis_keeps_its_extent_in_the_result(length, heads, dim, data):
    pos = data.draw(st.integers(0, length - 1))
    rng = np.random.default_rng(length * 100 + pos)
    q, k_cache = rng.normal(size=(heads, dim)), _cache(rng, length, heads, dim, pos + 1)
    got = xlac.compile(scores)(q, k_cache, pos)
    np.testing.assert_allclose(np.asarray(got), scores(q, k_cache, pos), rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(length=st.integers(2, 12), heads=st.integers(1, 3), dim=st.integers(1, 4), data=st.data())
def test_a_summed_dynamic_axis_ignores_what_lies_outside_it(length, heads, dim, data):
    pos = data.draw(st.integers(0, length - 1))
    rng = np.random.default_rng(length * 100 + pos + 7)
    weights = rng.normal(size=(heads, length))
    weights[:, pos + 1:] = np.inf
    v_cache = _cache(rng, length, heads, dim, pos + 1)
    got = xlac.compile(attend)(weights, v_cache, pos)
    np.testing.assert_allclose(np.asarray(got), attend(weights, v_cache, pos), rtol=1e-12)


@settings(max_examples=5, deadline=None)
@given(length=st.integers(2, 10), data=st.data())
def test_softmax_attention_over_a_prefix_of_a_cache_matches_numpy(length, data):
    pos = data.draw(st.integers(0, length - 1))
    rng = np.random.default_rng(length * 10 + pos)
    q = rng.normal(size=(2, 3))
    k_cache, v_cache = _cache(rng, length, 2, 3, pos + 1), _cache(rng, length, 2, 3, pos + 1)
    got = xlac.compile(decode_attention)(q, k_cache, v_cache, pos)
    np.testing.assert_allclose(np.asarray(got), decode_attention(q, k_cache, v_cache, pos), rtol=1e-10)


def _selects_of_shape(hlo: str, shape: str) -> list[str]:
    return [line for line in hlo.splitlines() if re.search(rf"= \w+\[{shape}\]\S* select\(", line)]


@pytest.mark.usefixtures("xla_defaults")
def test_a_free_dynamic_axis_does_not_select_over_the_operand():
    q, k_cache = np.ones((8, 16)), np.ones((64, 8, 16))
    hlo = xlac.compile(scores).lower(q, k_cache, 5).compile().as_text()
    assert _selects_of_shape(hlo, "64,8,16") == []


@pytest.mark.usefixtures("xla_defaults")
def test_a_summed_dynamic_axis_selects_over_the_operand():
    """The check above can fail: a contraction over the dynamic axis does zero the cache."""
    weights, v_cache = np.ones((8, 64)), np.ones((64, 8, 16))
    hlo = xlac.compile(attend).lower(weights, v_cache, 5).compile().as_text()
    assert _selects_of_shape(hlo, "64,8,16") != []


@settings(max_examples=5, deadline=None)
@given(n=st.integers(1, 8), data=st.data())
def test_outer_of_dynamic_vectors_matches_numpy(n, data):
    i, j = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    x, y = np.arange(n, dtype=float), np.linspace(-1.0, 1.0, n)
    x[i:] = np.nan

    def outer(x, y, i, j):
        return np.outer(x[:i], y[j:]) * 2.0
    np.testing.assert_array_equal(np.asarray(xlac.compile(outer)(x, y, i, j)), outer(x, y, i, j))


def projections(Q, a, j):
    return Q[:, :j].T @ a


def gram_schmidt(A):
    """Classical Gram-Schmidt as written: each column less its projections on the columns before it."""
    Q = np.zeros_like(A)
    for j in range(A.shape[1]):
        v = A[:, j] - Q[:, :j] @ (Q[:, :j].T @ A[:, j])
        Q[:, j] = v / np.linalg.norm(v)
    return Q


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(1, 6), columns=st.integers(1, 6), data=st.data())
def test_a_transposed_prefix_of_columns_times_a_vector_matches_numpy(rows, columns, data):
    j = data.draw(st.integers(0, columns))
    rng = np.random.default_rng(columns)
    Q, a = rng.normal(size=(rows, columns)), rng.normal(size=rows)
    Q[:, j:] = np.nan
    np.testing.assert_allclose(np.asarray(xlac.compile(projections)(Q, a, j)), projections(Q, a, j), rtol=1e-12)


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(3, 7), columns=st.integers(1, 3))
def test_gram_schmidt_as_written_matches_numpy(rows, columns):
    A = np.random.default_rng(rows).normal(size=(rows, columns))
    np.testing.assert_allclose(np.asarray(xlac.compile(gram_schmidt)(A)), gram_schmidt(A), rtol=1e-9, atol=1e-12)


@pytest.mark.usefixtures("xla_defaults")
def test_projections_in_a_loop_do_not_select_over_the_columns():
    """``Q[:, :j].T @ a`` keeps ``j`` free: the loop (each step reads the last) has no select over Q's shape
    (200x100, nor a batch of it); the same loop summing over ``j`` does select over it."""
    def projections_loop(Q, A):
        total = np.zeros(Q.shape[1])
        for j in range(Q.shape[1]):
            total[:j] += Q[:, :j].T @ (A[:, j] + total[0])
        return total

    def combinations_loop(Q, c):
        total = np.zeros(Q.shape[0])
        for j in range(Q.shape[1]):
            total += Q[:, :j] @ (c[:j] + total[0])
        return total
    Q = np.ones((200, 100))
    free = xlac.compile(projections_loop).lower(Q, np.ones((200, 100))).compile().as_text()
    summed = xlac.compile(combinations_loop).lower(Q, np.ones(100)).compile().as_text()
    assert _selects_of_shape(free, r"(\d+,)*200,100") == [] and _selects_of_shape(free, r"(\d+,)*100,200") == []
    assert _selects_of_shape(summed, r"(\d+,)*200,100") != []
