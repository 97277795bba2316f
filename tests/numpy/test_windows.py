"""Windows: slices of static length at a traced start (``x[i:i + K]``, xlac/numpy/indexing.py's ``Window``),
read and written as one dynamic_slice / dynamic_update_slice of that length; against NumPy, gradients
against JAX's ``lax.dynamic_slice`` form."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlac
from tests.numpy_kernels import conv2d_valid, levinson_durbin


def ops_named(text: str, op: str) -> list[str]:
    return [line for line in text.splitlines() if f'"stablehlo.{op}"' in line]


def test_the_convolution_as_written_equals_numpy_with_one_static_window_per_step():
    rng = np.random.default_rng(0)
    img, k = rng.standard_normal((2, 9, 8, 3)), rng.standard_normal((3, 3, 3, 4))
    compiled = xlac.compile(conv2d_valid, loops="roll")
    np.testing.assert_allclose(np.asarray(compiled(img, k)), conv2d_valid(img, k), rtol=1e-12, atol=1e-12)
    assert {d.decision for d in compiled.trace(img, k).loop_decisions} == {"rolled"}
    text = compiled.lower(img, k).as_text()
    windows = ops_named(text, "dynamic_slice")
    assert windows and all("slice_sizes = array<i64: 2, 3, 3, 3>" in line for line in windows)
    assert not [line for line in ops_named(text, "select") if "tensor<2x9x8x3x" in line]   # no full-size mask


def test_a_window_at_a_traced_start_is_one_dynamic_slice_of_its_length():
    f = xlac.compile(lambda x, i: x[i:i + 3] * 2.0)
    x = np.arange(10.0)
    np.testing.assert_array_equal(np.asarray(f(x, 4)), x[4:7] * 2.0)
    text = f.lower(x, 4).as_text()
    window, = ops_named(text, "dynamic_slice")
    assert "slice_sizes = array<i64: 3>" in window
    assert not [line for line in ops_named(text, "select") if "tensor<10x" in line]


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 12), st.integers(-14, 14), st.integers(1, 5), st.integers(1, 3))
def test_a_window_is_numpy_s_slice_or_an_error_where_numpy_s_is_shorter(n, i, length, step):
    def f(x, i):
        return x[i:i + length:step] + 1.0
    x = np.arange(float(n))
    expected = f(x, i)
    full = len(range(0, length, step))
    if length > n or expected.shape[0] == full:       # a window longer than the axis stays a dynamic extent
        if expected.shape[0] == full:
            np.testing.assert_array_equal(np.asarray(xlac.compile(f)(x, i)), expected)
        return
    with pytest.raises(xlac.UnsupportedError, match=f"starts at {i}, where axis 0 of size {n}.*NumPy's slice would "
                                                    "be shorter") as raised:
        xlac.compile(f)(x, i)
    assert f"test_windows.py:{f.__code__.co_firstlineno + 1}" in str(raised.value)


def test_a_loop_whose_windows_run_past_the_end_gives_numpy_s_shorter_slices():
    def moving_sums(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):         # i + 3 passes the end: NumPy's last windows are shorter
            out[i] = x[i:i + 3].sum()
            x[i:i + 2] *= 1.5
            view = x[i + 1:i + 4]
            view += 1.0
        return out, x
    x = np.arange(1.0, 11.0)
    compiled = xlac.compile(moving_sums, loops="roll")
    for got, expected in zip(compiled(x.copy()), moving_sums(x.copy())):
        np.testing.assert_array_equal(np.asarray(got), expected)
    text = compiled.lower(x).as_text()      # a dynamic extent among the window's 3 positions, not all 10
    assert not [line for line in ops_named(text, "select") if "tensor<10x" in line]


def test_a_window_proven_inside_the_axis_needs_no_check():
    def moving_sums(x):
        out = np.zeros(x.shape[0] - 2)
        for i in range(x.shape[0] - 2):
            out[i] = x[i:i + 3].sum()
        return out
    x = np.arange(1.0, 11.0)
    compiled = xlac.compile(moving_sums, loops="roll")
    np.testing.assert_array_equal(np.asarray(compiled(x)), moving_sums(x))
    assert compiled.trace(x).checks == []


@settings(max_examples=10, deadline=None)
@given(st.integers(-9, 9), st.sampled_from(["scalar", "row", "column"]))
def test_writes_into_windows_match_numpy(pos, form):
    def write(cache, xk, pos):
        cache[:2, pos:pos + 3] = xk
        return cache
    cache = np.zeros((3, 8, 2))
    xk = {"scalar": 5.0, "row": np.arange(6.0).reshape(3, 2), "column": np.arange(1.0, 4.0)[:, None]}[form]
    got = cache.copy()
    if len(range(*slice(pos, pos + 3).indices(8))) == 3:
        xlac.compile(write)(got, xk, pos)
        np.testing.assert_array_equal(got, write(cache.copy(), xk, pos))
    else:
        with pytest.raises(xlac.UnsupportedError, match="NumPy's slice would be shorter"):
            xlac.compile(write)(got, xk, pos)


def test_a_write_into_a_window_is_one_dynamic_update_slice_of_its_length():
    def write(out, v, r):
        out[:, r:r + 2] = v
    out, v = np.zeros((3, 6)), np.ones((3, 2))
    lowered = xlac.compile(write).lower(out, v, 1).as_text()
    update, = ops_named(lowered, "dynamic_update_slice")
    assert "tensor<3x2xf64>" in update
    assert not [line for line in ops_named(lowered, "select") if "tensor<3x6x" in line]
    xlac.compile(write)(out, v, 1)
    np.testing.assert_array_equal(out[:, 1:3], 1.0)
    assert out.sum() == 6.0


def test_a_window_with_a_step_and_an_update_through_it():
    def f(x, i):
        x[i:i + 5:2] += 10.0
        x[i + 1:i + 2] *= 3.0
        return x[i:i + 5:2]
    x, y = np.arange(12.0), np.arange(12.0)
    expected = f(x, 2)
    np.testing.assert_array_equal(np.asarray(xlac.compile(f)(y, 2)), expected)
    np.testing.assert_array_equal(y, x)


def test_the_gradient_of_a_window_is_jax_s_of_the_dynamic_slice(x64):
    w = np.array([1.0, -2.0, 0.5])

    def loss(x, i):
        return np.sum(np.sin(x[i:i + 3]) * w)

    def loss_jax(x, i):
        return jnp.sum(jnp.sin(jax.lax.dynamic_slice(x, (i,), (3,))) * w)
    x = np.linspace(0.0, 1.0, 7)
    for i in (0, 2, 4):
        np.testing.assert_allclose(np.asarray(xlac.compile(xlac.grad(loss))(x, i)), jax.grad(loss_jax)(x, i),
                                   rtol=1e-12)


def test_a_window_in_a_rolled_loop_reads_rows_of_a_table():
    def decode(table, positions):
        out = np.zeros((positions.shape[0], table.shape[1]))
        for t in range(positions.shape[0]):
            p = positions[t]
            rows = table[p:p + 2]           # the start is data: checked after the call
            out[t] = rows[0] + rows[1]
        return out
    table = np.arange(24.0).reshape(8, 3)
    positions = np.array([0, 3, 6, 2])
    np.testing.assert_array_equal(np.asarray(xlac.compile(decode)(table, positions)), decode(table, positions))
    with pytest.raises(xlac.UnsupportedError, match=re.escape("starts at 7, where axis 0 of size 8")):
        xlac.compile(decode)(table, np.array([0, 7, 1, 1]))


def test_decode_steps_of_the_numpy_llama_share_one_trace_with_the_position_traced():
    from tests.numpy_llama import Llama, greedy_decode
    model, reference = Llama(), Llama()
    prefill = xlac.compile(model.__call__, static_argnums=(1,))    # np.zeros((L, start_pos)): a static position
    decode = xlac.compile(model.__call__)         # rotary rows and cache writes: windows at the traced position

    def step(tokens, position):
        return (prefill if tokens.shape[1] > 1 else decode)(tokens, position)
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(greedy_decode(step, prompt, 6), greedy_decode(reference.__call__, prompt, 6))
    for layer, own in zip(model.layers, reference.layers):
        np.testing.assert_allclose(layer.attention.cache_v, own.attention.cache_v, rtol=1e-9, atol=1e-12)
    assert decode.cache_info().traces == 1


def test_a_levinson_durbin_loop_flips_shrinking_slices_rolled_as_numpy():
    r = np.exp(-0.1 * np.arange(12.0))
    compiled = xlac.compile(levinson_durbin, loops="roll")
    a, e = compiled(r)
    expected_a, expected_e = levinson_durbin(r)
    np.testing.assert_allclose(np.asarray(a), expected_a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(float(e), expected_e, rtol=1e-12)
    assert {d.decision for d in compiled.trace(r).loop_decisions} == {"rolled"}


def test_strided_windows_of_a_rolled_loop_are_proven_inside_the_axis():
    def pooled(x):
        out = np.zeros((x.shape[0] - 4) // 2 + 1)
        for r in range(out.shape[0]):
            out[r] = x[r * 2:r * 2 + 4].max()
        return out
    x = np.sin(np.arange(15.0))
    compiled = xlac.compile(pooled, loops="roll")
    np.testing.assert_array_equal(np.asarray(compiled(x)), pooled(x))
    assert compiled.trace(x).checks == []
    assert all("slice_sizes = array<i64: 4>" in line for line in ops_named(compiled.lower(x).as_text(), "dynamic_slice"))


def test_the_gradient_of_the_convolution_as_written_is_jax_s_of_its_convolution(x64):
    rng = np.random.default_rng(1)
    img, k, w = rng.normal(size=(2, 7, 6, 2)), rng.normal(size=(3, 3, 2, 3)), rng.normal(size=(2, 5, 4, 3))

    def loss(img, k):
        return np.sum(np.tanh(conv2d_valid(img, k)) * w)

    def loss_jax(img, k):
        out = jax.lax.conv_general_dilated(img, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.tanh(out) * w)
    got = xlac.compile(xlac.grad(loss, argnums=(0, 1)), loops="roll")(img, k)
    for g, expected in zip(got, jax.grad(loss_jax, argnums=(0, 1))(img, k)):
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-10, atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.integers(-7, 7), st.integers(-7, 7))
def test_several_windows_per_index_read_and_write_as_numpy(r, c):
    def f(x, r, c):
        patch = x[r:r + 2, 1, c:c + 3] * 2.0
        x[r:r + 2, 0, c:c + 3] += patch
        return patch.sum(axis=0)
    x = np.arange(60.0).reshape(5, 2, 6)
    got = x.copy()
    if len(range(*slice(r, r + 2).indices(5))) == 2 and len(range(*slice(c, c + 3).indices(6))) == 3:
        expected = x.copy()
        np.testing.assert_array_equal(np.asarray(xlac.compile(f)(got, r, c)), f(expected, r, c))
        np.testing.assert_array_equal(got, expected)
    else:
        with pytest.raises(xlac.UnsupportedError, match="NumPy's slice would be shorter"):
            xlac.compile(f)(got, r, c)
        np.testing.assert_array_equal(got, x)           # the failed check leaves the argument as it was
