"""xlac.numpy as an Array API namespace: version, inspection, ``__array_namespace__``, the standard's own
names (concat, permute_dims, matrix_transpose, unstack, astype, from_dlpack) and the array methods, against
NumPy 2 (itself an Array API namespace). The full conformance suite runs outside the repository: see
docs/array-api.md."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


def values(shape, dtype, seed=0):
    """Small test values of ``dtype``: -3..3 for signed integers, 0..3 for unsigned and bool, normal floats."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind in "bu":
        return rng.integers(0, 4, size=shape).astype(dtype)
    if kind == "i":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


@st.composite
def arrays(draw, min_dims=0):
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=min_dims, max_size=3)))
    return values(shape, draw(st.sampled_from(DTYPES)), draw(st.integers(0, 9)))


def both(fn, *args):
    """``fn``'s results run eagerly on xlac.Arrays and compiled."""
    eager = fn(*[xlac.asarray(a) for a in args])
    compiled = xlac.compile(fn)(*args)
    return eager, compiled


# ---------------------------------------------------------------- namespace and inspection


def test_version_and_namespace():
    assert xnp.__array_api_version__ == "2024.12"
    assert xnp.bool is np.bool_
    a = xlac.asarray(np.zeros(2))
    assert a.__array_namespace__() is xnp
    assert a.__array_namespace__(api_version="2023.12") is xnp
    seen = []
    xlac.compile(lambda x: seen.append(x.__array_namespace__()) or x)(np.zeros(2))
    assert seen == [xnp]


def test_namespace_generic_code_runs_eager_and_compiled():
    """The docs/array-api.md example: code that finds its namespace through ``__array_namespace__``."""
    def normalize(x):
        xp = x.__array_namespace__()
        rows = xp.unstack(x / xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True)))
        return xp.concat([xp.matrix_transpose(xp.stack(rows))], axis=0)
    a = np.arange(1.0, 7.0).reshape(2, 3)
    expected = (a / np.sqrt((a * a).sum(-1, keepdims=True))).T
    assert_matches(normalize(xlac.asarray(a)), expected)
    assert_matches(xlac.compile(normalize)(a), expected)


def test_unsupported_api_version_raises():
    with pytest.raises(ValueError, match="unsupported Array API version '2099.12'"):
        xlac.asarray(np.zeros(2)).__array_namespace__(api_version="2099.12")


def test_info_capabilities_and_devices():
    info = xnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}
    assert isinstance(info.devices(), list)
    assert info.default_device() in info.devices()
    assert xlac.asarray(np.zeros(1)).device == info.default_device()


def test_info_default_dtypes_are_numpys():
    expected = np.__array_namespace_info__().default_dtypes()
    assert xnp.__array_namespace_info__().default_dtypes(device=xnp.__array_namespace_info__().default_device()) \
        == expected


@pytest.mark.parametrize("kind", [None, *KINDS, ("bool", "complex floating")])
def test_info_dtypes_are_numpys(kind):
    assert xnp.__array_namespace_info__().dtypes(kind=kind) == np.__array_namespace_info__().dtypes(kind=kind)


def test_info_errors():
    info = xnp.__array_namespace_info__()
    with pytest.raises(ValueError, match="dtypes: unknown kind 'floating'"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="default_dtypes: unknown device 'nowhere'"):
        info.default_dtypes(device="nowhere")
    assert len(info.dtypes(device="cpu")) == 13


# ---------------------------------------------------------------- manipulation


@given(arrays(min_dims=1), st.data())
def test_concat_matches_numpy(a, data):
    axis = data.draw(st.sampled_from([None, *range(-a.ndim, a.ndim)]))
    b = values(a.shape, "int32", 1)
    eager, compiled = both(lambda x, y: xnp.concat([x, y], axis=axis), a, b)
    assert_matches(eager, np.concat([a, b], axis=axis))
    assert_matches(compiled, np.concat([a, b], axis=axis))


@settings(max_examples=12, deadline=None)
@given(arrays(), st.data())
def test_permute_dims_and_matrix_transpose_match_numpy(a, data):
    axes = tuple(data.draw(st.permutations(range(a.ndim))))
    eager, compiled = both(lambda x: xnp.permute_dims(x, axes), a)
    assert_matches(eager, np.permute_dims(a, axes))
    assert_matches(compiled, np.permute_dims(a, axes))
    if a.ndim >= 2:
        eager, compiled = both(xnp.matrix_transpose, a)
        assert_matches(eager, np.matrix_transpose(a))
        assert_matches(compiled, np.matrix_transpose(a))


@settings(max_examples=12, deadline=None)
@given(arrays(min_dims=1), st.data())
def test_unstack_matches_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    eager, compiled = both(lambda x: xnp.unstack(x, axis=axis), a)
    expected = np.unstack(a, axis=axis)
    assert isinstance(eager, tuple) and len(eager) == len(expected) == len(compiled)
    for e, c, x in zip(eager, compiled, expected):
        assert_matches(e, x)
        assert_matches(c, x)


def test_manipulation_errors():
    with pytest.raises(ValueError, match="matrix_transpose: x must have at least 2 dimensions, got shape"):
        xnp.matrix_transpose(np.zeros(3))
    with pytest.raises(ValueError, match="unstack: x must have at least 1 dimension"):
        xnp.unstack(np.float64(1.0))
    with pytest.raises(np.exceptions.AxisError, match="unstack: axis 2 is out of bounds"):
        xnp.unstack(np.zeros((2, 2)), axis=2)


# ---------------------------------------------------------------- dtypes, devices and DLPack


@pytest.mark.parametrize("source, target", [("float64", "int32"), ("int8", "float32"), ("bool", "uint8"),
                                            ("float32", "bool"), ("int64", "complex64")])
def test_astype_matches_numpy(source, target):
    a = values((2, 3), source)
    eager, compiled = both(lambda x: xnp.astype(x, getattr(xnp, target)), a)
    assert_matches(eager, np.astype(a, target))
    assert_matches(compiled, np.astype(a, target))


def test_astype_copy_and_device():
    a = xlac.asarray(np.arange(3.0))
    assert xnp.astype(a, np.float64, copy=False) is a
    assert xnp.astype(a, np.float64, copy=False, device=a.device) is a
    copied = xnp.astype(a, np.float64)
    assert copied is not a and copied._buffer is not a._buffer
    assert a.astype(np.float64, copy=False) is a
    assert xnp.astype(a, np.int32, copy=False).dtype == np.int32


def test_from_dlpack():
    a = xlac.asarray(np.arange(4, dtype=np.int16))
    assert xnp.from_dlpack(a) is a
    assert xnp.from_dlpack(a, copy=False, device=a.device) is a
    assert_matches(xnp.from_dlpack(a, copy=True), np.arange(4, dtype=np.int16))
    host = np.arange(3.0, dtype=np.float32)
    result = xnp.from_dlpack(host)
    assert isinstance(result, xlac.Array)
    assert_matches(result, host)
    assert_matches(np.from_dlpack(a), np.arange(4, dtype=np.int16))
    with pytest.raises(ValueError, match="from_dlpack: copy=False, but xlac copies data from ndarray"):
        xnp.from_dlpack(host, copy=False)
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__, got list"):
        xnp.from_dlpack([1, 2])


def test_to_device():
    a = xlac.asarray(np.arange(3.0))
    assert a.to_device(a.device) is a
    assert a.to_device("cpu").device == xlac.runtime.get_device("cpu")
    with pytest.raises(ValueError, match="to_device: xlac has no streams"):
        a.to_device(a.device, stream=1)
    out = xlac.compile(lambda x: x.to_device(x.device) * 2)(np.arange(3.0))
    assert_matches(out, np.arange(3.0) * 2)


# ---------------------------------------------------------------- NumPy array methods


def test_methods_match_numpy():
    a = values((3, 4), "float32")
    x = xlac.asarray(a)
    assert (x.itemsize, x.nbytes) == (a.itemsize, a.nbytes)
    assert_matches(x.cumsum(axis=1), a.cumsum(axis=1), rtol=1e-5)
    assert_matches(x.cumprod(), a.cumprod(), rtol=1e-5)
    assert_matches(x.trace(1), a.trace(1), rtol=1e-5)
    assert_matches(x.take([2, 0], axis=1), a.take([2, 0], axis=1))
    assert_matches(x.conjugate(), a.conjugate())
    compiled = xlac.compile(lambda y: (y.cumsum(0), y.take([1]), y.trace(dtype=np.float64)))(a)
    for got, expected in zip(compiled, (a.cumsum(0), a.take([1]), a.trace(dtype=np.float64))):
        assert_matches(got, expected, rtol=1e-5)


def test_sorting_and_selection_methods_match_numpy():
    a = np.array([[3, 1, 2], [0, 5, 4]])
    x = xlac.asarray(a)
    assert_matches(x.argsort(axis=0, stable=True), a.argsort(axis=0, stable=True))
    assert_matches(x.repeat(2, axis=1), a.repeat(2, axis=1))
    assert_matches(x.compress([True, False, True], axis=1), a.compress([True, False, True], axis=1))
    for got, expected in zip(x.nonzero(), a.nonzero()):
        assert_matches(got, expected)
    assert_matches(x.ravel().argpartition(2), a.ravel().argpartition(2))
    assert_matches(xlac.asarray(np.array([1, 3, 5])).searchsorted([2, 5], "right"),
                   np.array([1, 3, 5]).searchsorted([2, 5], "right"))
    assert_matches(xlac.asarray(np.array([1.26, -3.55])).round(1), np.array([1.26, -3.55]).round(1))
    assert_matches(x.ptp(axis=1), np.ptp(a, axis=1))


def test_in_place_methods_match_numpy():
    a = np.array([[3, 1, 2], [0, 5, 4]])
    for method, args in [("sort", ()), ("sort", (0,)), ("partition", (1,)), ("put", ([0, 4], [9, 8]))]:
        x, expected = xlac.asarray(a), a.copy()
        assert getattr(x, method)(*args) is None
        getattr(expected, method)(*args)
        assert_matches(x, expected)

    def sort_rows(v):
        v.sort(axis=1)
        return v * 1
    assert_matches(xlac.compile(sort_rows)(a.copy()), np.sort(a, axis=1))


def test_in_place_method_on_read_only_view_raises():
    def sort_broadcast(v):
        view = xnp.broadcast_to(v, (2, 2))
        view.sort()
        return view
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        xlac.compile(sort_broadcast)(np.array([2, 1]))


# ---------------------------------------------------------------- device= on the creation functions

CREATIONS = [
    ("zeros", lambda xp, **kw: xp.zeros((2, 3), dtype="int32", **kw)),
    ("ones", lambda xp, **kw: xp.ones(3, **kw)),
    ("full", lambda xp, **kw: xp.full((2,), 7.5, **kw)),
    ("empty", lambda xp, **kw: xp.zeros_like(xp.empty((2, 2), **kw))),     # empty's values are unspecified
    ("zeros_like", lambda xp, **kw: xp.zeros_like(np.ones((2, 2)), **kw)),
    ("ones_like", lambda xp, **kw: xp.ones_like(np.ones(3, np.int8), **kw)),
    ("full_like", lambda xp, **kw: xp.full_like(np.ones(3), -2.0, **kw)),
    ("empty_like", lambda xp, **kw: xp.zeros_like(xp.empty_like(np.ones(3), **kw))),
    ("eye", lambda xp, **kw: xp.eye(3, 4, k=1, **kw)),
    ("arange", lambda xp, **kw: xp.arange(1, 7, 2, **kw)),
    ("linspace", lambda xp, **kw: xp.linspace(0.0, 1.0, 5, **kw)),
    ("asarray", lambda xp, **kw: xp.asarray([1, 2, 3], dtype="float32", **kw)),
    ("fftfreq", lambda xp, **kw: xp.fft.fftfreq(5, d=0.5, **kw)),
    ("rfftfreq", lambda xp, **kw: xp.fft.rfftfreq(6, **kw)),
]


@pytest.mark.parametrize("name, make", CREATIONS, ids=[c[0] for c in CREATIONS])
def test_creation_device(name, make):
    device = xnp.__array_namespace_info__().default_device()
    expected = make(np)
    for chosen in (None, device, "cpu"):
        result = make(xnp, device=chosen)
        assert_matches(result, expected)
        assert result.device == (device if chosen is None else xlac.runtime.get_device(chosen))
    assert_matches(xlac.compile(lambda: make(xnp, device=device))(), expected)
    with pytest.raises(ValueError, match=f"{name}: unknown device 'tpu9'; expected None or one of"):
        make(xnp, device="tpu9")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fftfreq_dtype(dtype):
    assert_matches(xnp.fft.fftfreq(7, 0.3, dtype=dtype), np.fft.fftfreq(7, 0.3).astype(dtype))
    assert_matches(xnp.fft.rfftfreq(7, 0.3, dtype=dtype), np.fft.rfftfreq(7, 0.3).astype(dtype))


def test_dlpack_keywords():
    a = xlac.asarray(np.arange(4.0))
    for max_version in (None, (0, 0), (1, 0)):
        assert "dltensor" in repr(a.__dlpack__(stream=None, max_version=max_version, dl_device=None, copy=None))
    assert '"dltensor"' in repr(a.__dlpack__(max_version=(0, 8)))        # a pre-1.0 consumer gets the legacy capsule
    np.testing.assert_array_equal(np.from_dlpack(a), np.arange(4.0))
