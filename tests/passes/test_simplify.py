"""simplify: each rewrite fires where it should, keeps values exactly, and keeps the user's source lines."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from xlac.passes.simplify import converts_exactly


def _final(fn, *args):
    """The graph simplify gives (its report is that pass's) and the traced function."""
    traced = xlac.compile(fn).trace(*args)
    return traced.ir("simplify"), traced


def _check_values(fn, *args):
    """The compiled result and the arguments after the call equal NumPy's, bit for bit."""
    expected_args = [a.copy() for a in args]
    expected = fn(*expected_args)
    got_args = [a.copy() for a in args]
    got = xlac.compile(fn)(*got_args)
    for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                    got if isinstance(got, tuple) else (got,)):
        g = np.asarray(g)
        assert g.dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)


@pytest.mark.usefixtures("xla_defaults")
def test_an_augmented_element_assignment_writes_the_row_once():
    def f(x):
        x[0] += 1.0
        return x

    graph, traced = _final(f, np.ones((2, 3), np.float32))
    assert graph.op_counts()["dynamic_update_slice"] == 1
    assert graph.report["updates_dropped"] == 1
    assert [w.in_place for w in traced.inplace_report()] == [True]
    _check_values(f, np.arange(6.0).reshape(2, 3))


@pytest.mark.usefixtures("xla_defaults")
def test_an_update_still_read_before_it_is_overwritten_is_kept_and_both_run_in_place():
    def f(x):
        x[0] = 1.0
        total = x.sum()
        x[0] = 2.0
        return total

    graph, traced = _final(f, np.zeros(4))
    assert graph.op_counts()["dynamic_update_slice"] == 2
    assert "updates_dropped" not in graph.report
    assert [w.in_place for w in traced.inplace_report()] == [True, True]
    _check_values(f, np.arange(4.0))


def test_writing_back_what_was_read_from_the_same_place_is_dropped():
    def f(x):
        x[1:3] = x[1:3].copy()
        return x * 2

    graph, _ = _final(f, np.ones(5))
    assert "dynamic_update_slice" not in graph.op_counts()
    _check_values(f, np.arange(5.0))


def test_reshape_and_transpose_chains_fold_and_keep_the_first_line():
    def f(x):
        y = x.reshape(6).reshape(3, 2).reshape(2, 3)
        return y.T.T + 1, np.transpose(np.transpose(x.reshape(1, 2, 3), (2, 0, 1)), (1, 2, 0))

    graph, _ = _final(f, np.arange(6.0).reshape(2, 3))
    counts = graph.op_counts()
    assert "reshape" in counts and counts["reshape"] == 1      # the (1, 2, 3) one: from (2, 3) directly
    assert "transpose" not in counts
    assert graph.report["reshapes_folded"] >= 2 and graph.report["transposes_folded"] >= 2
    _check_values(f, np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("wide, narrow, value", [
    (np.float64, np.float32, 1.0 + 2.0 ** -40),   # f64 -> f32 -> f64 rounds
    (np.int64, np.float64, 2 ** 53 + 1),           # i64 -> f64 -> i64 rounds
    (np.float32, np.float16, 70000.0),             # overflows float16
])
def test_a_conversion_that_loses_values_is_never_folded(wide, narrow, value):
    def f(x):
        return x.astype(narrow).astype(wide)

    x = np.array([value, 1], dtype=wide)
    graph, _ = _final(f, x)
    assert graph.op_counts()["convert"] == 2
    _check_values(f, x)


def test_a_lossless_round_trip_folds():
    def f(x, i):
        return x.astype(np.float64).astype(np.float32), i.astype(np.float64).astype(np.int32)

    x, i = np.array([1.5, -0.0, np.inf], np.float32), np.array([2 ** 31 - 1, -2 ** 31], np.int32)
    graph, _ = _final(f, x, i)
    assert "convert" not in graph.op_counts()
    _check_values(f, x, i)


def test_repeated_expressions_merge_but_constants_that_compare_equal_do_not():
    def f(x):
        return x * x + x * x, x / 0.0, x / -0.0, x - 0, x - False

    x = np.array([1.0, -2.0], np.float32)
    graph, _ = _final(f, x)
    assert graph.op_counts()["mul"] == 1
    assert graph.report["common_subexpressions"] >= 1
    _check_values(f, x)


def test_a_merged_node_keeps_the_source_line_of_the_first():
    def f(x):
        a = np.sin(x)
        b = np.sin(x)
        return a, b

    graph, _ = _final(f, np.ones(2))
    (sin,) = [n for n in graph.nodes if n.primitive.name == "sin"]
    first_line = f.__code__.co_firstlineno + 1
    assert sin.location.line == first_line


_DTYPES = [np.dtype(t) for t in (bool, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                 np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)] + [
    np.dtype(ml_dtypes.bfloat16)]


def _edge_values(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], dtype)
    real = dtype if dtype.kind != "c" else np.dtype(f"f{dtype.itemsize // 2}")
    info = ml_dtypes.finfo(real)
    values = np.array([info.max, info.min, info.tiny, info.smallest_subnormal, info.eps, 1 + info.eps, np.inf,
                       -np.inf, -0.0, 0.0, 1.0 / 3], real)
    return values + 1j * values[::-1] if dtype.kind == "c" else values


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list(itertools.permutations(_DTYPES, 2))), st.integers(0, 2 ** 32 - 1))
def test_converts_exactly_is_only_claimed_where_every_value_survives_the_round_trip(pair, seed):
    source, target = pair
    if not converts_exactly(source, target):
        return
    rng = np.random.default_rng(seed)
    if source.kind in "iub":
        values = np.concatenate([_edge_values(source), rng.integers(0, 256, 64, dtype=np.uint8).astype(source)])
    else:
        values = np.concatenate([_edge_values(source), rng.standard_normal(64).astype(source) * 1e3])
    back = values.astype(target).astype(source)
    as_bits = (lambda a: a.view(f"u{source.itemsize}")) if source.kind == "f" else (lambda a: a)
    np.testing.assert_array_equal(as_bits(back), as_bits(values))


def test_converts_exactly_knows_the_common_widenings():
    f16, f32, f64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
    i8, i32, i64 = np.dtype("int8"), np.dtype("int32"), np.dtype("int64")
    assert converts_exactly(f16, f32) and converts_exactly(f32, f64) and converts_exactly(i8, f16)
    assert converts_exactly(i32, f64) and converts_exactly(np.dtype(bool), i8)
    assert converts_exactly(f32, np.dtype("complex64")) and converts_exactly(np.dtype(ml_dtypes.bfloat16), f32)
    assert not converts_exactly(f64, f32) and not converts_exactly(i64, f64)
    assert not converts_exactly(np.dtype("uint8"), i8) and not converts_exactly(i8, np.dtype("uint64"))
    assert not converts_exactly(np.dtype("complex64"), f32) and not converts_exactly(f16, np.dtype(ml_dtypes.bfloat16))
    assert not converts_exactly(f16, i32) and not converts_exactly(np.dtype("int16"), f16)
