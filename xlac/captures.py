"""Arrays a compiled function reaches from outside its arguments: through its closure, the globals
it names, and the attributes and items of those and of a bound ``self``.

NumPy code keeps state in such arrays (a model's KV cache on ``self``, an optimizer's moments in a
closure) and expects every call to see their current contents, and its writes to land in them. So
each outside array a traced function reads becomes an *implicit argument* of the executable:

- while tracing, each outside array an ``xlac.numpy`` function meets gets a graph input
  (``Trace.capture``); afterwards :func:`locate` finds the path the function reaches it by
  (``self.cache``, ``W``, ``state['m']``);
- at every call, :meth:`Captures.gather` follows those paths again and passes what it finds. Another
  array of the same shape and dtype is simply passed; another shape or dtype, or a path that no longer
  resolves, makes the call trace again;
- a write to a captured array is written back after the call, as for an argument.

An outside array that cannot be located (reached through code xlac does not look into) is passed as
the same object at every call: its contents are read per call, but rebinding the name that held it
goes unseen. Arrays the call makes are not outside state (see :mod:`xlac.outside_state`); one it made
unseen (``t = b * 2``: no NumPy call noted it) that becomes an implicit argument while tracing is a
constant when nothing refers to it once the trace ends.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> class Counter:
...     def __init__(self):
...         self.counts = xlac.asarray(np.zeros(4))
...     @xlac.compile
...     def bump(self, i):
...         self.counts[i] += 1         # updates c.counts in place on its device
>>> c = Counter(); c.bump(1); c.bump(1); c.counts
Array([0., 2., 0., 0.], dtype=float64)

NumPy's own indexing cannot take a traced index or value, so write into a captured NumPy array with
``xlac.numpy`` functions (``xnp.copyto(state, x)``, ``xnp.add(state, x, out=state)``), or hold it as an
``xlac.Array``, whose ``x[i] = v`` and ``x += v`` work inside compiled functions.
"""
from __future__ import annotations

import sys
import types
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlac.callables import code_and_bound_values
from xlac.argument_specs import leaf_key
from xlac.ir import primitives as P
from xlac.ir.graph import Node

_MAX_DEPTH = 3            # root.a.b.c
_MAX_VISITED = 5000       # objects examined per search
_MAX_CHILDREN = 256       # entries examined per dict, list, tuple or object
_CODE_OBJECTS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.CodeType)


@dataclass
class Capture:
    """One implicit argument: how to find its array at call time, and the array's signature."""

    name: str                                   # how the function reaches it: "self.cache", "W", "<outside 0>"
    resolve: Callable[[dict], object]           # static values by key -> the array to pass now
    key: object                                 # its leaf_key when traced
    guard: Callable[[dict], bool] | None = None  # for a view of a located array: is that array still there?


class Captures:
    """The implicit arguments of one executable, in the order the executable takes them (after the
    explicit ones)."""

    def __init__(self, items: list[Capture]):
        self.items = items

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.items]

    def gather(self, statics: tuple) -> list | None:
        """The arrays to pass for this call, or None when one changed shape, dtype or place (retrace)."""
        static_values = dict(statics)
        arrays = []
        for capture in self.items:
            try:
                array = capture.resolve(static_values)
            except (LookupError, AttributeError, ValueError):
                return None
            if leaf_key(array) != capture.key or (capture.guard is not None and not capture.guard(static_values)):
                return None
            arrays.append(array)
        return arrays


def is_temporary(entry: tuple) -> bool:
    """Whether ``entry[0]`` (held by nothing but the ``entry`` tuple) died with the function's frame: a
    temporary array that can safely become a constant. A view is temporary when every array up its
    ``base`` chain is held only by the view below it (``np.arange(k)[None, :]``); a view of an array that
    lives on, or of memory that is not a NumPy array's, is not: its contents may change between calls."""
    # References to the array: the entry tuple and getrefcount's own argument.
    if sys.getrefcount(entry[0]) > 2:
        return False
    base = getattr(entry[0], "base", None)
    while base is not None:
        # References to a base: the view below it, the name ``base`` and getrefcount's argument.
        if not isinstance(base, np.ndarray) or sys.getrefcount(base) > 3:
            return False
        base = base.base
    return True


# ---------------------------------------------------------------- finding paths


@dataclass(frozen=True)
class _Root:
    name: str
    resolve: Callable[[dict], object]


def locate(arrays: list, fn, statics: tuple, static_names: dict) -> list[tuple[str, Callable] | None]:
    """For each of ``arrays``, ``(name, resolve)`` for the shortest path ``fn`` reaches it by, or None.

    Roots are the static arguments (``self`` of a compiled method), the values ``fn`` binds (a partial's
    arguments, the ``self`` of a bound method or callable object), ``fn``'s closure cells and the
    globals its code names; from them the search follows instance attributes, dict and sequence items,
    and the attributes of classes and modules that ``fn``'s code names, up to three steps deep.
    """
    wanted = {id(a): i for i, a in enumerate(arrays)}
    found: list = [None] * len(arrays)
    fn, bound_values = code_and_bound_values(fn)
    code = getattr(fn, "__code__", None)
    names = _code_names(code) if code is not None else set()
    queue = deque((root.resolve(dict(statics)), root.name, root.resolve, 0)
                  for root in _roots(fn, code, names, statics, static_names, bound_values))
    seen: set[int] = set()
    remaining = len(wanted)
    while queue and remaining and len(seen) < _MAX_VISITED:
        obj, name, resolve, depth = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        index = wanted.get(id(obj))
        if index is not None:
            found[index] = (name, resolve)
            remaining -= 1
            continue
        if depth == _MAX_DEPTH or isinstance(obj, np.ndarray) or hasattr(obj, "__xlac_array__"):
            continue
        for step, child, child_resolve in _children(obj, names, resolve):
            queue.append((child, name + step, child_resolve, depth + 1))
    return found


def _roots(fn, code, names, statics, static_names, bound_values):
    for key, value in statics:
        yield _Root(static_names.get(key, str(key)), lambda s, key=key: s[key])
    for name, value in bound_values:       # a partial's arguments, a bound method's or callable's self
        yield _Root(name, lambda s, value=value: value)
    if code is None:
        return
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            cell.cell_contents
        except ValueError:      # a cell not yet filled
            continue
        yield _Root(name, lambda s, cell=cell: cell.cell_contents)
    fn_globals = getattr(fn, "__globals__", {})
    for name in sorted(names):
        if name in fn_globals:
            yield _Root(name, lambda s, g=fn_globals, name=name: g[name])


def _code_names(code) -> set[str]:
    """Global and attribute names used by ``code`` and the functions defined inside it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _children(obj, names, resolve):
    """``(step text, child, child resolver)`` for what the search may follow from ``obj``."""
    if isinstance(obj, dict):
        for key, value in list(obj.items())[:_MAX_CHILDREN]:
            if isinstance(key, (str, int)):
                yield f"[{key!r}]", value, lambda s, key=key: resolve(s)[key]
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj[:_MAX_CHILDREN]):
            yield f"[{i}]", value, lambda s, i=i: resolve(s)[i]
    elif isinstance(obj, (types.ModuleType, type)):
        namespace = vars(obj)
        for name in sorted(names):
            if name in namespace:
                yield f".{name}", namespace[name], lambda s, name=name: getattr(resolve(s), name)
    elif not isinstance(obj, _CODE_OBJECTS) and hasattr(obj, "__dict__"):
        for name, value in list(vars(obj).items())[:_MAX_CHILDREN]:
            yield f".{name}", value, lambda s, name=name: getattr(resolve(s), name)


# ---------------------------------------------------------------- after tracing


def finish(graph, entries: list, fn, statics: tuple, static_names: dict) -> Captures | None:
    """Turn the outside arrays a trace captured (``(array, Tracer)`` entries) into implicit arguments:
    temporaries become constants, the rest get the name and the call-time resolver :func:`locate` finds for
    them. Updates the graph's inputs."""
    if not entries:
        return None
    kept = []
    for entry in entries:
        if is_temporary(entry):
            _make_constant(graph, *entry)
        else:
            kept.append(entry)
    if not kept:
        return None
    arrays = [array for array, _ in kept]
    bases = [_owner(array) for array in arrays]
    paths = locate(arrays + [b for b in bases if b is not None], fn, statics, static_names)
    base_paths = dict(zip((id(b) for b in bases if b is not None), paths[len(arrays):]))
    items = []
    for k, ((array, tracer), path, base) in enumerate(zip(kept, paths, bases)):
        if path is not None:
            name, resolve = path
            guard = None
        else:
            base_path = base_paths.get(id(base)) if base is not None else None
            name = f"{base_path[0]}<view>" if base_path else f"<outside array {k}>"
            resolve = (lambda s, array=array: array)
            guard = (lambda s, base=base, at=base_path[1]: at(s) is base) if base_path else None
        graph.input_names[graph.inputs.index(tracer.value)] = name
        items.append(Capture(name, resolve, leaf_key(array), guard))
    return Captures(items)


def _owner(array):
    """The array owning a NumPy view's memory (None for a non-view)."""
    if not isinstance(array, np.ndarray) or array.base is None:
        return None
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _make_constant(graph, array, tracer) -> None:
    value = tracer.value
    index = graph.inputs.index(value)
    del graph.inputs[index], graph.input_names[index]
    graph.nodes.insert(0, Node(P.constant, (), {"value": np.array(np.asarray(array), dtype=value.type.dtype)},
                               (value,)))
