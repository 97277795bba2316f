"""Reverse- and forward-mode differentiation of a traced graph, emitted into the current trace.

Both engines take a pure graph (a :class:`xlac.function_graph.SubGraph`'s, after functionalize and
autocast) and evaluate it into whatever trace is current, so transforms nest (``grad(grad(f))``,
``vmap(grad(f))``, ``compile(grad(f))``):

- :func:`linearize_reverse` evaluates the graph and returns a :class:`Backward` that, given cotangents of
  the outputs, emits the backward pass (each node's VJP rule, in reverse program order; the cotangents of
  a value used several times are summed) and returns the cotangents of the inputs.
- :func:`forward` evaluates the graph together with its tangents (each node's JVP rule).

Rules hang off the primitives (``P.x.vjp``, ``P.x.jvp``), registered by :mod:`xlac.passes.rules`, which
says their signatures; the engines import no rule module. Integer and boolean values have no tangent or
cotangent (``None``, a zero).

>>> import numpy as np, xlac.numpy as xnp
>>> import xlac.passes.rules  # noqa: F401  (registers the rules)
>>> from xlac.trace.context import Trace
>>> from xlac.function_graph import trace_subgraph
>>> from xlac.trace import ops
>>> sub = trace_subgraph(lambda x: xnp.sum(x * x), (np.ones(3, np.float32),))
>>> with Trace() as t:
...     x = t.add_input(sub.graph.inputs[0].type)
...     (y,), backward = linearize_reverse(sub.graph, [x], wrt=[0])
...     (gx,) = backward([ops.constant(1.0, np.float32)])
>>> gx.shape, str(gx.dtype)
((3,), 'float32')
"""
from __future__ import annotations

from xlac.ir import dtypes
from xlac.ir.graph import Graph
from xlac.trace import ops
from xlac.ir.interpreter import interpret
from xlac.trace.state import autocast_scope, provenance_of
from xlac.trace.inline import bind_node
from xlac.trace.tracer import Tracer

__all__ = ["linearize_reverse", "forward", "Backward", "is_differentiable", "add_cotangents"]


def is_differentiable(dtype) -> bool:
    """Whether values of ``dtype`` carry derivatives (floating and complex dtypes)."""
    return dtypes.is_inexact(dtype)


def add_cotangents(a: Tracer | None, b: Tracer | None) -> Tracer | None:
    """The sum of two cotangents of one value (``None`` is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return ops.add(a, b)


def _missing_rule(node, kind: str):
    return NotImplementedError(f"xlac cannot differentiate {node.primitive.name} ({kind} rule missing)"
                               + (f", from {node.origin}" if node.origin else "")
                               + (f" at {node.location}" if node.location else ""))


def _check_cotangent(node, operand: Tracer, ct: Tracer | None) -> Tracer | None:
    if ct is None:
        return None
    if ct.shape != operand.shape or ct.dtype != operand.dtype:
        raise AssertionError(f"xlac internal error: the VJP of {node.primitive.name} gave a cotangent "
                             f"{ct.dtype}{list(ct.shape)} for an operand {operand.dtype}{list(operand.shape)}")
    return ct


class Backward:
    """The backward pass of an evaluated graph: call it with output cotangents (None for zero)."""

    def __init__(self, nodes, graph: Graph, active: set, wrt: list[int]):
        # (node, operand Tracers, result Tracers, residuals for its VJP or None) of the active nodes, in order
        self.nodes = nodes
        self.graph = graph
        self.active = active
        self.wrt = wrt

    def __call__(self, out_cotangents: list) -> list[Tracer | None]:
        with autocast_scope(None):          # the backward ops run in the dtypes they are emitted in
            return self._run(out_cotangents)

    def _run(self, out_cotangents):
        cts: dict[int, Tracer] = {}
        for value, ct in zip(self.graph.outputs, out_cotangents):
            if ct is not None and value.id in self.active:
                cts[value.id] = add_cotangents(cts.get(value.id), ct)
        for node, operands, results, residuals in reversed(self.nodes):
            result_cts = [cts.pop(v.id, None) for v in node.results]
            if all(ct is None for ct in result_cts):
                continue
            if node.primitive.vjp is None:
                raise _missing_rule(node, "VJP")
            attrs = node.rule_attrs if residuals is None else dict(node.rule_attrs, residuals=residuals)
            with provenance_of(node.provenance.as_inlined()):
                operand_cts = node.primitive.vjp(attrs, operands, results, result_cts)
            for value, operand, ct in zip(node.operands, operands, operand_cts):
                if ct is not None and value.id in self.active:
                    cts[value.id] = add_cotangents(cts.get(value.id), _check_cotangent(node, operand, ct))
        return [cts.get(self.graph.inputs[i].id) for i in self.wrt]


def linearize_reverse(graph: Graph, inputs: list[Tracer], wrt: list[int]):
    """Evaluate ``graph`` on ``inputs`` into the current trace; its outputs and a :class:`Backward` giving
    the cotangents of the inputs numbered in ``wrt``."""
    active = {graph.inputs[i].id for i in wrt if is_differentiable(graph.inputs[i].type.dtype)}
    recorded = []

    def evaluate_and_record(node, operands):
        differentiable = [v for v in node.results if is_differentiable(v.type.dtype)]
        if not (differentiable and any(v.id in active for v in node.operands)):
            return bind_node(node, operands)
        # A primitive whose VJP needs values from inside its evaluation (a loop's carries per iteration)
        # computes them with its results; they reach its VJP rule as attrs["residuals"].
        if node.primitive.vjp_forward is not None:
            results, residuals = node.primitive.vjp_forward(node, operands)
        else:
            results, residuals = bind_node(node, operands), None
        active.update(v.id for v in differentiable)
        recorded.append((node, operands, results, residuals))
        return results

    outputs = interpret(graph, inputs, evaluate_and_record)
    return outputs, Backward(recorded, graph, active, wrt)


def forward(graph: Graph, inputs: list[Tracer], tangents: list[Tracer | None]):
    """Evaluate ``graph`` on ``inputs`` with ``tangents`` (one per input, None for zero) into the current
    trace; its outputs and their tangents (None where zero)."""
    tan = {value.id: t for value, t in zip(graph.inputs, tangents)
           if t is not None and is_differentiable(value.type.dtype)}

    def evaluate_with_tangents(node, operands):
        results = bind_node(node, operands)
        operand_tangents = [tan.get(v.id) for v in node.operands]
        if all(t is None for t in operand_tangents):
            return results
        if node.primitive.jvp is None:
            raise _missing_rule(node, "JVP")
        with provenance_of(node.provenance.as_inlined()):
            result_tangents = node.primitive.jvp(node.rule_attrs, operands, results, operand_tangents)
        for value, result, t in zip(node.results, results, result_tangents):
            if t is not None and is_differentiable(value.type.dtype):
                _check_cotangent(node, result, t)
                tan[value.id] = t
        return results

    outputs = interpret(graph, inputs, evaluate_with_tangents)
    return outputs, [tan.get(v.id) for v in graph.outputs]
