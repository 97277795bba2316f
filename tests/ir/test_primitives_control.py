"""The ``while`` and ``case`` primitives: type rules, region signatures checked by the verifier, lowering of
hand-built regions, and bind_node reusing regions (inlining a graph that holds a loop)."""
import numpy as np
import pytest

import xlac
from xlac.ir import ShapeError, TensorType
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Value
from xlac.ir.verifier import VerificationError, verify
from xlac.lowering import lower_module
from xlac.runtime import compile_stablehlo, default_device, to_device, to_numpy
from xlac.trace.context import Trace
from xlac.trace.inline import inline
from tests.ir.test_primitives import covers

I64, F64, BOOL, I32 = (TensorType((), np.dtype(d)) for d in ("int64", "float64", "bool", "int32"))


def _counting_loop(limit: int):
    """while i < limit: (i, acc) = (i + 1, acc * 2), with ``limit`` an invariant operand."""
    i, acc, n = Value(I64), Value(F64), Value(I64)
    less = Value(BOOL)
    cond = Graph([i, acc, n], [Node(P.compare, (i, n), {"direction": "LT"}, (less,))], [less])
    bi, bacc, bn = Value(I64), Value(F64), Value(I64)
    one, two, next_i, next_acc = Value(I64), Value(F64), Value(I64), Value(F64)
    body = Graph([bi, bacc, bn], [
        Node(P.constant, (), {"value": np.array(1, np.int64)}, (one,)),
        Node(P.add, (bi, one), {}, (next_i,)),
        Node(P.constant, (), {"value": np.array(2.0)}, (two,)),
        Node(P.mul, (bacc, two), {}, (next_acc,))], [next_i, next_acc])
    x0, a0, limit_value = Value(I64), Value(F64), Value(I64)
    out_i, out_acc = Value(I64), Value(F64)
    loop = Node(P.while_, (x0, a0, limit_value), {"n_carries": 2}, (out_i, out_acc), subgraphs=(cond, body))
    return Graph([x0, a0, limit_value], [loop], [out_i, out_acc], ["i", "acc", "limit"])


def _execute(graph: Graph, *args):
    executable = compile_stablehlo(lower_module(graph), default_device())
    buffers = [to_device(np.asarray(a), default_device()) for a in args]
    return [to_numpy(b, v.type.dtype, v.type.shape) for b, v in zip(executable.execute(buffers), graph.outputs)]


@covers("while")
@pytest.mark.parametrize("start, limit", [(0, 5), (3, 3), (7, 2)])
def test_a_hand_built_while_lowers_and_runs(start, limit):
    graph = _counting_loop(limit)
    verify(graph)
    i, acc = _execute(graph, np.int64(start), np.float64(1.0), np.int64(limit))
    trips = max(limit - start, 0)
    assert int(i) == start + trips and float(acc) == 2.0 ** trips


def test_while_type_rule_and_region_signatures():
    assert P.while_.infer_types(I64, F64, F64, n_carries=2) == (I64, F64)
    with pytest.raises(ShapeError, match="3 carries but 2 operands"):
        P.while_.infer_types(I64, F64, n_carries=3)
    graph = _counting_loop(4)
    loop = graph.nodes[0]
    cond, body = loop.subgraphs
    wrong_body = Graph(body.inputs, body.nodes, [body.outputs[1], body.outputs[0]])
    loop.subgraphs = (cond, wrong_body)
    with pytest.raises(VerificationError, match=r"while's body returns \[f64\[\], i64\[\]\], expected \[i64\[\], f64\[\]\]"):
        verify(graph)


@covers("case")
def test_case_type_rule_and_branches():
    x, y = Value(F64), Value(F64)
    neg = Graph([x], [Node(P.neg, (x,), {}, (y,))], [y])
    same = Graph([Value(F64)], [], [])
    same.outputs = [same.inputs[0]]
    index, operand, out = Value(I32), Value(F64), Value(F64)
    node = Node(P.case, (index, operand), {"result_types": (F64,)}, (out,), subgraphs=(neg, same))
    graph = Graph([index, operand], [node], [out], ["index", "x"])
    verify(graph)
    for k, expected in ((0, -2.5), (1, 2.5)):
        assert float(_execute(graph, np.int32(k), np.float64(2.5))[0]) == expected
    with pytest.raises(ShapeError, match="the branch index must be i32"):
        P.case.infer_types(I64, F64, result_types=(F64,))


def test_inlining_a_graph_that_holds_a_loop_keeps_its_regions():
    graph = _counting_loop(3)
    with Trace() as trace:
        inputs = [trace.add_input(v.type) for v in graph.inputs]
        outputs = inline(graph, inputs)
    (node,) = trace.graph.nodes
    assert node.primitive is P.while_ and node.subgraphs == graph.nodes[0].subgraphs
    assert [o.value.type for o in outputs] == [I64, F64]


def test_the_compiled_loop_is_one_while_node():
    traced = xlac.compile(lambda v: xlac.fori_loop(0, 10, lambda i, a: a + i, v)).trace(0.0)
    assert traced.ir("final").op_counts()["while"] == 1
