"""VJP, JVP and batching rules of the control-flow primitives (``while``, ``case``).

JVP: the loop or conditional again, over the primal values and their tangents; each region is the
forward-mode evaluation of the original one (:func:`xlac.passes.autodiff.forward`), so a tangent of a carry
is itself a carry. Every differentiable carry gets a tangent (zeros where it starts without one), as the
body may make it depend on one that has. The rule computes the primal values again beside the tangents (the
engine has already emitted the primal node).

VJP of a loop whose number of iterations is known when tracing (``trip_count``: ``fori_loop`` with Python
int bounds, ``scan``): under reverse mode the loop runs keeping the carries each iteration starts from
(``vjp_forward``: one loop gives the results and these residuals), then a backward loop evaluates each
iteration again from its carries, from the last to the first, and pulls the cotangents through it (the
memory of one carry per iteration; JAX's scan keeps every intermediate instead and does not recompute). A loop with a
run-time trip count has no VJP, as in JAX: the error says to use ``fori_loop`` or ``scan``. VJP of a
conditional: a conditional of the branches' VJPs.

Batching: a loop runs until every example is done, each example keeping its carries once its own condition
fails; a conditional with a batched index evaluates every branch and selects per example, with an
unbatched index it stays a conditional over batched branches.

>>> from xlac.ir import primitives as P
>>> P.while_.jvp is not None and P.case.batch is not None
True
"""
from __future__ import annotations

from xlac.errors import UnsupportedError, located
from xlac.ir import primitives as P
from xlac.ir.graph import Graph
from xlac.passes.autodiff import forward, is_differentiable, linearize_reverse
from xlac.passes.ad_rules_structure import _or_zeros
from xlac.passes.batching import batch_graph, move_batch_axis
from xlac.passes.batching_rules import _size
from xlac.trace import ops
from xlac.trace.checks import INDEX_DTYPE
from xlac.trace.inline import bind_node, closed_graph, inline
from xlac.trace.state import current_trace

__all__: list[str] = []

def attrs_without_regions(attrs) -> dict:
    return {k: v for k, v in attrs.items() if k != "regions"}


def _while_jvp(attrs, operands, results, tangents):
    cond, body = attrs["regions"]
    n = attrs["n_carries"]
    carries, invariants = operands[:n], operands[n:]
    with_tangent = [k for k in range(n) if is_differentiable(carries[k].dtype)]
    moving_invariants = [k for k, t in enumerate(tangents[n:]) if t is not None]
    new_operands = [*carries, *(_or_zeros(tangents[k], carries[k]) for k in with_tangent), *invariants,
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
        return [*outputs, *(_or_zeros(output_tangents[k], outputs[k]) for k in with_tangent)]

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
            return [*outputs, *(_or_zeros(output_tangents[k], outputs[k]) for k in with_tangent)]
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
    stacks = attrs.get("residuals") or _stacked_carries(body, carries, invariants, trips)[1]
    moving = [k for k in range(n) if is_differentiable(carries[k].dtype)]
    moving_invariants = [k for k, x in enumerate(invariants) if is_differentiable(x.dtype)]
    n_m, n_mi = len(moving), len(moving_invariants)
    operands_back = [_index(trips - 1), *(_or_zeros(cts[k], carries[k]) for k in moving),
                     *(ops.full_like(invariants[k], 0) for k in moving_invariants), *stacks, *invariants]

    def split(xs):
        return xs[0], xs[1:1 + n_m], xs[1 + n_m:1 + n_m + n_mi], xs[1 + n_m + n_mi:1 + n_m + n_mi + n], \
            xs[1 + n_m + n_mi + n:]

    def cond_region(xs):
        return [ops.compare(xs[0], _index(0), "GE")]

    def body_region(xs):
        t, carry_cts, sums, carry_stacks, invariant = split(xs)
        starts = [_row(s, t) for s in carry_stacks]
        _, backward = linearize_reverse(body, [*starts, *invariant], list(range(n + len(invariant))))
        out_cts = [None] * n
        for k, ct in zip(moving, carry_cts):
            out_cts[k] = ct
        in_cts = backward(out_cts)
        return [ops.sub(t, _index(1)), *(_or_zeros(in_cts[k], starts[k]) for k in moving),
                *(ops.add(acc, _or_zeros(in_cts[n + k], invariant[k])) for acc, k in zip(sums, moving_invariants))]

    types = [x.value.type for x in operands_back]
    back = current_trace().bind(P.while_, operands_back, {"n_carries": 1 + n_m + n_mi, "trip_count": trips},
                                subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    out = [None] * len(operands)
    for k, ct in zip(moving, back[1:1 + n_m]):
        out[k] = ct
    for k, ct in zip(moving_invariants, back[1 + n_m:]):
        out[n + k] = ct
    return out


def _stacked_carries(body: Graph, carries, invariants, trips: int):
    """The loop run again, keeping the carries each of its ``trips`` iterations starts from: one stack per
    carry, for the backward loop to evaluate each iteration again from (as JAX's scan keeps residuals)."""
    n = len(carries)
    operands = [*carries, *(ops.full((trips, *c.shape), 0, c.dtype) for c in carries), _index(0), *invariants]

    def cond_region(xs):
        return [ops.compare(xs[2 * n], _index(trips), "LT")]

    def body_region(xs):
        carry, stacks, t, invariant = xs[:n], xs[n:2 * n], xs[2 * n], xs[2 * n + 1:]
        new = inline(body, [*carry, *invariant])
        kept = [ops.dynamic_update_slice(s, ops.reshape(c, (1, *c.shape)), [t] + [_index(0)] * c.ndim)
                for s, c in zip(stacks, carry)]
        return [*new, *kept, ops.add(t, _index(1))]

    types = [x.value.type for x in operands]
    results = current_trace().bind(P.while_, operands, {"n_carries": 2 * n + 1, "trip_count": trips},
                                   subgraphs=(closed_graph(types, cond_region), closed_graph(types, body_region)))
    return list(results[:n]), list(results[n:2 * n])


def _while_vjp_forward(node, operands):
    """The loop's results and, where its trip count is known, the carries of every iteration (one loop)."""
    trips = node.attrs.get("trip_count")
    n = node.attrs["n_carries"]
    if not trips:
        return bind_node(node, operands), None
    _, body = node.subgraphs
    results, stacks = _stacked_carries(body, operands[:n], operands[n:], trips)
    for result, carry in zip(results, operands[:n]):
        result.weak = carry.weak
    return results, stacks


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
            return [_or_zeros(ct, xs[k]) for k, ct in zip(moving, backward(out_cts))]
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
        return [move_batch_axis(o, d, 0, size) for o, d in zip(outputs, out_dims)]
    return closed_graph(types, build), seen


def _while_batch(attrs, operands, dims):
    """A batched loop runs until every example is done; each keeps its carries once its own condition fails."""
    cond, body = attrs["regions"]
    n = attrs["n_carries"]
    size = _size(operands, dims)
    carries = [move_batch_axis(x, d, 0, size) for x, d in zip(operands[:n], dims[:n])]
    invariants = [move_batch_axis(x, d, 0, size) if d is not None else x for x, d in zip(operands[n:], dims[n:])]
    new_operands = [*carries, *invariants]
    new_dims = [0] * n + [0 if d is not None else None for d in dims[n:]]
    types = [x.value.type for x in new_operands]

    def lanes_going_on(xs, outputs, out_dims):
        return move_batch_axis(outputs[0], out_dims[0], 0, size)

    def any_lane(xs, outputs, out_dims):
        going = lanes_going_on(xs, outputs, out_dims)
        return [ops.reduce(going, "or", (0,))]

    cond_graph, cond_dims = _batched_region(cond, types, new_dims, size, any_lane)

    def step_where_going_on(xs, outputs, out_dims):
        going = lanes_going_on(xs, *batch_graph(cond, xs, new_dims))
        new = [move_batch_axis(o, d, 0, size) for o, d in zip(outputs, out_dims)]
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
    size = _size(operands, dims)
    index, args, arg_dims = operands[0], operands[1:], dims[1:]
    args = [move_batch_axis(x, d, 0, size) if d is not None else x for x, d in zip(args, arg_dims)]
    arg_dims = [0 if d is not None else None for d in arg_dims]
    if dims[0] is None:
        types = [x.value.type for x in args]
        graphs = tuple(_batched_region(branch, types, arg_dims, size)[0] for branch in branches)
        results = current_trace().bind(P.case, [index, *args], {"result_types": tuple(v.type for v in graphs[0].outputs)},
                                       subgraphs=graphs)
        results = list(results) if isinstance(results, tuple) else [results]
        return results, [0] * len(results)
    index = move_batch_axis(index, dims[0], 0, size)
    per_branch = []
    for branch in branches:
        outputs, out_dims = batch_graph(branch, args, arg_dims)
        per_branch.append([move_batch_axis(o, d, 0, size) for o, d in zip(outputs, out_dims)])
    results = per_branch[-1]
    for k in range(len(branches) - 2, -1, -1):
        taken = ops.compare(index, ops.full_like(index, k), "EQ")
        results = [ops.select(ops.broadcast_in_dim(taken, r.shape, (0,)), mine, r)
                   for mine, r in zip(per_branch[k], results)]
    return results, [0] * len(results)


P.while_.register(jvp=_while_jvp, vjp=_while_vjp, vjp_forward=_while_vjp_forward, batch=_while_batch)
P.case.register(jvp=_case_jvp, vjp=_case_vjp, batch=_case_batch)
