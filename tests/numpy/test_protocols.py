"""NumPy's dispatch protocols: unmodified NumPy code on tracers and on xlac.Array, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from tests.gpt_numpy import gpt2, init_params
from tests.tolerance import assert_matches

F32 = np.float32


def both(fn, *args):
    """``fn`` on NumPy arrays, compiled on the same arrays, and eagerly on xlac.Arrays."""
    expected = fn(*args)
    compiled = xlac.compile(fn)(*args)
    eager = fn(*(xlac.asarray(a) if isinstance(a, np.ndarray) else a for a in args))
    return expected, compiled, eager


def check_all(fn, *args, rtol=None):
    expected, compiled, eager = both(fn, *args)
    for got in (compiled, eager):
        if isinstance(expected, (tuple, list)):
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert isinstance(g, xlac.Array)
                assert_matches(np.asarray(g), e, rtol=rtol)
        else:
            assert isinstance(got, xlac.Array), type(got)
            assert_matches(np.asarray(got), expected, rtol=rtol)


X = np.arange(1, 13, dtype=F32).reshape(3, 4) / 4


@pytest.mark.parametrize("fn", [
    lambda x: np.exp(x),
    lambda x: np.sum(x, axis=-1, keepdims=True),
    lambda x: np.mean(x, axis=0),
    lambda x: np.maximum(x, 1.5),
    lambda x: np.where(x > 1, x, -x),
    lambda x: np.einsum("ij,kj->ik", x, x),
    lambda x: np.matmul(x, x.T),
    lambda x: np.split(x, 2, axis=-1),
    lambda x: np.hstack([x, 2 * x]),
    lambda x: np.concatenate([x, x], axis=0),
    lambda x: np.tri(x.shape[0], dtype=x.dtype) @ x,
    lambda x: np.transpose(x) * np.float32(2),
    lambda x: np.reshape(x, (4, 3)) + np.ones((4, 3), F32),
    lambda x: np.add.reduce(x),
    lambda x: np.maximum.reduce(x, axis=1, keepdims=True),
    lambda x: np.add.accumulate(x, axis=1),
    lambda x: np.multiply.accumulate(x),
    lambda x: np.subtract.outer(x[0], x[:, 1]),
    lambda x: np.exp(x, where=x > 1, out=np.zeros_like(x)),
    lambda x: np.ones(4, F32) + x,            # ndarray on the left: NumPy hands the ufunc to xlac
    lambda x: np.clip(x, 0.5, 2.0),
    lambda x: np.stack([x, x], axis=-1),
    lambda x: np.sqrt(np.var(x, axis=-1)),
], ids=lambda fn: "")
def test_numpy_functions_dispatch_to_xlac(fn):
    check_all(fn, X)


def test_ufunc_out_writes_into_a_traced_array():
    def f(x):
        y = np.zeros_like(x) + x
        np.multiply(y, 2, out=y)
        np.negative(y, out=y, where=y > 3)
        return y
    check_all(f, X)


def test_ufunc_at_applies_repeated_indices_in_place():
    def f(x):
        x = x.copy()
        np.add.at(x, [0, 0, 2], 1.0)
        np.subtract.at(x, ([1, 1], [0, 0]), 0.5)
        np.maximum.at(x, (slice(None), 3), 9.0)
        return x
    check_all(f, X)


def test_ufunc_at_writes_an_eager_array_and_a_mutated_argument():
    a = xlac.asarray(np.zeros(3, F32))
    np.add.at(a, [1, 1, 2], np.float32(1))
    np.testing.assert_array_equal(np.asarray(a), [0, 2, 1])

    def bump(x):
        np.add.at(x, [0, 0], 1.0)
    host = np.zeros(2, F32)
    xlac.compile(bump)(host)
    np.testing.assert_array_equal(host, [2, 0])


def test_linalg_and_fft_namespaces_dispatch():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    check_all(lambda x: np.linalg.norm(x, axis=-1), a)
    check_all(lambda x: np.linalg.inv(x), a)
    check_all(lambda x: np.fft.rfft(x, axis=0), a)


def test_gpt_forward_pass_written_with_numpy_compiles_unchanged():
    params = init_params(np.random.default_rng(0))
    compiled = xlac.compile(gpt2, static_argnames=("n_head",))
    for tokens in ([3, 14, 15, 9, 2, 6], [7, 1, 8, 2, 8, 1]):
        expected = gpt2(tokens, **params, n_head=4)
        got = compiled(tokens, **params, n_head=4)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert_matches(np.asarray(got), expected, rtol=1e-5)
    assert compiled.cache_info().traces == 1          # token ids are traced, not baked in
    assert "dot_general" in str(compiled.trace(tokens, **params, n_head=4))


def test_missing_numpy_function_names_itself_inside_a_trace():
    with pytest.raises(xlac.UnsupportedError, match=r"numpy\.polyfit is not supported by xlac") as info:
        xlac.compile(lambda x: np.polyfit(x, x, 1))(np.arange(3, dtype=F32))
    assert "test_protocols.py" in str(info.value)
    with pytest.raises(xlac.UnsupportedError, match=r"add\.reduceat: traced indices; .*\n  at .*test_protocols"):
        xlac.compile(lambda x, i: np.add.reduceat(x, i))(np.ones(4, F32), np.array([0, 2]))
    with pytest.raises(xlac.UnsupportedError, match=r"numpy\.lib\.stride_tricks\.sliding_window_view is not"):
        xlac.compile(lambda x: np.lib.stride_tricks.sliding_window_view(x, 2))(np.ones(4, F32))


def test_missing_numpy_function_runs_in_numpy_outside_a_trace():
    a = xlac.asarray(np.array([0.0, 4.0, 8.0]))
    got = np.polyfit(a, a, 1)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, [1.0, 0.0], atol=1e-12)
    got = np.add.reduceat(a, [0, 2])
    np.testing.assert_allclose(got, [4.0, 8.0])


def test_array_conversion_inside_a_trace_still_refuses():
    with pytest.raises(xlac.TracerConversionError, match=r"np\.asarray"):
        xlac.compile(lambda x: np.asarray(x) + 1, convert=False)(np.ones(2, F32))


@settings(max_examples=13, deadline=None)
@given(data=st.data())
def test_list_and_range_indices_match_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    x = np.arange(np.prod(shape), dtype=F32).reshape(shape)
    n = shape[0]
    kind = data.draw(st.sampled_from(["list", "range", "nested", "pair"]), label="kind")
    if kind == "list":
        index = data.draw(st.lists(st.integers(-n, n - 1), max_size=4), label="index")
    elif kind == "range":
        start, stop = sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n))))
        index = range(start, stop, data.draw(st.integers(1, 2)))
    elif kind == "nested":
        index = [data.draw(st.lists(st.integers(-n, n - 1), min_size=2, max_size=2)) for _ in range(2)]
    else:
        index = (data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)), Ellipsis)
    expected = x[index]
    assert_matches(np.asarray(xlac.compile(lambda x: x[index])(x)), expected)
    assert_matches(np.asarray(xlac.asarray(x)[index]), expected)

    def assign(x):
        x[index] = -1.0
        return x
    written = x.copy()
    written[index] = -1.0
    assert_matches(np.asarray(xlac.compile(assign)(x.copy())), written)


def test_traced_python_ints_in_a_list_index():
    table = np.arange(20, dtype=F32).reshape(10, 2)
    got = xlac.compile(lambda t, i, j: t[[i, j, i]])(table, 3, 7)
    np.testing.assert_array_equal(np.asarray(got), table[[3, 7, 3]])
