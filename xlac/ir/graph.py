"""The graph IR: typed SSA values, nodes in program order, graphs with inputs and outputs.

A node applies one primitive to operand values, with static attributes, and
defines its result values. Every node carries its :class:`Provenance` (the user's
source line, the ``xlac.numpy`` function that produced it, the autocast state in
force), so a pass or a dump can point back to Python.

>>> import numpy as np
>>> from xlac.ir.types import TensorType
>>> x = Value(TensorType((3,), np.dtype("float32")))
>>> g = Graph(inputs=[x], nodes=[], outputs=[x])
>>> len(g.inputs)
1
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xlac.errors import SourceLocation
from xlac.ir.printer import format_graph
from xlac.ir.types import TensorType

if TYPE_CHECKING:
    from xlac.ir.primitive import Primitive

_value_ids = itertools.count()


class Value:
    """An SSA value: defined once (by a node or as a graph input), typed statically."""

    __slots__ = ("type", "id")

    def __init__(self, type: TensorType):
        self.type = type
        self.id = next(_value_ids)

    def __repr__(self) -> str:
        return f"%{self.id}:{self.type}"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a node comes from: the user's source line, the ``xlac.numpy`` function that emitted it (e.g.
    ``"einsum"``), the ``xlac.autocast`` state in force when it was traced (None: off), and which call of an
    ``xlac.numpy`` function it belongs to (nodes emitted by one call share the number; 0: outside any). A
    pass that rewrites a node gives the nodes it emits the rewritten node's provenance.

    >>> Provenance(origin="einsum").as_inlined().origin
    'einsum'
    """

    location: SourceLocation | None = None
    origin: str = ""
    autocast: Any = None
    call: int = 0

    def as_inlined(self) -> "Provenance":
        """This provenance for a node evaluated again from a graph that already ran the autocast pass (a
        transform's sub-graph): same line and origin, not cast a second time."""
        return self if self.autocast is None else dataclasses.replace(self, autocast=None)


NO_PROVENANCE = Provenance()


@dataclass(slots=True, eq=False)
class Node:
    """One primitive application: ``results = primitive[attrs](*operands)``."""

    primitive: "Primitive"
    operands: tuple[Value, ...]
    attrs: dict[str, Any]
    results: tuple[Value, ...]
    provenance: Provenance = NO_PROVENANCE
    subgraphs: tuple["Graph", ...] = ()
    view: bool = False        # the result aliases operand 0's memory (before functionalization)

    @property
    def location(self) -> SourceLocation | None:
        return self.provenance.location

    @property
    def origin(self) -> str:
        return self.provenance.origin

    @property
    def autocast(self) -> Any:
        return self.provenance.autocast

    @property
    def rule_attrs(self) -> dict[str, Any]:
        """The attributes a rule (VJP, JVP, batching) receives: ``attrs``, with the node's sub-graphs under
        ``"regions"`` where it holds any."""
        return dict(self.attrs, regions=self.subgraphs) if self.subgraphs else self.attrs


@dataclass(slots=True, eq=False)
class Graph:
    """A program: input values, nodes in program order, output values."""

    inputs: list[Value]
    nodes: list[Node] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    input_names: list[str] = field(default_factory=list)   # argument paths, e.g. "x" or "params['w']"
    # After functionalization: (input index, output index) for each argument the program mutates;
    # that output holds the argument's new value.
    input_updates: list[tuple[int, int]] = field(default_factory=list)
    # After functionalization: one entry per in-place write of the program, (the store's source location,
    # the array's value before the write, its value after): what the in-place report examines.
    writes: list[tuple] = field(default_factory=list)
    # What the pass that produced this graph changed, for dumps and summaries (e.g. {"converts_inserted": 3}).
    report: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return format_graph(self)

    def op_counts(self) -> dict[str, int]:
        """How many nodes of each primitive the graph holds (sub-graphs included)."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.primitive.name] = counts.get(node.primitive.name, 0) + 1
            for sub in node.subgraphs:
                for name, n in sub.op_counts().items():
                    counts[name] = counts.get(name, 0) + n
        return counts
