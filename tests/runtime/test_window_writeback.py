"""A mutated NumPy argument is written back by the windows the program updated (``xlac.window_writes``): the
arrays afterwards equal NumPy's, for every kind of write, and the whole new buffer is never read back."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
import xlac.runners


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _assert_same(fn, *args, compiled=None):
    """``fn`` compiled leaves its arguments (and returns) what NumPy does; the compiled function for reuse."""
    compiled = compiled or xlac.compile(fn)
    expected_args, got_args = _copies(args), _copies(args)
    expected = fn(*expected_args)
    got = compiled(*got_args)
    if expected is not None:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)
    return compiled


def _windowed(fn, *args) -> list[int]:
    """The arguments written back by windows in ``fn``'s program for ``args``."""
    return [update.argument for update in xlac.compile(fn).trace(*args).windows]


@pytest.fixture
def whole_buffer_never_read(monkeypatch):
    """The call path reading an updated argument's whole new buffer to the host fails the test (the checks'
    status, two numbers, is read as before)."""
    host_value = xlac.runners._host_value

    def refuse(buffer, t, place):
        assert t.shape == (2,), f"the whole new buffer {t} was read back"
        return host_value(buffer, t, place)
    monkeypatch.setattr(xlac.runners, "_host_value", refuse)


def decode_step(cache, row, pos):
    cache[pos] = row
    return cache[:pos + 1].sum(axis=0)


@pytest.mark.parametrize("pos", [0, 1, 31, 63, -1, -64])
def test_a_row_at_a_traced_position_is_written_as_numpy_writes_it(pos, whole_buffer_never_read):
    cache = np.random.default_rng(0).normal(size=(64, 3, 2))
    _assert_same(decode_step, cache, np.full((3, 2), 7.5), pos)
    assert _windowed(decode_step, cache, np.ones((3, 2)), pos) == [0]


def test_one_compiled_function_serves_positions_at_the_start_the_middle_and_the_end(whole_buffer_never_read):
    cache = np.zeros((16, 4))
    compiled = xlac.compile(decode_step)
    for pos in (0, 7, 15, 3):
        _assert_same(decode_step, cache, np.arange(4.0) + pos, pos, compiled=compiled)
        compiled(cache, np.arange(4.0) + pos, pos)       # the caller's array, kept across calls
    expected = np.zeros((16, 4))
    for pos in (0, 7, 15, 3):
        expected[pos] = np.arange(4.0) + pos
    np.testing.assert_array_equal(cache, expected)
    assert compiled.cache_info().compiles == 1


@pytest.mark.parametrize("view", ["every other row", "a block of columns", "fortran order"])
def test_a_view_or_a_fortran_ordered_array_is_written_through_in_place(view, whole_buffer_never_read):
    base = np.zeros((40, 6)) if view != "fortran order" else np.asfortranarray(np.zeros((20, 6)))
    expected = base.copy(order="A")
    pick = {"every other row": lambda a: a[::2], "a block of columns": lambda a: a[:, 1:5],
            "fortran order": lambda a: a}[view]
    row = np.arange(1.0, pick(base).shape[1] + 1)
    xlac.compile(decode_step)(pick(base), row, 5)
    decode_step(pick(expected), row, 5)
    np.testing.assert_array_equal(base, expected)
    assert base.sum() == row.sum()


def two_caches(k_cache, v_cache, k, v, pos):
    k_cache[pos] = k
    v_cache[pos] = v
    return (k_cache[:pos + 1] * v_cache[:pos + 1]).sum()


def test_several_arguments_each_written_by_its_window(whole_buffer_never_read):
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(32, 4)), rng.normal(size=(32, 4)), rng.normal(size=4), rng.normal(size=4), 9)
    _assert_same(two_caches, *args)
    assert _windowed(two_caches, *args) == [0, 1]


def several_writes(x, i, j, v):
    x[i] = v
    x[j, 1:3] = -v[1:3]
    x[2:4] += 1.0            # a static window, read and written
    x[i, 0] *= 3.0           # overlaps the first write
    return x[j].sum()


@pytest.mark.parametrize("i, j", [(0, 0), (2, 3), (9, 0), (-1, 5), (3, 3)])
def test_several_and_overlapping_writes_apply_in_program_order(i, j, whole_buffer_never_read):
    x = np.arange(120.0).reshape(30, 4)
    _assert_same(several_writes, x, i, j, np.array([1.0, 2.0, 3.0, 4.0]))
    assert _windowed(several_writes, x, i, j, np.ones(4)) == [0]


def window_of_traced_offset(x, i, w):
    x[i:i + 3, 1] = w        # a window of static length at a traced offset
    return x


@pytest.mark.parametrize("i", [0, 4, 7])
def test_a_static_length_window_at_a_traced_offset(i, whole_buffer_never_read):
    x = np.zeros((10, 2))
    _assert_same(window_of_traced_offset, x, i, np.array([1.0, 2.0, 3.0]))


def square_block(a, r, c, block):
    a[r:r + 2, c:c + 2] = block
    return a.sum()


@pytest.mark.parametrize("r, c", [(0, 0), (3, 5), (6, 6)])
def test_two_traced_starts(r, c, whole_buffer_never_read):
    _assert_same(square_block, np.zeros((8, 8)), r, c, np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert _windowed(square_block, np.zeros((8, 8)), r, c, np.ones((2, 2))) == [0]


def rolled_loop(x, v):
    for i in range(x.shape[0]):
        x[i] = v * i
    return x.sum()


def test_writes_in_a_rolled_loop_write_the_whole_buffer_back():
    x = np.zeros((300, 2))
    compiled = xlac.compile(rolled_loop, loops="roll")
    _assert_same(rolled_loop, x, np.array([1.0, 2.0]), compiled=compiled)
    assert compiled.trace(x, np.ones(2)).windows == []


def row_then_loop(x, pos, v):
    x[pos] = v
    for i in range(x.shape[0]):
        x[i, 0] += 1.0
    return x


def test_a_window_followed_by_a_rolled_loop_writes_the_whole_buffer_back():
    compiled = xlac.compile(row_then_loop, loops="roll")
    _assert_same(row_then_loop, np.zeros((300, 2)), 5, np.array([4.0, 5.0]), compiled=compiled)


def whole_then_row(x, pos):
    x *= 2.0
    x[pos] = 0.0
    return x[pos + 1]


def test_a_whole_array_update_before_the_window_writes_the_whole_buffer_back():
    x = np.arange(12.0).reshape(6, 2)
    _assert_same(whole_then_row, x, 3)
    assert _windowed(whole_then_row, x, 3) == []


def most_of_it(x, v):
    x[1:] = v
    return x.sum()


def test_an_update_over_half_the_array_writes_the_whole_buffer_back():
    x = np.zeros((8, 2))
    _assert_same(most_of_it, x, np.ones((7, 2)))
    assert _windowed(most_of_it, x, np.ones((7, 2))) == []


def write_and_return(x, pos):
    x[pos] = 1.0
    return x


def test_an_updated_argument_that_is_also_returned():
    x = np.zeros((20, 3))
    _assert_same(write_and_return, x, 4)


def through_both_names(a, b, pos):
    a[pos] = 1.0
    b[pos + 1] = 2.0
    return a.sum() + b.sum()


def test_an_array_passed_twice_is_written_as_numpy_writes_it():
    compiled = xlac.compile(through_both_names)
    x = np.zeros((10, 2))
    expected = x.copy()
    result = compiled(x, x, 3)
    through_both_names(expected, expected, 3)
    np.testing.assert_array_equal(x, expected)
    assert float(result) == 2 * expected.sum()
    first_half, expected_half = np.zeros((10, 2)), np.zeros((10, 2))
    compiled(first_half[:6], first_half[2:8], 1)        # overlapping views of one array
    through_both_names(expected_half[:6], expected_half[2:8], 1)
    np.testing.assert_array_equal(first_half, expected_half)


STATE = np.zeros((50, 2))


def write_global(pos, v):
    STATE[pos] = v
    return STATE[:pos + 1].sum()


def test_an_outside_array_is_written_back_by_its_window(whole_buffer_never_read):
    STATE[...] = 0.0
    compiled = xlac.compile(write_global)
    assert float(compiled(7, np.array([1.0, 2.0]))) == 3.0
    assert float(compiled(9, np.array([3.0, 4.0]))) == 10.0
    expected = np.zeros((50, 2))
    expected[7], expected[9] = [1.0, 2.0], [3.0, 4.0]
    np.testing.assert_array_equal(STATE, expected)


@pytest.mark.usefixtures("xla_defaults")
def test_a_device_array_is_updated_in_its_donated_buffer_as_before():
    compiled = xlac.compile(decode_step)
    x = xlac.asarray(np.zeros((16, 4)))
    compiled(x, np.ones(4), 5)
    compiled(x, np.full(4, 2.0), -1)
    expected = np.zeros((16, 4))
    expected[5], expected[-1] = 1.0, 2.0
    np.testing.assert_array_equal(np.asarray(x), expected)
    host = np.zeros((16, 4))                      # the same program, then a NumPy argument
    compiled(host, np.ones(4), 2)
    assert host[2].tolist() == [1.0] * 4 and host.sum() == 4.0
    assert "input_output_alias" in compiled.lower(host, np.ones(4), 2).compile().as_text()
    assert compiled.trace(x, np.ones(4), 2).windows == []       # traced for an xlac.Array: no pieces


def test_an_xlac_array_after_a_numpy_array_is_updated_on_its_device():
    compiled = xlac.compile(decode_step)
    host = np.zeros((16, 4))
    compiled(host, np.ones(4), 2)
    x = xlac.asarray(np.zeros((16, 4)))
    old_buffer = x._buffer
    compiled(x, np.full(4, 3.0), 7)
    assert old_buffer.is_deleted()                              # donated, as before
    assert np.asarray(x)[7].tolist() == [3.0] * 4 and np.asarray(x).sum() == 12.0
    assert host[2].tolist() == [1.0] * 4 and host.sum() == 4.0
    assert compiled.cache_info().compiles == 1


def write_then_fail(x, i, j):
    x[i] = 5.0
    x[j] = 7.0               # out of bounds for j = 9: NumPy raises here
    x[i + 1] = 9.0           # not made
    return x.sum()


@pytest.mark.parametrize("i, j", [(1, 9), (2, -5), (1, 2)])
def test_a_failing_check_leaves_the_writes_before_it_as_numpy_does(i, j):
    x, expected = np.zeros((6, 2)), np.zeros((6, 2))
    try:
        write_then_fail(expected, i, j)
        raised = None
    except IndexError as error:
        raised = str(error)
    if raised is None:
        xlac.compile(write_then_fail)(x, i, j)
    else:
        with pytest.raises(IndexError, match="out of bounds"):
            xlac.compile(write_then_fail)(x, i, j)
    np.testing.assert_array_equal(x, expected)


def window_of_four(x, i):
    x[i:i + 4] = 1.0         # NumPy shortens the window at the end: xlac refuses, after the call
    return x


@pytest.mark.parametrize("i", [0, 3, 6])
def test_windows_ending_inside_the_axis_match_numpy(i, whole_buffer_never_read):
    _assert_same(window_of_four, np.zeros(10), i)


def test_a_window_running_past_the_end_raises_and_leaves_the_array_unchanged():
    x = np.zeros(10)
    with pytest.raises(xlac.errors.UnsupportedError, match="window of 4 elements, starts at 8") as error:
        xlac.compile(window_of_four)(x, 8)
    assert f"{__file__}:{window_of_four.__code__.co_firstlineno + 1}" in str(error.value)
    np.testing.assert_array_equal(x, np.zeros(10))


def test_the_program_returns_the_pieces_and_the_host_never_reads_the_whole_buffer(whole_buffer_never_read):
    cache = np.zeros((1024, 8, 64))
    traced = xlac.compile(decode_step).trace(cache, np.ones((8, 64)), 5)
    graph = traced.ir("final")
    (update,) = traced.windows
    (window,) = update.windows
    assert graph.outputs[window.piece].type.shape == (1, 8, 64)
    assert graph.outputs[update.starts_output].type.shape == (1,)
    assert window.slots == (0, None, None) and window.starts[1:] == (0, 0)
    (i, j), = graph.input_updates            # the whole value: an output sharing the argument's buffer
    assert i == 0 and graph.outputs[j].type.shape == (1024, 8, 64)
    xlac.compile(decode_step)(cache, np.ones((8, 64)), 5)   # the fixture fails it if read back
    assert cache[5].sum() == 8 * 64 and cache.sum() == 8 * 64


def _apply(x, writes, numpy_index_of):
    for kind, at, value in writes:
        x[numpy_index_of(kind, at)] = value


WRITE = st.tuples(st.sampled_from(["row", "cell", "rows"]), st.integers(-12, 11), st.floats(-4, 4, width=32))


@settings(max_examples=10, deadline=None)
@given(st.lists(WRITE, min_size=1, max_size=4))
def test_random_sequences_of_writes_match_numpy(writes):
    def index(kind, at):
        if kind == "row":
            return at
        if kind == "cell":
            return at, 1
        return slice(at % 11, at % 11 + 2)      # inside the axis: NumPy would shorten one past the end

    kinds = tuple(kind for kind, _, _ in writes)
    ats = [at for _, at, _ in writes]
    values = np.array([value for _, _, value in writes])

    def f(x, ats, values):
        for k, kind in enumerate(kinds):
            x[index(kind, ats[k])] = values[k]
        return x.sum()

    x, expected = np.arange(36.0).reshape(12, 3), np.arange(36.0).reshape(12, 3)
    _apply(expected, writes, index)
    xlac.compile(f)(x, np.array(ats), values)
    np.testing.assert_array_equal(x, expected)


def _at_offset(shape, offset: int) -> np.ndarray:
    """A float64 array of ``shape`` lying ``offset`` bytes past a 64-byte boundary, holding 0, 1, 2, ..."""
    size = int(np.prod(shape))
    raw = np.empty(size * 8 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    array = raw[start:start + size * 8].view(np.float64).reshape(shape)
    array[...] = np.arange(size).reshape(shape)
    return array


@pytest.mark.parametrize("copy", [False, True])
def test_a_large_array_is_used_in_place_only_where_aligned_and_copied_otherwise(copy):
    from xlac import runtime
    device = runtime.get_device("cpu")
    put = runtime.host_putter((256, 64), np.dtype("float64"), device, copy=copy)
    aligned, unaligned = _at_offset((256, 64), 0), _at_offset((256, 64), 16)
    for array in (aligned, unaligned):
        buffer = put(array)
        expected = np.arange(256 * 64.0).reshape(256, 64)
        np.testing.assert_array_equal(runtime.to_numpy(buffer, array.dtype, array.shape), expected)
        in_place = buffer.unsafe_buffer_pointer() == array.ctypes.data
        assert in_place == (array is aligned and not copy)
        general = runtime.to_device(array, device, copy=copy)
        assert (general.unsafe_buffer_pointer() == array.ctypes.data) == in_place
    # PJRT copies an unaligned array anyway: xlac asks it to (its own copy is slower); small ones are not looked at
    from xlac.runtime.transfer import _copied_anyway
    assert [_copied_anyway(a) for a in (aligned, unaligned, _at_offset((8, 8), 16))] == [False, True, False]
