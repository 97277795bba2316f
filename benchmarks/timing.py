"""Timing shared by the benchmarks: two callables measured in alternating rounds, best of each."""
from __future__ import annotations

import timeit


def interleaved(call_a, call_b, number: int, rounds: int = 7) -> tuple[float, float]:
    """Best seconds per call of ``call_a`` and ``call_b``, measured in alternating rounds so that both see
    the same machine load (these machines are shared and noisy)."""
    call_a(), call_b()
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, timeit.timeit(call_a, number=number))
        best_b = min(best_b, timeit.timeit(call_b, number=number))
    return best_a / number, best_b / number
