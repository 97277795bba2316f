"""Indices whose number depends on the data (xlac/numpy/dynamic_extent_indices.py): np.nonzero, one-argument
np.where, np.argwhere and np.flatnonzero inside a compiled function, indexing and writing with them, and reading
a dynamic value's elements (v[0], v[-1], v[1:], v[::-1], v[v > 0]), against NumPy on random masks; their
gradients against jax.grad of the same computation masked by hand."""
import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.numpy as xnp


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def outcome(run):
    """``run()``'s results as NumPy arrays, or its error's type and first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)       # the mean of nothing is nan, as in xlac
            result = run()
    except (IndexError, ValueError) as error:
        return type(error), str(error).splitlines()[0]
    return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]


def assert_as_numpy(f, *args, compiled=None):
    """``f`` compiled (or ``compiled``) gives NumPy's values and dtypes, or NumPy's error: its type and
    message (for a broadcast error, whose message names shapes known only after the call, its type; for an
    index out of bounds that is itself traced, the index: the size is known only after the call)."""
    expected = outcome(lambda: f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
    got = outcome(lambda: (compiled or xlac.compile(f))(*[a.copy() if isinstance(a, np.ndarray) else a
                                                          for a in args]))
    if isinstance(expected, tuple):
        assert isinstance(got, tuple), got
        assert got[0] is expected[0] and (got[1] == expected[1] or "could not be broadcast" in got[1] and
                                          "could not be broadcast" in expected[1] or
                                          got[1].split(", whose length")[0] == expected[1].split(" with size")[0]), \
            (got, expected)
        return
    assert not isinstance(got, tuple), got
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, equal_nan=True)


# Masks of one shape each, so that each compiled function compiles once and the examples vary the data.
masks_1d = st.lists(st.booleans(), min_size=7, max_size=7).map(np.array)
masks_2d = st.lists(st.booleans(), min_size=12, max_size=12).map(lambda bits: np.array(bits).reshape(3, 4))


# ---------------------------------------------------------------- the reproducers of issue 31


def test_the_issue_31_reproducers_compile_and_match_numpy():
    def selections(x, m):
        rows = np.nonzero(m)[0]
        v = x[m]
        return (x[np.nonzero(m)].sum(), x[np.where(m)].mean(), np.argwhere(m).sum(), x[np.flatnonzero(m)].max(),
                v[0], v[-1], np.linalg.norm(x.reshape(-1, 2)[m[::2]], axis=1).sum(), rows.sum())
    x, m = np.linspace(-1.0, 2.0, 8), np.array([0, 1, 1, 0, 1, 0, 0, 1], bool)
    assert_as_numpy(selections, x, m)

    def writes(x, m):
        out = np.zeros_like(x)
        out[np.nonzero(m)] = x[m] * 2
        idx = np.flatnonzero(m)
        x[idx] = 0
        return out, x
    assert_as_numpy(writes, x, m)


def zero_dimensional_mask(a0, b):
    picked = a0[a0.real > 0]                    # NumPy: a 1-d result of 0 or 1 elements
    rows = b[a0 > 0]                            # of a 1-d array: (0 or 1, 3)
    a0[a0 > 1] = 7.0
    return picked.sum(), picked.mean(), (picked * 2).max(initial=-5.0), rows.sum(axis=0), np.float64(len(picked)), a0


compiled_zero_dimensional_mask = xlac.compile(zero_dimensional_mask)


@settings(max_examples=12, deadline=None)
@given(st.floats(-2.0, 2.0, allow_nan=False, allow_subnormal=False),     # XLA:CPU flushes subnormals to zero
       st.sampled_from([1.0, -1.0]))
def test_a_zero_dimensional_mask_selects_at_most_one_element_as_numpy(s, sign):
    b = np.array([sign, 2.0, 3.0])
    assert_as_numpy(zero_dimensional_mask, np.array(s), b, compiled=compiled_zero_dimensional_mask)


def test_reading_the_element_of_an_empty_zero_dimensional_selection_raises_numpys_index_error_at_its_line():
    def first(a0):
        return a0[a0.real > 0][0]
    compiled = xlac.compile(first)
    assert float(compiled(np.array(2.5))) == first(np.array(2.5))
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0"):
        first(np.array(-1.0))
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0") as info:
        compiled(np.array(-1.0))
    assert f"{__file__}:{line_of(first, 'a0[a0.real > 0][0]')}" in str(info.value)


# ---------------------------------------------------------------- nonzero and its family


def nonzero_family(x, m):
    rows, cols = np.nonzero(m)
    at = np.argwhere(m)
    flat = np.flatnonzero(m)
    return (rows.sum(), cols.sum(), (rows * 10 + cols).prod(), np.any(rows > 1), np.all(cols < 2),
            at.sum(axis=0), at.max(axis=0, initial=-1), flat.mean(), x[rows, cols].sum(),
            x[np.nonzero(m)].min(initial=100.0), x[rows].sum(axis=0), x[:, cols].sum(axis=0).sum(),
            x[0, cols].sum(), x.ravel()[flat].sum(), x[tuple(at.T)].sum(), np.where(m)[1].sum(),
            (x[np.where(m)] - x[m]).sum())


compiled_nonzero_family = xlac.compile(nonzero_family)


@settings(max_examples=20, deadline=None)
@given(masks_2d)
def test_nonzero_argwhere_flatnonzero_reduce_and_index_as_numpy(m):
    x = np.arange(m.size, dtype=np.float64).reshape(m.shape) - 3.0
    assert_as_numpy(nonzero_family, x, m, compiled=compiled_nonzero_family)


def reductions_of_a_gather(x, m):
    picked = x[np.nonzero(m)] * 2.0 - 1.0
    return (picked.sum(), picked.mean(), picked.prod(), picked.any(), picked.all(), picked.std(), picked.max(),
            np.min(picked), picked.argmax(), np.argmin(picked))


compiled_reductions_of_a_gather = xlac.compile(reductions_of_a_gather)


@settings(max_examples=15, deadline=None)
@given(masks_1d.filter(np.any))
def test_reductions_of_a_gather_by_nonzero_match_numpy(m):
    assert_as_numpy(reductions_of_a_gather, np.linspace(0.1, 1.0, 7) ** 2, m,
                    compiled=compiled_reductions_of_a_gather)


def test_reductions_of_an_empty_gather_give_numpys_values_and_errors():
    def with_identity(x, m):
        picked = x[np.flatnonzero(m)]
        return picked.sum(), picked.mean(), picked.prod(), picked.any(), picked.all(), picked.std()
    x, nothing = np.linspace(0.1, 1.0, 7), np.zeros(7, bool)
    assert_as_numpy(with_identity, x, nothing)
    for reduction in ("max", "min", "argmax", "argmin"):
        assert_as_numpy(lambda x, m: getattr(x[np.nonzero(m)], reduction)(), x, nothing)


def test_nonzero_of_a_selection_counts_among_its_elements():
    def f(x, i):
        return np.nonzero(x[i:] > 1.0)[0].sum(), np.flatnonzero(x[x > 0] > 2.0).sum()
    x = np.array([3.0, -1.0, 2.5, 0.5, 4.0, -2.0])
    for i in range(-7, 7):
        assert_as_numpy(f, x, np.int64(i))


def test_nonzero_errors_as_numpy():
    def of_a_scalar(x):
        return np.nonzero(x.sum())
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed") as info:
        xlac.compile(of_a_scalar)(np.ones(3))
    assert f"{__name__.split('.')[-1]}.py:{line_of(of_a_scalar, 'np.nonzero')}" in str(info.value)
    with pytest.raises(ValueError, match="either both or neither of x and y should be given"):
        xlac.compile(lambda x: np.where(x > 0, x))(np.ones(3))
    mask = np.array([True, False, True])                                  # returned: NumPy's array
    np.testing.assert_array_equal(xlac.compile(lambda m: np.nonzero(m)[0])(mask), np.nonzero(mask)[0])
    with pytest.raises(xlac.UnsupportedError, match="np.nonzero of a value whose length .* with size="):
        xlac.compile(lambda x: xnp.nonzero(x[x > 0], size=2)[0].sum())(np.ones(3))
    with pytest.raises(IndexError, match="arrays used as indices must be of integer"):
        xlac.compile(lambda x: x[x[x > 0]].sum())(np.ones(3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        xlac.compile(lambda x, m: x[np.flatnonzero(m) + 1].sum())(np.ones(3), np.array([0, 1, 1], bool))
    assert float(xlac.compile(lambda x, m: x[np.flatnonzero(m) + 1].sum())(np.arange(3.0), np.array([1, 1, 0], bool))) \
        == 3.0


# ---------------------------------------------------------------- writes


def write_through_selected_indices(x, indices, m, values):
    idx = indices[m]
    x[idx] = values[m]             # duplicates: the last wins, as in NumPy
    y = np.zeros(6)
    y[idx] = 7.0
    y[idx] += 1.0
    return x, y


compiled_write_through_selected_indices = xlac.compile(write_through_selected_indices)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(-8, 8), min_size=7, max_size=7), masks_1d)
def test_writes_through_a_selected_index_match_numpy_and_check_only_the_selected(indices, m):
    assert_as_numpy(write_through_selected_indices, np.zeros(6), np.array(indices), m, np.arange(1.0, 8.0),
                    compiled=compiled_write_through_selected_indices)


def writes_through_nonzero(x, m):
    out = np.zeros(m.shape)
    out[np.nonzero(m)] = 5.0
    x[np.nonzero(m)] = x[np.nonzero(m)] * 2 + 1
    rows, cols = np.nonzero(m)
    wide = np.zeros((m.shape[0] + 1, m.shape[1] + 2))
    wide[rows + 1, cols] = x[m]
    wide[rows, cols + 2] += 1.0
    wide[rows[::-1], 0] = np.arange(12.0)[np.flatnonzero(m)]
    return out, x, wide


compiled_writes_through_nonzero = xlac.compile(writes_through_nonzero)


@settings(max_examples=10, deadline=None)
@given(masks_2d)
def test_writes_through_nonzero_match_numpy(m):
    assert_as_numpy(writes_through_nonzero, np.arange(12.0).reshape(3, 4), m, compiled=compiled_writes_through_nonzero)


def accumulate_at_selected(x, m, indices, values):
    np.add.at(x, np.flatnonzero(m), 1.0)
    np.maximum.at(x, indices[m], values[m])        # duplicates accumulate, as np.maximum.at's
    np.multiply.at(x, np.nonzero(m[:6]), 2.0)
    np.minimum.at(x, indices[m], -values[m] / 4.0)
    return x


compiled_accumulate_at_selected = xlac.compile(accumulate_at_selected)


@settings(max_examples=15, deadline=None)
@given(masks_1d, st.lists(st.integers(-8, 7), min_size=7, max_size=7))
def test_ufunc_at_through_selected_indices_accumulates_as_numpy(m, indices):
    assert_as_numpy(accumulate_at_selected, np.arange(6.0), m, np.array(indices), np.linspace(-3.0, 9.0, 7),
                    compiled=compiled_accumulate_at_selected)


def write_one_value_per_position(x, m, v):
    x[np.flatnonzero(m)] = v
    return x


@pytest.mark.parametrize("length", [0, 1, 3, 4])
def test_a_write_of_one_value_per_selected_position_pairs_them_in_order_and_checks_the_count(length):
    f = xlac.compile(write_one_value_per_position)
    for m in (np.array([0, 1, 1, 0, 1, 0, 0], bool), np.zeros(7, bool), np.array([1, 0, 0, 0, 0, 0, 0], bool)):
        assert_as_numpy(write_one_value_per_position, np.zeros(7), m, np.arange(1.0, length + 1), compiled=f)


# ---------------------------------------------------------------- a dynamic value's elements


def elements_of_a_selection(x, k, start, stop):
    v = x[x > -1.0]
    return v[k], v[start:stop].sum(), (v[1:] - v[:-1]).sum(), v[::-1][k], v[v > 0].sum(), v[-1] * v[0]


compiled_elements_of_a_selection = xlac.compile(elements_of_a_selection)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.0]), min_size=6, max_size=6), st.integers(-4, 4),
       st.integers(-8, 8), st.integers(-8, 8))
def test_elements_and_slices_of_a_selection_read_as_numpy(values, k, start, stop):
    assert_as_numpy(elements_of_a_selection, np.array(values), np.int64(k), np.int64(start), np.int64(stop),
                    compiled=compiled_elements_of_a_selection)


def test_an_empty_selection_indexed_raises_index_error_after_the_call_with_the_line():
    def first_positive(x):
        positives = x[x > 0]
        return positives[0] + 1.0
    f = xlac.compile(first_positive)
    assert float(f(np.array([-1.0, 2.0, 3.0]))) == 3.0
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0") as info:
        f(np.array([-1.0, -2.0, 0.0]))
    assert f"test_dynamic_extents_indices.py:{line_of(first_positive, 'positives[0]')}" in str(info.value)
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        xlac.compile(lambda x: x[x > 0][-3])(np.array([1.0, 2.0, -1.0]))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0, whose length is known only"):
        xlac.compile(lambda x, k: x[x > 0][k])(np.array([1.0, 2.0, -1.0]), 5)


def test_rows_of_a_selection_and_elements_of_a_two_dimensional_one():
    def f(a, m, n):
        rows = a[m]
        block = a[:n]
        return rows[0], rows[-1, 1:].sum(), block[-1], block[:, 2].sum(), block[1:, ::-1][0]
    a, m = np.arange(20.0).reshape(5, 4), np.array([0, 1, 0, 1, 1], bool)
    compiled = xlac.compile(f)
    for n in (3, 1, 0):
        assert_as_numpy(f, a, m, np.int64(n), compiled=compiled)


# ---------------------------------------------------------------- norms along an axis


@pytest.mark.parametrize("order", [None, 2, 1, np.inf, -np.inf, 0, 3])
def test_norms_of_a_selection_along_an_axis_match_numpy(order):
    def f(x, m):
        rows = x[m]
        return (np.linalg.norm(rows, ord=order, axis=1).sum(), np.linalg.norm(rows, ord=order, axis=0),
                np.linalg.norm(rows, ord=order, axis=-1, keepdims=True).sum(axis=0), np.linalg.norm(rows))
    x = np.random.default_rng(0).normal(size=(7, 3))
    compiled = xlac.compile(f)
    for m in (np.array([0, 1, 1, 0, 1, 0, 1], bool), np.zeros(7, bool)):
        assert_as_numpy(f, x, m, compiled=compiled)


# ---------------------------------------------------------------- gradients


def test_gradients_through_a_gather_by_nonzero_and_a_write_through_it_match_jax(x64):
    m = np.array([1, 0, 1, 1, 0, 1, 0], bool)

    def f(x, m):
        picked = x[np.nonzero(m)]
        out = np.zeros_like(x)
        out[np.flatnonzero(m)] = np.sin(picked)
        return (picked * picked[-1]).sum() + (out * x).sum() + np.linalg.norm(x.reshape(-1, 1)[m], axis=1).sum()

    def by_hand(x):
        last = x[jnp.max(jnp.where(m, jnp.arange(m.size), 0))]
        out = jnp.where(m, jnp.sin(x), 0.0)
        return jnp.where(m, x * last, 0.0).sum() + (out * x).sum() + jnp.where(m, jnp.abs(x), 0.0).sum()
    x = np.linspace(-1.0, 1.5, m.size)
    np.testing.assert_allclose(float(xlac.compile(f)(x, m)), float(by_hand(jnp.asarray(x))), rtol=1e-13)
    got = xlac.grad(f)(x, m)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.grad(by_hand)(jnp.asarray(x))), rtol=1e-13)


def test_gradients_and_vmap_of_a_selections_elements_match_jax(x64):
    m = np.array([1, 0, 1, 1, 0, 1, 0], bool)

    def f(x, m):
        v = x[m]
        return (np.diff(v) ** 2).sum() + v[-1] * v[0] + np.roll(v, 1)[0] * 3.0 + (v[1:] * np.flip(v)[1:]).sum()

    def by_hand(x):
        v = x[np.flatnonzero(m)]
        return (jnp.diff(v) ** 2).sum() + v[-1] * v[0] + jnp.roll(v, 1)[0] * 3.0 + (v[1:] * jnp.flip(v)[1:]).sum()
    x = np.linspace(-1.0, 2.0, 7)
    np.testing.assert_allclose(np.asarray(xlac.grad(f)(x, m)), np.asarray(jax.grad(by_hand)(jnp.asarray(x))),
                               rtol=1e-13)
    batched = xlac.vmap(f, in_axes=(0, None))(np.stack([x, 2 * x]), m)
    np.testing.assert_allclose(np.asarray(batched), [f(x, m), f(2 * x, m)], rtol=1e-13)



def take_selected(a, shift):
    flat = np.take(a, np.flatnonzero(a > 0) + shift).sum()
    along = np.take(a, np.flatnonzero(a[0] > 0), axis=-1)
    return flat, along.sum(axis=1)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=6, max_size=6), st.sampled_from([0, 0, 1, 6]))
def test_take_with_selected_indices_is_numpys(values, shift):
    a = np.array(values, np.int32).reshape(2, 3)
    assert_as_numpy(take_selected, a, shift, compiled=xlac.compile(take_selected))


def test_eager_indices_from_where_index_numpy_arrays_as_arrays():
    a = np.array([[-3, 1, -2]], np.int8)
    got = a[xnp.where(a > 0)]          # NumPy takes an xlac.Array of shape (1,) as an array, not an integer
    np.testing.assert_array_equal(got, a[np.where(a > 0)])
    assert got.shape == (1,)
    with pytest.raises(TypeError, match="scalar index"):
        [0, 1][xnp.asarray(np.array([1]))]


def sizes_of_selections(a, k):
    picked = a[a > 0]
    last_positive = k < picked.size and picked.ravel()[k] > 1     # Python reads picked[k] only when it exists
    return picked.size, a[1:][a[1:] > 1].size * 2.5, last_positive, np.arange(4)[: picked.size].sum()


@settings(max_examples=8, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=6, max_size=6),     # XLA:CPU flushes them
       st.integers(0, 7))
def test_the_size_of_a_selection_is_its_count_as_numpy(values, k):
    a = np.array(values)
    assert_as_numpy(sizes_of_selections, a, k, compiled=xlac.compile(sizes_of_selections))


def doubled_selections(a1):
    a1[np.where(a1 > 0)] *= 2                 # a Python int is weak: the product stays uint8, as NumPy's
    return a1, (a1[a1 > 1] * 2).max(), (a1[np.nonzero(a1 > 1)] + 1).sum()


def test_python_scalars_stay_weak_with_dynamic_values():
    a = np.array([[1, 0, 3], [200, 7, 0]], np.uint8)
    assert_as_numpy(doubled_selections, a)
    got = xlac.compile(doubled_selections)(a.copy())
    assert [np.asarray(g).dtype for g in got[1:]] == [np.uint8, np.uint64]


def elements_written(x, m, i, k):
    s = x[m]                   # a copy: (n?, 4)
    s[k] = 1.0
    s[-1, 2] += 9.0
    w = x[:, i:]               # a view: (5, n?)
    w[2] = x[0, i:]
    w[k, 0] += 0.5
    w[1, -1] = -3.0
    return s.sum(), x


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=5, max_size=5).map(np.array), st.integers(-5, 5), st.integers(-5, 4))
def test_elements_written_at_static_and_traced_ranks_match_numpy(m, i, k):
    """``v[k] = ...`` and ``v[k] += ...`` of a dynamic value, ``k`` traced or not, negative too: the element of
    that rank along a dynamic axis (NumPy's IndexError where there is none, after the call), the row at
    ``k`` along a static one."""
    assert_as_numpy(elements_written, np.arange(20.0).reshape(5, 4), m, np.int64(i), np.int64(k),
                    compiled=_elements_written)


_elements_written = xlac.compile(elements_written)


def test_an_element_written_out_of_bounds_raises_index_error_at_its_line():
    def f(x, i):
        v = x[i:]
        v[2] = 0.0
        return v
    with pytest.raises(IndexError, match="index 2 is out of bounds") as info:
        xlac.compile(f)(np.arange(4.0), np.int64(3))
    assert f"test_dynamic_extents_indices.py:{line_of(f, 'v[2]')}" in str(info.value)


def taken_from_a_dynamic_value(x, i, m, k):
    u = x[:, i::2] * 2                                    # (4, n?): a new value
    v = x[m]                                              # (n?, 3): a copy
    return (np.take(u, np.flatnonzero(u > 3)).sum(), np.take(v, k), np.take(v.ravel(), np.flatnonzero(v > 4)),
            np.take(x[i:, 0], -1))


@settings(max_examples=25, deadline=None)
@given(st.integers(-4, 3), st.lists(st.booleans(), min_size=4, max_size=4).map(np.array), st.integers(-7, 7))
def test_take_from_a_dynamic_value_counts_among_its_elements_as_numpy(i, m, k):
    """``np.take(v, idx)`` of a dynamic value (fuzz ``--loops --seed 37``: refused before): its elements in
    NumPy's order taken at ``idx``, NumPy's IndexError where one is outside them."""
    assert_as_numpy(taken_from_a_dynamic_value, np.arange(12.0).reshape(4, 3), np.int64(i), m, np.int64(k),
                    compiled=_taken_from_a_dynamic_value)


_taken_from_a_dynamic_value = xlac.compile(taken_from_a_dynamic_value)
