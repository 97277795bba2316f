"""Batching rules: every primitive batched by xlac.vmap against jax.vmap of the same jax.lax op,
with batch axes other than 0 and with some operands unbatched."""
import jax
import jax.lax as lax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from xlac.vectorize import vmap
from xlac.ir import primitives as P
from xlac.ir.primitive import CATALOG
import xlac.passes.rules  # noqa: F401  (registers the rules)
from xlac.trace import ops
from tests.tolerance import assert_matches

B = 3
RNG = np.random.default_rng(0)


def batched(example, axis, size=B):
    """``size`` random variations of ``example`` stacked along ``axis`` (or ``example`` itself for None)."""
    example = np.asarray(example)
    if axis is None:
        return example
    stack = np.stack([_perturb(example, i) for i in range(size)], axis=axis)
    return stack


def _perturb(x, i):
    if x.dtype == np.bool_:
        return RNG.random(x.shape) < 0.5
    if np.issubdtype(x.dtype, np.integer):
        return x if i == 0 else np.roll(x, i) if x.ndim else x + 0
    return (x * (1 + 0.25 * RNG.random(x.shape))).astype(x.dtype)


def check(xlac_fn, jax_fn, examples, in_axes, out_axes=0, rtol=None):
    args = [batched(e, a) for e, a in zip(examples, in_axes)]
    got = vmap(xlac_fn, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    want = jax.vmap(jax_fn, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert_matches(g, np.asarray(w), rtol=rtol)


# ---------------------------------------------------------------- elementwise

F32 = np.float32
POS = (RNG.random((2, 4)) + 0.5).astype(F32)          # positive floats: log, sqrt, pow are defined
SIGNED = (RNG.random((2, 4)) * 4 - 2).astype(F32)
INTS = RNG.integers(-20, 20, (2, 4)).astype(np.int32)
SMALL = RNG.integers(0, 5, (2, 4)).astype(np.int32)

UNARY = {
    "neg": (lax.neg, SIGNED), "abs": (lax.abs, SIGNED), "sign": (lax.sign, SIGNED), "exp": (lax.exp, SIGNED),
    "expm1": (lax.expm1, SIGNED), "log": (lax.log, POS), "log1p": (lax.log1p, POS), "sqrt": (lax.sqrt, POS),
    "rsqrt": (lax.rsqrt, POS), "cbrt": (lax.cbrt, SIGNED), "tanh": (lax.tanh, SIGNED),
    "logistic": (lax.logistic, SIGNED), "sin": (lax.sin, SIGNED), "cos": (lax.cos, SIGNED),
    "tan": (lax.tan, POS * 0.5), "floor": (lax.floor, SIGNED), "ceil": (lax.ceil, SIGNED),
    "round": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), SIGNED * 3), "erf": (lax.erf, SIGNED),
    "not": (lax.bitwise_not, INTS), "popcnt": (lax.population_count, INTS),
    "real": (lax.real, (SIGNED + 1j * POS).astype(np.complex64)),
    "imag": (lax.imag, (SIGNED + 1j * POS).astype(np.complex64)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    jax_fn, example = UNARY[name]
    prim = CATALOG[name]
    check(lambda x: ops.bind(prim, x), jax_fn, [example], [1], rtol=1e-5)


def test_is_finite():
    example = np.array([[1.0, np.inf], [np.nan, -2.0]], F32)
    check(ops.is_finite, lax.is_finite, [example], [0])


BINARY = {
    "add": (lax.add, SIGNED), "sub": (lax.sub, SIGNED), "mul": (lax.mul, SIGNED), "div": (lax.div, POS),
    "rem": (lax.rem, POS), "pow": (lax.pow, POS), "max": (lax.max, SIGNED), "min": (lax.min, SIGNED),
    "atan2": (lax.atan2, SIGNED), "and": (lax.bitwise_and, INTS), "or": (lax.bitwise_or, INTS),
    "xor": (lax.bitwise_xor, INTS), "shift_left": (lax.shift_left, SMALL),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, SMALL),
    "shift_right_logical": (lax.shift_right_logical, SMALL),
}
AXES_PAIRS = [(0, 0), (1, 0), (None, 2), (2, None), (1, 1)]


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    jax_fn, example = BINARY[name]
    prim = CATALOG[name]
    for i, axes in enumerate(AXES_PAIRS[:2] if name not in ("add", "mul") else AXES_PAIRS):
        check(lambda x, y: ops.bind(prim, x, y), jax_fn, [example, example[::-1].copy()], axes, rtol=1e-5)


@pytest.mark.parametrize("axes", [(0, 1), (None, 0)])
def test_complex(axes):
    check(ops.complex, lax.complex, [SIGNED, POS], axes)


@pytest.mark.parametrize("direction", P.COMPARISON_DIRECTIONS)
def test_compare(direction):
    jax_fn = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}[direction]
    check(lambda x, y: ops.compare(x, y, direction), jax_fn, [INTS, SMALL], (1, None))


@pytest.mark.parametrize("axes", [(0, 0, 0), (None, 1, 0), (1, None, None), (None, None, 2)])
@pytest.mark.parametrize("scalar_pred", [False, True])
def test_select(axes, scalar_pred):
    pred = np.asarray(True) if scalar_pred else SIGNED > 0
    if scalar_pred and axes[0] is not None:
        axes = (0,) + axes[1:]
    check(ops.select, lax.select, [pred, SIGNED, POS], axes)


@pytest.mark.parametrize("axes", [(None, 0, None), (0, 1, 0), (0, None, None), (1, 1, 1)])
@pytest.mark.parametrize("scalar_bounds", [False, True])
def test_clamp(axes, scalar_bounds):
    lo, hi = (np.asarray(F32(-0.5)), np.asarray(F32(0.7))) if scalar_bounds else (SIGNED * 0.3, POS)
    if scalar_bounds:
        axes = tuple(0 if a is not None and i != 1 else a for i, a in enumerate(axes))
    check(ops.clamp, lax.clamp, [lo, SIGNED, hi], axes)


def test_convert_and_bitcast():
    check(lambda x: ops.convert(x, np.int32), lambda x: lax.convert_element_type(x, jnp.int32), [SIGNED * 4], [1])
    check(lambda x: ops.bitcast_convert(x, np.int32), lambda x: lax.bitcast_convert_type(x, jnp.int32), [SIGNED], [1])
    check(lambda x: ops.bitcast_convert(x, np.uint8), lambda x: lax.bitcast_convert_type(x, jnp.uint8), [SIGNED], [1])
    check(lambda x: ops.bitcast_convert(x, np.float32), lambda x: lax.bitcast_convert_type(x, jnp.float32),
          [RNG.integers(0, 255, (2, 4)).astype(np.uint8)], [1])


def test_stop_gradient():
    prim = CATALOG["stop_gradient"]
    check(lambda x: ops.bind(prim, x), lax.stop_gradient, [SIGNED], [1])


def test_creation_needs_no_batching():
    check(lambda x: x + ops.iota((2, 4), np.float32, 1) + ops.constant(np.ones((2, 4), F32)),
          lambda x: x + lax.broadcasted_iota(jnp.float32, (2, 4), 1) + 1, [SIGNED], [1])


# ---------------------------------------------------------------- shapes (hypothesis)

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _axis(draw, rank):
    return draw(st.integers(-(rank + 1), rank))


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_broadcast_in_dim(shape, data):
    extra = data.draw(st.integers(1, 3))
    out_shape = (extra,) + shape
    dims = tuple(range(1, len(shape) + 1))
    axis = data.draw(st.integers(0, len(shape)))
    x = RNG.random(shape).astype(F32)
    check(lambda x: ops.broadcast_in_dim(x, out_shape, dims),
          lambda x: lax.broadcast_in_dim(x, out_shape, dims), [x], [axis],
          out_axes=data.draw(st.integers(-len(out_shape) - 1, len(out_shape))))


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_reshape_transpose_reverse(shape, data):
    x = RNG.random(shape).astype(F32)
    axis = data.draw(st.integers(0, len(shape)))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    new_shape = (int(np.prod(shape)),)
    check(lambda x: (ops.reshape(x, new_shape), ops.transpose(x, perm), ops.reverse(x, dims)),
          lambda x: (lax.reshape(x, new_shape), lax.transpose(x, perm), lax.rev(x, dims)), [x], [axis])


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_slice_and_pad(shape, data):
    x = RNG.random(shape).astype(F32)
    axis = data.draw(st.integers(0, len(shape)))
    start = tuple(data.draw(st.integers(0, d - 1)) for d in shape)
    strides = tuple(data.draw(st.integers(1, 2)) for _ in shape)
    limit = tuple(shape)
    config = [(data.draw(st.integers(-1, 2)), data.draw(st.integers(0, 2)), data.draw(st.integers(0, 1)))
              for _ in shape]
    config = [(lo if d > 1 or lo >= 0 else 0, hi, inner) for (lo, hi, inner), d in zip(config, shape)]
    low, high, interior = zip(*config)
    value_axis = data.draw(st.sampled_from([None, 0]))
    pv = np.asarray(F32(7.0))
    check(lambda x, v: (ops.slice(x, start, limit, strides), ops.pad(x, v, low, high, interior)),
          lambda x, v: (lax.slice(x, start, limit, strides), lax.pad(x, v, config)), [x, pv], [axis, value_axis])


@settings(max_examples=8)
@given(shape=shapes, data=st.data())
def test_concatenate(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    xs = [RNG.random(shape).astype(F32) for _ in range(3)]
    axes = [data.draw(st.sampled_from([None, 0, len(shape)])) for _ in range(3)]
    axes[0] = 1 if len(shape) >= 1 else 0
    check(lambda *xs: ops.concatenate(xs, dim), lambda *xs: lax.concatenate(xs, dim), xs, axes)


# ---------------------------------------------------------------- reductions, contraction, sort


@settings(max_examples=5)
@given(shape=shapes, data=st.data())
def test_reduce_and_arg_reduce(shape, data):
    x = RNG.random(shape).astype(F32)
    axis = data.draw(st.integers(0, len(shape)))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    arg = data.draw(st.integers(0, len(shape) - 1))
    check(lambda x: (ops.reduce(x, "sum", axes), ops.reduce(x, "max", axes), ops.argmax(x, arg, np.int32),
                     ops.argmin(x, arg, np.int32)),
          lambda x: (jnp.sum(x, axes), jnp.max(x, axes), jnp.argmax(x, arg).astype(jnp.int32),
                     jnp.argmin(x, arg).astype(jnp.int32)), [x], [axis], rtol=1e-5)


LAX_CUMULATIVE = {"sum": lax.cumsum, "prod": lax.cumprod, "max": lax.cummax, "min": lax.cummin}


@settings(max_examples=10)
@given(shape=shapes, data=st.data())
def test_cumulative(shape, data):
    x = RNG.random(shape).astype(F32)
    batch_axis = data.draw(st.integers(0, len(shape)))
    axis, reverse = data.draw(st.integers(0, len(shape) - 1)), data.draw(st.booleans())
    op = data.draw(st.sampled_from(sorted(LAX_CUMULATIVE)))
    check(lambda x: ops.cumulative(x, op, axis, reverse), lambda x: LAX_CUMULATIVE[op](x, axis, reverse=reverse),
          [x], [batch_axis], rtol=1e-5)


@pytest.mark.parametrize("op", ["prod", "min", "and", "or"])
def test_reduce_ops(op):
    x = SMALL if op in ("and", "or") else POS
    jax_fn = {"prod": lambda x: jnp.prod(x, 1), "min": lambda x: jnp.min(x, 1),
              "and": lambda x: lax.reduce_and(x, (1,)), "or": lambda x: lax.reduce_or(x, (1,))}[op]
    check(lambda x: ops.reduce(x, op, (1,)), jax_fn, [x], [2], rtol=1e-5)


DOT_CASES = [  # lhs shape, rhs shape, contracting, batch
    ((3, 4), (4, 5), ((1,), (0,)), ((), ())),
    ((2, 3, 4), (2, 4, 5), ((2,), (1,)), ((0,), (0,))),
    ((4,), (4,), ((0,), (0,)), ((), ())),
    ((3, 4), (5, 4), ((1,), (1,)), ((), ())),
]


@pytest.mark.parametrize("case", DOT_CASES)
@pytest.mark.parametrize("axes", [(0, 0), (1, None), (None, 1), (None, 0), (1, 0)])
def test_dot_general(case, axes):
    ls, rs, contracting, batch = case
    axes = tuple(min(a, len(s)) if a is not None else None for a, s in zip(axes, (ls, rs)))
    lhs, rhs = RNG.random(ls).astype(F32), RNG.random(rs).astype(F32)
    check(lambda a, b: ops.dot_general(a, b, contracting, batch),
          lambda a, b: lax.dot_general(a, b, (contracting, batch)), [lhs, rhs], axes, rtol=1e-5)


@pytest.mark.parametrize("axes", [(0, 0), (1, None), (None, 2)])
def test_sort(axes):
    keys, values = SIGNED, INTS
    check(lambda k, v: ops.sort([k, v], 1), lambda k, v: tuple(lax.sort([k, v], dimension=1, num_keys=1)),
          [keys, values], axes)


# ---------------------------------------------------------------- gather, scatter, dynamic slices

GATHER_CASES = {
    "take_rows": ((5, 3), np.array([[4], [0], [2]]), dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                                                            start_index_map=(0,), slice_sizes=(1, 3))),
    "points": ((4, 5), np.array([[3, 1], [0, 4]]), dict(offset_dims=(), collapsed_slice_dims=(0, 1),
                                                         start_index_map=(0, 1), slice_sizes=(1, 1))),
    "windows": ((6, 5), np.array([[1], [4]]), dict(offset_dims=(1, 2), collapsed_slice_dims=(),
                                                    start_index_map=(0,), slice_sizes=(2, 3))),
    "batching_dims": ((3, 5), np.array([[1], [4], [0]]), dict(
        offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), slice_sizes=(1, 1),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,))),
}


def _jax_gather_numbers(dn):
    return lax.GatherDimensionNumbers(
        offset_dims=dn["offset_dims"], collapsed_slice_dims=dn["collapsed_slice_dims"],
        start_index_map=dn["start_index_map"], operand_batching_dims=dn.get("operand_batching_dims", ()),
        start_indices_batching_dims=dn.get("start_indices_batching_dims", ()))


@pytest.mark.parametrize("name", sorted(GATHER_CASES))
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, 1), (0, 0)])
def test_gather(name, axes):
    shape, indices, dn = GATHER_CASES[name]
    x = RNG.random(shape).astype(F32)
    indices = indices.astype(np.int32)
    args = [batched(x, axes[0]), np.stack([indices] * B, axes[1]) if axes[1] is not None else indices]
    if axes[1] is not None:           # a different (in-bounds) index per example
        args[1] = np.stack([np.roll(indices, i, axis=0) for i in range(B)], axes[1])
    got = vmap(lambda x, i: ops.gather(x, i, **{**dn, "slice_sizes": dn["slice_sizes"]}), in_axes=axes)(*args)
    want = jax.vmap(lambda x, i: lax.gather(x, i, _jax_gather_numbers(dn), dn["slice_sizes"],
                                            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS), in_axes=axes)(*args)
    assert_matches(got, np.asarray(want))


SCATTER_CASES = {  # operand shape, indices, updates shape, dimension numbers
    "rows": ((5, 3), np.array([[4], [0]]), (2, 3), dict(update_window_dims=(1,), inserted_window_dims=(0,),
                                                        scatter_dims_to_operand_dims=(0,))),
    "points": ((4, 5), np.array([[3, 1], [0, 4], [2, 2]]), (3,), dict(
        update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))),
    "windows": ((6, 5), np.array([[1], [3]]), (2, 2, 5), dict(update_window_dims=(1, 2), inserted_window_dims=(),
                                                             scatter_dims_to_operand_dims=(0,))),
}
JAX_SCATTER = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "max": lax.scatter_max,
               "min": lax.scatter_min}


@pytest.mark.parametrize("name", sorted(SCATTER_CASES))
@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 1), (1, 1, 0), (None, 1, 0)])
@pytest.mark.parametrize("mode", ["set", "add"])
def test_scatter(name, axes, mode):
    shape, indices, upd_shape, dn = SCATTER_CASES[name]
    indices = indices.astype(np.int32)
    x, upd = RNG.random(shape).astype(F32), RNG.random(upd_shape).astype(F32)
    args = [batched(x, axes[0]),
            np.stack([np.roll(indices, i, axis=0) for i in range(B)], axes[1]) if axes[1] is not None else indices,
            batched(upd, axes[2])]
    numbers = lax.ScatterDimensionNumbers(**dn)
    got = vmap(lambda x, i, u: ops.scatter(x, i, u, mode=mode, **dn), in_axes=axes)(*args)
    want = jax.vmap(lambda x, i, u: JAX_SCATTER[mode](x, i, u, numbers, mode=lax.GatherScatterMode.FILL_OR_DROP),
                    in_axes=axes)(*args)
    assert_matches(got, np.asarray(want), rtol=1e-5)


@pytest.mark.parametrize("mode", ["mul", "max", "min"])
def test_scatter_combiners(mode):
    shape, indices, upd_shape, dn = SCATTER_CASES["points"]
    x, upd = RNG.random(shape).astype(F32), RNG.random(upd_shape).astype(F32)
    args = [batched(x, 1), np.stack([np.roll(indices, i, 0) for i in range(B)]).astype(np.int32), batched(upd, 0)]
    numbers = lax.ScatterDimensionNumbers(**dn)
    got = vmap(lambda x, i, u: ops.scatter(x, i, u, mode=mode, **dn), in_axes=(1, 0, 0))(*args)
    want = jax.vmap(lambda x, i, u: JAX_SCATTER[mode](x, i, u, numbers), in_axes=(1, 0, 0))(*args)
    assert_matches(got, np.asarray(want), rtol=1e-5)


@pytest.mark.parametrize("axes", [(1, None, None), (None, 0, None), (0, 0, 0), (1, None, 0)])
def test_dynamic_slice(axes):
    x = RNG.random((5, 6)).astype(F32)
    args = [batched(x, axes[0])] + [np.array([0, 2, 9], np.int32) if a is not None else np.int32(3) for a in axes[1:]]
    got = vmap(lambda x, i, j: ops.dynamic_slice(x, [i, j], (2, 3)), in_axes=axes)(*args)
    want = jax.vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), in_axes=axes)(*args)
    assert_matches(got, np.asarray(want))


@pytest.mark.parametrize("axes", [(1, None, None, None), (None, 0, None, None), (None, None, 0, None),
                                  (0, 1, 0, 0), (None, None, None, 0)])
def test_dynamic_update_slice(axes):
    x, upd = RNG.random((5, 6)).astype(F32), RNG.random((2, 3)).astype(F32)
    args = [batched(x, axes[0]), batched(upd, axes[1])]
    args += [np.array([0, 4, 9], np.int32) if a is not None else np.int32(3) for a in axes[2:]]
    got = vmap(lambda x, u, i, j: ops.dynamic_update_slice(x, u, [i, j]), in_axes=axes)(*args)
    want = jax.vmap(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), in_axes=axes)(*args)
    assert_matches(got, np.asarray(want))
