"""The persistent compilation cache across processes: two fresh processes run the same program, a 12-layer
GPT-2 forward pass written in NumPy (tests/gpt_numpy.py), with one XLAC_CACHE_DIR; the first compiles and
writes the cache, the second should load the executable. Prints each process's first-call time (trace,
passes, lowering, XLA compile or cache load, and the run), what the compile log said about the persistent
cache, how many entries each process wrote, and the ratio second / first (goal: under 0.5).

Run: python benchmarks/persistent_cache.py [--layers 12] [--cache-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(layers: int) -> None:
    """One process: compile and call the model once; print a JSON line with what happened."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import xlac
    from tests import gpt_numpy

    rng = np.random.default_rng(0)
    params = gpt_numpy.init_params(rng, n_vocab=64, n_ctx=32, n_embd=64, n_layer=layers)
    inputs = rng.integers(0, 64, size=32)
    folder = xlac.config.cache_dir
    before = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    model = xlac.compile(gpt_numpy.gpt2, static_argnames="n_head")
    start = time.perf_counter()
    out = np.asarray(model(inputs, **params, n_head=4))
    first_call = time.perf_counter() - start
    expected = gpt_numpy.gpt2(inputs, **params, n_head=4)
    after = set(os.listdir(folder))
    print(json.dumps({"first_call_s": first_call, "written": len(after - before),
                      "right": bool(np.allclose(out, expected, rtol=1e-4, atol=1e-4))}))


def run_child(layers: int, cache_dir: str) -> dict:
    env = {**os.environ, "XLAC_CACHE_DIR": cache_dir, "XLAC_LOG_COMPILES": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, __file__, "--child", "--layers", str(layers)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child process failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # The compile log's lines, from "because" on (the signature of 12 layers' weights is long).
    result["log"] = ["because " + line.split(" because ", 1)[1] for line in done.stderr.splitlines()
                     if line.startswith("xlac: compiled") and "; persistent cache " in line]
    result["notice"] = [line for line in done.stderr.splitlines() if line.startswith("xlac: compil")
                        and "; persistent cache " not in line]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--cache-dir", default=None, help="default: a new temporary folder")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.layers)
        return
    cache_dir = options.cache_dir or tempfile.mkdtemp(prefix="xlac-cache-")
    print(f"GPT-2 forward, {options.layers} layers, cache {cache_dir}")
    results = [run_child(options.layers, cache_dir) for _ in range(2)]
    for name, result in zip(("first process", "second process"), results):
        status = result["log"][0].split("; persistent cache ")[1].split(" in ")[0] if result["log"] else "?"
        print(f"{name:15s} first call {result['first_call_s']:6.2f} s, persistent cache {status}, "
              f"entries written {result['written']}, equal to NumPy {result['right']}")
        for line in result["notice"] + result["log"]:
            print(f"    {line}")
    print(f"ratio second / first: {results[1]['first_call_s'] / results[0]['first_call_s']:.2f} (goal < 0.5)")


if __name__ == "__main__":
    main()
