"""Reverse mode through loops with a known trip count: the forward loop keeps what each iteration's backward
pass reads (JAX's scan residuals), or with ``checkpoint=True`` the carries, evaluating iterations again.
Gradients against jax.grad, vmap of them against jax.vmap."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp

FEW = settings(max_examples=6, deadline=None)
pytestmark = pytest.mark.usefixtures("x64_module")


def _close(got, expected):
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-12)


def _model(np_, lax, steps, nested, branch, reverse, checkpoint):
    """A scan whose step holds a matmul, a loop over a known range, a conditional and a value of the
    invariants only (``np_``/``lax``: xlac.numpy and xlac, or jax.numpy and jax.lax)."""
    kw = {"checkpoint": checkpoint} if lax is xlac else {}

    def loss(w, xs, h0):
        def step(h, x):
            scale = np_.cos(w).sum()                       # depends on no carry
            h = np_.tanh(h @ w + x * scale)
            if nested:
                h = lax.fori_loop(0, nested, lambda i, v: v * 0.9 + np_.sin(v) * x[i % x.shape[0]], h, **kw)
            if branch:
                h = lax.cond(h.sum() > 0, lambda v: v * v, lambda v: -v * 2.0, h)
            return h, (h * x).sum()
        h, ys = lax.scan(step, h0, xs, reverse=reverse, **kw)
        return (h * h).sum() + (ys * ys).sum()
    return loss


@FEW
@given(steps=st.integers(1, 5), nested=st.integers(0, 3), branch=st.booleans(), reverse=st.booleans(),
       checkpoint=st.booleans())
def test_gradients_through_scans_with_nested_loops_and_branches_equal_jax(steps, nested, branch, reverse, checkpoint):
    rng = np.random.default_rng(steps * 7 + nested)
    w, xs, h0 = rng.standard_normal((3, 3)) / 2, rng.standard_normal((steps, 3)), rng.standard_normal(3)
    mine = _model(xnp, xlac, steps, nested, branch, reverse, checkpoint)
    theirs = _model(jnp, jax.lax, steps, nested, branch, reverse, checkpoint)
    got = xlac.grad(mine, argnums=(0, 1, 2))(w, xs, h0)
    _close(got, jax.grad(theirs, argnums=(0, 1, 2))(w, xs, h0))
    assert float(xlac.compile(mine)(w, xs, h0)) == pytest.approx(float(theirs(w, xs, h0)), rel=1e-12)


def _rnn(np_, lax, checkpoint=False):
    kw = {"checkpoint": checkpoint} if lax is xlac else {}

    def loss(w, xs, h0):
        h, hs = lax.scan(lambda h, x: (np_.tanh(h @ w + x), h), h0, xs, **kw)
        return (h * h).sum() + hs.sum()
    return loss


def _loops_of(graph):
    return [node for node in graph.nodes if node.primitive.name == "while"]


@pytest.mark.parametrize("checkpoint", [False, True])
def test_the_backward_loop_evaluates_the_body_again_only_when_checkpointed(checkpoint):
    rng = np.random.default_rng(0)
    w, xs, h0 = rng.standard_normal((8, 8)) / 3, rng.standard_normal((20, 4, 8)), np.zeros((4, 8))
    grad = xlac.grad(_rnn(xnp, xlac, checkpoint), argnums=(0, 1, 2))
    _close(grad(w, xs, h0), jax.grad(_rnn(jnp, jax.lax), argnums=(0, 1, 2))(w, xs, h0))
    forward_loop, backward_loop = _loops_of(xlac.compile(grad).lower(w, xs, h0).ir())
    assert backward_loop.subgraphs[1].op_counts().get("tanh", 0) == (1 if checkpoint else 0)
    stacked = sorted(v.type.shape for v in forward_loop.results if v.type.shape[:1] == (20,))
    # the tape: the carry h, the tanh and the loop index (scan's own ys buffer hs too); never a stack of
    # the (20, 4, 8) buffer per iteration
    assert all(len(shape) <= 3 for shape in stacked), stacked
    if checkpoint:
        assert stacked == [(20,), (20, 2), (20, 4, 8), (20, 4, 8)]    # the index, the checks status, h, hs


def test_fori_loop_checkpoint_gives_jaxs_gradients():
    def mine(w, x, checkpoint):
        return xlac.fori_loop(0, 6, lambda i, v: xnp.sin(v * w) + x[i % 3] * v, x, checkpoint=checkpoint).sum()

    def theirs(w, x):
        return jax.lax.fori_loop(0, 6, lambda i, v: jnp.sin(v * w) + x[i % 3] * v, x).sum()
    x = np.array([0.3, -0.2, 0.9])
    expected = jax.grad(theirs, argnums=(0, 1))(0.7, x)
    for checkpoint in (False, True):
        _close(xlac.grad(lambda w, x: mine(w, x, checkpoint), argnums=(0, 1))(0.7, x), expected)


def test_vmap_of_the_gradient_of_a_scan_equals_jax():
    rng = np.random.default_rng(1)
    ws, xs, h0 = rng.standard_normal((3, 4, 4)) / 2, rng.standard_normal((5, 2, 4)), rng.standard_normal((2, 4))
    for checkpoint in (False, True):
        got = xlac.vmap(xlac.grad(_rnn(xnp, xlac, checkpoint)), in_axes=(0, None, None))(ws, xs, h0)
        expected = jax.vmap(jax.grad(_rnn(jnp, jax.lax)), in_axes=(0, None, None))(ws, xs, h0)
        _close([got], [expected])


def test_second_derivatives_through_a_fori_loop_equal_jax():
    def mine(w):
        return xlac.fori_loop(0, 4, lambda i, v: xnp.sin(v) * w + 0.1 * i, 0.5)

    def theirs(w):
        return jax.lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * w + 0.1 * i, 0.5)
    _close([xlac.grad(xlac.grad(mine))(1.3)], [jax.grad(jax.grad(theirs))(1.3)])


def test_the_gradient_of_a_loop_writing_rows_into_a_buffer_equals_jax_at_set():
    def mine(x):
        buf = xnp.zeros((4, 3))

        def body(i, v):
            buf[i] = v * x[i]
            return xnp.tanh(v + buf[i])
        v = xlac.fori_loop(0, 4, body, x[0])
        return (buf ** 2).sum() + v.sum()

    def theirs(x):
        def body(i, state):
            buf, v = state
            buf = buf.at[i].set(v * x[i])
            return buf, jnp.tanh(v + buf[i])
        buf, v = jax.lax.fori_loop(0, 4, body, (jnp.zeros((4, 3)), x[0]))
        return (buf ** 2).sum() + v.sum()
    x = np.random.default_rng(2).standard_normal((4, 3))
    _close([xlac.grad(mine)(x)], [jax.grad(theirs)(x)])


def test_boolean_residuals_and_integer_carries_equal_jax():
    def model(np_, lax):
        def loss(w, xs):
            def step(c, x):
                h, k = c
                h = np_.maximum(h @ w + x, 0.0) + np_.where(h > 0.5, h, 0.0)     # masks kept per iteration
                return (h, k + 1), h[0] * k
            (h, _), ys = lax.scan(step, (np_.ones(3), 0), xs)
            return h.sum() + ys.sum()
        return loss
    rng = np.random.default_rng(3)
    w, xs = rng.standard_normal((3, 3)), rng.standard_normal((6, 3))
    _close(xlac.grad(model(xnp, xlac), argnums=(0, 1))(w, xs), jax.grad(model(jnp, jax.lax), argnums=(0, 1))(w, xs))
