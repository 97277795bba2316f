"""Floats cast to integer dtypes as NumPy casts them (``xlac/lowering/emitters_casts.py``): truncation through
a wider integer keeping its low bits (300.0 -> uint8 44, -1.0 -> uint8 255), which NumPy gives on every
machine for values inside int32's range; out of it x86-64's "integer indefinite", the lowest integer (XLA
alone saturates). Checked against that rule written out here, and against NumPy for the values every machine
agrees on, and on x86-64 for every value NumPy casts one way (a uint32 out of its range comes out of NumPy's
vectorized loop and of its scalar tail differently)."""
import platform

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import xlac

FLOATS = [np.float16, np.float32, np.float64]
INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
ON_X86 = platform.machine().lower() in ("x86_64", "amd64")
SPECIAL = [300.0, -180.0, np.inf, -np.inf, np.nan, 1e10, -1e10, 5e9, -1.0, 2.0 ** 63, 2.0 ** 64 + 1e5, -2.0 ** 63,
           1.5e19, 65504.0, -0.9, 2 ** 31 - 0.5, -2 ** 31 - 1.0, 2 ** 32 + 7, 2.0 ** 31, -0.0, 127.9, -128.9]


def _truncated(value, bits: int) -> int:
    lowest = -2 ** (bits - 1)
    return int(value) if np.isfinite(value) and lowest <= value < -lowest else lowest


def x86_cast(value, source, target) -> int:
    """The documented rule, one value at a time (``value`` already of dtype ``source``)."""
    target = np.dtype(target)
    bits = 8 * target.itemsize
    from_half = np.dtype(source).itemsize < 4
    value = np.float32(value) if from_half else value
    if target.kind == "u" and bits >= 32 and not (bits == 32 and from_half):
        top = value.dtype.type(2.0 ** (bits - 1))
        signed = _truncated(value - top, bits) ^ -2 ** (bits - 1) if value >= top else _truncated(value, bits)
    else:
        signed = _truncated(value, 64 if bits == 64 or target == np.uint32 else 32)
    return np.array(signed % 2 ** bits, np.uint64).astype(np.dtype(f"u{target.itemsize}")).view(target).item()


def portable(value, target) -> bool:
    """Whether NumPy's cast of ``value`` is the same on every machine (C defines it, or the conversion
    every compiler emits agrees): inside int32's range, not negative for an unsigned 32- or 64-bit target."""
    unsigned_wide = np.dtype(target).kind == "u" and np.dtype(target).itemsize >= 4
    return bool(np.isfinite(value) and -2 ** 31 < value < 2 ** 31 and not (unsigned_wide and value <= -1))


_casts = {(s, t): xlac.compile(lambda x, t=t: x.astype(t)) for s in FLOATS for t in INTEGERS}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(width=64, allow_nan=True, allow_infinity=True) |
                st.floats(-2.0 ** 33, 2.0 ** 33) | st.integers(-300, 300).map(float), min_size=1, max_size=8))
@example(SPECIAL)
def test_float_to_integer_casts_match_numpy(values):
    for source in FLOATS:
        with np.errstate(over="ignore"):
            x = np.array(values).astype(source)
        for target in INTEGERS:
            got = np.asarray(_casts[source, target](x))
            assert got.dtype == target
            with np.errstate(invalid="ignore"):
                numpy = x.astype(target)
                alone = [np.array([v], source).astype(target)[0].item() for v in x.tolist()]
            for v, g, n, one in zip(x.tolist(), got.tolist(), numpy.tolist(), alone):
                rule = x86_cast(x.dtype.type(v), source, target)
                assert g == rule, (source, target, v, g, rule)
                if portable(v, target) or ON_X86 and n == one:
                    assert g == n, (source, target, v, g, n)


def test_complex_casts_to_integers_take_the_real_part_by_the_same_rule():
    x = np.array([300.5 + 2j, -1.0 - 1j, np.nan + 0j])
    with pytest.warns(np.exceptions.ComplexWarning):
        expected = x.astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(xlac.compile(lambda v: v.astype(np.uint8))(x)), expected)


def test_a_ufunc_at_that_casts_its_product_back_wraps_as_numpy():
    """The fuzz program (seed 11, ``np.multiply.at`` of a uint8 array by a float16 scalar) XLA saturated."""
    def program(a0, a1):
        np.multiply.at(a1, [1], a0)
    a1 = np.arange(6, dtype=np.uint8).reshape(2, 3) * 40
    expected, got = a1.copy(), a1.copy()
    program(np.float16(2.5), expected)
    xlac.compile(program)(np.float16(2.5), got)
    np.testing.assert_array_equal(got, expected)
    assert got[1].tolist() == [44, 144, 244]
