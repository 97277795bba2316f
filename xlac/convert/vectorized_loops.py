"""Loops whose iterations are independent, run at once: the body traced once, then evaluated over every index
by xlac's batching (as ``xlac.vmap`` would), and its rows written with one update, instead of an XLA loop.

A counted loop (see :mod:`xlac.convert.loops`) is vectorized when the graph of its body, traced with a traced
index, proves that no iteration depends on another:

- every value the loop carries comes out of an iteration as it went in, or is an accumulator
  (``acc += f(i)``, ``acc = max(acc, f(i))``, where ``f(i)`` does not read ``acc``: see
  :mod:`xlac.convert.accumulators`), whose terms are computed at once and then reduced;
- every array the body writes in place, it writes only in one row (the elements at one index along one
  axis), the same for each write of the iteration and a different one per iteration (``out[i] = ...``,
  ``g[i, i:] = ...``, ``out[i + 1, :] += ...``, ``out[:, j] = ...``): its index is the loop's index plus a
  constant;
- the body reads such an array only in that row (``out[i]``, ``out[:, j]``), never elsewhere;
- the body checks nothing when the program runs (an index out of bounds would raise after some
  iterations' writes, which NumPy would not have made);

or where its body reduces, per iteration, positions ``lo(i) <= p < hi(i)`` of values the same in every
iteration (``y[i] = data[o[i]:o[i + 1]] @ x[indices[o[i]:o[i + 1]]]``): those reductions become segment
reductions (see :mod:`xlac.convert.segment_reductions`), the rest of the body is batched as above, and
where, when the program runs, the intervals are not sorted and disjoint or a check of the body fails, the
rolled loop runs instead (a ``cond``), so that values, errors and the writes made before them are NumPy's.

Then it runs batched where ``xlac.config.vectorize_loops`` says: ``"always"``, or ``"auto"``: on the CPU only a
body with segment reductions (a CSR matrix-vector product of 2,000 rows: 5.2 ms rolled, 0.9 ms) or with a
contraction (batched, its matrix-vector products become one matrix product; measured in
``benchmarks/vectorized_loops.py``, elementwise bodies and reductions ran as fast rolled or faster, as XLA:CPU
streams a rolled body's rows through its cache, and bodies that only accumulate too: XLA:CPU's loop costs tens
of nanoseconds per iteration, less than the batched gather and reduction), on other devices every proven loop.
Accumulated floats are summed (or multiplied) in another order than the loop's: ``"never"`` keeps its order.

Otherwise :func:`vectorized_fori` raises :class:`NotVectorized` saying which condition failed, and the loop
runs as before. The vectorized body sees its rows as arrays with a length of one along the row's axis (its
own row of each written array), so that the batch holds each row once: the rows go in as one slice of each
written array and come out as one ``dynamic_update_slice``. The rows it reads of the arrays it does not
write (``x[i]``, ``d[:, i]``) go in as slices too, not gathers.

>>> import numpy as np, xlac
>>> @xlac.compile
... def projections(x, basis):
...     out = np.zeros((x.shape[0], basis.shape[1]))
...     for i in range(x.shape[0]):
...         out[i] = x[i] @ basis
...     return out
>>> x, basis = np.arange(200.0).reshape(50, 4), np.ones((4, 3))
>>> np.allclose(projections(x, basis), x @ basis)
True
>>> [d.decision for d in projections.trace(x, basis).loop_decisions]
['vectorized']
"""
from __future__ import annotations

import dataclasses

import numpy as np

import xlac.passes.rules  # noqa: F401  (registers the batching rules on the primitives)
from xlac.config import config
from xlac.control_flow import _trace_region, cond
from xlac.convert.accumulators import Accumulator
from xlac.convert.segment_reductions import Segments, segment_reduce, varying_values, window_masks_left
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.ir.interpreter import interpret
from xlac.numpy._core import asarray
from xlac.passes.batching import batch_graph, move_batch_axis
from xlac.passes.simplify import eliminate_dead_code
from xlac.trace import ops
from xlac.trace.inline import bind_node, closed_graph, inline
from xlac.trace.state import current_trace, provenance_of
from xlac.trace.tracer import Tracer

__all__ = ["NotVectorized", "VectorizedNotes", "vectorized_fori"]

MAX_BATCHED_ELEMENTS = 1 << 26   # a value of the batched body may hold this many elements (512 MiB of float64)


class NotVectorized(Exception):
    """Why a loop's iterations could not be shown independent (its message: the reason, for the loop report)."""


@dataclasses.dataclass
class VectorizedNotes:
    """What a vectorized loop did, for the loop report: ``reduced`` (each accumulator's name and reduction,
    ``"acc (sum)"``) and ``segments`` (its segment reductions, see :mod:`xlac.convert.segment_reductions`,
    or None)."""

    reduced: list = dataclasses.field(default_factory=list)
    segments: str | None = None


def vectorized_fori(lower: int, upper: int, body_fun, carries: list, names: list[str],
                    notes: VectorizedNotes | None = None, written_names: dict | None = None, rolled=None) -> list:
    """``for index in range(lower, upper): carries = body_fun(index, carries)``, with the body run once over
    all indices, or :class:`NotVectorized`. ``names``: each carry's name, for the reason; ``notes``: where
    given, what it did is noted there; ``written_names``: the names of the arrays the body writes in place,
    by ``id``. ``rolled``: where given, ``rolled(carries)`` runs the loop as an XLA loop (the new carries):
    a body that reduces sorted, disjoint intervals of positions (or checks values) is vectorized with segment
    reductions (see :mod:`xlac.convert.segment_reductions`), and runs rolled where, when the program runs,
    the intervals are not sorted and disjoint or a check fails.

    >>> import xlac
    >>> from xlac.trace.context import Trace
    >>> with Trace():
    ...     vectorized_fori(0, 4, lambda i, carry: [carry[0] * carry[0] + i], [xlac.numpy.asarray(0)], ["total"])
    Traceback (most recent call last):
    xlac.convert.vectorized_loops.NotVectorized: it carries total from one iteration to the next (not as an \
accumulator, acc += f(i), whose f(i) does not read it)

    An accumulator's terms are reduced after the batch, and combined with its value before the loop:

    >>> @xlac.compile(convert=False)
    ... def total(start, w):
    ...     return vectorized_fori(0, 4, lambda i, carry: [carry[0] + (w * i) @ w], [start], ["total"])[0]
    >>> float(total(10.0, np.ones(3)))
    28.0
    """
    index = asarray(lower)
    carries = [asarray(c) for c in carries]
    region = _trace_region(lambda i, *carry: body_fun(i, list(carry)), [index, *carries], "a vectorized loop's body")
    graph, n_own = region.graph, 1 + len(carries)
    lifted_inputs = {x.value.id: v for x, v in zip(region.lifted, graph.inputs[n_own:])}
    written_inputs = [lifted_inputs[array.value.id] for array in region.written]
    varying = varying_values(graph, graph.inputs[:n_own] + written_inputs)
    segments = Segments.of(graph, varying) if rolled is not None else None
    if region.checks and segments is None:
        raise NotVectorized("its body checks indices or values when the program runs")
    if segments is not None:
        graph = segments.without_reductions(graph)
        if window_masks_left(graph, varying):
            raise NotVectorized("it uses a slice with traced bounds other than in a sum, product, maximum or "
                                "minimum of values the same in every iteration")
    accumulated = []           # (the carry's position, or the array written in place; its name; its Accumulator)
    for k, (name, carry_in, carry_out) in enumerate(zip(names, graph.inputs[1:n_own], graph.outputs)):
        if carry_out.id != carry_in.id:
            accumulated.append((k, name, Accumulator.of(graph, carry_in, carry_out)))
            if accumulated[-1][2] is None:
                raise NotVectorized(f"it carries {name} from one iteration to the next (not as an accumulator, "
                                    "acc += f(i), whose f(i) does not read it)")
    rows, row_arrays = [], []
    for array, new in zip(region.written, region.written_outputs):
        accumulator = Accumulator.of(graph, lifted_inputs[array.value.id], new)
        if accumulator is not None:
            accumulated.append((array, (written_names or {}).get(id(array), "an array"), accumulator))
            continue
        rows.append(_RowWrites.of(graph, graph.inputs[0], lifted_inputs[array.value.id], new, (lower, upper)))
        row_arrays.append(array)
    if config.vectorize_loops == "auto" and current_trace().kernels == "lapack" and not _contracts(graph) \
            and segments is None:
        raise NotVectorized("on the CPU, a body without a contraction runs as fast as an XLA loop or faster "
                            "(xlac.config.vectorize_loops = 'always' vectorizes it)")
    slices = _sliced_reads(graph, n_own, {r.before.id for r in rows}, (lower, upper))
    n = upper - lower
    indices = ops.add(ops.iota((n,), index.dtype, 0), ops.full((n,), lower, index.dtype))
    outer_of = {v.id: x for x, v in zip(region.lifted, graph.inputs[n_own:])}
    row_inputs = {r.before.id: (_rows_of(outer_of[r.before.id], r.axis, r.offset, lower, upper), r.axis)
                  for r in rows}
    inputs, dims = [indices, *carries], [0] + [None] * len(carries)
    for outer, v in zip(region.lifted, graph.inputs[n_own:]):
        x, axis = row_inputs.get(v.id, (outer, None))
        inputs.append(x)
        dims.append(axis)
    slice_inputs = [_rows_of(outer_of[read.operands[0].id], axis, offset, lower, upper)
                    for read, axis, offset in slices]
    slice_dims = [axis for _, axis, _ in slices]
    holds = None
    if segments is not None:
        reduced, holds = _segment_reductions(region.graph, segments, rows, slices, (inputs, dims),
                                             (slice_inputs, slice_dims), n)
        inputs, dims = inputs + reduced, dims + [0] * len(reduced)
    inputs, dims = inputs + slice_inputs, dims + slice_dims
    terms = [accumulator.term for _, _, accumulator in accumulated]
    status = [graph.outputs[len(carries)]] if region.checks else []
    outputs = _batched(_on_rows(graph, rows, slices, terms + [r.after for r in rows] + status), inputs, dims,
                       [0] * len(terms) + [r.axis for r in rows] + [0] * len(status), n)

    def write_results(carries: list) -> list:
        carries = list(carries)
        for (target, name, accumulator), batch in zip(accumulated, outputs):
            if isinstance(target, int):
                carries[target] = accumulator.reduced(carries[target], batch)
            else:
                target._store(accumulator.reduced(target, batch))
        for array, r, new_rows in zip(row_arrays, rows, outputs[len(terms):]):
            block = ops.reshape(new_rows, array.shape[:r.axis] + (n,) + array.shape[r.axis + 1:])
            start = [ops.constant(lower + r.offset if axis == r.axis else 0, index.dtype)
                     for axis in range(array.ndim)]
            array._store(ops.dynamic_update_slice(array, block, start))
        return carries

    if notes is not None:
        notes.reduced += [f"{name} ({accumulator.reduction})" for _, name, accumulator in accumulated]
        notes.segments = segments.describe() if segments is not None else None
    if holds is None:
        return write_results(carries)
    if status:
        codes = ops.slice(outputs[-1], (0, 0), (n, 1))
        holds = ops.and_(holds, ops.reduce(ops.compare(codes, ops.full((n, 1), 0, codes.dtype), "EQ"), "and", (0, 1)))
    return cond(holds, write_results, rolled, carries)


def _segment_reductions(graph: Graph, segments: Segments, rows: list, slices: list, batch: tuple,
                        sliced: tuple, n: int) -> tuple[list, Tracer]:
    """The results of ``segments``' reductions for all iterations (one 1-D value each), and whether their
    intervals are sorted and disjoint: the bounds and values computed batched from ``graph`` (the loop's
    body; ``batch``: its inputs and their batch axes; ``sliced``: those of ``slices``), then scattered."""
    n_reduced = len(segments.reductions)
    wanted = [v for bounds in segments.bounds for v in bounds] + [r.values for r in segments.reductions]
    needed = eliminate_dead_code(dataclasses.replace(graph, outputs=wanted))
    computed = _batched(_on_rows(needed, rows, slices, wanted), batch[0] + sliced[0], batch[1] + sliced[1],
                        [0] * (len(wanted) - n_reduced) + [None] * n_reduced, n)
    bounds, values = computed[:-n_reduced], computed[-n_reduced:]
    results, holds = [None] * n_reduced, None
    for family in range(len(segments.bounds)):
        members = [k for k, r in enumerate(segments.reductions) if r.family == family]
        reduced, ordered = segment_reduce([(values[k], segments.reductions[k].op) for k in members],
                                          bounds[2 * family], bounds[2 * family + 1])
        for k, result in zip(members, reduced):
            results[k] = result
        holds = ordered if holds is None else ops.and_(holds, ordered)
    return results, holds


def _contracts(graph: Graph) -> bool:
    """Whether ``graph`` holds a ``dot_general`` (batched, a matrix-vector product becomes a matrix product)."""
    return any(node.primitive is P.dot_general or any(_contracts(g) for g in node.subgraphs) for node in graph.nodes)


class _RowWrites:
    """How an iteration writes one array, shown to be one row per iteration: ``before`` and ``after`` (the
    array going in and coming out), ``writes`` (its ``dynamic_update_slice`` nodes, in order), ``reads`` (its
    ``dynamic_slice`` nodes reading the row), ``axis`` and ``offset`` (the row is the element at the index plus
    ``offset`` along ``axis``: ``out[i]``, ``out[:, i + 1]``)."""

    def __init__(self, before: Value, after: Value, writes: list[Node], reads: list[Node], axis: int, offset: int):
        self.before, self.after, self.writes, self.reads = before, after, writes, reads
        self.axis, self.offset = axis, offset

    @classmethod
    def of(cls, graph: Graph, index: Value, before: Value, after: Value, bounds) -> "_RowWrites":
        producers = {r.id: node for node in graph.nodes for r in node.results}
        writes, value = [], after
        while value.id != before.id:
            node = producers.get(value.id)
            if node is None or node.primitive is not P.dynamic_update_slice:
                raise NotVectorized("it writes into an array other than one row at the loop's index")
            writes.append(node)
            value = node.operands[0]
        writes.reverse()
        common = set.intersection(*(_rows_at(node, index, producers) for node in writes))
        if not common:
            raise NotVectorized("it writes into an array at a row other than the loop's index plus a constant")
        axis, offset = min(common)
        if bounds[0] + offset < 0 or bounds[1] + offset > before.type.shape[axis]:
            raise NotVectorized("its rows run past the end of the array it writes")
        reads = cls._row_reads(graph, [before] + [w.results[0] for w in writes], writes, after, index, (axis, offset),
                               producers)
        return cls(before, after, writes, reads, axis, offset)

    @staticmethod
    def _row_reads(graph, versions, writes, after, index, row, producers) -> list[Node]:
        """The nodes reading the written array's row; any other use of a version of it raises."""
        ids = {v.id for v in versions}
        updates = {id(w) for w in writes}
        reads = []
        for node in graph.nodes:
            for position, operand in enumerate(node.operands):
                if operand.id not in ids:
                    continue
                if id(node) in updates and position == 0:
                    continue
                if node.primitive is P.dynamic_slice and position == 0 and row in _rows_at(node, index, producers):
                    reads.append(node)
                    continue
                raise NotVectorized("an iteration reads an array the loop writes at another place than its own row")
        if any(v.id in ids and v.id != after.id for v in graph.outputs):
            raise NotVectorized("an iteration reads an array the loop writes at another place than its own row")
        return reads


def _rows_at(node: Node, index: Value, producers: dict) -> set[tuple[int, int]]:
    """The (axis, offset) where a ``dynamic_slice`` or ``dynamic_update_slice`` ``node`` reaches one element
    along ``axis`` at the loop's index plus ``offset``."""
    if node.primitive is P.dynamic_slice:
        operand, *starts = node.operands
        sizes = node.attrs["sizes"]
    else:
        operand, update, *starts = node.operands
        sizes = update.type.shape
    found = set()
    for axis, (start, size) in enumerate(zip(starts, sizes)):
        offset = _offset_from(start, index, producers) if size == 1 else None
        if offset is not None:
            found.add((axis, offset))
    return found


def _offset_from(value: Value, index: Value, producers: dict) -> int | None:
    """``c`` where ``value`` is ``index + c`` (through additions and subtractions of integer constants, products
    with 1 and integer conversions), else None."""
    if value.id == index.id:
        return 0
    node = producers.get(value.id)
    if node is None or value.type.dtype.kind not in "iu":
        return None
    if node.primitive is P.convert:
        return _offset_from(node.operands[0], index, producers)
    if node.primitive is P.mul and 1 in (_integer_constant(v, producers) for v in node.operands):
        a, b = node.operands
        return _offset_from(b if _integer_constant(a, producers) == 1 else a, index, producers)
    if node.primitive in (P.add, P.sub):
        a, b = node.operands
        constant = _integer_constant(b, producers)
        if constant is not None:
            inner = _offset_from(a, index, producers)
            return None if inner is None else inner + (constant if node.primitive is P.add else -constant)
        constant = _integer_constant(a, producers)
        if constant is not None and node.primitive is P.add:
            inner = _offset_from(b, index, producers)
            return None if inner is None else inner + constant
    return None


def _integer_constant(value: Value, producers: dict) -> int | None:
    node = producers.get(value.id)
    if node is None or node.primitive is not P.constant or value.type.shape != ():
        return None
    return int(np.asarray(node.attrs["value"]))


def _sliced_reads(graph: Graph, n_own: int, written: set, bounds: tuple[int, int]) -> list[tuple[Node, int, int]]:
    """The reads of one element of an axis at the loop's index plus a constant (``x[i]``, ``d[:, i]``) of the
    arrays the loop reads and does not write, their other starts the same in every iteration: per read,
    its node, the axis and the constant. Over the batch, each is a slice of the array, not a gather."""
    index = graph.inputs[0]
    producers = {r.id: node for node in graph.nodes for r in node.results}
    invariant = {v.id for v in graph.inputs[n_own:] if v.id not in written}
    varies = {index.id}
    found = []
    for node in graph.nodes:
        if any(v.id in varies for v in node.operands):
            varies.update(r.id for r in node.results)
        if node.primitive is not P.dynamic_slice or node.operands[0].id not in invariant:
            continue
        operand, *starts = node.operands
        moving = [axis for axis, start in enumerate(starts) if start.id in varies]
        if len(moving) != 1 or node.attrs["sizes"][moving[0]] != 1:
            continue
        offset = _offset_from(starts[moving[0]], index, producers)
        if offset is not None and 0 <= bounds[0] + offset and bounds[1] + offset <= operand.type.shape[moving[0]]:
            found.append((node, moving[0], offset))
    return found


def _on_rows(graph: Graph, rows: list[_RowWrites], slices: list, outputs: list[Value]) -> Graph:
    """``graph`` with each written array's input and versions replaced by its row (a length of one along the
    row's axis): the row writes and reads at 0 along it; and, after its inputs, one per read of ``slices``:
    the element the iteration reads along that axis (a length of one there). Its outputs: those of
    ``outputs`` (values of ``graph``; each written array's becomes its new row)."""
    row_input = {r.before.id: r for r in rows}
    at_row = {id(node): r.axis for r in rows for node in r.writes + r.reads}
    at_row.update((id(node), axis) for node, axis, _ in slices)
    types = [_with_length_one(v.type, row_input[v.id].axis) if v.id in row_input else v.type for v in graph.inputs]
    types += [_with_length_one(node.operands[0].type, axis) for node, axis, _ in slices]

    def build(inputs):
        sliced = {id(node): x for (node, _, _), x in zip(slices, inputs[len(graph.inputs):])}

        def apply(node: Node, operands: list):
            if id(node) not in at_row:
                return bind_node(node, operands)
            axis = at_row[id(node)]
            with provenance_of(node.provenance.as_inlined()):
                if node.primitive is P.dynamic_update_slice:
                    operand, update, *starts = operands
                    starts[axis] = ops.full_like(starts[axis], 0)
                    return [ops.dynamic_update_slice(operand, update, starts)]
                operand, *starts = operands
                starts[axis] = ops.full_like(starts[axis], 0)
                return [ops.dynamic_slice(sliced.get(id(node), operand), starts, node.attrs["sizes"])]
        return interpret(dataclasses.replace(graph, outputs=outputs), inputs[:len(graph.inputs)], apply)
    return closed_graph(types, build)


def _with_length_one(type_, axis: int):
    return type_.with_shape(type_.shape[:axis] + (1,) + type_.shape[axis + 1:])


def _rows_of(array, axis: int, offset: int, lower: int, upper: int):
    """The elements along ``axis`` the iterations ``lower`` to ``upper`` reach at their index plus
    ``offset``: the batch along ``axis``, each with a length of one there."""
    start, limit = [0] * array.ndim, list(array.shape)
    start[axis], limit[axis] = lower + offset, upper + offset
    block = ops.slice(array, start, limit)
    return ops.reshape(block, array.shape[:axis] + (upper - lower, 1) + array.shape[axis + 1:])


def _batched(graph: Graph, inputs: list, dims: list, out_dims: list, n: int) -> list:
    """``graph`` evaluated over the batch (``dims``: each input's batch axis, or None) into the current trace,
    each output with its batch axis at ``out_dims`` (None: one that must come out unbatched);
    :class:`NotVectorized` when a value of it would be too large."""
    def build(stand_ins):
        outputs, batch_axes = batch_graph(graph, stand_ins, dims)
        if any(to is None and d is not None for d, to in zip(batch_axes, out_dims)):
            raise NotVectorized("a value it reduces as segments differs per iteration")
        return [x if to is None else move_batch_axis(x, d, to, n) for x, d, to in zip(outputs, batch_axes, out_dims)]
    batched = closed_graph([x.value.type for x in inputs], build)
    largest = max((int(np.prod(v.type.shape)) for node in batched.nodes for v in node.results), default=0)
    if largest > MAX_BATCHED_ELEMENTS:
        raise NotVectorized(f"run at once, its body would hold {largest} elements in one value "
                            f"(more than {MAX_BATCHED_ELEMENTS})")
    return inline(batched, inputs)
