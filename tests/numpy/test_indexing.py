"""x[index], take and take_along_axis against NumPy: values, dtypes, shapes and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st, settings

import xlac
import xlac.numpy as xnp
from tests.tolerance import assert_matches

DTYPES = [np.float32, np.int32, np.bool_, np.float64]


# ---------------------------------------------------------------- generated index expressions


@st.composite
def index_cases(draw):
    """(x, index): a random array and a random mix of ints, slices, None, ..., integer arrays and masks."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    dtype = draw(st.sampled_from(DTYPES))
    x = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    kinds = draw(st.lists(st.sampled_from(["int", "slice", "none", "array", "mask", "ellipsis"]), min_size=1, max_size=5))
    if "ellipsis" in kinds:                      # keep one
        first = kinds.index("ellipsis")
        kinds = [k for i, k in enumerate(kinds) if k != "ellipsis" or i == first]
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    widths, used = [], 0
    for kind in kinds:
        width = {"int": 1, "slice": 1, "array": 1, "mask": draw(st.integers(1, 2))}.get(kind, 0)
        width = min(width, len(shape) - used)
        if kind in ("int", "slice", "array", "mask") and width == 0:
            width = None                          # no axes left for it: drop the entry
        widths.append(width)
        used += width or 0
    entries = [(k, w) for k, w in zip(kinds, widths) if w is not None]
    after = sum(w for k, w in entries[entries.index(("ellipsis", 0)) + 1:]) if ("ellipsis", 0) in entries else 0
    axis, index = 0, []
    for i, (kind, width) in enumerate(entries):
        if kind == "ellipsis":
            index.append(Ellipsis)
            axis = len(shape) - after
        elif kind == "none":
            index.append(None)
        else:
            index.append(draw(_entry(kind, shape[axis:axis + width], batch)))
            axis += width
    return x, tuple(index)


def _entry(kind, sizes, batch):
    n = sizes[0]
    if kind == "slice":
        bound = st.none() | st.integers(-n - 2, n + 2)
        return st.builds(slice, bound, bound, st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))
    if kind == "mask":
        return st.lists(st.booleans(), min_size=int(np.prod(sizes)), max_size=int(np.prod(sizes))).map(
            lambda bits: np.array(bits, bool).reshape(sizes))
    if n == 0:                                    # nothing to pick: an empty integer array
        return st.just(np.zeros((0,), np.int64))
    if kind == "int":
        return st.integers(-n, n - 1)
    shape = st.lists(st.booleans(), min_size=len(batch), max_size=len(batch)).map(
        lambda ones: tuple(1 if one else b for one, b in zip(ones, batch)))
    return shape.flatmap(lambda s: st.lists(st.integers(-n, n - 1), min_size=int(np.prod(s)),
                                            max_size=int(np.prod(s))).map(lambda v: np.array(v, np.int64).reshape(s)))


def _numpy_or_error(x, index):
    try:
        return x[index], None
    except IndexError as e:
        return None, e


def _with_traced_integers(index):
    """The index with its integers and integer arrays pulled out as arguments, and a rebuild function."""
    positions = [i for i, e in enumerate(index) if isinstance(e, int) or
                 (isinstance(e, np.ndarray) and e.dtype != np.bool_)]
    arguments = [np.asarray(index[i], np.int64) for i in positions]

    def rebuild(traced):
        entries = list(index)
        for i, t in zip(positions, traced):
            entries[i] = t
        return tuple(entries)
    return arguments, rebuild


@settings(max_examples=12, deadline=None)
@given(index_cases())
def test_getitem_matches_numpy(case):
    x, index = case
    expected, error = _numpy_or_error(x, index)
    compiled = xlac.compile(lambda a: a[index])
    if error is not None:
        with pytest.raises(IndexError):
            compiled(x)
        with pytest.raises(IndexError):
            xlac.asarray(x)[index]
        return
    assert_matches(compiled(x), expected)
    assert_matches(xlac.asarray(x)[index], expected)
    arguments, rebuild = _with_traced_integers(index)
    if arguments:
        assert_matches(xlac.compile(lambda a, ints: a[rebuild(ints)])(x, arguments), expected)


# ---------------------------------------------------------------- lowering


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def _op_counts(fn, *args):
    return xlac.compile(fn).trace(*args).ir("final").op_counts()


@pytest.mark.parametrize("index", [
    (1, slice(None, None, -1), slice(3, 0, -2)),
    (Ellipsis, None, 2),
    (slice(1, None), None, slice(None, None, 2), -1),
])
def test_basic_indexing_lowers_without_gather(index):
    counts = _op_counts(lambda a: a[index], X)
    assert "gather" not in counts and "dynamic_slice" not in counts
    assert set(counts) <= {"slice", "reverse", "reshape"}


def test_traced_integer_is_a_dynamic_slice():
    counts = _op_counts(lambda a, i: a[i, 1:], X, np.int32(1))
    assert counts.get("dynamic_slice") == 1 and "gather" not in counts


@pytest.mark.parametrize("index", [
    ([0, 1], slice(None), [2, 3]),
    (slice(None, None, -1), np.array([[0], [2]]), 1),
    (X[..., 0] > 5,),
])
def test_advanced_indexing_is_one_gather(index):
    counts = _op_counts(lambda a: a[index], X)
    assert counts.get("gather") == 1
    assert_matches(xlac.compile(lambda a: a[index])(X), X[index])


def test_traced_indices_wrap_negatives_and_clamp_out_of_range_without_checks():
    f = xlac.compile(lambda a, i: a[i], check_bounds=False)
    v = np.arange(5.0)
    assert_matches(f(v, np.int64(-2)), v[-2])
    assert_matches(f(v, np.array([-1, 0, 3])), v[[-1, 0, 3]])
    # With the checks off (NumPy would raise), XLA clamps an index into range (documented).
    assert_matches(f(v, np.int64(9)), v[4])
    assert_matches(f(v, np.array([7, -9])), v[[4, 0]])


def test_unsigned_and_numpy_scalar_indices():
    v = np.arange(6.0).reshape(2, 3)
    assert_matches(xlac.compile(lambda a, i: a[:, i])(v, np.array([2, 0], np.uint8)), v[:, [2, 0]])
    assert_matches(xlac.compile(lambda a: a[np.int16(-1), np.array(1)])(v), v[-1, 1])
    assert_matches(xlac.asarray(v)[np.int64(1), np.uint8(2)], v[1, 2])
    assert_matches(xlac.asarray(v)[xlac.asarray(np.array([1, 0]))], v[[1, 0]])


def test_boolean_scalars_and_empty_results():
    v = np.arange(6).reshape(2, 3)
    for index in [True, False, (0, None, True), (slice(None), True, [0, 2]), ([],), (slice(None), []), np.array(True)]:
        assert_matches(xlac.compile(lambda a: a[index])(v), v[index])
        assert_matches(xlac.asarray(v)[index], v[index])
    scalar = np.float32(2.5)
    for index in [(), None, Ellipsis, True, (None, ..., None)]:
        assert_matches(xlac.compile(lambda a: a[index])(np.asarray(scalar)), np.asarray(scalar)[index])
    empty = np.zeros((0, 3), np.float32)
    assert_matches(xlac.compile(lambda a: a[:, [0, 2]])(empty), empty[:, [0, 2]])


# ---------------------------------------------------------------- errors


def test_out_of_bounds_static_integer():
    v = np.arange(3.0)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        xlac.compile(lambda a: a[5])(v)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        xlac.asarray(v)[-4]
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        xlac.asarray(v.reshape(1, 3))[:, np.array([0, 3])]


def test_too_many_and_invalid_indices():
    v = np.zeros((2, 3))
    with pytest.raises(IndexError, match="too many indices for array: array is 2-dimensional, but 3 were indexed"):
        xlac.compile(lambda a: a[0, 1, 2])(v)
    with pytest.raises(IndexError, match="only integers, slices"):
        xlac.compile(lambda a: a[1.0])(v)
    with pytest.raises(IndexError, match="only integers, slices"):
        xlac.asarray(v)["a"]
    with pytest.raises(IndexError, match="must be of integer"):
        xlac.compile(lambda a: a[np.array([1.0])])(v)
    with pytest.raises(IndexError, match="must be of integer"):
        xlac.compile(lambda a, i: a[i])(v, np.array([0.0]))
    with pytest.raises(IndexError, match="single ellipsis"):
        xlac.compile(lambda a: a[..., ...])(v)
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0"):
        xlac.compile(lambda a: a[np.array([True, False, True])])(v)
    with pytest.raises(IndexError, match="shape mismatch"):
        xlac.asarray(v)[[0, 1], [0, 1, 2]]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        xlac.compile(lambda a: a[::0])(v)


def test_a_traced_boolean_mask_whose_length_is_needed_as_an_int_suggests_where():
    with pytest.raises(xlac.TracerConversionError, match=r"xnp\.where\(mask, x, 0\)"):
        xlac.compile(lambda a: [v for v in a[a > 0]])(np.arange(5.0))       # iterating needs its length


def test_a_selection_and_a_slice_with_a_traced_bound_leave_the_function_at_numpys_length():
    a = np.arange(-1.0, 3.0)
    np.testing.assert_array_equal(xlac.compile(lambda a: a[a > 0])(a), a[a > 0])
    np.testing.assert_array_equal(xlac.compile(lambda a, i: a[i:])(a, np.int64(1)), a[1:])


# ---------------------------------------------------------------- take, take_along_axis


A = np.arange(12, dtype=np.int32).reshape(3, 4)


@pytest.mark.parametrize("indices,axis,mode", [
    ([3, -1, 0], None, "raise"), ([[0, 2], [1, 1]], 1, "raise"), (2, 0, "raise"), ([-1], -1, "raise"),
    ([5, -7, 2], 1, "clip"), ([5, -7, 2], 0, "wrap"), (np.array(13), None, "wrap"),
])
def test_take_matches_numpy(indices, axis, mode):
    expected = np.take(A, indices, axis=axis, mode=mode)
    assert_matches(xnp.take(A, indices, axis=axis, mode=mode), expected)
    traced = xlac.compile(lambda a, i: xnp.take(a, i, axis=axis, mode=mode))(A, np.asarray(indices))
    if mode != "raise" or np.all(np.abs(np.asarray(indices)) <= A.size - 1):
        assert_matches(traced, expected)


def test_take_errors():
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 4"):
        xnp.take(A, np.array([0, 7]), axis=1)
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        xlac.compile(lambda a: xnp.take(a, [12]))(A)
    with pytest.raises(np.exceptions.AxisError):
        xnp.take(A, [0], axis=2)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis_matches_numpy(axis):
    order = np.argsort(A * 7 % 5, axis=axis)
    expected = np.take_along_axis(A, order, axis=axis)
    assert_matches(xnp.take_along_axis(A, order, axis=axis), expected)
    assert_matches(xlac.compile(lambda a, i: xnp.take_along_axis(a, i, axis=axis))(A, order), expected)


def test_take_along_axis_broadcasts_and_checks():
    top = np.array([[1], [0], [3]])          # argmax(keepdims=True)-style indices
    assert_matches(xnp.take_along_axis(A, top, axis=1), np.take_along_axis(A, top, axis=1))
    row = np.array([[2, 0, 1, 1]])
    assert_matches(xnp.take_along_axis(A, row, axis=0), np.take_along_axis(A, row, axis=0))
    with pytest.raises(ValueError, match="same number of dimensions"):
        xnp.take_along_axis(A, np.array([0, 1]), axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        xnp.take_along_axis(A, np.array([[4]]), axis=1)
