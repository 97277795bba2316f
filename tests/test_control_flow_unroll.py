"""xlac.scan's ``unroll`` against jax.lax.scan: values, gradients (jax.grad), vmap; lengths not divisible by
``unroll``, reverse scans, writes and bounds checks in unrolled steps."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp

FEW = settings(max_examples=5, deadline=None)
pytestmark = pytest.mark.usefixtures("x64_module")


def _close(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _loss(np_, lax, unroll, reverse):
    def loss(w, xs):
        carry, (a, b) = lax.scan(lambda c, x: (np_.tanh(c * w + x[0]), (c * x[1], x * c)), 0.25, xs,
                                 reverse=reverse, unroll=unroll)
        return carry + (a * a).sum() + b.sum(), (carry, a, b)
    return loss


@FEW
@given(length=st.integers(0, 9), unroll=st.sampled_from([1, 2, 3, 4, 10, True, False]), reverse=st.booleans())
def test_unrolled_scans_equal_jax_with_gradients_and_vmap(length, unroll, reverse):
    xs = np.linspace(-1.0, 2.0, 2 * length).reshape(length, 2)
    mine, theirs = _loss(xnp, xlac, unroll, reverse), _loss(jnp, jax.lax, unroll, reverse)
    got, expected = xlac.compile(mine)(0.8, xs)[1], theirs(0.8, xs)[1]
    for g, e in zip(got, expected):
        _close(g, e)
    grads = xlac.grad(lambda w, xs: mine(w, xs)[0], argnums=(0, 1))(0.8, xs)
    for g, e in zip(grads, jax.grad(lambda w, xs: theirs(w, xs)[0], argnums=(0, 1))(0.8, xs)):
        _close(g, e)
    ws = np.array([0.5, -1.0, 1.5])
    _close(xlac.vmap(lambda w: mine(w, xs)[0])(ws), jax.vmap(lambda w: theirs(w, xs)[0])(ws))


def test_unroll_puts_that_many_steps_in_each_iteration_and_true_leaves_no_loop():
    xs = np.arange(10.0)

    def program(unroll):
        return xlac.compile(lambda xs: xlac.scan(lambda c, x: (xnp.sin(c) + x, c), 0.0, xs, unroll=unroll)
                            ).lower(xs).ir()

    def loops_and_sines(graph):
        loops = [node for node in graph.nodes if node.primitive.name == "while"]
        return len(loops), [loop.subgraphs[1].op_counts().get("sin", 0) for loop in loops], \
            graph.op_counts().get("sin", 0) - sum(loop.subgraphs[1].op_counts().get("sin", 0) for loop in loops)
    assert loops_and_sines(program(1)) == (1, [1], 0)
    assert loops_and_sines(program(3)) == (1, [3], 1)       # 3 iterations of 3 steps, then the 10th step
    assert loops_and_sines(program(True)) == (0, [], 10)


def test_unrolled_steps_write_into_an_argument_and_check_indices_as_numpy():
    def f(x, idx):
        def step(c, i):
            x[i] = c
            return c + 1.0, x[i - 1]
        return xlac.scan(step, 1.0, idx, unroll=2)
    x = np.zeros(4)
    carry, ys = xlac.compile(f)(x, np.array([0, 1, 2]))
    _close(x, np.array([1.0, 2.0, 3.0, 0.0]))
    _close(ys, np.array([0.0, 1.0, 2.0]))
    x = np.zeros(4)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 4") as raised:
        xlac.compile(f)(x, np.array([0, 1, 7]))          # the third step: after the loop, unrolled
    assert "test_control_flow_unroll.py" in str(raised.value)
    _close(x, np.array([1.0, 2.0, 0.0, 0.0]))


@pytest.mark.parametrize("unroll", [0, -2, 1.5])
def test_a_bad_unroll_is_a_clear_error(unroll):
    with pytest.raises(ValueError, match="scan: unroll must be a positive integer or a bool") as raised:
        xlac.compile(lambda xs: xlac.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=unroll))(np.ones(3))
    assert "test_control_flow_unroll.py" in str(raised.value)
