"""The ``reduce_many`` primitive (several reduces of one shape in one variadic reduce): values against
``jax.lax.reduce`` of several operands, type-rule errors, and its VJP, JVP and batching rules against JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.ir import ShapeError, TensorType
from xlac.ir import primitives as P
from xlac.trace import ops
from xlac.vectorize import vmap
from tests.ir.test_primitives import covers, run

pytestmark = pytest.mark.usefixtures("x64_module")      # JAX in float64, this module only

JAX_OP = {"sum": (jax.lax.add, 0), "prod": (jax.lax.mul, 1), "max": (jax.lax.max, -np.inf),
          "min": (jax.lax.min, np.inf)}


def jax_reduce_many(xs, reduce_ops, axes):
    inits = tuple(np.array(JAX_OP[op][1], x.dtype) if x.dtype.kind == "f" else
                  np.array(np.iinfo(x.dtype).min if op == "max" else np.iinfo(x.dtype).max if op == "min" else
                           JAX_OP[op][1], x.dtype) for x, op in zip(xs, reduce_ops))

    def combine(a, b):
        return tuple(JAX_OP[op][0](u, v) for op, u, v in zip(reduce_ops, a, b))
    return jax.lax.reduce(tuple(xs), inits, combine, tuple(axes))


@covers("reduce_many")
@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from(sorted(JAX_OP)), min_size=1, max_size=3),
       st.sampled_from([(0,), (1,), (0, 1), (1, 2)]), st.integers(0, 2**16))
def test_reduce_many_is_each_reduce_in_one(reduce_ops, axes, seed):
    rng = np.random.default_rng(seed)
    kinds = ["float64", "int64", "int32"]
    xs = [(rng.normal(size=(2, 3, 4)) * 3).astype(kinds[k % 3]) for k in range(len(reduce_ops))]
    got = run(lambda *xs: ops.reduce_many(xs, reduce_ops, axes), *xs)
    got = got if isinstance(got, tuple) else (got,)
    for result, want in zip(got, jax_reduce_many(xs, reduce_ops, axes)):
        assert result.dtype == want.dtype
        np.testing.assert_allclose(result, want, rtol=1e-6)


def test_reduce_many_refuses_operands_of_different_shapes_or_a_missing_op():
    a, b = TensorType((2, 3), np.dtype("float64")), TensorType((3, 2), np.dtype("float64"))
    with pytest.raises(ShapeError, match="reduce_many expects operands of one shape"):
        P.reduce_many.infer_types(a, b, ops=("sum", "sum"), axes=(0,))
    with pytest.raises(ShapeError, match="reduce_many: 1 ops for 2 operands"):
        P.reduce_many.infer_types(a, a, ops=("sum",), axes=(0,))
    with pytest.raises(ShapeError, match="floating operands of one dtype"):
        P.reduce_many.infer_types(a, a.with_dtype(np.dtype("float32")), ops=("sum", "sum"), axes=(0,))
    with pytest.raises(ShapeError, match="reduce: unknown op 'mean'"):
        P.reduce_many.infer_types(a, ops=("mean",), axes=(0,))


def test_reduce_many_differentiates_and_batches_as_jax():
    x = np.random.default_rng(1).normal(size=(3, 4))

    def f(x):
        total, largest, product = ops.reduce_many([x * x, x, x], ("sum", "max", "prod"), (1,))
        return (total + largest * 2.0 + product).sum()

    def f_jax(x):
        total, largest, product = jax_reduce_many([x * x, x, x], ("sum", "max", "prod"), (1,))
        return (total + largest * 2.0 + product).sum()
    np.testing.assert_allclose(np.asarray(xlac.grad(f)(x)), jax.grad(f_jax)(x), rtol=1e-12)
    tangent = np.ones_like(x)
    _, jvp_out = xlac.jvp(f, (x,), (tangent,))
    np.testing.assert_allclose(np.asarray(jvp_out), jax.jvp(f_jax, (x,), (tangent,))[1], rtol=1e-12)

    def g(x, y):
        return ops.reduce_many([x, y], ("min", "sum"), (0,))
    y = np.arange(3.0)                                  # not batched: broadcast along the batch
    got = vmap(g, in_axes=(1, None))(x, y)
    want = jax.vmap(lambda x, y: jax_reduce_many([x, y], ("min", "sum"), (0,)), in_axes=(1, None))(x, y)
    for result, expected in zip(got, want):
        np.testing.assert_allclose(np.asarray(result), expected)
