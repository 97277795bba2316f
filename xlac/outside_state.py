"""The one owner of what a trace reaches outside its arguments, and of the NumPy arrays its call makes.

The rule (``docs/architecture.md``, "Outside state and local arrays"):

- **outside state** is what existed before the call: arrays reached through globals, closures, attributes
  and container items, and the places holding them. A compiled function reads each such array it meets per
  call, as an *implicit argument* (:mod:`xlac.captures` finds the path to it), writes it back after the
  call, and assigns after the call the places it rebinds (:mod:`xlac.rebinding` watches them); the contents
  NumPy's own code read while tracing are part of the program (it traces again when they change);
- a **local array** is one the call made: a NumPy creation function's result, a copy, any NumPy function's
  result whose memory is not one of its inputs', an operator's result, a view of one of those, in whichever
  function. It is never an implicit argument, never written back, never kept from one call to the next. Until
  a traced value is written into it, its NumPy contents are its value (``xnp`` reading it gets a constant of
  them); the first traced write makes a constant of its contents then, with the write, its traced value for
  good, and every later read of it in converted code (:func:`xlac.convert.runtime.current`), in whichever
  function, gets that traced value.

An :class:`OutsideState` belongs to one trace: a compiled function's (``implicit_arguments=True``), or a
transform's or a loop body's, which only watches (the arrays it meets are its enclosing trace's). After a
compiled function's trace, :meth:`OutsideState.finish` turns what it recorded into :class:`OutsideBindings`,
what the executable reads and writes outside its arguments at each call.

>>> import numpy as np, xlac
>>> def fill(b, x):
...     b[1:] = x[1:] * 2                  # a helper writes into its caller's temporary
>>> def f(x):
...     b = np.zeros(3)
...     fill(b, x)
...     return b.sum()                     # NumPy's sum of b: it sees the write
>>> float(xlac.compile(f)(np.ones(3)))
4.0
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from xlac.argument_specs import leaf_mutability, leaf_spec
from xlac.captures import Captures, finish as finish_captures
from xlac.errors import UnsupportedError, located
from xlac.ir import primitives as P
from xlac.ir.graph import Graph
from xlac.ir.types import TensorType
from xlac.rebinding import Rebindings, StateWatch
from xlac.runners import OutsideArrayChanged
from xlac.trace import ops, pytree
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.view_layout import memory_owner, view_steps


class OutsideState:
    """What one trace reached outside its arguments, and the arrays its call made (see the module)."""

    def __init__(self, trace, who: str, *, implicit_arguments: bool):
        self.trace = trace
        # An enclosing trace's owner: arrays that one's call made are local here too.
        self.enclosing: OutsideState | None = trace.parent.outside_state() if trace.parent is not None else None
        self.implicit_arguments = implicit_arguments
        self.watch = StateWatch(trace, who, current=self._local_current)
        # id -> (array, Tracer) for each outside array met: an implicit argument of the program
        self.captured: dict[int, tuple] = {}
        # id -> (array, its contents when traced) for each outside NumPy array NumPy's own code read
        self.read_while_tracing: dict[int, tuple] = {}
        # id -> array, for each array owning its memory that this trace's call made (held weakly)
        self.made: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        # id -> (array, Tracer) for each local array a traced value was written into: its traced value from
        # then on (a constant of this trace holding its contents then, and the writes)
        self.local_values: dict[int, tuple] = {}

    # ------------------------------------------------------------ the rule

    def note_made(self, fn, args: tuple, kwargs: dict, result) -> None:
        """``result`` came from ``fn(*args, **kwargs)``, a NumPy function or method: each array in it whose
        memory is not an input's was made by the call (a local array)."""
        for array in (result if isinstance(result, (tuple, list)) else (result,)):
            if type(array) is not np.ndarray:
                continue
            owner = memory_owner(array)
            if owner.base is not None or self.maker_of(owner) is not None:
                continue
            if not any(memory_owner(a) is owner for a in _arrays_in(fn, args, kwargs)):
                self.made[id(owner)] = owner

    def maker_of(self, owner: np.ndarray) -> "OutsideState | None":
        """The owner of outside state (this one or an enclosing trace's) whose call made ``owner``."""
        state = self
        while state is not None:
            if state.made.get(id(owner)) is owner:
                return state
            state = state.enclosing
        return None

    def is_local(self, array) -> bool:
        return isinstance(array, np.ndarray) and self.maker_of(memory_owner(array)) is not None

    def traced_value(self, array, *, write: bool = False) -> Tracer:
        """The traced value standing for ``array`` (a NumPy array or an ``xlac.Array``) met while tracing:
        for a local array its value in the trace that made it (``write``: a traced value is being written into
        it); for an outside one the implicit argument standing for it, the same each time it is met; where
        no trace has implicit arguments (an eager transform), a read-only constant."""
        if isinstance(array, np.ndarray):
            owner = memory_owner(array)
            maker = self.maker_of(owner)
            if maker is not None:
                return maker._local_value(owner, array, write)
        if self.implicit_arguments:
            return self._implicit_argument(array)
        if self.enclosing is not None:
            return self.enclosing.traced_value(array, write=write)
        constant = ops.constant(np.asarray(array))
        constant.mutability = "readonly"
        return constant

    def current(self, value):
        """What a read of ``value`` in converted code gets: the traced value of an outside array that is an
        implicit argument, or of a local array a traced value was written into (or a view of one), whose
        NumPy contents are stale; else ``value`` itself."""
        if not isinstance(value, np.ndarray):
            return value
        state = self
        while state is not None:
            entry = state.captured.get(id(value))
            if entry is not None:
                return entry[1]
            state = state.enclosing
        owner = memory_owner(value)
        maker = self.maker_of(owner)
        if maker is not None and id(owner) in maker.local_values:
            return self.traced_value(value)
        return value

    def _local_current(self, value):
        return self.current(value) if self.is_local(value) else value

    def read(self, array: np.ndarray):
        """``array``, read by name from outside the function (a global, a closed-over name, an attribute, a
        container's item): a floating-point outside array is the implicit argument standing for it; an
        integer or boolean one (an index table, a mask) stays NumPy's until a traced value indexes it or is
        written into it, and the contents NumPy reads while tracing are part of the program; a local array
        is read as :meth:`current` says."""
        if self.is_local(array):
            return self.current(array)
        if array.dtype.kind in "fc":
            return self.traced_value(array)
        known = self.current(array)
        if known is array:
            self._note_read_while_tracing(array)
        return known

    def _note_read_while_tracing(self, array: np.ndarray) -> None:
        """``array``, from outside the function, is read by NumPy while tracing: its contents are part of
        the program. The compiled function traces again when they change (as for a static argument)."""
        state = self
        while state is not None and not state.implicit_arguments:
            state = state.enclosing
        if state is not None and id(array) not in state.read_while_tracing:
            state.read_while_tracing[id(array)] = (array, array.copy())

    # ------------------------------------------------------------ the values

    def _implicit_argument(self, array) -> Tracer:
        entry = self.captured.get(id(array))
        if entry is None:
            name = f"<outside array {len(self.captured)}>"
            shape, dtype, _ = leaf_spec(array, name)
            tracer = self.trace.add_input(TensorType(shape, dtype), name=name, mutability=leaf_mutability(array))
            entry = self.captured[id(array)] = (array, tracer)
        return entry[1]

    def _local_value(self, owner: np.ndarray, array: np.ndarray, write: bool) -> Tracer:
        """``array`` (``owner`` or a view of it), a local array of this trace's call, as a traced value. Until
        a traced value is written into it, its NumPy contents are its value: a read gets a constant of them
        as they are now. The first write makes the traced value of its contents then the array's, for good."""
        entry = self.local_values.get(id(owner))
        if entry is None and not write:
            return ops.constant(np.array(array))
        if entry is None:
            entry = self.local_values[id(owner)] = (owner, self.trace.bind(P.constant, (), {"value": np.array(owner)}))
        root = entry[1]
        if array is owner:
            return root
        steps = view_steps(owner, array)
        if steps is None:
            raise UnsupportedError(located(
                f"a traced value reaches a NumPy view ({array.dtype}{list(array.shape)}) of an array the function "
                f"made ({owner.dtype}{list(owner.shape)}) that basic indexing of that array cannot make (a reshape "
                "merging axes, a broadcast, another dtype): xlac cannot keep the two in step. Make the array with "
                "xlac.numpy (xnp.zeros(...)), or index the array itself"))
        here = current_trace()
        return steps(root if root._trace is here else here.lift(root))

    # ------------------------------------------------------------ watching places

    def watch_function(self, fn, statics: tuple = (), static_names: dict | None = None, *,
                       fixed: bool = False) -> None:
        """Watch the places ``fn`` reaches (see :meth:`xlac.rebinding.StateWatch.add_function`)."""
        self.watch.add_function(fn, statics, static_names, fixed=fixed)

    def watch_called(self, fn) -> None:
        """Watch the places a function the traced code calls reaches, once per function."""
        self.watch.add_called(fn)

    def abandon(self) -> None:
        """After a failed trace: put back what the watched places held; nothing traced stays there."""
        self.watch.finish(write_back=False, failed=True)

    def finish_watch(self) -> None:
        """After a transform's or a loop body's trace: put back what the watched places held; a traced value
        left in one raises :class:`xlac.RebindingError`."""
        self.watch.finish(write_back=False)

    # ------------------------------------------------------------ after a compiled function's trace

    def finish(self, fn, statics: tuple, static_names: dict, out_tree, n_args: int):
        """What the compiled program reads and writes outside its arguments (:class:`OutsideBindings`), and
        its results' tree: places rebound to traced arrays become extra outputs, ``(results, (rebound...))``.
        Updates the graph: implicit arguments named by their paths, temporaries made constants."""
        rebound = self.watch.finish(write_back=True)
        graph = self.trace.graph
        captured_values = {id(array): tracer.value for array, tracer in self.captured.values()}
        captures = finish_captures(graph, list(self.captured.values()), fn, statics, static_names)
        rebindings = None
        if rebound:
            read_per_call = _read_through_rebound_places(graph, captures, rebound, captured_values, n_args)
            rebindings, out_tree = _add_rebound_outputs(graph, out_tree, rebound, read_per_call)
        read_while_tracing = [entry for key, entry in self.read_while_tracing.items() if key not in captured_values]
        self.captured, self.local_values, self.read_while_tracing = {}, {}, {}
        return OutsideBindings(captures, rebindings, read_while_tracing), out_tree


@dataclass
class OutsideBindings:
    """What a compiled program reads and writes outside its arguments, at every call: the implicit arguments
    (``captures``, the program's last inputs), the places assigned after the call (``rebound``), and the
    outside NumPy arrays whose contents, read while tracing, the program holds."""

    captures: Captures | None = None
    rebound: Rebindings | None = None
    read_while_tracing: list = field(default_factory=list)     # (array, contents when traced)

    @property
    def empty(self) -> bool:
        return self.captures is None and self.rebound is None and not self.read_while_tracing

    def implicit_arguments(self, statics: tuple) -> list:
        """The arrays to pass after the arguments this call. Raises ``OutsideArrayChanged``, saying what, when
        the program no longer fits what it reads or rebinds (the caller traces again)."""
        arrays = []
        if self.captures is not None:
            arrays = self.captures.gather(statics)
            if arrays is None:
                raise OutsideArrayChanged(f"an array it reads from outside its arguments ("
                                          f"{', '.join(self.captures.names)}) changed shape or dtype, or is gone")
        if any(not np.array_equal(array, contents) for array, contents in self.read_while_tracing):
            raise OutsideArrayChanged("an array it read from outside while tracing changed")
        if self.rebound is not None and not self.rebound.fits(statics):
            raise OutsideArrayChanged(f"a place it rebinds outside its arguments ({', '.join(self.rebound.names)}) "
                                      "is gone or holds another kind of value")
        return arrays

    def write_back(self, outputs: tuple, leaves: list, statics: tuple) -> None:
        """Assign each rebound place its new value (see ``Rebindings.write_back``)."""
        self.rebound.write_back(outputs, leaves, statics)


def _arrays_in(fn, args: tuple, kwargs: dict):
    """The NumPy arrays a call takes: its arguments, the items of list and tuple arguments, a method's object."""
    bound = getattr(fn, "__self__", None)
    for value in (bound, *args, *kwargs.values()):
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, np.ndarray))


def _add_rebound_outputs(graph: Graph, out_tree, rebound: list, read_per_call: list[bool]):
    """Make the places the function rebound to traced arrays (see ``xlac.rebinding``) extra results of
    the program: the results become ``(results, (rebound values...))``. A place assigned an input itself
    (``self.last = x``) takes the object passed for it at each call instead of an output."""
    by_input = {value.id: i for i, value in enumerate(graph.inputs)}
    sources = []
    for place in rebound:
        source = by_input.get(place.tracer.value.id)
        sources.append(source)
        if source is None:
            graph.outputs.append(place.tracer.value)
    n_outputs = sources.count(None)
    out_tree = pytree.TreeDef("tuple", (out_tree, pytree.TreeDef("tuple", (pytree.LEAF,) * n_outputs)))
    return Rebindings(rebound, sources, read_per_call), out_tree


def _read_through_rebound_places(graph: Graph, captures: Captures | None, rebound: list, captured_values: dict,
                                 n_args: int) -> list[bool]:
    """An outside array that a rebound place held when traced is read through that place from then on
    (whatever other path reaches it too): after each call the place holds the new value, which the next
    call must read. Per place, whether its array is read per call (an input, not a constant)."""
    read_per_call = []
    for place in rebound:
        value = captured_values.get(id(place.original))
        read = captures is not None and value is not None and value in graph.inputs   # else a constant, or unread
        read_per_call.append(read)
        if read:
            index = graph.inputs.index(value)
            capture = captures.items[index - n_args]
            capture.name = graph.input_names[index] = place.path
            capture.resolve, capture.guard = place.current, None
    return read_per_call

