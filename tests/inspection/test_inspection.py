"""Inspection: dump folders, the compile log, summaries, per-pass diffs and the command line."""
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xlac
import xlac.api
import xlac.numpy as xnp
from xlac import runtime
from xlac.config import Config, config
from xlac.inspection import (SUMMARY_KEYS, Signature, diff_graphs, dump_folder_name, explain,
                             format_compile_line, recompile_cause, record_compile)
from xlac.ir import primitives as P
from xlac.ir.graph import Graph, Node, Provenance, SourceLocation, Value
from xlac.ir.types import TensorType

REPO = Path(xlac.__file__).resolve().parents[1]


def step(x, w):
    h = x @ w
    h[0] = 1.0
    return xnp.tanh(h).sum(axis=0)  # TANH LINE


TANH_LINE = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                 if text.endswith("# TANH LINE"))
WRITE_LINE = TANH_LINE - 1
ARGS = (np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))
SIGNATURE = "x:f32[4,8], w:f32[8,3]"
TIMINGS = {"trace": 0.002, "functionalize": 0.0003, "simplify": 0.0001, "lower": 0.001, "xla_compile": 0.03}


@pytest.fixture(scope="module")
def compiled():
    return xlac.compile(step).lower(*ARGS).compile()


@pytest.fixture(scope="module")
def dump(compiled, tmp_path_factory) -> Path:
    folder = record_compile(name="step", signature=SIGNATURE, cause="first call", compiled=compiled,
                            timings=TIMINGS, dump_dir=str(tmp_path_factory.mktemp("dump")))
    return Path(folder)


# ---------------------------------------------------------------- the dump folder


def test_dump_folder_holds_every_stage_and_module_non_empty(dump, compiled):
    stages = [name for name, _ in compiled.lowered.traced.stages]
    expected = [f"{i:02d}-{name}.xir" for i, name in enumerate(stages)] + [
        "module.stablehlo.mlir", "module.hlo.txt", "module.optimized.hlo.txt", "summary.txt", "summary.json"]
    assert stages[0] == "traced" and "functionalize" in stages
    assert dump.name == dump_folder_name("step", SIGNATURE) and re.fullmatch(r"step-[0-9a-f]{8}", dump.name)
    assert sorted(os.listdir(dump)) == sorted(expected)
    for name in expected:
        assert (dump / name).stat().st_size > 0, name
    assert (dump / "module.stablehlo.mlir").read_text() == compiled.lowered.as_text()
    assert (dump / "module.optimized.hlo.txt").read_text() == compiled.as_text()
    assert "store" in (dump / "00-traced.xir").read_text()
    assert "store" not in (dump / "01-functionalize.xir").read_text()


def test_stablehlo_reparses_and_hlo_is_xla_text(dump):
    runtime.verify_stablehlo((dump / "module.stablehlo.mlir").read_text())
    hlo = (dump / "module.hlo.txt").read_text()
    assert hlo.startswith("HloModule") and "ENTRY" in hlo and "tanh(" in hlo
    with pytest.raises(ValueError, match="does not parse"):
        runtime.verify_stablehlo("func.func @main( {")


def test_summary_json_has_the_documented_keys(dump, compiled):
    summary = json.loads((dump / "summary.json").read_text())
    assert set(summary) == set(SUMMARY_KEYS) | {"files"}
    assert summary["function"] == "step" and summary["signature"] == SIGNATURE
    assert summary["cause"] == "first call"
    assert summary["stages"] == [name for name, _ in compiled.lowered.traced.stages]
    assert summary["op_counts"]["traced"]["store"] == 1 and "store" not in summary["op_counts"]["functionalize"]
    assert summary["op_totals"]["traced"] == sum(summary["op_counts"]["traced"].values())
    assert set(summary["pass_reports"]) == set(summary["stages"])
    assert summary["inplace_writes"] == [
        {"location": f"test_inspection.py:{WRITE_LINE}", "array": "local f32[4,3]", "op": "dynamic_update_slice",
         "in_place": True, "reason": "", "bytes": 48}]
    assert summary["timings_s"]["xla_compile"] == 0.03
    assert summary["timings_s"]["total"] == pytest.approx(sum(TIMINGS.values()))
    assert summary["cost_analysis"]["flops"] > 0
    assert summary["memory_analysis"]["argument_size_in_bytes"] == 4 * (32 + 24)
    assert sorted(summary["files"]) == sorted(os.listdir(dump))


def test_summary_text_names_stages_writes_and_costs(dump):
    text = (dump / "summary.txt").read_text()
    assert text.startswith(f"step({SIGNATURE})  compiled: first call")
    assert re.search(r"functionalize\s+\d+\s+-1 store", text)
    assert re.search(rf"^  test_inspection.py:{WRITE_LINE} +local f32\[4,3\] +dynamic_update_slice +in place$",
                     text, re.M)
    assert "xla_compile 30.0" in text and "flops" in text and "argument 224 B" in text


def _hlo_lines_of(hlo: str, op_name: str) -> set[tuple[str, int]]:
    """(file, line) of every instruction of XLA's HLO whose metadata names ``op_name``."""
    files = dict(re.findall(r'^(\d+) "(.*)"$', hlo.split("FunctionNames")[0], re.M))
    locations = {i: (files[f], int(line)) for i, f, line in
                 re.findall(r"^(\d+) \{file_name_id=(\d+) function_name_id=\d+ line=(\d+)", hlo, re.M)}
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", hlo, re.M))
    ids = re.findall(rf'op_name="{re.escape(op_name)}" stack_frame_id=(\d+)', hlo)
    return {locations[frames[i]] for i in ids}


def test_the_users_source_line_shows_in_ir_stablehlo_and_optimized_hlo(dump):
    assert re.search(rf"= tanh .*# test_inspection.py:{TANH_LINE} tanh", (dump / "00-traced.xir").read_text())
    assert re.search(rf'stablehlo.tanh.*loc\("tanh/tanh"\(".*test_inspection.py":{TANH_LINE}:',
                     (dump / "module.stablehlo.mlir").read_text())
    for name in ("module.hlo.txt", "module.optimized.hlo.txt"):
        assert _hlo_lines_of((dump / name).read_text(), "tanh/tanh") == {(__file__, TANH_LINE)}, name


def test_an_unwritable_dump_dir_warns_and_the_compile_still_runs(compiled, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="could not write the compile dump of step"):
        folder = record_compile(name="step", signature=SIGNATURE, cause="first call", compiled=compiled,
                                timings=TIMINGS, dump_dir=str(blocker))
    assert folder is None
    assert np.asarray(compiled(*ARGS)).shape == (3,)


def test_dump_dir_comes_from_the_config_when_not_given(compiled, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "dump_dir", str(tmp_path))
    folder = record_compile(name="step", signature=SIGNATURE, cause="first call", compiled=compiled,
                            timings=TIMINGS, dump_dir=None)
    assert Path(folder).parent == tmp_path
    monkeypatch.setattr(config, "dump_dir", None)
    assert record_compile(name="step", signature=SIGNATURE, cause="c", compiled=compiled, timings=TIMINGS,
                          dump_dir=None) is None


def test_config_reads_the_environment(monkeypatch):
    monkeypatch.setenv("XLAC_DUMP_DIR", "/tmp/somewhere")
    monkeypatch.setenv("XLAC_LOG_COMPILES", "1")
    fresh = Config()
    assert fresh.dump_dir == "/tmp/somewhere" and fresh.log_compiles is True
    monkeypatch.setenv("XLAC_DUMP_DIR", "")
    monkeypatch.setenv("XLAC_LOG_COMPILES", "0")
    fresh = Config()
    assert fresh.dump_dir is None and fresh.log_compiles is False


# ---------------------------------------------------------------- the compile log


def test_log_line_names_function_signature_cause_and_stage_times(compiled, caplog, monkeypatch):
    monkeypatch.setattr(config, "log_compiles", True)
    with caplog.at_level(logging.WARNING, logger="xlac"):
        record_compile(name="step", signature="x:f32[8]", cause="new shape: x f32[4] -> f32[8]",
                       compiled=compiled, timings=TIMINGS, dump_dir=None)
    (record,) = caplog.records
    assert record.name == "xlac" and record.levelno == logging.WARNING
    assert record.getMessage() == (
        "xlac: compiled step(x:f32[8]) because new shape: x f32[4] -> f32[8] in 33.4 ms "
        "(trace 2.0, functionalize 0.3, simplify 0.1, lower 1.0, xla_compile 30.0)")


def test_nothing_is_logged_when_log_compiles_is_off(compiled, caplog, monkeypatch):
    monkeypatch.setattr(config, "log_compiles", False)
    with caplog.at_level(logging.DEBUG, logger="xlac"):
        record_compile(name="step", signature="x", cause="first call", compiled=compiled, timings={}, dump_dir=None)
    assert caplog.records == []


def test_format_compile_line_with_no_timings():
    assert format_compile_line("f", "", "first call", {}) == "xlac: compiled f() because first call in 0.0 ms ()"


@pytest.mark.parametrize("before, after, cause", [
    (None, Signature({"x": "f32[4]"}), "first call"),
    (Signature({"x": "f32[4]"}), Signature({"x": "f32[8]"}), "new shape: x f32[4] -> f32[8]"),
    (Signature({"x": "f32[4]"}), Signature({"x": "i32[4]"}), "new dtype: x f32[4] -> i32[4]"),
    (Signature({"x": "f32[4]"}, {"n": "2"}), Signature({"x": "f32[4]"}, {"n": "3"}), "new static value n=3 (was 2)"),
    (Signature({"x": "f32[4]"}), Signature({"x": "f32[4]"}, autocast="bfloat16"), "autocast changed: off -> bfloat16"),
    (Signature({"x": "f32[4]"}), Signature({"x": "f32[4]", "y": "f32[4]"}), "new arguments: (x) -> (x, y)"),
])
def test_recompile_cause_names_what_changed(before, after, cause):
    assert recompile_cause(before, after) == cause


def test_signature_of_specs_and_statics():
    sig = Signature.of(["x", "lr"], [((2, 3), np.dtype("float32"), False), ((), np.dtype("float64"), True)],
                       [("n", 3)], autocast="bfloat16")
    assert str(sig) == "x:f32[2,3], lr:float, n=3, autocast=bfloat16"


# ---------------------------------------------------------------- explain: the per-pass diff


def test_explain_shows_the_removed_store_the_rewired_read_and_the_write(compiled):
    text = explain(compiled.lowered.traced.stages, compiled.inplace_report())
    section = text.split("functionalize:")[1].split("\n\n")[0]
    assert re.search(rf"^  - store \w+ \w+ +# test_inspection.py:{WRITE_LINE}$", section, re.M)
    assert re.search(rf"^  ~ \w+:f32\[4,3\] = tanh \w+  \(was tanh \w+\) +# test_inspection.py:{TANH_LINE} tanh$",
                     section, re.M)
    assert f"write at test_inspection.py:{WRITE_LINE}: " in section and "dynamic_update_slice gives" in section
    assert re.search(rf"in-place writes:\n  line +array +op +result\n"
                     rf"  test_inspection.py:{WRITE_LINE} +local f32\[4,3\] +dynamic_update_slice +in place$", text)


def test_diff_shows_an_op_moved_to_bf16_and_an_added_convert():
    f32, bf16 = np.dtype("float32"), np.dtype("bfloat16")
    here = SourceLocation("/src/model.py", 7)
    x = Value(TensorType((3,), f32))
    y_old, y_new, x16 = Value(x.type), Value(TensorType((3,), bf16)), Value(TensorType((3,), bf16))
    before = Graph([x], [Node(P.exp, (x,), {}, (y_old,), Provenance(here, "exp"))], [y_old])
    after = Graph([x], [Node(P.convert, (x,), {"dtype": bf16}, (x16,), Provenance(here, "autocast")),
                        Node(P.exp, (x16,), {}, (y_new,), Provenance(here, "exp"))], [y_new])
    lines = diff_graphs(before, after).splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"  \+ c:bf16\[3\] = convert\[dtype=bf16\] a +# model.py:7 autocast", lines[0])
    assert re.fullmatch(r"  ~ d:bf16\[3\] = exp c  \(was f32\[3\]\) +# model.py:7 exp", lines[1])


def test_explain_shows_what_autocast_moved_to_bf16():
    def mixed(x, w):
        with xlac.autocast():
            return x @ w  # AUTOCAST LINE

    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if text.endswith("# AUTOCAST LINE"))
    traced = xlac.compile(mixed).trace(*ARGS)
    section = explain(traced.stages).split("autocast:")[1].split("\n\n")[0]
    assert re.search(rf"^  \+ \w+:bf16\[4,8\] = convert\[dtype=bf16\] \w+ +# test_inspection.py:{line} matmul$",
                     section, re.M)
    assert re.search(rf"^  ~ \w+:bf16\[4,3\] = dot_general.*\(was f32\[4,3\]\) +# test_inspection.py:{line} ", section,
                     re.M)


def test_diff_of_identical_stages_is_empty(compiled):
    graph = compiled.lowered.traced.ir("final")
    assert diff_graphs(graph, graph) == ""


# ---------------------------------------------------------------- the command line

EXAMPLE = textwrap.dedent("""\
    import xlac
    import xlac.numpy as xnp


    @xlac.compile(static_argnames="k")
    def step(x, w, k=1):
        h = x @ w
        h[0] = 2.0
        return xnp.tanh(h * k)
    """)


def _run_cli(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("XLAC_DUMP_DIR", None)
    return subprocess.run([sys.executable, "-m", "xlac", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "model.py").write_text(EXAMPLE)
    return folder


def test_cli_dump_writes_the_folder_and_prints_the_summary(example):
    result = _run_cli(example, "dump", "model.py:step", "--arg", "f32[8,16]", "--arg", "f32[16,4]",
                      "--static", "k=3")
    assert result.returncode == 0, result.stderr
    (folder,) = (example / "xlac-dump").iterdir()
    assert folder.name.startswith("step-")
    for name in ("00-traced.xir", "module.stablehlo.mlir", "module.hlo.txt", "module.optimized.hlo.txt",
                 "summary.txt", "summary.json"):
        assert (folder / name).stat().st_size > 0, name
    assert result.stdout.startswith("step(x:f32[8,16], w:f32[16,4], k=3)  compiled: python -m xlac dump")
    assert re.search(r"^  model.py:8 .* in place$", result.stdout, re.M)
    assert f"dump written to xlac-dump{os.sep}{folder.name}" in result.stdout
    assert json.loads((folder / "summary.json").read_text())["signature"] == "x:f32[8,16], w:f32[16,4], k=3"


@pytest.mark.parametrize("args, message", [
    (["dump", "model.py:nope", "--arg", "f32[4]"], "model.py has no function 'nope'"),
    (["explain", "missing.py:step", "--arg", "f32[4]"], "no such file: missing.py"),
    (["dump", "model.py:step", "--arg", "f32[8,"], "malformed --arg 'f32[8,'"),
])
def test_cli_usage_errors_are_one_line_with_exit_code_2(example, args, message):
    result = _run_cli(example, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("python -m xlac: error: ") and message in line


def test_cli_explain_in_process(example, capsys, monkeypatch):
    from xlac.cli import main
    monkeypatch.chdir(example)
    assert main(["explain", "model.py:step", "--arg", "f32[8,16]", "--arg", "f32[16,4]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("step(x:f32[8,16], w:f32[16,4])")
    assert re.search(r"^  - store \w+ \w+ +# model.py:8$", out, re.M)
    assert "dump written" not in out


def test_cli_reports_a_function_that_fails_to_trace(example, capsys, monkeypatch):
    from xlac.cli import main
    monkeypatch.chdir(example)
    assert main(["dump", "model.py:step", "--arg", "f32[8,16]"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m xlac dump: error: TypeError:") and "'w'" in err


def test_cli_parses_arg_specs():
    from xlac.cli import parse_arg_spec
    assert parse_arg_spec(" i32[2, 3] ") == ((2, 3), np.dtype("int32"))
    assert parse_arg_spec("float64[]") == ((), np.dtype("float64"))
    for bad in ("f32", "f32[2.5]", "[3]", "q7[3]"):
        with pytest.raises(ValueError, match="--arg"):
            parse_arg_spec(bad)


# ---------------------------------------------------------------- through xlac.compile (needs the wiring)


def test_compile_log_names_the_cause_of_each_recompile(caplog, monkeypatch):
    monkeypatch.setattr(config, "log_compiles", True)

    @xlac.compile(static_argnames="n")
    def scaled(x, n):
        return x * n

    with caplog.at_level(logging.WARNING, logger="xlac"):
        scaled(np.ones(4, np.float32), n=2)
        scaled(np.ones(4, np.float32), n=2)          # cached: no line
        scaled(np.ones(8, np.float32), n=2)
        scaled(np.ones(8, np.float32), n=3)
        scaled(np.ones(8, np.int32), n=3)
    messages = [r.getMessage() for r in caplog.records if r.name == "xlac"]
    assert len(messages) == 4
    assert "because first call" in messages[0]
    assert "because new shape: x f32[4] -> f32[8]" in messages[1]
    assert "because new static value n=3 (was 2)" in messages[2]
    assert "because new dtype: x f32[8] -> i32[8]" in messages[3]
    assert all(m.startswith("xlac: compiled scaled(") and "xla_compile" in m for m in messages)


def test_dump_dir_through_xlac_compile_writes_one_folder_per_compile(tmp_path, monkeypatch):
    def tanh2(x):
        return xnp.tanh(x) * 2

    monkeypatch.setattr(config, "dump_dir", str(tmp_path))
    f, plain = xlac.compile(tanh2), xlac.compile(tanh2)
    f(np.ones(3, np.float32))
    f(np.ones(5, np.float32))
    folders = sorted(tmp_path.iterdir())
    assert len(folders) == 2
    summary = json.loads((folders[0] / "summary.json").read_text())
    assert set(summary["timings_s"]) >= {"trace", "lower", "xla_compile", "total"}
    stablehlo = (folders[0] / "module.stablehlo.mlir").read_text()
    monkeypatch.setattr(config, "dump_dir", None)
    assert stablehlo in {plain.lower(np.ones(n, np.float32)).as_text() for n in (3, 5)}


def test_dump_dir_argument_of_xlac_compile(tmp_path):
    f = xlac.compile(lambda x: x + 1, dump_dir=str(tmp_path))
    f(np.ones(2, np.float32))
    (folder,) = tmp_path.iterdir()
    assert (folder / "summary.json").exists()
