"""The source converter's own time: ``convert_function`` over the user functions of the NumPy kernels
(tests/numpy_kernels.py, benchmarks/as_written_kernels.py, numpy_loops.py, numpy_extents.py) and the NumPy
models (tests/gpt_numpy.py, tests/numpy_llama.py), each from a fresh copy of its ``def``: the process's CPU
time (steadier than wall-clock time on a shared machine), best of N rounds.

Run: python benchmarks/convert.py [--rounds N] [--before path/to/old/xlac/convert/rewrite.py]

``--before`` loads another version of ``xlac/convert/rewrite.py`` and times both, alternating, in one run
(the old module runs on this tree's analyses and helpers; ``git show main:xlac/convert/rewrite.py >
/tmp/rewrite_main.py`` makes one); it also names the functions the two convert to different code.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from xlac.convert import rewrite  # noqa: E402
from xlac.convert.analysis import namespace_resolver  # noqa: E402
from xlac.convert.source import definition_of  # noqa: E402

MODULES = ["tests.numpy_kernels", "benchmarks.as_written_kernels", "benchmarks.numpy_loops",
           "benchmarks.numpy_extents", "tests.gpt_numpy", "tests.numpy_llama"]


def user_functions() -> list:
    """Every function (and method) defined in the modules of ``MODULES``."""
    functions = []
    for name in MODULES:
        module = importlib.import_module(name)
        for _, member in inspect.getmembers(module):
            members = [member] + [m for _, m in inspect.getmembers(member, inspect.isfunction)] \
                if inspect.isclass(member) else [member]
            functions += [f for f in members if inspect.isfunction(f) and f.__module__ == name]
    return list(dict.fromkeys(functions))


def convert_all(convert_function, functions) -> tuple[float, list[str]]:
    """CPU seconds ``convert_function`` takes over fresh copies of the functions' defs, and what it made."""
    definitions = [(definition_of(f), namespace_resolver(f)) for f in functions]
    start = time.process_time()
    converted = [convert_function(d, resolve) for d, resolve in definitions]
    seconds = time.process_time() - start
    return seconds, [ast.unparse(c) for c in converted]


def load_rewrite(path: str):
    spec = importlib.util.spec_from_file_location("rewrite_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", help="another version of xlac/convert/rewrite.py to time against")
    args = parser.parse_args()
    functions = user_functions()
    versions = {"this tree": rewrite.convert_function}
    if args.before:
        versions["before"] = load_rewrite(args.before).convert_function
    best = {name: float("inf") for name in versions}
    outputs = {}
    for _ in range(args.rounds):
        for name, convert_function in versions.items():
            seconds, outputs[name] = convert_all(convert_function, functions)
            best[name] = min(best[name], seconds)
    print(f"{len(functions)} functions, best of {args.rounds} rounds")
    for name, seconds in best.items():
        print(f"  {name:>10}: {seconds * 1e3:8.1f} ms  ({seconds / len(functions) * 1e3:.2f} ms per function)")
    if args.before:
        print(f"  this tree / before: {best['this tree'] / best['before']:.2f}")
        differing = [f.__qualname__ for f, a, b in zip(functions, outputs["this tree"], outputs["before"]) if a != b]
        print(f"  converted differently: {', '.join(differing) or 'none'}")


if __name__ == "__main__":
    main()
