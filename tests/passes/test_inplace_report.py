"""The in-place report prints as a table (line, array, op, result), the same table ``explain`` and the
compile summary show, and stays a list of InplaceWrite."""
import numpy as np
import pytest

import xlac
from xlac.inspection import explain
from xlac.passes.inplace import InplaceWrite

pytestmark = pytest.mark.usefixtures("xla_defaults")   # tests of XLA's optimized program


def overwrite(x, v):
    x[0] = v                      # in place: nothing reads the old x afterwards
    snapshot = x.copy()
    x[1] = v                      # copies: the snapshot (the old x) is read after it
    return snapshot.sum()


FIRST_WRITE = overwrite.__code__.co_firstlineno + 1     # the lines of the writes and the read above
SECOND_WRITE = FIRST_WRITE + 2
SUM_LINE = FIRST_WRITE + 3


def _report():
    return xlac.compile(overwrite).lower(np.zeros(8), 1.0).compile().inplace_report()


def test_report_is_a_list_of_writes():
    report = _report()
    assert isinstance(report, list) and len(report) == 2 and all(isinstance(w, InplaceWrite) for w in report)
    assert [w.in_place for w in report] == [True, False]
    assert [w.array for w in report] == ["x f64[8]", "x f64[8]"]      # the second write is to x too


def test_report_prints_as_a_table():
    lines = str(_report()).splitlines()
    assert lines[0].split() == ["line", "array", "op", "result"]
    assert lines[1].split() == [f"test_inplace_report.py:{FIRST_WRITE}", "x", "f64[8]", "dynamic_update_slice",
                                "in", "place"]
    assert lines[2].startswith(f"test_inplace_report.py:{SECOND_WRITE}  x f64[8]  dynamic_update_slice  ")
    assert lines[2].endswith(f"copies 64 bytes: the old value is read afterwards by reduce at "
                             f"test_inplace_report.py:{SUM_LINE}")
    # the columns line up
    assert len({line.index("x f64") for line in lines[1:]}) == 1 and lines[0].index("array") == lines[1].index("x f64")


def test_explain_shows_the_same_table():
    compiled = xlac.compile(overwrite).lower(np.zeros(8), 1.0).compile()
    report = compiled.inplace_report()
    text = explain(compiled.lowered.traced.stages, report)
    table = "\n".join("  " + line for line in str(report).splitlines())
    assert text.endswith("in-place writes:\n" + table)


def test_a_program_without_writes_says_so():
    report = xlac.compile(lambda x: x + 1).trace(np.zeros(3)).inplace_report()
    assert report == [] and str(report) == "no in-place writes"


def test_a_write_to_an_array_made_inside_is_named_local():
    def f(v):
        out = xlac.numpy.zeros(3)
        out[1] = v
        return out
    (write,) = xlac.compile(f).trace(1.0).inplace_report()
    assert write.array == "local f64[3]" and write.in_place


def rows_then_whole(x, v):
    for i in range(300):
        old = x[i + 1].copy()
        x[i] = v * i
        x[i + 2] = old + x.sum(axis=0)       # XLA:CPU copies x inside the loop's body for this
    return x


def rows_only(x, v):
    for i in range(300):
        x[i] = v * i
    return x.sum()


def test_writes_inside_a_loop_are_reported_copying_where_xlas_optimized_loop_body_copies_the_buffer():
    """The graph judges both loops' writes in place; the optimized HLO of the first holds a copy of the
    4096x256 buffer in the loop's body, which the compiled report names (jax-ml/jax#40101's kind of copy)."""
    x, v = np.zeros((4096, 256), np.float32), np.ones(256, np.float32)
    copying = xlac.compile(rows_then_whole).lower(x, v).compile()
    in_body = [w for w in copying.inplace_report() if w.in_loop]
    assert all(w.in_place for w in copying.lowered.traced.inplace_report())
    assert in_body and all(not w.in_place and "f32[4096,256] buffer inside the loop's body" in w.reason
                           for w in in_body)
    clean = xlac.compile(rows_only).lower(x, v).compile()
    assert [w.in_place for w in clean.inplace_report() if w.in_loop] == [True]
