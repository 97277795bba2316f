"""Differential fuzzing at scale: N random NumPy programs against xlac.compile, eager xlac.Array and xlac.numpy.

Run: python benchmarks/fuzz.py --programs 2000 --seed 0 [--include-known]
     python benchmarks/fuzz.py --loops --programs 300 --seed 0
Prints the pass rate per mode (over the programs xlac supports in that mode, and over all), then the failures
grouped by mode, kind and (for issue 31's forms) the family at fault, each group with its count and a minimal
reproducer (statements removed while it still fails the same way). ``--include-known`` also generates the
statement families listed in ``tests/fuzz/program.py``'s BEING_FIXED and OPEN, and prints how the compiled
runs of the programs of each of issue 31's families (``tests/fuzz/as_written.py``) went (with ``--loops``:
loop bodies hold their statements too).

``--loops`` runs programs with ``for i in range(n)`` loops and ``if``s on traced tests instead
(``loop_programs``), compiled with ``loops="roll"``, ``loops="unroll"`` and with each loop written as
``xlac.fori_loop``; it prints per mode how many matched NumPy, how many were refused with a documented error
(and which), how many mismatched (with their seeds), and how many loops the "roll" runs rolled.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
import warnings

# The repository root without "..": xlac tells its own frames from the user's by their path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz import compare  # noqa: E402
from tests.fuzz.compare import LOOP_MODES, MODES, _kind, check_program, shrink  # noqa: E402
from tests.fuzz.as_written import FAMILIES  # noqa: E402
from tests.fuzz.program import BEING_FIXED, OPEN, loop_programs, programs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--include-known", action="store_true", help="also generate BEING_FIXED and OPEN families")
    parser.add_argument("--ulps", type=int, default=compare.ULPS_PER_STATEMENT,
                        help="float tolerance: ulps of the result's dtype per statement")
    parser.add_argument("--reproducers", type=int, default=1, help="reproducers shown per failure group")
    parser.add_argument("--loops", action="store_true",
                        help="programs with loops and branches, compiled rolled, unrolled and as fori_loop")
    options = parser.parse_args()
    compare.ULPS_PER_STATEMENT = options.ulps
    if options.loops:
        run_loops(options)
        return
    exclude = frozenset() if options.include_known else frozenset(BEING_FIXED) | frozenset(OPEN)
    counts = collections.Counter()
    groups = collections.defaultdict(list)
    unsupported_reasons = collections.Counter()
    families = collections.Counter()
    started = time.perf_counter()

    @seed(options.seed)
    @settings(max_examples=options.programs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(exclude=exclude))
    def run(program):
        counts["programs"] += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes = check_program(program)
        for family in program.tags & set(FAMILIES):
            families[family, "programs"] += 1
            families[family, outcomes[0].status] += 1
        for outcome in outcomes:
            counts[outcome.mode, outcome.status] += 1
            if outcome.status == "unsupported":
                unsupported_reasons[outcome.mode, re.sub(r"\w+\[[\d,]*\]", "T", outcome.reason)[:90]] += 1
            if outcome.status == "fail":
                groups[outcome.mode, _kind(outcome.reason), outcome.families].append((program, outcome))

    run()
    print(f"{counts['programs']} programs, {_run_description(options, started)}")
    for mode in MODES:
        passed, failed, unsupported = (counts[mode, s] for s in ("pass", "fail", "unsupported"))
        supported = passed + failed
        print(f"  {mode:9s} pass {passed}/{supported} supported = {100 * passed / max(supported, 1):.1f}%"
              f"  (unsupported {unsupported}, of all {100 * passed / max(supported + unsupported, 1):.1f}%)")
    if any(families.values()):
        print("\nissue 31's families (tests/fuzz/as_written.py), compiled:")
        for family in FAMILIES:
            print(f"  {family:25s} {families[family, 'programs']:5d} programs: pass {families[family, 'pass']}, "
                  f"fail {families[family, 'fail']}, unsupported {families[family, 'unsupported']}")
    print("\nmost frequent unsupported reasons:")
    for (mode, reason), count in unsupported_reasons.most_common(12):
        print(f"  {mode:9s} {count:5d}  {reason}")
    for (mode, kind, families_at_fault), cases in sorted(groups.items(), key=lambda item: -len(item[1])):
        print(f"\n== {mode}: {kind} ({len(cases)} programs)" + (f", {families_at_fault}" if families_at_fault else ""))
        for program, outcome in sorted(cases, key=lambda c: len(c[0].statements))[:options.reproducers]:
            small = shrink(program, mode, outcome.reason)
            small_outcome = check_program(small, (mode,))[0]
            print(f"-- {small_outcome.reason or outcome.reason}\n# inputs: seed {small.seed}, "
                  f"args {[(n, s, d) for n, s, d in small.args]}, called as {small.call_source()}\n"
                  f"{small.source()}")


def _run_description(options, started: float) -> str:
    families = "all families" if options.include_known else "known-bug families left out"
    return (f"seed {options.seed}, {families}, {options.ulps} ulps per statement, "
            f"{time.perf_counter() - started:.0f} s")


def run_loops(options) -> None:
    """``--loops``: loop programs in LOOP_MODES; matched, refused (documented) and mismatched per mode."""
    import numpy as np
    import xlac
    counts = collections.Counter()
    refusals = collections.Counter()
    decisions = collections.Counter()
    failures = collections.defaultdict(list)
    started = time.perf_counter()

    @seed(options.seed)
    @settings(max_examples=options.programs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(loop_programs(exclude=frozenset() if options.include_known else frozenset(BEING_FIXED) | frozenset(OPEN)))
    def run(program):
        counts["programs"] += 1
        counts["loops"] += sum("for_loop" in s.tags for s in program.statements)
        counts["branches"] += sum(len(re.findall(r"\bif (?!\d)", s.code)) for s in program.statements
                                  if "traced_branch" in s.tags)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes = check_program(program, LOOP_MODES)
            for outcome in outcomes:
                counts[outcome.mode, outcome.status] += 1
                if outcome.status == "unsupported" and outcome.reason.startswith("a loop has no fori_loop"):
                    counts[outcome.mode, "no form"] += 1
                elif outcome.status == "unsupported":
                    reason = re.sub(r"<fuzz program \w+>:\d+", "<fuzz program>", outcome.reason)
                    refusals[outcome.mode, reason[:110]] += 1
                if outcome.status == "fail":
                    failures[outcome.mode].append((program, outcome))
            if outcomes[0].status == "pass":
                traced = xlac.compile(program.function(np), loops="roll").trace(*program.inputs())
                decisions.update(d.decision for d in traced.loop_decisions)

    run()
    print(f"{counts['programs']} loop programs ({counts['loops']} for loops, {counts['branches']} ifs on traced "
          f"tests), {_run_description(options, started)}")
    for mode in LOOP_MODES:
        passed, failed, unsupported = (counts[mode, s] for s in ("pass", "fail", "unsupported"))
        seeds = sorted({program.seed for program, _ in failures[mode]})
        skipped = counts[mode, "no form"]
        print(f"  {mode:7s} matched {passed}, refused (documented) {unsupported - skipped}, mismatched {failed}"
              + (f" (seeds {seeds})" if seeds else "")
              + (f"; not run: {skipped} without a fori_loop form (a carry changes type)" if skipped else ""))
    print(f"  loops of the programs 'roll' ran: {decisions['rolled']} rolled, {decisions['unrolled']} unrolled "
          "(fewer than 2 iterations)")
    print("\nrefusals:")
    for (mode, reason), count in refusals.most_common(12):
        print(f"  {mode:7s} {count:5d}  {reason}")
    for mode, cases in failures.items():
        for program, outcome in sorted(cases, key=lambda c: len(c[0].source()))[:options.reproducers]:
            families = f" ({outcome.families})" if outcome.families else ""
            print(f"\n== {mode}: {outcome.reason}{families}\n# inputs: seed {program.seed}, args {list(program.args)}\n"
                  f"{program.source(fori=mode == 'fori')}\n{outcome.detail}")


if __name__ == "__main__":
    main()
