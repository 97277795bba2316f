"""VJP, JVP and batching rules of the control-flow primitives (``while``, ``case``).

JVP: the loop or conditional again, over the primal values and their tangents; each region is the
forward-mode evaluation of the original one (:func:`xlac.passes.autodiff.forward`), so a tangent of a carry
is itself a carry. Every differentiable carry gets a tangent (zeros where it starts without one), as the
body may make it depend on one that has. The rule computes the primal values again beside the tangents (the
engine has already emitted the primal node).

VJP of a loop whose number of iterations is known when tracing (``trip_count``: ``fori_loop`` with Python
int bounds, ``scan``): under reverse mode one forward loop gives the results and keeps, per iteration, the
values that iteration's backward pass reads (``vjp_forward``: the body is linearized inside the loop and its
backward pass traced once, which names them; values that depend on no carry are computed once, outside),
as JAX's scan keeps residuals; then a backward loop runs each iteration's backward pass from the last to the
first, reading row t of those stacks. With ``checkpoint`` the forward loop keeps only the carries each
iteration starts from and the backward loop evaluates the iteration again (less memory, more work). The
cotangents of scan's stacked outputs (``write_once`` carries) are read from the final ones, not carried.
A loop with a run-time trip count has no VJP, as in JAX: the error says to use ``fori_loop`` or ``scan``. VJP of a
conditional: a conditional of the branches' VJPs.

Batching: a loop runs until every example is done, each example keeping its carries once its own condition
fails; a conditional with a batched index evaluates every branch and selects per example, with an
unbatched index it stays a conditional over batched branches.

>>> from xlac.ir import primitives as P
>>> P.while_.jvp is not None and P.case.batch is not None
True
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from xlac.errors import UnsupportedError, located
from xlac.ir import primitives as P
from xlac.ir.graph import Graph
from xlac.ir.interpreter import interpret
from xlac.passes.autodiff import forward, is_differentiable, linearize_reverse
from xlac.passes.batching import batch_graph
from xlac.passes.rules.common import batch_size, or_zeros, to_front
from xlac.passes.simplify import eliminate_dead_code
from xlac.trace import ops
from xlac.trace.checks import INDEX_DTYPE
from xlac.trace.inline import bind_node, closed_graph, inline
from xlac.trace.context import Trace
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__: list[str] = []

def attrs_without_regions(attrs) -> dict:
    return {k: v for k, v in attrs.items() if k != "regions"}


def _while_jvp(attrs, operands, results, tangents):
    cond, body = attrs["regions"]
    n = attrs["n_carries"]
    carries, invariants = operands[:n], operands[n:]
    with_tangent = [k for k in range(n) if is_differentiable(carries[k].dtype)]
    moving_invariants = [k for k, t in enumerate(tangents[n:]) if t is not None]
    new_operands = [*carries, *(or_zeros(tangents[k], carries[k]) for k in with_tangent), *invariants,
                    *(tangents[n + k] for k in moving_invariants)]
    n_t, n_inv = len(with_tangent), len(invariants)

    def split(xs):
        return xs[:n], xs[n:n + n_t], xs[n + n_t:n + n_t + n_inv], xs[n + n_t + n_inv:]

    def cond_region(xs):
        primal, _, invariant, _ = split(xs)
        return inline(cond, [*primal, *invariant])

    def body_region(xs):
        primal, carry_tangents, invariant, invariant_tangents = split(xs)
        inputs_tangents = [None] * len(body.inputs)
        for k, t in zip(with_tangent, carry_tangents):
            inputs_tangents[k] = t
        for k, t in zip(moving_invariants, invariant_tangents):
            inputs_tangents[n + k] = t
        outputs, output_tangents = forward(body, [*primal, *invariant], inputs_tangents)
        return [*outputs, *(or_zeros(output_tangents[k], outputs[k]) for k in with_tangent)]

    types = [x.value.type for x in new_operands]
    new = current_trace().bind(P.while_, new_operands, dict(attrs_without_regions(attrs), n_carries=n + n_t),
                               subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    out = [None] * n
    for k, t in zip(with_tangent, new[n:]):
        out[k] = t
    return out


def _case_jvp(attrs, operands, results, tangents):
    index, args, arg_tangents = operands[0], operands[1:], tangents[1:]
    moving = [k for k, t in enumerate(arg_tangents) if t is not None]
    with_tangent = [k for k, r in enumerate(results) if is_differentiable(r.dtype)]
    new_operands = [*args, *(arg_tangents[k] for k in moving)]

    def branch_region(branch):
        def build(xs):
            inputs_tangents = [None] * len(args)
            for k, t in zip(moving, xs[len(args):]):
                inputs_tangents[k] = t
            outputs, output_tangents = forward(branch, xs[:len(args)], inputs_tangents)
            return [*outputs, *(or_zeros(output_tangents[k], outputs[k]) for k in with_tangent)]
        return closed_graph([x.value.type for x in new_operands], build)

    graphs = tuple(branch_region(branch) for branch in attrs["regions"])
    result_types = tuple(v.type for v in graphs[0].outputs)
    new = current_trace().bind(P.case, [index, *new_operands], {"result_types": result_types}, subgraphs=graphs)
    out = [None] * len(results)
    for k, t in zip(with_tangent, new[len(results):]):
        out[k] = t
    return out


def _index(t):
    return ops.constant(t, INDEX_DTYPE)


def _row(stack, t):
    """``stack[t]`` for a traced ``t``."""
    shape = stack.shape[1:]
    return ops.reshape(ops.dynamic_slice(stack, [t] + [_index(0)] * len(shape), (1, *shape)), shape)


def _while_vjp(attrs, operands, results, cts):
    trips = attrs.get("trip_count")
    if trips is None:
        raise UnsupportedError(located(
            "reverse-mode differentiation (grad, vjp) of a while_loop (or of a Python `while` on a traced test, "
            "or a loop that breaks or returns on one), whose number of iterations is known only when the program "
            "runs, is not supported (as in JAX): use a for over a range known when tracing, xlac.fori_loop with "
            "Python int bounds, or xlac.scan"))
    cond, body = attrs["regions"]
    n = attrs["n_carries"]
    if trips == 0:                       # the carries come out as they went in
        return [*cts, *([None] * (len(operands) - n))]
    carries, invariants = operands[:n], operands[n:]
    write_once = set(attrs.get("write_once", ()))
    tape = attrs.get("residuals")
    if not isinstance(tape, _Tape):      # checkpointed: each iteration is evaluated again from its carries
        stacks = iter(tape or _stacked_carries(body, carries, invariants, trips, write_once)[1])
        # a write-once carry's value reaches nothing the backward pass reads: its initial value stands in
        tape = _Tape(_recomputing_backward(body, n), [(carries[k], False) if k in write_once else (next(stacks), True)
                                                      for k in range(n)] + [(x, False) for x in invariants])
    moving = [k for k in range(n) if is_differentiable(carries[k].dtype)]
    # A write-once carry's cotangent in iteration t is its final one (the later iterations write elsewhere):
    # read whole, not carried. Its initial value is a constant: no cotangent for it.
    carried = [k for k in moving if k not in write_once]
    final = [k for k in moving if k in write_once]
    moving_invariants = [k for k, x in enumerate(invariants) if is_differentiable(x.dtype)]
    n_c, n_mi = len(carried), len(moving_invariants)
    operands_back = [_index(trips - 1), *(or_zeros(cts[k], carries[k]) for k in carried),
                     *(ops.full_like(invariants[k], 0) for k in moving_invariants),
                     *(or_zeros(cts[k], carries[k]) for k in final), *(x for x, _ in tape.reads)]

    def cond_region(xs):
        return [ops.compare(xs[0], _index(0), "GE")]

    def body_region(xs):
        t, carry_cts, sums = xs[0], xs[1:1 + n_c], xs[1 + n_c:1 + n_c + n_mi]
        final_cts, reads = xs[1 + n_c + n_mi:1 + n_c + n_mi + len(final)], xs[1 + n_c + n_mi + len(final):]
        out_cts = dict(zip(carried, carry_cts)) | dict(zip(final, final_cts))
        reads = [_row(x, t) if per_iteration else x for x, (_, per_iteration) in zip(reads, tape.reads)]
        in_cts, row_updates = _inline_noting_row_updates(tape.backward, [*(out_cts[k] for k in moving), *reads])
        return [ops.sub(t, _index(1)), *(ct for k, ct in zip(moving, in_cts) if k not in write_once),
                *(_accumulate(acc, ct, row_updates) for acc, ct in zip(sums, in_cts[len(moving):]))]

    types = [x.value.type for x in operands_back]
    back = current_trace().bind(P.while_, operands_back, {"n_carries": 1 + n_c + n_mi, "trip_count": trips},
                                subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    out = [None] * len(operands)
    for k, ct in zip(carried, back[1:1 + n_c]):
        out[k] = ct
    for k, ct in zip(moving_invariants, back[1 + n_c:]):
        out[n + k] = ct
    return out


def _inline_noting_row_updates(graph: Graph, inputs):
    """``inline(graph, inputs)``, and for each value written as ``dynamic_update_slice(zeros, update,
    *starts)`` (the cotangent of a row an iteration reads from an invariant) its id -> (update, starts)."""
    zeros, row_updates = set(), {}

    def apply(node, operands):
        results = bind_node(node, operands)
        if node.primitive is P.constant and np.ndim(node.attrs["value"]) == 0 and node.attrs["value"] == 0:
            zeros.add(results[0].value.id)
        elif node.primitive is P.broadcast_in_dim and operands[0].value.id in zeros:
            zeros.add(results[0].value.id)
        elif node.primitive is P.dynamic_update_slice and operands[0].value.id in zeros:
            row_updates[results[0].value.id] = (operands[1], operands[2:])
        return results
    return interpret(graph, inputs, apply), row_updates


def _accumulate(total, ct, row_updates):
    """``total + ct``; where ``ct`` is zeros but for one updated slice, only that slice is added (in place:
    summing a stack's cotangent row by row costs a row per iteration, not the whole stack)."""
    if ct.value.id not in row_updates:
        return ops.add(total, ct)
    update, starts = row_updates[ct.value.id]
    return ops.dynamic_update_slice(total, ops.add(ops.dynamic_slice(total, starts, update.shape), update), starts)


@dataclass
class _Tape:
    """What the backward loop of a loop with a known trip count reads. ``backward``: one iteration's
    backward pass, a graph from the cotangents of the body's differentiable carries and one input per entry
    of ``reads`` to the cotangents of the differentiable carries and then of the differentiable invariants.
    ``reads``: (value of the enclosing trace, per iteration): a (trips, ...) stack whose row t the iteration
    t reads, or a value every iteration reads whole (an invariant)."""

    backward: Graph
    reads: list[tuple[Tracer, bool]]


def _body_backward(body: Graph, n: int, inputs):
    """``body`` evaluated into the current trace on ``inputs``: its outputs, its backward pass as a closed
    graph (see :class:`_Tape`) and the values of the current trace that pass reads (found as what its trace
    lifts: a nested loop's stacked residuals among them)."""
    outputs, backward = linearize_reverse(body, inputs, list(range(len(inputs))))
    moving = [k for k in range(n) if is_differentiable(outputs[k].dtype)]
    moving_inputs = moving + [k for k in range(n, len(inputs)) if is_differentiable(inputs[k].dtype)]
    with Trace() as back:
        out_cts = [None] * n
        for k in moving:
            out_cts[k] = back.add_input(outputs[k].value.type)
        in_cts = backward(out_cts)
        results = [or_zeros(in_cts[k], inputs[k]) for k in moving_inputs]
        results = [r if r._trace is back else back.lift(r) for r in results]
    graph = dataclasses.replace(back.graph, outputs=[r.value for r in results])
    return outputs, graph, [outer for outer, _ in back.lifted.values()]


def _recomputing_backward(body: Graph, n: int) -> Graph:
    """One iteration's backward pass that evaluates the iteration again (``checkpoint=True``): a graph from
    the carries' cotangents, the carries the iteration starts from and the invariants (see :class:`_Tape`)."""
    moving = [k for k in range(n) if is_differentiable(body.outputs[k].type.dtype)]
    moving_inputs = moving + [k for k in range(n, len(body.inputs)) if is_differentiable(body.inputs[k].type.dtype)]

    def build(xs):
        cts, starts = xs[:len(moving)], xs[len(moving):]
        _, backward = linearize_reverse(body, starts, list(range(len(starts))))
        out_cts = [None] * n
        for k, ct in zip(moving, cts):
            out_cts[k] = ct
        in_cts = backward(out_cts)
        return [or_zeros(in_cts[k], starts[k]) for k in moving_inputs]
    return closed_graph([body.outputs[k].type for k in moving] + [v.type for v in body.inputs], build)


def _taped_loop(node, carries, invariants, trips: int):
    """The loop run keeping, per iteration, the values its backward pass reads (JAX's scan residuals), and
    the :class:`_Tape` of its backward loop. Values that no carry reaches are computed once, outside."""
    _, body = node.subgraphs
    n = len(carries)
    with Trace() as step:                # one iteration and its backward
        inputs = [step.add_input(v.type) for v in body.inputs]
        outputs, backward, reads = _body_backward(body, n, inputs)
    if step.lifted:
        raise AssertionError("xlac internal error: a loop body's backward reads values from outside the loop")
    position = {x.value.id: k for k, x in enumerate(inputs)}
    varying = {v.id for v in step.graph.inputs[:n]}
    for inner in step.graph.nodes:
        if any(v.id in varying for v in inner.operands):
            varying.update(v.id for v in inner.results)
    kept_carries = [position[x.value.id] for x in reads if position.get(x.value.id, n) < n]
    per_iteration = [x for x in reads if x.value.id not in position and x.value.id in varying]
    once = [x for x in reads if x.value.id not in position and x.value.id not in varying]
    hoisted = inline(eliminate_dead_code(dataclasses.replace(step.graph, outputs=[x.value for x in once])),
                     [*carries, *invariants])
    step_graph = eliminate_dead_code(dataclasses.replace(
        step.graph, outputs=[x.value for x in outputs] + [x.value for x in per_iteration]))
    kept_types = [carries[k].value.type for k in kept_carries] + [x.value.type for x in per_iteration]
    m = len(kept_types)
    loop_operands = [*carries, _index(0), *(ops.full((trips, *t.shape), 0, t.dtype) for t in kept_types),
                     *invariants]

    def cond_region(xs):
        return [ops.compare(xs[n], _index(trips), "LT")]

    def body_region(xs):
        carry, t, stacks, invariant = xs[:n], xs[n], xs[n + 1:n + 1 + m], xs[n + 1 + m:]
        new = inline(step_graph, [*carry, *invariant])
        rows = [carry[k] for k in kept_carries] + new[n:]
        stacks = [ops.dynamic_update_slice(s, ops.reshape(r, (1, *r.shape)), [t] + [_index(0)] * r.ndim)
                  for s, r in zip(stacks, rows)]
        return [*new[:n], ops.add(t, _index(1)), *stacks]

    types = [x.value.type for x in loop_operands]
    results = current_trace().bind(P.while_, loop_operands, {"n_carries": n + 1 + m, "trip_count": trips},
                                   subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    stacks = dict(zip([inputs[k].value.id for k in kept_carries] + [x.value.id for x in per_iteration],
                      results[n + 1:]))
    by_once = dict(zip([x.value.id for x in once], hoisted))
    tape_reads = []
    for x in reads:
        k = position.get(x.value.id)
        if k is not None and k >= n:
            tape_reads.append((invariants[k - n], False))
        elif x.value.id in stacks:
            tape_reads.append((stacks[x.value.id], True))
        else:
            tape_reads.append((by_once[x.value.id], False))
    return list(results[:n]), _Tape(backward, tape_reads)


def _stacked_carries(body: Graph, carries, invariants, trips: int, skip=()):
    """The loop run again, keeping the carries each of its ``trips`` iterations starts from: one stack per
    carry not in ``skip``, for the backward loop to evaluate each iteration again from (``checkpoint``)."""
    n = len(carries)
    kept = [k for k in range(n) if k not in skip]
    m = len(kept)
    operands = [*carries, *(ops.full((trips, *carries[k].shape), 0, carries[k].dtype) for k in kept), _index(0),
                *invariants]

    def cond_region(xs):
        return [ops.compare(xs[n + m], _index(trips), "LT")]

    def body_region(xs):
        carry, stacks, t, invariant = xs[:n], xs[n:n + m], xs[n + m], xs[n + m + 1:]
        new = inline(body, [*carry, *invariant])
        kept_rows = [ops.dynamic_update_slice(s, ops.reshape(carry[k], (1, *carry[k].shape)),
                                              [t] + [_index(0)] * carry[k].ndim) for s, k in zip(stacks, kept)]
        return [*new, *kept_rows, ops.add(t, _index(1))]

    types = [x.value.type for x in operands]
    results = current_trace().bind(P.while_, operands, {"n_carries": n + m + 1, "trip_count": trips},
                                   subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    return list(results[:n]), list(results[n:n + m])


def _while_vjp_forward(node, operands):
    """The loop's results and, where its trip count is known, what its backward loop reads: a
    :class:`_Tape` (the values each iteration's backward pass reads, stacked), or with ``checkpoint`` only
    the carries each iteration starts from (one loop either way)."""
    trips = node.attrs.get("trip_count")
    n = node.attrs["n_carries"]
    if not trips:
        return bind_node(node, operands), None
    if node.attrs.get("checkpoint"):
        results, residuals = _stacked_carries(node.subgraphs[1], operands[:n], operands[n:], trips,
                                              node.attrs.get("write_once", ()))
    else:
        results, residuals = _taped_loop(node, operands[:n], operands[n:], trips)
    for result, carry in zip(results, operands[:n]):
        result.weak = carry.weak
    return results, residuals


def _case_vjp(attrs, operands, results, cts):
    index, args = operands[0], operands[1:]
    moving = [k for k, a in enumerate(args) if is_differentiable(a.dtype)]
    live = [k for k, ct in enumerate(cts) if ct is not None]
    new_operands = [*args, *(cts[k] for k in live)]

    def branch_region(branch):
        def build(xs):
            _, backward = linearize_reverse(branch, xs[:len(args)], moving)
            out_cts = [None] * len(branch.outputs)
            for k, ct in zip(live, xs[len(args):]):
                out_cts[k] = ct
            return [or_zeros(ct, xs[k]) for k, ct in zip(moving, backward(out_cts))]
        return closed_graph([x.value.type for x in new_operands], build)

    graphs = tuple(branch_region(branch) for branch in attrs["regions"])
    back = current_trace().bind(P.case, [index, *new_operands],
                                {"result_types": tuple(v.type for v in graphs[0].outputs)}, subgraphs=graphs)
    out = [None] * len(operands)
    for k, ct in zip(moving, back if isinstance(back, tuple) else (back,)):
        out[1 + k] = ct
    return out


def _batched_region(graph: Graph, types, dims, size: int, finish=None) -> tuple[Graph, list]:
    """``graph`` evaluated with a batch axis on the inputs whose ``dims`` is 0 (inputs of ``types``), its
    outputs with the batch axis first; ``finish(inputs, outputs, output dims)`` may replace the outputs.
    Also the outputs' batch axes before they were moved."""
    seen = []

    def build(xs):
        outputs, out_dims = batch_graph(graph, xs, dims)
        seen.extend(out_dims)
        if finish is not None:
            return finish(xs, outputs, out_dims)
        return [to_front(o, d, size) for o, d in zip(outputs, out_dims)]
    return closed_graph(types, build), seen


def _while_batch(attrs, operands, dims):
    """A batched loop runs until every example is done; each keeps its carries once its own condition fails."""
    cond, body = attrs["regions"]
    n = attrs["n_carries"]
    size = batch_size(operands, dims)
    carries = [to_front(x, d, size) for x, d in zip(operands[:n], dims[:n])]
    invariants = [to_front(x, d, size) if d is not None else x for x, d in zip(operands[n:], dims[n:])]
    new_operands = [*carries, *invariants]
    new_dims = [0] * n + [0 if d is not None else None for d in dims[n:]]
    types = [x.value.type for x in new_operands]

    def lanes_going_on(xs, outputs, out_dims):
        return to_front(outputs[0], out_dims[0], size)

    def any_lane(xs, outputs, out_dims):
        going = lanes_going_on(xs, outputs, out_dims)
        return [ops.reduce(going, "or", (0,))]

    cond_graph, cond_dims = _batched_region(cond, types, new_dims, size, any_lane)

    def step_where_going_on(xs, outputs, out_dims):
        going = lanes_going_on(xs, *batch_graph(cond, xs, new_dims))
        new = [to_front(o, d, size) for o, d in zip(outputs, out_dims)]
        return [ops.select(ops.broadcast_in_dim(going, x.shape, (0,)), o, x) for o, x in zip(new, xs[:n])]

    body_graph, _ = _batched_region(body, types, new_dims, size, step_where_going_on)
    new_attrs = attrs_without_regions(attrs)
    if cond_dims[0] is not None:                # examples may stop at different iterations
        new_attrs.pop("trip_count", None)
    results = current_trace().bind(P.while_, new_operands, new_attrs, subgraphs=(cond_graph, body_graph))
    return list(results), [0] * n


def _case_batch(attrs, operands, dims):
    """An unbatched index picks a branch evaluated on the whole batch; a batched one evaluates every branch
    and each example takes its own branch's results (a select, as JAX does)."""
    branches = attrs["regions"]
    size = batch_size(operands, dims)
    index, args, arg_dims = operands[0], operands[1:], dims[1:]
    args = [to_front(x, d, size) if d is not None else x for x, d in zip(args, arg_dims)]
    arg_dims = [0 if d is not None else None for d in arg_dims]
    if dims[0] is None:
        types = [x.value.type for x in args]
        graphs = tuple(_batched_region(branch, types, arg_dims, size)[0] for branch in branches)
        results = current_trace().bind(P.case, [index, *args], {"result_types": tuple(v.type for v in graphs[0].outputs)},
                                       subgraphs=graphs)
        results = list(results) if isinstance(results, tuple) else [results]
        return results, [0] * len(results)
    index = to_front(index, dims[0], size)
    per_branch = []
    for branch in branches:
        outputs, out_dims = batch_graph(branch, args, arg_dims)
        per_branch.append([to_front(o, d, size) for o, d in zip(outputs, out_dims)])
    results = per_branch[-1]
    for k in range(len(branches) - 2, -1, -1):
        taken = ops.compare(index, ops.full_like(index, k), "EQ")
        results = [ops.select(ops.broadcast_in_dim(taken, r.shape, (0,)), mine, r)
                   for mine, r in zip(per_branch[k], results)]
    return results, [0] * len(results)


P.while_.register(jvp=_while_jvp, vjp=_while_vjp, vjp_forward=_while_vjp_forward, batch=_while_batch)
P.case.register(jvp=_case_jvp, vjp=_case_vjp, batch=_case_batch)
