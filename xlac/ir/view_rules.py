"""The view primitives: how each one's result shares its operand's memory, in one table.

NumPy's basic indexing, ``reshape``, ``transpose``, ``.real`` and friends return views. A primitive that
can make a view carries a :class:`ViewRule` (``primitive.view_rule``) with the two facts about it that
xlac needs, read by two stages:

- ``strides``: the element strides of the result from the operand's, or None where NumPy would copy
  (a reshape of a non-contiguous array). The tracer (:mod:`xlac.trace.views`) reads it to decide, as
  NumPy does, whether a result is a view.
- ``write_back``: the operand with the part the result views replaced by a new value. Functionalization
  (:mod:`xlac.passes.functionalize`) reads it to carry a store through a view into the array that owns
  the memory.

``write_back(builder, node, parent, view, extra)`` emits pure nodes through ``builder.emit(primitive,
operands, **attrs)`` and ``builder.constant(value, dtype)``; ``extra`` holds the view node's other
operands (a ``dynamic_slice``'s start indices).

>>> from xlac.ir import primitives as P
>>> P.transpose.view_rule is not None, P.add.view_rule is None
(True, True)
>>> nocopy_reshape_strides((2, 3), (3, 1), (3, 2))
(2, 1)
>>> nocopy_reshape_strides((3, 2), (1, 3), (6,)) is None     # a transposed array: NumPy copies
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlac.ir import primitives as P


@dataclass(frozen=True)
class ViewRule:
    """How a view primitive's result shares memory with its operand 0 (see the module docstring)."""

    strides: Callable       # (node, operand strides) -> result strides, or None where NumPy copies
    write_back: Callable    # (builder, node, parent, view, extra) -> parent with ``view`` written in


def contiguous_strides(shape) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def nocopy_reshape_strides(shape, strides, new_shape):
    """The strides of ``reshape(new_shape)`` as a view, or None where NumPy must copy (its
    ``_attempt_nocopy_reshape``, C order)."""
    if 0 in shape:
        return contiguous_strides(new_shape)
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    old_dims, old_strides = [d for d, _ in old], [s for _, s in old]
    new_strides = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(old_dims):
        np_, op = new_shape[ni], old_dims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old_dims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]:
                return None
        new_strides[nj - 1] = old_strides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * new_shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new_shape)):
        new_strides[nk] = last
    return tuple(new_strides)


# ---------------------------------------------------------------- the rules, one primitive each

def _slice_strides(node, strides):
    return tuple(s * step for s, step in zip(strides, node.attrs["strides"]))


def _slice_write_back(builder, node, parent, view, extra):
    start, steps = node.attrs["start"], node.attrs["strides"]
    if all(s == 1 for s in steps):
        starts = [builder.constant(s, np.int64) for s in start]
        return builder.emit(P.dynamic_update_slice, (parent, view, *starts))
    # A strided slice: pad the view into place and select it where a mask padded the same way is set.
    shape = parent.type.shape
    low = tuple(start)
    interior = tuple(s - 1 for s in steps)
    high = tuple(d - (lo + (n - 1) * s + 1) if n else d - lo
                 for d, lo, n, s in zip(shape, low, view.type.shape, steps))
    placed = builder.emit(P.pad, (view, builder.constant(0, parent.type.dtype)), low=low, high=high,
                          interior=interior)
    ones = builder.emit(P.broadcast_in_dim, (builder.constant(True, np.bool_),), shape=view.type.shape,
                        broadcast_dimensions=())
    mask = builder.emit(P.pad, (ones, builder.constant(False, np.bool_)), low=low, high=high, interior=interior)
    return builder.emit(P.select, (mask, placed, parent))


def _same_strides(node, strides):
    return strides


def _dynamic_slice_write_back(builder, node, parent, view, extra):
    return builder.emit(P.dynamic_update_slice, (parent, view, *extra))


def _reverse_strides(node, strides):
    return tuple(-s if i in node.attrs["dimensions"] else s for i, s in enumerate(strides))


def _reverse_write_back(builder, node, parent, view, extra):
    return builder.emit(P.reverse, (view,), dimensions=node.attrs["dimensions"])


def _transpose_strides(node, strides):
    return tuple(strides[p] for p in node.attrs["permutation"])


def _transpose_write_back(builder, node, parent, view, extra):
    inverse = tuple(int(i) for i in np.argsort(node.attrs["permutation"]))
    return builder.emit(P.transpose, (view,), permutation=inverse)


def _reshape_strides(node, strides):
    return nocopy_reshape_strides(node.operands[0].type.shape, strides, node.attrs["shape"])


def _reshape_write_back(builder, node, parent, view, extra):
    return builder.emit(P.reshape, (view,), shape=parent.type.shape)


def _complex_part_strides(node, strides):
    # one float of each complex element: strides in floats, twice the complex ones (not contiguous)
    return tuple(2 * s for s in strides)


def _real_write_back(builder, node, parent, view, extra):
    return builder.emit(P.complex_, (view, builder.emit(P.imag, (parent,))))


def _imag_write_back(builder, node, parent, view, extra):
    return builder.emit(P.complex_, (builder.emit(P.real, (parent,)), view))


def _broadcast_strides(node, strides):
    a = node.attrs
    out = [0] * len(a["shape"])
    for src, dst in enumerate(a["broadcast_dimensions"]):
        if node.operands[0].type.shape[src] == a["shape"][dst]:
            out[dst] = strides[src]
    return tuple(out)


def _never_written(builder, node, parent, view, extra):
    # A broadcast view repeats elements (stride 0), so NumPy makes it read-only.
    raise AssertionError(f"xlac internal error: a {node.primitive.name} view is read-only and never written")


P.slice_.register(view_rule=ViewRule(_slice_strides, _slice_write_back))
P.dynamic_slice.register(view_rule=ViewRule(_same_strides, _dynamic_slice_write_back))
P.reverse.register(view_rule=ViewRule(_reverse_strides, _reverse_write_back))
P.transpose.register(view_rule=ViewRule(_transpose_strides, _transpose_write_back))
P.reshape.register(view_rule=ViewRule(_reshape_strides, _reshape_write_back))
P.real.register(view_rule=ViewRule(_complex_part_strides, _real_write_back))
P.imag.register(view_rule=ViewRule(_complex_part_strides, _imag_write_back))
P.broadcast_in_dim.register(view_rule=ViewRule(_broadcast_strides, _never_written))
