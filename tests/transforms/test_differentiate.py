"""xlac.differentiate: grad, value_and_grad, vjp (batched too), jvp, jacrev, jacfwd, hessian, stop_gradient,
against JAX on the same math: models, in-place programs, autocast, composition with compile."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from benchmarks.models import make_mlp, make_transformer_block, mlp_params, transformer_params
from xlac.differentiate import grad, hessian, jacfwd, jacrev, jvp, stop_gradient, value_and_grad, vjp
from xlac.ir import dtypes


def close(got, expected, rtol=1e-5, atol=1e-5):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def tree_close(got, expected, **kw):
    g_leaves, g_tree = jax.tree_util.tree_flatten(jax.tree_util.tree_map(np.asarray, got))
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert g_tree == e_tree, f"{g_tree} != {e_tree}"
    for g, e in zip(g_leaves, e_leaves):
        close(g, e, **kw)


X = np.array([0.3, -1.2, 2.0], np.float32)


# ---------------------------------------------------------------- API

def test_grad_eager_returns_an_array_and_matches_jax():
    g = grad(lambda x: xnp.sum(xnp.tanh(x) * x))(X)
    assert isinstance(g, xlac.Array)
    close(g, jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x))(X))


def test_grad_argnums_pytrees_and_has_aux():
    def loss(p, x):
        y = xnp.tanh(x @ p["w"] + p["b"][0])
        return xnp.sum(y ** 2), y

    def jloss(p, x):
        y = jnp.tanh(x @ p["w"] + p["b"][0])
        return jnp.sum(y ** 2), y
    p = {"w": np.ones((3, 2), np.float32) * 0.1, "b": (np.array([0.5, -0.5], np.float32),)}
    (g_p, g_x), aux = grad(loss, argnums=(0, 1), has_aux=True)(p, X)
    (j_p, j_x), j_aux = jax.grad(jloss, argnums=(0, 1), has_aux=True)(p, X)
    tree_close(g_p, j_p)
    close(g_x, j_x)
    close(aux, j_aux)
    (value, aux2), g = value_and_grad(loss, has_aux=True)(p, X)
    close(value, jloss(p, X)[0])
    tree_close(g, j_p)


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        grad(lambda x: x * 2.0)(X)
    with pytest.raises(TypeError, match="integer-valued inputs"):
        grad(lambda x: xnp.sum(x * 2.0))(np.arange(3))
    with pytest.raises(ValueError, match="argnums"):
        grad(lambda x: xnp.sum(x), argnums=3)(X)
    with pytest.raises(TypeError, match="has_aux"):
        grad(lambda x: xnp.sum(x), has_aux=True)(X)


def test_grad_with_integer_argument_not_differentiated():
    g = grad(lambda x, n: xnp.sum(x * n))(X, np.arange(3, dtype=np.int32))
    close(g, np.arange(3, dtype=np.float32))


def test_vjp_several_outputs_and_integer_outputs():
    def f(x, y):
        return {"a": xnp.sin(x) * y, "b": xnp.sum(x * x), "i": xnp.argmax(x)}
    y = np.array([1.0, 2.0, 3.0], np.float32)
    out, vjp_fn = vjp(f, X, y)
    ct = {"a": np.array([1.0, -1.0, 0.5], np.float32), "b": np.float32(2.0), "i": np.int64(0)}
    gx, gy = vjp_fn(ct)
    j_out, j_vjp = jax.vjp(lambda x, y: (jnp.sin(x) * y, jnp.sum(x * x)), X, y)
    jx, jy = j_vjp((ct["a"], ct["b"]))
    close(gx, jx)
    close(gy, jy)
    close(out["a"], j_out[0])
    with pytest.raises(TypeError, match="structured"):
        vjp_fn((ct["a"], ct["b"]))


def test_jvp_matches_jax_and_checks_shapes():
    f = lambda x, y: (xnp.exp(x) * y, xnp.sum(y))                       # noqa: E731
    jf = lambda x, y: (jnp.exp(x) * y, jnp.sum(y))                      # noqa: E731
    t = (np.ones(3, np.float32), np.array([0.0, 1.0, 2.0], np.float32))
    out, t_out = jvp(f, (X, X), t)
    j_out, j_t = jax.jvp(jf, (X, X), t)
    tree_close(out, j_out)
    tree_close(t_out, j_t)
    with pytest.raises(ValueError, match="tangent of shape"):
        jvp(f, (X, X), (np.ones(2, np.float32), X))


def test_stop_gradient():
    g = grad(lambda x: xnp.sum(x * stop_gradient(x * 3.0)))(X)
    close(g, 3.0 * X)
    close(stop_gradient(X), X)


# ---------------------------------------------------------------- composition

def test_grad_of_grad_and_hessian():
    f = lambda x: xnp.sum(xnp.sin(x) * x ** 2)                            # noqa: E731
    jf = lambda x: jnp.sum(jnp.sin(x) * x ** 2)                           # noqa: E731
    close(grad(lambda x: xnp.sum(grad(f)(x)))(X), jax.grad(lambda x: jnp.sum(jax.grad(jf)(x)))(X), rtol=1e-4)
    close(hessian(f)(X), jax.hessian(jf)(X), rtol=1e-4, atol=1e-4)
    close(jacrev(jacfwd(f))(X), jax.jacrev(jax.jacfwd(jf))(X), rtol=1e-4, atol=1e-4)


def test_vmap_of_grad_and_compile_around_it():
    f = lambda w, x: xnp.sum(xnp.tanh(x @ w) ** 2)                        # noqa: E731
    jf = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)                       # noqa: E731
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    xs = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    expected = jax.vmap(jax.grad(jf), in_axes=(None, 0))(w, xs)
    close(xlac.vmap(grad(f), in_axes=(None, 0))(w, xs), expected, rtol=1e-4)
    close(xlac.compile(xlac.vmap(grad(f), in_axes=(None, 0)))(w, xs), expected, rtol=1e-4)


def test_compile_around_grad_and_grad_inside_compile():
    f = lambda w, x: xnp.sum(xnp.tanh(x @ w))                             # noqa: E731
    jf = lambda w, x: jnp.sum(jnp.tanh(x @ w))                            # noqa: E731
    w, x = np.ones((3, 2), np.float32) * 0.3, np.stack([X, X * 2])
    close(xlac.compile(grad(f))(w, x), jax.grad(jf)(w, x))

    @xlac.compile
    def step(w, x):
        loss, g = value_and_grad(lambda w: f(w, x))(w)      # closes over x, a value of the outer trace
        return loss, w - 0.1 * g
    loss, w2 = step(w, x)
    close(loss, jf(w, x))
    close(w2, w - 0.1 * jax.grad(jf)(w, x))


def test_jacrev_jacfwd_against_jax_with_pytrees():
    def f(x, y):
        return {"p": xnp.sin(x)[:, None] * y, "s": xnp.sum(x * y[0])}

    def jf(x, y):
        return {"p": jnp.sin(x)[:, None] * y, "s": jnp.sum(x * y[0])}
    y = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)[:, :3][:1].repeat(3, 0)
    for ours, theirs in ((jacrev, jax.jacrev), (jacfwd, jax.jacfwd)):
        tree_close(ours(f, argnums=(0, 1))(X, y), theirs(jf, argnums=(0, 1))(X, y), rtol=1e-5)


def test_batched_vjp_one_pass_against_loop_and_jax_vmap():
    def f(x, w):
        h = xnp.tanh(x @ w)
        return h, xnp.sum(h * h, axis=0)

    def jf(x, w):
        h = jnp.tanh(x @ w)
        return h, jnp.sum(h * h, axis=0)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    cts = (rng.standard_normal((5, 4, 2)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32))

    @xlac.compile
    def batched(x, w, cts):
        return vjp(f, x, w)[1](cts, batched=True)

    @xlac.compile
    def single(x, w, ct):
        return vjp(f, x, w)[1](ct)
    gx, gw = batched(x, w, cts)
    assert gx.shape == (5, 4, 3) and gw.shape == (5, 3, 2)
    for i in range(5):
        sx, sw = single(x, w, (cts[0][i], cts[1][i]))
        close(gx[i], sx)
        close(gw[i], sw)
    _, j_vjp = jax.vjp(jf, x, w)
    jx, jw = jax.vmap(j_vjp)(cts)
    close(gx, jx)
    close(gw, jw)
    names = {n.primitive.name for n in batched.trace(x, w, cts).ir("final").nodes}
    assert "dot_general" in names          # one program: the backward pass is batched, not looped
    _, eager_fn = vjp(f, x, w)
    close(eager_fn(cts, batched=True)[1], jw)
    with pytest.raises(ValueError, match="batch"):
        eager_fn((cts[0], cts[1][:3]), batched=True)


# ---------------------------------------------------------------- models

def test_mlp_gradients_match_jax():
    rng = np.random.default_rng(0)
    params = mlp_params(rng, batch=8, d_in=16, d_hidden=32, d_out=4)
    mlp, jmlp = make_mlp(xnp), make_mlp(jnp)
    loss = lambda *p: xnp.mean(mlp(*p) ** 2)                             # noqa: E731
    jloss = lambda *p: jnp.mean(jmlp(*p) ** 2)                           # noqa: E731
    argnums = (1, 2, 3, 4)
    got = xlac.compile(grad(loss, argnums=argnums))(*params)
    tree_close(got, jax.grad(jloss, argnums=argnums)(*params), rtol=1e-4, atol=1e-5)


def test_transformer_block_gradients_match_jax():
    rng = np.random.default_rng(0)
    x, params = transformer_params(rng, seq=8, d_model=16)
    block, jblock = make_transformer_block(xnp, 2), make_transformer_block(jnp, 2)
    got_v, got = xlac.compile(value_and_grad(lambda p, x: xnp.sum(block(x, p) ** 2), argnums=(0, 1)))(params, x)
    want_v, want = jax.value_and_grad(lambda p, x: jnp.sum(jblock(x, p) ** 2), argnums=(0, 1))(params, x)
    close(got_v, want_v, rtol=1e-4)
    tree_close(got, want, rtol=2e-4, atol=2e-4)


# ---------------------------------------------------------------- in-place programs

def test_element_assignment_in_a_loop():
    def f(x, v):
        y = x * 1.0
        for i in range(3):
            y[i] = v[i] * y[i + 1]          # overwrites: the old y[i] gets no gradient
        return xnp.sum(y * y)

    def jf(x, v):
        y = x * 1.0
        for i in range(3):
            y = y.at[i].set(v[i] * y[i + 1])
        return jnp.sum(y * y)
    x, v = np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32)
    tree_close(xlac.compile(grad(f, argnums=(0, 1)))(x, v), jax.grad(jf, argnums=(0, 1))(x, v))


def test_lu_style_row_updates_and_mutated_argument(x64):
    def f(a):
        n = a.shape[0]
        for k in range(n - 1):
            for i in range(k + 1, n):
                a[i, k] = a[i, k] / a[k, k]
                a[i, k + 1:] -= a[i, k] * a[k, k + 1:]
        return xnp.sum(xnp.triu(a) ** 2) + xnp.sum(xnp.tril(a, -1))

    def jf(a):
        n = a.shape[0]
        for k in range(n - 1):
            for i in range(k + 1, n):
                a = a.at[i, k].set(a[i, k] / a[k, k])
                a = a.at[i, k + 1:].add(-a[i, k] * a[k, k + 1:])
        return jnp.sum(jnp.triu(a) ** 2) + jnp.sum(jnp.tril(a, -1))
    a = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 5.0]])
    close(xlac.compile(grad(f))(a.copy()), jax.grad(jf)(a), rtol=1e-10, atol=1e-12)


def test_write_through_a_view_and_inplace_update(x64):
    def f(x, v):
        y = x + 0.0
        row = y[1]                    # a view
        row[:] = row * v              # written through the view
        y += xnp.sin(y)
        return xnp.sum(y ** 2)

    def jf(x, v):
        y = x + 0.0
        y = y.at[1].set(y[1] * v)
        y = y + jnp.sin(y)
        return jnp.sum(y ** 2)
    x, v = np.arange(6.0).reshape(2, 3) / 5, np.array([1.0, -2.0, 0.5])
    tree_close(xlac.compile(grad(f, argnums=(0, 1)))(x, v), jax.grad(jf, argnums=(0, 1))(x, v), rtol=1e-10)
    if hasattr(xlac, "inplace_update"):
        def g(x, v):
            y = x * 2.0
            xlac.inplace_update(y[0], v)     # row 0 of y now holds v
            return xnp.sum(y * x)

        def jg(x, v):
            y = (x * 2.0).at[0].set(v)
            return jnp.sum(y * x)
        tree_close(xlac.compile(grad(g, argnums=(0, 1)))(x, v), jax.grad(jg, argnums=(0, 1))(x, v), rtol=1e-10)


# ---------------------------------------------------------------- autocast

def test_autocast_gradients_in_primal_dtype_within_bf16_tolerance():
    rng = np.random.default_rng(0)
    params = mlp_params(rng, batch=8, d_in=16, d_hidden=32, d_out=4)
    mlp = make_mlp(xnp)

    def loss(*p):
        with xlac.autocast():
            return xnp.mean(mlp(*p).astype(np.float32) ** 2)
    loss32 = lambda *p: xnp.mean(mlp(*p) ** 2)                          # noqa: E731
    argnums = (1, 2, 3, 4)
    mixed = xlac.compile(grad(loss, argnums=argnums))(*params)
    full = xlac.compile(grad(loss32, argnums=argnums))(*params)
    for m, f32 in zip(mixed, full):
        assert np.asarray(m).dtype == np.float32
        scale = np.abs(np.asarray(f32)).max()
        np.testing.assert_allclose(np.asarray(m), np.asarray(f32), atol=0.05 * scale + 1e-6)
    traced = xlac.compile(grad(loss, argnums=argnums)).trace(*params).ir("final")
    dots = [n for n in traced.nodes if n.primitive.name == "dot_general"]
    assert len(dots) >= 5 and all(n.operands[0].type.dtype == dtypes.bfloat16 for n in dots)
