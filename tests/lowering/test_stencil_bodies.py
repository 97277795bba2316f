"""Stencil and recurrence loop bodies as lean as ``jax.lax``'s (issue 33, item 3), pinned on XLA's optimized
HLO against the kernels' lax ports, with NumPy's values:

- reads of one array at nearby traced positions (Gauss-Seidel's nine ``A[i +- 1, j +- 1]``) are one read of
  the box around them (``xlac/passes/nearby_reads.py``), not one kernel each per iteration, and only where
  each read is proven inside the array (``xlac/passes/index_ranges.py``);
- rows a batched inner loop writes into a slice of the array (``out[:, r, c, :]`` for every ``c``) are written
  into the array itself (``xlac/passes/view_writes.py``), not through two transposed copies of the slice;
- a carried integer that stays in a known range (a decode loop's ``token = np.argmax(...)``, read back as
  ``embed[token]``) indexes without a bounds check (``xlac/convert/loops.py``: ``CarriedRanges``), and one that
  may leave it is still checked."""
import re

import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from hypothesis import given, settings

import xlac
from tests.numpy_kernels import conv2d_valid, greedy_decode
from xlac.inspection.hlo_copies import loop_body_copies, loop_body_count, while_bodies
from xlac.ir import Graph, Node, TensorType, Value
from xlac.ir import primitives as P
from xlac.passes.view_writes import view_writes

_x64 = jax.config.read("jax_enable_x64")
from benchmarks.as_written_kernels import conv_jax, gauss_seidel_2d, gauss_seidel_2d_jax  # noqa: E402  (lax ports)
from benchmarks.numpy_loops import greedy_decode_jax  # noqa: E402
jax.config.update("jax_enable_x64", _x64)         # those modules turn x64 on for good when imported

def _fusions_per_body(hlo: str) -> list[int]:
    """The number of kernels (fusions) each while body of an optimized HLO module runs itself."""
    return [sum(" fusion(" in line for line in lines) for lines in while_bodies(hlo).values()]


@pytest.mark.usefixtures("xla_defaults")
def test_gauss_seidel_reads_one_window_per_point(x64):
    A = np.random.default_rng(0).random((40, 40))
    compiled = xlac.compile(gauss_seidel_2d, static_argnums=(1,))
    np.testing.assert_allclose(np.asarray(compiled(A.copy(), 2)), gauss_seidel_2d(A.copy(), 2), rtol=1e-12)
    assert compiled.lower(A, 2).ir("nearby_reads").report["reads_merged"] > 0
    ours = compiled.lower(A, 2).compile().as_text()
    theirs = jax.jit(gauss_seidel_2d_jax, static_argnums=(1,)).lower(A, 2).compile().as_text()
    assert max(_fusions_per_body(ours)) <= max(_fusions_per_body(theirs))
    assert not re.search(r"f64\[1,1\]\S* fusion\(", "\n".join(_loop_lines(ours)))   # no point read of its own


def _loop_lines(hlo: str) -> list[str]:
    """The lines of the module's innermost loop bodies (those that run no loop themselves)."""
    return [line for lines in while_bodies(hlo).values()
            if not any(" call(" in x or " while(" in x for x in lines) for line in lines]


def _reads_merged(fn, *args, **options) -> int:
    return xlac.compile(fn, **options).lower(*args).ir("nearby_reads").report.get("reads_merged", 0)


def test_reads_at_an_unproven_position_are_left_as_xla_clamps_them():
    """``i`` is an argument: nothing proves ``a[i + 1]`` inside the array, and with the checks off XLA clamps
    each read on its own (``a[n - 1]`` twice at ``i = n - 1``), which one box would not."""
    def around(a, i):
        return a[i - 1] + a[i] + a[i + 1]
    a = np.arange(10.0) ** 2
    compiled = xlac.compile(around, check_bounds=False)
    assert _reads_merged(around, a, 9, check_bounds=False) == 0
    assert float(compiled(a, 9)) == a[8] + a[9] + a[9]
    assert float(compiled(a, 4)) == around(a, 4)


def test_reads_far_apart_keep_their_own_windows():
    def ends(a):
        def step(i, a):
            a[i] = a[i - 1] + a[i + 90]     # a box from i - 1 to i + 90 would read 92 elements for 2
            return a
        return xlac.fori_loop(1, 9, step, a)
    a = np.arange(100.0)
    expected = a.copy()
    for i in range(1, 9):
        expected[i] = expected[i - 1] + expected[i + 90]
    np.testing.assert_allclose(np.asarray(xlac.compile(ends)(a.copy())), expected)
    assert _reads_merged(ends, a) == 0


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2)), min_size=2, max_size=5),
       st.integers(2, 3))
def test_nearby_reads_of_a_rolled_stencil_match_numpy(offsets, width):
    """Windows of ``width`` x ``width`` at ``(i + di, j + dj)`` read in a loop that writes the array in place."""
    def stencil(a):
        for i in range(2, a.shape[0] - 4):
            for j in range(2, a.shape[1] - 4):
                total = 0.0
                for di, dj in offsets:
                    total = total + a[i + di:i + di + width, j + dj:j + dj + width].sum()
                a[i, j] = total / 50
        return a
    a = np.random.default_rng(1).random((72, 9))
    np.testing.assert_allclose(np.asarray(xlac.compile(stencil)(a.copy())), stencil(a.copy()), rtol=1e-12)


# ---------------------------------------------------------------- carried integers in a known range


def _decode_args():
    rng = np.random.default_rng(2)
    return rng.normal(size=(128, 16)) * 0.5, rng.normal(size=(16, 128)), np.zeros(16), 80, -1


@pytest.mark.usefixtures("xla_defaults")
def test_greedy_decode_body_holds_no_bounds_check(x64):
    args = _decode_args()
    compiled = xlac.compile(greedy_decode, static_argnums=(3, 4))
    np.testing.assert_array_equal(np.asarray(compiled(*args)), greedy_decode(*args))
    checked = compiled.lower(*args).ir("final").op_counts()
    unchecked = xlac.compile(greedy_decode, static_argnums=(3, 4), check_bounds=False).lower(*args).ir("final")
    assert checked == unchecked.op_counts()           # embed[token]: token is an argmax, inside the rows
    ours = compiled.lower(*args).compile().as_text()
    theirs = jax.jit(greedy_decode_jax, static_argnums=(3, 4)).lower(*args).compile().as_text()
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")


def test_a_carried_index_that_walks_off_the_array_is_still_checked():
    def walk(x):
        total, k = 0.0, 0
        for _ in range(100):
            total += x[k]
            k = k + 1                  # 0, 1, 2, ...: past the 50 rows at the 51st step
        return total
    with pytest.raises(IndexError):
        walk(np.ones(50))
    with pytest.raises(IndexError, match="out of bounds"):
        xlac.compile(walk)(np.ones(50))
    assert float(xlac.compile(walk)(np.ones(100))) == 100.0


def test_a_carried_index_kept_in_range_by_the_loop_matches_numpy():
    def cycle(x):
        total, k = 0.0, 0
        for _ in range(100):
            total += x[k]
            k = (k + 3) % x.shape[0]     # stays in [0, n): no check needed, after one wider trace
        return total
    x = np.arange(7.0)
    compiled = xlac.compile(cycle)
    assert float(compiled(x)) == cycle(x)
    checked = compiled.lower(x).ir("final").op_counts()
    assert checked == xlac.compile(cycle, check_bounds=False).lower(x).ir("final").op_counts()


# ---------------------------------------------------------------- rows written into a view, batched


@pytest.mark.usefixtures("xla_defaults")
def test_batched_columns_are_written_into_the_output_in_place(x64):
    rng = np.random.default_rng(3)
    img, k = rng.normal(size=(2, 32, 32, 3)), rng.normal(size=(3, 3, 3, 4))
    compiled = xlac.compile(conv2d_valid)
    np.testing.assert_allclose(np.asarray(compiled(img, k)), conv2d_valid(img, k), rtol=1e-10, atol=1e-12)
    assert compiled.lower(img, k).ir("view_writes").report == {"view_writes_folded": 2}    # r = 0, then the loop
    ours = compiled.lower(img, k).compile().as_text()
    theirs = jax.jit(conv_jax).lower(img, k).compile().as_text()
    assert loop_body_copies(ours) <= {"s64[]", "f64[2,1,29,4]"}    # the index, the new rows in the output's order
    assert loop_body_count(ours, "fusion") <= loop_body_count(theirs, "fusion")


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(4, 9), st.integers(4, 9), st.integers(1, 3), st.integers(1, 3))
def test_batched_windows_written_into_a_view_match_numpy(n, rows, cols, size, features):
    rng = np.random.default_rng(rows * 10 + cols)
    img, k = rng.normal(size=(n, rows, cols, 2)), rng.normal(size=(size, size, 2, features))
    np.testing.assert_allclose(np.asarray(xlac.compile(conv2d_valid)(img, k)), conv2d_valid(img, k),
                               rtol=1e-10, atol=1e-12)


def _write_through_transposed_view(row_start: Value) -> Graph:
    """``x[:, 1:]`` transposed, ``row`` written into it at (row_start, 1), moved back and written into ``x``."""
    f64, i64 = np.dtype("float64"), row_start.type.dtype
    x, row = Value(TensorType((4, 6), f64)), Value(TensorType((1, 2), f64))
    s, t, u, w, y = (Value(TensorType(shape, f64)) for shape in [(4, 5), (5, 4), (5, 4), (4, 5), (4, 6)])
    zero, one = Value(TensorType((), i64)), Value(TensorType((), i64))
    nodes = [Node(P.constant, (), {"value": np.array(0)}, (zero,)),
             Node(P.constant, (), {"value": np.array(1)}, (one,)),
             Node(P.slice_, (x,), {"start": (0, 1), "limit": (4, 6), "strides": (1, 1)}, (s,)),
             Node(P.transpose, (s,), {"permutation": (1, 0)}, (t,)),
             Node(P.dynamic_update_slice, (t, row, row_start, one), {}, (u,)),
             Node(P.transpose, (u,), {"permutation": (1, 0)}, (w,)),
             Node(P.dynamic_update_slice, (x, w, zero, one), {}, (y,))]
    return Graph([x, row, row_start], nodes, [y])


def test_a_view_write_at_an_unproven_start_stays_as_written():
    """A start XLA may clamp inside the view (here an input, of unknown range) would be clamped inside the
    whole array instead: the pass leaves the write alone."""
    graph = _write_through_transposed_view(Value(TensorType((), np.dtype("int64"))))
    assert view_writes(graph).report == {}
    assert [n.primitive for n in view_writes(graph).nodes] == [n.primitive for n in graph.nodes]


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 3), st.integers(1, 3), st.integers(0, 4))
def test_an_empty_write_into_a_view_writes_nothing(start, length, at):
    """``u = a[s:s + n]; u[k:k + 1] += 1`` with ``k`` past ``u``'s end writes no element (fuzz ``--loops
    --seed 17``: the pass reshaped the empty update into one element, a module XLA refused)."""
    def program(a):
        u = a[start:start + length]
        u[at:at + 1] += -1.5
        return a.sum()
    a = np.arange(8.0)
    expected_array, got_array = a.copy(), a.copy()
    expected = program(expected_array)
    assert float(xlac.compile(program)(got_array)) == expected
    np.testing.assert_array_equal(got_array, expected_array)
