"""Lowering a graph to StableHLO MLIR text.

The text is written directly (about 18x faster than building it with MLIR's
Python bindings), in MLIR's generic op form, so one writer covers every op.
Each op carries ``loc("origin/primitive"("file.py":LINE:0))`` so that XLA's HLO
metadata names the user's line; each argument carries its Python path.

>>> import numpy as np
>>> from xlac.ir.graph import Graph, Node, Value
>>> from xlac.ir.types import TensorType
>>> from xlac.ir import primitives as P
>>> import xlac.lowering.emitters  # noqa: F401
>>> x = Value(TensorType((3,), np.dtype("float32"))); y = Value(x.type)
>>> print(lower_graph(Graph([x], [Node(P.exp, (x,), {}, (y,))], [y], ["x"])))
func.func public @main(%arg0: tensor<3xf32> loc("x")) -> (tensor<3xf32>) {
  %0 = "stablehlo.exponential"(%arg0) : (tensor<3xf32>) -> tensor<3xf32> loc("exp")
  "func.return"(%0) : (tensor<3xf32>) -> ()
}
"""
from __future__ import annotations

from typing import Sequence

from xlac.ir.graph import Graph, Node, SourceLocation
from xlac.ir.sharding import ProgramSharding
from xlac.ir.types import TensorType
from xlac.lowering.sharding import module_attributes, sdy_mesh, sdy_sharding


def dims(values: Sequence[int]) -> str:
    """``array<i64: 1, 2>``: StableHLO's spelling of a dimension list."""
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if len(values) else "") + ">"


def int_list(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def location(loc: SourceLocation | None, name: str) -> str:
    if loc is None:
        return f" loc({_quote(name)})"
    return f" loc({_quote(name)}({_quote(loc.file)}:{loc.line}:0))"


class FunctionWriter:
    """Writes the ops of one function body; emitters call :meth:`op` and :meth:`region`."""

    def __init__(self, indent: str = "  ", kernels: str = "", platform: str = ""):
        self.lines: list[str] = []
        self.indent = indent
        self._count = 0
        self.loc = ""
        self.kernels = kernels     # the device's matrix kernels: "lapack", "cusolver", "hipsolver" or ""
        self.platform = platform   # the device's platform ("cpu", "gpu", ...; "" when not known)

    def fresh(self, prefix: str = "") -> str:
        self._count += 1
        return f"%{prefix}{self._count - 1}"

    def op(self, name: str, operands: Sequence[str], operand_types: Sequence[TensorType],
           result_types: Sequence[TensorType], attrs: str = "", regions: Sequence[list[str]] = ()) -> list[str]:
        """Write one op in generic form; returns the SSA names of its results."""
        result = self.fresh()
        n = len(result_types)
        lhs = f"{result}:{n} = " if n > 1 else (f"{result} = " if n else "")
        text = f'{lhs}"{name}"({", ".join(operands)})'
        if regions:
            text += " (" + ", ".join("{\n" + "\n".join(r) + "\n" + self.indent + "}" for r in regions) + ")"
        if attrs:
            text += " {" + attrs + "}"
        ins = ", ".join([t.mlir() for t in operand_types])
        outs = ", ".join([t.mlir() for t in result_types])
        outs = outs if n == 1 else f"({outs})"
        self.lines.append(f"{self.indent}{text} : ({ins}) -> {outs}{self.loc}")
        return [f"{result}#{i}" for i in range(n)] if n > 1 else [result]

    def region(self, arg_types: Sequence[TensorType], body) -> list[str]:
        """A one-block region: ``body(writer, args)`` writes ops and returns the values to return (and
        their types). A region without arguments has no block header; its ops may read values from above."""
        inner = FunctionWriter(self.indent + "    ", self.kernels, self.platform)
        inner._count = self._count
        inner.loc = self.loc
        args = [inner.fresh("r") for _ in arg_types]
        header = f"{self.indent}  ^bb0(" + ", ".join(f"{a}: {t.mlir()}" for a, t in zip(args, arg_types)) + "):"
        returned, returned_types = body(inner, args)
        inner.lines.append(f'{inner.indent}"stablehlo.return"({", ".join(returned)}) : '
                           f'({", ".join(t.mlir() for t in returned_types)}) -> (){inner.loc}')
        self._count = inner._count
        return ([header] if arg_types else []) + inner.lines

    def graph_region(self, graph: Graph, inputs: Sequence[str] | None = None, extra_returns=()) -> list[str]:
        """A region computing ``graph``: with block arguments for its inputs, or, given ``inputs`` (SSA
        names from above), none. ``extra_returns``: (region argument position) values returned after the
        graph's outputs (a loop's invariants, passed through)."""
        def body(inner: "FunctionWriter", args):
            names = {v.id: name for v, name in zip(graph.inputs, args if inputs is None else inputs)}
            for node in graph.nodes:
                emit_node(inner, node, names)
            returned = [names[v.id] for v in graph.outputs] + [args[i] for i in extra_returns]
            types = [v.type for v in graph.outputs] + [graph.inputs[i].type for i in extra_returns]
            return returned, types
        return self.region([] if inputs is not None else [v.type for v in graph.inputs], body)


def lower_graph(graph: Graph, name: str = "main", aliases: dict[int, int] | None = None, kernels: str = "",
                sharding: ProgramSharding | None = None, platform: str = "") -> str:
    """The StableHLO text of ``graph`` as a public function ``name``; ``kernels``: the vendor kernels the
    device runs as custom calls ("lapack", "cusolver", "hipsolver", or "" for XLA's own ops and expanders
    only; see xlac.lowering.solver_calls); ``sharding``: how its inputs and outputs are split over a mesh
    of devices (None: one device); ``platform``: the device's ("cpu", ...), where an op's best form depends
    on it."""
    writer = FunctionWriter(kernels=kernels, platform=platform)
    names: dict[int, str] = {}
    params = []
    arg_names = graph.input_names or [""] * len(graph.inputs)
    for i, (v, arg_name) in enumerate(zip(graph.inputs, arg_names)):
        names[v.id] = f"%arg{i}"
        attrs = [f"tf.aliasing_output = {aliases[i]} : i32"] if aliases and i in aliases else []
        if sharding is not None:
            attrs.append(f"sdy.sharding = {sdy_sharding(sharding.inputs[i], v.type.ndim)}")
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        params.append(f"%arg{i}: {v.type.mlir()}{attr}" + (f" loc({_quote(arg_name)})" if arg_name else ""))
    for node in graph.nodes:
        emit_node(writer, node, names)
    out_types = ", ".join(v.type.mlir() for v in graph.outputs)
    results = out_types
    if sharding is not None:
        results = ", ".join(v.type.mlir() + (f" {{sdy.sharding = {sdy_sharding(s, v.type.ndim)}}}" if s else "")
                            for v, s in zip(graph.outputs, sharding.outputs))
    returned = ", ".join(names[v.id] for v in graph.outputs)
    writer.loc = ""
    writer.lines.append(f'  "func.return"({returned}) : ({out_types}) -> ()')
    header = f"func.func public @{name}({', '.join(params)}) -> ({results}) {{"
    return "\n".join([header, *writer.lines, "}"])


def emit_node(writer: FunctionWriter, node: Node, names: dict[int, str]) -> None:
    emitter = node.primitive.emitter
    if emitter is None:
        raise NotImplementedError(f"xlac internal error: primitive {node.primitive.name} has no StableHLO emitter")
    label = f"{node.origin}/{node.primitive.name}" if node.origin else node.primitive.name
    writer.loc = location(node.location, label)
    results = emitter(writer, node, [names[v.id] for v in node.operands])
    for value, result in zip(node.results, results):
        names[value.id] = result


def lower_module(graph: Graph, aliases: dict[int, int] | None = None, kernels: str = "",
                 sharding: ProgramSharding | None = None, platform: str = "") -> str:
    """A complete StableHLO module whose entry function ``main`` computes ``graph`` (``kernels``,
    ``sharding`` and ``platform``: see :func:`lower_graph`)."""
    function = lower_graph(graph, "main", aliases, kernels, sharding, platform)
    if sharding is None:
        return "module @xlac {\n" + function + "\n}\n"
    return f"module @xlac {module_attributes(sharding.mesh)}{{\n  {sdy_mesh(sharding.mesh)}\n{function}\n}}\n"
