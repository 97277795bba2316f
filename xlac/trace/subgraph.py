"""A function traced into a graph of its own, and a graph evaluated back into the current trace: what
the transforms (``xlac.grad``, ``xlac.vjp``, ``xlac.jvp``, ``xlac.vmap``) build on.

A transform traces the function it is given on abstract arguments (:func:`trace_subgraph`), runs the
pure-making passes on it (functionalize, then autocast: in-place updates become pure ops first, so
gradients are those of the pure function they mean), rewrites the graph, and evaluates the result
into whatever trace is current (:func:`inline`), so transforms nest: ``grad(grad(f))``,
``vmap(grad(f))``, ``compile(grad(f))``. Values of an enclosing trace that the function closes over
become trailing inputs of its graph (``SubGraph.lifted``).

>>> import numpy as np, xlac.numpy as xnp
>>> from xlac.trace.context import Trace
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

from dataclasses import dataclass

from xlac.ir.graph import Graph, Node
from xlac.ir.interpreter import interpret
from xlac.ir.types import TensorType
from xlac.trace import pytree
from xlac.trace.context import Trace, current_trace
from xlac.trace.tracer import Tracer

# The passes a transform runs before rewriting a graph (simplify runs on the final program).
PURE_PASSES = ("functionalize", "autocast")


@dataclass
class SubGraph:
    """A traced function: its graph (pure: after functionalize and autocast), argument and result trees.
    The graph's inputs are the flat argument leaves, then one per value of ``lifted``."""

    graph: Graph
    in_tree: pytree.TreeDef
    out_tree: pytree.TreeDef
    lifted: list[Tracer]            # values of the enclosing trace, for the trailing inputs

    @property
    def n_args(self) -> int:
        return len(self.graph.inputs) - len(self.lifted)


def leaf_type(leaf) -> tuple[TensorType, bool]:
    """The abstract type of an argument leaf (a Tracer, an array or a scalar), and whether it is weak."""
    if isinstance(leaf, Tracer):
        return leaf.value.type, leaf.weak
    from xlac.signature import leaf_spec
    shape, dtype, weak = leaf_spec(leaf, "argument")
    return TensorType(shape, dtype), weak


def trace_subgraph(fn, args: tuple, kwargs: dict | None = None) -> SubGraph:
    """Trace ``fn(*args, **kwargs)`` on abstract values of the argument leaves' types."""
    from xlac.numpy._core import asarray
    from xlac.passes.pipeline import PASSES
    from xlac.rebinding import StateWatch
    leaves, in_tree = pytree.flatten((tuple(args), dict(kwargs or {})))
    with Trace() as trace:
        # A transformed function must leave outside state as it found it: see xlac.rebinding.
        trace.watch = StateWatch(trace, f"{getattr(fn, '__name__', 'the function')}, under a transform,")
        trace.watch.add_function(fn, fixed=True)
        inputs = []
        for i, leaf in enumerate(leaves):
            type_, weak = leaf_type(leaf)
            inputs.append(trace.add_input(type_, weak=weak, name=f"arg{i}"))
        call_args, call_kwargs = pytree.unflatten(in_tree, inputs)
        try:
            out_leaves, out_tree = pytree.flatten(fn(*call_args, **call_kwargs))
        except BaseException:
            trace.watch.finish(write_back=False, failed=True)
            raise
        trace.watch.finish(write_back=False)
        outputs = [asarray(leaf).value for leaf in out_leaves]
    graph = trace.graph
    graph.outputs = outputs
    passes = dict(PASSES)
    for name in PURE_PASSES:
        graph = passes[name](graph)
    # A write to an argument stays inside the transformed function: its new value is not an output.
    graph.outputs = graph.outputs[:len(outputs)]
    graph.input_updates = []
    return SubGraph(graph, in_tree, out_tree, [outer for outer, _ in trace.lifted.values()])


def inline(graph: Graph, inputs: list[Tracer]) -> list[Tracer]:
    """Evaluate ``graph`` on ``inputs`` into the current trace; its outputs. Each node keeps its line."""
    return interpret(graph, inputs, bind_node)


def bind_node(node: Node, operands: list[Tracer]) -> list[Tracer]:
    """Apply ``node``'s primitive, with its attributes, to ``operands`` in the current trace; the results
    as a list. The new node keeps ``node``'s source line and origin."""
    if node.subgraphs:
        raise NotImplementedError(f"evaluating {node.primitive.name} with sub-graphs")
    results = current_trace().bind(node.primitive, operands, node.attrs, like=node)
    return list(results) if node.primitive.multiple_results else [results]
