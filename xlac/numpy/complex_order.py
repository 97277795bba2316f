"""NumPy's order of complex numbers, for ``max``, ``min``, ``argmax`` and ``argmin``: by the real part, then
the imaginary part (-0.0 equal to 0.0); an element with a NaN in either part wins (the first one along the
axis), and among equal elements the first wins, as ``np.maximum.reduce`` keeps its running value on a tie.
``nanmax`` and ``nanmin`` skip NaNs as ``np.fmax`` does; ``nanargmax`` and ``nanargmin`` look at NaNs as
(-inf, 0) and (inf, 0), as NumPy does; ``maximum.accumulate`` and ``minimum.accumulate`` keep the
running value as ``np.maximum`` does.

>>> import numpy as np, xlac
>>> x = np.array([1 + 2j, 3 - 1j, 3 - 5j, 3 - 1j])
>>> int(xlac.compile(np.argmax)(x)), complex(xlac.compile(np.min)(x))
(1, (1+2j))
"""
from __future__ import annotations

import numpy as np

from xlac.ir.dtypes import BOOL, INT64
from xlac.trace import ops


def arg_extreme(x, axis: int, op: str, valid=None):
    """The index along ``axis`` of the first largest (``op`` "max") or smallest complex element, or of the
    first NaN; ``valid``: where elements are (others never win; 0 where none is)."""
    real, imag = ops.real(x), ops.imag(x)
    nan = ops.or_(ops.compare(real, real, "NE"), ops.compare(imag, imag, "NE"))
    if valid is not None:
        nan = ops.and_(nan, valid)
    candidates = ops.not_(nan) if valid is None else ops.and_(valid, ops.not_(nan))
    for part in (real, imag):
        best = ops.reduce(ops.select(candidates, part, _never_wins(op, part)), op, (axis,))
        candidates = ops.and_(candidates, ops.compare(part, _along(best, x.shape, axis), "EQ"))
    return ops.select(ops.reduce(nan, "or", (axis,)), _first(nan, axis), _first(candidates, axis))


def extreme(x, axes: tuple, op: str, valid=None, initial=None, skip_nan=False):
    """The largest (``op`` "max") or smallest complex element over ``axes`` (see :func:`arg_extreme`), then
    compared with ``initial`` as ``np.maximum`` would with the running value starting at ``initial``;
    ``skip_nan``: NaNs never win, as in ``np.fmax`` (the first NaN where every element is NaN)."""
    if skip_nan:
        numbers = ops.not_(_is_nan(x))
        valid = numbers if valid is None else ops.and_(valid, numbers)
    kept = [d for d in range(x.ndim) if d not in axes]
    order = kept + list(axes)
    rows = tuple(x.shape[d] for d in kept)
    flat = ops.reshape(ops.transpose(x, order), rows + (int(np.prod([x.shape[d] for d in axes])),))
    flat_valid = None if valid is None else ops.reshape(ops.transpose(valid, order), flat.shape)
    index = arg_extreme(flat, len(rows), op, flat_valid)
    positions = ops.iota(flat.shape, INT64, len(rows))
    chosen = ops.compare(positions, _along(index, flat.shape, len(rows)), "EQ")
    value = _pick(flat, chosen, len(rows))
    if initial is None:
        return value
    start = ops.broadcast_to(ops.constant(complex(initial), x.dtype), value.shape)
    if skip_nan:
        start_wins = ops.or_(_is_nan(value), ops.and_(ops.not_(_is_nan(start)), _at_least(start, value, op)))
    else:
        start_wins = ops.or_(_is_nan(start), ops.and_(ops.not_(_is_nan(value)), _at_least(start, value, op)))
    if flat_valid is not None:
        start_wins = ops.or_(start_wins, ops.not_(ops.reduce(flat_valid, "or", (len(rows),))))
    return ops.select(start_wins, start, value)


def running_extreme(x, axis: int, op: str):
    """``np.maximum.accumulate`` (``op`` "max") or ``np.minimum.accumulate`` of complex ``x`` along ``axis``:
    each element combined with the running value, which keeps itself when it is a NaN or on a tie; in
    log2(n) steps, each combining an element with the one ``step`` before it."""
    n = x.shape[axis]
    step = 1
    while step < n:
        earlier = _shifted(x, axis, step)
        later = ops.slice(x, _at(x.ndim, axis, step, 0), _at(x.ndim, axis, n, x.shape))
        earlier_wins = ops.or_(_is_nan(earlier),
                               ops.and_(ops.not_(_is_nan(later)), _at_least(earlier, later, op)))
        head = ops.slice(x, (0,) * x.ndim, _at(x.ndim, axis, step, x.shape))
        x = ops.concatenate([head, ops.select(earlier_wins, earlier, later)], axis)
        step *= 2
    return x


def _shifted(x, axis: int, step: int):
    """The elements of ``x`` but the last ``step`` along ``axis``."""
    return ops.slice(x, (0,) * x.ndim, _at(x.ndim, axis, x.shape[axis] - step, x.shape))


def _at(ndim: int, axis: int, value: int, others):
    """A start or limit tuple: ``value`` at ``axis``, else ``others`` (an int or the shape)."""
    return tuple(value if d == axis else (others if isinstance(others, int) else others[d]) for d in range(ndim))


def _pick(x, chosen, axis: int):
    """The element of ``x`` where ``chosen`` (one per row) is True, bit for bit (-0.0 and NaN kept)."""
    real = ops.reduce(ops.select(chosen, ops.real(x), _never_wins("max", ops.real(x))), "max", (axis,))
    imag = ops.reduce(ops.select(chosen, ops.imag(x), _never_wins("max", ops.imag(x))), "max", (axis,))
    return ops.complex(real, imag)


def _at_least(a, b, op: str):
    """``a >= b`` in NumPy's complex order (``a <= b`` for "min")."""
    strictly, tie = ("GT", "GE") if op == "max" else ("LT", "LE")
    real_a, real_b = ops.real(a), ops.real(b)
    return ops.or_(ops.compare(real_a, real_b, strictly),
                   ops.and_(ops.compare(real_a, real_b, "EQ"), ops.compare(ops.imag(a), ops.imag(b), tie)))


def without_nans(x, op: str):
    """``x`` with each NaN element replaced by (-inf, 0) for ``op`` "max" ((inf, 0) for "min"), as
    ``np.nanargmax`` and ``np.nanargmin`` do before they look."""
    loser = ops.broadcast_to(ops.constant(complex(-np.inf if op == "max" else np.inf, 0), x.dtype), x.shape)
    return ops.select(_is_nan(x), loser, x)


def _is_nan(x):
    real, imag = ops.real(x), ops.imag(x)
    return ops.or_(ops.compare(real, real, "NE"), ops.compare(imag, imag, "NE"))


def _never_wins(op: str, part):
    return ops.full(part.shape, -np.inf if op == "max" else np.inf, part.dtype)


def _along(reduced, shape: tuple, axis: int):
    return ops.broadcast_in_dim(reduced, shape, tuple(d for d in range(len(shape)) if d != axis))


def _first(hits, axis: int):
    return ops.argmax(ops.convert(hits, np.dtype("uint8")) if hits.dtype == BOOL else hits, axis, INT64)
