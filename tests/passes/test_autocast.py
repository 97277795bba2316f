"""Autocast: dtypes per policy class, values within bfloat16 tolerance, regions, policies, cast hygiene."""
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from benchmarks.models import make_transformer_block, transformer_params
from tests.tolerance import assert_matches
from xlac.ir import dtypes
from xlac.passes.autocast import autocast_pass

BF16 = dtypes.bfloat16
F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
RTOL = 1.6e-2          # torch.testing's bfloat16 tolerance


def data(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def autocast_graph(fn, *args):
    return xlac.compile(fn).trace(*args).ir("autocast")


def close(got, expected, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), expected, rtol=rtol, atol=rtol)


# ---------------------------------------------------------------- lower precision: every dot_general

A, B, V = data(4, 6), data(6, 5, seed=1), data(6, seed=2)
CONTRACTIONS = {
    "matmul": (lambda a, b, v: xnp.matmul(a, b), lambda a, b, v: a @ b),
    "@": (lambda a, b, v: a @ b, lambda a, b, v: a @ b),
    "einsum": (lambda a, b, v: xnp.einsum("ij,jk->ik", a, b), lambda a, b, v: np.einsum("ij,jk->ik", a, b)),
    "dot": (lambda a, b, v: xnp.dot(a, b), lambda a, b, v: np.dot(a, b)),
    "tensordot": (lambda a, b, v: xnp.tensordot(a, b, 1), lambda a, b, v: np.tensordot(a, b, 1)),
    "inner": (lambda a, b, v: xnp.inner(a, v), lambda a, b, v: np.inner(a, v)),
    "vdot": (lambda a, b, v: xnp.vdot(v, v), lambda a, b, v: np.vdot(v, v)),
    "outer": (lambda a, b, v: xnp.outer(v, v), lambda a, b, v: np.outer(v, v)),
}


def _all_contractions(a, b, v):
    with xlac.autocast():
        return tuple(f(a, b, v) for f, _ in CONTRACTIONS.values())


ALL_CONTRACTIONS = xlac.compile(_all_contractions)


def test_every_contraction_runs_in_bfloat16():
    got = ALL_CONTRACTIONS(A, B, V)
    for (name, (_, reference)), out in zip(CONTRACTIONS.items(), got):
        assert out.dtype == BF16, name
        close(out, reference(A, B, V))
    graph = ALL_CONTRACTIONS.trace(A, B, V).ir("final")
    dots = [n for n in graph.nodes if n.primitive.name == "dot_general"]
    assert dots and all(v.type.dtype == BF16 for n in dots for v in n.operands + n.results)


@pytest.mark.parametrize("name", ["einsum", "matmul", "tensordot"])
def test_stablehlo_has_a_bf16_dot_general_only_under_autocast(name):
    fn = CONTRACTIONS[name][0]

    def with_autocast(a, b, v):
        with xlac.autocast():
            return fn(a, b, v)
    on = xlac.compile(with_autocast).lower(A, B, V).as_text()
    off = xlac.compile(fn).lower(A, B, V).as_text()
    bf16_dot = "xbf16>, tensor<"
    assert any("stablehlo.dot_general" in line and bf16_dot in line for line in on.splitlines())
    assert not any("stablehlo.dot_general" in line and "bf16" in line for line in off.splitlines())


def test_float64_integer_and_bool_are_never_cast():
    def f(a64, i, mask):
        with xlac.autocast():
            return a64 @ a64.T, xnp.exp(a64), i @ i.T, xnp.where(mask, a64, 0.0), xnp.sum(i)
    a64, i, mask = data(3, 3, dtype=np.float64), np.arange(9).reshape(3, 3), np.eye(3, dtype=bool)
    got = xlac.compile(f)(a64, i, mask)
    for g, e in zip(got, (a64 @ a64.T, np.exp(a64), i @ i.T, np.where(mask, a64, 0.0), np.sum(i))):
        assert_matches(g, e)
    assert "convert" not in xlac.compile(f).trace(a64, i, mask).ir("final").op_counts()


# ---------------------------------------------------------------- float32 class, promote class, everything else


def test_sensitive_ops_run_in_float32_on_bfloat16_values():
    def f(a, b):
        with xlac.autocast():
            h = a @ b                                        # bf16
            return (h, xnp.exp(h), xnp.log(xnp.abs(h) + 1), xnp.sum(h), xnp.mean(h, axis=0), xnp.var(h),
                    xnp.std(h, axis=1), xnp.cumsum(h, axis=1), h ** 2, xnp.tanh(h))
    got = xlac.compile(f)(A, B)
    h = A @ B
    expected = (h, np.exp(h), np.log(np.abs(h) + 1), np.sum(h), np.mean(h, axis=0), np.var(h), np.std(h, axis=1),
                np.cumsum(h, axis=1), h ** 2, np.tanh(h))
    want = [BF16, F32, F32, F32, F32, F32, F32, F32, F32, BF16]    # tanh: not in a list, runs in h's dtype
    for g, e, dt in zip(got, expected, want):
        assert g.dtype == dt
        close(g, e, rtol=3 * RTOL)      # bf16 inputs to float32 ops: the bf16 rounding of h propagates


def test_float16_inputs_to_float32_ops_are_cast_up():
    x = data(8, dtype=np.float16)

    def f(x):
        with xlac.autocast():
            return xnp.exp(x), xnp.sum(x), xnp.sqrt(xnp.abs(x))
    e, s, r = xlac.compile(f)(x)
    assert (e.dtype, s.dtype, r.dtype) == (F32, F32, F16)
    close(e, np.exp(x.astype(np.float32)), rtol=1e-6)


def test_promote_takes_the_widest_float_and_python_scalars_follow():
    def f(a, b, bias, mask):
        with xlac.autocast():
            h = a @ b                                               # bf16
            return (h + bias, h * 0.5, xnp.where(mask, h, -1e9), xnp.concatenate([h, bias[None, :]]),
                    xnp.stack([h, h]), xnp.maximum(h, 0.0), h + xnp.zeros(5, np.float32), h - xnp.max(bias))
    bias, mask = data(5, seed=3), np.arange(20).reshape(4, 5) % 2 == 0
    got = xlac.compile(f)(A, B, bias, mask)
    h = A @ B
    expected = (h + bias, h * 0.5, np.where(mask, h, -1e9), np.concatenate([h, bias[None, :]]), np.stack([h, h]),
                np.maximum(h, 0.0), h + np.zeros(5, np.float32), h - np.max(bias))
    want = [F32, BF16, BF16, F32, BF16, BF16, F32, BF16]   # 0-d values (scalars, full reductions) are weak
    for g, e, dt in zip(got, expected, want):
        assert g.dtype == dt
        close(g, e)


def test_transformer_block_matches_float32_numpy_and_keeps_softmax_and_layer_norm_in_float32():
    x, params = transformer_params(np.random.default_rng(0), seq=16, d_model=32)
    block = make_transformer_block(xnp, n_heads=2)

    def f(x, p):
        with xlac.autocast():
            return block(x, p)
    compiled = xlac.compile(f)
    got = compiled(x, params)
    expected = make_transformer_block(np, n_heads=2)(x.astype(np.float64),
                                                     {k: v.astype(np.float64) for k, v in params.items()})
    assert got.dtype == F32                       # the residual x + bf16 branch promotes back to float32
    close(got, expected)
    graph = compiled.trace(x, params).ir("final")

    def lines_of(origin):
        return {n.location.line for n in graph.nodes if n.origin == origin}
    # softmax: exp(x - max) / sum(e); layer norm: mean, var, then (x - mean) / sqrt(var + eps) * gain + bias
    softmax = [n for n in graph.nodes if n.origin in ("exp", "sum")
               or (n.origin == "divide" and n.location.line in lines_of("sum"))]
    layer_norm = [n for n in graph.nodes if n.origin in ("mean", "var") or n.location.line in lines_of("sqrt")]
    assert len(softmax) >= 4 and len(layer_norm) >= 20
    for node in softmax + layer_norm:
        assert {v.type.dtype for v in node.results} == {F32}, node
    dots = [n.results[0].type.dtype for n in graph.nodes if n.primitive.name == "dot_general"]
    assert dots == [BF16] * 6


# ---------------------------------------------------------------- regions, decorator, options


def test_nesting_and_disabled_regions_inside_a_compiled_function():
    def f(a, b):
        with xlac.autocast():
            h = a @ b
            with xlac.autocast(enabled=False):
                kept = h @ b.T                 # traced as float32: runs in float32 on h cast back
                with xlac.autocast(dtype="float16"):
                    half = a @ b
            after = a @ b
        outside = h @ b.T                      # after the region: bf16 @ f32 has no one dtype: as traced
        return h, kept, half, after, outside, xnp.tanh(h), h[::2]    # the others run in h's dtype
    h, kept, half, after, outside, tanh, view = xlac.compile(f)(A, B)
    assert (h.dtype, kept.dtype, half.dtype, after.dtype, outside.dtype) == (BF16, F32, F16, BF16, F32)
    assert (tanh.dtype, view.dtype) == (BF16, BF16)
    close(tanh, np.tanh(A @ B))
    close(kept, A @ B @ B.T)              # XLA may keep h's excess precision through the cast back
    close(outside, A @ B @ B.T)
    close(half, A @ B, rtol=2e-3)
    graph = xlac.compile(f).trace(A, B).ir("final")
    kept_dot = [n for n in graph.nodes if n.primitive.name == "dot_general"][1]
    assert [v.type.dtype for v in kept_dot.operands] == [F32, F32]


@xlac.autocast(dtype=np.float16)
def _decorated(a, b):
    return a @ b


def test_decorator_form_and_float16():
    got = xlac.compile(_decorated)(A, B)
    assert got.dtype == F16
    close(got, A @ B, rtol=2e-3)
    assert _decorated.__name__ == "_decorated"


def test_accumulate_float32_keeps_low_precision_inputs_and_gives_float32():
    def f(a, b):
        with xlac.autocast(accumulate="float32"):
            return a @ b, xnp.einsum("ij,jk->ik", a, b)
    compiled = xlac.compile(f)
    for out in compiled(A, B):
        assert out.dtype == F32
        close(out, A @ B)
    dot = next(n for n in compiled.trace(A, B).ir("final").nodes if n.primitive.name == "dot_general")
    assert [v.type.dtype for v in dot.operands] == [BF16, BF16] and dot.attrs["preferred_dtype"] == F32
    assert "bf16>) -> tensor<4x5xf32>" in compiled.lower(A, B).as_text()


def test_call_time_state_applies_to_the_whole_trace_and_is_part_of_the_cache_key():
    compiled = xlac.compile(lambda a, b: a @ b)
    assert compiled(A, B).dtype == F32
    with xlac.autocast():
        assert compiled(A, B).dtype == BF16
    assert compiled(A, B).dtype == F32


def test_eager_operations_honour_the_context():
    a = xlac.asarray(A)
    with xlac.autocast():
        h = a @ B
        assert (h.dtype, xnp.exp(h).dtype) == (BF16, F32)
    assert (a @ B).dtype == F32
    close(h, A @ B)


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="bfloat16 or float16"):
        xlac.autocast(dtype="float32")
    with pytest.raises(ValueError, match="accumulate"):
        xlac.autocast(accumulate="float16")
    with pytest.raises(TypeError, match="AutocastPolicy"):
        xlac.autocast(policy={"einsum": "float32"})
    with pytest.raises(ValueError, match="not an xlac.numpy function"):
        xlac.AutocastPolicy().with_changes(einsun="float32")
    with pytest.raises(ValueError, match="not a primitive"):
        xlac.AutocastPolicy().with_changes(primitives={"matmul": "float32"})
    with pytest.raises(ValueError, match="not one of"):
        xlac.AutocastPolicy().with_changes(einsum="fp32")


# ---------------------------------------------------------------- the policy


def test_policy_prints_its_table_and_is_hashable():
    text = str(xlac.AutocastPolicy())
    for line in ("lower_precision", "primitives: dot_general", "float32", "promote", "follow"):
        assert line in text
    assert "var" in text and "logaddexp" in text
    assert hash(xlac.AutocastPolicy()) == hash(xlac.AutocastPolicy())
    assert xlac.autocast().state == xlac.autocast().state


def test_user_policy_keeps_einsum_in_float32_and_other_matmuls_in_bfloat16():
    policy = xlac.AutocastPolicy().with_changes(einsum="float32")
    assert "einsum" in str(policy).split("float32:")[1].split("promote:")[0]

    def f(a, b):
        with xlac.autocast(policy=policy):
            return xnp.einsum("ij,jk->ik", a, b), a @ b
    e, m = xlac.compile(f)(A, B)
    assert (e.dtype, m.dtype) == (F32, BF16)
    assert_matches(e, A @ B, rtol=1e-5)


def test_one_einsum_kept_in_float32_with_a_disabled_region():
    def f(a, b):
        with xlac.autocast():
            with xlac.autocast(enabled=False):
                e = xnp.einsum("ij,jk->ik", a, b)
            return e, xnp.einsum("ij,jk->ik", a, b)
    e, other = xlac.compile(f)(A, B)
    assert (e.dtype, other.dtype) == (F32, BF16)


# ---------------------------------------------------------------- cast hygiene and graph invariants


def test_a_weight_used_by_two_matmuls_is_cast_once():
    def f(a, c, w):
        with xlac.autocast():
            return a @ w, c @ w
    graph = autocast_graph(f, A, data(3, 6), B)
    converts = [n for n in graph.nodes if n.primitive.name == "convert"]
    w = graph.inputs[2]
    assert sum(n.operands[0] is w for n in converts) == 1
    assert graph.report["converts_inserted"] == 3 and graph.report["ops_lowered"] == 2


def test_cancelling_convert_chains_go_and_value_changing_ones_stay():
    ab, bb = A.astype(BF16), B.astype(BF16)

    def bf16_inputs(a, b):                    # traced: bf16 -> f32 -> dot -> bf16; now one bf16 dot
        with xlac.autocast():
            return a @ b
    graph = autocast_graph(bf16_inputs, ab, bb)
    assert graph.op_counts().get("convert", 0) == 0 and graph.report["converts_removed"] == 3
    close(xlac.compile(bf16_inputs)(ab, bb), ab.astype(np.float32) @ bb.astype(np.float32))

    def round_trip(a):                        # user-written f32 -> bf16 -> f32 changes values: both stay
        with xlac.autocast():
            return xnp.exp(a.astype(BF16).astype(np.float32))
    graph = autocast_graph(round_trip, A)
    assert graph.op_counts()["convert"] == 2
    assert_matches(xlac.compile(round_trip)(A), np.exp(A.astype(BF16).astype(np.float32)))


def _write_rows(xp):
    def write_rows(x, b):
        x[0, :4] = (x @ b)[0, :4] * 2.0
        x[1:3] += x[1:3] @ xp.ones((6, 6), np.float32)
        x[[3, 2], 5] = (x @ b)[:2, 0]              # a scatter
        return x.sum()
    return write_rows


def test_mutated_float32_argument_stays_float32():
    write_rows = _write_rows(xnp)

    def f(x, b):
        with xlac.autocast():
            return write_rows(x, b)
    x = data(4, 6)
    got_x, want_x = x.copy(), x.copy()
    total = xlac.compile(f)(got_x, B)
    want = _write_rows(np)(want_x, B)
    assert got_x.dtype == F32 and total.dtype == F32
    close(got_x, want_x, rtol=3 * RTOL)
    close(total, want, rtol=3 * RTOL)
    graph = xlac.compile(f).trace(x.copy(), B).ir("final")
    ((_, j),) = graph.input_updates
    assert graph.outputs[j].type.dtype == F32
    assert {"dynamic_update_slice", "scatter"} <= set(graph.op_counts())


def test_mutated_bfloat16_argument_keeps_its_dtype():
    def f(x, y):
        with xlac.autocast():
            x[0] = xnp.exp(y)                 # float32 value written into a bfloat16 array
            return x
    x, y = data(2, 3, dtype=BF16), data(3, seed=4)
    got_x = x.copy()
    xlac.compile(f)(got_x, y)
    assert got_x.dtype == BF16
    close(got_x[0], np.exp(y))


def test_graph_without_autocast_is_untouched_and_verifier_passes():
    graph = xlac.compile(lambda a, b: xnp.exp(a @ b)).trace(A, B).ir("functionalize")
    assert autocast_pass(graph) is graph
    assert xlac.config.verify_passes        # tests/conftest.py: every test above ran the verifier per pass
