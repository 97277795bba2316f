"""xlac.vmap: JAX's semantics (pytrees, in_axes/out_axes, errors, nesting, inside compile, eager), and a
model vectorized over examples, against jax.vmap."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from benchmarks.models import make_mlp
from xlac.vectorize import vmap
from tests.tolerance import assert_matches

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def assert_tree_matches(got, want, rtol=None):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        assert_matches(g, np.asarray(w), rtol=rtol)


# ---------------------------------------------------------------- semantics


def test_eager_returns_array_and_caches_the_compile():
    f = vmap(lambda x, y: xnp.sum(x * y))
    x, y = rand(4, 3), rand(4, 3)
    out = f(x, y)
    assert isinstance(out, xlac.Array)
    assert_matches(out, np.sum(x * y, axis=1), rtol=1e-5)
    f(x, y)
    assert f._compiled.cache_info().traces == 1


@pytest.mark.parametrize("in_axes, out_axes", [(0, 0), ((1, None), -1), ((-1, 0), 1), ((None, 1), 0)])
def test_in_axes_out_axes(in_axes, out_axes):
    def body(np_):
        return lambda x, w: np_.tanh(x @ w) + 1.0
    x_axis, w_axis = in_axes if isinstance(in_axes, tuple) else (in_axes, in_axes)
    x = rand(5, 3) if x_axis is None else np.moveaxis(rand(4, 5, 3), 0, x_axis)
    w = rand(3, 2) if w_axis is None else np.moveaxis(rand(4, 3, 2), 0, w_axis)
    got = vmap(body(xnp), in_axes, out_axes)(x, w)
    want = jax.vmap(body(jnp), in_axes, out_axes)(x, w)
    assert_tree_matches(got, want, rtol=1e-5)


def test_pytree_in_axes_prefix_and_outputs():
    def body(np_):
        def f(params, x):
            h = x @ params["w"] + params["b"]
            return {"out": h, "mean": np_.mean(h)}, params["b"] * 2
        return f
    params = {"w": rand(3, 2), "b": rand(4, 2)}
    x = rand(3, 4)
    in_axes = ({"w": None, "b": 0}, 1)
    out_axes = ({"out": 1, "mean": 0}, -1)
    got = vmap(body(xnp), in_axes, out_axes)(params, x)
    want = jax.vmap(body(jnp), in_axes, out_axes)(params, x)
    assert_tree_matches(got, want, rtol=1e-5)


def test_unbatched_outputs_are_broadcast_or_kept():
    x, c = rand(4, 3), rand(3)
    got = vmap(lambda x, c: (x + c, c * 2), in_axes=(0, None), out_axes=(0, None))(x, c)
    assert_matches(got[1], c * 2)
    got = vmap(lambda x, c: (x + c, c * 2), in_axes=(0, None), out_axes=1)(x, c)
    assert_matches(got[1], np.broadcast_to((c * 2)[:, None], (3, 4)))


def test_kwargs_are_mapped_over_axis_0_and_scalars_pass_through():
    f = vmap(lambda x, scale, *, y: x * scale + y, in_axes=(1, None))
    x, y = rand(3, 4), rand(4, 3)
    assert_matches(f(x, 2.0, y=y), x.T * 2.0 + y, rtol=1e-6)


def test_axis_size_without_mapped_arguments():
    out = vmap(lambda c: c + 1, in_axes=None, axis_size=3)(np.ones(2, np.float32))
    assert_matches(out, np.full((3, 2), 2, np.float32))


def test_nested_vmap_matches_jax():
    def body(np_):
        return lambda a, b: np_.dot(a, b) * np_.max(a)
    a, b = rand(4, 5, 3), rand(5, 3)
    f = vmap(vmap(body(xnp), in_axes=(0, 0)), in_axes=(0, None), out_axes=1)
    g = jax.vmap(jax.vmap(body(jnp), in_axes=(0, 0)), in_axes=(0, None), out_axes=1)
    assert_tree_matches(f(a, b), g(a, b), rtol=1e-5)


def test_inside_compile_and_closures_over_traced_values():
    @xlac.compile
    def f(xs, w):
        return vmap(lambda x: xnp.tanh(x @ w) + w[0])(xs)
    xs, w = rand(6, 3), rand(3, 3)
    assert_matches(f(xs, w), np.tanh(xs @ w) + w[0], rtol=1e-5)


def test_compile_inside_vmap():
    inner = xlac.compile(lambda x: xnp.cumsum(x))
    xs = rand(4, 3)
    want = np.cumsum(xs, axis=1)
    assert_matches(vmap(inner)(xs), want, rtol=1e-5)


def test_in_place_code_is_batched():
    def f(x, i):
        y = x.copy()
        y[i] = 0.0
        y[:, 0] += 1.0
        return y
    xs, i = rand(5, 4, 3), np.array([0, 3, 1, 2, 3], np.int32)
    want = np.stack([f(x.copy(), int(k)) for x, k in zip(xs, i)])
    assert_matches(vmap(f)(xs, i), want)


def test_indexing_and_reductions_with_batched_indices():
    def body(np_):
        def f(x, i):
            return (x[i], np_.argmax(x).astype(np.int32), x[::-1].sum(), np_.take(x, i + 1), np_.cumsum(x)[-1],
                    np_.concatenate([x[:2], x[3:]]), np_.where(x > 0, x, -x),
                    np_.einsum("i,j->ij", x, x)[i])
        return f
    xs = rand(6, 8)
    idx = RNG.integers(0, 7, 6).astype(np.int32)
    assert_tree_matches(vmap(body(xnp))(xs, idx), jax.vmap(body(jnp))(xs, idx), rtol=1e-5)


def test_unbatched_values_stay_unbatched():
    f = xlac.compile(lambda xs, w: vmap(lambda x: x + xnp.sin(w))(xs))
    traced = f.trace(rand(7, 3), rand(3))
    sins = [n for n in traced.graph.nodes if n.primitive.name == "sin"]
    assert [n.results[0].type.shape for n in sins] == [(3,)]


# ---------------------------------------------------------------- errors


def test_error_inconsistent_sizes():
    with pytest.raises(ValueError, match=r"inconsistent sizes.*\n.*axis 0 of argument x .* size 3\n.*argument y .* size 4"):
        vmap(lambda x, y: x + y)(rand(3, 2), rand(4, 2))


def test_error_nothing_mapped():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(lambda x: x, in_axes=None)(rand(3))


def test_error_axis_out_of_range():
    with pytest.raises(ValueError, match="map its argument along axis 2.*rank should be at least 3, but is only 2"):
        vmap(lambda x: x, in_axes=2)(rand(3, 2))
    with pytest.raises(ValueError, match="along axis 0.*but is only 0"):
        vmap(lambda x, y: x + y)(rand(3), 2.0)


def test_error_mapped_output_with_out_axes_none():
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        vmap(lambda x: x * 2, out_axes=None)(rand(3))


def test_error_in_axes_structure():
    with pytest.raises(ValueError, match="tuple of entries corresponding to the positional arguments"):
        vmap(lambda x, y: x + y, in_axes=(0,))(rand(3), rand(3))
    with pytest.raises(ValueError, match="tree prefix"):
        vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": rand(3)})
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        vmap(lambda x: x, in_axes="0")


def test_errors_inside_the_function_name_the_line():
    with pytest.raises(ValueError, match="test_vmap.py"):
        vmap(lambda x: xnp.reshape(x, (5,)))(rand(2, 3))


# ---------------------------------------------------------------- a model


def test_mlp_vmapped_over_examples_matches_jax():
    x = rand(8, 16)
    w1, b1 = rand(16, 32) / 4, rand(32)
    w2, b2 = rand(32, 8) / 6, rand(8)
    in_axes = (0, None, None, None, None)
    got = vmap(make_mlp(xnp), in_axes)(x, w1, b1, w2, b2)
    want = jax.vmap(make_mlp(jnp), in_axes)(x, w1, b1, w2, b2)
    assert_matches(got, np.asarray(want), rtol=1e-4)
    # per-example weights (an ensemble), batched along a non-leading axis
    ws = np.stack([w1, w1 * 0.5], axis=1)
    got = vmap(make_mlp(xnp), (None, 1, None, None, None), out_axes=1)(x, ws, b1, w2, b2)
    want = jax.vmap(make_mlp(jnp), (None, 1, None, None, None), out_axes=1)(x, ws, b1, w2, b2)
    assert_matches(got, np.asarray(want), rtol=1e-4)
