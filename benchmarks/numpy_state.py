"""NumPy programs as written: a Llama-style decoder (tests/numpy_llama.py, weights and KV caches as NumPy
attributes) compiled unmodified, against NumPy running it, measured in one run.

Run: python benchmarks/numpy_state.py [--dim 256 --layers 4]
Cases (time per greedy decode step, batch 1, after a 16-token prefill):
- NumPy: the model itself;
- xlac, NumPy state: ``xlac.compile(model)``: the weights and caches stay NumPy arrays, read at every call
  and the caches written back after it (a transfer of every weight each step);
- xlac, after ``xlac.to_device(model)``: the same code, weights and caches resident on the device, the
  caches written in place.
Also the time to trace (the converted source run on tracers) and to compile a decode step, and the
time the converter takes to convert the model's functions (once per code object; cached after).
"""
from __future__ import annotations

import argparse
import copy
import inspect
import sys
import types
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
import tests.numpy_llama as llama_module  # noqa: E402
from tests.numpy_llama import Llama  # noqa: E402

PROMPT = 16


def decode_step(step, model_position):
    token = np.array([[3]])
    return lambda: np.asarray(step(token, model_position))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    make = lambda: Llama(seed=0, vocab=512, dim=args.dim, n_layers=args.layers, n_heads=8, n_kv_heads=4,  # noqa
                         hidden=4 * args.dim, max_batch=1, max_seq_len=64)
    prompt = np.arange(PROMPT)[None] % 512
    numpy_model, state_model, device_model = make(), make(), xlac.to_device(make())
    weights = sum(a.nbytes for a in _arrays(numpy_model))
    print(f"model: dim {args.dim}, {args.layers} layers, {weights / 2**20:.1f} MiB of float64 weights and caches")

    state_step = xlac.compile(state_model, static_argnums=1)
    device_step = xlac.compile(device_model, static_argnums=1)
    for step in (numpy_model, state_step, device_step):
        step(prompt, 0)

    numpy_call = decode_step(numpy_model, PROMPT)
    for name, step in (("NumPy state", state_step), ("to_device", device_step)):
        xlac_time, numpy_time = interleaved(decode_step(step, PROMPT), numpy_call, number=20)
        print(f"decode step, xlac with {name:11s}: {xlac_time * 1e3:8.3f} ms   NumPy {numpy_time * 1e3:8.3f} ms   "
              f"ratio xlac/NumPy {xlac_time / numpy_time:5.2f}")

    start = time.perf_counter()
    traced = xlac.compile(copy.deepcopy(numpy_model), static_argnums=1).trace(np.array([[3]]), PROMPT + 1)
    traced.lower().compile()
    print(f"decode step: trace {traced.timings['trace']:6.3f} s, trace to executable "
          f"{time.perf_counter() - start:6.3f} s")
    functions = [f for cls in _classes(numpy_model) for f in vars(cls).values() if inspect.isfunction(f)]
    functions += [f for f in vars(llama_module).values() if inspect.isfunction(f)]
    start = time.perf_counter()
    for f in functions:
        _convert_uncached(f)
    print(f"converting the model's {len(functions)} functions: {time.perf_counter() - start:6.3f} s")


def _classes(obj):
    return {type(o) for o in [obj, *obj.layers, *[v for layer in obj.layers for v in vars(layer).values()]]}


def _convert_uncached(fn):
    """Convert a copy of ``fn`` whose code object is new (the cache is keyed by code objects, which compare
    by content: one more constant makes it another)."""
    code = fn.__code__.replace(co_consts=fn.__code__.co_consts + ("uncached",))
    copy_of = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    return xlac.convert.converted(copy_of)


def _arrays(obj, seen=None):
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, list):
        for item in obj:
            yield from _arrays(item, seen)
    elif hasattr(obj, "__dict__"):
        for item in vars(obj).values():
            yield from _arrays(item, seen)


if __name__ == "__main__":
    main()
