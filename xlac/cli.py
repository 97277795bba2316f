"""``python -m xlac dump|explain FILE.py:FUNCTION --arg SPEC ...``: inspect how xlac compiles a function;
``python -m xlac cache [--clear]``: the persistent compilation cache.

``dump`` traces, lowers and compiles FUNCTION for the given argument types and writes the dump folder
(every IR stage, StableHLO, XLA's HLO before and after optimization, summary) and prints the summary.
``explain`` prints, per pass, a readable diff of the IR with each op's source line; ``explain --cost``
instead compiles FUNCTION and prints, per line of its source, XLA's estimated flops and bytes accessed per
call (loops times their trip count), with each loop's trip count and how it ran, most costly line first
(``Compiled.cost_by_line``). ``cache`` prints the
persistent cache's folder (``XLAC_CACHE_DIR``, or ``--dir``), its entries and their size; ``--clear``
removes them.

>>> parse_arg_spec("f32[8,128]")
((8, 128), dtype('float32'))
>>> parse_arg_spec("bf16[]")[0]
()
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import os
import re
import sys
import time

import numpy as np
from xlac.callables import callable_name
from xlac.inspection import explain, format_cost_table, format_summary, record_compile, Signature, summarize
from xlac.ir import dtypes
from xlac.runtime import PersistentCache
import xlac

__all__ = ["main", "parse_arg_spec"]

_SPEC = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*\[\s*((?:\d+\s*(?:,\s*\d+\s*)*,?)?)\s*\]\s*$")

_EPILOG = """\
argument types: DTYPE[DIM,...] with xlac's short dtype names (f32, f64, bf16, f16, i32, i64, u8, bool,
c64, ...) or NumPy names (float32, ...); f32[] is a scalar. The arrays are zeros: nothing is run.

examples:
  python -m xlac dump model.py:mlp --arg "f32[8,128]" --arg "f32[128,64]" --out /tmp/xlac-dump
  python -m xlac explain model.py:step --arg "f32[1024]" --static n=3 --autocast bfloat16
  python -m xlac explain model.py:step --arg "f32[1024]" --static n=3 --cost

The dump folder DIR/<function>-<signature hash>/ holds 00-traced.xir, 01-<pass>.xir, ... (the IR as
traced and after each pass), module.stablehlo.mlir, module.hlo.txt (XLA's HLO before optimization),
module.optimized.hlo.txt, summary.txt and summary.json (keys: see xlac.inspection.summary). The same
folder is written for every compile of a program run with XLAC_DUMP_DIR=DIR; XLAC_LOG_COMPILES=1 logs
one line per compile with its cause, time per stage and whether the persistent cache (XLAC_CACHE_DIR=DIR)
held it.

  python -m xlac cache            # the persistent cache's folder, entries and size
  python -m xlac cache --clear    # remove its entries
"""


def parse_arg_spec(text: str) -> tuple[tuple[int, ...], np.dtype]:
    """``"f32[8,128]"`` -> ``((8, 128), float32)``; ValueError if malformed or an unknown dtype."""

    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"malformed --arg {text!r}: expected DTYPE[DIM,...] such as f32[8,128]")
    name, dims = match.groups()
    try:
        dtype = dtypes.canonical(name)
    except TypeError:
        raise ValueError(f"--arg {text!r}: unknown dtype {name!r} (use f32, bf16, i32, ...)") from None
    return tuple(int(d) for d in dims.replace(" ", "").split(",") if d), dtype


def _parse_static(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise ValueError(f"malformed --static {text!r}: expected NAME=VALUE such as n=3")
    try:
        return name.strip(), ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name.strip(), value          # a bare word is a string


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line on stderr (exit status 2), pointing to ``--help``."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m xlac", description="Inspect what xlac does to a function. With no arguments: "
        "run a small demo.", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{dump,explain,cache}")
    for name, help_text in [
            ("dump", "compile FUNCTION and write its dump folder (IR per stage, StableHLO, HLO, summary); "
                     "print the summary"),
            ("explain", "print, per pass, what it changed in the IR (ops added, removed, moved to another "
                        "dtype, in-place writes), each with its source line")]:
        sub = commands.add_parser(name, help=help_text, description=help_text, epilog=_EPILOG,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.add_argument("target", metavar="FILE.py:FUNCTION",
                         help="a Python file and a function in it (a plain function or an xlac.compile'd one)")
        sub.add_argument("--arg", action="append", default=[], metavar="SPEC",
                         help='type of the next positional argument, e.g. "f32[8,128]" (repeat per argument)')
        sub.add_argument("--static", action="append", default=[], metavar="NAME=VALUE",
                         help="a static (compile-time) keyword argument; VALUE is a Python literal")
        sub.add_argument("--autocast", metavar="DTYPE", help="compile under xlac.autocast(dtype=DTYPE)")
        sub.add_argument("--out", metavar="DIR", default=None,
                         help="dump root (dump: default ./xlac-dump; explain: write a dump only if given)")
        if name == "explain":
            sub.add_argument("--cost", action="store_true",
                             help="instead: per source line, XLA's estimated flops and bytes accessed per call "
                                  "(loops times their trip count) and each loop's decision, most costly first")
    help_text = "print the persistent compilation cache's folder, entries and size (--clear: empty it)"
    cache = commands.add_parser("cache", help=help_text, description=help_text)
    cache.add_argument("--dir", metavar="DIR", default=None,
                       help="the cache folder (default: XLAC_CACHE_DIR, or xlac.config.cache_dir)")
    cache.add_argument("--clear", action="store_true", help="remove every entry")
    return parser


def _cache_command(options) -> int:
    """``python -m xlac cache [--dir DIR] [--clear]``."""
    folder = options.dir or xlac.config.cache_dir
    if not folder:
        print("python -m xlac cache: no persistent cache: set XLAC_CACHE_DIR=DIR or pass --dir DIR",
              file=sys.stderr)
        return 1
    cache = PersistentCache(folder, xlac.config.cache_max_bytes)
    if options.clear:
        print(f"removed {cache.clear()} entries from {cache.folder}")
        return 0
    entries = cache.entries()
    limit = "no limit" if cache.max_bytes is None else f"limit {_size_text(cache.max_bytes)}"
    print(f"folder:  {cache.folder}{'' if os.path.isdir(cache.folder) else ' (not created yet)'}")
    print(f"entries: {len(entries)}")
    print(f"size:    {_size_text(sum(e.size for e in entries))} ({limit})")
    for entry in reversed(entries):            # most recently used first
        used = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.last_used))
        print(f"  {os.path.basename(entry.path)}  {_size_text(entry.size):>10}  last used {used}")
    return 0


def _size_text(size: int) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024


def _load_function(parser, target: str):
    path, sep, attr = target.rpartition(":")
    if not sep or not path or not attr:
        parser.error(f"expected FILE.py:FUNCTION, got {target!r}")
    if not os.path.isfile(path):
        parser.error(f"no such file: {path}")
    module_name = "_xlac_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        parser.error(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - any error in the user's file is reported in one line
        parser.error(f"could not load {path}: {type(e).__name__}: {_one_line(e)}")
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            parser.error(f"{path} has no function {attr!r}")
    if not callable(fn):
        parser.error(f"{path}:{attr} is not callable")
    return fn


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _parsed_inputs(parser, options):
    try:
        arrays = [np.zeros(shape, dtype) for shape, dtype in map(parse_arg_spec, options.arg)]
        statics = dict(map(_parse_static, options.static))
    except ValueError as e:
        parser.error(str(e))
    return arrays, statics


def _autocast_scope(parser, dtype: str | None):
    if dtype is None:
        return contextlib.nullcontext()

    if not hasattr(xlac, "autocast"):
        parser.error("--autocast: this version of xlac has no xlac.autocast")
    return xlac.autocast(dtype=dtype)


def _compile_stages(fn, arrays, statics, options, parser):
    """(name, traced, compiled or None, timings); compiled only for ``dump`` or an explicit --out."""

    static_names = set(statics)
    if isinstance(fn, xlac.CompiledFunction):
        static_names |= set(fn._static_argnames)
        fn = fn._fn
    name = callable_name(fn)
    compiled_fn = xlac.compile(fn, static_argnames=tuple(static_names))
    with _autocast_scope(parser, options.autocast):
        start = time.perf_counter()
        traced = compiled_fn.trace(*arrays, **statics)
        traced_at = time.perf_counter()
        timings = dict(getattr(traced, "timings", None) or {"trace": traced_at - start})
        if options.command == "explain" and options.out is None and not options.cost:
            return name, traced, None, timings
        lowered = traced.lower()
        lowered_at = time.perf_counter()
        compiled = lowered.compile()
        timings.update(lower=lowered_at - traced_at, xla_compile=time.perf_counter() - lowered_at)
    return name, traced, compiled, timings


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status (argparse exits with 2 on a usage error)."""

    parser = _build_parser()
    options = parser.parse_args(argv)
    if options.command == "cache":
        return _cache_command(options)
    fn = _load_function(parser, options.target)
    arrays, statics = _parsed_inputs(parser, options)
    try:
        name, traced, compiled, timings = _compile_stages(fn, arrays, statics, options, parser)
    except Exception as e:  # noqa: BLE001 - the user's function failed to trace or compile
        print(f"{parser.prog} {options.command}: error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return 1
    signature = str(Signature.of(traced.in_paths, traced.in_specs, statics, options.autocast))
    cause = f"python -m xlac {options.command}"
    folder = None
    wants_dump = options.command == "dump" or options.out is not None
    if wants_dump:
        out = options.out if options.out is not None else "xlac-dump"
        folder = record_compile(name=name, signature=signature, cause=cause, compiled=compiled,
                                timings=timings, dump_dir=out)
    if options.command == "dump":
        print(format_summary(summarize(name, signature, cause, compiled, timings)), end="")
    elif options.cost:
        print(f"{name}({signature}): XLA's estimated work per call, per source line\n")
        print(format_cost_table(compiled.cost_by_line()), end="")
    else:
        print(f"{name}({signature})\n")
        print(explain(traced.stages, traced.inplace_report(), traced.loop_decisions))
    if folder is not None:
        print(f"\ndump written to {folder}")
    elif wants_dump:
        return 1
    return 0
