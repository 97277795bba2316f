"""The VJP and JVP rules of the math primitives (xlac.passes.rules.elementwise, .reductions) and the engines that
run them.

Each primitive, bound directly through xlac.trace.ops, is differentiated with xlac.vjp / xlac.jvp inside one
compiled program and compared with jax.vjp / jax.jvp of the same jax.lax op (float64), and the JVP with
central finite differences; the VJP is also checked against the JVP by <ct, J t> == <J^T ct, t>.
"""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.differentiate import grad, jvp, vjp
from xlac.ir import CATALOG
from xlac.ir import primitives as P
from xlac.trace import ops
from xlac.trace.context import Trace
from xlac.function_graph import trace_subgraph
from xlac.passes.autodiff import linearize_reverse

F64 = np.float64
FEW = settings(max_examples=2)


pytestmark = pytest.mark.usefixtures("x64_module")


def _program(xfn, n_args):
    def program(args, ct, tangents):
        out, vjp_fn = vjp(xfn, *args)
        _, t_out = jvp(xfn, tuple(args), tuple(tangents))
        return out, vjp_fn(ct), t_out
    return xlac.compile(program)


def check_rule(xfn, jfn, args, *, finite_differences=True, rng=None, transpose_rtol=1e-9):
    """xlac's vjp/jvp of ``xfn`` against jax's of ``jfn`` on float64 ``args``; then finite differences."""
    rng = rng or np.random.default_rng(1)
    args = [np.asarray(a, F64) for a in args]
    j_out, j_vjp = jax.vjp(jfn, *args)
    ct = rng.standard_normal(np.shape(j_out))
    tangents = [rng.standard_normal(a.shape) for a in args]
    out, cts, t_out = _program(xfn, len(args))(args, ct, tangents)
    np.testing.assert_allclose(np.asarray(out), np.asarray(j_out), rtol=1e-12, atol=1e-12)
    for got, expected in zip(cts, j_vjp(ct)):
        assert np.asarray(got).dtype == F64
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-9, atol=1e-12)
    _, j_t = jax.jvp(jfn, tuple(args), tuple(tangents))
    np.testing.assert_allclose(np.asarray(t_out), np.asarray(j_t), rtol=1e-9, atol=1e-12)
    # the VJP is the transpose of the JVP
    lhs = float(np.sum(ct * np.asarray(t_out)))
    rhs = float(sum(np.sum(np.asarray(c) * t) for c, t in zip(cts, tangents)))
    np.testing.assert_allclose(lhs, rhs, rtol=transpose_rtol, atol=transpose_rtol)
    if finite_differences:
        eps = 1e-6
        plus = np.asarray(jfn(*[a + eps * t for a, t in zip(args, tangents)]))
        minus = np.asarray(jfn(*[a - eps * t for a, t in zip(args, tangents)]))
        np.testing.assert_allclose(np.asarray(t_out), (plus - minus) / (2 * eps), rtol=1e-4, atol=1e-5)


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
POSITIVE = {"log", "sqrt", "rsqrt", "log1p", "cbrt"}
UNARY = ["neg", "abs", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "tanh", "logistic",
         "sin", "cos", "tan", "erf"]
JAX_UNARY = {"neg": jax.lax.neg, "abs": jax.lax.abs, "exp": jax.lax.exp, "expm1": jax.lax.expm1,
             "log": jax.lax.log, "log1p": jax.lax.log1p, "sqrt": jax.lax.sqrt, "rsqrt": jax.lax.rsqrt,
             "cbrt": jax.lax.cbrt, "tanh": jax.lax.tanh, "logistic": jax.lax.logistic, "sin": jax.lax.sin,
             "cos": jax.lax.cos, "tan": jax.lax.tan, "erf": jax.lax.erf}


def _values(rng, shape, name=""):
    if name in POSITIVE:
        return rng.uniform(0.5, 2.0, shape)
    return rng.uniform(-1.2, 1.2, shape) + np.where(rng.random(shape) < 0.5, 0.1, -0.1)


@pytest.mark.parametrize("name", UNARY)
@FEW
@given(shape=shapes, seed=st.integers(0, 2 ** 16))
def test_unary_rules(name, shape, seed):
    rng = np.random.default_rng(seed)
    check_rule(lambda x: ops.bind(CATALOG[name], x), JAX_UNARY[name], [_values(rng, shape, name)], rng=rng)


BINARY = {"add": jax.lax.add, "sub": jax.lax.sub, "mul": jax.lax.mul, "div": jax.lax.div,
          "pow": jax.lax.pow, "max": jax.lax.max, "min": jax.lax.min, "atan2": jax.lax.atan2,
          "rem": jax.lax.rem}


@pytest.mark.parametrize("name", sorted(BINARY))
@FEW
@given(shape=shapes, seed=st.integers(0, 2 ** 16))
def test_binary_rules(name, shape, seed):
    rng = np.random.default_rng(seed)
    x, y = _values(rng, shape), _values(rng, shape)
    if name == "pow":
        x = rng.uniform(0.5, 2.0, shape)
    if name == "rem":    # away from the jumps of rem, where finite differences break
        x, y = rng.uniform(0.1, 0.9, shape) + 2.0 * rng.integers(-2, 3, shape), rng.choice([-2.0, 2.0], shape)
    check_rule(lambda a, b: ops.bind(CATALOG[name], a, b), BINARY[name], [x, y], rng=rng)


def test_max_min_split_ties_evenly_like_jax():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 1.0, 4.0])
    for name in ("max", "min"):
        check_rule(lambda a, b: ops.bind(CATALOG[name], a, b), BINARY[name], [x, y], finite_differences=False)


def test_pow_at_zero_base_and_zero_exponent_like_jax():
    check_rule(lambda a, b: ops.pow(a, b), jax.lax.pow,
               [np.array([0.0, 2.0, 0.0]), np.array([2.0, 0.0, 3.0])], finite_differences=False)


@FEW
@given(shape=shapes, seed=st.integers(0, 2 ** 16))
def test_select_and_clamp_rules(shape, seed):
    rng = np.random.default_rng(seed)
    pred = np.asarray(rng.random(shape) < 0.5)
    x, y = _values(rng, shape), _values(rng, shape)
    check_rule(lambda a, b: ops.select(xnp.asarray(pred), a, b), lambda a, b: jnp.where(pred, a, b),
               [x, y], rng=rng)
    lo, hi = np.full(shape, -0.55), np.full(shape, 0.55)
    check_rule(lambda l, a, h: ops.clamp(l, a, h), jax.lax.clamp, [lo + 0.01 * y, x, hi], rng=rng)
    check_rule(lambda l, a, h: ops.clamp(l, a, h), lambda l, a, h: jnp.minimum(jnp.maximum(a, l), h),
               [np.array(-0.5), x, np.array(0.5)],
               finite_differences=False, rng=rng)


@FEW
@given(shape=shapes, seed=st.integers(0, 2 ** 16))
def test_convert_rule_returns_gradients_in_the_primal_dtype(shape, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, shape)
    check_rule(lambda a: ops.convert(ops.convert(a, np.float32), np.float64) * 3.0,
               lambda a: a.astype(jnp.float32).astype(jnp.float64) * 3.0, [x], finite_differences=False,
               transpose_rtol=1e-6)
    g = xlac.compile(grad(lambda a: xnp.sum(ops.convert(a, np.float64))))(x.astype(np.float32))
    assert np.asarray(g).dtype == np.float32 and np.all(np.asarray(g) == 1)


REDUCE = {"sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min}


@pytest.mark.parametrize("op", sorted(REDUCE))
@FEW
@given(data=st.data())
def test_reduce_rules(op, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True), label="axes")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _values(rng, shape)
    check_rule(lambda a: ops.reduce(a, op, axes), lambda a: REDUCE[op](a, axis=tuple(axes)), [x], rng=rng)


JAX_CUMULATIVE = {"sum": jax.lax.cumsum, "prod": jax.lax.cumprod, "max": jax.lax.cummax, "min": jax.lax.cummin}


@pytest.mark.parametrize("op", sorted(JAX_CUMULATIVE))
@FEW
@given(data=st.data())
def test_cumulative_rules(op, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    reverse = data.draw(st.booleans(), label="reverse")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _values(rng, shape)
    check_rule(lambda a: ops.cumulative(a, op, axis, reverse),
               lambda a: JAX_CUMULATIVE[op](a, axis, reverse=reverse), [x], rng=rng)


@pytest.mark.parametrize("op", ["prod", "max", "min"])
def test_cumulative_rules_at_ties_and_zeros_like_jax(op):
    x = np.array([[2.0, 0.0, 3.0, 0.0, 3.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    for reverse in (False, True):
        check_rule(lambda a: ops.cumulative(a, op, 1, reverse),
                   lambda a: JAX_CUMULATIVE[op](a, 1, reverse=reverse), [x], finite_differences=False)


def test_reduce_max_splits_ties_evenly_like_jax():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    check_rule(lambda a: ops.reduce(a, "max", (1,)), lambda a: jnp.max(a, axis=1), [x], finite_differences=False)


DOTS = [  # lhs shape, rhs shape, ((lc, rc), (lb, rb))
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4, 2, 3), (3, 5, 2, 4), (((0, 2), (3, 0)), ((1,), (2,)))),
    ((3, 2), (5, 2), (((), ()), ((1,), (1,)))),
    ((3,), (5,), (((), ()), ((), ()))),
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", DOTS)
def test_dot_general_rule(lhs_shape, rhs_shape, dims):
    rng = np.random.default_rng(0)
    (lc, rc), (lb, rb) = dims
    check_rule(lambda a, b: ops.dot_general(a, b, (lc, rc), (lb, rb)),
               lambda a, b: jax.lax.dot_general(a, b, ((lc, rc), (lb, rb))),
               [rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)], rng=rng)


def test_zero_derivative_primitives_and_integer_values_get_no_cotangent():
    def f(x):
        i = ops.argmax(x, 0, np.int32)                             # integer: no cotangent flows through it
        big = ops.convert(ops.compare(x, ops.full(x.shape, 0.0, x.dtype), "GT"), x.dtype)
        s = ops.sign(x) + ops.floor(x) + ops.bind(P.stop_gradient, x)
        return xnp.sum(big * x + s) + ops.convert(i, x.dtype)
    g = xlac.compile(grad(f))(np.array([-1.5, 2.0, 0.5]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0, 1.0])


def test_values_used_several_times_accumulate_cotangents():
    g = xlac.compile(grad(lambda x: xnp.sum(x * x * x + x)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [4.0, 13.0])


def test_backward_pass_only_covers_nodes_that_depend_on_the_inputs():
    sub = trace_subgraph(lambda x, y: xnp.sum(xnp.exp(y) * 2.0) + xnp.sum(x), (np.ones(3), np.ones(3)))
    with Trace() as t:
        x = t.add_input(sub.graph.inputs[0].type)
        y = t.add_input(sub.graph.inputs[1].type)
        n_forward = None
        (out,), backward = linearize_reverse(sub.graph, [x, y], wrt=[0])
        n_forward = len(t.graph.nodes)
        (gx,) = backward([ops.constant(1.0, np.float64)])
        backward_ops = [n.primitive.name for n in t.graph.nodes[n_forward:]]
    assert gx.shape == (3,)
    assert "exp" not in backward_ops and "mul" not in backward_ops


def test_missing_rule_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(P.cos, "vjp", None)
    with pytest.raises(NotImplementedError, match="cannot differentiate cos"):
        xlac.compile(grad(lambda x: xnp.sum(xnp.cos(x))))(np.ones(2))


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_prod_gradient_is_exact_where_elements_are_zero(axis):
    x = np.array([[1.0, 0.0, 3.0], [2.0, 0.0, 0.0], [4.0, 5.0, 6.0]])
    got = xlac.grad(lambda x: xnp.sum(xnp.prod(x, axis=axis) ** 2))(x)
    expected = jax.grad(lambda x: jnp.sum(jnp.prod(x, axis=axis) ** 2))(x)   # float64: the x64 fixture
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected))


def test_abs_of_complex_matches_jax(x64):
    z = np.array([3 + 4j, 0j, -1 + 1j])
    weights = np.array([1.0, 2.0, 3.0])
    expected_grad = np.asarray(jax.grad(lambda z: jnp.sum(jnp.abs(z) * weights))(z))
    t = np.array([1 + 2j, 1j, 2 + 0j])
    expected_tangent = np.asarray(jax.jvp(jnp.abs, (z,), (t,))[1])
    np.testing.assert_allclose(np.asarray(xlac.grad(lambda z: xnp.sum(xnp.abs(z) * weights))(z)), expected_grad)
    np.testing.assert_allclose(np.asarray(xlac.jvp(xnp.abs, (z,), (t,))[1]), expected_tangent)
