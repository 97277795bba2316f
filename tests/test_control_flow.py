"""xlac.fori_loop, while_loop, cond, switch and scan against jax.lax (values) and NumPy (values and dtypes)."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp

FEW = settings(max_examples=8, deadline=None)
DTYPES = [np.float32, np.float64, np.int32]


pytestmark = pytest.mark.usefixtures("x64_module")


def _same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if got.dtype == np.float32 else 1e-12)


# ---------------------------------------------------------------- fori_loop


@FEW
@given(lower=st.integers(-3, 4), upper=st.integers(-3, 12), size=st.integers(1, 4),
       dtype=st.sampled_from(DTYPES), unroll=st.sampled_from([1, 2, 3, True]))
def test_fori_loop_matches_a_python_loop_and_jax(lower, upper, size, dtype, unroll):
    x = np.arange(1, size + 1).astype(dtype)

    def body(i, v):
        return v * 2 - i + x

    expected = x.copy()
    for i in range(lower, upper):
        expected = body(i, expected)
    got = xlac.compile(lambda x0: xlac.fori_loop(lower, upper, body, x0, unroll=unroll))(x)
    _same(got, expected)
    _same(got, jax.lax.fori_loop(lower, upper, lambda i, v: v * 2 - i + x, jnp.asarray(x)))


@FEW
@given(upper=st.integers(-2, 9))
def test_fori_loop_with_a_traced_trip_count(upper):
    f = xlac.compile(lambda n, v: xlac.fori_loop(0, n, lambda i, acc: acc * 1.5 + i, v))
    _same(f(upper, np.float32(1.0)), jax.lax.fori_loop(0, upper, lambda i, acc: acc * 1.5 + i, np.float32(1.0)))


def test_a_weak_scalar_carry_takes_the_dtype_the_body_gives_it_as_numpy():
    x = np.arange(5, dtype=np.float32)
    total = xlac.compile(lambda x: xlac.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i], 0))(x)
    expected = 0
    for i in range(5):
        expected = expected + x[i]
    _same(total, np.asarray(expected))


def test_a_loops_program_does_not_grow_with_its_trip_count():
    def text(n):
        return xlac.compile(lambda v: xlac.fori_loop(0, n, lambda i, a: a * 0.5 + 1.0, v)).lower(1.0).as_text()
    short, long = text(50), text(5000)
    assert len(long.splitlines()) == len(short.splitlines())
    assert "stablehlo.while" in long
    np.testing.assert_allclose(float(xlac.compile(lambda v: xlac.fori_loop(0, 5000, lambda i, a: a * 0.5 + 1.0,
                                                                            v))(1.0)), 2.0)


# ---------------------------------------------------------------- while_loop


@FEW
@given(start=st.integers(1, 60))
def test_while_loop_matches_jax_with_a_pytree_carry(start):
    def cond_fun(state):
        return state["n"] != 1

    def body_fun(state):
        n, steps = state["n"], state["steps"]
        odd = n % 2 == 1
        return {"n": xnp.where(odd, 3 * n + 1, n // 2), "steps": steps + 1}

    def jax_body(state):
        n, steps = state["n"], state["steps"]
        return {"n": jnp.where(n % 2 == 1, 3 * n + 1, n // 2), "steps": steps + 1}

    init = {"n": np.int64(start), "steps": np.int64(0)}
    got = xlac.compile(lambda s: xlac.while_loop(cond_fun, body_fun, s))(init)
    expected = jax.lax.while_loop(cond_fun, jax_body, init)
    _same(got["n"], expected["n"])
    _same(got["steps"], expected["steps"])


def test_while_loop_runs_eagerly_too():
    assert int(xlac.while_loop(lambda v: v < 100, lambda v: v * 3, 1)) == 243


def test_a_body_reads_arrays_of_the_enclosing_function_and_outside_arrays_per_call():
    weights = xlac.asarray(np.array([1.0, 2.0]))

    @xlac.compile
    def f(x):
        return xlac.fori_loop(0, 3, lambda i, v: v + x * weights, np.zeros(2))
    _same(f(np.ones(2)), np.array([3.0, 6.0]))
    weights[...] = np.array([10.0, 0.0])
    _same(f(np.ones(2)), np.array([30.0, 0.0]))


def test_an_index_out_of_bounds_in_a_loop_body_raises_after_the_call():
    f = xlac.compile(lambda x, n: xlac.fori_loop(0, n, lambda i, acc: acc + x[i], 0.0))
    assert float(f(np.arange(4.0), 4)) == 6.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        f(np.arange(4.0), 6)


# ---------------------------------------------------------------- cond and switch


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_traces_both_branches_once_and_runs_one(sign):
    traced = []

    def true_fun(v):
        traced.append("true")
        return v * 2, v.sum()

    def false_fun(v):
        traced.append("false")
        return -v, v.max()

    f = xlac.compile(lambda x: xlac.cond(x.sum() > 0, true_fun, false_fun, x))
    x = sign * np.array([1.0, 2.0])
    got = f(x)
    expected = jax.lax.cond(x.sum() > 0, lambda v: (v * 2, v.sum()), lambda v: (-v, v.max()), x)
    _same(got[0], expected[0])
    _same(got[1], expected[1])
    assert sorted(traced) == ["false", "true"]


@given(index=st.integers(-3, 6))
@settings(max_examples=5, deadline=None)
def test_switch_clamps_its_index_as_jax(index):
    branches = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: v - 100.0]
    f = xlac.compile(lambda i, x: xlac.switch(i, branches, x))
    _same(f(np.int32(index), np.float64(2.0)), jax.lax.switch(np.int32(index), branches, np.float64(2.0)))


def test_an_index_out_of_bounds_in_the_second_branch_names_its_own_check():
    f = xlac.compile(lambda p, x, i: xlac.cond(p, lambda: x[i] * 2, lambda: x[i + 10], ))
    assert float(f(True, np.arange(3.0), 1)) == 2.0
    with pytest.raises(IndexError, match="index 11 is out of bounds for axis 0 with size 3"):
        f(False, np.arange(3.0), 1)


# ---------------------------------------------------------------- scan


@FEW
@given(length=st.integers(0, 7), reverse=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]))
def test_scan_matches_jax(length, reverse, dtype):
    xs = {"a": np.arange(length * 2, dtype=dtype).reshape(length, 2), "b": np.linspace(0, 1, length).astype(dtype)}

    def f(carry, x):
        carry = carry * 0.5 + x["a"].sum() * x["b"]
        return carry, (carry, x["a"] * carry)

    init = dtype(1.0)
    got = xlac.compile(lambda c, x: xlac.scan(f, c, x, reverse=reverse))(init, xs)
    expected = jax.lax.scan(f, init, xs, reverse=reverse)
    _same(got[0], expected[0])
    _same(got[1][0], expected[1][0])
    _same(got[1][1], expected[1][1])


def test_scan_over_a_length_only():
    got = xlac.compile(lambda c: xlac.scan(lambda c, _: (c + 1, c * c), c, length=4))(np.int64(2))
    expected = jax.lax.scan(lambda c, _: (c + 1, c * c), np.int64(2), length=4)
    _same(got[0], expected[0])
    _same(got[1], expected[1])


# ---------------------------------------------------------------- the IR and errors


def test_the_printed_ir_nests_bodies_with_their_lines():
    def body(i, v):
        return v * 2.0

    text = str(xlac.compile(lambda v: xlac.fori_loop(0, 3, body, v)).trace(1.0).ir("final"))
    assert "while[n_carries=3 trip_count=3]" in text
    line = body.__code__.co_firstlineno + 1
    assert f"test_control_flow.py:{line} multiply" in text


def test_a_carry_that_changes_dtype_names_the_carry_and_the_body():
    def body(v):
        return (v[0] + 1, v[1].astype(np.float32))

    with pytest.raises(TypeError, match=r"the carry init_val\[1\] is f64\[\] going in and f32\[\] coming out"
                                        r"(.|\n)*test_control_flow.py"):
        xlac.compile(lambda: xlac.while_loop(lambda v: v[0] < 3, body, (0, np.float64(1.0))))()


def test_branches_with_different_outputs_are_refused():
    with pytest.raises(TypeError, match=r"output is f64\[2\] in branch 0 and f64\[3\] in branch 1"):
        xlac.compile(lambda p, x: xlac.cond(p, lambda v: v[:3], lambda v: v[:2], x))(True, np.zeros(4))


def test_a_body_writes_into_an_argument_in_place_as_numpy():
    def f(x, v):
        def body(i, acc):
            x[i] = acc
            x[i + 1] += v
            return acc + 1.0
        return xlac.fori_loop(0, 3, body, 0.5)

    x = np.zeros(5)
    expected_x = x.copy()
    acc = 0.5
    for i in range(3):
        expected_x[i] = acc
        expected_x[i + 1] += 2.0
        acc += 1.0
    got = xlac.compile(f)(x, 2.0)
    _same(got, np.float64(acc))
    _same(x, expected_x)


def test_a_body_writes_into_an_outside_array_and_the_next_call_sees_it():
    buffer = xlac.asarray(np.zeros(4))

    def g(v):
        def body(i, acc):
            buffer[i] += acc
            return acc + v
        return xlac.fori_loop(0, 3, body, 1.0)
    f = xlac.compile(g)
    f(1.0)
    f(1.0)
    _same(buffer, np.array([2.0, 4.0, 6.0, 0.0]))


@pytest.mark.parametrize("pred", [True, False])
def test_a_branch_writes_into_an_argument_the_other_leaves_alone(pred):
    def f(p, x):
        def write():
            x[1:] *= 10.0
            return x.sum()
        return xlac.cond(p, write, lambda: x.sum() * 0.0)
    x = np.arange(3.0)
    expected = np.arange(3.0)
    if pred:
        expected[1:] *= 10.0
    got = xlac.compile(f)(pred, x)
    _same(x, expected)
    _same(got, np.float64(expected.sum() if pred else 0.0))


def test_scan_and_nested_loops_write_into_an_argument():
    def f(grid, xs):
        def row(i, _):
            def col(j, __):
                grid[i, j] = i * 10 + j
                return __
            return xlac.fori_loop(0, grid.shape[1], col, _)
        xlac.fori_loop(0, grid.shape[0], row, 0)

        def step(c, x):
            grid[0, 0] += x
            return c + x, c
        return xlac.scan(step, 0.0, xs)
    grid = np.zeros((2, 3))
    carry, ys = xlac.compile(f)(grid, np.array([1.0, 2.0]))
    expected = np.array([[0.0, 1, 2], [10, 11, 12]])
    expected[0, 0] += 3.0
    _same(grid, expected)
    _same(carry, np.float64(3.0))
    _same(ys, np.array([0.0, 1.0]))


def test_a_failed_check_in_iteration_k_leaves_the_writes_before_it_as_numpy():
    def f(x, idx):
        def body(i, acc):
            x[i] = idx[i] * 1.0
            return acc + x[idx[i]]
        return xlac.fori_loop(0, 4, body, 0.0)
    x = np.zeros(4)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        xlac.compile(f)(x, np.array([1, 0, 9, 2]))
    _same(x, np.array([1.0, 0.0, 9.0, 0.0]))      # NumPy wrote x[2] = 9.0, then x[9] raised


def test_a_body_writes_through_views_of_an_enclosing_array_and_reads_others():
    """Views made outside the body (a row, a column, a head) are views inside it too: a write through one
    shows through the others and in the array, iteration after iteration, as in NumPy."""
    def program(xp, fori_loop, x):
        head, row, column = x[:2, :2], x[1], x[:, 0]
        def body(i, acc):
            row[i] += acc
            column[i] *= 2.0
            x[2, i] = head.sum()
            return acc + x[1, 0] + head[1, 1]
        return fori_loop(0, 3, body, 0.5)

    def numpy_loop(lower, upper, body, acc):
        for i in range(lower, upper):
            acc = body(i, acc)
        return acc
    x, expected_x = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    expected = program(np, numpy_loop, expected_x)
    out = xlac.compile(lambda x: program(xnp, xlac.fori_loop, x))(x)
    _same(float(out), expected)
    _same(x, expected_x)


def test_a_branch_writes_through_a_view_and_the_loop_reads_the_array():
    def f(x, flags):
        first = x[0]
        def body(i, total):
            def bump(_):
                first[i] += 10.0
                return 0.0
            xlac.cond(flags[i] > 0, bump, lambda _: 0.0, 0.0)
            return total + x[0].sum()
        return xlac.fori_loop(0, 3, body, 0.0)
    x, flags = np.ones((2, 3)), np.array([1, 0, 1])
    out = xlac.compile(f)(x, flags)
    expected_x, total = np.ones((2, 3)), 0.0
    for i in range(3):
        if flags[i] > 0:
            expected_x[0, i] += 10.0
        total += expected_x[0].sum()
    _same(float(out), total)
    _same(x, expected_x)


def test_a_transform_may_not_write_into_enclosing_arrays():
    def f(x, buf):
        def inner(y):
            buf[0] = y.sum()
            return (y * 2).sum()
        return xlac.grad(inner)(x)
    with pytest.raises(xlac.UnsupportedError, match="inside a transformed function"):
        xlac.compile(f)(np.ones(3), np.zeros(2))


def test_a_body_may_write_into_its_own_carry():
    def body(i, v):
        v[i] = i * 2.0
        return v
    _same(xlac.compile(lambda v: xlac.fori_loop(0, 3, body, v))(np.zeros(4)), np.array([0.0, 2.0, 4.0, 0.0]))


# ---------------------------------------------------------------- transforms


@FEW
@given(trips=st.integers(0, 6), w=st.floats(-1.5, 1.5), reverse=st.booleans())
def test_gradients_through_fori_loop_and_scan_equal_jax(trips, w, reverse):
    x = np.linspace(-1.0, 2.0, max(trips, 1))

    def loop(w, x):
        return xlac.fori_loop(0, trips, lambda i, v: xnp.sin(v) * w + x[i] * w, 0.5)

    def jax_loop(w, x):
        return jax.lax.fori_loop(0, trips, lambda i, v: jnp.sin(v) * w + x[i] * w, 0.5)

    def scanned(w, x):
        c, ys = xlac.scan(lambda c, xi: (xnp.tanh(c * w + xi), c * xi), 0.1, x, reverse=reverse)
        return c + ys.sum()

    def jax_scanned(w, x):
        c, ys = jax.lax.scan(lambda c, xi: (jnp.tanh(c * w + xi), c * xi), 0.1, x, reverse=reverse)
        return c + ys.sum()
    for mine, theirs in ((loop, jax_loop), (scanned, jax_scanned)):
        got = xlac.grad(mine, argnums=(0, 1))(w, x)
        expected = jax.grad(theirs, argnums=(0, 1))(w, jnp.asarray(x))
        np.testing.assert_allclose(float(got[0]), float(expected[0]), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(expected[1]), rtol=1e-9, atol=1e-12)
        tangent = xlac.jvp(mine, (w, x), (1.0, np.ones_like(x)))[1]
        np.testing.assert_allclose(float(tangent), float(jax.jvp(theirs, (w, jnp.asarray(x)),
                                                                 (1.0, jnp.ones_like(x)))[1]), rtol=1e-9, atol=1e-12)


def test_gradients_through_an_in_place_loop_equal_jax_with_at_set():
    def f(x):
        y = x * 1.0
        def body(i, acc):
            y[i + 1] = y[i] * y[i + 1] + acc
            return acc + y[i]
        acc = xlac.fori_loop(0, 3, body, 0.0)
        return (y ** 2).sum() + acc

    def jax_f(x):
        def body(i, state):
            y, acc = state
            y = y.at[i + 1].set(y[i] * y[i + 1] + acc)
            return y, acc + y[i]
        y, acc = jax.lax.fori_loop(0, 3, body, (x, 0.0))
        return (y ** 2).sum() + acc
    x = np.array([0.5, 1.5, -0.7, 2.0])
    np.testing.assert_allclose(np.asarray(xlac.grad(f)(x)), np.asarray(jax.grad(jax_f)(x)), rtol=1e-12)


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_gradients_and_tangents_through_cond_equal_jax(p):
    def f(p, v):
        return xlac.cond(p > 0, lambda a: a * a * 3, lambda a: xnp.exp(a), v)

    def jax_f(p, v):
        return jax.lax.cond(p > 0, lambda a: a * a * 3, lambda a: jnp.exp(a), v)
    np.testing.assert_allclose(float(xlac.grad(f, argnums=1)(p, 2.0)), float(jax.grad(jax_f, argnums=1)(p, 2.0)))
    np.testing.assert_allclose(float(xlac.jvp(f, (p, 2.0), (0.0, 1.0))[1]),
                               float(jax.jvp(jax_f, (p, 2.0), (0.0, 1.0))[1]))


def test_reverse_mode_through_a_while_loop_is_a_clear_error():
    def f(w):
        return xlac.while_loop(lambda v: v < 10, lambda v: v * w, 1.0)
    with pytest.raises(xlac.UnsupportedError, match="xlac.fori_loop with Python int bounds, or xlac.scan"):
        xlac.grad(f)(2.0)


def test_vmap_of_cond_and_of_while_loop_equal_jax():
    ps, xs = np.array([1.0, -2.0, 3.0]), np.array([2.0, 3.0, 4.0])

    def f(p, v):
        return xlac.cond(p > 0, lambda a: a * a * 3, lambda a: xnp.exp(a), v)

    def jax_f(p, v):
        return jax.lax.cond(p > 0, lambda a: a * a * 3, lambda a: jnp.exp(a), v)
    _same(xlac.vmap(f)(ps, xs), jax.vmap(jax_f)(ps, xs))
    _same(xlac.vmap(f, in_axes=(None, 0))(1.0, xs), jax.vmap(jax_f, in_axes=(None, 0))(1.0, xs))

    def w(v):
        return xlac.while_loop(lambda c: c[0] < 100, lambda c: (c[0] * 3, c[1] + 1), (v, 0))

    def jax_w(v):
        return jax.lax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] * 3, c[1] + 1), (v, 0))
    starts = np.array([1.0, 5.0, 50.0, 200.0])
    got, expected = xlac.vmap(w)(starts), jax.vmap(jax_w)(starts)
    _same(got[0], expected[0])
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(expected[1]))

    def loop(w, x):
        return xlac.fori_loop(0, 4, lambda i, v: xnp.sin(v) * w + x[i], 0.5)

    def jax_loop(w, x):
        return jax.lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * w + x[i], 0.5)
    grid = np.arange(12.0).reshape(3, 4)
    _same(xlac.vmap(loop, in_axes=(None, 0))(1.3, grid), jax.vmap(jax_loop, in_axes=(None, 0))(1.3, grid))
    _same(xlac.vmap(xlac.grad(loop), in_axes=(0, None))(ps, grid[0]),
          jax.vmap(jax.grad(jax_loop), in_axes=(0, None))(ps, jnp.asarray(grid[0])))


def test_autocast_reaches_contractions_inside_a_loop_body():
    def f(a, b):
        with xlac.autocast(dtype="bfloat16"):
            return xlac.fori_loop(0, 2, lambda i, acc: acc + a @ b, np.zeros((4, 4), np.float32))
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    traced = xlac.compile(f).trace(a, a)
    text = str(traced.ir("final"))
    assert "bf16[4,4]" in text and "dot_general" in text
    np.testing.assert_allclose(np.asarray(xlac.compile(f)(a, a)), 2 * a @ a, rtol=0.05, atol=0.1)


def test_a_row_written_per_iteration_updates_the_argument_buffer_without_a_copy():
    @xlac.compile
    def fill(cache, rows):
        def body(i, unused):
            cache[i] = rows[i]
            return unused
        xlac.fori_loop(0, rows.shape[0], body, 0)
    cache = xlac.asarray(np.zeros((4096, 256), np.float32))
    rows = xlac.asarray(np.ones((64, 256), np.float32))
    compiled = fill.lower(cache, rows).compile()
    hlo = compiled.as_text()
    assert re.search(r"input_output_alias=\{ \{\d*\}: \(0,", hlo)      # the cache is an output aliasing its argument
    assert not [line for line in hlo.splitlines() if "f32[4096,256]" in line and " copy(" in line]
    assert compiled.memory_analysis()["temp_size_in_bytes"] < 4096 * 256 * 4
    fill(cache, rows)
    expected = np.zeros((4096, 256), np.float32)
    expected[:64] = 1.0
    _same(cache, expected)


def test_views_and_copies_of_an_enclosing_array_inside_a_body_are_numpys():
    def body_of(x):
        def body(i, acc):
            old = x.copy()
            tail = x[2:]
            tail[0] = acc                       # a write through a view of the argument
            x[i] += 1.0
            return acc + old.sum() + np.diagonal(x.reshape(2, 2)).sum()
        return body

    def numpy_program(x):
        acc = 5.0
        body = body_of(x)
        for i in range(3):
            acc = body(i, acc)
        return acc

    expected_x = np.zeros(4)
    expected = numpy_program(expected_x)
    x = np.zeros(4)
    got = xlac.compile(lambda x: xlac.fori_loop(0, 3, body_of(x), 5.0))(x)
    _same(got, np.float64(expected))
    _same(x, expected_x)


@pytest.mark.usefixtures("xla_defaults")
def test_the_inplace_report_covers_writes_inside_bodies():
    def fill(cache, rows):
        def body(i, unused):
            cache[i] = rows[i]
            return unused
        xlac.fori_loop(0, rows.shape[0], body, 0)
    report = xlac.compile(fill).trace(np.zeros((8, 4)), np.ones((3, 4))).inplace_report()
    line = fill.__code__.co_firstlineno + 2
    assert [(w.location.line, w.array, w.op, w.in_place) for w in report if w.op != "while"] == \
        [(line, "cache f64[8,4]", "dynamic_update_slice", True)]


@pytest.mark.parametrize("call, error, message", [
    (lambda x: xlac.cond(x, lambda v: v, lambda v: -v, x), TypeError, r"cond: the predicate must be a scalar, got f64\[3\]"),
    (lambda x: xlac.switch(x[0], [lambda v: v], x), TypeError, r"switch: the index must be an integer scalar, got f64\[\]"),
    (lambda x: xlac.switch(0, [], x), ValueError, "switch: branches must hold at least one function"),
    (lambda x: xlac.fori_loop(0.0, 3, lambda i, v: v, x), TypeError, "fori_loop: the bounds must be integers"),
    (lambda x: xlac.while_loop(lambda v: v, lambda v: v, x), TypeError,
     r"while_loop: cond_fun must return a boolean scalar, got f64\[3\]"),
    (lambda x: xlac.scan(lambda c, e: c, 0.0, x), TypeError, r"scan: f must return a pair \(carry, y\)"),
    (lambda x: xlac.scan(lambda c, e: (c, e), 0.0, x, length=5), ValueError,
     r"scan: the leading axes of xs and length disagree: \[3, 5\]"),
])
def test_bad_arguments_raise_clear_errors_at_the_users_line(call, error, message):
    with pytest.raises(error, match=message) as raised:
        xlac.compile(call)(np.ones(3))
    assert "test_control_flow.py" in str(raised.value)


SEEN = []


def _appending_body(i, c):
    SEEN.append(c)
    return c + 1


def _scan_appending(x):
    def step(c, _):
        return _appending_body(0, c), c
    return xlac.scan(step, x, None, length=3)[0]


def _while_appending(x):
    def more(c):
        return c < 3

    def body(c):
        return _appending_body(0, c)
    return xlac.while_loop(more, body, x)


def test_a_loop_body_that_leaves_a_traced_value_in_a_global_list_is_refused_and_the_list_restored():
    # The body itself (fori_loop) or a function it calls (converted code notes the state each reaches).
    for run in (lambda x: xlac.fori_loop(0, 3, _appending_body, x), _scan_appending, _while_appending):
        SEEN.clear()
        with pytest.raises(xlac.RebindingError, match=r"traced array f64\[\] in SEEN\[0\]"):
            xlac.compile(run)(1.0)
        assert SEEN == []
