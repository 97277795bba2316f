"""A function traced into a graph of its own: what the transforms (``xlac.grad``, ``xlac.vjp``,
``xlac.jvp``, ``xlac.vmap``) build on, with :mod:`xlac.trace.inline`, which evaluates a graph back into
the current trace.

A transform traces the function it is given on abstract arguments (:func:`trace_subgraph`), runs the
pure-making passes on it (functionalize, then autocast: in-place updates become pure ops first, so
gradients are those of the pure function they mean), rewrites the graph, and evaluates the result
into whatever trace is current (:func:`xlac.trace.inline.inline`), so transforms nest: ``grad(grad(f))``,
``vmap(grad(f))``, ``compile(grad(f))``. Values of an enclosing trace that the function closes over
become trailing inputs of its graph (``SubGraph.lifted``).

>>> import numpy as np, xlac.numpy as xnp
>>> from xlac.trace.context import Trace
>>> from xlac.trace.inline import inline
>>> sub = trace_subgraph(lambda x: xnp.sin(x) * 2, (np.ones(3, np.float32),))
>>> [node.primitive.name for node in sub.graph.nodes]
['sin', 'constant', 'broadcast_in_dim', 'mul']
>>> with Trace() as t:
...     x = t.add_input(sub.graph.inputs[0].type)
...     (y,) = inline(sub.graph, [x])
>>> y.shape, len(t.graph.nodes)
((3,), 4)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlac.convert import converted
from xlac.ir.graph import Graph
from xlac.ir.types import TensorType
from xlac.trace import ops, pytree
from xlac.trace.context import Trace
from xlac.trace.state import current_trace
from xlac.trace.tracer import WRITE_TO_ENCLOSING, Tracer
from xlac.errors import UnsupportedError, located
from xlac.argument_specs import leaf_spec
from xlac.numpy._core import asarray
from xlac.passes.pipeline import PASSES
from xlac.outside_state import OutsideState


@dataclass
class SubGraph:
    """A traced function: its graph (pure: after functionalize and autocast), argument and result trees.
    The graph's inputs are the flat argument leaves, then one per value of ``lifted``."""

    graph: Graph
    in_tree: pytree.TreeDef
    out_tree: pytree.TreeDef
    lifted: list[Tracer]            # values of the enclosing trace, for the trailing inputs
    # The function's after-call checks (see xlac.trace.checks): when there are any, the graph's last
    # output holds their status and payload; adopt_checks hands it to the enclosing trace.
    checks: list = field(default_factory=list)

    @property
    def n_args(self) -> int:
        return len(self.graph.inputs) - len(self.lifted)


def leaf_type(leaf) -> tuple[TensorType, bool]:
    """The abstract type of an argument leaf (a Tracer, an array or a scalar), and whether it is weak."""
    if isinstance(leaf, Tracer):
        return leaf.value.type, leaf.weak
    shape, dtype, weak = leaf_spec(leaf, "argument")
    return TensorType(shape, dtype), weak


def trace_subgraph(fn, args: tuple, kwargs: dict | None = None) -> SubGraph:
    """Trace ``fn(*args, **kwargs)`` on abstract values of the argument leaves' types."""
    leaves, in_tree = pytree.flatten((tuple(args), dict(kwargs or {})))
    with Trace() as trace:
        # A transformed function must leave outside state as it found it: see xlac.outside_state.
        trace.outside = OutsideState(trace, f"{getattr(fn, '__name__', 'the function')}, under a transform,",
                                     implicit_arguments=False)
        trace.outside.watch_function(fn, fixed=True)
        inputs = []
        for i, leaf in enumerate(leaves):
            type_, weak = leaf_type(leaf)
            inputs.append(trace.add_input(type_, weak=weak, name=f"arg{i}"))
        call_args, call_kwargs = pytree.unflatten(in_tree, inputs)
        try:
            run = converted(fn) if trace.convert else fn
            out_leaves, out_tree = pytree.flatten(run(*call_args, **call_kwargs))
        except BaseException:
            trace.outside.abandon()
            raise
        trace.outside.finish_watch()
        outputs = [asarray(leaf).value for leaf in out_leaves]
        if trace.checks.sources:
            outputs.append(trace.checks.output().value)
    graph = trace.graph
    graph.outputs = outputs
    graph, _ = pure_graph(graph, len(leaves))
    return SubGraph(graph, in_tree, out_tree, [outer for outer, _ in trace.lifted.values()],
                    trace.checks.all_checks())


def pure_graph(graph: Graph, n_own_inputs: int, *, enclosing_writes: bool = False) -> tuple[Graph, list[int]]:
    """``graph`` after the pure-making passes, for a transform or a loop body, and the inputs written that
    stand for values of an enclosing trace (those after the first ``n_own_inputs``: closures, outside
    arrays). A write to one of its own inputs (an argument, a carry) stays inside: its new value is not an
    output. With ``enclosing_writes`` (a loop body, a branch) the new value of each written enclosing input
    is an extra output, in input order, and the outputs keep their traced dtypes under autocast (a region's
    signature); otherwise such a write raises an UnsupportedError with its line."""
    n_outputs = len(graph.outputs)
    passes = dict(PASSES)
    graph = passes["functionalize"](graph)
    graph = passes["autocast"](graph, keep_signature=enclosing_writes)
    outer = sorted((i, o) for i, o in graph.input_updates if i >= n_own_inputs)
    if outer and not enclosing_writes:
        first = graph.inputs[outer[0][0]]
        location = next((where for where, before, _ in graph.writes if before is first), None)
        raise UnsupportedError(located(WRITE_TO_ENCLOSING, location))
    graph.outputs = graph.outputs[:n_outputs] + [graph.outputs[o] for _, o in outer]
    graph.input_updates = []
    return graph, [i for i, _ in outer]


def adopt_checks(sub: SubGraph, outputs: list, dims: list | None = None) -> list:
    """``outputs`` of an evaluated ``sub.graph`` without its check outputs, which go to the current trace's
    checks. ``dims``: the batch axis of each output (vmap), where a failure in any example fails the call."""
    if not sub.checks:
        return outputs
    both = outputs[-1]
    if dims is not None and dims[-1] is not None:       # (examples, 2) after moving the batch axis first
        both = ops.transpose(both, (1, 0)) if dims[-1] == 1 else both
        failing = ops.convert(ops.compare(both, ops.full_like(both, 0), "NE"), np.int32)
        example = ops.argmax(ops.reshape(ops.slice(failing, (0, 0), (both.shape[0], 1), (1, 1)), (both.shape[0],)),
                             0, np.int64)
        both = ops.reshape(ops.dynamic_slice(both, [example, ops.constant(0, np.int64)], [1, 2]), (2,))
    current_trace().checks.adopt_status(both, sub.checks)
    return outputs[:-1]
