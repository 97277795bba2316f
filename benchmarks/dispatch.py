"""Cost of one cached call of a small compiled function: xlac against jax.jit, measured in one run.

Run: python benchmarks/dispatch.py
Prints microseconds per call and the ratio xlac / jax.jit for device-array inputs, NumPy inputs, a pytree and
a static argument;
then, for a function that writes to its first argument (whose call path checks that no written argument
shares memory with another, see xlac/shared_arguments.py), the call with that check against the same call
with it switched off, and a call passing one array twice (the variant compiled for it) against two arrays.
``--cpu``: CPU time of this process (all its threads) instead of wall-clock time, for a loaded machine.
"""
from __future__ import annotations

import functools
import sys
import time
import timeit
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from xlac import runners, shared_arguments  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402


def xlac_fn(x, y):
    return xnp.tanh(x * y + 1.0)


def jax_fn(x, y):
    return jnp.tanh(x * y + 1.0)


def tree_fn(x, params):
    return x * params["a"] + params["h"]


def static_fn(x, n):
    for _ in range(n):
        x = x * 0.5 + 1.0
    return x


def accumulate(x, y):
    x += xnp.tanh(y)


def _with_sharing_check(check, call):
    """``call`` with the call path's sharing check set to ``check`` (the same work either way)."""
    def run():
        runners.sharing_of = check
        return call()
    return run


def _no_sharing(leaves, written, paths):
    return None


def sharing_check_rows(number: int) -> None:
    """The sharing check on the call path of a writing function: on against off, and one array twice."""
    x_np, y_np = np.zeros((8, 8), np.float32), np.ones((8, 8), np.float32)
    x_dev, y_dev = xlac.asarray(x_np), xlac.asarray(y_np)
    compiled = xlac.compile(accumulate)
    on, off = shared_arguments.sharing_of, _no_sharing
    rows = [
        ("device arrays: check on / off", _with_sharing_check(on, lambda: compiled(x_dev, y_dev)),
         _with_sharing_check(off, lambda: compiled(x_dev, y_dev))),
        ("NumPy arrays: check on / off", _with_sharing_check(on, lambda: compiled(x_np, y_np)),
         _with_sharing_check(off, lambda: compiled(x_np, y_np))),
        ("NumPy: one array twice / two arrays", lambda: compiled(x_np, x_np), lambda: compiled(x_np, y_np)),
        ("device: one array twice / two arrays", lambda: compiled(x_dev, x_dev), lambda: compiled(x_dev, y_dev)),
    ]
    print(f"\nwriting function (x += tanh(y), 8x8 float32)")
    print(f"{'call':42s} {'first us':>9s} {'second us':>10s} {'ratio':>7s}")
    for name, first, second in rows:
        try:
            t_first, t_second = (1e6 * t for t in interleaved(first, second, number))
        finally:
            runners.sharing_of = on
        print(f"{name:42s} {t_first:9.1f} {t_second:10.1f} {t_first / t_second:7.2f}")
    for name, leaves in [("device", [x_dev, y_dev]), ("NumPy", [x_np, y_np])]:
        alone = min(timeit.repeat(lambda: on(leaves, {0}, ["x", "y"]), number=number, repeat=7)) / number
        print(f"the check alone, two {name} arrays: {1e6 * alone:.2f} us")


def main(number: int = 2000) -> None:
    x_np = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    y_np = np.float32(0.5) * np.ones((8, 8), np.float32)
    compiled = xlac.compile(xlac_fn)
    jitted = jax.jit(jax_fn)
    x_dev, y_dev = xlac.asarray(x_np), xlac.asarray(y_np)
    xj, yj = jax.device_put(x_np), jax.device_put(y_np)
    np.testing.assert_allclose(np.asarray(compiled(x_np, y_np)), np.asarray(jitted(x_np, y_np)), rtol=1e-6)

    compiled_tree, jitted_tree = xlac.compile(tree_fn), jax.jit(tree_fn)
    compiled_static, jitted_static = xlac.compile(static_fn, static_argnums=1), jax.jit(static_fn, static_argnums=1)
    params_dev = {k: xlac.asarray(y_np) for k in "abcdefgh"}
    params_jax = {k: jax.device_put(y_np) for k in "abcdefgh"}
    rows = [
        ("device arrays (xlac.Array / jax.Array)", lambda: compiled(x_dev, y_dev), lambda: jitted(xj, yj)),
        ("NumPy arrays", lambda: compiled(x_np, y_np), lambda: jitted(x_np, y_np)),
        ("pytree: array + dict of 8 device arrays", lambda: compiled_tree(x_dev, params_dev),
         lambda: jitted_tree(xj, params_jax)),
        ("device array + static int (static_argnums)", lambda: compiled_static(x_dev, 3),
         lambda: jitted_static(xj, 3)),
    ]
    print(f"{'inputs':42s} {'xlac us':>9s} {'jax.jit us':>11s} {'ratio':>7s}")
    for name, xlac_call, jax_call in rows:
        t_xlac, t_jax = (1e6 * t for t in interleaved(xlac_call, jax_call, number))
        print(f"{name:42s} {t_xlac:9.1f} {t_jax:11.1f} {t_xlac / t_jax:7.2f}")
    sharing_check_rows(number)


if __name__ == "__main__":
    if "--cpu" in sys.argv[1:]:
        interleaved = functools.partial(interleaved, timer=time.process_time)
    main()
