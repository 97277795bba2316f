"""Front-end time on a model with many ops: the 12-layer GPT-2 forward of tests/gpt_numpy.py (d_model 64,
32 tokens, 4 heads), xlac's trace + passes + lowering against ``jax.jit(f).trace(...).lower()`` of the same
model written with jax.numpy, in one run.

Run: python benchmarks/front_end.py [--rounds N] [--profile]

Each round builds a fresh function object for both (so neither JAX's tracing cache nor xlac's compile cache
applies) and runs a full garbage collection first (so that one's collection does not land in the other's
time); the two alternate, and the best round of each is reported. xlac's source converter caches its
conversion per code object, so after the first round xlac traces converted code without converting it
again; the first round (converter cold, and both libraries' first use) is shown apart. ``--profile`` prints
cProfile's view of one xlac front-end run, by own time and by cumulative time.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import xlac  # noqa: E402
from tests import gpt_numpy  # noqa: E402

LAYERS, N_HEAD = 12, 4


def jax_model():
    """tests/gpt_numpy.py with ``np`` bound to jax.numpy; ``gpt2`` indexes the position table with
    ``jnp.arange`` (JAX does not take a ``range`` as an index), otherwise the same code."""
    namespace = types.ModuleType("gpt_jax").__dict__
    exec(compile(Path(gpt_numpy.__file__).read_text(), gpt_numpy.__file__, "exec"), namespace)
    namespace["np"] = jnp

    def gpt2(inputs, wte, wpe, blocks, ln_f, n_head):
        x = wte[inputs] + wpe[jnp.arange(len(inputs))]
        for block in blocks:
            x = namespace["transformer_block"](x, **block, n_head=n_head)
        return namespace["layer_norm"](x, **ln_f) @ wte.T
    return gpt2


def xlac_front(inputs, params):
    """Trace, passes and lowering of a fresh function object; the Traced's per-stage seconds."""
    traced = xlac.compile(lambda i, p: gpt_numpy.gpt2(i, **p, n_head=N_HEAD)).trace(inputs, params)
    traced.lower()
    return traced


def jax_front(gpt2, inputs, params):
    return jax.jit(lambda i, p: gpt2(i, **p, n_head=N_HEAD)).trace(inputs, params).lower()


def timed(fn) -> tuple[float, float, object]:
    """Wall-clock and CPU seconds of ``fn()`` (CPU time counts this process only: steadier on a shared machine)."""
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    params = gpt_numpy.init_params(rng, n_vocab=64, n_ctx=32, n_embd=64, n_layer=LAYERS)
    inputs = rng.integers(0, 64, size=32)
    gpt2_jax = jax_model()

    first_xlac, _, traced = timed(lambda: xlac_front(inputs, params))
    first_jax, _, _ = timed(lambda: jax_front(gpt2_jax, inputs, params))
    print(f"12-layer GPT-2: {len(traced.graph.nodes)} ops traced, {len(traced.ir('final').nodes)} after the "
          f"passes; first round (converter cold): xlac {first_xlac * 1e3:.0f} ms, jax {first_jax * 1e3:.0f} ms")
    if options.profile:
        profile = cProfile.Profile()
        profile.runcall(xlac_front, inputs, params)
        for order in ("tottime", "cumulative"):
            pstats.Stats(profile).strip_dirs().sort_stats(order).print_stats(25)
        return

    best_xlac = best_jax = cpu_xlac = cpu_jax = float("inf")
    stages = {}
    for _ in range(options.rounds):
        t_xlac, cpu, traced = timed(lambda: xlac_front(inputs, params))
        cpu_xlac = min(cpu_xlac, cpu)
        if t_xlac < best_xlac:
            best_xlac, stages = t_xlac, traced.timings
        t_jax, cpu, _ = timed(lambda: jax_front(gpt2_jax, inputs, params))
        best_jax, cpu_jax = min(best_jax, t_jax), min(cpu_jax, cpu)
    passes = sum(s for name, s in stages.items() if name not in ("trace", "lower"))
    print(f"best of {options.rounds}: xlac {best_xlac * 1e3:.1f} ms (trace {stages['trace'] * 1e3:.1f}, passes "
          f"{passes * 1e3:.1f}, lowering {stages['lower'] * 1e3:.1f}), jax {best_jax * 1e3:.1f} ms, "
          f"ratio xlac/jax {best_xlac / best_jax:.2f}; CPU time: xlac {cpu_xlac * 1e3:.1f} ms, jax "
          f"{cpu_jax * 1e3:.1f} ms, ratio {cpu_xlac / cpu_jax:.2f}")


if __name__ == "__main__":
    main()
