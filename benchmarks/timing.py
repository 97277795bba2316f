"""Timing shared by the benchmarks: two callables measured in alternating rounds, best of each."""
from __future__ import annotations

import timeit


def interleaved(call_a, call_b, number: int, rounds: int = 7, timer=timeit.default_timer) -> tuple[float, float]:
    """Best seconds per call of ``call_a`` and ``call_b``, measured in alternating rounds so that both see
    the same machine load (these machines are shared and noisy). ``timer``: wall-clock by default;
    ``time.process_time`` counts only this process's CPU time (all its threads), which other jobs on a
    loaded machine disturb far less."""
    call_a(), call_b()
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, timeit.timeit(call_a, number=number, timer=timer))
        best_b = min(best_b, timeit.timeit(call_b, number=number, timer=timer))
    return best_a / number, best_b / number
