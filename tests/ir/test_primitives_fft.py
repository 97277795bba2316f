"""The ``fft`` primitive: values against numpy.fft, type-rule errors, and its VJP, JVP and batching rules
against ``jax.vjp`` / ``jax.jvp`` / ``jax.vmap`` of ``jax.lax.fft``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from xlac.vectorize import vmap
from xlac.ir import ShapeError, TensorType
from xlac.ir import primitives as P
from xlac.trace import ops
from tests.ir.test_primitives import covers, run
from tests.tolerance import assert_matches

F32, F64, C64, C128 = (np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
COMPLEX_OF = {F32: C64, F64: C128}
NUMPY_OF = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}


def operand_shape(kind, lead, lengths):
    tail = tuple(lengths)
    if kind == "IRFFT":
        tail = tail[:-1] + (tail[-1] // 2 + 1,)
    return tuple(lead) + tail


def random_operand(rng, kind, shape, real_dtype):
    x = rng.standard_normal(shape)
    if kind != "RFFT":
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(COMPLEX_OF[real_dtype])
    return x.astype(real_dtype)


@covers("fft")
@settings(max_examples=30)
@given(kind=st.sampled_from(sorted(NUMPY_OF)), dtype=st.sampled_from([F32, F64]),
       lead=st.lists(st.integers(0, 3), max_size=2), lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       seed=st.integers(0, 2 ** 16))
def test_fft_matches_numpy(kind, dtype, lead, lengths, seed):
    x = random_operand(np.random.default_rng(seed), kind, operand_shape(kind, lead, lengths), dtype)
    got = run(lambda a: ops.fft(a, kind, lengths), x)
    k = len(lengths)
    expected = NUMPY_OF[kind](x, s=lengths, axes=tuple(range(x.ndim - k, x.ndim)))
    out_dtype = COMPLEX_OF[dtype] if kind != "IRFFT" else dtype
    assert_matches(got, expected.astype(out_dtype), rtol=1e-4 if dtype == F32 else 1e-10)


@pytest.mark.parametrize("x, attrs, match", [
    (TensorType((4,), F32), dict(fft_type="FFT", fft_length=(4,)), "complex64 or complex128 operand"),
    (TensorType((4,), C64), dict(fft_type="RFFT", fft_length=(4,)), "float32 or float64 operand"),
    (TensorType((4,), C64), dict(fft_type="DCT", fft_length=(4,)), "unknown fft_type"),
    (TensorType((2, 2, 2, 2), C64), dict(fft_type="FFT", fft_length=(2, 2, 2, 2)), "1 to 3 positive sizes"),
    (TensorType((0,), C64), dict(fft_type="FFT", fft_length=(0,)), "1 to 3 positive sizes"),
    (TensorType((4,), C64), dict(fft_type="FFT", fft_length=(4, 4)), "fewer axes"),
    (TensorType((3, 5), C64), dict(fft_type="FFT", fft_length=(4,)), r"trailing axes of c64\[3,5\] must be"),
    (TensorType((3, 4), C64), dict(fft_type="IRFFT", fft_length=(4,)), r"must be \(3,\)"),
    (TensorType((3, 4), F64), dict(fft_type="RFFT", fft_length=(3,)), "must be fft_length"),
])
def test_type_rule_errors(x, attrs, match):
    with pytest.raises(ShapeError, match=match):
        P.fft.infer_types(x, **attrs)


def test_result_types():
    assert P.fft.infer_types(TensorType((2, 7), F64), fft_type="RFFT", fft_length=(7,))[0] == TensorType((2, 4), C128)
    assert P.fft.infer_types(TensorType((3, 4), C64), fft_type="IRFFT", fft_length=(3, 6))[0] == TensorType((3, 6), F32)


# ---------------------------------------------------------------- rules against JAX

RULE_CASES = [("FFT", (5,)), ("IFFT", (2, 3)), ("RFFT", (6,)), ("RFFT", (3, 5)), ("RFFT", (2, 2, 3)),
              ("IRFFT", (6,)), ("IRFFT", (7,)), ("IRFFT", (2, 4)), ("IRFFT", (1,)), ("IFFT", (2, 1, 3))]


def _random_like(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("kind, lengths", RULE_CASES)
def test_vjp_and_jvp_rules_match_jax(kind, lengths):
    import xlac
    rng = np.random.default_rng(1)
    x = random_operand(rng, kind, operand_shape(kind, (2,), lengths), F64)
    attrs = dict(fft_type=kind, fft_length=lengths)
    out_type = P.fft.infer_types(TensorType(x.shape, x.dtype), **attrs)[0]
    ct, t = _random_like(rng, out_type.shape, out_type.dtype), _random_like(rng, x.shape, x.dtype)

    def rules(a, c, tangent):
        y = ops.fft(a, kind, lengths)
        return P.fft.vjp(attrs, [a], [y], [c])[0], P.fft.jvp(attrs, [a], [y], [tangent])[0]
    got_ct, got_t = xlac.compile(rules)(x, ct, t)
    with jax.enable_x64(True):
        f = lambda a: jax.lax.fft(a, kind, lengths)
        _, vjp_fn = jax.vjp(f, jnp.asarray(x))
        want_ct = np.asarray(vjp_fn(jnp.asarray(ct))[0])
        want_t = np.asarray(jax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))[1])
    assert_matches(got_ct, want_ct, rtol=1e-10)
    assert_matches(got_t, want_t, rtol=1e-10)


@pytest.mark.parametrize("kind, lengths", [("FFT", (4,)), ("RFFT", (2, 3)), ("IRFFT", (5,)), ("IFFT", (2, 2, 2))])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_batching_rule_matches_jax_vmap(kind, lengths, axis):
    rng = np.random.default_rng(2)
    example = random_operand(rng, kind, operand_shape(kind, (2,), lengths), F32)
    batched = np.stack([random_operand(rng, kind, example.shape, F32) for _ in range(3)], axis=axis)
    got = vmap(lambda a: ops.fft(a, kind, lengths), in_axes=axis)(batched)
    want = jax.vmap(lambda a: jax.lax.fft(a, kind, lengths), in_axes=axis)(batched)
    assert_matches(got, np.asarray(want), rtol=1e-4)
