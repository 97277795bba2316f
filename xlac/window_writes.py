"""Writing a mutated NumPy argument back by the windows the program updated, not whole.

Where the new value of an argument the program writes is the argument with ``dynamic_update_slice``s applied,
one after another (``cache[pos] = row``, ``x[2:5] += v``: what functionalization makes of writes through
slices), the program also returns each update (a *piece*) and the start indices it was written at, and the
call writes those into the caller's NumPy array in place, ``array[start:start + n, ...] = piece`` in program
order, as NumPy would have written them, instead of copying the whole new buffer back. Starts are clamped
into the axis as XLA's ``dynamic_update_slice`` clamps them, so the array ends up holding exactly the
program's value. Only arguments that were NumPy arrays when traced get windows. The whole new value stays
an output sharing the argument's (donated) buffer, so an ``xlac.Array`` passed there later is updated on its
device as before; for a NumPy argument that output is never read. Where the analysis cannot show such a
chain (a loop's result, a strided or masked write, updates over more than half the array), the whole buffer
is written back.

>>> import numpy as np, xlac
>>> def f(cache, row, pos):
...     cache[pos] = row
...     return cache[:pos + 1].sum()
>>> cache = np.zeros((1000, 4))
>>> float(xlac.compile(f)(cache, np.ones(4), 7)), float(cache.sum())
(4.0, 4.0)
>>> graph = xlac.compile(f).trace(cache, np.ones(4), 7).ir("final")
>>> [tuple(v.type.shape) for v in window_updates(graph)[0].outputs[-2:]]
[(1, 4), (1,)]
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from xlac import runtime
from xlac.ir import primitives as P
from xlac.ir.dtypes import INDEX as _INDEX
from xlac.ir.graph import Graph, Node, Value
from xlac.ir.types import TensorType



@dataclass(frozen=True)
class Window:
    """One update of an argument: the output holding the piece, the piece's type, and per axis its start,
    known when compiling (``starts[a]``) or, where ``slots[a]`` is not None, that element of the argument's
    output of traced starts."""

    piece: int
    piece_type: TensorType
    starts: tuple
    slots: tuple


@dataclass(frozen=True)
class WindowedUpdate:
    """The windows written into one argument, in program order, and the output of their traced starts."""

    argument: int
    windows: tuple[Window, ...]
    starts_output: int | None


def window_updates(graph: Graph, arguments: frozenset | None = None) -> tuple[Graph, list[WindowedUpdate]]:
    """``graph`` with, after its outputs, the pieces and traced starts of each argument (of ``arguments``,
    the input indices of NumPy arrays; None: any) whose new value is itself with ``dynamic_update_slice``s
    applied (see the module), and the plan of those outputs. An ``xlac.Array`` is updated in its donated
    buffer: pieces would only be more outputs."""
    made_by = {result.id: node for node in graph.nodes for result in node.results}
    nodes, outputs, plan = list(graph.nodes), list(graph.outputs), []
    for i, j in graph.input_updates:
        if arguments is not None and i not in arguments:
            continue
        chain = _update_chain(graph.outputs[j], graph.inputs[i], made_by)
        if not chain or 2 * sum(update.type.size for update, _ in chain) > graph.inputs[i].type.size:
            continue
        traced_starts, windows = [], []
        for update, starts in chain:
            known, slots = [], []
            for start in starts:
                node = made_by.get(start.id)
                if node is not None and node.primitive is P.constant:
                    known.append(int(node.attrs["value"]))
                    slots.append(None)
                else:
                    known.append(0)
                    slots.append(len(traced_starts))
                    traced_starts.append(start)
            windows.append(Window(len(outputs), update.type, tuple(known), tuple(slots)))
            outputs.append(update)
        starts_output = None
        if traced_starts:
            starts_output = len(outputs)
            outputs.append(_index_vector(traced_starts, nodes, made_by[graph.outputs[j].id]))
        plan.append(WindowedUpdate(i, tuple(windows), starts_output))
    if not plan:
        return graph, plan
    return dataclasses.replace(graph, nodes=nodes, outputs=outputs), plan


def _update_chain(value: Value, argument: Value, made_by: dict) -> list | None:
    """``[(update, starts), ...]`` in program order when ``value`` is ``argument`` with those
    ``dynamic_update_slice``s applied; None otherwise."""
    chain = []
    while value is not argument:
        node = made_by.get(value.id)
        if node is None or node.primitive is not P.dynamic_update_slice:
            return None
        operand, update, *starts = node.operands
        chain.append((update, starts))
        value = operand
    return chain[::-1]


def _index_vector(scalars: list[Value], nodes: list[Node], at: Node) -> Value:
    """One int64 vector of ``scalars``, its nodes appended to ``nodes`` (with ``at``'s provenance)."""
    def emit(primitive, operands, **attrs) -> Value:
        (out_type,) = primitive.infer_types(*(v.type for v in operands), **attrs)
        result = Value(out_type)
        nodes.append(Node(primitive, tuple(operands), attrs, (result,), at.provenance))
        return result
    items = []
    for scalar in scalars:
        if scalar.type.dtype != _INDEX:
            scalar = emit(P.convert, (scalar,), dtype=_INDEX)
        items.append(emit(P.reshape, (scalar,), shape=(1,)))
    return items[0] if len(items) == 1 else emit(P.concatenate, items, dimension=0)


@dataclass(frozen=True)
class WindowWriters:
    """What the call path needs of a plan: per argument index ``write(array, outputs)``, which writes that
    argument's pieces from the program's ``outputs`` into the NumPy ``array`` in place (starts clamped into
    the axes, as XLA clamps them), and how many outputs the plan added after the program's own."""

    writers: dict
    n_outputs: int


def window_writers(plan: list[WindowedUpdate], argument_types: list[TensorType]) -> WindowWriters:
    """The :class:`WindowWriters` of ``plan`` for arguments of ``argument_types``."""
    n_outputs = sum(len(update.windows) + (update.starts_output is not None) for update in plan)
    return WindowWriters({update.argument: _writer(update, argument_types[update.argument].shape)
                          for update in plan}, n_outputs)


def _writer(update: WindowedUpdate, shape: tuple):
    windows = [(w.piece, w.piece_type.dtype, w.piece_type.shape,
                [(min(max(known, 0), dim - size), slot, dim - size)
                 for known, slot, dim, size in zip(w.starts, w.slots, shape, w.piece_type.shape)])
               for w in update.windows]
    starts_output = update.starts_output

    def write(array: np.ndarray, outputs: list) -> None:
        traced = None
        if starts_output is not None:
            traced = runtime.to_numpy(outputs[starts_output], _INDEX, (-1,)).tolist()
        for piece, dtype, piece_shape, axes in windows:
            index = []
            for (known, slot, last), size in zip(axes, piece_shape):
                start = known if slot is None else min(max(traced[slot], 0), last)
                index.append(slice(start, start + size))
            array[tuple(index)] = runtime.to_numpy(outputs[piece], dtype, piece_shape)
    return write
