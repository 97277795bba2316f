"""XLA's estimated work per HLO instruction, read from an optimized HLO module's text, summed per line of
the user's source (the line each instruction's metadata names): what ``Compiled.cost_by_line`` shows.

jaxlib offers only the whole module's cost analysis, so the count is made here, as XLA's
``HloCostAnalysis`` makes it:

- flops: one per result element of an arithmetic, logical, compare or select op; ``2 * m * n * k`` for a
  ``dot`` (two per multiply-add over the contracted dimensions), the same for a ``convolution``; a
  reduction, ``map``, ``scatter`` or ``sort`` pays its applied computation per element;
  transcendentals (``exp``, ``tanh``, ``sqrt``, ...) are counted apart, one per element.
- bytes accessed: what each instruction that runs reads and writes, its operands and its result. A
  fusion counts at its boundary (its fused ops run in registers), a parameter it only slices counts as the
  slice, and a ``dynamic-update-slice`` at its root, done in place, counts as the update.
- loops: a ``while`` body's work times its trip count where XLA knows it (``known_trip_count``), else
  once; a conditional's branches once each (an upper bound).

>>> hlo = '''HloModule m
... ENTRY %main (a: f32[8,16], b: f32[16,4]) -> f32[8,4] {
...   %a = f32[8,16]{1,0} parameter(0)
...   %b = f32[16,4]{1,0} parameter(1)
...   ROOT %d = f32[8,4]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="matmul" source_file="model.py" source_line=3}
... }'''
>>> costs = instruction_costs(hlo)
>>> costs[("model.py", 3)].flops, costs[("model.py", 3)].bytes_accessed
(1024.0, 896.0)
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

__all__ = ["Work", "instruction_costs"]

_ELEMENT_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
                  "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "token": 0}
_ARITHMETIC = frozenset(
    "add subtract multiply divide remainder maximum minimum and or xor not negate abs sign compare select clamp "
    "shift-left shift-right-arithmetic shift-right-logical floor ceil round-nearest-afz round-nearest-even popcnt "
    "count-leading-zeros is-finite real imag complex".split())
_TRANSCENDENTAL = frozenset(
    "exponential exponential-minus-one log log-plus-one tanh logistic sqrt rsqrt cbrt sine cosine tan atan2 power "
    "erf".split())
# Instructions that move no data themselves (what they stand for is counted where it runs).
_FREE = frozenset("parameter constant get-tuple-element tuple bitcast while call conditional after-all "
                  "opt-barrier partition-id replica-id add-dependency".split())
_SLICING = frozenset(("slice", "dynamic-slice", "gather"))

_COMPUTATION = re.compile(r"^(ENTRY )?%([\w.-]+) \(.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(ROOT )?%([\w.-]+) = (.*)$")
_OPCODE = re.compile(r"\s*([\w-]+)\(")
_ARRAY = re.compile(r"\b([a-z]\w*)\[([\d,]*)\]")
_NAME = re.compile(r"%([\w.-]+)")
_TABLE_ROW = re.compile(r"^(\d+) (.*)$")
_FIELD = re.compile(r"(\w+)=(\d+)")


@dataclass
class Work:
    """Estimated work of some instructions: ``flops``, ``transcendentals``, ``bytes_accessed``, and
    ``trips``: the most times one of them runs per call (its enclosing loops' known trip counts)."""

    flops: float = 0.0
    transcendentals: float = 0.0
    bytes_accessed: float = 0.0
    trips: int = 1

    def add(self, flops: float = 0.0, transcendentals: float = 0.0, bytes_accessed: float = 0.0,
            trips: int = 1) -> None:
        self.flops += flops
        self.transcendentals += transcendentals
        self.bytes_accessed += bytes_accessed
        self.trips = max(self.trips, trips)


@dataclass
class _Instruction:
    name: str
    type_text: str
    opcode: str
    operands: list[str]
    operand_text: str
    attributes: str
    line: tuple[str, int] | None
    is_root: bool

    def called(self, key: str) -> list[str]:
        """The computations named by attribute ``key`` (``calls=%f``, ``branch_computations={%a, %b}``)."""
        match = re.search(rf"\b{key}=(\{{[^}}]*\}}|%[\w.-]+)", self.attributes)
        return _NAME.findall(match.group(1)) if match else []

    def dimensions(self, key: str) -> list[int]:
        match = re.search(rf"\b{key}=\{{([\d,]*)\}}", self.attributes)
        return [int(d) for d in match.group(1).split(",") if d] if match else []


@dataclass
class _Module:
    computations: dict[str, list[_Instruction]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    lines: dict[str, tuple[str, int] | None] = field(default_factory=dict)
    entry: str = ""


def instruction_costs(hlo: str) -> dict[tuple[str, int] | None, Work]:
    """Per source line ``(file, line)`` (None: instructions that name none), the estimated work of the
    instructions of optimized HLO module text ``hlo`` that name it, loops multiplied by their trip count."""
    module = _parse(hlo)
    totals: dict[tuple[str, int] | None, Work] = {}
    _Counter(module, totals).computation(module.entry, None, 1)
    return totals


# ---------------------------------------------------------------- parsing


def _parse(hlo: str) -> _Module:
    module = _Module()
    frames = _source_lines(hlo)
    current = None
    for text in hlo.splitlines():
        start = _COMPUTATION.match(text)
        if start:
            current = module.computations.setdefault(start.group(2), [])
            module.entry = start.group(2) if start.group(1) else module.entry
            continue
        match = _INSTRUCTION.match(text) if current is not None else None
        if match is None:
            continue
        root, name, rest = match.groups()
        type_text, rest = _split_type(rest)
        opcode = _OPCODE.match(rest)
        if opcode is None:
            continue
        operands, attributes = _split_operands(rest[opcode.end():])
        module.types[name] = type_text
        operand_names = _NAME.findall(operands)
        # An op an XLA pass made without metadata (a dot it split) is charged to the line of its inputs.
        line = _line_of(attributes, frames) or next(
            (module.lines[o] for o in operand_names if module.lines.get(o) is not None), None)
        module.lines[name] = line
        current.append(_Instruction(name, type_text, opcode.group(1), operand_names, operands, attributes, line,
                                    bool(root)))
    return module


def _split_type(text: str) -> tuple[str, str]:
    """``"(f32[2], s32[]) while(...)"`` -> the result type and what follows it."""
    if not text.startswith("("):
        type_text, _, rest = text.partition(" ")
        return type_text, rest
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[:i + 1], text[i + 1:]
    return text, ""


def _split_operands(text: str) -> tuple[str, str]:
    """The text inside an instruction's operand parentheses (the opening one already read), and the rest."""
    depth = 1
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[:i], text[i + 1:]
    return text, ""


def _source_lines(hlo: str) -> dict[int, tuple[str, int]]:
    """Stack frame id -> ``(file, line)``, from the module's FileNames / FileLocations / StackFrames tables."""
    tables: dict[str, dict[int, str]] = {}
    table = None
    for text in hlo.splitlines():
        if text in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            table = tables.setdefault(text, {})
        elif table is not None and (row := _TABLE_ROW.match(text)):
            table[int(row.group(1))] = row.group(2)
        elif not text.strip() or text.startswith(("%", "ENTRY")):
            table = None
    files = {i: json.loads(name) for i, name in tables.get("FileNames", {}).items()}
    places = {}
    for i, row in tables.get("FileLocations", {}).items():
        fields = dict((k, int(v)) for k, v in _FIELD.findall(row))
        places[i] = (files.get(fields.get("file_name_id"), "?"), fields.get("line", 0))
    return {i: places[fields["file_location_id"]] for i, row in tables.get("StackFrames", {}).items()
            if (fields := dict((k, int(v)) for k, v in _FIELD.findall(row))).get("file_location_id") in places}


def _line_of(attributes: str, frames: dict[int, tuple[str, int]]) -> tuple[str, int] | None:
    frame = re.search(r"\bstack_frame_id=(\d+)", attributes)
    if frame:
        return frames.get(int(frame.group(1)))
    file, line = re.search(r'\bsource_file="([^"]*)"', attributes), re.search(r"\bsource_line=(\d+)", attributes)
    return (file.group(1), int(line.group(1))) if file and line else None


# ---------------------------------------------------------------- sizes


def _arrays(type_text: str) -> list[tuple[str, list[int]]]:
    return [(element, [int(d) for d in dims.split(",") if d]) for element, dims in _ARRAY.findall(type_text)]


def _elements(type_text: str) -> int:
    return sum(math.prod(dims) for _, dims in _arrays(type_text))


def _bytes(type_text: str) -> int:
    return sum(math.prod(dims) * _ELEMENT_BYTES.get(element, 1 if element.startswith("f8") else 8)
               for element, dims in _arrays(type_text))


def _shape(type_text: str) -> list[int]:
    arrays = _arrays(type_text)
    return arrays[0][1] if arrays else []


# ---------------------------------------------------------------- counting


class _Counter:
    """Walks the entry computation and what it calls, adding each instruction's work to its line."""

    def __init__(self, module: _Module, totals: dict):
        self.module = module
        self.totals = totals

    def computation(self, name: str, line, trips: int) -> None:
        for instruction in self.module.computations.get(name, []):
            self.instruction(instruction, instruction.line or line, trips)

    def _add(self, line, trips: int, flops=0.0, transcendentals=0.0, bytes_accessed=0.0) -> None:
        if flops or transcendentals or bytes_accessed:
            self.totals.setdefault(line, Work()).add(flops * trips, transcendentals * trips,
                                                     bytes_accessed * trips, trips)

    def instruction(self, instruction: _Instruction, line, trips: int) -> None:
        opcode = instruction.opcode
        if opcode == "while":
            body_trips = trips * (_known_trip_count(instruction.attributes) or 1)
            for called in instruction.called("condition") + instruction.called("body"):
                self.computation(called, line, body_trips)
        elif opcode in ("call", "async-start"):
            for called in instruction.called("to_apply") + instruction.called("calls"):
                self.computation(called, line, trips)
        elif opcode == "conditional":
            for key in ("branch_computations", "true_computation", "false_computation"):
                for called in instruction.called(key):
                    self.computation(called, line, trips)
        elif opcode == "fusion":
            for called in instruction.called("calls"):
                self.fused(called, line, trips)
            self._add(line, trips, bytes_accessed=self.fusion_bytes(instruction))
        else:
            flops, transcendentals = self.flops(instruction)
            self._add(line, trips, flops, transcendentals, self.bytes_accessed(instruction))

    def fused(self, name: str, line, trips: int) -> None:
        """A fused computation: its ops' flops, each to its line; its bytes are the fusion's."""
        for instruction in self.module.computations.get(name, []):
            if instruction.opcode == "fusion":
                for called in instruction.called("calls"):
                    self.fused(called, instruction.line or line, trips)
                continue
            flops, transcendentals = self.flops(instruction)
            self._add(instruction.line or line, trips, flops, transcendentals)

    def flops(self, instruction: _Instruction) -> tuple[float, float]:
        """(flops, transcendentals) of one instruction that is not a fusion or a loop."""
        opcode, result = instruction.opcode, _elements(instruction.type_text)
        operand_types = [self.module.types.get(o, "") for o in instruction.operands]
        if opcode in _ARITHMETIC:
            return float(result), 0.0
        if opcode in _TRANSCENDENTAL:
            return 0.0, float(result)
        if opcode == "dot":
            lhs = _shape(operand_types[0]) if operand_types else []
            contracted = math.prod(lhs[d] for d in instruction.dimensions("lhs_contracting_dims") if d < len(lhs))
            return 2.0 * result * contracted, 0.0
        if opcode == "convolution" and len(operand_types) > 1:
            kernel = _shape(operand_types[1])
            labels = re.search(r"dim_labels=\w*_(\w+)->", instruction.attributes)
            outputs = kernel[labels.group(1).index("o")] if labels and "o" in labels.group(1) else 1
            return 2.0 * result * math.prod(kernel) / max(outputs, 1), 0.0
        per_element = sum(self.applied_flops(c) for c in instruction.called("to_apply"))
        if opcode in ("reduce", "reduce-window", "all-reduce", "reduce-scatter"):
            inputs = operand_types[:max(len(operand_types) // 2, 1)]
            return per_element * sum(_elements(t) for t in inputs), 0.0
        if opcode == "scatter" and operand_types:
            return per_element * _elements(operand_types[-1]), 0.0
        if opcode == "map":
            return per_element * result, 0.0
        if opcode == "sort" and operand_types:
            shape, [axis] = _shape(operand_types[0]), instruction.dimensions("dimensions") or [0]
            length = shape[axis] if axis < len(shape) else 1
            return max(per_element, 1.0) * _elements(operand_types[0]) * max(math.log2(max(length, 2)), 1.0), 0.0
        return 0.0, 0.0

    def applied_flops(self, name: str) -> float:
        """Flops of one application of a scalar computation (a reducer, a comparator)."""
        return sum(sum(self.flops(i)) for i in self.module.computations.get(name, []))

    def bytes_accessed(self, instruction: _Instruction) -> float:
        opcode = instruction.opcode
        if opcode in _FREE:
            return 0.0
        if opcode in ("slice", "dynamic-slice"):
            return 2.0 * _bytes(instruction.type_text)
        if opcode == "dynamic-update-slice" and len(instruction.operands) > 1:
            return 2.0 * _bytes(self.module.types.get(instruction.operands[1], ""))
        return float(_bytes(instruction.type_text) + sum(_bytes(self.module.types.get(o, ""))
                                                       for o in instruction.operands))

    def fusion_bytes(self, fusion: _Instruction) -> float:
        """Bytes a fusion reads and writes: each operand (only the part it slices, none of a buffer updated in
        place at its root) and its result (only the update, where it is updated in place)."""
        body = {i.name: i for called in fusion.called("calls") for i in self.module.computations.get(called, [])}
        by_number = {int(i.operand_text): i.name for i in body.values()
                     if i.opcode == "parameter" and i.operand_text.strip().isdigit()}
        users: dict[str, list[_Instruction]] = {}
        for i in body.values():
            for operand in i.operands:
                users.setdefault(operand, []).append(i)
        root = next((i for i in body.values() if i.is_root), None)
        updated = body.get(root.operands[0]) if root is not None and root.opcode == "dynamic-update-slice" else None
        in_place = {updated.name} if updated is not None and updated.opcode == "parameter" else set()
        total = 0.0
        for position, operand in enumerate(fusion.operands):
            parameter = by_number.get(position)
            uses = users.get(parameter, [])
            if parameter in in_place:
                continue
            if uses and all(u.opcode in _SLICING for u in uses):
                total += sum(_bytes(u.type_text) for u in uses)
            else:
                total += _bytes(self.module.types.get(operand, ""))
        if in_place and root is not None and len(root.operands) > 1:
            return total + _bytes(body[root.operands[1]].type_text if root.operands[1] in body else "")
        return total + _bytes(fusion.type_text)


def _known_trip_count(attributes: str) -> int | None:
    match = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', attributes)
    return int(match.group(1)) if match else None
