"""xlac.numpy.shapes against NumPy: values, dtypes and shapes, compiled and eager, and NumPy's errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings
from hypothesis.extra import numpy as hnp

import xlac
import xlac.numpy as xnp
from xlac.errors import TracerConversionError, UnsupportedError
from tests.tolerance import assert_matches

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64, np.complex64]
dtype_st = st.sampled_from(DTYPES)
shape_st = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
nonempty_shape_st = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)


def data(shape, dtype=np.float32):
    """Distinct-ish values, so that any misplaced element shows."""
    n = int(np.prod(shape, dtype=np.int64))
    values = np.arange(n) % 2 == 1 if dtype == np.bool_ else (np.arange(n) + 1).astype(dtype)
    return values.reshape(shape)


def run(fn, *args, eager, **static):
    """``fn(*args, **static)`` eagerly, or compiled with the keyword arguments static."""
    if eager:
        return fn(*args, **static)
    names = tuple(static)
    return xlac.compile(lambda *a, **kw: fn(*a, **kw), static_argnames=names)(*args, **static)


# ---------------------------------------------------------------- reshape and ravel


@st.composite
def reshape_case(draw):
    shape = draw(shape_st)
    size = int(np.prod(shape, dtype=np.int64))
    options = [(size,), (-1,), (1, size), (size, 1), tuple(reversed(shape)), ()]
    if size > 0 and len(shape) >= 1:
        i = draw(st.integers(0, len(shape) - 1))
        options.append(tuple(reversed(shape[:i] + (-1,) + shape[i + 1:])))
    target = draw(st.sampled_from([s for s in options if s != () or size == 1]))
    return shape, target


@given(reshape_case(), dtype_st, st.booleans())
def test_reshape_matches_numpy(case, dtype, eager):
    shape, target = case
    x = data(shape, dtype)
    assert_matches(run(xnp.reshape, x, eager=eager, shape=target), np.reshape(x, target))


@given(reshape_case(), st.sampled_from(["C", "F"]))
def test_reshape_and_ravel_orders(case, order):
    shape, target = case
    x = data(shape, np.int32)
    f = xlac.compile(lambda x: (xnp.reshape(x, target, order=order), xnp.ravel(x, order=order)))
    got_reshape, got_ravel = f(x)
    assert_matches(got_reshape, np.reshape(x, target, order=order))
    assert_matches(got_ravel, np.ravel(x, order=order))


def test_reshape_int_shape_and_methods():
    x = data((2, 3))
    f = xlac.compile(lambda x: (xnp.reshape(x, 6), x.reshape(3, 2), x.reshape((-1, 2)), x.ravel(), x.flatten()))
    for got, expected in zip(f(x), (x.reshape(6), x.reshape(3, 2), x.reshape(-1, 2), x.ravel(), x.flatten())):
        assert_matches(got, expected)


def test_reshape_that_only_changes_shape_is_one_node():
    f = xlac.compile(lambda x: xnp.reshape(x, (3, -1)))
    traced = f.trace(np.zeros((2, 3), np.float32))
    assert [node.primitive.name for node in traced.graph.nodes] == ["reshape"]
    assert "reshape[shape=(3,2)]" in str(traced)
    assert traced.graph.nodes[0].origin == "reshape"


def test_reshape_to_same_shape_is_no_node():
    traced = xlac.compile(lambda x: xnp.reshape(x, (2, 3))).trace(np.zeros((2, 3), np.float32))
    assert traced.graph.nodes == []


def test_reshape_errors():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"cannot reshape array of size 6 into shape \(4,\)"):
        xnp.reshape(x, (4,))
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        xnp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match=r"cannot reshape array of size 0 into shape \(0,newaxis\)"):
        xnp.reshape(np.zeros(0), (0, -1))
    with pytest.raises(ValueError, match="cannot reshape array of size 6"):
        xnp.reshape(x, (4, -1))
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        xnp.reshape(x, (2.0, 3))
    with pytest.raises(UnsupportedError, match="order='A'"):
        xnp.reshape(x, (6,), order="A")
    with pytest.raises(NotImplementedError, match="order='K'"):
        xnp.ravel(x, order="K")
    with pytest.raises(ValueError, match="order must be one of"):
        xnp.reshape(x, (6,), order="X")


def test_reshape_with_traced_shape_raises_tracer_conversion_error():
    f = xlac.compile(lambda x, n: xnp.reshape(x, (n, -1)))
    with pytest.raises(TracerConversionError, match="static argument"):
        f(np.zeros(6), np.int64(2))


def test_numpy_integers_are_static_shapes_eagerly():
    x = data((2, 3))
    assert_matches(xnp.reshape(x, (np.int64(3), np.int32(2))), x.reshape(3, 2))
    assert_matches(xnp.reshape(x, np.array([3, 2])), x.reshape(3, 2))
    assert_matches(xnp.expand_dims(x, np.int64(0)), np.expand_dims(x, 0))
    assert_matches(xnp.transpose(x, (np.int8(1), np.int8(0))), x.T)


# ---------------------------------------------------------------- axis permutations


@given(nonempty_shape_st, st.randoms(use_true_random=False), dtype_st, st.booleans())
def test_transpose_matches_numpy(shape, random, dtype, eager):
    x = data(shape, dtype)
    axes = list(range(len(shape)))
    random.shuffle(axes)
    axes = tuple(a - len(shape) if random.random() < 0.5 else a for a in axes)    # some negative
    assert_matches(run(xnp.transpose, x, eager=eager, axes=axes), np.transpose(x, axes))


def test_transpose_default_and_T():
    x = data((2, 3, 4))
    f = xlac.compile(lambda x: (xnp.transpose(x), x.T, x.transpose(1, 0, 2), x.transpose((2, 1, 0)), x.mT))
    for got, expected in zip(f(x), (x.T, x.T, x.transpose(1, 0, 2), x.transpose(2, 1, 0), np.swapaxes(x, -1, -2))):
        assert_matches(got, expected)


@given(nonempty_shape_st, st.data())
def test_swapaxes_and_moveaxis_match_numpy(shape, draw):
    ndim = len(shape)
    axis_st = st.integers(-ndim, ndim - 1)
    a1, a2 = draw.draw(axis_st), draw.draw(axis_st)
    src = draw.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    dst = draw.draw(st.permutations(range(ndim)))[:len(src)]
    src = [s - ndim if i % 2 else s for i, s in enumerate(src)]
    x = data(shape, np.int64)
    f = xlac.compile(lambda x: (xnp.swapaxes(x, a1, a2), xnp.moveaxis(x, src, dst), xnp.moveaxis(x, a1, a2)))
    got = f(x)
    assert_matches(got[0], np.swapaxes(x, a1, a2))
    assert_matches(got[1], np.moveaxis(x, src, dst))
    assert_matches(got[2], np.moveaxis(x, a1, a2))


def test_axis_permutation_errors():
    x = np.zeros((2, 3))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        xnp.transpose(x, (0, 2))
    with pytest.raises(ValueError, match="repeated axis in transpose"):
        xnp.transpose(x, (0, 0))
    with pytest.raises(ValueError, match="axes don't match array"):
        xnp.transpose(x, (0,))
    with pytest.raises(np.exceptions.AxisError, match="axis -3 is out of bounds"):
        xnp.swapaxes(x, 0, -3)
    with pytest.raises(ValueError, match="repeated axis in `source` argument"):
        xnp.moveaxis(x, (0, 0), (1, 0))
    with pytest.raises(ValueError, match="must have the same number of elements"):
        xnp.moveaxis(x, (0,), (1, 0))


# ---------------------------------------------------------------- unit axes


@given(shape_st, st.data(), st.booleans())
def test_expand_dims_matches_numpy(shape, draw, eager):
    out_ndim = len(shape) + draw.draw(st.integers(1, 2))
    axes = draw.draw(st.lists(st.integers(-out_ndim, out_ndim - 1), min_size=out_ndim - len(shape),
                              max_size=out_ndim - len(shape), unique_by=lambda a: a % out_ndim))
    axis = axes[0] if len(axes) == 1 and draw.draw(st.booleans()) else tuple(axes)
    x = data(shape, np.float32)
    assert_matches(run(xnp.expand_dims, x, eager=eager, axis=axis), np.expand_dims(x, axis))


@given(hnp.array_shapes(min_dims=0, max_dims=5, min_side=1, max_side=2), st.data(), st.booleans())
def test_squeeze_matches_numpy(shape, draw, eager):
    ones = [i for i, d in enumerate(shape) if d == 1]
    choice = draw.draw(st.sampled_from(["none", "int", "tuple"]))
    if choice == "int" and ones:
        axis = draw.draw(st.sampled_from(ones)) - (len(shape) if draw.draw(st.booleans()) else 0)
    elif choice == "tuple":
        axis = tuple(draw.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
    else:
        axis = None
    x = data(shape, np.int8)
    assert_matches(run(xnp.squeeze, x, eager=eager, axis=axis), np.squeeze(x, axis))


def test_unit_axis_errors():
    x = np.zeros((1, 3))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out which has size not equal to one"):
        xnp.squeeze(x, 1)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        xnp.squeeze(x, 2)
    with pytest.raises(ValueError, match="repeated axis"):
        xnp.expand_dims(x, (0, 0))
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        xnp.expand_dims(x, 3)


# ---------------------------------------------------------------- broadcasting


@given(shape_st, st.data(), dtype_st)
def test_broadcast_to_and_arrays_match_numpy(shape, draw, dtype):
    # a broadcastable source: some trailing axes of the target, some set to 1
    keep = draw.draw(st.integers(0, len(shape)))
    src = tuple(1 if draw.draw(st.booleans()) else d for d in shape[len(shape) - keep:])
    x, y = data(src, dtype), data(shape, np.float32)
    f = xlac.compile(lambda x, y: (xnp.broadcast_to(x, shape), xnp.broadcast_arrays(x, y)))
    got_to, got_arrays = f(x, y)
    assert_matches(got_to, np.broadcast_to(x, shape))
    assert isinstance(got_arrays, tuple)
    for got, expected in zip(got_arrays, np.broadcast_arrays(x, y)):
        assert_matches(got, expected)


def test_broadcast_eager_and_errors():
    assert_matches(xnp.broadcast_to(np.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))
    assert_matches(xnp.broadcast_to(2.0, 3), np.broadcast_to(2.0, 3))
    with pytest.raises(ValueError, match=r"cannot broadcast a \(3,\) array to shape \(4,\)"):
        xnp.broadcast_to(np.zeros(3), (4,))
    with pytest.raises(ValueError, match="must be non-negative"):
        xnp.broadcast_to(np.zeros(3), (-1,))
    with pytest.raises(ValueError, match="could not be broadcast together"):
        xnp.broadcast_arrays(np.zeros(3), np.zeros(2))


def test_atleast_nd():
    inputs = [np.float32(1.5), np.arange(2), np.ones((2, 3)), np.ones((1, 2, 3, 4), np.int8)]
    f = xlac.compile(lambda *xs: (xnp.atleast_1d(*xs), xnp.atleast_2d(*xs), xnp.atleast_3d(*xs)))
    for got, fn in zip(f(*inputs), (np.atleast_1d, np.atleast_2d, np.atleast_3d)):
        assert isinstance(got, tuple) and len(got) == len(inputs)
        for g, expected in zip(got, fn(*inputs)):
            assert_matches(g, expected)
    assert_matches(xnp.atleast_2d(3), np.atleast_2d(3))     # one argument: one array
    assert_matches(xnp.atleast_3d([1, 2]), np.atleast_3d([1, 2]))


# ---------------------------------------------------------------- joining


@given(nonempty_shape_st, st.data(), st.lists(dtype_st, min_size=1, max_size=3))
def test_concatenate_matches_numpy(shape, draw, dtypes_):
    ndim = len(shape)
    axis = draw.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))
    arrays = []
    for dtype in dtypes_:
        s = list(shape)
        if axis is not None:
            s[axis] = draw.draw(st.integers(0, 3))
        arrays.append(data(tuple(s), dtype))
    got = xlac.compile(lambda xs: xnp.concatenate(xs, axis=axis))(arrays)
    assert_matches(got, np.concatenate(arrays, axis=axis))


def test_concatenate_eager_dtype_and_scalars():
    a, b = np.arange(3, dtype=np.int8), np.arange(2, dtype=np.uint8)
    assert_matches(xnp.concatenate([a, b]), np.concatenate([a, b]))
    assert_matches(xnp.concatenate((a, b), dtype=np.float32), np.concatenate((a, b), dtype=np.float32))
    assert_matches(xnp.concatenate([a, [300, 1]]), np.concatenate([a, [300, 1]]))
    assert_matches(xnp.concatenate([np.ones((2, 2)), np.zeros((1, 2))], axis=-2),
                   np.concatenate([np.ones((2, 2)), np.zeros((1, 2))], axis=-2))
    assert_matches(xnp.concatenate([np.ones((2, 2)), np.zeros((1, 3))], axis=None),
                   np.concatenate([np.ones((2, 2)), np.zeros((1, 3))], axis=None))


def test_concatenate_errors():
    with pytest.raises(ValueError, match="zero-dimensional arrays cannot be concatenated"):
        xnp.concatenate([np.zeros(()), np.zeros(())])
    with pytest.raises(ValueError, match="must have same number of dimensions"):
        xnp.concatenate([np.zeros(3), np.zeros((3, 1))])
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3 and the array at "
                                         "index 1 has size 1"):
        xnp.concatenate([np.zeros((2, 3)), np.zeros((3, 1))])
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        xnp.concatenate([np.zeros(3)], dtype=np.int64)
    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        xnp.concatenate([])
    with pytest.raises(np.exceptions.AxisError, match="axis 1 is out of bounds for array of dimension 1"):
        xnp.concatenate([np.zeros(3), np.zeros(3)], axis=1)


@given(shape_st, st.data(), st.lists(dtype_st, min_size=1, max_size=3))
def test_stack_matches_numpy(shape, draw, dtypes_):
    axis = draw.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [data(shape, dtype) for dtype in dtypes_]
    got = xlac.compile(lambda xs: xnp.stack(xs, axis=axis))(arrays)
    assert_matches(got, np.stack(arrays, axis=axis))


@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(2, 3), (2, 1)], [(1, 2, 3), (1, 2, 1)], [(), ()]])
def test_hstack_vstack_dstack_column_stack(shapes):
    arrays = [data(s, np.float32) for s in shapes]
    arrays[-1] = arrays[-1].astype(np.int16)
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        try:
            expected = getattr(np, name)(arrays)
        except ValueError:
            with pytest.raises(ValueError):
                getattr(xnp, name)(arrays)
            continue
        assert_matches(getattr(xnp, name)(arrays), expected)


def test_hstack_vstack_dtype():
    a = [np.arange(2), np.arange(3)]
    assert_matches(xnp.hstack(a, dtype=np.float32), np.hstack(a, dtype=np.float32))
    b = [np.arange(2), np.arange(2)]
    assert_matches(xnp.vstack(b, dtype=np.float16), np.vstack(b, dtype=np.float16))


def test_stack_of_tracers_and_asarray_of_nested_tracers():
    x = np.arange(3, dtype=np.float32)
    f = xlac.compile(lambda x: (xnp.stack([x, x * 2, x + 1]), xnp.asarray([[x, x], [x, x]])))
    got_stack, got_nested = f(x)
    assert_matches(got_stack, np.stack([x, x * 2, x + 1]))
    assert_matches(got_nested, np.array([[x, x], [x, x]]))


def test_stack_errors():
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        xnp.stack([np.zeros(3), np.zeros(2)])
    with pytest.raises(ValueError, match="need at least one array to stack"):
        xnp.stack([])
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        xnp.stack([np.zeros(3), np.zeros(3)], axis=2)
    with pytest.raises(TypeError, match="sequence"):
        xnp.stack(x for x in [np.zeros(3)])


# ---------------------------------------------------------------- splitting


@given(nonempty_shape_st, st.data())
def test_split_and_array_split_match_numpy(shape, draw):
    ndim = len(shape)
    axis = draw.draw(st.integers(-ndim, ndim - 1))
    n = shape[axis]
    sections = draw.draw(st.integers(1, 5))
    indices = draw.draw(st.lists(st.integers(-n - 2, n + 2), max_size=3))
    x = data(shape, np.int32)
    f = xlac.compile(lambda x: (xnp.array_split(x, sections, axis=axis), xnp.split(x, indices, axis=axis)))
    got_sections, got_indices = f(x)
    for got, expected in zip(got_sections, np.array_split(x, sections, axis=axis), strict=True):
        assert_matches(got, expected)
    for got, expected in zip(got_indices, np.split(x, indices, axis=axis), strict=True):
        assert_matches(got, expected)


def test_split_eager_even_and_errors():
    x = data((4, 6))
    got = xnp.split(x, 3, axis=1)
    assert isinstance(got, list)
    for g, expected in zip(got, np.split(x, 3, axis=1), strict=True):
        assert_matches(g, expected)
    for g, expected in zip(xnp.split(x, np.array([1, 3])), np.split(x, np.array([1, 3])), strict=True):
        assert_matches(g, expected)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        xnp.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        xnp.array_split(x, 0)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        xnp.split(x, 2, axis=2)


# ---------------------------------------------------------------- flip, copy, shape queries


@given(shape_st, st.data(), dtype_st)
def test_flip_matches_numpy(shape, draw, dtype):
    ndim = len(shape)
    axis = None
    if ndim and draw.draw(st.booleans()):
        axes = draw.draw(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda a: a % ndim, max_size=ndim))
        axis = axes[0] if len(axes) == 1 else tuple(axes)
    x = data(shape, dtype)
    assert_matches(xlac.compile(lambda x: xnp.flip(x, axis))(x), np.flip(x, axis))


def test_flip_eager_and_errors():
    x = data((2, 3))
    assert_matches(xnp.flip(x, -1), np.flip(x, -1))
    with pytest.raises(ValueError, match="repeated axis"):
        xnp.flip(x, (0, -2))
    with pytest.raises(np.exceptions.AxisError):
        xnp.flip(x, 2)


def test_copy_and_shape_queries():
    x = data((2, 3), np.int16)
    assert_matches(xnp.copy(x), x)
    assert_matches(xnp.copy(2.5), np.copy(2.5))
    assert_matches(xlac.compile(lambda x: x.copy())(x), x)
    for a in (x, xlac.asarray(x), [[1, 2, 3]], 3.0):
        assert xnp.shape(a) == np.shape(a) and xnp.ndim(a) == np.ndim(a) and xnp.size(a) == np.size(a)
    assert xnp.size(x, 1) == 3 and xnp.size(x, -2) == 2

    @xlac.compile
    def queries(x):
        assert xnp.shape(x) == (2, 3) and xnp.ndim(x) == 2 and xnp.size(x) == 6
        assert xnp.shape([x, x]) == (2, 2, 3)
        return x
    queries(x)


def test_python_scalars_become_strong_arrays():
    # np.reshape(2.0, 1) is a float64 array: it does not stay a weak Python scalar
    f = xlac.compile(lambda x: xnp.reshape(2.0, (1,)) + x)
    assert_matches(f(np.ones(1, np.float32)), np.reshape(2.0, (1,)) + np.ones(1, np.float32))


# ---------------------------------------------------------------- diagonal, trace


@settings(max_examples=12, deadline=None)
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4), data=st.data())
def test_diagonal_matches_numpy(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ndim = len(shape)
    axis1 = data.draw(st.integers(-ndim, ndim - 1))
    axis2 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda a: a % ndim != axis1 % ndim))
    offset = data.draw(st.integers(-5, 5))
    expected = np.diagonal(x, offset, axis1, axis2)
    assert_matches(xnp.diagonal(x, offset, axis1, axis2), expected)
    assert_matches(xnp.trace(x, offset, axis1, axis2), np.trace(x, offset, axis1, axis2))


def test_diagonal_method_of_views_compiled():
    x = np.arange(24.0).reshape(4, 6)
    f = xlac.compile(lambda x: (x[::2, ::-1].T.diagonal(-1), x.diagonal(2).reshape(2, 2)))
    got = f(x)
    assert_matches(got[0], x[::2, ::-1].T.diagonal(-1))
    assert_matches(got[1], x.diagonal(2).reshape(2, 2))


def test_diagonal_is_a_read_only_view_that_sees_writes_to_its_base():
    def f(ns, x):
        d = x.diagonal()
        x[1, 1] = 50.0
        x[:, 0] += 1.0
        return d * 1.0, ns.trace(x)
    x = np.arange(9.0).reshape(3, 3)
    expected_x = x.copy()
    expected = f(np, expected_x)
    got = xlac.compile(lambda x: f(xnp, x))(x)
    for g, e in zip(got, expected):
        assert_matches(g, e)
    assert_matches(x, expected_x)

    def write(x):
        x.diagonal()[0] = 1.0
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        write(np.ones((2, 2)))
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        xlac.compile(write)(np.ones((2, 2)))
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        xlac.compile(lambda x: x.diagonal().__iadd__(1.0))(np.ones((2, 2)))


@pytest.mark.parametrize("call, error, match", [
    (lambda ns: ns.diagonal(np.ones(3)), ValueError, "at least two dimensions"),
    (lambda ns: ns.diagonal(np.ones((2, 2)), 0, 1, -1), ValueError, "axis1 and axis2 cannot be the same"),
    (lambda ns: ns.diagonal(np.ones((2, 2)), 0, 0, 2), np.exceptions.AxisError, "out of bounds"),
    (lambda ns: ns.trace(np.ones(3)), ValueError, "at least two dimensions"),
])
def test_diagonal_errors_match_numpy(call, error, match):
    with pytest.raises(error, match=match):
        call(np)
    with pytest.raises(error, match=match):
        call(xnp)


def test_trace_dtypes_follow_sum():
    for dtype in (np.int8, np.uint16, np.bool_, np.float16):
        x = np.ones((3, 3), dtype)
        assert_matches(xnp.trace(x), np.trace(x))
