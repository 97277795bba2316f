"""Differentiation: compiled value_and_grad of the transformer block and jacrev of a 256 -> 256 function.

Run: python benchmarks/grad.py [--seq 64] [--d-model 128] [--n 256] [--number 20]
xlac: ``xlac.compile(xlac.value_and_grad(loss))`` and ``xlac.compile(xlac.jacrev(f))``; peer, in the same
run: ``jax.jit(jax.value_and_grad(loss))`` and ``jax.jit(jax.jacrev(f))`` of the same math.
Printed: time per call of each (interleaved timer), the run-time ratio xlac / JAX (goal 1.0), and the
trace-to-executable time of the first call of each (goal: xlac no slower than JAX).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.models import make_transformer_block, transformer_params  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
from xlac.differentiate import jacrev, value_and_grad  # noqa: E402

N_HEADS = 4


def first_call_seconds(fn, *args) -> float:
    """Seconds from the first call (trace, passes, lowering, XLA compile) to a ready result."""
    start = time.perf_counter()
    out = fn(*args)
    _ready(out)
    return time.perf_counter() - start


def _ready(out):
    """Wait for every result (both libraries may return before the computation ends)."""
    return jax.tree_util.tree_map(np.asarray, out)


def report(name, ours, theirs, args, number):
    compile_ours, compile_theirs = first_call_seconds(ours, *args), first_call_seconds(theirs, *args)
    t_ours, t_theirs = interleaved(lambda: _ready(ours(*args)), lambda: _ready(theirs(*args)), number)
    print(f"{name}: xlac {t_ours * 1e3:.3f} ms, jax {t_theirs * 1e3:.3f} ms, ratio {t_ours / t_theirs:.2f}; "
          f"trace-to-executable xlac {compile_ours * 1e3:.0f} ms, jax {compile_theirs * 1e3:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--number", type=int, default=20)
    a = parser.parse_args()
    rng = np.random.default_rng(0)
    x, params = transformer_params(rng, seq=a.seq, d_model=a.d_model)
    block, jblock = make_transformer_block(xnp, N_HEADS), make_transformer_block(jnp, N_HEADS)
    ours = xlac.compile(value_and_grad(lambda p, x: xnp.mean(block(x, p) ** 2)))
    theirs = jax.jit(jax.value_and_grad(lambda p, x: jnp.mean(jblock(x, p) ** 2)))
    report(f"value_and_grad transformer block (seq {a.seq}, d_model {a.d_model})", ours, theirs, (params, x),
           a.number)

    w = (rng.standard_normal((a.n, a.n)) / np.sqrt(a.n)).astype(np.float32)
    v = rng.standard_normal(a.n).astype(np.float32)
    ours = xlac.compile(jacrev(lambda v, w: xnp.tanh(w @ xnp.sin(v)) * v))
    theirs = jax.jit(jax.jacrev(lambda v, w: jnp.tanh(w @ jnp.sin(v)) * v))
    report(f"jacrev {a.n} -> {a.n}", ours, theirs, (v, w), a.number)


if __name__ == "__main__":
    main()
