"""What attention does to a KV cache read up to a traced position (issue 34): ``cache[:, s:e]`` with traced
bounds through transpose/swapaxes, reshape over static axes, repeat of grouped heads, batched matmul (giving
the dynamic axis, and contracting over it) and a softmax along the dynamic axis. Each against NumPy on random
extents, and its gradient against jax.grad of the hand-masked form (the whole cache, a mask of the positions).

Shapes: batch B, cache positions T, KV heads KV, head dim D, query heads KV * REP, queries Q."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac

B, T, KV, D, REP, Q = 2, 7, 2, 4, 2, 3
rng = np.random.default_rng(34)
CACHE_K, CACHE_V = rng.normal(size=(B, T, KV, D)), rng.normal(size=(B, T, KV, D))
QUERIES = rng.normal(size=(B, KV * REP, Q, D))


@st.composite
def extents(draw):
    """Bounds ``s < e`` of a non-empty window of the cache's positions."""
    e = draw(st.integers(1, T))
    return draw(st.integers(0, e - 1)), e


def at_front(value, n: int, axis: int, shape: tuple):
    """A zero array of ``shape`` with ``value`` (``n`` long along ``axis``) written at the front of that
    axis, which shows its elements and their order."""
    out = np.zeros(shape)
    index = [slice(None)] * len(shape)
    index[axis] = slice(None, n)
    out[tuple(index)] = value
    return out


def assert_as_numpy(compiled, f, *args):
    expected = f(*args)
    got = compiled(*args)
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype and np.shape(g) == e.shape
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------- the rules, against NumPy


def transposed(k, s, e):
    keys = k[:, s:e]                                              # (B, n?, KV, D)
    n = e - s
    return (at_front(keys.transpose(0, 2, 3, 1), n, 3, (B, KV, D, T)).reshape(B, -1),
            at_front(np.swapaxes(keys, 1, 2), n, 2, (B, KV, T, D)), at_front(keys.T, n, 2, (D, KV, T, B)),
            np.transpose(keys, (1, 0, 2, 3)).sum(axis=0), np.moveaxis(keys, 1, -1).max(axis=-1))


def reshaped(k, s, e):
    keys = k[:, s:e]
    n = e - s
    merged = keys.reshape(B, -1, KV * D)                          # the heads merged: (B, n?, KV * D)
    split = merged.reshape(B, -1, KV, 2, D // 2)                  # and split again
    return (at_front(merged, n, 1, (B, T, KV * D)), at_front(split, n, 1, (B, T, KV, 2, D // 2)),
            at_front(np.expand_dims(keys, 2), n, 1, (B, T, 1, KV, D)), np.reshape(keys, (B, -1, KV * D)).sum(axis=1))


def repeated(k, s, e):
    keys = k[:, s:e]
    n = e - s
    grouped = np.repeat(keys, REP, axis=2)                        # (B, n?, KV * REP, D): grouped-query heads
    return (at_front(grouped, n, 1, (B, T, KV * REP, D)), at_front(keys.repeat(3, axis=3), n, 1, (B, T, KV, 3 * D)),
            at_front(np.repeat(keys, 2, axis=1), 2 * n, 1, (B, 2 * T, KV, D)), grouped.sum(axis=1))


def batched_matmul(q, k, v, s, e):
    keys = np.repeat(k[:, s:e], REP, axis=2).transpose(0, 2, 3, 1)        # (B, H, D, n?)
    values = np.repeat(v[:, s:e], REP, axis=2).transpose(0, 2, 1, 3)      # (B, H, n?, D)
    scores = q @ keys                                                     # (B, H, Q, n?): the dynamic axis
    n = e - s
    return (at_front(scores, n, 3, (B, KV * REP, Q, T)), scores @ values,      # contracted over it: static
            np.matmul(q[:, :, :1], keys)[:, :, 0].sum(axis=-1), (keys.swapaxes(-1, -2) @ q[0, 0, 0]).sum(axis=-1),
            q[0] @ keys[0] @ values[0])


def softmax_along(q, k, v, s, e):
    keys = np.repeat(k[:, s:e], REP, axis=2).transpose(0, 2, 3, 1)
    values = np.repeat(v[:, s:e], REP, axis=2).transpose(0, 2, 1, 3)
    scores = q @ keys / np.sqrt(D)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return at_front(weights, e - s, 3, (B, KV * REP, Q, T)), weights @ values, weights.sum(axis=-1)


compiled = {f: xlac.compile(f) for f in (transposed, reshaped, repeated, batched_matmul, softmax_along)}


@settings(max_examples=12, deadline=None)
@given(extents())
def test_transpose_swapaxes_and_moveaxis_carry_the_dynamic_axis_as_numpy(bounds):
    assert_as_numpy(compiled[transposed], transposed, CACHE_K, *bounds)


@settings(max_examples=12, deadline=None)
@given(extents())
def test_reshape_over_the_static_head_axes_keeps_the_dynamic_axis_as_numpy(bounds):
    assert_as_numpy(compiled[reshaped], reshaped, CACHE_K, *bounds)


@settings(max_examples=12, deadline=None)
@given(extents())
def test_repeat_of_grouped_heads_and_along_the_dynamic_axis_as_numpy(bounds):
    assert_as_numpy(compiled[repeated], repeated, CACHE_K, *bounds)


@settings(max_examples=12, deadline=None)
@given(extents())
def test_batched_matmul_gives_and_contracts_the_dynamic_axis_as_numpy(bounds):
    assert_as_numpy(compiled[batched_matmul], batched_matmul, QUERIES, CACHE_K, CACHE_V, *bounds)


@settings(max_examples=12, deadline=None)
@given(extents())
def test_softmax_along_the_dynamic_axis_weighs_only_the_window_as_numpy(bounds):
    assert_as_numpy(compiled[softmax_along], softmax_along, QUERIES, CACHE_K, CACHE_V, *bounds)


def test_one_trace_serves_every_extent():
    f = xlac.compile(softmax_along)
    for s, e in ((0, 1), (2, 5), (0, T)):
        f(QUERIES, CACHE_K, CACHE_V, s, e)
    assert f.cache_info().traces == 1


def test_a_length_given_for_the_dynamic_axis_is_checked_and_names_the_line():
    def merged(k, e):
        return k[:, :e].reshape(B, T, KV * D).sum()               # T positions: true only for e == T
    f = xlac.compile(merged)
    assert float(f(CACHE_K, T)) == pytest.approx(merged(CACHE_K, T))
    with pytest.raises(ValueError, match=rf"cannot reshape an axis of 5 elements into one of length {T}\n"
                                         r"  at .*test_dynamic_extents_attention.py:\d+ \(in merged\)"):
        f(CACHE_K, 5)


def test_a_softmax_over_no_positions_raises_numpys_error():
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        softmax_along(QUERIES, CACHE_K, CACHE_V, 3, 3)
    with pytest.raises(ValueError, match=r"zero-size array to reduction operation maximum which has no identity\n"
                                         r"  at .*test_dynamic_extents_attention.py:\d+ \(in softmax_along\)"):
        compiled[softmax_along](QUERIES, CACHE_K, CACHE_V, 3, 3)


# ---------------------------------------------------------------- gradients, against the hand-masked form


def window(s, e):
    return (jnp.arange(T) >= s) & (jnp.arange(T) < e)


def transposed_loss(k, s, e):
    keys = k[:, s:e]
    return (np.sin(keys.transpose(0, 2, 3, 1)) * np.swapaxes(np.swapaxes(keys, 1, 3), 1, 2)).sum()


def transposed_by_hand(k, s, e):
    masked = jnp.where(window(s, e)[None, :, None, None], k, 0.0)
    return (jnp.sin(masked.transpose(0, 2, 3, 1)) * jnp.swapaxes(jnp.swapaxes(masked, 1, 3), 1, 2)).sum()


def reshaped_loss(k, s, e):
    merged = k[:, s:e].reshape(B, -1, KV * D)
    return (merged * np.cos(merged)).sum() + merged.reshape(B, -1, KV, D).max(axis=1).sum()


def reshaped_by_hand(k, s, e):
    inside = window(s, e)[None, :, None]
    merged = k.reshape(B, T, KV * D)
    return (jnp.where(inside, merged * jnp.cos(merged), 0.0)).sum() + \
        jnp.where(inside[..., None], k, -jnp.inf).max(axis=1).sum()


def repeated_loss(k, s, e):
    grouped = np.repeat(k[:, s:e], REP, axis=2)
    return (grouped ** 2 * np.arange(1.0, KV * REP + 1)[:, None]).sum()


def repeated_by_hand(k, s, e):
    grouped = jnp.repeat(jnp.where(window(s, e)[None, :, None, None], k, 0.0), REP, axis=2)
    return (grouped ** 2 * jnp.arange(1.0, KV * REP + 1)[:, None]).sum()


def matmul_loss(q, k, s, e):
    keys = np.repeat(k[:, s:e], REP, axis=2).transpose(0, 2, 3, 1)
    scores = q @ keys
    return (scores @ np.swapaxes(keys, -1, -2)).sum() + np.tanh(scores).sum()


def matmul_by_hand(q, k, s, e):
    inside = window(s, e)
    keys = jnp.repeat(jnp.where(inside[None, :, None, None], k, 0.0), REP, axis=2).transpose(0, 2, 3, 1)
    scores = q @ keys
    return (scores @ jnp.swapaxes(keys, -1, -2)).sum() + jnp.where(inside, jnp.tanh(scores), 0.0).sum()


def softmax_loss(q, k, v, s, e):
    return (softmax_along(q, k, v, s, e)[1] * np.arange(1.0, D + 1)).sum()


def softmax_by_hand(q, k, v, s, e):
    keys = jnp.repeat(k, REP, axis=2).transpose(0, 2, 3, 1)
    values = jnp.repeat(v, REP, axis=2).transpose(0, 2, 1, 3)
    scores = jnp.where(window(s, e), q @ keys / jnp.sqrt(D), -jnp.inf)
    return (jax.nn.softmax(scores, axis=-1) @ values * jnp.arange(1.0, D + 1)).sum()


GRADIENTS = [(transposed_loss, transposed_by_hand, (CACHE_K,)), (reshaped_loss, reshaped_by_hand, (CACHE_K,)),
             (repeated_loss, repeated_by_hand, (CACHE_K,)), (matmul_loss, matmul_by_hand, (QUERIES, CACHE_K)),
             (softmax_loss, softmax_by_hand, (QUERIES, CACHE_K, CACHE_V))]


@pytest.mark.parametrize("loss, by_hand, arrays", GRADIENTS, ids=[g[0].__name__ for g in GRADIENTS])
def test_gradients_match_jax_of_the_hand_masked_form(x64, loss, by_hand, arrays):
    argnums = tuple(range(len(arrays)))
    grad, expected_grad = xlac.grad(loss, argnums=argnums), jax.jit(jax.grad(by_hand, argnums=argnums))
    for s, e in ((0, 1), (1, 5), (0, T)):
        got = grad(*arrays, np.int64(s), np.int64(e))
        expected = expected_grad(*map(jnp.asarray, arrays), s, e)
        for g, x in zip(got, expected, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-12, atol=1e-13)
