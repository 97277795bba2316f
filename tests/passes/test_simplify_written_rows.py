"""xlac.passes.simplify: a ``dynamic_slice`` reading back exactly the region a ``dynamic_update_slice`` wrote
is the update (``out[i] = row; out[i].sum()``), so that a rolled loop does not copy ``out`` each iteration;
one at another place, or of another size, stays. The oracle: the same Python run by NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.ir import Graph, Node, TensorType, Value
from xlac.ir import primitives as P
from xlac.passes.simplify import simplify
from tests.numpy_kernels import rows_and_a_total

pytestmark = pytest.mark.usefixtures("xla_defaults")   # tests of XLA's optimized program


def written_then_read(read_start: str, read_size: int) -> Graph:
    """``dynamic_slice(dynamic_update_slice(x, patch, i, 0), start, 0)`` of ``read_size`` rows, ``start``
    being the update's own ``i`` ("same"), another value equal to it ("other") or the constant 0 ("zero")."""
    f64, index = np.dtype("float64"), TensorType((), np.dtype("int64"))
    x, patch, i, j = Value(TensorType((6, 3), f64)), Value(TensorType((1, 3), f64)), Value(index), Value(index)
    zero, written, read = Value(index), Value(x.type), Value(TensorType((read_size, 3), f64))
    start = {"same": i, "other": j, "zero": zero}[read_start]
    nodes = [Node(P.constant, (), {"value": np.int64(0)}, (zero,)),
             Node(P.dynamic_update_slice, (x, patch, i, zero), {}, (written,)),
             Node(P.dynamic_slice, (written, start, zero), {"sizes": (read_size, 3)}, (read,))]
    return Graph([x, patch, i, j], nodes, [read])


def test_a_row_read_back_where_it_was_written_is_the_written_row():
    graph = simplify(written_then_read("same", 1))
    assert graph.outputs[0] is graph.inputs[1] and graph.report["slices_forwarded"] == 1
    assert "dynamic_slice" not in graph.op_counts()


def test_a_read_at_another_start_or_of_another_size_stays():
    for start, size in [("other", 1), ("zero", 1), ("same", 2)]:
        graph = simplify(written_then_read(start, size))
        assert graph.op_counts()["dynamic_slice"] == 1 and "slices_forwarded" not in graph.report, (start, size)



def test_a_rolled_loop_reading_back_its_row_copies_no_array_and_equals_numpy(rng, monkeypatch):
    monkeypatch.setattr(xlac.config, "vectorize_loops", "never")
    x = rng.normal(size=(300, 64))
    compiled = xlac.compile(rows_and_a_total)
    assert [d.decision for d in compiled.trace(x).loop_decisions] == ["rolled"]
    assert "f64[300,64]{1,0} copy(" not in compiled.lower(x).compile().as_text()
    (out, total), (expected_out, expected_total) = compiled(x), rows_and_a_total(x)
    np.testing.assert_allclose(np.asarray(out), expected_out, rtol=1e-13)
    np.testing.assert_allclose(float(total), expected_total, rtol=1e-12)
