"""Differential tests of the ufuncs beyond arithmetic and comparison (inverse hyperbolics, float bits,
integer gcd/lcm, multi-output and generalized ufuncs) against the NumPy function of the same name.

Values and dtypes must match NumPy's; the bit-level functions (nextafter, spacing, frexp, ldexp,
copysign, ...) must match bit for bit on subnormals, signed zeros and the extremes, where XLA's CPU,
which flushes subnormal floats to zero in arithmetic, would otherwise differ.
"""
from __future__ import annotations

import functools
import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
import xlac.numpy as xnp
from xlac.ir import dtypes
from tests.numpy.test_ufuncs import check, is_python_scalar_kind, numpy_accepts, random_scalar, sample
from tests.tolerance import assert_matches

UNARY = ["arcsinh", "arccosh", "arctanh", "deg2rad", "radians", "rad2deg", "degrees", "fabs", "trunc", "signbit",
         "spacing", "bitwise_count", "modf", "frexp"]
SAME_AS = {"radians": "deg2rad", "degrees": "rad2deg"}     # one function under two names: compiled once
BINARY = ["hypot", "logaddexp", "logaddexp2", "heaviside", "float_power", "copysign", "nextafter", "ldexp", "divmod"]
INTEGER = ["gcd", "lcm"]
GUFUNCS = ["matvec", "vecmat"]
REFUSED = ["isnat"]
ALIASES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh",
           "asinh": "arcsinh", "atanh": "arctanh", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "pow": "power"}
EXTRA = UNARY + BINARY + INTEGER + GUFUNCS + REFUSED + list(ALIASES)

BF16 = dtypes.bfloat16
INTS = [np.dtype(d) for d in ("int8", "uint8", "int16", "int32", "int64", "uint64")]
FLOATS = [np.dtype(d) for d in ("float16", "float32", "float64")]
DTYPES = [np.dtype("bool")] + INTS + FLOATS
PY_SCALARS = [int, float, bool]


def quiet(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def values(rng, shape, dtype):
    """Integers small and full-range; floats over many magnitudes (none subnormal: XLA's CPU flushes
    those in arithmetic), in [-1.5, 1.5] for the inverse hyperbolics' domains, and the special values."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -9), min(info.max, 9), size=shape, endpoint=True, dtype=dtype)
        full = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
        return np.where(rng.random(shape) < 0.6, small, full)
    info = np.finfo(dtype)
    wide = rng.choice([-1, 1], shape) * np.exp(rng.uniform(np.log(info.tiny) / 2, np.log(info.max) / 2, shape))
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, info.max, -info.max, info.tiny])
    x = np.select([rng.random(shape) < 0.3, rng.random(shape) < 0.4, rng.random(shape) < 0.3],
                  [rng.uniform(-1.5, 1.5, shape), wide, rng.choice(specials, shape)], rng.normal(0, 3, shape))
    return np.asarray(x).astype(dtype)


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def check_all(name, got, expected, label):
    for k, (g, e) in enumerate(zip(as_tuple(got), as_tuple(expected))):
        check(g, e, label=f"{name}[{k}]({label})")


# ---------------------------------------------------------------- unary


@functools.cache
def unary_program(dtype):
    names = UNARY + (["conjugate"] if dtype != np.bool_ else [])   # in xlac.numpy.dtypes; bool: a deviation
    accepted = [n for n in names if numpy_accepts(n, sample(dtype)) and n not in SAME_AS]
    for name in set(names) - set(accepted) - set(SAME_AS):
        with pytest.raises(TypeError, match=name):
            xlac.compile(getattr(xnp, name))(np.ones(2, dtype))
    return accepted, xlac.compile(lambda a: tuple(getattr(xnp, n)(a) for n in accepted))


@settings(max_examples=5)
@given(st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_unary_ufuncs_match_numpy(dtype, seed):
    x = values(np.random.default_rng(seed), (24,), dtype)
    names, program = unary_program(dtype)
    for name, got in zip(names, program(x)):
        check_all(name, got, quiet(getattr(np, name), x), f"{dtype}")
    x0 = values(np.random.default_rng(seed), (), dtype)
    for name in SAME_AS:        # eager, on a 0-d array
        check_all(name, getattr(xnp, name)(x0), quiet(getattr(np, name), x0), f"{dtype}")


# ---------------------------------------------------------------- binary


@functools.cache
def binary_program(kind1, kind2):
    names = BINARY + INTEGER
    accepted = [n for n in names if numpy_accepts(n, sample(kind1), sample(kind2))]
    for name in sorted(set(names) - set(accepted)):
        with pytest.raises(TypeError, match=name):
            xlac.compile(getattr(xnp, name))(sample(kind1), sample(kind2))
    computed = [n for n in accepted if n not in INTEGER]       # gcd and lcm: their own test (long programs)
    return computed, xlac.compile(lambda a, b: tuple(getattr(xnp, n)(a, b) for n in computed))


@settings(max_examples=5)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES + PY_SCALARS), st.integers(0, 2**32 - 1))
def test_binary_ufuncs_match_numpy(dtype, kind, seed):
    rng = np.random.default_rng(seed)
    x = values(rng, (3, 1), dtype)
    y = random_scalar(rng, kind, dtype) if is_python_scalar_kind(kind) else values(rng, (4,), kind)
    names, program = binary_program(dtype, kind)
    for name, got in zip(names, program(x, y)):
        check_all(name, got, quiet(getattr(np, name), x, y), f"{dtype}, {kind!r}")


# ---------------------------------------------------------------- gcd, lcm


def integer_extremes(dtype):
    info = np.iinfo(dtype)
    edge = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 6, 12, 35, 64, 255 % (info.max + 1)]
    if info.min < 0:
        edge += [-1, -2, -6, -64]
    return np.array(edge, dtype)


@functools.cache
def gcd_program(dtype):
    return xlac.compile(lambda a, b: (xnp.gcd(a, b), xnp.lcm(a, b), xnp.bitwise_count(a)))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_gcd_lcm_are_exact_on_every_pair_of_extremes(dtype):
    edge = integer_extremes(dtype)
    x, y = (np.array(v, dtype) for v in zip(*itertools.product(edge, edge)))
    for name, got in zip(("gcd", "lcm", "bitwise_count"), gcd_program(dtype)(x, y)):
        expected = quiet(getattr(np, name), x, y) if name != "bitwise_count" else np.bitwise_count(x)
        check(got, expected, label=f"{name}({dtype})")


@settings(max_examples=10)
@given(st.sampled_from(INTS), st.integers(0, 2**32 - 1))
def test_gcd_lcm_of_random_integers(dtype, seed):
    rng = np.random.default_rng(seed)
    n = len(integer_extremes(dtype)) ** 2
    x, y = values(rng, (n,), dtype), values(rng, (n,), dtype)
    for name, got in zip(("gcd", "lcm"), gcd_program(dtype)(x, y)):
        check(got, quiet(getattr(np, name), x, y), label=f"{name}({dtype})")


def test_gcd_eager_with_python_scalar_and_errors():
    check(xnp.gcd(np.array([12, -18, 0], np.int16), 8), np.gcd(np.array([12, -18, 0], np.int16), 8), label="gcd")
    check(xnp.lcm(np.int8(4), np.array([6, -6], np.int8)), np.lcm(np.int8(4), np.array([6, -6], np.int8)),
          label="lcm")
    with pytest.raises(TypeError, match="ufunc 'gcd' not supported for the input types"):
        xnp.gcd(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="ufunc 'lcm' not supported for the input types"):
        xlac.compile(xnp.lcm)(np.ones(2, np.int8), np.ones(2, np.uint64))
    with pytest.raises(TypeError, match="ufunc 'gcd' not supported"):
        xnp.gcd(np.array([True]), np.array([False]))


# ---------------------------------------------------------------- bit-exact functions


def float_specials(dtype):
    info = ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)
    tiny_sub, tiny = info.smallest_subnormal, info.smallest_normal
    positive = [0.0, tiny_sub, 2 * tiny_sub, tiny - tiny_sub, tiny, 2 * tiny, 0.5, 1.0, 1.5, 2.0, 3.0,
                info.max / 2, info.max, np.inf, np.nan]
    return np.array(positive + [-v for v in positive], dtype)


def same_bits(got, expected, label):
    """Equal dtypes and bits, with any NaN equal to any NaN (their payloads may differ)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    if got.dtype.kind not in "fV" and got.dtype != BF16:
        np.testing.assert_array_equal(got, expected, err_msg=label)
        return
    uint = np.dtype(f"uint{got.dtype.itemsize * 8}")
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    differ = (got.view(uint) != expected.view(uint)) & ~both_nan
    assert not differ.any(), f"{label}: at {np.flatnonzero(differ)}: got {got[differ]} expected {expected[differ]}"


@pytest.mark.parametrize("dtype", FLOATS + [BF16], ids=str)
def test_bit_level_unary_functions_are_exact_on_special_values(dtype):
    x = float_specials(dtype)
    got = xlac.compile(lambda a: (xnp.spacing(a), xnp.frexp(a), xnp.signbit(a), xnp.modf(a), xnp.trunc(a),
                                  xnp.fabs(a), xnp.arcsinh(a)))(x)
    with np.errstate(all="ignore"):
        expected = (np.spacing(x), np.frexp(x), np.signbit(x), np.modf(x), np.trunc(x), np.fabs(x))
    for name, g, e in zip(["spacing", "frexp", "signbit", "modf", "trunc", "fabs"], got, expected):
        if dtype == BF16 and name == "spacing":     # ml_dtypes gives -0.0 a negative spacing; NumPy's floats do not
            g, e = np.asarray(g)[x != 0], e[x != 0]
        for k, (gk, ek) in enumerate(zip(as_tuple(g), as_tuple(e))):
            same_bits(gk, ek, f"{name}[{k}]({dtype})")
    tiny = np.abs(x.astype(np.float64)) < 1e-3      # arcsinh(x) is x: subnormals are not flushed
    same_bits(np.asarray(got[-1])[tiny], x[tiny], f"arcsinh({dtype}) of tiny values")


@pytest.mark.parametrize("dtype", FLOATS + [BF16], ids=str)
def test_nextafter_copysign_heaviside_are_exact_on_every_pair_of_special_values(dtype):
    specials = float_specials(dtype)
    x, y = (np.array(v, dtype) for v in zip(*itertools.product(specials, specials)))
    got = xlac.compile(lambda a, b: (xnp.nextafter(a, b), xnp.copysign(a, b), xnp.heaviside(a, b)))(x, y)
    for name, g in zip(["nextafter", "copysign", "heaviside"], got):
        same_bits(g, quiet(getattr(np, name), x, y), f"{name}({dtype})")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_ldexp_is_exact_into_the_subnormals_and_beyond_the_range(dtype):
    specials = float_specials(dtype)
    info = np.finfo(dtype)
    bits = info.nmant + info.maxexp
    exponents = np.array([0, 1, -1, 2, -2, info.nmant, -info.nmant, info.maxexp, -info.maxexp, bits, -bits,
                          bits + 2, -bits - 2, 3000, -3000], np.int32)
    x, n = (np.array(v) for v in zip(*itertools.product(specials, exponents)))
    x = x.astype(dtype)
    for n_dtype in (np.int32,) if dtype != np.float64 else (np.int64, np.int8):
        n_typed = np.clip(n, np.iinfo(n_dtype).min, np.iinfo(n_dtype).max).astype(n_dtype)
        same_bits(xlac.compile(xnp.ldexp)(x, n_typed), quiet(np.ldexp, x, n_typed), f"ldexp({dtype}, {n_dtype})")
    # rounding to the subnormals: halfway cases go to even
    odd = np.array([1.5, 2.5, 3.5, 1.25, 1.75, 1.0 + info.eps, 2 - info.eps], dtype)
    shifts = np.array([info.minexp - info.nmant - 1, info.minexp - info.nmant, info.minexp - 3], np.int32)
    x, n = (np.array(v) for v in zip(*itertools.product(odd, shifts)))
    same_bits(xnp.ldexp(x.astype(dtype), n), np.ldexp(x.astype(dtype), n), f"ldexp rounding ({dtype})")


def test_frexp_and_ldexp_round_trip_eagerly():
    x = np.array([3.0, -0.1, 5e-324, 1e300], np.float64)
    mantissa, exponent = xnp.frexp(x)
    assert np.asarray(exponent).dtype == np.int32
    same_bits(xnp.ldexp(mantissa, exponent), x, "ldexp(frexp(x))")


def test_ldexp_refuses_float_and_uint64_exponents():
    with pytest.raises(TypeError, match="ufunc 'ldexp' not supported"):
        xnp.ldexp(np.ones(2, np.float32), 1.0)
    with pytest.raises(TypeError, match="ufunc 'ldexp' not supported"):
        xlac.compile(xnp.ldexp)(np.ones(2), np.ones(2, np.uint64))
    with pytest.raises(TypeError, match="ufunc 'ldexp' not supported"):
        xnp.ldexp(np.ones(2, np.complex64), 1)


# ---------------------------------------------------------------- complex


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_inverse_hyperbolics_and_float_power_match_numpy(dtype):
    rng = np.random.default_rng(0)
    re, im = rng.uniform(-3, 3, 40), rng.uniform(-3, 3, 40)
    re[np.abs(re) < 0.05] += 0.1        # off the branch cuts, which lie on the axes
    im[np.abs(im) < 0.05] += 0.1
    z = (re + 1j * im).astype(dtype)
    w = (rng.uniform(-2, 2, 40) + 1j * rng.uniform(-2, 2, 40)).astype(dtype)
    rtol = 1e-4 if dtype == "complex64" else 1e-10
    got = xlac.compile(lambda a, b: (xnp.arcsinh(a), xnp.arccosh(a), xnp.arctanh(a), xnp.float_power(a, b),
                                     xnp.conjugate(a)))(z, w)
    for name, g in zip(["arcsinh", "arccosh", "arctanh"], got):
        assert_matches(g, getattr(np, name)(z), rtol=rtol)
    assert_matches(got[3], np.float_power(z, w), rtol=rtol)
    assert_matches(got[4], np.conjugate(z))
    assert_matches(xnp.arctanh(z[:3]), np.arctanh(z[:3]), rtol=rtol)        # eager


def test_inverse_hyperbolics_are_accurate_near_their_singular_points():
    x = np.array([1 + 1e-12, 1 + 1e-6, 1.5, 1e10, 1e300])
    assert_matches(xnp.arccosh(x), np.arccosh(x))
    t = np.array([1e-10, -1e-5, 0.3, -0.999999, 0.999999999])
    assert_matches(xnp.arctanh(t), np.arctanh(t))
    assert_matches(xnp.arcsinh(-x), np.arcsinh(-x))


# ---------------------------------------------------------------- matvec, vecmat


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "complex128"])
def test_matvec_and_vecmat_broadcast_and_conjugate_like_numpy(dtype):
    rng = np.random.default_rng(1)
    def make(*shape):
        x = rng.integers(-3, 4, shape) + (1j * rng.integers(-3, 4, shape) if dtype == "complex128" else 0)
        return np.asarray(x).astype(dtype)
    a, v = make(2, 1, 3, 4), make(5, 4)
    u, b = make(5, 3), make(2, 1, 3, 4)
    got = xlac.compile(lambda a, v, u, b: (xnp.matvec(a, v), xnp.vecmat(u, b)))(a, v, u, b)
    assert_matches(got[0], np.matvec(a, v))
    assert_matches(got[1], np.vecmat(u, b))
    assert_matches(xnp.vecmat(u[0], b[0, 0]), np.vecmat(u[0], b[0, 0]))        # eager


def test_matvec_errors_name_the_gufunc_signature():
    with pytest.raises(ValueError, match=r"matvec: Input operand 1 has a mismatch in its core dimension 0, with "
                                         r"gufunc signature \(m,n\),\(n\)->\(m\) \(size 2 is different from 3\)"):
        xnp.matvec(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="matvec: Input operand 0 does not have enough dimensions"):
        xnp.matvec(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"vecmat: Input operand 1 has a mismatch .* \(size 2 is different from 3\)"):
        xnp.vecmat(np.ones(3), np.ones((2, 3)))
    with pytest.raises(TypeError, match="matvec.. got an unexpected keyword argument 'where'"):
        xnp.matvec(np.ones((2, 2)), np.ones(2), where=np.ones(2, bool))
    assert_matches(xnp.matvec(np.ones((2, 3)), np.ones(3), dtype=np.float32), np.ones(2, np.float32) * 3)


# ---------------------------------------------------------------- out=, where=, dtype=, casting=


def test_multiple_output_ufuncs_write_into_out_tuples_eagerly():
    x, y = np.array([7.0, -7.0, 5.5]), np.array([2.0, 2.0, -2.0])
    q, r = np.zeros(3), np.zeros(3, np.float32)
    result = xnp.divmod(x, y, out=(q, r))
    assert result[0] is q and result[1] is r
    check(q, np.floor_divide(x, y), label="quotient")
    check(r, np.remainder(x, y).astype(np.float32), label="remainder")
    q2, r2 = np.zeros(3), np.zeros(3)
    assert xnp.divmod(x, y, q2, r2)[1] is r2
    check(r2, np.remainder(x, y), label="positional out")
    exponent = np.zeros(3, np.int32)
    mantissa, same = xnp.frexp(x, out=(None, exponent))
    assert same is exponent
    check(mantissa, np.frexp(x)[0], label="frexp mantissa")
    check(exponent, np.frexp(x)[1], label="frexp exponent")


def test_multiple_output_ufuncs_with_out_and_where_compiled():
    def f(x, whole):
        fraction = np.full(x.shape, -9.0)
        xnp.modf(x, out=(fraction, whole), where=x > 0)
        return fraction
    x = np.array([-2.5, 3.25, 0.5])
    whole = np.full(3, 7.0)
    fraction = xlac.compile(f)(x, whole)
    expected_fraction, expected_whole = np.full(3, -9.0), np.full(3, 7.0)
    np.modf(x, out=(expected_fraction, expected_whole), where=x > 0)
    check(fraction, expected_fraction, label="fraction")
    check(whole, expected_whole, label="whole (mutated argument)")


def test_out_tuple_errors_match_numpy():
    x = np.arange(3.0)
    with pytest.raises(TypeError, match="'out' must be a tuple of arrays"):
        xnp.divmod(x, 2, out=np.zeros(3))
    with pytest.raises(ValueError, match="exactly one entry per ufunc output"):
        xnp.divmod(x, 2, out=(np.zeros(3),))
    with pytest.raises(TypeError, match=r"takes from 2 to 4 positional arguments but 5 were given"):
        xnp.divmod(x, 2, x, x, x)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'frexp' output from dtype\\('float64'\\) to "
                                        "dtype\\('int64'\\) with casting rule 'same_kind'"):
        xnp.frexp(x, out=(np.zeros(3, np.int64), None))


def test_dtype_and_casting_arguments_select_numpy_loops():
    i8 = np.array([1, 2, -3], np.int8)
    check(xnp.hypot(i8, i8, dtype=np.float32), np.hypot(i8, i8, dtype=np.float32), label="hypot dtype=")
    check(xnp.add(i8, 3, dtype=np.float32), np.add(i8, 3, dtype=np.float32), label="add dtype=")
    check(xnp.sin(i8, dtype=np.float64), np.sin(i8, dtype=np.float64), label="sin dtype=")
    check(xnp.less(i8, 2, dtype=bool), np.less(i8, 2, dtype=bool), label="less dtype=bool")
    check(xnp.logical_and(np.ones(2, np.float32), 3, dtype=bool), np.ones(2, bool), label="logical_and dtype=bool")
    check(xnp.add(np.ones(2, np.int64), 3, dtype=np.int8), np.add(np.ones(2, np.int64), 3, dtype=np.int8),
          label="add dtype=int8")
    with pytest.raises(TypeError, match=r"Cannot cast ufunc 'add' input 1 from dtype\('float64'\) to dtype\('int8'\) "
                                        r"with casting rule 'same_kind'"):
        xnp.add(i8, 1.5, dtype=np.int8)
    with pytest.raises(TypeError, match=r"Cannot cast ufunc 'add' input 0 from dtype\('int64'\) to "
                                        r"dtype\('float32'\) with casting rule 'safe'"):
        xnp.add(np.ones(2, np.int64), 3, dtype=np.float32, casting="safe")
    for name, args in [("less", (i8, 2)), ("divide", (i8, 3)), ("frexp", (np.ones(2),)), ("sin", (np.ones(2),))]:
        dtype = np.int64 if name in ("divide", "sin") else np.float32 if name == "frexp" else np.float64
        with pytest.raises(TypeError, match=f"No loop matching the specified signature and casting was found for "
                                            f"ufunc {name}"):
            getattr(xnp, name)(*args, dtype=dtype)
    check(xnp.ldexp(np.ones(2, np.float32), np.int64(3), casting="safe"), np.full(2, 8, np.float32), label="ldexp")
    check(xlac.compile(lambda a: xnp.logaddexp(a, a, dtype=np.float64))(i8), np.logaddexp(i8, i8, dtype=np.float64),
          label="compiled dtype=")


# ---------------------------------------------------------------- names, attributes, errors


NUMPY_UFUNCS = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
ELSEWHERE = {"matmul", "vecdot"}        # xlac.numpy.contractions


@pytest.mark.parametrize("name", [n for n in NUMPY_UFUNCS if n not in ELSEWHERE])
def test_every_numpy_ufunc_exists_with_numpy_attributes(name):
    ours, theirs = getattr(xnp, name), getattr(np, name)
    assert ours.__name__ == theirs.__name__
    assert (ours.nin, ours.nout, ours.nargs, ours.signature) == (theirs.nin, theirs.nout, theirs.nargs,
                                                                 theirs.signature)
    assert ours.identity == theirs.identity or (ours.identity is None and theirs.identity is None)


def test_numpy_2_aliases_are_the_same_functions():
    for alias, name in ALIASES.items():
        assert getattr(xnp, alias) is getattr(xnp, name), alias
        assert getattr(np, alias) is getattr(np, name), alias


def test_isnat_refuses_like_numpy_and_real_only_ufuncs_refuse_complex():
    with pytest.raises(TypeError, match="ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64"):
        xnp.isnat(np.ones(2))
    for name in ("fabs", "signbit", "spacing", "copysign", "hypot", "heaviside", "nextafter", "logaddexp", "modf",
                 "frexp", "trunc", "deg2rad"):
        fn = getattr(xnp, name)
        z = np.ones(2, np.complex64)
        with pytest.raises(TypeError, match=f"ufunc '{name}' not supported for the input types|{name}"):
            xlac.compile(lambda a: fn(*[a] * fn.nin))(z)
    with pytest.raises(TypeError, match="ufunc 'bitwise_count' not supported for the input types"):
        xnp.bitwise_count(np.ones(2))
    with pytest.raises(TypeError, match="divmod is not defined for complex numbers"):
        xnp.divmod(np.ones(2, np.complex64), 1)


def test_eager_calls_return_numpy_values_and_dtypes():
    x = np.array([0.25, -1.5, 3.0], np.float32)
    arr = xlac.asarray(x)
    for name in ("arcsinh", "deg2rad", "fabs", "trunc", "signbit", "spacing"):
        check(getattr(xnp, name)(arr), getattr(np, name)(x), label=f"eager {name}")
    for name in ("hypot", "logaddexp", "logaddexp2", "copysign", "nextafter", "heaviside", "float_power"):
        check(getattr(xnp, name)(arr, 2.0), quiet(getattr(np, name), x, 2.0), label=f"eager {name}")
    check_all("modf", xnp.modf(arr), np.modf(x), "eager")
    check_all("divmod", xnp.divmod(arr, np.float32(0.5)), np.divmod(x, np.float32(0.5)), "eager")
    check(xnp.bitwise_count(np.array([-1, 255], np.int16)), np.bitwise_count(np.array([-1, 255], np.int16)),
          label="eager bitwise_count")
    check(xnp.conjugate(np.array([True])), np.conjugate(np.array([True])), label="eager conjugate of bool")


def test_gradients_match_jax():
    import jax
    import jax.numpy as jnp
    x = np.array([-2.0, -0.3, 0.4, 1.7, 3.0])
    y = np.array([0.5, -1.0, 2.0, -0.2, 1.0])

    def loss(m, a, b):
        return m.sum(m.arcsinh(a) + m.arctanh(a / 4) + m.arccosh(a + 3.5) + m.hypot(a, b) + m.logaddexp(a, b)
                     + m.logaddexp2(a, b) * m.copysign(a, b) + m.ldexp(a, 3) + m.deg2rad(a) * m.fabs(b))

    with jax.enable_x64(True):
        expected = jax.jit(jax.grad(lambda a, b: loss(jnp, a, b), argnums=(0, 1)))(x, y)
    got = xlac.compile(xlac.grad(lambda a, b: loss(xnp, a, b), argnums=(0, 1)))(x, y)
    for g, e in zip(got, expected):
        assert_matches(g, np.asarray(e))


def test_vmap_of_the_bit_level_and_integer_ufuncs_matches_numpy():
    i = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    f = np.linspace(-3, 3, 12).reshape(3, 4)
    got = xlac.vmap(lambda a, b, x: (xnp.gcd(a, b), xnp.frexp(x)[1], xnp.nextafter(x, 0.0), xnp.spacing(x),
                                     xnp.matvec(np.ones((2, 4)), x)))(i, i[::-1] * 3, f)
    expected = (np.gcd(i, i[::-1] * 3), np.frexp(f)[1], np.nextafter(f, 0.0), np.spacing(f),
                np.matvec(np.ones((2, 4)), f))
    for g, e in zip(got, expected):
        assert_matches(g, e)


# ---------------------------------------------------------------- dtype utilities (xlac.numpy.dtypes)


NUMPY_DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                      "uint64", "float16", "float32", "float64", "complex64", "complex128")]
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric")


def test_promotion_and_casting_match_numpy_for_every_pair():
    for a, b in itertools.product(NUMPY_DTYPES, NUMPY_DTYPES):
        assert xnp.promote_types(a, b) == np.promote_types(a, b), (a, b)
        assert xnp.result_type(a, b) == np.result_type(a, b), (a, b)
        assert xnp.result_type(np.ones(1, a), b.name) == np.result_type(np.ones(1, a), b.name), (a, b)
        for casting in CASTINGS:
            assert xnp.can_cast(a, b, casting) == np.can_cast(a, b, casting), (a, b, casting)
    for a, scalar in itertools.product(NUMPY_DTYPES, (1, 1.0, 1j, True)):
        assert xnp.result_type(a, scalar) == np.result_type(a, scalar), (a, scalar)


def test_dtype_predicates_match_numpy():
    for dtype in NUMPY_DTYPES:
        for kind in KINDS + (np.float32, np.dtype("int8"), ("bool", np.complex64), np.floating):
            assert xnp.isdtype(dtype, kind) == np.isdtype(dtype, kind), (dtype, kind)
        for abstract in (np.number, np.integer, np.signedinteger, np.unsignedinteger, np.inexact, np.floating,
                         np.complexfloating, np.generic, np.bool_, np.float32):
            assert xnp.issubdtype(dtype, abstract) == np.issubdtype(dtype, abstract), (dtype, abstract)
        if dtype.kind in "fc":
            assert xnp.finfo(dtype).eps == np.finfo(dtype).eps and xnp.finfo(dtype).dtype == np.finfo(dtype).dtype
        elif dtype.kind in "iu":
            assert (xnp.iinfo(dtype).min, xnp.iinfo(dtype).max) == (np.iinfo(dtype).min, np.iinfo(dtype).max)
    assert xnp.finfo(xlac.asarray(np.ones(2, np.float32))).bits == 32      # arrays, as the Array API allows
    with pytest.raises(ValueError, match="not inexact"):
        xnp.finfo(np.int8)
    with pytest.raises(ValueError, match="kind argument is a string"):
        xnp.isdtype(np.float32, "floating")
    with pytest.raises(TypeError, match="dtype argument must be a NumPy dtype"):
        xnp.isdtype(1.0, "numeric")
    with pytest.raises(TypeError, match="does not support Python ints"):
        xnp.can_cast(1, np.int8)
    with pytest.raises(ValueError, match="at least one array or dtype is required"):
        xnp.result_type()


def test_bfloat16_in_the_dtype_utilities():
    bf16 = xnp.bfloat16
    assert xnp.finfo(bf16).eps == ml_dtypes.finfo(BF16).eps and xnp.finfo("bfloat16").max == ml_dtypes.finfo(BF16).max
    assert xnp.promote_types(bf16, np.float16) == np.float32 and xnp.promote_types(bf16, np.int8) == BF16
    assert xnp.result_type(bf16, 1.0) == BF16 and xnp.result_type(bf16, np.float32) == np.float32
    assert xnp.can_cast(bf16, np.float32) and xnp.can_cast(np.uint8, bf16) and not xnp.can_cast(np.int16, bf16)
    assert not xnp.can_cast(bf16, np.float16) and not xnp.can_cast(np.float16, bf16)
    assert xnp.can_cast(bf16, np.float16, "same_kind") and not xnp.can_cast(bf16, np.int8, "same_kind")
    assert xnp.isdtype(BF16, "real floating") and xnp.isdtype(BF16, "numeric") and xnp.isdtype(BF16, BF16)
    assert xnp.issubdtype(BF16, np.floating) and not xnp.issubdtype(BF16, np.float16)
    with pytest.raises(ValueError, match="Invalid integer data type 'bfloat16'"):
        xnp.iinfo(BF16)


def test_numpy_constants_exist():
    for name in ("pi", "e", "inf", "nan", "euler_gamma"):
        value, expected = getattr(xnp, name), getattr(np, name)
        assert value == expected or (np.isnan(value) and np.isnan(expected)), name
    assert xnp.newaxis is None
