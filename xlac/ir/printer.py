"""Prints a graph one node per line, readable like a jaxpr.

>>> import numpy as np
>>> from xlac.ir.graph import Graph, Node, Value
>>> from xlac.ir.types import TensorType
>>> from xlac.ir import primitives as P
>>> x = Value(TensorType((3,), np.dtype("float32")))
>>> y = Value(x.type)
>>> print(format_graph(Graph([x], [Node(P.exp, (x,), {}, (y,))], [y])))
{ lambda a:f32[3] .
    b:f32[3] = exp a
  in (b) }
"""
from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np

from xlac.ir.dtypes import short_name

if TYPE_CHECKING:      # the printer is part of the graph (Graph.__str__ calls it), so it does not import it
    from xlac.ir.graph import Graph, Node, Value

_LETTERS = string.ascii_lowercase


def _short_name(n: int) -> str:
    name = ""
    while True:
        name = _LETTERS[n % 26] + name
        n = n // 26 - 1
        if n < 0:
            return name


class Namer:
    """Gives values short names (a, b, ..., z, aa, ...) in the order they are first seen."""

    def __init__(self):
        self.names: dict[int, str] = {}

    def __call__(self, value: Value) -> str:
        name = self.names.get(value.id)
        if name is None:
            name = self.names[value.id] = _short_name(len(self.names))
        return name


def format_attr(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            return np.array2string(value, separator=",").replace("\n", "")
        return f"<{value.dtype}{list(value.shape)}>"
    if isinstance(value, np.dtype):
        return short_name(value)
    if isinstance(value, tuple):
        return "(" + ",".join(format_attr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def format_node(node: Node, name: Namer) -> str:
    """One line: ``results = primitive[attrs] operands``."""
    results = " ".join(f"{name(v)}:{v.type}" for v in node.results)
    attrs = " ".join(f"{k}={format_attr(v)}" for k, v in node.attrs.items()
                     if v is not None and not (isinstance(v, tuple) and not v))
    head = ("view " if node.view else "") + node.primitive.name + (f"[{attrs}]" if attrs else "")
    operands = " ".join(name(v) for v in node.operands)
    if not node.results:
        return f"{head} {operands}".rstrip()
    return f"{results} = {head} {operands}".rstrip()


def format_location(node: Node) -> str:
    """Where a node came from: ``file.py:LINE origin`` (the user's line and the xlac.numpy function).

    >>> from xlac.ir.graph import Node, Provenance, SourceLocation, Value
    >>> from xlac.ir.types import TensorType
    >>> from xlac.ir import primitives as P
    >>> x = Value(TensorType((3,), np.dtype("float32")))
    >>> format_location(Node(P.exp, (x,), {}, (Value(x.type),), Provenance(SourceLocation("/src/m.py", 4), "exp")))
    'm.py:4 exp'
    """
    where = f"{node.location}" if node.location else ""
    return f"{where} {node.origin}".strip() if node.origin else where


def format_graph(graph: Graph, name: Namer | None = None, indent: int = 0) -> str:
    name = name or Namer()
    pad = " " * indent
    inputs = " ".join(f"{name(v)}:{v.type}" for v in graph.inputs)
    lines = [f"{pad}{{ lambda {inputs} ."]
    body = [(format_node(n, name), n) for n in graph.nodes]
    width = max((len(text) for text, _ in body), default=0)
    for text, node in body:
        where = format_location(node)
        lines.append(f"{pad}    {text.ljust(width)}  # {where}" if where else f"{pad}    {text}")
        for sub in node.subgraphs:
            lines.append(format_graph(sub, name, indent + 6))
    outputs = ", ".join(name(v) for v in graph.outputs)
    lines.append(f"{pad}  in ({outputs}) }}")
    return "\n".join(lines)
