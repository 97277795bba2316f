"""Clean-up after functionalization: fold redundant ops, merge repeated ones, drop dead ones.

``simplify`` walks the graph once in program order. Each node, with its operands
renamed to what earlier rewrites kept, either forwards its result to a value that
already exists, becomes a simpler node, or stays; then an identical earlier node
(same primitive, operands and attributes) takes its place. The rewrites:

- ``reshape`` of a ``reshape`` reshapes the original; a reshape to its operand's shape is the operand;
- ``transpose`` of a ``transpose`` is one transpose; the identity permutation is the operand;
- a ``dot_general`` of a ``transpose`` contracts the transpose's operand where the result's axes keep their
  order (``Q.T @ v``: XLA would copy ``Q`` transposed first, in a loop on every iteration);
- ``convert`` to the operand's dtype, or back from a conversion that lost nothing, is the operand;
- ``x != 0`` of a boolean converted to a number is the boolean (a traced ``if``'s test, selected on);
- a ``slice`` that reads exactly the region a ``dynamic_update_slice`` wrote is the update, and so is a
  ``dynamic_slice`` of the update's size at the same starts (``out[i] = row; out[i].sum()`` in a loop body:
  else XLA copies ``out`` each iteration to read the row back), unless the row was computed from an array
  this graph writes in place (XLA fuses the row's computation into its readers: a reader that writes that
  array in place would need a copy of what it reads, as Jacobi's ``B[1:-1] = f(A); A[1:-1] = g(B[1:-1])``);
- a ``dynamic_update_slice`` that overwrites the whole region of an earlier one writes into that one's
  operand instead, and one that writes back what it read from the same place is its operand.

A kept node keeps its own source line. Dead nodes go last.

>>> import numpy as np
>>> from xlac.ir import Graph, Node, Value, TensorType
>>> from xlac.ir import primitives as P
>>> x = Value(TensorType((2,), np.dtype("float32"))); y = Value(x.type); z = Value(x.type)
>>> g = Graph([x], [Node(P.exp, (x,), {}, (y,)), Node(P.exp, (x,), {}, (z,))], [y, z])
>>> s = simplify(g)
>>> len(s.nodes), s.outputs[0] is s.outputs[1], s.report
(1, True, {'common_subexpressions': 1})
"""
from __future__ import annotations

import dataclasses
import ml_dtypes
import numpy as np

from xlac.ir import primitives as P
from xlac.ir.exact import exact_key
from xlac.ir.graph import Graph, Node, Value


def simplify(graph: Graph) -> Graph:
    """``graph`` with the rewrites above applied, repeated nodes merged and dead nodes dropped.
    ``report`` counts each rewrite that fired."""
    return _Simplifier(graph).run()


def eliminate_dead_code(graph: Graph) -> Graph:
    """A graph without the nodes whose results reach no output.

    >>> import numpy as np
    >>> from xlac.ir import Graph, Node, Value, TensorType
    >>> from xlac.ir import primitives as P
    >>> x = Value(TensorType((2,), np.dtype("float32"))); y = Value(x.type)
    >>> len(eliminate_dead_code(Graph([x], [Node(P.exp, (x,), {}, (y,))], [x])).nodes)
    0
    """
    live = {v.id for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        for v in node.results:
            if v.id in live:
                kept.append(node)
                live.update([v.id for v in node.operands])
                break
    kept.reverse()
    return dataclasses.replace(graph, nodes=kept)


class _Simplifier:
    """One forward walk: ``renamed`` maps a dropped value's id to the value that replaces it."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.nodes: list[Node] = []
        self.renamed: dict[int, Value] = {}
        self.producer: dict[int, Node] = {}       # value id -> the kept node that defines it
        self.seen: dict[tuple, Node] = {}         # a node's identity key -> the first kept node with it
        self.report: dict[str, int] = {"updates_dropped": 0}
        # Updates moved below an earlier update they overwrite: (the moved node, the earlier one's result).
        self.moved_updates: list[tuple[Node, Value]] = []
        self.updated_arrays = {n.operands[0].id for n in graph.nodes if n.primitive is P.dynamic_update_slice}

    def run(self) -> Graph:
        for node in self.graph.nodes:
            self._visit(node)
        graph = eliminate_dead_code(dataclasses.replace(
            self.graph, nodes=self.nodes, outputs=[self._name(v) for v in self.graph.outputs]))
        graph.nodes = self._keep_needed_updates(graph.nodes)
        producer = {r.id: node for node in graph.nodes for r in node.results}
        writes = [(location, self._name(old), self._name(new)) for location, old, new in graph.writes]
        graph.writes = [(location, _written_array(producer, old, new), new)
                        for location, old, new in writes if old is not new]
        graph.report = {name: n for name, n in self.report.items() if n}
        return graph

    def _keep_needed_updates(self, nodes: list[Node]) -> list[Node]:
        """Undo moving an update below an earlier one where the earlier one is still needed (something
        else reads it): two updates of one buffer would make XLA copy it."""
        live = {r.id for node in nodes for r in node.results}
        moved = {id(node): earlier for node, earlier in self.moved_updates}
        undo = {id(node): moved[id(node)] for node in nodes if id(node) in moved and moved[id(node)].id in live}
        self.report["updates_dropped"] += len(moved) - len(undo)
        return [dataclasses.replace(node, operands=(undo[id(node)], *node.operands[1:])) if id(node) in undo
                else node for node in nodes]

    def _name(self, value: Value) -> Value:
        return self.renamed.get(value.id, value)

    def _count(self, rewrite: str) -> None:
        self.report[rewrite] = self.report.get(rewrite, 0) + 1

    def _visit(self, node: Node) -> None:
        renamed = self.renamed
        operands = tuple([renamed.get(v.id, v) for v in node.operands])
        if operands != node.operands:              # Values compare by identity
            node = dataclasses.replace(node, operands=operands)
        if node.subgraphs:                          # regions are closed graphs: simplified on their own
            regions = [simplify(region) for region in node.subgraphs]
            for region in regions:
                for name, n in region.report.items():
                    self.report[name] = self.report.get(name, 0) + n
            node = dataclasses.replace(node, subgraphs=tuple(regions))
        rule = _RULES.get(node.primitive)
        while rule is not None:
            rewritten = rule(self, node)
            if rewritten is None:
                break
            name, result = rewritten
            if name:
                self._count(name)
            if isinstance(result, Value):
                self.renamed[node.results[0].id] = result
                return
            node = result
            rule = _RULES.get(node.primitive)
        key = _identity(node)
        earlier = self.seen.get(key) if key is not None else None
        if earlier is not None:
            self._count("common_subexpressions")
            for mine, theirs in zip(node.results, earlier.results):
                self.renamed[mine.id] = theirs
            return
        if key is not None:
            self.seen[key] = node
        self.nodes.append(node)
        for r in node.results:
            self.producer[r.id] = node

    def defined_by(self, value: Value, primitive) -> Node | None:
        """The kept node of ``primitive`` that defines ``value``, if that is how it is defined."""
        node = self.producer.get(value.id)
        return node if node is not None and node.primitive is primitive else None

    def static_int(self, value: Value) -> int | None:
        """The value of a 0-d integer constant, else None."""
        node = self.defined_by(value, P.constant)
        if node is None or node.results[0].type.shape != () or node.results[0].type.dtype.kind not in "iu":
            return None
        return int(node.attrs["value"])

    def static_starts(self, update: Node) -> tuple[int, ...] | None:
        """A ``dynamic_update_slice``'s start indices when all are constants, clamped as XLA clamps them."""
        operand, patch, *starts = update.operands
        values = [self.static_int(s) for s in starts]
        if any(v is None for v in values):
            return None
        return tuple(min(max(v, 0), d - u) for v, d, u in zip(values, operand.type.shape, patch.type.shape))


# ---------------------------------------------------------------- the rewrites


def _fold_reshape(s: _Simplifier, node: Node):
    (x,) = node.operands
    if x.type == node.results[0].type:
        return "reshapes_folded", x
    inner = s.defined_by(x, P.reshape)
    if inner is not None:
        return "reshapes_folded", dataclasses.replace(node, operands=inner.operands)
    return None


def _fold_transpose(s: _Simplifier, node: Node):
    (x,) = node.operands
    permutation = tuple(node.attrs["permutation"])
    if permutation == tuple(range(len(permutation))):
        return "transposes_folded", x
    inner = s.defined_by(x, P.transpose)
    if inner is not None:
        first = inner.attrs["permutation"]
        composed = tuple(first[axis] for axis in permutation)
        return "transposes_folded", dataclasses.replace(node, operands=inner.operands,
                                                        attrs={**node.attrs, "permutation": composed})
    return None


def _fold_transpose_into_dot(s: _Simplifier, node: Node):
    operands, (contracting, batch) = list(node.operands), (node.attrs["contracting"], node.attrs["batch"])
    dimensions = [[tuple(contracting[side]), tuple(batch[side])] for side in (0, 1)]
    folded = False
    for side, operand in enumerate(operands):
        transpose = s.defined_by(operand, P.transpose)
        if transpose is None:
            continue
        permutation = transpose.attrs["permutation"]
        used = set(dimensions[side][0] + dimensions[side][1])
        free = [permutation[axis] for axis in range(len(permutation)) if axis not in used]
        if free != sorted(free):          # the result's axes would come out in another order
            continue
        operands[side] = transpose.operands[0]
        dimensions[side] = [tuple(permutation[axis] for axis in axes) for axes in dimensions[side]]
        folded = True
    if not folded:
        return None
    attrs = {**node.attrs, "contracting": (dimensions[0][0], dimensions[1][0]),
             "batch": (dimensions[0][1], dimensions[1][1])}
    return "transposes_folded", dataclasses.replace(node, operands=tuple(operands), attrs=attrs)


def _fold_convert(s: _Simplifier, node: Node):
    (x,) = node.operands
    result = node.results[0].type
    if x.type == result:
        return "converts_folded", x
    inner = s.defined_by(x, P.convert)
    if inner is not None and inner.operands[0].type == result and converts_exactly(result.dtype, x.type.dtype):
        return "converts_folded", inner.operands[0]
    return None


def _fold_nonzero_test(s: _Simplifier, node: Node):
    x, y = node.operands
    inner = s.defined_by(x, P.convert)
    if node.attrs["direction"] != "NE" or inner is None or s.static_int(y) != 0:
        return None
    (flag,) = inner.operands
    return ("converts_folded", flag) if flag.type == node.results[0].type else None


def _forward_written_slice(s: _Simplifier, node: Node):
    (x,) = node.operands
    update = s.defined_by(x, P.dynamic_update_slice)
    if update is None or any(step != 1 for step in node.attrs["strides"]):
        return None
    starts = s.static_starts(update)
    patch = update.operands[1]
    if starts is None or tuple(node.attrs["start"]) != starts or patch.type != node.results[0].type:
        return None
    if tuple(node.attrs["limit"]) != tuple(b + n for b, n in zip(starts, patch.type.shape)):
        return None
    if _reads_updated_array(s, patch):
        return None
    return "slices_forwarded", patch


def _forward_written_row(s: _Simplifier, node: Node):
    x, *starts = node.operands
    update = s.defined_by(x, P.dynamic_update_slice)
    if update is None or update.operands[1].type != node.results[0].type:
        return None
    same_starts = all(a is b or a.id == b.id or (s.static_int(a) is not None and s.static_int(a) == s.static_int(b))
                      for a, b in zip(update.operands[2:], starts))
    if not same_starts or _reads_updated_array(s, update.operands[1]):
        # a row computed from an array written in place (Gram-Schmidt's masked ``R[:j, j] = r`` selects
        # against the old column): forwarding it keeps the old array alive past the write, and XLA copies it
        return None
    return "slices_forwarded", update.operands[1]


def _reads_updated_array(s: _Simplifier, value: Value, limit: int = 64) -> bool:
    """Whether ``value`` is computed from an array that a ``dynamic_update_slice`` of this graph writes
    (looking back at most ``limit`` nodes)."""
    pending, seen = [value], set()
    while pending and len(seen) < limit:
        v = pending.pop()
        if v.id in s.updated_arrays or s._name(v).id in s.updated_arrays:
            return True
        node = s.producer.get(v.id)
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            pending.extend(node.operands)
    return False


def _drop_overwritten_update(s: _Simplifier, node: Node):
    operand, patch, *starts = node.operands
    if _reads_back(s, node):
        return "updates_dropped", operand
    inner = s.defined_by(operand, P.dynamic_update_slice)
    if inner is None or inner.operands[1].type.shape != patch.type.shape:
        return None
    same_place = all(a is b for a, b in zip(inner.operands[2:], starts)) or (
        s.static_starts(inner) is not None and s.static_starts(inner) == s.static_starts(node))
    if not same_place:
        return None
    moved = dataclasses.replace(node, operands=(inner.operands[0], *node.operands[1:]))
    s.moved_updates.append((moved, operand))
    return "", moved                  # counted once the walk knows whether the earlier update is still needed


def _reads_back(s: _Simplifier, node: Node) -> bool:
    """Whether a ``dynamic_update_slice`` writes the very values it would overwrite."""
    operand, patch = node.operands[:2]
    read = s.defined_by(patch, P.slice_)
    if read is None or read.operands[0] is not operand or any(step != 1 for step in read.attrs["strides"]):
        return False
    starts = s.static_starts(node)
    return starts is not None and tuple(read.attrs["start"]) == starts


def _written_array(producer: dict[int, Node], old: Value, new: Value) -> Value:
    """The array a write's new value replaces: an update's own operand (a rewrite may have moved it)."""
    node = producer.get(new.id)
    return node.operands[0] if node is not None and node.primitive is P.dynamic_update_slice else old


_RULES = {
    P.reshape: _fold_reshape,
    P.transpose: _fold_transpose,
    P.dot_general: _fold_transpose_into_dot,
    P.convert: _fold_convert,
    P.compare: _fold_nonzero_test,
    P.slice_: _forward_written_slice,
    P.dynamic_slice: _forward_written_row,
    P.dynamic_update_slice: _drop_overwritten_update,
}

# ---------------------------------------------------------------- facts the rewrites rely on


def _identity(node: Node) -> tuple | None:
    """What makes two nodes compute the same values: primitive, operands, attributes; None when a node
    must stay distinct (it holds sub-graphs, is a view, or an attribute cannot be compared)."""
    if node.subgraphs or node.view:
        return None
    try:
        attrs = tuple([(name, exact_key(value)) for name, value in sorted(node.attrs.items())])
        hash(attrs)
    except TypeError:
        return None
    return (node.primitive, tuple([v.id for v in node.operands]), attrs,
            tuple([(r.type.shape, r.type.dtype) for r in node.results]))


def converts_exactly(source: np.dtype, target: np.dtype) -> bool:
    """Whether every value of ``source`` converts to ``target`` and back unchanged.

    >>> converts_exactly(np.dtype("float32"), np.dtype("float64")), converts_exactly(np.dtype("int64"), np.dtype("float64"))
    (True, False)
    """
    return _precision(source) is not None and _precision(target) is not None and all(
        t >= s for s, t in zip(_precision(source), _precision(target)))


def _precision(dtype: np.dtype) -> tuple[int, int, int, int, int] | None:
    """(significand bits, largest exponent, holds negatives, holds fractions and non-finite values, holds an
    imaginary part) of a dtype: one dtype holds every value of another when each entry is at least as large."""
    kind = "f" if dtype in _ML_FLOATS else dtype.kind
    if kind == "b":
        return (1, 1, 0, 0, 0)
    if kind in "iu":
        bits = dtype.itemsize * 8 - (kind == "i")
        return (bits, bits, int(kind == "i"), 0, 0)
    if kind in "fc":
        real = np.dtype(f"f{dtype.itemsize // 2}") if kind == "c" else dtype
        significand, exponent = _float_info(real)
        return (significand, exponent, 1, 1, int(kind == "c"))
    return None


_ML_FLOATS = {np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)}


def _float_info(dtype: np.dtype) -> tuple[int, int]:
    info = ml_dtypes.finfo(dtype)
    return (info.nmant + 1, info.maxexp)
