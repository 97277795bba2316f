"""Views and copies as NumPy makes them (issue 13, items 1, 2, 6, 7): element reads are scalar copies,
transforms keep a function's writes inside, ``.real``/``.imag`` are views, and functions that return a
view or the input itself in NumPy do so in compiled code. NumPy is the oracle for values, dtypes and the
arguments after the call; JAX for the derivatives."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp



def _check_like_numpy(fn, *args):
    """fn compiled and in NumPy on copies of args: equal results (values and dtypes) and arguments."""
    ours = [np.array(a, copy=True) for a in args]
    theirs = [np.array(a, copy=True) for a in args]
    got = xlac.compile(fn)(*ours)
    want = fn(*theirs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


# ---------------------------------------------------------------- item 1: element reads are scalars


def _swap(x):
    t = x[0]
    x[0] = x[1]
    x[1] = t
    return x


def _accumulate(x):
    acc = x[0]
    acc += x[1]
    return acc


def _old_value(x):
    old = x[0, 1]
    x[0, 1] = 100.0
    return old


def _zero_d_read(x):
    old = x[()]
    x[...] = 5.0
    return old


def _flip_zero_d(x):
    old = np.flip(x)
    x[...] = 5.0
    return old


def _ellipsis_is_a_view(x):
    view = x[0, ...]
    x[0] = 7.0
    return view


def _slice_is_a_view(x):
    view = x[0:1]
    x[0] = 7.0
    return view


@pytest.mark.parametrize("fn, arg", [
    (_swap, np.array([1.0, 2.0, 3.0])),
    (_accumulate, np.array([1.0, 2.0, 3.0])),
    (_accumulate, np.array([1, 2, 3], np.int32)),
    (_old_value, np.ones((2, 2), np.float32)),
    (_zero_d_read, np.array(1.0)),
    (_flip_zero_d, np.array(1.0)),
    (_ellipsis_is_a_view, np.array([1.0, 2.0])),
    (_slice_is_a_view, np.array([1.0, 2.0])),
])
def test_element_reads_are_copies_and_other_indexing_views(fn, arg):
    _check_like_numpy(fn, arg)


def test_traced_integer_index_reads_a_copy():
    def fn(x, i):
        old = x[i]
        x[i] = -1.0
        return old
    x = np.array([1.0, 2.0, 3.0])
    out = xlac.compile(fn)(x, np.int64(1))
    assert float(out) == 2.0 and x.tolist() == [1.0, -1.0, 3.0]


def test_element_read_does_not_support_item_assignment():
    def fn(x):
        t = x[0]
        t[...] = 1.0
        return x
    with pytest.raises(TypeError, match="(?s)does not support item assignment.*test_view_semantics.py"):
        xlac.compile(fn)(np.zeros(2))
    with pytest.raises(TypeError):             # NumPy's own error for the same code
        fn(np.zeros(2))


def test_numpy_scalar_argument_is_indexed_into_new_arrays():
    def fn(s):
        y = s[...]
        y += 1
        z = s.reshape(1)
        z += 2
        return y, z, s[()]
    _check_like_numpy(fn, np.float32(3))
    got = xlac.compile(fn)(np.float32(3))
    want = fn(np.float32(3))
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.asarray(g).tolist() == np.asarray(w).tolist()


_entry = st.one_of(st.integers(-3, 2), st.just(slice(None)), st.just(Ellipsis), st.just(slice(0, 2)))


@settings(max_examples=13, deadline=None)
@given(index=st.lists(_entry, min_size=0, max_size=3).filter(lambda ix: ix.count(Ellipsis) <= 1))
def test_random_index_is_a_view_or_a_scalar_as_in_numpy(index):
    """Read x[index], write the whole base, and compare what the earlier read holds now."""
    index = tuple(index)

    def fn(x):
        read = x[index]
        x[...] = -x - 1.0
        return read + 0.0                       # a new array holding what `read` holds now

    x = np.arange(27.0).reshape(3, 3, 3)
    try:
        want = fn(x.copy())
    except IndexError:
        return
    got = xlac.compile(fn)(x.copy())
    np.testing.assert_array_equal(np.asarray(got), want)


# ---------------------------------------------------------------- item 2: transforms keep writes inside


def _square_then_zero(x):
    y = x ** 2
    x[...] = 0.0
    return y


def _sum_square_then_zero(x):
    y = (x ** 2).sum()
    x[...] = 0.0
    return y


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", ["vjp", "jacfwd", "jacrev", "hessian", "vmap", "jvp"])
def test_transforms_leave_the_callers_array_unchanged(name, compiled):
    x = np.array([1.0, 2.0, 3.0])
    jx = jax.numpy.asarray(x)
    pure, pure_sum = (lambda v: v ** 2), (lambda v: (v ** 2).sum())
    cases = {
        "vjp": (lambda v: xlac.vjp(_square_then_zero, v)[1](np.ones(3))[0],
                jax.vjp(pure, jx)[1](jax.numpy.ones(3))[0]),
        "jacfwd": (lambda v: xlac.jacfwd(_square_then_zero)(v), jax.jacfwd(pure)(jx)),
        "jacrev": (lambda v: xlac.jacrev(_square_then_zero)(v), jax.jacrev(pure)(jx)),
        "hessian": (lambda v: xlac.hessian(_sum_square_then_zero)(v), jax.hessian(pure_sum)(jx)),
        "vmap": (lambda v: xlac.vmap(_square_then_zero)(v), jax.vmap(pure)(jx)),
        "jvp": (lambda v: xlac.jvp(_square_then_zero, (v,), (np.ones(3),))[1],
                jax.jvp(pure, (jx,), (jax.numpy.ones(3),))[1]),
    }
    run, want = cases[name]
    got = xlac.compile(run)(x) if compiled else run(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_vjp_output_is_the_value_before_the_write():
    x = np.array([1.0, 2.0, 3.0])
    out, _ = xlac.vjp(_square_then_zero, x)
    assert np.asarray(out).tolist() == [1.0, 4.0, 9.0] and x.tolist() == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------- item 6: .real and .imag


def _write_parts(x):
    x.real[0] = 5.0
    x.imag[1] = 7.0
    return x


def _augment_parts(x):
    r = x.real
    x.imag *= 2
    x.real = 3
    return r, x.imag.copy()


def _ravel_of_real_is_a_copy(x):
    flat = x.real.ravel()
    x[...] = 0
    return flat


@pytest.mark.parametrize("fn", [_write_parts, _augment_parts, _ravel_of_real_is_a_copy])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_writes_through_real_and_imag(fn, dtype):
    _check_like_numpy(fn, np.array([1 + 1j, 2 + 2j], dtype))


def test_imag_of_a_real_array_is_read_only():
    def fn(x):
        x.imag[0] = 5.0
        return x
    with pytest.raises(ValueError, match="read-only"):
        fn(np.zeros(2))
    with pytest.raises(ValueError, match="read-only"):
        xlac.compile(fn)(np.zeros(2))
    eager = xlac.asarray(np.zeros(2))
    with pytest.raises(ValueError, match="read-only"):
        eager.imag[0] = 5.0
    with pytest.raises(TypeError, match="imaginary part"):
        eager.imag = 1.0


def test_eager_part_assignment():
    a = xlac.asarray(np.array([1 + 1j, 2 + 2j]))
    b = np.array([1 + 1j, 2 + 2j])
    for x in (a, b):
        x.real = 5
        x.imag += 1
    assert np.asarray(a).dtype == b.dtype and np.asarray(a).tolist() == b.tolist()


# ---------------------------------------------------------------- item 7: views, not copies


def _atleast(x):
    one, two, three = np.atleast_1d(x), np.atleast_2d(x), np.atleast_3d(x)
    x[0] = 9.0
    two[0, 1] = 7.0
    return one, two, three


def _atleast_many(x, s):
    y, z = np.atleast_1d(x, s)
    x[0] = 9.0
    z[0] = 4.0
    return y, z, s


def _real_of_real(x):
    y = np.real(x)
    x[0] = 9.0
    return y


def _einsum_transpose(x):
    y = np.einsum("ab->ba", x)
    x[0, 0] = 9.0
    y[2, 1] = -1.0
    return y, np.einsum("ab->", x), np.einsum("ii", x[:, :2])


def _einsum_diagonal(x):
    y = np.einsum("iij->ji", x)
    x[0, 0, 0] = 9.0
    return y


def _broadcast_same_shape(x, y):
    a, b = np.broadcast_arrays(x, y)
    a[0] = 9.0
    return a, b


def _broadcast(x, y):
    a, b = np.broadcast_arrays(x, y)
    x[0] = 9.0
    return a, b


def _flatten_copies_ravel_views(x):
    flat, rav = x.flatten(), x.ravel()
    x[0, 0] = 9.0
    return flat, rav, x[::2].ravel(), x.T.ravel()


@pytest.mark.parametrize("fn, args", [
    (_atleast, (np.array([1.0, 2.0]),)),
    (_atleast_many, (np.array([1.0, 2.0]), np.array(3.0))),
    (_real_of_real, (np.array([1.0, 2.0], np.float32),)),
    (_einsum_transpose, (np.arange(6.0).reshape(2, 3),)),
    (_einsum_diagonal, (np.arange(12.0).reshape(2, 2, 3),)),
    (_broadcast_same_shape, (np.array([1.0, 2.0]), np.ones(2))),
    (_broadcast, (np.array([1.0, 2.0]), np.ones((2, 1)))),
    (_flatten_copies_ravel_views, (np.arange(6.0).reshape(3, 2),)),
])
def test_views_where_numpy_gives_views(fn, args):
    _check_like_numpy(fn, *args)


def test_broadcast_views_are_read_only():
    """Deviation: NumPy 2 still writes through a broadcast view (with a FutureWarning); xlac raises."""
    def fn(x, y):
        a, _ = np.broadcast_arrays(x, y)
        a[0, 0] = 9.0
        return a
    with pytest.raises(ValueError, match="read-only"):
        xlac.compile(fn)(np.zeros(2), np.zeros((2, 1)))


def test_einsum_diagonal_view_is_read_only():
    """Deviation: NumPy's einsum("ii->i") view can be written; xlac's raises (it is diagonal's view)."""
    def fn(x):
        d = xnp.einsum("ii->i", x)
        d[0] = 1.0
        return d
    with pytest.raises(ValueError, match="read-only"):
        xlac.compile(fn)(np.eye(2))
