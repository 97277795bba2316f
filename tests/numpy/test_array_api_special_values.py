"""Special values of the elementwise functions as the Array API standard (2024.12) specifies them (C99 Annex G
for complex arguments): every class of real and imaginary part (signed zeros, finite, infinities, NaN),
eager and compiled, against NumPy where NumPy follows the standard and against the standard's table where
it does not."""
import warnings

import numpy as np
import pytest

import xlac
import xlac.numpy as xnp

PARTS = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan]     # no subnormals: XLA's CPU flushes them to zero
COMPLEX = np.array([complex(re, im) for re in PARTS for im in PARTS])

# Where NumPy 2.4 departs from the standard: (real, imaginary part of the argument) -> the standard's value.
STANDARD_NOT_NUMPY = {
    "expm1": {("inf", "0.0"): complex(np.inf, 0.0), ("inf", "-0.0"): complex(np.inf, -0.0),
              ("inf", "inf"): complex(np.inf, np.nan), ("inf", "-inf"): complex(np.inf, np.nan),
              ("inf", "nan"): complex(np.inf, np.nan), ("-inf", "inf"): complex(-1.0, 0.0),
              ("-inf", "-inf"): complex(-1.0, -0.0), ("-inf", "nan"): complex(-1.0, 0.0),
              ("nan", "0.0"): complex(np.nan, 0.0), ("nan", "-0.0"): complex(np.nan, -0.0)},
    "sign": {("inf", "nan"): complex(np.nan, np.nan), ("-inf", "nan"): complex(np.nan, np.nan),
             ("nan", "inf"): complex(np.nan, np.nan), ("nan", "-inf"): complex(np.nan, np.nan)},
}


def parts(z) -> tuple[str, str]:
    """The special-value class of ``z`` as text ("nan" has no identity problem as a dictionary key)."""
    return repr(float(np.real(z))), repr(float(np.imag(z)))


def expected(name, z):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = getattr(np, name)(z)
    overrides = STANDARD_NOT_NUMPY.get(name, {}) if values.dtype.kind == "c" else {}
    return np.array([overrides.get(parts(a), v) for a, v in zip(z, values)], values.dtype)


def same_value(got, want) -> bool:
    """Equal part by part: NaN matches NaN, zeros match with their sign, finite values to a few ulps."""
    def part_matches(g, w):
        if np.isnan(w) or np.isnan(g):
            return bool(np.isnan(w) and np.isnan(g))
        if w == 0 or np.isinf(w):
            return bool(g == w and np.signbit(g) == np.signbit(w))
        return bool(np.isclose(g, w, rtol=4 * np.finfo(np.asarray(w).dtype).eps, atol=0))
    return part_matches(got.real, want.real) and part_matches(got.imag, want.imag)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64"])
@pytest.mark.parametrize("name", ["sign", "exp", "expm1", "log", "log1p", "sqrt", "sinh", "cosh", "tanh", "arccos",
                                  "arccosh", "arcsin", "arcsinh", "arctan", "arctanh"])
def test_special_values(name, dtype):
    args = (COMPLEX if np.dtype(dtype).kind == "c" else np.array(PARTS)).astype(dtype)
    want = expected(name, args)
    fn = getattr(xnp, name)
    for mode, got in (("eager", fn(xlac.asarray(args))), ("compiled", xlac.compile(fn)(args))):
        got = np.asarray(got)
        assert got.dtype == want.dtype, mode
        wrong = [(a, g, w) for a, g, w in zip(args, got, want) if not same_value(g, w)]
        assert not wrong, f"{name} {mode}: (argument, got, expected) {wrong}"


def test_the_comparison_tells_signed_zeros_and_nans_apart():
    assert not same_value(np.complex128(complex(0.0, -0.0)), np.complex128(0j))
    assert not same_value(np.complex128(complex(np.nan, 0.0)), np.complex128(complex(np.nan, np.nan)))
    assert same_value(np.complex128(complex(np.nan, np.nan)), np.complex128(complex(np.nan, np.nan)))


def floor_divide_in_place(a, b):
    a //= b
    return a


def remainder_in_place(a, b):
    a %= b
    return a


def power_in_place(a, b):
    a **= b
    return a


# Real binary operations over every pair of special-value classes (the standard gives no complex pow table: it
# asks for exp(x2 * log(x1)) there). floor_divide follows NumPy, which departs from the
# standard for infinite operands (``inf // 2`` is NaN, the standard says inf); remainder's zero has the divisor's
# sign in both.
BINARY = {
    "floor_divide": (lambda a, b: xnp.floor_divide(a, b), np.floor_divide),
    "//": (lambda a, b: a // b, np.floor_divide),
    "//=": (floor_divide_in_place, np.floor_divide),
    "remainder": (lambda a, b: xnp.remainder(a, b), np.remainder),
    "%": (lambda a, b: a % b, np.remainder),
    "%=": (remainder_in_place, np.remainder),
    "power": (lambda a, b: xnp.power(a, b), np.power),
    "**": (lambda a, b: a ** b, np.power),
    "**=": (power_in_place, np.power),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values(name, dtype):
    function, numpy_function = BINARY[name]
    x1 = np.repeat(PARTS, len(PARTS)).astype(dtype)
    x2 = np.tile(PARTS, len(PARTS)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = numpy_function(x1, x2)
    for mode, got in (("eager", function(xlac.asarray(x1.copy()), xlac.asarray(x2))),   # x1 is written in place
                      ("compiled", xlac.compile(function)(x1.copy(), x2))):
        got = np.asarray(got)
        assert got.dtype == want.dtype, mode
        wrong = [(a, b, g, w) for a, b, g, w in zip(x1, x2, got, want) if not same_value(g, w)]
        assert not wrong, f"{name} {mode}: (x1, x2, got, expected) {wrong}"
