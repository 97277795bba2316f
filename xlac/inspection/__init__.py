"""Inspecting what xlac did: per-compile dump folders, the compile log, summaries and per-pass IR diffs.

``record_compile`` is the hook every compile calls; ``python -m xlac dump`` and ``python -m xlac explain``
(:mod:`xlac.cli`) use the same pieces from the command line; ``cost_by_line`` says where a compiled program's
work goes, per line of the user's source.

>>> from xlac.inspection import recompile_cause, Signature
>>> recompile_cause(Signature({"x": "f32[4]"}), Signature({"x": "f32[8]"}))
'new shape: x f32[4] -> f32[8]'
"""
from xlac.inspection.cost_view import LineCost, cost_by_line, format_cost_table
from xlac.inspection.diff import diff_graphs, explain
from xlac.inspection.dump import dump_files, dump_folder_name, write_dump
from xlac.inspection.log import format_compile_line, log_compile
from xlac.inspection.record import record_compile
from xlac.inspection.recompile import Signature, recompile_cause, spec_text
from xlac.inspection.summary import SUMMARY_KEYS, format_summary, summarize

__all__ = ["LineCost", "SUMMARY_KEYS", "Signature", "cost_by_line", "diff_graphs", "dump_files", "dump_folder_name",
           "explain", "format_compile_line", "format_cost_table", "format_summary", "log_compile", "recompile_cause",
           "record_compile", "spec_text", "summarize", "write_dump"]
