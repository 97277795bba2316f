"""Timing shared by the benchmarks: callables measured in alternating rounds, best of each."""
from __future__ import annotations

import timeit


def interleaved(call_a, call_b, number: int, rounds: int = 7, timer=timeit.default_timer) -> tuple[float, float]:
    """Best seconds per call of ``call_a`` and ``call_b``, measured in alternating rounds so that both see
    the same machine load (these machines are shared and noisy). ``timer``: wall-clock by default;
    ``time.process_time`` counts only this process's CPU time (all its threads), which other jobs on a
    loaded machine disturb far less."""
    best_a, best_b = interleaved_all([call_a, call_b], number, rounds, timer)
    return best_a, best_b


def interleaved_all(calls: list, number: int, rounds: int = 7, timer=timeit.default_timer) -> list[float]:
    """Best seconds per call of each of ``calls``, measured in rounds that run each in turn."""
    for call in calls:
        call()
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            best[i] = min(best[i], timeit.timeit(call, number=number, timer=timer))
    return [seconds / number for seconds in best]
