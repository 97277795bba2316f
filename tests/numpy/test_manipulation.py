"""xlac.numpy.manipulation against NumPy: values, dtypes and shapes, compiled and eager, NumPy's errors,
and gradients of pad, roll, interp and convolve against JAX."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import xlac
import xlac.numpy as xnp
from xlac.errors import TracerConversionError, UnsupportedError
from xlac.ir import dtypes
from tests.tolerance import assert_matches

BF16 = dtypes.bfloat16
DTYPES = [np.dtype(d) for d in ("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64",
                                "complex64")] + [BF16]
NUMBERS = [d for d in DTYPES if d != np.bool_]
FLOATS = [np.dtype(d) for d in ("float16", "float32", "float64")]
shape_st = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
nonempty_st = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
few = settings(max_examples=12)


def data(shape, dtype=np.float32):
    """Distinct-ish values, so that any misplaced element shows."""
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype) == np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    return ((np.arange(n) * 7 + 3) % 23 - 5).astype(dtype).reshape(shape)


def random(seed, shape, dtype=np.float64, low=-3.0, high=3.0):
    values = np.random.default_rng(seed).uniform(low, high, size=shape)
    return values.astype(dtype)


def run(fn, *args, eager, **kwargs):
    """``fn(*args, **kwargs)`` eagerly, or compiled with the array ``args`` as arguments."""
    if eager:
        return fn(*args, **kwargs)
    return xlac.compile(lambda *a: fn(*a, **kwargs))(*args)


def check(got, expected, rtol=None):
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected)
        for g, e in zip(got, expected):
            check(g, e, rtol)
        return
    assert_matches(got, expected, rtol=rtol)


# ---------------------------------------------------------------- rearranging


@given(shape_st, st.sampled_from(DTYPES), st.data(), st.booleans())
def test_roll_matches_numpy(shape, dtype, draw, eager):
    x = data(shape, dtype)
    ndim = len(shape)
    if ndim == 0 or draw.draw(st.booleans()):
        axis, shift = None, draw.draw(st.integers(-7, 7))
    elif draw.draw(st.booleans()):
        axis, shift = draw.draw(st.integers(-ndim, ndim - 1)), draw.draw(st.integers(-7, 7))
    else:
        axis = tuple(draw.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=3)))
        shift = draw.draw(st.one_of(st.integers(-5, 5), st.tuples(*[st.integers(-5, 5)] * len(axis))))
    check(run(xnp.roll, x, eager=eager, shift=shift, axis=axis), np.roll(x, shift, axis))


def test_roll_with_traced_shift_and_errors():
    x = data((3, 4), np.int32)
    f = xlac.compile(lambda x, s: (xnp.roll(x, s, axis=1), xnp.roll(x, s), xnp.roll(x, s, axis=(0, 1))))
    for s in (-5, 0, 2, 7):
        check(f(x, np.int64(s)), (np.roll(x, s, 1), np.roll(x, s), np.roll(x, (s, s), (0, 1))))
    g = xlac.compile(lambda x, s: xnp.roll(x, s, axis=(0, 1)))
    check(g(x, np.array([1, -3])), np.roll(x, (1, -3), (0, 1)))
    with pytest.raises(ValueError, match="roll: 'shift' and 'axis' should be scalars or 1D sequences"):
        xnp.roll(x, [[1]], 0)
    with pytest.raises(ValueError, match="roll: shape mismatch"):
        xnp.roll(x, [1, 2], [0, 1, 1])
    with pytest.raises(np.exceptions.AxisError, match="roll: axis 2 is out of bounds"):
        xnp.roll(x, 1, 2)


@given(hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=3), st.integers(-5, 5), st.data(),
       st.booleans())
@few
def test_rot90_flips_match_numpy(shape, k, draw, eager):
    ndim = len(shape)
    first = draw.draw(st.integers(-ndim, ndim - 1))
    second = draw.draw(st.sampled_from([a for a in range(-ndim, ndim) if a % ndim != first % ndim]))
    x = data(shape, np.int16)
    f = lambda x: (xnp.rot90(x, k, (first, second)), xnp.fliplr(x), xnp.flipud(x))  # noqa: E731
    check(run(f, x, eager=eager), (np.rot90(x, k, (first, second)), np.fliplr(x), np.flipud(x)))


def test_rot90_and_flips_are_views_and_errors():
    def write_through(x, lib):
        lib.rot90(x)[0, 0] = -1.0
        lib.fliplr(x)[1, 0] = -2.0
        lib.flipud(x)[0, 1] = -3.0
        return x
    x = data((2, 3))
    check(xlac.compile(lambda x: write_through(x, xnp))(x), write_through(x.copy(), np))
    with pytest.raises(ValueError, match="rot90: len\\(axes\\) must be 2"):
        xnp.rot90(x, axes=(0,))
    with pytest.raises(ValueError, match="rot90: Axes must be different"):
        xnp.rot90(x, axes=(0, -2))
    with pytest.raises(ValueError, match="rot90: Axes=\\(0, 3\\) out of range"):
        xnp.rot90(x, axes=(0, 3))
    with pytest.raises(ValueError, match="fliplr: Input must be >= 2-d"):
        xnp.fliplr(np.zeros(3))
    with pytest.raises(ValueError, match="flipud: Input must be >= 1-d"):
        xnp.flipud(np.float64(1.0))


@given(shape_st, st.sampled_from(DTYPES), st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=4)),
       st.booleans())
def test_tile_matches_numpy(shape, dtype, reps, eager):
    x = data(shape, dtype)
    check(run(xnp.tile, x, eager=eager, reps=reps), np.tile(x, reps))


def test_tile_of_scalars_and_errors():
    check(xnp.tile(2.5, 3), np.tile(2.5, 3))
    check(xnp.tile([1, 2], (2, 1)), np.tile([1, 2], (2, 1)))
    with pytest.raises(ValueError, match="tile: negative dimensions are not allowed"):
        xnp.tile(np.arange(3), (2, -1))


@given(shape_st, st.sampled_from(DTYPES), st.data(), st.booleans())
def test_repeat_matches_numpy(shape, dtype, draw, eager):
    x = data(shape, dtype)
    axis = None if not shape or draw.draw(st.booleans()) else draw.draw(st.integers(-len(shape), len(shape) - 1))
    n = x.size if axis is None else shape[axis]
    kind = draw.draw(st.sampled_from(["int", "list", "array"]))
    if kind == "int":
        repeats = draw.draw(st.integers(0, 3))
    else:
        repeats = draw.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        repeats = np.array(repeats, np.int32) if kind == "array" else repeats
    check(run(xnp.repeat, x, eager=eager, repeats=repeats, axis=axis), np.repeat(x, repeats, axis))


def test_repeat_total_repeat_length_static_and_traced():
    x = data((3, 2), np.float32)
    for total in (0, 3, 5, 8):
        want = np.repeat(x, [2, 0, 3], axis=0)
        if total > len(want):
            want = np.concatenate([want, np.repeat(want[-1:], total - len(want), 0)])
        want = want[:total]
        check(xnp.repeat(x, [2, 0, 3], axis=0, total_repeat_length=total), want)
        f = xlac.compile(lambda x, r: xnp.repeat(x, r, axis=0, total_repeat_length=total))
        check(f(x, np.array([2, 0, 3])), want)
    g = xlac.compile(lambda x, r: xnp.repeat(x, r, total_repeat_length=12))
    check(g(x, np.int64(2)), np.repeat(x, 2))


def test_repeat_errors():
    x = np.arange(3)
    with pytest.raises(TracerConversionError, match="repeat: traced repeats.*total_repeat_length"):
        xlac.compile(lambda x, r: xnp.repeat(x, r))(x, np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"repeat: operands could not be broadcast together with shape \(3,\) \(2,\)"):
        xnp.repeat(x, [1, 2])
    with pytest.raises(ValueError, match="repeat: negative dimensions are not allowed"):
        xnp.repeat(x, -1)


# ---------------------------------------------------------------- pad

PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "minimum", "mean",
             "median"]


@st.composite
def pad_widths(draw, ndim):
    kind = draw(st.sampled_from(["int", "pair", "pairs", "column"]))
    small = st.integers(0, 6)
    if kind == "int" or ndim == 0:
        return draw(small)
    if kind == "pair":
        return (draw(small), draw(small))
    if kind == "column":
        return [[draw(small)] for _ in range(ndim)]
    return tuple((draw(small), draw(small)) for _ in range(ndim))


@settings(max_examples=12, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), st.sampled_from(PAD_MODES),
       st.sampled_from(["int8", "int64", "uint8", "float32", "float64"]), st.data(), st.booleans())
def test_pad_matches_numpy(shape, mode, dtype, draw, eager):
    x = data(shape, dtype)
    width = draw.draw(pad_widths(len(shape)))
    kwargs = {}
    if mode == "constant" and draw.draw(st.booleans()):
        kwargs["constant_values"] = draw.draw(st.sampled_from([7, (1, 2), 2.5, [[3, 4]] * len(shape)]))
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw.draw(st.sampled_from(["even", "odd"]))
    if mode == "linear_ramp" and draw.draw(st.booleans()):
        kwargs["end_values"] = draw.draw(st.sampled_from([5, (-3, 9)]))
    if mode in ("maximum", "minimum", "mean", "median") and draw.draw(st.booleans()):
        kwargs["stat_length"] = draw.draw(st.sampled_from([1, 2, (1, 3)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.pad(x, width, mode, **kwargs)
    check(run(xnp.pad, x, eager=eager, pad_width=width, mode=mode, **kwargs), expected,
          rtol=1e-5 if dtype == "float32" else None)


def test_pad_other_dtypes_and_forms():
    modes = ("constant", "edge", "wrap", "reflect")
    f = xlac.compile(lambda x: tuple(xnp.pad(x, ((1, 0), (2, 1)), mode) for mode in modes))
    for dtype in DTYPES:
        x = data((2, 3), dtype)
        check(f(x), tuple(np.pad(x, ((1, 0), (2, 1)), mode) for mode in modes))
    x = data((2, 3))
    check(xnp.pad(x, {1: (2, 1)}), np.pad(x, {1: (2, 1)}))
    check(xnp.pad(x, np.array([1, 2])), np.pad(x, np.array([1, 2])))
    check(xnp.pad(np.zeros((0, 3)), ((0, 0), (1, 2)), "edge"), np.pad(np.zeros((0, 3)), ((0, 0), (1, 2)), "edge"))
    check(xnp.pad(x, 2, "empty").shape, (6, 7))
    f = xlac.compile(lambda x, c: xnp.pad(x, 1, constant_values=c))
    check(f(x, np.float32(9.0)), np.pad(x, 1, constant_values=9.0))
    check(xnp.pad(x, 3, "reflect", reflect_type="odd"), np.pad(x, 3, "reflect", reflect_type="odd"))


def test_pad_errors():
    x = np.arange(3)
    with pytest.raises(ValueError, match="pad: mode 'foo' is not supported"):
        xnp.pad(x, 2, mode="foo")
    with pytest.raises(ValueError, match="pad: unsupported keyword arguments for mode 'edge'"):
        xnp.pad(x, 2, mode="edge", constant_values=1)
    with pytest.raises(TypeError, match="pad: `pad_width` must be of integral type"):
        xnp.pad(x, 2.0)
    with pytest.raises(ValueError, match="pad: index can't contain negative values"):
        xnp.pad(x, -1)
    with pytest.raises(ValueError, match="pad: can't extend empty axis 0"):
        xnp.pad(np.zeros(0), 1, "wrap")
    with pytest.raises(ValueError, match="pad: stat_length of 0 yields no value"):
        xnp.pad(x, 1, "maximum", stat_length=0)
    with pytest.raises(UnsupportedError, match="pad: a callable mode"):
        xnp.pad(x, 1, lambda *a: None)
    with pytest.raises(TracerConversionError, match="pad: pad_width must be known when tracing"):
        xlac.compile(lambda x, w: xnp.pad(x, w))(x, np.int64(1))


# ---------------------------------------------------------------- differences and gradients


@given(nonempty_st, st.sampled_from(DTYPES[:-1]), st.integers(0, 3), st.data(), st.booleans())
def test_diff_matches_numpy(shape, dtype, n, draw, eager):
    x = data(shape, dtype)
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    kwargs = {}
    if draw.draw(st.booleans()):
        kwargs["prepend"] = draw.draw(st.sampled_from([0, 1.5]))
    if draw.draw(st.booleans()):
        kwargs["append"] = np.ones(shape[:axis % len(shape)] + (2,) + shape[axis % len(shape) + 1:], dtype)
    expected = np.diff(x, n, axis, **kwargs)
    check(run(xnp.diff, x, eager=eager, n=n, axis=axis, **kwargs), expected)


def test_ediff1d_and_diff_errors():
    x = np.array([1, 5, 2, 8], np.int16)
    check(xnp.ediff1d(x), np.ediff1d(x))
    check(xnp.ediff1d(x, to_end=[9, 8], to_begin=-1), np.ediff1d(x, to_end=[9, 8], to_begin=-1))
    check(xlac.compile(lambda x: xnp.ediff1d(x, to_begin=np.array([7])))(x), np.ediff1d(x, to_begin=[7]))
    with pytest.raises(TypeError, match="ediff1d: dtype of `to_begin` must be compatible"):
        xnp.ediff1d(x, to_begin=1.5)
    with pytest.raises(ValueError, match="diff: order must be non-negative"):
        xnp.diff(x, -1)
    with pytest.raises(ValueError, match="diff: diff requires input that is at least one dimensional"):
        xnp.diff(np.float64(1.0))


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=5),
       st.sampled_from(["int32", "float32", "float64"]), st.sampled_from([1, 2]), st.data(), st.booleans())
@few
def test_gradient_matches_numpy(shape, dtype, edge_order, draw, eager):
    x = random(len(shape), shape, dtype, -5, 5)
    kind = draw.draw(st.sampled_from(["none", "scalar", "per_axis", "axis"]))
    if kind == "none":
        args, kwargs = (), {}
    elif kind == "scalar":
        args, kwargs = (draw.draw(st.sampled_from([0.5, 2, np.float64(0.25)])),), {}
    elif kind == "per_axis":
        args = tuple(draw.draw(st.sampled_from([1.5, "uniform", "uneven"])) for _ in shape)
        args = tuple(np.arange(n) * 0.5 if a == "uniform" else np.cumsum(np.arange(1, n + 1) ** 1.5) if a == "uneven"
                     else a for a, n in zip(args, shape))
        kwargs = {}
    else:
        axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
        args, kwargs = (np.cumsum(np.arange(1.0, shape[axis] + 1)),), {"axis": axis}
    expected = np.gradient(x, *args, edge_order=edge_order, **kwargs)
    got = xnp.gradient(x, *args, edge_order=edge_order, **kwargs) if eager else \
        xlac.compile(lambda x: xnp.gradient(x, *args, edge_order=edge_order, **kwargs))(x)
    check(got, expected, rtol=1e-4 if dtype == "float32" else 1e-10)


def test_gradient_with_traced_coordinates_and_errors():
    x = random(0, (5,))
    coords = np.array([0.0, 0.5, 1.5, 1.7, 3.0])
    f = xlac.compile(lambda x, c: xnp.gradient(x, c, edge_order=2))
    check(f(x, coords), np.gradient(x, coords, edge_order=2), rtol=1e-10)
    with pytest.raises(ValueError, match="gradient: Shape of array too small"):
        xnp.gradient(np.zeros(2), edge_order=2)
    with pytest.raises(ValueError, match="gradient: 'edge_order' greater than 2"):
        xnp.gradient(x, edge_order=3)
    with pytest.raises(TypeError, match="gradient: invalid number of arguments"):
        xnp.gradient(x, 1.0, 2.0)
    with pytest.raises(ValueError, match="gradient: when 1d, distances must match"):
        xnp.gradient(x, np.arange(3.0))


@given(st.sampled_from([(3, 3), (2, 3), (3, 2), (2, 2)]), st.sampled_from(["int32", "float32", "complex64"]),
       st.integers(0, 2), st.booleans())
@few
def test_cross_matches_numpy(sizes, dtype, layout, eager):
    a = random(1, (4, sizes[0]) if layout != 2 else (sizes[0], 4), np.float64, -9, 9).astype(dtype)
    b = random(2, (sizes[1],), np.float64, -9, 9).astype(np.int8)
    kwargs = [{}, {"axisc": 0}, {"axisa": 0}][layout]
    if sizes == (2, 2):
        kwargs.pop("axisc", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = np.cross(a, b, **kwargs)
        got = run(xnp.cross, a, b, eager=eager, **kwargs)
    check(got, expected)


def test_cross_errors_and_warning():
    with pytest.raises(ValueError, match="cross: incompatible dimensions for cross product"):
        xnp.cross(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="cross: At least one array has zero dimension"):
        xnp.cross(np.float64(1.0), np.zeros(3))
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors are deprecated"):
        xnp.cross(np.zeros(2), np.zeros(2))


@given(shape_st, shape_st, st.sampled_from(["bool", "int8", "float32"]), st.booleans())
@few
def test_kron_matches_numpy(shape_a, shape_b, dtype, eager):
    a, b = data(shape_a, dtype), data(shape_b, np.int16)
    check(run(xnp.kron, a, b, eager=eager), np.kron(a, b))


@given(st.lists(st.integers(0, 3), max_size=3), st.sampled_from(["xy", "ij"]), st.booleans(), st.booleans())
@few
def test_meshgrid_and_indices_match_numpy(sizes, indexing, sparse, eager):
    vectors = [data((n,), np.float32) for n in sizes]
    f = lambda *v: xnp.meshgrid(*v, indexing=indexing, sparse=sparse)  # noqa: E731
    got = run(f, *vectors, eager=eager) if vectors else xnp.meshgrid()
    check(got, np.meshgrid(*vectors, indexing=indexing, sparse=sparse))
    check(xnp.indices(sizes, sparse=sparse), np.indices(sizes, sparse=sparse))
    check(xnp.indices(sizes, dtype=np.int32), np.indices(sizes, dtype=np.int32))


def test_meshgrid_error():
    with pytest.raises(ValueError, match="meshgrid: Valid values for `indexing` are 'xy' and 'ij'"):
        xnp.meshgrid(np.zeros(2), indexing="yx")


def test_put_along_axis_writes_in_place():
    arr = data((3, 4), np.float32)
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    vals = np.array([[10.0], [20.0], [30.0]], np.float32)
    expected = arr.copy()
    np.put_along_axis(expected, idx, vals, axis=1)

    def f(a, i, v):
        xnp.put_along_axis(a, i, v, axis=1)
        return a
    check(xlac.compile(f)(arr.copy(), idx, vals), expected)
    numpy_target = arr.copy()
    assert xnp.put_along_axis(numpy_target, idx, vals, axis=1) is None
    check(numpy_target, expected)
    device_target = xlac.asarray(arr)
    xnp.put_along_axis(device_target, xlac.asarray(idx), vals, axis=1)
    check(device_target, expected)
    flat = arr.copy()
    np.put_along_axis(flat, np.array([5, 0]), 1.0, axis=None)
    got = arr.copy()
    xnp.put_along_axis(got, np.array([5, 0]), 1.0, axis=None)
    check(got, flat)
    with pytest.raises(IndexError, match="put_along_axis: `indices` must be an integer array"):
        xnp.put_along_axis(arr.copy(), idx.astype(float), vals, axis=1)
    with pytest.raises(ValueError, match="put_along_axis: `indices` and `arr` must have the same number"):
        xnp.put_along_axis(arr.copy(), idx[0], vals, axis=1)


# ---------------------------------------------------------------- inserting, deleting, resizing


def test_append_matches_numpy():
    a, b = data((2, 3), np.int8), data((1, 3), np.float32)
    for eager in (True, False):
        check(run(xnp.append, a, b, eager=eager), np.append(a, b))
        check(run(xnp.append, a, b, eager=eager, axis=0), np.append(a, b, axis=0))
    check(xnp.append(a, 2.5), np.append(a, 2.5))
    with pytest.raises(ValueError, match="concatenate: all the input arrays must have same number of dimensions"):
        xnp.append(a, np.zeros(3), axis=0)


INSERT_OBJECTS = [0, 2, -1, 3, [1], [0, 2, 2], [-1, 0], slice(None, None, 2), slice(1, 3), [], np.array([1, 3]),
                  np.array([True, False, True])]


@given(st.sampled_from(INSERT_OBJECTS), st.sampled_from([None, 0, 1, -1]), st.sampled_from([5, [7], [1, 2, 3]]),
       st.booleans())
def test_insert_matches_numpy(obj, axis, values, eager):
    x = data((3, 3), np.int32)
    try:
        expected = np.insert(x, obj, values, axis)
    except (ValueError, IndexError) as e:
        with pytest.raises(type(e)):
            run(xnp.insert, x, eager=eager, obj=obj, values=values, axis=axis)
        return
    check(run(xnp.insert, x, eager=eager, obj=obj, values=values, axis=axis), expected)


DELETE_OBJECTS = [0, -1, 2, [0, 2], [1, 1, -1], slice(None, None, 2), slice(None, None, -1), slice(2, 0), [],
                  np.array([True, False, True]), np.array([2])]


@given(st.sampled_from(DELETE_OBJECTS), st.sampled_from([None, 0, 1, -1]), st.booleans())
def test_delete_matches_numpy(obj, axis, eager):
    x = data((3, 3), np.float32)
    try:
        expected = np.delete(x, obj, axis)
    except (ValueError, IndexError) as e:
        with pytest.raises(type(e)):
            run(xnp.delete, x, eager=eager, obj=obj, axis=axis)
        return
    check(run(xnp.delete, x, eager=eager, obj=obj, axis=axis), expected)


def test_insert_delete_errors_and_traced_values():
    x = np.arange(4)
    f = xlac.compile(lambda x, v: xnp.insert(x, [1, 3], v))
    check(f(x, np.array([9, 8])), np.insert(x, [1, 3], [9, 8]))
    with pytest.raises(IndexError, match="insert: index 5 is out of bounds for axis 0 with size 4"):
        xnp.insert(x, 5, 1)
    with pytest.raises(IndexError, match="delete: index 4 is out of bounds for axis 0 with size 4"):
        xnp.delete(x, 4)
    with pytest.raises(IndexError, match="delete: index 7 is out of bounds"):
        xnp.delete(x, [0, 7])
    with pytest.raises(ValueError, match="delete: boolean array argument obj to delete must be one dimensional"):
        xnp.delete(x, np.array([True, False]))
    with pytest.raises(TracerConversionError, match="delete: obj"):
        xlac.compile(lambda x, i: xnp.delete(x, i))(x, np.int64(1))


@given(shape_st, st.sampled_from([(), 0, 5, (2, 3), (4, 0, 2), (7,)]), st.booleans())
@few
def test_resize_matches_numpy(shape, new_shape, eager):
    x = data(shape, np.int8)
    check(run(xnp.resize, x, eager=eager, new_shape=new_shape), np.resize(x, new_shape))


def test_resize_error():
    with pytest.raises(ValueError, match="resize: all elements of `new_shape` must be non-negative"):
        xnp.resize(np.arange(3), (2, -1))


# ---------------------------------------------------------------- diagonals, triangles, vander


@given(st.sampled_from([(3,), (0,), (2, 3), (4, 2), (1, 1)]), st.integers(-3, 3), st.sampled_from(DTYPES),
       st.booleans())
@few
def test_diag_diagflat_match_numpy(shape, k, dtype, eager):
    x = data(shape, dtype)
    check(run(xnp.diag, x, eager=eager, k=k), np.diag(x, k))
    check(run(xnp.diagflat, x, eager=eager, k=k), np.diagflat(x, k))


def test_triangle_and_diagonal_indices():
    for n, k, m in ((3, 0, None), (4, -1, 2), (2, 3, 5), (0, 0, None)):
        check(xnp.tril_indices(n, k, m), np.tril_indices(n, k, m))
        check(xnp.triu_indices(n, k, m), np.triu_indices(n, k, m))
    a = np.zeros((3, 5))
    check(xnp.tril_indices_from(a, 1), np.tril_indices_from(a, 1))
    check(xlac.compile(lambda a: xnp.triu_indices_from(a, -1))(a), np.triu_indices_from(a, -1))
    check(xnp.diag_indices(3, 3), np.diag_indices(3, 3))
    check(xnp.diag_indices_from(np.zeros((2, 2, 2))), np.diag_indices_from(np.zeros((2, 2, 2))))
    with pytest.raises(ValueError, match="tril_indices_from: input array must be 2-d"):
        xnp.tril_indices_from(np.zeros(3))
    with pytest.raises(ValueError, match="diag_indices_from: All dimensions of input must be of equal length"):
        xnp.diag_indices_from(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="diag: Input must be 1- or 2-d"):
        xnp.diag(np.zeros((2, 2, 2)))


def test_diag_of_a_matrix_is_a_read_only_view():
    def f(x):
        d = xnp.diag(x)
        x[0, 0] = 100.0
        return d
    check(xlac.compile(f)(data((2, 2))), np.array([100.0, data((2, 2))[1, 1]], np.float32))


@given(st.integers(0, 4), st.sampled_from([None, 0, 1, 3, 5]), st.booleans(),
       st.sampled_from(["bool", "int8", "uint64", "float32", "complex64"]), st.booleans())
@few
def test_vander_matches_numpy(n, N, increasing, dtype, eager):
    x = data((n,), dtype)
    check(run(xnp.vander, x, eager=eager, N=N, increasing=increasing), np.vander(x, N, increasing))


def test_vander_error():
    with pytest.raises(ValueError, match="vander: x must be a one-dimensional array"):
        xnp.vander(np.zeros((2, 2)))


# ---------------------------------------------------------------- choosing elements


@given(st.sampled_from(["int8", "float32"]), st.sampled_from([0, 2.5, -1]), st.booleans())
@few
def test_select_matches_numpy(dtype, default, eager):
    x = data((2, 5), dtype)
    conds = [x < 0, x > 5]
    choices = [x, np.float32(3.0) * x[0]]
    f = lambda x, c0, c1, ch1: xnp.select([c0, c1], [x, ch1], default)  # noqa: E731
    check(run(f, x, *conds, choices[1], eager=eager), np.select(conds, choices, default))


def test_select_with_python_choices_and_errors():
    x = data((4,), np.float32)
    check(xnp.select([x > 0], [1.5]), np.select([x > 0], [1.5]))
    check(xnp.select([x > 0, x < -2], [x, 7]), np.select([x > 0, x < -2], [x, 7]))
    with pytest.raises(ValueError, match="select: list of cases must be same length as list of conditions"):
        xnp.select([x > 0], [x, x])
    with pytest.raises(ValueError, match="select: select with an empty condition list is not possible"):
        xnp.select([], [])
    with pytest.raises(TypeError, match="select: invalid entry 0 in condlist: should be boolean ndarray"):
        xnp.select([x], [x])


@given(st.sampled_from(["raise", "wrap", "clip"]), st.booleans())
@few
def test_choose_matches_numpy(mode, eager):
    choices = [data((3, 4), np.int16), np.float32(0.5) * data((4,), np.float32), np.arange(4.0)[None]]
    index = np.array([[0, 1, 2, 1], [2, 2, 0, 0], [1, 0, 1, 2]])
    if mode != "raise":
        index = index * 3 - 2
    f = lambda i, c0, c1, c2: xnp.choose(i, [c0, c1, c2], mode=mode)  # noqa: E731
    check(run(f, index, *choices, eager=eager), np.choose(index, choices, mode=mode))


def test_choose_errors():
    with pytest.raises(ValueError, match="choose: invalid entry in choice array"):
        xnp.choose(np.array([0, 3]), [np.zeros(2), np.ones(2)])
    with pytest.raises(TypeError, match="choose: Cannot cast array data from dtype\\('float64'\\)"):
        xnp.choose(np.array([0.0, 1.0]), [np.zeros(2), np.ones(2)])
    with pytest.raises(ValueError, match="choose: clipmode must be one of 'clip', 'raise', or 'wrap'"):
        xnp.choose(np.array([0, 1]), [np.zeros(2), np.ones(2)], mode="foo")
    with pytest.raises(ValueError, match="choose: operands could not be broadcast"):
        xnp.choose(np.array([0, 1]), [np.zeros(2), np.zeros(3)])


@given(st.lists(st.booleans(), max_size=4), st.sampled_from([None, 0, 1]), st.booleans())
@few
def test_compress_matches_numpy(condition, axis, eager):
    x = data((3, 3), np.float64)
    try:
        expected = np.compress(condition, x, axis)
    except IndexError:
        with pytest.raises(IndexError, match="compress: index 3 is out of bounds"):
            xnp.compress(condition, x, axis)
        return
    check(run(lambda x: xnp.compress(condition, x, axis), x, eager=eager), expected)


def test_compress_errors():
    with pytest.raises(ValueError, match="compress: condition must be a 1-d array"):
        xnp.compress([[True]], np.arange(3))
    with pytest.raises(TracerConversionError, match="compress: condition must be known"):
        xlac.compile(lambda c, x: xnp.compress(c, x))(np.array([True]), np.arange(3))


# ---------------------------------------------------------------- interp, convolve, trapezoid


@given(st.integers(1, 80), st.integers(0, 2**16), st.sampled_from(["float32", "float64", "complex128"]),
       st.booleans(), st.booleans())
@settings(max_examples=4)
def test_interp_matches_numpy(n, seed, dtype, bounds, eager):
    rng = np.random.default_rng(seed)
    xp = np.sort(rng.uniform(-5, 5, n))
    if n > 3:
        xp[2] = xp[1]                             # a repeated knot
    fp = rng.normal(size=n).astype(dtype)
    if dtype == "complex128":
        fp = fp + 1j * rng.normal(size=n)
    x = np.concatenate([rng.uniform(-7, 7, 20), xp[:3], [np.nan, np.inf, -np.inf]]).astype(dtype.replace(
        "complex128", "float64"))
    kwargs = {"left": -9.0, "right": 9.0} if bounds else {}
    check(run(xnp.interp, x, xp, fp, eager=eager, **kwargs), np.interp(x, xp, fp, **kwargs), rtol=1e-12)


def test_interp_periodic_and_errors():
    xp, fp = np.array([190.0, -190, 350, -350]), np.array([5.0, 10, 3, 4])
    x = np.array([-180.0, -170, -185, 185, -10, -5, 0, 365])
    check(xnp.interp(x, xp, fp, period=360), np.interp(x, xp, fp, period=360), rtol=1e-12)
    check(xlac.compile(lambda x: xnp.interp(x, [1.0], [3.0]))(np.array([np.nan, 0.5, 2.0])),
          np.interp([np.nan, 0.5, 2.0], [1.0], [3.0]))
    with pytest.raises(ValueError, match="interp: fp and xp are not of the same length"):
        xnp.interp([0.5], [0, 1.0], [3.0, 1, 2])
    with pytest.raises(ValueError, match="interp: array of sample points is empty"):
        xnp.interp([0.5], [], [])
    with pytest.raises(ValueError, match="interp: period must be a non-zero value"):
        xnp.interp([0.5], [0, 1.0], [3.0, 1], period=0)


@given(st.integers(1, 7), st.integers(1, 7), st.sampled_from(["full", "same", "valid", 0, 1, 2]),
       st.sampled_from(["bool", "int8", "int64", "float32", "float64", "complex128"]), st.booleans())
@few
def test_convolve_correlate_match_numpy(na, nv, mode, dtype, eager):
    a, v = random(na, (na,), np.float64, -3, 3), random(nv + 10, (nv,), np.float64, -3, 3)
    if dtype == "complex128":
        a, v = a + 1j * a[::-1], v - 2j * v
    a, v = a.astype(dtype), v.astype(dtype)
    got = run(lambda a, v: (xnp.convolve(a, v, mode), xnp.correlate(a, v, mode)), a, v, eager=eager)
    check(got, (np.convolve(a, v, mode), np.correlate(a, v, mode)), rtol=1e-4 if dtype == "float32" else None)


def test_convolve_errors_and_mixed_dtypes():
    check(xnp.correlate(np.ones(2, np.float32), np.ones(3, np.float16)),
          np.correlate(np.ones(2, np.float32), np.ones(3, np.float16)))
    check(xnp.convolve(2.0, [1.0, 3.0]), np.convolve(2.0, [1.0, 3.0]))
    with pytest.raises(ValueError, match="convolve: a cannot be empty"):
        xnp.convolve([], [1.0])
    with pytest.raises(ValueError, match="correlate: second array argument cannot be empty"):
        xnp.correlate([1.0], [])
    with pytest.raises(ValueError, match="convolve: mode must be one of 'valid', 'same', or 'full'"):
        xnp.convolve([1.0], [1.0], "x")
    with pytest.raises(ValueError, match="correlate: integer convolve/correlate mode must be 0, 1, or 2"):
        xnp.correlate([1.0], [1.0], 3)
    with pytest.raises(ValueError, match="correlate: object too deep"):
        xnp.correlate(np.ones((2, 2)), np.ones(3))


def test_trapezoid_matches_numpy():
    y = random(0, (3, 5))
    x1, x2 = np.cumsum(random(1, (5,), low=0.1, high=1.0)), np.cumsum(random(2, (3, 5), low=0.1, high=1), 1)
    for eager in (True, False):
        check(run(xnp.trapezoid, y, eager=eager), np.trapezoid(y), rtol=1e-12)
        check(run(xnp.trapezoid, y, x1, eager=eager), np.trapezoid(y, x1), rtol=1e-12)
        check(run(xnp.trapezoid, y, x2, eager=eager, axis=-1), np.trapezoid(y, x2, axis=-1), rtol=1e-12)
    check(xnp.trapezoid(y, dx=0.5, axis=0), np.trapezoid(y, dx=0.5, axis=0), rtol=1e-12)
    check(xnp.trapezoid(np.arange(4, dtype=np.int8)), np.trapezoid(np.arange(4, dtype=np.int8)))
    check(xnp.trapezoid(np.ones(3, np.float32)), np.trapezoid(np.ones(3, np.float32)))


# ---------------------------------------------------------------- comparisons


def test_isclose_allclose_array_equal_match_numpy():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float32)
    b = np.array([1.0 + 1e-7, np.nan, np.inf, np.inf, 0.0, 100.001], np.float32)
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 0.01}):
        check(xnp.isclose(a, b, **kwargs), np.isclose(a, b, **kwargs))
        check(xlac.compile(lambda a, b: xnp.isclose(a, b, **kwargs))(a, b), np.isclose(a, b, **kwargs))
        assert xnp.allclose(a[:2], b[:2], **kwargs) == np.allclose(a[:2], b[:2], **kwargs)
    check(xnp.isclose(np.arange(3, dtype=np.int8), 1), np.isclose(np.arange(3, dtype=np.int8), 1))
    check(xnp.isclose(1.0, 1.0 + 1e-9), np.isclose(1.0, 1.0 + 1e-9))
    check(xnp.isclose(np.array([1, 2], np.int64), np.array([1, 3], np.int64)), np.isclose([1, 2], [1, 3]))
    assert xnp.allclose([1.0], [1.0]) is True
    nan = np.array([1.0, np.nan])
    for x, y in ((nan, nan), ([1, 2], [1.0, 2.0]), ([1, 2], [1, 2, 3]), (np.ones((2, 2)), np.ones(2))):
        for kwargs in ({}, {"equal_nan": True}):
            assert xnp.array_equal(x, y, **kwargs) is np.array_equal(x, y, **kwargs)
        assert xnp.array_equiv(x, y) is np.array_equiv(x, y)
    f = xlac.compile(lambda x, y: (xnp.allclose(x, y), xnp.array_equal(x, y), xnp.array_equiv(x, y)))
    got = f(np.ones(3), np.ones(3))
    assert all(np.asarray(g).shape == () and bool(g) for g in got)


# ---------------------------------------------------------------- elementwise numerics


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_to_num_matches_numpy():
    special = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
    for dtype in ("float16", "float32", "float64", "complex64", "int32", "bool"):
        x = special.astype(dtype) if dtype not in ("int32", "bool") else np.array([0, 1, 2]).astype(dtype)
        if dtype == "complex64":
            x = x + 1j * x[::-1]
        for kwargs in ({}, {"nan": -1.0, "posinf": 1e30, "neginf": -7}):
            check(xnp.nan_to_num(x, **kwargs), np.nan_to_num(x, **kwargs))
            check(xlac.compile(lambda x: xnp.nan_to_num(x, **kwargs))(x), np.nan_to_num(x, **kwargs))
    check(xnp.nan_to_num(special.astype(BF16)), np.nan_to_num(special).clip(-3.38953e38, 3.38953e38).astype(BF16))
    target = special.copy()
    assert xnp.nan_to_num(target, copy=False) is target
    check(target, np.nan_to_num(special))

    def in_place(x):
        xnp.nan_to_num(x, copy=False, nan=5.0)
        return x
    check(xlac.compile(in_place)(special.copy()), np.nan_to_num(special, nan=5.0))


@given(st.sampled_from(["bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex64"]),
       st.integers(-3, 3), st.booleans())
@few
def test_round_and_fix_match_numpy(dtype, decimals, eager):
    x = np.array([0.125, 2.5, -3.5, 15.0, 25.0, -1234.567, 0.0, 1e-3, 99.95])
    if dtype == "complex64":
        x = x + 1j * x[::-1]
    x = x.astype(dtype) if dtype != "bool" else x > 1
    try:
        expected = np.round(x, decimals)
    except TypeError:
        with pytest.raises(TypeError, match="round: Cannot cast"):
            run(xnp.round, x, eager=eager, decimals=decimals)
        return
    check(run(xnp.round, x, eager=eager, decimals=decimals), expected)
    check(run(xnp.around, x, eager=eager, decimals=decimals), np.around(x, decimals))
    if dtype != "complex64":
        check(run(xnp.fix, x, eager=eager), np.fix(x))


def test_sinc_and_i0_match_numpy():
    x = np.array([0.0, 0.5, -1.5, 3.0, 7.9, 8.0, 8.1, 20.0, -30.0, np.nan, 1e-9])
    for dtype, rtol in (("float64", 1e-13), ("float32", 1e-5), ("int32", 1e-13)):
        values = x.astype(dtype) if dtype != "int32" else np.array([0, 1, -3, 9, 20], np.int32)
        for fn in ("sinc", "i0"):
            expected = getattr(np, fn)(values)
            check(getattr(xnp, fn)(values), expected, rtol=rtol)
            check(xlac.compile(getattr(xnp, fn))(values), expected, rtol=rtol)
    check(xnp.sinc(np.array([0, 0.5], np.float16)), np.sinc(np.array([0, 0.5], np.float16)))
    with pytest.raises(TypeError, match="i0: i0 not supported for complex values"):
        xnp.i0(np.array([1j]))


# ---------------------------------------------------------------- flat and multi-dimensional indices


@given(st.sampled_from([(2, 3), (4,), (3, 1, 2)]), st.sampled_from(["C", "F"]), st.booleans())
@few
def test_unravel_and_ravel_multi_index_match_numpy(dims, order, eager):
    flat = np.array([[0, 5], [1, 2]], np.int32) % int(np.prod(dims))
    coords = np.unravel_index(flat, dims, order=order)
    check(run(xnp.unravel_index, flat, eager=eager, shape=dims, order=order), coords)
    check(run(lambda *c: xnp.ravel_multi_index(c, dims, order=order), *coords, eager=eager),
          np.ravel_multi_index(coords, dims, order=order))
    shifted = tuple(c * 3 - 4 for c in coords)
    modes = ("wrap", "clip", ("clip",) * (len(dims) - 1) + ("wrap",))
    check(run(lambda *c: tuple(xnp.ravel_multi_index(c, dims, mode=m, order=order) for m in modes), *shifted,
              eager=False), tuple(np.ravel_multi_index(shifted, dims, mode=m, order=order) for m in modes))


def test_index_conversion_errors():
    with pytest.raises(ValueError, match="unravel_index: index 6 is out of bounds for array with size 6"):
        xnp.unravel_index(np.array([1, 6]), (2, 3))
    with pytest.raises(ValueError, match="unravel_index: index -1 is out of bounds"):
        xnp.unravel_index(-1, (2, 3))
    with pytest.raises(TypeError, match="unravel_index: only int indices permitted"):
        xnp.unravel_index(1.0, (2, 3))
    with pytest.raises(ValueError, match="ravel_multi_index: invalid entry in coordinates array"):
        xnp.ravel_multi_index((np.array([1, 0]), np.array([2, 3])), (2, 3))
    with pytest.raises(ValueError, match="ravel_multi_index: parameter multi_index must be a sequence of length 2"):
        xnp.ravel_multi_index((np.array([1, 0]),), (2, 3))
    with pytest.raises(ValueError, match="ravel_multi_index: clipmode must be one of"):
        xnp.ravel_multi_index((1, 2), (2, 3), mode="foo")
    check(xnp.ravel_multi_index((1, 2), (2, 3)), np.ravel_multi_index((1, 2), (2, 3)))


# ---------------------------------------------------------------- assembling, splitting, applying


def test_block_matches_numpy():
    a, b, c = np.eye(2, dtype=np.float32), np.zeros((2, 1), np.int8), np.ones((1, 3))
    cases = [[a, b], [[a, b], [c]], [[[1, 2]], [[3, 4]]], a, [1, 2, 3], [[a], [np.ones((1, 2))]]]
    for blocks in cases:
        check(xnp.block(blocks), np.block(blocks))
    check(xlac.compile(lambda a, b, c: xnp.block([[a, b], [c]]))(a, b, c), np.block([[a, b], [c]]))
    with pytest.raises(ValueError, match=r"block: List depths are mismatched. First element was at depth 2, but "
                                         r"there is an element at depth 1 \(arrays\[1\]\)"):
        xnp.block([[a], b])
    with pytest.raises(ValueError, match=r"block: List at arrays\[0\] cannot be empty"):
        xnp.block([[]])
    with pytest.raises(TypeError, match=r"block: arrays\[1\] is a tuple"):
        xnp.block([a, (b,)])


def test_broadcast_shapes_and_polyval():
    assert xnp.broadcast_shapes((2, 1), (3,), ()) == np.broadcast_shapes((2, 1), (3,), ())
    with pytest.raises(ValueError, match="broadcast_shapes: shape mismatch"):
        xnp.broadcast_shapes((2,), (3,))
    for p, x in (([3, 0, 1], np.array([1, 2], np.int8)), (np.array([0.5, -1.0], np.float32), np.arange(3.0)),
                 ([1.5], 2), (np.ones((2, 3)), np.arange(3))):
        check(xnp.polyval(p, x), np.polyval(p, x))
        check(xlac.compile(lambda x: xnp.polyval(p, x))(np.asarray(x)), np.polyval(p, np.asarray(x)))


def test_hsplit_vsplit_dsplit_match_numpy():
    x = data((2, 4, 6), np.int32)
    for fn in ("hsplit", "vsplit", "dsplit"):
        for sections in (2, [1, 3]):
            expected = getattr(np, fn)(x, sections)
            check(getattr(xnp, fn)(x, sections), expected)
            check(xlac.compile(lambda x: getattr(xnp, fn)(x, sections))(x), expected)
    check(xnp.hsplit(np.arange(4), np.array([1])), np.hsplit(np.arange(4), [1]))
    with pytest.raises(ValueError, match="hsplit: hsplit only works on arrays of 1 or more dimensions"):
        xnp.hsplit(np.float64(1), 1)
    with pytest.raises(ValueError, match="vsplit: vsplit only works on arrays of 2 or more dimensions"):
        xnp.vsplit(np.zeros(3), 1)
    with pytest.raises(ValueError, match="dsplit: dsplit only works on arrays of 3 or more dimensions"):
        xnp.dsplit(np.zeros((2, 2)), 1)

    def write_through(x, lib):
        lib.hsplit(x, 2)[1][0, 0] = -1
        return x
    x = data((2, 4), np.int32)
    check(xlac.compile(lambda x: write_through(x, xnp))(x), write_through(x.copy(), np))


def test_apply_along_axis_and_over_axes():
    x = data((2, 3, 4), np.float32)
    for axis in (0, 1, -1):
        ends = lambda r: r[0] * r[-1]  # noqa: E731
        check(xnp.apply_along_axis(ends, axis, x), np.apply_along_axis(ends, axis, x))
        check(xlac.compile(lambda x: xnp.apply_along_axis(lambda r: xnp.stack([r.sum(), r.max()]), axis, x))(x),
              np.apply_along_axis(lambda r: np.stack([r.sum(), r.max()]), axis, x), rtol=1e-6)
    check(xnp.apply_over_axes(xnp.sum, x, [0, 2]), np.apply_over_axes(np.sum, x, [0, 2]))
    check(xlac.compile(lambda x: xnp.apply_over_axes(xnp.max, x, -1))(x), np.apply_over_axes(np.max, x, -1))


# ---------------------------------------------------------------- gradients against JAX


def _grad_matches(ours, theirs, *args, argnums=0):
    got = xlac.grad(ours, argnums=argnums)(*args)
    want = jax.grad(theirs, argnums=argnums)(*(jnp.asarray(a) for a in args))
    for g, w in zip(*((t,) if not isinstance(argnums, tuple) else t for t in (got, want))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_gradients_match_jax(x64):
    x, w = random(0, (3, 4)), random(1, (6, 8))
    for mode, kwargs in (("constant", {"constant_values": 2.0}), ("edge", {}), ("reflect", {}), ("wrap", {}),
                         ("linear_ramp", {"end_values": 1.0}), ("mean", {})):
        _grad_matches(lambda x: xnp.sum(xnp.pad(x, ((1, 2), (3, 1)), mode, **kwargs) * w),
                      lambda x: jnp.sum(jnp.pad(x, ((1, 2), (3, 1)), mode, **kwargs) * w), x)
    _grad_matches(lambda x: xnp.sum(xnp.roll(x, (1, -2), (0, 1)) * x[::-1]),
                  lambda x: jnp.sum(jnp.roll(x, (1, -2), (0, 1)) * x[::-1]), x)
    xp, fp = np.linspace(-2, 2, 7), random(2, (7,))
    points = np.array([-3.0, -1.9, -0.3, 0.25, 1.1, 3.0])
    _grad_matches(lambda fp, x: xnp.sum(xnp.interp(x, xp, fp) ** 2),
                  lambda fp, x: jnp.sum(jnp.interp(x, xp, fp) ** 2), fp, points, argnums=(0, 1))
    a, v = random(3, (9,)), random(4, (4,))
    for mode in ("full", "same", "valid"):
        _grad_matches(lambda a, v: xnp.sum(xnp.convolve(a, v, mode) ** 2),
                      lambda a, v: jnp.sum(jnp.convolve(a, v, mode) ** 2), a, v, argnums=(0, 1))
        _grad_matches(lambda a, v: xnp.sum(xnp.correlate(v, a, mode) ** 2),
                      lambda a, v: jnp.sum(jnp.correlate(v, a, mode) ** 2), a, v, argnums=(0, 1))
