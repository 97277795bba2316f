"""Differential tests of every function in xlac.numpy.ufuncs against the NumPy function of the same name.

Hypothesis draws broadcasting shape pairs, dtype pairs (Python scalars as the second operand
check NEP 50's weak promotion) and values. Each dtype pair compiles one program that applies
every function NumPy accepts for it; the functions NumPy refuses must raise TypeError here too.
"""
from __future__ import annotations

import functools
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.numpy import ufuncs
from tests.tolerance import assert_matches

UNARY = ["negative", "positive", "absolute", "abs", "sign", "exp", "expm1", "log", "log1p", "sqrt", "cbrt", "tanh",
         "sin", "cos", "tan", "floor", "ceil", "rint", "log2", "log10", "exp2", "sinh", "cosh", "arctan", "arcsin",
         "arccos", "square", "reciprocal", "invert", "bitwise_not", "logical_not", "isfinite", "isnan", "isinf"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "power",
          "maximum", "minimum", "fmax", "fmin", "arctan2", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and",
          "logical_or", "logical_xor"]
SELECTION = ["where", "clip"]

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64")]
PY_SCALARS = [int, float, bool]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, -2.5])


def test_every_function_is_tested():
    from tests.numpy.test_ufuncs_extra import EXTRA
    assert set(UNARY) | set(BINARY) | set(SELECTION) | set(EXTRA) == set(ufuncs.__all__)


def is_python_scalar_kind(kind) -> bool:
    return isinstance(kind, type)       # np.dtype("bool") == bool, so no `in PY_SCALARS`


def random_array(rng, shape, dtype):
    """Small and full-range integers (zeros included), floats with NaN/inf/±0/halves, random booleans."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -9), min(info.max, 9), size=shape, endpoint=True)
        full = rng.integers(info.min, info.max, size=shape, endpoint=True)
        return np.where(rng.random(shape) < 0.7, small, full).astype(dtype)
    x = rng.normal(0, 3, shape)
    x = np.where(rng.random(shape) < 0.2, rng.choice(SPECIALS, shape), x)
    return np.asarray(x).astype(dtype)


def random_scalar(rng, kind, like: np.dtype):
    """A Python scalar that NumPy 2 accepts next to an array of ``like`` (integers stay in its range)."""
    if kind is bool:
        return bool(rng.random() < 0.5)
    if kind is float:
        return float(rng.choice([0.0, 1.5, -2.0, np.inf, np.nan, rng.normal(0, 3)]))
    if np.issubdtype(like, np.integer):
        info = np.iinfo(like)
        return int(rng.integers(max(info.min, -5), min(info.max, 9), endpoint=True))
    return int(rng.integers(-5, 9, endpoint=True))


def numpy_accepts(name, *samples) -> bool:
    try:
        with np.errstate(all="ignore"):
            getattr(np, name)(*samples)
        return True
    except TypeError:
        return False


def sample(kind):
    return kind(1) if is_python_scalar_kind(kind) else np.ones(1, kind)


def check(got, expected, *, label, defined=None):
    """assert_matches on the elements where NumPy's result is defined, naming the case that failed."""
    expected = np.asarray(expected)
    got = np.asarray(got)
    try:
        assert got.dtype == expected.dtype, f"dtype {got.dtype} != NumPy's {expected.dtype}"
        if defined is not None:
            defined = np.broadcast_to(defined, expected.shape)
            got, expected = got[defined], expected[defined]
        assert_matches(got, expected)
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from None


# ---------------------------------------------------------------- unary


@functools.cache
def unary_program(dtype):
    """Every unary function NumPy accepts for ``dtype``, compiled once per shape; the rest must raise TypeError."""
    accepted = [n for n in UNARY if numpy_accepts(n, sample(dtype))]
    for name in set(UNARY) - set(accepted):
        with pytest.raises(TypeError):
            xlac.compile(getattr(xnp, name))(np.ones(2, dtype))
    return accepted, xlac.compile(lambda a: tuple(getattr(xnp, n)(a) for n in accepted))


def unary_defined(name, x):
    """Where NumPy's result is defined: integer reciprocal of 0 is undefined in C."""
    if name == "reciprocal" and x.dtype.kind in "biu":
        return x != 0
    return None


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from([(), (0, 3), (2, 3)]), st.integers(0, 2**32 - 1))
def test_unary_ufuncs(dtype, shape, seed):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    names, program = unary_program(dtype)
    for name, got in zip(names, program(x)):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x)
        check(got, expected, label=f"{name}({dtype})", defined=unary_defined(name, x))


# ---------------------------------------------------------------- binary


@functools.cache
def binary_program(kind1, kind2):
    """Every binary function NumPy accepts for these operand kinds; the rest must raise TypeError."""
    accepted = [n for n in BINARY if numpy_accepts(n, sample(kind1), sample(kind2))]
    rejected = sorted(set(BINARY) - set(accepted))
    for name in rejected:
        with pytest.raises(TypeError):
            xlac.compile(getattr(xnp, name))(sample(kind1), sample(kind2))
    return accepted, xlac.compile(lambda a, b: tuple(getattr(xnp, n)(a, b) for n in accepted))


def binary_defined(name, x, y, expected):
    """Where NumPy defines the result: NumPy refuses negative integer powers of integers."""
    if name == "power" and expected.dtype.kind in "iu":
        return np.asarray(y) >= 0
    return None


def numpy_reference(name, x, y):
    if name == "power" and np.result_type(x, y).kind in "iu":
        y = np.where(np.asarray(y) < 0, 1, y).astype(np.asarray(y).dtype) if not isinstance(y, int) else abs(y)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(np, name)(x, y)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES + PY_SCALARS),
       hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), st.integers(0, 2**32 - 1))
def test_binary_ufuncs(dtype, kind, shapes, seed):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shapes.input_shapes[0], dtype)
    y = random_scalar(rng, kind, dtype) if is_python_scalar_kind(kind) else random_array(rng, shapes.input_shapes[1], kind)
    names, program = binary_program(dtype, kind)
    for name, got in zip(names, program(x, y)):
        expected = numpy_reference(name, x, y)
        check(got, expected, label=f"{name}({dtype}, {kind!r} {y if is_python_scalar_kind(kind) else ''})",
              defined=binary_defined(name, x, y, np.asarray(expected)))


def test_integer_division_and_modulo_by_zero_give_zero_like_numpy():
    x = np.array([7, -7, 0, np.iinfo(np.int32).min], np.int32)
    y = np.array([0, 0, 0, -1], np.int32)
    for name in ("floor_divide", "remainder", "fmod"):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x, y)
        check(xlac.compile(getattr(xnp, name))(x, y), expected, label=name)


def test_float_floor_divide_edge_cases_match_numpy():
    x = np.array([1.0, -1.0, -1.0, 7.0, -7.0, np.inf, 0.0, 1e300], np.float64)
    y = np.array([0.0, np.inf, -np.inf, 2.0, 2.0, 2.0, -3.0, 1e-10], np.float64)
    for name in ("floor_divide", "remainder"):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x, y)
        check(xnp.__dict__[name](x, y), expected, label=name)


# ---------------------------------------------------------------- selection


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES + PY_SCALARS),
       hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3), st.integers(0, 2**32 - 1))
def test_where_and_clip(dtype, kind, shapes, seed):
    rng = np.random.default_rng(seed)
    cond_shape, x_shape, y_shape = shapes.input_shapes
    cond = random_array(rng, cond_shape, np.dtype("int8"))
    x = random_array(rng, x_shape, dtype)
    y = random_scalar(rng, kind, dtype) if is_python_scalar_kind(kind) else random_array(rng, y_shape, kind)
    selected, clipped = xlac.compile(lambda c, a, b: (xnp.where(c, a, b), xnp.clip(a, b, None)))(cond, x, y)
    check(selected, np.where(cond, x, y), label="where")
    if numpy_accepts("maximum", sample(dtype), sample(kind)):
        with np.errstate(all="ignore"):
            check(clipped, np.clip(x, y, None), label="clip")


def test_clip_both_bounds():
    x = np.array([-3, 0, 5, 9], np.int8)
    check(xnp.clip(x, 0, 6), np.clip(x, 0, 6), label="clip")
    check(xnp.clip(x, np.int16(-1), 2.5), np.clip(x, np.int16(-1), 2.5), label="clip mixed")
    check(xnp.clip(x), x, label="clip without bounds (the standard: x)")
    check(xnp.clip(x, min=0), np.clip(x, min=0), label="clip min=")
    check(xnp.clip(x, a_max=2), np.clip(x, max=2), label="clip a_max=")
    check(xlac.compile(lambda v: xnp.clip(v, max=1))(x), np.clip(x, max=1), label="clip max= compiled")
    with pytest.raises(TypeError, match="clip: give each bound once"):
        xnp.clip(x, min=0, a_min=1)


# ---------------------------------------------------------------- error paths and eager mode


def test_bool_subtract_and_negative_raise_type_error():
    b = np.array([True, False])
    with pytest.raises(TypeError, match="boolean subtract"):
        xnp.subtract(b, b)
    with pytest.raises(TypeError, match="boolean negative"):
        xlac.compile(lambda a: -a)(b)
    with pytest.raises(TypeError, match="boolean negative"):
        xnp.negative(b)


def test_shift_of_floats_raises_type_error():
    with pytest.raises(TypeError, match="left_shift"):
        xnp.left_shift(np.ones(2), 1)
    with pytest.raises(TypeError, match="right_shift"):
        xlac.compile(lambda a: xnp.right_shift(a, np.int32(1)))(np.ones(2, np.float32))


def test_uint8_plus_out_of_range_python_int_raises_overflow_error():
    x = np.ones(3, np.uint8)
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        xnp.add(x, 300)
    with pytest.raises(OverflowError, match="-1 out of bounds for uint8"):
        xlac.compile(lambda a: a + (-1))(x)


def test_negative_integer_power_constant_raises_like_numpy():
    with pytest.raises(ValueError, match="negative integer powers"):
        xnp.power(np.arange(3), -1)


def test_eager_add_returns_an_xlac_array_with_numpy_values():
    a, b = np.arange(6, dtype=np.int16).reshape(2, 3), np.array([1.5, 2.5, 3.5], np.float32)
    out = xnp.add(a, b)
    assert isinstance(out, xlac.Array)
    check(out, np.add(a, b), label="eager add")


def test_weak_python_scalars_keep_the_array_dtype():
    check(xnp.multiply(np.ones(2, np.float16), 3.0), np.ones(2, np.float16) * 3.0, label="f16 * float")
    check(xnp.add(np.ones(2, np.int8), 3), np.ones(2, np.int8) + 3, label="i8 + int")
    check(xnp.add(np.ones(2, np.int8), 3.5), np.ones(2, np.int8) + 3.5, label="i8 + float")
    check(xnp.add(np.ones(2, bool), 2), np.ones(2, bool) + 2, label="bool + int")
