"""The graph IR: printer output, the verifier's checks, and StableHLO text that MLIR accepts."""
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


def many_primitives(x, idx, m):
    """A program touching most primitives, for the MLIR round trip."""
    y = ops.tanh(ops.mul(x, x))
    total = ops.reduce(y, "sum", (1,))
    sorted_keys, payload = ops.sort([x, ops.iota(x.shape, np.int32, 1)], 1, num_keys=1)
    best = ops.argmax(x, 1, np.int32)
    rows = ops.gather(x, idx, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), slice_sizes=(1, 4))
    scattered = ops.scatter(x, idx, rows, update_window_dims=(1,), inserted_window_dims=(0,),
                            scatter_dims_to_operand_dims=(0,), mode="add")
    product = ops.dot_general(x, m, ((1,), (0,)))
    padded = ops.pad(x, ops.constant(np.float32(0)), (1, -1), (0, 2), (1, 0))
    window = ops.dynamic_slice(x, [ops.constant(np.int32(1)), ops.constant(np.int32(0))], (1, 2))
    flags = ops.select(ops.compare(x, ops.full(x.shape, 0.5, F32), "GT"), x, ops.full(x.shape, 0.0, F32))
    ints = ops.pow(ops.convert(x, np.int32), ops.full(x.shape, 3, np.int32))
    bits = ops.bitcast_convert(x, np.uint8)
    joined = ops.concatenate([ops.reverse(x, (0,)), ops.transpose(ops.reshape(x, (4, 3)), (1, 0))], 0)
    return (total, sorted_keys, payload, best, scattered, product, padded, window, flags, ints, bits, joined,
            ops.clamp(ops.constant(np.float32(0)), x, ops.constant(np.float32(1))),
            ops.convert(ops.constant(np.array([1 + 2j, 3j], np.complex64)), np.bool_),
            ops.sign(ops.constant(np.array([0, 3], np.uint8))))


def test_stablehlo_text_reparses_with_jaxlib_mlir():
    from jax.extend.mlir import ir
    from jax.interpreters.mlir import make_ir_context
    args = (np.arange(12, dtype=np.float32).reshape(3, 4) / 10, np.array([[2], [0]], np.int32),
            np.ones((4, 5), np.float32))
    compiled = xlac.compile(many_primitives)
    text = compiled.lower(*args).as_text()
    for name in ("reduce", "sort", "gather", "scatter", "dot_general", "pad", "dynamic_slice", "bitcast_convert"):
        assert f'"stablehlo.{name}"' in text, name
    with make_ir_context():
        module = ir.Module.parse(text)
        assert module.operation.verify()
    results = compiled(*args)                     # and XLA runs it
    np.testing.assert_array_equal(np.asarray(results[3]), np.argmax(args[0], axis=1))
