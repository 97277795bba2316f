"""Python's scalar functions on traced scalars (xlac/numpy/python_scalars.py): ``math``'s functions, ``float``,
``int``, ``complex``, ``round``, ``abs``, ``divmod``, against Python and NumPy on the concrete values, errors
included (raised after the call, with the user's line)."""
import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from tests.tolerance import assert_matches

SMALLEST_NORMAL = np.finfo(np.float64).tiny
# XLA:CPU flushes subnormal floats to zero: none as inputs, and a subnormal result may come back as zero
FLOATS = st.one_of(st.floats(allow_subnormal=False), st.floats(-30, 30, allow_subnormal=False),
                   st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, math.pi, math.inf, -math.inf, math.nan]))


def _line_of(fn, offset: int = 0) -> str:
    return f"test_python_scalars.py:{inspect.getsourcelines(fn)[1] + offset}"


def python_result(fn, *args, **kwargs):
    """``fn``'s result on Python floats, or the exception it raises."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, OverflowError, ZeroDivisionError) as error:
        return error


def compiled_result(compiled, *args):
    try:
        return compiled(*args)
    except (ValueError, OverflowError, ZeroDivisionError) as error:
        return error


def assert_same_float(got, want, rel_tol=1e-13):
    got = float(got)
    if math.isnan(want):
        assert math.isnan(got)
    elif abs(want) < SMALLEST_NORMAL:
        assert abs(got) < SMALLEST_NORMAL and (want != 0 or math.copysign(1, got) == math.copysign(1, want))
    else:
        assert got == want or math.isclose(got, want, rel_tol=rel_tol), (got, want)


def assert_same_outcome(got, want, rel_tol=1e-13):
    """The same exception (type and message, then the user's line), or the same number; for an int past
    int64, xlac's OverflowError."""
    if type(want) is int and not -2 ** 63 <= want < 2 ** 63:
        assert isinstance(got, OverflowError) and "past the int64 range of xlac's traced integers" in str(got)
    elif isinstance(want, Exception):
        assert isinstance(got, Exception), f"Python raises {want!r}, xlac gave {got!r}"
        assert type(got) is type(want) and str(got).splitlines()[0] == str(want), (got, want)
        assert "test_python_scalars.py:" in str(got)
    else:
        assert not isinstance(got, Exception), f"xlac raised {got!r}, Python gives {want!r}"
        if isinstance(want, bool):
            assert bool(got) is want
        elif isinstance(want, int):
            assert int(got) == want
        else:
            assert_same_float(got, want, rel_tol)


UNARY = ["sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "fabs", "degrees", "radians", "floor",
         "ceil", "trunc", "isnan", "isinf", "isfinite", "ulp"]
_COMPILED = {}


def compiled_math(name):
    """One compiled function per ``math`` function, called on a float64 scalar's 0-d item."""
    if name not in _COMPILED:
        fn = getattr(math, name)
        _COMPILED[name] = xlac.compile(lambda x: fn(x[0]))
    return _COMPILED[name]


@pytest.mark.parametrize("name", UNARY)
@settings(max_examples=8, deadline=None)
@given(value=FLOATS)
def test_math_function_of_a_traced_scalar_is_pythons_on_its_value(name, value):
    want = python_result(getattr(math, name), value)
    got = compiled_result(compiled_math(name), np.array([value]))
    assert_same_outcome(got, want)


BINARY = {"atan2": math.atan2, "copysign": math.copysign, "nextafter": math.nextafter, "hypot": math.hypot,
          "pow": math.pow, "fmod": math.fmod, "log": math.log, "isclose": math.isclose}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=20, deadline=None)
@given(a=FLOATS, b=FLOATS)
def test_math_function_of_two_traced_scalars_is_pythons_on_their_values(name, a, b):
    fn = BINARY[name]
    key = f"{name}/2"
    if key not in _COMPILED:
        _COMPILED[key] = xlac.compile(lambda x: fn(x[0], x[1]))
    want = python_result(fn, a, b)
    got = compiled_result(_COMPILED[key], np.array([a, b]))
    assert_same_outcome(got, want, rel_tol=1e-12)


ldexp_frexp_modf = xlac.compile(lambda v, e: (math.ldexp(v[0], e[0]),) + math.frexp(v[0]) + math.modf(v[0]))


@settings(max_examples=20, deadline=None)
@given(x=FLOATS, exponent=st.integers(-1100, 1100))
def test_ldexp_frexp_and_modf_are_pythons(x, exponent):
    f = ldexp_frexp_modf
    want_ldexp = python_result(math.ldexp, x, exponent)
    got = compiled_result(f, np.array([x]), np.array([exponent]))
    if isinstance(want_ldexp, Exception):
        return assert_same_outcome(got, want_ldexp)
    for g, w in zip(got, (want_ldexp, *math.frexp(x), *math.modf(x))):
        assert_same_outcome(g, w)


def test_math_results_are_weak_python_numbers():
    f = xlac.compile(lambda x: (math.sqrt(x[0]) + np.float32(1), math.floor(x[0]) + np.int8(1), math.isnan(x[0])))
    total, whole, isnan = f(np.array([4.0]))
    want = (math.sqrt(4.0) + np.float32(1), math.floor(4.0) + np.int8(1), math.isnan(4.0))
    assert_matches(total, want[0])
    assert_matches(whole, want[1])
    assert isnan.dtype == np.bool_ and not bool(isnan)


# ---------------------------------------------------------------- float, int, complex, round, abs, divmod


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_float_int_and_complex_are_weak_python_numbers(dtype):
    def f(x):
        return float(x[0]) + np.float32(1), int(x[0]) + np.int8(1), complex(x[0]) + np.complex64(1), float(x[0])
    x = np.array([3], dtype)
    got = xlac.compile(f)(x)
    for g, w in zip(got, f(x)):
        assert_matches(g, w)


int_of_first = xlac.compile(lambda x: int(x[0]))


@settings(max_examples=30, deadline=None)
@given(value=FLOATS)
def test_int_truncates_and_raises_as_python(value):
    assert_same_outcome(compiled_result(int_of_first, np.array([value])), python_result(int, value))


def test_complex_of_two_traced_numbers_and_of_a_complex_one():
    f = xlac.compile(lambda x, z: (complex(x[0], x[1]), complex(z[0]), complex(x[0], z[0])))
    x, z = np.array([1.5, -2.0]), np.array([3 + 4j])
    for g, w in zip(f(x, z), (complex(1.5, -2.0), complex(3 + 4j), complex(1.5, 3 + 4j))):
        assert complex(g) == w and g.dtype == np.complex128


DIGITS = st.sampled_from([-22, -2, -1, 0, 1, 2, 5, 17])        # each a compile: few
NEAR_TIES = st.builds(lambda k, n, step: (float(np.nextafter((k + 0.5) / 10 ** n, math.inf * step)) if step else
                                          (k + 0.5) / 10 ** n, n),
                      st.integers(-10 ** 6, 10 ** 6), st.sampled_from([0, 1, 2, 5]), st.sampled_from([-1, 0, 1]))
round_python_float = xlac.compile(lambda x, n: round(float(x[0]), n), static_argnums=1)
round_python_int = xlac.compile(lambda x, n: round(int(x[0]), n), static_argnums=1)


@settings(max_examples=30, deadline=None)
@given(case=st.one_of(st.tuples(FLOATS, DIGITS), NEAR_TIES,
                      st.sampled_from([(2.675, 2), (1.005, 2), (0.125, 2), (2.5, 0), (-0.5, 0), (-0.001, 2),
                                       (1234.5, -1), (1250.0, -2), (5e15 + 0.5, 0), (4503599627370497.0, 1),
                                       (16.9921875, 2), (1e300, 2), (-1e-300, 5), (123456789.123, -22)])))
def test_round_of_a_python_float_is_pythons_to_the_bit(case):
    value, ndigits = case
    got, want = float(round_python_float(np.array([value]), ndigits)), round(value, ndigits)
    assert got == want or math.isnan(got) and math.isnan(want), (value, ndigits, got, want)
    assert math.copysign(1, got) == math.copysign(1, want)


@settings(max_examples=20, deadline=None)
@given(value=st.integers(-10 ** 18, 10 ** 18), ndigits=st.sampled_from([-20, -3, -1, 2]))
def test_round_of_a_python_int_is_pythons(value, ndigits):
    assert int(round_python_int(np.array([value]), ndigits)) == round(value, ndigits)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ndigits", [None, 0, 2, -1])
def test_round_of_a_numpy_scalar_is_numpys(dtype, ndigits):
    x = np.array([2.675, -1.5, 2.5, 1234.5678, np.nan if ndigits is not None else 7.0], dtype)
    f = xlac.compile(lambda v, n: tuple(round(v[i], n) for i in range(5)), static_argnums=1)
    for g, w in zip(f(x, ndigits), (round(x[i], ndigits) for i in range(5))):
        if ndigits is None:
            assert int(g) == w and g.dtype == np.int64
        else:
            assert_matches(g, w)


def test_round_without_ndigits_is_a_weak_int_and_raises_as_python():
    f = xlac.compile(lambda x: round(x[0]) + np.int8(1))
    assert_matches(f(np.array([2.5])), round(np.float64(2.5)) + np.int8(1))
    for value in (math.nan, math.inf):
        assert_same_outcome(compiled_result(f, np.array([value])), python_result(round, value))


def abs_divmod_pow(x):
    return abs(x[0]), divmod(x[0], x[1]), pow(abs(x[0]), 0.5), abs(float(x[1])) + np.float32(0)


abs_divmod_pow_compiled = xlac.compile(abs_divmod_pow)


@settings(max_examples=20, deadline=None)
@given(a=st.floats(-1e6, 1e6), b=st.floats(-1e3, 1e3).filter(lambda v: abs(v) > 1e-3))
def test_abs_divmod_and_pow_of_numpy_scalars_are_numpys(a, b):
    x = np.array([a, b])
    got, want = abs_divmod_pow_compiled(x), abs_divmod_pow(x)
    assert_matches(got[0], want[0])
    assert_matches(got[1][0], want[1][0])
    assert_matches(got[1][1], want[1][1], rtol=1e-9)
    assert_matches(got[2], want[2])
    assert_matches(got[3], want[3])


def test_numpy_scalar_types_of_traced_values_convert():
    f = xlac.compile(lambda x: (np.float32(x[0]), np.int16(x), np.complex64(x[1])))
    x = np.array([1.75, -2.5])
    for g, w in zip(f(x), (np.float32(x[0]), np.int16(x), np.complex64(x[1]))):
        assert_matches(g, w)


# ---------------------------------------------------------------- errors


def square_root_of_first(x):
    total = x.sum()
    return math.sqrt(x[0]) + total


def test_a_domain_error_is_raised_after_the_call_with_the_users_line():
    f = xlac.compile(square_root_of_first)
    assert_matches(f(np.array([4.0, 1.0])), square_root_of_first(np.array([4.0, 1.0])))
    with pytest.raises(ValueError) as info:
        f(np.array([-1.0, 1.0]))
    with pytest.raises(ValueError) as python:
        math.sqrt(-1.0)
    assert str(info.value).splitlines()[0] == str(python.value)
    assert f"{_line_of(square_root_of_first, 2)} (in square_root_of_first)" in str(info.value)


def test_range_errors_and_the_checks_opt_out():
    f = xlac.compile(lambda x: (math.exp(x[0]), math.log(x[1])))
    with pytest.raises(OverflowError, match="math range error"):
        f(np.array([1000.0, 1.0]))
    with pytest.raises(ValueError, match="math domain error"):
        f(np.array([1.0, 0.0]))
    unchecked = xlac.compile(lambda x: (math.exp(x[0]), math.log(x[1])), check_bounds=False)
    exp, log = unchecked(np.array([1000.0, 0.0]))
    assert float(exp) == math.inf and float(log) == -math.inf


def test_a_check_inside_a_branch_python_does_not_take_does_not_fire():
    def f(x):
        return math.sqrt(x[0]) if x[0] >= 0 else -1.0
    assert float(xlac.compile(f)(np.array([-4.0]))) == f(np.array([-4.0]))


def test_conversions_refuse_what_python_and_numpy_refuse():
    with pytest.raises(TypeError, match=r"only 0-dimensional arrays can be converted to Python scalars"):
        xlac.compile(lambda x: float(x))(np.ones(2))
    with pytest.raises(TypeError, match=r"doesn't define __round__"):
        xlac.compile(lambda z: round(z[0]))(np.ones(1, np.complex128))
    with pytest.raises(xlac.UnsupportedError, match=r"(?s)math\.gamma\(\) of a traced value.*test_python_scalars"):
        xlac.compile(lambda x: math.gamma(x[0]))(np.ones(1))
    with pytest.raises(xlac.UnsupportedError, match=r"round\(x, 23\) of a traced float"):
        xlac.compile(lambda x: round(float(x[0]), 23))(np.ones(1))
    with pytest.warns(np.exceptions.ComplexWarning):
        assert float(xlac.compile(lambda z: float(z[0]))(np.array([2 + 1j]))) == 2.0


def test_concrete_values_keep_pythons_behaviour():
    f = xlac.compile(lambda x: x * math.sqrt(4) * float("2") * int(2.9) * round(2.675, 2))
    assert_matches(f(np.ones(2)), np.ones(2) * 2.0 * 2.0 * 2 * 2.67)


# ---------------------------------------------------------------- loops


def image_norms(image):
    out = np.zeros_like(image)
    for i in range(image.shape[0]):
        for j in range(image.shape[1]):
            out[i, j] = math.sqrt(image[i, j] ** 2 + math.fabs(i - j)) + math.floor(image[i, j])
    return out


def test_a_loop_calling_math_rolls():
    image = np.random.default_rng(0).normal(size=(50, 50))
    f = xlac.compile(image_norms)
    decisions = f.trace(image).loop_decisions
    assert {d.decision for d in decisions} == {"rolled"}, decisions
    assert {d.location for d in decisions} == {_line_of(image_norms, 2), _line_of(image_norms, 3)}
    assert_matches(f(image), image_norms(image))


def factorial_weighted(x):
    total = 0.0
    for i in range(40):
        total = total + math.factorial(i % 5) * x[i] + x[i] * 2.0
    return total


def test_the_loop_report_names_the_call_that_keeps_a_loop_unrolled():
    x = np.arange(40.0)
    f = xlac.compile(factorial_weighted)
    [decision] = f.trace(x).loop_decisions
    assert decision.decision == "unrolled"
    assert "math.factorial() of a traced value" in decision.reason
    assert f"at {_line_of(factorial_weighted, 3)}" in decision.reason
    assert_matches(f(x), factorial_weighted(x))


def test_round_and_trunc_of_a_concrete_array_element_are_python_ints_as_numpys():
    values = np.array([-2.7, 2.5], np.float32)
    a = xlac.asarray(values)
    assert (type(round(a[1])), round(a[1])) == (int, round(values[1]))
    wide = np.float64(values[0])
    assert (type(math.trunc(xlac.asarray(wide))), math.trunc(xlac.asarray(wide))) == (int, math.trunc(wide))
    with pytest.raises(TypeError, match="numpy.float32 doesn't define __trunc__"):     # as math.trunc(values[0])
        math.trunc(a[0])
    assert_matches(values * round(a[1]), values * round(values[1]))        # weak: float32 stays


def test_round_of_an_array_is_refused_as_numpy_refuses_it():
    with pytest.raises(TypeError, match=r"type numpy\.ndarray doesn't define __round__ method"):
        xlac.compile(lambda x: round(x))(np.ones(2))
    with pytest.raises(TypeError, match=r"type numpy\.ndarray doesn't define __round__ method"):
        round(np.ones(2))
