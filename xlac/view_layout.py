"""A NumPy view as indexing of the array that owns its memory: the steps that take the owner to the view.

A view of an array made during a compiled call (``b[1:-1]``, ``b.T``, ``b[2]``, ``b[None, ::-1]``) must be
the same view of that array's traced value once a traced write reaches either. NumPy keeps no record of how a
view was made, only its memory layout: :func:`view_steps` finds basic indexing (a slice per axis, with any
step, or one index), then dropped axes, a transposition and new axes of length 1, that give the view's layout
from the owner's, and checks that they do; the same steps applied to the traced value make its view.

>>> import numpy as np
>>> owner = np.arange(12.0).reshape(3, 4)
>>> steps = view_steps(owner, owner[1:, ::-2].T)
>>> np.array_equal(steps(owner), owner[1:, ::-2].T)
True
>>> view_steps(owner, np.broadcast_to(owner[0], (2, 4))) is None     # a layout basic indexing cannot make
True
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def memory_owner(array: np.ndarray) -> np.ndarray:
    """The array at the end of ``array``'s chain of ``base`` arrays (``array`` itself when it owns its memory)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def view_steps(owner: np.ndarray, view: np.ndarray) -> Callable | None:
    """A function taking ``owner`` (or any array of its shape: a traced value) to ``view``, a view of its
    memory, by basic indexing, ``squeeze``, ``transpose`` and ``expand_dims``, or for contiguous arrays by
    ``reshape`` of a range of the flattened owner; None when there is none."""
    if view.dtype != owner.dtype or any(s <= 0 for s in owner.strides) or owner.size == 0:
        return None
    steps = _indexing_steps(owner, view) or _contiguous_steps(owner, view)
    if steps is None:
        return None
    made = steps(owner)
    long_strides = [(s, t) for n, s, t in zip(view.shape, made.strides, view.strides) if n > 1]
    if made.shape != view.shape or _address(made) != _address(view) or any(s != t for s, t in long_strides):
        return None
    return steps


def _contiguous_steps(owner, view) -> Callable | None:
    if not (owner.flags.c_contiguous and view.flags.c_contiguous):
        return None
    start = (_address(view) - _address(owner)) // owner.itemsize
    return lambda array: array.reshape(-1)[start:start + view.size].reshape(view.shape)


def _indexing_steps(owner, view) -> Callable | None:
    offset = _address(view) - _address(owner)
    by_stride = sorted(range(owner.ndim), key=lambda j: -owner.strides[j])
    starts = [0] * owner.ndim
    for j in by_stride:
        starts[j], offset = divmod(offset, owner.strides[j])
    if offset or not all(0 <= s < n for s, n in zip(starts, owner.shape)):
        return None
    index = [slice(s, s + 1) for s in starts]
    axis_of_view = []                           # per view axis longer than 1, the owner axis it runs along
    for n, stride in zip(view.shape, view.strides):
        if n == 1:
            continue
        j = _owner_axis(owner, starts, index, n, stride)
        if j is None:
            return None
        step = stride // owner.strides[j]
        stop = starts[j] + step * (n - 1) + (1 if step > 0 else -1)
        index[j] = slice(starts[j], stop if stop >= 0 else None, step)
        axis_of_view.append(j)
    kept = sorted(axis_of_view)
    dropped = tuple(j for j in range(owner.ndim) if j not in kept)
    order = tuple(kept.index(j) for j in axis_of_view)
    new_axes = tuple(k for k, n in enumerate(view.shape) if n == 1)

    def steps(array):
        taken = array[tuple(index)]
        taken = np.squeeze(taken, axis=dropped) if dropped else taken
        taken = np.transpose(taken, order) if order != tuple(range(len(order))) else taken
        return np.expand_dims(taken, new_axes) if new_axes else taken

    return steps


def _owner_axis(owner, starts, index, n: int, stride: int) -> int | None:
    """The owner axis, not taken yet, that a view axis of length ``n`` and byte ``stride`` runs along."""
    for j in sorted(range(owner.ndim), key=lambda j: -owner.strides[j]):
        taken = index[j].stop != starts[j] + 1 or index[j].step is not None
        if taken or stride % owner.strides[j]:
            continue
        step = stride // owner.strides[j]
        if step != 0 and 0 <= starts[j] + step * (n - 1) < owner.shape[j]:
            return j
    return None


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]
