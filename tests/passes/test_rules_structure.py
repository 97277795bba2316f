"""VJP and JVP rules of the structural, indexing and sort primitives (xlac.passes.rules.structure, .indexing,
.reductions), checked one primitive at a time.

Each case compiles one program that binds the primitive, applies its VJP and JVP rules, and evaluates
the primitive at x ± eps·t (central finite differences, float64). The results are compared with
``jax.vjp`` / ``jax.jvp`` of the matching ``jax.lax`` op, with the finite difference, and with each
other (<ct, J t> == <J^T ct, t>).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax import lax

import xlac
import xlac.passes.rules  # noqa: F401  (registers the rules)
from xlac.ir import primitives as P
from xlac.trace import ops

EPS = 1e-6
F64 = np.float64


@pytest.fixture(autouse=True, scope="module")
def jax_x64():
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def _results(primitive, operands, attrs):
    out = ops.bind(primitive, *operands, **attrs)
    return list(out) if primitive.multiple_results else [out]


def _run_rules(primitive, attrs, primals, diff, cts, tangents):
    """Compiled: (vjp cotangents of the ``diff`` operands, jvp tangents, finite-difference tangents)."""
    n, m = len(primals), len(cts)

    def program(*args):
        xs, cs, ts = list(args[:n]), list(args[n:n + m]), list(args[n + m:])
        results = _results(primitive, xs, attrs)
        operand_cts = primitive.vjp(attrs, xs, results, cs)
        tangent_of = dict(zip(diff, ts))
        operand_tangents = [tangent_of.get(i) for i in range(n)]
        result_tangents = primitive.jvp(attrs, xs, results, operand_tangents)

        def shifted(sign):
            moved = [ops.add(x, ops.mul(ops.full(x.shape, sign * EPS, x.dtype), tangent_of[i]))
                     if i in tangent_of else x for i, x in enumerate(xs)]
            return _results(primitive, moved, attrs)
        fd = [ops.div(ops.sub(hi, lo), ops.full(hi.shape, 2 * EPS, hi.dtype))
              for hi, lo in zip(shifted(1), shifted(-1))]
        return tuple(operand_cts[i] for i in diff), tuple(result_tangents), tuple(fd)
    return xlac.compile(program)(*primals, *cts, *tangents)


def check(primitive, attrs, primals, diff, jax_fn, rng, *, fd=True):
    """The rules of ``primitive`` at ``primals`` against JAX (``jax_fn`` takes all primals) and finite
    differences; ``diff``: positions of the differentiable operands."""
    primals = [np.asarray(p) for p in primals]
    out = jax.eval_shape(jax_fn, *primals)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    float_outs = [i for i, o in enumerate(outs) if jnp.issubdtype(o.dtype, jnp.floating)]
    cts = [rng.standard_normal(o.shape) if i in float_outs else np.zeros(o.shape, o.dtype) for i, o in enumerate(outs)]
    tangents = [rng.standard_normal(primals[i].shape) for i in diff]
    got_cts, got_tangents, fd_tangents = _run_rules(primitive, attrs, primals, diff, cts, tangents)

    def of_diff(*ds):
        full = list(primals)
        for i, d in zip(diff, ds):
            full[i] = d
        return jax_fn(*full)

    @jax.jit
    def oracle(diff_primals, cts, tangents):
        _, vjp_fn = jax.vjp(of_diff, *diff_primals)
        expected_cts = vjp_fn(tuple(cts) if isinstance(out, (tuple, list)) else cts[0])
        return expected_cts, jax.jvp(of_diff, tuple(diff_primals), tuple(tangents))[1]
    expected_cts, expected_tangent = oracle([primals[i] for i in diff], cts, tangents)
    expected_tangents = list(expected_tangent) if isinstance(out, (tuple, list)) else [expected_tangent]

    for got, want in zip(got_cts, expected_cts):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)
    got_tangents = [np.asarray(t) if t is not None else None for t in got_tangents]
    for i in float_outs:
        np.testing.assert_allclose(got_tangents[i], np.asarray(expected_tangents[i]), rtol=1e-10, atol=1e-10)
        if fd:
            np.testing.assert_allclose(got_tangents[i], np.asarray(fd_tangents[i]), rtol=1e-6, atol=1e-6)
    # <ct, J t> == <J^T ct, t>: the VJP is the transpose of the JVP.
    forward = sum(np.vdot(cts[i], got_tangents[i]) for i in float_outs)
    backward = sum(np.vdot(np.asarray(c), t) for c, t in zip(got_cts, tangents))
    np.testing.assert_allclose(forward, backward, rtol=1e-9, atol=1e-9)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


# ---------------------------------------------------------------- shapes


@settings(max_examples=8)
@given(shape=shapes, data=st.data())
def test_broadcast_in_dim(shape, data):
    rng = np.random.default_rng(0)
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) + 1), min_size=len(shape),
                                          max_size=len(shape)))))
    out_shape = [data.draw(st.integers(1, 3)) for _ in range(len(shape) + 2)]
    for d, size in zip(dims, shape):
        out_shape[d] = size
    x_shape = tuple(1 if data.draw(st.booleans()) else s for s in shape)   # some axes stretch
    attrs = {"shape": tuple(out_shape), "broadcast_dimensions": dims}
    check(P.broadcast_in_dim, attrs, [rng.standard_normal(x_shape)], [0],
          lambda x: lax.broadcast_in_dim(x, tuple(out_shape), dims), rng)


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_reshape_transpose_reverse(shape, data):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    new_shape = data.draw(st.permutations(list(shape) + [1]))
    check(P.reshape, {"shape": tuple(new_shape)}, [x], [0], lambda x: lax.reshape(x, tuple(new_shape)), rng)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    check(P.transpose, {"permutation": perm}, [x], [0], lambda x: lax.transpose(x, perm), rng)
    dims = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1))))
    check(P.reverse, {"dimensions": dims}, [x], [0], lambda x: lax.rev(x, dims), rng)


@settings(max_examples=12, deadline=None)
@given(shape=shapes, data=st.data())
def test_slice_with_strides(shape, data):
    rng = np.random.default_rng(0)
    start, limit, strides = [], [], []
    for d in shape:
        lo = data.draw(st.integers(0, d))
        start.append(lo)
        limit.append(data.draw(st.integers(lo, d)))
        strides.append(data.draw(st.integers(1, 3)))
    attrs = {"start": tuple(start), "limit": tuple(limit), "strides": tuple(strides)}
    check(P.slice_, attrs, [rng.standard_normal(shape)], [0],
          lambda x: lax.slice(x, start, limit, strides), rng)


@pytest.mark.parametrize("start, limit, strides", [((0, 1), (5, 4), (2, 3)), ((1, 0), (4, 4), (3, 1))])
def test_slice_strided_examples(start, limit, strides, rng):
    check(P.slice_, {"start": start, "limit": limit, "strides": strides}, [rng.standard_normal((5, 4))], [0],
          lambda x: lax.slice(x, start, limit, strides), rng)


def test_pad_example(rng):
    config = [(-2, 1, 2), (1, -3, 1)]
    attrs = {"low": (-2, 1), "high": (1, -3), "interior": (2, 1)}
    check(P.pad, attrs, [rng.standard_normal((3, 4)), np.array(0.5)], [0, 1],
          lambda x, v: lax.pad(x, v, config), rng)


@settings(max_examples=12, deadline=None)
@given(shape=shapes, data=st.data())
def test_pad_negative_and_interior(shape, data):
    rng = np.random.default_rng(0)
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2))
        size = d + max(d - 1, 0) * interior
        low = data.draw(st.integers(-size, 3))
        high = data.draw(st.integers(-(size + low), 3))    # the result keeps >= 0 elements
        config.append((low, high, interior))
    attrs = {"low": tuple(c[0] for c in config), "high": tuple(c[1] for c in config),
             "interior": tuple(c[2] for c in config)}
    check(P.pad, attrs, [rng.standard_normal(shape), np.array(rng.standard_normal())], [0, 1],
          lambda x, v: lax.pad(x, v, config), rng)


@settings(max_examples=12, deadline=None)
@given(shape=shapes, data=st.data())
def test_concatenate(shape, data):
    rng = np.random.default_rng(0)
    dim = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    xs = [rng.standard_normal(shape[:dim] + (n,) + shape[dim + 1:]) for n in sizes]
    check(P.concatenate, {"dimension": dim}, xs, list(range(len(xs))),
          lambda *xs: lax.concatenate(xs, dim), rng)


def test_concatenate_with_one_tangent_missing(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    check(P.concatenate, {"dimension": 0}, [a, b], [1], lambda a, b: lax.concatenate([a, b], 0), rng)


# ---------------------------------------------------------------- dynamic slices


@settings(max_examples=12, deadline=None)
@given(shape=shapes, data=st.data())
def test_dynamic_slice(shape, data):
    rng = np.random.default_rng(0)
    sizes = tuple(data.draw(st.integers(0, d)) for d in shape)
    starts = [np.int64(data.draw(st.integers(0, d + 2))) for d in shape]   # past the end: clamped
    check(P.dynamic_slice, {"sizes": sizes}, [rng.standard_normal(shape), *starts], [0],
          lambda x, *s: lax.dynamic_slice(x, s, sizes), rng)


@settings(max_examples=12, deadline=None)
@given(shape=shapes, data=st.data())
def test_dynamic_update_slice(shape, data):
    rng = np.random.default_rng(0)
    update_shape = tuple(data.draw(st.integers(0, d)) for d in shape)
    starts = [np.int64(data.draw(st.integers(0, d + 2))) for d in shape]
    check(P.dynamic_update_slice, {}, [rng.standard_normal(shape), rng.standard_normal(update_shape), *starts],
          [0, 1], lambda x, u, *s: lax.dynamic_update_slice(x, u, s), rng)


def test_dynamic_update_slice_overwritten_slot_gets_no_gradient(rng):
    x, u = rng.standard_normal(5), rng.standard_normal(2)
    ct = np.arange(1.0, 6.0)

    def program(x, u, ct):
        start = ops.constant(1, np.int64)
        out = ops.dynamic_update_slice(x, u, [start])
        return tuple(P.dynamic_update_slice.vjp({}, [x, u, start], [out], [ct])[:2])
    x_ct, u_ct = xlac.compile(program)(x, u, ct)
    np.testing.assert_array_equal(np.asarray(x_ct), [1.0, 0.0, 0.0, 4.0, 5.0])
    np.testing.assert_array_equal(np.asarray(u_ct), [2.0, 3.0])


# ---------------------------------------------------------------- gather and scatter


def _gather_case(data, rng):
    """A random gather: operand, indices (some out of range), and its dimension numbers."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    index_map = tuple(data.draw(st.permutations(range(len(shape))))[:data.draw(st.integers(1, len(shape)))])
    collapsed = tuple(sorted(data.draw(st.sets(st.sampled_from(index_map)))))
    slice_sizes = tuple(1 if d in collapsed else data.draw(st.integers(0 if d not in index_map else 1, s))
                        for d, s in enumerate(shape))
    batch = data.draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    indices = rng.integers(-1, max(shape) + 1, size=batch + (len(index_map),))
    offset_count = len(shape) - len(collapsed)
    offset_dims = tuple(sorted(data.draw(st.permutations(range(offset_count + len(batch))))[:offset_count]))
    attrs = {"offset_dims": offset_dims, "collapsed_slice_dims": collapsed, "start_index_map": index_map,
             "slice_sizes": slice_sizes}
    return rng.standard_normal(shape), indices, attrs


def _jax_gather_numbers(attrs):
    return lax.GatherDimensionNumbers(attrs["offset_dims"], attrs["collapsed_slice_dims"], attrs["start_index_map"],
                                      attrs.get("operand_batching_dims", ()),
                                      attrs.get("start_indices_batching_dims", ()))


@settings(max_examples=8)
@given(data=st.data())
def test_gather(data):
    rng = np.random.default_rng(0)
    x, indices, attrs = _gather_case(data, rng)
    numbers = _jax_gather_numbers(attrs)
    check(P.gather, attrs, [x, indices], [0],
          lambda x, i: lax.gather(x, i, numbers, attrs["slice_sizes"], mode=lax.GatherScatterMode.CLIP), rng)


def test_gather_with_batching_dims(rng):
    x, indices = rng.standard_normal((3, 5, 2)), rng.integers(0, 5, size=(3, 4, 1))
    attrs = {"offset_dims": (2,), "collapsed_slice_dims": (1,), "start_index_map": (1,), "slice_sizes": (1, 1, 2),
             "operand_batching_dims": (0,), "start_indices_batching_dims": (0,)}
    numbers = _jax_gather_numbers(attrs)
    check(P.gather, attrs, [x, indices], [0],
          lambda x, i: lax.gather(x, i, numbers, attrs["slice_sizes"], mode=lax.GatherScatterMode.CLIP), rng)


def _scatter_attrs(gather_attrs, mode):
    return {"update_window_dims": gather_attrs["offset_dims"],
            "inserted_window_dims": gather_attrs["collapsed_slice_dims"],
            "scatter_dims_to_operand_dims": gather_attrs["start_index_map"], "mode": mode}


def _jax_scatter(attrs):
    numbers = lax.ScatterDimensionNumbers(attrs["update_window_dims"], attrs["inserted_window_dims"],
                                          attrs["scatter_dims_to_operand_dims"])
    op = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "max": lax.scatter_max,
          "min": lax.scatter_min}[attrs["mode"]]
    return lambda x, i, u: op(x, i, u, numbers, mode=lax.GatherScatterMode.FILL_OR_DROP,
                              unique_indices=attrs["mode"] in ("set", "mul"))


def _updates_shape(x, indices, gather_attrs):
    collapsed = gather_attrs["collapsed_slice_dims"]
    window = iter(s for d, s in enumerate(gather_attrs["slice_sizes"]) if d not in collapsed)
    batch = iter(indices.shape[:-1])
    rank = indices.ndim - 1 + x.ndim - len(collapsed)
    return tuple(next(window) if d in gather_attrs["offset_dims"] else next(batch) for d in range(rank))


@pytest.mark.parametrize("mode", ["add", "max", "min", "mul"])
@settings(max_examples=4)
@given(data=st.data())
def test_scatter_combining(mode, data):
    rng = np.random.default_rng(0)
    x, indices, gather_attrs = _gather_case(data, rng)
    attrs = _scatter_attrs(gather_attrs, mode)
    updates = rng.standard_normal(_updates_shape(x, indices, gather_attrs))
    # JAX's scatter_mul gradient needs unique indices (one update); xlac's handles duplicates (test below).
    if mode == "mul":
        scatter_dims = [d for d in range(updates.ndim) if d not in attrs["update_window_dims"]]
        if any(updates.shape[d] > 1 for d in scatter_dims):
            return
    check(P.scatter, attrs, [x, indices, updates], [0, 2], _jax_scatter(attrs), rng)


@settings(max_examples=6)
@given(data=st.data())
def test_scatter_set_unique(data):
    rng = np.random.default_rng(0)
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    count = data.draw(st.integers(1, int(np.prod(shape))))
    flat = rng.permutation(int(np.prod(shape)))[:count]
    indices = np.stack(np.unravel_index(flat, shape), axis=-1)
    if data.draw(st.booleans()):
        indices[0, 0] = shape[0] + 1           # dropped: out of bounds
    attrs = {"update_window_dims": (), "inserted_window_dims": tuple(range(len(shape))),
             "scatter_dims_to_operand_dims": tuple(range(len(shape))), "mode": "set"}
    check(P.scatter, attrs, [rng.standard_normal(shape), indices, rng.standard_normal(count)], [0, 2],
          _jax_scatter(attrs), rng)


def test_scatter_set_windows(rng):
    x, indices, updates = rng.standard_normal((4, 3)), np.array([[0], [2], [3]]), rng.standard_normal((3, 2, 3))
    attrs = {"update_window_dims": (1, 2), "inserted_window_dims": (), "scatter_dims_to_operand_dims": (0,),
             "mode": "set"}
    # the window at row 3 does not fit (rows 3..4 of 4): dropped, no gradient
    check(P.scatter, attrs, [x, indices, updates], [0, 2], _jax_scatter(attrs), rng)


def _scatter_vjp_of(x, indices, updates, ct, mode):
    attrs = {"update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
             "mode": mode}

    def program(x, i, u, c):
        out = ops.scatter(x, i, u, **attrs)
        x_ct, _, u_ct = P.scatter.vjp(attrs, [x, i, u], [out], [c])
        (tangent,) = P.scatter.jvp(attrs, [x, i, u], [out], [None, None, ops.full(u.shape, 1.0, u.dtype)])
        return out, x_ct, u_ct, tangent
    return [np.asarray(v) for v in xlac.compile(program)(x, indices, updates, ct)]


def test_scatter_set_duplicates_only_the_last_write_gets_the_gradient():
    x, updates, ct = np.zeros(4), np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0, 40.0])
    indices = np.array([[1], [3], [1], [7]])        # 1 twice (the second write wins), 7 dropped
    out, x_ct, u_ct, tangent = _scatter_vjp_of(x, indices, updates, ct, "set")
    np.testing.assert_array_equal(out, [0.0, 3.0, 0.0, 2.0])   # CPU XLA applies writes in order
    np.testing.assert_array_equal(x_ct, [10.0, 0.0, 30.0, 0.0])
    np.testing.assert_array_equal(u_ct, [0.0, 40.0, 20.0, 0.0])
    np.testing.assert_array_equal(tangent, [0.0, 1.0, 0.0, 1.0])


def test_scatter_add_duplicates_and_dropped():
    x, updates, ct = np.zeros(3), np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])
    _, x_ct, u_ct, tangent = _scatter_vjp_of(x, np.array([[2], [2], [-1]]), updates, ct, "add")
    np.testing.assert_array_equal(x_ct, ct)
    np.testing.assert_array_equal(u_ct, [30.0, 30.0, 0.0])
    np.testing.assert_array_equal(tangent, [0.0, 0.0, 2.0])


def test_scatter_mul_duplicates_with_zeros():
    x, ct = np.array([2.0, 5.0, 7.0]), np.array([1.0, 1.0, 1.0])
    updates = np.array([3.0, 0.0, 4.0, 6.0])      # element 1: 5 * 3 * 0 * 4; element 0: 2 * 6
    out, x_ct, u_ct, tangent = _scatter_vjp_of(x, np.array([[1], [1], [1], [0]]), updates, ct, "mul")
    np.testing.assert_array_equal(out, [12.0, 0.0, 7.0])
    np.testing.assert_array_equal(x_ct, [6.0, 0.0, 1.0])
    np.testing.assert_array_equal(u_ct, [0.0, 60.0, 0.0, 2.0])   # d/du_j: 5 * product of the others
    np.testing.assert_array_equal(tangent, [2.0, 60.0, 0.0])


def test_scatter_max_ties_share_the_gradient():
    x, ct = np.array([5.0, 1.0]), np.array([12.0, 6.0])
    out, x_ct, u_ct, _ = _scatter_vjp_of(x, np.array([[0], [0], [1]]), np.array([5.0, 2.0, 3.0]), ct, "max")
    np.testing.assert_array_equal(out, [5.0, 3.0])
    np.testing.assert_array_equal(x_ct, [6.0, 0.0])
    np.testing.assert_array_equal(u_ct, [6.0, 0.0, 6.0])


def test_in_place_program_gradients_through_the_engine():
    """The rules composed by the autodiff engine on a program with writes, duplicates and views."""
    import xlac.differentiate as differentiate
    import xlac.numpy as xnp

    def program(x, v):
        y = x.copy()
        y[[1, 3, 1]] = v                  # duplicate target: the last write (v[2]) wins
        y[0] = y[2] * 3
        y[1:3] *= 2
        z = xnp.concatenate([y[::-2], xnp.broadcast_to(y[:, None], (5, 2)).reshape(-1)])
        return (z * xnp.arange(1.0, 14.0)).sum()

    def reference(x, v):
        y = x.at[1].set(v[2]).at[3].set(v[1])
        y = y.at[0].set(y[2] * 3)
        y = y.at[1:3].multiply(2)
        z = jnp.concatenate([y[::-2], jnp.broadcast_to(y[:, None], (5, 2)).reshape(-1)])
        return (z * jnp.arange(1.0, 14.0)).sum()
    x, v = np.array([5.0, 4, 3, 2, 1]), np.array([1.0, 2, 3])
    got = differentiate.grad(program, argnums=(0, 1))(x, v)
    expected = jax.grad(reference, argnums=(0, 1))(x, v)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e))


# ---------------------------------------------------------------- sort


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_sort_multi_operand(shape, data):
    rng = np.random.default_rng(0)
    dim = data.draw(st.integers(0, len(shape) - 1))
    num_keys = data.draw(st.integers(1, 2))
    keys = [rng.integers(0, 3, size=shape).astype(F64) for _ in range(num_keys)]   # ties: stable order
    values = rng.standard_normal(shape)
    positions = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(len(shape))]),
                                shape).astype(np.int32)
    attrs = {"dimension": dim, "is_stable": True, "num_keys": num_keys}
    check(P.sort, attrs, [*keys, values, positions], list(range(num_keys + 1)),
          lambda *xs: lax.sort(xs, dimension=dim, is_stable=True, num_keys=num_keys), rng, fd=False)


def test_sort_finite_differences(rng):
    x = rng.standard_normal((3, 5))
    attrs = {"dimension": 1, "is_stable": True, "num_keys": 1}
    check(P.sort, attrs, [x, rng.standard_normal((3, 5))], [0, 1],
          lambda *xs: lax.sort(xs, dimension=1, is_stable=True, num_keys=1), rng)


# ---------------------------------------------------------------- complex parts, bitcasts


def test_real_imag_complex(rng):
    re, im, ct = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)

    def program(re, im, ct):
        z = ops.complex(re, im)
        (z_ct,) = P.imag.vjp({}, [z], [ops.imag(z)], [ct])
        re_ct, im_ct = P.complex_.vjp({}, [re, im], [z], [z_ct])
        (re_ct2,) = [P.real.vjp({}, [z], [ops.real(z)], [ct])[0]]
        return re_ct, im_ct, re_ct2
    re_ct, im_ct, z_ct = xlac.compile(program)(re, im, ct)
    _, vjp_fn = jax.vjp(lambda r, i: jnp.imag(lax.complex(r, i)), re, im)
    expected_re, expected_im = vjp_fn(ct)
    np.testing.assert_allclose(np.asarray(re_ct), expected_re)
    np.testing.assert_allclose(np.asarray(im_ct), expected_im)
    np.testing.assert_allclose(np.asarray(z_ct), ct + 0j)


def test_bitcast_convert_has_no_derivative():
    assert P.bitcast_convert.vjp({}, [None], [None], [None]) == [None]
    assert P.bitcast_convert.jvp({}, [None], [None], [None]) == [None]
