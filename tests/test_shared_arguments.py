"""Arguments that share memory (the same array twice, overlapping views, an argument that is also an array
the function reads from outside): the compiled function computes what NumPy computes, writes included."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches
from xlac.shared_arguments import Member, view_chain


def smooth(inp, out):
    out[1:-1] = 0.5 * (inp[:-2] + inp[2:])


def same_as_numpy(f, base, pick, compiled=None):
    """Run ``f`` on the views ``pick`` takes of a copy of ``base`` under NumPy and compiled: the base
    arrays and the results must match."""
    expected_base, got_base = base.copy(), base.copy()
    expected = f(*pick(expected_base))
    got = (compiled or xlac.compile(f))(*pick(got_base))
    assert_matches(got_base, expected_base)
    if expected is not None:
        assert_matches(got, expected)
    return compiled


def test_the_same_array_as_input_and_output_of_a_stencil():
    same_as_numpy(smooth, np.array([1.0, 0.0, 0.0, 5.0, 2.0, 7.0]), lambda a: (a, a))


def test_the_same_array_read_after_a_write_through_the_other_name():
    def step(f, g):
        g[0] = 10.0          # seen by the read through f below
        f[1:] += g[:-1]      # NumPy buffers the overlapping right-hand side
        return f.sum() + g[2]
    same_as_numpy(step, np.arange(5.0), lambda a: (a, a))


def test_written_through_both_names():
    def f(x, y):
        x[0] = 1.0
        y[1] = 2.0
        x *= 3.0
    same_as_numpy(f, np.zeros(3), lambda a: (a, a))


@pytest.mark.parametrize("loops, n", [("roll", 40), ("unroll", 6)])
def test_a_loop_reads_through_one_name_what_it_wrote_through_the_other(loops, n):
    def prefix_sum(x, y):
        for i in range(1, x.shape[0]):
            y[i] = x[i - 1] + y[i]
        return y.sum()
    f = xlac.compile(prefix_sum, loops=loops)
    same_as_numpy(prefix_sum, np.arange(n + 0.0), lambda a: (a, a), compiled=f)
    same_as_numpy(prefix_sum, np.arange(n + 0.0), lambda a: (a[1:], a[:-1]), compiled=f)
    same_as_numpy(prefix_sum, np.arange(n + 0.0), lambda a: (a[:-1], a[1:]), compiled=f)


def test_shifted_views_of_one_array():
    def f(dst, src):
        dst += src
    same_as_numpy(f, np.arange(6.0), lambda a: (a[1:], a[:-1]))
    same_as_numpy(smooth, np.arange(8.0) ** 2, lambda a: (a[1:], a[:-1]))


def test_an_array_and_every_other_element_of_it():
    def f(x, evens):
        evens[:] = -1.0
        return x.copy()
    same_as_numpy(f, np.arange(7.0), lambda a: (a, a[::2]))


def test_a_reversed_view():
    def f(x, y):
        x[:3] = y[:3] * 2
    same_as_numpy(f, np.arange(6.0), lambda a: (a, a[::-1]))


@pytest.mark.parametrize("pick", [
    lambda a: (a, a.T),
    lambda a: (a[1:], a[:-1]),                  # rows
    lambda a: (a[:, 1:], a[:, :-1]),            # columns
    lambda a: (a[1:, 1:], a[:-1, :-1]),
    lambda a: (a[:, ::2], a[::2, :]),
], ids=["transpose", "rows", "columns", "corners", "strided"])
def test_two_dimensional_views(pick):
    def f(x, y):
        x += 2 * y
        return y.sum(axis=0)
    base = np.arange(20.0).reshape(4, 5)
    if pick(base)[0].shape != pick(base)[1].shape:
        def f(x, y):
            x[...] = 0.0
            return y * 1.0
    same_as_numpy(f, base, pick)


@pytest.mark.parametrize("pick", [
    lambda z: (z, z.real),
    lambda z: (z, z.imag),
    lambda z: (z[1:], z[::-1].imag),
    lambda z: (z.reshape(2, 3), z.reshape(2, 3).T.real),
], ids=["real", "imag", "reversed imag", "transposed real"])
def test_the_real_or_imaginary_parts_of_a_complex_argument(pick):
    def f(z, part):
        part[...] = part * 2 + 1
        return z * 1
    same_as_numpy(f, np.arange(6.0) + 1j * np.arange(6.0, 12.0), pick)


def test_a_transposed_argument_reshapes_to_a_copy_as_in_numpy():
    def f(x, y):
        flat = y.reshape(-1)          # y is x.T, not contiguous: NumPy copies, so x keeps its values
        flat[0] = 100.0
        x[0, 1] = -1.0
        return y[1, 0] + flat.sum()
    same_as_numpy(f, np.arange(6.0).reshape(2, 3), lambda a: (a, a.T))


def test_a_row_and_a_column_of_one_matrix():
    def f(row, col):
        row[:] = col + 1.0
    same_as_numpy(f, np.arange(16.0).reshape(4, 4), lambda a: (a[1], a[:, 2]))


def test_a_read_only_broadcast_view_sees_the_write():
    def f(x, b):
        x[1] = 7.0
        return b + 0
    same_as_numpy(f, np.arange(3.0), lambda a: (a, np.broadcast_to(a, (2, 3))))


def test_an_xlac_array_passed_twice_is_donated_once():
    def f(x, y):
        x[0] = 5.0
        return y + 1.0
    a = xlac.asarray(np.arange(3.0))
    result = xlac.compile(f)(a, a)
    assert_matches(a, np.array([5.0, 1.0, 2.0]))
    assert_matches(result, np.array([6.0, 2.0, 3.0]))


def test_an_xlac_array_passed_twice_and_returned_is_that_array():
    def f(x, y):
        y[0] = 5.0
        return x
    a = xlac.asarray(np.arange(3.0))
    assert xlac.compile(f)(a, a) is a
    assert_matches(a, np.array([5.0, 1.0, 2.0]))


def test_repeated_calls_with_one_array_twice_run_the_cached_variant():
    f = xlac.compile(lambda x, y: x.__iadd__(y))
    a = np.ones(3)
    for _ in range(3):
        f(a, a)
    assert_matches(a, np.full(3, 8.0))
    assert f.cache_info().traces == 2          # the program for two arrays, and its variant for one


def test_the_ahead_of_time_executable_refuses_arguments_that_share_memory():
    f = xlac.compile(lambda x, y: x.__iadd__(y))
    a = np.zeros(3)
    compiled = f.lower(a, a).compile()
    with pytest.raises(ValueError, match=r"arguments x, y share memory.*call the xlac.compile'd function"):
        compiled(a, a)


TOTAL = np.zeros(4)
STATE = np.zeros(10)


def test_a_rolled_loop_writes_an_outside_array_that_is_also_the_argument():
    def step(x):
        for i in range(1, 10):
            STATE[i] = STATE[i] + x[i - 1]
        return x.sum()

    def step_numpy(x, state):
        for i in range(1, 10):
            state[i] = state[i] + x[i - 1]
        return x.sum()
    STATE[:] = np.arange(10.0)
    expected = np.arange(10.0)
    expected_sum = step_numpy(expected, expected)
    assert_matches(xlac.compile(step, loops="roll")(STATE), expected_sum)
    assert_matches(STATE, expected)


def test_an_argument_that_is_the_outside_array_the_function_writes():
    @xlac.compile
    def accumulate(x):
        xnp.copyto(TOTAL, x + 1)
        return x * 2

    TOTAL[:] = np.arange(4.0)
    result = accumulate(TOTAL)                       # NumPy: TOTAL becomes 1..4, x is TOTAL
    assert_matches(TOTAL, np.arange(1.0, 5.0))
    assert_matches(result, 2 * np.arange(1.0, 5.0))


def test_an_argument_that_is_a_view_of_an_outside_array_the_function_writes():
    @xlac.compile
    def bump(x):
        xnp.add(TOTAL, 1.0, out=TOTAL)
        return x * 1.0

    TOTAL[:] = np.arange(4.0)
    result = bump(TOTAL[2:])                          # the outside write shows in x, as in NumPy
    assert_matches(TOTAL, np.arange(1.0, 5.0))
    assert_matches(result, np.array([3.0, 4.0]))


def test_the_cache_holds_one_variant_per_pattern_of_sharing():
    f = xlac.compile(smooth)
    a, b = np.arange(6.0) ** 2, np.arange(6.0) ** 2
    same_as_numpy(smooth, a, lambda x: (x, np.zeros(6)), compiled=f)
    same_as_numpy(smooth, b, lambda x: (x, x), compiled=f)
    same_as_numpy(smooth, b, lambda x: (x[1:], x[:-1]), compiled=f)
    assert f.cache_info().traces == f.cache_info().compiles == 4    # a 6 and a 5 without sharing, two variants
    same_as_numpy(smooth, b, lambda x: (x, x), compiled=f)
    same_as_numpy(smooth, a, lambda x: (x, np.zeros(6)), compiled=f)
    assert f.cache_info().compiles == 4


def test_a_function_that_only_reads_needs_no_variant():
    f = xlac.compile(lambda x, y: x - y[::-1])
    a = np.arange(4.0)
    assert_matches(f(a, a), a - a[::-1])
    assert f.cache_info().compiles == 1


def test_a_view_that_wraps_around_a_row_is_refused():
    a = np.arange(12.0)
    wrapped = np.lib.stride_tricks.as_strided(a, shape=(3, 3), strides=(24, 16))   # rows of 2-element steps
    with pytest.raises(ValueError, match=r"arguments x and y share memory.*wrap around a row.*y\.copy\(\)"):
        xlac.compile(lambda x, y: x.__iadd__(1.0))(a, wrapped)


def test_different_dtypes_over_the_same_memory_are_refused():
    a = np.zeros(4)
    with pytest.raises(ValueError, match=r"share memory.*different dtypes \(float64 and int64\)"):
        xlac.compile(lambda x, y: x.__iadd__(1.0))(a, a.view(np.int64))


def test_complex_elements_that_do_not_start_where_a_float_argument_does_are_refused():
    floats = np.arange(16.0)
    pairs = floats[1:15].view(np.complex128)        # complex elements from the second float on
    with pytest.raises(ValueError, match=r"arguments x and y share memory.*not aligned with each other"):
        xlac.compile(lambda x, y: x.__iadd__(1.0))(floats[:3], pairs)


def _slice_of(n, start, stop, step):
    return slice(start % (n + 1), stop % (n + 1), step) if step > 0 else slice(stop % (n + 1), None, step)


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_random_views_of_one_base_read_one_and_write_the_other(data):
    ndim = data.draw(st.integers(1, 2))
    shape = tuple(data.draw(st.integers(2, 6)) for _ in range(ndim))
    base = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    slices = st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(-3, 3).filter(bool))
    views = [([data.draw(slices) for _ in shape], ndim == 2 and data.draw(st.booleans())) for _ in range(2)]

    def pick(a):
        picked = [a[tuple(_slice_of(n, *s) for n, s in zip(shape, draws))] for draws, _ in views]
        return [v.T if transpose else v for v, (_, transpose) in zip(picked, views)]

    def f(src, dst):
        dst[...] = dst * 2.0 + 1.0
        return src.sum()
    same_as_numpy(f, base, pick)


OWNER = np.arange(6.0)
TAIL = OWNER[1:]


def test_two_outside_arrays_on_one_memory_written_are_refused():
    @xlac.compile
    def f(x):
        xnp.add(TAIL, x[:5], out=TAIL)
        return xnp.sum(OWNER)
    with pytest.raises(ValueError, match=r"share memory and the compiled function writes to TAIL, but both are "
                                         r"arrays it reads from outside its arguments"):
        f(np.ones(6))


_NUMPY_STEPS = {
    "slice": lambda a, start, limit, strides: a[tuple(slice(b, e, s) for b, e, s in zip(start, limit, strides))],
    "reshape": lambda a, shape: a.reshape(shape),
    "transpose": lambda a, permutation: a.transpose(permutation),
    "reverse": lambda a, dimensions: np.flip(a, dimensions),
    "broadcast_in_dim": lambda a, shape, broadcast_dimensions: np.broadcast_to(a, shape),
}


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_the_chain_of_views_takes_a_strided_view_out_of_its_flat_memory(data):
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(3))
    base = np.arange(np.prod(shape)).reshape(shape)
    slices = st.tuples(st.integers(-5, 5), st.integers(-5, 5), st.integers(-3, 3).filter(bool))
    view = base[tuple(_slice_of(n, *data.draw(slices)) for n in shape)]
    view = view.transpose(data.draw(st.permutations(range(3))))
    if view.size == 0:
        return
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    member = Member(0, offset, view.shape, tuple(s // base.itemsize for s in view.strides))
    needed, chain = view_chain(member)
    taken = np.concatenate([base.reshape(-1), np.full(max(0, needed - base.size), -1)])
    for step in chain:
        taken = _NUMPY_STEPS[step.op.__name__](taken, **step.attrs)
    np.testing.assert_array_equal(taken, view)
