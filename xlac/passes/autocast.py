"""The autocast pass: nodes traced inside ``xlac.autocast`` are rewritten to the precision the policy gives.

Each node records the autocast state it was traced under (``node.autocast``). The
pass rebuilds the graph in program order, re-inferring every result type, since
dtypes change downstream: a matmul now gives bfloat16, so the tanh that follows it
runs in bfloat16 and the add of a float32 bias promotes back to float32.

- ``lower_precision`` (every ``dot_general``): float inputs cast to the autocast dtype; the result is in
  that dtype, or float32 with ``accumulate="float32"`` (``preferred_dtype``). Converts emitted by a
  function in this class go to that result dtype.
- ``float32``: float16/bfloat16 inputs cast up to float32; converts to float16/bfloat16 emitted by a
  function in this class go to float32 (so var, softmax, ... run and return in float32).
- ``promote``: float inputs cast to the widest floating dtype among them. As in torch, 0-d operands
  are weak: they follow the arrays, so a Python scalar (the 0.5 of ``h * 0.5``, broadcast inside the
  ``multiply`` call) or a 0-d array does not widen a bfloat16 array; ``zeros(n)`` does.
- ``follow``: runs in the dtype its inputs have now (if its type rule rejects them, as ``keep``).
- ``keep``, and every node in an ``enabled=False`` region: inputs cast back to the dtypes they were traced
  with, so the node computes what was traced (traced code cannot cast a bfloat16 value back itself: at
  trace time it was float32, and its ``astype(float32)`` was no op).
- Nodes outside any autocast region ``follow``, as ops outside torch.autocast run in their inputs' dtypes
  (where the type rule rejects the mix, such as a bfloat16 @ float32, as ``keep``).

Only float16, bfloat16 and float32 values change dtype; float64, integer and boolean values never do.
Explicit converts (``astype``) keep their target dtype. An output that holds a mutated argument's new
value is cast back to the argument's dtype; other outputs are returned in the dtype they are computed in,
except a region's (a loop body, a branch: ``keep_signature``), which keeps the signature it was traced with,
as torch keeps a tensor's dtype across a Python loop: its outputs are cast back to their traced dtypes
(``outputs_cast_back``).
Each (value, dtype) is cast once and the cast reused; a convert of a value that was widened exactly
(bf16 -> f32 -> bf16, or to its own dtype) is dropped. ``graph.report`` counts what changed, and the
contractions left in their dtype (``contractions_not_lowered``) with the reason and, for float64, where
the float64 came in (``not_lowered_because``): NumPy 2 promotes ``float32_array / np.sqrt(d)`` to float64,
and xlac keeps NumPy's rule, so the contractions after it stay float64 unless it is written with a
Python float.

>>> import numpy as np, xlac
>>> def f(x, w1, w2):
...     with xlac.autocast():
...         return x @ w1, x @ w2 @ w1
>>> a = np.ones((2, 2), np.float32)
>>> report = xlac.compile(f).trace(a, a, a).ir("autocast").report   # x, w1, w2 cast once each
>>> report["converts_inserted"], report["ops_lowered"]
(3, 3)
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from xlac.ir.autocast_classes import FLOAT32, FOLLOW, KEEP, LOWER_PRECISION, PROMOTE
from xlac.ir import dtypes
from xlac.ir import primitives as P
from xlac.ir.graph import NO_PROVENANCE, Graph, Node, Value
from xlac.ir.primitive import ShapeError
from xlac.passes.simplify import eliminate_dead_code

F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
CANDIDATES = (F16, dtypes.bfloat16, F32)          # the only dtypes autocast changes
_EXACT_WIDENING = {(F16, F32), (dtypes.bfloat16, F32), (F16, F64), (dtypes.bfloat16, F64), (F32, F64)}

__all__ = ["autocast_pass"]


def _enabled(state) -> bool:
    return bool(getattr(state, "enabled", False))


def _is_candidate(dtype) -> bool:
    return dtype in CANDIDATES


_RECAST_CONSTANT_SIZE = 1024     # constants up to this many elements are re-made in the new dtype, not converted
_ANY = object()      # marks 0-d values: weak in every promotion


def _weak_values(graph: Graph) -> dict[int, object]:
    """value id -> where it is weak in promotion: ``_ANY`` for a 0-d value (a Python scalar, a 0-d array, a
    full reduction), else the number of the xlac.numpy call that computed it only from 0-d values (the
    broadcast of a scalar operand inside that call). As in torch, 0-d operands do not widen arrays."""
    weak: dict[int, object] = {v.id: _ANY for v in graph.inputs if v.type.shape == ()}
    for node in graph.nodes:
        call = node.provenance.call
        derived = bool(node.operands) and all(weak.get(v.id) in (_ANY, call) for v in node.operands)
        for r in node.results:
            if r.type.shape == ():
                weak[r.id] = _ANY
            elif derived:
                weak[r.id] = call
    return weak


class _Autocaster:
    def __init__(self, graph: Graph, keep_signature: bool):
        self.graph = graph
        self.keep_signature = keep_signature
        self.nodes: list[Node] = []
        self.new: dict[int, Value] = {v.id: v for v in graph.inputs}   # old value id -> value now
        self.producer: dict[int, Node] = {}                             # value id -> node defining it now
        self.casts: dict[tuple[int, np.dtype], Value] = {}
        self.weak = _weak_values(graph)
        self.node = None                                                # the node being rewritten
        self.tags: dict[int, str] = {}                                  # id(new node) -> what it counts as
        self.not_lowered: list[str] = []                                # per contraction left alone: why
        self._float64_origins: dict[int, str] | None = None

    # ------------------------------------------------------------ emitting

    def emit(self, primitive, operands, attrs, results=None, tag: str = "") -> tuple[Value, ...]:
        old = self.node
        if results is None:
            types = primitive.infer_types(*(v.type for v in operands), **attrs)
            results = tuple(Value(t) for t in types)
        node = Node(primitive, tuple(operands), attrs, results, old.provenance if old else NO_PROVENANCE,
                    old.subgraphs if old and primitive is old.primitive else ())
        self.nodes.append(node)
        for r in results:
            self.producer[r.id] = node
        if tag:
            self.tags[id(node)] = tag
        return results

    def cast(self, value: Value, dtype: np.dtype, tag: str = "inserted") -> Value:
        """``value`` as ``dtype``: one convert per (value, dtype), constants recast, exact widenings skipped."""
        if value.type.dtype == dtype:
            return value
        key = (value.id, dtype)
        cached = self.casts.get(key)
        if cached is not None:
            return cached
        src = self.producer.get(value.id)
        if src is not None and src.primitive is P.convert and \
                (src.operands[0].type.dtype, value.type.dtype) in _EXACT_WIDENING:
            result = self.cast(src.operands[0], dtype, tag)
        elif src is not None and src.primitive is P.constant and value.type.size <= _RECAST_CONSTANT_SIZE:
            (result,) = self.emit(P.constant, (), {"value": src.attrs["value"].astype(dtype)}, tag="constant")
        elif src is not None and src.primitive is P.broadcast_in_dim:       # cast before broadcasting
            (result,) = self.emit(P.broadcast_in_dim, (self.cast(src.operands[0], dtype, tag),), src.attrs)
        else:
            (result,) = self.emit(P.convert, (value,), {"dtype": dtype}, tag=tag)
        self.casts[key] = result
        return result

    # ------------------------------------------------------------ one node

    def rewrite(self, node: Node) -> None:
        self.node = node
        operands = [self.new[v.id] for v in node.operands]
        state = node.autocast
        if node.subgraphs or (state is not None and not _enabled(state)):
            cls = KEEP
        elif state is None:
            cls = FOLLOW
        else:
            op = node.attrs.get("op", "") if node.primitive is P.reduce else ""
            cls = state.policy.class_of(node.primitive.name, node.origin, op)
        if node.primitive is P.convert:
            self.rewrite_convert(node, operands[0], cls, state)
            return
        attrs, before = node.attrs, operands
        if cls != KEEP and cls != FOLLOW:
            operands, attrs = getattr(self, "_" + cls)(node, operands, state)
        elif cls == KEEP:
            operands = self.traced_dtypes(node, operands)
        try:
            types = node.primitive.infer_types(*(v.type for v in operands), **attrs)
        except (ShapeError, TypeError, ValueError):
            cls, attrs = KEEP, node.attrs
            operands = self.traced_dtypes(node, operands)
            types = tuple(v.type for v in node.results)
        same = types == tuple(v.type for v in node.results)
        results = node.results if same else tuple(Value(t) for t in types)
        changed = any(a.type != b.type for a, b in zip(operands, before)) or types != tuple(
            v.type for v in node.results) and cls == LOWER_PRECISION
        self.emit(node.primitive, operands, attrs, results, tag=_CHANGE_TAGS.get(cls, "") if changed else "")
        for old, new in zip(node.results, results):
            self.new[old.id] = new

    def traced_dtypes(self, node: Node, operands: list[Value]) -> list[Value]:
        return [self.cast(v, old.type.dtype) for v, old in zip(operands, node.operands)]

    def _lower_precision(self, node, operands, state):
        if node.primitive.category != "contraction":
            return operands, node.attrs
        if not all(_is_candidate(v.type.dtype) for v in operands):
            self.not_lowered.append(self.why_not_lowered(node))
            return operands, node.attrs
        operands = [self.cast(v, state.dtype) for v in operands]
        return operands, dict(node.attrs, preferred_dtype=state.accumulate)

    def why_not_lowered(self, node: Node) -> str:
        """Why the contraction ``node`` keeps its dtype: its operands are not float16/bfloat16/float32."""
        dtype = next(v.type.dtype for v in node.operands if not _is_candidate(v.type.dtype))
        if dtype != F64:
            return f"{dtypes.short_name(dtype)} operands: autocast lowers only float16, bfloat16 and float32"
        if self._float64_origins is None:
            self._float64_origins = _float64_origins(self.graph)
        origin = _first_origin(self._float64_origins, node.operands) or \
            f"{node.origin or node.primitive.name} at {node.location or '?'}"
        if origin.startswith("argument "):
            return f"float64 operands from {origin}: pass it as float32 for autocast to lower it"
        return (f"float64 operands from {origin}: NumPy 2 promotes float32 with a float64 scalar such as "
                "np.sqrt(d); use a Python float or np.float32")

    def _float32(self, node, operands, state):
        return [self.cast(v, F32) if v.type.dtype in (F16, dtypes.bfloat16) else v for v in operands], node.attrs

    def _promote(self, node, operands, state):
        floats = [(v, self.weak.get(old.id) in (_ANY, node.provenance.call)) for v, old in zip(operands, node.operands)
                  if _is_candidate(v.type.dtype)]
        strong = [v.type.dtype for v, weak in floats if not weak] or [v.type.dtype for v, _ in floats]
        if not strong:
            return operands, node.attrs
        target = dtypes.result_type(*strong)
        return [self.cast(v, target) if _is_candidate(v.type.dtype) else v for v in operands], node.attrs

    def rewrite_convert(self, node: Node, operand: Value, cls: str, state) -> None:
        target = node.attrs["dtype"]
        target = dtypes.canonical(target)
        if cls == LOWER_PRECISION and _is_candidate(target):
            target = state.accumulate or state.dtype
        elif cls == FLOAT32 and target in (F16, dtypes.bfloat16):
            target = F32
        self.new[node.results[0].id] = self.cast(operand, target, tag="kept")

    # ------------------------------------------------------------ the graph

    def run(self) -> Graph:
        graph = self.graph
        for node in graph.nodes:
            self.rewrite(node)
        self.node = None
        outputs = [self.new[v.id] for v in graph.outputs]
        for i, j in graph.input_updates:
            outputs[j] = self.cast(outputs[j], graph.inputs[i].type.dtype)
        if self.keep_signature:
            outputs = [self.cast(new, old.type.dtype, tag="cast back") for new, old in zip(outputs, graph.outputs)]
        writes = [(loc, self.new.get(old.id, old), self.new.get(new.id, new)) for loc, old, new in graph.writes]
        result = eliminate_dead_code(dataclasses.replace(graph, nodes=self.nodes, outputs=outputs, writes=writes))
        result.report = self.report(graph, result)
        return result

    def report(self, before: Graph, after: Graph) -> dict:
        counts = {tag: 0 for tag in ("inserted", "kept", "constant", "lowered", "upcast", "promoted", "cast back")}
        for node in after.nodes:
            tag = self.tags.get(id(node))
            if tag:
                counts[tag] += 1
        converts_before = sum(n.primitive is P.convert for n in before.nodes)
        report = {"converts_inserted": counts["inserted"], "converts_removed": converts_before - counts["kept"],
                  "constants_recast": counts["constant"], "ops_lowered": counts["lowered"],
                  "ops_upcast": counts["upcast"], "ops_promoted": counts["promoted"],
                  "outputs_cast_back": counts["cast back"], "contractions_not_lowered": len(self.not_lowered)}
        reasons = [reason if n == 1 else f"{reason} [{n} contractions]"
                   for reason, n in Counter(self.not_lowered).items()]      # in first-seen order
        for region in (region for node in after.nodes for region in node.subgraphs):   # autocast when traced
            for key, n in region.report.items():
                if key in report:
                    report[key] += n
            if "not_lowered_because" in region.report:
                reasons.append(region.report["not_lowered_because"])
        if reasons:
            report["not_lowered_because"] = "; ".join(reasons)
        return report


def _float64_origins(graph: Graph) -> dict[int, str]:
    """For each float64 value, where its float64 came in: ``argument d``, or the op that first mixed a
    float16/bfloat16/float32 value with float64 (``divide at model.py:12``)."""
    origins = {v.id: f"argument {name}" for v, name in zip(graph.inputs, graph.input_names)
               if v.type.dtype == F64}
    for node in graph.nodes:
        origin = _first_origin(origins, node.operands)
        if origin is None and any(_is_candidate(v.type.dtype) for v in node.operands):
            origin = f"{node.origin or node.primitive.name} at {node.location or '?'}"
        if origin is not None:
            origins.update((r.id, origin) for r in node.results if r.type.dtype == F64)
    return origins


def _first_origin(origins: dict[int, str], operands) -> str | None:
    """The origin of the first float64 operand, a float64 argument first: it is what the user can change."""
    found = [origins[v.id] for v in operands if v.id in origins]
    return next((o for o in found if o.startswith("argument ")), found[0] if found else None)


_CHANGE_TAGS = {LOWER_PRECISION: "lowered", FLOAT32: "upcast", PROMOTE: "promoted"}


def autocast_pass(graph: Graph, *, keep_signature: bool = False) -> Graph:
    """``graph`` with the nodes traced under an enabled ``xlac.autocast`` in the precision its policy gives.
    ``keep_signature``: the graph is a region (a loop body, a branch), whose outputs keep their traced dtypes.

    >>> import numpy as np, xlac, xlac.numpy as xnp
    >>> w = np.ones((2, 2), np.float32)
    >>> def f(x):
    ...     with xlac.autocast():
    ...         return xlac.fori_loop(0, 3, lambda i, h: xnp.tanh(h @ w), x)
    >>> f_ = xlac.compile(f)
    >>> f_(w).dtype, f_.trace(w).ir("autocast").report["outputs_cast_back"]    # the carry stays float32
    (dtype('float32'), 1)
    """
    if not any(_enabled(node.autocast) for node in graph.nodes):
        return graph
    return _Autocaster(graph, keep_signature).run()
