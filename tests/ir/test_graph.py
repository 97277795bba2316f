"""The graph IR: printer output and the verifier's checks (the StableHLO text it lowers to: tests/lowering)."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import xlac
from xlac.ir import Graph, Node, TensorType, Value, VerificationError, verify
from xlac.ir import primitives as P
from xlac.trace import ops

F32 = np.dtype("float32")


def two_ops(x, y):
    s = ops.add(x, y)
    return ops.exp(s)


def test_printer_one_node_per_line_with_short_names_and_source_lines():
    x = np.ones((2, 3), np.float32)
    text = str(xlac.compile(two_ops).trace(x, x))
    lines = text.splitlines()
    first_line = inspect.getsourcelines(two_ops)[1]
    assert lines[0] == "{ lambda a:f32[2,3] b:f32[2,3] ."
    assert re.fullmatch(rf"    c:f32\[2,3\] = add a b +# test_graph\.py:{first_line + 1}", lines[1]), lines[1]
    assert re.fullmatch(rf"    d:f32\[2,3\] = exp c +# test_graph\.py:{first_line + 2}", lines[2]), lines[2]
    assert lines[3] == "  in (d) }"
    assert len(lines) == 4


def test_printer_shows_attributes_and_origin():
    import xlac.numpy as xnp
    text = str(xlac.compile(lambda x: xnp.transpose(x) + 1.0).trace(np.ones((2, 3), np.float32)))
    assert "transpose[permutation=(1,0)]" in text
    assert re.search(r"# test_graph\.py:\d+ transpose", text), text


def test_printer_names_run_past_z():
    x = Value(TensorType((), F32))
    nodes, last = [], x
    for _ in range(30):
        out = Value(x.type)
        nodes.append(Node(P.neg, (last,), {}, (out,)))
        last = out
    text = str(Graph([x], nodes, [last]))
    assert "ae:f32[] = neg ad" in text
    assert text.endswith("in (ae) }")


def _value(shape=(3,), dtype=F32):
    return Value(TensorType(shape, np.dtype(dtype)))


def test_verifier_accepts_a_well_formed_graph():
    x, y = _value(), _value()
    verify(Graph([x], [Node(P.exp, (x,), {}, (y,))], [y]))


def test_verifier_catches_use_before_define():
    x, y, z = _value(), _value(), _value()
    nodes = [Node(P.exp, (y,), {}, (z,)), Node(P.neg, (x,), {}, (y,))]
    with pytest.raises(VerificationError, match=r"node 0 \(exp.*operand %\d+:f32\[3\] used before it is defined"):
        verify(Graph([x], nodes, [z]))


def test_verifier_catches_wrong_result_type():
    x, y = _value(), _value(dtype=np.int32)
    with pytest.raises(VerificationError, match=r"results \(i32\[3\],\), type rule gives \(f32\[3\],\)"):
        verify(Graph([x], [Node(P.exp, (x,), {}, (y,))], [y]))


def test_verifier_catches_rejected_operands():
    x, y, z = _value(), _value((4,)), _value()
    with pytest.raises(VerificationError, match=r"add.*type rule rejects.*f32\[3\] and f32\[4\]"):
        verify(Graph([x, y], [Node(P.add, (x, y), {}, (z,))], [z]))


def test_verifier_catches_undefined_output():
    x, stray = _value(), _value()
    with pytest.raises(VerificationError, match=r"output %\d+:f32\[3\] is not defined"):
        verify(Graph([x], [], [stray]))


def test_verifier_catches_double_definition():
    x, y = _value(), _value()
    nodes = [Node(P.exp, (x,), {}, (y,)), Node(P.neg, (x,), {}, (y,))]
    with pytest.raises(VerificationError, match="defined twice"):
        verify(Graph([x], nodes, [y]))
