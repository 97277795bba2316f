"""``xlac.numpy.fft``: NumPy's discrete Fourier transforms, on the ``fft`` primitive.

Result dtypes are NumPy 2's: float32 (and float16) transform in single precision (complex64 results),
everything else in double precision (complex128); the real inverses (irfft, hfft) return
``result_type(input's real dtype, 1.0)``, so float16 stays float16. Sizes (``n``, ``s``) and axes are
static Python ints. Several axes are transformed by one XLA op (up to three at a time); repeated axes
transform again, axis by axis, as in NumPy.

>>> import numpy as np, xlac.numpy as xnp
>>> np.asarray(xnp.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0])))
array([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy import _out
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy.devices import takes_device
from xlac.numpy._dispatch import numpy_function_with_static
from xlac.numpy.ufuncs import divide, multiply
from xlac.trace import ops

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

F32, F64 = np.dtype("float32"), np.dtype("float64")
C64, C128 = np.dtype("complex64"), np.dtype("complex128")
HALF = (np.dtype("float16"), dtypes.bfloat16)
MAX_AXES_PER_OP = 3                                    # stablehlo.fft transforms at most 3 trailing axes
INVERSE = {"FFT": False, "RFFT": False, "IFFT": True, "IRFFT": True}
_SWAPPED_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---------------------------------------------------------------- arguments


def _check_norm(norm, op: str) -> None:
    if norm not in _SWAPPED_NORM:
        raise ValueError(located(f'{op}: Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".'))


def _swap_direction(norm, op: str):
    """hfft and ihfft are irfft and rfft with the opposite normalization."""
    _check_norm(norm, op)
    return _SWAPPED_NORM[norm]


def _points(n, op: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(located(f"{op}: the number of points must be an integer, got {n!r}")) from None
    if n < 1:
        raise ValueError(located(f"{op}: Invalid number of FFT data points ({n}) specified."))
    return n


def _axis_list(axes, ndim: int, op: str) -> list[int]:
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    return [normalize_axis(a, ndim, op) for a in axes]


def _nd_args(shape, s, axes, op: str, real_inverse: bool = False):
    """NumPy's sizes and axes of an n-dimensional transform (``s`` and ``axes`` as the user gave them)."""
    ndim = len(shape)
    if s is None:
        axes = list(range(ndim)) if axes is None else _axis_list(axes, ndim, op)
        sizes = [shape[a] for a in axes]
        if real_inverse and axes:
            sizes[-1] = (shape[axes[-1]] - 1) * 2
    else:
        sizes = [s] if isinstance(s, (int, np.integer)) else list(s)
        if axes is None:
            warnings.warn(f"{op}: `axes` should not be `None` if `s` is not `None` (deprecated in NumPy 2.0); "
                          "pass the axes explicitly", DeprecationWarning, stacklevel=4)
            axes = list(range(-len(sizes), 0))
        axes = _axis_list(axes, ndim, op)
    if len(sizes) != len(axes):
        raise ValueError(located(f"{op}: Shape and axes have different lengths."))
    if any(n is None for n in sizes):
        warnings.warn(f"{op}: passing None in `s` is deprecated in NumPy 2.0; pass the size itself",
                      DeprecationWarning, stacklevel=4)
    defaults = [shape[a] for a in axes]
    if real_inverse and axes:
        defaults[-1] = (shape[axes[-1]] - 1) * 2
    sizes = [d if n is None else shape[a] if n == -1 else n for n, d, a in zip(sizes, defaults, axes)]
    return [_points(n, op) for n in sizes], axes


# ---------------------------------------------------------------- dtypes


def _real_part_dtype(dtype: np.dtype) -> np.dtype:
    return F32 if dtype == C64 else F64 if dtype == C128 else dtype


def _dtypes(dtype: np.dtype, kind: str, op: str, several: bool):
    """(the dtype the transform's operand is converted to, the dtype NumPy returns)."""
    if kind == "RFFT":
        if dtype.kind == "c":
            raise TypeError(located(f"{op}: expects real input, got {dtype}; use fft for complex input"))
        real = dtypes.result_type(dtype, 1.0)
        work = F32 if real in HALF else real
        return work, C64 if work == F32 else C128
    if kind == "IRFFT":
        if several:       # NumPy's complex inverses come first: the real one sees their complex result
            dtype = dtypes.result_type(dtype, 1j)
        real = dtypes.result_type(_real_part_dtype(dtype), 1.0)
        return (C64 if real in HALF + (F32,) else C128), real
    result = dtypes.result_type(dtype, 1j)
    return result, result


# ---------------------------------------------------------------- transforms


def _resize(x, axis: int, size: int):
    """``x`` cropped or zero-padded to ``size`` along ``axis``."""
    have = x.shape[axis]
    if have > size:
        return ops.slice(x, (0,) * x.ndim, tuple(size if i == axis else d for i, d in enumerate(x.shape)))
    if have < size:
        high = tuple(size - have if i == axis else 0 for i in range(x.ndim))
        return ops.pad(x, ops.constant(0, x.dtype), (0,) * x.ndim, high)
    return x


def _scale(norm, kind: str, points: int) -> float:
    """The factor applied after XLA's transform (which divides the inverses by the size)."""
    if norm in (None, "backward"):
        return 1.0
    factor = math.sqrt(points) if norm == "ortho" else points
    return factor if INVERSE[kind] else 1.0 / factor


def _half_rounding(norm, kind: str, n: int, dtype: np.dtype) -> float:
    """NumPy computes the normalization factor of the first axis it transforms in the input's real dtype:
    for half-precision input, the ratio of that rounded factor to the exact one."""
    inverse_norm = _SWAPPED_NORM[norm] if INVERSE[kind] else norm
    if inverse_norm in (None, "backward"):
        return 1.0
    exact = 1 / math.sqrt(n) if inverse_norm == "ortho" else 1 / n
    size = np.array(n, dtype)
    rounded = np.reciprocal(np.sqrt(size) if inverse_norm == "ortho" else size)
    return float(rounded) / exact


def _step(x, kind: str, sizes, axes, factor: float):
    """One ``stablehlo.fft`` of ``kind`` over distinct ``axes`` with logical sizes ``sizes``, scaled."""
    for i, (axis, n) in enumerate(zip(axes, sizes)):
        last_of_irfft = kind == "IRFFT" and i == len(axes) - 1
        x = _resize(x, axis, n // 2 + 1 if last_of_irfft else n)
    order = [a for a in range(x.ndim) if a not in axes] + list(axes)
    y = ops.fft(ops.transpose(x, order), kind, sizes)
    y = ops.transpose(y, tuple(int(i) for i in np.argsort(order)))
    return y if factor == 1.0 else ops.mul(y, ops.full(y.shape, factor, y.dtype))


def _steps(kind: str, count: int, distinct: bool):
    """(kind, positions in the axes list) of each op, in NumPy's order: groups of at most three distinct
    axes, repeated axes one at a time. A real transform does its last axis with the real op, the others
    with the complex one: the real inverse last, every other kind first."""
    if distinct:
        bounds = list(range(count, 0, -MAX_AXES_PER_OP))[::-1]
        groups = [list(range(max(b - MAX_AXES_PER_OP, 0), b)) for b in bounds]
    else:
        groups = [[i] for i in range(count)]
    *head, last = groups
    if kind == "IRFFT":
        return [("IFFT", g) for g in head] + [(kind, last)]
    complex_kind = "IFFT" if INVERSE[kind] else "FFT"
    return [(kind, last)] + [(complex_kind, g) for g in reversed(head)]


def _transform(a, kind: str, sizes, axes, norm, out, op: str):
    """The n-dimensional transform of ``kind`` with NumPy's dtypes, written into ``out`` if given."""
    _check_norm(norm, op)
    x = asarray(a)
    if not axes:
        return _into(out, x, op)
    work, result = _dtypes(x.dtype, kind, op, several=len(axes) > 1)
    first = 0 if kind == "IRFFT" else len(axes) - 1           # the axis NumPy transforms first
    input_real = dtypes.result_type(_real_part_dtype(x.dtype), 1.0)
    x = ops.convert(x, work)
    for step_kind, positions in _steps(kind, len(axes), len(set(axes)) == len(axes)):
        step_sizes = [sizes[i] for i in positions]
        factor = _scale(norm, step_kind, math.prod(step_sizes))
        if first in positions and input_real in HALF:
            factor *= _half_rounding(norm, step_kind, sizes[first], input_real)
        x = _step(x, step_kind, step_sizes, [axes[i] for i in positions], factor)
    return _into(out, ops.convert(x, result), op)


def _into(out, result, op: str):
    dst = _out.output_operand(out, op)
    if dst is None:
        return result
    if dst.shape != result.shape:
        raise ValueError(located(f"{op}: output array has wrong shape: {dst.shape}, expected {result.shape}"))
    _out.check_output_casting(op, result, dst, "same_kind")
    return _out.store(dst, result)


def _one_axis(a, n, axis, norm, out, kind: str, op: str):
    x = asarray(a)
    axis = normalize_axis(axis, x.ndim, op)
    default = (x.shape[axis] - 1) * 2 if kind == "IRFFT" else x.shape[axis]
    return _transform(x, kind, [_points(default if n is None else n, op)], [axis], norm, out, op)


def _conj(x):
    return ops.complex(ops.real(x), ops.neg(ops.imag(x))) if x.dtype.kind == "c" else x


# ---------------------------------------------------------------- one axis


@numpy_function_with_static("n", "axis")
def fft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional discrete Fourier transform along ``axis``, cropped or zero-padded to ``n``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.fft(np.array([1.0, 0.0, -1.0, 0.0])))
    array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
    """
    return _one_axis(a, n, axis, norm, out, "FFT", "fft")


@numpy_function_with_static("n", "axis")
def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of :func:`fft`.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.ifft(np.array([0.0, 2.0, 0.0, 2.0])))
    array([ 1.+0.j,  0.+0.j, -1.+0.j,  0.+0.j])
    """
    return _one_axis(a, n, axis, norm, out, "IFFT", "ifft")


@numpy_function_with_static("n", "axis")
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of real input: the ``n // 2 + 1`` non-negative frequencies.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.rfft(np.array([1.0, 1.0, 1.0])))
    array([3.+0.j, 0.+0.j])
    """
    return _one_axis(a, n, axis, norm, out, "RFFT", "rfft")


@numpy_function_with_static("n", "axis")
def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of :func:`rfft`: ``n`` (default ``2 * (m - 1)``) real values from ``m`` frequencies.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.irfft(np.array([4.0, 0.0, 0.0])))
    array([1., 1., 1., 1.])
    """
    return _one_axis(a, n, axis, norm, out, "IRFFT", "irfft")


@numpy_function_with_static("n", "axis")
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum.

    Deviation: NumPy 2.4 ignores ``out=`` here; xlac writes the result into it.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.hfft(np.array([1.0, 0.0, 0.0])))
    array([1., 1., 1., 1.])
    """
    swapped = _swap_direction(norm, "hfft")
    return _one_axis(_conj(asarray(a)), n, axis, swapped, out, "IRFFT", "hfft")


@numpy_function_with_static("n", "axis")
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of :func:`hfft`: the first half of the Hermitian spectrum of real input.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.ihfft(np.array([1.0, 1.0, 1.0, 1.0])))
    array([1.-0.j, 0.-0.j, 0.-0.j])
    """
    swapped = _swap_direction(norm, "ihfft")
    result = _conj(_one_axis(a, n, axis, swapped, None, "RFFT", "ihfft"))
    return _into(out, result, "ihfft")


# ---------------------------------------------------------------- several axes


def _nd(a, s, axes, norm, out, kind: str, op: str):
    x = asarray(a)
    sizes, axes = _nd_args(x.shape, s, axes, op, real_inverse=kind == "IRFFT")
    if kind in ("RFFT", "IRFFT") and not axes:
        raise IndexError(located(f"{op}: there must be at least one axis to transform"))
    return _transform(x, kind, sizes, axes, norm, out, op)


@numpy_function_with_static("s", "axes")
def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional transform over ``axes`` (default: all), each cropped or padded to ``s``.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.fftn(np.ones((2, 2))))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _nd(a, s, axes, norm, out, "FFT", "fftn")


@numpy_function_with_static("s", "axes")
def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of :func:`fftn`.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])))
    array([[1.+0.j, 1.+0.j],
           [1.+0.j, 1.+0.j]])
    """
    return _nd(a, s, axes, norm, out, "IFFT", "ifftn")


@numpy_function_with_static("s", "axes")
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional transform of real input; the last axis keeps ``s[-1] // 2 + 1`` frequencies.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.rfftn(np.ones((2, 2))))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _nd(a, s, axes, norm, out, "RFFT", "rfftn")


@numpy_function_with_static("s", "axes")
def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of :func:`rfftn`; the last axis has ``s[-1]`` (default ``2 * (m - 1)``) values.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.irfftn(np.array([[4.0, 0.0], [0.0, 0.0]])))
    array([[1., 1.],
           [1., 1.]])
    """
    return _nd(a, s, axes, norm, out, "IRFFT", "irfftn")


@numpy_function_with_static("s", "axes")
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """:func:`fftn` over the last two axes.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.fft2(np.ones((1, 2)))).tolist()
    [[(2+0j), 0j]]
    """
    return _nd(a, s, axes, norm, out, "FFT", "fft2")


@numpy_function_with_static("s", "axes")
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """:func:`ifftn` over the last two axes.

    Deviation: NumPy 2.4 ignores ``out=`` here; xlac writes the result into it.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.ifft2(np.array([[2.0, 0.0]]))).tolist()
    [[(1+0j), (1+0j)]]
    """
    return _nd(a, s, axes, norm, out, "IFFT", "ifft2")


@numpy_function_with_static("s", "axes")
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """:func:`rfftn` over the last two axes.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.rfft2(np.ones((1, 2)))).tolist()
    [[(2+0j), 0j]]
    """
    return _nd(a, s, axes, norm, out, "RFFT", "rfft2")


@numpy_function_with_static("s", "axes")
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """:func:`irfftn` over the last two axes.

    Deviation: NumPy 2.4 ignores ``out=`` here; xlac writes the result into it.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.irfft2(np.array([[2.0, 0.0]]))).tolist()
    [[1.0, 1.0]]
    """
    return _nd(a, s, axes, norm, out, "IRFFT", "irfft2")


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
              "fft2", "ifft2", "rfft2", "irfft2"):
    globals()[_name] = _out.returns_out(globals()[_name], 4)


# ---------------------------------------------------------------- frequencies and shifts


def _frequencies(integers, n: int, d):
    """``integers / (n * d)`` as NumPy computes it: ``integers * (1.0 / (n * d))``."""
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return multiply(integers, 1.0 / (n * d))
    return multiply(integers, divide(1.0, multiply(n, asarray(d))))


def _count(n, op: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(located(f"{op}: n should be an integer, got {n!r}")) from None
    if n < 0:
        raise ValueError(located(f"{op}: negative dimensions are not allowed, got n={n}"))
    return n


def _frequency_dtype(dtype, op: str):
    """The dtype ``fftfreq``/``rfftfreq`` return: float64 by default, else the real floating ``dtype`` asked."""
    if dtype is None:
        return np.dtype(np.float64)
    wanted = dtypes.canonical(dtype)
    if wanted.kind != "f":
        raise ValueError(located(f"{op}: dtype must be a real floating dtype, got {wanted}"))
    return wanted


@takes_device
@numpy_function_with_static("n")
def fftfreq(n, /, d=1.0, *, dtype=None):
    """The sample frequencies of :func:`fft`'s output for ``n`` points spaced ``d`` apart (float64 unless
    ``dtype`` names another real floating dtype; computed in float64 and rounded once).

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.fftfreq(4, d=0.5))
    array([ 0. ,  0.5, -1. , -0.5])
    """
    wanted = _frequency_dtype(dtype, "fftfreq")
    n = _count(n, "fftfreq")
    integers = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return ops.convert(asarray(_frequencies(ops.constant(integers, np.int64), n, d)), wanted)


@takes_device
@numpy_function_with_static("n")
def rfftfreq(n, /, d=1.0, *, dtype=None):
    """The sample frequencies of :func:`rfft`'s output for ``n`` points spaced ``d`` apart (float64 unless
    ``dtype`` names another real floating dtype).

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.rfftfreq(4))
    array([0.  , 0.25, 0.5 ])
    """
    wanted = _frequency_dtype(dtype, "rfftfreq")
    n = _count(n, "rfftfreq")
    return ops.convert(asarray(_frequencies(ops.iota((n // 2 + 1,), np.int64, 0), n, d)), wanted)


def _roll(x, shift: int, axis: int):
    """``x`` rolled by ``shift`` along ``axis``: two slices, swapped."""
    n = x.shape[axis]
    if n == 0 or shift % n == 0:
        return x
    cut = n - shift % n

    def part(lo, hi):
        return ops.slice(x, tuple(lo if i == axis else 0 for i in range(x.ndim)),
                         tuple(hi if i == axis else d for i, d in enumerate(x.shape)))
    return ops.concatenate([part(cut, n), part(0, cut)], axis)


def _shift(x, axes, sign: int, op: str):
    x = asarray(x)
    axes = list(range(x.ndim)) if axes is None else _axis_list(axes, x.ndim, op)
    shifts: dict[int, int] = {}
    for axis in axes:
        shifts[axis] = shifts.get(axis, 0) + sign * (x.shape[axis] // 2)
    for axis, shift in shifts.items():
        x = _roll(x, shift, axis)
    return x


@numpy_function_with_static("axes")
def fftshift(x, axes=None):
    """``x`` rolled so that the zero frequency is in the middle of each of ``axes`` (default: all).

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.fftshift(np.array([0, 1, 2, -2, -1])))
    array([-2, -1,  0,  1,  2])
    """
    return _shift(x, axes, 1, "fftshift")


@numpy_function_with_static("axes")
def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift`.

    >>> import numpy as np, xlac.numpy as xnp
    >>> np.asarray(xnp.fft.ifftshift(np.array([-2, -1, 0, 1, 2])))
    array([ 0,  1,  2, -2, -1])
    """
    return _shift(x, axes, -1, "ifftshift")
