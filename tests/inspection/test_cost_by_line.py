"""The cost view per source line (issue 33, item 7): ``Compiled.cost_by_line()``, the HLO counting under it
(``xlac/inspection/hlo_cost.py``) and ``python -m xlac explain --cost``."""
import inspect
import textwrap

import numpy as np
import pytest

import xlac
from xlac.inspection import cost_by_line, format_cost_table
from xlac.inspection.hlo_cost import instruction_costs

pytestmark = pytest.mark.usefixtures("xla_defaults")   # tests of XLA's optimized program


def _line_of(fn, text: str) -> str:
    """``"test_cost_by_line.py:N"``: where ``text`` is written inside ``fn``."""
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"test_cost_by_line.py:{first + offset}"


def _rows(fn, *args, **options):
    compiled = xlac.compile(fn, **options).lower(*args).compile()
    return compiled, {row.location: row for row in compiled.cost_by_line()}


def matmul_then_scale(a, b):
    c = a @ b
    return c * 3.0 + 1.0


def test_a_matmul_line_costs_2mnk_flops_and_an_elementwise_line_one_per_op_and_element():
    m, k, n = 24, 40, 32
    _, rows = _rows(matmul_then_scale, np.ones((m, k)), np.ones((k, n)))
    matmul, scale = rows[_line_of(matmul_then_scale, "a @ b")], rows[_line_of(matmul_then_scale, "* 3.0")]
    assert matmul.flops == 2 * m * n * k
    assert scale.flops == 2 * m * n                  # a multiply and an add per element
    assert matmul.source == "c = a @ b" and matmul.runs == 1 and matmul.loops == ()
    assert matmul.bytes_accessed >= 8 * (m * k + k * n)      # it reads both operands at least


def test_the_rows_are_sorted_by_work_and_add_up_to_xlas_own_estimate_without_loops():
    compiled, _ = _rows(matmul_then_scale, np.ones((24, 40)), np.ones((40, 32)))
    rows = compiled.cost_by_line()
    assert [row.work for row in rows] == sorted((row.work for row in rows), reverse=True)
    xla = compiled.cost_analysis()
    assert sum(row.flops for row in rows) == pytest.approx(xla["flops"], rel=0.05)
    assert sum(row.bytes_accessed for row in rows) == pytest.approx(xla["bytes accessed"], rel=0.25)


def column_sums(x):
    return x.sum(axis=0)


def test_a_reduction_costs_one_flop_per_element_it_reads():
    _, rows = _rows(column_sums, np.ones((300, 40)))
    assert rows[_line_of(column_sums, "x.sum")].flops == 300 * 40


def scaled_loop(x, steps):
    for _ in range(steps):
        x = x * 0.5 + 1.0
    return x


def test_a_loop_body_line_is_multiplied_by_its_trip_count_and_the_loop_row_says_how_it_ran():
    _, rows = _rows(scaled_loop, np.ones(1000), 200, static_argnums=(1,))
    body = rows[_line_of(scaled_loop, "x * 0.5")]
    assert body.flops == 200 * 2 * 1000              # rolled (partly unrolled or not), every trip counted
    assert body.runs > 1
    loop = rows[_line_of(scaled_loop, "for _ in")]
    [decision] = loop.loops
    assert (decision.kind, decision.trips, decision.decision) == ("for", 200, "rolled")


def test_a_loop_with_traced_trips_counts_its_body_once_and_says_so():
    compiled, rows = _rows(scaled_loop, np.ones(1000), 200)
    body = rows[_line_of(scaled_loop, "x * 0.5")]
    assert body.flops == 2 * 1000 and body.runs == 1
    [decision] = rows[_line_of(scaled_loop, "for _ in")].loops
    assert decision.trips == "traced"
    assert "traced trips: its body counted once" in format_cost_table(compiled.cost_by_line())


# ---------------------------------------------------------------- the HLO counting, on written modules


_LOOP_MODULE = """HloModule m

FileNames
1 "/home/me/model.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=0 end_column=0}
2 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=0 end_column=0}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

%fused (param_0: f32[64], param_1: f32[256,64], param_2: s32[]) -> f32[256,64] {
  %param_1 = f32[256,64]{1,0} parameter(1)
  %param_0 = f32[64]{0} parameter(0)
  %e = f32[64]{0} exponential(%param_0), metadata={op_name="exp" stack_frame_id=1}
  %r = f32[1,64]{1,0} bitcast(%e)
  %param_2 = s32[] parameter(2)
  %zero = s32[] constant(0)
  ROOT %dus = f32[256,64]{1,0} dynamic-update-slice(%param_1, %r, %param_2, %zero), metadata={op_name="store" stack_frame_id=1}
}

%body (p: (s32[], f32[256,64], f32[64])) -> (s32[], f32[256,64], f32[64]) {
  %p = (s32[], f32[256,64]{1,0}, f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %buffer = f32[256,64]{1,0} get-tuple-element(%p), index=1
  %row = f32[64]{0} get-tuple-element(%p), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one), metadata={op_name="while/add" stack_frame_id=2}
  %written = f32[256,64]{1,0} fusion(%row, %buffer, %i), kind=kLoop, calls=%fused, metadata={op_name="store" stack_frame_id=1}
  ROOT %t = (s32[], f32[256,64]{1,0}, f32[64]{0}) tuple(%next, %written, %row)
}

%cond (p.1: (s32[], f32[256,64], f32[64])) -> pred[] {
  %p.1 = (s32[], f32[256,64]{1,0}, f32[64]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%p.1), index=0
  %n = s32[] constant(256)
  ROOT %less = pred[] compare(%i.1, %n), direction=LT, metadata={op_name="while/less" stack_frame_id=2}
}

ENTRY %main (a: f32[256,64], b: f32[64]) -> f32[256,64] {
  %a = f32[256,64]{1,0} parameter(0)
  %b = f32[64]{0} parameter(1)
  %start = s32[] constant(0)
  %init = (s32[], f32[256,64]{1,0}, f32[64]{0}) tuple(%start, %a, %b)
  %loop = (s32[], f32[256,64]{1,0}, f32[64]{0}) while(%init), condition=%cond, body=%body, metadata={op_name="while" stack_frame_id=2}, backend_config={"known_trip_count":{"n":"256"}}
  ROOT %out = f32[256,64]{1,0} get-tuple-element(%loop), index=1
}
"""


def test_a_while_body_counts_trip_count_times_and_an_in_place_update_counts_as_the_update():
    costs = instruction_costs(_LOOP_MODULE)
    store, loop = costs[("/home/me/model.py", 7)], costs[("/home/me/model.py", 6)]
    assert store.transcendentals == 256 * 64 and store.flops == 0
    # Per trip the fusion reads the row (64 floats) and the index, and writes one row of the buffer in
    # place: not all 256x64 of it.
    assert store.bytes_accessed == 256 * (64 * 4 + 4 + 64 * 4)
    assert store.trips == 256
    assert loop.flops == 256 * 2                     # the induction add and the condition's compare


def test_the_rows_name_the_basename_the_loop_and_keep_lines_without_cost():
    from xlac.inspection.loops import LoopDecision
    decision = LoopDecision("model.py:6", "for", 256, "rolled", "256 iterations of 4 ops")
    unrolled = LoopDecision("model.py:9", "for", 3, "unrolled", "3 iterations of 2 ops are few")
    rows = {row.location: row for row in cost_by_line(_LOOP_MODULE, [decision, unrolled])}
    assert rows["model.py:6"].loops == (decision,)
    assert rows["model.py:9"].work == 0 and rows["model.py:9"].loops == (unrolled,)
    table = format_cost_table(list(rows.values()))
    assert "`for` (256 trips) rolled: 256 iterations of 4 ops" in table


def test_a_fusion_that_slices_a_parameter_reads_only_the_slice():
    hlo = textwrap.dedent("""\
        HloModule m
        %fused (param_0: f64[1000,1000]) -> f64[1000] {
          %param_0 = f64[1000,1000]{1,0} parameter(0)
          %s = f64[1,1000]{1,0} slice(%param_0), slice={[3:4], [0:1000]}
          %r = f64[1000]{0} bitcast(%s)
          ROOT %n = f64[1000]{0} negate(%r), metadata={source_file="k.py" source_line=2}
        }
        ENTRY %main (a: f64[1000,1000]) -> f64[1000] {
          %a = f64[1000,1000]{1,0} parameter(0)
          ROOT %f = f64[1000]{0} fusion(%a), kind=kLoop, calls=%fused, metadata={source_file="k.py" source_line=2}
        }
        """)
    work = instruction_costs(hlo)[("k.py", 2)]
    assert (work.flops, work.bytes_accessed) == (1000, 2 * 8 * 1000)


def test_a_fusion_updating_a_value_it_computes_writes_all_of_it():
    hlo = textwrap.dedent("""\
        HloModule m
        %fused (param_0: f64[100], param_1: f64[1]) -> f64[100] {
          %param_0 = f64[100]{0} parameter(0)
          %param_1 = f64[1]{0} parameter(1)
          %n = f64[100]{0} negate(%param_0), metadata={source_file="k.py" source_line=2}
          %zero = s64[] constant(0)
          ROOT %u = f64[100]{0} dynamic-update-slice(%n, %param_1, %zero), metadata={source_file="k.py" source_line=3}
        }
        ENTRY %main (a: f64[100], b: f64[1]) -> f64[100] {
          %a = f64[100]{0} parameter(0)
          %b = f64[1]{0} parameter(1)
          ROOT %f = f64[100]{0} fusion(%a, %b), kind=kLoop, calls=%fused, metadata={source_file="k.py" source_line=3}
        }
        """)
    costs = instruction_costs(hlo)
    assert costs[("k.py", 2)].flops == 100
    assert costs[("k.py", 3)].bytes_accessed == 8 * (100 + 1 + 100)     # not in place: reads a, b, writes all


# ---------------------------------------------------------------- the command line


_PROGRAM = """\
import numpy as np


def step(a, b, steps):
    c = a @ b
    for _ in range(steps):
        c = c * 0.5 + 1.0
    return c
"""


def test_cli_explain_cost_prints_the_lines_by_cost_with_the_loop_and_writes_no_dump(tmp_path, capsys, monkeypatch):
    from xlac.cli import main
    (tmp_path / "prog.py").write_text(_PROGRAM)
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "prog.py:step", "--arg", "f64[40,50]", "--arg", "f64[50,60]", "--static", "steps=100",
                 "--cost"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "prog.py:" in line]
    assert "prog.py:7" in rows[0] and "c = c * 0.5 + 1.0" in rows[0]       # 100 x 2 x 2400 flops: the most
    assert "480k" in rows[0]
    assert any("prog.py:5" in row and "240k" in row for row in rows)        # 2 * 40 * 60 * 50
    assert "`for` (100 trips) rolled" in out
    assert not (tmp_path / "xlac-dump").exists()


def test_cli_cost_is_an_option_of_explain_only(tmp_path, capsys, monkeypatch):
    from xlac.cli import main
    (tmp_path / "prog.py").write_text(_PROGRAM)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_status:
        main(["dump", "prog.py:step", "--arg", "f64[4,5]", "--cost"])
    assert exit_status.value.code == 2
    assert "unrecognized arguments: --cost" in capsys.readouterr().err
