"""xlac.numpy.fft against numpy.fft (values, dtypes, shapes, errors), compiled and eager; gradients
against jax.vjp / jax.jvp / jax.grad of jnp.fft; vmap against jax.vmap."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from xlac.ir import dtypes
from tests.tolerance import assert_matches

ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
SEVERAL_AXES = ("fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2")
NORMS = (None, "backward", "ortho", "forward")
DTYPES = [np.dtype(d) for d in ("float32", "float64", "complex64", "complex128", "int32", "float16", "bool")]
SINGLE = (np.dtype("float32"), np.dtype("complex64"), np.dtype("float16"))


def make_input(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-5, 6, shape).astype(dtype)
    x = rng.uniform(-2, 2, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-2, 2, shape)
    return x.astype(dtype)


def compare(call, x, compiled: bool):
    """Run ``call(np.fft or xnp.fft, x)`` both ways: the same error class, or matching results."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            expected = np.asarray(call(np.fft, x))
    except (ValueError, TypeError, IndexError) as e:
        with pytest.raises(type(e)):
            call(xnp.fft, x) if not compiled else xlac.compile(lambda a: call(xnp.fft, a))(x)
        return
    got = xlac.compile(lambda a: call(xnp.fft, a))(x) if compiled else call(xnp.fft, x)
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    single = x.dtype in SINGLE or expected.dtype in SINGLE
    tol = (2e-3 if expected.dtype == np.float16 else 1e-4) if single else 1e-10
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got.astype(np.complex128), expected.astype(np.complex128), rtol=tol, atol=tol * scale)


@st.composite
def one_axis_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1))
    n = draw(st.sampled_from([None, None, 1, 2, 3, 4, 7]))
    return shape, dict(n=n, axis=axis)


@st.composite
def several_axes_cases(draw, name):
    ndim = draw(st.integers(1 if not name.endswith("2") else 2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    if name.endswith("2"):
        axes = draw(st.sampled_from([(-2, -1), (0, 1), (-1, 0)]))
    else:
        axes = draw(st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=4).map(tuple)))
    s = None
    if axes is not None and draw(st.booleans()):
        s = tuple(draw(st.sampled_from([1, 2, 3, 5, -1])) for _ in axes)
    return shape, dict(s=s, axes=axes)


@given(name=st.sampled_from(ONE_AXIS), case=one_axis_cases(), dtype=st.sampled_from(DTYPES),
       norm=st.sampled_from(NORMS), compiled=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_one_axis_transforms_match_numpy(name, case, dtype, norm, compiled, seed):
    shape, kwargs = case
    compare(lambda m, a: getattr(m, name)(a, norm=norm, **kwargs), make_input(seed, shape, dtype), compiled)


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(SEVERAL_AXES), data=st.data(), dtype=st.sampled_from(DTYPES),
       norm=st.sampled_from(NORMS), compiled=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_several_axes_transforms_match_numpy(name, data, dtype, norm, compiled, seed):
    shape, kwargs = data.draw(several_axes_cases(name))
    compare(lambda m, a: getattr(m, name)(a, norm=norm, **kwargs), make_input(seed, shape, dtype), compiled)


def test_more_than_three_axes_and_repeated_axes():
    x = make_input(0, (2, 3, 2, 3, 2), np.dtype("float64"))
    cases = [(name, kwargs) for name in ("fftn", "ifftn", "rfftn", "irfftn")
             for kwargs in (dict(), dict(axes=(4, 0, 2, 1, 3), s=(3, 2, 4, 2, 5)), dict(axes=(0, 2, 0), s=(3, 4, 2)))]
    got = xlac.compile(lambda a: tuple(getattr(xnp.fft, name)(a, norm="ortho", **kw) for name, kw in cases))(x)
    for g, (name, kwargs) in zip(got, cases):
        assert_matches(g, getattr(np.fft, name)(x, norm="ortho", **kwargs), rtol=1e-10)


def test_result_dtypes_follow_numpy():
    for dtype in [np.dtype(d) for d in ("bool", "int8", "uint16", "int64", "float16", "float32", "float64",
                                        "complex64", "complex128")]:
        x = make_input(1, (4,), dtype)
        real_input = dtype.kind != "c"

        def all_transforms(m, a):
            out = [m.fft(a), m.ifft(a), m.irfft(a), m.hfft(a), m.fftn(a), m.irfftn(a)]
            return out + ([m.rfft(a), m.ihfft(a), m.rfftn(a)] if real_input else [])
        got = xlac.compile(lambda a: tuple(all_transforms(xnp.fft, a)))(x)
        for g, want in zip(got, all_transforms(np.fft, x)):
            assert np.asarray(g).dtype == want.dtype, (dtype, np.asarray(g).dtype, want.dtype)


def test_bfloat16_computes_in_single_precision():
    x = np.array([1.0, 2.0, 0.5, -1.0], dtypes.bfloat16)
    assert_matches(xnp.fft.fft(x), np.fft.fft(x.astype(np.float32)))
    assert_matches(xnp.fft.irfft(x), np.fft.irfft(x.astype(np.float32)).astype(dtypes.bfloat16))


def test_lists_scalars_and_empty_batches():
    assert_matches(xnp.fft.fft([1, 2, 3]), np.fft.fft([1, 2, 3]), rtol=1e-12)
    assert_matches(xnp.fft.rfft(np.zeros((0, 4))), np.fft.rfft(np.zeros((0, 4))))
    assert_matches(xnp.fft.fft(np.zeros(0), n=3), np.fft.fft(np.zeros(0), n=3))
    assert_matches(xnp.fft.fftn(np.ones(3, np.float32), axes=()), np.fft.fftn(np.ones(3, np.float32), axes=()))


# ---------------------------------------------------------------- out=


def test_out_is_written_and_returned():
    x = make_input(2, (3, 4), np.dtype("float64"))
    out = np.zeros((3, 3), np.complex128)
    assert xnp.fft.rfft(x, out=out) is out
    np.testing.assert_allclose(out, np.fft.rfft(x), rtol=1e-12, atol=1e-12)

    def f(a, o):
        xnp.fft.fft2(a, out=o)
        return o
    np.testing.assert_allclose(np.asarray(xlac.compile(f)(x, np.zeros((3, 4), np.complex64))),
                               np.fft.fft2(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="fft: output array has wrong shape"):
        xnp.fft.fft(x, out=np.zeros((3, 5), np.complex128))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'fft' output"):
        xnp.fft.fft(x, out=np.zeros((3, 4), np.float64))


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: xnp.fft.fft(np.ones(4), norm="unitary"), ValueError, "fft: Invalid norm value 'unitary'"),
    (lambda: xnp.fft.hfft(np.ones(4), norm="bad"), ValueError, "hfft: Invalid norm value"),
    (lambda: xnp.fft.fft(np.ones(4), n=0), ValueError, r"Invalid number of FFT data points \(0\)"),
    (lambda: xnp.fft.irfft(np.ones(1)), ValueError, r"irfft: Invalid number of FFT data points \(0\)"),
    (lambda: xnp.fft.fft(np.ones(4), n=2.5), TypeError, "number of points must be an integer"),
    (lambda: xnp.fft.rfft(np.ones(4, np.complex64)), TypeError, "rfft: expects real input, got complex64"),
    (lambda: xnp.fft.fft(np.ones(4), axis=1), IndexError, "axis 1 is out of bounds"),
    (lambda: xnp.fft.fft(np.float64(1.0)), IndexError, "out of bounds for array of dimension 0"),
    (lambda: xnp.fft.fftn(np.ones((2, 2)), s=(2, 2), axes=(0,)), ValueError, "Shape and axes have different"),
    (lambda: xnp.fft.rfftn(np.ones(3), axes=()), IndexError, "at least one axis"),
    (lambda: xnp.fft.fftfreq(4.5), ValueError, "n should be an integer"),
    (lambda: xnp.fft.fftfreq(-1), ValueError, "negative dimensions"),
    (lambda: xnp.fft.fftfreq(4, device="tpu9"), ValueError, "fftfreq: unknown device 'tpu9'; expected None or one of"),
    (lambda: xnp.fft.rfftfreq(4, dtype=np.int32), ValueError, "rfftfreq: dtype must be a real floating dtype, got int32"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_deprecated_s_without_axes_warns_like_numpy():
    x = make_input(3, (2, 3, 4), np.dtype("float64"))
    with pytest.warns(DeprecationWarning, match="`axes` should not be `None`"):
        got = xnp.fft.fftn(x, s=(3, 5))
    with pytest.warns(DeprecationWarning):
        want = np.fft.fftn(x, s=(3, 5))
    assert_matches(got, want, rtol=1e-10)
    with pytest.warns(DeprecationWarning, match="None in `s`"):
        got = xnp.fft.irfftn(x, s=(None, 6), axes=(0, 2))
    with pytest.warns(DeprecationWarning):
        want = np.fft.irfftn(x, s=(None, 6), axes=(0, 2))
    assert_matches(got, want, rtol=1e-10)


# ---------------------------------------------------------------- frequencies and shifts


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
def test_fftfreq_and_rfftfreq(n, d):
    assert_matches(xnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-15)
    assert_matches(xnp.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d), rtol=1e-15)


def test_fftfreq_with_array_spacing_and_zero_points():
    d = np.float32(0.5)
    assert_matches(xlac.compile(lambda s: xnp.fft.fftfreq(6, s))(np.array(d)), np.fft.fftfreq(6, np.array(d)))
    with pytest.raises(ZeroDivisionError):
        xnp.fft.fftfreq(0)


@pytest.mark.parametrize("axes", [None, 0, 1, -1, (0, 1), (1, 1)])
def test_shifts(axes):
    x = np.arange(35).reshape(5, 7).astype(np.int16)
    assert_matches(xnp.fft.fftshift(x, axes=axes), np.fft.fftshift(x, axes=axes))
    assert_matches(xnp.fft.ifftshift(x, axes=axes), np.fft.ifftshift(x, axes=axes))
    assert_matches(xnp.fft.ifftshift(xnp.fft.fftshift(x, axes=axes), axes=axes), x)


def test_shift_of_frequencies_is_sorted():
    freq = np.asarray(xlac.compile(lambda: xnp.fft.fftshift(xnp.fft.fftfreq(7)))())
    assert (np.diff(freq) > 0).all()


# ---------------------------------------------------------------- gradients against JAX

GRADIENT_CASES = [
    ("fft", dict(), True), ("ifft", dict(n=6, norm="ortho"), True), ("rfft", dict(n=7, norm="forward"), False),
    ("irfft", dict(), True), ("irfft", dict(n=7), True), ("hfft", dict(norm="ortho"), True), ("ihfft", dict(), False),
    ("fft2", dict(s=(3, 6)), True), ("rfftn", dict(norm="ortho"), False),
    ("irfftn", dict(s=(3, 4, 6), axes=(0, 1, 2)), True),
]


def _random(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


@pytest.mark.parametrize("name, kwargs, complex_input", GRADIENT_CASES)
def test_vjp_and_jvp_match_jax(name, kwargs, complex_input):
    rng = np.random.default_rng(4)
    x = _random(rng, (3, 4, 5), complex_input)
    f = lambda a: getattr(xnp.fft, name)(a, **kwargs)
    g = lambda a: getattr(jnp.fft, name)(a, **kwargs)
    with jax.enable_x64(True):
        y = jax.eval_shape(g, x)
        ct = _random(rng, y.shape, y.dtype.kind == "c").astype(y.dtype)
        t = _random(rng, x.shape, complex_input)

        @jax.jit
        def oracle(x, ct, t):
            y, jax_vjp = jax.vjp(g, x)
            return y, jax_vjp(ct)[0], jax.jvp(g, (x,), (t,))[1]
        y, want_ct, want_t = (np.asarray(v) for v in oracle(x, ct, t))
    got_y, vjp_fn = xlac.vjp(f, x)
    assert_matches(got_y, y, rtol=1e-10)
    assert_matches(vjp_fn(ct)[0], want_ct, rtol=1e-10)
    assert_matches(xlac.jvp(f, (x,), (t,))[1], want_t, rtol=1e-10)


def test_grad_of_spectral_loss_matches_jax():
    x = np.random.default_rng(5).standard_normal((4, 6))
    weights = np.linspace(0.5, 2.0, 3)

    def loss(m):
        def f(a):
            spectrum = m.fft.rfft(a, axis=0).T * weights
            return m.sum(m.real(spectrum) ** 2 + m.imag(spectrum) ** 3) + m.sum(m.fft.irfft(m.fft.fft(a), n=6) * a)
        return f
    got = xlac.compile(xlac.grad(loss(xnp)))(x)
    with jax.enable_x64(True):
        want = np.asarray(jax.grad(loss(jnp))(jnp.asarray(x)))
    assert_matches(got, want, rtol=1e-10)


# ---------------------------------------------------------------- vmap against JAX


@pytest.mark.parametrize("name, kwargs, in_axis", [
    ("fft", dict(), 0), ("fft", dict(axis=0), 1), ("rfft", dict(n=6), 2), ("irfft", dict(axis=0), 0),
    ("fftn", dict(axes=(0, 1)), 1), ("rfft2", dict(s=(4, 4)), 0), ("irfftn", dict(axes=(1, 0)), 2),
    ("ihfft", dict(), 1), ("hfft", dict(norm="ortho"), -1),
])
def test_vmap_matches_jax(name, kwargs, in_axis):
    rng = np.random.default_rng(6)
    complex_input = name in ("fft", "irfft", "irfftn", "hfft", "fftn")
    x = _random(rng, (3, 4, 5), complex_input).astype(np.complex64 if complex_input else np.float32)
    got = xlac.vmap(lambda a: getattr(xnp.fft, name)(a, **kwargs), in_axes=in_axis)(x)
    want = jax.vmap(lambda a: getattr(jnp.fft, name)(a, **kwargs), in_axes=in_axis)(x)
    assert_matches(got, np.asarray(want), rtol=2e-4)


def test_autocast_runs_fft_in_float32():
    x = np.random.default_rng(7).standard_normal((4, 8)).astype(np.float32)

    def f(a):
        with xlac.autocast(dtype="bfloat16"):
            return xnp.fft.rfft(a @ a.T)
    got = np.asarray(xlac.compile(f)(x))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.fft.rfft(x @ x.T), rtol=0.05, atol=0.1 * np.abs(x @ x.T).max())
