"""Differential tests: every primitive in the catalog, run through XLA, against NumPy.

Each test builds a tiny program from ``xlac.trace.ops`` inside ``xlac.compile`` and
compares values and dtypes with a NumPy implementation of the same math. Where XLA
defines a result NumPy leaves undefined (integer division by zero, out-of-range
shifts, negative integer powers) the reference spells out XLA's semantics.
"""
from __future__ import annotations

import functools
import warnings

import hypothesis.extra.numpy as hnp
import ml_dtypes
import numpy as np
import pytest
import scipy.special
from hypothesis import assume, given, settings, strategies as st

import xlac
from xlac.ir import CATALOG, ShapeError, TensorType
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.trace import ops
from tests.tolerance import assert_matches

BF16 = dtypes.bfloat16
DTYPES = [np.dtype(d) for d in ("float32", "float64", "int32", "int8", "uint8", "bool", "float16", "complex64")] + [BF16]
FLOATS = [d for d in DTYPES if dtypes.is_float(d)]
HALF = (np.dtype("float16"), BF16)
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5])

TESTED: set[str] = set()


def covers(*names):
    """Record that the decorated test checks these primitives (see test_every_primitive_is_tested)."""
    TESTED.update(names)
    return lambda fn: fn


def run(fn, *args):
    """Compile ``fn`` on ``args`` and return its results as NumPy arrays (a tuple for several)."""
    out = xlac.compile(fn)(*args)
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)


def check(got, expected, *, label, rtol=None):
    """assert_matches, naming the case that failed."""
    try:
        assert_matches(got, expected, rtol=rtol)
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from None


def random_array(rng, shape, dtype, specials=True, scale=3.0):
    """Random values covering ``dtype``'s range: full-range integers, floats with NaN/inf/±0/halves."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.normal(0, scale, shape) + 1j * rng.normal(0, scale, shape)).astype(dtype)
    x = rng.normal(0, scale, shape)
    if specials and x.size:
        mask = rng.random(shape) < 0.2
        x = np.where(mask, rng.choice(SPECIALS, shape), x)
    return np.asarray(x).astype(dtype)


def accepts(prim, *types, **attrs) -> bool:
    try:
        prim.infer_types(*types, **attrs)
        return True
    except ShapeError:
        return False


def wide(dtype):
    """The dtype NumPy computes a reference in: float32 for the half floats."""
    return np.dtype("float32") if dtype in HALF else dtype


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
few_shapes = st.sampled_from([(), (0, 2), (7,), (2, 3, 4)])    # elementwise programs are compiled once per shape
nonempty_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
seeds = st.integers(0, 2**32 - 1)
all_dtypes = st.sampled_from(DTYPES)


# ---------------------------------------------------------------- elementwise


def _erf(x):
    return scipy.special.erf(x)


UNARY_NAMES = [p.name for p in CATALOG.values() if p.category == "unary" and p is not P.is_finite]
BINARY_NAMES = [p.name for p in CATALOG.values() if p.category == "binary" and p is not P.complex_]

UNARY_REFERENCE = {
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "cos": np.cos, "tan": np.tan, "floor": np.floor,
    "ceil": np.ceil, "round": np.rint, "erf": _erf, "not": np.invert, "popcnt": lambda x: np.bitwise_count(x.view(f"u{x.itemsize}")),
    "real": np.real, "imag": np.imag,
}


def unary_reference(name, x):
    out_dtype = CATALOG[name].infer_types(TensorType(x.shape, x.dtype))[0].dtype
    with np.errstate(all="ignore"):
        if name == "sign" and dtypes.is_unsigned_int(x.dtype):
            return (x != 0).astype(x.dtype)
        return np.asarray(UNARY_REFERENCE[name](x.astype(wide(x.dtype)))).astype(out_dtype)


@functools.cache
def unary_program(dtype):
    """Every unary primitive ``dtype`` accepts (and is_finite for real floats), compiled once per shape."""
    names = [n for n in UNARY_NAMES if accepts(CATALOG[n], TensorType((), dtype))]
    extra = (ops.is_finite,) if dtypes.is_float(dtype) else ()
    return names, xlac.compile(lambda a: tuple(ops.bind(CATALOG[n], a) for n in names) + tuple(f(a) for f in extra))


@settings(max_examples=12, deadline=None)
@covers(*UNARY_NAMES, "is_finite")
@given(all_dtypes, few_shapes, seeds)
def test_unary(dtype, shape, seed):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    names, program = unary_program(dtype)
    finite = dtypes.is_float(dtype)
    results = tuple(np.asarray(r) for r in program(x))
    for name, got in zip(names, results):
        expected = unary_reference(name, x)
        rtol = 1e-4 if dtype == np.complex64 else None
        check(got, expected, rtol=rtol, label=name)
    if finite:
        assert_matches(results[-1], np.isfinite(x.astype(wide(dtype))))


def test_unary_semantics_spot_checks():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)
    assert_matches(run(lambda a: ops.round(a), x), np.array([0, 2, 2, -0, -2, -2], np.float32))
    assert_matches(run(lambda a: ops.abs(a), np.array([1 + 1j, -3j], np.complex64)),
                   np.array([np.sqrt(2), 3], np.float32))
    assert_matches(run(lambda a: ops.popcnt(a), np.array([-1, 0, 7], np.int8)), np.array([8, 0, 3], np.int8))


def xla_int_div(a, b):
    """XLA's integer division: truncating; x / 0 is -1 (all ones); MIN / -1 wraps to MIN."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(safe) * np.sign(a64) * np.sign(safe)
    return np.where(b64 == 0, -1, q).astype(a.dtype)


def xla_int_rem(a, b):
    """XLA's integer remainder: the sign of the dividend (C fmod); x % 0 is x."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(safe) * np.sign(a64) * np.sign(safe)
    return np.where(b64 == 0, a64, a64 - q * safe).astype(a.dtype)


def xla_int_pow(a, e):
    """Integer power with wrap-around; negative exponents give 0 except for bases 1 and -1."""
    out = []
    bits = 8 * a.dtype.itemsize
    for base, exp in zip(a.reshape(-1).tolist(), e.reshape(-1).tolist()):
        if exp < 0:
            out.append(1 if base == 1 else (-1) ** exp if base == -1 else 0)
        else:
            out.append(pow(base, exp, 2**bits))
    return np.array(out, np.int64).astype(np.uint64).astype(a.dtype).reshape(a.shape)


def xla_shift(kind, a, s):
    """XLA shifts: amounts are read as unsigned; an amount >= the bit width gives 0 (or the sign fill)."""
    bits = 8 * a.dtype.itemsize
    unsigned, signed = np.dtype(f"uint{bits}"), np.dtype(f"int{bits}")
    amounts = s.view(unsigned).reshape(-1).tolist()
    ubits, sbits = a.view(unsigned).reshape(-1).tolist(), a.view(signed).reshape(-1).tolist()
    out = []
    for u, v, n in zip(ubits, sbits, amounts):
        if kind == "shift_left":
            out.append(0 if n >= bits else (u << n) % 2**bits)
        elif kind == "shift_right_logical":
            out.append(0 if n >= bits else u >> n)
        else:
            out.append((v >> min(n, bits - 1)) % 2**bits)
    return np.array(out, np.uint64).astype(unsigned).view(a.dtype).reshape(a.shape)


def binary_reference(name, x, y, s, e):
    """NumPy's version of binary primitive ``name``; ``s`` are shift amounts, ``e`` integer exponents."""
    if dtypes.is_int(x.dtype):
        if name == "div":
            return xla_int_div(x, y)
        if name == "rem":
            return xla_int_rem(x, y)
        if name == "pow":
            return xla_int_pow(x, e)
        if name.startswith("shift"):
            return xla_shift(name, x, s)
    fns = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "rem": np.fmod,
           "pow": np.power, "max": np.maximum, "min": np.minimum, "atan2": np.arctan2, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}
    with np.errstate(all="ignore"):
        return np.asarray(fns[name](x.astype(wide(x.dtype)), y.astype(wide(x.dtype)))).astype(x.dtype)


COMPARE_REFERENCE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                     "GT": np.greater, "GE": np.greater_equal}


def binary_operands(rng, shape, dtype):
    x, y = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    if dtypes.is_int(dtype) and x.size:          # division by zero and MIN / -1 on purpose
        flat_x, flat_y = x.reshape(-1), y.reshape(-1)
        flat_y[0] = 0
        if dtypes.is_signed_int(dtype) and x.size > 1:
            flat_x[1], flat_y[1] = np.iinfo(dtype).min, -1
    if dtypes.is_float(dtype) and x.size:        # equal operands exercise EQ/LE/GE
        y.reshape(-1)[-1] = x.reshape(-1)[-1]
    bits = 8 * dtype.itemsize
    s = rng.integers(-2, bits + 2, size=shape).astype(dtype) if dtypes.is_int(dtype) else x
    e = x
    if dtypes.is_int(dtype):     # mostly small exponents, some anywhere in the dtype's range
        e = np.where(rng.random(shape) < 0.7, rng.integers(-2, 7, size=shape), random_array(rng, shape, dtype))
        e = e.astype(dtype)
    return x, y, s, e


@functools.cache
def binary_program(dtype):
    """Every binary primitive ``dtype`` accepts, then compare in every direction; shifts take their amounts
    and integer pow its exponents from the third and fourth arguments."""
    t = TensorType((), dtype)
    names = [n for n in BINARY_NAMES if accepts(CATALOG[n], t, t)]

    def program(a, b, shift, exponent):
        second = {"pow": exponent} if dtypes.is_int(dtype) else {}
        if dtypes.is_int(dtype):
            second.update({n: shift for n in names if n.startswith("shift")})
        binaries = tuple(ops.bind(CATALOG[n], a, second.get(n, b)) for n in names)
        return binaries + tuple(ops.compare(a, b, d) for d in COMPARE_REFERENCE)
    return names, xlac.compile(program)


@settings(max_examples=12, deadline=None)
@covers(*BINARY_NAMES, "compare")
@given(all_dtypes, few_shapes, seeds)
def test_binary_and_compare(dtype, shape, seed):
    x, y, s, e = binary_operands(np.random.default_rng(seed), shape, dtype)
    names, program = binary_program(dtype)
    results = tuple(np.asarray(r) for r in program(x, y, s, e))
    for name, got in zip(names, results):
        rtol = 1e-4 if dtype == np.complex64 and name in ("pow", "div") else None
        check(got, binary_reference(name, x, y, s, e), rtol=rtol, label=name)
    for direction, got in zip(COMPARE_REFERENCE, results[len(names):]):
        check(got, COMPARE_REFERENCE[direction](x, y), label=direction)


def test_binary_semantics_spot_checks():
    i8 = np.int8
    assert_matches(run(lambda a, b: ops.rem(a, b), np.array([-7.5, 7.5], np.float32),
                       np.array([2.0, -2.0], np.float32)), np.array([-1.5, 1.5], np.float32))
    assert_matches(run(lambda a, b: ops.shift_right_arithmetic(a, b), np.array([-8, -8, 8], i8),
                       np.array([1, 9, 9], i8)), np.array([-4, -1, 0], i8))
    assert_matches(run(lambda a, b: ops.pow(a, b), np.array([2.0, -2.0], np.float64),
                       np.array([0.5, 3.0])), np.array([np.sqrt(2), -8.0]))
    assert_matches(run(lambda a, b: ops.compare(a, b, "LT"), np.array([1 + 5j, 1 + 1j, 2j], np.complex64),
                       np.array([1 + 6j, 1 + 1j, 1 + 0j], np.complex64)), np.array([True, False, True]))


@settings(max_examples=12, deadline=None)
@covers("select", "clamp")
@given(all_dtypes, shapes, seeds, st.booleans())
def test_select_and_clamp(dtype, shape, seed, scalar_pred):
    rng = np.random.default_rng(seed)
    pred = rng.random(() if scalar_pred else shape) < 0.5
    a, b = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    selected = run(lambda p, x, y: ops.select(p, x, y), pred, a, b)
    assert_matches(selected, np.where(pred, a, b))
    if dtype == np.complex64 or dtype == np.bool_:
        return
    lo, hi = np.sort(random_array(rng, (2,), dtype, specials=False))
    clamped = run(lambda l, x, h: ops.clamp(l, x, h), lo, a, hi)
    assert_matches(clamped, np.asarray(np.minimum(np.maximum(a, lo), hi)))


@covers("store", "copy")
def test_store_and_copy_are_functionalized_away():
    def f(x, v):
        y = x.copy()                 # copy: a new array with x's values
        x[1] = v                     # store: x's memory now holds x with element 1 replaced
        return y
    x = np.arange(3.0)
    traced = xlac.compile(f).trace(x, 7.0)
    assert {"store", "copy"} <= {n.primitive.name for n in traced.ir("traced").nodes}
    assert not {"store", "copy"} & {n.primitive.name for n in traced.ir("final").nodes}
    assert_matches(run(f, x, 7.0), np.arange(3.0))
    assert_matches(x, np.array([0.0, 7.0, 2.0]))


@settings(max_examples=12, deadline=None)
@covers("complex")
@given(st.sampled_from([np.dtype("float32"), np.dtype("float64")]), shapes, seeds)
def test_complex_combines_real_and_imaginary_parts(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    re, im = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    got = run(lambda a, b: ops.complex(a, b), re, im)
    expected = np.zeros(shape, np.result_type(dtype, np.complex64))
    expected.real, expected.imag = re, im
    assert_matches(got, expected)


# ---------------------------------------------------------------- conversions


def convert_defined(x, dst):
    """Where NumPy's cast of ``x`` to ``dst`` is defined (float -> int must be finite and in range)."""
    if not (dtypes.is_int(dst) and dtypes.is_inexact(x.dtype)):
        return np.ones(x.shape, bool)
    with np.errstate(all="ignore"):
        t = np.trunc(np.real(x).astype(np.float64))
    info = np.iinfo(dst)
    return np.isfinite(t) & (t >= info.min) & (t <= info.max)


CONVERT_ALL = xlac.compile(lambda a: tuple(ops.convert(a, d) for d in DTYPES))


@settings(max_examples=12, deadline=None)
@covers("convert")
@given(all_dtypes, few_shapes, seeds)
def test_convert(src, shape, seed):
    x = random_array(np.random.default_rng(seed), shape, src, scale=60.0)
    results = tuple(np.asarray(r) for r in CONVERT_ALL(x))
    for dst, got in zip(DTYPES, results):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = (x != 0) if dst == np.bool_ else x.astype(dst)
        defined = convert_defined(x, dst)
        assert got.dtype == dst and got.shape == x.shape, (src, dst)
        check(got[defined], expected[defined], label=(src, dst))


def test_convert_spot_checks():
    f = np.array([-1.7, -0.5, 0.5, 2.9], np.float32)
    assert_matches(run(lambda a: ops.convert(a, np.int32), f), np.array([-1, 0, 0, 2], np.int32))
    assert_matches(run(lambda a: ops.convert(a, np.bool_), np.array([0j, 1j, 1], np.complex64)),
                   np.array([False, True, True]))
    assert_matches(run(lambda a: ops.convert(a, BF16), np.array([1.0, 3.0e38, np.nan], np.float32)),
                   np.array([1.0, 3.0e38, np.nan], np.float32).astype(BF16))


BITCAST_PAIRS = [("float32", "int32"), ("int32", "float32"), ("float16", "bfloat16"), ("int8", "uint8"),
                 ("float64", "float32"), ("float32", "uint8"), ("float64", "int32"), ("float16", "int8"),
                 ("uint8", "float32"), ("float16", "float32"), ("int32", "float64"), ("bfloat16", "int8")]


@settings(max_examples=12, deadline=None)
@covers("bitcast_convert")
@given(st.sampled_from(BITCAST_PAIRS), shapes, seeds)
def test_bitcast_convert(pair, shape, seed):
    src, dst = (dtypes.canonical(d) for d in pair)
    ratio = dst.itemsize // src.itemsize
    if ratio > 1:
        shape = shape + (ratio,)
    x = random_array(np.random.default_rng(seed), shape, src)
    got = run(lambda a: ops.bitcast_convert(a, dst), x)
    viewed = x.reshape(-1).view(dst)
    if src.itemsize > dst.itemsize:
        expected_shape = shape + (src.itemsize // dst.itemsize,)
    elif ratio > 1:
        expected_shape = shape[:-1]
    else:
        expected_shape = shape
    expected = viewed.reshape(expected_shape)
    bits = np.dtype(f"uint{8 * dst.itemsize}")
    assert got.dtype == dst and got.shape == expected.shape
    np.testing.assert_array_equal(got.view(bits), expected.view(bits))


# ---------------------------------------------------------------- data movement


@covers("broadcast_in_dim", "reshape", "transpose", "reverse")
@given(all_dtypes, shapes, seeds, st.data())
def test_shape_ops(dtype, shape, seed, data):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    ndim = len(shape)
    new_axes = data.draw(st.lists(st.integers(1, 3), max_size=2))
    out_shape = tuple(new_axes) + tuple(d if d != 1 else data.draw(st.integers(1, 3)) for d in shape)
    dims = tuple(range(len(new_axes), len(out_shape)))
    perm = tuple(data.draw(st.permutations(range(ndim))))
    flipped = tuple(sorted(data.draw(st.sets(st.integers(0, max(ndim - 1, 0)), max_size=ndim)))) if ndim else ()
    new_shape = (x.size,) if ndim != 1 else (1, x.size)
    results = run(lambda a: (ops.broadcast_in_dim(a, out_shape, dims), ops.reshape(a, new_shape),
                             ops.transpose(a, perm), ops.reverse(a, flipped)), x)
    assert_matches(results[0], np.broadcast_to(x, out_shape))
    assert_matches(results[1], x.reshape(new_shape))
    assert_matches(results[2], np.transpose(x, perm))
    assert_matches(results[3], np.flip(x, flipped) if flipped else x)


@covers("slice")
@given(all_dtypes, nonempty_shapes, seeds, st.data())
def test_slice(dtype, shape, seed, data):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    start, limit, strides = [], [], []
    for d in shape:
        lo = data.draw(st.integers(0, d))
        start.append(lo)
        limit.append(data.draw(st.integers(lo, d)))
        strides.append(data.draw(st.integers(1, 3)))
    got = run(lambda a: ops.slice(a, start, limit, strides), x)
    assert_matches(got, x[tuple(slice(*t) for t in zip(start, limit, strides))])


@covers("dynamic_slice", "dynamic_update_slice")
@given(all_dtypes, nonempty_shapes, seeds, st.data())
def test_dynamic_slice_clamps_starts(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype)
    sizes = [data.draw(st.integers(0, d)) for d in shape]
    starts = [np.int32(data.draw(st.integers(-3, d + 3))) for d in shape]   # out of range on purpose
    update = random_array(rng, tuple(sizes), dtype)
    sliced, updated = run(lambda a, u, *s: (ops.dynamic_slice(a, s, sizes), ops.dynamic_update_slice(a, u, s)),
                          x, update, *starts)
    clamped = [int(np.clip(s, 0, d - n)) for s, d, n in zip(starts, shape, sizes)]
    window = tuple(slice(c, c + n) for c, n in zip(clamped, sizes))
    assert_matches(sliced, x[window])
    expected = x.copy()
    expected[window] = update
    assert_matches(updated, expected)


@settings(max_examples=12, deadline=None)
@covers("gather")
@given(all_dtypes, nonempty_shapes, seeds)
def test_gather(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype)
    rows = rng.integers(0, shape[0], size=(3, 1)).astype(np.int32)
    points = np.stack([rng.integers(0, d, size=4) for d in shape], axis=-1).astype(np.int32)
    ndim = len(shape)

    def program(a, r, p):
        take = ops.gather(a, r, offset_dims=tuple(range(1, ndim)), collapsed_slice_dims=(0,), start_index_map=(0,),
                          slice_sizes=(1,) + shape[1:])
        point = ops.gather(a, p, offset_dims=(), collapsed_slice_dims=tuple(range(ndim)),
                           start_index_map=tuple(range(ndim)), slice_sizes=(1,) * ndim)
        return take, point
    take, point = run(program, x, rows, points)
    assert_matches(take, np.take(x, rows[:, 0], axis=0))
    assert_matches(point, x[tuple(points.T)])


SCATTER_REFERENCE = {"add": (np.add, np.logical_or), "mul": (np.multiply, np.logical_and),
                     "max": (np.maximum, np.logical_or), "min": (np.minimum, np.logical_and)}


@settings(max_examples=12, deadline=None)
@covers("scatter")
@given(all_dtypes, nonempty_shapes, seeds, st.sampled_from(P.SCATTER_MODES))
def test_scatter(dtype, shape, seed, mode):
    assume(not (dtype == np.complex64 and mode in ("max", "min")))
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype, specials=False)
    n = shape[0] if mode == "set" else 5
    rows = (rng.permutation(shape[0])[:n] if mode == "set" else rng.integers(0, shape[0], n)).astype(np.int32)
    updates = random_array(rng, (len(rows),) + shape[1:], dtype, specials=False)
    got = run(lambda a, i, u: ops.scatter(
        a, i, u, update_window_dims=tuple(range(1, len(shape))), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,), mode=mode), x, rows[:, None], updates)
    expected = x.copy()
    with np.errstate(all="ignore"):
        if mode == "set":
            expected[rows] = updates
        else:
            ufunc = SCATTER_REFERENCE[mode][dtype == np.bool_]
            wide_expected = expected.astype(wide(dtype))
            ufunc.at(wide_expected, rows, updates.astype(wide(dtype)))
            expected = wide_expected.astype(dtype)
    rtol = 1e-2 if mode == "mul" and dtype in HALF else None   # the order of products differs
    assert_matches(got, expected, rtol=rtol)


@covers("concatenate")
@given(all_dtypes, nonempty_shapes, seeds, st.data())
def test_concatenate(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = []
    for _ in range(data.draw(st.integers(2, 3))):
        part_shape = list(shape)
        part_shape[axis] = data.draw(st.integers(0, 3))
        parts.append(random_array(rng, tuple(part_shape), dtype))
    got = run(lambda *xs: ops.concatenate(xs, axis), *parts)
    assert_matches(got, np.concatenate(parts, axis=axis))


def _fill(shape, axis, size, value, dtype):
    shape = list(shape)
    shape[axis] = size
    return np.full(shape, value, dtype)


def pad_reference(x, value, low, high, interior):
    """stablehlo.pad one axis at a time: interior spread, then low/high padding (negative crops)."""
    for axis, (lo, hi, inner) in enumerate(zip(low, high, interior)):
        d = x.shape[axis]
        spread = _fill(x.shape, axis, d + max(d - 1, 0) * inner, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, inner + 1)
        spread[tuple(index)] = x
        x = np.concatenate([_fill(x.shape, axis, max(lo, 0), value, x.dtype), spread,
                            _fill(x.shape, axis, max(hi, 0), value, x.dtype)], axis=axis)
        index[axis] = slice(-min(lo, 0), x.shape[axis] + min(hi, 0))
        x = x[tuple(index)]
    return x


@covers("pad")
@given(all_dtypes, shapes, seeds, st.data())
def test_pad(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype)
    value = random_array(rng, (), dtype, specials=False)
    low, high, interior = [], [], []
    for d in shape:
        inner = data.draw(st.integers(0, 2))
        size = d + max(d - 1, 0) * inner
        lo = data.draw(st.integers(-size, 2))
        hi = data.draw(st.integers(-(size + lo) if lo < 0 else -size, 2))
        low.append(lo), high.append(hi), interior.append(inner)
    assume(all(d + max(d - 1, 0) * i + lo + hi >= 0 for d, lo, hi, i in zip(shape, low, high, interior)))
    got = run(lambda a, v: ops.pad(a, v, low, high, interior), x, value)
    assert_matches(got, pad_reference(x, value, low, high, interior))


@covers("iota")
@given(st.sampled_from([d for d in DTYPES if d != np.bool_]), nonempty_shapes, st.data())
def test_iota(dtype, shape, data):
    dimension = data.draw(st.integers(0, len(shape) - 1))
    got = run(lambda: ops.iota(shape, dtype, dimension))
    line = np.arange(shape[dimension]).astype(dtype).reshape((-1,) + (1,) * (len(shape) - 1 - dimension))
    assert_matches(got, np.broadcast_to(line, shape))


CONSTANT_VALUES = [np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 2.0**-20]), np.array([[True, False]]),
                   np.array([-128, 0, 127]), np.array([1 + 2j, np.nan, -3j]), np.array([255, 0, 7])]


@covers("constant")
@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(d) for d in ("int64", "uint64", "complex128", "int16")], ids=str)
def test_constant(dtype):
    cases = []
    for raw in CONSTANT_VALUES:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if np.issubdtype(raw.dtype, np.complexfloating) and not np.issubdtype(dtype, np.complexfloating):
                continue
            if dtypes.is_int(dtype) and raw.dtype.kind == "f":
                continue
            value = raw.astype(dtype)
        cases += [value, np.full((2, 3), value.reshape(-1)[0]), value.reshape(-1)[0]]   # non-splat, splat, 0-d
    cases.append(np.zeros((0, 2), dtype))
    results = run(lambda: tuple(ops.constant(v) for v in cases))
    for value, got in zip(cases, results):
        assert got.dtype == value.dtype and got.shape == value.shape
        assert got.tobytes() == value.tobytes(), (value, got)


# ---------------------------------------------------------------- reductions, contractions, sort

REDUCE_REFERENCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
                    "and": np.bitwise_and.reduce, "or": np.bitwise_or.reduce}
BOOL_REDUCE = {"sum": np.any, "prod": np.all, "max": np.any, "min": np.all, "and": np.all, "or": np.any}


def reduce_reference(op, x, axes):
    if x.dtype == np.bool_:
        return BOOL_REDUCE[op](x, axis=axes)
    if op in ("and", "or"):
        return REDUCE_REFERENCE[op](x, axis=axes) if axes else x
    if op in ("max", "min") and x.size == 0:
        kept = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return np.full(kept, _empty_identity(op, x.dtype), x.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(REDUCE_REFERENCE[op](x.astype(wide(x.dtype)), axis=axes)).astype(x.dtype)


def _empty_identity(op, dtype):
    lowest = op == "max"
    if dtypes.is_int(dtype):
        return np.iinfo(dtype).min if lowest else np.iinfo(dtype).max
    return -np.inf if lowest else np.inf


@covers("reduce")
@given(all_dtypes, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), seeds, st.data())
def test_reduce(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype, scale=1.0)
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    t = TensorType(shape, dtype)
    op_names = [op for op in P.REDUCE_OPS if accepts(P.reduce, t, op=op, axes=axes)
                and not (dtype == np.complex64 and op in ("max", "min"))]
    results = run(lambda a: tuple(ops.reduce(a, op, axes) for op in op_names), x)
    for op, got in zip(op_names, results):
        rtol = 1e-2 if dtype in HALF and op in ("sum", "prod") else None
        check(got, reduce_reference(op, x, axes), rtol=rtol, label=op)


@settings(max_examples=12, deadline=None)
@covers("cumulative")
@given(all_dtypes, nonempty_shapes, seeds, st.booleans(), st.data())
def test_cumulative(dtype, shape, seed, reverse, data):
    t = TensorType(shape, dtype)
    axis = data.draw(st.integers(0, len(shape) - 1))
    op_names = [op for op in P.REDUCE_OPS if accepts(P.cumulative, t, op=op, axis=axis, reverse=reverse)]
    x = random_array(np.random.default_rng(seed), shape, dtype, scale=1.0)
    results = run(lambda a: tuple(ops.cumulative(a, op, axis, reverse) for op in op_names), x)
    flip = (lambda a: np.flip(a, axis)) if reverse else (lambda a: a)
    for op, got in zip(op_names, results):
        if op in ("sum", "prod") and dtypes.is_inexact(dtype):
            _check_rounded_scan(got, x, op, axis, flip)
        else:
            check(got, flip(_SCAN_REFERENCE[op](flip(x), axis, dtype=dtype)), label=f"{op}: exact, wraps like NumPy")


_SCAN_REFERENCE = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
                   "min": np.minimum.accumulate, "and": np.bitwise_and.accumulate, "or": np.bitwise_or.accumulate}


def _check_rounded_scan(got, x, op, axis, flip):
    """Any order of additions or multiplications: NaN and the infinities where the sequential scan has
    them, elsewhere within n ulps (gamma_n <= n eps for n eps < 1) of the prefix sum of |x| (of the
    product itself)."""
    wide = x.astype(np.complex128 if np.issubdtype(x.dtype, np.complexfloating) else np.float64)
    exact = flip(_SCAN_REFERENCE[op](flip(wide), axis))
    scale = flip(np.cumsum(flip(np.abs(wide)), axis)) if op == "sum" else np.abs(exact)
    bound = x.shape[axis] * float(ml_dtypes.finfo(x.dtype).eps) * scale
    finite = np.isfinite(exact)
    got = got.astype(exact.dtype)
    np.testing.assert_array_equal(got[~finite], exact[~finite])
    assert np.all(np.abs(got[finite] - exact[finite]) <= bound[finite]), op


@covers("argmax", "argmin")
@given(all_dtypes, nonempty_shapes, seeds, st.data())
def test_argmax_argmin_first_index(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    pool = random_array(rng, (3,), dtype)        # few distinct values: ties; NaN/inf among them for floats
    x = rng.choice(pool, shape)
    axis = data.draw(st.integers(0, len(shape) - 1))
    top, bottom = run(lambda a: (ops.argmax(a, axis, np.int32), ops.argmin(a, axis, np.int32)), x)
    assert_matches(top, np.argmax(x, axis=axis).astype(np.int32))
    assert_matches(bottom, np.argmin(x, axis=axis).astype(np.int32))


PREFERRED = {np.dtype("int8"): np.dtype("int32"), BF16: np.dtype("float32"), np.dtype("float16"): np.dtype("float32")}


@settings(max_examples=12, deadline=None)
@covers("dot_general")
@given(all_dtypes, st.data(), seeds, st.booleans())
def test_dot_general(dtype, data, seed, use_preferred):
    rng = np.random.default_rng(seed)
    sizes = st.integers(1, 3)
    batch = data.draw(st.lists(sizes, max_size=2))
    contract = data.draw(st.lists(sizes, max_size=2))
    free_l, free_r = data.draw(st.lists(sizes, max_size=2)), data.draw(st.lists(sizes, max_size=1))
    letters = iter("abcdefghij")
    b_l, c_l, l_l, r_l = ([next(letters) for _ in group] for group in (batch, contract, free_l, free_r))
    lhs_labels = data.draw(st.permutations(b_l + l_l + c_l))
    rhs_labels = data.draw(st.permutations(c_l + b_l + r_l))
    size_of = dict(zip(b_l + c_l + l_l + r_l, batch + contract + free_l + free_r))
    small = lambda labels: rng.integers(-3, 4, [size_of[c] for c in labels])   # exact in every dtype
    lhs, rhs = (small(labels).astype(dtype) if dtype != np.bool_ else small(labels) > 0
                for labels in (lhs_labels, rhs_labels))
    preferred = PREFERRED.get(dtype) if use_preferred else None
    contracting = ([lhs_labels.index(c) for c in c_l], [rhs_labels.index(c) for c in c_l])
    batch_dims = ([lhs_labels.index(c) for c in b_l], [rhs_labels.index(c) for c in b_l])
    got = run(lambda a, b: ops.dot_general(a, b, contracting, batch_dims, preferred_dtype=preferred), lhs, rhs)
    out_labels = b_l + [c for c in lhs_labels if c in l_l] + [c for c in rhs_labels if c in r_l]
    spec = f"{''.join(lhs_labels)},{''.join(rhs_labels)}->{''.join(out_labels)}"
    compute = np.int64 if dtypes.is_int(dtype) else (np.complex128 if dtype == np.complex64 else np.float64)
    expected = np.einsum(spec, lhs, rhs) if dtype == np.bool_ else np.einsum(spec, lhs.astype(compute), rhs.astype(compute))
    assert_matches(got, np.asarray(expected).astype(preferred or dtype))


@covers("sort")
@given(st.sampled_from([d for d in DTYPES if d != np.complex64]), nonempty_shapes, seeds, st.data())
def test_sort_multiple_operands_stable_nan_last(dtype, shape, seed, data):
    rng = np.random.default_rng(seed)
    pool = random_array(rng, (3,), dtype)
    keys = rng.choice(pool, shape)
    second = rng.integers(0, 2, shape).astype(np.int8)
    payload = np.arange(keys.size, dtype=np.int32).reshape(shape)
    dimension = data.draw(st.integers(0, len(shape) - 1))
    num_keys = data.draw(st.integers(1, 2))
    got = run(lambda k, s, p: ops.sort([k, s, p], dimension, num_keys=num_keys), keys, second, payload)
    moved = [np.moveaxis(a, dimension, -1) for a in (keys, second, payload)]
    order_keys = [moved[0]] if num_keys == 1 else [moved[1], moved[0]]   # lexsort: last key is primary
    order = np.lexsort(order_keys, axis=-1)
    for got_one, original in zip(got, moved):
        assert_matches(got_one, np.moveaxis(np.take_along_axis(original, order, -1), -1, dimension))


def test_sort_complex_is_lexicographic():
    x = np.array([2 + 0j, 1 + 2j, 1 - 1j, -3j], np.complex64)
    (got,) = run(lambda a: ops.sort([a], 0), x)
    assert_matches(got, np.sort(x))


# ---------------------------------------------------------------- type-rule errors

F32 = np.float32


@pytest.mark.parametrize("fn, args, match", [
    (lambda x, y: ops.add(x, y), (np.ones(2, F32), np.ones(3, F32)), r"add expects .*f32\[2\] and f32\[3\]"),
    (lambda x: ops.reshape(x, (4, 2)), (np.ones((2, 3), F32),), r"reshape: cannot reshape f32\[2,3\].*\(4, 2\)"),
    (lambda x: ops.transpose(x, (0, 0)), (np.ones((2, 3), F32),), r"transpose: \(0, 0\) is not a permutation .*f32\[2,3\]"),
    (lambda x: ops.exp(x), (np.ones(2, np.int32),), r"exp expects float operands, got i32\[2\]"),
    (lambda x: ops.rem(x, x), (np.ones(2, np.complex64),), r"rem expects real number operands, got c64\[2\]"),
    (lambda x: ops.bitcast_convert(x, np.int8), (np.ones(2, bool),), r"bitcast_convert from bool\[2\]"),
    (lambda: ops.iota((3,), np.bool_, 0), (), r"iota: expects a numeric dtype, got bool"),
    (lambda x: ops.slice(x, (0,), (5,)), (np.ones(3, F32),), r"slice: \[0:5:1\] is out of range .*f32\[3\]"),
    (lambda x, y: ops.dot_general(x, y, ((1,), (0,))), (np.ones((2, 3), F32), np.ones((4, 2), F32)),
     r"dot_general: size 3 .*f32\[2,3\].* size 4 .*f32\[4,2\]"),
    (lambda x: ops.broadcast_in_dim(x, (2, 4), (1,)), (np.ones(3, F32),), r"broadcast_in_dim: cannot broadcast f32\[3\]"),
    (lambda x, y: ops.concatenate([x, y], 0), (np.ones((2, 3), F32), np.ones((2, 4), F32)), r"concatenate: operands f32\[2,3\], f32\[2,4\]"),
    (lambda x: ops.reduce(x, "and", (0,)), (np.ones(2, F32),), r"reduce_and expects int or bool operands, got f32\[2\]"),
])
def test_type_rule_errors_name_primitive_and_shapes(fn, args, match):
    with pytest.raises(ShapeError, match=match):
        xlac.compile(fn)(*args)
    assert ShapeError is xlac.ShapeError


def test_every_primitive_is_tested():
    import importlib
    import pathlib
    for path in sorted(pathlib.Path(__file__).parent.glob("test_primitives_*.py")):   # their own @covers
        importlib.import_module(f"tests.ir.{path.stem}")
    assert TESTED == set(CATALOG), f"untested: {set(CATALOG) - TESTED}; unknown: {TESTED - set(CATALOG)}"


@covers("stop_gradient")
def test_stop_gradient_is_an_identity_when_run():
    x = np.array([1.5, -2.0, 3.0], np.float32)
    assert_matches(run(lambda a: ops.bind(P.stop_gradient, a), x), x)
    assert_matches(run(lambda a: ops.bind(P.stop_gradient, a), np.arange(3)), np.arange(3))


@covers("sharding_constraint")
def test_sharding_constraint_is_an_identity_on_values_gradients_and_batches():
    """On a mesh of this process's one device (tests/test_sharding.py runs 8 in a child process)."""
    from xlac.sharding import NamedSharding, PartitionSpec, make_mesh
    rows = NamedSharding(make_mesh((1,), ("x",)), PartitionSpec("x"))
    x = np.arange(6.0).reshape(2, 3)
    assert_matches(run(lambda a: ops.sharding_constraint(a, rows) * 2, x), x * 2)
    grad = xlac.grad(lambda a: (ops.sharding_constraint(a, rows) ** 2).sum())
    assert_matches(run(grad, x), 2 * x)
    batched = xlac.vmap(lambda a: ops.sharding_constraint(a, rows) + 1, in_axes=1)
    assert_matches(run(batched, x), x.T + 1)                  # vmap stacks the batch axis first


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint32, np.int64])
def test_integer_division_by_constant_zero_and_overflow_keep_xla_semantics(dtype):
    """XLA's constant folder traps on x / 0 and MIN / -1; the emitter guards them (the process used to die)."""
    info = np.iinfo(dtype)
    x = np.array([5, info.min, 7], dtype)
    y = np.array([0, -1 if info.min < 0 else 1, 2], dtype)
    q, r = run(lambda: (ops.div(ops.constant(x), ops.constant(y)),
                        ops.rem(ops.constant(x), ops.constant(y))))
    all_ones = np.array(-1).astype(dtype)
    np.testing.assert_array_equal(q, [all_ones, info.min if info.min < 0 else info.min, 3])
    np.testing.assert_array_equal(r, [5, 0, 1])
