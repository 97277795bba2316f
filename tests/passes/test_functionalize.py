"""Functionalization: in-place updates, views and mutated arguments give NumPy's results."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches


def run_both(fn, *args):
    """``fn`` run by NumPy on copies of ``args`` and compiled by xlac on other copies: (results, args after)."""
    np_args = [a.copy() for a in args]
    xl_args = [a.copy() for a in args]
    expected = fn(*np_args)
    got = xlac.compile(fn)(*xl_args)
    return (got, xl_args), (expected, np_args)


def assert_same(got, expected):
    (got_out, got_args), (exp_out, exp_args) = got, expected
    for g, e in zip(got_args, exp_args):
        assert_matches(g, e)
    if isinstance(exp_out, tuple):
        for g, e in zip(got_out, exp_out):
            assert_matches(g, e)
    else:
        assert_matches(got_out, exp_out)


def test_store_and_copy_are_removed_and_argument_written_back():
    def f(x):
        y = x.copy()
        x[0] = 5.0
        y += 1
        return y
    traced = xlac.compile(f).trace(np.zeros(3))
    names = {n.primitive.name for n in traced.ir("traced").nodes}
    assert {"store", "copy"} <= names
    assert not {"store", "copy"} & {n.primitive.name for n in traced.ir("final").nodes}
    assert traced.ir("final").input_updates == [(0, 1)]
    assert_same(*run_both(f, np.arange(3.0)))


def test_writes_through_views_show_in_base_and_other_views():
    def f(x):
        row = x[1]
        col = x[:, 2]
        t = x.T
        flat = x.reshape(-1)
        row[1:] = -1.0
        col += 10
        t[0] *= 3
        flat[::4] = 0.5
        return row.copy(), col * 1, t[2], flat.sum()
    assert_same(*run_both(f, np.arange(12.0).reshape(3, 4)))


def test_augmented_assignment_every_operator():
    def f(x, y, i):
        x += y; x -= 1; x *= y; x /= 2; x //= 1.5; x %= 7; x **= 2   # noqa: E702
        i += 3; i -= 1; i *= 2; i //= 3; i %= 5; i **= 2; i &= 6; i |= 1; i ^= 3; i <<= 2; i >>= 1  # noqa: E702
        return x, i
    assert_same(*run_both(f, np.linspace(1, 3, 6), np.full(6, 1.5), np.arange(6)))


def test_subscript_augmented_assignment_reads_adds_writes():
    def f(a):
        a[[0, 0, 1]] += 1
        return a
    (got, _), (expected, _) = run_both(f, np.zeros(3))
    assert_matches(got, expected)
    assert list(np.asarray(got)) == [1.0, 1.0, 0.0]


def test_duplicate_indices_keep_the_last_value():
    def f(b):
        b[[0, 0]] = np.array([5.0, 7.0])
        return b
    (got, _), _ = run_both(f, np.zeros(2))
    assert np.asarray(got)[0] == 7.0


def test_integer_arrays_refuse_in_place_true_division():
    def f(x):
        x /= 2
        return x
    with pytest.raises(TypeError, match="Cannot cast ufunc 'divide' output from dtype\\('float64'\\) to dtype\\('int64'\\)"):
        xlac.compile(f)(np.arange(3))


def test_read_only_views_refuse_writes():
    def f(x):
        b = xnp.broadcast_to(x, (2, 3))
        b[0] = 1.0
        return b
    with pytest.raises(ValueError, match="read-only(.|\n)*test_functionalize.py"):
        xlac.compile(f)(np.zeros(3))
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        xlac.compile(lambda x: x.__iadd__(1))(readonly)


def test_scalar_arguments_are_rebound_not_mutated():
    def f(x, s, n):
        s += 1.0
        n *= 2
        x += s
        return x, s, n
    f_compiled = xlac.compile(f)
    x = np.zeros(2)
    out_x, out_s, out_n = f_compiled(x, 2.0, np.int64(3))
    assert_matches(x, np.full(2, 3.0))
    assert float(out_s) == 3.0 and int(out_n) == 6


def test_reshape_of_a_non_contiguous_view_is_a_copy_as_in_numpy():
    def f(x):
        flat = x.T.reshape(-1)     # NumPy copies here: writes must not reach x
        flat[0] = 100.0
        r = x[:, :2].reshape(-1)   # also a copy
        r += 1
        v = x[1:].reshape(-1)      # a view: writes reach x
        v[0] = -5.0
        return flat, r
    assert_same(*run_both(f, np.arange(6.0).reshape(2, 3)))


def test_returned_view_is_a_copy_of_the_final_value():
    def f(x):
        v = x[0]
        x[0, 0] = 9.0
        return v
    assert_same(*run_both(f, np.zeros((2, 2))))


def test_xlac_array_argument_updated_in_place_with_donation():
    def f(x, row, i):
        x[i] = row
        return x.sum()
    x = xlac.asarray(np.zeros((1024, 16), np.float32))
    old_buffer = x._buffer
    compiled = xlac.compile(f).lower(x, np.ones(16, np.float32), 3).compile()
    assert compiled.memory_analysis()["alias_size_in_bytes"] == 1024 * 16 * 4
    total = xlac.compile(f)(x, np.ones(16, np.float32), 3)
    assert float(total) == 16.0
    assert old_buffer.is_deleted()
    expected = np.zeros((1024, 16), np.float32)
    expected[3] = 1
    assert_matches(x, expected)


def test_numpy_argument_written_back():
    def f(x):
        x[1:, 0] = 3
        return None
    x = np.zeros((3, 2), np.int32)
    xlac.compile(f)(x)
    assert_matches(x, np.array([[0, 0], [3, 0], [3, 0]], np.int32))


def test_same_array_passed_twice_to_a_writing_function_is_one_array():
    f = xlac.compile(lambda x, y: x.__iadd__(y))
    x = np.arange(3.0)
    f(x, x)                       # as NumPy's x += x (tests/test_shared_arguments.py has the rest)
    assert_matches(x, np.array([0.0, 2.0, 4.0]))


def test_np_add_with_out_writes_in_place():
    def f(a, b):
        a += b        # what np.add(a, b, out=a) does
        return a
    assert_same(*run_both(f, np.arange(4.0), np.ones(4)))


def test_lu_decomposition_with_row_updates():
    def lu(A):
        n = A.shape[0]
        for k in range(n):
            for i in range(k + 1, n):
                A[i, k] /= A[k, k]
                A[i, k + 1:] -= A[i, k] * A[k, k + 1:]
        return A
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    assert_same(*run_both(lu, A))


class KVCache:
    """A model's cache on an object, updated one row per call."""

    def __init__(self, rows, width):
        self.cache = xlac.asarray(np.zeros((rows, width), np.float32))
        self._write = xlac.compile(self._write_row)

    @staticmethod
    def _write_row(cache, row, position):
        cache[position] = row
        return cache.sum(axis=0)

    def append(self, row, position):
        return self._write(self.cache, row, position)


def test_kv_cache_updated_one_row_per_call():
    kv = KVCache(64, 8)
    expected = np.zeros((64, 8), np.float32)
    for position in range(5):
        row = np.full(8, position + 1, np.float32)
        expected[position] = row
        total = kv.append(row, position)
        assert_matches(total, expected.sum(axis=0))
    assert_matches(kv.cache, expected)
    assert kv._write.cache_info().traces == 1


# ---------------------------------------------------------------- random programs

VIEWS = [
    lambda a: a[1:],
    lambda a: a[::-1],
    lambda a: a[:, ::2],
    lambda a: a.T,
    lambda a: a[0],
    lambda a: a[..., 1],
    lambda a: a.reshape(-1),
    lambda a: a[None, :, 1:3],
    lambda a: a[:2, 1:].T,
    lambda a: a.reshape(2, 2, 6).transpose(2, 0, 1),
    lambda a: xnp_or_np(a).swapaxes(a.reshape(2, 3, 4), 0, 2)[1:],
]


def xnp_or_np(a):
    return np if isinstance(a, np.ndarray) else xnp
OPS = ["+=", "-=", "*=", "=", "[0]=", "[...]+="]


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        steps.append((draw(st.integers(0, len(VIEWS) - 1)), draw(st.sampled_from(OPS)),
                      draw(st.integers(-3, 3)), draw(st.booleans())))
    return steps


def run_program(steps, x):
    reads = []
    for view_index, op, value, read_base in steps:
        try:
            v = VIEWS[view_index](x)
        except (IndexError, ValueError):
            continue
        # A different value per element, so that a write landing in the wrong place shows.
        bump = (np.arange(v.size).reshape(v.shape) % 5 + value).astype(x.dtype)
        if op == "+=":
            v += bump
        elif op == "-=":
            v -= bump
        elif op == "*=":
            v *= bump
        elif op == "=":
            v[...] = bump
        elif op == "[0]=":
            if v.ndim:
                v[0] = bump[0]
        else:
            v[...] += bump * 2
        reads.append((x * 1) if read_base else (v * 1))
    return tuple(reads) + (x,)


@settings(max_examples=40)       # the space of programs is large: more examples than the profile's default
@given(programs(), st.sampled_from([np.float32, np.int32, np.float64]))
def test_random_programs_of_views_and_updates_match_numpy(steps, dtype):
    x = np.arange(24).reshape(4, 6).astype(dtype)
    assert_same(*run_both(lambda a: run_program(steps, a), x))


# ---------------------------------------------------------------- the in-place report


@pytest.mark.usefixtures("xla_defaults")
def test_inplace_report_says_which_writes_copy_and_why():
    def f(x, v):
        x[0] = v                      # in place: nothing reads the old x afterwards
        snapshot = x.copy()
        x[1] = v                      # copies: the snapshot (the old x) is read after it
        return snapshot.sum()
    report = xlac.compile(f).lower(np.zeros(8), 1.0).compile().inplace_report()
    assert [w.in_place for w in report] == [True, False]
    assert all("test_functionalize.py" in str(w.location.file) for w in report)
    assert "read afterwards by reduce" in report[1].reason and report[1].bytes == 64
    assert "copies 64 bytes" in str(report[1])


@pytest.mark.usefixtures("xla_defaults")
def test_kv_cache_write_is_in_place():
    report = xlac.compile(KVCache._write_row).trace(np.zeros((64, 8), np.float32), np.ones(8, np.float32), 3)
    assert [w.in_place for w in report.inplace_report()] == [True]
