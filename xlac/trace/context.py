"""The tracing context: a Trace records the nodes that primitives bind while a function runs.

Tracing is thread-local, so several threads can trace at once. Outside any trace,
``current_trace()`` is ``None`` and ``xlac.numpy`` functions run eagerly.

>>> import numpy as np
>>> from xlac.ir import primitives as P
>>> from xlac.ir.types import TensorType
>>> with Trace() as t:
...     x = t.add_input(TensorType((3,), np.dtype("float32")))
...     y = t.bind(P.exp, (x,))
>>> t.graph.nodes[0].primitive.name
'exp'
"""
from __future__ import annotations

import numpy as np

from xlac.errors import located, TracerConversionError, user_location
from xlac.ir.graph import NO_PROVENANCE, Graph, Node, Provenance, Value
from xlac.ir.primitive import Primitive, ShapeError
from xlac.ir.types import TensorType
from xlac.trace import ops
from xlac.trace.checks import Checks
from xlac.trace.state import _state, autocast_state, current_trace, pop_trace, push_trace
from xlac.trace.tracer import Tracer


_last_provenance = NO_PROVENANCE


def _provenance(location, origin: str, autocast, call: int) -> Provenance:
    """``Provenance(location, origin, autocast, call)``: the last one made where it has these fields (the
    nodes of one xlac.numpy call on one line share one)."""
    global _last_provenance
    last = _last_provenance
    if last.location is location and last.call == call and last.origin == origin and last.autocast is autocast:
        return last
    last = _last_provenance = Provenance(location, origin, autocast, call)
    return last


class Trace:
    """Builds one graph. Use as a context manager to make it the current trace."""

    def __init__(self, *, check_bounds: bool | None = None, convert: bool | None = None, loops: str | None = None,
                 max_unrolled_ops: int | None = None, kernels: str | None = None):
        self.graph = Graph(inputs=[])
        enclosing = current_trace()
        # The vendor kernels the compiled program's device runs ("lapack", "cusolver", "hipsolver" or "":
        # xlac.runtime.kernels), which
        # decide how xlac.numpy factors matrices; a transform's trace as the enclosing one.
        self.kernels = kernels if kernels is not None else enclosing.kernels if enclosing is not None else ""
        if check_bounds is None:            # a transform's trace checks as the trace it runs inside does
            check_bounds = enclosing.checks.enabled if enclosing is not None else True
        # Whether functions traced here run converted (xlac.convert); a transform's trace as the enclosing one.
        self.convert = convert if convert is not None else enclosing.convert if enclosing is not None else True
        # How converted Python loops with a trip count known when tracing run: "auto", "roll" or "unroll".
        self.loops = loops if loops is not None else enclosing.loops if enclosing is not None else "auto"
        # The most ops a converted loop that unrolls may bring the program to (None: xlac.convert.loops' default).
        self.max_unrolled_ops = (max_unrolled_ops if max_unrolled_ops is not None else
                                 enclosing.max_unrolled_ops if enclosing is not None else None)
        # How each converted loop ran (xlac.convert.loops.LoopDecision), one list for a trace and those inside.
        self.loop_decisions: list = enclosing.loop_decisions if enclosing is not None else []
        # The names of the calls that acted on Python state (print, list.append: xlac.convert.known_calls) while
        # tracing converted code, one list for a trace and those inside: a loop that made one is not traced again.
        self.python_effects: list = enclosing.python_effects if enclosing is not None else []
        # Conditions verified after the call (traced indices in bounds): see xlac.trace.checks.
        self.checks = Checks(check_bounds)
        # value id -> what is known of that traced scalar's value (xlac.trace.facts: a range, an offset form)
        self.scalar_facts: dict = {}
        # How many writes into arrays (stores) the trace holds: reads of one element with none between them
        # hold the same value (xlac.trace.facts.note_element_read).
        self.stores = 0
        # The owner of what the traced function reaches outside its arguments and of the arrays its call
        # makes (an xlac.outside_state.OutsideState, set by whoever runs user code here); None where an
        # enclosing trace's owner, or none (eager operations), stands for it.
        self.outside = None
        self.parent: Trace | None = None
        # value id -> (outer Tracer, its stand-in here) for each value of an enclosing trace the function
        # used (a closure over an outer traced value, as in grad(lambda w: loss(w, x)) inside a compile)
        self.lifted: dict[int, tuple[Tracer, Tracer]] = {}
        # value id -> the view made again here of an enclosing view (see lift), once each
        self.remade_views: dict[int, Tracer] = {}
        # Whether the function may write into arrays of the enclosing traces (a loop body, a branch: the
        # written arrays become the region's extra results); transforms may not.
        self.writes_enclosing = False

    def __enter__(self) -> "Trace":
        self.parent = push_trace(self)
        return self

    def encloses(self, other: "Trace") -> bool:
        """Whether ``other`` is this trace or one it runs inside."""
        trace = self
        while trace is not None:
            if trace is other:
                return True
            trace = trace.parent
        return False

    def lift(self, outer: Tracer) -> Tracer:
        """The input of this trace standing for ``outer``, a value of an enclosing trace. In a trace that
        may write into enclosing arrays (a loop body, a branch), a view of an enclosing array is made again
        here from the array's own stand-in, so that writes through one view show through every other."""
        if self.writes_enclosing and outer.base is not None:
            return self._view_here(outer)
        entry = self.lifted.get(outer.value.id)
        if entry is None:
            # A value from further out comes in through the parent's own stand-in for it.
            parents = outer if outer._trace is self.parent else self.parent.lift(outer)
            inner = self.add_input(outer.value.type, weak=outer.weak, name="<from enclosing trace>",
                                   mutability=outer.mutability if self.writes_enclosing else "readonly")
            inner.strides = outer.strides       # NumPy's view-or-copy decisions stay those of the array
            entry = self.lifted[outer.value.id] = (parents, inner)
        return entry[1]

    def _view_here(self, outer: Tracer) -> Tracer:
        """``outer``, a view of an enclosing array, made again in this trace by the view nodes that made it
        there, applied to this trace's stand-in for its base."""
        made = self.remade_views.get(outer.value.id)
        if made is not None and made.mutability == outer.mutability:
            return made
        base = self.lift(outer.base)
        producers = {}
        for node in reversed(outer._trace.graph.nodes):
            producers.setdefault(node.results[0].id if len(node.results) == 1 else None, node)
        chain, value = [], outer.value
        while value is not outer.base.value:
            node = producers[value.id]
            chain.append(node)
            value = node.operands[0]
        view = base
        for node in reversed(chain):
            rest = [self._own(Tracer(v, outer._trace), node.primitive) for v in node.operands[1:]]
            view = self.bind(node.primitive, [view] + rest, dict(node.attrs), weak=outer.weak)
            self.graph.nodes[-1].view = True
        if view is base:                # an alias of the whole array (a read-only broadcast_to(x, x.shape))
            view = Tracer(base.value, self, outer.weak)
        view.base, view.strides, view.mutability = base, outer.strides, outer.mutability
        self.remade_views[outer.value.id] = view
        return view

    def __exit__(self, exc_type, exc, traceback) -> None:
        pop_trace()
        if isinstance(exc, ValueError) and isinstance(exc.__cause__, TracerConversionError):
            # NumPy hid the traced value's error behind "setting an array element with a sequence": show it
            raise exc.__cause__.with_traceback(traceback) from None

    def add_input(self, type: TensorType, *, weak: bool = False, name: str = "",
                  mutability: str = "mutable") -> Tracer:
        value = Value(type)
        self.graph.inputs.append(value)
        self.graph.input_names.append(name)
        return Tracer(value, self, weak, mutability)

    def outside_state(self):
        """The owner of the outside state this trace reaches (an ``xlac.outside_state.OutsideState``): its
        own, or the nearest enclosing trace's; None in eager operations."""
        trace = self
        while trace is not None and trace.outside is None:
            trace = trace.parent
        return trace.outside if trace is not None else None

    def capture(self, array, *, write: bool = False) -> Tracer:
        """The traced value standing for ``array``, an xlac.Array or NumPy array the function meets that is
        not a traced value: an array its call made, or an implicit argument for one from outside (see
        ``xlac.outside_state``); a read-only constant in eager operations. ``write``: a traced value is
        being written into it."""
        owner = self.outside_state()
        if owner is None:
            constant = ops.constant(np.asarray(array))
            constant.mutability = "readonly"
            return constant
        traced = owner.traced_value(array, write=write)
        return traced if traced._trace is self else self.lift(traced)

    def _own(self, x, primitive: Primitive) -> Tracer:
        if isinstance(x, Tracer):
            if x._trace is self:
                return x
            if self.parent is not None and self.parent.encloses(x._trace):
                return self.lift(x)
        raise TypeError(located(f"{primitive.name}: operand {x!r} does not belong to this trace "
                                "(a traced value escaped from another compiled function?)"))

    def bind(self, primitive: Primitive, operands=(), attrs=None, *, weak: bool = False,
             provenance: Provenance | None = None, subgraphs: tuple = ()):
        """Apply ``primitive`` to traced operands; returns one Tracer, or a tuple for multi-result primitives.
        ``provenance``: the new node's (default: the one ``provenance_of`` sets, else the user's line, the
        running ``xlac.numpy`` function and the autocast state). ``subgraphs``: a control-flow node's
        regions."""
        # Comprehensions over lists, not generators: this runs once per node of every trace.
        attrs = attrs or {}
        for x in operands:
            if not isinstance(x, Tracer) or x._trace is not self:
                operands = [self._own(x, primitive) for x in operands]
                break
        values = tuple([x.value for x in operands])
        try:
            types = primitive.infer_types(*[v.type for v in values], **attrs)
        except ShapeError as e:
            raise ShapeError(located(str(e))) from None
        results = tuple([Value(t) for t in types])
        if provenance is None:
            provenance = _state.inherited or _provenance(user_location(2), _state.origin, autocast_state(),
                                                         _state.call)
        node = Node(primitive, values, attrs, results, provenance, tuple(subgraphs))
        self.graph.nodes.append(node)
        if not primitive.multiple_results:
            return Tracer(results[0], self, weak)
        return tuple([Tracer(v, self, weak) for v in results])
