"""Structured control flow with JAX's names, signatures and semantics: ``fori_loop``, ``while_loop``,
``cond``, ``switch`` and ``scan``.

Each traces its bodies once, on abstract values, into closed graphs (regions), and records one ``while``
or ``case`` node (:mod:`xlac.ir.primitives_control`): a loop's program does not grow with its trip count.
Values of the enclosing function that a body reads (arrays it closes over, outside arrays) come in as loop
invariants. Carries are pytrees; a Python scalar in a carry is weak, and a weak carry that the body
widens (``0`` becoming float32) takes the body's dtype, as in JAX. Traced indices inside bodies are
checked as everywhere else (in a ``while_loop``'s condition too): the first failing check of any iteration
raises after the call. Called
outside a compiled function, they compile and run.

A body may write in place into arrays of the enclosing function (arguments, closures, outside arrays):
each written array becomes a carry of the loop (an extra result of a conditional) and is written back
after it, so XLA updates it in its own buffer. The rules for the transforms are in
:mod:`xlac.passes.rules.control`.

>>> import numpy as np, xlac
>>> @xlac.compile
... def total(x):
...     return xlac.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i], 0.0)
>>> float(total(np.arange(5.0)))
10.0
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass

import numpy as np

from xlac.api import compile as compile_function
from xlac.convert import converted
from xlac.errors import SourceLocation, UnsupportedError, located
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Value
from xlac.ir.types import TensorType
from xlac.numpy._core import asarray
from xlac.outside_state import OutsideState
from xlac.function_graph import pure_graph
from xlac.trace import ops, pytree
from xlac.trace.checks import Check, INDEX_DTYPE
from xlac.trace.context import Trace
from xlac.trace.facts import set_known_range
from xlac.trace.inline import closed_graph, inline
from xlac.trace.views import here
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer

__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]

STATUS_TYPE = TensorType((2,), INDEX_DTYPE)      # a region's after-call checks: see xlac.trace.checks
BRANCH_INDEX = np.dtype("int32")


@dataclass
class Region:
    """A body traced into a closed graph. Its inputs: the operands, a status input (a loop body), then one
    per value of ``lifted``. Its outputs: the results' leaves, the checks status (a loop body, or a body
    with checks), then the new value of each array of ``written``."""

    graph: Graph
    out_tree: pytree.TreeDef
    out_weak: list[bool]
    lifted: list[Tracer]           # values of the enclosing trace the body reads, for the trailing inputs
    written: list[Tracer]          # those of them the body writes into, in that order
    checks: list[Check]
    has_status: bool
    location: SourceLocation | None

    @property
    def out_types(self) -> list[TensorType]:
        return [v.type for v in self.graph.outputs[:len(self.out_weak)]]

    @property
    def written_outputs(self) -> list[Value]:
        return self.graph.outputs[len(self.out_weak) + self.has_status:]


def _body_location(fn) -> SourceLocation | None:
    code = getattr(fn, "__code__", None)
    return SourceLocation(code.co_filename, code.co_firstlineno, code.co_name) if code is not None else None


def _trace_region(fn, operands: list[Tracer], what: str, *, status_carry: bool = False,
                  location: SourceLocation | None = None, user_fn=None) -> Region:
    """Trace ``fn(*operands)`` into a closed graph. ``status_carry``: the graph takes the checks status
    of the iterations before and returns it, or its own where those all held (a loop body); a body with
    checks is traced again so that none of its writes happens after an earlier iteration failed, as NumPy
    would have stopped there. ``location``: the user's function, where ``fn`` wraps it, for errors;
    ``user_fn``: that function, whose reachable state (a global list it appends to) must come out as it
    went in: no traced value stays there."""
    watched = [fn] + ([user_fn] if user_fn is not None else [])
    region = _trace_region_once(fn, operands, what, status_carry, location, watched, guard_by_status=False)
    if status_carry and region.checks:
        region = _trace_region_once(fn, operands, what, status_carry, location, watched, guard_by_status=True)
    return region


def _trace_region_once(fn, operands, what, status_carry, location, watched, guard_by_status: bool) -> Region:
    with Trace() as trace:
        trace.writes_enclosing = True
        trace.outside = OutsideState(trace, f"{what}", implicit_arguments=False)
        for watched_fn in watched:
            trace.outside.watch_function(watched_fn, fixed=True)
        inputs = [trace.add_input(x.value.type, weak=x.weak, name=f"operand{i}") for i, x in enumerate(operands)]
        status_in = trace.add_input(STATUS_TYPE, name="status") if status_carry else None
        if guard_by_status:
            trace.checks.ok = ops.compare(_status_code(status_in), ops.constant(0, INDEX_DTYPE), "EQ")
        try:
            out_leaves, out_tree = pytree.flatten(fn(*inputs))
        except BaseException:
            trace.outside.abandon()
            raise
        trace.outside.finish_watch()
        outputs = [here(asarray(leaf)) for leaf in out_leaves]
        out_weak = [x.weak for x in outputs]
        checks = trace.checks.all_checks()
        if status_carry:
            outputs.append(_first_failure(status_in, trace.checks.output()) if checks else status_in)
        elif checks:
            outputs.append(trace.checks.output())
    graph = trace.graph
    graph.outputs = [x.value for x in outputs]
    n_own = len(operands) + status_carry
    graph, written = pure_graph(graph, n_own, enclosing_writes=True)
    lifted = [outer for outer, _ in trace.lifted.values()]
    return Region(graph, out_tree, out_weak, lifted, [lifted[i - n_own] for i in written], checks,
                  status_carry or bool(checks), location or _body_location(fn))


def _closed(region: Region, n_own: int, layout: list[Tracer], *, status_input: bool = False):
    """``region``'s graph taking the node's operands: its own first ``n_own`` inputs (then an unused status
    input if ``status_input``), then one per value of ``layout`` (values of the enclosing trace, its own
    lifted ones where it has them). Also the input standing for each value of ``layout``."""
    own = region.graph.inputs[:n_own] + ([Value(STATUS_TYPE)] if status_input else [])
    by_id = {x.value.id: v for x, v in zip(region.lifted, region.graph.inputs[n_own:])}
    for_layout = [by_id.get(x.value.id) or Value(x.value.type) for x in layout]
    inputs = own + for_layout
    return dataclasses.replace(region.graph, inputs=inputs, input_names=[""] * len(inputs)), for_layout


def _layout(written: list[Tracer], regions: list[Region]) -> list[Tracer]:
    """The enclosing values a node's regions share as operands: the written ones (carried), then every other
    value some region reads (invariants), each once."""
    seen = {w.value.id for w in written}
    out = list(written)
    for region in regions:
        for x in region.lifted:
            if x.value.id not in seen:
                seen.add(x.value.id)
                out.append(x)
    return out


def _write_back(written: list[Tracer], new_values) -> None:
    """After a loop or a conditional: the arrays of this trace its bodies wrote now hold the new values."""
    for array, new in zip(written, new_values):
        array._store(new)


def _status_code(status: Tracer) -> Tracer:
    return ops.reshape(ops.slice(status, (0,), (1,), (1,)), ())


def _first_failure(before: Tracer, now: Tracer) -> Tracer:
    failed_before = ops.compare(_status_code(before), ops.constant(0, INDEX_DTYPE), "NE")
    return ops.select(ops.broadcast_in_dim(failed_before, (2,), ()), before, now)


def _stopping_at_failure(cond_graph: Graph, n_carries: int) -> Graph:
    """A loop's condition, false once its status input (after the ``n_carries`` carries) says that a check of
    the body failed: NumPy raised there, and the writes after it, which a loop variable's update may be, are
    not made (the loop would not end)."""
    def build(inputs):
        (more,) = inline(cond_graph, inputs)
        held = ops.compare(_status_code(inputs[n_carries]), ops.constant(0, INDEX_DTYPE), "EQ")
        return [ops.and_(more, held)]
    return closed_graph([v.type for v in cond_graph.inputs], build)


def _type_mismatch(api: str, where: str, path: str, expected: TensorType, got: TensorType,
                   location: SourceLocation | None) -> TypeError:
    return TypeError(located(f"{api}: {where} {path} is {expected} going in and {got} coming out; "
                             "it must keep its shape and dtype", location))


def _leaf_paths(tree: pytree.TreeDef, name: str) -> list[str]:
    return [name + path for path in pytree.leaf_paths(tree)]


# ---------------------------------------------------------------- while_loop and fori_loop


def _as_traced(fn):
    """The user's ``fn`` as the current trace runs it: converted (``xlac.convert``) unless that is off."""
    trace = current_trace()
    return converted(fn) if trace is not None and trace.convert else fn


def _run_compiled(fn, *args):
    """``fn(*args)`` compiled and run: a control-flow call outside any compiled function."""
    return compile_function(fn)(*args)


def _as_carries(leaves) -> list[Tracer]:
    return [asarray(leaf) for leaf in leaves]


def _traced_body(api: str, body_fun, tree, carries: list[Tracer], wrap,
                 location: SourceLocation | None, user_fn, names: list[str]) -> tuple[list[Tracer], Region]:
    def trace_once(carries):
        body = _trace_region(wrap(body_fun), carries, f"{api}'s body", status_carry=True, location=location,
                             user_fn=user_fn)
        if body.out_tree != tree:
            raise TypeError(located(f"{api}: body_fun must return a value with the structure of init_val "
                                    f"({len(carries)} arrays); it returned another structure", body.location))
        return body
    return _settled(api, carries, names, trace_once)


def _settled(api: str, carries: list[Tracer], paths: list[str], trace_once) -> tuple[list[Tracer], Region]:
    """``trace_once(carries)``, traced again while a weak carry comes out widened (see :func:`_widened`)."""
    for _ in range(len(carries) + 1):
        region = trace_once(carries)
        if not _widened(api, carries, region, paths):
            return carries, region
    raise AssertionError("xlac internal error: loop carries kept widening")


def _widened(api: str, carries: list[Tracer], body: Region, paths: list[str]) -> bool:
    """Give each weak carry that ``body`` returns with another dtype that dtype (as JAX promotes weak-typed
    loop inputs), in place; whether any changed. Other changes of shape or dtype raise a TypeError."""
    widened = False
    for k, (carry, out_type) in enumerate(zip(carries, body.out_types)):
        if carry.value.type == out_type:
            continue
        if not (carry.weak and carry.shape == out_type.shape):
            raise _type_mismatch(api, "the carry", paths[k], carry.value.type, out_type, body.location)
        carries[k] = ops.convert(carry, out_type.dtype, weak=body.out_weak[k])
        widened = True
    return widened


def _while(api: str, cond_fun, body_fun, init_val, location: SourceLocation | None = None,
           trip_count: int | None = None, user_fn=None, *, write_once: tuple = (), checkpoint: bool = False,
           names: list[str] | None = None):
    """``user_fn``: the user's function ``body_fun`` runs (fori_loop's body, scan's f), if it wraps one.
    ``names``: each carry leaf as the user wrote it, for errors (``init_val``'s paths where it is theirs).
    ``write_once``: the leaves of ``init_val`` that the body only writes into, no element in two iterations,
    each a constant going in (scan's stacked outputs); ``checkpoint``: see :func:`fori_loop` (both ``while`` attributes,
    read by the loop's VJP: :mod:`xlac.passes.rules.control`)."""
    leaves, tree = pytree.flatten(init_val)
    carries = _as_carries(leaves)
    cond_fun, body_fun = _as_traced(cond_fun), _as_traced(body_fun)

    def wrap(fn):
        return lambda *c: fn(pytree.unflatten(tree, list(c)))
    carries, body = _traced_body(api, body_fun, tree, carries, wrap, location or _body_location(body_fun),
                                 user_fn or body_fun, names or _leaf_paths(tree, "init_val"))
    cond = _trace_region(wrap(cond_fun), carries, f"{api}'s condition", location=_body_location(cond_fun),
                         user_fn=cond_fun)
    if cond.out_types != [TensorType((), np.dtype("bool"))]:
        raise TypeError(located(f"{api}: cond_fun must return a boolean scalar, got "
                                f"{', '.join(map(str, cond.out_types)) or 'nothing'}", cond.location))
    if cond.written:
        raise UnsupportedError(located(f"{api}: cond_fun writes into an array; write in body_fun", cond.location))
    if cond.checks:
        return _while_with_checked_condition(api, cond_fun, body_fun, pytree.unflatten(tree, carries),
                                             location or _body_location(body_fun), trip_count, user_fn or body_fun,
                                             names or _leaf_paths(tree, "init_val"))
    status = ops.full((2,), 0, INDEX_DTYPE)
    # The node's operands: the carries, the checks status and the arrays the body writes (all carried),
    # then the values of this trace the regions only read (loop invariants).
    layout = _layout(body.written, [body, cond])
    n = len(carries) + 1 + len(body.written)
    cond_graph, _ = _closed(cond, len(carries), layout, status_input=True)
    if body.checks and trip_count is None:
        cond_graph = _stopping_at_failure(cond_graph, len(carries))
    body_graph, _ = _closed(body, len(carries) + 1, layout)
    attrs = {"n_carries": n} if trip_count is None else {"n_carries": n, "trip_count": trip_count}
    if write_once:
        attrs["write_once"] = tuple(write_once)
    if checkpoint:
        attrs["checkpoint"] = True
    results = current_trace().bind(P.while_, [*carries, status, *layout], attrs, subgraphs=(cond_graph, body_graph))
    for result, carry in zip(results, carries):
        result.weak = carry.weak
    _write_back(body.written, results[len(carries) + 1:])
    if body.checks:
        current_trace().checks.adopt_status(results[len(carries)], body.checks)
    return pytree.unflatten(tree, list(results[:len(carries)]))


def _while_with_checked_condition(api: str, cond_fun, body_fun, init_val, location, trip_count, user_fn, names):
    """A loop whose condition checks traced indices: the condition is evaluated before the loop and at the
    end of each iteration, its value carried, so that its checks join the body's status carry (the first
    failure of either raises after the call, as NumPy raises at once). The loop stops at a failed check."""
    def holds(value):
        ok = current_trace().checks.ok          # every check so far held (this evaluation's included)
        value = asarray(value)
        return value if ok is None else ops.and_(value, ok)

    def step(state):
        value = body_fun(state[0])
        return value, holds(cond_fun(value))
    return _while(api, lambda state: state[1], step, (init_val, holds(cond_fun(init_val))), location,
                  trip_count, user_fn, names=[*names, "the condition's value"])[0]


def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, as one XLA loop (``jax.lax.while_loop``).

    >>> import numpy as np, xlac
    >>> int(xlac.while_loop(lambda v: v < 100, lambda v: v * 3, 1))
    243

    ``cond_fun`` may index with a traced value; out of bounds raises NumPy's error after the call:

    >>> x = xlac.asarray(np.array([3, 1, 0, 2]))
    >>> int(xlac.while_loop(lambda i: x[i] != 0, lambda i: i + 1, 0))
    2
    """
    if current_trace() is None:
        return _run_compiled(lambda init: while_loop(cond_fun, body_fun, init), init_val)
    return _while("while_loop", cond_fun, body_fun, init_val)


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def fori_loop(lower, upper, body_fun, init_val, *, unroll=1, checkpoint=False):
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``, as one XLA loop
    (``jax.lax.fori_loop``). ``i`` is traced; with Python int bounds it is a weak int64, as a Python int.
    ``unroll``: iterations per step of the loop (static bounds), ``True`` for a fully unrolled loop.
    ``checkpoint``: under reverse-mode differentiation keep only the carries each iteration starts from
    and evaluate the iteration again in the backward pass, instead of keeping every value its backward pass
    reads (the default, as JAX): less memory for one more forward evaluation. For example
    ``xlac.grad(lambda w: xlac.fori_loop(0, 1000, step, w, checkpoint=True))``.

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.fori_loop(0, 4, lambda i, v: v + i, np.zeros(2))).tolist()
    [6.0, 6.0]
    """
    if current_trace() is None:
        return _run_compiled(lambda init: fori_loop(lower, upper, body_fun, init, unroll=unroll,
                                                    checkpoint=checkpoint), init_val)
    static = _is_static_int(lower) and _is_static_int(upper)
    if unroll is True or (unroll is not False and operator.index(unroll) != 1):
        if not static:
            raise UnsupportedError(located("fori_loop: unroll needs bounds known when tracing (Python ints)"))
        return _unrolled_fori(int(lower), int(upper), body_fun, init_val, unroll, checkpoint)
    return _rolled_fori(lower, upper, body_fun, init_val, checkpoint)


def _loop_index(lower, upper):
    lo, hi = asarray(lower), asarray(upper)
    dtype = np.result_type(lo.dtype, hi.dtype) if not (lo.weak and hi.weak) else lo.dtype
    if dtype.kind not in "iu":
        raise TypeError(located(f"fori_loop: the bounds must be integers, got {lo.dtype} and {hi.dtype}"))
    weak = lo.weak and hi.weak
    return ops.convert(lo, dtype, weak=weak), ops.convert(hi, dtype, weak=weak)


def _rolled_fori(lower, upper, body_fun, init_val, checkpoint=False):
    lo, hi = _loop_index(lower, upper)
    body_fun = _as_traced(body_fun)

    def cond_fun(state):
        return state[0] < hi

    trips = max(int(upper) - int(lower), 0) if _is_static_int(lower) and _is_static_int(upper) else None

    def step(state):
        i, val = state
        if trips:              # static bounds: the body's index lies in them (windows at i are proven or exact)
            set_known_range(i, (int(lower), int(upper) - 1))
        return i + ops.constant(1, i.dtype, weak=i.weak), body_fun(i, val)
    names = ["the loop index", *_leaf_paths(pytree.flatten(init_val)[1], "init_val")]
    return _while("fori_loop", cond_fun, step, (lo, init_val), _body_location(body_fun), trips, body_fun,
                  checkpoint=checkpoint, names=names)[1]


def _unrolled_fori(lower: int, upper: int, body_fun, init_val, unroll, checkpoint=False):
    trip = max(upper - lower, 0)
    per_step = trip if unroll is True else int(unroll)
    if per_step < 1:
        raise ValueError(located(f"fori_loop: unroll must be a positive integer or True, got {unroll!r}"))
    steps, rest = divmod(trip, per_step) if per_step else (0, 0)
    body_fun = _as_traced(body_fun)
    val = init_val
    if steps > 1:
        def chunk(i, v):
            for k in range(per_step):
                v = body_fun(i * per_step + lower + k, v)
            return v
        val = _rolled_fori(0, steps, chunk, val, checkpoint)
    elif steps == 1:
        for k in range(per_step):
            val = body_fun(asarray(lower + k), val)
    for k in range(steps * per_step, trip):
        val = body_fun(asarray(lower + k), val)
    return val


# ---------------------------------------------------------------- cond and switch


def switch(index, branches, *operands):
    """``branches[index](*operands)``, with ``index`` clamped into range, as one XLA conditional
    (``jax.lax.switch``): every branch is traced once, and only the chosen one runs.

    >>> import numpy as np, xlac
    >>> f = xlac.compile(lambda i, x: xlac.switch(i, [lambda v: v + 1, lambda v: v * 10], x))
    >>> float(f(1, 2.0)), float(f(7, 2.0))
    (20.0, 20.0)
    """
    branches = list(branches)
    if not branches:
        raise ValueError(located("switch: branches must hold at least one function"))
    if current_trace() is None:
        return _run_compiled(lambda i, *xs: switch(i, branches, *xs), index, *operands)
    if _is_static_int(index):                  # known while tracing: only that branch is needed
        return _as_traced(branches[min(max(int(index), 0), len(branches) - 1)])(*operands)
    index = asarray(index)
    if index.shape != () or index.dtype.kind not in "iub":
        raise TypeError(located(f"switch: the index must be an integer scalar, got {index.value.type}"))
    clamped = ops.clamp(ops.constant(0, BRANCH_INDEX), ops.convert(index, BRANCH_INDEX),
                        ops.constant(len(branches) - 1, BRANCH_INDEX))
    return _case("switch", clamped, branches, operands)


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one XLA conditional
    (``jax.lax.cond``): both branches are traced once, and only the chosen one runs.

    >>> import numpy as np, xlac
    >>> f = xlac.compile(lambda x: xlac.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x))
    >>> np.asarray(f(np.array([1.0, 2.0]))).tolist(), np.asarray(f(np.array([-1.0, -2.0]))).tolist()
    ([2.0, 4.0], [1.0, 2.0])
    """
    if current_trace() is None:
        return _run_compiled(lambda p, *xs: cond(p, true_fun, false_fun, *xs), pred, *operands)
    if isinstance(pred, (bool, np.bool_)) or _is_static_int(pred):
        return _as_traced(true_fun if pred else false_fun)(*operands)
    return _case("cond", branch_index("cond", pred), [false_fun, true_fun], operands)


def branch_index(api: str, pred) -> Tracer:
    """The index of the branch a traced predicate takes: 1 where it is true (nonzero), else 0."""
    pred = asarray(pred)
    if pred.shape != ():
        raise TypeError(located(f"{api}: the predicate must be a scalar, got {pred.value.type}"))
    if pred.dtype.kind not in "biu":
        raise TypeError(located(f"{api}: the predicate must be a boolean or integer scalar, got {pred.dtype}"))
    return ops.convert(ops.compare(pred, ops.full_like(pred, 0), "NE"), BRANCH_INDEX)


def _case(api: str, index: Tracer, branches, operands):
    branches = [_as_traced(fn) for fn in branches]
    leaves, tree = pytree.flatten(tuple(operands))
    args = _as_carries(leaves)
    regions = trace_branches(api, [lambda *xs, fn=fn: fn(*pytree.unflatten(tree, list(xs))) for fn in branches],
                             args, [_body_location(fn) for fn in branches], branches)
    _check_same_outputs(api, regions)
    return pytree.unflatten(regions[0].out_tree, bind_case(index, regions, args))


def trace_branches(api: str, branches, args: list[Tracer], locations, user_fns=None) -> list[Region]:
    """Each of ``branches`` traced on ``args`` into a region (``user_fns``: the user's function each one
    runs, whose state is watched)."""
    user_fns = user_fns or [None] * len(branches)
    return [_trace_region(fn, args, f"{api}'s branch {k}", location=location, user_fn=user_fn)
            for k, (fn, location, user_fn) in enumerate(zip(branches, locations, user_fns))]


def _check_same_outputs(api: str, regions: list[Region]) -> None:
    first = regions[0]
    for k, region in enumerate(regions[1:], 1):
        if region.out_tree != first.out_tree:
            raise TypeError(located(f"{api}: branch {k} returns another structure than branch 0", region.location))
        paths = _leaf_paths(first.out_tree, "output")
        for path, a, b in zip(paths, first.out_types, region.out_types):
            if a != b:
                raise TypeError(located(f"{api}: {path} is {a} in branch 0 and {b} in branch {k}; every branch "
                                        "must return the same shapes and dtypes", region.location))


def bind_case(index: Tracer, regions: list[Region], args: list[Tracer]) -> list[Tracer]:
    """One ``case`` node running ``regions[index]`` on ``args`` (regions of one signature); its results.
    Arrays of this trace that a branch writes are written back after it."""
    first = regions[0]
    checks = [region.checks for region in regions]
    if any(checks):
        offsets = np.cumsum([0] + [len(c) for c in checks[:-1]])
        regions = [_with_status_output(region, int(offset)) for region, offset in zip(regions, offsets)]
    # The node's operands: the branches' operands, then the arrays of this trace any branch writes, then
    # those they only read. Each branch returns the new value of every written array (its input if it
    # does not write it).
    written = _layout([], [dataclasses.replace(region, lifted=region.written) for region in regions])
    layout = _layout(written, regions)
    graphs = []
    for region in regions:
        graph, for_layout = _closed(region, len(args), layout)
        new_values = dict(zip((w.value.id for w in region.written), region.written_outputs))
        results_and_status = graph.outputs[:len(region.out_weak) + region.has_status]
        graph.outputs = results_and_status + [new_values.get(w.value.id, v) for w, v in zip(written, for_layout)]
        graphs.append(graph)
    result_types = tuple(v.type for v in graphs[0].outputs)
    results = list(current_trace().bind(P.case, [index, *args, *layout], {"result_types": result_types},
                                        subgraphs=tuple(graphs)))
    n_results = len(first.out_weak)
    _write_back(written, results[n_results + any(checks):])
    if any(checks):
        current_trace().checks.adopt_status(results[n_results], [check for c in checks for check in c])
    results = results[:n_results]
    for k, result in enumerate(results):
        result.weak = all(region.out_weak[k] for region in regions)
    return results


def with_outputs(region: Region, keep: list[int], dtypes: list) -> Region:
    """``region`` returning only its results numbered in ``keep``, each converted to the dtype at its place
    in ``dtypes``, as one flat list (its status and writes stay)."""
    n_results = len(region.out_weak)

    def build(inputs):
        outputs = inline(region.graph, inputs)
        results = [outputs[k] if outputs[k].dtype == dtype else ops.convert(outputs[k], dtype)
                   for k, dtype in zip(keep, dtypes)]
        return results + outputs[n_results:]
    graph = closed_graph([v.type for v in region.graph.inputs], build)
    out_tree = pytree.TreeDef("list", (pytree.LEAF,) * len(keep))
    return dataclasses.replace(region, graph=graph, out_tree=out_tree, out_weak=[region.out_weak[k] for k in keep])


def _with_status_output(region: Region, offset: int) -> Region:
    """``region`` returning a checks status numbered from ``offset`` (the checks of the branches before),
    zeros where it has no checks: every branch of one ``case`` returns one."""
    n_results = len(region.out_weak)

    def build(inputs):
        outputs = inline(region.graph, inputs)
        if region.checks:
            status = outputs.pop(n_results)
            code = _status_code(status)
            failed = ops.compare(code, ops.constant(0, INDEX_DTYPE), "NE")
            code = ops.select(failed, ops.add(code, ops.constant(offset, INDEX_DTYPE)), code)
            status = ops.concatenate([ops.reshape(code, (1,)), ops.slice(status, (1,), (2,), (1,))], 0)
        else:
            status = ops.full((2,), 0, INDEX_DTYPE)
        outputs.insert(n_results, status)
        return outputs
    graph = closed_graph([v.type for v in region.graph.inputs], build)
    return dataclasses.replace(region, graph=graph, has_status=True)


# ---------------------------------------------------------------- scan


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, *, checkpoint=False):
    """``carry, y = f(carry, x)`` for each ``x`` along the leading axis of ``xs``; the final carry and the
    ``y``'s stacked (``jax.lax.scan``). ``xs=None`` with ``length``: ``f`` gets ``None`` for ``x``.
    ``unroll``: steps per iteration of the loop (the rest run after it), ``True`` for no loop, as JAX.
    ``checkpoint``: under reverse-mode differentiation keep only the carry each iteration starts from and
    evaluate the iteration again in the backward pass (as ``jax.checkpoint`` around ``f``), instead of
    keeping every value its backward pass reads: less memory, one more forward evaluation.

    >>> import numpy as np, xlac, xlac.numpy as xnp
    >>> carry, ys = xlac.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(1.0, 4.0))
    >>> float(carry), np.asarray(ys).tolist()
    (6.0, [0.0, 2.0, 9.0])
    >>> np.asarray(xlac.scan(lambda c, x: (c + x, c), 0.0, np.arange(5.0), unroll=2)[1]).tolist()
    [0.0, 0.0, 1.0, 3.0, 6.0]
    >>> def final(checkpoint):
    ...     return lambda w: xlac.scan(lambda c, x: (xnp.sin(c * w + x), c), 0.5, np.arange(3.0),
    ...                                checkpoint=checkpoint)[0]
    >>> round(float(xlac.grad(final(True))(0.5)), 6) == round(float(xlac.grad(final(False))(0.5)), 6)
    True
    """
    if current_trace() is None:
        return _run_compiled(lambda c, x: scan(f, c, x, length, reverse, unroll, checkpoint=checkpoint), init, xs)
    f = _as_traced(f)
    x_leaves, x_tree = pytree.flatten(xs)
    x_arrays = _as_carries(x_leaves)
    lengths = {x.shape[0] for x in x_arrays if x.ndim}
    if any(x.ndim == 0 for x in x_arrays):
        raise ValueError(located("scan: every leaf of xs needs a leading axis to scan over"))
    if length is not None:
        lengths.add(operator.index(length))
    if len(lengths) != 1:
        raise ValueError(located(f"scan: the leading axes of xs and length disagree: {sorted(lengths)}"
                                 if lengths else "scan: give xs or length"))
    (n,) = lengths
    carry_leaves, carry_tree = pytree.flatten(init)
    carries = _as_carries(carry_leaves)

    # Trace f once, on stand-ins for one example, for the types of its outputs (its carry may widen).
    example = [ops.full(a.shape[1:], 0, a.dtype) for a in x_arrays]
    step = _scan_step(f, carry_tree, x_tree, len(carries))
    carries, region = _traced_scan_step(step, carry_tree, carries, example, f)
    n_carry = len(carries)
    y_types = region.out_types[n_carry:]
    _, y_tree = _split_out_tree(region.out_tree)
    buffers = [ops.full((n, *t.shape), 0, t.dtype) for t in y_types]
    if n == 0:
        return pytree.unflatten(carry_tree, carries), pytree.unflatten(y_tree, buffers)
    per_step = _unroll_count(unroll, n)
    n_results = len(region.out_weak)

    def advance(i, cs, bufs):
        """Step ``i`` (counted in the order the steps run), in the current trace."""
        at = ops.sub(ops.constant(n - 1, INDEX_DTYPE), i) if reverse else i
        x = [ops.reshape(ops.dynamic_slice(a, [at] + [ops.constant(0, INDEX_DTYPE)] * (a.ndim - 1),
                                           (1, *a.shape[1:])), a.shape[1:]) for a in x_arrays]
        outs = inline(region.graph, [*cs, *x, *region.lifted])
        if region.checks:
            current_trace().checks.adopt_status(outs[n_results], region.checks)
        _write_back(region.written, outs[n_results + region.has_status:])
        new_cs, ys = outs[:n_carry], outs[n_carry:n_results]
        zeros = [ops.constant(0, INDEX_DTYPE)]
        new_bufs = [ops.dynamic_update_slice(b, ops.reshape(y, (1, *y.shape)), [at] + zeros * y.ndim)
                    for b, y in zip(bufs, ys)]
        return new_cs, new_bufs

    def body(state):                     # ``per_step`` steps per iteration of the loop
        i, cs, bufs = state
        for k in range(per_step):
            cs, bufs = advance(ops.add(i, ops.constant(k, INDEX_DTYPE)) if k else i, cs, bufs)
        return ops.add(i, ops.constant(per_step, INDEX_DTYPE)), cs, bufs

    def more(state):
        return ops.compare(state[0], ops.constant(loops * per_step, INDEX_DTYPE), "LT")
    loops = n // per_step
    final, ys = carries, buffers
    if loops > 1:
        stacked = tuple(range(1 + n_carry, 1 + n_carry + len(buffers)))      # the leaves of the buffers
        _, final, ys = _while("scan", more, body, (ops.constant(0, INDEX_DTYPE, weak=True), carries, buffers),
                              _body_location(f), loops, f, write_once=stacked, checkpoint=checkpoint)
    for i in range(loops * per_step, n) if loops > 1 else range(n):    # the rest, or all of a full unroll
        final, ys = advance(ops.constant(i, INDEX_DTYPE), final, ys)
    return pytree.unflatten(carry_tree, list(final)), pytree.unflatten(y_tree, list(ys))


def _unroll_count(unroll, n: int) -> int:
    """Steps per iteration of scan's loop for JAX's ``unroll``: an int >= 1, or a bool (True: all ``n``)."""
    if isinstance(unroll, (bool, np.bool_)):
        return max(n, 1) if unroll else 1
    if not _is_static_int(unroll) or unroll < 1:
        raise ValueError(located(f"scan: unroll must be a positive integer or a bool, got {unroll!r}"))
    return min(int(unroll), max(n, 1))


def _scan_step(f, carry_tree, x_tree, n_carry):
    def step(*leaves):
        carry = pytree.unflatten(carry_tree, list(leaves[:n_carry]))
        x = pytree.unflatten(x_tree, list(leaves[n_carry:]))
        out = f(carry, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(located("scan: f must return a pair (carry, y)", _body_location(f)))
        return out
    return step


def _split_out_tree(out_tree):
    """The carry's and the y's tree of a (carry, y) pair's tree."""
    placeholder = pytree.unflatten(out_tree, list(range(_count_leaves(out_tree))))
    carry, y = placeholder
    return pytree.flatten(carry)[1], pytree.flatten(y)[1]


def _count_leaves(tree) -> int:
    return len(pytree.leaf_paths(tree))


def _traced_scan_step(step, carry_tree, carries, x_example, f):
    def trace_once(carries):
        region = _trace_region(step, [*carries, *x_example], "scan's f", location=_body_location(f), user_fn=f)
        if _split_out_tree(region.out_tree)[0] != carry_tree:
            raise TypeError(located("scan: f must return a carry with the structure of init", region.location))
        return region
    return _settled("scan", carries, _leaf_paths(carry_tree, "init"), trace_once)


