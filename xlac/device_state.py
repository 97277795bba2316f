"""Moving a program's NumPy state onto the device: :func:`to_device`.

A model that keeps its weights and caches as NumPy arrays on its objects runs unchanged under
``xlac.compile``, its arrays read at every call and written back after it (see ``xlac.captures``), which
copies them to the device and back each time. ``to_device(model)`` replaces those NumPy arrays with
``xlac.Array``s in place, so that the same code then reads them where they live and writes them in place.
"""
from __future__ import annotations

import types

import numpy as np

from xlac.array import Array, asarray
from xlac.ir.dtypes import SUPPORTED

_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              types.CodeType, str, bytes, int, float, complex, bool, type(None), Array)


def to_device(obj, device=None):
    """Replace, in place, every NumPy array reachable from ``obj`` (its attributes, list items and dict
    values, and theirs, nested objects included) with an ``xlac.Array`` on ``device``; returns ``obj``.
    An array reached by two paths becomes one ``xlac.Array``, so the paths still share it. A NumPy view of
    another array reached here is refused (as two device arrays, a write through one would not show
    through the other); so is an object holding the arrays in a tuple, which cannot change in place.

    >>> import numpy as np, xlac
    >>> class Layer:
    ...     def __init__(self):
    ...         self.w = np.ones((2, 2))
    ...         self.caches = [np.zeros(3)]
    >>> layer = xlac.to_device(Layer())
    >>> type(layer.w).__name__, type(layer.caches[0]).__name__
    ('Array', 'Array')
    """
    places: list[tuple[object, object, np.ndarray, str]] = []     # (holder, key, array, path)
    _collect(obj, "obj", places, set())
    by_id = {id(array): path for _, _, array, path in places}
    for _, _, array, path in places:
        base = array.base
        while isinstance(base, np.ndarray):
            if id(base) in by_id:
                raise ValueError(f"xlac.to_device: {path} is a view of {by_id[id(base)]}; on the device they "
                                 "would be two arrays and a write through one would not show through the other. "
                                 "Keep one of them, or index the other from it")
            base = base.base
    moved: dict[int, Array] = {}
    for holder, key, array, _ in places:
        if id(array) not in moved:
            moved[id(array)] = asarray(array, device=device)
        if isinstance(holder, (list, dict)):
            holder[key] = moved[id(array)]
        else:
            setattr(holder, key, moved[id(array)])
    return obj


def _collect(obj, path: str, places: list, seen: set) -> None:
    if id(obj) in seen or isinstance(obj, _NOT_STATE):
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        children = [(obj, k, v, f"{path}[{k!r}]") for k, v in obj.items()]
    elif isinstance(obj, list):
        children = [(obj, i, v, f"{path}[{i}]") for i, v in enumerate(obj)]
    elif isinstance(obj, tuple):
        for i, v in enumerate(obj):
            if _is_state_array(v):
                raise ValueError(f"xlac.to_device: {path}[{i}] is a NumPy array inside a tuple, which cannot be "
                                 "changed in place; hold it in a list or an attribute")
            _collect(v, f"{path}[{i}]", places, seen)
        return
    elif hasattr(obj, "__dict__") and not isinstance(obj, np.ndarray):
        children = [(obj, k, v, f"{path}.{k}") for k, v in vars(obj).items()]
    else:
        return
    for holder, key, value, child_path in children:
        if _is_state_array(value):
            places.append((holder, key, value, child_path))
        else:
            _collect(value, child_path, places, seen)


def _is_state_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype in SUPPORTED
