"""State a traced function rebinds outside its arguments: ``self.k = f(self.k)``, a global or a closed-over
object's attribute assigned a traced array.

NumPy code keeps state in attributes, globals and closed-over objects and rebinds it
(``self.m = beta * self.m + g``). While xlac traces such a function, what it assigns there is a Tracer, an
abstract value that must never stay in a user's object. So each trace watches the places the function
reaches from outside its arguments (those :mod:`xlac.captures` searches: a compiled method's ``self``,
closure cells, the globals its code names, and their attributes and items, three steps deep):

- before the trace, :class:`StateWatch` notes what each place holds;
- after it (whether it succeeded or raised), every place that holds a traced value gets its old value back;
- for ``xlac.compile``, a place rebound to a traced array becomes an extra output of the executable,
  assigned to that place after every call (:class:`Rebindings`). A NumPy array the function read per
  call gets a NumPy array back; anything else gets an ``xlac.Array``, as the function's results are. The
  next call reads the new value as any outside array (another shape traces again);
- a traced value anywhere else (appended to a list, inside a tuple or a new object, or stored inside a
  transformed function, ``xlac.grad``, ``xlac.vmap``) raises :class:`xlac.RebindingError` naming the
  place and the line that computed the value; so does an array place rebound to a NumPy value computed
  at trace time (``self.n = self.n + 1`` with NumPy's ``+`` would run once, not at every call).

>>> import numpy as np, xlac
>>> class Running:
...     def __init__(self):
...         self.total = np.zeros(2)
...     @xlac.compile
...     def add(self, x):
...         self.total = self.total + x
...         return self.total
>>> r = Running(); _ = r.add(np.ones(2)); _ = r.add(np.ones(2)); r.total
array([2., 2.])
"""
from __future__ import annotations

import functools
import types
from collections import deque
import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlac.captures import _CODE_OBJECTS, _MAX_CHILDREN, _MAX_DEPTH, _MAX_VISITED, _code_names
from xlac.errors import RebindingError, located
from xlac.ir.graph import SourceLocation
from xlac.trace.tracer import Tracer

_ABSENT = type("Absent", (), {"__repr__": lambda self: "<absent>"})()   # a place that did not exist
_MAX_WATCHED = 4096          # entries noted per list or dict; longer ones are not watched


# ---------------------------------------------------------------- places


@dataclass
class _Container:
    """An object whose entries the watch notes: an object's attributes, a dict's or list's items, a
    closure cell's contents, or some of the globals."""

    obj: object
    kind: str                              # "attr", "item", "global" or "cell"
    path: str                              # how the function reaches it: "self", "state", ""
    resolve: Callable[[dict], object]      # static values -> the container now
    before: dict                           # key -> what it held when the trace began (_ABSENT: nothing)
    depth: int

    def place(self, key) -> str:
        """The readable path of an entry: ``self.k``, ``state['m']``, ``K``."""
        if self.kind == "attr":
            return f"{self.path}.{key}"
        if self.kind == "item":
            return f"{self.path}[{key!r}]"
        return self.path if self.kind == "cell" else str(key)

    def now(self) -> dict:
        """What the watched entries hold now (every entry, for a whole object, dict or list)."""
        obj = self.obj
        if self.kind == "cell":
            return {None: _cell_contents(obj)}
        if self.kind == "global":
            return {key: obj.get(key, _ABSENT) for key in self.before}
        if self.kind == "attr" and isinstance(obj, (types.ModuleType, type)):
            namespace = vars(obj)
            return {key: namespace.get(key, _ABSENT) for key in self.before}
        entries = vars(obj) if self.kind == "attr" else obj
        return dict(enumerate(entries)) if isinstance(entries, list) else dict(entries)

    def changed(self):
        """``(key, value now)`` for each entry that holds another object than when the trace began."""
        now = self.now()
        for key in set(now) | set(self.before):
            value = now.get(key, _ABSENT)
            if value is not self.before.get(key, _ABSENT):
                yield key, value

    def restore(self, key) -> None:
        """Put back what entry ``key`` held when the trace began (a list: all its items)."""
        value = self.before.get(key, _ABSENT)
        if isinstance(self.obj, list):
            self.obj[:] = [self.before[i] for i in range(len(self.before))]
        else:
            _assign(self.obj, self.kind, key, value)


def _assign(holder, kind: str, key, value) -> None:
    """``holder.key = value`` (or the item, the cell); ``_ABSENT`` deletes the entry."""
    if kind == "cell":
        if value is _ABSENT:
            del holder.cell_contents
        else:
            holder.cell_contents = value
    elif kind == "attr":
        if value is _ABSENT:
            delattr(holder, key)
        else:
            setattr(holder, key, value)
    elif value is _ABSENT:
        del holder[key]
    else:
        holder[key] = value


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:          # a cell not yet filled
        return _ABSENT


def _watchable(obj) -> bool:
    """Whether the watch notes the entries of ``obj`` (arrays and code are leaves)."""
    if isinstance(obj, (dict, list)):
        return len(obj) <= _MAX_WATCHED
    if isinstance(obj, (np.ndarray, np.generic, Tracer, *_CODE_OBJECTS)) or hasattr(obj, "__xlac_array__"):
        return False
    return hasattr(obj, "__dict__")


def _container(obj, path, resolve, depth, names) -> _Container:
    if isinstance(obj, (types.ModuleType, type)):
        namespace = vars(obj)
        before = {name: namespace[name] for name in names if name in namespace}
        return _Container(obj, "attr", path, resolve, before, depth)
    kind = "item" if isinstance(obj, (dict, list)) else "attr"
    entries = obj if kind == "item" else vars(obj)
    before = dict(enumerate(entries)) if isinstance(entries, list) else dict(entries)
    return _Container(obj, kind, path, resolve, before, depth)


def _function_roots(fn, statics: tuple, static_names: dict, names: set, fixed: bool):
    """The containers a function starts from: its static arguments (a method's ``self``; ``fixed``: the
    same object at every call, else the static value of the call), its closure cells and the globals its
    code names."""
    for key, value in statics:
        if _watchable(value):
            resolve = (lambda s, value=value: value) if fixed else (lambda s, key=key: s[key])
            yield value, static_names.get(key, str(key)), resolve, 0
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        yield _Container(cell, "cell", name, lambda s, cell=cell: cell, {None: _cell_contents(cell)}, -1)
    fn_globals = getattr(fn, "__globals__", None)
    if fn_globals is not None:
        before = {name: fn_globals.get(name, _ABSENT) for name in sorted(names)}
        yield _Container(fn_globals, "global", "", lambda s, g=fn_globals: g, before, -1)


def _function_and_objects(fn) -> tuple[object, list[tuple[str, object]]]:
    """The Python function whose code runs when ``fn`` is called, and the objects it carries, named as
    its parameters: a bound method's or a callable object's ``self``, a partial's arguments."""
    if isinstance(fn, types.MethodType):
        return fn.__func__, [("self", fn.__self__)]
    if isinstance(fn, functools.partial):
        inner, carried = _function_and_objects(fn.func)
        code = getattr(inner, "__code__", None)
        params = code.co_varnames[len(carried):code.co_argcount] if code is not None else ()
        named = [(params[i] if i < len(params) else f"args[{i}]", arg) for i, arg in enumerate(fn.args)]
        return inner, carried + named + list(fn.keywords.items())
    call = getattr(type(fn), "__call__", None)
    if (not isinstance(fn, types.FunctionType) and isinstance(call, types.FunctionType)
            and type(fn).__module__.split(".")[0] != "xlac"):      # xlac's own callables watch what they run
        return call, [("self", fn)]
    return fn, []


# ---------------------------------------------------------------- the watch


@dataclass
class Rebound:
    """A place the function rebound to a traced array of its own trace."""

    path: str                               # "self.k"
    holder: Callable[[dict], object]        # static values -> the object, dict, list or cell holding it
    kind: str                               # "attr", "item", "global" or "cell"
    key: object
    original: object                        # what it held when traced (_ABSENT: nothing); then None
    tracer: Tracer | None                   # the traced value assigned to it; then None

    def assign(self, value, statics: dict) -> None:
        _assign(self.holder(statics), self.kind, self.key, value)

    def current(self, statics: dict):
        """What the place holds now (_ABSENT: nothing; a class attribute does not count)."""
        holder = self.holder(statics)
        if self.kind == "cell":
            return _cell_contents(holder)
        if self.kind == "attr":
            return vars(holder).get(self.key, _ABSENT)
        try:
            return holder[self.key]
        except (LookupError, TypeError):
            return _ABSENT


class StateWatch:
    """What the places a traced function reaches from outside its arguments held before its trace: see
    the module's docstring. ``add_function`` adds a function's places (a compiled function inlined into
    the trace adds its own); ``finish`` puts back every traced value left in them.

    >>> from xlac.ir.types import TensorType
    >>> from xlac.trace.context import Trace
    >>> class Box:
    ...     k = None
    >>> box = Box(); box.k = np.zeros(2)
    >>> with Trace() as trace:
    ...     watch = StateWatch(trace, "f").add_function(lambda x: x, ((0, box),), {0: "box"})
    ...     box.k = trace.add_input(TensorType((2,), np.dtype("float64"))) * 2
    >>> [place.path for place in watch.finish(write_back=True)], type(box.k).__name__
    (['box.k'], 'ndarray')
    """

    def __init__(self, trace, who: str, current=None):
        self.trace = trace
        self.who = who                      # for errors: "xlac.compile'd step", "loss, under a transform,"
        # value -> what the program holds for it: a local NumPy array a traced value was written into is
        # that traced value (see xlac.outside_state), so a place rebound to it is rebound to a traced array
        self.current = current or (lambda value: value)
        self.containers: dict[int, _Container] = {}     # by the id of the object noted
        self._called: set[tuple[int, int]] = set()      # functions noted by add_called

    def add_called(self, fn) -> None:
        """Note the places a function the traced code calls reaches (a helper appending to a global list),
        once per function and bound object."""
        key = (id(getattr(fn, "__func__", fn)), id(getattr(fn, "__self__", None)))
        if key not in self._called:
            self._called.add(key)
            self.add_function(fn, fixed=True)

    def add_function(self, fn, statics: tuple = (), static_names: dict | None = None, *,
                     fixed: bool = False) -> "StateWatch":
        """Note the places ``fn`` reaches. ``statics``: its static arguments as ``(key, value)`` pairs, named
        by ``static_names``; ``fixed``: they are the same objects at every call (a function inlined into
        another's trace), not read from the call's. The object a bound method, a ``functools.partial`` or
        a callable object carries is found by itself, as ``self``."""
        if not statics:
            fn, carried = _function_and_objects(fn)
            if carried:
                carried_names, objects = zip(*carried)
                statics, static_names, fixed = tuple(enumerate(objects)), dict(enumerate(carried_names)), True
        code = getattr(fn, "__code__", None)
        names = _code_names(code) if code is not None else set()
        self._note(fn, tuple(statics), dict(static_names or {}), names, fixed)
        return self

    def _note(self, fn, statics, static_names, names, fixed) -> None:
        """Note, breadth first from ``fn``'s roots, what each container reached holds now."""
        queue = deque(_function_roots(fn, statics, static_names, names, fixed))
        visited = 0
        while queue and visited < _MAX_VISITED:
            item = queue.popleft()
            if not isinstance(item, _Container):
                obj, path, resolve, depth = item
                if id(obj) in self.containers:
                    continue
                item = _container(obj, path, resolve, depth, names)
            known = self.containers.get(id(item.obj))
            if known is None:
                container = self.containers[id(item.obj)] = item
            elif item.kind == known.kind == "global":
                # the same module's globals, reached by another function: note the names it adds
                new = {k: v for k, v in item.before.items() if k not in known.before}
                known.before.update(new)
                container = dataclasses.replace(known, before=new)
            else:
                continue
            visited += 1
            if container.depth + 1 >= _MAX_DEPTH:
                continue
            for key, value in list(container.before.items())[:_MAX_CHILDREN]:
                if _watchable(value) and (container.kind != "item" or isinstance(key, (str, int))):
                    queue.append((value, container.place(key), _child_resolver(container, key), container.depth + 1))

    # ------------------------------------------------------------ after the trace

    def finish(self, *, write_back: bool, failed: bool = False) -> list[Rebound]:
        """Restore every watched place holding a traced value of this trace (or of one that ended). With
        ``write_back`` a place rebound to a traced array of this trace is returned as a :class:`Rebound`;
        every other such place raises :class:`RebindingError`, after everything was restored, as does an
        array place rebound to a value NumPy computed at trace time. After a failed trace (``failed``)
        places are only restored."""
        rebound, refusals = [], []
        for container in self.containers.values():
            for key, value in container.changed():
                value = self.current(value)
                leaked = _leaked_tracer(value, self.trace)
                if leaked is None:
                    if not failed and _computed_by_numpy(container.before.get(key, _ABSENT), value):
                        container.restore(key)
                        refusals.append(self._numpy_refusal(container.place(key), value))
                    continue
                container.restore(key)
                if failed:
                    continue
                if write_back and _can_write_back(container, key, value, self.trace):
                    rebound.append(Rebound(container.place(key), container.resolve, container.kind, key,
                                           container.before.get(key, _ABSENT), value))
                else:
                    refusals.append(self._refusal(container, key, *leaked, write_back=write_back))
        self.containers = {}      # done: nothing noted stays referenced
        if refusals:
            raise RebindingError(refusals[0])
        return rebound

    def _refusal(self, container: _Container, key, tracer: Tracer, inside: str, *, write_back: bool) -> str:
        """The error for a traced value left in a place; it names the line that computed the value."""
        place, given = container.place(key), f"a traced array {tracer.value.type}"
        was = (f"{container.path} was restored" if isinstance(container.obj, list)
               else f"{place} was restored" if key in container.before else f"{place} was removed")
        if not write_back:
            return located(
                f"{self.who} stores {given} in {place + inside}, outside its arguments: a function under a "
                f"transform cannot change outside state (it runs on abstract values there, not on arrays). "
                f"{was}; return the value instead (has_aux=True for grad) and assign it outside.",
                _location_of(tracer))
        return located(
            f"{self.who} leaves {given} in {place + inside}: xlac writes back after each call an array assigned "
            "to an attribute, a dict item, an existing list item, a global or a closed-over name, but not one "
            f"added to a list or held inside a list, tuple, dict or object. {was}; assign the array itself "
            "(self.x = value) or return it.", _location_of(tracer))

    def _numpy_refusal(self, place: str, value) -> str:
        kind = f"a NumPy {value.dtype} {'array' if isinstance(value, np.ndarray) else 'scalar'}"
        return located(
            f"{self.who} rebinds {place} to {kind} that NumPy's own code computed while the function was "
            "traced: that code runs once, when traced, not at each call, so later calls would not update it. "
            f"{place} was restored; compute it from traced values with xlac.numpy (xnp.add(a, 1) rather than "
            "a + 1 on a NumPy array a), or hold it as an xlac.Array (xlac.asarray), whose operators are traced.")


def _can_write_back(container: _Container, key, value, trace) -> bool:
    """Whether a place rebound to ``value`` can be assigned after each call: a traced array of this trace
    in a place that existed, or a new attribute, dict item, global or name (not an item added to a list)."""
    return (isinstance(value, Tracer) and value._trace is trace
            and not (isinstance(container.obj, list) and key not in container.before))


def _computed_by_numpy(before, after) -> bool:
    """Whether an array place was rebound to a new NumPy value (computed at trace time, once)."""
    held_array = isinstance(before, (np.ndarray, np.generic)) or hasattr(before, "__xlac_array__")
    return held_array and isinstance(after, (np.ndarray, np.generic))


def _child_resolver(container: _Container, key):
    resolve = container.resolve
    if container.kind == "cell":
        return lambda s: resolve(s).cell_contents
    if container.kind == "attr":
        return lambda s: getattr(resolve(s), key)
    return lambda s: resolve(s)[key]


def _leaked_tracer(value, trace, depth: int = 0) -> tuple[Tracer, str] | None:
    """A traced value in ``value`` (itself, or an item or attribute a few steps in) that belongs to
    ``trace`` or to a trace that has ended, with its path from ``value``; None if there is none."""
    if isinstance(value, Tracer):
        outer = trace.parent
        if outer is not None and outer.encloses(value._trace):
            return None            # a value of an enclosing trace, still being traced
        return value, ""
    if depth == _MAX_DEPTH or not _watchable(value) and not isinstance(value, tuple):
        return None
    if isinstance(value, dict):
        entries = list(value.items())
    elif isinstance(value, (list, tuple)):
        entries = list(enumerate(value))
    else:
        entries = list(vars(value).items())
    for key, item in entries[:_MAX_CHILDREN]:
        found = _leaked_tracer(item, trace, depth + 1)
        if found is not None:
            step = f".{key}" if not isinstance(value, (dict, list, tuple)) else f"[{key!r}]"
            return found[0], step + found[1]
    return None


def _location_of(tracer: Tracer) -> SourceLocation | None:
    """The user's line that computed ``tracer`` (None for an argument)."""
    for node in reversed(tracer._trace.graph.nodes):
        if tracer.value in node.results:
            return node.location
    return None


# ---------------------------------------------------------------- at every call


class Rebindings:
    """The places an executable's extra outputs are assigned to after each call, in output order.

    ``sources[i]`` is an input index when the function assigned an argument or outside array itself
    (``self.last = x``: the very object passed is assigned, as NumPy would), else None (an output).
    ``read_per_call[i]``: the array the place held when traced is an input of the executable (the
    function read it through xlac), not a constant."""

    def __init__(self, items: list[Rebound], sources: list[int | None], read_per_call: list[bool]):
        self.items = items
        self.sources = sources
        # A NumPy array read per call gets a NumPy array back. One that NumPy's own code read at trace time
        # (0.5 * self.m) was a constant there: it gets an xlac.Array, whose operators are traced.
        self.as_numpy = [read and isinstance(r.original, np.ndarray) for r, read in zip(items, read_per_call)]
        # A place whose value may have been read as a constant (a scalar, a NumPy or jax array not read
        # through xlac, nothing) must still hold that very object, or the call traces again.
        self.must_hold = [_NOT_GUARDED if read or hasattr(r.original, "__xlac_array__") else r.original
                          for r, read in zip(items, read_per_call)]
        for rebound in items:
            rebound.original = rebound.tracer = None       # neither is kept alive by the executable

    @property
    def names(self) -> list[str]:
        return [r.path for r in self.items]

    def fits(self, statics: tuple) -> bool:
        """Whether every place can still be assigned and holds what it must (see ``must_hold``)."""
        static_values = dict(statics)
        for rebound, held in zip(self.items, self.must_hold):
            try:
                current = rebound.current(static_values)
            except (LookupError, AttributeError, TypeError, ValueError):
                return False
            if held is not _NOT_GUARDED and current is not held:
                return False
        return True

    def write_back(self, outputs: tuple, leaves: list, statics: tuple) -> None:
        """Assign each place its new value: an input passed this call, or the next output."""
        static_values = dict(statics)
        outputs = iter(outputs)
        for rebound, source, as_numpy in zip(self.items, self.sources, self.as_numpy):
            value = leaves[source] if source is not None else next(outputs)
            if source is None and as_numpy:
                value = np.array(value)
            rebound.assign(value, static_values)


_NOT_GUARDED = object()
