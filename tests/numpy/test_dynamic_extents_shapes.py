"""NumPy's shape functions on values with a dynamic extent (xlac/numpy/dynamic_extent_shapes.py): flip,
transpose, moveaxis, swapaxes, expand_dims, squeeze, concatenate, stack, hstack, vstack, repeat, reshape and
ravel of slices with traced bounds and of selections by traced masks, against NumPy on random extents (each
result written into a zero array at its front, which shows its elements' order); their gradients against
jax.grad of the same function with static bounds; the errors where the length would be split."""
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac

X = np.arange(24.0).reshape(6, 4) - 5.0
bounds = st.integers(-7, 7)
masks = st.lists(st.booleans(), min_size=6, max_size=6).map(np.array)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def assert_as_numpy(compiled, f, *args):
    expected = f(*args)
    got = compiled(*args)
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype and np.shape(g) == e.shape
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-13)


def front(shape, value, k, axis=0):
    """A zero array of ``shape`` with ``value`` (of length ``k`` along ``axis``) written at its front."""
    out = np.zeros(shape)
    if axis == 0:
        out[:k] = value
    else:
        out[:, :k] = value
    return out


def moved(v, k, extra):
    """The axes of ``v`` (k rows of 4) moved, flipped and inserted."""
    return (front((6, 4), np.flip(v, 0), k), front((6, 4), np.flip(v), k), front((6, 4), v[::-1], k),
            front((6, 4), np.fliplr(v), k), front((6, 4), np.flipud(v), k), front((4, 6), v.T, k, 1),
            front((4, 6), np.transpose(v), k, 1), front((4, 6), np.swapaxes(v, 0, 1), k, 1),
            front((6, 2, 2), np.moveaxis(v.reshape(-1, 2, 2), 2, 1), k),
            front((2, 6, 2), np.moveaxis(v.reshape(-1, 2, 2), 0, -2), k, 1),
            front((6, 1, 4), np.expand_dims(v, 1), k), front((6, 4), np.squeeze(np.expand_dims(v, (1, 3))), k),
            front((6, 4), np.expand_dims(v, -1)[..., 0] * extra, k))


def joined(v, w, k, n):
    """``v`` (k rows) and ``w`` (n rows) joined."""
    return (front((12, 4), np.concatenate([v, w]), k + n), front((8, 4), np.concatenate([v, X[:2]], axis=0), k + 2),
            front((6, 8), np.concatenate([v, 2 * v], axis=1), k), front((6, 8), np.hstack([v, v[:, ::-1]]), k),
            front((12, 4), np.vstack([w, v]), k + n), front((6, 2, 4), np.stack([v, -v], axis=1), k),
            front((2, 6, 4), np.stack([v, -v]), k, 1), front((24,), np.concatenate([v, v], axis=None)[:4 * k], 4 * k),
            front((12, 4), np.repeat(v, 2, axis=0), 2 * k), front((6, 12), np.repeat(v, 3, axis=1), k),
            front((18,), np.repeat(v[:, 0], 3), 3 * k), front((6, 4), np.repeat(v, [1, 0, 2, 1], axis=1), k))


def reshaped(v, k):
    return (front((6, 2, 2), v.reshape(-1, 2, 2), k), front((24,), v.reshape(-1), 4 * k),
            front((24,), v.ravel(), 4 * k), front((24,), v.flatten(), 4 * k),
            front((6, 1, 4, 1), v.reshape((-1, 1, 4, 1)), k), front((6, 2, 2), np.reshape(v, (-1, 2, 2)), k))


def on_a_slice(x, i, j):
    """``x[i:j]`` and its length, for bounds in [-7, 7] or None (j)."""
    v = x[i:j]
    if isinstance(i, int):
        return v, len(range(6)[i:j])
    stop = 6 if j is None else np.clip(np.where(j < 0, j + 6, j), 0, 6)
    return v, np.maximum(stop - np.clip(np.where(i < 0, i + 6, i), 0, 6), 0)


def moved_slice(x, i, j):
    v, k = on_a_slice(x, i, j)
    return moved(v, k, 2.0)


def moved_mask(x, m):
    return moved(x[m], np.count_nonzero(m), 2.0)


def joined_slices(x, i, j, m):
    v, k = on_a_slice(x, i, j)
    return joined(v, x[m], k, np.count_nonzero(m))


def reshaped_slice(x, i, j):
    v, k = on_a_slice(x, i, j)
    return reshaped(v, k)


def reshaped_mask(x, m):
    return reshaped(x[m], np.count_nonzero(m))


compiled_moved_slice, compiled_moved_mask = xlac.compile(moved_slice), xlac.compile(moved_mask)
compiled_joined_slices = xlac.compile(joined_slices)
compiled_reshaped_slice, compiled_reshaped_mask = xlac.compile(reshaped_slice), xlac.compile(reshaped_mask)


@settings(max_examples=8, deadline=None)
@given(bounds, bounds, masks)
def test_flip_transpose_moveaxis_swapaxes_expand_dims_squeeze_move_the_elements_as_numpy(i, j, m):
    assert_as_numpy(compiled_moved_slice, moved_slice, X, i, j)
    assert_as_numpy(compiled_moved_mask, moved_mask, X, m)


@settings(max_examples=15, deadline=None)
@given(bounds, bounds, masks)
def test_concatenate_stack_and_repeat_join_the_elements_as_numpy(i, j, m):
    assert_as_numpy(compiled_joined_slices, joined_slices, X, i, j, m)


@settings(max_examples=15, deadline=None)
@given(bounds, bounds, masks)
def test_reshape_over_static_axes_keeps_the_dynamic_axis_and_ravel_merges_it_as_numpy(i, j, m):
    assert_as_numpy(compiled_reshaped_slice, reshaped_slice, X, i, j)
    assert_as_numpy(compiled_reshaped_mask, reshaped_mask, X, m)


def rolled_and_differenced(x, m, i, shift):
    v, (w, k) = x[m], on_a_slice(x, i, None)
    return (front((6, 4), np.roll(v, shift, axis=0), np.count_nonzero(m)), front((6, 4), np.roll(w, shift, axis=0), k),
            np.diff(v, axis=0).sum(axis=0), np.diff(w[:, 0], 2).sum(), np.diff(v).sum(axis=1).sum(),
            np.roll(v, 1, axis=1).sum(axis=0), np.atleast_2d(v[:, 0]).sum(axis=1),
            np.column_stack([v[:, 0], v[:, 1]]).sum(axis=0), np.atleast_3d(v[:, 0]).sum(axis=1),
            front((6,), np.roll(v[:, 1], shift), np.count_nonzero(m)))


compiled_rolled_and_differenced = xlac.compile(rolled_and_differenced)


@settings(max_examples=15, deadline=None)
@given(masks, bounds, st.integers(-8, 8))
def test_roll_diff_atleast_and_column_stack_as_numpy(m, i, shift):
    x = np.abs(X) ** 1.5 / 7.0
    assert_as_numpy(compiled_rolled_and_differenced, rolled_and_differenced, x, m, i, shift)


def test_attention_over_a_growing_cache_as_numpy():
    """Issue 34's shape: scores of queries against a KV cache read up to a traced position, a softmax along
    that axis, the values weighted: transposes, a reshape over static axes, a repeat for grouped heads."""
    def attend(q, cache_k, cache_v, pos):
        k = cache_k[:, :pos + 1].reshape(2, -1, 1, 4)         # (batch, pos?, kv heads, head dim)
        v = cache_v[:, :pos + 1].reshape(2, -1, 1, 4)
        k, v = np.repeat(k, 2, axis=2), np.repeat(v, 2, axis=2)   # two query heads per kv head
        k, v = k.transpose(0, 2, 1, 3), np.swapaxes(v, 1, 2)    # (batch, heads, pos?, head dim)
        scores = np.einsum("bhd,bhpd->bhp", q, k) / 2.0
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        return np.einsum("bhp,bhpd->bhd", weights, v)
    rng = np.random.default_rng(0)
    q, cache_k, cache_v = rng.normal(size=(2, 2, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 4))
    compiled = xlac.compile(attend)
    for pos in (0, 3, 6):
        np.testing.assert_allclose(np.asarray(compiled(q, cache_k, cache_v, np.int64(pos))),
                                   attend(q, cache_k, cache_v, pos), rtol=1e-13)


def test_batched_matmul_over_a_growing_cache_and_square_blocks_as_numpy():
    def attend(q, cache_k, cache_v, pos):
        k = np.repeat(cache_k[:, :pos + 1].reshape(2, -1, 1, 4), 2, axis=2).transpose(0, 2, 1, 3)
        v = np.swapaxes(np.repeat(cache_v[:, :pos + 1].reshape(2, -1, 1, 4), 2, axis=2), 1, 2)
        scores = q[:, :, None, :] @ np.swapaxes(k, -1, -2) / 2.0        # (batch, heads, 1, pos?)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (weights / weights.sum(axis=-1, keepdims=True) @ v)[:, :, 0]

    def blocks(x, i):
        products = x[:i, :i] @ x[:i, :i], x[:, :i] @ x[:i], x[0, :i] @ x[:i], np.stack([x, x])[:, :i] @ x[:, :i]
        return tuple(r for p in products for r in (p.sum(), (p * p[..., :1]).sum()))
    rng = np.random.default_rng(1)
    q, cache_k, cache_v = rng.normal(size=(2, 2, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 4))
    compiled_attend, compiled_blocks = xlac.compile(attend), xlac.compile(blocks)
    x = rng.normal(size=(4, 4))
    for pos in (0, 3, 6):
        np.testing.assert_allclose(np.asarray(compiled_attend(q, cache_k, cache_v, np.int64(pos))),
                                   attend(q, cache_k, cache_v, pos), rtol=1e-13)
    for i in (0, 2, 4):
        np.testing.assert_allclose([float(v) for v in compiled_blocks(x, np.int64(i))], blocks(x, i), rtol=1e-13,
                                   atol=1e-14)


def test_in_place_operators_write_through_views_of_a_slice_as_numpy():
    def f(x, i):
        t = x[i:].T          # transpose, reshape and flip of a slice are views of its array; concatenate copies
        t += 1.0
        r = x[:i].reshape(-1, 2, 2)
        r *= 2.0
        flipped = np.flip(np.expand_dims(x[i:], 0), 1)
        flipped -= 0.5
        c = np.concatenate([x[:i], x[:i]])
        c += 100.0
        return x, c.sum()
    compiled = xlac.compile(f)
    for i in (0, 1, 3):
        for got, expected in zip(compiled(X.copy(), np.int64(i)), f(X.copy(), i)):
            np.testing.assert_array_equal(np.asarray(got), expected)


def reshapes_of_slices_read_after_writes(x, i, j):
    rows, cols = x[i:j].reshape(-1), x[:, i:j].reshape(-1)     # NumPy: rows a view; cols a view only where
    block = np.ravel(x[1:3, i:j])                               # j - i is 0, 1 or 4 (else a copy)
    x[2] = -1.0
    x[:, 1] = 7.0
    return rows.sum(), cols.sum(), block.sum(), x


compiled_reshapes_of_slices = xlac.compile(reshapes_of_slices_read_after_writes)


@settings(max_examples=20, deadline=None)
@given(bounds, bounds)
def test_a_reshape_of_a_slice_is_a_view_or_a_copy_as_numpys(i, j):
    """Where NumPy's reshape of ``x[:, i:j]`` views or copies depends on ``j - i``, known only when the
    program runs: a read after a write into ``x`` sees the write exactly where NumPy's does."""
    expected = reshapes_of_slices_read_after_writes(X.copy(), i, j)
    got = compiled_reshapes_of_slices(X.copy(), np.int64(i), np.int64(j))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)


def test_a_write_into_a_reshape_numpy_views_or_copies_by_the_length_is_refused():
    def f(x, i):
        flat = x[:, i:].reshape(-1)
        flat += 1.0
    with pytest.raises(xlac.UnsupportedError, match="views or copies depending on a length"):
        xlac.compile(f)(X.copy(), np.int64(1))


def fill(b, x):
    b[...] = x * 2


def add_into(b, x):
    b += x


def new_values_of_the_shape(x, m, i, j):
    v, w = x[m], x[i:j]
    b = np.zeros_like(v)
    fill(b, v)                                   # a helper writes the caller's new value
    c = np.full(v.shape, 2.0)
    add_into(c, v)
    d = np.ones(w.shape, w.dtype)
    d[:] = w - 1.0
    e = np.empty_like(w) * 0 + np.full_like(w, 3, dtype=np.int32)
    f = np.zeros(w.shape)
    f -= w.copy()
    b[1:-1, 1:] = v[2:, :3] - v[:-2, 1:]         # a region of it: slices counted among its elements
    return (b.sum(axis=0), c.sum(), d.sum(axis=1).max(initial=-9.0), e.sum(), np.full_like(w, 3, dtype=np.int32).sum(), f.min(initial=0.0),
            np.float64(v.shape[0]), np.float64(w.shape[0] * w.shape[1]), np.float64(len(v) + len(w)), x)


compiled_new_values_of_the_shape = xlac.compile(new_values_of_the_shape)


@settings(max_examples=15, deadline=None)
@given(masks, bounds, bounds)
def test_new_values_of_a_dynamic_values_shape_and_its_length_as_numpy(m, i, j):
    assert_as_numpy(compiled_new_values_of_the_shape, new_values_of_the_shape, X.copy(), m, np.int64(i),
                    np.int64(j))


def test_a_selection_by_a_mask_is_a_copy_and_a_copy_of_a_slice_is_one():
    def f(x, m, i):
        v, w = x[m], x[i:]
        c, d = w.copy(), np.array(w)
        x[...] = -1.0                            # NumPy: v, c and d keep their values; w sees the write
        return v.sum(), c.sum(), d.sum(), w.sum()
    for i in (0, 2):
        m = np.array([1, 0, 1, 1, 0, 0], bool)
        for got, expected in zip(xlac.compile(f)(X.copy(), m, np.int64(i)), f(X.copy(), m, i), strict=True):
            assert float(got) == expected


def test_what_needs_the_length_as_an_int_says_so_at_its_line():
    def listed(x, m):
        return np.float64(len(list(x[m])))
    with pytest.raises(xlac.TracerConversionError, match="cannot take the elements one by one .*whose length is "
                                                         "known only when the program runs") as info:
        xlac.compile(listed)(X, np.ones(6, bool))
    assert f"test_dynamic_extents_shapes.py:{line_of(listed, 'list(')}" in str(info.value)

    def written(x, m):
        v = np.zeros_like(x[m])
        v[::2] = 1.0
        return v.sum()
    with pytest.raises(xlac.UnsupportedError, match=r"writing v\[slice\(None, None, 2\)\] into a value whose "
                                                    r"length .* slices of step 1") as info:
        xlac.compile(written)(X, np.ones(6, bool))
    assert f"test_dynamic_extents_shapes.py:{line_of(written, 'v[::2]')}" in str(info.value)

    def broadcast(x, m):
        return np.broadcast_to(x, x[m].shape).sum()
    with pytest.raises(xlac.UnsupportedError, match="broadcast_to of the shape of a value whose length is known"):
        xlac.compile(broadcast)(X, np.ones(6, bool))


def test_a_reshape_that_would_split_the_dynamic_axis_fails_and_a_given_length_is_checked():
    def splits(x, m):
        return x[m].reshape(2, -1).sum()
    with pytest.raises(xlac.TracerConversionError, match="reshape into .*split an axis whose length is known") as info:
        xlac.compile(splits)(X, np.ones(6, bool))
    assert f"test_dynamic_extents_shapes.py:{line_of(splits, 'reshape')}" in str(info.value)

    def given_length(x, m):
        return x[m].reshape(6, 2, 2).sum()             # the length the data has: checked after the call
    f = xlac.compile(given_length)
    assert float(f(X, np.ones(6, bool))) == given_length(X, np.ones(6, bool))
    with pytest.raises(ValueError, match="cannot reshape an axis of 3 elements into one of length 6") as info:
        f(X, np.array([1, 0, 1, 1, 0, 0], bool))
    assert f"test_dynamic_extents_shapes.py:{line_of(given_length, 'reshape')}" in str(info.value)
    with pytest.raises(ValueError, match="give the length of its dynamic axis as -1"):
        xlac.compile(lambda x, m: x[m].reshape(3, 2, 2).sum())(X, np.ones(6, bool))


def test_concatenating_operands_of_different_positions_along_another_axis_is_refused():
    def f(x, m, i):
        return np.concatenate([x[m], x[i:]], axis=1).sum()
    with pytest.raises(xlac.TracerConversionError, match="along axis 0 the operands hold different positions"):
        xlac.compile(f)(X, np.ones(6, bool), np.int64(1))
    with pytest.raises(xlac.TracerConversionError, match="squeeze along an axis"):
        xlac.compile(lambda x, i: np.squeeze(x[i:], 0).sum())(X[:1], np.int64(0))


def test_gradients_through_flip_reshape_concatenate_and_repeat_match_jax(x64):
    weights = np.arange(1.0, 97.0).reshape(24, 4) / 50.0

    def f(x, i, j):
        v = x[i:j]
        out = np.zeros((24, 4))
        n = j - i
        out[:3 * n] = np.concatenate([np.flip(v, 0), np.sin(v.reshape(-1, 2, 2)).reshape(-1, 4),
                                      np.repeat(v, 1, axis=0) ** 2])
        return (out * weights).sum() + np.swapaxes(v, 0, 1).max(axis=1).sum()

    def by_hand(x, i, j):
        v = x[i:j]
        joined = jnp.concatenate([jnp.flip(v, 0), jnp.sin(v), v ** 2])
        return (joined * weights[:joined.shape[0]]).sum() + v.max(axis=0).sum()
    x = np.cos(np.arange(24.0)).reshape(6, 4)
    for i, j in ((1, 4), (0, 6), (2, 3)):
        got = xlac.grad(f)(x, np.int64(i), np.int64(j))
        np.testing.assert_allclose(np.asarray(got), np.asarray(jax.grad(by_hand)(jnp.asarray(x), i, j)), rtol=1e-13)


def test_gradient_of_attention_over_a_growing_cache_matches_jax(x64):
    def attend(q, cache_k, pos):
        k = np.swapaxes(cache_k[:, :pos + 1], -1, -2)                   # (batch, head dim, pos?)
        scores = q[:, None, :] @ k                                       # (batch, 1, pos?)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (weights / weights.sum(axis=-1, keepdims=True) @ cache_k[:, :pos + 1]).sum()

    def by_hand(q, cache_k, pos):
        scores = jnp.einsum("bd,bpd->bp", q, cache_k[:, :pos + 1])
        weights = jax.nn.softmax(scores, axis=-1)
        return jnp.einsum("bp,bpd->bd", weights, cache_k[:, :pos + 1]).sum()
    rng = np.random.default_rng(2)
    q, cache_k = rng.normal(size=(2, 4)), rng.normal(size=(2, 7, 4))
    for pos in (0, 4):
        got = xlac.grad(attend, argnums=(0, 1))(q, cache_k, np.int64(pos))
        expected = jax.grad(by_hand, argnums=(0, 1))(jnp.asarray(q), jnp.asarray(cache_k), pos)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-14)



def ravelled_with_an_axis_of_at_most_one_element(x, i, m):
    a = x[:, i::2]                     # (3, n?) with n? at most 1 (x has 2 columns)
    b = (a * 2).ravel()
    c = x[m][:, :1].reshape(-1)
    return b.sum(), c.sum(), np.float64(b.shape[0]), a.ravel().max(initial=-1.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(-4, 3), st.lists(st.booleans(), min_size=3, max_size=3).map(np.array))
def test_ravel_merges_a_dynamic_axis_of_at_most_one_element_as_numpy(i, m):
    """A dynamic axis whose data has one position (0 or 1 elements) merged by ``ravel``/``reshape(-1)``
    (fuzz ``--loops --seed 37``: refused as a split before)."""
    x = np.arange(6.0).reshape(3, 2)
    expected = ravelled_with_an_axis_of_at_most_one_element(x.copy(), i, m)
    got = _ravelled(x.copy(), np.int64(i), m)
    for g, e in zip(got, expected, strict=True):
        assert float(g) == e


_ravelled = xlac.compile(ravelled_with_an_axis_of_at_most_one_element)
