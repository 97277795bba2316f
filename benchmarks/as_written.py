"""Issue 33's benchmark: NumPy kernels as scientists write them, compiled unmodified with xlac, against
NumPy running them and against the same algorithm written by hand in ``jax.lax``, in one run.

Run: python benchmarks/as_written.py [--kernels NAME,...] [--quick] [--resident]

The kernels: those of ``benchmarks/numpy_loops.py`` and ``benchmarks/numpy_extents.py`` (imported with
their ``jax.lax`` ports) and those of ``benchmarks/as_written_kernels.py`` (fixed windows, a CRC bit loop,
Levinson-Durbin, stencil time loops, Gauss-Seidel, sigma clipping, independent rows, an attention decode
step). Everything is float64 / int64 (``jax_enable_x64``), as NumPy computes.

Per kernel, before timing: xlac's result, NumPy's and the lax port's must agree (arrays an in-place kernel
writes count as results); a kernel that fails to compile or disagrees is reported and left out of the
timing. Then the three run in interleaved rounds (best of each; see ``benchmarks/timing.py``), each call
on fresh copies of the arguments the kernel writes unless calling it again on its own output changes
nothing. Columns: xlac's compile time (its first call less a call), the lax port's, the run time of each
peer, and the speed of xlac against NumPy and against the lax port (time of the peer / time of xlac: above
1 is xlac faster). The last lines: geometric means, kernels slower than NumPy, compiles over 5 s.
``--kernels`` runs the kernels whose name contains one of the comma-separated words; ``--quick`` measures
in two short rounds (a smoke run). ``--resident`` adds two columns: xlac and the lax port called with their
arguments already on the device (``xlac.asarray`` / ``jax.device_put``, once, outside the timing), for the
kernels that can be called again on their own output; it separates the computation from copying NumPy
arguments in, which XLA on CPU does on every call for an array not at a 64-byte aligned address (most large
NumPy arrays).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
from benchmarks import as_written_kernels as kernels  # noqa: E402
from benchmarks import numpy_extents, numpy_loops  # noqa: E402
from benchmarks.timing import interleaved_all  # noqa: E402

jax.config.update("jax_enable_x64", True)

COMPILE_GOAL_S = 5.0


@dataclass
class Case:
    """One kernel: its NumPy source, its lax port, the arguments and which of them are static."""

    name: str
    kernel: object
    kernel_jax: object
    args: tuple
    static: tuple = ()


def cases() -> list[Case]:
    """Every kernel of the suite, at the sizes it is measured at."""
    rng = np.random.default_rng(33)
    imported = [Case(*case) for case in numpy_loops.cases() + numpy_extents.cases()]
    signal = np.convolve(rng.normal(size=4200), np.ones(8) / 8, mode="valid")[:4096]
    autocorrelation = np.correlate(signal, signal, mode="full")[signal.size - 1:][:257] / signal.size
    model, heads, head_dim, context = 512, 8, 64, 1024
    decode = (rng.normal(size=model), *(rng.normal(size=(model, model)) / np.sqrt(model) for _ in range(4)),
              rng.normal(size=(context, heads, head_dim)), rng.normal(size=(context, heads, head_dim)), 700)
    samples = np.concatenate([rng.normal(size=100_000), rng.normal(8.0, 1.0, size=2_000)])
    return imported + [
        Case("conv 8x16x16x16, 3x3x16x32", kernels.conv, kernels.conv_jax,
             (rng.normal(size=(8, 16, 16, 16)), rng.normal(size=(3, 3, 16, 32)))),
        Case("CRC-16/ARC of 2000 bytes", kernels.crc16_arc, kernels.crc16_arc_jax,
             (rng.integers(0, 256, size=2000).astype(np.uint8),)),
        Case("exponential smoothing 10000", kernels.exponential_smoothing, kernels.exponential_smoothing_jax,
             (rng.normal(size=10_000), 0.1)),
        Case("Levinson-Durbin, order 256", kernels.levinson_durbin, kernels.levinson_durbin_jax,
             (autocorrelation,)),
        Case("Jacobi 1-D 2000, 500 steps", kernels.jacobi_1d, kernels.jacobi_1d_jax,
             (rng.random(2000), rng.random(2000), 500), (2,)),
        Case("heat 3-D 40^3, 100 steps", kernels.heat_3d, kernels.heat_3d_jax,
             (rng.random((40, 40, 40)), rng.random((40, 40, 40)), 100), (2,)),
        Case("Gauss-Seidel 2-D 40^2, 20 steps", kernels.gauss_seidel_2d, kernels.gauss_seidel_2d_jax,
             (rng.random((40, 40)), 20), (1,)),
        Case("sigma clipping 102k, 5 rounds", kernels.sigma_clipped_mean, kernels.sigma_clipped_mean_jax,
             (samples, 5, 3.0), (1,)),
        Case("Gram rows g[i, i:] 500x300", kernels.gram_upper, kernels.gram_upper_jax,
             (rng.normal(size=(500, 300)),)),
        Case("attention decode step, 1024 ctx", kernels.attention_decode_step, kernels.attention_decode_step_jax,
             decode),
    ]


# ---------------------------------------------------------------- results and arguments


def _leaves(result) -> list[np.ndarray]:
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [np.array(result)]


def _on_host(result):
    return [np.asarray(r) for r in result] if isinstance(result, tuple) else np.asarray(result)


def _fresh(args: tuple, written: list[int]) -> tuple:
    return tuple(a.copy() if i in written else a for i, a in enumerate(args))


@dataclass
class Expected:
    """What NumPy computes: the result's leaves and the arguments the kernel writes (positions)."""

    leaves: list
    written: list
    needs_fresh_arguments: bool


def _expected(case: Case) -> Expected:
    arrays = [i for i, a in enumerate(case.args) if isinstance(a, np.ndarray)]
    args = _fresh(case.args, arrays)
    result = case.kernel(*args)
    written = [i for i in arrays if not np.array_equal(args[i], case.args[i])]
    # The arrays written that the kernel does not return are results too (a cache written in place).
    returned = {id(r) for r in (result if isinstance(result, tuple) else (result,))}
    leaves = _leaves(result) + [np.array(args[i]) for i in written if id(args[i]) not in returned]
    again = _leaves(case.kernel(*args)) + [np.array(args[i]) for i in written if id(args[i]) not in returned]
    changes = any(not np.array_equal(a, b) for a, b in zip(leaves, again))
    return Expected(leaves, written, changes)


def _disagreement(expected: list, got: list) -> str | None:
    """None where ``got`` matches NumPy's leaves, else what differs."""
    if len(expected) != len(got):
        return f"{len(got)} results, NumPy {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if e.shape != g.shape:
            return f"result {i}: shape {g.shape}, NumPy {e.shape}"
        if not np.allclose(g, e, rtol=1e-6, atol=1e-9, equal_nan=True):
            return f"result {i}: max abs difference {np.max(np.abs(g.astype(float) - e)):.3g}"
    return None


# ---------------------------------------------------------------- one kernel


@dataclass
class Row:
    name: str
    note: str = ""
    xlac_compile: float = float("nan")
    jax_compile: float = float("nan")
    xlac: float = float("nan")
    numpy: float = float("nan")
    jax: float = float("nan")
    xlac_resident: float = float("nan")
    jax_resident: float = float("nan")


def measure(case: Case, quick: bool, resident: bool = False) -> Row:
    """Check that the three agree, then time them interleaved."""
    expected = _expected(case)
    row = Row(case.name)

    def fresh():
        return _fresh(case.args, expected.written) if expected.needs_fresh_arguments else case.args
    compiled = xlac.compile(case.kernel, static_argnums=case.static)
    jitted = jax.jit(case.kernel_jax, static_argnums=case.static)

    def run_xlac():
        return _on_host(compiled(*fresh()))

    def run_jax():
        return _on_host(jitted(*fresh()))

    def xlac_results(args):
        results = _leaves(compiled(*args))
        return results + [np.array(args[i]) for i in expected.written if len(results) < len(expected.leaves)]

    try:
        start = time.perf_counter()
        xlac_leaves = xlac_results(_fresh(case.args, expected.written))
        row.xlac_compile = time.perf_counter() - start
    except Exception as e:  # noqa: BLE001 - a kernel xlac cannot compile is a row of the table
        row.note = f"xlac failed: {type(e).__name__}: {' '.join(str(e).split())[:150]}"
        return row
    start = time.perf_counter()
    jax_leaves = _leaves(jitted(*fresh()))
    row.jax_compile = time.perf_counter() - start
    for peer, got in (("xlac", xlac_leaves), ("lax port", jax_leaves)):
        problem = _disagreement(expected.leaves, got)
        if problem:
            row.note = f"{peer} differs from NumPy: {problem}"
            return row

    def run_numpy():
        return case.kernel(*fresh())
    once = [min(timeit_once(call) for _ in range(2)) for call in (run_xlac, run_numpy, run_jax)]
    row.xlac_compile = max(row.xlac_compile - once[0], 0.0)
    row.jax_compile = max(row.jax_compile - once[2], 0.0)
    number = max(1, int((0.01 if quick else 0.05) / max(once)))
    calls = [run_xlac, run_numpy, run_jax]
    if resident and not expected.needs_fresh_arguments:
        problem = _add_resident_calls(case, compiled, jitted, expected, calls)
        if problem:
            row.note = problem
            return row
    times = interleaved_all(calls, number, 2 if quick else 5)
    row.xlac, row.numpy, row.jax = times[:3]
    if len(times) == 5:
        row.xlac_resident, row.jax_resident = times[3:]
    return row


def _add_resident_calls(case: Case, compiled, jitted, expected: Expected, calls: list) -> str | None:
    """Append to ``calls`` xlac and the lax port called on device-held arguments; a disagreement with NumPy
    instead, if any."""
    def held(put):
        return tuple(a if i in case.static or not isinstance(a, np.ndarray) else put(a)
                     for i, a in enumerate(case.args))
    on_xlac, on_jax = held(xlac.asarray), held(jax.device_put)
    got = _leaves(compiled(*on_xlac))
    got += [np.array(on_xlac[i]) for i in expected.written if len(got) < len(expected.leaves)]
    problem = _disagreement(expected.leaves, got)
    if problem:
        return f"xlac on device arguments differs from NumPy: {problem}"
    calls.append(lambda: _on_host(compiled(*on_xlac)))
    calls.append(lambda: _on_host(jitted(*on_jax)))
    return None


def timeit_once(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# ---------------------------------------------------------------- the table


def _geomean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def print_row(row: Row, resident: bool) -> None:
    if row.note:
        print(f"{row.name:34s} {row.xlac_compile:9.2f}  {row.note}", flush=True)
        return
    line = (f"{row.name:34s} {row.xlac_compile:9.2f} {row.jax_compile:7.2f} {row.xlac * 1e3:10.3f} "
            f"{row.numpy * 1e3:10.3f} {row.jax * 1e3:9.3f} {row.numpy / row.xlac:10.2f} {row.jax / row.xlac:9.2f}")
    if resident:
        line += (f" {row.xlac_resident * 1e3:11.3f} {row.jax_resident * 1e3:10.3f} "
                 f"{row.numpy / row.xlac_resident:10.2f}")
    print(line, flush=True)


def print_totals(rows: list[Row]) -> None:
    timed = [r for r in rows if not r.note]
    print(f"\n{len(timed)} of {len(rows)} kernels timed"
          + "".join(f"; {r.name}: {r.note}" for r in rows if r.note))
    print(f"geomean speed vs NumPy {_geomean([r.numpy / r.xlac for r in timed]):.2f}x, "
          f"vs the lax port {_geomean([r.jax / r.xlac for r in timed]):.2f}x (above 1: xlac faster)")
    slower = [r.name for r in timed if r.xlac > r.numpy]
    print(f"slower than NumPy: {len(slower)}" + (f" ({', '.join(slower)})" if slower else ""))
    resident = [r for r in timed if r.xlac_resident == r.xlac_resident]
    if resident:
        slower = [r.name for r in resident if r.xlac_resident > r.numpy]
        print(f"with device-held arguments ({len(resident)} kernels): geomean vs NumPy "
              f"{_geomean([r.numpy / r.xlac_resident for r in resident]):.2f}x, vs the lax port on device-held "
              f"arguments {_geomean([r.jax_resident / r.xlac_resident for r in resident]):.2f}x; slower than NumPy: "
              f"{len(slower)}" + (f" ({', '.join(slower)})" if slower else ""))
    slow_compiles = [f"{r.name} {r.xlac_compile:.1f} s" for r in rows if r.xlac_compile > COMPILE_GOAL_S]
    print(f"compiles over {COMPILE_GOAL_S:g} s: {len(slow_compiles)}"
          + (f" ({', '.join(slow_compiles)})" if slow_compiles else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="", help="comma-separated words: run the kernels whose name holds one")
    parser.add_argument("--quick", action="store_true", help="two short rounds per kernel (a smoke run)")
    parser.add_argument("--resident", action="store_true",
                        help="also time xlac and the port with the arguments already on the device")
    options = parser.parse_args()
    words = [w.strip().lower() for w in options.kernels.split(",") if w.strip()]
    selected = [c for c in cases() if not words or any(w in c.name.lower() for w in words)]
    print(f"{'kernel':34s} {'compile s':>9s} {'lax s':>7s} {'xlac ms':>10s} {'NumPy ms':>10s} {'lax ms':>9s} "
          f"{'vs NumPy':>10s} {'vs lax':>9s}"
          + (f" {'xlac dev ms':>11s} {'lax dev ms':>10s} {'dev/NumPy':>10s}" if options.resident else ""))
    rows = []
    for case in selected:
        rows.append(measure(case, options.quick, options.resident))
        print_row(rows[-1], options.resident)
    print_totals(rows)


if __name__ == "__main__":
    main()
