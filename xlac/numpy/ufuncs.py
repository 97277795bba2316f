"""Elementwise math with NumPy 2's broadcasting, promotion (NEP 50) and result dtypes.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.add(np.array([1, 2], np.int8), 3))
array([4, 5], dtype=int8)
"""
from __future__ import annotations

import inspect

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, float_dtype_for, is_python_scalar, promote
from xlac.numpy import _out
from xlac.numpy._dispatch import numpy_function
from xlac.trace import ops

BOOL = np.dtype("bool")

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
           "power", "negative", "positive", "absolute", "abs", "sign", "maximum", "minimum", "fmax", "fmin", "exp",
           "expm1", "log", "log1p", "sqrt", "cbrt", "tanh", "sin", "cos", "tan", "floor", "ceil", "rint", "log2",
           "log10", "exp2", "sinh", "cosh", "arctan", "arcsin", "arccos", "square", "reciprocal", "arctan2",
           "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or",
           "bitwise_xor", "left_shift", "right_shift", "invert", "bitwise_not", "logical_and", "logical_or",
           "logical_xor", "logical_not", "isfinite", "isnan", "isinf", "where", "clip"]


def ufunc(fn):
    """Make ``fn(x1, ...)``, which computes the result, a public ufunc taking NumPy's ``out=`` (an array or
    a 1-tuple, also positional after the inputs), ``where=`` (with ``out``: elements of ``out`` where it is
    False are left as they were) and ``casting=`` (of the inputs to the loop dtype, and of the result to
    ``out``'s dtype)."""
    name = fn.__name__
    nin = len(inspect.signature(fn).parameters)

    def body(*args, out=None, where=True, casting="same_kind"):
        if len(args) > nin:
            if len(args) > nin + 1:
                raise TypeError(located(f"{name}() takes from {nin} to {nin + 1} positional arguments but "
                                        f"{len(args)} were given"))
            if out is not None:
                raise TypeError(located(f"{name}: cannot specify 'out' as both a positional and keyword argument"))
            out = args[nin]
        elif len(args) < nin:
            raise TypeError(located(f"{name}() takes {nin} positional argument{'s' if nin > 1 else ''} but "
                                    f"{len(args)} were given"))
        inputs = args[:nin]
        _out.check_casting(casting)
        result = fn(*inputs)
        dst = _out.output_operand(out, name, ufunc=True)
        if dst is not None:
            _out.check_output_casting(name, result, dst, casting)
        if casting in ("no", "equiv", "safe"):
            loop = result.dtype if result.dtype != BOOL else dtypes.result_type(*inputs)
            _out.check_input_casting(name, inputs, loop, casting)
        mask = _out.bool_mask(where, name)
        shapes = [result.shape] + ([mask.shape] if mask is not None else [])
        if dst is None:
            return ops.broadcast_to(result, ops.broadcast_shapes(*shapes, op=name))
        try:
            shape = ops.broadcast_shapes(*shapes, dst.shape, op=name)
        except ValueError:
            raise ValueError(located(f"operands could not be broadcast together with shapes "
                                     f"{' '.join(_out.shape_text(s) for s in shapes + [dst.shape])}")) from None
        if shape != dst.shape:
            raise ValueError(located(f"non-broadcastable output operand with shape {_out.shape_text(dst.shape)} "
                                     f"doesn't match the broadcast shape {_out.shape_text(shape)}"))
        return _out.store(dst, result, mask)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = fn.__doc__
    body.__module__ = fn.__module__
    return _out.returns_out(numpy_function(body), nin)


def _no_bool(op: str, x, hint: str):
    if x.dtype == BOOL:
        raise TypeError(located(f"numpy boolean {op} is not supported, {hint}"))


# ---------------------------------------------------------------- arithmetic


@ufunc
def add(x1, x2):
    """``x1 + x2``; bool + bool is logical or, as in NumPy.

    >>> np.asarray(xnp.add(np.ones(2, np.float32), 1.5))
    array([2.5, 2.5], dtype=float32)
    """
    a, b = promote("add", x1, x2)
    return ops.binary("or" if a.dtype == BOOL else "add", a, b)


@ufunc
def subtract(x1, x2):
    """``x1 - x2``; NumPy refuses it on two booleans.

    >>> np.asarray(xnp.subtract(np.array([3, 4]), 1))
    array([2, 3])
    """
    a, b = promote("subtract", x1, x2)
    _no_bool("subtract, the `-` operator,", a, "use the bitwise_xor, the `^` operator, or the logical_xor function instead.")
    return ops.binary("sub", a, b)


@ufunc
def multiply(x1, x2):
    """``x1 * x2``; bool * bool is logical and.

    >>> np.asarray(xnp.multiply(np.array([3, 4]), 2))
    array([6, 8])
    """
    a, b = promote("multiply", x1, x2)
    return ops.binary("and" if a.dtype == BOOL else "mul", a, b)


@ufunc
def divide(x1, x2):
    """True division ``x1 / x2``: integers and booleans divide in float64, as in NumPy.

    >>> np.asarray(xnp.divide(np.array([1, 2]), 2))
    array([0.5, 1. ])
    """
    dtype = dtypes.result_type(x1, x2)
    if not dtypes.is_inexact(dtype):
        dtype = np.dtype("float64")
    a, b = promote("divide", x1, x2, dtype=dtype)
    return ops.binary("div", a, b)


true_divide = divide


def _int_floor_div(a, b):
    """Floor division of integers; NumPy gives 0 where b == 0."""
    zero = ops.full(a.shape, 0, a.dtype)
    safe_b = ops.select(ops.compare(b, zero, "EQ"), ops.full(a.shape, 1, a.dtype), b)
    q = ops.binary("div", a, safe_b)
    if dtypes.is_signed_int(a.dtype):
        r = ops.binary("rem", a, safe_b)
        signs_differ = ops.compare(ops.compare(r, zero, "LT"), ops.compare(safe_b, zero, "LT"), "NE")
        adjust = ops.binary("and", ops.compare(r, zero, "NE"), signs_differ)
        q = ops.select(adjust, ops.binary("sub", q, ops.full(a.shape, 1, a.dtype)), q)
    return ops.select(ops.compare(b, zero, "EQ"), zero, q)


@ufunc
def floor_divide(x1, x2):
    """``x1 // x2`` rounded toward minus infinity, as NumPy and Python do.

    >>> np.asarray(xnp.floor_divide(np.array([-7, 7]), 2))
    array([-4,  3])
    """
    a, b = promote("floor_divide", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if dtypes.is_int(a.dtype):
        return _int_floor_div(a, b)
    _no_complex("floor_divide", a)
    return _float_floor_div(a, b)


def _float_floor_div(a, b):
    """NumPy's npy_floor_divide: from fmod, rounded so that the quotient is exact; a / 0 is a / b."""
    zero, one = ops.full(a.shape, 0, a.dtype), ops.full(a.shape, 1, a.dtype)
    mod = ops.binary("rem", a, b)
    div = ops.binary("div", ops.binary("sub", a, mod), b)
    signs_differ = ops.compare(ops.compare(mod, zero, "LT"), ops.compare(b, zero, "LT"), "NE")
    adjust = ops.binary("and", ops.compare(mod, zero, "NE"), signs_differ)
    div = ops.select(adjust, ops.binary("sub", div, one), div)
    floor = ops.unary("floor", div)
    round_up = ops.compare(ops.binary("sub", div, floor), ops.full(a.shape, 0.5, a.dtype), "GT")
    floor = ops.select(round_up, ops.binary("add", floor, one), floor)
    true_quotient = ops.binary("div", a, b)
    floor = ops.select(ops.compare(div, zero, "EQ"), ops.binary("mul", zero, true_quotient), floor)
    return ops.select(ops.compare(b, zero, "EQ"), true_quotient, floor)


def _no_complex(op, a):
    if np.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(located(f"{op} is not defined for complex numbers"))


def _python_mod(a, b):
    """Python's and NumPy's modulo: the result takes the sign of the divisor."""
    zero = ops.full(a.shape, 0, a.dtype)
    if dtypes.is_int(a.dtype):
        safe_b = ops.select(ops.compare(b, zero, "EQ"), ops.full(a.shape, 1, a.dtype), b)
        r = ops.binary("rem", a, safe_b)
    else:
        r = ops.binary("rem", a, b)
    if not dtypes.is_unsigned_int(a.dtype):
        signs_differ = ops.compare(ops.compare(r, zero, "LT"), ops.compare(b, zero, "LT"), "NE")
        adjust = ops.binary("and", ops.compare(r, zero, "NE"), signs_differ)
        r = ops.select(adjust, ops.binary("add", r, b), r)
    if dtypes.is_int(a.dtype):
        r = ops.select(ops.compare(b, zero, "EQ"), zero, r)
    return r


@ufunc
def remainder(x1, x2):
    """``x1 % x2`` with the sign of ``x2`` (NumPy's ``mod``); integer modulo by zero gives 0.

    >>> np.asarray(xnp.remainder(np.array([-7, 7]), 3))
    array([2, 1])
    """
    a, b = promote("remainder", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    _no_complex("remainder", a)
    return _python_mod(a, b)


mod = remainder


@ufunc
def fmod(x1, x2):
    """C's fmod: the remainder takes the sign of ``x1``.

    >>> np.asarray(xnp.fmod(np.array([-7.0, 7.0]), 3.0))
    array([-1.,  1.])
    """
    a, b = promote("fmod", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    _no_complex("fmod", a)
    if dtypes.is_int(a.dtype):
        zero = ops.full(a.shape, 0, a.dtype)
        is_zero = ops.compare(b, zero, "EQ")
        r = ops.binary("rem", a, ops.select(is_zero, ops.full(a.shape, 1, a.dtype), b))
        return ops.select(is_zero, zero, r)
    return ops.binary("rem", a, b)


@ufunc
def power(x1, x2):
    """``x1 ** x2``. NumPy refuses negative integer powers of integers; here they are an error
    when the exponent is a constant, and give 0 (or ±1 for a base of ±1) when it is traced.

    >>> np.asarray(xnp.power(np.array([2, 3]), 2))
    array([4, 9])
    """
    if dtypes.is_int(dtypes.result_type(x1, x2)) and _has_negative_constant(x2):
        raise ValueError(located("Integers to negative integer powers are not allowed."))
    a, b = promote("power", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    return ops.binary("pow", a, b)


def _has_negative_constant(x) -> bool:
    from xlac.trace.tracer import Tracer
    if isinstance(x, Tracer):
        return False
    arr = np.asarray(x)
    return arr.dtype.kind in "iu" and bool((arr < 0).any())


@ufunc
def negative(x):
    """``-x``; NumPy refuses it on booleans.

    >>> np.asarray(xnp.negative(np.array([1, -2])))
    array([-1,  2])
    """
    a = asarray(x)
    _no_bool("negative, the `-` operator,", a, "use the `~` operator or the logical_not function instead.")
    return ops.unary("neg", a)


@ufunc
def positive(x):
    """``+x``: a copy of ``x``.

    >>> np.asarray(xnp.positive(np.array([1, -2])))
    array([ 1, -2])
    """
    a = asarray(x)
    _no_bool("positive", a, "")
    return a


@ufunc
def absolute(x):
    """``|x|``; the magnitude of complex numbers as a real dtype.

    >>> np.asarray(xnp.absolute(np.array([-1.5, 2.0])))
    array([1.5, 2. ])
    """
    a = asarray(x)
    if a.dtype == BOOL or dtypes.is_unsigned_int(a.dtype):
        return a
    return ops.unary("abs", a)


abs = absolute


@ufunc
def sign(x):
    """-1, 0 or 1 by the sign of ``x`` (NaN for NaN).

    >>> np.asarray(xnp.sign(np.array([-3, 0, 2])))
    array([-1,  0,  1])
    """
    a = asarray(x)
    _no_bool("sign", a, "")
    if dtypes.is_unsigned_int(a.dtype):
        zero = ops.full(a.shape, 0, a.dtype)
        return ops.convert(ops.compare(a, zero, "NE"), a.dtype)
    return ops.unary("sign", a)


def _minmax(name: str, prim: str, x1, x2, propagate_nan: bool):
    a, b = promote(name, x1, x2)
    if a.dtype == BOOL:
        return ops.binary("or" if prim == "max" else "and", a, b)
    out = ops.binary(prim, a, b)
    if dtypes.is_inexact(a.dtype) and not propagate_nan:
        # fmax/fmin: a NaN loses to a number.
        a_nan, b_nan = ops.compare(a, a, "NE"), ops.compare(b, b, "NE")
        out = ops.select(a_nan, b, ops.select(b_nan, a, out))
    return out


@ufunc
def maximum(x1, x2):
    """Elementwise maximum; a NaN in either operand gives NaN.

    >>> np.asarray(xnp.maximum(np.array([1, 5]), 3))
    array([3, 5])
    """
    return _minmax("maximum", "max", x1, x2, True)


@ufunc
def minimum(x1, x2):
    """Elementwise minimum; a NaN in either operand gives NaN.

    >>> np.asarray(xnp.minimum(np.array([1, 5]), 3))
    array([1, 3])
    """
    return _minmax("minimum", "min", x1, x2, True)


@ufunc
def fmax(x1, x2):
    """Elementwise maximum that ignores NaNs.

    >>> np.asarray(xnp.fmax(np.array([np.nan, 1.0]), 0.0))
    array([0., 1.])
    """
    return _minmax("fmax", "max", x1, x2, False)


@ufunc
def fmin(x1, x2):
    """Elementwise minimum that ignores NaNs.

    >>> np.asarray(xnp.fmin(np.array([np.nan, 1.0]), 0.0))
    array([0., 0.])
    """
    return _minmax("fmin", "min", x1, x2, False)


# ---------------------------------------------------------------- float functions


def _float_unary(name: str, prim: str, doc_example: str):
    def fn(x):
        a = asarray(x)
        a = ops.convert(a, float_dtype_for(a.dtype), weak=a.weak)
        return ops.unary(prim, a)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``; integers and booleans compute in NumPy's float dtype for them.\n\n{doc_example}"
    return ufunc(fn)


exp = _float_unary("exp", "exp", ">>> np.asarray(xnp.exp(np.zeros(2, np.float32)))\narray([1., 1.], dtype=float32)")
expm1 = _float_unary("expm1", "expm1", ">>> np.asarray(xnp.expm1(np.zeros(1)))\narray([0.])")
log = _float_unary("log", "log", ">>> np.asarray(xnp.log(np.ones(1)))\narray([0.])")
log1p = _float_unary("log1p", "log1p", ">>> np.asarray(xnp.log1p(np.zeros(1)))\narray([0.])")
sqrt = _float_unary("sqrt", "sqrt", ">>> np.asarray(xnp.sqrt(np.array([4.0])))\narray([2.])")
cbrt = _float_unary("cbrt", "cbrt", ">>> np.asarray(xnp.cbrt(np.array([8.0])))\narray([2.])")
tanh = _float_unary("tanh", "tanh", ">>> np.asarray(xnp.tanh(np.zeros(1)))\narray([0.])")
sin = _float_unary("sin", "sin", ">>> np.asarray(xnp.sin(np.zeros(1)))\narray([0.])")
cos = _float_unary("cos", "cos", ">>> np.asarray(xnp.cos(np.zeros(1)))\narray([1.])")
tan = _float_unary("tan", "tan", ">>> np.asarray(xnp.tan(np.zeros(1)))\narray([0.])")


def _rounding(name: str, doc_example: str):
    def fn(x):
        a = asarray(x)
        if not dtypes.is_inexact(a.dtype):    # NumPy 2 keeps integers and booleans as they are
            return a
        return ops.unary(name, a)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``; integers and booleans come back unchanged, in their dtype.\n\n{doc_example}"
    return ufunc(fn)


floor = _rounding("floor", ">>> np.asarray(xnp.floor(np.array([1.5, -1.5])))\narray([ 1., -2.])\n"
                  ">>> np.asarray(xnp.floor(np.array([3], np.int8)))\narray([3], dtype=int8)")
ceil = _rounding("ceil", ">>> np.asarray(xnp.ceil(np.array([1.5])))\narray([2.])")
rint = _float_unary("rint", "round", ">>> np.asarray(xnp.rint(np.array([0.5, 1.5])))\narray([0., 2.])")


def _float_unary_composite(name, body, doc_example):
    def fn(x):
        a = asarray(x)
        return body(ops.convert(a, float_dtype_for(a.dtype), weak=a.weak))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``.\n\n{doc_example}"
    return ufunc(fn)


def _scaled(prim, factor):
    return lambda a: ops.binary("mul", ops.unary(prim, a), ops.full(a.shape, factor, a.dtype))


log2 = _float_unary_composite("log2", _scaled("log", 1 / np.log(2)), ">>> np.asarray(xnp.log2(np.array([8.0])))\narray([3.])")
log10 = _float_unary_composite("log10", _scaled("log", 1 / np.log(10)), ">>> np.asarray(xnp.log10(np.array([100.0])))\narray([2.])")
exp2 = _float_unary_composite(
    "exp2", lambda a: ops.binary("pow", ops.full(a.shape, 2, a.dtype), a),
    ">>> np.asarray(xnp.exp2(np.array([3.0])))\narray([8.])")


def _half(a):
    return ops.full(a.shape, 0.5, a.dtype)


sinh = _float_unary_composite(
    "sinh", lambda a: ops.binary("mul", _half(a), ops.binary("sub", ops.unary("exp", a), ops.unary("exp", ops.unary("neg", a)))),
    ">>> np.asarray(xnp.sinh(np.zeros(1)))\narray([0.])")
cosh = _float_unary_composite(
    "cosh", lambda a: ops.binary("mul", _half(a), ops.binary("add", ops.unary("exp", a), ops.unary("exp", ops.unary("neg", a)))),
    ">>> np.asarray(xnp.cosh(np.zeros(1)))\narray([1.])")
arctan = _float_unary_composite(
    "arctan", lambda a: ops.binary("atan2", a, ops.full(a.shape, 1, a.dtype)),
    ">>> np.asarray(xnp.arctan(np.zeros(1)))\narray([0.])")


def _one_minus_square_root(a):
    one = ops.full(a.shape, 1, a.dtype)
    return ops.unary("sqrt", ops.binary("mul", ops.binary("sub", one, a), ops.binary("add", one, a)))


arcsin = _float_unary_composite(
    "arcsin", lambda a: ops.binary("atan2", a, _one_minus_square_root(a)),
    ">>> np.asarray(xnp.arcsin(np.zeros(1)))\narray([0.])")
arccos = _float_unary_composite(
    "arccos", lambda a: ops.binary("atan2", _one_minus_square_root(a), a),
    ">>> np.asarray(xnp.arccos(np.ones(1)))\narray([0.])")


@ufunc
def square(x):
    """``x * x``.

    >>> np.asarray(xnp.square(np.array([3])))
    array([9])
    """
    a = asarray(x)
    if a.dtype == BOOL:
        a = ops.convert(a, np.int8)
    return ops.binary("mul", a, a)


@ufunc
def reciprocal(x):
    """``1 / x`` in ``x``'s dtype (integer reciprocals truncate, as in NumPy).

    >>> np.asarray(xnp.reciprocal(np.array([2.0, 4.0])))
    array([0.5 , 0.25])
    """
    a = asarray(x)
    if a.dtype == BOOL:
        a = ops.convert(a, np.int8)
    return ops.binary("div", ops.full(a.shape, 1, a.dtype), a)


@ufunc
def arctan2(x1, x2):
    """Elementwise ``atan2(x1, x2)``.

    >>> np.asarray(xnp.arctan2(np.array([1.0, -1.0]), 1.0))
    array([ 0.78539816, -0.78539816])
    """
    a, b = _float_operand(x1, x2), _float_operand(x2, x1)   # NumPy picks a float loop both operands cast to
    a, b = promote("arctan2", a, b)
    return ops.binary("atan2", a, b)


def _float_operand(x, other):
    """``x`` in the float dtype NumPy's float-only ufuncs cast it to; a Python scalar first meets ``other``."""
    if is_python_scalar(x) or getattr(x, "weak", False):
        if dtypes.is_weak_result(x, other):
            a = asarray(x)
            return ops.convert(a, float_dtype_for(a.dtype), weak=True)
        return asarray(x, float_dtype_for(dtypes.result_type(other, x)))
    a = asarray(x)
    return ops.convert(a, float_dtype_for(a.dtype), weak=a.weak)


# ---------------------------------------------------------------- comparison and logic


def _comparison(name: str, direction: str):
    def fn(x1, x2):
        a, b = promote(name, x1, x2)
        return ops.compare(a, b, direction)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` after promotion, a bool array.\n\n"
                  f">>> np.asarray(xnp.{name}(np.array([1, 2, 3]), 2)).dtype\ndtype('bool')")
    return ufunc(fn)


equal = _comparison("equal", "EQ")
not_equal = _comparison("not_equal", "NE")
less = _comparison("less", "LT")
less_equal = _comparison("less_equal", "LE")
greater = _comparison("greater", "GT")
greater_equal = _comparison("greater_equal", "GE")


def _bitwise(name: str, prim: str):
    def fn(x1, x2):
        a, b = promote(name, x1, x2)
        if not (dtypes.is_int(a.dtype) or a.dtype == BOOL):
            raise TypeError(located(f"{name} is only defined for integers and booleans, got {a.dtype}"))
        return ops.binary(prim, a, b)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` of integers or booleans.\n\n"
                  f">>> np.asarray(xnp.{name}(np.array([6]), 3)).dtype\ndtype('int64')")
    return ufunc(fn)


bitwise_and = _bitwise("bitwise_and", "and")
bitwise_or = _bitwise("bitwise_or", "or")
bitwise_xor = _bitwise("bitwise_xor", "xor")


@ufunc
def left_shift(x1, x2):
    """``x1 << x2`` for integers.

    >>> np.asarray(xnp.left_shift(np.array([1]), 3))
    array([8])
    """
    a, b = promote("left_shift", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if not dtypes.is_int(a.dtype):
        raise TypeError(located(f"left_shift is only defined for integers, got {a.dtype}"))
    return ops.binary("shift_left", a, b)


@ufunc
def right_shift(x1, x2):
    """``x1 >> x2``: arithmetic for signed integers, logical for unsigned.

    >>> np.asarray(xnp.right_shift(np.array([-8]), 1))
    array([-4])
    """
    a, b = promote("right_shift", x1, x2)
    if a.dtype == BOOL:
        a, b = ops.convert(a, np.int8), ops.convert(b, np.int8)
    if not dtypes.is_int(a.dtype):
        raise TypeError(located(f"right_shift is only defined for integers, got {a.dtype}"))
    kind = "shift_right_arithmetic" if dtypes.is_signed_int(a.dtype) else "shift_right_logical"
    return ops.binary(kind, a, b)


@ufunc
def invert(x):
    """``~x``: bitwise not of integers, logical not of booleans.

    >>> np.asarray(xnp.invert(np.array([True, False])))
    array([False,  True])
    """
    a = asarray(x)
    if not (dtypes.is_int(a.dtype) or a.dtype == BOOL):
        raise TypeError(located(f"invert is only defined for integers and booleans, got {a.dtype}"))
    return ops.unary("not", a)


bitwise_not = invert


def _to_bool(x):
    a = asarray(x)
    if a.dtype == BOOL:
        return a
    return ops.compare(a, ops.full(a.shape, 0, a.dtype), "NE")


def _logical(name: str, prim: str):
    def fn(x1, x2):
        a, b = _to_bool(x1), _to_bool(x2)
        shape = ops.broadcast_shapes(a.shape, b.shape, op=name)
        return ops.binary(prim, ops.broadcast_to(a, shape), ops.broadcast_to(b, shape))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of truth values.\n\n>>> np.asarray(xnp.{name}(np.array([1, 0]), True)).dtype\ndtype('bool')"
    return ufunc(fn)


logical_and = _logical("logical_and", "and")
logical_or = _logical("logical_or", "or")
logical_xor = _logical("logical_xor", "xor")


@ufunc
def logical_not(x):
    """Elementwise ``not x``.

    >>> np.asarray(xnp.logical_not(np.array([0, 2])))
    array([ True, False])
    """
    return ops.unary("not", _to_bool(x))


@ufunc
def isfinite(x):
    """True where ``x`` is neither infinite nor NaN.

    >>> np.asarray(xnp.isfinite(np.array([1.0, np.inf, np.nan])))
    array([ True, False, False])
    """
    a = asarray(x)
    if not dtypes.is_float(a.dtype):
        return ops.full(a.shape, True, BOOL)
    return ops.is_finite(a)


@ufunc
def isnan(x):
    """True where ``x`` is NaN.

    >>> np.asarray(xnp.isnan(np.array([1.0, np.nan])))
    array([False,  True])
    """
    a = asarray(x)
    if not dtypes.is_inexact(a.dtype):
        return ops.full(a.shape, False, BOOL)
    return ops.compare(a, a, "NE")


@ufunc
def isinf(x):
    """True where ``x`` is +inf or -inf.

    >>> np.asarray(xnp.isinf(np.array([1.0, -np.inf])))
    array([False,  True])
    """
    a = asarray(x)
    if not dtypes.is_float(a.dtype):
        return ops.full(a.shape, False, BOOL)
    return ops.compare(ops.unary("abs", a), ops.full(a.shape, np.inf, a.dtype), "EQ")


# ---------------------------------------------------------------- selection


@numpy_function
def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``, broadcast together; the one-argument form needs
    data-dependent shapes and is refused.

    >>> np.asarray(xnp.where(np.array([True, False]), 1.0, np.array([5.0, 6.0])))
    array([1., 6.])
    """
    if x is None or y is None:
        raise TypeError(located("xnp.where(condition) with one argument returns indices whose number depends on "
                                "the data; xlac needs static shapes. Use xnp.where(condition, x, y)."))
    a, b = promote("where", x, y)
    c = _to_bool(condition)
    shape = ops.broadcast_shapes(c.shape, a.shape, op="where")
    return ops.select(ops.broadcast_to(c, shape), ops.broadcast_to(a, shape), ops.broadcast_to(b, shape))


@numpy_function
def clip(a, a_min=None, a_max=None):
    """``a`` limited to ``[a_min, a_max]``, with NumPy's promotion of the bounds.

    >>> np.asarray(xnp.clip(np.array([-1, 5, 9]), 0, 6))
    array([0, 5, 6])
    """
    if a_min is None and a_max is None:
        raise ValueError(located("clip: at least one of a_min and a_max must be given"))
    out = asarray(a)
    if a_min is not None:
        out = maximum.__wrapped_numpy__(out, a_min)
    if a_max is not None:
        out = minimum.__wrapped_numpy__(out, a_max)
    return out
