"""What a call does besides returning a value, decided from its target: the one table of known effects that
the converter's analysis (:mod:`xlac.convert.array_writes`) and its runtime (``runtime.call``) read.

A :class:`CallEffects` says which of a call's arguments it writes into in place (``self``: a method's
object; an int: a positional argument; besides, any call writes into its ``out=`` argument), which arguments its result may be
a view of, and whether it acts on Python state (prints, changes a list, reads a file): run again, that
would happen again. :func:`effects_of` looks a Python object up (the target, known when the call runs);
:func:`method_effects` a method by name where only the name is known (the object's type is not, before
the program runs). A call to anything the table does not know may write into its array arguments and act
on Python state; :data:`UNKNOWN` says so.

>>> import numpy as np
>>> effects_of(np.sin).python_state, effects_of(np.copyto).writes, effects_of(print).python_state
(False, frozenset({0}), True)
>>> effects_of([].append).writes, effects_of(np.zeros(2).fill).writes, effects_of(np.zeros(2).sum).writes
(frozenset({'self'}), frozenset({'self'}), frozenset())
"""
from __future__ import annotations

import builtins
import collections
import io
import types
from dataclasses import dataclass

import numpy as np

__all__ = ["CallEffects", "PURE", "UNKNOWN", "effects_of", "method_effects", "ARRAY_WRITING_METHODS",
           "VIEW_ATTRIBUTES"]


@dataclass(frozen=True)
class CallEffects:
    """A call's effects: ``writes``, the arguments it writes into in place (``"self"``, positions; ``"*"``:
    any; and ``out=``, whatever the target); ``view_of``, those its result may share memory with; ``python_state``: it acts on Python
    state (output, a container, a file)."""

    writes: frozenset = frozenset()
    view_of: frozenset = frozenset()
    python_state: bool = False


PURE = CallEffects()
UNKNOWN = CallEffects(frozenset({"self", "*"}), frozenset({"self", "*"}), True)   # "*": every argument

ARRAY_WRITING_METHODS = frozenset({    # NumPy array methods that write into the array
    "fill", "sort", "put", "itemset", "resize", "partition", "setfield", "byteswap"})
_ARRAY_VIEW_METHODS = frozenset({
    "reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal", "__getitem__", "__array__"})
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})   # `a.T`: a view of `a`

# Python's containers and files: the methods that change them
_CONTAINER_WRITING_METHODS = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__",
           "__delitem__", "__iadd__"},
    dict: {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"},
    set: {"add", "update", "discard", "remove", "pop", "clear", "difference_update", "intersection_update",
          "symmetric_difference_update"},
    bytearray: {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "__setitem__"},
    collections.deque: {"append", "appendleft", "extend", "extendleft", "pop", "popleft", "remove", "clear",
                        "rotate", "insert"},
}
_WRITING_BY_NAME = frozenset().union(*_CONTAINER_WRITING_METHODS.values()) | {"write", "writelines", "send"}
_PYTHON_STATE_BUILTINS = {builtins.print, builtins.input, builtins.open, builtins.exec, builtins.eval,
                          builtins.setattr, builtins.delattr, builtins.breakpoint}

# NumPy functions whose result may be a view of their first argument
_NUMPY_VIEWS = {np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.moveaxis, np.swapaxes,
                np.asarray, np.asanyarray, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.diagonal,
                np.broadcast_to, np.real, np.imag, np.flip, np.fliplr, np.flipud, np.rot90, np.split,
                np.array_split, np.hsplit, np.vsplit, np.matrix_transpose, np.permute_dims,
                np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view}
# NumPy functions that write into their first argument (besides any function's `out=`)
_NUMPY_WRITERS = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis,
                  np.random.shuffle}


def effects_of(target) -> CallEffects:
    """The effects of calling ``target``, a Python object (see the module's docstring)."""
    owner = getattr(target, "__self__", None)
    name = getattr(target, "__name__", None)
    if isinstance(owner, np.ufunc):                         # np.add.at(a, i, v) writes a
        return CallEffects(frozenset({0})) if name == "at" else PURE
    if isinstance(owner, np.ndarray):
        return _array_method(name)
    if isinstance(owner, (list, dict, set, bytearray, collections.deque)):
        changes = name in _CONTAINER_WRITING_METHODS.get(type(owner), ())
        return CallEffects(frozenset({"self"}), python_state=True) if changes else PURE
    if isinstance(owner, io.IOBase):
        return CallEffects(python_state=True)
    if isinstance(target, np.ufunc):
        return PURE
    try:
        if target in _NUMPY_WRITERS:
            return CallEffects(frozenset({0}))
        if target in _NUMPY_VIEWS:
            return CallEffects(view_of=frozenset({0}))
        if target in _PYTHON_STATE_BUILTINS:
            return CallEffects(python_state=True)
    except TypeError:                                        # an unhashable callable
        return UNKNOWN
    module = getattr(target, "__module__", None) or ""
    if module == "numpy" or module.startswith("numpy.") and not module.startswith("numpy.random"):
        return PURE
    if isinstance(target, (types.BuiltinFunctionType, type)) and module == "builtins":
        return PURE                                          # len, range, float, sum, max, ...
    if module == "math":
        return PURE
    return UNKNOWN


def method_effects(name: str) -> CallEffects:
    """The effects of ``x.name(...)`` where ``x``'s type is not known: a NumPy array method's (writing,
    making a view, or neither), a container's method that changes it, else :data:`UNKNOWN`.

    >>> method_effects("mean") == PURE, method_effects("fill").writes, method_effects("append").python_state
    (True, frozenset({'self'}), True)
    """
    if name in _WRITING_BY_NAME:
        return CallEffects(frozenset({"self"}), python_state=True)
    if hasattr(np.ndarray, name):
        return _array_method(name)
    return UNKNOWN


def _array_method(name: str) -> CallEffects:
    if name in ARRAY_WRITING_METHODS:
        return CallEffects(frozenset({"self"}))
    if name in _ARRAY_VIEW_METHODS:
        return CallEffects(view_of=frozenset({"self"}))
    return PURE
